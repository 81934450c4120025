//! The embedded API: behaviour of reads and writes, schema, recovery, and bad input.

mod common;

use common::{TempDir, fault_db, memory_db};
use plexus::testing::FaultVfs;
use plexus::{Config, DataType, Database, Direction, Error, Value, VertexId, VertexTableSpec};
use std::sync::Arc;

fn person_table(db: &Database) {
    db.create_vertex_table(
        &VertexTableSpec::new("Person")
            .property("id", DataType::Int64)
            .property("name", DataType::String)
            .property("age", DataType::Int64)
            .property("score", DataType::Float64)
            .family(&["name", "score"])
            .primary_key("id")
            .extra_label("Admin"),
    )
    .unwrap();
}

#[test]
fn create_read_update_delete_round_trip() {
    let db = memory_db();
    let mut tx = db.begin();
    let a = tx
        .create_vertex(
            &["City", "Capital"],
            &[("name", Value::from("Paris")), ("pop", Value::from(2.1))],
        )
        .unwrap();
    let b = tx
        .create_vertex(&["City"], &[("name", Value::from("Lyon"))])
        .unwrap();
    let e1 = tx
        .create_edge(a, "ROAD", b, &[("km", Value::from(465))])
        .unwrap();
    let e2 = tx
        .create_edge(a, "ROAD", b, &[("km", Value::from(470))])
        .unwrap();
    assert_eq!(
        tx.neighbors(a, Some("ROAD"), Direction::Out).unwrap().len(),
        2,
        "multi-edges, read-your-writes"
    );
    tx.commit().unwrap();

    let mut tx = db.begin();
    assert_eq!(tx.vertex_labels(a).unwrap(), vec!["Capital", "City"]);
    assert_eq!(
        tx.vertex_property(a, "pop").unwrap(),
        Some(Value::from(2.1))
    );
    assert_eq!(tx.edge_property(e2, "km").unwrap(), Some(Value::from(470)));
    assert_eq!(tx.edge_endpoints(e1).unwrap(), (a, b));
    assert_eq!(tx.edge_type(e1).unwrap(), "ROAD");
    assert_eq!(
        tx.neighbors(b, None, Direction::In).unwrap(),
        vec![(e1, a), (e2, a)]
    );
    assert_eq!(tx.scan_label("Capital").unwrap(), vec![a]);
    assert_eq!(tx.scan_label("City").unwrap(), vec![a, b]);
    assert!(tx.scan_label("Nothing").unwrap().is_empty());

    tx.set_vertex_property(a, "pop", Value::Null).unwrap();
    tx.remove_label(a, "Capital").unwrap();
    tx.delete_edge(e1).unwrap();
    assert_eq!(
        tx.vertex_properties(a).unwrap(),
        vec![("name".to_string(), Value::from("Paris"))]
    );
    tx.commit().unwrap();

    let mut tx = db.begin();
    assert!(tx.scan_label("Capital").unwrap().is_empty());
    assert_eq!(
        tx.neighbors(a, None, Direction::Both).unwrap(),
        vec![(e2, b)]
    );
    assert!(!tx.edge_exists(e1).unwrap());
    let err = tx.delete_vertex(a, false).unwrap_err();
    assert!(matches!(err, Error::Constraint(_)), "{err}");
    tx.delete_vertex(a, true).unwrap();
    assert!(!tx.vertex_exists(a).unwrap());
    assert!(tx.neighbors(b, None, Direction::Both).unwrap().is_empty());
    tx.commit().unwrap();
}

