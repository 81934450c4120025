//! Table and constraint commands: Kùzu's table DDL and Neo4j 5's key constraints.
//!
//! ```text
//!   create_node_table = CREATE NODE TABLE [IF NOT EXISTS] Name '(' node_item {',' node_item} ')'
//!   node_item         = column [PRIMARY KEY] | PRIMARY KEY '(' name ')'
//!   create_rel_table  = CREATE REL TABLE [IF NOT EXISTS] Name
//!                       '(' FROM Name TO Name {',' FROM Name TO Name} {',' column} ')'
//!   column            = name TYPE
//!   drop_table        = DROP TABLE [IF EXISTS] Name
//!   show_tables       = SHOW TABLES
//!   create_constraint = CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR '(' var ':' Label ')'
//!                       REQUIRE (var '.' prop | '(' var '.' prop ')') IS (UNIQUE | NODE KEY)
//!   drop_constraint   = DROP CONSTRAINT name [IF EXISTS]
//!   show_constraints  = SHOW (CONSTRAINT | CONSTRAINTS)
//! ```
//!
//! Like the index commands they are told from their first words (see
//! [`parse_command`](super::parse_command)) and must be the whole text (a `;` may follow).
//! `TYPE` is one of [`ColumnType::NAMES`], in any case; another word is an
//! `UnknownColumnType` error at that word, listing the accepted names. A node table has at
//! most one primary key, written inline or as an item — a second one is an error at its
//! `PRIMARY`. A relationship table names its `FROM … TO …` pairs before its columns. A
//! constraint names one property of the variable bound in `FOR` (composite keys are not
//! supported: a `,` after the property is an error there). What the names refer to (tables,
//! columns) is checked when the command runs, not here.

