//! The bulk load's storage path (`Database::bulk_load`, `plexus_storage`'s `store::bulk`):
//! what it installs is read back exactly (both directions, properties, after a reopen), a
//! crash at any sync point of a load recovers all of it or none of it, and it conflicts with
//! concurrent transactions as a commit does (primary keys: first committer wins; under
//! SERIALIZABLE a transaction that scanned the label cannot commit after the load). Nodes
//! and edges staged as columns are checked row by row, found by key, invisible otherwise,
//! and committed only as a bulk load.

use plexus::testing::FaultVfs;
use plexus::{
    Config, DataType, Database, Direction, Error, IsolationLevel, Value, VertexId, VertexTableSpec,
};
use std::sync::Arc;

fn ints(name: &str, values: impl IntoIterator<Item = i64>) -> (String, Vec<Value>) {
    (
        name.to_string(),
        values.into_iter().map(Value::Int).collect(),
    )
}

/// `n` vertices `V {id}` and a ring plus chords: edge i goes i → (i + 1) % n and, for even
/// i, i → (i * 7) % n, each with `w = i`.
fn load_ring(db: &Database, n: i64) -> plexus::BulkSummary {
    let mut load = db.bulk_load();
    let added = load
        .add_nodes(&["V"], None, &[ints("id", 0..n)], n as usize)
        .unwrap();
    let ids: Vec<VertexId> = added.ids.iter().map(|id| id.unwrap()).collect();
    let (mut src, mut dst, mut w) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        src.push(ids[i as usize]);
        dst.push(ids[((i + 1) % n) as usize]);
        w.push(i);
        if i % 2 == 0 {
            src.push(ids[i as usize]);
            dst.push(ids[((i * 7) % n) as usize]);
            w.push(i);
        }
    }
    let added = load
        .add_relationships("E", &src, &dst, &[ints("w", w)])
        .unwrap();
    assert!(added.rejected.is_empty());
    load.commit().unwrap()
}

/// Every vertex's id with its sorted out- and in-neighbour ids and out-edge weights.
fn dump(db: &Database) -> String {
    let mut tx = db.begin();
    let id = |tx: &mut plexus::Transaction, v| match tx.vertex_property(v, "id").unwrap() {
        Some(Value::Int(i)) => i,
        other => panic!("id {other:?}"),
    };
    let mut lines = Vec::new();
    for v in tx.scan_label("V").unwrap() {
        let mut out = Vec::new();
        for (e, n) in tx.neighbors(v, Some("E"), Direction::Out).unwrap() {
            let w = tx.edge_property(e, "w").unwrap();
            out.push(format!("{}:{w:?}", id(&mut tx, n)));
        }
        let mut inc: Vec<i64> = Vec::new();
        for (_, n) in tx.neighbors(v, Some("E"), Direction::In).unwrap() {
            inc.push(id(&mut tx, n));
        }
        out.sort();
        inc.sort_unstable();
        lines.push(format!("{} out {out:?} in {inc:?}", id(&mut tx, v)));
    }
    lines.sort();
    lines.join("\n")
}

