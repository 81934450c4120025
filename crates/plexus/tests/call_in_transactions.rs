//! `CALL { ... } IN TRANSACTIONS` through the embedded API: the batches are real transactions
//! — another session sees each batch's rows while the statement is still running, a failed
//! batch leaves exactly the earlier batches committed — and the statement is refused inside
//! an explicit transaction with Neo4j's `TransactionStartFailed`.

mod common;

use common::{TempDir, memory_db};
use plexus::{
    Config, Connection, CypherValue, Database, ErrorClass, Params, Procedure, ProcedureFn,
};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

fn int(value: &CypherValue) -> i64 {
    match value {
        CypherValue::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    }
}

fn count(conn: &mut Connection, query: &str) -> i64 {
    int(&conn.execute(query, &Params::new()).unwrap().rows[0][0])
}

/// `test.committed() YIELD n`: the number of `:Row` nodes another session sees committed, asked
/// from inside the running statement.
fn committed_rows_procedure(db: &Database) -> Procedure {
    let observer = Mutex::new(db.connect());
    let body = move |_: &[CypherValue], _: &mut plexus::Transaction| {
        let mut observer = observer.lock().unwrap();
        let result = observer.execute("MATCH (r:Row) RETURN count(r)", &Params::new())?;
        Ok(vec![vec![result.rows[0][0].clone()]])
    };
    Procedure {
        name: "test.committed".into(),
        inputs: Vec::new(),
        input_types: Vec::new(),
        defaults: Vec::new(),
        outputs: vec!["n".into()],
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    }
}

#[test]
fn each_batch_commits_before_the_next_starts() {
    let db = memory_db();
    let mut conn = db.connect();
    conn.register_procedure(committed_rows_procedure(&db));
    conn.execute(
        "UNWIND range(1, 25) AS i
         CALL { WITH i CALL test.committed() YIELD n CREATE (:Row {i: i, seen: n}) }
         IN TRANSACTIONS OF 10 ROWS",
        &Params::new(),
    )
    .unwrap();
    let result = conn
        .execute(
            "MATCH (r:Row) RETURN r.i, r.seen ORDER BY r.i",
            &Params::new(),
        )
        .unwrap();
    assert_eq!(result.rows.len(), 25);
    for row in &result.rows {
        let (i, seen) = (int(&row[0]), int(&row[1]));
        // Row i runs in batch (i - 1) / 10; every earlier batch is committed and visible to
        // another session by then, none of its own batch is. In one transaction, all 0.
        assert_eq!(seen, (i - 1) / 10 * 10, "row {i}");
    }
}

/// A CSV of `lines` records `i,d` with `d = 0` (a division by zero) on record `bad`.
fn write_csv(db_dir: &std::path::Path, lines: i64, bad: i64) {
    let mut text = String::from("i,d\n");
    for i in 1..=lines {
        text.push_str(&format!("{i},{}\n", if i == bad { 0 } else { 1 }));
    }
    std::fs::write(db_dir.join("import/rows.csv"), text).unwrap();
}

const LOAD: &str = "LOAD CSV WITH HEADERS FROM 'file:///rows.csv' AS r
     CALL { WITH r CREATE (:Line {i: toInteger(r.i), v: 100 / toInteger(r.d)}) }
     IN TRANSACTIONS OF 1000 ROWS";

