//! One pattern part's operators, in the order the cost model chose: its start (a scan, a
//! seek, a bound node's filter, or a relationship index seek), then its expands, each with
//! the filters of the relationship and of the node it reaches (see the pass's PATTERNS).

use super::cost::{self, Estimate, NodeShape, Order, RelShape, Start};
use super::shape::{node_shape, rel_shape};
use super::{Conjunct, Planner};
use crate::logical::{
    BExpr, BoundNode, BoundPart, ExpandSpec, KeySeek, LogicalPlan, PathElement, RelSeekSpec,
    VarLengthSpec, equalities,
};
use crate::optimizer::pushdown::{key_seek, slots_of};
use plexus_cypher::ast::ComparisonOp;
use plexus_txn::Statistics;
use std::collections::HashSet;
use std::sync::Arc;

/// How a part is planned: the order of its operators, the cost model's estimate of it (with
/// statistics), and the seek of a relationship it starts at.
pub(super) struct PartOrder {
    order: Order,
    pub(super) estimate: Option<Estimate>,
    rel_seek: Option<KeySeek>,
}

/// One expand of a part: relationship `index`, walked left to right when `rightwards`.
#[derive(Clone, Copy)]
struct Step {
    index: usize,
    rightwards: bool,
    est_rows: Option<f64>,
}

/// The path of a part with a variable, over its slots in pattern order.
pub(super) fn path_expr(part: &BoundPart) -> BExpr {
    let mut elements = vec![PathElement::Node(part.nodes[0].slot)];
    for (rel, node) in part.rels.iter().zip(&part.nodes[1..]) {
        elements.push(if rel.length.is_some() {
            PathElement::Rels(rel.slot)
        } else {
            PathElement::Rel(rel.slot)
        });
        elements.push(PathElement::Node(node.slot));
    }
    BExpr::Path(elements)
}

/// The rule-based start: a bound node, else the first node with a label, else the first
/// with a covering label set, else the first.
fn rule_start(part: &BoundPart, bound: &HashSet<usize>) -> usize {
    let nodes = &part.nodes;
    (nodes.iter().position(|n| bound.contains(&n.slot)))
        .or_else(|| nodes.iter().position(|n| !n.labels.is_empty()))
        .or_else(|| nodes.iter().position(|n| !scan_labels(n, None).is_empty()))
        .unwrap_or(0)
}

/// The labels a scan of `node` reads (see PATTERNS): its first plain label, else the covering
/// label set of its label expression, each `&` weighed by `stats` (by the set's size
/// without); none (every node) when it has neither.
pub(super) fn scan_labels(node: &BoundNode, stats: Option<&Statistics>) -> Vec<Arc<str>> {
    if let Some(label) = node.labels.first() {
        return vec![label.clone()];
    }
    let rows = |label: &str| stats.map_or(1.0, |s| s.label_vertices(label) as f64);
    let cover = node.label_cover.as_ref().and_then(|t| t.cover(&rows));
    cover.unwrap_or_default()
}

/// Whether every property value of the part reads only slots that are `allowed`.
fn properties_read_only(part: &BoundPart, allowed: impl Fn(&usize) -> bool) -> bool {
    let nodes = part.nodes.iter().flat_map(|n| &n.props);
    nodes
        .chain(part.rels.iter().flat_map(|r| &r.props))
        .all(|(_, value)| slots_of(value).is_some_and(|s| s.iter().all(&allowed)))
}

/// A scan of node `index` of the part (by [`scan_labels`]) and the filter for the rest of its
/// plain labels, its properties and its label expression; an equality on a property of the
/// node becomes a single-label scan's key seek.
fn scan_node(
    input: LogicalPlan,
    node: &BoundNode,
    est_rows: Option<f64>,
    stats: Option<&Statistics>,
) -> LogicalPlan {
    let slot = node.slot;
    let mut label_union = scan_labels(node, stats);
    let label = if label_union.len() == 1 {
        label_union.pop()
    } else {
        None
    };
    let predicate = node.predicate(1);
    let seek = label
        .as_ref()
        .and_then(|_| predicate.as_ref().and_then(|p| key_seek(slot, p)));
    let scan = LogicalPlan::NodeScan {
        input: Box::new(input),
        slot,
        label,
        label_union,
        seek,
        id_seek: None,
        est_rows,
    };
    scan.filtered(predicate)
}

