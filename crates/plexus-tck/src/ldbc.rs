//! A simple loader for the LDBC SNB mini data set (`ldbc-snb-mini/cypher/test-data/vanilla`).
//!
//! FORMAT
//! ======
//! Pipe-separated CSV files with a header row; `cypher/headers.txt` gives, per file, the
//! column specs that replace the header, positionally:
//!
//! ```text
//! dynamic/person id:ID(Person)|firstName:STRING|...|speaks:STRING[]|email:STRING[]
//! static/place id:ID(Place)|name:STRING|url:STRING|:LABEL
//! dynamic/person_knows_person :START_ID(Person)|:END_ID(Person)|creationDate:LONG
//! ```
//!
//! - `id:ID(X)`: a vertex file; every row is a vertex labelled `X` with an integer `id`;
//!   a `:LABEL` column adds its value, capitalised, as a second label (`city` → `City`),
//!   and posts and comments are also `Message`s, as the queries expect;
//! - `:START_ID(A)|:END_ID(B)`: an edge file; the type is the middle part of the file name
//!   in upper snake case (`person_knows_person` → `KNOWS`, `hasCreator` → `HAS_CREATOR`);
//! - `LONG`/`INT` become integers, `STRING[]` lists split on `;`, everything else strings.
//!
//! Every vertex space becomes a declared vertex table with `id` as its primary key (so that
//! `MATCH (p:Person {id: $personId})` is an index seek) and the `:LABEL` values and
//! `Message` as allowed extra labels; the other properties are dynamic. Everything is
//! inserted through one transaction with the ordinary `Transaction` API — a test-data path,
//! not the bulk loader.

use plexus::{DataType, Database, Value, VertexId, VertexTableSpec};
use std::collections::HashMap;
use std::path::Path;

/// How many vertices and edges were loaded.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoadReport {
    pub vertices: usize,
    pub edges: usize,
}

#[derive(Debug, Clone)]
enum Column {
    Id(String),
    Start(String),
    End(String),
    Label,
    Prop { name: String, kind: String },
}

fn parse_spec(spec: &str) -> Vec<Column> {
    spec.split('|')
        .map(|c| {
            let inner = |prefix: &str| {
                c.strip_prefix(prefix)
                    .and_then(|r| r.strip_suffix(')'))
                    .map(str::to_string)
            };
            if let Some(space) = inner(":START_ID(") {
                Column::Start(space)
            } else if let Some(space) = inner(":END_ID(") {
                Column::End(space)
            } else if let Some(space) = c.strip_prefix("id:ID(").and_then(|r| r.strip_suffix(')')) {
                Column::Id(space.to_string())
            } else if c == ":LABEL" {
                Column::Label
            } else {
                let (name, kind) = c.split_once(':').unwrap_or((c, "STRING"));
                Column::Prop {
                    name: name.to_string(),
                    kind: kind.to_string(),
                }
            }
        })
        .collect()
}