/// The same graph as `load_ring`, created by one ordinary transaction.
fn ring_by_transaction(db: &Database, n: i64) {
    let mut tx = db.begin();
    let ids: Vec<VertexId> = (0..n)
        .map(|i| tx.create_vertex(&["V"], &[("id", Value::Int(i))]).unwrap())
        .collect();
    for i in 0..n {
        let w = [("w", Value::Int(i))];
        tx.create_edge(ids[i as usize], "E", ids[((i + 1) % n) as usize], &w)
            .unwrap();
        if i % 2 == 0 {
            tx.create_edge(ids[i as usize], "E", ids[((i * 7) % n) as usize], &w)
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

#[test]
fn a_bulk_load_reads_back_like_the_same_commit_and_survives_a_reopen() {
    let expected = {
        let db = Database::open_in_memory(Config::default()).unwrap();
        ring_by_transaction(&db, 3000);
        dump(&db)
    };
    let dir = std::env::temp_dir().join(format!("plexus-bulk-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = Config {
        lsm_range_vertices: 1024,
        ..Config::default()
    };
    let db = Database::open(&dir, config.clone()).unwrap();
    let mut before = db.begin();
    let summary = load_ring(&db, 3000);
    assert_eq!((summary.nodes, summary.relationships), (3000, 4500));
    assert_eq!(dump(&db), expected);
    // A transaction that began before the load sees none of it.
    assert!(before.scan_label("V").unwrap().is_empty());
    drop(before);
    // The adjacency went straight to runs: nothing is waiting in a memtable.
    assert_eq!(db.storage_stats().memtable_bytes, 0);
    // Writes after the load go through the WAL as usual, and both survive a reopen.
    let mut tx = db.begin();
    let a = tx.create_vertex(&["V"], &[("id", Value::Int(-1))]).unwrap();
    tx.commit().unwrap();
    db.close().unwrap();
    let db = Database::open(&dir, config).unwrap();
    let reopened = dump(&db);
    assert!(reopened.starts_with("-1 out [] in []\n"), "{reopened:.60}");
    assert_eq!(reopened.split_once('\n').unwrap().1, expected);
    assert!(db.begin().vertex_exists(a).unwrap());
    drop(db);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_second_load_adds_to_the_first_and_edges_may_join_old_and_new_vertices() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    load_ring(&db, 100);
    let mut load = db.bulk_load();
    let added = load
        .add_nodes(&["V"], None, &[ints("id", [100])], 1)
        .unwrap();
    let new = added.ids[0].unwrap();
    let old = db.begin().scan_label("V").unwrap()[0];
    load.add_relationships("E", &[new, old], &[old, new], &[])
        .unwrap();
    load.commit().unwrap();
    let mut tx = db.begin();
    assert_eq!(tx.scan_label("V").unwrap().len(), 101);
    assert_eq!(tx.scan_edges("E").unwrap().len(), 152);
    let out: Vec<VertexId> = tx
        .neighbors(new, Some("E"), Direction::Out)
        .unwrap()
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(out, [old]);
}

/// Crashes a workload of commit, load, commit at every sync point: recovery yields the state
/// after the acknowledged steps, or after the step in flight — never part of the load.
#[test]
fn every_crash_point_of_a_load_recovers_all_of_it_or_none() {
    let config = Config {
        background_maintenance: false,
        lsm_range_vertices: 1024,
        ..Config::default()
    };
    let workload = |vfs: &FaultVfs, acked: &mut dyn FnMut(&Database)| -> Result<(), Error> {
        let db = Database::open_with_vfs(Arc::new(vfs.clone()), config.clone())?;
        let mut tx = db.begin();
        tx.create_vertex(&["V"], &[("id", Value::Int(-1))])?;
        tx.commit()?;
        acked(&db);
        let mut load = db.bulk_load();
        let added = load.add_nodes(&["V"], None, &[ints("id", 0..2500)], 2500)?;
        let ids: Vec<VertexId> = added.ids.iter().map(|id| id.unwrap()).collect();
        let dst: Vec<VertexId> = ids.iter().cycle().skip(1).take(2500).copied().collect();
        load.add_relationships("E", &ids, &dst, &[ints("w", 0..2500)])?;
        load.commit()?;
        acked(&db);
        let mut tx = db.begin();
        tx.create_vertex(&["V"], &[("id", Value::Int(-2))])?;
        tx.commit()?;
        acked(&db);
        db.close()
    };
    let reference = FaultVfs::new();
    let mut states = vec![String::new()];
    workload(&reference, &mut |db| states.push(dump(db))).unwrap();
    assert_eq!(states.len(), 4);
    let sync_points = reference.sync_count();
    for crash_at in 1..=sync_points {
        for torn in [false, true] {
            let vfs = FaultVfs::new();
            vfs.crash_at_sync(crash_at);
            let mut acked = 0;
            let outcome = workload(&vfs, &mut |_| acked += 1);
            assert!(outcome.is_err() && vfs.has_crashed(), "sync {crash_at}");
            let disk = vfs.after_crash(torn);
            let db = Database::open_with_vfs(Arc::new(disk), config.clone())
                .unwrap_or_else(|e| panic!("crash at sync {crash_at}: recovery failed: {e}"));
            let recovered = dump(&db);
            assert!(
                recovered == states[acked] || states.get(acked + 1) == Some(&recovered),
                "crash at sync {crash_at} (torn {torn}) after {acked} acknowledged steps:\n{recovered:.300}"
            );
        }
    }
    assert!(sync_points >= 8, "only {sync_points} sync points");
}

#[test]
fn a_load_and_a_transaction_claiming_the_same_key_first_committer_wins() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    db.create_vertex_table(
        &VertexTableSpec::new("P")
            .property("id", DataType::Int64)
            .primary_key("id"),
    )
    .unwrap();
    // The transaction commits first: the load fails and adds nothing.
    let mut load = db.bulk_load();
    load.add_nodes(&["P"], None, &[ints("id", [1, 2])], 2)
        .unwrap();
    let mut tx = db.begin();
    tx.create_vertex(&["P"], &[("id", Value::Int(2))]).unwrap();
    tx.commit().unwrap();
    let err = load.commit().unwrap_err();
    assert!(matches!(err, Error::Aborted(_)), "{err}");
    assert_eq!(db.begin().scan_label("P").unwrap().len(), 1);
    // The load commits first: the transaction fails.
    let mut tx = db.begin();
    tx.create_vertex(&["P"], &[("id", Value::Int(3))]).unwrap();
    let mut load = db.bulk_load();
    load.add_nodes(&["P"], None, &[ints("id", [3, 4])], 2)
        .unwrap();
    load.commit().unwrap();
    let err = tx.commit().unwrap_err();
    assert!(matches!(err, Error::Aborted(_)), "{err}");
    assert_eq!(db.begin().scan_label("P").unwrap().len(), 3);
}

#[test]
fn a_serializable_transaction_that_scanned_the_label_cannot_commit_after_a_load_into_it() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    let mut tx = db.begin_with(IsolationLevel::Serializable);
    assert!(tx.scan_label("V").unwrap().is_empty());
    tx.create_vertex(&["Seen"], &[("count", Value::Int(0))])
        .unwrap();
    load_ring(&db, 10);
    let err = tx.commit().unwrap_err();
    assert!(matches!(err, Error::Aborted(_)), "{err}");

    // Reading the adjacency of a vertex the load adds edges to conflicts too; a transaction
    // that read something else commits.
    let mut reader = db.begin_with(IsolationLevel::Serializable);
    let v = reader.scan_label("V").unwrap()[0];
    reader.neighbors(v, Some("E"), Direction::Out).unwrap();
    reader.create_vertex(&["Seen"], &[]).unwrap();
    let mut other = db.begin_with(IsolationLevel::Serializable);
    other.scan_label("Unrelated").unwrap();
    other.create_vertex(&["Seen"], &[]).unwrap();
    let mut load = db.bulk_load();
    let w = db.begin().scan_label("V").unwrap()[1];
    load.add_relationships("E", &[v], &[w], &[]).unwrap();
    load.commit().unwrap();
    assert!(matches!(reader.commit().unwrap_err(), Error::Aborted(_)));
    other.commit().unwrap();
}

#[test]
fn a_vertex_deleted_concurrently_aborts_a_load_with_an_edge_to_it() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    load_ring(&db, 4);
    let vs = db.begin().scan_label("V").unwrap();
    let mut load = db.bulk_load();
    load.add_relationships("E", &[vs[0]], &[vs[1]], &[])
        .unwrap();
    let mut tx = db.begin();
    tx.delete_vertex(vs[1], true).unwrap();
    tx.commit().unwrap();
    assert!(matches!(load.commit().unwrap_err(), Error::Aborted(_)));
}

#[test]
fn staged_edges_commit_only_as_a_bulk_load() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    load_ring(&db, 4);
    let vs = db.begin().scan_label("V").unwrap();
    let mut tx = db.begin();
    let rejected = tx
        .stage_edges(
            "E",
            &[vs[0], vs[1]],
            &[vs[2], VertexId::new(vs[0].table, 999)],
            &[],
        )
        .unwrap();
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0].0, 1);
    assert!(matches!(rejected[0].1, Error::NotFound(_)), "{rejected:?}");
    assert!(matches!(
        tx.commit().unwrap_err(),
        Error::InvalidArgument(_)
    ));
    assert_eq!(dump(&db), {
        let fresh = Database::open_in_memory(Config::default()).unwrap();
        load_ring(&fresh, 4);
        dump(&fresh)
    });
}

