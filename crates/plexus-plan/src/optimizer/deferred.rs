//! The `deferred_projection` pass: the properties a top-k sort does not order by are read
//! after it, for the rows it keeps.
//!
//! WHY
//! ===
//! `MATCH (p:P) RETURN p.id, p.w ORDER BY p.w DESC LIMIT 10` is planned as a Project of both
//! properties under the sort: every row of `:P` has `p.id` read, to keep ten. Only the sort
//! key has to be read for every row; the rest can be read once the sort has chosen:
//!
//! ```text
//!   Limit 10                           Project s1 = s0.id      (ten rows)
//!   └ Sort s2 DESC (top 10)            └ Limit 10
//!     └ Project s1 = s0.id, s2 = s0.w    └ Sort s2 DESC (top 10)
//!       └ NodeByLabelScan s0:P             └ Project s2 = s0.w
//!                                            └ NodeByLabelScan s0:P
//! ```
//!
//! WHEN
//! ====
//! A `Limit` over a top-k `Sort` (through an optional `Skip`) directly over a `Project`, in a
//! statement that cannot write. An item moves above the `Limit` when
//! - it is a property read of a slot that an operator below binds to a node or a
//!   relationship (a scan, an expand, a relationship seek): it cannot fail (a property of a
//!   node, a relationship or null), and reads the same value after the sort as before it,
//!   since nothing in the statement writes;
//! - no sort key reads the slot it fills.
//!
//! Everything else stays below the sort — an item that could fail (`p.x / 0`, `m.k` of a
//! slot that might hold a number) must fail for every row as before, whichever rows the
//! sort keeps. Rows and their order are unchanged: the moved items fill slots nothing
//! between reads, from the same row and snapshot. The `Project` below is dropped when
//! nothing is left in it.

use super::pushdown::binds;
use crate::logical::{BExpr, LogicalPlan, free_slots};
use std::collections::HashSet;

/// Moves the deferrable items of every top-k sort's `Project` above its `Limit` (see WHEN),
/// bottom-up.
pub(super) fn defer_projections(plan: &mut LogicalPlan) {
    for child in plan.children_mut() {
        defer_projections(child);
    }
    let LogicalPlan::Limit { input, .. } = plan else {
        return;
    };
    let sort = match input.as_mut() {
        LogicalPlan::Skip { input, .. } => input.as_mut(),
        other => other,
    };
    let LogicalPlan::Sort {
        input,
        keys,
        top: Some(_),
    } = sort
    else {
        return;
    };
    let LogicalPlan::Project {
        input: below,
        items,
    } = input.as_mut()
    else {
        return;
    };
    let key_slots: HashSet<usize> = keys.iter().flat_map(|k| free_slots(&k.expr)).collect();
    let mut entities = HashSet::new();
    entity_slots(below, &mut entities);
    let deferrable = |(slot, expr): &(usize, BExpr)| {
        !key_slots.contains(slot)
            && matches!(expr, BExpr::Property(base, _)
                if matches!(**base, BExpr::Slot(s) if entities.contains(&s)))
    };
    let (deferred, kept): (Vec<_>, Vec<_>) = items.drain(..).partition(deferrable);
    *items = kept;
    if deferred.is_empty() {
        return;
    }
    if items.is_empty() {
        let below = std::mem::replace(below.as_mut(), LogicalPlan::Argument);
        **input = below;
    }
    let limit = std::mem::replace(plan, LogicalPlan::Argument);
    *plan = LogicalPlan::Project {
        input: Box::new(limit),
        items: deferred,
    };
}

/// The slots the operators of `plan` bind to nodes or relationships: what they bind
/// (`pushdown::binds`), but a variable-length expand's relationship list.
pub(super) fn entity_slots(plan: &LogicalPlan, out: &mut HashSet<usize>) {
    let list = match plan {
        LogicalPlan::VarExpand { spec, .. } => Some(spec.rel),
        _ => None,
    };
    out.extend(binds(plan).into_iter().filter(|&slot| Some(slot) != list));
    for child in plan.children() {
        entity_slots(child, out);
    }
}
