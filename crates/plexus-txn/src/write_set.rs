//! A transaction's private write set, and its translation into a redo record and conflict keys.
//!
//! Writes are buffered here until commit; storage never holds uncommitted data. New vertices
//! and edges get their ids (table offsets) reserved when they are created, so the ids a
//! transaction hands out stay valid after commit and are reproduced exactly by WAL replay.

use crate::staged_keys::StagedKeys;
use crate::validation::{CommitSummary, Entity, WriteKeys};
use plexus_storage::{Catalog, CommitRecord, EdgeBatch, HIDDEN_TABLE_LABEL, VertexBatch, WriteOp};
use plexus_types::{EdgeId, LabelId, PropKeyId, Value, VertexId, VertexTableId};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

#[derive(Default, Debug, Clone)]
pub struct NewVertex {
    /// Labels beyond the table's own.
    pub labels: Vec<LabelId>,
    pub props: PropMap,
}

#[derive(Debug, Clone)]
pub struct NewEdge {
    pub src: VertexId,
    pub dst: VertexId,
    pub props: PropMap,
}

/// A new element's properties, sorted by key, each once. A vertex has a handful: a vector
/// costs one small allocation where a B-tree costs a ~300-byte node per element — most of a
/// bulk load's memory for its nodes.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct PropMap(Vec<(PropKeyId, Value)>);

impl PropMap {
    /// An empty map with room for `n` properties (a vector grown from empty reserves four).
    pub fn with_capacity(n: usize) -> PropMap {
        PropMap(Vec::with_capacity(n))
    }

    pub fn get(&self, key: &PropKeyId) -> Option<&Value> {
        let at = self.0.binary_search_by_key(key, |(k, _)| *k).ok()?;
        Some(&self.0[at].1)
    }

    /// Sets `key` to `value`; the previous value.
    pub fn insert(&mut self, key: PropKeyId, value: Value) -> Option<Value> {
        match self.0.binary_search_by_key(&key, |(k, _)| *k) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, value)),
            Err(at) => {
                self.0.insert(at, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &PropKeyId) -> Option<Value> {
        let at = self.0.binary_search_by_key(key, |(k, _)| *k).ok()?;
        Some(self.0.remove(at).1)
    }

    /// The properties in key order.
    pub fn iter(&self) -> impl Iterator<Item = (PropKeyId, &Value)> {
        self.0.iter().map(|(k, v)| (*k, v))
    }

    /// The properties in key order.
    pub fn into_vec(self) -> Vec<(PropKeyId, Value)> {
        self.0
    }
}

/// A set of vertex ids as one bitset per vertex table, indexed by table id (ids are dense and
/// few) and offset: a membership test is two array reads, what bulk loads make for every edge
/// endpoint.
#[derive(Default, Debug, Clone)]
pub(crate) struct VertexBits(Vec<Vec<u64>>);

impl VertexBits {
    pub(crate) fn insert(&mut self, v: VertexId) {
        let table = v.table as usize;
        if self.0.len() <= table {
            self.0.resize_with(table + 1, Vec::new);
        }
        let bits = &mut self.0[table];
        let word = v.offset as usize / 64;
        if bits.len() <= word {
            bits.resize(word + 1, 0);
        }
        bits[word] |= 1 << (v.offset % 64);
    }

