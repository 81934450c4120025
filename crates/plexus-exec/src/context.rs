//! What operators and expressions share while a statement runs: the [`Batch`] they exchange,
//! the [`Operator`] interface, the per-pull [`ExecContext`] (transaction, parameters,
//! argument rows) and the per-statement [`ExecState`] kept between pulls.
//!
//! This module sits below both `exec` (the operators) and `eval` (expressions). An
//! expression that holds a subquery (EXISTS, COUNT, COLLECT, pattern predicates and
//! comprehensions) runs the subquery's plan as operators; `eval` does not build operators
//! itself but asks the statement's `ExecState::build_subplan`, the executor's builder,
//! which the engine hands over when it opens the statement. So `eval` depends on the
//! operator *interface* only, and `exec → eval → context` has no cycle.

use crate::column::Vector;
use plexus_plan::logical::LogicalPlan;
use plexus_txn::Transaction;
use plexus_types::VertexId;
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::temporal::StatementClock;
use plexus_value::value::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Rows per batch.
pub const BATCH_ROWS: usize = 2048;

/// The most rows one pipeline breaker (sort, aggregate, eager write, result) may hold.
pub const MAX_MATERIALIZED_ROWS: usize = 20_000_000;

/// Columns of equal length, one per slot.
///
/// INVARIANT: every column holds `len` values, or none: an *unset* column, null on every row
/// (a slot nothing has bound in this batch yet — what a scan's batch holds in the slots of
/// later variables). Unset columns cost nothing to make or copy; they become real columns
/// when a non-null value is written into them. Readers go through [`get`](Self::get),
/// [`cells`](Self::cells) and [`values`](Self::values), which see nulls there.
///
/// TYPED COLUMNS
/// =============
/// A column may hold a typed [`Vector`] (an Arrow array of one type) in place of its values:
/// what a Project writes for a property read in bulk or an expression computed as a vector
/// (`exec::ops`), so a typed column flows from storage to its consumers without a `Value`
/// per row. Vector readers ([`vector`](Self::vector): vectorised filters, sort keys,
/// aggregates, join probes) take it as is; a row reader asking for a `&Value`
/// ([`get`](Self::get), [`values`](Self::values)) makes the column's values once, kept beside
/// the vector; one asking for an owned value ([`value`](Self::value), [`row`](Self::row),
/// [`push_from`](Self::push_from)) converts just that row — a top-k sort or a selective join
/// copies the few rows it keeps without converting the rest. A writer
/// ([`set_last`](Self::set_last)) turns the column into values first. Either way a row's
/// value is the vector's (`Vector::value`), so which form a column has changes no result.
/// A parallel scan's node column is typed the same way, as the scanned vertex ids
/// ([`nodes`](Self::nodes)): property reads take the ids as they are, and a row reader sees
/// `Value::Node`s.
#[derive(Debug, Clone)]
pub struct Batch {
    columns: Vec<Column>,
    len: usize,
    /// Set by a node scan with a key seek when it found every row of this batch by an exact
    /// equality seek (see `exec::scan`, EXACT SEEKS); read only by the Filter right above
    /// that scan. Every other batch is made with it unset.
    sought_exactly: bool,
}

/// One slot's column (see TYPED COLUMNS).
#[derive(Debug, Clone)]
enum Column {
    /// One value per row, or none: unset.
    Values(Vec<Value>),
    /// `len` typed rows, and their values once a row reader needed them (boxed: a batch
    /// has a column per slot of the statement, most of them `Values`, and is made per
    /// batch — a wide enum would cost every one of them).
    Typed(Box<(Typed, OnceLock<Vec<Value>>)>),
}

/// A typed column's rows.
#[derive(Debug, Clone)]
enum Typed {
    Vector(Vector),
    /// Nodes, by id.
    Nodes(Vec<VertexId>),
}

impl Typed {
    fn len(&self) -> usize {
        match self {
            Typed::Vector(vector) => vector.len(),
            Typed::Nodes(ids) => ids.len(),
        }
    }

    fn value(&self, row: usize) -> Value {
        match self {
            Typed::Vector(vector) => vector.value(row),
            Typed::Nodes(ids) => Value::Node(ids[row]),
        }
    }

    fn values(&self) -> Vec<Value> {
        match self {
            Typed::Vector(vector) => vector.values(),
            Typed::Nodes(ids) => ids.iter().map(|&v| Value::Node(v)).collect(),
        }
    }

