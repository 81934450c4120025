//! `cypher` scan figures (issue 18): filters, string predicates, a top-k sort and a hash join
//! over millions of generated `:P` vertices, Plexus against DuckDB on the same Parquet files,
//! in the same run, and optionally against an older Plexus build.
//!
//! WHAT
//! ====
//! The LDBC SNB figures of `cypher` are short traversals over a small graph; they say nothing
//! of the query engine's per-row cost, which is what issue 18 changes (typed column vectors
//! instead of a `Value` per slot). These figures are queries that touch every row of a large
//! label, each run in Plexus (Cypher) and in DuckDB (the same query in SQL), both reading the
//! same rows:
//!
//!   scan_groupby      MATCH (p:P) WHERE p.x > $c AND p.y % 7 = 1
//!                     RETURN p.z % 100 AS g, count(*) AS n, avg(p.w) AS w      (~3 % pass)
//!   scan_starts_with  MATCH (p:P) WHERE p.s STARTS WITH 'ab' RETURN p.id, p.s  (~1/676)
//!   scan_contains     MATCH (p:P) WHERE p.s CONTAINS 'abc' RETURN p.id, p.s    (~1/2900)
//!   scan_topk         MATCH (p:P) RETURN p.id, p.w ORDER BY p.w DESC LIMIT 10
//!   scan_hash_join    MATCH (p:P), (q:Q) WHERE p.k = q.k
//!                     RETURN q.g AS g, count(*) AS n, sum(p.x) AS sx       (half of P joins)
//!   scan_aggregate    MATCH (p:P) RETURN p.k % 100 AS g, count(*) AS n, sum(p.x) AS sx,
//!                     min(p.y) AS lo, max(p.z) AS hi                 (every row, 100 groups)
//!
//! (the SQL texts are next to the Cypher ones in [`QUERIES`]). `scan_hash_join` is planned as
//! a `HashJoin` with `:Q` as the build side (see `plexus-exec/src/plan/join.rs`, WHEN): the
//! child runs EXPLAIN on it and the figure carries `"plan": "HashJoin"` or the plan's absence
//! of one, so a plan change cannot pass unnoticed.
//!
//! DATA
//! ====
//! `--scan-rows N` (default 10,000,000) `:P` rows and N/100 `:Q` rows, generated from a seed
//! (each value a hash of its row, column and [`SEED`]: the same files on every machine), are
//! written once to `--scan-data` (default `<temp>/plexus-scan-<N>`) and reused while its
//! `scan-rows` marker says the same N and seed:
//!
//!   p.parquet   id INT64 (0..N), x, y, z INT64 uniform in [0, 10^6), w DOUBLE uniform in
//!               [0, 1000), s STRING of 8 letters a-z, k INT64 uniform in [0, 2·N/100)
//!   q.parquet   id INT64 (0..N/100), k INT64 = 2·id, g INT64 = id % 10
//!
//! Plexus loads them with its fastest bulk path from Cypher, `COPY P FROM 'p.parquet'` into
//! `CREATE NODE TABLE P(id INT64, x INT64, …, PRIMARY KEY (id))` (one bulk load, one commit);
//! DuckDB with `CREATE TABLE p AS SELECT * FROM read_parquet(…)` in an in-memory database.
//! The load times are a figure too (`scan_load_s`), not the point.
//!
//! HOW MEASURED
//! ============
//! Each system runs in its own process, one after the other, so the two never share memory or
//! cores: DuckDB through `bench/peers/scan_peers.py` (the peers' virtual environment,
//! `--python`; duckdb pinned in `bench/peers/run.sh`, its default of one thread per core), and
//! Plexus through `plexus-bench cypher-scan-child` — this binary, and with `--compare-bin PATH`
//! another build of it (an older commit), with the same data in the same invocation, so that
//! "before → after" is measured under the same machine load. Each child loads the files, then
//! per query runs it `--scan-warmup` times unmeasured and `--scan-repeats` times measured
//! (auto-commit `Connection::execute`, every row materialised; DuckDB `execute(…).fetchall()`),
//! and prints one JSON line with the median and the rows of the last run — and the CPU time
//! per measured run (`cpu_ms`: user and system, all threads, from `getrusage`; `before_cpu_ms`
//! for the older build). On a shared 2-core machine the wall-time median of one process moves
//! by a third from one process to the next; comparing two builds, alternate processes and
//! read both figures.
//!
//! `--scan-set NAME=VALUE` passes a database setting to the Plexus children (both builds):
//! the defaults keep 1 GiB of row chunks in memory (`row_cache_bytes`) and spill the rest to
//! a cache file, where DuckDB's in-memory tables hold everything; `row_cache_bytes=unbounded`
//! measures Plexus with its rows in memory too.
//!
//! The parent prints per query `scan_<query>_ms` = Plexus's median in ms, `baseline` = DuckDB's,
//! `ratio` = Plexus / DuckDB (issue 18's target: ≤ 2), and with `--compare-bin` `before_ms`
//! and `speedup_vs_before` = before / now (target: ≥ 3).
//!
//! CHECKING
//! ========
//! Both answers are compared: same number of rows, and row by row (sorted, except for the
//! ordered top-k) the same values, integers exactly and floats within a relative 1e-9 (`avg`
//! sums in a different order). A difference is printed on stderr and the figure carries
//! `"check": "differs: …"`; the older build's answers are checked the same way
//! (`before_check`).
//!
//! LIMITS
//! ======
//! The machine is shared: figures move with the other users' load (every figure carries the
//! 1-minute load average before the children start, `load_avg`, and after they end,
//! `load_avg_end`; the run's own processes count in the latter). A query that fails in one
//! system gives a figure with an `error`.

