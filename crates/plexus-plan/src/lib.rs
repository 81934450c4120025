//! Plexus query planning: from a parsed statement to the logical plan the executor runs.
//!
//! STAGES
//! ======
//! ```text
//!   plexus_cypher::parse ──▶ bind/      names → slots, semantic checks, the plan as written
//!                        ──▶ optimizer/ named passes LogicalPlan → LogicalPlan
//!                        ──▶ plexus_exec (physical operators over column batches)
//! ```
//! - [`logical`]: the plan and expression types ([`LogicalPlan`], [`BExpr`]) — one recursive
//!   structure, as subquery expressions hold plans — their one visitor
//!   (`children` / `children_mut`) and their EXPLAIN text. Depends on no other module here.
//! - [`bind`]: the [`Binder`](bind::Binder) resolves variables to slots, checks types and
//!   the rules the TCK names, and builds the plan clause by clause. A MATCH becomes a
//!   `Match` of its pattern as written (`logical::pattern`), its WHERE inside it: the binder
//!   chooses no order.
//! - [`optimizer`]: passes that rewrite the whole plan, in a fixed order — join ordering
//!   (where each part starts, the order of parts and expands, hash joins, by the cost
//!   model), predicate pushdown, seek selection, top-k, parallelisation — each named, so
//!   EXPLAIN VERBOSE can print the plan after each ([`optimizer::optimize`]).
//! - [`catalog`]: the scalar functions the binder knows (their code is the executor's).
//!
//! Module dependencies point one way: `bind → optimizer → logical`, `bind → catalog`. The
//! executor (`plexus_exec`) depends on this crate, never the other way round: a subquery
//! expression is a plan here and runs there.

pub mod bind;
pub mod catalog;
pub mod logical;
pub mod optimizer;

pub use bind::{Params, plan_statement};
pub use logical::{BExpr, LogicalPlan, QueryPlan};
pub use optimizer::parallel::{
    MAX_QUERY_THREADS, ParallelConfig, QUERY_THREADS_ENV, available_cores,
};
