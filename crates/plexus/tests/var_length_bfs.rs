//! The `var_length_bfs` optimizer pass against enumeration: on random small graphs (self-loops
//! and parallel relationships included), every query shape the pass rewrites into a
//! breadth-first search over distinct ends (`VarLengthExpand(BFS)` in EXPLAIN) returns the
//! same rows as the same query made to enumerate trails — by reading the relationship list
//! (`WHERE size(r) >= 0`), which the pass must see and leave alone.
//!
//! The conditions covered (see `plexus_plan::optimizer::var_length`, WHEN): lower bound 0 and
//! 1; upper bounds 1–4 and none; out, in and undirected patterns (the start coming back to
//! itself only over a closed trail, not over one relationship used twice); one or two types
//! or any; a property map on the relationships; relationships bound earlier in the same MATCH
//! (relationship uniqueness across the pattern); a bound end node; `count(DISTINCT)`,
//! `min`/`max`, `DISTINCT` and `EXISTS` consumers.

use plexus::{Config, Connection, Database, Params};
use proptest::prelude::*;

/// A random multigraph on `nodes` vertices `:N {id}`: (source, target, type R or S, w).
#[derive(Debug, Clone)]
struct Graph {
    nodes: usize,
    rels: Vec<(usize, usize, bool, i64)>,
}

fn graph() -> impl Strategy<Value = Graph> {
    (1usize..=6).prop_flat_map(|nodes| {
        let rel = (0..nodes, 0..nodes, any::<bool>(), 0i64..2);
        prop::collection::vec(rel, 0..=8).prop_map(move |rels| Graph { nodes, rels })
    })
}

/// The variable-length relationship pattern, without the relationship variable's reads.
#[derive(Debug, Clone)]
struct Pattern {
    direction: usize,
    types: usize,
    min: u64,
    max: Option<u64>,
    property_map: bool,
}

fn pattern() -> impl Strategy<Value = Pattern> {
    (
        0usize..3,
        0usize..3,
        0u64..=1,
        prop::option::of(1u64..=4),
        any::<bool>(),
    )
        .prop_map(|(direction, types, min, max, property_map)| Pattern {
            direction,
            types,
            min,
            max,
            property_map,
        })
}

impl Pattern {
    /// `(a)-[r:R*1..3 {w: 1}]->(b)` and its variants.
    fn text(&self) -> String {
        let types = [":R", ":R|S", ""][self.types];
        let max = self.max.map(|m| m.to_string()).unwrap_or_default();
        let map = if self.property_map { " {w: 1}" } else { "" };
        let rel = format!("[r{types}*{}..{max}{map}]", self.min);
        match self.direction {
            0 => format!("(a)-{rel}->(b)"),
            1 => format!("(a)<-{rel}-(b)"),
            _ => format!("(a)-{rel}-(b)"),
        }
    }
}

fn setup(graph: &Graph) -> (Database, Connection) {
    let db = Database::open_in_memory(Config::default()).expect("open");
    let mut conn = db.connect();
    let mut parts: Vec<String> = (0..graph.nodes)
        .map(|i| format!("(n{i}:N {{id: {i}}})"))
        .collect();
    for (source, target, is_r, w) in &graph.rels {
        let ty = if *is_r { "R" } else { "S" };
        parts.push(format!("(n{source})-[:{ty} {{w: {w}}}]->(n{target})"));
    }
    conn.execute(&format!("CREATE {}", parts.join(", ")), &Params::new())
        .expect("create");
    (db, conn)
}

/// The rows of `query`, each rendered, sorted.
fn rows(conn: &mut Connection, query: &str) -> Vec<String> {
    let result = conn
        .execute(query, &Params::new())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut rows: Vec<String> = result.rows.iter().map(|r| result.render_row(r)).collect();
    rows.sort();
    rows
}

fn plan(conn: &mut Connection, query: &str) -> String {
    let result = conn
        .execute(&format!("EXPLAIN {query}"), &Params::new())
        .unwrap_or_else(|e| panic!("EXPLAIN {query}: {e}"));
    result.plan.unwrap_or_default()
}

/// The query shapes, each with `{P}` for the pattern and `{W}` for the enumeration's WHERE
/// (`{A}`: its `AND`), and whether EXPLAIN shows the BFS (it does not show the plans of
/// subquery expressions).
const SHAPES: &[(&str, bool)] = &[
    (
        "MATCH (a:N) MATCH {P} {W} RETURN a.id AS a, count(DISTINCT b) AS n, min(b.id) AS lo, max(b.id) AS hi",
        true,
    ),
    (
        "MATCH (a:N) MATCH {P} {W} RETURN DISTINCT a.id AS a, b.id AS b",
        true,
    ),
    (
        "MATCH (a:N), (c:N) WHERE EXISTS { MATCH {P} WHERE b = c {A} } RETURN a.id AS a, c.id AS c",
        false,
    ),
    // The relationship q is bound first in the same MATCH: the paths must avoid it.
    (
        "MATCH (x:N)-[q:R]->(a), {P} {W} RETURN DISTINCT id(q) AS q, a.id AS a, b.id AS b",
        false,
    ),
    // Both ends bound before the expand.
    (
        "MATCH (a:N), (b:N) WHERE a.id <= b.id MATCH {P} {W} RETURN DISTINCT a.id AS a, b.id AS b",
        true,
    ),
];

