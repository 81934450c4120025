//! The `jit` setting end to end: `SET SESSION jit`, filters answering the same rows and
//! raising the same errors in every mode, and PROFILE saying how each filter ran.

use plexus::{Connection, CypherValue, Database, Params};

/// Rows enough for several batches (a batch holds about 2 K rows).
const ROWS: i64 = 5_000;

fn database() -> Database {
    let db = Database::open_in_memory(plexus::Config::default()).expect("open");
    let mut conn = db.connect();
    conn.execute(
        &format!(
            "UNWIND range(1, {ROWS}) AS i CREATE (:P {{x: i, y: i % 13, w: toFloat(i) / 7.0, \
             b: i % 2 = 0, big: CASE WHEN i = {ROWS} THEN 9223372036854775807 ELSE i END}})"
        ),
        &Params::new(),
    )
    .expect("load");
    db
}

fn set(conn: &mut Connection, mode: &str) {
    conn.execute(&format!("SET SESSION jit = {mode}"), &Params::new())
        .expect("set jit");
}

fn count(conn: &mut Connection, query: &str, params: &Params) -> Result<i64, String> {
    let result = conn.execute(query, params).map_err(|e| e.to_string())?;
    match result.rows.first().and_then(|row| row.first()) {
        Some(CypherValue::Int(n)) => Ok(*n),
        other => panic!("not a count: {other:?}"),
    }
}

/// The Filter line of `query`'s PROFILE.
fn profiled_filter(conn: &mut Connection, query: &str, params: &Params) -> String {
    let result = conn
        .execute(&format!("PROFILE {query}"), params)
        .expect("profile");
    let plan = result.plan.expect("a PROFILE plan");
    plan.lines()
        .find(|l| l.contains("Filter"))
        .unwrap_or_else(|| panic!("no Filter in\n{plan}"))
        .trim()
        .to_string()
}

#[test]
fn every_mode_answers_alike_and_profile_says_how_filters_ran() {
    let db = database();
    let mut conn = db.connect();
    let mut params = Params::new();
    params.insert("c".into(), CypherValue::Int(100));
    let queries = [
        "MATCH (p:P) WHERE p.x > $c AND p.y % 7 = 1 RETURN count(*)",
        "MATCH (p:P) WHERE (p.x * 3 - p.y > 40 OR p.w < 2.5) AND NOT p.b RETURN count(*)",
        "MATCH (p:P) WHERE p.y IN [1, 2.0, 3.5, null] OR p.w / 0 > 1.0 RETURN count(*)",
        "MATCH (p:P) WHERE p.x / 0 = 1 RETURN count(*)",
        "MATCH (p:P) WHERE p.big + 1 > 0 RETURN count(*)",
        "MATCH (p:P) WHERE p.y > 3 XOR p.b RETURN count(*)",
        "MATCH (p:P) WHERE -p.x < -$c AND p.w > p.y RETURN count(*)",
        "MATCH (p:P) WHERE abs(p.y) > 3 RETURN count(*)",
        "MATCH (p:P) WHERE p.x > $c AND p.w > 1.0 \
         RETURN p.y % 5 AS g, count(*), sum(p.x), min(p.w), max(p.w), avg(p.x) ORDER BY g",
        "MATCH (p:P) WITH p.x * 3 - p.y AS a, p.w / 2.0 AS b, p.x > p.y AS c \
         RETURN count(*), sum(a), max(b), count(c), min(a + p.big)",
    ];
    for query in queries {
        set(&mut conn, "off");
        let expected = count(&mut conn, query, &params);
        for mode in ["on", "adaptive"] {
            set(&mut conn, mode);
            // Adaptive twice: the second run finds the code compiled by the first.
            for _ in 0..2 {
                let actual = count(&mut conn, query, &params);
                assert_eq!(actual, expected, "{query} under jit = {mode}");
            }
        }
    }

    set(&mut conn, "on");
    // The planner splits the conjunction into two filters; both compile as one loop, and
    // each keeps its own PROFILE line with the rows it passes, as interpreted.
    let filters = |conn: &mut Connection, query: &str| {
        let result = conn.execute(&format!("PROFILE {query}"), &params);
        let plan = result.expect("profile").plan.expect("a PROFILE plan");
        (plan.lines())
            .filter(|l| l.contains("Filter"))
            .map(|l| l.trim().to_string())
            .collect::<Vec<_>>()
    };
    let rows = |line: &String| {
        line.split("rows=")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .map(str::to_string)
    };
    let fused = filters(&mut conn, queries[0]);
    assert_eq!(fused.len(), 2, "{fused:?}");
    for line in &fused {
        // The count(*) above runs in the filters' loop (a compiled pipeline).
        assert!(
            line.contains("jit=compiled fused=2 +aggregate compile="),
            "{line}"
        );
    }
    set(&mut conn, "off");
    let stacked = filters(&mut conn, queries[0]);
    assert_eq!(
        fused.iter().map(rows).collect::<Vec<_>>(),
        stacked.iter().map(rows).collect::<Vec<_>>(),
        "{fused:?} vs {stacked:?}"
    );
    set(&mut conn, "on");
    // XOR, unary minus and an integer compared with a float compile too.
    for query in &queries[5..7] {
        let line = profiled_filter(&mut conn, query, &params);
        assert!(line.contains("jit=compiled"), "{line}");
    }
    let line = profiled_filter(&mut conn, queries[7], &params);
    assert!(line.contains("jit=no (function abs())"), "{line}");
    set(&mut conn, "off");
    let line = profiled_filter(&mut conn, queries[0], &params);
    assert!(line.contains("jit=interpreted"), "{line}");

    // Adaptive interprets a filter's first 4,096 rows without asking for code, then takes
    // the cached code (compiled above under `on`): the scan's third batch runs compiled —
    // in the fused chain of both filters, which sees every row.
    set(&mut conn, "adaptive");
    for line in filters(&mut conn, queries[0]) {
        assert!(
            line.contains("jit=mixed(1 compiled/2 interpreted) fused=2"),
            "{line}"
        );
    }
    // A filter that sees fewer rows never asks, though `on` compiles it and the code is in
    // the cache.
    conn.execute(
        "UNWIND range(1, 300) AS i CREATE (:S {x: i})",
        &Params::new(),
    )
    .expect("create");
    let small = "MATCH (s:S) WHERE s.x % 7 = 1 RETURN count(*)";
    set(&mut conn, "on");
    let compiled = profiled_filter(&mut conn, small, &params);
    assert!(compiled.contains("jit=compiled"), "{compiled}");
    set(&mut conn, "adaptive");
    let line = profiled_filter(&mut conn, small, &params);
    assert!(line.contains("jit=interpreted"), "{line}");
}

