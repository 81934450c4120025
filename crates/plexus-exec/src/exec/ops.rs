//! Reading operators: filters, projections, UNWIND, DISTINCT, SKIP / LIMIT, aggregation,
//! sorting, procedure calls and the operators that run inner plans (Optional, Apply, Union);
//! the building of every operator from its plan node. Scans and seeks are `scan`'s, expands
//! `expand`'s.
//!
//! The streaming operators are pipeline stages (see `pipeline`). Most map each input row to
//! zero or more output rows; they share the [`RowStage`] driver and differ in their
//! [`RowFn`]. Project and Limit work on whole batches. The breakers work on their whole
//! input (Aggregate, Sort: their buffers, shared with the parallel workers, are in
//! `aggregate` and `sort`).

use super::aggregate::{AggregateSink, Aggregation, SinkState, Table};
use super::expand::{Expand, VarExpand};
use super::filter::Filter;
use super::jit::ProjectJit;
use super::join::HashJoin;
use super::parallel::internal;
use super::pipeline::{Flow, Pipeline, Stage};
use super::reach::DistinctEnds;
use super::scan::{NodeScan, RelationshipIndexSeek};
use super::sort::{SortBuffer, SortSpec};
use super::write;
use super::{
    Arguments, BATCH_ROWS, Batch, Built, ExecContext, Materialized, Operator, build_numbered,
    check_materialized,
};
use crate::eval::prefetch::{Prefetched, PropertyReads};
use crate::eval::vector::{self, Vector};
use crate::eval::{Env, eval};
use plexus_plan::logical::BExpr;
use plexus_plan::logical::{LogicalPlan, Procedure};
use plexus_plan::optimizer::pushdown::is_seek_equality;
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::{GroupKey, Value, equals};
use std::collections::HashSet;
use std::sync::Arc;

/// Builds the operator of `plan`, numbered `profile_id` for PROFILE (a stage carries it
/// itself; the caller wraps an operator): a streaming operator goes on top of its input's
/// pipeline (see `pipeline`), anything else is an operator of its own.
pub(super) fn build_operator(
    plan: &LogicalPlan,
    profile: bool,
    counter: &mut usize,
    profile_id: Option<usize>,
) -> Built {
    let mut child = |p: &LogicalPlan| build_numbered(p, profile, counter);
    if let Some((input, stage)) = simple_stage(plan) {
        return child(input).then(stage, profile_id);
    }
    let operator: Box<dyn Operator> = match plan {
        LogicalPlan::Argument => Box::new(Argument { done: false }),
        LogicalPlan::Optional {
            input,
            inner,
            nulls,
        } => {
            let input = child(input);
            let inner = child(inner).into_operator();
            let mode = InnerMode::Optional(nulls.clone());
            return input.then(RowStage::boxed(RunInner { inner, mode }), profile_id);
        }
        LogicalPlan::Apply {
            input,
            inner,
            returns,
            unit,
        } => {
            let set_at_a_time = *unit && plexus_plan::logical::set_at_a_time(inner);
            let input = child(input);
            let inner = child(inner).into_operator();
            if set_at_a_time {
                return input.then(Box::new(RunInnerSet { inner }), profile_id);
            }
            let mode = if *unit {
                InnerMode::Unit
            } else {
                InnerMode::Cross(returns.clone())
            };
            return input.then(RowStage::boxed(RunInner { inner, mode }), profile_id);
        }
        LogicalPlan::CallInTransactions { input, inner, spec } => {
            Box::new(super::call_in_transactions::CallInTransactions::new(
                child(input).into_operator(),
                child(inner).into_operator(),
                spec.clone(),
                spec.unit && plexus_plan::logical::set_at_a_time(inner),
            ))
        }
        LogicalPlan::HashJoin {
            input,
            build,
            keys,
            build_slots,
            optional,
            ..
        } => {
            let input = child(input);
            let build = child(build).into_operator();
            let join = HashJoin::new(build, keys, build_slots.clone(), optional.clone());
            return input.then(Box::new(join), profile_id);
        }
        LogicalPlan::Aggregate {
            input,
            keys,
            aggregates,
        } => aggregate_operator(
            child(input),
            Aggregation {
                keys: keys.clone(),
                calls: aggregates.clone(),
            },
            profile_id,
        ),
        LogicalPlan::Sort { input, keys, top } => sort_operator(
            child(input).into_operator(),
            SortSpec::new(keys.clone(), top.clone()),
        ),
        LogicalPlan::Union { branches } => Box::new(Union {
            branches: branches.iter().map(|b| child(b).into_operator()).collect(),
            current: 0,
        }),
        LogicalPlan::Discard { input } => Box::new(Discard {
            input: child(input).into_operator(),
        }),
        LogicalPlan::Parallel { .. } => super::parallel::build(plan, profile, counter),
        LogicalPlan::Results { input, .. } => Box::new(PassThrough {
            input: child(input).into_operator(),
        }),
        LogicalPlan::Create { .. }
        | LogicalPlan::Merge { .. }
        | LogicalPlan::Set { .. }
        | LogicalPlan::Delete { .. }
        | LogicalPlan::Foreach { .. } => {
            write::build_write(plan, &mut |p: &LogicalPlan| child(p).into_operator())
        }
        LogicalPlan::NodeScan { .. }
        | LogicalPlan::RelationshipIndexSeek { .. }
        | LogicalPlan::RelationshipCount { .. }
        | LogicalPlan::Expand { .. }
        | LogicalPlan::VarExpand { .. }
        | LogicalPlan::Filter { .. }
        | LogicalPlan::Project { .. }
        | LogicalPlan::Distinct { .. }
        | LogicalPlan::Skip { .. }
        | LogicalPlan::Limit { .. }
        | LogicalPlan::Unwind { .. }
        | LogicalPlan::LoadCsv { .. }
        | LogicalPlan::ProcedureCall { .. } => unreachable!("built by simple_stage"),
        LogicalPlan::Where { .. } => unreachable!("predicate pushdown leaves no Where"),
        LogicalPlan::Match { .. } => unreachable!("join ordering leaves no Match"),
    };
    Built::Operator(operator)
}

