//! A partial top-k skips the storage chunks whose range of the first sort key (their zone)
//! is strictly behind the workers' shared bar (`exec::parallel`, SKIPPED CHUNKS). It must
//! return the serial plan's rows, in order, ties included: on node tables of 4,000 to 12,000
//! rows (two to six chunks) whose FLOAT and INT keys are laid out descending, ascending,
//! hashed or as plateaus (equal keys across chunk edges: a chunk whose largest value equals
//! the bar is read), with nulls, deleted rows and values updated after the load, each query
//! runs on a serial connection and on one with two workers and small morsels. And it must
//! skip: where the keys descend with the rows, `ORDER BY … DESC LIMIT 5` reads the first
//! morsels only (PROFILE's scan line).

use plexus::{Config, Connection, Database, ParallelConfig, Params};
use proptest::prelude::*;

fn database() -> Database {
    let config = Config {
        background_maintenance: false,
        ..Config::default()
    };
    Database::open_in_memory(config).expect("open")
}

fn parallel(morsel: usize) -> ParallelConfig {
    ParallelConfig {
        workers: 2,
        min_scan_rows: 0.0,
        morsel_vertices: morsel,
    }
}

fn run(conn: &mut Connection, query: &str) {
    conn.execute(query, &Params::new()).expect(query);
}

fn rows(conn: &mut Connection, query: &str) -> Vec<String> {
    conn.execute(query, &Params::new())
        .expect(query)
        .rendered_rows()
}

fn plan(conn: &mut Connection, query: &str) -> String {
    let result = conn.execute(&format!("EXPLAIN {query}"), &Params::new());
    result.expect("explain").plan.expect("a plan")
}

/// How the keys are laid out over the rows (`i` the row's id), as a Cypher expression.
const SHAPES: [&str; 4] = [
    "-i",
    "i",
    "(i * 7919) % 1009",
    // Plateaus of 3,000 rows: equal keys across chunk edges (chunks hold 2,048 rows).
    "i / 3000",
];

/// The table, loaded: `n` rows with `w` (FLOAT) and `k` (INT) laid out by `shape`, a null
/// `w` on every `nulls`-th row (0: none), every `deleted`-th row deleted (0: none), and the
/// keys of every `updated`-th row raised by 500 in a later transaction (0: none).
fn load(
    conn: &mut Connection,
    n: usize,
    shape: &str,
    nulls: usize,
    deleted: usize,
    updated: usize,
) {
    run(
        conn,
        "CREATE NODE TABLE Z(id INT64, w DOUBLE, k INT64, PRIMARY KEY (id))",
    );
    let w = match nulls {
        0 => format!("toFloat({shape})"),
        _ => format!("CASE WHEN i % {nulls} = 0 THEN null ELSE toFloat({shape}) END"),
    };
    run(
        conn,
        &format!(
            "UNWIND range(0, {}) AS i CREATE (:Z {{id: i, w: {w}, k: {shape}}})",
            n - 1
        ),
    );
    if deleted > 0 {
        run(
            conn,
            &format!("MATCH (z:Z) WHERE z.id % {deleted} = 1 DELETE z"),
        );
    }
    if updated > 0 {
        run(
            conn,
            &format!(
                "MATCH (z:Z) WHERE z.id % {updated} = 2 SET z.w = z.w + 500.0, z.k = z.k + 500"
            ),
        );
    }
}

/// Top-k queries whose first key is a property of the scanned vertex (each gets
/// `skip-chunks`), both directions, both kinds, a second key, SKIP, a filter.
const QUERIES: [&str; 8] = [
    "MATCH (z:Z) RETURN z.id, z.w ORDER BY z.w DESC LIMIT 5",
    "MATCH (z:Z) RETURN z.id, z.w ORDER BY z.w LIMIT 40",
    "MATCH (z:Z) RETURN z.id, z.k ORDER BY z.k DESC LIMIT 1",
    "MATCH (z:Z) RETURN z.id, z.k ORDER BY z.k LIMIT 7",
    "MATCH (z:Z) RETURN z.id ORDER BY z.k DESC, z.id DESC LIMIT 12",
    "MATCH (z:Z) RETURN z.id, z.w AS w ORDER BY w DESC SKIP 3 LIMIT 9",
    "MATCH (z:Z) WHERE z.id % 3 <> 0 RETURN z.id, z.k ORDER BY z.k DESC LIMIT 6",
    "MATCH (z:Z) RETURN z.k AS k, z.id ORDER BY k ASC LIMIT 300",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn skipping_chunks_keeps_the_serial_rows(
        n in 4000usize..12000,
        shape in 0..SHAPES.len(),
        nulls in prop_oneof![Just(0usize), 50usize..3000],
        deleted in prop_oneof![Just(0usize), 2usize..500],
        updated in prop_oneof![Just(0usize), 100usize..4000],
        morsel in 300usize..1500,
    ) {
        let db = database();
        let mut serial = db.connect();
        serial.set_parallel(ParallelConfig::serial());
        load(&mut serial, n, SHAPES[shape], nulls, deleted, updated);
        let mut par = db.connect();
        par.set_parallel(parallel(morsel));
        for query in QUERIES {
            let parallel_plan = plan(&mut par, query);
            prop_assert!(parallel_plan.contains("partial-sort skip-chunks("), "{}", parallel_plan);
            prop_assert_eq!(rows(&mut par, query), rows(&mut serial, query), "{}", query);
        }
    }
}

