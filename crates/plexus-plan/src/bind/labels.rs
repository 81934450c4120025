//! Binding label expressions and the labels and types a write takes, including Neo4j 5.26's
//! dynamic labels and types.
//!
//! WHAT
//! ====
//! `:$(expr)`, `:$all(expr)` and `:$any(expr)` name labels (on a relationship, types) by an
//! expression evaluated per row: a STRING, or a LIST<STRING> without nulls. In a read
//! (`MATCH (n:$($label))`, `WHERE n:$(x)|B`, `[r:$any($types)]`) the entity must carry all of
//! those labels (`$(…)`, `$all`) or one of them (`$any`); a relationship "carries" its one type,
//! so `$all` of two different types matches nothing. In a write (`CREATE (n:$(x))`, `MERGE`,
//! `SET n:$(x)`, `REMOVE n:$(x)`) every label of the value is written; a created relationship
//! takes exactly one type (`[:$(t)]`, a STRING or a one-element list).
//!
//! HOW
//! ===
//! A label expression without dynamic atoms stays one `BExpr::LabelTest` (as before). One
//! with them becomes boolean operators over `LabelTest` and `BExpr::DynamicLabels` atoms:
//! a label test of a node is never null (and of a null entity always null), so Cypher's
//! three-valued `AND`/`OR`/`NOT` give the label expression's own two-valued answer. Writes
//! carry `WriteLabels` / `RelTypeName`, whose dynamic expressions the executor evaluates per
//! row and checks (`TypeError` for a null, a non-string or an empty name).
//!
//! In a MATCH or MERGE, a `$(…)` whose expression is a literal or a parameter is resolved while
//! planning (`resolve_constant_labels`): `(n:$($label))` is planned as `(n:Person)` — a label
//! scan — `$any` as a label disjunction and `[r:$($type)]` as `[r:KNOWS]`. Any other dynamic
//! label (one computed from the row) is a filter: a node pattern is found by the scan its
//! other labels allow (a full scan without any), a dynamic relationship type expands over
//! every type.

use super::{Binder, Result, Scope, syntax};
use crate::bind::build::label_names;
use crate::bind::expr::ExprCtx;
use crate::logical::{BExpr, DynamicType, LabelTest, RelTypeName, Ty, WriteLabels};
use plexus_cypher::ast;
use plexus_value::value::Value;
use std::borrow::Cow;
use std::sync::Arc;