#[test]
fn declared_tables_type_check_and_enforce_primary_keys() {
    let db = memory_db();
    person_table(&db);
    let mut tx = db.begin();
    let ada = tx
        .create_vertex(
            &["Person", "Admin"],
            &[
                ("id", Value::from(1)),
                ("name", Value::from("Ada")),
                ("score", Value::from(9.5)),
            ],
        )
        .unwrap();
    let err = tx
        .create_vertex(
            &["Person"],
            &[("id", Value::from(2)), ("age", Value::from("old"))],
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::TypeMismatch(_)) && err.to_string().contains("'age'"),
        "{err}"
    );
    let err = tx
        .create_vertex(&["Person", "Robot"], &[("id", Value::from(3))])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("label 'Robot' is not declared for vertex table 'Person'"),
        "{err}"
    );
    let err = tx
        .create_vertex(&["Person"], &[("name", Value::from("no id"))])
        .unwrap_err();
    assert!(
        matches!(err, Error::Constraint(_)) && err.to_string().contains("primary key"),
        "{err}"
    );
    let err = tx
        .create_vertex(&["Person"], &[("id", Value::from(1))])
        .unwrap_err();
    assert!(err.to_string().contains("duplicate primary key 1"), "{err}");
    let err = tx
        .set_vertex_property(ada, "age", Value::from(1.5))
        .unwrap_err();
    assert!(matches!(err, Error::TypeMismatch(_)), "{err}");
    tx.set_vertex_property(ada, "nickname", Value::from("countess"))
        .unwrap(); // undeclared: dynamic
    tx.commit().unwrap();

    let mut tx = db.begin();
    assert_eq!(tx.lookup("Person", &Value::from(1)).unwrap(), Some(ada));
    assert_eq!(tx.lookup("Person", &Value::from(7)).unwrap(), None);
    assert_eq!(
        tx.vertex_properties(ada).unwrap(),
        vec![
            ("id".into(), Value::from(1)),
            ("name".into(), Value::from("Ada")),
            ("nickname".into(), Value::from("countess")),
            ("score".into(), Value::from(9.5)),
        ]
    );
    assert!(tx.lookup("Nope", &Value::from(1)).is_err());
    // Changing the key frees the old one within the transaction.
    tx.set_vertex_property(ada, "id", Value::from(10)).unwrap();
    assert_eq!(tx.lookup("Person", &Value::from(1)).unwrap(), None);
    let again = tx
        .create_vertex(&["Person"], &[("id", Value::from(1))])
        .unwrap();
    tx.commit().unwrap();
    let mut tx = db.begin();
    assert_eq!(tx.lookup("Person", &Value::from(10)).unwrap(), Some(ada));
    assert_eq!(tx.lookup("Person", &Value::from(1)).unwrap(), Some(again));
    let err = db
        .create_vertex_table(&VertexTableSpec::new("Person"))
        .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    let err = db
        .create_vertex_table(&VertexTableSpec::new("T").primary_key("missing"))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn ids_out_of_range_are_not_found_errors() {
    let db = memory_db();
    let mut tx = db.begin();
    let v = tx.create_vertex(&["A"], &[]).unwrap();
    for bad in [VertexId::new(v.table, 1_000_000), VertexId::new(99, 0)] {
        let err = tx.vertex_property(bad, "x").unwrap_err();
        assert!(
            matches!(err, Error::NotFound(_)) && err.to_string().contains(&bad.to_string()),
            "{err}"
        );
        assert!(tx.create_edge(v, "T", bad, &[]).is_err());
        assert!(tx.set_vertex_property(bad, "x", Value::from(1)).is_err());
    }
    let err = tx.delete_edge(plexus::EdgeId::new(5, 5)).unwrap_err();
    assert!(matches!(err, Error::NotFound(_)), "{err}");
    assert!(
        tx.create_vertex(&[""], &[]).is_err(),
        "empty label name is rejected"
    );
}

/// `vertex_property_many` (the executor's bulk property read) answers exactly what
/// `vertex_property` answers vertex by vertex — across tables, chunks, repeated and unordered
/// ids, declared and dynamic properties, older versions — and declines (`None`) where the
/// vertex-by-vertex read fails or the transaction has vertex writes.
#[test]
fn bulk_property_reads_equal_vertex_by_vertex_reads() {
    let db = memory_db();
    person_table(&db);
    let mut tx = db.begin();
    let mut ids = Vec::new();
    for i in 0..5_000i64 {
        let props = [("id", Value::from(i)), ("age", Value::from(i % 90))];
        ids.push(tx.create_vertex(&["Person"], &props).unwrap());
        if i % 3 == 0 {
            let dynamic = [("age", Value::from(format!("n{i}")))];
            ids.push(tx.create_vertex(&["Other"], &dynamic).unwrap());
        }
    }
    tx.commit().unwrap();
    let old = db.begin();
    let mut tx = db.begin();
    for v in ids.iter().step_by(7) {
        tx.set_vertex_property(*v, "age", Value::from(-1)).unwrap();
    }
    tx.commit().unwrap();
    // Reverse runs, repeats and both tables interleaved.
    let mut mixed: Vec<VertexId> = ids.iter().rev().copied().collect();
    mixed.extend(ids.iter().step_by(5).copied());
    for mut reader in [db.begin(), old] {
        for key in ["age", "id", "unknown"] {
            let bulk = reader.vertex_property_many(&mixed, key).unwrap();
            let single: Vec<_> = (mixed.iter())
                .map(|v| reader.vertex_property(*v, key).unwrap())
                .collect();
            assert_eq!(bulk, single, "{key}");
        }
    }

    let mut tx = db.begin();
    tx.delete_vertex(ids[10], true).unwrap();
    tx.commit().unwrap();
    let mut reader = db.begin();
    assert_eq!(reader.vertex_property_many(&ids[..20], "age"), None);
    let err = reader.vertex_property(ids[10], "age").unwrap_err();
    assert!(matches!(err, Error::NotFound(_)), "{err}");
    let alive = &ids[11..20];
    assert!(reader.vertex_property_many(alive, "age").is_some());
    let bad = [ids[11], VertexId::new(ids[11].table, 1_000_000)];
    assert_eq!(reader.vertex_property_many(&bad, "age"), None);
    assert_eq!(reader.vertex_property_many(&[], "age"), Some(Vec::new()));
    reader
        .set_vertex_property(ids[12], "age", Value::from(7))
        .unwrap();
    assert_eq!(reader.vertex_property_many(alive, "age"), None);
}

