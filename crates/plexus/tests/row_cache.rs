//! Bounded memory for row tables (`plexus_storage::rowcache`) through the public API: a model
//! of every vertex and edge row checked against the engine while a tiny row cache evicts
//! chunks after every commit and at random points, and its spill files are compacted at
//! random points, across checkpoints and reopens; edge endpoints, which live in the edge
//! rows' chunks, read back after every eviction, compaction, checkpoint and reopen, and stay
//! bounded with them; spill write failures injected through the fault `Vfs`, and damaged
//! spill pages.

mod common;

use plexus::admin;
use plexus::testing::FaultVfs;
use plexus::{
    Config, DataType, Database, DurabilityMode, EdgeId, Transaction, Value, VertexId,
    VertexTableSpec, Vfs,
};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Rows per chunk in the row tables: only chunks before the one taking new rows are evicted,
/// so the model starts with more than two chunks of vertices and edges.
const CHUNK_ROWS: usize = 2048;
const PREFILL_VERTICES: usize = 2 * CHUNK_ROWS + 100;
const PREFILL_EDGES: usize = CHUNK_ROWS + 100;
const KEYS: [&str; 5] = ["age", "name", "score", "tags", "free"];

type Props = BTreeMap<String, Value>;

#[derive(Default, Clone, Debug)]
struct Model {
    vertices: BTreeMap<VertexId, (Vec<String>, Props)>,
    edges: BTreeMap<EdgeId, (VertexId, VertexId, Props)>,
    /// Edges created by transactions that rolled back since the last reopen: their rows are
    /// holes in the chunks.
    rolled_back: Vec<EdgeId>,
}

/// The value written for `key` from a small seed: declared types for the declared keys
/// (`age` INT64, `name` STRING, `score` FLOAT64 — the last two in a column family), any value
/// for `tags` (declared LIST) and `free` (undeclared: the dynamic column).
fn value_for(key: &str, seed: i64) -> Value {
    match key {
        "age" => Value::Int(seed * 7919 - 3),
        "name" => Value::string(&format!(
            "n{seed}-{}",
            "x".repeat(seed.rem_euclid(13) as usize)
        )),
        "score" => Value::Float(seed as f64 / 8.0),
        "tags" => Value::List(vec![Value::Int(seed), Value::string("t")].into()),
        _ if seed % 3 == 0 => Value::Bool(seed % 2 == 0),
        _ => Value::Map(vec![(Arc::from("m"), Value::Int(seed))].into()),
    }
}

fn config(row_cache_bytes: u64) -> Config {
    Config {
        row_cache_bytes,
        durability: DurabilityMode::None,
        background_maintenance: false,
        checkpoint_wal_bytes: 0,
        // No background WAL write-back while a test breaks the disk.
        sync_interval_ms: 3_600_000,
        ..Config::default()
    }
}

struct Harness {
    vfs: FaultVfs,
    config: Config,
    db: Option<Database>,
    model: Model,
    /// A reader left open across later steps, with the state it must keep seeing: its
    /// snapshot holds the GC horizon back, so the chunks written since keep their versions.
    pinned: Option<(Transaction, Model)>,
}

impl Harness {
    fn new(row_cache_bytes: u64) -> Self {
        let vfs = FaultVfs::new();
        let config = config(row_cache_bytes);
        let db = Database::open_with_vfs(Arc::new(vfs.clone()), config.clone()).unwrap();
        let spec = VertexTableSpec::new("P")
            .property("age", DataType::Int64)
            .property("name", DataType::String)
            .property("score", DataType::Float64)
            .property("tags", DataType::List)
            .family(&["name", "score"])
            .extra_label("Q");
        db.create_vertex_table(&spec).unwrap();
        let mut h = Harness {
            vfs,
            config,
            db: Some(db),
            model: Model::default(),
            pinned: None,
        };
        h.prefill();
        h
    }

    /// The `i`-th live edge of the model (modulo their count), if any.
    fn pick_edge(&self, i: usize) -> Option<EdgeId> {
        let count = self.model.edges.len().max(1);
        self.model.edges.keys().nth(i % count).copied()
    }

    fn db(&self) -> &Database {
        self.db.as_ref().expect("open")
    }

