//! Grouping and aggregation state: the serial Aggregate's table, and partial aggregation per
//! morsel merged in morsel order.
//!
//! GROUPS
//! ======
//! [`Groups`] is an Aggregate's table: the groups' key values in first-seen order, an index by
//! key (under `GroupKey` equivalence: `1 ≡ 1.0`, `null ≡ null`), one `Accumulator` per group
//! and call. Each input row takes three steps, in this order: its keys are evaluated, its
//! group is found or created (beyond `MAX_MATERIALIZED_ROWS` groups: `LimitExceeded`), then
//! each call is updated in order. The output is one row per group in first-seen order; with no
//! input rows and no grouping keys, one row of empty states (`count(*)` 0, `sum` 0, `collect`
//! [], `min` null). The serial Aggregate (`ops::Aggregate`) feeds all its rows to one
//! [`Table`]: for the common shapes (one integer key or none; `count`, `sum`, `avg`, `min`,
//! `max` over integer or float vectors) a typed table that stands for a `Groups` and turns
//! into one at the first batch it cannot take (`typed_aggregate`), else a `Groups`.
//!
//! PARTIAL AGGREGATION
//! ===================
//! Under `Parallel … partial-aggregate` (`plexus_plan::optimizer::parallel`), each worker feeds the rows of one
//! morsel, in the order its stages produce them, to a [`MorselAggregator`] and sends the
//! result, a [`MorselAggregate`], when the morsel ends (typed, for the shapes above, while
//! the morsel's batches fit: `typed_aggregate`, PARALLEL). The caller merges them into its own
//! table strictly in morsel order ([`Table::merge`], [`Groups::merge`]), then emits it as above:
//!
//! ```text
//!   morsel 0  groups [b, a]     replayed sums [(row 0, b, 1.5), (row 2, a, 2)]
//!   morsel 1  groups [c, a]     replayed sums [(row 0, c, 0.1), (row 1, a, 1e16)]
//!   caller    groups [b, a, c]  a: (0 + 2) + 1e16, the serial additions in the serial order
//! ```
//!
//! Why the result is the serial plan's, bit for bit and in the same order:
//! - Serially the Aggregate sees morsel 0's rows, then morsel 1's, …, each morsel's in the
//!   order its stages produce them (`exec::parallel`, WHY IN SCAN ORDER). The caller merges
//!   morsels in that order, and a morsel's groups and values are recorded in row order.
//! - Group order: a morsel's groups are in their first-seen order within the morsel; the
//!   caller appends the ones it has not seen yet in that order, which is their first-seen
//!   order over the concatenated rows.
//! - A `Merged` call's morsel state folds in with `Accumulator::merge`, which gives the state
//!   over the earlier rows then the morsel's (`eval::aggregate`, PARTIAL STATES).
//! - A `Replayed` call's values reach the caller's accumulator in serial order: sums round and
//!   overflow at the same step; with DISTINCT a value's first occurrence overall is its first
//!   occurrence in its morsel, the one the worker keeps, so `collect(DISTINCT x)` keeps the
//!   serial order. (A replayed call's accumulator in a morsel only remembers what it saw.)
//!
//! ERRORS
//! ======
//! Serially the first failing step of the first failing row wins. A worker stops at its first
//! error — a key, an argument or a stage; a `Merged` call can only fail evaluating its
//! argument — and sends what it recorded before it with the error. What is recorded precedes
//! the error, so [`Groups::merge`] of morsel k: (1) creates the morsel's new groups until one
//! would exceed the limit, at the row that first met it; (2) replays the values recorded
//! before that row, stopping at the first failure (a non-number in `sum`, an overflow, a
//! duration added to a number); (3) returns the limit error, if any; (4) folds the merged
//! calls; (5) returns the worker's error, if any. Morsels before k merged without error, so
//! this is the serial plan's first error. (As serially, which of two failing rows of one
//! batch a Project reports depends on batch boundaries, which differ at morsel edges.)
//!
//! VECTORS
//! =======
//! The keys and arguments of a batch's rows are computed as typed vectors where
//! `eval::vector::column` can give exactly the row evaluator's values (property reads,
//! arithmetic, comparisons, ...; nothing that can fail on a row it covers), and evaluated
//! row at a time otherwise. The rows then take the three steps above in order, as before:
//! a vector cannot fail, so the first failing step of the first failing row is the same.
//! With a single key, a group whose key is an integer is also found through an index by the
//! `i64` (`ints`): a miss there looks the key up as a `GroupKey` (`1.0` finds the group of
//! `1`) before the group is created, so both indexes always agree.
//!
//! BOUNDS
//! ======
//! A `MorselAggregate` holds at most one group per input row of its morsel and one value per
//! replayed call and row: never more than the morsel's rows, which the exchange would have
//! buffered instead; the caller buffers at most the morsel window's
//! (`MORSELS_AHEAD_PER_WORKER` × workers) of them. The caller's table is bounded by
//! `MAX_MATERIALIZED_ROWS` groups, as serially.

