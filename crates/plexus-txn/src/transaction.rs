//! Transactions: a snapshot to read from, a private write set, and (under SERIALIZABLE) a read
//! set — see `validation` for what conflicts.
//!
//! READS
//! =====
//! A transaction reads the committed state at its start timestamp overlaid with its own writes
//! (read-your-writes). Reads of names that do not exist yet (a label nobody used) simply find
//! nothing; writes register new names in the catalog.
//!
//! WRITES
//! ======
//! Every write is checked when it is made — the vertex or edge must exist in the transaction's
//! view, values must match declared types, labels must be allowed by a declared table, primary
//! keys must be present and unique — so errors surface at the call that caused them, and
//! `commit` fails only for conflicts (retryable) or I/O trouble.
//!
//! READ FORKS
//! ==========
//! [`Transaction::fork_reader`] makes a read-only copy for a parallel statement's worker
//! threads: same snapshot (start timestamp, registered with the oracle for as long as the fork
//! lives, so it never reads below the GC horizon even if its parent is dropped first), a copy
//! of the write set (so it reads the parent's own writes), and an empty read set. A fork
//! cannot write or commit (`Error::InvalidArgument`; [`Transaction::is_fork`]); the statement
//! moves what it read into the parent with [`Transaction::take_reads`] and
//! [`Transaction::absorb_reads`] before it hands on rows derived from those reads, so under
//! SERIALIZABLE the parent validates everything its forks read, exactly as if it had read it
//! itself. The write set is copied, not shared: a statement only forks when it cannot write,
//! so parent and forks hold equal write sets for the fork's whole life.
//!
//! LIFETIME
//! ========
//! `commit` and `rollback` consume the transaction; dropping an uncommitted one rolls it back.
//! Reserved ids of a rolled-back transaction stay unused (holes).
//!
//! FILES
//! =====
//! This file holds `Transaction` itself: beginning, forks, commit and rollback, protection
//! checks, and the helpers its reads and writes share. `vertices` holds the vertex writes and
//! reads (properties, labels); `scans` label scans, key lookups and seeks; `edges` the edge
//! reads and writes and neighbour reads; `staging` the edges staged as columns for a bulk load.

mod edges;
mod scans;
mod staging;
pub use staging::StagedVertices;
mod vertices;