/// `edge_property_many` against `edge_property`, the same way.
#[test]
fn bulk_edge_property_reads_equal_edge_by_edge_reads() {
    let db = memory_db();
    let mut tx = db.begin();
    let hubs: Vec<VertexId> = (0..3)
        .map(|_| tx.create_vertex(&["H"], &[]).unwrap())
        .collect();
    let mut edges = Vec::new();
    for i in 0..3_000i64 {
        let (src, dst) = (hubs[i as usize % 3], hubs[(i as usize + 1) % 3]);
        let ty = if i % 4 == 0 { "B" } else { "A" };
        let props = [("w", Value::from(i)), ("s", Value::from(format!("e{i}")))];
        edges.push(tx.create_edge(src, ty, dst, &props).unwrap());
    }
    tx.commit().unwrap();
    let old = db.begin();
    let mut tx = db.begin();
    for e in edges.iter().step_by(9) {
        tx.set_edge_property(*e, "w", Value::from(-1)).unwrap();
    }
    tx.commit().unwrap();
    let mut mixed: Vec<_> = edges.iter().rev().copied().collect();
    mixed.extend(edges.iter().step_by(4).copied());
    for mut reader in [db.begin(), old] {
        for key in ["w", "s", "unknown"] {
            let bulk = reader.edge_property_many(&mixed, key).unwrap();
            let single: Vec<_> = (mixed.iter())
                .map(|e| reader.edge_property(*e, key).unwrap())
                .collect();
            assert_eq!(bulk, single, "{key}");
        }
    }
    let mut tx = db.begin();
    tx.delete_edge(edges[5]).unwrap();
    tx.commit().unwrap();
    let mut reader = db.begin();
    assert_eq!(reader.edge_property_many(&edges[..10], "w"), None);
    assert!(reader.edge_property_many(&edges[6..10], "w").is_some());
    reader
        .set_edge_property(edges[7], "w", Value::from(1))
        .unwrap();
    assert_eq!(reader.edge_property_many(&edges[6..10], "w"), None);
}

/// `vertex_has_labels` (the executor's `n:L` test) agrees with `vertex_labels`: own and extra
/// labels, removed labels, unlabeled vertices, labels created after the reader's first read,
/// and the transaction's own label changes.
#[test]
fn label_tests_agree_with_the_label_list() {
    let db = memory_db();
    person_table(&db);
    let mut tx = db.begin();
    let person = tx
        .create_vertex(&["Person"], &[("id", Value::from(1))])
        .unwrap();
    let admin = tx
        .create_vertex(&["Person"], &[("id", Value::from(2))])
        .unwrap();
    tx.add_label(admin, "Admin").unwrap();
    let plain = tx.create_vertex(&[], &[]).unwrap();
    let multi = tx.create_vertex(&["A", "B"], &[]).unwrap();
    tx.commit().unwrap();
    let mut reader = db.begin();
    reader.vertex_labels(person).unwrap();
    let mut tx = db.begin();
    tx.add_label(multi, "Late").unwrap();
    tx.remove_label(multi, "B").unwrap();
    tx.commit().unwrap();
    let mut fresh = db.begin();
    fresh.add_label(plain, "Mine").unwrap();
    let sets: [&[&str]; 9] = [
        &[],
        &["Person"],
        &["Person", "Admin"],
        &["Admin"],
        &["A", "B"],
        &["A", "Late"],
        &["Late"],
        &["Mine"],
        &["Nope"],
    ];
    for tx in [&mut reader, &mut fresh] {
        for v in [person, admin, plain, multi] {
            let labels = tx.vertex_labels(v).unwrap();
            for set in sets {
                let expected = set.iter().all(|l| labels.iter().any(|h| h == l));
                assert_eq!(
                    tx.vertex_has_labels(v, set).unwrap(),
                    expected,
                    "{v} {set:?}"
                );
            }
        }
    }
}

