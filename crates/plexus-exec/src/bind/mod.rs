//! Binder: names → slots, and the semantic checks the parser cannot make.
//!
//! SCOPES
//! ======
//! A [`Scope`] lists the variables visible at a point of the query, in declaration order,
//! each with its slot (see `plan` for the slot layout). MATCH, CREATE, MERGE, UNWIND and
//! procedure YIELDs add to the scope; WITH and RETURN replace it with their projection;
//! list comprehensions, quantifiers, `reduce` and pattern expressions bind local variables in
//! a copy of the scope that is dropped afterwards. `CALL { ... }` subqueries start from an
//! empty scope; their leading `WITH` imports variables from the outer one.
//!
//! TYPES
//! =====
//! Every slot has a static [`Ty`], known when the variable is declared (a pattern node is a
//! `Node`, `WITH 1 AS x` makes `x` an `Int`, a function result is usually `Any`). Types are
//! used only to reject what can never work — `MATCH (r)` after `r` was a relationship
//! (`VariableTypeConflict`), `NOT 'text'` or `properties(1)` (`InvalidArgumentType`) — values
//! of type `Any` are checked when the query runs.
//!
//! ERRORS
//! ======
//! Errors carry the TCK's class and detail code (`SyntaxError` / `UndefinedVariable`, ...)
//! and the span of the offending name or expression.
//!
//! Binding and planning are interleaved: a pattern predicate or pattern comprehension inside
//! an expression is planned as a subquery while its expression is bound, so the binder and
//! the clause planner (`plan::build`) are two halves of one [`Binder`].

mod expr;

pub(crate) use expr::ExprCtx;

use crate::plan::{AggCall, LogicalPlan, ProcedureRegistry};
use plexus_cypher::ast::{self, ComparisonOp, Quantifier, Span};
/// The arithmetic operators are values' own (`plexus_value`): temporal arithmetic needs them too.
pub use plexus_value::ArithOp;
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Query parameters by name.
pub type Params = HashMap<String, Value>;

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
    pub fn bind(expr: &ast::LabelExpr) -> Self {
        let bind = |e: &ast::LabelExpr| Box::new(Self::bind(e));
        match expr {
            ast::LabelExpr::Label(name) => Self::Label(Arc::from(name.name.as_str())),
            ast::LabelExpr::Any => Self::Any,
            ast::LabelExpr::Not(e) => Self::Not(bind(e)),
            ast::LabelExpr::And(a, b) => Self::And(bind(a), bind(b)),
            ast::LabelExpr::Or(a, b) => Self::Or(bind(a), bind(b)),
        }
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
        | BExpr::IsNull(b, _) => f(b),
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

/// Variables in scope, in declaration order.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    vars: Vec<(String, usize)>,
    /// While a subquery expression is bound: every slot looked up through this scope or a
    /// copy of it (see [`Watch`]).
    reads: Option<ReadLog>,
}

/// Slots looked up while binding a subquery expression.
pub(crate) type ReadLog = Arc<Mutex<Vec<usize>>>;

/// What [`Binder::watch`] hands back to [`Binder::subquery`]: the log of the subquery's
/// look-ups, the first slot it could allocate, and the enclosing subquery's log.
pub(crate) struct Watch {
    first_slot: usize,
    log: ReadLog,
    parent: Option<ReadLog>,
}

impl Watch {
    /// The slots of the outer row the subquery read (sorted, each once); they count as reads
    /// of the enclosing subquery too.
    pub(crate) fn outer_slots(self) -> Vec<usize> {
        let mut slots: Vec<usize> = lock(&self.log)
            .iter()
            .copied()
            .filter(|s| *s < self.first_slot)
            .collect();
        slots.sort_unstable();
        slots.dedup();
        if let Some(parent) = &self.parent {
            lock(parent).extend(&slots);
        }
        slots
    }
}

