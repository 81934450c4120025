//! Where a read-only plan runs in parallel: the `Parallel` (exchange) rewrite.
//!
//! WHAT IS WRAPPED
//! ===============
//! After planning, a statement that cannot write ([`super::QueryPlan::may_write`] false) is
//! searched from its root along the operators that run once, at the top of the query — the
//! `input` of every operator, every `Union` branch, never an inner plan (`Optional`, `Apply`,
//! `Merge`, `Foreach`, a hash join's build side, a subquery expression), which run once per
//! argument row. The highest chain found there of the form
//!
//! ```text
//!   (Project | Filter | Expand | VarLengthExpand | HashJoin)*  over  NodeScan (no seek)  over  Argument
//! ```
//!
//! (the scan of one label, of a union of labels or of all nodes: the executor scans it once,
//! on the caller's thread, and cuts the list of ids into morsels)
//!
//! whose scan the cost model estimated at [`ParallelConfig::min_scan_rows`] rows or more, and
//! whose expressions hold no subquery (EXISTS, COUNT, COLLECT, pattern comprehensions: they
//! run inner plans; kept serial to stay conservative), is wrapped in `Parallel`:
//!
//! ```text
//!   Results [n]                          Results [n]
//!   └ Aggregate s3 = count(*)            └ Aggregate s3 = count(*)
//!     └ Filter s2.age > 30        ─▶       └ Parallel workers=2 morsel=10000
//!       └ Expand (s0)-[s1]->(s2)             └ Filter s2.age > 30
//!         └ NodeByLabelScan s0:P               └ Expand (s0)-[s1]->(s2)
//!           └ Argument                           └ NodeByLabelScan s0:P
//!                                                  └ Argument
//! ```
//!
//! These operators map each input row to output rows independently of every other row, read
//! the graph only, and hold no state across rows — so running them over disjoint slices of
//! the scan and concatenating the outputs in scan order gives exactly the serial rows, in the
//! serial order (how `exec::parallel` runs it). A hash join (inner or left outer) is such a
//! stage once its table is built: the table is built once, on the caller's thread, and
//! every worker probes it (`exec::parallel`, HASH JOINS); its build side is an inner plan
//! that stays whole, and its probe keys and residual may hold no subquery, like the other
//! stages' expressions. A scan without statistics (no estimate) or with a seek, and
//! everything else (UNWIND, procedure calls, inner plans, an Aggregate, Sort or Distinct not
//! directly above such a chain) stays serial; the breaker above the `Parallel` consumes its
//! rows as before — unless the workers compute it partially (below).
//!
//! PARTIAL AGGREGATION
//! ===================
//! When the operator directly above such a chain is an `Aggregate` whose every call has a
//! [`PartialForm`] and whose keys and arguments hold no subquery, the `Parallel` goes above
//! the Aggregate instead, and EXPLAIN says so:
//!
//! ```text
//!   Results [n]                          Results [n]
//!   └ Aggregate s3 = count(*)            └ Parallel workers=2 morsel=10000 partial-aggregate
//!     └ Filter s2.age > 30        ─▶       └ Aggregate s3 = count(*)
//!       └ Expand (s0)-[s1]->(s2)             └ Filter s2.age > 30
//!         └ NodeByLabelScan s0:P               └ …
//! ```
//!
//! Each worker then aggregates the rows of its morsels itself, one partial state per morsel,
//! and the caller combines the states in morsel order (`exec::aggregate`), so the
//! aggregate's input rows never cross threads. How a call's state is combined is its
//! [`PartialForm`]:
//!
//! - `Merged` — `count(*)`, `count(x)`, `min`, `max`, `collect` without DISTINCT: the
//!   morsel's accumulator is folded into the caller's exactly (counts add, the earliest
//!   strict best wins, lists append in morsel order);
//! - `Replayed` — `sum`, `avg`, `stDev`, `stDevP` and every DISTINCT call: the worker
//!   evaluates the argument and keeps the morsel's non-null values (with DISTINCT only
//!   their first occurrences in the morsel), and the caller feeds them to its accumulator in
//!   serial order. Their states cannot be combined exactly: float addition rounds at every
//!   step, so `(a + b) + (c + d)` may differ from `((a + b) + c) + d` in the last bits; an
//!   integer sum fails on overflow at the running total serial execution reaches; DISTINCT
//!   must keep a value's first occurrence. Replaying keeps those bit for bit, at the cost of
//!   one value (not a row) per input row crossing threads;
//! - none — `percentileCont` / `percentileDisc` read a second argument from the row of
//!   their first value: an Aggregate holding one stays serial above the `Parallel`.
//!
//! PARTIAL SORTS AND DISTINCT
//! ==========================
//! Likewise for a `Sort` (ORDER BY, top-k included) or a `Distinct` (RETURN / WITH DISTINCT)
//! directly above an eligible chain — `partial-sort`, `partial-distinct` in EXPLAIN:
//!
//! ```text
//!   Results [x]                          Results [x]
//!   └ Limit 10                           └ Limit 10
//!     └ Sort s1 (top 10)          ─▶       └ Parallel workers=2 morsel=10000 partial-sort
//!       └ Project s1 = s0.x                  └ Sort s1 (top 10)
//!         └ NodeByLabelScan s0:P               └ Project s1 = s0.x
//!                                                └ …
//! ```
//!
//! - Sort: each worker sorts each morsel's rows (with a top-k it keeps the morsel's k first)
//!   and the caller merges the sorted runs, equal keys in morsel order — the serial stable
//!   order (`exec::sort`). Keys holding a subquery or calling `rand()` keep the Sort serial
//!   above the `Parallel`: the first runs inner plans, the second would draw its numbers in
//!   another order on other threads;
//! - Distinct: each worker keeps the first occurrences in each morsel, the caller those no
//!   earlier morsel had — the serial first occurrences, in the serial order
//!   (`exec::parallel`). Its slots hold no expression, so it always qualifies.
//!
//! Only the breaker directly above the chain is pushed down: in `ORDER BY` over `DISTINCT`
//! the Distinct runs partially and the Sort serially above the `Parallel` (its input is then
//! de-duplicated already, usually far smaller).
//!
//! SKIPPED CHUNKS
//! ==============
//! A partial sort with a LIMIT (a top-k) whose first key is a property of the scanned vertex
//! — `ORDER BY p.w DESC LIMIT 10` over `MATCH (p:P)`, the key written so or as a slot that
//! a projection of the chain gives `p.w`, no projection rebinding `p` — is marked on the
//! `Parallel` ([`ChunkSkip`](crate::logical::ChunkSkip), `skip-chunks(s0.w DESC)` in
//! EXPLAIN): its workers' scan leaves out the vertices of the storage chunks whose range of
//! that property is strictly behind the sort's shared bar (`exec::parallel`, SKIPPED
//! CHUNKS). The stages between may filter, expand or join: every row they make from a
//! vertex carries that vertex's key, so a vertex whose key is behind the bar yields only
//! rows behind it. Whether a chunk has a range is storage's to say at run time (a declared
//! INT64 / FLOAT64 column with no null or NaN in the chunk): the mark only says the key
//! qualifies.

