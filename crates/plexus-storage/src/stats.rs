//! Table statistics: how big each label and relationship type is, for the query planner.
//!
//! WHAT IS COUNTED
//! ===============
//! Only numbers the tables already keep: a row table's `row_count` (one past the highest
//! offset ever reserved), the catalog's table definitions and the extra labels each vertex
//! table has seen. [`Statistics`] holds the catalog and the two table lists (a copy of two
//! short vectors of `Arc`s, taken once per statement); each question then costs
//! O(vertex tables + edge tables) — a few dozen reads for a schema like LDBC SNB's — never
//! visits a row and allocates nothing, so the planner can ask on every statement.
//!
//! ```text
//!   (illustrative numbers)
//!   vertex tables                      edge tables (src, type, dst)
//!   Person  rows 1,500                 (Person)-[KNOWS]->(Person)     rows 14,000
//!   Place   rows 1,460 (+City,         (Person)-[IS_LOCATED_IN]->(Place) rows 1,500
//!                 Country extra)
//!
//!   label Person: 1,500   label City: 1,460 (Place may carry it)   all vertices: 2,960
//!   type IS_LOCATED_IN: 1,500 edges, 1,500 possible sources, 1,460 possible targets
//!     → average out-degree 1.0, average in-degree 1.03
//! ```
//!
//! ACCURACY
//! ========
//! The counts are upper bounds, not a snapshot: a row count includes rows deleted since,
//! rows of aborted transactions (holes) and rows reserved by transactions still running, and
//! a label carried as an extra label is counted with every row of each table that ever
//! installed it. That is the right side to err on for a planner choosing where to start, and
//! it costs nothing; the counts decide only the order of work, never which rows a query
//! returns.
//!
//! DISTINCT VALUES
//! ===============
//! A secondary index is an ordered map from value to rows per table, so the number of
//! distinct values it holds is its map's length, read in O(1) per table. The planner divides
//! a label's (or type's) count by it to estimate what an equality seek finds. It too errs
//! high on values: values no kept version holds any more stay until pruned, and a value held
//! in two tables is counted twice — so an equality looks more selective than it is, which
//! favours the per-row seek over hashing the whole label, a bounded loss either way.

use crate::catalog::{Catalog, IndexTarget, VertexTableDef};
use crate::indexcache::IndexCacheStats;
use crate::rowcache::RowCacheStats;
use crate::store::{EdgeTable, Storage, VertexTable};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The counts behind the average degree of one relationship type (or of all relationships).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EdgeTypeStatistics {
    pub edges: u64,
    /// Vertices of the tables the edges leave from (the denominator of the average
    /// out-degree).
    pub sources: u64,
    /// Vertices of the tables the edges arrive at (of the average in-degree).
    pub targets: u64,
}

/// Sizes and byte counters of the topology's disk tier and of the two caches, read at one
/// moment (`Storage::storage_stats`). A plain data record: its fields are the interface.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StorageStats {
    /// Bytes in topology memtables (active and frozen).
    pub memtable_bytes: u64,
    /// Bytes in current CSR run files.
    pub run_bytes: u64,
    /// Bytes written by flushes (memtables → level-1 runs).
    pub flushed_bytes: u64,
    /// Level-1 runs written by flushes (`flushed_bytes / flushed_runs`: average flush run).
    pub flushed_runs: u64,
    /// Bytes written by merges.
    pub merged_bytes: u64,
    /// Row chunks held in memory and spilled (`Config::row_cache_bytes`; see
    /// `rowcache`).
    pub row_cache: RowCacheStats,
    /// Primary-key and secondary index entries held in memory and spilled to runs
    /// (`Config::index_cache_bytes`; see `indexcache`).
    pub index_cache: IndexCacheStats,
    /// Commits installed since open — every writing transaction, whoever ran it (a
    /// connection, an embedding program, a bulk load, the PostgreSQL mirror); read-only
    /// transactions install nothing.
    pub installed_commits: u64,
    /// Bytes the WAL wrote to its segment files since open.
    pub wal_written_bytes: u64,
    /// fsyncs of WAL segment files since open (group commit: one per flushed group).
    pub wal_fsyncs: u64,
}

/// Sizes of labels and relationship types, asked by name (see the module doc).
pub struct Statistics {
    catalog: Arc<Catalog>,
    vertex_tables: Vec<Arc<VertexTable>>,
    edge_tables: Vec<Arc<EdgeTable>>,
}

impl Storage {
    /// The tables to answer [`Statistics`] questions from, as they are now.
    pub fn statistics(&self) -> Statistics {
        Statistics {
            catalog: self.catalog(),
            vertex_tables: self.vertex_tables(),
            edge_tables: self.edge_tables(),
        }
    }

    /// The disk tier's sizes and counters and the caches' figures, as they are now.
    pub fn storage_stats(&self) -> StorageStats {
        let lsm = self.lsm_stats();
        let wal = self.wal_stats();
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StorageStats {
            memtable_bytes: self.memtable_bytes() as u64,
            run_bytes: self.run_bytes() as u64,
            flushed_bytes: load(&lsm.flushed_bytes),
            flushed_runs: load(&lsm.flushed_runs),
            merged_bytes: load(&lsm.merged_bytes),
            row_cache: self.row_cache_stats(),
            index_cache: self.index_cache_stats(),
            installed_commits: self.installed_commits(),
            wal_written_bytes: wal.written_bytes,
            wal_fsyncs: wal.fsyncs,
        }
    }
}

