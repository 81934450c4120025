//! Fraud detection on live data (HTGAP: hybrid transactional / graph-analytical processing).
//!
//!     cargo run --release --example fraud [-- --seconds 10 --writers 4 --accounts 50000]
//!     cargo run --release --example fraud -- --postgres postgres://user@host/db [...]
//!
//! WHAT IT DOES
//! ============
//! Several writer threads commit money transfers between accounts into one embedded database,
//! each transfer its own durable transaction. Now and then a writer commits a *ring* instead:
//! three transfers a → b → c → a in one transaction, the shape of money being laundered in a
//! circle. Meanwhile, every `--interval-ms`, the main thread
//!
//! 1. runs a Cypher query for short transfer cycles through the transfers committed since its
//!    previous look, and
//! 2. ranks accounts with PageRank (`CALL algo.pagerank`) on a snapshot of that moment,
//!
//! both on the live data, with no export step, while the writers keep committing.
//!
//! With `--postgres URL` the writers commit the transfers in PostgreSQL instead (tables
//! `plexus_demo_account` and `plexus_demo_transfer`, created afresh), and the PostgreSQL mirror
//! (slot and publication `plexus_fraud_demo`) follows them into the embedded database, where
//! the detector runs exactly as before. Each round's line then also shows the mirror's
//! freshness (PostgreSQL commit → graph commit). The server needs `wal_level = logical` and a
//! role that may create publications and replication slots; the password comes from the URL or
//! from `PGPASSWORD` and is never printed. At the end the demo drops the slot, the publication
//! and its tables (see `postgres.rs` and docs/mirror.md, "The demo").
//!
//! FRESHNESS
//! =========
//! A ring's freshness is the time from its commit being acknowledged to the detector reporting
//! it: visibility in Plexus is immediate, so this is mostly the wait for the next detector
//! round (with `--postgres`, the acknowledgement is PostgreSQL's, so it includes the mirror's
//! lag). A PageRank result's age is the time from pinning its snapshot (which holds every
//! commit acknowledged before) to the result being ready.
//!
//! At the end the demo checks that the database holds exactly the transfers the writers
//! reported as committed (with `--postgres`, once the mirror has applied them), and that every
//! injected ring was found.

mod postgres;

use clap::Parser;
use parking_lot::Mutex;
use plexus::{
    Config, CypherValue, DataType, Database, DurabilityMode, Error, Params, QueryError,
    QueryResult, Value, VertexId, VertexTableSpec,
};
use plexus_mirror::MirrorThread;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Fraud detection on live data: concurrent transfers, cycle queries, PageRank")]
struct Args {
    /// How long the writers run.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Concurrent writer threads.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Number of accounts.
    #[arg(long, default_value_t = 50_000)]
    accounts: i64,
    /// Time between two detector rounds.
    #[arg(long, default_value_t = 250)]
    interval_ms: u64,
    /// One transaction in this many is a ring of three transfers.
    #[arg(long, default_value_t = 500)]
    ring_every: u32,
    /// Durability of commits: fsync (default), periodic or none.
    #[arg(long, default_value = "fsync")]
    durability: String,
    /// Database directory (default: a fresh temporary directory, removed at the end).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Commit the transfers in PostgreSQL (15+, wal_level=logical) and mirror them into the
    /// embedded database: a `postgres://user[:password]@host[:port]/db` URL or a `key=value`
    /// string (the password may also come from PGPASSWORD).
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
}

/// Only transfers at most this old close a ring (ms of the demo clock).
const RING_WINDOW_MS: i64 = 5_000;
/// Slack subtracted from the previous round's start when asking for new transfers: a
/// transaction stamps its transfers just before it commits, so a transfer may become visible
/// slightly after a round that started later than its stamp.
const STAMP_SLACK_MS: i64 = 1_000;
/// Attempts per transaction when a write conflict aborts it.
const MAX_ATTEMPTS: u32 = 16;
/// Longest wait, once the writers have stopped, for the mirror to apply every transfer.
const MIRROR_CATCH_UP_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the graph's transfers are counted while waiting for the mirror.
const MIRROR_POLL: Duration = Duration::from_millis(20);