#[test]
fn the_setting_is_per_session_and_checked() {
    let db = database();
    let mut conn = db.connect();
    let other = db.connect();
    set(&mut conn, "ON");
    let value = |c: &Connection| {
        let row = c
            .settings()
            .into_iter()
            .find(|r| r.name == "jit")
            .expect("jit row");
        (row.value, row.source)
    };
    assert_eq!(value(&conn), ("on".to_string(), "session".to_string()));
    assert_eq!(
        value(&other),
        ("adaptive".to_string(), "default".to_string())
    );
    let e = conn
        .execute("SET SESSION jit = sometimes", &Params::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("jit") && e.contains("off, on or adaptive"),
        "{e}"
    );
}

#[test]
fn a_fused_chain_in_parallel_workers_counts_rows_per_filter_as_the_interpreter() {
    let db = Database::open_in_memory(plexus::Config::default()).expect("open");
    let mut conn = db.connect();
    conn.execute(
        "UNWIND range(1, 60000) AS i CREATE (:W {x: i % 1000, y: i % 7})",
        &Params::new(),
    )
    .expect("load");
    let query = "MATCH (w:W) WHERE w.x > 100 AND w.y <> 3 AND w.x % 3 = 1 RETURN count(*)";
    let lines = |conn: &mut Connection, mode: &str| {
        set(conn, mode);
        let result = conn.execute(&format!("PROFILE {query}"), &Params::new());
        let plan = result.expect("profile").plan.expect("a PROFILE plan");
        assert!(plan.contains("Parallel"), "{plan}");
        (plan.lines())
            .filter(|l| l.contains("Filter"))
            .map(|l| {
                let rows = l.split("rows=").nth(1).and_then(|r| r.split(',').next());
                (rows.map(str::to_string), l.contains("fused=3"))
            })
            .collect::<Vec<_>>()
    };
    let interpreted = lines(&mut conn, "off");
    let compiled = lines(&mut conn, "on");
    assert_eq!(interpreted.len(), 3, "{interpreted:?}");
    assert!(compiled.iter().all(|(_, fused)| *fused), "{compiled:?}");
    let rows = |v: &[(Option<String>, bool)]| v.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>();
    assert_eq!(rows(&compiled), rows(&interpreted));
}
