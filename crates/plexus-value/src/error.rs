//! Query errors: a Cypher error class, a detail code, a phase and (when known) a position.
//!
//! The classes and detail codes are the openCypher TCK's (`SyntaxError` / `UndefinedVariable`,
//! `TypeError` / `InvalidArgumentType`, ...), so a client — and the TCK runner — can tell what
//! went wrong without parsing the message. Errors found before any row is produced (parsing,
//! binding, planning) are [`Phase::Compile`]; errors while producing rows are
//! [`Phase::Runtime`]. Storage errors keep their [`plexus_types::Error`] as the source, so a
//! transaction conflict still says that retrying is safe. A parse error becomes a
//! `SyntaxError` in the executor (`plexus_exec::syntax_error`): this crate does not know
//! the parser.

use plexus_types::Span;
use std::fmt;

/// The openCypher error classes (the `TYPE` of "a TYPE should be raised").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    SyntaxError,
    SemanticError,
    TypeError,
    ArgumentError,
    ArithmeticError,
    EntityNotFound,
    ParameterMissing,
    ConstraintVerificationFailed,
    ProcedureError,
    /// A file a statement reads (`LOAD CSV`) cannot be read: outside the import directory,
    /// absent, unreadable or malformed. Neo4j's `Statement.ExternalResourceFailed`.
    ExternalResourceFailed,
    /// Not a Cypher error: the storage or transaction layer failed.
    DatabaseError,
}

impl ErrorClass {
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::SyntaxError => "SyntaxError",
            ErrorClass::SemanticError => "SemanticError",
            ErrorClass::TypeError => "TypeError",
            ErrorClass::ArgumentError => "ArgumentError",
            ErrorClass::ArithmeticError => "ArithmeticError",
            ErrorClass::EntityNotFound => "EntityNotFound",
            ErrorClass::ParameterMissing => "ParameterMissing",
            ErrorClass::ConstraintVerificationFailed => "ConstraintVerificationFailed",
            ErrorClass::ProcedureError => "ProcedureError",
            ErrorClass::ExternalResourceFailed => "ExternalResourceFailed",
            ErrorClass::DatabaseError => "DatabaseError",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    Compile,
    Runtime,
}

#[derive(Debug)]
pub struct QueryError {
    pub class: ErrorClass,
    /// The TCK detail code, e.g. `UndefinedVariable`.
    pub code: &'static str,
    pub phase: Phase,
    pub message: String,
    pub span: Option<Span>,
    /// The storage error behind a `DatabaseError` (boxed: errors travel in every `Result`).
    pub source: Option<Box<plexus_types::Error>>,
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.class.name(), self.code)?;
        if let Some(span) = self.span {
            write!(f, " at line {}, column {}", span.line, span.column)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for QueryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

pub type Result<T, E = QueryError> = std::result::Result<T, E>;

impl QueryError {
    /// A compile-time error at `span`.
    pub fn compile(
        class: ErrorClass,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        QueryError {
            class,
            code,
            phase: Phase::Compile,
            message: message.into(),
            span: Some(span),
            source: None,
        }
    }

    /// A runtime error.
    pub fn runtime(class: ErrorClass, code: &'static str, message: impl Into<String>) -> Self {
        QueryError {
            class,
            code,
            phase: Phase::Runtime,
            message: message.into(),
            span: None,
            source: None,
        }
    }

    /// A runtime `TypeError` / `InvalidArgumentType`.
    pub fn type_error(message: impl Into<String>) -> Self {
        Self::runtime(ErrorClass::TypeError, "InvalidArgumentType", message)
    }

    /// A runtime `ArgumentError` / `InvalidArgumentValue`.
    pub fn argument(message: impl Into<String>) -> Self {
        Self::runtime(ErrorClass::ArgumentError, "InvalidArgumentValue", message)
    }

    /// Whether retrying the transaction may succeed (a storage-level conflict).
    pub fn is_retryable(&self) -> bool {
        self.source.as_ref().is_some_and(|e| e.is_retryable())
    }
}

impl From<plexus_types::Error> for QueryError {
    fn from(error: plexus_types::Error) -> Self {
        let (class, code) = match &error {
            plexus_types::Error::Constraint(_) => (
                ErrorClass::ConstraintVerificationFailed,
                "ConstraintViolation",
            ),
            plexus_types::Error::NotFound(_) => (ErrorClass::EntityNotFound, "EntityNotFound"),
            _ => (ErrorClass::DatabaseError, "DatabaseError"),
        };
        QueryError {
            class,
            code,
            phase: Phase::Runtime,
            message: error.to_string(),
            span: None,
            source: Some(Box::new(error)),
        }
    }
}
