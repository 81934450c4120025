//! Projections: the graph an analytics kernel sees, built from a pinned [`GraphSnapshot`].
//!
//! WHAT A PROJECTION SELECTS
//! =========================
//! A [`Projection`] names vertex labels, edge types, a direction and optionally a weight
//! property. At the snapshot's timestamp it selects:
//!
//! - vertices: every existing vertex carrying at least one of the labels (all vertices if no
//!   label is named). A vertex table whose own label is named contributes all its rows; other
//!   tables contribute the rows that carry a named label as an extra label;
//! - edges: every visible edge of a named type (all types if none is named) whose *both*
//!   endpoints were selected — the induced subgraph;
//! - direction: `Out` keeps edges as stored, `In` reverses them, `Both` makes the graph
//!   undirected: each stored edge becomes one undirected edge (a self-loop stays one loop);
//! - weight: the named edge property, read as `f64` (integers are converted; a missing or
//!   non-numeric value is an error naming the edge). Only SSSP uses weights.
//!
//! Naming a label or an edge type the catalog does not know is an error (most likely a typo),
//! not an empty graph.
//!
//! DENSE IDS
//! =========
//! Kernels work on dense ids `0..n`. Selected vertex tables are laid out one after the other in
//! table-id order, and within a table by offset, so dense order is `VertexId` order:
//!
//! ```text
//!   table 0 (Person): offsets 0..4 all selected        dense 0..4   (a prefix: dense = 0 + offset)
//!   table 2 (City):   offsets {1, 5, 6} selected       dense 4..7   (sparse: a lookup array)
//! ```
//!
//! A table whose selected offsets are exactly `0..k` (the common case: a whole table without
//! deleted rows) maps by adding its base, with no lookup array; others keep `dense_of[offset]`
//! (4 bytes per offset) and the reverse list of offsets. Where a kernel breaks ties by the
//! "smallest label" (CDLP) or labels components by their smallest member (WCC), smallest means
//! smallest `VertexId`.
//!
//! BUILDING: TWO PARALLEL PASSES OVER SEGMENTS
//! ===========================================
//! Each selected edge table contributes one or two *sides* (its out-adjacency for `Out`, its
//! in-adjacency for `In`, both for `Both`). The build reads only the snapshot's contiguous
//! neighbour slices, [`GraphSnapshot::scan_segment`], one latch per segment of vertices, with
//! rayon over segments:
//!
//! 1. count: per side, in parallel over segments, add each vertex's kept neighbours to its
//!    degree (a segment covers disjoint vertices, so the per-vertex adds never contend);
//!    `offsets` = exclusive prefix sum of the degrees;
//! 2. fill: per side, in parallel over segments, translate each neighbour to its dense id and
//!    store it at the vertex's cursor (relaxed atomic stores to disjoint slots — plain stores
//!    in machine code, no `unsafe`);
//! 3. sort each neighbour list, and for a directed graph build the in-CSR by transposition
//!    ([`Graph`]'s invariants), exactly as for a graph built from an edge list.
//!
//! The snapshot is pinned, so both passes see the same edges; the build still checks that
//! every vertex's slots were filled exactly and fails with [`GraphError::SourceChanged`]
//! instead of returning a torn graph. Weighted projections read edge offsets along with the
//! neighbours ([`GraphSnapshot::scan_segment_edges`], the same segment scan) and the weights in
//! one bulk call per segment ([`GraphSnapshot::edge_properties`]).
//!
//! COST
//! ====
//! Memory: the [`Graph`] (4 bytes per edge and direction, 8 more per weight, 8 per vertex and
//! direction) plus 16 bytes per vertex of counters during the build. Time: two sequential
//! reads of the selected adjacency, one parallel sort of short lists and one transposition;
//! the `algo` benchmark prints it as `projection_build` (see `docs/benchmarks.md`).

use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use plexus_txn::GraphSnapshot;
use plexus_types::{EdgeId, EdgeTableId, LabelId, Timestamp, Value, VertexId, VertexTableId};
use rayon::prelude::*;

use crate::csr::{Csr, Graph, GraphError, MAX_VERTICES};

mod external;
use crate::par::exclusive_scan;
use crate::{AlgoError, Direction};

/// `TableMap::dense_of` entry of an offset outside the projection.
const NOT_SELECTED: u32 = u32::MAX;

