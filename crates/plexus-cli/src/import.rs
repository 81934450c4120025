//! `plexus import`: neo4j-admin style files, or the LDBC SNB layout, into a database in one
//! bulk load (docs/loading.md, "plexus import").
//!
//! DESIGN
//! ======
//! `plexus_ingest::import` reads the files — headers, typed values, bad rows it can see in the
//! file alone — on several threads, and hands batches over in input order. This module is
//! the single thread that drives `plexus::BulkLoad` with them:
//!
//! ```text
//!   Plan (files exist, headers parse)      before the database is opened
//!   open the database                       a LOCK held elsewhere: "in use", exit 1
//!   declare tables (ldbc-snb)
//!   stage nodes:  batch → drop duplicate ids → add_nodes → id map (group, id) → VertexId
//!   stage relationships: batch → resolve endpoints in the id map → add_relationships per type
//!   commit                                  everything becomes visible at once
//! ```
//!
//! The id maps hold the identifiers of this import only (one `plexus::bulk::IdMap` per id
//! group: integer ids in an array while they are dense):
//! relationships can join nodes of the same run, not nodes already in the database.
//!
//! BAD ROWS
//! ========
//! A bad row is a malformed row (wrong number of fields, a truncated last line), a value of
//! the wrong type, a missing or unknown endpoint, a duplicate id in its group, or a row the
//! bulk load rejects (a duplicate primary key of a declared table). By default the first one
//! ends the import: its file, line and column are printed, the load is dropped and the
//! database is as before. With `--skip-bad-rows N` up to N are skipped, written to the report
//! file (default `<db>.import-report.txt`, beside the database directory) and counted in the
//! summary; one more fails the import like the default. Malformed CSV quoting, unreadable or
//! truncated (gzip) files always end the import.
//!
//! A database directory that did not exist before and was created by a failing import is
//! removed again, so a failed import leaves nothing behind. (Tables declared by `ldbc-snb` in
//! an existing database stay declared if the load fails: declaring is not part of the load.)

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::progress;
pub use crate::progress::{ImportSummary, ProgressMode};
use indicatif::ProgressBar;
use plexus::bulk::IdMap;
use plexus::settings::Settings;
use plexus::{BulkLoad, DataType, Database, Error, Value, VertexId, VertexTableSpec};
use plexus_ingest::import::{
    BadRow, Batch, IdKey, IdType, ImportOptions, Input, Plan, Source, Stage, ldbc,
};
use plexus_ingest::{ColumnKind, CsvOptions, FieldType, HeaderFor};

/// The arguments of `plexus import`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub layout: Option<Layout>,
    /// The database directory (created if absent; may already hold data).
    #[arg(required = true)]
    pub db: Option<PathBuf>,
    /// Node files: labels, then the files sharing one header (the first line of the first
    /// file). Repeatable.
    #[arg(long, value_name = "[LABEL[:LABEL…]=]FILE[,FILE…]")]
    pub nodes: Vec<String>,
    /// Relationship files: the type (for rows without a :TYPE value), then the files.
    /// Repeatable.
    #[arg(long, value_name = "[TYPE=]FILE[,FILE…]")]
    pub relationships: Vec<String>,
    /// Field delimiter: one character, or TAB.
    #[arg(long, value_name = "C", default_value = ",")]
    pub delimiter: String,
    /// Delimiter between the elements of array values (and of :LABEL values).
    #[arg(long, value_name = "C", default_value = ";")]
    pub array_delimiter: String,
    /// How node identifiers are read and stored: string or integer.
    #[arg(long, value_name = "TYPE", default_value = "string")]
    pub id_type: String,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Options every import form takes.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// Skip up to N bad rows (listed in the report file); one more fails the import.
    #[arg(long, value_name = "N")]
    pub skip_bad_rows: Option<u64>,
    /// Where skipped rows are listed (default: <db>.import-report.txt beside the database).
    #[arg(long, value_name = "FILE")]
    pub bad_rows_report: Option<PathBuf>,
    /// Threads parsing files (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// Other file layouts.
