//! Sorting: the serial Sort's buffer (top-k included), and partial sorting per morsel merged
//! in morsel order.
//!
//! THE BUFFER
//! ==========
//! A [`SortBuffer`] takes its input rows batch by batch. For each row, in input order, it
//! evaluates the keys (the first failing key of the first failing row is the Sort's error)
//! and keeps `(keys, position, row)`, `position` counting the rows fed. Rows compare by their
//! keys (`value::order`, DESC reversed), then by position: ties keep input order, exactly as
//! a stable sort. With a top-k (`Sort … (top s + l)`: a SKIP/LIMIT follows) only the `k =
//! s + l` first rows can be returned, so whenever the buffer reaches `max(2k,
//! TOP_K_MIN_BUFFER_ROWS)` rows it is cut back to its k first (a selection, O(buffer)); every
//! row's keys are still evaluated (or read from vectors: see below). After a cut the k-th
//! row is the *bar*: a later row whose keys do not order before the bar's (equal keys do
//! not: its position is later) can never be among the k first, so it is not copied into the
//! buffer at all — on a long input most rows stop at one key comparison. Keys that are
//! vectors over the batch (`eval::vector`: a projected typed column, `context::Batch` TYPED
//! COLUMNS) are not evaluated per row; when every key is one and the first is numeric, a row
//! whose first key is strictly behind the bar's is stopped on the `f64` / `i64` alone
//! (`Behind`), before any `Value` is made, and the rows kept copy their values one row at a
//! time — so a top-k over typed columns converts almost nothing. At the end it is cut to k
//! and sorted. The serial Sort
//! (`ops::Sort`) feeds all its input to one buffer.
//!
//! PARTIAL SORTING
//! ===============
//! Under `Parallel … partial-sort` (`plexus_plan::optimizer::parallel`), each worker feeds the rows of one
//! morsel, in the order its stages produce them, to its own buffer and sends the morsel's
//! sorted rows — its k first with a top-k — as a [`SortedRun`]. The caller collects the runs
//! in morsel order ([`SortedRuns`]) and, once all arrived, merges them (k-way, a binary heap
//! of run heads) into the output:
//!
//! ```text
//!   morsel 0  run [(1, r0), (2, r1), (2, r3)]      keys, then the row's place in the morsel
//!   morsel 1  run [(0, r6), (2, r4)]
//!   merged    (0, r6) (1, r0) (2, r1) (2, r3) (2, r4)     equal keys: the earlier run first
//! ```
//!
//! Why this is the serial output, ties included: serially the Sort sees morsel 0's rows,
//! then morsel 1's, … (`exec::parallel`, WHY IN SCAN ORDER), so a row's serial position
//! orders like (morsel, place in the morsel). A run is sorted by (keys, place in the morsel);
//! the merge takes the smallest head by keys and, among equal keys, the head of the earliest
//! run — so the merged order is (keys, morsel, place): the serial one. With a top-k, a
//! morsel's k first rows include every row of that morsel among the k first overall, so the
//! prefix of k merged rows is the serial output. The caller also compacts: when the runs it
//! holds reach the serial buffer's bound, it merges them into one run of their k first,
//! which goes where they were (before every later morsel), so the order argument still holds.
//!
//! THE SHARED BAR
//! ==============
//! A worker starts a buffer per morsel, and a buffer without a bar copies every row until its
//! first cut. So the workers of one partial top-k share the tightest *first key* of any
//! buffer's bar ([`SharedBar`]: an integer or a non-NaN float, the largest under DESC, the
//! smallest under ASC), offered after each cut and read once per batch. A row whose first
//! key is strictly behind it (`Behind`, vector keys only) is not fed: that buffer holds k
//! rows whose keys order at or before the bar's, and a first key strictly behind orders
//! after all of them whatever the later keys and whichever morsel they came from — so the
//! row is not among the k first overall, and every row of a morsel that is still reaches
//! the morsel's run (the argument above holds). Equal first keys are never stopped by the
//! shared bar (a row of an earlier morsel ties before the bar's row). `Parallel` clears it
//! before each run.
//!
//! A buffer cuts only after `max(2k, TOP_K_MIN_BUFFER_ROWS)` rows, and once the shared bar
//! stops most rows a morsel's buffer never gets there: the bar would stay what one morsel's
//! first cut made it. So each finished run's rows also go into the bar's *pool*: the first
//! keys of the k tightest rows offered by runs (each row offered once, by its own morsel's
//! run; keys of one kind, integer or float). Once the pool holds k keys its k-th is a bar —
//! k distinct rows order at or before it — and the bar tightens with every morsel, as the
//! serial buffer's does. That bar also lets the workers skip whole chunks
//! (`exec::parallel`, SKIPPED CHUNKS).
//!
//! ERRORS
//! ======
//! Serially the first failing key of the first failing row wins (or a stage's error met while
//! pulling that row's batch). A worker stops at its morsel's first error and sends its error
//! inside the run (the rows before it are sorted and kept, for the row count); the caller
//! returns it when it reaches that morsel, after every earlier morsel arrived without error —
//! the serial plan's error. As for the exchange and partial aggregation: when one batch holds
//! both a failing stage row and a failing key, which one is reported depends on batch
//! boundaries, and morsel edges cut batches where the serial scan does not.
//! `LimitExceeded` (`MAX_MATERIALIZED_ROWS`) is checked on the rows the caller holds after
//! each morsel (serially: after each batch), so which of it and a key error wins may differ
//! within the morsel that crosses the limit.
//!
//! BOUNDS
//! ======
//! A worker's buffer holds at most its morsel's rows (`MAX_MATERIALIZED_ROWS` checked), and
//! with a top-k at most `max(2k, TOP_K_MIN_BUFFER_ROWS)`; the exchange would have buffered
//! those rows instead. The caller holds the runs received: without a top-k, at most the rows
//! the serial Sort holds (the whole input, `MAX_MATERIALIZED_ROWS` checked); with one, at
//! most the serial buffer's bound plus one morsel's run, compacted back to k. Runs waiting
//! for an earlier morsel are bounded by the morsel window (`MORSELS_AHEAD_PER_WORKER` ×
//! workers), as for partial aggregation.

