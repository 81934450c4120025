//! `bank`: the price of SERIALIZABLE, measured as committed transfers per second and the
//! abort rate of a bank-transfer workload at each isolation level, through the embedded API
//! and through Bolt, with several client sessions at once.
//!
//! THE WORKLOAD
//! ============
//! `--accounts` vertices `(:Account {id, balance})` in a declared table whose primary key is
//! `id`, each starting with [`INITIAL_BALANCE`]. A session repeats transfers: it picks two
//! distinct accounts and an amount from 1 to [`MAX_AMOUNT`] (SplitMix64, seeded by the session
//! number, so a run is repeatable up to scheduling) and runs, through Cypher:
//!
//! ```text
//!   BEGIN                                                       (at --levels' level)
//!   MATCH (a:Account {id: $from}), (b:Account {id: $to})
//!   RETURN a.balance, b.balance                                 two primary-key seeks
//!   -- the client checks the funds: too little → ROLLBACK, counted as declined
//!   MATCH (a:Account {id: $from}), (b:Account {id: $to})
//!   SET a.balance = $from_balance, b.balance = $to_balance      values computed by the client
//!   COMMIT
//! ```
//!
//! Writing back values the client computed (instead of `a.balance - $amt`) makes the
//! isolation level matter: a lost update would show as money created or destroyed. A
//! retryable failure (a write conflict, or a read-validation failure under SERIALIZABLE) is an
//! abort: the session rolls back (RESET on Bolt) and retries the same transfer at once, with
//! no backoff.
//!
//! HOW IT IS MEASURED
//! ==================
//! For each `--via` × `--sessions` × `--levels` a fresh database is loaded (so no run inherits
//! another's versions or statistics), the sessions connect (Bolt: handshake and login), and a
//! barrier starts them together; each runs transfers for `--seconds` and finishes the one it
//! is in. With `--rounds N` this is repeated N times, the levels alternating within each
//! round so that a drift in machine load or fsync latency falls on every level alike, and the
//! rounds' counts and times are added up. The figures:
//!
//! ```text
//!   bank_<via>_<level>_<n>s_transfers_per_s   commits / wall time until the last session ends
//!   bank_<via>_<level>_<n>s_abort_rate        aborted attempts / all attempts
//! ```
//!
//! Each has as baseline the snapshot figure of the same via and session count in the same run
//! (when `--levels` lists snapshot before serializable, as by default), so the ratio is the
//! cost of SERIALIZABLE. Embedded sessions are threads with one `Connection` each, choosing
//! the level with `SET SESSION TRANSACTION ISOLATION LEVEL`; Bolt sessions are threads with
//! one TCP connection each to an in-process server on a loopback port, choosing the level per
//! transaction with BEGIN's `tx_metadata: {isolation: ...}` (see `bank::bolt`). Both paths
//! run the same statements with the same parameters, so the difference between them is the
//! protocol and the server.
//!
//! CHECKS
//! ======
//! - After each run, the sum of the balances must still be `accounts × INITIAL_BALANCE`, and
//!   at SERIALIZABLE no balance may be negative; a violation fails the benchmark (exit 1)
//!   after its figures are printed.
//! - Before each run a write-skew probe checks that the level is in effect: two sessions both
//!   read two `:SkewProbe` vertices and each updates a different one; SERIALIZABLE must abort
//!   the second commit, snapshot isolation lets both commit. The outcome is printed as the
//!   figure's `write_skew` label (`prevented` / `allowed`); SERIALIZABLE that allows it fails
//!   the benchmark, since its figures would be snapshot figures under another name.
//!
//! LIMITS
//! ======
//! Client and server share the machine: with more sessions than cores they compete for CPU
//! with the engine, and the figures measure the whole box, not the engine alone. Durability is
//! the engine's default (fsync per commit group) unless `--durability` says otherwise. A
//! transfer reads only what it writes, so the workload has no write skew for SERIALIZABLE to
//! prevent: its price here is the bookkeeping (read sets, validation at commit), not the extra
//! aborts a skew-prone workload would pay. Declined transfers (too little money) are neither
//! commits nor aborts; they grow as balances drift towards zero in long, fast runs.

pub(crate) mod bolt;

