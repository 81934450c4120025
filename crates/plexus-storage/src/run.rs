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
//! A run may also carry *property columns* of the edges: for up to [`MAX_COLUMNS`] declared
//! integer or float properties of the edge table, one 8-byte value per entry aligned with `nbr`
//! (plus a validity bitmap), captured from the row table as of the run's `prop_ts`. They let a
//! weighted scan read weights beside the destinations instead of one random row read per edge.
//! The values are the edges' values at `prop_ts`; whether a reader may use them (no property
//! update since) is decided by the LSM (see `lsm`, PROPERTY COLUMNS). Tombstones have null.
//!
//! Runs hold committed entries only, with no versions: a run is published (becomes visible to
//! new readers) only once every new reader's timestamp is at least the run's `max_ts`, so its
//! whole content is visible to everyone who can see the run at all. Readers pinned earlier keep
//! reading the memtable the run was made from (see `lsm`).
//!
//! FILE LAYOUT (little-endian, every section 8-byte aligned)
//! =========================================================
//! ```text
//!   "PLXRUN03" | header (80 bytes) | offsets [u64; p+1] | nbr [u32; m] | eid [u32; m]
//!            | bitmap [u64; ceil(n/64)] | bloom [u64; bloom_words] | rank [u32; ceil(n/64)]
//!            [ | columns [(key u32, kind u32); k] | k x (values [u64; m], valid [u64; ceil(m/64)]) ]
//!            | footer: s x (offset u64, length u64, crc32c u32, 0u32) | header crc u32
//!            | crc32c of the s footer entries u32 | "PLXRUNFT"
//! ```
//!
//! `k` (the property column count, header bytes 60..64) decides the section count: `s = 6`
//! without columns, `s = 7 + 2k` with. A "PLXRUN02" file (written before property columns) is
//! the same layout with `k = 0` and opens as a run without columns.
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
use plexus_types::{Error, Result, Timestamp, Value};

const MAGIC: &[u8; 8] = b"PLXRUN03";
/// Runs written before property columns: read as runs with none.
const MAGIC_WITHOUT_COLUMNS: &[u8; 8] = b"PLXRUN02";
const FOOTER_MAGIC: &[u8; 8] = b"PLXRUNFT";
const HEADER_BYTES: usize = 80;
/// Sections every run has: offsets, nbr, eid, bitmap, bloom, rank.
const BASE_SECTIONS: usize = 6;
/// Property columns one run may carry (bounds the footer and the capture work).
pub const MAX_COLUMNS: usize = 8;
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
    /// The timestamp the property columns' values were read at (0 without columns).
    pub prop_ts: Timestamp,
}

/// How a property column's 8-byte values are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    Int64 = 1,
    Float64 = 2,
}

impl ColumnKind {
    fn from_tag(tag: u32) -> Option<ColumnKind> {
        match tag {
            1 => Some(ColumnKind::Int64),
            2 => Some(ColumnKind::Float64),
            _ => None,
        }
    }

    /// The 8 bytes stored for `value`, if it has this kind (an integer column holds only
    /// integers, a float column only floats).
    pub fn encode(self, value: &Value) -> Option<u64> {
        match (self, value) {
            (ColumnKind::Int64, Value::Int(i)) => Some(*i as u64),
            (ColumnKind::Float64, Value::Float(f)) => Some(f.to_bits()),
            _ => None,
        }
    }

    fn to_f64(self, bits: u64) -> f64 {
        match self {
            ColumnKind::Int64 => bits as i64 as f64,
            ColumnKind::Float64 => f64::from_bits(bits),
        }
    }

    fn decode(self, bits: u64) -> Value {
        match self {
            ColumnKind::Int64 => Value::Int(bits as i64),
            ColumnKind::Float64 => Value::Float(f64::from_bits(bits)),
        }
    }
}

/// One property column of a run being written: a value (or null) per entry, in entry order.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnData {
    pub key: u32,
    pub kind: ColumnKind,
    values: Vec<u64>,
    valid: Vec<u64>,
}

impl ColumnData {
    pub fn new(key: u32, kind: ColumnKind, capacity: usize) -> Self {
        Self {
            key,
            kind,
            values: Vec::with_capacity(capacity),
            valid: Vec::with_capacity(capacity.div_ceil(64)),
        }
    }