use crate::external::{self, ExternalGraph};
use crate::manager::{CommitRequest, TxnManager};
use crate::oracle::ReaderKind;
use crate::schema::{self, TokenKind};
use crate::validation::{Entity, ReadItem};
use crate::write_set::{NewEdge, NewVertex, PropMap, VertexBits, WriteSet};
use plexus_storage::{
    Catalog, CatalogOp, EdgeTable, EdgeTableDef, HIDDEN_TABLE_LABEL, IndexKey, KeyRange, RowTable,
    TypedProps, VertexTable, VertexTableDef, Zone,
};
use plexus_types::{
    Direction, EdgeId, EdgeTableId, EdgeTypeId, Error, IsolationLevel, LabelId, PropKeyId, Result,
    Timestamp, Value, VertexId, VertexRuns, VertexTableId,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The implicit table of vertices created without labels.
pub const UNLABELED_TABLE: &str = "";

pub struct Transaction {
    manager: Arc<TxnManager>,
    start_ts: Timestamp,
    isolation: IsolationLevel,
    writes: WriteSet,
    reads: HashSet<ReadItem>,
    active: bool,
    /// A read-only fork (see READ FORKS): its oracle registration is a snapshot's, and every
    /// write and `commit` fail.
    fork: bool,
    /// The edge table of the last `create_edge` (source table, type, destination table):
    /// bulk inserts resolve it once instead of once per edge.
    last_edge_table: Option<(VertexTableId, String, VertexTableId, Arc<EdgeTable>)>,
    /// The catalog and tables the vertex and adjacency read paths use (see [`SchemaCache`]).
    schema: Option<SchemaCache>,
    /// Vertices `stage_edges` found existing at `start_ts`, and those `stage_vertices`
    /// staged: a bulk load names each endpoint many times, and existence at the start is
    /// fixed for the transaction (see `check_endpoint` for why its own deletes cannot
    /// interfere).
    staged_endpoints: VertexBits,
    /// Vertices a read found existing at `start_ts` (see `check_vertex_cached`): an expand
    /// over several relationship types, or a path through a node many times, asks again.
    existing_at_start: VertexBits,
    /// The follower this transaction writes for, exempt from that follower's protections
    /// (see `protection`).
    follower: Option<String>,
    /// The external graph every read goes to instead of the storage (see `crate::external`).
    external: Option<Arc<dyn ExternalGraph>>,
    /// Equality seeks answered while the transaction had changed no vertex (see
    /// `seek_by_index`, REPEATED SEEKS): (label, key, value) → the vertices found.
    seek_memo: SeekMemo,
}

/// (label, key, value) → the vertices an equality seek found (see `seek_memo`).
type SeekMemo = HashMap<(LabelId, PropKeyId, IndexKey), Found, ahash::RandomState>;

/// The vertices one remembered seek found: nearly always none or one (a key), held inline —
/// an entry is 48 bytes (see [`MAX_SEEK_MEMO_ENTRIES`]).
enum Found {
    One(VertexId),
    Other(Box<[VertexId]>),
}

// An entry's size as MAX_SEEK_MEMO_ENTRIES's budget counts it.
const _: () = assert!(
    std::mem::size_of::<((LabelId, PropKeyId, IndexKey), Found)>() == 48,
    "a remembered seek is 48 bytes"
);

impl Found {
    fn of(found: &[VertexId]) -> Found {
        match found {
            [v] => Found::One(*v),
            other => Found::Other(other.into()),
        }
    }

    fn to_vec(&self) -> Vec<VertexId> {
        match self {
            Found::One(v) => vec![*v],
            Found::Other(found) => found.to_vec(),
        }
    }
}

/// A transaction's remembered equality seeks and the vertices it found existing, with the
/// snapshot they hold at, handed from one transaction to the next
/// (`Transaction::take_carried_reads`, `adopt_carried_reads`).
pub struct CarriedReads {
    memo: SeekMemo,
    existing: VertexBits,
    ts: Timestamp,
}

/// The most equality seeks a transaction remembers: 7/8 of 2^20, which the hash table holds
/// in 2^20 slots of 49 bytes (~51 MB); past it the memo starts over. A relationship load over
/// a million keyed nodes, whose memo passes from batch to batch, keeps nearly every key it
/// met.
pub(crate) const MAX_SEEK_MEMO_ENTRIES: usize = (1 << 20) / 8 * 7;

/// The catalog and the vertex and edge tables as of one storage schema version. Reading a
/// vertex's existence, properties and neighbours takes them from here, after one plain load of the version,
/// instead of cloning the storage's shared `Arc`s under its shared locks on every read: with
/// two workers of a parallel statement reading properties, those counters' cache lines
/// bounced between the cores on every row (`docs/benchmarks.md`, "Parallel Cypher on a
/// million vertices"). Stale only in what a newer catalog added; reloaded when the version
/// moves or a vertex names a table it does not hold.
struct SchemaCache {
    version: u64,
    catalog: Arc<Catalog>,
    vertex_tables: Vec<Arc<VertexTable>>,
    edge_tables: Vec<Arc<EdgeTable>>,
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if self.fork {
            self.manager
                .oracle
                .release_reader(self.start_ts, ReaderKind::Snapshot);
        } else if self.active {
            self.manager
                .oracle
                .release_reader(self.start_ts, ReaderKind::Transaction);
        }
    }
}

impl Transaction {
    pub(crate) fn begin(manager: Arc<TxnManager>, isolation: IsolationLevel) -> Self {
        let start_ts = manager.oracle.register_reader(ReaderKind::Transaction);
        Self {
            manager,
            start_ts,
            isolation,
            writes: WriteSet::default(),
            reads: HashSet::new(),
            active: true,
            fork: false,
            last_edge_table: None,
            staged_endpoints: VertexBits::default(),
            existing_at_start: VertexBits::default(),
            schema: None,
            follower: None,
            external: None,
            seek_memo: SeekMemo::default(),
        }
    }

