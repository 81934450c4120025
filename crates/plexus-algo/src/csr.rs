//! Compact CSR adjacency and the [`Graph`] the kernels run on.
//!
//! LAYOUT
//! ======
//! A [`Csr`] over `n` dense vertices holds three arrays:
//!
//! ```text
//!   offsets  [0, 2, 2, 5]          len n + 1, non-decreasing, offsets[n] == targets.len()
//!   targets  [1, 2, 0, 1, 2]       neighbours of v are targets[offsets[v] .. offsets[v+1]]
//!   weights  [.5, 1, 2, 2, 3]      optional, parallel to targets
//! ```
//!
//! so vertex 0 → {1, 2}, vertex 1 → {}, vertex 2 → {0, 1, 2}. Offsets are `u64` (edge counts
//! may exceed 2^32); vertex ids are `u32` (at most [`MAX_VERTICES`]; `u32::MAX` is free to be a
//! kernel's "none" sentinel).
//!
//! BUILDING FROM AN EDGE LIST: PARALLEL STABLE COUNTING SORT
//! =========================================================
//! The edge list is cut into `p` contiguous chunks (`p` ≤ threads, ≥
//! `SORT_MIN_EDGES_PER_CHUNK` edges each, and `p · n · 8` bytes of histograms within
//! `SORT_HISTOGRAM_BUDGET_BYTES`).
//!
//! 1. Each chunk counts its edges per source in its own histogram `h[c][v]` (parallel).
//! 2. `deg[v] = Σ_c h[c][v]`; `offsets` = exclusive prefix sum of `deg` (parallel scan).
//! 3. Each histogram becomes a cursor: `h[c][v] = offsets[v] + Σ_{c' < c} h[c'][v]`.
//! 4. Each chunk scatters its edges in input order to `cursor[c][src]++` (parallel).
//!
//! Chunk `c`'s slots for `v` come after those of chunks `< c` and a chunk writes in input order,
//! so the sort is stable: a vertex's neighbours appear in input order. Slots are disjoint, and
//! the scatter writes through relaxed atomics that compile to plain stores, so no `unsafe` is
//! needed. [`Csr::transpose`] is the same sort keyed by target, with chunks = ranges of sources
//! scanned in order, so in-neighbour lists come out sorted by source.
//!
//! BUILDING FROM A SNAPSHOT: [`AdjacencySource`]
//! =============================================
//! The storage engine hands out, per vertex, one or more contiguous neighbour slices (a CSR run,
//! memtable segments …). [`Csr::from_source`] scans the source twice, in parallel over vertex
//! ranges: first to count degrees (→ offsets), then to copy each slice into its place. The
//! source must not change between the scans (a pinned snapshot does not); if it does, the build
//! fails with [`GraphError::SourceChanged`] instead of producing a torn graph.
//!
//! THE GRAPH
//! =========
//! [`Graph`] holds `out` (out-edges) and `inc` (in-edges, the transpose). For an undirected
//! graph every edge `{u, v}` is stored as `u → v` and `v → u` in `out` (a self-loop once), and
//! `inc` *is* `out`: the same `Arc<Csr>`, not a copy.
//!
//! INVARIANTS (of a `Graph`)
//! ========================
//! - every neighbour list of `out` and `inc` is sorted by id (parallel edges stay, adjacent);
//! - `inc` is the transpose of `out`; undirected ⇒ `out` is symmetric and `inc` shares it;
//! - all ids are `< n ≤ MAX_VERTICES`.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::adj;
use crate::par::{exclusive_scan, split_by_ranges, task_count, vertex_ranges};

/// An input edge: `(source, target, weight)`. Either every edge of a list has a weight or none.
pub type Edge = (u32, u32, Option<f64>);

/// Largest supported vertex count. Ids are `u32` and `u32::MAX` itself is never a vertex.
pub const MAX_VERTICES: usize = u32::MAX as usize;

/// [`Graph::for_each_undirected_neighbor`] mask bit: an edge `v → u` exists.
pub(crate) const TO_NEIGHBOR: u8 = adj::IN_FIRST;
/// [`Graph::for_each_undirected_neighbor`] mask bit: an edge `u → v` exists.
pub(crate) const FROM_NEIGHBOR: u8 = adj::IN_SECOND;

