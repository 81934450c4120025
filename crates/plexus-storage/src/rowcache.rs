//! Row cache: bounded memory for row tables, with cold chunks spilled to disk.
//!
//! WHAT
//! ====
//! Row tables (`rows`) hold their rows in chunks of `CHUNK_ROWS`. Under a budget
//! (`Config::row_cache_bytes`), chunks that are *cold* are serialised into checksummed pages of
//! a spill file and dropped from memory; the next access reads the page back. This module owns
//! the spill files, the page format, the resident-bytes account and the hit/miss counters; the
//! chunk state machine and the eviction policy live in `rows`, which is the only place that
//! knows what a chunk is.
//!
//! ```text
//!   chunk slot state            page                     meaning
//!   resident, page = None       -                        dirty (or never spilled): memory only
//!   resident, page = Some(p)    p holds the same rows    clean: eviction just drops the memory
//!   spilled,  page = Some(p)    p                        evicted: the next access loads p
//! ```
//!
//! WHY A CACHE, NOT A TIER OF THE DURABLE STATE
//! ============================================
//! The spill file is not part of durability. Recovery still comes from the checkpoint and the
//! WAL; every `rows-<generation>.spill` file is deleted when the database opens and the cache
//! starts empty. So a spill page is never fsynced, a crash can leave any garbage in the file,
//! and nothing in the manifest refers to it. Checkpoints are not reused as page storage: a
//! checkpoint is a sequence of row sections written once per checkpoint and retired at the
//! next, with no index from a chunk to a byte range, and its rows are the state at the
//! checkpoint's timestamp rather than the newest in-place values a chunk holds; pointing
//! evicted chunks into it would tie eviction to the checkpoint cycle (and every write since
//! the checkpoint would pin its chunk in memory). A separate, append-only cache file keeps
//! eviction independent of checkpoints and keeps the durable formats unchanged.
//!
//! PAGE FORMAT
//! ===========
//! ```text
//!   [magic "PXS3" u32][payload length u32][chunk index u32][crc32c u32 of chunk index + payload]
//!   [payload: the chunk, see `rows::Chunk::encode`: max_write_ts, existence, labels, columns,
//!    undeclared properties (the numeric or boolean keys at least half the rows hold as
//!    columns, then per-row lists of the rest), then the edge endpoints column (presence marker + (u32, u32) per row)]
//! ```
//! The magic is the format's version. "PXSP" (version 1) had no endpoints column: edge
//! endpoints were then kept in memory outside the chunks; "PXS2" (version 2) kept every
//! undeclared property in the per-row lists. Spill files are never read across
//! processes — `RowCache::open` deletes every `rows-*.spill` before recovery, whatever its
//! version — so no version-1 page is ever read; and were one met, it would fail the magic
//! check (`Corruption`, "bad magic") rather than decode as a chunk without endpoints.
//! A page is located by a [`PageRef`] (generation, byte offset, total length) held in memory
//! by its chunk slot. Reading a page re-checks the magic, the length, the chunk index and the
//! checksum; any mismatch, and a file shorter than the page, is `Error::Corruption` naming the
//! spill file and the page's byte offset. The decoder of the payload never panics on bad input.
//! Never wrong data: a page that does not check out is an error, not a guess.
//!
//! FILES AND FAILURES
//! ==================
//! Pages are appended to the current generation's file through the storage [`Vfs`] (so the
//! fault injector covers them). A failed or short write makes the file's end unknown: the
//! writer drops that file for writing (pages already in it stay readable) and the next page
//! starts a new generation. The chunk whose page failed stays resident — no data is lost, the
//! cache just holds more than its budget until a later write succeeds — and the failure is
//! counted (`spill_write_errors`) and returned to the caller of the eviction.
//!
//! COMPACTION
//! ==========
//! Every spill file has an account: the bytes of its pages that a chunk slot refers to
//! (*live*: the page of a spilled chunk, or of a clean resident one) and of those none does
//! any more (*dead*: the chunk was written after a load, so its page went stale, or the page
//! was copied elsewhere). Without compaction the files only grow while the database is open.
//!
//! ```text
//!   rows-000001.spill  [A][b][c][D][e]    live A, D   dead b, c, e   (dead > live)
//!   round 1: seal 000001, copy A and D ──▶ rows-000002.spill  [A'][D']   slots repoint
//!   000001 now has no live bytes ──▶ deleted; its dead bytes are reclaimed
//! ```
//!
//! A compaction starts when dead bytes dominate: more dead than live bytes, and at least
//! `SPILL_COMPACT_MIN_DEAD_BYTES` of them. Dead > live bounds the files to about twice what
//! chunks refer to (plus the minimum), and means a compaction copies no more bytes than it
//! frees — at most one byte written per byte reclaimed; the minimum keeps small caches from
//! rewriting a few pages over and over for nothing worth having. Starting one seals the file
//! being appended to and notes the first generation after it; every page of an earlier
//! generation is then *moved* — read and verified like a load, appended to the current file
//! through the same writer as evictions, and its slot repointed — by rounds of at most
//! `SPILL_COMPACT_ROUND_MAX_BYTES` (the maintenance paths call them: background
//! maintenance, `Storage::evict_rows`, recovery's eviction, and the explicit
//! `Database::compact_row_spill`), until no slot refers to an earlier generation; it is then
//! counted as done (`spill_compactions`). A spill file with no live bytes that is not being
//! appended to is deleted through the `Vfs` at the end of every round, compacting or not (so
//! the garbage file of a failed write goes too); its dead bytes leave `dead_bytes` and are
//! counted in `spill_bytes_reclaimed`.
//!
//! Invariants that make it safe with concurrent readers, writers and evictions:
//! - A `PageRef` is only followed, replaced or dropped under its chunk slot's latch, and a
//!   page's bytes move between a file's live and dead accounts under that same latch.
//! - Pages are only appended to the current generation, and a compaction moves pages of
//!   generations below the current one: a file being compacted never receives a page.
//! - So a file whose live bytes are zero and which is not being appended to is referred to by
//!   no slot, and no reader can be reading it (a reader loads a page under the latch, and the
//!   page is live until then): deleting it cannot pull a page from under a load.
//! - A move takes the latch with `try_write`, like eviction: a chunk someone holds keeps its
//!   old page until a later round, and its file stays until then. Compaction never waits for
//!   a reader, and a reader never waits for more than one page copy.
//!
//! Failures lose nothing. A page that fails its checks during the copy is the same
//! `Error::Corruption` (file and offset) a load returns: its slot keeps the old page, so the
//! file stays and the chunk's reads keep reporting it; the round moves the other pages and
//! returns the error. A failed write of the copy leaves the slot on its old, readable page,
//! is counted in `spill_write_errors` like a spill write of an eviction, ends the round and is
//! returned; a later round retries.
//!
//! ACCOUNTING
//! ==========
//! `resident_bytes` is the sum of the size estimates (`rows::Chunk::size_bytes`) of the
//! resident chunks of every table of the database: column buffers (with the 8-byte endpoints
//! of every row of an edge chunk), heap values (strings, lists, maps), label sets, dynamic
//! properties, version chains. Estimates of chunks written
//! since the last look are refreshed lazily (`RowTable::refresh_sizes`), before every
//! eviction decision. It is an estimate of what the engine holds, not of what the allocator
//! has mapped.