use super::ops::MIN_VECTOR_ROWS;
use super::{Batch, ExecContext, check_materialized, into_batches};
use crate::eval::prefetch::PropertyReads;
use crate::eval::vector::{self, Vector};
use crate::eval::{Env, eval};
use arrow::array::{Array, Float64Array, Int64Array};
use plexus_plan::logical::{SortKey, TopCount};
use plexus_txn::Zone;
use plexus_value::error::{QueryError, Result};
use plexus_value::value::{Value, order};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Rows a top-k sort lets accumulate (at least this many, at most twice the rows it keeps)
/// before cutting back to the rows it keeps: the cut costs O(buffer), so it runs O(input / k)
/// times. Small, because every row fed before the first cut is copied (no bar yet), and a
/// partial sort starts a buffer per morsel: with 4,096 a 10,000-row morsel copied 41 % of
/// its rows for `LIMIT 10`, with 256 under 3 %.
pub const TOP_K_MIN_BUFFER_ROWS: usize = 256;

/// A row waiting in a sort: its key values, its input position (ties keep input order, as a
/// stable sort does), and the row.
type SortRow = (Vec<Value>, u64, Vec<Value>);

/// What a Sort computes: its keys, and the SKIP + LIMIT that follows, if any.
#[derive(Clone)]
pub(super) struct SortSpec {
    pub keys: Vec<SortKey>,
    /// Only that many leading rows are kept (top-k).
    pub top: Option<TopCount>,
    /// The partial top-k's workers' tightest first key (see THE SHARED BAR).
    pub shared_bar: Arc<SharedBar>,
}

/// The first key of the tightest bar the buffers of one sort have reached: an `Int` or a
/// non-NaN `Float` (see THE SHARED BAR).
#[derive(Default)]
pub(super) struct SharedBar(Mutex<BarState>);

#[derive(Default)]
struct BarState {
    bar: Option<Value>,
    /// The first keys of the rows of the morsels' runs offered so far, the tightest first,
    /// at most k of them, all of one kind (see THE SHARED BAR).
    pool: Vec<Value>,
}

