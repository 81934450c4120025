//! The LDBC SNB Interactive v1 `CsvComposite` layout as an import [`Plan`] (`plexus import
//! ldbc-snb`).
//!
//! LAYOUT
//! ======
//! A directory with `static/` and `dynamic/` entity files, `<entity>_<i>_<j>.csv` (one or more
//! partitions, `|`-separated, each with its own header line), and a `headers.txt` giving, per
//! entity, a neo4j-admin header that replaces the files' own (positionally):
//!
//! ```text
//! static/place id:ID(Place)|name:STRING|url:STRING|:LABEL
//! dynamic/person_knows_person :START_ID(Person)|:END_ID(Person)|creationDate:LONG
//! ```
//!
//! MAPPING
//! =======
//! - a header with `:ID(X)` is a node input labelled `X` (and `Message` for `Post` and
//!   `Comment`, as the queries expect); `:LABEL` values are capitalised (`city` → `City`);
//! - any other header is a relationship input whose type is the middle of the entity name in
//!   upper snake case (`person_knows_person` → `KNOWS`, `post_hasCreator_person` →
//!   `HAS_CREATOR`);
//! - ids are integers (`--id-type integer`), so `id` is an integer property; `LONG` dates stay
//!   epoch milliseconds; `STRING[]` (`speaks`, `email`) are lists split on `;`;
//! - an empty field is no property (an image post has no `content`), as in neo4j-admin and as
//!   IU6 writes it (`CASE $content WHEN '' THEN NULL …`);
//! - each node id group becomes a declared vertex table [`TableDecl`] with `id` as its primary
//!   key, so `MATCH (p:Person {id: $personId})` is an index seek; its extra labels are
//!   `Message` and the `:LABEL` values found in the files.
//!
//! Node inputs come first in `headers.txt` order, then relationship inputs in that order.

use super::{HeaderSource, IdType, ImportOptions, Input, LabelCase, Plan};
use crate::csv::CsvOptions;
use crate::error::{IngestError, IngestErrorKind, Result};
use std::path::{Path, PathBuf};

/// A vertex table to declare before loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDecl {
    pub label: String,
    /// The integer primary-key property.
    pub primary_key: String,
    pub extra_labels: Vec<String>,
}

/// The LDBC layout of `dir` with `headers` (the `headers.txt` file).
pub struct Layout {
    pub plan: Plan,
    pub tables: Vec<TableDecl>,
}

/// Labels every node of these id groups also carries.
const MESSAGE_GROUPS: &[&str] = &["Post", "Comment"];
const MESSAGE: &str = "Message";

/// Where `headers.txt` is when not given: in `dir`, else two levels up (the reference
/// implementation keeps `cypher/headers.txt` beside `cypher/test-data/vanilla`).
pub fn default_headers(dir: &Path) -> Option<PathBuf> {
    [dir.join("headers.txt"), dir.join("../../headers.txt")]
        .into_iter()
        .find(|p| p.is_file())
}

/// Reads `headers` and finds the entity files in `dir`; `options` supplies the temporal
/// reader (the layout fixes the rest).
pub fn layout(dir: &Path, headers: &Path, options: ImportOptions) -> Result<Layout> {
    let name = headers.display().to_string();
    let text = std::fs::read_to_string(headers).map_err(|e| {
        IngestError::new(IngestErrorKind::Io, format!("cannot read the file: {e}")).in_file(&name)
    })?;
    let options = ImportOptions {
        csv: CsvOptions::with_field_terminator("|")?,
        array_delimiter: ';',
        id_type: IdType::Integer,
        label_case: LabelCase::Capitalised,
        ..options
    };
    let (mut nodes, mut relationships) = (Vec::new(), Vec::new());
    let mut groups = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((entity, spec)) = line.split_once(char::is_whitespace) else {
            return Err(
                IngestError::new(IngestErrorKind::Format, "expected `<entity> <header>`")
                    .in_file(&name)
                    .at(at as u64 + 1, 1),
            );
        };
        let spec = spec.trim();
        let files = entity_files(dir, entity)?;
        let id_group = spec.split('|').find_map(|c| {
            let (_, kind) = c.rsplit_once(':')?;
            let group = kind.strip_prefix("ID(")?.strip_suffix(')')?;
            Some(group.to_string())
        });
        let mut input = Input {
            names: Vec::new(),
            files,
            header: HeaderSource::Given(spec.to_string()),
        };
        match id_group {
            Some(group) => {
                input.names.push(group.clone());
                if MESSAGE_GROUPS.contains(&group.as_str()) {
                    input.names.push(MESSAGE.to_string());
                }
                groups.push(group);
                nodes.push(input);
            }
            None => {
                let base = entity.rsplit('/').next().unwrap_or(entity);
                let middle = base.split('_').nth(1).unwrap_or(base);
                input.names.push(edge_type(middle));
                relationships.push(input);
            }
        }
    }
    let plan = Plan::new(nodes, relationships, options)?;
    let mut tables = Vec::new();
    for (source, group) in groups.into_iter().enumerate() {
        let mut extra_labels: Vec<String> = plan.nodes[source].names[1..].to_vec();
        for label in plan.distinct_labels(source)? {
            if !extra_labels.contains(&label) && label != group {
                extra_labels.push(label);
            }
        }
        tables.push(TableDecl {
            label: group,
            primary_key: "id".to_string(),
            extra_labels,
        });
    }
    Ok(Layout { plan, tables })
}