use crate::vfs::{Vfs, VfsFile};
use parking_lot::Mutex;
use plexus_types::{Error, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// "PXS3", little-endian: version 3 of the page format, whose chunks carry the edge endpoints
/// column (version 1, "PXSP", did not) and their most-held undeclared keys as columns
/// (version 2, "PXS2", did not; see PAGE FORMAT).
const PAGE_MAGIC: u32 = u32::from_le_bytes(*b"PXS3");
/// Magic, payload length, chunk index, checksum.
pub const PAGE_HEADER_BYTES: usize = 16;
/// A page payload is at most this long (a chunk of 2,048 rows with huge strings is the worst
/// case; a corrupt length field must not make a reader allocate without bound).
pub const PAGE_MAX_PAYLOAD_BYTES: usize = u32::MAX as usize - PAGE_HEADER_BYTES;

/// Eviction rounds stop at the budget less this fraction of it (see `RowCache::target_bytes`).
pub const HEADROOM_FRACTION: u64 = 8;

/// A compaction starts only once the spill files hold at least this many dead bytes (and more
/// dead than live ones, see COMPACTION): below it the waste is small next to any useful row
/// cache budget, and rewriting would cost more than it saves.
pub const SPILL_COMPACT_MIN_DEAD_BYTES: u64 = 4 << 20;

/// A compaction round copies pages until it has copied at least this many bytes (so at most
/// this plus one page): it runs in the maintenance paths, which must not stall for the
/// length of a whole file rewrite. 32 MiB is tens of milliseconds of sequential I/O.
pub const SPILL_COMPACT_ROUND_MAX_BYTES: u64 = 32 << 20;

/// Where a spilled chunk's page is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRef {
    pub generation: u32,
    pub offset: u64,
    /// Header and payload.
    pub len_bytes: u32,
}

