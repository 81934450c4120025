//! Type predicates (Neo4j 5): `x IS [NOT] :: TYPE`, `x IS [NOT] TYPED TYPE` and `x :: TYPE`.
//!
//! ```text
//!   type    = single ('|' single)*
//!   single  = base [NOT NULL] ((LIST | ARRAY) [NOT NULL])*
//!   base    = ANY [VALUE] | ANY '<' type '>' | NOTHING | NULL
//!           | BOOL | BOOLEAN | STRING | VARCHAR | INT | INTEGER | SIGNED INTEGER | FLOAT
//!           | DATE | LOCAL TIME | ZONED TIME | TIME (WITH | WITHOUT) TIME ZONE
//!           | LOCAL DATETIME | ZONED DATETIME | TIMESTAMP (WITH | WITHOUT) TIME ZONE
//!           | DURATION | POINT | [ANY] (NODE | VERTEX) | [ANY] (RELATIONSHIP | EDGE)
//!           | [ANY] MAP | PATH | [ANY] PROPERTY VALUE | (LIST | ARRAY) '<' type '>'
//! ```
//!
//! Words are case-insensitive. `T LIST` is `LIST<T>`; a union inside `LIST<…>` or `ANY<…>` is
//! written with `|` as at the top. What the predicate means is the evaluator's
//! (`plexus_exec::eval`, `type_matches`).

use super::{Parser, Result};
use crate::ast::{CypherType, TypeKind};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// A type (see the module doc).
    pub(super) fn parse_type(&mut self) -> Result<CypherType> {
        let first = self.parse_single_type()?;
        if !self.at(&TokenKind::Pipe) {
            return Ok(first);
        }
        let mut members = vec![first];
        while self.eat(&TokenKind::Pipe) {
            members.push(self.parse_single_type()?);
        }
        Ok(CypherType {
            kind: TypeKind::Union(members),
            not_null: false,
        })
    }

    fn parse_single_type(&mut self) -> Result<CypherType> {
        let kind = self.parse_base_type()?;
        let mut ty = CypherType {
            kind,
            not_null: self.eat_not_null()?,
        };
        while self.eat_keyword("LIST") || self.eat_keyword("ARRAY") {
            ty = CypherType {
                kind: TypeKind::List(Box::new(ty)),
                not_null: self.eat_not_null()?,
            };
        }
        Ok(ty)
    }

    /// `NOT NULL` after a type, if there.
    fn eat_not_null(&mut self) -> Result<bool> {
        if self.at_keyword("NOT") && self.keyword_at(1, "NULL") {
            self.advance();
            self.advance();
            return Ok(true);
        }
        Ok(false)
    }

    fn parse_base_type(&mut self) -> Result<TypeKind> {
        const FIRST_WORDS: [&str; 26] = [
            "ANY",
            "NOTHING",
            "NULL",
            "BOOL",
            "BOOLEAN",
            "STRING",
            "VARCHAR",
            "INT",
            "INTEGER",
            "SIGNED",
            "FLOAT",
            "DATE",
            "LOCAL",
            "ZONED",
            "TIME",
            "TIMESTAMP",
            "DURATION",
            "POINT",
            "NODE",
            "VERTEX",
            "RELATIONSHIP",
            "EDGE",
            "MAP",
            "PATH",
            "PROPERTY",
            "LIST",
        ];
        let word = match self.kind_at(0) {
            TokenKind::Ident(word)
                if FIRST_WORDS.contains(&word.to_ascii_uppercase().as_str())
                    || word.eq_ignore_ascii_case("ARRAY") =>
            {
                word.to_ascii_uppercase()
            }
            _ => return Err(self.unexpected("a type")),
        };
        self.advance();
        let kind = match word.as_str() {
            "ANY" => {
                if self.eat(&TokenKind::Lt) {
                    let inner = self.parse_type()?;
                    self.expect(&TokenKind::Gt)?;
                    return Ok(match inner {
                        CypherType {
                            kind,
                            not_null: false,
                        } => kind,
                        not_null => TypeKind::Union(vec![not_null]),
                    });
                }
                if self.eat_keyword("NODE") || self.eat_keyword("VERTEX") {
                    TypeKind::Node
                } else if self.eat_keyword("RELATIONSHIP") || self.eat_keyword("EDGE") {
                    TypeKind::Relationship
                } else if self.eat_keyword("MAP") {
                    TypeKind::Map
                } else if self.eat_keyword("PROPERTY") {
                    self.expect_keyword("VALUE")?;
                    TypeKind::PropertyValue
                } else {
                    self.eat_keyword("VALUE");
                    TypeKind::Any
                }
            }
            "NOTHING" => TypeKind::Nothing,
            "NULL" => TypeKind::Null,
            "BOOL" | "BOOLEAN" => TypeKind::Boolean,
            "STRING" | "VARCHAR" => TypeKind::String,
            "INT" | "INTEGER" => TypeKind::Integer,
            "SIGNED" => {
                self.expect_keyword("INTEGER")?;
                TypeKind::Integer
            }
            "FLOAT" => TypeKind::Float,
            "DATE" => TypeKind::Date,
            "LOCAL" | "ZONED" => {
                let local = word == "LOCAL";
                if self.eat_keyword("TIME") {
                    if local {
                        TypeKind::LocalTime
                    } else {
                        TypeKind::ZonedTime
                    }
                } else {
                    self.expect_keyword("DATETIME")?;
                    if local {
                        TypeKind::LocalDateTime
                    } else {
                        TypeKind::ZonedDateTime
                    }
                }
            }
            "TIME" | "TIMESTAMP" => {
                let zoned = if self.eat_keyword("WITH") {
                    true
                } else {
                    self.expect_keyword("WITHOUT")?;
                    false
                };
                self.expect_keyword("TIME")?;
                self.expect_keyword("ZONE")?;
                match (word.as_str(), zoned) {
                    ("TIME", true) => TypeKind::ZonedTime,
                    ("TIME", false) => TypeKind::LocalTime,
                    (_, true) => TypeKind::ZonedDateTime,
                    (_, false) => TypeKind::LocalDateTime,
                }
            }
            "DURATION" => TypeKind::Duration,
            "POINT" => TypeKind::Point,
            "NODE" | "VERTEX" => TypeKind::Node,
            "RELATIONSHIP" | "EDGE" => TypeKind::Relationship,
            "MAP" => TypeKind::Map,
            "PATH" => TypeKind::Path,
            "PROPERTY" => {
                self.expect_keyword("VALUE")?;
                TypeKind::PropertyValue
            }
            "LIST" | "ARRAY" => {
                self.expect(&TokenKind::Lt)?;
                let inner = self.parse_type()?;
                self.expect(&TokenKind::Gt)?;
                TypeKind::List(Box::new(inner))
            }
            _ => unreachable!("FIRST_WORDS lists every type's first word"),
        };
        Ok(kind)
    }
}
