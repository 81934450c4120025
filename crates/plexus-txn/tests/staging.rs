//! `Transaction::stage_edges` (what bulk loads stage relationships with): endpoint checks.
//! An endpoint found existing once is not read again for later rows; one the transaction
//! deleted is refused, as is one that never existed, every time; and once edges are staged
//! the transaction deletes no vertex (its reads cannot see the staged edges).

mod common;

use common::manager;
use plexus_types::{Error, IsolationLevel, VertexId};

#[test]
fn endpoints_are_checked_once_and_deleted_ones_refused() {
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
    // Staged edges are invisible to the transaction's reads, so no delete may follow them.
    let err = txn.delete_vertex(b, true).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    txn.rollback();

    // A vertex deleted before the staging is refused as an endpoint.
    let mut txn = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    txn.delete_vertex(b, false).unwrap();
    let rejected = txn.stage_edges("E", &[a, b], &[b, a], &[]).unwrap();
    let rows: Vec<usize> = rejected.iter().map(|(row, _)| *row).collect();
    assert_eq!(rows, [0, 1], "{rejected:?}");
    let message = rejected[0].1.to_string();
    assert!(message.contains("deleted by this transaction"), "{message}");
    let rejected = txn.stage_edges("E", &[a], &[a], &[]).unwrap();
    assert!(rejected.is_empty(), "{rejected:?}");
}
