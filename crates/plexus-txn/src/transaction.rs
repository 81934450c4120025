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

mod staging;

use crate::manager::{CommitRequest, TxnManager};
use crate::oracle::ReaderKind;
use crate::schema::{self, TokenKind};
use crate::validation::{Entity, ReadItem};
use crate::write_set::{NewEdge, NewVertex, PropMap, WriteSet};
use plexus_storage::{
    Catalog, CatalogOp, EdgeTable, EdgeTableDef, HIDDEN_TABLE_LABEL, IndexKey, KeyRange, RowTable,
    VertexTable, VertexTableDef,
};
use plexus_types::{
    Direction, EdgeId, EdgeTableId, EdgeTypeId, Error, IsolationLevel, LabelId, PropKeyId, Result,
    Timestamp, Value, VertexId, VertexTableId,
};
use std::collections::{BTreeMap, HashSet};
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
    /// The follower this transaction writes for, exempt from that follower's protections
    /// (see `protection`).
    follower: Option<String>,
}

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
            schema: None,
            follower: None,
        }
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
            schema: None,
            follower: None,
        }
    }

    /// A new, independent transaction on the same database at the same isolation level,
    /// starting at the current visible timestamp (so it sees everything committed so far,
    /// not this transaction's pending writes). `CALL { ... } IN TRANSACTIONS` runs each batch
    /// in one.
    pub fn begin_sibling(&self) -> Transaction {
        Transaction::begin(self.manager.clone(), self.isolation)
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
                false if !request.writes.edge_batches.is_empty() => Err(Error::InvalidArgument(
                    "edges staged for a bulk load commit only with commit_bulk".to_string(),
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
        if !self
            .cached_table(v)
            .rows()
            .exists(v.offset, self.start_ts)?
        {
            return Err(Error::NotFound(format!("vertex {v} does not exist")));
        }
        Ok(())
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

    // ---- vertices --------------------------------------------------------------------------

    /// Creates a vertex. Its table is the first label that names a vertex table (declared or
    /// implicit); otherwise an implicit table named after the first label is created. Other
    /// labels are stored in the vertex's label set. Null-valued properties are not stored.
    pub fn create_vertex(&mut self, labels: &[&str], props: &[(&str, Value)]) -> Result<VertexId> {
        self.check_writable()?;
        self.check_unprotected_labels(labels)?;
        let (table_id, extra) = self.table_for_new_vertex(labels)?;
        let table = self.storage().vertex_table(table_id)?;
        let resolved = self.resolve_props(table.rows(), props)?;
        let def = self.catalog().vertex_table(table_id)?.clone();
        let pk = match def.primary_key {
            Some(index) => {
                let key = def.properties[index].key;
                let value = resolved.get(&key).cloned().ok_or_else(|| {
                    Error::Constraint(format!(
                        "vertex table '{}' requires its primary key '{}'",
                        def.name,
                        self.catalog().prop_name(key)
                    ))
                })?;
                self.check_pk_free(&table, table_id, &value, None)?;
                Some(value)
            }
            None => None,
        };
        let offset = table.reserve_row()?;
        let id = VertexId::new(table_id, offset);
        if let Some(value) = pk {
            self.writes.pk_claims.insert((table_id, value), id);
        }
        self.writes.add_new_vertex(
            id,
            NewVertex {
                labels: extra,
                props: resolved,
            },
        );
        Ok(id)
    }

    fn table_for_new_vertex(&self, labels: &[&str]) -> Result<(VertexTableId, Vec<LabelId>)> {
        let catalog = self.catalog();
        let existing = labels.iter().find_map(|l| {
            catalog
                .labels
                .id(l)
                .and_then(|id| catalog.table_of_label(id))
        });
        let table_id = match existing {
            Some(t) => t,
            None => {
                self.ensure_implicit_table(labels.first().copied().unwrap_or(UNLABELED_TABLE))?
            }
        };
        let catalog = self.catalog();
        let def = catalog.vertex_table(table_id)?;
        let mut extra = Vec::new();
        for name in labels {
            let id = self.ensure_token(name, TokenKind::Label)?;
            if id != def.label && !extra.contains(&id) {
                check_label_allowed(def, id, name)?;
                extra.push(id);
            }
        }
        extra.sort_unstable();
        Ok((table_id, extra))
    }

    fn ensure_implicit_table(&self, label_name: &str) -> Result<VertexTableId> {
        let label = if label_name.is_empty() {
            // The unlabeled table's label is a reserved empty name, never shown to users.
            self.storage().change_catalog(
                |c| c.labels.id(UNLABELED_TABLE),
                |c| {
                    Ok(CatalogOp::Label {
                        id: c.labels.len() as u32,
                        name: UNLABELED_TABLE.to_string(),
                    })
                },
            )?
        } else {
            self.ensure_token(label_name, TokenKind::Label)?
        };
        self.storage().change_catalog(
            |c| c.table_of_label(label),
            |c| {
                let def = VertexTableDef {
                    name: label_name.to_string(),
                    label,
                    declared: false,
                    properties: Vec::new(),
                    primary_key: None,
                    families: Vec::new(),
                    extra_labels: None,
                };
                Ok(CatalogOp::VertexTable {
                    id: c.vertex_tables.len() as u32,
                    def,
                })
            },
        )
    }

    /// Fails if `value` is the primary key of a vertex (other than `except`) in this view.
    fn check_pk_free(
        &mut self,
        table: &VertexTable,
        table_id: VertexTableId,
        value: &Value,
        except: Option<VertexId>,
    ) -> Result<()> {
        let holder = match self.writes.pk_claims.get(&(table_id, value.clone())) {
            Some(v) => Some(*v),
            None => table
                .lookup_pk(value, self.start_ts)?
                .map(|row| VertexId::new(table_id, row))
                .filter(|v| {
                    !self.writes.deleted_vertices.contains_key(v)
                        && !table
                            .pk_key()
                            .is_some_and(|k| self.writes.vertex_props.contains_key(&(*v, k)))
                }),
        };
        match holder {
            Some(v) if Some(v) != except => Err(Error::Constraint(format!(
                "duplicate primary key {value} in vertex table '{}' (held by vertex {v})",
                self.catalog().table_name(table_id)
            ))),
            _ => Ok(()),
        }
    }

    /// Deletes a vertex. Fails if it still has edges, unless `detach`, which deletes them too.
    pub fn delete_vertex(&mut self, v: VertexId, detach: bool) -> Result<()> {
        self.check_writable()?;
        self.check_vertex(v)?;
        self.check_unprotected_vertex(v)?;
        let edges = self.neighbors(v, None, Direction::Both)?;
        if !edges.is_empty() && !detach {
            return Err(Error::Constraint(format!(
                "cannot delete vertex {v}: it still has {} relationship(s); delete them first or detach-delete",
                edges.len()
            )));
        }
        let mut seen = HashSet::new();
        for (e, _) in edges {
            if seen.insert(e) {
                self.delete_edge(e)?;
            }
        }
        let labels = self.label_ids(v)?;
        self.writes.forget_vertex_writes(v);
        if self.writes.remove_new_vertex(v).is_none() {
            self.writes.deleted_vertices.insert(v, labels);
        }
        Ok(())
    }

    /// Whether `v` exists in this view; `false` also for ids that name no row at all.
    pub fn vertex_exists(&mut self, v: VertexId) -> Result<bool> {
        match self.check_vertex(v) {
            Ok(_) => Ok(true),
            Err(Error::NotFound(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Sets a property; setting `Value::Null` removes it.
    pub fn set_vertex_property(&mut self, v: VertexId, name: &str, value: Value) -> Result<()> {
        self.check_writable()?;
        let table = self.check_vertex(v)?;
        self.check_unprotected_vertex(v)?;
        let key = self.ensure_token(name, TokenKind::PropKey)?;
        table.rows().check_type(key, &value, name)?;
        let is_null = matches!(value, Value::Null);
        if table.pk_key() == Some(key) {
            if is_null {
                return Err(Error::Constraint(format!(
                    "the primary key '{name}' of vertex {v} cannot be removed"
                )));
            }
            self.check_pk_free(&table, v.table, &value, Some(v))?;
            self.writes.pk_claims.retain(|_, x| *x != v);
            self.writes.pk_claims.insert((v.table, value.clone()), v);
        }
        let value = (!is_null).then_some(value);
        if let Some(nv) = self.writes.new_vertices.get_mut(&v) {
            match value {
                Some(x) => nv.props.insert(key, x),
                None => nv.props.remove(&key),
            };
        } else {
            self.writes.vertex_props.insert((v, key), value);
        }
        Ok(())
    }

    pub fn remove_vertex_property(&mut self, v: VertexId, name: &str) -> Result<()> {
        self.set_vertex_property(v, name, Value::Null)
    }

    pub fn vertex_property(&mut self, v: VertexId, name: &str) -> Result<Option<Value>> {
        self.check_vertex_cached(v)?;
        let cache = self
            .schema
            .as_ref()
            .expect("check_vertex_cached refreshed it");
        // A key named after the cached catalog was published is unknown to it: ask the
        // current one (rare: a key created since, by this or another transaction).
        let key = cache.catalog.prop_keys.id(name);
        let Some(key) = key.or_else(|| self.catalog().prop_keys.id(name)) else {
            return Ok(None);
        };
        let created = self.writes.new_vertices.get(&v).map(|nv| &nv.props);
        if let Some(answer) = written_prop(created, &self.writes.vertex_props, v, key) {
            return Ok(answer);
        }
        self.record(ReadItem::Prop(Entity::Vertex(v), key));
        self.cached_table(v)
            .rows()
            .prop(v.offset, key, self.start_ts)
    }

    /// [`vertex_property`](Self::vertex_property) of each of `vs`, in order, read in bulk: the
    /// rows of one table in runs, existence and property of every row of a chunk under one
    /// latch (`RowTable::exists_and_prop_many`), instead of two latches and the write-set
    /// look-ups per vertex. `None` when the bulk read does not apply — the transaction has
    /// created, deleted or changed vertex properties — or fails (a vertex that does not exist,
    /// a storage error): the caller then reads vertex by vertex, which reports the error the
    /// first failing vertex has. Reads are recorded as by `vertex_property`.
    pub fn vertex_property_many(
        &mut self,
        vs: &[VertexId],
        name: &str,
    ) -> Option<Vec<Option<Value>>> {
        let writes = &self.writes;
        let unwritten = writes.new_vertices.is_empty()
            && writes.vertex_props.is_empty()
            && writes.deleted_vertices.is_empty();
        unwritten
            .then(|| self.unwritten_property_many(vs, name).ok())
            .flatten()
    }

    /// `vertex_property_many` while the write set holds no vertex change.
    fn unwritten_property_many(
        &mut self,
        vs: &[VertexId],
        name: &str,
    ) -> Result<Vec<Option<Value>>> {
        if vs.is_empty() {
            return Ok(Vec::new());
        }
        for &v in vs {
            self.refresh_schema(v)?;
            self.cached_table(v).check_offset(v)?;
        }
        // Just refreshed: the cache's catalog is the current one.
        let key = self.schema_cache().catalog.prop_keys.id(name);
        self.record_property_reads(vs.iter().map(|&v| Entity::Vertex(v)), key);
        let runs: Vec<(&[VertexId], &RowTable)> = (vs.chunk_by(|a, b| a.table == b.table))
            .map(|run| (run, self.cached_table(run[0]).rows()))
            .collect();
        match read_runs(&runs, |v| v.offset, key, self.start_ts)? {
            (_, Some(i)) => Err(Error::NotFound(format!("vertex {} does not exist", vs[i]))),
            (values, None) => Ok(values),
        }
    }

    /// [`edge_property`](Self::edge_property) of each of `es`, in order, read in bulk like
    /// [`vertex_property_many`](Self::vertex_property_many) reads vertices: `None` when the
    /// transaction has created, deleted or changed relationships, or a read fails.
    pub fn edge_property_many(&mut self, es: &[EdgeId], name: &str) -> Option<Vec<Option<Value>>> {
        let writes = &self.writes;
        let unwritten = writes.new_edges.is_empty()
            && writes.edge_props.is_empty()
            && writes.deleted_edges.is_empty();
        unwritten
            .then(|| self.unwritten_edge_property_many(es, name).ok())
            .flatten()
    }

    /// `edge_property_many` while the write set holds no relationship change.
    fn unwritten_edge_property_many(
        &mut self,
        es: &[EdgeId],
        name: &str,
    ) -> Result<Vec<Option<Value>>> {
        let mut tables = Vec::new();
        for run in es.chunk_by(|a, b| a.table == b.table) {
            let table = self.storage().edge_table(run[0].table)?;
            if run.iter().any(|e| e.offset >= table.rows().row_count()) {
                return Err(Error::NotFound("edge offset out of range".into()));
            }
            tables.push(table);
        }
        let key = self.catalog().prop_keys.id(name);
        self.record_property_reads(es.iter().map(|&e| Entity::Edge(e)), key);
        let runs: Vec<(&[EdgeId], &RowTable)> = (es.chunk_by(|a, b| a.table == b.table))
            .zip(&tables)
            .map(|(run, table)| (run, table.rows()))
            .collect();
        match read_runs(&runs, |e| e.offset, key, self.start_ts)? {
            (_, Some(i)) => Err(Error::NotFound(format!("edge {} does not exist", es[i]))),
            (values, None) => Ok(values),
        }
    }

    /// Records what `vertex_property` / `edge_property` record for each of `entities`: its
    /// existence and, for a known key, the property.
    fn record_property_reads(
        &mut self,
        entities: impl Iterator<Item = Entity>,
        key: Option<PropKeyId>,
    ) {
        for entity in entities {
            self.record(ReadItem::Exists(entity));
            if let Some(key) = key {
                self.record(ReadItem::Prop(entity, key));
            }
        }
    }

    /// All properties of a vertex, sorted by name.
    pub fn vertex_properties(&mut self, v: VertexId) -> Result<Vec<(String, Value)>> {
        let table = self.check_vertex(v)?;
        let props: BTreeMap<PropKeyId, Value> = match self.writes.new_vertices.get(&v) {
            Some(nv) => nv.props.iter().map(|(k, v)| (k, v.clone())).collect(),
            None => {
                self.record(ReadItem::AllProps(Entity::Vertex(v)));
                let committed = table.rows().props(v.offset, self.start_ts)?;
                overlay_props(committed, &self.writes.vertex_props, v)
            }
        };
        Ok(self.named(props))
    }

    fn named(&self, props: BTreeMap<PropKeyId, Value>) -> Vec<(String, Value)> {
        let catalog = self.catalog();
        let mut named: Vec<_> = props
            .into_iter()
            .map(|(k, v)| (catalog.prop_name(k).to_string(), v))
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        named
    }

    /// Extra labels (beyond the table's) in this view.
    fn extra_labels(&mut self, v: VertexId, table: &VertexTable) -> Result<Vec<LabelId>> {
        if let Some(nv) = self.writes.new_vertices.get(&v) {
            return Ok(nv.labels.clone());
        }
        if let Some((_, new)) = self.writes.vertex_labels.get(&v) {
            return Ok(new.clone());
        }
        self.record(ReadItem::Labels(v));
        table.rows().labels(v.offset, self.start_ts)
    }

    fn label_ids(&mut self, v: VertexId) -> Result<Vec<LabelId>> {
        self.check_vertex_cached(v)?;
        // The cache holds `v`'s table (just refreshed), so its definition and label.
        let own = self.schema_cache().catalog.vertex_table(v.table)?.label;
        let table = self.cached_table(v).clone();
        let mut labels = self.extra_labels(v, &table)?;
        if let Some(at) = labels.iter().position(|&l| l == HIDDEN_TABLE_LABEL) {
            labels.remove(at);
        } else {
            labels.push(own);
        }
        Ok(labels)
    }

    /// The vertex's labels, sorted (the table's label included, unless it is unlabeled).
    pub fn vertex_labels(&mut self, v: VertexId) -> Result<Vec<String>> {
        let ids = self.label_ids(v)?;
        let catalog = self.catalog();
        let mut names: Vec<String> = ids
            .into_iter()
            .map(|id| catalog.label_name(id).to_string())
            .filter(|name| name != UNLABELED_TABLE)
            .collect();
        names.sort();
        Ok(names)
    }

    /// Whether `v` carries every label of `names`, as [`vertex_labels`](Self::vertex_labels)
    /// lists them, without naming its labels: one look-up per name.
    pub fn vertex_has_labels(&mut self, v: VertexId, names: &[impl AsRef<str>]) -> Result<bool> {
        let ids = self.label_ids(v)?;
        // `label_ids` refreshed the cache: it holds every label any version of `v` can carry.
        let catalog = &self.schema_cache().catalog;
        Ok(names.iter().all(|name| {
            let name = name.as_ref();
            name != UNLABELED_TABLE && catalog.labels.id(name).is_some_and(|id| ids.contains(&id))
        }))
    }

    pub fn add_label(&mut self, v: VertexId, label: &str) -> Result<()> {
        self.change_labels(v, label, true)
    }

    /// Removes a label; the table's own label cannot be removed.
    pub fn remove_label(&mut self, v: VertexId, label: &str) -> Result<()> {
        self.change_labels(v, label, false)
    }

    fn change_labels(&mut self, v: VertexId, name: &str, add: bool) -> Result<()> {
        self.check_writable()?;
        let table = self.check_vertex(v)?;
        self.check_unprotected_vertex(v)?;
        if add {
            self.check_unprotected_labels(&[name])?;
        }
        let catalog = self.catalog();
        let def = catalog.vertex_table(v.table)?;
        let id = match (add, catalog.labels.id(name)) {
            (true, _) => self.ensure_token(name, TokenKind::Label)?,
            (false, Some(id)) => id,
            (false, None) => return Ok(()),
        };
        // The table's own label is removed by adding the hidden-table-label marker (the
        // vertex keeps its table and id) and restored by removing the marker.
        let (id, add) = if id == def.label {
            (HIDDEN_TABLE_LABEL, !add)
        } else {
            (id, add)
        };
        if add && id != HIDDEN_TABLE_LABEL {
            check_label_allowed(def, id, name)?;
        }
        let old = self.extra_labels(v, &table)?;
        if old.contains(&id) == add {
            return Ok(()); // already as asked: not a write
        }
        let mut new: Vec<LabelId> = old.iter().copied().filter(|&l| l != id).collect();
        if add {
            new.push(id);
            new.sort_unstable();
        }
        if let Some(nv) = self.writes.new_vertices.get_mut(&v) {
            nv.labels = new;
        } else {
            let original = self
                .writes
                .vertex_labels
                .get(&v)
                .map_or(old, |(o, _)| o.clone());
            self.writes.vertex_labels.insert(v, (original, new));
        }
        Ok(())
    }

    /// Every vertex carrying `label` in this view, in id order.
    pub fn scan_label(&mut self, label: &str) -> Result<Vec<VertexId>> {
        let id = match self.isolation {
            // A serializable scan needs the label's id to record the predicate, even if no
            // vertex carries it yet (a concurrent insert would be a phantom).
            IsolationLevel::Serializable => Some(self.ensure_token(label, TokenKind::Label)?),
            IsolationLevel::Snapshot => self.catalog().labels.id(label),
        };
        let Some(id) = id else { return Ok(Vec::new()) };
        self.record(ReadItem::LabelScan(id));
        let catalog = self.catalog();
        let table_label =
            |v: &VertexId| catalog.vertex_tables.get(v.table as usize).map(|t| t.label);
        // Whether a vertex whose extra labels are `labels` carries `id`.
        let carries = |v: &VertexId, labels: &[LabelId]| {
            labels.contains(&id)
                || (table_label(v) == Some(id) && !labels.contains(&HIDDEN_TABLE_LABEL))
        };
        let mut found = Vec::new();
        self.storage()
            .scan_label(id, self.start_ts, &mut |v| found.push(v))?;
        found.retain(|v| {
            !self.writes.deleted_vertices.contains_key(v)
                && self
                    .writes
                    .vertex_labels
                    .get(v)
                    .is_none_or(|(_, new)| carries(v, new))
        });
        found.extend(
            self.writes
                .vertex_labels
                .iter()
                .filter(|(v, (old, new))| carries(v, new) && !carries(v, old))
                .map(|(v, _)| *v),
        );
        found.extend(
            self.writes
                .new_vertices
                .iter()
                .filter(|(v, nv)| carries(v, &nv.labels))
                .map(|(v, _)| *v),
        );
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// Every vertex in this view, in id order: all vertex tables, the unlabeled one included.
    /// Under SERIALIZABLE the scan is recorded as a label scan of every existing table's
    /// label, so a concurrent insert into any of them is a phantom (a table created
    /// concurrently is not covered).
    pub fn scan_all_vertices(&mut self) -> Result<Vec<VertexId>> {
        let catalog = self.catalog();
        for def in &catalog.vertex_tables {
            self.record(ReadItem::LabelScan(def.label));
        }
        let mut found = Vec::new();
        for table in self.storage().vertex_tables() {
            table.rows().scan(self.start_ts, |row| {
                found.push(VertexId::new(table.id(), row))
            })?;
        }
        found.retain(|v| !self.writes.deleted_vertices.contains_key(v));
        found.extend(self.writes.new_vertices.keys().copied());
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// Looks a vertex up by the primary key of the vertex table named `table`.
    pub fn lookup(&mut self, table: &str, key: &Value) -> Result<Option<VertexId>> {
        let catalog = self.catalog();
        let table_id = catalog
            .labels
            .id(table)
            .and_then(|l| catalog.table_of_label(l))
            .ok_or_else(|| Error::NotFound(format!("vertex table '{table}'")))?;
        self.lookup_in(table_id, key)
    }

    fn lookup_in(&mut self, table_id: VertexTableId, key: &Value) -> Result<Option<VertexId>> {
        let vt = self.storage().vertex_table(table_id)?;
        let Some(pk_key) = vt.pk_key() else {
            return Err(Error::InvalidArgument(format!(
                "vertex table '{}' has no primary key",
                self.catalog().table_name(table_id)
            )));
        };
        self.record(ReadItem::PrimaryKey(table_id, key.clone()));
        if let Some(v) = self.writes.pk_claims.get(&(table_id, key.clone())) {
            return Ok(Some(*v));
        }
        let found = vt
            .lookup_pk(key, self.start_ts)?
            .map(|row| VertexId::new(table_id, row));
        Ok(found.filter(|v| {
            !self.writes.deleted_vertices.contains_key(v)
                && !self.writes.vertex_props.contains_key(&(*v, pk_key))
        }))
    }

    /// The vertices carrying `label` whose property `key` equals `value`, answered by
    /// primary-key indexes — or `None` when they cannot answer exactly and the caller must scan
    /// the label. The tables that may hold such vertices are `label`'s own table and every
    /// table where `label` has been installed as an extra label; the seek answers only when
    /// each of them has `key` as its primary key and `value` is of the key's type (Cypher's
    /// `1 = 1.0` still has to match, so a float never seeks an integer key), and when the
    /// transaction's own writes put `label` on no vertex of another table.
    ///
    /// Under SERIALIZABLE the seek records the label scan it replaces as well as the keys, so
    /// it never validates more optimistically than the scan would.
    pub fn seek_by_key(
        &mut self,
        label: &str,
        key: &str,
        value: &Value,
    ) -> Result<Option<Vec<VertexId>>> {
        let catalog = self.catalog();
        let Some(label_id) = catalog.labels.id(label) else {
            return Ok(None);
        };
        let mut tables: Vec<VertexTableId> = catalog.table_of_label(label_id).into_iter().collect();
        let carriers = self.storage().vertex_tables();
        tables.extend(
            carriers
                .iter()
                .filter(|t| t.may_carry_extra_label(label_id))
                .map(|t| t.id()),
        );
        tables.sort_unstable();
        tables.dedup();
        let keyed = |table: VertexTableId| {
            let Ok(def) = catalog.vertex_table(table) else {
                return false;
            };
            def.primary_key
                .map(|i| &def.properties[i])
                .is_some_and(|pk| catalog.prop_name(pk.key) == key && pk.data_type.accepts(value))
        };
        if tables.is_empty() || matches!(value, Value::Null) || !tables.iter().all(|&t| keyed(t)) {
            return Ok(None);
        }
        let outside = |v: &VertexId, labels: &[LabelId]| {
            !tables.contains(&v.table) && labels.contains(&label_id)
        };
        let writes = &self.writes;
        if writes
            .new_vertices
            .iter()
            .any(|(v, nv)| outside(v, &nv.labels))
            || writes
                .vertex_labels
                .iter()
                .any(|(v, (_, new))| outside(v, new))
        {
            return Ok(None);
        }
        self.record(ReadItem::LabelScan(label_id));
        let mut found = Vec::new();
        for table in tables {
            if let Some(v) = self.lookup_in(table, value)?
                && self.label_ids(v)?.contains(&label_id)
            {
                found.push(v);
            }
        }
        Ok(Some(found))
    }

    /// The vertices carrying `label` whose property `key` holds a value in `range` (by the
    /// index's keys, see `plexus_storage::index`: `KeyRange::equal` for `=`, `between` for
    /// `<`, `<=`, `>`, `>=`, `prefix` for `STARTS WITH`), answered by the secondary index on
    /// `(label, key)` — or `None` when there is no ready index and the caller must scan the
    /// label. An empty range finds nothing.
    ///
    /// The index gives candidates that held such a value in some kept version; each is
    /// re-checked in this transaction's view (existence, label, value — its own writes
    /// included), and every vertex this transaction created or changed is a candidate too,
    /// since its writes are not in the index. The re-check is by key, as lossy as the index
    /// (integers beyond 2^53 may pass for a neighbour): the caller's filter applies Cypher's
    /// comparison. Under SERIALIZABLE the seek records the label scan it replaces and the
    /// key's values on the tables carrying the label (so a concurrent write of the key there
    /// is a conflict, as it would be for a scan that read every vertex's value).
    pub fn seek_by_index(
        &mut self,
        label: &str,
        key: &str,
        range: &KeyRange,
    ) -> Result<Option<Vec<VertexId>>> {
        let catalog = self.catalog();
        let (Some(label_id), Some(key_id)) = (catalog.labels.id(label), catalog.prop_keys.id(key))
        else {
            return Ok(None);
        };
        if *range == KeyRange::Empty {
            return Ok(Some(Vec::new()));
        }
        let Some(mut candidates) = self.storage().index_candidates(label_id, key_id, range)? else {
            return Ok(None);
        };
        // The label scan it replaces, and the key's values on the vertices it did not read (a
        // change moving one into `range` is a phantom).
        self.record(ReadItem::LabelScan(label_id));
        for table in self.storage().label_carriers(label_id) {
            self.record(ReadItem::TableProp(table, key_id));
        }
        let writes = &self.writes;
        candidates.extend(writes.new_vertices.keys());
        candidates.extend(writes.vertex_labels.keys());
        candidates.extend(
            writes
                .vertex_props
                .keys()
                .filter(|(_, k)| *k == key_id)
                .map(|(v, _)| *v),
        );
        candidates.sort_unstable();
        candidates.dedup();
        let mut found = Vec::new();
        for v in candidates {
            if !self.vertex_exists(v)? || !self.label_ids(v)?.contains(&label_id) {
                continue;
            }
            let held = self.vertex_property(v, key)?;
            let held_key = held.as_ref().and_then(IndexKey::of);
            if held_key.is_some_and(|held| range.contains(&held)) {
                found.push(v);
            }
        }
        Ok(Some(found))
    }

    // ---- edges -----------------------------------------------------------------------------

    /// The id of edge type `name` for a read of the edges of that type: `None` when no edge
    /// has it — except under SERIALIZABLE, where the name is registered so that the read can
    /// be recorded (a later commit may create the first such edge).
    fn read_edge_type(&self, name: &str) -> Result<Option<EdgeTypeId>> {
        self.read_edge_type_in(&self.catalog(), name)
    }

    /// [`read_edge_type`](Self::read_edge_type) against `catalog`.
    fn read_edge_type_in(&self, catalog: &Catalog, name: &str) -> Result<Option<EdgeTypeId>> {
        match catalog.edge_types.id(name) {
            Some(id) => Ok(Some(id)),
            None if self.isolation == IsolationLevel::Serializable => {
                Ok(Some(self.ensure_token(name, TokenKind::EdgeType)?))
            }
            None => Ok(None),
        }
    }

    /// The edges this transaction created whose type is `ty`.
    fn own_new_edges_of(&self, ty: EdgeTypeId) -> Vec<EdgeId> {
        let catalog = self.catalog();
        let created = self.writes.new_edges.keys().copied();
        created.filter(|&e| is_of_type(&catalog, e, ty)).collect()
    }

    /// The edges of type `edge_type` in this view: every edge table of the type at the
    /// snapshot, without the edges this transaction deleted, with those it created. Under
    /// SERIALIZABLE it records the scan (a later commit creating or deleting such an edge
    /// conflicts).
    pub fn scan_edges(&mut self, edge_type: &str) -> Result<Vec<EdgeId>> {
        let Some(ty) = self.read_edge_type(edge_type)? else {
            return Ok(Vec::new());
        };
        self.record(ReadItem::EdgeTypeScan(ty));
        let committed = self.storage().scan_edge_type(ty, self.start_ts)?;
        let deleted = &self.writes.deleted_edges;
        let mut found: Vec<EdgeId> = (committed.into_iter())
            .filter(|e| !deleted.contains_key(e))
            .collect();
        found.extend(self.own_new_edges_of(ty));
        Ok(found)
    }

    /// The edges of type `edge_type` whose property `key` holds a value in `range` (as
    /// [`seek_by_index`](Self::seek_by_index) for vertices), answered by the secondary index
    /// on `(edge_type, key)` — or `None` when there is no ready index and the caller must scan
    /// the type ([`scan_edges`](Self::scan_edges)). An empty range finds nothing.
    ///
    /// The index gives candidates of the type that held such a value in some kept version;
    /// the edges this transaction created of the type, and those whose `key` it wrote, are
    /// candidates too, since its writes are not in the index. Each is re-checked in this
    /// transaction's view — it exists (not deleted here), and holds a value in `range` (by
    /// key, as lossy as the index: the caller's filter applies Cypher's comparison) — so the
    /// seek finds what a scan of the type would. Under SERIALIZABLE the seek records the scan
    /// of the type it replaces and the property it reads on all of them: a later commit that
    /// creates or deletes an edge of the type, or writes `key` on one, conflicts.
    pub fn seek_edges_by_index(
        &mut self,
        edge_type: &str,
        key: &str,
        range: &KeyRange,
    ) -> Result<Option<Vec<EdgeId>>> {
        let catalog = self.catalog();
        let (Some(ty), Some(key_id)) =
            (catalog.edge_types.id(edge_type), catalog.prop_keys.id(key))
        else {
            return Ok(None);
        };
        if *range == KeyRange::Empty {
            return Ok(Some(Vec::new()));
        }
        let Some(mut candidates) = self.storage().edge_index_candidates(ty, key_id, range)? else {
            return Ok(None);
        };
        debug_assert!(
            candidates.iter().all(|&e| is_of_type(&catalog, e, ty)),
            "the index of a type lists only edges of its tables"
        );
        self.record(ReadItem::EdgeTypeScan(ty));
        self.record(ReadItem::EdgeTypeProp(ty, key_id));
        candidates.extend(self.own_new_edges_of(ty));
        let rewritten = self.writes.edge_props.keys().filter(|(_, k)| *k == key_id);
        candidates.extend(
            rewritten
                .map(|&(e, _)| e)
                .filter(|&e| is_of_type(&catalog, e, ty)),
        );
        candidates.sort_unstable();
        candidates.dedup();
        let mut found = Vec::new();
        for e in candidates {
            if !self.edge_exists(e)? {
                continue;
            }
            let held = self.edge_property(e, key)?;
            if held
                .as_ref()
                .and_then(IndexKey::of)
                .is_some_and(|held| range.contains(&held))
            {
                found.push(e);
            }
        }
        Ok(Some(found))
    }

    /// Creates an edge `src -[edge_type]-> dst`. Multiple edges between the same pair are fine.
    pub fn create_edge(
        &mut self,
        src: VertexId,
        edge_type: &str,
        dst: VertexId,
        props: &[(&str, Value)],
    ) -> Result<EdgeId> {
        self.check_writable()?;
        self.check_vertex(src)?;
        self.check_vertex(dst)?;
        let protections = self.manager.protections();
        if protections.active() {
            protections.check_edge_type(edge_type, self.follower.as_deref())?;
        }
        let table = match &self.last_edge_table {
            Some((s, ty, d, table)) if *s == src.table && *d == dst.table && ty == edge_type => {
                table.clone()
            }
            _ => {
                let table = self.edge_table_for(src.table, edge_type, dst.table)?;
                let cached = (src.table, edge_type.to_string(), dst.table, table.clone());
                self.last_edge_table = Some(cached);
                table
            }
        };
        let props = self.resolve_props(table.rows(), props)?;
        let offset = table.reserve_row()?;
        let id = EdgeId::new(table.id(), offset);
        self.writes
            .new_edges
            .insert(id, NewEdge { src, dst, props });
        Ok(id)
    }

    /// The edge table (src table)-[edge_type]->(dst table), created on first use.
    fn edge_table_for(
        &self,
        src: VertexTableId,
        edge_type: &str,
        dst: VertexTableId,
    ) -> Result<Arc<EdgeTable>> {
        let ty = self.ensure_token(edge_type, TokenKind::EdgeType)?;
        let table_id = self.storage().change_catalog(
            |c| c.edge_table(src, ty, dst),
            |c| {
                let def = EdgeTableDef {
                    src,
                    edge_type: ty,
                    dst,
                    declared: false,
                    properties: Vec::new(),
                };
                let id = c.edge_tables.len() as u32;
                Ok(CatalogOp::EdgeTable { id, def })
            },
        )?;
        self.storage().edge_table(table_id)
    }

    pub fn delete_edge(&mut self, e: EdgeId) -> Result<()> {
        self.check_writable()?;
        self.check_edge(e)?;
        self.check_unprotected_edge_table(e.table)?;
        self.writes.forget_edge_writes(e);
        if self.writes.new_edges.remove(&e).is_some() {
            return Ok(());
        }
        let (src, dst) = self
            .storage()
            .edge_endpoints(e)?
            .ok_or_else(|| Error::NotFound(format!("edge {e}")))?;
        self.writes.deleted_edges.insert(e, (src, dst));
        Ok(())
    }

    /// Whether `e` exists in this view; `false` also for ids that name no row at all.
    pub fn edge_exists(&mut self, e: EdgeId) -> Result<bool> {
        match self.check_edge(e) {
            Ok(()) => Ok(true),
            Err(Error::NotFound(_)) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// (source, destination) of an edge visible in this view.
    pub fn edge_endpoints(&mut self, e: EdgeId) -> Result<(VertexId, VertexId)> {
        self.check_edge(e)?;
        if let Some(ne) = self.writes.new_edges.get(&e) {
            return Ok((ne.src, ne.dst));
        }
        self.storage()
            .edge_endpoints(e)?
            .ok_or_else(|| Error::NotFound(format!("edge {e}")))
    }

    pub fn edge_type(&mut self, e: EdgeId) -> Result<String> {
        self.check_edge(e)?;
        let catalog = self.catalog();
        let ty = catalog.edge_table_def(e.table)?.edge_type;
        Ok(catalog.edge_types.name(ty).unwrap_or("?").to_string())
    }

    pub fn set_edge_property(&mut self, e: EdgeId, name: &str, value: Value) -> Result<()> {
        self.check_writable()?;
        self.check_edge(e)?;
        self.check_unprotected_edge_table(e.table)?;
        let key = self.ensure_token(name, TokenKind::PropKey)?;
        self.storage()
            .edge_table(e.table)?
            .rows()
            .check_type(key, &value, name)?;
        let value = (!matches!(value, Value::Null)).then_some(value);
        if let Some(ne) = self.writes.new_edges.get_mut(&e) {
            match value {
                Some(x) => ne.props.insert(key, x),
                None => ne.props.remove(&key),
            };
        } else {
            self.writes.edge_props.insert((e, key), value);
        }
        Ok(())
    }

    pub fn edge_property(&mut self, e: EdgeId, name: &str) -> Result<Option<Value>> {
        self.check_edge(e)?;
        let Some(key) = self.catalog().prop_keys.id(name) else {
            return Ok(None);
        };
        let created = self.writes.new_edges.get(&e).map(|ne| &ne.props);
        if let Some(answer) = written_prop(created, &self.writes.edge_props, e, key) {
            return Ok(answer);
        }
        self.record(ReadItem::Prop(Entity::Edge(e), key));
        self.storage()
            .edge_table(e.table)?
            .rows()
            .prop(e.offset, key, self.start_ts)
    }

    pub fn edge_properties(&mut self, e: EdgeId) -> Result<Vec<(String, Value)>> {
        self.check_edge(e)?;
        let props = match self.writes.new_edges.get(&e) {
            Some(ne) => ne.props.iter().map(|(k, v)| (k, v.clone())).collect(),
            None => {
                self.record(ReadItem::AllProps(Entity::Edge(e)));
                let committed = self
                    .storage()
                    .edge_table(e.table)?
                    .rows()
                    .props(e.offset, self.start_ts)?;
                overlay_props(committed, &self.writes.edge_props, e)
            }
        };
        Ok(self.named(props))
    }

    /// The edges `src -[edge_type]-> dst` (of one type, or all) in this view. Runs on disk that
    /// cannot hold the pair are skipped by their source bitmaps and bloom filters.
    pub fn edges_between(
        &mut self,
        src: VertexId,
        edge_type: Option<&str>,
        dst: VertexId,
    ) -> Result<Vec<EdgeId>> {
        self.check_vertex(src)?;
        self.check_vertex(dst)?;
        let catalog = self.catalog();
        let ty = match edge_type {
            Some(name) => match self.read_edge_type(name)? {
                Some(id) => Some(id),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        self.record(match ty {
            Some(t) => ReadItem::Adjacency(src, t, true),
            None => ReadItem::AdjacencyAny(src, true),
        });
        let type_ok = |e: EdgeId| ty.is_none_or(|t| is_of_type(&catalog, e, t));
        let mut found: Vec<EdgeId> = self
            .storage()
            .edges_between(src, dst, self.start_ts, |def| {
                ty.is_none_or(|t| def.edge_type == t)
            })
            .into_iter()
            .filter(|e| !self.writes.deleted_edges.contains_key(e))
            .collect();
        found.extend(
            self.writes
                .new_edges
                .iter()
                .filter(|(e, ne)| ne.src == src && ne.dst == dst && type_ok(**e))
                .map(|(e, _)| *e),
        );
        Ok(found)
    }

    /// The edges of `v` in direction `dir` (of one type, or all), with the vertex at the other
    /// end. `Both` lists out-edges then in-edges, so a self-loop appears twice.
    pub fn neighbors(
        &mut self,
        v: VertexId,
        edge_type: Option<&str>,
        dir: Direction,
    ) -> Result<Vec<(EdgeId, VertexId)>> {
        let mut found = Vec::new();
        self.neighbors_into(v, edge_type, dir, &mut found)?;
        Ok(found)
    }

    /// [`neighbors`](Self::neighbors), appended to `found` (a caller expanding many vertices
    /// keeps one buffer).
    pub fn neighbors_into(
        &mut self,
        v: VertexId,
        edge_type: Option<&str>,
        dir: Direction,
        found: &mut Vec<(EdgeId, VertexId)>,
    ) -> Result<()> {
        self.check_vertex_cached(v)?;
        let ty: Option<EdgeTypeId> = match edge_type {
            Some(name) => match self.read_edge_type_in(&self.schema_cache().catalog, name)? {
                Some(id) => Some(id),
                None => return Ok(()),
            },
            None => None,
        };
        let sides: &[bool] = match dir {
            Direction::Out => &[true],
            Direction::In => &[false],
            Direction::Both => &[true, false],
        };
        for &out in sides {
            self.record(match ty {
                Some(t) => ReadItem::Adjacency(v, t, out),
                None => ReadItem::AdjacencyAny(v, out),
            });
        }
        // Borrowed, not cloned: cloning the `Arc`s per call is what contended (see SchemaCache).
        let SchemaCache {
            catalog,
            edge_tables,
            ..
        } = self.schema_cache();
        for &out in sides {
            let d = if out { Direction::Out } else { Direction::In };
            plexus_storage::neighbors_in(
                (catalog, edge_tables),
                v,
                d,
                self.start_ts,
                |def| ty.is_none_or(|t| def.edge_type == t),
                &mut |e, n| {
                    if !self.writes.deleted_edges.contains_key(&e) {
                        found.push((e, n));
                    }
                },
            );
            for (e, ne) in &self.writes.new_edges {
                let type_ok = ty.is_none_or(|t| is_of_type(catalog, *e, t));
                let (from, to) = if out {
                    (ne.src, ne.dst)
                } else {
                    (ne.dst, ne.src)
                };
                if type_ok && from == v {
                    found.push((*e, to));
                }
            }
        }
        Ok(())
    }
}

/// Whether edge `e` is of type `ty` (the type of its table).
fn is_of_type(catalog: &Catalog, e: EdgeId, ty: EdgeTypeId) -> bool {
    (catalog.edge_tables.get(e.table as usize)).is_some_and(|table| table.edge_type == ty)
}

/// A property as the write set decides it: `Some(value or absent)` when the entity was created
/// or the property written by this transaction, `None` when the committed value stands.
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

pub(crate) fn check_label_allowed(def: &VertexTableDef, label: LabelId, name: &str) -> Result<()> {
    match &def.extra_labels {
        Some(allowed) if !allowed.contains(&label) => Err(Error::InvalidArgument(format!(
            "label '{name}' is not declared for vertex table '{}'",
            def.name
        ))),
        _ => Ok(()),
    }
}
