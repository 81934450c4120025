//! The Filter stage, and chains of filters fused into one stage.
//!
//! WHAT
//! ====
//! A Filter keeps the rows of its input batch on which its predicate is true (false and null
//! drop the row; any other value is a type error). Predicate pushdown turns `WHERE a AND b
//! AND c` into one Filter per conjunct, stacked in one pipeline:
//!
//! ```text
//!   Filter c ◀ Filter b ◀ Filter a ◀ NodeScan        (three stages, each reads its properties)
//!   Filter [a, b, c]              ◀ NodeScan        (one stage: a fused chain)
//! ```
//!
//! FUSED CHAINS
//! ============
//! When a Filter is pushed onto a pipeline whose top stage is a Filter and the JIT covers
//! every operator of both (`plexus_jit::shape`: what EXPLAIN calls `jit=eligible`), the lower
//! stage takes the upper one's predicate as its next *step* ([`Stage::fuse`]) — in the serial
//! plan and in each parallel worker alike, since both build their pipelines through
//! `Pipeline::push`. A fused stage runs a batch in one of two ways:
//!
//! - compiled (`jit` on, or adaptive once the code is ready): one `plexus_jit` function over
//!   all the steps' predicates, bottom first, in one loop — each property the chain reads
//!   fetched once for the batch and loaded once per row, where stacked filters fetched it
//!   per filter, and no intermediate batch copied between filters. It returns the rows that
//!   pass every step and how many passed each step (PROFILE's rows per filter);
//! - step by step (`jit` off, adaptive before the code is ready, a batch whose column types
//!   are not compiled, or one on which some row of some step would raise an error): each
//!   predicate on the rows the steps below kept, exactly as the stacked stages ran — the
//!   vectorised interpreter where it covers the predicate, else row at a time.
//!
//! Same rows, same errors: a row passes the chain exactly when every predicate is true on it,
//! which is when the stacked filters keep it. The compiled path returns nothing for a batch on
//! which any predicate could fail on any row — including rows a lower step drops, which the
//! stacked filters never evaluate — so such a batch runs step by step and raises exactly the
//! stacked plan's error, or none.
//!
//! COMPILED PIPELINES
//! ==================
//! An Aggregate whose input pipeline ends in a Filter stage (one filter or a fused chain)
//! offers that stage its state before pulling (`Operator::absorb`: the serial Aggregate its
//! table, a parallel worker each morsel's partial state; `exec::compiled_pipeline` tells
//! what else may take it). The stage takes it when `jit` is
//! not off, the JIT covers the chain and the aggregation together (`plexus_jit::Program`
//! with an `AggregateProgram`: at most one grouping key, `count`, `sum`, `avg`, `min`, `max`
//! without DISTINCT) and the aggregation reads no property the filters do not read —
//! EXPLAIN's `jit=eligible pipeline` — and from then on outputs no rows:
//! it feeds the rows its filters keep to the Aggregate itself, which takes its state back
//! (`Operator::reclaim`) once the input is exhausted.
//!
//! ```text
//!   Aggregate ◀ [ Filter [a, b] ◀ NodeScan ]       rows kept by a and b go up, then grouped
//!   Aggregate ◀ [ Filter [a, b] + aggregate ◀ NodeScan ]   one loop: test, group, update
//! ```
//!
//! Why not when the aggregation reads more: the loop reads every property for every row of
//! the batch, the filters' and the aggregation's alike; a selective filter keeps a few rows,
//! and reading the aggregation's properties for those only (the stacked way: the kept rows
//! copied out, then an aggregation loop of their own, `compiled_pipeline::AggregateFeed`)
//! costs less than reading them for all when the filters keep few rows and the rows have
//! to be decoded (spilled); where the properties are in memory the two ways measure alike
//! (`docs/benchmarks.md`, "Compiled pipelines and projections").
//!
//! Per batch, while the state is a typed table (`typed_aggregate`) and compiled code is ready
//! for the batch's column types, one compiled function tests each row against every
//! predicate and, on a kept row, computes its key and arguments and updates its group's
//! states in place (`TypedTable::run_compiled`), the values in registers from the property
//! load to the accumulator. The code stops before a row it cannot finish: a new group (Rust
//! creates it in first-seen order, under the group limit, and the code goes on from that
//! row), or a key outside the dense range, an integer sum that would overflow, a row on
//! which a predicate, the key or an argument would raise an error. From that row on, the
//! batch runs as without a JIT: the steps one by one, then the Aggregate's own feed.
//!
//! Same results: every row before the stop was tested and fed exactly as the interpreter
//! does (no error on it anywhere), and from the stop on the interpreter runs; it raises the
//! error it raises on the whole batch, since the rows before raised none. One difference
//! remains and is undone: the stacked filters test the whole batch before the Aggregate
//! sees a row, so when the steps fail on the rest of a batch, what compiled code fed of it
//! is rolled back (`TypedTable::roll_back`: the groups, replayed sums and row count that
//! decide which error a worker's partial aggregate raises when merged). Every other case
//! — the Aggregate's own types declined, a string key, a float column where integers were
//! met — is the typed table's or the row path's as before. The differential property test
//! `exec::jit::differential::pipelines` compares both ways, serial and as workers' morsels.
//!
//! PROFILE
//! =======
//! Every Filter of a chain keeps its own PROFILE line. The stage reports under its top
//! filter's number (its rows are the stage's output) and writes the lower steps' rows into
//! their own numbers ([`Stage::profile_fused`]); each line's time is the chain's (its input's
//! included, like every operator's), and each line's `jit=` tells how the chain's batches ran,
//! with `fused=N` when they ran as one loop of N filters and `+aggregate` when the Aggregate
//! above ran in that loop (its rows are still the filters' kept rows).

