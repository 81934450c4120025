//! Pattern planning: a MATCH pattern part by part, from the start the cost model chooses.
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
//! A node's plain labels (`:A:B`, and the plain conjuncts of `:A&!B`) drive its label scan
//! (of the first); the rest of a label expression (`!B`, `A|B`, `%`) is a `LabelTest` filter
//! right above the scan or expand that binds the node. A node with no plain label is scanned
//! by the covering label set of its expression (`LabelTest::cover`, each `&` taking its side
//! with fewer nodes by the statistics): a label scan for one label (`(n:A|(A&B))` reads `A`),
//! a union of label scans for more (`(n:A|B)` is `UnionNodeByLabelsScan s0:A|B`, each node
//! once, in id order), the filter above it either way; without a cover
//! (`!A`, `%`, `A|!B`) an all-nodes scan. A label test in the WHERE (`MATCH (n) WHERE n:A|B`)
//! stays a filter over the scan, as a plain `WHERE n:A` does.
//!
//! Which node starts, and so which way each relationship is expanded, comes from the cost
//! model (`cost`) when the caller passes statistics: the pattern's property maps and the
//! MATCH's WHERE are bound before the parts are planned so that the model sees every
//! equality. Without statistics — and for `shortestPath`, which binds both ends first — the
//! rule stands: a bound node, else the first node with a label, else the first node, right
//! then left. The WHERE is left above the pattern's operators as a `Where`, which the
//! optimizer's predicate pushdown (`optimizer::pushdown`) places into them, where
//! `id(n) = v` or `elementId(n) = v` (or `IN`) right above the scan of `n` becomes its id seek
//! (`pushdown`, ID SEEKS; the cost model counts it as a primary-key seek), and a
//! key equality right above a label scan — with an operand of values bound before the scan,
//! however computed (`pushdown`, SEEK OPERANDS) — becomes its seek; with statistics, the
//! seek-selection pass then gives each label scan the best of its key predicates
//! (`choose_seeks`: primary key, else a secondary index, which also answers ranges and
//! prefixes). The cost model predicts both, to judge each start.
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
//! Not done yet (an optimizer pass, later): join ordering across disconnected parts and
//! across clauses (parts are planned in pattern order).

use super::build::{already_bound, chain_and, filter, label_names, where_};
use super::cost::{self, Estimate, NodeShape, Order, RelShape, Start};
use super::group::GroupSlots;
use super::join;
use super::labels::DynamicType;
use super::shape::{node_shape, rel_shape};
use super::shortest::{self, ShortestSearch};
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::{
    BExpr, LabelTest, MAX_VAR_LENGTH_DEPTH, PathElement, Ty, calls_rand, split_conjuncts,
};
use crate::logical::{ExpandSpec, KeySeek, LogicalPlan, OuterJoin, RelSeekSpec, VarLengthSpec};
use crate::optimizer::pushdown::{implied_ins, key_seek, slots_of};
use plexus_cypher::ast::{self, ComparisonOp, Expr, ExprKind, RelDirection};
use plexus_txn::Statistics;
use plexus_types::Direction;
use plexus_value::error::{ErrorClass, QueryError, Result};
use std::collections::HashSet;
use std::sync::Arc;

/// Slots of one pattern part's elements, in pattern order.
pub(super) struct PartSlots {
    /// (slot, bound before this pattern)
    pub(super) nodes: Vec<(usize, bool)>,
    pub(super) rels: Vec<(usize, bool)>,
    pub(super) path: Option<usize>,
    /// A shortest-path part's own WHERE (inside its parenthesized path pattern), bound:
    /// part of the search (see `shortest`).
    pub(super) search_predicate: Option<BExpr>,
    /// The quantified groups among its relationships (see `group`).
    pub(super) groups: Vec<GroupSlots>,
}

/// What a pattern is declared for: which variable reuse is legal differs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PatternUse {
    Match,
    Create,
    Merge,
}

/// A pattern's property map, bound: (key, value) in map order.
pub(super) type Properties = Vec<(Arc<str>, BExpr)>;

