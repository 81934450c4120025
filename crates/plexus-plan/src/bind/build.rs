//! Clause planning: the binder's walk over a query, appending operators clause by clause.
//!
//! Each clause takes the plan built so far (whose rows carry every variable in scope) and the
//! scope, and returns the extended plan:
//!
//! ```text
//!   MATCH p          → pattern operators (NodeScan / Expand / VarExpand / Filter /
//!                      HashJoin { build: a part's operators over Argument })
//!   OPTIONAL MATCH p → Optional { inner: pattern operators over Argument }, or
//!                      HashJoin { optional, build: its one part over Argument }
//!   UNWIND e AS x    → Unwind
//!   LOAD CSV …       → LoadCsv (see `load_csv`)
//!   WITH / RETURN    → [Aggregate] Project [Distinct] [Sort] [Skip] [Limit] [Filter]
//!   CREATE           → Create            SET / REMOVE → Set
//!   MERGE            → Merge { matcher: pattern operators over Argument }
//!   DELETE           → Delete            FOREACH → Foreach { body over Argument }
//!   CALL { q }       → Apply { inner: q over Argument }
//!   CALL proc()      → ProcedureCall
//! ```
//!
//! PATTERNS
//! ========
//! A pattern is planned part by part. Each part starts at one of its nodes — a node already
//! bound (by an earlier clause or part), a key seek, a label scan or an all-nodes scan — or,
//! with statistics, at a relationship found by a relationship index seek (`seek_rel`: the
//! relationship and both ends bound at once, then the filters of all three), and expands to
//! one side of it and then the other; an expand whose far end is already bound
//! checks that end instead of binding it. Every relationship expanded in one MATCH must differ
//! from those expanded before it in the same MATCH (Cypher's relationship isomorphism), which
//! Expand enforces with its `distinct_from` list, whatever the order of the expands.
//!
//! A node's plain labels (`:A:B`, and the plain conjuncts of `:A&!B`) drive its label scan;
//! the rest of a label expression (`!B`, `A|B`, `%`) is a `LabelTest` filter right above the
//! scan or expand that binds the node, so `(n:A|B)` is an all-nodes scan and a filter.
//!
//! Which node starts, and so which way each relationship is expanded, comes from the cost
//! model (`cost`) when the caller passes statistics: the pattern's property maps and the
//! MATCH's WHERE are bound before the parts are planned so that the model sees every
//! equality. Without statistics — and for `shortestPath`, which binds both ends first — the
//! rule stands: a bound node, else the first node with a label, else the first node, right
//! then left. The WHERE is then pushed down into the pattern's operators (`pushdown`), where
//! `id(n) = v` or `elementId(n) = v` (or `IN`) right above the scan of `n` becomes its id seek
//! (`pushdown`, ID SEEKS; the cost model counts it as a primary-key seek), and a
//! key equality right above a label scan — with an operand of values bound before the scan,
//! however computed (`pushdown`, SEEK OPERANDS) — becomes its seek; with statistics, each
//! label scan then takes the best of its key predicates (`choose_seeks`: primary key, else a
//! secondary index, which also answers ranges and prefixes).
//!
//! A part that shares no variable with the rows it is planned on — a disconnected part of the
//! pattern, or the first part of a later MATCH — is planned under each of those rows (a
//! nested cartesian product, which the WHERE then filters), unless the WHERE or the part's
//! property maps (`(b:P {x: a.y + 1})`) equate it with them and the cost model prefers hashing
//! it: it is then planned once, on its own, as the build side of a `HashJoin` (`join`), the
//! property-map equalities moved into a filter above the join. To judge that, the planner
//! carries an estimate of the rows of the plan so far from clause to clause (`plan_single`).
//! An OPTIONAL MATCH of one such part becomes a left outer `HashJoin` the same way
//! (`plan_optional_match`, `join` LEFT OUTER); any other runs as an inner plan per row.
//!
//! Not done yet (the optimizer's job, later): join ordering across disconnected parts and
//! across clauses (parts are planned in pattern order).

use super::cost::{self, Estimate, NodeShape, Order, RelShape, Start};
use super::join;
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::{
    AggCall, AggFunction, CreateNode, CreatePattern, CreateRel, ExpandSpec, IdPredicate, KeySeek,
    LogicalPlan, OuterJoin, QueryPlan, RelSeekSpec, SeekPredicate, SetOp, SortKey, VarLengthSpec,
};
use crate::logical::{
    BExpr, LabelTest, MAX_VAR_LENGTH_DEPTH, MapProjectionItem, PathElement, ProcedureRegistry, Ty,
    calls_rand, split_conjuncts, visit_children,
};
use crate::optimizer::pushdown::{
    best_rel_seek, best_seek, key_seek, key_seeks, node_id_seek, slots_of,
};
use plexus_cypher::ast::{
    self, ClauseKind, ComparisonOp, Expr, ExprKind, Projection, RelDirection, SetItemKind, Span,
};
use plexus_txn::{EdgeTypeStatistics, Statistics};
use plexus_types::Direction;
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// Result columns: (name, slot).
type Columns = Vec<(String, usize)>;

/// Binds and plans a parsed statement; with `stats`, each pattern part starts where the cost
/// model estimates the least work (see `cost`), else where the rules say. The plan is as
/// bound: `crate::optimizer::optimize` makes it runnable (it places the `Where`s).
pub fn plan_statement(
    statement: &ast::Statement,
    source: &str,
    params: &crate::bind::Params,
    procedures: &ProcedureRegistry,
    stats: Option<&Statistics>,
) -> Result<QueryPlan> {
    let mut binder = Binder::new(source, params, procedures, stats);
    let (root, columns) = binder.plan_top(&statement.query)?;
    let updating = std::iter::once(&statement.query.first)
        .chain(statement.query.unions.iter().map(|u| &u.query))
        .any(|q| q.clauses.iter().any(|c| clause_updates(&c.kind)));
    Ok(QueryPlan {
        root,
        width: binder.slot_types.len(),
        column_slots: columns.iter().map(|(_, slot)| *slot).collect(),
        columns: columns.into_iter().map(|(name, _)| name).collect(),
        updating,
    })
}

fn clause_updates(kind: &ClauseKind) -> bool {
    match kind {
        ClauseKind::CallSubquery(q) => std::iter::once(&q.first)
            .chain(q.unions.iter().map(|u| &u.query))
            .any(|q| q.clauses.iter().any(|c| clause_updates(&c.kind))),
        ClauseKind::CallInTransactions(call) => {
            clause_updates(&ClauseKind::CallSubquery(Box::new(call.query.clone())))
        }
        other => other.is_updating(),
    }
}

/// Slots of one pattern part's elements, in pattern order.
struct PartSlots {
    /// (slot, bound before this pattern)
    nodes: Vec<(usize, bool)>,
    rels: Vec<(usize, bool)>,
    path: Option<usize>,
}

/// What a pattern is declared for: which variable reuse is legal differs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PatternUse {
    Match,
    Create,
    Merge,
}

fn label_names(labels: &[ast::Ident]) -> Vec<Arc<str>> {
    labels.iter().map(|l| Arc::from(l.name.as_str())).collect()
}

fn chain_and(acc: Option<BExpr>, next: BExpr) -> Option<BExpr> {
    Some(match acc {
        Some(prev) => BExpr::And(Box::new(prev), Box::new(next)),
        None => next,
    })
}

/// A MATCH's WHERE (or the part of an OPTIONAL MATCH's a hash join's build side takes) over
/// its pattern, for predicate pushdown to place (`optimizer`).
fn where_(plan: LogicalPlan, predicate: Option<BExpr>) -> LogicalPlan {
    match predicate {
        Some(predicate) => LogicalPlan::Where {
            input: Box::new(plan),
            predicate,
        },
        None => plan,
    }
}

fn filter(plan: LogicalPlan, predicate: Option<BExpr>) -> LogicalPlan {
    match predicate {
        Some(predicate) => LogicalPlan::Filter {
            input: Box::new(plan),
            predicate,
        },
        None => plan,
    }
}

/// A pattern's property map, bound: (key, value) in map order.
type Properties = Vec<(Arc<str>, BExpr)>;

/// A WHERE conjunct and the slots it reads (`None`: not listable, see `pushdown`).
type Conjunct = (BExpr, Option<Vec<usize>>);

/// One pattern part being planned.
struct PartContext<'p> {
    part: &'p ast::PatternPart,
    /// Its nodes in pattern order (the start node, then each step's).
    nodes: Vec<&'p ast::NodePattern>,
    slots: &'p PartSlots,
    node_props: Vec<Properties>,
    rel_props: Vec<Properties>,
}

/// One expand of a part: relationship `index`, walked left to right when `rightwards`.
#[derive(Clone, Copy)]
struct Step {
    index: usize,
    rightwards: bool,
    est_rows: Option<f64>,
}

fn conjuncts(predicate: &BExpr) -> Vec<Conjunct> {
    let mut parts = Vec::new();
    split_conjuncts(predicate.clone(), &mut parts);
    parts
        .into_iter()
        .map(|c| {
            let slots = slots_of(&c);
            (c, slots)
        })
        .collect()
}

/// `entity.k = v AND ...` for each property, or `None` for none.
fn equalities(entity: BExpr, props: &Properties) -> Option<BExpr> {
    props.iter().fold(None, |acc, (key, value)| {
        let property = BExpr::Property(Box::new(entity.clone()), key.clone());
        chain_and(
            acc,
            BExpr::Compare(vec![property, value.clone()], vec![ComparisonOp::Eq]),
        )
    })
}

/// The filter of a node's `labels`, properties and label expression (`(n:A|B)`), in that
/// order.
fn node_predicate(
    slot: usize,
    labels: &[ast::Ident],
    label_expr: Option<&ast::LabelExpr>,
    props: &Properties,
) -> Option<BExpr> {
    let has_labels = (!labels.is_empty())
        .then(|| BExpr::HasLabels(Box::new(BExpr::Slot(slot)), label_names(labels)));
    let predicate = match (has_labels, equalities(BExpr::Slot(slot), props)) {
        (Some(l), Some(p)) => chain_and(Some(l), p),
        (l, p) => l.or(p),
    };
    match label_expr {
        None => predicate,
        Some(e) => chain_and(
            predicate,
            BExpr::LabelTest(Box::new(BExpr::Slot(slot)), Arc::new(LabelTest::bind(e))),
        ),
    }
}

/// The rule-based start: a bound node, else the first node with a label, else the first.
fn rule_start(ctx: &PartContext, bound: &HashSet<usize>) -> usize {
    let count = ctx.nodes.len();
    (0..count)
        .find(|&i| bound.contains(&ctx.slots.nodes[i].0))
        .or_else(|| (0..count).find(|&i| !ctx.nodes[i].labels.is_empty()))
        .unwrap_or(0)
}

/// Whether every property value of the part reads only slots that are `allowed`.
fn properties_read_only(ctx: &PartContext, allowed: impl Fn(&usize) -> bool) -> bool {
    ctx.node_props
        .iter()
        .chain(&ctx.rel_props)
        .flatten()
        .all(|(_, value)| slots_of(value).is_some_and(|s| s.iter().all(&allowed)))
}

