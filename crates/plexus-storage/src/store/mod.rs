//! `Storage`: the database's committed state and its files.
//!
//! WHAT IT OWNS
//! ============
//! The catalog, one [`VertexTable`] per vertex table (rows, primary-key index, secondary
//! indexes), one
//! [`EdgeTable`] per edge table (edge rows with their endpoints, and the out- and
//! in-[`Topology`]), the WAL, checkpoints and recovery. It knows nothing about transactions:
//! the commit pipeline (`plexus-txn`) hands it validated [`CommitRecord`]s to `install` in
//! timestamp order, and readers ask for state *at a timestamp*.
//!
//! FILES
//! =====
//! `mod.rs` holds the handles and the read, catalog, checkpoint and maintenance paths;
//! `recovery.rs` opening and recovering (`Storage::open`); `install.rs` putting a commit's
//! rows and adjacency in place; `bulk.rs` bulk loads; `tests.rs`.
//!
//! RECOVERY
//! ========
//! `open` reads the manifest, loads its checkpoint, replays WAL segments from the manifest's
//! `wal_start` (cutting a torn tail of the last segment), garbage-collects versions and compacts
//! the topology, then starts a fresh WAL segment. Anything that does not add up — a missing
//! segment, a damaged checkpoint, a WAL without a manifest — is an error naming the file;
//! Plexus refuses to open rather than return wrong data.
//!
//! CHECKPOINT
//! ==========
//! (1) under the commit lock, the caller rotates the WAL and notes the last commit timestamp
//! `ts`; (2) the state at `ts` is written to `ckpt-<ts>.ckpt` and fsynced; (3) the manifest is
//! replaced to point at it and at the new WAL segment; (4) older segments and checkpoints are
//! deleted. A crash between any two steps recovers from the old or the new manifest.
//!
//! ROW CACHE
//! =========
//! Every row table of the database accounts its chunks in one [`RowCache`] (see `rowcache`,
//! and EVICTION in `rows`). Edge endpoints are a column of the edge rows' chunks (ENDPOINTS
//! in `rows`), evicted and read back with them: an edge keeps no state resident outside its
//! chunk and the topology. `evict_rows` sweeps the tables while the cache holds more than
//! `Config::row_cache_bytes`: after every commit, in background maintenance, while a
//! checkpoint reads every row back, and during recovery after each checkpoint section and
//! WAL record, so opening a database larger than the budget stays bounded too. The spill
//! files are deleted at open: recovery never reads them. The maintenance paths among these
//! (background maintenance and explicit `evict_rows`, and recovery's rounds) also run a round
//! of spill-file compaction (COMPACTION in `rowcache`) when dead pages dominate; commits and
//! checkpoint scans do not, so a commit never waits for a file rewrite.
//!
//! INDEX CACHE
//! ===========
//! Every index map of the database — each vertex table's primary-key index (a `Hashed` map
//! keyed by a 64-bit digest of the value's lossless codec encoding, `pk_bytes`: lookups
//! re-check each candidate row's key, so a digest shared by two keys costs a row read, never
//! a wrong answer; the table's digest is randomly seeded, so keys cannot be chosen to
//! collide) and every secondary index map (`index`) — accounts its resident entries
//! in one [`IndexCache`] (see `indexcache`). An insert that takes the cache over
//! `Config::index_cache_bytes` spills the largest resident part as a sorted run to a scratch
//! file, in the inserting thread (a commit's install, an index build, recovery), before it
//! returns; `maintain` retries after a failed spill. The files are deleted at open (index
//! content is rebuilt), when their map merges or drops them, and at close. A primary-key
//! lookup merges the resident part with every run whose bloom filter may hold the key, then
//! re-checks each candidate at the reader's timestamp as before; a damaged run is
//! `Corruption` naming the file.
//!
//! SECONDARY INDEXES
//! =================
//! Index definitions are catalog entries; their content (see `index`), in vertex tables for
//! label indexes and in the edge tables of the type for edge-type indexes, is rebuilt by
//! `open` after recovery, built by `create_index` under the caller's commit lock, maintained
//! by `install` and pruned by `maintain`. Each table follows the catalog's definitions the
//! same way (`sync_indexes`) whenever they change or the table is created.

use crate::catalog::{
    Catalog, CatalogOp, EdgeTableDef, HIDDEN_TABLE_LABEL, IndexDef, IndexHome, VertexTableDef,
};
use crate::checkpoint::{self, CheckpointWriter, Manifest, Section};
use crate::codec::Encoder;
use crate::index::{KeyRange, MAX_INDEXES, PropertyIndexes};
use crate::indexcache::{INSERT_BATCH_ENTRIES, IndexCache, IndexCacheStats, IndexMap, MapKind};
use crate::lsm::{ColumnRequest, LsmStats, RunContext, Topology};
use crate::origin::Origins;
use crate::record::{CommitRecord, LogRecord, WriteOp};
use crate::rowcache::{CompactTrigger, RowCache, RowCacheStats};
use crate::rows::{self, RowTable};
use crate::run::{ColumnData, ColumnKind, ColumnSlice, MAX_COLUMNS, Run};
use crate::topology::{MAX_EDGE_OFFSET, SEGMENT_VERTICES, TOMBSTONE_BIT};
use crate::vfs::Vfs;
use crate::wal::{self, Wal};

mod bulk;
mod install;
mod recovery;

use install::{PendingAdjacency, index_new_vertex, install_into, install_rows};

use parking_lot::{Mutex, RwLock};
use plexus_types::{
    Config, DataType, Direction, DurabilityMode, EdgeId, EdgeTableId, EdgeTypeId, Error, LabelId,
    MergePolicy, PropKeyId, Result, Timestamp, Value, VertexId, VertexTableId,
};
pub use recovery::RecoveryReport;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Rows per vertex table: offsets are `u32`.
const MAX_VERTEX_ROWS: u32 = u32::MAX;

/// One vertex table: its rows, primary-key index and secondary indexes. Other crates read
/// its rows at a timestamp through [`rows`](Self::rows) and allocate offsets with
/// [`reserve_row`](Self::reserve_row); everything else is storage's own.
pub struct VertexTable {
    pub(crate) id: VertexTableId,
    pub(crate) rows: RowTable,
    pk_key: Option<PropKeyId>,
    /// Primary key → rows that ever held it; readers filter by their snapshot and re-check
    /// the key. Keyed by a digest of the key's lossless encoding ([`Self::pk_digest`]): an
    /// 8-byte key with one row, which the map holds inline. Accounted and spilled like the
    /// secondary indexes (see INDEX CACHE).
    pk_index: Arc<IndexMap>,
    /// Seeds `pk_digest` (random per table and process: the index is rebuilt at open).
    pk_hasher: ahash::RandomState,
    /// Extra labels ever installed in this table (lets label scans skip tables).
    extra_labels: RwLock<Vec<LabelId>>,
    /// Secondary indexes: every indexed property key, whatever the label (see `index`).
    pub(crate) indexes: PropertyIndexes,
}

/// One edge table: its rows (with endpoints) and its out- and in-topology. Other crates read
/// rows through [`rows`](Self::rows) and adjacency through the neighbour and segment scans
/// below, always at a timestamp.
pub struct EdgeTable {
    pub(crate) id: EdgeTableId,
    pub(crate) def: EdgeTableDef,
    /// Edge rows, each with its (source offset, destination offset): see ENDPOINTS in `rows`.
    pub(crate) rows: RowTable,
    pub(crate) out: Topology,
    pub(crate) inc: Topology,
    /// `U`: the newest commit that changed a property of an existing edge of this table
    /// (decides which runs' property columns a reader may use; see `lsm`).
    pub(crate) prop_updated_ts: AtomicU64,
    /// Secondary indexes: the keys of the indexes on this table's edge type (see `index`).
    pub(crate) indexes: PropertyIndexes,
}

/// The row cache and the index cache every table of a database accounts in.
#[derive(Clone)]
struct Caches {
    rows: Arc<RowCache>,
    indexes: Arc<IndexCache>,
}

