//! Pattern binding: a MATCH pattern's variables declared, its maps, label expressions and
//! WHERE bound, as one `LogicalPlan::Match` over the plan so far.
//!
//! PATTERNS
//! ========
//! Declaring a pattern checks its variables: a node variable bound before must be a node
//! (`VariableTypeConflict` otherwise), a relationship variable may appear once per MATCH
//! (`RelationshipUniquenessViolation`), CREATE and MERGE may not re-declare what is bound,
//! and their relationships need one type and (CREATE) a direction. Binding then gives each
//! element what its operators will read ([`BoundPart`], see `logical::pattern`): its slot,
//! whether an earlier clause bound it, its plain labels, its label expression as a filter
//! (`bind::labels`), its property map, a relationship's types, direction, bounds and
//! dynamic type, and a quantified group's hop condition and lists (`group`). The slots the
//! operators fill besides the variables' are allocated here too: a relationship bound by an
//! earlier clause is expanded into a fresh slot and compared; a variable-length
//! relationship with a property map or a dynamic type reads each hop from one.
//!
//! The binder decides no order: the order of the parts, where each starts, the direction of
//! each expand and whether a disconnected part becomes a hash join are the `join_ordering`
//! pass's (`optimizer::join_order`), which sees the pattern, the WHERE and the statistics.

use super::build::{already_bound, label_names};
use super::group::GroupSlots;
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::{
    BExpr, BoundNode, BoundPart, BoundRel, LabelTest, LogicalPlan, MAX_VAR_LENGTH_DEPTH, MatchForm,
    PatternMatch, Properties, Ty, chain_and,
};
use plexus_cypher::ast::{self, Expr, ExprKind, RelDirection};
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
    /// part of the search (see `optimizer::join_order::shortest`).
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

/// The slots of the variables in `scope`, sorted.
pub(super) fn bound_slots(scope: &Scope) -> Vec<usize> {
    let mut slots: Vec<usize> = scope.vars().iter().map(|(_, s)| *s).collect();
    slots.sort_unstable();
    slots.dedup();
    slots
}