    pub(crate) fn remove(&mut self, v: VertexId) {
        let word = (self.0.get_mut(v.table as usize))
            .and_then(|bits| bits.get_mut(v.offset as usize / 64));
        if let Some(word) = word {
            *word &= !(1 << (v.offset % 64));
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().flatten().all(|&word| word == 0)
    }

    pub(crate) fn contains(&self, v: VertexId) -> bool {
        (self.0.get(v.table as usize))
            .and_then(|bits| bits.get(v.offset as usize / 64))
            .is_some_and(|word| word & (1 << (v.offset % 64)) != 0)
    }
}

#[derive(Default, Debug, Clone)]
pub struct WriteSet {
    /// Changed only through `add_new_vertex` / `remove_new_vertex`, which keep
    /// `new_vertex_bits` in step.
    pub new_vertices: BTreeMap<VertexId, NewVertex>,
    /// The offsets of `new_vertices` per vertex table, as bitsets: every edge a transaction
    /// creates tests both endpoints for membership, and a bulk load of millions of edges
    /// spent a quarter of its time in the map's lookups.
    new_vertex_bits: VertexBits,
    /// Property writes to vertices that existed at the start; `None` removes.
    pub vertex_props: BTreeMap<(VertexId, PropKeyId), Option<Value>>,
    /// New complete extra-label sets of vertices that existed at the start, with the old set.
    pub vertex_labels: BTreeMap<VertexId, (Vec<LabelId>, Vec<LabelId>)>,
    /// Deleted vertices that existed at the start, with all their labels.
    pub deleted_vertices: BTreeMap<VertexId, Vec<LabelId>>,
    pub new_edges: BTreeMap<EdgeId, NewEdge>,
    pub edge_props: BTreeMap<(EdgeId, PropKeyId), Option<Value>>,
    pub deleted_edges: BTreeMap<EdgeId, (VertexId, VertexId)>,
    /// Primary keys claimed by this transaction (inserted or updated to).
    pub pk_claims: HashMap<(VertexTableId, Value), VertexId, ahash::RandomState>,
    /// Replication origins this transaction's writes bring up to a source position.
    pub origins: BTreeMap<String, u64>,
    /// Vertices a bulk load staged as columns (`Transaction::stage_vertices`), with their
    /// primary keys in `staged_keys`: committed only by the bulk pipeline, invisible to the
    /// transaction's own reads but for key lookups and edge staging.
    pub vertex_batches: Vec<VertexBatch>,
    pub staged_keys: StagedKeys,
    /// Edges a bulk load staged as columns (`Transaction::stage_edges`): committed only by
    /// the bulk pipeline, invisible to the transaction's own reads.
    pub edge_batches: Vec<EdgeBatch>,
}

impl WriteSet {
    /// Whether no vertex was created, deleted or changed (labels, properties).
    pub fn no_vertex_changes(&self) -> bool {
        self.new_vertices.is_empty()
            && self.vertex_batches.is_empty()
            && self.vertex_props.is_empty()
            && self.vertex_labels.is_empty()
            && self.deleted_vertices.is_empty()
    }

    pub fn is_empty(&self) -> bool {
        self.new_vertices.is_empty()
            && self.vertex_props.is_empty()
            && self.vertex_labels.is_empty()
            && self.deleted_vertices.is_empty()
            && self.new_edges.is_empty()
            && self.edge_props.is_empty()
            && self.deleted_edges.is_empty()
            && self.origins.is_empty()
            && self.vertex_batches.is_empty()
            && self.edge_batches.is_empty()
    }

    /// Whether staged batches wait for a bulk commit.
    pub fn has_batches(&self) -> bool {
        !self.vertex_batches.is_empty() || !self.edge_batches.is_empty()
    }

    pub fn add_new_vertex(&mut self, id: VertexId, vertex: NewVertex) {
        self.new_vertex_bits.insert(id);
        self.new_vertices.insert(id, vertex);
    }

    pub fn remove_new_vertex(&mut self, id: VertexId) -> Option<NewVertex> {
        self.new_vertex_bits.remove(id);
        self.new_vertices.remove(&id)
    }

    /// Whether `id` was created by this transaction (and not deleted since).
    pub fn is_new_vertex(&self, id: VertexId) -> bool {
        let found = self.new_vertex_bits.contains(id);
        debug_assert_eq!(found, self.new_vertices.contains_key(&id));
        found
    }

    pub fn forget_vertex_writes(&mut self, v: VertexId) {
        self.vertex_props.retain(|(x, _), _| *x != v);
        self.vertex_labels.remove(&v);
        self.pk_claims.retain(|_, x| *x != v);
    }

    pub fn forget_edge_writes(&mut self, e: EdgeId) {
        self.edge_props.retain(|(x, _), _| *x != e);
    }

    /// The redo record (timestamp filled in by the commit pipeline) and the write keys.
    pub fn into_record(self) -> (CommitRecord, WriteKeys, SummarySource) {
        self.into_record_for(false)
    }

    /// [`into_record`](Self::into_record) for `TxnManager::commit_bulk`, which reads no
    /// primary-key write keys and summarises creations per table and label
    /// ([`SummarySource::build_bulk`]): the keys are moved, not copied twice, and only the
    /// creations that add a table or labels are listed — a load of millions of nodes would
    /// otherwise hold three more entries per node through its install.
    pub fn into_bulk_record(self) -> (CommitRecord, WriteKeys, SummarySource) {
        self.into_record_for(true)
    }

