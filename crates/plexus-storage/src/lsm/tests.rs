//! Tests of the LSM topology: bulk runs, snapshots across flushes, merges and retirement,
//! the merge policies, segment scans, run columns, and a model check.

use super::*;
use crate::fault::FaultVfs;
use parking_lot::Mutex;
use plexus_types::RunPacking;

/// Run names, and a model of one float property (key `WEIGHT`) for the run columns.
#[derive(Default)]
struct Names {
    seq: Mutex<u64>,
    /// Per edge offset: (timestamp, weight) versions, oldest first.
    weights: Mutex<std::collections::HashMap<u32, Vec<(Timestamp, f64)>>>,
    installed: AtomicU64,
    updated: AtomicU64,
}

const WEIGHT: u32 = 7;

impl Names {
    /// Edge `eid` created (first weight) or re-weighted at `ts`.
    fn set_weight(&self, eid: u32, ts: Timestamp, weight: f64, update: bool) {
        self.weights
            .lock()
            .entry(eid)
            .or_default()
            .push((ts, weight));
        self.installed.store(ts, Ordering::Release);
        if update {
            self.updated.store(ts, Ordering::Release);
        }
    }

    fn weight_at(&self, eid: u32, ts: Timestamp) -> Option<f64> {
        let weights = self.weights.lock();
        let versions = weights.get(&(eid & !TOMBSTONE_BIT))?;
        versions.iter().rev().find(|(at, _)| *at <= ts).map(|v| v.1)
    }
}

impl RunContext for Names {
    fn next_run(&self) -> (u64, String) {
        let mut n = self.seq.lock();
        *n += 1;
        (*n, format!("run-{n}.run"))
    }

    fn capture_ts(&self) -> Timestamp {
        self.installed.load(Ordering::Acquire)
    }

    fn prop_updated_ts(&self, _table: u32) -> Timestamp {
        self.updated.load(Ordering::Acquire)
    }

    fn capture(&self, _table: u32, eids: &[u32], ts: Timestamp) -> Result<Vec<ColumnData>> {
        let mut column = ColumnData::new(WEIGHT, ColumnKind::Float64, eids.len());
        for &e in eids {
            let weight = (e & TOMBSTONE_BIT == 0)
                .then(|| self.weight_at(e, ts))
                .flatten();
            column.push(weight.map(plexus_types::Value::Float).as_ref());
        }
        Ok(vec![column])
    }
}

fn config(policy: MergePolicy) -> Config {
    Config {
        merge_policy: policy,
        lsm_range_vertices: 1024,
        lsm_tier_runs: 3,
        lsm_level1_bytes: 100,
        ..Config::default()
    }
}

/// A bulk load's runs are the same whether its entries are sorted in one group or in
/// groups of a few ranges (the grouping bounds memory, nothing else).
#[test]
fn bulk_runs_are_the_same_in_any_grouping() {
    let config = config(MergePolicy::Leveling);
    let entries: Vec<(u32, u32, u32)> = (0..5_000u32)
        .map(|i| ((i * 7919) % 4_000, (i * 104_729) % 4_000, i))
        .collect();
    let visit = |f: &mut dyn FnMut(u32, u32, u32)| {
        entries.iter().for_each(|&(v, n, e)| f(v, n, e));
    };
    let ts = 5;
    let mut answers = Vec::new();
    for group_entries in [usize::MAX, 1_300, 1] {
        let (vfs, names) = (FaultVfs::new(), Names::default());
        names.installed.store(ts, Ordering::Release);
        let t = Topology::new(0, true, 1024);
        let runs = t
            .write_bulk_runs(&vfs, &names, &config, &visit, (ts, group_entries))
            .expect("runs");
        assert_eq!(runs.len(), 4, "one run per range of 1024 vertices");
        t.publish_bulk(runs, ts);
        let adjacency: Vec<Vec<(u32, u32)>> = (0..4_000).map(|v| neighbours(&t, v, ts)).collect();
        assert!(adjacency.iter().all(|n| n.is_sorted()));
        assert_eq!(adjacency.iter().map(Vec::len).sum::<usize>(), entries.len());
        answers.push(adjacency);
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0], answers[2]);
}

