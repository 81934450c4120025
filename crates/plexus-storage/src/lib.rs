//! Plexus storage: the committed state of a database and the files that hold it.
//!
//! - [`vfs`]: the file-system seam, with a fault-injecting implementation in [`fault`];
//! - [`catalog`]: labels, property keys, edge types, vertex and edge tables;
//! - [`rows`]: columnar, multi-versioned vertex and edge rows;
//! - [`rowcache`]: bounded memory for rows: cold chunks spilled to a cache file;
//! - [`index`]: secondary property indexes on vertices and edges (lossy value → rows maps,
//!   rebuilt at open);
//! - [`indexcache`]: bounded memory for the primary-key and secondary indexes: cold parts
//!   spilled to sorted runs in scratch files;
//! - [`topology`]: the adjacency memtable with per-vertex version tables;
//! - [`run`]: immutable CSR run files, the disk tier of the topology;
//! - [`lsm`]: memtables + runs per edge table and direction, flushes and merge policies;
//! - [`record`] and [`wal`]: redo records, the log and group commit;
//! - [`checkpoint`]: checkpoint files and the manifest;
//! - [`store`]: `Storage`, which installs commits, answers reads at a timestamp, checkpoints
//!   and recovers;
//! - [`stats`]: row counts per label and relationship type for the query planner.
//!
//! Transactions (snapshots, write sets, validation) live in `plexus-txn`, one layer up.

pub(crate) mod catalog;
pub(crate) mod checkpoint;
pub(crate) mod codec;
pub(crate) mod fault;
pub(crate) mod index;
pub(crate) mod indexcache;
pub(crate) mod lsm;
pub(crate) mod record;
pub(crate) mod rowcache;
pub(crate) mod rows;
pub(crate) mod run;
pub(crate) mod stats;
pub(crate) mod store;
pub(crate) mod topology;
pub(crate) mod vfs;
pub(crate) mod wal;

pub use catalog::{
    Catalog, CatalogOp, EdgeTableDef, HIDDEN_TABLE_LABEL, IndexDef, IndexTarget, PropertyDef,
    Tokens, VertexTableDef, validate_table_def,
};
pub use fault::FaultVfs;
pub use index::{IndexKey, KeyRange};
pub use indexcache::IndexCacheStats;
pub use record::{CommitRecord, WriteOp};
pub use rowcache::RowCacheStats;
pub use rows::RowTable;
pub use run::ColumnSlice;
pub use stats::{EdgeTypeStatistics, Statistics, StorageStats};
pub use store::{EdgeTable, RecoveryReport, Storage, VertexTable, neighbors_in};
pub use topology::segment_vertex_offsets;
pub use vfs::{OsVfs, Vfs};
