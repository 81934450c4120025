//! Index cache: bounded memory for the index maps — each vertex table's primary-key index and
//! every secondary property index (`index`) — with cold parts spilled to sorted runs in
//! scratch files.
//!
//! WHAT
//! ====
//! An [`IndexMap`] maps keys (byte strings) to the rows that held them, as the primary-key and
//! secondary indexes need: *lossy* (value → rows that held it in some kept version; readers
//! re-check at their snapshot) and rebuilt from the rows at every open (WHAT IS DURABLE in
//! `index`). Each map is a resident, mutable part plus zero or more immutable *runs* on disk:
//!
//! ```text
//!   map (table Person, key name)
//!     resident  BTreeMap  'Ada' → [3, 17]   'Eve' → [9]          inserts go here
//!     frozen    (while a spill writes it; still read)
//!     run 1     index-000004.spill  blocks ['Ada'…] ['Bob'…] ['Cy'…]    level 1
//!     run 2     index-000007.spill  blocks ['Al'…]                      level 0
//!   lookup 'Ada' = resident ∪ frozen ∪ run 1 ∪ run 2, rows ascending, each once
//! ```
//!
//! One [`IndexCache`] per database owns the budget (`Config::index_cache_bytes`), the scratch
//! files' names, the byte account of every map's resident part and the counters. When the
//! resident parts of all maps together exceed the budget, the *largest* resident part is
//! written as a run and dropped from memory, then the next largest, until they are below the
//! budget less `HEADROOM_FRACTION` of it. The check runs after every insert (an atomic load and
//! a compare) — after every `INSERT_BATCH_ENTRIES` entries of a bulk install's
//! `insert_many` — so the resident bytes exceed the budget by at most one entry (one such
//! batch), plus whatever a failed spill left resident.
//!
//! WHY SCRATCH FILES, NOT DURABLE STATE
//! ====================================
//! Index content is rebuilt from the rows at open, and a map may list rows that no longer
//! hold a key. So runs need none of the durable machinery: they are written through the
//! storage [`Vfs`] (so the fault injector covers them) but never fsynced, are not in the
//! manifest, and every `index-*.spill` file is deleted when the database opens. A run file is
//! deleted when the last reference to it goes (the map merged it away, the index was dropped,
//! the database closed); a reader holding the run keeps its file until it is done.
//!
//! KINDS
//! =====
//! - `MapKind::Ordered` (secondary indexes): the resident part is a `BTreeMap`, lookups are
//!   ranges ([`ByteRange`]: a key, bounds, a prefix) answered by one walk per part.
//! - `MapKind::Hashed` (primary keys): the resident part is a `HashMap` (O(1) lookups, as
//!   before), sorted when spilled; only point lookups. Each run carries a bloom filter
//!   (`BLOOM_BITS_PER_KEY`, about 1% false positives), because most primary-key lookups are
//!   for keys that do not exist (every vertex creation checks its key is free) and without
//!   the filter each would read a block of every run. Ordered maps have none: a range reads
//!   at least one block per run anyway, and the filter would cost 1.25 bytes per spilled key.
//!
//! RUN FORMAT
//! ==========
//! A run file is a sequence of blocks of about `BLOCK_TARGET_BYTES` of payload. Entries
//! `(key, row)` are sorted by key, then row, without repeats; a block holds groups, each a key
//! with some of its rows. A key's rows may continue in the next block (a key with many rows,
//! e.g. a boolean property, spans blocks).
//!
//! ```text
//!   block:  [magic "PXI1" u32][payload length u32][group count u32]
//!           [crc32c u32 of (block offset u64, group count, payload)]
//!   payload: group*    group: [key length u32][key bytes][row count u32][row u32]*
//! ```
//!
//! The block index — the first key, offset and length of every block — stays resident in the
//! run (with the bloom filter of a hashed map): a lookup finds the first block that may hold
//! its start key by binary search and reads blocks from there until a key falls outside the
//! range. Reading a block re-checks the magic, the length, the checksum (which covers the
//! block's offset, so a block read from the wrong place fails too), and while decoding, the
//! group structure, the order of keys and rows, and the first key against the block index.
//! Any mismatch, and a file shorter than the block, is `Error::Corruption` naming the file
//! and the byte offset: never wrong rows, never a panic. There is no block cache: repeated
//! reads of a block are served by the operating system's page cache.
//!
//! MERGES
//! ======
//! Every spill adds a run at level 0. When a map has `RUN_MERGE_FANOUT` runs of one level,
//! they are merged (a streaming k-way merge: one decoded block per input in memory) into one
//! run of the next level; so a map holds at most `RUN_MERGE_FANOUT - 1` runs per level, and
//! levels grow by that factor — an entry is rewritten once per level, O(log(spilled /
//! spill size)) times. If a map still holds more than `MAX_RUNS_PER_MAP` runs (merges that
//! failed), all of its runs are merged. A lookup reads at most one or two blocks per run
//! per key (more for a key whose rows span blocks), and at most `MAX_RUNS_PER_MAP` runs.
//! Merges run right after the spill that made them due, in the same thread, one spill or
//! merge at a time per map; readers keep reading the old runs until the merged one replaces
//! them (under the map's latch, in one step).
//!
//! Merges do not drop stale entries: deciding that an entry is stale needs the rows
//! (`PropertyIndexes::prune` reads every listed row's kept versions), which the cache does not
//! have. `prune` cleans the resident part only, so stale entries in runs stay until the
//! database restarts. They cost disk and lookup time, not correctness (readers re-check) —
//! and at most one entry per installed write since the open, as between maintenance passes
//! before spilling existed.
//!
//! FAILURES
//! ========
//! A spill freezes the resident part (lookups still read it), writes the run outside the
//! map's latch, then swaps the frozen part for the run in one step. A failed or short write
//! (or a key too long for the format) puts the frozen entries back into the resident part —
//! nothing is lost — deletes the partial file if it can, is counted (`spill_write_errors`)
//! and returned to an explicit [`IndexCache::spill_all`]. After a failure, the automatic
//! spills wait until the resident bytes grow by another `budget / HEADROOM_FRACTION` before
//! trying again, so a broken disk does not cost a failed write per insert. A failed merge
//! (a write error, or a block that fails its checks) keeps its inputs and is counted
//! (`merge_errors`); a lookup reading a damaged block returns the `Corruption`.
//!
//! ACCOUNTING
//! ==========
//! `resident_bytes` is the estimate of the resident and frozen parts of every map: per key,
//! its bytes, 4 bytes per row slot allocated (`Vec` capacity) and
//! `RESIDENT_KEY_OVERHEAD_BYTES` for the map's node or bucket share, the key's box and the
//! row vector's header and allocations — except an 8-byte key with a single row in a hashed
//! map (the primary-key index's usual entry: a digest and a row), held inline without
//! allocations at `INLINE_KEY_COST_BYTES`. This is what the budget bounds. The runs' resident
//! metadata — block indexes (a key and 32 bytes per block, about 1% of the run) and bloom
//! filters (1.25 bytes per spilled primary key) — is reported apart (`run_meta_bytes`): it
//! cannot be spilled, and grows with the spilled data at those rates. A spill of a hashed map
//! also sorts references to its keys (24 bytes per key, for the duration of the write).
//! Estimates, not what the allocator has mapped.
//!
//! FILES
//! =====
//! This file holds the `IndexCache` (the budget, relief, spills and run writes); `resident`
//! a map's resident part; `map` the `IndexMap` and its merges; `run` the runs, their writer
//! and merge cursors; `tests` the tests.

