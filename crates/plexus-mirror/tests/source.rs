//! The PostgreSQL side of the mirror: the `pgoutput` decoder and the COPY text parser on
//! hand-built bytes, then slot, copy and stream against throwaway PostgreSQL clusters.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use plexus_mirror::change::{Change, Datum, Lsn, OldRow, RelationColumn, RelationInfo, SourceTxn};
use plexus_mirror::cluster::{ClusterOptions, ThrowawayCluster};
use plexus_mirror::source::copy_text::{CopyTextParser, parse_row};
use plexus_mirror::source::pgoutput::{PgOutputMessage, decode};
use plexus_mirror::source::{
    Backoff, ReplicationStream, SourceConfig, SourceError, copy_table, create_slot_with_snapshot,
    drop_slot_and_publication, ensure_publication, slot_position, start_stream,
};

// ---------------------------------------------------------------------------------------
// pgoutput decoder on hand-built messages
// ---------------------------------------------------------------------------------------

/// Builds pgoutput messages the way the server lays them out.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn new(tag: u8) -> Msg {
        Msg(vec![tag])
    }
    fn u8(mut self, v: u8) -> Msg {
        self.0.push(v);
        self
    }
    fn i16(mut self, v: i16) -> Msg {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i32(mut self, v: i32) -> Msg {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i64(mut self, v: i64) -> Msg {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn string(mut self, s: &str) -> Msg {
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        self
    }
    fn bytes(mut self, b: &[u8]) -> Msg {
        self.0.extend_from_slice(b);
        self
    }
    /// TupleData: `None` = null, `Some("\u{0}u")` = unchanged toast, else text.
    fn tuple(mut self, values: &[Option<&str>]) -> Msg {
        self = self.i16(values.len() as i16);
        for value in values {
            self = match value {
                None => self.u8(b'n'),
                Some("\u{0}u") => self.u8(b'u'),
                Some(text) => self.u8(b't').i32(text.len() as i32).bytes(text.as_bytes()),
            };
        }
        self
    }
}

fn text(s: &str) -> Datum {
    Datum::Text(s.to_owned())
}

/// Every message kind with what it must decode to.
fn sample_messages() -> Vec<(Vec<u8>, PgOutputMessage)> {
    let relation = RelationInfo {
        oid: 16384,
        schema: "public".to_owned(),
        name: "person".to_owned(),
        replica_identity: b'd',
        columns: vec![
            RelationColumn {
                name: "id".to_owned(),
                type_oid: 23,
                type_modifier: -1,
                is_key: true,
            },
            RelationColumn {
                name: "name".to_owned(),
                type_oid: 1043,
                type_modifier: 68,
                is_key: false,
            },
        ],
    };
    vec![
        (
            Msg::new(b'B').i64(0x16_B374_D848).i64(1_000).i32(771).0,
            PgOutputMessage::Begin {
                final_lsn: Lsn(0x16_B374_D848),
                commit_time_pg_us: 1_000,
                xid: 771,
            },
        ),
        (
            Msg::new(b'C').u8(0).i64(0x100).i64(0x180).i64(-5).0,
            PgOutputMessage::Commit {
                flags: 0,
                commit_lsn: Lsn(0x100),
                end_lsn: Lsn(0x180),
                commit_time_pg_us: -5,
            },
        ),
        (
            Msg::new(b'O').i64(0x42).string("upstream").0,
            PgOutputMessage::Origin {
                commit_lsn: Lsn(0x42),
                name: "upstream".to_owned(),
            },
        ),
        (
            Msg::new(b'R')
                .i32(16384)
                .string("public")
                .string("person")
                .u8(b'd')
                .i16(2)
                .u8(1)
                .string("id")
                .i32(23)
                .i32(-1)
                .u8(0)
                .string("name")
                .i32(1043)
                .i32(68)
                .0,
            PgOutputMessage::Change(Change::Relation(relation)),
        ),
        (
            Msg::new(b'Y').i32(90001).string("app").string("mood").0,
            PgOutputMessage::Type {
                oid: 90001,
                schema: "app".to_owned(),
                name: "mood".to_owned(),
            },
        ),
        (
            Msg::new(b'I')
                .i32(16384)
                .u8(b'N')
                .tuple(&[Some("1"), None, Some(""), Some("žluť\t\n")])
                .0,
            PgOutputMessage::Change(Change::Insert {
                relation: 16384,
                new: vec![text("1"), Datum::Null, text(""), text("žluť\t\n")],
            }),
        ),
        (
            Msg::new(b'U')
                .i32(16384)
                .u8(b'N')
                .tuple(&[Some("1"), Some("\u{0}u")])
                .0,
            PgOutputMessage::Change(Change::Update {
                relation: 16384,
                old: None,
                new: vec![text("1"), Datum::UnchangedToast],
            }),
        ),
        (
            Msg::new(b'U')
                .i32(16384)
                .u8(b'K')
                .tuple(&[Some("1"), None])
                .u8(b'N')
                .tuple(&[Some("2"), Some("b")])
                .0,
            PgOutputMessage::Change(Change::Update {
                relation: 16384,
                old: Some(OldRow {
                    key_only: true,
                    values: vec![text("1"), Datum::Null],
                }),
                new: vec![text("2"), text("b")],
            }),
        ),
        (
            Msg::new(b'U')
                .i32(16384)
                .u8(b'O')
                .tuple(&[Some("1"), Some("a")])
                .u8(b'N')
                .tuple(&[Some("1"), Some("b")])
                .0,
            PgOutputMessage::Change(Change::Update {
                relation: 16384,
                old: Some(OldRow {
                    key_only: false,
                    values: vec![text("1"), text("a")],
                }),
                new: vec![text("1"), text("b")],
            }),
        ),
        (
            Msg::new(b'D')
                .i32(16384)
                .u8(b'K')
                .tuple(&[Some("7"), None])
                .0,
            PgOutputMessage::Change(Change::Delete {
                relation: 16384,
                old: OldRow {
                    key_only: true,
                    values: vec![text("7"), Datum::Null],
                },
            }),
        ),
        (
            Msg::new(b'D')
                .i32(16384)
                .u8(b'O')
                .tuple(&[Some("7"), Some("x")])
                .0,
            PgOutputMessage::Change(Change::Delete {
                relation: 16384,
                old: OldRow {
                    key_only: false,
                    values: vec![text("7"), text("x")],
                },
            }),
        ),
        (
            Msg::new(b'T').i32(2).u8(3).i32(16384).i32(16390).0,
            PgOutputMessage::Change(Change::Truncate {
                relations: vec![16384, 16390],
                cascade: true,
                restart_identity: true,
            }),
        ),
        (
            Msg::new(b'M')
                .u8(1)
                .i64(0x99)
                .string("plexus")
                .i32(3)
                .bytes(b"a\0b")
                .0,
            PgOutputMessage::Message {
                transactional: true,
                lsn: Lsn(0x99),
                prefix: "plexus".to_owned(),
                content: b"a\0b".to_vec(),
            },
        ),
    ]
}

#[test]
fn pgoutput_decodes_every_message_kind() {
    for (bytes, expected) in sample_messages() {
        assert_eq!(decode(&bytes).unwrap(), expected);
    }
}

#[test]
fn pgoutput_rejects_every_truncation_without_panicking() {
    for (bytes, _) in sample_messages() {
        for len in 0..bytes.len() {
            let error = decode(&bytes[..len]).expect_err("a truncated message must not decode");
            if len > 0 {
                assert_eq!(error.message_type, bytes[0]);
                assert!(error.offset <= len, "{error}");
            }
        }
        // one byte too many
        let mut long = bytes.clone();
        long.push(0);
        let error = decode(&long).unwrap_err();
        assert_eq!(error.offset, bytes.len());
        assert!(error.to_string().contains("trailing"), "{error}");
    }
}

#[test]
fn pgoutput_errors_name_the_message_type_and_offset() {
    let unknown = decode(b"Zxyz").unwrap_err();
    assert_eq!((unknown.message_type, unknown.offset), (b'Z', 0));
    let bad_kind = decode(&Msg::new(b'I').i32(1).u8(b'N').i16(1).u8(b'q').0).unwrap_err();
    assert_eq!(bad_kind.offset, 8);
    assert!(
        bad_kind.to_string().contains("Insert ('I')") && bad_kind.to_string().contains("byte 8"),
        "{bad_kind}"
    );
    let negative = decode(&Msg::new(b'I').i32(1).u8(b'N').i16(1).u8(b't').i32(-4).0);
    assert!(negative.unwrap_err().reason.contains("negative"));
    let huge = decode(
        &Msg::new(b'I')
            .i32(1)
            .u8(b'N')
            .i16(1)
            .u8(b't')
            .i32(i32::MAX)
            .0,
    );
    assert!(huge.unwrap_err().reason.contains("truncated"));
    let not_utf8 = decode(&Msg::new(b'O').i64(1).bytes(&[0xff, 0xfe, 0]).0);
    assert!(not_utf8.unwrap_err().reason.contains("UTF-8"));
    let no_new_marker = decode(&Msg::new(b'U').i32(1).u8(b'X').tuple(&[]).0);
    assert!(no_new_marker.unwrap_err().reason.contains("'N'"));
    let delete_without_old = decode(&Msg::new(b'D').i32(1).u8(b'N').tuple(&[]).0);
    assert!(
        delete_without_old
            .unwrap_err()
            .reason
            .contains("'K' or 'O'")
    );
    let negative_columns = decode(
        &Msg::new(b'R')
            .i32(1)
            .string("s")
            .string("t")
            .u8(b'd')
            .i16(-1)
            .0,
    );
    assert!(negative_columns.unwrap_err().reason.contains("negative"));
    assert_eq!(decode(b"").unwrap_err().message_type, 0);
    // a billion relations announced, none present
    let truncate = decode(&Msg::new(b'T').i32(1_000_000_000).u8(0).0);
    assert!(truncate.unwrap_err().reason.contains("truncated"));
}

// ---------------------------------------------------------------------------------------
// COPY text format
// ---------------------------------------------------------------------------------------

#[test]
fn copy_text_unescapes_values() {
    let line =
        "1\t\\N\t\ta\\tb\\nc\\\\d\t\\b\\f\\r\\v\t\\101\\0\\x41\\x4a\\xz\t\\q\tžluťoučký 🐎\t\\\\N";
    let row = parse_row(line.as_bytes(), 9, 1).unwrap();
    assert_eq!(
        row,
        vec![
            text("1"),
            Datum::Null,
            text(""),
            text("a\tb\nc\\d"),
            text("\u{8}\u{c}\r\u{b}"),
            text("A\0AJxz"),
            text("q"),
            text("žluťoučký 🐎"),
            text("\\N"),
        ]
    );
    // an octal escape is one byte: UTF-8 sequences can be written byte by byte
    assert_eq!(parse_row(br"\305\276", 1, 1).unwrap(), vec![text("ž")]);
}

#[test]
fn copy_text_rows_may_span_chunks() {
    let data = "1\ta\\tb\n2\t\\N\n3\t\n4\tžluť\n".as_bytes();
    // every way of cutting the data in two, including inside a UTF-8 sequence
    for cut in 0..=data.len() {
        let mut parser = CopyTextParser::new(2);
        let mut rows = Vec::new();
        for chunk in [&data[..cut], &data[cut..]] {
            parser
                .feed(chunk, |row| {
                    rows.push(row);
                    Ok::<(), plexus_mirror::source::copy_text::CopyTextError>(())
                })
                .unwrap();
        }
        assert_eq!(parser.finish().unwrap(), 4);
        assert_eq!(
            rows,
            vec![
                vec![text("1"), text("a\tb")],
                vec![text("2"), Datum::Null],
                vec![text("3"), text("")],
                vec![text("4"), text("žluť")],
            ]
        );
    }
}

#[test]
fn copy_text_rejects_malformed_rows() {
    let wrong_count = parse_row(b"1\t2\t3", 2, 5).unwrap_err();
    assert_eq!((wrong_count.row, wrong_count.column), (5, None));
    let lone_backslash = parse_row(b"1\tab\\", 2, 1).unwrap_err();
    assert_eq!(lone_backslash.column, Some(1));
    assert!(
        parse_row(br"\377", 1, 1)
            .unwrap_err()
            .reason
            .contains("UTF-8")
    );
    let mut parser = CopyTextParser::new(1);
    parser
        .feed(b"1\n2", |_| {
            Ok::<(), plexus_mirror::source::copy_text::CopyTextError>(())
        })
        .unwrap();
    assert_eq!(parser.rows(), 1);
    assert!(parser.finish().unwrap_err().reason.contains("inside a row"));
}

// ---------------------------------------------------------------------------------------
// Against PostgreSQL
// ---------------------------------------------------------------------------------------

/// How long any single wait on the server may take before the test fails.
const WAIT: Duration = Duration::from_secs(15);

fn cluster() -> ThrowawayCluster {
    ThrowawayCluster::start(ClusterOptions::default()).expect("start a throwaway PostgreSQL")
}

fn config(cluster: &ThrowawayCluster, tables: &[&str]) -> SourceConfig {
    SourceConfig {
        conninfo: cluster.url(),
        slot: "plexus_slot".to_owned(),
        publication: "plexus_pub".to_owned(),
        tables: tables
            .iter()
            .map(|t| ("public".to_owned(), (*t).to_owned()))
            .collect(),
    }
}

async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

async fn next(stream: &mut ReplicationStream) -> SourceTxn {
    within("next transaction", stream.next_txn())
        .await
        .expect("next transaction")
}

/// Runs SQL through psql without blocking the runtime's other tasks.
fn psql(cluster: &ThrowawayCluster, sql: &str) -> String {
    tokio::task::block_in_place(|| cluster.psql(sql)).expect(sql)
}

/// The text of column `column` of an inserted or updated row.
fn new_value(change: &Change, column: usize) -> Option<&str> {
    let values = match change {
        Change::Insert { new, .. } | Change::Update { new, .. } => new,
        _ => return None,
    };
    match values.get(column) {
        Some(Datum::Text(text)) => Some(text),
        _ => None,
    }
}

/// The ids (column 0) inserted by `txn`.
fn inserted_ids(txn: &SourceTxn) -> Vec<i64> {
    txn.changes
        .iter()
        .filter(|c| matches!(c, Change::Insert { .. }))
        .map(|c| {
            new_value(c, 0)
                .expect("an id")
                .parse()
                .expect("an integer id")
        })
        .collect()
}

async fn start_fresh(config: &SourceConfig) -> ReplicationStream {
    ensure_publication(config).await.expect("publication");
    let exported = create_slot_with_snapshot(config).await.expect("slot");
    start_stream(config, exported.consistent_point, Some(exported.session))
        .await
        .expect("stream")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_hand_off_has_no_gap_and_no_duplicate() {
    let cluster = cluster();
    psql(
        &cluster,
        "CREATE TABLE item (id bigint PRIMARY KEY, note text, \
                            at timestamptz DEFAULT '2024-01-02 03:04:05.5+00'); \
         SET TimeZone = 'Asia/Tokyo'; \
         INSERT INTO item SELECT g, 'before ' || g FROM generate_series(1, 500) g;",
    );
    let config = config(&cluster, &["item"]);
    ensure_publication(&config).await.unwrap();

    // A writer commits one row per transaction the whole time.
    let stop = Arc::new(AtomicBool::new(false));
    let (writer_client, connection) =
        tokio_postgres::connect(&cluster.conninfo(), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    let writer = tokio::spawn({
        let stop = stop.clone();
        async move {
            let mut id = 1_000i64;
            while !stop.load(Ordering::Relaxed) {
                id += 1;
                writer_client
                    .execute("INSERT INTO item VALUES ($1, 'during')", &[&id])
                    .await
                    .unwrap();
            }
            id
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let exported = create_slot_with_snapshot(&config).await.unwrap();
    let mut copied = Vec::new();
    let columns = ["id".to_owned(), "note".to_owned(), "at".to_owned()];
    let rows = copy_table(
        &config,
        &exported.snapshot_name,
        ("public", "item"),
        &columns,
        |row| {
            copied.push(row);
            Ok::<(), std::convert::Infallible>(())
        },
    )
    .await
    .unwrap();
    assert_eq!(rows as usize, copied.len());
    // a second copy on the same snapshot sees the same rows, though the writer went on
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = 0u64;
    copy_table(
        &config,
        &exported.snapshot_name,
        ("public", "item"),
        &columns[..1],
        |_| {
            again += 1;
            Ok::<(), std::convert::Infallible>(())
        },
    )
    .await
    .unwrap();
    assert_eq!(again, rows);
    // a consumer's failure ends the copy with that error
    let refused = copy_table(
        &config,
        &exported.snapshot_name,
        ("public", "item"),
        &columns,
        |_| Err("disk full"),
    )
    .await
    .unwrap_err();
    assert!(matches!(&refused, SourceError::Consumer(e) if e.to_string() == "disk full"));
    assert!(!refused.is_transient());

    let mut stream = start_stream(&config, exported.consistent_point, Some(exported.session))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, Ordering::Relaxed);
    let last_id = writer.await.unwrap();
    let total: i64 = psql(&cluster, "SELECT count(*) FROM item")
        .trim()
        .parse()
        .unwrap();

    let mut seen: BTreeMap<i64, u32> = BTreeMap::new();
    for row in &copied {
        let Datum::Text(id) = &row[0] else {
            panic!("null id")
        };
        *seen.entry(id.parse().unwrap()).or_default() += 1;
    }
    let timestamp = text("2024-01-02 03:04:05.5+00");
    assert!(
        copied.iter().all(|row| row[2] == timestamp),
        "{:?}",
        copied[0]
    );
    let copied_ids: BTreeSet<i64> = seen.keys().copied().collect();
    assert!((1..=500).all(|id| copied_ids.contains(&id)));
    let mut streamed = Vec::new();
    let mut previous_end = exported.consistent_point;
    while seen.len() < total as usize {
        let txn = next(&mut stream).await;
        assert!(txn.end_lsn > previous_end && txn.commit_lsn >= exported.consistent_point);
        previous_end = txn.end_lsn;
        // copy and stream print values the same way
        assert!(
            txn.changes
                .iter()
                .all(|c| !matches!(c, Change::Insert { .. })
                    || new_value(c, 2) == Some("2024-01-02 03:04:05.5+00"))
        );
        for id in inserted_ids(&txn) {
            streamed.push(id);
            *seen.entry(id).or_default() += 1;
        }
    }
    assert!(
        streamed.iter().all(|id| *id > 1_000),
        "pre-slot rows came by the stream"
    );
    assert!(
        !streamed.is_empty(),
        "the writer committed nothing after the consistent point"
    );
    let duplicates: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(duplicates.is_empty(), "seen twice: {duplicates:?}");
    assert_eq!(seen.len() as i64, total);
    assert_eq!(*seen.keys().last().unwrap(), last_id);
    // (the stream saw the writer's whole tail: nothing is left)
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stream.next_txn())
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_changes_arrive_decoded_and_in_order() {
    let cluster = cluster();
    psql(
        &cluster,
        "CREATE TABLE person (id int PRIMARY KEY, name text, born timestamptz, score float8); \
         CREATE TABLE knows (a int, b int, since date, PRIMARY KEY (a, b));",
    );
    let config = config(&cluster, &["person", "knows"]);
    let mut stream = start_fresh(&config).await;
    let person_oid: u32 = psql(&cluster, "SELECT 'person'::regclass::oid")
        .trim()
        .parse()
        .unwrap();
    let knows_oid: u32 = psql(&cluster, "SELECT 'knows'::regclass::oid")
        .trim()
        .parse()
        .unwrap();

    // the session's own DateStyle/TimeZone must not matter: the stream's are fixed
    psql(
        &cluster,
        "SET TimeZone = 'America/New_York'; SET DateStyle = 'SQL, DMY'; \
         INSERT INTO person VALUES (1, E'Ada\\tLovelace\\nž', '2024-01-02 03:04:05.5+00', 0.1), \
                                   (2, NULL, NULL, NULL);",
    );
    let insert = next(&mut stream).await;
    assert!(
        insert.commit_time_unix_us > 1_700_000_000_000_000,
        "{insert:?}"
    );
    let Change::Relation(person) = &insert.changes[0] else {
        panic!("no Relation first: {insert:?}")
    };
    assert_eq!(
        (
            person.oid,
            person.schema.as_str(),
            person.name.as_str(),
            person.replica_identity
        ),
        (person_oid, "public", "person", b'd')
    );
    let names: Vec<_> = person
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.is_key))
        .collect();
    assert_eq!(
        names,
        [
            ("id", true),
            ("name", false),
            ("born", false),
            ("score", false)
        ]
    );
    assert_eq!(
        insert.changes[1..],
        [
            Change::Insert {
                relation: person_oid,
                new: vec![
                    text("1"),
                    text("Ada\tLovelace\nž"),
                    text("2024-01-02 03:04:05.5+00"),
                    text("0.1")
                ],
            },
            Change::Insert {
                relation: person_oid,
                new: vec![text("2"), Datum::Null, Datum::Null, Datum::Null],
            },
        ]
    );

    // an update keeping the key, then one changing it (the old key comes along)
    psql(&cluster, "UPDATE person SET name = 'Bob' WHERE id = 2");
    psql(&cluster, "UPDATE person SET id = 20 WHERE id = 2");
    let keep_key = next(&mut stream).await;
    assert!(keep_key.end_lsn > insert.end_lsn && keep_key.commit_lsn > insert.commit_lsn);
    assert_eq!(
        keep_key.changes,
        [Change::Update {
            relation: person_oid,
            old: None,
            new: vec![text("2"), text("Bob"), Datum::Null, Datum::Null],
        }]
    );
    let new_key = next(&mut stream).await;
    assert_eq!(
        new_key.changes,
        [Change::Update {
            relation: person_oid,
            old: Some(OldRow {
                key_only: true,
                values: vec![text("2"), Datum::Null, Datum::Null, Datum::Null],
            }),
            new: vec![text("20"), text("Bob"), Datum::Null, Datum::Null],
        }]
    );

    // one transaction over two tables keeps its order
    psql(
        &cluster,
        "BEGIN; INSERT INTO knows VALUES (1, 20, '2020-02-29'); \
         DELETE FROM person WHERE id = 1; INSERT INTO knows VALUES (20, 1, NULL); COMMIT;",
    );
    let both = next(&mut stream).await;
    let kinds: Vec<String> = both
        .changes
        .iter()
        .map(|c| match c {
            Change::Relation(r) => format!("R {}", r.name),
            Change::Insert { relation, .. } => format!("I {relation}"),
            Change::Delete { relation, .. } => format!("D {relation}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "R knows".to_owned(),
            format!("I {knows_oid}"),
            format!("D {person_oid}"),
            format!("I {knows_oid}")
        ]
    );
    assert_eq!(new_value(&both.changes[1], 2), Some("2020-02-29"));
    assert_eq!(
        both.changes[2],
        Change::Delete {
            relation: person_oid,
            old: OldRow {
                key_only: true,
                values: vec![text("1"), Datum::Null, Datum::Null, Datum::Null],
            },
        }
    );

    psql(&cluster, "TRUNCATE knows, person RESTART IDENTITY");
    let truncate = next(&mut stream).await;
    let Some(Change::Truncate {
        relations,
        cascade,
        restart_identity,
    }) = truncate.changes.last()
    else {
        panic!("no Truncate: {truncate:?}")
    };
    assert_eq!(
        relations.iter().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([person_oid, knows_oid])
    );
    assert!(!cascade && *restart_identity);

    // a big transaction arrives whole
    psql(
        &cluster,
        "INSERT INTO person SELECT g, 'p' || g FROM generate_series(1, 10000) g",
    );
    let big = next(&mut stream).await;
    assert_eq!(inserted_ids(&big), (1..=10_000).collect::<Vec<i64>>());
    assert!(big.end_lsn > truncate.end_lsn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_then_restart_delivers_exactly_the_later_transactions() {
    let cluster = cluster();
    psql(&cluster, "CREATE TABLE t (id int PRIMARY KEY)");
    let config = config(&cluster, &["t"]);
    let mut stream = start_fresh(&config).await;
    for id in 1..=5 {
        psql(&cluster, &format!("INSERT INTO t VALUES ({id})"));
    }
    let mut txns = Vec::new();
    for _ in 1..=5 {
        txns.push(next(&mut stream).await);
    }
    let ids: Vec<_> = txns.iter().flat_map(inserted_ids).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);

    // confirm the third: the slot follows, and never passes it while 4 and 5 are unconfirmed
    let confirmed = txns[2].end_lsn;
    stream.confirm(confirmed);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let position = slot_position(&config).await.unwrap().unwrap();
        assert!(
            position <= confirmed,
            "slot at {position}, confirmed {confirmed}"
        );
        if position == confirmed {
            break;
        }
        assert!(Instant::now() < deadline, "the slot stayed at {position}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // status updates keep going (every second); the position must stay
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(slot_position(&config).await.unwrap(), Some(confirmed));

    stream.close().await.unwrap();
    psql(&cluster, "INSERT INTO t VALUES (6)");
    let mut resumed = start_stream(&config, confirmed, None).await.unwrap();
    let mut ids = Vec::new();
    for (index, expected) in [&txns[3], &txns[4]].into_iter().enumerate() {
        let txn = next(&mut resumed).await;
        assert_eq!(
            (txn.commit_lsn, txn.end_lsn),
            (expected.commit_lsn, expected.end_lsn)
        );
        // a new session describes the relation again, before its first change only
        let relations = txn
            .changes
            .iter()
            .filter(|c| matches!(c, Change::Relation(_)));
        assert_eq!(relations.count(), usize::from(index == 0), "{txn:?}");
        ids.extend(inserted_ids(&txn));
    }
    let last = next(&mut resumed).await;
    ids.extend(inserted_ids(&last));
    assert_eq!(ids, [4, 5, 6]);

    // once everything delivered is confirmed, an idle stream lets the slot move on
    resumed.confirm(last.end_lsn);
    assert!(
        tokio::time::timeout(Duration::from_millis(2_500), resumed.next_txn())
            .await
            .is_err()
    );
    let position = slot_position(&config).await.unwrap().unwrap();
    assert!(position >= resumed.confirmed(), "{position}");
}

/// Reconnects from the caller's last confirmed position, as the apply side does.
async fn reconnect(config: &SourceConfig, from: Lsn) -> ReplicationStream {
    let mut backoff = Backoff::new();
    let started = Instant::now();
    loop {
        match start_stream(config, from, None).await {
            Ok(stream) => return stream,
            Err(e) if e.is_transient() && started.elapsed() < WAIT => backoff.wait().await,
            Err(e) => panic!("reconnect failed: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_is_transient_and_the_stream_resumes_without_loss() {
    let cluster = cluster();
    psql(&cluster, "CREATE TABLE t (id int PRIMARY KEY)");
    let config = config(&cluster, &["t"]);
    let mut stream = start_fresh(&config).await;
    for id in 1..=3 {
        psql(&cluster, &format!("INSERT INTO t VALUES ({id})"));
    }
    for _ in 1..=3 {
        let txn = next(&mut stream).await;
        stream.confirm(txn.end_lsn);
    }

    // A clean restart while the caller waits for the next transaction: PostgreSQL's
    // walsender waits for its client to confirm all it sent before it exits, which an idle,
    // fully confirmed stream does.
    let restart = tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        cluster.restart().map(|()| cluster)
    });
    let error = within("the stream notices the restart", stream.next_txn())
        .await
        .expect_err("the server went away");
    assert!(error.is_transient(), "{error}");
    let mut cluster = restart.await.unwrap().expect("restart");
    // a failed stream stays failed
    assert!(stream.next_txn().await.unwrap_err().is_transient());
    psql(&cluster, "INSERT INTO t VALUES (4)");
    psql(&cluster, "INSERT INTO t VALUES (5)");
    let mut resumed = reconnect(&config, stream.confirmed()).await;
    let fourth = next(&mut resumed).await;
    let fifth = next(&mut resumed).await;
    assert_eq!(
        [inserted_ids(&fourth), inserted_ids(&fifth)].concat(),
        [4, 5]
    );

    // A crash while the last delivered transaction (5) is not yet applied: it comes again.
    resumed.confirm(fourth.end_lsn);
    tokio::task::block_in_place(|| cluster.crash_and_restart()).unwrap();
    let error = within("the stream notices the crash", resumed.next_txn())
        .await
        .expect_err("the server went away");
    assert!(error.is_transient(), "{error}");
    psql(&cluster, "INSERT INTO t VALUES (6)");
    let mut again = reconnect(&config, resumed.confirmed()).await;
    let mut ids = Vec::new();
    while ids.len() < 2 {
        ids.extend(inserted_ids(&next(&mut again).await));
    }
    assert_eq!(ids, [5, 6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_table_sends_a_new_relation_before_the_next_change() {
    let cluster = cluster();
    psql(&cluster, "CREATE TABLE t (id int PRIMARY KEY, a text)");
    let config = config(&cluster, &["t"]);
    let mut stream = start_fresh(&config).await;
    psql(&cluster, "INSERT INTO t VALUES (1, 'x')");
    let before = next(&mut stream).await;
    assert!(matches!(&before.changes[0], Change::Relation(r) if r.columns.len() == 2));
    psql(&cluster, "INSERT INTO t VALUES (2, 'y')");
    let unchanged = next(&mut stream).await;
    assert!(
        matches!(unchanged.changes[..], [Change::Insert { .. }]),
        "a Relation is sent once per definition: {unchanged:?}"
    );

    psql(&cluster, "ALTER TABLE t ADD COLUMN b int DEFAULT 7");
    psql(&cluster, "INSERT INTO t VALUES (3, 'z', 9)");
    let after = next(&mut stream).await;
    let Change::Relation(relation) = &after.changes[0] else {
        panic!("no new Relation before the change: {after:?}")
    };
    let columns: Vec<_> = relation.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(columns, ["id", "a", "b"]);
    assert_eq!(relation.columns[2].type_oid, 23);
    assert_eq!(new_value(&after.changes[1], 2), Some("9"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_stay_secret_and_dropping_is_idempotent() {
    let cluster = cluster();
    psql(
        &cluster,
        "CREATE TABLE t (id int PRIMARY KEY); CREATE TABLE u (id int PRIMARY KEY);",
    );
    let good = config(&cluster, &["t"]);

    let password = "Wr0ngPassw0rd-do-not-print";
    let wrong = SourceConfig {
        conninfo: format!(
            "postgres://{}:{password}@127.0.0.1:{}/{}",
            cluster.user(),
            cluster.port(),
            cluster.database()
        ),
        ..good.clone()
    };
    let sql_error = ensure_publication(&wrong).await.unwrap_err();
    let replication_error = create_slot_with_snapshot(&wrong).await.unwrap_err();
    for error in [&sql_error, &replication_error] {
        let text = format!("{error} {error:?}");
        assert!(!text.contains(password), "{text}");
        assert!(!error.is_transient(), "{text}");
    }
    assert!(
        matches!(sql_error, SourceError::Connect { .. }),
        "{sql_error:?}"
    );
    assert!(!format!("{good:?}").contains(cluster.password()));

    // the publication follows the configured table set
    ensure_publication(&good).await.unwrap();
    let both = SourceConfig {
        tables: vec![("public".into(), "t".into()), ("public".into(), "u".into())],
        ..good.clone()
    };
    ensure_publication(&both).await.unwrap();
    ensure_publication(&both).await.unwrap();
    let published = psql(
        &cluster,
        "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_publication_tables \
         WHERE pubname = 'plexus_pub'",
    );
    assert_eq!(published.trim(), "t,u");

    assert_eq!(slot_position(&good).await.unwrap(), None);
    let exported = create_slot_with_snapshot(&good).await.unwrap();
    assert_eq!(
        slot_position(&good).await.unwrap(),
        Some(exported.consistent_point)
    );
    let again = create_slot_with_snapshot(&good).await.unwrap_err();
    assert!(!again.is_transient(), "{again}");
    drop(exported);
    drop_slot_and_publication(&good).await.unwrap();
    drop_slot_and_publication(&good).await.unwrap();
    assert_eq!(slot_position(&good).await.unwrap(), None);
    assert_eq!(
        psql(&cluster, "SELECT count(*) FROM pg_publication").trim(),
        "0"
    );
}
