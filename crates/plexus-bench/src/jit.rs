//! `plexus-bench jit`: an expression-heavy filtered scan, a two-hop expand and the SNB IC
//! reads under each `jit` mode (issue 22).
//!
//! WHAT
//! ====
//! Loads `--rows` generated `:P` nodes (integer `x`, `y`, float `w`, string `s`) into an
//! in-memory database and times two filtered scans:
//!
//! ```text
//! scan:    MATCH (p:P) WHERE p.x * 3 + p.y > $c AND p.y % 7 = 1 AND p.w * 2.0 < 400.0
//!            AND p.x - p.y <> 17 AND p.x <> <tag> RETURN count(*)
//! grouped: MATCH (p:P) WHERE p.x * 3 + p.y > $c AND p.y % 7 = 1 AND p.x <> <tag>
//!            WITH p.y % 16 AS g, count(*) AS c, sum(p.x * 2 + p.y) AS s, min(p.w) AS lo,
//!            max(p.x) AS hi, avg(p.w) AS a RETURN sum(<a checksum of every group's values>)
//! strings: MATCH (p:P) WHERE p.s STARTS WITH $prefix AND p.s <> '<tag>' RETURN count(*)
//! ```
//!
//! `scan` and `grouped` end in an Aggregate right above their filters: under `on` and
//! `adaptive` it runs in the filters' compiled loop (a compiled pipeline, grouped by a small
//! integer key in `grouped`); the checksum makes every group's count, sums, minimum, maximum
//! and average part of the check between modes.
//!
//! — several arithmetic and comparison terms per row, about one row in twelve kept; a
//! prefix and a string inequality, about one row in nine kept; the planner makes each a
//! chain of one Filter per conjunct, which compiled code runs as one fused loop
//! (`plexus-exec` exec/filter.rs) — under `jit = off` (the
//! interpreter: the baseline, measured in the same run), `on` and `adaptive`. `<tag>` is a
//! distinct constant per mode (it never matches), so each mode starts with a cold code cache:
//! its first run is the `cold` figure (compiling included, in the background for adaptive),
//! the median of the `--runs` runs after it the `warm` figure. `compile_ms` is the compile
//! time PROFILE reports for the code.
//!
//! Output: JSON lines `jit_<scan|grouped|strings>_<mode>_<cold|warm>_ms` with `baseline` = the
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
//! TWO HOPS
//! ========
//! Then `--hop-nodes` `:H` nodes (`id` indexed, `a`, `b`), each with two `:E`
//! relationships, and a two-hop count with filters on every hop, under each mode as above:
//!
//! ```text
//! two_hop: MATCH (x:H)-[:E]->(y:H)-[:E]->(z:H) WHERE x.a < 50 AND x.id <> <tag>
//!            AND y.b % 7 = 3 AND z.a + z.b > $h RETURN count(*)
//! ```
//!
//! SHORT QUERIES
//! =============
//! Last, the SNB mini IC1–14 (`--snb`, loaded as `plexus-bench cypher` does, with the same
//! parameter choice) under each mode: `jit_snb_ic<n>_<mode>_cold_ms` is the median of
//! `--snb-runs` runs each made right after a schema change (a new property key: the code
//! cache's key holds the schema version, so no code compiled before is used — a cold cache
//! for every query), `…_warm_ms` the median of as many runs after them. The modes take
//! turns, round by round (a schema change before each mode's cold round), so a drift over the
//! run weighs on all three alike. The adaptive figures
//! carry `vs_best` = adaptive / the better of `off` and `on` in the same phase (issue 22:
//! at most 1.1), and `jit_snb_adaptive_worst_vs_best_<cold|warm>` is the largest over the
//! queries. Each mode's row counts are checked against the interpreter's.
//!
//! NOT YET
//! =======
//! Aggregation, expands and projections inside the compiled loop (only filters and chains of
//! filters compile).