use crate::codec::{DecodeResult, Decoder};
use crate::vfs::{Vfs, VfsFile};
use parking_lot::{Mutex, RwLock};
use plexus_types::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

mod map;
mod resident;
mod run;
#[cfg(test)]
mod tests;

pub use map::IndexMap;
use map::MapState;
use resident::Resident;
use run::{BlockRef, IndexRun, RunWriter, merge_into};

/// Blocks are closed once their payload reaches this (a block holds at least one row, so a
/// longer key makes a longer block).
pub const BLOCK_TARGET_BYTES: usize = 4096;
/// "PXI1", little-endian: version 1 of the run block format (see RUN FORMAT).
const BLOCK_MAGIC: u32 = u32::from_le_bytes(*b"PXI1");
/// Magic, payload length, group count, checksum.
pub const BLOCK_HEADER_BYTES: usize = 16;
/// Longer keys are not spilled (the spill fails and they stay resident; see FAILURES): a
/// block's length must fit its `u32` field.
pub const MAX_KEY_BYTES: usize = 1 << 30;
/// Estimated resident bytes of a key besides its bytes and row slots (see ACCOUNTING).
pub const RESIDENT_KEY_OVERHEAD_BYTES: u64 = 80;
/// Estimated resident bytes of an 8-byte key with one row, held inline by a hashed map (a
/// 16-byte slot at the table's load factor, with its control byte and growth slack).
pub const INLINE_KEY_COST_BYTES: u64 = 24;
/// Entries `IndexMap::insert_many` adds under one latch, between two checks of the budget.
pub const INSERT_BATCH_ENTRIES: usize = 1024;
/// A map merges its runs of one level once it has this many of them (see MERGES).
pub const RUN_MERGE_FANOUT: usize = 4;
/// A map with more runs than this merges them all (see MERGES).
pub const MAX_RUNS_PER_MAP: usize = 12;
/// Spills stop at the budget less this fraction of it; after a failed spill, automatic
/// spills wait for this fraction of growth (see FAILURES).
pub const HEADROOM_FRACTION: u64 = 8;
/// Bloom filter of a hashed map's run: bits per key and probes (about 1% false positives).
const BLOOM_BITS_PER_KEY: u64 = 10;
const BLOOM_PROBES: u64 = 7;

