//! Index commands: `CREATE INDEX`, `DROP INDEX`, `SHOW INDEXES` (Neo4j 5 syntax).
//!
//! ```text
//!   create_index = CREATE INDEX [name] [IF NOT EXISTS] FOR '(' var ':' Label ')'
//!                  ON '(' var '.' property ')'
//!   drop_index   = DROP INDEX name [IF EXISTS]
//!   show_indexes = SHOW (INDEX | INDEXES)
//! ```
//!
//! They are not queries: [`parse_schema_command`] recognises them by their first two words and
//! returns `None` for anything else, which then goes to [`parse`](super::parse). The variable
//! in `ON` must be the one bound in `FOR`. `name` is any word but `IF` or `FOR` (which start
//! the next part); backquote it to use those.

use super::{Parser, Result};
use crate::ast::SchemaCommand;
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{TokenKind, tokenize};

/// Parses `query` if it is an index command; `None` if it is not one (see the module doc).
pub fn parse_schema_command(query: &str) -> Option<std::result::Result<SchemaCommand, ParseError>> {
    let tokens = tokenize(query).ok()?;
    let mut parser = Parser::new(query, tokens);
    let is_command = (parser.keyword_at(0, "CREATE") || parser.keyword_at(0, "DROP"))
        && parser.keyword_at(1, "INDEX")
        || parser.keyword_at(0, "SHOW")
            && (parser.keyword_at(1, "INDEX") || parser.keyword_at(1, "INDEXES"));
    is_command.then(|| parser.parse_schema_command())
}

impl Parser<'_> {
    fn parse_schema_command(&mut self) -> Result<SchemaCommand> {
        let command = if self.eat_keyword("SHOW") {
            self.advance(); // INDEX or INDEXES
            SchemaCommand::ShowIndexes
        } else if self.eat_keyword("DROP") {
            self.expect_keyword("INDEX")?;
            let name = self.parse_name("an index name")?;
            let if_exists = self.eat_keyword("IF");
            if if_exists {
                self.expect_keyword("EXISTS")?;
            }
            SchemaCommand::DropIndex { name, if_exists }
        } else {
            self.expect_keyword("CREATE")?;
            self.expect_keyword("INDEX")?;
            self.parse_create_index()?
        };
        self.eat(&TokenKind::Semicolon);
        if !self.at(&TokenKind::Eof) {
            return Err(self.unexpected("end of input"));
        }
        Ok(command)
    }

    fn parse_create_index(&mut self) -> Result<SchemaCommand> {
        let unnamed = self.at_keyword("FOR") || self.at_keyword("IF") && self.keyword_at(1, "NOT");
        let name = if unnamed {
            None
        } else {
            Some(self.parse_name("an index name, IF NOT EXISTS or FOR")?)
        };
        let if_not_exists = self.eat_keyword("IF");
        if if_not_exists {
            self.expect_keyword("NOT")?;
            self.expect_keyword("EXISTS")?;
        }
        self.expect_keyword("FOR")?;
        self.expect(&TokenKind::LParen)?;
        let variable = self.parse_variable()?;
        self.expect(&TokenKind::Colon)?;
        let label = self.parse_name("a label")?;
        self.expect(&TokenKind::RParen)?;
        self.expect_keyword("ON")?;
        self.expect(&TokenKind::LParen)?;
        let on = self.parse_variable()?;
        if on.name != variable.name {
            return Err(ParseError::new(
                ParseErrorKind::Unexpected {
                    expected: format!("the variable '{}'", variable.name),
                    found: format!("'{}'", on.name),
                },
                on.span,
            ));
        }
        self.expect(&TokenKind::Dot)?;
        let property = self.parse_name("a property name")?;
        self.expect(&TokenKind::RParen)?;
        Ok(SchemaCommand::CreateIndex {
            name,
            if_not_exists,
            label,
            property,
        })
    }
}