use super::aggregate::AggregateSink;
use super::compiled_pipeline::{PipelineJit, rest_of};
use super::jit::OperatorJit;
use super::ops::passes_in;
use super::pipeline::{Flow, Stage};
use super::{Batch, ExecContext};
use crate::context::{JitProfile, OperatorProfile, Sink};
use crate::eval::Env;
use crate::eval::prefetch::{Prefetched, PropertyReads};
use crate::eval::vector;
use arrow::array::{Array, BooleanArray};
use plexus_jit::{JitMode, Program};
use plexus_plan::logical::BExpr;
use plexus_value::error::Result;
use std::time::Duration;

/// A Filter stage: one filter, or a fused chain of them (see the module docs).
pub(super) struct Filter {
    /// The filters' predicates, bottom first (what the compiled code evaluates); never empty.
    predicates: Vec<BExpr>,
    /// One per predicate, in its order.
    steps: Vec<Step>,
    /// Every step's property reads, for the compiled path.
    reads: PropertyReads,
    /// Compiled code for all the steps at once, where the `jit` setting and the types allow.
    jit: OperatorJit,
    /// The Aggregate above, fed by this stage (see COMPILED PIPELINES).
    sink: Option<Absorbed>,
    /// The compiled pipeline's code state, kept from one absorbed sink to the next (a
    /// parallel worker's each morsel): `None` until an Aggregate first asks.
    pipeline_jit: Option<PipelineJit>,
    /// The bottom step's predicate is the equality the node scan right below seeks
    /// (`is_seek_equality`): on a batch that scan found exactly, the step passes every row
    /// without evaluating it (see `exec::scan`, EXACT SEEKS).
    pub(super) seek_checked: bool,
}

/// An Aggregate's state this stage feeds (see COMPILED PIPELINES).
struct Absorbed {
    sink: AggregateSink,
    /// This stage's PROFILE number (the top filter's), for the rows it keeps.
    profile_id: Option<usize>,
    /// Rows the top filter kept since PROFILE last took them.
    kept: u64,
}

