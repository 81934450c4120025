//! The disk tier end to end: CSR runs, flushes and merges seen through the embedded API.

mod common;

use common::TempDir;
use plexus::{Config, Database, Direction, Error, MergePolicy, Value, VertexId};
use std::collections::BTreeMap;

fn config(policy: MergePolicy) -> Config {
    Config {
        merge_policy: policy,
        lsm_range_vertices: 1024,
        lsm_tier_runs: 2,
        ..Config::default()
    }
}

/// Every vertex's sorted (edge, neighbour) lists in both directions, read at `snapshot`.
fn read_all(
    snapshot: &plexus::GraphSnapshot,
    vertices: &[VertexId],
) -> Vec<(Vec<(plexus::EdgeId, VertexId)>, usize)> {
    vertices
        .iter()
        .map(|&v| {
            let mut out = snapshot.neighbors(v, None, Direction::Out);
            out.sort();
            (out, snapshot.neighbors(v, None, Direction::In).len())
        })
        .collect()
}

#[test]
fn a_pinned_snapshot_reads_identically_across_flushes_and_merges() {
    for policy in [
        MergePolicy::Leveling,
        MergePolicy::Tiering,
        MergePolicy::Elastic,
    ] {
        let dir = TempDir::new("pinned");
        let db = Database::open(&dir.0, config(policy)).unwrap();
        let mut tx = db.begin();
        let vertices: Vec<VertexId> = (0..3000)
            .map(|_| tx.create_vertex(&["V"], &[]).unwrap())
            .collect();
        let mut edges = Vec::new();
        for i in 0..9000usize {
            edges.push(
                tx.create_edge(vertices[i % 3000], "E", vertices[(i * 7 + 1) % 3000], &[])
                    .unwrap(),
            );
        }
        tx.commit().unwrap();
        db.flush().unwrap();
        let pinned = db.snapshot();
        let before = read_all(&pinned, &vertices);
        for round in 0..4usize {
            let mut tx = db.begin();
            for (i, e) in edges.iter().enumerate().skip(round).step_by(5) {
                if i % 10 == round {
                    tx.delete_edge(*e).unwrap();
                }
            }
            for i in 0..500usize {
                tx.create_edge(vertices[(i * 13) % 3000], "E", vertices[i % 3000], &[])
                    .unwrap();
            }
            tx.commit().unwrap();
            db.flush().unwrap();
            assert_eq!(
                read_all(&pinned, &vertices),
                before,
                "{policy:?}: pinned snapshot after round {round}"
            );
        }
        let latest = read_all(&db.snapshot(), &vertices);
        assert_ne!(latest, before);
        drop(pinned);
        db.flush().unwrap();
        assert_eq!(
            read_all(&db.snapshot(), &vertices),
            latest,
            "{policy:?}: retiring old components"
        );
        drop(db);
        let db = Database::open(&dir.0, config(policy)).unwrap();
        assert_eq!(
            read_all(&db.snapshot(), &vertices),
            latest,
            "{policy:?}: after reopen"
        );
        assert!(db.storage_stats().run_bytes > 0);
    }
}

fn db_with_runs(tag: &str) -> (TempDir, Vec<String>) {
    let dir = TempDir::new(tag);
    {
        let db = Database::open(&dir.0, config(MergePolicy::Tiering)).unwrap();
        let mut tx = db.begin();
        let a = tx.create_vertex(&["V"], &[]).unwrap();
        let b = tx.create_vertex(&["V"], &[]).unwrap();
        tx.create_edge(a, "E", b, &[]).unwrap();
        tx.commit().unwrap();
        db.flush().unwrap();
    }
    let runs = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".run"))
        .collect();
    (dir, runs)
}

#[test]
fn a_corrupt_truncated_or_missing_run_refuses_to_open_naming_the_file() {
    type Damage = fn(&std::path::Path);
    let damage: [(&str, Damage); 3] = [
        ("corrupt", |p| {
            let mut bytes = std::fs::read(p).unwrap();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0xff;
            std::fs::write(p, bytes).unwrap();
        }),
        ("truncated", |p| {
            let bytes = std::fs::read(p).unwrap();
            std::fs::write(p, &bytes[..bytes.len() - 20]).unwrap();
        }),
        ("missing", |p| std::fs::remove_file(p).unwrap()),
    ];
    for (what, damage) in damage {
        let (dir, runs) = db_with_runs(what);
        assert!(!runs.is_empty());
        damage(&dir.0.join(&runs[0]));
        let err = Database::open(&dir.0, config(MergePolicy::Tiering))
            .err()
            .expect("refused");
        assert!(matches!(err, Error::Corruption { .. }), "{what}: {err}");
        assert!(err.to_string().contains(&runs[0]), "{what}: {err}");
    }
}

