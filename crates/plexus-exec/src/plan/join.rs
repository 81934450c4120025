//! Hash joins: a pattern part that shares no variable with the rows it would be nested under
//! is planned once, on its own, and joined to them on the WHERE's equalities.
//!
//! WHY
//! ===
//! `MATCH (a:Person), (b:City) WHERE a.cityName = b.name` used to plan the City scan under
//! each Person row: people × cities rows through the filter. The City part reads nothing of a
//! Person row, so its rows are the same under every one of them: compute them once, hash them
//! by `b.name`, and look each person's `a.cityName` up.
//!
//! ```text
//!   nested                                   hash join
//!   Filter s0.cityName = s1.name             Filter s0.cityName = s1.name
//!   └ NodeByLabelScan s1:City                └ HashJoin s0.cityName = s1.name est_rows=50
//!     └ NodeByLabelScan s0:Person              └ NodeByLabelScan s0:Person    (input: probes)
//!       └ Argument                               └ Argument
//!                                              └ NodeByLabelScan s1:City      (build side)
//!                                                └ Argument
//! ```
//!
//! The same holds between clauses: in `MATCH (a:A) WITH a MATCH (b:B) WHERE a.k = b.k`, the
//! second MATCH's part is joined to the rows of everything before it.
//!
//! WHEN
//! ====
//! While a MATCH's parts are planned one after the other, a part becomes the build side of a
//! `HashJoin` on the plan so far (earlier clauses and parts: the input) when
//! - none of its variables is bound already, by an earlier clause or part, and its property
//!   maps read only its own variables: it reads nothing of an input row;
//! - the WHERE has conjuncts `x = y` ([`key`]) with one side reading only variables bound
//!   already and the other only the part's; each is a key of the join;
//! - no relationship was expanded earlier in the same MATCH, or the part has none: Cypher's
//!   relationship uniqueness between the two sides would need a check in the join;
//! - statistics are at hand and the cost model finds hashing cheaper than nesting under the
//!   estimated input rows (`cost`, HASH JOINS).
//!
//! Otherwise the part is nested, as before. The build side is the part's operators on its own
//! `Argument`, in the order the cost model picks for the part alone; it binds exactly the
//! part's variables (`build_slots`).
//!
//! EXACTNESS
//! =========
//! The equalities stay in the WHERE, which pushdown leaves right above the join (they read
//! both sides), so every joined row is still checked with Cypher's `=`. The join itself only
//! has to find every pair for which `=` is true, and it does: keys are compared under the
//! equivalence of `value::GroupKey`, where equal values are equivalent and hash alike (`1` and
//! `1.0`, lists and maps element by element), and a key holding null or NaN anywhere, which
//! `=` never finds equal to anything, is left out on both sides (`value::can_be_equal`).
//! Keys never call `rand()` (they must give the filter the values the join saw). So the join
//! returns the rows of the nested plan: per input row, its partners in the order the build
//! side produced them (which may differ from the nested part's order when the two start at
//! different nodes; Cypher leaves it unspecified without ORDER BY). Expressions that fail on
//! some rows (type errors) may fail one plan and not the other, since the two evaluate them
//! on different rows (see `exec::join`, ERRORS).
//!
//! Other conjuncts go where pushdown puts them: those on the part alone into the build side
//! (where an equality with a constant can become its seek), those on the input alone below
//! the join, the rest above it.
//!
//! NOT DONE
//! ========
//! OPTIONAL MATCH against its input rows (a left outer hash join: the inner plan of an
//! OPTIONAL MATCH runs on one argument row, where hashing never pays; its own parts still
//! join each other), relationship uniqueness across the sides, joins on anything but
//! equality, join ordering (parts are joined in pattern order, the new part always the build
//! side).

use super::build::visit_children;
use super::pushdown::slots_of;
use crate::bind::BExpr;
use plexus_cypher::ast::ComparisonOp;
use std::collections::HashSet;

/// The key `conjunct` gives a join of a part binding `part` onto rows binding `bound`:
/// (input side, part side) when it is `x = y` with one side reading only `bound` slots and the
/// other only `part` slots, each at least one, neither calling `rand()`.
pub(super) fn key(
    conjunct: &BExpr,
    bound: &HashSet<usize>,
    part: &[usize],
) -> Option<(BExpr, BExpr)> {
    let BExpr::Compare(operands, ops) = conjunct else {
        return None;
    };
    if ops.as_slice() != [ComparisonOp::Eq] {
        return None;
    }
    let [left, right] = operands.as_slice() else {
        return None;
    };
    let reads_only = |e: &BExpr, allowed: &dyn Fn(&usize) -> bool| {
        let slots = slots_of(e);
        slots.is_some_and(|s| !s.is_empty() && s.iter().all(allowed)) && !calls_rand(e)
    };
    let on_input = |e: &BExpr| reads_only(e, &|s| bound.contains(s));
    let on_part = |e: &BExpr| reads_only(e, &|s| part.contains(s));
    if on_input(left) && on_part(right) {
        Some((left.clone(), right.clone()))
    } else if on_part(left) && on_input(right) {
        Some((right.clone(), left.clone()))
    } else {
        None
    }
}

/// Whether `e` calls `rand()` anywhere in it.
fn calls_rand(e: &BExpr) -> bool {
    let mut pending = vec![e];
    while let Some(e) = pending.pop() {
        if matches!(e, BExpr::Call(name, _) if &**name == "rand") {
            return true;
        }
        visit_children(e, &mut |child| pending.push(child));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn property(slot: usize, key: &str) -> BExpr {
        BExpr::Property(Box::new(BExpr::Slot(slot)), Arc::from(key))
    }

    fn compare(left: BExpr, op: ComparisonOp, right: BExpr) -> BExpr {
        BExpr::Compare(vec![left, right], vec![op])
    }

    #[test]
    fn an_equality_between_the_sides_is_a_key_either_way_round() {
        let bound = HashSet::from([0]);
        let (a, b) = (property(0, "k"), property(1, "k"));
        let key = |c: &BExpr| super::key(c, &bound, &[1, 2]);
        let expected = Some((a.clone(), b.clone()));
        assert_eq!(
            format!(
                "{:?}",
                key(&compare(a.clone(), ComparisonOp::Eq, b.clone()))
            ),
            format!("{expected:?}")
        );
        assert_eq!(
            format!(
                "{:?}",
                key(&compare(b.clone(), ComparisonOp::Eq, a.clone()))
            ),
            format!("{expected:?}")
        );
    }

    #[test]
    fn other_conjuncts_are_no_keys() {
        let bound = HashSet::from([0]);
        let key = |c: &BExpr| super::key(c, &bound, &[1]);
        let (a, b) = (property(0, "k"), property(1, "k"));
        // Not an equality.
        assert!(key(&compare(a.clone(), ComparisonOp::Lt, b.clone())).is_none());
        // One side only.
        assert!(key(&compare(a.clone(), ComparisonOp::Eq, property(0, "j"))).is_none());
        assert!(
            key(&compare(
                b.clone(),
                ComparisonOp::Eq,
                BExpr::Param("p".into())
            ))
            .is_none()
        );
        // A side reading both, or a variable of neither.
        let both = BExpr::List(vec![a.clone(), b.clone()]);
        assert!(key(&compare(both, ComparisonOp::Eq, b.clone())).is_none());
        assert!(key(&compare(property(7, "k"), ComparisonOp::Eq, b.clone())).is_none());
        // rand().
        let random = BExpr::List(vec![a, BExpr::Call("rand".into(), Vec::new())]);
        assert!(key(&compare(random, ComparisonOp::Eq, b)).is_none());
    }
}