use crate::logical::{LogicalPlan, SortKey, calls_rand, chunk_skip, has_subquery, partial_form};

/// Smallest estimated scan (rows) worth the threads.
pub const PARALLEL_MIN_SCAN_ROWS: f64 = 50_000.0;
/// Vertices of the scan per morsel, the unit of work a worker claims.
pub const MORSEL_VERTICES: usize = 10_000;
/// Most worker threads one `Parallel` operator may start.
pub const MAX_QUERY_THREADS: usize = 64;
/// The environment variable that sets the worker threads (`0` or `1`: all serial).
pub const QUERY_THREADS_ENV: &str = "PLEXUS_QUERY_THREADS";

/// How (and whether) read-only statements run in parallel.
#[derive(Debug, Clone, PartialEq)]
pub struct ParallelConfig {
    /// Worker threads per parallel pipeline; below 2, nothing is parallelised.
    pub workers: usize,
    /// A scan is parallelised from this estimated number of rows on.
    pub min_scan_rows: f64,
    /// Vertices per morsel.
    pub morsel_vertices: usize,
}

impl ParallelConfig {
    /// Everything on the caller's thread.
    pub fn serial() -> Self {
        ParallelConfig {
            workers: 1,
            min_scan_rows: PARALLEL_MIN_SCAN_ROWS,
            morsel_vertices: MORSEL_VERTICES,
        }
    }

