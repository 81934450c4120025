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

use crate::run::{self, ColumnData, ColumnKind, ColumnSlice, Run, RunMeta, RunVertex, Scratch};
use crate::topology::{Adjacency, SEGMENT_VERTICES, SegmentReader, TOMBSTONE_BIT};
use crate::vfs::Vfs;
use parking_lot::RwLock;
use plexus_types::{Config, MergePolicy, Result, Timestamp};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Entries a thread's read tally gathers before it adds them to the shared counters.
const READ_TALLY_FLUSH_ENTRIES: u64 = 1 << 16;

/// The read counters of one topology: the elastic policy's and the read-driven flush's input.
#[derive(Default)]
struct ReadCounters {
    /// Entries read per range since the range's last merge.
    ranges: RangeCounters,
    /// Entries scans read (all components) since the active memtable last received a commit.
    since_write: AtomicU64,
}

impl ReadCounters {
    fn add(&self, range: usize, n: u64) {
        self.ranges.add(range, n);
        self.since_write.fetch_add(n, Ordering::Relaxed);
    }
}

/// Reads one thread has counted and not yet added to the shared [`ReadCounters`]. Every
/// vertex an expand reads is counted; adding each to the shared counters wrote their cache
/// lines from every worker of a parallel statement, and those lines bounced between the cores
/// (`docs/benchmarks.md`, "Expand-heavy parallel Cypher"). The tally moves to the counters
/// when the thread reads another topology or range, when it holds
/// [`READ_TALLY_FLUSH_ENTRIES`], before a merge or read-driven flush decision on this thread
/// (`flush_read_tally`: inline maintenance sees its own reads exactly), and when the thread
/// exits. Other threads' decisions may miss up to that many entries per reading thread — they
/// are heuristics.
#[derive(Default)]
struct ReadTally {
    counters: Option<Arc<ReadCounters>>,
    range: usize,
    entries: u64,
}

impl ReadTally {
    fn add(&mut self, counters: &Arc<ReadCounters>, range: usize, n: u64) {
        let same = self.range == range
            && (self.counters.as_ref()).is_some_and(|c| Arc::ptr_eq(c, counters));
        if !same {
            self.flush();
            self.counters = Some(counters.clone());
            self.range = range;
        }
        self.entries += n;
        if self.entries >= READ_TALLY_FLUSH_ENTRIES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some(counters) = &self.counters
            && self.entries > 0
        {
            counters.add(self.range, self.entries);
        }
        self.entries = 0;
    }
}

impl Drop for ReadTally {
    fn drop(&mut self) {
        self.flush();
    }
}

thread_local! {
    static READ_TALLY: std::cell::RefCell<ReadTally> = std::cell::RefCell::default();
}

/// Adds this thread's read tally to its counters (see [`ReadTally`]).
fn flush_read_tally() {
    let _ = READ_TALLY.try_with(|tally| tally.borrow_mut().flush());
}

/// One counter per vertex range: entries read since the range's last merge (elastic policy
/// input; the writes are the entries of the range's level-1 runs), or the size of the range's
/// latest flush (sizes the leveled levels).
#[derive(Default)]
struct RangeCounters {
    counts: RwLock<Vec<AtomicU64>>,
}

impl RangeCounters {
    fn add(&self, range: usize, n: u64) {
        if let Some(c) = self.counts.read().get(range) {
            c.fetch_add(n, Ordering::Relaxed);
            return;
        }
        let mut counts = self.counts.write();
        while counts.len() <= range {
            counts.push(AtomicU64::new(0));
        }
        counts[range].fetch_add(n, Ordering::Relaxed);
    }

    fn get(&self, range: usize) -> u64 {
        self.counts
            .read()
            .get(range)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    fn reset(&self, range: usize) {
        if let Some(c) = self.counts.read().get(range) {
            c.store(0, Ordering::Relaxed);
        }
    }

    fn halve(&self, range: usize) {
        if let Some(c) = self.counts.read().get(range) {
            let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n / 2));
        }
    }

    fn set(&self, range: usize, n: u64) {
        self.reset(range);
        self.add(range, n);
    }
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

/// One slice of a vertex's entries handed to a scan: neighbours, edge offsets, and the
/// values of the requested property column when the slice comes from a run whose column the
/// reader may use.
type Slice<'a> = (&'a [u32], &'a [u32], Option<ColumnSlice<'a>>);

/// Receives one slice: neighbours, edge offsets, column values.
type SliceFn<'f> = dyn FnMut(&[u32], &[u32], Option<ColumnSlice<'_>>) + 'f;

/// One vertex's parts across components, oldest first, and whether any holds a tombstone.
struct Parts<'a> {
    slices: Vec<Slice<'a>>,
    tombstones: bool,
}

impl<'a> Parts<'a> {
    fn push(&mut self, slice: Slice<'a>, may_have_tombstones: bool) {
        let (nbr, eid, _) = slice;
        if nbr.is_empty() {
            return;
        }
        self.tombstones |= may_have_tombstones && eid.iter().any(|e| e & TOMBSTONE_BIT != 0);
        self.slices.push(slice);
    }

    /// Calls `f` with the visible entries: the slices themselves when nothing is deleted
    /// (else one merged slice, without column values).
    fn emit(&self, f: &mut SliceFn<'_>) {
        if !self.tombstones {
            for &(nbr, eid, values) in &self.slices {
                f(nbr, eid, values);
            }
            return;
        }
        let (nbr, eid) = merge_live(self.slices.iter().map(|&(n, e, _)| (n, e)));
        if !nbr.is_empty() {
            f(&nbr, &eid, None);
        }
    }
}

/// One component's entries in a segment, in vertex order: (vertex, slice, whether it may
/// hold a tombstone).
type Listing<'a> = Vec<(u32, Slice<'a>, bool)>;
/// Most entries a bulk load's run writing sorts at once (see
/// [`Topology::write_bulk_runs`]): 8 bytes each, 32 MiB.
pub const BULK_GROUP_ENTRIES: usize = 1 << 22;
/// Calls its argument with every `(vertex, neighbour, edge offset)` of a bulk load's
/// topology (see [`Topology::write_bulk_runs`]).
pub type BulkEntries<'a> = dyn Fn(&mut dyn FnMut(u32, u32, u32)) + 'a;

