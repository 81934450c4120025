//! Plexus transactions: the timestamp oracle, snapshots, private write sets, optimistic
//! validation (snapshot isolation and serializable) and the commit pipeline.
//!
//! - [`oracle`]: visible timestamp and the registry of active readers (the GC horizon);
//! - [`transaction`]: the read/write API with read-your-writes;
//! - [`write_set`]: buffered writes and their redo record;
//! - [`validation`]: commit summaries, read sets, what conflicts and what does not;
//! - [`manager`]: the commit pipeline, checkpoints;
//! - [`snapshot`]: `GraphSnapshot`, the pinned read-only view for analytics;
//! - [`external`]: read-only graphs outside the storage (attached GraphAr), read through a
//!   `Transaction`;
//! - [`schema`]: declaring vertex and edge tables, creating and dropping indexes.
//!
//! Storage is reached through this crate only (THE BOUNDARY in `plexus_storage`): the layers
//! above read through [`Transaction`] and [`GraphSnapshot`], change the schema through
//! [`schema`], and run maintenance and read statistics through [`TxnManager`];
//! `TxnManager::storage` is private to this crate.

pub mod external;
pub mod manager;
pub mod oracle;
mod protection;
pub mod schema;
pub mod snapshot;
pub mod staged_keys;
pub mod transaction;
pub mod validation;
pub mod write_set;

pub use external::{ExternalEdgeTable, ExternalGraph, ExternalVertexTable};
pub use manager::TxnManager;
/// What a secondary-index seek asks for (see [`Transaction::seek_by_index`] and
/// [`Transaction::seek_edges_by_index`]).
pub use plexus_storage::KeyRange;
/// The planner's table statistics and the disk tier's figures (defined by storage, read
/// through [`TxnManager::statistics`] and [`TxnManager::storage_stats`]).
pub use plexus_storage::{EdgeTypeStatistics, Statistics, StorageStats};
/// A typed bulk read of one property (see [`Transaction::vertex_typed_properties_many`]).
pub use plexus_storage::{TypedProps, TypedValues, Zone};
pub use protection::{Protection, Protections};
pub use schema::{
    IndexCreated, IndexOn, VertexTableSpec, create_edge_table, create_index, create_index_as,
    create_vertex_table, drop_index,
};
pub use snapshot::GraphSnapshot;
pub use transaction::{CarriedReads, StagedVertices, Transaction};

use plexus_types::IsolationLevel;
use std::sync::Arc;

/// Starts a transaction at the current visible timestamp.
pub fn begin(manager: &Arc<TxnManager>, isolation: IsolationLevel) -> Transaction {
    Transaction::begin(manager.clone(), isolation)
}

/// Starts a read-only transaction over an external graph (see [`external`]).
pub fn begin_external(manager: &Arc<TxnManager>, graph: Arc<dyn ExternalGraph>) -> Transaction {
    Transaction::begin_external(manager.clone(), graph)
}

/// Pins a read-only snapshot at the current visible timestamp.
pub fn snapshot(manager: &Arc<TxnManager>) -> GraphSnapshot {
    GraphSnapshot::pin(manager.clone())
}
