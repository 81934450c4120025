//! Analytics as Cypher procedures (`CALL algo.*`), composed with the rest of a query.

mod common;

use common::memory_db;
use plexus::{Connection, Params};

fn rows(conn: &mut Connection, query: &str) -> Vec<Vec<String>> {
    let result = conn
        .execute(query, &Params::new())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    result
        .rows
        .iter()
        .map(|row| row.iter().map(|v| result.render(v)).collect())
        .collect()
}

fn setup(conn: &mut Connection) {
    rows(
        conn,
        "CREATE (a:P {name: 'a'})-[:L]->(b:P {name: 'b'})-[:L]->(c:P {name: 'c'})-[:L]->(a), \
         (b)-[:L]->(a), (x:P {name: 'x'})-[:L]->(y:P {name: 'y'})",
    );
}

#[test]
fn pagerank_yields_rows_that_compose_with_order_by_limit_and_match() {
    let db = memory_db();
    let mut conn = db.connect();
    setup(&mut conn);
    let top = rows(
        &mut conn,
        "CALL algo.pagerank({edgeTypes: ['L'], iterations: 20, damping: 0.85}) YIELD node, score \
         MATCH (node)-[:L]->(next) RETURN node.name, next.name ORDER BY score DESC, next.name LIMIT 1",
    );
    assert_eq!(top, vec![vec!["'a'".to_string(), "'b'".to_string()]]);
    let total = rows(
        &mut conn,
        "CALL algo.pagerank({}) YIELD score RETURN round(sum(score) * 1000) AS s",
    );
    assert_eq!(total, vec![vec!["1000.0".to_string()]], "ranks sum to one");
}

#[test]
fn wcc_bfs_and_write_back() {
    let db = memory_db();
    let mut conn = db.connect();
    setup(&mut conn);
    let components = rows(
        &mut conn,
        "CALL algo.wcc({vertexLabels: ['P']}) YIELD component RETURN count(DISTINCT component)",
    );
    assert_eq!(components, vec![vec!["2".to_string()]]);
    let depths = rows(
        &mut conn,
        "MATCH (s:P {name: 'a'}) CALL algo.bfs({source: s, direction: 'out'}) YIELD node, depth \
         RETURN node.name, depth ORDER BY depth, node.name",
    );
    assert_eq!(
        depths,
        [["'a'", "0"], ["'b'", "1"], ["'c'", "2"]]
            .map(|r| r.map(String::from).to_vec())
            .to_vec()
    );
    rows(
        &mut conn,
        "CALL algo.pagerank({writeProperty: 'rank'}) YIELD node RETURN count(node)",
    );
    let written = rows(&mut conn, "MATCH (n:P) WHERE n.rank > 0 RETURN count(n)");
    assert_eq!(
        written,
        vec![vec!["5".to_string()]],
        "written in the calling (auto-commit) transaction"
    );
}

#[test]
fn bad_options_are_argument_errors() {
    let db = memory_db();
    let mut conn = db.connect();
    setup(&mut conn);
    for (query, expected) in [
        (
            "CALL algo.pagerank({colour: 'red'}) YIELD node RETURN node",
            "unknown algo option 'colour'",
        ),
        (
            "CALL algo.pagerank({iterations: 'many'}) YIELD node RETURN node",
            "'iterations' must be",
        ),
        (
            "CALL algo.bfs({}) YIELD node RETURN node",
            "needs a 'source' node",
        ),
        (
            "CALL algo.wcc({vertexLabels: ['Nope']}) YIELD node RETURN node",
            "Nope",
        ),
    ] {
        let err = conn
            .execute(query, &Params::new())
            .err()
            .unwrap_or_else(|| panic!("{query} must fail"));
        assert!(err.to_string().contains(expected), "{query}: {err}");
    }
}