fn rss_anon_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A topology ten times larger than the memtable budget loads through background flushes and
/// merges, memtables stay within the budget's bound, and every adjacency reads back.
#[test]
fn a_graph_ten_times_the_memtable_budget_loads_and_reads_back() {
    const VERTICES: usize = 16 * 1024;
    const EDGES: usize = 1_600_000;
    const BATCH: usize = 20_000;
    let budget: u64 = 2 << 20;
    let dir = TempDir::new("bounded");
    let config = Config {
        memtable_budget_bytes: budget,
        lsm_range_vertices: 4096,
        ..config(MergePolicy::Elastic)
    };
    let db = Database::open(&dir.0, config).unwrap();
    let rss_before = rss_anon_kib();
    let mut tx = db.begin();
    let vertices: Vec<VertexId> = (0..VERTICES)
        .map(|_| tx.create_vertex(&["V"], &[]).unwrap())
        .collect();
    tx.commit().unwrap();
    let mut expected: BTreeMap<VertexId, Vec<VertexId>> = BTreeMap::new();
    let mut max_memtable = 0;
    let mut seed = 0x2545F4914F6CDD1Du64;
    for start in (0..EDGES).step_by(BATCH) {
        let mut tx = db.begin();
        for _ in start..start + BATCH {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let (s, d) = (
                vertices[(seed % VERTICES as u64) as usize],
                vertices[((seed >> 32) % VERTICES as u64) as usize],
            );
            tx.create_edge(s, "E", d, &[]).unwrap();
            expected.entry(s).or_default().push(d);
        }
        tx.commit().unwrap();
        max_memtable = max_memtable.max(db.storage_stats().memtable_bytes);
    }
    db.flush().unwrap();
    let stats = db.storage_stats();
    let snapshot = db.snapshot();
    for (&v, want) in &expected {
        let mut got: Vec<VertexId> = snapshot
            .neighbors(v, Some("E"), Direction::Out)
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        let mut want = want.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want, "out-neighbours of {v}");
    }
    let in_total: usize = vertices
        .iter()
        .map(|&v| snapshot.neighbors(v, Some("E"), Direction::In).len())
        .sum();
    assert_eq!(in_total, EDGES);
    println!(
        "budget {budget} B, max memtable {max_memtable} B, runs {} B, flushed {} B, merged {} B, RssAnon {:?} -> {:?} KiB",
        stats.run_bytes,
        stats.flushed_bytes,
        stats.merged_bytes,
        rss_before,
        rss_anon_kib()
    );
    assert!(
        stats.run_bytes >= 10 * budget,
        "the topology is at least ten times the budget"
    );
    // Active memtables freeze past the budget and writers stall while frozen ones exceed it;
    // one batch may overshoot before the freeze.
    assert!(
        max_memtable <= 3 * budget,
        "memtables held {max_memtable} bytes with a {budget}-byte budget"
    );
}

#[test]
fn edge_lookups_see_runs_memtables_and_the_write_set() {
    let dir = TempDir::new("lookup");
    let db = Database::open(&dir.0, config(MergePolicy::Leveling)).unwrap();
    let mut tx = db.begin();
    let vs: Vec<VertexId> = (0..2000)
        .map(|_| tx.create_vertex(&["V"], &[]).unwrap())
        .collect();
    let mut first = Vec::new();
    for i in 0..2000 {
        first.push(tx.create_edge(vs[i], "E", vs[(i + 1) % 2000], &[]).unwrap());
    }
    tx.commit().unwrap();
    db.flush().unwrap();
    let mut tx = db.begin();
    let second = tx.create_edge(vs[5], "E", vs[6], &[]).unwrap(); // a multi-edge, in the memtable
    tx.delete_edge(first[7]).unwrap();
    tx.commit().unwrap();
    let mut tx = db.begin();
    assert_eq!(
        tx.edges_between(vs[5], Some("E"), vs[6]).unwrap(),
        vec![first[5], second]
    );
    assert!(
        tx.edges_between(vs[7], None, vs[8]).unwrap().is_empty(),
        "deleted edge"
    );
    assert!(
        tx.edges_between(vs[5], Some("E"), vs[7])
            .unwrap()
            .is_empty()
    );
    assert!(
        tx.edges_between(vs[5], Some("OTHER"), vs[6])
            .unwrap()
            .is_empty()
    );
    let pending = tx.create_edge(vs[5], "E", vs[6], &[]).unwrap();
    assert_eq!(
        tx.edges_between(vs[5], None, vs[6]).unwrap().len(),
        3,
        "read-your-writes: {pending}"
    );
    assert_eq!(
        db.snapshot().edges_between(vs[5], Some("E"), vs[6]).len(),
        2
    );
}

