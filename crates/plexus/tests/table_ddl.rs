//! Table DDL through Cypher survives restarts: tables and keys declared with `CREATE NODE
//! TABLE`, `CREATE REL TABLE` and `CREATE CONSTRAINT` come back from the WAL and from a
//! checkpoint with their typed columns, keys and rows (the statements' behaviour in full is in
//! `tests/cypher/table_ddl.test`).

mod common;

use common::TempDir;
use plexus::{Config, Connection, Database, Params};

fn run(conn: &mut Connection, query: &str) -> Vec<String> {
    let result = conn
        .execute(query, &Params::new())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    result.rendered_rows()
}

fn error_code(conn: &mut Connection, query: &str) -> &'static str {
    match conn.execute(query, &Params::new()) {
        Ok(_) => panic!("{query}: succeeded"),
        Err(e) => e.code,
    }
}

const TABLES: [&str; 3] = [
    "'Person' | 'NODE' | true | 'id' | ['id INT64', 'name STRING', 'born DATE'] | null | null",
    "'Book' | 'NODE' | true | 'isbn' | ['isbn ANY'] | null | null",
    "'Knows' | 'REL' | true | null | ['since DATE'] | 'Person' | 'Person'",
];

/// The declarations, a row in each table, and the checks that they still hold.
fn check(conn: &mut Connection) {
    assert_eq!(run(conn, "SHOW TABLES"), TABLES);
    assert_eq!(
        run(conn, "SHOW CONSTRAINTS"),
        [
            "'constraint_Person_id' | 'NODE_KEY' | 'NODE' | ['Person'] | ['id']",
            "'constraint_Book_isbn' | 'NODE_KEY' | 'NODE' | ['Book'] | ['isbn']",
        ]
    );
    assert_eq!(
        run(
            conn,
            "MATCH (a:Person)-[k:Knows]->(b:Person) RETURN a.name, k.since, b.name"
        ),
        ["'Ada' | '2020-01-01' | 'Bob'"]
    );
    assert_eq!(
        error_code(conn, "CREATE (:Person {id: 1, name: 'Ada again'})"),
        "ConstraintViolation"
    );
    assert_eq!(
        error_code(conn, "CREATE (:Person {id: 3, born: 1999})"),
        "DatabaseError"
    );
    assert_eq!(
        error_code(conn, "CREATE (:Book {isbn: 'x'})"),
        "ConstraintViolation"
    );
    assert_eq!(
        error_code(conn, "CREATE NODE TABLE Person(id INT64)"),
        "TableAlreadyExists"
    );
}

#[test]
fn tables_declared_with_cypher_survive_reopen_from_the_wal_and_from_a_checkpoint() {
    let dir = TempDir::new("table-ddl");
    let open = || Database::open(&dir.0, Config::default()).expect("open");
    {
        let db = open();
        let mut conn = db.connect();
        for statement in [
            "CREATE NODE TABLE Person(id INT64 PRIMARY KEY, name STRING, born DATE)",
            "CREATE CONSTRAINT book_isbn FOR (b:Book) REQUIRE b.isbn IS UNIQUE",
            "CREATE REL TABLE Knows(FROM Person TO Person, since DATE)",
            "CREATE (:Person {id: 1, name: 'Ada'})-[:Knows {since: date('2020-01-01')}]->\
             (:Person {id: 2, name: 'Bob'}), (:Book {isbn: 'x'})",
        ] {
            run(&mut conn, statement);
        }
        check(&mut conn);
        db.close().expect("close");
    }
    {
        let db = open();
        check(&mut db.connect());
        db.checkpoint().expect("checkpoint");
        db.close().expect("close");
    }
    let db = open();
    check(&mut db.connect());
}
