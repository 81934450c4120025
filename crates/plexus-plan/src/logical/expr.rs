//! Bound expressions: what the binder makes of an AST expression — names resolved to slots,
//! functions and operators identified, subqueries planned — and the static types it checks.
//!
//! A [`BExpr`] may hold a [`Subquery`], whose plan is a [`LogicalPlan`]; a logical plan holds
//! `BExpr`s. The two types are one recursive structure, so they live in one module tree
//! (`logical`), below the binder that builds them and the optimizer passes that rewrite them.

use super::{AggCall, LogicalPlan};
use plexus_cypher::ast::{self, ComparisonOp, Quantifier};
pub use plexus_value::ArithOp;
use plexus_value::value::Value;
use std::sync::Arc;

/// Static types; `Any` means "known only at run time".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Any,
    Null,
    Bool,
    Int,
    Float,
    String,
    List,
    Map,
    Node,
    Rel,
    Path,
    Temporal,
}

impl Ty {
    pub fn of_value(value: &Value) -> Ty {
        match value {
            Value::Null => Ty::Null,
            Value::Bool(_) => Ty::Bool,
            Value::Int(_) => Ty::Int,
            Value::Float(_) => Ty::Float,
            Value::String(_) => Ty::String,
            Value::List(_) => Ty::List,
            Value::Map(_) => Ty::Map,
            Value::Node(_) => Ty::Node,
            Value::Rel(_) => Ty::Rel,
            Value::Path(_) => Ty::Path,
            Value::Temporal(_) | Value::Duration(_) => Ty::Temporal,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Ty::Any => "ANY",
            Ty::Null => "NULL",
            Ty::Bool => "BOOLEAN",
            Ty::Int => "INTEGER",
            Ty::Float => "FLOAT",
            Ty::String => "STRING",
            Ty::List => "LIST",
            Ty::Map => "MAP",
            Ty::Node => "NODE",
            Ty::Rel => "RELATIONSHIP",
            Ty::Path => "PATH",
            Ty::Temporal => "TEMPORAL",
        }
    }
}

/// A bound label expression: `ast::LabelExpr` with its names interned.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelTest {
    Label(Arc<str>),
    /// `%`: any label.
    Any,
    Not(Box<LabelTest>),
    And(Box<LabelTest>, Box<LabelTest>),
    Or(Box<LabelTest>, Box<LabelTest>),
}

impl LabelTest {
    /// The test of a label expression; `None` when it has a dynamic atom (`$(…)`), which
    /// the binder turns into a `BExpr::DynamicLabels` within boolean operators instead.
    pub fn bind(expr: &ast::LabelExpr) -> Option<Self> {
        let bind = |e: &ast::LabelExpr| Self::bind(e).map(Box::new);
        Some(match expr {
            ast::LabelExpr::Label(name) => Self::Label(Arc::from(name.name.as_str())),
            ast::LabelExpr::Any => Self::Any,
            ast::LabelExpr::Dynamic(_) => return None,
            ast::LabelExpr::Not(e) => Self::Not(bind(e)?),
            ast::LabelExpr::And(a, b) => Self::And(bind(a)?, bind(b)?),
            ast::LabelExpr::Or(a, b) => Self::Or(bind(a)?, bind(b)?),
        })
    }

    /// Evaluates the expression with `has(label)` for one label and `any()` for `%`,
    /// short-circuiting like the boolean operators do.
    pub fn matches<E>(
        &self,
        has: &mut impl FnMut(&str) -> Result<bool, E>,
        any: &mut impl FnMut() -> Result<bool, E>,
    ) -> Result<bool, E> {
        Ok(match self {
            Self::Label(name) => has(name)?,
            Self::Any => any()?,
            Self::Not(e) => !e.matches(has, any)?,
            Self::And(a, b) => a.matches(has, any)? && b.matches(has, any)?,
            Self::Or(a, b) => a.matches(has, any)? || b.matches(has, any)?,
        })
    }

