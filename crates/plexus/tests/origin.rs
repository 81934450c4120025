//! Replication origins (`Transaction::set_origin`, `Database::replication_origin`): a
//! follower's source position is committed with the writes that applied it, so after a
//! reopen, a checkpoint or a crash at any sync point the recovered position is exactly the
//! recovered graph's — the basis of the PostgreSQL mirror's exactly-once restarts.

use plexus::testing::FaultVfs;
use plexus::{Config, Database, DurabilityMode, Error, Value};
use std::sync::Arc;

/// The graph's newest `V.n`, or -1 with none.
fn newest_n(db: &Database) -> i64 {
    let mut tx = db.begin();
    let mut newest = -1;
    for v in tx.scan_label("V").unwrap() {
        if let Some(Value::Int(n)) = tx.vertex_property(v, "n").unwrap() {
            newest = newest.max(n);
        }
    }
    newest
}

/// Applies "source transaction" `n`: one vertex `V {n}` and origin `pg` at position `n`.
fn apply(db: &Database, n: i64) -> Result<(), Error> {
    let mut tx = db.begin();
    tx.create_vertex(&["V"], &[("n", Value::Int(n))])?;
    tx.set_origin("pg", n as u64)?;
    tx.commit()?;
    Ok(())
}

#[test]
fn the_position_commits_with_the_writes_and_survives_reopen_and_checkpoint() {
    let dir = std::env::temp_dir().join(format!("plexus-origin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let db = Database::open(&dir, Config::default()).unwrap();
        assert_eq!(db.replication_origin("pg"), None);
        for n in 0..5 {
            apply(&db, n).unwrap();
        }
        let (position, ts) = db.replication_origin("pg").unwrap();
        assert_eq!(position, 4);
        assert!(db.durable_ts() >= ts, "fsync mode: durable at commit");
        // a rolled-back transaction moves nothing
        let mut tx = db.begin();
        tx.create_vertex(&["V"], &[("n", Value::Int(99))]).unwrap();
        tx.set_origin("pg", 99).unwrap();
        tx.rollback();
        assert_eq!(db.replication_origin("pg").unwrap().0, 4);
        // a position alone (a source transaction that touched nothing mapped) commits too
        let mut tx = db.begin();
        tx.set_origin("other", 7).unwrap();
        tx.commit().unwrap();
        db.close().unwrap();
    }
    {
        let db = Database::open(&dir, Config::default()).unwrap();
        assert_eq!(
            db.replication_origin("pg").unwrap().0,
            4,
            "replayed from the WAL"
        );
        assert_eq!(db.replication_origin("other").unwrap().0, 7);
        db.checkpoint().unwrap();
        apply(&db, 5).unwrap();
        db.checkpoint().unwrap();
        db.close().unwrap();
    }
    {
        let db = Database::open(&dir, Config::default()).unwrap();
        assert_eq!(
            db.replication_origin("pg").unwrap().0,
            5,
            "read from the checkpoint"
        );
        assert_eq!(db.replication_origin("other").unwrap().0, 7);
        assert_eq!(newest_n(&db), 5);
        // a bulk load (the initial copy) carries a position too
        let mut load = db.bulk_load();
        load.add_nodes(&["V"], None, &[("n".into(), vec![Value::Int(6)])], 1)
            .unwrap();
        load.set_origin("pg", 6).unwrap();
        load.commit().unwrap();
        db.close().unwrap();
    }
    let db = Database::open(&dir, Config::default()).unwrap();
    assert_eq!(db.replication_origin("pg").unwrap().0, 6);
    assert_eq!(newest_n(&db), 6);
    drop(db);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_names_are_refused_and_one_follower_claims_an_origin() {
    let db = Database::open_in_memory(Config::default()).unwrap();
    let mut tx = db.begin();
    assert!(matches!(
        tx.set_origin("", 1),
        Err(Error::InvalidArgument(_))
    ));
    let long = "x".repeat(256);
    assert!(matches!(
        tx.set_origin(&long, 1),
        Err(Error::InvalidArgument(_))
    ));
    let claim = db.claim_replication_origin("pg").unwrap();
    assert_eq!(claim.name(), "pg");
    let second = db.claim_replication_origin("pg");
    assert!(matches!(&second, Err(Error::InvalidArgument(m)) if m.contains("already")));
    db.claim_replication_origin("other").unwrap();
    drop(claim);
    db.claim_replication_origin("pg").unwrap();
}

#[test]
fn sync_wal_makes_a_periodic_commit_durable() {
    let config = Config {
        durability: DurabilityMode::None,
        ..Config::default()
    };
    let db = Database::open_with_vfs(Arc::new(FaultVfs::new()), config).unwrap();
    apply(&db, 1).unwrap();
    let (_, ts) = db.replication_origin("pg").unwrap();
    db.sync_wal().unwrap();
    assert!(db.durable_ts() >= ts);
}

/// Crashes a follower's workload (commits, a checkpoint, a bulk load, more commits) at every
/// sync point: whatever recovery keeps, the recovered position is the recovered graph's.
#[test]
fn at_every_crash_point_the_recovered_position_matches_the_recovered_graph() {
    let config = Config {
        background_maintenance: false,
        ..Config::default()
    };
    let workload = |vfs: &FaultVfs| -> Result<(), Error> {
        let db = Database::open_with_vfs(Arc::new(vfs.clone()), config.clone())?;
        for n in 0..4 {
            apply(&db, n)?;
        }
        db.checkpoint()?;
        let mut load = db.bulk_load();
        load.add_nodes(&["V"], None, &[("n".into(), vec![Value::Int(4)])], 1)?;
        load.set_origin("pg", 4)?;
        load.commit()?;
        for n in 5..8 {
            apply(&db, n)?;
        }
        db.close()
    };
    let reference = FaultVfs::new();
    workload(&reference).unwrap();
    let sync_points = reference.sync_count();
    assert!(sync_points >= 8, "only {sync_points} sync points");
    for crash_at in 1..=sync_points {
        for torn in [false, true] {
            let vfs = FaultVfs::new();
            vfs.crash_at_sync(crash_at);
            assert!(
                workload(&vfs).is_err() && vfs.has_crashed(),
                "sync {crash_at}"
            );
            let db = Database::open_with_vfs(Arc::new(vfs.after_crash(torn)), config.clone())
                .unwrap_or_else(|e| panic!("crash at sync {crash_at}: recovery failed: {e}"));
            let position = db.replication_origin("pg").map_or(-1, |(p, _)| p as i64);
            assert_eq!(
                position,
                newest_n(&db),
                "crash at sync {crash_at} (torn {torn}): position and graph disagree"
            );
        }
    }
}

/// A follower's protected labels and relationship types are read-only to everyone else while
/// its claim lasts; its own transactions (`OriginClaim::begin`) write them; other labels stay
/// writable and reads are unaffected.
#[test]
fn protected_labels_are_read_only_to_everyone_but_their_follower() {
    use plexus::Params;
    let db = Database::open_in_memory(Config::default()).unwrap();
    let mut conn = db.connect();
    let run = |conn: &mut plexus::Connection, q: &str| conn.execute(q, &Params::new());
    run(
        &mut conn,
        "CREATE (:Person {id: 1})-[:KNOWS]->(:Person {id: 2}), (:Note {id: 3})",
    )
    .unwrap();
    let claim = db.claim_replication_origin("pg").unwrap();
    claim.protect(
        &["Person".to_string()],
        &["KNOWS".to_string()],
        "mirrored from PostgreSQL by mirror 'pg'",
    );
    for write in [
        "CREATE (:Person {id: 9})",
        "MATCH (p:Person {id: 1}) SET p.name = 'x'",
        "MATCH (p:Person {id: 1}) REMOVE p.id",
        "MATCH (p:Person {id: 1}) SET p:Vip",
        "MATCH (p:Person {id: 1}) DETACH DELETE p",
        "MATCH (n:Note) SET n:Person",
        "MATCH ()-[k:KNOWS]->() SET k.since = 2020",
        "MATCH ()-[k:KNOWS]->() DELETE k",
        "MATCH (n:Note) CREATE (n)-[:KNOWS]->(n)",
    ] {
        let err = run(&mut conn, write).expect_err(write);
        assert!(
            err.to_string()
                .contains("is read-only here: it is mirrored from PostgreSQL"),
            "{write}: {err}"
        );
    }
    // reads, other labels, and edges of other types between protected vertices are fine
    let count = run(&mut conn, "MATCH (p:Person) RETURN count(p)").unwrap();
    assert!(matches!(count.rows[0][0], plexus::CypherValue::Int(2)));
    run(&mut conn, "CREATE (:Note {id: 4})").unwrap();
    run(
        &mut conn,
        "MATCH (a:Person {id: 1}), (n:Note {id: 4}) CREATE (n)-[:ABOUT]->(a)",
    )
    .unwrap();
    // the follower writes what it protects
    let mut tx = claim.begin();
    let v = tx
        .create_vertex(&["Person"], &[("id", Value::Int(5))])
        .unwrap();
    tx.set_vertex_property(v, "name", Value::from("Eve"))
        .unwrap();
    tx.commit().unwrap();
    drop(claim);
    run(&mut conn, "MATCH (p:Person {id: 5}) SET p.name = 'Ann'").unwrap();
}

/// `CALL db.mirror.status()` lists the followers that publish a status through their claim,
/// on every connection, until the claim is dropped.
#[test]
fn followers_publish_their_status_to_db_mirror_status() {
    use plexus::{CypherValue, Params};
    let db = Database::open_in_memory(Config::default()).unwrap();
    let claim = db.claim_replication_origin("pg").unwrap();
    claim.publish_status(Arc::new(|| {
        vec![
            ("state", Value::from("streaming")),
            ("sourceTransactions", Value::Int(42)),
        ]
    }));
    let mut conn = db.connect();
    let query = "CALL db.mirror.status() YIELD name, state, sourceTransactions, pending \
                 RETURN name, state, sourceTransactions, pending";
    let result = conn.execute(query, &Params::new()).unwrap();
    assert_eq!(result.rows.len(), 1);
    let row = &result.rows[0];
    assert!(
        matches!(&row[0], CypherValue::String(s) if &**s == "pg"),
        "{row:?}"
    );
    assert!(
        matches!(&row[1], CypherValue::String(s) if &**s == "streaming"),
        "{row:?}"
    );
    assert!(matches!(row[2], CypherValue::Int(42)), "{row:?}");
    assert!(matches!(row[3], CypherValue::Null), "{row:?}");
    drop(claim);
    let result = conn.execute(query, &Params::new()).unwrap();
    assert!(result.rows.is_empty());
}
