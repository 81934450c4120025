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

pub mod catalog;
pub mod checkpoint;
pub mod codec;
pub mod fault;
pub mod index;
pub mod indexcache;
pub mod lsm;
pub mod record;
pub mod rowcache;
pub mod rows;
pub mod run;
pub mod stats;
pub mod store;
pub mod topology;
pub mod vfs;
pub mod wal;

pub use catalog::{
    Catalog, CatalogOp, EdgeTableDef, IndexDef, IndexTarget, PropertyDef, VertexTableDef,
};
pub use indexcache::IndexCacheStats;
pub use record::{CommitRecord, WriteOp};
pub use rowcache::RowCacheStats;
pub use stats::{EdgeTypeStatistics, Statistics};
pub use store::{EdgeTable, RecoveryReport, Storage, VertexTable};
pub use vfs::{OsVfs, Vfs};
