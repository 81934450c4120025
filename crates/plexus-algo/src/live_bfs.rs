//! BFS on a pinned snapshot, straight from its neighbour slices: no CSR is built.
//!
//! HOW A LEVEL READS THE SNAPSHOT
//! ==============================
//! [`GraphSnapshot`] reaches neighbours two ways. `for_each_neighbor_slice` reads one vertex:
//! the topology's state latch, a list of the runs and memtable segments that hold the vertex,
//! a segment latch — a few heap allocations and latches per call, several times the cost of
//! its edges on a sparse graph. `scan_segment` takes one latch for 1,024 consecutive vertices
//! and hands out plain slices, the static-CSR loop. A BFS level touches either a handful of
//! vertices (cheap either way) or a large share of the graph, so both kinds of level work
//! segment by segment, rayon over segments:
//!
//! - top-down: scan the segments of the forward sides (the projected graph's out-lists) that
//!   hold at least one frontier vertex — the segment's dense range tells, checked against the
//!   frontier bitmap before taking any latch — and expand the frontier vertices' slices,
//!   claiming unvisited targets with a compare-and-swap on `depth`;
//! - bottom-up: scan every segment of the backward sides (the projected graph's in-lists) and
//!   give each unvisited vertex the level at its first neighbour in the frontier; the rest of
//!   its slice is not read.
//!
//! Frontiers are bitmaps over dense ids in both kinds of level, so switching costs nothing.
//!
//! ```text
//!   level 1 (top-down):  frontier {s}      → scan s's segment only,   claim s's targets
//!   level 2 (bottom-up): frontier = 30k    → scan all in-segments,    stop at first parent
//!   level 5 (top-down):  frontier = 200    → scan ≤ 200 out-segments, claim targets
//! ```
//!
//! DIRECTION SWITCH
//! ================
//! Beamer's rule with the CSR kernel's constants ([`crate::bfs`]), counted as in the GAP
//! reference code: top-down → bottom-up when the frontier's out-edges exceed the unexplored
//! out-edges / ALPHA; back to top-down when the frontier has fewer than n / BETA vertices. The
//! snapshot has no O(1) degrees, and a pass reading every slice length up front costs about a
//! static BFS, so both sides of the rule are counted lazily:
//!
//! - unexplored out-edges start at the edge tables' capacities ([`GraphSnapshot::edge_capacity`],
//!   O(1), an upper bound: deleted edges and filtered edges included) and drop by the
//!   frontier's out-edges at each top-down level, as GAP's `edges_to_check`;
//! - the frontier's out-edges are counted after each top-down level, by a filtered scan of the
//!   segments holding its vertices ([`Search::out_edges`]: only frontier vertices are located).
//!   After a bottom-up level the next level is top-down without counting (GAP resets its
//!   `scout_count` the same way).
//!
//! The counts only steer the choice; depths are exact either way.
//!
//! INVARIANTS
//! ==========
//! - `depth[v]` goes from UNVISITED to its level once: by compare-and-swap in top-down levels;
//!   in bottom-up levels by the one task scanning `v`'s segment (sides are scanned one after
//!   another, and a segment is one task, so no other task writes `v` meanwhile).
//! - During a level the frontier is only read and the next frontier only gains bits; a vertex
//!   is in the next frontier exactly when this level wrote its depth.
//! - Depths are shortest hop counts, whichever way each level ran, so the result equals the
//!   CSR kernel's ([`crate::kernels::bfs`]) on the projection's CSR, vertex for vertex.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use plexus_txn::GraphSnapshot;
use plexus_types::VertexId;
use rayon::prelude::*;

use crate::bfs::{ALPHA, BETA, UNVISITED, depth_value};
use crate::projection::{AnalyticsError, Projection, Side, TableMap, VertexMap};

/// Hop depth from `source` along the projection's edges, in `VertexId` order.
pub(crate) fn bfs(
    snapshot: &GraphSnapshot,
    projection: &Projection,
    source: VertexId,
) -> Result<Vec<(VertexId, i64)>, AnalyticsError> {
    let vertices = VertexMap::select(snapshot, &projection.vertex_labels)?;
    let source = vertices.require(source)?;
    let n = vertices.vertex_count();
    let search = Search {
        snapshot,
        vertices: &vertices,
        forward: projection.sides(snapshot, &vertices, projection.direction)?,
        backward: projection.sides(snapshot, &vertices, projection.direction.reversed())?,
        depth: (0..n)
            .into_par_iter()
            .map(|_| AtomicU32::new(UNVISITED))
            .collect(),
    };
    search.run(source)?;
    Ok(vertices.pair_map(search.depth, |d| depth_value(d.into_inner())))
}