const RING_QUERY: &str = "
MATCH (a:Account)-[t1:TRANSFER]->(b:Account)
WHERE t1.at >= $since
MATCH (b)-[t2:TRANSFER]->(c:Account)-[t3:TRANSFER]->(a)
WHERE c <> a AND c <> b AND t2.at >= $window_start AND t3.at >= $window_start
RETURN a.id AS a, b.id AS b, c.id AS c, t1.amount + t2.amount + t3.amount AS total";

const PAGERANK_QUERY: &str = "
CALL algo.pagerank({edgeTypes: ['TRANSFER'], iterations: 20, damping: 0.85})
YIELD node, score
RETURN node.id AS account, score ORDER BY score DESC LIMIT 3";

/// A transfer: from account, to account, amount.
type Hop = (i64, i64, f64);

/// What the writers share with the detector.
struct Shared {
    db: Arc<Database>,
    /// Number of accounts (their ids are 0..accounts).
    accounts: i64,
    epoch: Instant,
    stop: AtomicBool,
    commits: AtomicU64,
    transfers: AtomicU64,
    retries: AtomicU64,
    /// Injected rings (canonical rotation) → when their commit was acknowledged.
    injected: Mutex<HashMap<[i64; 3], Instant>>,
}

impl Shared {
    fn new(db: Arc<Database>, accounts: i64) -> Arc<Shared> {
        Arc::new(Shared {
            db,
            accounts,
            epoch: Instant::now(),
            stop: AtomicBool::new(false),
            commits: AtomicU64::new(0),
            transfers: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            injected: Mutex::new(HashMap::new()),
        })
    }

    fn now_ms(&self) -> i64 {
        self.epoch.elapsed().as_millis() as i64
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<bool, String> {
    let durability = match args.durability.as_str() {
        "fsync" => DurabilityMode::Fsync,
        "periodic" => DurabilityMode::Periodic,
        "none" => DurabilityMode::None,
        other => {
            return Err(format!(
                "--durability must be fsync, periodic or none, not '{other}'"
            ));
        }
    };
    if args.accounts < 3 || args.writers == 0 || args.ring_every == 0 {
        return Err("need --accounts ≥ 3, --writers ≥ 1 and --ring-every ≥ 1".into());
    }
    let (dir, temporary) = match &args.db {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("plexus-fraud-{}", std::process::id())),
            true,
        ),
    };
    let config = Config {
        durability,
        ..Config::default()
    };
    let db = Database::open(&dir, config).map_err(|e| format!("{}: {e}", dir.display()))?;
    println!("database {} (durability {durability:?})", dir.display());
    let db = Arc::new(db);
    let outcome = match &args.postgres {
        None => run_embedded(&db, args),
        Some(url) => postgres::run(&db, &dir, url, args),
    };
    // every writer, the detector and the mirror have let go of the database by now
    let closed = match Arc::into_inner(db) {
        Some(db) => db.close().map_err(|e| e.to_string()),
        None => Err("the database is still in use".into()),
    };
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let ok = outcome?;
    closed?;
    Ok(ok)
}

/// The embedded run: the writers commit into `db` itself.
fn run_embedded(db: &Arc<Database>, args: &Args) -> Result<bool, String> {
    let accounts = Arc::new(create_accounts(db, args.accounts).map_err(|e| e.to_string())?);
    let shared = Shared::new(db.clone(), args.accounts);
    let sinks = (0..args.writers)
        .map(|_| {
            Box::new(Embedded {
                accounts: accounts.clone(),
            }) as Box<dyn Sink>
        })
        .collect();
    detect_while_writing(&shared, args, sinks, None)
}

