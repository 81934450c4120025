//! `COPY … FROM`: Kùzu's bulk load into a declared table.
//!
//! ```text
//!   copy   = COPY Name FROM string ['(' option {',' option} ')'] [';']
//!   option = name ['='] (string | TRUE | FALSE)
//! ```
//!
//! `COPY` starts no Cypher clause, so a text whose first word is `COPY` is this command. The
//! options are Kùzu's, in any case, with or without `=` (`(HEADER true, DELIM '|')` and
//! `(header=true, delim="|")` are the same): `HEADER` and `IGNORE_ERRORS` take a boolean,
//! `DELIM` (or `DELIMITER`), `QUOTE` and `ESCAPE` one character, `FORMAT` `'csv'` or
//! `'parquet'`. An unknown option, a value of the wrong kind, a delimiter of two characters,
//! an unknown format or an option given twice is a syntax error at that option. What the
//! table and the file are is checked when the command runs (`plexus::copy_command`).

use super::{Parser, Result};
use crate::ast::{CopyFrom, CopyOption, CopyOptionValue, StringLiteral};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// Whether the text is a `COPY` command (see the module doc).
    pub(super) fn at_copy_command(&self) -> bool {
        self.keyword_at(0, "COPY")
    }

    pub(super) fn parse_copy_command(&mut self) -> Result<CopyFrom> {
        self.expect_keyword("COPY")?;
        let table = self.parse_name("a table name")?;
        self.expect_keyword("FROM")?;
        let token = self.peek().clone();
        let TokenKind::String(value) = token.kind else {
            return Err(self.unexpected("a file name as a string literal"));
        };
        self.advance();
        let file = StringLiteral {
            value,
            span: token.span,
        };
        let mut options: Vec<CopyOption> = Vec::new();
        if self.eat(&TokenKind::LParen) {
            loop {
                let option = self.parse_copy_option()?;
                if options.iter().any(|o| o.name == option.name) {
                    return Err(invalid(
                        "each option once",
                        format!("a second {}", option.name),
                        option.span,
                    ));
                }
                options.push(option);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RParen)?;
        }
        self.expect_statement_end("'(' with options, or end of input")?;
        Ok(CopyFrom {
            table,
            file,
            options,
        })
    }

    fn parse_copy_option(&mut self) -> Result<CopyOption> {
        let names = || {
            let names: Vec<&str> = CopyOption::NAMES.iter().map(|(n, _)| *n).collect();
            format!("a COPY option ({})", names.join(", "))
        };
        let name = self.parse_name(&names())?;
        let upper = match name.name.to_ascii_uppercase() {
            delimiter if delimiter == "DELIMITER" => "DELIM".to_string(),
            upper => upper,
        };
        let Some(&(_, boolean)) = CopyOption::NAMES.iter().find(|(n, _)| *n == upper) else {
            return Err(invalid(&names(), format!("'{}'", name.name), name.span));
        };
        self.eat(&TokenKind::Eq);
        let token = self.peek().clone();
        let value = match &token.kind {
            TokenKind::Ident(word) if boolean && word.eq_ignore_ascii_case("true") => {
                CopyOptionValue::Bool(true)
            }
            TokenKind::Ident(word) if boolean && word.eq_ignore_ascii_case("false") => {
                CopyOptionValue::Bool(false)
            }
            TokenKind::String(text) if !boolean => CopyOptionValue::String(text.clone()),
            _ => {
                let kind = if boolean { "true or false" } else { "a string" };
                return Err(self.unexpected(&format!("{kind} after {upper}")));
            }
        };
        self.advance();
        let span = name.span.to(token.span);
        if let CopyOptionValue::String(text) = &value {
            match upper.as_str() {
                "FORMAT" if !["csv", "parquet"].contains(&text.to_ascii_lowercase().as_str()) => {
                    return Err(invalid(
                        "'csv' or 'parquet'",
                        format!("'{text}'"),
                        token.span,
                    ));
                }
                "DELIM" | "QUOTE" | "ESCAPE" if text.chars().count() != 1 => {
                    return Err(invalid(
                        &format!("one character after {upper}"),
                        format!("{text:?}"),
                        token.span,
                    ));
                }
                _ => {}
            }
        }
        Ok(CopyOption {
            name: upper,
            value,
            span,
        })
    }
}

fn invalid(expected: &str, found: String, span: crate::ast::Span) -> ParseError {
    ParseError::new(
        ParseErrorKind::Unexpected {
            expected: expected.to_string(),
            found,
        },
        span,
    )
}

#[cfg(test)]
mod tests {
    use crate::ast::{Command, CopyFrom, CopyOptionValue};
    use crate::error::ParseError;

    fn copy(text: &str) -> std::result::Result<CopyFrom, ParseError> {
        match crate::parse_command(text)? {
            Command::Copy(copy) => Ok(copy),
            other => panic!("{text}: not a COPY command: {other:?}"),
        }
    }

    #[test]
    fn options_are_kuzu_s_with_or_without_equals() {
        for text in [
            "COPY Person FROM 'p.csv' (HEADER true, DELIM '|', IGNORE_ERRORS false)",
            "copy Person from \"p.csv\" (header=TRUE, delimiter=\"|\", ignore_errors = false);",
        ] {
            let parsed = copy(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(parsed.table.name, "Person");
            assert_eq!(parsed.file.value, "p.csv");
            let options: Vec<(&str, &CopyOptionValue)> = (parsed.options.iter())
                .map(|o| (o.name.as_str(), &o.value))
                .collect();
            assert_eq!(
                options,
                [
                    ("HEADER", &CopyOptionValue::Bool(true)),
                    ("DELIM", &CopyOptionValue::String("|".into())),
                    ("IGNORE_ERRORS", &CopyOptionValue::Bool(false)),
                ]
            );
        }
        assert!(
            copy("COPY Knows FROM 'k.parquet'")
                .unwrap()
                .options
                .is_empty()
        );
    }

    #[test]
    fn bad_options_are_errors_at_the_option() {
        let cases = [
            (
                "COPY P FROM 'p.csv' (HEADERS true)",
                "HEADERS",
                "a COPY option",
            ),
            (
                "COPY P FROM 'p.csv' (HEADER 'yes')",
                "'yes'",
                "true or false",
            ),
            ("COPY P FROM 'p.csv' (DELIM true)", "true)", "a string"),
            ("COPY P FROM 'p.csv' (DELIM '||')", "'||'", "one character"),
            (
                "COPY P FROM 'p.csv' (FORMAT 'json')",
                "'json'",
                "'csv' or 'parquet'",
            ),
            (
                "COPY P FROM 'p.csv' (HEADER true, header false)",
                "header false",
                "each option once",
            ),
            ("COPY P FROM p.csv", "p.csv", "a file name"),
            ("COPY P FROM 'p.csv' HEADER", "HEADER", "'(' with options"),
        ];
        for (text, at, expected) in cases {
            let error = copy(text).expect_err(text);
            assert_eq!(error.span.start, text.find(at).unwrap(), "{text}: {error}");
            assert!(error.to_string().contains(expected), "{text}: {error}");
        }
    }
}
