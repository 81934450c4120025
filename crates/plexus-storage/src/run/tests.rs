//! Tests of CSR runs: round trips (property columns, bitmap and bloom, sparse offsets,
//! packing), older formats, and every truncation and corruption detected.

use super::read::{read_u32, read_u64};
use super::*;
use crate::fault::FaultVfs;
use proptest::prelude::*;

const PACKINGS: [RunPacking; 2] = [RunPacking::Never, RunPacking::Always];

fn meta(lo: u32, hi: u32) -> RunMeta {
    RunMeta {
        edge_table: 3,
        outgoing: true,
        level: 1,
        vertex_lo: lo,
        vertex_hi: hi,
        entries: 0,
        tombstones: 0,
        min_ts: 5,
        max_ts: 9,
        prop_ts: 11,
        packed: false,
    }
}

fn sample(vfs: &FaultVfs, packing: RunPacking) -> RunMeta {
    let mut meta = meta(100, 300);
    let vertices: Vec<RunVertex> = vec![
        (100, &[1, 2][..], &[10, 11][..]),
        (250, &[7][..], &[12 | TOMBSTONE_BIT][..]),
        (299, &[], &[]),
    ];
    let mut weight = ColumnData::new(4, ColumnKind::Float64, 3);
    let mut rank = ColumnData::new(9, ColumnKind::Int64, 3);
    for (w, r) in [(Some(0.5), Some(-3)), (None, Some(7)), (None, None)] {
        weight.push(w.map(Value::Float).as_ref());
        rank.push(r.map(Value::Int).as_ref());
    }
    write_run(vfs, "r.run", &mut meta, &vertices, &[weight, rank], packing).unwrap();
    meta
}

/// `v`'s (neighbours, edge offsets) as vectors.
fn entries_of(run: &Run, v: u32) -> (Vec<u32>, Vec<u32>) {
    let mut scratch = Scratch::default();
    let (nbr, eid) = run.entries(v, &mut scratch);
    (nbr.to_vec(), eid.to_vec())
}

/// Every (vertex, neighbours, edge offsets) a scan of `lo..hi` hands out.
fn scanned(
    run: &Run,
    lo: u32,
    hi: u32,
    want: impl Fn(u32) -> bool,
) -> Vec<(u32, Vec<u32>, Vec<u32>)> {
    let mut out = Vec::new();
    let mut scratch = Scratch::default();
    run.scan_range(lo, hi, &want, None, &mut scratch, &mut |v, n, e, _| {
        out.push((v, n.to_vec(), e.to_vec()))
    });
    out
}

/// A file system holding `bytes` as `name`.
fn holding(name: &str, bytes: &[u8]) -> FaultVfs {
    let vfs = FaultVfs::new();
    vfs.create(name).unwrap().write_all(bytes).unwrap();
    vfs
}

#[test]
fn property_columns_round_trip_aligned_with_the_entries() {
    for packing in PACKINGS {
        let vfs = FaultVfs::new();
        sample(&vfs, packing);
        let run = Run::open(&vfs, "r.run").unwrap();
        assert_eq!(run.meta.prop_ts, 11);
        assert_eq!(
            run.columns(),
            &[(4, ColumnKind::Float64), (9, ColumnKind::Int64)]
        );
        let (weight, rank) = (run.column(4).unwrap(), run.column(9).unwrap());
        assert_eq!(run.column(5), None);
        let at_100 = run.column_entries(weight, 100);
        assert_eq!((at_100.as_f64(0), at_100.as_f64(1)), (Some(0.5), None));
        assert_eq!(run.column_entries(rank, 100).value(0), Some(Value::Int(-3)));
        assert_eq!(run.column_entries(rank, 100).as_f64(1), Some(7.0));
        assert_eq!(run.column_entries(rank, 250).value(0), None);
        assert!(run.column_entries(rank, 299).is_empty());
        let mut scanned = Vec::new();
        let mut scratch = Scratch::default();
        run.scan_range(
            0,
            1000,
            &|_| true,
            Some(rank),
            &mut scratch,
            &mut |v, n, _, values| {
                let values = values.unwrap();
                assert_eq!(values.len(), n.len());
                scanned.extend((0..values.len()).map(|i| (v, values.value(i))));
            },
        );
        let expected = [(100, Some(-3)), (100, Some(7)), (250, None)];
        let expected: Vec<_> = expected
            .iter()
            .map(|&(v, r)| (v, r.map(Value::Int)))
            .collect();
        assert_eq!(scanned, expected, "{packing:?}");
    }
}

