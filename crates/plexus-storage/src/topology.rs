//! Topology memtable: write-friendly, multi-versioned adjacency for one edge table and
//! direction.
//!
//! LAYOUT
//! ======
//! Vertices (by dense offset) are grouped into segments of `SEGMENT_VERTICES`. A segment owns
//! one arena of entries stored as two parallel arrays, `nbr` (neighbour offset) and `eid` (edge
//! offset, top bit = tombstone). A vertex's edges form an append-only *log* that always lives
//! in one contiguous block of that arena. When the block is full, the log is relocated to a
//! block of twice the capacity at the end of the arena and the old block becomes slack, so
//! appends are amortised O(1), every vertex is one slice, and neighbouring vertices' edges sit
//! in one arena — no heap allocation per vertex.
//!
//! ```text
//!   segment arena   nbr: [ x x x x | 3 . . . | 5 9 7 5 2 8 4 . ]     (x = slack, . = free)
//!   vertex 0: block [8..16), len 7  →  log 5 9 7 5 2 8 4   (relocated from [0..4))
//!   vertex 1: block [4..8),  len 1  →  log 3
//! ```
//!
//! SPARSE HEADERS
//! ==============
//! A vertex with entries has a 40-byte header (its block, its newest two versions); a vertex
//! without entries has none. Headers live in `GROUPS` groups of 64 consecutive vertices, each a
//! `u64` occupancy bitmap and a vector of the headers of the set bits, in vertex order:
//!
//! ```text
//!   group 3 (vertices 192..256)   occupied: bits 1, 5, 6    headers: [h193, h197, h198]
//!   header of vertex 197  =  headers[popcount(occupied & bits below 5)]  =  headers[1]
//! ```
//!
//! A memtable that receives random edges touches a few vertices of every segment: with one
//! header per vertex of a touched segment, headers alone (10 MiB per direction at 262,144
//! vertices) outgrew a 16 MiB memtable budget and every commit froze a nearly empty memtable.
//! Now memory follows the vertices with entries. Lookups stay one bitmap test and one popcount
//! away from the header; a segment scan walks each group's headers sequentially, deriving the
//! vertex from the bitmap; a vertex's first entry shifts at most 63 headers of its group.
//!
//! VISIBILITY (version tables)
//! ===========================
//! Each vertex keeps a version table of (commit ts, log length, tombstones in that prefix):
//! the newest version inline, older ones in a per-segment side table that only exists while
//! some reader is older than the newest version. Entries are appended only when a commit
//! installs, so the log holds committed edges only and a reader at timestamp t reads the
//! longest prefix committed at or before t:
//!
//! ```text
//!   versions [(3, len 2), (5, len 4), (9, len 6)]:  reader at 7 sees the first 4 entries
//! ```
//!
//! There is no timestamp per edge. A delete appends a tombstone entry (same neighbour, edge
//! offset with the top bit set); when the visible prefix has no tombstones — the common case —
//! a reader gets the raw slice, exactly what a static CSR would hand out.
//!
//! COMPACTION
//! ==========
//! Compacting a segment rewrites its arena in vertex order with no slack and no free capacity.
//! Positions within a log are preserved, so version tables stay valid for older readers; a
//! vertex whose whole history is older than the GC horizon also drops its tombstones and the
//! edges they delete. It runs automatically when a segment's slack exceeds its live entries
//! (so the arena stays within about 3x of the live data between compactions, and copying stays
//! amortised O(1) per edge), and can be forced (checkpoints and `Database::compact` do).
//!
//! INVARIANTS
//! ==========
//! - Version timestamps of a vertex strictly increase; lengths and tombstone counts never
//!   decrease except when compaction drops dead entries, which happens only below the horizon.
//! - `len <= cap`, and a vertex's block never overlaps another's.
//! - A group holds one header per set bit of `occupied`, in vertex order; a vertex has a
//!   header exactly when its log is not empty (compaction drops the header of a vertex whose
//!   entries all cancelled out below the horizon).
//! - A segment's accounted bytes are its allocations: arena and header capacities, the version
//!   side table, CSR offsets and the segment itself.
//! - Writers (the commit pipeline) hold the segment's write latch; readers hold its read latch
//!   for one vertex or one segment scan, never across calls.

use parking_lot::{RawRwLock, RwLock, lock_api::ArcRwLockReadGuard};
use plexus_types::Timestamp;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub const SEGMENT_VERTICES: usize = 1024;

/// The vertex offsets segment `index` covers — the same for every table and direction, so
/// parallel scans can split work by segment without asking a table.
pub fn segment_vertex_offsets(index: usize) -> std::ops::Range<u32> {
    let first = index.saturating_mul(SEGMENT_VERTICES);
    let end = first.saturating_add(SEGMENT_VERTICES);
    first.min(u32::MAX as usize) as u32..end.min(u32::MAX as usize) as u32
}
const MIN_BLOCK_ENTRIES: u32 = 4;
pub const TOMBSTONE_BIT: u32 = 1 << 31;
/// Edge offsets must leave the tombstone bit free.
pub const MAX_EDGE_OFFSET: u32 = TOMBSTONE_BIT - 1;

