//! `Connection::run` / `pull` / `stream`: results produced batch by batch, the snapshot an
//! auto-commit read keeps, writes that run (and commit) inside `run`, stale streams in an
//! explicit transaction, and failures half way through a stream.

use plexus::{Config, Connection, CypherValue, Database, Params, QueryError};

const BATCH_ROWS: usize = 2048;

fn database() -> Database {
    Database::open_in_memory(Config::default()).expect("open")
}

fn none() -> Params {
    Params::new()
}

fn count(conn: &mut Connection, label: &str) -> i64 {
    let result = conn
        .execute(&format!("MATCH (n:{label}) RETURN count(n)"), &none())
        .expect("count");
    match result.rows[0][0] {
        CypherValue::Int(c) => c,
        ref other => panic!("count returned {other:?}"),
    }
}

fn ints(rows: &[Vec<CypherValue>]) -> Vec<i64> {
    rows.iter()
        .map(|row| match row[0] {
            CypherValue::Int(i) => i,
            ref other => panic!("expected an integer, got {other:?}"),
        })
        .collect()
}

#[test]
fn rows_arrive_in_batches_and_add_up_to_the_whole_result() {
    let db = database();
    let mut conn = db.connect();
    let mut stream = conn
        .run("UNWIND range(1, 10000) AS i RETURN i", &none())
        .unwrap();
    assert_eq!(stream.columns(), ["i"]);
    let mut seen = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = conn.pull(&mut stream).unwrap() {
        assert!(chunk.rows.len() <= BATCH_ROWS, "one batch per pull");
        seen.extend(ints(&chunk.rows));
        chunks += 1;
    }
    assert!(stream.is_finished());
    assert!(chunks >= 10000 / BATCH_ROWS, "{chunks} pulls");
    assert_eq!(seen, (1..=10000).collect::<Vec<_>>());
    assert!(conn.pull(&mut stream).unwrap().is_none(), "stays finished");

    // The iterator form, and nodes carried with the rows of each batch.
    conn.execute("UNWIND range(1, 3000) AS i CREATE (:N {i: i})", &none())
        .unwrap();
    let rows = conn
        .stream("MATCH (n:N) RETURN n.i ORDER BY n.i", &none())
        .unwrap();
    let values: Vec<i64> = rows.map(|row| ints(&[row.unwrap()])[0]).collect();
    assert_eq!(values, (1..=3000).collect::<Vec<_>>());
    let mut stream = conn.run("MATCH (n:N) RETURN n", &none()).unwrap();
    let chunk = conn.pull(&mut stream).unwrap().unwrap();
    for row in &chunk.rows {
        let CypherValue::Node(v) = row[0] else {
            panic!("expected a node, got {:?}", row[0]);
        };
        assert!(chunk.nodes[&v].properties.contains_key("i"));
    }
}

#[test]
fn an_auto_commit_read_keeps_its_snapshot_until_it_ends() {
    let db = database();
    let mut conn = db.connect();
    conn.execute("UNWIND range(1, 5000) AS i CREATE (:Item {i: i})", &none())
        .unwrap();
    let mut stream = conn.run("MATCH (n:Item) RETURN n.i AS i", &none()).unwrap();
    let mut seen = ints(&conn.pull(&mut stream).unwrap().unwrap().rows);
    assert!(seen.len() < 5000, "the first pull returns one batch");

    // Another connection deletes everything and adds more while the stream is open.
    let mut writer = db.connect();
    writer.execute("MATCH (n:Item) DELETE n", &none()).unwrap();
    writer
        .execute("UNWIND range(1, 10) AS i CREATE (:Item {i: -i})", &none())
        .unwrap();

    while let Some(chunk) = conn.pull(&mut stream).unwrap() {
        seen.extend(ints(&chunk.rows));
    }
    seen.sort_unstable();
    assert_eq!(
        seen,
        (1..=5000).collect::<Vec<_>>(),
        "as of the stream's start"
    );
    assert_eq!(
        count(&mut conn, "Item"),
        10,
        "a new statement sees the writes"
    );
}