use super::typed_aggregate::TypedTable;
use super::{Batch, ExecContext, check_materialized, into_batches};
use crate::eval::prefetch::{Prefetched, PropertyReads};
use crate::eval::vector::{self, Vector};
use crate::eval::{Env, aggregate::Accumulator, eval};
use plexus_plan::logical::BExpr;
use plexus_plan::logical::{AggCall, PartialForm, partial_form};
use plexus_value::error::{QueryError, Result};
use plexus_value::value::{GroupKey, Value};
use std::collections::HashMap;

/// What an Aggregate computes: grouping keys and calls, each with its output slot.
#[derive(Clone, Debug)]
pub(super) struct Aggregation {
    pub keys: Vec<(usize, BExpr)>,
    pub calls: Vec<(usize, AggCall)>,
}

impl Aggregation {
    /// The property reads every row makes: its keys and the aggregates' arguments (see
    /// `eval::prefetch`).
    fn property_reads(&self) -> PropertyReads {
        let keys = self.keys.iter().map(|(_, e)| e);
        PropertyReads::of(keys.chain(self.calls.iter().filter_map(|(_, c)| c.arg.as_ref())))
    }

    /// The property reads of `batch` and its keys and arguments as vectors (`columns`), for a
    /// typed table when `typed`.
    fn inputs(&self, batch: &Batch, ctx: &mut ExecContext, typed: bool) -> (Prefetched, Columns) {
        let prefetched = self.property_reads().fetch(batch, ctx);
        let columns = self.columns(batch, &prefetched, ctx, typed);
        (prefetched, columns)
    }

    /// The keys and arguments of `batch` as vectors where they can be (see VECTORS); slots
    /// too when `slots` (typed aggregation takes only vectors).
    fn columns(
        &self,
        batch: &Batch,
        prefetched: &Prefetched,
        ctx: &mut ExecContext,
        slots: bool,
    ) -> Columns {
        let mut column = |e: &BExpr| match e {
            // A slot's value is read as cheaply as a vector's, row by row.
            BExpr::Slot(_) if !slots => None,
            e => vector::column(e, batch, prefetched, ctx),
        };
        let keys = self.keys.iter().map(|(_, e)| column(e)).collect();
        let args = (self.calls.iter())
            .map(|(_, call)| match (&call.arg, &call.extra) {
                // `percentileCont` / `percentileDisc` read their second argument in
                // `Accumulator::update`.
                (Some(arg), None) => column(arg),
                _ => None,
            })
            .collect();
        Columns { keys, args }
    }

    /// The grouping key of row `row` (the first step of a row), into `key`.
    fn key(
        &self,
        columns: &Columns,
        row: usize,
        env: &mut Env,
        ctx: &mut ExecContext,
        key: &mut GroupKey,
    ) -> Result<()> {
        key.0.clear();
        for ((_, e), vector) in self.keys.iter().zip(&columns.keys) {
            key.0.push(match vector {
                Some(vector) => vector.value(row),
                None => eval(e, env, ctx)?,
            });
        }
        Ok(())
    }

    fn empty_states(&self) -> Vec<Accumulator> {
        self.calls
            .iter()
            .map(|(_, c)| Accumulator::new(c))
            .collect()
    }
}

