//! Breadth-first search: hop depth from one source (Graphalytics BFS).
//!
//! OUTPUT
//! ======
//! `depth[v]` = number of edges on a shortest directed path `source ⇝ v`; `depth[source] = 0`;
//! unreachable vertices get [`BFS_UNREACHABLE`] (`i64::MAX`, as in the Graphalytics files).
//! Depths are unique, so the result does not depend on which thread discovers a vertex.
//!
//! DIRECTION-OPTIMISING TRAVERSAL (Beamer et al., SC'12)
//! =====================================================
//! Level-synchronous. Each level is expanded in one of two ways:
//!
//! - top-down: the frontier is a queue; every frontier vertex scans its out-edges and claims
//!   unvisited targets with a compare-and-swap on `depth` (cost ≈ out-edges of the frontier,
//!   `m_f`);
//! - bottom-up: the frontier is a bitmap; every *unvisited* vertex scans its in-edges and stops
//!   at the first parent in the frontier (cost ≤ in-edges of unvisited vertices, `m_u`, usually
//!   far less: most vertices find a parent early). Each vertex is written only by the task that
//!   owns its 64-vertex bitmap word, so no CAS is needed.
//!
//! Switch top-down → bottom-up when `m_f > m_u / ALPHA` (the frontier got heavy) and back when
//! the frontier has fewer than `n / BETA` vertices (it is thinning out). ALPHA = 14 and
//! BETA = 24 are Beamer's values. On small-world graphs the two or three middle levels hold
//! most of the edges and run bottom-up; on long chains BFS stays top-down throughout.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::csr::{Csr, Graph};
use crate::{AlgoError, check_source};

/// Depth of a vertex that cannot be reached from the source.
pub const BFS_UNREACHABLE: i64 = i64::MAX;

/// Top-down → bottom-up when frontier out-edges exceed unexplored in-edges / ALPHA.
pub(crate) const ALPHA: u64 = 14;
/// Bottom-up → top-down when the frontier has fewer than n / BETA vertices.
pub(crate) const BETA: u64 = 24;
/// Bitmap words (64 vertices each) per bottom-up task.
const BOTTOM_UP_WORDS_PER_TASK: usize = 64;
/// `depth` value of a vertex not yet reached. Depths are < n ≤ MAX_VERTICES < u32::MAX.
pub(crate) const UNVISITED: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfsParams {
    /// Dense id of the source vertex.
    pub source: u32,
}

/// Hop depth of every vertex from `params.source` following out-edges.
pub fn bfs(g: &Graph, params: &BfsParams) -> Result<Vec<i64>, AlgoError> {
    check_source(g.vertex_count(), params.source)?;
    let n = g.vertex_count();
    let (out, inc) = (g.out(), g.inc());
    let depth: Vec<AtomicU32> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU32::new(UNVISITED))
        .collect();
    depth[params.source as usize].store(0, Ordering::Relaxed);

    let mut frontier = Frontier::Queue(vec![params.source]);
    let mut frontier_vertices = 1u64;
    let mut frontier_out_edges = out.degree(params.source) as u64;
    let mut unexplored_in_edges = inc.edge_count() as u64 - inc.degree(params.source) as u64;
    let mut level = 0u32;
    while frontier_vertices > 0 {
        frontier = match frontier {
            Frontier::Queue(queue) if frontier_out_edges > unexplored_in_edges / ALPHA => {
                Frontier::Bitmap(queue_to_bitmap(n, &queue))
            }
            Frontier::Bitmap(bitmap) if frontier_vertices < n as u64 / BETA => {
                Frontier::Queue(bitmap_to_queue(n, &bitmap))
            }
            unchanged => unchanged,
        };
        level += 1;
        let step = match &frontier {
            Frontier::Queue(queue) => top_down(out, inc, &depth, queue, level),
            Frontier::Bitmap(bitmap) => bottom_up(out, inc, &depth, bitmap, level),
        };
        frontier = step.next;
        frontier_vertices = step.vertices;
        frontier_out_edges = step.out_edges;
        unexplored_in_edges -= step.in_edges;
    }

    Ok(into_depths(depth))
}

/// Final depths: UNVISITED becomes [`BFS_UNREACHABLE`].
fn into_depths(depth: Vec<AtomicU32>) -> Vec<i64> {
    depth
        .into_par_iter()
        .map(|d| depth_value(d.into_inner()))
        .collect()
}

/// One final depth: UNVISITED becomes [`BFS_UNREACHABLE`].
#[inline]
pub(crate) fn depth_value(depth: u32) -> i64 {
    match depth {
        UNVISITED => BFS_UNREACHABLE,
        d => i64::from(d),
    }
}

enum Frontier {
    Queue(Vec<u32>),
    Bitmap(Vec<u64>),
}

/// The next frontier and its size: vertices, their out-edges and their in-edges.
struct Step {
    next: Frontier,
    vertices: u64,
    out_edges: u64,
    in_edges: u64,
}

