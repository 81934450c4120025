//! Analytics through `plexus::algo` on real snapshots: what a projection selects (labels,
//! extra labels, edge types, deleted vertices and edges, directions, self-loops, weights), its
//! errors, and every kernel against the same kernel on a static graph read independently from
//! the same snapshot (per-vertex `neighbors`, not segment scans); the snapshot BFS against the
//! CSR BFS on random graphs with filters, every direction and commits after the pin.

mod common;

use std::collections::BTreeMap;

use common::memory_db;
use plexus::algo::{
    self, AnalyticsError, BfsParams, CdlpParams, DegreeParams, Graph, KHopParams, LccParams,
    PageRankParams, Projection, SsspParams, TriangleParams, WccParams, kernels,
};
use plexus::{Database, Direction, GraphSnapshot, Value, VertexId};
use proptest::prelude::*;

/// The projection's graph as an edge list read with `GraphSnapshot::neighbors`, over the
/// selected vertices in `VertexId` order (the projection's dense order).
fn static_copy(
    snap: &GraphSnapshot,
    vertices: &[VertexId],
    edge_type: &str,
    direction: algo::Direction,
    weight: Option<&str>,
    db: &Database,
) -> Graph {
    let dense: BTreeMap<VertexId, u32> = vertices
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i as u32))
        .collect();
    let mut tx = db.begin();
    assert_eq!(
        tx.start_ts(),
        snap.ts(),
        "static copy and snapshot read the same state"
    );
    let mut edges = Vec::new();
    for &v in vertices {
        for (e, u) in snap.neighbors(v, Some(edge_type), Direction::Out) {
            let Some(&du) = dense.get(&u) else { continue };
            let w = weight.map(
                |name| match tx.edge_property(e, name).expect("edge visible") {
                    Some(Value::Float(w)) => w,
                    other => panic!("edge {e} weight {other:?}"),
                },
            );
            let dv = dense[&v];
            edges.push(match direction {
                algo::Direction::In => (du, dv, w),
                _ => (dv, du, w),
            });
        }
    }
    Graph::from_edges(vertices.len(), &edges, direction != algo::Direction::Both)
        .expect("valid static copy")
}

fn ids<T>(pairs: &[(VertexId, T)]) -> Vec<VertexId> {
    pairs.iter().map(|(v, _)| *v).collect()
}

fn values<T: Clone>(pairs: &[(VertexId, T)]) -> Vec<T> {
    pairs.iter().map(|(_, x)| x.clone()).collect()
}

/// Labels (vertices) as dense ids of `vertices`.
fn dense_labels(pairs: &[(VertexId, VertexId)], vertices: &[VertexId]) -> Vec<u32> {
    pairs
        .iter()
        .map(|(_, l)| {
            vertices
                .binary_search(l)
                .expect("label is a projected vertex") as u32
        })
        .collect()
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()))
}

/// SplitMix64, for reproducible random graphs.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % bound
    }
}

/// Two vertex tables (Person, some also VIP; City), KNOWS among persons with weights and
/// self-loops and parallel edges, LIVES_IN to cities; then some deletions, left uncompacted.
fn random_world(db: &Database, seed: u64) -> Vec<VertexId> {
    let mut rng = Rng(seed);
    let mut tx = db.begin();
    let mut people = Vec::new();
    for i in 0..300 {
        let labels: &[&str] = if i % 7 == 0 {
            &["Person", "VIP"]
        } else {
            &["Person"]
        };
        people.push(tx.create_vertex(labels, &[("i", Value::from(i))]).unwrap());
    }
    let cities: Vec<_> = (0..20)
        .map(|_| tx.create_vertex(&["City"], &[]).unwrap())
        .collect();
    for _ in 0..1500 {
        let (a, b) = (
            people[rng.below(300) as usize],
            people[rng.below(300) as usize],
        );
        let w = rng.below(100) as f64 / 10.0;
        tx.create_edge(a, "KNOWS", b, &[("w", Value::from(w))])
            .unwrap();
    }
    for &p in &people {
        tx.create_edge(p, "LIVES_IN", cities[rng.below(20) as usize], &[])
            .unwrap();
    }
    tx.commit().unwrap();
    let mut tx = db.begin();
    for &v in people.iter().step_by(37) {
        tx.delete_vertex(v, true).unwrap();
    }
    for &v in people.iter().skip(1).step_by(5) {
        if !tx.vertex_exists(v).unwrap() {
            continue;
        }
        if let Some(&(e, _)) = tx
            .neighbors(v, Some("KNOWS"), Direction::Out)
            .unwrap()
            .first()
        {
            tx.delete_edge(e).unwrap();
        }
    }
    tx.commit().unwrap();
    people
}

