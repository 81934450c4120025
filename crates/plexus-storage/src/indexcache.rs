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
//! a compare), so the resident bytes exceed the budget by at most one entry, plus whatever a
//! failed spill left resident.
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
//! row vector's header and allocations. This is what the budget bounds. The runs' resident
//! metadata — block indexes (a key and 32 bytes per block, about 1% of the run) and bloom
//! filters (1.25 bytes per spilled primary key) — is reported apart (`run_meta_bytes`): it
//! cannot be spilled, and grows with the spilled data at those rates. A spill of a hashed map
//! also sorts references to its keys (24 bytes per key, for the duration of the write).
//! Estimates, not what the allocator has mapped.

use crate::codec::{DecodeResult, Decoder};
use crate::vfs::{Vfs, VfsFile};
use parking_lot::{Mutex, RwLock};
use plexus_types::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

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

/// The resident part of a map: key → rows, ascending, each once.
enum Resident {
    Ordered(BTreeMap<OrderedKey, Vec<u32>>),
    Hashed(HashMap<Box<[u8]>, Vec<u32>>),
}

/// A key of an ordered resident part: its bytes, in byte-string order, with the first eight
/// also held as one big-endian integer. A B-tree search compares the sought key with several
/// keys per node; keys mostly differ within their first eight bytes (a number's key is nine
/// bytes), so most comparisons are one integer compare instead of a `memcmp` call. Equal
/// heads (zero-padded, so `"a"` and `"a\0"` tie) fall back to comparing the bytes, which keeps
/// the order exactly the byte strings' order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OrderedKey {
    head: u64,
    bytes: Box<[u8]>,
}

impl OrderedKey {
    fn new(bytes: &[u8]) -> Self {
        let mut head = [0u8; 8];
        let n = bytes.len().min(head.len());
        head[..n].copy_from_slice(&bytes[..n]);
        OrderedKey {
            head: u64::from_be_bytes(head),
            bytes: bytes.into(),
        }
    }
}

impl Ord for OrderedKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.head.cmp(&other.head)).then_with(|| self.bytes.cmp(&other.bytes))
    }
}

impl PartialOrd for OrderedKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Estimated resident bytes of a key with `capacity` row slots (see ACCOUNTING).
fn key_cost(key_len: usize, capacity: usize) -> u64 {
    key_len as u64 + 4 * capacity as u64 + RESIDENT_KEY_OVERHEAD_BYTES
}

impl Resident {
    fn new(kind: MapKind) -> Self {
        match kind {
            MapKind::Ordered => Resident::Ordered(BTreeMap::new()),
            MapKind::Hashed => Resident::Hashed(HashMap::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Resident::Ordered(map) => map.len(),
            Resident::Hashed(map) => map.len(),
        }
    }

    fn get(&self, key: &[u8]) -> Option<&Vec<u32>> {
        match self {
            Resident::Ordered(map) => map.get(&OrderedKey::new(key)),
            Resident::Hashed(map) => map.get(key),
        }
    }

    fn get_mut(&mut self, key: &[u8]) -> Option<&mut Vec<u32>> {
        match self {
            Resident::Ordered(map) => map.get_mut(&OrderedKey::new(key)),
            Resident::Hashed(map) => map.get_mut(key),
        }
    }

    /// Adds `row` under `key`; returns the bytes the part grew by.
    fn insert(&mut self, key: &[u8], row: u32) -> u64 {
        if let Some(rows) = self.get_mut(key) {
            let Err(at) = rows.binary_search(&row) else {
                return 0;
            };
            let capacity = rows.capacity();
            rows.insert(at, row);
            return 4 * (rows.capacity() - capacity) as u64;
        }
        let rows = vec![row];
        let cost = key_cost(key.len(), rows.capacity());
        match self {
            Resident::Ordered(map) => map.insert(OrderedKey::new(key), rows),
            Resident::Hashed(map) => map.insert(key.into(), rows),
        };
        cost
    }

    /// Removes `row` from `key`; returns the bytes freed, `None` if it was not there.
    fn remove(&mut self, key: &[u8], row: u32) -> Option<u64> {
        let rows = self.get_mut(key)?;
        let at = rows.binary_search(&row).ok()?;
        rows.remove(at);
        if !rows.is_empty() {
            return Some(0);
        }
        let capacity = rows.capacity();
        match self {
            Resident::Ordered(map) => map.remove(&OrderedKey::new(key)),
            Resident::Hashed(map) => map.remove(key),
        };
        Some(key_cost(key.len(), capacity))
    }

    /// Every entry, in no particular order.
    fn for_each(&self, f: &mut dyn FnMut(&[u8], &[u32])) {
        match self {
            Resident::Ordered(map) => map.iter().for_each(|(k, rows)| f(&k.bytes, rows)),
            Resident::Hashed(map) => map.iter().for_each(|(k, rows)| f(k, rows)),
        }
    }

    /// The keys of `range` in key order, with their rows.
    fn range(&self, range: &ByteRange, f: &mut dyn FnMut(&[u8], &[u32])) {
        match self {
            Resident::Ordered(map) => {
                // From the start only: an upper bound below the start would make `range` panic.
                let start = range.start().map(OrderedKey::new);
                let walk = map.range((start, Unbounded));
                for (key, rows) in walk.take_while(|(key, _)| range.continues_to(&key.bytes)) {
                    f(&key.bytes, rows);
                }
            }
            Resident::Hashed(map) => {
                // Hashed maps answer points only; a range still gets a correct answer.
                let mut found: Vec<(&[u8], &[u32])> = (map.iter())
                    .filter(|(key, _)| range.contains(key))
                    .map(|(key, rows)| (&**key, &rows[..]))
                    .collect();
                found.sort_unstable();
                found.into_iter().for_each(|(key, rows)| f(key, rows));
            }
        }
    }

    /// Every entry in key order (what a run holds).
    fn sorted(&self) -> Vec<(&[u8], &[u32])> {
        match self {
            Resident::Ordered(map) => (map.iter())
                .map(|(k, rows)| (&*k.bytes, &rows[..]))
                .collect(),
            Resident::Hashed(map) => {
                let mut entries: Vec<(&[u8], &[u32])> =
                    map.iter().map(|(k, rows)| (&**k, &rows[..])).collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                entries
            }
        }
    }
}

/// One map's parts (see WHAT).
struct MapState {
    resident: Resident,
    resident_bytes: u64,
    /// The resident part being written as a run (see FAILURES); still read by lookups.
    frozen: Option<Arc<Resident>>,
    frozen_bytes: u64,
    runs: Vec<Arc<IndexRun>>,
    /// Runs written from this map's resident part.
    spills: u64,
}

/// Figures of one map, for tests.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapStats {
    pub resident_keys: u64,
    pub resident_bytes: u64,
    pub runs: u64,
    /// Entries (key, row) in the runs, stale ones included.
    pub run_entries: u64,
    pub spills: u64,
}

