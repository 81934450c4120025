//! Physical execution: push-based pipelines of streaming stages between pipeline breakers.
//!
//! BATCHES
//! =======
//! Operators exchange [`Batch`]es: one column per slot (see `plan` for slots), up to
//! [`BATCH_ROWS`] rows — a `Vec<Value>`, or a typed form (an Arrow vector, a scan's node ids)
//! that readers needing `Value`s see converted (`context::Batch`, TYPED COLUMNS). An
//! operator that binds a variable writes its column; the others are
//! passed through (a `Project` moves whole columns into place without touching rows). A slot
//! nothing has bound yet is an *unset* column — null on every row, no values stored — so a
//! scan's batch costs one column, not one per slot of the statement, and a filter copying
//! the rows it keeps copies only the columns that are set.
//!
//! PIPELINES AND OPERATORS
//! =======================
//! The plan is cut at its pipeline breakers. The streaming operators between two breakers
//! (scans and seeks, expands, Filter, Project, Unwind, Distinct, Skip, Limit, a hash join's
//! probe, Apply / Optional, procedure calls) are *stages* of one `pipeline::Pipeline`: one
//! driver loop pulls a batch from the pipeline's source and pushes it through every stage,
//! depth first, bounded, stopping early when a LIMIT is reached (see `pipeline`). Breakers
//! and leaves are *operators*:
//!
//! ```text
//!   trait Operator { fn next(&mut self, ctx) -> Result<Option<Batch>>; fn reset(&mut self); }
//! ```
//!
//! A pipeline is itself an operator, so the breaker above it, the parallel exchange or the
//! result cursor pulls its output batch by batch (results stream to the client), and a
//! breaker's output is pulled as the source of the next pipeline. Pipeline breakers (Sort,
//! Aggregate, every writing operator, a HashJoin's build side) consume their whole input
//! before producing. `reset` rewinds an operator tree so that an `Apply`-style parent can run
//! it again for its next argument row.
//!
//! ARGUMENTS
//! =========
//! An inner plan's leaf `Argument` yields the row its `Apply` / `Optional` / `Merge` /
//! subquery expression is running it for. The parent pushes that row on
//! [`ExecContext::arguments`] around each call into the inner plan; `Argument` copies the top
//! of the stack on its first call. At the top of a query the stack is empty and `Argument`
//! yields one all-null row.
//!
//! WRITES ARE EAGER
//! ================
//! CREATE, MERGE, SET, REMOVE, DELETE and FOREACH read all their input rows before the first
//! write, and emit rows only after the last. So a clause never observes its own writes half
//! way (`MATCH (n) CREATE ()` terminates), and later clauses see all of them — what Cypher's
//! clause-at-a-time semantics asks for. MERGE, row by row, sees the nodes it created for
//! earlier rows (read-your-writes of the transaction).
//!
//! PARALLELISM
//! ===========
//! In a statement that cannot write, a pipeline of Project / Filter / Expand /
//! VarLengthExpand / HashJoin (its table built once, shared) over a large node scan of the
//! top-level argument runs on worker threads
//! under a `Parallel` exchange operator (`parallel`: morsels of the scan, one read-only fork
//! of the transaction per worker, rows gathered in scan order so they equal the serial
//! rows). An Aggregate, Sort or Distinct directly above such a pipeline runs partially in the
//! workers, per morsel, merged on the calling thread in morsel order (`aggregate`: partial
//! states; `sort`: sorted runs, k-way merged; `parallel`: per-morsel first occurrences).
//! Everything else — the operator consuming the rows included — runs on the calling thread.
//!
//! NOT YET
//! =======
//! Parallel hash-join builds, seeks, inner plans and breakers above anything but a scan
//! pipeline, and typed column vectors (columns hold `Value`s) are later steps; the stage
//! trait and the batch format are what they will plug into.

mod aggregate;
mod call_in_transactions;
mod compiled_pipeline;
mod expand;
mod filter;
mod jit;
mod join;
mod load_csv;
mod ops;
mod parallel;
mod pipeline;
mod reach;
mod scan;
mod shortest;
mod sort;
mod typed_aggregate;
mod write;

pub use call_in_transactions::{
    IMPLICIT_TRANSACTION_REQUIRED, INNER_TRANSACTION_IDS, implicit_transaction_required,
};
pub use parallel::{
    MAX_FORK_WRITES, MORSELS_AHEAD_PER_WORKER, WORKER_QUEUE_BATCHES,
    live_workers as live_parallel_workers,
};

