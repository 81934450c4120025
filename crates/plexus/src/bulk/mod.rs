//! Bulk loading: many nodes and relationships, made visible in one commit.
//!
//! WHAT
//! ====
//! [`BulkLoad`] is the one entry point every loader goes through — Cypher `COPY`, the
//! `plexus import` command (Neo4j-admin style files and the LDBC SNB layout) and Python's
//! `load_arrow` / `load_pandas`. A loader reads its files or frames into columns
//! ([`Columns`]: one `Vec<Value>` per property, one entry per row), adds nodes
//! ([`add_nodes`](BulkLoad::add_nodes), which hands back their ids so the loader can map its
//! own identifiers onto them) and relationships between ids
//! ([`add_relationships`](BulkLoad::add_relationships)), then [`commit`](BulkLoad::commit)s.
//! Dropping a `BulkLoad` without committing leaves the database unchanged.
//!
//! ```
//! use plexus::{Config, Database, Value};
//! let db = Database::open_in_memory(Config::default()).unwrap();
//! let mut load = db.bulk_load();
//! let names = vec![("name".to_string(), vec![Value::from("Ada"), Value::from("Bob")])];
//! let added = load.add_nodes(&["Person"], None, &names, 2).unwrap();
//! assert!(added.rejected.is_empty());
//! let (ada, bob) = (added.ids[0].unwrap(), added.ids[1].unwrap());
//! load.add_relationships("KNOWS", &[ada], &[bob], &[]).unwrap();
//! let summary = load.commit().unwrap();
//! assert_eq!((summary.nodes, summary.relationships), (2, 1));
//! ```
//!
//! ROW ERRORS
//! ==========
//! A row that cannot be added (a value of the wrong type for a declared column, a duplicate
//! or missing primary key, an endpoint that does not exist) does not stop the batch: it is
//! reported in [`Added::rejected`] with its index, and the rows around it are added. The
//! loader decides: abort the load (drop it — the default of every front end, which then names
//! file, line and column) or skip the rows and count them (`IGNORE_ERRORS`, `--skip-bad-rows`).
//! Errors that are not about one row (an unknown table, a closed database) fail the call.
//!
//! ISOLATION
//! =========
//! A load commits like one transaction: it sees the database as of its start (primary-key
//! lookups, [`lookup`](BulkLoad::lookup)), and at commit it conflicts with transactions that
//! committed a claim on the same primary key since (first committer wins), so a load that
//! races a `CREATE` of one of its keys either commits alone or fails with an abort, retryable.
//!
//! HOW IT IS STORED
//! ================
//! Nodes and relationships are staged in a transaction as columns
//! (`Transaction::stage_vertices` / `stage_edges`: one value per property column per row,
//! nodes' primary keys in the load's own key map so lookups find them; every row checked as
//! it is added, so row errors are found then), and [`commit`](BulkLoad::commit) hands them
//! to the storage's bulk install (`plexus_storage`'s `store::bulk`): rows installed at the
//! commit timestamp, the adjacency written straight into CSR runs by a counting sort — at
//! the last LSM level when the relationship table was empty, the layout analytics scan
//! fastest — and a checkpoint instead of the WAL as its durable form. The manifest switch
//! that names that checkpoint is the single point at which the load becomes part of the
//! database on disk; a crash before it recovers the database without the load. Commits of
//! other transactions wait while a load installs.
//!
//! The checkpoint rewrites every row of the database, not only the load's.

/// Arrow record batches (Parquet, Python frames) as [`Columns`]; see `plexus_ingest`'s
/// mapping table.
pub use plexus_ingest::{IngestError, batch_columns};
use plexus_txn::Transaction;
use plexus_types::{Error, Result, Timestamp, Value, VertexId};
mod keys;
pub use keys::IdMap;

/// Most keys [`BulkLoad::lookup`] remembers (per load, all tables together): beyond it,
/// lookups go to the transaction every time.
pub const LOOKUP_CACHE_KEYS_MAX: usize = 1 << 22;

