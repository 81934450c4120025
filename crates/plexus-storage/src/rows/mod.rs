//! Row tables: columnar, chunked, multi-versioned storage of vertex (and edge) rows.
//!
//! LAYOUT
//! ======
//! Rows are addressed by a dense offset and grouped into chunks of `CHUNK_ROWS`. A chunk holds,
//! per row: an existence flag, an optional set of extra labels, one typed column per declared
//! property (or one row-wise column per declared *column family*), and a dynamic column with
//! the undeclared properties as a small key/value list. Chunks of edge rows also hold each
//! edge's endpoints (see ENDPOINTS).
//!
//! VERSIONS
//! ========
//! The newest committed value of every *slot* (existence, labels, one property) is stored in
//! place. Older values live in per-chunk version chains, HyPer-style undo:
//!
//! ```text
//!   slot (row 7, prop age):  in place = 42 (written at ts 9)
//!   chain: newest_ts = 9, older = [(0, 40), (5, 41)]   // 40 from the beginning, 41 from ts 5
//!   reader at ts 3 → 40;  at ts 6 → 41;  at ts 9 or later → 42 (in place)
//! ```
//!
//! Every chunk remembers the newest commit timestamp written into it (`max_write_ts`). A reader
//! whose timestamp is at least that reads the columns directly without consulting any chain:
//! the analytic fast path.
//!
//! INVARIANTS
//! ==========
//! - A slot whose in-place value was written after the GC horizon has a chain; a slot without
//!   a chain holds a value older than every active reader.
//! - Chain versions are ordered by timestamp and `older` entries precede `newest_ts`.
//! - Only the commit pipeline writes (one commit at a time, under the commit lock); readers take a
//!   chunk's read latch for the duration of one access.
//! - Uncommitted data never enters a row table: transactions buffer writes privately.
//!
//! ENDPOINTS
//! =========
//! An edge row carries its (source offset, destination offset), written by the creation that
//! installs the row (`install_create_edge`, under the same latch as its properties) and never
//! changed after: a column of the chunk, `(u32, u32)` per row, allocated on the chunk's first
//! edge, with `NO_ENDPOINTS` for rows never created (a rolled-back transaction's hole).
//!
//! ```text
//!   edge chunk 3 (rows 6144..8191):  exists    [1, 0, 1, 0, ...]
//!                                    endpoints [(7, 9), (MAX, MAX), (2, 7), (4, 4), ...]
//!   row 6145: a hole (never created)        → endpoints None
//!   row 6147: created, then deleted at ts 12 → endpoints (4, 4) at every ts
//! ```
//!
//! - **Not versioned.** Endpoints need no chain: they exist from the row's creation and no
//!   write replaces them, so every reader that can see the edge (`exists` at its timestamp,
//!   checked by the caller) reads the same pair, and a deleted edge keeps it for the readers
//!   older than the deletion. It does not keep a chunk from being cold.
//! - **Spilled with the row.** The column is part of the chunk's spill page and of its size
//!   estimate (8 bytes per row of a chunk holding any edge), so endpoints are evicted and read
//!   back like every other column: no per-edge state stays resident outside the chunks.
//! - **Cheap to read.** `endpoints(row)` is the one chunk lookup every row read makes (two
//!   atomic loads in the `ChunkDirectory`) and the chunk's read latch; no table-wide lock.
//! - **Recovery** rebuilds them with the rows: a checkpoint stores the endpoints of every
//!   edge existing at its timestamp, and WAL replay re-installs every later creation (so an
//!   edge created after the checkpoint and deleted since has them again). An edge deleted
//!   before the checkpoint is not in it and has none after a restart — as none of its other
//!   columns; no reader of the reopened database is old enough to see it.
//!
//! EVICTION
//! ========
//! Under a finite `Config::row_cache_bytes`, chunks can be evicted to a spill file and read
//! back (`rowcache` owns the files, the page format and the byte account). Each chunk sits in
//! a `ChunkSlot`: a latch over `{chunk: Option<Chunk>, page: Option<PageRef>}`, a clock
//! reference bit, and the chunk's share of the resident bytes.
//!
//! ```text
//!   resident, no page ──evict (cold)──▶ write page ──▶ spilled(page)
//!        ▲                                                  │ any access: load page
//!        └──── write (the page is now dead) ◀── resident, clean(page) ◀──┘
//!                                   resident, clean ──evict──▶ spilled (no write)
//! ```
//!
//! - **Finding a chunk takes no lock.** Slots live in an append-only two-level directory of
//!   `OnceLock`s (`ChunkDirectory`) for the table's lifetime: a lookup is two atomic loads,
//!   with no shared counter written, so threads reading one table (the workers of a
//!   parallel query) do not bounce a cache line per row.
//! - **One accessor.** Every read and write of a chunk goes through `latch_read` /
//!   `latch_write` (`with_chunk`, `with_chunk_mut`, `prop_many`, `scan`), which load an evicted
//!   chunk first. A load happens under the chunk's write latch and re-checks the state, so
//!   two threads missing at once load it once (loads are idempotent); a reader then keeps the
//!   latch, downgraded, so the chunk cannot be evicted between its load and its read.
//! - **Scans skip loads.** Evicting a chunk keeps, in its slot, the ranges of its rows that
//!   exist in place and its `max_write_ts` (`ExistingRows`; dropped when the chunk is loaded
//!   again, so it never outlives the state it describes: an evicted chunk is written only
//!   after a load). `scan_ranges` at a timestamp at or after that `max_write_ts` — what a
//!   resident chunk answers from `exists` alone — lists those ranges without reading the
//!   page, so a label scan over a table larger than the cache (a parallel query's scan, on
//!   the caller's thread before the workers start) decodes nothing; an older reader loads
//!   the chunk as before.
//! - **Typed reads skip loads.** A typed bulk read (`typed_prop_many`, what a query's scan
//!   hands its vectorised filters, projections and aggregates) of an evicted chunk, at a
//!   timestamp at or after its `max_write_ts`, reads the columns it wants straight from
//!   the page under the chunk's read latch (`Chunk::read_typed_column`: the other columns
//!   skipped by their lengths, nothing allocated for them; undeclared keys by one walk of
//!   the page's per-row property lists, `Chunk::read_undeclared`, decoding only the wanted
//!   keys of the wanted rows) and leaves the chunk evicted. A
//!   scan over a table larger than the cache so neither decodes every column of every chunk
//!   (the string columns' `Value`s were most of a 10 M scan's time) nor evicts the chunks
//!   other work keeps hot; each such read counts as a miss.
//! - **Zones survive eviction.** A chunk's zone maps (each numeric column's smallest and
//!   largest value, `zone`) are computed when it is evicted, if not before, and kept in its
//!   slot with the chunk's existing runs (`ExistingRows`), so a top-k that skips chunks by
//!   them never reads an evicted chunk it skips; a load hands both back to the chunk. A
//!   resident chunk likewise keeps its existing runs once a scan listed them
//!   (`Chunk::existing_runs`), so a scan of a table whose chunks nobody wrote since walks no
//!   `exists` flags. Every write drops both (`latch_write`).
//! - **Never evicted while latched.** Eviction takes the latch with `try_write` and skips a
//!   chunk someone holds; readers never wait for an eviction, and an eviction never waits.
//! - **Only cold chunks.** A chunk is evicted only after collecting its versions below the
//!   horizon leaves it without chains and without creation timestamps: then every reader
//!   (none is older than the horizon) reads the in-place values, which are all the page holds.
//!   The chunk receiving a table's new rows is never evicted (it is being written).
//! - **Clean pages are reused.** A loaded chunk keeps its page until written; evicting it
//!   again writes nothing. A write drops the page (it becomes dead bytes in the file).
//! - **Policy.** A clock sweep per table, starting where the last stopped, skipping (and
//!   clearing) chunks referenced since the last pass, stopping once the cache is below its
//!   target. `Storage::evict_rows` runs it after commits, in background maintenance, while a
//!   checkpoint reads every row, and during recovery.
//! - **Compaction** (see COMPACTION in `rowcache`) moves a slot's page to a newer spill file
//!   under the slot's latch (`try_write`, as eviction: a latched chunk keeps its page until a
//!   later round), so a load never reads a page whose file is being deleted.
//! - **Failures.** A page that fails its checks is an error naming the spill file and offset
//!   (reads return it; nothing is guessed). A failed spill write leaves the chunk resident.
//! - `scan` lists a chunk's rows under its latch and calls back after releasing it, so the
//!   callback may read the table (parking_lot read latches are not recursive: a reader
//!   re-entering a latch behind a queued writer would deadlock).
//!
//! FILES
//! =====
//! This file holds the data types (`Chunk`, its columns and version chains, the `Layout`) and
//! `RowTable`'s chunk accessor, reads and writes; `chunk` the chunk's in-place and versioned
//! reads and writes, GC and size estimate; `page` its spill-page encoding; `directory` the
//! `ChunkSlot`s and the lock-free `ChunkDirectory`; `eviction` GC over a table, the clock
//! sweep and spill-file compaction; `typed` typed bulk reads; `zone` the zone maps.

