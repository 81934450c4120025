//! What the cost model is told about each element of a pattern part: a node's domain, the
//! seeks it allows and the selectivity of its other predicates ([`node_shape`]), the same for
//! a relationship ([`rel_shape`]), and how many rows an UNWIND's list yields
//! ([`unwind_rows`]). Split from `part` (which plans the parts from these shapes): the
//! estimates are arithmetic over statistics, the planning is about operators.

use super::Conjunct;
use super::cost::{self, NodeShape, RelShape};
use super::part::scan_labels;
use crate::logical::{
    BExpr, BoundPart, IdPredicate, KeySeek, Properties, SeekPredicate, equalities,
};
use crate::optimizer::pushdown::{best_rel_seek, best_seek, key_seeks, node_id_seek};
use plexus_cypher::ast::ComparisonOp;
use plexus_txn::{EdgeTypeStatistics, Statistics};
use plexus_types::Direction;
use plexus_value::value::Value;
use std::collections::HashSet;

/// Node `index` of the part as the cost model sees it: its domain, whether it can be sought
/// by primary key or a secondary index (an equality or `IN` in its property map or a WHERE
/// conjunct on it alone, or for an index also a range or prefix from WHERE, picked as
/// `choose_seeks` will) and how much it reads, and the selectivity of its other predicates.
pub(super) fn node_shape(
    stats: &Statistics,
    part: &BoundPart,
    index: usize,
    bound: &HashSet<usize>,
    conjuncts: &[Conjunct],
) -> NodeShape {
    let node = &part.nodes[index];
    let slot = node.slot;
    let labels = scan_labels(node, Some(stats));
    // Only a single-label scan seeks by key (a union has no index to ask).
    let label = match labels.as_slice() {
        [label] => Some(&**label),
        _ => None,
    };
    let (seek, selectivity) = element_predicates(slot, &node.props, bound, conjuncts, |seeks| {
        label.and_then(|label| best_seek(stats, label, seeks))
    });
    let key_seek = seek.as_ref().is_some_and(|s| s.index.is_none());
    let index_seek = seek.as_ref().filter(|s| s.index.is_some()).map(|s| {
        let distinct = label.and_then(|label| stats.label_index_distinct_values(label, &s.key));
        index_seek_selectivity(s, distinct)
    });
    let seek_values = seek.map_or(1.0, |seek| seek_values(&seek));
    // An id seek (see `pushdown`, ID SEEKS) finds a node per value, as a primary key does, and
    // goes before any key seek. (Its predicate stays in `selectivity`: a guess either way.)
    let id_seek = conjuncts.iter().find_map(|(c, slots)| {
        let local = slots.as_ref().is_some_and(|s| {
            s.contains(&slot) && s.iter().all(|s| *s == slot || bound.contains(s))
        });
        local.then(|| node_id_seek(slot, c)).flatten()
    });
    let (key_seek, index_seek, seek_values) = match id_seek.map(|s| s.predicate) {
        Some(IdPredicate::Equal(_)) => (true, None, 1.0),
        Some(IdPredicate::In(list)) => (true, None, in_list_values(&list)),
        None => (key_seek, index_seek, seek_values),
    };
    NodeShape {
        slot,
        bound: bound.contains(&slot),
        domain_rows: if labels.is_empty() {
            stats.vertices() as f64
        } else {
            labels.iter().map(|l| stats.label_vertices(l) as f64).sum()
        },
        key_seek,
        index_seek,
        seek_values,
        selectivity,
    }
}

/// The predicates on the element of the part in `slot` (a node or a relationship): the seek
/// `best` picks among its key predicates — from its property map `props` and the WHERE
/// conjuncts on it alone (reading no other slot but those `bound` before the part) — and the
/// selectivity of the others (see `cost`).
pub(super) fn element_predicates(
    slot: usize,
    props: &Properties,
    bound: &HashSet<usize>,
    conjuncts: &[Conjunct],
    best: impl FnOnce(Vec<KeySeek>) -> Option<KeySeek>,
) -> (Option<KeySeek>, f64) {
    let local: Vec<&BExpr> = conjuncts
        .iter()
        .filter(|(_, slots)| {
            slots.as_ref().is_some_and(|s| {
                s.contains(&slot) && s.iter().all(|s| *s == slot || bound.contains(s))
            })
        })
        .map(|(c, _)| c)
        .collect();
    let mut seeks: Vec<_> = equalities(BExpr::Slot(slot), props)
        .map(|p| key_seeks(slot, &p))
        .unwrap_or_default();
    seeks.extend(local.iter().flat_map(|c| key_seeks(slot, c)));
    let seek = best(seeks);
    let is_equality =
        |c: &BExpr| matches!(c, BExpr::Compare(_, ops) if ops.as_slice() == [ComparisonOp::Eq]);
    let local_equalities = local.iter().filter(|c| is_equality(c)).count();
    let mut others = local.len() - local_equalities;
    let mut equalities = props.len() + local_equalities;
    // The seek's own predicates are in its rows (see `cost`); each range bound is one.
    match seek.as_ref().map(|s| &s.predicate) {
        Some(SeekPredicate::Equal(_)) => equalities -= 1,
        Some(SeekPredicate::In(_) | SeekPredicate::Prefix(_)) => others -= 1,
        Some(SeekPredicate::Range { lower, upper }) => {
            others -= usize::from(lower.is_some()) + usize::from(upper.is_some());
        }
        None => {}
    }
    let selectivity = cost::EQUALITY_SELECTIVITY.powi(equalities as i32)
        * cost::PREDICATE_SELECTIVITY.powi(others as i32);
    (seek, selectivity)
}

