//! Reading operators: scans, expands, filters, projections, aggregation, sorting, and the
//! operators that run inner plans (Optional, Apply, Union).
//!
//! The streaming operators are pipeline stages (see `pipeline`). Most map each input row to
//! zero or more output rows; they share the [`RowStage`] driver and differ in their
//! [`RowFn`]. Project and Limit work on whole batches. The breakers work on their whole
//! input (Aggregate, Sort: their buffers, shared with the parallel workers, are in
//! `aggregate` and `sort`).

use super::aggregate::{Aggregation, Groups};
use super::join::HashJoin;
use super::pipeline::{Flow, Stage};
use super::sort::{SortBuffer, SortSpec};
use super::write;
use super::{
    BATCH_ROWS, Batch, Built, ExecContext, Materialized, Operator, build_numbered,
    check_materialized,
};
use crate::eval::prefetch::PropertyReads;
use crate::eval::{Env, eval, truthy};
use plexus_cypher::ast::ShortestPath;
use plexus_plan::logical::BExpr;
use plexus_plan::logical::{
    ExpandSpec, IdFunction, IdPredicate, IdSeek, KeySeek, LogicalPlan, Procedure, RangeBound,
    RelSeekSpec, SeekPredicate, VarLengthSpec,
};
use plexus_txn::KeyRange;
use plexus_txn::validation::{Entity as ReadEntity, ReadItem};
use plexus_types::{Direction, EdgeId, Value as StorageValue, VertexId};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::{GroupKey, Value, equals};
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
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
            let input = child(input);
            let inner = child(inner).into_operator();
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
            return input.then(RowStage::boxed(join), profile_id);
        }
        LogicalPlan::Aggregate {
            input,
            keys,
            aggregates,
        } => aggregate_operator(
            child(input).into_operator(),
            Aggregation {
                keys: keys.clone(),
                calls: aggregates.clone(),
            },
        ),
        LogicalPlan::Sort { input, keys, top } => sort_operator(
            child(input).into_operator(),
            SortSpec {
                keys: keys.clone(),
                top: top.clone(),
            },
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
            seek,
            id_seek,
            ..
        } => (
            &**input,
            RowStage::boxed(NodeScan {
                slot: *slot,
                label: label.clone(),
                seek: seek.clone(),
                id_seek: id_seek.clone(),
                cache: None,
                rest: None,
            }),
        ),
        LogicalPlan::RelationshipIndexSeek { input, spec, .. } => (
            &**input,
            RowStage::boxed(RelationshipIndexSeek {
                spec: spec.clone(),
                scanned: None,
                rest: None,
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
        } => (
            &**input,
            RowStage::boxed(VarExpand {
                spec: spec.clone(),
                length: length.clone(),
            }),
        ),
        LogicalPlan::Filter { input, predicate } => (
            &**input,
            Box::new(Filter {
                reads: PropertyReads::of([predicate]),
                predicate: predicate.clone(),
            }),
        ),
        LogicalPlan::Project { input, items } => (
            &**input,
            Box::new(Project {
                reads: PropertyReads::of(items.iter().map(|(_, e)| e)),
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
        let row = match ctx.arguments.last() {
            Some(row) => (**row).clone(),
            None => vec![Value::Null; ctx.width],
        };
        Ok(Some(Batch::single(row)))
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

// ---- scans and expands ---------------------------------------------------------------------

/// Longest `IN` list a seek looks up value by value; a longer one scans the label.
pub const MAX_SEEK_VALUES: usize = 10_000;

struct NodeScan {
    slot: usize,
    label: Option<Arc<str>>,
    seek: Option<KeySeek>,
    id_seek: Option<IdSeek>,
    /// The scanned ids, read once per run (the scan's input may have many rows).
    cache: Option<Arc<Vec<VertexId>>>,
    /// The nodes of the current input row that did not fit in the last batch.
    rest: Option<FanOut<VertexId>>,
}

/// One index look-up of a seek.
enum Lookup {
    /// A value in the label's primary-key indexes.
    Key(StorageValue),
    /// A key range in the seek's secondary index.
    Index(KeyRange),
}

impl NodeScan {
    /// The nodes the seek finds for this input row, when the indexes can answer exactly; else
    /// `None` (scan the label). `IN` looks each element of the list up (at most
    /// [`MAX_SEEK_VALUES`]) and unions the rows; a range or prefix is one walk of the index.
    fn seek(
        &self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<Vec<VertexId>>> {
        let (Some(label), Some(seek)) = (&self.label, &self.seek) else {
            return Ok(None);
        };
        sought(seek, input, row, ctx, |ctx, lookup| match lookup {
            Lookup::Key(value) => ctx.tx.seek_by_key(label, &seek.key, value),
            Lookup::Index(range) => ctx.tx.seek_by_index(label, &seek.key, range),
        })
    }

    /// The nodes the id seek names for this input row that exist in the transaction's view
    /// and carry the scan's label, in id order; `None` (scan) without an id seek, or when its
    /// operand fails to evaluate or is a list too long or not a list (the filter above then
    /// decides, as for a key seek's operands, see [`sought`]).
    ///
    /// Under SERIALIZABLE each id is recorded as an existence read — by `vertex_exists`, and
    /// here for ids beyond a table's allocated rows, which it does not record — and each
    /// existing node's labels as a label read, so a concurrent create or delete of a sought
    /// node, or a change of its labels, conflicts. Unlike a scan, no label scan is recorded: a
    /// concurrent insert of another node cannot change what an id names.
    fn seek_ids(
        &self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<Vec<VertexId>>> {
        let Some(id_seek) = &self.id_seek else {
            return Ok(None);
        };
        let values = match id_seek_values(id_seek, input, row, ctx) {
            Ok(Some(values)) => values,
            Ok(None) => return Ok(None),
            Err(e) if e.class != ErrorClass::DatabaseError => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut ids: Vec<VertexId> = values
            .iter()
            .filter_map(|value| named_vertex(id_seek.function, value))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut found = Vec::with_capacity(ids.len());
        for v in ids {
            if !ctx.tx.vertex_exists(v)? {
                ctx.tx
                    .absorb_reads([ReadItem::Exists(ReadEntity::Vertex(v))]);
                continue;
            }
            if let Some(label) = &self.label
                && !ctx.tx.vertex_has_labels(v, &[&**label])?
            {
                continue;
            }
            found.push(v);
        }
        Ok(Some(found))
    }
}

/// The values an id seek looks up for one input row: its operand, or the elements of its
/// list (`IN null` none); `None` for a list longer than [`MAX_SEEK_VALUES`] or a non-list,
/// which the scan and the filter above decide.
fn id_seek_values(
    id_seek: &IdSeek,
    input: &Batch,
    row: usize,
    ctx: &mut ExecContext,
) -> Result<Option<Vec<Value>>> {
    Ok(match &id_seek.predicate {
        IdPredicate::Equal(value) => Some(vec![eval(value, &mut Env::new(input, row), ctx)?]),
        IdPredicate::In(list) => match eval(list, &mut Env::new(input, row), ctx)? {
            Value::Null => Some(Vec::new()),
            Value::List(items) if items.len() <= MAX_SEEK_VALUES => Some(items.to_vec()),
            _ => None,
        },
    })
}

/// Vertex ids have a table below 2^21 in any real database, so below 2^53 as an `id()`: an
/// integral float beyond names no node (it could not be told from its neighbours anyway).
const MAX_FLOAT_VERTEX_ID: f64 = 9_007_199_254_740_992.0;

/// The vertex `value` names as the result of `function`: for `id`, a non-negative integer
/// `table << 32 | offset` (or a float equal to one, as `1 = 1.0` in Cypher); for `elementId`,
/// a string `v<table>:<offset>` (`VertexId`'s `Display`). Anything else — null, another type,
/// a malformed string, a relationship's `e…` id — names none.
fn named_vertex(function: IdFunction, value: &Value) -> Option<VertexId> {
    let from_id = |id: i64| {
        let id = u64::try_from(id).ok()?;
        let table = u32::try_from(id >> 32).ok()?;
        Some(VertexId::new(table, (id & u64::from(u32::MAX)) as u32))
    };
    match (function, value) {
        (IdFunction::Id, Value::Int(id)) => from_id(*id),
        (IdFunction::Id, Value::Float(f))
            if f.fract() == 0.0 && (0.0..MAX_FLOAT_VERTEX_ID).contains(f) =>
        {
            from_id(*f as i64)
        }
        (IdFunction::ElementId, Value::String(s)) => s.parse().ok(),
        _ => None,
    }
}

impl RowFn for NodeScan {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let fan = match self.rest.take() {
            Some(rest) => rest,
            None => {
                let found = match self.seek_ids(input, row, ctx)? {
                    Some(found) => Some(found),
                    None => self.seek(input, row, ctx)?,
                };
                FanOut::new(or_scanned(found, &mut self.cache, || match &self.label {
                    Some(label) => ctx.tx.scan_label(label),
                    None => ctx.tx.scan_all_vertices(),
                })?)
            }
        };
        let slot = self.slot;
        self.rest = fan.emit(input, row, out, |out, &v| {
            out.set_last(slot, Value::Node(v))
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.cache = None;
        self.rest = None;
    }

    fn pending(&self) -> bool {
        self.rest.is_some()
    }
}

/// A relationship with its ends as a relationship index seek binds them: (relationship, left
/// end, right end).
type RelMatch = (EdgeId, VertexId, VertexId);

/// See [`RelSeekSpec`]: per input row, the relationships of the type that the index finds —
/// or, when it cannot answer (no ready index, an operand it cannot seek), every relationship
/// of the type — bound with their ends in each orientation the pattern allows. The filter
/// above checks the seek's predicate either way.
struct RelationshipIndexSeek {
    spec: RelSeekSpec,
    /// The relationships of the type, scanned once per run when the index cannot answer.
    scanned: Option<Arc<Vec<EdgeId>>>,
    /// The matches of the current input row that did not fit in the last batch.
    rest: Option<FanOut<RelMatch>>,
}

impl RelationshipIndexSeek {
    /// The relationships the seek finds for this input row (sorted, each once), or `None`
    /// when the index cannot answer. `IN` looks each element up and unions the results.
    fn seek(
        &self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<Vec<EdgeId>>> {
        let RelSeekSpec { rel_type, seek, .. } = &self.spec;
        sought(seek, input, row, ctx, |ctx, lookup| match lookup {
            Lookup::Index(range) => ctx.tx.seek_edges_by_index(rel_type, &seek.key, range),
            // Relationships have no primary keys: the planner always names an index.
            Lookup::Key(_) => Ok(None),
        })
    }

    /// `edges` with their ends, in each orientation the pattern's direction allows (an
    /// undirected self-loop once); without the relationships used elsewhere in the MATCH, and,
    /// when one variable is at both ends, without those that are not self-loops.
    fn matches(
        &self,
        edges: &[EdgeId],
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Vec<RelMatch>> {
        let spec = &self.spec;
        let mut found = Vec::new();
        for &e in edges {
            if used_elsewhere(input, row, &spec.distinct_from, e) {
                continue;
            }
            let (src, dst) = ctx.tx.edge_endpoints(e)?;
            let orientations = match spec.direction {
                Direction::Out => [Some((src, dst)), None],
                Direction::In => [Some((dst, src)), None],
                Direction::Both => [Some((src, dst)), (src != dst).then_some((dst, src))],
            };
            for (left, right) in orientations.into_iter().flatten() {
                if spec.left != spec.right || left == right {
                    found.push((e, left, right));
                }
            }
        }
        Ok(found)
    }
}

impl RowFn for RelationshipIndexSeek {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let fan = match self.rest.take() {
            Some(rest) => rest,
            None => {
                let found = self.seek(input, row, ctx)?;
                let rel_type = &self.spec.rel_type;
                let edges = or_scanned(found, &mut self.scanned, || ctx.tx.scan_edges(rel_type))?;
                FanOut::new(Arc::new(self.matches(&edges, input, row, ctx)?))
            }
        };
        let RelSeekSpec {
            left, rel, right, ..
        } = self.spec;
        self.rest = fan.emit(input, row, out, |out, &(e, l, r)| {
            out.set_last(rel, Value::Rel(e));
            out.set_last(left, Value::Node(l));
            out.set_last(right, Value::Node(r));
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.scanned = None;
        self.rest = None;
    }

    fn pending(&self) -> bool {
        self.rest.is_some()
    }
}

/// The union (sorted, each once) of what `find` answers for each look-up of `seek` for this
/// input row, or `None` — scan instead — when the operands cannot be sought or `find` cannot
/// answer one of the look-ups.
///
/// An operand that fails to evaluate (`1 / 0`, a type error) scans too: the filter above
/// evaluates the same operand on the same input row for every node the scan offers, so it
/// raises the error on the first one — or never, when the label is empty or an earlier
/// conjunct of the filter is false for every node — exactly as the plan without the seek.
/// Storage errors (`DatabaseError`) are not the operand's and fail the statement.
fn sought<T: Ord>(
    seek: &KeySeek,
    input: &Batch,
    row: usize,
    ctx: &mut ExecContext,
    mut find: impl FnMut(&mut ExecContext, &Lookup) -> plexus_types::Result<Option<Vec<T>>>,
) -> Result<Option<Vec<T>>> {
    let lookups = match lookups(seek, input, row, ctx) {
        Ok(Some(lookups)) => lookups,
        Ok(None) => return Ok(None),
        Err(e) if e.class != ErrorClass::DatabaseError => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for lookup in &lookups {
        let Some(ids) = find(ctx, lookup)? else {
            return Ok(None);
        };
        found.extend(ids);
    }
    found.sort_unstable();
    found.dedup();
    Ok(Some(found))
}

/// What a seek `found` — or, when it could not answer, what `scan` reads, once per run: kept
/// in `scanned` (the scan does not depend on the input row).
fn or_scanned<T>(
    found: Option<Vec<T>>,
    scanned: &mut Option<Arc<Vec<T>>>,
    scan: impl FnOnce() -> plexus_types::Result<Vec<T>>,
) -> Result<Arc<Vec<T>>> {
    if let Some(found) = found {
        return Ok(Arc::new(found));
    }
    if let Some(items) = scanned {
        return Ok(items.clone());
    }
    let items = Arc::new(scan()?);
    *scanned = Some(items.clone());
    Ok(items)
}

/// What `seek` looks up for one input row, or `None` when its operands are of a type the
/// indexes cannot seek (the scan and the filter above it decide).
fn lookups(
    seek: &KeySeek,
    input: &Batch,
    row: usize,
    ctx: &mut ExecContext,
) -> Result<Option<Vec<Lookup>>> {
    let mut operand = |e: &BExpr| -> Result<Option<StorageValue>> {
        Ok(eval(e, &mut Env::new(input, row), ctx)?.to_storage())
    };
    let by_index = seek.index.is_some();
    Ok(match &seek.predicate {
        SeekPredicate::Equal(value) => match operand(value)? {
            // `x = null` is never true.
            Some(StorageValue::Null) => Some(Vec::new()),
            value => value
                .and_then(|value| lookup(by_index, value))
                .map(|l| vec![l]),
        },
        SeekPredicate::In(list) => match eval(list, &mut Env::new(input, row), ctx)? {
            // `x IN null` is never true; a non-list is the filter's type error to raise.
            Value::Null => Some(Vec::new()),
            Value::List(items) if items.len() <= MAX_SEEK_VALUES => {
                // Nor does `x IN [null]` find anything.
                let values = items.iter().filter(|v| !v.is_null());
                values
                    .map(|v| v.to_storage().and_then(|v| lookup(by_index, v)))
                    .collect()
            }
            _ => None,
        },
        // The planner gives ranges and prefixes a secondary index; without one, scan.
        _ if !by_index => None,
        SeekPredicate::Range { lower, upper } => {
            let lower = range_bound(lower.as_ref(), &mut operand)?;
            let upper = range_bound(upper.as_ref(), &mut operand)?;
            let range = lower
                .zip(upper)
                .and_then(|(lower, upper)| KeyRange::between(lower.as_ref(), upper.as_ref()));
            range.map(|range| vec![Lookup::Index(range)])
        }
        SeekPredicate::Prefix(prefix) => {
            let range = operand(prefix)?.and_then(|prefix| KeyRange::prefix(&prefix));
            range.map(|range| vec![Lookup::Index(range)])
        }
    })
}

/// The look-up of `value` (not null): in a secondary index (`None` if it is not indexable)
/// or in the primary-key indexes.
fn lookup(by_index: bool, value: StorageValue) -> Option<Lookup> {
    if by_index {
        KeyRange::equal(&value).map(Lookup::Index)
    } else {
        Some(Lookup::Key(value))
    }
}

/// One side of a range seek with its operand evaluated (`Unbounded` when the side is
/// missing), or `None` if the operand is not a storable value.
fn range_bound(
    bound: Option<&RangeBound>,
    operand: &mut impl FnMut(&BExpr) -> Result<Option<StorageValue>>,
) -> Result<Option<Bound<StorageValue>>> {
    let Some(bound) = bound else {
        return Ok(Some(Bound::Unbounded));
    };
    let value = operand(&bound.value)?;
    Ok(value.map(|value| {
        if bound.inclusive {
            Bound::Included(value)
        } else {
            Bound::Excluded(value)
        }
    }))
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

/// The relationships of `v` of the given types and direction, each once (an undirected
/// self-loop is listed once).
pub(crate) fn relationships(
    ctx: &mut ExecContext,
    v: VertexId,
    types: &[Arc<str>],
    direction: Direction,
) -> Result<Vec<(EdgeId, VertexId)>> {
    let mut found = Vec::new();
    relationships_into(ctx, v, types, direction, &mut found)?;
    Ok(found)
}

/// [`relationships`], appended to `found`.
fn relationships_into(
    ctx: &mut ExecContext,
    v: VertexId,
    types: &[Arc<str>],
    direction: Direction,
    found: &mut Vec<(EdgeId, VertexId)>,
) -> Result<()> {
    if types.is_empty() {
        return expand_type(ctx, v, None, direction, found);
    }
    for (i, ty) in types.iter().enumerate() {
        // `[:A|A]` expands A once.
        if !types[..i].contains(ty) {
            expand_type(ctx, v, Some(ty), direction, found)?;
        }
    }
    Ok(())
}

/// The relationships of one type (any with `None`) at `v`; both directions list a self-loop
/// once.
fn expand_type(
    ctx: &mut ExecContext,
    v: VertexId,
    ty: Option<&str>,
    direction: Direction,
    found: &mut Vec<(EdgeId, VertexId)>,
) -> Result<()> {
    match direction {
        Direction::Both => {
            ctx.tx.neighbors_into(v, ty, Direction::Out, found)?;
            let incoming = found.len();
            ctx.tx.neighbors_into(v, ty, Direction::In, found)?;
            // The self-loops among the incoming ones were listed as outgoing.
            let mut index = 0;
            found.retain(|(_, other)| {
                let keep = index < incoming || *other != v;
                index += 1;
                keep
            });
            Ok(())
        }
        d => Ok(ctx.tx.neighbors_into(v, ty, d, found)?),
    }
}

fn as_node(value: &Value, what: &str) -> Result<Option<VertexId>> {
    match value {
        Value::Node(v) => Ok(Some(*v)),
        Value::Null => Ok(None),
        other => Err(QueryError::type_error(format!(
            "expected {what} to be a node but was {}",
            other.type_name()
        ))),
    }
}

/// Whether `e` is one of the relationships in the slots of `distinct_from`.
fn used_elsewhere(input: &Batch, row: usize, distinct_from: &[usize], e: EdgeId) -> bool {
    distinct_from
        .iter()
        .any(|&slot| match input.get(slot, row) {
            Value::Rel(other) => *other == e,
            Value::List(items) => items.iter().any(|x| matches!(x, Value::Rel(o) if *o == e)),
            _ => false,
        })
}

struct Expand {
    spec: ExpandSpec,
    /// The current row's relationships (kept to reuse its allocation).
    found: Vec<(EdgeId, VertexId)>,
}

impl RowFn for Expand {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let Expand { spec, found } = self;
        let Some(from) = as_node(input.get(spec.from, row), "the start of an expand")? else {
            return Ok(());
        };
        let target = if spec.to_bound {
            match as_node(input.get(spec.to, row), "the end of an expand")? {
                Some(t) => Some(t),
                None => return Ok(()),
            }
        } else {
            None
        };
        found.clear();
        relationships_into(ctx, from, &spec.types, spec.direction, found)?;
        for &(e, other) in found.iter() {
            if target.is_some_and(|t| t != other)
                || used_elsewhere(input, row, &spec.distinct_from, e)
            {
                continue;
            }
            out.push_from(input, row);
            out.set_last(spec.rel, Value::Rel(e));
            if !spec.to_bound {
                out.set_last(spec.to, Value::Node(other));
            }
        }
        Ok(())
    }
}

/// The most paths one variable-length expand may produce from one start node.
pub const MAX_PATHS_PER_ROW: usize = 5_000_000;

struct VarExpand {
    spec: ExpandSpec,
    length: VarLengthSpec,
}

impl VarExpand {
    fn rel_ok(&self, input: &Batch, row: usize, e: EdgeId, ctx: &mut ExecContext) -> Result<bool> {
        if used_elsewhere(input, row, &self.spec.distinct_from, e) {
            return Ok(false);
        }
        match &self.length.rel_filter {
            Some((temp, predicate)) => {
                let mut env = Env::new(input, row);
                env.push_local(*temp, Value::Rel(e));
                Ok(truthy(&eval(predicate, &mut env, ctx)?))
            }
            None => Ok(true),
        }
    }

    fn emit(&self, input: &Batch, row: usize, out: &mut Batch, rels: &[EdgeId], end: VertexId) {
        out.push_from(input, row);
        let mut list: Vec<Value> = rels.iter().map(|e| Value::Rel(*e)).collect();
        if self.length.leftwards {
            list.reverse();
        }
        out.set_last(self.spec.rel, Value::list(list));
        if !self.spec.to_bound {
            out.set_last(self.spec.to, Value::Node(end));
        }
    }

    fn shortest(
        &self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
        (from, target): (VertexId, VertexId),
        all: bool,
    ) -> Result<()> {
        let max = self
            .length
            .max
            .unwrap_or(plexus_plan::logical::MAX_VAR_LENGTH_DEPTH);
        if from == target && self.length.min == 0 {
            self.emit(input, row, out, &[], target);
            return Ok(());
        }
        // BFS recording, for each vertex, the (edge, predecessor) pairs of its first level.
        let mut level_of: HashMap<VertexId, u64> = HashMap::from([(from, 0)]);
        let mut preds: HashMap<VertexId, Vec<(EdgeId, VertexId)>> = HashMap::new();
        let mut frontier = vec![from];
        let mut depth = 0;
        let mut found = false;
        while !frontier.is_empty() && depth < max && !found {
            depth += 1;
            let mut next = Vec::new();
            for v in frontier {
                for (e, w) in relationships(ctx, v, &self.spec.types, self.spec.direction)? {
                    if !self.rel_ok(input, row, e, ctx)? {
                        continue;
                    }
                    match level_of.get(&w) {
                        Some(&l) if l < depth => continue,
                        Some(_) => {}
                        None => {
                            level_of.insert(w, depth);
                            next.push(w);
                        }
                    }
                    preds.entry(w).or_default().push((e, v));
                    if w == target {
                        found = true;
                    }
                }
            }
            frontier = next;
        }
        if !found || depth < self.length.min {
            return Ok(());
        }
        // Enumerate paths backwards from the target.
        let mut stack: Vec<(VertexId, Vec<EdgeId>)> = vec![(target, Vec::new())];
        let mut emitted = 0;
        while let Some((v, rels)) = stack.pop() {
            if v == from && !rels.is_empty() {
                let mut forward = rels.clone();
                forward.reverse();
                self.emit(input, row, out, &forward, target);
                emitted += 1;
                if !all {
                    return Ok(());
                }
                if emitted > MAX_PATHS_PER_ROW {
                    return Err(too_many_paths());
                }
                continue;
            }
            for (e, p) in preds.get(&v).into_iter().flatten() {
                if level_of.get(p).copied().unwrap_or(u64::MAX) + 1
                    == level_of.get(&v).copied().unwrap_or(0)
                    && !rels.contains(e)
                {
                    let mut next = rels.clone();
                    next.push(*e);
                    stack.push((*p, next));
                }
            }
        }
        Ok(())
    }
}

fn too_many_paths() -> QueryError {
    QueryError::runtime(
        ErrorClass::DatabaseError,
        "LimitExceeded",
        format!(
            "a variable-length pattern matched more than {MAX_PATHS_PER_ROW} paths from one node"
        ),
    )
}

impl RowFn for VarExpand {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let Some(from) = as_node(input.get(self.spec.from, row), "the start of an expand")? else {
            return Ok(());
        };
        let target = if self.spec.to_bound {
            match as_node(input.get(self.spec.to, row), "the end of an expand")? {
                Some(t) => Some(t),
                None => return Ok(()),
            }
        } else {
            None
        };
        if let Some(kind) = self.length.shortest {
            let Some(target) = target else {
                return Err(QueryError::runtime(
                    ErrorClass::SemanticError,
                    "UnboundShortestPath",
                    "shortestPath needs both end nodes bound",
                ));
            };
            return self.shortest(
                input,
                row,
                out,
                ctx,
                (from, target),
                kind == ShortestPath::All,
            );
        }
        let max = self
            .length
            .max
            .unwrap_or(plexus_plan::logical::MAX_VAR_LENGTH_DEPTH);
        let min = self.length.min;
        // Depth-first over (vertex, relationships so far), relationship-unique per path.
        let mut emitted = 0usize;
        let mut stack: Vec<(VertexId, Vec<EdgeId>)> = vec![(from, Vec::new())];
        while let Some((v, rels)) = stack.pop() {
            let depth = rels.len() as u64;
            if depth >= min && target.is_none_or(|t| t == v) {
                self.emit(input, row, out, &rels, v);
                emitted += 1;
                if emitted > MAX_PATHS_PER_ROW {
                    return Err(too_many_paths());
                }
            }
            if depth >= max {
                continue;
            }
            let mut next = Vec::new();
            for (e, w) in relationships(ctx, v, &self.spec.types, self.spec.direction)? {
                if rels.contains(&e) || !self.rel_ok(input, row, e, ctx)? {
                    continue;
                }
                let mut extended = rels.clone();
                extended.push(e);
                next.push((w, extended));
            }
            // Reverse so that the first neighbour is explored first.
            stack.extend(next.into_iter().rev());
        }
        Ok(())
    }
}

// ---- row-wise relational operators --------------------------------------------------------

struct Filter {
    predicate: BExpr,
    /// The predicate's property reads, fetched per batch (see `eval::prefetch`).
    reads: PropertyReads,
}

impl Stage for Filter {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        let prefetched = self.reads.fetch(input, ctx);
        for row in 0..input.len() {
            let mut env = Env::with_prefetched(input, row, &prefetched);
            if passes_in(&self.predicate, &mut env, ctx)? {
                out.push_from(input, row);
            }
        }
        Ok(Flow::NeedMoreInput)
    }

    fn reset(&mut self) {}
}

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

fn passes_in(predicate: &BExpr, env: &mut Env, ctx: &mut ExecContext) -> Result<bool> {
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

struct Project {
    items: Vec<(usize, BExpr)>,
    /// The items' property reads, fetched per batch (see `eval::prefetch`).
    reads: PropertyReads,
}

impl Stage for Project {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        let prefetched = self.reads.fetch(input, ctx);
        let mut columns: Vec<Vec<Value>> = Vec::with_capacity(self.items.len());
        for (_, expr) in &self.items {
            let mut column = Vec::with_capacity(input.len());
            for row in 0..input.len() {
                let mut env = Env::with_prefetched(input, row, &prefetched);
                column.push(eval(expr, &mut env, ctx)?);
            }
            columns.push(column);
        }
        *out = std::mem::replace(input, Batch::new(0));
        for ((slot, _), column) in self.items.iter().zip(columns) {
            out.columns[*slot] = column;
        }
        Ok(Flow::NeedMoreInput)
    }

    fn reset(&mut self) {}
}

struct Aggregate {
    input: Box<dyn Operator>,
    aggregation: Aggregation,
    output: Materialized,
}

/// The serial Aggregate over `input` (see `aggregate`, GROUPS).
pub(super) fn aggregate_operator(
    input: Box<dyn Operator>,
    aggregation: Aggregation,
) -> Box<dyn Operator> {
    Box::new(Aggregate {
        input,
        aggregation,
        output: Materialized::default(),
    })
}

impl Breaker for Aggregate {
    fn parts(&mut self) -> (&mut dyn Operator, &mut Materialized) {
        (self.input.as_mut(), &mut self.output)
    }

    fn compute(&mut self, ctx: &mut ExecContext) -> Result<Vec<Batch>> {
        let mut groups = Groups::default();
        while let Some(batch) = self.input.next(ctx)? {
            groups.feed(&self.aggregation, &batch, ctx)?;
        }
        groups.finish(&self.aggregation, ctx.width)
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

/// Runs `inner` with `row` as its argument and returns all its rows' batches.
pub(crate) fn run_inner(
    inner: &mut dyn Operator,
    row: Arc<Vec<Value>>,
    ctx: &mut ExecContext,
) -> Result<Vec<Batch>> {
    inner.reset();
    let mut batches = Vec::new();
    let mut rows = 0;
    loop {
        let next = ctx.with_argument(row.clone(), |ctx| inner.next(ctx))?;
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
pub(super) fn push_null_extended(input: &Batch, row: usize, out: &mut Batch, nulls: &[usize]) {
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

    #[test]
    fn an_id_names_the_vertex_of_its_table_and_offset_and_nothing_else_names_one() {
        let v = VertexId::new(3, 7);
        let id = Value::Int((3 << 32) | 7);
        assert_eq!(named_vertex(IdFunction::Id, &id), Some(v));
        let float = Value::Float(((3_i64 << 32) | 7) as f64);
        assert_eq!(named_vertex(IdFunction::Id, &float), Some(v));
        assert_eq!(
            named_vertex(IdFunction::ElementId, &Value::from("v3:7")),
            Some(v)
        );
        for (function, value) in [
            (IdFunction::Id, Value::Int(-1)),
            (IdFunction::Id, Value::Float(0.5)),
            (IdFunction::Id, Value::Float(f64::NAN)),
            (IdFunction::Id, Value::Float(1e300)),
            (IdFunction::Id, Value::from("v3:7")),
            (IdFunction::Id, Value::Null),
            (IdFunction::ElementId, id.clone()),
            (IdFunction::ElementId, Value::Null),
            (IdFunction::ElementId, Value::from("e3:7")),
            (IdFunction::ElementId, Value::from("v3:+7")),
            (IdFunction::ElementId, Value::from("v3")),
            (IdFunction::ElementId, Value::from("v:7")),
            (IdFunction::ElementId, Value::from("v3:7:1")),
            (IdFunction::ElementId, Value::from("v3:4294967296")),
        ] {
            assert_eq!(named_vertex(function, &value), None, "{value:?}");
        }
    }
}
