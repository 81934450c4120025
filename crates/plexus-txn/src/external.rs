//! External graphs: read-only graphs kept outside the storage — a GraphAr directory mounted
//! with `ATTACH GRAPHAR … AS name` — read through an ordinary [`Transaction`].
//!
//! WHAT
//! ====
//! A [`Transaction`] begun with [`crate::begin_external`] answers every read from an
//! [`ExternalGraph`] instead of the storage: label scans, existence, labels, properties,
//! neighbours, edge scans and endpoints. The executor, the expression evaluator and the result
//! conversion read through `Transaction` as they always do, so every read-only Cypher
//! statement runs on an external graph unchanged. Every write fails with
//! `Error::InvalidArgument` naming the graph; index seeks answer "no index" (the caller
//! scans); `commit` writes nothing.
//!
//! IDS
//! ===
//! An external graph numbers its own elements: `VertexId { table, offset }` is (vertex type
//! index, index within the type) and `EdgeId { table, offset }` (edge table index, edge index
//! within the table), each table numbered `0..count` densely. An id is meaningful only on the
//! graph that gave it: ids of the database and of an external graph are never mixed in one
//! statement, since one statement reads one graph.
//!
//! INVARIANTS
//! ==========
//! One edge has one id whichever endpoint it is reached from (relationship uniqueness in a
//! pattern compares ids); `neighbors_into` lists out-edges before in-edges for `Both`, so a
//! self-loop appears twice, as in the storage. The graph does not change while attached.

use plexus_types::{Direction, EdgeId, Result, Value, VertexId, VertexTableId};

/// A vertex table of an external graph: a vertex type, its own label and extra labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalVertexTable {
    pub name: String,
    /// Labels a vertex of the type may carry besides `name`.
    pub labels: Vec<String>,
    pub count: u32,
}

/// An edge table of an external graph: one (source type, edge type, destination type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalEdgeTable {
    pub edge_type: String,
    pub src: VertexTableId,
    pub dst: VertexTableId,
    pub count: u32,
}

/// A read-only graph a transaction can read instead of the storage (see the module doc).
pub trait ExternalGraph: Send + Sync {
    /// The name it is attached under (errors say it).
    fn name(&self) -> &str;
    /// Vertex tables by table id.
    fn vertex_tables(&self) -> &[ExternalVertexTable];
    /// Edge tables by table id.
    fn edge_tables(&self) -> &[ExternalEdgeTable];
    /// Every property name of its vertex and edge tables, in declaration order.
    fn property_keys(&self) -> Vec<String>;
    /// Whether `v` carries `label` besides its table's own label.
    fn has_extra_label(&self, v: VertexId, label: &str) -> Result<bool>;
    /// The vertices of table `table` carrying extra label `label`, in offset order.
    fn scan_extra_label(&self, table: VertexTableId, label: &str) -> Result<Vec<VertexId>>;
    /// Property `name` of `v` (`None`: absent).
    fn vertex_property(&self, v: VertexId, name: &str) -> Result<Option<Value>>;
    /// Every present property of `v`, in declaration order.
    fn vertex_properties(&self, v: VertexId) -> Result<Vec<(String, Value)>>;
    /// The edges of `v` of the given tables in direction `Out` or `In` (never `Both`), with
    /// the vertex at the other end, appended to `found`.
    fn neighbors_into(
        &self,
        v: VertexId,
        tables: &[u32],
        dir: Direction,
        found: &mut Vec<(EdgeId, VertexId)>,
    ) -> Result<()>;
    /// (source, destination) of `e`.
    fn edge_endpoints(&self, e: EdgeId) -> Result<(VertexId, VertexId)>;
    /// Property `name` of `e`.
    fn edge_property(&self, e: EdgeId, name: &str) -> Result<Option<Value>>;
    /// Every present property of `e`.
    fn edge_properties(&self, e: EdgeId) -> Result<Vec<(String, Value)>>;
    /// Every edge of edge table `table` as (source offsets, destination offsets), indexed by
    /// edge offset: what an analytics projection reads.
    fn edge_list(&self, table: u32) -> Result<(Vec<u32>, Vec<u32>)>;
    /// Property `name` of every edge of edge table `table`, indexed by edge offset (`None`:
    /// absent): the weights of an analytics projection.
    fn edge_values(&self, table: u32, name: &str) -> Result<Vec<Option<Value>>>;
}

/// The reads a [`Transaction`] over an external graph answers from the graph's tables: what
/// the storage answers from its catalog (labels, types, existence, scans).
pub(crate) mod reads {
    use super::*;
    use plexus_types::{EdgeTableId, Error};

    /// The error of a write (or an index build) on an external graph.
    pub(crate) fn read_only(graph: &dyn ExternalGraph) -> Error {
        Error::InvalidArgument(format!(
            "graph '{}' is attached read-only: it cannot be written",
            graph.name()
        ))
    }