/// Counters of one database's row cache (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCacheStats {
    pub budget_bytes: u64,
    pub resident_bytes: u64,
    /// Chunks in memory and chunks evicted, over every row table of the database.
    pub resident_chunks: u64,
    pub spilled_chunks: u64,
    /// Chunk accesses that read a page back.
    pub misses: u64,
    pub evictions: u64,
    pub pages_written: u64,
    pub spill_bytes_written: u64,
    /// Bytes of pages chunk slots refer to (spilled chunks and clean resident ones).
    pub live_bytes: u64,
    /// Bytes of pages no chunk refers to any more, in spill files not yet deleted.
    pub dead_bytes: u64,
    /// Spill files not yet deleted.
    pub spill_files: u64,
    /// Failed page writes, of evictions and of compactions.
    pub spill_write_errors: u64,
    /// Compactions finished: no chunk refers to a file older than the compaction any more.
    pub spill_compactions: u64,
    /// Bytes of live pages compactions copied (also counted in `spill_bytes_written`).
    pub spill_bytes_copied: u64,
    /// Dead bytes of the spill files deleted since the cache opened.
    pub spill_bytes_reclaimed: u64,
}

/// Whether a compaction round starts a compaction only when dead bytes dominate, or whenever
/// there are any (see COMPACTION).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactTrigger {
    WhenDue,
    Now,
}

/// One spill file's account (see COMPACTION).
#[derive(Clone, Copy, Debug, Default)]
struct FileAccount {
    live_bytes: u64,
    dead_bytes: u64,
}

/// The spill files: the one being appended to, and the account of every one not deleted.
struct SpillFiles {
    /// Generation of the file being appended to (the next one is `generation + 1`).
    generation: u32,
    /// `None`: no file yet, the last write failed (the file's end is unknown), or a
    /// compaction sealed it.
    file: Option<Box<dyn VfsFile>>,
    len_bytes: u64,
    /// Every spill file created and not yet deleted, by generation.
    accounts: BTreeMap<u32, FileAccount>,
    /// While a compaction runs: pages of generations below this one are moved.
    compact_below: Option<u32>,
}

impl SpillFiles {
    /// The account of the file holding `page`, which a slot refers to (or did until now).
    fn account(&mut self, page: PageRef) -> &mut FileAccount {
        match self.accounts.get_mut(&page.generation) {
            Some(account) => account,
            None => panic!(
                "spill page {page:?} refers to a file that was deleted: a slot outlived its file"
            ),
        }
    }

    fn totals(&self) -> FileAccount {
        self.accounts
            .values()
            .fold(FileAccount::default(), |sum, a| FileAccount {
                live_bytes: sum.live_bytes + a.live_bytes,
                dead_bytes: sum.dead_bytes + a.dead_bytes,
            })
    }
}

/// The work left to a compaction round (see [`RowCache::begin_round`]).
pub(crate) struct CompactionRound {
    /// Pages of generations below this one are moved.
    pub(crate) below_generation: u32,
    /// Bytes still to copy in this round (it stops at zero; a page may overshoot).
    pub(crate) budget_bytes: u64,
    /// The first page the round could not read back (its slot keeps it).
    pub(crate) unreadable: Option<Error>,
}