    /// Appends the next entry's value (`None`: null, or a value of another kind).
    pub fn push(&mut self, value: Option<&Value>) {
        let bits = value.and_then(|v| self.kind.encode(v));
        let i = self.values.len();
        if i.is_multiple_of(64) {
            self.valid.push(0);
        }
        if bits.is_some() {
            self.valid[i / 64] |= 1 << (i % 64);
        }
        self.values.push(bits.unwrap_or(0));
    }

    /// Appends entry `i` of `slice` (its value, or null).
    pub fn push_from(&mut self, slice: &ColumnSlice<'_>, i: usize) {
        self.push(slice.value(i).as_ref());
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// One vertex's entries of a run's property column: value `i` belongs to the `i`-th
/// neighbour of the slice it was handed out with.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSlice<'a> {
    kind: ColumnKind,
    values: &'a [u64],
    valid: &'a [u64],
    /// Index of `values[0]` within the whole column (the validity bitmap is not sliced).
    first: usize,
}

impl ColumnSlice<'_> {
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The stored bits of entry `i` (`None`: null).
    fn bits(&self, i: usize) -> Option<u64> {
        let at = self.first + i;
        (self.valid[at / 64] & (1 << (at % 64)) != 0).then(|| self.values[i])
    }

    /// The value of entry `i` (`None`: null).
    pub fn value(&self, i: usize) -> Option<Value> {
        self.bits(i).map(|bits| self.kind.decode(bits))
    }

    /// The value of entry `i` as a float (integers converted), `None` when null.
    pub fn as_f64(&self, i: usize) -> Option<f64> {
        self.bits(i).map(|bits| self.kind.to_f64(bits))
    }

