//! Parse errors: what went wrong and where.
//!
//! Every error the lexer or parser returns is a [`ParseError`]: a [`ParseErrorKind`] plus the
//! [`Span`] of the offending token, and it prints as
//! `line 1, column 10: expected ')' but found 'RETURN'`.
//!
//! The openCypher TCK names compile-time errors by a detail code (`UnexpectedSyntax`,
//! `IntegerOverflow`, `InvalidNumberLiteral`, ...). [`ParseError::tck_code`] maps each kind to
//! that code so a TCK runner can compare the error it got with the one a scenario expects.

use crate::ast::Span;

/// A syntax error with its source position.
#[derive(Debug, Clone, thiserror::Error)]
#[error("line {}, column {}: {kind}", span.line, span.column)]
pub struct ParseError {
    pub kind: ParseErrorKind,
    /// The offending token (or character, for lexical errors).
    pub span: Span,
}

/// What kind of syntax error occurred.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseErrorKind {
    #[error("expected {expected} but found {found}")]
    Unexpected { expected: String, found: String },
    #[error("unexpected character '{ch}'")]
    UnexpectedCharacter { ch: char },
    #[error("'!=' is not a Cypher operator, use '<>'")]
    BangEquals,
    #[error("unterminated string literal")]
    UnterminatedString,
    #[error("unterminated quoted identifier")]
    UnterminatedIdentifier,
    #[error("unterminated block comment")]
    UnterminatedComment,
    #[error("invalid escape sequence '{escape}'")]
    InvalidEscape { escape: String },
    #[error("invalid unicode escape '{escape}'")]
    InvalidUnicodeLiteral { escape: String },
    #[error("invalid number literal '{literal}'")]
    InvalidNumberLiteral { literal: String },
    #[error("integer literal '{literal}' does not fit in 64 bits")]
    IntegerOverflow { literal: String },
    #[error("floating point literal '{literal}' is out of range")]
    FloatingPointOverflow { literal: String },
    #[error(
        "a pattern can only be used as a predicate (in WHERE, exists() or under NOT/AND/OR/XOR), not as a value"
    )]
    PatternAsValue,
    #[error("invalid clause composition: {reason}")]
    InvalidClauseComposition { reason: String },
    #[error("procedure arguments can only be omitted in a standalone CALL")]
    ImplicitProcedureArguments,
    #[error("query is nested deeper than {limit} levels")]
    NestingTooDeep { limit: usize },
    #[error("invalid relationship pattern: {reason}")]
    InvalidRelationshipPattern { reason: String },
    #[error("unknown column type '{name}'; the column types are {accepted}")]
    UnknownColumnType { name: String, accepted: String },
    #[error("{what} is not supported")]
    NotSupported { what: String },
}

impl ParseError {
    pub fn new(kind: ParseErrorKind, span: Span) -> Self {
        Self { kind, span }
    }

    /// The openCypher TCK error detail code for this error (the `X` in
    /// "a SyntaxError should be raised at compile time: X").
    pub fn tck_code(&self) -> &'static str {
        match &self.kind {
            ParseErrorKind::UnexpectedCharacter { ch } if !ch.is_ascii() => {
                "InvalidUnicodeCharacter"
            }
            ParseErrorKind::Unexpected { .. }
            | ParseErrorKind::UnexpectedCharacter { .. }
            | ParseErrorKind::BangEquals
            | ParseErrorKind::UnterminatedString
            | ParseErrorKind::UnterminatedIdentifier
            | ParseErrorKind::UnterminatedComment
            | ParseErrorKind::InvalidEscape { .. }
            | ParseErrorKind::PatternAsValue
            | ParseErrorKind::NestingTooDeep { .. } => "UnexpectedSyntax",
            ParseErrorKind::InvalidUnicodeLiteral { .. } => "InvalidUnicodeLiteral",
            ParseErrorKind::InvalidNumberLiteral { .. } => "InvalidNumberLiteral",
            ParseErrorKind::IntegerOverflow { .. } => "IntegerOverflow",
            ParseErrorKind::FloatingPointOverflow { .. } => "FloatingPointOverflow",
            ParseErrorKind::InvalidClauseComposition { .. } => "InvalidClauseComposition",
            ParseErrorKind::ImplicitProcedureArguments => "InvalidArgumentPassingMode",
            ParseErrorKind::InvalidRelationshipPattern { .. } => "InvalidRelationshipPattern",
            ParseErrorKind::UnknownColumnType { .. } => "UnknownColumnType",
            ParseErrorKind::NotSupported { .. } => "NotSupported",
        }
    }
}