fn create_accounts(db: &Database, count: i64) -> Result<Vec<VertexId>, Error> {
    let started = Instant::now();
    db.create_vertex_table(
        &VertexTableSpec::new("Account")
            .property("id", DataType::Int64)
            .property("owner", DataType::String)
            .primary_key("id"),
    )?;
    db.create_edge_table(
        "Account",
        "TRANSFER",
        "Account",
        &[("amount", DataType::Float64), ("at", DataType::Int64)],
    )?;
    let mut tx = db.begin();
    let mut accounts = Vec::with_capacity(count as usize);
    for id in 0..count {
        let owner = Value::from(format!("owner-{id}"));
        accounts
            .push(tx.create_vertex(&["Account"], &[("id", Value::from(id)), ("owner", owner)])?);
    }
    tx.commit()?;
    println!(
        "created {count} accounts in {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(accounts)
}

/// Starts one writer per sink, runs detector rounds until `--seconds` have passed, stops the
/// writers, waits for the `mirror` (if any) to apply every acknowledged transfer and prints the
/// summary. Returns whether every check passed.
fn detect_while_writing(
    shared: &Arc<Shared>,
    args: &Args,
    sinks: Vec<Box<dyn Sink>>,
    mirror: Option<&MirrorThread>,
) -> Result<bool, String> {
    let writers: Vec<_> = (sinks.into_iter().enumerate())
        .map(|(w, mut sink)| {
            let shared = shared.clone();
            let ring_every = args.ring_every;
            std::thread::spawn(move || write_transfers(&shared, w as u64, ring_every, &mut *sink))
        })
        .collect();
    let mut detector = Detector::new(shared, mirror);
    let result = detector.rounds(args);
    shared.stop.store(true, Ordering::Relaxed);
    let mut first_error = None;
    for writer in writers {
        let outcome = (writer.join()).unwrap_or_else(|_| Err("a writer thread panicked".into()));
        if let Err(e) = outcome {
            first_error.get_or_insert(e);
        }
    }
    let writing_s = shared.epoch.elapsed().as_secs_f64();
    result?;
    if let Some(e) = first_error {
        return Err(e);
    }
    detector.wait_for_mirror()?;
    detector.summary(writing_s)
}

/// Where the writers commit: the embedded database, or PostgreSQL (then mirrored into it).
trait Sink: Send {
    /// Commits `hops` as one transaction, its transfers stamped `at` = `shared.now_ms()`.
    fn commit(&mut self, shared: &Shared, hops: &[Hop]) -> Result<(), String>;
}

/// The embedded database's sink.
struct Embedded {
    /// The accounts' vertices, by id.
    accounts: Arc<Vec<VertexId>>,
}

impl Sink for Embedded {
    fn commit(&mut self, shared: &Shared, hops: &[Hop]) -> Result<(), String> {
        commit_with_retry(shared, &self.accounts, hops).map_err(|e| e.to_string())
    }
}

/// A writer: one transfer per transaction, or now and then a ring of three.
fn write_transfers(
    shared: &Shared,
    seed: u64,
    ring_every: u32,
    sink: &mut dyn Sink,
) -> Result<(), String> {
    let mut rng = SmallRng::seed_from_u64(0x5eed ^ seed);
    let n = shared.accounts;
    while !shared.stop.load(Ordering::Relaxed) {
        let ring = rng.random_ratio(1, ring_every);
        let hops: Vec<Hop> = if ring {
            let (a, b, c) = three_distinct(&mut rng, n);
            let amount = rng.random_range(9_000.0..9_900.0);
            vec![(a, b, amount), (b, c, amount * 0.98), (c, a, amount * 0.96)]
        } else {
            let (a, b, _) = three_distinct(&mut rng, n);
            vec![(a, b, rng.random_range(1.0..500.0))]
        };
        sink.commit(shared, &hops)
            .map_err(|e| format!("writer {seed}: {e}"))?;
        if ring {
            let key = canonical([hops[0].0, hops[1].0, hops[2].0]);
            shared.injected.lock().insert(key, Instant::now());
        }
        shared.commits.fetch_add(1, Ordering::Relaxed);
        shared
            .transfers
            .fetch_add(hops.len() as u64, Ordering::Relaxed);
    }
    Ok(())
}

fn three_distinct(rng: &mut SmallRng, n: i64) -> (i64, i64, i64) {
    let a = rng.random_range(0..n);
    let b = (a + rng.random_range(1..n)) % n;
    let mut c = rng.random_range(0..n);
    while c == a || c == b {
        c = rng.random_range(0..n);
    }
    (a, b, c)
}

fn commit_with_retry(shared: &Shared, accounts: &[VertexId], hops: &[Hop]) -> Result<(), Error> {
    let mut attempt = 1;
    loop {
        let mut tx = shared.db.begin();
        let at = Value::from(shared.now_ms());
        for &(from, to, amount) in hops {
            let props = [("amount", Value::from(amount)), ("at", at.clone())];
            let (src, dst) = (accounts[from as usize], accounts[to as usize]);
            tx.create_edge(src, "TRANSFER", dst, &props)?;
        }
        match tx.commit() {
            Err(e) if e.is_retryable() && attempt < MAX_ATTEMPTS => {
                shared.retries.fetch_add(1, Ordering::Relaxed);
                attempt += 1;
            }
            other => return other.map(drop),
        }
    }
}

/// The rotation of a directed 3-cycle that starts at its smallest account.
fn canonical(ring: [i64; 3]) -> [i64; 3] {
    let first = (0..3).min_by_key(|&i| ring[i]).expect("three accounts");
    [ring[first], ring[(first + 1) % 3], ring[(first + 2) % 3]]
}

/// The main thread's state: what was found, and how long things took.
struct Detector<'a> {
    shared: &'a Shared,
    /// The mirror that brings the transfers from PostgreSQL (`--postgres`).
    mirror: Option<&'a MirrorThread>,
    conn: plexus::Connection,
    /// Every ring reported (canonical rotation) → when the query that found it returned.
    /// Whether it was injected is decided at the end: a writer records its ring only after
    /// the commit is acknowledged, which may be after the detector has already seen it.
    found: HashMap<[i64; 3], Instant>,
    ring_query_ms: Vec<f64>,
    pagerank_ms: Vec<f64>,
    rounds: usize,
    /// How long the mirror took to apply every acknowledged transfer once the writers stopped.
    mirror_catch_up_ms: Option<f64>,
}

