//! Plexus analytics kernels.
//!
//! PIPELINE
//! ========
//! Analytics read storage only through a pinned `GraphSnapshot`. Most kernels run on a
//! compact, immutable [`Graph`] (two CSRs: out-edges and in-edges) that a [`Projection`]
//! builds from the snapshot once per run; WCC, where measurement showed that building the CSR
//! costs more than its single pass, reads the snapshot's neighbour slices directly (see `live`;
//! `pagerank_from_slices` is the same idea for PageRank, kept for the benchmark's comparison):
//!
//! ```text
//!   pinned GraphSnapshot + Projection ──(segment scans, parallel)──▶ ProjectedGraph  (projection)
//!   pinned GraphSnapshot + Projection ──(segment scans every pass)──▶ live::wcc
//!   snapshot-like AdjacencySource ──(per-vertex slices)────────────▶ Graph::from_source
//!   edge list (files, tests) ──────────────────────────────────────▶ Graph::from_edges
//!                                                                        │
//!   kernels::{bfs · pagerank · wcc · cdlp · lcc · sssp · khop_count · khop_from ·
//!            triangle_count · degree}
//!                                                                        │
//!                                              Vec<_> indexed by dense vertex id (0..n)
//! ```
//!
//! Two layers of API:
//! - the crate root ([`pagerank()`], [`bfs()`], … from `live`): kernels on a pinned
//!   `GraphSnapshot` through a [`Projection`], results keyed by `VertexId` — what
//!   `plexus::algo` re-exports;
//! - [`kernels`]: the same kernels on a [`Graph`] with dense ids, for callers that build graphs
//!   themselves (edge lists, the Graphalytics files, a [`ProjectedGraph`] reused for several
//!   kernels).
//!
//! On a [`Graph`], vertices are dense `u32` ids `0..n`. Mapping external ids (Graphalytics ids,
//! storage row ids) to dense ids and back is the caller's job ([`ProjectedGraph`] does it for
//! snapshots); labels in outputs (WCC, CDLP) are dense ids.
//! Where a Graphalytics rule breaks ties by "smallest label", it is the smallest dense id, which
//! equals the smallest external id only if the caller's mapping preserves order (the
//! Graphalytics loader's does: `plexus_tck::graphalytics`, the validation harness, which lives
//! with the other conformance suites and calls these kernels through `plexus::algo`).
//!
//! DETERMINISM
//! ===========
//! Every kernel is rayon-parallel and returns bit-identical results on every run and for every
//! thread count: integer results do not depend on scheduling; floating-point sums are either
//! taken per vertex in CSR order (storage order for the snapshot PageRank) or over fixed-size
//! chunks combined in a fixed order (never a work-stealing `sum()`), and SSSP converges to the
//! unique least fixpoint (see `sssp`).
//!
//! ERRORS
//! ======
//! Building a graph can fail with [`GraphError`] (vertex out of range, mixed weighted and
//! unweighted edges, …); kernels whose parameters can be invalid (a source vertex, a damping
//! factor, missing or negative weights) return [`AlgoError`]. Kernels never panic on bad input.
//!
//! NOT DONE HERE
//! =============
//! No incremental maintenance: a new snapshot means a new `Graph` (or new passes over the
//! snapshot for the kernels that read it directly, see `live`). No out-of-core execution:
//! the CSR must fit in memory (about 4 bytes per edge and direction, plus 8 per weight).

mod adj;
pub mod bfs;
pub mod cdlp;
pub mod csr;
pub mod degree;
pub mod khop;
pub mod lcc;
pub mod live;
mod live_bfs;
pub mod pagerank;
mod par;
pub mod priority;
pub mod projection;
pub mod sssp;
pub mod triangles;
pub mod wcc;

pub use bfs::{BFS_UNREACHABLE, BfsParams};
pub use cdlp::CdlpParams;
pub use csr::{AdjacencySource, Csr, Edge, Graph, GraphError, MAX_VERTICES, SliceSink};
pub use degree::DegreeParams;
pub use khop::KHopParams;
pub use lcc::LccParams;
pub use live::{
    GraphInput, bfs, bfs_via_csr, cdlp, degree, khop_count, lcc, pagerank, pagerank_from_slices,
    sssp, triangle_count, wcc,
};
pub use pagerank::PageRankParams;
pub use projection::{AnalyticsError, ProjectedGraph, Projection};
pub use sssp::SsspParams;
pub use triangles::TriangleParams;
pub use wcc::WccParams;

/// The kernels on a [`Graph`] with dense vertex ids (see the crate doc).
pub mod kernels {
    pub use crate::bfs::bfs;
    pub use crate::cdlp::cdlp;
    pub use crate::degree::degree;
    pub use crate::khop::{khop_count, khop_from, khop_from_sources};
    pub use crate::lcc::lcc;
    pub use crate::pagerank::pagerank;
    pub use crate::sssp::sssp;
    pub use crate::triangles::triangle_count;
    pub use crate::wcc::wcc;
}

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

impl Direction {
    /// The direction whose out-lists are the in-lists of `self`.
    pub(crate) fn reversed(self) -> Direction {
        match self {
            Direction::Out => Direction::In,
            Direction::In => Direction::Out,
            Direction::Both => Direction::Both,
        }
    }
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
fn check_source(vertex_count: usize, source: u32) -> Result<(), AlgoError> {
    if (source as usize) < vertex_count {
        Ok(())
    } else {
        Err(AlgoError::SourceOutOfRange {
            source_vertex: source,
            vertex_count,
        })
    }
}
