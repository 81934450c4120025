//! Expression binding: AST expressions → [`BExpr`], with static type checks.
//!
//! AGGREGATES
//! ==========
//! Aggregate calls are legal only where [`ExprCtx::aggregates`] says so (WITH/RETURN items and
//! their ORDER BY); anywhere else is `InvalidAggregation`, and an aggregate inside another is
//! `NestedAggregation`. They bind to [`BExpr::Agg`], which the projection planner swaps for
//! the slot its Aggregate operator fills.
//!
//! SUBSTITUTIONS
//! =============
//! Before binding an AST node the binder looks it up (by structural equality, spans ignored)
//! in [`Binder::substitutions`]: `RETURN n.x, count(*) ORDER BY n.x` binds the ORDER BY key to
//! the slot that already holds `n.x`, and `RETURN n.x + count(*)` with grouping key `n.x` reads
//! the key's slot instead of a variable the aggregation has consumed.
//!
//! STATIC TYPE CHECKS
//! ==================
//! An operand or argument whose [`Ty`] is known and can never work is a compile-time
//! `SyntaxError` (`InvalidArgumentType`), as Neo4j's "type mismatch": `NOT 1`, `1 + true`,
//! `1 =~ 'a'`, and a function argument outside its signature in [`crate::catalog`]
//! (`toUpper(1)`, `WITH 'a' AS x RETURN sqrt(x)`; a call's result has its signature's type, so
//! `toUpper(size('a'))` fails too). A literal percentile outside 0..1 is a `SyntaxError`
//! (`NumberOutOfRange`) as well. `Any` and `Null` pass: the executor checks values (a run-time
//! `TypeError` or `ArgumentError`).

use super::{Binder, Scope, Watch, syntax};
use crate::catalog as functions;
use crate::logical::{
    AggCall, AggFunction, ArithOp, BExpr, LogicalPlan, MapProjectionItem, MatchForm, PathElement,
    StringOp, Subquery, SubqueryKind, Ty, calls_rand,
};
use crate::optimizer;
use plexus_cypher::ast::{self, BinaryOp, Expr, ExprKind, Literal, Span, UnaryOp};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::sync::Arc;

/// Where an expression appears.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ExprCtx {
    /// Aggregate functions are allowed (projection items, their ORDER BY).
    pub aggregates: bool,
    /// Inside an aggregate's argument.
    pub in_aggregate: bool,
}

impl ExprCtx {
    pub const PLAIN: ExprCtx = ExprCtx {
        aggregates: false,
        in_aggregate: false,
    };
    pub const PROJECTION: ExprCtx = ExprCtx {
        aggregates: true,
        in_aggregate: false,
    };
}

fn type_error(span: Span, message: impl Into<String>) -> QueryError {
    syntax("InvalidArgumentType", span, message)
}

/// Whether `a + b` can succeed for operands of static types `a` and `b`: numbers add, strings
/// concatenate with strings, numbers and booleans, lists append anything; an operand known
/// only at run time (`Any`, `Null`, temporal values and durations) is not judged here.
fn addable(a: Ty, b: Ty) -> bool {
    let unknown = |t: Ty| matches!(t, Ty::Any | Ty::Null | Ty::Temporal);
    let number = |t: Ty| matches!(t, Ty::Int | Ty::Float);
    unknown(a)
        || unknown(b)
        || a == Ty::List
        || b == Ty::List
        || (number(a) && number(b))
        || (a == Ty::String && (number(b) || matches!(b, Ty::String | Ty::Bool)))
        || (b == Ty::String && (number(a) || a == Ty::Bool))
}

