//! Kernels on live data: every kernel run on a pinned [`GraphSnapshot`] through a
//! [`Projection`], with results keyed by [`VertexId`]. This is the API the facade re-exports
//! as `plexus::algo`.
//!
//! ```text
//!   db.snapshot() ──▶ Projection::build ──▶ ProjectedGraph { Graph, dense ↔ VertexId } ──▶ kernel
//!                                                                                   │
//!                                              Vec<(VertexId, value)> in VertexId order ◀┘
//! ```
//!
//! ISOLATION
//! =========
//! A snapshot is pinned at one timestamp, so a kernel sees exactly the graph committed at or
//! before it, whatever commits while it runs (the `htap` test checks this against a static
//! copy). Building the projection takes read latches one segment at a time, never across
//! segments, so writers are delayed by at most one segment scan; the kernel itself touches
//! only the projection's private arrays.
//!
//! TWO WAYS TO READ THE SNAPSHOT
//! =============================
//! - WCC reads the snapshot's neighbour slices directly in one pass
//!   ([`GraphSnapshot::scan_segment`], rayon over segments), translating offsets to dense ids
//!   on the fly and unioning along the stored out-adjacency (every edge once, direction
//!   ignored); nothing is built but O(n) arrays.
//! - BFS reads them directly too, level by level ([`crate::live_bfs`]): top-down levels scan
//!   only the frontier vertices of the out-segments holding one, bottom-up levels only the
//!   unvisited vertices of the in-segments and stop each at its first parent; the direction
//!   switch counts frontier out-edges lazily instead of the CSR's O(1) degrees. O(n) arrays,
//!   no edge copy.
//! - The other kernels, PageRank included, build a transient compact CSR
//!   ([`Projection::build`]) and run the [`crate::kernels`] on it: PageRank's 20 passes run
//!   faster over dense arrays than over storage slices, CDLP and LCC want sorted, merged
//!   neighbour lists, SSSP wants weights beside the targets (read from the runs' property
//!   columns where current). SSSP builds only the out-lists, in storage order
//!   (`Projection::build_out`): its result does not depend on the order of relaxations, and
//!   it never reads in-lists, so the sort and the transposition of a full build (with a
//!   weight per edge to move) are skipped (`docs/benchmarks.md` has the figures).
//!   PageRank builds only what it pulls along — the in-adjacency,
//!   scanned from the reversed sides, and the out-degrees — instead of the out-CSR plus its
//!   transpose: on the run layout analytics settle into (in-runs hold sorted lists) that is
//!   0.85 s instead of 0.90–0.97 s at scale 20; with most lists split over run and memtable
//!   it was no faster (their sort costs what the transpose's scatter saved).
//!
//! The split is measured, not assumed (`plexus-bench algo` times both designs for PageRank,
//! WCC and BFS in every run; `docs/design/analytics.md`): at scale 20 on a quiet machine
//! PageRank took 1.04 s through a CSR and 1.39 s from the slices, and left the concurrent
//! writer 0.68 of its rate instead of 0.48; WCC took 0.12 s from the slices and 0.42 s through
//! a CSR. BFS from the slices costs a few segment sweeps (one per large level, plus the
//! lengths) where the CSR costs a full build (two sweeps reading every edge, a sort and a
//! transposition) for a kernel that then touches a fraction of the edges: 0.16–0.20 s against
//! 0.65–1.1 s via the CSR at scale 20 on a loaded machine (see `docs/benchmarks.md` for the
//! recorded run). [`pagerank_from_slices`] (pulling along the reverse sides, out-degrees
//! counted once) and [`bfs_via_csr`] stay for those comparisons.
//!
//! Reading the slices means that, under concurrent writes, a pass meets the segments writers
//! have touched since the last compaction (entries split over the memtable and runs, merged
//! per segment by the topology); the `algo_under_writes` figures measure it.
//!
//! Every function here runs on the analytics pool, below transactions in CPU priority
//! ([`crate::priority`]), unless the caller runs it inside a rayon pool of its own. The results are still those of the pinned
//! timestamp. From the slices, PageRank's per-vertex sums run in storage order rather than
//! sorted order, so they can differ from the CSR kernel's in the last bits; WCC labels and BFS
//! depths are identical.
//!
//! To run several kernels on one snapshot, build a [`ProjectedGraph`] once and call the
//! [`crate::kernels`] on [`ProjectedGraph::graph`].
//!
//! RESULTS
//! =======
//! One `(vertex, value)` pair per projected vertex, in `VertexId` order. WCC and CDLP return
//! a vertex as the label: WCC the smallest vertex of the component, CDLP the vertex whose id
//! was the winning label (ties go to the smallest `VertexId`, the Graphalytics rule).

use std::sync::atomic::{AtomicU64, Ordering};

use plexus_txn::{ExternalGraph, GraphSnapshot};
use plexus_types::VertexId;
use rayon::prelude::*;

use crate::projection::{AnalyticsError, ProjectedGraph, Projection, VertexMap, count_degrees};
use crate::{
    BfsParams, CdlpParams, DegreeParams, Direction, KHopParams, LccParams, PageRankParams,
    SsspParams, TriangleParams, WccParams, kernels,
};

