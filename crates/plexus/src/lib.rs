//! Plexus: a hybrid transactional / graph-analytical property-graph database.
//!
//! This facade crate is the embedded API:
//!
//! ```
//! use plexus::{Config, Database, Direction, Value};
//! let dir = tempfile_dir();
//! let db = Database::open(&dir, Config::default()).unwrap();
//! let mut tx = db.begin();
//! let ada = tx.create_vertex(&["Person"], &[("name", Value::from("Ada"))]).unwrap();
//! let bob = tx.create_vertex(&["Person"], &[("name", Value::from("Bob"))]).unwrap();
//! tx.create_edge(ada, "KNOWS", bob, &[("since", Value::from(2020))]).unwrap();
//! tx.commit().unwrap();
//!
//! let mut tx = db.begin();
//! let friends = tx.neighbors(ada, Some("KNOWS"), Direction::Out).unwrap();
//! assert_eq!(friends.len(), 1);
//! assert_eq!(tx.vertex_property(friends[0].1, "name").unwrap(), Some(Value::from("Bob")));
//! # drop(tx); drop(db); std::fs::remove_dir_all(&dir).unwrap();
//! # fn tempfile_dir() -> std::path::PathBuf {
//! #     let d = std::env::temp_dir().join(format!("plexus-doc-{}", std::process::id()));
//! #     let _ = std::fs::remove_dir_all(&d); d
//! # }
//! ```
//!
//! A database is a directory: `MANIFEST`, WAL segments, checkpoint files, and a `LOCK` file
//! that one process holds while the database is open. Durability follows
//! [`Config::durability`]; see `plexus_storage::wal` for what each mode guarantees.

pub mod admin;
mod attached;
pub mod bulk;
mod catalog_procedures;
mod connection;
mod copy_command;
mod database;
mod extensions;
mod follower_status;
mod index_commands;
pub mod metrics;
mod procedures;
mod routines;
mod schema;
pub mod settings;
mod table_commands;

/// Analytics on pinned snapshots: `algo::pagerank(&snapshot, &projection, &params)`, ….
pub use plexus_algo as algo;

/// The README's Rust examples run as doc tests, so the README cannot drift from the API.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use attached::{GRAPH_COLUMNS, GraphFormat};
pub use bulk::{BulkLoad, BulkSummary};
pub use connection::{Connection, QueryStream, Rows};
pub use database::{Database, OriginClaim};
pub use extensions::DatabaseHandle;
pub use follower_status::{MIRROR_STATUS_COLUMNS, StatusFn};
pub use plexus_exec::{
    CypherValueMap, ErrorClass, INTERRUPTED, Interrupt, NodeData, ParallelConfig, Params, Phase,
    Procedure, ProcedureFn, QueryError, QueryResult, RelData, Value as CypherValue,
};

/// Temporal values as Cypher returns them: the front ends (Bolt, Python, the TCK) convert
/// them to and from their own forms with these. `text` prints a temporal or duration value
/// as Cypher's `toString` does.
pub mod temporal {
    pub use plexus_value::format::plain_text;
    pub use plexus_value::temporal::{Duration, Temporal, civil_from_days, days_from_civil};
    pub use plexus_value::temporal_fns::text;
}

/// Hooks for tests of the engine's own behaviour, not for applications.
///
/// An application that wants a database without files uses [`Database::open_in_memory`];
/// one that wants maintenance done now uses [`admin`]. What is here exists to break or watch
/// the engine:
/// - [`FaultVfs`](testing::FaultVfs): an in-memory [`Vfs`] that injects faults — a crash at
///   the n-th sync (then [`after_crash`](testing::FaultVfs::after_crash) is the disk a
///   restarted process finds, optionally with torn tails), failing or short writes — for
///   `Database::open_with_vfs`; its module documentation (`plexus_storage::fault`) gives the
///   model;
/// - [`live_parallel_workers`](testing::live_parallel_workers): parallel query workers alive
///   in this process (they must be joined when a stream ends).
pub mod testing {
    pub use plexus_exec::exec::live_parallel_workers;
    pub use plexus_storage::FaultVfs;
}
pub use plexus_storage::{IndexCacheStats, RecoveryReport, RowCacheStats, StorageStats, Vfs};
pub use plexus_txn::{
    ExternalEdgeTable, ExternalGraph, ExternalVertexTable, GraphSnapshot, KeyRange, Transaction,
    VertexTableSpec,
};
pub use plexus_types::{
    AbortReason, Config, DataType, Direction, DurabilityMode, EdgeId, EdgeTableId, Error,
    IsolationLevel, MergePolicy, Result, RunPacking, TemporalValue, Timestamp, Value, VertexId,
    VertexTableId,
};
pub use plexus_value::PathValue;
pub use procedures::algo_procedures;
pub use schema::{
    EdgeTableSchema, IndexEntity, IndexSchema, PropertySchema, Schema, VertexTableSchema,
};
pub use settings::{Scope as SettingScope, SettingRow, Settings, Source as SettingSource};
