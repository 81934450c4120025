//! The optimizer: named passes, each a rewrite `LogicalPlan → LogicalPlan`, run in a fixed
//! order over the plan the binder built.
//!
//! THE PASSES
//! ==========
//! ```text
//!   binder's plan ─▶ join_ordering ─▶ predicate_pushdown ─▶ seek_selection ─▶ var_length_bfs
//!                 ─▶ top_k ─▶ deferred_projection ─▶ carried_reads ─▶ relationship_count
//!                 ─▶ parallelization ─▶ exec
//! ```
//! - `join_ordering` ([`join_order`]): each MATCH pattern, as the binder bound it
//!   (`LogicalPlan::Match`), becomes its scans, seeks, expands and hash joins: where each
//!   part starts, which way each relationship is expanded, and whether a disconnected part
//!   is nested or hashed, by the cost model over the statistics (the rule-based order
//!   without them). Its WHERE is left as a `Where` above them.
//! - `predicate_pushdown` ([`pushdown`]): each MATCH's WHERE, which the binder leaves as a
//!   `Where` above its pattern, becomes `Filter`s placed right above the operator binding the
//!   last variable each conjunct reads (a conjunct right above a label scan comparing a
//!   property of the scanned node also names the scan's first key seek). Bottom-up, so an
//!   earlier clause's WHERE is placed before a later one walks past it.
//! - `seek_selection` (with statistics only): every label scan takes the best key seek among
//!   the filters right above it (primary key, then secondary indexes, see [`pushdown`]).
//! - `var_length_bfs` ([`var_length`]): a variable-length expand whose relationship list
//!   nobody reads and whose rows only a de-duplicating consumer sees (`count(DISTINCT b)`,
//!   `DISTINCT`, `min`/`max`, `EXISTS`) finds its distinct end nodes by a BFS instead of
//!   enumerating trails; any other whose relationship list nothing in the plan reads
//!   enumerates without building the list (UNREAD LISTS).
//! - `top_k`: a `Sort` directly under a `LIMIT` (through an optional `SKIP`) of constant or
//!   parameter counts keeps only the first `skip + limit` rows.
//! - `deferred_projection` ([`deferred`], read-only statements only): the property reads of
//!   nodes and relationships that a top-k sort does not order by move above its LIMIT, so
//!   they are read for the rows it keeps, not for every row it sees.
//! - `carried_reads` ([`carried`], read-only statements only): a property of a hash join's
//!   build-side node or relationship that an Aggregate or Project above the join reads for
//!   every joined row is read once per build row, into a slot the join hands out.
//! - `relationship_count` ([`count`]): `MATCH ()-[r:T]->() RETURN count(*)` — an
//!   aggregate counting the rows of one unfiltered, directed expand of one type from every
//!   node — becomes a count of the type's relationships, read from its rows.
//! - `parallelization` ([`parallel`], read-only statements only): the highest eligible
//!   scan chain runs on worker threads under a `Parallel` exchange.
//!
//! INVARIANTS
//! ==========
//! - Every pass keeps the rows a plan returns, and their order where the plan fixes one:
//!   each pass's module says why its rewrite does.
//! - After `join_ordering` no plan holds a `Match`, after `predicate_pushdown` none holds a
//!   `Where` (both asserted: the executor has no operator for them).
//! - A subquery expression's plan (EXISTS, COUNT, pattern predicates and comprehensions) is
//!   complete when the binder makes it, and runs once per outer row: the binder optimizes it
//!   then ([`optimize_subquery`]), with every pass but parallelization, deferred_projection
//!   and carried_reads (which need to know the statement cannot write).
//!
//! EXPLAIN VERBOSE prints the plan as bound and after each pass ([`optimize`] with a trace).

mod carried;
pub mod count;
mod deferred;
mod join_order;
pub mod parallel;
pub mod pushdown;
pub mod var_length;

use crate::logical::{BExpr, LogicalPlan, QueryPlan, SubqueryKind, TopCount};
use parallel::ParallelConfig;
use plexus_txn::Statistics;
use std::cell::Cell;

/// What the passes may read besides the plan.
pub struct OptimizerContext<'a> {
    /// Table sizes and indexes; `None`: the rules alone (no seek selection).
    pub stats: Option<&'a Statistics>,
    pub parallel: &'a ParallelConfig,
}

/// What one pass sees of where its plan runs.
struct PassContext<'a> {
    stats: Option<&'a Statistics>,
    /// `None` in a subquery's plan and in a statement that may write: no parallelization.
    parallel: Option<&'a ParallelConfig>,
    /// The plan is an `EXISTS` subquery's: only whether it has a row matters.
    exists: bool,
    /// The statement cannot write (a subquery expression's plan is not told: `false`).
    read_only: bool,
    /// The plan's slots; a pass that adds one (`carried_reads`, read-only statements only)
    /// grows it.
    width: Cell<usize>,
}

/// One named rewrite.
struct Pass {
    name: &'static str,
    run: fn(&mut LogicalPlan, &PassContext),
}