/// Hop depth from `source` along the projection's edges; unreachable vertices get
/// [`crate::BFS_UNREACHABLE`]. Reads the snapshot's slices level by level, top-down or
/// bottom-up ([`crate::live_bfs`]).
pub fn bfs<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    source: VertexId,
) -> Result<Vec<(VertexId, i64)>, AnalyticsError> {
    let snapshot = match input.into() {
        GraphInput::Snapshot(snapshot) => snapshot,
        external => return bfs_via_csr(external, projection, source),
    };
    crate::priority::run(|| crate::live_bfs::bfs(snapshot, projection, source))
}

/// BFS on a transient CSR of the projection: the design not taken for the API, kept because
/// `plexus-bench algo` measures it beside [`bfs`] (`bfs_via_csr`).
pub fn bfs_via_csr<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    source: VertexId,
) -> Result<Vec<(VertexId, i64)>, AnalyticsError> {
    per_vertex(input.into(), projection, |g| {
        let params = BfsParams {
            source: g.require(source)?,
        };
        Ok(kernels::bfs(g.graph(), &params)?)
    })
}

/// PageRank with the Graphalytics definition (dangling rank is redistributed) on a transient
/// in-CSR of the projection (see TWO WAYS TO READ THE SNAPSHOT).
pub fn pagerank<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    params: &PageRankParams,
) -> Result<Vec<(VertexId, f64)>, AnalyticsError> {
    let input = input.into();
    crate::priority::run(|| {
        let (vertices, inc, out_degrees) = match input {
            GraphInput::Snapshot(snapshot) => projection.build_pull(snapshot)?,
            GraphInput::External(graph) => projection.build_pull_external(graph)?,
        };
        let ranks = crate::pagerank::pagerank_pull(&inc, |u| out_degrees[u] as usize, params)?;
        Ok(vertices.pair_with(ranks))
    })
}

/// PageRank pulling straight from the snapshot's slices in every iteration: the design not
/// taken for the API, kept because `plexus-bench algo` measures it beside [`pagerank`].
pub fn pagerank_from_slices(
    snapshot: &GraphSnapshot,
    projection: &Projection,
    params: &PageRankParams,
) -> Result<Vec<(VertexId, f64)>, AnalyticsError> {
    crate::priority::run(|| {
        let vertices = VertexMap::select(snapshot, &projection.vertex_labels)?;
        let out_sides = projection.sides(snapshot, &vertices, projection.direction)?;
        let in_sides = projection.sides(snapshot, &vertices, projection.direction.reversed())?;
        let n = vertices.vertex_count();
        let out_degrees = count_degrees(snapshot, &vertices, &out_sides, n)?;
        // Σ contrib over in-neighbours, accumulated side after side (f64 bits).
        let pulled: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
        let ranks = crate::pagerank::iterate(
            n,
            params,
            |u| out_degrees[u] as usize,
            |contrib, step, next| {
                for side in &in_sides {
                    let (from, to) = side.maps(&vertices);
                    side.par_scan(snapshot, |segment| {
                        snapshot.scan_segment(side.table, side.outgoing, segment, |v, nbrs| {
                            let Some(dv) = from.dense(v) else { return };
                            let sum = nbrs.iter().fold(0.0, |acc, &u| match side.keep(to, v, u) {
                                Some(du) => acc + contrib[du as usize],
                                None => acc,
                            });
                            // One task per segment, segments cover disjoint vertices: no race.
                            let slot = &pulled[dv as usize];
                            let total = f64::from_bits(slot.load(Ordering::Relaxed)) + sum;
                            slot.store(total.to_bits(), Ordering::Relaxed);
                        })?;
                        Ok(())
                    })?;
                }
                next.par_iter_mut().zip(&pulled).for_each(|(r, p)| {
                    *r = step.rank(f64::from_bits(p.swap(0, Ordering::Relaxed)));
                });
                Ok::<(), AnalyticsError>(())
            },
        )?;
        Ok(vertices.pair_with(ranks))
    })
}

/// Weakly connected components, unioning straight along the snapshot's slices: each vertex
/// with the smallest vertex of its component.
pub fn wcc<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    params: &WccParams,
) -> Result<Vec<(VertexId, VertexId)>, AnalyticsError> {
    let snapshot = match input.into() {
        GraphInput::Snapshot(snapshot) => snapshot,
        external => {
            return per_vertex(external, projection, |g| {
                vertex_labels(g, kernels::wcc(g.graph(), params))
            });
        }
    };
    crate::priority::run(|| {
        let vertices = VertexMap::select(snapshot, &projection.vertex_labels)?;
        // Direction does not matter; the stored out-adjacency lists every edge once.
        let sides = projection.sides(snapshot, &vertices, Direction::Out)?;
        let parent = crate::wcc::forest(vertices.vertex_count());
        for side in &sides {
            let (from, to) = side.maps(&vertices);
            side.par_scan(snapshot, |segment| {
                snapshot.scan_segment(side.table, side.outgoing, segment, |v, nbrs| {
                    let Some(dv) = from.dense(v) else { return };
                    for &u in nbrs {
                        if let Some(du) = side.keep(to, v, u)
                            && du != dv
                        {
                            crate::wcc::union(&parent, du, dv);
                        }
                    }
                })?;
                Ok(())
            })?;
        }
        let ids = vertices.ids();
        let labels = crate::wcc::roots(&parent);
        Ok(ids
            .par_iter()
            .zip(labels)
            .map(|(&v, l)| (v, ids[l as usize]))
            .collect())
    })
}

