//! The one visitor over plans: an operator's direct inputs, shared or mutable, and the
//! expressions it evaluates.
//!
//! Every rewrite and walk — the optimizer passes, EXPLAIN's numbering, the executor's
//! operator count — goes through [`LogicalPlan::children`] or [`LogicalPlan::children_mut`],
//! so the list of variants with inputs is written once. Order: the input first, then inner
//! plans (an `Apply`'s or `Optional`'s inner plan, a `HashJoin`'s build side, a `MERGE`'s
//! matcher, a `FOREACH`'s body), then `UNION` branches in order — the pre-order numbering
//! EXPLAIN and PROFILE share.

use super::{
    BExpr, BatchRows, CreatePattern, IdPredicate, KeySeek, LogicalPlan, PatternMatch, RelTypeName,
    SeekPredicate, SetOp,
};

/// Expands to a match on `$plan` listing the variants' inputs as references made by `$r`
/// (`&` or `&mut`) and `UNION` branches by `$iter`: the variant list of both accessors.
macro_rules! inputs {
    ($plan:expr, $iter:ident, $($r:tt)+) => {
        match $plan {
            LogicalPlan::Argument => Vec::new(),
            LogicalPlan::NodeScan { input, .. }
            | LogicalPlan::RelationshipIndexSeek { input, .. }
            | LogicalPlan::RelationshipCount { input, .. }
            | LogicalPlan::Expand { input, .. }
            | LogicalPlan::VarExpand { input, .. }
            | LogicalPlan::Filter { input, .. }
            | LogicalPlan::Where { input, .. }
            | LogicalPlan::Match { input, .. }
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

impl LogicalPlan {
    /// The expressions this operator evaluates (not its inputs'): what EXPLAIN searches for
    /// subquery plans to print.
    pub fn expressions(&self) -> Vec<&BExpr> {
        let mut out: Vec<&BExpr> = Vec::new();
        match self {
            LogicalPlan::NodeScan { seek, id_seek, .. } => {
                if let Some(seek) = seek {
                    key_seek_exprs(seek, &mut out);
                }
                if let Some(id_seek) = id_seek {
                    out.push(match &id_seek.predicate {
                        IdPredicate::Equal(e) | IdPredicate::In(e) => e,
                    });
                }
            }
            LogicalPlan::RelationshipIndexSeek { spec, .. } => key_seek_exprs(&spec.seek, &mut out),
            LogicalPlan::VarExpand { length, .. } => {
                out.extend(length.rel_filter.iter().map(|(_, e)| e));
                out.extend(length.node_filter.iter().map(|(_, e)| e));
                out.extend(length.hop_filter.as_ref().map(|h| &h.predicate));
                if let Some(filter) = &length.path_filter {
                    out.push(&filter.predicate);
                    out.extend(filter.path.as_ref().map(|(_, e)| e));
                }
            }
            LogicalPlan::Filter { predicate, .. } | LogicalPlan::Where { predicate, .. } => {
                out.push(predicate)
            }
            LogicalPlan::Match { pattern, .. } => pattern_exprs(pattern, &mut out),
            LogicalPlan::Project { items, .. } => out.extend(items.iter().map(|(_, e)| e)),
            LogicalPlan::Aggregate {
                keys, aggregates, ..
            } => {
                out.extend(keys.iter().map(|(_, e)| e));
                for (_, call) in aggregates {
                    out.extend(call.arg.iter().chain(&call.extra));
                }
            }
            LogicalPlan::Sort { keys, top, .. } => {
                out.extend(keys.iter().map(|k| &k.expr));
                if let Some(top) = top {
                    out.extend(top.skip.iter().chain([&top.limit]));
                }
            }
            LogicalPlan::Skip { count, .. } | LogicalPlan::Limit { count, .. } => out.push(count),
            LogicalPlan::Unwind { expr, .. } => out.push(expr),
            LogicalPlan::LoadCsv { source, .. } => out.push(source),
            LogicalPlan::HashJoin { keys, optional, .. } => {
                for (probe, build) in keys {
                    out.extend([probe, build]);
                }
                out.extend(optional.as_ref().and_then(|o| o.residual.as_ref()));
            }
            LogicalPlan::Create { pattern, .. } => create_exprs(pattern, &mut out),
            LogicalPlan::Merge {
                pattern,
                on_match,
                on_create,
                ..
            } => {
                create_exprs(pattern, &mut out);
                set_exprs(on_match.iter().chain(on_create), &mut out);
            }
            LogicalPlan::Set { ops, .. } => set_exprs(ops.iter(), &mut out),
            LogicalPlan::Delete { exprs, .. } => out.extend(exprs),
            LogicalPlan::Foreach { list, .. } => out.push(list),
            LogicalPlan::ProcedureCall { args, .. } => out.extend(args),
            LogicalPlan::CallInTransactions { spec, .. } => {
                if let BatchRows::Evaluate { expr, .. } = &spec.batch {
                    out.push(expr);
                }
            }
            LogicalPlan::Argument
            | LogicalPlan::RelationshipCount { .. }
            | LogicalPlan::Expand { .. }
            | LogicalPlan::Distinct { .. }
            | LogicalPlan::Optional { .. }
            | LogicalPlan::Apply { .. }
            | LogicalPlan::Union { .. }
            | LogicalPlan::Discard { .. }
            | LogicalPlan::Parallel { .. }
            | LogicalPlan::Results { .. } => {}
        }
        out
    }
}

fn pattern_exprs<'a>(pattern: &'a PatternMatch, out: &mut Vec<&'a BExpr>) {
    for part in &pattern.parts {
        for node in &part.nodes {
            out.extend(node.label_test.iter());
            out.extend(node.props.iter().map(|(_, e)| e));
        }
        for rel in &part.rels {
            out.extend(rel.props.iter().map(|(_, e)| e));
            out.extend(rel.dynamic_type.iter().map(|d| &d.names));
            out.extend(rel.group_hop.iter().map(|h| &h.predicate));
        }
        out.extend(part.search_predicate.iter());
        out.extend(part.group_lists.iter().map(|(_, e)| e));
    }
    out.extend(pattern.predicate.iter());
}

fn key_seek_exprs<'a>(seek: &'a KeySeek, out: &mut Vec<&'a BExpr>) {
    match &seek.predicate {
        SeekPredicate::Equal(e) | SeekPredicate::In(e) | SeekPredicate::Prefix(e) => out.push(e),
        SeekPredicate::Range { lower, upper } => {
            out.extend(lower.iter().chain(upper).map(|b| &b.value));
        }
    }
}

fn create_exprs<'a>(pattern: &'a CreatePattern, out: &mut Vec<&'a BExpr>) {
    for node in &pattern.nodes {
        out.extend(&node.labels.dynamic);
        out.extend(&node.properties);
    }
    for rel in &pattern.rels {
        if let RelTypeName::Dynamic(e) = &rel.rel_type {
            out.push(e);
        }
        out.extend(&rel.properties);
    }
    out.extend(pattern.paths.iter().map(|(_, e)| e));
}

fn set_exprs<'a>(ops: impl Iterator<Item = &'a SetOp>, out: &mut Vec<&'a BExpr>) {
    for op in ops {
        match op {
            SetOp::Property { entity, value, .. } | SetOp::Properties { entity, value, .. } => {
                out.extend([entity, value])
            }
            SetOp::Labels { entity, labels, .. } => {
                out.push(entity);
                out.extend(&labels.dynamic);
            }
        }
    }
}
