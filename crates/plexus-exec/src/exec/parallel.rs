//! Morsel-driven parallelism: the `Parallel` (exchange) operator.
//!
//! WHAT
//! ====
//! `Parallel` runs a pipeline of streaming stages (Project / Filter / Expand /
//! VarLengthExpand / HashJoin) over a node scan of the top-level argument — the chains `plexus_plan::optimizer::parallel`
//! wraps in read-only statements — on worker threads, and hands their rows to the operator
//! above it (an Aggregate, Sort, Distinct, Limit, the Results …) on the caller's thread, or
//! computes that operator partially in the workers (PARTIAL AGGREGATION, PARTIAL SORTS AND
//! DISTINCT below):
//!
//! ```text
//!   caller thread                          worker threads (each: a copy of the stages)
//!   ─────────────                          ───────────────────────────────────────────
//!   first next(): run the Argument,        loop: claim the next morsel (in order, at most
//!     scan the label once (parent tx),       MORSELS_AHEAD_PER_WORKER × workers beyond
//!     cut the ids into morsels,              the one the caller is waiting for),
//!     fork the tx per worker, spawn   ───▶   run the stages over its vertices,
//!   every next(): take the batches of        send each batch (with the reads it took)
//!     morsel k, in order; buffer later  ◀──  into a bounded queue, then `Done(k)`
//!     ones; absorb their reads
//! ```
//!
//! A morsel is `morsel_vertices` consecutive ids of the scan's list — more for a scan so large
//! that it would make over [`MORSELS_PER_WORKER`] morsels per worker: each morsel costs a
//! claim, a run of the stages' set-up, a message or two and a wake-up of the caller, which
//! a morsel of 10,000 vertices the stages mostly skip (a top-k's SKIPPED CHUNKS) did not
//! amortise (a top-k over 10 M vertices: 1,000 morsels 12 ms, 128 morsels 3.4–4.1 ms;
//! `docs/benchmarks.md`), while 64 per worker still balance the load. A morsel of a batch or
//! more is rounded up to whole batches: a table's rows scanned in order are then cut into
//! batches at storage's chunk edges (a chunk is `BATCH_ROWS` rows), and a batch's typed
//! property reads share the chunk's columns instead of copying them (storage's typed reads,
//! SHARED). Workers claim them
//! with a shared counter, so a slow morsel does not hold up the others (load balancing), and
//! a worker keeps its own copy of the stages (their caches, the subquery and regex state of
//! its own `ExecState`).
//!
//! PARTIAL AGGREGATION
//! ===================
//! When the plan's `Parallel` wraps an Aggregate over the stages (`partial-aggregate` in
//! EXPLAIN, chosen by `plexus_plan::optimizer::parallel`), a worker does not send its morsel's rows: it feeds
//! them to a `MorselAggregator` and sends one `MorselAggregate` when the morsel ends (or
//! fails). The caller takes them in morsel order, exactly as it takes batches, merges each
//! into one table, and emits the groups once all morsels are merged. `aggregate` explains
//! why that equals the serial Aggregate — groups in first-seen order, `collect` lists in row
//! order, sums added value by value in row order — and which error wins.
//!
//! PARTIAL SORTS AND DISTINCT
//! ==========================
//! `partial-sort` works the same way (both are a `MorselReduce`: a worker state per morsel,
//! a payload per morsel, a caller state merged in morsel order): a worker feeds its morsel's
//! rows to a `SortBuffer` and sends the sorted run (its k first with a top-k); the caller
//! k-way merges the runs, equal keys in morsel order. `sort` explains why that is the serial
//! stable sort, ties included, which error wins, and how a top-k stays bounded.
//!
//! SKIPPED CHUNKS
//! ==============
//! A partial top-k whose first key is a numeric property of the scanned vertex (`skip-chunks`
//! in EXPLAIN: `plexus_plan::logical::ChunkSkip`, chosen by the parallelization pass) reads
//! far less than its scan: every worker's `MorselScan`, before it hands out a batch, asks
//! the transaction for the zones of that property over the batch's runs of rows
//! (`Transaction::vertex_property_zones`: each storage chunk's smallest and largest value,
//! see `plexus_storage`'s `rows::zone`) and leaves out the vertices of every chunk whose
//! zone lies strictly behind the sort's shared bar (`sort`, THE SHARED BAR) — below it under
//! DESC, above it under ASC. Those vertices' rows have a first key strictly behind the bar,
//! so none is among the k first overall: the shared bar's own argument, applied to a whole
//! chunk before any of its columns is read. The skipped vertices count as read (the
//! transaction records their property reads: under SERIALIZABLE a write that would have put
//! one of them in the result conflicts). Nothing is skipped where a zone cannot answer —
//! the key is not a declared INT64 / FLOAT64 column, the chunk holds a null or a NaN of it,
//! the transaction wrote vertices or its snapshot is older than the chunk's newest write —
//! nor before the bar exists, nor serially (the serial Sort shares no bar). A skipped
//! vertex is not counted on the scan's PROFILE line, which then shows fewer rows than the
//! serial plan's.
//!
//! `partial-distinct` streams: a worker's copy of the stages ends in a Distinct, reset with
//! each morsel, so it sends the first occurrence in the morsel of each row; the caller passes
//! each batch, in morsel order, through a second Distinct kept across morsels. A row's first
//! occurrence overall is the first in the earliest morsel holding it — the one its worker
//! kept, and the first the caller meets — so the caller emits the serial Distinct's rows in
//! its order, as they arrive. DISTINCT compares slots and evaluates nothing: its only error
//! is `LimitExceeded` (more than `MAX_MATERIALIZED_ROWS` distinct rows), met in the caller
//! after as many distinct rows as serially; a worker's set is bounded by its morsel's rows.
//!
//! HASH JOINS
//! ==========
//! A hash join of the chain (inner or left outer) maps each input row to its joined rows
//! given its table, like the other stages; the table is what must not be built per worker
//! (work and memory times the workers, and reads recorded in a worker whose message may come
//! after rows of other workers that used the table). So when the `Parallel` starts, the
//! caller runs each join's build side (`join::BuildSide`) in the statement's transaction —
//! its reads recorded there, its operators profiled under their plan numbers (after the
//! scan's argument, the deepest join's first, as pre-order numbers them) — and every copy
//! of the stages, in the workers or serial, probes that one table (`join::SharedTable`).
//! A build that fails is kept as its error: each probe that needs the table reports it, so
//! the error surfaces in the first morsel whose rows reach the join, exactly where the
//! serial join (which builds at its first input row) would have failed, and not at all if
//! no row reaches it. What differs from the serial join: the build side runs even when no row
//! reaches the join — PROFILE counts its rows, SERIALIZABLE records its reads (more reads,
//! never fewer) — and it runs again when the `Parallel` is reset (it is never inside an
//! inner plan, see `plexus_plan::optimizer::parallel`).
//!
//! SMALL BATCHES
//! =============
//! A selective filter leaves a few rows of each scanned batch (a `STARTS WITH` over 10 M
//! vertices: ~3 of 2,048). Sent one by one, each is a message and a wake-up of the caller —
//! a quarter of such a scan's time went to the channel's futex calls and the interrupts
//! they cause. A worker therefore holds a batch of under `HELD_BELOW_ROWS` rows and appends
//! the morsel's next small ones to it, sending it once it has that many rows, before a
//! larger batch, or when the morsel ends: the same rows in the same order, in fewer
//! messages (a LIMIT above waits at most for the morsel's end).
//!
//! WHY IN SCAN ORDER
//! =================
//! The caller emits morsel 0's batches, then morsel 1's, …, buffering those that arrive early.
//! The stages map each row independently of the others, so the concatenation is exactly the
//! serial output, in the serial order. Hence: results equal serial execution row for row
//! (not only as multisets), a stable Sort above keeps the same order among ties, a LIMIT
//! without ORDER BY returns the same rows, and an error is the one the serial plan meets
//! first — a worker's error is reported when the caller reaches its morsel, after the rows
//! of all earlier morsels, and dropped if a LIMIT stops before. (Which row's error comes first
//! inside one batch — a Project evaluates item by item — depends on batch boundaries, which
//! differ at morsel edges; serially that order depends on batch boundaries too.)
//!
//! TRANSACTIONS
//! ============
//! A statement reads through `&mut Transaction`, which holds the write set and, under
//! SERIALIZABLE, records the read set. Workers cannot share it, and cursors lend it only for
//! one pull at a time while workers run across pulls. So each worker gets an owned read-only
//! fork (`Transaction::fork_reader`): the same snapshot, a copy of the write set (so the
//! statement sees its transaction's earlier writes), its own read set. Every message a worker
//! sends carries the reads it recorded since its last message; the caller absorbs them into
//! the parent transaction *before* it hands on any row of that message. Therefore:
//!
//! - the parent's read set always contains every read the serial plan would have made to
//!   produce the rows emitted so far (rows of earlier morsels and their rejected rows came
//!   with their `Done`, the current batch's with it), plus perhaps some more — conflict
//!   detection is as strong as serial, never weaker, even when the cursor is dropped early;
//! - the label scan itself (or the union of label scans, or the all-nodes scan) runs in the
//!   caller on the parent transaction (it records the `LabelScan` items, and sees own
//!   creations and deletions exactly as the serial scan does).
//!
//! Alternatives rejected: `&self` read paths with a locked read set would change every read
//! of the transaction API for one caller; a borrowed, scoped fork cannot outlive one pull.
//! The copy of the write set costs O(pending writes) per worker: with more than
//! [`MAX_FORK_WRITES`] pending writes the pipeline runs serially instead. A fork refuses to
//! write or commit, and holds its own registration of the snapshot timestamp, so GC never
//! reclaims what a still-running worker reads even if the parent ended first.
//!
//! LIFETIME, BOUNDS, ERRORS
//! ========================
//! - Queues are bounded: [`WORKER_QUEUE_BATCHES`] batches per worker in the channel, and
//!   workers claim no morsel more than `MORSELS_AHEAD_PER_WORKER × workers` beyond the one the
//!   caller waits for, so at most that many morsels' output is buffered.
//! - Dropping the operator (a LIMIT satisfied, a cursor dropped) or `reset` sets the stop
//!   flag, wakes waiting workers, drops the receiver (a blocked `send` fails) and joins every
//!   thread before returning: no thread outlives the statement's operator tree. A worker also
//!   checks the flag before each batch of its morsel.
//! - A worker stops at its first error (or panic, turned into a `DatabaseError`) and reports
//!   it for its morsel — aggregating, inside the morsel's partial aggregate, after what was
//!   aggregated before it; the caller returns it when it reaches that morsel. Cannot hang: the
//!   morsel the caller waits for has always been claimed by a running worker or can be
//!   claimed (claims are in order and within the window); if every worker is gone without
//!   finishing it, the caller gets an error, not a wait.
//! - PROFILE: each worker counts rows and time of its copy of the stages under the plan's
//!   operator numbers, sent with each `Done` and summed by the caller, so rows equal serial
//!   execution's; times add up the workers' (CPU) time. `Parallel`'s own line counts the rows
//!   it emitted; the scan's line counts the scanned vertices handed out (SKIPPED CHUNKS:
//!   fewer than serially when chunks were skipped). With partial
//!   aggregation the Aggregate's line counts the merged groups handed on (the serial
//!   Aggregate's rows; the workers' per-morsel groups are not counted), and its time is the
//!   workers' time over their morsels (stages included, as serial times include inputs) plus
//!   the caller's merging; a partial Sort's line likewise. A partial Distinct's line counts
//!   the rows the caller keeps (the serial Distinct's), its time is the caller's filtering;
//!   the workers' per-morsel Distinct is not profiled.
//! - With fewer than two threads startable, or too many pending writes, the stages (and the
//!   Aggregate, Sort or Distinct over them) run on the caller's thread exactly as the serial
//!   plan (same operator numbers).