/// A bounded-memory map from keys to rows (see the module documentation).
pub struct IndexMap {
    cache: Arc<IndexCache>,
    kind: MapKind,
    state: RwLock<MapState>,
    /// The resident part's bytes, readable without the latch (to pick the largest).
    spillable_bytes: AtomicU64,
    /// One spill or merge of this map at a time (taken before `state`).
    writing: Mutex<()>,
}

impl Drop for IndexMap {
    fn drop(&mut self) {
        let state = self.state.get_mut();
        self.cache.shrink(state.resident_bytes + state.frozen_bytes);
    }
}

impl IndexMap {
    #[cfg(test)]
    pub fn kind(&self) -> MapKind {
        self.kind
    }

    /// Notes that `row` held `key`. May spill (this or another map) if the cache is over its
    /// budget, after releasing this map's latch.
    pub fn insert(&self, key: &[u8], row: u32) {
        {
            let mut state = self.state.write();
            let grown = state.resident.insert(key, row);
            if grown > 0 {
                state.resident_bytes += grown;
                self.spillable_bytes
                    .store(state.resident_bytes, Ordering::Release);
                self.cache.grow(grown);
            }
        }
        self.cache.relieve();
    }

    /// The rows listed under `key`, ascending, each once.
    pub fn get(&self, key: &[u8]) -> Result<Vec<u32>> {
        let (mut rows, runs, merged) = {
            let state = self.state.read();
            let mut rows = state.resident.get(key).cloned().unwrap_or_default();
            if let Some(frozen) = &state.frozen
                && let Some(more) = frozen.get(key)
            {
                rows.extend_from_slice(more);
            }
            let merged = state.frozen.is_some() || !state.runs.is_empty();
            (rows, state.runs.clone(), merged)
        };
        for run in &runs {
            if run.may_hold(key) {
                run.scan(&ByteRange::point(key), &mut |_, more| {
                    rows.extend_from_slice(more)
                })?;
            }
        }
        if merged {
            rows.sort_unstable();
            rows.dedup();
        }
        Ok(rows)
    }

    /// The rows listed under the keys of `range`: key by key in key order, each key's rows
    /// ascending and each once (a row listed under two keys appears twice).
    pub fn range(&self, range: &ByteRange) -> Result<Vec<u32>> {
        let mut found = Vec::new();
        let mut by_key: BTreeMap<Box<[u8]>, Vec<u32>> = BTreeMap::new();
        let runs = {
            let state = self.state.read();
            if state.frozen.is_none() && state.runs.is_empty() {
                state
                    .resident
                    .range(range, &mut |_, rows| found.extend_from_slice(rows));
                return Ok(found);
            }
            let mut gather = |key: &[u8], rows: &[u32]| {
                by_key
                    .entry(key.into())
                    .or_default()
                    .extend_from_slice(rows)
            };
            state.resident.range(range, &mut gather);
            if let Some(frozen) = &state.frozen {
                frozen.range(range, &mut gather);
            }
            state.runs.clone()
        };
        for run in &runs {
            run.scan(range, &mut |key, rows| {
                by_key
                    .entry(key.into())
                    .or_default()
                    .extend_from_slice(rows)
            })?;
        }
        for (_, mut rows) in by_key {
            rows.sort_unstable();
            rows.dedup();
            found.extend(rows);
        }
        Ok(found)
    }

    /// An estimate of the distinct keys: those of the resident part, the frozen part and
    /// every run, summed — a key in several parts counts once per part (so it overestimates
    /// after spills, by at most the number of parts; exact while nothing is spilled).
    pub fn distinct_keys(&self) -> u64 {
        let state = self.state.read();
        state.resident.len() as u64
            + state.frozen.as_ref().map_or(0, |f| f.len() as u64)
            + state.runs.iter().map(|r| r.keys).sum::<u64>()
    }

    /// Removes the resident entries `(key, row)` for which `holds` is false; returns how many
    /// were removed. `holds` is asked again, with the latch held for writing, before each
    /// removal (a commit may have installed the value again meanwhile). Entries in runs and
    /// in a part being spilled stay (see MERGES).
    pub fn prune(&self, holds: impl Fn(&[u8], u32) -> bool) -> usize {
        let mut stale: Vec<(Box<[u8]>, u32)> = Vec::new();
        self.state.read().resident.for_each(&mut |key, rows| {
            let gone = rows.iter().filter(|&&row| !holds(key, row));
            stale.extend(gone.map(|&row| (key.into(), row)));
        });
        if stale.is_empty() {
            return 0;
        }
        let mut state = self.state.write();
        let mut removed = 0;
        for (key, row) in stale {
            if holds(&key, row) {
                continue;
            }
            if let Some(freed) = state.resident.remove(&key, row) {
                removed += 1;
                state.resident_bytes -= freed;
                self.cache.shrink(freed);
            }
        }
        self.spillable_bytes
            .store(state.resident_bytes, Ordering::Release);
        removed
    }

    #[cfg(test)]
    pub fn stats(&self) -> MapStats {
        let state = self.state.read();
        MapStats {
            resident_keys: state.resident.len() as u64,
            resident_bytes: state.resident_bytes + state.frozen_bytes,
            runs: state.runs.len() as u64,
            run_entries: state.runs.iter().map(|r| r.entries).sum(),
            spills: state.spills,
        }
    }

    /// Writes the resident part as a run and drops it from memory (see FAILURES), then
    /// merges runs while due (see MERGES). Returns whether a run was written (`false`:
    /// nothing resident). A failed merge is counted (`merge_errors`), not returned: the
    /// spilled entries are in their run either way, and the next spill tries the merge again.
    pub fn spill(&self) -> Result<bool> {
        let spilled = self.spill_resident()?;
        if spilled {
            let _ = self.merge_while_due();
        }
        Ok(spilled)
    }

