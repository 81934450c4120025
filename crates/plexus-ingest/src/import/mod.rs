//! `plexus import`: neo4j-admin style node and relationship files as typed batches of values.
//!
//! WHAT
//! ====
//! This module reads the files; it does not touch a database. The CLI (`plexus import`) turns
//! each [`Batch`] into `plexus::BulkLoad` calls and keeps the id maps (identifier in its id
//! group → created node). The split follows the layering: this crate depends on no engine
//! crate, and the engine's bulk-load interface knows no file formats.
//!
//! ```text
//!   --nodes Person:Admin=people.csv,more.csv        NodeInput  ─┐
//!   --relationships KNOWS=knows.csv                 RelInput   ─┤ Plan::new: files exist,
//!   ldbc::layout(dir, headers.txt)  ─────────────────────────────┘ headers parsed (header.rs)
//!        │
//!        ▼  Plan::read(Stage::Nodes | Stage::Relationships, threads, consume)
//!   one job per file, parsed on `threads` threads (ordered.rs), handed to `consume` in
//!   input order: Batch { lines, ids | starts/ends, labels, types, columns, bad rows }
//! ```
//!
//! FILES AND HEADERS
//! =================
//! An input is one or more files that share a header. As in neo4j-admin, the header is the
//! first line of the first file and the other files hold data only — so the separate header
//! file form (`Person=people-header.csv,part1.csv,part2.csv`) is the same rule. A caller may
//! give the header itself instead ([`HeaderSource::Given`], the LDBC layout's `headers.txt`);
//! then every file's own first line is skipped.
//!
//! ROWS
//! ====
//! Every data record becomes one row of the batch, or one [`BadRow`] naming the file, the line
//! and (when one field is at fault) the column — the field's position in the record, 1-based,
//! and its header text: `people.csv:4:3: age:int: cannot read "x" as an integer`. Bad rows
//! here are the ones visible in the file alone: a record with a different number of fields
//! than the header (a malformed or truncated row), a value that does not read as its column's
//! type, a missing relationship endpoint or type. The caller adds the ones it finds against
//! the graph (unknown endpoints, duplicate ids, rows the bulk load rejects).
//!
//! Malformed CSV itself — an unterminated quote, text after a closing quote, invalid UTF-8 —
//! and I/O errors (a file that vanished, a truncated gzip stream) are not bad rows but errors
//! that end the read: after a quoting error nobody can tell where the next record starts.
//!
//! Values: see `values.rs` (an empty field is no property; types are checked, never guessed).
//! Identifiers are strings, or integers with [`IdType::Integer`] (neo4j-admin's `--id-type`);
//! a named id column (`id:ID(Person)`) is also stored as that property.
//!
//! ORDER
//! =====
//! Files are parsed in parallel but batches reach the caller in input order (files in the
//! order given, rows in file order), so the nodes get the ids a sequential load would give
//! them and the first error reported is the first in the input.

pub mod ldbc;
mod ordered;
mod values;

pub use ordered::{CHANNEL_ITEMS, run_ordered};
pub use values::type_name;

use crate::csv::{CsvOptions, CsvReader, CsvRecord};
use crate::error::{IngestError, IngestErrorKind, Result};
use crate::header::{ColumnKind, FieldType, Header, HeaderFor};
use plexus_types::Value;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per batch handed to the caller.
pub const BATCH_ROWS: usize = 8192;

/// Reads a temporal field (`date`, `localtime`, `time`, `localdatetime`, `datetime`,
/// `duration`) as a value; the caller supplies the query engine's text rules.
pub type TemporalParser = fn(FieldType, &str) -> std::result::Result<Value, String>;

/// How node identifiers are read (neo4j-admin's `--id-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdType {
    /// Any text; a named id column stores it as a string.
    #[default]
    String,
    /// A 64-bit integer; a named id column stores it as an integer.
    Integer,
}

