//! Model-based property test: random sequences of operations across several concurrent
//! transactions, checked against a simple in-memory model after every step and after reopen.
//!
//! The model keeps the committed state, each open transaction's view (its start state plus its
//! own writes) and the conflict keys of every commit. It predicts, independently of the
//! engine, whether a commit must fail under snapshot isolation (first committer wins: the rules
//! of `plexus_txn::validation`) and checks the engine's verdict, every read, every error
//! (writes to invisible vertices must fail with NotFound) and the state after recovery.

mod common;

use plexus::testing::FaultVfs;
use plexus::{
    Config, Database, Direction, EdgeId, Error, MergePolicy, Transaction, Value, VertexId,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const SLOTS: usize = 3;
const LABELS: [&str; 3] = ["A", "B", "C"];
const KEYS: [&str; 2] = ["k0", "k1"];
const TYPES: [&str; 2] = ["R", "S"];

#[derive(Debug, Clone)]
enum Op {
    Begin,
    CreateVertex {
        slot: usize,
        label: usize,
        value: i8,
    },
    SetProp {
        slot: usize,
        vertex: usize,
        key: usize,
        value: Option<i8>,
    },
    AddLabel {
        slot: usize,
        vertex: usize,
        label: usize,
    },
    DeleteVertex {
        slot: usize,
        vertex: usize,
        detach: bool,
    },
    CreateEdge {
        slot: usize,
        src: usize,
        dst: usize,
        ty: usize,
    },
    DeleteEdge {
        slot: usize,
        edge: usize,
    },
    Commit {
        slot: usize,
    },
    Abort {
        slot: usize,
    },
    Reopen {
        checkpoint: bool,
    },
    /// Flush every topology memtable to CSR runs (and merge) now.
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    let slot = 0..SLOTS;
    // Mostly a few hot vertices, so that concurrent transactions collide often.
    let any_idx = prop_oneof![3 => 0..4usize, 1 => 0..64usize];
    prop_oneof![
        2 => Just(Op::Begin),
        3 => (slot.clone(), 0..LABELS.len(), any::<i8>()).prop_map(|(slot, label, value)| Op::CreateVertex { slot, label, value }),
        3 => (slot.clone(), any_idx.clone(), 0..KEYS.len(), proptest::option::of(any::<i8>()))
            .prop_map(|(slot, vertex, key, value)| Op::SetProp { slot, vertex, key, value }),
        1 => (slot.clone(), any_idx.clone(), 0..LABELS.len()).prop_map(|(slot, vertex, label)| Op::AddLabel { slot, vertex, label }),
        1 => (slot.clone(), any_idx.clone(), any::<bool>()).prop_map(|(slot, vertex, detach)| Op::DeleteVertex { slot, vertex, detach }),
        3 => (slot.clone(), any_idx.clone(), any_idx.clone(), 0..TYPES.len())
            .prop_map(|(slot, src, dst, ty)| Op::CreateEdge { slot, src, dst, ty }),
        1 => (slot.clone(), any_idx.clone()).prop_map(|(slot, edge)| Op::DeleteEdge { slot, edge }),
        3 => slot.clone().prop_map(|slot| Op::Commit { slot }),
        1 => slot.prop_map(|slot| Op::Abort { slot }),
        1 => any::<bool>().prop_map(|checkpoint| Op::Reopen { checkpoint }),
        1 => Just(Op::Flush),
    ]
}

#[derive(Clone, Debug, PartialEq, Default)]
struct MVertex {
    labels: BTreeSet<String>,
    props: BTreeMap<String, Value>,
}

#[derive(Clone, Debug, PartialEq)]
struct MEdge {
    src: VertexId,
    dst: VertexId,
    ty: String,
}

#[derive(Clone, Debug, PartialEq, Default)]
struct MState {
    vertices: BTreeMap<VertexId, MVertex>,
    edges: BTreeMap<EdgeId, MEdge>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ent {
    V(VertexId),
    E(EdgeId),
}

/// Conflict keys, as `plexus_txn::validation` defines them.
#[derive(Default, Debug, Clone)]
struct Keys {
    props: BTreeSet<(Ent, String)>,
    labels: BTreeSet<VertexId>,
    deleted: BTreeSet<Ent>,
    touched: BTreeSet<Ent>,
    new_edge_endpoints: BTreeSet<VertexId>,
    adjacency: BTreeSet<VertexId>,
}

impl Keys {
    fn conflicts_with(&self, theirs: &Keys) -> bool {
        self.props
            .iter()
            .any(|(e, k)| theirs.props.contains(&(*e, k.clone())) || theirs.deleted.contains(e))
            || self
                .labels
                .iter()
                .any(|v| theirs.labels.contains(v) || theirs.deleted.contains(&Ent::V(*v)))
            || self.deleted.iter().any(|e| {
                theirs.touched.contains(e) || matches!(e, Ent::V(v) if theirs.adjacency.contains(v))
            })
            || self
                .new_edge_endpoints
                .iter()
                .any(|v| theirs.deleted.contains(&Ent::V(*v)))
    }
}

#[derive(Debug, Clone)]
enum Effect {
    CreateVertex(VertexId, MVertex),
    SetProp(VertexId, String, Option<Value>),
    AddLabel(VertexId, String),
    DeleteVertex(VertexId),
    CreateEdge(EdgeId, MEdge),
    DeleteEdge(EdgeId),
}

impl MState {
    fn apply(&mut self, effect: &Effect) {
        match effect {
            Effect::CreateVertex(v, mv) => {
                self.vertices.insert(*v, mv.clone());
            }
            Effect::SetProp(v, k, value) => {
                let props = &mut self.vertices.get_mut(v).expect("visible").props;
                match value {
                    Some(x) => props.insert(k.clone(), x.clone()),
                    None => props.remove(k),
                };
            }
            Effect::AddLabel(v, l) => {
                self.vertices
                    .get_mut(v)
                    .expect("visible")
                    .labels
                    .insert(l.clone());
            }
            Effect::DeleteVertex(v) => {
                self.vertices.remove(v);
            }
            Effect::CreateEdge(e, me) => {
                self.edges.insert(*e, me.clone());
            }
            Effect::DeleteEdge(e) => {
                self.edges.remove(e);
            }
        }
    }

    fn edges_of(&self, v: VertexId) -> Vec<EdgeId> {
        self.edges
            .iter()
            .filter(|(_, e)| e.src == v || e.dst == v)
            .map(|(id, _)| *id)
            .collect()
    }
}

struct MTxn {
    tx: Transaction,
    start: usize,
    view: MState,
    effects: Vec<Effect>,
    keys: Keys,
    created_vertices: BTreeSet<VertexId>,
    created_edges: BTreeSet<EdgeId>,
}

struct Harness {
    config: Config,
    vfs: FaultVfs,
    db: Option<Database>,
    committed: MState,
    history: Vec<Keys>,
    slots: Vec<Option<MTxn>>,
    known_vertices: Vec<VertexId>,
    known_edges: Vec<EdgeId>,
}

fn pick<T: Copy>(items: &[T], index: usize) -> Option<T> {
    (!items.is_empty()).then(|| items[index % items.len()])
}

/// Checks that `tx` sees exactly `view` for every id the test has ever seen.
fn check_view(tx: &mut Transaction, view: &MState, vertices: &[VertexId], edges: &[EdgeId]) {
    for &v in vertices {
        let exists = tx.vertex_exists(v).unwrap();
        assert_eq!(exists, view.vertices.contains_key(&v), "existence of {v}");
        let Some(mv) = view.vertices.get(&v) else {
            continue;
        };
        let labels: BTreeSet<String> = tx.vertex_labels(v).unwrap().into_iter().collect();
        assert_eq!(labels, mv.labels, "labels of {v}");
        let props: BTreeMap<String, Value> = tx.vertex_properties(v).unwrap().into_iter().collect();
        assert_eq!(props, mv.props, "properties of {v}");
        let mut out = tx.neighbors(v, None, Direction::Out).unwrap();
        out.sort();
        let expected: Vec<_> = view
            .edges
            .iter()
            .filter(|(_, e)| e.src == v)
            .map(|(id, e)| (*id, e.dst))
            .collect();
        assert_eq!(out, expected, "out-edges of {v}");
    }
    for &e in edges {
        assert_eq!(
            tx.edge_exists(e).unwrap(),
            view.edges.contains_key(&e),
            "existence of {e}"
        );
        if let Some(me) = view.edges.get(&e) {
            assert_eq!(tx.edge_type(e).unwrap(), me.ty);
        }
    }
}

fn expect_not_found<T: std::fmt::Debug>(result: Result<T, Error>, what: &str) {
    assert!(
        matches!(result, Err(Error::NotFound(_))),
        "{what}: expected NotFound, got {result:?}"
    );
}

impl Harness {
    fn new(config: Config) -> Self {
        let vfs = FaultVfs::new();
        let db = Database::open_with_vfs(Arc::new(vfs.clone()), config.clone()).unwrap();
        Self {
            config,
            vfs,
            db: Some(db),
            committed: MState::default(),
            history: Vec::new(),
            slots: (0..SLOTS).map(|_| None).collect(),
            known_vertices: Vec::new(),
            known_edges: Vec::new(),
        }
    }

    fn db(&self) -> &Database {
        self.db.as_ref().expect("open")
    }

    fn step(&mut self, op: &Op) {
        match *op {
            Op::Begin => {
                if let Some(slot) = self.slots.iter().position(Option::is_none) {
                    let tx = self.db().begin();
                    self.slots[slot] = Some(MTxn {
                        tx,
                        start: self.history.len(),
                        view: self.committed.clone(),
                        effects: Vec::new(),
                        keys: Keys::default(),
                        created_vertices: BTreeSet::new(),
                        created_edges: BTreeSet::new(),
                    });
                }
            }
            Op::Commit { slot } => self.commit(slot),
            Op::Abort { slot } => self.slots[slot] = None,
            Op::Reopen { checkpoint } => self.reopen(checkpoint),
            Op::Flush => self.db().flush().unwrap(),
            _ => self.write(op),
        }
        let (vertices, edges) = (self.known_vertices.clone(), self.known_edges.clone());
        for t in self.slots.iter_mut().flatten() {
            check_view(&mut t.tx, &t.view, &vertices, &edges);
        }
    }

    fn write(&mut self, op: &Op) {
        let slot = match *op {
            Op::CreateVertex { slot, .. }
            | Op::SetProp { slot, .. }
            | Op::AddLabel { slot, .. }
            | Op::DeleteVertex { slot, .. }
            | Op::CreateEdge { slot, .. }
            | Op::DeleteEdge { slot, .. } => slot,
            _ => unreachable!(),
        };
        let (known_v, known_e) = (self.known_vertices.clone(), self.known_edges.clone());
        let Some(t) = self.slots[slot].as_mut() else {
            return;
        };
        match *op {
            Op::CreateVertex { label, value, .. } => {
                let v =
                    t.tx.create_vertex(&[LABELS[label]], &[("k0", Value::from(value as i64))])
                        .unwrap();
                let mv = MVertex {
                    labels: [LABELS[label].to_string()].into(),
                    props: [("k0".to_string(), Value::from(value as i64))].into(),
                };
                t.created_vertices.insert(v);
                t.effects.push(Effect::CreateVertex(v, mv.clone()));
                t.view.vertices.insert(v, mv);
                self.known_vertices.push(v);
            }
            Op::SetProp {
                vertex, key, value, ..
            } => {
                let Some(v) = pick(&known_v, vertex) else {
                    return;
                };
                let value = value.map(|x| Value::from(x as i64));
                let result =
                    t.tx.set_vertex_property(v, KEYS[key], value.clone().unwrap_or(Value::Null));
                if !t.view.vertices.contains_key(&v) {
                    return expect_not_found(result, "set property of invisible vertex");
                }
                result.unwrap();
                if !t.created_vertices.contains(&v) {
                    t.keys.props.insert((Ent::V(v), KEYS[key].to_string()));
                    t.keys.touched.insert(Ent::V(v));
                }
                let effect = Effect::SetProp(v, KEYS[key].to_string(), value);
                t.view.apply(&effect);
                t.effects.push(effect);
            }
            Op::AddLabel { vertex, label, .. } => {
                let Some(v) = pick(&known_v, vertex) else {
                    return;
                };
                let result = t.tx.add_label(v, LABELS[label]);
                let Some(mv) = t.view.vertices.get(&v) else {
                    return expect_not_found(result, "label invisible vertex");
                };
                result.unwrap();
                if mv.labels.contains(LABELS[label]) {
                    return; // already carried: not a write
                }
                if !t.created_vertices.contains(&v) {
                    t.keys.labels.insert(v);
                    t.keys.touched.insert(Ent::V(v));
                }
                let effect = Effect::AddLabel(v, LABELS[label].to_string());
                t.view.apply(&effect);
                t.effects.push(effect);
            }
            Op::DeleteVertex { vertex, detach, .. } => {
                let Some(v) = pick(&known_v, vertex) else {
                    return;
                };
                let result = t.tx.delete_vertex(v, detach);
                if !t.view.vertices.contains_key(&v) {
                    return expect_not_found(result, "delete invisible vertex");
                }
                let edges = t.view.edges_of(v);
                if !edges.is_empty() && !detach {
                    assert!(
                        matches!(result, Err(Error::Constraint(_))),
                        "delete with edges: {result:?}"
                    );
                    return;
                }
                result.unwrap();
                for e in edges {
                    delete_edge_in_model(t, e);
                }
                if !t.created_vertices.remove(&v) {
                    t.keys.props.retain(|(ent, _)| *ent != Ent::V(v));
                    t.keys.labels.remove(&v);
                    t.keys.deleted.insert(Ent::V(v));
                    t.keys.touched.insert(Ent::V(v));
                }
                let effect = Effect::DeleteVertex(v);
                t.view.apply(&effect);
                t.effects.push(effect);
            }
            Op::CreateEdge { src, dst, ty, .. } => {
                let (Some(s), Some(d)) = (pick(&known_v, src), pick(&known_v, dst)) else {
                    return;
                };
                let result = t.tx.create_edge(s, TYPES[ty], d, &[]);
                if !t.view.vertices.contains_key(&s) || !t.view.vertices.contains_key(&d) {
                    return expect_not_found(result, "edge to invisible vertex");
                }
                let e = result.unwrap();
                t.created_edges.insert(e);
                let effect = Effect::CreateEdge(
                    e,
                    MEdge {
                        src: s,
                        dst: d,
                        ty: TYPES[ty].to_string(),
                    },
                );
                t.view.apply(&effect);
                t.effects.push(effect);
                self.known_edges.push(e);
            }
            Op::DeleteEdge { edge, .. } => {
                let Some(e) = pick(&known_e, edge) else {
                    return;
                };
                let result = t.tx.delete_edge(e);
                if !t.view.edges.contains_key(&e) {
                    return expect_not_found(result, "delete invisible edge");
                }
                result.unwrap();
                delete_edge_in_model(t, e);
            }
            _ => unreachable!(),
        }
    }

    fn commit(&mut self, slot: usize) {
        let Some(mut t) = self.slots[slot].take() else {
            return;
        };
        // Edges created and deleted again inside the transaction leave no trace.
        for e in &t.created_edges {
            let me = &t.view.edges[e];
            t.keys.new_edge_endpoints.extend([me.src, me.dst]);
            t.keys.adjacency.extend([me.src, me.dst]);
        }
        let conflict = self.history[t.start..]
            .iter()
            .any(|theirs| t.keys.conflicts_with(theirs));
        let has_writes = !t.effects.is_empty();
        let result = t.tx.commit();
        if conflict && has_writes {
            assert!(
                matches!(result, Err(Error::Aborted(_))),
                "model predicts a conflict; engine said {result:?}"
            );
            return;
        }
        result.unwrap_or_else(|e| panic!("model predicts success; engine said {e}"));
        if has_writes {
            for effect in &t.effects {
                self.committed.apply(effect);
            }
            self.history.push(t.keys);
        }
        let mut fresh = self.db().begin();
        check_view(
            &mut fresh,
            &self.committed,
            &self.known_vertices,
            &self.known_edges,
        );
    }

    fn reopen(&mut self, checkpoint: bool) {
        if self.slots.iter().any(Option::is_some) {
            return;
        }
        let db = self.db.take().expect("open");
        if checkpoint {
            db.checkpoint().unwrap();
        }
        drop(db);
        let db = Database::open_with_vfs(Arc::new(self.vfs.clone()), self.config.clone());
        self.db = Some(db.unwrap());
        // Conflict history does not survive a restart, and no transaction spans one.
        self.history.clear();
        let mut fresh = self.db().begin();
        check_view(
            &mut fresh,
            &self.committed,
            &self.known_vertices,
            &self.known_edges,
        );
    }
}

fn delete_edge_in_model(t: &mut MTxn, e: EdgeId) {
    let me = t.view.edges.get(&e).cloned().expect("visible edge");
    if !t.created_edges.remove(&e) {
        t.keys.deleted.insert(Ent::E(e));
        t.keys.touched.insert(Ent::E(e));
        t.keys.adjacency.extend([me.src, me.dst]);
    }
    let effect = Effect::DeleteEdge(e);
    t.view.apply(&effect);
    t.effects.push(effect);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_model(setup in 0..3usize, ops in proptest::collection::vec(op(), 1..80)) {
        // The default engine, and the disk tier flushing at every commit (budget of one byte)
        // under tiering and under leveling; maintenance inline so runs are deterministic.
        let disk_tier = |policy| Config {
            memtable_budget_bytes: 1,
            merge_policy: policy,
            lsm_range_vertices: 1024,
            lsm_tier_runs: 2,
            lsm_level1_bytes: 256,
            background_maintenance: false,
            ..Config::default()
        };
        let config = match setup {
            0 => Config::default(),
            1 => disk_tier(MergePolicy::Tiering),
            _ => disk_tier(MergePolicy::Leveling),
        };
        let mut harness = Harness::new(config);
        for op in &ops {
            harness.step(op);
        }
        for slot in 0..SLOTS {
            harness.commit(slot);
        }
        harness.reopen(false);
    }
}