    fn prefill(&mut self) {
        let mut tx = self.db().begin();
        let mut vertices = Vec::new();
        for i in 0..PREFILL_VERTICES as i64 {
            // Every third vertex is unlabeled-table "U" with only dynamic properties.
            let (labels, keys): (Vec<&str>, &[&str]) = match i % 3 {
                0 => (vec!["U"], &["free", "name"]),
                1 => (vec!["P", "Q"], &["age", "name", "score", "free"]),
                _ => (vec!["P"], &["age", "tags"]),
            };
            let props: Vec<(&str, Value)> = keys.iter().map(|&k| (k, value_for(k, i))).collect();
            let v = tx.create_vertex(&labels, &props).unwrap();
            let owned = props.iter().map(|(k, v)| (k.to_string(), v.clone()));
            let labels = labels.iter().map(|l| l.to_string()).collect();
            self.model.vertices.insert(v, (labels, owned.collect()));
            vertices.push(v);
        }
        // Between vertices of table P, so the edges fill more than a chunk of one edge table
        // (only chunks before the one taking new rows are evicted).
        let p_vertices: Vec<VertexId> = vertices.iter().skip(1).step_by(3).copied().collect();
        for i in 0..PREFILL_EDGES {
            let n = p_vertices.len();
            let (src, dst) = (p_vertices[i * 7 % n], p_vertices[i % n]);
            let props = [
                ("w", Value::Float(i as f64)),
                ("free", value_for("free", i as i64)),
            ];
            let e = tx.create_edge(src, "E", dst, &props).unwrap();
            let owned = props.iter().map(|(k, v)| (k.to_string(), v.clone()));
            self.model.edges.insert(e, (src, dst, owned.collect()));
        }
        tx.commit().unwrap();
    }

    fn check_vertex(&self, v: VertexId) {
        check_vertex(&mut self.db().begin(), &self.model, v);
    }

    fn check_edge(&self, e: EdgeId) {
        check_edge(&mut self.db().begin(), &self.model, e);
    }

    /// The pinned reader still sees the state of its start, every row of it.
    fn check_pinned(&mut self) {
        if let Some((mut tx, model)) = self.pinned.take() {
            for &v in model.vertices.keys() {
                check_vertex(&mut tx, &model, v);
            }
            for &e in model.edges.keys() {
                check_edge(&mut tx, &model, e);
            }
        }
    }
}

fn check_vertex(tx: &mut Transaction, model: &Model, v: VertexId) {
    match model.vertices.get(&v) {
        None => assert!(!tx.vertex_exists(v).unwrap(), "{v} was deleted"),
        Some((labels, props)) => {
            let got: Props = tx.vertex_properties(v).unwrap().into_iter().collect();
            assert_eq!(&got, props, "properties of {v}");
            let mut got = tx.vertex_labels(v).unwrap();
            let mut want = labels.clone();
            got.sort();
            want.sort();
            assert_eq!(got, want, "labels of {v}");
        }
    }
}

/// Every live edge's endpoints equal the model's, and rolled-back edges have none.
fn check_endpoints(tx: &mut Transaction, model: &Model) {
    for (&e, &(src, dst, _)) in &model.edges {
        assert_eq!(
            tx.edge_endpoints(e).unwrap(),
            (src, dst),
            "endpoints of {e:?}"
        );
    }
    for &e in &model.rolled_back {
        assert!(!tx.edge_exists(e).unwrap(), "{e:?} was rolled back");
        assert!(tx.edge_endpoints(e).is_err(), "{e:?} was rolled back");
    }
}

fn check_edge(tx: &mut Transaction, model: &Model, e: EdgeId) {
    match model.edges.get(&e) {
        None => assert!(!tx.edge_exists(e).unwrap(), "{e:?} was deleted"),
        Some((src, dst, props)) => {
            let got: Props = tx.edge_properties(e).unwrap().into_iter().collect();
            assert_eq!(&got, props, "properties of {e:?}");
            assert_eq!(tx.edge_endpoints(e).unwrap(), (*src, *dst));
        }
    }
}

impl Harness {
    fn check_all(&self) {
        let mut tx = self.db().begin();
        let mut scanned = tx.scan_all_vertices().unwrap();
        scanned.sort();
        let want: Vec<VertexId> = self.model.vertices.keys().copied().collect();
        assert_eq!(scanned, want, "vertex scan");
        let mut q = tx.scan_label("Q").unwrap();
        q.sort();
        let want_q: Vec<VertexId> = (self.model.vertices.iter())
            .filter(|(_, (labels, _))| labels.iter().any(|l| l == "Q"))
            .map(|(v, _)| *v)
            .collect();
        assert_eq!(q, want_q, "label scan of Q");
        let mut edges = tx.scan_edges("E").unwrap();
        edges.sort();
        let want: Vec<EdgeId> = self.model.edges.keys().copied().collect();
        assert_eq!(edges, want, "edge scan");
        drop(tx);
        for &v in self.model.vertices.keys() {
            self.check_vertex(v);
        }
        for &e in self.model.edges.keys() {
            self.check_edge(e);
        }
        self.check_endpoints();
    }

