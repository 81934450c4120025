//! Plexus ingest: getting files into the engine.
//!
//! WHAT
//! ====
//! Everything that reads a user's file on the way into the graph starts here: `LOAD CSV`,
//! `COPY … FROM`, `plexus import`, and later the GraphAr import. This crate owns the parts
//! those share and that know nothing of the engine:
//!
//! - [`ImportDir`]: where files may come from. A server reads files only under its import
//!   directory; every name a statement gives (`'file:///persons.csv'`, `'persons.csv'`,
//!   `'/persons.csv'`) is resolved under it, and a name that would leave it — through `..` or
//!   through a symbolic link — is refused before the file is opened. A Bolt client can never
//!   make the server read `/etc/passwd`. [`ExportDir`] is its counterpart for the files a
//!   server writes (a `COPY` report): names resolved the same way, directories created on
//!   the way, links out of it refused.
//! - [`CsvReader`]: a streaming CSV tokenizer with `LOAD CSV`'s semantics (RFC 4180 quoting,
//!   a configurable field terminator, an empty unquoted field is `null` while `""` is the empty
//!   string, records may span lines, gzip files read transparently), reporting malformed input
//!   with the file, line and column.
//! - [`import`]: neo4j-admin style node and relationship files (and the LDBC SNB layout) as
//!   typed batches of values for `plexus import`.
//! - [`batch_columns`]: Arrow record batches (Parquet, Python frames) as Plexus values, one
//!   mapping for every front end.
//!
//! WHY ITS OWN CRATE
//! =================
//! The readers are used by the execution stage (`LOAD CSV` is a clause), by the facade
//! (`COPY` into declared tables) and by the CLI (`plexus import`); none of them should own
//! the others' file handling, and the security rule about the import directory must live in
//! exactly one place. The crate depends on no other Plexus crate but `plexus-types`, for the values it produces.
//!
//! LIMITS
//! ======
//! A field holds at most [`MAX_FIELD_BYTES`] bytes and a record at most [`MAX_RECORD_FIELDS`]
//! fields: a file with an unterminated quote would otherwise be read whole into one field.
//! Both are errors naming the file and line, never a panic or an unbounded allocation.

mod arrow_values;
mod csv;
mod error;
mod export_dir;
mod header;
pub mod import;
mod import_dir;
#[cfg(test)]
mod scratch;

pub use arrow_values::{batch_columns, column_values};
pub use csv::{CsvOptions, CsvReader, CsvRecord, MAX_FIELD_BYTES, MAX_RECORD_FIELDS};
pub use error::{IngestError, IngestErrorKind, Result};
pub use export_dir::ExportDir;
pub use header::{Column, ColumnKind, FieldType, Header, HeaderFor};
pub use import_dir::ImportDir;
