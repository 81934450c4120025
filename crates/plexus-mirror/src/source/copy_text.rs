//! Parser for the text format of `COPY ... TO STDOUT`.
//!
//! FORMAT
//! ======
//! One row per line, ended by a newline byte; columns separated by a tab byte; `\N` alone is
//! SQL NULL. Inside a value, PostgreSQL escapes what would be ambiguous, so a raw newline
//! always ends a row and a raw tab always ends a column:
//!
//! ```text
//!   \b \f \n \r \t \v \\     backspace, form feed, newline, carriage return, tab, vertical tab,
//!                            backslash
//!   \ooo                     one to three octal digits: that byte
//!   \xh \xhh                 one or two hex digits: that byte
//!   \<any other character>   that character
//! ```
//!
//! Escapes produce bytes, so a value is unescaped to bytes first and then checked as UTF-8
//! (the copy connection's client encoding). `COPY TO` arrives in CopyData chunks that need not
//! align with rows; [`CopyTextParser`] keeps the unfinished tail between chunks.
//!
//! INVARIANTS
//! ==========
//! - every row has exactly the expected number of columns, or parsing fails naming the row;
//! - malformed input (a dangling backslash, invalid UTF-8, a row without its newline at the
//!   end of the data) is an error, never a panic or a silently altered value.

use std::fmt;

use crate::change::Datum;

/// A COPY text row that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyTextError {
    /// 1-based row number within the copy.
    pub row: u64,
    /// 0-based column, when the problem is in one value.
    pub column: Option<usize>,
    pub reason: String,
}

impl fmt::Display for CopyTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(column) => write!(
                f,
                "COPY text row {} column {}: {}",
                self.row,
                column + 1,
                self.reason
            ),
            None => write!(f, "COPY text row {}: {}", self.row, self.reason),
        }
    }
}

impl std::error::Error for CopyTextError {}

/// Splits COPY text data into rows of [`Datum`]s, across chunk boundaries.
#[derive(Debug)]
pub struct CopyTextParser {
    columns: usize,
    /// Bytes of a row whose newline has not arrived yet.
    pending: Vec<u8>,
    rows: u64,
}

impl CopyTextParser {
    /// A parser for rows of `columns` values.
    pub fn new(columns: usize) -> CopyTextParser {
        CopyTextParser {
            columns,
            pending: Vec::new(),
            rows: 0,
        }
    }

    /// Rows parsed so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Parses every row `chunk` completes, handing each to `on_row` in order.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_row: impl FnMut(Vec<Datum>) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<CopyTextError>,
    {
        let mut rest = chunk;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            let row = if self.pending.is_empty() {
                parse_row(&rest[..newline], self.columns, self.rows + 1)?
            } else {
                self.pending.extend_from_slice(&rest[..newline]);
                let row = parse_row(&self.pending, self.columns, self.rows + 1)?;
                self.pending.clear();
                row
            };
            self.rows += 1;
            on_row(row)?;
            rest = &rest[newline + 1..];
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    /// Ends the data: fails if a row is unfinished. Returns the number of rows.
    pub fn finish(self) -> Result<u64, CopyTextError> {
        if !self.pending.is_empty() {
            return Err(CopyTextError {
                row: self.rows + 1,
                column: None,
                reason: format!(
                    "data ends inside a row ({} bytes without a newline)",
                    self.pending.len()
                ),
            });
        }
        Ok(self.rows)
    }
}

/// Parses one row (without its newline) of `columns` values; `row` numbers errors.
pub fn parse_row(line: &[u8], columns: usize, row: u64) -> Result<Vec<Datum>, CopyTextError> {
    let mut values = Vec::with_capacity(columns);
    for (column, field) in line.split(|&b| b == b'\t').enumerate() {
        let value = parse_field(field).map_err(|reason| CopyTextError {
            row,
            column: Some(column),
            reason,
        })?;
        values.push(value);
    }
    if values.len() != columns {
        return Err(CopyTextError {
            row,
            column: None,
            reason: format!("{} columns, expected {columns}", values.len()),
        });
    }
    Ok(values)
}

fn parse_field(field: &[u8]) -> Result<Datum, String> {
    if field == b"\\N" {
        return Ok(Datum::Null);
    }
    if !field.contains(&b'\\') {
        return text(field.to_vec());
    }
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let byte = field[i];
        i += 1;
        if byte != b'\\' {
            out.push(byte);
            continue;
        }
        let Some(&escape) = field.get(i) else {
            return Err("value ends with a lone backslash".to_owned());
        };
        i += 1;
        match escape {
            b'b' => out.push(0x08),
            b'f' => out.push(0x0C),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0B),
            b'0'..=b'7' => {
                let mut value = u32::from(escape - b'0');
                let mut digits = 1;
                while digits < 3 {
                    match field.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                            digits += 1;
                        }
                        _ => break,
                    }
                }
                // Three octal digits reach 0o777; PostgreSQL keeps the low byte.
                out.push((value & 0xFF) as u8);
            }
            b'x' => {
                let mut value = 0u8;
                let mut digits = 0;
                while digits < 2 {
                    match field.get(i).and_then(|&d| char::from(d).to_digit(16)) {
                        Some(d) => {
                            // d < 16 and at most two digits: fits a byte
                            value = value * 16 + d as u8;
                            i += 1;
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    // PostgreSQL reads `\x` without hex digits as the letter x
                    out.push(b'x');
                } else {
                    out.push(value);
                }
            }
            other => out.push(other),
        }
    }
    text(out)
}

fn text(bytes: Vec<u8>) -> Result<Datum, String> {
    String::from_utf8(bytes)
        .map(Datum::Text)
        .map_err(|e| format!("value is not valid UTF-8: {e}"))
}
