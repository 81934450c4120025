//! Attached graphs: mounting a graph kept in files so that statements can read it.
//!
//! ```text
//!   graph  = ATTACH format string AS name [';']     format: GRAPHAR (checked when it runs)
//!          | DETACH GRAPH name [';']
//!          | SHOW GRAPHS [';']
//!   statement = [EXPLAIN | PROFILE] [USE name] query       (see `parse_statement`)
//! ```
//!
//! No Cypher clause starts with `ATTACH` or `DETACH` (`DETACH DELETE` follows a `MATCH`), so
//! the first words tell these commands apart. The format is kept as written and checked by
//! the connection, which knows which formats are registered; the file is a string literal.

use super::{Parser, Result};
use crate::ast::{GraphCommand, StringLiteral};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// Whether the text is a graph command (see the module doc).
    pub(super) fn at_graph_command(&self) -> bool {
        self.keyword_at(0, "ATTACH")
            || (self.keyword_at(0, "DETACH") && self.keyword_at(1, "GRAPH"))
            || (self.keyword_at(0, "SHOW") && self.keyword_at(1, "GRAPHS"))
    }

    pub(super) fn parse_graph_command(&mut self) -> Result<GraphCommand> {
        let command = if self.eat_keyword("ATTACH") {
            let format = self.parse_name("a graph format (GRAPHAR)")?;
            let token = self.peek().clone();
            let TokenKind::String(value) = token.kind else {
                return Err(self.unexpected("the graph's file as a string literal"));
            };
            self.advance();
            let file = StringLiteral {
                value,
                span: token.span,
            };
            self.expect_keyword("AS")?;
            let name = self.parse_name("a name for the graph")?;
            GraphCommand::Attach { format, file, name }
        } else if self.eat_keyword("DETACH") {
            self.expect_keyword("GRAPH")?;
            let name = self.parse_name("the name of an attached graph")?;
            GraphCommand::Detach { name }
        } else {
            self.expect_keyword("SHOW")?;
            self.expect_keyword("GRAPHS")?;
            GraphCommand::Show
        };
        self.expect_statement_end("end of input")?;
        Ok(command)
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::{Command, GraphCommand};
    use crate::parse_command;

    #[test]
    fn attach_detach_show() {
        let Ok(Command::Graph(GraphCommand::Attach { format, file, name })) =
            parse_command("ATTACH GRAPHAR '/data/g.graph.yml' AS lake;")
        else {
            panic!("not an attach");
        };
        assert_eq!(
            (
                format.name.as_str(),
                file.value.as_str(),
                name.name.as_str()
            ),
            ("GRAPHAR", "/data/g.graph.yml", "lake")
        );
        assert!(matches!(
            parse_command("DETACH GRAPH `my lake`"),
            Ok(Command::Graph(GraphCommand::Detach { name })) if name.name == "my lake"
        ));
        assert!(matches!(
            parse_command("show graphs"),
            Ok(Command::Graph(GraphCommand::Show))
        ));
    }

    #[test]
    fn use_names_the_graph_of_a_statement() {
        let Ok(Command::Query(statement)) =
            parse_command("PROFILE USE lake MATCH (n) RETURN count(*)")
        else {
            panic!("not a query");
        };
        assert_eq!(statement.graph.map(|g| g.name), Some("lake".to_string()));
        let Ok(Command::Query(statement)) = parse_command("USE lake MATCH (n) RETURN n") else {
            panic!("not a query");
        };
        assert_eq!(statement.to_string(), "USE lake MATCH (n) RETURN n");
    }

    #[test]
    fn malformed_commands_say_what_was_expected() {
        let error = |text: &str| parse_command(text).unwrap_err().to_string();
        assert!(
            error("ATTACH GRAPHAR lake").contains("string literal"),
            "{}",
            error("ATTACH GRAPHAR lake")
        );
        assert!(error("ATTACH GRAPHAR 'g.yml'").contains("AS"));
        assert!(error("ATTACH GRAPHAR 'g.yml' AS").contains("a name for the graph"));
        assert!(error("DETACH GRAPH").contains("attached graph"));
        assert!(error("SHOW GRAPHS now").contains("end of input"));
        assert!(error("USE MATCH (n) RETURN n").contains("attached graph"));
        let e = parse_command("ATTACH GRAPHAR 'g.yml' AS lake extra").unwrap_err();
        assert_eq!((e.span.line, e.span.column), (1, 32));
    }
}
