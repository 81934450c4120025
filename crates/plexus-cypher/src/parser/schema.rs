//! Index commands: `CREATE INDEX`, `DROP INDEX`, `SHOW INDEXES` (Neo4j 5 syntax).
//!
//! ```text
//!   create_index = CREATE INDEX [name] [IF NOT EXISTS] FOR (node | relationship)
//!                  ON '(' var '.' property ')'
//!   node         = '(' var ':' Label ')'
//!   relationship = '(' ')' ['<'] '-' '[' var ':' TYPE ']' '-' ['>'] '(' ')'
//!   drop_index   = DROP INDEX name [IF EXISTS]
//!   show_indexes = SHOW (INDEX | INDEXES)
//! ```
//!
//! They are not queries: [`parse_command`](super::parse_command) recognises them by their first
//! two words; anything else is a session command or a query. The variable
//! in `ON` must be the one bound in `FOR`. `name` is any word but `IF` or `FOR` (which start
//! the next part); backquote it to use those. A relationship pattern may point either way or
//! not at all (`()-[r:T]-()`, `()-[r:T]->()`, `()<-[r:T]-()` are the same index, as in Neo4j),
//! but not both ways, and names one type.

use super::{Parser, Result};
use crate::ast::{Ident, IndexFor, SchemaCommand};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// Whether the text starts as an index command (see the module doc).
    pub(super) fn at_schema_command(&self) -> bool {
        (self.keyword_at(0, "CREATE") || self.keyword_at(0, "DROP")) && self.keyword_at(1, "INDEX")
            || self.keyword_at(0, "SHOW")
                && (self.keyword_at(1, "INDEX") || self.keyword_at(1, "INDEXES"))
    }

    pub(super) fn parse_schema_command(&mut self) -> Result<SchemaCommand> {
        let command = if self.eat_keyword("SHOW") {
            self.advance(); // INDEX or INDEXES
            SchemaCommand::ShowIndexes
        } else if self.eat_keyword("DROP") {
            self.expect_keyword("INDEX")?;
            let name = self.parse_name("an index name")?;
            let if_exists = self.eat_if_exists();
            SchemaCommand::DropIndex { name, if_exists }
        } else {
            self.expect_keyword("CREATE")?;
            self.expect_keyword("INDEX")?;
            self.parse_create_index()?
        };
        self.expect_statement_end("end of input")?;
        Ok(command)
    }

    fn parse_create_index(&mut self) -> Result<SchemaCommand> {
        let unnamed = self.at_keyword("FOR") || self.at_keyword("IF") && self.keyword_at(1, "NOT");
        let name = if unnamed {
            None
        } else {
            Some(self.parse_name("an index name, IF NOT EXISTS or FOR")?)
        };
        let if_not_exists = self.eat_if_not_exists()?;
        self.expect_keyword("FOR")?;
        let (variable, on) = if self.kind_at(1) == &TokenKind::RParen {
            self.parse_index_relationship()?
        } else {
            self.parse_index_node()?
        };
        self.expect_keyword("ON")?;
        self.expect(&TokenKind::LParen)?;
        let used = self.parse_variable()?;
        if used.name != variable.name {
            return Err(ParseError::new(
                ParseErrorKind::Unexpected {
                    expected: format!("the variable '{}'", variable.name),
                    found: format!("'{}'", used.name),
                },
                used.span,
            ));
        }
        self.expect(&TokenKind::Dot)?;
        let property = self.parse_name("a property name")?;
        self.expect(&TokenKind::RParen)?;
        Ok(SchemaCommand::CreateIndex {
            name,
            if_not_exists,
            on,
            property,
        })
    }

    /// `'(' var ':' Label ')'`: the variable and the label.
    fn parse_index_node(&mut self) -> Result<(Ident, IndexFor)> {
        self.expect(&TokenKind::LParen)?;
        let variable = self.parse_variable()?;
        self.expect(&TokenKind::Colon)?;
        let label = self.parse_name("a label")?;
        self.expect(&TokenKind::RParen)?;
        Ok((variable, IndexFor::Label(label)))
    }

    /// `'(' ')' ['<'] '-' '[' var ':' TYPE ']' '-' ['>'] '(' ')'`: the variable and the type.
    fn parse_index_relationship(&mut self) -> Result<(Ident, IndexFor)> {
        self.expect(&TokenKind::LParen)?;
        self.expect(&TokenKind::RParen)?;
        let leftwards = self.eat(&TokenKind::Lt);
        self.expect(&TokenKind::Minus)?;
        self.expect(&TokenKind::LBracket)?;
        let variable = self.parse_variable()?;
        self.expect(&TokenKind::Colon)?;
        let rel_type = self.parse_name("a relationship type")?;
        self.expect(&TokenKind::RBracket)?;
        self.expect(&TokenKind::Minus)?;
        if leftwards && self.at(&TokenKind::Gt) {
            return Err(self.unexpected("'(' (a relationship points one way at most)"));
        }
        self.eat(&TokenKind::Gt);
        self.expect(&TokenKind::LParen)?;
        self.expect(&TokenKind::RParen)?;
        Ok((variable, IndexFor::RelationshipType(rel_type)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(query: &str) -> std::result::Result<SchemaCommand, ParseError> {
        match crate::parse_command(query)? {
            crate::ast::Command::Schema(command) => Ok(command),
            other => panic!("{query}: not an index command: {other:?}"),
        }
    }

    fn on(query: &str) -> IndexFor {
        match create(query) {
            Ok(SchemaCommand::CreateIndex { on, .. }) => on,
            other => panic!("{query}: {other:?}"),
        }
    }

    #[test]
    fn a_relationship_index_may_point_either_way_or_not_at_all() {
        for arrow in ["()-[r:KNOWS]-()", "()-[r:KNOWS]->()", "()<-[r:KNOWS]-()"] {
            let query = format!("CREATE INDEX knows_since FOR {arrow} ON (r.since)");
            let IndexFor::RelationshipType(ty) = on(&query) else {
                panic!("{query}: not a relationship index");
            };
            assert_eq!(ty.name, "KNOWS");
        }
        assert!(matches!(
            on("CREATE INDEX IF NOT EXISTS FOR (n:Person) ON (n.age)"),
            IndexFor::Label(_)
        ));
    }

    #[test]
    fn malformed_relationship_indexes_are_errors_at_the_offending_token() {
        let offset = |query: &str| {
            let error = create(query).expect_err(query);
            (error.span.start, error.to_string())
        };
        let both = "CREATE INDEX FOR ()<-[r:T]->() ON (r.p)";
        assert_eq!(offset(both).0, both.find('>').unwrap());
        let two_types = "CREATE INDEX FOR ()-[r:A|B]-() ON (r.p)";
        assert_eq!(offset(two_types).0, two_types.find('|').unwrap());
        let no_type = "CREATE INDEX FOR ()-[r]-() ON (r.p)";
        assert_eq!(offset(no_type).0, no_type.find("]-(").unwrap());
        let other_variable = "CREATE INDEX FOR ()-[r:T]-() ON (s.p)";
        assert_eq!(
            offset(other_variable).0,
            other_variable.find("s.p").unwrap()
        );
        let node_in_pattern = "CREATE INDEX FOR (a)-[r:T]-() ON (r.p)";
        assert!(create(node_in_pattern).is_err());
    }
}