/// Memory bound for the per-chunk histograms of the counting sort (`chunks · n · 8` bytes).
const SORT_HISTOGRAM_BUDGET_BYTES: usize = 256 << 20;
/// Fewest edges worth a chunk of its own in the counting sort.
const SORT_MIN_EDGES_PER_CHUNK: usize = 1 << 16;

/// Why a CSR or graph could not be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GraphError {
    #[error("{vertex_count} vertices requested; at most {MAX_VERTICES} are supported")]
    TooManyVertices { vertex_count: usize },
    #[error("edge #{edge_index} ({src} -> {dst}) names a vertex outside 0..{vertex_count}")]
    EdgeOutOfRange {
        edge_index: usize,
        src: u32,
        dst: u32,
        vertex_count: usize,
    },
    #[error("edge #{edge_index} disagrees with edge #0 on having a weight")]
    MixedWeights { edge_index: usize },
    #[error("vertex {vertex}: neighbour {neighbor} is outside 0..{vertex_count}")]
    NeighborOutOfRange {
        vertex: u32,
        neighbor: u32,
        vertex_count: usize,
    },
    #[error(
        "vertex {vertex}: neighbour weights missing, unexpected or of the wrong length \
         (all slices of a source must agree on having weights)"
    )]
    SliceWeightsMismatch { vertex: u32 },
    #[error(
        "vertex {vertex}: the source returned different neighbours on its second scan; \
         it must not change while a graph is built from it"
    )]
    SourceChanged { vertex: u32 },
    #[error(
        "undirected source is not symmetric: {vertex} lists {neighbor}, {neighbor} does not list {vertex}"
    )]
    NotSymmetric { vertex: u32, neighbor: u32 },
}

/// Anything that can hand out each vertex's out-neighbours as contiguous slices: the storage
/// snapshot, or a [`Csr`]. `for_each_out_slice` may call `f` any number of times per vertex
/// (e.g. once per storage run); weights, if present, are parallel to the slice.
pub trait AdjacencySource {
    fn vertex_count(&self) -> usize;
    fn for_each_out_slice(&self, v: u32, f: &mut SliceSink<'_>);
}

/// What [`AdjacencySource::for_each_out_slice`] feeds: `dyn FnMut(&[u32], Option<&[f64]>)`.
pub type SliceSink<'a> = dyn FnMut(&[u32], Option<&[f64]>) + 'a;

/// Compressed sparse row adjacency (see the module doc for the layout).
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    offsets: Vec<u64>,
    targets: Vec<u32>,
    weights: Option<Vec<f64>>,
}

impl Csr {
    /// Build from an edge list with a parallel, stable counting sort by source: each vertex's
    /// neighbours keep their order in `edges`.
    pub fn from_edges(vertex_count: usize, edges: &[Edge]) -> Result<Csr, GraphError> {
        let weighted = check_edges(vertex_count, edges)?;
        let chunks = EdgeListChunks::new(vertex_count, edges, false);
        Ok(counting_sort(vertex_count, &chunks, weighted))
    }

    /// Build by scanning `src` twice in parallel over vertex ranges (see the module doc).
    pub fn from_source<S: AdjacencySource + Sync + ?Sized>(src: &S) -> Result<Csr, GraphError> {
        const HAS_WEIGHTED: u8 = 1;
        const HAS_UNWEIGHTED: u8 = 2;
        let n = src.vertex_count();
        check_vertex_count(n)?;

        // Pass 1: degrees, and which kinds of slices (weighted or not) each vertex has.
        let (degrees, kinds): (Vec<u64>, Vec<u8>) = (0..n)
            .into_par_iter()
            .map(|v| {
                let (mut degree, mut kind) = (0u64, 0u8);
                src.for_each_out_slice(v as u32, &mut |targets, weights| {
                    if !targets.is_empty() {
                        degree += targets.len() as u64;
                        kind |= if weights.is_some() {
                            HAS_WEIGHTED
                        } else {
                            HAS_UNWEIGHTED
                        };
                    }
                });
                (degree, kind)
            })
            .unzip();
        let first_kind = kinds
            .par_iter()
            .find_first(|&&k| k != 0)
            .copied()
            .unwrap_or(0);
        if let Some(v) = kinds
            .par_iter()
            .position_first(|&k| k == HAS_WEIGHTED | HAS_UNWEIGHTED || (k != 0 && k != first_kind))
        {
            return Err(GraphError::SliceWeightsMismatch { vertex: v as u32 });
        }
        let weighted = first_kind == HAS_WEIGHTED;
        let offsets = exclusive_scan(&degrees);
        drop(degrees);

        // Pass 2: copy each vertex's slices into its place, ranges in parallel.
        let edge_count = offsets[n] as usize;
        let mut targets = vec![0u32; edge_count];
        let mut weights = weighted.then(|| vec![0.0f64; edge_count]);
        let ranges = vertex_ranges(&offsets, task_count());
        let target_parts = split_by_ranges(&mut targets, &offsets, &ranges);
        let weight_parts: Vec<Option<&mut [f64]>> = match &mut weights {
            Some(w) => split_by_ranges(w, &offsets, &ranges)
                .into_iter()
                .map(Some)
                .collect(),
            None => ranges.iter().map(|_| None).collect(),
        };
        let errors: Vec<Option<GraphError>> = ranges
            .par_iter()
            .zip(target_parts)
            .zip(weight_parts)
            .map(|((range, t), w)| copy_range(src, &offsets, range.clone(), t, w).err())
            .collect();
        if let Some(e) = errors.into_iter().flatten().next() {
            return Err(e);
        }
        Ok(Csr {
            offsets,
            targets,
            weights,
        })
    }

