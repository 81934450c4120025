//! The fraud demo's `--postgres` mode end to end: a throwaway PostgreSQL, the example run as a
//! user runs it, its checks, its clean-up, and the password kept out of everything it prints.
//!
//! The example binary is the one `cargo test` built beside this test (it builds the examples
//! of the packages it tests, with the same features); only when it is missing (a run with a
//! `--test` filter) is it built and run through `cargo run`, which may rebuild dependencies
//! with this package's own feature set — minutes, not seconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use plexus_mirror::cluster::{ClusterOptions, ThrowawayCluster};

#[test]
fn the_fraud_demo_runs_on_postgres_and_cleans_up() {
    let cluster = ThrowawayCluster::start(ClusterOptions::default()).expect("start PostgreSQL");
    let db = std::env::temp_dir().join(format!("plexus-fraud-demo-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&db);
    let output = demo(&cluster.url(), None, Some(&db));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let printed = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    println!("{printed}"); // shown with --nocapture
    assert!(output.status.success(), "{printed}");
    assert!(!stdout.contains(cluster.password()), "{printed}");
    assert!(!stderr.contains(cluster.password()), "{printed}");
    let check = (stdout.lines())
        .find(|line| line.trim_start().starts_with("check "))
        .unwrap_or_else(|| panic!("no check line\n{printed}"));
    assert!(check.ends_with(": equal"), "{printed}");
    let rings = (stdout.lines())
        .find(|line| line.trim_start().starts_with("rings "))
        .unwrap_or_else(|| panic!("no rings line\n{printed}"));
    assert!(rings.contains(" 0 missed"), "{printed}");
    assert!(stdout.contains("mirror status   "), "{printed}");
    // the slot, the publication and the tables are gone
    let left = cluster
        .psql(
            "SELECT (SELECT count(*) FROM pg_replication_slots) + \
                    (SELECT count(*) FROM pg_publication) + \
                    (SELECT count(*) FROM pg_tables WHERE tablename LIKE 'plexus_demo_%')",
        )
        .expect("catalog");
    assert_eq!(left.trim(), "0", "{printed}");

    // the same --db again: refused (it holds the first run's graph), nothing in PostgreSQL
    let output = demo(&cluster.url(), None, Some(&db));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let _ = std::fs::remove_dir_all(&db);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("already holds a graph"), "{stderr}");

    // a wrong password from PGPASSWORD: an error that does not show it, exit status 1
    let url = format!(
        "postgres://{}@127.0.0.1:{}/{}",
        cluster.user(),
        cluster.port(),
        cluster.database()
    );
    let wrong = "not-the-password-4711";
    let output = demo(&url, Some(wrong), None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("with a wrong PGPASSWORD: {stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(!stderr.contains(wrong), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(wrong));
}

/// `target/<profile>/examples/fraud` beside this test's executable (`target/<profile>/deps/`).
fn built_example() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let example = exe.parent()?.parent()?.join("examples").join("fraud");
    example.is_file().then_some(example)
}

/// Runs the demo in `--postgres url` mode for 2 s (into `db` when given).
fn demo(url: &str, pgpassword: Option<&str>, db: Option<&Path>) -> Output {
    let mut command = match built_example() {
        Some(example) => Command::new(example),
        None => {
            let mut cargo = Command::new(env!("CARGO"));
            cargo
                .args(["run", "-q", "--manifest-path"])
                .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
                .args(["--example", "fraud", "--"]);
            cargo
        }
    };
    command.args(["--postgres", url]).args([
        "--seconds",
        "2",
        "--accounts",
        "20000",
        "--writers",
        "2",
    ]);
    if let Some(db) = db {
        command.arg("--db").arg(db);
    }
    match pgpassword {
        Some(password) => command.env("PGPASSWORD", password),
        None => command.env_remove("PGPASSWORD"),
    };
    command.output().expect("run the demo")
}
