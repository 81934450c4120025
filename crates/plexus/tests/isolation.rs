//! The classic isolation anomalies, expressed on graphs, checked per isolation level.
//!
//! | anomaly       | SNAPSHOT            | SERIALIZABLE |
//! |---------------|---------------------|--------------|
//! | dirty write   | prevented (abort)   | prevented    |
//! | dirty read    | prevented           | prevented    |
//! | lost update   | prevented (abort)   | prevented    |
//! | read skew     | prevented           | prevented    |
//! | write skew    | ALLOWED             | prevented    |
//! | phantom       | ALLOWED             | prevented    |

mod common;

use common::memory_db;
use plexus::{
    AbortReason, DataType, Database, Direction, Error, IsolationLevel, Transaction, Value,
    VertexId, VertexTableSpec,
};

const LEVELS: [IsolationLevel; 2] = [IsolationLevel::Snapshot, IsolationLevel::Serializable];

fn setup() -> (Database, VertexId, VertexId) {
    let db = memory_db();
    let mut tx = db.begin();
    let x = tx
        .create_vertex(
            &["Doctor"],
            &[("on_call", Value::from(true)), ("n", Value::from(0))],
        )
        .unwrap();
    let y = tx
        .create_vertex(
            &["Doctor"],
            &[("on_call", Value::from(true)), ("n", Value::from(0))],
        )
        .unwrap();
    tx.commit().unwrap();
    (db, x, y)
}

fn int(tx: &mut plexus::Transaction, v: VertexId, key: &str) -> i64 {
    tx.vertex_property(v, key)
        .unwrap()
        .and_then(|x| x.as_int())
        .unwrap()
}

fn is_abort(result: Result<u64, Error>) -> bool {
    matches!(result, Err(Error::Aborted(_)))
}

#[test]
fn dirty_write_is_prevented() {
    for level in LEVELS {
        let (db, x, _) = setup();
        let mut t1 = db.begin_with(level);
        let mut t2 = db.begin_with(level);
        t1.set_vertex_property(x, "n", Value::from(1)).unwrap();
        t2.set_vertex_property(x, "n", Value::from(2)).unwrap();
        t2.commit().unwrap();
        assert!(
            is_abort(t1.commit()),
            "{level:?}: the later committer must abort"
        );
        assert_eq!(int(&mut db.begin(), x, "n"), 2);
    }
}

#[test]
fn dirty_read_is_prevented() {
    for level in LEVELS {
        let (db, x, y) = setup();
        let mut t1 = db.begin_with(level);
        t1.set_vertex_property(x, "n", Value::from(99)).unwrap();
        let e = t1.create_edge(x, "KNOWS", y, &[]).unwrap();
        let mut t2 = db.begin_with(level);
        assert_eq!(
            int(&mut t2, x, "n"),
            0,
            "{level:?}: uncommitted value invisible"
        );
        assert!(
            t2.neighbors(x, None, Direction::Out).unwrap().is_empty(),
            "{level:?}: uncommitted edge invisible"
        );
        assert!(!t2.edge_exists(e).unwrap());
        t1.rollback();
        assert_eq!(int(&mut db.begin(), x, "n"), 0);
    }
}

#[test]
fn lost_update_is_prevented() {
    for level in LEVELS {
        let (db, x, _) = setup();
        let mut t1 = db.begin_with(level);
        let mut t2 = db.begin_with(level);
        let n1 = int(&mut t1, x, "n");
        let n2 = int(&mut t2, x, "n");
        t1.set_vertex_property(x, "n", Value::from(n1 + 1)).unwrap();
        t2.set_vertex_property(x, "n", Value::from(n2 + 1)).unwrap();
        t1.commit().unwrap();
        let err = t2.commit().unwrap_err();
        assert!(
            matches!(err, Error::Aborted(AbortReason::WriteConflict { .. })),
            "{level:?}: {err}"
        );
        assert_eq!(int(&mut db.begin(), x, "n"), 1);
    }
}

