//! Parsing `CALL { ... } IN TRANSACTIONS` and the rules on where it may appear.
//!
//! GRAMMAR
//! =======
//! ```text
//!   call_in_transactions = CALL '{' query '}' IN TRANSACTIONS { option }
//!   option               = OF expr (ROW | ROWS)
//!                        | ON ERROR (CONTINUE | BREAK | FAIL)
//!                        | REPORT STATUS AS variable
//! ```
//! Each option at most once, in any order (Neo4j 5 accepts them in any order too). The batch
//! size is an expression here; the binder checks that it is a positive integer known before
//! the statement runs (a literal or a parameter) and reports it at the expression.
//!
//! WHERE IT MAY APPEAR (Neo4j 5's rules, with its messages)
//! ========================================================
//! The subquery commits batches of its own while the statement runs, so it must be at the
//! top level of the statement, where nothing uncommitted can be left behind:
//!
//! - not inside a regular `CALL { ... }` ("CALL { ... } IN TRANSACTIONS nested in a regular
//!   CALL is not supported") nor inside another one ("Nested CALL { ... } IN TRANSACTIONS is
//!   not supported"), nor in an `EXISTS` / `COUNT` / `COLLECT` body;
//! - not in a `UNION` ("CALL { ... } IN TRANSACTIONS in a UNION is not supported");
//! - not after a write clause — directly or inside a regular `CALL { ... }` — in the same
//!   query ("CALL { ... } IN TRANSACTIONS after a write clause is not supported"): those writes
//!   would belong to the outer transaction, committed only at the end;
//! - `REPORT STATUS` only with `ON ERROR CONTINUE` or `BREAK` (with `FAIL` a failed batch
//!   fails the statement: there is no status row to report);
//! - a returning subquery, or one with `REPORT STATUS`, cannot end the query (its rows would
//!   go nowhere), as for Neo4j.
//!
//! Whether the statement runs in an implicit (auto-commit) transaction is not the parser's
//! business: the executor refuses it inside an explicit one.

use super::{Parser, QueryContext, Result, composition_error};
use crate::ast::{
    CallInTransactions, Clause, ClauseKind, OnError, Query, SingleQuery, SubqueryImports,
};

