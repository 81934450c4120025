//! `plexus import graphar` and `plexus export graphar` driven as users drive them: the built
//! binary on the shared GraphAr fixtures, the result read back through `plexus::Database`.

use std::path::Path;
use std::process::Command;

use plexus::{Config, Database};

mod common;
use common::{Scratch, plexus, text};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/graphar-testing"
);

fn counts(db: &Path) -> (usize, usize) {
    let db = Database::open(db, Config::default()).unwrap();
    let mut tx = db.begin();
    let vertices = tx.scan_all_vertices().unwrap().len();
    let edges = ["knows", "created"]
        .iter()
        .map(|t| tx.scan_edges(t).unwrap().len())
        .sum();
    (vertices, edges)
}

#[test]
fn import_export_and_import_again() {
    let dir = Scratch::new("graphar-cli", "round-trip");
    let db = dir.0.join("db");
    let graph = Path::new(FIXTURES).join("modern_graph/modern_graph.graph.yml");
    let out = plexus(&[Path::new("import"), Path::new("graphar"), &graph, &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("imported 6 nodes, 6 relationships"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(counts(&db), (6, 6));

    let export = dir.0.join("export");
    let out = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["export", "graphar"])
        .args([&db, &export])
        .args(["--chunk-size", "3", "--name", "modern"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("exported 6 vertices (2 types), 6 edges (2 types)"));

    let copy = dir.0.join("copy");
    let out = plexus(&[
        Path::new("import"),
        Path::new("graphar"),
        &export.join("modern.graph.yml"),
        &copy,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(counts(&copy), (6, 6));
}

#[test]
fn a_failed_import_names_the_file_and_leaves_no_database() {
    let dir = Scratch::new("graphar-cli", "orc");
    let db = dir.0.join("db");
    let graph = Path::new(FIXTURES).join("ldbc_sample/orc/ldbc_sample.graph.yml");
    let out = plexus(&[Path::new("import"), Path::new("graphar"), &graph, &db]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("ORC payloads are not supported"), "{err}");
    assert!(err.contains("vertex/person/"), "{err}");
    assert!(!db.exists());
}

#[test]
fn export_needs_an_existing_database() {
    let dir = Scratch::new("graphar-cli", "missing");
    let out = plexus(&[
        Path::new("export"),
        Path::new("graphar"),
        &dir.0.join("nothing"),
        &dir.0.join("out"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no database directory"));
}

#[test]
fn the_shell_has_call_db_export_graphar() {
    let dir = Scratch::new("graphar-cli", "shell-call");
    let db = dir.0.join("db");
    let script = "CREATE (:Person {name: 'Ada'})-[:KNOWS]->(:Person {name: 'Bo'});\n\
                  CALL db.export.graphar('snap', {chunkSize: 4}) YIELD graphFile, vertices, edges\n\
                  RETURN graphFile, vertices, edges;\n";
    let out = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .arg("shell")
        .arg(&db)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("piped stdin")
                .write_all(script.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("snap/snap.graph.yml"),
        "{}",
        text(&out.stdout)
    );
    assert!(db.join("export/snap/snap.graph.yml").is_file());
}
