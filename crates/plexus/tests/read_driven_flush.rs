//! The disk tier's answer to analytics: under the elastic policy, a memtable that scans have
//! read twice over is flushed to CSR runs by the next maintenance round (see `lsm`, MERGE
//! POLICIES); leveling and tiering flush only on the memory budget.

mod common;

use common::TempDir;
use plexus::{Config, Database, Direction, MergePolicy, StorageStats, VertexId, admin};

const VERTICES: usize = 2000;
const EDGES: usize = 8000;

fn open(dir: &TempDir, policy: MergePolicy) -> Database {
    let config = Config {
        merge_policy: policy,
        lsm_range_vertices: 1024,
        // Above the load's memtables (~150 KB), 1/16 of it below each topology's (~75 KB):
        // read-heavy memtables are flushed only from that size on.
        memtable_budget_bytes: 512 << 10,
        // Maintenance runs only when the test asks (`admin::merge_runs`), never behind its back.
        background_maintenance: false,
        ..Config::default()
    };
    Database::open(&dir.0, config).unwrap()
}

/// One read of every edge in both directions (each adjacency read once), then the
/// maintenance it asks for.
fn read_pass(db: &Database, vertices: &[VertexId]) -> StorageStats {
    let snapshot = db.snapshot();
    for &v in vertices {
        snapshot.neighbors(v, None, Direction::Out);
        snapshot.neighbors(v, None, Direction::In);
    }
    admin::merge_runs(db).unwrap();
    db.storage_stats()
}

/// Every vertex's sorted out-neighbours (reading them counts as reads too).
fn adjacency(db: &Database, vertices: &[VertexId]) -> Vec<Vec<VertexId>> {
    let snapshot = db.snapshot();
    vertices
        .iter()
        .map(|&v| {
            let mut out: Vec<VertexId> = snapshot
                .neighbors(v, None, Direction::Out)
                .into_iter()
                .map(|(_, n)| n)
                .collect();
            out.sort();
            out
        })
        .collect()
}

fn load(db: &Database) -> Vec<VertexId> {
    let mut tx = db.begin();
    let vertices: Vec<VertexId> = (0..VERTICES)
        .map(|_| tx.create_vertex(&["V"], &[]).unwrap())
        .collect();
    for i in 0..EDGES {
        let (src, dst) = (vertices[i % VERTICES], vertices[(i * 7 + 3) % VERTICES]);
        tx.create_edge(src, "E", dst, &[]).unwrap();
    }
    tx.commit().unwrap();
    vertices
}

#[test]
fn two_read_passes_flush_the_memtable_under_elastic_merging_only() {
    for policy in [
        MergePolicy::Elastic,
        MergePolicy::Leveling,
        MergePolicy::Tiering,
    ] {
        let dir = TempDir::new("read-flush");
        let db = open(&dir, policy);
        let vertices = load(&db);
        let loaded = db.storage_stats();
        assert!(
            loaded.memtable_bytes > 0 && loaded.run_bytes == 0,
            "{policy:?}"
        );

        let first = read_pass(&db, &vertices);
        assert_eq!(
            first.memtable_bytes, loaded.memtable_bytes,
            "{policy:?}: one pass"
        );
        let expected = adjacency(&db, &vertices);
        let second = read_pass(&db, &vertices);
        if policy == MergePolicy::Elastic {
            assert_eq!(second.memtable_bytes, 0, "read twice over: flushed");
            assert!(second.run_bytes > 0);
        } else {
            assert_eq!(second.memtable_bytes, loaded.memtable_bytes, "{policy:?}");
            assert_eq!(second.run_bytes, 0, "{policy:?}");
        }
        assert_eq!(adjacency(&db, &vertices), expected, "{policy:?}");

        // The new memtable starts its count afresh: one more pass does not flush it.
        let mut tx = db.begin();
        tx.create_edge(vertices[0], "E", vertices[1], &[]).unwrap();
        tx.commit().unwrap();
        let written = db.storage_stats().memtable_bytes;
        assert!(written > 0);
        assert_eq!(
            read_pass(&db, &vertices).memtable_bytes,
            written,
            "{policy:?}"
        );

        let mut expected = expected;
        expected[0].push(vertices[1]);
        expected[0].sort();
        drop(db);
        let db = open(&dir, policy);
        assert_eq!(adjacency(&db, &vertices), expected, "{policy:?}: reopened");
    }
}

#[test]
fn commits_between_read_passes_keep_the_memtable() {
    let dir = TempDir::new("read-flush-writes");
    let db = open(&dir, MergePolicy::Elastic);
    let vertices = load(&db);
    // One pass between commits, eight passes in all: never twice over without a commit.
    for i in 0..8 {
        let mut tx = db.begin();
        tx.create_edge(vertices[i], "E", vertices[i + 1], &[])
            .unwrap();
        tx.commit().unwrap();
        let stats = read_pass(&db, &vertices);
        assert!(
            stats.memtable_bytes > 0,
            "pass {i}: a commit restarts the count"
        );
        assert_eq!(stats.run_bytes, 0);
    }
    read_pass(&db, &vertices);
    assert_eq!(
        read_pass(&db, &vertices).memtable_bytes,
        0,
        "quiet: flushed"
    );
}

#[test]
fn a_memtable_below_a_sixteenth_of_the_budget_stays() {
    let dir = TempDir::new("read-flush-small");
    let config = Config {
        background_maintenance: false,
        ..Config::default()
    };
    let db = Database::open(&dir.0, config).unwrap();
    let vertices = load(&db);
    let loaded = db.storage_stats().memtable_bytes;
    for _ in 0..3 {
        assert_eq!(read_pass(&db, &vertices).memtable_bytes, loaded);
    }
}
