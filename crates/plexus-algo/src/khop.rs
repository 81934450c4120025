//! k-hop neighbourhood size of every vertex.
//!
//! DEFINITION
//! ==========
//! `khop[v]` = number of vertices `u ≠ v` reachable from `v` in at most `k` hops along the
//! chosen [`Direction`] (out-edges, in-edges, or both ignoring direction). `k = 0` gives 0;
//! `k = 1` is the number of distinct neighbours.
//!
//! IMPLEMENTATION
//! ==============
//! One bounded BFS per vertex, vertices in parallel. Each worker thread owns a visited array of
//! `n` epoch stamps (from a `ScratchPool`): a vertex counts as visited in the current search iff
//! its stamp equals the search's epoch, so nothing is cleared between the `n` searches (the
//! array is wiped only when the `u32` epoch wraps). Memory: `4n` bytes per thread.
//!
//! COST
//! ====
//! `Σ_v (edges within k hops of v)`: cheap for k = 1, 2 on sparse graphs, quadratic-ish for
//! large k on small-world graphs (every search reaches everything) — use BFS for one source.
//!
//! ONE SOURCE
//! ==========
//! [`khop_from`] is the same bounded search from one source, on the calling thread, with a
//! visited array of its own (`4n` bytes, zeroed by the allocator; [`khop_from_sources`] runs
//! several sources in turn on one array): what a query such as
//! `MATCH (a {id: $s})-[*1..k]->(b) RETURN count(DISTINCT b)` asks, minus `a` itself when a
//! cycle of length ≤ k leads back to it. `plexus-bench cypher --only khop` measures it
//! against igraph's `neighborhood(order=k, mode="out", mindist=1)`, which counts the same set.

use rayon::prelude::*;

use crate::csr::Graph;
use crate::par::ScratchPool;
use crate::{AlgoError, Direction, check_source};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KHopParams {
    /// Maximum number of hops.
    pub k: u32,
    /// Which edges a hop follows.
    pub direction: Direction,
}

/// Per-thread state of the bounded searches.
struct Search {
    stamps: Vec<u32>,
    epoch: u32,
    frontier: Vec<u32>,
    next: Vec<u32>,
}

/// Number of vertices within `params.k` hops of every vertex (itself excluded).
pub fn khop_count(g: &Graph, params: &KHopParams) -> Vec<u64> {
    let n = g.vertex_count();
    if params.k == 0 {
        return vec![0; n];
    }
    let pool = ScratchPool::new(|| Search {
        stamps: vec![0; n],
        epoch: 0,
        frontier: Vec::new(),
        next: Vec::new(),
    });
    (0..n as u32)
        .into_par_iter()
        .map(|v| pool.with(|search| search.count(g, v, params)))
        .collect()
}

/// Number of vertices within `params.k` hops of `source` (itself excluded: a cycle back to
/// `source` does not count it), one bounded BFS on the calling thread.
pub fn khop_from(g: &Graph, source: u32, params: &KHopParams) -> Result<u64, AlgoError> {
    Ok(khop_from_sources(g, &[source], params)?[0])
}

/// [`khop_from`] for each of `sources` in turn, on the calling thread, sharing one visited
/// array (allocated and zeroed once: at a million vertices that is most of a 1-hop search).
pub fn khop_from_sources(
    g: &Graph,
    sources: &[u32],
    params: &KHopParams,
) -> Result<Vec<u64>, AlgoError> {
    for &source in sources {
        check_source(g.vertex_count(), source)?;
    }
    if params.k == 0 {
        return Ok(vec![0; sources.len()]);
    }
    let mut search = Search {
        stamps: vec![0; g.vertex_count()],
        epoch: 0,
        frontier: Vec::new(),
        next: Vec::new(),
    };
    Ok(sources
        .iter()
        .map(|&source| search.count(g, source, params))
        .collect())
}