/// One database's row cache: the budget, the spill files and the counters. Shared by every
/// row table of the database.
pub struct RowCache {
    budget_bytes: u64,
    /// `None`: nothing can be spilled (tables built outside a database, in tests).
    vfs: Option<Arc<dyn Vfs>>,
    /// Lock order: a chunk slot's latch, then this (see COMPACTION).
    files: Mutex<SpillFiles>,
    resident_bytes: AtomicU64,
    resident_chunks: AtomicU64,
    spilled_chunks: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    pages_written: AtomicU64,
    spill_bytes_written: AtomicU64,
    spill_write_errors: AtomicU64,
    spill_compactions: AtomicU64,
    spill_bytes_copied: AtomicU64,
    spill_bytes_reclaimed: AtomicU64,
}

/// The name of the spill file of `generation`.
pub fn spill_name(generation: u32) -> String {
    format!("rows-{generation:06}.spill")
}

fn is_spill_name(name: &str) -> bool {
    name.starts_with("rows-") && name.ends_with(".spill")
}

impl RowCache {
    /// A cache that never spills (for row tables used on their own, in tests).
    #[cfg(test)]
    pub fn unbounded() -> Arc<Self> {
        Arc::new(Self::new(None, u64::MAX))
    }

    /// The cache of the database in `vfs`, deleting the spill files a previous process left.
    pub fn open(vfs: Arc<dyn Vfs>, budget_bytes: u64) -> Result<Arc<Self>> {
        for name in vfs.list()? {
            if is_spill_name(&name) {
                vfs.remove(&name)?;
            }
        }
        Ok(Arc::new(Self::new(Some(vfs), budget_bytes)))
    }

    fn new(vfs: Option<Arc<dyn Vfs>>, budget_bytes: u64) -> Self {
        Self {
            budget_bytes,
            vfs,
            files: Mutex::new(SpillFiles {
                generation: 0,
                file: None,
                len_bytes: 0,
                accounts: BTreeMap::new(),
                compact_below: None,
            }),
            resident_bytes: AtomicU64::new(0),
            resident_chunks: AtomicU64::new(0),
            spilled_chunks: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            pages_written: AtomicU64::new(0),
            spill_bytes_written: AtomicU64::new(0),
            spill_write_errors: AtomicU64::new(0),
            spill_compactions: AtomicU64::new(0),
            spill_bytes_copied: AtomicU64::new(0),
            spill_bytes_reclaimed: AtomicU64::new(0),
        }
    }

    pub fn budget_bytes(&self) -> u64 {
        self.budget_bytes
    }

    /// Where an eviction round stops: the budget less `HEADROOM_FRACTION` of it, so a cache
    /// at its budget is not swept again after every commit or miss.
    pub fn target_bytes(&self) -> u64 {
        self.budget_bytes - self.budget_bytes / HEADROOM_FRACTION
    }

    /// True when chunks may be evicted: a finite budget and a file system to spill to.
    pub fn bounded(&self) -> bool {
        self.budget_bytes != u64::MAX && self.vfs.is_some()
    }

    pub fn resident_bytes(&self) -> u64 {
        self.resident_bytes.load(Ordering::Acquire)
    }

    /// Replaces a chunk's share of the account: `old_bytes` → `new_bytes`.
    pub(crate) fn account(&self, old_bytes: u64, new_bytes: u64) {
        if new_bytes >= old_bytes {
            self.resident_bytes
                .fetch_add(new_bytes - old_bytes, Ordering::AcqRel);
        } else {
            self.resident_bytes
                .fetch_sub(old_bytes - new_bytes, Ordering::AcqRel);
        }
    }