impl<'a> Detector<'a> {
    fn new(shared: &'a Shared, mirror: Option<&'a MirrorThread>) -> Self {
        Detector {
            shared,
            mirror,
            conn: shared.db.connect(),
            found: HashMap::new(),
            ring_query_ms: Vec::new(),
            pagerank_ms: Vec::new(),
            rounds: 0,
            mirror_catch_up_ms: None,
        }
    }

    fn rounds(&mut self, args: &Args) -> Result<(), String> {
        let interval = Duration::from_millis(args.interval_ms);
        let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
        let mut since_ms = 0;
        let mut last = (Instant::now(), 0);
        let mirror_header = match self.mirror {
            Some(_) => format!("  {:>17}", "mirror p50/p99"),
            None => String::new(),
        };
        println!(
            "{:>6}  {:>9}  {:>9}  {:>9}  {:>13}{mirror_header}  top account by PageRank",
            "t", "commits/s", "transfers", "new rings", "ring query"
        );
        while Instant::now() < deadline {
            std::thread::sleep(interval);
            let round_start_ms = self.shared.now_ms();
            // a mirrored transfer becomes visible up to the mirror's lag later still
            let mirror = self.mirror.map(|m| m.handle().status());
            let lag_ms = (mirror.as_ref())
                .and_then(|status| status.freshness_max_ms)
                .map_or(0, |max| max.ceil() as i64);
            let new_rings = self.look_for_rings(since_ms, round_start_ms - RING_WINDOW_MS)?;
            since_ms = round_start_ms - STAMP_SLACK_MS - lag_ms;
            let top = self.rank()?;
            let commits = self.shared.commits.load(Ordering::Relaxed);
            let rate = (commits - last.1) as f64 / last.0.elapsed().as_secs_f64();
            last = (Instant::now(), commits);
            let mirror_column = match mirror {
                Some(status) => match (status.freshness_p50_ms, status.freshness_p99_ms) {
                    (Some(p50), Some(p99)) => format!("  {:>14} ms", format!("{p50:.1}/{p99:.1}")),
                    _ => format!("  {:>17}", "-"),
                },
                None => String::new(),
            };
            println!(
                "{:>5.1}s  {:>9.0}  {:>9}  {:>9}  {:>10.1} ms{mirror_column}  {top}",
                self.shared.epoch.elapsed().as_secs_f64(),
                rate,
                self.shared.transfers.load(Ordering::Relaxed),
                new_rings,
                self.ring_query_ms.last().copied().unwrap_or(0.0),
            );
            self.rounds += 1;
        }
        Ok(())
    }

