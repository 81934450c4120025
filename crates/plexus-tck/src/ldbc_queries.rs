//! The LDBC SNB Interactive queries of the mini data set and their parameters, shared by the
//! LDBC test (every query runs) and `plexus-bench cypher` (their latencies).
//!
//! Parameters: IC queries take rows of `substitution_parameters/interactive_N_param.txt`
//! (up to [`MAX_PARAMETER_ROWS`]), IS queries the `:param` lines of their header comment,
//! IU queries values chosen below (ids taken from the data set); after these, the example
//! parameters in a query's header comment (`:param [...] => { RETURN 1 AS a }`). Some
//! substitution rows legitimately match nothing on this small data set, so callers try the
//! candidates in order and keep the first that returns rows. Queries run unmodified.

use plexus::CypherValue as Value;
use plexus::{Connection, Params};
use std::path::{Path, PathBuf};

/// One query file of `cypher/queries`.
pub struct Query {
    /// The file stem, e.g. `interactive-short-1`.
    pub name: String,
    pub text: String,
}

impl Query {
    /// Whether the query writes (IU); the others must return rows.
    pub fn is_update(&self) -> bool {
        self.name.contains("update")
    }
}

/// The query files of `<cypher_dir>/queries`, sorted by name.
pub fn queries(cypher_dir: &Path) -> Result<Vec<Query>, String> {
    let dir = cypher_dir.join("queries");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cypher"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
            Ok(Query {
                name: name.to_string(),
                text,
            })
        })
        .collect()
}

/// The parameter sets to try for `query`, in order (see the module comment).
pub fn parameter_candidates(
    conn: &mut Connection,
    cypher_dir: &Path,
    query: &Query,
) -> Vec<Params> {
    let mut candidates = params_for(cypher_dir, &query.name, &query.text);
    candidates.extend(header_example(conn, &query.text));
    candidates
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
fn params_for(cypher_dir: &Path, name: &str, text: &str) -> Vec<Params> {
    if let Some(n) = name.strip_prefix("interactive-complex-") {
        let file = cypher_dir.join(format!(
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
fn header_example(conn: &mut Connection, text: &str) -> Option<Params> {
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
pub const MAX_PARAMETER_ROWS: usize = 10;
