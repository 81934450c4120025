//! `CALL db.export.graphar(outDir, options)` on a running database: the row it yields, the
//! snapshot it writes (read back through the importer), and what it refuses — escapes from
//! the export directory, a database without one, a non-empty target, bad options.

use std::path::PathBuf;

use plexus::{Config, Connection, Database, Params, QueryError};
use plexus_graphar::{GraphInfo, import, register_procedures};

/// A database directory (its export directory is `<dir>/export`), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("plexus-graphar-call-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn call(conn: &mut Connection, query: &str) -> Result<Vec<String>, QueryError> {
    conn.execute(query, &Params::new())
        .map(|result| result.rendered_rows())
}

fn refused(conn: &mut Connection, query: &str) -> QueryError {
    match call(conn, query) {
        Ok(rows) => panic!("{query} succeeded: {rows:?}"),
        Err(e) => e,
    }
}

/// A small graph: 3 people (one also :Admin), 2 cities, knows and livesIn edges.
fn graph(conn: &mut Connection) {
    call(
        conn,
        "CREATE (a:Person:Admin {id: 1, name: 'Ada'}), (b:Person {id: 2, name: 'Bo'}),
                (c:Person {id: 3}), (x:City {name: 'Oslo'}), (y:City {name: 'Rome'}),
                (a)-[:KNOWS {since: 2001}]->(b), (b)-[:KNOWS {since: 2002}]->(c),
                (a)-[:LIVES_IN]->(x), (c)-[:LIVES_IN]->(y)",
    )
    .unwrap();
}

fn open(scratch: &Scratch) -> Database {
    let db = Database::open(&scratch.0, Config::default()).unwrap();
    register_procedures(&db);
    db
}

#[test]
fn exports_one_snapshot_under_the_export_directory() {
    let scratch = Scratch::new("snapshot");
    let db = open(&scratch);
    let mut conn = db.connect();
    graph(&mut conn);
    // An open transaction's uncommitted write is not in the export: it pins a snapshot of
    // its own.
    call(&mut conn, "BEGIN").unwrap();
    call(&mut conn, "CREATE (:Person {id: 4})").unwrap();
    let rows = call(
        &mut conn,
        "CALL db.export.graphar('snaps/monday', {chunkSize: 2, types: ['KNOWS', 'LIVES_IN']})
           YIELD directory, graphFile, vertices, edges, vertexTypes, edgeTypes
         RETURN directory, graphFile, vertices, edges, vertexTypes, edgeTypes",
    )
    .unwrap();
    call(&mut conn, "COMMIT").unwrap();
    assert_eq!(
        rows,
        ["'snaps/monday' | 'snaps/monday/monday.graph.yml' | 5 | 4 | 2 | 2"]
    );
    let graph_file = scratch.0.join("export/snaps/monday/monday.graph.yml");
    assert!(graph_file.is_file());

    // Read back: the same vertices, labels and edges.
    let copy = Database::open_in_memory(Config::default()).unwrap();
    import(&copy, &GraphInfo::load(&graph_file).unwrap(), &mut |_| {}).unwrap();
    let mut copy_conn = copy.connect();
    assert_eq!(
        call(
            &mut copy_conn,
            "MATCH (p:Person) RETURN p.id, p.name, p:Admin ORDER BY p.id"
        )
        .unwrap(),
        ["1 | 'Ada' | true", "2 | 'Bo' | false", "3 | null | false"]
    );
    assert_eq!(
        call(
            &mut copy_conn,
            "MATCH (a)-[r]->(b) RETURN a.id, type(r), r.since, coalesce(b.id, b.name)
             ORDER BY a.id, type(r)"
        )
        .unwrap(),
        [
            "1 | 'KNOWS' | 2001 | 2",
            "1 | 'LIVES_IN' | null | 'Oslo'",
            "2 | 'KNOWS' | 2002 | 3",
            "3 | 'LIVES_IN' | null | 'Rome'",
        ]
    );

    // The default name is the directory's last component, or `graph`; a name is checked.
    let rows = call(
        &mut conn,
        "CALL db.export.graphar('file:///people', {labels: ['Person'], name: 'p'})
           YIELD graphFile, vertices, edges RETURN graphFile, vertices, edges",
    )
    .unwrap();
    assert_eq!(rows, ["'people/p.graph.yml' | 4 | 2"]);
    let error = refused(
        &mut conn,
        "CALL db.export.graphar('named', {name: '../x'}) YIELD graphFile RETURN graphFile",
    );
    assert!(error.message.contains("plain file name"), "{error}");

    // The options map may be left out: all defaults, named after the directory.
    let rows = call(
        &mut conn,
        "CALL db.export.graphar('everything') YIELD graphFile, vertices RETURN graphFile, vertices",
    )
    .unwrap();
    assert_eq!(rows, ["'everything/everything.graph.yml' | 6"]);
}