/// The stage of a streaming operator whose only child is its input, and that input; `None`
/// for any other operator. Also builds the stages of a parallel pipeline (see
/// `plexus_plan::optimizer::parallel`), so workers run the very stages the serial plan would.
pub(super) fn simple_stage(plan: &LogicalPlan) -> Option<(&LogicalPlan, Box<dyn Stage>)> {
    Some(match plan {
        LogicalPlan::NodeScan {
            input,
            slot,
            label,
            label_union,
            seek,
            id_seek,
            ..
        } => (&**input, {
            debug_assert!(
                label_union.is_empty()
                    || (label_union.len() >= 2
                        && label.is_none()
                        && seek.is_none()
                        && id_seek.is_none()),
                "a union of label scans has two labels or more, and no label or seek"
            );
            RowStage::boxed(NodeScan {
                slot: *slot,
                label: label.clone(),
                label_union: label_union.clone(),
                seek: seek.clone(),
                id_seek: id_seek.clone(),
                cache: None,
                rest: None,
            })
        }),
        LogicalPlan::RelationshipIndexSeek { input, spec, .. } => (
            &**input,
            RowStage::boxed(RelationshipIndexSeek {
                spec: spec.clone(),
                scanned: None,
                rest: None,
            }),
        ),
        LogicalPlan::RelationshipCount {
            input,
            slot,
            rel_types,
        } => (
            &**input,
            RowStage::boxed(super::scan::RelationshipCount {
                slot: *slot,
                rel_types: rel_types.clone(),
            }),
        ),
        LogicalPlan::Expand { input, spec, .. } => {
            let expand = Expand {
                spec: spec.clone(),
                found: Vec::new(),
            };
            (&**input, RowStage::boxed(expand))
        }
        LogicalPlan::VarExpand {
            input,
            spec,
            length,
            ..
        } if length.ends_only => (
            &**input,
            RowStage::boxed(DistinctEnds::new(spec.clone(), length.clone())),
        ),
        LogicalPlan::VarExpand {
            input,
            spec,
            length,
            ..
        } => (
            &**input,
            RowStage::boxed(VarExpand {
                spec: spec.clone(),
                length: length.clone(),
                trails: None,
            }),
        ),
        LogicalPlan::Filter { input, predicate } => {
            let mut filter = Filter::new(predicate);
            if let LogicalPlan::NodeScan {
                slot,
                seek: Some(seek),
                ..
            } = &**input
            {
                filter.seek_checked = is_seek_equality(*slot, predicate, seek);
            }
            (&**input, Box::new(filter))
        }
        LogicalPlan::Project { input, items } => (
            &**input,
            Box::new(Project {
                reads: PropertyReads::of(items.iter().map(|(_, e)| e)),
                jit: None,
                items: items.clone(),
            }),
        ),
        LogicalPlan::Distinct { input, slots } => {
            (&**input, RowStage::boxed(Distinct::new(slots.clone())))
        }
        LogicalPlan::Skip { input, count } => (
            &**input,
            RowStage::boxed(Skip {
                count: count.clone(),
                remaining: None,
            }),
        ),
        LogicalPlan::Limit {
            input,
            count,
            drain,
        } => (
            &**input,
            Box::new(Limit {
                count: count.clone(),
                remaining: 0,
                drain: *drain,
            }),
        ),
        LogicalPlan::Unwind { input, expr, slot } => (
            &**input,
            RowStage::boxed(Unwind {
                expr: expr.clone(),
                slot: *slot,
                rest: None,
            }),
        ),
        LogicalPlan::LoadCsv {
            input,
            source,
            spec,
        } => (
            &**input,
            RowStage::boxed(super::load_csv::LoadCsv::new(source.clone(), spec.clone())),
        ),
        LogicalPlan::ProcedureCall {
            input,
            procedure,
            args,
            yields,
        } => (
            &**input,
            RowStage::boxed(ProcedureCall {
                procedure: procedure.clone(),
                args: args.clone(),
                yields: yields.clone(),
            }),
        ),
        _ => return None,
    })
}

