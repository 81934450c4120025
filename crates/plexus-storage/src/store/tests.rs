//! Tests of `Storage`: primary-key encoding, endpoints across checkpoint, restart and replay.

use super::*;
use crate::catalog::VertexTableDef;
use crate::fault::FaultVfs;
use std::ops::Range;

/// An edge offset, its endpoints, and whether it exists.
type EdgeState = (u32, Option<(VertexId, VertexId)>, bool);

/// Storage over `vfs` whose row cache (a one-byte budget) evicts every cold chunk.
fn open(vfs: &FaultVfs) -> Storage {
    let config = Config {
        row_cache_bytes: 1,
        ..Config::default()
    };
    Storage::open(Arc::new(vfs.clone()), &config).unwrap().0
}

/// Vertex table 0 (label `V`) and edge table 0, `(V)-[E]->(V)`.
fn define_schema(storage: &Storage) {
    let vertex = VertexTableDef {
        name: "V".into(),
        label: 0,
        declared: false,
        properties: Vec::new(),
        primary_key: None,
        families: Vec::new(),
        extra_labels: None,
    };
    let edge = EdgeTableDef {
        src: 0,
        edge_type: 0,
        dst: 0,
        declared: false,
        properties: Vec::new(),
    };
    let ops = [
        CatalogOp::Label {
            id: 0,
            name: "V".into(),
        },
        CatalogOp::EdgeType {
            id: 0,
            name: "E".into(),
        },
        CatalogOp::VertexTable { id: 0, def: vertex },
        CatalogOp::EdgeTable { id: 0, def: edge },
    ];
    for (i, op) in ops.into_iter().enumerate() {
        let defined = |c: &Catalog| match i {
            0 => !c.labels.is_empty(),
            1 => !c.edge_types.is_empty(),
            2 => !c.vertex_tables.is_empty(),
            _ => !c.edge_tables.is_empty(),
        };
        storage
            .change_catalog(|c| defined(c).then_some(()), |_| Ok(op))
            .unwrap();
    }
}

/// Installs and logs a commit at `ts` (no reader is older), then evicts.
fn commit(storage: &Storage, ts: Timestamp, ops: Vec<WriteOp>) {
    let record = CommitRecord::new(ts, ops);
    storage.install(&record, ts).unwrap();
    storage.log_commit(&record).unwrap();
    storage.evict_rows(ts).unwrap();
}

/// The endpoints edge `offset` is created with.
fn ends_of(offset: u32) -> (VertexId, VertexId) {
    (
        VertexId::new(0, offset % 997),
        VertexId::new(0, offset.wrapping_mul(31) % 991),
    )
}

/// Creates the edges of `offsets` at `ts` but every fifth (a rolled-back transaction's
/// hole), then deletes at `ts + 1` those `deleted` picks among the created ones.
fn create_and_delete(
    storage: &Storage,
    offsets: Range<u32>,
    ts: Timestamp,
    deleted: impl Fn(u32) -> bool,
) {
    let created: Vec<u32> = offsets.filter(|e| !e.is_multiple_of(5)).collect();
    let create = |&e: &u32| {
        let (src, dst) = ends_of(e);
        let id = EdgeId::new(0, e);
        let props = Vec::new();
        WriteOp::CreateEdge {
            id,
            src,
            dst,
            props,
        }
    };
    commit(storage, ts, created.iter().map(create).collect());
    let delete = |&e: &u32| {
        let (src, dst) = ends_of(e);
        let id = EdgeId::new(0, e);
        WriteOp::DeleteEdge { id, src, dst }
    };
    let gone = created.iter().filter(|&&e| deleted(e));
    commit(storage, ts + 1, gone.map(delete).collect());
}

