//! `CALL { ... } IN TRANSACTIONS`: a subquery run over batches of input rows, each batch in a
//! transaction of its own, committed before the next batch starts.
//!
//! WHAT AND WHY
//! ============
//! A statement normally runs in one transaction: `LOAD CSV` of ten million lines with a
//! `CREATE` per line would hold ten million writes in one write set until the end, and lose
//! them all on the last line's error. `CALL { ... } IN TRANSACTIONS OF n ROWS` cuts that work
//! into inner transactions of `n` input rows each:
//!
//! ```text
//!   outer transaction T0 (the statement's, lent by the caller; reads only)
//!     input rows  r1 … rn │ rn+1 … r2n │ r2n+1 …        (pulled as they stream: LOAD CSV,
//!                         │            │                 MATCH, UNWIND …)
//!     inner       T1: inner(r1) … inner(rn), commit
//!                              T2: inner(rn+1) … inner(r2n), commit
//!                                           T3: …
//! ```
//!
//! The operator pulls input batches until it holds `n` rows (or the input ends), begins a
//! fresh transaction ([`Transaction::begin_sibling`]: same database and isolation level, at
//! the visible timestamp, so it sees every earlier batch's commit), runs the inner plan once
//! per row in it exactly as `Apply` does, commits, and only then hands the batch's output
//! rows up and pulls more input. So at most `n` input rows and their output are held at a
//! time, and the write set of one transaction never holds more than one batch's writes.
//!
//! THE OUTER TRANSACTION
//! =====================
//! The lent transaction reads the outer part (the file's records need none; a `MATCH` before
//! the subquery does). After each batch commits, the operator replaces it by a fresh one
//! (`begin_sibling` again), dropping the old: like Neo4j's outer transaction, the rows handed
//! up after a batch — and the clauses after the subquery, and the result's nodes — see the
//! batches committed so far (`RETURN n.num` on a node the subquery created works), and the
//! statement no longer pins the versions of its start for its whole run. Rows the outer part
//! produced already are not re-read: a label scan reads its ids once, so
//! `MATCH (n:X) CALL { CREATE (:X) } IN TRANSACTIONS` ends.
//!
//! The swap is safe because the outer transaction has no writes while batches run: the
//! parser refuses the subquery after a write clause, and writes after it are eager (they
//! start after the last batch). It is asserted.
//!
//! REMEMBERED SEEKS
//! ================
//! A batch's transaction remembers its equality index seeks while it has changed no vertex
//! (`Transaction::seek_by_index`, REPEATED SEEKS), and the vertices it found existing. When it
//! commits, the operator keeps both and offers them to the next batch's transaction, which
//! takes them over only if no commit since the first one's snapshot changed a vertex
//! (`Transaction::adopt_carried_reads`): every answer then still holds. A load of
//! relationships (`MATCH (a:V {id: …}), (b:V {id: …}) CREATE (a)-[:E]->(b)`) changes no
//! vertex, so a hub is looked up and checked once per statement, not once per batch; a batch
//! that creates or changes a vertex, or a concurrent commit that does, starts the next batch
//! afresh.
//!
//! ONLY IN AN IMPLICIT TRANSACTION
//! ===============================
//! Committing beside an explicit transaction would break its atomicity (a `ROLLBACK` could
//! not undo the batches), so the caller must say that it lends an auto-commit transaction
//! ([`crate::engine::Cursor::with_implicit_transaction`]); otherwise the statement fails with
//! Neo4j's `TransactionStartFailed`: "A query with 'CALL { ... } IN TRANSACTIONS' can only be
//! executed in an implicit transaction, but tried to execute in an explicit transaction."
//!
//! ERRORS
//! ======
//! A batch fails when an inner run fails or its commit does (a conflict, a constraint). The
//! failed batch is rolled back whole (its transaction is dropped; the update counters go back
//! to where they were before it); committed batches stay committed whatever the mode:
//!
//! - `ON ERROR FAIL` (default): the statement fails with the batch's error, its message
//!   followed by "(Transactions committed: k)";
//! - `ON ERROR CONTINUE`: each input row of the failed batch passes once with the returned
//!   variables null; the next batch runs;
//! - `ON ERROR BREAK`: the same for the failed batch and for every later input row, whose
//!   subquery never runs; the statement succeeds.
//!
//! `REPORT STATUS AS s` adds to each output row the map of its batch's transaction:
//! `{started, committed, transactionId, errorMessage}` — `started: false` and nulls for rows
//! after a BREAK. `transactionId` is `plexus-transaction-<k>`, `k` counting the inner
//! transactions this process started ([`INNER_TRANSACTION_IDS`]): Plexus transactions have no
//! id of their own before they commit.
//!
//! SET AT A TIME
//! =============
//! A body without RETURN whose runs cannot see each other's writes
//! ([`plexus_plan::logical::set_at_a_time`]: `MATCH (a:V {id: ...}), (b:V {id: ...}) CREATE
//! (a)-[:E]->(b)`, a `CREATE` of nodes) runs once per input batch, with the batch's rows as its
//! argument rows, instead of once per row: the same writes in the same order, without the
//! operator tree's start-up per row. EXPLAIN shows `(unit, set at a time)`.
//!
//! INVARIANTS
//! ==========
//! - a batch's output rows leave the operator only after its commit (or its failure is
//!   handled), so a consumer never sees a row whose writes may still be rolled back;
//! - batches run in input order and each sees all earlier batches' commits;
//! - the outer transaction has no pending writes whenever it is swapped;
//! - held rows: at most `batch_rows` input rows plus that batch's output.
//!
//! NOT YET
//! =======
//! `IN CONCURRENT TRANSACTIONS`, `ON ERROR RETRY` and the scoped `CALL (x) { ... }` form.

