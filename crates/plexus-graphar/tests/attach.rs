//! `plexus_graphar::attach`: neighbours and label filters read from an exported graph in
//! place agree with the database it came from, in both payload formats and under a tiny
//! cache budget; bad files and wrong names are errors naming them.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;

use plexus::{Config, CypherValue, Database, Params};
use plexus_graphar::attach::{AttachedGraph, DEFAULT_CACHE_BUDGET_BYTES, Direction, LabelFilter};
use plexus_graphar::meta::FileType;
use plexus_graphar::{ExportOptions, export};

const PEOPLE: i64 = 300;

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("plexus-attach-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// People with labels in runs (Admin on two id ranges) and scattered (Vip), KNOWS edges of
/// uneven degree (vertex 7 has many), a deleted person (an id hole).
fn graph() -> Database {
    let db = Database::open_in_memory(Config::default()).unwrap();
    let mut conn = db.connect();
    let run = |conn: &mut plexus::Connection, q: &str| {
        conn.execute(q, &Params::new()).unwrap();
    };
    run(
        &mut conn,
        &format!(
            "UNWIND range(0, {}) AS i CREATE (:Person {{i: i}})",
            PEOPLE - 1
        ),
    );
    run(
        &mut conn,
        "MATCH (p:Person) WHERE 10 <= p.i < 100 OR 200 <= p.i < 250 SET p:Admin",
    );
    run(&mut conn, "MATCH (p:Person) WHERE p.i % 7 = 0 SET p:Vip");
    run(
        &mut conn,
        "MATCH (a:Person), (b:Person) WHERE (a.i * 13 + b.i) % 29 = 0 AND a.i % 3 = 0 \
         CREATE (a)-[:KNOWS]->(b)",
    );
    run(
        &mut conn,
        "MATCH (a:Person {i: 7}), (b:Person) WHERE b.i % 2 = 0 CREATE (a)-[:KNOWS]->(b)",
    );
    run(&mut conn, "MATCH (p:Person {i: 5}) DETACH DELETE p");
    db
}

/// Every Person's id in id order: position = GraphAr index.
fn dense(db: &Database) -> BTreeMap<i64, u64> {
    let ids = ints(db, "MATCH (p:Person) RETURN id(p) AS id ORDER BY id");
    ids.into_iter()
        .enumerate()
        .map(|(i, id)| (id[0], i as u64))
        .collect()
}

fn ints(db: &Database, query: &str) -> Vec<Vec<i64>> {
    let result = db.connect().execute(query, &Params::new()).unwrap();
    (result.rows.iter())
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    CypherValue::Int(i) => *i,
                    other => panic!("not an integer: {other:?}"),
                })
                .collect()
        })
        .collect()
}

fn exported(db: &Database, name: &str, file_type: FileType) -> (Scratch, PathBuf) {
    let out = Scratch::new(name);
    let options = ExportOptions {
        name: "g".into(),
        vertex_chunk_size: 64,
        edge_chunk_size: 50,
        file_type,
        ..ExportOptions::default()
    };
    let summary = export(db, &out.0, &options).unwrap();
    (out, summary.graph_file)
}

#[test]
fn neighbours_match_the_database_in_both_formats_and_any_budget() {
    let db = graph();
    let index = dense(&db);
    let mut want_out: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut want_in: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for pair in ints(
        &db,
        "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN id(a), id(b)",
    ) {
        let (a, b) = (index[&pair[0]], index[&pair[1]]);
        want_out.entry(a).or_default().push(b);
        want_in.entry(b).or_default().push(a);
    }
    assert!(
        want_out[&index[&(7)]].len() > 100,
        "one vertex spans several chunks"
    );
    for (name, file_type, budget) in [
        ("parquet", FileType::Parquet, DEFAULT_CACHE_BUDGET_BYTES),
        ("parquet-tiny-cache", FileType::Parquet, 256),
        ("csv", FileType::Csv, DEFAULT_CACHE_BUDGET_BYTES),
    ] {
        let (_out, graph_file) = exported(&db, name, file_type);
        let attached = AttachedGraph::open(&graph_file, budget).unwrap();
        assert_eq!(attached.vertex_count("Person").unwrap(), index.len() as u64);
        let knows = attached
            .edge_info("Person", "KNOWS", "Person")
            .unwrap()
            .clone();
        for v in 0..index.len() as u64 {
            for (direction, want) in [(Direction::Out, &want_out), (Direction::In, &want_in)] {
                let mut got = attached.neighbors(&knows, direction, v).unwrap();
                got.sort_unstable();
                let mut want = want.get(&v).cloned().unwrap_or_default();
                want.sort_unstable();
                assert_eq!(got, want, "{name}: {direction:?} neighbours of {v}");
            }
        }
    }
}