use crate::report::Figure;
use plexus::{Config, Connection, CypherValue, Database, Params, Settings};
use plexus_tck::ldbc_queries::{Query, queries};
use std::path::PathBuf;
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
    /// `:H` nodes of the two-hop query (two `:E` relationships out of each).
    #[arg(long, default_value_t = 200_000)]
    hop_nodes: i64,
    /// The SNB mini `cypher` directory whose IC1–14 are timed under each mode; `none` skips
    /// them.
    #[arg(long, default_value = "../shared/data/ldbc-snb-mini/cypher")]
    snb: PathBuf,
    /// Cold and warm runs per mode of each SNB query (the medians are reported).
    #[arg(long, default_value_t = 11)]
    snb_runs: usize,
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
        "grouped" => format!(
            "MATCH (p:P) WHERE p.x * 3 + p.y > $c AND p.y % 7 = 1 AND p.x <> {tag} \
             WITH p.y % 16 AS g, count(*) AS c, sum(p.x * 2 + p.y) AS s, min(p.w) AS lo, \
             max(p.x) AS hi, avg(p.w) AS a \
             RETURN sum(c + s + hi + toInteger(lo * 1000.0) + toInteger(a * 1000.0))"
        ),
        "two_hop" => format!(
            "MATCH (x:H)-[:E]->(y:H)-[:E]->(z:H) WHERE x.a < 50 AND x.id <> {tag} \
             AND y.b % 7 = 3 AND z.a + z.b > $h RETURN count(*)"
        ),
        _ => format!(
            "MATCH (p:P) WHERE p.s STARTS WITH $prefix AND p.s <> 'tag{tag}' RETURN count(*)"
        ),
    }
}

/// `n` `:H` nodes (`id` indexed, `a`, `b`), each with `:E` relationships to two others.
fn load_hops(conn: &mut Connection, n: i64) -> Result<(), String> {
    let none = Params::new();
    eprintln!("jit: loading {n} :H nodes, {} :E relationships", 2 * n);
    execute(conn, "CREATE INDEX h_id FOR (h:H) ON (h.id)", &none)?;
    for step in ["nodes", "relationships"] {
        let mut from = 0;
        while from < n {
            let to = (from + LOAD_CHUNK_ROWS).min(n) - 1;
            let text = match step {
                "nodes" => format!(
                    "UNWIND range({from}, {to}) AS i \
                     CREATE (:H {{id: i, a: i % 100, b: (i * 31) % 1000}})"
                ),
                _ => format!(
                    "UNWIND range({from}, {to}) AS i MATCH (x:H {{id: i}}), \
                     (y:H {{id: (i * 7919 + 1) % {n}}}), (z:H {{id: (i + 1) % {n}}}) \
                     CREATE (x)-[:E]->(y), (x)-[:E]->(z)"
                ),
            };
            execute(conn, &text, &none)?;
            from = to + 1;
        }
    }
    Ok(())
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
    for name in ["scan", "grouped", "strings"] {
        time_query(&mut conn, name, &params, options.rows, options)?;
    }
    load_hops(&mut conn, options.hop_nodes)?;
    params.insert("h".into(), CypherValue::Int(500));
    time_query(&mut conn, "two_hop", &params, options.hop_nodes, options)?;
    if options.snb.as_os_str() != "none" {
        time_snb(options)?;
    }
    Ok(())
}

/// The jit modes, the interpreter first (the baseline).
const MODES: [&str; 3] = ["off", "on", "adaptive"];

