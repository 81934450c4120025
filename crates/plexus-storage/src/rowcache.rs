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
//!   [magic "PXSP" u32][payload length u32][chunk index u32][crc32c u32 of chunk index + payload]
//!   [payload: the chunk, see `rows::Chunk::encode`]
//! ```
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
//! Pages of chunks that were written after being loaded become dead (`dead_bytes`); the file
//! only grows while the database is open. (Rewriting live pages into a new generation when
//! dead bytes dominate is not implemented; reopening starts from empty files.)
//!
//! ACCOUNTING
//! ==========
//! `resident_bytes` is the sum of the size estimates (`rows::Chunk::size_bytes`) of the
//! resident chunks of every table of the database: column buffers, heap values (strings,
//! lists, maps), label sets, dynamic properties, version chains. Estimates of chunks written
//! since the last look are refreshed lazily (`RowTable::refresh_sizes`), before every
//! eviction decision. It is an estimate of what the engine holds, not of what the allocator
//! has mapped.

use crate::vfs::{Vfs, VfsFile};
use parking_lot::Mutex;
use plexus_types::{Error, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// "PXSP", little-endian.
const PAGE_MAGIC: u32 = u32::from_le_bytes(*b"PXSP");
/// Magic, payload length, chunk index, checksum.
pub const PAGE_HEADER_BYTES: usize = 16;
/// A page payload is at most this long (a chunk of 2,048 rows with huge strings is the worst
/// case; a corrupt length field must not make a reader allocate without bound).
pub const PAGE_MAX_PAYLOAD_BYTES: usize = u32::MAX as usize - PAGE_HEADER_BYTES;

/// Eviction rounds stop at the budget less this fraction of it (see `RowCache::target_bytes`).
pub const HEADROOM_FRACTION: u64 = 8;

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
    /// Bytes of pages no chunk refers to any more.
    pub dead_bytes: u64,
    pub spill_write_errors: u64,
}

struct SpillWriter {
    /// Generation of the file being appended to (the next one is `generation + 1`).
    generation: u32,
    /// `None`: no file yet, or the last write failed (the file's end is unknown).
    file: Option<Box<dyn VfsFile>>,
    len_bytes: u64,
}

/// One database's row cache: the budget, the spill files and the counters. Shared by every
/// row table of the database.
pub struct RowCache {
    budget_bytes: u64,
    /// `None`: nothing can be spilled (tables built outside a database, in tests).
    vfs: Option<Arc<dyn Vfs>>,
    writer: Mutex<SpillWriter>,
    resident_bytes: AtomicU64,
    resident_chunks: AtomicU64,
    spilled_chunks: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    pages_written: AtomicU64,
    spill_bytes_written: AtomicU64,
    dead_bytes: AtomicU64,
    spill_write_errors: AtomicU64,
}

/// The name of the spill file of `generation`.
pub fn spill_name(generation: u32) -> String {
    format!("rows-{generation:06}.spill")
}

fn is_spill_name(name: &str) -> bool {
    name.starts_with("rows-") && name.ends_with(".spill")
}

impl RowCache {
    /// A cache that never spills (for row tables used on their own).
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
            writer: Mutex::new(SpillWriter {
                generation: 0,
                file: None,
                len_bytes: 0,
            }),
            resident_bytes: AtomicU64::new(0),
            resident_chunks: AtomicU64::new(0),
            spilled_chunks: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            pages_written: AtomicU64::new(0),
            spill_bytes_written: AtomicU64::new(0),
            dead_bytes: AtomicU64::new(0),
            spill_write_errors: AtomicU64::new(0),
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

    pub(crate) fn note_load(&self) {
        self.resident_chunks.fetch_add(1, Ordering::Relaxed);
        self.spilled_chunks.fetch_sub(1, Ordering::Relaxed);
    }

    /// A chunk was written after being loaded: its page no longer matches it.
    pub(crate) fn note_dead(&self, page: PageRef) {
        self.dead_bytes
            .fetch_add(u64::from(page.len_bytes), Ordering::Relaxed);
    }

    pub fn stats(&self) -> RowCacheStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        RowCacheStats {
            budget_bytes: self.budget_bytes,
            resident_bytes: self.resident_bytes(),
            resident_chunks: load(&self.resident_chunks),
            spilled_chunks: load(&self.spilled_chunks),
            misses: load(&self.misses),
            evictions: load(&self.evictions),
            pages_written: load(&self.pages_written),
            spill_bytes_written: load(&self.spill_bytes_written),
            dead_bytes: load(&self.dead_bytes),
            spill_write_errors: load(&self.spill_write_errors),
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
        let mut writer = self.writer.lock();
        if writer.file.is_none() {
            writer.generation += 1;
            writer.len_bytes = 0;
            match vfs.create(&spill_name(writer.generation)) {
                Ok(file) => writer.file = Some(file),
                Err(e) => {
                    self.spill_write_errors.fetch_add(1, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        let written = match writer.file.as_mut() {
            Some(file) => file.write_all(&page),
            None => unreachable!("a spill file was just opened"),
        };
        if let Err(e) = written {
            writer.file = None;
            self.spill_write_errors.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
        let at = PageRef {
            generation: writer.generation,
            offset: writer.len_bytes,
            len_bytes: page.len() as u32,
        };
        writer.len_bytes += page.len() as u64;
        self.pages_written.fetch_add(1, Ordering::Relaxed);
        self.spill_bytes_written
            .fetch_add(page.len() as u64, Ordering::Relaxed);
        Ok(at)
    }

    /// The payload of the page of chunk `chunk_index` at `page`, verified (see PAGE FORMAT).
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
        self.misses.fetch_add(1, Ordering::Relaxed);
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

    #[test]
    fn opening_deletes_spill_files_of_an_earlier_process() {
        let (vfs, cache) = cache();
        cache.write_page(0, b"x").unwrap();
        assert!(vfs.exists(&spill_name(1)));
        RowCache::open(Arc::new(vfs.clone()), 1).unwrap();
        assert!(!vfs.exists(&spill_name(1)));
    }
}