#[test]
fn refuses_escapes_non_empty_targets_and_bad_options() {
    let scratch = Scratch::new("refusals");
    let db = open(&scratch);
    let mut conn = db.connect();
    graph(&mut conn);
    let export = |out: &str| {
        format!("CALL db.export.graphar('{out}', {{}}) YIELD directory RETURN directory")
    };

    for escape in ["../out", "file:///../../out", "a/../../out"] {
        let error = refused(&mut conn, &export(escape));
        assert_eq!(error.code, "FileLocationRefused", "{error}");
        assert!(
            error.message.contains("leaves the export directory"),
            "{error}"
        );
    }
    assert!(!scratch.0.join("out").exists());
    let error = refused(&mut conn, &export("."));
    assert!(
        error.message.contains("the export directory itself"),
        "{error}"
    );

    // A symbolic link leading out of the export directory.
    let outside = scratch.0.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, scratch.0.join("export/link")).unwrap();
    let error = refused(&mut conn, &export("link/snap"));
    assert!(error.message.contains("symbolic link"), "{error}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

    // A non-empty target is refused and left alone; an empty one is used.
    std::fs::create_dir_all(scratch.0.join("export/full")).unwrap();
    std::fs::write(scratch.0.join("export/full/keep.txt"), "mine").unwrap();
    let error = refused(&mut conn, &export("full"));
    assert_eq!(error.code, "ExportFailed", "{error}");
    assert!(
        error.message.contains("full: exists and is not empty"),
        "{error}"
    );
    assert!(
        !error.message.contains(&*scratch.0.to_string_lossy()),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(scratch.0.join("export/full/keep.txt")).unwrap(),
        "mine"
    );
    std::fs::create_dir_all(scratch.0.join("export/empty")).unwrap();
    assert_eq!(call(&mut conn, &export("empty")).unwrap(), ["'empty'"]);
    let error = refused(&mut conn, &export("empty"));
    assert!(error.message.contains("not empty"), "{error}");

    for (options, expected) in [
        (
            "{chunkSize: 0}",
            "option 'chunkSize' must be a positive integer",
        ),
        (
            "{labels: 'Person'}",
            "option 'labels' must be a list of strings",
        ),
        ("{colour: 'red'}", "unknown option 'colour'"),
    ] {
        let error = refused(
            &mut conn,
            &format!("CALL db.export.graphar('o', {options}) YIELD directory RETURN directory"),
        );
        assert_eq!(error.code, "InvalidArgumentValue", "{error}");
        assert!(error.message.contains(expected), "{error}");
    }
}

#[test]
fn a_database_without_an_export_directory_refuses() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    register_procedures(&db);
    let mut conn = db.connect();
    let error = refused(
        &mut conn,
        "CALL db.export.graphar('snap', {}) YIELD directory RETURN directory",
    );
    assert_eq!(error.code, "NoExportDirectory", "{error}");
    assert!(error.message.contains("has none"), "{error}");
    // Connections opened before registration do not have the procedure.
    let other = Database::open_in_memory(Config::default()).unwrap();
    let mut early = other.connect();
    register_procedures(&other);
    let error = refused(
        &mut early,
        "CALL db.export.graphar('snap', {}) YIELD directory RETURN directory",
    );
    assert_eq!(error.code, "ProcedureNotFound", "{error}");
}