#[test]
fn read_skew_is_prevented() {
    for level in LEVELS {
        let (db, x, y) = setup();
        let mut t1 = db.begin_with(level);
        assert_eq!(int(&mut t1, x, "n"), 0);
        let mut t2 = db.begin_with(level);
        t2.set_vertex_property(x, "n", Value::from(-5)).unwrap();
        t2.set_vertex_property(y, "n", Value::from(5)).unwrap();
        t2.create_edge(x, "PAID", y, &[]).unwrap();
        t2.commit().unwrap();
        assert_eq!(
            int(&mut t1, y, "n"),
            0,
            "{level:?}: t1 keeps reading its snapshot"
        );
        assert!(t1.neighbors(y, None, Direction::In).unwrap().is_empty());
        t1.commit().unwrap();
    }
}

/// Both doctors are on call; each transaction checks that the other one is and goes off call.
fn write_skew(level: IsolationLevel) -> (Result<u64, Error>, Result<u64, Error>) {
    let (db, x, y) = setup();
    let mut t1 = db.begin_with(level);
    let mut t2 = db.begin_with(level);
    for (tx, me, other) in [(&mut t1, x, y), (&mut t2, y, x)] {
        assert_eq!(
            tx.vertex_property(other, "on_call").unwrap(),
            Some(Value::from(true))
        );
        tx.set_vertex_property(me, "on_call", Value::from(false))
            .unwrap();
    }
    (t1.commit(), t2.commit())
}

/// Two SERIALIZABLE transactions each read the other's `on_call` flag (of `a` / `b`, twice in
/// one bulk read) and clear their own: the second commit must abort as after single reads —
/// the bulk reads the executor uses record their reads alike.
fn assert_bulk_write_skew_aborts<E: Copy>(
    db: &Database,
    [a, b]: [E; 2],
    read: impl Fn(&mut Transaction, &[E]) -> Option<Vec<Option<Value>>>,
    clear: impl Fn(&mut Transaction, E),
) {
    let mut t1 = db.begin_with(IsolationLevel::Serializable);
    let mut t2 = db.begin_with(IsolationLevel::Serializable);
    for (tx, me, other) in [(&mut t1, a, b), (&mut t2, b, a)] {
        let on_call = read(tx, &[other, other]).unwrap();
        assert_eq!(on_call, vec![Some(Value::from(true)); 2]);
        clear(tx, me);
    }
    assert!(t1.commit().is_ok());
    let err = t2.commit().unwrap_err();
    assert!(
        matches!(err, Error::Aborted(AbortReason::ReadValidation { .. })),
        "{err}"
    );
}

#[test]
fn write_skew_through_bulk_reads_aborts_under_serializable() {
    let (db, x, y) = setup();
    assert_bulk_write_skew_aborts(
        &db,
        [x, y],
        |tx, vs| tx.vertex_property_many(vs, "on_call"),
        |tx, v| tx.set_vertex_property(v, "on_call", false.into()).unwrap(),
    );
}

#[test]
fn write_skew_through_bulk_relationship_reads_aborts_under_serializable() {
    let (db, x, y) = setup();
    let mut tx = db.begin();
    let on_call = [("on_call", Value::from(true))];
    let ex = tx.create_edge(x, "SHIFT", y, &on_call).unwrap();
    let ey = tx.create_edge(y, "SHIFT", x, &on_call).unwrap();
    tx.commit().unwrap();
    assert_bulk_write_skew_aborts(
        &db,
        [ex, ey],
        |tx, es| tx.edge_property_many(es, "on_call"),
        |tx, e| tx.set_edge_property(e, "on_call", false.into()).unwrap(),
    );
}

#[test]
fn write_skew_is_allowed_under_snapshot_isolation() {
    let (r1, r2) = write_skew(IsolationLevel::Snapshot);
    assert!(r1.is_ok() && r2.is_ok());
}

