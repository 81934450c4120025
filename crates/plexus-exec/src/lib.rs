//! Plexus query execution: openCypher statements from AST to rows.
//!
//! STAGES
//! ======
//! ```text
//!   plexus_cypher::parse ──▶ plexus_plan (bind → logical plan → optimizer passes)
//!                         ──▶ exec/ (physical operators over column batches; PROFILE)
//!                         ──▶ result.rs (rows + the graph elements they mention)
//! ```
//! - `plexus_plan`: resolves variables to slots, checks the rules the TCK names, builds the
//!   logical plan and rewrites it pass by pass (EXPLAIN, EXPLAIN VERBOSE);
//! - [`exec`]: pull-based operators exchanging batches of ~2K rows as columns;
//! - [`eval`]: expression evaluation and the function library;
//! - [`engine`]: the whole pipeline over one transaction ([`Cursor`] opens, plans and runs a
//!   statement).
//!
//! Below every stage is `plexus_value`: Cypher values and their equality / comparison /
//! ordering rules, dates, times and durations, and the [`QueryError`] every stage raises
//! (a parse error becomes one through [`syntax_error`]). Temporal functions read "now" from
//! the statement's `StatementClock`, which `exec` keeps in its state.

pub(crate) mod column;
pub mod context;
pub mod engine;
pub mod eval;
pub mod exec;
pub mod result;

pub use context::{DEFAULT_PATH_LIMIT, INTERRUPTED, Interrupt};
pub use engine::Cursor;
pub use engine::syntax_error;
pub use plexus_jit::JitMode;
pub use plexus_plan::logical::{Procedure, ProcedureFn, ProcedureRegistry};
pub use plexus_plan::{MAX_QUERY_THREADS, ParallelConfig, Params, QUERY_THREADS_ENV};
pub use plexus_value::{ErrorClass, MapValue as CypherValueMap, Phase, QueryError, Value};
pub use result::{NodeData, QueryResult, RelData};
