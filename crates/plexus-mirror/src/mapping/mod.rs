//! The mapping language: which PostgreSQL rows become which vertices and edges.
//!
//! WHAT
//! ====
//! A mapping is one SQL:2023 SQL/PGQ `CREATE PROPERTY GRAPH` statement, with a few Plexus
//! extensions (`docs/mirror-mapping.md` is the reference):
//!
//! ```text
//! CREATE PROPERTY GRAPH fraud
//!   VERTEX TABLES (
//!     person KEY (id) LABEL Person PROPERTIES (id, name),
//!     account LABEL Account PROPERTIES (id, opened AS opened EPOCH_MILLIS)
//!   )
//!   EDGE TABLES (
//!     account AS owns KEY (id)
//!       SOURCE KEY (owner_id) REFERENCES person (id)
//!       DESTINATION KEY (id) REFERENCES account (id)
//!       LABEL OWNS NO PROPERTIES
//!   );
//! ```
//!
//! Every row of a vertex table is one vertex, identified by (table alias, KEY values); every
//! row of an edge table is one edge, identified by (alias, KEY values), from the vertex whose
//! key equals the row's SOURCE KEY columns to the one its DESTINATION KEY columns name. A
//! row whose endpoint columns hold a NULL is no edge (so a nullable foreign key in an entity
//! table maps the 1-to-many relationship directly; a link table maps many-to-many).
//!
//! STAGES
//! ======
//! ```text
//!   text ──parse──▶ PropertyGraph (names, spans; types Unknown, catalog defaults empty)
//!        ──validate(client)──▶ PropertyGraph (keys, endpoints, properties resolved, typed)
//!   row text values ──types::decode──▶ plexus::Value
//! ```
//! [`parse`] needs nothing but the text and catches everything the text alone decides
//! (syntax, duplicate aliases, unknown vertex aliases, one label per edge table). [`validate`]
//! asks the live catalog about the rest: tables and columns exist, keys are unique and sent
//! in the replica identity, types are supported, conversions fit their columns. The apply
//! side works from a validated graph only; [`types::decode`] is the one conversion from
//! PostgreSQL's text output, used for the initial copy and the stream alike.
//!
//! Row errors — a text value [`decode`] cannot convert (an out-of-range `numeric(p, 0)`, an
//! `infinity` date), a `LABEL FROM` value the list does not name
//! ([`VertexTable::labels_for_row`]) — are `Err(String)`s naming what was wrong; the apply
//! side adds the table and row and reports them. Neither the parser nor the decoder panics on
//! any input.
//!
//! INVARIANTS (of a validated graph)
//! =================================
//! - aliases are unique across vertex and edge tables; every endpoint names a vertex table;
//! - every key is non-empty, unique in PostgreSQL (primary key or unique index, NOT NULL)
//!   and covered by the table's replica identity, so an update's or delete's old row names
//!   the vertex or edge it changes;
//! - an endpoint's `referenced_columns` are exactly its vertex table's key, in key order,
//!   and its `columns` have the same types pairwise;
//! - every property and list has a resolved [`PgType`] (never `Unknown`), and its conversion
//!   applies to that type;
//! - an edge table has exactly one label (a Plexus relationship has one type).
//!
//! WHAT IT DOES NOT DO
//! ===================
//! It does not watch the catalog: a later `ALTER TABLE` is the source side's business (the
//! stream resends the relation, and the mirror re-validates). Property sets are per element
//! table, not per label (SQL/PGQ's per-label property lists are united). Domains and
//! composite, range, geometric and text-search types are not supported.

mod catalog;
mod model;
mod parse;
pub mod types;

use std::fmt;

pub use catalog::validate;
pub use model::{
    ChildList, Conversion, EdgeTable, Endpoint, LabelFrom, PropertyGraph, PropertyMap, TableName,
    VertexTable,
};
pub use parse::parse;
pub use types::{PgType, decode};

/// A position in the mapping text: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub line: usize,
    pub column: usize,
}

/// A parse or validation error, at the offending token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappingError {
    pub message: String,
    pub line: usize,
    pub column: usize,
    /// The clause being read, e.g. `VERTEX TABLE person` or `EDGE TABLE knows SOURCE KEY`
    /// (empty for a lexical error).
    pub clause: String,
    /// The mapping file's name for [`Display`](fmt::Display), when known
    /// ([`MappingError::in_file`]).
    pub file: Option<String>,
}

impl MappingError {
    pub fn new(message: String, span: Span, clause: String) -> MappingError {
        MappingError {
            message,
            line: span.line,
            column: span.column,
            clause,
            file: None,
        }
    }

    /// The same error, displayed as coming from file `name`.
    pub fn in_file(mut self, name: &str) -> MappingError {
        self.file = Some(name.to_owned());
        self
    }
}

impl fmt::Display for MappingError {
    /// `mapping.sql:12:5: EDGE TABLE knows: column "person2id" does not exist ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
        }
        write!(f, "{}:{}: ", self.line, self.column)?;
        if !self.clause.is_empty() {
            write!(f, "{}: ", self.clause)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for MappingError {}