use crate::catalog::PropertyDef;
use crate::codec::{DecodeResult, Decoder, Encoder};
use crate::rowcache::{CompactTrigger, CompactionRound, PageRef, RowCache};
use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use plexus_types::{DataType, Error, LabelId, PropKeyId, Result, TemporalValue, Timestamp, Value};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

mod chunk;
mod directory;
mod eviction;
mod page;
mod typed;
mod zone;

use chunk::absent;
use directory::{ChunkDirectory, ChunkSlot, ChunkState, ExistingRows};
pub use eviction::compact_spill;
pub use typed::{TypedProps, TypedValues};
use zone::ChunkZones;
pub use zone::Zone;

pub const CHUNK_ROWS: usize = 2048;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Slot {
    Exists,
    Labels,
    Prop(PropKeyId),
}

#[derive(Clone, Debug)]
enum SlotValue {
    Exists(bool),
    Labels(Option<Box<[LabelId]>>),
    Prop(Option<Value>),
}

struct VersionChain {
    newest_ts: Timestamp,
    /// (valid-from timestamp, value), ascending; all older than `newest_ts`.
    older: Vec<(Timestamp, SlotValue)>,
}

/// Typed storage for one declared property, or row-wise storage for a column family.
enum ColumnData {
    Bool(Vec<bool>),
    /// Shared with the typed reads that hand a run of it out whole (`TypedValues::SharedInt64`,
    /// SHARED in `typed`): a write to a shared column copies it first (`Arc::make_mut`), so a
    /// reader's run never changes under it.
    Int64(Arc<Vec<i64>>),
    Float64(Arc<Vec<f64>>),
    Values(Vec<Value>),
    Family(Vec<Option<Box<[Value]>>>),
}

struct Column {
    data: ColumnData,
    /// Null mask for single-property columns; family cells hold `Value::Null` instead.
    valid: Vec<bool>,
}

/// Where a declared property lives: its own column, or a position within a family column.
#[derive(Clone, Copy)]
enum ColumnRef {
    Single(usize),
    Family {
        column: usize,
        position: usize,
        width: usize,
    },
}