/// A WHERE conjunct and the slots it reads (`None`: not listable, see `pushdown`).
pub(super) type Conjunct = (BExpr, Option<Vec<usize>>);

/// One pattern part being planned.
pub(super) struct PartContext<'p> {
    pub(super) part: &'p ast::PatternPart,
    /// Its nodes in pattern order (the start node, then each step's).
    pub(super) nodes: Vec<&'p ast::NodePattern>,
    pub(super) slots: &'p PartSlots,
    pub(super) node_props: Vec<Properties>,
    pub(super) rel_props: Vec<Properties>,
    /// Per node, the filter of its non-plain label expression (see `bind::labels`).
    pub(super) label_tests: Vec<Option<BExpr>>,
    /// Per relationship, its dynamic type (`[r:$(expr)]`), if any.
    pub(super) rel_types: Vec<Option<DynamicType>>,
}

/// One expand of a part: relationship `index`, walked left to right when `rightwards`.
#[derive(Clone, Copy)]
struct Step {
    index: usize,
    rightwards: bool,
    est_rows: Option<f64>,
}

/// With each OR of conjunctions, the `IN`s it implies (`implied_ins`): the cost model sees
/// the seek an OR of equalities gives its node (pushdown places that seek, not a filter).
pub(super) fn conjuncts(predicate: &BExpr) -> Vec<Conjunct> {
    let mut parts = Vec::new();
    split_conjuncts(predicate.clone(), &mut parts);
    let implied: Vec<BExpr> = parts
        .iter()
        .flat_map(|c| implied_ins(c).into_iter().map(|(_, e)| e))
        .collect();
    parts
        .into_iter()
        .chain(implied)
        .map(|c| {
            let slots = slots_of(&c);
            (c, slots)
        })
        .collect()
}

/// `entity.k = v AND ...` for each property, or `None` for none.
pub(super) fn equalities(entity: BExpr, props: &Properties) -> Option<BExpr> {
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
    label_test: Option<&BExpr>,
    props: &Properties,
) -> Option<BExpr> {
    let has_labels = (!labels.is_empty())
        .then(|| BExpr::HasLabels(Box::new(BExpr::Slot(slot)), label_names(labels)));
    let predicate = match (has_labels, equalities(BExpr::Slot(slot), props)) {
        (Some(l), Some(p)) => chain_and(Some(l), p),
        (l, p) => l.or(p),
    };
    match label_test {
        None => predicate,
        Some(test) => chain_and(predicate, test.clone()),
    }
}

/// The condition a node pattern's labels, bound label expression `label_test` and bound
/// properties `props` put on the node in `slot`.
pub(super) fn node_condition(
    slot: usize,
    node: &ast::NodePattern,
    label_test: Option<&BExpr>,
    props: &Properties,
) -> Option<BExpr> {
    node_predicate(slot, &node.labels, label_test, props)
}

/// The filter of relationship `index`'s property map and dynamic type on `entity`.
fn rel_predicate(ctx: &PartContext, index: usize, entity: BExpr) -> Option<BExpr> {
    let props = equalities(entity.clone(), &ctx.rel_props[index]);
    match &ctx.rel_types[index] {
        None => props,
        Some(dynamic) => chain_and(props, dynamic.test(entity)),
    }
}

/// The rule-based start: a bound node, else the first node with a label, else the first
/// with a covering label set, else the first.
fn rule_start(ctx: &PartContext, bound: &HashSet<usize>) -> usize {
    let count = ctx.nodes.len();
    (0..count)
        .find(|&i| bound.contains(&ctx.slots.nodes[i].0))
        .or_else(|| (0..count).find(|&i| !ctx.nodes[i].labels.is_empty()))
        .or_else(|| (0..count).find(|&i| !scan_labels(ctx.nodes[i], None).is_empty()))
        .unwrap_or(0)
}

