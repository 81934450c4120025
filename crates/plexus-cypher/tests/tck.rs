//! Parses every query in the openCypher TCK feature files.
//!
//! The `.feature` files are read in place from `shared/data/opencypher-tck/features`. For each
//! scenario (each Examples row of a Scenario Outline, with `<placeholders>` substituted) the
//! harness collects the docstrings after `When executing query:`, `When executing control
//! query:` and `[And|Given] having executed:`, and the expected outcome from the `Then` step:
//!
//! - queries of scenarios that do not expect a compile-time SyntaxError must parse, and must
//!   round-trip through the printer; the test fails otherwise;
//! - queries expected to raise a SyntaxError at compile time are counted as rejected or
//!   accepted per TCK error code. Most codes (UndefinedVariable, VariableAlreadyBound, type
//!   errors, ...) need a binder; the codes the parser owns must all be rejected.
//!
//! Run with `--nocapture` to see the counts.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Error codes that only need syntax to detect: every such scenario must be rejected here.
const PARSER_CODES: &[&str] = &[
    "UnexpectedSyntax",
    "IntegerOverflow",
    "InvalidNumberLiteral",
    "InvalidUnicodeLiteral",
    "InvalidUnicodeCharacter",
    "FloatingPointOverflow",
    "InvalidClauseComposition",
    "InvalidArgumentPassingMode",
    "InvalidRelationshipPattern",
];

struct TckQuery {
    /// `file:line scenario-name [example row]`
    origin: String,
    text: String,
    /// `Some(code)` when a SyntaxError is expected at compile time.
    expected_syntax_error: Option<String>,
}

#[test]
fn every_tck_query_parses() {
    let root = common::shared_data("opencypher-tck/features");
    let mut files = Vec::new();
    collect_features(&root, &mut files);
    files.sort();
    assert!(
        !files.is_empty(),
        "no .feature files under {}",
        root.display()
    );

    let mut queries = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("feature file is readable");
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        extract_queries(&name, &text, &mut queries);
    }

    let mut parsed = 0;
    let mut must_parse = 0;
    let mut failures = Vec::new();
    let mut round_trip_failures = Vec::new();
    let mut rejected_by_code: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut parser_code_misses = Vec::new();
    // Queries the parser rejects although their expected error is a binder's (informational).
    let mut early_rejections = Vec::new();
    for query in &queries {
        let result = plexus_cypher::parse(&query.text);
        match &query.expected_syntax_error {
            None => {
                must_parse += 1;
                match result {
                    Ok(_) => {
                        parsed += 1;
                        if let Err(error) = common::round_trip(&query.text) {
                            round_trip_failures.push(format!("{}\n  {error}", query.origin));
                        }
                    }
                    Err(error) => failures.push(format!(
                        "{}\n  {}\n  {error}",
                        query.origin,
                        query.text.replace('\n', "\n  ")
                    )),
                }
            }
            Some(code) => {
                let entry = rejected_by_code.entry(code.clone()).or_default();
                entry.1 += 1;
                if let Err(error) = &result {
                    entry.0 += 1;
                    if !PARSER_CODES.contains(&code.as_str()) {
                        early_rejections.push(format!("{} ({code}): {error}", query.origin));
                    }
                } else if PARSER_CODES.contains(&code.as_str()) {
                    parser_code_misses.push(format!("{} ({code})\n  {}", query.origin, query.text));
                }
            }
        }
    }

    let (rejected, expected_errors) = rejected_by_code
        .values()
        .fold((0, 0), |(r, t), (rejected, total)| {
            (r + rejected, t + total)
        });
    println!(
        "TCK: {} feature files, {} queries",
        files.len(),
        queries.len()
    );
    println!("TCK: parsed {parsed} / {must_parse} queries that must parse");
    println!(
        "TCK: rejected {rejected} / {expected_errors} queries expecting a compile-time SyntaxError"
    );
    for (code, (rejected, total)) in &rejected_by_code {
        let owner = if PARSER_CODES.contains(&code.as_str()) {
            "parser"
        } else {
            "binder"
        };
        println!("  {code:<36} {rejected:>3} / {total:<3} ({owner})");
    }
    for rejection in &early_rejections {
        println!("rejected before binding: {rejection}");
    }
    for failure in &failures {
        println!("PARSE FAILURE {failure}");
    }
    for failure in &round_trip_failures {
        println!("ROUND-TRIP FAILURE {failure}");
    }
    for miss in &parser_code_misses {
        println!("ACCEPTED INVALID {miss}");
    }
    assert!(
        failures.is_empty(),
        "{} TCK queries failed to parse",
        failures.len()
    );
    assert!(
        round_trip_failures.is_empty(),
        "{} TCK queries failed to round-trip",
        round_trip_failures.len()
    );
    assert!(
        parser_code_misses.is_empty(),
        "{} syntax-level errors not detected",
        parser_code_misses.len()
    );
}

