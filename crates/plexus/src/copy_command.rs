//! `COPY Table FROM 'file' (options)`: Kùzu's bulk load into a declared table.
//!
//! WHAT
//! ====
//! `COPY Person FROM 'persons.csv' (HEADER true, DELIM '|')` reads a CSV or Parquet file from
//! the import directory and adds one node per row to the declared node table `Person`;
//! `COPY KNOWS FROM 'knows.parquet'` adds one relationship per row to the declared rel table
//! `KNOWS`. It answers one row: `result` (Kùzu's sentence, "3 tuples have been copied to the
//! Person table."), `copied`, `skipped` and `warnings` (the skipped rows' errors, see ROW
//! ERRORS). The statement is parsed by `plexus_cypher::parser::copy`; this module carries it
//! out, outside the query pipeline, through the facade's [`BulkLoad`] — the one path every
//! loader takes, committed by the storage's bulk install (adjacency straight into CSR runs,
//! a checkpoint as its durable form).
//!
//! COLUMNS BY POSITION
//! ===================
//! As in Kùzu, a file's columns are the table's declared properties in declaration order;
//! names in a header (or in the Parquet schema) are not matched, only counted. A rel table's
//! file has two more columns first: the primary keys of the FROM and TO nodes, which are looked
//! up ([`BulkLoad::lookup`]) in the FROM and TO node tables — committed nodes or nodes an
//! earlier COPY of this load added. Both tables need a primary key. A rel table with several
//! `FROM … TO …` pairs is refused (Kùzu asks for `(from='A', to='B')`; not implemented yet).
//!
//! VALUES
//! ======
//! CSV fields are read with `plexus_ingest::CsvReader` (RFC 4180; an empty unquoted field is
//! null, `""` the empty string) and parsed to the declared type: INT64 (decimal, no spaces),
//! DOUBLE, STRING, BOOL (`true`/`false`, any case), DATE (`2024-01-31`, or what Cypher's
//! `date()` reads), TIMESTAMP (what `datetime()` reads; no zone means UTC), INTERVAL (ISO 8601,
//! what `duration()` reads, `P1DT2H`). A column of a table declared by `CREATE CONSTRAINT`
//! (type ANY) keeps the text. Parquet columns come as Arrow arrays
//! ([`batch_columns`](crate::bulk::batch_columns)) and must hold the declared type, widened
//! where nothing is lost: any integer into DOUBLE, a timestamp without a zone into TIMESTAMP
//! (read as UTC), and text is parsed as for CSV.
//!
//! ROW ERRORS
//! ==========
//! A row whose value is not of the declared type, whose field count is wrong, whose endpoint
//! does not exist, or which the load rejects (a duplicate or null primary key) stops the COPY
//! with an error naming the file, the line (CSV; for a record spanning lines, its first) or
//! the row (Parquet), the field and the value. With `IGNORE_ERRORS true` such rows are skipped
//! instead: counted in `skipped`, and the first [`WARNINGS_MAX`] errors listed in `warnings`
//! (Kùzu keeps them in a warnings table). Errors that are not about one row — a file that
//! cannot be read or is malformed (an unterminated quote), a header of the wrong width, an
//! unknown table — always stop it.
//!
//! INVARIANTS
//! ==========
//! - Atomic: the rows go into one [`BulkLoad`]; any error drops it, and nothing of the COPY
//!   becomes visible. Only a successful commit makes every copied row visible at once.
//! - COPY commits on its own, so inside an explicit transaction it is refused
//!   (`CopyInTransaction`) and the transaction stays open, like a table command.
//! - Memory is bounded by the batch: rows are read, parsed and handed to the load
//!   [`BATCH_ROWS`] at a time (the load itself still buffers its writes until the commit, see
//!   `bulk`); a CSV field is parsed from the reader's buffer, with no `String` per value
//!   except STRING values themselves.
//!
//! NOT YET
//! =======
//! Several files (lists, globs), `SKIP`, Kùzu's `QUOTE`/`ESCAPE` other than `"` (RFC 4180's
//! `""`), `PARALLEL`, and `(from=…, to=…)` for multi-pair rel tables. `BulkLoad` stages rows
//! one by one (see `crate::bulk`).

use crate::bulk::{BulkLoad, batch_columns};
use crate::schema::{EdgeTableSchema, Schema};
use plexus_cypher::ast::{CopyFrom, CopyOption, CopyOptionValue, Span};
use plexus_exec::{ErrorClass, QueryError, QueryResult, Value as CypherValue};
use plexus_ingest::{
    CsvOptions, CsvReader, CsvRecord, ExportDir, ImportDir, IngestError, IngestErrorKind,
};
use plexus_txn::TxnManager;
use plexus_types::{DataType, IsolationLevel, TemporalValue, Value, VertexId};
use std::io::Write;
use std::sync::Arc;