#[test]
fn a_run_written_before_property_columns_opens_without_them() {
    let vfs = FaultVfs::new();
    let mut meta = RunMeta {
        prop_ts: 0,
        ..sample(&vfs, RunPacking::Never)
    };
    let vertices: Vec<RunVertex> = vec![(100, &[1][..], &[10][..])];
    write_run(
        &vfs,
        "old.run",
        &mut meta,
        &vertices,
        &[],
        RunPacking::Never,
    )
    .unwrap();
    let mut bytes = vfs.read("old.run").unwrap();
    bytes[..8].copy_from_slice(MAGIC_WITHOUT_COLUMNS);
    let run = Run::open(&holding("old.run", &bytes), "old.run").unwrap();
    assert!(run.columns().is_empty());
    assert_eq!(entries_of(&run, 100), (vec![1], vec![10]));
}

/// A "PLXRUN03" file as the writer before neighbour packing wrote it: range 100..300 at
/// level 2, vertex 100 -> (1, eid 10), (2, eid 11), vertex 250 -> a tombstone for edge 12
/// at neighbour 7, and an integer column (key 9) of -3, 7, null.
const PLXRUN03_FIXTURE: [&str; 10] = [
    "504c5852554e30330300000001020000640000002c010000030000000000000001000000000000000500000000000000",
    "0900000000000000400000000000000007000000010000000b0000000000000000000000000000000000000000000000",
    "02000000000000000300000000000000010000000200000007000000000000000a0000000b0000000c00008000000000",
    "010000000000000000000000000000000000400000000000000000000000000002430c318ce09f000000000001000000",
    "01000000020000000900000001000000fdffffffffffffff070000000000000000000000000000000300000000000000",
    "580000000000000018000000000000008a064bbe0000000070000000000000001000000000000000703ac62800000000",
    "800000000000000010000000000000000a2015fa0000000090000000000000002000000000000000c47578fa00000000",
    "b0000000000000000800000000000000873835f300000000b80000000000000010000000000000007c105a8500000000",
    "c8000000000000000800000000000000cf616a5a00000000d0000000000000001800000000000000cb694a1800000000",
    "e8000000000000000800000000000000e3356c5700000000c2ce70c29b0a9a54504c5852554e4654",
];

fn plxrun03_fixture() -> Vec<u8> {
    let hex: String = PLXRUN03_FIXTURE.concat();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_plxrun03_file_opens_as_a_raw_run() {
    let bytes = plxrun03_fixture();
    assert_eq!(&bytes[..8], MAGIC_RAW_ONLY);
    let run = Run::open(&holding("v3.run", &bytes), "v3.run").unwrap();
    assert_eq!(
        run.meta,
        RunMeta {
            level: 2,
            entries: 3,
            tombstones: 1,
            ..meta(100, 300)
        }
    );
    assert_eq!(entries_of(&run, 100), (vec![1, 2], vec![10, 11]));
    assert_eq!(entries_of(&run, 250), (vec![7], vec![12 | TOMBSTONE_BIT]));
    assert_eq!(entries_of(&run, 101), (vec![], vec![]));
    let rank = run.column(9).unwrap();
    assert_eq!(run.column_entries(rank, 100).value(0), Some(Value::Int(-3)));
    assert!(run.may_contain_edge(100, 2));
    assert_eq!(scanned(&run, 0, 1000, |_| true).len(), 2);
    // The encoding byte is new: a PLXRUN03 file claiming packed neighbours is corrupt.
    let mut packed = bytes.clone();
    packed[8 + ENCODING_BYTE] = ENCODING_PACKED;
    reseal(&mut packed);
    let err = Run::open(&holding("v3.run", &packed), "v3.run")
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("v3.run") && err.to_string().contains("encoding"),
        "{err}"
    );
}

