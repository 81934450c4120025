//! Topology as a graph-aware LSM tree: memtables that freeze into CSR runs, merged by vertex
//! range under a leveling, tiering or elastic policy.
//!
//! COMPONENTS
//! ==========
//! The adjacency of one edge table in one direction ([`Topology`]) is made of, oldest first:
//!
//! ```text
//!   level-5 runs (the last level: at most one per vertex range, always leveled)
//!   level-4 … level-1 runs (per range; level 1 is where flushes land)
//!   frozen memtables (full, read-only, waiting to be flushed)
//!   the active memtable (receives commits)
//! ```
//!
//! Runs cover one vertex range of `lsm_range_vertices`. Within a range, every run at level
//! i+1 is older than every run at level i, and runs of one level are ordered by creation. A
//! reader visits the components holding a vertex in that order; a tombstone in a newer
//! component hides the entry it deletes in an older one. After merges the common case is one
//! run slice per vertex — the static-CSR loop.
//!
//! Flushes and merges write runs with `Config::run_packing`: neighbours delta/bit-packed when
//! it pays (see `run`, NEIGHBOUR PACKING). Readers hand a raw run's slices out of the mapping
//! and a packed run's neighbours decoded into a [`Scratch`] per run read (per vertex read, scan
//! or merge), so callers see plain slices either way.
//!
//! VISIBILITY ACROSS FLUSHES AND MERGES (file snapshots)
//! =====================================================
//! Runs have no per-entry versions. Instead every component carries an interval of read
//! timestamps `[visible_from, hidden_from)` for which it is part of the graph:
//!
//! - a run flushed from a frozen memtable whose newest commit is `F` is visible from `F`; the
//!   memtable is hidden from `F` — readers older than `F` keep reading the (versioned)
//!   memtable, newer ones read the run;
//! - a merge output is visible from the newest `visible_from` of its inputs, and the inputs are
//!   hidden from then on.
//!
//! So a reader at any timestamp sees exactly one copy of every entry, before, during and after
//! flushes and merges, without pinning anything. Hidden components are dropped (and their
//! files deleted) once the GC horizon passes their `hidden_from`: no reader can need them.
//!
//! MERGE POLICIES (per vertex range and level; T = `lsm_tier_runs`)
//! ==================================================================
//! - **tiering**: a level holding T runs of a range merges them into one run one level down
//!   (into the last level together with the run already there). Each entry is rewritten about
//!   once per level: the least write amplification, more runs to read.
//! - **leveling**: level 1 (where flushes land) tiers as above, like an LSM's L0, and its T runs
//!   are merged together with the level-2 run; from level 2 down a level holds one run per
//!   range, and when it outgrows `T^(level-1) × max(lsm_level1_bytes, T × the range's latest
//!   flush)` it is merged into the next level's run. Sizing levels from the flush size keeps
//!   each level T times the one above, so an entry is rewritten about T/2 times per level
//!   however small flushes are. Few runs to read, more rewriting.
//! - **elastic**: per range and level, behaves leveled when `w * tombstone_ratio + (1 - w) *
//!   read_ratio >= bound` (tombstones among that level's entries; entries read in the range
//!   among those read + that level's entries, halved at each merge of the range) and tiered otherwise:
//!   read-heavy or delete-heavy ranges get compact, write-heavy ones cheap.
//! - **read-driven collapse** (leveling and elastic): once the entries read in a range since its
//!   last merge cover all its entries, all its runs merge into one at its deepest level — the
//!   rewrite costs about one more read of the range, and one run scans fastest.
//! - **read-driven flush** (elastic): once scans have read a topology's entries twice over
//!   since its active memtable last received a commit ([`Topology::read_heavy_memtable`]),
//!   the maintenance round freezes and flushes that memtable if it holds at least 1/16 of
//!   `memtable_budget_bytes` (smaller ones cost scans little, and would make tiny runs). A memtable's
//!   entries are handed out per vertex beside the runs', in insertion order; in runs they are
//!   sorted and contiguous, and a range of one run is handed out directly. A graph loaded and
//!   then analysed so reaches the run layout after its first passes. Any commit restarts the
//!   count: under steady writes a flush would scatter small runs over every range the writes
//!   touched, and the read-driven collapse would then rewrite those ranges whole at the next
//!   pass (measured: PageRank under a single-edge writer went from 2.2 s to 8.5 s when the
//!   count ignored commits).
//!
//! PROPERTY COLUMNS
//! ================
//! Flushes and merges also write the edges' declared integer/float properties as columns
//! beside the destinations (see `run`), read from the row tables as of a *capture* timestamp
//! `prop_ts` at which every commit is installed. A run has no property versions, so a reader
//! may use a run's column only when no property of an existing edge of the table changed
//! in between. Each edge table keeps `U`, the newest timestamp of such a change (`SET`/`REMOVE`
//! on an edge; creating or deleting an edge is not one: creation writes the value a run
//! captures, deletion leaves it in the row). A reader at `R` uses a run's column iff
//!
//! ```text
//!   U <= R  and  U <= prop_ts
//! ```
//!
//! Then every change happened before both `R` and `prop_ts`, so the value at `prop_ts` is the
//! value at `R` for every entry the reader sees. Otherwise (and for memtable entries) the
//! reader reads the row table at `R`. `U` is read after the reader took the topology's state
//! lock, and a run is published only after its values were read, which were read after every
//! commit up to `prop_ts` was installed — so `U` covers every change up to `prop_ts`.
//! A merge copies its inputs' values when each input's column is still current (`prop_ts >=
//! U`) — the output's `prop_ts` is then the oldest input's — and re-reads the rows otherwise.
//! After a property update, runs written before it fall back to row reads until merged.
//!
//! A merge takes runs that are consecutive in age. Tombstones cancel with the entries they
//! delete inside the merge; when no older run of the range remains outside it, every tombstone
//! goes (garbage collection happens here). Cascading merges are bounded per round.
//!
//! FILES
//! =====
//! This file holds the components' types and `Topology`'s reads and scans; `reads` the read
//! accounting; `merge` the per-vertex merge of components; `flush` the flushes and bulk-load
//! runs; `compaction` the merge policies, merges and retirement; `tests` the tests.

