//! Topology memtable: write-friendly, multi-versioned adjacency for one edge table and
//! direction.
//!
//! LAYOUT
//! ======
//! Vertices (by dense offset) are grouped into segments of `SEGMENT_VERTICES`. A segment owns
//! one arena of entries stored as two parallel arrays, `nbr` (neighbour offset) and `eid` (edge
//! offset, top bit = tombstone). A vertex's edges form an append-only *log* kept in one or more
//! blocks of that arena; each new block doubles the vertex's capacity, so appends are amortised
//! O(1) and neighbouring vertices' edges sit close together — no heap allocation per vertex.
//!
//! ```text
//!   segment arena   nbr: [ 5 9 7 . | 3 . . . | 5 2 8 4 ]      (. = free capacity)
//!   vertex 0: blocks [0..4) then [8..12), len 7  →  log 5 9 7 5 2 8 4
//!   vertex 1: blocks [4..8),              len 1  →  log 3
//! ```
//!
//! VISIBILITY (version tables)
//! ===========================
//! Each vertex keeps a version table of (commit ts, log length, tombstones in that prefix).
//! Entries are appended only when a commit installs, so the log holds committed edges only and a
//! reader at timestamp t reads the longest prefix committed at or before t:
//!
//! ```text
//!   versions [(3, len 2), (5, len 4), (9, len 6)]:  reader at 7 sees the first 4 entries
//! ```
//!
//! There is no timestamp per edge. A delete appends a tombstone entry (same neighbour, edge
//! offset with the top bit set); when the visible prefix has no tombstones — the common case —
//! a reader gets the raw block slices, exactly what a static CSR would hand out.
//!
//! COMPACTION
//! ==========
//! Compacting a segment rewrites its arena in vertex order with each vertex's log in one
//! contiguous block. Positions within a log are preserved, so version tables stay valid for
//! older readers; a vertex whose whole history is older than the GC horizon also drops its
//! tombstones and the edges they delete. Compaction runs automatically when the entries
//! appended since the last compaction reach the segment's size at that compaction (amortised
//! O(1) copies per edge) and can be forced.
//!
//! INVARIANTS
//! ==========
//! - Version timestamps of a vertex strictly increase; lengths and tombstone counts never
//!   decrease except when compaction drops dead entries, which happens only below the horizon.
//! - All blocks of a vertex but the last are full.
//! - Writers (the commit pipeline) hold the segment's write latch; readers hold its read latch
//!   for one vertex or one segment scan, never across calls.

use parking_lot::RwLock;
use plexus_types::Timestamp;
use std::sync::Arc;

pub const SEGMENT_VERTICES: usize = 1024;
const MIN_BLOCK_ENTRIES: u32 = 4;
pub const TOMBSTONE_BIT: u32 = 1 << 31;
/// Edge offsets must leave the tombstone bit free.
pub const MAX_EDGE_OFFSET: u32 = TOMBSTONE_BIT - 1;

#[derive(Clone, Copy, Default, Debug)]
struct Block {
    start: u32,
    cap: u32,
}

#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Version {
    ts: Timestamp,
    len: u32,
    tombs: u32,
}

#[derive(Default)]
struct Overflow {
    blocks: Vec<Block>,
    /// Older versions, ascending by timestamp.
    history: Vec<Version>,
}

#[derive(Default)]
struct VertexAdj {
    first: Block,
    newest: Version,
    overflow: Option<Box<Overflow>>,
}

impl VertexAdj {
    fn visible(&self, ts: Timestamp) -> Version {
        if self.newest.ts <= ts {
            return self.newest;
        }
        self.overflow
            .as_ref()
            .and_then(|o| o.history.iter().rev().find(|v| v.ts <= ts).copied())
            .unwrap_or_default()
    }

    fn blocks(&self) -> impl Iterator<Item = Block> + '_ {
        let extra = self.overflow.as_ref().map_or(&[][..], |o| &o.blocks[..]);
        std::iter::once(self.first).chain(extra.iter().copied())
    }

    fn capacity(&self) -> u32 {
        self.blocks().map(|b| b.cap).sum()
    }

    /// Calls `f` with the arena ranges holding the first `len` log entries.
    fn ranges(&self, mut len: u32, mut f: impl FnMut(usize, usize)) {
        for block in self.blocks() {
            if len == 0 {
                break;
            }
            let take = block.cap.min(len);
            f(block.start as usize, (block.start + take) as usize);
            len -= take;
        }
    }

    fn record_version(&mut self, ts: Timestamp, horizon: Timestamp) {
        if self.newest.ts == ts {
            return; // another entry of the same commit
        }
        debug_assert!(ts > self.newest.ts, "versions ascend");
        let previous = self.newest;
        self.newest.ts = ts;
        if previous.len > 0 {
            // A reader between `previous.ts` and `ts` needs the previous length.
            self.overflow
                .get_or_insert_with(Default::default)
                .history
                .push(previous);
        }
        self.prune_history(horizon);
    }

    /// Drops versions no reader at or after `horizon` can see.
    fn prune_history(&mut self, horizon: Timestamp) {
        let Some(overflow) = &mut self.overflow else {
            return;
        };
        if self.newest.ts <= horizon {
            overflow.history.clear();
        } else if let Some(keep_from) = overflow.history.iter().rposition(|v| v.ts <= horizon) {
            overflow.history.drain(..keep_from);
        }
    }
}