    /// Appends every value as a float to `out`; false (with `out` partly filled) at the first
    /// null.
    pub fn extend_f64(&self, out: &mut Vec<f64>) -> bool {
        (0..self.len()).all(|i| self.as_f64(i).map(|w| out.push(w)).is_some())
    }
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
/// `columns` (at most [`MAX_COLUMNS`], read as of `meta.prop_ts`) hold one value per entry.
/// Returns the file size in bytes.
pub fn write_run(
    vfs: &dyn Vfs,
    name: &str,
    meta: &mut RunMeta,
    vertices: &[RunVertex<'_>],
    columns: &[ColumnData],
) -> Result<u64> {
    assert!(meta.vertex_lo <= meta.vertex_hi, "run range is ordered");
    assert!(columns.len() <= MAX_COLUMNS, "too many property columns");
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
    assert!(
        columns.iter().all(|c| c.len() as u64 == m),
        "property columns aligned with the entries"
    );
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
    out.extend_from_slice(&(columns.len() as u32).to_le_bytes());
    out.extend_from_slice(&meta.prop_ts.to_le_bytes());
    out.resize(header_start + HEADER_BYTES, 0);
    let header_crc = crc32c::crc32c(&out[header_start..]);

    let mut sections = Vec::with_capacity(section_count(columns.len()));
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
    if !columns.is_empty() {
        section(&mut out, &|o| {
            push_u32s(o, columns.iter().flat_map(|c| [c.key, c.kind as u32]))
        });
        for column in columns {
            section(&mut out, &|o| push_u64s(o, column.values.iter().copied()));
            section(&mut out, &|o| push_u64s(o, column.valid.iter().copied()));
        }
    }
    let section_total = sections.len();
    for (offset, len, crc) in sections {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    let footer_crc = crc32c::crc32c(&out[out.len() - section_total * 24..]);
    out.extend_from_slice(&header_crc.to_le_bytes());
    out.extend_from_slice(&footer_crc.to_le_bytes());
    out.extend_from_slice(FOOTER_MAGIC);
    let mut file = vfs.create(name)?;
    file.write_all(&out)?;
    file.sync()?;
    Ok(out.len() as u64)
}

/// Sections of a run with `columns` property columns (see FILE LAYOUT).
fn section_count(columns: usize) -> usize {
    match columns {
        0 => BASE_SECTIONS,
        k => BASE_SECTIONS + 1 + 2 * k,
    }
}

/// An open, verified run. Cheap to share (`Arc<Run>`); the bytes are mapped, not copied.
pub struct Run {
    pub name: String,
    pub meta: RunMeta,
    bytes: MappedBytes,
    /// Byte ranges of the sections within `bytes`.
    sections: Vec<(usize, usize)>,
    bloom_bits: u64,
    /// Property columns: (key, kind), in section order.
    columns: Vec<(u32, ColumnKind)>,
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
        let h = 8;
        let magic_ok = b.len() >= h + HEADER_BYTES
            && (&b[..8] == MAGIC || &b[..8] == MAGIC_WITHOUT_COLUMNS)
            && &b[b.len() - 8..] == FOOTER_MAGIC;
        if !magic_ok {
            return Err(bad(0, "bad magic or truncated file"));
        }
        if !(b.as_ptr() as usize).is_multiple_of(8) {
            return Err(bad(0, "mapping is not 8-byte aligned"));
        }
        // The column count locates the footer; a damaged count fails the checksums below.
        let column_count = read_u32(b, h + 60) as usize;
        if column_count > MAX_COLUMNS {
            return Err(bad(h + 60, "more property columns than a run may hold"));
        }
        let section_total = section_count(column_count);
        let footer_bytes = section_total * 24 + 16;
        if b.len() < h + HEADER_BYTES + footer_bytes {
            return Err(bad(0, "truncated file"));
        }
        let footer = b.len() - footer_bytes;
        let entries_end = footer + section_total * 24;
        if crc32c::crc32c(&b[footer..entries_end]) != read_u32(b, entries_end + 4) {
            return Err(bad(footer, "footer checksum mismatch"));
        }
        if crc32c::crc32c(&b[h..h + HEADER_BYTES]) != read_u32(b, entries_end) {
            return Err(bad(h, "header checksum mismatch"));
        }
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
            prop_ts: read_u64(b, h + 64),
        };
        let bloom_bits = read_u64(b, h + 48);
        if meta.vertex_hi < meta.vertex_lo || bloom_bits == 0 || !bloom_bits.is_multiple_of(64) {
            return Err(bad(h, "inconsistent header"));
        }
        let mut sections = Vec::with_capacity(section_total);
        for i in 0..section_total {
            let at = footer + i * 24;
            let (offset, len) = (read_u64(b, at) as usize, read_u64(b, at + 8) as usize);
            if !offset.is_multiple_of(8) || offset.checked_add(len).is_none_or(|end| end > footer) {
                return Err(bad(at, "section outside the file"));
            }
            if crc32c::crc32c(&b[offset..offset + len]) != read_u32(b, at + 16) {
                return Err(bad(offset, &format!("section {i} checksum mismatch")));
            }
            sections.push((offset, offset + len));
        }
        let first_section = sections[0].0;
        let mut run = Run {
            name: name.to_string(),
            meta,
            bytes,
            sections,
            bloom_bits,
            columns: Vec::new(),
        };
        run.columns = run
            .read_column_directory(column_count)
            .map_err(|detail| bad(first_section, &detail))?;
        run.check_shape()
            .map_err(|detail| bad(first_section, &detail))?;
        Ok(run)
    }

    /// The (key, kind) of each property column, from the directory section.
    fn read_column_directory(&self, count: usize) -> Result<Vec<(u32, ColumnKind)>, String> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let directory = self.u32_section(BASE_SECTIONS);
        if directory.len() != 2 * count {
            return Err("property column directory does not match the header".into());
        }
        directory
            .chunks(2)
            .map(|pair| {
                ColumnKind::from_tag(pair[1])
                    .map(|kind| (pair[0], kind))
                    .ok_or_else(|| format!("unknown property column kind {}", pair[1]))
            })
            .collect()
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
        for c in 0..self.columns.len() {
            let (values, valid) = self.column_sections(c);
            if values.len() != m || valid.len() != m.div_ceil(64) {
                return Err(format!(
                    "property column {c} does not match the entry count"
                ));
            }
        }
        Ok(())
    }