    /// A read-only transaction over `graph` (see `crate::external`): registered with the
    /// oracle like any transaction, reading nothing of the storage.
    pub(crate) fn begin_external(manager: Arc<TxnManager>, graph: Arc<dyn ExternalGraph>) -> Self {
        let mut tx = Transaction::begin(manager, IsolationLevel::Snapshot);
        tx.external = Some(graph);
        tx
    }

    /// The external graph this transaction reads, if it reads one (see `crate::external`).
    pub fn external(&self) -> Option<&Arc<dyn ExternalGraph>> {
        self.external.as_ref()
    }

    /// A read-only fork at this transaction's snapshot that sees its writes so far and records
    /// its own reads (see READ FORKS). Cost: a copy of the write set.
    pub fn fork_reader(&self) -> Transaction {
        // The parent's registration protects `start_ts` now; the fork's own keeps it safe
        // should the parent end first.
        self.manager.oracle.register_reader_at(self.start_ts);
        Transaction {
            manager: self.manager.clone(),
            start_ts: self.start_ts,
            isolation: self.isolation,
            writes: self.writes.clone(),
            reads: HashSet::new(),
            active: false,
            fork: true,
            last_edge_table: None,
            staged_endpoints: VertexBits::default(),
            existing_at_start: VertexBits::default(),
            schema: None,
            follower: None,
            external: self.external.clone(),
            seek_memo: SeekMemo::default(),
        }
    }

    /// A new, independent transaction on the same database at the same isolation level,
    /// starting at the current visible timestamp (so it sees everything committed so far,
    /// not this transaction's pending writes). `CALL { ... } IN TRANSACTIONS` runs each batch
    /// in one. On an external graph, another read-only transaction over it.
    pub fn begin_sibling(&self) -> Transaction {
        match &self.external {
            Some(graph) => Transaction::begin_external(self.manager.clone(), graph.clone()),
            None => Transaction::begin(self.manager.clone(), self.isolation),
        }
    }

    /// Whether this is a read-only fork (see READ FORKS).
    pub fn is_fork(&self) -> bool {
        self.fork
    }

    /// Number of buffered writes (entries of the write set): what a fork copies.
    pub fn pending_writes(&self) -> usize {
        let w = &self.writes;
        w.new_vertices.len()
            + w.vertex_props.len()
            + w.vertex_labels.len()
            + w.deleted_vertices.len()
            + w.new_edges.len()
            + w.edge_props.len()
            + w.deleted_edges.len()
            + w.origins.len()
    }

    /// Removes and returns what this transaction recorded as read so far (empty unless
    /// SERIALIZABLE).
    pub fn take_reads(&mut self) -> Vec<ReadItem> {
        self.reads.drain().collect()
    }

    /// Adds reads made on this transaction's behalf (by a fork) to its read set, so that
    /// commit validates them (a no-op unless SERIALIZABLE).
    pub fn absorb_reads(&mut self, reads: impl IntoIterator<Item = ReadItem>) {
        if self.isolation == IsolationLevel::Serializable {
            self.reads.extend(reads);
        }
    }

    /// Fails on a fork, which must not write (see READ FORKS).
    fn check_writable(&self) -> Result<()> {
        if let Some(graph) = &self.external {
            return Err(external::reads::read_only(&**graph));
        }
        if self.fork {
            return Err(Error::InvalidArgument(
                "a read-only fork of a transaction cannot write".into(),
            ));
        }
        Ok(())
    }

    pub fn start_ts(&self) -> Timestamp {
        self.start_ts
    }

    /// A read-only snapshot at this transaction's start timestamp (for analytics inside a
    /// transaction). It does not see this transaction's own uncommitted writes.
    pub fn snapshot(&self) -> crate::GraphSnapshot {
        crate::GraphSnapshot::pin_at(self.manager.clone(), self.start_ts)
    }

