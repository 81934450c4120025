//! `GraphSnapshot`: a pinned, consistent, read-only view of the graph for analytics.
//!
//! A snapshot registers its timestamp with the oracle (so GC keeps what it needs) and reads
//! storage directly at that timestamp: no write set, no read set, no validation, never blocked
//! by writers beyond a per-segment read latch, never aborted. Commits that land while it is
//! alive are invisible to it.
//!
//! The hot path is [`GraphSnapshot::scan_segment`]: one latch per segment of vertices, then
//! contiguous neighbour slices — the same loop a static CSR runs.

use crate::manager::TxnManager;
use crate::oracle::ReaderKind;
use plexus_storage::{Catalog, ColumnSlice, EdgeTableDef};
use plexus_types::{
    Direction, EdgeId, EdgeTableId, Result, Timestamp, Value, VertexId, VertexTableId,
};
use std::sync::Arc;

pub struct GraphSnapshot {
    manager: Arc<TxnManager>,
    ts: Timestamp,
}

impl Drop for GraphSnapshot {
    fn drop(&mut self) {
        self.manager
            .oracle
            .release_reader(self.ts, ReaderKind::Snapshot);
    }
}

impl GraphSnapshot {
    pub(crate) fn pin(manager: Arc<TxnManager>) -> Self {
        let ts = manager.oracle.register_reader(ReaderKind::Snapshot);
        Self { manager, ts }
    }

    /// Pins a snapshot at `ts`, which a registered reader (the caller) already protects.
    pub(crate) fn pin_at(manager: Arc<TxnManager>, ts: Timestamp) -> Self {
        manager.oracle.register_reader_at(ts);
        Self { manager, ts }
    }

    pub fn ts(&self) -> Timestamp {
        self.ts
    }

    pub fn catalog(&self) -> Arc<Catalog> {
        self.manager.storage().catalog()
    }

    /// One past the highest vertex offset ever allocated in `table` (offsets are dense).
    pub fn vertex_capacity(&self, table: VertexTableId) -> Result<u32> {
        Ok(self
            .manager
            .storage()
            .vertex_table(table)?
            .rows()
            .row_count())
    }

    /// One past the highest edge offset ever allocated in `table`: an O(1) upper bound on its
    /// edges (deleted edges included), for heuristics such as BFS's direction switch.
    pub fn edge_capacity(&self, table: EdgeTableId) -> Result<u32> {
        Ok(self.manager.storage().edge_table(table)?.rows().row_count())
    }

    pub fn vertex_exists(&self, v: VertexId) -> Result<bool> {
        self.manager.storage().vertex_exists(v, self.ts)
    }

    pub fn vertex_property(&self, v: VertexId, name: &str) -> Result<Option<Value>> {
        let Some(key) = self.catalog().prop_keys.id(name) else {
            return Ok(None);
        };
        self.manager
            .storage()
            .check_vertex_id(v)?
            .rows()
            .prop(v.offset, key, self.ts)
    }

    /// Vertices of `table` that exist at this snapshot, as ranges of consecutive offsets in
    /// order (one per 2,048 rows for a table without deletions).
    pub fn scan_vertex_ranges(
        &self,
        table: VertexTableId,
        f: &mut dyn FnMut(std::ops::Range<u32>),
    ) -> Result<()> {
        self.manager
            .storage()
            .vertex_table(table)?
            .rows()
            .scan_ranges(self.ts, f)
    }

    pub fn scan_label(&self, label: &str) -> Result<Vec<VertexId>> {
        let mut found = Vec::new();
        if let Some(id) = self.catalog().labels.id(label) {
            self.manager
                .storage()
                .scan_label(id, self.ts, &mut |v| found.push(v))?;
        }
        Ok(found)
    }

    /// Edge tables, optionally only those of one edge type.
    pub fn edge_tables(&self, edge_type: Option<&str>) -> Vec<(EdgeTableId, EdgeTableDef)> {
        let catalog = self.catalog();
        let ty = edge_type.map(|t| catalog.edge_types.id(t));
        catalog
            .edge_tables
            .iter()
            .enumerate()
            .filter(|(_, def)| ty.is_none_or(|t| Some(def.edge_type) == t))
            .map(|(id, def)| (id as EdgeTableId, def.clone()))
            .collect()
    }

    /// Calls `f` with contiguous slices of neighbour offsets of vertex offset `v` in edge table
    /// `table` (out-neighbours when `outgoing`, else in-neighbours).
    pub fn for_each_neighbor_slice(
        &self,
        table: EdgeTableId,
        outgoing: bool,
        v: u32,
        f: &mut dyn FnMut(&[u32]),
    ) -> Result<()> {
        let et = self.manager.storage().edge_table(table)?;
        et.visit_neighbors(outgoing, v, self.ts, &mut |nbrs, _| f(nbrs));
        Ok(())
    }

    /// Number of vertex segments of an edge table's adjacency (units for parallel scans).
    pub fn segment_count(&self, table: EdgeTableId, outgoing: bool) -> Result<usize> {
        Ok(self
            .manager
            .storage()
            .edge_table(table)?
            .segment_count(outgoing))
    }

    /// The vertex offsets segment `index` covers (the same for every table and direction).
    pub fn segment_offsets(index: usize) -> std::ops::Range<u32> {
        plexus_storage::segment_vertex_offsets(index)
    }

