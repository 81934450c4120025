//! Golden tests: every `tests/cypher/**/*.test` file at the repository root, each on a fresh
//! in-memory database, statements run in file order on one connection.
//!
//! FORMAT (sqllogictest-style; records are separated by blank lines, `#` starts a comment)
//! ======
//! ```text
//! statement ok
//! CREATE (:Person {name: 'Ada'})
//!
//! query            # rows in the order returned
//! MATCH (p:Person) RETURN p.name, p
//! ----
//! 'Ada' | (:Person {name: 'Ada'})
//!
//! query rowsort    # rows compared after sorting their text
//! ...
//!
//! error SyntaxError UndefinedVariable     # class, optionally the detail code
//! RETURN x
//!
//! error SyntaxError UndefinedVariable     # optionally the whole message, with its position
//! RETURN x
//! ----
//! SyntaxError (UndefinedVariable) at line 1, column 8: variable `x` not defined
//!
//! explain          # the EXPLAIN tree of the query, one operator a line, indentation trimmed
//! MATCH (p:Person) RETURN p.name
//! ----
//! Results p.name=s1
//! └ Project s1 = s0.name
//! └ NodeByLabelScan s0:Person est_rows=1
//! └ Argument
//!
//! explain verbose  # EXPLAIN VERBOSE: the plan as bound, then after each optimizer pass
//! MATCH (p:Person) WHERE p.id = 1 RETURN p.name
//! ----
//! == bound ==
//! Results p.name=s1
//! …
//! == predicate_pushdown ==
//! …
//!
//! setting          # a connection setting for the records that follow (not Cypher)
//! parallel workers=2 min_scan_rows=10 morsel=4
//!
//! params           # the parameters of the records that follow: a Cypher map expression
//! {label: 'Person', ids: [1, 2]}
//! ```
//! Every database's import directory is `tests/cypher/import`, where the `LOAD CSV` cases'
//! files are.
//! `parallel` sets `Connection::set_parallel` (each key optional, the others keep their
//! values); `parallel off` runs everything serially.
//! Values print in the TCK notation (`QueryResult::render`); an empty result has nothing
//! after `----`.
//!
//! UPDATING EXPECTED OUTPUT
//! ========================
//! `PLEXUS_BLESS=1 cargo test -p plexus-tck --test golden -- --exact golden_cypher_tests`
//! rewrites the `----` block of every `query` and `explain` record whose output differs with
//! what the database now returns (sorted for `rowsort`), instead of failing; records without
//! a block, `error` records and the `jit = on` / `off` runs are never rewritten. Review the diff
//! before committing it: blessing accepts whatever the code does.

use plexus::settings::{Settings, Source};
use plexus::{Config, Database, Params};
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "test") {
            out.push(path);
        }
    }
}

struct Record {
    line: usize,
    header: String,
    query: String,
    expected: Vec<String>,
    /// The indices of the expected lines in the file, when the record has a `----` block.
    expected_at: Option<std::ops::Range<usize>>,
}

fn records(text: &str) -> Vec<Record> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.trim().is_empty() || line.starts_with('#') {
            i += 1;
            continue;
        }
        let header_line = i + 1;
        let header = line.split('#').next().unwrap_or("").trim().to_string();
        i += 1;
        let mut query = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i].trim() != "----" {
            query.push(lines[i]);
            i += 1;
        }
        let mut expected = Vec::new();
        let mut expected_at = None;
        if i < lines.len() && lines[i].trim() == "----" {
            i += 1;
            let start = i;
            while i < lines.len() && !lines[i].trim().is_empty() {
                expected.push(lines[i].trim().to_string());
                i += 1;
            }
            expected_at = Some(start..i);
        }
        out.push(Record {
            line: header_line,
            header,
            query: query.join("\n"),
            expected,
            expected_at,
        });
    }
    out
}

/// The statement an `explain` record runs: `EXPLAIN query`, or with `verbose`
/// `EXPLAIN VERBOSE query`.
fn explain_text(modifier: Option<&str>, query: &str) -> String {
    match modifier {
        Some("verbose") => format!("EXPLAIN VERBOSE {query}"),
        _ => format!("EXPLAIN {query}"),
    }
}