/// Every offset's endpoints and existence at `ts`, read through `Storage`.
fn read_all(storage: &Storage, offsets: Range<u32>, ts: Timestamp) -> Vec<EdgeState> {
    offsets
        .map(|e| {
            let id = EdgeId::new(0, e);
            let ends = storage.edge_endpoints(id).unwrap();
            (e, ends, storage.edge_exists(id, ts).unwrap())
        })
        .collect()
}

/// Endpoints live in spilled row chunks, and a checkpoint, a restart and WAL replay bring
/// them back identically: for edges in the checkpoint, edges created after it (deleted
/// since or not), and holes; only edges deleted before the checkpoint have none after
/// (see ENDPOINTS in `rows`).
/// The primary-key index's keys are equal exactly when the values are (`Value`'s
/// equality, which the `HashMap<Value, _>` it replaced used): `1` and `1.0` differ,
/// `-0.0` and `0.0` differ, NaNs with the same bits meet, lists and maps by content.
#[test]
fn primary_key_bytes_are_equal_exactly_when_the_values_are() {
    let list = |items: &[Value]| Value::List(Arc::from(items));
    let map = |k: &str, v: Value| Value::Map(Arc::from([(Arc::from(k), v)]));
    let values = [
        Value::Int(1),
        Value::Float(1.0),
        Value::Float(0.0),
        Value::Float(-0.0),
        Value::Float(f64::NAN),
        Value::Float(-f64::NAN),
        Value::Bool(true),
        Value::string("1"),
        Value::string(""),
        list(&[Value::Int(1)]),
        list(&[Value::Float(1.0)]),
        list(&[Value::string(""), Value::string("")]),
        list(&[Value::string("\0\0\0\0")]),
        map("a", Value::Int(1)),
        map("a", Value::Null),
        Value::Temporal(plexus_types::TemporalValue::Date { days: 1 }),
    ];
    for a in &values {
        for b in &values {
            assert_eq!(pk_bytes(a) == pk_bytes(b), a == b, "{a:?} vs {b:?}");
        }
        assert_eq!(pk_bytes(a), pk_bytes(&a.clone()));
    }
}

#[test]
fn endpoints_come_back_identically_after_checkpoint_restart_and_replay() {
    const CHUNK: u32 = rows::CHUNK_ROWS as u32;
    let (before_ckpt, after_ckpt) = (0..2 * CHUNK + 100, 2 * CHUNK + 100..4 * CHUNK + 7);
    let all = 0..after_ckpt.end + 3;
    let vfs = FaultVfs::new();
    let storage = open(&vfs);
    define_schema(&storage);
    create_and_delete(&storage, before_ckpt, 2, |e| e.is_multiple_of(7));
    let wal_start = storage.rotate_wal().unwrap();
    storage.freeze_all();
    storage.write_checkpoint(3, wal_start).unwrap();
    create_and_delete(&storage, after_ckpt.clone(), 4, |e| {
        e.is_multiple_of(7) || e.is_multiple_of(11)
    });
    let before = read_all(&storage, all.clone(), 5);
    let stats = storage.row_cache_stats();
    assert!(stats.evictions >= 4 && stats.misses >= 4, "{stats:?}");
    for &(e, ends, exists) in &before {
        let created = e < after_ckpt.end && !e.is_multiple_of(5);
        assert_eq!(ends, created.then(|| ends_of(e)), "edge {e}");
        let deleted = e.is_multiple_of(7) || (after_ckpt.contains(&e) && e.is_multiple_of(11));
        assert_eq!(exists, created && !deleted, "edge {e}");
    }
    storage.flush_wal(true).unwrap();
    drop(storage);
    let storage = open(&vfs);
    let after = read_all(&storage, all, 5);
    assert!(storage.row_cache_stats().misses > 0);
    let want: Vec<EdgeState> = before
        .into_iter()
        .map(|(e, ends, exists)| {
            let in_checkpoint = exists || after_ckpt.contains(&e);
            (e, ends.filter(|_| in_checkpoint), exists)
        })
        .collect();
    assert_eq!(after, want);
}