impl Binder<'_> {
    /// `base:<expr>` as a boolean expression (see the module essay).
    pub(super) fn bind_label_expr(
        &mut self,
        base: BExpr,
        expr: &ast::LabelExpr,
        scope: &Scope,
    ) -> Result<BExpr> {
        if let Some(test) = LabelTest::bind(expr) {
            return Ok(BExpr::LabelTest(Box::new(base), Arc::new(test)));
        }
        let bind = |e: &ast::LabelExpr, binder: &mut Self| {
            binder.bind_label_expr(base.clone(), e, scope).map(Box::new)
        };
        Ok(match expr {
            ast::LabelExpr::Dynamic(d) => BExpr::DynamicLabels {
                entity: Box::new(base),
                names: Box::new(self.bind_label_names(d, scope)?),
                any: d.any,
            },
            ast::LabelExpr::Not(e) => BExpr::Not(bind(e, self)?),
            ast::LabelExpr::And(a, b) => BExpr::And(bind(a, self)?, bind(b, self)?),
            ast::LabelExpr::Or(a, b) => BExpr::Or(bind(a, self)?, bind(b, self)?),
            ast::LabelExpr::Label(name) => {
                BExpr::HasLabels(Box::new(base), label_names(std::slice::from_ref(name)))
            }
            ast::LabelExpr::Any => BExpr::LabelTest(Box::new(base), Arc::new(LabelTest::Any)),
        })
    }

    /// The filter of a node pattern's non-plain label expression on the node in `slot`.
    pub(super) fn bind_node_label_expr(
        &mut self,
        slot: usize,
        node: &ast::NodePattern,
        scope: &Scope,
    ) -> Result<Option<BExpr>> {
        node.label_expr
            .as_ref()
            .map(|e| self.bind_label_expr(BExpr::Slot(slot), e, scope))
            .transpose()
    }

    /// A relationship pattern's dynamic type (`[r:$(expr)]`), bound.
    pub(super) fn bind_dynamic_type(
        &mut self,
        rel: &ast::RelationshipPattern,
        scope: &Scope,
    ) -> Result<Option<DynamicType>> {
        let Some(d) = &rel.dynamic_type else {
            return Ok(None);
        };
        Ok(Some(DynamicType {
            names: self.bind_label_names(d, scope)?,
            any: d.any,
        }))
    }

    /// The labels a created node, `SET` or `REMOVE` writes: `:A:B` and `:$(expr)`s.
    pub(super) fn bind_write_labels(
        &mut self,
        labels: &[ast::Ident],
        dynamic: &[ast::DynamicLabels],
        scope: &Scope,
    ) -> Result<WriteLabels> {
        let mut bound = Vec::with_capacity(dynamic.len());
        for d in dynamic {
            if d.any {
                return Err(syntax(
                    "InvalidLabelExpression",
                    d.span,
                    "`$any(…)` only tests labels; write `$(…)` to set, create or remove them",
                ));
            }
            bound.push(self.bind_label_names(d, scope)?);
        }
        Ok(WriteLabels {
            fixed: label_names(labels),
            dynamic: bound,
        })
    }

    /// The type of a created relationship: the one written, or one `$(expr)`.
    pub(super) fn bind_rel_type_name(
        &mut self,
        rel: &ast::RelationshipPattern,
        scope: &Scope,
    ) -> Result<RelTypeName> {
        match (rel.types.as_slice(), &rel.dynamic_type) {
            ([rel_type], None) => Ok(RelTypeName::Fixed(Arc::from(rel_type.name.as_str()))),
            ([], Some(d)) if !d.any => Ok(RelTypeName::Dynamic(self.bind_label_names(d, scope)?)),
            ([], Some(d)) => Err(syntax(
                "NoSingleRelationshipType",
                d.span,
                "a created relationship takes exactly one type: `$(…)`, not `$any(…)`",
            )),
            _ => Err(syntax(
                "NoSingleRelationshipType",
                rel.span,
                "a created relationship takes exactly one type (`[:T]` or `[:$(expr)]`)",
            )),
        }
    }

    /// The expression of `$(expr)`, refused when its static type can never be a name.
    fn bind_label_names(&mut self, d: &ast::DynamicLabels, scope: &Scope) -> Result<BExpr> {
        let invalid_literal = |e: &ast::Expr| {
            matches!(&e.kind, ast::ExprKind::Literal(ast::Literal::Null))
                || matches!(&e.kind, ast::ExprKind::Literal(ast::Literal::String(s)) if s.is_empty())
        };
        let literal_items = match &d.expr.kind {
            ast::ExprKind::List(items) => items.iter().collect(),
            _ => vec![&*d.expr],
        };
        if let Some(bad) = literal_items.into_iter().find(|e| invalid_literal(e)) {
            return Err(syntax(
                "InvalidTokenName",
                bad.span,
                "null and '' are not valid label or relationship type names",
            ));
        }
        let names = self.bind_expr(&d.expr, scope, ExprCtx::PLAIN)?;
        let ty = self.static_type(&names);
        if !matches!(ty, Ty::Any | Ty::Null | Ty::String | Ty::List) {
            return Err(syntax(
                "InvalidArgumentType",
                d.expr.span,
                format!(
                    "type mismatch: a dynamic label or type is a STRING or a LIST<STRING>, \
                     not {}",
                    ty.name()
                ),
            ));
        }
        Ok(names)
    }

    /// The MATCH with its constant `$(…)` resolved (see `resolve_constant_labels`) and the
    /// label tests of its WHERE on its own nodes moved into their patterns (see
    /// `fold_where_labels`).
    pub(super) fn resolve_match_labels<'m>(
        &self,
        m: &'m ast::Match,
        scope: &Scope,
    ) -> Cow<'m, ast::Match> {
        let mut resolved = match self.resolve_constant_labels(&m.pattern.parts) {
            None => Cow::Borrowed(m),
            Some(parts) => Cow::Owned(ast::Match {
                pattern: ast::Pattern {
                    parts,
                    span: m.pattern.span,
                },
                ..m.clone()
            }),
        };
        if let Some(folded) = fold_where_labels(&resolved, scope) {
            resolved = Cow::Owned(folded);
        }
        resolved
    }

    /// The MERGE with its constant `$(…)` resolved (see `resolve_constant_labels`).
    pub(super) fn resolve_merge_labels<'m>(&self, m: &'m ast::Merge) -> Cow<'m, ast::Merge> {
        let parts = self.resolve_constant_labels(std::slice::from_ref(&m.pattern));
        match parts.and_then(|parts| parts.into_iter().next()) {
            None => Cow::Borrowed(m),
            Some(pattern) => Cow::Owned(ast::Merge {
                pattern,
                ..m.clone()
            }),
        }
    }

    /// `parts` with every `$(…)` whose names are known while planning (a literal or a
    /// parameter holding a STRING or a non-empty LIST<STRING>) replaced by the names written
    /// out; `None` when there is none. A `$all` of two different relationship types (which
    /// matches nothing) and any invalid value stay dynamic, to fail or filter as the query
    /// runs.
    fn resolve_constant_labels(&self, parts: &[ast::PatternPart]) -> Option<Vec<ast::PatternPart>> {
        let node_dynamic =
            |n: &ast::NodePattern| n.label_expr.as_ref().is_some_and(|e| e.has_dynamic());
        let has_dynamic = parts.iter().any(|part| {
            let element = &part.element;
            node_dynamic(&element.start)
                || (element.chain.iter()).any(|step| {
                    node_dynamic(&step.node) || step.relationship.dynamic_type.is_some()
                })
        });
        if !has_dynamic {
            return None;
        }
        let mut parts = parts.to_vec();
        for part in &mut parts {
            let element = &mut part.element;
            self.resolve_node_labels(&mut element.start);
            for step in &mut element.chain {
                self.resolve_node_labels(&mut step.node);
                self.resolve_rel_type(&mut step.relationship);
            }
        }
        Some(parts)
    }

    fn resolve_node_labels(&self, node: &mut ast::NodePattern) {
        let Some(expr) = node.label_expr.take() else {
            return;
        };
        let (labels, rest) = self.resolve_label_expr(expr).split_plain();
        node.labels.extend(labels);
        node.label_expr = rest;
    }

    /// `expr` with each constant `$(…)` atom replaced by the conjunction (`$any`: the
    /// disjunction) of its names.
    fn resolve_label_expr(&self, expr: ast::LabelExpr) -> ast::LabelExpr {
        let resolve = |e: Box<ast::LabelExpr>| Box::new(self.resolve_label_expr(*e));
        match expr {
            ast::LabelExpr::Dynamic(d) => match self.constant_names(&d.expr) {
                Some(names) => {
                    let span = d.span;
                    let label = |name| ast::LabelExpr::Label(ast::Ident { name, span });
                    let join = |a, b| {
                        let (a, b) = (Box::new(a), Box::new(b));
                        if d.any {
                            ast::LabelExpr::Or(a, b)
                        } else {
                            ast::LabelExpr::And(a, b)
                        }
                    };
                    let resolved = names.into_iter().map(label).reduce(join);
                    resolved.unwrap_or(ast::LabelExpr::Dynamic(d))
                }
                None => ast::LabelExpr::Dynamic(d),
            },
            ast::LabelExpr::Not(e) => ast::LabelExpr::Not(resolve(e)),
            ast::LabelExpr::And(a, b) => ast::LabelExpr::And(resolve(a), resolve(b)),
            ast::LabelExpr::Or(a, b) => ast::LabelExpr::Or(resolve(a), resolve(b)),
            other @ (ast::LabelExpr::Label(_) | ast::LabelExpr::Any) => other,
        }
    }

    fn resolve_rel_type(&self, rel: &mut ast::RelationshipPattern) {
        let Some(d) = &rel.dynamic_type else {
            return;
        };
        let Some(mut names) = self.constant_names(&d.expr) else {
            return;
        };
        names.sort();
        names.dedup();
        if !d.any && names.len() > 1 {
            return;
        }
        let span = d.span;
        rel.types = (names.into_iter())
            .map(|name| ast::Ident { name, span })
            .collect();
        rel.dynamic_type = None;
    }

    /// The names a `$(expr)` gives whatever the row, when `expr` is a string literal, a list
    /// of them or a parameter, and they are valid (at least one, none empty).
    fn constant_names(&self, expr: &ast::Expr) -> Option<Vec<String>> {
        fn name(s: &str) -> Option<String> {
            (!s.is_empty()).then(|| s.to_string())
        }
        let names: Vec<String> = match &expr.kind {
            ast::ExprKind::Literal(ast::Literal::String(s)) => vec![name(s)?],
            ast::ExprKind::List(items) => (items.iter())
                .map(|item| match &item.kind {
                    ast::ExprKind::Literal(ast::Literal::String(s)) => name(s),
                    _ => None,
                })
                .collect::<Option<_>>()?,
            ast::ExprKind::Parameter(p) => match self.params.get(p)? {
                Value::String(s) => vec![name(s)?],
                Value::List(items) => (items.iter())
                    .map(|item| match item {
                        Value::String(s) => name(s),
                        _ => None,
                    })
                    .collect::<Option<_>>()?,
                _ => return None,
            },
            _ => return None,
        };
        (!names.is_empty()).then_some(names)
    }
}