/// How a map is looked up (see KINDS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    /// Ranges and prefixes over ordered keys: secondary indexes.
    Ordered,
    /// Point lookups only, bloom-filtered runs: primary keys.
    Hashed,
}

/// The keys a range lookup asks for: after `lower`, before `upper`, and starting with
/// `prefix`. The keys it holds must be one stretch of the key order that starts at `lower`
/// (what every `index::KeyRange` gives: `prefix` is the kind's tag, or the string prefix, and
/// `lower` starts with it), so a walk can stop at the first key past it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteRange {
    pub lower: Bound<Box<[u8]>>,
    pub upper: Bound<Box<[u8]>>,
    pub prefix: Box<[u8]>,
}

impl ByteRange {
    /// Exactly `key`.
    pub fn point(key: &[u8]) -> ByteRange {
        ByteRange {
            lower: Included(key.into()),
            upper: Included(key.into()),
            prefix: key.into(),
        }
    }

    fn after_lower(&self, key: &[u8]) -> bool {
        match &self.lower {
            Included(low) => key >= &**low,
            Excluded(low) => key > &**low,
            Unbounded => true,
        }
    }

    /// Whether `key`, after `lower`, is still in the range: the walk stops at the first key
    /// that is not.
    fn continues_to(&self, key: &[u8]) -> bool {
        key.starts_with(&self.prefix)
            && match &self.upper {
                Included(high) => key <= &**high,
                Excluded(high) => key < &**high,
                Unbounded => true,
            }
    }

    pub fn contains(&self, key: &[u8]) -> bool {
        self.after_lower(key) && self.continues_to(key)
    }

    fn start(&self) -> Bound<&[u8]> {
        match &self.lower {
            Included(low) => Included(&**low),
            Excluded(low) => Excluded(&**low),
            Unbounded => Unbounded,
        }
    }
}

/// Counters of one database's index cache (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndexCacheStats {
    pub budget_bytes: u64,
    /// Estimated bytes of the resident (and frozen) parts of every index map: what the budget
    /// bounds (see ACCOUNTING).
    pub resident_bytes: u64,
    /// Resident metadata of the runs: block indexes and bloom filters (not bounded by the
    /// budget; see ACCOUNTING).
    pub run_meta_bytes: u64,
    /// Index maps alive (a primary-key index per table that has one, one per indexed key and
    /// table).
    pub maps: u64,
    /// Runs alive, and their file bytes.
    pub runs: u64,
    pub run_file_bytes: u64,
    /// Resident parts written as runs, and their bytes.
    pub spills: u64,
    pub spill_bytes_written: u64,
    /// Failed spill writes (the entries stayed resident).
    pub spill_write_errors: u64,
    /// Merges of runs finished, and the bytes they wrote.
    pub merges: u64,
    pub merge_bytes_written: u64,
    /// Merges that failed (their inputs stay).
    pub merge_errors: u64,
    /// Run blocks read (lookups and merges).
    pub blocks_read: u64,
}

/// The budget, the scratch files and the counters of one database's index maps.
pub struct IndexCache {
    budget_bytes: u64,
    /// `BLOCK_TARGET_BYTES`, smaller in tests (blocks of a few entries).
    block_target_bytes: usize,
    /// `None`: nothing can be spilled (indexes built outside a database, in tests).
    vfs: Option<Arc<dyn Vfs>>,
    /// Every map created, to find the largest resident part.
    maps: Mutex<Vec<Weak<IndexMap>>>,
    /// One relief (a loop of spills) at a time; others skip.
    relieving: Mutex<()>,
    /// Automatic spills are skipped while the resident bytes are at most this (see FAILURES).
    retry_above_bytes: AtomicU64,
    next_file: AtomicU64,
    resident_bytes: AtomicU64,
    run_meta_bytes: AtomicU64,
    runs: AtomicU64,
    run_file_bytes: AtomicU64,
    spills: AtomicU64,
    spill_bytes_written: AtomicU64,
    spill_write_errors: AtomicU64,
    merges: AtomicU64,
    merge_bytes_written: AtomicU64,
    merge_errors: AtomicU64,
    blocks_read: AtomicU64,
}

