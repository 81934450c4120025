//! Tests of the index cache: spills and runs read back merged with the resident part, merges,
//! the budget, damaged blocks and failed writes, concurrent readers, and a model check of
//! lookups and range scans against a `BTreeMap`.

use super::resident::{OrderedKey, key_cost};
use super::*;
use crate::fault::FaultVfs;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn cache(budget_bytes: u64) -> (FaultVfs, Arc<IndexCache>) {
    let vfs = FaultVfs::new();
    let cache = IndexCache::open(Arc::new(vfs.clone()), budget_bytes).unwrap();
    (vfs, cache)
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:05}").into_bytes()
}

fn run_files(vfs: &FaultVfs) -> Vec<String> {
    let names = vfs.list().unwrap();
    names.into_iter().filter(|n| is_run_name(n)).collect()
}

#[test]
fn spilled_entries_read_back_merged_with_the_resident_part() {
    for kind in [MapKind::Ordered, MapKind::Hashed] {
        let (vfs, cache) = cache(u64::MAX - 1);
        let map = cache.new_map(kind);
        for i in 0..3000 {
            map.insert(&key(i % 1000), i);
        }
        assert!(map.spill().unwrap());
        assert_eq!(cache.stats().resident_bytes, 0);
        assert_eq!(run_files(&vfs).len(), 1);
        map.insert(&key(5), 7);
        map.insert(&key(5), 5);
        assert_eq!(map.get(&key(5)).unwrap(), [5, 7, 1005, 2005]);
        assert_eq!(map.get(b"absent").unwrap(), [] as [u32; 0]);
        assert_eq!(map.distinct_keys(), 1001);
        let prefix = ByteRange {
            lower: Included(b"key-0099".as_slice().into()),
            upper: Unbounded,
            prefix: b"key-0099".as_slice().into(),
        };
        let want: Vec<u32> = (990..1000).flat_map(|i| [i, i + 1000, i + 2000]).collect();
        assert_eq!(map.range(&prefix).unwrap(), want, "{kind:?}");
        drop(map);
        assert!(run_files(&vfs).is_empty(), "a dropped map deletes its runs");
        let stats = cache.stats();
        assert_eq!(
            (stats.runs, stats.run_meta_bytes, stats.resident_bytes),
            (0, 0, 0)
        );
    }
}

#[test]
fn eight_byte_keys_of_one_row_are_held_inline_and_move_out_at_a_second_row() {
    let (_vfs, cache) = cache(u64::MAX - 1);
    let map = cache.new_map(MapKind::Hashed);
    let digest = |i: u64| i.to_be_bytes();
    for i in 0..1000 {
        map.insert(&digest(i), i as u32);
    }
    map.reserve(1000);
    map.insert(&digest(7), 7); // already there
    assert_eq!(map.stats().resident_bytes, 1000 * INLINE_KEY_COST_BYTES);
    map.insert(&digest(7), 3);
    map.insert(&digest(7), 9);
    assert_eq!(map.get(&digest(7)).unwrap(), [3, 7, 9]);
    assert_eq!(map.get(&digest(8)).unwrap(), [8]);
    assert_eq!(map.get(&digest(5000)).unwrap(), [] as [u32; 0]);
    assert_eq!(map.distinct_keys(), 1000);
    assert!(map.stats().resident_bytes > 1000 * INLINE_KEY_COST_BYTES);
    // Pruning every row but one keeps the key; pruning all removes it and its bytes.
    assert_eq!(map.prune(|key, row| key != digest(7) || row == 9), 2);
    assert_eq!(map.get(&digest(7)).unwrap(), [9]);
    assert_eq!(map.prune(|key, _| key != digest(7) && key != digest(8)), 2);
    assert_eq!(map.distinct_keys(), 998);
    assert_eq!(map.stats().resident_bytes, 998 * INLINE_KEY_COST_BYTES);
    // Spilled in key order and read back.
    assert!(map.spill().unwrap());
    assert_eq!(map.get(&digest(9)).unwrap(), [9]);
    assert_eq!(map.get(&digest(8)).unwrap(), [] as [u32; 0]);
    let everything = ByteRange {
        lower: Unbounded,
        upper: Unbounded,
        prefix: Box::new([]),
    };
    let want: Vec<u32> = (0..1000).filter(|&i| i != 7 && i != 8).collect();
    assert_eq!(map.range(&everything).unwrap(), want);
}