    fn spill_resident(&self) -> Result<bool> {
        let _one_at_a_time = self.writing.lock();
        let frozen = {
            let mut state = self.state.write();
            if state.resident.len() == 0 {
                return Ok(false);
            }
            let part = std::mem::replace(&mut state.resident, Resident::new(self.kind));
            let frozen = Arc::new(part);
            state.frozen = Some(frozen.clone());
            state.frozen_bytes = std::mem::take(&mut state.resident_bytes);
            self.spillable_bytes.store(0, Ordering::Release);
            frozen
        };
        let written = self
            .cache
            .write_run(self.kind, 0, frozen.len() as u64, |writer| {
                for (key, rows) in frozen.sorted() {
                    for &row in rows {
                        writer.push(key, row)?;
                    }
                }
                Ok(())
            });
        let mut state = self.state.write();
        state.frozen = None;
        let frozen_bytes = std::mem::take(&mut state.frozen_bytes);
        match written {
            Ok(run) => {
                self.cache.shrink(frozen_bytes);
                self.cache.spills.fetch_add(1, Ordering::Relaxed);
                self.cache
                    .spill_bytes_written
                    .fetch_add(run.file_bytes, Ordering::Relaxed);
                state.runs.push(Arc::new(run));
                state.spills += 1;
                Ok(true)
            }
            Err(e) => {
                // Back into the resident part: nothing is lost.
                let mut grown = 0;
                frozen.for_each(&mut |key, rows| {
                    for &row in rows {
                        grown += state.resident.insert(key, row);
                    }
                });
                state.resident_bytes += grown;
                self.cache.grow(grown);
                self.cache.shrink(frozen_bytes);
                self.spillable_bytes
                    .store(state.resident_bytes, Ordering::Release);
                self.cache
                    .spill_write_errors
                    .fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Merges runs while the rule of MERGES asks for it. Returns how many merges ran; a
    /// failure is counted and returned (its inputs stay).
    pub fn merge_while_due(&self) -> Result<usize> {
        let mut merges = 0;
        loop {
            let due = {
                let state = self.state.read();
                due_merge(&state.runs)
            };
            let Some((inputs, level)) = due else {
                return Ok(merges);
            };
            self.merge(inputs, level)?;
            merges += 1;
        }
    }

    /// Merges every run into one, if there are at least two (tests, tools). Returns whether
    /// it merged.
    #[cfg(test)]
    pub fn merge_all(&self) -> Result<bool> {
        let (inputs, level) = {
            let state = self.state.read();
            let level = state.runs.iter().map(|r| r.level).max().unwrap_or(0) + 1;
            (state.runs.clone(), level)
        };
        if inputs.len() < 2 {
            return Ok(false);
        }
        self.merge(inputs, level)?;
        Ok(true)
    }

    /// Merges `inputs` (runs of this map) into one run of `level`, which replaces them.
    fn merge(&self, inputs: Vec<Arc<IndexRun>>, level: u32) -> Result<()> {
        let _one_at_a_time = self.writing.lock();
        {
            // Another merge may have replaced some inputs meanwhile.
            let state = self.state.read();
            let present = |run: &Arc<IndexRun>| state.runs.iter().any(|r| Arc::ptr_eq(r, run));
            if !inputs.iter().all(present) {
                return Ok(());
            }
        }
        let expected_keys = inputs.iter().map(|r| r.keys).sum();
        let written = self
            .cache
            .write_run(self.kind, level, expected_keys, |writer| {
                merge_into(&inputs, writer)
            });
        let merged = match written {
            Ok(run) => run,
            Err(e) => {
                self.cache.merge_errors.fetch_add(1, Ordering::Relaxed);
                return Err(e);
            }
        };
        self.cache.merges.fetch_add(1, Ordering::Relaxed);
        self.cache
            .merge_bytes_written
            .fetch_add(merged.file_bytes, Ordering::Relaxed);
        let mut state = self.state.write();
        state
            .runs
            .retain(|run| !inputs.iter().any(|input| Arc::ptr_eq(run, input)));
        state.runs.push(Arc::new(merged));
        Ok(())
    }
}

/// The runs to merge next and the level of the result, if any (see MERGES).
fn due_merge(runs: &[Arc<IndexRun>]) -> Option<(Vec<Arc<IndexRun>>, u32)> {
    let top = runs.iter().map(|r| r.level).max()?;
    if runs.len() > MAX_RUNS_PER_MAP {
        return Some((runs.to_vec(), top + 1));
    }
    (0..=top).find_map(|level| {
        let of_level: Vec<Arc<IndexRun>> = (runs.iter())
            .filter(|r| r.level == level)
            .cloned()
            .collect();
        (of_level.len() >= RUN_MERGE_FANOUT).then_some((of_level, level + 1))
    })
}

/// Where a block is, and its first key (see RUN FORMAT).
struct BlockRef {
    first_key: Box<[u8]>,
    offset: u64,
    len_bytes: u32,
}

/// One decoded block: groups of (key, rows).
type Block = Vec<(Box<[u8]>, Vec<u32>)>;

/// An immutable sorted run of one map in a scratch file (see RUN FORMAT). Its file is
/// deleted when the run is dropped.
struct IndexRun {
    vfs: Arc<dyn Vfs>,
    cache: Arc<IndexCache>,
    name: String,
    level: u32,
    blocks: Vec<BlockRef>,
    /// Hashed maps only.
    bloom: Option<Vec<u64>>,
    keys: u64,
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by MapStats, a test figure")
    )]
    entries: u64,
    file_bytes: u64,
    meta_bytes: u64,
}

impl Drop for IndexRun {
    fn drop(&mut self) {
        // A file that cannot be deleted now is deleted at the next open.
        let _ = self.vfs.remove(&self.name);
        let cache = &self.cache;
        cache
            .run_meta_bytes
            .fetch_sub(self.meta_bytes, Ordering::Relaxed);
        cache.runs.fetch_sub(1, Ordering::Relaxed);
        cache
            .run_file_bytes
            .fetch_sub(self.file_bytes, Ordering::Relaxed);
    }
}

/// The bloom filter probes of `key` in a filter of `bits` bits.
fn bloom_positions(key: &[u8], bits: u64) -> impl Iterator<Item = u64> {
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    let h1 = hasher.finish();
    let h2 = (h1 ^ (h1 >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD) | 1;
    (0..BLOOM_PROBES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
}

impl IndexRun {
    /// False when the run certainly holds no entry of `key` (bloom filter).
    fn may_hold(&self, key: &[u8]) -> bool {
        let Some(bloom) = &self.bloom else {
            return true;
        };
        let bits = bloom.len() as u64 * 64;
        bloom_positions(key, bits).all(|bit| bloom[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }

    /// Calls `f` with each key of `range` the run holds, in key order, with its rows (a key
    /// spanning blocks is called once per block).
    fn scan(&self, range: &ByteRange, f: &mut dyn FnMut(&[u8], &[u32])) -> Result<()> {
        let first = match range.start() {
            // The last block starting before the start key: it may end with that key.
            Included(low) | Excluded(low) => {
                (self.blocks.partition_point(|b| &*b.first_key < low)).saturating_sub(1)
            }
            Unbounded => 0,
        };
        for index in first..self.blocks.len() {
            let first_key = &self.blocks[index].first_key;
            if range.after_lower(first_key) && !range.continues_to(first_key) {
                return Ok(());
            }
            for (key, rows) in self.read_block(index)? {
                if !range.after_lower(&key) {
                    continue;
                }
                if !range.continues_to(&key) {
                    return Ok(());
                }
                f(&key, &rows);
            }
        }
        Ok(())
    }

    /// Block `index`, verified and decoded (see RUN FORMAT).
    fn read_block(&self, index: usize) -> Result<Block> {
        let block = &self.blocks[index];
        let corrupt =
            |at: u64, detail: String| Error::corruption(self.vfs.describe(&self.name), at, detail);
        self.cache.blocks_read.fetch_add(1, Ordering::Relaxed);
        let bytes = match (self.vfs).read_at(&self.name, block.offset, block.len_bytes as usize) {
            Ok(bytes) => bytes,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(corrupt(
                    block.offset,
                    format!("index run block of {} bytes is truncated", block.len_bytes),
                ));
            }
            Err(e) => return Err(e),
        };
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        if bytes.len() < BLOCK_HEADER_BYTES || word(0) != BLOCK_MAGIC {
            return Err(corrupt(
                block.offset,
                "not an index run block (bad magic)".into(),
            ));
        }
        let payload_len = word(4) as usize;
        if payload_len + BLOCK_HEADER_BYTES != bytes.len() {
            return Err(corrupt(
                block.offset + 4,
                format!(
                    "index run block says {payload_len} payload bytes, expected {}",
                    bytes.len() - BLOCK_HEADER_BYTES
                ),
            ));
        }
        let groups = word(8);
        let payload = &bytes[BLOCK_HEADER_BYTES..];
        if block_crc(block.offset, groups, payload) != word(12) {
            return Err(corrupt(
                block.offset + 12,
                "index run block checksum mismatch".into(),
            ));
        }
        let base = block.offset + BLOCK_HEADER_BYTES as u64;
        let decoded = decode_block(payload, groups, base)
            .map_err(|e| corrupt(e.offset, format!("index run block: {}", e.detail)))?;
        if decoded.first().map(|(key, _)| key) != Some(&block.first_key) {
            return Err(corrupt(
                base,
                "index run block's first key differs from the block index".into(),
            ));
        }
        Ok(decoded)
    }
}

/// The groups of a block payload, checking structure and order (see RUN FORMAT).
fn decode_block(payload: &[u8], groups: u32, base_offset: u64) -> DecodeResult<Block> {
    let mut decoder = Decoder::new(payload, base_offset);
    // Every group takes at least 12 bytes: a corrupt count must not allocate without bound.
    if groups as usize > payload.len() / 12 || groups == 0 {
        return Err(decoder.error(format!("implausible group count {groups}")));
    }
    let mut block: Block = Vec::with_capacity(groups as usize);
    for _ in 0..groups {
        let key_len = decoder.u32()? as usize;
        let key: Box<[u8]> = decoder.bytes(key_len)?.into();
        if block.last().is_some_and(|(last, _)| *last >= key) {
            return Err(decoder.error("keys out of order"));
        }
        let count = decoder.u32()? as usize;
        let rows_bytes = decoder.bytes(count.saturating_mul(4))?;
        if count == 0 {
            return Err(decoder.error("a key without rows"));
        }
        let rows: Vec<u32> = (rows_bytes.chunks_exact(4))
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if rows.windows(2).any(|pair| pair[0] >= pair[1]) {
            return Err(decoder.error("rows out of order"));
        }
        block.push((key, rows));
    }
    if !decoder.is_empty() {
        return Err(decoder.error("bytes after the last group"));
    }
    Ok(block)
}

fn block_crc(offset: u64, groups: u32, payload: &[u8]) -> u32 {
    let head = crc32c::crc32c_append(crc32c::crc32c(&offset.to_le_bytes()), &groups.to_le_bytes());
    crc32c::crc32c_append(head, payload)
}

/// Writes a run's blocks as entries arrive (sorted by key, then row, without repeats).
struct RunWriter {
    file: Box<dyn VfsFile>,
    block_target_bytes: usize,
    /// Bytes written so far: the next block's offset.
    offset: u64,
    /// Closed groups of the block being filled.
    payload: Vec<u8>,
    groups: u32,
    first_key: Option<Box<[u8]>>,
    /// The group being filled: its key and rows.
    current: Option<(Vec<u8>, Vec<u32>)>,
    blocks: Vec<BlockRef>,
    bloom: Option<Vec<u64>>,
    keys: u64,
    entries: u64,
}

impl RunWriter {
    /// Adds the entry `(key, row)`, after every entry added so far.
    fn push(&mut self, key: &[u8], row: u32) -> Result<()> {
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::LimitExceeded(format!(
                "an index key of {} bytes does not fit an index run block",
                key.len()
            )));
        }
        let same_key = self.current.as_ref().is_some_and(|(k, _)| k == key);
        if !same_key {
            self.close_group();
            self.keys += 1;
            if let Some(bloom) = &mut self.bloom {
                let bits = bloom.len() as u64 * 64;
                for bit in bloom_positions(key, bits) {
                    bloom[(bit / 64) as usize] |= 1 << (bit % 64);
                }
            }
            self.current = Some((key.to_vec(), Vec::new()));
        }
        let Some((current_key, rows)) = self.current.as_mut() else {
            unreachable!("a group was just opened");
        };
        debug_assert!(rows.last().is_none_or(|&last| last < row), "rows ascend");
        rows.push(row);
        self.entries += 1;
        let open_bytes = 8 + current_key.len() + 4 * rows.len();
        if self.payload.len() + open_bytes >= self.block_target_bytes {
            // The key's remaining rows continue in the next block.
            let key = current_key.clone();
            self.close_group();
            self.finish_block()?;
            self.current = Some((key, Vec::new()));
        }
        Ok(())
    }

    /// Appends the group being filled (if it has rows) to the block's payload.
    fn close_group(&mut self) {
        let Some((key, rows)) = self.current.take() else {
            return;
        };
        if rows.is_empty() {
            return;
        }
        if self.groups == 0 {
            self.first_key = Some(key.as_slice().into());
        }
        self.payload
            .extend_from_slice(&(key.len() as u32).to_le_bytes());
        self.payload.extend_from_slice(&key);
        self.payload
            .extend_from_slice(&(rows.len() as u32).to_le_bytes());
        for row in rows {
            self.payload.extend_from_slice(&row.to_le_bytes());
        }
        self.groups += 1;
    }

    /// Writes the block being filled, if it holds anything (the open group included).
    fn finish_block(&mut self) -> Result<()> {
        self.close_group();
        if self.groups == 0 {
            return Ok(());
        }
        let len = BLOCK_HEADER_BYTES + self.payload.len();
        let len_bytes = u32::try_from(len).map_err(|_| {
            Error::LimitExceeded(format!("an index run block of {len} bytes is too long"))
        })?;
        let mut block = Vec::with_capacity(len);
        block.extend_from_slice(&BLOCK_MAGIC.to_le_bytes());
        block.extend_from_slice(&(self.payload.len() as u32).to_le_bytes());
        block.extend_from_slice(&self.groups.to_le_bytes());
        block.extend_from_slice(&block_crc(self.offset, self.groups, &self.payload).to_le_bytes());
        block.extend_from_slice(&self.payload);
        self.file.write_all(&block)?;
        let first_key = self
            .first_key
            .take()
            .expect("a block with groups has a first key");
        self.blocks.push(BlockRef {
            first_key,
            offset: self.offset,
            len_bytes,
        });
        self.offset += len as u64;
        self.payload.clear();
        self.groups = 0;
        Ok(())
    }
}

/// Reads one run's entries in order, a block at a time.
struct Cursor<'a> {
    run: &'a IndexRun,
    next_block: usize,
    block: Block,
    group: usize,
    row: usize,
}

impl<'a> Cursor<'a> {
    fn new(run: &'a IndexRun) -> Result<Self> {
        let mut cursor = Cursor {
            run,
            next_block: 0,
            block: Vec::new(),
            group: 0,
            row: 0,
        };
        cursor.settle()?;
        Ok(cursor)
    }

