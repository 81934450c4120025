//! Conflict detection: commit summaries, read sets and validation (backward OCC).
//!
//! Every committed read-write transaction leaves a [`CommitSummary`]: which items it wrote
//! (properties, label sets, creations, deletions), which adjacencies and label memberships it
//! changed and which primary keys it inserted. A committing transaction T with start timestamp
//! s checks its own writes — and under SERIALIZABLE its reads — against the summaries of every
//! transaction that committed after s.
//!
//! SNAPSHOT ISOLATION (first committer wins)
//! =========================================
//! T aborts if a later commit wrote the same property or label set, deleted an entity T writes,
//! wrote an entity T deletes, deleted an endpoint of an edge T creates, changed the adjacency of
//! a vertex T deletes, or inserted a primary key T inserts. Appending edges to the same vertex is
//! *not* a conflict: edge logs are append-only, so hubs do not serialise writers.
//!
//! SERIALIZABLE
//! ============
//! Additionally, T aborts if a later commit changed anything T read: an item (a property, a
//! label set, an entity's existence) or a predicate — a label scan (membership of the label
//! changed), an adjacency read of vertex v by edge type and direction (an edge was added to or
//! deleted from it: the phantom case), a primary-key lookup, an edge-type scan (an edge of the
//! type was created or deleted), an edge index seek (also: a property of the seek's key was
//! written on an edge of the type, which may have moved it into the sought range). Surviving
//! transactions are serialisable in commit order: T's reads are still valid at its commit
//! timestamp. Read-only transactions are never validated; they are serialised at their start
//! timestamp, which sees a prefix of that order.
//!
//! HISTORY BOUND
//! =============
//! Summaries are dropped once no active transaction started before them. At most
//! `MAX_RETAINED_SUMMARIES` are kept; a transaction older than the oldest retained one aborts
//! with `AbortReason::TooOld` (retryable).

use crate::staged_keys::StagedKeys;
use plexus_storage::Catalog;
use plexus_types::{
    AbortReason, EdgeId, EdgeTypeId, Error, LabelId, PropKeyId, Result, Timestamp, Value, VertexId,
    VertexTableId,
};
use std::collections::HashSet;
use std::sync::Arc;

pub const MAX_RETAINED_SUMMARIES: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Entity {
    Vertex(VertexId),
    Edge(EdgeId),
}

#[derive(Default, Debug)]
pub struct CommitSummary {
    pub ts: Timestamp,
    /// WAL position just past this commit's record.
    pub lsn: u64,
    pub props: HashSet<(Entity, PropKeyId)>,
    pub labels_of: HashSet<VertexId>,
    pub created: HashSet<Entity>,
    pub deleted: HashSet<Entity>,
    /// Entities with any property or label written, or deleted.
    pub touched: HashSet<Entity>,
    /// (vertex, edge type, outgoing) whose adjacency changed.
    pub adjacency: HashSet<(VertexId, EdgeTypeId, bool)>,
    pub adjacency_any: HashSet<(VertexId, bool)>,
    pub label_members: HashSet<LabelId>,
    pub pk: HashSet<(VertexTableId, Value), ahash::RandomState>,
    /// A bulk load's primary keys, shared with the load (see `staged_keys`), not copied.
    pub staged_pk: Option<Arc<StagedKeys>>,
    /// Types of the edges created or deleted.
    pub edge_type_members: HashSet<EdgeTypeId>,
    /// (edge type, property key) of every edge property written.
    pub edge_type_props: HashSet<(EdgeTypeId, PropKeyId)>,
    /// (vertex table, property key) of every vertex property written.
    pub table_props: HashSet<(VertexTableId, PropKeyId)>,
    /// A bulk load's adjacency, coarsely: (vertex table, edge type, outgoing) of every side
    /// it added edges to (see `SummarySource::build_bulk`) — or a commit's that created more
    /// than `COARSE_ADJACENCY_EDGES` edges. Empty for other commits.
    pub bulk_adjacency: HashSet<(VertexTableId, EdgeTypeId, bool)>,
}

impl CommitSummary {
    /// Whether this commit claimed primary key `key` of `table`.
    pub fn claims_pk(&self, table: VertexTableId, key: &Value) -> bool {
        self.pk.contains(&(table, key.clone()))
            || (self.staged_pk.as_ref()).is_some_and(|staged| staged.contains(table, key))
    }

    pub fn record_prop(&mut self, entity: Entity, key: PropKeyId) {
        self.props.insert((entity, key));
        self.touched.insert(entity);
    }