use super::aggregate::{
    AggregateSink, Aggregation, MorselAggregate, MorselAggregator, SinkState, Table,
};
use super::join::{BuildSide, HashJoin, SharedTable};
use super::ops::{Distinct, RowStage, aggregate_operator, simple_stage, sort_operator};
use super::pipeline::{Pipeline, Stage};
use super::scan::scan_node_runs;
use super::sort::{SharedBar, SortBuffer, SortSpec, SortedRun, SortedRuns, zone_behind};
use super::{
    BATCH_ROWS, Batch, Built, ExecContext, ExecState, Operator, OperatorProfile, Profiled,
};
use crate::context::JitProfile;
use plexus_plan::Params;
use plexus_plan::logical::{ChunkSkip, LogicalPlan, parallel_chain};
use plexus_txn::Transaction;
use plexus_txn::validation::ReadItem;
use plexus_types::{VertexId, VertexRuns, VertexTableId};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

/// Batches each worker may have queued for the caller.
pub const WORKER_QUEUE_BATCHES: usize = 4;
/// Morsels per worker that may be claimed beyond the one the caller is waiting for.
pub const MORSELS_AHEAD_PER_WORKER: usize = 2;
/// Most pending writes a transaction may hold for a statement in it to fork per worker.
pub const MAX_FORK_WRITES: usize = 100_000;