use crate::json::{self, Json};
use crate::report::{Figure, process_cpu_ms};
use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::datatypes::{DataType as ArrowType, Field, Schema};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use plexus::{Config, CypherValue, Database, Params, SettingSource, Settings};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

/// Seed of every generated value.
const SEED: u64 = 0x5ca1_ab1e_0018;
/// x, y and z are uniform in `0 .. INT_RANGE`.
const INT_RANGE: u64 = 1_000_000;
/// `$c` of `scan_groupby`: 20 % of x pass, then 1/7 of y.
const GROUPBY_C: i64 = 800_000;
/// `:P` rows per `:Q` row.
const P_PER_Q: u64 = 100;
/// Letters in `p.s`.
const STRING_LETTERS: usize = 8;
/// Rows per Parquet row group (and per Arrow batch written).
const PARQUET_ROW_GROUP_ROWS: u64 = 1 << 20;
/// Relative tolerance of float comparisons between the systems' answers.
const FLOAT_TOLERANCE: f64 = 1e-9;
/// The peers' Python, relative to the workspace root (bench/peers/run.sh creates it).
const DEFAULT_PYTHON: &str = "target/peers-venv/bin/python";

/// One scan query, in both languages.
pub struct ScanQuery {
    pub name: &'static str,
    pub cypher: &'static str,
    pub sql: &'static str,
    /// The answer's row order is part of it (ORDER BY … LIMIT).
    pub ordered: bool,
}

pub const QUERIES: [ScanQuery; 6] = [
    ScanQuery {
        name: "groupby",
        cypher: "MATCH (p:P) WHERE p.x > $c AND p.y % 7 = 1 \
                 RETURN p.z % 100 AS g, count(*) AS n, avg(p.w) AS w",
        sql: "SELECT z % 100 AS g, count(*) AS n, avg(w) AS w FROM p \
              WHERE x > $c AND y % 7 = 1 GROUP BY g",
        ordered: false,
    },
    ScanQuery {
        name: "starts_with",
        cypher: "MATCH (p:P) WHERE p.s STARTS WITH 'ab' RETURN p.id AS id, p.s AS s",
        sql: "SELECT id, s FROM p WHERE s LIKE 'ab%'",
        ordered: false,
    },
    ScanQuery {
        name: "contains",
        cypher: "MATCH (p:P) WHERE p.s CONTAINS 'abc' RETURN p.id AS id, p.s AS s",
        sql: "SELECT id, s FROM p WHERE s LIKE '%abc%'",
        ordered: false,
    },
    ScanQuery {
        name: "topk",
        cypher: "MATCH (p:P) RETURN p.id AS id, p.w AS w ORDER BY w DESC LIMIT 10",
        sql: "SELECT id, w FROM p ORDER BY w DESC LIMIT 10",
        ordered: true,
    },
    ScanQuery {
        name: "hash_join",
        cypher: "MATCH (p:P), (q:Q) WHERE p.k = q.k \
                 RETURN q.g AS g, count(*) AS n, sum(p.x) AS sx",
        sql: "SELECT q.g AS g, count(*) AS n, sum(p.x) AS sx FROM p JOIN q ON p.k = q.k \
              GROUP BY q.g",
        ordered: false,
    },
    ScanQuery {
        name: "aggregate",
        cypher: "MATCH (p:P) RETURN p.k % 100 AS g, count(*) AS n, sum(p.x) AS sx, \
                 min(p.y) AS lo, max(p.z) AS hi",
        sql: "SELECT k % 100 AS g, count(*) AS n, sum(x) AS sx, min(y) AS lo, max(z) AS hi \
              FROM p GROUP BY g",
        ordered: false,
    },
];

