//! PageRank, exactly as Graphalytics defines it.
//!
//! DEFINITION
//! ==========
//! `PR₀(v) = 1/n`, and for each iteration `i`:
//!
//! ```text
//!   PRᵢ(v) = (1 − d)/n  +  d · Σ_{u → v} PRᵢ₋₁(u) / outdeg(u)  +  d/n · Σ_{w : outdeg(w) = 0} PRᵢ₋₁(w)
//! ```
//!
//! The last term hands the rank of dangling vertices (no out-edges) to everyone, so ranks keep
//! summing to 1. Undirected graphs count each edge in both directions (`outdeg` = degree).
//! Parallel edges count once per edge, on both sides of the fraction.
//!
//! PULL, NOT PUSH
//! ==============
//! Each iteration first computes `contrib[u] = PR(u) / outdeg(u)` (one division per vertex),
//! then every vertex *pulls* `Σ contrib[u]` over its in-CSR. Each vertex writes only its own
//! slot (no atomics, no locks) and sums its in-neighbours in CSR order, so the result is
//! bit-identical across runs and thread counts; the dangling sum and the convergence delta are
//! deterministic chunked sums (see `par`).
//!
//! The iterations themselves (`iterate`) do not care where in-neighbours come from: the CSR
//! kernel here pulls over `Graph::inc`, the snapshot kernel in `live` pulls straight over the
//! storage's in-adjacency slices, with the same parameters, dangling rule and stopping rule.
//!
//! STOPPING
//! ========
//! Exactly `iterations` iterations (the Graphalytics rule), or earlier if `tolerance` is set and
//! the L1 change `Σ |PRᵢ(v) − PRᵢ₋₁(v)|` of an iteration drops below it.

use rayon::prelude::*;

use crate::AlgoError;
use crate::csr::{Csr, Graph};
use crate::par::det_sum_by;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageRankParams {
    /// Damping factor `d`, in `[0, 1]`.
    pub damping: f64,
    /// Maximum (and, without a tolerance, exact) number of iterations.
    pub iterations: usize,
    /// Stop early once an iteration changes the ranks by less than this in L1 norm.
    pub tolerance: Option<f64>,
}

impl Default for PageRankParams {
    fn default() -> Self {
        PageRankParams {
            damping: 0.85,
            iterations: 20,
            tolerance: None,
        }
    }
}

/// PageRank of every vertex (see the module doc). An empty graph gives an empty vector.
pub fn pagerank(g: &Graph, params: &PageRankParams) -> Result<Vec<f64>, AlgoError> {
    let out = g.out();
    pagerank_pull(g.inc(), |u| out.degree(u as u32), params)
}

/// PageRank over the in-adjacency `inc` (sorted lists, so every vertex sums in a fixed order)
/// and each vertex's out-degree: all the kernel reads, so a projection can build just these.
pub(crate) fn pagerank_pull(
    inc: &Csr,
    out_degree: impl Fn(usize) -> usize + Sync,
    params: &PageRankParams,
) -> Result<Vec<f64>, AlgoError> {
    iterate(
        inc.vertex_count(),
        params,
        out_degree,
        |contrib, step, next| {
            next.par_iter_mut().enumerate().for_each(|(v, r)| {
                let pulled = inc
                    .neighbors(v as u32)
                    .iter()
                    .fold(0.0, |acc, &u| acc + contrib[u as usize]);
                *r = step.rank(pulled);
            });
            Ok(())
        },
    )
}

/// One iteration's affine map from pulled rank to new rank (see DEFINITION).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    /// `(1 − d)/n + d/n · dangling rank`.
    base: f64,
    damping: f64,
}

impl Step {
    /// `PRᵢ(v)` from `Σ_{u → v} PRᵢ₋₁(u) / outdeg(u)`.
    #[inline]
    pub(crate) fn rank(self, pulled: f64) -> f64 {
        self.base + self.damping * pulled
    }
}