/// How many values `seek` looks up: for `IN`, the length of a literal list, else a guess;
/// 1 for any other seek.
pub(super) fn seek_values(seek: &KeySeek) -> f64 {
    match &seek.predicate {
        SeekPredicate::In(list) => in_list_values(list),
        _ => 1.0,
    }
}

/// The length of the list of an `IN` seek: of a literal list, else a guess.
pub(super) fn in_list_values(list: &BExpr) -> f64 {
    match list {
        BExpr::List(items) => items.len() as f64,
        BExpr::Const(Value::List(items)) => items.len() as f64,
        _ => cost::IN_LIST_ESTIMATE_VALUES,
    }
}

/// The rows `UNWIND expr` makes of each input row, as estimated for hash joins: a literal
/// list's length, the length of `range()` over integer literals, else
/// [`cost::UNWIND_UNKNOWN_LIST_ROWS`] (a parameter or a computed list, which loads pass by
/// the thousand).
pub(super) fn unwind_rows(expr: &BExpr) -> f64 {
    let int = |e: &BExpr| match e {
        BExpr::Const(Value::Int(i)) => Some(*i as f64),
        _ => None,
    };
    match expr {
        BExpr::List(items) => items.len() as f64,
        BExpr::Const(Value::List(items)) => items.len() as f64,
        BExpr::Call(name, args) if &**name == "range" => {
            let bounds = args.first().and_then(int).zip(args.get(1).and_then(int));
            let step = args.get(2).map_or(Some(1.0), int).filter(|s| *s != 0.0);
            match (bounds, step) {
                (Some((start, end)), Some(step)) => ((end - start) / step + 1.0).floor().max(0.0),
                _ => cost::UNWIND_UNKNOWN_LIST_ROWS,
            }
        }
        _ => cost::UNWIND_UNKNOWN_LIST_ROWS,
    }
}

/// The fraction of its label a secondary-index seek is estimated to read (see `cost`): for an
/// equality or `IN`, one index value's share (`distinct`: the values the index holds) per
/// value looked up, else a guess.
pub(super) fn index_seek_selectivity(seek: &KeySeek, distinct: Option<u64>) -> f64 {
    let per_value = match distinct {
        Some(distinct) if distinct > 0 => 1.0 / distinct as f64,
        _ => cost::EQUALITY_SELECTIVITY,
    };
    let fraction = match &seek.predicate {
        SeekPredicate::Equal(_) | SeekPredicate::In(_) => per_value * seek_values(seek),
        SeekPredicate::Range {
            lower: Some(_),
            upper: Some(_),
        }
        | SeekPredicate::Prefix(_) => cost::BOUNDED_RANGE_SELECTIVITY,
        SeekPredicate::Range { .. } => cost::RANGE_SELECTIVITY,
    };
    fraction.min(1.0)
}

/// Relationship `index` of the part as the cost model sees it: its degrees, and — for a
/// one-hop relationship — the selectivity of its predicates and, when it can start the part
/// (one type, not bound by an earlier clause), the best seek on an index of its type (see
/// `cost`), which is returned too.
pub(super) fn rel_shape(
    stats: &Statistics,
    part: &BoundPart,
    index: usize,
    bound: &HashSet<usize>,
    conjuncts: &[Conjunct],
) -> (RelShape, Option<KeySeek>) {
    let rel = &part.rels[index];
    let types: Vec<EdgeTypeStatistics> = if rel.types.is_empty() {
        vec![stats.edge_type(None)]
    } else {
        rel.types.iter().map(|t| stats.edge_type(Some(t))).collect()
    };
    let degree = |direction| cost::degree(&types, direction);
    let degree_rightwards = degree(rel.direction);
    let degree_leftwards = degree(rel.direction.reversed());
    let hops = rel.length.map(|length| {
        let min = length.min.unwrap_or(1);
        let cap = min.max(cost::VAR_LENGTH_ESTIMATE_HOPS);
        (min, length.max.unwrap_or(cap).min(cap))
    });
    let orientations = if rel.direction == Direction::Both {
        2.0
    } else {
        1.0
    };
    let mut shape = RelShape {
        degree_rightwards,
        degree_leftwards,
        hops,
        domain_rows: types.iter().map(|t| t.edges as f64).sum::<f64>() * orientations,
        index_seek: None,
        selectivity: 1.0,
    };
    // A variable-length relationship's predicates apply to each hop: not estimated.
    if hops.is_some() {
        return (shape, None);
    }
    let seekable_type = match rel.types.as_slice() {
        [rel_type] if !rel.prebound => Some(&**rel_type),
        _ => None,
    };
    let (seek, selectivity) = element_predicates(rel.slot, &rel.props, bound, conjuncts, |seeks| {
        seekable_type.and_then(|rel_type| best_rel_seek(stats, rel_type, seeks))
    });
    shape.index_seek = seek.as_ref().map(|s| {
        let distinct = seekable_type.and_then(|t| stats.edge_type_index_distinct_values(t, &s.key));
        index_seek_selectivity(s, distinct)
    });
    shape.selectivity = selectivity;
    (shape, seek)
}