/// The scanned vertices PROFILE counts for `query`.
fn scanned(conn: &mut Connection, query: &str) -> u64 {
    let result = conn.execute(&format!("PROFILE {query}"), &Params::new());
    let plan = result.expect("profile").plan.expect("a plan");
    let line = (plan.lines())
        .find(|line| line.contains("NodeByLabelScan"))
        .unwrap_or_else(|| panic!("{plan}"));
    let rows = line
        .split("[rows=")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"));
    let digits: String = rows.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn a_top_k_over_keys_descending_with_the_rows_reads_the_first_morsels_only() {
    let db = database();
    let mut conn = db.connect();
    conn.set_parallel(parallel(1000));
    load(&mut conn, 12_000, "-i", 0, 0, 0);
    for query in [
        "MATCH (z:Z) RETURN z.id, z.w ORDER BY z.w DESC LIMIT 5",
        "MATCH (z:Z) RETURN z.id, z.k ORDER BY z.k DESC LIMIT 5",
    ] {
        assert_eq!(rows(&mut conn, query).len(), 5, "{query}");
        let read = scanned(&mut conn, query);
        assert!(read < 6_000, "{query}: {read} of 12,000 vertices read");
        // Ascending, every chunk may hold a row: all are read.
        let ascending = query.replace(" DESC", "");
        assert_eq!(scanned(&mut conn, &ascending), 12_000, "{ascending}");
    }
}

/// The first column of each row (the id) of `query` on `conn`.
fn ids(conn: &mut Connection, query: &str) -> Vec<i64> {
    let result = conn.execute(query, &Params::new()).expect(query);
    (result.rows.iter())
        .map(|row| match &row[0] {
            plexus::CypherValue::Int(id) => *id,
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Zones describe the newest committed values: a transaction that wrote, or whose snapshot
/// is older than a chunk's newest write, reads that chunk's rows — skipping it on the zone
/// would lose a row its own write raised, or one a later commit lowered.
#[test]
fn own_writes_and_older_snapshots_are_not_skipped_on_newer_zones() {
    let top = "MATCH (z:Z) RETURN z.id ORDER BY z.w DESC LIMIT 3";
    let db = database();
    let mut conn = db.connect();
    conn.set_parallel(parallel(1000));
    load(&mut conn, 12_000, "-i", 0, 0, 0);
    assert_eq!(ids(&mut conn, top), [0, 1, 2]);
    // Its own write raises a row of a chunk the committed zones put far behind.
    conn.begin().expect("begin");
    run(&mut conn, "MATCH (z:Z {id: 11000}) SET z.w = 1.0e9");
    assert_eq!(ids(&mut conn, top), [11000, 0, 1]);
    conn.rollback().expect("rollback");

    // A snapshot from before another transaction lowers the top rows: it still sees them.
    let mut reader = db.connect();
    reader.set_parallel(parallel(1000));
    let ascending = "MATCH (z:Z) RETURN z.id ORDER BY z.k DESC LIMIT 3";
    run(&mut conn, "MATCH (z:Z) SET z.k = -z.k");
    reader.begin().expect("begin");
    assert_eq!(ids(&mut reader, ascending), [11999, 11998, 11997]);
    run(
        &mut conn,
        "MATCH (z:Z) WHERE z.id >= 10240 SET z.k = -1000000000",
    );
    assert_eq!(ids(&mut reader, ascending), [11999, 11998, 11997]);
    reader.commit().expect("commit");
    assert_eq!(ids(&mut reader, ascending), [10239, 10238, 10237]);
}

/// Under SERIALIZABLE the vertices skipped on a zone count as read: a concurrent write that
/// would have put one of them in the top k conflicts with the reader's commit.
#[test]
fn skipped_vertices_are_read_under_serializable() {
    let top = "MATCH (z:Z) RETURN z.id ORDER BY z.w DESC LIMIT 3";
    for (write, conflicts) in [
        ("MATCH (z:Z {id: 11000}) SET z.w = 1.0e9", true),
        ("CREATE (:Other)", false),
    ] {
        let db = database();
        let mut conn = db.connect();
        load(&mut conn, 12_000, "-i", 0, 0, 0);
        let mut reader = db.connect();
        reader.set_parallel(parallel(1000));
        reader
            .begin_with(plexus::IsolationLevel::Serializable)
            .expect("begin");
        assert!(scanned(&mut reader, top) < 6_000, "chunks skipped");
        assert_eq!(ids(&mut reader, top), [0, 1, 2]);
        // The reader also writes, so it is validated at commit.
        run(&mut reader, "CREATE (:Log)");
        run(&mut conn, write);
        assert_eq!(reader.commit().is_err(), conflicts, "{write}");
    }
}