/// Sorted indices as maximal ranges.
fn ranges(mut indices: Vec<u64>) -> Vec<Range<u64>> {
    indices.sort_unstable();
    let mut out: Vec<Range<u64>> = Vec::new();
    for i in indices {
        match out.last_mut() {
            Some(last) if last.end == i => last.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

#[test]
fn label_filters_match_the_database() {
    let db = graph();
    let index = dense(&db);
    let (_out, graph_file) = exported(&db, "labels", FileType::Parquet);
    let attached = AttachedGraph::open(&graph_file, DEFAULT_CACHE_BUDGET_BYTES).unwrap();
    let label = |l: &str| Box::new(LabelFilter::Label(l.into()));
    for (filter, cypher) in [
        (*label("Admin"), "p:Admin"),
        (
            LabelFilter::And(label("Admin"), label("Vip")),
            "p:Admin AND p:Vip",
        ),
        (
            LabelFilter::Or(label("Admin"), label("Vip")),
            "p:Admin OR p:Vip",
        ),
        (
            LabelFilter::And(label("Admin"), Box::new(LabelFilter::Not(label("Vip")))),
            "p:Admin AND NOT p:Vip",
        ),
        (LabelFilter::Not(label("Admin")), "NOT p:Admin"),
    ] {
        let query = format!("MATCH (p:Person) WHERE {cypher} RETURN id(p)");
        let want = ranges(ints(&db, &query).iter().map(|r| index[&r[0]]).collect());
        assert_eq!(
            attached.filter_labels("Person", &filter).unwrap(),
            want,
            "{cypher}"
        );
    }
    // The label chunks Plexus writes are read as runs straight from their RLE pages (the
    // fast path), and agree with the flags decoded through Arrow.
    let chunk = graph_file
        .parent()
        .unwrap()
        .join("vertex/Person/labels/chunk1");
    let runs = plexus_graphar::rle::label_runs(&chunk, &["Admin", "Vip"], 64).unwrap();
    let runs = runs.expect("Plexus's label chunks are RLE pages");
    let file = std::fs::File::open(&chunk).unwrap();
    let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    for (column, runs) in ["Admin", "Vip"].iter().zip(&runs) {
        let flags = batch.column_by_name(column).unwrap();
        let flags = arrow::array::AsArray::as_boolean(flags);
        let mut start = 0;
        for &(end, flag) in runs {
            assert!(
                (start..end).all(|i| flags.value(i) == flag),
                "{column} {start}..{end}"
            );
            start = end;
        }
        assert_eq!(start, 64);
    }
}

#[test]
fn wrong_names_and_broken_files_are_errors_naming_them() {
    let db = graph();
    let (out, graph_file) = exported(&db, "errors", FileType::Parquet);
    let attached = AttachedGraph::open(&graph_file, DEFAULT_CACHE_BUDGET_BYTES).unwrap();
    let error = attached.edge_info("Person", "LIKES", "Person").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("no edge type Person_LIKES_Person"),
        "{error}"
    );
    let filter = LabelFilter::Label("Nope".into());
    let error = attached.filter_labels("Person", &filter).unwrap_err();
    assert!(error.to_string().contains("no label \"Nope\""), "{error}");
    let error = attached.vertex_count("City").unwrap_err();
    assert!(
        error.to_string().contains("no vertex type \"City\""),
        "{error}"
    );

    // A truncated adjacency chunk: the read names the file, and nothing panics.
    let chunk = out
        .0
        .join("edge/Person_KNOWS_Person/ordered_by_source/adj_list/part0/chunk0");
    let bytes = std::fs::read(&chunk).unwrap();
    std::fs::write(&chunk, &bytes[..bytes.len() / 2]).unwrap();
    let fresh = AttachedGraph::open(&graph_file, DEFAULT_CACHE_BUDGET_BYTES).unwrap();
    let knows = fresh
        .edge_info("Person", "KNOWS", "Person")
        .unwrap()
        .clone();
    let error = (0..64)
        .find_map(|v| fresh.neighbors(&knows, Direction::Out, v).err())
        .expect("a vertex of part 0 with edges reads the broken chunk");
    assert!(
        error.to_string().contains("adj_list/part0/chunk0"),
        "{error}"
    );
}