// ---- leaves and plumbing -------------------------------------------------------------------

struct Argument {
    done: bool,
}

impl Operator for Argument {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        Ok(Some(match ctx.arguments.last() {
            Some(Arguments::Row(row)) => Batch::single((**row).clone()),
            Some(Arguments::Rows(rows)) => (**rows).clone(),
            None => Batch::single(vec![Value::Null; ctx.width]),
        }))
    }

    fn reset(&mut self) {
        self.done = false;
    }
}

struct PassThrough {
    input: Box<dyn Operator>,
}

impl Operator for PassThrough {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        self.input.next(ctx)
    }
    fn reset(&mut self) {
        self.input.reset();
    }
}

struct Discard {
    input: Box<dyn Operator>,
}

impl Operator for Discard {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        while self.input.next(ctx)?.is_some() {}
        Ok(None)
    }
    fn reset(&mut self) {
        self.input.reset();
    }
}

struct Union {
    branches: Vec<Box<dyn Operator>>,
    current: usize,
}

impl Operator for Union {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        while let Some(branch) = self.branches.get_mut(self.current) {
            if let Some(batch) = branch.next(ctx)? {
                return Ok(Some(batch));
            }
            self.current += 1;
        }
        Ok(None)
    }
    fn reset(&mut self) {
        self.current = 0;
        for b in &mut self.branches {
            b.reset();
        }
    }
}

/// Per-row logic of a [`RowStage`]: append the output rows for input row `row`.
pub(super) trait RowFn: Send {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()>;
    /// Called once per input batch, before its first row's `apply`: work done for the whole
    /// batch at once (a hash join reads its key properties here, see `eval::prefetch`).
    fn begin_batch(&mut self, _input: &Batch, _ctx: &mut ExecContext) -> Result<()> {
        Ok(())
    }
    fn reset(&mut self) {}
    /// True if the last `apply` stopped at a full batch with output of its row still to come;
    /// the stage then calls `apply` again with the same row.
    fn pending(&self) -> bool {
        false
    }
}

