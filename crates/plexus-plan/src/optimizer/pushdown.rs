//! Predicate pushdown: a MATCH's WHERE moves down the pattern's operators, conjunct by
//! conjunct, to just above the operator that binds the last variable it reads.
//!
//! For `MATCH (a:Person)-[r]->(b) WHERE a.id = $id AND b.age > 30`:
//!
//! ```text
//!   before                                 after
//!   Filter a.id = $id AND b.age > 30       Filter b.age > 30
//!   └ Expand (a)-[r]->(b)                  └ Expand (a)-[r]->(b)
//!     └ NodeScan a:Person                    └ Filter a.id = $id
//!                                              └ NodeByKeySeek a:Person(id = $id)
//! ```
//!
//! Fewer rows reach the expands, and a conjunct that lands right above a label scan and
//! compares a property of the scanned node becomes the scan's key seek.
//!
//! SEEK CHOICE
//! ===========
//! Pushdown takes the first such equality. With statistics, [`choose_seeks`] then looks at
//! every *key predicate* in the filters right above each label scan — a conjunct on one
//! property of the scanned node whose other operand is a *seek operand* (below): any
//! expression of values bound before the scan, such as `$id`, `a.x + 1` or `(i * 7) % 1000`:
//!
//! ```text
//!   n.p = v              Equal    either way round (`v = n.p`)
//!   n.p IN list          In
//!   n.p > v, >=, <, <=   Range    one side each, either way round (`v < n.p` is `n.p > v`)
//!   n.p STARTS WITH v    Prefix
//! ```
//!
//! Ranges on one property merge into one two-sided range (the first lower and the first upper
//! bound: `n.age >= 10 AND n.age < 20` is one seek). Then [`best_seek`] takes the first of
//! the best kind, in this order: on the label's primary key an equality, an `IN`
//! (`NodeByKeySeek`); on a property with a secondary index on the label an equality, an
//! `IN`, a two-sided range or prefix, a one-sided range (`NodeIndexSeek`, naming the index).
//! Primary-key indexes answer only equalities; ranges and prefixes need a secondary index.
//! The ranking follows how much of the label each kind is guessed to read (see `cost`).
//!
//! Relationship index seeks (`RelationshipIndexSeek`) are chosen with the start of their
//! pattern part (see `cost` and `build`), by [`best_rel_seek`] — the same ranking without
//! primary keys — from the relationship's property map and the WHERE conjuncts on it alone;
//! `choose_seeks` leaves them as they are.
//!
//! INVARIANT: the filters stay above the scan, whatever seek it takes. A seek only narrows
//! which nodes the scan offers, to a superset of those the filters accept, and every seek may
//! fall back to the label scan at run time (an index not ready or dropped, an operand of a
//! type the index cannot seek, such as a list or a map) — so every choice returns the same
//! rows, and seek code never needs to be exact: an index may list extra candidates (integers
//! beyond 2^53 share an `f64` key, see `plexus_storage::index`) but never miss one. Operands
//! are evaluated per input row (see SEEK OPERANDS), so a bound from an earlier clause is a
//! seek too; a null or NaN operand, or bounds of different kinds (a number and a string),
//! make the seek find nothing, as no row passes the filter then.
//!
//! SEEK OPERANDS
//! =============
//! An operand is a seek operand of the scan binding `n` ([`seek_operand`]) when it
//! - reads no `n`: it must be known before the scan, from the scan's input row;
//! - reads only slots [`slots_of`] can list: no subquery, comprehension, quantifier, `reduce`
//!   or aggregate (they are left to the filter);
//! - calls no `rand()`: evaluated once for the seek and again by the filter, it must give the
//!   same value both times.
//!
//! Then the operand has one value per input row, which the filter above sees on every row
//! the scan produces for it: the filter's rows are the input row plus `n`, and the operand
//! does not read `n`. So `UNWIND range(1, 10) AS i MATCH (b:P {x: (i * 7) % 1000 + 1})` seeks
//! `P(x = ((s0 * 7) % 1000) + 1)` once per `i`, where a label scan and filter read every `P`
//! per `i`. What pushdown places above a scan reads only slots bound below it (it places each
//! conjunct above the operator binding its last variable), and a pattern's property maps
//! read earlier variables, or variables of their own part bound later, which are null at the
//! scan as they are in the filter (`MATCH (a:P {x: b.x})-->(b)` then finds nothing either
//! way).
//!
//! How the operand's value is sought — and when it cannot be — is the executor's
//! (`exec::ops`, `lookups`): null finds nothing; a value of a type the index does not hold
//! (a string against integers) finds nothing; a value it cannot seek at all (a list, a map)
//! scans the label; an operand whose evaluation fails (`1 / 0`, `'a' * 2`) scans the label
//! too, and the filter above raises the error on the first node it checks — or never, when
//! the label is empty or another conjunct rules every node out first — as without the seek.
//!
//! ID SEEKS
//! ========
//! A conjunct `id(n) = v`, `elementId(n) = v` (either way round) or `id(n) IN list`,
//! `elementId(n) IN list` with a seek operand, placed right above the scan binding `n` —
//! labelled or not — becomes the scan's id seek (`NodeByIdSeek`): the scan produces only the
//! node each value names (an integer `table << 32 | offset` — or a float equal to one, as
//! `1 = 1.0` — for `id`, a string `v<table>:<offset>` for `elementId`), if it exists in the transaction's view and carries the
//! scan's label. Any other value — null, another type, a malformed string, a relationship's
//! `e…` id — names no node. An id seek goes before a key seek: it finds at most one node per
//! value. The filter stays above it, as for key seeks. It replaces a union of label scans
//! (`(n:A|B) WHERE id(n) = $id`): the seek's node is checked by the label expression's
//! filter, which stays above the scan.
//!
//! OR SEEKS
//! ========
//! An `OR` whose every disjunct (a conjunction) compares the same property of the same node
//! for equality with a seek operand — `a.id = x.id OR a.id = y.id`, or IC14's
//! `(a.id = s.id AND b.id = e.id) OR (a.id = e.id AND b.id = s.id)` — implies
//! `a.id IN [x.id, y.id]` ([`implied_ins`]). Pushdown gives that `IN` to the label scan
//! binding `a` as its seek when it would land right above it (it reads only `a` and what is
//! bound before), without adding it as a filter: the `OR` itself stays a filter, wherever it
//! lands, and accepts only nodes the seek finds — a union of seeks, one per value,
//! de-duplicated. The cost model sees the implied `IN` too (`join_order::conjuncts`), so a
//! pattern part may start at the node it seeks; [`choose_seeks`] weighs it against the other
//! key predicates and names the index that answers it.
//!
//! Not done: chained comparisons (`1 < n.p < 5`) and `<>` are never seeks; `ENDS WITH`,
//! `CONTAINS` and `=~` are not; an `OR` over different properties (`a.x = 1 OR a.y = 2`) is
//! not (no union of different indexes).
//!
//! WHAT MOVES, AND HOW FAR
//! =======================
//! - Only conjuncts whose variables can be listed: constants, parameters, variables,
//!   properties, comparisons, boolean and arithmetic operators, string predicates, `IN`,
//!   `IS NULL`, labels, lists, maps, CASE and function calls of those. Subqueries
//!   (pattern predicates, EXISTS), comprehensions, quantifiers and `reduce` stay where they
//!   are.
//! - A conjunct walks down through Filter, NodeScan, RelationshipIndexSeek (which binds a
//!   relationship and its two ends), Expand and variable-length expands (shortest paths
//!   included: they bind their relationship list and far end) only; any other operator
//!   (projections, the plan of an earlier clause) stops it. It stops above the first
//!   operator that binds one of its variables.
//! - At a `HashJoin` (see `join`) a conjunct reading none of the build side's variables walks
//!   on down the input; one reading only build-side variables moves into the build side (so
//!   `b.name = 'x'` filters the hash table's rows, and may become the build scan's seek); one
//!   reading both — the join's own equalities among them — stays above the join. Under a
//!   left outer join (OPTIONAL MATCH) a later clause's conjunct on the build side stays above
//!   it too: it must see the null-extended rows, and in the build side it would turn a
//!   failing partner into a null-extended row instead of dropping the row.
//! - Moving a pure predicate below operators that only drop or multiply rows does not change
//!   which rows survive; Plexus's predicates have no side effects. A conjunct may now be
//!   evaluated on rows a later operator would have dropped, so an expression that fails on
//!   some row (a type error) can fail where it would not have before — the same latitude
//!   other Cypher engines take when they reorder predicates.

