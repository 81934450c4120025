//! The `var_length_bfs` pass: a variable-length expand whose paths nobody looks at, and whose
//! end nodes every consumer de-duplicates, finds the set of end nodes by a breadth-first
//! search instead of enumerating trails.
//!
//! WHY
//! ===
//! `MATCH (a {id: $s})-[:E*1..3]->(b) RETURN count(DISTINCT b)` asks for a set of nodes, but
//! openCypher's semantics are one row per *trail* (a path without a repeated relationship):
//! enumerating them costs the number of trails — exponential in the depth on a dense graph —
//! where the set costs one visit per reachable node and one look at each of their
//! relationships. With [`VarLengthSpec::ends_only`] set, the executor runs a BFS over a visited
//! set and produces each end node once per input row (`exec::expand`, DISTINCT ENDS).
//!
//! WHEN (the exact conditions, each tested against enumeration in
//! `crates/plexus/tests/var_length_bfs.rs`)
//! ===========================================================================================
//! A `VarExpand` is marked when all of these hold:
//! - it is not `shortestPath` / `allShortestPaths` (those have their own search);
//! - its lower bound is 0 or 1. (With `*2..3`, a node one hop away may still be the end of a
//!   longer trail: which nodes count depends on the trail lengths, not on the BFS distance.)
//!   With lower bound 1, not an undirected quantified group with a hop condition
//!   (`((x)-[r]-(y) WHERE y.id > x.id){1,3}`): whether the start ends a closed trail is
//!   decided by joining two BFS branches, one of them walked backwards, and such a condition
//!   may hold one way round and not the other;
//! - a *set consumer* reads its rows: an `Aggregate` whose every call gives the same answer on
//!   the set of its input rows as on the multiset — `count(DISTINCT x)`, `min(x)`, `max(x)`,
//!   or no call at all (grouping keys only, as `WITH DISTINCT`) — or a `Distinct`, or the root
//!   of an `EXISTS` subquery / pattern predicate, which only asks whether a row exists;
//! - between the consumer and the expand there are only operators that map each input row to
//!   output rows on their own, read the graph only and call no `rand()` — `Filter`,
//!   `Project`, `Expand`, other `VarExpand`s, node scans and relationship seeks, `UNWIND`,
//!   `Optional` (either side) and `HashJoin` (either side). Such an operator `f` gives the
//!   same *set* of rows on a multiset of inputs as on its set: `set(f(M)) = set(f(set(M)))`.
//!   `LIMIT`, `SKIP`, a `Sort` with a limit, a non-DISTINCT aggregate, writes and procedure
//!   calls do not, and stop the search;
//! - neither the consumer nor any of those operators reads the relationship-list slot — no
//!   path built from it, no `size(r)`, no `relationships(p)`, and no later relationship
//!   pattern of the same MATCH that must differ from its relationships (`distinct_from`).
//!
//! Then the rows the expand produces, projected on every slot but the relationship list, are
//! the distinct rows of the enumeration's: for every end node `b` other than the start `a`,
//! some trail of length in `1..max` (or `0..max`) ends at `b` iff `b`'s BFS distance from `a`
//! is in that range — a shortest walk never repeats a node, so never a relationship. The start
//! itself is an end of a trail of length ≥ 1 only over a cycle: the executor decides that
//! exactly (DISTINCT ENDS in `exec::expand`). Relationships the pattern must avoid
//! (`distinct_from`: bound earlier in the same MATCH) and relationships failing the pattern's
//! property map are removed from the graph the BFS walks, which keeps both sides equal. The
//! relationship-list slot is left null: nothing reads it.
//!
//! UNUSED PATHS
//! ============
//! A path variable (`p = (a)-[*]->(b)`) or a quantified group's node list (`x` in
//! `((x)-[r]->(y)){1,3}`) is a `Project` over the relationship list. When nothing between
//! the set consumer and that projection reads it, the pass drops the projection item, so the
//! expand under it may still become a BFS: `MATCH p = (a)-[*1..3]->(b) RETURN count(DISTINCT
//! b)`. Building a path never fails, so no error goes missing with it.
//!
//! Row order changes (BFS order instead of depth-first), which only the consumer sees, and a
//! set consumer does not depend on it — `collect(DISTINCT x)` does (its list order), so it is
//! not a set consumer here.
//!
//! UNREAD LISTS
//! ============
//! Any other variable-length expand (not a shortest path) whose relationship-list slot no
//! operator of the plan reads — no expression mentions it (a subquery expression counts its
//! outer slots), and no operator names it among the slots it reads or copies (`RETURN`
//! columns, `DISTINCT`, relationship uniqueness lists, a join's build slots, a subquery's
//! returns) — is marked [`VarLengthSpec::rels_unread`]: it still enumerates every trail (the
//! trails, not the lists, make its rows) but leaves the slot null, instead of building a list
//! value per row. `MATCH (t:Tag)-[:HAS_TYPE|IS_SUBCLASS_OF*0..]->(c:TagClass)` (SNB IC12)
//! binds an anonymous list nothing reads.