/// Every projected edge of `snapshot` as (source, target, weight), sorted: built by
/// `Projection::weight`, which reads run property columns where they are current.
fn projected_weights(snapshot: &plexus::GraphSnapshot) -> Vec<(VertexId, VertexId, f64)> {
    let projected = plexus::algo::Projection::new()
        .weight("w")
        .build(snapshot)
        .unwrap();
    let ids = projected.vertex_ids();
    let out = projected.graph().out();
    let mut edges = Vec::new();
    for v in 0..out.vertex_count() as u32 {
        let weights = out.neighbor_weights(v).unwrap();
        for (u, w) in out.neighbors(v).iter().zip(weights) {
            edges.push((ids[v as usize], ids[*u as usize], *w));
        }
    }
    edges.sort_by(|a, b| a.partial_cmp(b).unwrap());
    edges
}

fn sorted_model(
    model: &BTreeMap<plexus::EdgeId, (VertexId, VertexId, f64)>,
) -> Vec<(VertexId, VertexId, f64)> {
    let mut edges: Vec<_> = model.values().copied().collect();
    edges.sort_by(|a, b| a.partial_cmp(b).unwrap());
    edges
}

/// Weighted projections read weights from the CSR runs' property columns where no update
/// happened since they were captured, else from the rows. Whatever the mix — fresh runs,
/// runs older than an update, merged runs, memtable entries, a pinned older snapshot, a
/// reopen after a checkpoint retired the WAL holding the update — they equal the model.
#[test]
fn weighted_projections_see_every_weight_update_across_runs_merges_and_reopens() {
    let dir = TempDir::new("weights");
    let open = || Database::open(&dir.0, config(MergePolicy::Leveling)).unwrap();
    let db = open();
    db.create_vertex_table(&plexus::VertexTableSpec::new("V"))
        .unwrap();
    db.create_edge_table("V", "E", "V", &[("w", plexus::DataType::Float64)])
        .unwrap();
    let mut tx = db.begin();
    let vertices: Vec<VertexId> = (0..2000)
        .map(|_| tx.create_vertex(&["V"], &[]).unwrap())
        .collect();
    let mut model = BTreeMap::new();
    for i in 0..6000usize {
        let (src, dst, w) = (
            vertices[i % 2000],
            vertices[(i * 7 + 3) % 2000],
            i as f64 / 8.0,
        );
        let e = tx
            .create_edge(src, "E", dst, &[("w", plexus::Value::from(w))])
            .unwrap();
        model.insert(e, (src, dst, w));
    }
    tx.commit().unwrap();
    db.flush().unwrap();
    assert_eq!(
        projected_weights(&db.snapshot()),
        sorted_model(&model),
        "fresh runs"
    );

    // An update after the runs were captured: new snapshots must not use their columns, and a
    // snapshot pinned before it must still see the old weights.
    let pinned = (db.snapshot(), sorted_model(&model));
    let mut tx = db.begin();
    for (i, (e, edge)) in model.iter_mut().enumerate().filter(|(i, _)| i % 3 == 0) {
        edge.2 = -(i as f64);
        tx.set_edge_property(*e, "w", plexus::Value::from(edge.2))
            .unwrap();
    }
    tx.commit().unwrap();
    assert_eq!(
        projected_weights(&db.snapshot()),
        sorted_model(&model),
        "after an update"
    );
    assert_eq!(
        projected_weights(&pinned.0),
        pinned.1,
        "pinned before the update"
    );

    // A checkpoint retires the WAL holding the update (it has nothing to flush, so the runs
    // older than the update stay); after a reopen only the manifest knows about the update.
    drop(pinned);
    db.checkpoint().unwrap();
    db.close().unwrap();
    let db = open();
    assert_eq!(
        projected_weights(&db.snapshot()),
        sorted_model(&model),
        "after a reopen"
    );

    // New edges in the memtable beside the old runs.
    let mut tx = db.begin();
    for i in 0..500usize {
        let (src, dst) = (vertices[(i * 13) % 2000], vertices[i % 2000]);
        let e = tx
            .create_edge(src, "E", dst, &[("w", plexus::Value::from(0.5))])
            .unwrap();
        model.insert(e, (src, dst, 0.5));
    }
    tx.commit().unwrap();
    assert_eq!(
        projected_weights(&db.snapshot()),
        sorted_model(&model),
        "memtable + runs"
    );

    // Merges re-read (or copy) the values; the result is the same.
    db.flush().unwrap();
    db.compact();
    assert_eq!(
        projected_weights(&db.snapshot()),
        sorted_model(&model),
        "after merges"
    );
}