fn keyed_tables(db: &Database) {
    for name in ["P", "Q"] {
        let spec = VertexTableSpec::new(name)
            .property("id", DataType::Int64)
            .primary_key("id")
            .extra_label("Extra");
        db.create_vertex_table(&spec).unwrap();
    }
}

#[test]
fn staged_nodes_are_checked_found_by_key_and_commit_only_as_a_bulk_load() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    keyed_tables(&db);
    let mut tx = db.begin();
    let ids = vec![
        Value::Int(1),
        Value::Int(2),
        Value::Int(2),
        Value::Null,
        Value::from("x"),
    ];
    let staged = (tx.stage_vertices(&["P"], None, &[("id".to_string(), ids)], 5)).unwrap();
    let rejected: Vec<_> = (staged.rejected.iter())
        .map(|(row, e)| (*row, e.to_string()))
        .collect();
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    assert!(rejected[0].0 == 2 && rejected[0].1.contains("duplicate primary key 2"));
    assert!(rejected[1].0 == 3 && rejected[1].1.contains("requires its primary key 'id'"));
    assert!(matches!(staged.rejected[2], (4, Error::TypeMismatch(_))));
    let (one, two) = (staged.ids[0].unwrap(), staged.ids[1].unwrap());
    assert_eq!(two.offset, one.offset + 1, "accepted rows are consecutive");
    assert_eq!(&staged.ids[2..], &[None, None, None]);
    // A key staged by an earlier call is taken too; lookups find staged nodes.
    let again = [("id".to_string(), vec![Value::Int(1), Value::Int(3)])];
    let again = tx.stage_vertices(&["P"], None, &again, 2).unwrap();
    assert_eq!(again.rejected.len(), 1);
    assert_eq!(again.rejected[0].0, 0);
    assert_eq!(tx.lookup("P", &Value::Int(3)).unwrap(), again.ids[1]);
    assert_eq!(tx.lookup("P", &Value::Int(1)).unwrap(), Some(one));
    assert_eq!(tx.lookup("Q", &Value::Int(1)).unwrap(), None);
    let err = (tx.create_vertex(&["P"], &[("id", Value::Int(2))])).unwrap_err();
    assert!(matches!(err, Error::Constraint(_)), "{err}");
    // Invisible to other reads, never deleted; a plain commit refuses them.
    assert!(tx.scan_label("P").unwrap().is_empty());
    assert!(!tx.vertex_exists(one).unwrap());
    let err = tx.delete_vertex(one, true).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let err = tx.commit().unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(db.begin().scan_label("P").unwrap().is_empty());
}

