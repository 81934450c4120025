//! `CALL procedure(args) YIELD ...`: a procedure call bound against its signature and
//! planned as a `ProcedureCall` over the rows so far.

use super::build::Columns;
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::LogicalPlan;
use crate::logical::Procedure;
use crate::logical::{BExpr, Ty};
use plexus_cypher::ast::{self, Span};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::sync::Arc;

impl Binder<'_> {
    pub(super) fn plan_procedure(
        &mut self,
        plan: LogicalPlan,
        scope: &mut Scope,
        call: &ast::ProcedureCall,
        span: Span,
        standalone: bool,
    ) -> Result<(LogicalPlan, Option<Columns>)> {
        let mut name = String::new();
        for part in &call.procedure.namespace {
            name.push_str(&part.name);
            name.push('.');
        }
        name.push_str(&call.procedure.name.name);
        let Some(procedure) = self.procedures.get(&name.to_ascii_lowercase()).cloned() else {
            return Err(QueryError::compile(
                ErrorClass::ProcedureError,
                "ProcedureNotFound",
                span,
                format!("there is no procedure named `{name}`"),
            ));
        };
        let args: Vec<BExpr> = match &call.args {
            Some(args) => {
                let most = procedure.inputs.len();
                let least = most - procedure.defaults.len().min(most);
                if !(least..=most).contains(&args.len()) {
                    let takes = if least == most {
                        format!("{most}")
                    } else {
                        format!("{least} to {most}")
                    };
                    return Err(syntax(
                        "InvalidNumberOfArguments",
                        span,
                        format!("{name} takes {takes} argument(s), not {}", args.len()),
                    ));
                }
                let mut bound = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    let e = self.bind_expr(a, scope, ExprCtx::PLAIN)?;
                    let declared = procedure.input_types.get(i).map(|t| t.to_ascii_uppercase());
                    let ty = self.static_type(&e);
                    let accepted = match declared.as_deref().map(|t| t.trim_end_matches('?')) {
                        None | Some("ANY") => true,
                        Some(_) if matches!(ty, Ty::Any | Ty::Null) => true,
                        Some("INTEGER") => ty == Ty::Int,
                        Some("FLOAT") => matches!(ty, Ty::Float | Ty::Int),
                        Some("NUMBER") => matches!(ty, Ty::Float | Ty::Int),
                        Some("STRING") => ty == Ty::String,
                        Some("BOOLEAN") => ty == Ty::Bool,
                        Some(t) if t.starts_with("LIST") => ty == Ty::List,
                        Some("MAP") => ty == Ty::Map,
                        Some("NODE") => ty == Ty::Node,
                        Some("RELATIONSHIP") => ty == Ty::Rel,
                        Some("PATH") => ty == Ty::Path,
                        Some(_) => true,
                    };
                    if !accepted {
                        return Err(syntax(
                            "InvalidArgumentType",
                            a.span,
                            format!(
                                "argument {} of {name} must be {}, not {}",
                                i + 1,
                                declared.unwrap_or_default(),
                                ty.name()
                            ),
                        ));
                    }
                    bound.push(e);
                }
                bound.extend(omitted_defaults(&procedure, args.len()));
                bound
            }
            None => {
                let mut bound = Vec::new();
                for (i, input) in procedure.inputs.iter().enumerate() {
                    if !self.params.contains_key(input) {
                        if let Some(default) = default_of(&procedure, i) {
                            bound.push(BExpr::Const(default.clone()));
                            continue;
                        }
                        return Err(QueryError::compile(
                            ErrorClass::ParameterMissing,
                            "MissingParameter",
                            span,
                            format!("expected a value for parameter ${input}"),
                        ));
                    }
                    bound.push(BExpr::Param(Arc::from(input.as_str())));
                }
                bound
            }
        };
        let mut yields = Vec::new();
        let mut columns = Vec::new();
        match &call.yield_clause {
            Some(y) => {
                let fields: Vec<(String, String, Span)> = match &y.items {
                    ast::YieldItems::Star => procedure
                        .outputs
                        .iter()
                        .map(|o| (o.clone(), o.clone(), y.span))
                        .collect(),
                    ast::YieldItems::Fields(items) => items
                        .iter()
                        .map(|i| {
                            (
                                i.field.name.clone(),
                                i.alias.as_ref().unwrap_or(&i.field).name.clone(),
                                i.field.span,
                            )
                        })
                        .collect(),
                };
                for (field, alias, field_span) in fields {
                    let Some(index) = procedure.outputs.iter().position(|o| *o == field) else {
                        return Err(syntax(
                            "UndefinedVariable",
                            field_span,
                            format!("procedure {name} has no output `{field}`"),
                        ));
                    };
                    if scope.get(&alias).is_some() {
                        return Err(syntax(
                            "VariableAlreadyBound",
                            field_span,
                            format!("variable `{alias}` already declared"),
                        ));
                    }
                    let slot = self.new_slot(Ty::Any, field_span)?;
                    scope.insert(&alias, slot);
                    yields.push((index, slot));
                    columns.push((alias, slot));
                }
            }
            None => {
                if !standalone && !procedure.outputs.is_empty() {
                    return Err(syntax(
                        "UndefinedVariable",
                        span,
                        "a procedure call inside a query must YIELD its outputs",
                    ));
                }
                for (index, output) in procedure.outputs.iter().enumerate() {
                    let slot = self.new_slot(Ty::Any, span)?;
                    yields.push((index, slot));
                    columns.push((output.clone(), slot));
                }
            }
        }
        let mut plan = LogicalPlan::ProcedureCall {
            input: Box::new(plan),
            procedure,
            args,
            yields,
        };
        if let Some(predicate) = call
            .yield_clause
            .as_ref()
            .and_then(|y| y.predicate.as_ref())
        {
            let predicate = self.bind_expr(predicate, scope, ExprCtx::PLAIN)?;
            plan = plan.filtered(Some(predicate));
        }
        Ok((plan, Some(columns)))
    }
}

/// The default value of input `i`, if the procedure has one.
fn default_of(procedure: &Procedure, i: usize) -> Option<&Value> {
    let first = procedure.inputs.len() - procedure.defaults.len().min(procedure.inputs.len());
    i.checked_sub(first).and_then(|d| procedure.defaults.get(d))
}

/// The defaults of the inputs after the first `given` (a call that gave `given` arguments).
fn omitted_defaults(procedure: &Procedure, given: usize) -> impl Iterator<Item = BExpr> + '_ {
    (given..procedure.inputs.len()).map(|i| {
        BExpr::Const(
            default_of(procedure, i)
                .expect("checked: inputs left out have defaults")
                .clone(),
        )
    })
}