#[test]
fn every_kernel_matches_a_static_copy_in_every_direction() {
    let db = memory_db();
    random_world(&db, 1);
    let snap = db.snapshot();
    let persons = snap.scan_label("Person").unwrap();
    assert!(persons.len() < 300, "deleted persons are not selected");
    let source = persons[3];
    for direction in [
        algo::Direction::Out,
        algo::Direction::In,
        algo::Direction::Both,
    ] {
        let p = Projection::new()
            .vertex_labels(&["Person"])
            .edge_types(&["KNOWS"])
            .direction(direction);
        let g = static_copy(&snap, &persons, "KNOWS", direction, None, &db);
        let built = p.build(&snap).unwrap();
        assert_eq!(
            built.graph().out().edge_count(),
            g.out().edge_count(),
            "{direction:?}"
        );
        assert_eq!(built.vertex_ids(), persons);

        let pr = algo::pagerank(&snap, &p, &PageRankParams::default()).unwrap();
        assert_eq!(ids(&pr), persons);
        assert!(
            close(
                &values(&pr),
                &kernels::pagerank(&g, &PageRankParams::default()).unwrap()
            ),
            "{direction:?}"
        );
        let wcc = algo::wcc(&snap, &p, &WccParams::default()).unwrap();
        assert_eq!(
            dense_labels(&wcc, &persons),
            kernels::wcc(&g, &WccParams::default())
        );
        let cdlp = algo::cdlp(&snap, &p, &CdlpParams { iterations: 5 }).unwrap();
        assert_eq!(
            dense_labels(&cdlp, &persons),
            kernels::cdlp(&g, &CdlpParams { iterations: 5 })
        );
        let bfs = algo::bfs(&snap, &p, source).unwrap();
        assert_eq!(
            values(&bfs),
            kernels::bfs(&g, &BfsParams { source: 3 }).unwrap()
        );
        let lcc = algo::lcc(&snap, &p, &LccParams::default()).unwrap();
        assert_eq!(values(&lcc), kernels::lcc(&g, &LccParams::default()));
        let khop = KHopParams {
            k: 2,
            direction: algo::Direction::Out,
        };
        assert_eq!(
            values(&algo::khop_count(&snap, &p, &khop).unwrap()),
            kernels::khop_count(&g, &khop)
        );
        let degree = DegreeParams {
            direction: algo::Direction::Both,
        };
        assert_eq!(
            values(&algo::degree(&snap, &p, &degree).unwrap()),
            kernels::degree(&g, &degree)
        );
        assert_eq!(
            algo::triangle_count(&snap, &p, &TriangleParams::default()).unwrap(),
            kernels::triangle_count(&g, &TriangleParams::default())
        );

        let weighted = p.clone().weight("w");
        let g = static_copy(&snap, &persons, "KNOWS", direction, Some("w"), &db);
        let sssp = algo::sssp(&snap, &weighted, source, None).unwrap();
        let params = SsspParams {
            source: 3,
            delta: None,
        };
        assert_eq!(
            values(&sssp),
            kernels::sssp(&g, &params).unwrap(),
            "{direction:?}"
        );
    }
}

