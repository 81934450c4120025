//! The `LoadCsv` stage: an input row once per record of a file (see `bind::load_csv`).
//!
//! READING
//! =======
//! For each input row the stage evaluates the source expression, which must be a string;
//! [`plexus_ingest::ImportDir::open`] resolves it under the connection's import directory
//! (refusing `..` and symbolic-link escapes and other URL schemes) and a
//! [`plexus_ingest::CsvReader`] streams the records. A file is read as the rows are pulled:
//! at most one batch of rows is built ahead, and the file stays open between batches (the
//! stage is `pending` until its last record), so a file larger than memory loads in constant
//! memory when nothing above buffers it.
//!
//! ROWS
//! ====
//! Without headers a record is a list of its fields; with `WITH HEADERS` the file's first
//! record names the fields and every later record is a map from those names to its fields.
//! A field is a string, or `null` when it was empty and unquoted (`""` is the empty string).
//! With headers, a record shorter than the header has `null` for the missing keys and a
//! longer one has its extra fields ignored (as in Neo4j); a header named twice keeps the
//! later field; an empty header field names the key `""`. A file holding only a header (or
//! nothing) has no rows. `linenumber()` is the 1-based line the record starts on, `file()`
//! the name relative to the import directory.
//!
//! ERRORS
//! ======
//! Everything about the file is an `ExternalResourceFailed` error whose message names the
//! file as the statement did (never the server's path) and, for content, its line and column:
//! `people.csv:3:7: unterminated quoted field`. A source that is not a string is a
//! `TypeError`. The statement fails, so its transaction writes nothing.

use super::ops::RowFn;
use super::{BATCH_ROWS, Batch, ExecContext};
use crate::eval::{Env, eval};
use plexus_ingest::{CsvReader, CsvRecord, IngestError, IngestErrorKind};
use plexus_plan::logical::BExpr;
use plexus_plan::logical::LoadCsvSpec;
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::{MapValue, Value};
use std::sync::Arc;

pub(super) struct LoadCsv {
    source: BExpr,
    spec: LoadCsvSpec,
    /// The file of the current input row, while it has records left.
    open: Option<OpenFile>,
}

/// A file being read for one input row.
struct OpenFile {
    reader: CsvReader,
    /// Reused for every record (the reader refills it without allocating).
    record: CsvRecord,
    /// The header's names, with `WITH HEADERS`.
    header: Option<Vec<Arc<str>>>,
    /// `file()`: the import-relative name.
    name: Value,
}

impl LoadCsv {
    pub(super) fn new(source: BExpr, spec: LoadCsvSpec) -> LoadCsv {
        LoadCsv {
            source,
            spec,
            open: None,
        }
    }

    /// Opens the file `input`'s row `row` names, and reads its header if there is one.
    fn open(&self, input: &Batch, row: usize, ctx: &mut ExecContext) -> Result<OpenFile> {
        let name = match eval(&self.source, &mut Env::new(input, row), ctx)? {
            Value::String(name) => name,
            other => {
                return Err(QueryError::type_error(format!(
                    "LOAD CSV reads from a file name (a string), not {}",
                    other.type_name()
                )));
            }
        };
        let Some(dir) = ctx.state.import_dir.clone() else {
            return Err(QueryError::runtime(
                ErrorClass::ExternalResourceFailed,
                "NoImportDirectory",
                "LOAD CSV reads files only from the import directory, and this database has \
                 none (set import_directory; a database in memory has none by default)",
            ));
        };
        let (resolved, file) = dir.open(&name).map_err(ingest_error)?;
        let reader =
            CsvReader::new(file, &resolved.name, self.spec.options).map_err(ingest_error)?;
        let mut open = OpenFile {
            reader,
            record: CsvRecord::default(),
            header: None,
            name: Value::String(Arc::from(resolved.name.as_str())),
        };
        if self.spec.with_headers && open.next_record()? {
            let names = open.record.iter().map(|f| Arc::from(f.unwrap_or("")));
            open.header = Some(names.collect());
        }
        Ok(open)
    }
}

impl OpenFile {
    fn next_record(&mut self) -> Result<bool> {
        self.reader
            .read_record(&mut self.record)
            .map_err(ingest_error)
    }

    /// The current record as the clause's variable holds it.
    fn value(&self) -> Value {
        let field = |f: Option<&str>| f.map_or(Value::Null, |s| Value::String(Arc::from(s)));
        match &self.header {
            None => Value::List(Arc::new(self.record.iter().map(field).collect())),
            Some(names) => {
                let mut map = MapValue::new();
                for (i, key) in names.iter().enumerate() {
                    map.insert(key.clone(), field(self.record.get(i)));
                }
                Value::Map(Arc::new(map))
            }
        }
    }
}

impl RowFn for LoadCsv {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let mut open = match self.open.take() {
            Some(open) => open,
            None => {
                let open = self.open(input, row, ctx)?;
                if self.spec.with_headers && open.header.is_none() {
                    return Ok(()); // an empty file
                }
                open
            }
        };
        let room = BATCH_ROWS.saturating_sub(out.len()).max(1);
        for _ in 0..room {
            if !open.next_record()? {
                return Ok(());
            }
            out.push_from(input, row);
            out.set_last(self.spec.slot, open.value());
            out.set_last(self.spec.line_slot, Value::Int(open.record.line as i64));
            out.set_last(self.spec.file_slot, open.name.clone());
        }
        self.open = Some(open);
        Ok(())
    }

    fn reset(&mut self) {
        self.open = None;
    }

    fn pending(&self) -> bool {
        self.open.is_some()
    }
}

/// An ingest failure as a query error (see ERRORS).
fn ingest_error(error: IngestError) -> QueryError {
    let code = match error.kind {
        IngestErrorKind::Location => "FileLocationRefused",
        IngestErrorKind::Io => "FileUnreadable",
        IngestErrorKind::Format => "MalformedCsv",
        IngestErrorKind::Options => "InvalidFieldTerminator",
    };
    QueryError::runtime(
        ErrorClass::ExternalResourceFailed,
        code,
        format!("LOAD CSV: {error}"),
    )
}