    fn into_record_for(self, bulk: bool) -> (CommitRecord, WriteKeys, SummarySource) {
        let mut ops = Vec::with_capacity(self.new_vertices.len() + self.new_edges.len());
        let mut keys = WriteKeys::default();
        let mut source = SummarySource::default();
        if bulk {
            source.pk = (self.pk_claims.into_iter())
                .map(|((table, key), v)| (table, key, v))
                .collect();
        } else {
            for ((table, key), v) in &self.pk_claims {
                keys.pk_inserts.push((*table, key.clone()));
                source.pk.push((*table, key.clone(), *v));
            }
        }
        let mut last_table = None;
        for (id, nv) in self.new_vertices {
            if !bulk || !nv.labels.is_empty() || last_table != Some(id.table) {
                source.created_vertices.push((id, nv.labels.clone()));
                last_table = Some(id.table);
            }
            ops.push(WriteOp::CreateVertex {
                id,
                labels: nv.labels,
                props: nv.props.into_vec(),
            });
        }
        for (id, (old, new)) in self.vertex_labels {
            keys.labels_of.push(id);
            source.label_changes.push((id, old, new.clone()));
            ops.push(WriteOp::SetLabels { id, labels: new });
        }
        for ((id, key), value) in self.vertex_props {
            keys.props.push((Entity::Vertex(id), key));
            ops.push(WriteOp::SetVertexProp { id, key, value });
        }
        for (id, e) in self.new_edges {
            keys.new_edge_endpoints.extend([e.src, e.dst]);
            source.created_edges.push((id, e.src, e.dst));
            ops.push(WriteOp::CreateEdge {
                id,
                src: e.src,
                dst: e.dst,
                props: e.props.into_vec(),
            });
        }
        for ((id, key), value) in self.edge_props {
            keys.props.push((Entity::Edge(id), key));
            ops.push(WriteOp::SetEdgeProp { id, key, value });
        }
        for (id, (src, dst)) in self.deleted_edges {
            keys.deleted.push(Entity::Edge(id));
            source.deleted_edges.push((id, src, dst));
            ops.push(WriteOp::DeleteEdge { id, src, dst });
        }
        for (id, labels) in self.deleted_vertices {
            keys.deleted.push(Entity::Vertex(id));
            source.deleted_vertices.push((id, labels));
            ops.push(WriteOp::DeleteVertex { id });
        }
        for (name, position) in self.origins {
            ops.push(WriteOp::SetOrigin { name, position });
        }
        let mut record = CommitRecord::new(0, ops);
        record.vertex_batches = self.vertex_batches;
        record.edge_batches = self.edge_batches;
        source.staged_pk = Arc::new(self.staged_keys);
        (record, keys, source)
    }
}

/// What is needed to build a [`CommitSummary`]; kept separately because the summary is only
/// built when some concurrent transaction could need it.
#[derive(Default, Debug)]
pub struct SummarySource {
    created_vertices: Vec<(VertexId, Vec<LabelId>)>,
    label_changes: Vec<(VertexId, Vec<LabelId>, Vec<LabelId>)>,
    created_edges: Vec<(EdgeId, VertexId, VertexId)>,
    deleted_edges: Vec<(EdgeId, VertexId, VertexId)>,
    deleted_vertices: Vec<(VertexId, Vec<LabelId>)>,
    pk: Vec<(VertexTableId, Value, VertexId)>,
    /// The keys of staged vertices (a bulk load's), shared with its summary.
    staged_pk: Arc<StagedKeys>,
}

/// Edges a commit may create before its summary records their adjacency per (vertex table,
/// edge type, side) instead of per vertex (`CommitSummary::bulk_adjacency`): past it, a
/// concurrent SERIALIZABLE transaction that read the adjacency of any vertex of such a table,
/// or one deleting such a vertex, conflicts with the commit — never fewer conflicts than the
/// exact form, a few more.
pub const COARSE_ADJACENCY_EDGES: usize = 4096;

impl SummarySource {
    pub fn pk_claims(&self) -> &[(VertexTableId, Value, VertexId)] {
        &self.pk
    }

    pub fn staged_pk(&self) -> &StagedKeys {
        &self.staged_pk
    }

    /// The summary of a bulk load (creations only): per-entity sets would cost several hash
    /// inserts per edge of a load of millions, so the load is summarised per table, label
    /// and edge type. Conflicts it reports are a superset of the exact summary's: a
    /// transaction that read the adjacency of *any* vertex of a table the load added edges
    /// to, or that deletes such a vertex, conflicts with it; label and edge-type scans and
    /// primary keys are exact.
    pub fn build_bulk(&self, record: &CommitRecord, catalog: &Catalog) -> CommitSummary {
        let mut s = CommitSummary {
            ts: record.ts,
            ..Default::default()
        };
        let table_label =
            |v: VertexId| catalog.vertex_tables.get(v.table as usize).map(|t| t.label);
        let mut tables = std::collections::HashSet::new();
        for (v, labels) in &self.created_vertices {
            if tables.insert(v.table) {
                s.label_members.extend(table_label(*v));
            }
            s.label_members.extend(labels.iter().copied());
        }
        for batch in &record.vertex_batches {
            let def = catalog.vertex_tables.get(batch.table as usize);
            s.label_members.extend(def.map(|t| t.label));
            s.label_members.extend(batch.labels.iter().copied());
            s.label_members
                .extend(batch.row_labels.iter().flatten().copied());
        }
        if !self.staged_pk.is_empty() {
            s.staged_pk = Some(self.staged_pk.clone());
        }
        let mut edge_tables = std::collections::BTreeSet::new();
        let mut last = None;
        for (e, _, _) in &self.created_edges {
            if last != Some(e.table) {
                last = Some(e.table);
                edge_tables.insert(e.table);
            }
        }
        edge_tables.extend(record.edge_batches.iter().map(|b| b.table));
        for table in edge_tables {
            let def = &catalog.edge_tables[table as usize];
            s.edge_type_members.insert(def.edge_type);
            s.bulk_adjacency.insert((def.src, def.edge_type, true));
            s.bulk_adjacency.insert((def.dst, def.edge_type, false));
        }
        s.pk.reserve(self.pk.len());
        for (table, key, _) in &self.pk {
            s.pk.insert((*table, key.clone()));
        }
        s
    }