#[test]
fn a_key_with_many_rows_spans_blocks_and_merges_keep_every_row() {
    let (_vfs, cache) = cache(u64::MAX - 1);
    let map = cache.new_map(MapKind::Ordered);
    for round in 0..5u32 {
        for row in (round..20_000).step_by(5) {
            map.insert(b"many", row);
        }
        map.insert(&key(round), round);
        map.spill().unwrap();
    }
    let stats = map.stats();
    assert!(stats.runs < 5, "four level-0 runs were merged: {stats:?}");
    assert_eq!(cache.stats().merges, 1);
    let all: Vec<u32> = (0..20_000).collect();
    assert_eq!(map.get(b"many").unwrap(), all);
    assert!(map.merge_all().unwrap());
    assert_eq!(map.stats().runs, 1);
    assert_eq!(map.get(b"many").unwrap(), all);
    assert_eq!(map.get(&key(3)).unwrap(), [3]);
    assert!(cache.stats().blocks_read > 0);
}

#[test]
fn the_budget_spills_the_largest_resident_part() {
    let (_vfs, cache) = cache(64 << 10);
    let big = cache.new_map(MapKind::Ordered);
    let small = cache.new_map(MapKind::Hashed);
    let mut max_resident = 0;
    for i in 0..20_000 {
        big.insert(&key(i), i);
        if i % 500 == 0 {
            small.insert(&key(i), i);
        }
        max_resident = max_resident.max(cache.resident_bytes());
    }
    let entry_max = key_cost(key(0).len(), 4);
    assert!(max_resident <= (64 << 10) + entry_max, "{max_resident}");
    assert!(big.stats().spills > 0 && small.stats().spills == 0);
    for i in (0..20_000).step_by(7) {
        assert_eq!(big.get(&key(i)).unwrap(), [i]);
    }
    assert_eq!(small.get(&key(500)).unwrap(), [500]);
}

