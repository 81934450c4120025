//! What a `Parallel` operator computes, as the executor must know it: the serial stages of
//! its chain, the partial work its workers do above them and how each aggregate call's
//! partial states combine. Which chains get a `Parallel` is the optimizer's
//! (`optimizer::parallel`, whose module doc describes the whole scheme).

use super::{AggCall, AggFunction, BExpr, LogicalPlan};
use std::sync::Arc;

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

/// A partial top-k whose first key is a numeric property of the scanned vertex: the workers'
/// scan skips the vertices of every storage chunk whose range of that property (its zone) is
/// strictly behind the sort's shared bar (`optimizer::parallel`, SKIPPED CHUNKS).
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkSkip {
    /// The scanned vertex's slot (for EXPLAIN).
    pub slot: usize,
    /// The scanned vertex's property the first sort key is.
    pub property: Arc<str>,
    /// The first key's direction: DESC skips chunks whose largest value is below the bar,
    /// ASC those whose smallest is above it.
    pub descending: bool,
}

/// The chunk skip of a `Parallel` over `input` (see [`ChunkSkip`]): `Some` when `input` is
/// a top-k `Sort` whose first key is `v.name` of the scan's vertex `v`, written so or as a
/// slot one stage of the chain projects from it (and none rebinds `v`'s slot).
pub fn chunk_skip(input: &LogicalPlan) -> Option<ChunkSkip> {
    let LogicalPlan::Sort {
        input,
        keys,
        top: Some(_),
    } = input
    else {
        return None;
    };
    let first = keys.first()?;
    let (stages, scan) = chain(input);
    let LogicalPlan::NodeScan { slot: scanned, .. } = scan else {
        return None;
    };
    // The expressions the chain's projections give `slot`.
    let projected = |slot: usize| -> Vec<&BExpr> {
        (stages.iter())
            .filter_map(|stage| match stage {
                LogicalPlan::Project { items, .. } => Some(items),
                _ => None,
            })
            .flatten()
            .filter(|(s, _)| *s == slot)
            .map(|(_, e)| e)
            .collect()
    };
    if !projected(*scanned).is_empty() {
        return None;
    }
    let key = match &first.expr {
        BExpr::Slot(slot) => match projected(*slot)[..] {
            [definition] => definition,
            _ => return None,
        },
        key => key,
    };
    match key {
        BExpr::Property(entity, name) if matches!(**entity, BExpr::Slot(s) if s == *scanned) => {
            Some(ChunkSkip {
                slot: *scanned,
                property: name.clone(),
                descending: first.descending,
            })
        }
        _ => None,
    }
}