/// Rows read and handed to the load at a time.
pub(crate) const BATCH_ROWS: usize = 64 * 1024;
/// Skipped rows whose errors `warnings` lists (the count is exact beyond it).
pub(crate) const WARNINGS_MAX: usize = 100;

/// The columns of the answer (see WHAT).
const RESULT_COLUMNS: [&str; 4] = ["result", "copied", "skipped", "warnings"];

/// Carries out a `COPY` (see the module doc).
pub(crate) fn run_copy(
    manager: &Arc<TxnManager>,
    (import_dir, export_dir): (Option<&ImportDir>, Option<&ExportDir>),
    copy: CopyFrom,
    in_transaction: bool,
) -> Result<QueryResult, QueryError> {
    if in_transaction {
        return Err(QueryError::runtime(
            ErrorClass::SemanticError,
            "CopyInTransaction",
            "COPY commits on its own and cannot run inside an explicit transaction; COMMIT or \
             ROLLBACK first (the transaction is still open)",
        ));
    }
    let options = Options::of(&copy.options)?;
    let target = Target::of(&Schema::of(&manager.catalog()), &copy)?;
    let Some(dir) = import_dir else {
        return Err(QueryError::runtime(
            ErrorClass::ExternalResourceFailed,
            "NoImportDirectory",
            "COPY reads files from the import directory, and this database has none (set \
             import_directory; a database in memory has none by default)",
        ));
    };
    let (resolved, file) = dir.open(&copy.file.value).map_err(ingest_error)?;
    let parquet = match options.format.as_deref() {
        Some(format) => format.eq_ignore_ascii_case("parquet"),
        None => {
            let name = resolved.name.to_ascii_lowercase();
            name.ends_with(".parquet") || name.ends_with(".pq")
        }
    };
    if parquet && let Some(span) = options.csv_only {
        return Err(option_error(
            span,
            "HEADER, DELIM, QUOTE and ESCAPE apply to CSV files; this file is read as Parquet",
        ));
    }
    let report = match &options.report {
        Some((name, span)) => Some(Report::create(export_dir, name, *span)?),
        None => None,
    };
    let load = crate::BulkLoad::new(plexus_txn::begin(manager, IsolationLevel::Snapshot));
    let mut copier = Copier::new(load, target, resolved.name.clone(), options.ignore_errors);
    copier.report = report;
    if parquet {
        copier.parquet(file)?;
    } else {
        let csv = CsvOptions::with_field_terminator(&options.delimiter).map_err(ingest_error)?;
        let reader = CsvReader::new(file, &resolved.name, csv).map_err(ingest_error)?;
        copier.csv(reader, options.header)?;
    }
    copier.finish()
}

/// The statement's options, checked (the parser checked names and value kinds).
struct Options {
    header: bool,
    delimiter: String,
    ignore_errors: bool,
    /// `REPORT 'file'`: where skipped rows are listed (under the export directory).
    report: Option<(String, Span)>,
    format: Option<String>,
    /// Where a CSV-only option was given (refused for Parquet).
    csv_only: Option<Span>,
}

/// The `REPORT` file: every skipped row's error, one per line, flushed and synced before
/// the COPY commits.
struct Report {
    name: String,
    file: std::io::BufWriter<std::fs::File>,
}

impl Report {
    fn create(dir: Option<&ExportDir>, name: &str, span: Span) -> Result<Report, QueryError> {
        let Some(dir) = dir else {
            return Err(QueryError::runtime(
                ErrorClass::ExternalResourceFailed,
                "NoExportDirectory",
                format!(
                    "COPY writes its REPORT file to the export directory, and this database \
                     has none (set export_directory; a database in memory has none by \
                     default) (line {}, column {})",
                    span.line, span.column
                ),
            ));
        };
        let (resolved, file) = dir.create(name).map_err(ingest_error)?;
        Ok(Report {
            name: resolved.name,
            file: std::io::BufWriter::new(file),
        })
    }

    fn write(&mut self, line: &str) -> Result<(), QueryError> {
        writeln!(self.file, "{line}").map_err(|e| self.io_error(e))
    }

    fn finish(mut self) -> Result<String, QueryError> {
        self.file.flush().map_err(|e| self.io_error(e))?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|e| self.io_error(e))?;
        Ok(self.name)
    }

    fn io_error(&self, e: std::io::Error) -> QueryError {
        QueryError::runtime(
            ErrorClass::ExternalResourceFailed,
            "FileUnwritable",
            format!("COPY REPORT {}: {e}", self.name),
        )
    }
}

