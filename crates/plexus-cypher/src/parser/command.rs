//! One parse for everything a connection accepts: [`parse_command`].
//!
//! ```text
//!   command     = transaction | schema | session | statement
//!   transaction = (BEGIN | COMMIT | ROLLBACK) [';']
//!   schema      = see `schema`   (CREATE INDEX, DROP INDEX, SHOW INDEXES)
//!   table       = see `table`    (CREATE NODE|REL TABLE, DROP TABLE, SHOW TABLES,
//!                                 CREATE|DROP|SHOW CONSTRAINT…)
//!   session     = see `session`  (SET SESSION|NEXT|GLOBAL …, SHOW TRANSACTION …, SHOW SETTINGS)
//!   copy        = see `copy`     (COPY Table FROM 'file' (options))
//!   graph       = see `graph`    (ATTACH GRAPHAR 'file' AS name, DETACH GRAPH name, SHOW GRAPHS)
//!   statement   = [EXPLAIN | PROFILE] [USE name] query      (see `parse`)
//! ```
//!
//! The text is tokenized once and the kind of command is told from its first tokens, so no
//! layer above (the connection, the Bolt session) looks at query text again. A lexical error is
//! reported as for a query. The first words decide: `BEGIN` alone is a transaction command
//! (`BEGIN` followed by anything else is not Cypher and fails as a query would), `CREATE INDEX`
//! a schema command, `CREATE NODE TABLE` or `CREATE CONSTRAINT` a table command, `SET SESSION
//! x …` a session command, everything else a statement.

use super::{Parser, Result};
use crate::ast::{Command, TransactionCommand};
use crate::error::ParseError;
use crate::lexer::{TokenKind, tokenize};

/// Parses one command of any kind (see the module doc).
pub fn parse_command(text: &str) -> std::result::Result<Command, ParseError> {
    let tokens = tokenize(text)?;
    let mut parser = Parser::new(text, tokens);
    parser.parse_command()
}

impl Parser<'_> {
    fn parse_command(&mut self) -> Result<Command> {
        if let Some(command) = self.transaction_command() {
            return Ok(Command::Transaction(command));
        }
        if self.at_schema_command() {
            return self.parse_schema_command().map(Command::Schema);
        }
        if self.at_table_command() {
            return self.parse_table_command().map(Command::Table);
        }
        if self.at_copy_command() {
            return self.parse_copy_command().map(Command::Copy);
        }
        if self.at_graph_command() {
            return self.parse_graph_command().map(Command::Graph);
        }
        if self.at_session_command() {
            return self.parse_session_command().map(Command::Session);
        }
        self.parse_statement().map(Command::Query)
    }

    /// `BEGIN`, `COMMIT` or `ROLLBACK` as the whole text (a `;` may follow).
    fn transaction_command(&self) -> Option<TransactionCommand> {
        let ends = match self.kind_at(1) {
            TokenKind::Eof => true,
            TokenKind::Semicolon => self.kind_at(2) == &TokenKind::Eof,
            _ => false,
        };
        if !ends {
            return None;
        }
        [
            ("BEGIN", TransactionCommand::Begin),
            ("COMMIT", TransactionCommand::Commit),
            ("ROLLBACK", TransactionCommand::Rollback),
        ]
        .into_iter()
        .find(|(word, _)| self.keyword_at(0, word))
        .map(|(_, command)| command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{SchemaCommand, SessionCommand};

    #[test]
    fn each_kind_is_told_from_its_first_words() {
        let kind = |text: &str| match parse_command(text) {
            Ok(Command::Transaction(_)) => "transaction",
            Ok(Command::Schema(_)) => "schema",
            Ok(Command::Table(_)) => "table",
            Ok(Command::Session(_)) => "session",
            Ok(Command::Query(_)) => "query",
            Ok(Command::Copy(_)) => "copy",
            Ok(Command::Graph(_)) => "graph",
            Err(e) => panic!("{text}: {e}"),
        };
        assert_eq!(kind("begin"), "transaction");
        assert_eq!(kind(" COMMIT ; "), "transaction");
        assert_eq!(kind("Rollback"), "transaction");
        assert_eq!(kind("CREATE INDEX FOR (n:L) ON (n.p)"), "schema");
        assert_eq!(kind("SHOW INDEXES"), "schema");
        assert_eq!(
            kind("CREATE NODE TABLE T(id INT64, PRIMARY KEY (id))"),
            "table"
        );
        assert_eq!(kind("SHOW TABLES"), "table");
        assert_eq!(
            kind("CREATE CONSTRAINT FOR (p:P) REQUIRE p.id IS UNIQUE"),
            "table"
        );
        assert_eq!(kind("CREATE (node:TABLE)"), "query");
        assert_eq!(
            kind("SET SESSION TRANSACTION ISOLATION LEVEL SNAPSHOT"),
            "session"
        );
        assert_eq!(kind("SHOW SETTINGS"), "session");
        assert_eq!(kind("COPY Person FROM 'p.csv'"), "copy");
        assert_eq!(kind("ATTACH GRAPHAR 'g.graph.yml' AS lake"), "graph");
        assert_eq!(kind("detach graph lake;"), "graph");
        assert_eq!(kind("SHOW GRAPHS"), "graph");
        assert_eq!(kind("USE lake MATCH (n) RETURN n"), "query");
        assert_eq!(kind("MATCH (attach) DETACH DELETE attach"), "query");
        assert_eq!(kind("MATCH (begin) RETURN begin"), "query");
        assert_eq!(kind("EXPLAIN MATCH (n) SET n.session = 1"), "query");
        assert!(matches!(
            parse_command("SHOW INDEX"),
            Ok(Command::Schema(SchemaCommand::ShowIndexes))
        ));
        assert!(matches!(
            parse_command("SHOW TRANSACTION ISOLATION LEVEL;"),
            Ok(Command::Session(SessionCommand::ShowIsolation))
        ));
    }

    #[test]
    fn errors_keep_their_positions() {
        // BEGIN followed by more is not a transaction command; it fails as a query.
        let e = parse_command("BEGIN; RETURN 1").unwrap_err();
        assert_eq!((e.span.line, e.span.column), (1, 1));
        let e = parse_command("RETURN 'open").unwrap_err();
        assert!(e.to_string().contains("unterminated string"), "{e}");
        let e = parse_command("DROP INDEX").unwrap_err();
        assert!(e.to_string().contains("an index name"), "{e}");
    }
}