    /// Assemble from arrays that already have the CSR layout (the snapshot projection fills
    /// them itself); neighbour lists need not be sorted yet.
    pub(crate) fn from_parts(
        offsets: Vec<u64>,
        targets: Vec<u32>,
        weights: Option<Vec<f64>>,
    ) -> Csr {
        debug_assert!(offsets.first() == Some(&0) && offsets.is_sorted());
        debug_assert_eq!(offsets.last().copied(), Some(targets.len() as u64));
        debug_assert!(weights.as_ref().is_none_or(|w| w.len() == targets.len()));
        Csr {
            offsets,
            targets,
            weights,
        }
    }

    pub fn vertex_count(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// `len n + 1`; the neighbours of `v` are `targets[offsets[v] .. offsets[v + 1]]`.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }

    #[inline]
    pub fn degree(&self, v: u32) -> usize {
        (self.offsets[v as usize + 1] - self.offsets[v as usize]) as usize
    }

    #[inline]
    pub fn neighbors(&self, v: u32) -> &[u32] {
        &self.targets[self.edge_range(v)]
    }

    /// Weights parallel to [`neighbors`](Self::neighbors), if the CSR is weighted.
    #[inline]
    pub fn neighbor_weights(&self, v: u32) -> Option<&[f64]> {
        let range = self.edge_range(v);
        self.weights.as_ref().map(|w| &w[range])
    }

    /// The reverse adjacency: `u → v` here is `v → u` there, with the same weight. In-lists
    /// come out ordered by source id (stable counting sort over sources scanned in order).
    pub fn transpose(&self) -> Csr {
        let n = self.vertex_count();
        let chunks = TransposeChunks {
            csr: self,
            ranges: vertex_ranges(&self.offsets, sort_chunk_count(n, self.edge_count())),
        };
        counting_sort(n, &chunks, self.weights.is_some())
    }

    #[inline]
    fn edge_range(&self, v: u32) -> Range<usize> {
        self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize
    }

    fn is_sorted(&self) -> bool {
        (0..self.vertex_count() as u32)
            .into_par_iter()
            .all(|v| self.neighbors(v).is_sorted())
    }

    /// Sort every neighbour list by id, in parallel over vertex ranges; weights move with their
    /// targets and parallel edges keep their relative order.
    pub(crate) fn sort_neighbors(&mut self) {
        let ranges = vertex_ranges(&self.offsets, task_count());
        let offsets = &self.offsets;
        let target_parts = split_by_ranges(&mut self.targets, offsets, &ranges);
        let local = |range: &Range<usize>, v: usize| {
            let base = offsets[range.start];
            (offsets[v] - base) as usize..(offsets[v + 1] - base) as usize
        };
        match &mut self.weights {
            None => ranges
                .par_iter()
                .zip(target_parts)
                .for_each(|(range, targets)| {
                    for v in range.clone() {
                        let list = &mut targets[local(range, v)];
                        if !list.is_sorted() {
                            list.sort_unstable();
                        }
                    }
                }),
            Some(weights) => {
                let weight_parts = split_by_ranges(weights, offsets, &ranges);
                ranges
                    .par_iter()
                    .zip(target_parts)
                    .zip(weight_parts)
                    .for_each(|((range, targets), weights)| {
                        let mut pairs: Vec<(u32, f64)> = Vec::new();
                        for v in range.clone() {
                            let slots = local(range, v);
                            if targets[slots.clone()].is_sorted() {
                                continue;
                            }
                            pairs.clear();
                            pairs.extend(
                                targets[slots.clone()]
                                    .iter()
                                    .copied()
                                    .zip(weights[slots.clone()].iter().copied()),
                            );
                            pairs.sort_by_key(|&(t, _)| t);
                            for ((t, w), &(pt, pw)) in targets[slots.clone()]
                                .iter_mut()
                                .zip(&mut weights[slots.clone()])
                                .zip(&pairs)
                            {
                                *t = pt;
                                *w = pw;
                            }
                        }
                    });
            }
        }
    }
}

impl AdjacencySource for Csr {
    fn vertex_count(&self) -> usize {
        Csr::vertex_count(self)
    }