#[test]
fn nodes_with_labels_of_their_own_go_to_the_table_their_labels_choose() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    keyed_tables(&db);
    let mut load = db.bulk_load();
    let labels: Vec<Vec<String>> = [&["P"][..], &["Q", "Extra"], &["P", "Extra"], &["Q"]]
        .iter()
        .map(|row| row.iter().map(|l| l.to_string()).collect())
        .collect();
    let added = load
        .add_nodes(&[], Some(&labels), &[ints("id", [1, 1, 2, 2])], 4)
        .unwrap();
    assert!(added.rejected.is_empty(), "{:?}", added.rejected);
    let ids: Vec<VertexId> = added.ids.iter().map(|id| id.unwrap()).collect();
    assert_eq!(load.lookup("Q", &Value::Int(2)).unwrap(), Some(ids[3]));
    load.add_relationships("E", &[ids[0]], &[ids[1]], &[])
        .unwrap();
    load.commit().unwrap();
    let mut tx = db.begin();
    let mut labels_of = |v| {
        let mut labels = tx.vertex_labels(v).unwrap();
        labels.sort();
        labels.join(":")
    };
    let found: Vec<String> = ids.iter().map(|&v| labels_of(v)).collect();
    assert_eq!(found, ["P", "Extra:Q", "Extra:P", "Q"]);
    let mut tx = db.begin();
    assert_eq!(tx.scan_label("Extra").unwrap().len(), 2);
    assert_eq!(tx.lookup("P", &Value::Int(2)).unwrap(), Some(ids[2]));
    let out = tx.neighbors(ids[0], Some("E"), Direction::Out).unwrap();
    assert_eq!(out.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [ids[1]]);
}

#[test]
fn two_loads_claiming_one_key_first_committer_wins_and_key_readers_see_the_load() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    keyed_tables(&db);
    let mut first = db.bulk_load();
    let mut second = db.bulk_load();
    first
        .add_nodes(&["P"], None, &[ints("id", [1, 2])], 2)
        .unwrap();
    second
        .add_nodes(&["P"], None, &[ints("id", [2, 3])], 2)
        .unwrap();
    first.commit().unwrap();
    let err = second.commit().unwrap_err();
    assert!(matches!(err, Error::Aborted(_)), "{err}");
    assert_eq!(db.begin().scan_label("P").unwrap().len(), 2);

    // A SERIALIZABLE transaction that looked a key up cannot commit after a load added it.
    let mut reader = db.begin_with(IsolationLevel::Serializable);
    assert_eq!(reader.lookup("P", &Value::Int(9)).unwrap(), None);
    reader.create_vertex(&["Seen"], &[]).unwrap();
    let mut load = db.bulk_load();
    load.add_nodes(&["P"], None, &[ints("id", [9])], 1).unwrap();
    load.commit().unwrap();
    let err = reader.commit().unwrap_err();
    assert!(matches!(err, Error::Aborted(_)), "{err}");
}
