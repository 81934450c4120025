//! Runs every LDBC Graphalytics validation case in `shared/data/graphalytics` and checks the
//! loaders' error reporting on small malformed files.

use std::fs;
use std::path::{Path, PathBuf};

use plexus_tck::graphalytics::{
    ValidationError, load_adjacency_file, load_vertex_edge_files, validate_dir,
};

/// Number of validation cases in the shared data: 2 example graphs × 6 algorithms + 6
/// algorithms × {directed, undirected} test graphs.
const EXPECTED_CASES: usize = 24;

fn data_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/graphalytics")
}

#[test]
fn graphalytics_reference_outputs() {
    let report = validate_dir(&data_root());
    for case in &report.cases {
        println!("{case}");
    }
    for problem in &report.problems {
        println!("PROBLEM {problem}");
    }
    println!(
        "skipped {} graphs without data here",
        report.skipped_graphs.len()
    );
    println!("{}", report.summary());
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.cases.len(), EXPECTED_CASES);
    assert!(report.all_passed(), "{}", report.summary());
}

/// A scratch directory unique to this test process and name.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("plexus-algo-{}-{name}", std::process::id()));
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
    let path = dir.join(file);
    fs::write(&path, text).expect("write scratch file");
    path
}

#[test]
fn bad_line_names_file_and_line() {
    let dir = scratch_dir("bad-line");
    let v = write(&dir, "g.v", "1\n2\n3\n");
    let e = write(&dir, "g.e", "1 2 0.5\n\n2 x 0.5\n");
    match load_vertex_edge_files(&v, &e, true, Some(0)) {
        Err(ValidationError::Parse {
            path,
            line,
            message,
        }) => {
            assert_eq!((path, line), (e.clone(), 3));
            assert!(message.contains("\"x\""), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    let e = write(&dir, "short.e", "1 2\n");
    let err = load_vertex_edge_files(&v, &e, true, Some(0)).expect_err("missing weight");
    assert!(
        err.to_string().starts_with(&format!("{}:1:", e.display())),
        "{err}"
    );
    let e = write(&dir, "w.e", "1 2 heavy\n");
    assert!(matches!(
        load_vertex_edge_files(&v, &e, true, Some(0)),
        Err(ValidationError::Parse { line: 1, .. })
    ));
    let bad_v = write(&dir, "bad.v", "1\n-2\n");
    assert!(matches!(
        load_vertex_edge_files(&bad_v, &e, true, None),
        Err(ValidationError::Parse { line: 2, .. })
    ));
    let adjacency = write(&dir, "adj", "1 2 3\n2 1 z\n");
    assert!(matches!(
        load_adjacency_file(&adjacency, false),
        Err(ValidationError::Parse { line: 2, .. })
    ));
    fs::remove_dir_all(&dir).expect("remove scratch dir");
}

#[test]
fn unknown_and_duplicate_vertices_are_errors() {
    let dir = scratch_dir("unknown-vertex");
    let v = write(&dir, "g.v", "1\n2\n3\n");
    let e = write(&dir, "g.e", "1 2\n3 99\n");
    match load_vertex_edge_files(&v, &e, false, None) {
        Err(ValidationError::UnknownVertex { path, line, id }) => {
            assert_eq!((path, line, id), (e.clone(), 2, 99));
        }
        other => panic!("expected an unknown-vertex error, got {other:?}"),
    }
    let dup = write(&dir, "dup.v", "1\n2\n1\n");
    match load_vertex_edge_files(&dup, &e, false, None) {
        Err(ValidationError::DuplicateVertex { path, line, id }) => {
            assert_eq!((path, line, id), (dup.clone(), 3, 1));
        }
        other => panic!("expected a duplicate-vertex error, got {other:?}"),
    }
    let missing = dir.join("missing.v");
    assert!(matches!(
        load_vertex_edge_files(&missing, &e, false, None),
        Err(ValidationError::Io { path, .. }) if path == missing
    ));
    fs::remove_dir_all(&dir).expect("remove scratch dir");
}

#[test]
fn loaders_map_ids_in_order() {
    let dir = scratch_dir("loaders");
    let v = write(&dir, "g.v", "30\n10\n20\n");
    let e = write(&dir, "g.e", "30 10 1.5\n10 20 2.5\n");
    let loaded = load_vertex_edge_files(&v, &e, true, Some(0)).expect("valid files");
    assert_eq!(loaded.external_ids, vec![10, 20, 30]);
    assert_eq!(loaded.dense_id(30), Some(2));
    assert_eq!(loaded.graph.out().neighbors(2), &[0]);
    assert_eq!(loaded.graph.out().neighbor_weights(0), Some(&[2.5][..]));
    // an undirected adjacency list names each edge twice; it is loaded once
    let adjacency = write(&dir, "adj", "5 7\n7 5 9\n9 7\n");
    let loaded = load_adjacency_file(&adjacency, false).expect("valid file");
    assert_eq!(loaded.external_ids, vec![5, 7, 9]);
    assert_eq!(loaded.graph.out().edge_count(), 4);
    fs::remove_dir_all(&dir).expect("remove scratch dir");
}

#[test]
fn missing_root_is_a_problem_not_a_panic() {
    let report = validate_dir(Path::new("/nonexistent/plexus-graphalytics"));
    assert!(report.cases.is_empty());
    assert_eq!(report.problems.len(), 1);
    assert!(!report.all_passed());
    assert_eq!(report.summary(), "0 passed, 1 failed");
}
