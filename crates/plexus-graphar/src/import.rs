//! Import: a GraphAr graph into a Plexus database, in one bulk load.
//!
//! WHAT
//! ====
//! [`import`] reads every vertex type, then every edge triple, with [`crate::read`], and
//! stages them in one `plexus::BulkLoad`, which it commits at the end: the whole graph
//! becomes visible at once, and on any error the load is dropped and the database is as it
//! was (nothing half-imported is ever visible).
//!
//! ```text
//!   for each vertex type: read_vertices ──▶ add_nodes([TYPE], row labels, columns)
//!                         GraphAr index i ──▶ the VertexId the load gave row i
//!   for each edge triple: for_each_edge_part (ordered_by_source if present, else the first
//!                         list), one part at a time
//!                         (src index, dst index) ──▶ add_relationships(EDGE, src, dst, columns)
//!   commit
//! ```
//!
//! MAPPING
//! =======
//! The inverse of [`crate::export`]'s rules: a vertex type becomes the label of its vertices
//! (no label for [`UNLABELED_TYPE`]), each true label column one more label; properties keep
//! their names, nulls are absent properties; int32/int64 → Integer, float/double → Float,
//! date → Date, timestamp → LocalDateTime, lists → lists. Every GraphAr edge becomes one
//! directed relationship from its source to its destination, `directed: false` graphs
//! included (GraphAr stores each undirected edge once; Plexus queries may ignore direction).
//! Vertex types and relationship types go into implicit tables (nothing is declared, so no
//! primary key is enforced; `is_primary` is not used).
//!
//! Rows are staged in batches of [`IMPORT_BATCH_ROWS`], reporting [`ImportProgress`] after
//! each; a row the load rejects fails the import, naming the metadata file and the row.

use plexus::{BulkLoad, Database, Value, VertexId};

use crate::export::UNLABELED_TYPE;
use crate::meta::GraphInfo;
use crate::read::{self, edge_count, preferred_adj_list, read_vertices, vertex_count};
use crate::{Error, VertexData};

/// Rows handed to the bulk loader per call (and between two progress reports).
pub const IMPORT_BATCH_ROWS: usize = 65_536;

/// Where an import is: `done` of `total` vertices and edges, working on `current` (a vertex
/// type or `SRC_EDGE_DST`).
#[derive(Clone, Copy, Debug)]
pub struct ImportProgress<'a> {
    pub done: u64,
    pub total: u64,
    pub current: &'a str,
}

/// What a committed import added.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportSummary {
    pub vertices: u64,
    pub edges: u64,
}