fn neighbours(t: &Topology, v: u32, ts: Timestamp) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    t.visit(v, ts, &mut |n, e| {
        out.extend(n.iter().copied().zip(e.iter().copied()))
    });
    out
}

#[test]
fn every_snapshot_reads_the_same_across_flushes_merges_and_retirement() {
    let policies = [
        MergePolicy::Leveling,
        MergePolicy::Tiering,
        MergePolicy::Elastic,
    ];
    let packings = [RunPacking::Never, RunPacking::Always];
    for (policy, packing) in policies.into_iter().flat_map(|p| packings.map(|k| (p, k))) {
        let (vfs, names, stats, config) = (
            FaultVfs::new(),
            Names::default(),
            LsmStats::default(),
            Config {
                run_packing: packing,
                ..config(policy)
            },
        );
        let t = Topology::new(0, true, 1024);
        let mut expected: Vec<Vec<Vec<(u32, u32)>>> = Vec::new(); // [ts][v]
        let mut eid = 0;
        for ts in 1..=40u64 {
            let mut entries = Vec::new();
            for v in [1u32, 700, 1500] {
                entries.push((v, ts as u32, eid));
                eid += 1;
            }
            if ts % 5 == 0 {
                entries.push((700, 0, ((ts as u32 - 3) * 3 + 1) | TOMBSTONE_BIT)); // delete an older edge of 700
            }
            t.install(&entries, ts, 0);
            expected.push(
                [1, 700, 1500]
                    .iter()
                    .map(|&v| neighbours(&t, v, ts))
                    .collect(),
            );
            if ts % 4 == 0 {
                t.freeze();
                t.flush_one(&vfs, &names, &config, &stats).unwrap();
                t.merge(&vfs, &names, &config, &stats).unwrap();
            }
            for (i, want) in expected.iter().enumerate() {
                let got: Vec<_> = [1, 700, 1500]
                    .iter()
                    .map(|&v| neighbours(&t, v, i as u64 + 1))
                    .collect();
                assert_eq!(
                    &got,
                    want,
                    "{policy:?}: snapshot at ts {} after commit {ts}",
                    i + 1
                );
            }
        }
        // With every reader past everything, old components go and reads stay the same.
        let retired = t.retire(1000);
        assert!(!retired.is_empty(), "{policy:?}: merged inputs are retired");
        let last: Vec<_> = [1, 700, 1500]
            .iter()
            .map(|&v| neighbours(&t, v, 1000))
            .collect();
        assert_eq!(&last, expected.last().unwrap());
        assert!(t.run_counts().0 >= 1);
    }
}

/// A topology of 1,024-vertex ranges with its run files in memory.
struct Harness {
    vfs: FaultVfs,
    names: Names,
    stats: LsmStats,
    config: Config,
    topology: Topology,
}

impl Harness {
    fn new(policy: MergePolicy) -> Self {
        Self::with_packing(policy, RunPacking::WhenItPays)
    }

    fn with_packing(policy: MergePolicy, packing: RunPacking) -> Self {
        Harness {
            vfs: FaultVfs::new(),
            names: Names::default(),
            stats: LsmStats::default(),
            config: Config {
                run_packing: packing,
                ..config(policy)
            },
            topology: Topology::new(0, true, 1024),
        }
    }

    /// Commits `entries` at `ts`, flushes them as a run and merges.
    fn flush_and_merge(&self, entries: &[(u32, u32, u32)], ts: Timestamp) {
        self.topology.install(entries, ts, ts);
        self.topology.freeze();
        self.topology
            .flush_one(&self.vfs, &self.names, &self.config, &self.stats)
            .unwrap();
        self.merge();
    }