/// Morsels per worker a large scan is cut into: beyond `workers ×` this many morsels of the
/// plan's size, morsels grow instead (see WHAT).
pub const MORSELS_PER_WORKER: usize = 64;

/// Worker threads alive in this process (tests check that none outlive their statement).
static LIVE_WORKERS: AtomicUsize = AtomicUsize::new(0);

/// Number of morsel worker threads currently running, in the whole process.
pub fn live_workers() -> usize {
    LIVE_WORKERS.load(Ordering::SeqCst)
}

/// Builds the `Parallel` operator of `plan` (a `LogicalPlan::Parallel`), numbering it and its
/// chain as `build_numbered` would (pre-order: the breaker if partial, the stages top first,
/// the scan, its argument).
pub(super) fn build(plan: &LogicalPlan, profile: bool, counter: &mut usize) -> Box<dyn Operator> {
    let LogicalPlan::Parallel {
        input,
        workers,
        morsel_vertices,
        skip_chunks,
    } = plan
    else {
        unreachable!("exec::parallel::build is called for Parallel only")
    };
    let (partial, chain) = partial(input, counter);
    let first_id = *counter;
    let (stages, scan) = parallel_chain(chain);
    let LogicalPlan::NodeScan {
        input: scan_input,
        slot,
        label,
        label_union,
        ..
    } = scan
    else {
        unreachable!("the parallelization pass wraps chains over a NodeScan only")
    };
    *counter += stages.len() + 1;
    let argument = super::build_numbered(scan_input, profile, counter).into_operator();
    // The build sides of the chain's hash joins, numbered after the scan's argument, the
    // deepest join's first (pre-order: a join's build side follows its input's subtree).
    let joins = (stages.iter().enumerate().rev())
        .filter_map(|(depth, stage)| match stage {
            LogicalPlan::HashJoin {
                build,
                keys,
                build_slots,
                ..
            } => {
                let build = super::build_numbered(build, profile, counter).into_operator();
                let side = BuildSide::new(build, keys, build_slots);
                Some(JoinBuild { depth, side })
            }
            _ => None,
        })
        .collect();
    Box::new(Parallel {
        spec: Arc::new(Spec {
            stages: stages.into_iter().cloned().collect(),
            first_id,
            partial,
            profile,
        }),
        slot: *slot,
        label: label.clone(),
        label_union: label_union.clone(),
        workers: *workers,
        morsel_vertices: (*morsel_vertices).max(1),
        skip_chunks: skip_chunks.clone(),
        argument,
        joins,
        state: RunState::NotStarted,
    })
}

/// A hash join of the chain: its stage's depth (0: the top stage) and its build side, run on
/// the caller's thread (see HASH JOINS).
struct JoinBuild {
    depth: usize,
    side: BuildSide,
}

/// The tables of one run's hash joins, by stage depth (`None`: not a hash join).
type Tables = Arc<Vec<Option<Arc<SharedTable>>>>;

/// What the workers compute above the stages of `plan` (the `Parallel`'s input), numbering
/// the breaker computed partially, if any; and the chain of stages.
fn partial<'a>(plan: &'a LogicalPlan, counter: &mut usize) -> (Partial, &'a LogicalPlan) {
    let id = *counter;
    let (partial, chain) = match plan {
        LogicalPlan::Aggregate {
            input,
            keys,
            aggregates,
        } => {
            let aggregation = Aggregation {
                keys: keys.clone(),
                calls: aggregates.clone(),
            };
            let reduction = Reduction::Aggregate(aggregation);
            (Partial::Reduce { id, reduction }, &**input)
        }
        LogicalPlan::Sort { input, keys, top } => {
            let spec = SortSpec::new(keys.clone(), top.clone());
            let reduction = Reduction::Sort(spec);
            (Partial::Reduce { id, reduction }, &**input)
        }
        LogicalPlan::Distinct { input, slots } => {
            let slots = slots.clone();
            (Partial::Distinct { id, slots }, &**input)
        }
        chain => return (Partial::Rows, chain),
    };
    *counter += 1;
    (partial, chain)
}

/// What the workers compute above the stages (see PARTIAL AGGREGATION, PARTIAL SORTS AND
/// DISTINCT).
enum Partial {
    /// A plain exchange: the stages' rows.
    Rows,
    /// `partial-distinct`: each worker keeps the first occurrences in its morsel, the caller
    /// those not seen in an earlier morsel. `id`: the Distinct's operator number.
    Distinct { id: usize, slots: Vec<usize> },
    /// `partial-aggregate`, `partial-sort`: each worker reduces each morsel's rows into one
    /// payload, which the caller merges in morsel order. `id`: the breaker's operator number.
    Reduce { id: usize, reduction: Reduction },
}

impl Partial {
    /// The operator number of the breaker computed partially.
    fn id(&self) -> Option<usize> {
        match self {
            Partial::Rows => None,
            Partial::Distinct { id, .. } | Partial::Reduce { id, .. } => Some(*id),
        }
    }
}

/// A breaker computed per morsel and merged (`Partial::Reduce`).
enum Reduction {
    Aggregate(Aggregation),
    Sort(SortSpec),
}

/// What every copy of the stages is built from.
struct Spec {
    /// The streaming stages, top first.
    stages: Vec<LogicalPlan>,
    /// Operator number of the top stage; the scan's is `first_id + stages.len()`.
    first_id: usize,
    /// The breaker the workers compute partially above the stages, if any.
    partial: Partial,
    profile: bool,
}

impl Spec {
    fn scan_id(&self) -> usize {
        self.first_id + self.stages.len()
    }

    fn profiled(&self, id: usize, op: Box<dyn Operator>) -> Box<dyn Operator> {
        if self.profile {
            Box::new(Profiled { id, inner: op })
        } else {
            op
        }
    }