impl Options {
    fn of(options: &[CopyOption]) -> Result<Options, QueryError> {
        let mut out = Options {
            header: false,
            delimiter: ",".into(),
            ignore_errors: false,
            report: None,
            format: None,
            csv_only: None,
        };
        for option in options {
            if matches!(
                option.name.as_str(),
                "HEADER" | "DELIM" | "QUOTE" | "ESCAPE"
            ) {
                out.csv_only.get_or_insert(option.span);
            }
            match (option.name.as_str(), &option.value) {
                ("HEADER", CopyOptionValue::Bool(b)) => out.header = *b,
                ("IGNORE_ERRORS", CopyOptionValue::Bool(b)) => out.ignore_errors = *b,
                ("REPORT", CopyOptionValue::String(s)) => {
                    out.report = Some((s.clone(), option.span))
                }
                ("DELIM", CopyOptionValue::String(s)) => out.delimiter = s.clone(),
                ("FORMAT", CopyOptionValue::String(s)) => out.format = Some(s.clone()),
                ("QUOTE" | "ESCAPE", CopyOptionValue::String(s)) if s == "\"" => {}
                ("QUOTE" | "ESCAPE", _) => {
                    return Err(option_error(
                        option.span,
                        &format!(
                            "{} other than '\"' is not supported yet (fields are quoted with \
                             '\"', and '\"\"' inside quotes is one quote)",
                            option.name
                        ),
                    ));
                }
                (name, _) => {
                    unreachable!("the parser admits only known options of the right kind: {name}")
                }
            }
        }
        if let Some((_, span)) = &out.report
            && !out.ignore_errors
        {
            return Err(option_error(
                *span,
                "REPORT lists the rows IGNORE_ERRORS skips: give IGNORE_ERRORS true with it",
            ));
        }
        Ok(out)
    }
}

/// What the rows become.
enum Target {
    Nodes {
        table: String,
        properties: Vec<(String, DataType)>,
    },
    Rels {
        rel_type: String,
        /// (table, its primary key's type) of the FROM and TO nodes.
        from: (String, DataType),
        to: (String, DataType),
        properties: Vec<(String, DataType)>,
    },
}

impl Target {
    fn of(schema: &Schema, copy: &CopyFrom) -> Result<Target, QueryError> {
        let name = &copy.table.name;
        let properties = |props: &[crate::schema::PropertySchema]| {
            (props.iter())
                .map(|p| (p.name.clone(), p.data_type))
                .collect::<Vec<_>>()
        };
        let vertex = (schema.vertex_tables.iter()).find(|t| !t.name.is_empty() && t.name == *name);
        if let Some(table) = vertex {
            if !table.declared {
                return Err(table_error(
                    "TableNotDeclared",
                    copy.table.span,
                    format!(
                        "'{name}' is a schema-free label with no declared columns; COPY loads \
                         tables declared with CREATE NODE TABLE or CREATE REL TABLE"
                    ),
                ));
            }
            return Ok(Target::Nodes {
                table: name.clone(),
                properties: properties(&table.properties),
            });
        }
        let edges: Vec<&EdgeTableSchema> = (schema.edge_tables.iter())
            .filter(|t| t.edge_type == *name)
            .collect();
        let edge = match edges.as_slice() {
            [] => {
                return Err(table_error(
                    "TableNotFound",
                    copy.table.span,
                    format!("there is no node or rel table named '{name}'"),
                ));
            }
            [edge] if edge.declared => *edge,
            [edge] if !edge.declared => {
                return Err(table_error(
                    "TableNotDeclared",
                    copy.table.span,
                    format!(
                        "'{name}' is a schema-free relationship type; COPY loads tables \
                         declared with CREATE NODE TABLE or CREATE REL TABLE"
                    ),
                ));
            }
            _ => {
                return Err(table_error(
                    "CopyNotSupported",
                    copy.table.span,
                    format!(
                        "rel table '{name}' has several FROM … TO pairs; COPY into such a \
                         table is not supported yet"
                    ),
                ));
            }
        };
        let key = |end: &str| {
            let table = (schema.vertex_tables.iter()).find(|t| t.name == end);
            let key_type = table.and_then(|t| {
                let key = t.primary_key.as_ref()?;
                let prop = t.properties.iter().find(|p| p.name == *key)?;
                Some(prop.data_type)
            });
            key_type
                .map(|data_type| (end.to_string(), data_type))
                .ok_or_else(|| {
                    table_error(
                        "CopyNotSupported",
                        copy.table.span,
                        format!(
                            "COPY into rel table '{name}' finds its endpoints by primary key, \
                             and node table '{end}' has none"
                        ),
                    )
                })
        };
        Ok(Target::Rels {
            rel_type: name.clone(),
            from: key(&edge.from)?,
            to: key(&edge.to)?,
            properties: properties(&edge.properties),
        })
    }

