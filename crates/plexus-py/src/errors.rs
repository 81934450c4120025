//! Python exceptions: one class per kind of engine error, so callers catch what they can act on.
//!
//! HIERARCHY
//! =========
//! ```text
//!   plexusdb.Error                      base of everything the package raises itself
//!   ├── DatabaseAlreadyOpen             another open Database (this or another process) holds LOCK
//!   ├── DatabaseClosed                  the Database (or the Snapshot) was closed
//!   ├── ConnectionClosed                the Connection was closed
//!   ├── StorageError                    I/O failure, corruption, read-only after an I/O failure
//!   ├── InternalError                   a bug in the engine (caught; nothing was committed)
//!   ├── TransactionError                BEGIN twice, COMMIT without BEGIN, ...
//!   │   └── TransactionAborted          a conflict: retrying the transaction may succeed
//!   └── ClientError                     the statement or its parameters are wrong
//!       ├── CypherSyntaxError
//!       ├── CypherSemanticError         undefined variables, wrong use of aggregates, ...
//!       ├── CypherTypeError
//!       ├── CypherArgumentError         bad argument values, missing parameters, arithmetic
//!       ├── ConstraintViolation
//!       └── EntityNotFound
//! ```
//!
//! ATTRIBUTES
//! ==========
//! Every instance raised for an engine error carries `classification` (the openCypher error
//! class, e.g. `SyntaxError`, or `DatabaseError`), `code` (the TCK detail code, e.g.
//! `UndefinedVariable`), `line` and `column` (1-based, or `None` when the error has no source
//! position) and `retryable` (true only for `TransactionAborted`). The message is the engine's
//! own text: `SyntaxError (UnexpectedSyntax) at line 1, column 10: ...`.
//!
//! Errors in how Python calls the API (an unsupported parameter type, a negative id) are the
//! built-in `TypeError` / `ValueError`, as Python programmers expect.

use plexus::{Error as EngineError, ErrorClass, QueryError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyType;

create_exception!(
    plexusdb,
    Error,
    PyException,
    "Base class of every plexusdb error."
);
create_exception!(
    plexusdb,
    DatabaseAlreadyOpen,
    Error,
    "The database directory is held by another open Database (in this or another process)."
);
create_exception!(plexusdb, DatabaseClosed, Error, "The Database was closed.");
create_exception!(
    plexusdb,
    ConnectionClosed,
    Error,
    "The Connection was closed."
);
create_exception!(
    plexusdb,
    StorageError,
    Error,
    "An I/O failure or corruption in the database files; the message names the file."
);
create_exception!(
    plexusdb,
    InternalError,
    Error,
    "An engine bug, caught before it could do harm; nothing was committed."
);
create_exception!(
    plexusdb,
    TransactionError,
    Error,
    "A transaction command out of place (BEGIN twice, COMMIT without BEGIN, ...)."
);
create_exception!(
    plexusdb,
    TransactionAborted,
    TransactionError,
    "The transaction conflicted with a concurrent one; retrying it may succeed."
);
create_exception!(
    plexusdb,
    ClientError,
    Error,
    "The statement or its parameters are wrong."
);
create_exception!(
    plexusdb,
    CypherSyntaxError,
    ClientError,
    "The statement does not parse."
);
create_exception!(
    plexusdb,
    CypherSemanticError,
    ClientError,
    "The statement parses but means nothing (undefined variable, misplaced aggregate, ...)."
);
create_exception!(
    plexusdb,
    CypherTypeError,
    ClientError,
    "A value has the wrong type."
);
create_exception!(
    plexusdb,
    CypherArgumentError,
    ClientError,
    "An argument or parameter has a wrong value, is missing, or arithmetic failed."
);
create_exception!(
    plexusdb,
    ConstraintViolation,
    ClientError,
    "A constraint was violated."
);
create_exception!(
    plexusdb,
    EntityNotFound,
    ClientError,
    "A node or relationship the statement refers to does not exist."
);

/// Adds every exception class to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let classes = [
        py.get_type::<Error>(),
        py.get_type::<DatabaseAlreadyOpen>(),
        py.get_type::<DatabaseClosed>(),
        py.get_type::<ConnectionClosed>(),
        py.get_type::<StorageError>(),
        py.get_type::<InternalError>(),
        py.get_type::<TransactionError>(),
        py.get_type::<TransactionAborted>(),
        py.get_type::<ClientError>(),
        py.get_type::<CypherSyntaxError>(),
        py.get_type::<CypherSemanticError>(),
        py.get_type::<CypherTypeError>(),
        py.get_type::<CypherArgumentError>(),
        py.get_type::<ConstraintViolation>(),
        py.get_type::<EntityNotFound>(),
    ];
    for class in classes {
        m.add(class.name()?, class)?;
    }
    Ok(())
}

