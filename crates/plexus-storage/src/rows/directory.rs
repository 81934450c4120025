//! The chunk directory: each chunk's `ChunkSlot` (its latch over the resident chunk and its
//! spill page, the clock's reference bit, its share of the resident bytes), found without a
//! lock in an append-only two-level directory of `OnceLock`s (see EVICTION in the module
//! documentation).

use super::*;

/// One chunk's place in its table: the chunk when resident, its spill page when it has one
/// (see EVICTION in the module documentation).
pub(super) struct ChunkSlot {
    pub(super) state: RwLock<ChunkState>,
    /// The clock's reference bit: set by every access, cleared by a passing eviction sweep.
    pub(super) referenced: AtomicBool,
    /// Written since its size was last estimated (it is then listed in `RowTable::stale`).
    pub(super) stale: AtomicBool,
    /// This chunk's share of the cache's resident bytes (0 while spilled).
    pub(super) size_bytes: AtomicU64,
}

pub(super) struct ChunkState {
    /// `None`: evicted; `page` then holds it.
    pub(super) chunk: Option<Box<Chunk>>,
    /// A page holding exactly the resident chunk (clean), or the evicted chunk.
    pub(super) page: Option<PageRef>,
    /// While evicted: which of its rows exist, for a scan that needs nothing else (see
    /// EVICTION, "Scans skip loads"), and its zone maps; `None` while resident. Boxed: the
    /// slot itself stays under 100 bytes.
    pub(super) existing: Option<Box<ExistingRows>>,
}

/// The rows of an evicted chunk that exist in place, as ranges of chunk rows, and the
/// chunk's newest write: a reader at or after it sees exactly these rows. Also its zone
/// maps (see `zone`), computed at the latest when it was evicted.
pub(super) struct ExistingRows {
    pub(super) max_write_ts: Timestamp,
    pub(super) runs: Box<[Range<u32>]>,
    pub(super) zones: ChunkZones,
}

impl ChunkSlot {
    pub(super) fn touch(&self) {
        if !self.referenced.load(Ordering::Relaxed) {
            self.referenced.store(true, Ordering::Relaxed);
        }
    }
}

/// `DIRECTORY_BLOCK_CHUNKS` slots of a `ChunkDirectory`, allocated on first use.
type DirectoryBlock = Box<[OnceLock<ChunkSlot>]>;

/// Chunks per directory block (2 M rows).
const DIRECTORY_BLOCK_CHUNKS: usize = 1024;
/// Directory blocks: enough for every `u32` row offset.
const DIRECTORY_BLOCKS: usize = (1usize << 32) / CHUNK_ROWS / DIRECTORY_BLOCK_CHUNKS;

/// A table's chunk slots: append-only, and read without a lock. Two levels of `OnceLock`s, so
/// finding a slot is two atomic loads and a slot lives (at a fixed address) as long as its
/// table. A `RwLock<Vec<Arc<ChunkSlot>>>` cost every row read a read-modify-write on the lock
/// word and on the slot's `Arc` count — cache lines that two threads reading one table
/// bounced between their cores on every row (`docs/benchmarks.md`, "Parallel Cypher on a
/// million vertices"). Slots `0..len` are published in order by `grow`, under its mutex.
pub(super) struct ChunkDirectory {
    blocks: Box<[OnceLock<DirectoryBlock>]>,
    len: AtomicUsize,
    grow: Mutex<()>,
}

impl ChunkDirectory {
    pub(super) fn new() -> Self {
        ChunkDirectory {
            blocks: (0..DIRECTORY_BLOCKS).map(|_| OnceLock::new()).collect(),
            len: AtomicUsize::new(0),
            grow: Mutex::new(()),
        }
    }

    pub(super) fn get(&self, index: usize) -> Option<&ChunkSlot> {
        self.blocks
            .get(index / DIRECTORY_BLOCK_CHUNKS)?
            .get()?
            .get(index % DIRECTORY_BLOCK_CHUNKS)?
            .get()
    }

    /// Slots published so far; every index below is present.
    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The published slots with their indexes, as of the call.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, &ChunkSlot)> {
        (0..self.len()).map(|index| (index, self.get(index).expect("published slot")))
    }

    /// Slot `index`, publishing `make()` for it and every missing slot below it first.
    pub(super) fn grow(&self, index: usize, mut make: impl FnMut() -> ChunkSlot) -> &ChunkSlot {
        let _one_writer = self.grow.lock();
        assert!(
            index < DIRECTORY_BLOCKS * DIRECTORY_BLOCK_CHUNKS,
            "chunk {index} past the directory"
        );
        while self.len() <= index {
            let next = self.len();
            let block = self.blocks[next / DIRECTORY_BLOCK_CHUNKS].get_or_init(|| {
                (0..DIRECTORY_BLOCK_CHUNKS)
                    .map(|_| OnceLock::new())
                    .collect()
            });
            let fresh = block[next % DIRECTORY_BLOCK_CHUNKS].set(make()).is_ok();
            assert!(fresh, "slot {next} published twice");
            self.len.store(next + 1, Ordering::Release);
        }
        self.get(index).expect("published above")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn bare_slot() -> ChunkSlot {
        ChunkSlot {
            state: RwLock::new(ChunkState {
                chunk: None,
                page: None,
                existing: None,
            }),
            referenced: AtomicBool::new(false),
            stale: AtomicBool::new(false),
            size_bytes: AtomicU64::new(0),
        }
    }

    #[test]
    fn the_chunk_directory_publishes_slots_in_order_across_blocks() {
        let dir = ChunkDirectory::new();
        assert!(dir.get(0).is_none());
        let n = DIRECTORY_BLOCK_CHUNKS + 3;
        let made = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            // A reader sees every published slot, never one past the length.
            let reader = scope.spawn(|| {
                while dir.len() < n {
                    let len = dir.len();
                    assert!((0..len).all(|i| dir.get(i).is_some()));
                }
            });
            for index in [0, 5, DIRECTORY_BLOCK_CHUNKS - 1, n - 1] {
                let slot = dir.grow(index, || {
                    made.fetch_add(1, Ordering::Relaxed);
                    bare_slot()
                });
                assert!(std::ptr::eq(slot, dir.get(index).unwrap()));
            }
            reader.join().unwrap();
        });
        assert_eq!(made.into_inner(), n, "each slot made once");
        assert_eq!(dir.iter().count(), n);
        assert!(dir.get(n).is_none());
        // Growing to a published index makes nothing.
        dir.grow(3, || unreachable!("slot 3 exists"));
    }
}