    fn table(&self) -> &str {
        match self {
            Target::Nodes { table, .. } => table,
            Target::Rels { rel_type, .. } => rel_type,
        }
    }

    fn properties(&self) -> &[(String, DataType)] {
        match self {
            Target::Nodes { properties, .. } | Target::Rels { properties, .. } => properties,
        }
    }

    /// Columns a file must have.
    fn width(&self) -> usize {
        match self {
            Target::Nodes { properties, .. } => properties.len(),
            Target::Rels { properties, .. } => properties.len() + 2,
        }
    }

    /// The name and type of file column `i`, for parsing and messages.
    fn column(&self, i: usize) -> (String, DataType) {
        match self {
            Target::Nodes { properties, .. } => properties[i].clone(),
            Target::Rels { from, to, .. } if i < 2 => {
                let (end, (table, key_type)) = if i == 0 { ("FROM", from) } else { ("TO", to) };
                (format!("{end} {table} key"), *key_type)
            }
            Target::Rels { properties, .. } => properties[i - 2].clone(),
        }
    }

    /// The columns as the header check names them: `id, name, …`.
    fn column_list(&self) -> String {
        (0..self.width())
            .map(|i| self.column(i).0)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One COPY in progress: the load, the batch being filled, and what was skipped.
struct Copier {
    load: BulkLoad,
    target: Target,
    /// File columns' (name, type), by position.
    columns: Vec<(String, DataType)>,
    file: String,
    /// "line" for CSV, "row" for Parquet: what `positions` count.
    unit: &'static str,
    ignore_errors: bool,
    /// The batch: one value vector per property, the line (or row) of each batch row, and for
    /// relationships the endpoints.
    values: Vec<Vec<Value>>,
    positions: Vec<u64>,
    src: Vec<VertexId>,
    dst: Vec<VertexId>,
    /// Reused for one row's values before they join the batch.
    row: Vec<Value>,
    copied: u64,
    skipped: u64,
    warnings: Vec<String>,
    /// Where every skipped row is listed, when asked.
    report: Option<Report>,
}

/// A problem with one row (see ROW ERRORS): the error to raise, or the warning to keep.
struct RowError {
    class: ErrorClass,
    code: &'static str,
    message: String,
}

impl Copier {
    fn new(load: BulkLoad, target: Target, file: String, ignore_errors: bool) -> Copier {
        let columns = (0..target.width()).map(|i| target.column(i)).collect();
        let properties = target.properties().len();
        Copier {
            load,
            columns,
            target,
            file,
            unit: "line",
            ignore_errors,
            values: (0..properties).map(|_| Vec::new()).collect(),
            positions: Vec::new(),
            src: Vec::new(),
            dst: Vec::new(),
            row: Vec::new(),
            copied: 0,
            skipped: 0,
            warnings: Vec::new(),
            report: None,
        }
    }

    /// Reads the CSV file (see VALUES), a batch at a time: a thread of its own reads and
    /// parses the records ([`parse_csv`]) while this one resolves endpoints and stages rows.
    fn csv(&mut self, mut reader: CsvReader, header: bool) -> Result<(), QueryError> {
        let mut record = CsvRecord::default();
        if header && reader.read_record(&mut record).map_err(ingest_error)? {
            self.check_width(
                record.len(),
                &format!("{}:{}: the header", self.file, record.line),
            )?;
        }
        let columns = self.columns.clone();
        let shape = (self.target.table().to_owned(), self.target.column_list());
        self.load_parsed(move |batches| parse_csv(reader, &columns, &shape, batches))
    }

    /// Reads the Parquet file (see VALUES), a batch at a time: a thread of its own decodes
    /// the row groups and types the values ([`parse_parquet`]) while this one resolves
    /// endpoints and stages rows, as for CSV.
    fn parquet(&mut self, file: std::fs::File) -> Result<(), QueryError> {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        self.unit = "row";
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| parquet_unreadable(&e, &self.file))?;
        let fields: Vec<String> = (builder.schema().fields().iter())
            .map(|f| f.name().clone())
            .collect();
        self.check_width(
            fields.len(),
            &format!("{}: the columns ({})", self.file, fields.join(", ")),
        )?;
        let reader = builder
            .with_batch_size(PARSED_BATCH_ROWS)
            .build()
            .map_err(|e| parquet_unreadable(&e, &self.file))?;
        let (columns, file) = (self.columns.clone(), self.file.clone());
        self.load_parsed(move |batches| parse_parquet(reader, &columns, &file, batches))
    }

    /// Stages the rows `parse` sends from a thread of its own, in order, then flushes.
    fn load_parsed(&mut self, parse: impl FnOnce(&ParsedSender) + Send) -> Result<(), QueryError> {
        let width = self.columns.len();
        std::thread::scope(|scope| {
            let (batches, parsed) = std::sync::mpsc::sync_channel(PARSED_BATCHES_AHEAD);
            scope.spawn(move || parse(&batches));
            // Dropping `parsed` on an early return stops the reader at its next batch.
            let mut ends = Vec::new();
            for batch in parsed {
                let ParsedBatch { values, rows } = batch?;
                // A relationship batch's endpoints first: the found-key lookups miss the
                // cache, so their slots are read ahead in loops doing nothing else (the misses
                // overlap), then looked up in one pass.
                ends.clear();
                if let Target::Rels { from, to, .. } = &self.target {
                    for (end, (table, _)) in [from, to].into_iter().enumerate() {
                        let keys = values.chunks_exact(width).map(|row| &row[end]);
                        self.load.prefetch_keys(table, keys);
                    }
                    for row in values.chunks_exact(width) {
                        ends.push(endpoint_ids(&mut self.load, from, to, row)?);
                    }
                }
                let (mut values, mut ends) = (values.into_iter(), ends.iter());
                for (line, error) in rows {
                    match error {
                        Some(error) => self.row_failed(line, error)?,
                        None => {
                            self.row.clear();
                            self.row.extend(values.by_ref().take(width));
                            self.add_row(line, ends.next().copied())?;
                        }
                    }
                }
            }
            Ok::<(), QueryError>(())
        })?;
        self.flush()
    }

    /// Refuses a file whose column count is not the table's (`what` names the header).
    fn check_width(&self, found: usize, what: &str) -> Result<(), QueryError> {
        if found == self.columns.len() {
            return Ok(());
        }
        Err(QueryError::runtime(
            ErrorClass::ExternalResourceFailed,
            "ColumnCountMismatch",
            format!(
                "COPY {}: {what} has {found} columns where the table has {} ({}); columns map \
                 to the table's properties by position",
                self.target.table(),
                self.columns.len(),
                self.target.column_list()
            ),
        ))
    }

    /// Moves the parsed `row` into the batch (a relationship's endpoints first: `ids` when
    /// they were looked up already, see [`endpoint_ids`]).
    fn add_row(&mut self, at: u64, ids: Option<EndpointIds>) -> Result<(), QueryError> {
        let mut row = std::mem::take(&mut self.row);
        let mut properties_start = 0;
        if let Target::Rels { from, to, .. } = &self.target {
            properties_start = 2;
            let ids = match ids {
                Some(ids) => ids,
                None => endpoint_ids(&mut self.load, from, to, &row)?,
            };
            match endpoints(ids, from, to, &row) {
                Ok((src, dst)) => {
                    self.src.push(src);
                    self.dst.push(dst);
                }
                Err(error) => {
                    row.clear();
                    self.row = row;
                    return self.row_failed(at, error);
                }
            }
        }
        for (column, value) in self.values.iter_mut().zip(row.drain(properties_start..)) {
            column.push(value);
        }
        row.clear();
        self.row = row;
        self.positions.push(at);
        if self.positions.len() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the batch to the load; rows it rejects are row errors.
    fn flush(&mut self) -> Result<(), QueryError> {
        let rows = self.positions.len();
        if rows == 0 {
            return Ok(());
        }
        let columns: Vec<(String, Vec<Value>)> = (self.target.properties().iter())
            .zip(self.values.iter_mut())
            .map(|((name, _), values)| (name.clone(), std::mem::take(values)))
            .collect();
        let added = match &self.target {
            Target::Nodes { table, .. } => self.load.add_nodes(&[table], None, &columns, rows)?,
            Target::Rels { rel_type, .. } => self
                .load
                .add_relationships(rel_type, &self.src, &self.dst, &columns)?,
        };
        self.copied += (rows - added.rejected.len()) as u64;
        let positions = std::mem::take(&mut self.positions);
        self.src.clear();
        self.dst.clear();
        for (row, error) in added.rejected {
            let error = QueryError::from(error);
            let error = RowError {
                class: error.class,
                code: error.code,
                message: error.message,
            };
            self.row_failed(positions[row], error)?;
        }
        Ok(())
    }

    /// A row that cannot be copied: the COPY's error, or a warning under IGNORE_ERRORS.
    fn row_failed(&mut self, at: u64, error: RowError) -> Result<(), QueryError> {
        let message = match self.unit {
            "line" => format!("{}:{at}: {}", self.file, error.message),
            unit => format!("{}: {unit} {at}: {}", self.file, error.message),
        };
        if !self.ignore_errors {
            let message = format!("COPY {}: {message}", self.target.table());
            return Err(QueryError::runtime(error.class, error.code, message));
        }
        self.skipped += 1;
        if let Some(report) = &mut self.report {
            report.write(&message)?;
        }
        if self.warnings.len() < WARNINGS_MAX {
            self.warnings.push(message);
        }
        Ok(())
    }

    fn finish(self) -> Result<QueryResult, QueryError> {
        let Copier {
            load,
            target,
            copied,
            skipped,
            warnings,
            report,
            ..
        } = self;
        let report = report.map(Report::finish).transpose()?;
        load.commit()?;
        let mut sentence = format!(
            "{copied} tuples have been copied to the {} table.",
            target.table()
        );
        if skipped > 0 {
            sentence.push_str(&format!(" {skipped} rows were skipped (IGNORE_ERRORS)."));
        }
        if let Some(name) = report {
            sentence.push_str(&format!(" Skipped rows are listed in {name}."));
        }
        let warnings = warnings.iter().map(|w| CypherValue::string(w)).collect();
        Ok(QueryResult {
            columns: RESULT_COLUMNS.map(String::from).to_vec(),
            rows: vec![vec![
                CypherValue::string(&sentence),
                CypherValue::Int(copied as i64),
                CypherValue::Int(skipped as i64),
                CypherValue::list(warnings),
            ]],
            ..QueryResult::default()
        })
    }
}

/// Rows parsed ahead of the loading thread, in file order.
struct ParsedBatch {
    /// The values of the parsed rows, one row's columns after another.
    values: Vec<Value>,
    /// Per row: its line (a CSV record's first; a Parquet row's number), and its error when
    /// it could not be parsed.
    rows: Vec<(u64, Option<RowError>)>,
}

/// Where a reader thread sends its batches (or the error that ended it).
type ParsedSender = std::sync::mpsc::SyncSender<Result<ParsedBatch, QueryError>>;

fn parquet_unreadable(e: &dyn std::fmt::Display, file: &str) -> QueryError {
    QueryError::runtime(
        ErrorClass::ExternalResourceFailed,
        "FileUnreadable",
        format!("COPY: {file}: not a readable Parquet file: {e}"),
    )
}

/// The reader thread of a Parquet `COPY`: decodes each record batch, maps its columns to
/// values (`batch_columns`) and coerces them to the table's column types (see VALUES), and
/// sends the rows until the file ends, decoding fails (sent as the error) or the loader
/// hangs up.
fn parse_parquet(
    reader: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    columns: &[(String, DataType)],
    file: &str,
    batches: &ParsedSender,
) {
    let mut row_number = 0u64;
    for batch in reader {
        let parsed = (batch.map_err(|e| parquet_unreadable(&e, file))).and_then(|batch| {
            let mapped = batch_columns(&batch).map_err(|e| {
                QueryError::runtime(
                    ErrorClass::ExternalResourceFailed,
                    "InvalidValue",
                    format!("COPY: {file}: {}", e.message),
                )
            })?;
            Ok(parquet_rows(
                mapped,
                batch.num_rows(),
                columns,
                &mut row_number,
            ))
        });
        let failed = parsed.is_err();
        if batches.send(parsed).is_err() || failed {
            return;
        }
    }
}

/// `rows` rows of a Parquet record batch's `mapped` columns as typed rows, numbered from
/// `row_number + 1` on.
fn parquet_rows(
    mapped: Vec<(String, Vec<Value>)>,
    rows: usize,
    columns: &[(String, DataType)],
    row_number: &mut u64,
) -> ParsedBatch {
    let mut mapped: Vec<std::vec::IntoIter<Value>> =
        mapped.into_iter().map(|(_, v)| v.into_iter()).collect();
    let mut parsed = ParsedBatch {
        values: Vec::with_capacity(rows * columns.len()),
        rows: Vec::with_capacity(rows),
    };
    for _ in 0..rows {
        *row_number += 1;
        let start = parsed.values.len();
        let mut failed = None;
        for (i, column) in mapped.iter_mut().enumerate() {
            let value = column.next().unwrap_or(Value::Null);
            if failed.is_some() {
                continue; // keep the other columns' iterators in step
            }
            let (name, data_type) = &columns[i];
            match coerce(value, *data_type) {
                Ok(value) => parsed.values.push(value),
                Err(value) => {
                    let text =
                        plexus_value::format::plain_text(&plexus_value::Value::from_storage(value));
                    failed = Some(value_error(i, name, *data_type, &text));
                }
            }
        }
        if failed.is_some() {
            parsed.values.truncate(start);
        }
        parsed.rows.push((*row_number, failed));
    }
    parsed
}

/// Rows per [`ParsedBatch`].
const PARSED_BATCH_ROWS: usize = 4096;
/// Batches the reader may parse before the loader takes them.
const PARSED_BATCHES_AHEAD: usize = 4;

/// The reader thread of a CSV `COPY`: parses every record to the columns' types (see
/// VALUES), `shape` being the table's name and column list for messages, and sends batches
/// until the file ends, reading fails (sent as the error) or the loader hangs up.
fn parse_csv(
    mut reader: CsvReader,
    columns: &[(String, DataType)],
    (table, column_list): &(String, String),
    batches: &ParsedSender,
) {
    let mut record = CsvRecord::default();
    let new_batch = || ParsedBatch {
        values: Vec::with_capacity(PARSED_BATCH_ROWS * columns.len()),
        rows: Vec::with_capacity(PARSED_BATCH_ROWS),
    };
    let mut batch = new_batch();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let _ = batches.send(Err(ingest_error(e)));
                return;
            }
        }
        let error = if record.len() != columns.len() {
            Some(RowError {
                class: ErrorClass::ExternalResourceFailed,
                code: "MalformedCsv",
                message: format!(
                    "{} fields where table '{table}' has {} columns ({column_list})",
                    record.len(),
                    columns.len(),
                ),
            })
        } else {
            let start = batch.values.len();
            let failed = columns
                .iter()
                .enumerate()
                .find_map(|(i, (name, data_type))| {
                    let value = match record.get(i) {
                        None => Value::Null,
                        Some(text) => match parse_text(text, *data_type) {
                            Some(value) => value,
                            None => return Some(value_error(i, name, *data_type, text)),
                        },
                    };
                    batch.values.push(value);
                    None
                });
            if failed.is_some() {
                batch.values.truncate(start);
            }
            failed
        };
        batch.rows.push((record.line, error));
        if batch.rows.len() >= PARSED_BATCH_ROWS
            && batches
                .send(Ok(std::mem::replace(&mut batch, new_batch())))
                .is_err()
        {
            return;
        }
    }
    if !batch.rows.is_empty() {
        let _ = batches.send(Ok(batch));
    }
}