/// Calls `f(vertex, parts)` for every vertex in any listing, in vertex order, with its parts
/// in listing order (listings are given oldest component first).
fn merge_listings<'a>(listings: &[Listing<'a>], f: &mut impl FnMut(u32, &Parts<'a>)) {
    let mut cursors = vec![0usize; listings.len()];
    let mut parts = Parts {
        slices: Vec::with_capacity(listings.len()),
        tombstones: false,
    };
    let head = |listing: &Listing<'a>, cursor: usize| listing.get(cursor).map(|entry| entry.0);
    while let Some(v) = listings
        .iter()
        .zip(&cursors)
        .filter_map(|(listing, &cursor)| head(listing, cursor))
        .min()
    {
        parts.slices.clear();
        parts.tombstones = false;
        for (listing, cursor) in listings.iter().zip(cursors.iter_mut()) {
            if let Some(&(w, slice, tombstones)) = listing.get(*cursor)
                && w == v
            {
                parts.push(slice, tombstones);
                *cursor += 1;
            }
        }
        f(v, &parts);
    }
    debug_assert!(cursors.iter().zip(listings).all(|(c, l)| *c == l.len()));
}

/// The property columns (key, kind) every merge input carries, when all carry the same
/// non-empty list and all are current (`prop_ts >= U`, see PROPERTY COLUMNS); `None`: the
/// merge re-reads the values from the rows.
fn current_columns(inputs: &[RunEntry], updated_ts: Timestamp) -> Option<Vec<(u32, ColumnKind)>> {
    let first = inputs.first()?.run.columns();
    let current = !first.is_empty()
        && inputs
            .iter()
            .all(|e| e.run.columns() == first && e.run.meta.prop_ts >= updated_ts);
    current.then(|| first.to_vec())
}

/// Sorts one vertex's run entries by (neighbour, edge offset): a run's neighbour lists come
/// out sorted, so projections that need sorted lists (CSR builds) skip sorting vertices held
/// by one run. Entry order carries no meaning (tombstones name edge offsets).
fn sort_entries(nbr: &mut Vec<u32>, eid: &mut Vec<u32>) {
    let sorted = (1..nbr.len()).all(|i| (nbr[i - 1], eid[i - 1]) <= (nbr[i], eid[i]));
    if sorted {
        return;
    }
    let mut pairs: Vec<(u32, u32)> = nbr.iter().copied().zip(eid.iter().copied()).collect();
    pairs.sort_unstable();
    (*nbr, *eid) = pairs.into_iter().unzip();
}

/// Appends to `columns` the values of vertex `v`'s `kept` entries (edge offsets, unique within
/// a vertex's merged entries), found among the inputs' entries. Every part's run carries
/// `columns`, in the same order.
fn copy_values(columns: &mut [ColumnData], parts: &[(&[u32], &[u32], &Run)], v: u32, kept: &[u32]) {
    if columns.is_empty() {
        return;
    }
    let sources: Vec<Vec<ColumnSlice>> = parts
        .iter()
        .map(|(_, _, run)| {
            (0..columns.len())
                .map(|c| run.column_entries(c, v))
                .collect()
        })
        .collect();
    // (edge offset, part, position), sorted for lookups by edge offset.
    let mut positions: Vec<(u32, usize, usize)> = parts
        .iter()
        .enumerate()
        .flat_map(|(p, (_, eid, _))| eid.iter().enumerate().map(move |(i, &e)| (e, p, i)))
        .collect();
    positions.sort_unstable();
    for &e in kept {
        let at = positions.partition_point(|&(x, _, _)| x < e);
        let (found, p, i) = positions[at];
        assert_eq!(found, e, "merged entries come from the inputs");
        for (column, slice) in columns.iter_mut().zip(&sources[p]) {
            column.push_from(slice, i);
        }
    }
}

/// Concatenates slices (oldest first), cancelling each tombstone with the entry it deletes
/// when both are present; tombstones for older runs are kept.
fn concat_cancelling(slices: &[(&[u32], &[u32])]) -> (Vec<u32>, Vec<u32>) {
    let nbr: Vec<u32> = slices.iter().flat_map(|(n, _)| n.iter().copied()).collect();
    let eid: Vec<u32> = slices.iter().flat_map(|(_, e)| e.iter().copied()).collect();
    crate::topology::cancel_pairs(&nbr, &eid)
}

/// Concatenates slices (oldest first) and removes tombstones and the entries they delete.
fn merge_live<'a>(
    slices: impl Iterator<Item = (&'a [u32], &'a [u32])> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut dead: Vec<u32> = slices
        .clone()
        .flat_map(|(_, eid)| {
            eid.iter()
                .filter(|e| *e & TOMBSTONE_BIT != 0)
                .map(|e| e & !TOMBSTONE_BIT)
        })
        .collect();
    dead.sort_unstable();
    let mut out = (Vec::new(), Vec::new());
    for (nbr, eid) in slices {
        for (n, e) in nbr.iter().zip(eid) {
            if e & TOMBSTONE_BIT == 0 && dead.binary_search(e).is_err() {
                out.0.push(*n);
                out.1.push(*e);
            }
        }
    }
    out
}

/// The merged entries of every vertex of `range` held by `inputs` (oldest first), sorted per
/// vertex: tombstones dropped with the entries they delete (`drop_tombstones`) or cancelled
/// only against them; `columns` (copied from the inputs, possibly none) receive the values.
fn merge_vertices(
    inputs: &[RunEntry],
    (lo, hi): (u32, u32),
    drop_tombstones: bool,
    columns: &mut [ColumnData],
) -> Vec<(u32, Vec<u32>, Vec<u32>)> {
    Scratch::with_many(inputs.len(), |scratch| {
        merge_vertices_with(inputs, (lo, hi), drop_tombstones, columns, scratch)
    })
}