#[derive(clap::Subcommand, Debug)]
pub enum Layout {
    /// The LDBC SNB Interactive CsvComposite layout (static/ and dynamic/ files, a
    /// headers.txt mapping files to neo4j-admin headers).
    LdbcSnb {
        /// The data directory (with static/ and dynamic/).
        dir: PathBuf,
        /// The database directory.
        db: PathBuf,
        /// The headers file (default: DIR/headers.txt, else DIR/../../headers.txt).
        #[arg(long, value_name = "FILE")]
        headers: Option<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// An Apache GraphAr graph (its .graph.yml; Parquet or CSV payloads), docs/graphar.md.
    Graphar {
        /// The graph's metadata file (NAME.graph.yml).
        graph: PathBuf,
        /// The database directory.
        db: PathBuf,
    },
}

/// Runs `plexus import` as parsed.
pub fn run(args: ImportArgs, progress: ProgressMode) -> Result<ImportSummary, String> {
    let started = Instant::now();
    match args.layout {
        Some(Layout::Graphar { graph, db }) => crate::graphar::import(&graph, &db, progress),
        Some(Layout::LdbcSnb {
            dir,
            db,
            headers,
            common,
        }) => {
            let headers = headers
                .or_else(|| ldbc::default_headers(&dir))
                .ok_or_else(|| {
                    format!(
                        "no headers.txt in {} or two levels up: give it with --headers FILE",
                        dir.display()
                    )
                })?;
            let options = ImportOptions {
                temporal: Some(parse_temporal),
                ..ImportOptions::default()
            };
            let layout = ldbc::layout(&dir, &headers, options).map_err(|e| e.to_string())?;
            import(
                &db,
                &layout.plan,
                &layout.tables,
                &common,
                progress,
                started,
            )
        }
        None => {
            let db = args.db.ok_or("no database directory given")?;
            let options = ImportOptions {
                csv: CsvOptions::with_field_terminator(match args.delimiter.as_str() {
                    "TAB" | "\\t" => "\t",
                    other => other,
                })
                .map_err(|e| format!("--delimiter: {e}"))?,
                array_delimiter: one_char(&args.array_delimiter)
                    .ok_or("--array-delimiter: give one character")?,
                id_type: match args.id_type.to_ascii_lowercase().as_str() {
                    "string" => IdType::String,
                    "integer" | "int" | "long" => IdType::Integer,
                    other => return Err(format!("--id-type: {other:?} is not string or integer")),
                },
                temporal: Some(parse_temporal),
                ..ImportOptions::default()
            };
            if args.nodes.is_empty() && args.relationships.is_empty() {
                return Err("nothing to import: give --nodes and/or --relationships".into());
            }
            let inputs = |args: &[String], target| {
                args.iter()
                    .map(|a| Input::parse(a, target).map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()
            };
            let plan = Plan::new(
                inputs(&args.nodes, HeaderFor::Nodes)?,
                inputs(&args.relationships, HeaderFor::Relationships)?,
                options,
            )
            .map_err(|e| e.to_string())?;
            import(&db, &plan, &[], &args.common, progress, started)
        }
    }
}

fn one_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

/// Temporal fields read as Cypher's constructors read text (`date('2024-05-01')`).
pub fn parse_temporal(ty: FieldType, text: &str) -> Result<Value, String> {
    use plexus_value::temporal::StatementClock;
    use plexus_value::temporal_fns::{call, to_storage};
    let name = plexus_ingest::import::type_name(ty);
    let value = call(
        name,
        &[plexus_value::Value::from(text)],
        StatementClock::now(),
    )
    .ok_or_else(|| format!("{name} is not a temporal type"))?
    .map_err(|e| format!("cannot read {text:?} as a {name}: {}", e.message))?;
    to_storage(&value)
        .map(Value::Temporal)
        .ok_or_else(|| format!("cannot read {text:?} as a {name}"))
}

/// Opens `db`, loads `plan` (after declaring `tables`) and commits.
pub fn import(
    db: &Path,
    plan: &Plan,
    tables: &[ldbc::TableDecl],
    common: &CommonArgs,
    progress: ProgressMode,
    started: Instant,
) -> Result<ImportSummary, String> {
    let existed = db.exists();
    let result = (|| {
        let settings = Settings::load(db).map_err(|e| e.to_string())?;
        let database = Database::open_settings(db, settings).map_err(|e| match e {
            Error::AlreadyOpen { .. } => format!(
                "the database {} is in use by another process (it holds {}): stop that \
                 process (plexus shell, plexus serve, …) and import again",
                db.display(),
                db.join("LOCK").display()
            ),
            e => format!("opening {}: {e}", db.display()),
        })?;
        for table in tables {
            let mut spec = VertexTableSpec::new(&table.label)
                .property(&table.primary_key, DataType::Int64)
                .primary_key(&table.primary_key);
            for label in &table.extra_labels {
                spec = spec.extra_label(label);
            }
            database
                .create_vertex_table(&spec)
                .map_err(|e| format!("declaring the vertex table {}: {e}", table.label))?;
        }
        let report = common.bad_rows_report.clone().unwrap_or_else(|| {
            let name = db
                .file_name()
                .map_or("db".into(), |n| n.to_string_lossy().into_owned());
            db.with_file_name(format!("{name}.import-report.txt"))
        });
        let mut loader = Loader {
            load: database.bulk_load(),
            plan,
            ids: HashMap::new(),
            bad: BadRows {
                limit: common.skip_bad_rows,
                count: 0,
                path: report,
                out: None,
            },
            progress: Progress::new(progress),
        };
        let threads = common.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
        });
        for stage in [Stage::Nodes, Stage::Relationships] {
            loader.stage(stage, threads)?;
        }
        let Loader { load, bad, .. } = loader;
        let bad_rows = bad.count;
        let report = bad.finish()?;
        let summary = load.commit().map_err(|e| format!("commit: {e}"))?;
        database
            .close()
            .map_err(|e| format!("closing the database: {e}"))?;
        Ok(ImportSummary {
            nodes: summary.nodes,
            relationships: summary.relationships,
            bad_rows,
            report,
            seconds: started.elapsed().as_secs_f64(),
        })
    })();
    if result.is_err() && !existed {
        // Created by this import, which failed: leave nothing behind.
        let _ = std::fs::remove_dir_all(db);
    }
    result
}

