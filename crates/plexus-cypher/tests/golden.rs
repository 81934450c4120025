//! Data-driven golden tests: `tests/golden/*.test`.
//!
//! FORMAT
//! ======
//! Records are separated by blank lines; lines starting with `#` are comments.
//!
//! ```text
//! # A query and its canonical printed form (which must also parse back to the same tree).
//! query
//! match (n)
//! return n
//! ----
//! MATCH (n) RETURN n
//!
//! # A query that must fail, with its TCK error code and the exact message.
//! error UnexpectedSyntax
//! MATCH (a RETURN a
//! ----
//! line 1, column 10: expected ')' but found 'RETURN'
//! ```
//!
//! Adding a case needs no Rust. To fill in or refresh the expected sections after an
//! intentional change, run with `PLEXUS_BLESS=1` and review the diff.

mod common;

use std::fs;
use std::path::PathBuf;

enum Expect {
    Query,
    Error { code: String },
}

struct Record {
    /// Comment lines above the record, kept when blessing.
    comments: Vec<String>,
    header: String,
    expect: Expect,
    input: String,
    expected: String,
    /// 1-based line of the header, for messages.
    line: usize,
}

fn parse_file(text: &str, file: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let mut line_number = 0;
    let mut lines = text.lines().peekable();
    while lines.peek().is_some() {
        let mut comments = Vec::new();
        let mut header = None;
        for line in lines.by_ref() {
            line_number += 1;
            if line.starts_with('#') {
                comments.push(line.to_string());
            } else if !line.trim().is_empty() {
                header = Some(line.trim().to_string());
                break;
            }
        }
        let Some(header) = header else { break };
        let header_line = line_number;
        let expect = match header.split_once(' ') {
            None if header == "query" => Expect::Query,
            Some(("error", code)) => Expect::Error {
                code: code.trim().to_string(),
            },
            _ => panic!("{file}:{header_line}: expected `query` or `error <Code>`, got `{header}`"),
        };
        let mut input = Vec::new();
        loop {
            line_number += 1;
            match lines.next() {
                Some("----") => break,
                Some(line) => input.push(line),
                None => panic!("{file}:{header_line}: record has no `----` line"),
            }
        }
        let mut expected = Vec::new();
        while let Some(line) = lines.next_if(|line| !line.trim().is_empty()) {
            line_number += 1;
            expected.push(line);
        }
        records.push(Record {
            comments,
            header,
            expect,
            input: input.join("\n"),
            expected: expected.join("\n"),
            line: header_line,
        });
    }
    records
}

/// What the record's input actually produces, in the form of its expected section.
fn actual(record: &Record) -> Result<String, String> {
    match (&record.expect, plexus_cypher::parse(&record.input)) {
        (Expect::Query, Ok(_)) => common::round_trip(&record.input),
        (Expect::Query, Err(error)) => Err(format!("unexpected error: {error}")),
        (Expect::Error { code }, Err(error)) if error.tck_code() == code => Ok(error.to_string()),
        (Expect::Error { code }, Err(error)) => Err(format!(
            "expected a {code} error, got {} ({error})",
            error.tck_code()
        )),
        (Expect::Error { .. }, Ok(statement)) => {
            Err(format!("unexpectedly parsed as `{statement}`"))
        }
    }
}

#[test]
fn golden_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut paths: Vec<_> = fs::read_dir(&dir)
        .expect("tests/golden exists")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "test"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .test files in {}", dir.display());
    let bless = std::env::var_os("PLEXUS_BLESS").is_some();

    let mut failures = Vec::new();
    let mut count = 0;
    for path in &paths {
        let file = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = fs::read_to_string(path).expect("golden file is readable");
        let records = parse_file(&text, &file);
        let mut blessed = String::new();
        for record in &records {
            count += 1;
            let result = actual(record);
            match &result {
                Ok(output) if *output == record.expected => {}
                Ok(output) => failures.push(format!(
                    "{file}:{}: {}\n  expected: {}\n  actual:   {output}",
                    record.line, record.input, record.expected
                )),
                Err(problem) => failures.push(format!(
                    "{file}:{}: {}\n  {problem}",
                    record.line, record.input
                )),
            }
            if !blessed.is_empty() {
                blessed.push('\n');
            }
            for comment in &record.comments {
                blessed.push_str(comment);
                blessed.push('\n');
            }
            let output = result.as_deref().unwrap_or(&record.expected);
            blessed.push_str(&format!(
                "{}\n{}\n----\n{output}\n",
                record.header, record.input
            ));
        }
        if bless {
            fs::write(path, blessed).expect("golden file is writable");
        }
    }
    println!("golden: {count} records in {} files", paths.len());
    assert!(
        failures.is_empty(),
        "{} golden failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
