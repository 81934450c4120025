//! Plexus storage: the committed state of a database and the files that hold it.
//!
//! MODULES
//! =======
//! - `vfs`: the file-system seam, with a fault-injecting implementation in `fault`;
//! - `catalog`: labels, property keys, edge types, vertex and edge tables;
//! - `rows`: columnar, multi-versioned vertex and edge rows;
//! - `rowcache`: bounded memory for rows: cold chunks spilled to a cache file;
//! - `index`: secondary property indexes on vertices and edges (lossy value → rows maps,
//!   rebuilt at open);
//! - `indexcache`: bounded memory for the primary-key and secondary indexes: cold parts
//!   spilled to sorted runs in scratch files;
//! - `topology`: the adjacency memtable with per-vertex version tables;
//! - `run`: immutable CSR run files, the disk tier of the topology;
//! - `lsm`: memtables + runs per edge table and direction, flushes and merge policies;
//! - `record` and `wal`: redo records, the log and group commit;
//! - `checkpoint`: checkpoint files and the manifest;
//! - `store`: `Storage`, which installs commits, answers reads at a timestamp, checkpoints
//!   and recovers;
//! - `stats`: row counts per label and relationship type for the query planner.
//!
//! Transactions (snapshots, write sets, validation) live in `plexus-txn`, one layer up.
//!
//! THE BOUNDARY
//! ============
//! Every module is private to this crate. What other crates may use is re-exported below,
//! and it is small on purpose: its one client is `plexus-txn` (the facade opens storage,
//! names a few of its data types and hands the rest to the transaction manager; tests of
//! other crates use the same API). Everything in a module — memtable segments, CSR runs,
//! chunk layouts, spill files, WAL framing — can change without touching another crate.
//!
//! What txn gets, and why each exists:
//!
//! - **read at a timestamp.** [`Storage`] hands out [`VertexTable`] and [`EdgeTable`]
//!   (`vertex_table`, `edge_tables`, …); their [`RowTable`] answers existence, labels and
//!   properties at a timestamp (`rows()`), and an edge table visits neighbours
//!   (`visit_neighbors`) and scans segments of vertices (`scan_segment`, optionally with a
//!   run's property column as a [`ColumnSlice`]). [`neighbors_in`] is the neighbour read
//!   over a caller-held schema cache. `Storage` adds the cross-table reads: label and
//!   edge-type scans, index candidates, primary-key lookups, `edges_between`. Readers never
//!   see a version newer than their timestamp; that is the whole isolation contract storage
//!   offers, and txn builds snapshot isolation and serializability on it.
//! - **install a commit.** The commit pipeline reserves row offsets while a transaction runs
//!   (`reserve_row`, bounded by the table's offset limit), then, under its commit lock and in
//!   timestamp order, `install`s a validated [`CommitRecord`] and `log_commit`s it;
//!   durability is `wait_durable` / `durable_ts` / `flush_wal`, and a failed install poisons
//!   the WAL (`poison_wal`, `wal_poisoned`).
//! - **recover.** `Storage::open` loads the last checkpoint and replays the WAL, returning a
//!   [`RecoveryReport`]; `rotate_wal` + `write_checkpoint` take a checkpoint.
//! - **maintenance.** Freezing and flushing memtables (`freeze_all`,
//!   `freeze_read_heavy_memtables`, `maintain_lsm`), version GC and topology compaction
//!   (`maintain`), row-chunk eviction (`evict_rows`, `evict_rows_after_commit`), spill-file
//!   compaction (`compact_spill_now`) and index spills (`spill_indexes`). Storage decides
//!   nothing about *when*: the timestamps that bound GC (the horizon) and the locks that
//!   keep commits out of a freeze belong to txn.
//! - **statistics.** [`Statistics`] for the planner, [`StorageStats`] (with
//!   [`RowCacheStats`] and [`IndexCacheStats`]) for operators.
//! - **catalog and schema changes.** [`Catalog`] with its definitions ([`VertexTableDef`],
//!   [`EdgeTableDef`], [`IndexDef`], …); `change_catalog` applies a [`CatalogOp`] (tokens,
//!   tables), `create_index` / `drop_index` change indexes. Txn wraps them in its schema
//!   operations (`plexus_txn::create_index`, `drop_index`, `create_vertex_table`, …), which
//!   are the only way the layers above change the schema.
//!
//! Types are of two kinds. Handles ([`Storage`], [`VertexTable`], [`EdgeTable`],
//! [`RowTable`]) keep their fields private and offer methods; the methods that change state
//! below a commit (installing, evicting, GC) stay `pub(crate)`. Plain data records keep
//! `pub` fields, because the fields are the interface: the catalog and its definitions,
//! [`CommitRecord`] / [`WriteOp`], [`RecoveryReport`], [`StorageStats`] and the cache
//! statistics, [`EdgeTypeStatistics`].
//!
//! - **install a bulk load.** `install_bulk` installs one large commit's rows, writes its
//!   adjacency straight into CSR runs and makes it durable with a checkpoint instead of the
//!   WAL (see `store::bulk`); `COPY`, `plexus import` and Python's loaders reach
//!   it through `plexus_txn`'s bulk commit.

mod catalog;
mod checkpoint;
mod codec;
mod fault;
mod index;
mod indexcache;
mod lsm;
mod origin;
mod record;
mod rowcache;
mod rows;
mod run;
mod stats;
mod store;
mod topology;
mod vfs;
mod wal;

pub use catalog::{
    Catalog, CatalogOp, EdgeTableDef, HIDDEN_TABLE_LABEL, IndexDef, IndexTarget, PropertyDef,
    Tokens, VertexTableDef, validate_table_def,
};
pub use fault::FaultVfs;
pub use index::{IndexKey, KeyRange};
pub use indexcache::IndexCacheStats;
pub use origin::ORIGIN_NAME_MAX_BYTES;
pub use record::{CommitRecord, EdgeBatch, VertexBatch, WriteOp};
pub use rowcache::RowCacheStats;
pub use rows::{RowTable, TypedProps, TypedValues, Zone};
pub use run::ColumnSlice;
pub use stats::{EdgeTypeStatistics, Statistics, StorageStats};
pub use store::{EdgeTable, RecoveryReport, Storage, VertexTable, neighbors_in};
pub use topology::segment_vertex_offsets;
pub use vfs::{OsVfs, Vfs};