/// A pipeline [`Stage`] driving a [`RowFn`] over each input batch, row by row from where it
/// stopped, until the output holds [`BATCH_ROWS`] rows: a row function that can resume
/// ([`RowFn::pending`]) stops in the middle of a row; one that cannot may overshoot, and the
/// pipeline cuts its surplus.
pub(super) struct RowStage<R: RowFn> {
    f: R,
    /// The next row of the input being worked on.
    row: usize,
}

impl<R: RowFn + 'static> RowStage<R> {
    pub(super) fn boxed(f: R) -> Box<dyn Stage> {
        Box::new(RowStage { f, row: 0 })
    }
}

impl<R: RowFn> Stage for RowStage<R> {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        if self.row == 0 && !self.f.pending() {
            self.f.begin_batch(input, ctx)?;
        }
        while self.row < input.len() {
            let result = self.f.apply(input, self.row, out, ctx);
            if !self.f.pending() {
                self.row += 1;
            }
            result?;
            if out.len() >= BATCH_ROWS && self.row < input.len() {
                return Ok(Flow::HaveMoreOutput);
            }
        }
        self.row = 0;
        Ok(Flow::NeedMoreInput)
    }

    fn reset(&mut self) {
        self.f.reset();
        self.row = 0;
    }
}

/// The output values of one input row (the nodes a scan finds, the items of an UNWIND
/// list, the build rows a hash join matches), written into a batch until it is full; what
/// remains is returned for the next call.
pub(super) struct FanOut<T> {
    items: Arc<Vec<T>>,
    next: usize,
}

impl<T> FanOut<T> {
    pub(super) fn new(items: Arc<Vec<T>>) -> Self {
        FanOut { items, next: 0 }
    }

    /// Appends rows (`input`'s row `row`, then `fill` with an item on the new last row) up to
    /// a full batch; `Some` with the rest if the items did not all fit.
    pub(super) fn emit(
        mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        fill: impl Fn(&mut Batch, &T),
    ) -> Option<Self> {
        let room = BATCH_ROWS.saturating_sub(out.len()).max(1);
        let end = self.items.len().min(self.next + room);
        for item in &self.items[self.next..end] {
            out.push_from(input, row);
            fill(out, item);
        }
        self.next = end;
        (end < self.items.len()).then_some(self)
    }
}

// ---- row-wise relational operators --------------------------------------------------------

/// Whether `predicate` is true on `batch`'s row `row` (false and null are not; any other
/// value is a type error).
pub(super) fn passes(
    predicate: &BExpr,
    batch: &Batch,
    row: usize,
    ctx: &mut ExecContext,
) -> Result<bool> {
    passes_in(predicate, &mut Env::new(batch, row), ctx)
}

pub(super) fn passes_in(predicate: &BExpr, env: &mut Env, ctx: &mut ExecContext) -> Result<bool> {
    match eval(predicate, env, ctx)? {
        Value::Bool(value) => Ok(value),
        Value::Null => Ok(false),
        other => Err(QueryError::type_error(format!(
            "a predicate must be a boolean, not {}",
            other.type_name()
        ))),
    }
}

struct Unwind {
    expr: BExpr,
    slot: usize,
    /// The items of the current input row's list that did not fit in the last batch.
    rest: Option<FanOut<Value>>,
}

impl RowFn for Unwind {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let slot = self.slot;
        let fill = |out: &mut Batch, item: &Value| out.set_last(slot, item.clone());
        if let Some(rest) = self.rest.take() {
            self.rest = rest.emit(input, row, out, fill);
            return Ok(());
        }
        let mut env = Env::new(input, row);
        match eval(&self.expr, &mut env, ctx)? {
            Value::Null => {}
            Value::List(items) => {
                self.rest = FanOut::new(items).emit(input, row, out, fill);
            }
            other => {
                out.push_from(input, row);
                out.set_last(self.slot, other);
            }
        }
        Ok(())
    }

    fn reset(&mut self) {
        self.rest = None;
    }

    fn pending(&self) -> bool {
        self.rest.is_some()
    }
}