/// Property columns of a batch: `(property name, one value per row)`. Every column has the
/// batch's row count; `Value::Null` means "no such property on this row".
pub type Columns = [(String, Vec<Value>)];

/// What one `add_nodes` / `add_relationships` call did.
#[derive(Debug, Default)]
pub struct Added {
    /// Per row: the new node's id, or `None` for a rejected row (always empty for
    /// relationships).
    pub ids: Vec<Option<VertexId>>,
    /// Rows not added: (row index in the batch, why).
    pub rejected: Vec<(usize, Error)>,
}

/// What a committed load added.
#[derive(Clone, Debug, PartialEq)]
pub struct BulkSummary {
    pub nodes: u64,
    pub relationships: u64,
    /// The commit's timestamp: readers from then on see the whole load.
    pub commit_ts: Timestamp,
}

/// A bulk load in progress; see the module documentation.
pub struct BulkLoad {
    txn: Transaction,
    nodes: u64,
    relationships: u64,
    /// Keys `lookup` found, per table. Only found ones: a node found stays found for the
    /// whole load (a load only creates, and a concurrent delete of a node it uses aborts its
    /// commit), while one not found may be added later in the load.
    found: keys::FoundKeys,
}

impl BulkLoad {
    pub(crate) fn new(txn: Transaction) -> BulkLoad {
        BulkLoad {
            txn,
            nodes: 0,
            relationships: 0,
            found: keys::FoundKeys::default(),
        }
    }

    /// Adds `rows` nodes carrying `labels` (the first label that names a vertex table decides
    /// the table, as for `CREATE`; otherwise the first label's implicit table), plus, when
    /// given, `row_labels[i]` on row `i`, with the properties in `columns`.
    pub fn add_nodes(
        &mut self,
        labels: &[&str],
        row_labels: Option<&[Vec<String>]>,
        columns: &Columns,
        rows: usize,
    ) -> Result<Added> {
        check_columns(columns, rows)?;
        let staged = self.txn.stage_vertices(labels, row_labels, columns, rows)?;
        self.nodes += (rows - staged.rejected.len()) as u64;
        Ok(Added {
            ids: staged.ids,
            rejected: staged.rejected,
        })
    }

    /// Adds relationships `src[i] -[rel_type]-> dst[i]` with the properties in `columns`.
    pub fn add_relationships(
        &mut self,
        rel_type: &str,
        src: &[VertexId],
        dst: &[VertexId],
        columns: &Columns,
    ) -> Result<Added> {
        if src.len() != dst.len() {
            return Err(Error::InvalidArgument(format!(
                "bulk load: {} sources for {} destinations",
                src.len(),
                dst.len()
            )));
        }
        check_columns(columns, src.len())?;
        let rejected = self.txn.stage_edges(rel_type, src, dst, columns)?;
        self.relationships += (src.len() - rejected.len()) as u64;
        Ok(Added {
            ids: Vec::new(),
            rejected,
        })
    }

    /// The node of vertex table `table` whose primary key is `key`: committed before the load
    /// began, or added by it.
    /// Edge files name each node many times: found keys are remembered (up to
    /// [`LOOKUP_CACHE_KEYS_MAX`]; integer keys by value, in an array while they are dense —
    /// see `keys`), sparing the primary-key index and the row read.
    pub fn lookup(&mut self, table: &str, key: &Value) -> Result<Option<VertexId>> {
        if let Some(v) = self.found.get(table, key) {
            return Ok(Some(v));
        }
        let found = self.txn.lookup(table, key)?;
        if let Some(v) = found
            && self.found.len() < LOOKUP_CACHE_KEYS_MAX
        {
            self.found.insert(table, key, v);
        }
        Ok(found)
    }