#[test]
fn round_trip_with_bitmap_and_bloom() {
    for packing in PACKINGS {
        let vfs = FaultVfs::new();
        let meta = sample(&vfs, packing);
        let run = Run::open(&vfs, "r.run").unwrap();
        assert_eq!(run.meta, meta);
        assert_eq!(meta.packed, packing == RunPacking::Always);
        assert_eq!((meta.entries, meta.tombstones), (3, 1));
        assert_eq!(entries_of(&run, 100), (vec![1, 2], vec![10, 11]));
        assert_eq!(entries_of(&run, 250).1, [12 | TOMBSTONE_BIT]);
        assert_eq!(entries_of(&run, 101), (vec![], vec![]));
        assert!(run.contains_vertex(250) && !run.contains_vertex(299) && !run.contains_vertex(5));
        assert!(run.may_contain_edge(100, 2) && run.may_contain_edge(250, 7));
        let false_positives = (0..1000)
            .filter(|&d| run.may_contain_edge(100, 1000 + d))
            .count();
        assert!(
            false_positives < 50,
            "{false_positives} false positives in 1000"
        );
    }
}

/// Recomputes every checksum of a run file (to test the structure checks behind them).
fn reseal(bytes: &mut [u8]) {
    let sections = section_count(read_u32(bytes, 8 + 60) as usize);
    let footer = bytes.len() - (sections * 24 + 16);
    for i in 0..sections {
        let at = footer + i * 24;
        let (offset, len) = (
            read_u64(bytes, at) as usize,
            read_u64(bytes, at + 8) as usize,
        );
        let crc = crc32c::crc32c(&bytes[offset..(offset + len).min(footer)]);
        bytes[at + 16..at + 20].copy_from_slice(&crc.to_le_bytes());
    }
    let entries_end = footer + sections * 24;
    let footer_crc = crc32c::crc32c(&bytes[footer..entries_end]);
    let header_crc = crc32c::crc32c(&bytes[8..8 + HEADER_BYTES]);
    bytes[entries_end..entries_end + 4].copy_from_slice(&header_crc.to_le_bytes());
    bytes[entries_end + 4..entries_end + 8].copy_from_slice(&footer_crc.to_le_bytes());
}

/// Both ways `open` checks a file — a private copy (files up to the threshold), or the
/// mapping with checksums read by `read_at` (threshold 0) — find every truncation and every
/// flipped byte.
#[test]
fn every_truncation_and_corruption_is_detected() {
    for (packing, copy_max_bytes) in PACKINGS.into_iter().flat_map(|p| [(p, u64::MAX), (p, 0)]) {
        let open = |vfs: &FaultVfs| Run::open_with(vfs, "r.run", copy_max_bytes);
        let vfs = FaultVfs::new();
        sample(&vfs, packing);
        let bytes = vfs.read("r.run").unwrap();
        assert_eq!(
            entries_of(&open(&vfs).unwrap(), 100),
            (vec![1, 2], vec![10, 11])
        );
        for cut in 0..bytes.len() {
            assert!(
                open(&holding("r.run", &bytes[..cut])).is_err(),
                "{packing:?}, {copy_max_bytes}: truncated at {cut}"
            );
        }
        for at in 0..bytes.len() {
            let mut corrupt = bytes.clone();
            corrupt[at] ^= 0x5a;
            let err = open(&holding("r.run", &corrupt)).err().unwrap_or_else(|| {
                panic!("{packing:?}, {copy_max_bytes}: corruption at byte {at} not detected")
            });
            assert!(err.to_string().contains("r.run"), "{err}");
        }
    }
}

/// A packed run of `degree` entries at vertex 0: neighbours `i * gap`.
fn packed_bytes(degree: u32, gap: u32) -> Vec<u8> {
    let vfs = FaultVfs::new();
    let nbr: Vec<u32> = (0..degree).map(|i| i * gap).collect();
    let eid: Vec<u32> = (0..degree).collect();
    let vertices: Vec<RunVertex> = vec![(0, &nbr[..], &eid[..])];
    write_run(
        &vfs,
        "p.run",
        &mut meta(0, 64),
        &vertices,
        &[],
        RunPacking::Always,
    )
    .unwrap();
    vfs.read("p.run").unwrap()
}

