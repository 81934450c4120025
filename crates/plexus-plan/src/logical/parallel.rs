//! What a `Parallel` operator computes, as the executor must know it: the serial stages of
//! its chain, the partial work its workers do above them and how each aggregate call's
//! partial states combine. Which chains get a `Parallel` is the optimizer's
//! (`optimizer::parallel`, whose module doc describes the whole scheme).

use super::{AggCall, AggFunction, LogicalPlan};

/// How the partial states of one aggregate call are combined (see PARTIAL AGGREGATION).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartialForm {
    /// The morsel's accumulator folds into the caller's (`Accumulator::merge`).
    Merged,
    /// The morsel's argument values are fed to the caller's accumulator in serial order.
    Replayed,
}

/// How `call` aggregates partially, or `None` when it must see every row on one thread.
pub fn partial_form(call: &AggCall) -> Option<PartialForm> {
    if call.arg.is_none() {
        // `count(*)`: a row count, whatever else the call says.
        return Some(PartialForm::Merged);
    }
    match call.function {
        AggFunction::PercentileCont | AggFunction::PercentileDisc => None,
        AggFunction::Count | AggFunction::Min | AggFunction::Max | AggFunction::Collect
            if !call.distinct =>
        {
            Some(PartialForm::Merged)
        }
        AggFunction::Count
        | AggFunction::Min
        | AggFunction::Max
        | AggFunction::Collect
        | AggFunction::Sum
        | AggFunction::Avg
        | AggFunction::StDev
        | AggFunction::StDevP => Some(PartialForm::Replayed),
    }
}

/// The name EXPLAIN gives the work done in the workers of a `Parallel` over `input` (see
/// `optimizer::parallel`), if they do more than the stages.
pub fn partial_name(input: &LogicalPlan) -> Option<&'static str> {
    match input {
        LogicalPlan::Aggregate { .. } => Some("partial-aggregate"),
        LogicalPlan::Sort { .. } => Some("partial-sort"),
        LogicalPlan::Distinct { .. } => Some("partial-distinct"),
        _ => None,
    }
}

/// The stages of a wrapped chain, top first, and the scan at its bottom (see module docs).
pub fn chain(plan: &LogicalPlan) -> (Vec<&LogicalPlan>, &LogicalPlan) {
    let mut stages = Vec::new();
    let mut node = plan;
    loop {
        match node {
            LogicalPlan::Expand { input, .. }
            | LogicalPlan::VarExpand { input, .. }
            | LogicalPlan::Filter { input, .. }
            | LogicalPlan::Project { input, .. }
            | LogicalPlan::HashJoin { input, .. } => {
                stages.push(node);
                node = input;
            }
            scan => return (stages, scan),
        }
    }
}
