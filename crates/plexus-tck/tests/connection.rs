//! `plexus::Connection`: auto-commit, explicit transactions, parameters, EXPLAIN, PROFILE,
//! and random queries executed against a small graph (no input may panic the engine).

use plexus::{Config, CypherValue, Database, Params};
use proptest::prelude::*;

fn database() -> Database {
    Database::open_in_memory(Config::default()).expect("open")
}

fn count(conn: &mut plexus::Connection) -> i64 {
    let result = conn
        .execute("MATCH (n) RETURN count(n) AS c", &Params::new())
        .expect("count");
    match result.rows[0][0] {
        CypherValue::Int(c) => c,
        ref other => panic!("count returned {other:?}"),
    }
}

#[test]
fn auto_commit_and_explicit_transactions() {
    let db = database();
    let mut conn = db.connect();
    conn.execute("CREATE (:A), (:B)", &Params::new()).unwrap();
    assert_eq!(count(&mut conn), 2);

    conn.execute("BEGIN", &Params::new()).unwrap();
    assert!(conn.in_transaction());
    conn.execute("CREATE (:C)", &Params::new()).unwrap();
    assert_eq!(count(&mut conn), 3, "a transaction sees its own writes");
    {
        let mut other = db.connect();
        assert_eq!(
            count(&mut other),
            2,
            "uncommitted writes are invisible to others"
        );
    }
    conn.execute("ROLLBACK", &Params::new()).unwrap();
    assert_eq!(count(&mut conn), 2);

    conn.execute("BEGIN", &Params::new()).unwrap();
    conn.execute("CREATE (:C)", &Params::new()).unwrap();
    conn.execute("COMMIT;", &Params::new()).unwrap();
    assert_eq!(count(&mut db.connect()), 3);

    // A failing statement inside a transaction rolls it back.
    conn.execute("BEGIN", &Params::new()).unwrap();
    conn.execute("CREATE (:D)", &Params::new()).unwrap();
    let error = conn.execute("RETURN 1 / 0", &Params::new()).unwrap_err();
    assert_eq!(error.code, "DivisionByZero");
    assert!(!conn.in_transaction());
    assert_eq!(count(&mut conn), 3);
    assert!(conn.execute("COMMIT", &Params::new()).is_err());
}

#[test]
fn parameters_explain_and_profile() {
    let db = database();
    let mut conn = db.connect();
    let mut params = Params::new();
    params.insert("name".into(), CypherValue::from("Ada"));
    conn.execute("CREATE (:Person {name: $name})", &params)
        .unwrap();
    let result = conn
        .execute(
            "MATCH (p:Person {name: $name}) RETURN p.name AS name",
            &params,
        )
        .unwrap();
    assert_eq!(result.columns, ["name"]);
    assert_eq!(result.render(&result.rows[0][0]), "'Ada'");

    let missing = conn.execute("RETURN $nope", &Params::new()).unwrap_err();
    assert_eq!(missing.code, "MissingParameter");

    let explained = conn
        .execute("EXPLAIN MATCH (p:Person) RETURN p.name", &Params::new())
        .unwrap();
    assert!(explained.rows.is_empty());
    let plan = explained.plan.expect("EXPLAIN returns the plan");
    assert!(plan.contains("NodeByLabelScan"), "{plan}");

    let profiled = conn
        .execute("PROFILE MATCH (p:Person) RETURN p.name", &Params::new())
        .unwrap();
    assert_eq!(profiled.rows.len(), 1);
    let plan = profiled.plan.expect("PROFILE returns the plan");
    assert!(plan.contains("[rows=1"), "{plan}");
}

const TOKENS: &[&str] = &[
    "MATCH",
    "OPTIONAL MATCH",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "AS",
    "CREATE",
    "MERGE",
    "SET",
    "REMOVE",
    "DELETE",
    "DETACH DELETE",
    "DISTINCT",
    "ORDER BY",
    "SKIP",
    "LIMIT",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS NULL",
    "count(*)",
    "collect(n)",
    "size",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "-",
    "->",
    "<-",
    ":",
    ",",
    ".",
    "*",
    "+",
    "/",
    "%",
    "=",
    "<",
    ">",
    "n",
    "m",
    "r",
    "x",
    "p",
    "A",
    "T",
    "k",
    "0",
    "1",
    "-1",
    "2.5",
    "'s'",
    "true",
    "null",
    "[1, 2]",
    "{k: 1}",
    "(n)",
    "(n)-[r:T]->(m)",
    "p = (n)--(m)",
    "date('2020-01-01')",
    "duration('P1D')",
    "range(1, 3)",
    "n.k",
    "x.k",
];