    /// Rows `at..`, leaving rows `..at` here.
    fn split_off(&mut self, at: usize) -> Typed {
        match self {
            Typed::Vector(vector) => {
                let rest = vector.slice(at, vector.len() - at);
                *vector = vector.slice(0, at);
                Typed::Vector(rest)
            }
            Typed::Nodes(ids) => Typed::Nodes(ids.split_off(at)),
        }
    }

    /// Rows `rows`, in that order.
    fn take(&self, rows: &[u32]) -> Typed {
        match self {
            Typed::Vector(vector) => Typed::Vector(vector.take(rows)),
            Typed::Nodes(ids) => Typed::Nodes(rows.iter().map(|&row| ids[row as usize]).collect()),
        }
    }
}

impl Column {
    fn is_unset(&self) -> bool {
        matches!(self, Column::Values(values) if values.is_empty())
    }
}

/// A typed column's values, made on the first call (kept out of line: row readers of
/// `Values` columns, the common case, stay small).
#[inline(never)]
fn made<'a>(typed: &Typed, values: &'a OnceLock<Vec<Value>>) -> &'a [Value] {
    values.get_or_init(|| typed.values())
}

/// A typed column turned into values, to be written (out of line, as `made`).
#[cold]
#[inline(never)]
fn untyped(column: &mut Column) {
    if let Column::Typed(typed) = column {
        let (typed, values) = &mut **typed;
        let values = values.take().unwrap_or_else(|| typed.values());
        *column = Column::Values(values);
    }
}

/// What an unset column holds on every row.
static NULL: Value = Value::Null;

impl Batch {
    pub fn new(width: usize) -> Self {
        Batch {
            columns: (0..width).map(|_| Column::Values(Vec::new())).collect(),
            len: 0,
            sought_exactly: false,
        }
    }

