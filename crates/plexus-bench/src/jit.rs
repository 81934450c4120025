//! `plexus-bench jit`: an expression-heavy filtered scan under each `jit` mode (issue 22).
//!
//! WHAT
//! ====
//! Loads `--rows` generated `:P` nodes (integer `x`, `y`, float `w`, string `s`) into an
//! in-memory database and times two filtered scans:
//!
//! ```text
//! scan:    MATCH (p:P) WHERE p.x * 3 + p.y > $c AND p.y % 7 = 1 AND p.w * 2.0 < 400.0
//!            AND p.x - p.y <> 17 AND p.x <> <tag> RETURN count(*)
//! strings: MATCH (p:P) WHERE p.s STARTS WITH $prefix AND p.s <> '<tag>' RETURN count(*)
//! ```
//!
//! — several arithmetic and comparison terms per row, about one row in twelve kept; a
//! prefix and a string inequality, about one row in nine kept — under `jit = off` (the
//! interpreter: the baseline, measured in the same run), `on` and `adaptive`. `<tag>` is a
//! distinct constant per mode (it never matches), so each mode starts with a cold code cache:
//! its first run is the `cold` figure (compiling included, in the background for adaptive),
//! the median of the `--runs` runs after it the `warm` figure. `compile_ms` is the compile
//! time PROFILE reports for the code.
//!
//! Output: JSON lines `jit_<scan|strings>_<mode>_<cold|warm>_ms` with `baseline` = the
//! interpreter's warm median and `ratio` = value / baseline (below 1: faster than the
//! interpreter), and `jit_<query>_compile_ms`. Every run's count is checked against the
//! interpreter's.
//!
//! The properties are undeclared (the nodes are made by `CREATE`): storage reads them as
//! typed vectors by their values (`plexus-storage` rows/typed.rs, UNDECLARED). `--set
//! NAME=VALUE` passes a database setting: with the default 1 GiB row cache, 10 M rows spill
//! and both modes spend most of a run decoding spill pages, which `--set
//! row_cache_bytes=unbounded` leaves out.
//!
//! NOT YET
//! =======
//! The issue's other queries (a two-hop expand with filters on both hops, the SNB mini IC
//! queries) and aggregation inside the compiled loop.

use crate::report::Figure;
use plexus::{Config, Connection, CypherValue, Database, Params, Settings};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Options {
    /// Generated `:P` nodes (10,000,000 for the issue's figure).
    #[arg(long, default_value_t = 1_000_000)]
    rows: i64,
    /// Timed runs per mode after the cold one (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// A database setting, `NAME=VALUE` (repeatable), e.g. `row_cache_bytes=unbounded` (the
    /// default keeps 1 GiB of row chunks in memory: 10 M rows spill, and every run then
    /// decodes pages in both modes); printed on every figure as `settings`.
    #[arg(long = "set")]
    settings: Vec<String>,
}

/// Nodes created per statement while loading.
const LOAD_CHUNK_ROWS: i64 = 100_000;

fn execute(
    conn: &mut Connection,
    query: &str,
    params: &Params,
) -> Result<plexus::QueryResult, String> {
    conn.execute(query, params)
        .map_err(|e| format!("{query}: {e}"))
}

fn query(name: &str, tag: i64) -> String {
    match name {
        "scan" => format!(
            "MATCH (p:P) WHERE p.x * 3 + p.y > $c AND p.y % 7 = 1 AND p.w * 2.0 < 400.0 \
             AND p.x - p.y <> 17 AND p.x <> {tag} RETURN count(*)"
        ),
        _ => format!(
            "MATCH (p:P) WHERE p.s STARTS WITH $prefix AND p.s <> 'tag{tag}' RETURN count(*)"
        ),
    }
}

/// One timed run: milliseconds and the count.
fn timed(conn: &mut Connection, text: &str, params: &Params) -> Result<(f64, i64), String> {
    let started = Instant::now();
    let result = execute(conn, text, params)?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    match result.rows.first().and_then(|r| r.first()) {
        Some(CypherValue::Int(n)) => Ok((ms, *n)),
        other => Err(format!("not a count: {other:?}")),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

pub fn run(options: &Options) -> Result<(), String> {
    let mut settings = Settings::from_config(Config::default());
    crate::scan::apply_settings(&mut settings, &options.settings)?;
    let db = Database::open_in_memory_settings(settings).map_err(|e| e.to_string())?;
    let mut conn = db.connect();
    let none = Params::new();
    eprintln!("jit: loading {} rows", options.rows);
    let mut from = 0;
    while from < options.rows {
        let to = (from + LOAD_CHUNK_ROWS).min(options.rows) - 1;
        execute(
            &mut conn,
            &format!(
                "UNWIND range({from}, {to}) AS i \
                 CREATE (:P {{x: i, y: (i * 7919) % 1000, w: toFloat(i % 977) / 3.0, \
                 s: 'key-' + toString((i * 7919) % 1000)}})"
            ),
            &none,
        )?;
        from = to + 1;
    }
    let mut params = Params::new();
    params.insert("c".into(), CypherValue::Int(options.rows / 4));
    // 'key-7' starts 'key-7', 'key-70'…'key-79', 'key-700'…: 111 of the 1,000 values.
    params.insert("prefix".into(), CypherValue::from("key-7"));
    for name in ["scan", "strings"] {
        time_query(&mut conn, name, &params, options)?;
    }
    Ok(())
}

/// `query(name, …)` under each mode (see the module docs).
fn time_query(
    conn: &mut Connection,
    name: &str,
    params: &Params,
    options: &Options,
) -> Result<(), String> {
    let none = Params::new();
    let runs = options.runs.max(1);
    let mut interpreter = None;
    let mut expected = None;
    for (tag, mode) in [(-1, "off"), (-2, "on"), (-3, "adaptive")] {
        execute(conn, &format!("SET SESSION jit = {mode}"), &none)?;
        let text = query(name, tag);
        let (cold, count) = timed(conn, &text, params)?;
        let mut warm = Vec::with_capacity(runs);
        for _ in 0..runs {
            let (ms, n) = timed(conn, &text, params)?;
            if n != count {
                return Err(format!("jit = {mode}: count {n}, then {count}"));
            }
            warm.push(ms);
        }
        if *expected.get_or_insert(count) != count {
            return Err(format!(
                "jit = {mode} counts {count}, the interpreter {expected:?}"
            ));
        }
        let warm = median(warm);
        let baseline = *interpreter.get_or_insert(warm);
        for (phase, ms) in [("cold", cold), ("warm", warm)] {
            let figure = format!("jit_{name}_{mode}_{phase}_ms");
            let mut figure = Figure::new(&figure, ms, "ms")
                .baseline(baseline)
                .with("rows", options.rows as f64)
                .with("matched", count as f64);
            if !options.settings.is_empty() {
                figure = figure.with_label("settings", &options.settings.join(" "));
            }
            figure.print();
        }
        if mode == "on" {
            let compile = compile_ms(conn, &text, params)?;
            Figure::new(&format!("jit_{name}_compile_ms"), compile, "ms").print();
        }
    }
    Ok(())
}

/// The compile time PROFILE reports for the filter of `text`.
fn compile_ms(conn: &mut Connection, text: &str, params: &Params) -> Result<f64, String> {
    let result = execute(conn, &format!("PROFILE {text}"), params)?;
    let plan = result.plan.unwrap_or_default();
    plan.split("compile=")
        .nth(1)
        .and_then(|rest| rest.split("ms").next())
        .and_then(|ms| ms.parse().ok())
        .ok_or_else(|| format!("no compile time in PROFILE:\n{plan}"))
}