use crate::report::Figure;
use crate::rmat::Rng;
use plexus::{CypherValue, DataType, Database, DurabilityMode, Params, Value, VertexTableSpec};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Balance every account starts with.
pub const INITIAL_BALANCE: i64 = 1_000;
/// Largest amount one transfer moves.
pub const MAX_AMOUNT: u64 = 100;
/// Most retries of one transfer before the benchmark gives up (a livelock guard).
pub const MAX_RETRIES_PER_TRANSFER: u64 = 10_000;
/// Accounts created per loading transaction.
const LOAD_BATCH_ACCOUNTS: usize = 10_000;

const READ: &str =
    "MATCH (a:Account {id: $from}), (b:Account {id: $to}) RETURN a.balance, b.balance";
const WRITE: &str = "MATCH (a:Account {id: $from}), (b:Account {id: $to}) \
                     SET a.balance = $from_balance, b.balance = $to_balance";

#[derive(clap::Args)]
pub struct Options {
    /// Number of accounts.
    #[arg(long, default_value_t = 1000)]
    accounts: usize,
    /// Seconds each run lasts.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Client session counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "2,8")]
    sessions: Vec<usize>,
    /// Isolation levels, comma-separated (snapshot first: it is the baseline).
    #[arg(long, value_delimiter = ',', default_value = "snapshot,serializable")]
    levels: Vec<Level>,
    /// Paths, comma-separated: embedded (Connection) and/or bolt (in-process server).
    #[arg(long, value_delimiter = ',', default_value = "embedded,bolt")]
    via: Vec<Via>,
    /// Rounds per via and session count; each runs every level once, alternating, and the
    /// figures add up the rounds.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// WAL durability: fsync (the engine's default), periodic or none.
    #[arg(long, default_value = "fsync")]
    durability: DurabilityMode,
    /// Directory for the benchmark databases (default: the system temp dir).
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Level {
    Snapshot,
    Serializable,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Snapshot => "snapshot",
            Level::Serializable => "serializable",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    Embedded,
    Bolt,
}

impl Via {
    fn name(self) -> &'static str {
        match self {
            Via::Embedded => "embedded",
            Via::Bolt => "bolt",
        }
    }
}

/// Why a call failed: a conflict worth retrying, or anything else (fatal to the benchmark).
#[derive(Debug)]
pub enum Failure {
    Retryable(String),
    Fatal(String),
}

impl Failure {
    fn fatal(self) -> String {
        match self {
            Failure::Retryable(e) | Failure::Fatal(e) => e,
        }
    }
}

/// One client session: explicit transactions of Cypher statements with integer parameters
/// and results, the same on both paths.
pub trait Session: Send {
    fn begin(&mut self, level: Level) -> Result<(), Failure>;
    fn query(&mut self, query: &str, params: &[(&str, i64)]) -> Result<Vec<Vec<i64>>, Failure>;
    fn commit(&mut self) -> Result<(), Failure>;
    /// Back to no transaction after a failure or to drop the open one.
    fn abandon(&mut self) -> Result<(), Failure>;
}

/// The embedded path: one `Connection`, with `BEGIN` / `COMMIT` as statements.
struct Embedded {
    conn: plexus::Connection,
    /// The level last set with `SET SESSION TRANSACTION ISOLATION LEVEL` (`None`: not yet,
    /// so the first transaction sets it rather than trusting the server-wide default).
    level: Option<Level>,
}

fn classify(e: plexus::QueryError) -> Failure {
    if e.is_retryable() {
        Failure::Retryable(e.to_string())
    } else {
        Failure::Fatal(e.to_string())
    }
}

impl Session for Embedded {
    fn begin(&mut self, level: Level) -> Result<(), Failure> {
        if self.level != Some(level) {
            let set = format!(
                "SET SESSION TRANSACTION ISOLATION LEVEL {}",
                level.name().to_ascii_uppercase()
            );
            self.conn.execute(&set, &Params::new()).map_err(classify)?;
            self.level = Some(level);
        }
        self.conn
            .execute("BEGIN", &Params::new())
            .map_err(classify)?;
        Ok(())
    }

    fn query(&mut self, query: &str, params: &[(&str, i64)]) -> Result<Vec<Vec<i64>>, Failure> {
        let params: Params = params
            .iter()
            .map(|&(k, v)| (k.to_owned(), CypherValue::Int(v)))
            .collect();
        let result = self.conn.execute(query, &params).map_err(classify)?;
        result
            .rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|value| match value {
                        CypherValue::Int(i) => Ok(i),
                        other => Err(Failure::Fatal(format!("non-integer value {other:?}"))),
                    })
                    .collect()
            })
            .collect()
    }

    fn commit(&mut self) -> Result<(), Failure> {
        self.conn
            .execute("COMMIT", &Params::new())
            .map_err(classify)?;
        Ok(())
    }

    fn abandon(&mut self) -> Result<(), Failure> {
        if self.conn.in_transaction() {
            self.conn
                .execute("ROLLBACK", &Params::new())
                .map_err(classify)?;
        }
        Ok(())
    }
}

