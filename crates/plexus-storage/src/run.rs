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
//!   "PLXRUN04" | header (80 bytes) | offsets [u64; p+1] | nbr | eid [u32; m]
//!            | bitmap [u64; ceil(n/64)] | bloom [u64; bloom_words] | rank [u32; ceil(n/64)]
//!            [ | columns [(key u32, kind u32); k] | k x (values [u64; m], valid [u64; ceil(m/64)]) ]
//!            | footer: s x (offset u64, length u64, crc32c u32, 0u32) | header crc u32
//!            | crc32c of the s footer entries u32 | "PLXRUNFT"
//! ```
//!
//! Header byte 6 is the neighbour encoding of the `nbr` section: 0, raw (`[u32; m]`); 1,
//! packed (see NEIGHBOUR PACKING). `k` (the property column count, header bytes 60..64)
//! decides the section count: `s = 6` without columns, `s = 7 + 2k` with. A "PLXRUN03" file
//! (written before packing) is the same layout with raw neighbours; a "PLXRUN02" file (before
//! property columns) is that with `k = 0` and opens as a run without columns.
//!
//! Offsets are *sparse*: one per vertex present (`p` of the range's `n`), found through the
//! source bitmap and `rank` (set bits before each bitmap word), so a run holding a few vertices
//! of a large range costs bytes for those vertices only.
//! Every byte is covered by a magic number or a checksum. Opening a run verifies the magic
//! numbers, the header and footer checksums, every section's checksum and
//! the CSR invariants (offsets ascend, end at `m`, sections sized as the header says, a packed
//! block index consistent with `m` and its widths at most 32). A damaged file is an
//! `Error::Corruption` naming it: the database refuses to open rather than return wrong
//! neighbours.
//!
//! NEIGHBOUR PACKING
//! =================
//! A vertex's entries are sorted by (neighbour, edge offset), so its neighbours ascend and the
//! gaps between them are small next to the ids. A packed `nbr` section stores, per entry, the
//! *delta* from the previous neighbour of the same vertex (the first entry of a vertex: from
//! 0), in blocks of [`PACK_BLOCK_ENTRIES`] consecutive entries of the run, each block
//! bit-packed at the width of its largest delta:
//!
//! ```text
//!   index [u64; B+1]   entry k < B: word offset of block k << 8 | bit width of block k (0..=32)
//!                      entry B: total block words << 8
//!   blocks [u64; ..]   block k: its entries' deltas, `width` bits each, LSB first;
//!                      ceil(entries of block k × width / 64) words
//!   pad [u64; 1]       zero (lets the decoder read two words at any bit position)
//! ```
//!
//! with `B = ceil(m / PACK_BLOCK_ENTRIES)`. Example: a vertex with neighbours 1000, 1003, 1003,
//! 1010 stores deltas 1000, 3, 0, 7. The entries of a vertex are found as in a raw run (offsets
//! `a..b`), and decoded from entry `a` by unpacking each block they touch with shifts and a
//! running sum (no per-entry branch); the block index gives any entry's block in O(1). Edge
//! offsets stay raw: they are not sorted within a vertex, so their deltas would not be small.
//!
//! *When it pays:* the writer packs a run (under `RunPacking::WhenItPays`; the default is
//! `Never`, since decoding measured slower than the bytes saved while runs are in memory) only
//! when the packed section is at most [`PACK_MAX_PERCENT_OF_RAW`] % of the raw one. Decoding
//! costs a few operations per entry on every read, while raw neighbours are handed out in
//! place; a saving under a quarter of the bytes is not worth that. Dense ranges (many entries
//! per vertex, neighbours close together) pack to a third or less of raw; tiny runs and runs
//! of scattered single edges often do not pay and stay raw.
//!
//! A raw run's neighbours are zero-copy: [`Run::entries`] and [`Run::scan_range`] hand out
//! slices of the mapping. A packed run decodes them into the caller's [`Scratch`], so the
//! slices it hands out borrow the scratch (the same lifetime either way).

use crate::vfs::{MappedBytes, Vfs};
use plexus_types::{Error, Result, RunPacking, Timestamp, Value};

