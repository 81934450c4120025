//! The hash join (`LogicalPlan::HashJoin`, planned where `plexus_plan::bind::join` says): its build side
//! runs once into a hash table, and the input's rows stream through and probe it.
//!
//! BUILD
//! =====
//! On the first input row — an empty input never runs the build side — the build side runs
//! to its end, in the statement's transaction like every other operator. Each of its rows
//! goes into the group of its key ([`GroupKey`]: equal values share a group, `1` and `1.0`
//! too), keeping only its `build_slots` values; a group keeps its rows in build order. A row
//! whose key holds null or NaN anywhere can equal nothing (`value::can_be_equal`) and is left
//! out.
//!
//! ```text
//!   build rows (s1, s1.name)        table
//!   (c1, 'Oslo')                    'Oslo'  → [c1, c3]
//!   (c2, null)      left out        'Rome'  → [c4]
//!   (c3, 'Oslo')
//!   (c4, 'Rome')
//! ```
//!
//! PROBE
//! =====
//! The properties the keys read are read for a whole input (and build) batch at once
//! (`eval::prefetch`: one storage pass per batch instead of one lookup per row); each
//! input row's key is then evaluated and looked up; the row is emitted once per row of its
//! group, with that row's build values filled in. A group larger than the room left in the
//! output batch continues in the next batch (`FanOut`, as scans do). Input rows with a null
//! or NaN in their key, or no group, produce nothing. The input streams: only the table is
//! held.
//!
//! INTEGER KEYS
//! ============
//! When every build key is a single integer — a join on an integer property, the common
//! case — the table is keyed by the `i64` itself once built (no key list to follow on every
//! probe). The probe's key finds the same group as under `GroupKey` equivalence: an integer
//! directly, a float without fraction in `i64`'s range as that integer (`1.0 = 1`), and
//! anything else (another float, a string, a list, ...) no group, as none is equal to an
//! integer.
//!
//! LEFT OUTER
//! ==========
//! For an OPTIONAL MATCH (`optional`, see `plexus_plan::bind::join` LEFT OUTER) each partner of an input
//! row is first written into a one-row scratch batch (the input row with its build values)
//! and kept only if the `residual` is true there (false and null drop it, another value is a
//! type error, as in a Filter). An input row that keeps none — no group, a null or NaN in
//! its key, an empty build side — is emitted once with the `nulls` slots null, exactly as
//! the `Optional` operator does (`ops::push_null_extended`). Output order is input order,
//! then build order within an input row. PROFILE counts the rows emitted, null-extended ones
//! included.
//!
//! ERRORS
//! ======
//! A key expression can fail (`a.k + 1` on a boolean). The nested plan evaluates the lowest
//! of the filters above the part on every pair of an input row and a build row; the join
//! evaluates every key of every build row once the input has a row, and every key of every
//! input row once the build side has produced a row (joinable or not), so a failing key
//! fails both. Beyond that the two evaluate expressions on different rows — the join all its
//! keys on every row, the filters above it only on joined pairs — so an expression that fails
//! on some rows may fail one plan and not the other: the latitude predicate pushdown takes
//! too (`plexus_plan::optimizer::pushdown`). A left outer join's residual is evaluated on the pairs with equal
//! keys only; the nested plan evaluates the WHERE on every pair its filters reach.
//!
//! MEMORY
//! ======
//! The table holds at most [`MAX_MATERIALIZED_ROWS`] rows, the bound of every pipeline
//! breaker, each as `build_slots.len()` values plus its key's; a build side with more rows
//! fails the statement (`LimitExceeded`) instead of dropping any.
//!
//! RUNS
//! ====
//! Inside an inner plan (OPTIONAL MATCH, CALL {}, EXISTS, ...) the operator is reset and run
//! again for every argument row. The build side reads nothing of the argument row (see
//! `plexus_plan::bind::join`), so its rows change only if the statement wrote in between: a statement that
//! cannot write ([`ExecState::may_write`]) builds the table once and probes it in every run;
//! one that may write builds it again in each run, as the nested plan would scan again.
//!
//! [`MAX_MATERIALIZED_ROWS`]: super::MAX_MATERIALIZED_ROWS
//! [`ExecState::may_write`]: super::ExecState::may_write