/// Node `index` of the part as the cost model sees it: its domain, whether it can be sought
/// by primary key or a secondary index (an equality or `IN` in its property map or a WHERE
/// conjunct on it alone, or for an index also a range or prefix from WHERE, picked as
/// `choose_seeks` will) and how much it reads, and the selectivity of its other predicates.
fn node_shape(
    stats: &Statistics,
    ctx: &PartContext,
    index: usize,
    bound: &HashSet<usize>,
    conjuncts: &[Conjunct],
) -> NodeShape {
    let slot = ctx.slots.nodes[index].0;
    let label = ctx.nodes[index].labels.first().map(|l| l.name.as_str());
    let (seek, selectivity) =
        element_predicates(slot, &ctx.node_props[index], bound, conjuncts, |seeks| {
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
        domain_rows: match label {
            Some(label) => stats.label_vertices(label),
            None => stats.vertices(),
        } as f64,
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
fn element_predicates(
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
fn seek_values(seek: &KeySeek) -> f64 {
    match &seek.predicate {
        SeekPredicate::In(list) => in_list_values(list),
        _ => 1.0,
    }
}

/// The length of the list of an `IN` seek: of a literal list, else a guess.
fn in_list_values(list: &BExpr) -> f64 {
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
fn unwind_rows(expr: &BExpr) -> f64 {
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
fn index_seek_selectivity(seek: &KeySeek, distinct: Option<u64>) -> f64 {
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
fn rel_shape(
    stats: &Statistics,
    ctx: &PartContext,
    index: usize,
    bound: &HashSet<usize>,
    conjuncts: &[Conjunct],
) -> (RelShape, Option<KeySeek>) {
    let rel = &ctx.part.element.chain[index].relationship;
    let types: Vec<EdgeTypeStatistics> = if rel.types.is_empty() {
        vec![stats.edge_type(None)]
    } else {
        rel.types
            .iter()
            .map(|t| stats.edge_type(Some(&t.name)))
            .collect()
    };
    let degree = |direction| cost::degree(&types, direction);
    let (degree_rightwards, degree_leftwards) = match rel.direction {
        RelDirection::Outgoing => (degree(Direction::Out), degree(Direction::In)),
        RelDirection::Incoming => (degree(Direction::In), degree(Direction::Out)),
        RelDirection::Undirected => (degree(Direction::Both), degree(Direction::Both)),
    };
    let hops = rel.length.map(|length| {
        let min = length.min.unwrap_or(1);
        let cap = min.max(cost::VAR_LENGTH_ESTIMATE_HOPS);
        (min, length.max.unwrap_or(cap).min(cap))
    });
    let orientations = if rel.direction == RelDirection::Undirected {
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
    let (slot, prebound) = ctx.slots.rels[index];
    let seekable_type = match rel.types.as_slice() {
        [rel_type] if !prebound => Some(rel_type.name.as_str()),
        _ => None,
    };
    let (seek, selectivity) =
        element_predicates(slot, &ctx.rel_props[index], bound, conjuncts, |seeks| {
            seekable_type.and_then(|rel_type| best_rel_seek(stats, rel_type, seeks))
        });
    shape.index_seek = seek.as_ref().map(|s| {
        let distinct = seekable_type.and_then(|t| stats.edge_type_index_distinct_values(t, &s.key));
        index_seek_selectivity(s, distinct)
    });
    shape.selectivity = selectivity;
    (shape, seek)
}

/// A scan of node `index` of the part (by its first label, if any) and the filter for the
/// rest of its labels and properties; an equality on a property of the node becomes the
/// scan's key seek.
fn scan_node(
    input: LogicalPlan,
    ctx: &PartContext,
    index: usize,
    est_rows: Option<f64>,
) -> LogicalPlan {
    let node = ctx.nodes[index];
    let slot = ctx.slots.nodes[index].0;
    let label = node.labels.first().map(|l| Arc::from(l.name.as_str()));
    let other_labels = node.labels.get(1..).unwrap_or_default();
    let predicate = node_predicate(
        slot,
        other_labels,
        node.label_expr.as_ref(),
        &ctx.node_props[index],
    );
    let seek = label
        .as_ref()
        .and_then(|_| predicate.as_ref().and_then(|p| key_seek(slot, p)));
    let scan = LogicalPlan::NodeScan {
        input: Box::new(input),
        slot,
        label,
        seek,
        id_seek: None,
        est_rows,
    };
    filter(scan, predicate)
}

/// The first operators of a part: for a relationship start, its index seek (`rel_seek`);
/// for a node start, the scan of the node, or the filter of its labels and properties when
/// it is bound already. `start` also holds the estimated rows of the seek or scan.
fn plan_start(
    plan: LogicalPlan,
    ctx: &PartContext,
    start: (Start, Option<KeySeek>, Option<f64>),
    bound: &mut HashSet<usize>,
    expanded: &mut Vec<usize>,
) -> LogicalPlan {
    match start {
        (Start::Rel(rel), Some(seek), est_rows) => {
            let start = RelStart {
                rel,
                seek,
                est_rows,
            };
            seek_rel(plan, ctx, start, bound, expanded)
        }
        (Start::Rel(_), None, _) => unreachable!("a relationship start has a seek"),
        (Start::Node(node), _, est_rows) => {
            let slot = ctx.slots.nodes[node].0;
            if bound.insert(slot) {
                scan_node(plan, ctx, node, est_rows)
            } else {
                let pattern = ctx.nodes[node];
                let predicate = node_predicate(
                    slot,
                    &pattern.labels,
                    pattern.label_expr.as_ref(),
                    &ctx.node_props[node],
                );
                filter(plan, predicate)
            }
        }
    }
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
    ctx: &PartContext,
    start: RelStart,
    bound: &mut HashSet<usize>,
    expanded: &mut Vec<usize>,
) -> LogicalPlan {
    let RelStart {
        rel: index,
        seek,
        est_rows,
    } = start;
    let rel = &ctx.part.element.chain[index].relationship;
    let ends = [index, index + 1];
    let [left, right] = ends.map(|i| ctx.slots.nodes[i].0);
    let (rel_slot, prebound) = ctx.slots.rels[index];
    assert!(
        !prebound && !bound.contains(&left) && !bound.contains(&right),
        "a relationship index seek binds its relationship and both ends"
    );
    let [rel_type] = rel.types.as_slice() else {
        unreachable!("a relationship index seek has one type");
    };
    let spec = RelSeekSpec {
        left,
        rel: rel_slot,
        right,
        rel_type: Arc::from(rel_type.name.as_str()),
        direction: match rel.direction {
            RelDirection::Outgoing => Direction::Out,
            RelDirection::Incoming => Direction::In,
            RelDirection::Undirected => Direction::Both,
        },
        seek,
        distinct_from: expanded.clone(),
    };
    let seek = LogicalPlan::RelationshipIndexSeek {
        input: Box::new(input),
        spec,
        est_rows,
    };
    let mut plan = filter(
        seek,
        equalities(BExpr::Slot(rel_slot), &ctx.rel_props[index]),
    );
    for i in ends {
        let node = ctx.nodes[i];
        let slot = ctx.slots.nodes[i].0;
        let predicate = node_predicate(
            slot,
            &node.labels,
            node.label_expr.as_ref(),
            &ctx.node_props[i],
        );
        plan = filter(plan, predicate);
    }
    bound.extend([left, right]);
    expanded.push(rel_slot);
    plan
}

/// The path of a part with a variable, over its slots in pattern order.
fn part_path(ctx: &PartContext) -> BExpr {
    let slots = ctx.slots;
    let mut elements = vec![PathElement::Node(slots.nodes[0].0)];
    for (i, step) in ctx.part.element.chain.iter().enumerate() {
        elements.push(if step.relationship.length.is_some() {
            PathElement::Rels(slots.rels[i].0)
        } else {
            PathElement::Rel(slots.rels[i].0)
        });
        elements.push(PathElement::Node(slots.nodes[i + 1].0));
    }
    Binder::path_expr(elements)
}

/// A part chosen as the build side of a hash join: the key pairs (input side, part side) —
/// first the `map_keys` from its property maps, then those from the WHERE — the part without
/// those property-map entries (`alone`), and how it is planned on its own (with an estimate).
struct JoinChoice<'p> {
    keys: Vec<(BExpr, BExpr)>,
    map_keys: usize,
    alone: PartContext<'p>,
    part: PartOrder,
}

impl JoinChoice<'_> {
    /// The estimated rows of the build side (a join is chosen by its estimate).
    fn build_rows(&self) -> f64 {
        let estimate = self.part.estimate.as_ref();
        estimate.expect("a joined part has an estimate").rows
    }
}

/// How a part is planned: the order of its operators, the cost model's estimate of it (with
/// statistics), and the seek of a relationship it starts at.
struct PartOrder {
    order: Order,
    estimate: Option<Estimate>,
    rel_seek: Option<KeySeek>,
}

/// `ctx`'s part as the build side of a join onto rows binding `bound`: without the
/// property-map entries that read those rows, with the keys they give (input side, part side,
/// see `join::map_entry`); `None` when an entry reads both sides or cannot be a key — one
/// on a variable-length relationship is a per-hop filter, no equality on a slot.
fn split_map_keys<'p>(
    ctx: &PartContext<'p>,
    bound: &HashSet<usize>,
    part: &[usize],
) -> Option<(PartContext<'p>, Vec<(BExpr, BExpr)>)> {
    let mut keys = Vec::new();
    let mut own = |slot: usize, props: &Properties, per_hop: bool| -> Option<Properties> {
        let mut kept = Vec::new();
        for (key, value) in props {
            match join::map_entry(slot, key, value, bound, part) {
                join::MapEntry::Own => kept.push((key.clone(), value.clone())),
                join::MapEntry::Key(input, build) if !per_hop => keys.push((input, build)),
                _ => return None,
            }
        }
        Some(kept)
    };
    let node_props = (ctx.node_props.iter().enumerate())
        .map(|(i, props)| own(ctx.slots.nodes[i].0, props, false))
        .collect::<Option<Vec<_>>>()?;
    let chain = &ctx.part.element.chain;
    let rel_props = (ctx.rel_props.iter().enumerate())
        .map(|(i, props)| {
            own(
                ctx.slots.rels[i].0,
                props,
                chain[i].relationship.length.is_some(),
            )
        })
        .collect::<Option<Vec<_>>>()?;
    let alone = PartContext {
        part: ctx.part,
        nodes: ctx.nodes.clone(),
        slots: ctx.slots,
        node_props,
        rel_props,
    };
    Some((alone, keys))
}

/// The slots of the variables in `scope`.
fn bound_slots(scope: &Scope) -> HashSet<usize> {
    scope.vars().iter().map(|(_, s)| *s).collect()
}

/// The slots of a part's variables (nodes, relationships, path), sorted, each once.
fn part_slots(slots: &PartSlots) -> Vec<usize> {
    let elements = slots.nodes.iter().chain(&slots.rels).map(|(s, _)| *s);
    let mut all: Vec<usize> = elements.chain(slots.path).collect();
    all.sort_unstable();
    all.dedup();
    all
}

impl Binder<'_> {
    /// The top-level query: UNION branches into shared result slots, then `Results`.
    fn plan_top(&mut self, query: &ast::Query) -> Result<(LogicalPlan, Vec<(String, usize)>)> {
        let (plan, columns) = self.plan_union(query, &Scope::default(), None)?;
        match columns {
            Some(columns) => Ok((
                LogicalPlan::Results {
                    input: Box::new(plan),
                    columns: columns.clone(),
                },
                columns,
            )),
            None => Ok((
                LogicalPlan::Discard {
                    input: Box::new(plan),
                },
                Vec::new(),
            )),
        }
    }

    /// A query with UNIONs. `import` is the outer scope of a `CALL {}` subquery.
    pub(super) fn plan_union(
        &mut self,
        query: &ast::Query,
        outer: &Scope,
        import: Option<&Scope>,
    ) -> Result<(LogicalPlan, Option<Columns>)> {
        let (first, columns, _) = self.plan_single(&query.first, outer.clone(), import, None)?;
        if query.unions.is_empty() {
            return Ok((first, columns));
        }
        let Some(columns) = columns else {
            return Err(syntax(
                "InvalidClauseComposition",
                query.span,
                "UNION branches must end in RETURN",
            ));
        };
        let mut branches = vec![first];
        let mut distinct = false;
        for part in &query.unions {
            distinct |= !part.all;
            let (branch, branch_columns, _) =
                self.plan_single(&part.query, outer.clone(), import, Some(&columns))?;
            let names: Vec<_> = branch_columns.iter().flatten().map(|(n, _)| n).collect();
            let expected: Vec<_> = columns.iter().map(|(n, _)| n).collect();
            if names != expected {
                return Err(syntax(
                    "DifferentColumnsInUnion",
                    part.span,
                    "all sub queries in a UNION must have the same column names",
                ));
            }
            branches.push(branch);
        }
        let mut plan = LogicalPlan::Union { branches };
        if distinct {
            plan = LogicalPlan::Distinct {
                input: Box::new(plan),
                slots: columns.iter().map(|(_, s)| *s).collect(),
            };
        }
        Ok((plan, Some(columns)))
    }

    /// `EXISTS { MATCH ... }`, `COUNT { MATCH ... }` or `COLLECT { MATCH ... RETURN x }`: a
    /// correlated query over the outer scope.
    pub(crate) fn plan_nested_query(
        &mut self,
        query: &ast::Query,
        outer: &Scope,
    ) -> Result<(LogicalPlan, Option<Columns>)> {
        self.plan_union(query, outer, None)
    }

    /// One branch: its clauses in order. Returns the plan, the RETURN columns (None if the
    /// branch does not end in RETURN) and the final scope.
    fn plan_single(
        &mut self,
        query: &ast::SingleQuery,
        mut scope: Scope,
        mut import: Option<&Scope>,
        targets: Option<&[(String, usize)]>,
    ) -> Result<(LogicalPlan, Option<Columns>, Scope)> {
        let mut plan = LogicalPlan::Argument;
        // The cost model's estimate of `plan`'s rows per argument row, for hash joins (see
        // `join`): MATCH multiplies it by its estimate, UNWIND by its list's (`unwind_rows`);
        // every other clause keeps it — too high after one that drops rows (WITH ... WHERE,
        // LIMIT), too low after one whose rows are not estimated (OPTIONAL MATCH, MERGE,
        // CALL), where it then never makes a hash join look cheaper than it is.
        let mut rows = Some(1.0);
        let mut columns = None;
        for clause in &query.clauses {
            let import_scope = import.take();
            if clause_updates(&clause.kind) {
                self.updating_seen = true;
            }
            match &clause.kind {
                ClauseKind::Match(m) => {
                    (plan, rows) = self.plan_match(plan, rows, &mut scope, m)?;
                }
                ClauseKind::Unwind(u) => {
                    let expr = self.bind_expr(&u.expr, &scope, ExprCtx::PLAIN)?;
                    if scope.get(&u.variable.name).is_some() {
                        return Err(already_bound(&u.variable));
                    }
                    let slot = self.new_slot(Ty::Any, u.variable.span)?;
                    scope.insert(&u.variable.name, slot);
                    rows = rows.map(|rows| rows * unwind_rows(&expr));
                    plan = LogicalPlan::Unwind {
                        input: Box::new(plan),
                        expr,
                        slot,
                    };
                }
                ClauseKind::LoadCsv(load) => {
                    plan = self.plan_load_csv(plan, &mut scope, load)?;
                    rows = rows.map(|rows| rows * super::load_csv::LOAD_CSV_ESTIMATE_ROWS);
                }
                ClauseKind::With(w) => {
                    let source = import_scope.unwrap_or(&scope).clone();
                    let (p, s, _) = self.plan_projection(
                        plan,
                        &source,
                        &w.projection,
                        w.predicate.as_ref(),
                        false,
                        None,
                    )?;
                    plan = p;
                    scope = s;
                }
                ClauseKind::Return(r) => {
                    let (p, s, cols) =
                        self.plan_projection(plan, &scope, &r.projection, None, true, targets)?;
                    plan = p;
                    scope = s;
                    columns = Some(cols);
                }
                ClauseKind::Create(c) => {
                    let slots =
                        self.declare_pattern(&mut scope, &c.pattern.parts, PatternUse::Create)?;
                    let pattern = self.create_pattern(&scope, &c.pattern.parts, &slots)?;
                    plan = LogicalPlan::Create {
                        input: Box::new(plan),
                        pattern,
                    };
                }
                ClauseKind::Merge(m) => {
                    plan = self.plan_merge(plan, &mut scope, m)?;
                }
                ClauseKind::Set(s) => {
                    let ops = self.bind_set_items(&s.items, &scope)?;
                    plan = LogicalPlan::Set {
                        input: Box::new(plan),
                        ops,
                    };
                }
                ClauseKind::Remove(r) => {
                    let mut ops = Vec::new();
                    for item in &r.items {
                        ops.push(match &item.kind {
                            ast::RemoveItemKind::Property { entity, key } => SetOp::Property {
                                entity: self.bind_expr(entity, &scope, ExprCtx::PLAIN)?,
                                key: Arc::from(key.name.as_str()),
                                value: BExpr::Const(Value::Null),
                            },
                            ast::RemoveItemKind::Labels { variable, labels } => SetOp::Labels {
                                entity: BExpr::Slot(self.lookup(&scope, variable)?),
                                labels: label_names(labels),
                                add: false,
                            },
                        });
                    }
                    plan = LogicalPlan::Set {
                        input: Box::new(plan),
                        ops,
                    };
                }
                ClauseKind::Delete(d) => {
                    let mut exprs = Vec::new();
                    for e in &d.exprs {
                        let bound = self.bind_expr(e, &scope, ExprCtx::PLAIN)?;
                        let ty = self.static_type(&bound);
                        if matches!(
                            e.kind,
                            ExprKind::HasLabels { .. } | ExprKind::LabelTest { .. }
                        ) {
                            return Err(syntax(
                                "InvalidDelete",
                                e.span,
                                "DELETE expects nodes, relationships or paths, not a label predicate",
                            ));
                        }
                        if matches!(ty, Ty::Bool | Ty::Int | Ty::Float | Ty::String | Ty::Map) {
                            return Err(syntax(
                                "InvalidArgumentType",
                                e.span,
                                format!(
                                    "DELETE expects nodes, relationships or paths, not {}",
                                    ty.name()
                                ),
                            ));
                        }
                        exprs.push(bound);
                    }
                    plan = LogicalPlan::Delete {
                        input: Box::new(plan),
                        exprs,
                        detach: d.detach,
                    };
                }
                ClauseKind::Call(call) => {
                    let standalone = query.clauses.len() == 1;
                    let (p, cols) =
                        self.plan_procedure(plan, &mut scope, call, clause.span, standalone)?;
                    plan = p;
                    if standalone {
                        columns = cols.filter(|c| !c.is_empty());
                    }
                }
                ClauseKind::CallSubquery(inner) => {
                    let (inner_plan, inner_columns) =
                        self.plan_union(inner, &Scope::default(), Some(&scope))?;
                    let unit = inner_columns.is_none();
                    let returns: Vec<usize> =
                        inner_columns.iter().flatten().map(|(_, s)| *s).collect();
                    for (name, slot) in inner_columns.into_iter().flatten() {
                        if scope.get(&name).is_some() {
                            return Err(syntax(
                                "VariableAlreadyBound",
                                clause.span,
                                format!("variable `{name}` already declared"),
                            ));
                        }
                        scope.insert(&name, slot);
                    }
                    plan = LogicalPlan::Apply {
                        input: Box::new(plan),
                        inner: Box::new(inner_plan),
                        returns,
                        unit,
                    };
                }
                ClauseKind::CallInTransactions(call) => {
                    plan = self.plan_call_in_transactions(plan, &mut scope, call, clause.span)?;
                }
                // Ends the query like RETURN, with no columns: as after an updating clause,
                // the top level discards the rows and a `CALL { }` body is a unit subquery.
                ClauseKind::Finish => {}
                ClauseKind::Foreach(f) => {
                    let list = self.bind_expr(&f.list, &scope, ExprCtx::PLAIN)?;
                    let mut inner = scope.clone();
                    let slot = self.new_slot(Ty::Any, f.variable.span)?;
                    inner.insert(&f.variable.name, slot);
                    let body = ast::SingleQuery {
                        clauses: f.clauses.clone(),
                        span: clause.span,
                    };
                    let (body_plan, _, _) = self.plan_single(&body, inner, None, None)?;
                    plan = LogicalPlan::Foreach {
                        input: Box::new(plan),
                        slot,
                        list,
                        body: Box::new(body_plan),
                    };
                }
            }
        }
        Ok((plan, columns, scope))
    }

    /// A MATCH on `plan` (estimated at `rows`), and the estimated rows after it.
    fn plan_match(
        &mut self,
        plan: LogicalPlan,
        rows: Option<f64>,
        scope: &mut Scope,
        m: &ast::Match,
    ) -> Result<(LogicalPlan, Option<f64>)> {
        if m.optional {
            return self.plan_optional_match(plan, rows, scope, m);
        }
        self.plan_pattern((plan, rows), scope, &m.pattern.parts, m.predicate.as_ref())
    }

    /// An OPTIONAL MATCH on `plan`: a left outer hash join when its single part can be joined
    /// onto `plan`'s rows and the cost model prefers it (see `join`, LEFT OUTER), else an
    /// inner plan run on each row as its argument. It keeps at least every input row; the
    /// estimate stays `rows`.
    fn plan_optional_match(
        &mut self,
        plan: LogicalPlan,
        rows: Option<f64>,
        scope: &mut Scope,
        m: &ast::Match,
    ) -> Result<(LogicalPlan, Option<f64>)> {
        let before = bound_slots(scope);
        let first_new = self.slot_types.len();
        let mut inner_scope = scope.clone();
        let parts = &m.pattern.parts;
        let (slots, predicate) =
            self.bind_pattern(&mut inner_scope, parts, m.predicate.as_ref())?;
        let contexts = self.part_contexts(parts, &slots, &inner_scope)?;
        let join = rows.and_then(|probe_rows| {
            self.optional_join_choice(&contexts, &before, predicate.as_ref(), probe_rows)
        });
        let plan = match join {
            Some(join) => self.plan_outer_hash_join(plan, join, predicate, first_new)?,
            None => {
                let argument = (LogicalPlan::Argument, Some(1.0));
                let (inner, _) = self.plan_parts(argument, before, contexts, predicate)?;
                LogicalPlan::Optional {
                    input: Box::new(plan),
                    inner: Box::new(inner),
                    nulls: (first_new..self.slot_types.len()).collect(),
                }
            }
        };
        *scope = inner_scope;
        Ok((plan, rows))
    }

    /// The left outer hash join an OPTIONAL MATCH of the parts `contexts`, under the WHERE
    /// `predicate`, should become on `probe_rows` rows binding `bound`: only for one part,
    /// by the rules and cost of a MATCH's join ([`Self::join_choice`]).
    fn optional_join_choice<'p>(
        &self,
        contexts: &[PartContext<'p>],
        bound: &HashSet<usize>,
        predicate: Option<&BExpr>,
        probe_rows: f64,
    ) -> Option<JoinChoice<'p>> {
        let [ctx] = contexts else {
            return None;
        };
        let conjuncts = predicate.map(conjuncts).unwrap_or_default();
        let nested = self.part_order(ctx, bound, &conjuncts);
        let nested = nested.estimate.as_ref()?;
        self.join_choice(ctx, bound, &[], &conjuncts, probe_rows, nested)
    }

    /// Declares the variables of a pattern (type checks and reuse rules) and returns the slot
    /// of every element.
    fn declare_pattern(
        &mut self,
        scope: &mut Scope,
        parts: &[ast::PatternPart],
        usage: PatternUse,
    ) -> Result<Vec<PartSlots>> {
        let outer = scope.clone();
        let mut rels_here: HashSet<String> = HashSet::new();
        let mut result = Vec::with_capacity(parts.len());
        for part in parts {
            if let Some(var) = &part.variable
                && scope.get(&var.name).is_some()
            {
                return Err(already_bound(var));
            }
            let mut slots = PartSlots {
                nodes: Vec::new(),
                rels: Vec::new(),
                path: None,
            };
            let mut nodes = vec![&part.element.start];
            nodes.extend(part.element.chain.iter().map(|s| &s.node));
            for (i, node) in nodes.iter().enumerate() {
                if i > 0 {
                    let rel = &part.element.chain[i - 1].relationship;
                    slots
                        .rels
                        .push(self.declare_rel(scope, &outer, rel, &mut rels_here, usage)?);
                }
                let alone = nodes.len() == 1;
                slots
                    .nodes
                    .push(self.declare_node(scope, &outer, node, usage, alone)?);
            }
            if let Some(var) = &part.variable {
                if scope.get(&var.name).is_some() {
                    return Err(already_bound(var));
                }
                let slot = self.new_slot(Ty::Path, var.span)?;
                scope.insert(&var.name, slot);
                slots.path = Some(slot);
            }
            result.push(slots);
        }
        Ok(result)
    }

    fn declare_node(
        &mut self,
        scope: &mut Scope,
        outer: &Scope,
        node: &ast::NodePattern,
        usage: PatternUse,
        alone: bool,
    ) -> Result<(usize, bool)> {
        reject_parameter_map(node.properties.as_ref(), usage)?;
        let Some(var) = &node.variable else {
            return Ok((self.new_slot(Ty::Node, node.span)?, false));
        };
        match scope.get(&var.name) {
            Some(slot) => {
                let ty = self.slot_type(slot);
                if !matches!(ty, Ty::Node | Ty::Any | Ty::Null) {
                    return Err(syntax(
                        "VariableTypeConflict",
                        var.span,
                        format!("variable `{}` is a {}, not a node", var.name, ty.name()),
                    ));
                }
                let prebound = outer.get(&var.name) == Some(slot);
                if usage != PatternUse::Match
                    && prebound
                    && (!node.labels.is_empty()
                        || node.label_expr.is_some()
                        || node.properties.is_some()
                        || alone)
                {
                    return Err(already_bound(var));
                }
                Ok((slot, prebound))
            }
            None => {
                let slot = self.new_slot(Ty::Node, var.span)?;
                scope.insert(&var.name, slot);
                Ok((slot, false))
            }
        }
    }

    fn declare_rel(
        &mut self,
        scope: &mut Scope,
        outer: &Scope,
        rel: &ast::RelationshipPattern,
        rels_here: &mut HashSet<String>,
        usage: PatternUse,
    ) -> Result<(usize, bool)> {
        reject_parameter_map(rel.properties.as_ref(), usage)?;
        if usage != PatternUse::Match
            && let Some(var) = &rel.variable
            && scope.get(&var.name).is_some()
        {
            return Err(already_bound(var));
        }
        if usage != PatternUse::Match {
            if rel.length.is_some() {
                return Err(syntax(
                    "CreatingVarLength",
                    rel.span,
                    "variable length relationships cannot be created",
                ));
            }
            if rel.types.len() != 1 {
                return Err(syntax(
                    "NoSingleRelationshipType",
                    rel.span,
                    "a relationship must have exactly one type to be created",
                ));
            }
            if rel.direction == RelDirection::Undirected && usage == PatternUse::Create {
                return Err(syntax(
                    "RequiresDirectedRelationship",
                    rel.span,
                    "only directed relationships can be created",
                ));
            }
        }
        let ty = if rel.length.is_some() {
            Ty::List
        } else {
            Ty::Rel
        };
        let Some(var) = &rel.variable else {
            return Ok((self.new_slot(ty, rel.span)?, false));
        };
        if !rels_here.insert(var.name.clone()) && scope.get(&var.name).is_some() {
            let code = if outer.get(&var.name).is_some() || usage != PatternUse::Match {
                "VariableAlreadyBound"
            } else {
                "RelationshipUniquenessViolation"
            };
            return Err(syntax(
                code,
                var.span,
                format!("relationship variable `{}` is used twice", var.name),
            ));
        }
        match scope.get(&var.name) {
            Some(slot) => {
                let existing = self.slot_type(slot);
                let compatible = matches!(existing, Ty::Any | Ty::Null)
                    || existing == ty
                    || (ty == Ty::List && existing == Ty::List);
                if !compatible {
                    return Err(syntax(
                        "VariableTypeConflict",
                        var.span,
                        format!(
                            "variable `{}` is a {}, not a relationship",
                            var.name,
                            existing.name()
                        ),
                    ));
                }
                if usage != PatternUse::Match {
                    return Err(already_bound(var));
                }
                Ok((slot, true))
            }
            None => {
                let slot = self.new_slot(ty, var.span)?;
                scope.insert(&var.name, slot);
                Ok((slot, false))
            }
        }
    }

    /// Plans the matching of a pattern on top of `plan`, whose rows the cost model estimates
    /// at `rows` (`None`: unknown); declares its variables in `scope`. `predicate` is the
    /// MATCH's WHERE: bound here, it informs the choice of each part's start and of hash joins
    /// and is then pushed down into the pattern's operators. Returns the plan and its
    /// estimated rows.
    pub(crate) fn plan_pattern(
        &mut self,
        input: (LogicalPlan, Option<f64>),
        scope: &mut Scope,
        parts: &[ast::PatternPart],
        predicate: Option<&Expr>,
    ) -> Result<(LogicalPlan, Option<f64>)> {
        let before = bound_slots(scope);
        let (slots, predicate) = self.bind_pattern(scope, parts, predicate)?;
        let contexts = self.part_contexts(parts, &slots, scope)?;
        self.plan_parts(input, before, contexts, predicate)
    }

    /// Declares a pattern's variables in `scope` and binds its WHERE there: the slots of each
    /// part, and the predicate.
    fn bind_pattern(
        &mut self,
        scope: &mut Scope,
        parts: &[ast::PatternPart],
        predicate: Option<&Expr>,
    ) -> Result<(Vec<PartSlots>, Option<BExpr>)> {
        let slots = self.declare_pattern(scope, parts, PatternUse::Match)?;
        let predicate = match predicate {
            Some(p) => {
                let bound = self.bind_expr(p, scope, ExprCtx::PLAIN)?;
                self.check_boolean(&bound, p.span)?;
                Some(bound)
            }
            None => None,
        };
        Ok((slots, predicate))
    }

    /// The [`PartContext`] of each part, in pattern order.
    fn part_contexts<'p>(
        &mut self,
        parts: &'p [ast::PatternPart],
        slots: &'p [PartSlots],
        scope: &Scope,
    ) -> Result<Vec<PartContext<'p>>> {
        (parts.iter().zip(slots))
            .map(|(part, slots)| self.part_context(part, slots, scope))
            .collect()
    }

    /// The parts `contexts` planned one after the other on `plan` (estimated at `rows`), whose
    /// rows bind `bound`, each nested or hash-joined, under the WHERE `predicate`.
    fn plan_parts(
        &mut self,
        (mut plan, mut rows): (LogicalPlan, Option<f64>),
        mut bound: HashSet<usize>,
        contexts: Vec<PartContext>,
        predicate: Option<BExpr>,
    ) -> Result<(LogicalPlan, Option<f64>)> {
        let conjuncts = predicate.as_ref().map(conjuncts).unwrap_or_default();
        let mut expanded: Vec<usize> = Vec::new();
        for ctx in &contexts {
            let nested = self.part_order(ctx, &bound, &conjuncts);
            let join = rows
                .zip(nested.estimate.as_ref())
                .and_then(|(probe_rows, nested)| {
                    self.join_choice(ctx, &bound, &expanded, &conjuncts, probe_rows, nested)
                });
            if let Some(join) = join {
                let build_rows = join.build_rows();
                rows = rows.map(|probe_rows| cost::hash_join_rows(probe_rows, build_rows));
                plan = self.plan_hash_join(plan, join, &mut bound, &mut expanded)?;
            } else {
                rows = rows.zip(nested.estimate.as_ref()).map(|(r, e)| r * e.rows);
                plan = self.plan_part_in_order(plan, ctx, nested, &mut bound, &mut expanded)?;
            }
        }
        Ok((where_(plan, predicate), rows))
    }

    /// The hash join that planning `ctx`'s part on `probe_rows` input rows should become,
    /// if any (see `join` for when): the part must share no variable with them, be equated
    /// with them by its property maps or the WHERE, read nothing of theirs otherwise, and be
    /// cheaper hashed than `nested`.
    fn join_choice<'p>(
        &self,
        ctx: &PartContext<'p>,
        bound: &HashSet<usize>,
        expanded: &[usize],
        conjuncts: &[Conjunct],
        probe_rows: f64,
        nested: &Estimate,
    ) -> Option<JoinChoice<'p>> {
        let part = part_slots(ctx.slots);
        let shares_variable = part.iter().any(|s| bound.contains(s));
        // Relationship uniqueness between the sides is not checked by the join.
        let unique_across = !expanded.is_empty() && !ctx.slots.rels.is_empty();
        if shares_variable || unique_across {
            return None;
        }
        let (alone, mut keys) = split_map_keys(ctx, bound, &part)?;
        let map_keys = keys.len();
        keys.extend(
            conjuncts
                .iter()
                .filter_map(|(c, _)| join::key(c, bound, &part)),
        );
        if keys.is_empty() {
            return None;
        }
        let part = self.part_order(&alone, &HashSet::new(), conjuncts);
        let build = part.estimate.as_ref()?;
        cost::hash_join_pays(probe_rows, nested, build).then_some(JoinChoice {
            keys,
            map_keys,
            alone,
            part,
        })
    }

    /// The part of `join` planned on its own as the build side of a hash join on `plan`, under
    /// the filter of the equalities its property maps gave as keys (they read both sides).
    fn plan_hash_join(
        &mut self,
        plan: LogicalPlan,
        join: JoinChoice,
        bound: &mut HashSet<usize>,
        expanded: &mut Vec<usize>,
    ) -> Result<LogicalPlan> {
        bound.extend(part_slots(join.alone.slots));
        let (joined, map_equalities) = self.hash_join(plan, join, expanded)?;
        Ok(filter(joined, map_equalities))
    }

    /// The part of `join` planned on its own as the build side of a left outer hash join on
    /// `plan` (an OPTIONAL MATCH, see `join`, LEFT OUTER): the conjuncts of `predicate` that
    /// read only the part (and call no `rand()`) filter the build side; the rest, and the
    /// equalities its property maps gave as keys, are the residual each partner must pass.
    /// The slots from `first_new` on are the OPTIONAL MATCH's, nulled without a partner.
    fn plan_outer_hash_join(
        &mut self,
        plan: LogicalPlan,
        join: JoinChoice,
        predicate: Option<BExpr>,
        first_new: usize,
    ) -> Result<LogicalPlan> {
        let (mut joined, mut residual) = self.hash_join(plan, join, &mut Vec::new())?;
        let LogicalPlan::HashJoin {
            build,
            build_slots,
            optional,
            ..
        } = &mut joined
        else {
            unreachable!("hash_join plans a HashJoin");
        };
        let mut own = None;
        for (conjunct, slots) in predicate.as_ref().map(conjuncts).unwrap_or_default() {
            let reads_part = slots.is_some_and(|s| s.iter().all(|s| build_slots.contains(s)));
            if reads_part && !calls_rand(&conjunct) {
                own = chain_and(own, conjunct);
            } else {
                residual = chain_and(residual, conjunct);
            }
        }
        if own.is_some() {
            let side = std::mem::replace(&mut **build, LogicalPlan::Argument);
            **build = where_(side, own);
        }
        let nulls = (first_new..self.slot_types.len()).collect();
        *optional = Some(OuterJoin { residual, nulls });
        Ok(joined)
    }

    /// The `HashJoin` of `join`'s part, planned on its own as the build side, onto `plan`;
    /// and the equalities its property maps gave as keys (they read both sides, so the join
    /// cannot leave them to either).
    fn hash_join(
        &mut self,
        plan: LogicalPlan,
        join: JoinChoice,
        expanded: &mut Vec<usize>,
    ) -> Result<(LogicalPlan, Option<BExpr>)> {
        let ctx = &join.alone;
        debug_assert!(expanded.is_empty() || ctx.slots.rels.is_empty());
        let mut build_bound = HashSet::new();
        let est_rows = join.build_rows();
        let build = self.plan_part_in_order(
            LogicalPlan::Argument,
            ctx,
            join.part,
            &mut build_bound,
            expanded,
        )?;
        let build_slots = part_slots(ctx.slots);
        debug_assert!(
            build_bound.iter().all(|s| build_slots.contains(s)),
            "the build side binds only its part's variables"
        );
        let map_equalities = join.keys[..join.map_keys]
            .iter()
            .fold(None, |acc, (input, build)| {
                let equality =
                    BExpr::Compare(vec![build.clone(), input.clone()], vec![ComparisonOp::Eq]);
                chain_and(acc, equality)
            });
        let joined = LogicalPlan::HashJoin {
            input: Box::new(plan),
            build: Box::new(build),
            keys: join.keys,
            build_slots,
            est_rows,
            optional: None,
        };
        Ok((joined, map_equalities))
    }

    /// A part's elements with their property maps bound (once, in pattern order).
    fn part_context<'p>(
        &mut self,
        part: &'p ast::PatternPart,
        slots: &'p PartSlots,
        scope: &Scope,
    ) -> Result<PartContext<'p>> {
        let mut nodes = vec![&part.element.start];
        nodes.extend(part.element.chain.iter().map(|s| &s.node));
        let mut node_props = vec![self.bind_properties(nodes[0].properties.as_ref(), scope)?];
        let mut rel_props = Vec::with_capacity(part.element.chain.len());
        for step in &part.element.chain {
            rel_props.push(self.bind_properties(step.relationship.properties.as_ref(), scope)?);
            node_props.push(self.bind_properties(step.node.properties.as_ref(), scope)?);
        }
        Ok(PartContext {
            part,
            nodes,
            slots,
            node_props,
            rel_props,
        })
    }

    /// `{k: v, ...}` in a pattern → `[(k, v), ...]`, the values bound.
    fn bind_properties(&mut self, props: Option<&Expr>, scope: &Scope) -> Result<Properties> {
        let Some(props) = props else {
            return Ok(Vec::new());
        };
        let ExprKind::Map(entries) = &props.kind else {
            return Err(syntax(
                "InvalidParameterUse",
                props.span,
                "pattern properties must be a map literal",
            ));
        };
        let mut out = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let value = self.bind_expr(value, scope, ExprCtx::PLAIN)?;
            out.push((Arc::from(key.name.as_str()), value));
        }
        Ok(out)
    }

    /// The order a part is expanded in (see `cost`) and, with statistics, its estimate and
    /// the seek of a relationship it starts at.
    fn part_order(
        &self,
        ctx: &PartContext,
        bound: &HashSet<usize>,
        conjuncts: &[Conjunct],
    ) -> PartOrder {
        let rule = Order {
            start: Start::Node(rule_start(ctx, bound)),
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
        if ctx.part.shortest.is_some() {
            return without_estimate;
        }
        let nodes: Vec<NodeShape> = (0..ctx.nodes.len())
            .map(|i| node_shape(stats, ctx, i, bound, conjuncts))
            .collect();
        let (rels, mut rel_seeks): (Vec<RelShape>, Vec<Option<KeySeek>>) =
            (0..ctx.slots.rels.len())
                .map(|i| rel_shape(stats, ctx, i, bound, conjuncts))
                .unzip();
        // Only property values that read variables bound before the part let any order of
        // its elements be planned.
        let order = if properties_read_only(ctx, |s| bound.contains(s)) {
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

    /// The operators of `ctx`'s part, in the order `part` (from `part_order`), on `plan`.
    fn plan_part_in_order(
        &mut self,
        mut plan: LogicalPlan,
        ctx: &PartContext,
        part: PartOrder,
        bound: &mut HashSet<usize>,
        expanded: &mut Vec<usize>,
    ) -> Result<LogicalPlan> {
        let PartOrder {
            order,
            estimate,
            rel_seek,
        } = part;
        let est_rows = estimate.as_ref().map(|e| e.start_rows);
        let start = (order.start, rel_seek, est_rows);
        plan = plan_start(plan, ctx, start, bound, expanded);
        if ctx.part.shortest.is_some() {
            // A shortest path is searched between two bound ends: bind the others first.
            for i in 0..ctx.nodes.len() {
                if bound.insert(ctx.slots.nodes[i].0) {
                    plan = scan_node(plan, ctx, i, None);
                }
            }
        }
        for (i, rightwards) in order.steps(ctx.part.element.chain.len()) {
            let est_rows = estimate.as_ref().map(|e| e.expand_rows[i]);
            let step = Step {
                index: i,
                rightwards,
                est_rows,
            };
            plan = self.plan_step(plan, ctx, step, bound, expanded)?;
        }
        if let Some(path) = ctx.slots.path {
            plan = LogicalPlan::Project {
                input: Box::new(plan),
                items: vec![(path, part_path(ctx))],
            };
            bound.insert(path);
        }
        Ok(plan)
    }

    /// The expand of relationship `step.index` of the part, away from its bound end, and the
    /// filters of the relationship and of the node it reaches.
    fn plan_step(
        &mut self,
        mut plan: LogicalPlan,
        ctx: &PartContext,
        step: Step,
        bound: &mut HashSet<usize>,
        expanded: &mut Vec<usize>,
    ) -> Result<LogicalPlan> {
        let i = step.index;
        let rel = &ctx.part.element.chain[i].relationship;
        let (from_index, to_index) = if step.rightwards {
            (i, i + 1)
        } else {
            (i + 1, i)
        };
        let to = ctx.slots.nodes[to_index].0;
        let direction = match (rel.direction, step.rightwards) {
            (RelDirection::Undirected, _) => Direction::Both,
            (RelDirection::Outgoing, true) | (RelDirection::Incoming, false) => Direction::Out,
            _ => Direction::In,
        };
        let (rel_slot, rel_prebound) = ctx.slots.rels[i];
        // A relationship bound by an earlier clause: expand into a fresh slot and compare.
        let expand_slot = if rel_prebound {
            self.new_slot(self.slot_type(rel_slot), rel.span)?
        } else {
            rel_slot
        };
        let spec = ExpandSpec {
            from: ctx.slots.nodes[from_index].0,
            rel: expand_slot,
            to,
            types: label_names(&rel.types),
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
                filter(
                    expand,
                    equalities(BExpr::Slot(expand_slot), &ctx.rel_props[i]),
                )
            }
            Some(length) => {
                let props = &ctx.rel_props[i];
                let length = self.var_length(rel, length, ctx.part.shortest, props, step)?;
                LogicalPlan::VarExpand {
                    input: Box::new(plan),
                    spec,
                    length,
                    est_rows: step.est_rows,
                }
            }
        };
        if rel_prebound {
            plan = filter(
                plan,
                Some(BExpr::Compare(
                    vec![BExpr::Slot(expand_slot), BExpr::Slot(rel_slot)],
                    vec![ComparisonOp::Eq],
                )),
            );
        }
        expanded.push(expand_slot);
        bound.insert(to);
        let node = ctx.nodes[to_index];
        Ok(filter(
            plan,
            node_predicate(
                to,
                &node.labels,
                node.label_expr.as_ref(),
                &ctx.node_props[to_index],
            ),
        ))
    }

    /// The bounds and per-relationship filter of a variable-length step.
    fn var_length(
        &mut self,
        rel: &ast::RelationshipPattern,
        length: ast::VarLength,
        shortest: Option<ast::ShortestPath>,
        props: &Properties,
        step: Step,
    ) -> Result<VarLengthSpec> {
        let min = length.min.unwrap_or(1);
        let max = length.max;
        if max.is_some_and(|m| m > MAX_VAR_LENGTH_DEPTH) || min > MAX_VAR_LENGTH_DEPTH {
            return Err(QueryError::compile(
                ErrorClass::SemanticError,
                "VarLengthTooLong",
                rel.span,
                format!("variable-length bounds may be at most {MAX_VAR_LENGTH_DEPTH}"),
            ));
        }
        let rel_filter = match &rel.properties {
            Some(map) => {
                let temp = self.new_slot(Ty::Rel, map.span)?;
                equalities(BExpr::Slot(temp), props).map(|p| (temp, p))
            }
            None => None,
        };
        Ok(VarLengthSpec {
            min,
            max,
            rel_filter,
            shortest,
            leftwards: !step.rightwards,
        })
    }

    /// The creating half of CREATE / MERGE over already-declared slots.
    fn create_pattern(
        &mut self,
        scope: &Scope,
        parts: &[ast::PatternPart],
        slots: &[PartSlots],
    ) -> Result<CreatePattern> {
        let mut pattern = CreatePattern::default();
        let mut seen: HashSet<usize> = HashSet::new();
        for (part, slots) in parts.iter().zip(slots) {
            let mut nodes = vec![&part.element.start];
            nodes.extend(part.element.chain.iter().map(|s| &s.node));
            for (node, &(slot, prebound)) in nodes.iter().zip(&slots.nodes) {
                if let Some(label_expr) = &node.label_expr {
                    return Err(syntax(
                        "InvalidLabelExpression",
                        node.span,
                        format!(
                            "a created node takes plain labels (`:A:B` or `:A&B`), not `:{label_expr}`"
                        ),
                    ));
                }
                if !seen.insert(slot) {
                    if !node.labels.is_empty() || node.properties.is_some() {
                        let var = node.variable.as_ref().map_or("?", |v| v.name.as_str());
                        return Err(syntax(
                            "VariableAlreadyBound",
                            node.span,
                            format!("variable `{var}` already declared"),
                        ));
                    }
                    continue;
                }
                let properties = match &node.properties {
                    Some(p) => Some(self.bind_expr(p, scope, ExprCtx::PLAIN)?),
                    None => None,
                };
                pattern.nodes.push(CreateNode {
                    slot,
                    bound: prebound,
                    labels: label_names(&node.labels),
                    properties,
                });
            }
            for (i, step) in part.element.chain.iter().enumerate() {
                let rel = &step.relationship;
                let (a, b) = (slots.nodes[i].0, slots.nodes[i + 1].0);
                let (src, dst) = match rel.direction {
                    RelDirection::Incoming => (b, a),
                    _ => (a, b),
                };
                let properties = match &rel.properties {
                    Some(p) => Some(self.bind_expr(p, scope, ExprCtx::PLAIN)?),
                    None => None,
                };
                let rel_type = rel
                    .types
                    .first()
                    .map(|t| Arc::from(t.name.as_str()))
                    .ok_or_else(|| syntax("NoSingleRelationshipType", rel.span, "missing type"))?;
                pattern.rels.push(CreateRel {
                    slot: slots.rels[i].0,
                    src,
                    dst,
                    rel_type,
                    properties,
                });
            }
            if let Some(path) = slots.path {
                let mut elements = vec![PathElement::Node(slots.nodes[0].0)];
                for i in 0..part.element.chain.len() {
                    elements.push(PathElement::Rel(slots.rels[i].0));
                    elements.push(PathElement::Node(slots.nodes[i + 1].0));
                }
                pattern.paths.push((path, Binder::path_expr(elements)));
            }
        }
        Ok(pattern)
    }

    fn plan_merge(
        &mut self,
        plan: LogicalPlan,
        scope: &mut Scope,
        m: &ast::Merge,
    ) -> Result<LogicalPlan> {
        let parts = std::slice::from_ref(&m.pattern);
        let outer = scope.clone();
        let slots = self.declare_pattern(scope, parts, PatternUse::Merge)?;
        // The matcher re-uses the declared slots: plan the part against the declared scope.
        let mut bound: HashSet<usize> = outer.vars().iter().map(|(_, s)| *s).collect();
        let mut expanded = Vec::new();
        let ctx = self.part_context(&m.pattern, &slots[0], scope)?;
        let part = self.part_order(&ctx, &bound, &[]);
        let matcher =
            self.plan_part_in_order(LogicalPlan::Argument, &ctx, part, &mut bound, &mut expanded)?;
        let pattern = self.create_pattern(&outer, parts, &slots)?;
        let mut on_match = Vec::new();
        let mut on_create = Vec::new();
        for action in &m.actions {
            let ops = self.bind_set_items(&action.items, scope)?;
            match action.on {
                ast::MergeTrigger::OnMatch => on_match.extend(ops),
                ast::MergeTrigger::OnCreate => on_create.extend(ops),
            }
        }
        Ok(LogicalPlan::Merge {
            input: Box::new(plan),
            matcher: Box::new(matcher),
            pattern,
            on_match,
            on_create,
        })
    }

    fn bind_set_items(&mut self, items: &[ast::SetItem], scope: &Scope) -> Result<Vec<SetOp>> {
        let mut ops = Vec::with_capacity(items.len());
        for item in items {
            ops.push(match &item.kind {
                SetItemKind::Property { entity, key, value } => SetOp::Property {
                    entity: self.bind_expr(entity, scope, ExprCtx::PLAIN)?,
                    key: Arc::from(key.name.as_str()),
                    value: self.bind_expr(value, scope, ExprCtx::PLAIN)?,
                },
                SetItemKind::Replace { variable, value } => SetOp::Properties {
                    entity: BExpr::Slot(self.lookup(scope, variable)?),
                    value: self.bind_expr(value, scope, ExprCtx::PLAIN)?,
                    replace: true,
                },
                SetItemKind::Merge { variable, value } => SetOp::Properties {
                    entity: BExpr::Slot(self.lookup(scope, variable)?),
                    value: self.bind_expr(value, scope, ExprCtx::PLAIN)?,
                    replace: false,
                },
                SetItemKind::Labels { variable, labels } => SetOp::Labels {
                    entity: BExpr::Slot(self.lookup(scope, variable)?),
                    labels: label_names(labels),
                    add: true,
                },
            });
        }
        Ok(ops)
    }

    fn plan_procedure(
        &mut self,
        plan: LogicalPlan,
        scope: &mut Scope,
        call: &ast::ProcedureCall,
        span: Span,
        standalone: bool,
    ) -> Result<(LogicalPlan, Option<Columns>)> {
        let mut name = String::new();
        for part in &call.procedure.namespace {
            name.push_str(&part.name);
            name.push('.');
        }
        name.push_str(&call.procedure.name.name);
        let Some(procedure) = self.procedures.get(&name.to_ascii_lowercase()).cloned() else {
            return Err(QueryError::compile(
                ErrorClass::ProcedureError,
                "ProcedureNotFound",
                span,
                format!("there is no procedure named `{name}`"),
            ));
        };
        let args: Vec<BExpr> = match &call.args {
            Some(args) => {
                if args.len() != procedure.inputs.len() {
                    return Err(syntax(
                        "InvalidNumberOfArguments",
                        span,
                        format!("{name} takes {} argument(s)", procedure.inputs.len()),
                    ));
                }
                let mut bound = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    let e = self.bind_expr(a, scope, ExprCtx::PLAIN)?;
                    let declared = procedure.input_types.get(i).map(|t| t.to_ascii_uppercase());
                    let ty = self.static_type(&e);
                    let accepted = match declared.as_deref().map(|t| t.trim_end_matches('?')) {
                        None | Some("ANY") => true,
                        Some(_) if matches!(ty, Ty::Any | Ty::Null) => true,
                        Some("INTEGER") => ty == Ty::Int,
                        Some("FLOAT") => matches!(ty, Ty::Float | Ty::Int),
                        Some("NUMBER") => matches!(ty, Ty::Float | Ty::Int),
                        Some("STRING") => ty == Ty::String,
                        Some("BOOLEAN") => ty == Ty::Bool,
                        Some(t) if t.starts_with("LIST") => ty == Ty::List,
                        Some("MAP") => ty == Ty::Map,
                        Some("NODE") => ty == Ty::Node,
                        Some("RELATIONSHIP") => ty == Ty::Rel,
                        Some("PATH") => ty == Ty::Path,
                        Some(_) => true,
                    };
                    if !accepted {
                        return Err(syntax(
                            "InvalidArgumentType",
                            a.span,
                            format!(
                                "argument {} of {name} must be {}, not {}",
                                i + 1,
                                declared.unwrap_or_default(),
                                ty.name()
                            ),
                        ));
                    }
                    bound.push(e);
                }
                bound
            }
            None => {
                let mut bound = Vec::new();
                for input in &procedure.inputs {
                    if !self.params.contains_key(input) {
                        return Err(QueryError::compile(
                            ErrorClass::ParameterMissing,
                            "MissingParameter",
                            span,
                            format!("expected a value for parameter ${input}"),
                        ));
                    }
                    bound.push(BExpr::Param(Arc::from(input.as_str())));
                }
                bound
            }
        };
        let mut yields = Vec::new();
        let mut columns = Vec::new();
        match &call.yield_clause {
            Some(y) => {
                let fields: Vec<(String, String, Span)> = match &y.items {
                    ast::YieldItems::Star => procedure
                        .outputs
                        .iter()
                        .map(|o| (o.clone(), o.clone(), y.span))
                        .collect(),
                    ast::YieldItems::Fields(items) => items
                        .iter()
                        .map(|i| {
                            (
                                i.field.name.clone(),
                                i.alias.as_ref().unwrap_or(&i.field).name.clone(),
                                i.field.span,
                            )
                        })
                        .collect(),
                };
                for (field, alias, field_span) in fields {
                    let Some(index) = procedure.outputs.iter().position(|o| *o == field) else {
                        return Err(syntax(
                            "UndefinedVariable",
                            field_span,
                            format!("procedure {name} has no output `{field}`"),
                        ));
                    };
                    if scope.get(&alias).is_some() {
                        return Err(syntax(
                            "VariableAlreadyBound",
                            field_span,
                            format!("variable `{alias}` already declared"),
                        ));
                    }
                    let slot = self.new_slot(Ty::Any, field_span)?;
                    scope.insert(&alias, slot);
                    yields.push((index, slot));
                    columns.push((alias, slot));
                }
            }
            None => {
                if !standalone && !procedure.outputs.is_empty() {
                    return Err(syntax(
                        "UndefinedVariable",
                        span,
                        "a procedure call inside a query must YIELD its outputs",
                    ));
                }
                for (index, output) in procedure.outputs.iter().enumerate() {
                    let slot = self.new_slot(Ty::Any, span)?;
                    yields.push((index, slot));
                    columns.push((output.clone(), slot));
                }
            }
        }
        let mut plan = LogicalPlan::ProcedureCall {
            input: Box::new(plan),
            procedure,
            args,
            yields,
        };
        if let Some(predicate) = call
            .yield_clause
            .as_ref()
            .and_then(|y| y.predicate.as_ref())
        {
            let predicate = self.bind_expr(predicate, scope, ExprCtx::PLAIN)?;
            plan = filter(plan, Some(predicate));
        }
        Ok((plan, Some(columns)))
    }

    /// WITH / RETURN. Returns the plan, the new scope and the projected columns.
    fn plan_projection(
        &mut self,
        mut plan: LogicalPlan,
        scope: &Scope,
        projection: &Projection,
        predicate: Option<&Expr>,
        is_return: bool,
        targets: Option<&[(String, usize)]>,
    ) -> Result<(LogicalPlan, Scope, Columns)> {
        // The items: `*` first (in name order for RETURN), then the listed ones.
        let mut items: Vec<(String, Expr, Span)> = Vec::new();
        if projection.star {
            let mut vars: Vec<&(String, usize)> = scope.vars().iter().collect();
            if vars.is_empty() && is_return {
                return Err(syntax(
                    "NoVariablesInScope",
                    Span::default(),
                    "RETURN * / WITH * needs at least one variable in scope",
                ));
            }
            if is_return {
                vars.sort_by(|a, b| a.0.cmp(&b.0));
            }
            for (name, _) in vars {
                let ident = ast::Ident {
                    name: name.clone(),
                    span: Span::default(),
                };
                items.push((
                    name.clone(),
                    Expr::new(ExprKind::Variable(ident), Span::default()),
                    Span::default(),
                ));
            }
        }
        for item in &projection.items {
            let name = match (&item.alias, &item.expr.kind) {
                (Some(alias), _) => alias.name.clone(),
                (None, ExprKind::Variable(v)) => v.name.clone(),
                (None, _) => self.text(item.expr.span),
            };
            items.push((name, item.expr.clone(), item.span));
        }
        let mut names = HashSet::new();
        for (name, _, span) in &items {
            if !names.insert(name.clone()) {
                return Err(syntax(
                    "ColumnNameConflict",
                    *span,
                    format!("multiple result columns with the same name `{name}`"),
                ));
            }
        }
        if let Some(targets) = targets
            && targets.len() != items.len()
        {
            return Err(syntax(
                "DifferentColumnsInUnion",
                projection.items.first().map_or(Span::default(), |i| i.span),
                "all sub queries in a UNION must have the same column names",
            ));
        }

        // Bind every item once to find the aggregating ones.
        let mut bound = Vec::with_capacity(items.len());
        for (_, expr, _) in &items {
            bound.push(self.bind_expr(expr, scope, ExprCtx::PROJECTION)?);
        }
        let aggregating = bound.iter().any(contains_agg);
        let mut out_slots = Vec::with_capacity(items.len());
        for (i, e) in bound.iter().enumerate() {
            let slot = match targets {
                Some(t) => t[i].1,
                None => {
                    let ty = self.static_type(e);
                    self.new_slot(ty, items[i].2)?
                }
            };
            out_slots.push(slot);
        }
        let saved_substitutions = std::mem::take(&mut self.substitutions);
        if aggregating {
            let mut keys = Vec::new();
            for (i, e) in bound.iter().enumerate() {
                if !contains_agg(e) {
                    keys.push((out_slots[i], e.clone()));
                    if is_simple(&items[i].1) {
                        self.substitutions.push((items[i].1.clone(), out_slots[i]));
                    }
                }
            }
            let key_slots: HashSet<usize> = keys.iter().map(|(s, _)| *s).collect();
            let mut aggregates: Vec<(usize, AggCall)> = Vec::new();
            let mut post = Vec::new();
            for (i, e) in bound.iter().enumerate() {
                if !contains_agg(e) {
                    continue;
                }
                if let BExpr::Agg(call) = e {
                    aggregates.push((out_slots[i], (**call).clone()));
                    continue;
                }
                let rebound_first = self.slot_types.len();
                let rebound = self.bind_expr(&items[i].1, scope, ExprCtx::PROJECTION)?;
                let mut free = Vec::new();
                let mut subquery_reads = Vec::new();
                referenced_slots_outside_agg(&rebound, &mut free, &mut subquery_reads);
                let ungrouped = free
                    .iter()
                    .any(|s| *s < rebound_first && !key_slots.contains(s));
                // A subquery reads its outer variables from their own slots: each must be a
                // grouping key, which the Aggregate then also keeps in its variable's slot.
                let kept = (subquery_reads.iter()).all(|s| keep_key_variable(&mut keys, *s));
                if ungrouped || !kept {
                    self.substitutions = saved_substitutions;
                    return Err(syntax(
                        "AmbiguousAggregationExpression",
                        items[i].2,
                        "an expression mixing aggregation and variables must only use grouping keys outside the aggregate",
                    ));
                }
                let mut extracted = Vec::new();
                let replaced = self.extract_aggs(rebound, &mut extracted, items[i].2)?;
                aggregates.extend(extracted);
                post.push((out_slots[i], replaced));
            }
            plan = LogicalPlan::Aggregate {
                input: Box::new(plan),
                keys,
                aggregates,
            };
            if !post.is_empty() {
                plan = LogicalPlan::Project {
                    input: Box::new(plan),
                    items: post,
                };
            }
        } else {
            plan = LogicalPlan::Project {
                input: Box::new(plan),
                items: out_slots
                    .iter()
                    .copied()
                    .zip(bound.iter().cloned())
                    .collect(),
            };
        }
        let mut new_scope = Scope::default();
        let mut columns = Vec::with_capacity(items.len());
        for (i, (name, _, _)) in items.iter().enumerate() {
            new_scope.insert(name, out_slots[i]);
            columns.push((name.clone(), out_slots[i]));
        }
        if projection.distinct {
            plan = LogicalPlan::Distinct {
                input: Box::new(plan),
                slots: out_slots.clone(),
            };
        }

        // ORDER BY sees the projected items (and, without aggregation or DISTINCT, the
        // variables before the projection too); expressions equal to an item read its slot.
        // A projected name hides the variable it shadows: in `RETURN -a AS a, a AS b ORDER BY
        // a` the key is the new `a`, so an item mentioning a shadowed name (`a AS b`) is no
        // substitute for an ORDER BY or WHERE expression that looks the same.
        let shadowed: HashSet<&str> = items
            .iter()
            .filter(|(name, e, _)| {
                scope.vars().iter().any(|(n, _)| n == name)
                    && !matches!(&e.kind, ExprKind::Variable(v) if v.name == *name)
            })
            .map(|(name, _, _)| name.as_str())
            .collect();
        self.substitutions = items
            .iter()
            .zip(&out_slots)
            .filter(|((_, e, _), _)| !ast_mentions_any(e, &shadowed))
            .map(|((_, e, _), s)| (e.clone(), *s))
            .collect();
        let result = (|| -> Result<LogicalPlan> {
            if !projection.order_by.is_empty() {
                let mut order_scope = if aggregating || projection.distinct {
                    Scope::default()
                } else {
                    scope.clone()
                };
                for (name, slot) in new_scope.vars() {
                    order_scope.insert(name, *slot);
                }
                let mut keys = Vec::new();
                for item in &projection.order_by {
                    let ctx = if aggregating {
                        ExprCtx::PROJECTION
                    } else {
                        ExprCtx::PLAIN
                    };
                    let mut expr = self.bind_expr(&item.expr, &order_scope, ctx)?;
                    let is_item = items.iter().any(|(_, e, _)| *e == item.expr);
                    if contains_agg(&expr)
                        || (aggregating && !is_item && ast_has_aggregate(&item.expr))
                    {
                        // An aggregate that is not a projected item: only grouping keys that
                        // are variables or properties may appear around it.
                        let all = std::mem::take(&mut self.substitutions);
                        self.substitutions = all
                            .iter()
                            .filter(|(e, _)| is_simple(e) || ast_has_aggregate(e))
                            .cloned()
                            .collect();
                        let rebound = self.bind_expr(&item.expr, &order_scope, ctx);
                        self.substitutions = all;
                        expr = match rebound {
                            Err(e) if e.code == "UndefinedVariable" => {
                                return Err(syntax(
                                    "AmbiguousAggregationExpression",
                                    item.span,
                                    "an ORDER BY expression mixing aggregation and variables must only use projected grouping keys",
                                ));
                            }
                            other => other?,
                        };
                    }
                    if contains_agg(&expr) {
                        return Err(syntax(
                            "InvalidAggregation",
                            item.span,
                            "ORDER BY may only use aggregates that are projected",
                        ));
                    }
                    keys.push(SortKey {
                        expr,
                        descending: item.order == ast::SortOrder::Descending,
                    });
                }
                plan = LogicalPlan::Sort {
                    input: Box::new(std::mem::replace(&mut plan, LogicalPlan::Argument)),
                    keys,
                    top: None,
                };
            }
            if !is_return && let Some(item) = unaliased_item(projection) {
                return Err(syntax(
                    "NoExpressionAlias",
                    item.expr.span,
                    "expression in WITH must be aliased (use AS)",
                ));
            }
            if let Some(skip) = &projection.skip {
                let count = self.bind_count(skip)?;
                plan = LogicalPlan::Skip {
                    input: Box::new(std::mem::replace(&mut plan, LogicalPlan::Argument)),
                    count,
                };
            }
            if let Some(limit) = &projection.limit {
                let count = self.bind_count(limit)?;
                plan = LogicalPlan::Limit {
                    input: Box::new(std::mem::replace(&mut plan, LogicalPlan::Argument)),
                    count,
                    drain: self.updating_seen,
                };
            }
            if let Some(predicate) = predicate {
                // Like ORDER BY, WITH's WHERE also sees the variables before a projection
                // that neither aggregates nor is DISTINCT.
                let mut where_scope = if aggregating || projection.distinct {
                    Scope::default()
                } else {
                    scope.clone()
                };
                for (name, slot) in new_scope.vars() {
                    where_scope.insert(name, *slot);
                }
                let predicate = self.bind_expr(predicate, &where_scope, ExprCtx::PLAIN)?;
                plan = filter(
                    std::mem::replace(&mut plan, LogicalPlan::Argument),
                    Some(predicate),
                );
            }
            Ok(std::mem::replace(&mut plan, LogicalPlan::Argument))
        })();
        self.substitutions = saved_substitutions;
        Ok((result?, new_scope, columns))
    }

    /// SKIP / LIMIT: a constant or parameter expression; negative or non-integer constants
    /// are rejected here, parameters when the query runs.
    fn bind_count(&mut self, expr: &Expr) -> Result<BExpr> {
        let saved = std::mem::take(&mut self.substitutions);
        let result = self.bind_expr(expr, &Scope::default(), ExprCtx::PLAIN);
        self.substitutions = saved;
        let bound = match result {
            Ok(b) => b,
            Err(e) if e.code == "UndefinedVariable" => {
                return Err(syntax(
                    "NonConstantExpression",
                    expr.span,
                    "SKIP and LIMIT take a constant expression",
                ));
            }
            Err(e) => return Err(e),
        };
        match &bound {
            BExpr::Const(Value::Int(i)) if *i < 0 => Err(syntax(
                "NegativeIntegerArgument",
                expr.span,
                "SKIP and LIMIT take a non-negative integer",
            )),
            BExpr::Const(Value::Float(_)) => Err(syntax(
                "InvalidArgumentType",
                expr.span,
                "SKIP and LIMIT take an integer",
            )),
            _ => Ok(bound),
        }
    }

    /// Replaces every aggregate call in `e` by a fresh slot, collecting the calls.
    fn extract_aggs(
        &mut self,
        e: BExpr,
        out: &mut Vec<(usize, AggCall)>,
        span: Span,
    ) -> Result<BExpr> {
        Ok(match e {
            BExpr::Agg(call) => {
                let slot = self.new_slot(Ty::Any, span)?;
                out.push((slot, *call));
                BExpr::Slot(slot)
            }
            other => {
                let mut error = None;
                let mapped = map_children(other, &mut |child| match self
                    .extract_aggs(child, out, span)
                {
                    Ok(c) => c,
                    Err(e) => {
                        error = Some(e);
                        BExpr::Const(Value::Null)
                    }
                });
                if let Some(e) = error {
                    return Err(e);
                }
                mapped
            }
        })
    }
}