fn rows(table: &VertexTable) -> u64 {
    u64::from(table.rows.row_count())
}

impl Statistics {
    /// Every vertex row of every table.
    pub fn vertices(&self) -> u64 {
        self.vertex_tables.iter().map(|t| rows(t)).sum()
    }

    /// Vertices that may carry `label` (an upper bound, see ACCURACY).
    pub fn label_vertices(&self, label: &str) -> u64 {
        self.carriers(label).map(|(t, _)| rows(t)).sum()
    }

    /// The property that is the primary key of every table whose vertices may carry `label`,
    /// if they all share one: an equality on it finds at most one vertex per table.
    pub fn label_primary_key(&self, label: &str) -> Option<&str> {
        let mut keys = self.carriers(label).map(|(_, def)| {
            def.primary_key
                .map(|i| self.catalog.prop_name(def.properties[i].key))
        });
        let first = keys.next()??;
        keys.all(|key| key == Some(first)).then_some(first)
    }

    /// The name of the secondary index on `label`'s vertices by property `key`, if any: an
    /// equality on it reads the vertices holding one value instead of all of the label's.
    pub fn label_index(&self, label: &str, key: &str) -> Option<&str> {
        let label = self.catalog.labels.id(label)?;
        self.index_on(IndexTarget::Label(label), key)
    }

    /// The name of the secondary index on the edges of type `edge_type` by property `key`, if
    /// any.
    pub fn edge_type_index(&self, edge_type: &str, key: &str) -> Option<&str> {
        let ty = self.catalog.edge_types.id(edge_type)?;
        self.index_on(IndexTarget::EdgeType(ty), key)
    }

    /// The distinct values of `key` among `label`'s vertices as its secondary index holds
    /// them (summed over the tables that may carry the label), or `None` without a ready
    /// index on every such table. `label_vertices / distinct` estimates the vertices one
    /// value finds (see DISTINCT VALUES).
    pub fn label_index_distinct_values(&self, label: &str, key: &str) -> Option<u64> {
        let key = self.catalog.prop_keys.id(key)?;
        let mut tables = self.carriers(label).peekable();
        tables.peek()?;
        tables
            .map(|(table, _)| table.indexes.distinct_values(key))
            .sum()
    }

    /// The distinct values of `key` among the edges of type `edge_type` (as
    /// [`label_index_distinct_values`](Self::label_index_distinct_values)).
    pub fn edge_type_index_distinct_values(&self, edge_type: &str, key: &str) -> Option<u64> {
        let ty = self.catalog.edge_types.id(edge_type)?;
        let key = self.catalog.prop_keys.id(key)?;
        let of_type = |t: &&Arc<EdgeTable>| t.def.edge_type == ty;
        let mut tables = self.edge_tables.iter().filter(of_type).peekable();
        tables.peek()?;
        tables.map(|table| table.indexes.distinct_values(key)).sum()
    }

    fn index_on(&self, target: IndexTarget, key: &str) -> Option<&str> {
        let key = self.catalog.prop_keys.id(key)?;
        Some(self.catalog.index_on(target, key)?.name.as_str())
    }

    /// The tables whose vertices may carry `label`: its own and those that installed it as an
    /// extra label.
    fn carriers(&self, label: &str) -> impl Iterator<Item = (&VertexTable, &VertexTableDef)> {
        let id = self.catalog.labels.id(label);
        self.vertex_tables.iter().filter_map(move |table| {
            let id = id?;
            // A table published before the catalog that defines it is empty yet.
            let def = self.catalog.vertex_tables.get(table.id as usize)?;
            let carries = def.label == id || table.may_carry_extra_label(id);
            carries.then_some((&**table, def))
        })
    }

    /// Edges of type `name` and the vertices of the tables they leave and reach; with `None`,
    /// every edge and every vertex.
    pub fn edge_type(&self, name: Option<&str>) -> EdgeTypeStatistics {
        let Some(name) = name else {
            let vertices = self.vertices();
            return EdgeTypeStatistics {
                edges: self.edge_tables.iter().map(|t| edge_rows(t)).sum(),
                sources: vertices,
                targets: vertices,
            };
        };
        let Some(ty) = self.catalog.edge_types.id(name) else {
            return EdgeTypeStatistics::default();
        };
        let of_type = || {
            self.edge_tables
                .iter()
                .filter(move |t| t.def.edge_type == ty)
        };
        // Each end table counted once, however many edge tables of the type share it.
        let ends = |end: fn(&EdgeTable) -> u32| -> u64 {
            self.vertex_tables
                .iter()
                .filter(|v| of_type().any(|e| end(e) == v.id))
                .map(|v| rows(v))
                .sum()
        };
        EdgeTypeStatistics {
            edges: of_type().map(|t| edge_rows(t)).sum(),
            sources: ends(|e| e.def.src),
            targets: ends(|e| e.def.dst),
        }
    }
}

fn edge_rows(table: &EdgeTable) -> u64 {
    u64::from(table.rows.row_count())
}