    /// Warms the cache for looking up `keys` in `table` next (see `keys::FoundKeys::prefetch`);
    /// answers nothing, changes nothing.
    pub fn prefetch_keys<'a>(&self, table: &str, keys: impl Iterator<Item = &'a Value>) {
        self.found.prefetch(table, keys);
    }

    /// Records that this load brings replication origin `name` up to `position`, committed
    /// with it (see [`Transaction::set_origin`]): a follower's initial copy.
    pub fn set_origin(&mut self, name: &str, position: u64) -> Result<()> {
        self.txn.set_origin(name, position)
    }

    /// Nodes and relationships added so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.nodes, self.relationships)
    }

    /// Makes the whole load visible at once, or nothing on error.
    pub fn commit(self) -> Result<BulkSummary> {
        let commit_ts = self.txn.commit_bulk()?;
        Ok(BulkSummary {
            nodes: self.nodes,
            relationships: self.relationships,
            commit_ts,
        })
    }
}

fn check_columns(columns: &Columns, rows: usize) -> Result<()> {
    match columns.iter().find(|(_, values)| values.len() != rows) {
        Some((name, values)) => Err(Error::InvalidArgument(format!(
            "bulk load: column '{name}' has {} values for {rows} rows",
            values.len()
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, Database, Value, VertexTableSpec};

    fn ints(name: &str, values: &[i64]) -> (String, Vec<Value>) {
        (
            name.to_string(),
            values.iter().map(|&v| Value::Int(v)).collect(),
        )
    }

    #[test]
    fn a_load_is_invisible_until_commit_and_dropped_loads_leave_nothing() {
        let db = Database::open_in_memory(Config::default()).unwrap();
        let mut load = db.bulk_load();
        load.add_nodes(&["V"], None, &[ints("id", &[1, 2, 3])], 3)
            .unwrap();
        assert_eq!(db.begin().scan_label("V").unwrap().len(), 0);
        drop(load);
        assert_eq!(db.begin().scan_label("V").unwrap().len(), 0);

        let mut load = db.bulk_load();
        let added = load
            .add_nodes(&["V"], None, &[ints("id", &[1, 2, 3])], 3)
            .unwrap();
        let ids: Vec<_> = added.ids.iter().map(|id| id.unwrap()).collect();
        load.add_relationships("E", &ids[..2], &ids[1..], &[ints("w", &[7, 8])])
            .unwrap();
        let summary = load.commit().unwrap();
        assert_eq!((summary.nodes, summary.relationships), (3, 2));
        let mut tx = db.begin();
        assert_eq!(tx.scan_label("V").unwrap().len(), 3);
        assert_eq!(tx.scan_edges("E").unwrap().len(), 2);
    }

    #[test]
    fn bad_rows_are_reported_and_the_rest_is_added() {
        let db = Database::open_in_memory(Config::default()).unwrap();
        db.create_vertex_table(
            &VertexTableSpec::new("P")
                .property("id", crate::DataType::Int64)
                .primary_key("id"),
        )
        .unwrap();
        let mut load = db.bulk_load();
        let column = (
            "id".to_string(),
            vec![Value::Int(1), Value::from("x"), Value::Int(1), Value::Null],
        );
        let added = load.add_nodes(&["P"], None, &[column], 4).unwrap();
        let rejected: Vec<usize> = added.rejected.iter().map(|(row, _)| *row).collect();
        assert_eq!(rejected, [1, 2, 3]);
        assert!(
            added.rejected[1]
                .1
                .to_string()
                .contains("duplicate primary key 1")
        );
        assert_eq!(load.lookup("P", &Value::Int(1)).unwrap(), added.ids[0]);
        assert_eq!(load.commit().unwrap().nodes, 1);
    }

    #[test]
    fn mismatched_columns_fail_the_call() {
        let db = Database::open_in_memory(Config::default()).unwrap();
        let mut load = db.bulk_load();
        let err = load
            .add_nodes(&["V"], None, &[ints("id", &[1])], 2)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("column 'id' has 1 values for 2 rows")
        );
    }
}