    pub fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    /// Commits; returns the commit timestamp (the start timestamp for a read-only transaction).
    /// A returned `Error::Aborted` means nothing was written and retrying may succeed.
    pub fn commit(self) -> Result<Timestamp> {
        if self.external.is_some() {
            return Ok(self.start_ts); // nothing to write; dropping releases the reader
        }
        self.check_writable()?;
        self.finish(false)
    }

    /// Ends the transaction: hands a non-empty write set to the commit pipeline (the bulk one
    /// when `bulk`), releases the snapshot, then runs the after-commit work.
    fn finish(mut self, bulk: bool) -> Result<Timestamp> {
        self.active = false;
        let writes = std::mem::take(&mut self.writes);
        let result = if writes.is_empty() {
            Ok(self.start_ts)
        } else {
            let request = CommitRequest {
                start_ts: self.start_ts,
                serializable: self.isolation == IsolationLevel::Serializable,
                writes,
                reads: std::mem::take(&mut self.reads),
            };
            match bulk {
                true => self.manager.commit_bulk(request),
                false if request.writes.has_batches() => Err(Error::InvalidArgument(
                    "nodes and edges staged for a bulk load commit only with commit_bulk"
                        .to_string(),
                )),
                false => self.manager.commit(request),
            }
        };
        self.manager
            .oracle
            .release_reader(self.start_ts, ReaderKind::Transaction);
        let ts = result?;
        self.manager.after_commit()?;
        Ok(ts)
    }

    /// Commits a transaction that only created vertices and edges as a bulk load: its
    /// adjacency goes straight into CSR runs and a checkpoint at its timestamp makes it
    /// durable instead of the WAL (see `TxnManager::commit_bulk`). The facade's `BulkLoad`
    /// is the intended caller. Fails without committing if the transaction changed or
    /// deleted anything that existed before it.
    pub fn commit_bulk(self) -> Result<Timestamp> {
        self.check_writable()?;
        let w = &self.writes;
        let only_creations = w.vertex_props.is_empty()
            && w.vertex_labels.is_empty()
            && w.deleted_vertices.is_empty()
            && w.edge_props.is_empty()
            && w.deleted_edges.is_empty();
        if !only_creations {
            return Err(Error::InvalidArgument(
                "a bulk load only creates vertices and edges".to_string(),
            ));
        }
        self.finish(true)
    }

    pub fn rollback(self) {
        drop(self);
    }

    /// Makes this transaction write for follower `origin`: the labels and relationship types
    /// that follower protects are writable to it (see `protection`).
    pub fn follow(&mut self, origin: &str) {
        self.follower = Some(origin.to_owned());
    }

    /// Fails if a vertex with these labels is protected from this transaction.
    fn check_unprotected_labels(&self, labels: &[&str]) -> Result<()> {
        let protections = self.manager.protections();
        if protections.active() {
            for label in labels {
                protections.check_label(label, self.follower.as_deref())?;
            }
        }
        Ok(())
    }

    /// Fails if vertex `v` carries a label protected from this transaction.
    fn check_unprotected_vertex(&mut self, v: VertexId) -> Result<()> {
        if !self.manager.protections().active() {
            return Ok(());
        }
        let labels = self.vertex_labels(v)?;
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        self.check_unprotected_labels(&labels)
    }

    /// Fails if relationships of the type of edge table `table` are protected from this
    /// transaction.
    fn check_unprotected_edge_table(&self, table: EdgeTableId) -> Result<()> {
        let protections = self.manager.protections();
        if !protections.active() {
            return Ok(());
        }
        let catalog = self.catalog();
        let ty = catalog.edge_table_def(table)?.edge_type;
        let name = catalog.edge_types.name(ty).unwrap_or("?");
        protections.check_edge_type(name, self.follower.as_deref())
    }