const MAGIC: &[u8; 8] = b"PLXRUN04";
/// Runs written before neighbour packing: read as raw runs.
const MAGIC_RAW_ONLY: &[u8; 8] = b"PLXRUN03";
/// Runs written before property columns: read as runs with none.
const MAGIC_WITHOUT_COLUMNS: &[u8; 8] = b"PLXRUN02";
/// Header byte holding the neighbour encoding (see FILE LAYOUT).
const ENCODING_BYTE: usize = 6;
const ENCODING_RAW: u8 = 0;
const ENCODING_PACKED: u8 = 1;
/// Entries per packed neighbour block (one bit width each; see NEIGHBOUR PACKING).
pub const PACK_BLOCK_ENTRIES: usize = 128;
/// A run's neighbours are packed (when it pays) only if the packed section takes at most this
/// percentage of the raw section's bytes (see NEIGHBOUR PACKING).
pub const PACK_MAX_PERCENT_OF_RAW: u64 = 75;
/// Bits of a packed block index entry below the block's word offset (they hold its width).
const INDEX_WIDTH_BITS: u32 = 8;
const INDEX_WIDTH_MASK: u64 = (1 << INDEX_WIDTH_BITS) - 1;
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
    /// Whether the neighbours are packed (decided by the writer; see NEIGHBOUR PACKING).
    pub packed: bool,
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

/// Per entry, the delta from the previous neighbour of its vertex (the first from 0), in
/// entry order. Wrapping, so unsorted neighbours still round-trip (at a wide width).
fn neighbour_deltas(vertices: &[RunVertex<'_>]) -> Vec<u32> {
    let mut deltas = Vec::with_capacity(vertices.iter().map(|(_, n, _)| n.len()).sum());
    for (_, nbr, _) in vertices {
        let mut previous = 0u32;
        for &n in nbr.iter() {
            deltas.push(n.wrapping_sub(previous));
            previous = n;
        }
    }
    deltas
}

/// Words of a block of `entries` deltas of `width` bits.
fn block_words(entries: usize, width: u32) -> u64 {
    (entries as u64 * u64::from(width)).div_ceil(64)
}

/// The packed neighbour section (see NEIGHBOUR PACKING) of `deltas`, if `packing` asks for it
/// and, under `WhenItPays`, it takes at most `PACK_MAX_PERCENT_OF_RAW` % of the raw bytes.
fn pack_neighbours(deltas: &[u32], packing: RunPacking) -> Option<Vec<u64>> {
    if packing == RunPacking::Never {
        return None;
    }
    let blocks: Vec<&[u32]> = deltas.chunks(PACK_BLOCK_ENTRIES).collect();
    let widths: Vec<u32> = blocks
        .iter()
        .map(|block| u32::BITS - block.iter().fold(0, |all, d| all | d).leading_zeros())
        .collect();
    let block_total: u64 = blocks
        .iter()
        .zip(&widths)
        .map(|(block, &width)| block_words(block.len(), width))
        .sum();
    let packed_bytes = 8 * (blocks.len() as u64 + 1 + block_total + 1);
    let raw_bytes = (4 * deltas.len() as u64).next_multiple_of(8);
    let pays = packed_bytes * 100 <= raw_bytes * PACK_MAX_PERCENT_OF_RAW;
    if packing == RunPacking::WhenItPays && !pays {
        return None;
    }
    let mut words = Vec::with_capacity((packed_bytes / 8) as usize);
    let mut offset = 0u64;
    for (block, &width) in blocks.iter().zip(&widths) {
        words.push(offset << INDEX_WIDTH_BITS | u64::from(width));
        offset += block_words(block.len(), width);
    }
    words.push(offset << INDEX_WIDTH_BITS);
    for (block, &width) in blocks.iter().zip(&widths) {
        pack_block(&mut words, block, width);
    }
    words.push(0);
    debug_assert_eq!(8 * words.len() as u64, packed_bytes);
    Some(words)
}

/// Appends `block`'s values, `width` bits each, LSB first.
fn pack_block(words: &mut Vec<u64>, block: &[u32], width: u32) {
    let first = words.len();
    words.resize(first + block_words(block.len(), width) as usize, 0);
    if width == 0 {
        return; // every delta is 0: the block takes no words
    }
    let width = width as usize;
    for (j, &d) in block.iter().enumerate() {
        let (at, shift) = (first + j * width / 64, j * width % 64);
        words[at] |= u64::from(d) << shift;
        if shift + width > 64 {
            words[at + 1] |= u64::from(d) >> (64 - shift);
        }
    }
}

/// Decodes entries `first..first + out.len()` of a packed section (`index`, then `blocks`: the
/// blocks and the pad word as bytes), `first` being the first entry of a vertex: per block
/// touched, one unaligned 8-byte load, a shift and a mask per entry, and a running sum of the
/// deltas. An entry starts in its block's words, so its load ends at most 8 bytes past them:
/// within the next block or the pad word (`check_packed` guarantees the layout).
fn unpack(index: &[u64], blocks: &[u8], first: usize, out: &mut [u32]) {
    let mut sum = 0u32;
    let mut done = 0;
    while done < out.len() {
        let entry = first + done;
        let (block, in_block) = (entry / PACK_BLOCK_ENTRIES, entry % PACK_BLOCK_ENTRIES);
        let n = (PACK_BLOCK_ENTRIES - in_block).min(out.len() - done);
        let start_bit = 64 * (index[block] >> INDEX_WIDTH_BITS) as usize;
        let width = (index[block] & INDEX_WIDTH_MASK) as usize;
        let slots = &mut out[done..done + n];
        if width == 0 {
            slots.fill(sum); // every delta is 0
        } else {
            let mask = (1u64 << width) - 1;
            let mut bit = start_bit + in_block * width;
            for slot in slots {
                let at = bit / 8;
                let word = u64::from_le_bytes(blocks[at..at + 8].try_into().expect("8 bytes"));
                sum = sum.wrapping_add(((word >> (bit % 8)) & mask) as u32);
                *slot = sum;
                bit += width;
            }
        }
        done += n;
    }
}

/// The 80 header bytes (see FILE LAYOUT).
fn header(meta: &RunMeta, bloom_bits: u64, columns: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES);
    out.extend_from_slice(&meta.edge_table.to_le_bytes());
    out.push(meta.outgoing as u8);
    out.push(meta.level);
    out.push(match meta.packed {
        true => ENCODING_PACKED,
        false => ENCODING_RAW,
    });
    out.push(0);
    out.extend_from_slice(&meta.vertex_lo.to_le_bytes());
    out.extend_from_slice(&meta.vertex_hi.to_le_bytes());
    for x in [
        meta.entries,
        meta.tombstones,
        meta.min_ts,
        meta.max_ts,
        bloom_bits,
    ] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&BLOOM_HASHES.to_le_bytes());
    out.extend_from_slice(&(columns as u32).to_le_bytes());
    out.extend_from_slice(&meta.prop_ts.to_le_bytes());
    out.resize(HEADER_BYTES, 0);
    out
}