    /// An empty batch whose columns have room for `rows` rows.
    pub fn with_capacity(width: usize, rows: usize) -> Self {
        Batch {
            columns: (0..width)
                .map(|_| Column::Values(Vec::with_capacity(rows)))
                .collect(),
            len: 0,
            sought_exactly: false,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn width(&self) -> usize {
        self.columns.len()
    }

    #[inline]
    pub fn get(&self, slot: usize, row: usize) -> &Value {
        debug_assert!(row < self.len);
        match &self.columns[slot] {
            Column::Values(values) => values.get(row).unwrap_or(&NULL),
            Column::Typed(column) => &made(&column.0, &column.1)[row],
        }
    }

    /// Row `row` of `slot`, owned: a typed column converts only this row (see TYPED COLUMNS).
    pub fn value(&self, slot: usize, row: usize) -> Value {
        debug_assert!(row < self.len);
        match &self.columns[slot] {
            Column::Values(values) => match values.get(row) {
                Some(value) => value.clone(),
                None => Value::Null,
            },
            Column::Typed(column) => match column.1.get() {
                Some(values) => values[row].clone(),
                None => column.0.value(row),
            },
        }
    }

    /// The values of `slot`, one per row (nulls for an unset column).
    pub fn cells(&self, slot: usize) -> impl ExactSizeIterator<Item = &Value> + Clone + '_ {
        (0..self.len).map(move |row| self.get(slot, row))
    }

    /// The values of `slot` as a slice, `None` for an unset column (null on every row) or a
    /// slot past the batch's width.
    pub fn values(&self, slot: usize) -> Option<&[Value]> {
        if self.len == 0 {
            return None;
        }
        match self.columns.get(slot)? {
            Column::Values(values) => (values.len() == self.len).then_some(values.as_slice()),
            Column::Typed(column) => Some(made(&column.0, &column.1)),
        }
    }

    /// The typed vector column `slot` holds, if it holds one (see TYPED COLUMNS).
    pub(crate) fn vector(&self, slot: usize) -> Option<&Vector> {
        match self.columns.get(slot)? {
            Column::Typed(column) => match &column.0 {
                Typed::Vector(vector) => Some(vector),
                Typed::Nodes(_) => None,
            },
            Column::Values(_) => None,
        }
    }

    /// The node ids column `slot` holds, if it holds them typed (see TYPED COLUMNS).
    pub(crate) fn nodes(&self, slot: usize) -> Option<&[VertexId]> {
        match self.columns.get(slot)? {
            Column::Typed(column) => match &column.0 {
                Typed::Nodes(ids) => Some(ids),
                Typed::Vector(_) => None,
            },
            Column::Values(_) => None,
        }
    }

    /// Replaces column `slot` with `column`, one value per row.
    pub fn set_column(&mut self, slot: usize, column: Vec<Value>) {
        assert_eq!(column.len(), self.len, "a column has one value per row");
        self.columns[slot] = Column::Values(column);
    }

    /// Replaces column `slot` with `vector`, one value per row (see TYPED COLUMNS).
    pub(crate) fn set_vector(&mut self, slot: usize, vector: Vector) {
        self.set_typed(slot, Typed::Vector(vector));
    }

    /// Replaces column `slot` with the nodes `ids`, one per row (see TYPED COLUMNS).
    pub(crate) fn set_nodes(&mut self, slot: usize, ids: Vec<VertexId>) {
        self.set_typed(slot, Typed::Nodes(ids));
    }

    fn set_typed(&mut self, slot: usize, typed: Typed) {
        assert_eq!(typed.len(), self.len, "a column has one value per row");
        self.columns[slot] = Column::Typed(Box::new((typed, OnceLock::new())));
    }

    /// Column `slot` made real (one value per row), to be written.
    fn materialized(&mut self, slot: usize) -> &mut Vec<Value> {
        let len = self.len;
        let column = &mut self.columns[slot];
        if matches!(column, Column::Typed(_)) {
            untyped(column);
        }
        let Column::Values(values) = column else {
            unreachable!("made values above")
        };
        if values.len() < len {
            debug_assert!(values.is_empty(), "a column is full or unset");
            values.resize(len, Value::Null);
        }
        values
    }

    /// Appends `value` to column `slot` of a row being added (the batch's `len` not yet
    /// raised); an unset column stays unset while the value is null.
    fn push_cell(&mut self, slot: usize, value: Value) {
        if value.is_null() && self.columns[slot].is_unset() {
            return;
        }
        self.materialized(slot).push(value);
    }

    /// Copies row `row` of `other` (of the same width) to the end.
    pub fn push_from(&mut self, other: &Batch, row: usize) {
        debug_assert_eq!(self.width(), other.width());
        debug_assert!(row < other.len);
        let len = self.len;
        for (slot, from) in other.columns.iter().enumerate() {
            // The common case first, in line: value columns, this one full (an expand copies
            // every input row it extends this way).
            if let (Column::Values(to), Column::Values(from)) = (&mut self.columns[slot], from)
                && to.len() == len
            {
                match from.get(row) {
                    Some(value) => to.push(value.clone()),
                    None if len > 0 => to.push(Value::Null),
                    None => {}
                }
                continue;
            }
            if other.columns[slot].is_unset() && self.columns[slot].is_unset() {
                continue;
            }
            self.push_cell(slot, other.value(slot, row));
        }
        self.len += 1;
    }

    /// Copies rows `rows` of `other` (of the same width) to the end. Into an empty batch
    /// the copy goes column by column, a typed column staying a vector (see TYPED COLUMNS).
    pub fn push_rows(&mut self, other: &Batch, rows: &[u32]) {
        debug_assert_eq!(self.width(), other.width());
        if self.len > 0 {
            rows.iter()
                .for_each(|&row| self.push_from(other, row as usize));
            return;
        }
        let columns = (other.columns.iter())
            .map(|column| match column {
                Column::Values(values) if values.is_empty() => Column::Values(Vec::new()),
                Column::Values(values) => Column::Values(
                    rows.iter()
                        .map(|&row| values[row as usize].clone())
                        .collect(),
                ),
                Column::Typed(column) => {
                    Column::Typed(Box::new((column.0.take(rows), OnceLock::new())))
                }
            })
            .collect();
        *self = Batch {
            columns,
            len: rows.len(),
            sought_exactly: false,
        };
    }

    pub fn push_row(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.width());
        for (slot, value) in row.into_iter().enumerate() {
            self.push_cell(slot, value);
        }
        self.len += 1;
    }

    /// Keeps the first `at` rows and returns the rest, if there are more.
    pub fn split_off(&mut self, at: usize) -> Option<Batch> {
        if self.len <= at {
            return None;
        }
        let rest_len = self.len - at;
        let rest = Batch {
            columns: (self.columns.iter_mut())
                .map(|c| match c {
                    Column::Values(values) if values.is_empty() => Column::Values(Vec::new()),
                    Column::Values(values) => Column::Values(values.split_off(at)),
                    Column::Typed(column) => {
                        let (typed, values) = &mut **column;
                        let rest = typed.split_off(at);
                        let rest_values = OnceLock::new();
                        if let Some(mut kept) = values.take() {
                            let _ = rest_values.set(kept.split_off(at));
                            let _ = values.set(kept);
                        }
                        Column::Typed(Box::new((rest, rest_values)))
                    }
                })
                .collect(),
            len: rest_len,
            // The same scan found the rest.
            sought_exactly: self.sought_exactly,
        };
        self.len = at;
        Some(rest)
    }