/// One filter of a stage (its predicate is the stage's at the same index).
struct Step {
    /// The predicate's property reads, fetched per batch (see `eval::prefetch`).
    reads: PropertyReads,
    /// PROFILE's number of this filter when it is a lower step of a chain (the top one's is
    /// the stage's, kept by the pipeline).
    profile_id: Option<usize>,
    /// Rows this step passed since PROFILE last took them (lower steps only).
    passed: u64,
}

impl Step {
    fn new(predicate: &BExpr) -> Step {
        Step {
            reads: PropertyReads::of_filters(std::slice::from_ref(predicate)),
            profile_id: None,
            passed: 0,
        }
    }

    /// The rows of `batch` on which `predicate` (this step's) is true, by the vectorised
    /// interpreter where it covers the predicate, else row at a time.
    fn kept(
        &self,
        predicate: &BExpr,
        batch: &Batch,
        prefetched: &Prefetched,
        ctx: &mut ExecContext,
    ) -> Result<Vec<u32>> {
        if let Some(mask) = vector::predicate(predicate, batch, prefetched, ctx) {
            return Ok(true_rows(&mask));
        }
        let mut kept = Vec::new();
        for row in 0..batch.len() {
            let mut env = Env::with_prefetched(batch, row, prefetched);
            if passes_in(predicate, &mut env, ctx)? {
                kept.push(row as u32);
            }
        }
        Ok(kept)
    }
}

/// The rows on which `mask` is true (not false, not null): the set bits of its values and
/// validity, found a word at a time.
fn true_rows(mask: &BooleanArray) -> Vec<u32> {
    match mask.nulls() {
        Some(nulls) => (mask.values() & nulls.inner()).set_indices_u32().collect(),
        None => mask.values().set_indices_u32().collect(),
    }
}

impl Filter {
    pub(super) fn new(predicate: &BExpr) -> Filter {
        let step = Step::new(predicate);
        Filter {
            reads: step.reads.clone(),
            predicates: vec![predicate.clone()],
            jit: OperatorJit::new(Program::filter(std::slice::from_ref(predicate))),
            steps: vec![step],
            sink: None,
            pipeline_jit: None,
            seek_checked: false,
        }
    }

    /// Whether the bottom step is known true on every row of `input` (see `seek_checked`).
    fn bottom_step_holds(&self, input: &Batch) -> bool {
        self.seek_checked && input.sought_exactly()
    }

    /// The predicate of a Filter of one step (not a fused chain).
    pub(super) fn only_predicate(&self) -> Option<&BExpr> {
        match &self.predicates[..] {
            [predicate] => Some(predicate),
            _ => None,
        }
    }

    /// Runs the steps one by one on `input` (see FUSED CHAINS), into `out`. `prefetched`:
    /// the first step's reads, when the caller already fetched them.
    fn step_by_step(
        &mut self,
        input: &Batch,
        mut prefetched: Option<Prefetched>,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let last = self.steps.len() - 1;
        let mut kept_so_far: Option<Batch> = None;
        let bottom_holds = self.bottom_step_holds(input);
        for (k, (step, predicate)) in self.steps.iter_mut().zip(&self.predicates).enumerate() {
            let batch = kept_so_far.as_ref().unwrap_or(input);
            let kept = if k == 0 && bottom_holds {
                (0..batch.len() as u32).collect()
            } else {
                let prefetched = match prefetched.take() {
                    Some(fetched) => fetched,
                    None => step.reads.fetch(batch, ctx),
                };
                step.kept(predicate, batch, &prefetched, ctx)?
            };
            if k == last {
                out.push_rows(batch, &kept);
                return Ok(());
            }
            step.passed += kept.len() as u64;
            if kept.is_empty() {
                // Nothing reaches the steps above: they pass nothing.
                return Ok(());
            }
            let mut next = Batch::with_capacity(batch.width(), kept.len());
            next.push_rows(batch, &kept);
            kept_so_far = Some(next);
        }
        Ok(())
    }
}

