//! `Connection`: Cypher statements over a [`Database`].
//!
//! TRANSACTIONS
//! ============
//! A connection is in one of two modes:
//!
//! - **auto-commit** (the default): each `execute` runs in a transaction of its own, committed
//!   when the statement succeeds and rolled back when it fails, so a failed statement leaves
//!   no trace;
//! - **explicit**: `BEGIN` opens a transaction that the following statements share (each sees
//!   the writes of the previous ones) until `COMMIT` or `ROLLBACK`. A statement that fails
//!   inside it rolls the whole transaction back (Plexus has no statement-level savepoints
//!   yet), and the error says so.
//!
//! `BEGIN`, `COMMIT` and `ROLLBACK` are commands of the connection, not Cypher; they must be
//! the whole statement (a trailing `;` is allowed).
//!
//! Results are materialised: `execute` returns every row, with the nodes and relationships
//! they mention copied in (see `plexus_exec::result`), so a result outlives its transaction.

use plexus_exec::{ErrorClass, Params, Procedure, ProcedureRegistry, QueryError, QueryResult};
use plexus_txn::{Transaction, TxnManager};
use std::sync::Arc;

/// A connection shares the engine with its `Database` (it does not borrow it), so it can be
/// moved to another thread or kept by a server session; it stays usable after the `Database`
/// handle is dropped, like an open `Transaction`.
pub struct Connection {
    manager: Arc<TxnManager>,
    tx: Option<Transaction>,
    procedures: ProcedureRegistry,
}

enum Command {
    Begin,
    Commit,
    Rollback,
}

fn command(query: &str) -> Option<Command> {
    let word = query.trim().trim_end_matches(';').trim();
    if word.eq_ignore_ascii_case("BEGIN") {
        Some(Command::Begin)
    } else if word.eq_ignore_ascii_case("COMMIT") {
        Some(Command::Commit)
    } else if word.eq_ignore_ascii_case("ROLLBACK") {
        Some(Command::Rollback)
    } else {
        None
    }
}

fn transaction_error(code: &'static str, message: &str) -> QueryError {
    QueryError::runtime(ErrorClass::DatabaseError, code, message)
}

impl Connection {
    pub(crate) fn new(manager: Arc<TxnManager>) -> Self {
        let mut connection = Connection {
            manager,
            tx: None,
            procedures: ProcedureRegistry::new(),
        };
        let built_in = crate::procedures::algo_procedures()
            .into_iter()
            .chain(crate::catalog_procedures::catalog_procedures());
        for procedure in built_in {
            connection.register_procedure(procedure);
        }
        connection
    }

    fn begin(&self) -> Transaction {
        plexus_txn::begin(&self.manager, plexus_types::IsolationLevel::Snapshot)
    }

    /// Whether an explicit transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.tx.is_some()
    }

    /// Makes a procedure callable with `CALL` on this connection.
    pub fn register_procedure(&mut self, procedure: Procedure) {
        self.procedures
            .insert(procedure.name.to_ascii_lowercase(), Arc::new(procedure));
    }

    /// Runs one statement (or `BEGIN` / `COMMIT` / `ROLLBACK`) with `params`.
    pub fn execute(&mut self, query: &str, params: &Params) -> Result<QueryResult, QueryError> {
        match command(query) {
            Some(Command::Begin) => {
                if self.tx.is_some() {
                    return Err(transaction_error(
                        "TransactionAlreadyOpen",
                        "a transaction is already open on this connection",
                    ));
                }
                self.tx = Some(self.begin());
                Ok(QueryResult::default())
            }
            Some(Command::Commit) => match self.tx.take() {
                Some(tx) => {
                    tx.commit()?;
                    Ok(QueryResult::default())
                }
                None => Err(transaction_error(
                    "NoOpenTransaction",
                    "COMMIT without BEGIN",
                )),
            },
            Some(Command::Rollback) => match self.tx.take() {
                Some(tx) => {
                    tx.rollback();
                    Ok(QueryResult::default())
                }
                None => Err(transaction_error(
                    "NoOpenTransaction",
                    "ROLLBACK without BEGIN",
                )),
            },
            None => match self.tx.as_mut() {
                Some(tx) => {
                    let result = guarded(tx, query, params, &self.procedures);
                    if let Err(mut error) = result {
                        if let Some(tx) = self.tx.take() {
                            tx.rollback();
                        }
                        error.message.push_str(" (the transaction was rolled back)");
                        return Err(error);
                    }
                    result
                }
                None => {
                    let mut tx = self.begin();
                    let result = guarded(&mut tx, query, params, &self.procedures)?;
                    tx.commit()?;
                    Ok(result)
                }
            },
        }
    }
}

/// Runs a statement, turning a panic inside the engine (a bug, never expected) into an
/// `InternalError` so that the caller's process survives; the transaction is then rolled
/// back by the caller like after any other error.
fn guarded(
    tx: &mut Transaction,
    query: &str,
    params: &Params,
    procedures: &ProcedureRegistry,
) -> Result<QueryResult, QueryError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        plexus_exec::execute(tx, query, params, procedures)
    }))
    .unwrap_or_else(|_| {
        Err(transaction_error(
            "InternalError",
            "internal error while executing the statement (please report it); nothing was committed",
        ))
    })
}