/// Skipped rows and where they are listed.
struct BadRows {
    /// `None`: the first bad row fails the import.
    limit: Option<u64>,
    count: u64,
    path: PathBuf,
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl BadRows {
    /// Records `row`, or fails the import when no more may be skipped.
    fn add(&mut self, row: &BadRow) -> Result<(), String> {
        let Some(limit) = self.limit else {
            return Err(format!(
                "{row}\nnothing was imported (--skip-bad-rows N skips up to N bad rows)"
            ));
        };
        self.count += 1;
        let out = match &mut self.out {
            Some(out) => out,
            None => {
                let file = std::fs::File::create(&self.path).map_err(|e| {
                    format!("{}: cannot write the report: {e}", self.path.display())
                })?;
                self.out.insert(std::io::BufWriter::new(file))
            }
        };
        writeln!(out, "{row}")
            .map_err(|e| format!("{}: cannot write the report: {e}", self.path.display()))?;
        if self.count > limit {
            let _ = out.flush();
            return Err(format!(
                "{row}\nmore than {limit} bad rows (--skip-bad-rows {limit}; they are listed in \
                 {}): nothing was imported",
                self.path.display()
            ));
        }
        Ok(())
    }

    fn finish(self) -> Result<Option<PathBuf>, String> {
        match self.out {
            Some(mut out) => {
                out.flush().map_err(|e| {
                    format!("{}: cannot write the report: {e}", self.path.display())
                })?;
                Ok(Some(self.path))
            }
            None => Ok(None),
        }
    }
}

struct Loader<'a> {
    load: BulkLoad,
    plan: &'a Plan,
    /// Per id group: identifier → node created by this import.
    ids: HashMap<Option<String>, IdMap>,
    bad: BadRows,
    progress: Progress,
}