impl Filter {
    /// Feeds the rows of `input` the steps keep to the absorbed Aggregate (see COMPILED
    /// PIPELINES): by compiled code while it can, then the rest of the batch step by step
    /// into the Aggregate's own feed.
    /// The rows of `input` every step keeps, into `out` (the stage's work when it feeds no
    /// Aggregate): compiled code for the chain where it runs, else the steps one by one.
    fn filter_into(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        if self.steps.len() == 1 && self.bottom_step_holds(input) {
            // Every row passes: the batch is the output (unmarked: the mark is the scan's).
            std::mem::swap(input, out);
            out.mark_sought(false, true);
            return Ok(());
        }
        if !self.jit.wants(input.len(), ctx) {
            self.step_by_step(input, None, out, ctx)?;
            return Ok(());
        }
        let prefetched = self.reads.fetch(input, ctx);
        let Some(compiled) = self.jit.mask(input, &prefetched, ctx) else {
            // One step: its reads are the ones just fetched.
            let reuse = (self.steps.len() == 1).then_some(prefetched);
            self.step_by_step(input, reuse, out, ctx)?;
            return Ok(());
        };
        debug_assert_eq!(compiled.passed.len(), self.steps.len());
        // The top step's rows are the stage's output, counted by the pipeline.
        for (step, passed) in self.steps.iter_mut().zip(&compiled.passed).rev().skip(1) {
            step.passed += passed;
        }
        let kept = true_rows(&compiled.mask);
        debug_assert_eq!(
            Some(kept.len() as u64),
            compiled.passed.last().copied(),
            "the chain's mask keeps the rows its last step passes"
        );
        out.push_rows(input, &kept);
        Ok(())
    }

    fn feed_sink(
        &mut self,
        absorbed: &mut Absorbed,
        input: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let mark = absorbed.sink.typed().map(|table| table.mark());
        let (from, passed) = match self.pipeline_jit.as_mut() {
            Some(pipeline) => pipeline.run(&mut absorbed.sink, input, ctx),
            None => (0, Vec::new()),
        };
        let top = self.steps.len() - 1;
        if let Some((top_passed, below)) = passed.split_last() {
            for (step, passed) in self.steps[..top].iter_mut().zip(below) {
                step.passed += passed;
            }
            absorbed.kept += top_passed;
        }
        let Some(rest) = rest_of(input, from) else {
            return Ok(());
        };
        let mut kept = Batch::with_capacity(rest.width(), rest.len());
        if let Err(e) = self.step_by_step(&rest, None, &mut kept, ctx) {
            // Stacked filters fail before the Aggregate sees any row of the batch: what
            // compiled code fed of it goes (a worker's partial aggregate is merged up to its
            // error).
            if let (Some(mark), Some(table)) = (mark.filter(|_| from > 0), absorbed.sink.typed()) {
                table.roll_back(mark);
            }
            return Err(e);
        }
        absorbed.kept += kept.len() as u64;
        absorbed.sink.feed(&kept, ctx)
    }
}

