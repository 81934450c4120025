//! Disk-tier figures (part of `storage`): inserts with flushes and merges running, scans over
//! CSR runs, write amplification per merge policy, and peak memory of a budgeted load.
//!
//! Per policy (`leveling`, `tiering`, `elastic`), on a database with a memtable budget of
//! `--lsm-budget-mb` (default 64 MiB) and background maintenance:
//! - `lsm_insert_random` / `lsm_insert_sequential`: edges/s inserting the RMAT edges in
//!   generation order / sorted by source, 10,000 edges per transaction, until the last commit;
//! - `lsm_edge_scan`: after a final flush, edges/s scanning every out-adjacency, against the
//!   static CSR of the same edges (baseline measured in this run);
//! - `lsm_write_amplification`: bytes written to runs (flushes + merges) over the bytes of the
//!   entries inserted (8 bytes per entry, one entry per edge and direction);
//! - `lsm_flush_run_bytes`: average size of the level-1 runs flushes wrote (one per frozen
//!   memtable, direction and vertex range) — small flushes multiply merges;
//! - `lsm_run_bytes_per_entry`: bytes of the current run files after the final flush over the
//!   entries inserted (one per edge and direction).
//!
//! Bytes are file bytes as written, so they follow `--lsm-run-packing` (neighbours
//! delta/bit-packed when it pays, by default; `never` gives the raw layout to compare with).
//!
//! `lsm_peak_rss_bytes`: peak resident memory (VmHWM) of a child process that loads the graph
//! with the budget, against a child that loads it with no effective budget (all memtables).

use super::{Options, create_vertices, edges_per_s, fresh_dir, plexus_scan};
use crate::report::Figure;
use plexus::{Config, Database, DurabilityMode, Error, MergePolicy};
use std::time::Instant;

const TXN_EDGES: usize = 10_000;
const POLICIES: [(&str, MergePolicy); 3] = [
    ("leveling", MergePolicy::Leveling),
    ("tiering", MergePolicy::Tiering),
    ("elastic", MergePolicy::Elastic),
];

fn config(options: &Options, policy: MergePolicy, budget: u64) -> Config {
    Config {
        durability: DurabilityMode::Periodic,
        checkpoint_wal_bytes: 0,
        memtable_budget_bytes: budget,
        merge_policy: policy,
        run_packing: options.lsm_run_packing,
        ..Config::default()
    }
}

/// Inserts `edges` into a fresh database; returns it with the edges/s up to the last commit.
fn load(
    options: &Options,
    tag: &str,
    config: Config,
    n: usize,
    edges: &[(u32, u32)],
) -> Result<(Database, f64), Error> {
    let db = Database::open(fresh_dir(options, tag), config)?;
    let ids = create_vertices(&db, n)?;
    let started = Instant::now();
    for batch in edges.chunks(TXN_EDGES) {
        let mut tx = db.begin();
        for &(s, d) in batch {
            tx.create_edge(ids[s as usize], "E", ids[d as usize], &[])?;
        }
        tx.commit()?;
    }
    Ok((db, edges.len() as f64 / started.elapsed().as_secs_f64()))
}