    /// Records that this transaction's writes bring replication origin `name` up to source
    /// position `position`. The position is committed in the same record as the writes, so
    /// after any crash the recovered position is exactly the one the recovered graph reflects
    /// (see the storage's `origin` module); `Database::replication_origin` reads it back. The
    /// last call for a name wins. One follower writes an origin at a time (the facade's claim
    /// enforces it).
    pub fn set_origin(&mut self, name: &str, position: u64) -> Result<()> {
        self.check_writable()?;
        if name.is_empty() || name.len() > plexus_storage::ORIGIN_NAME_MAX_BYTES {
            return Err(Error::InvalidArgument(format!(
                "a replication origin name has 1 to {} bytes: {name:?}",
                plexus_storage::ORIGIN_NAME_MAX_BYTES
            )));
        }
        self.writes.origins.insert(name.to_owned(), position);
        Ok(())
    }

    // ---- helpers ---------------------------------------------------------------------------

    fn storage(&self) -> &plexus_storage::Storage {
        self.manager.storage()
    }

    fn catalog(&self) -> Arc<Catalog> {
        self.storage().catalog()
    }

    fn record(&mut self, item: ReadItem) {
        if self.isolation == IsolationLevel::Serializable {
            self.reads.insert(item);
        }
    }

    fn ensure_token(&self, name: &str, kind: TokenKind) -> Result<u32> {
        schema::ensure_token(self.storage(), name, kind)
    }

    /// Fails unless `v` exists in this transaction's view.
    fn check_vertex(&mut self, v: VertexId) -> Result<Arc<VertexTable>> {
        self.check_vertex_cached(v)?;
        Ok(self.cached_table(v).clone())
    }

    /// [`check_vertex`](Self::check_vertex) without handing out the table: the vertex read
    /// path then reads it in [`SchemaCache`] by reference ([`cached_table`](Self::cached_table)).
    /// A vertex found existing at `start_ts` is remembered (`existing_at_start`): existence
    /// at the snapshot never changes, and this transaction's own deletes are checked before
    /// the memo, so the storage is asked once per vertex (the read is still recorded each
    /// time, for SERIALIZABLE).
    fn check_vertex_cached(&mut self, v: VertexId) -> Result<()> {
        self.refresh_schema(v)?;
        self.cached_table(v).check_offset(v)?;
        if self.writes.is_new_vertex(v) {
            return Ok(());
        }
        if self.writes.deleted_vertices.contains_key(&v) {
            return Err(Error::NotFound(format!(
                "vertex {v} was deleted by this transaction"
            )));
        }
        self.record(ReadItem::Exists(Entity::Vertex(v)));
        if self.existing_at_start.contains(v) {
            return Ok(());
        }
        if !self
            .cached_table(v)
            .rows()
            .exists(v.offset, self.start_ts)?
        {
            return Err(Error::NotFound(format!("vertex {v} does not exist")));
        }
        self.existing_at_start.insert(v);
        Ok(())
    }

    /// The catalog's version now: it changes with every schema change (a label, type or
    /// property key created, an index added or dropped). Caches of code built for a schema
    /// key on it.
    pub fn schema_version(&self) -> u64 {
        self.storage().schema_version()
    }

    /// Makes [`SchemaCache`] current enough to hold `v`'s table; fails like
    /// `Storage::check_vertex_id` if there is no such table.
    fn refresh_schema(&mut self, v: VertexId) -> Result<()> {
        let version = self.storage().schema_version();
        let holds = |cache: &SchemaCache| {
            cache.version == version && (v.table as usize) < cache.vertex_tables.len()
        };
        if self.schema.as_ref().is_some_and(holds) {
            return Ok(());
        }
        // Version first: what is loaded after it is at least that new.
        let cache = SchemaCache {
            version,
            catalog: self.storage().catalog(),
            vertex_tables: self.storage().vertex_tables(),
            edge_tables: self.storage().edge_tables(),
        };
        if (v.table as usize) >= cache.vertex_tables.len() {
            return Err(Error::NotFound(format!("vertex {v}: no such vertex table")));
        }
        self.schema = Some(cache);
        Ok(())
    }

