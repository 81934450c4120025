//! How the shell prints a query result: a table with a type row, then a summary line.
//!
//! LAYOUT
//! ======
//! ```text
//!   +---------+---------+
//!   | name    | age     |     column names
//!   | STRING  | INTEGER |     the type of the column's values (see below)
//!   +---------+---------+
//!   | 'Ada'   | 36      |     values in the TCK notation, as `QueryResult::render` writes
//!   | 'Bob'   | null    |     them: strings quoted, nodes as (:Label {k: v})
//!   +---------+---------+
//!   … 3 more rows             when more rows than the row limit
//!   5 rows, set 1 property, 1.2 ms
//! ```
//!
//! A column's type is the Cypher type name (`Value::type_name`) shared by all its non-null
//! values; `mixed` when they differ, `NULL` when every value is null. Types are taken over all
//! rows, not only the printed ones. A statement without columns (a write without `RETURN`,
//! `BEGIN`) prints only the summary line. A plan (EXPLAIN, PROFILE) is printed after the
//! table; when there are no rows (always so for EXPLAIN, which runs nothing) it is printed
//! instead of the table, and the summary says nothing about rows.
//!
//! LIMITS
//! ======
//! Results arrive materialised (the engine holds every row), so the row limit only bounds
//! what is printed. A cell longer than [`CELL_MAX_CHARS`] is cut and ends in `…`, and line
//! breaks inside a cell are shown as `\n`, so one value cannot break the table's shape.
//! Widths count characters (wide East Asian characters will misalign; no width table).

use std::fmt::Write;
use std::time::Duration;

use plexus::{CypherValue, QueryResult};

/// Longest cell printed, in characters (longer ones are cut).
pub const CELL_MAX_CHARS: usize = 100;

/// The type label of a column whose non-null values have different types.
const MIXED: &str = "mixed";

/// Writes `result` as described in the module doc, printing at most `max_rows` rows and
/// `elapsed` in the summary when given.
pub fn render(result: &QueryResult, max_rows: usize, elapsed: Option<Duration>) -> String {
    let mut out = String::new();
    let plan_only = result.plan.is_some() && result.rows.is_empty();
    let tabular = !result.columns.is_empty() && !plan_only;
    if tabular {
        table(result, max_rows, &mut out);
    }
    if let Some(plan) = &result.plan {
        out.push_str(plan.trim_end());
        out.push('\n');
    }
    out.push_str(&summary(result, tabular, elapsed));
    out.push('\n');
    out
}