#[test]
fn labels_types_and_extra_labels_select_the_induced_subgraph() {
    let db = memory_db();
    random_world(&db, 2);
    let snap = db.snapshot();
    let vips = snap.scan_label("VIP").unwrap();
    let cities = snap.scan_label("City").unwrap();
    assert!(!vips.is_empty() && vips.iter().all(|v| v.table == vips[0].table));

    // Extra label: VIP vertices live in the Person table; only they are selected.
    let p = Projection::new()
        .vertex_labels(&["VIP"])
        .edge_types(&["KNOWS"]);
    let degree = DegreeParams {
        direction: algo::Direction::Out,
    };
    let got = algo::degree(&snap, &p, &degree).unwrap();
    assert_eq!(ids(&got), vips);
    let g = static_copy(&snap, &vips, "KNOWS", algo::Direction::Out, None, &db);
    assert_eq!(values(&got), kernels::degree(&g, &degree));

    // Two labels: both tables, persons first (table order); LIVES_IN edges only.
    let p = Projection::new()
        .vertex_labels(&["Person", "City"])
        .edge_types(&["LIVES_IN"])
        .direction(algo::Direction::In);
    let got = algo::degree(&snap, &p, &degree).unwrap();
    let persons = snap.scan_label("Person").unwrap();
    assert_eq!(ids(&got), [persons.clone(), cities.clone()].concat());
    let lived_in: u64 = values(&got)[persons.len()..].iter().sum();
    assert_eq!(
        lived_in as usize,
        persons.len(),
        "every live person lives in one city"
    );
    assert!(values(&got)[..persons.len()].iter().all(|&d| d == 0));

    // No label and no type: everything, and a City's WCC label is the smallest vertex of its
    // component.
    let all = algo::wcc(&snap, &Projection::new(), &WccParams::default()).unwrap();
    assert_eq!(all.len(), persons.len() + cities.len());
    assert!(all.iter().all(|(v, l)| l <= v));
}

#[test]
fn undirected_self_loops_count_once() {
    let db = memory_db();
    let mut tx = db.begin();
    let a = tx.create_vertex(&["N"], &[]).unwrap();
    let b = tx.create_vertex(&["N"], &[]).unwrap();
    tx.create_edge(a, "E", a, &[]).unwrap();
    tx.create_edge(a, "E", b, &[]).unwrap();
    tx.create_edge(b, "E", a, &[]).unwrap();
    tx.commit().unwrap();
    let snap = db.snapshot();
    let both = Projection::new().direction(algo::Direction::Both);
    let degree = DegreeParams {
        direction: algo::Direction::Out,
    };
    // a: loop once + two edges to b; b: two edges to a.
    assert_eq!(
        values(&algo::degree(&snap, &both, &degree).unwrap()),
        vec![3, 2]
    );
    let static_graph =
        Graph::from_edges(2, &[(0, 0, None), (0, 1, None), (1, 0, None)], false).unwrap();
    let pr = algo::pagerank(&snap, &both, &PageRankParams::default()).unwrap();
    assert!(close(
        &values(&pr),
        &kernels::pagerank(&static_graph, &PageRankParams::default()).unwrap()
    ));
}