impl Stage for Filter {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        if let Some(mut absorbed) = self.sink.take() {
            // Put back even on an error: a worker sends what was fed before it.
            let fed = self.feed_sink(&mut absorbed, input, ctx);
            self.sink = Some(absorbed);
            fed?;
            return Ok(Flow::NeedMoreInput);
        }
        self.filter_into(input, out, ctx)?;
        Ok(Flow::NeedMoreInput)
    }

    fn reset(&mut self) {
        self.sink = None;
    }

    fn take_jit_profile(&mut self) -> Option<JitProfile> {
        let filter = self.jit.take_profile();
        let pipeline = self.pipeline_jit.as_mut().map(PipelineJit::take_profile);
        match pipeline {
            // Batches ran either way; each `jit` records only the ones it saw.
            Some(pipeline) if pipeline.compiled_batches + pipeline.interpreted_batches > 0 => {
                Some(pipeline)
            }
            _ => Some(filter),
        }
    }

    fn fuse(&mut self, above: &mut dyn Stage, own_profile_id: Option<usize>) -> bool {
        let Some(upper) = above.as_filter() else {
            return false;
        };
        if !self.jit.eligible() || !upper.jit.eligible() {
            return false;
        }
        if let Some(top) = self.steps.last_mut() {
            top.profile_id = own_profile_id;
        }
        self.steps.append(&mut upper.steps);
        self.predicates.append(&mut upper.predicates);
        self.reads = PropertyReads::of_filters(&self.predicates);
        self.jit = OperatorJit::new(Program::filter(&self.predicates));
        true
    }

    fn absorb(
        &mut self,
        sink: Sink,
        own_profile_id: Option<usize>,
        ctx: &ExecContext,
    ) -> std::result::Result<(), Sink> {
        if ctx.state.jit == JitMode::Off || self.sink.is_some() {
            return Err(sink);
        }
        let sink = sink.downcast::<AggregateSink>()?;
        let replay = sink.replay();
        if self
            .pipeline_jit
            .as_ref()
            .is_none_or(|p| p.replay() != replay)
        {
            self.pipeline_jit = Some(PipelineJit::new(&self.predicates, &sink));
        }
        // One loop only when the aggregation reads no property the filters do not: a
        // property fetched for every row costs more than copying the kept rows, and the
        // feeding stage above (`compiled_pipeline`) then reads it for those rows only.
        let reads_more = |p: &PipelineJit| p.properties() > self.jit.properties();
        if !(self.pipeline_jit.as_ref()).is_some_and(|p| p.eligible() && !reads_more(p)) {
            return Err(sink);
        }
        self.sink = Some(Absorbed {
            sink: *sink,
            profile_id: own_profile_id,
            kept: 0,
        });
        Ok(())
    }

    fn reclaim(&mut self) -> Option<Sink> {
        let absorbed = self.sink.take()?;
        Some(Box::new(absorbed.sink))
    }

    fn as_filter(&mut self) -> Option<&mut Filter> {
        Some(self)
    }

    fn profile_fused(
        &mut self,
        profile: &mut [OperatorProfile],
        time: Duration,
        ran: bool,
        jit: Option<&JitProfile>,
    ) {
        if ran && let Some(absorbed) = &mut self.sink {
            // The top filter's rows went to the Aggregate, not out of the stage.
            if let Some(entry) = absorbed.profile_id.and_then(|id| profile.get_mut(id)) {
                entry.rows += std::mem::take(&mut absorbed.kept);
            }
        }
        let top = self.steps.len() - 1;
        for step in &mut self.steps[..top] {
            let Some(entry) = step.profile_id.and_then(|id| profile.get_mut(id)) else {
                continue;
            };
            entry.time += time;
            if ran {
                entry.rows += std::mem::take(&mut step.passed);
                entry.jit = JitProfile::merge(entry.jit.take(), jit.cloned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::true_rows;
    use arrow::array::BooleanArray;

    /// True rows only (not false, not null), of a mask with an offset too.
    #[test]
    fn true_rows_skip_false_and_null_rows() {
        let mask = BooleanArray::from(vec![
            Some(true),
            None,
            Some(false),
            Some(true),
            None,
            Some(true),
            Some(true),
        ]);
        assert_eq!(true_rows(&mask), vec![0, 3, 5, 6]);
        let sliced = mask.slice(1, 5);
        assert_eq!(true_rows(&sliced), vec![2, 4]);
        let all: BooleanArray = (0..130).map(|i| Some(i % 3 == 0)).collect();
        assert_eq!(
            true_rows(&all),
            (0..130).filter(|i| i % 3 == 0).collect::<Vec<_>>()
        );
        assert!(true_rows(&BooleanArray::from(Vec::<bool>::new())).is_empty());
        assert_eq!(sliced.len(), 5);
    }
}