    fn check_endpoints(&self) {
        check_endpoints(&mut self.db().begin(), &self.model);
    }

    fn pick_vertex(&self, pick: usize) -> VertexId {
        *self
            .model
            .vertices
            .keys()
            .nth(pick % self.model.vertices.len())
            .expect("vertices remain")
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::SetProp { vertex, key, seed } => {
                let v = self.pick_vertex(vertex);
                let key = KEYS[key];
                let (labels, _) = &self.model.vertices[&v];
                if labels[0] != "P" && ["age", "tags"].contains(&key) {
                    return; // Keep types simple: the "U" table has no declared types anyway.
                }
                let mut tx = self.db().begin();
                let value = seed.map(|s| value_for(key, i64::from(s)));
                match &value {
                    Some(value) => tx.set_vertex_property(v, key, value.clone()).unwrap(),
                    None => tx.remove_vertex_property(v, key).unwrap(),
                }
                tx.commit().unwrap();
                let props = &mut self.model.vertices.get_mut(&v).unwrap().1;
                match value {
                    Some(value) => props.insert(key.to_string(), value),
                    None => props.remove(key),
                };
                self.check_vertex(v);
            }
            Op::SetEdgeProp { edge, seed } => {
                let Some(e) = self.pick_edge(edge) else {
                    return;
                };
                let mut tx = self.db().begin();
                let value = Value::Float(f64::from(seed));
                tx.set_edge_property(e, "w", value.clone()).unwrap();
                tx.commit().unwrap();
                self.model
                    .edges
                    .get_mut(&e)
                    .unwrap()
                    .2
                    .insert("w".into(), value);
                self.check_edge(e);
            }
            Op::AddLabel { vertex } => {
                let v = self.pick_vertex(vertex);
                if self.model.vertices[&v].0[0] != "P" {
                    return;
                }
                let mut tx = self.db().begin();
                tx.add_label(v, "Q").unwrap();
                tx.commit().unwrap();
                let labels = &mut self.model.vertices.get_mut(&v).unwrap().0;
                if !labels.iter().any(|l| l == "Q") {
                    labels.push("Q".into());
                }
                self.check_vertex(v);
            }
            Op::CreateVertex { seed } => {
                let mut tx = self.db().begin();
                let props = [("age", value_for("age", i64::from(seed)))];
                let v = tx.create_vertex(&["P"], &props).unwrap();
                tx.commit().unwrap();
                let owned = props.iter().map(|(k, v)| (k.to_string(), v.clone()));
                self.model
                    .vertices
                    .insert(v, (vec!["P".into()], owned.collect()));
                self.check_vertex(v);
            }
            Op::CreateEdge { src, dst, seed } => {
                let (src, dst) = (self.pick_vertex(src), self.pick_vertex(dst));
                let mut tx = self.db().begin();
                let props = [("w", Value::Float(f64::from(seed)))];
                let e = tx.create_edge(src, "E", dst, &props).unwrap();
                tx.commit().unwrap();
                let owned = props.iter().map(|(k, v)| (k.to_string(), v.clone()));
                self.model.edges.insert(e, (src, dst, owned.collect()));
                self.check_edge(e);
            }
            Op::RolledBackEdge { src, dst } => {
                let (src, dst) = (self.pick_vertex(src), self.pick_vertex(dst));
                let mut tx = self.db().begin();
                let e = tx.create_edge(src, "E", dst, &[]).unwrap();
                tx.rollback();
                self.model.rolled_back.push(e);
            }
            Op::DeleteEdge { edge } => {
                let Some(e) = self.pick_edge(edge) else {
                    return;
                };
                let mut tx = self.db().begin();
                tx.delete_edge(e).unwrap();
                tx.commit().unwrap();
                self.model.edges.remove(&e);
                self.check_edge(e);
            }
            Op::DeleteVertex { vertex } => {
                let v = self.pick_vertex(vertex);
                let mut tx = self.db().begin();
                tx.delete_vertex(v, true).unwrap();
                tx.commit().unwrap();
                self.model.vertices.remove(&v);
                self.model
                    .edges
                    .retain(|_, (src, dst, _)| *src != v && *dst != v);
                self.check_vertex(v);
            }
            Op::Evict => {
                admin::evict_rows(self.db()).unwrap();
                self.check_endpoints();
            }
            Op::CompactSpill => {
                let before = self.db().storage_stats().row_cache;
                let reclaimed = admin::compact_row_spill(self.db()).unwrap();
                let after = self.db().storage_stats().row_cache;
                // Nothing holds a chunk latch between steps, so one round finishes.
                assert_eq!(after.dead_bytes, 0, "{after:?}");
                assert_eq!(after.live_bytes, before.live_bytes, "{after:?}");
                let compacted = u64::from(before.dead_bytes > 0);
                assert_eq!(
                    after.spill_compactions,
                    before.spill_compactions + compacted
                );
                assert!(reclaimed >= before.dead_bytes, "{reclaimed} < {before:?}");
                let names = self.vfs.list().unwrap();
                let files = names.iter().filter(|n| n.ends_with(".spill")).count();
                assert_eq!(files as u64, after.spill_files, "{names:?}");
                assert!(
                    files <= 1,
                    "only the file being appended to is left: {names:?}"
                );
                self.check_endpoints();
            }
            Op::Pin => {
                if self.pinned.is_none() {
                    self.pinned = Some((self.db().begin(), self.model.clone()));
                }
            }
            Op::CheckPinned => self.check_pinned(),
            Op::Checkpoint => {
                self.db().checkpoint().unwrap();
                self.check_endpoints();
            }
            Op::Reopen { checkpoint } => {
                self.check_pinned();
                let db = self.db.take().expect("open");
                if checkpoint {
                    db.checkpoint().unwrap();
                }
                db.close().unwrap();
                let db = Database::open_with_vfs(Arc::new(self.vfs.clone()), self.config.clone());
                self.db = Some(db.unwrap());
                self.check_all();
                // Recovery reserves the offsets the checkpoint and the WAL name: a rolled-back
                // creation after the last of them may be handed out again.
                self.model.rolled_back.clear();
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    SetProp {
        vertex: usize,
        key: usize,
        seed: Option<i16>,
    },
    SetEdgeProp {
        edge: usize,
        seed: i16,
    },
    AddLabel {
        vertex: usize,
    },
    CreateVertex {
        seed: i16,
    },
    CreateEdge {
        src: usize,
        dst: usize,
        seed: i16,
    },
    /// An edge created by a transaction that rolls back.
    RolledBackEdge {
        src: usize,
        dst: usize,
    },
    DeleteEdge {
        edge: usize,
    },
    DeleteVertex {
        vertex: usize,
    },
    Evict,
    CompactSpill,
    Pin,
    CheckPinned,
    Checkpoint,
    Reopen {
        checkpoint: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let index = 0..100_000usize;
    prop_oneof![
        6 => (index.clone(), 0..KEYS.len(), proptest::option::weighted(0.8, any::<i16>()))
            .prop_map(|(vertex, key, seed)| Op::SetProp { vertex, key, seed }),
        3 => (index.clone(), any::<i16>()).prop_map(|(edge, seed)| Op::SetEdgeProp { edge, seed }),
        2 => index.clone().prop_map(|vertex| Op::AddLabel { vertex }),
        2 => any::<i16>().prop_map(|seed| Op::CreateVertex { seed }),
        2 => (index.clone(), index.clone(), any::<i16>())
            .prop_map(|(src, dst, seed)| Op::CreateEdge { src, dst, seed }),
        1 => (index.clone(), index.clone())
            .prop_map(|(src, dst)| Op::RolledBackEdge { src, dst }),
        1 => index.clone().prop_map(|edge| Op::DeleteEdge { edge }),
        1 => index.prop_map(|vertex| Op::DeleteVertex { vertex }),
        2 => Just(Op::Evict),
        2 => Just(Op::CompactSpill),
        1 => Just(Op::Pin),
        1 => Just(Op::CheckPinned),
        1 => Just(Op::Checkpoint),
        1 => any::<bool>().prop_map(|checkpoint| Op::Reopen { checkpoint }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Every read equals the model while a tiny row cache evicts: a one-byte budget (every
    /// cold chunk leaves after every commit) and a budget of a few chunks (evictions only past
    /// it, and on the explicit `Evict` steps); `CompactSpill` steps compact the spill files
    /// (every dead byte reclaimed, only the file being appended to left). Every edge's
    /// endpoints (rolled-back ones: none) are checked after each eviction, compaction,
    /// checkpoint and reopen; the pinned reader checks those of edges deleted since.
    #[test]
    fn rows_read_back_equal_the_model_under_a_tiny_row_cache(
        tiny in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..40),
    ) {
        let mut h = Harness::new(if tiny { 1 } else { 512 << 10 });
        let stats = h.db().storage_stats().row_cache;
        prop_assert!(stats.evictions > 0, "the prefill alone overflows the cache: {stats:?}");
        for op in &ops {
            h.apply(op);
        }
        h.check_pinned();
        h.check_all();
        let stats = h.db().storage_stats().row_cache;
        prop_assert!(stats.misses > 0, "evicted chunks were read back: {stats:?}");
        prop_assert_eq!(stats.spill_write_errors, 0);
    }
}

/// A spill write that fails does not fail the commit that triggered it and loses nothing: the
/// chunk stays in memory, the failure is counted, explicit eviction returns the error, and once
/// the disk works again eviction resumes in a new spill file.
#[test]
fn a_failed_spill_write_surfaces_and_loses_no_data() {
    let h = Harness::new(1);
    let evictions = h.db().storage_stats().row_cache.evictions;
    h.check_all();
    // A vertex in the first chunk of table P (the chunk taking new rows is never evicted).
    let v = *h
        .model
        .vertices
        .iter()
        .find(|(_, (labels, _))| labels[0] == "P")
        .unwrap()
        .0;
    // Every write fails from here: durability `None` only buffers the commit's WAL record.
    h.vfs.fail_writes_after(0);
    let mut tx = h.db().begin();
    tx.set_vertex_property(v, "free", Value::Int(42)).unwrap();
    tx.commit()
        .expect("a failed spill write does not fail the commit");
    let stats = h.db().storage_stats().row_cache;
    assert!(stats.spill_write_errors > 0, "{stats:?}");
    let err = admin::evict_rows(h.db()).unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    let mut tx = h.db().begin();
    assert_eq!(tx.vertex_property(v, "free").unwrap(), Some(Value::Int(42)));
    drop(tx);
    h.vfs.fail_writes_after(u64::MAX);
    admin::evict_rows(h.db()).unwrap();
    let stats = h.db().storage_stats().row_cache;
    assert!(stats.evictions > evictions, "{stats:?}");
    let mut tx = h.db().begin();
    assert_eq!(tx.vertex_property(v, "free").unwrap(), Some(Value::Int(42)));
    drop(tx);
    let mut model = h.model.clone();
    model
        .vertices
        .get_mut(&v)
        .unwrap()
        .1
        .insert("free".into(), Value::Int(42));
    let h = Harness { model, ..h };
    h.check_all();
}

/// A spill-file compaction whose writes fail loses nothing: the error is returned and counted,
/// every row still reads back from the old pages, and once the disk works again the next
/// compaction finishes and leaves only its new file.
#[test]
fn a_failed_write_during_compaction_loses_no_data() {
    let mut h = Harness::new(1);
    // Rewriting rows of evicted chunks leaves their old pages dead.
    for vertex in [0, 1, 2, 3] {
        h.apply(&Op::SetProp {
            vertex,
            key: 4,
            seed: Some(9),
        });
    }
    let before = h.db().storage_stats().row_cache;
    assert!(before.dead_bytes > 0, "{before:?}");
    h.vfs.fail_writes_after(0);
    let err = admin::compact_row_spill(h.db()).unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    let stats = h.db().storage_stats().row_cache;
    assert!(
        stats.spill_write_errors > before.spill_write_errors,
        "{stats:?}"
    );
    assert_eq!(stats.spill_compactions, 0);
    h.check_all();
    h.vfs.fail_writes_after(u64::MAX);
    admin::compact_row_spill(h.db()).unwrap();
    let stats = h.db().storage_stats().row_cache;
    assert_eq!(
        (stats.spill_compactions, stats.dead_bytes),
        (1, 0),
        "{stats:?}"
    );
    let names = h.vfs.list().unwrap();
    let spill: Vec<_> = names.iter().filter(|n| n.ends_with(".spill")).collect();
    assert_eq!(spill.len(), 1, "{names:?}");
    h.check_all();
}

/// Edge endpoints are not resident: they live in the edge rows' chunks and are spilled with
/// them. Edges without properties (their rows are mostly endpoints: 8 of about 9 bytes per
/// row) load, a few chunks per commit, with a row cache ten times smaller than their
/// endpoints; the resident row bytes, which count the endpoints, stay within the budget plus
/// the documented slack after every commit and while every edge's endpoints are read back
/// and equal the model's; the spill pages hold at least 8 bytes per edge.
///
/// Slack: between commits the cache may hold the chunks no eviction may take (the chunk
/// receiving new rows of each of the two tables) and, while reading, the chunks just read
/// (one clock pass gives them a second chance): four chunks of at most `CHUNK_BYTES_MAX`.
#[test]
fn edge_endpoints_are_spilled_and_stay_within_the_row_cache_budget() {
    const VERTICES: usize = 1_000;
    const EDGES: usize = 160_000;
    const BATCH: usize = 2 * CHUNK_ROWS;
    const ENDPOINT_BYTES: u64 = 8;
    const CHUNK_BYTES_MAX: u64 = 24 << 10;
    let budget = EDGES as u64 * ENDPOINT_BYTES / 10;
    let slack = 4 * CHUNK_BYTES_MAX;
    let vfs = FaultVfs::new();
    let db = Database::open_with_vfs(Arc::new(vfs), config(budget)).unwrap();
    let mut max_resident = 0;
    let mut note = |db: &Database| {
        let stats = db.storage_stats().row_cache;
        max_resident = max_resident.max(stats.resident_bytes);
        stats
    };
    let mut tx = db.begin();
    let vertices: Vec<VertexId> = (0..VERTICES)
        .map(|_| tx.create_vertex(&["V"], &[]).unwrap())
        .collect();
    tx.commit().unwrap();
    let ends = |j: usize| (vertices[j % VERTICES], vertices[(j * 7 + j / 3) % VERTICES]);
    let mut edges = Vec::with_capacity(EDGES);
    for start in (0..EDGES).step_by(BATCH) {
        let mut tx = db.begin();
        for j in start..(start + BATCH).min(EDGES) {
            let (src, dst) = ends(j);
            edges.push((tx.create_edge(src, "E", dst, &[]).unwrap(), (src, dst)));
        }
        tx.commit().unwrap();
        note(&db);
    }
    admin::evict_rows(&db).unwrap();
    let loaded = note(&db);
    let spilled_edges = EDGES as u64 - loaded.resident_chunks * CHUNK_ROWS as u64;
    assert!(
        spilled_edges >= EDGES as u64 * 9 / 10
            && loaded.live_bytes >= spilled_edges * ENDPOINT_BYTES,
        "the spill pages hold the endpoints: {loaded:?}"
    );
    let mut tx = db.begin();
    for (i, &(e, want)) in edges.iter().enumerate() {
        assert_eq!(tx.edge_endpoints(e).unwrap(), want, "edge {i}");
        if i % 997 == 0 {
            note(&db);
        }
    }
    drop(tx);
    let read = note(&db);
    assert!(
        read.misses > loaded.misses,
        "endpoints were read back: {read:?}"
    );
    assert_eq!(read.spill_write_errors, 0);
    assert!(
        max_resident <= budget + slack,
        "resident row bytes reached {max_resident} with a {budget}-byte budget (slack {slack})"
    );
}

/// A damaged spill page under edge rows is a `Corruption` error naming the spill file,
/// never wrong endpoints; and since spill files are a cache, reopening the database (which
/// deletes them and recovers from the checkpoint and the WAL) brings every endpoint back.
#[test]
fn a_corrupt_spill_page_loses_no_endpoints() {
    let mut h = Harness::new(1);
    h.apply(&Op::Checkpoint);
    admin::evict_rows(h.db()).unwrap();
    let names = h.vfs.list().unwrap();
    let spill: Vec<&String> = names.iter().filter(|n| n.ends_with(".spill")).collect();
    assert!(!spill.is_empty(), "{names:?}");
    for name in &spill {
        let len = h.vfs.read(name).unwrap().len();
        for offset in (100..len).step_by(4096) {
            h.vfs.corrupt(name, offset, &[0x5A, 0xA5]).unwrap();
        }
    }
    let mut tx = h.db().begin();
    let mut damaged = 0;
    for (&e, &(src, dst, _)) in &h.model.edges {
        match tx.edge_endpoints(e) {
            Ok(ends) => assert_eq!(ends, (src, dst), "endpoints of {e:?}"),
            Err(err @ plexus::Error::Corruption { .. }) => {
                assert!(err.to_string().contains(".spill"), "{err}");
                damaged += 1;
            }
            Err(err) => panic!("{e:?}: {err}"),
        }
    }
    drop(tx);
    assert!(damaged > 0, "some edge rows were in damaged pages");
    h.apply(&Op::Reopen { checkpoint: false });
}