    /// The default: as many workers as cores ([`available_cores`]), or
    /// `PLEXUS_QUERY_THREADS` (capped at the cores), with the default threshold and morsel
    /// size.
    pub fn from_env() -> Self {
        let cores = available_cores();
        let workers = std::env::var(QUERY_THREADS_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(cores, |n| n.min(cores));
        ParallelConfig {
            workers: workers.min(MAX_QUERY_THREADS),
            ..ParallelConfig::serial()
        }
    }

    /// Whether any plan may be parallelised under this configuration.
    pub fn enabled(&self) -> bool {
        self.workers >= 2 && self.morsel_vertices > 0
    }
}

impl Default for ParallelConfig {
    fn default() -> Self {
        ParallelConfig::from_env()
    }
}

/// Wraps the eligible pipelines of a read-only plan in `Parallel` (see module docs). The
/// caller checks that the statement cannot write.
pub fn parallelize(plan: &mut LogicalPlan, config: &ParallelConfig) {
    if !config.enabled() {
        return;
    }
    if eligible(plan, config) || computes_partially(plan, config) {
        let chain = std::mem::replace(plan, LogicalPlan::Argument);
        // What the executor's workers rely on: streaming stages over a seekless node scan of
        // the top-level argument (below at most one breaker they compute partially).
        debug_assert!({
            let stages = match &chain {
                LogicalPlan::Aggregate { input, .. }
                | LogicalPlan::Sort { input, .. }
                | LogicalPlan::Distinct { input, .. } => input,
                _ => &chain,
            };
            matches!(
                crate::logical::parallel_chain(stages).1,
                LogicalPlan::NodeScan { seek: None, id_seek: None, input, .. }
                    if matches!(**input, LogicalPlan::Argument)
            )
        });
        *plan = LogicalPlan::Parallel {
            skip_chunks: chunk_skip(&chain),
            input: Box::new(chain),
            workers: config.workers.min(MAX_QUERY_THREADS),
            morsel_vertices: config.morsel_vertices,
        };
        return;
    }
    match plan {
        LogicalPlan::Union { branches } => {
            for branch in branches {
                parallelize(branch, config);
            }
        }
        // Writes (never in a read-only plan), leaves and existing exchanges.
        LogicalPlan::Argument
        | LogicalPlan::Parallel { .. }
        | LogicalPlan::CallInTransactions { .. }
        | LogicalPlan::Create { .. }
        | LogicalPlan::Merge { .. }
        | LogicalPlan::Set { .. }
        | LogicalPlan::Delete { .. }
        | LogicalPlan::Foreach { .. } => {}
        // Every other operator's input (its first child) runs once at the top of the query;
        // its inner plans (an Apply's, a hash join's build side, ...) run per argument row.
        other => {
            if let Some(input) = other.children_mut().into_iter().next() {
                parallelize(input, config);
            }
        }
    }
}

/// Whether `plan` is a chain of streaming stages over a large enough seek-free scan (no key
/// or id seek) of the top-level argument.
fn eligible(plan: &LogicalPlan, config: &ParallelConfig) -> bool {
    let mut node = plan;
    loop {
        match node {
            LogicalPlan::NodeScan {
                input,
                seek: None,
                id_seek: None,
                est_rows: Some(rows),
                ..
            } => {
                return matches!(**input, LogicalPlan::Argument) && *rows >= config.min_scan_rows;
            }
            LogicalPlan::Expand { input, .. } => node = input,
            LogicalPlan::VarExpand { input, length, .. } => {
                let hop = length.hop_filter.as_ref().map(|h| &h.predicate);
                if length
                    .rel_filter
                    .iter()
                    .map(|(_, e)| e)
                    .chain(hop)
                    .any(has_subquery)
                {
                    return false;
                }
                node = input;
            }
            LogicalPlan::Filter { input, predicate } => {
                if has_subquery(predicate) {
                    return false;
                }
                node = input;
            }
            LogicalPlan::Project { input, items } => {
                if items.iter().any(|(_, e)| has_subquery(e)) {
                    return false;
                }
                node = input;
            }
            LogicalPlan::HashJoin {
                input,
                keys,
                optional,
                ..
            } => {
                let residual = optional.as_ref().and_then(|o| o.residual.as_ref());
                let probe_keys = keys.iter().map(|(input_key, _)| input_key);
                if probe_keys.chain(residual).any(has_subquery) {
                    return false;
                }
                node = input;
            }
            _ => return false,
        }
    }
}

/// Whether the workers can compute the breaker `plan` partially, over an eligible chain
/// directly below it (see PARTIAL AGGREGATION, PARTIAL SORTS AND DISTINCT).
fn computes_partially(plan: &LogicalPlan, config: &ParallelConfig) -> bool {
    let (plain, input) = match plan {
        LogicalPlan::Aggregate {
            input,
            keys,
            aggregates,
        } => {
            let calls_merge = aggregates.iter().all(|(_, call)| {
                partial_form(call).is_some() && call.arg.as_ref().is_none_or(|e| !has_subquery(e))
            });
            (
                calls_merge && !keys.iter().any(|(_, e)| has_subquery(e)),
                input,
            )
        }
        LogicalPlan::Sort { input, keys, .. } => {
            let plain = |k: &SortKey| !has_subquery(&k.expr) && !calls_rand(&k.expr);
            (keys.iter().all(plain), input)
        }
        LogicalPlan::Distinct { input, .. } => (true, input),
        _ => return false,
    };
    plain && eligible(input, config)
}

/// The cores this process may use, asked once: `available_parallelism` reads the cgroup
/// files under /proc on every call (tens of microseconds), and sessions ask for their
/// defaults on every request a server serves.
pub fn available_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
