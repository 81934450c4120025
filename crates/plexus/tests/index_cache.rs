//! Bounded memory for indexes (`plexus_storage::indexcache`) through the public API: a tiny
//! index cache spills the primary-key and secondary indexes to run files while failures are
//! injected through the fault `Vfs` (a failed spill write loses nothing), run files are
//! damaged (a seek reports `Corruption` naming the file and never returns wrong rows), and
//! the process crashes (the reopened database deletes the old runs and rebuilds every index
//! from the rows). The budget bound under load is in `disk_tier.rs`.

use plexus::admin;
use plexus::testing::FaultVfs;
use plexus::{
    Config, DataType, Database, DurabilityMode, Error, KeyRange, Value, VertexId, VertexTableSpec,
    Vfs,
};
use std::sync::Arc;

const INDEX_CACHE_BYTES: u64 = 16 << 10;

fn config(durability: DurabilityMode) -> Config {
    Config {
        index_cache_bytes: INDEX_CACHE_BYTES,
        durability,
        background_maintenance: false,
        checkpoint_wal_bytes: 0,
        // No background WAL write-back while a test breaks the disk.
        sync_interval_ms: 3_600_000,
        ..Config::default()
    }
}

fn name(i: usize) -> String {
    format!("item-{i:05}")
}

fn id(i: usize) -> Value {
    Value::string(&format!("id-{i:05}"))
}

/// `Item` vertices with a primary key `id` and an index on `name`.
fn define(db: &Database) {
    let spec = VertexTableSpec::new("Item")
        .property("id", DataType::String)
        .property("name", DataType::String)
        .primary_key("id");
    db.create_vertex_table(&spec).unwrap();
    db.create_index("Item", "name", None).unwrap();
}

/// Creates items `range` in one transaction; returns their ids.
fn load(db: &Database, range: std::ops::Range<usize>) -> Vec<VertexId> {
    let mut tx = db.begin();
    let created = range
        .map(|i| {
            let props = [("id", id(i)), ("name", Value::string(&name(i)))];
            tx.create_vertex(&["Item"], &props).unwrap()
        })
        .collect();
    tx.commit().unwrap();
    created
}

/// Every item's key lookup and name seek, and a missing key, against the model.
fn check(db: &Database, items: &[VertexId]) {
    let mut tx = db.begin();
    for (i, &v) in items.iter().enumerate() {
        assert_eq!(tx.lookup("Item", &id(i)).unwrap(), Some(v), "id of {i}");
        let equal = KeyRange::equal(&Value::string(&name(i))).unwrap();
        let found = tx.seek_by_index("Item", "name", &equal).unwrap();
        assert_eq!(found, Some(vec![v]), "name of {i}");
    }
    let missing = Value::string("id-missing");
    assert_eq!(tx.lookup("Item", &missing).unwrap(), None);
    let all = KeyRange::prefix(&Value::string("item-")).unwrap();
    let found = tx.seek_by_index("Item", "name", &all).unwrap();
    assert_eq!(found.as_deref(), Some(items));
}

fn run_files(vfs: &FaultVfs) -> Vec<String> {
    let names = vfs.list().unwrap();
    names
        .into_iter()
        .filter(|n| n.starts_with("index-"))
        .collect()
}

/// Spill writes that fail (the disk is full) do not fail commits and lose no index entry:
/// the entries stay resident, the failures are counted and returned by an explicit spill,
/// and once the disk works again spills succeed and everything still reads back.
#[test]
fn a_failed_index_spill_loses_nothing() {
    let vfs = FaultVfs::new();
    let db = Database::open_with_vfs(Arc::new(vfs.clone()), config(DurabilityMode::None)).unwrap();
    define(&db);
    let mut items = load(&db, 0..300);
    let before = db.storage_stats().index_cache;
    assert!(before.spills > 0, "{before:?}");
    // Every write fails from here: durability `None` only buffers the commits' WAL records.
    vfs.fail_writes_after(0);
    items.extend(load(&db, 300..600));
    let stats = db.storage_stats().index_cache;
    assert!(stats.spill_write_errors > 0, "{stats:?}");
    assert_eq!(stats.spills, before.spills, "{stats:?}");
    assert!(stats.resident_bytes > INDEX_CACHE_BYTES, "{stats:?}");
    check(&db, &items);
    let spilled = admin::spill_indexes(&db);
    assert!(
        spilled
            .as_ref()
            .is_err_and(|e| e.to_string().contains("injected")),
        "{spilled:?}"
    );
    check(&db, &items);
    vfs.fail_writes_after(u64::MAX);
    items.extend(load(&db, 600..700));
    let stats = db.storage_stats().index_cache;
    assert!(stats.spills > before.spills, "{stats:?}");
    assert!(stats.resident_bytes <= INDEX_CACHE_BYTES, "{stats:?}");
    check(&db, &items);
    admin::spill_indexes(&db).unwrap();
    assert_eq!(db.storage_stats().index_cache.resident_bytes, 0);
    check(&db, &items);
}