/// The byte offset of section `i` of a run file without property columns.
fn section_offset(bytes: &[u8], i: usize) -> usize {
    let footer = bytes.len() - (BASE_SECTIONS * 24 + 16);
    read_u64(bytes, footer + i * 24) as usize
}

/// Applies `damage` to a packed run's bytes, reseals the checksums, and returns the error.
fn open_damaged(damage: impl Fn(&mut Vec<u8>)) -> String {
    let mut bytes = packed_bytes(300, 5);
    damage(&mut bytes);
    reseal(&mut bytes);
    match Run::open(&holding("p.run", &bytes), "p.run") {
        Ok(run) => panic!(
            "damaged packed run opened (entries {:?})",
            entries_of(&run, 0).0.len()
        ),
        Err(err) => err.to_string(),
    }
}

#[test]
fn damaged_packed_structure_behind_valid_checksums_is_corruption() {
    let index_entry = |bytes: &[u8], k: usize| section_offset(bytes, 1) + 8 * k;
    let set = |bytes: &mut Vec<u8>, at: usize, value: u64| {
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes())
    };
    let intact = packed_bytes(300, 5);
    assert!(
        Run::open(&holding("p.run", &intact), "p.run")
            .unwrap()
            .meta
            .packed
    );
    let width = read_u64(&intact, index_entry(&intact, 0)) & 0xff;
    assert_eq!(width, 3, "deltas of 5 (and a first of 0)");
    type Damage<'a> = Box<dyn Fn(&mut Vec<u8>) + 'a>;
    let cases: Vec<(&str, Damage)> = vec![
        (
            "width 33",
            Box::new(move |b| {
                let at = index_entry(b, 1);
                let entry = read_u64(b, at);
                set(b, at, (entry & !0xff) | 33)
            }),
        ),
        (
            "narrower width",
            Box::new(move |b| {
                let at = index_entry(b, 0);
                set(b, at, read_u64(b, at) - 1)
            }),
        ),
        (
            "block offset",
            Box::new(move |b| {
                let at = index_entry(b, 2);
                set(b, at, read_u64(b, at) + (1 << INDEX_WIDTH_BITS))
            }),
        ),
        (
            "width in the final entry",
            Box::new(move |b| {
                let at = index_entry(b, 3);
                set(b, at, read_u64(b, at) | 1)
            }),
        ),
        (
            "more entries than blocks",
            Box::new(|b| set(b, 8 + 16, 300 + PACK_BLOCK_ENTRIES as u64)),
        ),
        (
            "section cut short",
            Box::new(|b| {
                let footer = b.len() - (BASE_SECTIONS * 24 + 16);
                let len = read_u64(b, footer + 24 + 8);
                set(b, footer + 24 + 8, len - 8)
            }),
        ),
        (
            "section length not whole words",
            Box::new(|b| {
                let footer = b.len() - (BASE_SECTIONS * 24 + 16);
                let len = read_u64(b, footer + 24 + 8);
                set(b, footer + 24 + 8, len - 4)
            }),
        ),
        ("unknown encoding", Box::new(|b| b[8 + ENCODING_BYTE] = 2)),
    ];
    for (what, damage) in cases {
        let err = open_damaged(damage);
        assert!(err.contains("p.run"), "{what}: {err}");
    }
}