/// The keys and arguments of one batch's rows computed as vectors, `None` where they are
/// evaluated row at a time (see VECTORS).
struct Columns {
    keys: Vec<Option<Vector>>,
    /// Per call.
    args: Vec<Option<Vector>>,
}

impl Columns {
    /// Feeds row `row` to `acc`, call `call`'s accumulator of the row's group
    /// (`Accumulator::update`, its argument taken from the vector if there is one).
    fn update(
        &self,
        acc: &mut Accumulator,
        aggregation: &Aggregation,
        call: usize,
        row: usize,
        env: &mut Env,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let (_, function) = &aggregation.calls[call];
        match self.args[call].as_ref().map(|v| v.value(row)) {
            Some(Value::Null) => Ok(()),
            Some(value) => acc.add(function, value),
            None => acc.update(function, env, ctx),
        }
    }

    /// Call `call`'s argument on row `row`.
    fn argument(
        &self,
        aggregation: &Aggregation,
        call: usize,
        row: usize,
        env: &mut Env,
        ctx: &mut ExecContext,
    ) -> Result<Value> {
        match &self.args[call] {
            Some(vector) => Ok(vector.value(row)),
            None => {
                let arg = aggregation.calls[call].1.arg.as_ref();
                eval(arg.expect("a replayed call has an argument"), env, ctx)
            }
        }
    }
}

/// An Aggregate's table (see GROUPS).
#[derive(Default)]
pub(super) struct Groups {
    index: HashMap<GroupKey, usize, ahash::RandomState>,
    /// With a single key, the groups of integer keys found so far, by the integer (see
    /// VECTORS); every entry agrees with `index`.
    ints: HashMap<i64, usize, ahash::RandomState>,
    /// The current row's key, its buffer reused from row to row.
    probe: GroupKey,
    /// Key values per group, in first-seen order.
    keys: Vec<Vec<Value>>,
    /// One accumulator per call, per group.
    states: Vec<Vec<Accumulator>>,
}

impl Groups {
    /// The index of `key`'s group, created with empty states if new.
    fn group(&mut self, key: Vec<Value>, aggregation: &Aggregation) -> Result<usize> {
        let key = GroupKey(key);
        if let Some(&group) = self.index.get(&key) {
            return Ok(group);
        }
        self.create(key, aggregation)
    }

    /// A new group for `key` (not in the index), with empty states.
    fn create(&mut self, key: GroupKey, aggregation: &Aggregation) -> Result<usize> {
        check_materialized(self.keys.len() + 1)?;
        let group = self.keys.len();
        self.keys.push(key.0.clone());
        self.index.insert(key, group);
        self.states.push(aggregation.empty_states());
        debug_assert_eq!(self.keys.len(), self.states.len());
        Ok(group)
    }

    /// The group of row `row` (its key computed), created if new.
    fn group_of_row(
        &mut self,
        aggregation: &Aggregation,
        columns: &Columns,
        row: usize,
        env: &mut Env<'_>,
        ctx: &mut ExecContext,
    ) -> Result<usize> {
        // Without grouping keys every row is in the one group: no key to build or hash.
        if aggregation.keys.is_empty() && !self.keys.is_empty() {
            return Ok(0);
        }
        aggregation.key(columns, row, env, ctx, &mut self.probe)?;
        let int = match self.probe.0[..] {
            [Value::Int(i)] => Some(i),
            _ => None,
        };
        if let Some(&group) = int.and_then(|i| self.ints.get(&i)) {
            return Ok(group);
        }
        let group = match self.index.get(&self.probe) {
            Some(&group) => group,
            None => self.create(self.probe.clone(), aggregation)?,
        };
        if let Some(i) = int {
            self.ints.insert(i, group);
        }
        Ok(group)
    }

    /// Appends a group with its key and states (not in the table yet; typed aggregation's
    /// conversion, `typed_aggregate`, already checked the limit).
    pub(super) fn push_group(&mut self, key: Vec<Value>, states: Vec<Accumulator>) {
        let group = self.keys.len();
        if let [Value::Int(i)] = key[..] {
            self.ints.insert(i, group);
        }
        let previous = self.index.insert(GroupKey(key.clone()), group);
        debug_assert!(previous.is_none(), "a group's key is new to the table");
        self.keys.push(key);
        self.states.push(states);
    }