/// `MATCH (n) WHERE n:A|B AND …` as `MATCH (n:A|B) WHERE …`: a WHERE conjunct that tests the
/// labels of a node this MATCH introduces (`n:A`, `n:A:B`, `n:A|B&!C`) says what the node's
/// pattern would say, so it moves into the node's first pattern, where the planner can scan
/// the label (or the union of labels) instead of every node. The answer is the same (the
/// WHERE of a MATCH, OPTIONAL included, is part of the pattern); `None` when nothing moves.
fn fold_where_labels(m: &ast::Match, scope: &Scope) -> Option<ast::Match> {
    let predicate = m.predicate.as_ref()?;
    let mut conjuncts = Vec::new();
    flatten_and(predicate, &mut conjuncts);
    let mut m = m.clone();
    let mut kept: Vec<ast::Expr> = Vec::new();
    let mut moved = false;
    for conjunct in conjuncts {
        let test = match &conjunct.kind {
            ast::ExprKind::HasLabels { expr, labels } => variable_of(expr).map(|v| {
                let labels = labels.iter().cloned().map(ast::LabelExpr::Label);
                (
                    v,
                    labels.reduce(|a, b| ast::LabelExpr::And(Box::new(a), Box::new(b))),
                )
            }),
            ast::ExprKind::LabelTest { expr, label_expr } if !label_expr.has_dynamic() => {
                variable_of(expr).map(|v| (v, Some(label_expr.clone())))
            }
            _ => None,
        };
        let target = test.and_then(|(v, label_expr)| {
            let label_expr = label_expr?;
            (scope.get(v).is_none())
                .then(|| first_node_named(&mut m.pattern.parts, v))
                .flatten()
                .map(|node| (node, label_expr))
        });
        match target {
            Some((node, label_expr)) => {
                let mut whole = label_expr;
                for label in node.labels.drain(..).rev() {
                    whole = ast::LabelExpr::And(
                        Box::new(ast::LabelExpr::Label(label)),
                        Box::new(whole),
                    );
                }
                if let Some(rest) = node.label_expr.take() {
                    whole = ast::LabelExpr::And(Box::new(whole), Box::new(rest));
                }
                (node.labels, node.label_expr) = whole.split_plain();
                moved = true;
            }
            None => kept.push(conjunct.clone()),
        }
    }
    if !moved {
        return None;
    }
    m.predicate = kept.into_iter().reduce(|a, b| {
        let span = a.span;
        ast::Expr::new(
            ast::ExprKind::Binary {
                op: ast::BinaryOp::And,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            span,
        )
    });
    Some(m)
}

/// The conjuncts of `a AND b AND …`, in order.
fn flatten_and<'e>(expr: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match &expr.kind {
        ast::ExprKind::Binary {
            op: ast::BinaryOp::And,
            lhs,
            rhs,
        } => {
            flatten_and(lhs, out);
            flatten_and(rhs, out);
        }
        _ => out.push(expr),
    }
}

fn variable_of(expr: &ast::Expr) -> Option<&str> {
    match &expr.kind {
        ast::ExprKind::Variable(v) => Some(v.name.as_str()),
        _ => None,
    }
}

/// The first node pattern of `parts` bound to `name` (not inside a quantified group).
fn first_node_named<'p>(
    parts: &'p mut [ast::PatternPart],
    name: &str,
) -> Option<&'p mut ast::NodePattern> {
    parts
        .iter_mut()
        .flat_map(|part| {
            let element = &mut part.element;
            std::iter::once(&mut element.start).chain(element.chain.iter_mut().map(|s| &mut s.node))
        })
        .find(|node| node.variable.as_ref().is_some_and(|v| v.name == name))
}
