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
//! - none of its variables is bound already, by an earlier clause or part;
//! - the WHERE has conjuncts `x = y` ([`key`]) with one side reading only variables bound
//!   already and the other only the part's, or its property maps have entries reading only
//!   variables bound already ([`map_entry`]: `(b:P {x: i * 2})` is `b.x = i * 2`); each is a
//!   key of the join. Every other property-map entry reads only the part's own variables (or
//!   none), so the build side reads nothing of an input row; an entry reading both sides,
//!   one that cannot be listed or calls `rand()`, and one on a variable-length relationship
//!   (a per-hop filter) that reads an earlier variable keep the part nested;
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
//! both sides), and those from property maps go into a filter right above the join (they
//! left the build side's filters), so every joined row is still checked with Cypher's `=`.
//! The join itself only has to find every pair for which `=` is true, and it does: keys are
//! compared under the equivalence of `value::GroupKey`, where equal values are equivalent and
//! hash alike (`1` and `1.0`, lists and maps element by element), and a key holding null or
//! NaN anywhere, which `=` never finds equal to anything, is left out on both sides
//! (`value::can_be_equal`).
//! Keys never call `rand()` (they must give the filter the values the join saw). So the join
//! returns the rows of the nested plan: per input row, its partners in the order the build
//! side produced them (which may differ from the nested part's order when the two start at
//! different nodes; Cypher leaves it unspecified without ORDER BY). Expressions that fail on
//! some rows (type errors) may fail one plan and not the other, since the two evaluate them
//! on different rows (see `exec::join`, ERRORS).
//!
//! A property-map key, planned nested, is the filter right above the part's scan (and with an
//! index, its seek: see `pushdown`, SEEK OPERANDS); joined, it is the same equality above the
//! join:
//!
//! ```text
//!   UNWIND range(1, 10) AS i MATCH (a:P {x: i}), (b:P {x: (i * 7) % 1000 + 1})   (no index)
//!
//!   Filter s2.x = (((s0 * 7) % 1000) + 1)
//!   └ HashJoin (((s0 * 7) % 1000) + 1) = s2.x est_rows=1000
//!     └ Filter s1.x = s0
//!       └ NodeByKeySeek s1:P(x = s0) [primary key, else label scan]
//!         └ Unwind range(1, 10) AS s0
//!           └ Argument
//!     └ NodeByLabelScan s2:P                       (build side: no filter on x)
//!       └ Argument
//! ```
//!
//! Other conjuncts go where pushdown puts them: those on the part alone into the build side
//! (where an equality with a constant can become its seek), those on the input alone below
//! the join, the rest above it.
//!
//! LEFT OUTER
//! ==========
//! An OPTIONAL MATCH is an inner plan run on each input row as its argument, where hashing
//! never pays. But when it has exactly one part, and that part could be joined onto the
//! input rows by the rules above (no shared variable, keys from the WHERE or property maps,
//! the cost model's verdict with the input's estimated rows), it is planned at the outer
//! level as a `HashJoin` with `optional` set — EXPLAIN's `LeftOuterHashJoin`:
//!
//! ```text
//!   MATCH (p:Person) OPTIONAL MATCH (c:City) WHERE c.name = p.cityName AND p.age > 30
//!
//!   nested                                   left outer hash join
//!   Optional (nulls s1)                      LeftOuterHashJoin s0.cityName = s1.name
//!   └ NodeByLabelScan s0:Person                (residual s1.name = s0.cityName AND
//!     └ Argument                                s0.age > 30) (nulls s1)
//!   └ Filter s1.name = s0.cityName           └ NodeByLabelScan s0:Person   (input: probes)
//!     └ NodeByLabelScan s1:City                └ Argument
//!       └ Filter s0.age > 30                 └ NodeByLabelScan s1:City     (build side)
//!         └ Argument                           └ Argument
//! ```
//!
//! The whole WHERE belongs to the match: a row that fails it is no match, and an input row
//! without any match is kept once, its OPTIONAL MATCH variables null. So nothing of it may go
//! above the join, where it would drop rows. Its conjuncts reading only the part (and not
//! calling `rand()`) filter the build side, as in a MATCH join; every other one — the key
//! equalities, those reading the input alone or both sides — and the property-map keys
//! become the join's `residual`, checked on each (input row, partner) pair the table
//! finds. An input row keeps the partners that pass it, in build order, or else becomes one
//! null-extended row: also when its key holds null or NaN, or the build side is empty. Key
//! equivalence is exact as above, so the partners are those the nested plan finds, and the
//! rows come in the same order when the build side starts where the nested part does: input
//! order, then the part's own order (the nested part may start elsewhere, with the input's
//! variables bound — a seek —, and then order differently; Cypher leaves it unspecified).
//!
//! The plan binds the part's variables for later clauses like the `Optional` does, and a
//! later clause's conjunct reading them stays above the join (`pushdown`): it must see the
//! null-extended rows. An OPTIONAL MATCH with several parts, or one part sharing a variable
//! with the rows before it, keeps the `Optional` plan (its own parts may still join each
//! other inside it). Inside a subquery the rule is the same, on the subquery's rows: the
//! build side reads nothing of the argument row either, so `exec::join` RUNS holds.
//!
//! NOT DONE
//! ========
//! OPTIONAL MATCH of several parts against its input rows (the whole match as the build
//! side), relationship uniqueness across the sides, joins on anything but equality, bushy
//! joins (the new part is always the build side of the rows so far).