    /// A *covering* label set: labels such that every node satisfying the expression carries
    /// at least one of them — so the union of their label scans holds every match — or `None`
    /// when the expression has none. `A` is covered by `{A}`; `a|b` by the union of both
    /// sides' covers, if both have one; `a&b` by the lighter of its sides' covers (by the sum
    /// of `rows` over the set, the left on a tie), or the one side that has one; `!a` and `%`
    /// by none (a node with no label may satisfy them, or a label the expression does not
    /// name). Each label once, in the order the expression names them.
    pub fn cover(&self, rows: &impl Fn(&str) -> f64) -> Option<Vec<Arc<str>>> {
        let weight = |set: &[Arc<str>]| set.iter().map(|l| rows(l)).sum::<f64>();
        match self {
            Self::Label(name) => Some(vec![name.clone()]),
            Self::Any | Self::Not(_) => None,
            Self::Or(a, b) => {
                let mut cover = a.cover(rows)?;
                for label in b.cover(rows)? {
                    if !cover.contains(&label) {
                        cover.push(label);
                    }
                }
                Some(cover)
            }
            Self::And(a, b) => match (a.cover(rows), b.cover(rows)) {
                (Some(a), Some(b)) => Some(if weight(&b) < weight(&a) { b } else { a }),
                (a, b) => a.or(b),
            },
        }
    }
}

/// Fully parenthesised, for plan output: `(A|(B&!C))`.
impl std::fmt::Display for LabelTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Label(name) => f.write_str(name),
            Self::Any => f.write_str("%"),
            Self::Not(e) => write!(f, "!{e}"),
            Self::And(a, b) => write!(f, "({a}&{b})"),
            Self::Or(a, b) => write!(f, "({a}|{b})"),
        }
    }
}