impl BarState {
    /// Keeps `key`, a bar's first key, when there is none yet or it is tighter.
    fn offer(&mut self, key: &Value, descending: bool) {
        if !usable_bar(key) {
            return;
        }
        let replace = match self.bar.as_ref() {
            None => true,
            Some(current) => tighter_than(key, current, descending) == Some(true),
        };
        if replace {
            self.bar = Some(key.clone());
        }
    }
}

impl SharedBar {
    fn state(&self) -> MutexGuard<'_, BarState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The first key of the tightest bar so far.
    pub(super) fn get(&self) -> Option<Value> {
        self.state().bar.clone()
    }

    /// Offers `key`, a bar's first key: kept when there is none yet or it is tighter.
    fn offer(&self, key: &Value, descending: bool) {
        self.state().offer(key, descending);
    }

    /// Offers the first keys of a morsel's run — each of a row no other offer of this kind
    /// counted — into the pool; once it holds k keys, its k-th is a bar (k rows order at
    /// or before it).
    fn offer_run<'v>(&self, keys: impl Iterator<Item = &'v Value>, k: usize, descending: bool) {
        let mut state = self.state();
        let kind = |v: &Value| std::mem::discriminant(v);
        let mut keys = keys.filter(|key| usable_bar(key)).peekable();
        let Some(pool_kind) = (state.pool.first().or(keys.peek().copied())).map(kind) else {
            return;
        };
        // Keys of another kind than the pool's are left out: fewer rows counted, a looser
        // bar, never a wrong one.
        state
            .pool
            .extend(keys.filter(|key| kind(key) == pool_kind).cloned());
        state.pool.sort_by(|a, b| {
            let tighter_first = |a: &Value, b: &Value| tighter_than(a, b, descending);
            match (tighter_first(a, b), tighter_first(b, a)) {
                (Some(true), _) => Ordering::Less,
                (_, Some(true)) => Ordering::Greater,
                _ => Ordering::Equal,
            }
        });
        state.pool.truncate(k);
        if k > 0 && state.pool.len() == k {
            let key = state.pool[k - 1].clone();
            state.offer(&key, descending);
        }
    }

    /// Forgets the bar (a new run of the sort).
    pub(super) fn clear(&self) {
        *self.state() = BarState::default();
    }
}

/// Whether every value a chunk's `zone` bounds is strictly behind `bar`, a shared bar's
/// first key under `descending` (see SKIPPED CHUNKS in `exec::parallel`): below it under
/// DESC, above it under ASC, compared within one kind (an integer zone with an integer bar,
/// a float one with a float bar); an empty chunk holds no row at all.
pub(super) fn zone_behind(zone: &Zone, bar: &Value, descending: bool) -> bool {
    match (zone, bar) {
        (Zone::Empty, _) => true,
        (Zone::Int { max, .. }, Value::Int(bar)) if descending => max < bar,
        (Zone::Int { min, .. }, Value::Int(bar)) => min > bar,
        (Zone::Float { max, .. }, Value::Float(bar)) if descending => max < bar,
        (Zone::Float { min, .. }, Value::Float(bar)) => min > bar,
        _ => false,
    }
}

/// Whether `v` can be a shared bar: an integer or a float that is not NaN.
fn usable_bar(v: &Value) -> bool {
    matches!(v, Value::Int(_)) || matches!(v, Value::Float(f) if !f.is_nan())
}

/// Whether first key `a` stops more rows than `b` as a bar (larger under DESC, smaller under
/// ASC); `None` unless both are usable bars of one kind.
fn tighter_than(a: &Value, b: &Value, descending: bool) -> Option<bool> {
    let ordered = match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.partial_cmp(y),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        _ => None,
    }?;
    Some(if descending {
        ordered.is_gt()
    } else {
        ordered.is_lt()
    })
}

/// Of a buffer's own bar's first key and the shared one, the tighter (the own one unless the
/// shared one is tighter).
fn tighter<'v>(
    own: Option<&'v Value>,
    shared: Option<&'v Value>,
    descending: bool,
) -> Option<&'v Value> {
    match (own, shared.filter(|v| usable_bar(v))) {
        (Some(own), Some(shared)) if tighter_than(shared, own, descending) == Some(true) => {
            Some(shared)
        }
        (None, shared) => shared,
        (own, _) => own,
    }
}

