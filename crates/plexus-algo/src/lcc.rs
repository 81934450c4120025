//! Local clustering coefficient (Graphalytics LCC), directed and undirected.
//!
//! DEFINITION
//! ==========
//! `N(v)` = the set of neighbours of `v` ignoring direction (in ∪ out, each once, without `v`).
//!
//! ```text
//!   LCC(v) = Σ_{u ∈ N(v)} |N(v) ∩ N_out(u)|  /  (|N(v)| · (|N(v)| − 1)),   0 if |N(v)| ≤ 1
//! ```
//!
//! Directed: `N_out(u)` = out-neighbours of `u`, so the numerator counts the directed edges
//! among `v`'s neighbours. Undirected: `N_out(u) = N(u)`, every edge among the neighbours is
//! counted from both ends, and the formula is the usual `edges / (d·(d−1)/2)`.
//! Neighbourhoods are sets: parallel edges count once and self-loops are ignored.
//!
//! IMPLEMENTATION: THROUGH TRIANGLES
//! =================================
//! An edge between two neighbours `u, w` of `v` is exactly a triangle `{v, u, w}` of the
//! simple undirected graph, and it contributes `e(u, w)` ∈ {1, 2} to `v`'s numerator: the
//! number of directions in which `u` and `w` are linked (always 2 when undirected). So:
//!
//! ```text
//!   numerator(v) = Σ_{triangles {v, u, w}} e(u, w)
//! ```
//!
//! Triangles are enumerated once each on the degree-ordered oriented graph of `triangles`
//! (`O(m^{3/2})`, no hub rescans); the oriented edges carry direction masks, so each triangle
//! `(a, b, c)` adds `e(b, c)` to `a`, `e(a, c)` to `b` and `e(a, b)` to `c`. Contributions to
//! `a` and `b` are summed locally; those to `c` are relaxed atomic adds. All integer, so the
//! result is deterministic.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::adj::for_each_common;
use crate::csr::Graph;
use crate::triangles::Oriented;

/// LCC has no tuning knobs; the struct keeps every kernel's signature alike and leaves room.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LccParams {}

/// Local clustering coefficient of every vertex (see the module doc).
pub fn lcc(g: &Graph, _params: &LccParams) -> Vec<f64> {
    let n = g.vertex_count();
    let oriented = Oriented::build(g);
    let links: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    let directions = |mask: u8| u64::from(mask.count_ones());
    oriented.ranges().into_par_iter().for_each(|range| {
        for a in range {
            let (higher_a, masks_a) = oriented.higher(a as u32);
            let mut links_a = 0u64;
            for (i, &b) in higher_a.iter().enumerate() {
                let (higher_b, masks_b) = oriented.higher(b);
                let e_ab = directions(masks_a[i]);
                let mut links_b = 0u64;
                for_each_common(higher_a, higher_b, |p, q| {
                    links_a += directions(masks_b[q]);
                    links_b += directions(masks_a[p]);
                    links[higher_a[p] as usize].fetch_add(e_ab, Ordering::Relaxed);
                });
                if links_b > 0 {
                    links[b as usize].fetch_add(links_b, Ordering::Relaxed);
                }
            }
            if links_a > 0 {
                links[a].fetch_add(links_a, Ordering::Relaxed);
            }
        }
    });
    // The join at the end of `for_each` orders every add before these loads.
    links
        .par_iter()
        .zip(&oriented.degree)
        .map(|(links, &degree)| {
            let degree = u64::from(degree);
            if degree <= 1 {
                0.0
            } else {
                links.load(Ordering::Relaxed) as f64 / (degree * (degree - 1)) as f64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let edges: Vec<_> = edges.iter().map(|&(s, d)| (s, d, None)).collect();
        Graph::from_edges(n, &edges, directed).expect("valid test graph")
    }

    #[test]
    fn undirected_triangle_with_tail() {
        // triangle 0-1-2, tail 2-3
        let g = graph(4, &[(0, 1), (1, 2), (2, 0), (2, 3)], false);
        let c = lcc(&g, &LccParams::default());
        // 2 has neighbours {0,1,3} with one edge among them: 1 / 3
        assert_eq!(c, vec![1.0, 1.0, 1.0 / 3.0, 0.0]);
    }

    #[test]
    fn directed_counts_directed_links() {
        // N(0) = {1, 2, 3}; links among them: 1 → 2, 2 → 1, 3 → 1 → 3 / 6
        let edges = [(0, 1), (2, 0), (0, 3), (1, 2), (2, 1), (3, 1)];
        let g = graph(4, &edges, true);
        let c = lcc(&g, &LccParams::default());
        assert_eq!(c[0], 0.5);
        // N(1) = {0, 2, 3}; links among them: 0 → 3, 2 → 0 → 2 / 6
        assert!((c[1] - 2.0 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn parallel_edges_and_self_loops_ignored() {
        let simple = graph(3, &[(0, 1), (1, 2), (2, 0)], true);
        let messy = graph(3, &[(0, 1), (0, 1), (1, 2), (2, 0), (1, 1), (0, 0)], true);
        let params = LccParams::default();
        assert_eq!(lcc(&simple, &params), lcc(&messy, &params));
        assert_eq!(lcc(&simple, &params), vec![0.5; 3]);
    }
}
