//! Pending edges: rows whose edge cannot exist yet because an endpoint vertex is missing.
//!
//! A source without foreign-key constraints (or a mapping whose endpoint is not the foreign
//! key's target) can hold a row that references a vertex that does not exist yet. Its edge
//! is *pending*: kept here with the row's values, keyed by (edge alias, row key), and created
//! once the vertex arrives. Nothing is dropped silently: the status counts and lists them and
//! each is logged once.
//!
//! PERSISTENCE
//! ===========
//! For an on-disk database the set lives in `<db dir>/mirror-<slot>.pending`, rewritten
//! (temporary file, fsync, rename, directory fsync) *before* the graph commit of an epoch
//! that changed it. Entries are keyed, so after a crash between the file write and the graph
//! commit the replayed epoch rewrites the same entries: the file may be ahead of the graph,
//! never behind, and being ahead is harmless (a pending entry for a row whose edge the graph
//! already has is found again by the same key and replaced).
//!
//! FORMAT
//! ======
//! One entry per line in PostgreSQL's COPY text format: `alias`, `missing`, the number of
//! key values, the key values, then (column, value) pairs of the row (`\N` for NULL).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::MirrorError;
use crate::change::Datum;
use crate::source::copy_text::parse_row;

/// How many pending entries the status lists.
pub const PENDING_LISTED_MAX: usize = 5;

/// One pending edge row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingEdge {
    /// What is missing, e.g. `person id=42`.
    pub missing: String,
    pub columns: Vec<String>,
    pub values: Vec<Datum>,
}

/// (edge alias, key values as text).
pub type PendingKey = (String, Vec<Option<String>>);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingSet {
    pub entries: BTreeMap<PendingKey, PendingEdge>,
}

fn escape(out: &mut String, value: Option<&str>) {
    let Some(value) = value else {
        out.push_str("\\N");
        return;
    };
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

impl PendingSet {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first few entries as `alias (key): missing`.
    pub fn listed(&self) -> Vec<String> {
        self.entries
            .iter()
            .take(PENDING_LISTED_MAX)
            .map(|((alias, key), edge)| {
                let key: Vec<&str> = key.iter().map(|k| k.as_deref().unwrap_or("NULL")).collect();
                format!("{alias} ({}): missing {}", key.join(", "), edge.missing)
            })
            .collect()
    }

    fn encode(&self) -> String {
        let mut out = String::new();
        for ((alias, key), edge) in &self.entries {
            escape(&mut out, Some(alias));
            out.push('\t');
            escape(&mut out, Some(&edge.missing));
            out.push('\t');
            out.push_str(&key.len().to_string());
            for k in key {
                out.push('\t');
                escape(&mut out, k.as_deref());
            }
            for (column, value) in edge.columns.iter().zip(&edge.values) {
                out.push('\t');
                escape(&mut out, Some(column));
                out.push('\t');
                match value {
                    Datum::Text(text) => escape(&mut out, Some(text)),
                    Datum::Null | Datum::UnchangedToast => escape(&mut out, None),
                }
            }
            out.push('\n');
        }
        out
    }

    fn decode(text: &str, file: &Path) -> Result<PendingSet, MirrorError> {
        let mut set = PendingSet::default();
        let bad = |line: usize, why: &str| {
            MirrorError::Pending(format!("{}:{line}: {why}", file.display()))
        };
        for (index, line) in text.lines().enumerate() {
            let fields = line.bytes().filter(|&b| b == b'\t').count() + 1;
            let row = parse_row(line.as_bytes(), fields, index as u64 + 1)
                .map_err(|e| bad(index + 1, &e.to_string()))?;
            let text_of = |d: &Datum| match d {
                Datum::Text(t) => Some(t.clone()),
                Datum::Null | Datum::UnchangedToast => None,
            };
            let [alias, missing, count, rest @ ..] = row.as_slice() else {
                return Err(bad(index + 1, "too few fields"));
            };
            let (Some(alias), Some(missing), Some(count)) =
                (text_of(alias), text_of(missing), text_of(count))
            else {
                return Err(bad(index + 1, "NULL alias, reason or key count"));
            };
            let count: usize = count.parse().map_err(|_| bad(index + 1, "bad key count"))?;
            if rest.len() < count || !(rest.len() - count).is_multiple_of(2) {
                return Err(bad(index + 1, "bad field count"));
            }
            let key = rest[..count].iter().map(text_of).collect();
            let mut columns = Vec::new();
            let mut values = Vec::new();
            for pair in rest[count..].chunks(2) {
                columns.push(text_of(&pair[0]).ok_or_else(|| bad(index + 1, "NULL column"))?);
                values.push(pair[1].clone());
            }
            set.entries.insert(
                (alias, key),
                PendingEdge {
                    missing,
                    columns,
                    values,
                },
            );
        }
        Ok(set)
    }

    /// Reads the set from `file` (empty when the file does not exist).
    pub fn load(file: &Path) -> Result<PendingSet, MirrorError> {
        match fs::read_to_string(file) {
            Ok(text) => PendingSet::decode(&text, file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PendingSet::default()),
            Err(e) => Err(MirrorError::Pending(format!("{}: {e}", file.display()))),
        }
    }

    /// Writes the set to `file` durably: temporary file, fsync, rename, directory fsync.
    pub fn store(&self, file: &Path) -> Result<(), MirrorError> {
        let io = |e: std::io::Error| MirrorError::Pending(format!("{}: {e}", file.display()));
        let mut tmp = PathBuf::from(file);
        tmp.set_extension("pending.tmp");
        {
            let mut out = fs::File::create(&tmp).map_err(io)?;
            out.write_all(self.encode().as_bytes()).map_err(io)?;
            out.sync_all().map_err(io)?;
        }
        fs::rename(&tmp, file).map_err(io)?;
        if let Some(dir) = file.parent() {
            fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_format_round_trips() {
        let mut set = PendingSet::default();
        set.entries.insert(
            ("knows".to_owned(), vec![Some("1".to_owned()), None]),
            PendingEdge {
                missing: "person id=2".to_owned(),
                columns: vec!["a".to_owned(), "b\tc".to_owned()],
                values: vec![Datum::Text("x\\y\nz".to_owned()), Datum::Null],
            },
        );
        let decoded = PendingSet::decode(&set.encode(), Path::new("f")).expect("decode");
        assert_eq!(decoded, set);
        assert_eq!(set.listed(), ["knows (1, NULL): missing person id=2"]);
    }
}