/// A relationship start of a part: relationship `rel`, the seek on it, and the estimate of
/// its rows.
struct RelStart {
    rel: usize,
    seek: KeySeek,
    est_rows: Option<f64>,
}

/// A relationship index seek binding relationship `start.rel` of the part and both its ends
/// (neither bound yet), then the filters of the relationship's and the ends' labels and
/// properties — the seek's own predicate among them.
fn seek_rel(
    input: LogicalPlan,
    part: &BoundPart,
    start: RelStart,
    bound: &mut HashSet<usize>,
    expanded: &mut Vec<usize>,
) -> LogicalPlan {
    let RelStart {
        rel: index,
        seek,
        est_rows,
    } = start;
    let rel = &part.rels[index];
    let ends = [index, index + 1];
    let [left, right] = ends.map(|i| part.nodes[i].slot);
    assert!(
        !rel.prebound && !bound.contains(&left) && !bound.contains(&right),
        "a relationship index seek binds its relationship and both ends"
    );
    let [rel_type] = rel.types.as_slice() else {
        unreachable!("a relationship index seek has one type");
    };
    let spec = RelSeekSpec {
        left,
        rel: rel.slot,
        right,
        rel_type: rel_type.clone(),
        direction: rel.direction,
        seek,
        distinct_from: expanded.clone(),
    };
    let seek = LogicalPlan::RelationshipIndexSeek {
        input: Box::new(input),
        spec,
        est_rows,
    };
    let mut plan = seek.filtered(equalities(BExpr::Slot(rel.slot), &rel.props));
    for i in ends {
        plan = plan.filtered(part.nodes[i].predicate(0));
    }
    bound.extend([left, right]);
    expanded.push(rel.slot);
    plan
}

impl Planner<'_> {
    /// The order a part is expanded in (see `cost`) and, with statistics, its estimate and
    /// the seek of a relationship it starts at.
    pub(super) fn part_order(
        &self,
        part: &BoundPart,
        bound: &HashSet<usize>,
        conjuncts: &[Conjunct],
    ) -> PartOrder {
        let rule = Order {
            start: Start::Node(rule_start(part, bound)),
            rightwards_first: true,
        };
        let without_estimate = PartOrder {
            order: rule,
            estimate: None,
            rel_seek: None,
        };
        let Some(stats) = self.stats else {
            return without_estimate;
        };
        if part.shortest.is_some() {
            return without_estimate;
        }
        let nodes: Vec<NodeShape> = (0..part.nodes.len())
            .map(|i| node_shape(stats, part, i, bound, conjuncts))
            .collect();
        let (rels, mut rel_seeks): (Vec<RelShape>, Vec<Option<KeySeek>>) = (0..part.rels.len())
            .map(|i| rel_shape(stats, part, i, bound, conjuncts))
            .unzip();
        // Only property values that read variables bound before the part let any order of
        // its elements be planned.
        let order = if properties_read_only(part, |s| bound.contains(s)) {
            cost::cheapest(&nodes, &rels, rule)
        } else {
            rule
        };
        let rel_seek = match order.start {
            Start::Rel(rel) => rel_seeks[rel].take(),
            Start::Node(_) => None,
        };
        PartOrder {
            order,
            estimate: Some(cost::estimate(&nodes, &rels, order)),
            rel_seek,
        }
    }

    /// The operators of `part`, in the order `order` (from `part_order`), on `plan`.
    pub(super) fn plan_part_in_order(
        &self,
        mut plan: LogicalPlan,
        part: &BoundPart,
        order: PartOrder,
        bound: &mut HashSet<usize>,
        expanded: &mut Vec<usize>,
    ) -> LogicalPlan {
        let PartOrder {
            order,
            estimate,
            rel_seek,
        } = order;
        let est_rows = estimate.as_ref().map(|e| e.start_rows);
        plan = match (order.start, rel_seek) {
            (Start::Rel(rel), Some(seek)) => {
                let start = RelStart {
                    rel,
                    seek,
                    est_rows,
                };
                seek_rel(plan, part, start, bound, expanded)
            }
            (Start::Rel(_), None) => unreachable!("a relationship start has a seek"),
            (Start::Node(node), _) => {
                let node = &part.nodes[node];
                if bound.insert(node.slot) {
                    scan_node(plan, node, est_rows, self.stats)
                } else {
                    plan.filtered(node.predicate(0))
                }
            }
        };
        if part.shortest.is_some() {
            // A shortest path is searched between two bound ends: bind the others first.
            for node in &part.nodes {
                if bound.insert(node.slot) {
                    plan = scan_node(plan, node, None, self.stats);
                }
            }
        }
        for (i, rightwards) in order.steps(part.rels.len()) {
            let est_rows = estimate.as_ref().map(|e| e.expand_rows[i]);
            let step = Step {
                index: i,
                rightwards,
                est_rows,
            };
            plan = plan_step(plan, part, step, bound, expanded);
        }
        if let Some(path) = part.path {
            plan = LogicalPlan::Project {
                input: Box::new(plan),
                items: vec![(path, path_expr(part))],
            };
            bound.insert(path);
        }
        if !part.group_lists.is_empty() {
            bound.extend(part.group_lists.iter().map(|(slot, _)| *slot));
            plan = LogicalPlan::Project {
                input: Box::new(plan),
                items: part.group_lists.clone(),
            };
        }
        plan
    }
}