    fn merge(&self) {
        self.topology
            .merge(&self.vfs, &self.names, &self.config, &self.stats)
            .unwrap();
    }
}

#[test]
fn leveling_keeps_one_run_per_range_and_tiering_accumulates() {
    let levels = usize::from(MAX_LEVEL);
    for (policy, max_runs) in [
        (MergePolicy::Leveling, 2 + levels - 1),
        (MergePolicy::Tiering, 2 * (levels - 1) + 1),
    ] {
        let h = Harness::new(policy);
        let t = &h.topology;
        // Flushes of a few hundred entries, so that entries rather than run headers make
        // the sizes that levels are measured in.
        for ts in 1..=60u64 {
            let mut entries = vec![(5, ts as u32, ts as u32)];
            entries.extend((0..256).map(|i| (100 + i, ts as u32, (ts * 1000) as u32 + i)));
            h.flush_and_merge(&entries, ts);
            t.retire(ts);
            assert!(
                t.run_counts().0 <= max_runs,
                "{policy:?}: {:?}",
                t.run_counts()
            );
        }
        assert_eq!(neighbours(t, 5, 60).len(), 60);
        assert_eq!(t.edges_between(5, 7, 60), vec![7]);
        assert!(t.edges_between(5, 99, 60).is_empty());
        let levels_used = t
            .state
            .read()
            .runs
            .iter()
            .filter(|r| r.current())
            .map(|r| r.run.meta.level)
            .max();
        assert!(
            levels_used > Some(2),
            "{policy:?}: runs moved down several levels ({levels_used:?})"
        );
    }
}

#[test]
fn reading_a_range_in_full_collapses_it_into_one_run_except_under_tiering() {
    for policy in [
        MergePolicy::Leveling,
        MergePolicy::Elastic,
        MergePolicy::Tiering,
    ] {
        let h = Harness::new(policy);
        let t = &h.topology;
        for ts in 1..=5u64 {
            h.flush_and_merge(&[(5, ts as u32, ts as u32)], ts);
        }
        let before = t.run_counts().0;
        assert!(before > 1, "{policy:?}: several runs to start with");
        // Fewer entries read than the range holds: no collapse yet (elastic may level a
        // read-heavy level on its own).
        t.note_read(5, 4);
        h.merge();
        assert!(t.run_counts().0 > 1, "{policy:?}");
        t.note_read(5, 5);
        h.merge();
        let after = t.run_counts().0;
        match policy {
            MergePolicy::Tiering => assert_eq!(after, before),
            _ => assert_eq!(after, 1, "{policy:?}: one run after a full read"),
        }
        assert_eq!(neighbours(t, 5, 5).len(), 5);
    }
}

#[test]
fn segment_scans_merge_components() {
    let (vfs, names, stats) = (FaultVfs::new(), Names::default(), LsmStats::default());
    let t = Topology::new(0, true, 1024);
    t.install(&[(3, 1, 0), (3, 2, 1), (9, 4, 2)], 1, 0);
    t.freeze();
    t.flush_one(&vfs, &names, &config(MergePolicy::Leveling), &stats)
        .unwrap();
    t.install(&[(3, 5, 3), (3, 1, TOMBSTONE_BIT)], 2, 0);
    let mut seen: Vec<(u32, Vec<u32>)> = Vec::new();
    t.scan_segment(0, 2, |_| true, |v, n, _| seen.push((v, n.to_vec())));
    assert_eq!(seen, vec![(3, vec![2, 5]), (9, vec![4])]);
    let mut old = Vec::new();
    t.scan_segment(0, 1, |_| true, |v, n, _| old.push((v, n.to_vec())));
    assert_eq!(old, vec![(3, vec![1, 2]), (9, vec![4])]);
}