#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Version {
    ts: Timestamp,
    len: u32,
    tombs: u32,
}

/// A vertex's header: its block and its newest two versions.
#[derive(Clone, Copy, Default)]
struct VertexAdj {
    start: u32,
    cap: u32,
    newest: Version,
    /// The version before `newest` (`len == 0`: none needed). Readers at the GC horizon
    /// usually need at most this one; more versions spill into the segment's `history`.
    older: Version,
}

/// Vertices per header group: one bit each in the group's `u64` occupancy bitmap.
const GROUP_VERTICES: usize = u64::BITS as usize;
const GROUPS: usize = SEGMENT_VERTICES / GROUP_VERTICES;
const _: () = assert!(SEGMENT_VERTICES.is_multiple_of(GROUP_VERTICES));

/// Where a vertex's header is: (group, index in the group's `headers`).
type HeaderAt = (usize, usize);

/// The headers of the vertices with entries among `GROUP_VERTICES` consecutive vertices, in
/// vertex order: bit `i` of `occupied` is set when vertex `i` of the group has a header, and
/// its header is `headers[number of set bits below i]`.
#[derive(Default)]
struct HeaderGroup {
    occupied: u64,
    headers: Vec<VertexAdj>,
}

impl HeaderGroup {
    /// Index in `headers` of vertex `bit` of the group, if it has a header.
    fn index(&self, bit: usize) -> Option<usize> {
        let mask = 1u64 << bit;
        (self.occupied & mask != 0).then(|| (self.occupied & (mask - 1)).count_ones() as usize)
    }

    /// Index in `headers` of vertex `bit` of the group, inserting an empty header first if it
    /// has none (shifting at most `GROUP_VERTICES - 1` headers).
    fn index_or_insert(&mut self, bit: usize) -> usize {
        let mask = 1u64 << bit;
        let index = (self.occupied & (mask - 1)).count_ones() as usize;
        if self.occupied & mask == 0 {
            self.headers.insert(index, VertexAdj::default());
            self.occupied |= mask;
        }
        debug_assert_eq!(self.headers.len(), self.occupied.count_ones() as usize);
        index
    }

    /// (vertex of the group, header) in vertex order.
    fn iter(&self) -> impl Iterator<Item = (usize, &VertexAdj)> {
        let mut bits = self.occupied;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                bit
            })
        })
        .zip(&self.headers)
    }
}

/// Bytes a segment costs besides its vectors: the `Arc<RwLock<Segment>>` allocation (two
/// reference counts, the lock, the struct) and its pointer in `Adjacency::segments`.
const SEGMENT_FIXED_BYTES: usize =
    size_of::<RwLock<Segment>>() + 2 * size_of::<usize>() + size_of::<Arc<RwLock<Segment>>>();

pub struct Segment {
    nbr: Vec<u32>,
    eid: Vec<u32>,
    /// Headers of the vertices with entries only, by groups of `GROUP_VERTICES` vertices. The
    /// group table is inline (no pointer to chase before reaching a vertex's header).
    groups: [HeaderGroup; GROUPS],
    /// Headers allocated over all groups (the sum of their capacities), kept up to date so
    /// that accounting an append does not walk the groups.
    header_capacity: usize,
    /// Versions before `VertexAdj::older` (ascending), kept while a lagging reader may need
    /// them.
    history: HashMap<u16, Vec<Version>>,
    live_entries: usize,
    slack_entries: usize,
    /// Newest commit timestamp installed in this segment.
    max_ts: Timestamp,
    /// After a compaction and until the next append: CSR offsets into the arena (one per
    /// vertex, plus one). Readers at or after `max_ts` scan the segment exactly like a static
    /// CSR, reading 4 bytes per vertex instead of the 40-byte vertex headers.
    csr_offsets: Option<Box<[u32]>>,
}

/// What a reader at some timestamp sees of one vertex: where its block starts and the
/// visible version (length and tombstones of the visible prefix).
#[derive(Clone, Copy, Default)]
struct Visible {
    start: usize,
    version: Version,
}

fn dead_edges(eids: &[u32]) -> Vec<u32> {
    let mut dead: Vec<u32> = eids
        .iter()
        .filter(|e| *e & TOMBSTONE_BIT != 0)
        .map(|e| e & !TOMBSTONE_BIT)
        .collect();
    dead.sort_unstable();
    dead
}