#[test]
fn a_damaged_block_is_corruption_naming_the_file_and_offset() {
    let (vfs, cache) = cache(u64::MAX - 1);
    let map = cache.new_map(MapKind::Ordered);
    for i in 0..2000 {
        map.insert(&key(i), i);
    }
    map.spill().unwrap();
    let name = run_files(&vfs).pop().unwrap();
    let (second, third) = {
        let state = map.state.read();
        let run = &state.runs[0];
        assert!(run.blocks.len() > 3);
        (run.blocks[1].offset, run.blocks[2].offset)
    };
    vfs.corrupt(&name, (second + 40) as usize, b"X").unwrap();
    let in_second = |map: &IndexMap| {
        let first_of_third = {
            let state = map.state.read();
            state.runs[0].blocks[2].first_key.clone()
        };
        let mut i = 0;
        while key(i).as_slice() < &*first_of_third {
            i += 1;
        }
        i - 1
    };
    let victim = in_second(&map);
    let err = map.get(&key(victim)).unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&name) && text.contains(&format!("byte {}", second + 12)),
        "{text}"
    );
    assert!(text.contains("checksum"), "{text}");
    // Other blocks still read; a merge reading the damaged block fails and keeps its input.
    assert_eq!(map.get(&key(0)).unwrap(), [0]);
    map.insert(b"z", 1);
    map.spill().unwrap();
    assert!(matches!(map.merge_all(), Err(Error::Corruption { .. })));
    assert_eq!(map.stats().runs, 2);
    assert_eq!(cache.stats().merge_errors, 1);
    // A truncated file: a block past the end is reported, not guessed.
    vfs.truncate(&name, third + 3).unwrap();
    match map.get(&key(1999)) {
        Err(Error::Corruption {
            file,
            offset,
            detail,
        }) => {
            assert!(
                file.contains(&name) && detail.contains("truncated"),
                "{detail}"
            );
            assert!(offset >= third, "{offset}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn a_failed_spill_write_keeps_every_entry_resident() {
    let (vfs, cache) = cache(8 << 10);
    let map = cache.new_map(MapKind::Hashed);
    vfs.fail_writes_after(0);
    for i in 0..200 {
        map.insert(&key(i), i);
    }
    let stats = cache.stats();
    // ~21 KB resident: a failure, then one per 1 KiB (budget / 8) of growth.
    assert!(
        (1..=16).contains(&stats.spill_write_errors),
        "failures wait for growth: {stats:?}"
    );
    let failures = stats.spill_write_errors;
    assert_eq!((stats.spills, stats.runs), (0, 0));
    assert!(run_files(&vfs).is_empty(), "the partial file is deleted");
    assert!(stats.resident_bytes > 8 << 10);
    assert_eq!(stats.resident_bytes, map.stats().resident_bytes);
    let err = cache.spill_all().unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    for i in 0..200 {
        assert_eq!(map.get(&key(i)).unwrap(), [i]);
    }
    vfs.fail_writes_after(u64::MAX);
    // The second block of the run is torn: the first one is in the file, which is deleted.
    vfs.short_write_at(vfs.write_count() + 2);
    assert!(map.spill().is_err());
    assert!(run_files(&vfs).is_empty());
    assert_eq!(cache.stats().spill_write_errors, failures + 2);
    assert_eq!(cache.spill_all().unwrap(), 1);
    assert_eq!(cache.stats().resident_bytes, 0);
    for i in 0..200 {
        assert_eq!(map.get(&key(i)).unwrap(), [i]);
    }
}

#[test]
fn opening_deletes_run_files_of_an_earlier_process() {
    let (vfs, cache) = cache(u64::MAX - 1);
    let map = cache.new_map(MapKind::Ordered);
    map.insert(b"k", 1);
    map.spill().unwrap();
    assert_eq!(run_files(&vfs).len(), 1);
    std::mem::forget(map);
    IndexCache::open(Arc::new(vfs.clone()), 1).unwrap();
    assert!(run_files(&vfs).is_empty());
}

/// Readers on two threads never miss an entry while a writer's inserts spill the map
/// (freeze, write, swap) and merge its runs under a tiny budget and small blocks.
#[test]
fn readers_see_every_entry_while_spills_and_merges_run() {
    use std::sync::atomic::AtomicU32;
    const ENTRIES: u32 = 6000;
    let vfs = FaultVfs::new();
    let cache = IndexCache::open_with_blocks(Arc::new(vfs), 2 << 10, 256).unwrap();
    let map = cache.new_map(MapKind::Ordered);
    let inserted = AtomicU32::new(0);
    std::thread::scope(|scope| {
        for reader in 0..2u32 {
            let (map, inserted) = (&map, &inserted);
            scope.spawn(move || {
                let mut probe = reader;
                while inserted.load(Ordering::Acquire) < ENTRIES {
                    let high = inserted.load(Ordering::Acquire);
                    if high == 0 {
                        continue;
                    }
                    probe = probe.wrapping_mul(2_654_435_761).wrapping_add(1);
                    let i = probe % high;
                    let rows = map.get(&key(i / 2)).unwrap();
                    assert!(rows.contains(&i), "entry {i} missed: {rows:?}");
                }
            });
        }
        for i in 0..ENTRIES {
            map.insert(&key(i / 2), i);
            inserted.store(i + 1, Ordering::Release);
        }
    });
    let stats = cache.stats();
    assert!(stats.spills > 10 && stats.merges > 0, "{stats:?}");
}

/// A `Vfs` whose file writes wait until the test opens the gate: a spill stays in its
/// frozen state while the test looks.
struct GatedVfs {
    inner: FaultVfs,
    open: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    writing: Arc<std::sync::atomic::AtomicBool>,
}

struct GatedFile {
    inner: Box<dyn VfsFile>,
    open: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    writing: Arc<std::sync::atomic::AtomicBool>,
}

impl VfsFile for GatedFile {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.writing.store(true, Ordering::Release);
        let (lock, opened) = &*self.open;
        let mut open = lock.lock().unwrap();
        while !*open {
            open = opened.wait(open).unwrap();
        }
        self.inner.write_all(data)
    }
    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }
}

