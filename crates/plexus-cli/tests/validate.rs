//! `plexus algo validate` on the shared Graphalytics data: every case loaded into a Plexus
//! database and run through the snapshot API, through the library function the binary uses;
//! and the binary's exit status and usage errors.

use std::path::{Path, PathBuf};
use std::process::Command;

use plexus_cli::{Event, validate_graphalytics};

/// 2 example graphs × 6 algorithms + 6 algorithms × {directed, undirected} test graphs.
const EXPECTED_CASES: usize = 24;

fn data_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/graphalytics")
}

#[test]
fn all_graphalytics_cases_pass_through_the_database() {
    let mut streamed = 0;
    let report = validate_graphalytics(&data_root(), None, &mut |event| {
        if let Event::Case(case) = event {
            println!("{case}");
            streamed += 1;
        }
    })
    .expect("a scratch database can be created");
    for problem in &report.problems {
        println!("PROBLEM {problem}");
    }
    println!("{}", report.summary());
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.cases.len(), EXPECTED_CASES);
    assert_eq!(
        streamed, EXPECTED_CASES,
        "every case is reported as it finishes"
    );
    assert!(report.all_passed(), "{}", report.summary());
}

#[test]
fn binary_exit_status_and_usage_errors() {
    let plexus = env!("CARGO_BIN_EXE_plexus");
    let ok = Command::new(plexus)
        .args(["algo", "validate"])
        .arg(data_root())
        .output()
        .expect("run plexus");
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{stdout}");
    assert_eq!(
        stdout.lines().last(),
        Some(format!("{EXPECTED_CASES} passed, 0 failed").as_str())
    );

    let missing = Command::new(plexus)
        .args(["algo", "validate", "/nonexistent/graphalytics"])
        .output()
        .expect("run plexus");
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stdout).ends_with("0 passed, 1 failed\n"));

    for args in [
        &["algo", "frob"][..],
        &["algo", "validate", "--bogus", "x"],
        &["nope"],
    ] {
        let usage = Command::new(plexus)
            .args(args)
            .output()
            .expect("run plexus");
        assert_eq!(usage.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&usage.stderr).contains("Usage:"),
            "{args:?}"
        );
    }
}
