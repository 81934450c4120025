//! Property tests: the parallel kernels against simple sequential reference implementations
//! written from the definitions, on random small simple graphs (no self-loops, no parallel
//! edges), directed and undirected.

use std::collections::{BTreeSet, VecDeque};

use plexus_algo::kernels::{
    bfs, cdlp, degree, khop_count, lcc, pagerank, sssp, triangle_count, wcc,
};
use plexus_algo::{
    BFS_UNREACHABLE, BfsParams, CdlpParams, Csr, DegreeParams, Direction, Graph, KHopParams,
    LccParams, PageRankParams, SsspParams, TriangleParams, WccParams,
};
use proptest::prelude::*;

/// A random simple graph as the references see it: adjacency sets.
#[derive(Clone, Debug)]
struct Case {
    n: usize,
    directed: bool,
    /// Edges as given to the builder (undirected: each once).
    edges: Vec<(u32, u32, f64)>,
}

impl Case {
    fn graph(&self) -> Graph {
        let edges: Vec<_> = self
            .edges
            .iter()
            .map(|&(s, d, w)| (s, d, Some(w)))
            .collect();
        Graph::from_edges(self.n, &edges, self.directed).expect("generated edges are valid")
    }

    /// Out-neighbours with weights, both directions for undirected graphs.
    fn out(&self) -> Vec<Vec<(u32, f64)>> {
        let mut out = vec![Vec::new(); self.n];
        for &(s, d, w) in &self.edges {
            out[s as usize].push((d, w));
            if !self.directed {
                out[d as usize].push((s, w));
            }
        }
        out
    }

    fn inc(&self) -> Vec<Vec<u32>> {
        let mut inc = vec![Vec::new(); self.n];
        for (s, list) in self.out().iter().enumerate() {
            for &(d, _) in list {
                inc[d as usize].push(s as u32);
            }
        }
        inc
    }

    fn has_edge(&self, s: u32, d: u32) -> bool {
        self.out()[s as usize].iter().any(|&(t, _)| t == d)
    }

    /// Neighbours ignoring direction, as a set.
    fn neighbours(&self, v: u32) -> BTreeSet<u32> {
        let out = self.out();
        let inc = self.inc();
        out[v as usize]
            .iter()
            .map(|&(u, _)| u)
            .chain(inc[v as usize].iter().copied())
            .collect()
    }
}

fn cases() -> impl Strategy<Value = Case> {
    (1usize..24, any::<bool>()).prop_flat_map(|(n, directed)| {
        let edge = (0..n as u32, 0..n as u32, 0.0f64..10.0);
        proptest::collection::vec(edge, 0..(3 * n)).prop_map(move |raw| {
            // Keep each (unordered, if undirected) pair once and drop self-loops.
            let mut seen = BTreeSet::new();
            let edges = raw
                .into_iter()
                .filter(|&(s, d, _)| s != d)
                .filter(|&(s, d, _)| {
                    let key = if directed {
                        (s, d)
                    } else {
                        (s.min(d), s.max(d))
                    };
                    seen.insert(key)
                })
                .collect();
            Case { n, directed, edges }
        })
    })
}

fn ref_bfs(case: &Case, source: u32) -> Vec<i64> {
    let out = case.out();
    let mut depth = vec![BFS_UNREACHABLE; case.n];
    depth[source as usize] = 0;
    let mut queue = VecDeque::from([source]);
    while let Some(v) = queue.pop_front() {
        for &(u, _) in &out[v as usize] {
            if depth[u as usize] == BFS_UNREACHABLE {
                depth[u as usize] = depth[v as usize] + 1;
                queue.push_back(u);
            }
        }
    }
    depth
}