    pub(crate) fn note_eviction(&self) {
        self.evictions.fetch_add(1, Ordering::Relaxed);
        self.resident_chunks.fetch_sub(1, Ordering::Relaxed);
        self.spilled_chunks.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn note_new_chunk(&self) {
        self.resident_chunks.fetch_add(1, Ordering::Relaxed);
    }

    /// A page read back without loading its chunk (a typed column read from it).
    pub(crate) fn note_page_read(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn note_load(&self) {
        self.note_page_read();
        self.resident_chunks.fetch_add(1, Ordering::Relaxed);
        self.spilled_chunks.fetch_sub(1, Ordering::Relaxed);
    }

    /// No slot refers to `page` any more (its chunk was written after being loaded, or the
    /// page was copied by a compaction). Called under the slot's latch.
    pub(crate) fn note_dead(&self, page: PageRef) {
        let len_bytes = u64::from(page.len_bytes);
        let mut files = self.files.lock();
        let account = files.account(page);
        assert!(
            account.live_bytes >= len_bytes,
            "spill page {page:?} is not live: {account:?}"
        );
        account.live_bytes -= len_bytes;
        account.dead_bytes += len_bytes;
    }

    /// `page` was copied by a compaction (the slot now refers to the copy).
    pub(crate) fn note_moved(&self, page: PageRef) {
        self.note_dead(page);
        self.spill_bytes_copied
            .fetch_add(u64::from(page.len_bytes), Ordering::Relaxed);
    }

    pub fn stats(&self) -> RowCacheStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (totals, spill_files) = {
            let files = self.files.lock();
            (files.totals(), files.accounts.len() as u64)
        };
        RowCacheStats {
            budget_bytes: self.budget_bytes,
            resident_bytes: self.resident_bytes(),
            resident_chunks: load(&self.resident_chunks),
            spilled_chunks: load(&self.spilled_chunks),
            misses: load(&self.misses),
            evictions: load(&self.evictions),
            pages_written: load(&self.pages_written),
            spill_bytes_written: load(&self.spill_bytes_written),
            live_bytes: totals.live_bytes,
            dead_bytes: totals.dead_bytes,
            spill_files,
            spill_write_errors: load(&self.spill_write_errors),
            spill_compactions: load(&self.spill_compactions),
            spill_bytes_copied: load(&self.spill_bytes_copied),
            spill_bytes_reclaimed: load(&self.spill_bytes_reclaimed),
        }
    }

    fn vfs(&self) -> Result<&Arc<dyn Vfs>> {
        self.vfs
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("this row cache has no spill file".into()))
    }