/// DISTINCT: the first occurrence of each combination of `slots` (under `GroupKey`
/// equivalence); the set of those seen is bounded by `MAX_MATERIALIZED_ROWS`.
pub(super) struct Distinct {
    slots: Vec<usize>,
    seen: HashSet<GroupKey>,
}

impl Distinct {
    pub(super) fn new(slots: Vec<usize>) -> Self {
        Distinct {
            slots,
            seen: HashSet::new(),
        }
    }

    /// The rows of `input` not seen before, in order (the caller's side of partial-distinct).
    pub(super) fn first_occurrences(&mut self, input: &Batch) -> Result<Batch> {
        let mut out = Batch::new(input.width());
        for row in 0..input.len() {
            self.admit(input, row, &mut out)?;
        }
        Ok(out)
    }

    /// Appends row `row` of `input` to `out` if it was not seen before.
    fn admit(&mut self, input: &Batch, row: usize, out: &mut Batch) -> Result<()> {
        let key = GroupKey(
            self.slots
                .iter()
                .map(|s| input.get(*s, row).clone())
                .collect(),
        );
        if self.seen.insert(key) {
            check_materialized(self.seen.len())?;
            out.push_from(input, row);
        }
        Ok(())
    }
}

impl RowFn for Distinct {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        _ctx: &mut ExecContext,
    ) -> Result<()> {
        self.admit(input, row, out)
    }

    fn reset(&mut self) {
        self.seen.clear();
    }
}

/// Evaluates a SKIP / LIMIT count: a non-negative integer.
pub(super) fn eval_count(expr: &BExpr, ctx: &mut ExecContext) -> Result<u64> {
    let empty = Batch::single(vec![Value::Null; ctx.width]);
    let mut env = Env::new(&empty, 0);
    match eval(expr, &mut env, ctx)? {
        Value::Int(i) if i >= 0 => Ok(i as u64),
        Value::Int(_) => Err(QueryError::runtime(
            ErrorClass::SyntaxError,
            "NegativeIntegerArgument",
            "SKIP and LIMIT take a non-negative integer",
        )),
        Value::Float(f) if f.fract() == 0.0 && f >= 0.0 => Err(QueryError::runtime(
            ErrorClass::SyntaxError,
            "InvalidArgumentType",
            "SKIP and LIMIT take an integer",
        )),
        other => Err(QueryError::runtime(
            ErrorClass::SyntaxError,
            "InvalidArgumentType",
            format!("SKIP and LIMIT take an integer, not {}", other.type_name()),
        )),
    }
}

struct Skip {
    count: BExpr,
    remaining: Option<u64>,
}

impl RowFn for Skip {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let remaining = match self.remaining {
            Some(r) => r,
            None => eval_count(&self.count, ctx)?,
        };
        if remaining > 0 {
            self.remaining = Some(remaining - 1);
        } else {
            self.remaining = Some(0);
            out.push_from(input, row);
        }
        Ok(())
    }

    fn reset(&mut self) {
        self.remaining = None;
    }
}

/// A LIMIT stage of `count` that stops its input once reached (tests).
#[cfg(test)]
pub(super) fn limit_stage(count: BExpr) -> Box<dyn Stage> {
    Box::new(Limit {
        count,
        remaining: 0,
        drain: false,
    })
}

struct Limit {
    count: BExpr,
    /// Rows still to let through (set by `open`).
    remaining: u64,
    /// Read the input to its end even after the last row (it has writes to make).
    drain: bool,
}

impl Limit {
    fn flow(&self) -> Flow {
        if self.remaining == 0 && !self.drain {
            Flow::Finished
        } else {
            Flow::NeedMoreInput
        }
    }
}

impl Stage for Limit {
    fn open(&mut self, ctx: &mut ExecContext) -> Result<Flow> {
        self.remaining = eval_count(&self.count, ctx)?;
        Ok(self.flow())
    }

    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        _ctx: &mut ExecContext,
    ) -> Result<Flow> {
        let kept = self.remaining.min(input.len() as u64);
        if kept > 0 {
            input.split_off(kept as usize);
            *out = std::mem::replace(input, Batch::new(0));
            self.remaining -= kept;
        }
        Ok(self.flow())
    }

    fn reset(&mut self) {
        self.remaining = 0;
    }
}