struct Chunk {
    max_write_ts: Timestamp,
    exists: Vec<bool>,
    /// Allocated on first use (edge rows never carry labels): empty means all `None`.
    labels: Vec<Option<Box<[LabelId]>>>,
    columns: Vec<Column>,
    /// Allocated on first use: empty means no row has undeclared properties.
    dynamic: Vec<DynamicProps>,
    /// (source offset, destination offset) per edge row, fixed when the row is created (see
    /// ENDPOINTS). Allocated on the chunk's first edge creation: vertex chunks never hold
    /// one; `NO_ENDPOINTS` marks rows never created (holes of rolled-back transactions).
    endpoints: Vec<(u32, u32)>,
    /// Creation timestamps of rows created after the GC horizon; allocated while any row of
    /// the chunk is that young, dropped by GC. A reader older than a row's creation sees
    /// nothing of it. (Cheaper than a version chain per created row.)
    created_at: Vec<Timestamp>,
    /// The compact form of `created_at` for a chunk whose rows one commit created — a bulk
    /// load fills millions: `(first, ts)` says every row from `first` on was created at `ts`
    /// (rows never created there are never read as existing). Set only on a chunk no row
    /// was ever written to (`max_write_ts == 0`), so it claims no older row; a creation at
    /// another timestamp turns it into `created_at` first. At most one of the two is in use.
    created_suffix: Option<(u32, Timestamp)>,
    chains: HashMap<(u32, Slot), VersionChain>,
    /// The ranges of rows that exist in place, once a scan at or after `max_write_ts` listed
    /// them (`scan_ranges`); dropped by every write (`latch_write`).
    existing_runs: OnceLock<Box<[Range<u32>]>>,
    /// The zone maps of the in-place values, once asked for (see `zone`); dropped by every
    /// write (`latch_write`), handed to the slot when the chunk is evicted.
    zones: OnceLock<ChunkZones>,
}

/// Undeclared properties of one row: a boxed slice keeps the per-row cost at one pointer.
type DynamicProps = Option<Box<[(PropKeyId, Value)]>>;

/// The endpoints of a row never created as an edge. Vertex offsets stop below `u32::MAX`
/// (`store::MAX_VERTEX_ROWS`), so no edge has it as an endpoint.
const NO_ENDPOINTS: (u32, u32) = (u32::MAX, u32::MAX);

/// Declared properties of a table and how they map to columns.
struct Layout {
    declared: HashMap<PropKeyId, (DataType, ColumnRef)>,
    /// The type of each column: family columns first (`Any`, a row-wise group), then one per
    /// declared property outside a family (which may be `Any` too).
    columns: Vec<DataType>,
    /// How many of `columns` are family columns.
    family_columns: usize,
}

impl Layout {
    /// Where declared property `key` is stored (`None`: undeclared, kept per row).
    fn locate(&self, key: PropKeyId) -> Option<ColumnRef> {
        self.declared.get(&key).map(|&(_, at)| at)
    }

    fn new(properties: &[PropertyDef], families: &[Vec<usize>]) -> Self {
        let mut declared = HashMap::new();
        let mut columns = Vec::new();
        for family in families {
            let column = columns.len();
            columns.push(DataType::Any);
            for (position, &member) in family.iter().enumerate() {
                let p = &properties[member];
                let width = family.len();
                declared.insert(
                    p.key,
                    (
                        p.data_type,
                        ColumnRef::Family {
                            column,
                            position,
                            width,
                        },
                    ),
                );
            }
        }
        let family_columns = columns.len();
        for p in properties {
            if let std::collections::hash_map::Entry::Vacant(slot) = declared.entry(p.key) {
                slot.insert((p.data_type, ColumnRef::Single(columns.len())));
                columns.push(p.data_type);
            }
        }
        Self {
            declared,
            columns,
            family_columns,
        }
    }

    fn is_family(&self, column: usize) -> bool {
        column < self.family_columns
    }
}

/// One table of rows. See the module documentation.
pub struct RowTable {
    name: String,
    layout: Layout,
    next_row: AtomicU32,
    chunks: ChunkDirectory,
    cache: Arc<RowCache>,
    /// Chunks written since their size was last estimated.
    stale: Mutex<Vec<usize>>,
    /// Where the next eviction sweep starts.
    clock_hand: AtomicUsize,
}

/// A row's complete state at a timestamp.
#[derive(Clone, Debug, PartialEq)]
pub struct RowImage {
    pub labels: Vec<LabelId>,
    pub props: Vec<(PropKeyId, Value)>,
}

impl RowTable {
    /// A table whose chunks stay resident (no spill file).
    #[cfg(test)]
    pub(crate) fn new(name: &str, properties: &[PropertyDef], families: &[Vec<usize>]) -> Self {
        Self::with_cache(name, properties, families, RowCache::unbounded())
    }

    /// A table accounting its chunks in `cache` and spilling cold ones to its files.
    pub(crate) fn with_cache(
        name: &str,
        properties: &[PropertyDef],
        families: &[Vec<usize>],
        cache: Arc<RowCache>,
    ) -> Self {
        Self {
            name: name.to_string(),
            layout: Layout::new(properties, families),
            next_row: AtomicU32::new(0),
            chunks: ChunkDirectory::new(),
            cache,
            stale: Mutex::new(Vec::new()),
            clock_hand: AtomicUsize::new(0),
        }
    }

    /// Reserves a fresh row offset (rows of aborted transactions stay as holes).
    pub(crate) fn reserve(&self, limit: u32) -> Result<u32> {
        self.reserve_many(1, limit)
    }

