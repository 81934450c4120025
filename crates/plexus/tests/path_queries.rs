//! Path queries against enumeration.
//!
//! DISTINCT ENDS. The `var_length_bfs` optimizer pass against enumeration: on random small graphs (self-loops
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
//!
//! QUANTIFIED GROUPS. A group of one relationship returns what the variable-length pattern
//! with its condition on every hop returns, group variables included (below).
//!
//! SHORTEST PATHS. `shortestPath` / `allShortestPaths` with a WHERE on the path (per
//! relationship, per node, or on the whole path) return the shortest paths *that satisfy it*:
//! the same lengths and counts as enumerating every trail up to the bound with the same WHERE
//! and keeping the shortest.

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

/// A database in memory (with `settings`) holding what `statements` create.
fn database(settings: plexus::Settings, statements: &[&str]) -> (Database, Connection) {
    let db = Database::open_in_memory_settings(settings).expect("open");
    let mut conn = db.connect();
    for statement in statements {
        conn.execute(statement, &Params::new())
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    (db, conn)
}

/// A complete directed graph on 6 `:N {id}` nodes: thousands of trails from each node.
const COMPLETE_GRAPH: &[&str] = &[
    "UNWIND range(0, 5) AS i CREATE (:N {id: i})",
    "MATCH (a:N), (b:N) WHERE a <> b CREATE (a)-[:R]->(b)",
];

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
    let (_db, mut conn) = database(settings, COMPLETE_GRAPH);
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

/// The WHERE conjuncts a shortest-path search takes in, one of each kind (and none).
const PATH_PREDICATES: &[&str] = &[
    "true",
    "all(r IN relationships(p) WHERE r.w = 1)",
    "all(n IN nodes(p) WHERE n.id <> 1)",
    "length(p) >= 2",
    "none(r IN relationships(p) WHERE r.w = 0) AND length(p) <> 3",
];

fn check_shortest(graph: &Graph, direction: usize) {
    let (_db, mut conn) = setup(graph);
    let pattern = |shortest: &str| {
        let rel = "[:R*1..4]";
        let part = match direction {
            0 => format!("(a)-{rel}->(b)"),
            1 => format!("(a)<-{rel}-(b)"),
            _ => format!("(a)-{rel}-(b)"),
        };
        if shortest.is_empty() {
            format!("p = {part}")
        } else {
            format!("p = {shortest}({part})")
        }
    };
    for x in 0..graph.nodes {
        for y in (0..graph.nodes).filter(|y| *y != x) {
            for predicate in PATH_PREDICATES {
                let query = |pattern: String, ret: &str| {
                    format!(
                        "MATCH (a:N {{id: {x}}}), (b:N {{id: {y}}}) MATCH {pattern} WHERE {predicate} RETURN {ret}"
                    )
                };
                let lengths: Vec<i64> = rows(&mut conn, &query(pattern(""), "length(p) AS l"))
                    .iter()
                    .map(|l| l.parse().expect("an integer"))
                    .collect();
                let shortest = lengths.iter().min();
                let expected_one: Vec<String> = shortest.iter().map(|l| l.to_string()).collect();
                let one = query(pattern("shortestPath"), "length(p) AS l");
                assert_eq!(rows(&mut conn, &one), expected_one, "{one}\non {graph:?}");
                let count = lengths.iter().filter(|l| Some(*l) == shortest).count();
                let all = query(pattern("allShortestPaths"), "count(p) AS n");
                assert_eq!(
                    rows(&mut conn, &all),
                    [count.to_string()],
                    "{all}\non {graph:?}"
                );
            }
        }
    }
}

/// Issue 24's example: the direct relationship fails the WHERE, the two-hop path passes.
#[test]
fn the_shortest_path_that_satisfies_the_where() {
    let db = Database::open_in_memory(Config::default()).expect("open");
    let mut conn = db.connect();
    conn.execute(
        "CREATE (a:Q {id:1})-[:T {w:0}]->(b:Q {id:2}), (a)-[:T {w:1}]->(:Q {id:3})-[:T {w:1}]->(b)",
        &Params::new(),
    )
    .expect("create");
    let query = |selector: &str, ret: &str| {
        format!(
            "MATCH (a:Q {{id:1}}),(b:Q {{id:2}}) MATCH p={selector}((a)-[:T*..5]->(b)) \
             WHERE all(r IN relationships(p) WHERE r.w > 0) RETURN {ret}"
        )
    };
    assert_eq!(rows(&mut conn, &query("shortestPath", "length(p)")), ["2"]);
    assert_eq!(
        rows(&mut conn, &query("allShortestPaths", "count(p)")),
        ["1"]
    );
    // A later clause's WHERE filters afterwards, as in Neo4j.
    let after = "MATCH (a:Q {id:1}),(b:Q {id:2}) MATCH p=shortestPath((a)-[:T*..5]->(b)) \
                 WITH p WHERE all(r IN relationships(p) WHERE r.w > 0) RETURN count(p)";
    assert_eq!(rows(&mut conn, after), ["0"]);
}

/// A search that visits more vertices than the visited set keeps in its hash map (1,024)
/// moves to dense arrays mid-search: a star of 20,000 leaves with a second relationship to
/// one of them (a closed trail of length 2 through the centre), against enumeration.
#[test]
fn large_searches_match_enumeration() {
    let db = Database::open_in_memory(Config::default()).expect("open");
    let mut conn = db.connect();
    conn.execute(
        "CREATE (c:N {id: 0}) WITH c UNWIND range(1, 20000) AS i CREATE (c)-[:R]->(:N {id: i})",
        &Params::new(),
    )
    .expect("star");
    conn.execute(
        "MATCH (c:N {id: 0}), (l:N {id: 777}) CREATE (l)-[:R]->(c)",
        &Params::new(),
    )
    .expect("back");
    for pattern in ["-[r:R*1..2]-", "-[r:R*1..2]->", "<-[r:R*0..3]-"] {
        let bfs = format!("MATCH (a:N {{id: 0}}){pattern}(b) RETURN count(DISTINCT b) AS n");
        let enumerating = format!(
            "MATCH (a:N {{id: 0}}){pattern}(b) WHERE size(r) >= 0 RETURN count(DISTINCT b) AS n"
        );
        assert!(plan(&mut conn, &bfs).contains("(BFS)"), "{bfs}");
        assert_eq!(
            rows(&mut conn, &bfs),
            rows(&mut conn, &enumerating),
            "{bfs}"
        );
    }
    // Twice in one statement: the second search reuses the first one's arrays.
    let twice = "MATCH (a:N) WHERE a.id IN [0, 777] MATCH (a)-[:R*1..2]-(b) RETURN a.id AS a, count(DISTINCT b) AS n";
    // Each end is an end of its own: the two relationships between 0 and 777 close a trail.
    assert_eq!(rows(&mut conn, twice), ["0 | 20001", "777 | 20001"]);
}

/// PARALLEL FRONTIERS. Frontiers of ≥ 256 vertices are gathered on several threads when
/// the session has query threads (`exec::reach`): a three-level graph (a centre, 600
/// vertices one hop out, each with 8 relationships into 3,000 more, some pointing back, and
/// a relationship type the patterns skip) gives the same distinct ends with 1 and 4 threads,
/// in every direction, with a bound end, and against enumeration.
#[test]
fn parallel_frontiers_match_the_serial_search() {
    let setup = [
        "CREATE INDEX FOR (n:N) ON (n.id)",
        "UNWIND range(0, 3600) AS i CREATE (:N {id: i})",
        "MATCH (c:N {id: 0}) UNWIND range(1, 600) AS i MATCH (m:N {id: i}) CREATE (c)-[:R]->(m)",
        "UNWIND range(1, 600) AS i UNWIND range(0, 7) AS k \
         MATCH (m:N {id: i}), (l:N {id: 601 + (i * 7 + k * 375) % 3000}) CREATE (m)-[:R]->(l)",
        "UNWIND range(3500, 3600) AS i MATCH (l:N {id: i}), (m:N {id: i - 3000}) CREATE (l)-[:R]->(m)",
        "UNWIND range(3400, 3600) AS i MATCH (l:N {id: i}), (m:N {id: i - 3300}) CREATE (l)-[:S]->(m)",
    ];
    let (_db, mut conn) = database(plexus::Settings::from_config(Config::default()), &setup);
    let queries = [
        "MATCH (a:N {id: 0})-[:R*1..2]->(b) RETURN count(DISTINCT b) AS n",
        "MATCH (a:N {id: 0})-[:R*1..3]-(b) RETURN count(DISTINCT b) AS n, max(b.id) AS top",
        "MATCH (a:N {id: 0})<-[:R*0..3]-(b) RETURN count(DISTINCT b) AS n",
        "MATCH (a:N {id: 5})-[*1..3]-(b) RETURN count(DISTINCT b) AS n",
        "MATCH (a:N {id: 0}), (z:N {id: 3550}) RETURN EXISTS { (a)-[:R*1..3]-(z) } AS reached",
        "MATCH (a:N) WHERE a.id IN [0, 3] MATCH (a)-[:R*1..3]->(b) RETURN a.id, count(DISTINCT b) AS n",
    ];
    let serial = plexus::ParallelConfig::serial();
    let parallel = plexus::ParallelConfig {
        workers: 4,
        ..plexus::ParallelConfig::serial()
    };
    for query in queries {
        assert!(plan(&mut conn, query).contains("(BFS)"), "{query}");
        conn.set_parallel(serial.clone());
        let one = rows(&mut conn, query);
        conn.set_parallel(parallel.clone());
        let four = rows(&mut conn, query);
        assert_eq!(one, four, "{query}");
    }
    // Against enumeration (the relationship list read, so no BFS), with four threads.
    let bfs = "MATCH (a:N {id: 0})-[r:R*1..3]->(b) RETURN count(DISTINCT b) AS n";
    let enumerating =
        "MATCH (a:N {id: 0})-[r:R*1..3]->(b) WHERE size(r) >= 0 RETURN count(DISTINCT b) AS n";
    assert_eq!(rows(&mut conn, bfs), rows(&mut conn, enumerating));
}

/// Under SERIALIZABLE, the adjacency a gathering thread reads is in the transaction's read
/// set: a concurrent relationship from a vertex of a large frontier is a phantom, and the
/// transaction that searched and then writes cannot commit.
#[test]
fn parallel_frontier_reads_are_validated() {
    let setup =
        ["CREATE (c:N {id: 0}) WITH c UNWIND range(1, 1000) AS i CREATE (c)-[:R]->(:N {id: i})"];
    let mut settings = plexus::Settings::from_config(Config::default());
    settings
        .set(
            "default_isolation",
            "serializable",
            plexus::SettingSource::Argument,
        )
        .expect("serializable");
    let (db, mut conn) = database(settings, &setup);
    conn.set_parallel(plexus::ParallelConfig {
        workers: 2,
        ..plexus::ParallelConfig::serial()
    });
    let search = "MATCH (a:N {id: 0})-[:R*1..2]->(b) RETURN count(DISTINCT b) AS n";
    assert!(plan(&mut conn, search).contains("(BFS)"));
    conn.execute("BEGIN", &Params::new()).expect("begin");
    assert_eq!(rows(&mut conn, search), ["1000"]);
    // Vertex 999 is on the second half of the level-1 frontier: a gathering thread read it.
    let mut other = db.connect();
    other
        .execute(
            "MATCH (x:N {id: 999}), (y:N {id: 1}) CREATE (x)-[:R]->(y)",
            &Params::new(),
        )
        .expect("concurrent write");
    conn.execute("CREATE (:Marker)", &Params::new())
        .expect("write");
    let commit = conn.execute("COMMIT", &Params::new());
    assert!(commit.is_err(), "the search's reads were not validated");
}

/// QUANTIFIED GROUPS. `((x)-[r:R]->(y) WHERE …){1,3}` returns what the variable-length
/// pattern with the same condition on every hop returns (written with `all()` over the path's
/// positions), group variables included; with only distinct ends used, through the BFS.
fn check_groups(graph: &Graph, direction: usize) {
    let (_db, mut conn) = setup(graph);
    let (group, plain) = match direction {
        0 => ("((x)-[r:R]->(y) WHERE {C})", "-[r:R*1..3]->"),
        1 => ("((x)<-[r:R]-(y) WHERE {C})", "<-[r:R*1..3]-"),
        _ => ("((x)-[r:R]-(y) WHERE {C})", "-[r:R*1..3]-"),
    };
    let condition = "r.w = 1 AND y.id >= x.id - 2";
    let per_position = "all(i IN range(0, size(r) - 1) WHERE r[i].w = 1 \
                        AND nodes(p)[i + 1].id >= nodes(p)[i].id - 2)";
    let group = group.replace("{C}", condition);
    let grouped = format!(
        "MATCH (a:N){group}{{1,3}}(b) \
         RETURN a.id AS a, b.id AS b, [n IN x | n.id] AS xs, [n IN y | n.id] AS ys"
    );
    let enumerated = format!(
        "MATCH p = (a:N){plain}(b) WHERE {per_position} \
         RETURN a.id AS a, b.id AS b, [n IN nodes(p)[..-1] | n.id] AS xs, \
         [n IN nodes(p)[1..] | n.id] AS ys"
    );
    assert_eq!(
        rows(&mut conn, &grouped),
        rows(&mut conn, &enumerated),
        "{grouped}\non {graph:?}"
    );
    let ends = format!("MATCH (a:N){group}{{1,3}}(b) RETURN a.id AS a, count(DISTINCT b) AS n");
    // Undirected, the hop condition depends on the hop's orientation: enumeration (see
    // `var_length`, WHEN).
    assert_eq!(
        plan(&mut conn, &ends).contains("(BFS)"),
        direction != 2,
        "{ends}"
    );
    let ends_enumerated = format!(
        "MATCH p = (a:N){plain}(b) WHERE {per_position} RETURN a.id AS a, count(DISTINCT b) AS n"
    );
    assert_eq!(
        rows(&mut conn, &ends),
        rows(&mut conn, &ends_enumerated),
        "{ends}\non {graph:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn shortest_paths_satisfy_their_where(graph in graph(), direction in 0usize..3) {
        check_shortest(&graph, direction);
    }

    #[test]
    fn quantified_groups_match_per_hop_conditions(graph in graph(), direction in 0usize..3) {
        check_groups(&graph, direction);
    }
}

/// Enumeration resumes across output batches: from one start of a complete directed graph on
/// 6 nodes there are tens of thousands of trails of up to 7 relationships, counted here by a
/// direct depth-first search over the same relationships.
#[test]
fn enumeration_spans_many_batches() {
    let (_db, mut conn) = database(plexus::Settings::new(), COMPLETE_GRAPH);
    let edges: Vec<(usize, usize)> = (0..6)
        .flat_map(|a| (0..6).filter(move |b| *b != a).map(move |b| (a, b)))
        .collect();
    fn trails(edges: &[(usize, usize)], at: usize, used: &mut Vec<bool>, depth: usize) -> u64 {
        if depth == 0 {
            return 0;
        }
        let mut count = 0;
        for (i, &(a, b)) in edges.iter().enumerate() {
            if a == at && !used[i] {
                used[i] = true;
                count += 1 + trails(edges, b, used, depth - 1);
                used[i] = false;
            }
        }
        count
    }
    let expected = trails(&edges, 0, &mut vec![false; edges.len()], 7);
    assert!(expected > 10_000, "{expected}");
    let query = "MATCH (a:N {id: 0})-[r:R*1..7]->(b) RETURN count(*) AS n, count(DISTINCT r) AS d";
    assert_eq!(rows(&mut conn, query), [format!("{expected} | {expected}")]);
}
