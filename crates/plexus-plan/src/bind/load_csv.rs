//! Planning `LOAD CSV`: an UNWIND over a file's records.
//!
//! SHAPE
//! =====
//! ```text
//!   LOAD CSV WITH HEADERS FROM 'people.csv' AS p RETURN p.name, linenumber()
//!
//!   Results p.name=s3, linenumber()=s4
//!   └ Project s3 = s0.name, s4 = s1
//!     └ LoadCsv WITH HEADERS 'people.csv' AS s0 (linenumber s1, file s2)
//!       └ Argument
//! ```
//! `LoadCsv` is a streaming stage like `Unwind`: for each input row it evaluates the source
//! expression, opens the file it names under the connection's import directory and emits the
//! input row once per record, with the record in the clause's variable (a list of strings and
//! nulls, or with headers a map from header name to string or null) — see `exec::load_csv`.
//!
//! LINENUMBER() AND FILE()
//! =======================
//! The operator also fills two hidden slots: the record's line and the file's import-relative
//! name. `linenumber()` and `file()` bind to those slots of the latest `LOAD CSV` planned
//! before them in the statement (slots are never overwritten, so they survive `WITH`
//! projections of the same rows); before any `LOAD CSV` they are the constant `null`. Rows
//! that do not come from a `LOAD CSV` — after an aggregation, from another UNION branch, the
//! outer rows of a `CALL {}` whose body loads — hold null in those slots, so the functions are
//! null there too, as in Neo4j.
//!
//! CHECKED HERE
//! ============
//! - the variable must be new in its scope (`VariableAlreadyBound`);
//! - `FIELDTERMINATOR` must be one ASCII character other than a quote or a line break
//!   (`SyntaxError` / `InvalidFieldTerminator`: Neo4j checks it before running too);
//! - a source expression whose type is known and is not a string is refused
//!   (`SyntaxError` / `InvalidArgumentType`); one known only at run time is checked per row
//!   (`TypeError`).

use super::build::already_bound;
use super::{Binder, ExprCtx, Scope, syntax};
use crate::logical::{BExpr, LoadCsvSpec, LogicalPlan, Ty};
use plexus_cypher::ast::{self, Span};
use plexus_ingest::CsvOptions;
use plexus_value::error::Result;
use plexus_value::value::Value;

/// The hidden slots `linenumber()` and `file()` read (see module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadCsvSlots {
    pub(crate) line: usize,
    pub(crate) file: usize,
}

impl Binder<'_> {
    /// `LOAD CSV ... AS v` over `plan`, declaring `v` in `scope`.
    pub(super) fn plan_load_csv(
        &mut self,
        plan: LogicalPlan,
        scope: &mut Scope,
        load: &ast::LoadCsv,
    ) -> Result<LogicalPlan> {
        let source = self.bind_expr(&load.source, scope, ExprCtx::PLAIN)?;
        let ty = self.static_type(&source);
        if !matches!(ty, Ty::String | Ty::Any | Ty::Null) {
            return Err(syntax(
                "InvalidArgumentType",
                load.source.span,
                format!(
                    "type mismatch: LOAD CSV reads from a file name (a string), not {}",
                    ty.name()
                ),
            ));
        }
        let options = match &load.field_terminator {
            None => CsvOptions::default(),
            Some(terminator) => CsvOptions::with_field_terminator(&terminator.value)
                .map_err(|e| syntax("InvalidFieldTerminator", terminator.span, e.message))?,
        };
        if scope.get(&load.variable.name).is_some() {
            return Err(already_bound(&load.variable));
        }
        let row_ty = if load.with_headers { Ty::Map } else { Ty::List };
        let slot = self.new_slot(row_ty, load.variable.span)?;
        scope.insert(&load.variable.name, slot);
        let slots = LoadCsvSlots {
            line: self.new_slot(Ty::Int, load.variable.span)?,
            file: self.new_slot(Ty::String, load.variable.span)?,
        };
        self.load_csv = Some(slots);
        Ok(LogicalPlan::LoadCsv {
            input: Box::new(plan),
            source,
            spec: LoadCsvSpec {
                slot,
                with_headers: load.with_headers,
                options,
                line_slot: slots.line,
                file_slot: slots.file,
            },
        })
    }

    /// `linenumber()` or `file()` (`lower`, without arguments): the hidden slot of the latest
    /// `LOAD CSV`, or `null` before any; `None` for any other function.
    pub(crate) fn bind_load_csv_function(
        &self,
        lower: &str,
        args: &[ast::Expr],
        span: Span,
        scope: &Scope,
    ) -> Option<Result<BExpr>> {
        let pick: fn(LoadCsvSlots) -> usize = match lower {
            "linenumber" => |slots| slots.line,
            "file" => |slots| slots.file,
            _ => return None,
        };
        if !args.is_empty() {
            return Some(Err(syntax(
                "InvalidNumberOfArguments",
                span,
                format!("{lower}() takes no arguments"),
            )));
        }
        Some(Ok(match self.load_csv {
            Some(slots) => {
                let slot = pick(slots);
                scope.note_read(slot);
                BExpr::Slot(slot)
            }
            None => BExpr::Const(Value::Null),
        }))
    }
}