    fn for_each_out_slice(&self, v: u32, f: &mut SliceSink<'_>) {
        f(self.neighbors(v), self.neighbor_weights(v));
    }
}

/// The graph a kernel runs on: out- and in-adjacency over dense ids (see the module doc).
#[derive(Clone, Debug)]
pub struct Graph {
    n: usize,
    out: Arc<Csr>,
    inc: Arc<Csr>,
    directed: bool,
}

impl Graph {
    /// Build from an edge list. Undirected: list each edge once (`u v` or `v u`); it is stored
    /// in both directions. Listing it both ways makes it a parallel edge.
    pub fn from_edges(
        vertex_count: usize,
        edges: &[Edge],
        directed: bool,
    ) -> Result<Graph, GraphError> {
        let weighted = check_edges(vertex_count, edges)?;
        let chunks = EdgeListChunks::new(vertex_count, edges, !directed);
        Ok(Graph::from_out(
            counting_sort(vertex_count, &chunks, weighted),
            directed,
        ))
    }

    /// Build from a snapshot-like source. Undirected: the source must list every edge at both
    /// endpoints (it is checked: [`GraphError::NotSymmetric`]).
    pub fn from_source<S: AdjacencySource + Sync + ?Sized>(
        src: &S,
        directed: bool,
    ) -> Result<Graph, GraphError> {
        let graph = Graph::from_out(Csr::from_source(src)?, directed);
        if !directed {
            graph.check_symmetric()?;
        }
        Ok(graph)
    }

    /// A graph whose out-adjacency is `out` (sorted here; transposed when directed). Undirected:
    /// `out` must already be symmetric.
    pub(crate) fn from_out(mut out: Csr, directed: bool) -> Graph {
        out.sort_neighbors();
        let n = out.vertex_count();
        debug_assert!(n <= MAX_VERTICES);
        debug_assert!(out.is_sorted());
        let out = Arc::new(out);
        let inc = if directed {
            let inc = out.transpose();
            debug_assert!(inc.is_sorted());
            Arc::new(inc)
        } else {
            Arc::clone(&out)
        };
        Graph {
            n,
            out,
            inc,
            directed,
        }
    }

    pub fn vertex_count(&self) -> usize {
        self.n
    }

    pub fn is_directed(&self) -> bool {
        self.directed
    }

    /// Out-edges. Undirected: every edge in both directions.
    pub fn out(&self) -> &Csr {
        &self.out
    }

    /// In-edges (the transpose of `out`). Undirected: the very same CSR as `out`.
    pub fn inc(&self) -> &Csr {
        &self.inc
    }

    /// Call `f(u, mask)` once per distinct neighbour `u` of `v` ignoring direction, in
    /// increasing id order, without `v` itself. `mask` has [`TO_NEIGHBOR`] if `v → u` exists and
    /// [`FROM_NEIGHBOR`] if `u → v` exists (both, on an undirected graph).
    #[inline]
    pub(crate) fn for_each_undirected_neighbor(&self, v: u32, mut f: impl FnMut(u32, u8)) {
        if self.directed {
            adj::merge_union(self.out.neighbors(v), self.inc.neighbors(v), v, f);
        } else {
            adj::merge_union(self.out.neighbors(v), &[], v, |u, _| {
                f(u, TO_NEIGHBOR | FROM_NEIGHBOR)
            });
        }
    }