    /// Feeds every row of `batch`, each through its three steps (see GROUPS), its reads and
    /// vectors computed already.
    fn feed(
        &mut self,
        aggregation: &Aggregation,
        batch: &Batch,
        prefetched: &Prefetched,
        columns: &Columns,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        for row in 0..batch.len() {
            let mut env = Env::with_prefetched(batch, row, prefetched);
            let group = self.group_of_row(aggregation, columns, row, &mut env, ctx)?;
            for (call, acc) in self.states[group].iter_mut().enumerate() {
                columns.update(acc, aggregation, call, row, &mut env, ctx)?;
            }
        }
        Ok(())
    }

    /// Folds in the next morsel's partial aggregate (see ERRORS for which failure wins).
    pub(super) fn merge(&mut self, aggregation: &Aggregation, part: MorselAggregate) -> Result<()> {
        let MorselAggregate {
            typed,
            groups,
            first_rows,
            replays,
            error,
        } = part;
        let (groups, first_rows, replays) = match typed {
            Some(table) => {
                let (groups, first_rows, replays, _) = table.into_morsel_values(aggregation);
                (groups, first_rows, replays)
            }
            None => (groups, first_rows, replays),
        };
        debug_assert_eq!(groups.keys.len(), first_rows.len());
        // (1) This table's group of each of the morsel's groups, in the morsel's order.
        let mut merged_into = Vec::with_capacity(groups.keys.len());
        let mut limit = None;
        for (key, first_row) in groups.keys.into_iter().zip(first_rows) {
            match self.group(key, aggregation) {
                Ok(group) => merged_into.push(group),
                Err(e) => {
                    limit = Some((first_row, e));
                    break;
                }
            }
        }
        // (2) A value recorded at or after the row that exceeded the limit never met its
        // accumulator serially. Earlier values belong to groups created before that row.
        for replay in replays {
            if limit.as_ref().is_some_and(|(row, _)| replay.row >= *row) {
                break;
            }
            let (_, call) = &aggregation.calls[replay.call];
            self.states[merged_into[replay.group]][replay.call].add(call, replay.value)?;
        }
        // (3)
        if let Some((_, e)) = limit {
            return Err(e);
        }
        // (4)
        for (group, later) in merged_into.into_iter().zip(groups.states) {
            let calls = self.states[group]
                .iter_mut()
                .zip(later)
                .zip(&aggregation.calls);
            for ((acc, later), (_, call)) in calls {
                if partial_form(call) == Some(PartialForm::Merged) {
                    acc.merge(call, later);
                }
            }
        }
        // (5)
        error.map_or(Ok(()), Err)
    }

    /// The output rows, one per group in first-seen order (see GROUPS).
    pub(super) fn finish(mut self, aggregation: &Aggregation, width: usize) -> Result<Vec<Batch>> {
        if self.keys.is_empty() && aggregation.keys.is_empty() {
            self.keys.push(Vec::new());
            self.states.push(aggregation.empty_states());
        }
        let mut rows = Vec::with_capacity(self.keys.len());
        for (key, states) in self.keys.into_iter().zip(self.states) {
            let mut row = vec![Value::Null; width];
            for ((slot, _), value) in aggregation.keys.iter().zip(key) {
                row[*slot] = value;
            }
            for ((slot, call), acc) in aggregation.calls.iter().zip(states) {
                row[*slot] = acc.finish(call)?;
            }
            rows.push(row);
        }
        Ok(into_batches(rows, width))
    }
}

/// An Aggregate's table: typed while every batch fits (`typed_aggregate`), else `Groups`.
pub(super) enum Table {
    Typed(TypedTable),
    Values(Groups),
}

impl Table {
    pub(super) fn new(aggregation: &Aggregation) -> Table {
        match TypedTable::new(aggregation, false) {
            Some(table) => Table::Typed(table),
            None => Table::Values(Groups::default()),
        }
    }

