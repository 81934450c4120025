//! The `join_ordering` pass: each bound MATCH pattern (`LogicalPlan::Match`, see
//! `logical::pattern`) becomes the operators that match it — the order of its parts, where
//! each part starts, the order and direction of its expands, and whether a disconnected part
//! is nested under the rows before it or becomes the build side of a hash join — chosen by
//! the cost model ([`cost`]) over the database's statistics.
//!
//! PATTERNS
//! ========
//! A pattern is planned part by part, in the order PART ORDER (below) picks. Each part
//! starts at one of its nodes — a node already bound (by an earlier clause or part), a key
//! seek, a label scan or an all-nodes scan — or, with statistics, at a relationship found by
//! a relationship index seek (`seek_rel`: the relationship and both ends bound at once, then
//! the filters of all three), and expands to one side of it and then the other; an expand
//! whose far end is already bound checks that end instead of binding it. Every relationship
//! expanded in one MATCH must differ from those expanded before it in the same MATCH
//! (Cypher's relationship isomorphism), which Expand enforces with its `distinct_from` list,
//! whatever the order of the expands and of the parts.
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
//! model with statistics: the pattern's property maps and the MATCH's WHERE are bound, so
//! the model sees every equality. Without statistics — and for `shortestPath`, which binds
//! both ends first — the rule stands: a bound node, else the first node with a label, else
//! the first node, right then left. The WHERE is left above the pattern's operators as a
//! `Where`, which the next pass, predicate pushdown (`optimizer::pushdown`), places into them,
//! where `id(n) = v` or `elementId(n) = v` (or `IN`) right above the scan of `n` becomes its
//! id seek (`pushdown`, ID SEEKS; the cost model counts it as a primary-key seek), and a key
//! equality right above a label scan — with an operand of values bound before the scan,
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
//! property-map equalities moved into a filter above the join. An OPTIONAL MATCH of one such
//! part becomes a left outer `HashJoin` the same way (`join`, LEFT OUTER); any other runs as
//! an `Optional` whose inner plan runs per row.
//!
//! ROW ESTIMATES
//! =============
//! To judge a hash join the pass needs the estimated rows of the plan a MATCH is built on,
//! per argument row. It lowers the plan bottom-up and carries that estimate up the chain of
//! clauses ([`lower`]): an `Argument` (the start of a query, of a `CALL { }` body, of an
//! OPTIONAL MATCH's inner plan) is one row; a MATCH multiplies by its estimate, an UNWIND
//! by its list's (`shape::unwind_rows`), a LOAD CSV by [`cost::LOAD_CSV_ESTIMATE_ROWS`];
//! every other operator keeps its input's — too high after one that drops rows (WITH …
//! WHERE, LIMIT), too low after one whose rows are not estimated (OPTIONAL MATCH, MERGE,
//! CALL), where it then never makes a hash join look cheaper than it is. A MERGE's matcher
//! and a pattern subquery's match run per outer row (`MatchForm::Match { estimated: false }`)
//! and are never a probe side. Without statistics nothing is estimated and no hash join is
//! planned.
//!
//! PART ORDER
//! ==========
//! The parts of one MATCH are planned in pattern order unless another order is estimated at
//! less than half the work ([`PART_ORDER_GAIN`]): the greedy order, which takes next the
//! part cheapest to plan on what is bound so far (its cost plus its rows per input row),
//! among those whose expressions read no variable a part not yet planned binds — and among
//! those that share a variable with what is bound, while there are any (a part sharing
//! none would be a cartesian product or a hash join on an estimate of the rows before it,
//! the crudest estimate of all: in IC6 of the SNB mini set, `(f)<-[:HAS_CREATOR]-(post),
//! (post)-[:HAS_TAG]->(t:Tag {id: knownTagId}), …` moved the `t` part first and hashed
//! every tag, 3.4 → 11 ms). The work of an order is what planning the parts in it would
//! do (`sequence_work`, each part placed as it then will be): a nested part's cost times
//! the rows before it, a hashed part's build, table and probes — so an order that lets a
//! hash join pay is weighed with it (`MATCH (a:A), (b:B) WHERE a.k = b.k AND b.j IS NOT
//! NULL` keeps `b` hashed rather than starting at the fewer `b`s nested). So `MATCH (x:Big),
//! (y:Small {id: 1})-[:R]->(x)` seeks `y`, expands to `x` and checks `x`'s label, instead of
//! scanning every `Big` and expanding each; a plain cartesian product, whose work is the
//! same either way round, keeps pattern order (and so its row order). Shortest-path parts
//! (searched between ends bound before them) keep pattern order, and so does a MATCH
//! without statistics.
//!
//! Not done yet: ordering across clauses (each MATCH is planned on the rows of the clauses
//! before it), bushy joins (a hashed part is always the build side of the rows so far).
//!
//! INVARIANTS
//! ==========
//! - No `Match` survives the pass (asserted by the optimizer).
//! - The operators of a part bind exactly its variables, and a hash join's build side only
//!   its part's (asserted).
//! - Only the order of work depends on the statistics: every plan checks the same
//!   predicates, relationship uniqueness and bound ends (see [`cost`]).

