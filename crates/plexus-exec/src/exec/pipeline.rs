//! Push-based pipelines: a source operator and a chain of streaming stages driven by one loop.
//!
//! WHAT
//! ====
//! The plan is cut at its pipeline breakers (Aggregate, Sort, the writes, Union, a hash join's
//! build side, the inner plans of Apply / Optional / subqueries, `Parallel`). Between two
//! breakers, the streaming operators — NodeScan, seeks, Expand, VarLengthExpand, Filter,
//! Project, Unwind, Distinct, Skip, Limit, the probe of a hash join, Apply / Optional over
//! their inner plan, procedure calls — form one [`Pipeline`]: a *source* (the breaker or leaf
//! below, pulled for one batch at a time) and the *stages* above it, bottom first:
//!
//! ```text
//!   Sort ◀─ sink ─ [ Project ◀ Filter ◀ Expand ◀ NodeScan ] ◀─ source ─ Argument
//!                    └──────────── one Pipeline, one driver loop ────────┘
//! ```
//!
//! A stage does not call its input: the driver pushes each batch the source yields through
//! the stages, each [`Stage::execute`] turning an input batch into an output batch, and
//! hands the top stage's output to whoever consumes the pipeline — the sink of the breaker
//! above (its `feed`), the parallel exchange, or the result cursor. Per batch that is one
//! loop over the stages instead of a chain of nested `next` calls, and a stage's state is
//! only its own (no input to own or rewind).
//!
//! BOUNDED OUTPUT, DEPTH FIRST
//! ===========================
//! One input row may expand into many rows (an UNWIND of a long list, a node of high degree,
//! a variable-length expand). A stage stops when its output holds [`BATCH_ROWS`] rows and
//! says so ([`Flow::HaveMoreOutput`]); the driver keeps that input *held* at the stage and
//! asks again for more once the rows above have been consumed. A stage that cannot stop in
//! the middle of a row (an Expand appends all neighbours of a row) may return more; the
//! driver cuts the surplus into batches of `BATCH_ROWS`, kept at that stage's output. The
//! driver always resumes the *deepest* unfinished place — the surplus of the highest stage,
//! else the input held by it, and so down to the source — so rows leave in the order of the
//! serial, row-at-a-time semantics, and no place holds more than one batch (plus one
//! oversized output of a non-resumable stage):
//!
//! ```text
//!   places, deepest last:  source │ held 0 │ surplus 0 │ held 1 │ surplus 1 │ … │ surplus n-1
//!   resume:                the last place that is not empty; pull the source if none is
//! ```
//!
//! EARLY EXIT
//! ==========
//! A stage that can accept no more input (LIMIT reached) returns [`Flow::Finished`]. What
//! lies below it — held inputs, surpluses, the source — is dropped and never pulled again;
//! its last output still flows up. Before the first pull, [`Stage::open`] runs top stage
//! first, so `LIMIT 0` (or a failing LIMIT count) is known before anything below runs,
//! exactly as when the LIMIT pulled its input.
//!
//! INTERRUPTS
//! ==========
//! Before each batch it moves, the driver looks at the statement's interrupt flag
//! (`ExecState::interrupt`, raised by another thread: a time limit, a client gone) and fails
//! with `INTERRUPTED` once it is raised. Every breaker consumes its input through a
//! pipeline, so even a sort or an aggregation over billions of rows stops within a batch.
//!
//! PROFILE
//! =======
//! A stage is profiled under its operator number: rows it output, and time *including its
//! inputs'* like every other operator — the driver adds the time of each pull of the source
//! and of each stage's `execute` to that stage and to every stage above it.

use super::{BATCH_ROWS, Batch, ExecContext, Operator};
use crate::context::{JitProfile, OperatorProfile, Sink};
use plexus_value::error::Result;
use std::time::{Duration, Instant};

/// What a stage tells the driver after `execute`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// The input is consumed: push the next one.
    NeedMoreInput,
    /// The output is full and the input has more to give: call again with the same input.
    HaveMoreOutput,
    /// No further input can produce output (a LIMIT reached): stop everything below.
    Finished,
}