/// The codec encoding of primary key `value`, which is lossless, so two keys are equal
/// exactly when the values are (`Value`'s equality: `1` and `1.0` differ, floats compare by
/// bits); the primary-key index keys a digest of it (`VertexTable::pk_digest`).
fn pk_bytes(value: &Value) -> Vec<u8> {
    let mut encoder = Encoder::default();
    encoder.value(value);
    encoder.buf
}

impl VertexTable {
    fn new(id: VertexTableId, def: &VertexTableDef, caches: &Caches) -> Self {
        let rows = caches.rows.clone();
        Self {
            id,
            rows: RowTable::with_cache(&def.name, &def.properties, &def.families, rows),
            pk_key: def.primary_key.map(|i| def.properties[i].key),
            pk_index: caches.indexes.new_map(MapKind::Hashed),
            pk_hasher: ahash::RandomState::new(),
            extra_labels: RwLock::new(Vec::new()),
            indexes: PropertyIndexes::new(caches.indexes.clone()),
        }
    }

    pub fn id(&self) -> VertexTableId {
        self.id
    }

    pub fn pk_key(&self) -> Option<PropKeyId> {
        self.pk_key
    }

    /// The table's rows, read at a timestamp.
    pub fn rows(&self) -> &RowTable {
        &self.rows
    }

    /// Allocates the next row offset for a vertex a transaction creates (it becomes visible
    /// when its commit installs); fails once the table holds `MAX_VERTEX_ROWS` rows.
    pub fn reserve_row(&self) -> Result<u32> {
        self.rows.reserve(MAX_VERTEX_ROWS)
    }

    /// Reserves `count` consecutive vertex rows (a bulk load's batch); the first.
    pub fn reserve_rows(&self, count: u32) -> Result<u32> {
        self.rows.reserve_many(count, MAX_VERTEX_ROWS)
    }

    /// Fails unless `v`'s offset was ever allocated in this table (its table).
    pub fn check_offset(&self, v: VertexId) -> Result<()> {
        debug_assert_eq!(v.table, self.id, "{v} is not a vertex of table {}", self.id);
        if v.offset >= self.rows.row_count() {
            return Err(Error::NotFound(format!(
                "vertex {v}: offset out of range ({} rows allocated)",
                self.rows.row_count()
            )));
        }
        Ok(())
    }

    /// [`check_offset`](Self::check_offset) of every vertex of `vs` (all of this table): one
    /// comparison, of the largest offset (the one reported).
    pub fn check_offsets(&self, vs: &[VertexId]) -> Result<()> {
        match vs.iter().max_by_key(|v| v.offset) {
            Some(&largest) => self.check_offset(largest),
            None => Ok(()),
        }
    }

    /// The primary-key index's key for `value`: a 64-bit digest of its lossless encoding.
    fn pk_digest(&self, value: &Value) -> [u8; 8] {
        self.pk_hasher.hash_one(&pk_bytes(value)[..]).to_be_bytes()
    }

    /// Indexes the primary keys of a bulk install's rows `first ..` (`values[i]` held by row
    /// `first + i`; `Null`s hold none): the index grown once, entries added a latch-full at
    /// a time.
    fn index_pk_rows(&self, first: u32, values: &[Value]) {
        self.pk_index.reserve(values.len());
        let mut entries = Vec::with_capacity(INSERT_BATCH_ENTRIES);
        for (n, chunk) in values.chunks(INSERT_BATCH_ENTRIES).enumerate() {
            let chunk_first = first + (n * INSERT_BATCH_ENTRIES) as u32;
            entries.clear();
            entries.extend(
                (chunk.iter().enumerate())
                    .filter(|(_, v)| !matches!(v, Value::Null))
                    .map(|(i, v)| (self.pk_digest(v), chunk_first + i as u32)),
            );
            self.pk_index.insert_many(&entries);
        }
    }

    /// Whether the primary-key index lists no key (no row ever held one).
    pub fn pk_index_is_empty(&self) -> bool {
        self.pk_index.distinct_keys() == 0
    }

    fn index_pk(&self, row: u32, key: PropKeyId, value: &Value) {
        if self.pk_key == Some(key) {
            self.pk_index.insert(&self.pk_digest(value), row);
        }
    }

    fn note_labels(&self, labels: &[LabelId]) {
        if labels.is_empty() {
            return;
        }
        let mut known = self.extra_labels.write();
        for label in labels {
            if !known.contains(label) {
                known.push(*label);
            }
        }
    }

