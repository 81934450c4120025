//! The openCypher front end of Plexus: query text → abstract syntax tree.
//!
//! PIPELINE
//! ========
//! ```text
//!   &str ──lexer──▶ Vec<Token> ──parser──▶ ast::Statement ──(binder, elsewhere)──▶ ...
//!                                              │
//!                                              └──display──▶ canonical Cypher text
//! ```
//!
//! - [`lexer`]: tokens with byte spans and line/column positions;
//! - [`parser`]: hand-written recursive descent with Pratt-style expression parsing;
//!   [`parse_command`] is the entry point of a connection (a query, an index command, a
//!   session command or transaction control, parsed once), [`parse`] that of a query alone;
//! - [`ast`]: the syntax tree, every clause and expression carrying its [`ast::Span`];
//! - `display`: `Display` for the AST, printing Cypher that parses back to an equal tree;
//! - [`ParseError`]: typed syntax errors (`line 1, column 10: expected ')' but found 'RETURN'`)
//!   with the openCypher TCK error code available via [`ParseError::tck_code`].
//!
//! This crate knows nothing about the catalog, variables' scopes or types: that is the binder's
//! job. It does reject a handful of clause compositions the openCypher grammar cannot derive
//! (see [`parser`]).
//!
//! ```
//! let statement = plexus_cypher::parse("match (a:Person)-->(b) where a.age > 30 return b.name")
//!     .unwrap();
//! assert_eq!(
//!     statement.to_string(),
//!     "MATCH (a:Person)-->(b) WHERE a.age > 30 RETURN b.name"
//! );
//! ```

pub mod ast;
mod display;
mod error;
pub mod lexer;
pub mod parser;

pub use error::{ParseError, ParseErrorKind};
pub use parser::{MAX_NESTING_DEPTH, parse, parse_command};