pub fn run(
    options: &Options,
    n: usize,
    edges: &[(u32, u32)],
    csr_rate: f64,
    csr_sum: u64,
) -> Result<(), Error> {
    let s = f64::from(options.scale);
    let mut sorted = edges.to_vec();
    sorted.sort_unstable();
    for (name, policy) in POLICIES {
        let budget = options.lsm_budget_bytes;
        let total = edges.len();
        eprintln!(
            "disk tier, {name}: inserting {total} edges with a {} MiB memtable budget",
            budget >> 20
        );
        let (db, rate) = load(options, name, config(options, policy, budget), n, edges)?;
        Figure::new("lsm_insert_random", rate, "edges/s")
            .with("scale", s)
            .with_label("policy", name)
            .print();
        db.flush()?;
        let snap = db.snapshot();
        let (scan_rate, sum) = edges_per_s(options.seconds / 2.0, || plexus_scan(&snap))?;
        assert_eq!(
            sum, csr_sum,
            "the runs hold the same edges as the static CSR"
        );
        Figure::new("lsm_edge_scan", scan_rate, "edges/s")
            .baseline(csr_rate)
            .with("scale", s)
            .with_label("policy", name)
            .print();
        drop(snap);
        let stats = db.storage_stats();
        let inserted = (edges.len() * 2 * 8) as f64;
        let written = (stats.flushed_bytes + stats.merged_bytes) as f64;
        Figure::new(
            "lsm_write_amplification",
            written / inserted,
            "bytes written/bytes inserted",
        )
        .with("scale", s)
        .with_label("policy", name)
        .print();
        Figure::new(
            "lsm_flush_run_bytes",
            stats.flushed_bytes as f64 / stats.flushed_runs.max(1) as f64,
            "bytes/run",
        )
        .with("flushed_runs", stats.flushed_runs as f64)
        .with("scale", s)
        .with_label("policy", name)
        .print();
        Figure::new(
            "lsm_run_bytes_per_entry",
            stats.run_bytes as f64 / (edges.len() * 2) as f64,
            "bytes/entry",
        )
        .with("scale", s)
        .with_label("policy", name)
        .with_label("packing", &format!("{:?}", options.lsm_run_packing))
        .print();
        drop(db);
        let _ = std::fs::remove_dir_all(fresh_dir(options, name));
        let (db, rate) = load(options, name, config(options, policy, budget), n, &sorted)?;
        Figure::new("lsm_insert_sequential", rate, "edges/s")
            .with("scale", s)
            .with_label("policy", name)
            .print();
        drop(db);
        let _ = std::fs::remove_dir_all(fresh_dir(options, name));
    }
    peak_rss(options, s)
}

/// Runs `plexus-bench lsm-load` in child processes with and without the budget.
fn peak_rss(options: &Options, s: f64) -> Result<(), Error> {
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let measure = |budget: u64| -> Result<f64, Error> {
        eprintln!("disk tier: peak RSS of a load with a budget of {budget} bytes (child process)");
        let output = std::process::Command::new(&exe)
            .args([
                "lsm-load",
                "--scale",
                &options.scale.to_string(),
                "--budget-bytes",
                &budget.to_string(),
            ])
            .arg("--dir")
            .arg(&options.dir)
            .output()
            .map_err(|e| Error::io("plexus-bench lsm-load", e))?;
        String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .map_err(|_| {
                Error::InvalidArgument(format!(
                    "lsm-load printed no figure: {}",
                    String::from_utf8_lossy(&output.stderr)
                ))
            })
    };
    let budgeted = measure(options.lsm_budget_bytes)?;
    let unbounded = measure(u64::MAX)?;
    Figure::new("lsm_peak_rss_bytes", budgeted, "bytes")
        .baseline(unbounded)
        .with("budget_bytes", options.lsm_budget_bytes as f64)
        .with("scale", s)
        .print();
    Ok(())
}

/// The child side of `lsm_peak_rss_bytes`: loads the graph and prints VmHWM in bytes.
pub fn load_and_report_peak(options: &Options, budget: u64) -> Result<(), Error> {
    let n = 1usize << options.scale;
    let edges = crate::rmat::edges(options.scale, 42);
    let (db, _) = load(
        options,
        "rss",
        config(options, MergePolicy::Elastic, budget),
        n,
        &edges,
    )?;
    db.flush()?;
    drop(edges);
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| Error::io("/proc/self/status", e))?;
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::InvalidArgument("no VmHWM in /proc/self/status".into()))?;
    drop(db);
    let _ = std::fs::remove_dir_all(fresh_dir(options, "rss"));
    println!("{}", kib * 1024.0);
    Ok(())
}