/// Removes each tombstone together with the entry it deletes when both are in this log.
/// Tombstones whose target is elsewhere (an older CSR run) are kept: they must go on hiding
/// it until a last-level merge meets both.
pub(crate) fn cancel_pairs(nbr: &[u32], eid: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut live: Vec<u32> = eid
        .iter()
        .filter(|e| *e & TOMBSTONE_BIT == 0)
        .copied()
        .collect();
    live.sort_unstable();
    let mut cancelled: Vec<u32> = eid
        .iter()
        .filter(|e| *e & TOMBSTONE_BIT != 0 && live.binary_search(&(*e & !TOMBSTONE_BIT)).is_ok())
        .map(|e| e & !TOMBSTONE_BIT)
        .collect();
    cancelled.sort_unstable();
    nbr.iter()
        .zip(eid)
        .filter(|(_, e)| cancelled.binary_search(&(*e & !TOMBSTONE_BIT)).is_err())
        .map(|(n, e)| (*n, *e))
        .unzip()
}

fn prune(history: &mut Vec<Version>, newest: Timestamp, horizon: Timestamp) {
    if newest <= horizon {
        history.clear();
    } else if let Some(keep_from) = history.iter().rposition(|v| v.ts <= horizon) {
        history.drain(..keep_from);
    }
}

impl Segment {
    fn new() -> Self {
        Self {
            nbr: Vec::new(),
            eid: Vec::new(),
            groups: std::array::from_fn(|_| HeaderGroup::default()),
            header_capacity: 0,
            history: HashMap::new(),
            live_entries: 0,
            slack_entries: 0,
            max_ts: 0,
            csr_offsets: None,
        }
    }

    fn header(&self, local: usize) -> Option<&VertexAdj> {
        let group = &self.groups[local / GROUP_VERTICES];
        let index = group.index(local % GROUP_VERTICES)?;
        Some(&group.headers[index])
    }

    /// Where `local`'s header is, created empty on the vertex's first append.
    fn header_at(&mut self, local: usize) -> HeaderAt {
        let group = &mut self.groups[local / GROUP_VERTICES];
        let capacity = group.headers.capacity();
        let index = group.index_or_insert(local % GROUP_VERTICES);
        self.header_capacity += group.headers.capacity() - capacity;
        (local / GROUP_VERTICES, index)
    }

    fn header_mut(&mut self, (group, index): HeaderAt) -> &mut VertexAdj {
        &mut self.groups[group].headers[index]
    }

    /// The vertices with headers, in vertex order: (local offset, header).
    fn touched(&self) -> impl Iterator<Item = (usize, &VertexAdj)> {
        self.groups.iter().enumerate().flat_map(|(g, group)| {
            group
                .iter()
                .map(move |(bit, adj)| (g * GROUP_VERTICES + bit, adj))
        })
    }

    /// What a reader at `ts` sees of the vertex at `local` (nothing if it has no header).
    fn visible(&self, local: usize, ts: Timestamp) -> Visible {
        self.header(local)
            .map_or_else(Visible::default, |adj| self.visible_in(local, adj, ts))
    }

    /// What a reader at `ts` sees of the vertex at `local`, whose header is `adj`.
    fn visible_in(&self, local: usize, adj: &VertexAdj, ts: Timestamp) -> Visible {
        Visible {
            start: adj.start as usize,
            version: self.version_at(local, adj, ts),
        }
    }

    fn version_at(&self, local: usize, adj: &VertexAdj, ts: Timestamp) -> Version {
        if adj.newest.ts <= ts {
            return adj.newest;
        }
        if adj.older.len > 0 && adj.older.ts <= ts {
            return adj.older;
        }
        self.history
            .get(&(local as u16))
            .and_then(|h| h.iter().rev().find(|v| v.ts <= ts).copied())
            .unwrap_or_default()
    }

    /// Makes `ts` the newest version of the vertex at `local`, whose header is at `at`.
    fn record_version(&mut self, at: HeaderAt, local: usize, ts: Timestamp, horizon: Timestamp) {
        let adj = &mut self.groups[at.0].headers[at.1];
        if adj.newest.ts == ts {
            return; // another entry of the same commit
        }
        debug_assert!(ts > adj.newest.ts, "versions ascend");
        let (previous, older) = (adj.newest, adj.older);
        adj.newest.ts = ts;
        // Readers at or after `horizon` need every version newer than it plus the newest one
        // at or below it. `previous` is always needed (ts > horizon); `older` only while
        // `previous` is newer than the horizon, in which case it moves to the side table.
        adj.older = previous;
        let key = local as u16;
        if previous.ts > horizon && older.len > 0 {
            self.history.entry(key).or_default().push(older);
        } else if previous.ts <= horizon {
            self.history.remove(&key);
        }
        if let Some(history) = self.history.get_mut(&key) {
            prune(history, previous.ts, horizon);
            if history.is_empty() {
                self.history.remove(&key);
            }
        }
    }

    fn append(&mut self, local: usize, ts: Timestamp, horizon: Timestamp, nbr: u32, eid: u32) {
        let at = self.header_at(local);
        self.record_version(at, local, ts, horizon);
        self.max_ts = self.max_ts.max(ts);
        self.csr_offsets = None;
        let adj = *self.header_mut(at);
        if adj.newest.len == adj.cap {
            self.relocate(at, (adj.cap * 2).max(MIN_BLOCK_ENTRIES));
        }
        let adj = &mut self.groups[at.0].headers[at.1];
        let slot = (adj.start + adj.newest.len) as usize;
        self.nbr[slot] = nbr;
        self.eid[slot] = eid;
        adj.newest.len += 1;
        if eid & TOMBSTONE_BIT != 0 {
            adj.newest.tombs += 1;
        }
        self.live_entries += 1;
    }