/// Fewest rows for which a Project computes an item, or a sort its keys, as vectors.
pub(super) const MIN_VECTOR_ROWS: usize = 16;

/// One item of a Project over one batch.
enum Projected {
    Vector(Vector),
    Values(Vec<Value>),
}

struct Project {
    items: Vec<(usize, BExpr)>,
    /// The items' property reads, fetched per batch (see `eval::prefetch`).
    reads: PropertyReads,
    /// Compiled code for the computed items the JIT covers (`jit::ProjectJit`): decided at
    /// the first batch that may use it (`None` until then: nothing built for a statement
    /// whose batches are all small).
    jit: Option<Option<ProjectJit>>,
}

impl Stage for Project {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        let mut computed = match input.len() >= MIN_VECTOR_ROWS {
            true => (self
                .jit
                .get_or_insert_with(|| ProjectJit::new(&self.items))
                .as_mut())
            .map_or_else(Vec::new, |jit| jit.run(input, ctx)),
            false => Vec::new(),
        };
        computed.resize(self.items.len(), None);
        let prefetched = match computed.iter().all(Option::is_some) {
            true => Prefetched::default(),
            false => self.reads.fetch(input, ctx),
        };
        let mut columns = Vec::with_capacity(self.items.len());
        for ((_, expr), computed) in self.items.iter().zip(computed) {
            if let Some(vector) = computed {
                columns.push(Projected::Vector(vector));
                continue;
            }
            // A property read as a typed vector, or an expression computed as one, stays a
            // vector: no `Value` per row (`context::Batch`, TYPED COLUMNS).
            let vector = prefetched.typed_vector(expr).or_else(|| {
                // (Not for a few rows: building arrays costs more than it saves there.)
                let computed = input.len() >= MIN_VECTOR_ROWS
                    && vector::covers(expr)
                    && !matches!(expr, BExpr::Slot(_) | BExpr::Const(_) | BExpr::Param(_));
                computed
                    .then(|| vector::column(expr, input, &prefetched, ctx))
                    .flatten()
            });
            if let Some(vector) = vector {
                columns.push(Projected::Vector(vector));
                continue;
            }
            let mut column = Vec::with_capacity(input.len());
            for row in 0..input.len() {
                let mut env = Env::with_prefetched(input, row, &prefetched);
                column.push(eval(expr, &mut env, ctx)?);
            }
            columns.push(Projected::Values(column));
        }
        *out = std::mem::replace(input, Batch::new(0));
        for ((slot, _), column) in self.items.iter().zip(columns) {
            match column {
                Projected::Vector(vector) => out.set_vector(*slot, vector),
                Projected::Values(values) => out.set_column(*slot, values),
            }
        }
        Ok(Flow::NeedMoreInput)
    }

    fn reset(&mut self) {}

    fn take_jit_profile(&mut self) -> Option<crate::context::JitProfile> {
        self.jit.as_mut()?.as_mut().map(ProjectJit::take_profile)
    }
}

struct Aggregate {
    input: Box<dyn Operator>,
    aggregation: Aggregation,
    output: Materialized,
    /// PROFILE's number (for how compiled code fed it: `compiled_pipeline`).
    profile_id: Option<usize>,
}

/// The serial Aggregate over `input` (see `aggregate`, GROUPS), numbered `profile_id`.
pub(super) fn aggregate_operator(
    input: Built,
    aggregation: Aggregation,
    profile_id: Option<usize>,
) -> Box<dyn Operator> {
    // A pipeline even over a breaker or a leaf: compiled code may feed the Aggregate from a
    // stage on top of it (`compiled_pipeline`).
    let input: Box<dyn Operator> = match input {
        Built::Pipeline(pipeline) => Box::new(pipeline),
        Built::Operator(op) => Box::new(Pipeline::new(op)),
    };
    Box::new(Aggregate {
        input,
        aggregation,
        output: Materialized::default(),
        profile_id,
    })
}

