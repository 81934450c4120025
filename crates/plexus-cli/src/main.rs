//! `plexus`: the Plexus command-line tool. Argument parsing and printing only; the work is in
//! the `plexus_cli` library (so that tests run the same code).
//!
//!     plexus algo validate ../shared/data/graphalytics
//!     plexus shell ./my-db            (docs/shell.md)
//!     plexus serve ./my-db --user neo4j:secret     (Bolt server, docs/bolt.md)
//!     plexus import ./my-db --nodes Person=people.csv --relationships KNOWS=knows.csv
//!     plexus import ldbc-snb ../shared/data/ldbc-snb-mini/cypher/test-data/vanilla ./snb
//!                                     (bulk import, docs/loading.md)
//!     plexus import graphar ../shared/data/graphar-testing/neo4j/MovieGraph.graph.yml ./movies
//!     plexus export graphar ./movies ./movies-graphar --chunk-size 1000
//!                                     (Apache GraphAr, docs/graphar.md)
//!     plexus mirror --source postgres://app@db/shop --mapping graph.sql ./shop-graph
//!                                     (PostgreSQL mirror, docs/mirror.md)
//!
//! Exit status: 0 when everything passed, 1 when a case failed or the run could not start,
//! 2 for a usage error (clap's).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use plexus_cli::{Event, validate_graphalytics};

/// mimalloc instead of glibc malloc: a large commit frees millions of small buffers (rows,
/// write sets), and glibc then consolidates its free lists inside the next statement's first
/// allocation (~85 ms after a million-row commit, measured in `plexus shell`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod mirror;
mod serve;

/// Graphs with at least this many edges get loading progress on stderr.
const PROGRESS_MIN_EDGES: usize = 100_000;
/// Least time between two progress lines of one load.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(500);

#[derive(Parser)]
#[command(
    name = "plexus",
    version,
    about = "The Plexus graph database command-line tool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Graph analytics.
    #[command(subcommand)]
    Algo(AlgoCommand),
    /// Interactive Cypher shell on a database directory (created if absent); runs a script
    /// from stdin when stdin is not a terminal, stopping at the first error.
    Shell {
        /// The database directory.
        db: PathBuf,
        /// Print each statement before its result (for transcripts of scripts).
        #[arg(long)]
        echo: bool,
        #[command(flatten)]
        settings: plexus_cli::settings_args::SettingsArgs,
    },
    /// Serve a database directory over Bolt to Neo4j drivers until ctrl-c or SIGTERM
    /// (docs/bolt.md).
    Serve(serve::ServeArgs),
    /// Bulk-import neo4j-admin style CSV files (or, with `ldbc-snb`, the LDBC SNB layout; with
    /// `graphar`, an Apache GraphAr graph) into a database in one commit; nothing becomes visible
    /// if the import fails (docs/loading.md, docs/graphar.md).
    Import(plexus_cli::import::ImportArgs),
    /// Write a database's snapshot in another format (Apache GraphAr: docs/graphar.md).
    #[command(subcommand)]
    Export(plexus_cli::graphar::ExportCommand),
    /// Follow a PostgreSQL database into a graph (snapshot, then logical replication),
    /// exactly once, until ctrl-c or SIGTERM; `--drop` removes the slot (docs/mirror.md).
    Mirror(mirror::MirrorArgs),
}

#[derive(Subcommand)]
enum AlgoCommand {
    /// Check the analytics against LDBC Graphalytics validation data: every graph is loaded
    /// into a temporary database and every kernel runs through the snapshot API.
    Validate {
        /// The Graphalytics directory (with `properties/` and the graph and output files).
        dir: PathBuf,
        /// Where to create the temporary database (default: the system temp dir).
        #[arg(long, value_name = "DIR")]
        db_parent: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Algo(AlgoCommand::Validate { dir, db_parent }) => validate(&dir, db_parent),
        Command::Shell { db, echo, settings } => match settings.load(&db) {
            Ok(settings) => shell(&plexus_cli::shell::Options { db, echo, settings }),
            Err(e) => {
                eprintln!("plexus shell: {e}");
                ExitCode::from(2)
            }
        },
        Command::Serve(args) => serve::run(args),
        Command::Mirror(args) => mirror::run(args),
        Command::Export(plexus_cli::graphar::ExportCommand::Graphar(args)) => {
            match plexus_cli::graphar::export(args) {
                Ok(summary) => {
                    println!("{summary}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("plexus export: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Import(args) => {
            let progress = plexus_cli::import::ProgressMode::for_stderr();
            match plexus_cli::import::run(args, progress) {
                Ok(summary) => {
                    println!("{summary}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("plexus import: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn shell(options: &plexus_cli::shell::Options) -> ExitCode {
    match plexus_cli::shell::run(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("plexus: {e}");
            ExitCode::FAILURE
        }
    }
}

fn validate(dir: &std::path::Path, db_parent: Option<PathBuf>) -> ExitCode {
    let mut last_progress: Option<Instant> = None;
    let mut events = |event: Event<'_>| match event {
        Event::Loading {
            graph,
            edges_done,
            edges_total,
        } if edges_total >= PROGRESS_MIN_EDGES => {
            let done = edges_done == edges_total;
            if done || last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_INTERVAL) {
                let percent = 100.0 * edges_done as f64 / edges_total as f64;
                eprint!("\rloading {graph}: {percent:5.1}% of {edges_total} edges");
                if done {
                    eprintln!();
                }
                let _ = std::io::stderr().flush();
                last_progress = (!done).then(Instant::now);
            }
        }
        Event::Loading { .. } => {}
        Event::Case(report) => println!("{report}"),
    };
    let report = match validate_graphalytics(dir, db_parent.as_deref(), &mut events) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("plexus: {e}");
            return ExitCode::FAILURE;
        }
    };
    for problem in &report.problems {
        println!("ERROR {problem}");
    }
    if !report.skipped_graphs.is_empty() {
        println!(
            "skipped {} graphs without data here: {}",
            report.skipped_graphs.len(),
            report.skipped_graphs.join(", ")
        );
    }
    println!("{}", report.summary());
    if report.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