/// How `:LABEL` values become labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LabelCase {
    #[default]
    AsWritten,
    /// First letter upper case (`city` → `City`), as the LDBC layout needs.
    Capitalised,
}

/// Options shared by every input of an import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub csv: CsvOptions,
    pub array_delimiter: char,
    pub id_type: IdType,
    pub label_case: LabelCase,
    pub temporal: Option<TemporalParser>,
    pub batch_rows: usize,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions {
            csv: CsvOptions::default(),
            array_delimiter: ';',
            id_type: IdType::default(),
            label_case: LabelCase::default(),
            temporal: None,
            batch_rows: BATCH_ROWS,
        }
    }
}

/// Where an input's header comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderSource {
    /// The first line of the first file; the other files hold data only.
    FirstLine,
    /// This header (fields separated by the delimiter); every file's first line is skipped.
    Given(String),
}

/// One `--nodes` or `--relationships` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Labels of every node of the input; for relationships, at most one: the type of rows
    /// whose `:TYPE` field is empty (or that have no `:TYPE` column).
    pub names: Vec<String>,
    pub files: Vec<PathBuf>,
    pub header: HeaderSource,
}

impl Input {
    /// Parses `[Name[:Name2…]=]file[,file…]` (neo4j-admin's `--nodes` / `--relationships`).
    pub fn parse(arg: &str, target: HeaderFor) -> Result<Input> {
        let options_error = |message: String| IngestError::new(IngestErrorKind::Options, message);
        let (names, files) = match arg.split_once('=') {
            Some((names, files)) => (
                names
                    .split(':')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
                files,
            ),
            None => (Vec::new(), arg),
        };
        if target == HeaderFor::Relationships && names.len() > 1 {
            return Err(options_error(format!(
                "{arg:?}: a relationship input takes one type before '=', got {}",
                names.join(":")
            )));
        }
        let files: Vec<PathBuf> = files
            .split(',')
            .filter(|f| !f.is_empty())
            .map(PathBuf::from)
            .collect();
        if files.is_empty() {
            return Err(options_error(format!("{arg:?}: no file named")));
        }
        Ok(Input {
            names,
            files,
            header: HeaderSource::FirstLine,
        })
    }
}

/// A node identifier as read from a file (in its id group).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdKey {
    Int(i64),
    Str(Box<str>),
}

impl fmt::Display for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdKey::Int(i) => write!(f, "{i}"),
            IdKey::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// A row that was not imported: where it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    pub file: Arc<str>,
    pub line: u64,
    /// The field at fault: its 1-based position in the record and its header text.
    pub column: Option<(usize, Arc<str>)>,
    pub message: String,
}

impl fmt::Display for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.column {
            Some((at, name)) => write!(
                f,
                "{}:{}:{at}: {name}: {}",
                self.file, self.line, self.message
            ),
            None => write!(f, "{}:{}: {}", self.file, self.line, self.message),
        }
    }
}

/// The two stages of an import: all nodes, then all relationships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Nodes,
    Relationships,
}

/// An input with its parsed header.
#[derive(Debug, Clone)]
pub struct Source {
    pub stage: Stage,
    pub names: Vec<String>,
    pub files: Vec<PathBuf>,
    /// How errors name each file (the path as given).
    pub file_names: Vec<Arc<str>>,
    /// Size of each file in bytes when the import started.
    pub file_bytes: Vec<u64>,
    pub header: Header,
    /// Each column's header text, for messages.
    pub column_text: Vec<Arc<str>>,
    skip_first_line: Vec<bool>,
}

impl Source {
    fn column_position(&self, pred: impl Fn(&ColumnKind) -> bool) -> Option<usize> {
        self.header.columns.iter().position(|c| pred(&c.kind))
    }

    /// The id group of the node identifiers (nodes), or of the start and end (relationships).
    pub fn id_group(&self) -> Option<&str> {
        self.header.columns.iter().find_map(|c| match &c.kind {
            ColumnKind::Id { group } => group.as_deref(),
            _ => None,
        })
    }