/// Opens sessions on one database, by either path.
enum Connector {
    Embedded(Arc<Database>),
    Bolt(bolt::Server),
}

impl Connector {
    fn connect(&self) -> Result<Box<dyn Session>, String> {
        Ok(match self {
            Connector::Embedded(db) => Box::new(Embedded {
                conn: db.connect(),
                level: None,
            }),
            Connector::Bolt(server) => {
                Box::new(bolt::Client::connect(server.addr).map_err(Failure::fatal)?)
            }
        })
    }
}

/// What the sessions of one run did.
#[derive(Clone, Copy, Default, Debug)]
struct Counts {
    commits: u64,
    aborts: u64,
    declined: u64,
}

impl Counts {
    fn attempts(&self) -> u64 {
        self.commits + self.aborts + self.declined
    }
}

pub fn run(options: &Options) -> Result<(), String> {
    if options.accounts < 2 {
        return Err("--accounts must be at least 2".into());
    }
    if options.sessions.contains(&0) || options.rounds == 0 {
        return Err("--sessions and --rounds must be positive".into());
    }
    let parent = options.dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut violations = Vec::new();
    for &via in &options.via {
        for &sessions in &options.sessions {
            // Rounds alternate the levels, so a drift in the machine's load (or the disk's
            // fsync latency) falls on every level alike; the rounds' counts and times add up.
            let mut totals: Vec<Option<Outcome>> = options.levels.iter().map(|_| None).collect();
            for _ in 0..options.rounds {
                for (&level, total) in options.levels.iter().zip(&mut totals) {
                    let dir = parent.join(format!("plexus-bench-bank-{}", std::process::id()));
                    let _ = std::fs::remove_dir_all(&dir);
                    let outcome = measure(options, &dir, via, sessions, level);
                    let _ = std::fs::remove_dir_all(&dir);
                    let outcome = outcome?;
                    *total = Some(match total.take() {
                        None => outcome,
                        Some(sum) => sum.add(outcome),
                    });
                }
            }
            let mut baseline: Option<(f64, f64)> = None;
            for (&level, total) in options.levels.iter().zip(totals) {
                let Some(total) = total else { continue };
                let per_s = total.counts.commits as f64 / total.elapsed.as_secs_f64();
                let abort_rate = total.counts.aborts as f64 / total.counts.attempts().max(1) as f64;
                let prefix = format!("bank_{}_{}_{sessions}s", via.name(), level.name());
                let figures = [
                    (
                        "transfers_per_s",
                        per_s,
                        "transfers/s",
                        baseline.map(|b| b.0),
                    ),
                    (
                        "abort_rate",
                        abort_rate,
                        "aborts/attempt",
                        baseline.map(|b| b.1),
                    ),
                ];
                for (suffix, value, unit, base) in figures {
                    let name = format!("{prefix}_{suffix}");
                    let mut figure = Figure::new(&name, value, unit)
                        .with("sessions", sessions as f64)
                        .with("accounts", options.accounts as f64)
                        .with("rounds", options.rounds as f64)
                        .with("seconds", total.elapsed.as_secs_f64())
                        .with("commits", total.counts.commits as f64)
                        .with("aborts", total.counts.aborts as f64)
                        .with("declined", total.counts.declined as f64)
                        .with_label("write_skew", total.write_skew);
                    if let Some(base) = base {
                        figure = figure.baseline(base);
                    }
                    figure.print();
                }
                if level == Level::Snapshot {
                    baseline = Some((per_s, abort_rate));
                }
                let named = total
                    .violations
                    .into_iter()
                    .map(|v| format!("{prefix}: {v}"));
                violations.extend(named);
            }
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations.join("; "))
    }
}

struct Outcome {
    counts: Counts,
    elapsed: Duration,
    write_skew: &'static str,
    violations: Vec<String>,
}

impl Outcome {
    /// Two rounds of the same run as one.
    fn add(mut self, other: Outcome) -> Outcome {
        self.counts.commits += other.counts.commits;
        self.counts.aborts += other.counts.aborts;
        self.counts.declined += other.counts.declined;
        self.elapsed += other.elapsed;
        if self.write_skew != other.write_skew {
            self.write_skew = "mixed";
        }
        self.violations.extend(other.violations);
        self
    }
}