use crate::run::{self, ColumnData, ColumnKind, ColumnSlice, Run, RunMeta, RunVertex, Scratch};
use crate::topology::{Adjacency, SEGMENT_VERTICES, SegmentReader, TOMBSTONE_BIT};
use crate::vfs::Vfs;
use parking_lot::RwLock;
use plexus_types::{Config, MergePolicy, Result, Timestamp};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

mod compaction;
mod flush;
mod merge;
mod reads;
#[cfg(test)]
mod tests;

pub use flush::BULK_GROUP_ENTRIES;
use merge::{Listing, Parts, current_columns, merge_listings, merge_vertices, sort_entries};
use reads::{READ_TALLY, RangeCounters, ReadCounters, flush_read_tally};
/// `hidden_from` of a component nothing has replaced.
pub const NEVER: Timestamp = Timestamp::MAX;
/// Flushes write runs at this level.
const TIER_LEVEL: u8 = 1;
/// The last level: unbounded, always leveled.
pub const MAX_LEVEL: u8 = 5;
/// Bound on cascading merges run by one `merge` call.
const MAX_MERGES_PER_ROUND: usize = 64;
/// Full passes over a topology's entries that make its active memtable read-heavy.
const READ_FLUSH_PASSES: u64 = 2;

/// One merge: every listed run of one range into a run at `output_level`.
struct MergePlan {
    range: u32,
    inputs: Vec<u64>,
    output_level: u8,
}

struct Frozen {
    memtable: Arc<Adjacency>,
    hidden_from: Timestamp,
}

#[derive(Clone)]
pub struct RunEntry {
    pub run: Arc<Run>,
    pub seq: u64,
    pub visible_from: Timestamp,
    pub hidden_from: Timestamp,
}

impl RunEntry {
    fn visible_at(&self, ts: Timestamp) -> bool {
        self.visible_from <= ts && ts < self.hidden_from
    }

    fn current(&self) -> bool {
        self.hidden_from == NEVER
    }

    fn range(&self, range_vertices: u32) -> u32 {
        self.run.meta.vertex_lo / range_vertices
    }
}

struct State {
    active: Arc<Adjacency>,
    /// Oldest first.
    frozen: Vec<Frozen>,
    /// Read order: level 2 before level 1; within a level, by `seq` (flush/merge order).
    runs: Vec<RunEntry>,
    /// Every commit up to this timestamp is in runs (WAL replay skips it for this topology).
    flushed_ts: Timestamp,
}

/// Byte counters for write amplification.
#[derive(Default)]
pub struct LsmStats {
    pub flushed_bytes: AtomicU64,
    /// Level-1 runs written by flushes (one per frozen memtable and range with entries).
    pub flushed_runs: AtomicU64,
    pub merged_bytes: AtomicU64,
}

