//! The mirror end to end: a throwaway PostgreSQL, the fraud and SNB mappings, snapshot then
//! stream, compared with PostgreSQL row by row; restarts of either side; pending references;
//! schema changes and row errors.

mod common;

use common::{
    CATCH_UP_TIMEOUT, catch_up, cluster_with, connect, fixture, fixture_mapping, snb_data_dir,
    sync_point, text_rows,
};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use plexus::{Config, Database, Transaction, Value};
use plexus_mirror::change::Lsn;
use plexus_mirror::cluster::ThrowawayCluster;
use plexus_mirror::mapping::{PgType, PropertyGraph, decode};
use plexus_mirror::{Mirror, MirrorError, MirrorOptions, MirrorState, load_mapping};
use tokio_postgres::Client;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "plexus-mirror-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const FRAUD_TOUCH: &str =
    "INSERT INTO person (id, name) VALUES (-1, 'sync'); DELETE FROM person WHERE id = -1";

fn quote(column: &str) -> String {
    format!("\"{column}\"")
}

/// Every element table of `graph` read from PostgreSQL and from the graph, compared: each
/// vertex with its labels and properties (lists included), each edge with its endpoints'
/// keys and its properties.
async fn assert_graph_matches_postgres(db: &Database, client: &Client, graph: &PropertyGraph) {
    let mut tx = db.begin();
    for v in &graph.vertex_tables {
        let table_label = v.labels.first().cloned().expect("a static label");
        let key = &v.key[0];
        let key_type = v
            .properties
            .iter()
            .find(|p| &p.column == key)
            .map_or(PgType::Int, |p| p.pg_type.clone());
        let mut columns: Vec<String> = vec![quote(key)];
        columns.extend(v.properties.iter().map(|p| quote(&p.column)));
        if let Some(from) = &v.label_from {
            columns.push(quote(&from.column));
        }
        let rows = text_rows(
            client,
            &format!("SELECT {} FROM {}", columns.join(", "), v.table),
        )
        .await;
        let mut lists: Vec<BTreeMap<String, Vec<Value>>> = Vec::new();
        for list in &v.list_properties {
            let mut by_parent: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for row in text_rows(
                client,
                &format!(
                    "SELECT {}, {} FROM {}",
                    quote(&list.key[0]),
                    quote(&list.value_column),
                    list.table
                ),
            )
            .await
            {
                if let (Some(parent), Some(value)) = (&row[0], &row[1]) {
                    let value = decode(
                        &list.pg_type,
                        plexus_mirror::mapping::Conversion::None,
                        value,
                    )
                    .expect("list value");
                    by_parent.entry(parent.clone()).or_default().push(value);
                }
            }
            lists.push(by_parent);
        }
        assert_eq!(
            tx.scan_label(&table_label).expect("scan").len(),
            rows.len(),
            "vertex count of {}",
            v.table
        );
        for row in &rows {
            let key_text = row[0].as_deref().expect("key");
            let key_value = decode(
                &key_type,
                plexus_mirror::mapping::Conversion::None,
                key_text,
            )
            .expect("key");
            let vertex = tx
                .lookup(&table_label, &key_value)
                .expect("lookup")
                .unwrap_or_else(|| panic!("{} {key_text}: no vertex", v.table));
            for (p, text) in v.properties.iter().zip(&row[1..]) {
                let expected = text
                    .as_deref()
                    .map(|t| decode(&p.pg_type, p.conversion, t).expect("decode"));
                let found = tx.vertex_property(vertex, &p.name).expect("property");
                assert_eq!(
                    found, expected,
                    "{} {key_text} property {}",
                    v.table, p.name
                );
            }
            let label_value = v
                .label_from
                .as_ref()
                .and_then(|_| row.last().cloned().flatten());
            let mut expected_labels = v
                .labels_for_row(label_value.as_deref(), &[key_text])
                .expect("labels");
            expected_labels.sort();
            let mut labels = tx.vertex_labels(vertex).expect("labels");
            labels.sort();
            assert_eq!(labels, expected_labels, "{} {key_text} labels", v.table);
            for (list, by_parent) in v.list_properties.iter().zip(&lists) {
                let mut expected = by_parent.get(key_text).cloned().unwrap_or_default();
                expected.sort();
                let mut found = match tx.vertex_property(vertex, &list.name).expect("list") {
                    Some(Value::List(items)) => items.to_vec(),
                    None => Vec::new(),
                    Some(other) => panic!("list {} is {other:?}", list.name),
                };
                found.sort();
                assert_eq!(found, expected, "{} {key_text} list {}", v.table, list.name);
            }
        }
    }
    for e in &graph.edge_tables {
        let vertex_of = |alias: &str| graph.vertex_table(alias).expect("endpoint table");
        let (src_table, dst_table) = (
            vertex_of(&e.source.vertex_table),
            vertex_of(&e.destination.vertex_table),
        );
        let key_prop = |vt: &plexus_mirror::mapping::VertexTable| {
            vt.properties
                .iter()
                .find(|p| p.column == vt.key[0])
                .map_or(vt.key[0].clone(), |p| p.name.clone())
        };
        let mut columns = vec![
            quote(&e.source.columns[0]),
            quote(&e.destination.columns[0]),
        ];
        columns.extend(e.properties.iter().map(|p| quote(&p.column)));
        let mut expected: Vec<String> = Vec::new();
        for row in text_rows(
            client,
            &format!("SELECT {} FROM {}", columns.join(", "), e.table),
        )
        .await
        {
            let (Some(src), Some(dst)) = (&row[0], &row[1]) else {
                continue;
            };
            let props: Vec<Option<Value>> = e
                .properties
                .iter()
                .zip(&row[2..])
                .map(|(p, t)| {
                    t.as_deref()
                        .map(|t| decode(&p.pg_type, p.conversion, t).expect("decode"))
                })
                .collect();
            expected.push(format!("{src}->{dst} {props:?}"));
        }
        let mut found: Vec<String> = Vec::new();
        let src_label = src_table.labels[0].clone();
        let dst_label = dst_table.labels[0].clone();
        for edge in tx.scan_edges(&e.label).expect("scan edges") {
            let (s, d) = tx.edge_endpoints(edge).expect("endpoints");
            if !tx.vertex_has_labels(s, &[&src_label]).expect("labels")
                || !tx.vertex_has_labels(d, &[&dst_label]).expect("labels")
            {
                continue;
            }
            let text = |tx: &mut Transaction, v, prop: &str| match tx
                .vertex_property(v, prop)
                .expect("key")
            {
                Some(Value::Int(i)) => i.to_string(),
                Some(Value::String(s)) => s.to_string(),
                other => format!("{other:?}"),
            };
            let (sk, dk) = (
                text(&mut tx, s, &key_prop(src_table)),
                text(&mut tx, d, &key_prop(dst_table)),
            );
            let props: Vec<Option<Value>> = e
                .properties
                .iter()
                .map(|p| tx.edge_property(edge, &p.name).expect("edge property"))
                .collect();
            found.push(format!("{sk}->{dk} {props:?}"));
        }
        expected.sort();
        found.sort();
        // two edge tables of one label between the same vertex tables (none in these
        // mappings) would share `found`
        assert_eq!(found.len(), expected.len(), "edge count of {}", e.alias);
        assert_eq!(found, expected, "edges of {}", e.alias);
    }
    tx.rollback();
}