#[test]
fn sparse_offsets_serve_lookups_and_range_scans_alike() {
    let present: Vec<u32> = (0..500u32).filter(|v| v % 7 == 0 || v % 64 == 63).collect();
    let columns: Vec<(Vec<u32>, Vec<u32>)> = present
        .iter()
        .map(|&v| {
            (
                (0..v % 5 + 1).collect(),
                (0..v % 5 + 1).map(|e| v * 10 + e).collect(),
            )
        })
        .collect();
    let vertices: Vec<RunVertex> = present
        .iter()
        .zip(&columns)
        .map(|(&v, (n, e))| (v + 1000, &n[..], &e[..]))
        .collect();
    for packing in PACKINGS {
        let vfs = FaultVfs::new();
        write_run(
            &vfs,
            "s.run",
            &mut meta(1000, 1600),
            &vertices,
            &[],
            packing,
        )
        .unwrap();
        let run = Run::open(&vfs, "s.run").unwrap();
        for (lo, hi) in [
            (1000, 1600),
            (1003, 1070),
            (1063, 1064),
            (1128, 1500),
            (900, 1100),
            (1599, 1700),
        ] {
            let looked_up: Vec<(u32, Vec<u32>, Vec<u32>)> = (lo..hi)
                .map(|v| (v, entries_of(&run, v).0, entries_of(&run, v).1))
                .filter(|(v, n, _)| !n.is_empty() && *v != 1007)
                .collect();
            assert_eq!(
                scanned(&run, lo, hi, |v| v != 1007),
                looked_up,
                "range {lo}..{hi}"
            );
        }
        assert_eq!(entries_of(&run, 1007).1, &[70, 71, 72]);
        assert!(!run.contains_vertex(1001) && run.contains_vertex(1063));
    }
}

#[test]
fn raw_runs_hand_out_the_mapping_and_packed_runs_the_scratch() {
    let vfs = FaultVfs::new();
    sample(&vfs, RunPacking::Never);
    let run = Run::open(&vfs, "r.run").unwrap();
    let mut scratch = Scratch::default();
    assert_eq!(run.entries(100, &mut scratch).0, &[1, 2]);
    scanned(&run, 0, 1000, |_| true);
    assert_eq!(scratch.nbr.capacity(), 0, "a raw run decodes nothing");
    sample(&vfs, RunPacking::Always);
    let run = Run::open(&vfs, "r.run").unwrap();
    let nbr = run.entries(100, &mut scratch).0.as_ptr();
    assert_eq!(nbr, scratch.nbr.as_ptr());
}

/// Empty and single-entry runs, neighbours at both ends of `u32`, all-equal neighbours
/// (zero-width blocks), vertices spanning blocks.
#[test]
fn packing_edge_cases_round_trip() {
    let all_equal = vec![u32::MAX - 1; 300];
    let extremes = vec![0, 1, u32::MAX - 1, u32::MAX, u32::MAX];
    let long: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    let cases: Vec<Vec<(u32, Vec<u32>)>> = vec![
        vec![],
        vec![(5, vec![0])],
        vec![(5, vec![u32::MAX])],
        vec![(0, all_equal.clone()), (1, extremes.clone()), (63, vec![7])],
        vec![(2, extremes), (3, long), (4, all_equal)],
    ];
    for case in cases {
        let eids: Vec<Vec<u32>> = case
            .iter()
            .map(|(_, n)| (0..n.len() as u32).map(|e| e | ((e % 3) << 31)).collect())
            .collect();
        let vertices: Vec<RunVertex> = case
            .iter()
            .zip(&eids)
            .map(|((v, n), e)| (*v, &n[..], &e[..]))
            .collect();
        for packing in PACKINGS {
            let vfs = FaultVfs::new();
            let mut meta = meta(0, 64);
            write_run(&vfs, "e.run", &mut meta, &vertices, &[], packing).unwrap();
            let run = Run::open(&vfs, "e.run").unwrap();
            assert_eq!(run.meta.packed, packing == RunPacking::Always);
            for &(v, n, e) in &vertices {
                assert_eq!(
                    entries_of(&run, v),
                    (n.to_vec(), e.to_vec()),
                    "{packing:?} at {v}"
                );
            }
            let expected: Vec<_> = vertices
                .iter()
                .map(|&(v, n, e)| (v, n.to_vec(), e.to_vec()))
                .collect();
            assert_eq!(scanned(&run, 0, 64, |_| true), expected, "{packing:?}");
        }
    }
}