    /// Moves to the next block while the current one is used up.
    fn settle(&mut self) -> Result<()> {
        while self.group == self.block.len() && self.next_block < self.run.blocks.len() {
            self.block = self.run.read_block(self.next_block)?;
            self.next_block += 1;
            self.group = 0;
            self.row = 0;
        }
        Ok(())
    }

    fn peek(&self) -> Option<(&[u8], u32)> {
        let (key, rows) = self.block.get(self.group)?;
        Some((key, rows[self.row]))
    }

    fn advance(&mut self) -> Result<()> {
        self.row += 1;
        if self.row == self.block[self.group].1.len() {
            self.group += 1;
            self.row = 0;
        }
        self.settle()
    }
}

/// Writes the union of `inputs`' entries, in order, each once.
fn merge_into(inputs: &[Arc<IndexRun>], writer: &mut RunWriter) -> Result<()> {
    let mut cursors = (inputs.iter())
        .map(|run| Cursor::new(run))
        .collect::<Result<Vec<_>>>()?;
    loop {
        let smallest = (cursors.iter().enumerate())
            .filter_map(|(i, c)| c.peek().map(|entry| (entry, i)))
            .min();
        let Some(((key, row), _)) = smallest else {
            return Ok(());
        };
        let key: Box<[u8]> = key.into();
        writer.push(&key, row)?;
        for cursor in &mut cursors {
            while cursor.peek() == Some((&*key, row)) {
                cursor.advance()?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultVfs;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn cache(budget_bytes: u64) -> (FaultVfs, Arc<IndexCache>) {
        let vfs = FaultVfs::new();
        let cache = IndexCache::open(Arc::new(vfs.clone()), budget_bytes).unwrap();
        (vfs, cache)
    }

    fn key(i: u32) -> Vec<u8> {
        format!("key-{i:05}").into_bytes()
    }

    fn run_files(vfs: &FaultVfs) -> Vec<String> {
        let names = vfs.list().unwrap();
        names.into_iter().filter(|n| is_run_name(n)).collect()
    }

    #[test]
    fn spilled_entries_read_back_merged_with_the_resident_part() {
        for kind in [MapKind::Ordered, MapKind::Hashed] {
            let (vfs, cache) = cache(u64::MAX - 1);
            let map = cache.new_map(kind);
            for i in 0..3000 {
                map.insert(&key(i % 1000), i);
            }
            assert!(map.spill().unwrap());
            assert_eq!(cache.stats().resident_bytes, 0);
            assert_eq!(run_files(&vfs).len(), 1);
            map.insert(&key(5), 7);
            map.insert(&key(5), 5);
            assert_eq!(map.get(&key(5)).unwrap(), [5, 7, 1005, 2005]);
            assert_eq!(map.get(b"absent").unwrap(), [] as [u32; 0]);
            assert_eq!(map.distinct_keys(), 1001);
            let prefix = ByteRange {
                lower: Included(b"key-0099".as_slice().into()),
                upper: Unbounded,
                prefix: b"key-0099".as_slice().into(),
            };
            let want: Vec<u32> = (990..1000).flat_map(|i| [i, i + 1000, i + 2000]).collect();
            assert_eq!(map.range(&prefix).unwrap(), want, "{kind:?}");
            drop(map);
            assert!(run_files(&vfs).is_empty(), "a dropped map deletes its runs");
            let stats = cache.stats();
            assert_eq!(
                (stats.runs, stats.run_meta_bytes, stats.resident_bytes),
                (0, 0, 0)
            );
        }
    }

    #[test]
    fn a_key_with_many_rows_spans_blocks_and_merges_keep_every_row() {
        let (_vfs, cache) = cache(u64::MAX - 1);
        let map = cache.new_map(MapKind::Ordered);
        for round in 0..5u32 {
            for row in (round..20_000).step_by(5) {
                map.insert(b"many", row);
            }
            map.insert(&key(round), round);
            map.spill().unwrap();
        }
        let stats = map.stats();
        assert!(stats.runs < 5, "four level-0 runs were merged: {stats:?}");
        assert_eq!(cache.stats().merges, 1);
        let all: Vec<u32> = (0..20_000).collect();
        assert_eq!(map.get(b"many").unwrap(), all);
        assert!(map.merge_all().unwrap());
        assert_eq!(map.stats().runs, 1);
        assert_eq!(map.get(b"many").unwrap(), all);
        assert_eq!(map.get(&key(3)).unwrap(), [3]);
        assert!(cache.stats().blocks_read > 0);
    }

    #[test]
    fn the_budget_spills_the_largest_resident_part() {
        let (_vfs, cache) = cache(64 << 10);
        let big = cache.new_map(MapKind::Ordered);
        let small = cache.new_map(MapKind::Hashed);
        let mut max_resident = 0;
        for i in 0..20_000 {
            big.insert(&key(i), i);
            if i % 500 == 0 {
                small.insert(&key(i), i);
            }
            max_resident = max_resident.max(cache.resident_bytes());
        }
        let entry_max = key_cost(key(0).len(), 4);
        assert!(max_resident <= (64 << 10) + entry_max, "{max_resident}");
        assert!(big.stats().spills > 0 && small.stats().spills == 0);
        for i in (0..20_000).step_by(7) {
            assert_eq!(big.get(&key(i)).unwrap(), [i]);
        }
        assert_eq!(small.get(&key(500)).unwrap(), [500]);
    }

    #[test]
    fn a_damaged_block_is_corruption_naming_the_file_and_offset() {
        let (vfs, cache) = cache(u64::MAX - 1);
        let map = cache.new_map(MapKind::Ordered);
        for i in 0..2000 {
            map.insert(&key(i), i);
        }
        map.spill().unwrap();
        let name = run_files(&vfs).pop().unwrap();
        let (second, third) = {
            let state = map.state.read();
            let run = &state.runs[0];
            assert!(run.blocks.len() > 3);
            (run.blocks[1].offset, run.blocks[2].offset)
        };
        vfs.corrupt(&name, (second + 40) as usize, b"X").unwrap();
        let in_second = |map: &IndexMap| {
            let first_of_third = {
                let state = map.state.read();
                state.runs[0].blocks[2].first_key.clone()
            };
            let mut i = 0;
            while key(i).as_slice() < &*first_of_third {
                i += 1;
            }
            i - 1
        };
        let victim = in_second(&map);
        let err = map.get(&key(victim)).unwrap_err();
        assert!(matches!(err, Error::Corruption { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(&name) && text.contains(&format!("byte {}", second + 12)),
            "{text}"
        );
        assert!(text.contains("checksum"), "{text}");
        // Other blocks still read; a merge reading the damaged block fails and keeps its input.
        assert_eq!(map.get(&key(0)).unwrap(), [0]);
        map.insert(b"z", 1);
        map.spill().unwrap();
        assert!(matches!(map.merge_all(), Err(Error::Corruption { .. })));
        assert_eq!(map.stats().runs, 2);
        assert_eq!(cache.stats().merge_errors, 1);
        // A truncated file: a block past the end is reported, not guessed.
        vfs.truncate(&name, third + 3).unwrap();
        match map.get(&key(1999)) {
            Err(Error::Corruption {
                file,
                offset,
                detail,
            }) => {
                assert!(
                    file.contains(&name) && detail.contains("truncated"),
                    "{detail}"
                );
                assert!(offset >= third, "{offset}");
            }
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    #[test]
    fn a_failed_spill_write_keeps_every_entry_resident() {
        let (vfs, cache) = cache(8 << 10);
        let map = cache.new_map(MapKind::Hashed);
        vfs.fail_writes_after(0);
        for i in 0..200 {
            map.insert(&key(i), i);
        }
        let stats = cache.stats();
        // ~21 KB resident: a failure, then one per 1 KiB (budget / 8) of growth.
        assert!(
            (1..=16).contains(&stats.spill_write_errors),
            "failures wait for growth: {stats:?}"
        );
        let failures = stats.spill_write_errors;
        assert_eq!((stats.spills, stats.runs), (0, 0));
        assert!(run_files(&vfs).is_empty(), "the partial file is deleted");
        assert!(stats.resident_bytes > 8 << 10);
        assert_eq!(stats.resident_bytes, map.stats().resident_bytes);
        let err = cache.spill_all().unwrap_err();
        assert!(err.to_string().contains("injected"), "{err}");
        for i in 0..200 {
            assert_eq!(map.get(&key(i)).unwrap(), [i]);
        }
        vfs.fail_writes_after(u64::MAX);
        // The second block of the run is torn: the first one is in the file, which is deleted.
        vfs.short_write_at(vfs.write_count() + 2);
        assert!(map.spill().is_err());
        assert!(run_files(&vfs).is_empty());
        assert_eq!(cache.stats().spill_write_errors, failures + 2);
        assert_eq!(cache.spill_all().unwrap(), 1);
        assert_eq!(cache.stats().resident_bytes, 0);
        for i in 0..200 {
            assert_eq!(map.get(&key(i)).unwrap(), [i]);
        }
    }

    #[test]
    fn opening_deletes_run_files_of_an_earlier_process() {
        let (vfs, cache) = cache(u64::MAX - 1);
        let map = cache.new_map(MapKind::Ordered);
        map.insert(b"k", 1);
        map.spill().unwrap();
        assert_eq!(run_files(&vfs).len(), 1);
        std::mem::forget(map);
        IndexCache::open(Arc::new(vfs.clone()), 1).unwrap();
        assert!(run_files(&vfs).is_empty());
    }

    /// Readers on two threads never miss an entry while a writer's inserts spill the map
    /// (freeze, write, swap) and merge its runs under a tiny budget and small blocks.
    #[test]
    fn readers_see_every_entry_while_spills_and_merges_run() {
        use std::sync::atomic::AtomicU32;
        const ENTRIES: u32 = 6000;
        let vfs = FaultVfs::new();
        let cache = IndexCache::open_with_blocks(Arc::new(vfs), 2 << 10, 256).unwrap();
        let map = cache.new_map(MapKind::Ordered);
        let inserted = AtomicU32::new(0);
        std::thread::scope(|scope| {
            for reader in 0..2u32 {
                let (map, inserted) = (&map, &inserted);
                scope.spawn(move || {
                    let mut probe = reader;
                    while inserted.load(Ordering::Acquire) < ENTRIES {
                        let high = inserted.load(Ordering::Acquire);
                        if high == 0 {
                            continue;
                        }
                        probe = probe.wrapping_mul(2_654_435_761).wrapping_add(1);
                        let i = probe % high;
                        let rows = map.get(&key(i / 2)).unwrap();
                        assert!(rows.contains(&i), "entry {i} missed: {rows:?}");
                    }
                });
            }
            for i in 0..ENTRIES {
                map.insert(&key(i / 2), i);
                inserted.store(i + 1, Ordering::Release);
            }
        });
        let stats = cache.stats();
        assert!(stats.spills > 10 && stats.merges > 0, "{stats:?}");
    }

    /// A `Vfs` whose file writes wait until the test opens the gate: a spill stays in its
    /// frozen state while the test looks.
    struct GatedVfs {
        inner: FaultVfs,
        open: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
        writing: Arc<std::sync::atomic::AtomicBool>,
    }

    struct GatedFile {
        inner: Box<dyn VfsFile>,
        open: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
        writing: Arc<std::sync::atomic::AtomicBool>,
    }

    impl VfsFile for GatedFile {
        fn write_all(&mut self, data: &[u8]) -> Result<()> {
            self.writing.store(true, Ordering::Release);
            let (lock, opened) = &*self.open;
            let mut open = lock.lock().unwrap();
            while !*open {
                open = opened.wait(open).unwrap();
            }
            self.inner.write_all(data)
        }
        fn sync(&mut self) -> Result<()> {
            self.inner.sync()
        }
    }

    impl Vfs for GatedVfs {
        fn open_append(&self, name: &str) -> Result<Box<dyn VfsFile>> {
            self.inner.open_append(name)
        }
        fn create(&self, name: &str) -> Result<Box<dyn VfsFile>> {
            Ok(Box::new(GatedFile {
                inner: self.inner.create(name)?,
                open: self.open.clone(),
                writing: self.writing.clone(),
            }))
        }
        fn read(&self, name: &str) -> Result<Vec<u8>> {
            self.inner.read(name)
        }
        fn read_at(&self, name: &str, offset: u64, len_bytes: usize) -> Result<Vec<u8>> {
            self.inner.read_at(name, offset, len_bytes)
        }
        fn exists(&self, name: &str) -> bool {
            self.inner.exists(name)
        }
        fn list(&self) -> Result<Vec<String>> {
            self.inner.list()
        }
        fn remove(&self, name: &str) -> Result<()> {
            self.inner.remove(name)
        }
        fn rename(&self, from: &str, to: &str) -> Result<()> {
            self.inner.rename(from, to)
        }
        fn truncate(&self, name: &str, len_bytes: u64) -> Result<()> {
            self.inner.truncate(name, len_bytes)
        }
        fn sync_dir(&self) -> Result<()> {
            self.inner.sync_dir()
        }
        fn describe(&self, name: &str) -> String {
            self.inner.describe(name)
        }
        fn map(&self, name: &str) -> Result<crate::vfs::MappedBytes> {
            self.inner.map(name)
        }
    }

    struct OpenOnDrop<'a>(&'a (std::sync::Mutex<bool>, std::sync::Condvar));

    impl Drop for OpenOnDrop<'_> {
        fn drop(&mut self) {
            *self.0.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.0.1.notify_all();
        }
    }

    /// While a spill writes its run, the frozen part answers lookups, inserts go to a new
    /// resident part, and a prune leaves the frozen part alone; once the run replaces the
    /// frozen part, every entry still reads back.
    #[test]
    fn a_spill_being_written_still_answers_lookups() {
        let open = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let writing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let vfs = FaultVfs::new();
        for kind in [MapKind::Ordered, MapKind::Hashed] {
            *open.0.lock().unwrap() = false;
            writing.store(false, Ordering::Release);
            let cache = IndexCache::open_with_blocks(
                Arc::new(GatedVfs {
                    inner: vfs.clone(),
                    open: open.clone(),
                    writing: writing.clone(),
                }),
                u64::MAX - 1,
                64,
            )
            .unwrap();
            let map = cache.new_map(kind);
            for i in 0..100 {
                map.insert(&key(i % 10), i);
            }
            let everything = ByteRange {
                lower: Unbounded,
                upper: Unbounded,
                prefix: Box::new([]),
            };
            let before = map.range(&everything).unwrap();
            std::thread::scope(|scope| {
                let spill = scope.spawn(|| map.spill());
                // Opens the gate however this closure ends (a failed assertion must not
                // leave the spilling thread waiting, and the scope joining it forever).
                let _gate = OpenOnDrop(&open);
                while !writing.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                assert_eq!(map.range(&everything).unwrap(), before, "{kind:?}");
                let three: Vec<u32> = (0..10).map(|j| 3 + 10 * j).collect();
                assert_eq!(map.get(&key(3)).unwrap(), three);
                map.insert(&key(3), 1000);
                assert_eq!(map.prune(|_, _| false), 1, "only the new resident entry");
                map.insert(&key(3), 1001);
                let mut with_new = three.clone();
                with_new.push(1001);
                assert_eq!(map.get(&key(3)).unwrap(), with_new);
                let stats = map.stats();
                assert_eq!((stats.resident_keys, stats.runs), (1, 0), "{stats:?}");
                *open.0.lock().unwrap() = true;
                open.1.notify_all();
                assert!(spill.join().unwrap().unwrap());
                assert_eq!(map.get(&key(3)).unwrap(), with_new);
            });
            assert_eq!(map.stats().runs, 1);
            assert_eq!(map.range(&everything).unwrap().len(), before.len() + 1);
        }
    }

    /// Model of one map: the resident entries and the spilled ones (prunes reach only the
    /// former; see MERGES).
    #[derive(Default, Debug)]
    struct Model {
        resident: BTreeSet<(Vec<u8>, u32)>,
        spilled: BTreeSet<(Vec<u8>, u32)>,
    }

    impl Model {
        fn rows(&self, range: &ByteRange) -> Vec<u32> {
            let mut by_key: BTreeMap<&[u8], BTreeSet<u32>> = BTreeMap::new();
            for (key, row) in self.resident.iter().chain(&self.spilled) {
                if range.contains(key) {
                    by_key.entry(key).or_default().insert(*row);
                }
            }
            by_key.into_values().flatten().collect()
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Vec<u8>, u32),
        /// Removes resident entries whose row is `0 mod m`.
        Prune(u32),
        Get(Vec<u8>),
        Range(Bound<Vec<u8>>, Bound<Vec<u8>>),
        Prefix(Vec<u8>),
        Spill,
        Merge,
        /// Writes fail from now (`true`) or work again.
        BreakDisk(bool),
    }

    fn small_key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, b'a', b'b', 255]), 0..4),
            (0..3u8, prop::collection::vec(any::<u8>(), 0..3)).prop_map(|(tag, mut rest)| {
                rest.insert(0, tag);
                rest
            }),
        ]
    }

    fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
        prop_oneof![
            1 => Just(Unbounded),
            2 => small_key().prop_map(Included),
            2 => small_key().prop_map(Excluded),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            12 => (small_key(), 0..40u32).prop_map(|(k, r)| Op::Insert(k, r)),
            1 => (2..5u32).prop_map(Op::Prune),
            3 => small_key().prop_map(Op::Get),
            3 => (bound(), bound()).prop_map(|(l, u)| Op::Range(l, u)),
            2 => small_key().prop_map(Op::Prefix),
            1 => Just(Op::Spill),
            1 => Just(Op::Merge),
            1 => any::<bool>().prop_map(Op::BreakDisk),
        ]
    }