    /// The stages over `source`, profiled under their plan numbers; a hash join probes its
    /// table in `tables`.
    fn build_stages(&self, source: Box<dyn Operator>, tables: &Tables) -> Pipeline {
        let mut pipeline = Pipeline::new(self.profiled(self.scan_id(), source));
        for (depth, stage) in self.stages.iter().enumerate().rev() {
            let built: Box<dyn Stage> = match stage {
                LogicalPlan::HashJoin {
                    keys,
                    build_slots,
                    optional,
                    ..
                } => {
                    let table = tables[depth].clone().expect("a hash join's table is built");
                    let join =
                        HashJoin::probing(table, keys, build_slots.clone(), optional.clone());
                    Box::new(join)
                }
                stage => match simple_stage(stage) {
                    Some((_, built)) => built,
                    None => unreachable!(
                        "plexus_plan::logical::parallel_chain returns streaming stages only"
                    ),
                },
            };
            pipeline.push(built, self.profile.then_some(self.first_id + depth));
        }
        pipeline
    }

    /// A worker's copy of the stages over `source`: with partial-distinct, under a Distinct
    /// that a worker resets with each morsel (not profiled: the caller counts the Distinct's
    /// rows).
    fn build_worker(&self, source: Box<dyn Operator>, tables: &Tables) -> Box<dyn Operator> {
        let mut stages = self.build_stages(source, tables);
        if let Partial::Distinct { slots, .. } = &self.partial {
            stages.push(RowStage::boxed(Distinct::new(slots.clone())), None);
        }
        Box::new(stages)
    }

    /// The whole wrapped plan over `source` on one thread: the stages, and the serial
    /// breaker over them when the workers would have computed it partially.
    fn build_serial(&self, source: Box<dyn Operator>, tables: &Tables) -> Box<dyn Operator> {
        let mut stages = self.build_stages(source, tables);
        match &self.partial {
            Partial::Rows => Box::new(stages),
            Partial::Distinct { id, slots } => {
                let stage = RowStage::boxed(Distinct::new(slots.clone()));
                stages.push(stage, self.profile.then_some(*id));
                Box::new(stages)
            }
            Partial::Reduce { id, reduction } => {
                let serial = reduction.serial(stages, self.profile.then_some(*id));
                self.profiled(*id, serial)
            }
        }
    }
}

struct Parallel {
    spec: Arc<Spec>,
    slot: usize,
    label: Option<Arc<str>>,
    label_union: Vec<Arc<str>>,
    workers: usize,
    morsel_vertices: usize,
    /// A partial top-k's chunk skipping (see SKIPPED CHUNKS).
    skip_chunks: Option<ChunkSkip>,
    /// The scan's input (the top-level `Argument`), run on the caller's thread.
    argument: Box<dyn Operator>,
    /// The chain's hash joins' build sides, run on the caller's thread (see HASH JOINS).
    joins: Vec<JoinBuild>,
    state: RunState,
}

enum RunState {
    NotStarted,
    /// Workers are running (or done) over the morsels.
    Running(Box<Run>),
    /// The stages on the caller's thread (see LIFETIME, BOUNDS, ERRORS).
    Serial(Box<dyn Operator>),
    /// The merged groups of a partial aggregation, handed out batch by batch.
    Merged(std::vec::IntoIter<Batch>),
    Finished,
}

impl Operator for Parallel {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        loop {
            match &mut self.state {
                RunState::NotStarted => self.state = self.start(ctx)?,
                RunState::Serial(op) => return op.next(ctx),
                RunState::Finished => return Ok(None),
                RunState::Merged(batches) => {
                    let Some(batch) = batches.next() else {
                        self.state = RunState::Finished;
                        return Ok(None);
                    };
                    // The breaker's rows are the merged rows handed on, as serially.
                    if let Some(id) = self.spec.partial.id() {
                        add_profile(ctx, id, batch.len(), std::time::Duration::ZERO);
                    }
                    return Ok(Some(batch));
                }
                RunState::Running(run) => {
                    let result = match &self.spec.partial {
                        Partial::Rows | Partial::Distinct { .. } => {
                            run.rows(ctx, &self.spec.partial)
                        }
                        Partial::Reduce { id, reduction } => match run.merge(ctx, *id, reduction) {
                            Ok(batches) => {
                                // The workers are done: join them now.
                                self.state = RunState::Merged(batches.into_iter());
                                continue;
                            }
                            Err(e) => Err(e),
                        },
                    };
                    if !matches!(result, Ok(Some(_))) {
                        // Done or failed: stop and join the workers now.
                        self.state = RunState::Finished;
                    }
                    return result;
                }
            }
        }
    }

    fn reset(&mut self) {
        self.state = RunState::NotStarted;
        self.argument.reset();
    }
}

impl Parallel {
    /// Runs the argument and the scan, cuts the morsels and starts the workers.
    fn start(&mut self, ctx: &mut ExecContext) -> Result<RunState> {
        debug_assert!(
            ctx.arguments.is_empty(),
            "Parallel runs at the top level only"
        );
        let mut arguments = Vec::new();
        while let Some(batch) = self.argument.next(ctx)? {
            arguments.extend((0..batch.len()).map(|row| batch.row(row)));
        }
        // The planner only wraps scans of the top-level `Argument`: exactly one row.
        let [argument] = <[Vec<Value>; 1]>::try_from(arguments).map_err(|rows| {
            QueryError::runtime(
                ErrorClass::DatabaseError,
                "Internal",
                format!("a parallel scan needs one argument row, got {}", rows.len()),
            )
        })?;
        let ids = scan_node_runs(ctx.tx, self.label.as_deref(), &self.label_union)?;
        let morsel_vertices = morsel_size(ids.len(), self.workers, self.morsel_vertices);
        let morsels = ids.len().div_ceil(morsel_vertices);
        let mut skip = None;
        if let Partial::Reduce {
            reduction: Reduction::Sort(sort),
            ..
        } = &self.spec.partial
        {
            sort.shared_bar.clear();
            skip = (self.skip_chunks.clone()).map(|chunks| ScanSkip {
                chunks,
                bar: sort.shared_bar.clone(),
            });
        }
        let source = Arc::new(Vertices {
            ids,
            argument,
            slot: self.slot,
            morsel_vertices,
            skip,
        });
        let mut tables = vec![None; self.spec.stages.len()];
        for join in &mut self.joins {
            let table = SharedTable::of(join.side.table(ctx));
            tables[join.depth] = Some(Arc::new(table));
        }
        let tables = Arc::new(tables);
        let workers = self.workers.min(morsels);
        if workers < 2 || ctx.tx.pending_writes() > MAX_FORK_WRITES {
            return Ok(RunState::Serial(self.serial(source, &tables)));
        }
        match Run::start(ctx, &self.spec, &source, &tables, workers, morsels) {
            Some(run) => Ok(RunState::Running(Box::new(run))),
            None => Ok(RunState::Serial(self.serial(source, &tables))),
        }
    }