    /// Feeds every row of `batch` (see GROUPS).
    pub(super) fn feed(
        &mut self,
        aggregation: &Aggregation,
        batch: &Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let (prefetched, columns) = aggregation.inputs(batch, ctx, matches!(self, Table::Typed(_)));
        if let Table::Typed(table) = self {
            if table.feed(&columns.keys, &columns.args, batch.len())? {
                return Ok(());
            }
            self.untype(aggregation);
        }
        match self {
            Table::Values(groups) => groups.feed(aggregation, batch, &prefetched, &columns, ctx),
            Table::Typed(_) => unreachable!("turned to Groups above"),
        }
    }

    /// Turns a typed table into the `Groups` it stands for, for good.
    fn untype(&mut self, aggregation: &Aggregation) {
        if matches!(self, Table::Typed(_))
            && let Table::Typed(table) = std::mem::replace(self, Table::Values(Groups::default()))
        {
            *self = Table::Values(table.into_groups(aggregation));
        }
    }

    /// Folds in the next morsel's partial aggregate (see ERRORS).
    pub(super) fn merge(&mut self, aggregation: &Aggregation, part: MorselAggregate) -> Result<()> {
        if let (Table::Typed(table), Some(typed)) = (&mut *self, &part.typed)
            && table.merges_typed(typed)
        {
            let typed = part.typed.expect("checked above");
            return table.merge(typed, part.error);
        }
        self.untype(aggregation);
        match self {
            Table::Values(groups) => groups.merge(aggregation, part),
            Table::Typed(_) => unreachable!("turned to Groups above"),
        }
    }

    /// The output rows (see GROUPS).
    pub(super) fn finish(mut self, aggregation: &Aggregation, width: usize) -> Result<Vec<Batch>> {
        self.untype(aggregation);
        match self {
            Table::Values(groups) => groups.finish(aggregation, width),
            Table::Typed(_) => unreachable!("turned to Groups above"),
        }
    }
}

/// An Aggregate's state fed by the Filter stage below it — the top stage of its input
/// pipeline — in place of that stage's output rows, when the filters and the aggregation run
/// as one compiled loop (`exec::filter`, COMPILED PIPELINES): the serial Aggregate's table,
/// or a parallel worker's morsel state. Passed through `Operator::absorb` as a `Sink`.
pub(super) struct AggregateSink {
    pub(super) aggregation: Aggregation,
    pub(super) state: SinkState,
}

// One per Aggregate or morsel, moved a few times per morsel: the size does not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum SinkState {
    Serial(Table),
    Morsel(MorselAggregator),
}

impl AggregateSink {
    /// Feeds every row of `batch` (the rows the filters kept), as the Aggregate would.
    pub(super) fn feed(&mut self, batch: &Batch, ctx: &mut ExecContext) -> Result<()> {
        match &mut self.state {
            SinkState::Serial(table) => table.feed(&self.aggregation, batch, ctx),
            SinkState::Morsel(morsel) => morsel.feed(&self.aggregation, batch, ctx),
        }
    }

    /// The typed table compiled code updates, while the state is typed.
    pub(super) fn typed(&mut self) -> Option<&mut TypedTable> {
        match &mut self.state {
            SinkState::Serial(Table::Typed(table)) => Some(table),
            SinkState::Morsel(morsel) => morsel.typed.as_mut(),
            SinkState::Serial(Table::Values(_)) => None,
        }
    }

    /// Whether this is a parallel worker's morsel state (its sums recorded for replay).
    pub(super) fn replay(&self) -> bool {
        matches!(self.state, SinkState::Morsel(_))
    }

    /// What compiled code computes for this aggregation, or why it is not compiled.
    pub(super) fn program(&self) -> std::result::Result<plexus_jit::AggregateProgram, String> {
        super::typed_aggregate::program(&self.aggregation, self.replay())
    }
}

/// One value of a `Replayed` call, recorded in a worker for the caller to feed in order.
pub(super) struct Replay {
    /// The morsel's input row it came from (0 = the morsel's first row into the Aggregate).
    pub(super) row: u64,
    /// Index of the group in its `MorselAggregate`.
    pub(super) group: usize,
    /// Index of the call in `Aggregation::calls`.
    pub(super) call: usize,
    pub(super) value: Value,
}