    /// Appends the page of chunk `chunk_index` holding `payload`; see FILES AND FAILURES.
    pub(crate) fn write_page(&self, chunk_index: u32, payload: &[u8]) -> Result<PageRef> {
        let vfs = self.vfs()?;
        if payload.len() > PAGE_MAX_PAYLOAD_BYTES {
            self.spill_write_errors.fetch_add(1, Ordering::Relaxed);
            return Err(Error::LimitExceeded(format!(
                "a row chunk of {} bytes does not fit a spill page",
                payload.len()
            )));
        }
        let mut page = Vec::with_capacity(PAGE_HEADER_BYTES + payload.len());
        page.extend_from_slice(&PAGE_MAGIC.to_le_bytes());
        page.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        page.extend_from_slice(&chunk_index.to_le_bytes());
        page.extend_from_slice(&page_crc(chunk_index, payload).to_le_bytes());
        page.extend_from_slice(payload);
        let mut files = self.files.lock();
        if files.file.is_none() {
            files.generation += 1;
            files.len_bytes = 0;
            match vfs.create(&spill_name(files.generation)) {
                Ok(file) => {
                    files.file = Some(file);
                    let generation = files.generation;
                    files.accounts.insert(generation, FileAccount::default());
                }
                Err(e) => {
                    self.spill_write_errors.fetch_add(1, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        let written = match files.file.as_mut() {
            Some(file) => file.write_all(&page),
            None => unreachable!("a spill file was just opened"),
        };
        if let Err(e) = written {
            files.file = None;
            self.spill_write_errors.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
        let at = PageRef {
            generation: files.generation,
            offset: files.len_bytes,
            len_bytes: page.len() as u32,
        };
        files.len_bytes += page.len() as u64;
        // Live from here: the caller installs it in the slot whose latch it holds.
        files.account(at).live_bytes += page.len() as u64;
        self.pages_written.fetch_add(1, Ordering::Relaxed);
        self.spill_bytes_written
            .fetch_add(page.len() as u64, Ordering::Relaxed);
        Ok(at)
    }

    /// The payload of the page of chunk `chunk_index` at `page`, verified (see PAGE FORMAT).
    /// Called under the chunk slot's latch (see COMPACTION).
    pub(crate) fn read_page(&self, page: PageRef, chunk_index: u32) -> Result<Vec<u8>> {
        let vfs = self.vfs()?;
        let name = spill_name(page.generation);
        let corrupt = |offset: u64, detail: String| {
            Error::corruption(vfs.describe(&name), page.offset + offset, detail)
        };
        let mut bytes = match vfs.read_at(&name, page.offset, page.len_bytes as usize) {
            Ok(bytes) => bytes,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(corrupt(
                    0,
                    format!("spill page of {} bytes is truncated", page.len_bytes),
                ));
            }
            Err(e) => return Err(e),
        };
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        if bytes.len() < PAGE_HEADER_BYTES || word(0) != PAGE_MAGIC {
            return Err(corrupt(0, "not a spill page (bad magic)".into()));
        }
        let payload_len = word(4) as usize;
        if payload_len + PAGE_HEADER_BYTES != bytes.len() {
            return Err(corrupt(
                4,
                format!(
                    "spill page says {payload_len} payload bytes, expected {}",
                    bytes.len() - PAGE_HEADER_BYTES
                ),
            ));
        }
        if word(8) != chunk_index {
            return Err(corrupt(
                8,
                format!("spill page is of chunk {}, expected {chunk_index}", word(8)),
            ));
        }
        let crc = word(12);
        let payload = bytes.split_off(PAGE_HEADER_BYTES);
        if page_crc(chunk_index, &payload) != crc {
            return Err(corrupt(12, "spill page checksum mismatch".into()));
        }
        Ok(payload)
    }

    /// The start of a compaction round (see COMPACTION): the round of the compaction under
    /// way, else of a new one if `trigger` asks for it (sealing the file being appended to),
    /// else `None`.
    pub(crate) fn begin_round(&self, trigger: CompactTrigger) -> Option<CompactionRound> {
        // (Without a file system nothing is spilled, so nothing is ever dead or due.)
        let mut files = self.files.lock();
        let below_generation = match files.compact_below {
            Some(below) => below,
            None => {
                let FileAccount {
                    live_bytes,
                    dead_bytes,
                } = files.totals();
                let due = match trigger {
                    CompactTrigger::WhenDue => {
                        dead_bytes >= SPILL_COMPACT_MIN_DEAD_BYTES && dead_bytes > live_bytes
                    }
                    CompactTrigger::Now => dead_bytes > 0,
                };
                if !due {
                    return None;
                }
                // Sealed: the next page, evicted or copied, starts the next generation.
                files.file = None;
                let below = files.generation + 1;
                files.compact_below = Some(below);
                below
            }
        };
        Some(CompactionRound {
            below_generation,
            budget_bytes: SPILL_COMPACT_ROUND_MAX_BYTES,
            unreadable: None,
        })
    }

    /// The end of every maintenance round: deletes each spill file that no slot refers to
    /// and that is not being appended to, and finishes the compaction under way once no file
    /// older than it is left. Returns the dead bytes reclaimed. A failed delete is returned;
    /// the file keeps its account and the next round tries again.
    pub(crate) fn remove_unreferenced_files(&self) -> Result<u64> {
        let Some(vfs) = self.vfs.as_ref() else {
            return Ok(0);
        };
        let mut files = self.files.lock();
        let appending = files.file.as_ref().map(|_| files.generation);
        let unreferenced: Vec<u32> = (files.accounts.iter())
            .filter(|&(&generation, account)| {
                account.live_bytes == 0 && Some(generation) != appending
            })
            .map(|(&generation, _)| generation)
            .collect();
        let mut reclaimed_bytes = 0;
        for generation in unreferenced {
            vfs.remove(&spill_name(generation))?;
            if let Some(account) = files.accounts.remove(&generation) {
                reclaimed_bytes += account.dead_bytes;
                self.spill_bytes_reclaimed
                    .fetch_add(account.dead_bytes, Ordering::Relaxed);
            }
        }
        if let Some(below) = files.compact_below
            && files.accounts.range(..below).next().is_none()
        {
            files.compact_below = None;
            self.spill_compactions.fetch_add(1, Ordering::Relaxed);
        }
        Ok(reclaimed_bytes)
    }

    /// The error for a payload that checked out but does not decode (`offset` within it).
    pub(crate) fn decode_error(&self, page: PageRef, offset: u64, detail: String) -> Error {
        let file = self.vfs.as_ref().map_or_else(
            || spill_name(page.generation),
            |vfs| vfs.describe(&spill_name(page.generation)),
        );
        Error::corruption(
            file,
            page.offset + PAGE_HEADER_BYTES as u64 + offset,
            detail,
        )
    }
}

fn page_crc(chunk_index: u32, payload: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&chunk_index.to_le_bytes()), payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultVfs;

    fn cache() -> (FaultVfs, Arc<RowCache>) {
        let vfs = FaultVfs::new();
        let cache = RowCache::open(Arc::new(vfs.clone()), 1).unwrap();
        (vfs, cache)
    }

    #[test]
    fn pages_round_trip_and_damage_is_reported_with_file_and_offset() {
        let (vfs, cache) = cache();
        let a = cache.write_page(3, b"first payload").unwrap();
        let b = cache.write_page(4, b"second").unwrap();
        assert_eq!(b.offset, a.len_bytes as u64);
        assert_eq!(cache.read_page(a, 3).unwrap(), b"first payload");
        assert_eq!(cache.read_page(b, 4).unwrap(), b"second");
        let err = cache.read_page(b, 5).unwrap_err().to_string();
        assert!(err.contains("chunk 4, expected 5"), "{err}");
        let name = spill_name(b.generation);
        vfs.corrupt(&name, b.offset as usize + PAGE_HEADER_BYTES + 1, b"X")
            .unwrap();
        let err = cache.read_page(b, 4).unwrap_err().to_string();
        assert!(
            err.contains(&name) && err.contains(&format!("byte {}", b.offset + 12)),
            "{err}"
        );
        assert!(err.contains("checksum"), "{err}");
        let beyond = PageRef {
            offset: b.offset + 4,
            ..b
        };
        let err = cache.read_page(beyond, 4).unwrap_err().to_string();
        assert!(err.contains("truncated") && err.contains(&name), "{err}");
        assert_eq!(cache.read_page(a, 3).unwrap(), b"first payload");
    }

    #[test]
    fn a_failed_write_starts_a_new_generation_and_old_pages_stay_readable() {
        let (vfs, cache) = cache();
        let a = cache.write_page(0, b"kept").unwrap();
        vfs.short_write_at(2);
        assert!(cache.write_page(1, b"torn page").is_err());
        let c = cache.write_page(2, b"after").unwrap();
        assert_eq!(c.generation, a.generation + 1);
        assert_eq!(c.offset, 0);
        assert_eq!(cache.read_page(a, 0).unwrap(), b"kept");
        assert_eq!(cache.read_page(c, 2).unwrap(), b"after");
        assert_eq!(cache.stats().spill_write_errors, 1);
    }

    /// Moves the pages of `round`, given as (chunk index, page), the way `rows` does.
    fn move_all(cache: &RowCache, round: &CompactionRound, pages: &mut [(u32, PageRef)]) {
        for (index, page) in pages.iter_mut() {
            if page.generation < round.below_generation {
                let payload = cache.read_page(*page, *index).unwrap();
                let moved = cache.write_page(*index, &payload).unwrap();
                cache.note_moved(*page);
                *page = moved;
            }
        }
    }

    #[test]
    fn a_compaction_starts_when_dead_bytes_dominate_and_deletes_the_files_it_emptied() {
        let (vfs, cache) = cache();
        let payload = vec![7u8; (SPILL_COMPACT_MIN_DEAD_BYTES / 4) as usize];
        let page_bytes = (payload.len() + PAGE_HEADER_BYTES) as u64;
        let written: Vec<PageRef> = (0..8)
            .map(|i| cache.write_page(i, &payload).unwrap())
            .collect();
        assert_eq!(cache.stats().live_bytes, 8 * page_bytes);
        // Four dead pages reach the minimum but are not more than the four live ones.
        written[..4].iter().for_each(|&page| cache.note_dead(page));
        let stats = cache.stats();
        assert!(
            stats.dead_bytes >= SPILL_COMPACT_MIN_DEAD_BYTES,
            "{stats:?}"
        );
        assert_eq!(
            (stats.live_bytes, stats.dead_bytes),
            (4 * page_bytes, 4 * page_bytes)
        );
        assert!(cache.begin_round(CompactTrigger::WhenDue).is_none());
        cache.note_dead(written[4]);
        let round = cache.begin_round(CompactTrigger::WhenDue).unwrap();
        assert_eq!(round.below_generation, 2, "the first file was sealed");
        let again = cache.begin_round(CompactTrigger::WhenDue).unwrap();
        assert_eq!(
            again.below_generation, 2,
            "a round continues the compaction under way"
        );
        let mut pages: Vec<(u32, PageRef)> = (5..).zip(written[5..].iter().copied()).collect();
        move_all(&cache, &round, &mut pages);
        assert!(pages.iter().all(|(_, p)| p.generation == 2));
        assert!(vfs.exists(&spill_name(1)));
        assert_eq!(cache.remove_unreferenced_files().unwrap(), 8 * page_bytes);
        assert!(!vfs.exists(&spill_name(1)) && vfs.exists(&spill_name(2)));
        let stats = cache.stats();
        assert_eq!(
            (stats.live_bytes, stats.dead_bytes, stats.spill_files),
            (3 * page_bytes, 0, 1)
        );
        assert_eq!(stats.spill_compactions, 1);
        assert_eq!(stats.spill_bytes_copied, 3 * page_bytes);
        assert_eq!(stats.spill_bytes_reclaimed, 8 * page_bytes);
        for &(index, page) in &pages {
            assert_eq!(cache.read_page(page, index).unwrap(), payload);
        }
        // Nothing dead: nothing to do, even when asked; the file being appended to stays.
        assert!(cache.begin_round(CompactTrigger::Now).is_none());
        assert_eq!(cache.remove_unreferenced_files().unwrap(), 0);
        assert!(vfs.exists(&spill_name(2)));
    }

    #[test]
    fn below_the_minimum_only_an_explicit_compaction_runs() {
        let (_vfs, cache) = cache();
        let a = cache.write_page(0, b"dead soon").unwrap();
        cache.write_page(1, b"live").unwrap();
        cache.note_dead(a);
        let stats = cache.stats();
        assert!(stats.dead_bytes > stats.live_bytes, "{stats:?}");
        assert!(cache.begin_round(CompactTrigger::WhenDue).is_none());
        assert!(cache.begin_round(CompactTrigger::Now).is_some());
    }

    #[test]
    fn the_file_of_a_failed_write_is_deleted_once_nothing_refers_to_it() {
        let (vfs, cache) = cache();
        let a = cache.write_page(0, b"kept").unwrap();
        vfs.fail_writes_after(1);
        assert!(cache.write_page(1, b"lost").is_err());
        vfs.fail_writes_after(u64::MAX);
        // Generation 1 is no longer appended to, but `a` is live in it.
        assert_eq!(cache.remove_unreferenced_files().unwrap(), 0);
        assert!(vfs.exists(&spill_name(1)));
        cache.note_dead(a);
        assert_eq!(
            cache.remove_unreferenced_files().unwrap(),
            u64::from(a.len_bytes)
        );
        assert!(!vfs.exists(&spill_name(1)));
        assert_eq!(cache.stats().spill_files, 0);
    }

    #[test]
    fn a_page_of_the_format_without_endpoints_is_refused() {
        let (vfs, cache) = cache();
        let page = cache.write_page(0, b"chunk").unwrap();
        vfs.corrupt(&spill_name(page.generation), 0, b"PXSP")
            .unwrap();
        let err = cache.read_page(page, 0).unwrap_err();
        assert!(matches!(err, Error::Corruption { .. }), "{err}");
        assert!(err.to_string().contains("bad magic"), "{err}");
    }

    #[test]
    fn opening_deletes_spill_files_of_an_earlier_process() {
        let (vfs, cache) = cache();
        cache.write_page(0, b"x").unwrap();
        assert!(vfs.exists(&spill_name(1)));
        RowCache::open(Arc::new(vfs.clone()), 1).unwrap();
        assert!(!vfs.exists(&spill_name(1)));
    }
}