    /// Reserves `count` consecutive rows (none on error); the first of them.
    pub(crate) fn reserve_many(&self, count: u32, limit: u32) -> Result<u32> {
        self.next_row
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                n.checked_add(count).filter(|&end| end <= limit)
            })
            .map_err(|n| {
                Error::LimitExceeded(format!(
                    "table '{}' is full: {n} rows, at most {limit} ({count} asked for)",
                    self.name
                ))
            })
    }

    pub fn row_count(&self) -> u32 {
        self.next_row.load(Ordering::Acquire)
    }

    /// Makes sure offsets below `rows` are never handed out again (recovery).
    pub(crate) fn ensure_reserved(&self, rows: u32) {
        self.next_row.fetch_max(rows, Ordering::AcqRel);
    }

    /// The type `key` is declared with in this table, if it is (what `check_type` checks;
    /// a loader checking a column of values looks it up once).
    pub fn declared_type(&self, key: PropKeyId) -> Option<DataType> {
        self.layout
            .declared
            .get(&key)
            .map(|&(data_type, _)| data_type)
    }

    /// Checks that `value` may be stored under `key` in this table.
    pub fn check_type(&self, key: PropKeyId, value: &Value, key_name: &str) -> Result<()> {
        match self.layout.declared.get(&key) {
            Some(&(data_type, _)) if !data_type.accepts(value) => {
                Err(Error::TypeMismatch(format!(
                    "property '{key_name}' of table '{}' is declared {} but the value {value} is {}",
                    self.name,
                    data_type.name(),
                    value.data_type().name()
                )))
            }
            _ => Ok(()),
        }
    }

    // ---- the chunk accessor: every read and write of a chunk goes through these ----------

    fn slot(&self, row: u32) -> Option<&ChunkSlot> {
        self.chunks.get(row as usize / CHUNK_ROWS)
    }

    fn slot_for_write(&self, row: u32) -> &ChunkSlot {
        let index = row as usize / CHUNK_ROWS;
        if let Some(slot) = self.chunks.get(index) {
            return slot;
        }
        self.chunks.grow(index, || {
            let chunk = Chunk::new(&self.layout);
            let size = chunk.size_bytes();
            self.cache.account(0, size);
            self.cache.note_new_chunk();
            ChunkSlot {
                state: RwLock::new(ChunkState {
                    chunk: Some(Box::new(chunk)),
                    page: None,
                    existing: None,
                }),
                referenced: AtomicBool::new(true),
                stale: AtomicBool::new(false),
                size_bytes: AtomicU64::new(size),
            }
        })
    }

    /// Reads an evicted chunk's page back into `state` (a no-op when another thread did);
    /// true if this call loaded it.
    fn load(&self, slot: &ChunkSlot, state: &mut ChunkState, index: usize) -> Result<bool> {
        if state.chunk.is_some() {
            return Ok(false);
        }
        let Some(page) = state.page else {
            unreachable!("an evicted chunk has a page")
        };
        let payload = self.cache.read_page(page, index as u32)?;
        let mut chunk = Chunk::decode(&self.layout, &payload)
            .map_err(|e| self.cache.decode_error(page, e.offset, e.detail))?;
        // The page holds the evicted chunk: its runs and zones describe the loaded one.
        if let Some(existing) = state.existing.take() {
            chunk.existing_runs = OnceLock::from(existing.runs);
            chunk.zones = OnceLock::from(existing.zones);
        }
        let size = chunk.size_bytes();
        let old = slot.size_bytes.swap(size, Ordering::AcqRel);
        self.cache.account(old, size);
        self.cache.note_load();
        state.chunk = Some(Box::new(chunk));
        Ok(true)
    }

    /// The read latch of chunk `index` of `slot`, loading the chunk first if it was evicted
    /// (then also `true`: the caller calls [`relieve`](Self::relieve) once it holds no latch).
    fn latch_read<'a>(
        &self,
        slot: &'a ChunkSlot,
        index: usize,
    ) -> Result<(MappedRwLockReadGuard<'a, Chunk>, bool)> {
        slot.touch();
        let state = slot.state.read();
        let state = match RwLockReadGuard::try_map(state, |s| s.chunk.as_deref()) {
            Ok(chunk) => return Ok((chunk, false)),
            Err(state) => state,
        };
        drop(state);
        let mut state = slot.state.write();
        let loaded = self.load(slot, &mut state, index)?;
        let state = RwLockWriteGuard::downgrade(state);
        match RwLockReadGuard::try_map(state, |s| s.chunk.as_deref()) {
            Ok(chunk) => Ok((chunk, loaded)),
            Err(_) => unreachable!("loaded under the write latch, downgraded atomically"),
        }
    }

    /// After a read loaded chunks, with no latch or directory lock held: while the cache is
    /// over its budget, evicts cold chunks of this table in one clock pass (no GC — readers do
    /// not know the horizon — so mostly clean chunks read back earlier, which costs no write;
    /// one pass, so the chunks just read get a second chance instead of thrashing). Keeps
    /// read-only workloads bounded between commits and maintenance rounds. A failed spill
    /// write leaves its chunk resident and is counted in the cache statistics; the read
    /// itself succeeded and returns its data.
    fn relieve(&self) {
        if self.cache.resident_bytes() > self.cache.budget_bytes() {
            let target = self.cache.target_bytes();
            if self.sweep(0, target, 1).is_err() {
                debug_assert!(self.cache.stats().spill_write_errors > 0);
            }
        }
    }

    /// The write latch of chunk `index` of `slot`, loaded; the chunk's page (if any) no longer
    /// matches it once written, and its size is re-estimated at the next refresh.
    fn latch_write<'a>(
        &self,
        slot: &'a ChunkSlot,
        index: usize,
    ) -> Result<MappedRwLockWriteGuard<'a, Chunk>> {
        slot.touch();
        let mut state = slot.state.write();
        self.load(slot, &mut state, index)?;
        // Writers (the commit pipeline) do not relieve: eviction after the commit does.
        if let Some(page) = state.page.take() {
            self.cache.note_dead(page);
        }
        // The values may change: the zones and runs no longer describe them (see `zone`).
        if let Some(chunk) = state.chunk.as_mut() {
            chunk.zones.take();
            chunk.existing_runs.take();
        }
        self.mark_stale(slot, index);
        match RwLockWriteGuard::try_map(state, |s| s.chunk.as_deref_mut()) {
            Ok(chunk) => Ok(chunk),
            Err(_) => unreachable!("loaded under the write latch"),
        }
    }

    fn mark_stale(&self, slot: &ChunkSlot, index: usize) {
        if !slot.stale.swap(true, Ordering::AcqRel) {
            self.stale.lock().push(index);
        }
    }

    /// `f` with the chunk holding `row` (`None`: past the last chunk).
    fn with_chunk<T>(&self, row: u32, f: impl FnOnce(&Chunk, usize) -> T) -> Result<Option<T>> {
        let Some(slot) = self.slot(row) else {
            return Ok(None);
        };
        let (chunk, loaded) = self.latch_read(slot, row as usize / CHUNK_ROWS)?;
        let result = f(&chunk, row as usize % CHUNK_ROWS);
        drop(chunk);
        if loaded {
            self.relieve();
        }
        Ok(Some(result))
    }

    fn with_chunk_mut<T>(&self, row: u32, f: impl FnOnce(&mut Chunk, usize) -> T) -> Result<T> {
        let slot = self.slot_for_write(row);
        let mut chunk = self.latch_write(slot, row as usize / CHUNK_ROWS)?;
        Ok(f(&mut chunk, row as usize % CHUNK_ROWS))
    }

    // ---- reads ----------------------------------------------------------------------------

    fn read(&self, row: u32, slot: Slot, ts: Timestamp) -> Result<SlotValue> {
        let value = self.with_chunk(row, |chunk, r| chunk.read(&self.layout, r, slot, ts))?;
        Ok(value.unwrap_or_else(|| absent(slot)))
    }

    pub fn exists(&self, row: u32, ts: Timestamp) -> Result<bool> {
        Ok(matches!(
            self.read(row, Slot::Exists, ts)?,
            SlotValue::Exists(true)
        ))
    }

    pub fn labels(&self, row: u32, ts: Timestamp) -> Result<Vec<LabelId>> {
        Ok(match self.read(row, Slot::Labels, ts)? {
            SlotValue::Labels(Some(labels)) => labels.into_vec(),
            _ => Vec::new(),
        })
    }

    pub fn prop(&self, row: u32, key: PropKeyId, ts: Timestamp) -> Result<Option<Value>> {
        Ok(match self.read(row, Slot::Prop(key), ts)? {
            SlotValue::Prop(v) => v,
            _ => None,
        })
    }

    /// `f(i, value)` with property `key` of `rows[i]` at `ts`, for bulk readers (analytics
    /// projections): the chunk directory is locked once for the batch, and a chunk's latch is
    /// kept across consecutive rows of the same chunk, instead of both per row as in [`prop`].
    ///
    /// [`prop`]: Self::prop
    pub fn prop_many(
        &self,
        rows: &[u32],
        key: PropKeyId,
        ts: Timestamp,
        f: &mut dyn FnMut(usize, Option<Value>),
    ) -> Result<()> {
        let at = self.layout.locate(key);
        let read = |chunk: &Chunk, r: usize| chunk.read_prop(at, key, r, ts);
        self.read_many(rows, read, &mut |i, value| f(i, value.flatten()))
    }

    /// `f(i, exists, value)` with whether `rows[i]` exists at `ts` and, if it does, its property
    /// `key` (`None`: no key to read): [`exists`](Self::exists) and [`prop`](Self::prop) for
    /// each row, reading both under one latch per chunk as [`prop_many`](Self::prop_many) does.
    pub fn exists_and_prop_many(
        &self,
        rows: &[u32],
        key: Option<PropKeyId>,
        ts: Timestamp,
        f: &mut dyn FnMut(usize, bool, Option<Value>),
    ) -> Result<()> {
        let at = key.and_then(|key| self.layout.locate(key));
        let read = |chunk: &Chunk, r: usize| {
            let exists = matches!(
                chunk.read(&self.layout, r, Slot::Exists, ts),
                SlotValue::Exists(true)
            );
            let value = key
                .filter(|_| exists)
                .and_then(|k| chunk.read_prop(at, k, r, ts));
            (exists, value)
        };
        self.read_many(rows, read, &mut |i, read| {
            let (exists, value) = read.unwrap_or((false, None));
            f(i, exists, value)
        })
    }

    /// `f(i, read(chunk, row in chunk))` for each of `rows` (`None` past the last chunk): the
    /// chunk directory is looked up once per chunk switch and a chunk's read latch kept across
    /// consecutive rows of the same chunk.
    fn read_many<T>(
        &self,
        rows: &[u32],
        read: impl Fn(&Chunk, usize) -> T,
        f: &mut dyn FnMut(usize, Option<T>),
    ) -> Result<()> {
        let mut i = 0;
        self.for_each_chunk_run(rows, &mut |chunk, run| {
            for &row in run {
                f(i, chunk.map(|chunk| read(chunk, row as usize % CHUNK_ROWS)));
                i += 1;
            }
        })
    }

    /// `f(chunk, run)` for each maximal run of consecutive `rows` in one chunk, in order, under
    /// that chunk's read latch (`None`: the run is past the last chunk). Relieves the row
    /// cache afterwards if a chunk had to be loaded.
    fn for_each_chunk_run(
        &self,
        rows: &[u32],
        f: &mut dyn FnMut(Option<&Chunk>, &[u32]),
    ) -> Result<()> {
        let mut loaded_any = false;
        for run in rows.chunk_by(|a, b| *a as usize / CHUNK_ROWS == *b as usize / CHUNK_ROWS) {
            let index = run[0] as usize / CHUNK_ROWS;
            match self.chunks.get(index) {
                Some(slot) => {
                    let (chunk, loaded) = self.latch_read(slot, index)?;
                    loaded_any |= loaded;
                    f(Some(&chunk), run);
                }
                None => f(None, run),
            }
        }
        if loaded_any {
            // One batch may hold more than the budget until here.
            self.relieve();
        }
        Ok(())
    }

    /// The (source, destination) offsets of edge row `row`: `None` for a row never created
    /// (a hole, or past the last chunk). Endpoints are fixed at creation and not versioned, so
    /// a deleted edge keeps them; the caller decides visibility with [`exists`](Self::exists).
    /// One lock-free chunk lookup and the chunk's read latch (a load if it was evicted).
    pub(crate) fn endpoints(&self, row: u32) -> Result<Option<(u32, u32)>> {
        let ends = self.with_chunk(row, |chunk, r| chunk.endpoints_of(r))?;
        Ok(ends.flatten())
    }

    /// All properties of a row at `ts`, sorted by key.
    pub fn props(&self, row: u32, ts: Timestamp) -> Result<Vec<(PropKeyId, Value)>> {
        let props = self.with_chunk(row, |chunk, r| {
            let mut keys: Vec<PropKeyId> = self.layout.declared.keys().copied().collect();
            if let Some(dynamic) = chunk.dynamic.get(r).and_then(Option::as_ref) {
                keys.extend(dynamic.iter().map(|(k, _)| *k));
            }
            if ts < chunk.max_write_ts {
                // Properties removed since `ts` are only in the chains.
                keys.extend(
                    chunk
                        .chains
                        .keys()
                        .filter(|(row, _)| *row as usize == r)
                        .filter_map(|(_, s)| match s {
                            Slot::Prop(k) => Some(*k),
                            _ => None,
                        }),
                );
            }
            keys.sort_unstable();
            keys.dedup();
            keys.into_iter()
                .filter_map(|k| match chunk.read(&self.layout, r, Slot::Prop(k), ts) {
                    SlotValue::Prop(Some(v)) => Some((k, v)),
                    _ => None,
                })
                .collect()
        })?;
        Ok(props.unwrap_or_default())
    }

    pub(crate) fn image(&self, row: u32, ts: Timestamp) -> Result<RowImage> {
        Ok(RowImage {
            labels: self.labels(row, ts)?,
            props: self.props(row, ts)?,
        })
    }

    /// Calls `f` with every row that exists at `ts`, in offset order. `f` runs with no latch
    /// held (a chunk's rows are listed first), so it may read the table and chunks may be
    /// evicted meanwhile.
    pub fn scan(&self, ts: Timestamp, mut f: impl FnMut(u32)) -> Result<()> {
        self.scan_ranges(ts, |rows| rows.for_each(&mut f))
    }

    /// [`scan`](Self::scan) by runs of rows: `f` gets the maximal ranges of consecutive rows
    /// that exist at `ts` within each chunk, in offset order — one range per chunk for a table
    /// without deleted rows, where a caller that wants counts or bounds (analytics' vertex
    /// selection) need not visit every row. Latching as in `scan`.
    pub fn scan_ranges(&self, ts: Timestamp, mut f: impl FnMut(Range<u32>)) -> Result<()> {
        let mut found: Vec<Range<u32>> = Vec::new();
        for (index, slot) in self.chunks.iter() {
            let base = (index * CHUNK_ROWS) as u32;
            // An evicted chunk whose newest write the reader sees needs no load (EVICTION,
            // "Scans skip loads"), a resident one no walk of its flags but the first (its
            // `runs`, kept until a write); `f` runs after the latch is released, as below.
            let skipped = {
                let state = slot.state.read();
                let runs = match (&state.chunk, &state.existing) {
                    (Some(chunk), _) if ts >= chunk.max_write_ts => {
                        slot.touch();
                        Some(
                            chunk
                                .existing_runs
                                .get_or_init(|| true_runs(&chunk.exists).collect()),
                        )
                    }
                    (None, Some(existing)) if ts >= existing.max_write_ts => Some(&existing.runs),
                    _ => None,
                };
                if let Some(runs) = runs {
                    found.extend(runs.iter().map(|run| base + run.start..base + run.end));
                }
                runs.is_some()
            };
            if skipped {
                found.drain(..).for_each(&mut f);
                continue;
            }
            let loaded = {
                let (chunk, loaded) = self.latch_read(slot, index)?;
                let shift = |run: Range<u32>| base + run.start..base + run.end;
                if ts >= chunk.max_write_ts {
                    found.extend(true_runs(&chunk.exists).map(shift));
                } else {
                    let runs = existing_runs(|r| {
                        matches!(
                            chunk.read(&self.layout, r, Slot::Exists, ts),
                            SlotValue::Exists(true)
                        )
                    });
                    found.extend(runs.map(shift));
                }
                loaded
            };
            if loaded {
                self.relieve();
            }
            found.drain(..).for_each(&mut f);
        }
        Ok(())
    }

    // ---- writes (the commit pipeline, one commit at a time) ----------------------------------

    /// Creates vertex row `row` at `ts` with `labels` and `props`.
    pub(crate) fn install_create(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        labels: &[LabelId],
        props: &[(PropKeyId, Value)],
    ) -> Result<()> {
        self.install_row(row, (ts, horizon), labels, props, None)
    }

    /// Creates edge row `row` at `ts` with its endpoints `ends` (source offset, destination
    /// offset: fixed from here on, see ENDPOINTS) and `props`, under one latch.
    pub(crate) fn install_create_edge(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        ends: (u32, u32),
        props: &[(PropKeyId, Value)],
    ) -> Result<()> {
        self.install_row(row, (ts, horizon), &[], props, Some(ends))
    }

    fn install_row(
        &self,
        row: u32,
        (ts, horizon): (Timestamp, Timestamp),
        labels: &[LabelId],
        props: &[(PropKeyId, Value)],
        endpoints: Option<(u32, u32)>,
    ) -> Result<()> {
        self.with_chunk_mut(row, |chunk, r| {
            assert!(
                !chunk.exists[r],
                "row {row} of '{}' created twice",
                self.name
            );
            if let Some(ends) = endpoints {
                chunk.set_endpoints(r, ends);
            }
            // Properties and labels of a row that did not exist need no old versions: no
            // reader can see the row before `ts`.
            for (key, value) in props {
                chunk.write_in_place(
                    &self.layout,
                    r,
                    (Slot::Prop(*key), SlotValue::Prop(Some(value.clone()))),
                );
            }
            let labels = (!labels.is_empty()).then(|| labels.to_vec().into_boxed_slice());
            chunk.write_in_place(&self.layout, r, (Slot::Labels, SlotValue::Labels(labels)));
            chunk.write_in_place(&self.layout, r, (Slot::Exists, SlotValue::Exists(true)));
            assert!(
                ts >= chunk.max_write_ts,
                "commits install in timestamp order"
            );
            if ts > horizon {
                chunk.note_created(r, ts);
            }
            chunk.max_write_ts = ts;
        })
    }

    pub(crate) fn install_delete(&self, row: u32, ts: Timestamp, horizon: Timestamp) -> Result<()> {
        self.with_chunk_mut(row, |chunk, r| {
            chunk.write(
                &self.layout,
                r,
                Slot::Exists,
                SlotValue::Exists(false),
                ts,
                horizon,
            )
        })
    }

    pub(crate) fn install_prop(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        key: PropKeyId,
        value: Option<Value>,
    ) -> Result<()> {
        self.with_chunk_mut(row, |chunk, r| {
            chunk.write(
                &self.layout,
                r,
                Slot::Prop(key),
                SlotValue::Prop(value),
                ts,
                horizon,
            )
        })
    }

    pub(crate) fn install_labels(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        labels: &[LabelId],
    ) -> Result<()> {
        let value =
            SlotValue::Labels((!labels.is_empty()).then(|| labels.to_vec().into_boxed_slice()));
        self.with_chunk_mut(row, |chunk, r| {
            chunk.write(&self.layout, r, Slot::Labels, value, ts, horizon)
        })
    }

    /// Every value property `key` of `row` holds in a version still kept (in place or in the
    /// slot's version chain) — after `gc(horizon)`, every value a reader at or after `horizon`
    /// can see; before it, a superset. Empty when the row exists in no kept version (never
    /// created, or deleted before every kept version). Secondary indexes are built and pruned
    /// from this (see `index`).
    pub(crate) fn retained_values(&self, row: u32, key: PropKeyId) -> Result<Vec<Value>> {
        let values = self.with_chunk(row, |chunk, r| {
            let chain = |slot: Slot| chunk.chains.get(&(row, slot));
            if !chunk.exists[r] && chain(Slot::Exists).is_none() {
                return Vec::new();
            }
            let mut values: Vec<Value> = chunk
                .prop_in_place(self.layout.locate(key), key, r)
                .into_iter()
                .collect();
            if let Some(chain) = chain(Slot::Prop(key)) {
                values.extend(chain.older.iter().filter_map(|(_, old)| match old {
                    SlotValue::Prop(value) => value.clone(),
                    _ => None,
                }));
            }
            values
        })?;
        Ok(values.unwrap_or_default())
    }
}