fn measure(
    options: &Options,
    dir: &Path,
    via: Via,
    sessions: usize,
    level: Level,
) -> Result<Outcome, String> {
    let config = plexus::Config {
        durability: options.durability,
        ..plexus::Config::default()
    };
    let db = Arc::new(Database::open(dir, config).map_err(|e| e.to_string())?);
    load(&db, options.accounts)?;
    check_plans(&db)?;
    let connector = match via {
        Via::Embedded => Connector::Embedded(db.clone()),
        Via::Bolt => Connector::Bolt(bolt::Server::start(db.clone())?),
    };
    let write_skew = write_skew_probe(&connector, level)?;
    let mut violations = Vec::new();
    if level == Level::Serializable && write_skew != "prevented" {
        violations.push("SERIALIZABLE allowed write skew: the level is not in effect".into());
    }
    eprintln!(
        "bank: {} {} {sessions} sessions, {} accounts, write skew {write_skew}",
        via.name(),
        level.name(),
        options.accounts
    );
    let (counts, elapsed) = transfers(&connector, options, sessions, level)?;
    drop(connector); // the server (and its sessions) end before the checks
    let (sum, min) = balances(&db)?;
    let expected = options.accounts as i64 * INITIAL_BALANCE;
    if sum != expected {
        violations.push(format!("total balance {sum}, expected {expected}"));
    }
    if level == Level::Serializable && min < 0 {
        violations.push(format!("a balance is negative ({min})"));
    }
    eprintln!(
        "bank: {counts:?} in {:.2} s; total {sum}, lowest balance {min}",
        elapsed.as_secs_f64()
    );
    Ok(Outcome {
        counts,
        elapsed,
        write_skew,
        violations,
    })
}

/// The accounts (a declared table, primary key `id`) and the two write-skew probe vertices.
fn load(db: &Database, accounts: usize) -> Result<(), String> {
    let spec = VertexTableSpec::new("Account")
        .property("id", DataType::Int64)
        .property("balance", DataType::Int64)
        .primary_key("id");
    db.create_vertex_table(&spec).map_err(|e| e.to_string())?;
    let ids: Vec<i64> = (0..accounts as i64).collect();
    for batch in ids.chunks(LOAD_BATCH_ACCOUNTS) {
        let mut tx = db.begin();
        for &id in batch {
            let props = [
                ("id", Value::from(id)),
                ("balance", Value::from(INITIAL_BALANCE)),
            ];
            tx.create_vertex(&["Account"], &props)
                .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
    }
    db.connect()
        .execute(
            "CREATE (:SkewProbe {id: 1, v: 0}), (:SkewProbe {id: 2, v: 0})",
            &Params::new(),
        )
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Warns (on stderr) when the transfer statements do not find both accounts by primary-key
/// seeks: the figures would then measure label scans.
fn check_plans(db: &Database) -> Result<(), String> {
    let params: Params = ["from", "to", "from_balance", "to_balance"]
        .into_iter()
        .map(|k| (k.to_owned(), CypherValue::Int(0)))
        .collect();
    for query in [READ, WRITE] {
        let result = db
            .connect()
            .execute(&format!("EXPLAIN {query}"), &params)
            .map_err(|e| e.to_string())?;
        let plan = result.plan.unwrap_or_default();
        if plan.matches("NodeByKeySeek").count() < 2 {
            eprintln!("bank: warning: not two primary-key seeks in the plan of {query}:\n{plan}");
        }
    }
    Ok(())
}

/// Two sessions read both probe vertices and each writes a different one: `prevented` when
/// the second commit aborts (serializable), `allowed` when both commit (snapshot isolation).
fn write_skew_probe(connector: &Connector, level: Level) -> Result<&'static str, String> {
    const READ_BOTH: &str = "MATCH (p:SkewProbe) RETURN p.v";
    const WRITE_ONE: &str = "MATCH (p:SkewProbe {id: $id}) SET p.v = p.v + 1";
    let (mut first, mut second) = (connector.connect()?, connector.connect()?);
    for session in [&mut first, &mut second] {
        session.begin(level).map_err(Failure::fatal)?;
        session.query(READ_BOTH, &[]).map_err(Failure::fatal)?;
    }
    first
        .query(WRITE_ONE, &[("id", 1)])
        .map_err(Failure::fatal)?;
    let second_write = second.query(WRITE_ONE, &[("id", 2)]);
    first.commit().map_err(Failure::fatal)?;
    let outcome = match second_write.and_then(|_| second.commit()) {
        Ok(()) => "allowed",
        Err(Failure::Retryable(_)) => "prevented",
        Err(Failure::Fatal(e)) => return Err(format!("write-skew probe: {e}")),
    };
    second.abandon().map_err(Failure::fatal)?;
    Ok(outcome)
}

/// Runs `sessions` transfer loops for `options.seconds`; the counts and the wall time from
/// the common start to the end of the last session.
fn transfers(
    connector: &Connector,
    options: &Options,
    sessions: usize,
    level: Level,
) -> Result<(Counts, Duration), String> {
    let mut clients = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        clients.push(connector.connect()?);
    }
    let barrier = Barrier::new(sessions + 1);
    let seconds = Duration::from_secs_f64(options.seconds);
    let accounts = options.accounts as u64;
    std::thread::scope(|scope| {
        let workers: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, mut client)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut rng = Rng::new(42 + i as u64);
                    barrier.wait();
                    let deadline = Instant::now() + seconds;
                    transfer_loop(client.as_mut(), level, accounts, &mut rng, deadline)
                })
            })
            .collect();
        barrier.wait();
        let started = Instant::now();
        let mut total = Counts::default();
        let mut error = None;
        for worker in workers {
            match worker.join() {
                Ok(Ok(c)) => {
                    total.commits += c.commits;
                    total.aborts += c.aborts;
                    total.declined += c.declined;
                }
                Ok(Err(e)) => error = Some(e),
                Err(_) => error = Some("a session panicked".into()),
            }
        }
        let elapsed = started.elapsed();
        match error {
            Some(e) => Err(e),
            None => Ok((total, elapsed)),
        }
    })
}