/// Whether an aggregate function call occurs in `e` (outside subqueries).
fn ast_has_aggregate(e: &Expr) -> bool {
    let any = |items: &[Expr]| items.iter().any(ast_has_aggregate);
    match &e.kind {
        ExprKind::CountStar => true,
        ExprKind::FunctionCall { name, args, .. } => {
            (name.namespace.is_empty()
                && AggFunction::from_name(&name.name.name.to_ascii_lowercase()).is_some())
                || any(args)
        }
        ExprKind::Property { expr, .. }
        | ExprKind::HasLabels { expr, .. }
        | ExprKind::LabelTest { expr, .. }
        | ExprKind::Unary { expr, .. }
        | ExprKind::IsNull { expr, .. } => ast_has_aggregate(expr),
        ExprKind::Index { expr, index } => ast_has_aggregate(expr) || ast_has_aggregate(index),
        ExprKind::Binary { lhs, rhs, .. } => ast_has_aggregate(lhs) || ast_has_aggregate(rhs),
        ExprKind::Comparison { first, rest } => {
            ast_has_aggregate(first) || rest.iter().any(|(_, e)| ast_has_aggregate(e))
        }
        ExprKind::List(items) => any(items),
        ExprKind::Map(entries) => entries.iter().any(|(_, e)| ast_has_aggregate(e)),
        ExprKind::Case {
            operand,
            alternatives,
            default,
        } => {
            operand.as_deref().is_some_and(ast_has_aggregate)
                || default.as_deref().is_some_and(ast_has_aggregate)
                || alternatives
                    .iter()
                    .any(|a| ast_has_aggregate(&a.when) || ast_has_aggregate(&a.then))
        }
        _ => false,
    }
}