/// The iterations of the module doc over any adjacency, so that the snapshot kernels (which
/// pull straight from storage slices, see `live`) share them: `out_degree(u)` per vertex, and
/// `pull(contrib, step, next)` must set every `next[v] = step.rank(Σ contrib[u])` over the
/// in-neighbours `u` of `v`, each vertex summed in a fixed order.
pub(crate) fn iterate<E: From<AlgoError>>(
    n: usize,
    params: &PageRankParams,
    out_degree: impl Fn(usize) -> usize + Sync,
    mut pull: impl FnMut(&[f64], Step, &mut [f64]) -> Result<(), E>,
) -> Result<Vec<f64>, E> {
    let d = params.damping;
    if !(0.0..=1.0).contains(&d) {
        return Err(AlgoError::InvalidParameter {
            name: "damping",
            value: d.to_string(),
            reason: "must be a number in [0, 1]",
        }
        .into());
    }
    if let Some(t) = params.tolerance
        && !(t >= 0.0 && t.is_finite())
    {
        return Err(AlgoError::InvalidParameter {
            name: "tolerance",
            value: t.to_string(),
            reason: "must be a finite number >= 0",
        }
        .into());
    }
    let n_f = n as f64;
    let mut rank = vec![1.0 / n_f; n];
    let mut next = vec![0.0; n];
    let mut contrib = vec![0.0; n];
    for _ in 0..params.iterations {
        contrib.par_iter_mut().enumerate().for_each(|(u, c)| {
            let degree = out_degree(u);
            *c = if degree == 0 {
                0.0
            } else {
                rank[u] / degree as f64
            };
        });
        let dangling = det_sum_by(n, |u| if out_degree(u) == 0 { rank[u] } else { 0.0 });
        let step = Step {
            base: (1.0 - d) / n_f + d * dangling / n_f,
            damping: d,
        };
        pull(&contrib, step, &mut next)?;
        std::mem::swap(&mut rank, &mut next);
        if let Some(tolerance) = params.tolerance {
            let change = det_sum_by(n, |v| (rank[v] - next[v]).abs());
            if change < tolerance {
                break;
            }
        }
    }
    Ok(rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)], directed: bool) -> Graph {
        let edges: Vec<_> = edges.iter().map(|&(s, d)| (s, d, None)).collect();
        Graph::from_edges(n, &edges, directed).expect("valid test graph")
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn one_iteration_by_hand() {
        // 0 → 1, 0 → 2, 1 → 2; vertex 2 dangles. n = 3, d = 0.5.
        // PR0 = 1/3 each; dangling mass 1/3.
        // PR1(0) = 0.5/3 + 0.5·0 + 0.5/3·1/3 = 1/6 + 1/18 = 4/18
        // PR1(1) = 1/6 + 0.5·(1/3)/2 + 1/18 = 1/6 + 1/12 + 1/18 = 11/36
        // PR1(2) = 1/6 + 0.5·((1/3)/2 + 1/3) + 1/18 = 1/6 + 1/4 + 1/18 = 17/36
        let g = graph(3, &[(0, 1), (0, 2), (1, 2)], true);
        let params = PageRankParams {
            damping: 0.5,
            iterations: 1,
            tolerance: None,
        };
        let pr = pagerank(&g, &params).expect("valid params");
        assert!(
            close(&pr, &[4.0 / 18.0, 11.0 / 36.0, 17.0 / 36.0]),
            "{pr:?}"
        );
        assert!((pr.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn undirected_cycle_is_uniform_and_zero_iterations_is_initial() {
        let g = graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0)], false);
        let pr = pagerank(&g, &PageRankParams::default()).expect("valid params");
        assert!(close(&pr, &[0.25; 4]));
        let params = PageRankParams {
            iterations: 0,
            ..PageRankParams::default()
        };
        let pr = pagerank(&graph(2, &[(0, 1)], true), &params).expect("valid params");
        assert_eq!(pr, vec![0.5, 0.5]);
        assert!(
            pagerank(&graph(0, &[], true), &PageRankParams::default())
                .expect("valid params")
                .is_empty()
        );
    }

    #[test]
    fn tolerance_stops_early() {
        let g = graph(3, &[(0, 1), (1, 2), (2, 0), (0, 2)], true);
        let exact = PageRankParams {
            iterations: 200,
            ..PageRankParams::default()
        };
        let early = PageRankParams {
            tolerance: Some(1e-9),
            ..exact
        };
        let a = pagerank(&g, &exact).expect("valid params");
        let b = pagerank(&g, &early).expect("valid params");
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-8));
        // A huge tolerance stops right after the first iteration.
        let loose = PageRankParams {
            tolerance: Some(10.0),
            ..exact
        };
        let one = PageRankParams {
            iterations: 1,
            ..exact
        };
        assert_eq!(
            pagerank(&g, &loose).expect("valid params"),
            pagerank(&g, &one).expect("valid params")
        );
    }

    #[test]
    fn invalid_parameters() {
        let g = graph(1, &[], true);
        for (damping, tolerance) in [(1.5, None), (f64::NAN, None), (0.85, Some(-1.0))] {
            let params = PageRankParams {
                damping,
                iterations: 1,
                tolerance,
            };
            assert!(matches!(
                pagerank(&g, &params),
                Err(AlgoError::InvalidParameter { .. })
            ));
        }
    }
}