use crate::logical::{
    BExpr, IdFunction, IdPredicate, IdSeek, KeySeek, LogicalPlan, PathElement, RangeBound,
    SeekPredicate, StringOp, calls_rand, split_conjuncts, visit_children,
};
use plexus_cypher::ast::ComparisonOp;
use plexus_txn::Statistics;
use std::sync::Arc;

/// `plan` with each conjunct of `predicate` placed as low as it can go (see the module doc).
pub(crate) fn push_filter(plan: LogicalPlan, predicate: BExpr) -> LogicalPlan {
    let mut conjuncts = Vec::new();
    split_conjuncts(predicate, &mut conjuncts);
    conjuncts.into_iter().fold(plan, |plan, conjunct| {
        let plan = implied_ins(&conjunct)
            .into_iter()
            .fold(plan, |plan, (slot, implied)| seek_only(plan, slot, implied));
        match slots_of(&conjunct) {
            Some(slots) => place(plan, conjunct, &slots),
            None => filter_above(plan, conjunct),
        }
    })
}

/// `plan` with the label scan binding `slot` — if `implied`, `slot.key IN [...]`, would be
/// placed right above it and it has no seek yet — seeking `implied`, without the filter
/// (see OR SEEKS).
fn seek_only(plan: LogicalPlan, slot: usize, implied: BExpr) -> LogicalPlan {
    let Some(slots) = slots_of(&implied) else {
        return plan;
    };
    place_with(plan, &slots, |mut plan| {
        if let LogicalPlan::NodeScan {
            slot: scanned,
            label: Some(_),
            seek: seek @ None,
            ..
        } = &mut plan
            && *scanned == slot
        {
            *seek = key_seeks(slot, &implied).into_iter().next();
        }
        plan
    })
}