/// Row tables (vertex and edge rows with properties) spanning over ten times as many chunks
/// as a small row cache holds load with cold chunks evicted to the spill file; the engine's
/// resident row bytes (its own estimate, `StorageStats::row_cache`) stay within the budget
/// plus the documented slack after every commit, while every value is read back, and across
/// a checkpoint (which reads every row) and a reopen (whose recovery evicts as it loads).
///
/// Slack: eviction runs after each commit, so between commits the cache may hold the chunks
/// no eviction may take — the chunk receiving new rows of each of the two tables — and, while
/// reading, the chunks just read (one clock pass gives them a second chance). Four chunks of
/// at most `CHUNK_BYTES_MAX` each bound it.
///
/// The budget is small enough that the chunk-count claim holds with room to spare: how many
/// chunks are resident when the load ends depends on whether the background maintenance
/// thread's eviction has run yet (6–7 of 147 at 2 MiB; at 4 MiB it was 10–16, and 16 failed
/// the tenfold assertion on a CI run).
#[test]
fn row_tables_ten_times_the_row_cache_stay_bounded_and_read_back() {
    const VERTICES: usize = 100_000;
    const EDGES: usize = 200_000;
    const BATCH: usize = 10_000;
    const CHUNK_BYTES_MAX: u64 = 512 << 10;
    let budget: u64 = 2 << 20;
    let slack = 4 * CHUNK_BYTES_MAX;
    let dir = TempDir::new("rowcache");
    // Maintenance inline. The eviction round after each commit is synchronous either way, but
    // with the background thread a second round (and spill compaction) runs beside it: they
    // share the eviction state (`retry_above_bytes`, which makes the committer's patient round
    // wait) and skip the chunks the other holds latched, so the peak right after a commit
    // depends on scheduling — it once overshot the bound below by ~6 % in CI. The bound is
    // the eviction policy's, measured here without that race.
    let config = Config {
        row_cache_bytes: budget,
        memtable_budget_bytes: 4 << 20,
        lsm_range_vertices: 4096,
        checkpoint_wal_bytes: 0,
        background_maintenance: false,
        ..config(MergePolicy::Elastic)
    };
    let name = |i: usize| format!("vertex-{i}-{}", "n".repeat(i % 17));
    let db = Database::open(&dir.0, config.clone()).unwrap();
    let mut max_resident = 0;
    let mut note = |db: &Database| {
        let stats = db.storage_stats().row_cache;
        max_resident = max_resident.max(stats.resident_bytes);
        stats
    };
    let mut vertices = Vec::with_capacity(VERTICES);
    for start in (0..VERTICES).step_by(BATCH) {
        let mut tx = db.begin();
        for i in start..start + BATCH {
            let props = [
                ("name", Value::string(&name(i))),
                ("age", Value::Int(i as i64 * 3)),
                ("score", Value::Float(i as f64 / 2.0)),
            ];
            vertices.push(tx.create_vertex(&["V"], &props).unwrap());
        }
        tx.commit().unwrap();
        note(&db);
    }
    // Endpoints advance with the edges: creating an edge reads both endpoints' rows, and
    // random endpoints would make most of them misses (correct, but slow for a test).
    let mut edges = Vec::with_capacity(EDGES);
    for start in (0..EDGES).step_by(BATCH) {
        let mut tx = db.begin();
        for j in start..start + BATCH {
            let (s, d) = (
                vertices[j / 2],
                vertices[(j / 2 + 1 + j % 3 * 1000) % VERTICES],
            );
            let props = [
                ("w", Value::Float(j as f64)),
                ("note", Value::string(&format!("e{j}"))),
            ];
            edges.push((tx.create_edge(s, "E", d, &props).unwrap(), s, d));
        }
        tx.commit().unwrap();
        note(&db);
    }
    let loaded = note(&db);
    assert!(
        loaded.spilled_chunks + loaded.resident_chunks >= 10 * loaded.resident_chunks.max(1),
        "the rows span ten times the chunks the cache holds: {loaded:?}"
    );
    let verify = |db: &Database, note: &mut dyn FnMut(&Database) -> plexus::RowCacheStats| {
        for (batch, chunk) in vertices.chunks(BATCH).enumerate() {
            let mut tx = db.begin();
            for (k, &v) in chunk.iter().enumerate() {
                let i = batch * BATCH + k;
                let mut props = tx.vertex_properties(v).unwrap();
                props.sort_by(|a, b| a.0.cmp(&b.0));
                let want = vec![
                    ("age".to_string(), Value::Int(i as i64 * 3)),
                    ("name".to_string(), Value::string(&name(i))),
                    ("score".to_string(), Value::Float(i as f64 / 2.0)),
                ];
                assert_eq!(props, want, "vertex {i}");
                if k % 997 == 0 {
                    note(db);
                }
            }
        }
        for (batch, chunk) in edges.chunks(BATCH).enumerate() {
            let mut tx = db.begin();
            for (k, &(e, s, d)) in chunk.iter().enumerate() {
                let j = batch * BATCH + k;
                let mut props = tx.edge_properties(e).unwrap();
                props.sort_by(|a, b| a.0.cmp(&b.0));
                let want = vec![
                    ("note".to_string(), Value::string(&format!("e{j}"))),
                    ("w".to_string(), Value::Float(j as f64)),
                ];
                assert_eq!(props, want, "edge {j}");
                assert_eq!(tx.edge_endpoints(e).unwrap(), (s, d));
                if k % 997 == 0 {
                    note(db);
                }
            }
        }
    };
    verify(&db, &mut note);
    db.checkpoint().unwrap();
    note(&db);
    db.close().unwrap();
    let db = Database::open(&dir.0, config).unwrap();
    let recovered = note(&db);
    assert!(recovered.evictions > 0, "recovery evicted: {recovered:?}");
    verify(&db, &mut note);
    let stats = note(&db);
    println!(
        "row cache budget {budget} B, max resident {max_resident} B; loaded {loaded:?}; after reopen {stats:?}"
    );
    assert!(
        stats.misses > 0 && stats.spill_write_errors == 0,
        "{stats:?}"
    );
    assert!(
        max_resident <= budget + slack,
        "resident row bytes reached {max_resident} with a {budget}-byte budget (slack {slack})"
    );
}

