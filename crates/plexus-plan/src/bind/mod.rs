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
//! `Node`, `WITH 1 AS x` makes `x` an `Int`, a function result has its signature's type,
//! `Any` for a property, a parameter or an UNWIND variable). Types are used only to reject
//! what can never work — `MATCH (r)` after `r` was a relationship (`VariableTypeConflict`),
//! `NOT 'text'`, `1 + true`, or a function argument outside its signature (`toUpper(1)`,
//! `properties(1)`; the signatures are `crate::catalog`'s): `SyntaxError` /
//! `InvalidArgumentType`, as Neo4j's compile-time "type mismatch" — values of type `Any` are
//! checked when the query runs (a `TypeError`).
//!
//! ERRORS
//! ======
//! Errors carry the TCK's class and detail code (`SyntaxError` / `UndefinedVariable`, ...)
//! and the span of the offending name or expression.
//!
//! Binding and planning are interleaved: a pattern predicate or pattern comprehension inside
//! an expression is planned as a subquery while its expression is bound, so the binder and
//! the clause planner (`bind::build`) are two halves of one [`Binder`].

mod build;
mod call_in_transactions;
mod expr;
mod group;
mod labels;
mod load_csv;
mod pattern;
mod procedure;
mod projection;

pub use build::plan_statement;
pub(crate) use expr::ExprCtx;
pub(crate) use load_csv::LoadCsvSlots;

use crate::logical::{ProcedureRegistry, Ty};
use plexus_cypher::ast::Span;
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Query parameters by name.
pub type Params = HashMap<String, Value>;

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
    /// `bind::load_csv`).
    pub(crate) load_csv: Option<LoadCsvSlots>,
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