    /// Whether a bulk load in this commit added edges on side `out` of `v`'s table.
    fn bulk_adjacency_any(&self, v: VertexId, out: bool) -> bool {
        self.bulk_adjacency
            .iter()
            .any(|&(table, _, o)| table == v.table && o == out)
    }

    pub fn record_adjacency(&mut self, src: VertexId, ty: EdgeTypeId, dst: VertexId) {
        self.adjacency.insert((src, ty, true));
        self.adjacency.insert((dst, ty, false));
        self.adjacency_any.insert((src, true));
        self.adjacency_any.insert((dst, false));
    }
}

/// What a serializable transaction read.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum ReadItem {
    PrimaryKey(VertexTableId, Value),
    Prop(Entity, PropKeyId),
    /// All properties of an entity (reading the whole property map).
    AllProps(Entity),
    Labels(VertexId),
    Exists(Entity),
    LabelScan(LabelId),
    Adjacency(VertexId, EdgeTypeId, bool),
    AdjacencyAny(VertexId, bool),
    /// The set of edges of a type.
    EdgeTypeScan(EdgeTypeId),
    /// The set of all edges, whatever their type (a count of them).
    AllEdges,
    /// The values of a property on the edges of a type (an index seek on them).
    EdgeTypeProp(EdgeTypeId, PropKeyId),
    /// The values of a property on the vertices of a table (an index seek that did not read
    /// the vertices it skipped).
    TableProp(VertexTableId, PropKeyId),
}

/// A transaction's writes, seen as conflict keys (built from the write set).
#[derive(Default, Debug)]
pub struct WriteKeys {
    pub props: Vec<(Entity, PropKeyId)>,
    pub labels_of: Vec<VertexId>,
    pub deleted: Vec<Entity>,
    pub new_edge_endpoints: Vec<VertexId>,
    pub pk_inserts: Vec<(VertexTableId, Value)>,
}

fn describe(entity: Entity) -> String {
    match entity {
        Entity::Vertex(v) => format!("vertex {v}"),
        Entity::Edge(e) => format!("edge {e}"),
    }
}

fn write_conflict(item: String) -> Error {
    Error::Aborted(AbortReason::WriteConflict { item })
}

fn read_conflict(item: String) -> Error {
    Error::Aborted(AbortReason::ReadValidation { item })
}

/// First-committer-wins check of `mine` against one later commit.
pub fn check_writes(mine: &WriteKeys, theirs: &CommitSummary, catalog: &Catalog) -> Result<()> {
    for &(entity, key) in &mine.props {
        if theirs.props.contains(&(entity, key)) || theirs.deleted.contains(&entity) {
            return Err(write_conflict(format!(
                "property '{}' of {}",
                catalog.prop_name(key),
                describe(entity)
            )));
        }
    }
    for v in &mine.labels_of {
        if theirs.labels_of.contains(v) || theirs.deleted.contains(&Entity::Vertex(*v)) {
            return Err(write_conflict(format!("labels of vertex {v}")));
        }
    }
    for &entity in &mine.deleted {
        let adjacency_changed = match entity {
            Entity::Vertex(v) => {
                theirs.adjacency_any.contains(&(v, true))
                    || theirs.adjacency_any.contains(&(v, false))
                    || theirs.bulk_adjacency_any(v, true)
                    || theirs.bulk_adjacency_any(v, false)
            }
            Entity::Edge(_) => false,
        };
        if theirs.touched.contains(&entity) || adjacency_changed {
            return Err(write_conflict(format!(
                "{} (deleted here, changed concurrently)",
                describe(entity)
            )));
        }
    }
    for v in &mine.new_edge_endpoints {
        if theirs.deleted.contains(&Entity::Vertex(*v)) {
            return Err(write_conflict(format!(
                "vertex {v} (new edge's endpoint was deleted concurrently)"
            )));
        }
    }
    for (table, key) in &mine.pk_inserts {
        if theirs.claims_pk(*table, key) {
            return Err(write_conflict(format!(
                "primary key {key} of table '{}'",
                catalog.table_name(*table)
            )));
        }
    }
    Ok(())
}