/// Why a kernel could not run on a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum AnalyticsError {
    #[error(transparent)]
    Storage(#[from] plexus_types::Error),
    #[error("the projection names vertex label {0:?}, which the database does not know")]
    UnknownLabel(String),
    #[error("the projection names edge type {0:?}, which the database does not know")]
    UnknownEdgeType(String),
    #[error("vertex {0} is not in the projection (missing, deleted or without a selected label)")]
    NotInProjection(VertexId),
    #[error("edge {edge} has no weight property {property:?}")]
    MissingWeight { edge: EdgeId, property: String },
    #[error("edge {edge}: weight property {property:?} is {value}, not a number")]
    BadWeight {
        edge: EdgeId,
        property: String,
        value: String,
    },
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Algo(#[from] AlgoError),
}

/// Which part of the graph a kernel runs on (see the module doc). `Default`: every vertex and
/// edge, direction `Out`, no weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Projection {
    /// Vertex labels to select; empty selects every vertex.
    pub vertex_labels: Vec<String>,
    /// Edge types to select; empty selects every type.
    pub edge_types: Vec<String>,
    /// `Out`: edges as stored; `In`: reversed; `Both`: undirected.
    pub direction: Direction,
    /// Edge property to read as the weight (SSSP).
    pub weight: Option<String>,
}