impl Vfs for GatedVfs {
    fn open_append(&self, name: &str) -> Result<Box<dyn VfsFile>> {
        self.inner.open_append(name)
    }
    fn create(&self, name: &str) -> Result<Box<dyn VfsFile>> {
        Ok(Box::new(GatedFile {
            inner: self.inner.create(name)?,
            open: self.open.clone(),
            writing: self.writing.clone(),
        }))
    }
    fn read(&self, name: &str) -> Result<Vec<u8>> {
        self.inner.read(name)
    }
    fn read_at(&self, name: &str, offset: u64, len_bytes: usize) -> Result<Vec<u8>> {
        self.inner.read_at(name, offset, len_bytes)
    }
    fn size(&self, name: &str) -> Result<u64> {
        self.inner.size(name)
    }
    fn exists(&self, name: &str) -> bool {
        self.inner.exists(name)
    }
    fn list(&self) -> Result<Vec<String>> {
        self.inner.list()
    }
    fn remove(&self, name: &str) -> Result<()> {
        self.inner.remove(name)
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn truncate(&self, name: &str, len_bytes: u64) -> Result<()> {
        self.inner.truncate(name, len_bytes)
    }
    fn sync_dir(&self) -> Result<()> {
        self.inner.sync_dir()
    }
    fn describe(&self, name: &str) -> String {
        self.inner.describe(name)
    }
    fn map(&self, name: &str) -> Result<crate::vfs::MappedBytes> {
        self.inner.map(name)
    }
}

struct OpenOnDrop<'a>(&'a (std::sync::Mutex<bool>, std::sync::Condvar));

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        *self.0.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0.1.notify_all();
    }
}

/// While a spill writes its run, the frozen part answers lookups, inserts go to a new
/// resident part, and a prune leaves the frozen part alone; once the run replaces the
/// frozen part, every entry still reads back.
#[test]
fn a_spill_being_written_still_answers_lookups() {
    let open = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let writing = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let vfs = FaultVfs::new();
    for kind in [MapKind::Ordered, MapKind::Hashed] {
        *open.0.lock().unwrap() = false;
        writing.store(false, Ordering::Release);
        let cache = IndexCache::open_with_blocks(
            Arc::new(GatedVfs {
                inner: vfs.clone(),
                open: open.clone(),
                writing: writing.clone(),
            }),
            u64::MAX - 1,
            64,
        )
        .unwrap();
        let map = cache.new_map(kind);
        for i in 0..100 {
            map.insert(&key(i % 10), i);
        }
        let everything = ByteRange {
            lower: Unbounded,
            upper: Unbounded,
            prefix: Box::new([]),
        };
        let before = map.range(&everything).unwrap();
        std::thread::scope(|scope| {
            let spill = scope.spawn(|| map.spill());
            // Opens the gate however this closure ends (a failed assertion must not
            // leave the spilling thread waiting, and the scope joining it forever).
            let _gate = OpenOnDrop(&open);
            while !writing.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            assert_eq!(map.range(&everything).unwrap(), before, "{kind:?}");
            let three: Vec<u32> = (0..10).map(|j| 3 + 10 * j).collect();
            assert_eq!(map.get(&key(3)).unwrap(), three);
            map.insert(&key(3), 1000);
            assert_eq!(map.prune(|_, _| false), 1, "only the new resident entry");
            map.insert(&key(3), 1001);
            let mut with_new = three.clone();
            with_new.push(1001);
            assert_eq!(map.get(&key(3)).unwrap(), with_new);
            let stats = map.stats();
            assert_eq!((stats.resident_keys, stats.runs), (1, 0), "{stats:?}");
            *open.0.lock().unwrap() = true;
            open.1.notify_all();
            assert!(spill.join().unwrap().unwrap());
            assert_eq!(map.get(&key(3)).unwrap(), with_new);
        });
        assert_eq!(map.stats().runs, 1);
        assert_eq!(map.range(&everything).unwrap().len(), before.len() + 1);
    }
}