#[test]
fn packing_happens_only_where_it_pays() {
    let write = |nbr: &[u32]| {
        let vfs = FaultVfs::new();
        let eid: Vec<u32> = (0..nbr.len() as u32).collect();
        let vertices: Vec<RunVertex> = vec![(1, nbr, &eid[..])];
        let mut meta = meta(0, 64);
        let bytes = write_run(
            &vfs,
            "w.run",
            &mut meta,
            &vertices,
            &[],
            RunPacking::WhenItPays,
        )
        .unwrap();
        let raw_bytes = write_run(
            &vfs,
            "w.run",
            &mut meta.clone(),
            &vertices,
            &[],
            RunPacking::Never,
        )
        .unwrap();
        (meta.packed, bytes, raw_bytes)
    };
    // Dense neighbours: 1-bit deltas against 32-bit ids.
    let dense: Vec<u32> = (0..10_000).map(|i| 1_000_000 + 2 * i).collect();
    let (packed, bytes, raw_bytes) = write(&dense);
    assert!(
        packed && bytes < raw_bytes - 30_000,
        "{bytes} of {raw_bytes}"
    );
    // Scattered: gaps of about 2^27 need 27 bits of 32, more than 75%.
    let scattered: Vec<u32> = (0..40u32)
        .map(|i| i * 0x0600_0000 + i.wrapping_mul(0x9E37_79B9) % (1 << 25))
        .collect();
    let (packed, bytes, raw_bytes) = write(&scattered);
    assert!(!packed && bytes == raw_bytes);
    // Tiny: the block index and padding outweigh the saving.
    assert!(!write(&[1, 2]).0);
}

/// One vertex's neighbours: none, a few far apart, all equal, or ascending small gaps.
fn neighbour_list() -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![
        Just(Vec::new()),
        proptest::collection::vec(any::<u32>(), 1..4),
        (any::<u32>(), 1..300usize).prop_map(|(n, d)| vec![n; d]),
        (any::<u32>(), proptest::collection::vec(0..64u32, 1..400)).prop_map(|(start, gaps)| {
            gaps.iter()
                .scan(start, |at, g| {
                    *at = at.saturating_add(*g);
                    Some(*at)
                })
                .collect()
        }),
    ]
    .prop_map(|mut n| {
        n.sort_unstable();
        n
    })
}

proptest! {
    /// Random adjacency round-trips through every packing: per-vertex reads and range
    /// scans (filtered, clipped) return what was written.
    #[test]
    fn random_adjacency_round_trips(
        lists in proptest::collection::vec(neighbour_list(), 0..24),
        tombstones in any::<u64>(),
        (lo, hi, skip) in (0..200u32, 0..200u32, 1..5u32),
    ) {
        let eids: Vec<Vec<u32>> = lists
            .iter()
            .enumerate()
            .map(|(v, n)| {
                (0..n.len() as u32)
                    .map(|e| (v as u32 * 1000 + e) | ((tombstones >> ((v + e as usize) % 64) & 1) as u32) << 31)
                    .collect()
            })
            .collect();
        let vertices: Vec<RunVertex> = lists
            .iter()
            .zip(&eids)
            .enumerate()
            .map(|(i, (n, e))| (100 + 7 * i as u32, &n[..], &e[..]))
            .collect();
        let (lo, hi) = (lo + 90, hi + 90);
        for packing in [RunPacking::Never, RunPacking::WhenItPays, RunPacking::Always] {
            let vfs = FaultVfs::new();
            write_run(&vfs, "q.run", &mut meta(100, 300), &vertices, &[], packing).unwrap();
            let run = Run::open(&vfs, "q.run").unwrap();
            for &(v, n, e) in &vertices {
                prop_assert_eq!(entries_of(&run, v), (n.to_vec(), e.to_vec()));
            }
            let want = |v: u32| v.is_multiple_of(skip);
            let expected: Vec<_> = vertices
                .iter()
                .filter(|(v, n, _)| !n.is_empty() && want(*v) && (lo..hi).contains(v))
                .map(|&(v, n, e)| (v, n.to_vec(), e.to_vec()))
                .collect();
            prop_assert_eq!(scanned(&run, lo, hi, want), expected);
        }
    }
}

/// The fallback copy `open` checks when a read buffer is not 8-byte aligned holds the same
/// bytes, aligned.
#[test]
fn an_aligned_copy_holds_the_bytes_it_copied() {
    let bytes: Vec<u8> = (0..=40).collect();
    for start in 0..8 {
        let copy = super::read::AlignedBytes::copy_of(&bytes[start..]);
        assert_eq!(copy.as_ref(), &bytes[start..]);
        assert!((copy.as_ref().as_ptr() as usize).is_multiple_of(8));
    }
}