/// The partition files of `entity` (`static/place` → `static/place_0_0.csv`, …), sorted.
fn entity_files(dir: &Path, entity: &str) -> Result<Vec<PathBuf>> {
    let path = dir.join(entity);
    let (parent, stem) = (
        path.parent().unwrap_or(dir).to_path_buf(),
        path.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let entries = std::fs::read_dir(&parent).map_err(|e| {
        IngestError::new(
            IngestErrorKind::Io,
            format!("cannot read the directory: {e}"),
        )
        .in_file(&parent.display().to_string())
    })?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
                return false;
            };
            let Some(rest) = name
                .strip_prefix(stem.as_str())
                .and_then(|r| r.strip_prefix('_'))
            else {
                return false;
            };
            let rest = rest
                .strip_suffix(".csv")
                .or_else(|| rest.strip_suffix(".csv.gz"));
            // `<i>_<j>`: digits only, so `person_0_0.csv` is not taken for `person_knows_…`.
            rest.is_some_and(|r| {
                let mut parts = r.split('_');
                let ok = |p: Option<&str>| {
                    p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                };
                ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
            })
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(IngestError::new(
            IngestErrorKind::Io,
            format!("no files {stem}_<i>_<j>.csv for the entity '{entity}'"),
        )
        .in_file(&parent.display().to_string()));
    }
    Ok(files)
}

/// `hasCreator` → `HAS_CREATOR`.
pub fn edge_type(camel: &str) -> String {
    let mut out = String::new();
    for c in camel.chars() {
        if c.is_uppercase() && !out.is_empty() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vanilla() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/ldbc-snb-mini/cypher/test-data/vanilla")
    }

    #[test]
    fn edge_types() {
        assert_eq!(edge_type("hasCreator"), "HAS_CREATOR");
        assert_eq!(edge_type("knows"), "KNOWS");
    }

    #[test]
    fn the_snb_mini_layout() {
        let dir = vanilla();
        let headers = default_headers(&dir).expect("headers.txt two levels up");
        let layout = layout(&dir, &headers, ImportOptions::default()).unwrap();
        assert_eq!(layout.plan.nodes.len(), 8);
        assert_eq!(layout.plan.relationships.len(), 23);
        let place = layout.tables.iter().find(|t| t.label == "Place").unwrap();
        assert_eq!(place.extra_labels, ["City", "Continent", "Country"]);
        let post = layout.tables.iter().find(|t| t.label == "Post").unwrap();
        assert_eq!(post.extra_labels, ["Message"]);
        let knows = layout
            .plan
            .relationships
            .iter()
            .find(|s| s.files[0].ends_with("person_knows_person_0_0.csv"))
            .unwrap();
        assert_eq!(knows.names, ["KNOWS"]);
        // `person` is not confused with `person_knows_person` and the like.
        let person = layout
            .plan
            .nodes
            .iter()
            .find(|s| s.names[0] == "Person")
            .unwrap();
        assert_eq!(person.files.len(), 1);
    }
}