    /// The row holding primary key `key` at `ts`, if any.
    pub fn lookup_pk(&self, key: &Value, ts: Timestamp) -> Result<Option<u32>> {
        let Some(pk_key) = self.pk_key else {
            return Ok(None);
        };
        for row in self.pk_index.get(&self.pk_digest(key))? {
            if self.rows.exists(row, ts)? && self.rows.prop(row, pk_key, ts)?.as_ref() == Some(key)
            {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }

    pub fn may_carry_extra_label(&self, label: LabelId) -> bool {
        self.extra_labels.read().contains(&label)
    }

    /// Makes the index content follow `catalog`'s definitions (see `index`).
    fn sync_indexes(&self, catalog: &Catalog) -> Result<()> {
        let keys = catalog.keys_kept_in(IndexHome::VertexTables);
        self.indexes.keep_exactly(&keys, &self.rows)
    }
}

impl EdgeTable {
    fn new(
        id: EdgeTableId,
        def: &EdgeTableDef,
        name: &str,
        (out, inc): (Topology, Topology),
        caches: &Caches,
    ) -> Self {
        Self {
            id,
            def: def.clone(),
            rows: RowTable::with_cache(name, &def.properties, &[], caches.rows.clone()),
            out,
            inc,
            prop_updated_ts: AtomicU64::new(0),
            indexes: PropertyIndexes::new(caches.indexes.clone()),
        }
    }

    /// Makes the index content follow `catalog`'s definitions (see `index`).
    fn sync_indexes(&self, catalog: &Catalog) -> Result<()> {
        let keys = catalog.keys_kept_in(IndexHome::EdgeTables(self.def.edge_type));
        self.indexes.keep_exactly(&keys, &self.rows)
    }

    /// (source offset, destination offset) of edge `offset`, `None` if it was never created
    /// (a deleted edge keeps its endpoints: see ENDPOINTS in `rows`). Reads the row's chunk,
    /// so an evicted chunk is read back: a page that fails its checks is `Corruption`.
    pub(crate) fn endpoints(&self, offset: u32) -> Result<Option<(u32, u32)>> {
        self.rows.endpoints(offset)
    }

    pub(crate) fn adjacency(&self, outgoing: bool) -> &Topology {
        if outgoing { &self.out } else { &self.inc }
    }

    pub fn id(&self) -> EdgeTableId {
        self.id
    }

    /// The edge rows (properties, existence), read at a timestamp.
    pub fn rows(&self) -> &RowTable {
        &self.rows
    }

    /// Allocates the next edge offset for an edge a transaction creates (it becomes visible
    /// when its commit installs); fails once offsets reach the topology's `MAX_EDGE_OFFSET`.
    pub fn reserve_row(&self) -> Result<u32> {
        self.rows.reserve(MAX_EDGE_OFFSET + 1)
    }

    /// Reserves `count` consecutive edge rows (a bulk load's batch); the first.
    pub fn reserve_rows(&self, count: u32) -> Result<u32> {
        self.rows.reserve_many(count, MAX_EDGE_OFFSET + 1)
    }

    /// Calls `f(neighbour offsets, edge offsets)` with contiguous slices of vertex offset
    /// `v`'s out-neighbours (`outgoing`) or in-neighbours at `ts`.
    pub fn visit_neighbors(
        &self,
        outgoing: bool,
        v: u32,
        ts: Timestamp,
        f: &mut dyn FnMut(&[u32], &[u32]),
    ) {
        self.adjacency(outgoing).visit(v, ts, f);
    }

    /// Number of vertex segments of one direction's adjacency (units of parallel scans; a
    /// segment covers [`segment_vertex_offsets`](crate::segment_vertex_offsets)).
    pub fn segment_count(&self, outgoing: bool) -> usize {
        self.adjacency(outgoing).segment_count()
    }

    /// Calls `f(vertex offset, neighbour offsets, edge offsets, values)` for every vertex of
    /// segment `index` that `want` accepts, at `ts`. With `column = Some(key)`, `values` holds
    /// property `key` of the slice's edges where a CSR run holds them and they are current at
    /// `ts` (PROPERTY COLUMNS in `lsm`); otherwise, and for memtable entries, `None`. The
    /// entries read count towards the segment's read heat (the read-heavy flush policy).
    pub fn scan_segment(
        &self,
        outgoing: bool,
        index: usize,
        ts: Timestamp,
        want: impl Fn(u32) -> bool,
        column: Option<PropKeyId>,
        mut f: impl FnMut(u32, &[u32], &[u32], Option<ColumnSlice<'_>>),
    ) {
        let topology = self.adjacency(outgoing);
        let column = column.map(|key| ColumnRequest {
            key,
            updated_ts: &self.prop_updated_ts,
        });
        let mut entries_read = 0u64;
        topology.scan_segment_with(index, ts, want, column, |v, nbrs, eids, values| {
            entries_read += nbrs.len() as u64;
            f(v, nbrs, eids, values)
        });
        topology.note_read((index * SEGMENT_VERTICES) as u32, entries_read);
    }

    /// Bytes held in memory by one direction's topology memtables (runs are files).
    pub fn memtable_bytes(&self, outgoing: bool) -> usize {
        self.adjacency(outgoing).memtable_bytes()
    }

    /// Installs edge row `offset`, created at `ts` from `src` to `dst`.
    fn install_create(
        &self,
        offset: u32,
        (ts, horizon): (Timestamp, Timestamp),
        (src, dst): (u32, u32),
        props: &[(PropKeyId, Value)],
    ) -> Result<()> {
        assert!(
            offset <= MAX_EDGE_OFFSET,
            "edge offsets were bounded at reservation"
        );
        self.rows
            .install_create_edge(offset, ts, horizon, (src, dst), props)
    }
}

/// [`Storage::neighbors`] over a catalog and the edge tables it names, as a caller keeps them
/// (a transaction's schema cache) instead of loading them from the storage's shared locks on
/// every vertex. Edge tables the catalog names but `edge_tables` lacks are skipped.
pub fn neighbors_in(
    (catalog, edge_tables): (&Catalog, &[Arc<EdgeTable>]),
    v: VertexId,
    dir: Direction,
    ts: Timestamp,
    filter: impl Fn(&EdgeTableDef) -> bool,
    f: &mut dyn FnMut(EdgeId, VertexId),
) {
    let sides: &[bool] = match dir {
        Direction::Out => &[true],
        Direction::In => &[false],
        Direction::Both => &[true, false],
    };
    for &outgoing in sides {
        for &et in catalog.edge_tables_of(v.table, outgoing) {
            let Some(table) = edge_tables.get(et as usize) else {
                continue;
            };
            if !filter(&table.def) {
                continue;
            }
            let other = if outgoing {
                table.def.dst
            } else {
                table.def.src
            };
            let mut entries_read = 0;
            table
                .adjacency(outgoing)
                .visit(v.offset, ts, &mut |nbrs, eids| {
                    entries_read += nbrs.len() as u64;
                    for (&n, &e) in nbrs.iter().zip(eids) {
                        f(EdgeId::new(et, e), VertexId::new(other, n));
                    }
                });
            table
                .adjacency(outgoing)
                .note_read(v.offset, entries_read.max(1));
        }
    }
}

pub struct Storage {
    vfs: Arc<dyn Vfs>,
    catalog: RwLock<Arc<Catalog>>,
    vertex_tables: RwLock<Vec<Arc<VertexTable>>>,
    edge_tables: RwLock<Vec<Arc<EdgeTable>>>,
    /// Bumped after every publication of a catalog (tables are added before theirs): readers
    /// that keep the catalog and the tables between reads check it with a plain load instead
    /// of taking the shared locks and `Arc` counts above on every read (see `schema_version`).
    schema_version: AtomicU64,
    /// Serialises catalog changes so ids are dense and logged in order.
    catalog_writer: Mutex<()>,
    /// The WAL position of the last catalog record appended (see `persist_catalog`).
    catalog_lsn: AtomicU64,
    wal: Wal,
    checkpoint_lock: Mutex<()>,
    recovered_ts: Timestamp,
    config: Config,
    /// Serialises flushes, merges and manifest updates.
    lsm_lock: Mutex<()>,
    /// The manifest as last written (its checkpoint fields are kept across LSM updates).
    manifest: Mutex<Manifest>,
    next_run_seq: AtomicU64,
    lsm_stats: LsmStats,
    /// Every commit up to this timestamp is installed (run property columns are read as of it).
    installed_ts: AtomicU64,
    /// Commits installed since open, bulk ones included (a metric: `StorageStats`).
    installed_commits: AtomicU64,
    /// The newest commit that changed a vertex (created, deleted, or set a property or
    /// labels), raised before its rows are installed; 0 until one is installed after open.
    /// A snapshot taken at or after this ts sees every vertex as any later snapshot does
    /// while it stays unchanged (see `vertices_unchanged_since`).
    vertex_change_ts: AtomicU64,
    /// Bounded memory for the row tables of every table (see `rowcache`).
    row_cache: Arc<RowCache>,
    /// Bounded memory for the primary-key and secondary indexes (see INDEX CACHE).
    index_cache: Arc<IndexCache>,
    /// Eviction state shared by the callers of `evict_rows`.
    eviction: RowEviction,
    /// Replication progress of followers, committed with their writes (see `origin`).
    origins: Arc<Origins>,
}

/// Where the next eviction round starts, and when the last one could not reach its target,
/// the resident bytes below which another round is not worth trying.
#[derive(Default)]
struct RowEviction {
    next_table: AtomicU64,
    retry_above_bytes: AtomicU64,
    /// `Wal::bytes_since_checkpoint` when a commit last looked at the cache.
    wal_bytes_seen: AtomicU64,
}

/// After a commit, written chunks are re-measured (and eviction considered) once the WAL has
/// grown by `row_cache_bytes / ROW_RECHECK_WAL_FRACTION` since the last look, or always while
/// the cache's last estimate exceeds half the budget. Re-measuring after every single-row
/// commit cost ~10 % of insert throughput; rows grow about as fast as the WAL records that
/// write them, so the estimate lags by at most about this share of the budget.
const ROW_RECHECK_WAL_FRACTION: u64 = 64;

/// A read-heavy memtable is flushed only if it holds at least `memtable_budget_bytes /
/// READ_FLUSH_MIN_BUDGET_FRACTION`: a small one costs scans little, and flushing it would make
/// tiny runs (and, in small databases, reorder neighbours for no gain).
const READ_FLUSH_MIN_BUDGET_FRACTION: u64 = 16;

/// How often eviction is asked for: after every commit and checkpoint section (`Patient`: a
/// round that found too little cold data waits for the cache to grow by a headroom before
/// sweeping again, instead of sweeping every chunk after every commit), or now (`Now`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Urgency {
    Patient,
    Now,
}

/// Evicts cold chunks of `tables` (see EVICTION in `rows`) while `cache` holds more than its
/// budget, collecting versions below `horizon` first; returns how many chunks were evicted.
fn evict_tables(
    cache: &RowCache,
    tables: &[&RowTable],
    horizon: Timestamp,
    state: &RowEviction,
    urgency: Urgency,
) -> Result<usize> {
    if !cache.bounded() || tables.is_empty() {
        return Ok(0);
    }
    tables.iter().for_each(|t| t.refresh_sizes());
    let budget = cache.budget_bytes();
    let resident = cache.resident_bytes();
    let waiting = resident <= state.retry_above_bytes.load(Ordering::Acquire);
    if resident <= budget || (urgency == Urgency::Patient && waiting) {
        return Ok(0);
    }
    let target = cache.target_bytes();
    let start = state.next_table.fetch_add(1, Ordering::Relaxed) as usize;
    let mut evicted = 0;
    for i in 0..tables.len() {
        if cache.resident_bytes() <= target {
            break;
        }
        evicted += tables[(start + i) % tables.len()].evict(horizon, target)?;
    }
    // Nothing more is cold now: wait for more growth (or GC) before sweeping again.
    let after = cache.resident_bytes();
    let retry = if after > target {
        after.saturating_add(budget / crate::rowcache::HEADROOM_FRACTION)
    } else {
        0
    };
    state.retry_above_bytes.store(retry, Ordering::Release);
    Ok(evicted)
}

/// Runs listed in the manifest, by (edge table, outgoing), with the topology's flushed ts.
type RecoveredRuns = HashMap<(EdgeTableId, bool), (Vec<(Arc<Run>, u64)>, Timestamp)>;

/// State being rebuilt during recovery, before the WAL exists.
struct Tables {
    catalog: Catalog,
    vertex: Vec<Arc<VertexTable>>,
    edge: Vec<Arc<EdgeTable>>,
    recovered: RecoveredRuns,
    range_vertices: u32,
    cache: Arc<RowCache>,
    index_cache: Arc<IndexCache>,
    origins: Arc<Origins>,
}

impl Tables {
    fn caches(&self) -> Caches {
        Caches {
            rows: self.cache.clone(),
            indexes: self.index_cache.clone(),
        }
    }

    /// Eviction, then a compaction round when due (recovery rewrites chunks it loaded).
    fn evict(&self, horizon: Timestamp, state: &RowEviction) -> Result<usize> {
        let rows: Vec<&RowTable> = (self.vertex.iter().map(|t| &t.rows))
            .chain(self.edge.iter().map(|t| &t.rows))
            .collect();
        let evicted = evict_tables(&self.cache, &rows, horizon, state, Urgency::Patient)?;
        rows::compact_spill(&self.cache, &rows, CompactTrigger::WhenDue)?;
        Ok(evicted)
    }

    fn apply_catalog(&mut self, op: &CatalogOp) {
        self.catalog.apply(op);
        match op {
            CatalogOp::VertexTable { id, def } if *id as usize == self.vertex.len() => {
                let table = VertexTable::new(*id, def, &self.caches());
                self.vertex.push(Arc::new(table));
            }
            CatalogOp::EdgeTable { id, def } if *id as usize == self.edge.len() => {
                let name = edge_table_name(&self.catalog, def);
                let mut topology = |outgoing: bool| {
                    let (runs, flushed) =
                        self.recovered.remove(&(*id, outgoing)).unwrap_or_default();
                    Topology::recovered(*id, outgoing, self.range_vertices, runs, flushed)
                };
                let (out, inc) = (topology(true), topology(false));
                let table = EdgeTable::new(*id, def, &name, (out, inc), &self.caches());
                self.edge.push(Arc::new(table));
            }
            _ => {}
        }
    }
}

fn edge_table_name(catalog: &Catalog, def: &EdgeTableDef) -> String {
    format!(
        "({})-[{}]->({})",
        catalog.table_name(def.src),
        catalog.edge_types.name(def.edge_type).unwrap_or("?"),
        catalog.table_name(def.dst)
    )
}

impl Storage {
    fn caches(&self) -> Caches {
        Caches {
            rows: self.row_cache.clone(),
            indexes: self.index_cache.clone(),
        }
    }

    pub fn recovered_ts(&self) -> Timestamp {
        self.recovered_ts
    }

    /// Why the WAL refuses appends, if a failed install or write poisoned it (see `wal`).
    pub fn wal_poisoned(&self) -> Option<String> {
        self.wal.poisoned()
    }

    /// Poisons the WAL: every later append fails with `reason` (a commit that could not be
    /// installed or logged leaves memory and log out of step; only a reopen recovers).
    pub fn poison_wal(&self, reason: String) {
        self.wal.poison(reason);
    }

    /// Waits until the WAL is durable up to `lsn` (group commit, see `wal`).
    pub fn wait_durable(&self, lsn: u64) -> Result<()> {
        self.wal.wait_durable(lsn)
    }

    /// Replication origin `name`'s position as of the newest installed commit that set it,
    /// with that commit's timestamp (see `origin`). After a reopen: the recovered position.
    pub fn origin(&self, name: &str) -> Option<(u64, Timestamp)> {
        self.origins.latest(name)
    }

    /// The newest commit timestamp the WAL holds durably.
    pub fn durable_ts(&self) -> Timestamp {
        self.wal.durable_ts()
    }

    /// Bytes logged since the last checkpoint (what triggers an automatic one).
    pub fn wal_bytes_since_checkpoint(&self) -> u64 {
        self.wal.bytes_since_checkpoint()
    }

    /// Writes buffered WAL records out, with an fsync when `sync`.
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        self.wal.flush(sync)
    }

    /// The current catalog (an immutable copy; catalog changes publish a new one).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// Changes whenever a new catalog is published. A reader that loaded this, then the
    /// catalog and the tables, may keep using them while it stays unchanged: what they hold
    /// can only have grown since (ids are never reused, tables never removed).
    pub fn schema_version(&self) -> u64 {
        self.schema_version.load(Ordering::Acquire)
    }

    pub fn vertex_table(&self, id: VertexTableId) -> Result<Arc<VertexTable>> {
        self.vertex_tables
            .read()
            .get(id as usize)
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("vertex table {id}")))
    }

    pub fn edge_table(&self, id: EdgeTableId) -> Result<Arc<EdgeTable>> {
        self.edge_tables
            .read()
            .get(id as usize)
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("edge table {id}")))
    }

    pub fn vertex_tables(&self) -> Vec<Arc<VertexTable>> {
        self.vertex_tables.read().clone()
    }

    pub fn edge_tables(&self) -> Vec<Arc<EdgeTable>> {
        self.edge_tables.read().clone()
    }

    /// Applies a catalog change built by `make` from the current catalog (which returns `None`
    /// when nothing needs to change), logs it, and returns `pick` of the new catalog.
    pub fn change_catalog<T>(
        &self,
        lookup: impl Fn(&Catalog) -> Option<T>,
        make: impl FnOnce(&Catalog) -> Result<CatalogOp>,
    ) -> Result<T> {
        if let Some(found) = lookup(&self.catalog.read()) {
            return Ok(found);
        }
        let _writer = self.catalog_writer.lock();
        let current = self.catalog();
        if let Some(found) = lookup(&current) {
            return Ok(found);
        }
        current.check_token_limit()?;
        let op = make(&current)?;
        self.log_catalog_op(&op)?;
        let mut next = (*current).clone();
        next.apply(&op);
        match &op {
            // A new table is empty: syncing marks its index keys ready.
            CatalogOp::VertexTable { id, def } => {
                let table = VertexTable::new(*id, def, &self.caches());
                table.sync_indexes(&next)?;
                self.vertex_tables.write().push(Arc::new(table));
            }
            CatalogOp::EdgeTable { id, def } => {
                let name = edge_table_name(&next, def);
                let range = self.config.lsm_range_vertices;
                let (out, inc) = (
                    Topology::new(*id, true, range),
                    Topology::new(*id, false, range),
                );
                let table = EdgeTable::new(*id, def, &name, (out, inc), &self.caches());
                table.sync_indexes(&next)?;
                self.edge_tables.write().push(Arc::new(table));
            }
            _ => {}
        }
        self.install_catalog(next);
        let catalog = self.catalog();
        Ok(lookup(&catalog).expect("catalog op creates what was looked up"))
    }

    /// The open tables, as an install takes them.
    fn live_tables(&self) -> Tables {
        Tables {
            catalog: Catalog::default(),
            vertex: self.vertex_tables(),
            edge: self.edge_tables(),
            recovered: RecoveredRuns::default(),
            range_vertices: self.config.lsm_range_vertices,
            cache: self.row_cache.clone(),
            index_cache: self.index_cache.clone(),
            origins: self.origins.clone(),
        }
    }

    /// Installs a validated commit at `record.ts`. Only the commit pipeline calls this, one
    /// commit at a time, in timestamp order.
    pub fn install(&self, record: &CommitRecord, horizon: Timestamp) -> Result<()> {
        assert!(
            !record.has_batches(),
            "staged batches are installed only by install_bulk (their adjacency goes to runs)"
        );
        self.note_vertex_changes(record);
        install_into(&self.live_tables(), record, horizon)?;
        self.installed_ts.store(record.ts, Ordering::Release);
        self.installed_commits.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Raises `vertex_change_ts` to `record`'s ts if it changes a vertex; called before its
    /// rows are installed, so no snapshot can see the change before the mark.
    pub(crate) fn note_vertex_changes(&self, record: &CommitRecord) {
        let changes_vertex = |op: &WriteOp| {
            matches!(
                op,
                WriteOp::CreateVertex { .. }
                    | WriteOp::DeleteVertex { .. }
                    | WriteOp::SetVertexProp { .. }
                    | WriteOp::SetLabels { .. }
            )
        };
        if !record.vertex_batches.is_empty() || record.ops.iter().any(changes_vertex) {
            self.vertex_change_ts.fetch_max(record.ts, Ordering::AcqRel);
        }
    }

    /// Whether no commit after `ts` has changed a vertex: then every vertex — its existence,
    /// labels and properties — reads the same at a snapshot taken now as at `ts` (a reader's
    /// answers about vertices found at `ts` still hold; `Transaction::adopt_carried_reads`).
    pub fn vertices_unchanged_since(&self, ts: Timestamp) -> bool {
        self.vertex_change_ts.load(Ordering::Acquire) <= ts
    }

    pub fn log_commit(&self, record: &CommitRecord) -> Result<u64> {
        self.wal.append(&LogRecord::Commit(record.clone()))
    }

    pub(crate) fn installed_commits(&self) -> u64 {
        self.installed_commits.load(Ordering::Relaxed)
    }

    pub(crate) fn wal_stats(&self) -> crate::wal::WalStats {
        self.wal.stats()
    }

    // ---- secondary indexes (see `index`) ---------------------------------------------------

    /// Builds index `def` in the tables that keep it (every vertex table for a label, the edge
    /// tables of the type for an edge type), then logs and publishes its definition. Returns
    /// the existing index (and changes nothing) if one has the same name or indexes the same
    /// label or type and key. The caller holds the commit lock, so no commit installs between
    /// tracking the key and building it; the build is one pass over those tables' rows (see
    /// `index`).
    pub fn create_index(&self, def: IndexDef) -> Result<Option<IndexDef>> {
        let _writer = self.catalog_writer.lock();
        let current = self.catalog();
        let existing = current
            .index(&def.name)
            .or_else(|| current.index_on(def.target, def.key));
        if let Some(existing) = existing {
            return Ok(Some(existing.clone()));
        }
        if current.indexes.len() >= MAX_INDEXES {
            return Err(Error::LimitExceeded(format!(
                "the catalog holds {MAX_INDEXES} indexes; no more are allowed"
            )));
        }
        let op = CatalogOp::CreateIndex(def);
        let mut next = (*current).clone();
        next.apply(&op);
        sync_indexes(&next, &self.vertex_tables(), &self.edge_tables())?;
        let lsn = self.publish_catalog_op(&current, op)?;
        self.persist_ddl(lsn)?;
        Ok(None)
    }

    /// Logs and publishes the removal of index `name`, then frees its content in each table
    /// unless another index there uses the same property key. Returns `false` if there is no
    /// such index.
    pub fn drop_index(&self, name: &str) -> Result<bool> {
        let _writer = self.catalog_writer.lock();
        let current = self.catalog();
        if current.index(name).is_none() {
            return Ok(false);
        }
        let name = name.to_string();
        let lsn = self.publish_catalog_op(&current, CatalogOp::DropIndex { name })?;
        sync_indexes(&self.catalog(), &self.vertex_tables(), &self.edge_tables())?;
        self.persist_ddl(lsn)?;
        Ok(true)
    }

    /// Makes an explicit schema statement (index or table DDL), which no commit follows to carry its
    /// catalog record to disk, as durable as a commit is in this durability mode: under
    /// `Fsync` it returns once the record is synced (a crash right after a `CREATE INDEX`
    /// used to lose it); under `Periodic` and `None` the background flusher writes it within
    /// `sync_interval_ms`, as it does commits. Catalog records a transaction's writes need
    /// (new labels, keys, tables) are carried by that transaction's commit record.
    fn persist_ddl(&self, lsn: u64) -> Result<()> {
        match self.config.durability {
            DurabilityMode::Fsync => self.wal.wait_durable(lsn),
            DurabilityMode::Periodic | DurabilityMode::None => Ok(()),
        }
    }

    /// Makes every catalog change logged so far durable as `persist_ddl` does: explicit schema
    /// statements (declared vertex and edge tables) call it before they return, so a crash
    /// right after one no longer loses the table.
    pub fn persist_catalog(&self) -> Result<()> {
        self.persist_ddl(self.catalog_lsn.load(Ordering::Acquire))
    }

    /// Appends catalog record `op` to the WAL and remembers its position; returns it. Call with
    /// `catalog_writer` held.
    fn log_catalog_op(&self, op: &CatalogOp) -> Result<u64> {
        let lsn = self.wal.append(&LogRecord::Catalog(op.clone()))?;
        self.catalog_lsn.fetch_max(lsn, Ordering::AcqRel);
        Ok(lsn)
    }

    /// Makes `next` the current catalog and moves the schema version after it (see
    /// `schema_version`: readers load the version before the catalog).
    fn install_catalog(&self, next: Catalog) {
        *self.catalog.write() = Arc::new(next);
        self.schema_version.fetch_add(1, Ordering::AcqRel);
    }

    /// Logs `op` and publishes `current` with it applied; returns the record's LSN. Call with
    /// `catalog_writer` held.
    fn publish_catalog_op(&self, current: &Catalog, op: CatalogOp) -> Result<u64> {
        let lsn = self.log_catalog_op(&op)?;
        let mut next = current.clone();
        next.apply(&op);
        self.install_catalog(next);
        Ok(lsn)
    }

    /// The vertex tables that may hold vertices labelled `label`: the label's own table and
    /// those that installed it as an extra label (the tables a label scan visits).
    pub fn label_carriers(&self, label: LabelId) -> Vec<VertexTableId> {
        self.carrier_tables(label).iter().map(|t| t.id).collect()
    }

    fn carrier_tables(&self, label: LabelId) -> Vec<Arc<VertexTable>> {
        let catalog = self.catalog();
        let mut tables = self.vertex_tables();
        tables.retain(|table| {
            let own = catalog
                .vertex_tables
                .get(table.id as usize)
                .is_some_and(|def| def.label == label);
            own || table.may_carry_extra_label(label)
        });
        tables
    }

    /// The vertices (of the tables that may carry `label`) that may hold a value in `range`
    /// for `key` in a kept version — a superset, possibly with repeats, that the caller
    /// re-checks at its snapshot — or `Ok(None)` when some such table has no ready index on
    /// `key`. A spilled index run that fails its checks is `Corruption` (see INDEX CACHE).
    pub fn index_candidates(
        &self,
        label: LabelId,
        key: PropKeyId,
        range: &KeyRange,
    ) -> Result<Option<Vec<VertexId>>> {
        let tables = self.carrier_tables(label);
        let carriers = tables.iter().map(|t| (t.id, &t.indexes));
        let Some(found) = candidates_in(carriers, key, range)? else {
            return Ok(None);
        };
        let vertices = found.map(|(table, row)| VertexId::new(table, row));
        Ok(Some(vertices.collect()))
    }

    /// The edges of type `edge_type` that may hold a value in `range` for `key` in a kept
    /// version (as [`index_candidates`](Self::index_candidates)), or `Ok(None)` when some
    /// edge table of the type has no ready index on `key`.
    pub fn edge_index_candidates(
        &self,
        edge_type: EdgeTypeId,
        key: PropKeyId,
        range: &KeyRange,
    ) -> Result<Option<Vec<EdgeId>>> {
        let tables = self.edge_tables();
        let of_type = tables.iter().filter(|t| t.def.edge_type == edge_type);
        let Some(found) = candidates_in(of_type.map(|t| (t.id, &t.indexes)), key, range)? else {
            return Ok(None);
        };
        Ok(Some(
            found.map(|(table, row)| EdgeId::new(table, row)).collect(),
        ))
    }

    /// The ids of the edges of type `edge_type` that exist at `ts` (an edge-type scan).
    pub fn scan_edge_type(&self, edge_type: EdgeTypeId, ts: Timestamp) -> Result<Vec<EdgeId>> {
        let mut found = Vec::new();
        self.visit_edge_type(edge_type, ts, |e| found.push(e))?;
        Ok(found)
    }

    /// Calls `visit` with every edge of type `edge_type` existing at `ts`, table by table
    /// (the rows of the type's edge tables; the adjacency is not read).
    fn visit_edge_type(
        &self,
        edge_type: EdgeTypeId,
        ts: Timestamp,
        mut visit: impl FnMut(EdgeId),
    ) -> Result<()> {
        for table in self.edge_tables() {
            if table.def.edge_type == edge_type {
                table
                    .rows
                    .scan(ts, |row| visit(EdgeId::new(table.id, row)))?;
            }
        }
        Ok(())
    }

    /// How many edges of type `edge_type` exist at `ts`: [`scan_edge_type`](Self::scan_edge_type)'s
    /// length, counted over the edge rows without listing their ids (the adjacency is not
    /// read).
    pub fn count_edge_type(&self, edge_type: EdgeTypeId, ts: Timestamp) -> Result<u64> {
        let mut count = 0u64;
        self.visit_edge_type(edge_type, ts, |_| count += 1)?;
        Ok(count)
    }

    // ---- reads at a timestamp -------------------------------------------------------------

    /// Checks that `v` names a row that has been allocated (it may not exist at every ts).
    pub fn check_vertex_id(&self, v: VertexId) -> Result<Arc<VertexTable>> {
        let table = self
            .vertex_table(v.table)
            .map_err(|_| Error::NotFound(format!("vertex {v}: no such vertex table")))?;
        table.check_offset(v)?;
        Ok(table)
    }

    pub fn vertex_exists(&self, v: VertexId, ts: Timestamp) -> Result<bool> {
        match self.vertex_table(v.table) {
            Ok(t) => t.rows.exists(v.offset, ts),
            Err(_) => Ok(false),
        }
    }

    #[cfg(test)]
    pub(crate) fn edge_exists(&self, e: EdgeId, ts: Timestamp) -> Result<bool> {
        match self.edge_table(e.table) {
            Ok(t) => t.rows.exists(e.offset, ts),
            Err(_) => Ok(false),
        }
    }

    /// The endpoints of an edge (fixed at creation): `None` if it was never created. Reads the
    /// edge's row chunk (see [`EdgeTable::endpoints`]).
    pub fn edge_endpoints(&self, e: EdgeId) -> Result<Option<(VertexId, VertexId)>> {
        let Ok(table) = self.edge_table(e.table) else {
            return Ok(None);
        };
        let ends = table.endpoints(e.offset)?;
        Ok(ends.map(|(src, dst)| {
            (
                VertexId::new(table.def.src, src),
                VertexId::new(table.def.dst, dst),
            )
        }))
    }

    /// Calls `f(edge, neighbour)` for each edge of `v` visible at `ts`, restricted to edge
    /// tables accepted by `filter`, in direction `dir` (`Both` visits out-edges, then in-edges).
    pub fn neighbors(
        &self,
        v: VertexId,
        dir: Direction,
        ts: Timestamp,
        filter: impl Fn(&EdgeTableDef) -> bool,
        f: &mut dyn FnMut(EdgeId, VertexId),
    ) {
        // The table list is read under its latch, not cloned per call; `f` must not create
        // edge tables (it would wait for the latch).
        let catalog = self.catalog();
        neighbors_in((&catalog, &self.edge_tables.read()), v, dir, ts, filter, f);
    }

    /// Calls `f` with every vertex carrying `label` at `ts`.
    pub fn scan_label(
        &self,
        label: LabelId,
        ts: Timestamp,
        f: &mut dyn FnMut(VertexId),
    ) -> Result<()> {
        self.scan_label_runs(label, ts, &mut |table, rows| {
            rows.for_each(|row| f(VertexId::new(table, row)))
        })
    }

    /// [`scan_label`](Self::scan_label) by runs: `f` gets the vertices carrying `label` at
    /// `ts` as ranges of consecutive rows of one table, tables in id order, rows in order —
    /// whole runs of existing rows where the table's own label is the one scanned (no row's
    /// labels need reading), single rows where extra labels decide.
    pub fn scan_label_runs(
        &self,
        label: LabelId,
        ts: Timestamp,
        f: &mut dyn FnMut(VertexTableId, Range<u32>),
    ) -> Result<()> {
        let catalog = self.catalog();
        for table in self.vertex_tables() {
            let own = catalog.vertex_tables[table.id as usize].label == label;
            let mut result = Ok(());
            let mut keep_if =
                |row: u32, keep: &dyn Fn(&[LabelId]) -> bool| match table.rows.labels(row, ts) {
                    Ok(labels) if keep(&labels) => f(table.id, row..row + 1),
                    Ok(_) => {}
                    Err(e) if result.is_ok() => result = Err(e),
                    Err(_) => {}
                };
            if own && !table.may_carry_extra_label(HIDDEN_TABLE_LABEL) {
                table.rows.scan_ranges(ts, |rows| f(table.id, rows))?;
            } else if own {
                table.rows.scan(ts, |row| {
                    keep_if(row, &|labels| !labels.contains(&HIDDEN_TABLE_LABEL))
                })?;
            } else if table.may_carry_extra_label(label) {
                table
                    .rows
                    .scan(ts, |row| keep_if(row, &|labels| labels.contains(&label)))?;
            }
            result?;
        }
        Ok(())
    }

    // ---- checkpoint ------------------------------------------------------------------------

    /// Step 1 of a checkpoint; call with the commit lock held. Returns the WAL segment that
    /// recovery will start from.
    pub fn rotate_wal(&self) -> Result<u64> {
        self.wal.rotate()
    }

    /// Steps 2–4 of a checkpoint of the state at `ts` (see CHECKPOINT). The caller keeps
    /// `ts` pinned (no GC past it) until this returns.
    pub fn write_checkpoint(&self, ts: Timestamp, wal_start: u64) -> Result<()> {
        let _one_at_a_time = self.checkpoint_lock.lock();
        // The caller froze every memtable at `ts`: flushing them puts the whole topology up to
        // `ts` into runs, so the checkpoint file holds rows only.
        let result = self
            .flush_and_merge(false)
            .and_then(|_| self.checkpoint_and_publish(ts, wal_start));
        if let Err(e) = &result {
            // The manifest may or may not have been replaced: stop writing until a reopen
            // establishes what is on disk.
            self.wal.poison(format!("checkpoint failed: {e}"));
        }
        result?;
        self.remove_before_checkpoint(ts, wal_start)
    }

    /// Steps 2 and 3 of a checkpoint: the file, then the manifest naming it. Call with
    /// `checkpoint_lock` held, every topology's commits up to `ts` in runs.
    fn checkpoint_and_publish(&self, ts: Timestamp, wal_start: u64) -> Result<()> {
        let name = checkpoint::checkpoint_name(ts);
        self.write_checkpoint_file(&name, ts)?;
        self.publish_checkpoint(name, ts, wal_start)
    }

    /// The manifest switch to checkpoint `name` (written, synced) at `ts`.
    fn publish_checkpoint(&self, name: String, ts: Timestamp, wal_start: u64) -> Result<()> {
        self.publish_manifest(|m| {
            m.checkpoint = Some(name.clone());
            m.checkpoint_ts = ts;
            m.wal_start = wal_start;
        })
    }

    /// Step 4 of a checkpoint: deletes the WAL segments and checkpoints it replaced.
    fn remove_before_checkpoint(&self, ts: Timestamp, wal_start: u64) -> Result<()> {
        let name = checkpoint::checkpoint_name(ts);
        for file in self.vfs.list()? {
            let old_segment = wal::parse_segment_name(&file).is_some_and(|id| id < wal_start);
            let old_checkpoint = file.ends_with(".ckpt") && file != name;
            if old_segment || old_checkpoint {
                self.vfs.remove(&file)?;
            }
        }
        self.vfs.sync_dir()
    }

    fn write_checkpoint_file(&self, name: &str, ts: Timestamp) -> Result<()> {
        let mut writer = CheckpointWriter::create(self.vfs.as_ref(), name)?;
        writer.write(&Section::Catalog(self.catalog().to_ops()))?;
        writer.write(&Section::Origins(self.origins.as_of(ts)))?;
        for t in self.vertex_tables() {
            self.write_row_sections(
                &mut writer,
                (&t.rows, ts),
                |row| {
                    t.rows
                        .image(row, ts)
                        .map(|image| (row, image.labels, image.props))
                },
                |row_count, rows| Section::Vertices {
                    table: t.id,
                    row_count,
                    rows,
                },
            )?;
        }
        for t in self.edge_tables() {
            self.write_row_sections(
                &mut writer,
                (&t.rows, ts),
                |row| {
                    let (src, dst) = t.endpoints(row)?.expect("an existing edge has endpoints");
                    Ok((row, src, dst, t.rows.props(row, ts)?))
                },
                |row_count, rows| Section::Edges {
                    table: t.id,
                    row_count,
                    rows,
                },
            )?;
        }
        writer.finish(ts)?;
        self.vfs.sync_dir()
    }

    /// Writes the rows of `rows` existing at `ts`, each read by `read`, in sections made by
    /// `section` (from the table's row count and at most `ROWS_PER_SECTION` rows), evicting
    /// between sections: a checkpoint reads every row back (see `evict_rows_for_checkpoint`).
    fn write_row_sections<R>(
        &self,
        writer: &mut CheckpointWriter,
        (rows, ts): (&RowTable, Timestamp),
        read: impl Fn(u32) -> Result<R>,
        section: impl Fn(u32, Vec<R>) -> Section,
    ) -> Result<()> {
        let row_count = rows.row_count();
        let mut batch = Vec::new();
        let mut result = Ok(());
        rows.scan(ts, |row| {
            if result.is_err() {
                return;
            }
            result = read(row).and_then(|read| {
                batch.push(read);
                if batch.len() < checkpoint::ROWS_PER_SECTION {
                    return Ok(());
                }
                writer.write(&section(row_count, std::mem::take(&mut batch)))?;
                self.evict_rows_for_checkpoint();
                Ok(())
            });
        })?;
        result?;
        writer.write(&section(row_count, batch))
    }

    /// Evicts cold row chunks while the row cache holds more than its budget (see
    /// `rowcache`), collecting versions below `horizon` on the way, then runs a round of
    /// spill-file compaction if dead pages dominate; returns how many chunks were evicted. A
    /// failed spill write is returned (and counted); the chunk it was for stays resident, so
    /// no data is lost. A page that fails its checks during a compaction is returned too.
    pub fn evict_rows(&self, horizon: Timestamp) -> Result<usize> {
        let evicted = self.evict_rows_with(horizon, Urgency::Now)?;
        self.compact_spill(CompactTrigger::WhenDue)?;
        Ok(evicted)
    }

    /// One round of spill-file compaction (COMPACTION in `rowcache`), starting a compaction
    /// if `trigger` asks for one; returns the dead bytes reclaimed by deleting files.
    fn compact_spill(&self, trigger: CompactTrigger) -> Result<u64> {
        self.with_row_tables(|rows| rows::compact_spill(&self.row_cache, rows, trigger))
    }

    /// A round of spill-file compaction now, whenever the spill files hold dead pages,
    /// whatever the thresholds background maintenance waits for; returns the dead bytes
    /// reclaimed.
    pub fn compact_spill_now(&self) -> Result<u64> {
        self.compact_spill(CompactTrigger::Now)
    }

    /// `f` with the row tables of every vertex and edge table.
    fn with_row_tables<T>(&self, f: impl FnOnce(&[&RowTable]) -> T) -> T {
        let (vertex, edge) = (self.vertex_tables(), self.edge_tables());
        let rows: Vec<&RowTable> = (vertex.iter().map(|t| &t.rows))
            .chain(edge.iter().map(|t| &t.rows))
            .collect();
        f(&rows)
    }

    /// [`evict_rows`](Self::evict_rows) after a commit: a round is skipped while the last
    /// one found too little cold data and the cache has not grown by a headroom since.
    pub fn evict_rows_after_commit(&self, horizon: Timestamp) -> Result<usize> {
        if !self.row_cache_due() {
            return Ok(0);
        }
        self.evict_rows_with(horizon, Urgency::Patient)
    }

    /// Whether a commit should look at the row cache now (see `ROW_RECHECK_WAL_FRACTION`).
    fn row_cache_due(&self) -> bool {
        let budget = self.row_cache.budget_bytes();
        if !self.row_cache.bounded() {
            return false;
        }
        let wal = self.wal.bytes_since_checkpoint();
        let seen = self.eviction.wal_bytes_seen.load(Ordering::Acquire);
        // `wal < seen`: a checkpoint restarted the count.
        let grown = wal < seen || wal - seen >= budget / ROW_RECHECK_WAL_FRACTION;
        let due = grown || self.row_cache.resident_bytes() > budget / 2;
        if due {
            self.eviction.wal_bytes_seen.store(wal, Ordering::Release);
        }
        due
    }

    fn evict_rows_with(&self, horizon: Timestamp, urgency: Urgency) -> Result<usize> {
        self.with_row_tables(|rows| {
            evict_tables(&self.row_cache, rows, horizon, &self.eviction, urgency)
        })
    }

    /// A checkpoint reads every row back: it evicts again as it goes so the chunks it loaded
    /// (clean, so eviction writes nothing) do not stay. No GC (`horizon` 0): the checkpoint's
    /// caller pins the state it writes. A failed spill write does not fail the checkpoint: it
    /// is counted in the cache statistics and the chunks stay resident.
    fn evict_rows_for_checkpoint(&self) {
        if let Err(e) = self.evict_rows_with(0, Urgency::Patient) {
            debug_assert!(self.row_cache.stats().spill_write_errors > 0, "{e}");
        }
    }

    /// The row cache's counters, with the size estimates of recently written chunks
    /// refreshed first.
    pub fn row_cache_stats(&self) -> RowCacheStats {
        for table in self.vertex_tables() {
            table.rows.refresh_sizes();
        }
        for table in self.edge_tables() {
            table.rows.refresh_sizes();
        }
        self.row_cache.stats()
    }

    /// The index cache's counters (see INDEX CACHE).
    pub(crate) fn index_cache_stats(&self) -> IndexCacheStats {
        self.index_cache.stats()
    }

    /// Spills the resident part of every index map now, whatever the budget (tests, tools;
    /// see INDEX CACHE). Returns how many runs were written; a failed write is returned and
    /// leaves its entries resident.
    pub fn spill_indexes(&self) -> Result<usize> {
        self.index_cache.spill_all()
    }

    /// Drops versions below `horizon` and compacts the memtables (run after checkpoints).
    pub fn maintain(&self, horizon: Timestamp) {
        for table in self.vertex_tables() {
            table.rows.gc(horizon);
            table.indexes.prune(&table.rows);
        }
        for table in self.edge_tables() {
            table.rows.gc(horizon);
            table.indexes.prune(&table.rows);
            table.out.compact_memtables(horizon);
            table.inc.compact_memtables(horizon);
        }
        // After a failed spill, inserts wait for growth before trying again; retry here too.
        self.index_cache.relieve();
    }

    // ---- the disk tier (see `lsm`) ---------------------------------------------------------

    fn topologies(&self) -> Vec<(Arc<EdgeTable>, bool)> {
        self.edge_tables()
            .into_iter()
            .flat_map(|t| [(t.clone(), true), (t, false)])
            .collect()
    }

    /// Bytes in topology memtables (active and frozen), over all edge tables.
    pub fn memtable_bytes(&self) -> usize {
        self.topologies()
            .iter()
            .map(|(t, out)| t.adjacency(*out).memtable_bytes())
            .sum()
    }

    /// Bytes in active memtables.
    pub fn active_bytes(&self) -> usize {
        self.topologies()
            .iter()
            .map(|(t, out)| t.adjacency(*out).active_bytes())
            .sum()
    }

    /// Bytes in frozen memtables waiting to be flushed.
    pub fn frozen_bytes(&self) -> usize {
        self.topologies()
            .iter()
            .map(|(t, out)| t.adjacency(*out).frozen_bytes())
            .sum()
    }

    /// Bytes of current CSR runs.
    pub(crate) fn run_bytes(&self) -> usize {
        self.topologies()
            .iter()
            .map(|(t, out)| t.adjacency(*out).run_bytes())
            .sum()
    }

    pub(crate) fn lsm_stats(&self) -> &LsmStats {
        &self.lsm_stats
    }

    /// Freezes every active memtable. Call with the commit lock held.
    pub fn freeze_all(&self) {
        for (table, outgoing) in self.topologies() {
            table.adjacency(outgoing).freeze();
        }
    }

    /// Under the elastic policy, the topologies whose active memtable scans have made
    /// read-heavy (see `lsm`, MERGE POLICIES: read-driven flush).
    fn read_heavy_topologies(&self) -> Vec<(Arc<EdgeTable>, bool)> {
        if self.config.merge_policy != MergePolicy::Elastic {
            return Vec::new();
        }
        let min_bytes = self.config.memtable_budget_bytes / READ_FLUSH_MIN_BUDGET_FRACTION;
        let min_bytes = usize::try_from(min_bytes).unwrap_or(usize::MAX);
        let mut topologies = self.topologies();
        topologies
            .retain(|(table, outgoing)| table.adjacency(*outgoing).read_heavy_memtable(min_bytes));
        topologies
    }

    pub fn has_read_heavy_memtable(&self) -> bool {
        !self.read_heavy_topologies().is_empty()
    }

    /// Freezes the read-heavy active memtables for the next maintenance round to flush. Call
    /// with the commit lock held, like every freeze (no commit may straddle a freeze).
    pub fn freeze_read_heavy_memtables(&self) {
        for (table, outgoing) in self.read_heavy_topologies() {
            table.adjacency(outgoing).freeze();
        }
    }

    /// Flushes every frozen memtable to level-1 runs and, when `merge`, runs the merges the
    /// policy asks for; then publishes the manifest. Returns once the runs are durable and
    /// listed, with whether anything was flushed or merged.
    fn flush_and_merge(&self, merge: bool) -> Result<bool> {
        let _lsm = self.lsm_lock.lock();
        let mut changed = false;
        for (table, outgoing) in self.topologies() {
            let topology = table.adjacency(outgoing);
            while topology.flush_one(self.vfs.as_ref(), self, &self.config, &self.lsm_stats)? {
                changed = true;
            }
            if merge {
                changed |=
                    topology.merge(self.vfs.as_ref(), self, &self.config, &self.lsm_stats)?;
            }
        }
        if changed {
            self.publish_manifest(|_| {})?;
        }
        Ok(changed)
    }

    /// One round of disk-tier maintenance: flush frozen memtables, merge, publish the manifest,
    /// then drop components no reader at or after `horizon` needs and delete their files.
    /// Returns whether the round flushed or merged anything.
    pub fn maintain_lsm(&self, horizon: Timestamp) -> Result<bool> {
        let result = self.flush_and_merge(true);
        if let Err(e) = &result {
            self.wal.poison(format!("flush or merge failed: {e}"));
        }
        let changed = result?;
        let _lsm = self.lsm_lock.lock();
        for (table, outgoing) in self.topologies() {
            for file in table.adjacency(outgoing).retire(horizon) {
                // Best effort: an undeleted file is unreferenced and removed at the next open.
                let _ = self.vfs.remove(&file);
            }
        }
        Ok(changed)
    }

    /// Rewrites the manifest: `update` sets the checkpoint fields; runs and flushed
    /// timestamps come from the topologies. Call with `lsm_lock` (or the checkpoint) held.
    fn publish_manifest(&self, update: impl FnOnce(&mut Manifest)) -> Result<()> {
        let mut manifest = self.manifest.lock();
        let mut next = manifest.clone();
        update(&mut next);
        next.next_run_seq = self.next_run_seq.load(std::sync::atomic::Ordering::Acquire);
        next.runs.clear();
        next.flushed.clear();
        next.prop_updated = self
            .edge_tables()
            .iter()
            .map(|t| (t.id, t.prop_updated_ts.load(Ordering::Acquire)))
            .collect();
        for (table, outgoing) in self.topologies() {
            let topology = table.adjacency(outgoing);
            next.runs.extend(topology.current_runs());
            next.flushed
                .push((table.id, outgoing, topology.flushed_ts()));
        }
        next.write(self.vfs.as_ref())?;
        *manifest = next;
        Ok(())
    }

    /// Edges `src -[edge type]-> dst` visible at `ts` (of one type, or all); runs that cannot
    /// hold the pair are skipped by their source bitmaps and bloom filters.
    pub fn edges_between(
        &self,
        src: VertexId,
        dst: VertexId,
        ts: Timestamp,
        filter: impl Fn(&EdgeTableDef) -> bool,
    ) -> Vec<EdgeId> {
        let catalog = self.catalog();
        let mut found = Vec::new();
        for &et in catalog.edge_tables_of(src.table, true) {
            let Ok(table) = self.edge_table(et) else {
                continue;
            };
            if table.def.dst == dst.table && filter(&table.def) {
                let eids = table.out.edges_between(src.offset, dst.offset, ts);
                found.extend(eids.into_iter().map(|e| EdgeId::new(et, e)));
            }
        }
        found
    }
}