/// A transaction keeps the catalog and tables it read through (its schema cache); what the
/// schema gains afterwards — a property key, a vertex table, from this transaction or a
/// committed one — must still be seen.
#[test]
fn reads_see_schema_added_after_the_first_read() {
    let db = memory_db();
    let mut setup = db.begin();
    let a = setup
        .create_vertex(&["A"], &[("x", Value::from(1))])
        .unwrap();
    setup.commit().unwrap();

    let mut tx = db.begin();
    assert_eq!(tx.vertex_property(a, "x").unwrap(), Some(Value::from(1)));
    // Another transaction adds a key and a table meanwhile (invisible data, new schema).
    let mut other = db.begin();
    let b = other
        .create_vertex(&["B"], &[("other_key", Value::from(2))])
        .unwrap();
    other.commit().unwrap();
    assert_eq!(tx.vertex_property(a, "other_key").unwrap(), None);
    assert!(
        tx.vertex_property(b, "other_key").is_err(),
        "not in tx's snapshot"
    );
    // This transaction adds a key and a table and reads them back.
    tx.set_vertex_property(a, "fresh", Value::from(3)).unwrap();
    assert_eq!(
        tx.vertex_property(a, "fresh").unwrap(),
        Some(Value::from(3))
    );
    let c = tx.create_vertex(&["C"], &[("y", Value::from(4))]).unwrap();
    assert_eq!(tx.vertex_property(c, "y").unwrap(), Some(Value::from(4)));
    assert_eq!(tx.vertex_property(a, "x").unwrap(), Some(Value::from(1)));
    tx.commit().unwrap();
    let mut after = db.begin();
    assert_eq!(
        after.vertex_property(b, "other_key").unwrap(),
        Some(Value::from(2))
    );
    assert_eq!(after.vertex_property(c, "y").unwrap(), Some(Value::from(4)));
}

#[test]
fn snapshot_is_stable_while_commits_continue() {
    let db = memory_db();
    let mut tx = db.begin();
    let hub = tx.create_vertex(&["N"], &[]).unwrap();
    let first = tx.create_vertex(&["N"], &[]).unwrap();
    tx.create_edge(hub, "E", first, &[]).unwrap();
    tx.commit().unwrap();
    let snap = db.snapshot();
    for _ in 0..50 {
        let mut tx = db.begin();
        let v = tx.create_vertex(&["N"], &[]).unwrap();
        tx.create_edge(hub, "E", v, &[]).unwrap();
        tx.commit().unwrap();
    }
    assert_eq!(snap.neighbors(hub, Some("E"), Direction::Out).len(), 1);
    assert_eq!(
        db.snapshot()
            .neighbors(hub, Some("E"), Direction::Out)
            .len(),
        51
    );
    let (table, _) = snap.edge_tables(Some("E"))[0].clone();
    let mut seen = 0;
    for segment in 0..snap.segment_count(table, true).unwrap() {
        snap.scan_segment(table, true, segment, |_, nbrs| seen += nbrs.len())
            .unwrap();
    }
    assert_eq!(seen, 1);
}