/// A damaged run file is reported, never read as rows: with every spilled block of every run
/// damaged, each seek that reads one returns `Corruption` naming a run file, and every seek
/// that succeeds (answered by the resident part) equals the model.
#[test]
fn a_damaged_index_run_is_corruption_naming_the_file() {
    let vfs = FaultVfs::new();
    let db = Database::open_with_vfs(Arc::new(vfs.clone()), config(DurabilityMode::None)).unwrap();
    define(&db);
    let items = load(&db, 0..400);
    admin::spill_indexes(&db).unwrap();
    let files = run_files(&vfs);
    assert!(!files.is_empty());
    for file in &files {
        let len = vfs.read(file).unwrap().len();
        // Every block (at least 40 bytes) gets damaged bytes.
        for offset in (0..len).step_by(16) {
            vfs.corrupt(file, offset, b"\xFF\xFF").unwrap();
        }
    }
    let mut tx = db.begin();
    let mut corrupt = 0;
    for (i, &v) in items.iter().enumerate() {
        match tx.lookup("Item", &id(i)) {
            Ok(found) => panic!("item {i}: a damaged run read as {found:?} ({v})"),
            Err(Error::Corruption { file, .. }) => {
                assert!(files.iter().any(|f| file.contains(f)), "{file}");
                corrupt += 1;
            }
            Err(e) => panic!("item {i}: {e}"),
        }
        let equal = KeyRange::equal(&Value::string(&name(i))).unwrap();
        match tx.seek_by_index("Item", "name", &equal) {
            Ok(found) => panic!("item {i}: a damaged run read as {found:?}"),
            Err(Error::Corruption { file, .. }) => {
                assert!(files.iter().any(|f| file.contains(f)), "{file}")
            }
            Err(e) => panic!("item {i}: {e}"),
        }
    }
    assert_eq!(corrupt, items.len());
}

/// A crash leaves run files behind (their directory entries made durable by a checkpoint,
/// their content unsynced garbage); the reopened database deletes them — with an unbounded
/// index cache no run file is left at all — and rebuilds every index from the rows, under a
/// tiny budget too, and every lookup equals the model.
#[test]
fn reopening_after_a_crash_rebuilds_the_indexes_and_deletes_old_runs() {
    let vfs = FaultVfs::new();
    let db = Database::open_with_vfs(Arc::new(vfs.clone()), config(DurabilityMode::Fsync)).unwrap();
    define(&db);
    let mut items = load(&db, 0..500);
    db.checkpoint().unwrap();
    items.extend(load(&db, 500..700));
    assert!(db.storage_stats().index_cache.runs > 0);
    let crashed = vfs.after_crash(true);
    let left = run_files(&crashed);
    assert!(!left.is_empty(), "the crash leaves run files behind");
    for file in &left {
        let len = crashed.read(file).unwrap().len();
        crashed.corrupt(file, 0, &vec![0xAB; len]).unwrap();
    }
    drop(db);
    // An unbounded cache writes no run: every file left is an old one.
    let unbounded = Config {
        index_cache_bytes: u64::MAX,
        ..config(DurabilityMode::Fsync)
    };
    let image = crashed.after_crash(false);
    let db = Database::open_with_vfs(Arc::new(image.clone()), unbounded).unwrap();
    assert_eq!(run_files(&image), Vec::<String>::new());
    check(&db, &items);
    drop(db);
    // Under the tiny budget the rebuild spills again, into new files.
    let image = crashed.after_crash(false);
    let db =
        Database::open_with_vfs(Arc::new(image.clone()), config(DurabilityMode::Fsync)).unwrap();
    let stats = db.storage_stats().index_cache;
    assert!(
        stats.spills > 0 && stats.resident_bytes <= INDEX_CACHE_BYTES,
        "{stats:?}"
    );
    check(&db, &items);
}