/// [`merge_vertices`] with a scratch per input.
fn merge_vertices_with(
    inputs: &[RunEntry],
    (lo, hi): (u32, u32),
    drop_tombstones: bool,
    columns: &mut [ColumnData],
    scratch: &mut [Scratch],
) -> Vec<(u32, Vec<u32>, Vec<u32>)> {
    let mut merged = Vec::new();
    for v in lo..hi {
        let parts: Vec<(&[u32], &[u32], &Run)> = inputs
            .iter()
            .zip(scratch.iter_mut())
            .map(|(e, scratch)| {
                let (nbr, eid) = e.run.entries(v, scratch);
                (nbr, eid, &*e.run)
            })
            .filter(|(nbr, _, _)| !nbr.is_empty())
            .collect();
        if parts.is_empty() {
            continue;
        }
        let slices: Vec<(&[u32], &[u32])> = parts.iter().map(|p| (p.0, p.1)).collect();
        let (mut nbr, mut eid) = if drop_tombstones {
            merge_live(slices.iter().copied())
        } else {
            concat_cancelling(&slices)
        };
        if !nbr.is_empty() {
            sort_entries(&mut nbr, &mut eid);
            copy_values(columns, &parts, v, &eid);
            merged.push((v, nbr, eid));
        }
    }
    merged
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

    /// Flushes the oldest frozen memtable that is not yet flushed into level-1 runs (one per
    /// range with entries, packed per `config.run_packing`). Returns whether there was one.
    pub fn flush_one(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        stats: &LsmStats,
    ) -> Result<bool> {
        let Some(memtable) = self
            .state
            .read()
            .frozen
            .iter()
            .find(|f| f.hidden_from == NEVER)
            .map(|f| f.memtable.clone())
        else {
            return Ok(false);
        };
        let max_ts = memtable.max_ts();
        let mut drained = memtable.drain();
        for d in &mut drained {
            sort_entries(&mut d.nbr, &mut d.eid);
        }
        let mut new_runs = Vec::new();
        let range = self.range_vertices;
        let mut start = 0;
        while start < drained.len() {
            let r = drained[start].vertex / range;
            let end = start
                + drained[start..]
                    .iter()
                    .take_while(|d| d.vertex / range == r)
                    .count();
            let vertices: Vec<RunVertex> = drained[start..end]
                .iter()
                .map(|d| (d.vertex, &d.nbr[..], &d.eid[..]))
                .collect();
            let (seq, name) = ctx.next_run();
            let mut meta = self.meta(TIER_LEVEL, r * range, (r + 1) * range, 0, max_ts);
            let written = self.write_captured(vfs, ctx, config, &name, &mut meta, &vertices)?;
            stats.flushed_bytes.fetch_add(written, Ordering::Relaxed);
            stats.flushed_runs.fetch_add(1, Ordering::Relaxed);
            self.flush_bytes.set(r as usize, written);
            new_runs.push(RunEntry {
                run: Arc::new(Run::open(vfs, &name)?),
                seq,
                visible_from: max_ts,
                hidden_from: NEVER,
            });
            start = end;
        }
        let mut state = self.state.write();
        state.runs.extend(new_runs);
        sort_runs(&mut state.runs);
        if let Some(f) = state
            .frozen
            .iter_mut()
            .find(|f| Arc::ptr_eq(&f.memtable, &memtable))
        {
            f.hidden_from = max_ts;
        }
        state.flushed_ts = state.flushed_ts.max(max_ts);
        Ok(true)
    }

    /// Writes the adjacency of a bulk load (see `store::bulk`) straight into run files,
    /// without a memtable: `entries` visits `(vertex, neighbour, edge offset)` in any order
    /// (the same ones at each call), all created at `ts`, whose rows are installed. A visitor
    /// rather than a list: the load's staged edges are read where they are, with no 12-byte
    /// entry per edge and direction.
    ///
    /// One visit counts each vertex's entries; then the vertex ranges are taken in groups of
    /// at most `group_entries` entries ([`BULK_GROUP_ENTRIES`] for a load; a range larger
    /// than that alone), and for each
    /// group one more visit fills its CSR arrays by a counting sort, each vertex's list is
    /// sorted by (neighbour, edge offset) as a flush sorts it, and every range with entries
    /// gets one run — at the last level when the topology holds no run yet (a load into an
    /// empty table lands in the layout a full merge would produce), at level 1 like a flush
    /// otherwise. Memory: 4 bytes per vertex plus the largest group's arrays, not 8 bytes
    /// per entry of the whole table. The runs are not readable until
    /// [`publish_bulk`](Self::publish_bulk).
    pub fn write_bulk_runs(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        entries: &BulkEntries<'_>,
        (ts, group_entries): (Timestamp, usize),
    ) -> Result<Vec<RunEntry>> {
        let mut degree: Vec<u32> = Vec::new();
        entries(&mut |v, _, _| {
            let v = v as usize;
            if v >= degree.len() {
                degree.resize(v + 1, 0);
            }
            degree[v] += 1;
        });
        if degree.is_empty() {
            return Ok(Vec::new());
        }
        let level = if self.state.read().runs.is_empty() {
            MAX_LEVEL
        } else {
            TIER_LEVEL
        };
        let range = self.range_vertices as usize;
        let range_entries: Vec<usize> = (degree.chunks(range))
            .map(|d| d.iter().map(|&d| d as usize).sum())
            .collect();
        let ranges = range_entries.len();
        let mut written = Vec::new();
        let mut r = 0;
        while r < ranges {
            // the group: ranges r..end
            let (mut end, mut total) = (r, 0usize);
            while end < ranges && (end == r || total + range_entries[end] <= group_entries) {
                total += range_entries[end];
                end += 1;
            }
            let (lo_vertex, hi_vertex) = (r * range, (end * range).min(degree.len()));
            self.write_bulk_group(
                vfs,
                ctx,
                config,
                entries,
                (&degree, lo_vertex, hi_vertex, total),
                (level, ts),
                &mut written,
            )?;
            r = end;
        }
        Ok(written)
    }

    /// One group of [`write_bulk_runs`](Self::write_bulk_runs): vertices `lo..hi` holding
    /// `total` entries.
    #[allow(clippy::too_many_arguments)]
    fn write_bulk_group(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        entries: &BulkEntries<'_>,
        (degree, lo, hi, total): (&[u32], usize, usize, usize),
        (level, ts): (u8, Timestamp),
        written: &mut Vec<RunEntry>,
    ) -> Result<()> {
        // Counting sort: start[v - lo]..start[v - lo + 1] is vertex v's slice.
        let mut start = Vec::with_capacity(hi - lo + 1);
        start.push(0usize);
        for v in lo..hi {
            start.push(start[v - lo] + degree[v] as usize);
        }
        let mut fill = start.clone();
        let (mut nbr, mut eid) = (vec![0u32; total], vec![0u32; total]);
        entries(&mut |v, n, e| {
            let v = v as usize;
            if (lo..hi).contains(&v) {
                let at = &mut fill[v - lo];
                (nbr[*at], eid[*at]) = (n, e);
                *at += 1;
            }
        });
        assert_eq!(
            fill[hi - lo - 1],
            total,
            "a bulk load's entries changed between visits"
        );
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for i in 0..hi - lo {
            let (a, b) = (start[i], start[i + 1]);
            if b - a > 1 {
                pairs.clear();
                pairs.extend(nbr[a..b].iter().copied().zip(eid[a..b].iter().copied()));
                pairs.sort_unstable();
                for (j, &(n, e)) in pairs.iter().enumerate() {
                    (nbr[a + j], eid[a + j]) = (n, e);
                }
            }
        }
        let range = self.range_vertices;
        for r in (lo as u32 / range)..(hi as u32).div_ceil(range) {
            let vertices: Vec<RunVertex> = (r * range..((r + 1) * range).min(hi as u32))
                .filter(|&v| degree[v as usize] > 0)
                .map(|v| {
                    let i = v as usize - lo;
                    let (a, b) = (start[i], start[i + 1]);
                    (v, &nbr[a..b], &eid[a..b])
                })
                .collect();
            if vertices.is_empty() {
                continue;
            }
            let (seq, name) = ctx.next_run();
            let mut meta = self.meta(level, r * range, (r + 1) * range, ts, ts);
            // The caller installed the rows first: the capture timestamp is `ts`.
            self.write_captured(vfs, ctx, config, &name, &mut meta, &vertices)?;
            written.push(RunEntry {
                run: Arc::new(Run::open(vfs, &name)?),
                seq,
                visible_from: ts,
                hidden_from: NEVER,
            });
        }
        Ok(())
    }

    /// Makes runs from [`write_bulk_runs`](Self::write_bulk_runs) part of the topology, visible
    /// from their load's `ts`, and records that every commit up to `ts` is in runs. The caller
    /// flushed every memtable before the load (its commits are in runs already) and holds the
    /// storage's LSM lock, so no manifest lists the runs before the load's checkpoint does.
    pub fn publish_bulk(&self, runs: Vec<RunEntry>, ts: Timestamp) {
        let mut state = self.state.write();
        assert!(
            state.frozen.iter().all(|f| f.hidden_from != NEVER),
            "a bulk load publishes only after every memtable was flushed"
        );
        state.runs.extend(runs);
        sort_runs(&mut state.runs);
        state.flushed_ts = state.flushed_ts.max(ts);
    }

    /// Writes run `name` with property columns read from the rows as of a fresh capture
    /// timestamp (see PROPERTY COLUMNS).
    fn write_captured(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        name: &str,
        meta: &mut RunMeta,
        vertices: &[RunVertex<'_>],
    ) -> Result<u64> {
        let prop_ts = ctx.capture_ts();
        let eids: Vec<u32> = vertices
            .iter()
            .flat_map(|(_, _, eid)| eid.iter().copied())
            .collect();
        let columns = ctx.capture(self.edge_table, &eids, prop_ts)?;
        meta.prop_ts = if columns.is_empty() { 0 } else { prop_ts };
        run::write_run(vfs, name, meta, vertices, &columns, config.run_packing)
    }

    fn meta(&self, level: u8, lo: u32, hi: u32, min_ts: Timestamp, max_ts: Timestamp) -> RunMeta {
        RunMeta {
            edge_table: self.edge_table,
            outgoing: self.outgoing,
            level,
            vertex_lo: lo,
            vertex_hi: hi,
            entries: 0,
            tombstones: 0,
            min_ts,
            max_ts,
            prop_ts: 0,
            packed: false,
        }
    }

    /// Whether `runs` (one level of one range) should behave leveled under the policy.
    fn leveled(&self, config: &Config, range: u32, runs: &[&RunEntry]) -> bool {
        match config.merge_policy {
            MergePolicy::Leveling => true,
            MergePolicy::Tiering => false,
            MergePolicy::Elastic => {
                let entries: u64 = runs.iter().map(|e| e.run.meta.entries).sum();
                let tombstones: u64 = runs.iter().map(|e| e.run.meta.tombstones).sum();
                let tombstone_ratio = if entries == 0 {
                    0.0
                } else {
                    tombstones as f64 / entries as f64
                };
                let reads = self.reads.ranges.get(range as usize) as f64;
                let read_ratio = if reads == 0.0 {
                    0.0
                } else {
                    reads / (reads + entries as f64)
                };
                config.elastic_weight * tombstone_ratio + (1.0 - config.elastic_weight) * read_ratio
                    >= config.elastic_bound
            }
        }
    }

    /// What a leveled `level` of `range` holds before it is pushed down:
    /// `T^(level-1) × max(lsm_level1_bytes, T × latest flush)`. Level 1 collects T flushes, so
    /// each level is T times the one above whatever the flush size — with a fixed base, small
    /// flushes (memtables spread over many vertices) would each rewrite a level many times
    /// their size.
    fn level_capacity_bytes(&self, config: &Config, range: u32, level: u8) -> u64 {
        let fanout = config.lsm_tier_runs.max(2) as u64;
        let flushed = self.flush_bytes.get(range as usize);
        let level1 = config.lsm_level1_bytes.max(fanout.saturating_mul(flushed));
        level1.saturating_mul(fanout.saturating_pow(u32::from(level) - 1))
    }

    /// Under leveling and elastic merging, every run of `range` merged into one at its deepest
    /// level, once the entries read in the range since its last merge cover the range's
    /// entries: the rewrite costs about what one more read of the range does, and a range of
    /// one run scans fastest (its slices are handed out directly).
    fn collapse(&self, config: &Config, range: u32, runs: &[&RunEntry]) -> Option<MergePlan> {
        if config.merge_policy == MergePolicy::Tiering || runs.len() < 2 {
            return None;
        }
        let entries: u64 = runs.iter().map(|r| r.run.meta.entries).sum();
        if self.reads.ranges.get(range as usize) < entries.max(1) {
            return None;
        }
        Some(MergePlan {
            range,
            inputs: runs.iter().map(|r| r.seq).collect(),
            output_level: runs.iter().map(|r| r.run.meta.level).max()?,
        })
    }

    /// The next merge the policy asks for, if any (see MERGE POLICIES).
    fn next_merge(&self, config: &Config) -> Option<MergePlan> {
        let state = self.state.read();
        let current: Vec<&RunEntry> = state.runs.iter().filter(|r| r.current()).collect();
        let mut ranges: Vec<u32> = current
            .iter()
            .map(|r| r.range(self.range_vertices))
            .collect();
        ranges.sort_unstable();
        ranges.dedup();
        let fanout = config.lsm_tier_runs.max(2);
        for range in ranges {
            let at = |level: u8| -> Vec<&RunEntry> {
                current
                    .iter()
                    .copied()
                    .filter(|r| r.range(self.range_vertices) == range && r.run.meta.level == level)
                    .collect()
            };
            let of_range: Vec<&RunEntry> = current
                .iter()
                .copied()
                .filter(|r| r.range(self.range_vertices) == range)
                .collect();
            if let Some(plan) = self.collapse(config, range, &of_range) {
                return Some(plan);
            }
            for level in 1..=MAX_LEVEL {
                let here = at(level);
                if here.is_empty() {
                    continue;
                }
                let plan = |inputs: Vec<&RunEntry>, output_level: u8| {
                    Some(MergePlan {
                        range,
                        inputs: inputs.iter().map(|r| r.seq).collect(),
                        output_level,
                    })
                };
                if level == MAX_LEVEL {
                    // The last level is always leveled.
                    if here.len() > 1 {
                        return plan(here, MAX_LEVEL);
                    }
                    continue;
                }
                // Flushes land at level 1, which tiers under leveling too (like an LSM's L0):
                // merging every flush into one level-1 run would rewrite it per flush.
                let tier_level_one =
                    level == TIER_LEVEL && config.merge_policy == MergePolicy::Leveling;
                if !tier_level_one && self.leveled(config, range, &here) {
                    if here.len() > 1 {
                        return plan(here, level);
                    }
                    let bytes: u64 = here.iter().map(|r| r.run.size_bytes() as u64).sum();
                    if bytes > self.level_capacity_bytes(config, range, level) {
                        let mut inputs = here;
                        inputs.extend(at(level + 1));
                        return plan(inputs, level + 1);
                    }
                } else if here.len() >= fanout {
                    // Into a leveled next level directly, rather than landing beside its run
                    // and rewriting the level a second time in a same-level merge.
                    let next = at(level + 1);
                    let next_leveled = level + 1 == MAX_LEVEL
                        || (!next.is_empty() && self.leveled(config, range, &next));
                    let mut inputs = here;
                    if next_leveled {
                        inputs.extend(next);
                    }
                    return plan(inputs, level + 1);
                }
            }
        }
        None
    }

    /// Runs the merges the policy asks for (cascading, at most `MAX_MERGES_PER_ROUND`).
    /// Returns whether anything was merged.
    pub fn merge(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        stats: &LsmStats,
    ) -> Result<bool> {
        flush_read_tally();
        let mut merged = false;
        for _ in 0..MAX_MERGES_PER_ROUND {
            let Some(plan) = self.next_merge(config) else {
                break;
            };
            self.execute(vfs, ctx, config, stats, &plan)?;
            // Halved rather than cleared: a read-heavy range keeps its history through the
            // merges of one level, so its deeper levels get leveled too.
            self.reads.ranges.halve(plan.range as usize);
            merged = true;
        }
        Ok(merged)
    }

    /// Merges the plan's input runs (consecutive in age) into one run at the output level.
    /// Tombstones and the entries they delete cancel out; when no older run of the range
    /// remains outside the inputs, every tombstone is dropped (garbage collection).
    fn execute(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        stats: &LsmStats,
        plan: &MergePlan,
    ) -> Result<()> {
        let range = self.range_vertices;
        let (inputs, deepest_outside) = {
            let state = self.state.read();
            let mut inputs: Vec<RunEntry> = state
                .runs
                .iter()
                .filter(|e| e.current() && plan.inputs.contains(&e.seq))
                .cloned()
                .collect();
            sort_runs(&mut inputs);
            let deepest_outside = state
                .runs
                .iter()
                .filter(|e| {
                    e.current() && e.range(range) == plan.range && !plan.inputs.contains(&e.seq)
                })
                .map(|e| e.run.meta.level)
                .max();
            (inputs, deepest_outside)
        };
        let drop_tombstones = deepest_outside.is_none_or(|level| level < plan.output_level);
        let (lo, hi) = (plan.range * range, (plan.range + 1) * range);
        // Copy the inputs' property values when they are all still current, else re-read.
        let copied = current_columns(&inputs, ctx.prop_updated_ts(self.edge_table));
        let mut columns: Vec<ColumnData> = copied
            .iter()
            .flatten()
            .map(|&(key, kind)| ColumnData::new(key, kind, 0))
            .collect();
        let merged = merge_vertices(&inputs, (lo, hi), drop_tombstones, &mut columns);
        let visible_from = inputs.iter().map(|e| e.visible_from).max().unwrap_or(0);
        let min_ts = inputs.iter().map(|e| e.run.meta.min_ts).min().unwrap_or(0);
        let max_ts = inputs.iter().map(|e| e.run.meta.max_ts).max().unwrap_or(0);
        let (seq, name) = ctx.next_run();
        let mut meta = self.meta(plan.output_level, lo, hi, min_ts, max_ts);
        let vertices: Vec<RunVertex> = merged
            .iter()
            .map(|(v, n, e)| (*v, &n[..], &e[..]))
            .collect();
        let written = match copied {
            Some(_) => {
                meta.prop_ts = match columns.is_empty() {
                    true => 0,
                    false => inputs.iter().map(|e| e.run.meta.prop_ts).min().unwrap_or(0),
                };
                run::write_run(
                    vfs,
                    &name,
                    &mut meta,
                    &vertices,
                    &columns,
                    config.run_packing,
                )?
            }
            None => self.write_captured(vfs, ctx, config, &name, &mut meta, &vertices)?,
        };
        stats.merged_bytes.fetch_add(written, Ordering::Relaxed);
        let output = RunEntry {
            run: Arc::new(Run::open(vfs, &name)?),
            seq,
            visible_from,
            hidden_from: NEVER,
        };
        let mut state = self.state.write();
        for entry in state.runs.iter_mut() {
            if plan.inputs.contains(&entry.seq) {
                entry.hidden_from = visible_from;
            }
        }
        state.runs.push(output);
        sort_runs(&mut state.runs);
        Ok(())
    }

    /// Drops components no reader at or after `horizon` can see; returns the run files to
    /// delete (the caller deletes them after the manifest stopped listing them).
    pub fn retire(&self, horizon: Timestamp) -> Vec<String> {
        let mut state = self.state.write();
        state.frozen.retain(|f| f.hidden_from > horizon);
        let mut retired = Vec::new();
        state.runs.retain(|r| {
            let keep = r.hidden_from > horizon;
            if !keep {
                retired.push(r.run.name.clone());
            }
            keep
        });
        retired
    }

    /// The current runs (what the manifest lists): (file name, seq).
    pub fn current_runs(&self) -> Vec<(String, u64)> {
        self.state
            .read()
            .runs
            .iter()
            .filter(|r| r.current())
            .map(|r| (r.run.name.clone(), r.seq))
            .collect()
    }

    /// (current runs, runs of any age still held) — for tests.
    #[cfg(test)]
    pub fn run_counts(&self) -> (usize, usize) {
        let state = self.state.read();
        (
            state.runs.iter().filter(|r| r.current()).count(),
            state.runs.len(),
        )
    }
}

fn sort_runs(runs: &mut [RunEntry]) {
    runs.sort_by_key(|r| (std::cmp::Reverse(r.run.meta.level), r.seq));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultVfs;
    use parking_lot::Mutex;
    use plexus_types::RunPacking;

    /// Run names, and a model of one float property (key `WEIGHT`) for the run columns.
    #[derive(Default)]
    struct Names {
        seq: Mutex<u64>,
        /// Per edge offset: (timestamp, weight) versions, oldest first.
        weights: Mutex<std::collections::HashMap<u32, Vec<(Timestamp, f64)>>>,
        installed: AtomicU64,
        updated: AtomicU64,
    }

    const WEIGHT: u32 = 7;

    impl Names {
        /// Edge `eid` created (first weight) or re-weighted at `ts`.
        fn set_weight(&self, eid: u32, ts: Timestamp, weight: f64, update: bool) {
            self.weights
                .lock()
                .entry(eid)
                .or_default()
                .push((ts, weight));
            self.installed.store(ts, Ordering::Release);
            if update {
                self.updated.store(ts, Ordering::Release);
            }
        }

        fn weight_at(&self, eid: u32, ts: Timestamp) -> Option<f64> {
            let weights = self.weights.lock();
            let versions = weights.get(&(eid & !TOMBSTONE_BIT))?;
            versions.iter().rev().find(|(at, _)| *at <= ts).map(|v| v.1)
        }
    }

    impl RunContext for Names {
        fn next_run(&self) -> (u64, String) {
            let mut n = self.seq.lock();
            *n += 1;
            (*n, format!("run-{n}.run"))
        }

        fn capture_ts(&self) -> Timestamp {
            self.installed.load(Ordering::Acquire)
        }

        fn prop_updated_ts(&self, _table: u32) -> Timestamp {
            self.updated.load(Ordering::Acquire)
        }

        fn capture(&self, _table: u32, eids: &[u32], ts: Timestamp) -> Result<Vec<ColumnData>> {
            let mut column = ColumnData::new(WEIGHT, ColumnKind::Float64, eids.len());
            for &e in eids {
                let weight = (e & TOMBSTONE_BIT == 0)
                    .then(|| self.weight_at(e, ts))
                    .flatten();
                column.push(weight.map(plexus_types::Value::Float).as_ref());
            }
            Ok(vec![column])
        }
    }

    fn config(policy: MergePolicy) -> Config {
        Config {
            merge_policy: policy,
            lsm_range_vertices: 1024,
            lsm_tier_runs: 3,
            lsm_level1_bytes: 100,
            ..Config::default()
        }
    }

    /// A bulk load's runs are the same whether its entries are sorted in one group or in
    /// groups of a few ranges (the grouping bounds memory, nothing else).
    #[test]
    fn bulk_runs_are_the_same_in_any_grouping() {
        let config = config(MergePolicy::Leveling);
        let entries: Vec<(u32, u32, u32)> = (0..5_000u32)
            .map(|i| ((i * 7919) % 4_000, (i * 104_729) % 4_000, i))
            .collect();
        let visit = |f: &mut dyn FnMut(u32, u32, u32)| {
            entries.iter().for_each(|&(v, n, e)| f(v, n, e));
        };
        let ts = 5;
        let mut answers = Vec::new();
        for group_entries in [usize::MAX, 1_300, 1] {
            let (vfs, names) = (FaultVfs::new(), Names::default());
            names.installed.store(ts, Ordering::Release);
            let t = Topology::new(0, true, 1024);
            let runs = t
                .write_bulk_runs(&vfs, &names, &config, &visit, (ts, group_entries))
                .expect("runs");
            assert_eq!(runs.len(), 4, "one run per range of 1024 vertices");
            t.publish_bulk(runs, ts);
            let adjacency: Vec<Vec<(u32, u32)>> =
                (0..4_000).map(|v| neighbours(&t, v, ts)).collect();
            assert!(adjacency.iter().all(|n| n.is_sorted()));
            assert_eq!(adjacency.iter().map(Vec::len).sum::<usize>(), entries.len());
            answers.push(adjacency);
        }
        assert_eq!(answers[0], answers[1]);
        assert_eq!(answers[0], answers[2]);
    }

    fn neighbours(t: &Topology, v: u32, ts: Timestamp) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        t.visit(v, ts, &mut |n, e| {
            out.extend(n.iter().copied().zip(e.iter().copied()))
        });
        out
    }

    #[test]
    fn every_snapshot_reads_the_same_across_flushes_merges_and_retirement() {
        let policies = [
            MergePolicy::Leveling,
            MergePolicy::Tiering,
            MergePolicy::Elastic,
        ];
        let packings = [RunPacking::Never, RunPacking::Always];
        for (policy, packing) in policies.into_iter().flat_map(|p| packings.map(|k| (p, k))) {
            let (vfs, names, stats, config) = (
                FaultVfs::new(),
                Names::default(),
                LsmStats::default(),
                Config {
                    run_packing: packing,
                    ..config(policy)
                },
            );
            let t = Topology::new(0, true, 1024);
            let mut expected: Vec<Vec<Vec<(u32, u32)>>> = Vec::new(); // [ts][v]
            let mut eid = 0;
            for ts in 1..=40u64 {
                let mut entries = Vec::new();
                for v in [1u32, 700, 1500] {
                    entries.push((v, ts as u32, eid));
                    eid += 1;
                }
                if ts % 5 == 0 {
                    entries.push((700, 0, ((ts as u32 - 3) * 3 + 1) | TOMBSTONE_BIT)); // delete an older edge of 700
                }
                t.install(&entries, ts, 0);
                expected.push(
                    [1, 700, 1500]
                        .iter()
                        .map(|&v| neighbours(&t, v, ts))
                        .collect(),
                );
                if ts % 4 == 0 {
                    t.freeze();
                    t.flush_one(&vfs, &names, &config, &stats).unwrap();
                    t.merge(&vfs, &names, &config, &stats).unwrap();
                }
                for (i, want) in expected.iter().enumerate() {
                    let got: Vec<_> = [1, 700, 1500]
                        .iter()
                        .map(|&v| neighbours(&t, v, i as u64 + 1))
                        .collect();
                    assert_eq!(
                        &got,
                        want,
                        "{policy:?}: snapshot at ts {} after commit {ts}",
                        i + 1
                    );
                }
            }
            // With every reader past everything, old components go and reads stay the same.
            let retired = t.retire(1000);
            assert!(!retired.is_empty(), "{policy:?}: merged inputs are retired");
            let last: Vec<_> = [1, 700, 1500]
                .iter()
                .map(|&v| neighbours(&t, v, 1000))
                .collect();
            assert_eq!(&last, expected.last().unwrap());
            assert!(t.run_counts().0 >= 1);
        }
    }

    /// A topology of 1,024-vertex ranges with its run files in memory.
    struct Harness {
        vfs: FaultVfs,
        names: Names,
        stats: LsmStats,
        config: Config,
        topology: Topology,
    }

    impl Harness {
        fn new(policy: MergePolicy) -> Self {
            Self::with_packing(policy, RunPacking::WhenItPays)
        }

        fn with_packing(policy: MergePolicy, packing: RunPacking) -> Self {
            Harness {
                vfs: FaultVfs::new(),
                names: Names::default(),
                stats: LsmStats::default(),
                config: Config {
                    run_packing: packing,
                    ..config(policy)
                },
                topology: Topology::new(0, true, 1024),
            }
        }

        /// Commits `entries` at `ts`, flushes them as a run and merges.
        fn flush_and_merge(&self, entries: &[(u32, u32, u32)], ts: Timestamp) {
            self.topology.install(entries, ts, ts);
            self.topology.freeze();
            self.topology
                .flush_one(&self.vfs, &self.names, &self.config, &self.stats)
                .unwrap();
            self.merge();
        }

        fn merge(&self) {
            self.topology
                .merge(&self.vfs, &self.names, &self.config, &self.stats)
                .unwrap();
        }
    }

    #[test]
    fn leveling_keeps_one_run_per_range_and_tiering_accumulates() {
        let levels = usize::from(MAX_LEVEL);
        for (policy, max_runs) in [
            (MergePolicy::Leveling, 2 + levels - 1),
            (MergePolicy::Tiering, 2 * (levels - 1) + 1),
        ] {
            let h = Harness::new(policy);
            let t = &h.topology;
            // Flushes of a few hundred entries, so that entries rather than run headers make
            // the sizes that levels are measured in.
            for ts in 1..=60u64 {
                let mut entries = vec![(5, ts as u32, ts as u32)];
                entries.extend((0..256).map(|i| (100 + i, ts as u32, (ts * 1000) as u32 + i)));
                h.flush_and_merge(&entries, ts);
                t.retire(ts);
                assert!(
                    t.run_counts().0 <= max_runs,
                    "{policy:?}: {:?}",
                    t.run_counts()
                );
            }
            assert_eq!(neighbours(t, 5, 60).len(), 60);
            assert_eq!(t.edges_between(5, 7, 60), vec![7]);
            assert!(t.edges_between(5, 99, 60).is_empty());
            let levels_used = t
                .state
                .read()
                .runs
                .iter()
                .filter(|r| r.current())
                .map(|r| r.run.meta.level)
                .max();
            assert!(
                levels_used > Some(2),
                "{policy:?}: runs moved down several levels ({levels_used:?})"
            );
        }
    }

    #[test]
    fn reading_a_range_in_full_collapses_it_into_one_run_except_under_tiering() {
        for policy in [
            MergePolicy::Leveling,
            MergePolicy::Elastic,
            MergePolicy::Tiering,
        ] {
            let h = Harness::new(policy);
            let t = &h.topology;
            for ts in 1..=5u64 {
                h.flush_and_merge(&[(5, ts as u32, ts as u32)], ts);
            }
            let before = t.run_counts().0;
            assert!(before > 1, "{policy:?}: several runs to start with");
            // Fewer entries read than the range holds: no collapse yet (elastic may level a
            // read-heavy level on its own).
            t.note_read(5, 4);
            h.merge();
            assert!(t.run_counts().0 > 1, "{policy:?}");
            t.note_read(5, 5);
            h.merge();
            let after = t.run_counts().0;
            match policy {
                MergePolicy::Tiering => assert_eq!(after, before),
                _ => assert_eq!(after, 1, "{policy:?}: one run after a full read"),
            }
            assert_eq!(neighbours(t, 5, 5).len(), 5);
        }
    }

    #[test]
    fn segment_scans_merge_components() {
        let (vfs, names, stats) = (FaultVfs::new(), Names::default(), LsmStats::default());
        let t = Topology::new(0, true, 1024);
        t.install(&[(3, 1, 0), (3, 2, 1), (9, 4, 2)], 1, 0);
        t.freeze();
        t.flush_one(&vfs, &names, &config(MergePolicy::Leveling), &stats)
            .unwrap();
        t.install(&[(3, 5, 3), (3, 1, TOMBSTONE_BIT)], 2, 0);
        let mut seen: Vec<(u32, Vec<u32>)> = Vec::new();
        t.scan_segment(0, 2, |_| true, |v, n, _| seen.push((v, n.to_vec())));
        assert_eq!(seen, vec![(3, vec![2, 5]), (9, vec![4])]);
        let mut old = Vec::new();
        t.scan_segment(0, 1, |_| true, |v, n, _| old.push((v, n.to_vec())));
        assert_eq!(old, vec![(3, vec![1, 2]), (9, vec![4])]);
    }

    /// Which slices carry run column values: every run slice after a flush; none of a run
    /// written before a property update (until a merge re-reads it); none of a memtable.
    #[test]
    fn run_columns_serve_readers_until_a_property_update_and_again_after_a_merge() {
        let h = Harness::new(MergePolicy::Leveling);
        let t = &h.topology;
        let request = || ColumnRequest {
            key: WEIGHT,
            updated_ts: &h.names.updated,
        };
        let weights_at = |ts: Timestamp| {
            let mut found: Vec<(u32, Option<f64>)> = Vec::new();
            t.scan_segment_with(
                0,
                ts,
                |_| true,
                Some(request()),
                |_, _, e, values| {
                    found.extend(
                        e.iter()
                            .enumerate()
                            .map(|(i, e)| (*e, values.and_then(|c| c.as_f64(i)))),
                    )
                },
            );
            found.sort_by_key(|(e, _)| *e); // runs hold a vertex's entries by neighbour
            found
        };
        for (ts, eid) in [(1, 0), (2, 1)] {
            t.install(&[(5, 9, eid)], ts, 0);
            h.names.set_weight(eid, ts, f64::from(eid) + 0.25, false);
        }
        assert_eq!(weights_at(2), [(0, None), (1, None)], "memtable: rows");
        t.freeze();
        t.flush_one(&h.vfs, &h.names, &h.config, &h.stats).unwrap();
        assert_eq!(
            weights_at(2),
            [(0, Some(0.25)), (1, Some(1.25))],
            "run column"
        );
        h.names.set_weight(1, 3, 9.0, true);
        assert_eq!(
            weights_at(3),
            [(0, None), (1, None)],
            "updated after the capture"
        );
        assert_eq!(
            weights_at(2),
            [(0, None), (1, None)],
            "a reader before the update"
        );
        t.install(&[(5, 8, 2)], 4, 0);
        h.names.set_weight(2, 4, 2.25, false);
        t.freeze();
        t.flush_one(&h.vfs, &h.names, &h.config, &h.stats).unwrap();
        t.note_read(0, 1 << 20);
        h.merge();
        assert_eq!(t.run_counts().0, 1, "collapsed into one run");
        assert_eq!(
            weights_at(4),
            [(0, Some(0.25)), (1, Some(9.0)), (2, Some(2.25))],
            "the merge re-read the rows"
        );
        assert_eq!(
            weights_at(2),
            [(0, None), (1, None)],
            "still too old for the column"
        );
    }

    /// What one commit does in [`segment_scans_agree_with_vertex_reads`].
    #[derive(Clone, Debug)]
    enum Step {
        /// Insert an edge (source, neighbour) in the 2,048 vertices of two segments.
        Insert(u32, u32),
        /// Delete the `n`-th live edge (modulo their number).
        Delete(usize),
        /// Change the weight of the `n`-th live edge (an update: raises `U`).
        Reweight(usize),
        Freeze,
        Flush,
        Merge,
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            6 => (0..2048u32, 0..2048u32).prop_map(|(v, n)| Step::Insert(v, n)),
            3 => any::<usize>().prop_map(Step::Delete),
            1 => any::<usize>().prop_map(Step::Reweight),
            1 => Just(Step::Freeze),
            1 => Just(Step::Flush),
            1 => Just(Step::Merge),
        ]
    }

    proptest::proptest! {
        /// Whatever mix of runs, frozen and active memtables and tombstones a segment is made
        /// of, a segment scan (filtered or not) hands out the same visible entries per vertex
        /// as per-vertex reads, at every timestamp.
        #[test]
        fn segment_scans_agree_with_vertex_reads(
            steps in proptest::collection::vec(step(), 1..120),
            policy in proptest::sample::select(vec![
                MergePolicy::Leveling, MergePolicy::Tiering, MergePolicy::Elastic,
            ]),
            packing in proptest::sample::select(vec![
                RunPacking::Never, RunPacking::WhenItPays, RunPacking::Always,
            ]),
        ) {
            let h = Harness::with_packing(policy, packing);
            let t = &h.topology;
            let mut live: Vec<(u32, u32)> = Vec::new(); // (source, edge offset)
            let (mut ts, mut eid) = (0u64, 0u32);
            for step in &steps {
                match *step {
                    Step::Insert(v, n) => {
                        ts += 1;
                        t.install(&[(v, n, eid)], ts, 0);
                        h.names.set_weight(eid, ts, f64::from(eid) + 0.5, false);
                        live.push((v, eid));
                        eid += 1;
                    }
                    Step::Delete(i) if !live.is_empty() => {
                        ts += 1;
                        let (v, e) = live.remove(i % live.len());
                        t.install(&[(v, 0, e | TOMBSTONE_BIT)], ts, 0);
                        h.names.installed.store(ts, Ordering::Release);
                    }
                    Step::Reweight(i) if !live.is_empty() => {
                        ts += 1;
                        let (_, e) = live[i % live.len()];
                        h.names.set_weight(e, ts, ts as f64, true);
                    }
                    Step::Delete(_) | Step::Reweight(_) => {}
                    Step::Freeze => t.freeze(),
                    Step::Flush => {
                        t.flush_one(&h.vfs, &h.names, &h.config, &h.stats).unwrap();
                    }
                    Step::Merge => {
                        t.note_read(0, 1 << 20);
                        h.merge();
                    }
                }
            }
            for entry in &t.state.read().runs {
                let mut scratch = Scratch::default();
                let configured = match packing {
                    RunPacking::Never => !entry.run.meta.packed,
                    RunPacking::Always => entry.run.meta.packed,
                    RunPacking::WhenItPays => true,
                };
                proptest::prop_assert!(configured, "runs packed as configured ({:?})", packing);
                for v in 0..2048 {
                    let (nbr, eid) = entry.run.entries(v, &mut scratch);
                    let pairs: Vec<(u32, u32)> = nbr.iter().copied().zip(eid.iter().copied()).collect();
                    proptest::prop_assert!(pairs.is_sorted(), "run entries of {} by neighbour", v);
                }
            }
            let odd = |v: u32| v % 2 == 1;
            for at in 0..=ts {
                for segment in 0..2 {
                    let vertices = (segment * 1024) as u32..(segment * 1024 + 1024) as u32;
                    let mut read: Vec<(u32, u32, u32)> = Vec::new();
                    for v in vertices {
                        read.extend(neighbours(t, v, at).into_iter().map(|(n, e)| (v, n, e)));
                    }
                    let mut scanned = Vec::new();
                    let mut scanned_odd = Vec::new();
                    t.scan_segment(segment, at, |_| true, |v, n, e| {
                        scanned.extend(n.iter().zip(e).map(|(n, e)| (v, *n, *e)))
                    });
                    t.scan_segment(segment, at, odd, |v, n, e| {
                        scanned_odd.extend(n.iter().zip(e).map(|(n, e)| (v, *n, *e)))
                    });
                    proptest::prop_assert_eq!(&scanned, &read, "segment {} at {}", segment, at);
                    // Where a run's column is handed out, its values are the model's at `at`.
                    let request = ColumnRequest { key: WEIGHT, updated_ts: &h.names.updated };
                    let mut with_values = Vec::new();
                    let mut wrong = Vec::new();
                    t.scan_segment_with(segment, at, |_| true, Some(request), |v, n, e, values| {
                        with_values.extend(n.iter().zip(e).map(|(n, e)| (v, *n, *e)));
                        for (i, e) in e.iter().enumerate().filter(|_| values.is_some()) {
                            let got = values.and_then(|values| values.as_f64(i));
                            if got != h.names.weight_at(*e, at) {
                                wrong.push((v, *e, got));
                            }
                        }
                    });
                    proptest::prop_assert_eq!(&with_values, &read, "with values, segment {} at {}", segment, at);
                    proptest::prop_assert!(wrong.is_empty(), "stale values {:?} at {}", wrong, at);
                    read.retain(|(v, _, _)| odd(*v));
                    proptest::prop_assert_eq!(&scanned_odd, &read, "odd, segment {} at {}", segment, at);
                }
            }
        }
    }
}
