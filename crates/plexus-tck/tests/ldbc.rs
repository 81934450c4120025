//! LDBC SNB mini: load the data set, then run every query in `cypher/queries` with
//! parameters — IC from `substitution_parameters/interactive_N_param.txt` (first row), IS
//! from the `:param` lines in each query's header comment, IU from values chosen below
//! (ids taken from the data set). Queries run unmodified.
//!
//! Every query must run without error and, except the updates, return rows; the queries not
//! yet supported are listed in `KNOWN_FAILURES` (the test also fails if one of them starts
//! working, so the list stays honest).

use plexus::{Config, Database, FaultVfs, Params};
use plexus_exec::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// Queries that do not run yet, with the reason.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

fn data(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/ldbc-snb-mini/cypher")
        .join(relative)
}

fn scalar(text: &str) -> Value {
    match text.trim().parse::<i64>() {
        Ok(i) => Value::Int(i),
        Err(_) => Value::from(text.trim()),
    }
}

fn ints(items: &[i64]) -> Value {
    Value::list(items.iter().map(|i| Value::Int(*i)).collect())
}

fn update_params(n: u32) -> Params {
    let s = |v: &str| Value::from(v);
    let i = Value::Int;
    let pairs: Vec<(&str, Value)> = match n {
        1 => vec![
            ("personId", i(99_000_000_001)),
            ("personFirstName", s("Ada")),
            ("personLastName", s("Lovelace")),
            ("gender", s("female")),
            ("birthday", i(558921600000)),
            ("creationDate", i(1290000000000)),
            ("locationIP", s("10.0.0.1")),
            ("browserUsed", s("Firefox")),
            ("cityId", i(111)),
            ("languages", Value::list(vec![s("en")])),
            ("emails", Value::list(vec![s("ada@example.com")])),
            ("tagIds", ints(&[0, 1])),
            ("studyAt", Value::list(vec![ints(&[1575, 2001])])),
            ("workAt", Value::list(vec![ints(&[0, 2010])])),
        ],
        2 => vec![
            ("personId", i(2199023255711)),
            ("postId", i(343597383680)),
            ("creationDate", i(1290000000000)),
        ],
        3 => vec![
            ("personId", i(2199023255711)),
            ("commentId", i(206158430247)),
            ("creationDate", i(1290000000000)),
        ],
        4 => vec![
            ("forumId", i(99_000_000_002)),
            ("forumTitle", s("A new forum")),
            ("creationDate", i(1290000000000)),
            ("moderatorPersonId", i(2199023255711)),
            ("tagIds", ints(&[0, 1])),
        ],
        5 => vec![
            ("forumId", i(274877906944)),
            ("personId", i(2199023255711)),
            ("joinDate", i(1290000000000)),
        ],
        6 => vec![
            ("postId", i(99_000_000_003)),
            ("imageFile", s("")),
            ("creationDate", i(1290000000000)),
            ("locationIP", s("10.0.0.1")),
            ("browserUsed", s("Firefox")),
            ("language", s("en")),
            ("content", s("hello")),
            ("length", i(5)),
            ("authorPersonId", i(2199023255711)),
            ("forumId", i(274877906944)),
            ("countryId", i(0)),
            ("tagIds", ints(&[0])),
        ],
        7 => vec![
            ("commentId", i(99_000_000_004)),
            ("creationDate", i(1290000000000)),
            ("locationIP", s("10.0.0.1")),
            ("browserUsed", s("Firefox")),
            ("content", s("a reply")),
            ("length", i(7)),
            ("authorPersonId", i(2199023255711)),
            ("countryId", i(0)),
            ("replyToPostId", i(343597383680)),
            ("replyToCommentId", i(-1)),
            ("tagIds", ints(&[1])),
        ],
        _ => vec![
            ("person1Id", i(2199023255711)),
            ("person2Id", i(8796093022220)),
            ("creationDate", i(1290000000000)),
        ],
    };
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Parameter sets to try, in order: the first that returns rows is reported (some
/// substitution rows legitimately match nothing on this small data set).
fn params_for(name: &str, text: &str) -> Vec<Params> {
    if let Some(n) = name.strip_prefix("interactive-complex-") {
        let file = data(&format!(
            "test-data/substitution_parameters/interactive_{n}_param.txt"
        ));
        let table = std::fs::read_to_string(file).unwrap_or_default();
        let mut lines = table.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split('|').collect();
        return lines
            .take(MAX_PARAMETER_ROWS)
            .map(|row| {
                let mut params = Params::new();
                for (k, v) in header.iter().zip(row.split('|')) {
                    params.insert(k.to_string(), scalar(v));
                }
                // IC3 and IC4 take `endDate`; the parameter files give `durationDays`.
                if let (Some(Value::Int(start)), Some(Value::Int(days))) =
                    (params.get("startDate"), params.get("durationDays"))
                {
                    let end = start + days * 86_400_000;
                    params.insert("endDate".to_string(), Value::Int(end));
                }
                params
            })
            .collect();
    }
    if let Some(n) = name.strip_prefix("interactive-update-") {
        return vec![update_params(n.parse().unwrap_or(8))];
    }
    let mut params = Params::new();
    for line in text.lines() {
        if let Some((k, v)) = line
            .trim()
            .strip_prefix(":param ")
            .and_then(|r| r.split_once(':'))
        {
            params.insert(k.trim().to_string(), scalar(v));
        }
    }
    vec![params]
}

/// The example parameters in a query's header comment, `:param [...] => { RETURN 1 AS a }`,
/// evaluated as the Cypher query they are (tried after the substitution rows).
fn header_example(conn: &mut plexus::Connection, text: &str) -> Option<Params> {
    let start = text.find("=> {")? + 4;
    let end = start + text[start..].find("*/")?;
    let body = text[start..end].trim().strip_suffix('}')?;
    let result = conn.execute(body, &Params::new()).ok()?;
    let row = result.rows.first()?;
    Some(
        result
            .columns
            .iter()
            .cloned()
            .zip(row.iter().cloned())
            .collect(),
    )
}

/// How many substitution rows to try per complex query.
const MAX_PARAMETER_ROWS: usize = 10;

#[test]
fn ldbc_snb_mini_queries_run() {
    let db = Database::open_with_vfs(Arc::new(FaultVfs::new()), Config::default()).expect("open");
    let report = plexus_tck::ldbc::load(&db, &data("headers.txt"), &data("test-data/vanilla"))
        .expect("load");
    println!(
        "loaded {} vertices, {} edges",
        report.vertices, report.edges
    );
    assert!(report.vertices > 9_000 && report.edges > 10_000);

    let mut files: Vec<PathBuf> = std::fs::read_dir(data("queries"))
        .expect("queries")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cypher"))
        .collect();
    files.sort();
    let mut conn = db.connect();
    let mut failures = Vec::new();
    // With PLEXUS_LDBC_PROFILE=<file>, write every query's PROFILE tree there (markdown).
    let profile_path = std::env::var_os("PLEXUS_LDBC_PROFILE").map(PathBuf::from);
    let profile_out = profile_path.as_ref().map(|_| {
        std::cell::RefCell::new(String::from(
            "# PROFILE of the LDBC SNB Interactive queries on the SNB mini data set\n\n\
             Generated by `PLEXUS_LDBC_PROFILE=<file> cargo test --release -p plexus-tck --test ldbc`.\n\
             Each line is an operator; `rows` is what it produced, `time` includes its inputs.\n\
             Updates run before the reads that follow them in file order; not a benchmark.\n\n",
        ))
    });
    for path in &files {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_string();
        let text = std::fs::read_to_string(path).expect("query");
        let mut outcome: Result<(usize, usize, f64), String> = Err("no parameters".into());
        let mut candidates = params_for(&name, &text);
        candidates.extend(header_example(&mut conn, &text));
        for (row, params) in candidates.iter().enumerate() {
            let started = std::time::Instant::now();
            match conn.execute(&text, params) {
                Ok(result) => {
                    let ms = started.elapsed().as_secs_f64() * 1e3;
                    outcome = Ok((row, result.rows.len(), ms));
                    if !result.rows.is_empty() {
                        break;
                    }
                }
                Err(e) => {
                    outcome = Err(e.to_string());
                    break;
                }
            }
        }
        if let (Some(out), Ok((row, _, _))) = (&profile_out, &outcome) {
            let profiled = conn.execute(&format!("PROFILE {text}"), &candidates[*row]);
            let plan = match profiled {
                Ok(r) => r.plan.unwrap_or_default(),
                Err(e) => format!("PROFILE failed: {e}\n"),
            };
            let mut doc = out.borrow_mut();
            doc.push_str(&format!("## {name}\n\n```text\n{plan}```\n\n"));
        }
        match outcome {
            Ok((row, rows, ms)) => {
                let source = if row + 1 == candidates.len() && candidates.len() > 1 {
                    "the header's example parameters".to_string()
                } else {
                    format!("parameter row {row}")
                };
                println!("{name}: {rows} row(s) in {ms:.1} ms ({source})");
                if rows == 0 && !name.contains("update") {
                    failures.push((name, "returned no rows".to_string()));
                }
            }
            Err(e) => failures.push((name, e)),
        }
    }
    if let (Some(path), Some(out)) = (&profile_path, &profile_out) {
        std::fs::write(path, out.borrow().as_bytes()).expect("write the PROFILE document");
    }
    for (name, why) in &failures {
        println!("FAILED {name}: {why}");
    }
    let unexpected: Vec<_> = failures
        .iter()
        .filter(|(n, _)| !KNOWN_FAILURES.iter().any(|(k, _)| k == n))
        .collect();
    let fixed: Vec<_> = KNOWN_FAILURES
        .iter()
        .filter(|(k, _)| !failures.iter().any(|(n, _)| n == k))
        .collect();
    assert!(
        unexpected.is_empty(),
        "unexpected LDBC failures: {unexpected:?}"
    );
    assert!(
        fixed.is_empty(),
        "now working, remove from KNOWN_FAILURES: {fixed:?}"
    );
}
