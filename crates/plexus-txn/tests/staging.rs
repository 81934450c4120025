//! `Transaction::stage_edges` (what bulk loads stage relationships with): endpoint checks.
//! An endpoint found existing once is not read again for later rows, but one the
//! transaction deleted since is refused, and one that never existed is refused every time.

use plexus_storage::{FaultVfs, Storage};
use plexus_txn::TxnManager;
use plexus_types::{Config, Error, IsolationLevel, VertexId};
use std::sync::Arc;

fn manager() -> Arc<TxnManager> {
    let config = Config {
        background_maintenance: false,
        ..Config::default()
    };
    let (storage, _report) = Storage::open(Arc::new(FaultVfs::new()), &config).unwrap();
    TxnManager::new(Arc::new(storage), config)
}

#[test]
fn endpoints_seen_once_are_trusted_until_the_transaction_deletes_them() {
    let manager = manager();
    let mut setup = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    let (a, b) = (
        setup.create_vertex(&["V"], &[]).unwrap(),
        setup.create_vertex(&["V"], &[]).unwrap(),
    );
    setup.commit().unwrap();
    let ghost = VertexId::new(a.table, 1_000);

    let mut txn = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    let rejected = txn.stage_edges("E", &[a, a], &[b, b], &[]).unwrap();
    assert!(rejected.is_empty(), "{rejected:?}");
    for _ in 0..2 {
        let rejected = txn.stage_edges("E", &[a, ghost], &[ghost, b], &[]).unwrap();
        let rows: Vec<usize> = rejected.iter().map(|(row, _)| *row).collect();
        assert_eq!(rows, [0, 1], "{rejected:?}");
        assert!(
            rejected
                .iter()
                .all(|(_, e)| matches!(e, Error::NotFound(_)))
        );
    }
    txn.delete_vertex(b, false).unwrap();
    let rejected = txn.stage_edges("E", &[a, b], &[b, a], &[]).unwrap();
    let rows: Vec<usize> = rejected.iter().map(|(row, _)| *row).collect();
    assert_eq!(rows, [0, 1], "{rejected:?}");
    let message = rejected[0].1.to_string();
    assert!(message.contains("deleted by this transaction"), "{message}");
    let rejected = txn.stage_edges("E", &[a], &[a], &[]).unwrap();
    assert!(rejected.is_empty(), "{rejected:?}");
}