/// For an OR of conjunctions, the `slot.key IN [v1, v2, …]` it implies (see OR SEEKS): one
/// for each property of a node that every disjunct compares for equality with a
/// [`seek_operand`].
pub(crate) fn implied_ins(predicate: &BExpr) -> Vec<(usize, BExpr)> {
    if !matches!(predicate, BExpr::Or(..)) {
        return Vec::new();
    }
    let mut disjuncts = Vec::new();
    operands_of(predicate, true, &mut disjuncts);
    let equalities: Vec<Vec<(usize, &Arc<str>, &BExpr)>> = disjuncts
        .iter()
        .map(|d| {
            let mut conjuncts = Vec::new();
            operands_of(d, false, &mut conjuncts);
            conjuncts.into_iter().filter_map(equality).collect()
        })
        .collect();
    let Some((first, rest)) = equalities.split_first() else {
        return Vec::new();
    };
    let mut implied: Vec<(usize, BExpr)> = Vec::new();
    let mut seen: Vec<(usize, &Arc<str>)> = Vec::new();
    for &(slot, key, value) in first {
        if seen.contains(&(slot, key)) {
            continue;
        }
        seen.push((slot, key));
        let property = BExpr::Property(Box::new(BExpr::Slot(slot)), key.clone());
        let mut values = vec![value.clone()];
        let in_every = rest.iter().all(|eqs| {
            let found = eqs.iter().find(|(s, k, _)| *s == slot && *k == key);
            found.map(|(_, _, v)| values.push((*v).clone())).is_some()
        });
        if in_every {
            implied.push((
                slot,
                BExpr::In(Box::new(property), Box::new(BExpr::List(values))),
            ));
        }
    }
    implied
}

/// The operands of a chain of `OR`s (`disjunction`) or of `AND`s.
fn operands_of<'a>(e: &'a BExpr, disjunction: bool, out: &mut Vec<&'a BExpr>) {
    match e {
        BExpr::Or(a, b) if disjunction => {
            operands_of(a, disjunction, out);
            operands_of(b, disjunction, out);
        }
        BExpr::And(a, b) if !disjunction => {
            operands_of(a, disjunction, out);
            operands_of(b, disjunction, out);
        }
        other => out.push(other),
    }
}

/// `slot.key = value` (either way round) with `value` a [`seek_operand`] of `slot`.
fn equality(e: &BExpr) -> Option<(usize, &Arc<str>, &BExpr)> {
    let BExpr::Compare(operands, ops) = e else {
        return None;
    };
    let ([left, right], [ComparisonOp::Eq]) = (operands.as_slice(), ops.as_slice()) else {
        return None;
    };
    [(left, right), (right, left)]
        .into_iter()
        .find_map(|(property, value)| match property {
            BExpr::Property(entity, key) => match **entity {
                BExpr::Slot(slot) if seek_operand(slot, value) => Some((slot, key, value)),
                _ => None,
            },
            _ => None,
        })
}

fn filter_above(plan: LogicalPlan, predicate: BExpr) -> LogicalPlan {
    LogicalPlan::Filter {
        input: Box::new(plan),
        predicate,
    }
}

/// Where a conjunct goes at one operator on its way down.
enum Descent {
    /// Right above this operator.
    Here,
    /// On into the operator's input.
    Input,
    /// Into a hash join's build side: the conjunct reads only the slots it binds.
    Build,
}

