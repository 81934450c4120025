//! Apache GraphAr (`gar/v1`) for Plexus: export a pinned snapshot, import through the bulk
//! loader (docs/graphar.md; the on-disk format is `../shared/GRAPHAR-NOTES.md`).
//!
//! WHAT
//! ====
//! GraphAr stores a property graph as Parquet (or CSV/ORC) chunks under YAML metadata:
//! vertices of one type are numbered densely 0..n and cut into chunks of `chunk_size`; edges of
//! one (source type, edge type, destination type) are split into *parts* by the vertex chunk of
//! their source (or destination), each part sorted and cut into chunks, with an offset chunk
//! per part (CSR/CSC) and raw little-endian counts beside them:
//!
//! ```text
//!   graph.yml  person.vertex.yml  person_knows_person.edge.yml
//!   vertex/person/vertex_count                     8-byte LE int64
//!   vertex/person/id/chunk0 …                      _graphArVertexIndex, id
//!   vertex/person/labels/chunk0 …                  one BOOLEAN column per label (RLE)
//!   edge/person_knows_person/ordered_by_source/
//!       vertex_count, edge_count0 …                8-byte LE int64
//!       offset/chunk0 …                            _graphArOffset: (vertices in chunk)+1 rows
//!       adj_list/part0/chunk0 …                    _graphArSrcIndex, _graphArDstIndex
//!       creationDate/part0/chunk0 …                the edge properties, row for row
//! ```
//!
//! MODULES
//! =======
//! - [`meta`]: the YAML files as plain values, defaults applied (read and write);
//! - [`read`]: chunks into columns of Plexus values (Parquet, CSV), every count checked;
//! - [`write`]: columns into Parquet chunks, offsets and counts (both adjacency orders);
//! - [`export`]: a database snapshot → GraphAr (the mapping rules are documented there);
//! - [`import`]: GraphAr → one `BulkLoad`, committed at once or not at all;
//! - [`attach`]: a graph read in place, out of core: neighbours through the offset index and
//!   the Parquet page index, label filters evaluated per RLE run;
//! - [`procedure`]: `CALL db.export.graphar(...)` on a running database, registered by the
//!   program that opens it ([`register_procedures`]).
//!
//! The reader and writer meet in two in-memory shapes, [`VertexData`] and [`EdgeData`]: one
//! vertex type or edge triple at a time, fully materialised. That bounds memory by the largest
//! type, which is what this first slice accepts (streaming chunk by chunk is not built yet).
//!
//! ERRORS
//! ======
//! Every failure that comes from a file is an [`Error::File`] naming that file; the loader
//! never panics on bad input.

pub mod attach;
pub mod export;
pub mod import;
pub mod meta;
pub mod mount;
pub mod procedure;
pub mod read;
pub mod rle;
pub mod write;

use std::path::{Path, PathBuf};

use plexus::Value;

pub use export::{ExportOptions, ExportSummary, export};
pub use import::{ImportProgress, ImportSummary, import};
pub use meta::GraphInfo;
pub use procedure::register_procedures;

/// Name of the vertex index column in vertex property chunks.
pub const VERTEX_INDEX: &str = "_graphArVertexIndex";
/// Name of the source index column in adjacency chunks.
pub const SRC_INDEX: &str = "_graphArSrcIndex";
/// Name of the destination index column in adjacency chunks.
pub const DST_INDEX: &str = "_graphArDstIndex";
/// Name of the offset column in offset chunks.
pub const OFFSET: &str = "_graphArOffset";

/// A GraphAr failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Something about one file: missing, unreadable, malformed, or disagreeing with the
    /// metadata.
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// The database refused an operation (opening, loading, committing).
    #[error("{0}")]
    Database(String),
}

impl Error {
    pub fn file(path: &Path, message: impl Into<String>) -> Error {
        Error::File {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    pub fn io(path: &Path, e: std::io::Error) -> Error {
        let message = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            _ => e.to_string(),
        };
        Error::file(path, message)
    }
}

/// One vertex type's vertices, index `i` being GraphAr vertex index `i`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VertexData {
    pub count: u64,
    /// `(property, one value per vertex)`; `Value::Null` for no value.
    pub columns: Vec<(String, Vec<Value>)>,
    /// `(label, one flag per vertex)`, in the order of `VertexInfo::labels`.
    pub labels: Vec<(String, Vec<bool>)>,
}

/// One edge triple's edges (in no particular order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EdgeData {
    /// Source vertex indices (into the source type).
    pub src: Vec<u64>,
    /// Destination vertex indices (into the destination type).
    pub dst: Vec<u64>,
    /// `(property, one value per edge)`.
    pub columns: Vec<(String, Vec<Value>)>,
}