/// Serializable check of what was read against one later commit.
pub fn check_reads(
    reads: &HashSet<ReadItem>,
    theirs: &CommitSummary,
    catalog: &Catalog,
) -> Result<()> {
    for item in reads {
        let changed = match item {
            ReadItem::PrimaryKey(table, key) => theirs.claims_pk(*table, key),
            &ReadItem::Prop(entity, key) => {
                theirs.props.contains(&(entity, key)) || theirs.deleted.contains(&entity)
            }
            &ReadItem::AllProps(entity) => theirs.touched.contains(&entity),
            &ReadItem::Labels(v) => {
                theirs.labels_of.contains(&v) || theirs.deleted.contains(&Entity::Vertex(v))
            }
            &ReadItem::Exists(entity) => {
                theirs.created.contains(&entity) || theirs.deleted.contains(&entity)
            }
            &ReadItem::LabelScan(label) => theirs.label_members.contains(&label),
            &ReadItem::Adjacency(v, ty, out) => {
                theirs.adjacency.contains(&(v, ty, out))
                    || theirs.bulk_adjacency.contains(&(v.table, ty, out))
            }
            &ReadItem::AdjacencyAny(v, out) => {
                theirs.adjacency_any.contains(&(v, out)) || theirs.bulk_adjacency_any(v, out)
            }
            &ReadItem::EdgeTypeScan(ty) => theirs.edge_type_members.contains(&ty),
            ReadItem::AllEdges => !theirs.edge_type_members.is_empty(),
            &ReadItem::EdgeTypeProp(ty, key) => theirs.edge_type_props.contains(&(ty, key)),
            &ReadItem::TableProp(table, key) => theirs.table_props.contains(&(table, key)),
        };
        if changed {
            return Err(read_conflict(describe_read(item, catalog)));
        }
    }
    Ok(())
}

fn describe_read(item: &ReadItem, catalog: &Catalog) -> String {
    let dir = |out: bool| if out { "outgoing" } else { "incoming" };
    let type_name = |ty: EdgeTypeId| catalog.edge_types.name(ty).unwrap_or("?");
    match item {
        ReadItem::PrimaryKey(t, key) => {
            format!("primary key {key} of table '{}'", catalog.table_name(*t))
        }
        &ReadItem::Prop(e, k) => format!("property '{}' of {}", catalog.prop_name(k), describe(e)),
        &ReadItem::AllProps(e) => format!("properties of {}", describe(e)),
        &ReadItem::Labels(v) => format!("labels of vertex {v}"),
        &ReadItem::Exists(e) => format!("existence of {}", describe(e)),
        &ReadItem::LabelScan(l) => {
            format!("the set of vertices labelled '{}'", catalog.label_name(l))
        }
        &ReadItem::Adjacency(v, ty, out) => {
            format!("{} '{}' edges of vertex {v}", dir(out), type_name(ty))
        }
        &ReadItem::AdjacencyAny(v, out) => format!("{} edges of vertex {v}", dir(out)),
        &ReadItem::EdgeTypeScan(ty) => format!("the set of '{}' edges", type_name(ty)),
        ReadItem::AllEdges => "the set of all edges".to_string(),
        &ReadItem::EdgeTypeProp(ty, key) => format!(
            "property '{}' of '{}' edges",
            catalog.prop_name(key),
            type_name(ty)
        ),
        &ReadItem::TableProp(table, key) => format!(
            "property '{}' of the vertices of table '{}'",
            catalog.prop_name(key),
            catalog.table_name(table)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bulk load's coarse adjacency conflicts with any adjacency read or vertex deletion
    /// on the side of the table it added edges to, and with nothing else.
    #[test]
    fn bulk_adjacency_is_per_table_and_direction() {
        let catalog = Catalog::default();
        let mut load = CommitSummary::default();
        load.bulk_adjacency.insert((0, 7, true));
        let v = VertexId::new(0, 42);
        let other_table = VertexId::new(1, 42);
        let read = |item: ReadItem| check_reads(&HashSet::from([item]), &load, &catalog);
        assert!(read(ReadItem::Adjacency(v, 7, true)).is_err());
        assert!(read(ReadItem::AdjacencyAny(v, true)).is_err());
        assert!(
            read(ReadItem::Adjacency(v, 8, true)).is_ok(),
            "another type"
        );
        assert!(
            read(ReadItem::Adjacency(v, 7, false)).is_ok(),
            "the other direction"
        );
        assert!(read(ReadItem::AdjacencyAny(other_table, true)).is_ok());
        let deletes = |v: VertexId| WriteKeys {
            deleted: vec![Entity::Vertex(v)],
            ..WriteKeys::default()
        };
        assert!(check_writes(&deletes(v), &load, &catalog).is_err());
        assert!(check_writes(&deletes(other_table), &load, &catalog).is_ok());
    }
}