/// The labels a scan of `node` reads (see PATTERNS): its first plain label, else the covering
/// label set of its label expression, each `&` weighed by `stats` (by the set's size
/// without); none (every node) when it has neither.
pub(super) fn scan_labels(node: &ast::NodePattern, stats: Option<&Statistics>) -> Vec<Arc<str>> {
    if let Some(label) = node.labels.first() {
        return vec![Arc::from(label.name.as_str())];
    }
    let rows = |label: &str| stats.map_or(1.0, |s| s.label_vertices(label) as f64);
    // A label expression with a dynamic label (`$(…)` computed per row) has no cover.
    let test = node.label_expr.as_ref().and_then(LabelTest::bind);
    test.and_then(|t| t.cover(&rows)).unwrap_or_default()
}

/// Whether every property value of the part reads only slots that are `allowed`.
fn properties_read_only(ctx: &PartContext, allowed: impl Fn(&usize) -> bool) -> bool {
    ctx.node_props
        .iter()
        .chain(&ctx.rel_props)
        .flatten()
        .all(|(_, value)| slots_of(value).is_some_and(|s| s.iter().all(&allowed)))
}

/// A scan of node `index` of the part (by [`scan_labels`]) and the filter for the rest of its
/// plain labels, its properties and its label expression; an equality on a property of the
/// node becomes a single-label scan's key seek.
fn scan_node(
    input: LogicalPlan,
    ctx: &PartContext,
    index: usize,
    est_rows: Option<f64>,
    stats: Option<&Statistics>,
) -> LogicalPlan {
    let node = ctx.nodes[index];
    let slot = ctx.slots.nodes[index].0;
    let mut label_union = scan_labels(node, stats);
    let label = if label_union.len() == 1 {
        label_union.pop()
    } else {
        None
    };
    let other_labels = node.labels.get(1..).unwrap_or_default();
    let predicate = node_predicate(
        slot,
        other_labels,
        ctx.label_tests[index].as_ref(),
        &ctx.node_props[index],
    );
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
    stats: Option<&Statistics>,
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
                scan_node(plan, ctx, node, est_rows, stats)
            } else {
                let pattern = ctx.nodes[node];
                let predicate = node_predicate(
                    slot,
                    &pattern.labels,
                    ctx.label_tests[node].as_ref(),
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
            ctx.label_tests[i].as_ref(),
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
pub(super) struct PartOrder {
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
        label_tests: ctx.label_tests.clone(),
        rel_types: ctx.rel_types.clone(),
    };
    Some((alone, keys))
}

/// The slots of the variables in `scope`.
pub(super) fn bound_slots(scope: &Scope) -> HashSet<usize> {
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
    /// A MATCH on `plan` (estimated at `rows`), and the estimated rows after it.
    pub(super) fn plan_match(
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
    pub(super) fn plan_optional_match(
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
    pub(super) fn declare_pattern(
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
                search_predicate: None,
                groups: Vec::new(),
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
            if rel.types.len() + usize::from(rel.dynamic_type.is_some()) != 1 {
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
        let mut slots = self.declare_pattern(scope, parts, PatternUse::Match)?;
        self.bind_groups(scope, parts, &mut slots)?;
        let mut bind = |p: &Expr| -> Result<BExpr> {
            let bound = self.bind_expr(p, scope, ExprCtx::PLAIN)?;
            self.check_boolean(&bound, p.span)?;
            Ok(bound)
        };
        let mut predicate = match predicate {
            Some(p) => Some(bind(p)?),
            None => None,
        };
        // A parenthesized path pattern's own WHERE: part of a shortest-path search, else
        // one more conjunct of the MATCH's.
        for (part, slots) in parts.iter().zip(&mut slots) {
            if let Some(p) = &part.predicate {
                let bound = bind(p)?;
                if part.shortest.is_some() {
                    slots.search_predicate = Some(bound);
                } else {
                    predicate = chain_and(predicate, bound);
                }
            }
        }
        Ok((slots, predicate))
    }

    /// The [`PartContext`] of each part, in pattern order.
    pub(super) fn part_contexts<'p>(
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
        let mut searches = Vec::new();
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
                if ctx.part.shortest.is_some() {
                    searches.push(ShortestSearch {
                        rels: ctx.slots.rels[0].0,
                        path: ctx.slots.path.map(|slot| (slot, part_path(ctx))),
                        bound: bound.clone(),
                        own: ctx.slots.search_predicate.clone(),
                        takes_where: !ctx.part.selector,
                    });
                }
            }
        }
        let predicate = shortest::into_searches(&mut plan, &searches, predicate);
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
    pub(super) fn part_context<'p>(
        &mut self,
        part: &'p ast::PatternPart,
        slots: &'p PartSlots,
        scope: &Scope,
    ) -> Result<PartContext<'p>> {
        let mut nodes = vec![&part.element.start];
        nodes.extend(part.element.chain.iter().map(|s| &s.node));
        let mut node_props = vec![self.bind_properties(nodes[0].properties.as_ref(), scope)?];
        let mut rel_props = Vec::with_capacity(part.element.chain.len());
        let mut rel_types = Vec::with_capacity(part.element.chain.len());
        for step in &part.element.chain {
            rel_props.push(self.bind_properties(step.relationship.properties.as_ref(), scope)?);
            rel_types.push(self.bind_dynamic_type(&step.relationship, scope)?);
            node_props.push(self.bind_properties(step.node.properties.as_ref(), scope)?);
        }
        let label_tests = (nodes.iter().zip(&slots.nodes))
            .map(|(node, &(slot, _))| self.bind_node_label_expr(slot, node, scope))
            .collect::<Result<_>>()?;
        Ok(PartContext {
            part,
            nodes,
            slots,
            node_props,
            rel_props,
            label_tests,
            rel_types,
        })
    }

    /// `{k: v, ...}` in a pattern → `[(k, v), ...]`, the values bound.
    pub(super) fn bind_properties(
        &mut self,
        props: Option<&Expr>,
        scope: &Scope,
    ) -> Result<Properties> {
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
    pub(super) fn part_order(
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
    pub(super) fn plan_part_in_order(
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
        plan = plan_start(plan, ctx, start, bound, expanded, self.stats);
        if ctx.part.shortest.is_some() {
            // A shortest path is searched between two bound ends: bind the others first.
            for i in 0..ctx.nodes.len() {
                if bound.insert(ctx.slots.nodes[i].0) {
                    plan = scan_node(plan, ctx, i, None, self.stats);
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
        let lists = ctx.slots.group_lists();
        if !lists.is_empty() {
            bound.extend(lists.iter().map(|(slot, _)| *slot));
            plan = LogicalPlan::Project {
                input: Box::new(plan),
                items: lists,
            };
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
                filter(expand, rel_predicate(ctx, i, BExpr::Slot(expand_slot)))
            }
            Some(length) => {
                let mut length = self.var_length(ctx, i, length, step)?;
                length.hop_filter = ctx.slots.group_hop(i);
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
                ctx.label_tests[to_index].as_ref(),
                &ctx.node_props[to_index],
            ),
        ))
    }

    /// The bounds and per-relationship filter of a variable-length step.
    fn var_length(
        &mut self,
        ctx: &PartContext,
        index: usize,
        length: ast::VarLength,
        step: Step,
    ) -> Result<VarLengthSpec> {
        let rel = &ctx.part.element.chain[index].relationship;
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
        let rel_filter = if rel.properties.is_some() || rel.dynamic_type.is_some() {
            let temp = self.new_slot(Ty::Rel, rel.span)?;
            rel_predicate(ctx, index, BExpr::Slot(temp)).map(|p| (temp, p))
        } else {
            None
        };
        let rel_filter = rel_filter.into_iter().collect();
        Ok(VarLengthSpec {
            min,
            max,
            rel_filter,
            node_filter: Vec::new(),
            hop_filter: None,
            path_filter: None,
            shortest: ctx.part.shortest,
            leftwards: !step.rightwards,
            ends_only: false,
            rels_unread: false,
            frontier_workers: 1,
        })
    }
}

/// `MATCH (n $props)` and `MERGE (n $props)` are not allowed; only CREATE takes a map parameter.
pub(super) fn reject_parameter_map(
    properties: Option<&ast::Expr>,
    usage: PatternUse,
) -> Result<()> {
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