#[test]
fn errors_name_what_is_wrong() {
    let db = memory_db();
    let mut tx = db.begin();
    let a = tx.create_vertex(&["N"], &[]).unwrap();
    let b = tx.create_vertex(&["N"], &[]).unwrap();
    let c = tx.create_vertex(&["M"], &[]).unwrap();
    tx.create_edge(a, "E", b, &[("w", Value::from(1.5))])
        .unwrap();
    let f = tx.create_edge(b, "E", a, &[]).unwrap();
    let g = tx
        .create_edge(b, "F", a, &[("w", Value::from("heavy"))])
        .unwrap();
    tx.create_edge(a, "G", b, &[("w", Value::from(2))]).unwrap();
    tx.commit().unwrap();
    let snap = db.snapshot();
    let unknown = Projection::new().vertex_labels(&["Nope"]);
    assert!(matches!(
        algo::pagerank(&snap, &unknown, &PageRankParams::default()),
        Err(AnalyticsError::UnknownLabel(l)) if l == "Nope"
    ));
    let unknown = Projection::new().edge_types(&["NOPE"]);
    assert!(matches!(
        algo::wcc(&snap, &unknown, &WccParams::default()),
        Err(AnalyticsError::UnknownEdgeType(t)) if t == "NOPE"
    ));
    let only_n = Projection::new().vertex_labels(&["N"]);
    assert!(
        matches!(algo::bfs(&snap, &only_n, c), Err(AnalyticsError::NotInProjection(v)) if v == c)
    );
    let missing = Projection::new().edge_types(&["E"]).weight("w");
    assert!(matches!(
        algo::sssp(&snap, &missing, a, None),
        Err(AnalyticsError::MissingWeight { edge, .. }) if edge == f
    ));
    let bad = Projection::new().edge_types(&["F"]).weight("w");
    assert!(matches!(
        algo::sssp(&snap, &bad, a, None),
        Err(AnalyticsError::BadWeight { edge, .. }) if edge == g
    ));
    // Integers are weights too; an unweighted projection cannot run SSSP.
    let ints = Projection::new().edge_types(&["G"]).weight("w");
    assert_eq!(
        values(&algo::sssp(&snap, &ints, a, None).unwrap()),
        vec![0.0, 2.0, f64::INFINITY]
    );
    assert!(matches!(
        algo::sssp(&snap, &Projection::new(), a, None),
        Err(AnalyticsError::Algo(algo::AlgoError::MissingWeights))
    ));
    let damping = PageRankParams {
        damping: 2.0,
        ..PageRankParams::default()
    };
    assert!(matches!(
        algo::pagerank(&snap, &Projection::new(), &damping),
        Err(AnalyticsError::Algo(_))
    ));
}

/// Persons (every third also VIP) with KNOWS and LIKES among them, one hub KNOWS-linked to
/// `hub_fanout` persons, LIVES_IN to cities; then deletions (left uncompacted).
fn bfs_world(db: &Database, rng: &mut Rng, persons: usize, edges: usize, hub_fanout: usize) {
    let mut tx = db.begin();
    let people: Vec<VertexId> = (0..persons)
        .map(|i| {
            let labels: &[&str] = if i % 3 == 0 {
                &["Person", "VIP"]
            } else {
                &["Person"]
            };
            tx.create_vertex(labels, &[]).unwrap()
        })
        .collect();
    let cities: Vec<VertexId> = (0..8)
        .map(|_| tx.create_vertex(&["City"], &[]).unwrap())
        .collect();
    let mut person = || people[rng.below(persons as u64) as usize];
    for i in 0..edges {
        let ty = if i % 4 == 0 { "LIKES" } else { "KNOWS" };
        let (a, b) = (person(), person());
        tx.create_edge(a, ty, b, &[]).unwrap();
    }
    let hub = person();
    for _ in 0..hub_fanout {
        let b = person();
        tx.create_edge(hub, "KNOWS", b, &[]).unwrap();
    }
    for (i, &p) in people.iter().enumerate().step_by(5) {
        tx.create_edge(p, "LIVES_IN", cities[i % cities.len()], &[])
            .unwrap();
    }
    tx.commit().unwrap();
    let mut tx = db.begin();
    for &v in people.iter().step_by(41) {
        tx.delete_vertex(v, true).unwrap();
    }
    for &v in people.iter().skip(2).step_by(7) {
        if tx.vertex_exists(v).unwrap()
            && let Some(&(e, _)) = tx.neighbors(v, None, Direction::Out).unwrap().first()
        {
            tx.delete_edge(e).unwrap();
        }
    }
    tx.commit().unwrap();
}

