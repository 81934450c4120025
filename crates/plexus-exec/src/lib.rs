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
//! - [`engine::execute`]: the whole pipeline over one transaction.
//!
//! Below every stage is `plexus_value`: Cypher values and their equality / comparison /
//! ordering rules, dates, times and durations, and the [`QueryError`] every stage raises
//! (a parse error becomes one through [`syntax_error`]). Temporal functions read "now" from
//! the statement's `StatementClock`, which `exec` keeps in its state.

pub mod bind;
pub mod engine;
pub mod eval;
pub mod exec;
pub mod plan;
pub mod result;

pub use bind::Params;
pub use engine::Cursor;
pub use engine::syntax_error;
pub use plan::{
    MAX_QUERY_THREADS, ParallelConfig, Procedure, ProcedureFn, ProcedureRegistry, QUERY_THREADS_ENV,
};
pub use plexus_value::{ErrorClass, MapValue as CypherValueMap, Phase, QueryError, Value};
pub use result::{NodeData, QueryResult, RelData};