/// What flushes and merges need from the storage around them: run file names, and the edge
/// property values of the run columns (see PROPERTY COLUMNS).
pub trait RunContext {
    fn next_run(&self) -> (u64, String);

    /// A timestamp at which every commit up to it is installed in the row tables.
    fn capture_ts(&self) -> Timestamp;

    /// `U` of edge table `table`: the newest change of a property of an existing edge.
    fn prop_updated_ts(&self, table: u32) -> Timestamp;

    /// The property columns of edge table `table` for the edges `eids` (in entry order; an
    /// entry with the tombstone bit gets null), values as of `ts`.
    fn capture(&self, table: u32, eids: &[u32], ts: Timestamp) -> Result<Vec<ColumnData>>;
}

/// A scan's request for a property column beside the entries: the property key and the edge
/// table's `U` (see PROPERTY COLUMNS).
#[derive(Clone, Copy)]
pub struct ColumnRequest<'a> {
    pub key: u32,
    pub updated_ts: &'a AtomicU64,
}

/// See the module documentation.
pub struct Topology {
    pub edge_table: u32,
    pub outgoing: bool,
    /// Vertices per run range (`Config::lsm_range_vertices`).
    range_vertices: u32,
    state: RwLock<State>,
    /// What readers read here (counted through their threads' tallies, see `ReadTally`).
    reads: Arc<ReadCounters>,
    /// Bytes of each range's latest flush run.
    flush_bytes: RangeCounters,
}

impl Topology {
    pub fn new(edge_table: u32, outgoing: bool, range_vertices: u32) -> Self {
        Self::recovered(edge_table, outgoing, range_vertices, Vec::new(), 0)
    }

    /// A topology whose runs were listed in the manifest (visible to every reader).
    pub fn recovered(
        edge_table: u32,
        outgoing: bool,
        range_vertices: u32,
        runs: Vec<(Arc<Run>, u64)>,
        flushed_ts: Timestamp,
    ) -> Self {
        assert!(
            range_vertices > 0 && range_vertices.is_multiple_of(SEGMENT_VERTICES as u32),
            "run ranges are whole segments"
        );
        let mut runs: Vec<RunEntry> = runs
            .into_iter()
            .map(|(run, seq)| RunEntry {
                run,
                seq,
                visible_from: 0,
                hidden_from: NEVER,
            })
            .collect();
        sort_runs(&mut runs);
        Self {
            edge_table,
            outgoing,
            range_vertices,
            state: RwLock::new(State {
                active: Arc::new(Adjacency::new()),
                frozen: Vec::new(),
                runs,
                flushed_ts,
            }),
            reads: Arc::default(),
            flush_bytes: RangeCounters::default(),
        }
    }

    pub fn flushed_ts(&self) -> Timestamp {
        self.state.read().flushed_ts
    }

    /// Installs a commit's entries into the active memtable (commit pipeline only).
    pub fn install(&self, entries: &[(u32, u32, u32)], ts: Timestamp, horizon: Timestamp) {
        self.state.read().active.append_batch(entries, ts, horizon);
        self.reads.since_write.store(0, Ordering::Relaxed);
    }

    /// Bytes held in memtables (active and frozen).
    pub fn memtable_bytes(&self) -> usize {
        let state = self.state.read();
        state.active.size_bytes()
            + state
                .frozen
                .iter()
                .map(|f| f.memtable.size_bytes())
                .sum::<usize>()
    }

    /// Bytes held in the active memtable.
    pub fn active_bytes(&self) -> usize {
        self.state.read().active.size_bytes()
    }

    /// Bytes held in frozen memtables.
    pub fn frozen_bytes(&self) -> usize {
        self.state
            .read()
            .frozen
            .iter()
            .filter(|f| f.hidden_from == NEVER)
            .map(|f| f.memtable.size_bytes())
            .sum()
    }

    /// Bytes of the current runs on disk.
    pub fn run_bytes(&self) -> usize {
        self.state
            .read()
            .runs
            .iter()
            .filter(|r| r.current())
            .map(|r| r.run.size_bytes())
            .sum()
    }

    /// Freezes the active memtable if it holds anything (call under the commit lock, so no
    /// install can land in it afterwards).
    pub fn freeze(&self) {
        let mut state = self.state.write();
        if state.active.max_ts() == 0 {
            return;
        }
        let memtable = std::mem::replace(&mut state.active, Arc::new(Adjacency::new()));
        state.frozen.push(Frozen {
            memtable,
            hidden_from: NEVER,
        });
    }