fn descent(plan: &LogicalPlan, slots: &[usize]) -> Descent {
    match plan {
        LogicalPlan::Filter { .. }
        | LogicalPlan::NodeScan { .. }
        | LogicalPlan::RelationshipIndexSeek { .. }
        | LogicalPlan::Expand { .. }
        | LogicalPlan::VarExpand { .. } => {
            if binds(plan).iter().any(|s| slots.contains(s)) {
                Descent::Here
            } else {
                Descent::Input
            }
        }
        LogicalPlan::HashJoin {
            build_slots,
            optional,
            ..
        } => {
            if !slots.iter().any(|s| build_slots.contains(s)) {
                Descent::Input
            } else if optional.is_none() && slots.iter().all(|s| build_slots.contains(s)) {
                Descent::Build
            } else {
                Descent::Here
            }
        }
        _ => Descent::Here,
    }
}

/// Places `conjunct` (reading `slots`) right above the highest operator of `plan` that binds
/// one of them, descending through Filter / NodeScan / Expand and through a hash join into
/// whichever side binds all of them (the build side, or the input when the build side binds
/// none). The descent is iterative: the chain is unwound into a stack of operators and
/// rebuilt around the filter.
fn place(plan: LogicalPlan, conjunct: BExpr, slots: &[usize]) -> LogicalPlan {
    place_with(plan, slots, |plan| attach(plan, conjunct))
}

/// [`place`]'s descent for something reading `slots`, with `at` applied to the operator it
/// stops above.
fn place_with(
    mut plan: LogicalPlan,
    slots: &[usize],
    at: impl FnOnce(LogicalPlan) -> LogicalPlan,
) -> LogicalPlan {
    let mut above: Vec<LogicalPlan> = Vec::new();
    let mut rebuilt = loop {
        match descent(&plan, slots) {
            Descent::Here => break at(plan),
            Descent::Input => {
                let input = take_input(&mut plan);
                above.push(plan);
                plan = input;
            }
            Descent::Build => {
                if let LogicalPlan::HashJoin { build, .. } = &mut plan {
                    let side = std::mem::replace(&mut **build, LogicalPlan::Argument);
                    **build = place_with(side, slots, at);
                }
                break plan;
            }
        }
    };
    while let Some(mut operator) = above.pop() {
        set_input(&mut operator, rebuilt);
        rebuilt = operator;
    }
    rebuilt
}

/// `Filter(conjunct)` above `plan`; a node scan without an id seek also takes the conjunct as
/// its id seek (dropping a union of label scans, see ID SEEKS), and a label scan without a
/// seek as its key seek, when it can serve as one.
fn attach(mut plan: LogicalPlan, conjunct: BExpr) -> LogicalPlan {
    if let LogicalPlan::NodeScan {
        slot,
        label,
        label_union,
        seek,
        id_seek,
        ..
    } = &mut plan
    {
        if id_seek.is_none() {
            *id_seek = node_id_seek(*slot, &conjunct);
            if id_seek.is_some() {
                label_union.clear();
            }
        }
        if label.is_some() && seek.is_none() {
            *seek = key_seek(*slot, &conjunct);
        }
    }
    filter_above(plan, conjunct)
}

/// The id seek of the scan binding `slot` that `predicate` — one conjunct — is, if any:
/// `id(slot) = value`, `elementId(slot) = value` (either way round) or `… IN list`, with
/// `value` / `list` a [`seek_operand`] (see ID SEEKS).
pub(crate) fn node_id_seek(slot: usize, predicate: &BExpr) -> Option<IdSeek> {
    match predicate {
        BExpr::Compare(operands, ops) if ops.as_slice() == [ComparisonOp::Eq] => {
            let [left, right] = operands.as_slice() else {
                return None;
            };
            let (function, value) = match (identity_of(slot, left), identity_of(slot, right)) {
                (Some(function), _) if seek_operand(slot, right) => (function, right),
                (_, Some(function)) if seek_operand(slot, left) => (function, left),
                _ => return None,
            };
            Some(IdSeek {
                function,
                predicate: IdPredicate::Equal(value.clone()),
            })
        }
        BExpr::In(item, list) => {
            let function = identity_of(slot, item)?;
            seek_operand(slot, list).then(|| IdSeek {
                function,
                predicate: IdPredicate::In((**list).clone()),
            })
        }
        _ => None,
    }
}

/// `id(slot)` → `Id`, `elementId(slot)` → `ElementId`.
fn identity_of(slot: usize, e: &BExpr) -> Option<IdFunction> {
    let BExpr::Call(name, args) = e else {
        return None;
    };
    if !matches!(args.as_slice(), [BExpr::Slot(s)] if *s == slot) {
        return None;
    }
    match &**name {
        "id" => Some(IdFunction::Id),
        "elementid" => Some(IdFunction::ElementId),
        _ => None,
    }
}

