//! The `relationship_count` pass: counting relationships without expanding.
//!
//! WHAT
//! ====
//! `MATCH ()-[r:T]->() RETURN count(*)` is among the first queries run against a loaded
//! graph, and the binder plans it as every node expanded along `T` and the rows counted: a
//! read of the whole adjacency (16.8 M entries of a scale-20 RMAT graph, ~0.7 s, and every
//! page of the type's runs made resident). The pass answers it from the type's edge rows
//! instead (`Transaction::count_edges`), as Neo4j answers it from its count store:
//!
//! ```text
//!   Aggregate s3 = count(*)                      RelationshipCountFromRows s3 = count(()-[:T]->())
//!   └ Expand (s0)-[s1:T]->(s2)            ──▶    └ Argument
//!     └ AllNodesScan s0
//!       └ Argument
//! ```
//!
//! WHEN
//! ====
//! Exactly that shape, nothing between the operators: an `Aggregate` without grouping keys
//! whose one call is a non-DISTINCT `count(*)` or `count(x)` of one of the pattern's three
//! variables; an `Expand` of one type, of several distinct types (`[:A|B]`; a repeated one
//! is left alone) or of any type, directed (`->` or `<-`), to a new variable (`to_bound`
//! unset, so not `(a)-[r]->(a)`), apart from no earlier relationship; an unlabelled scan
//! without seek straight over the `Argument`. A label on either end, a property map, a WHERE
//! or a second pattern part each put an operator between them (a `Filter`, a second scan or
//! expand) and leave the plan as it is; so does an undirected pattern, which meets each
//! relationship twice and a self-loop once.
//!
//! WHY THE SAME ROWS
//! =================
//! Expanding every node of the snapshot along `T` in one direction meets each relationship
//! of the type exactly once (at its source for `->`, at its target for `<-`): a relationship
//! exists only while both its ends do (a node with relationships cannot be deleted), and the
//! transaction's own creations and deletions show in both. `count_edges` counts the same set
//! — the type's rows at the snapshot, minus those the transaction deleted, plus those it
//! created — and records the same read under SERIALIZABLE (a scan of the type). A
//! relationship has one type, so distinct types' counts add up to the expand's; with no type
//! named, `count_all_edges` counts every type's rows and records a read of the whole edge
//! set (a relationship of a type created later conflicts too). The three
//! variables are never null in those rows, so `count(x)` equals `count(*)`. Both plans
//! return one row, whose other slots are null.

use crate::logical::{AggFunction, BExpr, LogicalPlan};
use plexus_types::Direction;

/// Replaces every subtree of the shape above by a `RelationshipCount`.
pub fn count_relationships(plan: &mut LogicalPlan) {
    for child in plan.children_mut() {
        count_relationships(child);
    }
    if let Some((slot, rel_types)) = counted_types(plan) {
        *plan = LogicalPlan::RelationshipCount {
            input: Box::new(LogicalPlan::Argument),
            slot,
            rel_types,
        };
    }
}

/// The count's slot and relationship types when `plan` has the shape (see WHEN).
fn counted_types(plan: &LogicalPlan) -> Option<(usize, Vec<std::sync::Arc<str>>)> {
    let LogicalPlan::Aggregate {
        input,
        keys,
        aggregates,
    } = plan
    else {
        return None;
    };
    let [(slot, call)] = &aggregates[..] else {
        return None;
    };
    let LogicalPlan::Expand { input, spec, .. } = &**input else {
        return None;
    };
    let types = &spec.types;
    let distinct_types = (types.iter().enumerate()).all(|(i, t)| !types[..i].contains(t));
    let LogicalPlan::NodeScan {
        input,
        slot: scanned,
        label: None,
        label_union,
        seek: None,
        id_seek: None,
        ..
    } = &**input
    else {
        return None;
    };
    let counts_rows = match &call.arg {
        None => true,
        Some(BExpr::Slot(s)) => [spec.from, spec.rel, spec.to].contains(s),
        Some(_) => false,
    };
    let shape = keys.is_empty()
        && call.function == AggFunction::Count
        && !call.distinct
        && call.extra.is_none()
        && counts_rows
        && distinct_types
        && spec.direction != Direction::Both
        && !spec.to_bound
        && spec.distinct_from.is_empty()
        && *scanned == spec.from
        && label_union.is_empty()
        && matches!(**input, LogicalPlan::Argument);
    shape.then(|| (*slot, types.clone()))
}