    /// Moves the log of the vertex whose header is at `at` to a new block of `cap` entries at
    /// the end of the arena.
    fn relocate(&mut self, at: HeaderAt, cap: u32) {
        let adj = *self.header_mut(at);
        let start = self.nbr.len();
        assert!(
            start + cap as usize <= u32::MAX as usize,
            "segment arena below 4 G entries"
        );
        let (from, len) = (adj.start as usize, adj.newest.len as usize);
        self.nbr.resize(start + cap as usize, 0);
        self.eid.resize(start + cap as usize, 0);
        self.nbr.copy_within(from..from + len, start);
        self.eid.copy_within(from..from + len, start);
        self.slack_entries += adj.cap as usize;
        let adj = self.header_mut(at);
        adj.start = start as u32;
        adj.cap = cap;
    }

    fn should_compact(&self) -> bool {
        self.slack_entries
            > self
                .live_entries
                .max(SEGMENT_VERTICES * MIN_BLOCK_ENTRIES as usize)
    }

    fn compact(&mut self, horizon: Timestamp) {
        let mut nbr = Vec::with_capacity(self.live_entries);
        let mut eid = Vec::with_capacity(self.live_entries);
        let mut offsets = Vec::with_capacity(SEGMENT_VERTICES + 1);
        for g in 0..self.groups.len() {
            let old = std::mem::take(&mut self.groups[g]);
            let mut kept = HeaderGroup {
                occupied: 0,
                headers: Vec::with_capacity(old.headers.len()),
            };
            let mut headers = old.iter();
            for bit in 0..GROUP_VERTICES {
                offsets.push(nbr.len() as u32);
                if old.occupied & (1 << bit) == 0 {
                    continue;
                }
                let local = g * GROUP_VERTICES + bit;
                let mut adj = *headers.next().expect("a header per set bit").1;
                self.forget_versions(local, &mut adj, horizon);
                self.copy_log(&mut adj, horizon, &mut nbr, &mut eid);
                if adj.newest.len == 0 && adj.newest.ts <= horizon {
                    // Every entry cancelled out and no reader needs an older version.
                    debug_assert!(!self.history.contains_key(&(local as u16)));
                    continue;
                }
                kept.occupied |= 1 << bit;
                kept.headers.push(adj);
            }
            kept.headers.shrink_to_fit();
            self.groups[g] = kept;
        }
        offsets.push(nbr.len() as u32);
        self.live_entries = nbr.len();
        self.slack_entries = 0;
        self.nbr = nbr;
        self.eid = eid;
        self.header_capacity = self.groups.iter().map(|g| g.headers.capacity()).sum();
        let tombstones = self.touched().any(|(_, adj)| adj.newest.tombs > 0);
        let entries = self.groups.iter().any(|g| g.occupied != 0);
        self.csr_offsets = (!tombstones && entries).then(|| offsets.into_boxed_slice());
    }

    /// Drops the versions of `local` (header `adj`) that no reader at or after `horizon` needs.
    fn forget_versions(&mut self, local: usize, adj: &mut VertexAdj, horizon: Timestamp) {
        let key = local as u16;
        if adj.newest.ts <= horizon {
            adj.older = Version::default();
        }
        if let Some(history) = self.history.get_mut(&key) {
            prune(history, adj.older.ts, horizon);
            if history.is_empty() || adj.older.len == 0 {
                self.history.remove(&key);
            }
        }
    }

    /// Appends the log of `adj` to the new arena (`nbr`, `eid`) and points `adj` at it. A log
    /// whose whole history is below `horizon` also loses its tombstones and their targets.
    fn copy_log(
        &self,
        adj: &mut VertexAdj,
        horizon: Timestamp,
        nbr: &mut Vec<u32>,
        eid: &mut Vec<u32>,
    ) {
        let (from, len) = (adj.start as usize, adj.newest.len as usize);
        let start = nbr.len();
        let collapse = adj.newest.tombs > 0 && adj.newest.ts <= horizon && adj.older.len == 0;
        if collapse {
            let (kept_nbr, kept_eid) =
                cancel_pairs(&self.nbr[from..from + len], &self.eid[from..from + len]);
            nbr.extend_from_slice(&kept_nbr);
            eid.extend_from_slice(&kept_eid);
            adj.newest.tombs = kept_eid.iter().filter(|e| *e & TOMBSTONE_BIT != 0).count() as u32;
        } else {
            nbr.extend_from_slice(&self.nbr[from..from + len]);
            eid.extend_from_slice(&self.eid[from..from + len]);
        }
        adj.start = start as u32;
        adj.newest.len = (nbr.len() - start) as u32;
        adj.cap = adj.newest.len;
    }

