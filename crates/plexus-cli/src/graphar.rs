//! `plexus export graphar` and `plexus import graphar`: Apache GraphAr files (docs/graphar.md).
//!
//! DESIGN
//! ======
//! The work is `plexus_graphar`'s; this module opens the database as the other commands do
//! and shows progress:
//!
//! ```text
//!   plexus export graphar <db> <out-dir>    open (must exist, not in use) → one snapshot
//!                                           → plexus_graphar::export → summary line
//!   plexus import graphar <graph.yml> <db>  metadata read first (a bad YAML file fails before
//!                                           the database is touched) → open (created if
//!                                           absent) → plexus_graphar::import, one bulk load,
//!                                           progress bar or lines → commit → close
//! ```
//!
//! An import that fails leaves the database as it was (the bulk load is dropped), and a
//! database directory it created is removed again, as `plexus import` does.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::ProgressBar;
use plexus::Database;
use plexus::settings::Settings;
use plexus_graphar::export::{DEFAULT_EDGE_CHUNK_SIZE, DEFAULT_VERTEX_CHUNK_SIZE};
use plexus_graphar::meta::FileType;
use plexus_graphar::{ExportOptions, GraphInfo, ImportProgress};

use crate::progress::{self, ImportSummary, ProgressMode};

/// Formats `plexus export` writes.
#[derive(clap::Subcommand, Debug)]
pub enum ExportCommand {
    /// One consistent snapshot as Apache GraphAr (Parquet chunks, YAML metadata).
    Graphar(ExportArgs),
}

/// The arguments of `plexus export graphar`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The database directory (must exist and not be open elsewhere).
    pub db: PathBuf,
    /// Where to write the graph (created; must be empty if it exists).
    pub out: PathBuf,
    /// Vertices per chunk (also the source and destination chunk size of the edges), and
    /// edges per chunk unless --edge-chunk-size is given.
    #[arg(long, value_name = "N")]
    pub chunk_size: Option<u64>,
    /// Edges per adjacency chunk.
    #[arg(long, value_name = "N")]
    pub edge_chunk_size: Option<u64>,
    /// Only these vertex tables (labels), comma-separated, and the edges between them.
    #[arg(long, value_name = "LABEL,…", value_delimiter = ',')]
    pub labels: Option<Vec<String>>,
    /// Only these relationship types, comma-separated.
    #[arg(long, value_name = "TYPE,…", value_delimiter = ',')]
    pub types: Option<Vec<String>>,
    /// The graph's name (NAME.graph.yml; default: the database directory's name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Keep each vertex's Plexus id (`id(n)`) as an int64 property, named NAME
    /// (default `plexus_id`): GraphAr renumbers vertices densely per type.
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = plexus_graphar::export::DEFAULT_ID_PROPERTY)]
    pub keep_ids: Option<String>,
    /// The payload of property groups and adjacency lists (label chunks are always Parquet).
    #[arg(long, value_enum, default_value_t = Format::Parquet)]
    pub format: Format,
}

/// `--format` of `plexus export graphar`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Format {
    Parquet,
    Csv,
}

/// Runs `plexus export graphar`; returns the summary line.
pub fn export(args: ExportArgs) -> Result<String, String> {
    let started = Instant::now();
    if !args.db.is_dir() {
        return Err(format!("no database directory at {}", args.db.display()));
    }
    let name = args.name.clone().unwrap_or_else(|| {
        std::path::absolute(&args.db)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "graph".to_string())
    });
    let options = ExportOptions {
        name,
        vertex_chunk_size: args.chunk_size.unwrap_or(DEFAULT_VERTEX_CHUNK_SIZE),
        edge_chunk_size: (args.edge_chunk_size)
            .or(args.chunk_size)
            .unwrap_or(DEFAULT_EDGE_CHUNK_SIZE),
        labels: args.labels,
        types: args.types,
        keep_ids: args.keep_ids,
        file_type: match args.format {
            Format::Parquet => FileType::Parquet,
            Format::Csv => FileType::Csv,
        },
    };
    let database = open(&args.db)?;
    let summary =
        plexus_graphar::export(&database, &args.out, &options).map_err(|e| e.to_string())?;
    database
        .close()
        .map_err(|e| format!("closing the database: {e}"))?;
    Ok(format!(
        "exported {} vertices ({} types), {} edges ({} types) to {} in {:.2} s",
        summary.vertices,
        summary.vertex_types,
        summary.edges,
        summary.edge_types,
        summary.graph_file.display(),
        started.elapsed().as_secs_f64()
    ))
}

/// Runs `plexus import graphar <graph> <db>`.
pub fn import(graph: &Path, db: &Path, mode: ProgressMode) -> Result<ImportSummary, String> {
    let started = Instant::now();
    let info = GraphInfo::load(graph).map_err(|e| e.to_string())?;
    let existed = db.exists();
    let result = (|| {
        let database = open(db)?;
        let mut progress = Progress::new(mode);
        let summary = plexus_graphar::import(&database, &info, &mut |p| progress.show(p));
        progress.finish();
        let summary = summary.map_err(|e| format!("{e}\nnothing was imported"))?;
        database
            .close()
            .map_err(|e| format!("closing the database: {e}"))?;
        Ok(ImportSummary {
            nodes: summary.vertices,
            relationships: summary.edges,
            bad_rows: 0,
            report: None,
            seconds: started.elapsed().as_secs_f64(),
        })
    })();
    if result.is_err() && !existed {
        // Created by this import, which failed: leave nothing behind.
        let _ = std::fs::remove_dir_all(db);
    }
    result
}

fn open(db: &Path) -> Result<Database, String> {
    let settings = Settings::load(db).map_err(|e| e.to_string())?;
    Database::open_settings(db, settings).map_err(|e| match e {
        plexus::Error::AlreadyOpen { .. } => format!(
            "the database {} is in use by another process (it holds {}): stop that process \
             (plexus shell, plexus serve, …) and try again",
            db.display(),
            db.join("LOCK").display()
        ),
        e => format!("opening {}: {e}", db.display()),
    })
}

/// The import's progress on stderr: a bar on a terminal, else a line per type.
struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
    current: String,
}

impl Progress {
    fn new(mode: ProgressMode) -> Progress {
        Progress {
            mode,
            bar: None,
            current: String::new(),
        }
    }

    fn show(&mut self, p: ImportProgress<'_>) {
        match self.mode {
            ProgressMode::Bars => {
                let bar = self
                    .bar
                    .get_or_insert_with(|| progress::bar(p.total, "{pos}/{len}", "graphar"));
                bar.set_position(p.done);
                bar.set_message(p.current.to_string());
            }
            ProgressMode::Lines => {
                if p.current != self.current {
                    eprintln!(
                        "importing {} ({} of {} rows done)",
                        p.current, p.done, p.total
                    );
                    let _ = std::io::stderr().flush();
                    self.current = p.current.to_string();
                }
            }
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