#[test]
fn sssp_khop_degree_and_triangles() {
    let db = memory_db();
    let mut conn = db.connect();
    rows(
        &mut conn,
        "CREATE (a:P {name: 'a'})-[:R {w: 1.5}]->(b:P {name: 'b'})-[:R {w: 2.0}]->(c:P {name: 'c'}), \
         (a)-[:R {w: 5.0}]->(c), (c)-[:R {w: 1.0}]->(d:P {name: 'd'})",
    );
    let distances = rows(
        &mut conn,
        "MATCH (s {name: 'a'}) CALL algo.sssp({source: s, weightProperty: 'w'}) YIELD node, distance \
         RETURN node.name, distance ORDER BY distance",
    );
    let expected = [
        ["'a'", "0.0"],
        ["'b'", "1.5"],
        ["'c'", "3.5"],
        ["'d'", "4.5"],
    ];
    assert_eq!(
        distances,
        expected.map(|r| r.map(String::from).to_vec()).to_vec()
    );
    let one_hop = rows(
        &mut conn,
        "CALL algo.khop({k: 1}) YIELD node, reachable RETURN node.name, reachable ORDER BY node.name",
    );
    assert_eq!(one_hop[0], vec!["'a'".to_string(), "2".to_string()]);
    let degrees = rows(
        &mut conn,
        "CALL algo.degree({direction: 'in'}) YIELD node, degree RETURN node.name, degree ORDER BY node.name",
    );
    assert_eq!(
        degrees.iter().map(|r| r[1].clone()).collect::<Vec<_>>(),
        ["0", "1", "2", "1"]
    );
    assert_eq!(
        rows(
            &mut conn,
            "CALL algo.triangles({}) YIELD count RETURN count"
        ),
        vec![vec!["1".to_string()]]
    );
}

/// `algo.shortestPath`: the cheapest path, not the one with fewest hops; its cost; no row
/// when unreachable; bad weights refused by name.
#[test]
fn weighted_shortest_path_inside_a_query() {
    let db = memory_db();
    let mut conn = db.connect();
    rows(
        &mut conn,
        "CREATE (a:W {id: 1})-[:R {w: 10}]->(b:W {id: 2}), \
         (a)-[:R {w: 1}]->(c:W {id: 3})-[:R {w: 2.5}]->(b), (:W {id: 4})",
    );
    let query = |target: i64, options: &str| {
        format!(
            "MATCH (a:W {{id: 1}}), (b:W {{id: {target}}}) \
             CALL algo.shortestPath({{source: a, target: b{options}}}) YIELD path, cost \
             RETURN [n IN nodes(path) | n.id] AS ids, cost"
        )
    };
    assert_eq!(
        rows(&mut conn, &query(2, ", weightProperty: 'w'")),
        [["[1, 3, 2]", "3.5"]]
    );
    // Without weights every relationship weighs 1: the direct one.
    assert_eq!(rows(&mut conn, &query(2, "")), [["[1, 2]", "1.0"]]);
    // Against the direction: nothing reaches 2's ancestors from 1 but itself.
    assert!(rows(&mut conn, &query(2, ", direction: 'in'")).is_empty());
    assert!(rows(&mut conn, &query(4, ", weightProperty: 'w'")).is_empty());
    rows(&mut conn, "MATCH (:W {id: 3})-[r]->() SET r.w = -1");
    let error = conn
        .execute(&query(2, ", weightProperty: 'w'"), &Params::new())
        .expect_err("negative weight");
    assert!(error.message.contains("non-negative"), "{}", error.message);
    let error = conn
        .execute(&query(2, ", weightProperty: 'missing'"), &Params::new())
        .expect_err("missing weight");
    assert!(error.message.contains("'missing'"), "{}", error.message);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// On random weighted graphs, algo.shortestPath's cost is algo.sssp's distance.
    #[test]
    fn weighted_shortest_path_costs_match_sssp(
        rels in proptest::collection::vec((0i64..6, 0i64..6, 0i64..20), 0..16),
    ) {
        let db = memory_db();
        let mut conn = db.connect();
        rows(&mut conn, "UNWIND range(0, 5) AS i CREATE (:G {id: i})");
        for (a, b, w) in &rels {
            rows(&mut conn, &format!(
                "MATCH (a:G {{id: {a}}}), (b:G {{id: {b}}}) CREATE (a)-[:R {{w: {w}}}]->(b)"
            ));
        }
        let sssp = rows(&mut conn,
            "MATCH (s:G {id: 0}) CALL algo.sssp({source: s, weightProperty: 'w'}) \
             YIELD node, distance RETURN node.id AS id, distance ORDER BY id");
        for row in &sssp {
            let costs = rows(&mut conn, &format!(
                "MATCH (s:G {{id: 0}}), (t:G {{id: {}}}) \
                 CALL algo.shortestPath({{source: s, target: t, weightProperty: 'w'}}) \
                 YIELD path, cost RETURN cost, length(path) >= 0", row[0]));
            proptest::prop_assert_eq!(costs.len(), 1);
            proptest::prop_assert_eq!(&costs[0][0], &row[1]);
        }
        let reached = sssp.len();
        let reachable = rows(&mut conn,
            "MATCH (s:G {id: 0}), (t:G) CALL algo.shortestPath({source: s, target: t}) \
             YIELD cost RETURN count(*) AS n");
        proptest::prop_assert_eq!(&reachable[0][0], &reached.to_string());
    }
}
