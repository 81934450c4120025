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
//! Patterns (MATCH, OPTIONAL MATCH, MERGE's matcher) are `pattern`'s, projections
//! (WITH / RETURN) `projection`'s and procedure calls `procedure`'s; this file walks the
//! clauses and plans the writing ones.

use super::pattern::{PartSlots, PatternUse, bound_slots};
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::{BExpr, MatchForm, PathElement, PatternMatch, ProcedureRegistry, Ty};
use crate::logical::{CreateNode, CreatePattern, CreateRel, LogicalPlan, QueryPlan, SetOp};
use plexus_cypher::ast::{self, ClauseKind, ExprKind, RelDirection, SetItemKind};
use plexus_txn::Statistics;
use plexus_value::error::{QueryError, Result};
use plexus_value::value::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// Result columns: (name, slot).
pub(super) type Columns = Vec<(String, usize)>;

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
    let query_updates = |q: &ast::Query| {
        std::iter::once(&q.first)
            .chain(q.unions.iter().map(|u| &u.query))
            .any(|q| q.clauses.iter().any(|c| clause_updates(&c.kind)))
    };
    match kind {
        ClauseKind::CallSubquery(call) => query_updates(&call.query),
        ClauseKind::CallInTransactions(call) => query_updates(&call.query),
        other => other.is_updating(),
    }
}

pub(super) fn label_names(labels: &[ast::Ident]) -> Vec<Arc<str>> {
    labels.iter().map(|l| Arc::from(l.name.as_str())).collect()
}

pub(super) fn already_bound(var: &ast::Ident) -> QueryError {
    syntax(
        "VariableAlreadyBound",
        var.span,
        format!("variable `{}` already declared", var.name),
    )
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
    /// The body of `CALL { ... }` (or `CALL (imports) { ... }`) planned under the rows of
    /// `scope`. The openCypher form starts from no variables and its leading `WITH` imports
    /// from `scope`; a Neo4j 5 scoped subquery starts with the variables it lists (`*`: all
    /// of `scope`), in their outer slots, and a leading `WITH` is an ordinary one.
    pub(super) fn plan_call_body(
        &mut self,
        query: &ast::Query,
        imports: Option<&ast::SubqueryImports>,
        scope: &Scope,
    ) -> Result<(LogicalPlan, Option<Columns>)> {
        match imports {
            None => self.plan_union(query, &Scope::default(), Some(scope)),
            Some(ast::SubqueryImports::All) => self.plan_union(query, scope, None),
            Some(ast::SubqueryImports::Variables(names)) => {
                let mut inner = Scope::default();
                for name in names {
                    if inner.get(&name.name).is_some() {
                        return Err(syntax(
                            "VariableAlreadyBound",
                            name.span,
                            format!("variable `{}` is imported twice", name.name),
                        ));
                    }
                    let slot = self.lookup(scope, name)?;
                    inner.insert(&name.name, slot);
                }
                self.plan_union(query, &inner, None)
            }
        }
    }

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
        let mut columns = None;
        for clause in &query.clauses {
            let import_scope = import.take();
            if clause_updates(&clause.kind) {
                self.updating_seen = true;
            }
            match &clause.kind {
                ClauseKind::Match(m) => {
                    let m = self.resolve_match_labels(m, &scope);
                    plan = self.plan_match(plan, &mut scope, &m)?;
                }
                ClauseKind::Unwind(u) => {
                    let expr = self.bind_expr(&u.expr, &scope, ExprCtx::PLAIN)?;
                    if scope.get(&u.variable.name).is_some() {
                        return Err(already_bound(&u.variable));
                    }
                    let slot = self.new_slot(Ty::Any, u.variable.span)?;
                    scope.insert(&u.variable.name, slot);
                    plan = LogicalPlan::Unwind {
                        input: Box::new(plan),
                        expr,
                        slot,
                    };
                }
                ClauseKind::LoadCsv(load) => {
                    plan = self.plan_load_csv(plan, &mut scope, load)?;
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
                    let m = self.resolve_merge_labels(m);
                    plan = self.plan_merge(plan, &mut scope, &m)?;
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
                            ast::RemoveItemKind::Labels {
                                variable,
                                labels,
                                dynamic,
                            } => SetOp::Labels {
                                entity: BExpr::Slot(self.lookup(&scope, variable)?),
                                labels: self.bind_write_labels(labels, dynamic, &scope)?,
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
                ClauseKind::CallSubquery(call) => {
                    let (inner_plan, inner_columns) =
                        self.plan_call_body(&call.query, call.imports.as_ref(), &scope)?;
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
                let dynamic = match &node.label_expr {
                    None => Vec::new(),
                    Some(label_expr) => match label_expr.settable() {
                        Some((_, dynamic)) => dynamic,
                        None => {
                            return Err(syntax(
                                "InvalidLabelExpression",
                                node.span,
                                format!(
                                    "a created node takes plain labels (`:A:B`, `:A&B` or \
                                     `:$(expr)`), not `:{label_expr}`"
                                ),
                            ));
                        }
                    },
                };
                if !seen.insert(slot) {
                    if !node.labels.is_empty()
                        || node.label_expr.is_some()
                        || node.properties.is_some()
                    {
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
                    labels: self.bind_write_labels(&node.labels, &dynamic, scope)?,
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
                let rel_type = self.bind_rel_type_name(rel, scope)?;
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
        // The matcher re-uses the declared slots: its part is bound in the declared scope.
        let matcher = LogicalPlan::Match {
            input: Box::new(LogicalPlan::Argument),
            pattern: Box::new(PatternMatch {
                parts: self.bound_parts(parts, &slots, scope)?,
                predicate: None,
                bound: bound_slots(&outer),
                form: MatchForm::Match { estimated: false },
            }),
        };
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
                SetItemKind::Labels {
                    variable,
                    labels,
                    dynamic,
                } => SetOp::Labels {
                    entity: BExpr::Slot(self.lookup(scope, variable)?),
                    labels: self.bind_write_labels(labels, dynamic, scope)?,
                    add: true,
                },
            });
        }
        Ok(ops)
    }
}