/// The class for an engine error.
fn engine_class<'py>(py: Python<'py>, error: &EngineError) -> Bound<'py, PyType> {
    match error {
        EngineError::Aborted(_) => py.get_type::<TransactionAborted>(),
        EngineError::InvalidArgument(_) | EngineError::LimitExceeded(_) => {
            py.get_type::<CypherArgumentError>()
        }
        EngineError::TypeMismatch(_) => py.get_type::<CypherTypeError>(),
        EngineError::NotFound(_) => py.get_type::<EntityNotFound>(),
        EngineError::Constraint(_) => py.get_type::<ConstraintViolation>(),
        EngineError::AlreadyOpen { .. } => py.get_type::<DatabaseAlreadyOpen>(),
        EngineError::Corruption { .. } | EngineError::Io { .. } | EngineError::Poisoned(_) => {
            py.get_type::<StorageError>()
        }
        EngineError::TransactionClosed(_) => py.get_type::<TransactionError>(),
    }
}

/// The class for a query error: by its Cypher class, or by the storage error behind it.
fn query_class<'py>(py: Python<'py>, error: &QueryError) -> Bound<'py, PyType> {
    match error.class {
        ErrorClass::SyntaxError => py.get_type::<CypherSyntaxError>(),
        ErrorClass::SemanticError => py.get_type::<CypherSemanticError>(),
        ErrorClass::TypeError => py.get_type::<CypherTypeError>(),
        ErrorClass::ArgumentError
        | ErrorClass::ArithmeticError
        | ErrorClass::ParameterMissing
        | ErrorClass::ProcedureError
        | ErrorClass::ExternalResourceFailed => py.get_type::<CypherArgumentError>(),
        ErrorClass::EntityNotFound => py.get_type::<EntityNotFound>(),
        ErrorClass::ConstraintVerificationFailed => py.get_type::<ConstraintViolation>(),
        ErrorClass::DatabaseError => match (&error.source, error.code) {
            (Some(source), _) => engine_class(py, source),
            (None, "InternalError") => py.get_type::<InternalError>(),
            (
                None,
                "TransactionAlreadyOpen"
                | "NoOpenTransaction"
                | "ResultConsumed"
                | "TransactionEnded",
            ) => py.get_type::<TransactionError>(),
            (None, _) => py.get_type::<StorageError>(),
        },
    }
}

/// Instantiates `class(message)` and sets the attributes the module doc lists.
fn raise(
    class: Bound<'_, PyType>,
    message: String,
    classification: &str,
    code: &str,
    position: Option<(usize, usize)>,
    retryable: bool,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let instance = class.call1((message.clone(),))?;
        instance.setattr("classification", classification)?;
        instance.setattr("code", code)?;
        instance.setattr("line", position.map(|p| p.0))?;
        instance.setattr("column", position.map(|p| p.1))?;
        instance.setattr("retryable", retryable)?;
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}

/// A Python exception for a query error.
pub(crate) fn query_error(py: Python<'_>, error: &QueryError) -> PyErr {
    raise(
        query_class(py, error),
        error.to_string(),
        error.class.name(),
        error.code,
        error.span.map(|s| (s.line as usize, s.column as usize)),
        error.is_retryable(),
    )
}

/// A Python exception for an engine error (opening, closing, snapshots).
pub(crate) fn engine_error(py: Python<'_>, error: &EngineError) -> PyErr {
    let code = match error {
        EngineError::AlreadyOpen { .. } => "DatabaseAlreadyOpen",
        EngineError::Aborted(_) => "TransactionAborted",
        _ => "DatabaseError",
    };
    raise(
        engine_class(py, error),
        error.to_string(),
        "DatabaseError",
        code,
        None,
        error.is_retryable(),
    )
}

/// `DatabaseClosed` with the standard attributes; `message` says what was closed.
pub(crate) fn database_closed(py: Python<'_>, message: String) -> PyErr {
    raise(
        py.get_type::<DatabaseClosed>(),
        message,
        "DatabaseError",
        "DatabaseClosed",
        None,
        false,
    )
}

/// `ConnectionClosed` with the standard attributes.
pub(crate) fn connection_closed(py: Python<'_>) -> PyErr {
    raise(
        py.get_type::<ConnectionClosed>(),
        "the connection is closed".into(),
        "DatabaseError",
        "ConnectionClosed",
        None,
        false,
    )
}