/// Which slices carry run column values: every run slice after a flush; none of a run
/// written before a property update (until a merge re-reads it); none of a memtable.
#[test]
fn run_columns_serve_readers_until_a_property_update_and_again_after_a_merge() {
    let h = Harness::new(MergePolicy::Leveling);
    let t = &h.topology;
    let request = || ColumnRequest {
        key: WEIGHT,
        updated_ts: &h.names.updated,
    };
    let weights_at = |ts: Timestamp| {
        let mut found: Vec<(u32, Option<f64>)> = Vec::new();
        t.scan_segment_with(
            0,
            ts,
            |_| true,
            Some(request()),
            |_, _, e, values| {
                found.extend(
                    e.iter()
                        .enumerate()
                        .map(|(i, e)| (*e, values.and_then(|c| c.as_f64(i)))),
                )
            },
        );
        found.sort_by_key(|(e, _)| *e); // runs hold a vertex's entries by neighbour
        found
    };
    for (ts, eid) in [(1, 0), (2, 1)] {
        t.install(&[(5, 9, eid)], ts, 0);
        h.names.set_weight(eid, ts, f64::from(eid) + 0.25, false);
    }
    assert_eq!(weights_at(2), [(0, None), (1, None)], "memtable: rows");
    t.freeze();
    t.flush_one(&h.vfs, &h.names, &h.config, &h.stats).unwrap();
    assert_eq!(
        weights_at(2),
        [(0, Some(0.25)), (1, Some(1.25))],
        "run column"
    );
    h.names.set_weight(1, 3, 9.0, true);
    assert_eq!(
        weights_at(3),
        [(0, None), (1, None)],
        "updated after the capture"
    );
    assert_eq!(
        weights_at(2),
        [(0, None), (1, None)],
        "a reader before the update"
    );
    t.install(&[(5, 8, 2)], 4, 0);
    h.names.set_weight(2, 4, 2.25, false);
    t.freeze();
    t.flush_one(&h.vfs, &h.names, &h.config, &h.stats).unwrap();
    t.note_read(0, 1 << 20);
    h.merge();
    assert_eq!(t.run_counts().0, 1, "collapsed into one run");
    assert_eq!(
        weights_at(4),
        [(0, Some(0.25)), (1, Some(9.0)), (2, Some(2.25))],
        "the merge re-read the rows"
    );
    assert_eq!(
        weights_at(2),
        [(0, None), (1, None)],
        "still too old for the column"
    );
}

/// What one commit does in [`segment_scans_agree_with_vertex_reads`].
#[derive(Clone, Debug)]
enum Step {
    /// Insert an edge (source, neighbour) in the 2,048 vertices of two segments.
    Insert(u32, u32),
    /// Delete the `n`-th live edge (modulo their number).
    Delete(usize),
    /// Change the weight of the `n`-th live edge (an update: raises `U`).
    Reweight(usize),
    Freeze,
    Flush,
    Merge,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        6 => (0..2048u32, 0..2048u32).prop_map(|(v, n)| Step::Insert(v, n)),
        3 => any::<usize>().prop_map(Step::Delete),
        1 => any::<usize>().prop_map(Step::Reweight),
        1 => Just(Step::Freeze),
        1 => Just(Step::Flush),
        1 => Just(Step::Merge),
    ]
}