use super::ops::{FanOut, RowFn, passes, push_null_extended};
use super::{Batch, ExecContext, Operator, check_materialized};
use crate::eval::prefetch::{Prefetched, PropertyReads};
use crate::eval::{Env, eval};
use plexus_plan::logical::BExpr;
use plexus_plan::logical::OuterJoin;
use plexus_value::error::Result;
use plexus_value::value::{GroupKey, Value, can_be_equal, integral_float};
use std::collections::HashMap;
use std::sync::Arc;

/// The `build_slots` values of the build rows of one key, in build order.
type Rows = Arc<Vec<Vec<Value>>>;

/// The build rows grouped by key.
type Groups = HashMap<GroupKey, Rows, ahash::RandomState>;

/// The groups, as looked up (see INTEGER KEYS).
enum Index {
    General(Groups),
    /// Every build key is one integer: the groups by that integer.
    Ints(HashMap<i64, Rows, ahash::RandomState>),
}

impl Index {
    /// `groups` in the form its keys allow.
    fn of(groups: Groups) -> Index {
        let int_keys = groups.keys().all(|k| matches!(k.0[..], [Value::Int(_)]));
        if !int_keys || groups.is_empty() {
            return Index::General(groups);
        }
        let ints = (groups.into_iter())
            .map(|(key, rows)| match key.0[..] {
                [Value::Int(i)] => (i, rows),
                _ => unreachable!("checked above"),
            })
            .collect();
        Index::Ints(ints)
    }

    /// The group of `key` (one that [`can_be_equal`]), if any.
    fn get(&self, key: &GroupKey) -> Option<&Rows> {
        match self {
            Index::General(groups) => groups.get(key),
            Index::Ints(ints) => match key.0[..] {
                [Value::Int(i)] => ints.get(&i),
                [Value::Float(f)] => integral_float(f).and_then(|i| ints.get(&i)),
                // Equivalent to no integer (a list, a string, a node, ...).
                _ => None,
            },
        }
    }
}

/// What one run of the build side left.
struct Table {
    index: Index,
    /// The build side produced rows, joinable or not (see ERRORS).
    any_rows: bool,
}

/// The probing half, a pipeline stage over the input; owns the build side.
pub(super) struct HashJoin {
    build: Box<dyn Operator>,
    input_keys: Vec<BExpr>,
    build_keys: Vec<BExpr>,
    /// The properties `input_keys` (`build_keys`) read, fetched per batch.
    input_reads: PropertyReads,
    build_reads: PropertyReads,
    /// Those of the current input batch.
    prefetched: Prefetched,
    /// The current input row's key, its buffer reused from row to row.
    probe: GroupKey,
    build_slots: Vec<usize>,
    table: Option<Table>,
    /// Reset since the table was built (see RUNS).
    rerun: bool,
    /// The current input row's matches that did not fit in the last batch.
    rest: Option<FanOut<Vec<Value>>>,
    /// A left outer join's residual and null slots (see LEFT OUTER).
    optional: Option<OuterJoin>,
}

impl HashJoin {
    pub(super) fn new(
        build: Box<dyn Operator>,
        keys: &[(BExpr, BExpr)],
        build_slots: Vec<usize>,
        optional: Option<OuterJoin>,
    ) -> Self {
        debug_assert!(!keys.is_empty(), "a hash join has a key");
        debug_assert!(
            (optional.as_ref()).is_none_or(|o| build_slots.iter().all(|s| o.nulls.contains(s))),
            "a left outer join nulls every slot its build side fills"
        );
        let (input_keys, build_keys): (Vec<_>, Vec<_>) = keys.iter().cloned().unzip();
        HashJoin {
            build,
            input_reads: PropertyReads::of(&input_keys),
            build_reads: PropertyReads::of(&build_keys),
            prefetched: Prefetched::default(),
            probe: GroupKey(Vec::with_capacity(input_keys.len())),
            input_keys,
            build_keys,
            build_slots,
            table: None,
            rerun: false,
            rest: None,
            optional,
        }
    }

    /// Builds the table if this run has none yet (see BUILD and RUNS), then reads the
    /// input keys' properties for the batch — unless the build side is empty, when no key
    /// is evaluated.
    fn prepare(&mut self, input: &Batch, ctx: &mut ExecContext) -> Result<()> {
        let stale = self.rerun && ctx.state.may_write;
        self.rerun = false;
        let table = match self.table.take() {
            Some(table) if !stale => table,
            _ => self.build_table(ctx)?,
        };
        let table = self.table.insert(table);
        self.prefetched = if table.any_rows {
            self.input_reads.fetch(input, ctx)
        } else {
            Prefetched::default()
        };
        Ok(())
    }