impl RunContext for Storage {
    fn next_run(&self) -> (u64, String) {
        let seq = self.next_run_seq.fetch_add(1, Ordering::AcqRel);
        (seq, format!("run-{seq:016}.run"))
    }

    fn capture_ts(&self) -> Timestamp {
        self.installed_ts.load(Ordering::Acquire)
    }

    fn prop_updated_ts(&self, table: u32) -> Timestamp {
        self.edge_table(table).map_or(Timestamp::MAX, |t| {
            t.prop_updated_ts.load(Ordering::Acquire)
        })
    }

    /// One column per declared integer or float property (the first `MAX_COLUMNS`).
    fn capture(&self, table: u32, eids: &[u32], ts: Timestamp) -> Result<Vec<ColumnData>> {
        let Ok(table) = self.edge_table(table) else {
            return Ok(Vec::new());
        };
        let live: Vec<u32> = eids.iter().map(|e| e & !TOMBSTONE_BIT).collect();
        column_properties(&table.def)
            .map(|(key, kind)| {
                let mut column = ColumnData::new(key, kind, eids.len());
                table.rows.prop_many(&live, key, ts, &mut |i, value| {
                    let dead = eids[i] & TOMBSTONE_BIT != 0;
                    column.push(value.as_ref().filter(|_| !dead));
                })?;
                Ok(column)
            })
            .collect()
    }
}