#[derive(clap::Args, Clone)]
#[group(id = "scan_options")]
pub struct Options {
    /// `:P` vertices of the scan figures (`:Q` gets one per 100).
    #[arg(long = "scan-rows", id = "scan_rows", default_value_t = 10_000_000)]
    pub rows: u64,
    /// Directory of the generated Parquet files (default: <temp dir>/plexus-scan-<rows>);
    /// kept and reused while they match --scan-rows.
    #[arg(long = "scan-data", id = "scan_data")]
    pub data: Option<PathBuf>,
    /// Scan queries to run (comma-separated; default all): groupby, starts_with, contains,
    /// topk, hash_join, aggregate.
    #[arg(long = "scan-queries", id = "scan_queries", value_delimiter = ',')]
    pub queries: Vec<String>,
    /// Measured runs per scan query (the median is printed).
    #[arg(long = "scan-repeats", id = "scan_repeats", default_value_t = 5)]
    pub repeats: usize,
    /// Unmeasured runs per scan query first.
    #[arg(long = "scan-warmup", id = "scan_warmup", default_value_t = 1)]
    pub warmup: usize,
    /// Python of the peers' virtual environment (with duckdb installed); `none` skips DuckDB.
    #[arg(long, default_value = DEFAULT_PYTHON)]
    pub python: PathBuf,
    /// Another plexus-bench binary (an older commit's build) whose Plexus timings are printed
    /// next to this one's (`before_ms`, `speedup_vs_before`).
    #[arg(long)]
    pub compare_bin: Option<PathBuf>,
    /// A database setting for the Plexus children, `NAME=VALUE` (repeatable), e.g.
    /// `row_cache_bytes=unbounded`; printed on every figure as `settings`.
    #[arg(long = "scan-set", id = "scan_set")]
    pub settings: Vec<String>,
}

/// The hidden `cypher-scan-child` subcommand: loads the files into a fresh database and
/// times the queries, one JSON line each.
#[derive(clap::Args)]
pub struct ChildOptions {
    #[arg(long)]
    pub data: PathBuf,
    /// Where to create the database (removed at the end).
    #[arg(long)]
    pub db: PathBuf,
    /// Query names (repeatable); default all.
    #[arg(long = "query")]
    pub queries: Vec<String>,
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// A database setting, `NAME=VALUE` (repeatable).
    #[arg(long = "set")]
    pub settings: Vec<String>,
}

/// One system's answer to one query.
struct Answer {
    median_ms: f64,
    /// CPU time per measured run, all threads (absent from builds before it was printed).
    cpu_ms: Option<f64>,
    rows: Vec<Vec<Cell>>,
    plan: Option<String>,
}

/// What a child printed: the load and the answers (or errors) by query.
#[derive(Default)]
struct ChildReport {
    load_seconds: Option<f64>,
    version: Option<String>,
    answers: Vec<(String, Result<Answer, String>)>,
}

impl ChildReport {
    fn answer(&self, name: &str) -> Option<&Result<Answer, String>> {
        self.answers.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }
}

/// One value of an answer row, as both systems' answers are compared.
#[derive(Clone, Debug)]
enum Cell {
    Null,
    Number(f64),
    Text(String),
}

// ---------------------------------------------------------------------------------------
// The parent.