/// The slots a Filter / NodeScan / RelationshipIndexSeek / Expand / VarExpand binds (a
/// variable-length expand's relationship slot holds a list).
pub(super) fn binds(plan: &LogicalPlan) -> Vec<usize> {
    match plan {
        LogicalPlan::NodeScan { slot, .. } => vec![*slot],
        LogicalPlan::RelationshipIndexSeek { spec, .. } => vec![spec.left, spec.rel, spec.right],
        LogicalPlan::Expand { spec, .. } | LogicalPlan::VarExpand { spec, .. } => {
            vec![spec.rel, spec.to]
        }
        _ => Vec::new(),
    }
}

fn input_mut(plan: &mut LogicalPlan) -> &mut Box<LogicalPlan> {
    match plan {
        LogicalPlan::Filter { input, .. }
        | LogicalPlan::NodeScan { input, .. }
        | LogicalPlan::RelationshipIndexSeek { input, .. }
        | LogicalPlan::Expand { input, .. }
        | LogicalPlan::VarExpand { input, .. }
        | LogicalPlan::HashJoin { input, .. } => input,
        _ => unreachable!("only walkable operators are descended"),
    }
}

fn take_input(plan: &mut LogicalPlan) -> LogicalPlan {
    std::mem::replace(&mut **input_mut(plan), LogicalPlan::Argument)
}

fn set_input(plan: &mut LogicalPlan, input: LogicalPlan) {
    **input_mut(plan) = input;
}

/// The first conjunct of `predicate` of the form `slot.key = value` (either way round) whose
/// value is a [`seek_operand`].
pub(crate) fn key_seek(slot: usize, predicate: &BExpr) -> Option<KeySeek> {
    key_seeks(slot, predicate)
        .into_iter()
        .find(|seek| matches!(seek.predicate, SeekPredicate::Equal(_)))
}

/// Whether `predicate` is, as a whole, the equality `seek` answers for the scan binding
/// `slot`: one comparison `slot.key = value` (either way round) with the seek's key and the
/// seek's own operand. On the rows a seek found exactly, such a filter is true (the executor
/// then passes them without evaluating it: `exec::scan`, EXACT SEEKS).
pub fn is_seek_equality(slot: usize, predicate: &BExpr, seek: &KeySeek) -> bool {
    let SeekPredicate::Equal(operand) = &seek.predicate else {
        return false;
    };
    if !matches!(predicate, BExpr::Compare(_, ops) if ops.len() == 1) {
        return false;
    }
    // Operands are compared by their full structure (`Debug` prints every field); a plan's
    // Filters are linked to their scans once, when the plan is built.
    match &key_seeks(slot, predicate)[..] {
        [found] => {
            found.key == seek.key
                && matches!(&found.predicate, SeekPredicate::Equal(value)
                    if format!("{value:?}") == format!("{operand:?}"))
        }
        _ => false,
    }
}

/// Every conjunct of `predicate` that [`key_seek`] could pick, and those of the forms
/// `slot.key IN list`, `slot.key < bound` (`<=`, `>`, `>=`, either way round) and
/// `slot.key STARTS WITH prefix` with such operands, in order; each comparison is a one-sided
/// range ([`best_seek`] merges them).
pub(crate) fn key_seeks(slot: usize, predicate: &BExpr) -> Vec<KeySeek> {
    let mut seeks = Vec::new();
    collect_key_seeks(slot, predicate, &mut seeks);
    seeks
}

fn collect_key_seeks(slot: usize, predicate: &BExpr, seeks: &mut Vec<KeySeek>) {
    let seek = |key: &Arc<str>, predicate| KeySeek {
        key: key.clone(),
        predicate,
        index: None,
    };
    match predicate {
        BExpr::And(a, b) => {
            collect_key_seeks(slot, a, seeks);
            collect_key_seeks(slot, b, seeks);
        }
        BExpr::Compare(operands, ops) if ops.len() == 1 => {
            if let Some((key, op, value)) = property_comparison(slot, operands, ops[0])
                && let Some(predicate) = comparison_seek(op, value)
            {
                seeks.push(seek(key, predicate));
            }
        }
        BExpr::In(item, list) => {
            if let Some(key) = scanned_property(slot, item)
                && seek_operand(slot, list)
            {
                seeks.push(seek(key, SeekPredicate::In((**list).clone())));
            }
        }
        BExpr::StringOp(StringOp::StartsWith, item, prefix) => {
            if let Some(key) = scanned_property(slot, item)
                && seek_operand(slot, prefix)
            {
                seeks.push(seek(key, SeekPredicate::Prefix((**prefix).clone())));
            }
        }
        _ => {}
    }
}

/// `slot.key` → `key`.
fn scanned_property(slot: usize, e: &BExpr) -> Option<&Arc<str>> {
    match e {
        BExpr::Property(entity, key) if matches!(**entity, BExpr::Slot(s) if s == slot) => {
            Some(key)
        }
        _ => None,
    }
}

