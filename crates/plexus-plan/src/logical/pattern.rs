//! A MATCH's pattern as the binder leaves it: what to match, not yet how.
//!
//! BOUND PATTERNS
//! ==============
//! The binder resolves a pattern's variables to slots, binds its property maps, label
//! expressions, dynamic types, quantified groups and WHERE, checks what it can check, and
//! emits one [`LogicalPlan::Match`] over the plan so far: the parts as written, each element
//! with everything its operators will need ([`BoundPart`]). It decides nothing about order.
//! The first optimizer pass, `join_ordering` (`optimizer::join_order`), replaces each
//! `Match` by operators — where each part starts, which way each relationship is expanded,
//! and whether a disconnected part becomes the build side of a hash join — with the cost
//! model over the database's statistics, and leaves the WHERE as a `Where` for predicate
//! pushdown. So EXPLAIN VERBOSE shows the pattern as bound, then as ordered.
//!
//! INVARIANTS
//! ==========
//! - A `Match` holds no AST: its expressions are bound ([`BExpr`]) and every slot its
//!   operators will fill is allocated (the fresh slot a relationship bound by an earlier
//!   clause is expanded into, a variable-length relationship's per-hop filter slot), so the
//!   pass needs nothing from the binder but the statistics.
//! - `nodes.len() == rels.len() + 1` in every part; relationship `i` joins nodes `i` and
//!   `i + 1`, in pattern order.
//! - Only logical: no plan the optimizer returns holds a `Match` (asserted, as for `Where`).

use super::{BExpr, HopFilter, LabelTest, LogicalPlan};
use plexus_cypher::ast::{ComparisonOp, ShortestPath, VarLength};
use plexus_types::Direction;
use std::sync::Arc;

/// A pattern's property map, bound: (key, value) in map order.
pub type Properties = Vec<(Arc<str>, BExpr)>;

/// One MATCH (or OPTIONAL MATCH, or a MERGE's or pattern subquery's match) as bound.
#[derive(Debug, Clone)]
pub struct PatternMatch {
    /// The parts, in pattern order.
    pub parts: Vec<BoundPart>,
    /// The MATCH's WHERE with the parts' own WHERE conjuncts (those of a shortest-path part
    /// excepted: see [`BoundPart::search_predicate`]).
    pub predicate: Option<BExpr>,
    /// The slots the input rows bind, sorted.
    pub bound: Vec<usize>,
    pub form: MatchForm,
}

/// What the rows of a [`PatternMatch`] are for.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchForm {
    /// A MATCH: only the rows that match. `estimated`: the input is a clause chain whose
    /// rows the cost model estimates (a query's); not for a MERGE's matcher or a pattern
    /// subquery, which run per outer row and never become a hash join's probe side.
    Match { estimated: bool },
    /// An OPTIONAL MATCH: every input row at least once, the slots `nulls` null when nothing
    /// matches.
    Optional { nulls: Vec<usize> },
}

/// One pattern part, bound.
#[derive(Debug, Clone)]
pub struct BoundPart {
    pub nodes: Vec<BoundNode>,
    pub rels: Vec<BoundRel>,
    /// The part's path variable's slot, if it names one.
    pub path: Option<usize>,
    /// `shortestPath(...)` / `allShortestPaths(...)` or a GQL shortest selector.
    pub shortest: Option<ShortestPath>,
    /// Whether the shortest search comes from a GQL selector (`ANY SHORTEST`), whose MATCH
    /// WHERE filters afterwards rather than being part of the search.
    pub selector: bool,
    /// A shortest-path part's own WHERE (inside its parenthesized path pattern): part of the
    /// search.
    pub search_predicate: Option<BExpr>,
    /// The quantified groups' node lists to project after the part: (slot, expression).
    pub group_lists: Vec<(usize, BExpr)>,
}

/// A node of a part.
#[derive(Debug, Clone)]
pub struct BoundNode {
    pub slot: usize,
    /// Bound by an earlier clause (the same variable in the input rows).
    pub prebound: bool,
    /// Its plain labels (`:A:B`), in order.
    pub labels: Vec<Arc<str>>,
    /// Its label expression as a static test, for the covering label set a scan reads when
    /// it has no plain label (`None`: none, or one with a dynamic label).
    pub label_cover: Option<LabelTest>,
    /// The filter of its non-plain label expression (see `bind::labels`).
    pub label_test: Option<BExpr>,
    pub props: Properties,
}