/// Community detection by label propagation: each vertex with its community's label vertex.
pub fn cdlp<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    params: &CdlpParams,
) -> Result<Vec<(VertexId, VertexId)>, AnalyticsError> {
    per_vertex(input.into(), projection, |g| {
        vertex_labels(g, kernels::cdlp(g.graph(), params))
    })
}

/// Local clustering coefficient (directed or undirected per the projection's direction).
pub fn lcc<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    params: &LccParams,
) -> Result<Vec<(VertexId, f64)>, AnalyticsError> {
    per_vertex(input.into(), projection, |g| {
        Ok(kernels::lcc(g.graph(), params))
    })
}

/// Shortest-path distances from `source`, weighted by the projection's weight property
/// (required); unreachable vertices get `f64::INFINITY`. `delta` is the delta-stepping bucket
/// width (`None`: the mean weight); it changes the speed, never the result.
pub fn sssp<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    source: VertexId,
    delta: Option<f64>,
) -> Result<Vec<(VertexId, f64)>, AnalyticsError> {
    let snapshot = match input.into() {
        GraphInput::Snapshot(snapshot) => snapshot,
        external => {
            return per_vertex(external, projection, |g| {
                let params = SsspParams {
                    source: g.require(source)?,
                    delta,
                };
                Ok(kernels::sssp(g.graph(), &params)?)
            });
        }
    };
    crate::priority::run(|| {
        let (vertices, out) = projection.build_out(snapshot)?;
        let params = SsspParams {
            source: vertices.require(source)?,
            delta,
        };
        let distances = crate::sssp::sssp_out(&out, &params)?;
        Ok(vertices.pair_with(distances))
    })
}

/// Number of vertices within `params.k` hops of each vertex.
pub fn khop_count<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    params: &KHopParams,
) -> Result<Vec<(VertexId, u64)>, AnalyticsError> {
    per_vertex(input.into(), projection, |g| {
        Ok(kernels::khop_count(g.graph(), params))
    })
}

/// Degree of each vertex in `params.direction` within the projection.
pub fn degree<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    params: &DegreeParams,
) -> Result<Vec<(VertexId, u64)>, AnalyticsError> {
    per_vertex(input.into(), projection, |g| {
        Ok(kernels::degree(g.graph(), params))
    })
}

/// Number of triangles of the projection read as a simple undirected graph.
pub fn triangle_count<'a>(
    input: impl Into<GraphInput<'a>>,
    projection: &Projection,
    params: &TriangleParams,
) -> Result<u64, AnalyticsError> {
    let input = input.into();
    crate::priority::run(|| {
        let g = projected(input, projection)?;
        Ok(kernels::triangle_count(g.graph(), params))
    })
}

/// What a kernel reads: a pinned snapshot, or an external graph (an attached GraphAr graph,
/// whose edge lists [`Projection::build_external`] reads into a projection; every kernel then
/// runs on that CSR).
#[derive(Clone, Copy)]
pub enum GraphInput<'a> {
    Snapshot(&'a GraphSnapshot),
    External(&'a dyn ExternalGraph),
}

impl<'a> From<&'a GraphSnapshot> for GraphInput<'a> {
    fn from(snapshot: &'a GraphSnapshot) -> Self {
        GraphInput::Snapshot(snapshot)
    }
}

/// The projection of `input`.
fn projected(
    input: GraphInput<'_>,
    projection: &Projection,
) -> Result<ProjectedGraph, AnalyticsError> {
    match input {
        GraphInput::Snapshot(snapshot) => projection.build(snapshot),
        GraphInput::External(graph) => projection.build_external(graph),
    }
}

/// Build the projection, run `kernel` on it, and key its per-vertex output by vertex.
fn per_vertex<T: Send>(
    input: GraphInput<'_>,
    projection: &Projection,
    kernel: impl FnOnce(&ProjectedGraph) -> Result<Vec<T>, AnalyticsError> + Send,
) -> Result<Vec<(VertexId, T)>, AnalyticsError> {
    crate::priority::run(|| {
        let g = projected(input, projection)?;
        let values = kernel(&g)?;
        Ok(g.label_with_vertices(values))
    })
}

/// Dense-id labels (WCC, CDLP) as the vertices they name. Kernel labels are dense ids of the
/// same graph, so indexing cannot fail.
fn vertex_labels(g: &ProjectedGraph, labels: Vec<u32>) -> Result<Vec<VertexId>, AnalyticsError> {
    let ids = g.vertex_ids();
    Ok(labels
        .into_par_iter()
        .map(|label| ids[label as usize])
        .collect())
}