/// A `setting` record (see FORMAT).
fn apply_setting(conn: &mut plexus::Connection, text: &str) -> Result<(), String> {
    let mut words = text.split_whitespace();
    match words.next() {
        Some("parallel") => {
            let mut config = conn.parallel().clone();
            for word in words {
                match word.split_once('=') {
                    None if word == "off" => config.workers = 1,
                    Some(("workers", n)) => {
                        config.workers = n.parse().map_err(|e| format!("{e}"))?
                    }
                    Some(("min_scan_rows", n)) => {
                        config.min_scan_rows = n.parse().map_err(|e| format!("{e}"))?
                    }
                    Some(("morsel", n)) => {
                        config.morsel_vertices = n.parse().map_err(|e| format!("{e}"))?
                    }
                    _ => return Err(format!("unknown parallel setting '{word}'")),
                }
            }
            conn.set_parallel(config);
            Ok(())
        }
        _ => Err(format!("unknown setting '{text}'")),
    }
}

/// The parameters a `params` record gives: its map expression, evaluated by the database.
fn query_params(conn: &mut plexus::Connection, map: &str) -> Result<Params, String> {
    let result = conn
        .execute(&format!("RETURN {map} AS params"), &Params::new())
        .map_err(|e| format!("params: {e}"))?;
    match result.rows.first().and_then(|row| row.first()) {
        Some(plexus::CypherValue::Map(map)) => Ok(map
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()),
        _ => Err(format!("params: `{map}` is not a map")),
    }
}

fn run_file(path: &Path, jit: Option<&str>) -> Vec<String> {
    let mut failures = Vec::new();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return vec![format!("{}: {e}", path.display())],
    };
    let db = match Database::open_in_memory_settings(golden_settings(jit)) {
        Ok(db) => db,
        Err(e) => return vec![format!("cannot open a database: {e}")],
    };
    let mut conn = db.connect();
    let mut params = Params::new();
    let bless = jit.is_none() && std::env::var_os("PLEXUS_BLESS").is_some();
    let mut blessed: Vec<(std::ops::Range<usize>, Vec<String>)> = Vec::new();
    let mut compare =
        |failures: &mut Vec<String>, record: &Record, at: &str, actual: Vec<String>| match (
            mismatch(at, &record.expected, &actual),
            &record.expected_at,
        ) {
            (None, _) => {}
            (Some(_), Some(range)) if bless => blessed.push((range.clone(), actual)),
            (Some(failure), _) => failures.push(failure),
        };
    for record in records(&text) {
        let at = format!("{}:{}", path.display(), record.line);
        let mut words = record.header.split_whitespace();
        let kind = words.next().unwrap_or("");
        if kind == "setting" {
            if let Err(e) = apply_setting(&mut conn, &record.query) {
                failures.push(format!("{at}: {e}"));
            }
            continue;
        }
        if kind == "params" {
            match query_params(&mut conn, &record.query) {
                Ok(p) => params = p,
                Err(e) => failures.push(format!("{at}: {e}")),
            }
            continue;
        }
        let result = conn.execute(&record.query, &params);
        match kind {
            "statement" => {
                if let Err(e) = result {
                    failures.push(format!("{at}: statement failed: {e}"));
                }
            }
            "query" => match result {
                Err(e) => failures.push(format!("{at}: query failed: {e}")),
                Ok(r) => {
                    let mut actual: Vec<String> =
                        r.rows.iter().map(|row| r.render_row(row)).collect();
                    if words.next() == Some("rowsort") {
                        actual.sort();
                        let mut expected = record.expected.clone();
                        expected.sort();
                        if expected == actual {
                            continue;
                        }
                    }
                    compare(&mut failures, &record, &at, actual);
                }
            },
            "explain" => match conn.execute(&explain_text(words.next(), &record.query), &params) {
                Err(e) => failures.push(format!("{at}: explain failed: {e}")),
                Ok(r) => {
                    let plan = r.plan.unwrap_or_default();
                    let actual: Vec<String> = plan.lines().map(|l| l.trim().to_string()).collect();
                    if jit == Some("off") {
                        // The plans alike; the JIT notes (there with the files' own `SET
                        // SESSION jit`) are the default run's to check.
                        let notes_cut = |lines: &[String]| -> Vec<String> {
                            lines.iter().map(|l| without_jit_note(l)).collect()
                        };
                        let expected = notes_cut(&record.expected);
                        failures.extend(mismatch(&at, &expected, &notes_cut(&actual)));
                        continue;
                    }
                    compare(&mut failures, &record, &at, actual);
                }
            },
            "error" => {
                let class = words.next().unwrap_or("");
                let code = words.next();
                match result {
                    Ok(_) => failures.push(format!("{at}: expected {class}, the query succeeded")),
                    Err(e) => {
                        if e.class.name() != class || code.is_some_and(|c| c != e.code) {
                            failures.push(format!("{at}: expected {class} {code:?}, got {e}"));
                        } else if !record.expected.is_empty() {
                            failures.extend(mismatch(&at, &record.expected, &[e.to_string()]));
                        }
                    }
                }
            }
            other => failures.push(format!("{at}: unknown record kind `{other}`")),
        }
    }
    if !blessed.is_empty() {
        failures.extend(rewrite(path, &text, blessed));
    }
    failures
}

