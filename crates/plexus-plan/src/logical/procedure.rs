//! Procedures as plans name them: a signature (inputs with declared types, outputs) and a
//! body — a table of rows (the TCK's test procedures) or a function of the arguments and the
//! statement's transaction, which execution calls.

use plexus_value::error::{QueryError, Result};
use plexus_value::value::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A procedure defined by a table of rows (the TCK defines its test procedures this way).
#[derive(Debug, Clone)]
pub struct Procedure {
    pub name: String,
    pub inputs: Vec<String>,
    /// The declared type of each input (`INTEGER`, `FLOAT`, `NUMBER`, `STRING`, `BOOLEAN`,
    /// `LIST`, `MAP`, `ANY`, ...); arguments of another statically known type are rejected.
    pub input_types: Vec<String>,
    /// Default values of the last `defaults.len()` inputs: a call may leave those arguments
    /// out (`CALL algo.pagerank()` is `CALL algo.pagerank({})`), as Neo4j's procedures with
    /// default values allow. Empty: every argument is required.
    pub defaults: Vec<Value>,
    pub outputs: Vec<String>,
    /// Each row holds the input values followed by the output values (table procedures).
    pub rows: Vec<Vec<Value>>,
    /// A computed procedure: called with the argument values and the statement's
    /// transaction, returns output rows (outputs only). `rows` is then unused.
    pub compute: Option<ProcedureFn>,
}

/// The signature of a computed procedure's body.
pub type ProcedureBody = dyn Fn(&[Value], &mut plexus_txn::Transaction) -> Result<Vec<Vec<Value>>, QueryError>
    + Send
    + Sync;

/// The body of a computed procedure.
#[derive(Clone)]
pub struct ProcedureFn(pub Arc<ProcedureBody>);

impl std::fmt::Debug for ProcedureFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProcedureFn(..)")
    }
}

/// Procedures callable with `CALL`, by lower-case qualified name.
pub type ProcedureRegistry = HashMap<String, Arc<Procedure>>;