/// The expand of relationship `step.index` of the part, away from its bound end, and the
/// filters of the relationship and of the node it reaches.
fn plan_step(
    mut plan: LogicalPlan,
    part: &BoundPart,
    step: Step,
    bound: &mut HashSet<usize>,
    expanded: &mut Vec<usize>,
) -> LogicalPlan {
    let i = step.index;
    let rel = &part.rels[i];
    let (from_index, to_index) = if step.rightwards {
        (i, i + 1)
    } else {
        (i + 1, i)
    };
    let to = part.nodes[to_index].slot;
    let direction = if step.rightwards {
        rel.direction
    } else {
        rel.direction.reversed()
    };
    // A relationship bound by an earlier clause is expanded into a fresh slot and compared.
    let expand_slot = rel.expand_slot;
    debug_assert_eq!(rel.prebound, expand_slot != rel.slot);
    let spec = ExpandSpec {
        from: part.nodes[from_index].slot,
        rel: expand_slot,
        to,
        types: rel.types.clone(),
        direction,
        to_bound: bound.contains(&to),
        distinct_from: expanded.clone(),
    };
    plan = match rel.length {
        None => {
            let expand = LogicalPlan::Expand {
                input: Box::new(plan),
                spec,
                est_rows: step.est_rows,
            };
            expand.filtered(rel.predicate(BExpr::Slot(expand_slot)))
        }
        Some(length) => {
            let rel_filter = rel
                .hop_slot
                .and_then(|slot| rel.predicate(BExpr::Slot(slot)).map(|p| (slot, p)));
            let length = VarLengthSpec {
                min: length.min.unwrap_or(1),
                max: length.max,
                rel_filter: rel_filter.into_iter().collect(),
                node_filter: Vec::new(),
                hop_filter: rel.group_hop.clone(),
                path_filter: None,
                shortest: part.shortest,
                leftwards: !step.rightwards,
                ends_only: false,
                rels_unread: false,
                frontier_workers: 1,
            };
            LogicalPlan::VarExpand {
                input: Box::new(plan),
                spec,
                length,
                est_rows: step.est_rows,
            }
        }
    };
    if rel.prebound {
        plan = plan.filtered(Some(BExpr::Compare(
            vec![BExpr::Slot(expand_slot), BExpr::Slot(rel.slot)],
            vec![ComparisonOp::Eq],
        )));
    }
    expanded.push(expand_slot);
    bound.insert(to);
    plan.filtered(part.nodes[to_index].predicate(0))
}