/// A streaming operator of a pipeline (see module docs).
pub(super) trait Stage: Send {
    /// Called once before the first input (after each `reset`), top stage first.
    fn open(&mut self, _ctx: &mut ExecContext) -> Result<Flow> {
        Ok(Flow::NeedMoreInput)
    }
    /// Appends the output for `input` to `out` (empty, of the input's width). May take the
    /// input's columns when it returns `NeedMoreInput` or `Finished`.
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow>;
    /// Forgets all state to run again (the next argument row of an inner plan).
    fn reset(&mut self);
    /// PROFILE's compiled-code record since the last call (Filter only).
    fn take_jit_profile(&mut self) -> Option<crate::context::JitProfile> {
        None
    }
    /// Takes the stage `above`, about to be pushed on this one, into this stage if both can
    /// run as one (a chain of filters: `exec::filter`, FUSED CHAINS); `own_profile_id` is this
    /// stage's PROFILE number, which the caller then replaces with `above`'s.
    fn fuse(&mut self, _above: &mut dyn Stage, _own_profile_id: Option<usize>) -> bool {
        false
    }
    /// Takes an Aggregate's `sink` to feed in place of output rows, or gives it back
    /// (`Operator::absorb`; a Filter: `exec::filter`, COMPILED PIPELINES); `own_profile_id`
    /// is this stage's PROFILE number.
    fn absorb(
        &mut self,
        sink: Sink,
        _own_profile_id: Option<usize>,
        _ctx: &ExecContext,
    ) -> std::result::Result<(), Sink> {
        Err(sink)
    }
    /// The sink [`Stage::absorb`] took.
    fn reclaim(&mut self) -> Option<Sink> {
        None
    }
    /// This stage as a Filter (what [`Stage::fuse`] looks for).
    fn as_filter(&mut self) -> Option<&mut super::filter::Filter> {
        None
    }
    /// PROFILE of the operators fused into this stage below its own number: `time` to each,
    /// and, when the stage itself `ran` (not a stage below it), their rows and `jit`, the
    /// stage's own compiled-code record.
    fn profile_fused(
        &mut self,
        _profile: &mut [OperatorProfile],
        _time: Duration,
        _ran: bool,
        _jit: Option<&JitProfile>,
    ) {
    }
}

/// One stage and its operator number for PROFILE.
struct Placed {
    stage: Box<dyn Stage>,
    profile_id: Option<usize>,
    /// An input this stage has more output for (`HaveMoreOutput`).
    held: Option<Batch>,
    /// Output of this stage beyond one batch, waiting to go up.
    surplus: Option<Batch>,
}

/// A source and its stages, driven push-style (see module docs). Itself an [`Operator`]:
/// each `next` drives the loop until the top stage has output, so a pipeline is what the
/// breaker, exchange or cursor above pulls, batch by batch.
pub(super) struct Pipeline {
    source: Box<dyn Operator>,
    /// Bottom first.
    stages: Vec<Placed>,
    opened: bool,
    /// The source gave its last batch, or a stage above it finished.
    source_done: bool,
}

/// Where the driver resumes.
enum Resume {
    /// Pull the source and push its batch into stage 0.
    Source,
    /// Run stage `i` on the input it holds.
    Held(usize),
    /// Push the next batch of stage `i`'s surplus into stage `i + 1` (or out).
    Surplus(usize),
}

impl Pipeline {
    pub(super) fn new(source: Box<dyn Operator>) -> Self {
        Pipeline {
            source,
            stages: Vec::new(),
            opened: false,
            source_done: false,
        }
    }

    /// Adds a stage on top, or fuses it into the top one ([`Stage::fuse`]).
    pub(super) fn push(&mut self, mut stage: Box<dyn Stage>, profile_id: Option<usize>) {
        if let Some(top) = self.stages.last_mut()
            && top.held.is_none()
            && top.surplus.is_none()
            && top.stage.fuse(stage.as_mut(), top.profile_id)
        {
            top.profile_id = profile_id;
            return;
        }
        self.stages.push(Placed {
            stage,
            profile_id,
            held: None,
            surplus: None,
        });
    }