/// The passes, in the order they run (see THE PASSES).
const PASSES: &[Pass] = &[
    Pass {
        name: "join_ordering",
        run: |plan, ctx| join_order::order_joins(plan, ctx.stats),
    },
    Pass {
        name: "predicate_pushdown",
        run: |plan, _| predicate_pushdown(plan),
    },
    Pass {
        name: "seek_selection",
        run: |plan, ctx| {
            if let Some(stats) = ctx.stats {
                seek_selection(plan, stats);
            }
        },
    },
    Pass {
        name: "var_length_bfs",
        run: |plan, ctx| var_length::mark_distinct_ends(plan, ctx.exists),
    },
    Pass {
        name: "top_k",
        run: |plan, _| top_k(plan),
    },
    Pass {
        name: "deferred_projection",
        run: |plan, ctx| {
            if ctx.read_only {
                deferred::defer_projections(plan);
            }
        },
    },
    Pass {
        name: "carried_reads",
        run: |plan, ctx| {
            if ctx.read_only {
                carried::carry_build_reads(plan, &ctx.width);
            }
        },
    },
    Pass {
        name: "relationship_count",
        run: |plan, _| count::count_relationships(plan),
    },
    Pass {
        name: "parallelization",
        run: |plan, ctx| {
            if let Some(config) = ctx.parallel {
                parallel::parallelize(plan, config);
                var_length::parallel_frontiers(plan, config.workers);
            }
        },
    },
];

/// The plan text after each step: `("bound", plan as the binder left it)`, then one entry
/// per pass, named.
pub type Trace = Vec<(&'static str, String)>;

/// Runs every pass over `plan`; with `trace`, records the plan's EXPLAIN text before the
/// first pass and after each.
pub fn optimize(plan: &mut QueryPlan, ctx: &OptimizerContext, trace: Option<&mut Trace>) {
    let read_only = !plan.may_write();
    let pass_ctx = PassContext {
        stats: ctx.stats,
        parallel: read_only.then_some(ctx.parallel),
        exists: false,
        read_only,
        width: Cell::new(plan.width),
    };
    run_passes(&mut plan.root, &pass_ctx, trace);
    plan.width = pass_ctx.width.get();
    debug_assert!(
        !holds_logical_only(&plan.root),
        "a Match survived join ordering or a Where predicate pushdown"
    );
}

/// The passes a subquery expression's plan of `kind` takes when the binder makes it (see
/// INVARIANTS): all but parallelization, which never applies inside a subquery.
pub fn optimize_subquery(plan: &mut LogicalPlan, kind: SubqueryKind, stats: Option<&Statistics>) {
    let ctx = PassContext {
        stats,
        parallel: None,
        exists: matches!(kind, SubqueryKind::Exists),
        read_only: false,
        // Unknown here: no pass adds a slot unless the statement is read-only.
        width: Cell::new(0),
    };
    run_passes(plan, &ctx, None);
}

fn run_passes(plan: &mut LogicalPlan, ctx: &PassContext, mut trace: Option<&mut Trace>) {
    let mut record = |name: &'static str, plan: &LogicalPlan| {
        if let Some(trace) = trace.as_deref_mut() {
            trace.push((name, plan.render(&|_, _| String::new())));
        }
    };
    record("bound", plan);
    for pass in PASSES {
        (pass.run)(plan, ctx);
        record(pass.name, plan);
    }
}

/// Replaces every `Where` by its conjuncts pushed down its input, bottom-up.
fn predicate_pushdown(plan: &mut LogicalPlan) {
    for child in plan.children_mut() {
        predicate_pushdown(child);
    }
    if let LogicalPlan::Where { input, predicate } = plan {
        let input = std::mem::replace(&mut **input, LogicalPlan::Argument);
        let predicate = predicate.clone();
        *plan = pushdown::push_filter(input, predicate);
    }
}

/// Every label scan's key seek, chosen from the filters right above it.
fn seek_selection(plan: &mut LogicalPlan, stats: &Statistics) {
    pushdown::choose_seeks(plan, stats, &mut Vec::new());
}

/// Gives a `Sort` under `Limit` (through an optional `Skip`) the rows it must keep, when
/// the counts are constants or parameters: evaluated once, they are the same for the sort as
/// for the limit.
fn top_k(plan: &mut LogicalPlan) {
    for child in plan.children_mut() {
        top_k(child);
    }
    let LogicalPlan::Limit { input, count, .. } = plan else {
        return;
    };
    let (sort, skip) = match input.as_mut() {
        LogicalPlan::Skip { input, count } => (input.as_mut(), Some(count.clone())),
        other => (other, None),
    };
    let stable = |e: &BExpr| matches!(e, BExpr::Const(_) | BExpr::Param(_));
    if !stable(count) || skip.as_ref().is_some_and(|s| !stable(s)) {
        return;
    }
    if let LogicalPlan::Sort { top, .. } = sort {
        *top = Some(TopCount {
            skip,
            limit: count.clone(),
        });
    }
}

/// EXPLAIN VERBOSE's text: each step's plan under a `== step ==` heading. A pass that
/// changes nothing prints `(unchanged)` instead of the same plan again.
pub fn trace_text(trace: &Trace) -> String {
    let mut out = String::new();
    let mut previous: Option<&str> = None;
    for (name, plan) in trace {
        out.push_str(&format!("== {name} ==\n"));
        if previous == Some(plan.as_str()) {
            out.push_str("(unchanged)\n");
        } else {
            out.push_str(plan);
            if !plan.ends_with('\n') {
                out.push('\n');
            }
        }
        previous = Some(plan);
    }
    out
}

fn holds_logical_only(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Where { .. } | LogicalPlan::Match { .. })
        || plan.children().into_iter().any(holds_logical_only)
}