/// The name of the scratch file of run `seq`.
pub fn run_name(seq: u64) -> String {
    format!("index-{seq:06}.spill")
}

fn is_run_name(name: &str) -> bool {
    name.starts_with("index-") && name.ends_with(".spill")
}

impl IndexCache {
    /// A cache that never spills (for index maps used on their own).
    pub fn unbounded() -> Arc<Self> {
        Arc::new(Self::new(None, u64::MAX))
    }

    /// The cache of the database in `vfs`, deleting the run files a previous process left.
    pub fn open(vfs: Arc<dyn Vfs>, budget_bytes: u64) -> Result<Arc<Self>> {
        for name in vfs.list()? {
            if is_run_name(&name) {
                vfs.remove(&name)?;
            }
        }
        Ok(Arc::new(Self::new(Some(vfs), budget_bytes)))
    }

    /// [`open`](Self::open) with blocks of about `block_target_bytes` (tests: runs of many
    /// blocks from a few entries).
    #[cfg(test)]
    fn open_with_blocks(
        vfs: Arc<dyn Vfs>,
        budget_bytes: u64,
        block_target_bytes: usize,
    ) -> Result<Arc<Self>> {
        let mut cache = Arc::into_inner(Self::open(vfs, budget_bytes)?).expect("new");
        cache.block_target_bytes = block_target_bytes;
        Ok(Arc::new(cache))
    }

    fn new(vfs: Option<Arc<dyn Vfs>>, budget_bytes: u64) -> Self {
        Self {
            budget_bytes,
            block_target_bytes: BLOCK_TARGET_BYTES,
            vfs,
            maps: Mutex::new(Vec::new()),
            relieving: Mutex::new(()),
            retry_above_bytes: AtomicU64::new(0),
            next_file: AtomicU64::new(1),
            resident_bytes: AtomicU64::new(0),
            run_meta_bytes: AtomicU64::new(0),
            runs: AtomicU64::new(0),
            run_file_bytes: AtomicU64::new(0),
            spills: AtomicU64::new(0),
            spill_bytes_written: AtomicU64::new(0),
            spill_write_errors: AtomicU64::new(0),
            merges: AtomicU64::new(0),
            merge_bytes_written: AtomicU64::new(0),
            merge_errors: AtomicU64::new(0),
            blocks_read: AtomicU64::new(0),
        }
    }

    /// A new, empty map accounted in this cache.
    pub fn new_map(self: &Arc<Self>, kind: MapKind) -> Arc<IndexMap> {
        let map = Arc::new(IndexMap {
            cache: self.clone(),
            kind,
            state: RwLock::new(MapState {
                resident: Resident::new(kind),
                resident_bytes: 0,
                frozen: None,
                frozen_bytes: 0,
                runs: Vec::new(),
                spills: 0,
            }),
            spillable_bytes: AtomicU64::new(0),
            writing: Mutex::new(()),
        });
        let mut maps = self.maps.lock();
        maps.retain(|m| m.strong_count() > 0);
        maps.push(Arc::downgrade(&map));
        map
    }

    /// True when maps may be spilled: a finite budget and a file system to spill to.
    pub fn bounded(&self) -> bool {
        self.budget_bytes != u64::MAX && self.vfs.is_some()
    }

    pub fn resident_bytes(&self) -> u64 {
        self.resident_bytes.load(Ordering::Acquire)
    }

    /// Where a relief stops: the budget less `HEADROOM_FRACTION` of it.
    fn target_bytes(&self) -> u64 {
        self.budget_bytes - self.budget_bytes / HEADROOM_FRACTION
    }

    fn grow(&self, bytes: u64) {
        self.resident_bytes.fetch_add(bytes, Ordering::AcqRel);
    }

    fn shrink(&self, bytes: u64) {
        self.resident_bytes.fetch_sub(bytes, Ordering::AcqRel);
    }

    fn live_maps(&self) -> Vec<Arc<IndexMap>> {
        let mut maps = self.maps.lock();
        maps.retain(|m| m.strong_count() > 0);
        maps.iter().filter_map(Weak::upgrade).collect()
    }