    /// Whether a node scan found every row by an exact equality seek (see the field).
    pub fn sought_exactly(&self) -> bool {
        self.sought_exactly
    }

    /// Records whether the rows a node scan just added were found by an exact equality seek:
    /// the batch stays marked only while all of its rows were.
    pub(crate) fn mark_sought(&mut self, exactly: bool, first: bool) {
        self.sought_exactly = exactly && (first || self.sought_exactly);
    }

    /// Overwrites a slot of the last row.
    pub fn set_last(&mut self, slot: usize, value: Value) {
        debug_assert!(self.len > 0);
        if value.is_null() && self.columns[slot].is_unset() {
            return;
        }
        if let Some(cell) = self.materialized(slot).last_mut() {
            *cell = value;
        }
    }

    pub fn row(&self, row: usize) -> Vec<Value> {
        (0..self.columns.len())
            .map(|slot| self.value(slot, row))
            .collect()
    }

    /// A batch of `len` rows from `columns`, one per slot, each with `len` values or none (an
    /// unset column: null on every row).
    pub fn from_columns(len: usize, columns: Vec<Vec<Value>>) -> Batch {
        assert!(
            columns.iter().all(|c| c.len() == len || c.is_empty()),
            "every column of a batch has one value per row, or none"
        );
        let columns = columns.into_iter().map(Column::Values).collect();
        Batch {
            columns,
            len,
            sought_exactly: false,
        }
    }

    /// A batch holding one row.
    pub fn single(row: Vec<Value>) -> Batch {
        let mut batch = Batch::new(row.len());
        batch.push_row(row);
        batch
    }
}

/// Counts of what a query changed: data (the first seven) and schema (indexes and
/// constraints, counted by the schema commands).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateStats {
    pub nodes_created: u64,
    pub nodes_deleted: u64,
    pub relationships_created: u64,
    pub relationships_deleted: u64,
    pub properties_set: u64,
    pub labels_added: u64,
    pub labels_removed: u64,
    pub indexes_added: u64,
    pub indexes_removed: u64,
    pub constraints_added: u64,
    pub constraints_removed: u64,
}

impl UpdateStats {
    /// Data changes (nodes, relationships, properties, labels).
    pub fn data_updates(&self) -> u64 {
        self.nodes_created
            + self.nodes_deleted
            + self.relationships_created
            + self.relationships_deleted
            + self.properties_set
            + self.labels_added
            + self.labels_removed
    }

    /// Schema changes (indexes and constraints).
    pub fn schema_updates(&self) -> u64 {
        self.indexes_added
            + self.indexes_removed
            + self.constraints_added
            + self.constraints_removed
    }
}

/// Rows out of and time spent in one operator (PROFILE).
#[derive(Debug, Clone, Default)]
pub struct OperatorProfile {
    pub rows: u64,
    pub time: Duration,
    /// A Filter's compiled-code record (see `exec::jit`).
    pub jit: Option<JitProfile>,
}

/// How a Filter's batches ran (PROFILE's `jit=` part).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JitProfile {
    pub compiled_batches: u64,
    pub interpreted_batches: u64,
    /// The compile time of the code it ran (the cache's original compile).
    pub compile_time: Option<Duration>,
    /// Why the predicate is never compiled, if it is not.
    pub unsupported: Option<String>,
    /// The filters compiled together with this one (`exec::filter`, FUSED CHAINS): 1 for a
    /// Filter alone (0: not a Filter's record).
    pub fused_filters: usize,
    /// The Aggregate above the filters ran in the same compiled loop (`exec::filter`,
    /// COMPILED PIPELINES).
    pub aggregate: bool,
}

impl JitProfile {
    /// `a` and `b` of one operator (two batches, two parallel workers) together.
    pub fn merge(a: Option<JitProfile>, b: Option<JitProfile>) -> Option<JitProfile> {
        match (a, b) {
            (Some(a), Some(b)) => Some(JitProfile {
                compiled_batches: a.compiled_batches + b.compiled_batches,
                interpreted_batches: a.interpreted_batches + b.interpreted_batches,
                compile_time: a.compile_time.max(b.compile_time),
                unsupported: a.unsupported.or(b.unsupported),
                fused_filters: a.fused_filters.max(b.fused_filters),
                aggregate: a.aggregate || b.aggregate,
            }),
            (a, b) => a.or(b),
        }
    }

