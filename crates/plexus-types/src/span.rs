//! Source spans: where in the query text a piece of syntax, or an error, is.
//!
//! A span is byte offsets `[start, end)` plus the 1-based line and column of `start`. The
//! parser gives every syntax-tree node one (`plexus_cypher::ast`, which re-exports this
//! type); a query error carries the span of what it complains about. The type lives here,
//! in the shared vocabulary, because both the parser and the query-error type
//! (`plexus_value`) name it and neither depends on the other.
//!
//! Spans deliberately take **no part in equality**: `Span::eq` is always true, so two syntax
//! trees compare equal when they differ only in where they came from (the parser's round-trip
//! tests rely on it). To compare positions, compare the fields (`a.start == b.start`).

use std::hash::{Hash, Hasher};

/// A region of the query text. Compares equal to every other span (see module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset one past the last character.
    pub end: usize,
    /// 1-based line of the first character.
    pub line: u32,
    /// 1-based column of the first character, counted in characters.
    pub column: u32,
}

impl Span {
    pub fn new(start: usize, end: usize, line: u32, column: u32) -> Self {
        debug_assert!(start <= end, "span start {start} after end {end}");
        Self {
            start,
            end,
            line,
            column,
        }
    }

    /// The span from the start of `self` to the end of `last`.
    pub fn to(self, last: Span) -> Span {
        Span::new(self.start, last.end.max(self.start), self.line, self.column)
    }

    /// The source text this span covers, if it lies within `source`.
    pub fn text(self, source: &str) -> Option<&str> {
        source.get(self.start..self.end)
    }
}

impl PartialEq for Span {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for Span {}

impl Hash for Span {
    fn hash<H: Hasher>(&self, _state: &mut H) {}
}