impl Projection {
    /// Every vertex and edge, direction `Out`, no weights.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn vertex_labels(mut self, labels: &[&str]) -> Self {
        self.vertex_labels = labels.iter().map(|l| l.to_string()).collect();
        self
    }

    pub fn edge_types(mut self, types: &[&str]) -> Self {
        self.edge_types = types.iter().map(|t| t.to_string()).collect();
        self
    }

    pub fn direction(mut self, direction: Direction) -> Self {
        self.direction = direction;
        self
    }

    pub fn weight(mut self, property: &str) -> Self {
        self.weight = Some(property.to_string());
        self
    }

    /// Build the compact graph of this projection at the snapshot's timestamp.
    pub fn build(&self, snapshot: &GraphSnapshot) -> Result<ProjectedGraph, AnalyticsError> {
        let (vertices, out) = self.build_out(snapshot)?;
        let graph = Graph::from_out(out, self.direction != Direction::Both);
        Ok(ProjectedGraph {
            graph,
            vertices,
            ts: snapshot.ts(),
        })
    }

    /// What a kernel that only pushes along out-edges, in any order, reads (SSSP): the
    /// vertices and the projected graph's out-lists with their weights, in storage order.
    /// [`build`](Self::build) adds the sort of every list and the in-CSR by transposition.
    pub(crate) fn build_out(
        &self,
        snapshot: &GraphSnapshot,
    ) -> Result<(VertexMap, Csr), AnalyticsError> {
        let vertices = VertexMap::select(snapshot, &self.vertex_labels)?;
        let out = self.lists(snapshot, &vertices, self.direction, self.weight.as_deref())?;
        Ok((vertices, out))
    }

    /// What a pull kernel (PageRank) reads, built without a transpose: the vertices, the
    /// in-adjacency as a CSR with sorted lists (scanned from the reversed sides: the in-runs
    /// hold each vertex's entries sorted, so mostly nothing is left to sort), and every
    /// vertex's out-degree. [`build`](Self::build) would build the out-CSR and transpose it.
    pub(crate) fn build_pull(
        &self,
        snapshot: &GraphSnapshot,
    ) -> Result<(VertexMap, Csr, Vec<u64>), AnalyticsError> {
        let vertices = VertexMap::select(snapshot, &self.vertex_labels)?;
        let out_sides = self.sides(snapshot, &vertices, self.direction)?;
        let out_degrees = count_degrees(snapshot, &vertices, &out_sides, vertices.vertex_count())?;
        let mut inc = self.lists(snapshot, &vertices, self.direction.reversed(), None)?;
        inc.sort_neighbors();
        Ok((vertices, inc, out_degrees))
    }

    /// The lists of the projected graph read in `direction`, unsorted, with `weight` beside
    /// them if named: the two passes (count, fill) over the sides.
    fn lists(
        &self,
        snapshot: &GraphSnapshot,
        vertices: &VertexMap,
        direction: Direction,
        weight: Option<&str>,
    ) -> Result<Csr, AnalyticsError> {
        let sides = self.sides(snapshot, vertices, direction)?;
        let n = vertices.vertex_count();
        let offsets = exclusive_scan(&count_degrees(snapshot, vertices, &sides, n)?);
        let (targets, weights) = fill(snapshot, vertices, &sides, &offsets, weight)?;
        Ok(Csr::from_parts(offsets, targets, weights))
    }

    /// The adjacency sides whose lists are the out-lists of the projected graph when read in
    /// `direction` (the projection's own, or the reverse for kernels that pull along
    /// in-edges), in a fixed order: edge table id, then out before in.
    pub(crate) fn sides(
        &self,
        snapshot: &GraphSnapshot,
        vertices: &VertexMap,
        direction: Direction,
    ) -> Result<Vec<Side>, AnalyticsError> {
        let catalog = snapshot.catalog();
        let types = self
            .edge_types
            .iter()
            .map(|name| {
                catalog
                    .edge_types
                    .id(name)
                    .ok_or_else(|| AnalyticsError::UnknownEdgeType(name.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut sides = Vec::new();
        for (table, def) in catalog.edge_tables.iter().enumerate() {
            if !types.is_empty() && !types.contains(&def.edge_type) {
                continue;
            }
            let (Some(src), Some(dst)) = (vertices.slot(def.src), vertices.slot(def.dst)) else {
                continue;
            };
            let table = table as EdgeTableId;
            let out = Side {
                table,
                outgoing: true,
                from: src,
                to: dst,
                skip_self_loops: false,
            };
            let inc = Side {
                table,
                outgoing: false,
                from: dst,
                to: src,
                // Undirected: a self-loop is in both adjacencies but is one edge.
                skip_self_loops: direction == Direction::Both && def.src == def.dst,
            };
            match direction {
                Direction::Out => sides.push(out),
                Direction::In => sides.push(inc),
                Direction::Both => sides.extend([out, inc]),
            }
        }
        Ok(sides)
    }
}

/// A projection built at one snapshot: the [`Graph`] and the dense-id ↔ [`VertexId`] mapping.
#[derive(Clone, Debug)]
pub struct ProjectedGraph {
    graph: Graph,
    vertices: VertexMap,
    ts: Timestamp,
}

impl ProjectedGraph {
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    pub fn vertex_count(&self) -> usize {
        self.graph.vertex_count()
    }

    /// Timestamp of the snapshot it was built from.
    pub fn ts(&self) -> Timestamp {
        self.ts
    }

    /// Dense id of a vertex, if it is in the projection.
    pub fn dense_id(&self, v: VertexId) -> Option<u32> {
        self.vertices.dense_id(v)
    }

    /// Dense id of a vertex, or [`AnalyticsError::NotInProjection`].
    pub fn require(&self, v: VertexId) -> Result<u32, AnalyticsError> {
        self.vertices.require(v)
    }

    /// The vertex with dense id `dense`, if `dense < vertex_count()`.
    pub fn vertex_id(&self, dense: u32) -> Option<VertexId> {
        self.vertices.vertex_id(dense)
    }

    /// Every projected vertex, in dense order (= `VertexId` order).
    pub fn vertex_ids(&self) -> Vec<VertexId> {
        self.vertices.ids()
    }

    /// Pair per-vertex kernel output (indexed by dense id) with the vertices, in dense order.
    pub fn label_with_vertices<T: Send>(&self, values: Vec<T>) -> Vec<(VertexId, T)> {
        self.vertices.pair_with(values)
    }
}

/// How one vertex table's offsets map to dense ids.
#[derive(Clone, Debug)]
pub(crate) struct TableMap {
    table: VertexTableId,
    /// Dense id of the first selected offset.
    base: u32,
    members: Members,
}

#[derive(Clone, Debug)]
enum Members {
    /// Offsets `0..count` are selected: dense = base + offset.
    Prefix { count: u32 },
    /// Selected offsets, ascending; `dense_of[offset]` is `base + i` or `NOT_SELECTED`.
    Sparse {
        offsets: Vec<u32>,
        dense_of: Vec<u32>,
    },
}

impl Members {
    /// The members listed by ascending `rows`.
    fn of_rows(rows: Vec<u32>) -> Members {
        debug_assert!(rows.is_sorted());
        let count = rows.len() as u32;
        if rows.last().is_none_or(|&last| last == count - 1) {
            return Members::Prefix { count };
        }
        let span = rows.last().map_or(0, |&last| last as usize + 1);
        let mut dense_of = vec![NOT_SELECTED; span];
        for (i, &row) in rows.iter().enumerate() {
            dense_of[row as usize] = i as u32;
        }
        Members::Sparse {
            offsets: rows,
            dense_of,
        }
    }

    fn len(&self) -> u32 {
        match self {
            Members::Prefix { count } => *count,
            Members::Sparse { offsets, .. } => offsets.len() as u32,
        }
    }
}

impl TableMap {
    /// `members` of `table`, the first at dense id `base`.
    fn new(table: VertexTableId, base: u32, mut members: Members) -> TableMap {
        debug_assert!(members.len() > 0);
        if let Members::Sparse { dense_of, .. } = &mut members {
            dense_of
                .iter_mut()
                .filter(|d| **d != NOT_SELECTED)
                .for_each(|d| *d += base);
        }
        TableMap {
            table,
            base,
            members,
        }
    }

    fn len(&self) -> u32 {
        self.members.len()
    }

    #[inline]
    pub(crate) fn dense(&self, offset: u32) -> Option<u32> {
        match &self.members {
            Members::Prefix { count } => (offset < *count).then(|| self.base + offset),
            Members::Sparse { dense_of, .. } => dense_of
                .get(offset as usize)
                .copied()
                .filter(|&d| d != NOT_SELECTED),
        }
    }

    /// Dense ids of the selected offsets in `offsets`: a range, since dense order is offset
    /// order within a table.
    pub(crate) fn dense_range(&self, offsets: Range<u32>) -> Range<u32> {
        let rank = |offset: u32| match &self.members {
            Members::Prefix { count } => offset.min(*count),
            Members::Sparse { offsets, .. } => offsets.partition_point(|&o| o < offset) as u32,
        };
        self.base + rank(offsets.start)..self.base + rank(offsets.end)
    }

    /// Offset of the `i`-th selected vertex, `i < len()`.
    fn offset(&self, i: u32) -> u32 {
        match &self.members {
            Members::Prefix { .. } => i,
            Members::Sparse { offsets, .. } => offsets[i as usize],
        }
    }
}

/// The selected vertices of every table, laid out in table order (see DENSE IDS).
#[derive(Clone, Debug)]
pub(crate) struct VertexMap {
    /// Ascending by table id and by base.
    tables: Vec<TableMap>,
    /// `slot_of[table id]`: index into `tables`.
    slot_of: Vec<Option<usize>>,
}

impl VertexMap {
    pub(crate) fn select(
        snapshot: &GraphSnapshot,
        label_names: &[String],
    ) -> Result<VertexMap, AnalyticsError> {
        let catalog = snapshot.catalog();
        let labels: Vec<LabelId> = label_names
            .iter()
            .map(|name| {
                catalog
                    .labels
                    .id(name)
                    .ok_or_else(|| AnalyticsError::UnknownLabel(name.clone()))
            })
            .collect::<Result<_, _>>()?;
        // Vertices carrying a named label as an extra label, read only if some table that is
        // not selected whole may hold such vertices.
        let whole = |label: LabelId| labels.is_empty() || labels.contains(&label);
        let may_carry = catalog.vertex_tables.iter().any(|def| {
            !whole(def.label)
                && labels.iter().any(|l| {
                    def.extra_labels
                        .as_ref()
                        .is_none_or(|allowed| allowed.contains(l))
                })
        });
        let mut extra: Vec<VertexId> = Vec::new();
        if may_carry {
            for name in label_names {
                extra.extend(snapshot.scan_label(name)?);
            }
            extra.sort_unstable();
            extra.dedup();
        }

        VertexMap::lay_out(catalog.vertex_tables.len(), |table| {
            if whole(catalog.vertex_tables[table as usize].label) {
                table_members(snapshot, table)
            } else {
                let begin = extra.partition_point(|v| v.table < table);
                let end = extra.partition_point(|v| v.table <= table);
                Ok(Members::of_rows(
                    extra[begin..end].iter().map(|v| v.offset).collect(),
                ))
            }
        })
    }

    /// Tables `0..table_count` laid out one after the other, each with the members
    /// `members_of` selects (tables selecting none take no slot).
    fn lay_out(
        table_count: usize,
        mut members_of: impl FnMut(VertexTableId) -> Result<Members, AnalyticsError>,
    ) -> Result<VertexMap, AnalyticsError> {
        let mut tables = Vec::new();
        let mut slot_of = vec![None; table_count];
        let mut next_base = 0usize;
        for (id, slot) in slot_of.iter_mut().enumerate() {
            let table = id as VertexTableId;
            let members = members_of(table)?;
            let selected = members.len() as usize;
            if selected == 0 {
                continue;
            }
            let vertex_count = next_base + selected;
            if vertex_count > MAX_VERTICES {
                return Err(GraphError::TooManyVertices { vertex_count }.into());
            }
            *slot = Some(tables.len());
            tables.push(TableMap::new(table, next_base as u32, members));
            next_base = vertex_count;
        }
        Ok(VertexMap { tables, slot_of })
    }

    /// Every selected vertex, in dense order (in parallel: a result is a million pairs).
    pub(crate) fn ids(&self) -> Vec<VertexId> {
        let n = self.vertex_count() as u32;
        (0..n)
            .into_par_iter()
            .map(|dense| {
                self.vertex_id(dense)
                    .expect("dense ids below the count are mapped")
            })
            .collect()
    }

    /// Per-vertex kernel output (indexed by dense id) paired with the vertices, in dense order.
    pub(crate) fn pair_with<T: Send>(&self, values: Vec<T>) -> Vec<(VertexId, T)> {
        self.pair_map(values, |value| value)
    }

    /// [`pair_with`](Self::pair_with) converting each value on the way, so that a kernel's
    /// working array becomes the result without an intermediate vector (a million values
    /// are megabytes of fresh pages to fault in).
    pub(crate) fn pair_map<S: Send, T: Send>(
        &self,
        values: Vec<S>,
        convert: impl Fn(S) -> T + Sync,
    ) -> Vec<(VertexId, T)> {
        assert_eq!(values.len(), self.vertex_count(), "one value per vertex");
        values
            .into_par_iter()
            .enumerate()
            .map(|(dense, value)| {
                let v = self.vertex_id(dense as u32);
                (
                    v.expect("dense ids below the count are mapped"),
                    convert(value),
                )
            })
            .collect()
    }

    pub(crate) fn vertex_count(&self) -> usize {
        self.tables
            .last()
            .map_or(0, |t| t.base as usize + t.len() as usize)
    }

    fn slot(&self, table: VertexTableId) -> Option<usize> {
        self.slot_of.get(table as usize).copied().flatten()
    }

    fn dense_id(&self, v: VertexId) -> Option<u32> {
        self.tables[self.slot(v.table)?].dense(v.offset)
    }

    /// Dense id of a vertex, or [`AnalyticsError::NotInProjection`].
    pub(crate) fn require(&self, v: VertexId) -> Result<u32, AnalyticsError> {
        self.dense_id(v).ok_or(AnalyticsError::NotInProjection(v))
    }

    fn vertex_id(&self, dense: u32) -> Option<VertexId> {
        let slot = self
            .tables
            .partition_point(|t| t.base <= dense)
            .checked_sub(1)?;
        let t = &self.tables[slot];
        let i = dense - t.base;
        (i < t.len()).then(|| VertexId::new(t.table, t.offset(i)))
    }
}

/// The rows of a vertex table live at the snapshot, read as runs of consecutive rows. A table
/// without deleted rows (the common case) is one run `0..count`, kept as that count with no
/// list of rows.
fn table_members(
    snapshot: &GraphSnapshot,
    table: VertexTableId,
) -> Result<Members, AnalyticsError> {
    let mut runs: Vec<Range<u32>> = Vec::new();
    snapshot.scan_vertex_ranges(table, &mut |rows| match runs.last_mut() {
        Some(last) if last.end == rows.start => last.end = rows.end,
        _ => runs.push(rows),
    })?;
    Ok(match runs.as_slice() {
        [] => Members::Prefix { count: 0 },
        [only] if only.start == 0 => Members::Prefix { count: only.end },
        _ => Members::of_rows(runs.into_iter().flatten().collect()),
    })
}

/// One adjacency (an edge table in one direction) feeding the out-lists of the graph: the
/// vertices of `tables[from]` get neighbours in `tables[to]`.
pub(crate) struct Side {
    pub(crate) table: EdgeTableId,
    pub(crate) outgoing: bool,
    from: usize,
    to: usize,
    skip_self_loops: bool,
}

impl Side {
    /// Dense id of neighbour offset `u` of vertex offset `v`, if that edge is kept.
    #[inline]
    pub(crate) fn keep(&self, to: &TableMap, v: u32, u: u32) -> Option<u32> {
        if self.skip_self_loops && u == v {
            return None;
        }
        to.dense(u)
    }

    /// The vertex maps of this side's scanned vertices and of their neighbours.
    pub(crate) fn maps<'a>(&self, vertices: &'a VertexMap) -> (&'a TableMap, &'a TableMap) {
        (&vertices.tables[self.from], &vertices.tables[self.to])
    }

    /// Scan every segment of this side in parallel.
    pub(crate) fn par_scan(
        &self,
        snapshot: &GraphSnapshot,
        scan: impl Fn(usize) -> Result<(), AnalyticsError> + Sync + Send,
    ) -> Result<(), AnalyticsError> {
        let segments = snapshot.segment_count(self.table, self.outgoing)?;
        (0..segments).into_par_iter().try_for_each(scan)
    }
}

/// Pass 1: kept out-edges per dense vertex (also the out-degrees of the snapshot PageRank).
pub(crate) fn count_degrees(
    snapshot: &GraphSnapshot,
    vertices: &VertexMap,
    sides: &[Side],
    n: usize,
) -> Result<Vec<u64>, AnalyticsError> {
    let degrees: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    for side in sides {
        let (from, to) = side.maps(vertices);
        side.par_scan(snapshot, |segment| {
            snapshot.scan_segment(side.table, side.outgoing, segment, |v, nbrs| {
                let Some(dv) = from.dense(v) else { return };
                let kept = nbrs
                    .iter()
                    .filter(|&&u| side.keep(to, v, u).is_some())
                    .count();
                // Segments cover disjoint vertices: no other task adds to `dv` in this side.
                degrees[dv as usize].fetch_add(kept as u64, Ordering::Relaxed);
            })?;
            Ok(())
        })?;
    }
    // In place, as the lists in `fill`.
    Ok(degrees.into_iter().map(AtomicU64::into_inner).collect())
}

/// Pass 2: neighbours (and weights) in CSR layout for `offsets`.
fn fill(
    snapshot: &GraphSnapshot,
    vertices: &VertexMap,
    sides: &[Side],
    offsets: &[u64],
    weight: Option<&str>,
) -> Result<(Vec<u32>, Option<Vec<f64>>), AnalyticsError> {
    let n = offsets.len() - 1;
    let edge_count = offsets[n] as usize;
    let targets: Vec<AtomicU32> = (0..edge_count)
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    let weights: Option<Vec<AtomicU64>> = weight.map(|_| {
        (0..edge_count)
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect()
    });
    let cursors: Vec<AtomicU64> = offsets[..n]
        .par_iter()
        .map(|&o| AtomicU64::new(o))
        .collect();
    for side in sides {
        let (from, to) = side.maps(vertices);
        // Store the kept neighbours of `v` (and their weights) at its cursor; false on overflow.
        let place = |v: u32, nbrs: &[u32], nbr_weights: &[f64]| -> bool {
            let Some(dv) = from.dense(v) else {
                return true;
            };
            let dv = dv as usize;
            let end = offsets[dv + 1];
            let mut at = cursors[dv].load(Ordering::Relaxed);
            for (i, &u) in nbrs.iter().enumerate() {
                let Some(du) = side.keep(to, v, u) else {
                    continue;
                };
                if at == end {
                    return false;
                }
                targets[at as usize].store(du, Ordering::Relaxed);
                if let Some(w) = &weights {
                    w[at as usize].store(nbr_weights[i].to_bits(), Ordering::Relaxed);
                }
                at += 1;
            }
            cursors[dv].store(at, Ordering::Relaxed);
            true
        };
        side.par_scan(snapshot, |segment| {
            let mut overflow = None;
            match weight {
                None => snapshot.scan_segment(side.table, side.outgoing, segment, |v, nbrs| {
                    if overflow.is_none() && !place(v, nbrs, &[]) {
                        overflow = Some(v);
                    }
                })?,
                Some(property) => {
                    // Slices whose run column holds every weight are placed as they come;
                    // the others wait for one bulk row read (see `RowWeighted`).
                    let (mut buffer, mut from_rows) = (Vec::new(), RowWeighted::default());
                    snapshot.scan_segment_values(
                        side.table,
                        side.outgoing,
                        segment,
                        property,
                        |v, nbrs, eids, values| {
                            buffer.clear();
                            if !values.is_some_and(|values| values.extend_f64(&mut buffer)) {
                                from_rows.push(v, nbrs, eids);
                            } else if overflow.is_none() && !place(v, nbrs, &buffer) {
                                overflow = Some(v);
                            }
                        },
                    )?;
                    let weights = from_rows.read(snapshot, side.table, property)?;
                    overflow = overflow.or_else(|| {
                        from_rows
                            .slices
                            .into_iter()
                            .find(|(v, range)| {
                                let range = range.clone();
                                !place(*v, &from_rows.nbrs[range.clone()], &weights[range])
                            })
                            .map(|(v, _)| v)
                    });
                }
            }
            match overflow.and_then(|v| from.dense(v)) {
                Some(vertex) => Err(GraphError::SourceChanged { vertex }.into()),
                None => Ok(()),
            }
        })?;
    }
    // The joins above order every store before these loads.
    if let Some(v) = (0..n)
        .into_par_iter()
        .find_first(|&v| cursors[v].load(Ordering::Relaxed) != offsets[v + 1])
    {
        return Err(GraphError::SourceChanged { vertex: v as u32 }.into());
    }
    // Sequential on purpose: `Vec::into_iter().map(..).collect()` between types of one size
    // reuses the allocation, where a parallel collect would allocate, fault in and copy
    // another 4 (12 weighted) bytes per edge.
    let targets = targets.into_iter().map(AtomicU32::into_inner).collect();
    let weights = weights.map(|w| {
        w.into_iter()
            .map(|bits| f64::from_bits(bits.into_inner()))
            .collect()
    });
    Ok((targets, weights))
}

/// The slices of a segment whose weights no current run column holds (memtable entries,
/// runs written before a property update, nulls): read from the rows in one bulk call, which
/// also reports missing or non-numeric weights.
#[derive(Default)]
struct RowWeighted {
    /// (vertex offset, its entries in `nbrs` / `eids`).
    slices: Vec<(u32, Range<usize>)>,
    nbrs: Vec<u32>,
    eids: Vec<u32>,
}

impl RowWeighted {
    fn push(&mut self, v: u32, nbrs: &[u32], eids: &[u32]) {
        let start = self.nbrs.len();
        self.nbrs.extend_from_slice(nbrs);
        self.eids.extend_from_slice(eids);
        self.slices.push((v, start..self.nbrs.len()));
    }

    /// The weights of every pushed entry, in order.
    fn read(
        &self,
        snapshot: &GraphSnapshot,
        table: EdgeTableId,
        property: &str,
    ) -> Result<Vec<f64>, AnalyticsError> {
        let mut weights = Vec::with_capacity(self.eids.len());
        read_weights(snapshot, table, property, &self.eids, &mut weights)?;
        Ok(weights)
    }
}

/// The weights of edges `eids` of `table` into `out` (cleared first).
fn read_weights(
    snapshot: &GraphSnapshot,
    table: EdgeTableId,
    property: &str,
    eids: &[u32],
    out: &mut Vec<f64>,
) -> Result<(), AnalyticsError> {
    out.clear();
    let mut failure = None;
    snapshot.edge_properties(table, property, eids, &mut |i, value| {
        let edge = EdgeId::new(table, eids[i]);
        match weight(value, edge, property) {
            Ok(w) => out.push(w),
            Err(e) => {
                failure.get_or_insert(e);
                out.push(0.0);
            }
        }
    })?;
    failure.map_or(Ok(()), Err)
}

/// Edge `edge`'s weight property `property` (`value`) as a number: a float, or an integer
/// converted; anything else is an error naming the edge.
pub(crate) fn weight(
    value: Option<Value>,
    edge: EdgeId,
    property: &str,
) -> Result<f64, AnalyticsError> {
    match value {
        Some(Value::Float(w)) => Ok(w),
        Some(Value::Int(w)) => Ok(w as f64),
        None => Err(AnalyticsError::MissingWeight {
            edge,
            property: property.to_string(),
        }),
        Some(other) => Err(AnalyticsError::BadWeight {
            edge,
            property: property.to_string(),
            value: other.to_string(),
        }),
    }
}