fn execution_database() -> Database {
    let db = database();
    db.connect()
        .execute(
            "CREATE (a:A {k: 1})-[:T {k: 2}]->(b:A {k: 'x'}), (b)-[:T]->(a), (c {k: [1, 2]})",
            &Params::new(),
        )
        .expect("setup");
    db
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random token streams behind a MATCH run to completion or fail with an error.
    #[test]
    fn random_queries_never_panic(tokens in prop::collection::vec(prop::sample::select(TOKENS), 1..16)) {
        let query = format!("MATCH (n) {}", tokens.join(" "));
        let q = query.clone();
        let outcome = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || {
                let db = execution_database();
                let mut conn = db.connect();
                if let Err(e) = conn.execute(&q, &Params::new()) {
                    assert_ne!(e.code, "InternalError", "{q}: {e}");
                }
            })
            .expect("spawn")
            .join();
        prop_assert!(outcome.is_ok(), "panicked on: {}", query);
    }
}

/// Expressions from a small grammar: valid syntax, arbitrary (often ill-typed) combinations.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "1",
        "-9223372036854775807",
        "9223372036854775807",
        "0",
        "2.5",
        "-0.0",
        "'abc'",
        "''",
        "null",
        "true",
        "[]",
        "[1, 'a', null]",
        "{k: 1}",
        "n",
        "n.k",
        "r",
        "p",
        "$p",
        "date('2020-02-29')",
        "datetime('2020-01-01T00:00[Europe/Berlin]')",
        "duration('P1Y2M3DT4H')",
        "localtime('12:00')",
        "range(1, 4)",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(4, 32, 3, |inner| {
        let op = prop::sample::select(vec![
            "+",
            "-",
            "*",
            "/",
            "%",
            "^",
            "=",
            "<>",
            "<",
            ">=",
            "AND",
            "OR",
            "XOR",
            "IN",
            "STARTS WITH",
            "CONTAINS",
            "=~",
        ]);
        let function = prop::sample::select(vec![
            "abs",
            "toInteger",
            "toFloat",
            "toString",
            "size",
            "head",
            "last",
            "reverse",
            "keys",
            "labels",
            "type",
            "length",
            "nodes",
            "properties",
            "sqrt",
            "sign",
            "toUpper",
            "date",
            "duration",
            "datetime",
            "localtime",
            "coalesce",
            "exists",
            "tail",
        ]);
        prop_oneof![
            (inner.clone(), op, inner.clone()).prop_map(|(a, o, b)| format!("({a} {o} {b})")),
            (function, inner.clone()).prop_map(|(f, a)| format!("{f}({a})")),
            inner.clone().prop_map(|a| format!("[x IN {a} | x]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}[{b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("CASE WHEN {a} THEN {b} END")),
            inner.clone().prop_map(|a| format!("NOT {a}")),
            inner.prop_map(|a| format!("any(x IN {a} WHERE x)")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random expressions over a bound node, relationship and path evaluate or fail cleanly.
    #[test]
    fn random_expressions_never_panic(e in expression(), order in any::<bool>()) {
        let tail = if order { " ORDER BY v LIMIT 3" } else { "" };
        let query = format!("MATCH p = (n)-[r]->() WITH n, r, p, {e} AS v RETURN v, count(*){tail}");
        let q = query.clone();
        let outcome = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || {
                let db = execution_database();
                let mut conn = db.connect();
                let mut params = Params::new();
                params.insert("p".into(), CypherValue::Int(1));
                if let Err(e) = conn.execute(&q, &params) {
                    assert_ne!(e.code, "InternalError", "{q}: {e}");
                }
            })
            .expect("spawn")
            .join();
        prop_assert!(outcome.is_ok(), "panicked on: {}", query);
    }
}

/// The deepest expressions the parser accepts evaluate on a default-sized (2 MiB) thread.
#[test]
fn deep_nesting_fits_a_default_stack() {
    type Template = fn(usize) -> String;
    let templates: [Template; 3] = [
        |n| format!("RETURN {}1{}", "[".repeat(n), "]".repeat(n)),
        |n| format!("RETURN {}1{}", "(1 + ".repeat(n), ")".repeat(n)),
        |n| {
            format!(
                "RETURN {}1{}",
                "CASE WHEN true THEN ".repeat(n),
                " END".repeat(n)
            )
        },
    ];
    for template in templates {
        let outcome = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let db = database();
                let mut conn = db.connect();
                // The deepest nesting the parser accepts.
                for n in (1..=256).rev() {
                    match conn.execute(&template(n), &Params::new()) {
                        Err(e) if e.message.contains("nested deeper") => continue,
                        other => return (n, other.map(|r| r.rows.len())),
                    }
                }
                (0, Ok(0))
            })
            .expect("spawn")
            .join();
        assert!(matches!(outcome, Ok((n, Ok(1))) if n > 50), "{outcome:?}");
    }
}
