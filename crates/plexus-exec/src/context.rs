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

use plexus_plan::logical::LogicalPlan;
use plexus_txn::Transaction;
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::temporal::StatementClock;
use plexus_value::value::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Rows per batch.
pub const BATCH_ROWS: usize = 2048;

/// The most rows one pipeline breaker (sort, aggregate, eager write, result) may hold.
pub const MAX_MATERIALIZED_ROWS: usize = 20_000_000;

/// Columns of equal length, one per slot.
#[derive(Debug, Clone)]
pub struct Batch {
    pub columns: Vec<Vec<Value>>,
    len: usize,
}

impl Batch {
    pub fn new(width: usize) -> Self {
        Batch {
            columns: (0..width).map(|_| Vec::new()).collect(),
            len: 0,
        }
    }

    /// An empty batch whose columns have room for `rows` rows.
    pub fn with_capacity(width: usize, rows: usize) -> Self {
        Batch {
            columns: (0..width).map(|_| Vec::with_capacity(rows)).collect(),
            len: 0,
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

    pub fn get(&self, slot: usize, row: usize) -> &Value {
        &self.columns[slot][row]
    }

    /// Copies row `row` of `other` (of the same width) to the end.
    pub fn push_from(&mut self, other: &Batch, row: usize) {
        debug_assert_eq!(self.width(), other.width());
        for (column, source) in self.columns.iter_mut().zip(&other.columns) {
            column.push(source[row].clone());
        }
        self.len += 1;
    }

    pub fn push_row(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.width());
        for (column, value) in self.columns.iter_mut().zip(row) {
            column.push(value);
        }
        self.len += 1;
    }

    /// Keeps the first `at` rows and returns the rest, if there are more.
    pub fn split_off(&mut self, at: usize) -> Option<Batch> {
        if self.len <= at {
            return None;
        }
        let rest = Batch {
            columns: self.columns.iter_mut().map(|c| c.split_off(at)).collect(),
            len: self.len - at,
        };
        self.len = at;
        Some(rest)
    }

    /// Overwrites a slot of the last row.
    pub fn set_last(&mut self, slot: usize, value: Value) {
        debug_assert!(self.len > 0);
        if let Some(cell) = self.columns[slot].last_mut() {
            *cell = value;
        }
    }

    pub fn row(&self, row: usize) -> Vec<Value> {
        self.columns.iter().map(|c| c[row].clone()).collect()
    }

    /// A batch of `columns`, one per slot, all of the same length.
    pub fn from_columns(columns: Vec<Vec<Value>>) -> Batch {
        let len = columns.first().map_or(0, Vec::len);
        assert!(
            columns.iter().all(|column| column.len() == len),
            "every column of a batch has one value per row"
        );
        Batch { columns, len }
    }

    /// A batch holding one row.
    pub fn single(row: Vec<Value>) -> Batch {
        let len = 1;
        Batch {
            columns: row.into_iter().map(|v| vec![v]).collect(),
            len,
        }
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
            }),
            (a, b) => a.or(b),
        }
    }

    /// PROFILE's text: ` jit=compiled compile=0.412ms`, ` jit=mixed(3/1)`, ` jit=no (XOR)`.
    pub fn text(&self) -> String {
        if let Some(why) = &self.unsupported {
            return format!(" jit=no ({why})");
        }
        let mode = match (self.compiled_batches, self.interpreted_batches) {
            (0, _) => "interpreted".to_string(),
            (_, 0) => "compiled".to_string(),
            (c, i) => format!("mixed({c} compiled/{i} interpreted)"),
        };
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
}

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