fn table(result: &QueryResult, max_rows: usize, out: &mut String) {
    let shown = &result.rows[..result.rows.len().min(max_rows)];
    let cells: Vec<Vec<String>> = shown
        .iter()
        .map(|row| row.iter().map(|v| cell(&result.render(v))).collect())
        .collect();
    let types: Vec<&str> = (0..result.columns.len())
        .map(|c| column_type(result.rows.iter().filter_map(|row| row.get(c))))
        .collect();
    let names: Vec<String> = result.columns.iter().map(|c| cell(c)).collect();
    let widths: Vec<usize> = (0..names.len())
        .map(|c| {
            let values = cells.iter().filter_map(|row| row.get(c));
            std::iter::once(&names[c])
                .chain(values)
                .map(|s| s.chars().count())
                .chain(std::iter::once(types[c].len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule = rule(&widths);
    out.push_str(&rule);
    line(&widths, names.iter().map(String::as_str), out);
    line(&widths, types.iter().copied(), out);
    out.push_str(&rule);
    for row in &cells {
        line(&widths, row.iter().map(String::as_str), out);
    }
    if !cells.is_empty() {
        out.push_str(&rule);
    }
    let hidden = result.rows.len() - shown.len();
    if hidden > 0 {
        let _ = writeln!(out, "… {hidden} more {}", plural(hidden as u64, "row"));
    }
}

fn rule(widths: &[usize]) -> String {
    let mut rule = String::from("+");
    for width in widths {
        rule.push_str(&"-".repeat(width + 2));
        rule.push('+');
    }
    rule.push('\n');
    rule
}

fn line<'a>(widths: &[usize], cells: impl Iterator<Item = &'a str>, out: &mut String) {
    out.push('|');
    for (cell, width) in cells.zip(widths) {
        let pad = width.saturating_sub(cell.chars().count());
        let _ = write!(out, " {cell}{} |", " ".repeat(pad));
    }
    out.push('\n');
}

/// A cell's text: line breaks shown as escapes, cut at [`CELL_MAX_CHARS`].
fn cell(text: &str) -> String {
    let text = text.replace('\r', "\\r").replace('\n', "\\n");
    match text.char_indices().nth(CELL_MAX_CHARS - 1) {
        Some((cut, _)) if text.chars().count() > CELL_MAX_CHARS => format!("{}…", &text[..cut]),
        _ => text,
    }
}

/// The type row entry for one column's values (see the module doc).
fn column_type<'a>(values: impl Iterator<Item = &'a CypherValue>) -> &'static str {
    let mut found: Option<&'static str> = None;
    for value in values.filter(|v| !v.is_null()) {
        match found {
            None => found = Some(value.type_name()),
            Some(name) if name != value.type_name() => return MIXED,
            Some(_) => {}
        }
    }
    found.unwrap_or("NULL")
}

/// `3 rows, created 2 nodes, 1 relationship, 1.2 ms`: rows (if `rows`), update counts (verbs
/// shared by consecutive counts), time (when given); `no changes` if nothing.
fn summary(result: &QueryResult, rows: bool, elapsed: Option<Duration>) -> String {
    let mut parts = Vec::new();
    if rows {
        parts.push(format!(
            "{} {}",
            result.rows.len(),
            plural(result.rows.len() as u64, "row")
        ));
    }
    let s = &result.stats;
    let counts: [(&str, u64, &str); 11] = [
        ("created", s.nodes_created, "node"),
        ("created", s.relationships_created, "relationship"),
        ("deleted", s.nodes_deleted, "node"),
        ("deleted", s.relationships_deleted, "relationship"),
        ("set", s.properties_set, "property"),
        ("added", s.labels_added, "label"),
        ("removed", s.labels_removed, "label"),
        ("added", s.indexes_added, "index"),
        ("removed", s.indexes_removed, "index"),
        ("added", s.constraints_added, "constraint"),
        ("removed", s.constraints_removed, "constraint"),
    ];
    let mut last_verb = "";
    for (verb, count, noun) in counts {
        if count == 0 {
            continue;
        }
        let noun = plural(count, noun);
        parts.push(if verb == last_verb {
            format!("{count} {noun}")
        } else {
            format!("{verb} {count} {noun}")
        });
        last_verb = verb;
    }
    if parts.is_empty() {
        parts.push("no changes".into());
    }
    if let Some(elapsed) = elapsed {
        parts.push(format!("{:.1} ms", elapsed.as_secs_f64() * 1e3));
    }
    parts.join(", ")
}

/// `noun`, in the plural unless `count` is 1.
pub(crate) fn plural(count: u64, noun: &str) -> String {
    match (count, noun) {
        (1, _) => noun.to_string(),
        (_, "property") => "properties".to_string(),
        (_, "index") => "indexes".to_string(),
        _ => format!("{noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(columns: &[&str], rows: Vec<Vec<CypherValue>>) -> QueryResult {
        QueryResult {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
            ..QueryResult::default()
        }
    }

    #[test]
    fn table_with_types_and_hidden_rows() {
        let rows = vec![
            vec![CypherValue::string("Ada"), CypherValue::Int(36)],
            vec![CypherValue::string("Bob"), CypherValue::Null],
            vec![CypherValue::Int(3), CypherValue::Int(1)],
        ];
        let text = render(&result(&["name", "age"], rows), 2, None);
        assert_eq!(
            text,
            "\
+-------+---------+
| name  | age     |
| mixed | INTEGER |
+-------+---------+
| 'Ada' | 36      |
| 'Bob' | null    |
+-------+---------+
… 1 more row
3 rows
"
        );
    }

    #[test]
    fn empty_result_keeps_header() {
        let text = render(&result(&["n"], vec![]), 10, None);
        assert_eq!(text, "+------+\n| n    |\n| NULL |\n+------+\n0 rows\n");
    }

    #[test]
    fn summary_groups_verbs() {
        let mut r = QueryResult::default();
        r.stats.nodes_created = 2;
        r.stats.relationships_created = 1;
        r.stats.properties_set = 3;
        assert_eq!(
            summary(&r, false, None),
            "created 2 nodes, 1 relationship, set 3 properties"
        );
        assert_eq!(summary(&QueryResult::default(), false, None), "no changes");
        assert_eq!(
            summary(
                &QueryResult::default(),
                false,
                Some(Duration::from_micros(1240))
            ),
            "no changes, 1.2 ms"
        );
    }

    #[test]
    fn explain_prints_the_plan_instead_of_an_empty_table() {
        let mut r = result(&["n"], vec![]);
        r.plan = Some("Results n\n└ Argument\n".into());
        assert_eq!(render(&r, 10, None), "Results n\n└ Argument\nno changes\n");
    }

    #[test]
    fn long_and_multi_line_cells() {
        assert_eq!(cell("a\nb"), "a\\nb");
        let long = "x".repeat(CELL_MAX_CHARS + 5);
        let cut = cell(&long);
        assert_eq!(cut.chars().count(), CELL_MAX_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(
            cell(&"y".repeat(CELL_MAX_CHARS)).chars().count(),
            CELL_MAX_CHARS
        );
    }
}