/// Whether `e` may read a variable named in `names`. Over-approximate: any identifier with
/// such a name counts, even one a comprehension binds locally, and so does every pattern or
/// subquery (their variables are not walked).
fn ast_mentions_any(e: &Expr, names: &HashSet<&str>) -> bool {
    if names.is_empty() {
        return false;
    }
    let named = |ident: &ast::Ident| names.contains(ident.name.as_str());
    let any = |items: &[Expr]| items.iter().any(|e| ast_mentions_any(e, names));
    let opt = |e: &Option<Box<Expr>>| e.as_deref().is_some_and(|e| ast_mentions_any(e, names));
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Parameter(_) | ExprKind::CountStar => false,
        ExprKind::Variable(v) => named(v),
        ExprKind::Property { expr, .. }
        | ExprKind::HasLabels { expr, .. }
        | ExprKind::LabelTest { expr, .. }
        | ExprKind::Unary { expr, .. }
        | ExprKind::IsNull { expr, .. } => ast_mentions_any(expr, names),
        ExprKind::Index { expr, index } => {
            ast_mentions_any(expr, names) || ast_mentions_any(index, names)
        }
        ExprKind::Slice { expr, from, to } => ast_mentions_any(expr, names) || opt(from) || opt(to),
        ExprKind::Binary { lhs, rhs, .. } => {
            ast_mentions_any(lhs, names) || ast_mentions_any(rhs, names)
        }
        ExprKind::Comparison { first, rest } => {
            ast_mentions_any(first, names) || rest.iter().any(|(_, e)| ast_mentions_any(e, names))
        }
        ExprKind::List(items) => any(items),
        ExprKind::Map(entries) => entries.iter().any(|(_, e)| ast_mentions_any(e, names)),
        ExprKind::MapProjection { variable, items } => {
            named(variable)
                || items.iter().any(|item| match item {
                    ast::MapProjectionItem::Literal(_, e) => ast_mentions_any(e, names),
                    ast::MapProjectionItem::Variable(v) => named(v),
                    ast::MapProjectionItem::Property(_) | ast::MapProjectionItem::AllProperties => {
                        false
                    }
                })
        }
        ExprKind::FunctionCall { args, .. } => any(args),
        ExprKind::Case {
            operand,
            alternatives,
            default,
        } => {
            opt(operand)
                || opt(default)
                || alternatives
                    .iter()
                    .any(|a| ast_mentions_any(&a.when, names) || ast_mentions_any(&a.then, names))
        }
        ExprKind::ListComprehension {
            variable,
            list,
            predicate,
            projection,
        } => named(variable) || ast_mentions_any(list, names) || opt(predicate) || opt(projection),
        ExprKind::Quantifier {
            variable,
            list,
            predicate,
            ..
        } => named(variable) || ast_mentions_any(list, names) || opt(predicate),
        ExprKind::Reduce {
            accumulator,
            init,
            variable,
            list,
            expr,
        } => {
            named(accumulator)
                || named(variable)
                || ast_mentions_any(init, names)
                || ast_mentions_any(list, names)
                || ast_mentions_any(expr, names)
        }
        ExprKind::PatternComprehension { .. }
        | ExprKind::PatternPredicate(_)
        | ExprKind::Exists(_)
        | ExprKind::CountSubquery(_)
        | ExprKind::CollectSubquery(_) => true,
    }
}