pub fn run(options: &Options) -> Result<(), String> {
    if options.repeats == 0 {
        return Err("--scan-repeats must be at least 1".into());
    }
    let queries: Vec<&ScanQuery> = selected(&options.queries)?;
    let data = match &options.data {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("plexus-scan-{}", options.rows)),
    };
    let data = std::path::absolute(&data).map_err(|e| format!("{}: {e}", data.display()))?;
    write_data(&data, options.rows)?;
    let load_avg = load_average();

    let duckdb = if options.python.as_os_str() == "none" {
        Err("DuckDB skipped (--python none)".to_string())
    } else {
        eprintln!("scan: DuckDB");
        run_duckdb(options, &data, &queries)
    };
    if let Err(error) = &duckdb {
        eprintln!("scan: DuckDB: {error}");
    }
    let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
    eprintln!("scan: Plexus ({})", exe.display());
    let now = run_plexus_child(&exe, options, &data, &queries, "now")?;
    let before = match &options.compare_bin {
        Some(bin) => {
            eprintln!("scan: Plexus before ({})", bin.display());
            Some(run_plexus_child(bin, options, &data, &queries, "before"))
        }
        None => None,
    };

    let load_avg_end = load_average();
    let rows = options.rows as f64;
    let settings = options.settings.join(" ");
    let mut load = match now.load_seconds {
        Some(s) => Figure::new("scan_load_s", s, "s"),
        None => Figure::failed("scan_load_s", "s", "no load time from the child"),
    };
    if let Some(s) = duckdb.as_ref().ok().and_then(|d| d.load_seconds) {
        load = load.baseline(s);
    }
    if let Some(Ok(b)) = &before
        && let Some(s) = b.load_seconds
    {
        load = load.with("before_s", s);
    }
    if !settings.is_empty() {
        load = load.with_label("settings", &settings);
    }
    load.with_label("system", "plexus")
        .with_label("baseline_system", "duckdb")
        .with("scan_rows", rows)
        .with("load_avg", load_avg)
        .with("load_avg_end", load_avg_end)
        .print();

    for query in queries {
        let name = format!("scan_{}_ms", query.name);
        let figure = match now.answer(query.name) {
            None => Figure::failed(&name, "ms", "no answer from the child"),
            Some(Err(error)) => Figure::failed(&name, "ms", error),
            Some(Ok(answer)) => {
                let mut figure = Figure::new(&name, answer.median_ms, "ms")
                    .with("rows", answer.rows.len() as f64);
                if let Some(cpu_ms) = answer.cpu_ms {
                    figure = figure.with("cpu_ms", cpu_ms);
                }
                match duckdb.as_ref().map(|d| d.answer(query.name)) {
                    Ok(Some(Ok(peer))) => {
                        let check = check(query, "plexus", &answer.rows, &peer.rows);
                        figure = figure.baseline(peer.median_ms).with_label("check", &check);
                    }
                    Ok(Some(Err(error))) => figure = figure.with_label("baseline_error", error),
                    Ok(None) => figure = figure.with_label("baseline_error", "no answer"),
                    Err(error) => figure = figure.with_label("baseline_error", error),
                }
                if !settings.is_empty() {
                    figure = figure.with_label("settings", &settings);
                }
                if let Some(plan) = &answer.plan {
                    figure = figure.with_label("plan", plan);
                }
                figure = match before
                    .as_ref()
                    .map(|b| b.as_ref().map(|b| b.answer(query.name)))
                {
                    None => figure,
                    Some(Ok(Some(Ok(old)))) => {
                        let peer = duckdb.as_ref().ok().and_then(|d| d.answer(query.name));
                        if let Some(Ok(peer)) = peer {
                            let check = check(query, "before", &old.rows, &peer.rows);
                            figure = figure.with_label("before_check", &check);
                        }
                        if let Some(cpu_ms) = old.cpu_ms {
                            figure = figure.with("before_cpu_ms", cpu_ms);
                        }
                        figure
                            .with("before_ms", old.median_ms)
                            .with("speedup_vs_before", old.median_ms / answer.median_ms)
                    }
                    Some(Ok(Some(Err(error)))) => figure.with_label("before_error", error),
                    Some(Ok(None)) => figure.with_label("before_error", "no answer"),
                    Some(Err(error)) => figure.with_label("before_error", error),
                };
                figure
            }
        };
        figure
            .with_label("system", "plexus")
            .with_label("baseline_system", "duckdb")
            .with("scan_rows", rows)
            .with("repeats", options.repeats as f64)
            .with("load_avg", load_avg)
            .with("load_avg_end", load_avg_end)
            .print();
    }
    Ok(())
}

/// The queries named in `names` (all when empty).
fn selected(names: &[String]) -> Result<Vec<&'static ScanQuery>, String> {
    if names.is_empty() {
        return Ok(QUERIES.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            QUERIES
                .iter()
                .find(|q| q.name == n)
                .ok_or_else(|| format!("no scan query '{n}'"))
        })
        .collect()
}