    /// The schema cache; call after [`refresh_schema`](Self::refresh_schema) succeeded.
    fn schema_cache(&self) -> &SchemaCache {
        self.schema.as_ref().expect("refresh_schema loaded it")
    }

    /// `v`'s table; call after [`refresh_schema`](Self::refresh_schema) succeeded for `v`.
    fn cached_table(&self, v: VertexId) -> &Arc<VertexTable> {
        &self.schema_cache().vertex_tables[v.table as usize]
    }

    fn check_edge(&mut self, e: EdgeId) -> Result<()> {
        if self.writes.new_edges.contains_key(&e) {
            return Ok(());
        }
        if self.writes.deleted_edges.contains_key(&e) {
            return Err(Error::NotFound(format!(
                "edge {e} was deleted by this transaction"
            )));
        }
        let table = self
            .storage()
            .edge_table(e.table)
            .map_err(|_| Error::NotFound(format!("edge {e}: no such edge table")))?;
        if e.offset >= table.rows().row_count() {
            return Err(Error::NotFound(format!("edge {e}: offset out of range")));
        }
        self.record(ReadItem::Exists(Entity::Edge(e)));
        if !table.rows().exists(e.offset, self.start_ts)? {
            return Err(Error::NotFound(format!("edge {e} does not exist")));
        }
        Ok(())
    }

    fn resolve_props(&self, table: &RowTable, props: &[(&str, Value)]) -> Result<PropMap> {
        let mut resolved = PropMap::with_capacity(props.len());
        for (name, value) in props {
            let key = self.ensure_token(name, TokenKind::PropKey)?;
            table.check_type(key, value, name)?;
            if matches!(value, Value::Null) {
                resolved.remove(&key);
            } else {
                resolved.insert(key, value.clone());
            }
        }
        Ok(resolved)
    }
}

/// The bulk reads of `vertex_property_many` / `edge_property_many`: for runs of ids of one
/// table, each id's property `key` (if it exists at `ts`), and the index of the first id that
/// does not exist.
fn read_runs<I>(
    runs: &[(&[I], &RowTable)],
    offset: impl Fn(&I) -> u32,
    key: Option<PropKeyId>,
    ts: Timestamp,
) -> Result<(Vec<Option<Value>>, Option<usize>)> {
    let total = runs.iter().map(|(run, _)| run.len()).sum();
    let mut values = vec![None; total];
    let mut missing = None;
    let mut offsets = Vec::new();
    let mut first = 0;
    for (run, rows) in runs {
        offsets.clear();
        offsets.extend(run.iter().map(&offset));
        rows.exists_and_prop_many(&offsets, key, ts, &mut |i, exists, value| {
            if !exists && missing.is_none() {
                missing = Some(first + i);
            }
            values[first + i] = value;
        })?;
        first += run.len();
    }
    Ok((values, missing))
}

/// A property as the write set decides it: `Some(value or absent)` when the entity was created
/// or the property written by this transaction, `None` when the committed value stands.
fn written_prop<K: Ord + Copy>(
    created: Option<&PropMap>,
    writes: &BTreeMap<(K, PropKeyId), Option<Value>>,
    id: K,
    key: PropKeyId,
) -> Option<Option<Value>> {
    match created {
        Some(props) => Some(props.get(&key).cloned()),
        None => writes.get(&(id, key)).cloned(),
    }
}

/// Committed properties overlaid with this transaction's writes to the same entity.
fn overlay_props<K: Ord + Copy>(
    committed: Vec<(PropKeyId, Value)>,
    writes: &BTreeMap<(K, PropKeyId), Option<Value>>,
    id: K,
) -> BTreeMap<PropKeyId, Value> {
    let mut props: BTreeMap<_, _> = committed.into_iter().collect();
    for ((_, key), value) in writes.range((id, 0)..=(id, PropKeyId::MAX)) {
        match value {
            Some(x) => props.insert(*key, x.clone()),
            None => props.remove(key),
        };
    }
    props
}
