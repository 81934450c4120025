//! A MATCH's WHERE over a `shortestPath` / `allShortestPaths` part is part of the search.
//!
//! WHY
//! ===
//! In Neo4j, `MATCH p = shortestPath((a)-[:T*..5]->(b)) WHERE all(r IN relationships(p) WHERE
//! r.w > 0)` returns the shortest path *among those that satisfy the WHERE*, not the shortest
//! path filtered afterwards (which may fail the predicate while a longer one passes). So the
//! conjuncts of the MATCH's own WHERE that read the path or its relationship list go into the
//! search (`VarLengthSpec`), split by what the search can do with them:
//!
//! - `all(x IN relationships(p) WHERE q)` (or `all(x IN r WHERE q)` over the relationship
//!   list) with `q` reading only `x` and variables bound before the search: a per-relationship
//!   filter (`rel_filter`) — the search walks only relationships where `q` is true, which is
//!   exactly the shortest path all of whose relationships pass;
//! - `all(x IN nodes(p) WHERE q)`, likewise: a per-node filter (`node_filter`), both ends
//!   included;
//! - any other conjunct reading the path or the list, and only variables bound before the
//!   search: the path filter (`path_filter`), checked on each candidate path, shortest first
//!   — Neo4j's "exhaustive search" fallback, bounded here by `var_length_path_limit`.
//!
//! A conjunct that also reads a variable bound after the search (a later part of the same
//! MATCH) cannot be checked during it, and stays a filter above; so do the conjuncts of a
//! later clause's WHERE (`WITH p WHERE …` filters afterwards, as in Neo4j).

use crate::logical::{
    BExpr, LogicalPlan, PathFilter, VarLengthSpec, chain_and, free_slots, split_conjuncts,
};
use plexus_cypher::ast::Quantifier;
use std::collections::HashSet;

/// One shortest-path part of a MATCH, as planned.
pub(super) struct ShortestSearch {
    /// The relationship-list slot (the `VarExpand`'s `rel`).
    pub(super) rels: usize,
    /// The path variable's slot and expression, if the part names one.
    pub(super) path: Option<(usize, BExpr)>,
    /// The slots bound when the search runs: before it, and its two ends.
    pub(super) bound: HashSet<usize>,
    /// The part's own WHERE (a GQL parenthesized path pattern's): its conjuncts on the path
    /// are part of the search whatever the syntax.
    pub(super) own: Option<BExpr>,
    /// Whether the MATCH's WHERE is part of the search too: with `shortestPath(...)`, not with
    /// a GQL selector (`ANY SHORTEST`), whose MATCH WHERE filters afterwards.
    pub(super) takes_where: bool,
}

impl ShortestSearch {
    fn path_slot(&self) -> Option<usize> {
        self.path.as_ref().map(|(slot, _)| *slot)
    }

    /// Whether `slots` read this search's path or relationship list.
    fn reads_path(&self, slots: &[usize]) -> bool {
        slots.contains(&self.rels) || self.path_slot().is_some_and(|p| slots.contains(&p))
    }

    /// Whether every slot in `slots` is available during the search.
    fn available(&self, slots: &[usize]) -> bool {
        slots
            .iter()
            .all(|s| self.bound.contains(s) || *s == self.rels || Some(*s) == self.path_slot())
    }

    /// `conjunct` as a per-element filter, if it is `all(x IN relationships(p) | r | nodes(p)
    /// WHERE q)` with `q` not reading the path: (true for relationships, x, q).
    fn element_filter(&self, conjunct: &BExpr) -> Option<(bool, usize, BExpr)> {
        let BExpr::Quantifier {
            quantifier: Quantifier::All,
            slot,
            list,
            predicate,
        } = conjunct
        else {
            return None;
        };
        let of_path = |e: &BExpr| matches!(e, BExpr::Slot(s) if Some(*s) == self.path_slot());
        let rels = match &**list {
            BExpr::Slot(s) if *s == self.rels => true,
            BExpr::Call(name, args) if args.len() == 1 && of_path(&args[0]) => match &**name {
                "relationships" => true,
                "nodes" => false,
                _ => return None,
            },
            _ => return None,
        };
        let reads: Vec<usize> = free_slots(predicate)
            .into_iter()
            .filter(|s| s != slot)
            .collect();
        (!self.reads_path(&reads) && self.available(&reads))
            .then(|| (rels, *slot, (**predicate).clone()))
    }
}

/// Moves the conjuncts of `predicate` that belong to a shortest-path search into it (see
/// WHY); returns the rest, for the MATCH's `Where`.
pub(super) fn into_searches(
    plan: &mut LogicalPlan,
    searches: &[ShortestSearch],
    predicate: Option<BExpr>,
) -> Option<BExpr> {
    if searches.is_empty() {
        return predicate;
    }
    // (conjunct, the one search it came from — a part's own WHERE — or any)
    let mut conjuncts: Vec<(BExpr, Option<usize>)> = Vec::new();
    let mut split = |e: BExpr, own: Option<usize>| {
        let mut parts = Vec::new();
        split_conjuncts(e, &mut parts);
        conjuncts.extend(parts.into_iter().map(|c| (c, own)));
    };
    for (i, search) in searches.iter().enumerate() {
        if let Some(own) = &search.own {
            split(own.clone(), Some(i));
        }
    }
    if let Some(predicate) = predicate {
        split(predicate, None);
    }
    let mut rest: Option<BExpr> = None;
    let mut path_filters: Vec<Option<BExpr>> = vec![None; searches.len()];
    'conjuncts: for (conjunct, own) in conjuncts {
        let reads = free_slots(&conjunct);
        for (i, search) in searches.iter().enumerate() {
            let offered = match own {
                Some(own) => own == i,
                None => search.takes_where,
            };
            if !offered || !search.reads_path(&reads) || !search.available(&reads) {
                continue;
            }
            let Some(length) = search_spec(plan, search.rels) else {
                continue;
            };
            match search.element_filter(&conjunct) {
                Some((true, slot, q)) => length.rel_filter.push((slot, q)),
                Some((false, slot, q)) => length.node_filter.push((slot, q)),
                None => path_filters[i] = chain_and(path_filters[i].take(), conjunct),
            }
            continue 'conjuncts;
        }
        rest = chain_and(rest, conjunct);
    }
    for (search, predicate) in searches.iter().zip(path_filters) {
        if let (Some(predicate), Some(length)) = (predicate, search_spec(plan, search.rels)) {
            length.path_filter = Some(PathFilter {
                predicate,
                path: search.path.clone(),
            });
        }
    }
    rest
}

/// The shortest-path `VarExpand` binding `rels` in `plan`.
fn search_spec(plan: &mut LogicalPlan, rels: usize) -> Option<&mut VarLengthSpec> {
    let here = matches!(plan, LogicalPlan::VarExpand { spec, length, .. }
        if spec.rel == rels && length.shortest.is_some());
    if here {
        let LogicalPlan::VarExpand { length, .. } = plan else {
            unreachable!("matched above");
        };
        return Some(length);
    }
    plan.children_mut()
        .into_iter()
        .find_map(|child| search_spec(child, rels))
}
