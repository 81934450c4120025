//! `LOAD CSV` through the embedded API on a database on disk: the default import directory
//! (`<db>/import`, created on open), files read only from under it — a symbolic link to a
//! file outside and a `..` name are refused without the server's paths in the message — and
//! a malformed file's error naming file, line and column while nothing becomes visible.

mod common;

use common::TempDir;
use plexus::settings::{Settings, Source};
use plexus::{Config, CypherValue, Database, ErrorClass, Params};

fn count(db: &Database, query: &str) -> i64 {
    let result = db.connect().execute(query, &Params::new()).unwrap();
    match &result.rows[0][0] {
        CypherValue::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    }
}

#[test]
fn the_default_import_directory_is_created_and_read() {
    let dir = TempDir::new("load-csv-default");
    let db = Database::open(&dir.0, Config::default()).unwrap();
    let import = dir.0.join("import");
    assert!(import.is_dir(), "open creates <db>/import");
    std::fs::write(import.join("p.csv"), "name\nAda\nBob\n").unwrap();
    let mut conn = db.connect();
    conn.execute(
        "LOAD CSV WITH HEADERS FROM 'file:///p.csv' AS r CREATE (:P {name: r.name})",
        &Params::new(),
    )
    .unwrap();
    assert_eq!(count(&db, "MATCH (p:P) RETURN count(p)"), 2);
}

#[test]
fn symlink_and_dotdot_escapes_are_refused_without_server_paths() {
    let dir = TempDir::new("load-csv-escape");
    let db = Database::open(dir.0.join("db"), Config::default()).unwrap();
    let import = dir.0.join("db/import");
    let secret = dir.0.join("secret.csv");
    std::fs::write(&secret, "password\nhunter2\n").unwrap();
    std::os::unix::fs::symlink(&secret, import.join("link.csv")).unwrap();
    std::fs::write(dir.0.join("db/outside.csv"), "x\n1\n").unwrap();
    let mut conn = db.connect();
    let root = dir.0.display().to_string();
    for (query, expected) in [
        (
            "LOAD CSV FROM 'file:///link.csv' AS r RETURN r",
            "symbolic link",
        ),
        (
            "LOAD CSV FROM '../outside.csv' AS r RETURN r",
            "leaves the import directory",
        ),
        (
            "LOAD CSV FROM 'file:///../secret.csv' AS r RETURN r",
            "leaves the import directory",
        ),
    ] {
        let error = conn.execute(query, &Params::new()).expect_err(query);
        assert_eq!(error.class, ErrorClass::ExternalResourceFailed, "{query}");
        let message = error.to_string();
        assert!(message.contains(expected), "{query}: {message}");
        assert!(!message.contains(&root), "{query} leaks a path: {message}");
        assert!(!message.contains("hunter2"), "{query}: {message}");
    }
}

#[test]
fn a_malformed_file_names_its_line_and_column_and_writes_nothing() {
    let dir = TempDir::new("load-csv-malformed");
    let db = Database::open(&dir.0, Config::default()).unwrap();
    std::fs::write(dir.0.join("import/bad.csv"), "a,b\n1,2\n3,\"open\n").unwrap();
    let mut conn = db.connect();
    let error = conn
        .execute(
            "LOAD CSV FROM 'bad.csv' AS r CREATE (:Row {a: r[0]})",
            &Params::new(),
        )
        .unwrap_err();
    assert_eq!(error.class, ErrorClass::ExternalResourceFailed);
    assert!(error.message.contains("bad.csv:3:3"), "{}", error.message);
    assert_eq!(count(&db, "MATCH (r:Row) RETURN count(r)"), 0);
}

/// A file of several of the reader thread's chunks (1,024 records each) arrives whole and in
/// order — `linenumber()` counts every line once — and with batches committing as it goes, a
/// malformed record past the first chunks fails the statement, naming its line, after the
/// batches read before it committed.
#[test]
fn records_arrive_in_order_across_read_ahead_chunks_and_errors_where_they_are() {
    let dir = TempDir::new("load-csv-chunks");
    let db = Database::open(&dir.0, Config::default()).unwrap();
    let lines: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.0.join("import/n.csv"), format!("n\n{lines}")).unwrap();
    let mut conn = db.connect();
    conn.execute(
        "LOAD CSV WITH HEADERS FROM 'n.csv' AS r \
         CREATE (:N {n: toInteger(r.n), line: linenumber()})",
        &Params::new(),
    )
    .unwrap();
    assert_eq!(count(&db, "MATCH (x:N) RETURN count(x)"), 5000);
    assert_eq!(
        count(&db, "MATCH (x:N) WHERE x.line <> x.n + 1 RETURN count(x)"),
        0,
        "record n is on line n + 1"
    );
    std::fs::write(
        dir.0.join("import/bad.csv"),
        format!("n\n{lines}\"unterminated\n"),
    )
    .unwrap();
    let error = conn
        .execute(
            "LOAD CSV WITH HEADERS FROM 'bad.csv' AS r \
             CALL { WITH r CREATE (:M {n: toInteger(r.n)}) } IN TRANSACTIONS OF 1000 ROWS",
            &Params::new(),
        )
        .unwrap_err();
    assert!(error.message.contains("bad.csv:5002:"), "{}", error.message);
    // Whole batches committed before the read that met the bad line (rows are read a batch
    // of records at a time, so the last 1,000 good rows may go with it).
    let committed = count(&db, "MATCH (x:M) RETURN count(x)");
    assert!(
        committed % 1000 == 0 && (1000..5000).contains(&committed),
        "{committed} committed"
    );
}

#[test]
fn a_database_in_memory_has_an_import_directory_only_when_set() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    let error = db
        .connect()
        .execute("LOAD CSV FROM 'x.csv' AS r RETURN r", &Params::new())
        .unwrap_err();
    assert_eq!(error.class, ErrorClass::ExternalResourceFailed);
    assert!(
        error.message.contains("import_directory"),
        "{}",
        error.message
    );

    let dir = TempDir::new("load-csv-memory");
    std::fs::create_dir_all(&dir.0).unwrap();
    std::fs::write(dir.0.join("x.csv"), "1,2\n").unwrap();
    let mut settings = Settings::new();
    let path = dir.0.display().to_string();
    settings
        .set("import_directory", &path, Source::Argument)
        .unwrap();
    let db = Database::open_in_memory_settings(settings).unwrap();
    assert_eq!(db.settings().get("import_directory"), Some(path));
    assert_eq!(count(&db, "LOAD CSV FROM 'x.csv' AS r RETURN size(r)"), 2);
}
