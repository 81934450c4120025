//! Splitting shell input into statements at `;`, fed one line at a time.
//!
//! LEXICAL STATES
//! ==============
//! A `;` ends a statement only in plain code. The splitter follows just enough of the Cypher
//! lexer (`plexus_cypher::lexer`) to know where plain code is:
//!
//! ```text
//!   Code ──'──▶ Single ──'──▶ Code        inside quotes, `\x` skips x (so `'it\'s;'` is one
//!   Code ──"──▶ Double ──"──▶ Code        string); an unterminated string runs on to the
//!   Code ──`──▶ Backtick ─`─▶ Code        next line, as the lexer would report it anyway
//!   Code ──//─▶ LineComment ──\n──▶ Code
//!   Code ──/*─▶ BlockComment ──*/──▶ Code (not nested, like the lexer)
//! ```
//!
//! The state survives line ends, so a string or block comment may span lines. Input that is
//! not valid Cypher is never rejected here: the splitter only cuts, the engine reports errors.
//!
//! POSITIONS
//! =========
//! Each [`Statement`] records the line and column (1-based, columns in characters) of its
//! first character in the whole input, so an error at (line l, column c) *of the statement*
//! maps back to the input: line `origin.line + l - 1`, and on the statement's first line
//! column `origin.column + c - 1`. A statement's text starts at its first character that is
//! neither blank nor in a comment (so `// note` + `BEGIN;` is the `BEGIN` command, which the
//! connection recognises only as the whole statement) and ends before its `;`.
//!
//! A statement that is only blanks and comments (`;;`, `// note` + `;`) is dropped. Whether
//! anything *significant* is pending tells the shell whether a line starting with `:` is a
//! shell command (nothing pending) or part of a statement.

/// Where a statement starts in the input (1-based; column in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl Position {
    /// The input position of `(line, column)` relative to text that starts here.
    pub fn offset_by(self, line: u32, column: u32) -> Position {
        if line <= 1 {
            Position {
                line: self.line,
                column: self.column.saturating_add(column.saturating_sub(1)),
            }
        } else {
            Position {
                line: self.line.saturating_add(line - 1),
                column,
            }
        }
    }
}

/// One complete statement, without its terminating `;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub text: String,
    pub origin: Position,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Code,
    Single { escaped: bool },
    Double { escaped: bool },
    Backtick,
    LineComment,
    BlockComment,
}

/// Cuts lines into statements (see the module doc).
#[derive(Debug)]
pub struct Splitter {
    state: State,
    /// Text of the statement being read, from its first significant character.
    pending: String,
    origin: Position,
    /// Whether `pending` holds anything besides blanks and comments.
    significant: bool,
    /// Lines pushed so far.
    lines: u32,
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter {
            state: State::Code,
            pending: String::new(),
            origin: Position { line: 1, column: 1 },
            significant: false,
            lines: 0,
        }
    }
}

impl Splitter {
    /// Whether a statement has begun (something besides blanks and comments since the last
    /// `;`); a line starting with `:` is a shell command only when this is false.
    pub fn is_pending(&self) -> bool {
        self.significant
    }

    /// The number of the next line [`Splitter::push_line`] will read (1-based).
    pub fn next_line(&self) -> u32 {
        self.lines.saturating_add(1)
    }

    /// Bytes of the statement being read (to bound it).
    pub fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    /// Drops the statement being read (Ctrl-C, or one too long).
    pub fn discard(&mut self) {
        self.pending.clear();
        self.significant = false;
        self.state = State::Code;
    }

    /// Skips one line of input (a shell command) without reading it, so later positions stay
    /// right. Ends an unclosed block comment; call it only when nothing is pending.
    pub fn skip_line(&mut self) {
        debug_assert!(!self.significant, "skipping a line inside a statement");
        self.lines = self.lines.saturating_add(1);
        self.discard();
    }

    /// Reads one line (without its line end) and returns the statements it completes.
    pub fn push_line(&mut self, line: &str) -> Vec<Statement> {
        self.lines = self.lines.saturating_add(1);
        let mut done = Vec::new();
        let mut chars = line.chars().chain(std::iter::once('\n')).peekable();
        let mut column: u32 = 0;
        while let Some(ch) = chars.next() {
            column = column.saturating_add(1);
            let next = chars.peek().copied();
            let mut consumed_next = false;
            self.state = match (self.state, ch) {
                (State::Code, ';') => {
                    if let Some(statement) = self.take() {
                        done.push(statement);
                    }
                    continue;
                }
                (State::Code, '\'') => State::Single { escaped: false },
                (State::Code, '"') => State::Double { escaped: false },
                (State::Code, '`') => State::Backtick,
                (State::Code, '/') if next == Some('/') => {
                    consumed_next = true;
                    State::LineComment
                }
                (State::Code, '/') if next == Some('*') => {
                    consumed_next = true;
                    State::BlockComment
                }
                (State::Code, _) => State::Code,
                (State::Single { escaped: false }, '\'')
                | (State::Double { escaped: false }, '"')
                | (State::Backtick, '`')
                | (State::LineComment, '\n') => State::Code,
                (State::Single { escaped }, c) => State::Single {
                    escaped: !escaped && c == '\\',
                },
                (State::Double { escaped }, c) => State::Double {
                    escaped: !escaped && c == '\\',
                },
                (State::BlockComment, '*') if next == Some('/') => {
                    consumed_next = true;
                    State::Code
                }
                (state, _) => state,
            };
            let in_comment = matches!(self.state, State::LineComment | State::BlockComment)
                || (consumed_next && self.state == State::Code);
            if !self.significant && !in_comment && !ch.is_whitespace() {
                self.significant = true;
                self.origin = Position {
                    line: self.lines,
                    column,
                };
            }
            // Blanks and comments before a statement are not part of it.
            if self.significant {
                self.pending.push(ch);
            }
            if consumed_next && let Some(second) = chars.next() {
                column = column.saturating_add(1);
                if self.significant {
                    self.pending.push(second);
                }
            }
        }
        done
    }

