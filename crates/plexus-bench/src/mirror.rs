//! `plexus-bench mirror`: the PostgreSQL mirror's freshness and its cost to the source.
//!
//! SETUP
//! =====
//! A throwaway PostgreSQL 15 cluster (`plexus_mirror::cluster`, with `fsync = on` and
//! `synchronous_commit = on`, so a source commit costs what it costs in production) holds
//! `account(id, owner)` (10,000 rows) and `transfer(id, src, dst, amount, at)` (`--snapshot-rows`
//! rows), mapped to `(:Account)-[:TRANSFER]->(:Account)`. PostgreSQL and Plexus share the
//! machine's cores.
//!
//! FIGURES (one JSON line each)
//! =======
//!   snapshot_copy_rows_per_s   the mirror's start on an empty database: slot, exported
//!                              snapshot, COPY of both tables, one bulk load (rows/s).
//!   source_txn_per_s           open loop: `--clients` connections insert one transfer per
//!                              transaction on a fixed schedule totalling `--rate` per second
//!                              for `--seconds`; the rate achieved (a client behind schedule
//!                              sends at once; PostgreSQL is the limit when it is lower).
//!   freshness_p50_ms / _p99_ms the mirror's freshness over that run (source commit → visible
//!                              in the graph, per source transaction; the mirror's window of
//!                              the last 10,000 transactions or 60 s).
//!   source_throughput_ratio    closed loop: `--clients` connections insert as fast as they
//!                              can, alternately without the mirror and with it (caught up
//!                              before each timed phase), `--phases` pairs of `--phase-seconds`;
//!                              `value` is transactions/s with the mirror, `baseline` without.
//!
//! Targets (issue 20): at 5,000 source transactions/s, freshness p50 ≤ 5 ms and p99 ≤ 20 ms;
//! throughput ratio ≥ 0.9.

use crate::report::Figure;
use plexus::{Config, Database};
use plexus_mirror::cluster::{ClusterOptions, ThrowawayCluster};
use plexus_mirror::{MirrorHandle, MirrorOptions, MirrorStatus, MirrorThread};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const ACCOUNTS: i64 = 10_000;
/// Longest wait for the mirror to catch up with the source.
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(120);

const MAPPING: &str = "CREATE PROPERTY GRAPH bank
  VERTEX TABLES (account LABEL Account PROPERTIES (id, owner))
  EDGE TABLES (
    transfer
      SOURCE KEY (src) REFERENCES account (id)
      DESTINATION KEY (dst) REFERENCES account (id)
      LABEL TRANSFER PROPERTIES (id, amount, at AS atMillis EPOCH_MILLIS)
  )";

#[derive(clap::Args)]
pub struct Options {
    /// Open-loop source transactions per second.
    #[arg(long, default_value_t = 5000)]
    rate: u32,
    /// Seconds of the open-loop run.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Source client connections (open and closed loop).
    #[arg(long, default_value_t = 16)]
    clients: u32,
    /// Transfers in PostgreSQL before the mirror starts (the initial copy).
    #[arg(long, default_value_t = 500_000)]
    snapshot_rows: u64,
    /// Closed-loop phase pairs (without, with the mirror).
    #[arg(long, default_value_t = 2)]
    phases: u32,
    /// Seconds of each closed-loop phase.
    #[arg(long, default_value_t = 5.0)]
    phase_seconds: f64,
    /// Directory for the database (default: the system temp dir).
    #[arg(long)]
    dir: Option<PathBuf>,
}