    pub fn start_group(&self) -> Option<&str> {
        self.header.columns.iter().find_map(|c| match &c.kind {
            ColumnKind::StartId { group } => group.as_deref(),
            _ => None,
        })
    }

    pub fn end_group(&self) -> Option<&str> {
        self.header.columns.iter().find_map(|c| match &c.kind {
            ColumnKind::EndId { group } => group.as_deref(),
            _ => None,
        })
    }

    /// `(1-based position, header text)` of the first column of `kind`'s role.
    pub fn column_of(&self, pred: impl Fn(&ColumnKind) -> bool) -> Option<(usize, Arc<str>)> {
        let at = self.column_position(pred)?;
        Some((at + 1, self.column_text[at].clone()))
    }

    /// The property names of the batches' `columns`, in order.
    pub fn property_names(&self) -> Vec<String> {
        self.header
            .columns
            .iter()
            .filter(|c| matches!(c.kind, ColumnKind::Property { .. } | ColumnKind::Id { .. }))
            .filter_map(|c| c.name.clone())
            .collect()
    }
}

/// A batch of rows of one file.
#[derive(Debug, Default)]
pub struct Batch {
    /// Index of the source (within its stage) and of the file within the source.
    pub source: usize,
    pub file: usize,
    /// Per row: the line it starts on.
    pub lines: Vec<u64>,
    /// Nodes, per row: the identifier (`None`: the row has none).
    pub ids: Vec<Option<IdKey>>,
    /// Relationships, per row: the endpoints' identifiers.
    pub starts: Vec<IdKey>,
    pub ends: Vec<IdKey>,
    /// Nodes with a `:LABEL` column: the row's extra labels.
    pub labels: Option<Vec<Vec<String>>>,
    /// Relationships, per row: the type (from `:TYPE`, else the input's).
    pub types: Vec<Arc<str>>,
    /// Property columns (named id column included), one value per row; `Null` = absent.
    pub columns: Vec<(String, Vec<Value>)>,
    /// Rows of this stretch of the file that are not in the batch, in line order.
    pub bad: Vec<BadRow>,
    /// Bytes of the file read when the batch was cut (compressed bytes for gzip).
    pub bytes_read: u64,
    /// The file's last batch.
    pub last: bool,
}

impl Batch {
    pub fn rows(&self) -> usize {
        self.lines.len()
    }
}

/// Everything an import will read, checked before anything is read.
#[derive(Debug, Clone)]
pub struct Plan {
    pub nodes: Vec<Source>,
    pub relationships: Vec<Source>,
    pub options: ImportOptions,
}

impl Plan {
    /// Checks that every file exists and parses every header; nothing else is read yet.
    pub fn new(
        nodes: Vec<Input>,
        relationships: Vec<Input>,
        options: ImportOptions,
    ) -> Result<Plan> {
        let nodes = nodes
            .into_iter()
            .map(|input| Source::open(input, Stage::Nodes, &options))
            .collect::<Result<Vec<_>>>()?;
        let relationships = relationships
            .into_iter()
            .map(|input| Source::open(input, Stage::Relationships, &options))
            .collect::<Result<Vec<_>>>()?;
        Ok(Plan {
            nodes,
            relationships,
            options,
        })
    }

    pub fn sources(&self, stage: Stage) -> &[Source] {
        match stage {
            Stage::Nodes => &self.nodes,
            Stage::Relationships => &self.relationships,
        }
    }

    /// Total bytes of a stage's files.
    pub fn total_bytes(&self, stage: Stage) -> u64 {
        self.sources(stage).iter().flat_map(|s| &s.file_bytes).sum()
    }