impl SortSpec {
    pub(super) fn new(keys: Vec<SortKey>, top: Option<TopCount>) -> Self {
        SortSpec {
            keys,
            top,
            shared_bar: Arc::default(),
        }
    }

    /// How many leading rows the output needs (`None`: all). Counts that do not evaluate to
    /// non-negative integers give `None`; SKIP and LIMIT report those errors themselves.
    fn rows_needed(&self, ctx: &mut ExecContext) -> Option<usize> {
        let top = self.top.as_ref()?;
        let skip = match &top.skip {
            Some(skip) => super::ops::eval_count(skip, ctx).ok()?,
            None => 0,
        };
        let limit = super::ops::eval_count(&top.limit, ctx).ok()?;
        usize::try_from(skip.saturating_add(limit)).ok()
    }

    /// Orders key values (DESC keys reversed), ties left equal.
    fn compare_keys(&self, a: &[Value], b: &[Value]) -> Ordering {
        for (i, k) in self.keys.iter().enumerate() {
            let o = order(&a[i], &b[i]);
            let o = if k.descending { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Orders rows of one buffer: keys, then input position.
    fn compare(&self, a: &SortRow, b: &SortRow) -> Ordering {
        self.compare_keys(&a.0, &b.0).then(a.1.cmp(&b.1))
    }

    /// Keeps the `keep` first rows in order (unsorted), dropping the rest.
    fn cut(&self, rows: &mut Vec<SortRow>, keep: usize) {
        if rows.len() > keep {
            if keep > 0 {
                rows.select_nth_unstable_by(keep - 1, |a, b| self.compare(a, b));
            }
            rows.truncate(keep);
        }
    }
}

/// The buffer rows accumulate in before a top-k cut (`None`: no top-k).
fn buffer_bound(needed: Option<usize>) -> Option<usize> {
    needed.map(|k| k.saturating_mul(2).max(TOP_K_MIN_BUFFER_ROWS))
}

/// A sort's rows as they come in (see THE BUFFER).
pub(super) struct SortBuffer {
    rows: Vec<SortRow>,
    /// The top-k's k.
    needed: Option<usize>,
    /// Rows fed so far: the next row's position.
    fed_rows: u64,
    /// After a top-k cut, the keys of the last of the k rows kept (see THE BUFFER).
    bar: Option<Vec<Value>>,
    /// A partial sort's morsel buffer: reads and offers the spec's shared bar (see THE
    /// SHARED BAR). Never the serial Sort's, which may run again (an inner plan, per row).
    shares_bar: bool,
}

impl SortBuffer {
    pub(super) fn new(spec: &SortSpec, ctx: &mut ExecContext) -> Self {
        SortBuffer {
            rows: Vec::new(),
            needed: spec.rows_needed(ctx),
            fed_rows: 0,
            bar: None,
            shares_bar: false,
        }
    }

    /// A worker's buffer for one morsel of a partial sort (see THE SHARED BAR).
    pub(super) fn for_morsel(spec: &SortSpec, ctx: &mut ExecContext) -> Self {
        SortBuffer {
            shares_bar: true,
            ..SortBuffer::new(spec, ctx)
        }
    }

    /// Evaluates the keys of every row of `batch` and keeps the rows (cut back with a top-k).
    pub(super) fn feed(
        &mut self,
        spec: &SortSpec,
        batch: &Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let reads = PropertyReads::of(spec.keys.iter().map(|k| &k.expr));
        let prefetched = reads.fetch(batch, ctx);
        // Keys computed as vectors for the whole batch (a vector never fails: the others
        // are evaluated row by row, so the first failing key is the same).
        let vectors: Vec<Option<Vector>> = (spec.keys.iter())
            .map(|k| {
                let worth = batch.len() >= MIN_VECTOR_ROWS;
                worth
                    .then(|| vector::column(&k.expr, batch, &prefetched, ctx))
                    .flatten()
            })
            .collect();
        let bound = buffer_bound(self.needed);
        let shared = (self.shares_bar && self.needed.is_some())
            .then(|| spec.shared_bar.get())
            .flatten();
        let descending = spec.keys.first().is_some_and(|k| k.descending);
        let first_bar = |own: &Option<Vec<Value>>| {
            let own = own.as_ref().and_then(|bar| bar.first());
            tighter(own, shared.as_ref(), descending).cloned()
        };
        let mut behind = first_bar(&self.bar).and_then(|bar| Behind::new(spec, &bar, &vectors));
        // The keys of the row at hand; a row the bar stops leaves the buffer for the next.
        let mut key = Vec::with_capacity(spec.keys.len());
        for row in 0..batch.len() {
            let position = self.fed_rows;
            self.fed_rows += 1;
            if behind.as_ref().is_some_and(|behind| behind.test(row)) {
                continue;
            }
            let mut env = Env::with_prefetched(batch, row, &prefetched);
            key.clear();
            for (k, vector) in spec.keys.iter().zip(&vectors) {
                key.push(match vector {
                    Some(vector) => vector.value(row),
                    None => eval(&k.expr, &mut env, ctx)?,
                });
            }
            if (self.bar.as_ref()).is_some_and(|bar| spec.compare_keys(&key, bar).is_ge()) {
                continue;
            }
            let kept = std::mem::replace(&mut key, Vec::with_capacity(spec.keys.len()));
            self.rows.push((kept, position, batch.row(row)));
            if let (Some(k), Some(bound)) = (self.needed, bound)
                && self.rows.len() >= bound
            {
                spec.cut(&mut self.rows, k);
                self.bar = self.last_kept(spec);
                if let Some(first) = self.bar.as_ref().and_then(|bar| bar.first())
                    && self.shares_bar
                {
                    spec.shared_bar.offer(first, descending);
                }
                behind = first_bar(&self.bar).and_then(|bar| Behind::new(spec, &bar, &vectors));
            }
        }
        check_materialized(self.rows.len())
    }

    /// The keys of the last row the buffer keeps (it holds no more than k rows, just cut).
    fn last_kept(&self, spec: &SortSpec) -> Option<Vec<Value>> {
        let k = self.needed?;
        debug_assert!(self.rows.len() <= k, "called right after a cut");
        if self.rows.len() < k || k == 0 {
            // Fewer than k rows so far, or k = 0 (nothing is kept; no bar needed).
            return None;
        }
        let last = self.rows.iter().max_by(|a, b| spec.compare(a, b))?;
        Some(last.0.clone())
    }

    /// The rows in order (only the k first with a top-k).
    fn sorted(mut self, spec: &SortSpec) -> Vec<SortRow> {
        if let Some(k) = self.needed {
            spec.cut(&mut self.rows, k);
        }
        self.rows.sort_unstable_by(|a, b| spec.compare(a, b));
        self.rows
    }

    /// The serial Sort's output.
    pub(super) fn finish(self, spec: &SortSpec, width: usize) -> Vec<Batch> {
        into_batches(self.sorted(spec).into_iter().map(|(_, _, row)| row), width)
    }

    /// A worker's run for its morsel: the sorted rows fed before `error`, if any.
    pub(super) fn finish_run(self, spec: &SortSpec, error: Option<QueryError>) -> SortedRun {
        let (shares_bar, needed) = (self.shares_bar, self.needed);
        let rows = self.sorted(spec);
        // The run's rows join the pool of the shared bar (THE SHARED BAR): a morsel whose
        // rows the bar mostly stopped never reaches a cut of its own.
        if let Some(k) = needed.filter(|_| shares_bar) {
            let descending = spec.keys.first().is_some_and(|key| key.descending);
            let keys = rows.iter().filter_map(|row| row.0.first());
            spec.shared_bar.offer_run(keys, k, descending);
        }
        SortedRun { rows, error }
    }
}

/// The bar's test on a first key held as a numeric vector: whether a row's first key orders
/// strictly after the bar's, so the row can never be among the k first (THE BUFFER) —
/// decided on the `f64` or `i64` itself, without making the row's keys. Where it cannot
/// tell (a null, a NaN, integers against floats, an equal first key), the row takes the
/// full comparison.
enum Behind<'a> {
    Float {
        keys: &'a Float64Array,
        bar: f64,
        descending: bool,
    },
    Int {
        keys: &'a Int64Array,
        bar: i64,
        descending: bool,
    },
}

impl<'a> Behind<'a> {
    /// The test of rows against `bar`, a bar's first key.
    fn new(spec: &SortSpec, bar: &Value, vectors: &'a [Option<Vector>]) -> Option<Self> {
        // A key evaluated row by row may fail on a row the bar would stop: that row's keys
        // must be evaluated, so the test applies only when every key is a vector.
        if !vectors.iter().all(Option::is_some) {
            return None;
        }
        let descending = spec.keys.first()?.descending;
        match (vectors.first()?.as_ref()?, bar) {
            (Vector::Float(keys), Value::Float(bar)) if !bar.is_nan() => Some(Behind::Float {
                keys,
                bar: *bar,
                descending,
            }),
            (Vector::Int(keys), Value::Int(bar)) => Some(Behind::Int {
                keys,
                bar: *bar,
                descending,
            }),
            _ => None,
        }
    }

    /// Whether row `row`'s first key orders strictly after the bar's (`false`: unknown).
    fn test(&self, row: usize) -> bool {
        match *self {
            Behind::Float {
                keys,
                bar,
                descending,
            } => {
                // A NaN orders after every number (`value::order`): left to the full test.
                let key = keys.values()[row];
                keys.is_valid(row)
                    && !key.is_nan()
                    && if descending { key < bar } else { key > bar }
            }
            Behind::Int {
                keys,
                bar,
                descending,
            } => {
                let key = keys.values()[row];
                keys.is_valid(row) && if descending { key < bar } else { key > bar }
            }
        }
    }
}

/// A morsel's rows in sort order, sent from its worker to the caller.
pub(super) struct SortedRun {
    rows: Vec<SortRow>,
    /// The error that ended the morsel early.
    error: Option<QueryError>,
}

/// The caller's side of a partial sort: the runs received, in morsel order.
pub(super) struct SortedRuns {
    runs: Vec<Vec<SortRow>>,
    held_rows: usize,
    /// The top-k's k.
    needed: Option<usize>,
    /// With a top-k: the rows held from which the runs are compacted to the k first.
    compact_at_rows: Option<usize>,
}

impl SortedRuns {
    pub(super) fn new(spec: &SortSpec, ctx: &mut ExecContext) -> Self {
        let needed = spec.rows_needed(ctx);
        SortedRuns {
            runs: Vec::new(),
            held_rows: 0,
            needed,
            compact_at_rows: buffer_bound(needed),
        }
    }

    /// Takes the next morsel's run (see ERRORS for which failure wins).
    pub(super) fn merge(&mut self, spec: &SortSpec, run: SortedRun) -> Result<()> {
        debug_assert!(run.rows.is_sorted_by(|a, b| spec.compare(a, b).is_le()));
        self.held_rows += run.rows.len();
        self.runs.push(run.rows);
        check_materialized(self.held_rows)?;
        if let (Some(k), Some(bound)) = (self.needed, self.compact_at_rows)
            && self.held_rows >= bound
        {
            debug_assert!(bound > k, "a compaction must drop rows");
            // The k first rows so far, in place of the runs they come from (see PARTIAL SORTING).
            let first: Vec<SortRow> = merged(spec, std::mem::take(&mut self.runs))
                .take(k)
                .collect();
            self.held_rows = first.len();
            self.runs.push(first);
        }
        run.error.map_or(Ok(()), Err)
    }

    /// The output rows: the runs merged, the k first with a top-k.
    pub(super) fn finish(self, spec: &SortSpec, width: usize) -> Vec<Batch> {
        let rows = merged(spec, self.runs).take(self.needed.unwrap_or(usize::MAX));
        into_batches(rows.map(|(_, _, row)| row), width)
    }
}

/// The rows of sorted `runs` (in morsel order) in sort order, equal keys in run order.
fn merged(spec: &SortSpec, runs: Vec<Vec<SortRow>>) -> impl Iterator<Item = SortRow> + '_ {
    let mut runs: Vec<_> = runs.into_iter().map(Vec::into_iter).collect();
    let mut heads = BinaryHeap::with_capacity(runs.len());
    for (run, rows) in runs.iter_mut().enumerate() {
        if let Some(row) = rows.next() {
            heads.push(Head { spec, row, run });
        }
    }
    std::iter::from_fn(move || {
        let Head { row, run, .. } = heads.pop()?;
        if let Some(next) = runs[run].next() {
            heads.push(Head {
                spec,
                row: next,
                run,
            });
        }
        Some(row)
    })
}

/// The next row of one run in the merge's heap.
struct Head<'a> {
    spec: &'a SortSpec,
    row: SortRow,
    /// The run's index: its morsel order.
    run: usize,
}