    fn to_box(bound: &Bound<Vec<u8>>) -> Bound<Box<[u8]>> {
        match bound {
            Included(k) => Included(k.as_slice().into()),
            Excluded(k) => Excluded(k.as_slice().into()),
            Unbounded => Unbounded,
        }
    }

    proptest! {
        /// Ordered keys sort exactly as their byte strings, short keys, shared prefixes and
        /// trailing zero bytes included.
        #[test]
        fn ordered_keys_sort_as_their_bytes(
            keys in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..12), 0..40),
        ) {
            let mut by_bytes = keys.clone();
            by_bytes.sort();
            let mut by_key: Vec<OrderedKey> = keys.iter().map(|k| OrderedKey::new(k)).collect();
            by_key.sort();
            let by_key: Vec<Vec<u8>> = by_key.iter().map(|k| k.bytes.to_vec()).collect();
            prop_assert_eq!(by_key, by_bytes);
            for a in &keys {
                for b in &keys {
                    let (ka, kb) = (OrderedKey::new(a), OrderedKey::new(b));
                    prop_assert_eq!(ka.cmp(&kb), a.cmp(b));
                    prop_assert_eq!(ka == kb, a == b);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random inserts, prunes, lookups of keys, ranges and prefixes, forced spills and
        /// merges, spills forced by a tiny budget and failed writes, against a model; both
        /// kinds of map, two maps sharing the budget.
        #[test]
        fn lookups_equal_the_model_through_spills_merges_and_failures(
            ops in prop::collection::vec(op(), 1..120),
            budget in prop::sample::select(vec![1u64, 600, 4000, u64::MAX - 1]),
            block_bytes in prop::sample::select(vec![1usize, 24, 64, BLOCK_TARGET_BYTES]),
        ) {
            let vfs = FaultVfs::new();
            let cache = IndexCache::open_with_blocks(Arc::new(vfs.clone()), budget, block_bytes)
                .unwrap();
            let maps = [cache.new_map(MapKind::Ordered), cache.new_map(MapKind::Hashed)];
            let mut models = [Model::default(), Model::default()];
            for (step, op) in ops.into_iter().enumerate() {
                let m = step % 2;
                let (map, model) = (&maps[m], &mut models[m]);
                let spills_before = maps.each_ref().map(|map| map.stats().spills);
                match &op {
                    Op::Insert(key, row) => {
                        map.insert(key, *row);
                        model.resident.insert((key.clone(), *row));
                    }
                    Op::Prune(m) => {
                        let removed = map.prune(|_, row| row % m != 0);
                        let before = model.resident.len();
                        model.resident.retain(|(_, row)| row % m != 0);
                        prop_assert_eq!(removed, before - model.resident.len());
                    }
                    Op::Get(key) => {
                        let want = model.rows(&ByteRange::point(key));
                        prop_assert_eq!(map.get(key).unwrap(), want, "get {:?}", key);
                    }
                    Op::Range(lower, upper) => {
                        if map.kind() == MapKind::Ordered {
                            let lower = match lower { Unbounded => Included(Vec::new()), b => b.clone() };
                            let prefix: Box<[u8]> = Box::new([]);
                            let range = ByteRange { lower: to_box(&lower), upper: to_box(upper), prefix };
                            prop_assert_eq!(map.range(&range).unwrap(), model.rows(&range), "{:?}", range);
                        }
                    }
                    Op::Prefix(p) => {
                        let range = ByteRange {
                            lower: Included(p.as_slice().into()),
                            upper: Unbounded,
                            prefix: p.as_slice().into(),
                        };
                        prop_assert_eq!(map.range(&range).unwrap(), model.rows(&range), "{:?}", range);
                    }
                    Op::Spill => {
                        let _ = map.spill();
                    }
                    Op::Merge => {
                        let _ = map.merge_all();
                    }
                    Op::BreakDisk(broken) => {
                        vfs.fail_writes_after(if *broken { 0 } else { u64::MAX });
                    }
                }
                // A spill (forced, or by the budget, of either map) moved its whole resident
                // part into a run.
                for (i, map) in maps.iter().enumerate() {
                    if map.stats().spills > spills_before[i] {
                        let moved = std::mem::take(&mut models[i].resident);
                        models[i].spilled.extend(moved);
                    }
                }
                for (map, model) in maps.iter().zip(&models) {
                    let stats = map.stats();
                    prop_assert_eq!(stats.resident_keys as usize,
                        model.resident.iter().map(|(k, _)| k).collect::<BTreeSet<_>>().len());
                    prop_assert!(stats.runs as usize <= MAX_RUNS_PER_MAP);
                }
                let total: u64 = maps.iter().map(|m| m.stats().resident_bytes).sum();
                prop_assert_eq!(cache.resident_bytes(), total);
            }
            for (map, model) in maps.iter().zip(&models) {
                let everything = ByteRange { lower: Unbounded, upper: Unbounded, prefix: Box::new([]) };
                prop_assert_eq!(map.range(&everything).unwrap(), model.rows(&everything));
                let run_entries: u64 = map.stats().run_entries;
                prop_assert!(run_entries as usize >= model.spilled.len());
            }
        }
    }
}