#[test]
fn reopen_recovers_wal_and_checkpoint_and_lock_is_exclusive() {
    let dir = TempDir::new("reopen");
    let (a, b);
    {
        let db = Database::open(&dir.0, Config::default()).unwrap();
        let err = Database::open(&dir.0, Config::default())
            .err()
            .expect("second open refused");
        assert!(
            matches!(err, Error::AlreadyOpen { .. }) && err.to_string().contains("in use"),
            "{err}"
        );
        person_table(&db);
        let mut tx = db.begin();
        a = tx
            .create_vertex(
                &["Person"],
                &[("id", Value::from(1)), ("name", Value::from("A"))],
            )
            .unwrap();
        b = tx
            .create_vertex(&["Thing"], &[("k", Value::from(vec_value()))])
            .unwrap();
        tx.create_edge(a, "OWNS", b, &[("since", Value::from(1999))])
            .unwrap();
        tx.commit().unwrap();
        db.checkpoint().unwrap();
        let mut tx = db.begin();
        tx.set_vertex_property(a, "age", Value::from(36)).unwrap();
        tx.commit().unwrap();
        db.close().unwrap();
    }
    let db = Database::open(&dir.0, Config::default()).unwrap();
    assert_eq!(
        db.recovery_report().replayed_commits,
        1,
        "only the commit after the checkpoint is replayed"
    );
    let mut tx = db.begin();
    assert_eq!(tx.lookup("Person", &Value::from(1)).unwrap(), Some(a));
    assert_eq!(tx.vertex_property(a, "age").unwrap(), Some(Value::from(36)));
    assert_eq!(
        tx.vertex_property(b, "k").unwrap(),
        Some(Value::from(vec_value()))
    );
    let out = tx.neighbors(a, Some("OWNS"), Direction::Out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(
        tx.edge_property(out[0].0, "since").unwrap(),
        Some(Value::from(1999))
    );
    // New ids after recovery never collide with recovered ones.
    let c = tx.create_vertex(&["Thing"], &[]).unwrap();
    assert_ne!(c, b);
}

fn vec_value() -> String {
    "nested 'quoted' ünïcode".to_string()
}

fn committed_db_with_wal() -> FaultVfs {
    let (db, vfs) = fault_db();
    for i in 0..3 {
        let mut tx = db.begin();
        tx.create_vertex(&["A"], &[("i", Value::from(i))]).unwrap();
        tx.commit().unwrap();
    }
    drop(db);
    vfs
}

fn wal_file(vfs: &FaultVfs) -> String {
    use plexus::Vfs;
    vfs.list()
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with("wal-"))
        .max_by_key(|n| {
            let len = vfs.read(n).unwrap().len();
            (len > 0, n.clone())
        })
        .unwrap()
}

#[test]
fn corrupt_wal_record_in_the_middle_refuses_to_open() {
    let vfs = committed_db_with_wal();
    let name = wal_file(&vfs);
    vfs.corrupt(&name, 12, &[0xde, 0xad]).unwrap();
    let err = Database::open_with_vfs(Arc::new(vfs), Config::default())
        .err()
        .expect("refused");
    let text = err.to_string();
    assert!(
        matches!(err, Error::Corruption { .. })
            && text.contains(&name)
            && text.contains("checksum"),
        "{text}"
    );
}

#[test]
fn truncated_manifest_refuses_to_open() {
    use plexus::Vfs;
    let vfs = committed_db_with_wal();
    let manifest = vfs.read("MANIFEST").unwrap();
    let mut file = vfs.create("MANIFEST").unwrap();
    file.write_all(&manifest[..manifest.len() / 2]).unwrap();
    let err = Database::open_with_vfs(Arc::new(vfs), Config::default())
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("MANIFEST") && err.to_string().contains("invalid manifest"),
        "{err}"
    );
}

#[test]
fn corrupt_checkpoint_refuses_to_open() {
    use plexus::Vfs;
    let (db, vfs) = fault_db();
    let mut tx = db.begin();
    tx.create_vertex(&["A"], &[("x", Value::from(1))]).unwrap();
    tx.commit().unwrap();
    db.checkpoint().unwrap();
    drop(db);
    let ckpt = vfs
        .list()
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".ckpt"))
        .unwrap();
    vfs.corrupt(&ckpt, 20, &[0xff]).unwrap();
    let err = Database::open_with_vfs(Arc::new(vfs), Config::default())
        .err()
        .expect("refused");
    assert!(err.to_string().contains(&ckpt), "{err}");
}

#[test]
fn torn_wal_tail_is_cut_and_acknowledged_commits_survive() {
    use plexus::Vfs;
    let vfs = committed_db_with_wal();
    let name = wal_file(&vfs);
    let mut f = vfs.open_append(&name).unwrap();
    f.write_all(&[42, 0, 0, 0, 1, 2]).unwrap(); // half a frame header
    f.sync().unwrap();
    let db = Database::open_with_vfs(Arc::new(vfs), Config::default()).unwrap();
    assert!(db.recovery_report().torn_tail_cut);
    assert_eq!(db.begin().scan_label("A").unwrap().len(), 3);
}