    /// Spills the largest resident parts while the resident bytes exceed the budget (see
    /// WHAT). Called after every insert; cheap when under budget. Failures are counted and
    /// leave the entries resident (see FAILURES).
    pub fn relieve(&self) {
        if !self.bounded() {
            return;
        }
        let resident = self.resident_bytes();
        if resident <= self.budget_bytes
            || resident <= self.retry_above_bytes.load(Ordering::Acquire)
        {
            return;
        }
        let Some(_one_at_a_time) = self.relieving.try_lock() else {
            return;
        };
        while self.resident_bytes() > self.target_bytes() {
            let largest = (self.live_maps().into_iter())
                .max_by_key(|m| m.spillable_bytes.load(Ordering::Acquire));
            let Some(map) = largest else { break };
            match map.spill() {
                // The disk works (again): no more waiting for growth.
                Ok(true) => self.retry_above_bytes.store(0, Ordering::Release),
                Ok(false) => break,
                Err(_) => {
                    let retry = (self.resident_bytes())
                        .saturating_add(self.budget_bytes / HEADROOM_FRACTION);
                    self.retry_above_bytes.store(retry, Ordering::Release);
                    break;
                }
            }
        }
    }

    /// Spills the resident part of every map now, whatever the budget (tests, tools), and
    /// merges what became due. Returns how many runs were written; the first failure is
    /// returned after trying every map (a map whose spill failed keeps its entries).
    pub fn spill_all(&self) -> Result<usize> {
        self.vfs()?;
        let mut written = 0;
        let mut first_error = None;
        for map in self.live_maps() {
            match map.spill() {
                Ok(spilled) => written += usize::from(spilled),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }

    pub fn stats(&self) -> IndexCacheStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        IndexCacheStats {
            budget_bytes: self.budget_bytes,
            resident_bytes: self.resident_bytes(),
            run_meta_bytes: load(&self.run_meta_bytes),
            maps: self.live_maps().len() as u64,
            runs: load(&self.runs),
            run_file_bytes: load(&self.run_file_bytes),
            spills: load(&self.spills),
            spill_bytes_written: load(&self.spill_bytes_written),
            spill_write_errors: load(&self.spill_write_errors),
            merges: load(&self.merges),
            merge_bytes_written: load(&self.merge_bytes_written),
            merge_errors: load(&self.merge_errors),
            blocks_read: load(&self.blocks_read),
        }
    }

    fn vfs(&self) -> Result<&Arc<dyn Vfs>> {
        self.vfs
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("this index cache has no scratch files".into()))
    }

    /// Writes the entries `fill` pushes (sorted by key, then row, without repeats) as a run
    /// of `level`. `expected_keys` sizes the bloom filter of a hashed map. A failure deletes
    /// the partial file (if it can) and is returned.
    fn write_run(
        self: &Arc<Self>,
        kind: MapKind,
        level: u32,
        expected_keys: u64,
        fill: impl FnOnce(&mut RunWriter) -> Result<()>,
    ) -> Result<IndexRun> {
        let vfs = self.vfs()?.clone();
        let name = run_name(self.next_file.fetch_add(1, Ordering::Relaxed));
        let file = vfs.create(&name)?;
        let bloom_bits = (kind == MapKind::Hashed)
            .then(|| (expected_keys.max(1) * BLOOM_BITS_PER_KEY).next_multiple_of(64));
        let mut writer = RunWriter {
            file,
            offset: 0,
            block_target_bytes: self.block_target_bytes,
            payload: Vec::with_capacity(self.block_target_bytes + 64),
            groups: 0,
            first_key: None,
            current: None,
            blocks: Vec::new(),
            bloom: bloom_bits.map(|bits| vec![0; (bits / 64) as usize]),
            keys: 0,
            entries: 0,
        };
        let written = fill(&mut writer).and_then(|()| writer.finish_block());
        if let Err(e) = written {
            // Scratch: a file left behind is deleted at the next open.
            let _ = vfs.remove(&name);
            return Err(e);
        }
        let RunWriter {
            offset,
            blocks,
            bloom,
            keys,
            entries,
            ..
        } = writer;
        let meta_bytes = blocks
            .iter()
            .map(|b| b.first_key.len() as u64 + std::mem::size_of::<BlockRef>() as u64)
            .sum::<u64>()
            + bloom.as_ref().map_or(0, |b| b.len() as u64 * 8);
        self.run_meta_bytes.fetch_add(meta_bytes, Ordering::Relaxed);
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.run_file_bytes.fetch_add(offset, Ordering::Relaxed);
        Ok(IndexRun {
            vfs,
            cache: self.clone(),
            name,
            level,
            blocks,
            bloom,
            keys,
            entries,
            file_bytes: offset,
            meta_bytes,
        })
    }
}
