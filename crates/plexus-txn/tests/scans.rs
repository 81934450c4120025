//! `Transaction::scan_label_runs` (a parallel scan's vertex list) against `scan_label` (the
//! model): after random creates, deletes and label changes — committed, and pending in the
//! scanning transaction itself — both list the same vertices in the same order, for a table's
//! own label, an extra label carried across tables, and a label nothing carries.

mod common;

use common::manager;
use plexus_txn::Transaction;
use plexus_types::{IsolationLevel, VertexId};

/// A pseudo-random number below `n`.
fn next(state: &mut u64, n: u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 33) % n
}

/// Creates, deletes and relabels vertices at random in `tx`.
fn churn(tx: &mut Transaction, live: &mut Vec<VertexId>, state: &mut u64, steps: usize) {
    for _ in 0..steps {
        match next(state, 10) {
            0..=5 => {
                let label = ["V", "W"][next(state, 2) as usize];
                live.push(tx.create_vertex(&[label], &[]).unwrap());
            }
            6 | 7 if !live.is_empty() => {
                let v = live.swap_remove(next(state, live.len() as u64) as usize);
                tx.delete_vertex(v, true).unwrap();
            }
            8 if !live.is_empty() => {
                let v = live[next(state, live.len() as u64) as usize];
                tx.add_label(v, "X").unwrap();
            }
            9 if !live.is_empty() => {
                let v = live[next(state, live.len() as u64) as usize];
                tx.remove_label(v, "X").unwrap();
            }
            _ => {}
        }
    }
}

/// Every label's runs list what its scan lists.
fn same_lists(tx: &mut Transaction, case: &str) {
    for label in ["V", "W", "X", "Nothing"] {
        let ids = tx.scan_label(label).unwrap();
        let runs = tx.scan_label_runs(label).unwrap();
        assert_eq!(runs.len(), ids.len(), "{case}, {label}");
        assert_eq!(runs.ids(), ids, "{case}, {label}");
    }
}

#[test]
fn label_runs_list_what_label_scans_list() {
    for seed in 0..12u64 {
        let manager = manager();
        let mut state = seed;
        let mut live = Vec::new();
        for round in 0..4 {
            let mut tx = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
            churn(&mut tx, &mut live, &mut state, 300);
            tx.commit().unwrap();
            let mut reader = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
            same_lists(
                &mut reader,
                &format!("seed {seed}, round {round}, committed"),
            );
            // The transaction's own pending writes take the merging path.
            let mut pending = live.clone();
            churn(&mut reader, &mut pending, &mut state, 40);
            same_lists(&mut reader, &format!("seed {seed}, round {round}, pending"));
            reader.rollback();
        }
    }
}

/// Existence at the snapshot is remembered per transaction (`check_vertex_cached`): the
/// memo never hides the transaction's own delete, nor shows another's.
#[test]
fn remembered_existence_yields_to_own_deletes_and_keeps_the_snapshot() {
    use plexus_types::Direction;
    let manager = manager();
    let mut setup = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    let a = setup.create_vertex(&["V"], &[]).unwrap();
    let b = setup.create_vertex(&["V"], &[]).unwrap();
    setup.create_edge(a, "E", b, &[]).unwrap();
    setup.commit().unwrap();

    let mut reader = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    for _ in 0..2 {
        assert_eq!(
            reader
                .neighbors(a, Some("E"), Direction::Out)
                .unwrap()
                .len(),
            1
        );
    }
    // Another transaction deletes `b` and commits: the reader's snapshot still has it.
    let mut other = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    other.delete_vertex(b, true).unwrap();
    other.commit().unwrap();
    assert!(reader.neighbors(b, Some("E"), Direction::In).is_ok());
    // The reader deletes `a` itself: remembered or not, `a` is gone for it.
    reader.delete_vertex(a, true).unwrap();
    let gone = reader.neighbors(a, Some("E"), Direction::Out).unwrap_err();
    assert!(
        gone.to_string().contains("deleted by this transaction"),
        "{gone}"
    );
    // A fresh transaction sees `b` deleted.
    let mut fresh = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    assert!(fresh.neighbors(b, Some("E"), Direction::In).is_err());
}
