//! Plexus analytics kernels.
//!
//! PIPELINE
//! ========
//! Analytics never walk the storage engine's structures directly. A query pins a snapshot,
//! the snapshot is converted once into a compact, immutable [`Graph`] (two CSRs: out-edges and
//! in-edges), and every kernel reads only that:
//!
//! ```text
//!   pinned snapshot ──(AdjacencySource: per-vertex neighbour slices)──▶ Graph::from_source
//!   edge list (files, tests) ───────────────────────────────────────▶ Graph::from_edges
//!                                                                        │
//!          bfs · pagerank · wcc · cdlp · lcc · sssp · khop_count · triangle_count · degree
//!                                                                        │
//!                                              Vec<_> indexed by dense vertex id (0..n)
//! ```
//!
//! Vertices are dense `u32` ids `0..n`. Mapping external ids (Graphalytics ids, storage row
//! ids) to dense ids and back is the caller's job; labels in outputs (WCC, CDLP) are dense ids.
//! Where a Graphalytics rule breaks ties by "smallest label", it is the smallest dense id, which
//! equals the smallest external id only if the caller's mapping preserves order (the
//! [`graphalytics`] loader's does).
//!
//! DETERMINISM
//! ===========
//! Every kernel is rayon-parallel and returns bit-identical results on every run and for every
//! thread count: integer results do not depend on scheduling; floating-point sums are either
//! taken per vertex in CSR order or over fixed-size chunks combined in a fixed order (never a
//! work-stealing `sum()`), and SSSP converges to the unique least fixpoint (see `sssp`).
//!
//! ERRORS
//! ======
//! Building a graph can fail with [`GraphError`] (vertex out of range, mixed weighted and
//! unweighted edges, …); kernels whose parameters can be invalid (a source vertex, a damping
//! factor, missing or negative weights) return [`AlgoError`]. Kernels never panic on bad input.
//!
//! NOT DONE HERE
//! =============
//! No incremental maintenance: a new snapshot means a new `Graph`. No out-of-core execution:
//! the CSR must fit in memory (about 4 bytes per edge and direction, plus 8 per weight).

mod adj;
pub mod bfs;
pub mod cdlp;
pub mod csr;
pub mod degree;
pub mod graphalytics;
pub mod khop;
pub mod lcc;
pub mod pagerank;
mod par;
pub mod sssp;
pub mod triangles;
pub mod wcc;

pub use bfs::{BFS_UNREACHABLE, BfsParams, bfs};
pub use cdlp::{CdlpParams, cdlp};
pub use csr::{AdjacencySource, Csr, Edge, Graph, GraphError, MAX_VERTICES, SliceSink};
pub use degree::{DegreeParams, degree};
pub use khop::{KHopParams, khop_count};
pub use lcc::{LccParams, lcc};
pub use pagerank::{PageRankParams, pagerank};
pub use sssp::{SsspParams, sssp};
pub use triangles::{TriangleParams, triangle_count};
pub use wcc::{WccParams, wcc};

/// Which edges of a directed graph a kernel follows. On an undirected graph all three are the
/// same neighbourhood (each edge counted once).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Follow out-edges `v → u`.
    #[default]
    Out,
    /// Follow in-edges `u → v` backwards.
    In,
    /// Follow both, ignoring direction.
    Both,
}

/// Invalid kernel parameters or a graph a kernel cannot run on.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AlgoError {
    #[error("source vertex {source_vertex} is out of range (graph has {vertex_count} vertices)")]
    SourceOutOfRange {
        source_vertex: u32,
        vertex_count: usize,
    },
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        reason: &'static str,
    },
    #[error("the graph has no edge weights; this kernel needs them")]
    MissingWeights,
    #[error("edge {src} -> {dst} has weight {weight}; weights must be non-negative numbers")]
    InvalidWeight { src: u32, dst: u32, weight: f64 },
}

/// Check a source vertex against the graph; shared by the single-source kernels.
fn check_source(g: &Graph, source: u32) -> Result<(), AlgoError> {
    if (source as usize) < g.vertex_count() {
        Ok(())
    } else {
        Err(AlgoError::SourceOutOfRange {
            source_vertex: source,
            vertex_count: g.vertex_count(),
        })
    }
}