impl Parser<'_> {
    /// True after a `CALL { ... }` body at `IN TRANSACTIONS`.
    pub(super) fn at_in_transactions(&self) -> bool {
        self.at_keyword("IN") && self.keyword_at(1, "TRANSACTIONS")
    }

    /// The `IN TRANSACTIONS ...` part after the subquery `query` (the cursor at `IN`).
    pub(super) fn parse_in_transactions(
        &mut self,
        imports: Option<SubqueryImports>,
        query: Query,
    ) -> Result<ClauseKind> {
        self.expect_keyword("IN")?;
        self.expect_keyword("TRANSACTIONS")?;
        if let Some(nested) = find_in_transactions(&query) {
            return Err(composition_error(
                nested.span,
                "Nested CALL { ... } IN TRANSACTIONS is not supported".to_string(),
            ));
        }
        let mut call = CallInTransactions {
            imports,
            query,
            batch_size: None,
            on_error: OnError::Fail,
            report_status: None,
        };
        let (mut seen_of, mut seen_on_error) = (false, false);
        let mut report_span = None;
        loop {
            if self.at_keyword("OF") && !seen_of {
                self.advance();
                call.batch_size = Some(self.parse_expr()?);
                if !self.eat_keyword("ROWS") {
                    self.expect_keyword("ROW")
                        .map_err(|_| self.unexpected("ROWS"))?;
                }
                seen_of = true;
            } else if self.at_keyword("ON") && self.keyword_at(1, "ERROR") && !seen_on_error {
                self.advance();
                self.advance();
                call.on_error = if self.eat_keyword("CONTINUE") {
                    OnError::Continue
                } else if self.eat_keyword("BREAK") {
                    OnError::Break
                } else if self.eat_keyword("FAIL") {
                    OnError::Fail
                } else {
                    return Err(self.unexpected("CONTINUE, BREAK or FAIL"));
                };
                seen_on_error = true;
            } else if self.at_keyword("REPORT") && call.report_status.is_none() {
                let start = self.advance().span;
                self.expect_keyword("STATUS")?;
                self.expect_keyword("AS")?;
                call.report_status = Some(self.parse_variable()?);
                report_span = Some(self.span_from(start));
            } else {
                break;
            }
        }
        if let Some(span) = report_span
            && call.on_error == OnError::Fail
        {
            return Err(composition_error(
                span,
                "REPORT STATUS can only be used when specifying ON ERROR CONTINUE or ON ERROR BREAK"
                    .to_string(),
            ));
        }
        Ok(ClauseKind::CallInTransactions(Box::new(call)))
    }

    /// The rules of WHERE IT MAY APPEAR that concern the clauses of one single query: `clause`
    /// was just parsed in `context`; `wrote` says whether an earlier clause of the same single
    /// query writes.
    pub(super) fn check_in_transactions_clause(
        &self,
        clause: &Clause,
        context: QueryContext,
        wrote: bool,
    ) -> Result<()> {
        match &clause.kind {
            ClauseKind::CallSubquery(inner) => match find_in_transactions(&inner.query) {
                Some(nested) => Err(composition_error(
                    nested.span,
                    "CALL { ... } IN TRANSACTIONS nested in a regular CALL is not supported"
                        .to_string(),
                )),
                None => Ok(()),
            },
            // Inside a regular CALL body the enclosing clause reports it (see above).
            ClauseKind::CallInTransactions(_) if context == QueryContext::CallSubquery => Ok(()),
            ClauseKind::CallInTransactions(_) => {
                if let Some(subquery) = context.expression_subquery() {
                    return Err(composition_error(
                        clause.span,
                        format!("CALL {{ ... }} IN TRANSACTIONS is not supported in {subquery}"),
                    ));
                }
                if wrote {
                    return Err(composition_error(
                        clause.span,
                        "CALL { ... } IN TRANSACTIONS after a write clause is not supported"
                            .to_string(),
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A query ending with `clause` would drop its rows: a returning `IN TRANSACTIONS`
    /// subquery or one that reports its status must be followed by more clauses.
    pub(super) fn check_in_transactions_last(&self, clause: &Clause) -> Result<()> {
        let ClauseKind::CallInTransactions(call) = &clause.kind else {
            return Ok(());
        };
        let returning = matches!(
            call.query.first.clauses.last().map(|c| &c.kind),
            Some(ClauseKind::Return(_))
        );
        if returning || call.report_status.is_some() {
            return Err(composition_error(
                clause.span,
                "Query cannot conclude with CALL (must be a RETURN clause, a FINISH clause, an \
                 update clause, a unit subquery call, or a procedure call with no YIELD)"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// `CALL { ... } IN TRANSACTIONS` in a branch of a UNION.
    pub(super) fn check_in_transactions_union(&self, query: &Query) -> Result<()> {
        if query.unions.is_empty() {
            return Ok(());
        }
        let branches = std::iter::once(&query.first).chain(query.unions.iter().map(|u| &u.query));
        for clause in branches.flat_map(|single| &single.clauses) {
            if matches!(clause.kind, ClauseKind::CallInTransactions(_)) {
                return Err(composition_error(
                    clause.span,
                    "CALL { ... } IN TRANSACTIONS in a UNION is not supported".to_string(),
                ));
            }
        }
        Ok(())
    }
}

/// Whether `clause` writes, counting the writes inside `CALL { ... }` bodies (for the
/// "after a write clause" rule).
pub(super) fn clause_writes(clause: &Clause) -> bool {
    match &clause.kind {
        ClauseKind::CallSubquery(call) => single_queries(&call.query)
            .flat_map(|single| &single.clauses)
            .any(clause_writes),
        ClauseKind::CallInTransactions(_) => false,
        kind => kind.is_updating(),
    }
}

/// The first `CALL { ... } IN TRANSACTIONS` anywhere in `query`'s clauses, regular
/// `CALL { ... }` bodies included.
fn find_in_transactions(query: &Query) -> Option<&Clause> {
    single_queries(query)
        .flat_map(|single| &single.clauses)
        .find_map(|clause| match &clause.kind {
            ClauseKind::CallInTransactions(_) => Some(clause),
            ClauseKind::CallSubquery(inner) => find_in_transactions(&inner.query),
            _ => None,
        })
}

fn single_queries(query: &Query) -> impl Iterator<Item = &SingleQuery> {
    std::iter::once(&query.first).chain(query.unions.iter().map(|u| &u.query))
}