    /// Calls `f` with the visible neighbour and edge slices of vertex `local` at `ts`.
    fn visit(&self, local: usize, ts: Timestamp, f: &mut dyn FnMut(&[u32], &[u32])) {
        let (nbrs, eids, tombstones) = self.raw(self.visible(local, ts));
        if !tombstones {
            return f(nbrs, eids);
        }
        // Slow path: hide tombstones and the entries they delete.
        let dead = dead_edges(eids);
        let (kept_nbrs, kept_eids): (Vec<u32>, Vec<u32>) = nbrs
            .iter()
            .zip(eids)
            .filter(|(_, e)| *e & TOMBSTONE_BIT == 0 && dead.binary_search(e).is_err())
            .map(|(n, e)| (*n, *e))
            .unzip();
        f(&kept_nbrs, &kept_eids);
    }

    /// The visible log prefix (neighbours, edge offsets, tombstones included) and whether it
    /// holds any tombstone.
    fn raw(&self, visible: Visible) -> (&[u32], &[u32], bool) {
        let range = visible.start..visible.start + visible.version.len as usize;
        (
            &self.nbr[range.clone()],
            &self.eid[range],
            visible.version.tombs > 0,
        )
    }

    /// Bytes allocated for this segment: the arena, the header groups and the headers of the
    /// vertices with entries (by capacity), the version side table and the CSR offsets.
    fn size_bytes(&self) -> usize {
        // hashbrown: about 8 buckets per 7 of capacity, each an entry and a control byte.
        let history_table =
            self.history.capacity() * 8 / 7 * (size_of::<(u16, Vec<Version>)>() + 1);
        let history_versions: usize = self
            .history
            .values()
            .map(|h| h.capacity() * size_of::<Version>())
            .sum();
        let csr = self.csr_offsets.as_ref().map_or(0, |o| o.len() * 4);
        debug_assert_eq!(
            self.header_capacity,
            self.groups
                .iter()
                .map(|g| g.headers.capacity())
                .sum::<usize>()
        );
        SEGMENT_FIXED_BYTES
            + (self.nbr.capacity() + self.eid.capacity()) * size_of::<u32>()
            + self.header_capacity * size_of::<VertexAdj>()
            + history_table
            + history_versions
            + csr
    }
}

/// The adjacency of one edge table in one direction. See the module documentation.
#[derive(Default)]
pub struct Adjacency {
    segments: RwLock<Vec<Arc<RwLock<Segment>>>>,
    /// Newest commit timestamp appended.
    max_ts: AtomicU64,
    /// Bytes held, kept up to date by every append and compaction (for memory budgets).
    bytes: AtomicUsize,
}

/// A read latch on one segment, held across many vertex reads (segment scans in the LSM).
pub struct SegmentReader {
    guard: ArcRwLockReadGuard<RawRwLock, Segment>,
}

impl SegmentReader {
    /// The raw visible log prefix of vertex `local` at `ts` — tombstones included — and
    /// whether it contains any tombstone.
    pub fn raw(&self, local: usize, ts: Timestamp) -> (&[u32], &[u32], bool) {
        self.guard.raw(self.guard.visible(local, ts))
    }

    /// Calls `f(vertex, neighbours, edge offsets, any tombstone)` with the raw visible log
    /// prefix at `ts` of every vertex with entries for which `want(vertex)` holds, in vertex
    /// order; `base` is the segment's first vertex.
    pub fn scan_raw<'a>(
        &'a self,
        base: u32,
        ts: Timestamp,
        want: &impl Fn(u32) -> bool,
        f: &mut impl FnMut(u32, &'a [u32], &'a [u32], bool),
    ) {
        let segment = &*self.guard;
        for (local, adj) in segment.touched() {
            let v = base + local as u32;
            if !want(v) {
                continue;
            }
            let (nbr, eid, tombs) = segment.raw(segment.visible_in(local, adj, ts));
            if !nbr.is_empty() {
                f(v, nbr, eid, tombs);
            }
        }
    }
}

/// One vertex's complete log with tombstones of entries in the same log removed (flush input).
pub struct DrainedVertex {
    pub vertex: u32,
    pub nbr: Vec<u32>,
    pub eid: Vec<u32>,
}

impl Adjacency {
    pub fn new() -> Self {
        Self::default()
    }

    #[cfg(test)]
    fn segment(&self, vertex: u32) -> Option<Arc<RwLock<Segment>>> {
        self.segments
            .read()
            .get(vertex as usize / SEGMENT_VERTICES)
            .cloned()
    }

    fn segment_for_write(&self, vertex: u32) -> Arc<RwLock<Segment>> {
        let index = vertex as usize / SEGMENT_VERTICES;
        if let Some(segment) = self.segments.read().get(index) {
            return segment.clone();
        }
        let mut segments = self.segments.write();
        while segments.len() <= index {
            let segment = Segment::new();
            self.bytes
                .fetch_add(segment.size_bytes(), Ordering::Relaxed);
            segments.push(Arc::new(RwLock::new(segment)));
        }
        segments[index].clone()
    }