/// Loads `graph` into `db` in one bulk load (see the module doc).
pub fn import(
    db: &Database,
    graph: &GraphInfo,
    progress: &mut dyn FnMut(ImportProgress<'_>),
) -> Result<ImportSummary, Error> {
    let mut total = 0u64;
    for v in &graph.vertices {
        total = total.saturating_add(vertex_count(graph, v)?);
    }
    for e in &graph.edges {
        total = total.saturating_add(edge_count(graph, e, preferred_adj_list(e)?)?);
    }
    let mut load = db.bulk_load();
    let mut done = 0;
    let mut ids: Vec<Vec<VertexId>> = Vec::with_capacity(graph.vertices.len());
    for v in &graph.vertices {
        progress(ImportProgress {
            done,
            total,
            current: &v.type_name,
        });
        let data = read_vertices(graph, v)?;
        let labels: Vec<&str> = if v.type_name == UNLABELED_TYPE {
            Vec::new()
        } else {
            vec![v.type_name.as_str()]
        };
        let row_labels = row_labels(&data);
        // (The count comes from a file: no capacity beyond what the chunks proved.)
        let mut added = Vec::with_capacity(data.columns.first().map_or(0, |(_, c)| c.len()));
        for begin in (0..data.count as usize).step_by(IMPORT_BATCH_ROWS) {
            let end = (begin + IMPORT_BATCH_ROWS).min(data.count as usize);
            let columns = slice(&data.columns, begin, end);
            let extra = row_labels.as_ref().map(|r| &r[begin..end]);
            let result = load
                .add_nodes(&labels, extra, &columns, end - begin)
                .map_err(|e| Error::file(&v.file, format!("loading vertices: {e}")))?;
            if let Some((row, e)) = result.rejected.first() {
                return Err(Error::file(
                    &v.file,
                    format!("vertex {} was refused: {e}", begin + row),
                ));
            }
            added.extend(result.ids.into_iter().flatten());
            done += (end - begin) as u64;
            progress(ImportProgress {
                done,
                total,
                current: &v.type_name,
            });
        }
        ids.push(added);
    }
    for e in &graph.edges {
        let key = e.key();
        progress(ImportProgress {
            done,
            total,
            current: &key,
        });
        let ids_of = |type_name: &str| {
            (graph.vertices.iter())
                .position(|v| v.type_name == type_name)
                .map(|i| &ids[i])
                .ok_or_else(|| Error::file(&e.file, format!("no vertex type {type_name:?}")))
        };
        let (src_ids, dst_ids) = (ids_of(&e.src_type)?, ids_of(&e.dst_type)?);
        // One part at a time, through two batch-sized buffers: the edge list is never held
        // whole (fresh memory is what a load of millions of edges mostly pays for).
        let (mut src, mut dst) = (Vec::new(), Vec::new());
        let mut first_row = 0;
        read::for_each_edge_part(graph, e, preferred_adj_list(e)?, &mut |data| {
            for begin in (0..data.src.len()).step_by(IMPORT_BATCH_ROWS) {
                let end = (begin + IMPORT_BATCH_ROWS).min(data.src.len());
                // The reader checked every index against the vertex counts, which the load
                // matched.
                src.clear();
                src.extend(data.src[begin..end].iter().map(|&i| src_ids[i as usize]));
                dst.clear();
                dst.extend(data.dst[begin..end].iter().map(|&i| dst_ids[i as usize]));
                let columns = slice(&data.columns, begin, end);
                add_edges(&mut load, e, &src, &dst, &columns, first_row + begin)?;
                done += (end - begin) as u64;
                progress(ImportProgress {
                    done,
                    total,
                    current: &key,
                });
            }
            first_row += data.src.len();
            Ok(())
        })?;
    }
    let summary = load
        .commit()
        .map_err(|e| Error::Database(format!("commit: {e}")))?;
    Ok(ImportSummary {
        vertices: summary.nodes,
        edges: summary.relationships,
    })
}

fn add_edges(
    load: &mut BulkLoad,
    e: &crate::meta::EdgeInfo,
    src: &[VertexId],
    dst: &[VertexId],
    columns: &[(String, Vec<Value>)],
    first_row: usize,
) -> Result<(), Error> {
    let result = load
        .add_relationships(&e.edge_type, src, dst, columns)
        .map_err(|err| Error::file(&e.file, format!("loading edges: {err}")))?;
    match result.rejected.first() {
        Some((row, err)) => Err(Error::file(
            &e.file,
            format!("edge {} was refused: {err}", first_row + row),
        )),
        None => Ok(()),
    }
}

/// Per vertex, the labels whose column is true; `None` when the type has no label columns.
fn row_labels(data: &VertexData) -> Option<Vec<Vec<String>>> {
    if data.labels.is_empty() {
        return None;
    }
    let rows = (0..data.count as usize).map(|row| {
        (data.labels.iter())
            .filter(|(_, flags)| flags[row])
            .map(|(label, _)| label.clone())
            .collect()
    });
    Some(rows.collect())
}

fn slice(columns: &[(String, Vec<Value>)], begin: usize, end: usize) -> Vec<(String, Vec<Value>)> {
    (columns.iter())
        .map(|(name, values)| (name.clone(), values[begin..end].to_vec()))
        .collect()
}
