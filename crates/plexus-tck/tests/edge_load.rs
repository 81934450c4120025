//! Loading relationships between existing nodes, the way users do: one UNWIND row per
//! relationship, both ends matched by a property computed from the row.
//!
//! ```text
//! UNWIND range(1, $n) AS i
//! MATCH (a:P {x: i}), (b:P {x: (i * 7919) % $n + 1})
//! CREATE (a)-[:R]->(b)
//! ```
//!
//! Before seeks took computed operands, `b` was a label scan and filter under every row: $n²
//! filter evaluations, which never finished for a million rows. Now `a` is found per row
//! through the index on `x`, and `b` too or its part is hashed once (the cost model picks),
//! so the load is linear. These tests
//! load `NODES` nodes and as many relationships in a debug build and check the counts; they
//! assert nothing about time, but would not finish with the quadratic plan.

use plexus::{Config, CypherValue, Database, Params};

/// Nodes, and relationships, loaded.
const NODES: i64 = 20_000;

const LOAD_EDGES: &str = "UNWIND range(1, $n) AS i \
    MATCH (a:P {x: i}), (b:P {x: (i * 7919) % $n + 1}) CREATE (a)-[:R]->(b)";

/// Relationships whose far end is not the one the load computed for its near end.
const WRONG_EDGES: &str =
    "MATCH (a:P)-[:R]->(b:P) WHERE b.x <> (a.x * 7919) % $n + 1 RETURN count(*)";

fn params() -> Params {
    let mut params = Params::new();
    params.insert("n".into(), CypherValue::Int(NODES));
    params
}

/// A database with `NODES` `:P` nodes, x = 1..=NODES, indexed on x when `index`.
fn nodes(index: bool) -> Database {
    let db = Database::open_in_memory(Config::default()).expect("open");
    let mut conn = db.connect();
    conn.execute("UNWIND range(1, $n) AS i CREATE (:P {x: i})", &params())
        .expect("create nodes");
    if index {
        conn.execute("CREATE INDEX p_x FOR (n:P) ON (n.x)", &Params::new())
            .expect("create index");
    }
    db
}

/// The single integer `query` returns.
fn count(conn: &mut plexus::Connection, query: &str) -> i64 {
    let result = conn.execute(query, &params()).expect(query);
    match result.rows.as_slice() {
        [row] => match row.as_slice() {
            [CypherValue::Int(n)] => *n,
            other => panic!("{query}: expected one integer, got {other:?}"),
        },
        rows => panic!("{query}: expected one row, got {}", rows.len()),
    }
}

fn plan(conn: &mut plexus::Connection, query: &str) -> String {
    let result = conn.execute(&format!("EXPLAIN {query}"), &params());
    result.expect("explain").plan.expect("a plan")
}

/// Loads the relationships with `load` and checks there is one per node, each to the node
/// the load computed for it.
fn load_and_check(db: &Database, load: &str) {
    let mut conn = db.connect();
    conn.execute(load, &params()).expect("load");
    assert_eq!(
        count(&mut conn, "MATCH ()-[r:R]->() RETURN count(r)"),
        NODES
    );
    let sources = "MATCH (a:P)-[:R]->() RETURN count(DISTINCT a)";
    assert_eq!(count(&mut conn, sources), NODES);
    assert_eq!(count(&mut conn, WRONG_EDGES), 0);
}

#[test]
fn an_indexed_edge_load_seeks_per_row() {
    let db = nodes(true);
    let mut conn = db.connect();
    let plan = plan(&mut conn, LOAD_EDGES);
    assert!(
        plan.contains("NodeIndexSeek s1:P(x = s0)"),
        "the first end is sought:\n{plan}"
    );
    // The cost model's guesses (an index equality keeps a tenth of the label) make hashing
    // the far end's part once cheaper than seeking it per row; both are linear.
    let far_end_sought = plan.contains("NodeIndexSeek s2:P(x = (((s0 * 7919) % $n) + 1))");
    assert!(
        far_end_sought || plan.contains("HashJoin (((s0 * 7919) % $n) + 1) = s2.x"),
        "the far end is sought or hashed, not scanned per row:\n{plan}"
    );
    load_and_check(&db, LOAD_EDGES);
}

#[test]
fn an_edge_load_without_an_index_hashes_the_far_end() {
    // Without an index the near ends come from one scan (the UNWIND's rows are not
    // estimated, so the UNWIND form would scan them per row); the far end's property map
    // reads `a`, so its part is hashed once and probed per near end.
    let load = "MATCH (a:P) MATCH (b:P {x: (a.x * 7919) % $n + 1}) CREATE (a)-[:R]->(b)";
    let db = nodes(false);
    let mut conn = db.connect();
    let plan = plan(&mut conn, load);
    assert!(plan.contains("HashJoin"), "the far end is hashed:\n{plan}");
    load_and_check(&db, load);
}