    /// Appends an edge entry (or a tombstone, with `TOMBSTONE_BIT` set in `eid`) to `vertex`'s
    /// log as part of the commit at `ts` (tests; commits append in batches).
    #[cfg(test)]
    pub fn append(&self, vertex: u32, ts: Timestamp, horizon: Timestamp, nbr: u32, eid: u32) {
        self.append_batch(&[(vertex, nbr, eid)], ts, horizon);
    }

    /// Appends many entries of one commit: `(vertex, neighbour, edge offset)`, in log order.
    /// Entries are grouped by segment with a stable counting sort, so each segment's latch is
    /// taken once and each vertex's entries keep their order.
    pub fn append_batch(&self, entries: &[(u32, u32, u32)], ts: Timestamp, horizon: Timestamp) {
        let Some(max_vertex) = entries.iter().map(|e| e.0).max() else {
            return;
        };
        self.max_ts.fetch_max(ts, Ordering::AcqRel);
        let segments = max_vertex as usize / SEGMENT_VERTICES + 1;
        let mut starts = vec![0usize; segments + 1];
        for e in entries {
            starts[e.0 as usize / SEGMENT_VERTICES + 1] += 1;
        }
        for i in 0..segments {
            starts[i + 1] += starts[i];
        }
        let mut cursor = starts.clone();
        let mut grouped = vec![(0u32, 0u32, 0u32); entries.len()];
        for &e in entries {
            let bucket = &mut cursor[e.0 as usize / SEGMENT_VERTICES];
            grouped[*bucket] = e;
            *bucket += 1;
        }
        for index in 0..segments {
            let group = &grouped[starts[index]..starts[index + 1]];
            if group.is_empty() {
                continue;
            }
            let segment = self.segment_for_write(group[0].0);
            let mut segment = segment.write();
            let before = segment.size_bytes();
            for &(vertex, nbr, eid) in group {
                segment.append(vertex as usize % SEGMENT_VERTICES, ts, horizon, nbr, eid);
            }
            if segment.should_compact() {
                segment.compact(horizon);
            }
            self.account(before, segment.size_bytes());
        }
    }