    /// The build rows whose key equals input row `row`'s, if any.
    fn matches(
        &mut self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<Arc<Vec<Vec<Value>>>>> {
        let table = self.table.as_ref().expect("prepare builds the table");
        if !table.any_rows {
            return Ok(None);
        }
        let mut env = Env::with_prefetched(input, row, &self.prefetched);
        if !key_of(&self.input_keys, &mut env, ctx, &mut self.probe.0)? {
            return Ok(None);
        }
        let table = self.table.as_ref().expect("prepare builds the table");
        Ok(table.index.get(&self.probe).cloned())
    }

    /// The build rows input row `row` is joined to, if any: those of its key's group, and
    /// under a left outer join only those whose joined row passes the residual.
    fn partners(
        &mut self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<Arc<Vec<Vec<Value>>>>> {
        let group = self.matches(input, row, ctx)?;
        let residual = self.optional.as_ref().and_then(|o| o.residual.as_ref());
        let (Some(group), Some(residual)) = (group.as_deref(), residual) else {
            return Ok(group);
        };
        let mut joined = Batch::new(input.width());
        joined.push_from(input, row);
        let mut kept = Vec::new();
        for values in group {
            fill(&self.build_slots, &mut joined, values);
            if passes(residual, &joined, 0, ctx)? {
                kept.push(values.clone());
            }
        }
        Ok((!kept.is_empty()).then(|| Arc::new(kept)))
    }

    /// Runs the build side from its start into a table (see BUILD).
    fn build_table(&mut self, ctx: &mut ExecContext) -> Result<Table> {
        self.build.reset();
        let mut groups = Groups::default();
        let mut any_rows = false;
        let mut held_rows = 0;
        while let Some(batch) = self.build.next(ctx)? {
            any_rows |= !batch.is_empty();
            let prefetched = self.build_reads.fetch(&batch, ctx);
            for row in 0..batch.len() {
                let mut env = Env::with_prefetched(&batch, row, &prefetched);
                let mut key = Vec::with_capacity(self.build_keys.len());
                if !key_of(&self.build_keys, &mut env, ctx, &mut key)? {
                    continue;
                }
                held_rows += 1;
                check_materialized(held_rows)?;
                let values = self.build_slots.iter().map(|s| batch.get(*s, row).clone());
                Arc::make_mut(groups.entry(GroupKey(key)).or_default()).push(values.collect());
            }
        }
        let index = Index::of(groups);
        Ok(Table { index, any_rows })
    }
}

/// The key of `env`'s row under `exprs` (every one evaluated, see ERRORS) into `key`
/// (cleared first); `false` when a value of it can equal nothing.
fn key_of(
    exprs: &[BExpr],
    env: &mut Env,
    ctx: &mut ExecContext,
    key: &mut Vec<Value>,
) -> Result<bool> {
    key.clear();
    for expr in exprs {
        key.push(eval(expr, env, ctx)?);
    }
    Ok(key.iter().all(can_be_equal))
}

/// Sets `slots` of `out`'s last row to a build row's `values`.
fn fill(slots: &[usize], out: &mut Batch, values: &[Value]) {
    for (slot, value) in slots.iter().zip(values) {
        out.set_last(*slot, value.clone());
    }
}

impl RowFn for HashJoin {
    fn begin_batch(&mut self, input: &Batch, ctx: &mut ExecContext) -> Result<()> {
        if input.is_empty() {
            // An empty input never runs the build side (see BUILD).
            return Ok(());
        }
        self.prepare(input, ctx)
    }

    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let fan = match self.rest.take() {
            Some(rest) => rest,
            None => match self.partners(input, row, ctx)? {
                Some(group) => FanOut::new(group),
                None => {
                    if let Some(outer) = &self.optional {
                        push_null_extended(input, row, out, &outer.nulls);
                    }
                    return Ok(());
                }
            },
        };
        let slots = &self.build_slots;
        self.rest = fan.emit(input, row, out, |out, values| fill(slots, out, values));
        Ok(())
    }

    fn reset(&mut self) {
        self.rest = None;
        self.rerun = self.table.is_some();
    }

    fn pending(&self) -> bool {
        self.rest.is_some()
    }
}
