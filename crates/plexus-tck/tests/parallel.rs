//! Morsel-driven parallelism returns the serial plan's rows, in the serial order. On random
//! graphs — `P` and `Q` nodes with a property `x` drawn from integers, floats (`2.0`, equal
//! to `2`), a string, a boolean and null, a property `f` drawn from floats whose sums depend on
//! the order of the additions (`0.1`, `1e16`, …), relationships of types `R` and `S` with a
//! weight `w` — every query runs on two connections to the same database: one serial, one
//! with two workers, every scan parallel (threshold 0) and morsels of 1 to 5 vertices. Rows
//! must be equal row for row (not only as multisets), errors alike (`a.x + 1` on a boolean
//! fails in a worker; `sum` over a string, or overflowing, fails in the merge), and PROFILE
//! must count the same rows per operator. Partial aggregation (an Aggregate computed per
//! morsel in the workers and merged) must give the same groups in the same order, the same
//! `collect` lists, and float sums equal to the last bit; partial sorts (each morsel sorted in
//! its worker, the runs merged) the same rows in the same order, ties included, and the same
//! first error; partial DISTINCT the same first occurrences in the same order. Also: a SERIALIZABLE transaction
//! whose read ran in the workers still conflicts with a concurrent write to what the workers
//! read. Hash joins in the chain (`JOINS`) likewise: same rows in the same order, same errors,
//! same PROFILE rows. A partial top-k that skips storage chunks by their zone maps
//! (`SKIPPED CHUNKS`, on node tables) likewise, and it must skip.

use plexus::{Config, Connection, Database, IsolationLevel, ParallelConfig, Params};
use proptest::prelude::*;

/// Values of `x`, as Cypher literals; `None`: missing.
const VALUES: [Option<&str>; 10] = [
    None,
    Some("0"),
    Some("1"),
    Some("2"),
    Some("3"),
    Some("5"),
    Some("2.5"),
    Some("2.0"),
    Some("'a'"),
    Some("true"),
];

/// Values of `f`: floats whose sum depends on the order of the additions (and an integer).
const FLOATS: [Option<&str>; 7] = [
    None,
    Some("0.1"),
    Some("0.2"),
    Some("0.3"),
    Some("1e16"),
    Some("-1e16"),
    Some("3"),
];

/// Aggregates directly above a parallel chain, and whether the workers aggregate partially:
/// every aggregate function, with and without DISTINCT, grouping keys that are null or
/// equivalent (`2` and `2.0`), no grouping key over no rows (one row), errors in `sum` (a
/// string, a boolean, an overflow: which one depends on which row comes first), and the
/// percentiles, which stay serial.
const AGGREGATES: [(&str, bool); 10] = [
    (
        "MATCH (a:P)-[r]->(b) RETURN b.x, count(*), count(b.x), sum(r.w), sum(b.f), avg(b.f), \
         min(b.f), max(b.x), collect(b.i), collect(b.f)",
        true,
    ),
    (
        "MATCH (n) RETURN count(*), sum(n.f), avg(n.i), min(n.x), collect(n.f), stDev(n.f)",
        true,
    ),
    (
        "MATCH (a:P) WHERE a.i < 0 RETURN count(*), count(a.x), sum(a.f), avg(a.f), \
         min(a.x), collect(a.x), collect(DISTINCT a.x)",
        true,
    ),
    ("MATCH (a:P) WHERE a.i < 0 RETURN a.x, count(*)", true),
    (
        "MATCH (a)-[r]->(b) RETURN a.x AS k, b.f IS NULL AS z, count(DISTINCT b.x), \
         collect(DISTINCT b.x), sum(DISTINCT b.f), avg(DISTINCT r.w), min(DISTINCT b.f), \
         max(DISTINCT b.i), stDevP(b.f)",
        true,
    ),
    (
        "MATCH (a)-->(b)-->(c) RETURN c.f, collect(a.i), sum(b.f + c.f), count(DISTINCT a)",
        true,
    ),
    ("MATCH (a:P)-[r]->(b) RETURN a.i % 3 AS k, sum(b.x)", true),
    (
        "MATCH (a)-[r]->(b) RETURN sum(CASE WHEN b.i % 3 = 0 THEN 4000000000000000000 \
         ELSE b.x END), count(*)",
        true,
    ),
    (
        "MATCH (a:P)-[r]->(b) WITH a.x AS k, sum(b.f) AS s WHERE s > 0.25 RETURN k, s",
        true,
    ),
    (
        "MATCH (a)-[r]->(b) RETURN a.x, percentileCont(b.f, 0.5), percentileDisc(b.i, 0.5), \
         count(*)",
        false,
    ),
];

