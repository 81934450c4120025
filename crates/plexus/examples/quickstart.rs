//! Quickstart: declare a schema, build a small graph, commit from several threads at once,
//! reopen the database (recovery from the WAL, then from a checkpoint) and read it back.
//!
//!     cargo run --release --example quickstart [-- DIR]

use plexus::{Config, DataType, Database, Direction, Error, Value, VertexTableSpec};
use std::sync::Arc;
use std::time::Instant;

const WRITER_THREADS: usize = 4;
const TRANSFERS_PER_THREAD: usize = 250;
const ACCOUNTS: i64 = 100;

fn main() -> Result<(), Error> {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("plexus-quickstart-{}", std::process::id()))
        });
    let _ = std::fs::remove_dir_all(&dir);
    println!("database directory: {}", dir.display());

    let db = Arc::new(Database::open(&dir, Config::default())?);
    db.create_vertex_table(
        &VertexTableSpec::new("Account")
            .property("id", DataType::Int64)
            .property("owner", DataType::String)
            .property("balance", DataType::Int64)
            .primary_key("id"),
    )?;
    let mut tx = db.begin();
    for id in 0..ACCOUNTS {
        let owner = format!("owner-{id}");
        tx.create_vertex(
            &["Account"],
            &[
                ("id", Value::from(id)),
                ("owner", Value::from(owner)),
                ("balance", Value::from(1000)),
            ],
        )?;
    }
    tx.commit()?;
    println!("created {ACCOUNTS} accounts");

    let started = Instant::now();
    let threads: Vec<_> = (0..WRITER_THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || run_transfers(&db, t))
        })
        .collect();
    let mut retries = 0;
    for thread in threads {
        retries += thread.join().expect("writer thread")?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let commits = WRITER_THREADS * TRANSFERS_PER_THREAD;
    println!(
        "{WRITER_THREADS} threads committed {commits} transfers in {elapsed:.2} s ({:.0} commits/s, fsync durability, {retries} conflict retries)",
        commits as f64 / elapsed
    );
    let before = summarize(&db)?;
    drop(db);

    let db = Database::open(&dir, Config::default())?;
    let report = db.recovery_report();
    println!(
        "reopened: replayed {} commits from the WAL (recovered to ts {})",
        report.replayed_commits, report.recovered_ts
    );
    let after = summarize(&db)?;
    assert_eq!(
        before, after,
        "the reopened database reads back exactly what was committed"
    );
    db.checkpoint()?;
    drop(db);

    let db = Database::open(&dir, Config::default())?;
    println!(
        "reopened after a checkpoint: replayed {} commits",
        db.recovery_report().replayed_commits
    );
    assert_eq!(summarize(&db)?, after);
    print_top_accounts(&db)?;
    drop(db);
    std::fs::remove_dir_all(&dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    Ok(())
}

/// Moves money between random accounts, recording each transfer as an edge. Retries conflicts.
fn run_transfers(db: &Database, thread: usize) -> Result<usize, Error> {
    let mut retries = 0;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ thread as u64;
    for i in 0..TRANSFERS_PER_THREAD {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let from = (seed >> 33) as i64 % ACCOUNTS;
        let to = (from + 1 + (seed >> 45) as i64 % (ACCOUNTS - 1)) % ACCOUNTS;
        loop {
            match transfer(db, from, to, 1 + (i % 10) as i64) {
                Err(e) if e.is_retryable() => retries += 1,
                other => break other?,
            }
        }
    }
    Ok(retries)
}

fn transfer(db: &Database, from: i64, to: i64, amount: i64) -> Result<(), Error> {
    let mut tx = db.begin();
    let a = tx
        .lookup("Account", &Value::from(from))?
        .expect("account exists");
    let b = tx
        .lookup("Account", &Value::from(to))?
        .expect("account exists");
    let balance = |tx: &mut plexus::Transaction, v| -> Result<i64, Error> {
        Ok(tx
            .vertex_property(v, "balance")?
            .and_then(|x| x.as_int())
            .unwrap_or(0))
    };
    let (ba, bb) = (balance(&mut tx, a)?, balance(&mut tx, b)?);
    tx.set_vertex_property(a, "balance", Value::from(ba - amount))?;
    tx.set_vertex_property(b, "balance", Value::from(bb + amount))?;
    tx.create_edge(a, "TRANSFER", b, &[("amount", Value::from(amount))])?;
    tx.commit()?;
    Ok(())
}

/// (total balance, number of transfer edges) — the invariant and the work done.
fn summarize(db: &Database) -> Result<(i64, usize), Error> {
    let mut tx = db.begin();
    let mut total = 0;
    let mut edges = 0;
    for v in tx.scan_label("Account")? {
        total += tx
            .vertex_property(v, "balance")?
            .and_then(|x| x.as_int())
            .unwrap_or(0);
        edges += tx.neighbors(v, Some("TRANSFER"), Direction::Out)?.len();
    }
    println!(
        "  total balance {total} (expected {}), {edges} transfer edges",
        ACCOUNTS * 1000
    );
    assert_eq!(
        total,
        ACCOUNTS * 1000,
        "money is neither created nor destroyed"
    );
    Ok((total, edges))
}

fn print_top_accounts(db: &Database) -> Result<(), Error> {
    let mut tx = db.begin();
    let mut rows = Vec::new();
    for v in tx.scan_label("Account")? {
        let received = tx.neighbors(v, Some("TRANSFER"), Direction::In)?.len();
        let owner = tx.vertex_property(v, "owner")?.unwrap_or(Value::Null);
        let balance = tx.vertex_property(v, "balance")?.unwrap_or(Value::Null);
        rows.push((received, owner, balance));
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.0));
    println!("accounts that received the most transfers:");
    for (received, owner, balance) in rows.iter().take(5) {
        println!("  {owner:<12} received {received:>3} transfers, balance {balance}");
    }
    Ok(())
}