pub struct Segment {
    nbr: Vec<u32>,
    eid: Vec<u32>,
    vertices: Vec<VertexAdj>,
    live_entries: usize,
    appended_since_compaction: usize,
    size_at_compaction: usize,
    fragmented: bool,
}

impl Segment {
    fn new() -> Self {
        Self {
            nbr: Vec::new(),
            eid: Vec::new(),
            vertices: (0..SEGMENT_VERTICES)
                .map(|_| VertexAdj::default())
                .collect(),
            live_entries: 0,
            appended_since_compaction: 0,
            size_at_compaction: 0,
            fragmented: false,
        }
    }

    fn append(&mut self, local: usize, ts: Timestamp, horizon: Timestamp, nbr: u32, eid: u32) {
        let adj = &mut self.vertices[local];
        adj.record_version(ts, horizon);
        let len = adj.newest.len;
        let capacity = adj.capacity();
        if len == capacity {
            let cap = capacity.max(MIN_BLOCK_ENTRIES);
            let block = Block {
                start: u32::try_from(self.nbr.len()).expect("segment arena below 4 G entries"),
                cap,
            };
            self.nbr.resize(self.nbr.len() + cap as usize, 0);
            self.eid.resize(self.eid.len() + cap as usize, 0);
            if capacity == 0 {
                adj.first = block;
            } else {
                adj.overflow
                    .get_or_insert_with(Default::default)
                    .blocks
                    .push(block);
                self.fragmented = true;
            }
        }
        let mut position = len;
        let mut slot = None;
        for block in adj.blocks() {
            if position < block.cap {
                slot = Some((block.start + position) as usize);
                break;
            }
            position -= block.cap;
        }
        let slot = slot.expect("capacity was ensured");
        self.nbr[slot] = nbr;
        self.eid[slot] = eid;
        adj.newest.len += 1;
        if eid & TOMBSTONE_BIT != 0 {
            adj.newest.tombs += 1;
        }
        self.live_entries += 1;
        self.appended_since_compaction += 1;
    }

    fn should_compact(&self) -> bool {
        self.fragmented
            && self.appended_since_compaction >= self.size_at_compaction.max(SEGMENT_VERTICES)
    }

    fn compact(&mut self, horizon: Timestamp) {
        let mut nbr = Vec::with_capacity(self.live_entries);
        let mut eid = Vec::with_capacity(self.live_entries);
        for adj in &mut self.vertices {
            adj.prune_history(horizon);
            let start = nbr.len();
            let collapse = adj.newest.tombs > 0
                && adj.newest.ts <= horizon
                && adj.overflow.as_ref().is_none_or(|o| o.history.is_empty());
            if collapse {
                let mut dead = Vec::new();
                adj.ranges(adj.newest.len, |a, b| {
                    dead.extend(
                        self.eid[a..b]
                            .iter()
                            .filter(|e| *e & TOMBSTONE_BIT != 0)
                            .map(|e| e & !TOMBSTONE_BIT),
                    )
                });
                dead.sort_unstable();
                adj.ranges(adj.newest.len, |a, b| {
                    for i in a..b {
                        let e = self.eid[i];
                        if e & TOMBSTONE_BIT == 0 && dead.binary_search(&e).is_err() {
                            nbr.push(self.nbr[i]);
                            eid.push(e);
                        }
                    }
                });
                adj.newest.tombs = 0;
            } else {
                adj.ranges(adj.newest.len, |a, b| {
                    nbr.extend_from_slice(&self.nbr[a..b]);
                    eid.extend_from_slice(&self.eid[a..b]);
                });
            }
            let len = (nbr.len() - start) as u32;
            adj.newest.len = len;
            adj.first = Block {
                start: start as u32,
                cap: len,
            };
            if let Some(overflow) = &mut adj.overflow {
                overflow.blocks.clear();
                if overflow.history.is_empty() {
                    adj.overflow = None;
                }
            }
        }
        self.live_entries = nbr.len();
        self.nbr = nbr;
        self.eid = eid;
        self.size_at_compaction = self.live_entries;
        self.appended_since_compaction = 0;
        self.fragmented = false;
    }