/// The properties of an edge table that runs carry as columns: declared integers and floats.
fn column_properties(def: &EdgeTableDef) -> impl Iterator<Item = (PropKeyId, ColumnKind)> + '_ {
    def.properties
        .iter()
        .filter_map(|p| match p.data_type {
            DataType::Int64 => Some((p.key, ColumnKind::Int64)),
            DataType::Float64 => Some((p.key, ColumnKind::Float64)),
            _ => None,
        })
        .take(MAX_COLUMNS)
}

/// Makes every table's index content follow `catalog`'s definitions (see `index`).
fn sync_indexes(
    catalog: &Catalog,
    vertex: &[Arc<VertexTable>],
    edge: &[Arc<EdgeTable>],
) -> Result<()> {
    for table in vertex {
        table.sync_indexes(catalog)?;
    }
    for table in edge {
        table.sync_indexes(catalog)?;
    }
    Ok(())
}

/// The candidates (table id, row) of `range` for `key` in each of `tables` (id, indexes), or
/// `Ok(None)` when one of them has no ready index on `key`.
fn candidates_in<'a>(
    tables: impl IntoIterator<Item = (u32, &'a PropertyIndexes)>,
    key: PropKeyId,
    range: &KeyRange,
) -> Result<Option<impl Iterator<Item = (u32, u32)>>> {
    let mut found = Vec::new();
    for (table, indexes) in tables {
        let Some(rows) = indexes.candidates(key, range)? else {
            return Ok(None);
        };
        found.extend(rows.into_iter().map(|row| (table, row)));
    }
    Ok(Some(found.into_iter()))
}

#[cfg(test)]
mod tests;