    /// The deepest place with rows to go, or `None` when the pipeline is exhausted.
    fn resume_point(&self) -> Option<Resume> {
        for i in (0..self.stages.len()).rev() {
            let placed = &self.stages[i];
            if placed.surplus.is_some() {
                return Some(Resume::Surplus(i));
            }
            if placed.held.is_some() {
                return Some(Resume::Held(i));
            }
        }
        (!self.source_done).then_some(Resume::Source)
    }

    /// Opens the stages top first; a finished one closes everything below it.
    fn open(&mut self, ctx: &mut ExecContext) -> Result<()> {
        self.opened = true;
        for i in (0..self.stages.len()).rev() {
            if self.stages[i].stage.open(ctx)? == Flow::Finished {
                self.finish_below(i);
                break;
            }
        }
        Ok(())
    }

    /// Stage `finished` takes no more input: drops what waits below it (held inputs up to
    /// its own, surpluses below it) and the source. Its own surplus still goes up.
    fn finish_below(&mut self, finished: usize) {
        for (i, placed) in self.stages[..=finished].iter_mut().enumerate() {
            placed.held = None;
            if i < finished {
                placed.surplus = None;
            }
        }
        self.source_done = true;
    }

    /// The next batch of at most `BATCH_ROWS` rows from stage `i`'s surplus.
    fn take_surplus(&mut self, i: usize) -> Batch {
        let placed = &mut self.stages[i];
        let mut batch = placed.surplus.take().expect("resumed at a surplus");
        placed.surplus = batch.split_off(BATCH_ROWS);
        batch
    }

    /// Runs stage `i` on `input` and returns its output (the first `BATCH_ROWS` rows; the
    /// rest becomes its surplus).
    fn run_stage(&mut self, i: usize, mut input: Batch, ctx: &mut ExecContext) -> Result<Batch> {
        // Room for as many rows as came in (most stages keep or drop rows): the columns are
        // not grown by doubling, one reallocation per step, every batch.
        let mut out = Batch::with_capacity(input.width(), input.len().min(BATCH_ROWS));
        // Timed only under PROFILE: reading the clock twice per stage and batch is measurable
        // when batches are small (a subquery run per row).
        let started = ctx.state.profile.is_some().then(Instant::now);
        let flow = self.stages[i].stage.execute(&mut input, &mut out, ctx);
        let elapsed = started.map_or(Duration::ZERO, |s| s.elapsed());
        let flow = flow?;
        debug_assert!(
            flow != Flow::HaveMoreOutput || out.len() >= BATCH_ROWS,
            "a stage asks to be called again only with a full output"
        );
        self.profile(i, out.len(), elapsed, ctx);
        match flow {
            Flow::HaveMoreOutput => self.stages[i].held = Some(input),
            Flow::NeedMoreInput => {}
            Flow::Finished => self.finish_below(i),
        }
        debug_assert!(self.stages[i].surplus.is_none(), "surplus resumed first");
        self.stages[i].surplus = out.split_off(BATCH_ROWS);
        Ok(out)
    }

    /// Adds `rows` to stage `from`'s profile and `time` to it and every stage above.
    fn profile(&mut self, from: usize, rows: usize, time: Duration, ctx: &mut ExecContext) {
        let Some(profile) = ctx.state.profile.as_mut() else {
            return;
        };
        for (i, placed) in self.stages.iter_mut().enumerate().skip(from) {
            let jit = if i == from {
                placed.stage.take_jit_profile()
            } else {
                None
            };
            placed
                .stage
                .profile_fused(profile, time, i == from, jit.as_ref());
            if let Some(entry) = placed.profile_id.and_then(|id| profile.get_mut(id)) {
                entry.time += time;
                if i == from {
                    entry.rows += rows as u64;
                    entry.jit = JitProfile::merge(entry.jit.take(), jit);
                }
            }
        }
    }

