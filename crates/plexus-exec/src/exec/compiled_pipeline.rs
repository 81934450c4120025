//! Compiled pipelines: an Aggregate's input rows fed to it by compiled code.
//!
//! WHAT
//! ====
//! When `jit` is not off, an Aggregate hands its state (`aggregate::AggregateSink`: the
//! serial table, or a parallel worker's state for one morsel) to its input pipeline before
//! pulling (`Operator::absorb`), and takes it back when the input is exhausted
//! (`Operator::reclaim`). The pipeline's top stage takes it when it can feed it by compiled
//! code — the top stage then outputs no rows:
//!
//! ```text
//!   Aggregate ◀ [ Filter [a, b] + aggregate ◀ Expand ◀ NodeScan ]   filters and groups, one loop
//!   Aggregate ◀ [ AggregateFeed ◀ Project ◀ NodeScan ]               groups, one loop
//! ```
//!
//! - a Filter stage (one filter or a fused chain) the JIT covers together with the
//!   aggregation, which reads no property the filters do not: its predicates and the
//!   aggregation compile into one loop (`exec::filter`, COMPILED PIPELINES);
//! - otherwise, if the JIT covers the aggregation alone, an [`AggregateFeed`] stage is pushed
//!   on top of the pipeline (kept there for later runs: a worker's next morsel, an inner
//!   plan's next argument row): every row of its input is fed by a loop with no predicate.
//!
//! What the loop covers is the JIT's `AggregateProgram`: at most one grouping key, an
//! INTEGER where it is not null; `count`, `sum`, `avg`, `min`, `max` without DISTINCT, of
//! INTEGER or FLOAT arguments (`count` of anything). Scans, expands, joins and the rest
//! below stay interpreted (a Project below compiles on its own: `jit::ProjectJit`): they
//! make each batch's typed columns, which the loop reads — one call of compiled code per
//! batch.
//!
//! [`PipelineJit`] runs the code over a batch while the aggregation's state is a typed table
//! (`typed_aggregate`, `TypedTable::run_compiled`) and compiled code is ready for the
//! batch's column types; it stops at the first row it cannot finish, from which the caller
//! runs the interpreter on the rest of the batch ([`rest_of`]). Why that gives the
//! interpreter's rows and errors: `exec::filter`, COMPILED PIPELINES; for an
//! [`AggregateFeed`], with no filter, the rest of the batch goes to the Aggregate's own feed,
//! which raises the error its feed of the whole batch raises (the rows before raised none).

use super::aggregate::AggregateSink;
use super::jit::{OperatorJit, Ran};
use super::pipeline::{Flow, Stage};
use super::{Batch, ExecContext};
use crate::context::{JitProfile, OperatorProfile, Sink};
use crate::eval::prefetch::PropertyReads;
use plexus_jit::{JitMode, Program};
use plexus_plan::logical::BExpr;
use plexus_value::error::Result;
use std::time::Duration;

/// Under `adaptive`, a batch of fewer rows goes to the typed table in Rust: a call of
/// compiled code costs a few microseconds of setup (its leaf columns typed, its arguments
/// and state laid out), which a loop over so few rows cannot win back — the kept rows of a
/// selective filter come in such batches (3 % of a 1,024-row batch: about 30). (`on`
/// compiles every batch.)
const ADAPTIVE_MIN_BATCH_ROWS: usize = 256;

/// The compiled code of a pipeline's predicates (none, for an [`AggregateFeed`]) and the
/// aggregation its rows feed.
pub(super) struct PipelineJit {
    jit: OperatorJit,
    /// Every property the predicates, the key and the arguments read.
    reads: PropertyReads,
    /// A worker's (recording sums for replay) or the serial Aggregate's.
    replay: bool,
}

/// Where compiled pipeline code left a batch to the interpreter (the batch's length: it
/// did every row); it ran when it did at least one.
struct FallbackFrom(usize);

impl Ran for FallbackFrom {
    fn ran(&self) -> bool {
        self.0 > 0
    }
}

impl PipelineJit {
    /// For `predicates` (bottom first) and `sink`'s aggregation.
    pub(super) fn new(predicates: &[BExpr], sink: &AggregateSink) -> PipelineJit {
        let aggregate = sink.program();
        let everything: Vec<BExpr> = match &aggregate {
            Ok(aggregate) => {
                let arguments = aggregate.calls.iter().filter_map(|(_, arg)| arg.clone());
                (predicates.iter().cloned())
                    .chain(aggregate.key.clone())
                    .chain(arguments)
                    .collect()
            }
            Err(_) => Vec::new(),
        };
        let program = Program {
            predicates: predicates.to_vec(),
            aggregate: aggregate.ok(),
            project: Vec::new(),
        };
        PipelineJit {
            // Without an aggregation the program is a filter's, never this pipeline's.
            jit: match program.aggregate {
                Some(_) => OperatorJit::new(program),
                None => OperatorJit::new(Program::filter(&[])),
            },
            reads: PropertyReads::of_filters(&everything),
            replay: sink.replay(),
        }
    }