    /// PROFILE's text: ` jit=compiled compile=0.412ms`, ` jit=mixed(3/1)`, ` jit=no (XOR)`;
    /// ` jit=compiled fused=3 compile=0.5ms` for a filter of a chain whose batches ran as one
    /// loop of 3 filters; ` +aggregate` when the Aggregate above ran in that loop too.
    pub fn text(&self) -> String {
        if let Some(why) = &self.unsupported {
            return format!(" jit=no ({why})");
        }
        let mut mode = match (self.compiled_batches, self.interpreted_batches) {
            (0, _) => "interpreted".to_string(),
            (_, 0) => "compiled".to_string(),
            (c, i) => format!("mixed({c} compiled/{i} interpreted)"),
        };
        if self.compiled_batches > 0 && self.fused_filters > 1 {
            mode += &format!(" fused={}", self.fused_filters);
        }
        if self.compiled_batches > 0 && self.aggregate {
            mode += " +aggregate";
        }
        match self.compile_time {
            Some(t) => format!(" jit={mode} compile={:.3}ms", t.as_secs_f64() * 1e3),
            None => format!(" jit={mode}"),
        }
    }
}

/// What a statement keeps from one pull of its result to the next: everything operators
/// share except the transaction and the parameters, which the caller lends for each pull
/// (see `engine::Cursor`).
pub struct ExecState {
    /// Built operator trees of subquery expressions, by subquery id.
    pub(crate) subplans: HashMap<usize, Box<dyn Operator>>,
    /// Builds a subquery's operators the first time it runs (see the module doc).
    pub(crate) build_subplan: BuildSubplan,
    /// Compiled regular expressions, by pattern.
    pub(crate) regexes: HashMap<Arc<str>, regex::Regex>,
    pub stats: UpdateStats,
    /// Types of the relationships this statement deleted (`type(r)` still works on them).
    pub(crate) deleted_edge_types: HashMap<plexus_types::EdgeId, String>,
    /// Per-operator profile, indexed by pre-order operator number (PROFILE only).
    pub profile: Option<Vec<OperatorProfile>>,
    /// The statement's start time (what `datetime()`, `timestamp()` and friends return).
    pub clock: StatementClock,
    /// Whether the statement may write (`QueryPlan::may_write`; true unless told otherwise).
    /// An inner plan run for many argument rows may keep what it read from the transaction
    /// in one run for the next only when the statement cannot write (see `join`).
    pub may_write: bool,
    /// Where `LOAD CSV` may read files from; `None`: it fails, naming the setting.
    pub import_dir: Option<Arc<plexus_ingest::ImportDir>>,
    /// Whether the caller lent an implicit (auto-commit) transaction, which
    /// `CALL { ... } IN TRANSACTIONS` may commit beside and replace (see
    /// `call_in_transactions`); false unless told.
    pub implicit_transaction: bool,
    /// The most paths a variable-length expand may enumerate from one start node (the
    /// `var_length_path_limit` setting).
    pub path_limit: usize,
    /// Whether filters run compiled code (the `jit` setting; see `exec::jit`).
    pub jit: plexus_jit::JitMode,
    /// Set by another thread to stop the statement (see [`Interrupt`]).
    pub interrupt: Interrupt,
}

/// A flag another thread raises to stop a running statement — its client went away, its
/// time limit passed. Every pipeline's driver looks at it before each batch it moves (one
/// relaxed load), so a statement stops within one batch of work even inside a blocking
/// operator: a sort or an aggregation consumes its input through a pipeline too. The
/// statement then fails with [`INTERRUPTED`]; its caller rolls its transaction back.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<AtomicBool>);

/// The detail code of a statement stopped by its [`Interrupt`].
pub const INTERRUPTED: &str = "Interrupted";

