//! Ingest errors: what went wrong, and where in which file.
//!
//! Every error about a file's content names the file as the statement named it (relative to
//! the import directory, never the server's absolute path) and the 1-based line and column
//! where the problem starts, so a user can open the file at that spot.

use std::fmt;

pub type Result<T, E = IngestError> = std::result::Result<T, E>;

/// What kind of problem an [`IngestError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngestErrorKind {
    /// The name given does not denote a file the server may read (bad URL scheme, escape from
    /// the import directory, a directory, …).
    Location,
    /// The file could not be opened or read (absent, permissions, I/O error, truncated gzip).
    Io,
    /// The content is not well-formed (unterminated quote, invalid UTF-8, a field too long …).
    Format,
    /// The statement's options are invalid (e.g. a field terminator of two characters).
    Options,
}

/// An ingest failure with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestError {
    pub kind: IngestErrorKind,
    pub message: String,
    /// The file as the statement named it (import-directory relative), when one is involved.
    pub file: Option<String>,
    /// 1-based line where the problem starts, for content errors.
    pub line: Option<u64>,
    /// 1-based column (in bytes) where the problem starts, for content errors.
    pub column: Option<u64>,
}

impl IngestError {
    pub fn new(kind: IngestErrorKind, message: impl Into<String>) -> IngestError {
        IngestError {
            kind,
            message: message.into(),
            file: None,
            line: None,
            column: None,
        }
    }

    pub fn in_file(mut self, file: &str) -> IngestError {
        self.file = Some(file.to_string());
        self
    }

    pub fn at(mut self, line: u64, column: u64) -> IngestError {
        self.line = Some(line);
        self.column = Some(column);
        self
    }
}

impl fmt::Display for IngestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(column)) => {
                write!(f, "{file}:{line}:{column}: {}", self.message)
            }
            (Some(file), Some(line), None) => write!(f, "{file}:{line}: {}", self.message),
            (Some(file), None, _) => write!(f, "{file}: {}", self.message),
            (None, _, _) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for IngestError {}