#[test]
fn a_failing_batch_leaves_exactly_the_earlier_batches_committed() {
    let dir = TempDir::new("cit-fail");
    let db = Database::open(&dir.0, Config::default()).unwrap();
    write_csv(&dir.0, 3500, 2100); // the third batch (rows 2001..3000) fails
    let mut conn = db.connect();

    // ON ERROR FAIL (the default): the statement fails, two batches stay.
    let error = conn.execute(LOAD, &Params::new()).unwrap_err();
    assert_eq!(error.class, ErrorClass::ArithmeticError, "{error}");
    assert!(
        error.message.ends_with("(Transactions committed: 2)"),
        "{error}"
    );
    assert_eq!(count(&mut conn, "MATCH (l:Line) RETURN count(l)"), 2000);
    assert_eq!(count(&mut conn, "MATCH (l:Line) RETURN max(l.i)"), 2000);
    conn.execute("MATCH (l:Line) DELETE l", &Params::new())
        .unwrap();

    // ON ERROR BREAK: the statement succeeds, the same two batches stay.
    let result = conn
        .execute(&format!("{LOAD} ON ERROR BREAK"), &Params::new())
        .unwrap();
    assert_eq!(result.stats.nodes_created, 2000);
    assert_eq!(count(&mut conn, "MATCH (l:Line) RETURN count(l)"), 2000);
    conn.execute("MATCH (l:Line) DELETE l", &Params::new())
        .unwrap();

    // ON ERROR CONTINUE: only the failed batch is missing.
    let result = conn
        .execute(&format!("{LOAD} ON ERROR CONTINUE"), &Params::new())
        .unwrap();
    assert_eq!(result.stats.nodes_created, 2500);
    let missing = conn
        .execute(
            "MATCH (l:Line) WITH collect(l.i) AS seen
             RETURN [i IN range(1, 3500) WHERE NOT i IN seen] AS missing",
            &Params::new(),
        )
        .unwrap();
    let CypherValue::List(missing) = &missing.rows[0][0] else {
        panic!("a list");
    };
    assert_eq!(missing.len(), 1000);
    assert_eq!(int(&missing[0]), 2001);
    assert_eq!(int(&missing[999]), 3000);
}

#[test]
fn batch_size_from_a_parameter_and_one_transaction_per_batch() {
    let db = memory_db();
    let mut conn = db.connect();
    let mut params = Params::new();
    params.insert("n".into(), CypherValue::Int(3));
    let result = conn
        .execute(
            "UNWIND range(1, 10) AS i
             CALL { WITH i CREATE (:P {i: i}) } IN TRANSACTIONS OF $n ROWS
               ON ERROR CONTINUE REPORT STATUS AS s
             RETURN i, s.transactionId AS tx, s.committed AS ok",
            &params,
        )
        .unwrap();
    assert_eq!(result.rows.len(), 10);
    let ids: Vec<String> = result
        .rows
        .iter()
        .map(|row| match &row[1] {
            CypherValue::String(s) => s.to_string(),
            other => panic!("a transaction id: {other:?}"),
        })
        .collect();
    // Rows 1-3, 4-6, 7-9 and 10 share a transaction each; the four differ.
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 4);
    for (k, id) in ids.iter().enumerate() {
        assert_eq!(id, &ids[k / 3 * 3], "row {}", k + 1);
    }
    assert!(
        result
            .rows
            .iter()
            .all(|row| matches!(row[2], CypherValue::Bool(true)))
    );

    params.insert("n".into(), CypherValue::Int(0));
    let error = conn
        .execute(
            "UNWIND [1] AS i CALL { WITH i CREATE () } IN TRANSACTIONS OF $n ROWS",
            &params,
        )
        .unwrap_err();
    assert_eq!(error.class, ErrorClass::SyntaxError, "{error}");
    assert_eq!(
        error.message,
        "Invalid input. '$n' is not a valid value. Must be a positive integer."
    );
}

#[test]
fn refused_inside_an_explicit_transaction() {
    let db = memory_db();
    let mut conn = db.connect();
    let query = "UNWIND range(1, 5) AS i CALL { WITH i CREATE (:Refused) } IN TRANSACTIONS";
    for begin in ["api", "cypher"] {
        match begin {
            "api" => conn.begin().unwrap(),
            _ => {
                conn.execute("BEGIN", &Params::new()).unwrap();
            }
        }
        conn.execute("CREATE (:Before)", &Params::new()).unwrap();
        let error = conn.execute(query, &Params::new()).unwrap_err();
        assert_eq!(error.class, ErrorClass::DatabaseError, "{error}");
        assert_eq!(error.code, "TransactionStartFailed");
        assert!(
            error.message.starts_with(
                "A query with 'CALL { ... } IN TRANSACTIONS' can only be executed in an \
                 implicit transaction, but tried to execute in an explicit transaction."
            ),
            "{error}"
        );
        // Like any failure in an explicit transaction, it rolled the transaction back.
        assert!(!conn.in_transaction());
        assert_eq!(
            count(
                &mut conn,
                "MATCH (n) WHERE n:Before OR n:Refused RETURN count(n)"
            ),
            0
        );
    }
    // In auto-commit mode the same statement runs.
    conn.execute(query, &Params::new()).unwrap();
    assert_eq!(count(&mut conn, "MATCH (n:Refused) RETURN count(n)"), 5);
}
