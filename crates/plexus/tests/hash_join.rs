//! The hash join's key filter (`plexus-exec` exec/join.rs, THE KEY FILTER): the WHERE
//! equality a hash join was planned on stays a Filter right above it; the join's stage takes
//! it in, skips it over an integer table (every pair it gives is equal) and runs it
//! otherwise. Same rows either way; PROFILE keeps both lines with their rows.

use plexus::{Connection, CypherValue, Database, Params};

fn database() -> (Database, Connection) {
    let db = Database::open_in_memory(plexus::Config::default()).expect("open");
    let mut conn = db.connect();
    for statement in [
        "UNWIND range(1, 6000) AS i CREATE (:A {k: i % 500, s: 'k' + toString(i % 500), \
         f: toFloat(i % 500)})",
        "UNWIND range(0, 499) AS j CREATE (:B {k: j, s: 'k' + toString(j), g: j % 10})",
        "UNWIND range(0, 1499) AS j CREATE (:T {s: 'k' + toString(j % 500)})",
    ] {
        conn.execute(statement, &Params::new()).expect("load");
    }
    (db, conn)
}

fn count(conn: &mut Connection, query: &str) -> i64 {
    let result = conn.execute(query, &Params::new()).expect("query");
    match result.rows.first().and_then(|row| row.first()) {
        Some(CypherValue::Int(n)) => *n,
        other => panic!("not a count: {other:?}"),
    }
}

/// The rows PROFILE gives the HashJoin and the Filter right above it, and the Filter's line.
fn profiled(conn: &mut Connection, query: &str) -> (u64, u64, String) {
    let result = conn.execute(&format!("PROFILE {query}"), &Params::new());
    let plan = result.expect("profile").plan.expect("a PROFILE plan");
    let rows = |line: &str| -> u64 {
        let text = line
            .split("[rows=")
            .nth(1)
            .and_then(|r| r.split(',').next());
        text.and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("no rows in {line}"))
    };
    let lines: Vec<&str> = plan.lines().collect();
    let join = (lines.iter())
        .position(|l| l.contains("HashJoin"))
        .expect(&plan);
    let filter = lines[join - 1];
    assert!(filter.contains("Filter"), "{plan}");
    (rows(lines[join]), rows(filter), filter.trim().to_string())
}

#[test]
fn the_key_filter_is_skipped_over_integer_keys_and_run_over_others() {
    let (_db, mut conn) = database();
    // Integer keys: the filter never runs; its line has the join's rows and no JIT note.
    let ints = "MATCH (a:A), (b:B) WHERE a.k = b.k RETURN count(*)";
    assert_eq!(count(&mut conn, ints), 6000);
    let (joined, kept, line) = profiled(&mut conn, ints);
    assert_eq!((joined, kept), (6000, 6000), "{line}");
    assert!(!line.contains("jit="), "{line}");
    // A float probe key finds its integer's group (`1.0 = 1` is true): skipped too.
    let floats = "MATCH (a:A), (b:B) WHERE a.f = b.k RETURN count(*)";
    assert_eq!(count(&mut conn, floats), 6000);
    // String keys: a general table; the filter runs on every joined row (more than one
    // output batch's worth per input batch, which the stage gathers before handing on).
    let strings = "MATCH (a:A), (b:B) WHERE a.s = b.s RETURN count(*)";
    assert_eq!(count(&mut conn, strings), 6000);
    let (joined, kept, line) = profiled(&mut conn, strings);
    assert_eq!((joined, kept), (6000, 6000), "{line}");
    assert!(line.contains("jit="), "the filter ran: {line}");
    // Three partners per row: each input batch gives several full output batches, the
    // filter running on each.
    let triples = "MATCH (a:A), (t:T) WHERE a.s = t.s RETURN count(*)";
    assert_eq!(count(&mut conn, triples), 18000);
    let (joined, kept, line) = profiled(&mut conn, triples);
    assert_eq!((joined, kept), (18000, 18000), "{line}");
    // Rows, not only counts: grouped sums agree across the three keys.
    let sums = |conn: &mut Connection, on: &str| {
        let query = format!(
            "MATCH (a:A), (b:B) WHERE {on} RETURN b.g AS g, count(*) AS n, sum(a.k) AS s \
             ORDER BY g"
        );
        format!(
            "{:?}",
            conn.execute(&query, &Params::new()).expect("sums").rows
        )
    };
    let by_int = sums(&mut conn, "a.k = b.k");
    assert_eq!(by_int.matches("Int(").count(), 30, "{by_int}");
    assert_eq!(by_int, sums(&mut conn, "a.s = b.s"));
    assert_eq!(by_int, sums(&mut conn, "a.f = b.k"));
}