#[test]
fn write_skew_aborts_under_serializable() {
    let (r1, r2) = write_skew(IsolationLevel::Serializable);
    assert!(r1.is_ok());
    let err = r2.unwrap_err();
    assert!(
        matches!(err, Error::Aborted(AbortReason::ReadValidation { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("on_call"), "{err}");
}

/// T1 counts x's KNOWS edges and records the count; T2 concurrently adds a KNOWS edge to x.
fn adjacency_phantom(level: IsolationLevel) -> Result<u64, Error> {
    let (db, x, y) = setup();
    let mut t1 = db.begin_with(level);
    let degree = t1
        .neighbors(x, Some("KNOWS"), Direction::Out)
        .unwrap()
        .len() as i64;
    let mut t2 = db.begin_with(level);
    t2.create_edge(x, "KNOWS", y, &[]).unwrap();
    t2.commit().unwrap();
    t1.set_vertex_property(x, "degree", Value::from(degree))
        .unwrap();
    t1.commit()
}

#[test]
fn adjacency_phantom_is_allowed_under_snapshot_isolation() {
    assert!(adjacency_phantom(IsolationLevel::Snapshot).is_ok());
}

#[test]
fn adjacency_phantom_aborts_under_serializable() {
    let err = adjacency_phantom(IsolationLevel::Serializable).unwrap_err();
    assert!(err.to_string().contains("outgoing 'KNOWS' edges"), "{err}");
}

/// T1 reads x's outgoing KNOWS edges, T2 concurrently creates `edges` KNOWS edges from y to
/// y (none at x) and commits, then T1 writes and commits (serializable).
fn adjacency_beside(edges: usize) -> Result<u64, Error> {
    let (db, x, y) = setup();
    let mut t1 = db.begin_with(IsolationLevel::Serializable);
    let degree = t1
        .neighbors(x, Some("KNOWS"), Direction::Out)
        .unwrap()
        .len() as i64;
    let mut t2 = db.begin_with(IsolationLevel::Serializable);
    for _ in 0..edges {
        t2.create_edge(y, "KNOWS", y, &[]).unwrap();
    }
    t2.commit().unwrap();
    t1.set_vertex_property(x, "degree", Value::from(degree))
        .unwrap();
    t1.commit()
}

/// A commit creating a few edges conflicts only with reads of their own ends' adjacency; one
/// creating more than `COARSE_ADJACENCY_EDGES` (4,096) records it per table, type and side,
/// and conflicts with a read of any vertex's adjacency there — more aborts, never fewer.
#[test]
fn a_commit_of_many_edges_conflicts_with_adjacency_reads_per_table() {
    assert!(adjacency_beside(10).is_ok());
    let err = adjacency_beside(5_000).unwrap_err();
    assert!(err.to_string().contains("outgoing 'KNOWS' edges"), "{err}");
}

/// The phantom pattern: T1 reads a predicate, T2 commits an insert into it, T1 then writes
/// something else and commits. Only SERIALIZABLE must abort T1.
fn assert_phantom_aborts_only_when_serializable(
    prepare: impl Fn(&Database),
    read: impl Fn(&mut Transaction),
    insert: impl Fn(&mut Transaction),
) {
    for level in LEVELS {
        let (db, x, _) = setup();
        prepare(&db);
        let mut t1 = db.begin_with(level);
        read(&mut t1);
        let mut t2 = db.begin_with(level);
        insert(&mut t2);
        t2.commit().unwrap();
        t1.set_vertex_property(x, "seen", Value::from(true))
            .unwrap();
        assert_eq!(
            is_abort(t1.commit()),
            level == IsolationLevel::Serializable,
            "{level:?}"
        );
    }
}

#[test]
fn label_scan_phantom_aborts_under_serializable_only() {
    assert_phantom_aborts_only_when_serializable(
        |_| {},
        |t1| assert_eq!(t1.scan_label("Doctor").unwrap().len(), 2),
        |t2| {
            t2.create_vertex(&["Doctor"], &[]).unwrap();
        },
    );
}

/// The phantom pattern through Cypher: `query` (whose EXPLAIN holds `operator`) returns
/// `count` in the reader's transaction, which then writes; `insert` commits concurrently.
/// Only SERIALIZABLE must abort the reader.
fn assert_query_phantom_aborts_only_when_serializable(
    query: &str,
    operator: &str,
    count: i64,
    insert: &str,
) {
    let params = plexus::Params::new();
    let explain = setup()
        .0
        .connect()
        .execute(&format!("EXPLAIN {query}"), &params)
        .unwrap();
    assert!(
        (explain.plan.as_deref().unwrap()).contains(operator),
        "{explain:?}"
    );
    for level in LEVELS {
        let (db, _, _) = setup();
        let mut reader = db.connect();
        reader.begin_with(level).unwrap();
        let found = reader.execute(query, &params).unwrap();
        assert!(
            matches!(found.rows.as_slice(), [row] if matches!(row.as_slice(), [plexus::CypherValue::Int(n)] if *n == count)),
            "{:?}",
            found.rows
        );
        reader.execute("CREATE (:Seen)", &params).unwrap();
        db.connect().execute(insert, &params).unwrap();
        let committed = reader.commit();
        assert_eq!(
            committed.is_err(),
            level == IsolationLevel::Serializable,
            "{level:?}: {committed:?}"
        );
    }
}

/// A Cypher union of label scans (`MATCH (n:Doctor|Nurse)`, `UnionNodeByLabelsScan`) reads
/// each label's membership: a concurrent insert of the first `:Nurse` — a label, and a table,
/// that did not exist when the reader scanned, which an all-nodes scan would not cover — is a
/// phantom under SERIALIZABLE.
#[test]
fn union_label_scan_phantom_aborts_under_serializable_only() {
    assert_query_phantom_aborts_only_when_serializable(
        "MATCH (n:Doctor|Nurse) RETURN count(*)",
        "UnionNodeByLabelsScan s0:Doctor|Nurse",
        2,
        "CREATE (:Nurse)",
    );
}

/// `MATCH ()-[r:T]->() RETURN count(*)` is answered from the type's rows
/// (`RelationshipCountFromRows`), not by expanding every node: the count still reads the
/// type, so a concurrent new relationship of it — the first one here, of a type that did
/// not exist when the reader counted — is a phantom under SERIALIZABLE.
#[test]
fn relationship_count_phantom_aborts_under_serializable_only() {
    assert_query_phantom_aborts_only_when_serializable(
        "MATCH ()-[r:KNOWS]->() RETURN count(*)",
        "RelationshipCountFromRows",
        0,
        "MATCH (a:Doctor) CREATE (a)-[:KNOWS]->(a)",
    );
}

/// `MATCH ()-[r]->() RETURN count(*)` counts every type's rows: it reads the whole edge
/// set, so a concurrent relationship of a type that did not exist when the reader counted
/// is a phantom under SERIALIZABLE.
#[test]
fn count_of_all_relationships_phantom_aborts_under_serializable_only() {
    assert_query_phantom_aborts_only_when_serializable(
        "MATCH ()-[r]->() RETURN count(*)",
        "RelationshipCountFromRows",
        0,
        "MATCH (a:Doctor) CREATE (a)-[:KNOWS]->(a)",
    );
}

#[test]
fn primary_key_lookup_phantom_aborts_under_serializable_only() {
    assert_phantom_aborts_only_when_serializable(
        |db| {
            let spec = VertexTableSpec::new("Acct")
                .property("id", DataType::Int64)
                .primary_key("id");
            db.create_vertex_table(&spec).unwrap();
        },
        |t1| assert_eq!(t1.lookup("Acct", &Value::from(7)).unwrap(), None),
        |t2| {
            t2.create_vertex(&["Acct"], &[("id", Value::from(7))])
                .unwrap();
        },
    );
}

/// An index seek reads only its candidates; a concurrent update that moves another vertex
/// into the sought value is a phantom all the same (as it is for the label scan it replaces).
#[test]
fn index_seek_phantom_by_update_aborts_under_serializable_only() {
    assert_phantom_aborts_only_when_serializable(
        |db| {
            db.create_index("Doctor", "n", Some("doctor_n")).unwrap();
        },
        |t1| {
            let five = plexus::KeyRange::equal(&Value::from(5)).unwrap();
            let found = t1.seek_by_index("Doctor", "n", &five).unwrap();
            assert_eq!(
                found,
                Some(Vec::new()),
                "the index answers: nobody has n = 5"
            );
        },
        |t2| {
            // A doctor other than the one T1 writes (`seen` on the first created).
            let doctors = t2.scan_label("Doctor").unwrap();
            let other = *doctors.iter().max().unwrap();
            t2.set_vertex_property(other, "n", Value::from(5)).unwrap();
        },
    );
}

#[test]
fn concurrent_edge_appends_to_one_vertex_do_not_conflict() {
    for level in LEVELS {
        let (db, hub, y) = setup();
        let mut txs: Vec<_> = (0..4).map(|_| db.begin_with(level)).collect();
        for tx in &mut txs {
            tx.create_edge(hub, "LIKES", y, &[]).unwrap();
            tx.create_edge(y, "LIKES", hub, &[]).unwrap();
        }
        for tx in txs {
            tx.commit().unwrap();
        }
        assert_eq!(
            db.begin()
                .neighbors(hub, Some("LIKES"), Direction::Both)
                .unwrap()
                .len(),
            8
        );
    }
}

#[test]
fn deleting_a_vertex_conflicts_with_a_concurrent_new_edge() {
    for level in LEVELS {
        let (db, x, y) = setup();
        let mut t1 = db.begin_with(level);
        let mut t2 = db.begin_with(level);
        t1.delete_vertex(x, false).unwrap();
        t2.create_edge(y, "KNOWS", x, &[]).unwrap();
        t2.commit().unwrap();
        assert!(is_abort(t1.commit()), "{level:?}: no dangling edge");
        // And the other way round.
        let mut t3 = db.begin_with(level);
        let mut t4 = db.begin_with(level);
        t3.delete_vertex(y, true).unwrap();
        t4.create_edge(x, "KNOWS", y, &[]).unwrap();
        t3.commit().unwrap();
        assert!(is_abort(t4.commit()), "{level:?}");
    }
}

#[test]
fn concurrent_primary_key_inserts_conflict() {
    let (db, _, _) = setup();
    db.create_vertex_table(
        &plexus::VertexTableSpec::new("Acct")
            .property("id", plexus::DataType::Int64)
            .primary_key("id"),
    )
    .unwrap();
    let mut t1 = db.begin();
    let mut t2 = db.begin();
    t1.create_vertex(&["Acct"], &[("id", Value::from(1))])
        .unwrap();
    t2.create_vertex(&["Acct"], &[("id", Value::from(1))])
        .unwrap();
    t1.commit().unwrap();
    assert!(is_abort(t2.commit()));
    assert_eq!(db.begin().scan_label("Acct").unwrap().len(), 1);
}

#[test]
fn read_only_transactions_never_abort_even_when_serializable() {
    let (db, x, y) = setup();
    let mut reader = db.begin_with(IsolationLevel::Serializable);
    let before = int(&mut reader, x, "n");
    let mut writer = db.begin_with(IsolationLevel::Serializable);
    writer.set_vertex_property(x, "n", Value::from(7)).unwrap();
    writer.create_edge(x, "KNOWS", y, &[]).unwrap();
    writer.commit().unwrap();
    assert_eq!(int(&mut reader, x, "n"), before);
    assert!(
        reader
            .neighbors(x, None, Direction::Out)
            .unwrap()
            .is_empty()
    );
    assert!(reader.commit().is_ok());
}

#[test]
fn removing_a_table_label_is_a_phantom_for_label_scans() {
    assert_phantom_aborts_only_when_serializable(
        |_| {},
        |t1| assert_eq!(t1.scan_label("Doctor").unwrap().len(), 2),
        |t2| {
            let doctors = t2.scan_label("Doctor").unwrap();
            t2.remove_label(doctors[1], "Doctor").unwrap();
        },
    );
}

/// A Cypher id seek (`MATCH (n) WHERE id(n) = $id`, `NodeByIdSeek`) reads the sought node's
/// existence and labels, not the label: under SERIALIZABLE a concurrent delete of that node
/// aborts a reader that wrote, while a concurrent insert of another node does not.
#[test]
fn id_seek_conflicts_with_a_concurrent_delete_of_the_sought_node_only() {
    let queries = [
        "MATCH (n:Doctor) WHERE id(n) = $id RETURN count(*)",
        "MATCH (n) WHERE elementId(n) = $element_id RETURN count(*)",
    ];
    for query in queries {
        for (level, concurrent, aborts) in [
            (
                IsolationLevel::Serializable,
                "MATCH (n) WHERE id(n) = $id DETACH DELETE n",
                true,
            ),
            (
                IsolationLevel::Snapshot,
                "MATCH (n) WHERE id(n) = $id DETACH DELETE n",
                false,
            ),
            (IsolationLevel::Serializable, "CREATE (:Doctor)", false),
        ] {
            let (db, x, _) = setup();
            let id = (i64::from(x.table) << 32) | i64::from(x.offset);
            let params = plexus::Params::from([
                ("id".to_string(), plexus::CypherValue::Int(id)),
                (
                    "element_id".to_string(),
                    plexus::CypherValue::from(x.to_string()),
                ),
            ]);
            let explain = db
                .connect()
                .execute(&format!("EXPLAIN {query}"), &params)
                .unwrap();
            assert!(
                explain.plan.as_deref().unwrap().contains("NodeByIdSeek"),
                "{explain:?}"
            );
            let mut reader = db.connect();
            reader.begin_with(level).unwrap();
            let found = reader.execute(query, &params).unwrap();
            assert!(
                matches!(found.rows.as_slice(), [row] if matches!(row.as_slice(), [plexus::CypherValue::Int(1)])),
                "{query}: {:?}",
                found.rows
            );
            reader.execute("CREATE (:Seen)", &params).unwrap();
            db.connect().execute(concurrent, &params).unwrap();
            let committed = reader.commit();
            assert_eq!(
                committed.is_err(),
                aborts,
                "{query} at {level:?} after {concurrent}: {committed:?}"
            );
        }
    }
}

/// An id seek that finds nothing — its id beyond the rows allocated so far — is a phantom read
/// of that id: a concurrent create of the node it names aborts a SERIALIZABLE reader that
/// wrote.
#[test]
fn id_seek_of_a_missing_node_conflicts_with_its_concurrent_create() {
    for level in LEVELS {
        let (db, _, y) = setup();
        // The next Doctor the table allocates.
        let next = (i64::from(y.table) << 32) | i64::from(y.offset + 1);
        let params = plexus::Params::from([("id".to_string(), plexus::CypherValue::Int(next))]);
        let mut reader = db.connect();
        reader.begin_with(level).unwrap();
        let found = reader
            .execute("MATCH (n) WHERE id(n) = $id RETURN n", &params)
            .unwrap();
        assert!(found.rows.is_empty());
        reader.execute("CREATE (:Seen)", &params).unwrap();
        let created = db
            .connect()
            .execute("CREATE (n:Doctor) RETURN id(n) = $id", &params)
            .unwrap();
        assert!(matches!(
            created.rows[0].as_slice(),
            [plexus::CypherValue::Bool(true)]
        ));
        let committed = reader.commit();
        assert_eq!(
            committed.is_err(),
            level == IsolationLevel::Serializable,
            "{level:?}: {committed:?}"
        );
    }
}
