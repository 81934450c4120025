//! Projections: WITH and RETURN — items, aggregation and grouping keys, DISTINCT,
//! ORDER BY, SKIP and LIMIT, and WITH's WHERE.

use super::build::Columns;
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::{AggCall, AggFunction, LogicalPlan, SortKey};
use crate::logical::{BExpr, MapProjectionItem, Ty, visit_children};
use plexus_cypher::ast::{self, Expr, ExprKind, Projection, Span};
use plexus_value::error::Result;
use plexus_value::value::Value;
use std::collections::HashSet;

impl Binder<'_> {
    /// WITH / RETURN. Returns the plan, the new scope and the projected columns.
    pub(super) fn plan_projection(
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
                plan =
                    std::mem::replace(&mut plan, LogicalPlan::Argument).filtered(Some(predicate));
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
        | ExprKind::IsNull { expr, .. }
        | ExprKind::IsType { expr, .. } => ast_has_aggregate(expr),
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
        | ExprKind::IsNull { expr, .. }
        | ExprKind::IsType { expr, .. } => ast_mentions_any(expr, names),
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
        BExpr::DynamicLabels { entity, names, any } => BExpr::DynamicLabels {
            entity: bx(f, entity),
            names: bx(f, names),
            any,
        },
        BExpr::Not(x) => BExpr::Not(bx(f, x)),
        BExpr::Negate(x) => BExpr::Negate(bx(f, x)),
        BExpr::IsNull(x, n) => BExpr::IsNull(bx(f, x), n),
        BExpr::IsType(x, ty, n) => BExpr::IsType(bx(f, x), ty, n),
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