fn check(graph: &Graph, pattern: &Pattern) {
    let (_db, mut conn) = setup(graph);
    for (shape, always_bfs) in SHAPES {
        let with = |w: &str| shape.replace("{P}", &pattern.text()).replace("{W}", w);
        let with = |w: &str, a: &str| with(w).replace("{A}", a);
        let bfs = with("", "");
        let enumerating = with("WHERE size(r) >= 0", "AND size(r) >= 0");
        if *always_bfs {
            assert!(
                plan(&mut conn, &bfs).contains("VarLengthExpand(BFS)"),
                "{bfs}\n{}",
                plan(&mut conn, &bfs)
            );
        }
        assert!(
            !plan(&mut conn, &enumerating).contains("(BFS)"),
            "{enumerating}"
        );
        assert_eq!(
            rows(&mut conn, &bfs),
            rows(&mut conn, &enumerating),
            "{bfs}\non {graph:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn bfs_over_distinct_ends_matches_enumeration(graph in graph(), pattern in pattern()) {
        check(&graph, &pattern);
    }
}

/// Hand-picked cases the random ones reach rarely: the start coming back to itself.
#[test]
fn closed_trails_through_the_start() {
    let directed = Pattern {
        direction: 0,
        types: 0,
        min: 1,
        max: Some(2),
        property_map: false,
    };
    let undirected = Pattern {
        direction: 2,
        ..directed.clone()
    };
    // One relationship a-b: undirected, a reaches b but not itself (that would use the
    // relationship twice).
    let single = Graph {
        nodes: 2,
        rels: vec![(0, 1, true, 0)],
    };
    // Two parallel relationships: a closed trail of length 2.
    let parallel = Graph {
        nodes: 2,
        rels: vec![(0, 1, true, 0), (0, 1, true, 0)],
    };
    // A triangle: closed trails of length 3 only.
    let triangle = Graph {
        nodes: 3,
        rels: vec![(0, 1, true, 0), (1, 2, true, 0), (2, 0, true, 0)],
    };
    // A self-loop.
    let self_loop = Graph {
        nodes: 1,
        rels: vec![(0, 0, true, 0)],
    };
    for graph in [&single, &parallel, &triangle, &self_loop] {
        for max in [Some(1), Some(2), Some(3), None] {
            check(
                graph,
                &Pattern {
                    max,
                    ..directed.clone()
                },
            );
            check(
                graph,
                &Pattern {
                    max,
                    ..undirected.clone()
                },
            );
        }
    }
    let (_db, mut conn) = setup(&single);
    let query = "MATCH (a:N {id: 0})-[:R*1..5]-(b) RETURN DISTINCT b.id AS e";
    assert!(plan(&mut conn, query).contains("(BFS)"));
    assert_eq!(rows(&mut conn, query), ["1"]);
    let (_db, mut conn) = setup(&parallel);
    assert_eq!(rows(&mut conn, query), ["0", "1"]);
}

/// Enumeration stays bounded by `var_length_path_limit`, and its error says how to rewrite
/// the query; the same pattern asking only for distinct ends runs as a BFS, unbounded by it.
#[test]
fn the_path_limit_bounds_enumeration_only() {
    let mut settings = plexus::Settings::new();
    settings
        .set(
            "var_length_path_limit",
            "100",
            plexus::SettingSource::Argument,
        )
        .expect("set");
    let db = Database::open_in_memory_settings(settings).expect("open");
    let mut conn = db.connect();
    // A complete directed graph on 6 nodes: thousands of trails from each node.
    conn.execute(
        "UNWIND range(0, 5) AS i CREATE (:N {id: i})",
        &Params::new(),
    )
    .expect("nodes");
    conn.execute(
        "MATCH (a:N), (b:N) WHERE a <> b CREATE (a)-[:R]->(b)",
        &Params::new(),
    )
    .expect("relationships");
    let enumerating = "MATCH (a:N {id: 0})-[r:R*1..6]->(b) RETURN count(DISTINCT size(r)) AS n";
    let error = conn
        .execute(enumerating, &Params::new())
        .expect_err("more than 100 trails");
    assert_eq!(error.code, "LimitExceeded");
    assert!(
        error.message.contains("var_length_path_limit") && error.message.contains("DISTINCT"),
        "{}",
        error.message
    );
    let bfs = "MATCH (a:N {id: 0})-[:R*1..6]->(b) RETURN count(DISTINCT b) AS n";
    assert_eq!(rows(&mut conn, bfs), ["6"]);
}