pub(crate) use crate::context::check_materialized;
pub use crate::context::{
    Arguments, BATCH_ROWS, Batch, BuildSubplan, ExecContext, ExecState, MAX_MATERIALIZED_ROWS,
    Operator, OperatorProfile, UpdateStats, drain,
};
pub(crate) use jit::jit_note;
use pipeline::Pipeline;
use plexus_plan::logical::LogicalPlan;
use plexus_value::error::Result;
use plexus_value::value::Value;
use std::time::Instant;

/// The output of a pipeline breaker (sort, aggregate, eager write): computed on the first
/// `next`, then handed out batch by batch until `reset`.
#[derive(Default)]
pub(crate) struct Materialized {
    batches: Option<std::vec::IntoIter<Batch>>,
}

impl Materialized {
    pub(crate) fn is_computed(&self) -> bool {
        self.batches.is_some()
    }

    pub(crate) fn fill(&mut self, batches: Vec<Batch>) {
        self.batches = Some(batches.into_iter());
    }

    pub(crate) fn next_batch(&mut self) -> Option<Batch> {
        self.batches.as_mut().and_then(|b| b.next())
    }

    pub(crate) fn reset(&mut self) {
        self.batches = None;
    }
}

/// Rows cut into batches of [`BATCH_ROWS`].
pub(crate) fn into_batches(rows: impl IntoIterator<Item = Vec<Value>>, width: usize) -> Vec<Batch> {
    let mut batches = Vec::new();
    let mut out = Batch::new(width);
    for row in rows {
        out.push_row(row);
        if out.len() >= BATCH_ROWS {
            batches.push(std::mem::replace(&mut out, Batch::new(width)));
        }
    }
    if !out.is_empty() {
        batches.push(out);
    }
    batches
}

/// Wraps an operator to count its rows and time (PROFILE).
struct Profiled {
    id: usize,
    inner: Box<dyn Operator>,
}

impl Operator for Profiled {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        let start = Instant::now();
        let result = self.inner.next(ctx);
        let elapsed = start.elapsed();
        if let Some(profile) = ctx.state.profile.as_mut()
            && let Some(entry) = profile.get_mut(self.id)
        {
            entry.time += elapsed;
            if let Ok(Some(batch)) = &result {
                entry.rows += batch.len() as u64;
            }
        }
        result
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// Builds the operator tree of a plan. With `profile`, every operator records its rows and
/// time under its pre-order number (operator times include their inputs').
pub fn build(plan: &LogicalPlan, profile: bool) -> Box<dyn Operator> {
    let mut counter = 0;
    build_numbered(plan, profile, &mut counter).into_operator()
}

/// [`build`] without profiling: the [`BuildSubplan`] a statement's expressions run their
/// subqueries with.
pub fn build_subplan(plan: &LogicalPlan) -> Box<dyn Operator> {
    build(plan, false)
}

/// What building a plan node gives: a pipeline that more stages may go on top of, or an
/// operator of its own (a breaker, a leaf) — which a stage on top makes the source of a new
/// pipeline.
enum Built {
    Operator(Box<dyn Operator>),
    Pipeline(Pipeline),
}

impl Built {
    fn into_operator(self) -> Box<dyn Operator> {
        match self {
            Built::Operator(op) => op,
            Built::Pipeline(pipeline) => Box::new(pipeline),
        }
    }

    /// `stage` on top of this, profiled under `profile_id`.
    fn then(self, stage: Box<dyn pipeline::Stage>, profile_id: Option<usize>) -> Built {
        let mut pipeline = match self {
            Built::Pipeline(pipeline) => pipeline,
            Built::Operator(source) => Pipeline::new(source),
        };
        pipeline.push(stage, profile_id);
        Built::Pipeline(pipeline)
    }
}

/// Builds `plan` numbered from `counter` in pre-order; with `profile`, an operator is wrapped
/// to record its rows and time, a stage records them in its pipeline.
fn build_numbered(plan: &LogicalPlan, profile: bool, counter: &mut usize) -> Built {
    let id = *counter;
    *counter += 1;
    match ops::build_operator(plan, profile, counter, profile.then_some(id)) {
        Built::Operator(inner) if profile => Built::Operator(Box::new(Profiled { id, inner })),
        built => built,
    }
}