impl Binder<'_> {
    pub(crate) fn bind_expr(&mut self, expr: &Expr, scope: &Scope, ctx: ExprCtx) -> Result<BExpr> {
        if !ctx.in_aggregate
            && let Some((_, slot)) = self.substitutions.iter().find(|(e, _)| e == expr)
        {
            return Ok(BExpr::Slot(*slot));
        }
        let span = expr.span;
        Ok(match &expr.kind {
            ExprKind::Literal(literal) => BExpr::Const(match literal {
                Literal::Null => Value::Null,
                Literal::Boolean(b) => Value::Bool(*b),
                Literal::Integer(i) => Value::Int(*i),
                Literal::Float(f) => Value::Float(*f),
                Literal::String(s) => Value::string(s),
            }),
            ExprKind::Parameter(name) => {
                if !self.params.contains_key(name) {
                    return Err(QueryError::compile(
                        ErrorClass::ParameterMissing,
                        "MissingParameter",
                        span,
                        format!("expected a value for parameter ${name}"),
                    ));
                }
                BExpr::Param(Arc::from(name.as_str()))
            }
            ExprKind::Variable(ident) => BExpr::Slot(self.lookup(scope, ident)?),
            ExprKind::Property { expr: base, key } => {
                let base_bound = self.bind_expr(base, scope, ctx)?;
                let ty = self.static_type(&base_bound);
                if matches!(
                    ty,
                    Ty::Bool | Ty::Int | Ty::Float | Ty::String | Ty::List | Ty::Path
                ) {
                    // The TCK files a path's property access as a syntax error, a value's as a
                    // type error.
                    let class = if ty == Ty::Path {
                        ErrorClass::SyntaxError
                    } else {
                        ErrorClass::TypeError
                    };
                    return Err(QueryError::compile(
                        class,
                        "InvalidArgumentType",
                        span,
                        format!(
                            "type mismatch: expected a map, node or relationship but was {}",
                            ty.name()
                        ),
                    ));
                }
                BExpr::Property(Box::new(base_bound), Arc::from(key.name.as_str()))
            }
            ExprKind::Index { expr: base, index } => BExpr::Index(
                Box::new(self.bind_expr(base, scope, ctx)?),
                Box::new(self.bind_expr(index, scope, ctx)?),
            ),
            ExprKind::Slice {
                expr: base,
                from,
                to,
            } => {
                let base = self.bind_expr(base, scope, ctx)?;
                let from = match from {
                    Some(e) => Some(Box::new(self.bind_expr(e, scope, ctx)?)),
                    None => None,
                };
                let to = match to {
                    Some(e) => Some(Box::new(self.bind_expr(e, scope, ctx)?)),
                    None => None,
                };
                BExpr::Slice(Box::new(base), from, to)
            }
            ExprKind::HasLabels { expr: base, labels } => BExpr::HasLabels(
                Box::new(self.bind_expr(base, scope, ctx)?),
                labels.iter().map(|l| Arc::from(l.name.as_str())).collect(),
            ),
            ExprKind::LabelTest {
                expr: base,
                label_expr,
            } => {
                if label_expr.has_dynamic() {
                    return Err(syntax(
                        "InvalidDynamicLabel",
                        span,
                        "dynamic labels and types are only allowed in MATCH, CREATE, MERGE, SET \
                         and REMOVE clauses (as in Neo4j 5.26)",
                    ));
                }
                let base = self.bind_expr(base, scope, ctx)?;
                self.bind_label_expr(base, label_expr, scope)?
            }
            ExprKind::Unary { op, expr: inner } => {
                let bound = self.bind_expr(inner, scope, ctx)?;
                match op {
                    UnaryOp::Not => {
                        self.check_boolean(&bound, inner.span)?;
                        BExpr::Not(Box::new(bound))
                    }
                    UnaryOp::Negate => BExpr::Negate(Box::new(bound)),
                    UnaryOp::Plus => bound,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.bind_expr(lhs, scope, ctx)?;
                let r = self.bind_expr(rhs, scope, ctx)?;
                let (l, r) = (Box::new(l), Box::new(r));
                match op {
                    BinaryOp::Or | BinaryOp::Xor | BinaryOp::And => {
                        self.check_boolean(&l, lhs.span)?;
                        self.check_boolean(&r, rhs.span)?;
                        match op {
                            BinaryOp::Or => BExpr::Or(l, r),
                            BinaryOp::Xor => BExpr::Xor(l, r),
                            _ => BExpr::And(l, r),
                        }
                    }
                    BinaryOp::RegexMatch => {
                        // Unlike STARTS WITH and the others (null for a non-string), `=~` takes
                        // strings only in Neo4j. An invalid pattern fails when it is used (the
                        // executor), also in Neo4j: `null =~ '('` is null.
                        self.check_argument(&l, functions::STRING, lhs.span, "")?;
                        self.check_argument(&r, functions::STRING, rhs.span, "")?;
                        BExpr::StringOp(StringOp::Regex, l, r)
                    }
                    BinaryOp::StartsWith => BExpr::StringOp(StringOp::StartsWith, l, r),
                    BinaryOp::EndsWith => BExpr::StringOp(StringOp::EndsWith, l, r),
                    BinaryOp::Contains => BExpr::StringOp(StringOp::Contains, l, r),
                    BinaryOp::In => {
                        let ty = self.static_type(&r);
                        if !matches!(ty, Ty::List | Ty::Any | Ty::Null) {
                            return Err(type_error(
                                rhs.span,
                                format!("IN expects a list but got {}", ty.name()),
                            ));
                        }
                        BExpr::In(l, r)
                    }
                    BinaryOp::Subtract
                    | BinaryOp::Multiply
                    | BinaryOp::Divide
                    | BinaryOp::Modulo
                    | BinaryOp::Power
                        if [&l, &r].iter().any(|e| {
                            matches!(
                                self.static_type(e),
                                Ty::String
                                    | Ty::Bool
                                    | Ty::List
                                    | Ty::Map
                                    | Ty::Node
                                    | Ty::Rel
                                    | Ty::Path
                            )
                        }) =>
                    {
                        return Err(type_error(
                            span,
                            format!(
                                "arithmetic is not defined for {} and {}",
                                self.static_type(&l).name(),
                                self.static_type(&r).name()
                            ),
                        ));
                    }
                    BinaryOp::Add if !addable(self.static_type(&l), self.static_type(&r)) => {
                        return Err(type_error(
                            span,
                            format!(
                                "+ is not defined for {} and {}",
                                self.static_type(&l).name(),
                                self.static_type(&r).name()
                            ),
                        ));
                    }
                    BinaryOp::Add => BExpr::Arith(ArithOp::Add, l, r),
                    BinaryOp::Subtract => BExpr::Arith(ArithOp::Subtract, l, r),
                    BinaryOp::Multiply => BExpr::Arith(ArithOp::Multiply, l, r),
                    BinaryOp::Divide => BExpr::Arith(ArithOp::Divide, l, r),
                    BinaryOp::Modulo => BExpr::Arith(ArithOp::Modulo, l, r),
                    BinaryOp::Power => BExpr::Arith(ArithOp::Power, l, r),
                }
            }
            ExprKind::Comparison { first, rest } => {
                let mut operands = vec![self.bind_expr(first, scope, ctx)?];
                let mut ops = Vec::with_capacity(rest.len());
                for (op, e) in rest {
                    ops.push(*op);
                    operands.push(self.bind_expr(e, scope, ctx)?);
                }
                BExpr::Compare(operands, ops)
            }
            ExprKind::IsNull {
                expr: inner,
                negated,
            } => BExpr::IsNull(Box::new(self.bind_expr(inner, scope, ctx)?), *negated),
            ExprKind::IsType {
                expr: inner,
                negated,
                ty,
            } => BExpr::IsType(
                Box::new(self.bind_expr(inner, scope, ctx)?),
                Arc::new(ty.clone()),
                *negated,
            ),
            ExprKind::List(items) => BExpr::List(
                items
                    .iter()
                    .map(|e| self.bind_expr(e, scope, ctx))
                    .collect::<Result<_>>()?,
            ),
            ExprKind::Map(entries) => BExpr::Map(
                entries
                    .iter()
                    .map(|(k, e)| Ok((Arc::from(k.name.as_str()), self.bind_expr(e, scope, ctx)?)))
                    .collect::<Result<_>>()?,
            ),
            ExprKind::MapProjection { variable, items } => {
                let base = BExpr::Slot(self.lookup(scope, variable)?);
                let mut bound = Vec::with_capacity(items.len());
                for item in items {
                    bound.push(match item {
                        ast::MapProjectionItem::Property(key) => {
                            MapProjectionItem::Property(Arc::from(key.name.as_str()))
                        }
                        ast::MapProjectionItem::AllProperties => MapProjectionItem::AllProperties,
                        ast::MapProjectionItem::Literal(key, e) => MapProjectionItem::Entry(
                            Arc::from(key.name.as_str()),
                            self.bind_expr(e, scope, ctx)?,
                        ),
                        ast::MapProjectionItem::Variable(v) => MapProjectionItem::Entry(
                            Arc::from(v.name.as_str()),
                            BExpr::Slot(self.lookup(scope, v)?),
                        ),
                    });
                }
                BExpr::MapProjection(Box::new(base), bound)
            }
            ExprKind::FunctionCall {
                name,
                distinct,
                args,
            } => self.bind_call(name, *distinct, args, span, scope, ctx)?,
            ExprKind::CountStar => {
                self.check_aggregate_allowed(ctx, span)?;
                BExpr::Agg(Box::new(AggCall {
                    function: AggFunction::Count,
                    distinct: false,
                    arg: None,
                    extra: None,
                }))
            }
            ExprKind::Case {
                operand,
                alternatives,
                default,
            } => {
                let operand = match operand {
                    Some(e) => Some(Box::new(self.bind_expr(e, scope, ctx)?)),
                    None => None,
                };
                let mut alts = Vec::with_capacity(alternatives.len());
                for alt in alternatives {
                    alts.push((
                        self.bind_expr(&alt.when, scope, ctx)?,
                        self.bind_expr(&alt.then, scope, ctx)?,
                    ));
                }
                let default = match default {
                    Some(e) => Some(Box::new(self.bind_expr(e, scope, ctx)?)),
                    None => None,
                };
                BExpr::Case {
                    operand,
                    alternatives: alts,
                    default,
                }
            }
            ExprKind::ListComprehension {
                variable,
                list,
                predicate,
                projection,
            } => {
                let list = self.bind_expr(list, scope, ctx)?;
                self.check_list(&list, span)?;
                let mut inner = scope.clone();
                let slot = self.new_slot(Ty::Any, variable.span)?;
                inner.insert(&variable.name, slot);
                let local = ExprCtx {
                    aggregates: false,
                    ..ctx
                };
                let predicate = match predicate {
                    Some(e) => Some(Box::new(self.bind_expr(e, &inner, local)?)),
                    None => None,
                };
                let projection = match projection {
                    Some(e) => Some(Box::new(self.bind_expr(e, &inner, local)?)),
                    None => None,
                };
                BExpr::ListComprehension {
                    slot,
                    list: Box::new(list),
                    predicate,
                    projection,
                }
            }
            ExprKind::Quantifier {
                quantifier,
                variable,
                list,
                predicate,
            } => {
                let list = self.bind_expr(list, scope, ctx)?;
                self.check_list(&list, span)?;
                let mut inner = scope.clone();
                let element = self.element_type(&list);
                let slot = self.new_slot(element, variable.span)?;
                inner.insert(&variable.name, slot);
                let predicate = match predicate {
                    Some(e) => self.bind_expr(e, &inner, ctx)?,
                    None => BExpr::Slot(slot),
                };
                BExpr::Quantifier {
                    quantifier: *quantifier,
                    slot,
                    list: Box::new(list),
                    predicate: Box::new(predicate),
                }
            }
            ExprKind::Reduce {
                accumulator,
                init,
                variable,
                list,
                expr: body,
            } => {
                let init = self.bind_expr(init, scope, ctx)?;
                let list = self.bind_expr(list, scope, ctx)?;
                self.check_list(&list, span)?;
                let mut inner = scope.clone();
                let acc = self.new_slot(Ty::Any, accumulator.span)?;
                let slot = self.new_slot(Ty::Any, variable.span)?;
                inner.insert(&accumulator.name, acc);
                inner.insert(&variable.name, slot);
                let body = self.bind_expr(body, &inner, ctx)?;
                BExpr::Reduce {
                    accumulator: acc,
                    init: Box::new(init),
                    slot,
                    list: Box::new(list),
                    expr: Box::new(body),
                }
            }
            ExprKind::PatternComprehension {
                variable,
                pattern,
                predicate,
                projection,
            } => {
                let (mut inner, watch) = scope.watched(self.slot_types.len());
                let part = ast::PatternPart {
                    variable: variable.clone(),
                    shortest: None,
                    selector: false,
                    predicate: None,
                    element: (**pattern).clone(),
                    span,
                };
                let parts = std::slice::from_ref(&part);
                let mut plan = self.plan_matches(&mut inner, parts, predicate.as_deref())?;
                let value = self.bind_expr(projection, &inner, ExprCtx::PLAIN)?;
                let slot = self.new_slot(Ty::Any, projection.span)?;
                plan = LogicalPlan::Project {
                    input: Box::new(plan),
                    items: vec![(slot, value)],
                };
                self.subquery(SubqueryKind::Collect(slot), plan, watch)
            }
            ExprKind::PatternPredicate(element) => {
                let (mut inner, watch) = scope.watched(self.slot_types.len());
                self.check_no_new_variables(element, scope)?;
                let part = ast::PatternPart {
                    variable: None,
                    shortest: None,
                    selector: false,
                    predicate: None,
                    element: (**element).clone(),
                    span,
                };
                let plan = self.plan_pattern(
                    LogicalPlan::Argument,
                    &mut inner,
                    std::slice::from_ref(&part),
                    None,
                    MatchForm::Match { estimated: false },
                )?;
                self.subquery(SubqueryKind::Exists, plan, watch)
            }
            ExprKind::Exists(body) => self.bind_subquery(SubqueryKind::Exists, body, scope)?,
            ExprKind::CountSubquery(body) => {
                self.bind_subquery(SubqueryKind::Count, body, scope)?
            }
            ExprKind::CollectSubquery(query) => {
                let (scope, watch) = scope.watched(self.slot_types.len());
                let (plan, columns) = self.plan_nested_query(query, &scope)?;
                // The parser lets through only bodies whose branches end in a RETURN of one
                // item; all branches of a UNION have the same column names.
                let slot = match columns.as_deref() {
                    Some([(_, slot)]) => *slot,
                    _ => {
                        return Err(syntax(
                            "InvalidClauseComposition",
                            span,
                            "a COLLECT subquery must end with a single return column",
                        ));
                    }
                };
                self.subquery(SubqueryKind::Collect(slot), plan, watch)
            }
        })
    }

    /// `EXISTS { ... }` or `COUNT { ... }` (`COLLECT { ... }` is bound alike, with a query
    /// for body): the body planned over the outer row (an
    /// `Argument` carrying every variable of `scope`), so the outer variables it names are
    /// bound already; `kind` says what the value is (see `eval`).
    fn bind_subquery(
        &mut self,
        kind: SubqueryKind,
        body: &ast::SubqueryBody,
        scope: &Scope,
    ) -> Result<BExpr> {
        let (scope, watch) = scope.watched(self.slot_types.len());
        let scope = &scope;
        let plan = match body {
            ast::SubqueryBody::Pattern { pattern, predicate } => {
                let mut inner = scope.clone();
                self.plan_matches(&mut inner, &pattern.parts, predicate.as_ref())?
            }
            ast::SubqueryBody::Query(query) => self.plan_nested_query(query, scope)?.0,
        };
        Ok(self.subquery(kind, plan, watch))
    }

    /// The matches of `parts` over the outer row (an `Argument`), filtered by `predicate`
    /// (a MATCH's WHERE: the cost model sees it, pushdown places it): the plan of a pattern
    /// subquery or comprehension; `inner` gains the parts' variables.
    fn plan_matches(
        &mut self,
        inner: &mut Scope,
        parts: &[ast::PatternPart],
        predicate: Option<&ast::Expr>,
    ) -> Result<LogicalPlan> {
        let form = MatchForm::Match { estimated: false };
        self.plan_pattern(LogicalPlan::Argument, inner, parts, predicate, form)
    }

    /// The subquery expression of `plan`, bound through the scope `watch` came with.
    fn subquery(&mut self, kind: SubqueryKind, mut plan: LogicalPlan, watch: Watch) -> BExpr {
        optimizer::optimize_subquery(&mut plan, kind, self.stats);
        let id = self.next_subquery;
        self.next_subquery += 1;
        let outer_slots = watch.outer_slots();
        BExpr::Subquery(Box::new(Subquery {
            id,
            kind,
            plan,
            outer_slots,
        }))
    }

    pub(crate) fn lookup(&self, scope: &Scope, ident: &ast::Ident) -> Result<usize> {
        scope.get(&ident.name).ok_or_else(|| {
            syntax(
                "UndefinedVariable",
                ident.span,
                format!("variable `{}` not defined", ident.name),
            )
        })
    }

    /// A pattern used as a predicate may not introduce named variables.
    fn check_no_new_variables(&self, element: &ast::PatternElement, scope: &Scope) -> Result<()> {
        let mut names = vec![&element.start.variable];
        for step in &element.chain {
            names.push(&step.relationship.variable);
            names.push(&step.node.variable);
        }
        for ident in names.into_iter().flatten() {
            self.lookup(scope, ident)?;
        }
        Ok(())
    }

    fn check_aggregate_allowed(&self, ctx: ExprCtx, span: Span) -> Result<()> {
        if ctx.in_aggregate {
            return Err(syntax(
                "NestedAggregation",
                span,
                "an aggregate function cannot be nested in another",
            ));
        }
        if !ctx.aggregates {
            return Err(syntax(
                "InvalidAggregation",
                span,
                "aggregate functions are only allowed in WITH and RETURN",
            ));
        }
        Ok(())
    }

    pub(crate) fn check_boolean(&self, e: &BExpr, span: Span) -> Result<()> {
        let ty = self.static_type(e);
        if matches!(
            ty,
            Ty::Int | Ty::Float | Ty::String | Ty::List | Ty::Map | Ty::Node | Ty::Rel | Ty::Path
        ) {
            return Err(type_error(
                span,
                format!("type mismatch: expected a boolean but was {}", ty.name()),
            ));
        }
        Ok(())
    }

    fn check_list(&self, e: &BExpr, span: Span) -> Result<()> {
        let ty = self.static_type(e);
        if !matches!(ty, Ty::List | Ty::Any | Ty::Null) {
            return Err(type_error(
                span,
                format!("type mismatch: expected a list but was {}", ty.name()),
            ));
        }
        Ok(())
    }

    /// An operand or function argument `e` where the types `accepted` may go (empty: any): a
    /// known static type outside the set is Neo4j's compile-time "type mismatch"; `hint` is
    /// appended to the message.
    fn check_argument(&self, e: &BExpr, accepted: &[Ty], span: Span, hint: &str) -> Result<()> {
        let ty = self.static_type(e);
        if accepted.is_empty() || accepted.contains(&ty) || matches!(ty, Ty::Any | Ty::Null) {
            return Ok(());
        }
        let names: Vec<&str> = accepted.iter().map(|t| t.name()).collect();
        Err(type_error(
            span,
            format!(
                "type mismatch: expected {} but was {}{hint}",
                names.join(" or "),
                ty.name()
            ),
        ))
    }

    fn bind_call(
        &mut self,
        name: &ast::QualifiedName,
        distinct: bool,
        args: &[Expr],
        span: Span,
        scope: &Scope,
        ctx: ExprCtx,
    ) -> Result<BExpr> {
        let mut full = String::new();
        for part in &name.namespace {
            full.push_str(&part.name);
            full.push('.');
        }
        full.push_str(&name.name.name);
        let lower = full.to_ascii_lowercase();
        if let Some(function) = AggFunction::from_name(&lower) {
            self.check_aggregate_allowed(ctx, span)?;
            let expected = match function {
                AggFunction::PercentileCont | AggFunction::PercentileDisc => 2,
                _ => 1,
            };
            if args.len() != expected {
                return Err(syntax(
                    "InvalidNumberOfArguments",
                    span,
                    format!("{full}() takes {expected} argument(s)"),
                ));
            }
            let inner = ExprCtx {
                aggregates: true,
                in_aggregate: true,
            };
            let arg = self.bind_expr(&args[0], scope, inner)?;
            if calls_rand(&arg) {
                return Err(syntax(
                    "NonConstantExpression",
                    args[0].span,
                    "an aggregate's argument cannot be non-deterministic (rand())",
                ));
            }
            let extra = match args.get(1) {
                Some(e) => Some(self.bind_percentile(e, scope, inner)?),
                None => None,
            };
            return Ok(BExpr::Agg(Box::new(AggCall {
                function,
                distinct,
                arg: Some(arg),
                extra,
            })));
        }
        if let Some(bound) = self.bind_load_csv_function(&lower, args, span, scope) {
            return bound;
        }
        if lower == "exists" && args.len() == 1 {
            // Neo4j 5: `exists(pattern)` is the pattern's existence; the property form of
            // openCypher 9 is gone (`n.x IS NOT NULL`), and nothing else is an argument.
            return match &args[0].kind {
                ExprKind::PatternPredicate(_) => self.bind_expr(&args[0], scope, ctx),
                ExprKind::Property { .. } => Err(syntax(
                    "UnsupportedPropertyExistence",
                    span,
                    "exists(variable.property) is no longer supported; use \
                     variable.property IS NOT NULL instead",
                )),
                _ => Err(syntax(
                    "InvalidArgumentType",
                    args[0].span,
                    "the argument of exists(...) must be a pattern, e.g. exists((n)-->())",
                )),
            };
        }
        let Some((min, max)) = functions::arity(&lower) else {
            return Err(syntax(
                "UnknownFunction",
                name.name.span,
                format!("unknown function '{full}'"),
            ));
        };
        if args.len() < min || args.len() > max {
            return Err(syntax(
                "InvalidNumberOfArguments",
                span,
                format!("wrong number of arguments for {full}()"),
            ));
        }
        let bound: Vec<BExpr> = args
            .iter()
            .map(|a| self.bind_expr(a, scope, ctx))
            .collect::<Result<_>>()?;
        if let Some(signature) = functions::signature(&lower) {
            for (position, (arg, e)) in bound.iter().zip(args).enumerate() {
                let hint = if lower == "length"
                    && matches!(self.static_type(arg), Ty::String | Ty::List)
                {
                    " (size() counts a string or a list)"
                } else {
                    ""
                };
                self.check_argument(arg, signature.accepts(position), e.span, hint)?;
            }
        }
        Ok(BExpr::Call(Arc::from(lower.as_str()), bound))
    }

    /// The percentile argument of `percentileCont` / `percentileDisc`: a number, and a literal
    /// one within 0..1 (Neo4j refuses others at compile time; a parameter or a computed value
    /// outside the range is the aggregate's run-time `ArgumentError`, as the TCK expects).
    fn bind_percentile(&mut self, e: &Expr, scope: &Scope, ctx: ExprCtx) -> Result<BExpr> {
        let bound = self.bind_expr(e, scope, ctx)?;
        self.check_argument(&bound, functions::NUMBER, e.span, "")?;
        let p = match &bound {
            BExpr::Const(Value::Int(i)) => *i as f64,
            BExpr::Const(Value::Float(f)) => *f,
            _ => return Ok(bound),
        };
        if !(0.0..=1.0).contains(&p) {
            return Err(syntax(
                "NumberOutOfRange",
                e.span,
                format!(
                    "invalid input '{}': the percentile must be a number in the range 0.0 to 1.0",
                    self.text(e.span)
                ),
            ));
        }
        Ok(bound)
    }

    /// The static type of a bound expression (`Any` when it depends on data).
    pub(crate) fn static_type(&self, e: &BExpr) -> Ty {
        match e {
            BExpr::Const(v) => Ty::of_value(v),
            BExpr::Slot(s) => self.slot_type(*s),
            BExpr::List(_) | BExpr::ListComprehension { .. } => Ty::List,
            BExpr::Map(_) | BExpr::MapProjection(..) => Ty::Map,
            BExpr::Not(_)
            | BExpr::And(..)
            | BExpr::Or(..)
            | BExpr::Xor(..)
            | BExpr::Compare(..)
            | BExpr::IsNull(..)
            | BExpr::IsType(..)
            | BExpr::In(..)
            | BExpr::StringOp(..)
            | BExpr::HasLabels(..)
            | BExpr::LabelTest(..)
            | BExpr::DynamicLabels { .. }
            | BExpr::Quantifier { .. } => Ty::Bool,
            BExpr::Subquery(sub) => match sub.kind {
                SubqueryKind::Exists => Ty::Bool,
                SubqueryKind::Collect(_) => Ty::List,
                SubqueryKind::Count => Ty::Int,
            },
            BExpr::Path(_) => Ty::Path,
            BExpr::Arith(op, l, r) => {
                let (l, r) = (self.static_type(l), self.static_type(r));
                match (op, l, r) {
                    (_, Ty::Int, Ty::Int) if *op != ArithOp::Power => Ty::Int,
                    (_, Ty::Float, Ty::Int | Ty::Float) | (_, Ty::Int, Ty::Float) => Ty::Float,
                    (ArithOp::Add, Ty::String, Ty::String | Ty::Int | Ty::Float) => Ty::String,
                    (ArithOp::Add, Ty::List, _) | (ArithOp::Add, _, Ty::List) => Ty::List,
                    _ => Ty::Any,
                }
            }
            BExpr::Call(name, _) => functions::signature(name).map_or(Ty::Any, |s| s.returns),
            _ => Ty::Any,
        }
    }

    /// The static type of a list's elements when every element has the same known type.
    fn element_type(&self, list: &BExpr) -> Ty {
        let types: Vec<Ty> = match list {
            BExpr::List(items) => items.iter().map(|e| self.static_type(e)).collect(),
            BExpr::Const(Value::List(items)) => items.iter().map(Ty::of_value).collect(),
            _ => return Ty::Any,
        };
        match types.split_first() {
            Some((first, rest))
                if !matches!(first, Ty::Any | Ty::Null) && rest.iter().all(|t| t == first) =>
            {
                *first
            }
            _ => Ty::Any,
        }
    }

    /// The path expression of a named pattern part, from the slots of its elements.
    pub(crate) fn path_expr(elements: Vec<PathElement>) -> BExpr {
        BExpr::Path(elements)
    }
}