    /// The wrapped plan over every vertex of the scan, on the caller's thread.
    fn serial(&self, source: Arc<Vertices>, tables: &Tables) -> Box<dyn Operator> {
        let morsels = source.ids.len().div_ceil(source.morsel_vertices);
        let scan = MorselScan::new(source, Arc::new(AtomicBool::new(false)));
        *lock(&scan.range) = 0..morsels;
        self.spec.build_serial(Box::new(scan), tables)
    }
}

/// The vertices per morsel of a scan of `vertices` by `workers` (see WHAT): the plan's
/// `smallest`, or more once that would make over `MORSELS_PER_WORKER` morsels per worker —
/// a whole number of batches once it is a batch or more (see WHAT).
fn morsel_size(vertices: usize, workers: usize, smallest: usize) -> usize {
    let per_worker = workers.max(1) * MORSELS_PER_WORKER;
    let size = smallest.max(vertices.div_ceil(per_worker));
    if size >= BATCH_ROWS {
        size.next_multiple_of(BATCH_ROWS)
    } else {
        size
    }
}

/// The scanned vertices, shared by all workers.
struct Vertices {
    ids: VertexRuns,
    /// The argument row every scanned vertex extends.
    argument: Vec<Value>,
    slot: usize,
    morsel_vertices: usize,
    /// With a partial top-k over a property of the scanned vertices: their chunk skipping.
    skip: Option<ScanSkip>,
}

/// The vertices a partial top-k's workers skip (see SKIPPED CHUNKS): those of the chunks
/// whose zone of the first key's property is strictly behind the shared bar.
struct ScanSkip {
    chunks: ChunkSkip,
    bar: Arc<SharedBar>,
}

impl ScanSkip {
    /// Appends to `nodes` the vertices of `rows` of `table` but those of the chunks behind
    /// `bar`, the shared bar as it is now.
    fn extend(
        &self,
        nodes: &mut Vec<VertexId>,
        table: VertexTableId,
        rows: Range<u32>,
        bar: &Value,
        ctx: &mut ExecContext,
    ) {
        let descending = self.chunks.descending;
        for (part, zone) in ctx
            .tx
            .vertex_property_zones(table, rows, &self.chunks.property)
        {
            if !zone.is_some_and(|zone| zone_behind(&zone, bar, descending)) {
                nodes.extend(part.map(|o| VertexId::new(table, o)));
            }
        }
    }
}

/// The leaf of a worker's stages: the vertices of the morsels in `range` (set by its worker
/// before each morsel), as rows of the argument with the scan's slot filled.
struct MorselScan {
    source: Arc<Vertices>,
    range: Arc<Mutex<std::ops::Range<usize>>>,
    stop: Arc<AtomicBool>,
    /// Next index into `source.ids`, once started.
    next: Option<usize>,
}

impl MorselScan {
    fn new(source: Arc<Vertices>, stop: Arc<AtomicBool>) -> Self {
        MorselScan {
            source,
            range: Arc::new(Mutex::new(0..0)),
            stop,
            next: None,
        }
    }
}

impl Operator for MorselScan {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let morsels = lock(&self.range).clone();
            let per = self.source.morsel_vertices;
            let end = (morsels.end * per).min(self.source.ids.len());
            let begin = *self.next.get_or_insert((morsels.start * per).min(end));
            if begin >= end {
                return Ok(None);
            }
            let stop = end.min(begin + BATCH_ROWS);
            self.next = Some(stop);
            let mut nodes = Vec::with_capacity(stop - begin);
            let skip = self.source.skip.as_ref();
            let bar = skip.and_then(|skip| skip.bar.get());
            for (table, offsets) in self.source.ids.runs_in(begin..stop) {
                match (skip, &bar) {
                    (Some(skip), Some(bar)) => skip.extend(&mut nodes, table, offsets, bar, ctx),
                    _ => nodes.extend(offsets.map(|o| VertexId::new(table, o))),
                }
            }
            if nodes.is_empty() {
                continue;
            }
            // Column by column: the scanned slot holds the morsel's nodes (typed, as ids: see
            // `context::Batch`), every other slot the argument row's value on each row (no row
            // vector per node; a null one unset).
            let rows = nodes.len();
            let columns = (self.source.argument.iter().enumerate())
                .map(
                    |(slot, value)| match value.is_null() || slot == self.source.slot {
                        true => Vec::new(),
                        false => vec![value.clone(); rows],
                    },
                )
                .collect();
            let mut batch = Batch::from_columns(rows, columns);
            batch.set_nodes(self.source.slot, nodes);
            return Ok(Some(batch));
        }
    }

    fn reset(&mut self) {
        self.next = None;
    }
}

/// What a worker computed over (part of) a morsel.
enum Payload {
    /// A batch of the stages' rows (a plain exchange, partial-distinct).
    Rows(Batch),
    /// The morsel's partial aggregate, its only payload (partial-aggregate).
    Aggregated(Box<MorselAggregate>),
    /// The morsel's sorted rows, its only payload (partial-sort).
    Sorted(Box<SortedRun>),
}

/// What a worker tells the caller.
enum Message {
    Batch {
        morsel: usize,
        payload: Payload,
        reads: Vec<ReadItem>,
    },
    Done {
        morsel: usize,
        reads: Vec<ReadItem>,
        profile: Option<Vec<OperatorProfile>>,
    },
    Failed {
        morsel: usize,
        error: QueryError,
        reads: Vec<ReadItem>,
    },
}

/// Coordination between the caller and its workers.
struct Shared {
    claims: Mutex<Claims>,
    wake: Condvar,
    stop: Arc<AtomicBool>,
}

struct Claims {
    /// The next morsel to claim.
    next: usize,
    /// Morsels from here on may not be claimed yet (see LIFETIME, BOUNDS, ERRORS).
    limit: usize,
    total: usize,
}