/// A worker's aggregation of one morsel, as it goes (see PARTIAL AGGREGATION): typed while
/// it can be (`typed_aggregate`, PARALLEL), else the fields below.
#[derive(Default)]
pub(super) struct MorselAggregator {
    typed: Option<TypedTable>,
    groups: Groups,
    /// The morsel row that created each group.
    first_rows: Vec<u64>,
    replays: Vec<Replay>,
    /// Rows fed so far.
    rows: u64,
}

impl MorselAggregator {
    pub(super) fn new(aggregation: &Aggregation) -> MorselAggregator {
        MorselAggregator {
            typed: TypedTable::new(aggregation, true),
            ..MorselAggregator::default()
        }
    }

    /// Feeds every row of `batch`: the steps of GROUPS, except that a `Replayed` call's
    /// non-null argument values (with DISTINCT, the first of each in the morsel) are recorded
    /// for the caller instead of accumulated.
    pub(super) fn feed(
        &mut self,
        aggregation: &Aggregation,
        batch: &Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let (prefetched, columns) = aggregation.inputs(batch, ctx, self.typed.is_some());
        if let Some(table) = &mut self.typed {
            if table.feed(&columns.keys, &columns.args, batch.len())? {
                return Ok(());
            }
            // Declined: the row path from here on, from the state the table stands for.
            let table = self.typed.take().expect("typed");
            let (groups, first_rows, replays, rows) = table.into_morsel_values(aggregation);
            *self = MorselAggregator {
                typed: None,
                groups,
                first_rows,
                replays,
                rows,
            };
        }
        self.feed_rows(aggregation, batch, &prefetched, &columns, ctx)
    }

    fn feed_rows(
        &mut self,
        aggregation: &Aggregation,
        batch: &Batch,
        prefetched: &Prefetched,
        columns: &Columns,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        for row in 0..batch.len() {
            let mut env = Env::with_prefetched(batch, row, prefetched);
            let known = self.groups.keys.len();
            let group = (self.groups).group_of_row(aggregation, columns, row, &mut env, ctx)?;
            if group == known {
                self.first_rows.push(self.rows);
            }
            let calls = self.groups.states[group].iter_mut().zip(&aggregation.calls);
            for (index, (acc, (_, call))) in calls.enumerate() {
                match (partial_form(call), &call.arg) {
                    (Some(PartialForm::Replayed), Some(_)) => {
                        let value = columns.argument(aggregation, index, row, &mut env, ctx)?;
                        if !value.is_null() && acc.first_occurrence(&value) {
                            self.replays.push(Replay {
                                row: self.rows,
                                group,
                                call: index,
                                value,
                            });
                        }
                    }
                    (form, _) => {
                        // `partial_form` calls every argument-less call Merged, and the
                        // planner pushes down no call without a form.
                        debug_assert_eq!(form, Some(PartialForm::Merged));
                        columns.update(acc, aggregation, index, row, &mut env, ctx)?;
                    }
                }
            }
            self.rows += 1;
        }
        Ok(())
    }

    /// What the caller merges: everything recorded, and the error that ended the morsel early.
    pub(super) fn finish(self, error: Option<QueryError>) -> MorselAggregate {
        MorselAggregate {
            typed: self.typed.map(|mut table| {
                table.bound_sums();
                table
            }),
            groups: Groups {
                // The caller looks groups up in its own table.
                index: HashMap::default(),
                ints: HashMap::default(),
                ..self.groups
            },
            first_rows: self.first_rows,
            replays: self.replays,
            error,
        }
    }
}

/// A morsel's partial aggregate, sent from its worker to the caller: its typed table, or
/// the fields after it.
pub(super) struct MorselAggregate {
    typed: Option<TypedTable>,
    groups: Groups,
    first_rows: Vec<u64>,
    /// In the order recorded: by row, then by call.
    replays: Vec<Replay>,
    error: Option<QueryError>,
}