    /// Vertex ranges of balanced work for per-vertex parallel loops.
    pub(crate) fn vertex_ranges(&self) -> Vec<Range<usize>> {
        vertex_ranges(self.out.offsets(), task_count())
    }

    fn check_symmetric(&self) -> Result<(), GraphError> {
        let out = &*self.out;
        match (0..self.n as u32).into_par_iter().find_map_first(|v| {
            out.neighbors(v)
                .iter()
                .find(|&&u| out.neighbors(u).binary_search(&v).is_err())
                .map(|&u| (v, u))
        }) {
            Some((vertex, neighbor)) => Err(GraphError::NotSymmetric { vertex, neighbor }),
            None => Ok(()),
        }
    }
}

fn check_vertex_count(vertex_count: usize) -> Result<(), GraphError> {
    if vertex_count > MAX_VERTICES {
        return Err(GraphError::TooManyVertices { vertex_count });
    }
    Ok(())
}

/// Validate an edge list; returns whether it is weighted.
fn check_edges(n: usize, edges: &[Edge]) -> Result<bool, GraphError> {
    check_vertex_count(n)?;
    if let Some(edge_index) = edges
        .par_iter()
        .position_first(|&(s, d, _)| s as usize >= n || d as usize >= n)
    {
        let (src, dst, _) = edges[edge_index];
        return Err(GraphError::EdgeOutOfRange {
            edge_index,
            src,
            dst,
            vertex_count: n,
        });
    }
    let weighted = edges.first().is_some_and(|e| e.2.is_some());
    if let Some(edge_index) = edges
        .par_iter()
        .position_first(|e| e.2.is_some() != weighted)
    {
        return Err(GraphError::MixedWeights { edge_index });
    }
    Ok(weighted)
}

/// Second scan of [`Csr::from_source`]: copy the slices of `range` into `targets`/`weights`,
/// which cover exactly that range's edges.
fn copy_range<S: AdjacencySource + Sync + ?Sized>(
    src: &S,
    offsets: &[u64],
    range: Range<usize>,
    targets: &mut [u32],
    mut weights: Option<&mut [f64]>,
) -> Result<(), GraphError> {
    let n = offsets.len() - 1;
    let base = offsets[range.start];
    for v in range {
        let vertex = v as u32;
        let end = (offsets[v + 1] - base) as usize;
        let mut pos = (offsets[v] - base) as usize;
        let mut error = None;
        src.for_each_out_slice(vertex, &mut |slice, slice_weights| {
            if error.is_some() || slice.is_empty() {
                return;
            }
            let next = pos + slice.len();
            if next > end {
                error = Some(GraphError::SourceChanged { vertex });
                return;
            }
            if let Some(&neighbor) = slice.iter().find(|&&u| u as usize >= n) {
                error = Some(GraphError::NeighborOutOfRange {
                    vertex,
                    neighbor,
                    vertex_count: n,
                });
                return;
            }
            targets[pos..next].copy_from_slice(slice);
            match (&mut weights, slice_weights) {
                (Some(w), Some(sw)) if sw.len() == slice.len() => {
                    w[pos..next].copy_from_slice(sw);
                }
                (None, None) => {}
                _ => {
                    error = Some(GraphError::SliceWeightsMismatch { vertex });
                    return;
                }
            }
            pos = next;
        });
        if let Some(e) = error {
            return Err(e);
        }
        if pos != end {
            return Err(GraphError::SourceChanged { vertex });
        }
    }
    Ok(())
}

/// Chunks for the counting sort (see the module doc); `f(key, value, weight)` per entry, in a
/// fixed order within a chunk. `weight` is meaningless for unweighted inputs.
trait EdgeChunks: Sync {
    fn chunk_count(&self) -> usize;
    fn for_each_in_chunk(&self, chunk: usize, f: impl FnMut(u32, u32, f64));
}

/// An edge list cut into contiguous chunks; `symmetric` emits `d → s` after each `s → d`
/// (except self-loops).
struct EdgeListChunks<'a> {
    edges: &'a [Edge],
    chunk_len: usize,
    symmetric: bool,
}