impl Search {
    fn count(&mut self, g: &Graph, source: u32, params: &KHopParams) -> u64 {
        if self.epoch == u32::MAX {
            self.stamps.fill(0);
            self.epoch = 0;
        }
        self.epoch += 1;
        let epoch = self.epoch;
        let stamps = &mut self.stamps;
        stamps[source as usize] = epoch;
        self.frontier.clear();
        self.frontier.push(source);
        let mut reached = 0u64;
        for _ in 0..params.k {
            self.next.clear();
            for &v in &self.frontier {
                let mut visit = |u: u32| {
                    if stamps[u as usize] != epoch {
                        stamps[u as usize] = epoch;
                        self.next.push(u);
                    }
                };
                let (out, inc) = (g.out().neighbors(v), g.inc().neighbors(v));
                match params.direction {
                    Direction::Out => out.iter().for_each(|&u| visit(u)),
                    Direction::In => inc.iter().for_each(|&u| visit(u)),
                    Direction::Both => {
                        out.iter().for_each(|&u| visit(u));
                        if g.is_directed() {
                            inc.iter().for_each(|&u| visit(u));
                        }
                    }
                }
            }
            if self.next.is_empty() {
                break;
            }
            reached += self.next.len() as u64;
            std::mem::swap(&mut self.frontier, &mut self.next);
        }
        reached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let edges: Vec<_> = edges.iter().map(|&(s, d)| (s, d, None)).collect();
        Graph::from_edges(n, &edges, directed).expect("valid test graph")
    }

    #[test]
    fn directed_path_by_direction() {
        // 0 → 1 → 2 → 3, plus 1 → 0 and a parallel edge 0 → 1
        let g = graph(4, &[(0, 1), (0, 1), (1, 2), (2, 3), (1, 0)], true);
        let hop = |k, direction| khop_count(&g, &KHopParams { k, direction });
        assert_eq!(hop(0, Direction::Out), vec![0; 4]);
        assert_eq!(hop(1, Direction::Out), vec![1, 2, 1, 0]);
        assert_eq!(hop(2, Direction::Out), vec![2, 3, 1, 0]);
        assert_eq!(hop(2, Direction::In), vec![1, 1, 2, 2]);
        assert_eq!(hop(1, Direction::Both), vec![1, 2, 2, 1]);
        assert_eq!(hop(9, Direction::Both), vec![3; 4]);
    }

    #[test]
    fn one_source_agrees_with_every_source() {
        // 0 → 1 → 2 → 3 → 0 (a 4-cycle), 1 → 1 (self-loop), 2 → 4, parallel 0 → 1
        let g = graph(
            5,
            &[(0, 1), (0, 1), (1, 2), (2, 3), (3, 0), (1, 1), (2, 4)],
            true,
        );
        for direction in [Direction::Out, Direction::In, Direction::Both] {
            for k in 0..6 {
                let params = KHopParams { k, direction };
                let all = khop_count(&g, &params);
                for v in 0..5u32 {
                    let one = khop_from(&g, v, &params).expect("source in range");
                    assert_eq!(one, all[v as usize], "k {k}, {direction:?}, source {v}");
                }
            }
        }
        let params = KHopParams {
            k: 3,
            direction: Direction::Out,
        };
        let sources = [4, 0, 2, 0];
        let all = khop_count(&g, &params);
        let expected: Vec<u64> = sources.iter().map(|&v| all[v as usize]).collect();
        assert_eq!(khop_from_sources(&g, &sources, &params), Ok(expected));
        assert_eq!(khop_from_sources(&g, &[], &params), Ok(vec![]));
        // From 0: 1 (1 hop), 2 (2), 3 and 4 (3); the cycle back to 0 needs 4 hops, and would
        // not count 0 anyway.
        assert_eq!(khop_from(&g, 0, &params), Ok(4));
        let out_of_range = Err(AlgoError::SourceOutOfRange {
            source_vertex: 5,
            vertex_count: 5,
        });
        assert_eq!(khop_from(&g, 5, &params), out_of_range);
        assert_eq!(
            khop_from_sources(&g, &[0, 5], &params),
            out_of_range.map(|c| vec![c])
        );
    }

    #[test]
    fn undirected_star() {
        let g = graph(5, &[(0, 1), (0, 2), (0, 3), (0, 4)], false);
        for direction in [Direction::Out, Direction::In, Direction::Both] {
            let params = KHopParams { k: 1, direction };
            assert_eq!(khop_count(&g, &params), vec![4, 1, 1, 1, 1]);
            let params = KHopParams { k: 2, direction };
            assert_eq!(khop_count(&g, &params), vec![4; 5]);
        }
    }
}