fn convert(text: &str, kind: &str) -> Value {
    match kind {
        "LONG" | "INT" => text.parse::<i64>().map_or(Value::Null, Value::Int),
        "STRING[]" => Value::List(
            text.split(';')
                .filter(|s| !s.is_empty())
                .map(Value::from)
                .collect::<Vec<_>>()
                .into(),
        ),
        _ => Value::from(text),
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `hasCreator` → `HAS_CREATOR`.
fn edge_type(camel: &str) -> String {
    let mut out = String::new();
    for c in camel.chars() {
        if c.is_uppercase() && !out.is_empty() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Declares the vertex table of a vertex file (`id:ID(X)`): table `X`, primary key `id`,
/// the capitalised `:LABEL` values of `text` (and `Message` for posts and comments) as extra
/// labels. Edge files declare nothing.
fn declare_table(db: &Database, columns: &[Column], text: &str) -> Result<(), String> {
    let Some(space) = columns.iter().find_map(|c| match c {
        Column::Id(space) => Some(space),
        _ => None,
    }) else {
        return Ok(());
    };
    let mut spec = VertexTableSpec::new(space)
        .property("id", DataType::Int64)
        .primary_key("id");
    let mut extra: Vec<String> = Vec::new();
    if space == "Post" || space == "Comment" {
        extra.push("Message".into());
    }
    if let Some(at) = columns.iter().position(|c| matches!(c, Column::Label)) {
        for line in text.lines().skip(1) {
            if let Some(label) = line.split('|').nth(at).map(capitalise)
                && !label.is_empty()
                && !extra.contains(&label)
            {
                extra.push(label);
            }
        }
    }
    for label in &extra {
        spec = spec.extra_label(label);
    }
    db.create_vertex_table(&spec)
        .map(drop)
        .map_err(|e| format!("declaring vertex table {space}: {e}"))
}

/// Loads `vanilla_dir` (with `headers` the path of `headers.txt`) into `db`.
pub fn load(db: &Database, headers: &Path, vanilla_dir: &Path) -> Result<LoadReport, String> {
    let headers =
        std::fs::read_to_string(headers).map_err(|e| format!("{}: {e}", headers.display()))?;
    let mut specs: Vec<(String, Vec<Column>)> = headers
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(file, spec)| (file.to_string(), parse_spec(spec.trim())))
        .collect();
    // Vertex files first, so edges find their endpoints.
    specs.sort_by_key(|(_, cols)| !cols.iter().any(|c| matches!(c, Column::Id(_))));
    let mut ids: HashMap<(String, i64), VertexId> = HashMap::new();
    let mut report = LoadReport::default();
    let files: Vec<String> = specs
        .iter()
        .map(|(file, _)| read(&vanilla_dir.join(format!("{file}_0_0.csv"))))
        .collect::<Result<_, _>>()?;
    for ((_, columns), text) in specs.iter().zip(&files) {
        declare_table(db, columns, text)?;
    }
    let mut tx = db.begin();
    for ((file, columns), text) in specs.iter().zip(&files) {
        let path = vanilla_dir.join(format!("{file}_0_0.csv"));
        let base = file.rsplit('/').next().unwrap_or(file);
        for line in text.lines().skip(1) {
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('|').collect();
            let mut props: Vec<(String, Value)> = Vec::new();
            let mut labels: Vec<String> = Vec::new();
            let (mut id, mut start, mut end) = (None, None, None);
            for (column, field) in columns.iter().zip(&fields) {
                match column {
                    Column::Id(space) => {
                        let value: i64 = field
                            .parse()
                            .map_err(|_| format!("{}: bad id {field}", path.display()))?;
                        id = Some((space.clone(), value));
                        labels.insert(0, space.clone());
                        props.push(("id".into(), Value::Int(value)));
                    }
                    Column::Start(space) => {
                        start = field.parse::<i64>().ok().map(|v| (space.clone(), v))
                    }
                    Column::End(space) => {
                        end = field.parse::<i64>().ok().map(|v| (space.clone(), v))
                    }
                    Column::Label => labels.push(capitalise(field)),
                    Column::Prop { name, kind } => {
                        let value = convert(field, kind);
                        if !matches!(value, Value::Null) {
                            props.push((name.clone(), value));
                        }
                    }
                }
            }
            let props_ref: Vec<(&str, Value)> =
                props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            if let Some(key) = id {
                if key.0 == "Post" || key.0 == "Comment" {
                    labels.push("Message".into());
                }
                let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
                let v = tx
                    .create_vertex(&label_refs, &props_ref)
                    .map_err(|e| e.to_string())?;
                ids.insert(key, v);
                report.vertices += 1;
            } else if let (Some(s), Some(d)) = (start, end) {
                let (Some(&src), Some(&dst)) = (ids.get(&s), ids.get(&d)) else {
                    return Err(format!("{}: unknown endpoint in `{line}`", path.display()));
                };
                let middle = base.split('_').nth(1).unwrap_or(base);
                tx.create_edge(src, &edge_type(middle), dst, &props_ref)
                    .map_err(|e| e.to_string())?;
                report.edges += 1;
            }
        }
    }
    tx.commit().map_err(|e| e.to_string())?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_specs() {
        assert_eq!(edge_type("hasCreator"), "HAS_CREATOR");
        assert_eq!(edge_type("knows"), "KNOWS");
        assert_eq!(capitalise("city"), "City");
        let cols = parse_spec(":START_ID(Person)|:END_ID(Tag)|since:LONG");
        assert!(matches!(&cols[0], Column::Start(s) if s == "Person"));
        assert!(
            matches!(&cols[2], Column::Prop { name, kind } if name == "since" && kind == "LONG")
        );
    }
}