    /// Reads every file of `stage` on up to `threads` threads; `consume` gets the batches in
    /// input order (or the error that ended a file's read) until it returns `false`.
    pub fn read(
        &self,
        stage: Stage,
        threads: usize,
        mut consume: impl FnMut(Result<Batch>) -> bool,
    ) {
        let sources = self.sources(stage);
        let jobs: Vec<(usize, usize)> = sources
            .iter()
            .enumerate()
            .flat_map(|(s, source)| (0..source.files.len()).map(move |f| (s, f)))
            .collect();
        run_ordered(
            &jobs,
            threads,
            |&(s, f), send| {
                let mut failed = false;
                let result = read_file(&sources[s], s, f, &self.options, &mut |batch| {
                    let go_on = send(Ok(batch));
                    failed |= !go_on;
                    go_on
                });
                if let Err(e) = result
                    && !failed
                {
                    send(Err(e));
                }
            },
            |_, item| consume(item),
        );
    }

    /// The distinct labels of the `:LABEL` column of node source `source` (after
    /// [`LabelCase`]), sorted; empty without such a column. Reads the source's files; bad
    /// rows are not looked at (the load reports them).
    pub fn distinct_labels(&self, source: usize) -> Result<BTreeSet<String>> {
        // Bad rows are left to the load, which reports (or skips) them.
        let mut labels = BTreeSet::new();
        let source_ref = &self.nodes[source];
        for file in 0..source_ref.files.len() {
            read_file(source_ref, source, file, &self.options, &mut |batch| {
                for row in batch.labels.iter().flatten() {
                    labels.extend(row.iter().cloned());
                }
                true
            })?;
        }
        Ok(labels)
    }
}

impl Source {
    fn open(input: Input, stage: Stage, options: &ImportOptions) -> Result<Source> {
        let target = match stage {
            Stage::Nodes => HeaderFor::Nodes,
            Stage::Relationships => HeaderFor::Relationships,
        };
        let file_names: Vec<Arc<str>> = input
            .files
            .iter()
            .map(|f| Arc::from(f.display().to_string()))
            .collect();
        let mut file_bytes = Vec::with_capacity(input.files.len());
        for (path, name) in input.files.iter().zip(&file_names) {
            let meta = std::fs::metadata(path).map_err(|e| {
                IngestError::new(IngestErrorKind::Io, format!("cannot read the file: {e}"))
                    .in_file(name)
            })?;
            if !meta.is_file() {
                return Err(IngestError::new(IngestErrorKind::Io, "not a file").in_file(name));
            }
            file_bytes.push(meta.len());
        }
        let (header_record, header_file, skip_first_line) = match &input.header {
            HeaderSource::FirstLine => {
                let mut reader = open_reader(&input.files[0], &file_names[0], options)?;
                let mut record = CsvRecord::default();
                if !reader.read_record(&mut record)? {
                    return Err(IngestError::new(
                        IngestErrorKind::Format,
                        "the file is empty: its first line must be the header",
                    )
                    .in_file(&file_names[0]));
                }
                let mut skip = vec![false; input.files.len()];
                skip[0] = true;
                (record, file_names[0].to_string(), skip)
            }
            HeaderSource::Given(text) => {
                let mut reader = CsvReader::new(
                    std::io::Cursor::new(text.clone().into_bytes()),
                    "the given header",
                    options.csv,
                )?;
                let mut record = CsvRecord::default();
                reader.read_record(&mut record)?;
                (
                    record,
                    "the given header".to_string(),
                    vec![true; input.files.len()],
                )
            }
        };
        let header = Header::parse(header_record.iter(), target, &header_file)?;
        let column_text = header_record
            .iter()
            .map(|f| Arc::from(f.unwrap_or("").trim()))
            .collect();
        Ok(Source {
            stage,
            names: input.names,
            files: input.files,
            file_names,
            file_bytes,
            header,
            column_text,
            skip_first_line,
        })
    }
}