fn ref_pagerank(case: &Case, damping: f64, iterations: usize) -> Vec<f64> {
    let out = case.out();
    let n = case.n as f64;
    let mut rank = vec![1.0 / n; case.n];
    for _ in 0..iterations {
        let dangling: f64 = (0..case.n)
            .filter(|&v| out[v].is_empty())
            .map(|v| rank[v])
            .sum();
        let mut next = vec![(1.0 - damping) / n + damping * dangling / n; case.n];
        for (u, list) in out.iter().enumerate() {
            for &(v, _) in list {
                next[v as usize] += damping * rank[u] / list.len() as f64;
            }
        }
        rank = next;
    }
    rank
}

fn ref_wcc(case: &Case) -> Vec<u32> {
    // Repeated relaxation to the smallest label over edges in both directions.
    let mut label: Vec<u32> = (0..case.n as u32).collect();
    loop {
        let mut changed = false;
        for &(s, d, _) in &case.edges {
            let m = label[s as usize].min(label[d as usize]);
            for v in [s, d] {
                if label[v as usize] != m {
                    label[v as usize] = m;
                    changed = true;
                }
            }
        }
        if !changed {
            return label;
        }
    }
}

fn ref_cdlp(case: &Case, iterations: usize) -> Vec<u32> {
    let out = case.out();
    let inc = case.inc();
    let mut labels: Vec<u32> = (0..case.n as u32).collect();
    for _ in 0..iterations {
        let mut next = labels.clone();
        for v in 0..case.n {
            let mut counts = std::collections::BTreeMap::<u32, usize>::new();
            for &(u, _) in &out[v] {
                *counts.entry(labels[u as usize]).or_default() += 1;
            }
            if case.directed {
                for &u in &inc[v] {
                    *counts.entry(labels[u as usize]).or_default() += 1;
                }
            }
            // BTreeMap iterates labels ascending; keep the first with the highest count.
            let mut best: Option<(usize, u32)> = None;
            for (&label, &count) in &counts {
                if best.is_none_or(|(c, _)| count > c) {
                    best = Some((count, label));
                }
            }
            if let Some((_, label)) = best {
                next[v] = label;
            }
        }
        labels = next;
    }
    labels
}

fn ref_lcc(case: &Case) -> Vec<f64> {
    (0..case.n as u32)
        .map(|v| {
            let nv = case.neighbours(v);
            let d = nv.len();
            if d <= 1 {
                return 0.0;
            }
            let mut links = 0;
            for &u in &nv {
                for &w in &nv {
                    if u != w && case.has_edge(u, w) {
                        links += 1;
                    }
                }
            }
            links as f64 / (d * (d - 1)) as f64
        })
        .collect()
}

fn ref_sssp(case: &Case, source: u32) -> Vec<f64> {
    // Bellman-Ford: relax every edge until nothing changes.
    let out = case.out();
    let mut dist = vec![f64::INFINITY; case.n];
    dist[source as usize] = 0.0;
    loop {
        let mut changed = false;
        for (u, list) in out.iter().enumerate() {
            for &(v, w) in list {
                if dist[u] + w < dist[v as usize] {
                    dist[v as usize] = dist[u] + w;
                    changed = true;
                }
            }
        }
        if !changed {
            return dist;
        }
    }
}

fn ref_khop(case: &Case, k: u32, direction: Direction) -> Vec<u64> {
    let out = case.out();
    let inc = case.inc();
    (0..case.n)
        .map(|source| {
            let mut depth = vec![u32::MAX; case.n];
            depth[source] = 0;
            let mut queue = VecDeque::from([source]);
            let mut reached = 0;
            while let Some(v) = queue.pop_front() {
                if depth[v] == k {
                    continue;
                }
                let mut next: Vec<u32> = Vec::new();
                if direction != Direction::In || !case.directed {
                    next.extend(out[v].iter().map(|&(u, _)| u));
                }
                if case.directed && direction != Direction::Out {
                    next.extend(&inc[v]);
                }
                for u in next {
                    if depth[u as usize] == u32::MAX {
                        depth[u as usize] = depth[v] + 1;
                        reached += 1;
                        queue.push_back(u as usize);
                    }
                }
            }
            reached
        })
        .collect()
}