impl Shared {
    /// The next morsel for a worker, waiting while the window is full; `None` when all are
    /// claimed or the run stops.
    fn claim(&self) -> Option<usize> {
        let mut claims = lock(&self.claims);
        loop {
            if self.stop.load(Ordering::SeqCst) || claims.next >= claims.total {
                return None;
            }
            if claims.next < claims.limit {
                claims.next += 1;
                return Some(claims.next - 1);
            }
            claims = self
                .wake
                .wait(claims)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn set_limit(&self, limit: usize) {
        lock(&self.claims).limit = limit;
        self.wake.notify_all();
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Under the lock, so that no worker misses the wake-up between its check and its wait.
        drop(lock(&self.claims));
        self.wake.notify_all();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The output of one morsel, as far as it has arrived.
#[derive(Default)]
struct MorselOutput {
    payloads: VecDeque<Payload>,
    done: bool,
    error: Option<QueryError>,
}

/// A running exchange: the caller's side.
struct Run {
    shared: Arc<Shared>,
    receiver: Option<Receiver<Message>>,
    handles: Vec<JoinHandle<()>>,
    morsels: usize,
    /// The morsel whose rows are emitted next.
    next_emit: usize,
    ahead: usize,
    pending: BTreeMap<usize, MorselOutput>,
    /// With partial-distinct: the rows seen in the morsels emitted so far.
    first_seen: Option<Distinct>,
}

impl Run {
    /// Forks the transaction and starts up to `workers` threads; `None` if fewer than two
    /// could be started (the caller then runs serially).
    fn start(
        ctx: &mut ExecContext,
        spec: &Arc<Spec>,
        source: &Arc<Vertices>,
        tables: &Tables,
        workers: usize,
        morsels: usize,
    ) -> Option<Run> {
        let ahead = MORSELS_AHEAD_PER_WORKER * workers;
        let shared = Arc::new(Shared {
            claims: Mutex::new(Claims {
                next: 0,
                limit: ahead,
                total: morsels,
            }),
            wake: Condvar::new(),
            stop: Arc::new(AtomicBool::new(false)),
        });
        let (sender, receiver) = sync_channel(WORKER_QUEUE_BATCHES * workers);
        let mut run = Run {
            shared: shared.clone(),
            receiver: Some(receiver),
            handles: Vec::new(),
            morsels,
            next_emit: 0,
            ahead,
            pending: BTreeMap::new(),
            first_seen: None,
        };
        for index in 0..workers {
            let worker = Worker {
                shared: shared.clone(),
                sender: sender.clone(),
                scan: MorselScan::new(source.clone(), shared.stop.clone()),
                spec: spec.clone(),
                tables: tables.clone(),
                tx: ctx.tx.fork_reader(),
                params: ctx.params.clone(),
                width: ctx.width,
                state: worker_state(ctx.state),
            };
            match std::thread::Builder::new()
                .name(format!("plexus-morsel-{index}"))
                .spawn(move || worker.run())
            {
                Ok(handle) => run.handles.push(handle),
                Err(_) => break,
            }
        }
        // Dropping `run` (fewer than two threads) stops and joins the ones started.
        (run.handles.len() >= 2).then_some(run)
    }

    /// The next payload, in morsel order.
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Payload>> {
        loop {
            if self.next_emit >= self.morsels {
                return Ok(None);
            }
            let output = self.pending.entry(self.next_emit).or_default();
            if let Some(payload) = output.payloads.pop_front() {
                return Ok(Some(payload));
            }
            if let Some(error) = output.error.take() {
                return Err(error);
            }
            if output.done {
                self.pending.remove(&self.next_emit);
                self.next_emit += 1;
                self.shared.set_limit(self.next_emit + self.ahead);
                continue;
            }
            let received = match &self.receiver {
                Some(receiver) => receiver.recv().ok(),
                None => None,
            };
            let Some(message) = received else {
                return Err(internal(&format!(
                    "parallel workers stopped before finishing morsel {}",
                    self.next_emit
                )));
            };
            self.file(message, ctx);
        }
    }

    /// The next batch of rows in morsel order; with partial-distinct (operator `id`) only
    /// the rows no earlier morsel had, counted for the Distinct's line.
    fn rows(&mut self, ctx: &mut ExecContext, partial: &Partial) -> Result<Option<Batch>> {
        loop {
            let Some(payload) = self.next(ctx)? else {
                return Ok(None);
            };
            let Payload::Rows(batch) = payload else {
                return Err(internal(
                    "a parallel worker reduced a morsel for an exchange",
                ));
            };
            let Partial::Distinct { id, slots } = partial else {
                return Ok(Some(batch));
            };
            let started = Instant::now();
            let seen = self
                .first_seen
                .get_or_insert_with(|| Distinct::new(slots.clone()));
            let kept = seen.first_occurrences(&batch)?;
            add_profile(ctx, *id, kept.len(), started.elapsed());
            if !kept.is_empty() {
                return Ok(Some(kept));
            }
        }
    }

    /// Merges every morsel's payload in morsel order and returns the breaker's output (see
    /// `aggregate`, `sort`). The time spent merging counts for the breaker's line (`id`).
    fn merge(
        &mut self,
        ctx: &mut ExecContext,
        id: usize,
        reduction: &Reduction,
    ) -> Result<Vec<Batch>> {
        match reduction {
            Reduction::Aggregate(aggregation) => self.merge_with(ctx, id, aggregation),
            Reduction::Sort(spec) => self.merge_with(ctx, id, spec),
        }
    }

    fn merge_with<R: MorselReduce>(
        &mut self,
        ctx: &mut ExecContext,
        id: usize,
        reduce: &R,
    ) -> Result<Vec<Batch>> {
        let mut merged = reduce.merged(ctx);
        while let Some(payload) = self.next(ctx)? {
            let started = Instant::now();
            reduce.merge(&mut merged, payload)?;
            add_profile(ctx, id, 0, started.elapsed());
        }
        let started = Instant::now();
        let batches = reduce.finish(merged, ctx.width)?;
        add_profile(ctx, id, 0, started.elapsed());
        Ok(batches)
    }

    /// Takes a worker's message in: its reads into the parent transaction first (see
    /// TRANSACTIONS), its profile into the statement's.
    fn file(&mut self, message: Message, ctx: &mut ExecContext) {
        match message {
            Message::Batch {
                morsel,
                payload,
                reads,
            } => {
                ctx.tx.absorb_reads(reads);
                self.pending
                    .entry(morsel)
                    .or_default()
                    .payloads
                    .push_back(payload);
            }
            Message::Done {
                morsel,
                reads,
                profile,
            } => {
                ctx.tx.absorb_reads(reads);
                if let (Some(total), Some(part)) = (ctx.state.profile.as_mut(), profile) {
                    for (entry, add) in total.iter_mut().zip(part) {
                        entry.rows += add.rows;
                        entry.time += add.time;
                        entry.jit = JitProfile::merge(entry.jit.take(), add.jit);
                    }
                }
                self.pending.entry(morsel).or_default().done = true;
            }
            Message::Failed {
                morsel,
                error,
                reads,
            } => {
                ctx.tx.absorb_reads(reads);
                self.pending.entry(morsel).or_default().error = Some(error);
            }
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.shared.stop();
        // A worker blocked in `send` fails once the receiver is gone.
        self.receiver = None;
        for handle in self.handles.drain(..) {
            // A worker's panic was reported as its morsel's error already.
            let _ = handle.join();
        }
    }
}

/// A worker's own state for the statement: empty caches, the parent's statement time.
fn worker_state(parent: &ExecState) -> ExecState {
    let mut state = ExecState::new(parent.build_subplan);
    state.clock = parent.clock;
    state.may_write = false;
    state.path_limit = parent.path_limit;
    state.jit = parent.jit;
    state.interrupt = parent.interrupt.clone();
    state.deleted_edge_types = parent.deleted_edge_types.clone();
    state.profile = parent
        .profile
        .as_ref()
        .map(|p| vec![OperatorProfile::default(); p.len()]);
    state
}

/// A worker thread's side.
struct Worker {
    shared: Arc<Shared>,
    sender: SyncSender<Message>,
    scan: MorselScan,
    spec: Arc<Spec>,
    /// The chain's hash join tables, shared by all workers.
    tables: Tables,
    tx: Transaction,
    params: Params,
    width: usize,
    state: ExecState,
}

impl Worker {
    fn run(mut self) {
        LIVE_WORKERS.fetch_add(1, Ordering::SeqCst);
        let range = self.scan.range.clone();
        let mut stages = self.spec.build_worker(Box::new(self.scan), &self.tables);
        let mut ctx = ExecContext::new(&mut self.tx, &self.params, self.width, &mut self.state);
        while let Some(morsel) = self.shared.claim() {
            *lock(&range) = morsel..morsel + 1;
            stages.reset();
            let to = (morsel, &*self.shared, &self.sender);
            let go_on = run_morsel(&self.spec, stages.as_mut(), &mut ctx, to);
            if !go_on {
                break;
            }
        }
        drop(stages);
        LIVE_WORKERS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs the claimed morsel through `spec` and sends what it computes; whether the worker may
/// claim another morsel.
fn run_morsel(
    spec: &Spec,
    stages: &mut dyn Operator,
    ctx: &mut ExecContext,
    to: (usize, &Shared, &SyncSender<Message>),
) -> bool {
    match &spec.partial {
        Partial::Rows | Partial::Distinct { .. } => stream_morsel(stages, ctx, to),
        Partial::Reduce { id, reduction } => match reduction {
            Reduction::Aggregate(aggregation) => reduce_morsel(stages, (*id, aggregation), ctx, to),
            Reduction::Sort(sort) => reduce_morsel(stages, (*id, sort), ctx, to),
        },
    }
}

/// A batch of fewer rows is held to go out with the morsel's next ones (see SMALL BATCHES).
const HELD_BELOW_ROWS: usize = BATCH_ROWS / 4;

/// Runs the stages over the claimed morsel and sends their batches (a plain exchange), the
/// small ones together (see SMALL BATCHES); whether the worker may claim another morsel.
fn stream_morsel(
    stages: &mut dyn Operator,
    ctx: &mut ExecContext,
    (morsel, shared, sender): (usize, &Shared, &SyncSender<Message>),
) -> bool {
    let rows = |batch: Batch, ctx: &mut ExecContext| Message::Batch {
        morsel,
        payload: Payload::Rows(batch),
        reads: ctx.tx.take_reads(),
    };
    let mut held: Option<Batch> = None;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return false;
        }
        let (message, last) = match guarded(morsel, || stages.next(ctx)) {
            Ok(Some(batch)) if batch.len() < HELD_BELOW_ROWS => {
                let pending = held.get_or_insert_with(|| Batch::new(batch.width()));
                pending.push_rows(&batch, &(0..batch.len() as u32).collect::<Vec<_>>());
                if pending.len() < HELD_BELOW_ROWS {
                    continue;
                }
                (rows(held.take().expect("held above"), ctx), false)
            }
            Ok(Some(batch)) => {
                if let Some(small) = held.take().filter(|b| !b.is_empty())
                    && sender.send(rows(small, ctx)).is_err()
                {
                    return false;
                }
                (rows(batch, ctx), false)
            }
            Ok(None) => {
                if let Some(small) = held.take().filter(|b| !b.is_empty())
                    && sender.send(rows(small, ctx)).is_err()
                {
                    return false;
                }
                (done(morsel, ctx), true)
            }
            Err(error) => {
                let reads = ctx.tx.take_reads();
                let failed = Message::Failed {
                    morsel,
                    error,
                    reads,
                };
                let _ = sender.send(failed);
                return false;
            }
        };
        if sender.send(message).is_err() {
            return false;
        }
        if last {
            return true;
        }
    }
}

/// Reduces the claimed morsel's rows (operator `id`: `reduce`) and sends the payload, then
/// `Done`; whether the worker may claim another morsel.
fn reduce_morsel<R: MorselReduce>(
    stages: &mut dyn Operator,
    (id, reduce): (usize, &R),
    ctx: &mut ExecContext,
    (morsel, shared, sender): (usize, &Shared, &SyncSender<Message>),
) -> bool {
    let started = Instant::now();
    // `None`: the stages feed it themselves (a compiled pipeline: `filter`).
    let profile_id = ctx.state.profile.is_some().then_some(id);
    let mut held = reduce
        .absorb(reduce.morsel(ctx), (stages, profile_id), ctx)
        .err();
    // Whether the morsel was reduced to its end (its scan also ends early on a stop).
    let end = guarded(morsel, || {
        while let Some(batch) = stages.next(ctx)? {
            if shared.stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            match &mut held {
                Some(state) => reduce.feed(state, &batch, ctx)?,
                None => return Err(internal("a pipeline fed its reduction and output rows too")),
            }
        }
        Ok(!shared.stop.load(Ordering::SeqCst))
    });
    let state = match held.or_else(|| reduce.reclaim(stages)) {
        Some(state) => state,
        None => {
            let error = internal("a pipeline lost its reduction's state");
            let _ = sender.send(Message::Failed {
                morsel,
                error,
                reads: ctx.tx.take_reads(),
            });
            return false;
        }
    };
    add_profile(ctx, id, 0, started.elapsed());
    let error = match end {
        // Stopped: nobody waits for the payload.
        Ok(false) => return false,
        Ok(true) => None,
        // The caller reports the error after merging what came before it in the morsel.
        Err(error) => Some(error),
    };
    let failed = error.is_some();
    let message = Message::Batch {
        morsel,
        payload: reduce.payload(state, error),
        reads: ctx.tx.take_reads(),
    };
    if sender.send(message).is_err() || failed {
        return false;
    }
    sender.send(done(morsel, ctx)).is_ok()
}

/// A breaker the workers compute per morsel and the caller merges in morsel order
/// (`Partial::Reduce`).
trait MorselReduce {
    /// A worker's state over one morsel.
    type Morsel;
    /// The caller's state over the morsels merged so far.
    type Merged;
    fn morsel(&self, ctx: &mut ExecContext) -> Self::Morsel;
    /// Hands `morsel` to the worker's `stages` to feed in place of their output rows (a
    /// compiled pipeline: `filter`, COMPILED PIPELINES), or gives it back.
    /// `id`: the breaker's PROFILE number.
    fn absorb(
        &self,
        morsel: Self::Morsel,
        (_stages, _id): (&mut dyn Operator, Option<usize>),
        _ctx: &ExecContext,
    ) -> std::result::Result<(), Self::Morsel> {
        Err(morsel)
    }
    /// The state [`MorselReduce::absorb`] handed over, with every row fed to it.
    fn reclaim(&self, _stages: &mut dyn Operator) -> Option<Self::Morsel> {
        None
    }
    fn feed(&self, morsel: &mut Self::Morsel, batch: &Batch, ctx: &mut ExecContext) -> Result<()>;
    /// What the worker sends: what was fed before `error`, and the error.
    fn payload(&self, morsel: Self::Morsel, error: Option<QueryError>) -> Payload;
    fn merged(&self, ctx: &mut ExecContext) -> Self::Merged;
    /// Merges the next morsel's payload; its error, if any, after what preceded it.
    fn merge(&self, merged: &mut Self::Merged, payload: Payload) -> Result<()>;
    fn finish(&self, merged: Self::Merged, width: usize) -> Result<Vec<Batch>>;
}

impl MorselReduce for Aggregation {
    type Morsel = MorselAggregator;
    type Merged = Table;

    fn morsel(&self, _ctx: &mut ExecContext) -> MorselAggregator {
        MorselAggregator::new(self)
    }

    fn absorb(
        &self,
        morsel: MorselAggregator,
        (stages, id): (&mut dyn Operator, Option<usize>),
        ctx: &ExecContext,
    ) -> std::result::Result<(), MorselAggregator> {
        let sink = AggregateSink {
            aggregation: self.clone(),
            state: SinkState::Morsel(morsel),
        };
        stages.absorb(Box::new(sink), id, ctx).map_err(|sink| {
            match sink.downcast::<AggregateSink>().map(|s| s.state) {
                Ok(SinkState::Morsel(morsel)) => morsel,
                _ => unreachable!("a pipeline gives back the sink it was offered"),
            }
        })
    }

    fn reclaim(&self, stages: &mut dyn Operator) -> Option<MorselAggregator> {
        let sink = stages.reclaim()?.downcast::<AggregateSink>().ok()?;
        match sink.state {
            SinkState::Morsel(morsel) => Some(morsel),
            SinkState::Serial(_) => None,
        }
    }

    fn feed(
        &self,
        morsel: &mut MorselAggregator,
        batch: &Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        morsel.feed(self, batch, ctx)
    }

    fn payload(&self, morsel: MorselAggregator, error: Option<QueryError>) -> Payload {
        Payload::Aggregated(Box::new(morsel.finish(error)))
    }

    fn merged(&self, _ctx: &mut ExecContext) -> Table {
        Table::new(self)
    }

    fn merge(&self, merged: &mut Table, payload: Payload) -> Result<()> {
        match payload {
            Payload::Aggregated(partial) => merged.merge(self, *partial),
            _ => Err(internal("a parallel worker sent no partial aggregate")),
        }
    }

    fn finish(&self, merged: Table, width: usize) -> Result<Vec<Batch>> {
        merged.finish(self, width)
    }
}

impl MorselReduce for SortSpec {
    type Morsel = SortBuffer;
    type Merged = SortedRuns;

    fn morsel(&self, ctx: &mut ExecContext) -> SortBuffer {
        SortBuffer::for_morsel(self, ctx)
    }

    fn feed(&self, morsel: &mut SortBuffer, batch: &Batch, ctx: &mut ExecContext) -> Result<()> {
        morsel.feed(self, batch, ctx)
    }

    fn payload(&self, morsel: SortBuffer, error: Option<QueryError>) -> Payload {
        Payload::Sorted(Box::new(morsel.finish_run(self, error)))
    }

    fn merged(&self, ctx: &mut ExecContext) -> SortedRuns {
        SortedRuns::new(self, ctx)
    }

    fn merge(&self, merged: &mut SortedRuns, payload: Payload) -> Result<()> {
        match payload {
            Payload::Sorted(run) => merged.merge(self, *run),
            _ => Err(internal("a parallel worker sent no sorted run")),
        }
    }

    fn finish(&self, merged: SortedRuns, width: usize) -> Result<Vec<Batch>> {
        Ok(merged.finish(self, width))
    }
}

impl Reduction {
    /// The serial breaker over `input`, numbered `id` under PROFILE.
    fn serial(&self, input: Pipeline, id: Option<usize>) -> Box<dyn Operator> {
        match self {
            Reduction::Aggregate(aggregation) => {
                aggregate_operator(Built::Pipeline(input), aggregation.clone(), id)
            }
            Reduction::Sort(spec) => sort_operator(Box::new(input), spec.clone()),
        }
    }
}

/// The end of a morsel: the reads since the last message and the morsel's profile.
fn done(morsel: usize, ctx: &mut ExecContext) -> Message {
    Message::Done {
        morsel,
        reads: ctx.tx.take_reads(),
        profile: ctx
            .state
            .profile
            .as_mut()
            .map(|p| std::mem::replace(p, vec![OperatorProfile::default(); p.len()])),
    }
}

/// Runs `f`, turning a panic into the morsel's error.
fn guarded<T>(morsel: usize, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(internal(&format!(
            "a parallel worker panicked in morsel {morsel}"
        )))
    })
}

/// Adds rows and time to operator `id`'s PROFILE line, when profiling.
fn add_profile(ctx: &mut ExecContext, id: usize, rows: usize, time: std::time::Duration) {
    if let Some(entry) = ctx.state.profile.as_mut().and_then(|p| p.get_mut(id)) {
        entry.rows += rows as u64;
        entry.time += time;
    }
}

pub(super) fn internal(message: &str) -> QueryError {
    QueryError::runtime(ErrorClass::DatabaseError, "Internal", message)
}