fn open_reader(path: &Path, name: &str, options: &ImportOptions) -> Result<CsvReader> {
    let file = std::fs::File::open(path).map_err(|e| {
        IngestError::new(IngestErrorKind::Io, format!("cannot read the file: {e}")).in_file(name)
    })?;
    CsvReader::new(file, name, options.csv)
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Reads file `file` of `source` (index `source_index` in its stage) into batches.
fn read_file(
    source: &Source,
    source_index: usize,
    file: usize,
    options: &ImportOptions,
    send: &mut dyn FnMut(Batch) -> bool,
) -> Result<()> {
    let name = &source.file_names[file];
    let mut reader = open_reader(&source.files[file], name, options)?;
    let mut record = CsvRecord::default();
    if source.skip_first_line[file] {
        reader.read_record(&mut record)?;
    }
    let columns = &source.header.columns;
    let width = columns.len();
    let property_names = source.property_names();
    let has_labels = columns.iter().any(|c| c.kind == ColumnKind::Label);
    let default_type: Option<Arc<str>> = source.names.first().map(|t| Arc::from(t.as_str()));
    let new_batch = || Batch {
        source: source_index,
        file,
        columns: property_names
            .iter()
            .map(|n| (n.clone(), Vec::with_capacity(options.batch_rows)))
            .collect(),
        labels: has_labels.then(Vec::new),
        ..Batch::default()
    };
    let mut batch = new_batch();
    // One row's values before it is known to be good.
    let mut values: Vec<Value> = Vec::with_capacity(property_names.len());
    loop {
        if !reader.read_record(&mut record)? {
            break;
        }
        let line = record.line;
        let bad = |column: Option<usize>, message: String| BadRow {
            file: name.clone(),
            line,
            column: column.map(|at| (at + 1, source.column_text[at].clone())),
            message,
        };
        if record.len() != width {
            batch.bad.push(bad(
                None,
                format!(
                    "malformed row: {} fields where the header has {width}",
                    record.len()
                ),
            ));
            continue;
        }
        values.clear();
        let (mut id, mut start, mut end, mut labels, mut rel_type) =
            (None, None, None, Vec::new(), default_type.clone());
        let mut problem = None;
        for (at, column) in columns.iter().enumerate() {
            let field = record.get(at);
            match &column.kind {
                ColumnKind::Property { ty, array } => {
                    match values::convert(
                        field,
                        *ty,
                        *array,
                        options.array_delimiter,
                        options.temporal,
                    ) {
                        Ok(value) => values.push(value.unwrap_or(Value::Null)),
                        Err(message) => {
                            problem = Some(bad(Some(at), message));
                            break;
                        }
                    }
                }
                ColumnKind::Id { .. } | ColumnKind::StartId { .. } | ColumnKind::EndId { .. } => {
                    let key = match field.map(|f| read_id(f, options.id_type)) {
                        None => None,
                        Some(Ok(key)) => Some(key),
                        Some(Err(message)) => {
                            problem = Some(bad(Some(at), message));
                            break;
                        }
                    };
                    match &column.kind {
                        ColumnKind::Id { .. } => {
                            if column.name.is_some() {
                                values.push(match &key {
                                    Some(IdKey::Int(i)) => Value::Int(*i),
                                    Some(IdKey::Str(s)) => Value::from(&**s),
                                    None => Value::Null,
                                });
                            }
                            id = key;
                        }
                        ColumnKind::StartId { .. } => start = key,
                        _ => end = key,
                    }
                }
                ColumnKind::Label => {
                    labels.extend(
                        field
                            .unwrap_or("")
                            .split(options.array_delimiter)
                            .filter(|l| !l.is_empty())
                            .map(|l| match options.label_case {
                                LabelCase::AsWritten => l.to_string(),
                                LabelCase::Capitalised => capitalise(l),
                            }),
                    );
                }
                ColumnKind::Type => {
                    if let Some(t) = field.filter(|t| !t.is_empty()) {
                        rel_type = Some(Arc::from(t));
                    }
                }
                ColumnKind::Ignore => {}
            }
        }
        if problem.is_none() && source.stage == Stage::Relationships {
            let missing = |pred: fn(&ColumnKind) -> bool, what: &str| {
                let at = source.column_position(pred);
                bad(at, format!("no {what}"))
            };
            if start.is_none() {
                problem = Some(missing(
                    |k| matches!(k, ColumnKind::StartId { .. }),
                    "start node id",
                ));
            } else if end.is_none() {
                problem = Some(missing(
                    |k| matches!(k, ColumnKind::EndId { .. }),
                    "end node id",
                ));
            } else if rel_type.is_none() {
                problem = Some(missing(
                    |k| matches!(k, ColumnKind::Type),
                    "relationship type (no :TYPE value and no TYPE= before the files)",
                ));
            }
        }
        if let Some(problem) = problem {
            batch.bad.push(problem);
            continue;
        }
        batch.lines.push(line);
        for ((_, column), value) in batch.columns.iter_mut().zip(values.drain(..)) {
            column.push(value);
        }
        match source.stage {
            Stage::Nodes => {
                batch.ids.push(id);
                if let Some(rows) = &mut batch.labels {
                    rows.push(labels);
                }
            }
            Stage::Relationships => {
                batch.starts.extend(start);
                batch.ends.extend(end);
                batch.types.extend(rel_type);
            }
        }
        if batch.rows() >= options.batch_rows {
            batch.bytes_read = reader.bytes_read();
            if !send(std::mem::replace(&mut batch, new_batch())) {
                return Ok(());
            }
        }
    }
    batch.bytes_read = reader.bytes_read();
    batch.last = true;
    send(batch);
    Ok(())
}

fn read_id(text: &str, id_type: IdType) -> std::result::Result<IdKey, String> {
    match id_type {
        IdType::String => Ok(IdKey::Str(text.into())),
        IdType::Integer => {
            text.trim().parse::<i64>().map(IdKey::Int).map_err(|_| {
                format!("cannot read the id {text:?} as an integer (--id-type integer)")
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TempFiles(PathBuf);

    impl TempFiles {
        fn new(name: &str, files: &[(&str, &str)]) -> TempFiles {
            let dir = std::env::temp_dir().join(format!(
                "plexus-ingest-import-{}-{name}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            for (file, text) in files {
                std::fs::write(dir.join(file), text).unwrap();
            }
            TempFiles(dir)
        }

        fn input(&self, arg: &str, target: HeaderFor) -> Input {
            let (names, files) = arg.split_once('=').unwrap();
            let files: Vec<String> = files
                .split(',')
                .map(|f| self.0.join(f).display().to_string())
                .collect();
            Input::parse(&format!("{names}={}", files.join(",")), target).unwrap()
        }
    }

    impl Drop for TempFiles {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn read_all(plan: &Plan, stage: Stage) -> Vec<Result<Batch>> {
        let mut out = Vec::new();
        plan.read(stage, 2, |b| {
            out.push(b);
            true
        });
        out
    }

    #[test]
    fn input_arguments() {
        let nodes = Input::parse("Person:Admin=a.csv,b.csv", HeaderFor::Nodes).unwrap();
        assert_eq!(nodes.names, ["Person", "Admin"]);
        assert_eq!(
            nodes.files,
            [PathBuf::from("a.csv"), PathBuf::from("b.csv")]
        );
        assert_eq!(
            Input::parse("x.csv", HeaderFor::Nodes).unwrap().names.len(),
            0
        );
        assert!(Input::parse("A:B=x.csv", HeaderFor::Relationships).is_err());
        assert!(Input::parse("A=", HeaderFor::Nodes).is_err());
    }

    #[test]
    fn nodes_relationships_and_bad_rows() {
        let files = TempFiles::new(
            "basic",
            &[
                (
                    "people.csv",
                    "id:ID(P),name,age:int,tags:string[],:LABEL\n\
                     1,Ada,36,a;b,Admin\n2,Bob,x,,\n3,Cy\n4,,,,X;Y\n",
                ),
                (
                    "knows-header.csv",
                    ":START_ID(P),:END_ID(P),since:int,:TYPE\n",
                ),
                ("knows.csv", "1,2,2020,\n2,,1,\n1,4,3,LIKES\n"),
            ],
        );
        let plan = Plan::new(
            vec![files.input("Person=people.csv", HeaderFor::Nodes)],
            vec![files.input("KNOWS=knows-header.csv,knows.csv", HeaderFor::Relationships)],
            ImportOptions::default(),
        )
        .unwrap();
        let batches = read_all(&plan, Stage::Nodes);
        assert_eq!(batches.len(), 1);
        let batch = batches[0].as_ref().unwrap();
        assert_eq!(batch.lines, [2, 5]);
        assert_eq!(
            batch.ids,
            [Some(IdKey::Str("1".into())), Some(IdKey::Str("4".into()))]
        );
        assert_eq!(
            batch.labels,
            Some(vec![
                vec!["Admin".to_string()],
                vec!["X".into(), "Y".into()]
            ])
        );
        let names: Vec<&str> = batch.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["id", "name", "age", "tags"]);
        assert_eq!(batch.columns[2].1, [Value::Int(36), Value::Null]);
        let bad: Vec<String> = batch.bad.iter().map(ToString::to_string).collect();
        let people = files.0.join("people.csv").display().to_string();
        assert_eq!(
            bad,
            [
                format!("{people}:3:3: age:int: cannot read \"x\" as an integer"),
                format!("{people}:4: malformed row: 2 fields where the header has 5"),
            ]
        );

        let batches = read_all(&plan, Stage::Relationships);
        // The header file makes a batch of its own (no rows), then the data file.
        assert_eq!(batches.len(), 2);
        let batch = batches[1].as_ref().unwrap();
        assert_eq!(batch.lines, [1, 3]);
        let types: Vec<&str> = batch.types.iter().map(|t| &**t).collect();
        assert_eq!(types, ["KNOWS", "LIKES"]);
        assert_eq!(batch.ends, [IdKey::Str("2".into()), IdKey::Str("4".into())]);
        assert_eq!(batch.bad.len(), 1);
        assert!(
            batch.bad[0]
                .to_string()
                .ends_with("knows.csv:2:2: :END_ID(P): no end node id"),
            "{}",
            batch.bad[0]
        );
    }

    #[test]
    fn missing_files_and_bad_headers_fail_the_plan() {
        let files = TempFiles::new("missing", &[("h.csv", "name:integer\n")]);
        let err = Plan::new(
            vec![files.input("A=nope.csv", HeaderFor::Nodes)],
            vec![],
            ImportOptions::default(),
        )
        .unwrap_err();
        assert_eq!(err.kind, IngestErrorKind::Io);
        assert!(
            err.to_string().contains("nope.csv: cannot read the file"),
            "{err}"
        );
        let err = Plan::new(
            vec![files.input("A=h.csv", HeaderFor::Nodes)],
            vec![],
            ImportOptions::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown type 'integer'"), "{err}");
    }

    #[test]
    fn integer_ids_and_a_given_header() {
        let files = TempFiles::new("given", &[("p.csv", "ignored|header\n7|a\nx|b\n")]);
        let mut input = files.input("P=p.csv", HeaderFor::Nodes);
        input.header = HeaderSource::Given("id:ID(P)|name".into());
        let options = ImportOptions {
            csv: CsvOptions::with_field_terminator("|").unwrap(),
            id_type: IdType::Integer,
            ..ImportOptions::default()
        };
        let plan = Plan::new(vec![input], vec![], options).unwrap();
        let batches = read_all(&plan, Stage::Nodes);
        let batch = batches[0].as_ref().unwrap();
        assert_eq!(batch.ids, [Some(IdKey::Int(7))]);
        assert_eq!(batch.columns[0].1, [Value::Int(7)]);
        assert!(
            batch.bad[0]
                .message
                .contains("cannot read the id \"x\" as an integer")
        );
    }
}