fn ref_triangles(case: &Case) -> u64 {
    let adjacent = |a: u32, b: u32| case.has_edge(a, b) || case.has_edge(b, a);
    let n = case.n as u32;
    let mut count = 0;
    for a in 0..n {
        for b in (a + 1)..n {
            for c in (b + 1)..n {
                if adjacent(a, b) && adjacent(b, c) && adjacent(a, c) {
                    count += 1;
                }
            }
        }
    }
    count
}

fn close(a: &[f64], b: &[f64], tolerance: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (x - y).abs() <= tolerance * y.abs())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn kernels_match_references(case in cases(), source_seed in any::<u32>(), k in 0u32..4) {
        let g = case.graph();
        let source = source_seed % case.n as u32;

        prop_assert_eq!(bfs(&g, &BfsParams { source }).expect("valid"), ref_bfs(&case, source));

        let params = PageRankParams { damping: 0.85, iterations: 12, tolerance: None };
        let pr = pagerank(&g, &params).expect("valid");
        prop_assert!(close(&pr, &ref_pagerank(&case, 0.85, 12), 1e-9), "{:?}", pr);

        prop_assert_eq!(wcc(&g, &WccParams::default()), ref_wcc(&case));
        prop_assert_eq!(cdlp(&g, &CdlpParams { iterations: 4 }), ref_cdlp(&case, 4));

        let c = lcc(&g, &LccParams::default());
        prop_assert!(close(&c, &ref_lcc(&case), 1e-12), "{:?}", c);

        // Delta-stepping reaches the same least fixpoint as Bellman-Ford, bit for bit.
        for delta in [None, Some(0.7)] {
            let d = sssp(&g, &SsspParams { source, delta }).expect("valid");
            prop_assert_eq!(d, ref_sssp(&case, source));
        }

        for direction in [Direction::Out, Direction::In, Direction::Both] {
            prop_assert_eq!(
                khop_count(&g, &KHopParams { k, direction }),
                ref_khop(&case, k, direction)
            );
        }
        prop_assert_eq!(triangle_count(&g, &TriangleParams::default()), ref_triangles(&case));

        let out_degree = degree(&g, &DegreeParams { direction: Direction::Out });
        let want: Vec<u64> = case.out().iter().map(|l| l.len() as u64).collect();
        prop_assert_eq!(out_degree, want);
        let in_degree = degree(&g, &DegreeParams { direction: Direction::In });
        let want: Vec<u64> = case.inc().iter().map(|l| l.len() as u64).collect();
        prop_assert_eq!(in_degree, want);
    }

    #[test]
    fn graph_from_source_equals_graph_from_edges(case in cases()) {
        let g = case.graph();
        // A directed graph's out-CSR is a valid source; an undirected one's is symmetric.
        let out: &Csr = g.out();
        let h = Graph::from_source(out, case.directed).expect("valid source");
        prop_assert_eq!(g.out(), h.out());
        prop_assert_eq!(g.inc(), h.inc());
        prop_assert_eq!(g.out().transpose().transpose(), g.out().clone());
    }

    #[test]
    fn results_do_not_depend_on_thread_count(case in cases()) {
        let g = case.graph();
        let run = || {
            let pr = pagerank(&g, &PageRankParams::default()).expect("valid");
            let d = sssp(&g, &SsspParams { source: 0, delta: None }).expect("valid");
            (pr, d, cdlp(&g, &CdlpParams { iterations: 3 }), lcc(&g, &LccParams::default()))
        };
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
        let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("pool");
        let (a, b) = (one.install(run), three.install(run));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&a.0), bits(&b.0));
        prop_assert_eq!(bits(&a.1), bits(&b.1));
        prop_assert_eq!(a.2, b.2);
        prop_assert_eq!(bits(&a.3), bits(&b.3));
    }
}