fn transfer_loop(
    session: &mut dyn Session,
    level: Level,
    accounts: u64,
    rng: &mut Rng,
    deadline: Instant,
) -> Result<Counts, String> {
    let mut counts = Counts::default();
    while Instant::now() < deadline {
        let from = rng.below(accounts) as i64;
        let to = (from as u64 + 1 + rng.below(accounts - 1)) % accounts;
        let amount = 1 + rng.below(MAX_AMOUNT) as i64;
        debug_assert_ne!(from, to as i64);
        let mut retries = 0;
        loop {
            match transfer(session, level, from, to as i64, amount) {
                Ok(true) => counts.commits += 1,
                Ok(false) => counts.declined += 1,
                Err(Failure::Retryable(e)) => {
                    counts.aborts += 1;
                    retries += 1;
                    session.abandon().map_err(Failure::fatal)?;
                    if retries > MAX_RETRIES_PER_TRANSFER {
                        return Err(format!("{retries} retries of one transfer; last: {e}"));
                    }
                    continue;
                }
                Err(Failure::Fatal(e)) => return Err(e),
            }
            break;
        }
    }
    Ok(counts)
}

/// One attempt: `Ok(true)` committed, `Ok(false)` declined for lack of funds.
fn transfer(
    session: &mut dyn Session,
    level: Level,
    from: i64,
    to: i64,
    amount: i64,
) -> Result<bool, Failure> {
    session.begin(level)?;
    let rows = session.query(READ, &[("from", from), ("to", to)])?;
    let &[from_balance, to_balance] = rows.first().map(Vec::as_slice).unwrap_or_default() else {
        return Err(Failure::Fatal(format!("accounts {from}, {to}: {rows:?}")));
    };
    if from_balance < amount {
        session.abandon()?;
        return Ok(false);
    }
    let params = [
        ("from", from),
        ("to", to),
        ("from_balance", from_balance - amount),
        ("to_balance", to_balance + amount),
    ];
    session.query(WRITE, &params)?;
    session.commit()?;
    Ok(true)
}

/// The sum and the lowest of the balances, read in one snapshot.
fn balances(db: &Database) -> Result<(i64, i64), String> {
    let result = db
        .connect()
        .execute(
            "MATCH (a:Account) RETURN sum(a.balance), min(a.balance)",
            &Params::new(),
        )
        .map_err(|e| e.to_string())?;
    match result.rows.first().map(Vec::as_slice) {
        Some([CypherValue::Int(sum), CypherValue::Int(min)]) => Ok((*sum, *min)),
        other => Err(format!("balance check returned {other:?}")),
    }
}