/// IC1–14 of the SNB mini data set under each mode (see SHORT QUERIES in the module docs).
fn time_snb(options: &Options) -> Result<(), String> {
    let dir = &options.snb;
    let db = Database::open_in_memory(Config::default()).map_err(|e| e.to_string())?;
    plexus_tck::ldbc::load(
        &db,
        &dir.join("headers.txt"),
        &dir.join("test-data/vanilla"),
    )?;
    let mut conn = db.connect();
    let none = Params::new();
    let number = |q: &Query| {
        q.name
            .rsplit('-')
            .next()
            .and_then(|n| n.parse::<u32>().ok())
    };
    let mut reads: Vec<Query> = (queries(dir)?.into_iter())
        .filter(|q| q.name.contains("complex"))
        .collect();
    reads.sort_by_key(number);
    let params = (reads.iter())
        .map(|q| crate::cypher::parameters_with_rows(&mut conn, dir, q))
        .collect::<Result<Vec<_>, _>>()?;
    let run = |conn: &mut Connection, q: usize| -> Result<(f64, usize), String> {
        let started = Instant::now();
        let rows = execute(conn, &reads[q].text, &params[q])?.rows.len();
        Ok((started.elapsed().as_secs_f64() * 1e3, rows))
    };
    // [query][mode] = (cold ms, warm ms, rows)
    let mut times = vec![[(0.0, 0.0, 0); 3]; reads.len()];
    let runs = options.snb_runs.max(1);
    let mut cold_keys = 0;
    // Samples per mode and query; the modes take turns round by round, so a drift over the
    // run (the heap, the caches, the catalog growing by a key per cold round) weighs on
    // every mode alike.
    let mut cold = vec![vec![Vec::with_capacity(runs); reads.len()]; MODES.len()];
    let mut warm = vec![vec![Vec::with_capacity(runs); reads.len()]; MODES.len()];
    let mut rows = vec![vec![0; reads.len()]; MODES.len()];
    for _ in 0..runs {
        for (m, mode) in MODES.iter().enumerate() {
            execute(&mut conn, &format!("SET SESSION jit = {mode}"), &none)?;
            // A schema change: code compiled before it is never used after it (the cache
            // key holds the schema version), so the next run of each query starts cold. (A
            // new property key on a node made and deleted: no table or label the queries
            // read grows. Tables cannot be dropped yet, and each would be one more for the
            // later rounds' plans.)
            cold_keys += 1;
            let key = format!("CREATE (:JitCold {{cold_{cold_keys}: 1}})");
            execute(&mut conn, &key, &none)?;
            execute(&mut conn, "MATCH (n:JitCold) DELETE n", &none)?;
            for q in 0..reads.len() {
                let (ms, n) = run(&mut conn, q)?;
                cold[m][q].push(ms);
                rows[m][q] = n;
            }
        }
    }
    for _ in 0..runs {
        for (m, mode) in MODES.iter().enumerate() {
            execute(&mut conn, &format!("SET SESSION jit = {mode}"), &none)?;
            for (q, samples) in warm[m].iter_mut().enumerate() {
                samples.push(run(&mut conn, q)?.0);
            }
        }
    }
    for (m, mode) in MODES.iter().enumerate() {
        for (q, query) in reads.iter().enumerate() {
            if rows[m][q] != rows[0][q] {
                return Err(format!(
                    "{} under jit = {mode}: {} rows, the interpreter {}",
                    query.name, rows[m][q], rows[0][q]
                ));
            }
            let (c, w) = (cold[m][q].clone(), warm[m][q].clone());
            times[q][m] = (median(c), median(w), rows[m][q]);
        }
    }
    let mut worst = [0.0f64; 2];
    for (query, modes) in reads.iter().zip(&times) {
        let short = query.name.replace("interactive-complex-", "ic");
        let baseline = modes[0].1;
        for (m, mode) in MODES.iter().enumerate() {
            for (phase, p) in [("cold", 0), ("warm", 1)] {
                let ms = if p == 0 { modes[m].0 } else { modes[m].1 };
                let name = format!("jit_snb_{short}_{mode}_{phase}_ms");
                let mut figure = Figure::new(&name, ms, "ms")
                    .baseline(baseline)
                    .with("rows", modes[m].2 as f64);
                if *mode == "adaptive" {
                    // Against the better of the other two modes in the same phase.
                    let phase_ms = |m: usize| if p == 0 { modes[m].0 } else { modes[m].1 };
                    let vs_best = ms / phase_ms(0).min(phase_ms(1));
                    worst[p] = worst[p].max(vs_best);
                    figure = figure.with("vs_best", vs_best);
                }
                figure.print();
            }
        }
    }
    for (phase, p) in [("cold", 0), ("warm", 1)] {
        Figure::new(
            &format!("jit_snb_adaptive_worst_vs_best_{phase}"),
            worst[p],
            "ratio",
        )
        .print();
    }
    Ok(())
}

/// `query(name, …)` over `rows` nodes under each mode (see the module docs).
fn time_query(
    conn: &mut Connection,
    name: &str,
    params: &Params,
    rows: i64,
    options: &Options,
) -> Result<(), String> {
    let none = Params::new();
    let runs = options.runs.max(1);
    let mut interpreter = None;
    let mut expected = None;
    for (tag, mode) in [-1, -2, -3].into_iter().zip(MODES) {
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
                .with("rows", rows as f64)
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
