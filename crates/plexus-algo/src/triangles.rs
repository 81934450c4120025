//! Global triangle count with undirected semantics, and the degree-ordered oriented graph that
//! triangle counting and LCC share.
//!
//! DEFINITION
//! ==========
//! The graph is read as a simple undirected graph: `u – v` is an edge if `u → v` or `v → u`
//! exists (direction, parallel edges and self-loops are ignored). The result is the number of
//! vertex triples `{a, b, c}` that are pairwise adjacent.
//!
//! THE ORIENTED GRAPH
//! ==================
//! Rank vertices by `(degree, id)`, where degree is the simple undirected degree `|N(v)|`, and
//! keep every edge once, oriented from lower to higher rank:
//!
//! ```text
//!   N⁺(v) = { u ∈ N(v) : (|N(u)|, u) > (|N(v)|, v) }       sorted by id, no repeats
//!   mask(v, u) = TO_NEIGHBOR if v → u exists | FROM_NEIGHBOR if u → v exists
//! ```
//!
//! Every triangle `a < b < c` (by rank) shows up exactly once: at `a`, as `b ∈ N⁺(a)` and
//! `c ∈ N⁺(a) ∩ N⁺(b)`. Orienting towards higher degree bounds every `|N⁺(v)|` by `O(√m)`, so
//! hubs are never rescanned once per neighbour: enumerating all triangles costs `O(m^{3/2})`
//! instead of `Σ d(v)²`. The masks keep which directions existed, which is what directed LCC
//! needs (see `lcc`). Built in two parallel passes (count, then fill per vertex range), 1 byte
//! of mask and 4 of target per undirected edge.
//!
//! Counts are integers, so the result does not depend on scheduling.

use std::ops::Range;

use rayon::prelude::*;

use crate::adj::for_each_common;
use crate::csr::Graph;
use crate::par::{exclusive_scan, split_by_ranges, task_count, vertex_ranges};

/// Triangle counting has no tuning knobs; the struct keeps every kernel's signature alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TriangleParams {}

/// Number of triangles in the graph read as simple and undirected.
pub fn triangle_count(g: &Graph, _params: &TriangleParams) -> u64 {
    let oriented = Oriented::build(g);
    oriented
        .ranges()
        .into_par_iter()
        .map(|range| {
            let mut count = 0u64;
            for a in range {
                let (higher_a, _) = oriented.higher(a as u32);
                for &b in higher_a {
                    let (higher_b, _) = oriented.higher(b);
                    for_each_common(higher_a, higher_b, |_, _| count += 1);
                }
            }
            count
        })
        .sum()
}

/// `N⁺` lists with direction masks, and `|N(v)|` (see the module doc).
pub(crate) struct Oriented {
    offsets: Vec<u64>,
    targets: Vec<u32>,
    masks: Vec<u8>,
    /// Simple undirected degree `|N(v)|`.
    pub(crate) degree: Vec<u32>,
}

impl Oriented {
    pub(crate) fn build(g: &Graph) -> Oriented {
        let n = g.vertex_count();
        let degree: Vec<u32> = (0..n as u32)
            .into_par_iter()
            .map(|v| {
                let mut d = 0u32;
                g.for_each_undirected_neighbor(v, |_, _| d += 1);
                d
            })
            .collect();
        let above = |v: u32, u: u32| (degree[u as usize], u) > (degree[v as usize], v);
        let counts: Vec<u64> = (0..n as u32)
            .into_par_iter()
            .map(|v| {
                let mut c = 0u64;
                g.for_each_undirected_neighbor(v, |u, _| c += u64::from(above(v, u)));
                c
            })
            .collect();
        let offsets = exclusive_scan(&counts);
        drop(counts);
        let edge_count = offsets[n] as usize;
        let mut targets = vec![0u32; edge_count];
        let mut masks = vec![0u8; edge_count];
        let ranges = vertex_ranges(&offsets, task_count());
        let target_parts = split_by_ranges(&mut targets, &offsets, &ranges);
        let mask_parts = split_by_ranges(&mut masks, &offsets, &ranges);
        ranges
            .par_iter()
            .zip(target_parts)
            .zip(mask_parts)
            .for_each(|((range, targets), masks)| {
                let mut pos = 0;
                for v in range.clone() {
                    let v = v as u32;
                    g.for_each_undirected_neighbor(v, |u, mask| {
                        if above(v, u) {
                            targets[pos] = u;
                            masks[pos] = mask;
                            pos += 1;
                        }
                    });
                }
                debug_assert_eq!(pos, targets.len());
            });
        Oriented {
            offsets,
            targets,
            masks,
            degree,
        }
    }

    /// `N⁺(v)` (sorted by id) and the direction masks of those edges.
    #[inline]
    pub(crate) fn higher(&self, v: u32) -> (&[u32], &[u8]) {
        let range = self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize;
        (&self.targets[range.clone()], &self.masks[range])
    }

    /// Vertex ranges of balanced work over the oriented edges.
    pub(crate) fn ranges(&self) -> Vec<Range<usize>> {
        vertex_ranges(&self.offsets, task_count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::{FROM_NEIGHBOR, TO_NEIGHBOR};

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let edges: Vec<_> = edges.iter().map(|&(s, d)| (s, d, None)).collect();
        Graph::from_edges(n, &edges, directed).expect("valid test graph")
    }

    #[test]
    fn k4_has_four_triangles() {
        let edges = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
        assert_eq!(
            triangle_count(&graph(4, &edges, false), &TriangleParams {}),
            4
        );
        assert_eq!(
            triangle_count(&graph(4, &edges, true), &TriangleParams {}),
            4
        );
    }

    #[test]
    fn direction_parallel_edges_and_loops_ignored() {
        // one triangle 0-1-2 given with mixed directions, both ways and a self-loop; tail 2-3
        let edges = [(0, 1), (1, 0), (2, 1), (0, 2), (2, 2), (2, 3)];
        assert_eq!(
            triangle_count(&graph(4, &edges, true), &TriangleParams {}),
            1
        );
        assert_eq!(triangle_count(&graph(0, &[], true), &TriangleParams {}), 0);
    }

    #[test]
    fn orientation_by_degree_with_masks() {
        // 0 ⇄ 1, 2 → 0, 3 → 0: degrees |N| = 3, 1, 1, 1, so 0 ranks last.
        let g = graph(4, &[(0, 1), (1, 0), (2, 0), (3, 0)], true);
        let o = Oriented::build(&g);
        assert_eq!(o.degree, vec![3, 1, 1, 1]);
        assert_eq!(o.higher(0).0, &[] as &[u32]);
        assert_eq!(
            o.higher(1),
            (&[0u32][..], &[TO_NEIGHBOR | FROM_NEIGHBOR][..])
        );
        assert_eq!(o.higher(2), (&[0u32][..], &[TO_NEIGHBOR][..]));
    }
}