    pub(crate) fn vertex_exists(graph: &dyn ExternalGraph, v: VertexId) -> bool {
        (graph.vertex_tables().get(v.table as usize)).is_some_and(|t| v.offset < t.count)
    }

    pub(crate) fn check_vertex(graph: &dyn ExternalGraph, v: VertexId) -> Result<()> {
        if vertex_exists(graph, v) {
            return Ok(());
        }
        Err(Error::NotFound(format!(
            "vertex {v} is not in graph '{}'",
            graph.name()
        )))
    }

    pub(crate) fn edge_exists(graph: &dyn ExternalGraph, e: EdgeId) -> bool {
        (graph.edge_tables().get(e.table as usize)).is_some_and(|t| e.offset < t.count)
    }

    pub(crate) fn check_edge(graph: &dyn ExternalGraph, e: EdgeId) -> Result<()> {
        if edge_exists(graph, e) {
            return Ok(());
        }
        Err(Error::NotFound(format!(
            "edge {e} is not in graph '{}'",
            graph.name()
        )))
    }

    /// Every vertex of table `table`.
    fn whole_table(table: usize, count: u32) -> impl Iterator<Item = VertexId> {
        (0..count).map(move |offset| VertexId::new(table as VertexTableId, offset))
    }

    pub(crate) fn scan_label(graph: &dyn ExternalGraph, label: &str) -> Result<Vec<VertexId>> {
        let mut found = Vec::new();
        for (t, table) in graph.vertex_tables().iter().enumerate() {
            if table.name == label {
                found.extend(whole_table(t, table.count));
            } else if table.labels.iter().any(|l| l == label) {
                found.extend(graph.scan_extra_label(t as VertexTableId, label)?);
            }
        }
        Ok(found)
    }

    pub(crate) fn scan_all(graph: &dyn ExternalGraph) -> Vec<VertexId> {
        let tables = graph.vertex_tables().iter().enumerate();
        tables
            .flat_map(|(t, table)| whole_table(t, table.count))
            .collect()
    }

    pub(crate) fn vertex_labels(graph: &dyn ExternalGraph, v: VertexId) -> Result<Vec<String>> {
        check_vertex(graph, v)?;
        let table = &graph.vertex_tables()[v.table as usize];
        let mut labels = vec![table.name.clone()];
        for label in &table.labels {
            if graph.has_extra_label(v, label)? {
                labels.push(label.clone());
            }
        }
        labels.sort(); // as the storage's vertex_labels
        labels.dedup();
        Ok(labels)
    }

    pub(crate) fn has_labels(
        graph: &dyn ExternalGraph,
        v: VertexId,
        names: &[impl AsRef<str>],
    ) -> Result<bool> {
        check_vertex(graph, v)?;
        let table = &graph.vertex_tables()[v.table as usize];
        for name in names {
            let name = name.as_ref();
            let held = name == table.name
                || (table.labels.iter().any(|l| l == name) && graph.has_extra_label(v, name)?);
            if !held {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The edges of `v` of type `edge_type` (or all) in `dir`; `Both`: out, then in.
    pub(crate) fn neighbors_into(
        graph: &dyn ExternalGraph,
        v: VertexId,
        edge_type: Option<&str>,
        dir: Direction,
        found: &mut Vec<(EdgeId, VertexId)>,
    ) -> Result<()> {
        check_vertex(graph, v)?;
        let sides: &[Direction] = match dir {
            Direction::Out => &[Direction::Out],
            Direction::In => &[Direction::In],
            Direction::Both => &[Direction::Out, Direction::In],
        };
        let edges = graph.edge_tables();
        for &side in sides {
            let tables: Vec<u32> = (0..edges.len() as u32)
                .filter(|&t| {
                    let table = &edges[t as usize];
                    let end = if side == Direction::Out {
                        table.src
                    } else {
                        table.dst
                    };
                    end == v.table && edge_type.is_none_or(|ty| table.edge_type == ty)
                })
                .collect();
            if !tables.is_empty() {
                graph.neighbors_into(v, &tables, side, found)?;
            }
        }
        Ok(())
    }

    pub(crate) fn scan_edges(graph: &dyn ExternalGraph, edge_type: &str) -> Vec<EdgeId> {
        let tables = graph.edge_tables().iter().enumerate();
        tables
            .filter(|(_, table)| table.edge_type == edge_type)
            .flat_map(|(t, table)| {
                (0..table.count).map(move |offset| EdgeId::new(t as EdgeTableId, offset))
            })
            .collect()
    }

    pub(crate) fn edge_type(graph: &dyn ExternalGraph, e: EdgeId) -> Result<String> {
        check_edge(graph, e)?;
        Ok(graph.edge_tables()[e.table as usize].edge_type.clone())
    }
}