#[test]
fn a_write_commits_inside_run_even_if_its_stream_is_dropped() {
    let db = database();
    let mut conn = db.connect();
    let stream = conn
        .run(
            "UNWIND range(1, 5000) AS i CREATE (n:W {i: i}) RETURN n",
            &none(),
        )
        .unwrap();
    drop(stream);
    assert_eq!(count(&mut db.connect(), "W"), 5000);

    // Errors of a writing statement are reported by `run`, and nothing is kept.
    let error = conn
        .run("UNWIND [1, 0] AS x CREATE (:W {v: 10 / x})", &none())
        .err()
        .expect("division by zero");
    assert!(error.to_string().contains("zero"), "{error}");
    assert_eq!(count(&mut conn, "W"), 5000);

    // In an explicit transaction a write runs at `run` too, and COMMIT keeps it unpulled.
    conn.execute("BEGIN", &none()).unwrap();
    let _unpulled = conn.run("CREATE (:W)", &none()).unwrap();
    conn.execute("COMMIT", &none()).unwrap();
    assert_eq!(count(&mut conn, "W"), 5001);
}

#[test]
fn a_later_statement_in_the_transaction_makes_an_open_read_stale() {
    let db = database();
    let mut conn = db.connect();
    conn.execute("BEGIN", &none()).unwrap();
    conn.execute("UNWIND range(1, 5000) AS i CREATE (:T {i: i})", &none())
        .unwrap();
    let mut stale = conn.run("MATCH (n:T) RETURN n.i", &none()).unwrap();
    let mut kept = conn.run("MATCH (n:T) RETURN n.i", &none()).unwrap();
    assert!(conn.pull(&mut kept).unwrap().is_some());
    conn.buffer(&mut kept).unwrap();

    conn.execute("MATCH (n:T) DELETE n", &none()).unwrap();
    let error: QueryError = conn.pull(&mut stale).unwrap_err();
    assert_eq!(error.code, "ResultConsumed", "{error}");
    assert!(
        conn.in_transaction(),
        "a stale stream does not end the transaction"
    );

    let mut rest = 0;
    while let Some(chunk) = conn.pull(&mut kept).unwrap() {
        rest += chunk.rows.len();
    }
    assert!(rest > 0 && rest < 5000, "the buffered rest: {rest}");
    conn.execute("COMMIT", &none()).unwrap();
    let error = conn.pull(&mut stale).unwrap_err();
    assert_eq!(error.code, "TransactionEnded", "{error}");
}

#[test]
fn a_failure_half_way_through_a_stream_ends_it_and_its_transaction() {
    let db = database();
    let mut conn = db.connect();
    let query = "UNWIND range(0, 5000) AS i RETURN 10 / (i - 4000) AS x";

    let mut stream = conn.run(query, &none()).unwrap();
    assert!(
        conn.pull(&mut stream).unwrap().is_some(),
        "first batch is fine"
    );
    let error = loop {
        match conn.pull(&mut stream) {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the stream ended without the division by zero"),
            Err(error) => break error,
        }
    };
    assert!(error.to_string().contains("zero"), "{error}");
    assert!(stream.is_finished());
    assert!(conn.pull(&mut stream).unwrap().is_none());

    conn.execute("BEGIN", &none()).unwrap();
    conn.execute("CREATE (:Gone)", &none()).unwrap();
    let mut stream = conn.run(query, &none()).unwrap();
    let error = std::iter::from_fn(|| Some(conn.pull(&mut stream)))
        .find_map(|pulled| pulled.err())
        .expect("fails");
    assert!(error.to_string().contains("rolled back"), "{error}");
    assert!(!conn.in_transaction());
    assert_eq!(count(&mut conn, "Gone"), 0);
}

#[test]
fn profile_counts_every_row_once_the_stream_is_drained() {
    let db = database();
    let mut conn = db.connect();
    let mut stream = conn
        .run("PROFILE UNWIND range(1, 5000) AS i RETURN i", &none())
        .unwrap();
    assert!(stream.summary().plan.is_none(), "no profile before the end");
    while conn.pull(&mut stream).unwrap().is_some() {}
    let plan = stream.summary().plan.expect("profile");
    assert!(plan.contains("[rows=5000"), "{plan}");

    let stream = conn.run("EXPLAIN MATCH (n) RETURN n", &none()).unwrap();
    assert!(stream.is_finished());
    assert!(stream.summary().plan.unwrap().contains("AllNodesScan"));
}