/// The maximal ranges of indexes of `flags` that are true, in order — [`existing_runs`] over
/// a flag per row, found a slice at a time.
fn true_runs(flags: &[bool]) -> impl Iterator<Item = Range<u32>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + flags[at..].iter().position(|&f| f)?;
        let len = flags[start..].iter().position(|&f| !f);
        at = start + len.unwrap_or(flags.len() - start);
        Some(start as u32..at as u32)
    })
}

/// The maximal ranges of chunk rows for which `exists` holds, in row order.
fn existing_runs(exists: impl Fn(usize) -> bool) -> impl Iterator<Item = Range<u32>> {
    let mut start = None;
    (0..=CHUNK_ROWS).filter_map(move |r| {
        let here = r < CHUNK_ROWS && exists(r);
        match (here, start) {
            (true, None) => {
                start = Some(r as u32);
                None
            }
            (false, Some(first)) => {
                start = None;
                Some(first..r as u32)
            }
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> RowTable {
        let props = [
            PropertyDef {
                key: 0,
                data_type: DataType::Int64,
            },
            PropertyDef {
                key: 1,
                data_type: DataType::String,
            },
            PropertyDef {
                key: 2,
                data_type: DataType::Float64,
            },
        ];
        RowTable::new("t", &props, &[vec![1, 2]])
    }

    #[test]
    fn true_runs_are_the_existing_runs_of_the_flags() {
        let mut state = 7u64;
        for case in 0..200 {
            // Runs of random lengths, short and long, starting and ending either way.
            let mut flags = vec![false; CHUNK_ROWS];
            let (mut row, mut on) = (0, case % 2 == 0);
            while row < CHUNK_ROWS {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = 1 + (state >> 33) as usize % if case % 3 == 0 { 3 } else { 700 };
                flags[row..(row + len).min(CHUNK_ROWS)].fill(on);
                (row, on) = (row + len, !on);
            }
            let expected: Vec<_> = existing_runs(|r| flags[r]).collect();
            assert_eq!(
                true_runs(&flags).collect::<Vec<_>>(),
                expected,
                "case {case}"
            );
        }
        assert_eq!(true_runs(&[]).count(), 0);
    }

    #[test]
    fn bulk_property_reads_agree_with_single_reads_at_every_timestamp() {
        let t = table();
        let rows: Vec<u32> = (0..(CHUNK_ROWS as u32 + 10))
            .map(|_| t.reserve(u32::MAX).unwrap())
            .collect();
        for &row in &rows {
            t.install_create(row, 2, 0, &[], &[(2, Value::Float(f64::from(row)))])
                .unwrap();
        }
        // Rows in both chunks change at ts 5; one has its property removed at ts 8.
        for &row in [3, CHUNK_ROWS as u32 + 4].iter() {
            t.install_prop(row, 5, 0, 2, Some(Value::Float(-1.0)))
                .unwrap();
        }
        t.install_prop(7, 8, 0, 2, None).unwrap();
        // Out of order and across chunks, with a row past the last chunk.
        let asked = [
            CHUNK_ROWS as u32 + 4,
            3,
            7,
            0,
            CHUNK_ROWS as u32 + 4,
            10 * CHUNK_ROWS as u32,
        ];
        for ts in [1, 2, 5, 8, 9] {
            let mut got = Vec::new();
            t.prop_many(&asked, 2, ts, &mut |i, v| got.push((i, v)))
                .unwrap();
            let want: Vec<_> = asked
                .iter()
                .enumerate()
                .map(|(i, &row)| (i, t.prop(row, 2, ts).unwrap()))
                .collect();
            assert_eq!(got, want, "ts {ts}");
        }
    }

    #[test]
    fn readers_see_the_version_of_their_timestamp() {
        let t = table();
        let row = t.reserve(u32::MAX).unwrap();
        t.install_create(
            row,
            2,
            0,
            &[],
            &[
                (0, Value::Int(40)),
                (1, Value::string("a")),
                (7, Value::Bool(true)),
            ],
        )
        .unwrap();
        t.install_prop(row, 5, 0, 0, Some(Value::Int(41))).unwrap();
        t.install_prop(row, 9, 0, 0, Some(Value::Int(42))).unwrap();
        t.install_prop(row, 9, 0, 7, None).unwrap();
        assert!(!t.exists(row, 1).unwrap());
        assert_eq!(t.prop(row, 0, 3).unwrap(), Some(Value::Int(40)));
        assert_eq!(t.prop(row, 0, 6).unwrap(), Some(Value::Int(41)));
        assert_eq!(t.prop(row, 0, 9).unwrap(), Some(Value::Int(42)));
        assert_eq!(
            t.props(row, 8).unwrap().len(),
            3,
            "dynamic prop 7 still visible at ts 8"
        );
        assert_eq!(
            t.props(row, 9).unwrap(),
            vec![(0, Value::Int(42)), (1, Value::string("a"))]
        );
        t.install_delete(row, 12, 0).unwrap();
        assert!(t.exists(row, 11).unwrap() && !t.exists(row, 12).unwrap());
    }

    #[test]
    fn gc_keeps_what_readers_at_the_horizon_need() {
        let t = table();
        let row = t.reserve(u32::MAX).unwrap();
        t.install_create(row, 1, 0, &[], &[(0, Value::Int(1))])
            .unwrap();
        for ts in 2..10 {
            t.install_prop(row, ts, 0, 0, Some(Value::Int(ts as i64)))
                .unwrap();
        }
        t.gc(5);
        assert_eq!(t.prop(row, 0, 5).unwrap(), Some(Value::Int(5)));
        assert_eq!(t.prop(row, 0, 7).unwrap(), Some(Value::Int(7)));
        t.gc(100);
        assert_eq!(t.version_count(), 0);
        assert_eq!(t.prop(row, 0, 100).unwrap(), Some(Value::Int(9)));
    }

    #[test]
    fn declared_types_are_enforced() {
        let t = table();
        assert!(t.check_type(0, &Value::Int(1), "age").is_ok());
        let err = t.check_type(0, &Value::string("x"), "age").unwrap_err();
        assert!(err.to_string().contains("declared INT64"), "{err}");
        assert!(t.check_type(99, &Value::string("x"), "free").is_ok());
    }

    #[test]
    fn scan_sees_rows_of_its_snapshot() {
        let t = table();
        for ts in 1..=3 {
            let row = t.reserve(u32::MAX).unwrap();
            t.install_create(row, ts, 0, &[], &[]).unwrap();
        }
        t.install_delete(0, 4, 0).unwrap();
        let rows = |ts| {
            let mut v = vec![];
            t.scan(ts, |r| v.push(r)).unwrap();
            v
        };
        assert_eq!(rows(2), vec![0, 1]);
        assert_eq!(rows(4), vec![1, 2]);
    }
}