/// The FROM and TO nodes a relationship row's keys name, where they exist.
type EndpointIds = [Option<VertexId>; 2];

/// Looks up the FROM and TO nodes of a relationship row (its first two values).
fn endpoint_ids(
    load: &mut BulkLoad,
    (from, _): &(String, DataType),
    (to, _): &(String, DataType),
    row: &[Value],
) -> Result<EndpointIds, QueryError> {
    let mut ids = [None, None];
    for (end, table) in [from, to].into_iter().enumerate() {
        ids[end] = match &row[end] {
            Value::Null => None,
            key => load.lookup(table, key)?,
        };
    }
    Ok(ids)
}

/// The FROM and TO nodes of a relationship row from its looked-up `ids`, or the row's error.
fn endpoints(
    ids: EndpointIds,
    from: &(String, DataType),
    to: &(String, DataType),
    row: &[Value],
) -> Result<(VertexId, VertexId), RowError> {
    if let [Some(src), Some(dst)] = ids {
        return Ok((src, dst));
    }
    let (end, side, table) = match ids[0] {
        None => (0, "FROM", &from.0),
        Some(_) => (1, "TO", &to.0),
    };
    let shown = match &row[end] {
        Value::String(s) => format!("'{s}'"),
        other => {
            plexus_value::format::plain_text(&plexus_value::Value::from_storage(other.clone()))
        }
    };
    Err(RowError {
        class: ErrorClass::EntityNotFound,
        code: "CopyEndpointNotFound",
        message: format!("the {side} node {table} with primary key {shown} does not exist"),
    })
}