    /// Calls `f(vertex offset, neighbour offsets)` for every vertex of segment `index`.
    pub fn scan_segment(
        &self,
        table: EdgeTableId,
        outgoing: bool,
        index: usize,
        mut f: impl FnMut(u32, &[u32]),
    ) -> Result<()> {
        self.scan(table, outgoing, index, |_| true, |v, nbrs, _| f(v, nbrs))
    }

    /// Like [`scan_segment`](Self::scan_segment), for the vertices `want(vertex offset)`
    /// accepts only; the others are skipped before their entries are located (a traversal
    /// passes its frontier or its unvisited set).
    pub fn scan_segment_where(
        &self,
        table: EdgeTableId,
        outgoing: bool,
        index: usize,
        want: impl Fn(u32) -> bool,
        mut f: impl FnMut(u32, &[u32]),
    ) -> Result<()> {
        self.scan(table, outgoing, index, want, |v, nbrs, _| f(v, nbrs))
    }

    /// Like [`scan_segment`](Self::scan_segment), with each vertex's edge offsets parallel to
    /// its neighbour offsets: `f(vertex offset, neighbour offsets, edge offsets)`.
    pub fn scan_segment_edges(
        &self,
        table: EdgeTableId,
        outgoing: bool,
        index: usize,
        f: impl FnMut(u32, &[u32], &[u32]),
    ) -> Result<()> {
        self.scan(table, outgoing, index, |_| true, f)
    }

    /// Like [`scan_segment_edges`](Self::scan_segment_edges), also handing out the values of
    /// edge property `name` beside a slice where a CSR run holds them and they are current for
    /// this snapshot: `f(vertex offset, neighbour offsets, edge offsets, values)`. A slice with
    /// `values = None` (memtable entries, runs written before a property update) needs its
    /// values read with [`edge_properties`](Self::edge_properties). See `plexus_storage::lsm`,
    /// PROPERTY COLUMNS.
    pub fn scan_segment_values(
        &self,
        table: EdgeTableId,
        outgoing: bool,
        index: usize,
        name: &str,
        f: impl FnMut(u32, &[u32], &[u32], Option<ColumnSlice<'_>>),
    ) -> Result<()> {
        let et = self.manager.storage().edge_table(table)?;
        let key = self.catalog().prop_keys.id(name);
        et.scan_segment(outgoing, index, self.ts, |_| true, key, f);
        Ok(())
    }

    fn scan(
        &self,
        table: EdgeTableId,
        outgoing: bool,
        index: usize,
        want: impl Fn(u32) -> bool,
        mut f: impl FnMut(u32, &[u32], &[u32]),
    ) -> Result<()> {
        let et = self.manager.storage().edge_table(table)?;
        et.scan_segment(outgoing, index, self.ts, want, None, |v, nbrs, eids, _| {
            f(v, nbrs, eids)
        });
        Ok(())
    }

    /// Property `name` of the edges of `table` at the given edge offsets, as of this snapshot:
    /// `f(i, value)` for `offsets[i]` (`None`: no such property). One catalog lookup per call,
    /// for bulk reads such as edge weights.
    pub fn edge_properties(
        &self,
        table: EdgeTableId,
        name: &str,
        offsets: &[u32],
        f: &mut dyn FnMut(usize, Option<Value>),
    ) -> Result<()> {
        let et = self.manager.storage().edge_table(table)?;
        match self.catalog().prop_keys.id(name) {
            Some(key) => et.rows().prop_many(offsets, key, self.ts, f)?,
            None => (0..offsets.len()).for_each(|i| f(i, None)),
        }
        Ok(())
    }

    /// The edges `src -[edge_type]-> dst` (of one type, or all), skipping runs by bitmap and
    /// bloom filter.
    pub fn edges_between(
        &self,
        src: VertexId,
        edge_type: Option<&str>,
        dst: VertexId,
    ) -> Vec<EdgeId> {
        let catalog = self.catalog();
        let ty = match edge_type {
            Some(name) => match catalog.edge_types.id(name) {
                Some(id) => Some(id),
                None => return Vec::new(),
            },
            None => None,
        };
        self.manager
            .storage()
            .edges_between(src, dst, self.ts, |d| ty.is_none_or(|t| d.edge_type == t))
    }

    /// The edges of `v` of one type (or all), in `dir`, with the vertex at the other end.
    pub fn neighbors(
        &self,
        v: VertexId,
        edge_type: Option<&str>,
        dir: Direction,
    ) -> Vec<(EdgeId, VertexId)> {
        let catalog = self.catalog();
        let ty = match edge_type {
            Some(name) => match catalog.edge_types.id(name) {
                Some(id) => Some(id),
                None => return Vec::new(),
            },
            None => None,
        };
        let mut found = Vec::new();
        self.manager.storage().neighbors(
            v,
            dir,
            self.ts,
            |d| ty.is_none_or(|t| d.edge_type == t),
            &mut |e, n| found.push((e, n)),
        );
        found
    }

    /// Bytes held in memory by the topology memtables of every edge table in one direction
    /// (CSR runs live in files and are not counted).
    pub fn topology_size_bytes(&self, outgoing: bool) -> usize {
        self.manager
            .storage()
            .edge_tables()
            .iter()
            .map(|t| t.memtable_bytes(outgoing))
            .sum()
    }
}