    fn account(&self, before: usize, after: usize) {
        if after >= before {
            self.bytes.fetch_add(after - before, Ordering::Relaxed);
        } else {
            self.bytes.fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    /// Newest commit timestamp appended so far.
    pub fn max_ts(&self) -> Timestamp {
        self.max_ts.load(Ordering::Acquire)
    }

    /// A read latch on segment `index`, if it exists.
    pub fn read_segment(&self, index: usize) -> Option<SegmentReader> {
        let segment = self.segments.read().get(index).cloned()?;
        Some(SegmentReader {
            guard: segment.read_arc(),
        })
    }

    /// Every vertex's complete log in vertex order, for flushing a frozen memtable: a
    /// tombstone and the entry it deletes cancel out when both are in this memtable; a
    /// tombstone whose target is elsewhere (an older run) is kept.
    pub fn drain(&self) -> Vec<DrainedVertex> {
        let segments: Vec<_> = self.segments.read().clone();
        let mut out = Vec::new();
        for (index, segment) in segments.iter().enumerate() {
            let segment = segment.read();
            for (local, adj) in segment.touched() {
                let (nbr, eid, _) = segment.raw(segment.visible_in(local, adj, Timestamp::MAX));
                let (nbr, eid) = cancel_pairs(nbr, eid);
                if !nbr.is_empty() {
                    out.push(DrainedVertex {
                        vertex: (index * SEGMENT_VERTICES + local) as u32,
                        nbr,
                        eid,
                    });
                }
            }
        }
        out
    }

    /// Calls `f` with the (neighbour offsets, edge offsets) of `vertex`'s edges visible at `ts`.
    #[cfg(test)]
    pub fn visit(&self, vertex: u32, ts: Timestamp, f: &mut dyn FnMut(&[u32], &[u32])) {
        if let Some(segment) = self.segment(vertex) {
            segment
                .read()
                .visit(vertex as usize % SEGMENT_VERTICES, ts, f);
        }
    }

    /// Number of segments (each covers `SEGMENT_VERTICES` consecutive vertices).
    pub fn segment_count(&self) -> usize {
        self.segments.read().len()
    }

    /// Calls `f(vertex, neighbours, edge offsets)` for every vertex of segment `index` with
    /// visible edges for which `want(vertex)` holds, once per vertex, in vertex order. One read
    /// latch covers the whole segment; a vertex without visible tombstones is handed out as
    /// plain arena slices — the loop a static CSR runs.
    pub fn scan_segment(
        &self,
        index: usize,
        ts: Timestamp,
        want: impl Fn(u32) -> bool,
        mut f: impl FnMut(u32, &[u32], &[u32]),
    ) {
        let Some(segment) = self.segments.read().get(index).cloned() else {
            return;
        };
        let segment = segment.read();
        let base = (index * SEGMENT_VERTICES) as u32;
        if let (Some(offsets), true) = (&segment.csr_offsets, segment.max_ts <= ts) {
            for (local, w) in offsets.windows(2).enumerate() {
                let (v, range) = (base + local as u32, w[0] as usize..w[1] as usize);
                if !range.is_empty() && want(v) {
                    f(v, &segment.nbr[range.clone()], &segment.eid[range]);
                }
            }
            return;
        }
        for (local, adj) in segment.touched() {
            let v = base + local as u32;
            if !want(v) {
                continue;
            }
            let (nbr, eid, tombs) = segment.raw(segment.visible_in(local, adj, ts));
            if nbr.is_empty() {
                continue;
            }
            if !tombs {
                f(v, nbr, eid);
            } else {
                segment.visit(local, ts, &mut |nbrs, eids| {
                    if !nbrs.is_empty() {
                        f(v, nbrs, eids)
                    }
                });
            }
        }
    }

    /// Compacts every segment (see COMPACTION).
    pub fn compact(&self, horizon: Timestamp) {
        let segments: Vec<_> = self.segments.read().clone();
        for segment in segments {
            let mut segment = segment.write();
            let before = segment.size_bytes();
            segment.compact(horizon);
            self.account(before, segment.size_bytes());
        }
    }

    /// Entries in the logs (tombstones included), one segment latch at a time.
    pub fn entry_count(&self) -> usize {
        let segments: Vec<_> = self.segments.read().clone();
        segments.iter().map(|s| s.read().live_entries).sum()
    }

    /// Bytes held by the topology structures (arena capacity, vertex headers, history).
    pub fn size_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbours(adj: &Adjacency, v: u32, ts: Timestamp) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        adj.visit(v, ts, &mut |n, e| {
            out.extend(n.iter().copied().zip(e.iter().copied()))
        });
        out
    }

    #[test]
    fn readers_see_the_prefix_of_their_timestamp() {
        let adj = Adjacency::new();
        adj.append(3, 2, 0, 10, 0);
        adj.append(3, 2, 0, 11, 1);
        adj.append(3, 5, 0, 12, 2);
        adj.append(3, 9, 0, 10, TOMBSTONE_BIT);
        assert_eq!(neighbours(&adj, 3, 1), vec![]);
        assert_eq!(neighbours(&adj, 3, 4), vec![(10, 0), (11, 1)]);
        assert_eq!(neighbours(&adj, 3, 8), vec![(10, 0), (11, 1), (12, 2)]);
        assert_eq!(neighbours(&adj, 3, 9), vec![(11, 1), (12, 2)]);
    }

    #[test]
    fn compaction_preserves_every_snapshot_and_drops_dead_entries_below_horizon() {
        let adj = Adjacency::new();
        for i in 0..40u32 {
            adj.append(i % 3, u64::from(i) + 1, 0, i, i);
        }
        adj.append(1, 41, 0, 1, 1 | TOMBSTONE_BIT);
        let before: Vec<_> = (0..45).map(|ts| neighbours(&adj, 1, ts)).collect();
        adj.compact(0);
        let after: Vec<_> = (0..45).map(|ts| neighbours(&adj, 1, ts)).collect();
        assert_eq!(before, after);
        adj.compact(100);
        assert_eq!(neighbours(&adj, 1, 100), before[44]);
        let mut slices = 0;
        adj.visit(1, 100, &mut |_, _| slices += 1);
        assert_eq!(slices, 1, "one contiguous slice");
        let bytes_before = adj.size_bytes();
        adj.compact(100);
        assert!(adj.size_bytes() <= bytes_before);
    }

    #[test]
    fn scan_segment_visits_vertices_in_order() {
        let adj = Adjacency::new();
        adj.append(1030, 1, 0, 7, 0);
        adj.append(1025, 1, 0, 8, 1);
        let mut seen = Vec::new();
        adj.scan_segment(1, 1, |_| true, |v, n, _| seen.push((v, n.to_vec())));
        assert_eq!(seen, vec![(1025, vec![8]), (1030, vec![7])]);
        assert_eq!(adj.segment_count(), 2);
    }

    #[test]
    fn compacted_segments_scan_like_a_csr_until_the_next_append() {
        let adj = Adjacency::new();
        for i in 0..200u32 {
            adj.append(i % 7, u64::from(i / 10) + 1, 0, i, i);
        }
        let scan = |ts| {
            let mut seen = Vec::new();
            adj.scan_segment(0, ts, |_| true, |v, n, _| seen.push((v, n.to_vec())));
            seen
        };
        let before = scan(100);
        adj.compact(100);
        assert!(adj.segments.read()[0].read().csr_offsets.is_some());
        assert_eq!(scan(100), before);
        assert_eq!(scan(5), {
            let mut older = Vec::new();
            for v in 0..7 {
                adj.visit(v, 5, &mut |n, _| {
                    if !n.is_empty() {
                        older.push((v, n.to_vec()))
                    }
                });
            }
            older
        });
        adj.append(3, 101, 100, 999, 999);
        assert!(adj.segments.read()[0].read().csr_offsets.is_none());
        assert_eq!(
            scan(101).iter().find(|(v, _)| *v == 3).unwrap().1.last(),
            Some(&999)
        );
    }

    fn segment_bytes(adj: &Adjacency) -> Vec<usize> {
        let segments = adj.segments.read();
        segments.iter().map(|s| s.read().size_bytes()).collect()
    }

    #[test]
    fn segments_account_only_the_vertices_with_entries() {
        let adj = Adjacency::new();
        // Vertex 3000 creates segments 0..=2; only segment 2 gets entries.
        adj.append(3000, 1, 0, 7, 0);
        adj.append(3001, 1, 0, 8, 1);
        let bytes = segment_bytes(&adj);
        assert_eq!(
            bytes[..2],
            [SEGMENT_FIXED_BYTES; 2],
            "no entries, no tables"
        );
        // Both vertices are in one header group, whose smallest allocation holds 4 headers.
        let touched = SEGMENT_FIXED_BYTES
            + 4 * size_of::<VertexAdj>()
            + 2 * MIN_BLOCK_ENTRIES as usize * 2 * size_of::<u32>();
        assert_eq!(bytes[2], touched, "two headers and two blocks");
        assert!(
            bytes[2] < SEGMENT_VERTICES * size_of::<VertexAdj>() / 8,
            "far below a header per vertex"
        );
        assert_eq!(
            adj.size_bytes(),
            bytes.iter().sum::<usize>(),
            "accounting is exact"
        );
        // A vertex whose entries all cancel out below the horizon loses its header.
        adj.append(3002, 2, 1, 9, 2);
        adj.append(3002, 3, 2, 9, 2 | TOMBSTONE_BIT);
        adj.compact(3);
        assert_eq!(adj.segments.read()[2].read().touched().count(), 2);
        assert_eq!(neighbours(&adj, 3002, 3), vec![]);
        assert_eq!(adj.size_bytes(), segment_bytes(&adj).iter().sum::<usize>());
        adj.append(3002, 4, 3, 5, 3);
        assert_eq!(neighbours(&adj, 3002, 4), vec![(5, 3)]);
        assert_eq!(neighbours(&adj, 3000, 4), vec![(7, 0)]);
    }

    /// Sparse vertices of two segments, many versions each (a reader at 0 keeps them all),
    /// some deletes: every snapshot reads what a model says, before and after compactions.
    #[test]
    fn sparse_headers_read_every_snapshot() {
        const VERTICES: [u32; 4] = [3, 700, 1023, 1500];
        const COMMITS: u64 = 30;
        let adj = Adjacency::new();
        // expected[ts][i]: the visible (neighbour, edge) pairs of VERTICES[i] at ts.
        let mut expected = vec![vec![Vec::new(); VERTICES.len()]];
        let mut eid = 0u32;
        for ts in 1..=COMMITS {
            let mut next = expected.last().unwrap().clone();
            for (i, &v) in VERTICES.iter().enumerate() {
                if (ts + i as u64).is_multiple_of(3) {
                    continue;
                }
                let live: &mut Vec<(u32, u32)> = &mut next[i];
                if ts.is_multiple_of(4) && !live.is_empty() {
                    let (n, e) = live.remove(0);
                    adj.append(v, ts, 0, n, e | TOMBSTONE_BIT);
                } else {
                    adj.append(v, ts, 0, ts as u32, eid);
                    live.push((ts as u32, eid));
                    eid += 1;
                }
            }
            expected.push(next);
        }
        let check = |from_ts: u64, when: &str| {
            for ts in from_ts..=COMMITS {
                let mut scanned = vec![Vec::new(); VERTICES.len()];
                for segment in 0..adj.segment_count() {
                    adj.scan_segment(
                        segment,
                        ts,
                        |_| true,
                        |v, n, e| {
                            let i = VERTICES.iter().position(|w| *w == v).unwrap();
                            scanned[i].extend(n.iter().copied().zip(e.iter().copied()));
                        },
                    );
                }
                for (i, &v) in VERTICES.iter().enumerate() {
                    let want = &expected[ts as usize][i];
                    assert_eq!(&neighbours(&adj, v, ts), want, "{when}: v {v} at {ts}");
                    assert_eq!(&scanned[i], want, "{when}: scan of {v} at {ts}");
                }
            }
        };
        check(0, "appended");
        adj.compact(0);
        check(0, "compacted at horizon 0");
        adj.compact(COMMITS / 2);
        check(COMMITS / 2, "compacted at the middle");
        adj.compact(COMMITS);
        check(COMMITS, "compacted at the end");
        assert_eq!(neighbours(&adj, 4, COMMITS), vec![], "no header, no edges");
    }
}