impl Loader<'_> {
    fn stage(&mut self, stage: Stage, threads: usize) -> Result<(), String> {
        let plan = self.plan;
        let sources = plan.sources(stage);
        self.progress.start_stage(stage, plan.total_bytes(stage));
        let mut failure = None;
        plan.read(stage, threads, |batch| {
            let step = batch
                .map_err(|e| e.to_string())
                .and_then(|batch| self.batch(&sources[batch.source], batch));
            match step {
                Ok(()) => true,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        });
        self.progress.finish_stage();
        failure.map_or(Ok(()), Err)
    }

    fn batch(&mut self, source: &Source, batch: Batch) -> Result<(), String> {
        let before = self.load.counts();
        let mut bad = match source.stage {
            Stage::Nodes => self.nodes(source, &batch)?,
            Stage::Relationships => self.relationships(source, &batch)?,
        };
        bad.extend(batch.bad.iter().cloned());
        bad.sort_by_key(|b| b.line);
        for row in &bad {
            self.bad.add(row)?;
        }
        let after = self.load.counts();
        let added = match source.stage {
            Stage::Nodes => after.0 - before.0,
            Stage::Relationships => after.1 - before.1,
        };
        self.progress.batch(source, &batch, added, bad.len() as u64);
        Ok(())
    }

    fn nodes(&mut self, source: &Source, batch: &Batch) -> Result<Vec<BadRow>, String> {
        let mut bad = Vec::new();
        let file = &source.file_names[batch.file];
        let id_column = source.column_of(|k| matches!(k, ColumnKind::Id { .. }));
        let group = source.id_group().map(str::to_string);
        let map = self.ids.entry(group.clone()).or_default();
        let mut keep = Vec::with_capacity(batch.rows());
        let mut in_batch = std::collections::HashSet::new();
        for (row, id) in batch.ids.iter().enumerate() {
            let duplicate = id
                .as_ref()
                .is_some_and(|id| map.get(id).is_some() || !in_batch.insert(id));
            if duplicate {
                bad.push(BadRow {
                    file: file.clone(),
                    line: batch.lines[row],
                    column: id_column.clone(),
                    message: format!(
                        "duplicate node id {} in id group {}",
                        id.as_ref().map_or(String::new(), ToString::to_string),
                        group.as_deref().unwrap_or("(global)")
                    ),
                });
            } else {
                keep.push(row);
            }
        }
        let all = keep.len() == batch.rows();
        let columns = rows_of(&batch.columns, &keep, all);
        let row_labels: Option<Vec<Vec<String>>> = batch
            .labels
            .as_ref()
            .map(|labels| keep.iter().map(|&r| labels[r].clone()).collect());
        let labels: Vec<&str> = source.names.iter().map(String::as_str).collect();
        let added = self
            .load
            .add_nodes(&labels, row_labels.as_deref(), &columns, keep.len())
            .map_err(|e| format!("{file}: {e}"))?;
        let mut rejected = added.rejected.iter().peekable();
        for (i, &row) in keep.iter().enumerate() {
            if let Some((_, e)) = rejected.next_if(|(at, _)| *at == i) {
                bad.push(BadRow {
                    file: file.clone(),
                    line: batch.lines[row],
                    column: None,
                    message: e.to_string(),
                });
            } else if let (Some(id), Some(Some(vertex))) = (&batch.ids[row], added.ids.get(i)) {
                map.insert(id, *vertex);
            }
        }
        Ok(bad)
    }

    fn relationships(&mut self, source: &Source, batch: &Batch) -> Result<Vec<BadRow>, String> {
        let mut bad = Vec::new();
        let file = &source.file_names[batch.file];
        let empty = IdMap::default();
        let lookup =
            |group: Option<&str>| self.ids.get(&group.map(str::to_string)).unwrap_or(&empty);
        let (starts, ends) = (lookup(source.start_group()), lookup(source.end_group()));
        // Rows by type, in row order.
        let mut by_type: Vec<TypeRows> = Vec::new();
        for row in 0..batch.rows() {
            let unknown = |which: &str, key: &IdKey, group: Option<&str>, column| BadRow {
                file: file.clone(),
                line: batch.lines[row],
                column,
                message: format!(
                    "unknown {which} node id {key} in id group {}",
                    group.unwrap_or("(global)")
                ),
            };
            let Some(src) = starts.get(&batch.starts[row]) else {
                bad.push(unknown(
                    "start",
                    &batch.starts[row],
                    source.start_group(),
                    source.column_of(|k| matches!(k, ColumnKind::StartId { .. })),
                ));
                continue;
            };
            let Some(dst) = ends.get(&batch.ends[row]) else {
                bad.push(unknown(
                    "end",
                    &batch.ends[row],
                    source.end_group(),
                    source.column_of(|k| matches!(k, ColumnKind::EndId { .. })),
                ));
                continue;
            };
            let ty = &batch.types[row];
            let at = match by_type.iter().position(|group| &group.ty == ty) {
                Some(at) => at,
                None => {
                    by_type.push(TypeRows {
                        ty: ty.clone(),
                        rows: Vec::new(),
                        src: Vec::new(),
                        dst: Vec::new(),
                    });
                    by_type.len() - 1
                }
            };
            let group = &mut by_type[at];
            group.rows.push(row);
            group.src.push(src);
            group.dst.push(dst);
        }
        for TypeRows { ty, rows, src, dst } in by_type {
            let columns = rows_of(&batch.columns, &rows, rows.len() == batch.rows());
            let added = self
                .load
                .add_relationships(&ty, &src, &dst, &columns)
                .map_err(|e| format!("{file}: {e}"))?;
            for (i, e) in added.rejected {
                bad.push(BadRow {
                    file: file.clone(),
                    line: batch.lines[rows[i]],
                    column: None,
                    message: e.to_string(),
                });
            }
        }
        Ok(bad)
    }
}

