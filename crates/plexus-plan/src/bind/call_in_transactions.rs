//! Planning `CALL { ... } IN TRANSACTIONS`: an `Apply` whose inner runs commit in batches.
//!
//! SHAPE
//! =====
//! ```text
//!   LOAD CSV FROM 'people.csv' AS row
//!   CALL { WITH row CREATE (:Person {name: row[0]}) } IN TRANSACTIONS OF 500 ROWS
//!
//!   Discard
//!   └ CallInTransactions (unit) OF 500 ROWS ON ERROR FAIL
//!     ├ LoadCsv 'people.csv' AS s0 (linenumber s1, file s2)
//!     │ └ Argument
//!     └ Create (s3:Person {name: s0[0]})
//!       └ Argument
//! ```
//! The subquery is bound exactly as a `CALL { ... }` body (same importing `WITH`, same
//! returned variables); only the operator differs (see `exec::call_in_transactions` for what
//! it does at run time). `REPORT STATUS AS v` declares `v` after the returned variables.
//!
//! THE BATCH SIZE
//! ==============
//! `OF n ROWS` must be a positive integer that does not depend on the rows. A literal or a
//! parameter is checked here, so `OF 0 ROWS` is a compile-time error at the expression
//! ("Invalid input. '0' is not a valid value. Must be a positive integer.", Neo4j 5's words);
//! any other expression over no variables (`OF 2 * $n ROWS`) is evaluated once, before the
//! first batch, and checked then. A variable is refused while binding. Without `OF`, batches
//! are [`DEFAULT_BATCH_ROWS`] rows, Neo4j's default.

use super::build::already_bound;
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::{
    BExpr, BatchRows, DEFAULT_BATCH_ROWS, InTransactionsSpec, LogicalPlan, Ty, positive_batch_rows,
};
use plexus_cypher::ast::{self, Span};
use plexus_value::error::Result;
use plexus_value::value::Value;

impl Binder<'_> {
    /// `CALL { ... } IN TRANSACTIONS ...` over `plan`, declaring the returned variables and
    /// the status variable in `scope`.
    pub(super) fn plan_call_in_transactions(
        &mut self,
        plan: LogicalPlan,
        scope: &mut Scope,
        call: &ast::CallInTransactions,
        span: Span,
    ) -> Result<LogicalPlan> {
        let batch = match &call.batch_size {
            None => BatchRows::Known(DEFAULT_BATCH_ROWS),
            Some(expr) => self.batch_rows(expr)?,
        };
        let (inner, inner_columns) =
            self.plan_call_body(&call.query, call.imports.as_ref(), scope)?;
        let unit = inner_columns.is_none();
        let returns: Vec<usize> = inner_columns.iter().flatten().map(|(_, s)| *s).collect();
        for (name, slot) in inner_columns.into_iter().flatten() {
            if scope.get(&name).is_some() {
                return Err(syntax(
                    "VariableAlreadyBound",
                    span,
                    format!("variable `{name}` already declared"),
                ));
            }
            scope.insert(&name, slot);
        }
        let status_slot = match &call.report_status {
            None => None,
            Some(var) => {
                if scope.get(&var.name).is_some() {
                    return Err(already_bound(var));
                }
                let slot = self.new_slot(Ty::Map, var.span)?;
                scope.insert(&var.name, slot);
                Some(slot)
            }
        };
        Ok(LogicalPlan::CallInTransactions {
            input: Box::new(plan),
            inner: Box::new(inner),
            spec: InTransactionsSpec {
                batch,
                on_error: call.on_error,
                returns,
                unit,
                status_slot,
            },
        })
    }

    /// The batch size of `OF expr ROWS` (see THE BATCH SIZE).
    fn batch_rows(&mut self, expr: &ast::Expr) -> Result<BatchRows> {
        let bound = self
            .bind_expr(expr, &Scope::default(), ExprCtx::PLAIN)
            .map_err(|e| match e.code {
                "UndefinedVariable" => syntax(
                    "InvalidArgumentValue",
                    expr.span,
                    "It is not allowed to refer to variables in OF ... ROWS, so that the value \
                     for OF ... ROWS can be statically calculated.",
                ),
                _ => e,
            })?;
        let text = expr.span.text(self.source).unwrap_or("?").to_string();
        let known = match &bound {
            BExpr::Const(value) => Some(value.clone()),
            BExpr::Param(name) => self.params.get(&**name).cloned(),
            BExpr::Negate(inner) => match &**inner {
                BExpr::Const(Value::Int(i)) => Some(Value::Int(i.wrapping_neg())),
                BExpr::Const(Value::Float(f)) => Some(Value::Float(-f)),
                _ => None,
            },
            _ => None,
        };
        match known {
            Some(value) => Ok(BatchRows::Known(
                positive_batch_rows(&value, &text)
                    .map_err(|message| syntax("InvalidArgumentValue", expr.span, message))?,
            )),
            None => Ok(BatchRows::Evaluate { expr: bound, text }),
        }
    }
}