/// The error for a field that is not of its column's type.
fn value_error(i: usize, name: &str, data_type: DataType, text: &str) -> RowError {
    RowError {
        class: ErrorClass::ExternalResourceFailed,
        code: "InvalidValue",
        message: format!(
            "field {} ({name}): '{text}' is not a {} value",
            i + 1,
            data_type.name()
        ),
    }
}

/// A CSV field as a value of `data_type` (see VALUES); `None` if it is not one.
pub(crate) fn parse_text(text: &str, data_type: DataType) -> Option<Value> {
    Some(match data_type {
        DataType::Int64 => Value::Int(text.parse().ok()?),
        DataType::Float64 => Value::Float(text.parse().ok()?),
        DataType::String | DataType::Any => Value::from(text),
        DataType::Bool if text.eq_ignore_ascii_case("true") => Value::Bool(true),
        DataType::Bool if text.eq_ignore_ascii_case("false") => Value::Bool(false),
        DataType::Bool => return None,
        DataType::Date => match iso_date(text) {
            Some(days) => Value::Temporal(TemporalValue::Date { days }),
            None => temporal("date", text)?,
        },
        DataType::Timestamp => temporal("datetime", text)?,
        DataType::Interval => temporal("duration", text)?,
        DataType::List | DataType::Map => return None,
    })
}