/// Writes `text` back to `path` with each range of lines replaced (see UPDATING EXPECTED
/// OUTPUT); an error message if it cannot.
fn rewrite(
    path: &Path,
    text: &str,
    mut blessed: Vec<(std::ops::Range<usize>, Vec<String>)>,
) -> Option<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    blessed.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    for (range, actual) in blessed {
        lines.splice(range, actual);
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    std::fs::write(path, out)
        .err()
        .map(|e| format!("{}: cannot bless: {e}", path.display()))
}

/// The settings of every golden database: the defaults, with `tests/cypher/import` as the
/// import directory (the CSV files of the `LOAD CSV` cases) and `jit`, if given, as
/// `default_jit`.
fn golden_settings(jit: Option<&str>) -> Settings {
    let mut settings = Settings::from_config(Config::default());
    if let Some(jit) = jit {
        settings
            .set("default_jit", jit, Source::Argument)
            .expect("a valid jit mode");
    }
    let import = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/cypher/import");
    settings
        .set(
            "import_directory",
            &import.display().to_string(),
            Source::Argument,
        )
        .expect("the golden import directory is a valid setting");
    settings
}

/// A failure message when `actual` lines differ from `expected`.
fn mismatch(at: &str, expected: &[String], actual: &[String]) -> Option<String> {
    (actual != expected).then(|| {
        format!(
            "{at}: expected\n  {}\ngot\n  {}",
            expected.join("\n  "),
            actual.join("\n  ")
        )
    })
}

/// Every golden file, under `default_jit = jit` if given.
fn golden_cypher_tests_with(jit: Option<&str>) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/cypher");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no .test files under {}", root.display());
    let failures: Vec<String> = files.iter().flat_map(|f| run_file(f, jit)).collect();
    assert!(
        failures.is_empty(),
        "{} golden failure(s) with jit = {jit:?}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn golden_cypher_tests() {
    golden_cypher_tests_with(None);
}

/// The same files with the JIT off (the interpreter everywhere): results and errors must not
/// change; EXPLAIN plans are compared without their JIT notes.
#[test]
fn golden_cypher_tests_with_jit_off() {
    golden_cypher_tests_with(Some("off"));
}

/// `line` of a plan without its EXPLAIN JIT note (` jit=…`, always last on its line).
fn without_jit_note(line: &str) -> String {
    line.find(" jit=")
        .map_or(line, |at| &line[..at])
        .to_string()
}

/// The same files with every filter compiled where the JIT covers it, from the first batch
/// (`adaptive` mostly interprets databases this small): results must not change.
#[test]
fn golden_cypher_tests_with_jit_on() {
    golden_cypher_tests_with(Some("on"));
}