/// "ok", or "differs: …" (also printed on stderr).
fn check(query: &ScanQuery, who: &str, ours: &[Vec<Cell>], theirs: &[Vec<Cell>]) -> String {
    match same_rows(ours, theirs, query.ordered) {
        Ok(()) => "ok".into(),
        Err(difference) => {
            eprintln!(
                "scan: ERROR: {} ({who}) and DuckDB differ: {difference}",
                query.name
            );
            format!("differs: {difference}")
        }
    }
}

fn same_rows(ours: &[Vec<Cell>], theirs: &[Vec<Cell>], ordered: bool) -> Result<(), String> {
    if ours.len() != theirs.len() {
        return Err(format!("{} rows against {}", ours.len(), theirs.len()));
    }
    let mut ours = ours.to_vec();
    let mut theirs = theirs.to_vec();
    if !ordered {
        ours.sort_by(|a, b| compare_rows(a, b));
        theirs.sort_by(|a, b| compare_rows(a, b));
    }
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let equal = a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_cell(x, y));
        if !equal {
            return Err(format!("row {i}: {a:?} against {b:?}"));
        }
    }
    Ok(())
}

fn compare_rows(a: &[Cell], b: &[Cell]) -> Ordering {
    let rank = |c: &Cell| match c {
        Cell::Null => 0,
        Cell::Number(_) => 1,
        Cell::Text(_) => 2,
    };
    for (x, y) in a.iter().zip(b) {
        let order = match (x, y) {
            (Cell::Number(x), Cell::Number(y)) => x.total_cmp(y),
            (Cell::Text(x), Cell::Text(y)) => x.cmp(y),
            _ => rank(x).cmp(&rank(y)),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

fn same_cell(x: &Cell, y: &Cell) -> bool {
    match (x, y) {
        (Cell::Null, Cell::Null) => true,
        (Cell::Number(x), Cell::Number(y)) => {
            x == y || (x - y).abs() <= FLOAT_TOLERANCE * x.abs().max(y.abs()).max(1.0)
        }
        (Cell::Text(x), Cell::Text(y)) => x == y,
        _ => false,
    }
}

/// The 1-minute load average (NaN where /proc/loadavg is missing).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// Runs `bench/peers/scan_peers.py` on the selected queries.
fn run_duckdb(
    options: &Options,
    data: &Path,
    queries: &[&ScanQuery],
) -> Result<ChildReport, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/scan_peers.py");
    if !options.python.exists() {
        return Err(format!(
            "no Python at {} (bench/peers/run.sh creates the peers' virtual environment)",
            options.python.display()
        ));
    }
    let mut command = Command::new(&options.python);
    command
        .arg(&script)
        .arg("--data")
        .arg(data)
        .args(["--param", &format!("c={GROUPBY_C}")])
        .args(["--warmup", &options.warmup.to_string()])
        .args(["--repeats", &options.repeats.to_string()]);
    for query in queries {
        command.args(["--query", &format!("{}={}", query.name, query.sql)]);
    }
    read_child(command, "scan_peers.py")
}

/// Runs `<bin> cypher-scan-child` on the selected queries in a fresh database.
fn run_plexus_child(
    bin: &Path,
    options: &Options,
    data: &Path,
    queries: &[&ScanQuery],
    tag: &str,
) -> Result<ChildReport, String> {
    let db = data.join(format!("plexus-{tag}-{}.db", std::process::id()));
    let _ = std::fs::remove_dir_all(&db);
    let mut command = Command::new(bin);
    command
        .arg("cypher-scan-child")
        .arg("--data")
        .arg(data)
        .arg("--db")
        .arg(&db)
        .args(["--warmup", &options.warmup.to_string()])
        .args(["--repeats", &options.repeats.to_string()]);
    for query in queries {
        command.args(["--query", query.name]);
    }
    for setting in &options.settings {
        command.args(["--set", setting]);
    }
    let report = read_child(command, &format!("{} cypher-scan-child", bin.display()));
    let _ = std::fs::remove_dir_all(&db);
    report
}

/// Runs a child to its end (its stderr passes through) and reads its JSON lines.
fn read_child(mut command: Command, what: &str) -> Result<ChildReport, String> {
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut report = ChildReport::default();
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let value = json::parse(line).map_err(|e| format!("{what}: {e}: {line}"))?;
        if let Some(error) = value.get("error").and_then(Json::as_str)
            && value.get("query").is_none()
        {
            return Err(format!("{what}: {error}"));
        }
        if let Some(s) = value.get("load_seconds").and_then(Json::as_f64) {
            report.load_seconds = Some(s);
        }
        if let Some(v) = value.get("version").and_then(Json::as_str) {
            report.version = Some(v.to_string());
        }
        if let Some(name) = value.get("query").and_then(Json::as_str) {
            report.answers.push((name.to_string(), answer(&value)));
        }
    }
    if !output.status.success() || (report.answers.is_empty() && report.load_seconds.is_none()) {
        return Err(format!("{what} exited with {}", output.status));
    }
    Ok(report)
}

fn answer(value: &Json) -> Result<Answer, String> {
    if let Some(error) = value.get("error").and_then(Json::as_str) {
        return Err(error.to_string());
    }
    let median_ms = value
        .get("median_ms")
        .and_then(Json::as_f64)
        .ok_or("no median_ms")?;
    let Some(Json::Array(rows)) = value.get("rows") else {
        return Err("no rows".into());
    };
    let rows = rows
        .iter()
        .map(|row| match row {
            Json::Array(cells) => Ok(cells.iter().map(cell).collect()),
            _ => Err("a row that is not an array".to_string()),
        })
        .collect::<Result<_, _>>()?;
    let plan = value.get("plan").and_then(Json::as_str).map(str::to_string);
    Ok(Answer {
        median_ms,
        cpu_ms: value.get("cpu_ms").and_then(Json::as_f64),
        rows,
        plan,
    })
}

fn cell(value: &Json) -> Cell {
    match value {
        Json::Null => Cell::Null,
        Json::Number(x) => Cell::Number(*x),
        Json::Bool(b) => Cell::Number(f64::from(u8::from(*b))),
        Json::String(s) => Cell::Text(s.clone()),
        other => Cell::Text(format!("{other:?}")),
    }
}

// ---------------------------------------------------------------------------------------
// The data.

/// A 64-bit hash of (row, column) under SEED (splitmix64's finaliser).
fn hash(row: u64, column: u64) -> u64 {
    let mut z = SEED
        .wrapping_add(row.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(column.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn q_rows(p_rows: u64) -> u64 {
    (p_rows / P_PER_Q).max(1)
}

/// Writes p.parquet and q.parquet unless `data` holds them for `rows` already.
fn write_data(data: &Path, rows: u64) -> Result<(), String> {
    let marker = data.join("scan-rows");
    let stamp = format!("{rows} {SEED}\n");
    let present = ["p.parquet", "q.parquet"]
        .iter()
        .all(|f| data.join(f).exists());
    if present && std::fs::read_to_string(&marker).ok().as_deref() == Some(stamp.as_str()) {
        eprintln!("scan: reusing the files in {}", data.display());
        return Ok(());
    }
    std::fs::create_dir_all(data).map_err(|e| format!("{}: {e}", data.display()))?;
    let _ = std::fs::remove_file(&marker);
    let started = Instant::now();
    let q = q_rows(rows);
    let int = |name: &str| Field::new(name, ArrowType::Int64, false);
    let p_schema = Schema::new(vec![
        int("id"),
        int("x"),
        int("y"),
        int("z"),
        Field::new("w", ArrowType::Float64, false),
        Field::new("s", ArrowType::Utf8, false),
        int("k"),
    ]);
    write_parquet(&data.join("p.parquet"), p_schema, rows, |begin, end| {
        let ids = begin..end;
        let ints = |column: u64, range: u64| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values(
                ids.clone().map(|i| (hash(i, column) % range) as i64),
            ))
        };
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone().map(|i| i as i64))),
            ints(1, INT_RANGE),
            ints(2, INT_RANGE),
            ints(3, INT_RANGE),
            Arc::new(Float64Array::from_iter_values(ids.clone().map(|i| {
                (hash(i, 4) >> 11) as f64 / (1u64 << 53) as f64 * 1000.0
            }))),
            Arc::new(StringArray::from_iter_values(ids.clone().map(|i| {
                let mut h = hash(i, 5);
                let mut s = String::with_capacity(STRING_LETTERS);
                for _ in 0..STRING_LETTERS {
                    s.push(char::from(b'a' + (h % 26) as u8));
                    h /= 26;
                }
                s
            }))),
            ints(6, 2 * q),
        ]
    })?;
    let q_schema = Schema::new(vec![int("id"), int("k"), int("g")]);
    write_parquet(&data.join("q.parquet"), q_schema, q, |begin, end| {
        let ids = begin..end;
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone().map(|i| i as i64))),
            Arc::new(Int64Array::from_iter_values(
                ids.clone().map(|i| 2 * i as i64),
            )),
            Arc::new(Int64Array::from_iter_values(ids.map(|i| (i % 10) as i64))),
        ]
    })?;
    std::fs::write(&marker, stamp).map_err(|e| format!("{}: {e}", marker.display()))?;
    eprintln!(
        "scan: wrote {rows} :P and {q} :Q rows to {} in {:.1} s",
        data.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn write_parquet(
    path: &Path,
    schema: Schema,
    rows: u64,
    columns: impl Fn(u64, u64) -> Vec<ArrayRef>,
) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let schema = Arc::new(schema);
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(PARQUET_ROW_GROUP_ROWS as usize))
        .build();
    let mut writer =
        ArrowWriter::try_new(file, schema.clone(), Some(properties)).map_err(|e| fail(&e))?;
    for begin in (0..rows).step_by(PARQUET_ROW_GROUP_ROWS as usize) {
        let end = (begin + PARQUET_ROW_GROUP_ROWS).min(rows);
        let batch =
            RecordBatch::try_new(schema.clone(), columns(begin, end)).map_err(|e| fail(&e))?;
        writer.write(&batch).map_err(|e| fail(&e))?;
    }
    writer.close().map_err(|e| fail(&e))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The Plexus child.

