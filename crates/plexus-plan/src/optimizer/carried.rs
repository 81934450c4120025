//! The `carried_reads` pass: a hash join's build side reads, once per build row, the
//! properties of its nodes and relationships that the rows above the join ask for.
//!
//! WHY
//! ===
//! `MATCH (p:P), (q:Q) WHERE p.k = q.k RETURN q.g AS g, count(*)` is planned as a hash join
//! with `:Q` as its build side, and the Aggregate above reads `q.g` for every joined row —
//! rows that come in the probe side's order, so their `q`s jump between `:Q`'s chunks and
//! each batch is sorted to be read chunk by chunk (`RowTable::typed_props_many`,
//! SCATTERED). Read instead once per `:Q` row while the table is built, in scan order, into
//! a slot the join hands out with `q`, it costs one sequential read per build row:
//!
//! ```text
//!   Aggregate s4 = s2.g, …             Aggregate s4 = s5, …
//!   └ HashJoin … build [s2]            └ HashJoin … build [s2, s5]
//!     ├ NodeByLabelScan s0:P             ├ NodeByLabelScan s0:P
//!     └ NodeByLabelScan s2:Q             └ Project s5 = s2.g
//!                                          └ NodeByLabelScan s2:Q
//! ```
//!
//! WHEN
//! ====
//! In a statement that cannot write, an Aggregate key or argument, or a Project item, that
//! is exactly `b.name` — `b` a slot an inner `HashJoin` below binds on its build side to a
//! node or a relationship (a scan, an expand, a relationship seek there) — when only
//! Filters, Projects, Expands, variable-length Expands and other hash joins (through their
//! probe side) lie between: operators that hand on each joined row, or rows made from it,
//! with its slots. Not through a Sort, Limit, Skip, Distinct or Aggregate: above those the
//! property is read for fewer rows than the build side has (a top-k's deferred reads,
//! `deferred_projection`). And only when the join is expected to hand out a row per build
//! row at least: its probe side is a label scan (through such operators) estimated at no
//! fewer rows than the build side — otherwise (an UNWIND of ten values probing a
//! thousand-row table) reading every build row's property costs more than reading it for
//! the rows joined.
//!
//! SAME ANSWERS
//! ============
//! The value read when the table is built is the value read after the join: the same
//! snapshot, and nothing in the statement writes. A property of a node or relationship
//! cannot fail, and `b` is never null in an inner join's rows. The new slot is filled on
//! every row the join hands out, and read only by the rewritten expressions above it.

use super::deferred::entity_slots;
use crate::logical::{BExpr, LogicalPlan, parallel_chain};
use std::cell::Cell;
use std::collections::HashSet;
use std::sync::Arc;

/// Rewrites every eligible property read (see WHEN), bottom-up; `width` is the plan's
/// number of slots, grown by one per property carried.
pub(super) fn carry_build_reads(plan: &mut LogicalPlan, width: &Cell<usize>) {
    for child in plan.children_mut() {
        carry_build_reads(child, width);
    }
    let (input, roots): (&mut LogicalPlan, Vec<&mut BExpr>) = match plan {
        LogicalPlan::Aggregate {
            input,
            keys,
            aggregates,
        } => {
            let keys = keys.iter_mut().map(|(_, e)| e);
            let args = (aggregates.iter_mut()).filter_map(|(_, call)| call.arg.as_mut());
            (input, keys.chain(args).collect())
        }
        LogicalPlan::Project { input, items } => {
            (input, items.iter_mut().map(|(_, e)| e).collect())
        }
        _ => return,
    };
    for root in roots {
        let BExpr::Property(base, name) = &*root else {
            continue;
        };
        let BExpr::Slot(entity) = **base else {
            continue;
        };
        if let Some(slot) = carried_slot(input, entity, name, width) {
            *root = BExpr::Slot(slot);
        }
    }
}

/// The slot carrying `entity.name` out of the hash join below `plan` (through the operators
/// WHEN allows) whose build side binds `entity`, added to that join if new; `None` when there
/// is no such join.
fn carried_slot(
    plan: &mut LogicalPlan,
    entity: usize,
    name: &Arc<str>,
    width: &Cell<usize>,
) -> Option<usize> {
    let mut node = plan;
    loop {
        node = match node {
            LogicalPlan::Filter { input, .. }
            | LogicalPlan::Project { input, .. }
            | LogicalPlan::Expand { input, .. }
            | LogicalPlan::VarExpand { input, .. } => input,
            LogicalPlan::HashJoin {
                input,
                build,
                build_slots,
                optional,
                est_rows,
                ..
            } => {
                if !build_slots.contains(&entity) {
                    node = input;
                    continue;
                }
                let mut entities = HashSet::new();
                entity_slots(build, &mut entities);
                let probed = scanned_rows(input).is_some_and(|rows| rows >= *est_rows);
                if optional.is_some() || !entities.contains(&entity) || !probed {
                    return None;
                }
                return Some(carry(build, build_slots, entity, name, width));
            }
            _ => return None,
        };
    }
}

/// The estimated rows of the label scan (no seek) at the bottom of `plan`'s chain of
/// streaming operators, if it has one: what a join probing with `plan`'s rows expects.
fn scanned_rows(plan: &LogicalPlan) -> Option<f64> {
    match parallel_chain(plan).1 {
        LogicalPlan::NodeScan {
            seek: None,
            id_seek: None,
            est_rows,
            ..
        } => *est_rows,
        _ => None,
    }
}

/// The slot the build side `build` fills with `entity.name`: the one its top Project
/// already gives it, or a new one in a Project put on top (and in `build_slots`).
fn carry(
    build: &mut Box<LogicalPlan>,
    build_slots: &mut Vec<usize>,
    entity: usize,
    name: &Arc<str>,
    width: &Cell<usize>,
) -> usize {
    let reads = |e: &BExpr| {
        matches!(e, BExpr::Property(base, n)
            if n == name && matches!(**base, BExpr::Slot(s) if s == entity))
    };
    if let LogicalPlan::Project { items, .. } = build.as_ref()
        && let Some((slot, _)) = (items.iter()).find(|(s, e)| reads(e) && build_slots.contains(s))
    {
        return *slot;
    }
    let read = BExpr::Property(Box::new(BExpr::Slot(entity)), name.clone());
    let slot = width.get();
    width.set(slot + 1);
    let below = std::mem::replace(build.as_mut(), LogicalPlan::Argument);
    **build = match below {
        LogicalPlan::Project { input, mut items } => {
            items.push((slot, read));
            LogicalPlan::Project { input, items }
        }
        below => LogicalPlan::Project {
            input: Box::new(below),
            items: vec![(slot, read)],
        },
    };
    build_slots.push(slot);
    slot
}