    /// Whether the JIT covers the predicates and the aggregation together.
    pub(super) fn eligible(&self) -> bool {
        self.jit.eligible()
    }

    /// How many distinct properties the code reads.
    pub(super) fn properties(&self) -> usize {
        self.jit.properties()
    }

    /// Whether the code records sums for replay (a parallel worker's).
    pub(super) fn replay(&self) -> bool {
        self.replay
    }

    /// What ran since PROFILE last took it.
    pub(super) fn take_profile(&mut self) -> JitProfile {
        self.jit.take_profile()
    }

    /// Feeds the rows of `input` that pass every predicate to `sink` by compiled code, as
    /// far as it can (see the module docs): the row from which the caller must run the
    /// interpreter (`input.len()`: none), and per predicate the rows before it that passed
    /// it and every one below. `(0, [])` when no code ran.
    pub(super) fn run(
        &mut self,
        sink: &mut AggregateSink,
        input: &Batch,
        ctx: &mut ExecContext,
    ) -> (usize, Vec<u64>) {
        let len = input.len();
        if ctx.state.jit == JitMode::Adaptive && len < ADAPTIVE_MIN_BATCH_ROWS {
            self.jit.interpreted();
            return (0, Vec::new());
        }
        if !self.jit.wants(len, ctx) {
            return (0, Vec::new());
        }
        let Some(table) = sink.typed() else {
            self.jit.interpreted();
            return (0, Vec::new());
        };
        let prefetched = self.reads.fetch(input, ctx);
        let mut passed = Vec::new();
        let from = (self.jit)
            .with_code(input, &prefetched, ctx, |code, columns, params| {
                passed = vec![0; code.predicates()];
                FallbackFrom(table.run_compiled(code, (columns, params), len, &mut passed))
            })
            .map_or(0, |from| from.0);
        (from, passed)
    }
}

/// Rows `from..` of `input` (taken out of it), or `None` when there are none.
pub(super) fn rest_of(input: &mut Batch, from: usize) -> Option<Batch> {
    match from {
        0 if !input.is_empty() => Some(std::mem::replace(input, Batch::new(input.width()))),
        from => input.split_off(from),
    }
}

/// A stage on top of a pipeline that feeds every row of its input to the Aggregate above by
/// compiled code (see the module docs); it outputs no rows.
pub(super) struct AggregateFeed {
    sink: Option<AggregateSink>,
    jit: PipelineJit,
    /// The Aggregate's PROFILE number: its line says how the feed ran.
    aggregate_id: Option<usize>,
}

/// An [`AggregateFeed`] holding `sink`, if `jit` is not off and the JIT covers its
/// aggregation; else the sink back.
pub(super) fn feed_stage(
    sink: Sink,
    aggregate_id: Option<usize>,
    ctx: &ExecContext,
) -> std::result::Result<Box<dyn Stage>, Sink> {
    if ctx.state.jit == JitMode::Off {
        return Err(sink);
    }
    let sink = sink.downcast::<AggregateSink>()?;
    let jit = PipelineJit::new(&[], &sink);
    if !jit.eligible() {
        return Err(sink);
    }
    Ok(Box::new(AggregateFeed {
        sink: Some(*sink),
        jit,
        aggregate_id,
    }))
}

impl Stage for AggregateFeed {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        let Some(sink) = self.sink.as_mut() else {
            // Run without an Aggregate's state (none was handed over this time): pass the
            // rows on, as if the stage were not there.
            *out = std::mem::replace(input, Batch::new(0));
            return Ok(Flow::NeedMoreInput);
        };
        let (from, _) = self.jit.run(sink, input, ctx);
        if let Some(rest) = rest_of(input, from) {
            sink.feed(&rest, ctx)?;
        }
        Ok(Flow::NeedMoreInput)
    }

    fn reset(&mut self) {
        self.sink = None;
    }

    fn absorb(
        &mut self,
        sink: Sink,
        _own_profile_id: Option<usize>,
        _ctx: &ExecContext,
    ) -> std::result::Result<(), Sink> {
        if self.sink.is_some() {
            return Err(sink);
        }
        let sink = sink.downcast::<AggregateSink>()?;
        if sink.replay() != self.jit.replay() {
            return Err(sink);
        }
        self.sink = Some(*sink);
        Ok(())
    }

    fn reclaim(&mut self) -> Option<Sink> {
        Some(Box::new(self.sink.take()?))
    }

    fn profile_fused(
        &mut self,
        profile: &mut [OperatorProfile],
        _time: Duration,
        ran: bool,
        _jit: Option<&JitProfile>,
    ) {
        if ran && let Some(entry) = self.aggregate_id.and_then(|id| profile.get_mut(id)) {
            entry.jit = JitProfile::merge(entry.jit.take(), Some(self.jit.take_profile()));
        }
    }
}