    /// Vertices covered: one past the highest vertex of any component, in segments.
    pub fn segment_count(&self) -> usize {
        let state = self.state.read();
        let runs = state
            .runs
            .iter()
            .map(|r| (r.run.meta.vertex_hi as usize).div_ceil(SEGMENT_VERTICES));
        let memtables =
            std::iter::once(&state.active).chain(state.frozen.iter().map(|f| &f.memtable));
        runs.chain(memtables.map(|m| m.segment_count()))
            .max()
            .unwrap_or(0)
    }

    fn readers(state: &State, segment: usize, ts: Timestamp) -> Vec<SegmentReader> {
        state
            .frozen
            .iter()
            .filter(|f| ts < f.hidden_from)
            .map(|f| &f.memtable)
            .chain(std::iter::once(&state.active))
            .filter_map(|m| m.read_segment(segment))
            .collect()
    }

    /// `v`'s parts, oldest component first (`scratch`: one per run, for packed runs).
    fn gather<'a>(
        runs: &[&'a RunEntry],
        scratch: &'a mut [Scratch],
        readers: &'a [SegmentReader],
        v: u32,
        ts: Timestamp,
    ) -> Parts<'a> {
        let mut parts = Parts {
            slices: Vec::with_capacity(runs.len() + readers.len()),
            tombstones: false,
        };
        for (entry, scratch) in runs.iter().zip(scratch) {
            let (nbr, eid) = entry.run.entries(v, scratch);
            parts.push((nbr, eid, None), entry.run.meta.tombstones > 0);
        }
        for reader in readers {
            let (nbr, eid, tombs) = reader.raw(v as usize % SEGMENT_VERTICES, ts);
            parts.push((nbr, eid, None), tombs);
        }
        parts
    }

    /// Calls `f` with `v`'s visible (neighbours, edge offsets) at `ts`, possibly in several
    /// slices (oldest first).
    pub fn visit(&self, v: u32, ts: Timestamp, f: &mut dyn FnMut(&[u32], &[u32])) {
        let state = self.state.read();
        let runs: Vec<&RunEntry> = state
            .runs
            .iter()
            .filter(|r| r.visible_at(ts) && r.run.contains_vertex(v))
            .collect();
        let readers = Self::readers(&state, v as usize / SEGMENT_VERTICES, ts);
        Scratch::with_many(runs.len(), |scratch| {
            Self::gather(&runs, scratch, &readers, v, ts).emit(&mut |nbr, eid, _| f(nbr, eid))
        });
    }

    /// Records `n` entries read at vertex `v`'s range (elastic policy input; a vertex read
    /// that finds no entries counts as one).
    pub fn note_read(&self, v: u32, n: u64) {
        let range = (v / self.range_vertices) as usize;
        let tallied = READ_TALLY.try_with(|tally| tally.borrow_mut().add(&self.reads, range, n));
        if tallied.is_err() {
            self.reads.add(range, n); // the thread is exiting: its tally is gone
        }
    }

    /// Whether the active memtable holds at least `min_bytes` and scans have read this
    /// topology's entries `READ_FLUSH_PASSES` times over since its last commit (see MERGE
    /// POLICIES, read-driven flush).
    pub fn read_heavy_memtable(&self, min_bytes: usize) -> bool {
        flush_read_tally();
        let state = self.state.read();
        if state.active.max_ts() == 0 || state.active.size_bytes() < min_bytes {
            return false;
        }
        let reads = self.reads.since_write.load(Ordering::Relaxed);
        let run_entries: u64 = state
            .runs
            .iter()
            .filter(|r| r.current())
            .map(|r| r.run.meta.entries)
            .sum();
        let enough = |entries: u64| reads >= READ_FLUSH_PASSES.saturating_mul(entries);
        // Counting the memtable's entries latches its segments: only when runs alone pass.
        enough(run_entries) && enough(run_entries + state.active.entry_count() as u64)
    }

    /// Calls `f(vertex, neighbours, edge offsets)` for every vertex of segment `index` with
    /// visible edges for which `want(vertex)` holds, possibly several times per vertex (one
    /// slice per component, oldest first). `want` lets a caller skip vertices before any of
    /// their entries are located.
    #[cfg(test)]
    pub fn scan_segment(
        &self,
        index: usize,
        ts: Timestamp,
        want: impl Fn(u32) -> bool,
        mut f: impl FnMut(u32, &[u32], &[u32]),
    ) {
        self.scan_segment_with(index, ts, want, None, |v, nbr, eid, _| f(v, nbr, eid));
    }

    /// [`scan_segment`](Self::scan_segment), also handing out each slice's values of the
    /// requested property column where a run holds them and the reader may use them (see
    /// PROPERTY COLUMNS); `None` for the other slices, whose values the caller reads from the
    /// row table.
    pub fn scan_segment_with(
        &self,
        index: usize,
        ts: Timestamp,
        want: impl Fn(u32) -> bool,
        column: Option<ColumnRequest<'_>>,
        mut f: impl FnMut(u32, &[u32], &[u32], Option<ColumnSlice<'_>>),
    ) {
        let state = self.state.read();
        let lo = (index * SEGMENT_VERTICES) as u32;
        let hi = lo + SEGMENT_VERTICES as u32;
        let runs: Vec<&RunEntry> = state
            .runs
            .iter()
            .filter(|r| r.visible_at(ts) && r.run.meta.vertex_lo < hi && lo < r.run.meta.vertex_hi)
            .collect();
        let frozen_visible = state.frozen.iter().any(|f| ts < f.hidden_from);
        if runs.is_empty() && !frozen_visible {
            return state
                .active
                .scan_segment(index, ts, want, |v, nbr, eid| f(v, nbr, eid, None));
        }
        // Read under the state lock: see PROPERTY COLUMNS for why that makes `U` cover every
        // run in `runs`.
        let updated_ts = column.map(|c| c.updated_ts.load(Ordering::Acquire));
        let usable_column = |run: &Run| match (column, updated_ts) {
            (Some(c), Some(u)) if u <= ts && u <= run.meta.prop_ts => run.column(c.key),
            _ => None,
        };
        let readers = Self::readers(&state, index, ts);
        if let ([only], []) = (&runs[..], &readers[..])
            && only.run.meta.tombstones == 0
        {
            let values = usable_column(&only.run);
            return Scratch::with_many(1, |scratch| {
                only.run
                    .scan_range(lo, hi, &want, values, &mut scratch[0], &mut f)
            });
        }
        // Each component lists its vertices in order with one sequential walk; the lists are
        // then merged by vertex. No per-vertex lookups (bitmap rank, header search).
        Scratch::with_many(runs.len(), |scratch| {
            let mut listings: Vec<Listing> = Vec::with_capacity(runs.len() + readers.len());
            for (entry, scratch) in runs.iter().zip(scratch.iter_mut()) {
                let tombstones = entry.run.meta.tombstones > 0;
                let mut listing = Vec::new();
                let values = usable_column(&entry.run);
                entry.run.scan_range(
                    lo,
                    hi,
                    &want,
                    values,
                    scratch,
                    &mut |v, nbr, eid, values| listing.push((v, (nbr, eid, values), tombstones)),
                );
                listings.push(listing);
            }
            for reader in &readers {
                let mut listing = Vec::new();
                reader.scan_raw(lo, ts, &want, &mut |v, nbr, eid, tombstones| {
                    listing.push((v, (nbr, eid, None), tombstones))
                });
                listings.push(listing);
            }
            merge_listings(&listings, &mut |v, parts| {
                parts.emit(&mut |nbr, eid, values| f(v, nbr, eid, values))
            });
        });
    }

    /// Edge offsets of the visible edges `src -> dst` at `ts`; the bloom filters and source
    /// bitmaps let it skip runs that cannot hold the pair.
    pub fn edges_between(&self, src: u32, dst: u32, ts: Timestamp) -> Vec<u32> {
        let state = self.state.read();
        let runs: Vec<&RunEntry> = state
            .runs
            .iter()
            .filter(|r| {
                r.visible_at(ts)
                    && r.run.contains_vertex(src)
                    && (r.run.meta.tombstones > 0 || r.run.may_contain_edge(src, dst))
            })
            .collect();
        let readers = Self::readers(&state, src as usize / SEGMENT_VERTICES, ts);
        let mut found = Vec::new();
        Scratch::with_many(runs.len(), |scratch| {
            Self::gather(&runs, scratch, &readers, src, ts).emit(&mut |nbr, eid, _| {
                found.extend(
                    nbr.iter()
                        .zip(eid)
                        .filter(|(n, _)| **n == dst)
                        .map(|(_, e)| *e),
                )
            })
        });
        found
    }

    /// Compacts the memtables (see `topology`).
    pub fn compact_memtables(&self, horizon: Timestamp) {
        let state = self.state.read();
        state.active.compact(horizon);
        for f in &state.frozen {
            f.memtable.compact(horizon);
        }
    }
}

fn sort_runs(runs: &mut [RunEntry]) {
    runs.sort_by_key(|r| (std::cmp::Reverse(r.run.meta.level), r.seq));
}