/// A bound expression: variables resolved to slots, functions resolved, subqueries planned.
#[derive(Debug, Clone)]
pub enum BExpr {
    Const(Value),
    Param(Arc<str>),
    Slot(usize),
    Property(Box<BExpr>, Arc<str>),
    Index(Box<BExpr>, Box<BExpr>),
    Slice(Box<BExpr>, Option<Box<BExpr>>, Option<Box<BExpr>>),
    HasLabels(Box<BExpr>, Vec<Arc<str>>),
    /// A Neo4j 5 label expression that is not a plain conjunction (`n:A|B`, `n:!A`, `n:%`);
    /// on a relationship it tests the type.
    LabelTest(Box<BExpr>, Arc<LabelTest>),
    /// `n:$(names)` / `n:$any(names)` (Neo4j 5.26): `names` gives a STRING or LIST<STRING>
    /// per row; the node carries all of those labels (with `any`, one of them); on a
    /// relationship, its type is each of them (one of them).
    DynamicLabels {
        entity: Box<BExpr>,
        names: Box<BExpr>,
        any: bool,
    },
    Not(Box<BExpr>),
    Negate(Box<BExpr>),
    And(Box<BExpr>, Box<BExpr>),
    Or(Box<BExpr>, Box<BExpr>),
    Xor(Box<BExpr>, Box<BExpr>),
    Arith(ArithOp, Box<BExpr>, Box<BExpr>),
    StringOp(StringOp, Box<BExpr>, Box<BExpr>),
    In(Box<BExpr>, Box<BExpr>),
    /// `operands[0] ops[0] operands[1] ops[1] operands[2] ...`
    Compare(Vec<BExpr>, Vec<ComparisonOp>),
    IsNull(Box<BExpr>, bool),
    /// `x IS [NOT] :: TYPE` (negated when the flag is set).
    IsType(Box<BExpr>, Arc<ast::CypherType>, bool),
    List(Vec<BExpr>),
    Map(Vec<(Arc<str>, BExpr)>),
    MapProjection(Box<BExpr>, Vec<MapProjectionItem>),
    /// A scalar function; the name is lower case.
    Call(Arc<str>, Vec<BExpr>),
    /// Only inside projections, replaced by a slot when the projection is planned.
    Agg(Box<AggCall>),
    Case {
        operand: Option<Box<BExpr>>,
        alternatives: Vec<(BExpr, BExpr)>,
        default: Option<Box<BExpr>>,
    },
    ListComprehension {
        slot: usize,
        list: Box<BExpr>,
        predicate: Option<Box<BExpr>>,
        projection: Option<Box<BExpr>>,
    },
    Quantifier {
        quantifier: Quantifier,
        slot: usize,
        list: Box<BExpr>,
        predicate: Box<BExpr>,
    },
    Reduce {
        accumulator: usize,
        init: Box<BExpr>,
        slot: usize,
        list: Box<BExpr>,
        expr: Box<BExpr>,
    },
    Subquery(Box<Subquery>),
    /// A path from a pattern's elements, in pattern order.
    Path(Vec<PathElement>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringOp {
    StartsWith,
    EndsWith,
    Contains,
    Regex,
}

#[derive(Debug, Clone)]
pub enum MapProjectionItem {
    Property(Arc<str>),
    AllProperties,
    Entry(Arc<str>, BExpr),
}

#[derive(Debug, Clone, Copy)]
pub enum PathElement {
    Node(usize),
    Rel(usize),
    /// A list of relationships (variable length); the nodes between them are implied.
    Rels(usize),
}

/// A correlated subquery inside an expression, run with the current row as its argument.
#[derive(Debug, Clone)]
pub struct Subquery {
    /// Unique within the statement: the executor caches the built operator tree under it.
    pub id: usize,
    pub kind: SubqueryKind,
    pub plan: LogicalPlan,
    /// The slots of the outer row the plan reads (sorted): what an aggregation must keep
    /// for it (an expression around an aggregate may only use grouping keys).
    pub outer_slots: Vec<usize>,
}

#[derive(Debug, Clone, Copy)]
pub enum SubqueryKind {
    /// true if the plan has a row (`EXISTS { ... }`, a pattern predicate).
    Exists,
    /// The list of `slot` over the plan's rows (pattern comprehension).
    Collect(usize),
    /// The number of rows (`COUNT { ... }`).
    Count,
}

// ----- walking bound expressions --------------------------------------------------------
// Shared by the binder (an aggregate's argument may not call `rand()`) and the planner
// (pushdown, seeks, hash joins, parallel plans). None of them looks into a subquery's plan.

/// Whether `e` calls `rand()` anywhere in it (outside subquery plans): its value may differ
/// between two evaluations on one row (`rand` is Plexus's only such function; `timestamp()`
/// and the temporal constructors read the statement's clock).
pub(crate) fn calls_rand(e: &BExpr) -> bool {
    occurs(
        e,
        |e| matches!(e, BExpr::Call(name, _) if &**name == "rand"),
    )
}

/// Whether a subquery (an inner plan) occurs anywhere in `e`.
pub(crate) fn has_subquery(e: &BExpr) -> bool {
    occurs(e, |e| matches!(e, BExpr::Subquery(_)))
}

/// Whether `e` or an expression inside it (outside subquery plans) is `wanted` (a walk with
/// an explicit stack).
pub(crate) fn occurs(e: &BExpr, wanted: impl Fn(&BExpr) -> bool) -> bool {
    let mut pending = vec![e];
    while let Some(e) = pending.pop() {
        if wanted(e) {
            return true;
        }
        visit_children(e, &mut |child| pending.push(child));
    }
    false
}

/// The slots of the row `e` reads (sorted, each once): its `Slot`s and the elements of the
/// paths it builds, the outer slots of its subqueries, not the variables its comprehensions,
/// quantifiers and `reduce`s bind for themselves.
pub fn free_slots(e: &BExpr) -> Vec<usize> {
    let mut slots = Vec::new();
    collect_free_slots(e, &mut slots);
    slots.sort_unstable();
    slots.dedup();
    slots
}

fn collect_free_slots(e: &BExpr, out: &mut Vec<usize>) {
    let locals: &[usize] = match e {
        BExpr::Slot(s) => return out.push(*s),
        BExpr::Path(elements) => {
            return out.extend(elements.iter().map(|e| match e {
                PathElement::Node(s) | PathElement::Rel(s) | PathElement::Rels(s) => *s,
            }));
        }
        BExpr::Subquery(subquery) => return out.extend(&subquery.outer_slots),
        BExpr::ListComprehension { slot, .. } | BExpr::Quantifier { slot, .. } => {
            std::slice::from_ref(slot)
        }
        BExpr::Reduce {
            accumulator, slot, ..
        } => &[*accumulator, *slot],
        _ => &[],
    };
    let mut inner = Vec::new();
    visit_children(e, &mut |child| collect_free_slots(child, &mut inner));
    out.extend(inner.into_iter().filter(|s| !locals.contains(s)));
}

/// Calls `f` on each direct child expression (not into subquery plans).
pub(crate) fn visit_children<'a>(e: &'a BExpr, f: &mut dyn FnMut(&'a BExpr)) {
    match e {
        BExpr::Const(_)
        | BExpr::Param(_)
        | BExpr::Slot(_)
        | BExpr::Path(_)
        | BExpr::Subquery(_) => {}
        BExpr::Agg(call) => {
            if let Some(a) = &call.arg {
                f(a);
            }
            if let Some(a) = &call.extra {
                f(a);
            }
        }
        BExpr::Property(b, _)
        | BExpr::HasLabels(b, _)
        | BExpr::LabelTest(b, _)
        | BExpr::Not(b)
        | BExpr::Negate(b)
        | BExpr::IsNull(b, _)
        | BExpr::IsType(b, _, _) => f(b),
        BExpr::DynamicLabels { entity, names, .. } => {
            f(entity);
            f(names);
        }
        BExpr::Index(a, b)
        | BExpr::And(a, b)
        | BExpr::Or(a, b)
        | BExpr::Xor(a, b)
        | BExpr::Arith(_, a, b)
        | BExpr::StringOp(_, a, b)
        | BExpr::In(a, b) => {
            f(a);
            f(b);
        }
        BExpr::Slice(a, b, c) => {
            f(a);
            if let Some(b) = b {
                f(b);
            }
            if let Some(c) = c {
                f(c);
            }
        }
        BExpr::Compare(items, _) | BExpr::List(items) | BExpr::Call(_, items) => {
            items.iter().for_each(f)
        }
        BExpr::Map(entries) => entries.iter().for_each(|(_, e)| f(e)),
        BExpr::MapProjection(base, items) => {
            f(base);
            for item in items {
                if let MapProjectionItem::Entry(_, e) = item {
                    f(e);
                }
            }
        }
        BExpr::Case {
            operand,
            alternatives,
            default,
        } => {
            if let Some(o) = operand {
                f(o);
            }
            for (w, t) in alternatives {
                f(w);
                f(t);
            }
            if let Some(d) = default {
                f(d);
            }
        }
        BExpr::ListComprehension {
            list,
            predicate,
            projection,
            ..
        } => {
            f(list);
            if let Some(p) = predicate {
                f(p);
            }
            if let Some(p) = projection {
                f(p);
            }
        }
        BExpr::Quantifier {
            list, predicate, ..
        } => {
            f(list);
            f(predicate);
        }
        BExpr::Reduce {
            init, list, expr, ..
        } => {
            f(init);
            f(list);
            f(expr);
        }
    }
}

pub fn split_conjuncts(predicate: BExpr, out: &mut Vec<BExpr>) {
    match predicate {
        BExpr::And(a, b) => {
            split_conjuncts(*a, out);
            split_conjuncts(*b, out);
        }
        other => out.push(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(name: &str) -> LabelTest {
        LabelTest::Label(Arc::from(name))
    }

    fn or(a: LabelTest, b: LabelTest) -> LabelTest {
        LabelTest::Or(Box::new(a), Box::new(b))
    }

    fn and(a: LabelTest, b: LabelTest) -> LabelTest {
        LabelTest::And(Box::new(a), Box::new(b))
    }

    fn not(a: LabelTest) -> LabelTest {
        LabelTest::Not(Box::new(a))
    }

    fn names(cover: Option<Vec<Arc<str>>>) -> Option<Vec<String>> {
        cover.map(|c| c.iter().map(|l| l.to_string()).collect())
    }

    #[test]
    fn covers_take_unions_of_ors_and_the_lighter_side_of_ands() {
        // A and C are rare, B is common.
        let rows = |l: &str| if l == "B" { 100.0 } else { 1.0 };
        let cover = |e: &LabelTest| names(e.cover(&rows));
        let strings = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(cover(&or(label("A"), label("B"))), strings(&["A", "B"]));
        assert_eq!(cover(&or(label("A"), label("A"))), strings(&["A"]));
        let a_or_b = or(label("A"), label("B"));
        assert_eq!(cover(&and(a_or_b.clone(), label("C"))), strings(&["C"]));
        assert_eq!(cover(&and(label("B"), label("C"))), strings(&["C"]));
        assert_eq!(cover(&and(label("A"), label("C"))), strings(&["A"]));
        assert_eq!(
            cover(&and(a_or_b.clone(), not(label("C")))),
            strings(&["A", "B"])
        );
        // No cover: a negation, `%`, an `|` with a side without one.
        assert_eq!(cover(&not(label("A"))), None);
        assert_eq!(cover(&LabelTest::Any), None);
        assert_eq!(cover(&or(label("A"), LabelTest::Any)), None);
        assert_eq!(cover(&or(label("A"), not(label("B")))), None);
    }
}