mod cost;
mod join;
mod part;
mod shape;
mod shortest;

use crate::logical::{
    BExpr, BoundPart, LogicalPlan, MatchForm, OuterJoin, PatternMatch, calls_rand, chain_and,
    split_conjuncts,
};
use crate::optimizer::pushdown::{implied_ins, slots_of};
use cost::Estimate;
use part::PartOrder;
use plexus_cypher::ast::ComparisonOp;
use plexus_txn::Statistics;
use shortest::ShortestSearch;
use std::collections::HashSet;

/// A WHERE conjunct and the slots it reads (`None`: not listable, see `pushdown`).
type Conjunct = (BExpr, Option<Vec<usize>>);

/// Replaces every `Match` in `plan` by its operators (see PATTERNS).
pub(super) fn order_joins(plan: &mut LogicalPlan, stats: Option<&Statistics>) {
    lower(plan, &Planner { stats });
}

/// Lowers the `Match`es of `plan`, inputs first; returns the estimate of `plan`'s rows per
/// argument row (see ROW ESTIMATES).
fn lower(plan: &mut LogicalPlan, planner: &Planner) -> Option<f64> {
    match plan {
        LogicalPlan::Argument => Some(1.0),
        LogicalPlan::Match { input, .. } => {
            let rows = lower(input, planner);
            let LogicalPlan::Match { input, pattern } =
                std::mem::replace(plan, LogicalPlan::Argument)
            else {
                unreachable!("matched above");
            };
            let (lowered, rows) = planner.plan_match(*input, rows, *pattern);
            *plan = lowered;
            rows
        }
        LogicalPlan::Unwind { input, expr, .. } => {
            let rows = lower(input, planner);
            rows.map(|rows| rows * shape::unwind_rows(expr))
        }
        LogicalPlan::LoadCsv { input, .. } => {
            lower(input, planner).map(|rows| rows * cost::LOAD_CSV_ESTIMATE_ROWS)
        }
        _ => {
            let mut children = plan.children_mut().into_iter();
            let rows = children.next().and_then(|input| lower(input, planner));
            for inner in children {
                lower(inner, planner);
            }
            rows
        }
    }
}

