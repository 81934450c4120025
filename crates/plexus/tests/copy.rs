//! `COPY … FROM` Parquet files (written here with the parquet crate's Arrow writer into the
//! database's import directory) into declared node and rel tables — nulls, dates, timestamps,
//! widened integers, columns by position — and COPY into tables that already hold data: the
//! copied rows join the existing ones, and a key that exists already is a row error (the whole
//! COPY fails and nothing of it is visible, or the row is skipped with IGNORE_ERRORS).

mod common;

use arrow::array::{
    ArrayRef, Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use common::TempDir;
use parquet::arrow::ArrowWriter;
use plexus::{Config, CypherValue, Database, ErrorClass, Params, QueryError, QueryResult};
use std::path::Path;
use std::sync::Arc;

fn write_parquet(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

fn run(db: &Database, query: &str) -> Result<QueryResult, QueryError> {
    db.connect().execute(query, &Params::new())
}

/// Every row rendered in the TCK notation.
fn rows(db: &Database, query: &str) -> Vec<String> {
    let result = run(db, query).unwrap_or_else(|e| panic!("{query}: {e}"));
    result.rendered_rows()
}

fn schema(db: &Database) {
    for ddl in [
        "CREATE NODE TABLE Person(id INT64, name STRING, born DATE, seen TIMESTAMP, PRIMARY KEY (id))",
        "CREATE REL TABLE Knows(FROM Person TO Person, since DATE, weight DOUBLE)",
    ] {
        run(db, ddl).unwrap();
    }
}

#[test]
fn parquet_files_fill_node_and_rel_tables_with_nulls_and_dates() {
    let dir = TempDir::new("copy-parquet");
    let db = Database::open(&dir.0, Config::default()).unwrap();
    let import = dir.0.join("import");
    schema(&db);
    // Columns by position: the names differ from the table's, the id is a 32-bit integer.
    write_parquet(
        &import.join("persons.parquet"),
        vec![
            (
                "person_id",
                Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
            ),
            (
                "full_name",
                Arc::new(StringArray::from(vec![Some("Ada"), None, Some("Cy")])),
            ),
            (
                "birthday",
                Arc::new(Date32Array::from(vec![Some(0), Some(19_000), None])),
            ),
            (
                "last_seen",
                Arc::new(TimestampMillisecondArray::from(vec![
                    Some(86_400_000),
                    None,
                    None,
                ])),
            ),
        ],
    );
    let result = rows(&db, "COPY Person FROM 'persons.parquet'");
    assert_eq!(
        result,
        ["'3 tuples have been copied to the Person table.' | 3 | 0 | []"]
    );
    assert_eq!(
        rows(
            &db,
            "MATCH (p:Person) RETURN p.id, p.name, p.born, p.seen ORDER BY p.id"
        ),
        [
            "1 | 'Ada' | '1970-01-01' | '1970-01-02T00:00Z'",
            "2 | null | '2022-01-08' | null",
            "3 | 'Cy' | null | null",
        ]
    );
    // Dates as text are parsed; an integer weight is widened to DOUBLE; a null property stays
    // absent. FORMAT names the format of a file without the extension.
    write_parquet(
        &import.join("knows.data"),
        vec![
            ("src", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ("dst", Arc::new(Int64Array::from(vec![2, 3]))),
            (
                "since",
                Arc::new(StringArray::from(vec![Some("2020-02-29"), None])),
            ),
            ("weight", Arc::new(Int64Array::from(vec![Some(3), None]))),
        ],
    );
    assert_eq!(
        rows(&db, "COPY Knows FROM 'knows.data' (FORMAT 'parquet')"),
        ["'2 tuples have been copied to the Knows table.' | 2 | 0 | []"]
    );
    assert_eq!(
        rows(
            &db,
            "MATCH (a:Person)-[k:Knows]->(b:Person) RETURN a.id, b.id, k.since, k.weight \
             ORDER BY a.id"
        ),
        ["1 | 2 | '2020-02-29' | 3.0", "2 | 3 | null | null"]
    );
}

#[test]
fn parquet_row_errors_name_the_row_and_leave_nothing() {
    let dir = TempDir::new("copy-parquet-errors");
    let db = Database::open(&dir.0, Config::default()).unwrap();
    let import = dir.0.join("import");
    schema(&db);
    write_parquet(
        &import.join("typed_wrong.parquet"),
        vec![
            ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ("name", Arc::new(Float64Array::from(vec![1.0, 2.5]))),
            ("born", Arc::new(Date32Array::from(vec![None, None]))),
            (
                "seen",
                Arc::new(StringArray::from(vec![None::<&str>, None])),
            ),
        ],
    );
    let error = run(&db, "COPY Person FROM 'typed_wrong.parquet'").unwrap_err();
    assert_eq!(
        (error.class, error.code),
        (ErrorClass::ExternalResourceFailed, "InvalidValue")
    );
    assert!(
        error
            .message
            .contains("typed_wrong.parquet: row 1: field 2 (name): '1.0' is not a STRING value"),
        "{error}"
    );
    write_parquet(
        &import.join("narrow.parquet"),
        vec![("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef)],
    );
    let error = run(&db, "COPY Person FROM 'narrow.parquet'").unwrap_err();
    assert_eq!(error.code, "ColumnCountMismatch", "{error}");
    std::fs::write(import.join("not.parquet"), "id,name\n").unwrap();
    let error = run(&db, "COPY Person FROM 'not.parquet'").unwrap_err();
    assert_eq!(error.code, "FileUnreadable", "{error}");
    // A damaged page behind an intact footer fails while the rows are read (on the reader
    // thread), not when the file is opened: the same error, and nothing copied.
    let damaged = import.join("damaged.parquet");
    write_parquet(
        &damaged,
        vec![
            (
                "id",
                Arc::new(Int64Array::from_iter_values(0..1000)) as ArrayRef,
            ),
            ("name", Arc::new(StringArray::from(vec![Some("x"); 1000]))),
            ("born", Arc::new(Date32Array::from(vec![None; 1000]))),
            (
                "seen",
                Arc::new(StringArray::from(vec![None::<&str>; 1000])),
            ),
        ],
    );
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[4..40].fill(0xff); // the first page's header, right after the magic
    std::fs::write(&damaged, bytes).unwrap();
    let error = run(&db, "COPY Person FROM 'damaged.parquet'").unwrap_err();
    assert_eq!(error.code, "FileUnreadable", "{error}");
    assert!(error.message.contains("damaged.parquet"), "{error}");
    assert_eq!(rows(&db, "MATCH (p:Person) RETURN count(p)"), ["0"]);
}

#[test]
fn copy_appends_to_tables_with_data_and_refuses_existing_keys() {
    let dir = TempDir::new("copy-existing");
    let db = Database::open(&dir.0, Config::default()).unwrap();
    let import = dir.0.join("import");
    schema(&db);
    run(&db, "CREATE (:Person {id: 10, name: 'Old'})").unwrap();
    let people = |path: &str, ids: Vec<i64>| {
        let n = ids.len();
        write_parquet(
            &import.join(path),
            vec![
                ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
                ("name", Arc::new(StringArray::from(vec![Some("New"); n]))),
                ("born", Arc::new(Date32Array::from(vec![None; n]))),
                (
                    "seen",
                    Arc::new(TimestampMillisecondArray::from(vec![None; n])),
                ),
            ],
        );
    };
    people("more.parquet", vec![11, 12]);
    rows(&db, "COPY Person FROM 'more.parquet'");
    assert_eq!(
        rows(&db, "MATCH (p:Person) RETURN p.id, p.name ORDER BY p.id"),
        ["10 | 'Old'", "11 | 'New'", "12 | 'New'"]
    );
    // A key that a committed node has: the COPY fails at that row, and 13 is not copied.
    people("clash.parquet", vec![13, 10]);
    let error = run(&db, "COPY Person FROM 'clash.parquet'").unwrap_err();
    assert_eq!(
        error.class,
        ErrorClass::ConstraintVerificationFailed,
        "{error}"
    );
    assert!(error.message.contains("clash.parquet: row 2:"), "{error}");
    assert!(
        error.message.contains("duplicate primary key 10"),
        "{error}"
    );
    assert_eq!(rows(&db, "MATCH (p:Person) RETURN count(p)"), ["3"]);
    // Skipped with IGNORE_ERRORS; the rest is copied.
    let result = run(&db, "COPY Person FROM 'clash.parquet' (IGNORE_ERRORS true)").unwrap();
    assert!(
        matches!(
            (&result.rows[0][1], &result.rows[0][2]),
            (CypherValue::Int(1), CypherValue::Int(1))
        ),
        "{:?}",
        result.rows
    );
    let warnings = result.render_row(&result.rows[0]);
    assert!(
        warnings.contains("'clash.parquet: row 2: constraint violation: duplicate primary key 10"),
        "{warnings}"
    );
    assert_eq!(rows(&db, "MATCH (p:Person) RETURN count(p)"), ["4"]);
    // Relationships between committed nodes (the old one and copied ones), and a missing one.
    write_parquet(
        &import.join("edges.parquet"),
        vec![
            (
                "src",
                Arc::new(Int64Array::from(vec![10, 11, 12])) as ArrayRef,
            ),
            ("dst", Arc::new(Int64Array::from(vec![13, 10, 99]))),
            ("since", Arc::new(Date32Array::from(vec![None, None, None]))),
            ("weight", Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5]))),
        ],
    );
    let error = run(&db, "COPY Knows FROM 'edges.parquet'").unwrap_err();
    assert_eq!(error.code, "CopyEndpointNotFound", "{error}");
    assert!(
        error
            .message
            .contains("edges.parquet: row 3: the TO node Person with primary key 99"),
        "{error}"
    );
    assert_eq!(rows(&db, "MATCH ()-[k:Knows]->() RETURN count(k)"), ["0"]);
    // REPORT lists every skipped row in a file under the export directory
    let error = run(&db, "COPY Knows FROM 'edges.parquet' (REPORT 'r.txt')").unwrap_err();
    assert_eq!(error.code, "InvalidCopyOption", "{error}");
    for escape in ["../r.txt", "file:///../../r.txt"] {
        let error = run(
            &db,
            &format!("COPY Knows FROM 'edges.parquet' (IGNORE_ERRORS true, REPORT '{escape}')"),
        )
        .unwrap_err();
        assert!(
            error.message.contains("leaves the export directory"),
            "{error}"
        );
    }
    assert_eq!(rows(&db, "MATCH ()-[k:Knows]->() RETURN count(k)"), ["0"]);
    let result = run(
        &db,
        "COPY Knows FROM 'edges.parquet' (IGNORE_ERRORS true, REPORT 'reports/knows.txt')",
    )
    .unwrap();
    let summary = result.render_row(&result.rows[0]);
    assert!(
        summary.contains("Skipped rows are listed in reports/knows.txt"),
        "{summary}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.0.join("export/reports/knows.txt")).unwrap(),
        "edges.parquet: row 3: the TO node Person with primary key 99 does not exist\n"
    );
    assert_eq!(
        rows(
            &db,
            "MATCH (a:Person)-[k:Knows]->(b:Person) RETURN a.id, b.id, k.weight ORDER BY a.id"
        ),
        ["10 | 13 | 0.5", "11 | 10 | 1.5"]
    );
    // The load survives a restart like any commit.
    drop(db);
    let db = Database::open(&dir.0, Config::default()).unwrap();
    assert_eq!(rows(&db, "MATCH (p:Person) RETURN count(p)"), ["4"]);
    assert_eq!(rows(&db, "MATCH ()-[k:Knows]->() RETURN count(k)"), ["2"]);
}

#[test]
fn a_database_without_an_import_directory_refuses_copy() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    run(&db, "CREATE NODE TABLE T(id INT64, PRIMARY KEY (id))").unwrap();
    let error = run(&db, "COPY T FROM 't.csv'").unwrap_err();
    assert_eq!(error.code, "NoImportDirectory");
    assert!(error.message.contains("import_directory"), "{error}");
}