    /// Pulls the source once: its batch, to go into stage 0.
    fn pull_source(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        let started = ctx.state.profile.is_some().then(Instant::now);
        let batch = self.source.next(ctx);
        // The source's own time is its operator's; every stage includes it.
        self.profile(0, 0, started.map_or(Duration::ZERO, |s| s.elapsed()), ctx);
        let batch = batch?;
        if batch.is_none() {
            self.source_done = true;
        }
        Ok(batch)
    }
}

impl Operator for Pipeline {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        if !self.opened {
            self.open(ctx)?;
        }
        while let Some(resume) = self.resume_point() {
            ctx.state.interrupt.check()?;
            // The batch entering stage `first`.
            let (mut batch, first) = match resume {
                Resume::Source => match self.pull_source(ctx)? {
                    Some(batch) => (Some(batch), 0),
                    None => continue,
                },
                Resume::Held(i) => (None, i),
                Resume::Surplus(i) => (Some(self.take_surplus(i)), i + 1),
            };
            for i in first..self.stages.len() {
                let input = match batch.take() {
                    Some(batch) => batch,
                    None => self.stages[i].held.take().expect("resumed at a held input"),
                };
                let out = self.run_stage(i, input, ctx)?;
                if out.is_empty() {
                    break;
                }
                batch = Some(out);
            }
            if let Some(batch) = batch.filter(|b| !b.is_empty()) {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }

    /// The top stage takes the sink, or else a stage that feeds it by compiled code goes on
    /// top (`exec::compiled_pipeline`); before the pipeline runs only.
    fn absorb(
        &mut self,
        sink: Sink,
        aggregate_id: Option<usize>,
        ctx: &ExecContext,
    ) -> std::result::Result<(), Sink> {
        let fresh =
            !self.opened && (self.stages.iter()).all(|p| p.held.is_none() && p.surplus.is_none());
        if !fresh {
            return Err(sink);
        }
        let sink = match self.stages.last_mut() {
            Some(top) => match top.stage.absorb(sink, top.profile_id, ctx) {
                Ok(()) => return Ok(()),
                Err(sink) => sink,
            },
            None => sink,
        };
        let feed = super::compiled_pipeline::feed_stage(sink, aggregate_id, ctx)?;
        self.push(feed, None);
        Ok(())
    }

    fn reclaim(&mut self) -> Option<Sink> {
        self.stages.last_mut()?.stage.reclaim()
    }

    fn reset(&mut self) {
        self.source.reset();
        for placed in &mut self.stages {
            placed.stage.reset();
            placed.held = None;
            placed.surplus = None;
        }
        self.opened = false;
        self.source_done = false;
    }
}

#[cfg(test)]
mod tests {
    //! The driver against a model: random chains of fan-out, filter and LIMIT stages over
    //! random source batches give the rows of the same functions applied to a list, in order,
    //! in batches of at most `BATCH_ROWS`; a finished LIMIT stops pulling the source.

    use super::*;
    use crate::context::with_test_ctx;
    use crate::exec::ops::RowFn;
    use plexus_plan::Params;
    use plexus_plan::logical::BExpr;
    use plexus_value::value::Value;
    use proptest::prelude::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Hands out its batches (one column of integers), counting pulls.
    struct Source {
        batches: Vec<Vec<i64>>,
        next: usize,
        pulls: Arc<AtomicUsize>,
    }

    impl Operator for Source {
        fn next(&mut self, _ctx: &mut ExecContext) -> Result<Option<Batch>> {
            self.pulls.fetch_add(1, Ordering::SeqCst);
            let Some(values) = self.batches.get(self.next) else {
                return Ok(None);
            };
            self.next += 1;
            Ok(Some(batch_of(values)))
        }

        fn reset(&mut self) {
            self.next = 0;
        }
    }

