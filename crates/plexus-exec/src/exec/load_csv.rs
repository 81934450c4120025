//! The `LoadCsv` stage: an input row once per record of a file (see `bind::load_csv`).
//!
//! READING
//! =======
//! For each input row the stage evaluates the source expression, which must be a string;
//! [`plexus_ingest::ImportDir::open`] resolves it under the connection's import directory
//! (refusing `..` and symbolic-link escapes and other URL schemes) and a
//! [`plexus_ingest::CsvReader`] streams the records. A file is read as the rows are pulled:
//! a reader thread parses the records and builds their values ([`READ_AHEAD_CHUNKS`] chunks of
//! [`BATCH_ROWS`] records at most ahead of the stage, on the other core while the statement's
//! thread runs the clauses above), and the file stays open between batches (the stage is
//! `pending` until its last record), so a file larger than memory loads in constant memory
//! when nothing above buffers it. The thread reads only the file: the rows reach the stage
//! in file order, an error after the records before it, exactly where reading in place would
//! have raised it; dropping the stage stops the thread at its next chunk.
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
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Chunks of [`BATCH_ROWS`] records the reader thread may have ready beyond the one the stage
/// is taking rows from.
pub(super) const READ_AHEAD_CHUNKS: usize = 2;

pub(super) struct LoadCsv {
    source: BExpr,
    spec: LoadCsvSpec,
    /// The file of the current input row, while it has records left.
    open: Option<OpenFile>,
}

/// A file being read for one input row: its records arrive from the reader thread.
struct OpenFile {
    chunks: Receiver<Chunk>,
    /// The records of the chunk being taken: (the record's value, its line).
    records: std::vec::IntoIter<(Value, i64)>,
    /// `file()`: the import-relative name.
    name: Value,
}

/// What the reader thread sends: records in file order, then the end or the error that
/// stopped it.
enum Chunk {
    Records(Vec<(Value, i64)>),
    Failed(QueryError),
    End,
}

/// The reader thread's side: the parser and the header (see READING).
struct FileReader {
    reader: CsvReader,
    /// Reused for every record (the reader refills it without allocating).
    record: CsvRecord,
    /// The header's names, with `WITH HEADERS`.
    header: Option<Vec<Arc<str>>>,
}

impl LoadCsv {
    pub(super) fn new(source: BExpr, spec: LoadCsvSpec) -> LoadCsv {
        LoadCsv {
            source,
            spec,
            open: None,
        }
    }

    /// Opens the file `input`'s row `row` names, reads its header if there is one and starts
    /// its reader thread; `None` for a file without a header where one is expected (empty).
    fn open(&self, input: &Batch, row: usize, ctx: &mut ExecContext) -> Result<Option<OpenFile>> {
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
        let mut file = FileReader {
            reader,
            record: CsvRecord::default(),
            header: None,
        };
        if self.spec.with_headers {
            if !file.next_record()? {
                return Ok(None); // an empty file
            }
            let names = file.record.iter().map(|f| Arc::from(f.unwrap_or("")));
            file.header = Some(names.collect());
        }
        let (send, chunks) = sync_channel(READ_AHEAD_CHUNKS);
        std::thread::Builder::new()
            .name("plexus-load-csv".into())
            .spawn(move || file.send_all(&send))
            .map_err(|e| {
                QueryError::runtime(
                    ErrorClass::DatabaseError,
                    "ThreadStartFailed",
                    format!("LOAD CSV: could not start its reader thread: {e}"),
                )
            })?;
        Ok(Some(OpenFile {
            chunks,
            records: Vec::new().into_iter(),
            name: Value::String(Arc::from(resolved.name.as_str())),
        }))
    }
}

impl OpenFile {
    /// The next record's value and line, `None` after the last.
    fn next(&mut self) -> Result<Option<(Value, i64)>> {
        loop {
            if let Some(record) = self.records.next() {
                return Ok(Some(record));
            }
            match self.chunks.recv() {
                Ok(Chunk::Records(records)) => self.records = records.into_iter(),
                Ok(Chunk::End) => return Ok(None),
                Ok(Chunk::Failed(error)) => return Err(error),
                Err(_) => {
                    return Err(QueryError::runtime(
                        ErrorClass::DatabaseError,
                        "ReaderStopped",
                        "LOAD CSV: the file's reader thread stopped before the end of the file",
                    ));
                }
            }
        }
    }
}

impl FileReader {
    fn next_record(&mut self) -> Result<bool> {
        self.reader
            .read_record(&mut self.record)
            .map_err(ingest_error)
    }

    /// Reads the rest of the file into `send`, a chunk at a time, until its end, an error, or
    /// the stage's side hanging up.
    fn send_all(mut self, send: &SyncSender<Chunk>) {
        loop {
            let mut records = Vec::with_capacity(BATCH_ROWS);
            let mut failed = None;
            while records.len() < BATCH_ROWS {
                match self.next_record() {
                    Ok(true) => records.push((self.value(), self.record.line as i64)),
                    Ok(false) => break,
                    Err(error) => {
                        failed = Some(error);
                        break;
                    }
                }
            }
            let last = failed.is_some() || records.len() < BATCH_ROWS;
            if !records.is_empty() && send.send(Chunk::Records(records)).is_err() {
                return;
            }
            if last {
                let _ = send.send(failed.map_or(Chunk::End, Chunk::Failed));
                return;
            }
        }
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
            None => match self.open(input, row, ctx)? {
                Some(open) => open,
                None => return Ok(()), // an empty file
            },
        };
        let room = BATCH_ROWS.saturating_sub(out.len()).max(1);
        for _ in 0..room {
            let Some((value, line)) = open.next()? else {
                return Ok(());
            };
            out.push_from(input, row);
            out.set_last(self.spec.slot, value);
            out.set_last(self.spec.line_slot, Value::Int(line));
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
