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
//! Opening checks the file without reading it through its mapping (a private copy, or
//! `read_at` for the checksums of a file over 64 MiB): pages read through a mapping become
//! part of this process's memory, so a check through it would make every run resident
//! before any query asked for it (see `Run::open`).
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
//!
//! FILES
//! =====
//! This file holds the format's constants, `RunMeta` and `RunVertex`; `columns` the property
//! columns; `pack` neighbour packing; `write` the writer; `read` `Run` and `Scratch`; `tests`
//! the tests.

use crate::vfs::{MappedBytes, Vfs};
use plexus_types::{Error, Result, RunPacking, Timestamp, Value};

mod columns;
mod pack;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use columns::{ColumnData, ColumnKind, ColumnSlice};
use pack::{block_words, neighbour_deltas, pack_neighbours, unpack};
pub use read::{Run, Scratch};
pub use write::write_run;
use write::{bloom_positions, section_count};
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

/// One vertex's entries in a run being written: (vertex, neighbours, edge offsets).
pub type RunVertex<'a> = (u32, &'a [u32], &'a [u32]);
