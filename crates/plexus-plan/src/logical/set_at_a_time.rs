//! Whether a unit subquery's inner plan may run once over many argument rows together
//! instead of once per row.
//!
//! WHAT AND WHY
//! ============
//! `CALL { ... }` runs its body once per incoming row, and each run sees the writes of the
//! runs before it. Run literally, `LOAD CSV ... CALL { WITH r MATCH ... CREATE ... } IN
//! TRANSACTIONS` pays the whole operator tree's start-up (reset, one-row batches through
//! every stage, the write operator's drain) for every line of the file. When no run can
//! observe another run's writes, running the body once over a batch of argument rows gives
//! the same rows and the same writes, in the same order: the batch flows through the same
//! streaming operators, and the write operator applies each row's writes in input order.
//!
//! THE RULE (conservative: anything not listed says no)
//! ====================================================
//! - operators: `Argument`, `NodeScan`, `Expand`, `VarExpand`, `RelationshipIndexSeek`,
//!   `Filter`, `Project`, `Unwind` and `Create` only. Everything scoped to one run — an
//!   aggregation, DISTINCT, ORDER BY, SKIP, LIMIT, an inner subquery, a hash join's build side
//!   — or writing otherwise (MERGE, SET, DELETE, FOREACH, procedures) says no;
//! - no subquery expression (`EXISTS { }`, `COUNT { }`, `COLLECT { }`, pattern comprehensions)
//!   anywhere: those read the graph per row;
//! - what the body creates is never what it reads: created relationships only if nothing
//!   reads relationships (no expand, no relationship seek); created nodes only if every node
//!   read is a scan of labels none of them carries (no all-nodes or id scan, no dynamic label).
//!
//! Scalar functions read only the row's values and the entities bound in it, whose labels
//! and properties the body cannot change (no SET): a created entity is bound only in the row
//! that created it.
//!
//! Errors: a failing body fails its whole batch either way (`CALL { ... } IN TRANSACTIONS`
//! rolls the batch back); when several rows of a batch fail, which row's error is reported
//! may differ, since operators meet the rows stage by stage.

use super::{CreatePattern, LogicalPlan, has_subquery};
use std::collections::HashSet;
use std::sync::Arc;

/// Whether `inner`, the plan of a subquery without RETURN, may run once over many argument
/// rows (see the module docs).
pub fn set_at_a_time(inner: &LogicalPlan) -> bool {
    let mut facts = Facts::default();
    facts.walk(inner) && facts.compatible()
}

#[derive(Default)]
struct Facts {
    /// Labels the node scans read.
    read_labels: HashSet<Arc<str>>,
    /// A scan reads nodes whatever their labels (all nodes, an id seek without label).
    reads_any_node: bool,
    reads_relationships: bool,
    created_labels: HashSet<Arc<str>>,
    /// Some created node's labels are computed per row (`:$(expr)`).
    creates_dynamic_labels: bool,
    creates_nodes: bool,
    creates_relationships: bool,
}

impl Facts {
    /// Records what `plan` reads and writes; false at an operator the rule does not allow.
    fn walk(&mut self, plan: &LogicalPlan) -> bool {
        let allowed = match plan {
            LogicalPlan::Argument
            | LogicalPlan::Filter { .. }
            | LogicalPlan::Project { .. }
            | LogicalPlan::Unwind { .. } => true,
            LogicalPlan::NodeScan {
                label, label_union, ..
            } => {
                match label {
                    Some(label) => {
                        self.read_labels.insert(label.clone());
                    }
                    None if !label_union.is_empty() => {
                        self.read_labels.extend(label_union.iter().cloned())
                    }
                    None => self.reads_any_node = true,
                }
                true
            }
            LogicalPlan::Expand { .. }
            | LogicalPlan::VarExpand { .. }
            | LogicalPlan::RelationshipIndexSeek { .. } => {
                self.reads_relationships = true;
                true
            }
            LogicalPlan::Create { pattern, .. } => {
                self.creates(pattern);
                true
            }
            _ => false,
        };
        allowed
            && !plan.expressions().into_iter().any(has_subquery)
            && plan.children().into_iter().all(|child| self.walk(child))
    }

    fn creates(&mut self, pattern: &CreatePattern) {
        for node in pattern.nodes.iter().filter(|n| !n.bound) {
            self.creates_nodes = true;
            self.created_labels
                .extend(node.labels.fixed.iter().cloned());
            self.creates_dynamic_labels |= !node.labels.dynamic.is_empty();
        }
        self.creates_relationships |= !pattern.rels.is_empty();
    }

    /// No read can see a write.
    fn compatible(&self) -> bool {
        let relationships = !(self.creates_relationships && self.reads_relationships);
        let reads_nodes = self.reads_any_node || !self.read_labels.is_empty();
        let nodes = !self.creates_nodes
            || !reads_nodes
            || (!self.reads_any_node
                && !self.creates_dynamic_labels
                && self.read_labels.is_disjoint(&self.created_labels));
        relationships && nodes
    }
}