    fn batch_of(values: &[i64]) -> Batch {
        let mut batch = Batch::new(1);
        for v in values {
            batch.push_row(vec![Value::Int(*v)]);
        }
        batch
    }

    fn value(batch: &Batch, row: usize) -> i64 {
        match batch.get(0, row) {
            Value::Int(v) => *v,
            other => panic!("not an integer: {other:?}"),
        }
    }

    /// What a test stage does, applied to the model's list too.
    #[derive(Debug, Clone)]
    enum Op {
        /// Each row `v` becomes `v * 31 + j` for `j` in `0..times`, all at once or resuming
        /// at full batches.
        FanOut { times: usize, resumable: bool },
        /// Keeps rows whose value is not a multiple of `modulus`.
        Filter { modulus: i64 },
        /// The first `count` rows.
        Limit { count: i64 },
    }

    struct TestFn {
        op: Op,
        /// Copies of the current row emitted so far (resumable fan-out).
        emitted: usize,
    }

    impl RowFn for TestFn {
        fn apply(
            &mut self,
            input: &Batch,
            row: usize,
            out: &mut Batch,
            _ctx: &mut ExecContext,
        ) -> Result<()> {
            let v = value(input, row);
            match self.op {
                Op::FanOut { times, resumable } => {
                    let room = if resumable {
                        BATCH_ROWS.saturating_sub(out.len()).max(1)
                    } else {
                        usize::MAX
                    };
                    let end = times.min(self.emitted.saturating_add(room));
                    for j in self.emitted..end {
                        out.push_row(vec![Value::Int(v.wrapping_mul(31) + j as i64)]);
                    }
                    self.emitted = if end == times { 0 } else { end };
                }
                Op::Filter { modulus } => {
                    if v % modulus != 0 {
                        out.push_from(input, row);
                    }
                }
                Op::Limit { .. } => unreachable!("a LIMIT is the real stage"),
            }
            Ok(())
        }

        fn reset(&mut self) {
            self.emitted = 0;
        }

        fn pending(&self) -> bool {
            self.emitted > 0
        }
    }

    fn stage(op: &Op) -> Box<dyn Stage> {
        match op {
            Op::Limit { count } => crate::exec::ops::limit_stage(BExpr::Const(Value::Int(*count))),
            _ => crate::exec::ops::RowStage::boxed(TestFn {
                op: op.clone(),
                emitted: 0,
            }),
        }
    }

    fn model(mut rows: Vec<i64>, ops: &[Op]) -> Vec<i64> {
        for op in ops {
            rows = match *op {
                Op::FanOut { times, .. } => rows
                    .iter()
                    .flat_map(|v| (0..times).map(move |j| v.wrapping_mul(31) + j as i64))
                    .collect(),
                Op::Filter { modulus } => rows.into_iter().filter(|v| v % modulus != 0).collect(),
                Op::Limit { count } => rows.into_iter().take(count as usize).collect(),
            };
        }
        rows
    }

    /// Every row the pipeline yields, checking batch sizes; and the source's pull count.
    fn run(batches: &[Vec<i64>], ops: &[Op], ctx: &mut ExecContext) -> (Vec<i64>, usize) {
        let pulls = Arc::new(AtomicUsize::new(0));
        let source = Source {
            batches: batches.to_vec(),
            next: 0,
            pulls: pulls.clone(),
        };
        let mut pipeline = Pipeline::new(Box::new(source));
        for op in ops {
            pipeline.push(stage(op), None);
        }
        let mut rows = Vec::new();
        for round in 0..2 {
            let mut these = Vec::new();
            while let Some(batch) = pipeline.next(ctx).unwrap() {
                assert!(
                    !batch.is_empty() && batch.len() <= BATCH_ROWS,
                    "{}",
                    batch.len()
                );
                these.extend((0..batch.len()).map(|row| value(&batch, row)));
            }
            assert_eq!(pipeline.next(ctx).unwrap().map(|b| b.len()), None);
            if round == 0 {
                rows = these;
                pulls.store(0, Ordering::SeqCst);
                pipeline.reset();
            } else {
                assert_eq!(these, rows, "a reset pipeline runs again identically");
            }
        }
        (rows, pulls.load(Ordering::SeqCst))
    }

