//! `plexus shell` driven as users drive it: the built binary with a script on stdin (stdin is
//! a pipe, so the shell runs in script mode).
//!
//! TRANSCRIPTS
//! ===========
//! Every `tests/transcripts/NAME.cypher` runs with `--echo` on a fresh database; its stdout
//! must equal `NAME.out`. If `NAME.err` exists the run must fail (exit 1) with exactly that on
//! stderr; otherwise it must succeed with nothing on stderr. To add a case, write the
//! `.cypher` file and run `PLEXUS_BLESS=1 cargo test -p plexus-cli --test shell` to create
//! the expected files — then read them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A database directory removed when dropped.
struct TempDb(PathBuf);

impl TempDb {
    fn new(name: &str) -> TempDb {
        let dir =
            std::env::temp_dir().join(format!("plexus-shell-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDb(dir)
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `plexus <args>` with `stdin` piped in.
fn plexus(args: &[&std::ffi::OsStr], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run plexus");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_string();
    // Write from a thread: a large output could otherwise fill its pipe while we still write.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let output = child.wait_with_output().expect("wait for plexus");
    writer.join().expect("stdin writer");
    output
}

fn shell(db: &Path, script: &str) -> Output {
    plexus(&["shell".as_ref(), db.as_os_str()], script)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `script`, asserting success, and returns stdout.
fn shell_ok(db: &Path, script: &str) -> String {
    let output = shell(db, script);
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    assert_eq!(text(&output.stderr), "");
    text(&output.stdout)
}

#[test]
fn creates_and_queries_with_column_types() {
    let db = TempDb::new("query");
    let out = shell_ok(
        &db.0,
        "CREATE (:Person {name: 'Ada', age: 36})-[:KNOWS]->(:Person {name: 'Bob'});\n\
         MATCH (p:Person) RETURN p.name AS name, p.age AS age, p AS node ORDER BY name;",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "created 2 nodes, 1 relationship, set 3 properties, added 2 labels"
    );
    assert!(lines[2].starts_with("| name   | age     | node"), "{out}");
    assert!(lines[3].starts_with("| STRING | INTEGER | NODE"), "{out}");
    assert!(out.contains("| 'Ada'  | 36      | (:Person {"), "{out}");
    assert!(out.contains("| 'Bob'  | null    |"), "{out}");
    assert_eq!(lines.last(), Some(&"2 rows"));
}

#[test]
fn multi_line_statements_and_semicolons_in_strings() {
    let db = TempDb::new("multiline");
    let out = shell_ok(
        &db.0,
        "RETURN 'a;b' AS s, // a comment; still the same statement\n\
         \x20 \"c;d\" AS t /* and; here */\n\
         ;WITH 1 AS `x;y` RETURN `x;y` AS u;",
    );
    // The second statement fails if it was split at the `;` inside the backquotes.
    assert!(out.contains("| 'a;b'  | 'c;d'  |"), "{out}");
    assert!(out.contains("| STRING | STRING |"), "{out}");
}

#[test]
fn mixed_column_type() {
    let db = TempDb::new("mixed");
    let out = shell_ok(&db.0, "UNWIND [1, 'two', null] AS x RETURN x;");
    assert!(out.contains("| mixed |"), "{out}");
}

#[test]
fn schema_lists_tables_properties_and_keys() {
    let db = TempDb::new("schema");
    {
        let database = plexus::Database::open(&db.0, plexus::Config::default()).expect("open");
        database
            .create_vertex_table(
                &plexus::VertexTableSpec::new("City")
                    .property("id", plexus::DataType::Int64)
                    .property("name", plexus::DataType::String)
                    .primary_key("id"),
            )
            .expect("vertex table");
        database
            .create_edge_table("City", "ROAD", "City", &[("km", plexus::DataType::Float64)])
            .expect("edge table");
        database.close().expect("close");
    }
    let out = shell_ok(
        &db.0,
        "CREATE (:Person {name: 'Ada'})-[:LIVES_IN]->(:Town);\n:schema\n",
    );
    assert!(out.contains("labels: City, Person, Town\n"), "{out}");
    assert!(
        out.contains("  City {id INT64 PRIMARY KEY, name STRING}\n"),
        "{out}"
    );
    assert!(out.contains("  Person (implicit)\n"), "{out}");
    assert!(
        out.contains("  (City)-[:ROAD {km FLOAT64}]->(City)\n"),
        "{out}"
    );
    assert!(
        out.contains("  (Person)-[:LIVES_IN]->(Town) (implicit)\n"),
        "{out}"
    );
}

#[test]
fn explain_prints_the_plan_without_running() {
    let db = TempDb::new("explain");
    let out = shell_ok(
        &db.0,
        ":explain CREATE (:Person {name: 'Ada'});\nMATCH (n) RETURN count(n) AS n;",
    );
    assert!(out.contains("Create"), "{out}");
    assert!(
        out.contains("| 0 "),
        "EXPLAIN must not create anything: {out}"
    );
}

#[test]
fn timing_toggles_the_time_in_the_summary() {
    let db = TempDb::new("timing");
    let out = shell_ok(
        &db.0,
        "RETURN 1 AS one;\n:timing\nRETURN 1 AS one;\n:timing\n",
    );
    let summaries: Vec<&str> = out.lines().filter(|l| l.starts_with("1 row")).collect();
    assert_eq!(summaries.len(), 2, "{out}");
    assert_eq!(summaries[0], "1 row");
    assert!(
        summaries[1].starts_with("1 row, ") && summaries[1].ends_with(" ms"),
        "{out}"
    );
    assert!(out.contains("timing on\n") && out.contains("timing off\n"));
}

#[test]
fn rows_limit_caps_printed_rows() {
    let db = TempDb::new("rows");
    let out = shell_ok(
        &db.0,
        ":rows 2\nUNWIND range(1, 5) AS i RETURN 'row' + toString(i) AS r;",
    );
    assert!(out.contains("'row2'") && !out.contains("'row3'"), "{out}");
    assert!(out.contains("… 3 more rows\n5 rows\n"), "{out}");
}

#[test]
fn first_error_stops_the_script_with_its_position() {
    let db = TempDb::new("error");
    let output = shell(
        &db.0,
        "CREATE (:Before);\n\nMATCH (n:Before)\n  RETURN n.x +;\nCREATE (:After);\n",
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.starts_with("plexus: SyntaxError ("), "{stderr}");
    assert!(stderr.contains(" at line 4, column "), "{stderr}");
    assert!(stderr.contains("\n    RETURN n.x +\n"), "{stderr}");
    let out = shell_ok(
        &db.0,
        "MATCH (b:Before) WITH count(b) AS b OPTIONAL MATCH (a:After) \
         WITH b, count(a) AS a RETURN toString(b) + '/' + toString(a) AS before_after;",
    );
    assert!(out.contains("'1/0'"), "nothing after the error runs: {out}");
}

#[test]
fn data_persists_across_shell_runs() {
    let db = TempDb::new("persist");
    shell_ok(&db.0, "CREATE (:Note {text: 'kept'});");
    shell_ok(
        &db.0,
        "BEGIN;\nCREATE (:Note {text: 'committed'});\nCOMMIT;",
    );
    let output = shell(&db.0, "BEGIN;\nCREATE (:Note {text: 'left open'});\n");
    assert!(output.status.success());
    assert!(text(&output.stderr).contains("rolled back"));
    let out = shell_ok(&db.0, "MATCH (n:Note) RETURN n.text AS t ORDER BY t;");
    assert!(
        out.contains("'committed'") && out.contains("'kept'"),
        "{out}"
    );
    assert!(!out.contains("left open"), "{out}");
}

#[test]
fn database_in_use_by_another_process() {
    let db = TempDb::new("in-use");
    let held = plexus::Database::open(&db.0, plexus::Config::default()).expect("open");
    let output = shell(&db.0, "RETURN 1;");
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "database {} is in use by another process",
            db.0.display()
        )),
        "{stderr}"
    );
    drop(held);
}

#[test]
fn unknown_option_is_a_usage_error() {
    let output = plexus(&["shell".as_ref(), "--no-such-option".as_ref()], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("Usage:"));
    let output = plexus(&["shell".as_ref()], "");
    assert_eq!(output.status.code(), Some(2), "the database is required");
}

#[test]
fn transcripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let bless = std::env::var_os("PLEXUS_BLESS").is_some();
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/transcripts")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "cypher"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty());
    let mut failures = Vec::new();
    for script in &scripts {
        let name = script.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        let db = TempDb::new(&format!("transcript-{name}"));
        let input = std::fs::read_to_string(script).expect("read script");
        let output = plexus(
            &["shell".as_ref(), "--echo".as_ref(), db.0.as_os_str()],
            &input,
        );
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        let (out_path, err_path) = (script.with_extension("out"), script.with_extension("err"));
        if bless {
            std::fs::write(&out_path, &stdout).expect("write .out");
            if stderr.is_empty() {
                let _ = std::fs::remove_file(&err_path);
            } else {
                std::fs::write(&err_path, &stderr).expect("write .err");
            }
            continue;
        }
        let expected_out = std::fs::read_to_string(&out_path).unwrap_or_default();
        let expected_err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let expected_code = if err_path.exists() { 1 } else { 0 };
        if stdout != expected_out
            || stderr != expected_err
            || output.status.code() != Some(expected_code)
        {
            failures.push(format!(
                "{name}: exit {:?} (expected {expected_code})\n--- stdout\n{stdout}\
                 --- expected\n{expected_out}--- stderr\n{stderr}--- expected\n{expected_err}",
                output.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The README shows the `tour` transcript; it must be the transcript this test checks.
#[test]
fn readme_shows_the_tour_transcript() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let tour = std::fs::read_to_string(root.join("crates/plexus-cli/tests/transcripts/tour.out"))
        .expect("tour.out");
    assert!(
        readme.contains(&format!("```text\n{tour}```")),
        "README.md's shell session differs from tests/transcripts/tour.out"
    );
}

#[test]
fn isolation_command_sets_the_session_level() {
    let db = TempDb::new("isolation");
    let out = shell_ok(
        &db.0,
        ":isolation\n:isolation serializable\nSHOW TRANSACTION ISOLATION LEVEL;\n\
         :isolation Snapshot\nSHOW TRANSACTION ISOLATION LEVEL;\n",
    );
    assert!(
        out.starts_with("isolation level snapshot\nisolation level serializable\n"),
        "{out}"
    );
    assert!(out.contains("| 'serializable'  |"), "{out}");
    assert!(out.contains("isolation level snapshot\n"), "{out}");
    let output = shell(&db.0, "RETURN 1;\n:isolation read-committed\nRETURN 2;\n");
    assert_eq!(output.status.code(), Some(1));
    let err = text(&output.stderr);
    assert!(
        err.contains("line 2: unknown isolation level 'read-committed'"),
        "{err}"
    );
}

#[test]
fn settings_come_from_flags_over_plexus_toml() {
    let db = TempDb::new("settings");
    std::fs::create_dir_all(&db.0).unwrap();
    std::fs::write(
        db.0.join("plexus.toml"),
        "durability = 'none'\nrow_cache_bytes = '2GiB'\n",
    )
    .unwrap();
    let args: Vec<&std::ffi::OsStr> = vec![
        "shell".as_ref(),
        db.0.as_os_str(),
        "--set".as_ref(),
        "row_cache_bytes=96MiB".as_ref(),
        "--default-isolation".as_ref(),
        "serializable".as_ref(),
    ];
    let output = plexus(
        &args,
        "SHOW TRANSACTION ISOLATION LEVEL;\n\
         CALL db.settings() YIELD name, value, source \
         WHERE name IN ['durability', 'row_cache_bytes', 'default_isolation'] \
         RETURN name, value, source = 'command line' AS from_flags;\n:settings\n",
    );
    let out = text(&output.stdout);
    assert!(output.status.success(), "{out}\n{}", text(&output.stderr));
    assert!(out.contains("'serializable'"), "{out}");
    assert!(
        out.contains("| 'durability'        | 'none'         | false"),
        "{out}"
    );
    assert!(
        out.contains("| 'row_cache_bytes'   | '96MiB'        | true"),
        "{out}"
    );
    assert!(
        out.contains("| 'default_isolation' | 'serializable' | true"),
        "{out}"
    );
    assert!(
        out.contains("'memtable_budget_bytes'"),
        ":settings lists everything\n{out}"
    );

    for (flag, value, message) in [
        ("--set", "row_cache=1GiB", "did you mean 'row_cache_bytes'"),
        ("--set", "durability", "NAME=VALUE"),
        (
            "--memtable-budget",
            "much",
            "setting 'memtable_budget_bytes'",
        ),
    ] {
        let args: Vec<&std::ffi::OsStr> = vec![
            "shell".as_ref(),
            db.0.as_os_str(),
            flag.as_ref(),
            value.as_ref(),
        ];
        let output = plexus(&args, "RETURN 1;\n");
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        let err = text(&output.stderr);
        assert!(err.contains(message), "{flag} {value}: {err}");
    }
}
