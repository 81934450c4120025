//! Weakly connected components: lock-free parallel union-find.
//!
//! ALGORITHM
//! =========
//! `parent[v]` starts as `v`. Every edge `u – v` (direction ignored; for an undirected graph only
//! the `u < v` copy is used) is processed in parallel by `union(u, v)`:
//!
//! ```text
//!   loop { a = find(u); b = find(v); if a == b { done }
//!          CAS parent[max(a, b)] : max(a, b) → min(a, b); done if it succeeds, else retry }
//! ```
//!
//! `find` does path halving (`parent[x] = parent[parent[x]]` with plain atomic stores).
//!
//! INVARIANTS
//! ==========
//! - `parent[x] ≤ x` always: hooks point from the larger root to the smaller, and halving only
//!   moves a pointer to an ancestor, which is smaller still;
//! - hence the root of each tree is its smallest vertex, and after all unions the label of every
//!   vertex is **the smallest dense id in its component** — independent of thread scheduling;
//! - only roots are ever hooked (by CAS from "I am my own parent"), so a concurrent halving
//!   store, which writes only non-roots, cannot undo a hook.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::csr::Graph;

/// WCC has no tuning knobs; the struct keeps every kernel's signature alike and leaves room.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WccParams {}

/// Component label of every vertex: the smallest dense id in its weakly connected component.
pub fn wcc(g: &Graph, _params: &WccParams) -> Vec<u32> {
    let n = g.vertex_count();
    let out = g.out();
    let mirrored = !g.is_directed();
    let parent = forest(n);
    g.vertex_ranges().into_par_iter().for_each(|range| {
        for v in range {
            let v = v as u32;
            for &u in out.neighbors(v) {
                // Undirected: each edge is stored both ways; take it once.
                if u != v && (!mirrored || u < v) {
                    union(&parent, u, v);
                }
            }
        }
    });
    roots(&parent)
}

/// `n` singleton trees: `parent[v] = v`. Shared with the snapshot kernel in `live`, which
/// calls [`union`] on storage slices instead of CSR lists.
pub(crate) fn forest(n: usize) -> Vec<AtomicU32> {
    (0..n as u32).into_par_iter().map(AtomicU32::new).collect()
}

/// The label of every vertex once all unions are done: its root, the smallest id of its tree.
pub(crate) fn roots(parent: &[AtomicU32]) -> Vec<u32> {
    (0..parent.len() as u32)
        .into_par_iter()
        .map(|v| find(parent, v))
        .collect()
}

fn find(parent: &[AtomicU32], mut x: u32) -> u32 {
    loop {
        let p = parent[x as usize].load(Ordering::Acquire);
        debug_assert!(p <= x);
        if p == x {
            return x;
        }
        let grandparent = parent[p as usize].load(Ordering::Acquire);
        if grandparent != p {
            parent[x as usize].store(grandparent, Ordering::Release);
        }
        x = grandparent;
    }
}

/// Inlined into the scan callbacks that call it per edge: left to the optimiser, a larger
/// caller (the segment scan with its scratch pool) kept it out of line, and the call per edge
/// cost the live WCC 5–15 ms at scale 20 (`docs/benchmarks.md`, packed runs).
#[inline(always)]
pub(crate) fn union(parent: &[AtomicU32], u: u32, v: u32) {
    let (mut a, mut b) = (u, v);
    loop {
        a = find(parent, a);
        b = find(parent, b);
        if a == b {
            return;
        }
        let (high, low) = if a > b { (a, b) } else { (b, a) };
        if parent[high as usize]
            .compare_exchange(high, low, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
        // `high` was hooked by someone else meanwhile: retry from its new root.
        (a, b) = (high, low);
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
    fn components_labelled_by_smallest_id() {
        // {0, 3, 5} via 5 → 3 → 0 (direction ignored), {1, 4}, {2}, {6} with a self-loop
        let edges = [(5, 3), (3, 0), (4, 1), (6, 6)];
        for directed in [true, false] {
            let labels = wcc(&graph(7, &edges, directed), &WccParams::default());
            assert_eq!(labels, vec![0, 1, 2, 0, 1, 0, 6]);
        }
    }

    #[test]
    fn long_path_in_reverse_order() {
        let n = 5000u32;
        let edges: Vec<(u32, u32)> = (1..n).rev().map(|v| (v, v - 1)).collect();
        let labels = wcc(&graph(n as usize, &edges, true), &WccParams::default());
        assert!(labels.iter().all(|&l| l == 0));
    }
}