    /// Calls `f` with the visible neighbour and edge slices of vertex `local` at `ts`.
    fn visit(&self, local: usize, ts: Timestamp, f: &mut dyn FnMut(&[u32], &[u32])) {
        let adj = &self.vertices[local];
        let version = adj.visible(ts);
        if version.tombs == 0 {
            adj.ranges(version.len, |a, b| f(&self.nbr[a..b], &self.eid[a..b]));
            return;
        }
        // Slow path: hide tombstones and the entries they delete.
        let mut dead = Vec::new();
        adj.ranges(version.len, |a, b| {
            dead.extend(
                self.eid[a..b]
                    .iter()
                    .filter(|e| *e & TOMBSTONE_BIT != 0)
                    .map(|e| e & !TOMBSTONE_BIT),
            )
        });
        dead.sort_unstable();
        let (mut nbrs, mut eids) = (Vec::new(), Vec::new());
        adj.ranges(version.len, |a, b| {
            for i in a..b {
                let e = self.eid[i];
                if e & TOMBSTONE_BIT == 0 && dead.binary_search(&e).is_err() {
                    nbrs.push(self.nbr[i]);
                    eids.push(e);
                }
            }
        });
        f(&nbrs, &eids);
    }

    fn size_bytes(&self) -> usize {
        let overflow: usize = self
            .vertices
            .iter()
            .filter_map(|v| v.overflow.as_ref())
            .map(|o| {
                size_of::<Overflow>()
                    + o.blocks.capacity() * size_of::<Block>()
                    + o.history.capacity() * size_of::<Version>()
            })
            .sum();
        (self.nbr.capacity() + self.eid.capacity()) * 4
            + self.vertices.capacity() * size_of::<VertexAdj>()
            + overflow
    }
}

/// The adjacency of one edge table in one direction. See the module documentation.
#[derive(Default)]
pub struct Adjacency {
    segments: RwLock<Vec<Arc<RwLock<Segment>>>>,
}

impl Adjacency {
    pub fn new() -> Self {
        Self::default()
    }

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
            segments.push(Arc::new(RwLock::new(Segment::new())));
        }
        segments[index].clone()
    }

    /// Appends an edge entry (or a tombstone, with `TOMBSTONE_BIT` set in `eid`) to `vertex`'s
    /// log as part of the commit at `ts`. Only the commit pipeline calls this.
    pub fn append(&self, vertex: u32, ts: Timestamp, horizon: Timestamp, nbr: u32, eid: u32) {
        let segment = self.segment_for_write(vertex);
        let mut segment = segment.write();
        segment.append(vertex as usize % SEGMENT_VERTICES, ts, horizon, nbr, eid);
        if segment.should_compact() {
            segment.compact(horizon);
        }
    }

    /// Calls `f` with contiguous (neighbour offsets, edge offsets) slices of `vertex`'s edges
    /// visible at `ts`; usually one call.
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

    /// Calls `f(vertex, neighbours)` for every vertex of segment `index` with visible edges.
    /// One read latch covers the whole segment.
    pub fn scan_segment(&self, index: usize, ts: Timestamp, f: &mut dyn FnMut(u32, &[u32])) {
        let Some(segment) = self.segments.read().get(index).cloned() else {
            return;
        };
        let segment = segment.read();
        let base = (index * SEGMENT_VERTICES) as u32;
        for local in 0..SEGMENT_VERTICES {
            segment.visit(local, ts, &mut |nbrs, _| {
                if !nbrs.is_empty() {
                    f(base + local as u32, nbrs)
                }
            });
        }
    }

    /// Compacts every segment (see COMPACTION).
    pub fn compact(&self, horizon: Timestamp) {
        let segments: Vec<_> = self.segments.read().clone();
        for segment in segments {
            let mut segment = segment.write();
            segment.compact(horizon);
        }
    }

    /// Bytes held by the topology structures (arena capacity, vertex headers, overflow).
    pub fn size_bytes(&self) -> usize {
        self.segments
            .read()
            .iter()
            .map(|s| s.read().size_bytes())
            .sum()
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
        assert_eq!(slices, 1, "one contiguous slice after compaction");
    }

    #[test]
    fn scan_segment_visits_vertices_in_order() {
        let adj = Adjacency::new();
        adj.append(1030, 1, 0, 7, 0);
        adj.append(1025, 1, 0, 8, 1);
        let mut seen = Vec::new();
        adj.scan_segment(1, 1, &mut |v, n| seen.push((v, n.to_vec())));
        assert_eq!(seen, vec![(1025, vec![8]), (1030, vec![7])]);
        assert_eq!(adj.segment_count(), 2);
    }
}