impl Ord for Head<'_> {
    /// Reversed (`BinaryHeap` pops the greatest): the smallest keys, then the earliest run.
    fn cmp(&self, other: &Self) -> Ordering {
        let by_keys = self.spec.compare_keys(&self.row.0, &other.row.0);
        by_keys.then(self.run.cmp(&other.run)).reverse()
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_plan::logical::BExpr;

    /// A sort on one key of `descending`; the expression is never evaluated here.
    fn spec(descending: bool) -> SortSpec {
        let key = SortKey {
            expr: BExpr::Const(Value::Null),
            descending,
        };
        SortSpec::new(vec![key], None)
    }

    /// Pseudo-random morsels of rows `(key, [morsel, place])`, keys drawn from 0..4 (ties).
    fn morsels(seed: u64) -> Vec<Vec<SortRow>> {
        let mut state = seed;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        (0..7)
            .map(|morsel| {
                let rows = next(9);
                (0..rows)
                    .map(|place| {
                        let key = vec![Value::Int(next(4) as i64)];
                        let row = vec![Value::Int(morsel), Value::Int(place as i64)];
                        (key, place, row)
                    })
                    .collect()
            })
            .collect()
    }

    /// A row's `[morsel, place]`.
    fn id(row: &[Value]) -> (i64, i64) {
        match row {
            [Value::Int(morsel), Value::Int(place)] => (*morsel, *place),
            _ => unreachable!("rows of `morsels`"),
        }
    }

    /// The serial Sort's rows: all rows in input order, stable-sorted, the k first.
    fn serial(spec: &SortSpec, morsels: &[Vec<SortRow>], k: Option<usize>) -> Vec<(i64, i64)> {
        let mut rows: Vec<SortRow> = morsels.concat();
        rows.sort_by(|a, b| spec.compare_keys(&a.0, &b.0));
        let k = k.unwrap_or(usize::MAX);
        rows.into_iter()
            .take(k)
            .map(|(_, _, row)| id(&row))
            .collect()
    }

    /// The caller's merge of the morsels' runs (each sorted, cut to k in its worker).
    fn merged_runs(
        spec: &SortSpec,
        morsels: &[Vec<SortRow>],
        needed: Option<usize>,
        compact_at_rows: Option<usize>,
    ) -> Vec<(i64, i64)> {
        let mut runs = SortedRuns {
            runs: Vec::new(),
            held_rows: 0,
            needed,
            compact_at_rows,
        };
        for morsel in morsels {
            let mut rows = morsel.clone();
            rows.sort_by(|a, b| spec.compare(a, b));
            rows.truncate(needed.unwrap_or(usize::MAX));
            runs.merge(spec, SortedRun { rows, error: None })
                .expect("merge");
        }
        let batches = runs.finish(spec, 2);
        batches
            .iter()
            .flat_map(|b| (0..b.len()).map(move |row| id(&b.row(row))))
            .collect()
    }

    #[test]
    fn merged_runs_are_the_stable_sort_ties_in_morsel_order() {
        for seed in 0..50 {
            for descending in [false, true] {
                let spec = spec(descending);
                let morsels = morsels(seed);
                let expected = serial(&spec, &morsels, None);
                assert_eq!(merged_runs(&spec, &morsels, None, None), expected, "{seed}");
            }
        }
    }

    #[test]
    fn compacted_top_k_runs_are_the_serial_top_k() {
        for seed in 0..50 {
            for k in [0, 1, 3, 10] {
                let spec = spec(seed % 2 == 0);
                let morsels = morsels(seed);
                let expected = serial(&spec, &morsels, Some(k));
                // Compacting after almost every morsel, and never.
                for compact_at_rows in [Some(k + 1), None] {
                    let got = merged_runs(&spec, &morsels, Some(k), compact_at_rows);
                    assert_eq!(got, expected, "seed {seed}, k {k}, {compact_at_rows:?}");
                }
            }
        }
    }
}
