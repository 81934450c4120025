//! Session commands: the isolation level, per-session settings, and the listings of what a
//! session can call (functions, procedures).
//!
//! ```text
//!   set_isolation  = SET (SESSION | NEXT | GLOBAL) TRANSACTION ISOLATION LEVEL level
//!   level          = SERIALIZABLE | SNAPSHOT [ISOLATION]
//!   set_setting    = SET SESSION name ('=' | TO) value
//!   value          = string | ['-'] number | word
//!   show_isolation = SHOW TRANSACTION ISOLATION LEVEL
//!   show_settings  = SHOW SETTINGS
//!   show_functions = SHOW [ALL | BUILT IN | USER DEFINED] (FUNCTION | FUNCTIONS)
//!   show_procs     = SHOW [ALL] (PROCEDURE | PROCEDURES)
//! ```
//!
//! `SET SESSION TRANSACTION …` and `SET NEXT TRANSACTION …` are the forms Memgraph users know;
//! `SET GLOBAL …` parses so that the connection can say why it is refused (the server-wide
//! default is fixed at start-up). Like the index commands, these are not queries:
//! [`parse_command`](super::parse_command) recognises them by their first words. The words
//! cannot start a Cypher `SET` clause: there `SET x` is followed by `.`, `:`, `=` or `+=`,
//! never by a second word.
//!
//! Levels Plexus does not implement (`READ COMMITTED`, `REPEATABLE READ`, …) are errors at the
//! level's position that name the two it has.