    /// (values, validity bitmap) of property column `c`.
    fn column_sections(&self, c: usize) -> (&[u64], &[u64]) {
        let first = BASE_SECTIONS + 1 + 2 * c;
        (self.u64_section(first), self.u64_section(first + 1))
    }

    /// The position of the property column of `key`, if this run has one.
    pub fn column(&self, key: u32) -> Option<usize> {
        self.columns.iter().position(|&(k, _)| k == key)
    }

    /// The property columns this run carries: (key, kind).
    pub fn columns(&self) -> &[(u32, ColumnKind)] {
        &self.columns
    }

    /// Entries `a..b` of property column `c`.
    fn column_slice(&self, c: usize, a: usize, b: usize) -> ColumnSlice<'_> {
        let (values, valid) = self.column_sections(c);
        ColumnSlice {
            kind: self.columns[c].1,
            values: &values[a..b],
            valid,
            first: a,
        }
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
        let (a, b) = self.span(v);
        (&self.u32_section(1)[a..b], &self.u32_section(2)[a..b])
    }

    /// `v`'s slice of property column `c` (aligned with [`Run::entries`]).
    pub fn column_entries(&self, c: usize, v: u32) -> ColumnSlice<'_> {
        let (a, b) = self.span(v);
        self.column_slice(c, a, b)
    }

    /// The entry positions of `v` (empty when the run does not hold it).
    fn span(&self, v: u32) -> (usize, usize) {
        let Some(k) = self.index(v) else {
            return (0, 0);
        };
        let offsets = self.offsets();
        (offsets[k] as usize, offsets[k + 1] as usize)
    }

    /// Calls `f(vertex, neighbours, edge offsets, values)` for every vertex in `[lo, hi)`
    /// with entries for which `want(vertex)` holds, in order — a walk over the bitmap's set
    /// bits and the offsets, the static-CSR loop. `values` is the vertex's slice of property
    /// column `column` (see [`Run::column`]), when one is asked for.
    pub fn scan_range<'a>(
        &'a self,
        lo: u32,
        hi: u32,
        want: &impl Fn(u32) -> bool,
        column: Option<usize>,
        f: &mut impl FnMut(u32, &'a [u32], &'a [u32], Option<ColumnSlice<'a>>),
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
                    let values = column.map(|c| self.column_slice(c, a, b));
                    f(v, &nbr[a..b], &eid[a..b], values);
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
            prop_ts: 11,
        };
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
        write_run(vfs, "r.run", &mut meta, &vertices, &[weight, rank]).unwrap();
        meta
    }

    #[test]
    fn property_columns_round_trip_aligned_with_the_entries() {
        let vfs = FaultVfs::new();
        sample(&vfs);
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
        run.scan_range(0, 1000, &|_| true, Some(rank), &mut |v, _, _, values| {
            let values = values.unwrap();
            scanned.extend((0..values.len()).map(|i| (v, values.value(i))));
        });
        let expected = [(100, Some(-3)), (100, Some(7)), (250, None)];
        let expected: Vec<_> = expected
            .iter()
            .map(|&(v, r)| (v, r.map(Value::Int)))
            .collect();
        assert_eq!(scanned, expected);
    }

    #[test]
    fn a_run_written_before_property_columns_opens_without_them() {
        let vfs = FaultVfs::new();
        let mut meta = RunMeta {
            prop_ts: 0,
            ..sample(&vfs)
        };
        let vertices: Vec<RunVertex> = vec![(100, &[1][..], &[10][..])];
        write_run(&vfs, "old.run", &mut meta, &vertices, &[]).unwrap();
        let mut bytes = vfs.read("old.run").unwrap();
        bytes[..8].copy_from_slice(MAGIC_WITHOUT_COLUMNS);
        let old = FaultVfs::new();
        old.create("old.run").unwrap().write_all(&bytes).unwrap();
        let run = Run::open(&old, "old.run").unwrap();
        assert!(run.columns().is_empty());
        assert_eq!(run.entries(100), (&[1][..], &[10][..]));
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
            prop_ts: 0,
        };
        write_run(&vfs, "s.run", &mut meta, &vertices, &[]).unwrap();
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
            run.scan_range(lo, hi, &|v| v != 1007, None, &mut |v, n, e, _| {
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