impl Breaker for Aggregate {
    fn parts(&mut self) -> (&mut dyn Operator, &mut Materialized) {
        (self.input.as_mut(), &mut self.output)
    }

    fn compute(&mut self, ctx: &mut ExecContext) -> Result<Vec<Batch>> {
        let sink = AggregateSink {
            aggregation: self.aggregation.clone(),
            state: SinkState::Serial(Table::new(&self.aggregation)),
        };
        let table = match self.input.absorb(Box::new(sink), self.profile_id, ctx) {
            // The filters below feed the table themselves (`filter`, COMPILED PIPELINES).
            Ok(()) => {
                if self.input.next(ctx)?.is_some() {
                    return Err(internal("a pipeline fed its Aggregate and output rows too"));
                }
                let sink = self
                    .input
                    .reclaim()
                    .and_then(|s| s.downcast::<AggregateSink>().ok());
                match sink.map(|s| s.state) {
                    Some(SinkState::Serial(table)) => table,
                    _ => return Err(internal("a pipeline lost its Aggregate's table")),
                }
            }
            Err(_) => {
                let mut table = Table::new(&self.aggregation);
                while let Some(batch) = self.input.next(ctx)? {
                    table.feed(&self.aggregation, &batch, ctx)?;
                }
                table
            }
        };
        table.finish(&self.aggregation, ctx.width)
    }
}

struct Sort {
    input: Box<dyn Operator>,
    spec: SortSpec,
    output: Materialized,
}

/// The serial Sort over `input` (see `sort`, THE BUFFER).
pub(super) fn sort_operator(input: Box<dyn Operator>, spec: SortSpec) -> Box<dyn Operator> {
    Box::new(Sort {
        input,
        spec,
        output: Materialized::default(),
    })
}

impl Breaker for Sort {
    fn parts(&mut self) -> (&mut dyn Operator, &mut Materialized) {
        (self.input.as_mut(), &mut self.output)
    }

    fn compute(&mut self, ctx: &mut ExecContext) -> Result<Vec<Batch>> {
        let mut buffer = SortBuffer::new(&self.spec, ctx);
        while let Some(batch) = self.input.next(ctx)? {
            buffer.feed(&self.spec, &batch, ctx)?;
        }
        Ok(buffer.finish(&self.spec, ctx.width))
    }
}

/// A pipeline breaker (Aggregate, Sort): the first `next` reads the whole input and computes
/// every output batch; later calls hand them out.
trait Breaker: Send {
    fn compute(&mut self, ctx: &mut ExecContext) -> Result<Vec<Batch>>;
    /// The input and the computed output.
    fn parts(&mut self) -> (&mut dyn Operator, &mut Materialized);
}

impl<T: Breaker> Operator for T {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        if !self.parts().1.is_computed() {
            let batches = self.compute(ctx)?;
            self.parts().1.fill(batches);
        }
        Ok(self.parts().1.next_batch())
    }

    fn reset(&mut self) {
        let (input, output) = self.parts();
        input.reset();
        output.reset();
    }
}

// ---- inner plans -------------------------------------------------------------------------

enum InnerMode {
    /// The inner rows, or the input row with these slots nulled if there are none.
    Optional(Vec<usize>),
    /// The input row extended with these slots of each inner row.
    Cross(Vec<usize>),
    /// The input row, once, after running the inner plan.
    Unit,
}

struct RunInner {
    inner: Box<dyn Operator>,
    mode: InnerMode,
}

/// A unit subquery body whose runs cannot see each other's writes
/// (`plexus_plan::logical::set_at_a_time`), run once over each input batch instead of once
/// per row: the same writes in the same order; the input rows pass unchanged.
struct RunInnerSet {
    inner: Box<dyn Operator>,
}