fn top_down(out: &Csr, inc: &Csr, depth: &[AtomicU32], queue: &[u32], level: u32) -> Step {
    let parts: Vec<Vec<u32>> = queue
        .par_iter()
        .fold(Vec::new, |mut found, &v| {
            for &u in out.neighbors(v) {
                let slot = &depth[u as usize];
                if slot.load(Ordering::Relaxed) == UNVISITED
                    && slot
                        .compare_exchange(UNVISITED, level, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                {
                    found.push(u);
                }
            }
            found
        })
        .collect();
    let next = parts.concat();
    let (out_edges, in_edges) = next
        .par_iter()
        .map(|&u| (out.degree(u) as u64, inc.degree(u) as u64))
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    Step {
        vertices: next.len() as u64,
        next: Frontier::Queue(next),
        out_edges,
        in_edges,
    }
}

fn bottom_up(out: &Csr, inc: &Csr, depth: &[AtomicU32], frontier: &[u64], level: u32) -> Step {
    let n = depth.len();
    let mut next = vec![0u64; frontier.len()];
    let (vertices, out_edges, in_edges) = next
        .par_chunks_mut(BOTTOM_UP_WORDS_PER_TASK)
        .enumerate()
        .map(|(chunk, words)| {
            let mut sums = (0u64, 0u64, 0u64);
            for (i, word) in words.iter_mut().enumerate() {
                let base = (chunk * BOTTOM_UP_WORDS_PER_TASK + i) * 64;
                for bit in 0..64.min(n - base) {
                    let v = (base + bit) as u32;
                    // Only this task writes depth[v]; others only read it as "visited?".
                    if depth[v as usize].load(Ordering::Relaxed) != UNVISITED {
                        continue;
                    }
                    let has_parent = inc
                        .neighbors(v)
                        .iter()
                        .any(|&u| frontier[u as usize / 64] >> (u % 64) & 1 == 1);
                    if has_parent {
                        depth[v as usize].store(level, Ordering::Relaxed);
                        *word |= 1 << bit;
                        sums.0 += 1;
                        sums.1 += out.degree(v) as u64;
                        sums.2 += inc.degree(v) as u64;
                    }
                }
            }
            sums
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    Step {
        next: Frontier::Bitmap(next),
        vertices,
        out_edges,
        in_edges,
    }
}

fn queue_to_bitmap(n: usize, queue: &[u32]) -> Vec<u64> {
    let bitmap: Vec<AtomicU64> = (0..n.div_ceil(64))
        .into_par_iter()
        .map(|_| AtomicU64::new(0))
        .collect();
    queue.par_iter().for_each(|&v| {
        bitmap[v as usize / 64].fetch_or(1 << (v % 64), Ordering::Relaxed);
    });
    bitmap.into_iter().map(AtomicU64::into_inner).collect()
}

fn bitmap_to_queue(n: usize, bitmap: &[u64]) -> Vec<u32> {
    let parts: Vec<Vec<u32>> = bitmap
        .par_chunks(BOTTOM_UP_WORDS_PER_TASK)
        .enumerate()
        .map(|(chunk, words)| {
            let mut found = Vec::new();
            for (i, &word) in words.iter().enumerate() {
                let base = (chunk * BOTTOM_UP_WORDS_PER_TASK + i) * 64;
                let mut rest = word;
                while rest != 0 {
                    let bit = rest.trailing_zeros() as usize;
                    debug_assert!(base + bit < n);
                    found.push((base + bit) as u32);
                    rest &= rest - 1;
                }
            }
            found
        })
        .collect();
    parts.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let edges: Vec<_> = edges.iter().map(|&(s, d)| (s, d, None)).collect();
        Graph::from_edges(n, &edges, directed).expect("valid test graph")
    }

    #[test]
    fn directed_chain_and_unreachable() {
        // 0 → 1 → 2 → 3, 4 → 0, 5 isolated
        let g = graph(6, &[(0, 1), (1, 2), (2, 3), (4, 0)], true);
        let d = bfs(&g, &BfsParams { source: 0 }).expect("valid source");
        assert_eq!(d, vec![0, 1, 2, 3, BFS_UNREACHABLE, BFS_UNREACHABLE]);
    }

    #[test]
    fn undirected_follows_both_ways() {
        let g = graph(5, &[(1, 0), (2, 1), (3, 1), (4, 3)], false);
        let d = bfs(&g, &BfsParams { source: 0 }).expect("valid source");
        assert_eq!(d, vec![0, 1, 2, 2, 3]);
    }

    #[test]
    fn dense_graph_goes_bottom_up() {
        // A star into a clique: level 1 is heavy, so levels run bottom-up.
        let n = 200u32;
        let mut edges = Vec::new();
        for v in 1..n {
            edges.push((0, v));
            for u in (v + 1)..n.min(v + 30) {
                edges.push((v, u));
                edges.push((u, v));
            }
        }
        edges.push((n - 1, n)); // tail vertex reached only at level 2
        let g = graph(n as usize + 1, &edges, true);
        let d = bfs(&g, &BfsParams { source: 0 }).expect("valid source");
        assert_eq!(d[0], 0);
        assert!(d[1..n as usize].iter().all(|&x| x == 1));
        assert_eq!(d[n as usize], 2);
        let back = bfs(&g, &BfsParams { source: n }).expect("valid source");
        assert_eq!(back[n as usize], 0);
        assert!(back[..n as usize].iter().all(|&x| x == BFS_UNREACHABLE));
    }

    #[test]
    fn bad_source() {
        let g = graph(2, &[(0, 1)], true);
        assert_eq!(
            bfs(&g, &BfsParams { source: 2 }),
            Err(AlgoError::SourceOutOfRange {
                source_vertex: 2,
                vertex_count: 2
            })
        );
    }
}
