//! Projections of an external graph (a GraphAr graph attached with `ATTACH … AS name`):
//! the same [`ProjectedGraph`] a snapshot gives, built from the graph's edge lists.
//!
//! Vertex tables are laid out in table order as for a snapshot (see DENSE IDS in the parent
//! module); a table named by a label is selected whole, others contribute the vertices
//! carrying a named label as an extra label. Every selected edge table's edge list
//! ([`ExternalGraph::edge_list`], the whole list, read once) is translated to dense ids and
//! counted into an out-CSR — in `Out`, `In` (reversed) or `Both` (both ways, a self-loop
//! once) — which [`Graph::from_out`] sorts and transposes. Weights are not read: a weighted
//! projection (SSSP) on an external graph is an error.

use plexus_txn::ExternalGraph;
use plexus_types::VertexTableId;

use super::{AnalyticsError, Members, ProjectedGraph, Projection, TableMap, VertexMap};
use crate::Direction;
use crate::csr::{Csr, Graph, GraphError, MAX_VERTICES};
use crate::par::exclusive_scan;

impl Projection {
    /// Builds this projection of `graph` (see the module doc).
    pub fn build_external(
        &self,
        graph: &dyn ExternalGraph,
    ) -> Result<ProjectedGraph, AnalyticsError> {
        if let Some(weight) = &self.weight {
            return Err(AnalyticsError::Unsupported(format!(
                "weighted projections (weight property {weight:?}) on attached graph '{}'",
                graph.name()
            )));
        }
        let vertices = VertexMap::select_external(graph, &self.vertex_labels)?;
        let tables = graph.edge_tables();
        for name in &self.edge_types {
            if !tables.iter().any(|t| &t.edge_type == name) {
                return Err(AnalyticsError::UnknownEdgeType(name.clone()));
            }
        }
        let n = vertices.vertex_count();
        // (from, to) dense pairs of the projected graph's out-lists.
        let mut pairs: Vec<(u32, u32)> = Vec::new();
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
            for (&s, &d) in sources.iter().zip(&targets) {
                let (Some(s), Some(d)) = (src_map.dense(s), dst_map.dense(d)) else {
                    continue;
                };
                match self.direction {
                    Direction::Out => pairs.push((s, d)),
                    Direction::In => pairs.push((d, s)),
                    Direction::Both => {
                        pairs.push((s, d));
                        if s != d {
                            pairs.push((d, s));
                        }
                    }
                }
            }
        }
        let mut degrees = vec![0u64; n];
        for &(from, _) in &pairs {
            degrees[from as usize] += 1;
        }
        let offsets = exclusive_scan(&degrees);
        let mut cursor = offsets.clone();
        let mut targets = vec![0u32; pairs.len()];
        for &(from, to) in &pairs {
            targets[cursor[from as usize] as usize] = to;
            cursor[from as usize] += 1;
        }
        let out = Csr::from_parts(offsets, targets, None);
        Ok(ProjectedGraph {
            graph: Graph::from_out(out, self.direction != Direction::Both),
            vertices,
            ts: 0,
        })
    }
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
        let mut maps = Vec::new();
        let mut slot_of = vec![None; tables.len()];
        let mut next_base = 0usize;
        for (id, table) in tables.iter().enumerate() {
            let members = if label_names.is_empty() || label_names.contains(&table.name) {
                Members::Prefix { count: table.count }
            } else {
                let mut rows: Vec<u32> = Vec::new();
                for label in label_names.iter().filter(|l| table.labels.contains(l)) {
                    let carrying = graph.scan_extra_label(id as VertexTableId, label)?;
                    rows.extend(carrying.into_iter().map(|v| v.offset));
                }
                rows.sort_unstable();
                rows.dedup();
                Members::of_rows(rows)
            };
            let selected = members.len() as usize;
            if selected == 0 {
                continue;
            }
            let vertex_count = next_base + selected;
            if vertex_count > MAX_VERTICES {
                return Err(GraphError::TooManyVertices { vertex_count }.into());
            }
            slot_of[id] = Some(maps.len());
            maps.push(TableMap::new(
                id as VertexTableId,
                next_base as u32,
                members,
            ));
            next_base = vertex_count;
        }
        Ok(VertexMap {
            tables: maps,
            slot_of,
        })
    }
}