/// The primary-key index and two secondary indexes (a distinct name per vertex, and a
/// low-cardinality age whose keys span run blocks) of a table whose index entries are about
/// thirty times a small index cache load with the largest resident parts spilled to runs:
/// the resident index bytes (the engine's estimate, `StorageStats::index_cache`) stay within
/// the budget plus the documented slack after every commit, every key lookup and seek equals
/// the model — after updates that leave stale entries in runs, and after checkpoint and
/// reopen (which rebuilds the indexes under the same budget) — and closing deletes the runs.
///
/// Slack: spills run after every insert that takes the cache over its budget, so after a
/// commit the resident parts hold at most the budget (plus one entry, `INDEX_ENTRY_MAX`).
#[test]
fn indexes_thirty_times_the_index_cache_stay_bounded_and_every_seek_reads_back() {
    use plexus::{DataType, KeyRange, VertexTableSpec};
    const VERTICES: usize = 20_000;
    const BATCH: usize = 1_000;
    const AGES: i64 = 50;
    const INDEX_ENTRY_MAX: u64 = 1 << 10;
    let budget: u64 = 160 << 10;
    let dir = TempDir::new("indexcache");
    let config = Config {
        index_cache_bytes: budget,
        checkpoint_wal_bytes: 0,
        ..config(MergePolicy::Elastic)
    };
    let name = |i: usize| format!("person-{i:06}-{}", "n".repeat(i % 11));
    let renamed = |i: usize| format!("renamed-{i:06}");
    let age = |i: usize| (i as i64 * 7) % AGES;
    let db = Database::open(&dir.0, config.clone()).unwrap();
    let spec = VertexTableSpec::new("Person")
        .property("id", DataType::Int64)
        .property("name", DataType::String)
        .property("age", DataType::Int64)
        .primary_key("id");
    db.create_vertex_table(&spec).unwrap();
    db.create_index("Person", "name", None).unwrap();
    db.create_index("Person", "age", None).unwrap();
    let mut max_resident = 0;
    let mut note = |db: &Database| {
        let stats = db.storage_stats().index_cache;
        max_resident = max_resident.max(stats.resident_bytes);
        stats
    };
    let mut vertices = Vec::with_capacity(VERTICES);
    for start in (0..VERTICES).step_by(BATCH) {
        let mut tx = db.begin();
        for i in start..start + BATCH {
            let props = [
                ("id", Value::Int(i as i64 * 3)),
                ("name", Value::string(&name(i))),
                ("age", Value::Int(age(i))),
            ];
            vertices.push(tx.create_vertex(&["Person"], &props).unwrap());
        }
        tx.commit().unwrap();
        note(&db);
    }
    // Every tenth vertex is renamed: its old name stays in a run (stale), its new one is
    // resident until spilled.
    let mut names: Vec<String> = (0..VERTICES).map(name).collect();
    let mut tx = db.begin();
    for i in (0..VERTICES).step_by(10) {
        names[i] = renamed(i);
        tx.set_vertex_property(vertices[i], "name", Value::string(&names[i]))
            .unwrap();
    }
    tx.commit().unwrap();
    db.compact();
    let loaded = note(&db);
    assert!(
        loaded.spills >= 30 && loaded.runs > 0 && loaded.merges > 0,
        "the index entries span thirty times the budget: {loaded:?}"
    );
    let verify = |db: &Database, note: &mut dyn FnMut(&Database) -> plexus::IndexCacheStats| {
        let mut tx = db.begin();
        for (i, &v) in vertices.iter().enumerate() {
            let id = Value::Int(i as i64 * 3);
            assert_eq!(tx.lookup("Person", &id).unwrap(), Some(v), "id of {i}");
            let absent = Value::Int(i as i64 * 3 + 1);
            assert_eq!(tx.lookup("Person", &absent).unwrap(), None);
            let equal = KeyRange::equal(&Value::string(&names[i])).unwrap();
            let found = tx.seek_by_index("Person", "name", &equal).unwrap();
            assert_eq!(found, Some(vec![v]), "name of {i}");
            if i % 10 == 0 {
                let old = KeyRange::equal(&Value::string(&name(i))).unwrap();
                let found = tx.seek_by_index("Person", "name", &old).unwrap();
                assert_eq!(found, Some(vec![]), "old name of {i}");
            }
            if i % 997 == 0 {
                note(db);
            }
        }
        for a in 0..AGES {
            let equal = KeyRange::equal(&Value::Int(a)).unwrap();
            let found = tx.seek_by_index("Person", "age", &equal).unwrap().unwrap();
            let want: Vec<VertexId> = (0..VERTICES)
                .filter(|&i| age(i) == a)
                .map(|i| vertices[i])
                .collect();
            assert_eq!(found, want, "age {a}");
        }
        let prefix = KeyRange::prefix(&Value::string("person-00123")).unwrap();
        let found = tx
            .seek_by_index("Person", "name", &prefix)
            .unwrap()
            .unwrap();
        let want: Vec<VertexId> = (1230..1240)
            .filter(|i| i % 10 != 0)
            .map(|i| vertices[i])
            .collect();
        assert_eq!(found, want, "prefix");
        note(db);
    };
    verify(&db, &mut note);
    db.checkpoint().unwrap();
    db.close().unwrap();
    let leftover = |dir: &TempDir| {
        let names = std::fs::read_dir(&dir.0).unwrap();
        let names = names.map(|e| e.unwrap().file_name().into_string().unwrap());
        names.filter(|n| n.starts_with("index-")).count()
    };
    assert_eq!(leftover(&dir), 0, "closing deletes the runs");
    let db = Database::open(&dir.0, config).unwrap();
    let recovered = note(&db);
    assert!(recovered.spills > 0, "the rebuild spilled: {recovered:?}");
    verify(&db, &mut note);
    let stats = note(&db);
    println!(
        "index cache budget {budget} B, max resident {max_resident} B; loaded {loaded:?}; after reopen {stats:?}"
    );
    assert_eq!(
        stats.spill_write_errors + stats.merge_errors,
        0,
        "{stats:?}"
    );
    assert!(
        max_resident <= budget + INDEX_ENTRY_MAX,
        "resident index bytes reached {max_resident} with a {budget}-byte budget"
    );
}