impl Binder<'_> {
    /// A MATCH (or OPTIONAL MATCH) on `plan`; declares its variables in `scope`.
    pub(super) fn plan_match(
        &mut self,
        plan: LogicalPlan,
        scope: &mut Scope,
        m: &ast::Match,
    ) -> Result<LogicalPlan> {
        let form = if m.optional {
            MatchForm::Optional { nulls: Vec::new() }
        } else {
            MatchForm::Match { estimated: true }
        };
        self.plan_pattern(plan, scope, &m.pattern.parts, m.predicate.as_ref(), form)
    }

    /// The `Match` of a pattern on `plan` (see `logical::pattern`); declares its variables in
    /// `scope`. `predicate` is the MATCH's WHERE. For an OPTIONAL MATCH (`form` `Optional`,
    /// its `nulls` filled here) the variables are declared in a copy of `scope` that
    /// replaces it afterwards, and every slot allocated from here on is nulled when nothing
    /// matches.
    pub(crate) fn plan_pattern(
        &mut self,
        plan: LogicalPlan,
        scope: &mut Scope,
        parts: &[ast::PatternPart],
        predicate: Option<&Expr>,
        mut form: MatchForm,
    ) -> Result<LogicalPlan> {
        let bound = bound_slots(scope);
        let first_new = self.slot_types.len();
        let (slots, predicate) = self.bind_pattern(scope, parts, predicate)?;
        let parts = self.bound_parts(parts, &slots, scope)?;
        if let MatchForm::Optional { nulls } = &mut form {
            *nulls = (first_new..self.slot_types.len()).collect();
        }
        let pattern = PatternMatch {
            parts,
            predicate,
            bound,
            form,
        };
        Ok(LogicalPlan::Match {
            input: Box::new(plan),
            pattern: Box::new(pattern),
        })
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

    /// The [`BoundPart`] of each part, in pattern order: their property maps, label
    /// expressions and dynamic types bound part by part, then the slots their
    /// operators fill besides the variables' (see PATTERNS).
    pub(super) fn bound_parts(
        &mut self,
        parts: &[ast::PatternPart],
        slots: &[PartSlots],
        scope: &Scope,
    ) -> Result<Vec<BoundPart>> {
        let mut bound: Vec<BoundPart> = (parts.iter().zip(slots))
            .map(|(part, slots)| self.bound_part(part, slots, scope))
            .collect::<Result<_>>()?;
        for (part, bound) in parts.iter().zip(&mut bound) {
            for (step, rel) in part.element.chain.iter().zip(&mut bound.rels) {
                self.operator_slots(&step.relationship, rel)?;
            }
        }
        Ok(bound)
    }

    /// A part's elements with their property maps bound (once, in pattern order).
    fn bound_part(
        &mut self,
        part: &ast::PatternPart,
        slots: &PartSlots,
        scope: &Scope,
    ) -> Result<BoundPart> {
        let mut node_patterns = vec![&part.element.start];
        node_patterns.extend(part.element.chain.iter().map(|s| &s.node));
        let node = |binder: &mut Self, i: usize| -> Result<BoundNode> {
            let pattern = node_patterns[i];
            let (slot, prebound) = slots.nodes[i];
            let props = binder.bind_properties(pattern.properties.as_ref(), scope)?;
            Ok(BoundNode {
                slot,
                prebound,
                labels: label_names(&pattern.labels),
                label_cover: pattern.label_expr.as_ref().and_then(LabelTest::bind),
                label_test: None,
                props,
            })
        };
        let mut nodes = vec![node(self, 0)?];
        let mut rels = Vec::with_capacity(part.element.chain.len());
        for (i, step) in part.element.chain.iter().enumerate() {
            let rel = &step.relationship;
            let (slot, prebound) = slots.rels[i];
            let props = self.bind_properties(rel.properties.as_ref(), scope)?;
            let dynamic_type = self.bind_dynamic_type(rel, scope)?;
            rels.push(BoundRel {
                slot,
                prebound,
                expand_slot: slot,
                types: label_names(&rel.types),
                direction: match rel.direction {
                    RelDirection::Outgoing => Direction::Out,
                    RelDirection::Incoming => Direction::In,
                    RelDirection::Undirected => Direction::Both,
                },
                length: rel.length,
                props,
                dynamic_type,
                hop_slot: None,
                group_hop: slots.group_hop(i),
            });
            nodes.push(node(self, i + 1)?);
        }
        for (node, pattern) in nodes.iter_mut().zip(&node_patterns) {
            node.label_test = self.bind_node_label_expr(node.slot, pattern, scope)?;
        }
        Ok(BoundPart {
            nodes,
            rels,
            path: slots.path,
            shortest: part.shortest,
            selector: part.selector,
            search_predicate: slots.search_predicate.clone(),
            group_lists: slots.group_lists(),
        })
    }

    /// The slots the operators of relationship `rel` (bound from `pattern`) fill besides
    /// its variable's: a fresh expand slot when an earlier clause bound it, a hop slot for a
    /// variable-length relationship's property map or dynamic type; and the check of a
    /// variable-length relationship's bounds.
    fn operator_slots(
        &mut self,
        pattern: &ast::RelationshipPattern,
        rel: &mut BoundRel,
    ) -> Result<()> {
        if rel.prebound {
            rel.expand_slot = self.new_slot(self.slot_type(rel.slot), pattern.span)?;
        }
        let Some(length) = rel.length else {
            return Ok(());
        };
        let min = length.min.unwrap_or(1);
        if length.max.is_some_and(|m| m > MAX_VAR_LENGTH_DEPTH) || min > MAX_VAR_LENGTH_DEPTH {
            return Err(QueryError::compile(
                ErrorClass::SemanticError,
                "VarLengthTooLong",
                pattern.span,
                format!("variable-length bounds may be at most {MAX_VAR_LENGTH_DEPTH}"),
            ));
        }
        if pattern.properties.is_some() || pattern.dynamic_type.is_some() {
            rel.hop_slot = Some(self.new_slot(Ty::Rel, pattern.span)?);
        }
        Ok(())
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
