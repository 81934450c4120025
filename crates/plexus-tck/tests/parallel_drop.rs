//! A parallel pipeline stops and joins its worker threads when its consumer is done early: a
//! LIMIT that is satisfied, or a stream dropped half way. (Its own test binary: it counts the
//! worker threads of the whole process, which other tests running alongside would disturb.)

use plexus::testing::live_parallel_workers;
use plexus::{Config, Database, ParallelConfig, Params};
use std::time::{Duration, Instant};

/// Generous: joining must not wait for the scan's 2,000 morsels to be processed.
const PROMPT_MS: u128 = 10_000;

#[test]
fn an_early_finished_or_dropped_stream_joins_its_workers_promptly() {
    let db = Database::open_in_memory(Config::default()).expect("open");
    let mut conn = db.connect();
    conn.execute(
        "UNWIND range(1, 4000) AS i CREATE (:P {i: i})",
        &Params::new(),
    )
    .expect("nodes");
    conn.execute(
        "MATCH (a:P), (b:P) WHERE b.i = a.i % 4000 + 1 CREATE (a)-[:R]->(b)",
        &Params::new(),
    )
    .expect("relationships");
    conn.set_parallel(ParallelConfig {
        workers: 2,
        min_scan_rows: 0.0,
        morsel_vertices: 2,
    });
    let explain = conn
        .execute("EXPLAIN MATCH (a:P)-[:R]->(b) RETURN b.i", &Params::new())
        .expect("explain");
    assert!(explain.plan.expect("plan").contains("Parallel workers=2"));

    // LIMIT 1: the statement finishes after the first row, workers still holding morsels.
    let start = Instant::now();
    let mut stream = conn
        .run("MATCH (a:P)-[:R]->(b) RETURN b.i LIMIT 1", &Params::new())
        .expect("run");
    let mut rows = Vec::new();
    while let Some(chunk) = conn.pull(&mut stream).expect("pull") {
        rows.extend(chunk.rows);
    }
    assert_eq!(rows.len(), 1);
    drop(stream);
    assert_eq!(
        live_parallel_workers(),
        0,
        "workers outlived a LIMIT 1 statement"
    );
    assert!(start.elapsed().as_millis() < PROMPT_MS);

    // A stream dropped after its first batch, with the workers waiting on the morsel window.
    let start = Instant::now();
    let mut stream = conn
        .run("MATCH (a:P)-[:R]->(b) RETURN b.i", &Params::new())
        .expect("run");
    let first = conn
        .pull(&mut stream)
        .expect("pull")
        .expect("a first batch");
    assert!(!first.rows.is_empty());
    assert!(
        live_parallel_workers() > 0,
        "the statement should be running in workers"
    );
    drop(stream);
    assert_eq!(
        live_parallel_workers(),
        0,
        "workers outlived a dropped stream"
    );
    assert!(start.elapsed().as_millis() < PROMPT_MS);

    // An error in a late morsel ends the statement and its workers too.
    let failed = conn.execute(
        "MATCH (a:P)-[:R]->(b) WHERE CASE WHEN a.i > 3990 THEN a.i ELSE true END RETURN count(*)",
        &Params::new(),
    );
    let error = failed.expect_err("a type error");
    assert_eq!(error.class.name(), "TypeError", "{error}");
    std::thread::sleep(Duration::from_millis(0));
    assert_eq!(
        live_parallel_workers(),
        0,
        "workers outlived a failed statement"
    );
}