use super::{Parser, Result};
use crate::ast::{ColumnDef, ColumnType, ConstraintKind, Ident, TableCommand};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// Whether the text starts as a table or constraint command (see the module doc).
    pub(super) fn at_table_command(&self) -> bool {
        let create_table = self.keyword_at(0, "CREATE")
            && (self.keyword_at(1, "NODE") || self.keyword_at(1, "REL"))
            && self.keyword_at(2, "TABLE");
        let drop = self.keyword_at(0, "DROP")
            && (self.keyword_at(1, "TABLE") || self.keyword_at(1, "CONSTRAINT"));
        let show = self.keyword_at(0, "SHOW")
            && ["TABLES", "CONSTRAINT", "CONSTRAINTS"]
                .iter()
                .any(|word| self.keyword_at(1, word));
        create_table
            || drop
            || show
            || self.keyword_at(0, "CREATE") && self.keyword_at(1, "CONSTRAINT")
    }

    pub(super) fn parse_table_command(&mut self) -> Result<TableCommand> {
        let command = if self.eat_keyword("SHOW") {
            let what = self.advance(); // TABLES, CONSTRAINT or CONSTRAINTS
            if what.is_keyword("TABLES") {
                TableCommand::ShowTables
            } else {
                TableCommand::ShowConstraints
            }
        } else if self.eat_keyword("DROP") {
            if self.eat_keyword("TABLE") {
                let if_exists = self.eat_if_exists();
                let name = self.parse_name("a table name")?;
                TableCommand::DropTable { name, if_exists }
            } else {
                self.expect_keyword("CONSTRAINT")?;
                let name = self.parse_name("a constraint name")?;
                let if_exists = self.eat_if_exists();
                TableCommand::DropConstraint { name, if_exists }
            }
        } else {
            self.expect_keyword("CREATE")?;
            if self.eat_keyword("CONSTRAINT") {
                self.parse_create_constraint()?
            } else if self.eat_keyword("NODE") {
                self.expect_keyword("TABLE")?;
                self.parse_create_node_table()?
            } else {
                self.expect_keyword("REL")?;
                self.expect_keyword("TABLE")?;
                self.parse_create_rel_table()?
            }
        };
        self.expect_statement_end("end of input")?;
        Ok(command)
    }

    fn parse_create_node_table(&mut self) -> Result<TableCommand> {
        let if_not_exists = self.eat_if_not_exists()?;
        let name = self.parse_name("a table name")?;
        self.expect(&TokenKind::LParen)?;
        let mut columns = Vec::new();
        let mut primary_key: Option<Ident> = None;
        loop {
            let key = if self.at_keyword("PRIMARY") {
                let at = self.peek().span;
                self.advance();
                self.expect_keyword("KEY")?;
                self.expect(&TokenKind::LParen)?;
                let key = self.parse_name("a column name")?;
                self.expect(&TokenKind::RParen)?;
                Some((at, key))
            } else {
                let column = self.parse_column()?;
                let key = if self.at_keyword("PRIMARY") {
                    let at = self.peek().span;
                    self.advance();
                    self.expect_keyword("KEY")?;
                    Some((at, column.name.clone()))
                } else {
                    None
                };
                columns.push(column);
                key
            };
            if let Some((at, key)) = key {
                if primary_key.is_some() {
                    return Err(ParseError::new(
                        ParseErrorKind::Unexpected {
                            expected: "')' or ',' (a table has one primary key)".into(),
                            found: "a second PRIMARY KEY".into(),
                        },
                        at,
                    ));
                }
                primary_key = Some(key);
            }
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(TableCommand::CreateNodeTable {
            name,
            if_not_exists,
            columns,
            primary_key,
        })
    }

    fn parse_create_rel_table(&mut self) -> Result<TableCommand> {
        let if_not_exists = self.eat_if_not_exists()?;
        let name = self.parse_name("a table name")?;
        self.expect(&TokenKind::LParen)?;
        let mut connections = Vec::new();
        let mut columns = Vec::new();
        loop {
            if columns.is_empty() && self.at_keyword("FROM") {
                self.advance();
                let from = self.parse_name("a node table name")?;
                self.expect_keyword("TO")?;
                let to = self.parse_name("a node table name")?;
                connections.push((from, to));
            } else if connections.is_empty() {
                return Err(
                    self.unexpected("'FROM' (a relationship table names its node tables first)")
                );
            } else {
                columns.push(self.parse_column()?);
            }
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(TableCommand::CreateRelTable {
            name,
            if_not_exists,
            connections,
            columns,
        })
    }

    /// `name TYPE`, the type one of [`ColumnType::NAMES`].
    fn parse_column(&mut self) -> Result<ColumnDef> {
        let name = self.parse_name("a column name")?;
        let type_name = self.parse_name("a column type")?;
        let column_type = ColumnType::parse(&type_name.name).ok_or_else(|| {
            ParseError::new(
                ParseErrorKind::UnknownColumnType {
                    name: type_name.name.clone(),
                    accepted: ColumnType::accepted_names(),
                },
                type_name.span,
            )
        })?;
        Ok(ColumnDef {
            name,
            column_type,
            type_span: type_name.span,
        })
    }

    fn parse_create_constraint(&mut self) -> Result<TableCommand> {
        let unnamed = self.at_keyword("FOR") || self.at_keyword("IF") && self.keyword_at(1, "NOT");
        let name = if unnamed {
            None
        } else {
            Some(self.parse_name("a constraint name, IF NOT EXISTS or FOR")?)
        };
        let if_not_exists = self.eat_if_not_exists()?;
        self.expect_keyword("FOR")?;
        self.expect(&TokenKind::LParen)?;
        let variable = self.parse_variable()?;
        self.expect(&TokenKind::Colon)?;
        let label = self.parse_name("a label")?;
        self.expect(&TokenKind::RParen)?;
        self.expect_keyword("REQUIRE")?;
        let parenthesised = self.eat(&TokenKind::LParen);
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
        if parenthesised && !self.at(&TokenKind::RParen) {
            return Err(self.unexpected("')' (a constraint names one property)"));
        }
        if parenthesised {
            self.advance();
        }
        self.expect_keyword("IS")?;
        let kind = if self.eat_keyword("UNIQUE") {
            ConstraintKind::Unique
        } else if self.eat_keyword("NODE") {
            self.expect_keyword("KEY")?;
            ConstraintKind::NodeKey
        } else {
            return Err(self.unexpected("UNIQUE or NODE KEY"));
        };
        Ok(TableCommand::CreateConstraint {
            name,
            if_not_exists,
            label,
            property,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Command;

    fn table(text: &str) -> std::result::Result<TableCommand, ParseError> {
        match crate::parse_command(text)? {
            Command::Table(command) => Ok(command),
            other => panic!("{text}: not a table command: {other:?}"),
        }
    }

    #[test]
    fn a_node_table_takes_its_key_inline_or_as_an_item() {
        for text in [
            "CREATE NODE TABLE Person(id INT64, name STRING, PRIMARY KEY (id))",
            "create node table Person(id int64 primary key, name String);",
        ] {
            let Ok(TableCommand::CreateNodeTable {
                name,
                columns,
                primary_key,
                if_not_exists: false,
            }) = table(text)
            else {
                panic!("{text}");
            };
            assert_eq!(name.name, "Person");
            assert_eq!(primary_key.map(|k| k.name).as_deref(), Some("id"));
            let types: Vec<ColumnType> = columns.iter().map(|c| c.column_type).collect();
            assert_eq!(types, [ColumnType::Int64, ColumnType::String]);
        }
    }

    #[test]
    fn a_rel_table_names_its_pairs_first() {
        let text = "CREATE REL TABLE IF NOT EXISTS Likes(FROM A TO B, FROM A TO C, since DATE)";
        let Ok(TableCommand::CreateRelTable {
            connections,
            columns,
            if_not_exists: true,
            ..
        }) = table(text)
        else {
            panic!("{text}");
        };
        assert_eq!(connections.len(), 2);
        assert_eq!(columns[0].column_type, ColumnType::Date);
        let late = "CREATE REL TABLE R(since DATE, FROM A TO B)";
        assert_eq!(
            table(late).unwrap_err().span.start,
            late.find("since").unwrap()
        );
        let after = "CREATE REL TABLE R(FROM A TO B, since DATE, FROM A TO C)";
        assert_eq!(
            table(after).unwrap_err().span.start,
            after.find("A TO C").unwrap()
        );
    }

    #[test]
    fn errors_point_at_the_offending_word() {
        let unknown = "CREATE NODE TABLE T(id INT64, x VARCHAR, PRIMARY KEY (id))";
        let error = table(unknown).unwrap_err();
        assert_eq!(error.span.start, unknown.find("VARCHAR").unwrap());
        assert_eq!(error.tck_code(), "UnknownColumnType");
        assert!(error.to_string().contains("INT64, INT32"), "{error}");
        let two_keys = "CREATE NODE TABLE T(a INT64 PRIMARY KEY, PRIMARY KEY (a))";
        assert_eq!(
            table(two_keys).unwrap_err().span.start,
            two_keys.rfind("PRIMARY").unwrap()
        );
        let composite = "CREATE CONSTRAINT FOR (p:P) REQUIRE (p.a, p.b) IS NODE KEY";
        assert_eq!(
            table(composite).unwrap_err().span.start,
            composite.find(',').unwrap()
        );
        let other = "CREATE CONSTRAINT c FOR (p:P) REQUIRE q.a IS UNIQUE";
        assert_eq!(
            table(other).unwrap_err().span.start,
            other.find("q.a").unwrap()
        );
    }

    #[test]
    fn constraints_parse_in_neo4j_5_form() {
        assert!(matches!(
            table(
                "CREATE CONSTRAINT person_id IF NOT EXISTS FOR (p:Person) REQUIRE p.id IS UNIQUE"
            ),
            Ok(TableCommand::CreateConstraint {
                name: Some(_),
                if_not_exists: true,
                kind: ConstraintKind::Unique,
                ..
            })
        ));
        assert!(matches!(
            table("CREATE CONSTRAINT FOR (p:Person) REQUIRE (p.id) IS NODE KEY"),
            Ok(TableCommand::CreateConstraint {
                name: None,
                kind: ConstraintKind::NodeKey,
                ..
            })
        ));
        assert!(matches!(
            table("DROP CONSTRAINT person_id IF EXISTS"),
            Ok(TableCommand::DropConstraint {
                if_exists: true,
                ..
            })
        ));
        assert!(matches!(
            table("SHOW CONSTRAINTS"),
            Ok(TableCommand::ShowConstraints)
        ));
        assert!(matches!(
            table("show tables;"),
            Ok(TableCommand::ShowTables)
        ));
        assert!(matches!(
            table("DROP TABLE IF EXISTS Person"),
            Ok(TableCommand::DropTable {
                if_exists: true,
                ..
            })
        ));
    }
}