/// `[a, b]` compared by `op`, as `slot.key op value` with `value` a [`seek_operand`]
/// (the operator mirrored when the property is on the right), if it has that form.
fn property_comparison(
    slot: usize,
    operands: &[BExpr],
    op: ComparisonOp,
) -> Option<(&Arc<str>, ComparisonOp, &BExpr)> {
    let [left, right] = operands else {
        return None;
    };
    if let Some(key) = scanned_property(slot, left)
        && seek_operand(slot, right)
    {
        return Some((key, op, right));
    }
    let key = scanned_property(slot, right)?;
    let mirrored = match op {
        ComparisonOp::Lt => ComparisonOp::Gt,
        ComparisonOp::Gt => ComparisonOp::Lt,
        ComparisonOp::Le => ComparisonOp::Ge,
        ComparisonOp::Ge => ComparisonOp::Le,
        ComparisonOp::Eq | ComparisonOp::NotEq => op,
    };
    seek_operand(slot, left).then_some((key, mirrored, left))
}

/// The seek for `key op value`: an equality or a one-sided range; `<>` has none.
fn comparison_seek(op: ComparisonOp, value: &BExpr) -> Option<SeekPredicate> {
    let bound = |inclusive| {
        Some(RangeBound {
            value: value.clone(),
            inclusive,
        })
    };
    Some(match op {
        ComparisonOp::Eq => SeekPredicate::Equal(value.clone()),
        ComparisonOp::NotEq => return None,
        ComparisonOp::Gt | ComparisonOp::Ge => SeekPredicate::Range {
            lower: bound(op == ComparisonOp::Ge),
            upper: None,
        },
        ComparisonOp::Lt | ComparisonOp::Le => SeekPredicate::Range {
            lower: None,
            upper: bound(op == ComparisonOp::Le),
        },
    })
}

/// `seeks` with every range on a key merged into the first range on it, which takes the
/// first lower and the first upper bound given for the key. (Any bound would do: the
/// filters check all of them.)
fn merge_ranges(seeks: Vec<KeySeek>) -> Vec<KeySeek> {
    let mut merged: Vec<KeySeek> = Vec::with_capacity(seeks.len());
    for seek in seeks {
        let SeekPredicate::Range { lower, upper } = &seek.predicate else {
            merged.push(seek);
            continue;
        };
        let first = merged.iter_mut().find_map(|m| match &mut m.predicate {
            SeekPredicate::Range { lower, upper } if m.key == seek.key => Some((lower, upper)),
            _ => None,
        });
        match first {
            Some((first_lower, first_upper)) => {
                if first_lower.is_none() {
                    first_lower.clone_from(lower);
                }
                if first_upper.is_none() {
                    first_upper.clone_from(upper);
                }
            }
            None => merged.push(seek),
        }
    }
    merged
}

/// The kinds of seek a primary-key index answers (`=` and `IN`, ranks 0 and 1); a
/// secondary-index seek ranks after all of them.
const PRIMARY_KEY_RANKS: u8 = 2;

impl SeekPredicate {
    /// Lower is better: an equality, an `IN`, a bounded range (two sides or a prefix), a
    /// one-sided range — roughly by the share of the label each is guessed to read.
    fn rank(&self) -> u8 {
        match self {
            SeekPredicate::Equal(_) => 0,
            SeekPredicate::In(_) => 1,
            SeekPredicate::Range {
                lower: Some(_),
                upper: Some(_),
            }
            | SeekPredicate::Prefix(_) => 2,
            SeekPredicate::Range { .. } => 3,
        }
    }
}

/// The seek a label scan of `label` should use among `seeks` (its key predicates, ranges on
/// one key merged), the first of the best kind: an equality on the label's primary key, an
/// `IN` on it, then on a property with a secondary index (named in the seek) an equality, an
/// `IN`, a bounded range or prefix, a one-sided range; else `None` — leave the scan's seek as
/// it is (the primary-key indexes may still answer an equality at run time).
pub(crate) fn best_seek(stats: &Statistics, label: &str, seeks: Vec<KeySeek>) -> Option<KeySeek> {
    let primary_key = stats.label_primary_key(label);
    best_of(seeks, primary_key, |key| stats.label_index(label, key))
}

/// The seek a relationship index seek on type `rel_type` should use among `seeks` (key
/// predicates on the relationship): as [`best_seek`], without primary keys — relationships
/// have none.
pub(crate) fn best_rel_seek(
    stats: &Statistics,
    rel_type: &str,
    seeks: Vec<KeySeek>,
) -> Option<KeySeek> {
    best_of(seeks, None, |key| stats.edge_type_index(rel_type, key))
}

