//! Neo4j status codes for Plexus errors.
//!
//! A FAILURE carries `Neo.<Classification>.<Category>.<Title>`; drivers pick their exception
//! type from it (the Python driver: `CypherSyntaxError`, `CypherTypeError`,
//! `ConstraintError`, `AuthError`, `TransientError` — which its retry loops retry — and
//! `ClientError` / `DatabaseError` for the rest). The mapping:
//!
//! ```text
//!   Plexus class                   Neo4j code
//!   SyntaxError                    Neo.ClientError.Statement.SyntaxError
//!   SemanticError                  Neo.ClientError.Statement.SemanticError
//!   TypeError                      Neo.ClientError.Statement.TypeError
//!   ArgumentError                  Neo.ClientError.Statement.ArgumentError
//!   ArithmeticError                Neo.ClientError.Statement.ArithmeticError
//!   EntityNotFound                 Neo.ClientError.Statement.EntityNotFound
//!   ParameterMissing               Neo.ClientError.Statement.ParameterMissing
//!   ConstraintVerificationFailed   Neo.ClientError.Schema.ConstraintValidationFailed
//!   ProcedureError                 Neo.ClientError.Procedure.ProcedureCallFailed
//!   ExternalResourceFailed         Neo.ClientError.Statement.ExternalResourceFailed
//!   DatabaseError, retryable       Neo.TransientError.Transaction.Outdated
//!   DatabaseError, code TransactionStartFailed
//!                                  Neo.DatabaseError.Transaction.TransactionStartFailed
//!   DatabaseError, other           Neo.DatabaseError.General.UnknownError
//! ```
//!
//! `TransactionStartFailed` is what Neo4j answers for `CALL { ... } IN TRANSACTIONS` in an
//! explicit transaction; Plexus uses the same code and message.
//!
//! A retryable storage error is a snapshot conflict (another transaction committed a write
//! first) or, under SERIALIZABLE, a serialization failure (something the transaction read
//! was changed by a transaction that committed meanwhile). Neo4j's `Outdated` ("the transaction has seen state invalidated by applied
//! updates") says the same, and it is a transient error, so managed transactions
//! (`session.execute_write`) retry it.

use plexus::{ErrorClass, QueryError};

pub const UNAUTHORIZED: &str = "Neo.ClientError.Security.Unauthorized";
/// A message the current state does not accept, or malformed fields.
pub const REQUEST_INVALID: &str = "Neo.ClientError.Request.Invalid";
/// A parameter value Plexus has no form for.
pub const PARAMETER_TYPE: &str = "Neo.ClientError.Statement.TypeError";
/// A statement the Bolt session refuses (transaction commands sent as Cypher).
pub const SYNTAX_ERROR: &str = "Neo.ClientError.Statement.SyntaxError";
/// Internal failures with no better code.
pub const UNKNOWN: &str = "Neo.DatabaseError.General.UnknownError";

pub fn code(error: &QueryError) -> &'static str {
    match error.class {
        ErrorClass::SyntaxError => SYNTAX_ERROR,
        ErrorClass::SemanticError => "Neo.ClientError.Statement.SemanticError",
        ErrorClass::TypeError => "Neo.ClientError.Statement.TypeError",
        ErrorClass::ArgumentError => "Neo.ClientError.Statement.ArgumentError",
        ErrorClass::ArithmeticError => "Neo.ClientError.Statement.ArithmeticError",
        ErrorClass::EntityNotFound => "Neo.ClientError.Statement.EntityNotFound",
        ErrorClass::ParameterMissing => "Neo.ClientError.Statement.ParameterMissing",
        ErrorClass::ConstraintVerificationFailed => {
            "Neo.ClientError.Schema.ConstraintValidationFailed"
        }
        ErrorClass::ProcedureError => "Neo.ClientError.Procedure.ProcedureCallFailed",
        ErrorClass::ExternalResourceFailed => "Neo.ClientError.Statement.ExternalResourceFailed",
        ErrorClass::DatabaseError if error.is_retryable() => {
            "Neo.TransientError.Transaction.Outdated"
        }
        ErrorClass::DatabaseError if error.code == plexus::INTERRUPTED => {
            "Neo.TransientError.Transaction.Terminated"
        }
        ErrorClass::DatabaseError if error.code == "TransactionStartFailed" => {
            "Neo.DatabaseError.Transaction.TransactionStartFailed"
        }
        ErrorClass::DatabaseError => UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_are_transient_and_cypher_errors_are_client_errors() {
        let conflict =
            QueryError::from(plexus::Error::Aborted(plexus::AbortReason::WriteConflict {
                item: "v1:2".into(),
            }));
        assert_eq!(code(&conflict), "Neo.TransientError.Transaction.Outdated");
        // Serialization failures are retried by the drivers' managed transactions too.
        for reason in [
            plexus::AbortReason::ReadValidation {
                item: "label scan :Doctor".into(),
            },
            plexus::AbortReason::TooOld,
        ] {
            let failure = QueryError::from(plexus::Error::Aborted(reason));
            assert_eq!(code(&failure), "Neo.TransientError.Transaction.Outdated");
        }
        assert_eq!(
            code(&QueryError::type_error("x")),
            "Neo.ClientError.Statement.TypeError"
        );
        let internal = QueryError::runtime(ErrorClass::DatabaseError, "InternalError", "bug");
        assert_eq!(code(&internal), UNKNOWN);
        let start = QueryError::runtime(ErrorClass::DatabaseError, "TransactionStartFailed", "x");
        assert_eq!(
            code(&start),
            "Neo.DatabaseError.Transaction.TransactionStartFailed"
        );
    }
}