/// Model of one map: the resident entries and the spilled ones (prunes reach only the
/// former; see MERGES).
#[derive(Default, Debug)]
struct Model {
    resident: BTreeSet<(Vec<u8>, u32)>,
    spilled: BTreeSet<(Vec<u8>, u32)>,
}

impl Model {
    fn rows(&self, range: &ByteRange) -> Vec<u32> {
        let mut by_key: BTreeMap<&[u8], BTreeSet<u32>> = BTreeMap::new();
        for (key, row) in self.resident.iter().chain(&self.spilled) {
            if range.contains(key) {
                by_key.entry(key).or_default().insert(*row);
            }
        }
        by_key.into_values().flatten().collect()
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<u8>, u32),
    /// Removes resident entries whose row is `0 mod m`.
    Prune(u32),
    Get(Vec<u8>),
    Range(Bound<Vec<u8>>, Bound<Vec<u8>>),
    Prefix(Vec<u8>),
    Spill,
    Merge,
    /// Writes fail from now (`true`) or work again.
    BreakDisk(bool),
}

fn small_key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, b'a', b'b', 255]), 0..4),
        // 8-byte keys, which a hashed map holds inline while they have one row
        (0..4u8).prop_map(|tag| [1, 0, 0, 0, 0, 0, 0, tag].to_vec()),
        (0..3u8, prop::collection::vec(any::<u8>(), 0..3)).prop_map(|(tag, mut rest)| {
            rest.insert(0, tag);
            rest
        }),
    ]
}

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        1 => Just(Unbounded),
        2 => small_key().prop_map(Included),
        2 => small_key().prop_map(Excluded),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (small_key(), 0..40u32).prop_map(|(k, r)| Op::Insert(k, r)),
        1 => (2..5u32).prop_map(Op::Prune),
        3 => small_key().prop_map(Op::Get),
        3 => (bound(), bound()).prop_map(|(l, u)| Op::Range(l, u)),
        2 => small_key().prop_map(Op::Prefix),
        1 => Just(Op::Spill),
        1 => Just(Op::Merge),
        1 => any::<bool>().prop_map(Op::BreakDisk),
    ]
}

fn to_box(bound: &Bound<Vec<u8>>) -> Bound<Box<[u8]>> {
    match bound {
        Included(k) => Included(k.as_slice().into()),
        Excluded(k) => Excluded(k.as_slice().into()),
        Unbounded => Unbounded,
    }
}