    /// The TRANSFER edges the graph holds.
    fn stored_transfers(&mut self) -> Result<u64, String> {
        let stored = self.execute(
            "MATCH (:Account)-[t:TRANSFER]->(:Account) RETURN count(t) AS n",
            &Params::new(),
        )?;
        let n = (stored.rows.first())
            .and_then(|row| row.first())
            .ok_or("the count returned no row")?;
        Ok(int(n)? as u64)
    }

    /// With a mirror: waits (at most [`MIRROR_CATCH_UP_TIMEOUT`]) until the graph holds every
    /// transfer the writers saw acknowledged. A timeout is not an error: the check reports the
    /// difference.
    fn wait_for_mirror(&mut self) -> Result<(), String> {
        let Some(mirror) = self.mirror else {
            return Ok(());
        };
        let acknowledged = self.shared.transfers.load(Ordering::Relaxed);
        let started = Instant::now();
        while self.stored_transfers()? < acknowledged {
            if mirror.has_stopped() {
                return Err(format!("the mirror stopped: {}", mirror.handle().status()));
            }
            if started.elapsed() >= MIRROR_CATCH_UP_TIMEOUT {
                return Ok(());
            }
            std::thread::sleep(MIRROR_POLL);
        }
        self.mirror_catch_up_ms = Some(ms(started.elapsed()));
        Ok(())
    }

    fn execute(&mut self, query: &str, params: &Params) -> Result<QueryResult, String> {
        self.conn
            .execute(query, params)
            .map_err(|e: QueryError| format!("{e}"))
    }

    /// Runs the cycle query over transfers stamped at or after `since_ms` closed by transfers
    /// stamped at or after `window_start_ms`; returns how many rings were new.
    fn look_for_rings(&mut self, since_ms: i64, window_start_ms: i64) -> Result<usize, String> {
        let mut params = Params::new();
        params.insert("since".into(), CypherValue::Int(since_ms));
        params.insert("window_start".into(), CypherValue::Int(window_start_ms));
        let started = Instant::now();
        let result = self.execute(RING_QUERY, &params)?;
        let seen_at = Instant::now();
        self.ring_query_ms.push(ms(started.elapsed()));
        let mut new_rings = 0;
        for row in &result.rows {
            let key = canonical([int(&row[0])?, int(&row[1])?, int(&row[2])?]);
            if let std::collections::hash_map::Entry::Vacant(entry) = self.found.entry(key) {
                entry.insert(seen_at);
                new_rings += 1;
            }
        }
        Ok(new_rings)
    }

    /// Runs PageRank on a fresh snapshot; returns the top account as text.
    fn rank(&mut self) -> Result<String, String> {
        let started = Instant::now();
        let result = self.execute(PAGERANK_QUERY, &Params::new())?;
        self.pagerank_ms.push(ms(started.elapsed()));
        Ok(match result.rows.first() {
            Some(row) => format!(
                "#{} ({:.2e}), PageRank {:.0} ms",
                int(&row[0])?,
                float(&row[1])?,
                self.pagerank_ms.last().expect("just pushed")
            ),
            None => "-".into(),
        })
    }