/// With each OR of conjunctions, the `IN`s it implies (`implied_ins`): the cost model sees
/// the seek an OR of equalities gives its node (pushdown places that seek, not a filter).
fn conjuncts(predicate: &BExpr) -> Vec<Conjunct> {
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

/// The slots of a part's variables (nodes, relationships, path), sorted, each once.
fn part_slots(part: &BoundPart) -> Vec<usize> {
    let nodes = part.nodes.iter().map(|n| n.slot);
    let elements = nodes.chain(part.rels.iter().map(|r| r.slot));
    let mut all: Vec<usize> = elements.chain(part.path).collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// How much cheaper than pattern order the greedy order of a MATCH's parts must be estimated
/// to be planned instead (see PART ORDER): a margin over the guesses in the estimates, and
/// pattern order (the order rows come in) kept where the choice is close.
const PART_ORDER_GAIN: f64 = 2.0;

/// Every slot planning `part` fills for the rows after it: its variables' and its quantified
/// groups' lists (what a hash join must carry from its build side).
fn binds(part: &BoundPart) -> impl Iterator<Item = usize> + '_ {
    let lists = part.group_lists.iter().map(|(slot, _)| *slot);
    part_slots(part).into_iter().chain(lists)
}

/// Whether every expression of `part` (property maps, label tests, dynamic types, hop
/// conditions, group lists) reads none of the slots `unplanned` but the part's own: it can
/// be planned before the parts that bind them.
fn reads_only_own_or(part: &BoundPart, unplanned: &HashSet<usize>) -> bool {
    let own: Vec<usize> = binds(part).collect();
    let node_exprs = part.nodes.iter().flat_map(|n| {
        let props = n.props.iter().map(|(_, e)| e);
        props.chain(n.label_test.as_ref())
    });
    let rel_exprs = part.rels.iter().flat_map(|r| {
        let props = r.props.iter().map(|(_, e)| e);
        let dynamic = r.dynamic_type.as_ref().map(|d| &d.names);
        props
            .chain(dynamic)
            .chain(r.group_hop.as_ref().map(|h| &h.predicate))
    });
    let group_lists = part.group_lists.iter().map(|(_, e)| e);
    let mut exprs = node_exprs.chain(rel_exprs).chain(group_lists);
    exprs.all(|e| {
        slots_of(e)
            .is_some_and(|slots| (slots.iter()).all(|s| own.contains(s) || !unplanned.contains(s)))
    })
}

/// How a part is planned onto the rows so far.
enum Placement {
    /// Under each row, in this order.
    Nested(PartOrder),
    /// Once, as a hash join's build side.
    Hashed(JoinChoice),
}

impl Placement {
    /// The estimated rows after the part, on `rows` rows before it.
    fn rows_after(&self, rows: Option<f64>) -> Option<f64> {
        match self {
            Placement::Hashed(join) => {
                let build_rows = join.build_rows();
                rows.map(|probe_rows| cost::hash_join_rows(probe_rows, build_rows))
            }
            Placement::Nested(nested) => {
                rows.zip(nested.estimate.as_ref()).map(|(r, e)| r * e.rows)
            }
        }
    }
}

/// A part chosen as the build side of a hash join: the key pairs (input side, part side) —
/// first the `map_keys` from its property maps, then those from the WHERE — the part without
/// those property-map entries (`alone`), and how it is planned on its own (with an estimate).
struct JoinChoice {
    keys: Vec<(BExpr, BExpr)>,
    map_keys: usize,
    alone: BoundPart,
    order: PartOrder,
}

impl JoinChoice {
    /// The estimated rows of the build side (a join is chosen by its estimate).
    fn build_rows(&self) -> f64 {
        let estimate = self.order.estimate.as_ref();
        estimate.expect("a joined part has an estimate").rows
    }
}

/// `part` as the build side of a join onto rows binding `bound`: without the property-map
/// entries that read those rows, with the keys they give (input side, part side, see
/// `join::map_entry`); `None` when an entry reads both sides or cannot be a key — one on a
/// variable-length relationship is a per-hop filter, no equality on a slot.
fn split_map_keys(
    part: &BoundPart,
    bound: &HashSet<usize>,
    slots: &[usize],
) -> Option<(BoundPart, Vec<(BExpr, BExpr)>)> {
    let mut keys = Vec::new();
    let mut alone = part.clone();
    let mut own = |slot: usize, props: &mut Vec<_>, per_hop: bool| -> Option<()> {
        let mut kept = Vec::new();
        for (key, value) in props.drain(..) {
            match join::map_entry(slot, &key, &value, bound, slots) {
                join::MapEntry::Own => kept.push((key, value)),
                join::MapEntry::Key(input, build) if !per_hop => keys.push((input, build)),
                _ => return None,
            }
        }
        *props = kept;
        Some(())
    };
    for node in &mut alone.nodes {
        own(node.slot, &mut node.props, false)?;
    }
    for rel in &mut alone.rels {
        own(rel.slot, &mut rel.props, rel.length.is_some())?;
    }
    Some((alone, keys))
}

/// What the pass reads besides the plan.
struct Planner<'a> {
    /// `None`: the rule-based order, no estimates, no hash joins.
    stats: Option<&'a Statistics>,
}

