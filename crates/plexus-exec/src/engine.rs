//! The query pipeline end to end: text → AST → plan → operators → rows.
//!
//! ```text
//!   parse (plexus-cypher) → bind + plan (bind/, plan/) → build operators (exec/)
//!        → Cursor: pull a chunk of rows, copy the nodes/relationships they mention (result.rs)
//! ```
//!
//! STREAMING
//! =========
//! A [`Cursor`] is a statement that has been planned and built but not run. Each
//! [`Cursor::next_chunk`] pulls the root operator once (one batch, about [`crate::exec::BATCH_ROWS`] rows) in the
//! transaction the caller lends for that call, so a result is produced as it is consumed and
//! memory holds one batch plus whatever pipeline breakers (sort, aggregate, eager writes)
//! keep. Between pulls the cursor keeps its operators and an [`ExecState`] (update counters,
//! profile, the statement time, caches); the caller must lend the same transaction every
//! time, and must not run other statements in it while the cursor is unfinished if it wants
//! the cursor's later chunks to ignore their writes (`plexus::Connection` enforces this).
//!
//! A caller that wants the whole result appends the chunks ([`QueryResult::append`], which
//! holds at most [`crate::exec::MAX_MATERIALIZED_ROWS`] rows).
//!
//! Everything runs inside the caller's transaction; committing is the caller's business
//! (`plexus::Connection` auto-commits or keeps an explicit transaction open). The one
//! exception is `CALL { ... } IN TRANSACTIONS`, which commits batches of its own and only
//! runs when the caller says it lends an auto-commit transaction
//! ([`Cursor::with_implicit_transaction`]).

use crate::context::{Interrupt, JitProfile};
use crate::exec::{Batch, ExecContext, ExecState, Operator, OperatorProfile, build};
use crate::result::QueryResult;
use plexus_cypher::ast::{QueryMode, Statement};
use plexus_ingest::ImportDir;
use plexus_jit::JitMode;
use plexus_plan::Params;
use plexus_plan::logical::{ProcedureRegistry, QueryPlan};
use plexus_plan::optimizer::{self, OptimizerContext};
use plexus_plan::{ParallelConfig, plan_statement};
use plexus_txn::{Statistics, Transaction};
use plexus_value::{ErrorClass, Phase, QueryError, Result};
use std::sync::Arc;

/// A parse error as the query error it is: a compile-time `SyntaxError` with the parser's TCK
/// detail code and position (`plexus_value` does not know the parser, so the conversion is
/// here).
pub fn syntax_error(error: plexus_cypher::ParseError) -> QueryError {
    QueryError {
        class: ErrorClass::SyntaxError,
        code: error.tck_code(),
        phase: Phase::Compile,
        message: error.kind.to_string(),
        span: Some(error.span),
        source: None,
    }
}

/// A planned statement whose rows are pulled a chunk at a time (see STREAMING).
pub struct Cursor {
    plan: QueryPlan,
    root: Box<dyn Operator>,
    params: Params,
    state: ExecState,
    /// EXPLAIN: what to show; the cursor yields no rows.
    explain: Option<Explain>,
    finished: bool,
}

impl Cursor {
    /// Parses and plans `query` and builds its operators; nothing runs yet. With `stats`
    /// (the database's table sizes) the planner chooses where each pattern starts by cost.
    pub fn open(
        query: &str,
        params: &Params,
        procedures: &ProcedureRegistry,
        stats: Option<&Statistics>,
    ) -> Result<Cursor> {
        Cursor::open_with(
            query,
            params,
            procedures,
            stats,
            &ParallelConfig::from_env(),
        )
    }

    /// [`Cursor::open`] with an explicit choice of parallelism: a statement that cannot write
    /// runs its large scans and the expands, filters and projections over them on
    /// `parallel.workers` threads (see `plexus_plan::optimizer::parallel` and `exec::parallel`).
    pub fn open_with(
        query: &str,
        params: &Params,
        procedures: &ProcedureRegistry,
        stats: Option<&Statistics>,
        parallel: &ParallelConfig,
    ) -> Result<Cursor> {
        let statement = plexus_cypher::parse(query).map_err(syntax_error)?;
        Cursor::open_statement(&statement, query, params, procedures, stats, parallel)
    }

    /// [`Cursor::open_with`] for a statement parsed already (`plexus_cypher::parse_command`);
    /// `query` is its text, which error messages and EXPLAIN quote.
    pub fn open_statement(
        statement: &Statement,
        query: &str,
        params: &Params,
        procedures: &ProcedureRegistry,
        stats: Option<&Statistics>,
        parallel: &ParallelConfig,
    ) -> Result<Cursor> {
        let mut plan = plan_statement(statement, query, params, procedures, stats)?;
        let verbose = statement.mode == QueryMode::ExplainVerbose;
        let mut trace = verbose.then(Vec::new);
        optimizer::optimize(
            &mut plan,
            &OptimizerContext { stats, parallel },
            trace.as_mut(),
        );
        let profile = statement.mode == QueryMode::Profile;
        let explain = match (statement.mode, trace) {
            (QueryMode::ExplainVerbose, Some(trace)) => {
                Some(Explain::Trace(optimizer::trace_text(&trace)))
            }
            (QueryMode::Explain, _) => Some(Explain::Plan),
            _ => None,
        };
        let mut state = ExecState::new(crate::exec::build_subplan);
        state.may_write = plan.may_write();
        if profile {
            state.profile = Some(vec![
                OperatorProfile::default();
                count_operators(&plan.root)
            ]);
        }
        Ok(Cursor {
            root: build(&plan.root, profile),
            finished: explain.is_some(),
            explain,
            params: params.clone(),
            state,
            plan,
        })
    }