impl<'a> EdgeListChunks<'a> {
    fn new(n: usize, edges: &'a [Edge], symmetric: bool) -> Self {
        let entries = edges.len() * if symmetric { 2 } else { 1 };
        let chunks = sort_chunk_count(n, entries);
        EdgeListChunks {
            edges,
            chunk_len: edges.len().div_ceil(chunks).max(1),
            symmetric,
        }
    }
}

impl EdgeChunks for EdgeListChunks<'_> {
    fn chunk_count(&self) -> usize {
        self.edges.len().div_ceil(self.chunk_len)
    }

    fn for_each_in_chunk(&self, chunk: usize, mut f: impl FnMut(u32, u32, f64)) {
        let begin = chunk * self.chunk_len;
        let end = (begin + self.chunk_len).min(self.edges.len());
        for &(s, d, w) in &self.edges[begin..end] {
            let w = w.unwrap_or(0.0);
            f(s, d, w);
            if self.symmetric && s != d {
                f(d, s, w);
            }
        }
    }
}

/// The edges of a CSR keyed by target, chunked by ranges of sources.
struct TransposeChunks<'a> {
    csr: &'a Csr,
    ranges: Vec<Range<usize>>,
}

impl EdgeChunks for TransposeChunks<'_> {
    fn chunk_count(&self) -> usize {
        self.ranges.len()
    }

    fn for_each_in_chunk(&self, chunk: usize, mut f: impl FnMut(u32, u32, f64)) {
        for v in self.ranges[chunk].clone() {
            let range = self.csr.edge_range(v as u32);
            match &self.csr.weights {
                Some(w) => {
                    for (&t, &w) in self.csr.targets[range.clone()].iter().zip(&w[range]) {
                        f(t, v as u32, w);
                    }
                }
                None => {
                    for &t in &self.csr.targets[range] {
                        f(t, v as u32, 0.0);
                    }
                }
            }
        }
    }
}

/// Chunks for sorting `entries` edges over `n` vertices (bounds in the module doc).
fn sort_chunk_count(n: usize, entries: usize) -> usize {
    let by_threads = rayon::current_num_threads().max(1);
    let by_edges = entries.div_ceil(SORT_MIN_EDGES_PER_CHUNK).max(1);
    let by_memory = (SORT_HISTOGRAM_BUDGET_BYTES / (8 * n.max(1))).max(1);
    by_threads.min(by_edges).min(by_memory)
}