use crate::logical::{BExpr, calls_rand};
use crate::optimizer::pushdown::slots_of;
use plexus_cypher::ast::ComparisonOp;
use std::collections::HashSet;
use std::sync::Arc;

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

/// What the property-map entry `{key: value}` of the part's element in slot `element` is to a
/// join of the part (binding `part`) onto rows binding `bound`.
#[derive(Debug)]
pub(super) enum MapEntry {
    /// It reads only the part's own variables, or none: it stays in the build side.
    Own,
    /// It reads only variables bound already: `element.key = value` is a key of the join,
    /// (input side, part side), as if the WHERE held it.
    Key(BExpr, BExpr),
    /// It reads both sides, or what cannot be listed, or calls `rand()`: no join.
    Neither,
}

/// The [`MapEntry`] of `{key: value}` on the part's element in slot `element`.
pub(super) fn map_entry(
    element: usize,
    key: &Arc<str>,
    value: &BExpr,
    bound: &HashSet<usize>,
    part: &[usize],
) -> MapEntry {
    let Some(slots) = slots_of(value) else {
        return MapEntry::Neither;
    };
    if slots.iter().all(|s| part.contains(s)) {
        return MapEntry::Own;
    }
    let property = BExpr::Property(Box::new(BExpr::Slot(element)), key.clone());
    let equality = BExpr::Compare(vec![property, value.clone()], vec![ComparisonOp::Eq]);
    match self::key(&equality, bound, part) {
        Some((input, build)) => MapEntry::Key(input, build),
        None => MapEntry::Neither,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_property_map_entry_reading_earlier_variables_is_a_key() {
        let bound = HashSet::from([0]);
        let entry = |value: &BExpr| map_entry(1, &Arc::from("x"), value, &bound, &[1, 2]);
        let computed = BExpr::Arith(
            crate::logical::ArithOp::Multiply,
            Box::new(property(0, "k")),
            Box::new(BExpr::Const(plexus_value::value::Value::Int(2))),
        );
        assert_eq!(
            format!("{:?}", entry(&computed)),
            format!("{:?}", MapEntry::Key(computed.clone(), property(1, "x")))
        );
        // The part's own variables, or none: stays in the build side.
        assert!(matches!(entry(&property(2, "k")), MapEntry::Own));
        assert!(matches!(entry(&BExpr::Param("p".into())), MapEntry::Own));
        // Both sides, rand(), a variable of neither: no join.
        let both = BExpr::List(vec![property(0, "k"), property(2, "k")]);
        assert!(matches!(entry(&both), MapEntry::Neither));
        let random = BExpr::List(vec![
            property(0, "k"),
            BExpr::Call("rand".into(), Vec::new()),
        ]);
        assert!(matches!(entry(&random), MapEntry::Neither));
        assert!(matches!(entry(&property(7, "k")), MapEntry::Neither));
    }
}
