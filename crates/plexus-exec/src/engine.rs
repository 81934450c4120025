//! The query pipeline end to end: text → AST → plan → operators → [`QueryResult`].
//!
//! ```text
//!   parse (plexus-cypher) → bind + plan (bind/, plan/) → build operators (exec/) → drain
//!        → copy referenced nodes/relationships into the result (result.rs)
//! ```
//!
//! Everything runs inside the caller's transaction; committing is the caller's business
//! (`plexus::Connection` auto-commits or keeps an explicit transaction open).

use crate::bind::Params;
use crate::error::Result;
use crate::exec::{ExecContext, OperatorProfile, build, drain};
use crate::plan::{ProcedureRegistry, plan_statement};
use crate::result::QueryResult;
use plexus_cypher::ast::QueryMode;
use plexus_txn::Transaction;

/// Parses, plans and runs one statement in `tx`.
pub fn execute(
    tx: &mut Transaction,
    query: &str,
    params: &Params,
    procedures: &ProcedureRegistry,
) -> Result<QueryResult> {
    let statement = plexus_cypher::parse(query)?;
    let plan = plan_statement(&statement, query, params, procedures)?;
    if statement.mode == QueryMode::Explain {
        return Ok(QueryResult {
            columns: plan.columns.clone(),
            plan: Some(plan.root.render(&|_| String::new())),
            ..QueryResult::default()
        });
    }
    let profile = statement.mode == QueryMode::Profile;
    let mut ctx = ExecContext::new(tx, params, plan.width);
    if profile {
        ctx.profile = Some(vec![
            OperatorProfile::default();
            count_operators(&plan.root)
        ]);
    }
    let mut root = build(&plan.root, profile);
    let batches = drain(root.as_mut(), &mut ctx)?;
    let mut result = QueryResult {
        columns: plan.columns.clone(),
        ..QueryResult::default()
    };
    for batch in &batches {
        for row in 0..batch.len() {
            result.rows.push(
                plan.column_slots
                    .iter()
                    .map(|slot| batch.get(*slot, row).clone())
                    .collect(),
            );
        }
    }
    result.materialize(&mut ctx);
    result.stats = ctx.stats.clone();
    if let Some(profile) = &ctx.profile {
        result.plan = Some(plan.root.render(&|id| match profile.get(id) {
            Some(p) => format!(
                "  [rows={}, time={:.3}ms]",
                p.rows,
                p.time.as_secs_f64() * 1e3
            ),
            None => String::new(),
        }));
    }
    Ok(result)
}

fn count_operators(plan: &crate::plan::LogicalPlan) -> usize {
    1 + plan
        .children()
        .into_iter()
        .map(count_operators)
        .sum::<usize>()
}
