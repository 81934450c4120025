//! CSR runs: immutable, checksummed, memory-mapped adjacency files — the disk tier.
//!
//! WHAT A RUN IS
//! =============
//! The adjacency of one edge table in one direction, for a range of source vertices
//! `[vertex_lo, vertex_hi)`, in CSR form: `offsets` (one per vertex plus one), then the
//! neighbour offsets `nbr` and edge offsets `eid` aligned with them. An `eid` with the top bit
//! set is a *tombstone*: it deletes that edge from an older run. A run also carries a bitmap of
//! the source vertices that have entries (so readers skip runs that do not hold a vertex), a
//! bloom filter over (source, neighbour) pairs (so edge lookups skip runs), the number of
//! tombstones, and the smallest and largest commit timestamps of its entries.
//!
//! Runs hold committed entries only, with no versions: a run is published (becomes visible to
//! new readers) only once every new reader's timestamp is at least the run's `max_ts`, so its
//! whole content is visible to everyone who can see the run at all. Readers pinned earlier keep
//! reading the memtable the run was made from (see `lsm`).
//!
//! FILE LAYOUT (little-endian, every section 8-byte aligned)
//! =========================================================
//! ```text
//!   "PLXRUN02" | header (80 bytes) | offsets [u64; p+1] | nbr [u32; m] | eid [u32; m]
//!            | bitmap [u64; ceil(n/64)] | bloom [u64; bloom_words] | rank [u32; ceil(n/64)]
//!            | footer: 6 x (offset u64, length u64, crc32c u32, 0u32) | header crc u32
//!            | crc32c of the six footer entries u32 | "PLXRUNFT"
//! ```
//!
//! Offsets are *sparse*: one per vertex present (`p` of the range's `n`), found through the
//! source bitmap and `rank` (set bits before each bitmap word), so a run holding a few vertices
//! of a large range costs bytes for those vertices only.
//! Every byte is covered by a magic number or a checksum. Opening a run verifies the magic
//! numbers, the header and footer checksums, every section's checksum and
//! the CSR invariants (offsets ascend, end at `m`, sections sized as the header says). A
//! damaged file is an `Error::Corruption` naming it: the database refuses to open rather than
//! return wrong neighbours.

use crate::vfs::{MappedBytes, Vfs};
use plexus_types::{Error, Result, Timestamp};

const MAGIC: &[u8; 8] = b"PLXRUN02";
const FOOTER_MAGIC: &[u8; 8] = b"PLXRUNFT";
const HEADER_BYTES: usize = 80;
const SECTIONS: usize = 6;
const FOOTER_BYTES: usize = SECTIONS * 24 + 16;
/// Bloom filter size: bits per entry and hash functions (about 1% false positives).
const BLOOM_BITS_PER_ENTRY: u64 = 10;
const BLOOM_HASHES: u32 = 7;
pub const TOMBSTONE_BIT: u32 = crate::topology::TOMBSTONE_BIT;

#[cfg(not(target_endian = "little"))]
compile_error!("CSR run files are read in place and are little-endian");

/// Where a run sits and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct RunMeta {
    pub edge_table: u32,
    pub outgoing: bool,
    pub level: u8,
    pub vertex_lo: u32,
    pub vertex_hi: u32,
    pub entries: u64,
    pub tombstones: u64,
    pub min_ts: Timestamp,
    pub max_ts: Timestamp,
}

/// One vertex's entries in a run being written: (vertex, neighbours, edge offsets).
pub type RunVertex<'a> = (u32, &'a [u32], &'a [u32]);