    /// Ends the input: the pending statement, if it has anything significant (a last statement
    /// without `;`).
    pub fn finish(&mut self) -> Option<Statement> {
        self.state = State::Code;
        self.take()
    }

    /// Takes the pending text as a statement; `None` if it is only blanks and comments.
    fn take(&mut self) -> Option<Statement> {
        let text = std::mem::take(&mut self.pending);
        let significant = std::mem::replace(&mut self.significant, false);
        significant.then(|| Statement {
            text: text.trim_end().to_string(),
            origin: self.origin,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn split(input: &str) -> Vec<(String, u32, u32)> {
        let mut splitter = Splitter::default();
        let mut out = Vec::new();
        for line in input.split('\n') {
            out.extend(splitter.push_line(line));
        }
        out.extend(splitter.finish());
        out.into_iter()
            .map(|s| (s.text, s.origin.line, s.origin.column))
            .collect()
    }

    fn texts(input: &str) -> Vec<String> {
        split(input).into_iter().map(|s| s.0).collect()
    }

    #[test]
    fn splits_at_semicolons_with_positions() {
        assert_eq!(
            split("RETURN 1; RETURN 2;\n  MATCH (n)\n  RETURN n;"),
            vec![
                ("RETURN 1".into(), 1, 1),
                ("RETURN 2".into(), 1, 11),
                ("MATCH (n)\n  RETURN n".into(), 2, 3),
            ]
        );
    }

    #[test]
    fn semicolons_in_strings_identifiers_and_comments_do_not_split() {
        assert_eq!(
            texts("RETURN 'a;b', \"c;d\", 'it\\'s;', `x;y`;RETURN 2;"),
            ["RETURN 'a;b', \"c;d\", 'it\\'s;', `x;y`", "RETURN 2"]
        );
        assert_eq!(
            texts("RETURN 1 // no; split\n + 1; /* nor;\n here; */ RETURN 3;"),
            ["RETURN 1 // no; split\n + 1", "RETURN 3"]
        );
        assert_eq!(
            texts("RETURN 'a\\\\';RETURN 2;"),
            ["RETURN 'a\\\\'", "RETURN 2"]
        );
    }

    #[test]
    fn strings_span_lines() {
        assert_eq!(texts("RETURN 'a;\nb';"), ["RETURN 'a;\nb'"]);
    }

    #[test]
    fn blank_and_comment_only_statements_are_dropped() {
        assert_eq!(texts(";; // note\n;/* x */;  "), Vec::<String>::new());
        let mut splitter = Splitter::default();
        splitter.push_line("// a comment");
        assert!(!splitter.is_pending());
        splitter.push_line("MATCH (n)");
        assert!(splitter.is_pending());
    }

    #[test]
    fn last_statement_without_semicolon_is_finished() {
        assert_eq!(texts("RETURN 1;\nRETURN 2"), ["RETURN 1", "RETURN 2"]);
    }

    #[test]
    fn positions_map_back_to_the_input() {
        let origin = Position { line: 3, column: 5 };
        assert_eq!(origin.offset_by(1, 4), Position { line: 3, column: 8 });
        assert_eq!(origin.offset_by(2, 4), Position { line: 4, column: 4 });
    }

    #[test]
    fn leading_comments_are_not_part_of_the_statement() {
        assert_eq!(
            split("// note; here\n/* and */ BEGIN;"),
            vec![("BEGIN".into(), 2, 11)]
        );
    }

    #[test]
    fn skipped_lines_count() {
        let mut splitter = Splitter::default();
        splitter.skip_line();
        let statements = splitter.push_line("  RETURN 1;");
        assert_eq!(statements[0].origin, Position { line: 2, column: 3 });
    }

    proptest! {
        #[test]
        fn never_panics(input in "[a-z ;'\"`/*\\\\\n\u{e9}]{0,80}") {
            let _ = split(&input);
        }

        /// Without quotes or comments, splitting is `str::split(';')` minus blank pieces.
        #[test]
        fn plain_code_splits_like_str_split(input in "[a-z (){}\n;]{0,80}") {
            let expected: Vec<String> = input
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            prop_assert_eq!(texts(&input), expected);
        }

        /// A `;` inside a string literal never splits.
        #[test]
        fn strings_hold_semicolons(items in proptest::collection::vec("[a-z;]{0,8}", 1..5)) {
            let input: String = items.iter().map(|s| format!("RETURN '{s}';")).collect();
            let expected: Vec<String> = items.iter().map(|s| format!("RETURN '{s}'")).collect();
            prop_assert_eq!(texts(&input), expected);
        }
    }
}