/// The first of the best kind among `seeks` (ranges on one key merged) on `primary_key` or
/// on a key `index` names an index for (see [`best_seek`]).
fn best_of<'s>(
    seeks: Vec<KeySeek>,
    primary_key: Option<&str>,
    index: impl Fn(&str) -> Option<&'s str>,
) -> Option<KeySeek> {
    let ranked = merge_ranges(seeks).into_iter().filter_map(|seek| {
        let rank = seek.predicate.rank();
        if Some(&*seek.key) == primary_key && rank < PRIMARY_KEY_RANKS {
            return Some((rank, seek));
        }
        let index = index(&seek.key)?;
        let seek = KeySeek {
            index: Some(Arc::from(index)),
            ..seek
        };
        Some((PRIMARY_KEY_RANKS + rank, seek))
    });
    let best = ranked.reduce(|best, next| if next.0 < best.0 { next } else { best });
    best.map(|(_, seek)| seek)
}

/// Gives every label scan in `plan` the seek [`best_seek`] picks among the key predicates of
/// the filters right above it (`above`: the predicates of the `Filter`s met since the last
/// other operator, on the way down). The filters stay, so the rows are the same with any
/// seek. A relationship index seek's seek was chosen with the start of its pattern part.
pub(crate) fn choose_seeks(plan: &mut LogicalPlan, stats: &Statistics, above: &mut Vec<BExpr>) {
    match plan {
        LogicalPlan::Filter { input, predicate } => {
            above.push(predicate.clone());
            return choose_seeks(input, stats, above);
        }
        LogicalPlan::NodeScan {
            slot,
            label: Some(label),
            seek,
            ..
        } => {
            // The filters' key predicates, the INs their ORs imply, and the seek the scan has
            // (pushdown may have placed an implied IN there without a filter: see OR SEEKS).
            let implied = above
                .iter()
                .flat_map(implied_ins)
                .filter(|(s, _)| s == slot)
                .map(|(_, e)| e)
                .collect::<Vec<_>>();
            let current = seek.clone().map(|seek| KeySeek {
                index: None,
                ..seek
            });
            let seeks = above
                .iter()
                .chain(&implied)
                .flat_map(|p| key_seeks(*slot, p))
                .chain(current)
                .collect();
            if let Some(best) = best_seek(stats, label, seeks) {
                *seek = Some(best);
            }
        }
        _ => {}
    }
    above.clear();
    for child in plan.children_mut() {
        choose_seeks(child, stats, above);
        above.clear();
    }
}

/// Whether `value` can be the operand of a seek of the scan binding `slot`: it does not read
/// `slot`, every slot it reads can be listed ([`slots_of`]: no subquery, comprehension,
/// quantifier, `reduce` or aggregate) and it calls no `rand()`. Such a value, evaluated on the
/// scan's input row, is the value the filter above sees on every row the scan produces for
/// that input row (see SEEK OPERANDS).
pub(crate) fn seek_operand(slot: usize, value: &BExpr) -> bool {
    slots_of(value).is_some_and(|slots| !slots.contains(&slot)) && !calls_rand(value)
}

