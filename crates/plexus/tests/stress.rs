//! Concurrency stress: writer threads move money along edges while reader threads check, in
//! every snapshot they take, that no money was created or destroyed and that every vertex's
//! balance agrees with the flows recorded on its edges.
//!
//! Invariants checked per snapshot:
//! - the sum of all balances is constant;
//! - for each account: balance - initial == (sum of `flow` on in-edges) - (sum on out-edges).
//!   This ties vertex properties to edge properties: a reader that saw half of a transfer
//!   (one side's balance, not the other's, or the balance without the flow) would fail.

mod common;

use common::memory_db;
use plexus::{Database, Direction, Error, IsolationLevel, Transaction, Value, VertexId};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const ACCOUNTS: usize = 24;
const INITIAL: i64 = 1_000;
const WRITERS: usize = 3;
const TRANSFERS_PER_WRITER: usize = 1_500;
const MAX_RETRIES: usize = 10_000;

fn int(tx: &mut Transaction, v: VertexId, key: &str) -> i64 {
    tx.vertex_property(v, key)
        .unwrap()
        .and_then(|x| x.as_int())
        .unwrap_or(0)
}

fn setup(db: &Database) -> Vec<VertexId> {
    let mut tx = db.begin();
    let accounts: Vec<_> = (0..ACCOUNTS)
        .map(|_| {
            tx.create_vertex(&["Account"], &[("balance", Value::from(INITIAL))])
                .unwrap()
        })
        .collect();
    for i in 0..ACCOUNTS {
        for step in [1, 5, 11] {
            tx.create_edge(
                accounts[i],
                "LINK",
                accounts[(i + step) % ACCOUNTS],
                &[("flow", Value::from(0))],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
    accounts
}

fn transfer(db: &Database, from: VertexId, choice: usize, amount: i64) -> Result<(), Error> {
    let mut tx = db.begin();
    let links = tx.neighbors(from, Some("LINK"), Direction::Out)?;
    let (edge, to) = links[choice % links.len()];
    let flow = tx
        .edge_property(edge, "flow")?
        .and_then(|x| x.as_int())
        .unwrap_or(0);
    let (from_balance, to_balance) = (int(&mut tx, from, "balance"), int(&mut tx, to, "balance"));
    // Widen the window between read and write so that writers really interleave.
    std::thread::yield_now();
    tx.set_vertex_property(from, "balance", Value::from(from_balance - amount))?;
    tx.set_vertex_property(to, "balance", Value::from(to_balance + amount))?;
    tx.set_edge_property(edge, "flow", Value::from(flow + amount))?;
    tx.commit().map(|_| ())
}

fn check_snapshot(db: &Database, accounts: &[VertexId]) {
    let mut tx = db.begin_with(IsolationLevel::Serializable);
    let mut total = 0;
    for &v in accounts {
        let balance = int(&mut tx, v, "balance");
        total += balance;
        let mut net_flow = 0;
        for (dir, sign) in [(Direction::In, 1), (Direction::Out, -1)] {
            for (e, _) in tx.neighbors(v, Some("LINK"), dir).unwrap() {
                net_flow += sign
                    * tx.edge_property(e, "flow")
                        .unwrap()
                        .and_then(|x| x.as_int())
                        .unwrap_or(0);
            }
        }
        assert_eq!(
            balance - INITIAL,
            net_flow,
            "account {v} disagrees with its edges at ts {}",
            tx.start_ts()
        );
    }
    assert_eq!(
        total,
        INITIAL * ACCOUNTS as i64,
        "money created or destroyed at ts {}",
        tx.start_ts()
    );
    tx.commit().expect("read-only transactions never abort");
}

#[test]
fn invariants_hold_in_every_snapshot_under_concurrent_transfers() {
    let db = memory_db();
    let db = Arc::new(db);
    let accounts = Arc::new(setup(&db));
    let done = Arc::new(AtomicBool::new(false));
    let retries = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, accounts, retries) = (db.clone(), accounts.clone(), retries.clone());
            std::thread::spawn(move || {
                let mut seed = 0x2545F4914F6CDD1Du64.wrapping_mul(w as u64 + 1);
                for i in 0..TRANSFERS_PER_WRITER {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let from = accounts[(seed % ACCOUNTS as u64) as usize];
                    let attempts = (0..MAX_RETRIES)
                        .position(|_| {
                            match transfer(&db, from, (seed >> 20) as usize, 1 + (i % 7) as i64) {
                                Ok(()) => true,
                                Err(e) if e.is_retryable() => false,
                                Err(e) => panic!("transfer failed: {e}"),
                            }
                        })
                        .expect("a transfer commits within the retry bound");
                    retries.fetch_add(attempts, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (db, accounts, done) = (db.clone(), accounts.clone(), done.clone());
            std::thread::spawn(move || {
                let mut checks = 0;
                while !done.load(Ordering::Acquire) || checks == 0 {
                    check_snapshot(&db, &accounts);
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    done.store(true, Ordering::Release);
    let checks: usize = readers.into_iter().map(|r| r.join().expect("reader")).sum();
    check_snapshot(&db, &accounts);
    let mut tx = db.begin();
    let edges: Vec<_> = accounts
        .iter()
        .flat_map(|&v| tx.neighbors(v, Some("LINK"), Direction::Out).unwrap())
        .collect();
    let total_flow: i64 = edges
        .iter()
        .map(|&(e, _)| {
            tx.edge_property(e, "flow")
                .unwrap()
                .and_then(|x| x.as_int())
                .unwrap()
        })
        .sum();
    let expected_flow: i64 = (0..TRANSFERS_PER_WRITER)
        .map(|i| 1 + (i % 7) as i64)
        .sum::<i64>()
        * WRITERS as i64;
    assert_eq!(
        total_flow, expected_flow,
        "every committed transfer is recorded exactly once"
    );
    println!(
        "{checks} consistent snapshots checked; {} conflict retries",
        retries.load(Ordering::Relaxed)
    );
}