impl Stage for RunInnerSet {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        // The input moves into the argument and back out: the run's `Argument` copies it
        // once, nothing else does.
        let rows = Arc::new(std::mem::replace(input, Batch::new(input.width())));
        run_inner_over(self.inner.as_mut(), Arguments::Rows(rows.clone()), ctx)?;
        *out = Arc::try_unwrap(rows).unwrap_or_else(|shared| (*shared).clone());
        Ok(Flow::NeedMoreInput)
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// Runs `inner` with `row` as its argument and returns all its rows' batches.
pub(crate) fn run_inner(
    inner: &mut dyn Operator,
    row: Arc<Vec<Value>>,
    ctx: &mut ExecContext,
) -> Result<Vec<Batch>> {
    run_inner_over(inner, Arguments::Row(row), ctx)
}

/// [`run_inner`] over `arguments`: one row or a batch of them.
pub(crate) fn run_inner_over(
    inner: &mut dyn Operator,
    arguments: Arguments,
    ctx: &mut ExecContext,
) -> Result<Vec<Batch>> {
    inner.reset();
    let mut batches = Vec::new();
    let mut rows = 0;
    loop {
        let next = ctx.with_arguments(arguments.clone(), |ctx| inner.next(ctx))?;
        match next {
            Some(batch) => {
                rows += batch.len();
                check_materialized(rows)?;
                batches.push(batch);
            }
            None => break,
        }
    }
    Ok(batches)
}

impl RowFn for RunInner {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let argument = Arc::new(input.row(row));
        let batches = run_inner(self.inner.as_mut(), argument, ctx)?;
        match &self.mode {
            InnerMode::Unit => out.push_from(input, row),
            InnerMode::Cross(returns) => {
                for batch in &batches {
                    for r in 0..batch.len() {
                        out.push_from(input, row);
                        for slot in returns {
                            out.set_last(*slot, batch.get(*slot, r).clone());
                        }
                    }
                }
            }
            InnerMode::Optional(_) => {
                let mut any = false;
                for batch in &batches {
                    for r in 0..batch.len() {
                        out.push_from(batch, r);
                        any = true;
                    }
                }
                if let InnerMode::Optional(nulls) = &self.mode
                    && !any
                {
                    push_null_extended(input, row, out, nulls);
                }
            }
        }
        Ok(())
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// Appends `input`'s row `row` with `nulls` set to null: an OPTIONAL MATCH's row for an input
/// row that matched nothing.
fn push_null_extended(input: &Batch, row: usize, out: &mut Batch, nulls: &[usize]) {
    out.push_from(input, row);
    for slot in nulls {
        out.set_last(*slot, Value::Null);
    }
}

struct ProcedureCall {
    procedure: Arc<Procedure>,
    args: Vec<BExpr>,
    yields: Vec<(usize, usize)>,
}

impl RowFn for ProcedureCall {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let mut env = Env::new(input, row);
        let mut args = Vec::with_capacity(self.args.len());
        for a in &self.args {
            args.push(eval(a, &mut env, ctx)?);
        }
        let inputs = self.procedure.inputs.len();
        if let Some(compute) = &self.procedure.compute {
            for proc_row in (compute.0)(&args, ctx.tx)? {
                out.push_from(input, row);
                for (index, slot) in &self.yields {
                    out.set_last(*slot, proc_row.get(*index).cloned().unwrap_or(Value::Null));
                }
            }
            return Ok(());
        }
        if self.procedure.outputs.is_empty() {
            out.push_from(input, row);
            return Ok(());
        }
        for proc_row in &self.procedure.rows {
            let matches = args
                .iter()
                .zip(proc_row)
                .all(|(a, b)| equals(a, b) == Some(true) || (a.is_null() && b.is_null()));
            if !matches {
                continue;
            }
            out.push_from(input, row);
            for (index, slot) in &self.yields {
                let value = proc_row.get(inputs + index).cloned().unwrap_or(Value::Null);
                out.set_last(*slot, value);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_push_and_set() {
        let mut b = Batch::new(2);
        b.push_row(vec![Value::Int(1), Value::Null]);
        b.set_last(1, Value::Int(2));
        assert_eq!(b.len(), 1);
        assert!(matches!(b.get(1, 0), Value::Int(2)));
    }
}