impl Interrupt {
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Asks the statement to stop at its next batch.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Lowers the flag (before the next statement of a connection).
    pub fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(INTERRUPTED)` once raised.
    pub fn check(&self) -> Result<()> {
        if self.is_raised() {
            return Err(QueryError::runtime(
                ErrorClass::DatabaseError,
                INTERRUPTED,
                "the statement was interrupted: its client went away or its time limit passed",
            ));
        }
        Ok(())
    }
}

/// The most paths one variable-length expand may enumerate from one start node, unless the
/// `var_length_path_limit` setting says otherwise ([`ExecState::path_limit`]).
pub const DEFAULT_PATH_LIMIT: usize = 5_000_000;

impl ExecState {
    pub(crate) fn new(build_subplan: BuildSubplan) -> Self {
        ExecState {
            subplans: HashMap::new(),
            build_subplan,
            regexes: HashMap::new(),
            stats: UpdateStats::default(),
            deleted_edge_types: HashMap::new(),
            profile: None,
            clock: StatementClock::now(),
            may_write: true,
            import_dir: None,
            implicit_transaction: false,
            path_limit: DEFAULT_PATH_LIMIT,
            jit: plexus_jit::JitMode::default(),
            interrupt: Interrupt::default(),
        }
    }
}

/// What operators share while a query runs.
pub struct ExecContext<'t> {
    pub tx: &'t mut Transaction,
    pub params: &'t plexus_plan::Params,
    /// Width of every row.
    pub width: usize,
    /// Argument rows of the inner plans being run (see module docs); empty between pulls.
    pub arguments: Vec<Arguments>,
    pub state: &'t mut ExecState,
}

impl<'t> ExecContext<'t> {
    pub fn new(
        tx: &'t mut Transaction,
        params: &'t plexus_plan::Params,
        width: usize,
        state: &'t mut ExecState,
    ) -> Self {
        ExecContext {
            tx,
            params,
            width,
            arguments: Vec::new(),
            state,
        }
    }

    /// Runs `f` with `row` as the current argument.
    pub(crate) fn with_argument<T>(
        &mut self,
        row: Arc<Vec<Value>>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        self.with_arguments(Arguments::Row(row), f)
    }

    /// Runs `f` with `arguments` as the current argument rows.
    pub(crate) fn with_arguments<T>(
        &mut self,
        arguments: Arguments,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        self.arguments.push(arguments);
        let result = f(self);
        self.arguments.pop();
        result
    }
}

/// What an inner plan's `Argument` operator yields: one row (an inner plan run per row), or
/// a batch of rows (a subquery body run set at a time, see
/// `plexus_plan::logical::set_at_a_time`).
#[derive(Debug, Clone)]
pub enum Arguments {
    Row(Arc<Vec<Value>>),
    Rows(Arc<Batch>),
}

/// A physical operator (see module docs).
pub trait Operator: Send {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>>;
    /// Rewinds this operator and its inputs to run again.
    fn reset(&mut self);
    /// Takes `sink` — an Aggregate's state, opaque here (`exec::aggregate::AggregateSink`:
    /// this module sits below the executor) — to be fed by this operator's top stage in
    /// place of output rows, or gives it back. Only a pipeline takes it, when compiled code
    /// can feed it (`exec::compiled_pipeline`); `aggregate_id` is the Aggregate's PROFILE
    /// number.
    fn absorb(
        &mut self,
        sink: Sink,
        _aggregate_id: Option<usize>,
        _ctx: &ExecContext,
    ) -> std::result::Result<(), Sink> {
        Err(sink)
    }
    /// The sink [`Operator::absorb`] took, with every row fed to it.
    fn reclaim(&mut self) -> Option<Sink> {
        None
    }
}

/// An Aggregate's state handed to a pipeline ([`Operator::absorb`]).
pub type Sink = Box<dyn std::any::Any + Send>;

/// Builds the operator tree of a subquery expression's plan (the executor's builder,
/// without profiling; see the module doc).
pub type BuildSubplan = fn(&LogicalPlan) -> Box<dyn Operator>;

/// Pulls every batch of `op`.
pub fn drain(op: &mut dyn Operator, ctx: &mut ExecContext) -> Result<Vec<Batch>> {
    let mut batches = Vec::new();
    let mut rows = 0;
    while let Some(batch) = op.next(ctx)? {
        rows += batch.len();
        check_materialized(rows)?;
        batches.push(batch);
    }
    Ok(batches)
}

pub(crate) fn check_materialized(rows: usize) -> Result<()> {
    if rows > MAX_MATERIALIZED_ROWS {
        return Err(QueryError::runtime(
            ErrorClass::DatabaseError,
            "LimitExceeded",
            format!("more than {MAX_MATERIALIZED_ROWS} rows would be held in memory"),
        ));
    }
    Ok(())
}

/// Runs `f` with a context over an empty in-memory database, with `params` and rows one slot
/// wide (operator and kernel tests, whose expressions hold no subquery).
#[cfg(test)]
pub(crate) fn with_test_ctx<T>(
    params: &plexus_plan::Params,
    f: impl FnOnce(&mut ExecContext) -> T,
) -> T {
    use plexus_storage::{FaultVfs, Storage};
    use plexus_types::{Config, IsolationLevel};
    let config = Config::default();
    let (storage, _) = Storage::open(Arc::new(FaultVfs::new()), &config).expect("open");
    let manager = plexus_txn::TxnManager::new(Arc::new(storage), config);
    let mut tx = plexus_txn::begin(&manager, IsolationLevel::Snapshot);
    let no_subqueries: BuildSubplan = |_| unreachable!("test expressions hold no subquery");
    let mut state = ExecState::new(no_subqueries);
    let mut ctx = ExecContext::new(&mut tx, params, 1, &mut state);
    f(&mut ctx)
}

#[cfg(test)]
mod batch_tests {
    use super::{BATCH_ROWS, Batch, Vector, VertexId};
    use arrow::array::Int64Array;
    use plexus_value::value::Value;

    fn int(i: usize) -> Value {
        Value::Int(i as i64)
    }

    /// Integers and nulls, comparable (`Value` has Cypher's equality, not `PartialEq`).
    fn ints<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<Option<i64>> {
        (values.into_iter())
            .map(|v| match v {
                Value::Int(i) => Some(*i),
                Value::Null => None,
                other => panic!("not an integer: {other:?}"),
            })
            .collect()
    }

    /// A batch of `rows` rows: slot 0 set, slots 1 and 2 unset (null on every row).
    fn scanned(rows: usize) -> Batch {
        Batch::from_columns(
            rows,
            vec![(0..rows).map(int).collect(), Vec::new(), Vec::new()],
        )
    }

    #[test]
    fn unset_columns_read_as_nulls_everywhere() {
        let b = scanned(3);
        assert_eq!(b.len(), 3);
        assert!(b.get(1, 2).is_null());
        assert_eq!(ints(&b.row(1)), [Some(1), None, None]);
        assert_eq!(b.cells(2).len(), 3);
        assert!(b.cells(2).all(Value::is_null));
        assert_eq!(b.values(0).map(ints), Some(vec![Some(0), Some(1), Some(2)]));
        assert!(b.values(1).is_none());
        assert!(b.values(9).is_none());
    }

    #[test]
    fn unset_columns_become_real_when_a_value_is_written() {
        let mut b = scanned(3);
        b.set_last(1, Value::Null);
        assert!(b.values(1).is_none(), "a null keeps the column unset");
        b.set_last(1, int(7));
        assert_eq!(ints(b.cells(1)), [None, None, Some(7)]);
        b.push_row(vec![int(3), Value::Null, int(8)]);
        assert_eq!(b.len(), 4);
        assert_eq!(ints(&b.row(3)), [Some(3), None, Some(8)]);
        assert_eq!(ints(b.cells(2)), [None, None, None, Some(8)]);
        b.set_column(2, vec![int(1); 4]);
        assert_eq!(ints([b.get(2, 0)]), [Some(1)]);
    }

    #[test]
    fn copies_and_splits_keep_unset_columns_unset() {
        let source = scanned(BATCH_ROWS + 5);
        let mut kept = Batch::new(3);
        for row in (0..source.len()).filter(|r| r % 2 == 0) {
            kept.push_from(&source, row);
        }
        assert_eq!(kept.len(), (BATCH_ROWS + 6) / 2);
        assert!(kept.values(1).is_none() && kept.values(2).is_none());
        assert_eq!(ints([kept.get(0, 10)]), [Some(20)]);
        // Into a batch whose column is set, an unset one's rows copy as nulls.
        let mut mixed = Batch::single(vec![int(1), int(2), int(3)]);
        mixed.push_from(&source, 4);
        assert_eq!(ints(&mixed.row(1)), [Some(4), None, None]);
        // Into a batch whose column is unset, a set one's value fills the rows before with nulls.
        kept.push_from(&mixed, 0);
        assert_eq!(ints(kept.cells(1).skip(kept.len() - 2)), [None, Some(2)]);
        assert_eq!(kept.values(1).map(<[Value]>::len), Some(kept.len()));
        let mut whole = scanned(10);
        let rest = whole.split_off(6).unwrap();
        assert_eq!((whole.len(), rest.len()), (6, 4));
        assert_eq!(ints(&rest.row(0)), [Some(6), None, None]);
        assert!(rest.values(1).is_none() && whole.values(2).is_none());
    }

    /// `scanned(rows)` with slot 1 a typed vector: `i * 10`, null on every third row.
    fn typed(rows: usize) -> Batch {
        let mut b = scanned(rows);
        let vector = (0..rows).map(|i| (i % 3 != 0).then_some(i as i64 * 10));
        b.set_vector(1, Vector::Int(Int64Array::from_iter(vector)));
        b
    }

    /// What `typed(rows)` holds in slot 1.
    fn expected(rows: std::ops::Range<usize>) -> Vec<Option<i64>> {
        rows.map(|i| (i % 3 != 0).then_some(i as i64 * 10))
            .collect()
    }

    #[test]
    fn typed_columns_read_as_their_values_every_way() {
        let rows = BATCH_ROWS + 7;
        let b = typed(rows);
        assert!(b.vector(1).is_some() && b.vector(0).is_none());
        // Owned reads convert one row, leaving the vector alone.
        assert_eq!(ints(&b.row(4)), [Some(4), Some(40), None]);
        assert_eq!(ints([&b.value(1, 3)]), [None]);
        // Borrowed reads make the values once; both forms agree.
        assert_eq!(ints(b.values(1).unwrap()), expected(0..rows));
        assert_eq!(ints(b.cells(1)), expected(0..rows));
        assert_eq!(ints([&b.value(1, 5)]), [Some(50)]);
        assert!(b.vector(1).is_some(), "the vector stays for vector readers");
    }

    #[test]
    fn typed_columns_split_copy_and_turn_into_values_when_written() {
        for made in [false, true] {
            let mut whole = typed(10);
            if made {
                assert!(whole.values(1).is_some(), "values made before the split");
            }
            let rest = whole.split_off(6).unwrap();
            assert_eq!(ints(whole.cells(1)), expected(0..6));
            assert_eq!(ints(rest.cells(1)), expected(6..10));
            assert_eq!(rest.vector(1).map(Vector::len), Some(4));
            let mut copied = Batch::new(3);
            (0..rest.len()).for_each(|row| copied.push_from(&rest, row));
            assert_eq!(ints(copied.cells(1)), expected(6..10));
            let mut written = rest.clone();
            written.set_last(1, int(99));
            assert!(written.vector(1).is_none(), "a written column holds values");
            assert_eq!(ints(written.cells(1)), [None, Some(70), Some(80), Some(99)]);
            assert_eq!(
                ints(rest.cells(1)),
                expected(6..10),
                "the clone is untouched"
            );
        }
    }

    #[test]
    fn selected_rows_copy_column_by_column_into_an_empty_batch() {
        let source = typed(BATCH_ROWS + 3);
        let rows = [1, 2, 3, 600, BATCH_ROWS as u32 + 2];
        let mut picked = Batch::new(3);
        picked.push_rows(&source, &rows);
        assert_eq!(picked.len(), rows.len());
        assert!(picked.vector(1).is_some(), "a typed column stays a vector");
        assert!(picked.values(2).is_none(), "an unset column stays unset");
        // Into a batch holding rows, row by row: the same rows after the ones there.
        let mut appended = Batch::single(vec![int(9), int(9), int(9)]);
        appended.push_rows(&source, &rows);
        for (i, &row) in rows.iter().enumerate() {
            let row = row as usize;
            assert_eq!(ints(&picked.row(i)), ints(&source.row(row)));
            assert_eq!(ints(&appended.row(i + 1)), ints(&source.row(row)));
        }
        picked.push_rows(&source, &[]);
        assert_eq!(picked.len(), rows.len());
    }

    #[test]
    fn node_columns_read_as_nodes_and_split_and_copy_as_ids() {
        let ids: Vec<VertexId> = (0..10).map(|i| VertexId::new(i % 2, i)).collect();
        let node = |i: usize| Value::Node(ids[i]);
        let mut b = scanned(10);
        b.set_nodes(2, ids.clone());
        assert_eq!(b.nodes(2), Some(&ids[..]));
        assert!(b.vector(2).is_none() && b.nodes(0).is_none());
        assert!(matches!(b.value(2, 3), Value::Node(v) if v == ids[3]));
        assert!(matches!(b.get(2, 4), Value::Node(v) if *v == ids[4]));
        let rest = b.split_off(6).unwrap();
        assert_eq!(rest.nodes(2), Some(&ids[6..]));
        assert_eq!(b.nodes(2), Some(&ids[..6]));
        let mut picked = Batch::new(3);
        picked.push_rows(&rest, &[3, 1]);
        assert_eq!(picked.nodes(2), Some(&[ids[9], ids[7]][..]));
        b.set_last(2, node(0));
        assert!(b.nodes(2).is_none(), "a written column holds values");
        assert!(matches!(b.get(2, 5), Value::Node(v) if *v == ids[0]));
        assert!(matches!(b.get(2, 4), Value::Node(v) if *v == ids[4]));
    }

    #[test]
    fn a_column_is_as_small_as_a_vec_of_values() {
        assert_eq!(size_of::<super::Column>(), size_of::<Vec<Value>>());
    }

    #[test]
    #[should_panic(expected = "one value per row")]
    fn a_vector_of_another_length_is_refused() {
        scanned(3).set_vector(0, Vector::Int(Int64Array::from(vec![1, 2])));
    }

    #[test]
    #[should_panic(expected = "one value per row")]
    fn a_column_of_another_length_is_refused() {
        Batch::from_columns(3, vec![vec![Value::Null; 2]]);
    }
}