/// The source-vertex bitmap and the bloom filter (`bloom_bits` bits) of `vertices`.
fn bitmap_and_bloom(
    meta: &RunMeta,
    vertices: &[RunVertex<'_>],
    bloom_bits: u64,
) -> (Vec<u64>, Vec<u64>) {
    let n = (meta.vertex_hi - meta.vertex_lo) as usize;
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
    (bitmap, bloom)
}

/// The sparse offsets of `vertices` (see FILE LAYOUT), checking the writer's preconditions.
fn sparse_offsets(meta: &RunMeta, vertices: &[RunVertex<'_>]) -> Vec<u64> {
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
    offsets
}

/// Writes a run file (and fsyncs it). `vertices` must ascend and lie in the meta's range;
/// `meta.entries`, `tombstones`, `packed`, `min_ts` and `max_ts` are filled in from them / by
/// the caller. `columns` (at most [`MAX_COLUMNS`], read as of `meta.prop_ts`) hold one value
/// per entry. `packing` decides whether the neighbours are packed (see NEIGHBOUR PACKING).
/// Returns the file size in bytes.
pub fn write_run(
    vfs: &dyn Vfs,
    name: &str,
    meta: &mut RunMeta,
    vertices: &[RunVertex<'_>],
    columns: &[ColumnData],
    packing: RunPacking,
) -> Result<u64> {
    assert!(meta.vertex_lo <= meta.vertex_hi, "run range is ordered");
    assert!(columns.len() <= MAX_COLUMNS, "too many property columns");
    let offsets = sparse_offsets(meta, vertices);
    let m = offsets[offsets.len() - 1];
    assert!(
        columns.iter().all(|c| c.len() as u64 == m),
        "property columns aligned with the entries"
    );
    let packed = pack_neighbours(&neighbour_deltas(vertices), packing);
    meta.entries = m;
    meta.packed = packed.is_some();
    meta.tombstones = vertices
        .iter()
        .flat_map(|(_, _, e)| e.iter())
        .filter(|e| *e & TOMBSTONE_BIT != 0)
        .count() as u64;
    let bloom_bits = (m * BLOOM_BITS_PER_ENTRY).next_multiple_of(64).max(64);
    let (bitmap, bloom) = bitmap_and_bloom(meta, vertices, bloom_bits);

    let mut out = Vec::with_capacity(HEADER_BYTES + 8 * offsets.len() + 8 * m as usize + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&header(meta, bloom_bits, columns.len()));
    let header_crc = crc32c::crc32c(&out[MAGIC.len()..]);

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
    section(&mut out, &|o| match &packed {
        Some(words) => push_u64s(o, words.iter().copied()),
        None => push_u32s(
            o,
            vertices.iter().flat_map(|(_, nbr, _)| nbr.iter().copied()),
        ),
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

/// Buffers a packed run's neighbours are decoded into (reused across calls; a raw run leaves
/// them alone). Slices handed out by [`Run::entries`] and [`Run::scan_range`] borrow it.
#[derive(Default)]
pub struct Scratch {
    nbr: Vec<u32>,
    /// The (vertex, index among present vertices) a packed scan decoded, in order.
    wanted: Vec<(u32, usize)>,
}

/// Scratches a thread keeps between reads (see [`Scratch::with_many`]).
const MAX_POOLED_SCRATCHES: usize = 64;
/// A pooled scratch whose buffer grew past this many neighbours is dropped, not kept.
const MAX_POOLED_SCRATCH_ENTRIES: usize = 1 << 20;

thread_local! {
    static SCRATCH_POOL: std::cell::Cell<Vec<Scratch>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Scratch {
    /// Runs `f` with one scratch each for `n` runs read side by side, reused from this
    /// thread's earlier reads: a scan decodes segment after segment, and fresh buffers per
    /// segment cost an allocation, page faults and regrowth copies each time. A nested call
    /// (from inside `f`) gets fresh scratches. At most [`MAX_POOLED_SCRATCHES`] are kept,
    /// none grown past [`MAX_POOLED_SCRATCH_ENTRIES`].
    pub fn with_many<R>(n: usize, f: impl FnOnce(&mut [Scratch]) -> R) -> R {
        let mut pool = SCRATCH_POOL.with(|pool| pool.take());
        if pool.len() < n {
            pool.resize_with(n, Scratch::default);
        }
        let result = f(&mut pool[..n]);
        pool.truncate(MAX_POOLED_SCRATCHES);
        // Only the scratches `f` used can have grown.
        for scratch in pool.iter_mut().take(n) {
            if scratch.nbr.capacity() > MAX_POOLED_SCRATCH_ENTRIES {
                *scratch = Scratch::default();
            }
        }
        SCRATCH_POOL.with(|slot| slot.set(pool));
        result
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
            && [MAGIC, MAGIC_RAW_ONLY, MAGIC_WITHOUT_COLUMNS]
                .iter()
                .any(|magic| &b[..8] == *magic)
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
            packed: match (b[h + ENCODING_BYTE], &b[..8] == MAGIC) {
                (ENCODING_RAW, _) => false,
                (ENCODING_PACKED, true) => true,
                _ => return Err(bad(h + ENCODING_BYTE, "unknown neighbour encoding")),
            },
        };
        let bloom_bits = read_u64(b, h + 48);
        if meta.vertex_hi < meta.vertex_lo || bloom_bits == 0 || !bloom_bits.is_multiple_of(64) {
            return Err(bad(h, "inconsistent header"));
        }
        let mut sections = Vec::with_capacity(section_total);
        for i in 0..section_total {
            let at = footer + i * 24;
            let (offset, len) = (read_u64(b, at) as usize, read_u64(b, at + 8) as usize);
            let aligned = offset.is_multiple_of(8) && len.is_multiple_of(8);
            if !aligned || offset.checked_add(len).is_none_or(|end| end > footer) {
                return Err(bad(at, "section outside the file or not aligned"));
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
        if self.meta.packed {
            self.check_packed()?;
        } else if self.u32_section(1).len() < m {
            return Err("neighbour column shorter than the entry count".into());
        }
        if self.u32_section(2).len() < m {
            return Err("edge offset column shorter than the entry count".into());
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

    /// A packed neighbour section's structure (see NEIGHBOUR PACKING): one index entry per
    /// block of the `m` entries and one more, widths at most 32, each block's words where the
    /// index puts them, then the pad word. With it, decoding stays within the section.
    fn check_packed(&self) -> Result<(), String> {
        let m = self.meta.entries as usize;
        let section = self.u64_section(1);
        let blocks = m.div_ceil(PACK_BLOCK_ENTRIES);
        if section.len() < blocks + 2 {
            return Err("packed neighbours shorter than their block index".into());
        }
        let (index, words) = self.packed_sections();
        let mut expected = 0u64;
        for (k, &entry) in index.iter().enumerate() {
            let (offset, width) = (entry >> INDEX_WIDTH_BITS, entry & INDEX_WIDTH_MASK);
            if offset != expected || width > 32 || (k == blocks && width != 0) {
                return Err(format!("packed neighbour block {k} has a bad index entry"));
            }
            let entries = PACK_BLOCK_ENTRIES.min(m.saturating_sub(k * PACK_BLOCK_ENTRIES));
            expected += block_words(entries, width as u32);
        }
        if words.len() as u64 != expected + 1 {
            return Err("packed neighbour blocks do not match their index".into());
        }
        Ok(())
    }

    /// A packed neighbour section split into (block index, blocks and the pad word).
    fn packed_sections(&self) -> (&[u64], &[u64]) {
        let blocks = (self.meta.entries as usize).div_ceil(PACK_BLOCK_ENTRIES);
        self.u64_section(1).split_at(blocks + 1)
    }

    /// [`packed_sections`](Self::packed_sections) with the blocks as bytes, as `unpack` reads
    /// them.
    fn packed_bytes(&self) -> (&[u64], &[u8]) {
        let blocks = (self.meta.entries as usize).div_ceil(PACK_BLOCK_ENTRIES);
        let (index, words) = self.section(1).split_at(8 * (blocks + 1));
        (cast(index), words)
    }

    /// Neighbours of entries `a..b` (a vertex's span): the mapped slice of a raw run, or
    /// decoded into `out` (replacing its content) for a packed one.
    fn neighbours<'a>(&'a self, a: usize, b: usize, out: &'a mut Vec<u32>) -> &'a [u32] {
        if !self.meta.packed {
            return &self.u32_section(1)[a..b];
        }
        out.clear();
        self.decode_into(a, b, out);
        out
    }

    /// Appends the decoded neighbours of entries `a..b` (a vertex's span) of a packed run.
    fn decode_into(&self, a: usize, b: usize, out: &mut Vec<u32>) {
        debug_assert!(self.meta.packed);
        let at = out.len();
        out.resize(at + (b - a), 0);
        let (index, blocks) = self.packed_bytes();
        unpack(index, blocks, a, &mut out[at..]);
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

    /// (neighbours, edge offsets) of vertex `v`; empty when the run does not hold it. A packed
    /// run decodes the neighbours into `scratch`.
    pub fn entries<'a>(&'a self, v: u32, scratch: &'a mut Scratch) -> (&'a [u32], &'a [u32]) {
        let (a, b) = self.span(v);
        (
            self.neighbours(a, b, &mut scratch.nbr),
            &self.u32_section(2)[a..b],
        )
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
        self.span_of(k)
    }

    /// The entry positions of the `k`-th vertex present.
    fn span_of(&self, k: usize) -> (usize, usize) {
        let offsets = self.offsets();
        (offsets[k] as usize, offsets[k + 1] as usize)
    }

    /// Calls `f(vertex, k)` for every vertex in `[lo, hi)` with entries, in order, `k` being
    /// its index among the vertices present — a walk over the bitmap's set bits.
    fn walk(&self, lo: u32, hi: u32, mut f: impl FnMut(u32, usize)) {
        let (lo, hi) = (lo.max(self.meta.vertex_lo), hi.min(self.meta.vertex_hi));
        if lo >= hi {
            return;
        }
        let (bitmap, rank) = (self.u64_section(3), self.u32_section(5));
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
                f(self.meta.vertex_lo + (w * 64 + bit) as u32, k);
                word &= word - 1;
                k += 1;
            }
        }
    }

    /// Calls `f(vertex, neighbours, edge offsets, values)` for every vertex in `[lo, hi)`
    /// with entries for which `want(vertex)` holds, in order — a walk over the bitmap's set
    /// bits and the offsets, the static-CSR loop. `values` is the vertex's slice of property
    /// column `column` (see [`Run::column`]), when one is asked for. A packed run first
    /// decodes the wanted vertices' neighbours into `scratch` (one walk), then hands them out
    /// (`want` is called once per vertex either way).
    pub fn scan_range<'a>(
        &'a self,
        lo: u32,
        hi: u32,
        want: &impl Fn(u32) -> bool,
        column: Option<usize>,
        scratch: &'a mut Scratch,
        f: &mut impl FnMut(u32, &'a [u32], &'a [u32], Option<ColumnSlice<'a>>),
    ) {
        let eid = self.u32_section(2);
        let mut emit = |v: u32, (a, b): (usize, usize), nbr: &'a [u32]| {
            let values = column.map(|c| self.column_slice(c, a, b));
            f(v, nbr, &eid[a..b], values);
        };
        let offsets = self.offsets();
        if !self.meta.packed {
            let nbr = self.u32_section(1);
            return self.walk(lo, hi, |v, k| {
                if want(v) {
                    let (a, b) = (offsets[k] as usize, offsets[k + 1] as usize);
                    emit(v, (a, b), &nbr[a..b]);
                }
            });
        }
        let Scratch { nbr, wanted } = scratch;
        nbr.clear();
        wanted.clear();
        // Sections looked up once for the whole walk, not per vertex.
        let (index, blocks) = self.packed_bytes();
        let span = |k: usize| (offsets[k] as usize, offsets[k + 1] as usize);
        self.walk(lo, hi, |v, k| {
            if want(v) {
                wanted.push((v, k));
            }
        });
        // Sized once, then decoded in place: no regrowth copies.
        nbr.resize(wanted.iter().map(|&(_, k)| span(k).1 - span(k).0).sum(), 0);
        let mut at = 0;
        for &(_, k) in wanted.iter() {
            let (a, b) = span(k);
            unpack(index, blocks, a, &mut nbr[at..at + (b - a)]);
            at += b - a;
        }
        let nbr: &'a [u32] = nbr;
        let mut at = 0;
        for &(v, k) in wanted.iter() {
            let (a, b) = span(k);
            emit(v, (a, b), &nbr[at..at + (b - a)]);
            at += b - a;
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
            assert!(
                run.contains_vertex(250) && !run.contains_vertex(299) && !run.contains_vertex(5)
            );
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

    #[test]
    fn every_truncation_and_corruption_is_detected() {
        for packing in PACKINGS {
            let vfs = FaultVfs::new();
            sample(&vfs, packing);
            let bytes = vfs.read("r.run").unwrap();
            for cut in 0..bytes.len() {
                let v = holding("r.run", &bytes[..cut]);
                assert!(
                    Run::open(&v, "r.run").is_err(),
                    "{packing:?}: truncated at {cut}"
                );
            }
            for at in 0..bytes.len() {
                let mut corrupt = bytes.clone();
                corrupt[at] ^= 0x5a;
                let err = Run::open(&holding("r.run", &corrupt), "r.run")
                    .err()
                    .unwrap_or_else(|| panic!("{packing:?}: corruption at byte {at} not detected"));
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
            (any::<u32>(), proptest::collection::vec(0..64u32, 1..400)).prop_map(
                |(start, gaps)| {
                    gaps.iter()
                        .scan(start, |at, g| {
                            *at = at.saturating_add(*g);
                            Some(*at)
                        })
                        .collect()
                }
            ),
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
}