/// Query shapes: counts, grouping aggregates, filters, expands of one, two and variable
/// length, DISTINCT, ORDER BY + SKIP / LIMIT above, a bare LIMIT, an all-nodes scan.
const QUERIES: [&str; 12] = [
    "MATCH (a:P)-[:R]->(b) WHERE b.x > 2 RETURN count(*)",
    "MATCH (a:P)-[r]->(b) RETURN a.x, count(*), sum(r.w), min(b.i), max(b.i), collect(b.i)",
    "MATCH (a:P)-[:R*1..2]->(b) WHERE a.i <> b.i RETURN a.i, b.i",
    "MATCH (a:P)-[:R|S]-(b) RETURN DISTINCT b.x",
    "MATCH (a:P)-->(b)-->(c) WHERE c.i >= a.i RETURN a.i, c.i ORDER BY c.i DESC, a.i SKIP 1 LIMIT 7",
    "MATCH (a:P) WHERE a.x + 1 > 2 RETURN a.i, a.x * 2 AS y",
    "MATCH (a:P)-[r:R]->(b) RETURN a.i, b.i, r.w LIMIT 5",
    "MATCH (n) RETURN count(n), avg(n.i), collect(DISTINCT n.x)",
    "MATCH (a:Q)<-[r:S]-(b) WITH a, count(r) AS k WHERE k > 1 RETURN a.i, k",
    "MATCH (a:P)-[r:R]->(b:Q) RETURN b.x, r.w ORDER BY r.w",
    "MATCH (a:P) OPTIONAL MATCH (a)-[:S]->(b) RETURN a.i, b.i",
    "MATCH (a:P)-[r]->(b) WHERE r.w % 2 = 0 RETURN a.i + b.i AS s, type(r) ORDER BY s LIMIT 4",
];

/// Hash joins inside a parallel chain (`exec::parallel`, HASH JOINS: the table built once on
/// the caller's thread, probed by every worker): inner and left outer, with a residual,
/// under a partial aggregate, a partial sort and a bare LIMIT, keys equal across types (`2`
/// and `2.0`), and keys that fail (a string or a boolean times 2) on the probe side or on the
/// build side.
const JOINS: [&str; 8] = [
    "MATCH (a:P), (b:Q) WHERE a.x = b.x RETURN a.i, b.i",
    "MATCH (a:P), (b:Q) WHERE a.x = b.x RETURN b.x, count(*), collect(a.i), sum(a.f)",
    "MATCH (a:P) OPTIONAL MATCH (b:Q) WHERE b.x = a.x AND b.i > a.i RETURN a.i, b.i",
    "MATCH (a)-[r]->(b), (c:Q) WHERE c.x = b.x RETURN a.i, c.i ORDER BY c.i DESC LIMIT 6",
    "MATCH (a:P), (b:Q) WHERE a.x = b.x RETURN a.i, b.f LIMIT 3",
    "MATCH (a:P), (b:Q) WHERE a.x * 2 = b.i RETURN a.i, b.i",
    "MATCH (a:P) MATCH (b:Q) WHERE b.x * 2 = a.i RETURN a.i, b.i",
    "MATCH (a:P)-->(m) OPTIONAL MATCH (b:Q) WHERE b.i = m.i RETURN a.i, m.i, b.f",
];