use crate::logical::{AggFunction, BExpr, LogicalPlan, calls_rand, free_slots};
use plexus_types::Direction;

/// Lets every distinct-ends expand outside a `Parallel` pipeline expand large frontiers on
/// `workers` threads (inside one, the pipeline's workers already share the cores).
pub fn parallel_frontiers(plan: &mut LogicalPlan, workers: usize) {
    match plan {
        LogicalPlan::Parallel { .. } => return,
        LogicalPlan::VarExpand { length, .. } if length.ends_only => {
            length.frontier_workers = workers.max(1);
        }
        _ => {}
    }
    for child in plan.children_mut() {
        parallel_frontiers(child, workers);
    }
}

/// Marks every variable-length expand that may run as a BFS over distinct ends (see WHEN);
/// with `exists`, the plan is an `EXISTS` subquery's, whose root is a set consumer.
pub fn mark_distinct_ends(plan: &mut LogicalPlan, exists: bool) {
    if exists {
        mark_chain(plan, Vec::new());
    }
    mark_consumers(plan);
    let mut read = Vec::new();
    slots_read(plan, &mut read);
    read.sort_unstable();
    read.dedup();
    mark_unread_lists(plan, &read);
}

/// Marks every enumerating variable-length expand whose list slot is not in `read` (see
/// UNREAD LISTS).
fn mark_unread_lists(plan: &mut LogicalPlan, read: &[usize]) {
    if let LogicalPlan::VarExpand { spec, length, .. } = plan
        && length.shortest.is_none()
        && !length.ends_only
        && read.binary_search(&spec.rel).is_err()
    {
        length.rels_unread = true;
    }
    for child in plan.children_mut() {
        mark_unread_lists(child, read);
    }
}

/// Every slot some operator of `plan` reads or copies (see UNREAD LISTS): the free slots of
/// each expression, and the slots operators name besides. Over-inclusive where unsure.
fn slots_read(plan: &LogicalPlan, read: &mut Vec<usize>) {
    for e in plan.expressions() {
        reads_into(e, read);
    }
    match plan {
        LogicalPlan::Expand { spec, .. } | LogicalPlan::VarExpand { spec, .. } => {
            read.extend([spec.from, spec.to]);
            read.extend(&spec.distinct_from);
        }
        LogicalPlan::RelationshipIndexSeek { spec, .. } => {
            read.extend([spec.left, spec.right]);
            read.extend(&spec.distinct_from);
        }
        LogicalPlan::Distinct { slots, .. } => read.extend(slots),
        LogicalPlan::Optional { nulls, .. } => read.extend(nulls),
        LogicalPlan::Apply { returns, .. } => read.extend(returns),
        LogicalPlan::HashJoin {
            build_slots,
            optional,
            ..
        } => {
            read.extend(build_slots);
            read.extend(optional.iter().flat_map(|o| &o.nulls));
        }
        LogicalPlan::Create { pattern, .. } | LogicalPlan::Merge { pattern, .. } => {
            read.extend(pattern.nodes.iter().map(|n| n.slot));
            read.extend(pattern.rels.iter().flat_map(|r| [r.slot, r.src, r.dst]));
        }
        LogicalPlan::Foreach { slot, .. } => read.push(*slot),
        LogicalPlan::ProcedureCall { yields, .. } => {
            read.extend(yields.iter().flat_map(|&(a, b)| [a, b]));
        }
        LogicalPlan::Results { columns, .. } => read.extend(columns.iter().map(|(_, s)| *s)),
        _ => {}
    }
    for child in plan.children() {
        slots_read(child, read);
    }
}