/// A variable or a property of a variable: the grouping keys an aggregating expression may
/// use around its aggregates.
fn is_simple(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Variable(_) => true,
        ExprKind::Property { expr, .. } => matches!(expr.kind, ExprKind::Variable(_)),
        _ => false,
    }
}

pub(super) fn already_bound(var: &ast::Ident) -> QueryError {
    syntax(
        "VariableAlreadyBound",
        var.span,
        format!("variable `{}` already declared", var.name),
    )
}

/// The first projection item that is neither a variable nor aliased (WITH needs a name for
/// every item).
fn unaliased_item(projection: &Projection) -> Option<&ast::ProjectionItem> {
    projection
        .items
        .iter()
        .find(|item| item.alias.is_none() && !matches!(item.expr.kind, ExprKind::Variable(_)))
}

/// Whether an aggregate call occurs in `e` (outside subqueries).
pub(crate) fn contains_agg(e: &BExpr) -> bool {
    let mut found = false;
    visit_children(e, &mut |child| {
        if !found {
            found = matches!(child, BExpr::Agg(_)) || contains_agg(child);
        }
    });
    found || matches!(e, BExpr::Agg(_))
}

/// Slots read by `e` outside aggregate calls.
/// The slots `e` reads outside its aggregates: directly (`out`) and through subquery
/// expressions (`subqueries`: their outer rows' slots).
fn referenced_slots_outside_agg(e: &BExpr, out: &mut Vec<usize>, subqueries: &mut Vec<usize>) {
    match e {
        BExpr::Agg(_) => {}
        BExpr::Slot(s) => out.push(*s),
        BExpr::Subquery(subquery) => subqueries.extend(&subquery.outer_slots),
        other => visit_children(other, &mut |child| {
            referenced_slots_outside_agg(child, out, subqueries)
        }),
    }
}

