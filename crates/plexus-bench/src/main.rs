//! `plexus-bench`: benchmark driver. Every figure is one JSON object per line on stdout:
//! `{"name": ..., "value": ..., "unit": ..., "baseline": ..., "ratio": ...}`, with the
//! baseline measured in the same run. Progress goes to stderr.
//!
//!     cargo run --release -p plexus-bench -- storage --scale 20
//!     cargo run --release -p plexus-bench -- ingest --scale 20   # bulk loads vs Kùzu COPY
//!     cargo run --release -p plexus-bench -- mirror              # PostgreSQL mirror freshness
//!     cargo run --release -p plexus-bench -- cypher --only scan --scan-rows 1000000
//!                                                      # scans vs DuckDB (issue 18)
//!     cargo run --release -p plexus-bench -- cypher --only khop --khop-scale 12
//!                                                      # k-hop vs igraph (issue 24)
//!     cargo run --release -p plexus-bench -- jit [--rows 10000000]
//!                                                      # JIT modes on a filtered scan (issue 22)

/// mimalloc instead of glibc malloc: a large commit frees millions of small buffers (rows,
/// write sets), and glibc then consolidates its free lists inside the next statement's first
/// allocation (~85 ms after a million-row commit, measured in `plexus shell`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod algo;
mod bank;
mod cypher;
mod graphar;
mod http;
mod ingest;
mod jit;
mod json;
mod khop;
mod mirror;
mod report;
mod rmat;
mod scan;
mod storage;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "plexus-bench",
    about = "Plexus benchmarks (JSON lines on stdout)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Storage and transaction figures on a seeded RMAT graph (2^scale vertices, 16 edges each).
    Storage {
        #[arg(long, default_value_t = 16)]
        scale: u32,
        /// Seconds each throughput measurement runs.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// Directory for the benchmark databases (default: the system temp dir).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// Memtable budget of the disk-tier (`lsm_*`) figures, in MiB.
        #[arg(long, default_value_t = 64)]
        lsm_budget_mb: u64,
        /// Only the disk-tier (`lsm_*`) figures.
        #[arg(long)]
        lsm_only: bool,
        /// Neighbour packing of the disk-tier runs: never (the engine's default),
        /// when-it-pays or always.
        #[arg(long, default_value = "never")]
        lsm_run_packing: plexus::RunPacking,
    },
    /// (Internal) the child process of `lsm_peak_rss_bytes`: loads the RMAT graph with a
    /// memtable budget and prints its peak resident memory in bytes.
    #[command(hide = true)]
    LsmLoad {
        #[arg(long)]
        scale: u32,
        #[arg(long)]
        budget_bytes: u64,
        #[arg(long)]
        dir: std::path::PathBuf,
    },
    /// Graphalytics kernels on a live snapshot vs a static CSR, and under concurrent writes.
    Algo(algo::Options),
    /// LDBC SNB Interactive read latencies (IS1–7, IC1–14) on the SNB mini data set, then
    /// scan-heavy queries on generated data against DuckDB, then k-hop counts on the RMAT
    /// graph against igraph (`--only snb|scan|khop`).
    Cypher(cypher::Options),
    /// (Internal) the Plexus side of the scan figures: loads the scan files into a fresh
    /// database, times the queries and prints one JSON line per query.
    #[command(hide = true)]
    CypherScanChild(scan::ChildOptions),
    /// Bulk ingest: the RMAT graph written as CSV and Parquet, loaded by Plexus's front ends
    /// (edges/s, peak RSS, size on disk) against Kùzu's and LadybugDB's COPY of the same files.
    Ingest(ingest::Options),
    /// Apache GraphAr: export and import throughput, neighbour retrieval and label filters
    /// on a graph read in place, against plain Parquet baselines in the same run.
    Graphar(graphar::Options),
    /// (Internal) one Plexus figure of `ingest` in its own process: loads the files into a
    /// fresh database and prints `ok <seconds> <nodes> <edges> <peak RSS> <db bytes> <other s>`.
    #[command(hide = true)]
    IngestChild {
        #[arg(long)]
        figure: String,
        #[arg(long)]
        data: std::path::PathBuf,
        #[arg(long)]
        db: std::path::PathBuf,
    },
    /// Bank transfers: committed transfers/s and abort rate per isolation level, sessions
    /// and path (embedded, Bolt).
    Bank(bank::Options),
    /// The PostgreSQL mirror: initial copy rows/s, freshness under a fixed source load, and
    /// the source's throughput with and without the mirror (a throwaway PostgreSQL cluster).
    Mirror(mirror::Options),
    /// An expression-heavy filtered scan with the JIT off, on and adaptive (cold and warm
    /// code cache), with the compile time (issue 22).
    Jit(jit::Options),
    /// Point lookups through the HTTP Query API against Bolt (the baseline), in one run.
    Http(http::Options),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Storage {
            scale,
            seconds,
            dir,
            lsm_budget_mb,
            lsm_only,
            lsm_run_packing,
        } => storage::run(&storage::Options {
            scale,
            seconds,
            dir: dir.unwrap_or_else(std::env::temp_dir),
            lsm_budget_bytes: lsm_budget_mb << 20,
            lsm_only,
            lsm_run_packing,
        }),
        Command::LsmLoad {
            scale,
            budget_bytes,
            dir,
        } => {
            let options = storage::Options {
                scale,
                seconds: 0.0,
                dir,
                lsm_budget_bytes: budget_bytes,
                lsm_only: true,
                lsm_run_packing: plexus::RunPacking::default(),
            };
            storage::lsm::load_and_report_peak(&options, budget_bytes)
        }
        Command::Algo(options) => algo::run(&options),
        Command::Cypher(options) => cypher::run(&options).map_err(plexus::Error::InvalidArgument),
        Command::CypherScanChild(options) => scan::child(&options),
        Command::Ingest(options) => ingest::run(&options).map_err(plexus::Error::InvalidArgument),
        Command::Graphar(options) => graphar::run(&options).map_err(plexus::Error::InvalidArgument),
        Command::IngestChild { figure, data, db } => ingest::child(&figure, &data, &db),
        Command::Bank(options) => bank::run(&options).map_err(plexus::Error::InvalidArgument),
        Command::Mirror(options) => mirror::run(&options).map_err(plexus::Error::InvalidArgument),
        Command::Jit(options) => jit::run(&options).map_err(plexus::Error::InvalidArgument),
        Command::Http(options) => http::run(&options).map_err(plexus::Error::InvalidArgument),
    };
    if let Err(e) = result {
        eprintln!("plexus-bench: {e}");
        std::process::exit(1);
    }
}