/// One traversal: the snapshot's sides in both directions and the depth of every vertex.
struct Search<'a> {
    snapshot: &'a GraphSnapshot,
    vertices: &'a VertexMap,
    /// Sides whose lists are the projected graph's out-lists (top-down levels).
    forward: Vec<Side>,
    /// Sides whose lists are its in-lists (bottom-up levels).
    backward: Vec<Side>,
    depth: Vec<AtomicU32>,
}

impl Search<'_> {
    /// Level by level from `source` until a level reaches nothing new.
    fn run(&self, source: u32) -> Result<(), AnalyticsError> {
        let n = self.depth.len() as u64;
        self.depth[source as usize].store(0, Ordering::Relaxed);
        let mut frontier = Bitmap::new(self.depth.len());
        frontier.insert(source);
        let mut frontier_vertices = 1;
        // The frontier's out-edges; unknown after a bottom-up level (see DIRECTION SWITCH).
        let mut frontier_out_edges = Some(self.out_edges(&frontier)?);
        let mut unexplored_out_edges = self.edge_capacity()?;
        let mut bottom_up = false;
        let mut level = 0u32;
        while frontier_vertices > 0 {
            bottom_up = if bottom_up {
                frontier_vertices >= n / BETA
            } else {
                frontier_out_edges.is_some_and(|m| m > unexplored_out_edges / ALPHA)
            };
            level += 1;
            frontier = if bottom_up {
                self.bottom_up(&frontier, level)?
            } else {
                unexplored_out_edges =
                    unexplored_out_edges.saturating_sub(frontier_out_edges.unwrap_or(0));
                self.top_down(&frontier, level)?
            };
            frontier_vertices = frontier.count();
            frontier_out_edges = if bottom_up || frontier_vertices == 0 {
                None
            } else {
                Some(self.out_edges(&frontier)?)
            };
        }
        Ok(())
    }

    /// Upper bound on the projected graph's out-edges: the capacities of the forward sides'
    /// edge tables.
    fn edge_capacity(&self) -> Result<u64, AnalyticsError> {
        self.forward.iter().try_fold(0u64, |sum, side| {
            Ok(sum + u64::from(self.snapshot.edge_capacity(side.table)?))
        })
    }

    /// The frontier's out-edges (slice lengths; under filters an upper bound).
    fn out_edges(&self, frontier: &Bitmap) -> Result<u64, AnalyticsError> {
        let total = AtomicU64::new(0);
        self.scan_frontier(frontier, |_, _, _, nbrs| {
            total.fetch_add(nbrs.len() as u64, Ordering::Relaxed);
        })?;
        Ok(total.into_inner())
    }

    /// Expand the frontier's out-slices; the vertices claimed at `level`.
    fn top_down(&self, frontier: &Bitmap, level: u32) -> Result<Bitmap, AnalyticsError> {
        let next = Bitmap::new(self.depth.len());
        self.scan_frontier(frontier, |side, to, v, nbrs| {
            for &u in nbrs {
                if let Some(du) = side.keep(to, v, u)
                    && self.claim(du, level)
                {
                    next.insert(du);
                }
            }
        })?;
        Ok(next)
    }

    /// Calls `f(side, neighbour map, vertex offset, slice)` for the forward slices of the
    /// frontier's vertices, in parallel over the segments that hold one (checked against the
    /// bitmap before any latch); no other vertex's entries are located.
    fn scan_frontier(
        &self,
        frontier: &Bitmap,
        f: impl Fn(&Side, &TableMap, u32, &[u32]) + Sync,
    ) -> Result<(), AnalyticsError> {
        for side in &self.forward {
            let (from, to) = side.maps(self.vertices);
            side.par_scan(self.snapshot, |segment| {
                if !frontier.any_in(from.dense_range(GraphSnapshot::segment_offsets(segment))) {
                    return Ok(());
                }
                let in_frontier = |v| from.dense(v).is_some_and(|dv| frontier.contains(dv));
                self.snapshot.scan_segment_where(
                    side.table,
                    side.outgoing,
                    segment,
                    in_frontier,
                    |v, nbrs| f(side, to, v, nbrs),
                )?;
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Give each unvisited vertex with an in-neighbour in the frontier the depth `level`.
    fn bottom_up(&self, frontier: &Bitmap, level: u32) -> Result<Bitmap, AnalyticsError> {
        let next = Bitmap::new(self.depth.len());
        for side in &self.backward {
            let (from, to) = side.maps(self.vertices);
            side.par_scan(self.snapshot, |segment| {
                let unvisited = |v| {
                    from.dense(v).is_some_and(|dv| {
                        self.depth[dv as usize].load(Ordering::Relaxed) == UNVISITED
                    })
                };
                self.snapshot.scan_segment_where(
                    side.table,
                    side.outgoing,
                    segment,
                    unvisited,
                    |v, nbrs| {
                        let Some(dv) = from.dense(v) else { return };
                        // This task alone writes `depth[dv]` now (see INVARIANTS); an earlier
                        // slice of `v` may have found its parent already.
                        let slot = &self.depth[dv as usize];
                        if slot.load(Ordering::Relaxed) != UNVISITED {
                            return;
                        }
                        let has_parent = nbrs
                            .iter()
                            .any(|&u| side.keep(to, v, u).is_some_and(|du| frontier.contains(du)));
                        if has_parent {
                            slot.store(level, Ordering::Relaxed);
                            next.insert(dv);
                        }
                    },
                )?;
                Ok(())
            })?;
        }
        Ok(next)
    }

    /// Claim `v` for `level`; false if another path reached it first.
    fn claim(&self, v: u32, level: u32) -> bool {
        let slot = &self.depth[v as usize];
        slot.load(Ordering::Relaxed) == UNVISITED
            && slot
                .compare_exchange(UNVISITED, level, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// One bit per dense vertex, set concurrently (relaxed `fetch_or`; rayon's joins order a
/// level's writes before the next level's reads).
struct Bitmap(Vec<AtomicU64>);

impl Bitmap {
    fn new(n: usize) -> Bitmap {
        Bitmap(
            (0..n.div_ceil(64))
                .into_par_iter()
                .map(|_| AtomicU64::new(0))
                .collect(),
        )
    }

    fn insert(&self, v: u32) {
        self.0[v as usize / 64].fetch_or(1 << (v % 64), Ordering::Relaxed);
    }

    fn contains(&self, v: u32) -> bool {
        self.0[v as usize / 64].load(Ordering::Relaxed) >> (v % 64) & 1 == 1
    }

    /// Whether any vertex of `range` is set.
    fn any_in(&self, range: Range<u32>) -> bool {
        if range.is_empty() {
            return false;
        }
        let (first, last) = (range.start as usize / 64, (range.end as usize - 1) / 64);
        (first..=last).any(|w| {
            let mut word = self.0[w].load(Ordering::Relaxed);
            if w == first {
                word &= u64::MAX << (range.start % 64);
            }
            if w == last {
                word &= u64::MAX >> (63 - (range.end - 1) % 64);
            }
            word != 0
        })
    }

    /// Vertices set.
    fn count(&self) -> u64 {
        self.0
            .par_iter()
            .map(|word| u64::from(word.load(Ordering::Relaxed).count_ones()))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_in_masks_partial_words() {
        let bitmap = Bitmap::new(200);
        bitmap.insert(70);
        assert!(bitmap.any_in(70..71));
        assert!(bitmap.any_in(0..200));
        assert!(bitmap.any_in(64..128));
        assert!(!bitmap.any_in(0..70));
        assert!(!bitmap.any_in(71..200));
        assert!(!bitmap.any_in(70..70));
        bitmap.insert(199);
        assert!(bitmap.any_in(128..200) && !bitmap.any_in(128..199));
    }

    #[test]
    fn count_counts_set_bits_across_words() {
        let bitmap = Bitmap::new(130);
        for v in [0, 63, 64, 129, 64] {
            bitmap.insert(v);
        }
        assert_eq!(bitmap.count(), 4);
        assert!(bitmap.contains(129) && !bitmap.contains(128));
    }
}