    /// Lets `LOAD CSV` read files from `dir` (a server's import directory, fixed at
    /// start-up); without one, `LOAD CSV` fails saying so.
    pub fn with_import_dir(mut self, dir: Option<Arc<ImportDir>>) -> Cursor {
        self.state.import_dir = dir;
        self
    }

    /// Bounds how many paths a variable-length expand may enumerate from one start node (the
    /// `var_length_path_limit` setting; default [`crate::DEFAULT_PATH_LIMIT`]).
    pub fn with_path_limit(mut self, limit: usize) -> Cursor {
        self.state.path_limit = limit.max(1);
        self
    }

    /// Whether filters run compiled code (the `jit` setting; default adaptive).
    pub fn with_jit(mut self, mode: JitMode) -> Cursor {
        self.state.jit = mode;
        self
    }

    /// The flag that stops this statement at its next batch when raised (see
    /// [`crate::Interrupt`]); a fresh, lowered one unless given.
    pub fn with_interrupt(mut self, interrupt: Interrupt) -> Cursor {
        self.state.interrupt = interrupt;
        self
    }

    /// Says whether the caller lends an implicit (auto-commit) transaction to
    /// [`Cursor::next_chunk`]. A statement with `CALL { ... } IN TRANSACTIONS` needs one: it
    /// commits batches of its own beside it and replaces the lent transaction by a fresh one
    /// after each (see `exec::call_in_transactions`), so that the caller then commits the
    /// latest. Without one such a statement fails here with Neo4j's `TransactionStartFailed`
    /// (by default the cursor assumes an explicit transaction).
    pub fn with_implicit_transaction(mut self, implicit: bool) -> Result<Cursor> {
        if self.plan.commits_in_batches() && !implicit {
            return Err(crate::exec::implicit_transaction_required());
        }
        self.state.implicit_transaction = implicit;
        Ok(self)
    }

    /// Whether the statement commits transactions of its own (`CALL { ... } IN
    /// TRANSACTIONS`; see [`Cursor::with_implicit_transaction`]).
    pub fn commits_in_batches(&self) -> bool {
        self.plan.commits_in_batches()
    }

    /// The names of the result's columns.
    pub fn columns(&self) -> &[String] {
        &self.plan.columns
    }

    /// Whether running the statement may write (see [`QueryPlan::may_write`]).
    pub fn may_write(&self) -> bool {
        self.plan.may_write()
    }

    /// Whether the statement has an updating clause (CREATE, MERGE, SET, …): it writes
    /// whatever its input, where [`Cursor::may_write`] also counts procedures that might.
    pub fn updates(&self) -> bool {
        self.plan.updating
    }

    /// Whether every row has been pulled.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The next batch of rows, with the nodes and relationships they mention, or `None` once
    /// the statement has run to its end. `tx` must be the transaction of every earlier call.
    pub fn next_chunk(&mut self, tx: &mut Transaction) -> Result<Option<QueryResult>> {
        if self.finished {
            return Ok(None);
        }
        let mut ctx = ExecContext::new(tx, &self.params, self.plan.width, &mut self.state);
        let chunk = match self.root.next(&mut ctx) {
            Ok(Some(batch)) => Ok(Some(result_chunk(&self.plan, &batch, &mut ctx))),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        // A failed statement is over too: its operators may be half way through a row.
        self.finished = !matches!(chunk, Ok(Some(_)));
        chunk
    }

    /// Columns, update counters and (EXPLAIN, or PROFILE once finished) the plan text; no rows.
    pub fn summary(&self) -> QueryResult {
        let jit = self.state.jit;
        let plan = match (&self.explain, &self.state.profile) {
            (Some(Explain::Trace(text)), _) => Some(text.clone()),
            (Some(Explain::Plan), _) => Some(
                self.plan
                    .root
                    .render(&|_, op| crate::exec::jit_note(op, jit)),
            ),
            (None, Some(profile)) if self.finished => {
                Some(self.plan.root.render(&|id, _| match profile.get(id) {
                    Some(p) => format!(
                        "  [rows={}, time={:.3}ms{}]",
                        p.rows,
                        p.time.as_secs_f64() * 1e3,
                        p.jit.as_ref().map(JitProfile::text).unwrap_or_default()
                    ),
                    None => String::new(),
                }))
            }
            _ => None,
        };
        QueryResult {
            columns: self.plan.columns.clone(),
            stats: self.state.stats.clone(),
            plan,
            ..QueryResult::default()
        }
    }
}

/// What an EXPLAIN statement shows.
enum Explain {
    /// The optimized plan, rendered when asked (after the session's settings are applied:
    /// the JIT notes depend on the `jit` mode).
    Plan,
    /// EXPLAIN VERBOSE: the plan after each optimizer pass.
    Trace(String),
}

/// The result rows of `batch`, with the data of the graph elements they mention.
fn result_chunk(plan: &QueryPlan, batch: &Batch, ctx: &mut ExecContext) -> QueryResult {
    let mut chunk = QueryResult {
        columns: plan.columns.clone(),
        ..QueryResult::default()
    };
    chunk.rows = (0..batch.len())
        .map(|row| {
            plan.column_slots
                .iter()
                .map(|slot| batch.get(*slot, row).clone())
                .collect()
        })
        .collect();
    chunk.materialize(ctx);
    chunk
}

fn count_operators(plan: &plexus_plan::logical::LogicalPlan) -> usize {
    1 + plan
        .children()
        .into_iter()
        .map(count_operators)
        .sum::<usize>()
}
