//! Single-source shortest paths over non-negative weights: parallel delta-stepping.
//!
//! ALGORITHM
//! =========
//! Tentative distances live in `AtomicU64`s holding `f64` bits. For non-negative floats (and
//! `+∞`) the bit patterns order exactly like the values, so "relax `v` to `d`" is a single
//! `fetch_min(d.to_bits())`: lock-free, and the caller learns whether it improved `v`.
//!
//! Vertices wait in buckets `⌊dist / Δ⌋` (a `BTreeMap`, so huge distances cost nothing). The
//! smallest non-empty bucket is settled by rounds: relax every out-edge of its vertices in
//! parallel; improved vertices that still fall in this bucket form the next round, the others
//! go to their (later) buckets. Stale entries — a vertex whose distance has since dropped into
//! an earlier bucket — are skipped. Light and heavy edges are not separated: heavy edges may
//! be relaxed again within a bucket, which costs some work but never correctness.
//!
//! DETERMINISM
//! ===========
//! Every distance ever stored is the float sum of some path's weights, added from the source
//! outwards; float addition is monotone, so the final `dist[v] = min over edges (dist[u] + w)`
//! is the least fixpoint: the minimum of those sums over all paths. It does not depend on the
//! order of relaxations, so results are bit-identical across runs, thread counts and Δ (and
//! equal to sequential Bellman-Ford's, which the tests check).
//!
//! Δ defaults to the mean edge weight (1.0 if that is 0 or not finite).
//!
//! LIMITS
//! ======
//! Weights must be non-negative and not NaN (`+∞` is allowed: that edge never helps).
//! Unreachable vertices get `f64::INFINITY`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::csr::{Csr, Graph};
use crate::par::det_sum_by;
use crate::{AlgoError, check_source};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsspParams {
    /// Dense id of the source vertex.
    pub source: u32,
    /// Bucket width Δ; `None` picks the mean edge weight. Affects speed, never the result.
    pub delta: Option<f64>,
}

/// Shortest-path distance from `params.source` to every vertex along out-edges.
pub fn sssp(g: &Graph, params: &SsspParams) -> Result<Vec<f64>, AlgoError> {
    sssp_out(g.out(), params)
}

/// [`sssp`] on out-lists alone: they need not be sorted (see DETERMINISM), and no in-lists
/// are read, so the snapshot API runs it on [`crate::Projection`]'s out-CSR without the sort
/// and transposition of a full [`Graph`].
pub(crate) fn sssp_out(out: &Csr, params: &SsspParams) -> Result<Vec<f64>, AlgoError> {
    let n = out.vertex_count();
    check_source(n, params.source)?;
    let weights: &[f64] = match out.weights() {
        Some(w) => w,
        None if out.edge_count() == 0 => &[],
        None => return Err(AlgoError::MissingWeights),
    };
    if let Some(i) = weights
        .par_iter()
        .position_first(|w| w.is_nan() || *w < 0.0)
    {
        let src = out.offsets().partition_point(|&o| o <= i as u64) - 1;
        return Err(AlgoError::InvalidWeight {
            src: src as u32,
            dst: out.targets()[i],
            weight: weights[i],
        });
    }
    let delta = match params.delta {
        Some(d) if d > 0.0 && d.is_finite() => d,
        Some(d) => {
            return Err(AlgoError::InvalidParameter {
                name: "delta",
                value: d.to_string(),
                reason: "must be a finite number > 0",
            });
        }
        None => {
            let mean = det_sum_by(weights.len(), |i| weights[i]) / weights.len() as f64;
            if mean > 0.0 && mean.is_finite() {
                mean
            } else {
                1.0
            }
        }
    };
    let bucket_of = |d: f64| (d / delta) as u64; // saturating cast

    let dist: Vec<AtomicU64> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU64::new(f64::INFINITY.to_bits()))
        .collect();
    let load = |v: u32| f64::from_bits(dist[v as usize].load(Ordering::Acquire));
    dist[params.source as usize].store(0.0f64.to_bits(), Ordering::Release);

    let mut buckets: BTreeMap<u64, Vec<u32>> = BTreeMap::from([(0, vec![params.source])]);
    while let Some((bucket, mut round)) = buckets.pop_first() {
        loop {
            round.retain(|&v| bucket_of(load(v)) == bucket);
            round.sort_unstable();
            round.dedup();
            if round.is_empty() {
                break;
            }
            let improved: Vec<Vec<u32>> = round
                .par_iter()
                .fold(Vec::new, |mut improved, &u| {
                    let du = load(u);
                    let range =
                        out.offsets()[u as usize] as usize..out.offsets()[u as usize + 1] as usize;
                    for (&v, &w) in out.targets()[range.clone()].iter().zip(&weights[range]) {
                        let candidate = (du + w).to_bits();
                        if dist[v as usize].fetch_min(candidate, Ordering::AcqRel) > candidate {
                            improved.push(v);
                        }
                    }
                    improved
                })
                .collect();
            round = Vec::new();
            for v in improved.into_iter().flatten() {
                let b = bucket_of(load(v));
                debug_assert!(b >= bucket);
                if b == bucket {
                    round.push(v);
                } else {
                    buckets.entry(b).or_default().push(v);
                }
            }
        }
    }
    Ok(dist
        .into_iter()
        .map(|d| f64::from_bits(d.into_inner()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32, f64)], directed: bool) -> Graph {
        let edges: Vec<_> = edges.iter().map(|&(s, d, w)| (s, d, Some(w))).collect();
        Graph::from_edges(n, &edges, directed).expect("valid test graph")
    }

    #[test]
    fn directed_by_hand() {
        // 0 → 1 (4), 0 → 2 (1), 2 → 1 (2), 1 → 3 (1), 4 unreachable
        let g = graph(
            5,
            &[(0, 1, 4.0), (0, 2, 1.0), (2, 1, 2.0), (1, 3, 1.0)],
            true,
        );
        for delta in [None, Some(0.5), Some(100.0)] {
            let d = sssp(&g, &SsspParams { source: 0, delta }).expect("valid");
            assert_eq!(d, vec![0.0, 3.0, 1.0, 4.0, f64::INFINITY]);
        }
    }

    #[test]
    fn undirected_and_zero_weights() {
        let g = graph(3, &[(1, 0, 0.0), (2, 1, 2.5)], false);
        let d = sssp(
            &g,
            &SsspParams {
                source: 2,
                delta: None,
            },
        )
        .expect("valid");
        assert_eq!(d, vec![2.5, 2.5, 0.0]);
    }

    #[test]
    fn errors() {
        let unweighted = Graph::from_edges(2, &[(0, 1, None)], true).expect("valid");
        let params = SsspParams {
            source: 0,
            delta: None,
        };
        assert_eq!(sssp(&unweighted, &params), Err(AlgoError::MissingWeights));
        let negative = graph(3, &[(0, 1, 1.0), (2, 1, -1.0)], true);
        assert_eq!(
            sssp(&negative, &params),
            Err(AlgoError::InvalidWeight {
                src: 2,
                dst: 1,
                weight: -1.0
            })
        );
        let ok = graph(2, &[(0, 1, 1.0)], true);
        assert!(matches!(
            sssp(
                &ok,
                &SsspParams {
                    source: 0,
                    delta: Some(0.0)
                }
            ),
            Err(AlgoError::InvalidParameter { .. })
        ));
        // no edges at all: no weights needed
        let empty = Graph::from_edges(2, &[], true).expect("valid");
        assert_eq!(
            sssp(&empty, &params).expect("valid"),
            vec![0.0, f64::INFINITY]
        );
    }
}