async fn fraud_options(cluster: &ThrowawayCluster) -> MirrorOptions {
    let mapping = fixture_mapping(cluster, "fraud-graph.sql").await;
    MirrorOptions::new(&cluster.conninfo(), mapping)
}

fn memory_db() -> Arc<Database> {
    Arc::new(Database::open_in_memory(Config::default()).expect("database"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fraud_snapshot_then_stream_matches_postgres() {
    let (cluster, client) = cluster_with(&fixture("fraud-schema.sql")).await;
    let options = fraud_options(&cluster).await;
    let graph = options.mapping.clone();
    let db = memory_db();
    let mut mirror = Mirror::start(db.clone(), options).await.expect("start");
    let status = mirror.status();
    assert_eq!(status.state, MirrorState::Streaming);
    assert_eq!(status.snapshot_rows.get("public.transfer"), Some(&3));
    assert_graph_matches_postgres(&db, &client, &graph).await;

    // one transaction per statement, then one touching three tables
    for statement in [
        "INSERT INTO person VALUES (4, 'Dan', '2000-01-01', NULL, 0.5, false, '{x}')",
        "INSERT INTO account VALUES (13, 4, '2024-01-01 00:00:00+00', 'savings', NULL, NULL)",
        "INSERT INTO transfer VALUES (103, 13, 10, 1.25, '2024-01-02 00:00:00+00', 'new')",
        "UPDATE person SET name = 'Robert', risk_score = NULL, tags = '{a,b}' WHERE id = 2",
        // foreign keys move edges: TRANSFER 100 now ends at 12, OWNS of 10 starts at Bob
        "UPDATE transfer SET dst_account = 12 WHERE id = 100",
        "UPDATE transfer SET amount = 7.5, memo = NULL WHERE id = 101",
        "UPDATE account SET owner_id = 2 WHERE id = 10",
        // owner set NULL: the OWNS edge goes
        "UPDATE account SET owner_id = NULL WHERE id = 11",
        // a key change (Chloé owns nothing yet), then an owner for the unowned account
        "UPDATE person SET id = 30 WHERE id = 3",
        "UPDATE account SET owner_id = 30, kind = 'checking' WHERE id = 12",
    ] {
        client.batch_execute(statement).await.expect(statement);
    }
    client
        .batch_execute(
            "BEGIN;
             INSERT INTO person VALUES (5, 'Eve', NULL, 'eve@example.org', 0.7, true, NULL);
             INSERT INTO account VALUES (14, 5, '2024-02-01 00:00:00+00', 'business', NULL, '{}');
             INSERT INTO transfer VALUES (104, 14, 13, 99.99, '2024-02-02 00:00:00+00', NULL);
             UPDATE person SET flagged = true WHERE id = 4;
             COMMIT;",
        )
        .await
        .expect("multi-table transaction");
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_graph_matches_postgres(&db, &client, &graph).await;
    // an account deleted: its vertex and its edges go
    client
        .batch_execute(
            "DELETE FROM transfer WHERE src_account = 12 OR dst_account = 12;
             DELETE FROM account WHERE id = 12;",
        )
        .await
        .expect("deletes");
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_graph_matches_postgres(&db, &client, &graph).await;

    // concurrent writers: 3 connections × 30 transactions, each touching three tables
    let mut writers = Vec::new();
    for w in 0..3i64 {
        let writer = connect(&cluster).await;
        writers.push(tokio::spawn(async move {
            for i in 0..30i64 {
                let (p, a, t) = (
                    1_000 + w * 100 + i,
                    2_000 + w * 100 + i,
                    3_000 + w * 100 + i,
                );
                writer
                    .batch_execute(&format!(
                        "BEGIN;
                         INSERT INTO person VALUES ({p}, 'p{p}', NULL, NULL, {i}.5, false, NULL);
                         INSERT INTO account VALUES ({a}, {p}, now(), 'checking', NULL, NULL);
                         INSERT INTO transfer VALUES ({t}, {a}, 10, {i}, now(), 'w{w}');
                         UPDATE person SET risk_score = risk_score + 1 WHERE id = {p};
                         COMMIT;"
                    ))
                    .await
                    .expect("writer");
            }
        }));
    }
    // the mirror applies while the writers run
    let handle = mirror.handle();
    for writer in writers {
        while !writer.is_finished() {
            let _ = mirror
                .catch_up(Lsn(u64::MAX), Duration::from_millis(20))
                .await;
        }
        writer.await.expect("writer task");
    }
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_graph_matches_postgres(&db, &client, &graph).await;
    assert!(handle.status().epochs > 1);

    // truncate, then rows again
    client
        .batch_execute(
            "TRUNCATE transfer;
             INSERT INTO transfer VALUES (500, 10, 11, 5, '2024-03-01 00:00:00+00', 'after');",
        )
        .await
        .expect("truncate");
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_graph_matches_postgres(&db, &client, &graph).await;
    let status = mirror.status();
    assert!(status.freshness_p50_ms.is_some(), "{status:?}");
    assert_eq!(status.pending, 0);
    assert!(status.confirmed <= status.applied);
    mirror.stop().await.expect("stop");
    assert_eq!(handle.status().state, MirrorState::Stopped);
}

/// Writes `count` rows into the fraud tables in `count` transactions, ids from `first`.
async fn fraud_writes(client: &Client, first: i64, count: i64) {
    for i in first..first + count {
        client
            .batch_execute(&format!(
                "BEGIN;
                 INSERT INTO person VALUES ({i}, 'p{i}', NULL, NULL, NULL, false, NULL);
                 INSERT INTO account VALUES ({i}, {i}, now(), 'savings', NULL, NULL);
                 INSERT INTO transfer VALUES ({i}, {i}, 10, 1, now(), NULL);
                 UPDATE person SET name = 'q{i}' WHERE id = {i};
                 COMMIT;"
            ))
            .await
            .expect("write");
    }
}

fn disk_db(dir: &Path) -> Arc<Database> {
    Arc::new(Database::open(dir, Config::default()).expect("open database"))
}

/// The fraud mapping's mirror started on a database in a fresh directory (`name` in its
/// name), with its pending file there too; the options restart it.
async fn start_on_disk(
    cluster: &ThrowawayCluster,
    name: &str,
) -> (TempDir, MirrorOptions, Arc<Database>, Mirror) {
    let dir = TempDir::new(name);
    let options = fraud_options(cluster).await.pending_file_in(dir.path());
    let db = disk_db(dir.path());
    let mirror = Mirror::start(db.clone(), options.clone())
        .await
        .expect("start");
    (dir, options, db, mirror)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_once_across_a_mirror_crash() {
    let (cluster, client) = cluster_with(&fixture("fraud-schema.sql")).await;
    let (dir, options, db, mut mirror) = start_on_disk(&cluster, "crash").await;
    let graph = options.mapping.clone();
    fraud_writes(&client, 1_000, 20).await;
    let half = sync_point(&client, FRAUD_TOUCH).await;
    fraud_writes(&client, 2_000, 20).await;
    mirror.catch_up(half, CATCH_UP_TIMEOUT).await.expect("half");
    // apply a few more epochs, whatever is ready, then "crash": no stop, no close
    let _ = mirror
        .catch_up(Lsn(u64::MAX), Duration::from_millis(30))
        .await;
    let applied = mirror.applied();
    drop(mirror);
    drop(db);
    fraud_writes(&client, 3_000, 20).await;

    let db = disk_db(dir.path());
    assert_eq!(
        db.replication_origin("plexus_mirror").map(|(p, _)| Lsn(p)),
        Some(applied)
    );
    let mut mirror = Mirror::start(db.clone(), options).await.expect("restart");
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_graph_matches_postgres(&db, &client, &graph).await;
    mirror.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_under_the_mirror() {
    let (mut cluster, client) = cluster_with(&fixture("fraud-schema.sql")).await;
    let options = fraud_options(&cluster).await;
    let graph = options.mapping.clone();
    let db = memory_db();
    let mut mirror = Mirror::start(db.clone(), options).await.expect("start");
    fraud_writes(&client, 1_000, 10).await;
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    drop(client);
    // the restart blocks this thread; the stream's transport keeps answering meanwhile
    cluster = tokio::task::spawn_blocking(move || {
        cluster.restart().expect("restart PostgreSQL");
        cluster
    })
    .await
    .expect("restart task");
    let client = connect(&cluster).await;
    fraud_writes(&client, 2_000, 10).await;
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_graph_matches_postgres(&db, &client, &graph).await;
    mirror.stop().await.expect("stop");
}

/// The fraud schema without foreign keys, so rows may reference rows that do not exist.
const FRAUD_WITHOUT_FKS: &str = "
    CREATE TYPE account_kind AS ENUM ('checking', 'savings', 'business');
    CREATE TABLE person (id bigint PRIMARY KEY, name text NOT NULL, birthday date,
        email varchar(200), risk_score double precision, flagged boolean NOT NULL DEFAULT false,
        tags text[]);
    CREATE TABLE account (id bigint PRIMARY KEY, owner_id bigint, opened timestamptz NOT NULL,
        kind account_kind NOT NULL, iban char(22) UNIQUE, limits jsonb);
    CREATE TABLE transfer (id bigint PRIMARY KEY, src_account bigint NOT NULL,
        dst_account bigint NOT NULL, amount numeric(12, 2) NOT NULL, at timestamptz NOT NULL,
        memo text);
    INSERT INTO person (id, name) VALUES (1, 'Ada');
    INSERT INTO account VALUES (10, 1, now(), 'checking', NULL, NULL);
    -- dangling at the snapshot: account 98 does not exist
    INSERT INTO transfer VALUES (300, 10, 98, 1, now(), 'early');
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dangling_references_wait_pending_across_a_restart() {
    let (cluster, client) = cluster_with(FRAUD_WITHOUT_FKS).await;
    let (dir, options, db, mut mirror) = start_on_disk(&cluster, "pending").await;
    let graph = options.mapping.clone();
    let status = mirror.status();
    assert_eq!(status.pending, 1, "{status:?}");
    assert!(
        status.pending_listed[0].contains("account id=98"),
        "{:?}",
        status.pending_listed
    );
    client
        .batch_execute(
            "INSERT INTO transfer VALUES (301, 10, 99, 2, now(), 'late');
             INSERT INTO account VALUES (50, 77, now(), 'savings', NULL, NULL);",
        )
        .await
        .expect("dangling rows");
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_eq!(mirror.status().pending, 3, "{:?}", mirror.status());
    // a pending row updated (still dangling) and one deleted
    client
        .batch_execute("UPDATE transfer SET memo = 'later' WHERE id = 301; DELETE FROM transfer WHERE id = 300;")
        .await
        .expect("pending rows changed");
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_eq!(mirror.status().pending, 2);
    drop(mirror);
    drop(db);

    let db = disk_db(dir.path());
    let mut mirror = Mirror::start(db.clone(), options).await.expect("restart");
    assert_eq!(mirror.status().pending, 2, "pending survives a restart");
    client
        .batch_execute(
            "INSERT INTO account VALUES (99, 1, now(), 'business', NULL, NULL);
             INSERT INTO person (id, name) VALUES (77, 'Late owner');",
        )
        .await
        .expect("references arrive");
    catch_up(&mut mirror, &client, FRAUD_TOUCH).await;
    assert_eq!(mirror.status().pending, 0, "{:?}", mirror.status());
    assert_graph_matches_postgres(&db, &client, &graph).await;
    mirror.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_table_on_a_mapped_table_stops_the_mirror() {
    let (cluster, client) = cluster_with(&fixture("fraud-schema.sql")).await;
    let options = fraud_options(&cluster).await;
    let mut mirror = Mirror::start(memory_db(), options).await.expect("start");
    let handle = mirror.handle();
    client
        .batch_execute(
            "ALTER TABLE person ADD COLUMN x int;
             INSERT INTO person (id, name, x) VALUES (9, 'Ivy', 1);",
        )
        .await
        .expect("alter");
    let target = sync_point(&client, "UPDATE account SET kind = kind WHERE id = 10").await;
    let error = mirror
        .catch_up(target, CATCH_UP_TIMEOUT)
        .await
        .expect_err("the mirror must stop");
    let text = error.to_string();
    assert!(matches!(error, MirrorError::SchemaChanged { .. }), "{text}");
    assert!(
        text.starts_with("ALTER TABLE on public.person: column \"x\" added — the mirror stopped"),
        "{text}"
    );
    assert_eq!(handle.status().state, MirrorState::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_the_mapping_cannot_convert_stops_the_mirror_with_its_table_and_key() {
    let (cluster, client) = cluster_with(
        "CREATE TABLE big (id bigint PRIMARY KEY, n numeric(30, 0));
         INSERT INTO big VALUES (1, 5);",
    )
    .await;
    let mapping = load_mapping(
        &cluster.conninfo(),
        "CREATE PROPERTY GRAPH g VERTEX TABLES (big LABEL Big PROPERTIES (id, n))",
        "big.sql",
    )
    .await
    .expect("mapping");
    let db = memory_db();
    let mut mirror = Mirror::start(db.clone(), MirrorOptions::new(&cluster.conninfo(), mapping))
        .await
        .expect("start");
    client
        .batch_execute("INSERT INTO big VALUES (2, 6)")
        .await
        .expect("fine row");
    let target = sync_point(
        &client,
        "INSERT INTO big VALUES (3, 10000000000000000000000000)",
    )
    .await;
    let error = mirror
        .catch_up(target, CATCH_UP_TIMEOUT)
        .await
        .expect_err("out of range");
    let text = error.to_string();
    assert!(
        text.contains("public.big") && text.contains("id=3") && text.contains("column \"n\""),
        "{text}"
    );
    // the failing epoch is rolled back whole: nothing after the last good epoch is visible
    let mut tx = db.begin();
    assert!(tx.lookup("Big", &Value::Int(3)).expect("lookup").is_none());
    tx.rollback();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snb_mini_mirrors_with_the_counts_and_rows_of_postgres() {
    let load = fixture("snb-load.sql").replace("@DATA@", &snb_data_dir());
    let (cluster, client) = cluster_with(&format!("{}\n{load}", fixture("snb-schema.sql"))).await;
    let mapping = fixture_mapping(&cluster, "snb-graph.sql").await;
    let db = memory_db();
    let graph = mapping.clone();
    let mut mirror = Mirror::start(db.clone(), MirrorOptions::new(&cluster.conninfo(), mapping))
        .await
        .expect("start");
    let copied: u64 = mirror.status().snapshot_rows.values().sum();
    assert!(copied > 50_000, "{copied}");
    // counts per label and relationship type against PostgreSQL
    let count = |sql: &str| {
        let sql = sql.to_owned();
        let client = &client;
        async move {
            text_rows(client, &sql).await[0][0]
                .as_deref()
                .expect("count")
                .parse::<usize>()
                .expect("number")
        }
    };
    let mut tx = db.begin();
    for (label, sql) in [
        ("Person", "SELECT count(*) FROM person"),
        (
            "Message",
            "SELECT (SELECT count(*) FROM post) + (SELECT count(*) FROM comment)",
        ),
        ("City", "SELECT count(*) FROM place WHERE type = 'city'"),
        (
            "Company",
            "SELECT count(*) FROM organisation WHERE type = 'company'",
        ),
    ] {
        assert_eq!(
            tx.scan_label(label).expect("scan").len(),
            count(sql).await,
            "{label}"
        );
    }
    for (rel, sql) in [
        ("KNOWS", "SELECT count(*) FROM person_knows_person"),
        (
            "HAS_CREATOR",
            "SELECT (SELECT count(*) FROM post) + (SELECT count(*) FROM comment)",
        ),
        (
            "REPLY_OF",
            "SELECT count(replyofpost) + count(replyofcomment) FROM comment",
        ),
        ("HAS_MEMBER", "SELECT count(*) FROM forum_hasmember_person"),
    ] {
        assert_eq!(
            tx.scan_edges(rel).expect("scan").len(),
            count(sql).await,
            "{rel}"
        );
    }
    tx.rollback();
    // stream changes to lists, link tables and LABEL FROM
    client
        .batch_execute(
            "INSERT INTO person_email_emailaddress
                 SELECT id, 'zz' || id || '@example.org' FROM person ORDER BY id LIMIT 3;
             DELETE FROM person_email_emailaddress
                 WHERE personid = (SELECT min(personid) FROM person_email_emailaddress)
                   AND email = (SELECT min(email) FROM person_email_emailaddress
                                WHERE personid = (SELECT min(personid)
                                                  FROM person_email_emailaddress));
             DELETE FROM person_knows_person
                 WHERE (person1id, person2id) IN
                     (SELECT person1id, person2id FROM person_knows_person LIMIT 2);
             UPDATE place SET type = 'country' WHERE id = (SELECT min(id) FROM place WHERE type = 'city');",
        )
        .await
        .expect("snb writes");
    let target = sync_point(
        &client,
        "UPDATE tag SET name = name || '' WHERE id = (SELECT min(id) FROM tag)",
    )
    .await;
    mirror
        .catch_up(target, CATCH_UP_TIMEOUT)
        .await
        .expect("catch up");
    assert_graph_matches_postgres(&db, &client, &graph).await;
    // an SNB query on the mirrored graph answers as PostgreSQL does: interactive short 1
    let person = text_rows(
        &client,
        "SELECT id, firstname, lastname FROM person ORDER BY id LIMIT 1",
    )
    .await;
    let (id, first, last) = (
        person[0][0].clone().expect("id"),
        person[0][1].clone().expect("first"),
        person[0][2].clone().expect("last"),
    );
    let mut connection = db.connect();
    let result = connection
        .execute(
            &format!(
                "MATCH (n:Person {{id: {id}}})-[:IS_LOCATED_IN]->(p:City) \
             RETURN n.firstName AS firstName, n.lastName AS lastName, p.id AS cityId"
            ),
            &plexus::Params::new(),
        )
        .expect("query");
    let city = text_rows(
        &client,
        &format!("SELECT placeid FROM person WHERE id = {id}"),
    )
    .await;
    let rows: Vec<String> = result.rows.iter().map(|r| format!("{r:?}")).collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(
        rows[0].contains(&first)
            && rows[0].contains(&last)
            && rows[0].contains(city[0][0].as_deref().expect("city")),
        "{rows:?}"
    );
    mirror.stop().await.expect("stop");
}

/// Under periodic durability with a long sync interval, commits are not durable at once:
/// the mirror confirms only durable positions, and syncs the WAL itself so confirmation
/// still reaches PostgreSQL's slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmation_follows_durability_and_progresses_under_periodic_sync() {
    let (cluster, client) = cluster_with(&fixture("fraud-schema.sql")).await;
    let options = fraud_options(&cluster).await;
    let config = Config {
        durability: plexus::DurabilityMode::Periodic,
        sync_interval_ms: 600_000,
        ..Config::default()
    };
    let db = Arc::new(Database::open_in_memory(config).expect("database"));
    let mut mirror = Mirror::start(db.clone(), options).await.expect("start");
    fraud_writes(&client, 1_000, 10).await;
    let target = sync_point(&client, FRAUD_TOUCH).await;
    mirror
        .catch_up(target, CATCH_UP_TIMEOUT)
        .await
        .expect("catch up");
    let applied = mirror.applied();
    let deadline = std::time::Instant::now() + CATCH_UP_TIMEOUT;
    loop {
        let status = mirror.status();
        assert!(status.confirmed <= status.applied, "{status:?}");
        let slot = text_rows(
            &client,
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots",
        )
        .await;
        let slot: Lsn = slot[0][0].as_deref().expect("slot").parse().expect("lsn");
        if status.confirmed == applied && slot >= applied {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "confirmation stuck: {status:?}, slot at {slot}"
        );
        let _ = mirror
            .catch_up(Lsn(u64::MAX), Duration::from_millis(50))
            .await;
    }
    mirror.stop().await.expect("stop");
}

/// While the mirror runs, its labels and relationship types are read-only to users (other
/// labels stay writable), `CALL db.mirror.status()` reports it, and once it is gone both end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrored_labels_are_read_only_and_the_status_is_queryable() {
    let (cluster, _client) = cluster_with(&fixture("fraud-schema.sql")).await;
    let options = fraud_options(&cluster).await;
    let db = memory_db();
    let mirror = Mirror::start(db.clone(), options).await.expect("start");
    let mut conn = db.connect();
    let params = plexus::Params::new();
    for write in [
        "CREATE (:Person {id: 99})",
        "MATCH (p:Person) SET p.name = 'x'",
        "MATCH (a:Account) DETACH DELETE a",
        "MATCH ()-[t:TRANSFER]->() SET t.amount = 0",
    ] {
        let error = conn.execute(write, &params).expect_err(write).to_string();
        assert!(
            error.contains("is read-only here: it is mirrored from PostgreSQL"),
            "{write}: {error}"
        );
    }
    conn.execute("CREATE (:Note {text: 'mine'})", &params)
        .expect("other labels stay writable");
    let status = conn
        .execute(
            "CALL db.mirror.status() YIELD name, state, appliedPosition RETURN *",
            &params,
        )
        .expect("status");
    assert_eq!(status.rows.len(), 1, "{:?}", status.rows);
    let row = format!("{:?}", status.rows[0]);
    assert!(
        row.contains("streaming") && row.contains("plexus_mirror"),
        "{row}"
    );
    mirror.stop().await.expect("stop");
    conn.execute("MATCH (p:Person) SET p.name = 'x'", &params)
        .expect("writable once the mirror is gone");
    let status = conn
        .execute("CALL db.mirror.status() YIELD name RETURN name", &params)
        .expect("status");
    assert!(status.rows.is_empty());
}
