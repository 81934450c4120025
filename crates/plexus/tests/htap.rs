//! HTAP isolation: writer threads commit edge inserts and deletes while PageRank, WCC and BFS run on
//! a snapshot pinned at time t; every result must equal the result on a static copy of the
//! graph as of t (an edge list read in that same snapshot with `GraphSnapshot::neighbors`,
//! built with `Graph::from_edges`). Both designs are checked: reading the snapshot's slices in
//! every pass or level (the API's WCC and BFS, `pagerank_from_slices`) and a CSR built at t (the
//! API's PageRank, `bfs_via_csr`, a `ProjectedGraph`).
//!
//! Each analytics round starts only once more commits have landed since the previous one, so
//! every round reads storage that holds commits newer than t. Bounded: `ROUNDS` rounds, at most
//! `MAX_TXNS_PER_WRITER` transactions per writer, a bounded wait per round; no timing
//! assertions.
//! PageRank from the slices sums in storage order, the static copy in sorted order, so floats
//! are compared within 1e-12 relative; the CSR paths, all WCC labels and BFS depths must match
//! exactly.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use common::memory_db;
use plexus::algo::{self, BfsParams, Graph, PageRankParams, Projection, WccParams, kernels};
use plexus::{Database, Direction, Error, GraphSnapshot, VertexId};

const VERTICES: usize = 600;
const INITIAL_EDGES: usize = 2_400;
const WRITERS: usize = 3;
/// Upper bound per writer; writers stop earlier once the analytics rounds are done.
const MAX_TXNS_PER_WRITER: usize = 20_000;
const EDGES_PER_TXN: usize = 4;
/// Analytics rounds; each starts only after more commits landed since the previous one.
const ROUNDS: usize = 12;
/// Bound on the wait for new commits before a round (1 ms each).
const MAX_WAITS_PER_ROUND: usize = 2_000;
const MAX_RETRIES: usize = 1_000;

struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % bound as u64) as usize
    }
}

/// The static copy of the `E` graph at the snapshot, over `vertices` (offset order).
fn static_copy(snap: &GraphSnapshot, vertices: &[VertexId]) -> Graph {
    let mut edges = Vec::new();
    for (i, &v) in vertices.iter().enumerate() {
        for (_, u) in snap.neighbors(v, Some("E"), Direction::Out) {
            let j = vertices
                .binary_search(&u)
                .expect("edge ends at a live vertex");
            edges.push((i as u32, j as u32, None));
        }
    }
    Graph::from_edges(vertices.len(), &edges, true).expect("valid static copy")
}

/// One writer: transactions that insert edges and delete an existing one, retried on
/// conflict, until `stop` (or its bound); counts its commits into `commits`.
fn writer(
    db: &Database,
    vertices: &[VertexId],
    seed: u64,
    stop: &AtomicBool,
    commits: &AtomicUsize,
) -> Result<(), Error> {
    let mut rng = Rng(seed);
    for _ in 0..MAX_TXNS_PER_WRITER {
        if stop.load(Ordering::Acquire) {
            break;
        }
        for attempt in 0.. {
            let mut tx = db.begin();
            for _ in 0..EDGES_PER_TXN {
                let (a, b) = (vertices[rng.below(VERTICES)], vertices[rng.below(VERTICES)]);
                tx.create_edge(a, "E", b, &[])?;
            }
            let victim = vertices[rng.below(VERTICES)];
            if let Some(&(e, _)) = tx.neighbors(victim, Some("E"), Direction::Out)?.first() {
                tx.delete_edge(e)?;
            }
            match tx.commit() {
                Ok(_) => break,
                Err(e) if e.is_retryable() && attempt < MAX_RETRIES => continue,
                Err(e) => return Err(e),
            }
        }
        commits.fetch_add(1, Ordering::AcqRel);
    }
    Ok(())
}