proptest! {
    /// Ordered keys sort exactly as their byte strings, short keys, shared prefixes and
    /// trailing zero bytes included.
    #[test]
    fn ordered_keys_sort_as_their_bytes(
        keys in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..12), 0..40),
    ) {
        let mut by_bytes = keys.clone();
        by_bytes.sort();
        let mut by_key: Vec<OrderedKey> = keys.iter().map(|k| OrderedKey::new(k)).collect();
        by_key.sort();
        let by_key: Vec<Vec<u8>> = by_key.iter().map(|k| k.bytes.to_vec()).collect();
        prop_assert_eq!(by_key, by_bytes);
        for a in &keys {
            for b in &keys {
                let (ka, kb) = (OrderedKey::new(a), OrderedKey::new(b));
                prop_assert_eq!(ka.cmp(&kb), a.cmp(b));
                prop_assert_eq!(ka == kb, a == b);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random inserts, prunes, lookups of keys, ranges and prefixes, forced spills and
    /// merges, spills forced by a tiny budget and failed writes, against a model; both
    /// kinds of map, two maps sharing the budget.
    #[test]
    fn lookups_equal_the_model_through_spills_merges_and_failures(
        ops in prop::collection::vec(op(), 1..120),
        budget in prop::sample::select(vec![1u64, 600, 4000, u64::MAX - 1]),
        block_bytes in prop::sample::select(vec![1usize, 24, 64, BLOCK_TARGET_BYTES]),
    ) {
        let vfs = FaultVfs::new();
        let cache = IndexCache::open_with_blocks(Arc::new(vfs.clone()), budget, block_bytes)
            .unwrap();
        let maps = [cache.new_map(MapKind::Ordered), cache.new_map(MapKind::Hashed)];
        let mut models = [Model::default(), Model::default()];
        for (step, op) in ops.into_iter().enumerate() {
            let m = step % 2;
            let (map, model) = (&maps[m], &mut models[m]);
            let spills_before = maps.each_ref().map(|map| map.stats().spills);
            match &op {
                Op::Insert(key, row) => {
                    map.insert(key, *row);
                    model.resident.insert((key.clone(), *row));
                }
                Op::Prune(m) => {
                    let removed = map.prune(|_, row| row % m != 0);
                    let before = model.resident.len();
                    model.resident.retain(|(_, row)| row % m != 0);
                    prop_assert_eq!(removed, before - model.resident.len());
                }
                Op::Get(key) => {
                    let want = model.rows(&ByteRange::point(key));
                    prop_assert_eq!(map.get(key).unwrap(), want, "get {:?}", key);
                }
                Op::Range(lower, upper) => {
                    if map.kind() == MapKind::Ordered {
                        let lower = match lower { Unbounded => Included(Vec::new()), b => b.clone() };
                        let prefix: Box<[u8]> = Box::new([]);
                        let range = ByteRange { lower: to_box(&lower), upper: to_box(upper), prefix };
                        prop_assert_eq!(map.range(&range).unwrap(), model.rows(&range), "{:?}", range);
                    }
                }
                Op::Prefix(p) => {
                    let range = ByteRange {
                        lower: Included(p.as_slice().into()),
                        upper: Unbounded,
                        prefix: p.as_slice().into(),
                    };
                    prop_assert_eq!(map.range(&range).unwrap(), model.rows(&range), "{:?}", range);
                }
                Op::Spill => {
                    let _ = map.spill();
                }
                Op::Merge => {
                    let _ = map.merge_all();
                }
                Op::BreakDisk(broken) => {
                    vfs.fail_writes_after(if *broken { 0 } else { u64::MAX });
                }
            }
            // A spill (forced, or by the budget, of either map) moved its whole resident
            // part into a run.
            for (i, map) in maps.iter().enumerate() {
                if map.stats().spills > spills_before[i] {
                    let moved = std::mem::take(&mut models[i].resident);
                    models[i].spilled.extend(moved);
                }
            }
            for (map, model) in maps.iter().zip(&models) {
                let stats = map.stats();
                prop_assert_eq!(stats.resident_keys as usize,
                    model.resident.iter().map(|(k, _)| k).collect::<BTreeSet<_>>().len());
                prop_assert!(stats.runs as usize <= MAX_RUNS_PER_MAP);
            }
            let total: u64 = maps.iter().map(|m| m.stats().resident_bytes).sum();
            prop_assert_eq!(cache.resident_bytes(), total);
        }
        for (map, model) in maps.iter().zip(&models) {
            let everything = ByteRange { lower: Unbounded, upper: Unbounded, prefix: Box::new([]) };
            prop_assert_eq!(map.range(&everything).unwrap(), model.rows(&everything));
            let run_entries: u64 = map.stats().run_entries;
            prop_assert!(run_entries as usize >= model.spilled.len());
        }
    }
}
