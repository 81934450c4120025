//! Vertex degrees.
//!
//! `Out` and `In` count edges (parallel edges each, a self-loop once in each). `Both` is
//! `out + in` on a directed graph. On an undirected graph all three are the degree — each edge
//! counted once, not twice — since `out` and `in` are the same CSR. Read straight from the CSR
//! offsets: `O(n)`, parallel.

use rayon::prelude::*;

use crate::Direction;
use crate::csr::Graph;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DegreeParams {
    pub direction: Direction,
}

/// Degree of every vertex in the chosen direction.
pub fn degree(g: &Graph, params: &DegreeParams) -> Vec<u64> {
    let (out, inc) = (g.out(), g.inc());
    let directed = g.is_directed();
    (0..g.vertex_count() as u32)
        .into_par_iter()
        .map(|v| match params.direction {
            Direction::In => inc.degree(v) as u64,
            Direction::Out => out.degree(v) as u64,
            Direction::Both if directed => (out.degree(v) + inc.degree(v)) as u64,
            Direction::Both => out.degree(v) as u64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_and_undirected() {
        let edges = [(0, 1, None), (0, 2, None), (2, 0, None), (1, 1, None)];
        let g = Graph::from_edges(3, &edges, true).expect("valid");
        let of = |direction| degree(&g, &DegreeParams { direction });
        assert_eq!(of(Direction::Out), vec![2, 1, 1]);
        assert_eq!(of(Direction::In), vec![1, 2, 1]);
        assert_eq!(of(Direction::Both), vec![3, 3, 2]);
        let u = Graph::from_edges(3, &edges[..2], false).expect("valid");
        for direction in [Direction::Out, Direction::In, Direction::Both] {
            assert_eq!(degree(&u, &DegreeParams { direction }), vec![2, 1, 1]);
        }
    }
}
