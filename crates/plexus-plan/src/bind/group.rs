//! Quantified groups of one relationship: `(a)((x:A)-[r:R]->(y:B) WHERE …){m,n}(b)`.
//!
//! A group repeats one hop `m..n` times, each hop from an `x` to a `y` that match the group's
//! node patterns and pass its WHERE; consecutive hops share their nodes (`y` of one is `x` of
//! the next), the first `x` is `a` and the last `y` is `b`. That is the variable-length
//! relationship `(a)-[r:R*m..n]->(b)` whose every hop also passes one condition on (source,
//! relationship, target) — a [`HopFilter`] — which the executor checks wherever it takes a
//! relationship: enumeration, the distinct-ends BFS and shortest-path searches alike (the
//! condition depends on the hop alone, so leaving out the hops that fail it is exact).
//!
//! Inside the group `x`, `r` and `y` are one node, relationship and node (the hop's); outside
//! it they are *group variables*, the lists of their values per hop in path order: `r` is the
//! relationship list as for `*m..n`, `x` the path's nodes but the last, `y` its nodes but the
//! first — computed after the expand (so a query reading them keeps enumeration).

use super::Binder;
use super::Scope;
use super::expr::ExprCtx;
use super::pattern::PartSlots;
use crate::logical::{BExpr, HopFilter, PathElement, Ty, chain_and, node_predicate};
use plexus_cypher::ast;
use plexus_value::error::Result;
use plexus_value::value::Value;

/// One quantified group of a pattern part, bound.
pub(super) struct GroupSlots {
    /// The index of its relationship in the part.
    rel_index: usize,
    hop: HopFilter,
    /// The group variables `x` and `y` as lists (if named): (slot outside, slot inside).
    from_list: Option<usize>,
    to_list: Option<usize>,
}

impl PartSlots {
    /// The hop condition of the part's relationship `index`, if it is a group.
    pub(super) fn group_hop(&self, index: usize) -> Option<HopFilter> {
        let group = self.groups.iter().find(|g| g.rel_index == index)?;
        Some(group.hop.clone())
    }

    /// The group variables' lists to project after the part: (slot, expression).
    pub(super) fn group_lists(&self) -> Vec<(usize, BExpr)> {
        let mut items = Vec::new();
        for group in &self.groups {
            let i = group.rel_index;
            let path = BExpr::Path(vec![
                PathElement::Node(self.nodes[i].0),
                PathElement::Rels(self.rels[i].0),
                PathElement::Node(self.nodes[i + 1].0),
            ]);
            let nodes = || BExpr::Call("nodes".into(), vec![path.clone()]);
            let int = |i| Box::new(BExpr::Const(Value::Int(i)));
            if let Some(slot) = group.from_list {
                items.push((slot, BExpr::Slice(Box::new(nodes()), None, Some(int(-1)))));
            }
            if let Some(slot) = group.to_list {
                items.push((slot, BExpr::Slice(Box::new(nodes()), Some(int(1)), None)));
            }
        }
        items
    }
}

impl Binder<'_> {
    /// Binds the groups of `parts` (see the module doc): their hop conditions into `slots`,
    /// their node variables into `scope` as lists.
    pub(super) fn bind_groups(
        &mut self,
        scope: &mut Scope,
        parts: &[ast::PatternPart],
        slots: &mut [PartSlots],
    ) -> Result<()> {
        for (part, slots) in parts.iter().zip(slots.iter_mut()) {
            for (index, step) in part.element.chain.iter().enumerate() {
                let Some(group) = &step.relationship.group else {
                    continue;
                };
                let span = step.relationship.span;
                let from = self.new_slot(Ty::Node, span)?;
                let rel = self.new_slot(Ty::Rel, span)?;
                let to = self.new_slot(Ty::Node, span)?;
                let mut inner = scope.clone();
                let mut local = |var: &Option<ast::Ident>, slot| {
                    if let Some(var) = var {
                        inner.insert(&var.name, slot);
                    }
                };
                local(&group.from.variable, from);
                local(&step.relationship.variable, rel);
                local(&group.to.variable, to);
                let mut predicate: Option<BExpr> = None;
                for (node, slot) in [(&group.from, from), (&group.to, to)] {
                    let props = self.bind_properties(node.properties.as_ref(), &inner)?;
                    let test = self.bind_node_label_expr(slot, node, &inner)?;
                    let labels = super::build::label_names(&node.labels);
                    let condition = node_predicate(slot, &labels, test.as_ref(), &props);
                    if let Some(condition) = condition {
                        predicate = chain_and(predicate, condition);
                    }
                }
                if let Some(p) = &group.predicate {
                    let bound = self.bind_expr(p, &inner, ExprCtx::PLAIN)?;
                    self.check_boolean(&bound, p.span)?;
                    predicate = chain_and(predicate, bound);
                }
                let mut list = |var: &Option<ast::Ident>| -> Result<Option<usize>> {
                    let Some(var) = var else { return Ok(None) };
                    if scope.get(&var.name).is_some() {
                        return Err(super::build::already_bound(var));
                    }
                    let slot = self.new_slot(Ty::List, var.span)?;
                    scope.insert(&var.name, slot);
                    Ok(Some(slot))
                };
                let from_list = list(&group.from.variable)?;
                let to_list = list(&group.to.variable)?;
                slots.groups.push(GroupSlots {
                    rel_index: index,
                    hop: HopFilter {
                        from,
                        rel,
                        to,
                        predicate: predicate.unwrap_or(BExpr::Const(Value::Bool(true))),
                    },
                    from_list,
                    to_list,
                });
            }
        }
        Ok(())
    }
}