fn collect_features(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect_features(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "feature") {
            files.push(path);
        }
    }
}

/// One scenario as written: its docstrings (with the step that introduced each) and the
/// expected outcome, before Examples substitution.
#[derive(Default)]
struct Scenario {
    origin: String,
    /// (is_main_query, text)
    queries: Vec<(bool, String)>,
    expected_syntax_error: Option<String>,
    /// Examples rows: header then values.
    examples: Vec<Vec<String>>,
}

fn extract_queries(file: &str, text: &str, out: &mut Vec<TckQuery>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut last_step = "";
    let mut in_examples = false;
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index].trim();
        index += 1;
        if line.starts_with('#') || line.is_empty() || line.starts_with('@') {
            continue;
        }
        if line.starts_with("Scenario:") || line.starts_with("Scenario Outline:") {
            scenarios.push(Scenario {
                origin: format!(
                    "{file}:{index} {}",
                    line.split_once(':').map_or("", |(_, name)| name.trim())
                ),
                ..Scenario::default()
            });
            in_examples = false;
            continue;
        }
        let Some(scenario) = scenarios.last_mut() else {
            continue;
        };
        if line == "\"\"\"" {
            let indent = lines[index - 1].len() - lines[index - 1].trim_start().len();
            let mut body = Vec::new();
            while index < lines.len() && lines[index].trim() != "\"\"\"" {
                let raw = lines[index];
                let strip = raw.len() - raw.trim_start().len();
                body.push(&raw[strip.min(indent)..]);
                index += 1;
            }
            index += 1; // closing """
            let step = last_step
                .trim_start_matches(|c: char| c.is_alphabetic())
                .trim();
            let is_main =
                step.starts_with("executing query") || step.starts_with("executing control query");
            if is_main || step.starts_with("having executed") {
                scenario.queries.push((is_main, body.join("\n")));
            }
            continue;
        }
        if line.starts_with("Examples:") {
            in_examples = true;
            continue;
        }
        if in_examples && line.starts_with('|') {
            scenario.examples.push(split_row(line));
            continue;
        }
        if let Some(rest) =
            line.strip_prefix("Then a SyntaxError should be raised at compile time:")
        {
            scenario.expected_syntax_error = Some(rest.trim().to_string());
        }
        if !line.starts_with('|') {
            last_step = line;
        }
    }

    for scenario in scenarios {
        let rows: Vec<Vec<(String, String)>> = match scenario.examples.split_first() {
            None => vec![Vec::new()],
            Some((header, values)) => values
                .iter()
                .map(|row| header.iter().cloned().zip(row.iter().cloned()).collect())
                .collect(),
        };
        for (row_index, row) in rows.iter().enumerate() {
            for (is_main, query) in &scenario.queries {
                let mut text = query.clone();
                for (name, value) in row {
                    text = text.replace(&format!("<{name}>"), value);
                }
                let origin = if row.is_empty() {
                    scenario.origin.clone()
                } else {
                    format!("{} [example {}]", scenario.origin, row_index + 1)
                };
                let expected_syntax_error = if *is_main {
                    scenario.expected_syntax_error.clone()
                } else {
                    None
                };
                out.push(TckQuery {
                    origin,
                    text,
                    expected_syntax_error,
                });
            }
        }
    }
}

/// Splits a Gherkin table row `| a | b\|c |` into unescaped, trimmed cells.
fn split_row(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => match chars.next() {
                Some('|') => cell.push('|'),
                Some('n') => cell.push('\n'),
                Some('\\') => cell.push('\\'),
                Some(other) => {
                    cell.push('\\');
                    cell.push(other);
                }
                None => cell.push('\\'),
            },
            '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
            ch => cell.push(ch),
        }
    }
    cells
}