/// Makes the Aggregate keep variable slot `slot` in its output when a grouping key is that
/// variable (grouping by it twice changes no group); false if no key is.
fn keep_key_variable(keys: &mut Vec<(usize, BExpr)>, slot: usize) -> bool {
    let is_key = |(_, e): &(usize, BExpr)| matches!(e, BExpr::Slot(s) if *s == slot);
    if !keys.iter().any(is_key) {
        return false;
    }
    if !keys.iter().any(|(out, _)| *out == slot) {
        keys.push((slot, BExpr::Slot(slot)));
    }
    true
}

/// Rebuilds `e` with each direct child replaced by `f(child)`.
fn map_children(e: BExpr, f: &mut dyn FnMut(BExpr) -> BExpr) -> BExpr {
    match e {
        BExpr::Const(_)
        | BExpr::Param(_)
        | BExpr::Slot(_)
        | BExpr::Path(_)
        | BExpr::Subquery(_)
        | BExpr::Agg(_) => e,
        BExpr::Property(x, k) => BExpr::Property(bx(f, x), k),
        BExpr::HasLabels(x, l) => BExpr::HasLabels(bx(f, x), l),
        BExpr::LabelTest(x, t) => BExpr::LabelTest(bx(f, x), t),
        BExpr::Not(x) => BExpr::Not(bx(f, x)),
        BExpr::Negate(x) => BExpr::Negate(bx(f, x)),
        BExpr::IsNull(x, n) => BExpr::IsNull(bx(f, x), n),
        BExpr::Index(x, y) => BExpr::Index(bx(f, x), bx(f, y)),
        BExpr::And(x, y) => BExpr::And(bx(f, x), bx(f, y)),
        BExpr::Or(x, y) => BExpr::Or(bx(f, x), bx(f, y)),
        BExpr::Xor(x, y) => BExpr::Xor(bx(f, x), bx(f, y)),
        BExpr::Arith(op, x, y) => BExpr::Arith(op, bx(f, x), bx(f, y)),
        BExpr::StringOp(op, x, y) => BExpr::StringOp(op, bx(f, x), bx(f, y)),
        BExpr::In(x, y) => BExpr::In(bx(f, x), bx(f, y)),
        BExpr::Slice(x, y, z) => BExpr::Slice(bx(f, x), y.map(|x| bx(f, x)), z.map(|x| bx(f, x))),
        BExpr::Compare(items, ops) => BExpr::Compare(items.into_iter().map(&mut *f).collect(), ops),
        BExpr::List(items) => BExpr::List(items.into_iter().map(&mut *f).collect()),
        BExpr::Call(name, items) => BExpr::Call(name, items.into_iter().map(&mut *f).collect()),
        BExpr::Map(entries) => BExpr::Map(entries.into_iter().map(|(k, v)| (k, f(v))).collect()),
        BExpr::MapProjection(base, items) => {
            let base = Box::new(f(*base));
            let items = items
                .into_iter()
                .map(|item| match item {
                    MapProjectionItem::Entry(k, v) => MapProjectionItem::Entry(k, f(v)),
                    other => other,
                })
                .collect();
            BExpr::MapProjection(base, items)
        }
        BExpr::Case {
            operand,
            alternatives,
            default,
        } => BExpr::Case {
            operand: operand.map(|x| bx(f, x)),
            alternatives: alternatives
                .into_iter()
                .map(|(w, t)| (f(w), f(t)))
                .collect(),
            default: default.map(|x| bx(f, x)),
        },
        BExpr::ListComprehension {
            slot,
            list,
            predicate,
            projection,
        } => BExpr::ListComprehension {
            slot,
            list: bx(f, list),
            predicate: predicate.map(|x| bx(f, x)),
            projection: projection.map(|x| bx(f, x)),
        },
        BExpr::Quantifier {
            quantifier,
            slot,
            list,
            predicate,
        } => BExpr::Quantifier {
            quantifier,
            slot,
            list: bx(f, list),
            predicate: bx(f, predicate),
        },
        BExpr::Reduce {
            accumulator,
            init,
            slot,
            list,
            expr,
        } => BExpr::Reduce {
            accumulator,
            init: bx(f, init),
            slot,
            list: bx(f, list),
            expr: bx(f, expr),
        },
    }
}

/// Applies `f` to a boxed child, reusing its allocation.
fn bx(f: &mut dyn FnMut(BExpr) -> BExpr, mut x: Box<BExpr>) -> Box<BExpr> {
    let inner = std::mem::replace(&mut *x, BExpr::Const(Value::Null));
    *x = f(inner);
    x
}

/// `MATCH (n $props)` and `MERGE (n $props)` are not allowed; only CREATE takes a map parameter.
fn reject_parameter_map(properties: Option<&ast::Expr>, usage: PatternUse) -> Result<()> {
    match properties {
        Some(props)
            if matches!(props.kind, ExprKind::Parameter(_)) && usage != PatternUse::Create =>
        {
            Err(syntax(
                "InvalidParameterUse",
                props.span,
                "parameter maps cannot be used in MATCH or MERGE patterns",
            ))
        }
        _ => Ok(()),
    }
}
