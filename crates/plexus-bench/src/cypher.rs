//! `cypher`: latency of the LDBC SNB Interactive short (IS1–7) and complex (IC1–14) reads on
//! the SNB mini data set.
//!
//! The data set is loaded into a fresh database (in a temporary directory) with the same
//! loader and the same parameter choice as the LDBC conformance test (`plexus_tck`): per
//! query, the first parameter set that returns rows. Each query then runs `warmup` times
//! unmeasured and `repeats` times measured through `Connection::execute` (auto-commit,
//! results materialised); the median is printed as `ldbc_<query>_ms` with the rows returned.
//! Updates (IU) are not measured: they would change what the reads see from run to run.
//!
//! The scan figures of issue 18 (`scan_*`: large label scans, string predicates, a top-k sort
//! and a hash join against DuckDB) come after them, from `scan.rs`, then the k-hop figures of
//! issue 24 (`khop_*`: `MATCH (a:V {id: $s})-[:E*1..k]->(b) RETURN count(DISTINCT b)` and the
//! `plexus::algo` kernel on the RMAT graph against igraph's `neighborhood`), from `khop.rs`;
//! `--only snb`, `--only scan` or `--only khop` runs one of the three parts. Both peers run
//! with the `--python` of the scan options (the peers' virtual environment).

use crate::report::Figure;
use crate::{khop, scan};
use plexus::{Config, Connection, Database, Params};
use plexus_tck::ldbc_queries::{Query, parameter_candidates, queries};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Options {
    /// The SNB mini `cypher` directory (headers.txt, queries/, test-data/).
    #[arg(long, default_value = "../shared/data/ldbc-snb-mini/cypher")]
    data: PathBuf,
    /// Measured runs per query (the median is printed).
    #[arg(long, default_value_t = 11)]
    repeats: usize,
    /// Unmeasured runs per query first.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Directory for the benchmark database (default: the system temp dir).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Only one part: `snb` (the LDBC SNB reads), `scan` (the scan figures) or `khop` (the
    /// k-hop figures).
    #[arg(long, value_parser = ["snb", "scan", "khop"])]
    only: Option<String>,
    /// SNB reads to run (comma-separated figure names without `ldbc_`/`_ms`, e.g. `ic3,ic5`;
    /// default all): for profiling one query with a large `--repeats`.
    #[arg(long = "snb-queries", value_delimiter = ',')]
    snb_queries: Vec<String>,
    #[command(flatten)]
    scan: scan::Options,
    #[command(flatten)]
    khop: khop::Options,
}

pub fn run(options: &Options) -> Result<(), String> {
    let part = |name: &str| options.only.as_deref().is_none_or(|only| only == name);
    if part("snb") {
        run_snb(options)?;
    }
    if part("scan") {
        scan::run(&options.scan)?;
    }
    if part("khop") {
        khop::run(&options.khop, &options.scan.python)?;
    }
    Ok(())
}

fn run_snb(options: &Options) -> Result<(), String> {
    if options.repeats == 0 {
        return Err("--repeats must be at least 1".into());
    }
    let parent = options.dir.clone().unwrap_or_else(std::env::temp_dir);
    let dir = parent.join(format!("plexus-bench-cypher-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = measure(options, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure(options: &Options, dir: &Path) -> Result<(), String> {
    let db = Database::open(dir, Config::default()).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let vanilla = options.data.join("test-data/vanilla");
    let report = plexus_tck::ldbc::load(&db, &options.data.join("headers.txt"), &vanilla)?;
    eprintln!(
        "loaded {} vertices, {} edges in {:.1} s",
        report.vertices,
        report.edges,
        started.elapsed().as_secs_f64()
    );
    let mut conn = db.connect();
    let mut reads: Vec<Query> = queries(&options.data)?
        .into_iter()
        .filter(|q| !q.is_update())
        .filter(|q| {
            options.snb_queries.is_empty() || options.snb_queries.contains(&short_name(&q.name))
        })
        .collect();
    if reads.is_empty() {
        return Err(format!(
            "no SNB read matches --snb-queries {:?}",
            options.snb_queries
        ));
    }
    reads.sort_by_key(|q| order(&q.name));
    for query in reads {
        let params = parameters_with_rows(&mut conn, &options.data, &query)?;
        let (median_ms, rows) = median_latency_ms(&mut conn, &query, &params, options)?;
        let name = figure_name(&query.name);
        Figure::new(&name, median_ms, "ms")
            .with("rows", rows as f64)
            .with("repeats", options.repeats as f64)
            .print();
    }
    db.close().map_err(|e| e.to_string())
}

/// IS1–7 before IC1–14, by number.
fn order(query: &str) -> (bool, u32) {
    let number = query.rsplit('-').next().and_then(|n| n.parse().ok());
    (query.contains("complex"), number.unwrap_or(u32::MAX))
}

/// `interactive-short-1` → `ldbc_is1_ms`, `interactive-complex-14` → `ldbc_ic14_ms`.
fn figure_name(query: &str) -> String {
    format!("ldbc_{}_ms", short_name(query))
}

/// `interactive-short-1` → `is1`, `interactive-complex-14` → `ic14`.
fn short_name(query: &str) -> String {
    query
        .replace("interactive-short-", "is")
        .replace("interactive-complex-", "ic")
}

/// The first parameter candidate that returns rows (or the last one tried).
pub(crate) fn parameters_with_rows(
    conn: &mut Connection,
    cypher_dir: &Path,
    query: &Query,
) -> Result<Params, String> {
    let candidates = parameter_candidates(conn, cypher_dir, query);
    let mut chosen = None;
    for params in candidates {
        let result = conn
            .execute(&query.text, &params)
            .map_err(|e| format!("{}: {e}", query.name))?;
        let has_rows = !result.rows.is_empty();
        chosen = Some(params);
        if has_rows {
            break;
        }
    }
    chosen.ok_or_else(|| format!("{}: no parameters", query.name))
}

/// Median wall time of `repeats` runs after `warmup` runs, and the rows of the last run.
fn median_latency_ms(
    conn: &mut Connection,
    query: &Query,
    params: &Params,
    options: &Options,
) -> Result<(f64, usize), String> {
    let mut samples_ms = Vec::with_capacity(options.repeats);
    let mut rows = 0;
    for run in 0..options.warmup + options.repeats {
        let started = Instant::now();
        let result = conn
            .execute(&query.text, params)
            .map_err(|e| format!("{}: {e}", query.name))?;
        if run >= options.warmup {
            samples_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        rows = result.rows.len();
    }
    samples_ms.sort_by(f64::total_cmp);
    Ok((samples_ms[samples_ms.len() / 2], rows))
}