/// The parallel stable counting sort of the module doc: entries keyed by `key < n`.
fn counting_sort(n: usize, chunks: &impl EdgeChunks, weighted: bool) -> Csr {
    // 1. Per-chunk histograms.
    let mut cursors: Vec<Vec<u64>> = (0..chunks.chunk_count())
        .into_par_iter()
        .map(|c| {
            let mut histogram = vec![0u64; n];
            chunks.for_each_in_chunk(c, |key, _, _| histogram[key as usize] += 1);
            histogram
        })
        .collect();
    // 2. Degrees and offsets.
    let degrees: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|v| cursors.iter().map(|h| h[v]).sum())
        .collect();
    let offsets = exclusive_scan(&degrees);
    drop(degrees);
    // 3. Histograms become cursors: chunk c's first slot for v.
    let mut running = offsets[..n].to_vec();
    for histogram in &mut cursors {
        histogram
            .par_iter_mut()
            .zip(running.par_iter_mut())
            .for_each(|(h, r)| {
                let count = *h;
                *h = *r;
                *r += count;
            });
    }
    // 4. Scatter, each chunk in input order through its own cursors.
    let edge_count = offsets[n] as usize;
    let targets: Vec<AtomicU32> = (0..edge_count)
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    let weights: Option<Vec<AtomicU64>> = weighted.then(|| {
        (0..edge_count)
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect()
    });
    cursors
        .into_par_iter()
        .enumerate()
        .for_each(|(c, mut cursor)| {
            chunks.for_each_in_chunk(c, |key, value, weight| {
                let slot = cursor[key as usize] as usize;
                cursor[key as usize] += 1;
                targets[slot].store(value, Ordering::Relaxed);
                if let Some(w) = &weights {
                    w[slot].store(weight.to_bits(), Ordering::Relaxed);
                }
            });
            debug_assert!((0..n).all(|v| cursor[v] <= offsets[v + 1]));
        });
    // The join at the end of `for_each` orders every store before these reads.
    Csr {
        targets: targets.into_iter().map(AtomicU32::into_inner).collect(),
        weights: weights.map(|w| {
            w.into_iter()
                .map(|bits| f64::from_bits(bits.into_inner()))
                .collect()
        }),
        offsets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence for larger inputs (SplitMix64).
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Reference: a sequential stable sort by source.
    fn reference(n: usize, edges: &[Edge]) -> Csr {
        let mut sorted: Vec<Edge> = edges.to_vec();
        sorted.sort_by_key(|e| e.0);
        let mut offsets = vec![0u64; n + 1];
        for e in edges {
            offsets[e.0 as usize + 1] += 1;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let weighted = edges.first().is_some_and(|e| e.2.is_some());
        Csr {
            offsets,
            targets: sorted.iter().map(|e| e.1).collect(),
            weights: weighted.then(|| sorted.iter().map(|e| e.2.unwrap_or(0.0)).collect()),
        }
    }

    #[test]
    fn small_csr_layout() {
        let edges = [
            (2, 0, None),
            (0, 2, None),
            (2, 2, None),
            (0, 1, None),
            (2, 1, None),
        ];
        let csr = Csr::from_edges(3, &edges).expect("valid edges");
        assert_eq!(csr.offsets(), &[0, 2, 2, 5]);
        // stable: input order within each source
        assert_eq!(csr.neighbors(0), &[2, 1]);
        assert_eq!(csr.neighbors(1), &[] as &[u32]);
        assert_eq!(csr.neighbors(2), &[0, 2, 1]);
        assert_eq!(csr.degree(2), 3);
        assert!(csr.weights().is_none());
        let t = csr.transpose();
        assert_eq!(t.neighbors(0), &[2]);
        assert_eq!(t.neighbors(1), &[0, 2]);
        assert_eq!(t.neighbors(2), &[0, 2]);
    }

    #[test]
    fn many_chunks_stay_stable_and_weighted() {
        let mut state = 7;
        let n = 1000;
        let edges: Vec<Edge> = (0..20_000)
            .map(|i| {
                let s = (splitmix(&mut state) % n as u64) as u32;
                let d = (splitmix(&mut state) % n as u64) as u32;
                (s, d, Some(i as f64))
            })
            .collect();
        let want = reference(n, &edges);
        for chunk_len in [1, 7, 333, 20_000] {
            let chunks = EdgeListChunks {
                edges: &edges,
                chunk_len,
                symmetric: false,
            };
            assert_eq!(
                counting_sort(n, &chunks, true),
                want,
                "chunk_len {chunk_len}"
            );
        }
        assert_eq!(Csr::from_edges(n, &edges).expect("valid"), want);
        // transposing twice gives back the graph with lists sorted by target
        let mut sorted = want.clone();
        sorted.sort_neighbors();
        assert_eq!(want.transpose().transpose(), sorted);
    }

    #[test]
    fn large_parallel_build_matches_reference() {
        let mut state = 11;
        let n = 50_000;
        let edges: Vec<Edge> = (0..300_000)
            .map(|_| {
                let s = (splitmix(&mut state) % n as u64) as u32;
                let d = (splitmix(&mut state) % n as u64) as u32;
                (s, d, None)
            })
            .collect();
        assert_eq!(
            Csr::from_edges(n, &edges).expect("valid"),
            reference(n, &edges)
        );
    }

    #[test]
    fn edge_list_errors() {
        assert_eq!(
            Csr::from_edges(2, &[(0, 1, None), (1, 2, None)]),
            Err(GraphError::EdgeOutOfRange {
                edge_index: 1,
                src: 1,
                dst: 2,
                vertex_count: 2
            })
        );
        assert_eq!(
            Csr::from_edges(2, &[(0, 1, Some(1.0)), (1, 0, None)]),
            Err(GraphError::MixedWeights { edge_index: 1 })
        );
        assert_eq!(
            Csr::from_edges(MAX_VERTICES + 1, &[]),
            Err(GraphError::TooManyVertices {
                vertex_count: MAX_VERTICES + 1
            })
        );
        let empty = Csr::from_edges(0, &[]).expect("empty graph");
        assert_eq!(empty.vertex_count(), 0);
        assert_eq!(empty.transpose(), empty);
    }

    #[test]
    fn undirected_graph_shares_adjacency() {
        let g =
            Graph::from_edges(3, &[(1, 0, Some(2.0)), (1, 2, Some(3.0))], false).expect("valid");
        assert!(std::ptr::eq(g.out(), g.inc()));
        assert_eq!(g.out().neighbors(1), &[0, 2]);
        assert_eq!(g.out().neighbor_weights(1), Some(&[2.0, 3.0][..]));
        assert_eq!(g.out().neighbors(0), &[1]);
        assert_eq!(g.out().neighbor_weights(2), Some(&[3.0][..]));
        let d = Graph::from_edges(3, &[(1, 0, None), (1, 2, None)], true).expect("valid");
        assert!(!std::ptr::eq(d.out(), d.inc()));
        assert_eq!(d.inc().neighbors(2), &[1]);
    }

    /// A source that splits each vertex's list into two slices, like a CSR run + memtable.
    struct Split(Csr);

    impl AdjacencySource for Split {
        fn vertex_count(&self) -> usize {
            self.0.vertex_count()
        }
        fn for_each_out_slice(&self, v: u32, f: &mut SliceSink<'_>) {
            let t = self.0.neighbors(v);
            let w = self.0.neighbor_weights(v);
            let mid = t.len() / 2;
            f(&t[mid..], w.map(|w| &w[mid..]));
            f(&t[..mid], w.map(|w| &w[..mid]));
        }
    }

    #[test]
    fn from_source_matches_from_edges() {
        let edges = [
            (0, 3, Some(1.0)),
            (0, 1, Some(2.0)),
            (0, 2, Some(3.0)),
            (2, 0, Some(4.0)),
            (3, 3, Some(5.0)),
        ];
        let g = Graph::from_edges(4, &edges, true).expect("valid");
        let csr = Csr::from_edges(4, &edges).expect("valid");
        let h = Graph::from_source(&Split(csr), true).expect("valid");
        assert_eq!(g.out(), h.out());
        assert_eq!(g.inc(), h.inc());
        assert_eq!(h.out().neighbors(0), &[1, 2, 3]);
        assert_eq!(h.out().neighbor_weights(0), Some(&[2.0, 3.0, 1.0][..]));

        let asymmetric = Csr::from_edges(2, &[(0, 1, None)]).expect("valid");
        assert_eq!(
            Graph::from_source(&asymmetric, false).map(|_| ()),
            Err(GraphError::NotSymmetric {
                vertex: 0,
                neighbor: 1
            })
        );
    }

    struct Bad;

    impl AdjacencySource for Bad {
        fn vertex_count(&self) -> usize {
            3
        }
        fn for_each_out_slice(&self, v: u32, f: &mut SliceSink<'_>) {
            match v {
                0 => f(&[1], None),
                1 => f(&[7], None),
                _ => f(&[0], Some(&[1.0])),
            }
        }
    }

    /// A source whose vertex 1 grows between the two scans, like an unpinned snapshot.
    struct Growing(std::sync::atomic::AtomicUsize);

    impl AdjacencySource for Growing {
        fn vertex_count(&self) -> usize {
            2
        }
        fn for_each_out_slice(&self, v: u32, f: &mut SliceSink<'_>) {
            if v == 1 {
                let calls = self.0.fetch_add(1, Ordering::Relaxed);
                f(&[0, 1][..=calls.min(1)], None);
            }
        }
    }

    #[test]
    fn source_changing_between_scans_is_an_error() {
        let growing = Growing(std::sync::atomic::AtomicUsize::new(0));
        assert_eq!(
            Csr::from_source(&growing).map(|_| ()),
            Err(GraphError::SourceChanged { vertex: 1 })
        );
    }

    #[test]
    fn from_source_errors() {
        assert_eq!(
            Csr::from_source(&Bad).map(|_| ()),
            Err(GraphError::SliceWeightsMismatch { vertex: 2 })
        );
        let out_of_range = Csr::from_edges(2, &[(0, 1, None)]).expect("valid");
        struct Shifted(Csr);
        impl AdjacencySource for Shifted {
            fn vertex_count(&self) -> usize {
                1
            }
            fn for_each_out_slice(&self, v: u32, f: &mut SliceSink<'_>) {
                f(self.0.neighbors(v), None);
            }
        }
        assert_eq!(
            Csr::from_source(&Shifted(out_of_range)).map(|_| ()),
            Err(GraphError::NeighborOutOfRange {
                vertex: 0,
                neighbor: 1,
                vertex_count: 1
            })
        );
    }
}