impl Planner<'_> {
    /// The operators of `pattern` on `input` (estimated at `rows`), and the estimated rows
    /// after them.
    fn plan_match(
        &self,
        input: LogicalPlan,
        rows: Option<f64>,
        pattern: PatternMatch,
    ) -> (LogicalPlan, Option<f64>) {
        let PatternMatch {
            parts,
            predicate,
            bound,
            form,
        } = pattern;
        let bound: HashSet<usize> = bound.into_iter().collect();
        match form {
            MatchForm::Match { estimated } => {
                let rows = rows.filter(|_| estimated);
                self.plan_parts((input, rows), bound, &parts, predicate)
            }
            MatchForm::Optional { nulls } => {
                let join = rows.and_then(|probe_rows| {
                    self.optional_join_choice(&parts, &bound, predicate.as_ref(), probe_rows)
                });
                let plan = match join {
                    Some(join) => self.plan_outer_hash_join(input, join, predicate, nulls),
                    None => {
                        let argument = (LogicalPlan::Argument, Some(1.0));
                        let (inner, _) = self.plan_parts(argument, bound, &parts, predicate);
                        LogicalPlan::Optional {
                            input: Box::new(input),
                            inner: Box::new(inner),
                            nulls,
                        }
                    }
                };
                (plan, rows)
            }
        }
    }

    /// The left outer hash join an OPTIONAL MATCH of `parts`, under the WHERE `predicate`,
    /// should become on `probe_rows` rows binding `bound`: only for one part, by the rules
    /// and cost of a MATCH's join ([`Self::join_choice`]).
    fn optional_join_choice(
        &self,
        parts: &[BoundPart],
        bound: &HashSet<usize>,
        predicate: Option<&BExpr>,
        probe_rows: f64,
    ) -> Option<JoinChoice> {
        let [part] = parts else {
            return None;
        };
        let conjuncts = predicate.map(conjuncts).unwrap_or_default();
        let nested = self.part_order(part, bound, &conjuncts);
        let nested = nested.estimate.as_ref()?;
        self.join_choice(part, bound, &[], &conjuncts, probe_rows, nested)
    }

    /// `parts` planned one after the other on `plan` (estimated at `rows`), whose rows bind
    /// `bound`, each nested or hash-joined, under the WHERE `predicate`.
    fn plan_parts(
        &self,
        (mut plan, mut rows): (LogicalPlan, Option<f64>),
        mut bound: HashSet<usize>,
        parts: &[BoundPart],
        predicate: Option<BExpr>,
    ) -> (LogicalPlan, Option<f64>) {
        let conjuncts = predicate.as_ref().map(conjuncts).unwrap_or_default();
        let mut expanded: Vec<usize> = Vec::new();
        let mut searches = Vec::new();
        let sequence = self.part_sequence(parts, &bound, &conjuncts, rows);
        for part in sequence.into_iter().map(|i| &parts[i]) {
            let placement = self.place(part, &bound, &expanded, &conjuncts, rows);
            rows = placement.rows_after(rows);
            match placement {
                Placement::Hashed(join) => {
                    bound.extend(binds(&join.alone));
                    let (joined, map_equalities) = self.hash_join(plan, join, &mut expanded);
                    plan = joined.filtered(map_equalities);
                }
                Placement::Nested(nested) => {
                    plan = self.plan_part_in_order(plan, part, nested, &mut bound, &mut expanded);
                    if part.shortest.is_some() {
                        searches.push(ShortestSearch {
                            rels: part.rels[0].slot,
                            path: part.path.map(|slot| (slot, part::path_expr(part))),
                            bound: bound.clone(),
                            own: part.search_predicate.clone(),
                            takes_where: !part.selector,
                        });
                    }
                }
            }
        }
        let predicate = shortest::into_searches(&mut plan, &searches, predicate);
        (plan.under_where(predicate), rows)
    }

    /// How `part` goes onto rows (estimated at `rows`) binding `bound`, after the
    /// relationships `expanded`: hashed when a join is allowed and pays (see `join`), else
    /// nested.
    fn place(
        &self,
        part: &BoundPart,
        bound: &HashSet<usize>,
        expanded: &[usize],
        conjuncts: &[Conjunct],
        rows: Option<f64>,
    ) -> Placement {
        let nested = self.part_order(part, bound, conjuncts);
        let join = rows
            .zip(nested.estimate.as_ref())
            .and_then(|(probe_rows, nested)| {
                self.join_choice(part, bound, expanded, conjuncts, probe_rows, nested)
            });
        match join {
            Some(join) => Placement::Hashed(join),
            None => Placement::Nested(nested),
        }
    }

    /// The order `parts` are planned in (see PART ORDER): pattern order, unless the greedy
    /// order is estimated at less than half its work. `rows`: the input's estimate.
    fn part_sequence(
        &self,
        parts: &[BoundPart],
        bound: &HashSet<usize>,
        conjuncts: &[Conjunct],
        rows: Option<f64>,
    ) -> Vec<usize> {
        let pattern_order: Vec<usize> = (0..parts.len()).collect();
        if self.stats.is_none() || parts.len() < 2 || parts.iter().any(|p| p.shortest.is_some()) {
            return pattern_order;
        }
        let mut sequence = Vec::with_capacity(parts.len());
        let mut remaining = pattern_order.clone();
        let mut known = bound.clone();
        while !remaining.is_empty() {
            let unplanned: HashSet<usize> = (remaining.iter())
                .flat_map(|&i| binds(&parts[i]))
                .filter(|s| !known.contains(s))
                .collect();
            let eligible: Vec<(usize, usize)> = (remaining.iter().copied().enumerate())
                .filter(|&(_, i)| reads_only_own_or(&parts[i], &unplanned))
                .collect();
            // A part sharing a variable with what is bound goes before any that shares none.
            let connected = |i: usize| part_slots(&parts[i]).iter().any(|s| known.contains(s));
            let any_connected = eligible.iter().any(|&(_, i)| connected(i));
            let mut best: Option<(usize, f64)> = None;
            for (position, i) in eligible {
                if any_connected && !connected(i) {
                    continue;
                }
                let estimate = self.part_order(&parts[i], &known, conjuncts).estimate;
                let work = estimate.map_or(f64::INFINITY, |e| e.cost + e.rows);
                if best.is_none_or(|(_, least)| work < least) {
                    best = Some((position, work));
                }
            }
            // Pattern order reads only what it binds first, so one part is always eligible.
            let position = best.map_or(0, |(position, _)| position);
            let chosen = remaining.remove(position);
            known.extend(binds(&parts[chosen]));
            sequence.push(chosen);
        }
        let pattern_work = self.sequence_work(parts, &pattern_order, bound, conjuncts, rows);
        let greedy_work = self.sequence_work(parts, &sequence, bound, conjuncts, rows);
        if greedy_work * PART_ORDER_GAIN < pattern_work {
            sequence
        } else {
            pattern_order
        }
    }

    /// The estimated work of planning `parts` in `order` on rows estimated at `rows` (one
    /// when not estimated), each placed as [`Self::place`] would: a nested part's cost times
    /// the rows before it, a hashed part's build, table and probes (see `cost`, HASH JOINS).
    fn sequence_work(
        &self,
        parts: &[BoundPart],
        order: &[usize],
        bound: &HashSet<usize>,
        conjuncts: &[Conjunct],
        mut rows: Option<f64>,
    ) -> f64 {
        let mut known = bound.clone();
        let mut expanded = Vec::new();
        let mut scale = rows.unwrap_or(1.0);
        let mut work = 0.0;
        for part in order.iter().map(|&i| &parts[i]) {
            let placement = self.place(part, &known, &expanded, conjuncts, rows);
            rows = placement.rows_after(rows);
            match &placement {
                Placement::Hashed(join) => {
                    let build_rows = join.build_rows();
                    let build = join.order.estimate.as_ref().map_or(0.0, |e| e.cost);
                    work += build + build_rows + scale;
                    scale = cost::hash_join_rows(scale, build_rows);
                }
                Placement::Nested(nested) => {
                    let Some(estimate) = nested.estimate.as_ref() else {
                        return f64::INFINITY;
                    };
                    work += scale * estimate.cost;
                    scale *= estimate.rows;
                }
            }
            known.extend(binds(part));
            expanded.extend(part.rels.iter().map(|r| r.expand_slot));
        }
        work
    }

    /// The hash join that planning `part` on `probe_rows` input rows should become, if any
    /// (see `join` for when): the part must share no variable with them, be equated with them
    /// by its property maps or the WHERE, read nothing of theirs otherwise, and be cheaper
    /// hashed than `nested`.
    fn join_choice(
        &self,
        part: &BoundPart,
        bound: &HashSet<usize>,
        expanded: &[usize],
        conjuncts: &[Conjunct],
        probe_rows: f64,
        nested: &Estimate,
    ) -> Option<JoinChoice> {
        let slots = part_slots(part);
        let shares_variable = slots.iter().any(|s| bound.contains(s));
        // Relationship uniqueness between the sides is not checked by the join.
        let unique_across = !expanded.is_empty() && !part.rels.is_empty();
        if shares_variable || unique_across {
            return None;
        }
        let (alone, mut keys) = split_map_keys(part, bound, &slots)?;
        let map_keys = keys.len();
        keys.extend(
            conjuncts
                .iter()
                .filter_map(|(c, _)| join::key(c, bound, &slots)),
        );
        if keys.is_empty() {
            return None;
        }
        let order = self.part_order(&alone, &HashSet::new(), conjuncts);
        let build = order.estimate.as_ref()?;
        cost::hash_join_pays(probe_rows, nested, build).then_some(JoinChoice {
            keys,
            map_keys,
            alone,
            order,
        })
    }

    /// The part of `join` planned on its own as the build side of a left outer hash join on
    /// `plan` (an OPTIONAL MATCH, see `join`, LEFT OUTER): the conjuncts of `predicate` that
    /// read only the part (and call no `rand()`) filter the build side; the rest, and the
    /// equalities its property maps gave as keys, are the residual each partner must pass.
    /// The slots `nulls` (the OPTIONAL MATCH's) are nulled without a partner.
    fn plan_outer_hash_join(
        &self,
        plan: LogicalPlan,
        join: JoinChoice,
        predicate: Option<BExpr>,
        nulls: Vec<usize>,
    ) -> LogicalPlan {
        let (mut joined, mut residual) = self.hash_join(plan, join, &mut Vec::new());
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
            **build = side.under_where(own);
        }
        *optional = Some(OuterJoin { residual, nulls });
        joined
    }

    /// The `HashJoin` of `join`'s part, planned on its own as the build side, onto `plan`;
    /// and the equalities its property maps gave as keys (they read both sides, so the join
    /// cannot leave them to either).
    fn hash_join(
        &self,
        plan: LogicalPlan,
        join: JoinChoice,
        expanded: &mut Vec<usize>,
    ) -> (LogicalPlan, Option<BExpr>) {
        let est_rows = join.build_rows();
        let JoinChoice {
            keys,
            map_keys,
            alone,
            order,
        } = join;
        debug_assert!(expanded.is_empty() || alone.rels.is_empty());
        let mut build_bound = HashSet::new();
        let build = self.plan_part_in_order(
            LogicalPlan::Argument,
            &alone,
            order,
            &mut build_bound,
            expanded,
        );
        // Every slot the build side fills goes through the join: its variables and its
        // quantified groups' lists.
        let mut build_slots: Vec<usize> = binds(&alone).collect();
        build_slots.sort_unstable();
        build_slots.dedup();
        debug_assert!(
            build_bound.iter().all(|s| build_slots.contains(s)),
            "the build side binds only its part's variables"
        );
        let map_equalities = keys[..map_keys].iter().fold(None, |acc, (input, build)| {
            let equality =
                BExpr::Compare(vec![build.clone(), input.clone()], vec![ComparisonOp::Eq]);
            chain_and(acc, equality)
        });
        let joined = LogicalPlan::HashJoin {
            input: Box::new(plan),
            build: Box::new(build),
            keys,
            build_slots,
            est_rows,
            optional: None,
        };
        (joined, map_equalities)
    }
}