pub fn run(options: &Options) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let cluster = ThrowawayCluster::start(ClusterOptions {
        settings: vec![
            ("fsync".into(), "on".into()),
            ("synchronous_commit".into(), "on".into()),
            ("max_connections".into(), "200".into()),
        ],
        ..ClusterOptions::default()
    })
    .map_err(|e| format!("PostgreSQL: {e}"))?;
    eprintln!("mirror: PostgreSQL on port {}", cluster.port());
    cluster
        .psql(&format!(
            "CREATE TABLE account (id bigint PRIMARY KEY, owner text NOT NULL);
             CREATE TABLE transfer (id bigserial PRIMARY KEY,
               src bigint NOT NULL REFERENCES account, dst bigint NOT NULL REFERENCES account,
               amount numeric(12,2) NOT NULL, at timestamptz NOT NULL DEFAULT now());
             INSERT INTO account SELECT g, 'owner ' || g FROM generate_series(1, {ACCOUNTS}) g;
             INSERT INTO transfer (src, dst, amount)
               SELECT 1 + (g * 7919) % {ACCOUNTS}, 1 + (g * 104729) % {ACCOUNTS}, (g % 1000) / 10.0
               FROM generate_series(1::bigint, {}) g;",
            options.snapshot_rows
        ))
        .map_err(|e| format!("schema: {e}"))?;
    let dir = options
        .dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("plexus-bench-mirror-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = Arc::new(Database::open(&dir, Config::default()).map_err(|e| e.to_string())?);
    let result = measure(&runtime, &cluster, &db, &dir, options);
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure(
    runtime: &tokio::runtime::Runtime,
    cluster: &ThrowawayCluster,
    db: &Arc<Database>,
    dir: &Path,
    options: &Options,
) -> Result<(), String> {
    let conninfo = cluster.conninfo();
    let mapping = runtime
        .block_on(plexus_mirror::load_mapping(&conninfo, MAPPING, "bank.sql"))
        .map_err(|e| e.to_string())?;
    let mirror_options = MirrorOptions::new(&conninfo, mapping).pending_file_in(dir);

    // the initial copy
    let started = Instant::now();
    let mirror = start_mirror(db, &mirror_options)?;
    let seconds = started.elapsed().as_secs_f64();
    let rows = ACCOUNTS as f64 + options.snapshot_rows as f64;
    Figure::new("snapshot_copy_rows_per_s", rows / seconds, "rows/s")
        .with("rows", rows)
        .with("seconds", seconds)
        .print();

    // open loop at a fixed rate
    eprintln!(
        "mirror: open loop, {} transactions/s from {} clients for {} s",
        options.rate, options.clients, options.seconds
    );
    let committed = runtime.block_on(open_loop(&conninfo, options))?;
    let rate = committed as f64 / options.seconds;
    Figure::new("source_txn_per_s", rate, "txn/s")
        .with("target", f64::from(options.rate))
        .with("clients", f64::from(options.clients))
        .print();
    let status = runtime.block_on(catch_up(&conninfo, mirror.handle()))?;
    let freshness = |name, value: Option<f64>, target: f64| {
        Figure::new(name, value.unwrap_or(f64::NAN), "ms")
            .with("target", target)
            .with("source_txn_per_s", rate)
            .print()
    };
    freshness("freshness_p50_ms", status.freshness_p50_ms, 5.0);
    freshness("freshness_p99_ms", status.freshness_p99_ms, 20.0);
    eprintln!("mirror: {status}");

    // closed loop, alternately without and with the mirror
    let mut mirror = Some(mirror);
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for phase in 0..options.phases * 2 {
        let attached = phase % 2 == 1;
        match (attached, mirror.take()) {
            (false, Some(running)) => running.stop().map_err(|e| e.to_string())?,
            (true, None) => {
                let running = start_mirror(db, &mirror_options)?;
                runtime.block_on(catch_up(&conninfo, running.handle()))?;
                mirror = Some(running);
            }
            (_, running) => mirror = running,
        }
        let committed = runtime.block_on(closed_loop(&conninfo, options))?;
        let rate = committed as f64 / options.phase_seconds;
        eprintln!(
            "mirror: closed loop {} the mirror: {rate:.0} txn/s",
            if attached { "with" } else { "without" }
        );
        if attached { &mut with } else { &mut without }.push(rate);
    }
    if let Some(running) = mirror {
        runtime.block_on(catch_up(&conninfo, running.handle()))?;
        running.stop().map_err(|e| e.to_string())?;
    }
    let mean = |rates: &[f64]| rates.iter().sum::<f64>() / rates.len().max(1) as f64;
    Figure::new("source_throughput_ratio", mean(&with), "txn/s")
        .baseline(mean(&without))
        .with("clients", f64::from(options.clients))
        .with("phase_seconds", options.phase_seconds)
        .with("target_ratio", 0.9)
        .print();
    Ok(())
}

fn start_mirror(db: &Arc<Database>, options: &MirrorOptions) -> Result<MirrorThread, String> {
    MirrorThread::start(db.clone(), options.clone()).map_err(|e| format!("the mirror: {e}"))
}

async fn connect(conninfo: &str) -> Result<tokio_postgres::Client, String> {
    let (client, connection) = tokio_postgres::connect(conninfo, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("connecting to PostgreSQL: {e}"))?;
    tokio::spawn(connection);
    Ok(client)
}

const INSERT: &str = "INSERT INTO transfer (src, dst, amount) VALUES ($1, $2, $3::float8::numeric)";

fn transfer_args(n: u64) -> (i64, i64, f64) {
    let n = n as i64;
    (
        1 + (n * 7919) % ACCOUNTS,
        1 + (n * 104_729) % ACCOUNTS,
        (n % 1000) as f64 / 10.0,
    )
}

/// Inserts on a fixed schedule: transaction k of client c is due at
/// `start + (k · clients + c) / rate`. Returns the transactions committed.
async fn open_loop(conninfo: &str, options: &Options) -> Result<u64, String> {
    let committed = Arc::new(AtomicU64::new(0));
    let start = tokio::time::Instant::now() + Duration::from_millis(200);
    let end = start + Duration::from_secs_f64(options.seconds);
    let interval = Duration::from_secs_f64(f64::from(options.clients) / f64::from(options.rate));
    let mut tasks = Vec::new();
    for c in 0..options.clients {
        let client = connect(conninfo).await?;
        let committed = committed.clone();
        let offset = Duration::from_secs_f64(f64::from(c) / f64::from(options.rate));
        tasks.push(tokio::spawn(async move {
            let statement = client.prepare(INSERT).await.map_err(|e| e.to_string())?;
            for k in 0u32.. {
                let due = start + offset + interval * k;
                if due >= end {
                    break;
                }
                tokio::time::sleep_until(due).await;
                let (src, dst, amount) = transfer_args(u64::from(k) * 64 + u64::from(c));
                client
                    .execute(&statement, &[&src, &dst, &amount])
                    .await
                    .map_err(|e| e.to_string())?;
                committed.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(committed.load(Ordering::Relaxed))
}

/// Inserts as fast as `options.clients` connections can for `options.phase_seconds`.
async fn closed_loop(conninfo: &str, options: &Options) -> Result<u64, String> {
    let committed = Arc::new(AtomicU64::new(0));
    let end = tokio::time::Instant::now() + Duration::from_secs_f64(options.phase_seconds);
    let mut tasks = Vec::new();
    for c in 0..options.clients {
        let client = connect(conninfo).await?;
        let committed = committed.clone();
        tasks.push(tokio::spawn(async move {
            let statement = client.prepare(INSERT).await.map_err(|e| e.to_string())?;
            let mut k = 0u64;
            while tokio::time::Instant::now() < end {
                let (src, dst, amount) = transfer_args(k * 64 + u64::from(c));
                client
                    .execute(&statement, &[&src, &dst, &amount])
                    .await
                    .map_err(|e| e.to_string())?;
                committed.fetch_add(1, Ordering::Relaxed);
                k += 1;
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(committed.load(Ordering::Relaxed))
}

/// Waits until the mirror has applied everything committed before the call: the target is
/// the WAL insert position read inside one more transaction (a position read after the last
/// commit may never be reached, since other WAL can follow it).
async fn catch_up(conninfo: &str, handle: &MirrorHandle) -> Result<MirrorStatus, String> {
    let client = connect(conninfo).await?;
    let sql = |e: tokio_postgres::Error| format!("catching up: {e}");
    client.batch_execute("BEGIN").await.map_err(sql)?;
    client
        .batch_execute("UPDATE account SET owner = owner WHERE id = 1")
        .await
        .map_err(sql)?;
    let row = client
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .await
        .map_err(sql)?;
    client.batch_execute("COMMIT").await.map_err(sql)?;
    let text: String = row.get(0);
    let target: plexus_mirror::change::Lsn = text.parse()?;
    let deadline = Instant::now() + CATCH_UP_TIMEOUT;
    loop {
        let status = handle.status();
        if status.applied >= target {
            return Ok(status);
        }
        if status.state == plexus_mirror::MirrorState::Failed {
            return Err(format!("the mirror failed: {status}"));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the mirror did not catch up in {} s: {status}",
                CATCH_UP_TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