#[test]
fn analytics_on_a_pinned_snapshot_ignore_concurrent_commits() {
    let db = memory_db();
    let db = Arc::new(db);
    let mut rng = Rng(7);
    let mut tx = db.begin();
    let vertices: Vec<VertexId> = (0..VERTICES)
        .map(|_| tx.create_vertex(&["V"], &[]).unwrap())
        .collect();
    for _ in 0..INITIAL_EDGES {
        let (a, b) = (vertices[rng.below(VERTICES)], vertices[rng.below(VERTICES)]);
        tx.create_edge(a, "E", b, &[]).unwrap();
    }
    tx.commit().unwrap();
    // Some deletions before t, left uncompacted: the snapshot reads through tombstones.
    let mut tx = db.begin();
    for &v in vertices.iter().step_by(9) {
        if let Some(&(e, _)) = tx.neighbors(v, Some("E"), Direction::Out).unwrap().first() {
            tx.delete_edge(e).unwrap();
        }
    }
    tx.commit().unwrap();

    let pinned = db.snapshot();
    let fixed = static_copy(&pinned, &vertices);
    let params = PageRankParams::default();
    let expected_pr = kernels::pagerank(&fixed, &params).unwrap();
    let expected_wcc = kernels::wcc(&fixed, &WccParams::default());
    let expected_bfs = kernels::bfs(&fixed, &BfsParams { source: 0 }).unwrap();
    let projection = Projection::new().vertex_labels(&["V"]).edge_types(&["E"]);

    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, vertices, stop, commits) =
                (db.clone(), vertices.clone(), stop.clone(), commits.clone());
            std::thread::spawn(move || writer(&db, &vertices, 100 + w as u64, &stop, &commits))
        })
        .collect();

    let mut seen = 0;
    let mut rounds_after_new_commits = 0;
    for round in 0..ROUNDS {
        for _ in 0..MAX_WAITS_PER_ROUND {
            if commits.load(Ordering::Acquire) > seen {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let now = commits.load(Ordering::Acquire);
        rounds_after_new_commits += usize::from(now > seen);
        seen = now;
        let pr = algo::pagerank(&pinned, &projection, &params).unwrap();
        assert!(pr.iter().map(|(v, _)| *v).eq(vertices.iter().copied()));
        let pr: Vec<f64> = pr.into_iter().map(|(_, r)| r).collect();
        assert_eq!(pr, expected_pr, "round {round}");
        let from_slices = algo::pagerank_from_slices(&pinned, &projection, &params).unwrap();
        for ((_, got), want) in from_slices.iter().zip(&expected_pr) {
            assert!(
                (got - want).abs() <= 1e-12 * want.abs(),
                "round {round}: {got} vs {want}"
            );
        }
        let wcc = algo::wcc(&pinned, &projection, &WccParams::default()).unwrap();
        let labels: Vec<u32> = wcc.iter().map(|(_, l)| l.offset).collect();
        assert_eq!(labels, expected_wcc, "round {round}");
        for bfs in [algo::bfs, algo::bfs_via_csr] {
            let depths = bfs(&pinned, &projection, vertices[0]).unwrap();
            let depths: Vec<i64> = depths.into_iter().map(|(_, d)| d).collect();
            assert_eq!(depths, expected_bfs, "round {round}");
        }
        let built = projection.build(&pinned).unwrap();
        assert_eq!(
            kernels::pagerank(built.graph(), &params).unwrap(),
            expected_pr
        );
        assert_eq!(
            kernels::wcc(built.graph(), &WccParams::default()),
            expected_wcc
        );
    }
    stop.store(true, Ordering::Release);
    for w in writers {
        w.join().expect("writer thread").unwrap();
    }
    println!(
        "{ROUNDS} rounds, {rounds_after_new_commits} after new commits; {} commits in all",
        commits.load(Ordering::Acquire)
    );

    // The writes happened: a fresh snapshot sees a different graph, the pinned one still not.
    let fresh = db.snapshot();
    assert!(fresh.ts() > pinned.ts());
    let now = static_copy(&fresh, &vertices);
    assert_ne!(now.out().edge_count(), fixed.out().edge_count());
    assert_eq!(static_copy(&pinned, &vertices).out(), fixed.out());
    let pr = algo::pagerank(&pinned, &projection, &params).unwrap();
    assert!(
        pr.iter()
            .zip(&expected_pr)
            .all(|((_, g), w)| (g - w).abs() <= 1e-12 * w.abs())
    );
}
