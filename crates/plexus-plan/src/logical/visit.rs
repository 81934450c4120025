//! The one visitor over plans: an operator's direct inputs, shared or mutable.
//!
//! Every rewrite and walk — the optimizer passes, EXPLAIN's numbering, the executor's
//! operator count — goes through [`LogicalPlan::children`] or [`LogicalPlan::children_mut`],
//! so the list of variants with inputs is written once. Order: the input first, then inner
//! plans (an `Apply`'s or `Optional`'s inner plan, a `HashJoin`'s build side, a `MERGE`'s
//! matcher, a `FOREACH`'s body), then `UNION` branches in order — the pre-order numbering
//! EXPLAIN and PROFILE share.

use super::LogicalPlan;

/// Expands to a match on `$plan` listing the variants' inputs as references made by `$r`
/// (`&` or `&mut`) and `UNION` branches by `$iter`: the variant list of both accessors.
macro_rules! inputs {
    ($plan:expr, $iter:ident, $($r:tt)+) => {
        match $plan {
            LogicalPlan::Argument => Vec::new(),
            LogicalPlan::NodeScan { input, .. }
            | LogicalPlan::RelationshipIndexSeek { input, .. }
            | LogicalPlan::Expand { input, .. }
            | LogicalPlan::VarExpand { input, .. }
            | LogicalPlan::Filter { input, .. }
            | LogicalPlan::Where { input, .. }
            | LogicalPlan::Project { input, .. }
            | LogicalPlan::Aggregate { input, .. }
            | LogicalPlan::Distinct { input, .. }
            | LogicalPlan::Sort { input, .. }
            | LogicalPlan::Skip { input, .. }
            | LogicalPlan::Limit { input, .. }
            | LogicalPlan::Unwind { input, .. }
            | LogicalPlan::LoadCsv { input, .. }
            | LogicalPlan::Create { input, .. }
            | LogicalPlan::Set { input, .. }
            | LogicalPlan::Delete { input, .. }
            | LogicalPlan::ProcedureCall { input, .. }
            | LogicalPlan::Discard { input }
            | LogicalPlan::Parallel { input, .. }
            | LogicalPlan::Results { input, .. } => vec![$($r)+ **input],
            LogicalPlan::Optional { input, inner, .. }
            | LogicalPlan::Apply { input, inner, .. }
            | LogicalPlan::CallInTransactions { input, inner, .. } => {
                vec![$($r)+ **input, $($r)+ **inner]
            }
            LogicalPlan::HashJoin { input, build, .. } => vec![$($r)+ **input, $($r)+ **build],
            LogicalPlan::Merge { input, matcher, .. } => vec![$($r)+ **input, $($r)+ **matcher],
            LogicalPlan::Foreach { input, body, .. } => vec![$($r)+ **input, $($r)+ **body],
            LogicalPlan::Union { branches } => branches.$iter().collect(),
        }
    };
}

impl LogicalPlan {
    /// Direct inputs, in pre-order numbering order (input first, then inner plans).
    pub fn children(&self) -> Vec<&LogicalPlan> {
        inputs!(self, iter, &)
    }

    /// [`LogicalPlan::children`], mutable: what a rewrite recurses into.
    pub fn children_mut(&mut self) -> Vec<&mut LogicalPlan> {
        inputs!(self, iter_mut, &mut)
    }
}