/// Inserts and deletes after the pin, and a compaction, that the pinned snapshot must ignore.
fn writes_after_pin(db: &Database, rng: &mut Rng) {
    let persons = db.snapshot().scan_label("Person").unwrap();
    let mut tx = db.begin();
    let newcomer = tx.create_vertex(&["Person", "VIP"], &[]).unwrap();
    for _ in 0..persons.len() {
        let a = persons[rng.below(persons.len() as u64) as usize];
        let b = persons[rng.below(persons.len() as u64) as usize];
        tx.create_edge(a, "KNOWS", b, &[]).unwrap();
        tx.create_edge(newcomer, "LIKES", a, &[]).unwrap();
    }
    for &v in persons.iter().step_by(3) {
        if let Some(&(e, _)) = tx.neighbors(v, None, Direction::Both).unwrap().first() {
            tx.delete_edge(e).unwrap();
        }
    }
    tx.delete_vertex(persons[persons.len() / 2], true).unwrap();
    tx.commit().unwrap();
    db.compact();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The snapshot BFS (segment scans, top-down and bottom-up levels) gives the depths of the
    /// CSR kernel on the projection's CSR, for label and type filters, every direction, and
    /// commits after the pin; graphs span one to three 1,024-vertex segments.
    #[test]
    fn snapshot_bfs_equals_csr_bfs(
        seed in any::<u64>(),
        persons in 1..2_500usize,
        edges_per_person in 0..6usize,
        hub_fanout in 0..800usize,
        pick in any::<usize>(),
    ) {
        let db = memory_db();
        let mut rng = Rng(seed);
        bfs_world(&db, &mut rng, persons, persons * edges_per_person, hub_fanout);
        let snap = db.snapshot();
        writes_after_pin(&db, &mut rng);
        let filters: [(&[&str], &[&str]); 5] = [
            (&[], &[]),
            (&["Person"], &["KNOWS"]),
            (&["VIP"], &["KNOWS", "LIKES"]),
            (&["Person", "City"], &["KNOWS", "LIVES_IN"]),
            (&["City", "VIP"], &[]),
        ];
        for (labels, types) in filters {
            for direction in [algo::Direction::Out, algo::Direction::In, algo::Direction::Both] {
                let p = Projection::new()
                    .vertex_labels(labels)
                    .edge_types(types)
                    .direction(direction);
                let expected = algo::bfs_via_csr(&snap, &p, VertexId::new(0, 0));
                let vertices = match expected {
                    Ok(depths) => ids(&depths),
                    Err(AnalyticsError::NotInProjection(_)) => p.build(&snap).unwrap().vertex_ids(),
                    Err(e) => panic!("{e}"),
                };
                if vertices.is_empty() {
                    continue;
                }
                let source = vertices[pick % vertices.len()];
                let want = algo::bfs_via_csr(&snap, &p, source).unwrap();
                let got = algo::bfs(&snap, &p, source).unwrap();
                prop_assert_eq!(got, want, "{:?} {:?} {:?}", labels, types, direction);
            }
        }
    }
}

/// A hub whose level is heavy (bottom-up levels) followed by a long chain (back to top-down),
/// so both kinds of level and both switches run; the depths are the CSR kernel's.
#[test]
fn snapshot_bfs_switches_direction_both_ways() {
    let db = memory_db();
    let mut tx = db.begin();
    let v: Vec<VertexId> = (0..3_000)
        .map(|_| tx.create_vertex(&["N"], &[]).unwrap())
        .collect();
    for i in 1..2_000 {
        tx.create_edge(v[0], "E", v[i], &[]).unwrap();
        tx.create_edge(v[i], "E", v[(i * 7) % 2_000], &[]).unwrap();
    }
    for i in 1_999..2_999 {
        tx.create_edge(v[i], "E", v[i + 1], &[]).unwrap();
    }
    tx.commit().unwrap();
    let snap = db.snapshot();
    for direction in [algo::Direction::Out, algo::Direction::Both] {
        let p = Projection::new().direction(direction);
        let got = algo::bfs(&snap, &p, v[0]).unwrap();
        assert_eq!(got, algo::bfs_via_csr(&snap, &p, v[0]).unwrap());
        assert_eq!(got[2_999].1, 1_001, "{direction:?}: the chain's end");
    }
}