/// Sorts and DISTINCT directly above a parallel chain, and what the workers compute of them
/// (the EXPLAIN marker after `Parallel workers=2`, `""` when they stay serial above it): ties
/// (`w` takes 6 values, `x` holds `2` and `2.0`, which order as equal) whose order must be the
/// serial input order, DESC, several keys, nulls, mixed types, top-k with SKIP / LIMIT (small,
/// and larger than a morsel), errors in keys (a string or a boolean times 2: which one is
/// reported depends on which row comes first), DISTINCT over equivalent values and nulls,
/// WITH DISTINCT, DISTINCT + ORDER BY (the Sort stays serial over a partial-distinct),
/// keys holding a subquery (serial).
const SORTS: [(&str, &str); 14] = [
    (
        "MATCH (a:P)-[r]->(b) RETURN a.i, b.i, r.w ORDER BY r.w",
        "partial-sort",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN a.i, b.x ORDER BY b.x DESC",
        "partial-sort",
    ),
    (
        "MATCH (a:P)-->(b) RETURN a.x, b.f, b.i ORDER BY a.x, b.f DESC, b.i % 2",
        "partial-sort",
    ),
    (
        "MATCH (n) RETURN n.i, n.x ORDER BY n.x SKIP 2 LIMIT 5",
        "partial-sort",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN a.i, b.i ORDER BY r.w DESC LIMIT 3",
        "partial-sort",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN a.i, b.i ORDER BY b.f SKIP 1 LIMIT 30",
        "partial-sort",
    ),
    ("MATCH (n) RETURN n.i, n.x ORDER BY n.x * 2", "partial-sort"),
    (
        "MATCH (a)-[r]->(b) RETURN a.i ORDER BY CASE WHEN b.i % 4 = 3 THEN b.x * 2 ELSE r.w END          LIMIT 2",
        "partial-sort",
    ),
    (
        "MATCH (a:P)-[r]->(b) WITH a, b ORDER BY b.x, a.i RETURN a.i, b.x",
        "partial-sort",
    ),
    (
        "MATCH (a)-->(b) RETURN DISTINCT b.x, a.f",
        "partial-distinct",
    ),
    (
        "MATCH (a:P)-->(b) WITH DISTINCT b.x AS x, a.x AS y WHERE y IS NOT NULL RETURN x, y",
        "partial-distinct",
    ),
    (
        "MATCH (a)-->(b) RETURN DISTINCT b.x ORDER BY b.x DESC",
        "partial-distinct",
    ),
    (
        "MATCH (a)-[r]->(b) RETURN DISTINCT b.x, r.w ORDER BY r.w SKIP 1 LIMIT 4",
        "partial-distinct",
    ),
    (
        "MATCH (a:P) RETURN a.i ORDER BY EXISTS { (a)-[:S]->() }, a.i",
        "",
    ),
];

/// Rows are compared in order, and the order of a vertex's neighbours follows the storage
/// layout, so no background maintenance may change it between the serial and the parallel
/// run (the elastic policy flushes a memtable that reads went over twice).
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

/// Nodes (label P or Q, value index of `x`, of `f`) and relationships (source, target,
/// type S, w).
type Graph = (Vec<(bool, usize, usize)>, Vec<(usize, usize, bool, i64)>);

fn graphs() -> impl Strategy<Value = Graph> {
    let node = (any::<bool>(), 0..VALUES.len(), 0..FLOATS.len());
    proptest::collection::vec(node, 1..40).prop_flat_map(|nodes| {
        let n = nodes.len();
        let rels = proptest::collection::vec((0..n, 0..n, any::<bool>(), 0i64..6), 0..(3 * n));
        (Just(nodes), rels)
    })
}

fn create(conn: &mut Connection, (nodes, rels): &Graph) {
    for (i, (q, x, f)) in nodes.iter().enumerate() {
        let label = if *q { "Q" } else { "P" };
        let x = VALUES[*x].map(|v| format!(", x: {v}")).unwrap_or_default();
        let f = FLOATS[*f].map(|v| format!(", f: {v}")).unwrap_or_default();
        let query = format!("CREATE (:{label} {{i: {i}{x}{f}}})");
        conn.execute(&query, &Params::new()).expect(&query);
    }
    for (a, b, s, w) in rels {
        let ty = if *s { "S" } else { "R" };
        let query =
            format!("MATCH (a {{i: {a}}}), (b {{i: {b}}}) CREATE (a)-[:{ty} {{w: {w}}}]->(b)");
        conn.execute(&query, &Params::new()).expect(&query);
    }
}

/// A serial connection to `db` that created `graph`, and one with two workers and morsels of
/// `morsel` vertices.
fn serial_and_parallel(db: &Database, graph: &Graph, morsel: usize) -> (Connection, Connection) {
    let mut serial = db.connect();
    serial.set_parallel(ParallelConfig::serial());
    create(&mut serial, graph);
    let mut par = db.connect();
    par.set_parallel(parallel(morsel));
    (serial, par)
}

/// `query`'s rows in the order returned, or its error (class, code and message).
fn rows(conn: &mut Connection, query: &str) -> Result<Vec<String>, String> {
    let result = conn
        .execute(query, &Params::new())
        .map_err(|e| e.to_string())?;
    Ok(result.rendered_rows())
}

fn plan(conn: &mut Connection, query: &str) -> String {
    let result = conn.execute(&format!("EXPLAIN {query}"), &Params::new());
    result.expect("explain").plan.expect("a plan")
}