fn lock(log: &ReadLog) -> std::sync::MutexGuard<'_, Vec<usize>> {
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Scope {
    pub fn get(&self, name: &str) -> Option<usize> {
        let slot = self
            .vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s);
        if let (Some(slot), Some(log)) = (slot, &self.reads) {
            lock(log).push(slot);
        }
        slot
    }

    /// A copy that logs its look-ups (and its copies') for a subquery about to be bound
    /// from slot `first_slot` on.
    pub(crate) fn watched(&self, first_slot: usize) -> (Scope, Watch) {
        let log = ReadLog::default();
        let watch = Watch {
            first_slot,
            log: log.clone(),
            parent: self.reads.clone(),
        };
        let scope = Scope {
            vars: self.vars.clone(),
            reads: Some(log),
        };
        (scope, watch)
    }

    /// Records a read of `slot` that is not a variable's look-up (a hidden slot such as
    /// `linenumber()`'s), so that a subquery reading it lists it among its outer slots.
    pub(crate) fn note_read(&self, slot: usize) {
        if let Some(log) = &self.reads {
            lock(log).push(slot);
        }
    }

    pub fn insert(&mut self, name: &str, slot: usize) {
        self.vars.retain(|(n, _)| n != name);
        self.vars.push((name.to_string(), slot));
    }

    pub fn vars(&self) -> &[(String, usize)] {
        &self.vars
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

/// The limit on slots in one statement (variables, anonymous pattern elements, locals).
pub const MAX_SLOTS: usize = 65_536;

/// State shared by binding and planning one statement.
pub struct Binder<'a> {
    pub(crate) source: &'a str,
    pub(crate) params: &'a Params,
    pub(crate) procedures: &'a ProcedureRegistry,
    pub(crate) slot_types: Vec<Ty>,
    pub(crate) next_subquery: usize,
    /// AST expressions to replace by slots while binding (projection items already computed,
    /// grouping keys); see `expr`.
    pub(crate) substitutions: Vec<(plexus_cypher::ast::Expr, usize)>,
    /// An updating clause has been planned (see `LogicalPlan::Limit::drain`).
    pub(crate) updating_seen: bool,
    /// Table sizes for the planner's cost model; `None` plans by the rules alone.
    pub(crate) stats: Option<&'a plexus_txn::Statistics>,
    /// The hidden slots of the latest `LOAD CSV` planned (`linenumber()`, `file()`; see
    /// `plan::load_csv`).
    pub(crate) load_csv: Option<crate::plan::LoadCsvSlots>,
}

impl<'a> Binder<'a> {
    pub fn new(
        source: &'a str,
        params: &'a Params,
        procedures: &'a ProcedureRegistry,
        stats: Option<&'a plexus_txn::Statistics>,
    ) -> Self {
        Binder {
            stats,
            source,
            params,
            procedures,
            slot_types: Vec::new(),
            next_subquery: 0,
            substitutions: Vec::new(),
            updating_seen: false,
            load_csv: None,
        }
    }

    pub(crate) fn new_slot(&mut self, ty: Ty, span: Span) -> Result<usize> {
        if self.slot_types.len() >= MAX_SLOTS {
            return Err(QueryError::compile(
                ErrorClass::SemanticError,
                "TooManyVariables",
                span,
                format!("a statement may use at most {MAX_SLOTS} variables"),
            ));
        }
        self.slot_types.push(ty);
        Ok(self.slot_types.len() - 1)
    }

    pub(crate) fn slot_type(&self, slot: usize) -> Ty {
        self.slot_types.get(slot).copied().unwrap_or(Ty::Any)
    }

    pub(crate) fn text(&self, span: Span) -> String {
        span.text(self.source).unwrap_or("?").to_string()
    }
}

pub(crate) fn syntax(code: &'static str, span: Span, message: impl Into<String>) -> QueryError {
    QueryError::compile(ErrorClass::SyntaxError, code, span, message)
}