/// A relationship of a part.
#[derive(Debug, Clone)]
pub struct BoundRel {
    pub slot: usize,
    /// Bound by an earlier clause: it is expanded into `expand_slot` and compared.
    pub prebound: bool,
    /// The slot its expand fills: `slot`, or a fresh one when `prebound`.
    pub expand_slot: usize,
    pub types: Vec<Arc<str>>,
    /// As written, walked left to right: `Out` for `-->`, `In` for `<--`, `Both` for `--`.
    pub direction: Direction,
    /// A variable-length relationship's bounds.
    pub length: Option<VarLength>,
    pub props: Properties,
    /// Its dynamic type (`[r:$(expr)]`), if any.
    pub dynamic_type: Option<DynamicType>,
    /// A variable-length relationship with a property map or a dynamic type: the slot its
    /// per-relationship filter reads each hop from.
    pub hop_slot: Option<usize>,
    /// A quantified group's condition on each hop.
    pub group_hop: Option<HopFilter>,
}

/// A bound `[r:$(names)]` / `[r:$any(names)]`, tested on whichever slot holds the
/// relationship (the expand's, or a variable-length hop's).
#[derive(Debug, Clone)]
pub struct DynamicType {
    pub names: BExpr,
    pub any: bool,
}

impl DynamicType {
    pub fn test(&self, entity: BExpr) -> BExpr {
        BExpr::DynamicLabels {
            entity: Box::new(entity),
            names: Box::new(self.names.clone()),
            any: self.any,
        }
    }
}

impl BoundNode {
    /// The filter of the node's labels (from the `skip_labels`-th on), properties and label
    /// expression, in that order.
    pub fn predicate(&self, skip_labels: usize) -> Option<BExpr> {
        let labels = self.labels.get(skip_labels..).unwrap_or_default();
        node_predicate(self.slot, labels, self.label_test.as_ref(), &self.props)
    }
}

impl BoundRel {
    /// The filter of the relationship's property map and dynamic type on `entity`.
    pub fn predicate(&self, entity: BExpr) -> Option<BExpr> {
        let props = equalities(entity.clone(), &self.props);
        match &self.dynamic_type {
            None => props,
            Some(dynamic) => chain_and(props, dynamic.test(entity)),
        }
    }
}

/// The filter of a node's `labels`, properties and label expression (`(n:A|B)`), in that
/// order.
pub fn node_predicate(
    slot: usize,
    labels: &[Arc<str>],
    label_test: Option<&BExpr>,
    props: &Properties,
) -> Option<BExpr> {
    let has_labels = (!labels.is_empty())
        .then(|| BExpr::HasLabels(Box::new(BExpr::Slot(slot)), labels.to_vec()));
    let predicate = match (has_labels, equalities(BExpr::Slot(slot), props)) {
        (Some(l), Some(p)) => chain_and(Some(l), p),
        (l, p) => l.or(p),
    };
    match label_test {
        None => predicate,
        Some(test) => chain_and(predicate, test.clone()),
    }
}

/// `entity.k = v AND ...` for each property, or `None` for none.
pub fn equalities(entity: BExpr, props: &Properties) -> Option<BExpr> {
    props.iter().fold(None, |acc, (key, value)| {
        let property = BExpr::Property(Box::new(entity.clone()), key.clone());
        chain_and(
            acc,
            BExpr::Compare(vec![property, value.clone()], vec![ComparisonOp::Eq]),
        )
    })
}

/// `acc AND next` (`next` alone without `acc`).
pub fn chain_and(acc: Option<BExpr>, next: BExpr) -> Option<BExpr> {
    Some(match acc {
        Some(prev) => BExpr::And(Box::new(prev), Box::new(next)),
        None => next,
    })
}

impl LogicalPlan {
    /// `self` under a `Filter` of `predicate`, if any.
    pub fn filtered(self, predicate: Option<BExpr>) -> LogicalPlan {
        match predicate {
            Some(predicate) => LogicalPlan::Filter {
                input: Box::new(self),
                predicate,
            },
            None => self,
        }
    }

    /// `self` under a MATCH's WHERE `predicate`, if any, for predicate pushdown to place.
    pub fn under_where(self, predicate: Option<BExpr>) -> LogicalPlan {
        match predicate {
            Some(predicate) => LogicalPlan::Where {
                input: Box::new(self),
                predicate,
            },
            None => self,
        }
    }
}