/// PROFILE's rows per operator line (times dropped), without the `Parallel` line.
fn profile_rows(conn: &mut Connection, query: &str) -> Vec<String> {
    let result = conn.execute(&format!("PROFILE {query}"), &Params::new());
    let plan = result.expect("profile").plan.expect("a plan");
    plan.lines()
        .filter(|line| !line.contains("Parallel"))
        .map(|line| {
            line.split(", time=")
                .next()
                .unwrap_or(line)
                .trim()
                .to_string()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn parallel_plans_return_the_serial_rows_in_order(graph in graphs(), morsel in 1usize..6) {
        let db = database();
        let (mut serial, mut par) = serial_and_parallel(&db, &graph, morsel);
        for query in QUERIES {
            prop_assert!(!plan(&mut serial, query).contains("Parallel"), "{}", query);
            prop_assert!(plan(&mut par, query).contains("Parallel workers=2"), "{}", query);
            let expected = rows(&mut serial, query);
            prop_assert_eq!(rows(&mut par, query), expected, "{}", query);
        }
        let aggregates = AGGREGATES.map(|(q, partial)| (q, if partial { "partial-aggregate" } else { "" }));
        for (query, partial) in aggregates.into_iter().chain(SORTS) {
            prop_assert!(!plan(&mut serial, query).contains("Parallel"), "{}", query);
            let parallel_plan = plan(&mut par, query);
            let line = parallel_plan.split("Parallel workers=2 ").nth(1);
            prop_assert!(line.is_some(), "{}", parallel_plan);
            // `morsel=N` then the marker, if any, on the Parallel's line.
            let line = line.unwrap_or_default().lines().next().unwrap_or_default();
            let marker = line.split_whitespace().nth(1).unwrap_or_default();
            prop_assert_eq!(marker, partial, "{}", parallel_plan);
            let expected = rows(&mut serial, query);
            prop_assert_eq!(rows(&mut par, query), expected, "{}", query);
        }
        for query in [QUERIES[0], AGGREGATES[0].0, AGGREGATES[4].0, SORTS[0].0, SORTS[4].0, SORTS[9].0] {
            prop_assert_eq!(profile_rows(&mut par, query), profile_rows(&mut serial, query));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn parallel_hash_joins_return_the_serial_rows_in_order(graph in graphs(), morsel in 1usize..6) {
        let db = database();
        let (mut serial, mut par) = serial_and_parallel(&db, &graph, morsel);
        for query in JOINS {
            prop_assert!(!plan(&mut serial, query).contains("Parallel"), "{}", query);
            let parallel_plan = plan(&mut par, query);
            // Where the join is planned (an empty label gets a key seek instead), it is a
            // stage of the chain: below the Parallel, above its scan.
            let below = parallel_plan.split("Parallel workers=2").nth(1).unwrap_or_default();
            prop_assert!(
                below.contains("HashJoin") || !parallel_plan.contains("HashJoin"),
                "{}",
                parallel_plan
            );
            let expected = rows(&mut serial, query);
            let reached = expected.as_ref().is_ok_and(|rows| !rows.is_empty());
            prop_assert_eq!(rows(&mut par, query), expected, "{}", query);
            // Under a LIMIT the workers run ahead of what the serial plan pulls: their
            // counts differ (as for the chains without joins). A join that no row reaches
            // builds its table in the Parallel (counted), never serially (HASH JOINS): the
            // counts are compared where rows came out, the join's input not empty.
            if reached && !query.contains("LIMIT") {
                prop_assert_eq!(profile_rows(&mut par, query), profile_rows(&mut serial, query));
            }
        }
    }
}

/// A SERIALIZABLE transaction reads through a parallel plan (the filter on `b.x` and the
/// expand run in the workers); a concurrent commit changes what it read; its own commit must
/// abort — with the parallel plan exactly as with the serial one.
#[test]
fn a_conflict_on_what_workers_read_is_detected_under_serializable() {
    let query = "MATCH (a:P)-[:R]->(b) WHERE b.x > 2 RETURN count(*)";
    // (what the concurrent transaction does, whether it conflicts with the read)
    let writes = [
        ("MATCH (b {i: 7}) SET b.x = 0", true),
        ("MATCH (a {i: 3}), (b {i: 9}) CREATE (a)-[:R]->(b)", true),
        ("CREATE (:Other)", false),
    ];
    for (write, conflicts) in writes {
        for config in [parallel(2), ParallelConfig::serial()] {
            let db = database();
            let mut conn = db.connect();
            conn.execute(
                "UNWIND range(0, 19) AS i CREATE (:P {i: i, x: i % 5})",
                &Params::new(),
            )
            .expect("nodes");
            conn.execute(
                "MATCH (a:P), (b:P) WHERE b.i = (a.i * 7) % 20 CREATE (a)-[:R]->(b)",
                &Params::new(),
            )
            .expect("relationships");

            let mut reader = db.connect();
            reader.set_parallel(config.clone());
            reader
                .begin_with(IsolationLevel::Serializable)
                .expect("begin");
            let explained = reader
                .execute(&format!("EXPLAIN {query}"), &Params::new())
                .expect("explain");
            let text = explained.plan.expect("a plan");
            assert_eq!(text.contains("Parallel"), config.workers == 2, "{text}");
            let count = reader.execute(query, &Params::new()).expect("read");
            assert_eq!(count.rows.len(), 1);
            // The reader also writes, so it is validated at commit.
            reader
                .execute("CREATE (:Log)", &Params::new())
                .expect("write");
            conn.execute(write, &Params::new()).expect(write);
            let committed = reader.commit();
            assert_eq!(
                committed.is_err(),
                conflicts,
                "{write} with {config:?}: {committed:?}"
            );
            if let Err(e) = committed {
                assert!(e.is_retryable(), "{e}");
            }
        }
    }
}

// ---- SKIPPED CHUNKS ------------------------------------------------------------------------
//
// A partial top-k skips the storage chunks whose range of the first sort key (their zone)
// is strictly behind the workers' shared bar (`exec::parallel`, SKIPPED CHUNKS). It must
// return the serial plan's rows, in order, ties included: on node tables of 4,000 to 12,000
// rows (two to six chunks) whose FLOAT and INT keys are laid out descending, ascending,
// hashed or as plateaus (equal keys across chunk edges: a chunk whose largest value equals
// the bar is read), with nulls, deleted rows and values updated after the load, each query
// runs on a serial connection and on one with two workers and small morsels. And it must
// skip: where the keys descend with the rows, `ORDER BY … DESC LIMIT 5` reads the first
// morsels only (PROFILE's scan line).

fn run(conn: &mut Connection, query: &str) {
    conn.execute(query, &Params::new()).expect(query);
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
const TOP_K_QUERIES: [&str; 8] = [
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
        for query in TOP_K_QUERIES {
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
        assert_eq!(rows(&mut conn, query).map(|r| r.len()), Ok(5), "{query}");
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
            .begin_with(IsolationLevel::Serializable)
            .expect("begin");
        assert!(scanned(&mut reader, top) < 6_000, "chunks skipped");
        assert_eq!(ids(&mut reader, top), [0, 1, 2]);
        // The reader also writes, so it is validated at commit.
        run(&mut reader, "CREATE (:Log)");
        run(&mut conn, write);
        assert_eq!(reader.commit().is_err(), conflicts, "{write}");
    }
}

/// SMALL BATCHES: a worker holds the few rows a selective filter leaves of a batch and sends
/// them with the morsel's next small ones — before a full batch that follows, and at the
/// morsel's end. Morsels of 10,000 vertices (five batches, whole chunks) whose batches pass
/// few rows, all, then few again, and a LIMIT that stops inside a morsel: the serial rows, in
/// the serial order.
#[test]
fn small_batches_held_by_a_worker_keep_the_serial_rows() {
    let db = database();
    let mut serial = db.connect();
    serial.set_parallel(ParallelConfig::serial());
    load(&mut serial, 30_000, "i", 0, 0, 0);
    let mut par = db.connect();
    par.set_parallel(parallel(10_000));
    let queries = [
        // Per morsel: a few rows of batch 0, all of batch 1, a few of the rest.
        "MATCH (z:Z) WHERE z.id % 10240 < 3 OR (z.id % 10240 >= 2048 AND z.id % 10240 < 4096) \
         OR z.id % 997 = 5 RETURN z.id",
        "MATCH (z:Z) WHERE z.id % 701 = 3 RETURN z.id",
        "MATCH (z:Z) WHERE z.id % 701 = 3 RETURN z.id LIMIT 7",
    ];
    for query in queries {
        let expected = ids(&mut serial, query);
        assert!(
            expected.windows(2).all(|w| w[0] < w[1]),
            "{query}: scan order"
        );
        assert_eq!(ids(&mut par, query), expected, "{query}");
    }
}