/// `YYYY-MM-DD` as days since the epoch (the common case, without the temporal parser).
fn iso_date(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = &bytes[range];
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| digits.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (y, m, d) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let days_in_month = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days_in_month)
        .contains(&d)
        .then(|| plexus_value::temporal::days_from_civil(y, m, d))
}

/// `function(text)` of Cypher's temporal functions, as a stored value.
fn temporal(function: &str, text: &str) -> Option<Value> {
    let clock = plexus_value::temporal::StatementClock::now();
    let value = plexus_value::temporal_fns::call(function, &[CypherValue::string(text)], clock)?;
    plexus_value::temporal_fns::to_storage(&value.ok()?).map(Value::Temporal)
}

/// A Parquet value as `data_type` (see VALUES); the value back if it cannot be.
fn coerce(value: Value, data_type: DataType) -> Result<Value, Value> {
    if data_type.accepts(&value) {
        return Ok(value);
    }
    match (data_type, value) {
        (DataType::Float64, Value::Int(i)) => Ok(Value::Float(i as f64)),
        (DataType::Timestamp, Value::Temporal(TemporalValue::LocalDateTime { days, nanos })) => {
            Ok(Value::Temporal(TemporalValue::DateTime {
                days,
                nanos,
                offset_seconds: 0,
                zone: None,
            }))
        }
        (_, Value::String(text)) => parse_text(&text, data_type).ok_or(Value::String(text)),
        (_, value) => Err(value),
    }
}

