//! The order of a MATCH's parts (`plexus_plan::optimizer::join_order`, PART ORDER) changes no
//! rows. On random graphs — `:A`, `:B` and `:C` nodes of random counts with a property `k`,
//! random `:T` relationships — each query runs as one MATCH of several parts, which the
//! `join_ordering` pass may plan in another order than written, and as the same parts in
//! separate MATCH clauses, which it cannot reorder (relationship uniqueness across the parts
//! written out as `r1 <> r2`). The two must return the same rows. The sizes vary enough that
//! many cases are planned starting at a later part; the test counts them (and the cases
//! with rows) and fails if there were none, so it cannot pass without exercising a
//! reordered plan.

use plexus::{Config, Connection, Database, Params};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use std::sync::atomic::{AtomicUsize, Ordering};

/// (one MATCH, the same parts clause by clause, the slots of nodes only a later part names):
/// the queries compared. Each returns the ids of every node and relationship it binds.
const QUERIES: [(&str, &str, &[usize]); 5] = [
    (
        "MATCH (a:A), (b:B)-[r:T]->(a) WHERE b.k = 1 RETURN a.i, b.i, r.i",
        "MATCH (a:A) MATCH (b:B)-[r:T]->(a) WHERE b.k = 1 RETURN a.i, b.i, r.i",
        &[1],
    ),
    (
        "MATCH (a:A)-[r1:T]->(b), (b)-[r2:T]->(c:C {k: 0}) RETURN a.i, b.i, c.i, r1.i, r2.i",
        "MATCH (a:A)-[r1:T]->(b) MATCH (b)-[r2:T]->(c:C {k: 0}) WHERE r1 <> r2 \
         RETURN a.i, b.i, c.i, r1.i, r2.i",
        &[4],
    ),
    (
        "MATCH (a:A), (b:B), (c:C)-[r:T]->(b) WHERE a.k = c.k AND c.k = 2 \
         RETURN a.i, b.i, c.i, r.i",
        "MATCH (a:A) MATCH (b:B) MATCH (c:C)-[r:T]->(b) WHERE a.k = c.k AND c.k = 2 \
         RETURN a.i, b.i, c.i, r.i",
        &[1, 2],
    ),
    (
        "MATCH (a:A), (c:C {k: a.k}) RETURN a.i, c.i",
        "MATCH (a:A) MATCH (c:C {k: a.k}) RETURN a.i, c.i",
        &[],
    ),
    (
        "MATCH (x)-[r1:T]->(y:A), (z:B {k: 3})-[r2:T]->(x) RETURN x.i, y.i, z.i, r1.i, r2.i",
        "MATCH (x)-[r1:T]->(y:A) MATCH (z:B {k: 3})-[r2:T]->(x) WHERE r1 <> r2 \
         RETURN x.i, y.i, z.i, r1.i, r2.i",
        &[3],
    ),
];

/// A graph: per label the `k` of each node (`i` numbers every node), and relationships as
/// (from, to) indexes into all nodes in creation order.
/// The `k` of each `:A`, `:B` and `:C` node, and the relationships (see [`graph`]).
type Graph = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<(usize, usize)>);

fn graph() -> impl Strategy<Value = Graph> {
    let keys = |max| proptest::collection::vec(0u8..4, 1..max);
    (keys(40), keys(6), keys(12)).prop_flat_map(|(a, b, c)| {
        let nodes = a.len() + b.len() + c.len();
        let edges = proptest::collection::vec((0..nodes, 0..nodes), 40..200);
        (Just(a), Just(b), Just(c), edges)
    })
}

fn create(conn: &mut Connection, (a, b, c, edges): &Graph) {
    let mut i = 0;
    for (label, keys) in [("A", a), ("B", b), ("C", c)] {
        for k in keys {
            let query = format!("CREATE (:{label} {{i: {i}, k: {k}}})");
            conn.execute(&query, &Params::new()).expect(&query);
            i += 1;
        }
    }
    for (n, (from, to)) in edges.iter().enumerate() {
        let query =
            format!("MATCH (x {{i: {from}}}), (y {{i: {to}}}) CREATE (x)-[:T {{i: {n}}}]->(y)");
        conn.execute(&query, &Params::new()).expect(&query);
    }
}

/// `query`'s rows, rendered and sorted.
fn rows(conn: &mut Connection, query: &str) -> Result<Vec<String>, String> {
    let result = conn
        .execute(query, &Params::new())
        .map_err(|e| e.to_string())?;
    let mut rows = result.rendered_rows();
    rows.sort();
    Ok(rows)
}

/// Whether the plan of `query` starts — its first scan or seek, the last printed — at a node
/// in one of the slots `later` (nodes only a later part names).
fn starts_at(conn: &mut Connection, query: &str, later: &[usize]) -> bool {
    let result = conn.execute(&format!("EXPLAIN {query}"), &Params::new());
    let plan = result.expect("explain").plan.expect("a plan");
    let first_scan = plan
        .lines()
        .rev()
        .find(|l| l.contains("Scan") || l.contains("Seek"));
    first_scan.is_some_and(|line| {
        line.split_whitespace().any(|word| {
            let slot = word
                .strip_prefix('s')
                .map(|w| w.split(':').next().unwrap_or(w));
            slot.and_then(|s| s.parse::<usize>().ok())
                .is_some_and(|s| later.contains(&s))
        })
    })
}

#[test]
fn reordered_parts_return_the_rows_of_the_parts_in_pattern_order() {
    let mut runner = TestRunner::new(ProptestConfig::with_cases(40));
    let reordered = AtomicUsize::new(0);
    let with_rows = AtomicUsize::new(0);
    let result = runner.run(&graph(), |graph| {
        let db = Database::open_in_memory(Config::default()).expect("open");
        let mut conn = db.connect();
        create(&mut conn, &graph);
        for (one_match, clauses, later) in QUERIES {
            if starts_at(&mut conn, one_match, later) {
                reordered.fetch_add(1, Ordering::Relaxed);
            }
            let expected = rows(&mut conn, clauses);
            if expected.as_ref().is_ok_and(|rows| !rows.is_empty()) {
                with_rows.fetch_add(1, Ordering::Relaxed);
            }
            prop_assert_eq!(rows(&mut conn, one_match), expected, "{}", one_match);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        reordered.load(Ordering::Relaxed) > 0,
        "no generated case reordered a MATCH's parts: the test no longer exercises PART ORDER"
    );
    assert!(
        with_rows.load(Ordering::Relaxed) > 0,
        "no generated case matched anything"
    );
}