/// Loads the files with `COPY` into a fresh database and prints `{"load_seconds": …}`, then
/// one `{"query": …, "median_ms": …, "rows": […]}` line per query (or `"error"`).
pub fn child(options: &ChildOptions) -> Result<(), plexus::Error> {
    let _ = std::fs::remove_dir_all(&options.db);
    let result = child_run(options);
    let _ = std::fs::remove_dir_all(&options.db);
    if let Err(error) = result {
        println!("{{\"error\": {}}}", json::quote(&error));
    }
    Ok(())
}

/// Each `NAME=VALUE` of a `--set` option applied to `settings`.
pub(crate) fn apply_settings(settings: &mut Settings, pairs: &[String]) -> Result<(), String> {
    for setting in pairs {
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| format!("--set {setting}: expected NAME=VALUE"))?;
        settings
            .set(name, value, SettingSource::Argument)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn child_run(options: &ChildOptions) -> Result<(), String> {
    let queries = selected(&options.queries)?;
    let mut settings = Settings::from_config(Config::default());
    let text = options.data.to_str().ok_or("data directory is not UTF-8")?;
    settings
        .set("import_directory", text, SettingSource::Argument)
        .map_err(|e| e.to_string())?;
    apply_settings(&mut settings, &options.settings)?;
    let db = Database::open_settings(&options.db, settings).map_err(|e| e.to_string())?;
    let mut conn = db.connect();
    let none = Params::new();
    let execute = |conn: &mut plexus::Connection, query: &str, params: &Params| {
        conn.execute(query, params)
            .map_err(|e| format!("{query}: {e}"))
    };
    execute(
        &mut conn,
        "CREATE NODE TABLE P(id INT64, x INT64, y INT64, z INT64, w DOUBLE, s STRING, \
         k INT64, PRIMARY KEY (id))",
        &none,
    )?;
    execute(
        &mut conn,
        "CREATE NODE TABLE Q(id INT64, k INT64, g INT64, PRIMARY KEY (id))",
        &none,
    )?;
    let started = Instant::now();
    execute(&mut conn, "COPY P FROM 'p.parquet'", &none)?;
    execute(&mut conn, "COPY Q FROM 'q.parquet'", &none)?;
    let load_seconds = started.elapsed().as_secs_f64();
    let count = execute(&mut conn, "MATCH (p:P) RETURN count(*)", &none)?;
    let p_rows = match count.rows.first().and_then(|r| r.first()) {
        Some(CypherValue::Int(n)) => *n,
        other => return Err(format!("count(*) of :P returned {other:?}")),
    };
    eprintln!("scan child: loaded {p_rows} :P rows in {load_seconds:.1} s");
    println!("{{\"load_seconds\": {load_seconds:?}, \"p_rows\": {p_rows}}}");

    let params = Params::from([("c".to_string(), CypherValue::Int(GROUPBY_C))]);
    for query in queries {
        match time_query(&mut conn, query, &params, options) {
            Ok(line) => println!("{line}"),
            Err(error) => println!(
                "{{\"query\": {}, \"error\": {}}}",
                json::quote(query.name),
                json::quote(&error)
            ),
        }
    }
    drop(conn);
    db.close().map_err(|e| e.to_string())
}

/// The query's JSON line: median of the measured runs, the last run's rows, and for the
/// hash join whether EXPLAIN shows a HashJoin.
fn time_query(
    conn: &mut plexus::Connection,
    query: &ScanQuery,
    params: &Params,
    options: &ChildOptions,
) -> Result<String, String> {
    let mut samples_ms = Vec::with_capacity(options.repeats);
    let mut last = None;
    let mut cpu_started_ms = f64::NAN;
    for run in 0..options.warmup + options.repeats.max(1) {
        if run == options.warmup {
            cpu_started_ms = process_cpu_ms();
        }
        let started = Instant::now();
        let result = conn
            .execute(query.cypher, params)
            .map_err(|e| e.to_string())?;
        if run >= options.warmup {
            samples_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        last = Some(result);
    }
    let cpu_ms = (process_cpu_ms() - cpu_started_ms) / samples_ms.len() as f64;
    samples_ms.sort_by(f64::total_cmp);
    let median_ms = samples_ms[samples_ms.len() / 2];
    eprintln!(
        "scan child: {} {median_ms:.1} ms (cpu {cpu_ms:.1} ms)",
        query.name
    );
    let rows: Vec<String> = last
        .map(|r| r.rows)
        .unwrap_or_default()
        .iter()
        .map(|row| {
            format!(
                "[{}]",
                row.iter().map(json_value).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let mut line = format!(
        "{{\"query\": {}, \"median_ms\": {median_ms:?}, \"cpu_ms\": {}",
        json::quote(query.name),
        match cpu_ms.is_finite() {
            true => format!("{cpu_ms:?}"),
            false => "null".into(),
        }
    );
    if query.name == "hash_join" {
        let explain = conn
            .execute(&format!("EXPLAIN {}", query.cypher), params)
            .map_err(|e| format!("EXPLAIN: {e}"))?;
        let plan = explain.plan.unwrap_or_default();
        eprintln!("scan child: EXPLAIN {}\n{plan}", query.cypher);
        let verdict = if plan.contains("HashJoin") {
            "HashJoin"
        } else {
            "no HashJoin"
        };
        line += &format!(", \"plan\": {}", json::quote(verdict));
    }
    line += &format!(", \"rows\": [{}]}}", rows.join(", "));
    Ok(line)
}

fn json_value(value: &CypherValue) -> String {
    match value {
        CypherValue::Null => "null".into(),
        CypherValue::Bool(b) => b.to_string(),
        CypherValue::Int(i) => i.to_string(),
        CypherValue::Float(x) if x.is_finite() => format!("{x:?}"),
        CypherValue::Float(_) => "null".into(),
        CypherValue::String(s) => json::quote(s),
        other => json::quote(&format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[Cell]) -> Vec<Cell> {
        cells.to_vec()
    }

    #[test]
    fn answers_compare_as_the_check_promises() {
        let a = vec![
            row(&[Cell::Number(2.0), Cell::Number(0.1 + 0.2)]),
            row(&[Cell::Number(1.0), Cell::Text("ab".into())]),
        ];
        let b = vec![
            row(&[Cell::Number(1.0), Cell::Text("ab".into())]),
            row(&[Cell::Number(2.0), Cell::Number(0.3)]),
        ];
        assert!(
            same_rows(&a, &b, false).is_ok(),
            "unordered, floats within tolerance"
        );
        assert!(
            same_rows(&a, &b, true).is_err(),
            "ordered: the order counts"
        );
        assert!(same_rows(&a, &b[..1], false).is_err(), "row counts differ");
        let c = vec![b[0].clone(), row(&[Cell::Number(2.0), Cell::Number(0.31)])];
        assert!(
            same_rows(&a, &c, false).is_err(),
            "a float out of tolerance"
        );
        assert_ne!(hash(0, 1), hash(1, 0));
        assert_eq!(hash(7, 3), hash(7, 3));
    }
}