    /// Stages that multiply the rows by at most `max_times`.
    fn small_op(max_times: usize) -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..=max_times, any::<bool>())
                .prop_map(|(times, resumable)| Op::FanOut { times, resumable }),
            (2i64..5).prop_map(|modulus| Op::Filter { modulus }),
            (0i64..6000).prop_map(|count| Op::Limit { count }),
        ]
    }

    /// A fan-out of more than a batch per row.
    fn big_fan_out() -> impl Strategy<Value = Op> {
        (BATCH_ROWS + 1..BATCH_ROWS + 600, any::<bool>())
            .prop_map(|(times, resumable)| Op::FanOut { times, resumable })
    }

    /// Up to four batches of at most `rows` rows (sources yield at most `BATCH_ROWS`).
    fn source(rows: usize) -> impl Strategy<Value = Vec<Vec<i64>>> {
        assert!(rows <= BATCH_ROWS + 1);
        prop::collection::vec(prop::collection::vec(-1000i64..1000, 0..rows), 0..4)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// Full and partial source batches, stages that stop mid-row near a full output.
        #[test]
        fn rows_equal_the_model_in_order(
            batches in source(BATCH_ROWS + 1),
            ops in prop::collection::vec(small_op(3), 0..4),
        ) {
            let expected = model(batches.concat(), &ops);
            let (rows, _) = with_test_ctx(&Params::new(), |ctx| run(&batches, &ops, ctx));
            prop_assert_eq!(rows, expected);
        }

        /// One row giving several batches: held inputs and surpluses at several depths.
        #[test]
        fn big_fan_outs_equal_the_model_in_order(
            batches in source(6),
            below in prop::collection::vec(small_op(2), 0..2),
            big in big_fan_out(),
            above in prop::collection::vec(small_op(2), 0..2),
        ) {
            let ops: Vec<Op> = below.into_iter().chain([big]).chain(above).collect();
            let expected = model(batches.concat(), &ops);
            let (rows, _) = with_test_ctx(&Params::new(), |ctx| run(&batches, &ops, ctx));
            prop_assert_eq!(rows, expected);
        }
    }

    #[test]
    fn a_reached_limit_stops_pulling_the_source() {
        let batches: Vec<Vec<i64>> = (0..10)
            .map(|b| (b * 100..b * 100 + 100).collect())
            .collect();
        let ops = [
            Op::FanOut {
                times: 3,
                resumable: true,
            },
            Op::Limit { count: 250 },
        ];
        let (rows, pulls) = with_test_ctx(&Params::new(), |ctx| run(&batches, &ops, ctx));
        assert_eq!(rows, model(batches.concat(), &ops));
        assert_eq!(pulls, 1, "one batch of 100 rows makes 300 > 250 rows");
    }

    #[test]
    fn limit_zero_never_pulls_the_source() {
        let batches = vec![vec![1, 2, 3]];
        let ops = [Op::Filter { modulus: 2 }, Op::Limit { count: 0 }];
        let (rows, pulls) = with_test_ctx(&Params::new(), |ctx| run(&batches, &ops, ctx));
        assert!(rows.is_empty());
        assert_eq!(pulls, 0);
    }

    #[test]
    fn a_high_fan_out_is_cut_into_batches_in_order() {
        let batches = vec![vec![1, 2]];
        for resumable in [false, true] {
            let ops = [
                Op::FanOut {
                    times: 3 * BATCH_ROWS + 5,
                    resumable,
                },
                Op::FanOut {
                    times: 2,
                    resumable,
                },
            ];
            let (rows, _) = with_test_ctx(&Params::new(), |ctx| run(&batches, &ops, ctx));
            assert_eq!(rows, model(batches.concat(), &ops));
        }
    }
}