#[test]
fn failed_wal_write_poisons_until_reopen() {
    let (db, vfs) = fault_db();
    let mut tx = db.begin();
    let v = tx.create_vertex(&["A"], &[]).unwrap();
    tx.commit().unwrap();
    vfs.fail_writes_after(0);
    let mut tx = db.begin();
    tx.set_vertex_property(v, "x", Value::from(1)).unwrap();
    let err = tx.commit().unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    let mut tx = db.begin();
    tx.set_vertex_property(v, "x", Value::from(2)).unwrap();
    assert!(matches!(tx.commit().unwrap_err(), Error::Poisoned(_)));
}

#[test]
fn errors_say_whether_to_retry() {
    let db = memory_db();
    let mut tx = db.begin();
    let v = tx.create_vertex(&["A"], &[]).unwrap();
    tx.commit().unwrap();
    let mut t1 = db.begin();
    let mut t2 = db.begin();
    t1.set_vertex_property(v, "x", Value::from(1)).unwrap();
    t2.set_vertex_property(v, "x", Value::from(2)).unwrap();
    t1.commit().unwrap();
    let err = t2.commit().unwrap_err();
    assert!(err.is_retryable(), "{err}");
    assert!(
        err.to_string().contains("property 'x'") && err.to_string().contains("safe to retry"),
        "{err}"
    );
    assert!(!Error::NotFound("x".into()).is_retryable());
}

#[test]
fn the_table_label_can_be_removed_and_restored_without_changing_the_id() {
    let (db, vfs) = fault_db();
    let mut tx = db.begin();
    let v = tx
        .create_vertex(&["Person", "Admin"], &[("name", Value::from("Ada"))])
        .unwrap();
    let w = tx.create_vertex(&["Person"], &[]).unwrap();
    tx.commit().unwrap();
    let mut tx = db.begin();
    tx.remove_label(v, "Person").unwrap();
    assert_eq!(
        tx.vertex_labels(v).unwrap(),
        vec!["Admin"],
        "read-your-writes"
    );
    assert_eq!(tx.scan_label("Person").unwrap(), vec![w]);
    tx.commit().unwrap();
    let mut tx = db.begin();
    assert_eq!(tx.vertex_labels(v).unwrap(), vec!["Admin"]);
    assert_eq!(tx.scan_label("Person").unwrap(), vec![w]);
    assert_eq!(db.snapshot().scan_label("Person").unwrap(), vec![w]);
    assert_eq!(
        tx.vertex_property(v, "name").unwrap(),
        Some(Value::from("Ada")),
        "same vertex, same id"
    );
    drop(tx);
    drop(db);
    let db = Database::open_with_vfs(std::sync::Arc::new(vfs), Config::default()).unwrap();
    let mut tx = db.begin();
    assert_eq!(tx.scan_label("Person").unwrap(), vec![w], "after recovery");
    tx.add_label(v, "Person").unwrap();
    assert_eq!(tx.scan_label("Person").unwrap(), vec![v, w]);
    tx.commit().unwrap();
    assert_eq!(
        db.begin().vertex_labels(v).unwrap(),
        vec!["Admin", "Person"]
    );
}

/// A raised interrupt stops a statement inside one pull — here a 10^10-row aggregation —
/// and rolls its transaction back; the connection's next statement, with a fresh flag, runs.
#[test]
fn an_interrupt_stops_a_statement_between_batches() {
    let db = memory_db();
    let mut conn = db.connect();
    let params = plexus::Params::new();
    let interrupt = plexus::Interrupt::new();
    conn.set_interrupt(interrupt.clone());
    let raiser = {
        let interrupt = interrupt.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            interrupt.raise();
        })
    };
    let endless = "CREATE (:Gone) WITH 1 AS x UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b \
         RETURN count(*)";
    let failed = conn
        .run(endless, &params)
        .and_then(|mut stream| conn.pull(&mut stream).map(drop));
    raiser.join().unwrap();
    let error = failed.expect_err("interrupted");
    assert_eq!(error.code, plexus::INTERRUPTED, "{error}");
    conn.set_interrupt(plexus::Interrupt::new());
    let mut stream = conn
        .run("MATCH (g:Gone) RETURN count(g) AS n", &params)
        .unwrap();
    let rows = conn.pull(&mut stream).unwrap().expect("a row").rows;
    assert!(
        matches!(rows.as_slice(), [row] if matches!(row.as_slice(), [plexus::CypherValue::Int(0)])),
        "{rows:?}"
    );
}