/// The rows of a relationship batch with one type, and their resolved endpoints.
struct TypeRows {
    ty: Arc<str>,
    rows: Vec<usize>,
    src: Vec<VertexId>,
    dst: Vec<VertexId>,
}

/// Progress on stderr: bars on a terminal, else one line per file.
struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
    stage_started: Instant,
    stage_rows: u64,
    /// Bytes read of the files finished in this stage.
    bytes_done: u64,
    file_rows: u64,
    file_bad: u64,
    file_started: Instant,
}

impl Progress {
    fn new(mode: ProgressMode) -> Progress {
        Progress {
            mode,
            bar: None,
            stage_started: Instant::now(),
            stage_rows: 0,
            bytes_done: 0,
            file_rows: 0,
            file_bad: 0,
            file_started: Instant::now(),
        }
    }

    fn start_stage(&mut self, stage: Stage, total_bytes: u64) {
        self.stage_started = Instant::now();
        self.file_started = Instant::now();
        self.stage_rows = 0;
        self.bytes_done = 0;
        if self.mode == ProgressMode::Bars {
            let prefix = match stage {
                Stage::Nodes => "nodes",
                Stage::Relationships => "relationships",
            };
            self.bar = Some(progress::bar(total_bytes, "{bytes}/{total_bytes}", prefix));
        }
    }

    fn batch(&mut self, source: &Source, batch: &Batch, added: u64, bad: u64) {
        self.stage_rows += added;
        self.file_rows += added;
        self.file_bad += bad;
        let position = self.bytes_done + batch.bytes_read;
        if batch.last {
            self.bytes_done += batch.bytes_read;
        }
        match (&self.bar, self.mode) {
            (Some(bar), _) => {
                bar.set_position(position);
                let seconds = self.stage_started.elapsed().as_secs_f64().max(1e-3);
                bar.set_message(format!(
                    "{} rows, {:.0} rows/s",
                    self.stage_rows,
                    self.stage_rows as f64 / seconds
                ));
            }
            (None, ProgressMode::Lines) if batch.last => {
                let kind = match source.stage {
                    Stage::Nodes => "nodes",
                    Stage::Relationships => "relationships",
                };
                eprintln!(
                    "{kind} {}: {} rows, {} bad, {:.2} s",
                    source.file_names[batch.file],
                    self.file_rows,
                    self.file_bad,
                    self.file_started.elapsed().as_secs_f64()
                );
            }
            _ => {}
        }
        if batch.last {
            self.file_rows = 0;
            self.file_bad = 0;
            self.file_started = Instant::now();
        }
    }

    fn finish_stage(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish();
        }
    }
}

/// The rows `rows` of `columns` (all of them, in order, when `all`).
fn rows_of(
    columns: &[(String, Vec<Value>)],
    rows: &[usize],
    all: bool,
) -> Vec<(String, Vec<Value>)> {
    if all {
        return columns.to_vec();
    }
    columns
        .iter()
        .map(|(name, values)| {
            (
                name.clone(),
                rows.iter().map(|&r| values[r].clone()).collect(),
            )
        })
        .collect()
}