/// Finds every set consumer in `plan` and marks the expands under it.
fn mark_consumers(plan: &mut LogicalPlan) {
    match plan {
        LogicalPlan::Aggregate {
            input,
            keys,
            aggregates,
        } => {
            let set_insensitive = aggregates.iter().all(|(_, call)| {
                let distinct_count = call.function == AggFunction::Count && call.distinct;
                let extreme = matches!(call.function, AggFunction::Min | AggFunction::Max);
                (distinct_count || extreme) && !call.arg.as_ref().is_some_and(calls_rand)
            });
            if set_insensitive && !keys.iter().any(|(_, e)| calls_rand(e)) {
                let mut read = Vec::new();
                for (_, e) in keys.iter() {
                    reads_into(e, &mut read);
                }
                for (_, call) in aggregates.iter() {
                    if let Some(arg) = &call.arg {
                        reads_into(arg, &mut read);
                    }
                }
                mark_chain(input, read);
            }
        }
        LogicalPlan::Distinct { input, slots } => mark_chain(input, slots.clone()),
        _ => {}
    }
    for child in plan.children_mut() {
        mark_consumers(child);
    }
}

/// Marks the expands reachable from `plan` through row-wise operators, given the slots the
/// consumer and the operators passed on the way read.
fn mark_chain(plan: &mut LogicalPlan, mut read: Vec<usize>) {
    match plan {
        LogicalPlan::Filter { input, predicate } => {
            if calls_rand(predicate) {
                return;
            }
            reads_into(predicate, &mut read);
            mark_chain(input, read);
        }
        LogicalPlan::Project { input, items } => {
            if items.iter().any(|(_, e)| calls_rand(e)) {
                return;
            }
            // A path (or a group variable's list) nobody above reads is not computed: building
            // one cannot fail, so dropping it changes no answer (see UNUSED PATHS).
            items.retain(|(slot, e)| read.contains(slot) || !builds_path(e));
            if items.is_empty() {
                *plan = std::mem::replace(&mut **input, LogicalPlan::Argument);
                return mark_chain(plan, read);
            }
            for (_, e) in items.iter() {
                reads_into(e, &mut read);
            }
            mark_chain(input, read);
        }
        LogicalPlan::Unwind { input, expr, .. } => {
            if calls_rand(expr) {
                return;
            }
            reads_into(expr, &mut read);
            mark_chain(input, read);
        }
        LogicalPlan::Expand { input, spec, .. } => {
            read.extend([spec.from, spec.to]);
            read.extend(&spec.distinct_from);
            mark_chain(input, read);
        }
        LogicalPlan::RelationshipIndexSeek { input, spec, .. } => {
            read.extend(&spec.distinct_from);
            mark_chain(input, read);
        }
        LogicalPlan::NodeScan { input, .. } => mark_chain(input, read),
        LogicalPlan::VarExpand {
            input,
            spec,
            length,
            ..
        } => {
            // An undirected group whose hop condition depends on the hop's orientation: the
            // start's closed trails cannot be found by joining BFS branches (see WHEN).
            let oriented_hops = spec.direction == Direction::Both && length.hop_filter.is_some();
            let start_decidable = length.min == 0 || !oriented_hops;
            if length.shortest.is_none()
                && length.min <= 1
                && start_decidable
                && !read.contains(&spec.rel)
            {
                length.ends_only = true;
            }
            read.extend([spec.from, spec.to]);
            read.extend(&spec.distinct_from);
            for (_, filter) in &length.rel_filter {
                reads_into(filter, &mut read);
            }
            if let Some(hop) = &length.hop_filter {
                reads_into(&hop.predicate, &mut read);
            }
            mark_chain(input, read);
        }
        LogicalPlan::Optional { input, inner, .. } => {
            mark_chain(inner, read.clone());
            mark_chain(input, read);
        }
        LogicalPlan::HashJoin {
            input,
            build,
            keys,
            optional,
            ..
        } => {
            for (probe, built) in keys.iter() {
                reads_into(probe, &mut read);
                reads_into(built, &mut read);
            }
            if let Some(residual) = optional.as_ref().and_then(|o| o.residual.as_ref()) {
                reads_into(residual, &mut read);
            }
            mark_chain(build, read.clone());
            mark_chain(input, read);
        }
        _ => {}
    }
}

/// Whether `e` builds a path (`p = …`, a quantified group's `nodes(path)[..-1]`).
fn builds_path(e: &BExpr) -> bool {
    crate::logical::occurs(e, |e| matches!(e, BExpr::Path(_)))
}

/// Appends every slot of the row `e` reads.
fn reads_into(e: &BExpr, read: &mut Vec<usize>) {
    read.extend(free_slots(e));
}