    pub fn build(&self, record: &CommitRecord, catalog: &Catalog) -> CommitSummary {
        let mut s = CommitSummary {
            ts: record.ts,
            ..Default::default()
        };
        let table_label =
            |v: VertexId| catalog.vertex_tables.get(v.table as usize).map(|t| t.label);
        for (v, labels) in &self.created_vertices {
            s.created.insert(Entity::Vertex(*v));
            s.label_members
                .extend(labels.iter().copied().chain(table_label(*v)));
        }
        for (v, old, new) in &self.label_changes {
            s.labels_of.insert(*v);
            s.touched.insert(Entity::Vertex(*v));
            s.label_members
                .extend(old.iter().filter(|l| !new.contains(l)));
            s.label_members
                .extend(new.iter().filter(|l| !old.contains(l)));
            if old.contains(&HIDDEN_TABLE_LABEL) != new.contains(&HIDDEN_TABLE_LABEL) {
                s.label_members.extend(table_label(*v)); // the table label came or went
            }
        }
        let edge_type = |e: EdgeId| {
            catalog
                .edge_tables
                .get(e.table as usize)
                .map_or(u32::MAX, |t| t.edge_type)
        };
        // A commit creating many edges (`LOAD CSV … CREATE` in batches) records their
        // adjacency per (table, type, side), as a bulk load does: four set entries per edge
        // cost more than the coarser conflicts (see `COARSE_ADJACENCY_EDGES`).
        let coarse = self.created_edges.len() > COARSE_ADJACENCY_EDGES;
        let mut last = None;
        for (e, src, dst) in &self.created_edges {
            s.created.insert(Entity::Edge(*e));
            let ty = edge_type(*e);
            if !coarse {
                s.record_adjacency(*src, ty, *dst);
            }
            // Runs of one type between two tables are the rule: their set entries once.
            if last != Some((ty, src.table, dst.table)) {
                last = Some((ty, src.table, dst.table));
                s.edge_type_members.insert(ty);
                if coarse {
                    s.bulk_adjacency.insert((src.table, ty, true));
                    s.bulk_adjacency.insert((dst.table, ty, false));
                }
            }
        }
        for (e, src, dst) in &self.deleted_edges {
            s.deleted.insert(Entity::Edge(*e));
            s.touched.insert(Entity::Edge(*e));
            s.record_adjacency(*src, edge_type(*e), *dst);
            s.edge_type_members.insert(edge_type(*e));
        }
        for (v, labels) in &self.deleted_vertices {
            s.deleted.insert(Entity::Vertex(*v));
            s.touched.insert(Entity::Vertex(*v));
            s.label_members.extend(labels.iter().copied());
        }
        for op in &record.ops {
            match op {
                WriteOp::SetVertexProp { id, key, .. } => {
                    s.record_prop(Entity::Vertex(*id), *key);
                    s.table_props.insert((id.table, *key));
                }
                WriteOp::SetEdgeProp { id, key, .. } => {
                    s.record_prop(Entity::Edge(*id), *key);
                    s.edge_type_props.insert((edge_type(*id), *key));
                }
                _ => {}
            }
        }
        for (table, key, _) in &self.pk {
            s.pk.insert((*table, key.clone()));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_vertex_bits_follow_the_map() {
        let mut w = WriteSet::default();
        let (a, b, c) = (
            VertexId::new(0, 3),
            VertexId::new(0, 200),
            VertexId::new(1, 3),
        );
        w.add_new_vertex(a, NewVertex::default());
        w.add_new_vertex(b, NewVertex::default());
        assert!(w.is_new_vertex(a) && w.is_new_vertex(b));
        assert!(!w.is_new_vertex(c), "another table's offset 3");
        assert!(!w.is_new_vertex(VertexId::new(0, 4)));
        assert!(
            !w.is_new_vertex(VertexId::new(0, 100_000)),
            "past the bitset"
        );
        assert!(w.remove_new_vertex(a).is_some());
        assert!(!w.is_new_vertex(a) && w.is_new_vertex(b));
        assert!(w.remove_new_vertex(c).is_none());
    }
}
