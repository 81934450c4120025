//! Projections of an external graph (a GraphAr graph attached with `ATTACH … AS name`):
//! the same [`ProjectedGraph`] a snapshot gives, built from the graph's edge lists.
//!
//! Vertex tables are laid out in table order as for a snapshot (see DENSE IDS in the parent
//! module); a table named by a label is selected whole, others contribute the vertices
//! carrying a named label as an extra label. Every selected edge table's edge list
//! ([`ExternalGraph::edge_list`], the whole list, read once) is translated to dense ids and
//! counted into an out-CSR — in `Out`, `In` (reversed) or `Both` (both ways, a self-loop
//! once) — which [`Graph::from_out`] sorts and transposes; PageRank gets, as from a
//! snapshot, only the in-lists and the out-degrees ([`Projection::build_pull_external`]).
//! A weight property is read for all a table's edges at once
//! ([`ExternalGraph::edge_values`]); a missing or non-numeric weight is an error naming the
//! edge, as on a snapshot.

use plexus_txn::ExternalGraph;

use plexus_types::{EdgeId, EdgeTableId};

use super::{AnalyticsError, Members, ProjectedGraph, Projection, VertexMap, weight};
use crate::Direction;
use crate::csr::{Csr, Graph};
use crate::par::exclusive_scan;

impl Projection {
    /// Builds this projection of `graph` (see the module doc).
    pub fn build_external(
        &self,
        graph: &dyn ExternalGraph,
    ) -> Result<ProjectedGraph, AnalyticsError> {
        let (vertices, edges) = self.external_edges(graph)?;
        let out = lists(&edges, vertices.vertex_count(), self.direction);
        Ok(ProjectedGraph {
            graph: Graph::from_out(out, self.direction != Direction::Both),
            vertices,
            ts: 0,
        })
    }

    /// What PageRank pulls along, as [`Projection::build_pull`] gives it for a snapshot: the
    /// vertices, the in-lists (sorted) and every vertex's out-degree, without the out-CSR
    /// and its transposition.
    pub(crate) fn build_pull_external(
        &self,
        graph: &dyn ExternalGraph,
    ) -> Result<(VertexMap, Csr, Vec<u64>), AnalyticsError> {
        let (vertices, edges) = self.external_edges(graph)?;
        let n = vertices.vertex_count();
        let mut inc = lists(&edges, n, self.direction.reversed());
        inc.sort_neighbors();
        let out_degrees = degrees(&edges, n, self.direction);
        Ok((vertices, inc, out_degrees))
    }

    /// The selected vertices, and each selected edge table's edges as dense (source,
    /// destination) ids, edges with an unselected end left out.
    fn external_edges(
        &self,
        graph: &dyn ExternalGraph,
    ) -> Result<(VertexMap, Vec<DenseEdges>), AnalyticsError> {
        let vertices = VertexMap::select_external(graph, &self.vertex_labels)?;
        let tables = graph.edge_tables();
        for name in &self.edge_types {
            if !tables.iter().any(|t| &t.edge_type == name) {
                return Err(AnalyticsError::UnknownEdgeType(name.clone()));
            }
        }
        let mut edges = Vec::new();
        for (t, table) in tables.iter().enumerate() {
            if !self.edge_types.is_empty() && !self.edge_types.contains(&table.edge_type) {
                continue;
            }
            let (Some(src), Some(dst)) = (vertices.slot(table.src), vertices.slot(table.dst))
            else {
                continue;
            };
            let (src_map, dst_map) = (&vertices.tables[src], &vertices.tables[dst]);
            let (sources, targets) = graph.edge_list(t as u32)?;
            let values = match &self.weight {
                Some(name) => Some(graph.edge_values(t as u32, name)?),
                None => None,
            };
            let (mut from, mut to) = (Vec::with_capacity(sources.len()), Vec::new());
            to.reserve(targets.len());
            let mut weights = values.as_ref().map(|_| Vec::with_capacity(sources.len()));
            for (e, (&s, &d)) in sources.iter().zip(&targets).enumerate() {
                if let (Some(s), Some(d)) = (src_map.dense(s), dst_map.dense(d)) {
                    from.push(s);
                    to.push(d);
                    if let (Some(weights), Some(values), Some(name)) =
                        (&mut weights, &values, &self.weight)
                    {
                        let edge = EdgeId::new(t as EdgeTableId, e as u32);
                        weights.push(weight(values[e].clone(), edge, name)?);
                    }
                }
            }
            edges.push(DenseEdges { from, to, weights });
        }
        Ok((vertices, edges))
    }
}

