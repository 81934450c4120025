//! Plexus query execution: openCypher statements from AST to rows.
//!
//! STAGES
//! ======
//! ```text
//!   plexus_cypher::parse ──▶ bind/ (scopes, types, semantic errors)
//!                         ──▶ plan/ (logical operators over slots; EXPLAIN)
//!                         ──▶ exec/ (physical operators over column batches; PROFILE)
//!                         ──▶ result.rs (rows + the graph elements they mention)
//! ```
//! - [`bind`]: resolves variables to slots, checks types and the rules the TCK names
//!   (`UndefinedVariable`, `VariableTypeConflict`, `InvalidAggregation`, ...);
//! - [`plan`]: the logical plan, built clause by clause while binding; where a pattern
//!   starts is chosen by a cost model over table statistics;
//! - [`exec`]: pull-based operators exchanging batches of ~2K rows as columns;
//! - [`eval`]: expression evaluation and the function library;
//! - [`value`]: Cypher values and their equality / comparison / ordering rules;
//! - [`temporal`]: dates, times and durations;
//! - [`engine::execute`]: the whole pipeline over one transaction.

pub mod bind;
pub mod engine;
pub mod error;
pub mod eval;
pub mod exec;
pub mod plan;
pub mod result;
pub mod temporal;
pub mod value;

pub use bind::Params;
pub use engine::Cursor;
pub use error::{ErrorClass, Phase, QueryError};
pub use plan::{
    MAX_QUERY_THREADS, ParallelConfig, Procedure, ProcedureFn, ProcedureRegistry, QUERY_THREADS_ENV,
};
pub use result::{NodeData, QueryResult, RelData};
pub use value::{MapValue as CypherValueMap, Value};