    /// Prints the summary and the end-of-run checks; returns whether the checks passed.
    /// `writing_s`: how long the writers ran.
    fn summary(&mut self, writing_s: f64) -> Result<bool, String> {
        let commits = self.shared.commits.load(Ordering::Relaxed);
        let transfers = self.shared.transfers.load(Ordering::Relaxed);
        let found_while_writing = self.found.len();
        // One last look over everything, so that the checks below are exact.
        self.look_for_rings(0, 0)?;
        let stored = self.stored_transfers()?;
        let injected = self.shared.injected.lock().clone();
        let mut freshness_ms: Vec<f64> = injected
            .iter()
            .filter_map(|(key, acked)| {
                Some(ms(self.found.get(key)?.saturating_duration_since(*acked)))
            })
            .collect();
        let missed = injected.len() - freshness_ms.len();
        let organic = self
            .found
            .keys()
            .filter(|k| !injected.contains_key(*k))
            .count();
        println!("\nsummary");
        println!(
            "  writers         {commits} commits ({transfers} transfers){} in {writing_s:.1} s = {:.0} commits/s; {} retries after conflicts",
            if self.mirror.is_some() {
                " in PostgreSQL"
            } else {
                ""
            },
            commits as f64 / writing_s,
            self.shared.retries.load(Ordering::Relaxed)
        );
        println!(
            "  ring query      {} rounds, {}",
            self.rounds,
            stats(&mut self.ring_query_ms)
        );
        println!(
            "  PageRank        {} (= result age: the snapshot is pinned as the query starts)",
            stats(&mut self.pagerank_ms)
        );
        println!(
            "  rings           {} injected, {} found (all but {} while writing), {} missed; {} organic cycles",
            injected.len(),
            freshness_ms.len(),
            self.found.len() - found_while_writing,
            missed,
            organic
        );
        let acknowledged_by = if self.mirror.is_some() {
            "PostgreSQL commit acknowledged → reported through the mirror"
        } else {
            "commit acknowledged → reported"
        };
        println!(
            "  ring freshness  {acknowledged_by}: {}",
            stats(&mut freshness_ms)
        );
        if let Some(mirror) = self.mirror {
            let status = mirror.handle().status();
            let caught_up = match self.mirror_catch_up_ms {
                Some(ms) => format!("applied everything {ms:.0} ms after the writers stopped"),
                None => format!(
                    "had NOT applied everything {} s after the writers stopped",
                    MIRROR_CATCH_UP_TIMEOUT.as_secs()
                ),
            };
            let ms = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.1} ms"));
            println!(
                "  mirror          {caught_up}; freshness (PostgreSQL commit → graph commit) p50 {}, p99 {}, max {}",
                ms(status.freshness_p50_ms),
                ms(status.freshness_p99_ms),
                ms(status.freshness_max_ms)
            );
            println!("  mirror status   {status}");
        }
        let transfers_ok = stored == transfers;
        println!(
            "  check           {stored} transfers stored, {transfers} acknowledged: {}",
            if transfers_ok { "equal" } else { "MISMATCH" }
        );
        Ok(transfers_ok && missed == 0)
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// "p50 … ms, p95 … ms, max … ms" of the samples (sorted in place).
fn stats(samples: &mut [f64]) -> String {
    if samples.is_empty() {
        return "n/a".into();
    }
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    format!(
        "p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        at(0.5),
        at(0.95),
        samples[samples.len() - 1]
    )
}

fn int(value: &CypherValue) -> Result<i64, String> {
    match value {
        CypherValue::Int(i) => Ok(*i),
        other => Err(format!("expected an integer, got {}", other.type_name())),
    }
}

fn float(value: &CypherValue) -> Result<f64, String> {
    match value {
        CypherValue::Float(f) => Ok(*f),
        other => Err(format!("expected a float, got {}", other.type_name())),
    }
}