proptest::proptest! {
    /// Whatever mix of runs, frozen and active memtables and tombstones a segment is made
    /// of, a segment scan (filtered or not) hands out the same visible entries per vertex
    /// as per-vertex reads, at every timestamp.
    #[test]
    fn segment_scans_agree_with_vertex_reads(
        steps in proptest::collection::vec(step(), 1..120),
        policy in proptest::sample::select(vec![
            MergePolicy::Leveling, MergePolicy::Tiering, MergePolicy::Elastic,
        ]),
        packing in proptest::sample::select(vec![
            RunPacking::Never, RunPacking::WhenItPays, RunPacking::Always,
        ]),
    ) {
        let h = Harness::with_packing(policy, packing);
        let t = &h.topology;
        let mut live: Vec<(u32, u32)> = Vec::new(); // (source, edge offset)
        let (mut ts, mut eid) = (0u64, 0u32);
        for step in &steps {
            match *step {
                Step::Insert(v, n) => {
                    ts += 1;
                    t.install(&[(v, n, eid)], ts, 0);
                    h.names.set_weight(eid, ts, f64::from(eid) + 0.5, false);
                    live.push((v, eid));
                    eid += 1;
                }
                Step::Delete(i) if !live.is_empty() => {
                    ts += 1;
                    let (v, e) = live.remove(i % live.len());
                    t.install(&[(v, 0, e | TOMBSTONE_BIT)], ts, 0);
                    h.names.installed.store(ts, Ordering::Release);
                }
                Step::Reweight(i) if !live.is_empty() => {
                    ts += 1;
                    let (_, e) = live[i % live.len()];
                    h.names.set_weight(e, ts, ts as f64, true);
                }
                Step::Delete(_) | Step::Reweight(_) => {}
                Step::Freeze => t.freeze(),
                Step::Flush => {
                    t.flush_one(&h.vfs, &h.names, &h.config, &h.stats).unwrap();
                }
                Step::Merge => {
                    t.note_read(0, 1 << 20);
                    h.merge();
                }
            }
        }
        for entry in &t.state.read().runs {
            let mut scratch = Scratch::default();
            let configured = match packing {
                RunPacking::Never => !entry.run.meta.packed,
                RunPacking::Always => entry.run.meta.packed,
                RunPacking::WhenItPays => true,
            };
            proptest::prop_assert!(configured, "runs packed as configured ({:?})", packing);
            for v in 0..2048 {
                let (nbr, eid) = entry.run.entries(v, &mut scratch);
                let pairs: Vec<(u32, u32)> = nbr.iter().copied().zip(eid.iter().copied()).collect();
                proptest::prop_assert!(pairs.is_sorted(), "run entries of {} by neighbour", v);
            }
        }
        let odd = |v: u32| v % 2 == 1;
        for at in 0..=ts {
            for segment in 0..2 {
                let vertices = (segment * 1024) as u32..(segment * 1024 + 1024) as u32;
                let mut read: Vec<(u32, u32, u32)> = Vec::new();
                for v in vertices {
                    read.extend(neighbours(t, v, at).into_iter().map(|(n, e)| (v, n, e)));
                }
                let mut scanned = Vec::new();
                let mut scanned_odd = Vec::new();
                t.scan_segment(segment, at, |_| true, |v, n, e| {
                    scanned.extend(n.iter().zip(e).map(|(n, e)| (v, *n, *e)))
                });
                t.scan_segment(segment, at, odd, |v, n, e| {
                    scanned_odd.extend(n.iter().zip(e).map(|(n, e)| (v, *n, *e)))
                });
                proptest::prop_assert_eq!(&scanned, &read, "segment {} at {}", segment, at);
                // Where a run's column is handed out, its values are the model's at `at`.
                let request = ColumnRequest { key: WEIGHT, updated_ts: &h.names.updated };
                let mut with_values = Vec::new();
                let mut wrong = Vec::new();
                t.scan_segment_with(segment, at, |_| true, Some(request), |v, n, e, values| {
                    with_values.extend(n.iter().zip(e).map(|(n, e)| (v, *n, *e)));
                    for (i, e) in e.iter().enumerate().filter(|_| values.is_some()) {
                        let got = values.and_then(|values| values.as_f64(i));
                        if got != h.names.weight_at(*e, at) {
                            wrong.push((v, *e, got));
                        }
                    }
                });
                proptest::prop_assert_eq!(&with_values, &read, "with values, segment {} at {}", segment, at);
                proptest::prop_assert!(wrong.is_empty(), "stale values {:?} at {}", wrong, at);
                read.retain(|(v, _, _)| odd(*v));
                proptest::prop_assert_eq!(&scanned_odd, &read, "odd, segment {} at {}", segment, at);
            }
        }
    }
}