/// The slots `e` reads, or `None` if it holds an expression whose reads are not listed here
/// (subqueries, comprehensions, quantifiers, `reduce`, aggregates).
pub(crate) fn slots_of(e: &BExpr) -> Option<Vec<usize>> {
    let mut slots = Vec::new();
    let mut pending: Vec<&BExpr> = vec![e];
    while let Some(e) = pending.pop() {
        match e {
            BExpr::Slot(s) => slots.push(*s),
            BExpr::Path(elements) => slots.extend(elements.iter().map(|e| match e {
                PathElement::Node(s) | PathElement::Rel(s) | PathElement::Rels(s) => *s,
            })),
            BExpr::Agg(_)
            | BExpr::ListComprehension { .. }
            | BExpr::Quantifier { .. }
            | BExpr::Reduce { .. }
            | BExpr::Subquery(_) => return None,
            other => visit_children(other, &mut |child| pending.push(child)),
        }
    }
    Some(slots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logical::ArithOp;
    use plexus_value::value::Value;

    fn property(slot: usize, key: &str) -> BExpr {
        BExpr::Property(Box::new(BExpr::Slot(slot)), Arc::from(key))
    }

    fn arith(op: ArithOp, a: BExpr, b: BExpr) -> BExpr {
        BExpr::Arith(op, Box::new(a), Box::new(b))
    }

    /// `(s0 * 7) % s2.k`: computed from two other slots.
    fn computed() -> BExpr {
        let times = arith(
            ArithOp::Multiply,
            BExpr::Slot(0),
            BExpr::Const(Value::Int(7)),
        );
        arith(ArithOp::Modulo, times, property(2, "k"))
    }

    #[test]
    fn a_deterministic_expression_of_other_slots_is_a_seek_operand() {
        assert!(seek_operand(1, &computed()));
        assert!(seek_operand(
            1,
            &BExpr::Call("tostring".into(), vec![computed()])
        ));
        // Reads the scanned node.
        let own = arith(ArithOp::Add, BExpr::Slot(0), property(1, "y"));
        assert!(!seek_operand(1, &own));
        // rand(), however deep.
        let random = BExpr::Call("rand".into(), Vec::new());
        assert!(!seek_operand(1, &arith(ArithOp::Add, computed(), random)));
        // Reads that cannot be listed (a comprehension).
        let comprehension = BExpr::ListComprehension {
            slot: 5,
            list: Box::new(BExpr::List(vec![BExpr::Slot(0)])),
            predicate: None,
            projection: None,
        };
        assert!(!seek_operand(1, &comprehension));
    }

    #[test]
    fn a_filter_is_the_seek_equality_only_when_it_is_that_comparison_alone() {
        let compare = |a: BExpr, op: ComparisonOp, b: BExpr| BExpr::Compare(vec![a, b], vec![op]);
        let equality = compare(property(1, "k"), ComparisonOp::Eq, computed());
        let seek = key_seek(1, &equality).expect("an equality seek");
        assert!(is_seek_equality(1, &equality, &seek));
        // Either way round.
        let reversed = compare(computed(), ComparisonOp::Eq, property(1, "k"));
        assert!(is_seek_equality(1, &reversed, &seek));
        // Another operand, key or scanned slot.
        let other = compare(property(1, "k"), ComparisonOp::Eq, BExpr::Slot(0));
        assert!(!is_seek_equality(1, &other, &seek));
        let other_key = compare(property(1, "j"), ComparisonOp::Eq, computed());
        assert!(!is_seek_equality(1, &other_key, &seek));
        assert!(!is_seek_equality(3, &equality, &seek));
        // The equality with more beside it, or a range.
        let more = BExpr::And(Box::new(equality.clone()), Box::new(BExpr::Slot(4)));
        assert!(!is_seek_equality(1, &more, &seek));
        let range = compare(property(1, "k"), ComparisonOp::Ge, computed());
        assert!(!is_seek_equality(1, &range, &seek));
        let range_seek = key_seeks(1, &range).pop().expect("a range seek");
        assert!(!is_seek_equality(1, &range, &range_seek));
    }

    #[test]
    fn id_and_element_id_equalities_and_in_lists_are_id_seeks() {
        let call = |name: &str, slot| BExpr::Call(name.into(), vec![BExpr::Slot(slot)]);
        let equality = |a, b| BExpr::Compare(vec![a, b], vec![ComparisonOp::Eq]);
        let seek = node_id_seek(1, &equality(computed(), call("id", 1))).expect("a seek");
        assert_eq!(seek.function, IdFunction::Id);
        assert!(matches!(seek.predicate, IdPredicate::Equal(_)));
        let within = BExpr::In(Box::new(call("elementid", 1)), Box::new(BExpr::Slot(0)));
        let seek = node_id_seek(1, &within).expect("a seek");
        assert_eq!(seek.function, IdFunction::ElementId);
        assert!(matches!(seek.predicate, IdPredicate::In(BExpr::Slot(0))));
        // Another node's id, an operand reading the node, `<>`, another function: no seek.
        assert!(node_id_seek(1, &equality(call("id", 2), computed())).is_none());
        assert!(node_id_seek(1, &equality(call("id", 1), property(1, "x"))).is_none());
        let unequal = BExpr::Compare(vec![call("id", 1), computed()], vec![ComparisonOp::NotEq]);
        assert!(node_id_seek(1, &unequal).is_none());
        assert!(node_id_seek(1, &equality(call("labels", 1), computed())).is_none());
    }

    #[test]
    fn a_computed_operand_seeks_either_way_round() {
        let equality = |a, b| BExpr::Compare(vec![a, b], vec![ComparisonOp::Eq]);
        for predicate in [
            equality(property(1, "x"), computed()),
            equality(computed(), property(1, "x")),
        ] {
            let seek = key_seek(1, &predicate).expect("a seek");
            assert_eq!(&*seek.key, "x");
            let SeekPredicate::Equal(value) = seek.predicate else {
                panic!("an equality seek");
            };
            assert_eq!(format!("{value:?}"), format!("{:?}", computed()));
        }
        let lower = BExpr::Compare(vec![computed(), property(1, "x")], vec![ComparisonOp::Lt]);
        let seeks = key_seeks(1, &lower);
        assert!(matches!(
            seeks.as_slice(),
            [KeySeek {
                predicate: SeekPredicate::Range {
                    lower: Some(_),
                    upper: None
                },
                ..
            }]
        ));
    }
}
