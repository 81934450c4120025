//! Errors.
//!
//! One error type for the whole engine, grouped by what the caller can do about it:
//! fix the input (`InvalidArgument`, `TypeMismatch`, `NotFound`, …), retry the transaction
//! (`Aborted`, see [`Error::is_retryable`]), or inspect the files (`Corruption`, `Io`).
//! Storage errors name the file and the byte offset involved.

use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a transaction was aborted. All of these are retryable: running the same transaction
/// again on a newer snapshot may succeed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// Snapshot isolation: another transaction committed a write to the same item first.
    WriteConflict { item: String },
    /// Serializable: something this transaction read (an item or a predicate such as a label
    /// scan or an adjacency) was changed by a transaction that committed meanwhile.
    ReadValidation { item: String },
    /// The transaction is older than the conflict history kept for validation.
    TooOld,
}

impl fmt::Display for AbortReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AbortReason::WriteConflict { item } => write!(
                f,
                "write-write conflict on {item}: another transaction committed a write to it first"
            ),
            AbortReason::ReadValidation { item } => write!(
                f,
                "serialization failure: {item} was changed by a concurrent transaction after this transaction read it"
            ),
            AbortReason::TooOld => {
                write!(f, "transaction is older than the retained conflict history")
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("transaction aborted (safe to retry): {0}")]
    Aborted(AbortReason),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("type mismatch: {0}")]
    TypeMismatch(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("constraint violation: {0}")]
    Constraint(String),
    #[error("limit exceeded: {0}")]
    LimitExceeded(String),
    #[error("database at '{path}' is in use by another process (lock file '{path}/LOCK' is held)")]
    AlreadyOpen { path: String },
    #[error("corrupt file '{file}' at byte {offset}: {detail}")]
    Corruption {
        file: String,
        offset: u64,
        detail: String,
    },
    #[error("I/O error on '{file}': {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("database is read-only after an earlier I/O failure (reopen it to recover): {0}")]
    Poisoned(String),
    #[error("transaction is no longer active: {0}")]
    TransactionClosed(String),
}

impl Error {
    /// True when running the transaction again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Aborted(_))
    }

    pub fn io(file: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            file: file.into(),
            source,
        }
    }

    pub fn corruption(file: impl Into<String>, offset: u64, detail: impl Into<String>) -> Self {
        Error::Corruption {
            file: file.into(),
            offset,
            detail: detail.into(),
        }
    }
}