/// An ingest failure (file location, reading, CSV syntax) as LOAD CSV reports it.
fn ingest_error(error: IngestError) -> QueryError {
    let (class, code) = match error.kind {
        IngestErrorKind::Location => (ErrorClass::ExternalResourceFailed, "FileLocationRefused"),
        IngestErrorKind::Io => (ErrorClass::ExternalResourceFailed, "FileUnreadable"),
        IngestErrorKind::Format => (ErrorClass::ExternalResourceFailed, "MalformedCsv"),
        IngestErrorKind::Options => (ErrorClass::ArgumentError, "InvalidCopyOption"),
    };
    QueryError::runtime(class, code, format!("COPY: {error}"))
}

fn option_error(span: Span, message: &str) -> QueryError {
    QueryError::compile(
        ErrorClass::ArgumentError,
        "InvalidCopyOption",
        span,
        message,
    )
}

fn table_error(code: &'static str, span: Span, message: String) -> QueryError {
    QueryError::compile(ErrorClass::SemanticError, code, span, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_parse_to_the_declared_types() {
        assert_eq!(parse_text("-42", DataType::Int64), Some(Value::Int(-42)));
        assert_eq!(parse_text(" 42", DataType::Int64), None);
        assert_eq!(
            parse_text("4.5", DataType::Float64),
            Some(Value::Float(4.5))
        );
        assert_eq!(parse_text("TRUE", DataType::Bool), Some(Value::Bool(true)));
        assert_eq!(parse_text("yes", DataType::Bool), None);
        assert_eq!(
            parse_text("1970-01-02", DataType::Date),
            Some(Value::Temporal(TemporalValue::Date { days: 1 }))
        );
        assert_eq!(parse_text("2023-02-29", DataType::Date), None);
        assert_eq!(
            parse_text("2024-02-29", DataType::Date),
            parse_text("2024-02-29", DataType::Timestamp).map(|_| Value::Temporal(
                TemporalValue::Date {
                    days: plexus_value::temporal::days_from_civil(2024, 2, 29)
                }
            ))
        );
        assert!(matches!(
            parse_text("2024-01-01T10:00:00Z", DataType::Timestamp),
            Some(Value::Temporal(TemporalValue::DateTime { .. }))
        ));
        assert!(matches!(
            parse_text("P1DT2H", DataType::Interval),
            Some(Value::Temporal(TemporalValue::Duration { days: 1, .. }))
        ));
        assert_eq!(parse_text("P1X", DataType::Interval), None);
    }
}