/// One edge table's selected edges as dense ids, with their weights if asked for.
struct DenseEdges {
    from: Vec<u32>,
    to: Vec<u32>,
    weights: Option<Vec<f64>>,
}

/// Calls `f(from, to, weight)` for each edge of the projected graph read in `direction`: as
/// stored (`Out`), reversed (`In`), or both ways with a self-loop once (`Both`); the weight is
/// 0 when none was read.
fn for_each_arc(edges: &[DenseEdges], direction: Direction, mut f: impl FnMut(u32, u32, f64)) {
    for table in edges {
        for (i, (&s, &d)) in table.from.iter().zip(&table.to).enumerate() {
            let w = table.weights.as_ref().map_or(0.0, |w| w[i]);
            match direction {
                Direction::Out => f(s, d, w),
                Direction::In => f(d, s, w),
                Direction::Both => {
                    f(s, d, w);
                    if s != d {
                        f(d, s, w);
                    }
                }
            }
        }
    }
}

/// The out-degrees of the projected graph read in `direction`.
fn degrees(edges: &[DenseEdges], n: usize, direction: Direction) -> Vec<u64> {
    let mut degrees = vec![0u64; n];
    for_each_arc(edges, direction, |from, _, _| degrees[from as usize] += 1);
    degrees
}

/// The out-lists of the projected graph read in `direction`, unsorted (a counting sort by
/// source).
fn lists(edges: &[DenseEdges], n: usize, direction: Direction) -> Csr {
    let offsets = exclusive_scan(&degrees(edges, n, direction));
    let mut cursor = offsets.clone();
    let arcs = offsets.last().copied().unwrap_or(0) as usize;
    let mut targets = vec![0u32; arcs];
    let weighted = edges.iter().any(|t| t.weights.is_some());
    let mut weights = weighted.then(|| vec![0f64; arcs]);
    for_each_arc(edges, direction, |from, to, w| {
        let at = cursor[from as usize] as usize;
        targets[at] = to;
        if let Some(weights) = &mut weights {
            weights[at] = w;
        }
        cursor[from as usize] += 1;
    });
    Csr::from_parts(offsets, targets, weights)
}

impl VertexMap {
    /// The vertices of `graph` selected by `label_names` (all if empty), in table order.
    fn select_external(
        graph: &dyn ExternalGraph,
        label_names: &[String],
    ) -> Result<VertexMap, AnalyticsError> {
        let tables = graph.vertex_tables();
        for name in label_names {
            let known = (tables.iter()).any(|t| &t.name == name || t.labels.contains(name));
            if !known {
                return Err(AnalyticsError::UnknownLabel(name.clone()));
            }
        }
        VertexMap::lay_out(tables.len(), |id| {
            let table = &tables[id as usize];
            if label_names.is_empty() || label_names.contains(&table.name) {
                return Ok(Members::Prefix { count: table.count });
            }
            let mut rows: Vec<u32> = Vec::new();
            for label in label_names.iter().filter(|l| table.labels.contains(l)) {
                let carrying = graph.scan_extra_label(id, label)?;
                rows.extend(carrying.into_iter().map(|v| v.offset));
            }
            rows.sort_unstable();
            rows.dedup();
            Ok(Members::of_rows(rows))
        })
    }
}
