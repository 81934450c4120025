//! The shared vocabulary of Plexus: identifiers, property values, data types, errors and
//! configuration. Every other crate depends on this one and it depends on no other Plexus crate,
//! so a type that crosses a layer boundary lives here.

mod config;
mod error;
mod ids;
mod runs;
mod span;
mod value;

pub use config::{Config, DurabilityMode, IsolationLevel, MergePolicy, RunPacking};
pub use error::{AbortReason, Error, Result};
pub use ids::{
    Direction, EdgeId, EdgeTableId, EdgeTypeId, LabelId, PropKeyId, Timestamp, VertexId,
    VertexTableId,
};
pub use runs::VertexRuns;
pub use span::Span;
pub use value::{DataType, TemporalValue, Value};
