//! Community detection by label propagation (Graphalytics CDLP).
//!
//! RULES
//! =====
//! - every vertex starts with its own id as label;
//! - synchronous: iteration `i` reads only the labels of iteration `i − 1` (double buffer);
//! - a vertex takes the most frequent label among its neighbours. Directed graphs count in- and
//!   out-neighbours, so a neighbour linked both ways counts twice; undirected graphs count each
//!   neighbour once per edge. Parallel edges count once each;
//! - ties go to the smallest label; a vertex without neighbours keeps its label;
//! - exactly `iterations` iterations — or fewer when an iteration changes nothing, because from
//!   then on every further iteration would reproduce the same labels.
//!
//! Labels are dense ids; "smallest" is by dense id (see the crate doc on id mappings).
//!
//! IMPLEMENTATION
//! ==============
//! Per vertex, the neighbours' labels are gathered into a per-task scratch vector, sorted, and
//! scanned for the longest run, the first (smallest) winning on ties: `O(d log d)` and no
//! hashing, allocation-free after warm-up. Each vertex writes only its own slot of the next
//! buffer, so the result is deterministic.

use rayon::prelude::*;

use crate::csr::Graph;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CdlpParams {
    /// Number of synchronous iterations (Graphalytics `max-iterations`).
    pub iterations: usize,
}

/// Community label (a dense vertex id) of every vertex.
pub fn cdlp(g: &Graph, params: &CdlpParams) -> Vec<u32> {
    let n = g.vertex_count();
    let (out, inc) = (g.out(), g.inc());
    let directed = g.is_directed();
    let mut labels: Vec<u32> = (0..n as u32).collect();
    let mut next = vec![0u32; n];
    for _ in 0..params.iterations {
        // Count (not `any`, which would stop early and leave `next` half-written).
        let changed = next
            .par_iter_mut()
            .enumerate()
            .map_init(Vec::new, |gathered: &mut Vec<u32>, (v, slot)| {
                let v = v as u32;
                gathered.clear();
                gathered.extend(out.neighbors(v).iter().map(|&u| labels[u as usize]));
                if directed {
                    gathered.extend(inc.neighbors(v).iter().map(|&u| labels[u as usize]));
                }
                *slot = most_frequent_smallest(gathered).unwrap_or(labels[v as usize]);
                *slot != labels[v as usize]
            })
            .filter(|&changed| changed)
            .count();
        std::mem::swap(&mut labels, &mut next);
        if changed == 0 {
            break;
        }
    }
    labels
}

/// The most frequent value, smallest on ties; `None` if empty. Sorts `values`.
fn most_frequent_smallest(values: &mut [u32]) -> Option<u32> {
    values.sort_unstable();
    let mut best: Option<(usize, u32)> = None;
    let mut i = 0;
    while i < values.len() {
        let value = values[i];
        let run = values[i..].iter().take_while(|&&x| x == value).count();
        if best.is_none_or(|(count, _)| run > count) {
            best = Some((run, value));
        }
        i += run;
    }
    best.map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let edges: Vec<_> = edges.iter().map(|&(s, d)| (s, d, None)).collect();
        Graph::from_edges(n, &edges, directed).expect("valid test graph")
    }

    #[test]
    fn mode_with_ties() {
        assert_eq!(most_frequent_smallest(&mut [5, 3, 5, 3, 9]), Some(3));
        assert_eq!(most_frequent_smallest(&mut [5, 3, 5]), Some(5));
        assert_eq!(most_frequent_smallest(&mut []), None);
    }

    #[test]
    fn two_triangles_joined_by_a_bridge() {
        // {0,1,2} and {3,4,5}, bridge 2 – 3.
        let edges = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)];
        let g = graph(6, &edges, false);
        // Iteration 1 by hand: 0 sees {1,2} → 1; 1 sees {0,2} → 0; 2 sees {0,1,3} → 0;
        // 3 sees {2,4,5} → 2; 4 sees {3,5} → 3; 5 sees {3,4} → 3.
        assert_eq!(
            cdlp(&g, &CdlpParams { iterations: 1 }),
            vec![1, 0, 0, 2, 3, 3]
        );
        assert_eq!(
            cdlp(&g, &CdlpParams { iterations: 0 }),
            vec![0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn directed_counts_both_directions_twice() {
        // 0 ⇄ 1 (both ways), 2 → 0, 3 → 0: vertex 0 sees label 1 twice, 2 and 3 once each.
        let g = graph(4, &[(0, 1), (1, 0), (2, 0), (3, 0)], true);
        let labels = cdlp(&g, &CdlpParams { iterations: 1 });
        assert_eq!(labels[0], 1);
        // 1 sees 0 twice; 2 and 3 see 0 once (as out-neighbour)
        assert_eq!(labels[1..], [0, 0, 0]);
        // isolated vertex keeps its label
        assert_eq!(
            cdlp(&graph(1, &[], true), &CdlpParams { iterations: 3 }),
            vec![0]
        );
    }
}