use super::ops::{run_inner, run_inner_over};
use super::{Arguments, Batch, ExecContext, Operator, check_materialized, into_batches};
use crate::eval::{Env, eval};
use plexus_cypher::ast::OnError;
use plexus_plan::logical::{BatchRows, InTransactionsSpec, positive_batch_rows};
use plexus_txn::{CarriedReads, Transaction};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::{MapValue, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers the inner transactions of this process, for `REPORT STATUS`'s `transactionId`.
pub static INNER_TRANSACTION_IDS: AtomicU64 = AtomicU64::new(1);

/// Neo4j's message for the subquery in an explicit transaction.
pub const IMPLICIT_TRANSACTION_REQUIRED: &str = "A query with 'CALL { ... } IN TRANSACTIONS' can \
     only be executed in an implicit transaction, but tried to execute in an explicit transaction.";

/// The error for `CALL { ... } IN TRANSACTIONS` outside an implicit transaction: Neo4j's
/// `Neo.DatabaseError.Transaction.TransactionStartFailed`.
pub fn implicit_transaction_required() -> QueryError {
    QueryError::runtime(
        ErrorClass::DatabaseError,
        "TransactionStartFailed",
        IMPLICIT_TRANSACTION_REQUIRED,
    )
}

pub(super) struct CallInTransactions {
    input: Box<dyn Operator>,
    inner: Box<dyn Operator>,
    spec: InTransactionsSpec,
    /// The inner plan runs once per input batch (see SET AT A TIME).
    set_at_a_time: bool,
    /// The batch size, once known (see `plan::call_in_transactions`, THE BATCH SIZE).
    batch_rows: Option<usize>,
    /// Rows of the input batch that did not fit in the last batch.
    leftover: Option<Batch>,
    input_done: bool,
    /// Output rows of committed (or handled) batches, not yet pulled.
    output: VecDeque<Batch>,
    /// `ON ERROR BREAK` met a failure: no further batch runs.
    broken: bool,
    committed: u64,
    /// What the last committed batch remembered of the vertices (seeks, existence), for the
    /// next batch's transaction to take over while no vertex has changed since (see
    /// REMEMBERED SEEKS).
    seeks: Option<CarriedReads>,
}

impl CallInTransactions {
    pub(super) fn new(
        input: Box<dyn Operator>,
        inner: Box<dyn Operator>,
        spec: InTransactionsSpec,
        set_at_a_time: bool,
    ) -> Self {
        debug_assert!(
            spec.unit || !set_at_a_time,
            "only a unit body runs set at a time"
        );
        CallInTransactions {
            input,
            inner,
            set_at_a_time,
            batch_rows: match spec.batch {
                BatchRows::Known(rows) => Some(usize::try_from(rows).unwrap_or(usize::MAX)),
                BatchRows::Evaluate { .. } => None,
            },
            spec,
            leftover: None,
            input_done: false,
            output: VecDeque::new(),
            broken: false,
            committed: 0,
            seeks: None,
        }
    }

    fn batch_rows(&mut self, ctx: &mut ExecContext) -> Result<usize> {
        if let Some(rows) = self.batch_rows {
            return Ok(rows);
        }
        let BatchRows::Evaluate { expr, text } = &self.spec.batch else {
            unreachable!("a known batch size is set at construction")
        };
        let row = Batch::single(vec![Value::Null; ctx.width]);
        let value = eval(expr, &mut Env::new(&row, 0), ctx)?;
        let rows = positive_batch_rows(&value, text).map_err(|message| {
            QueryError::runtime(ErrorClass::ArgumentError, "InvalidArgumentValue", message)
        })?;
        let rows = usize::try_from(rows).unwrap_or(usize::MAX);
        self.batch_rows = Some(rows);
        Ok(rows)
    }

    /// The next `limit` input rows (fewer at the end of the input), as input batches.
    fn next_input_rows(&mut self, limit: usize, ctx: &mut ExecContext) -> Result<Vec<Batch>> {
        let mut rows = Vec::new();
        let mut count = 0;
        while count < limit {
            let mut batch = match self.leftover.take() {
                Some(batch) => batch,
                None if self.input_done => break,
                None => match self.input.next(ctx)? {
                    Some(batch) => batch,
                    None => {
                        self.input_done = true;
                        break;
                    }
                },
            };
            self.leftover = batch.split_off(limit - count);
            count += batch.len();
            check_materialized(count)?;
            rows.push(batch);
        }
        Ok(rows)
    }

    /// Runs one batch (see ERRORS) and queues its output rows.
    fn run_batch(&mut self, rows: Vec<Batch>, ctx: &mut ExecContext) -> Result<()> {
        if !ctx.state.implicit_transaction {
            return Err(implicit_transaction_required());
        }
        if self.broken {
            self.queue_failed(&rows, ctx.width, not_started());
            return Ok(());
        }
        let id = format!(
            "plexus-transaction-{}",
            INNER_TRANSACTION_IDS.fetch_add(1, Ordering::Relaxed)
        );
        let stats_before = ctx.state.stats.clone();
        let mut tx = ctx.tx.begin_sibling();
        if let Some(seeks) = self.seeks.take() {
            tx.adopt_carried_reads(seeks);
        }
        let ran = self.run_inner_rows(&rows, &mut tx, ctx);
        let outcome = ran.and_then(|out| {
            let seeks = tx.take_carried_reads();
            match tx.commit() {
                Ok(_) => Ok((out, seeks)),
                Err(e) => Err(QueryError::from(e)),
            }
        });
        match outcome {
            Ok((mut out, seeks)) => {
                self.seeks = Some(seeks);
                self.committed += 1;
                self.refresh_outer(ctx);
                if let Some(slot) = self.spec.status_slot {
                    let status = status(true, true, Some(&id), None);
                    for batch in &mut out {
                        let rows = batch.len();
                        batch.set_column(slot, vec![status.clone(); rows]);
                    }
                }
                self.output.extend(out);
                Ok(())
            }
            Err(mut error) => {
                // The batch's transaction is gone (dropped by `commit` or above): rolled back.
                ctx.state.stats = stats_before;
                match self.spec.on_error {
                    OnError::Fail => {
                        error
                            .message
                            .push_str(&format!(" (Transactions committed: {})", self.committed));
                        Err(error)
                    }
                    OnError::Continue | OnError::Break => {
                        self.broken = self.spec.on_error == OnError::Break;
                        let failed = status(true, false, Some(&id), Some(&error.message));
                        self.queue_failed(&rows, ctx.width, failed);
                        // A failed commit ended nothing on the outer side; still, later rows
                        // should see what committed before.
                        self.refresh_outer(ctx);
                        Ok(())
                    }
                }
            }
        }
    }

    /// The inner plan run for every row of `rows` in `tx`: the output rows, as `Apply` makes
    /// them.
    fn run_inner_rows(
        &mut self,
        rows: &[Batch],
        tx: &mut Transaction,
        ctx: &mut ExecContext,
    ) -> Result<Vec<Batch>> {
        let width = ctx.width;
        let mut inner_ctx = ExecContext::new(tx, ctx.params, width, &mut *ctx.state);
        if self.set_at_a_time {
            for input in rows {
                let arguments = Arguments::Rows(Arc::new(input.clone()));
                run_inner_over(self.inner.as_mut(), arguments, &mut inner_ctx)?;
            }
            return Ok(rows.to_vec());
        }
        let mut out = Vec::new();
        for input in rows {
            for row in 0..input.len() {
                let argument = Arc::new(input.row(row));
                let batches = run_inner(self.inner.as_mut(), argument.clone(), &mut inner_ctx)?;
                if self.spec.unit {
                    out.push(argument.as_ref().clone());
                    continue;
                }
                for batch in &batches {
                    for r in 0..batch.len() {
                        let mut joined = argument.as_ref().clone();
                        for slot in &self.spec.returns {
                            joined[*slot] = batch.get(*slot, r).clone();
                        }
                        out.push(joined);
                    }
                }
                check_materialized(out.len())?;
            }
        }
        Ok(into_batches(out, width))
    }

    /// Queues each row of `rows` once, with the returned slots null and `status` reported.
    fn queue_failed(&mut self, rows: &[Batch], width: usize, status: Value) {
        let mut out = Vec::new();
        for input in rows {
            for row in 0..input.len() {
                let mut values = input.row(row);
                for slot in &self.spec.returns {
                    values[*slot] = Value::Null;
                }
                if let Some(slot) = self.spec.status_slot {
                    values[slot] = status.clone();
                }
                out.push(values);
            }
        }
        self.output.extend(into_batches(out, width));
    }

    /// Replaces the lent (outer) transaction by a fresh one (see THE OUTER TRANSACTION).
    fn refresh_outer(&self, ctx: &mut ExecContext) {
        assert_eq!(
            ctx.tx.pending_writes(),
            0,
            "the outer transaction of CALL {{ ... }} IN TRANSACTIONS must not write"
        );
        let fresh = ctx.tx.begin_sibling();
        let stale = std::mem::replace(ctx.tx, fresh);
        stale.rollback();
    }
}

impl Operator for CallInTransactions {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        loop {
            if let Some(batch) = self.output.pop_front() {
                return Ok(Some(batch));
            }
            let limit = self.batch_rows(ctx)?;
            let rows = self.next_input_rows(limit, ctx)?;
            if rows.is_empty() {
                return Ok(None);
            }
            self.run_batch(rows, ctx)?;
        }
    }

    fn reset(&mut self) {
        self.input.reset();
        self.inner.reset();
        self.leftover = None;
        self.input_done = false;
        self.output.clear();
        self.broken = false;
        self.committed = 0;
    }
}

/// The status map of `REPORT STATUS`.
fn status(started: bool, committed: bool, id: Option<&str>, error: Option<&str>) -> Value {
    let text = |s: Option<&str>| s.map_or(Value::Null, Value::string);
    let mut map = MapValue::new();
    map.insert(Arc::from("started"), Value::Bool(started));
    map.insert(Arc::from("committed"), Value::Bool(committed));
    map.insert(Arc::from("transactionId"), text(id));
    map.insert(Arc::from("errorMessage"), text(error));
    Value::map(map)
}

/// The status of a batch that never ran (after an `ON ERROR BREAK`).
fn not_started() -> Value {
    status(false, false, None, None)
}