use super::{Parser, Result};
use crate::ast::{IsolationName, IsolationScope, SessionCommand, SettingValue};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// Whether the text starts as a session command (see the module doc).
    pub(super) fn at_session_command(&self) -> bool {
        let set = self.keyword_at(0, "SET")
            && ["SESSION", "NEXT", "GLOBAL"]
                .iter()
                .any(|scope| self.keyword_at(1, scope))
            && matches!(self.kind_at(2), TokenKind::Ident(_));
        const ROUTINES: [&str; 4] = ["FUNCTION", "FUNCTIONS", "PROCEDURE", "PROCEDURES"];
        let routines_at = |i: usize| ROUTINES.iter().any(|word| self.keyword_at(i, word));
        let show = self.keyword_at(0, "SHOW")
            && (self.keyword_at(1, "TRANSACTION")
                || self.keyword_at(1, "SETTINGS")
                || routines_at(1)
                || (self.keyword_at(1, "ALL") && routines_at(2))
                || (self.keyword_at(1, "BUILT") && self.keyword_at(2, "IN"))
                || (self.keyword_at(1, "USER") && self.keyword_at(2, "DEFINED")));
        set || show
    }

    /// After SHOW: `[ALL | BUILT IN | USER DEFINED] FUNCTION[S]` or `[ALL] PROCEDURE[S]`.
    fn parse_show_routines(&mut self) -> Result<SessionCommand> {
        let mut user_defined = false;
        let mut functions_only = false;
        if self.eat_keyword("BUILT") {
            self.expect_keyword("IN")?;
            functions_only = true;
        } else if self.eat_keyword("USER") {
            self.expect_keyword("DEFINED")?;
            user_defined = true;
            functions_only = true;
        } else {
            self.eat_keyword("ALL");
        }
        if self.eat_keyword("FUNCTIONS") || self.eat_keyword("FUNCTION") {
            return Ok(SessionCommand::ShowFunctions { user_defined });
        }
        if !functions_only && (self.eat_keyword("PROCEDURES") || self.eat_keyword("PROCEDURE")) {
            return Ok(SessionCommand::ShowProcedures);
        }
        Err(self.unexpected(if functions_only {
            "FUNCTIONS"
        } else {
            "FUNCTIONS or PROCEDURES"
        }))
    }

    pub(super) fn parse_session_command(&mut self) -> Result<SessionCommand> {
        let start = self.peek().span;
        let command = if self.eat_keyword("SHOW") {
            if self.eat_keyword("SETTINGS") {
                SessionCommand::ShowSettings
            } else if !self.at_keyword("TRANSACTION") {
                self.parse_show_routines()?
            } else {
                self.expect_keyword("TRANSACTION")?;
                self.expect_keyword("ISOLATION")?;
                self.expect_keyword("LEVEL")?;
                SessionCommand::ShowIsolation
            }
        } else {
            self.expect_keyword("SET")?;
            let scope = if self.eat_keyword("SESSION") {
                IsolationScope::Session
            } else if self.eat_keyword("NEXT") {
                IsolationScope::Next
            } else {
                self.expect_keyword("GLOBAL")?;
                IsolationScope::Global
            };
            let isolation = self.at_keyword("TRANSACTION")
                && (scope != IsolationScope::Session || self.keyword_at(1, "ISOLATION"));
            if isolation {
                self.expect_keyword("TRANSACTION")?;
                self.expect_keyword("ISOLATION")?;
                self.expect_keyword("LEVEL")?;
                let level = self.parse_isolation_name()?;
                SessionCommand::SetIsolation {
                    scope,
                    level,
                    span: self.span_from(start),
                }
            } else if scope == IsolationScope::Session {
                let name = self.parse_name("a setting name or TRANSACTION")?;
                if !self.eat(&TokenKind::Eq) && !self.eat_keyword("TO") {
                    return Err(self.unexpected("'=' or TO"));
                }
                let value = self.parse_setting_value()?;
                SessionCommand::SetSetting { name, value }
            } else {
                return Err(self.unexpected("TRANSACTION"));
            }
        };
        self.expect_statement_end("end of input")?;
        Ok(command)
    }

    fn parse_isolation_name(&mut self) -> Result<IsolationName> {
        if self.eat_keyword("SERIALIZABLE") {
            return Ok(IsolationName::Serializable);
        }
        if self.eat_keyword("SNAPSHOT") {
            self.eat_keyword("ISOLATION");
            return Ok(IsolationName::Snapshot);
        }
        let token = self.peek();
        let found = match &token.kind {
            TokenKind::Ident(word) => {
                let mut words = word.to_ascii_uppercase();
                if let TokenKind::Ident(next) = self.kind_at(1) {
                    words = format!("{words} {}", next.to_ascii_uppercase());
                }
                format!("'{words}' (Plexus implements SNAPSHOT and SERIALIZABLE)")
            }
            other => other.describe(),
        };
        Err(ParseError::new(
            ParseErrorKind::Unexpected {
                expected: "an isolation level: SERIALIZABLE or SNAPSHOT [ISOLATION]".into(),
                found,
            },
            token.span,
        ))
    }

    /// A literal as written (strings unquoted): the registry parses it by the setting's type.
    fn parse_setting_value(&mut self) -> Result<SettingValue> {
        let start = self.peek().span;
        let negative = self.eat(&TokenKind::Minus);
        let token = self.peek().clone();
        let text = match &token.kind {
            TokenKind::String(text) if !negative => text.clone(),
            TokenKind::Ident(word) if !negative => word.clone(),
            TokenKind::Integer(_) | TokenKind::Float(_) => {
                self.source[start.start..token.span.end].to_string()
            }
            _ => return Err(self.unexpected("a setting value (a string, number or word)")),
        };
        self.advance();
        Ok(SettingValue {
            text,
            span: self.span_from(start),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The session command `query` parses to; `None` if it is another kind of command.
    fn parse_session_command(
        query: &str,
    ) -> Option<std::result::Result<SessionCommand, ParseError>> {
        match crate::parse_command(query) {
            Ok(crate::ast::Command::Session(command)) => Some(Ok(command)),
            Ok(_) => None,
            Err(error) => Some(Err(error)),
        }
    }

    fn command(query: &str) -> SessionCommand {
        parse_session_command(query)
            .unwrap_or_else(|| panic!("{query}: not a session command"))
            .unwrap_or_else(|e| panic!("{query}: {e}"))
    }

    fn error(query: &str) -> ParseError {
        match parse_session_command(query) {
            Some(Err(error)) => error,
            other => panic!("{query}: expected an error, got {other:?}"),
        }
    }

    fn isolation(query: &str) -> (IsolationScope, IsolationName) {
        match command(query) {
            SessionCommand::SetIsolation { scope, level, .. } => (scope, level),
            other => panic!("{query}: {other:?}"),
        }
    }

    #[test]
    fn isolation_levels_in_every_scope_and_case() {
        use IsolationName::*;
        use IsolationScope::*;
        let cases = [
            (
                "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                (Session, Serializable),
            ),
            (
                "set session transaction isolation level snapshot isolation;",
                (Session, Snapshot),
            ),
            (
                "SET NEXT TRANSACTION ISOLATION LEVEL SNAPSHOT",
                (Next, Snapshot),
            ),
            (
                "SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                (Global, Serializable),
            ),
        ];
        for (query, expected) in cases {
            assert_eq!(isolation(query), expected, "{query}");
        }
        assert_eq!(
            command("SHOW TRANSACTION ISOLATION LEVEL"),
            SessionCommand::ShowIsolation
        );
        assert_eq!(command("show settings;"), SessionCommand::ShowSettings);
        let functions = SessionCommand::ShowFunctions {
            user_defined: false,
        };
        assert_eq!(command("SHOW FUNCTIONS"), functions);
        assert_eq!(command("show all function"), functions);
        assert_eq!(command("SHOW BUILT IN FUNCTIONS"), functions);
        assert_eq!(
            command("SHOW USER DEFINED FUNCTIONS"),
            SessionCommand::ShowFunctions { user_defined: true }
        );
        assert_eq!(command("SHOW PROCEDURES;"), SessionCommand::ShowProcedures);
        assert_eq!(
            command("show all procedure"),
            SessionCommand::ShowProcedures
        );
    }

    #[test]
    fn unknown_levels_are_errors_at_their_position() {
        let e = error("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
        assert_eq!((e.span.line, e.span.column), (1, 41));
        let text = e.to_string();
        assert!(text.contains("'READ COMMITTED'"), "{text}");
        assert!(text.contains("SERIALIZABLE or SNAPSHOT"), "{text}");
        let e = error("SET NEXT TRANSACTION ISOLATION LEVEL\n  42");
        assert_eq!((e.span.line, e.span.column), (2, 3));
        let e = error("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE extra");
        assert!(e.to_string().contains("end of input"), "{e}");
    }

    #[test]
    fn routine_listings_refuse_what_they_do_not_list() {
        let e = error("SHOW BUILT IN PROCEDURES");
        assert_eq!((e.span.line, e.span.column), (1, 15));
        assert!(e.to_string().contains("FUNCTIONS"), "{e}");
        let e = error("SHOW FUNCTIONS YIELD name");
        assert_eq!((e.span.line, e.span.column), (1, 16));
    }

    #[test]
    fn session_settings_keep_their_text() {
        let value = |query: &str| match command(query) {
            SessionCommand::SetSetting { name, value } => (name.name, value.text),
            other => panic!("{query}: {other:?}"),
        };
        assert_eq!(
            value("SET SESSION query_threads = 4"),
            ("query_threads".into(), "4".into())
        );
        assert_eq!(
            value("SET SESSION transaction_isolation TO 'serializable'"),
            ("transaction_isolation".into(), "serializable".into())
        );
        assert_eq!(value("SET SESSION x = -1.5"), ("x".into(), "-1.5".into()));
        assert_eq!(value("SET SESSION x TO on"), ("x".into(), "on".into()));
        let e = error("SET SESSION query_threads 4");
        assert!(e.to_string().contains("'=' or TO"), "{e}");
        assert_eq!(e.span.column, 27);
        let e = error("SET NEXT query_threads = 4");
        assert!(e.to_string().contains("TRANSACTION"), "{e}");
    }

    #[test]
    fn cypher_set_clauses_are_not_session_commands() {
        for query in [
            "SET n.x = 1",
            "SET session.x = 1",
            "SET session = {a: 1}",
            "SET next:Label",
            "SET global += {a: 1}",
            "SHOW INDEXES",
            "MATCH (n) SET n.session = 1",
        ] {
            assert!(parse_session_command(query).is_none(), "{query}");
        }
    }
}