fn bloom_positions(src: u32, dst: u32, bits: u64) -> impl Iterator<Item = u64> {
    let key = (u64::from(src) << 32) | u64::from(dst);
    let h1 = key.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ 0xD6E8_FEB8_6659_FD93;
    let h2 = (key ^ (key >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1;
    (0..u64::from(BLOOM_HASHES)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
}

fn push_u32s(out: &mut Vec<u8>, items: impl Iterator<Item = u32>) {
    for x in items {
        out.extend_from_slice(&x.to_le_bytes());
    }
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

fn push_u64s(out: &mut Vec<u8>, items: impl Iterator<Item = u64>) {
    for x in items {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// Writes a run file (and fsyncs it). `vertices` must ascend and lie in the meta's range;
/// `meta.entries`, `tombstones`, `min_ts` and `max_ts` are filled in from them / by the caller.
/// Returns the file size in bytes.
pub fn write_run(
    vfs: &dyn Vfs,
    name: &str,
    meta: &mut RunMeta,
    vertices: &[RunVertex<'_>],
) -> Result<u64> {
    assert!(meta.vertex_lo <= meta.vertex_hi, "run range is ordered");
    let n = (meta.vertex_hi - meta.vertex_lo) as usize;
    let mut offsets = vec![0u64];
    let mut previous = None;
    for &(v, nbr, eid) in vertices {
        assert!(
            v >= meta.vertex_lo && v < meta.vertex_hi,
            "vertex {v} outside the run's range"
        );
        assert!(previous < Some(v), "run vertices ascend");
        assert_eq!(nbr.len(), eid.len(), "aligned columns");
        previous = Some(v);
        if !nbr.is_empty() {
            offsets.push(offsets[offsets.len() - 1] + nbr.len() as u64);
        }
    }
    let m = offsets[offsets.len() - 1];
    meta.entries = m;
    meta.tombstones = vertices
        .iter()
        .flat_map(|(_, _, e)| e.iter())
        .filter(|e| *e & TOMBSTONE_BIT != 0)
        .count() as u64;
    let bloom_bits = (m * BLOOM_BITS_PER_ENTRY).next_multiple_of(64).max(64);
    let mut bloom = vec![0u64; (bloom_bits / 64) as usize];
    let mut bitmap = vec![0u64; n.div_ceil(64)];
    for &(v, nbr, _) in vertices {
        if !nbr.is_empty() {
            let i = (v - meta.vertex_lo) as usize;
            bitmap[i / 64] |= 1 << (i % 64);
        }
        for &d in nbr {
            for bit in bloom_positions(v, d, bloom_bits) {
                bloom[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
    }

    let mut out =
        Vec::with_capacity(HEADER_BYTES + 8 * offsets.len() + 8 * m as usize + n / 4 + 64);
    out.extend_from_slice(MAGIC);
    let header_start = out.len();
    out.extend_from_slice(&meta.edge_table.to_le_bytes());
    out.push(meta.outgoing as u8);
    out.push(meta.level);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&meta.vertex_lo.to_le_bytes());
    out.extend_from_slice(&meta.vertex_hi.to_le_bytes());
    for x in [m, meta.tombstones, meta.min_ts, meta.max_ts, bloom_bits] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&BLOOM_HASHES.to_le_bytes());
    out.resize(header_start + HEADER_BYTES, 0);
    let header_crc = crc32c::crc32c(&out[header_start..]);

    let mut sections = Vec::with_capacity(SECTIONS);
    let mut section = |out: &mut Vec<u8>, write: &dyn Fn(&mut Vec<u8>)| {
        let start = out.len();
        write(out);
        sections.push((
            start as u64,
            (out.len() - start) as u64,
            crc32c::crc32c(&out[start..]),
        ));
    };
    section(&mut out, &|o| push_u64s(o, offsets.iter().copied()));
    section(&mut out, &|o| {
        push_u32s(
            o,
            vertices.iter().flat_map(|(_, nbr, _)| nbr.iter().copied()),
        )
    });
    section(&mut out, &|o| {
        push_u32s(
            o,
            vertices.iter().flat_map(|(_, _, eid)| eid.iter().copied()),
        )
    });
    section(&mut out, &|o| push_u64s(o, bitmap.iter().copied()));
    section(&mut out, &|o| push_u64s(o, bloom.iter().copied()));
    let rank: Vec<u32> = bitmap
        .iter()
        .scan(0u32, |before, word| {
            let here = *before;
            *before += word.count_ones();
            Some(here)
        })
        .collect();
    section(&mut out, &|o| push_u32s(o, rank.iter().copied()));
    for (offset, len, crc) in sections {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    let footer_crc = crc32c::crc32c(&out[out.len() - SECTIONS * 24..]);
    out.extend_from_slice(&header_crc.to_le_bytes());
    out.extend_from_slice(&footer_crc.to_le_bytes());
    out.extend_from_slice(FOOTER_MAGIC);
    let mut file = vfs.create(name)?;
    file.write_all(&out)?;
    file.sync()?;
    Ok(out.len() as u64)
}

/// An open, verified run. Cheap to share (`Arc<Run>`); the bytes are mapped, not copied.
pub struct Run {
    pub name: String,
    pub meta: RunMeta,
    bytes: MappedBytes,
    /// Byte ranges of the sections within `bytes`.
    sections: [(usize, usize); SECTIONS],
    bloom_bits: u64,
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Reinterprets little-endian bytes as a slice of `T` (u32 or u64).
fn cast<T: Copy>(bytes: &[u8]) -> &[T] {
    let size = size_of::<T>();
    assert_eq!(
        bytes.as_ptr() as usize % align_of::<T>(),
        0,
        "section alignment"
    );
    assert_eq!(bytes.len() % size, 0, "section length");
    // SAFETY: alignment and length were checked; u32/u64 have no invalid bit patterns; the
    // bytes live as long as the returned borrow.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) }
}

impl Run {
    /// Maps and verifies a run file (see FILE LAYOUT).
    pub fn open(vfs: &dyn Vfs, name: &str) -> Result<Run> {
        let file = vfs.describe(name);
        let bytes = vfs.map(name)?;
        let b: &[u8] = (*bytes).as_ref();
        let bad = |offset: usize, detail: &str| {
            Error::corruption(&file, offset as u64, format!("CSR run: {detail}"))
        };
        if b.len() < 8 + HEADER_BYTES + FOOTER_BYTES
            || &b[..8] != MAGIC
            || &b[b.len() - 8..] != FOOTER_MAGIC
        {
            return Err(bad(0, "bad magic or truncated file"));
        }
        if !(b.as_ptr() as usize).is_multiple_of(8) {
            return Err(bad(0, "mapping is not 8-byte aligned"));
        }
        let footer = b.len() - FOOTER_BYTES;
        if crc32c::crc32c(&b[footer..footer + SECTIONS * 24])
            != read_u32(b, footer + SECTIONS * 24 + 4)
        {
            return Err(bad(footer, "footer checksum mismatch"));
        }
        if crc32c::crc32c(&b[8..8 + HEADER_BYTES]) != read_u32(b, footer + SECTIONS * 24) {
            return Err(bad(8, "header checksum mismatch"));
        }
        let h = 8;
        let meta = RunMeta {
            edge_table: read_u32(b, h),
            outgoing: b[h + 4] != 0,
            level: b[h + 5],
            vertex_lo: read_u32(b, h + 8),
            vertex_hi: read_u32(b, h + 12),
            entries: read_u64(b, h + 16),
            tombstones: read_u64(b, h + 24),
            min_ts: read_u64(b, h + 32),
            max_ts: read_u64(b, h + 40),
        };
        let bloom_bits = read_u64(b, h + 48);
        if meta.vertex_hi < meta.vertex_lo || bloom_bits == 0 || !bloom_bits.is_multiple_of(64) {
            return Err(bad(h, "inconsistent header"));
        }
        let mut sections = [(0usize, 0usize); SECTIONS];
        for (i, section) in sections.iter_mut().enumerate() {
            let at = footer + i * 24;
            let (offset, len) = (read_u64(b, at) as usize, read_u64(b, at + 8) as usize);
            if !offset.is_multiple_of(8) || offset.checked_add(len).is_none_or(|end| end > footer) {
                return Err(bad(at, "section outside the file"));
            }
            if crc32c::crc32c(&b[offset..offset + len]) != read_u32(b, at + 16) {
                return Err(bad(offset, &format!("section {i} checksum mismatch")));
            }
            *section = (offset, offset + len);
        }
        let run = Run {
            name: name.to_string(),
            meta,
            bytes,
            sections,
            bloom_bits,
        };
        run.check_shape()
            .map_err(|detail| bad(sections[0].0, &detail))?;
        Ok(run)
    }

    fn check_shape(&self) -> Result<(), String> {
        let n = (self.meta.vertex_hi - self.meta.vertex_lo) as usize;
        let m = self.meta.entries as usize;
        let bitmap = self.u64_section(3);
        if bitmap.len() != n.div_ceil(64)
            || self.u64_section(4).len() as u64 * 64 != self.bloom_bits
        {
            return Err("bitmap or bloom filter size does not match the header".into());
        }
        let rank = &self.u32_section(5)[..bitmap.len().min(self.u32_section(5).len())];
        let mut before = 0u32;
        for (w, word) in bitmap.iter().enumerate() {
            if rank.get(w) != Some(&before) {
                return Err("rank index does not match the bitmap".into());
            }
            before += word.count_ones();
        }
        let offsets = self.offsets();
        if offsets.len() != before as usize + 1 || offsets.last().copied() != Some(m as u64) {
            return Err("offsets do not match the bitmap and the header".into());
        }
        if offsets.windows(2).any(|w| w[0] >= w[1]) {
            return Err("offsets do not strictly ascend".into());
        }
        if self.u32_section(1).len() < m || self.u32_section(2).len() < m {
            return Err("neighbour columns shorter than the entry count".into());
        }
        Ok(())
    }

    fn section(&self, i: usize) -> &[u8] {
        let b: &[u8] = (*self.bytes).as_ref();
        &b[self.sections[i].0..self.sections[i].1]
    }

    fn u32_section(&self, i: usize) -> &[u32] {
        cast(self.section(i))
    }

    fn u64_section(&self, i: usize) -> &[u64] {
        cast(self.section(i))
    }

    fn offsets(&self) -> &[u64] {
        self.u64_section(0)
    }

    /// The index of `v` among the vertices present, if present (bitmap + rank).
    fn index(&self, v: u32) -> Option<usize> {
        if v < self.meta.vertex_lo || v >= self.meta.vertex_hi {
            return None;
        }
        let i = (v - self.meta.vertex_lo) as usize;
        let word = self.u64_section(3)[i / 64];
        let bit = 1u64 << (i % 64);
        (word & bit != 0).then(|| {
            self.u32_section(5)[i / 64] as usize + (word & (bit - 1)).count_ones() as usize
        })
    }

    /// Whether vertex `v` has entries in this run (source-vertex bitmap).
    pub fn contains_vertex(&self, v: u32) -> bool {
        self.index(v).is_some()
    }

    /// (neighbours, edge offsets) of vertex `v`; empty when the run does not hold it.
    pub fn entries(&self, v: u32) -> (&[u32], &[u32]) {
        let Some(k) = self.index(v) else {
            return (&[], &[]);
        };
        let offsets = self.offsets();
        let (a, b) = (offsets[k] as usize, offsets[k + 1] as usize);
        (&self.u32_section(1)[a..b], &self.u32_section(2)[a..b])
    }

    /// Calls `f(vertex, neighbours, edge offsets)` for every vertex in `[lo, hi)` with
    /// entries for which `want(vertex)` holds, in order — a walk over the bitmap's set bits and
    /// the offsets, the static-CSR loop.
    pub fn scan_range<'a>(
        &'a self,
        lo: u32,
        hi: u32,
        want: &impl Fn(u32) -> bool,
        f: &mut impl FnMut(u32, &'a [u32], &'a [u32]),
    ) {
        let (lo, hi) = (lo.max(self.meta.vertex_lo), hi.min(self.meta.vertex_hi));
        if lo >= hi {
            return;
        }
        let (bitmap, rank, offsets, nbr, eid) = (
            self.u64_section(3),
            self.u32_section(5),
            self.offsets(),
            self.u32_section(1),
            self.u32_section(2),
        );
        let (first, last) = (
            (lo - self.meta.vertex_lo) as usize,
            (hi - self.meta.vertex_lo) as usize,
        );
        for w in first / 64..last.div_ceil(64) {
            let mut word = bitmap[w];
            // Index of the word's first set bit among all present vertices.
            let mut k = rank[w] as usize;
            if w == first / 64 {
                let below_first = (1u64 << (first % 64)) - 1;
                k += (word & below_first).count_ones() as usize;
                word &= !below_first;
            }
            if w == (last - 1) / 64 && last % 64 != 0 {
                word &= (1u64 << (last % 64)) - 1;
            }
            while word != 0 {
                let bit = word.trailing_zeros() as usize;
                let v = self.meta.vertex_lo + (w * 64 + bit) as u32;
                if want(v) {
                    let (a, b) = (offsets[k] as usize, offsets[k + 1] as usize);
                    f(v, &nbr[a..b], &eid[a..b]);
                }
                word &= word - 1;
                k += 1;
            }
        }
    }

    /// False when the run certainly holds no entry `src -> dst` (bloom filter).
    pub fn may_contain_edge(&self, src: u32, dst: u32) -> bool {
        let bloom = self.u64_section(4);
        bloom_positions(src, dst, self.bloom_bits)
            .all(|bit| bloom[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }

    pub fn size_bytes(&self) -> usize {
        let b: &[u8] = (*self.bytes).as_ref();
        b.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultVfs;

    fn sample(vfs: &FaultVfs) -> RunMeta {
        let mut meta = RunMeta {
            edge_table: 3,
            outgoing: true,
            level: 1,
            vertex_lo: 100,
            vertex_hi: 300,
            entries: 0,
            tombstones: 0,
            min_ts: 5,
            max_ts: 9,
        };
        let vertices: Vec<RunVertex> = vec![
            (100, &[1, 2][..], &[10, 11][..]),
            (250, &[7][..], &[12 | TOMBSTONE_BIT][..]),
            (299, &[], &[]),
        ];
        write_run(vfs, "r.run", &mut meta, &vertices).unwrap();
        meta
    }

    #[test]
    fn round_trip_with_bitmap_and_bloom() {
        let vfs = FaultVfs::new();
        let meta = sample(&vfs);
        let run = Run::open(&vfs, "r.run").unwrap();
        assert_eq!(run.meta, meta);
        assert_eq!((meta.entries, meta.tombstones), (3, 1));
        assert_eq!(run.entries(100), (&[1, 2][..], &[10, 11][..]));
        assert_eq!(run.entries(250).1, &[12 | TOMBSTONE_BIT]);
        assert_eq!(run.entries(101), (&[][..], &[][..]));
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

    #[test]
    fn every_truncation_and_corruption_is_detected() {
        let vfs = FaultVfs::new();
        sample(&vfs);
        let bytes = vfs.read("r.run").unwrap();
        for cut in 0..bytes.len() {
            let v = FaultVfs::new();
            let mut f = v.create("r.run").unwrap();
            f.write_all(&bytes[..cut]).unwrap();
            assert!(Run::open(&v, "r.run").is_err(), "truncated at {cut}");
        }
        for at in 0..bytes.len() {
            let v = FaultVfs::new();
            let mut corrupt = bytes.clone();
            corrupt[at] ^= 0x5a;
            let mut f = v.create("r.run").unwrap();
            f.write_all(&corrupt).unwrap();
            let err = Run::open(&v, "r.run")
                .err()
                .unwrap_or_else(|| panic!("corruption at byte {at} not detected"));
            assert!(err.to_string().contains("r.run"), "{err}");
        }
    }

    #[test]
    fn sparse_offsets_serve_lookups_and_range_scans_alike() {
        let vfs = FaultVfs::new();
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
        let mut meta = RunMeta {
            edge_table: 0,
            outgoing: false,
            level: 1,
            vertex_lo: 1000,
            vertex_hi: 1600,
            entries: 0,
            tombstones: 0,
            min_ts: 1,
            max_ts: 1,
        };
        write_run(&vfs, "s.run", &mut meta, &vertices).unwrap();
        let run = Run::open(&vfs, "s.run").unwrap();
        for (lo, hi) in [
            (1000, 1600),
            (1003, 1070),
            (1063, 1064),
            (1128, 1500),
            (900, 1100),
            (1599, 1700),
        ] {
            let mut scanned = Vec::new();
            run.scan_range(lo, hi, &|v| v != 1007, &mut |v, n, e| {
                scanned.push((v, n.to_vec(), e.to_vec()))
            });
            let looked_up: Vec<(u32, Vec<u32>, Vec<u32>)> = (lo..hi)
                .map(|v| (v, run.entries(v).0.to_vec(), run.entries(v).1.to_vec()))
                .filter(|(v, n, _)| !n.is_empty() && *v != 1007)
                .collect();
            assert_eq!(scanned, looked_up, "range {lo}..{hi}");
        }
        assert_eq!(run.entries(1007).1, &[70, 71, 72]);
        assert!(!run.contains_vertex(1001) && run.contains_vertex(1063));
    }
}
