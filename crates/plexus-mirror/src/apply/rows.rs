//! Row changes → graph writes, inside one graph transaction.
//!
//! Every function here takes the epoch's [`Transaction`] and the [`ApplyState`] the epoch
//! works on (a copy, adopted only when the epoch commits), so an epoch that fails or aborts
//! leaves neither the graph nor the state changed.
//!
//! ORDER WITHIN A CHANGE
//! =====================
//! A row can feed a vertex table, edge tables (an entity table's foreign keys, or its own
//! row-owned edges) and list properties at once. Inserts and updates write the vertex first
//! (so the row's own edges find it), then the edges, then the lists; deletes remove the edges
//! first, then the vertex (with `detach`, so edges of other tables that point at it go too),
//! then the list elements.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use plexus::{Direction, EdgeId, KeyRange, Transaction, Value, VertexId};

use super::MirrorError;
use super::pending::{PendingEdge, PendingKey, PendingSet};
use super::plan::{EdgeIdentity, EdgePlan, EndPlan, ListPlan, Plan, Row, VertexPlan};
use crate::change::{Change, RelationInfo, SourceTxn};
use crate::mapping::TableName;

/// A relation as the stream last described it.
#[derive(Clone, Debug)]
pub struct Relation {
    /// `None`: a table the mapping does not use (its changes are ignored).
    pub table: Option<TableName>,
    pub columns: Arc<Vec<String>>,
}

/// What applying carries from one source transaction to the next.
#[derive(Clone, Debug, Default)]
pub struct ApplyState {
    pub relations: HashMap<u32, Relation>,
    pub pending: PendingSet,
}

/// Pending entries already reported on stderr (each once per process).
#[derive(Debug, Default)]
pub struct Reported {
    pub pending: HashSet<PendingKey>,
}

/// One resolved endpoint of an edge row.
enum End {
    /// An endpoint column is NULL: the row is no edge.
    Null,
    /// The referenced vertex does not exist (yet): what is missing.
    Missing(String),
    Found(VertexId),
}

fn row_error(table: &TableName, row: &Row<'_>, reason: String) -> MirrorError {
    MirrorError::Row {
        table: table.to_string(),
        key: row.describe(),
        reason,
    }
}

/// Compares a stream Relation with the catalog columns the plan was built from.
fn check_relation(plan: &Plan, info: &RelationInfo) -> Result<Option<TableName>, MirrorError> {
    let table = TableName {
        schema: info.schema.clone(),
        name: info.name.clone(),
    };
    let Some(baseline) = plan.columns.get(&table) else {
        return Ok(None);
    };
    let what = if info.columns.len() > baseline.len() {
        let added = info
            .columns
            .iter()
            .find(|c| !baseline.iter().any(|b| b.name == c.name));
        format!(
            "column \"{}\" added",
            added.map_or("?", |c| c.name.as_str())
        )
    } else if info.columns.len() < baseline.len() {
        let dropped = baseline
            .iter()
            .find(|b| !info.columns.iter().any(|c| c.name == b.name));
        format!(
            "column \"{}\" dropped",
            dropped.map_or("?", |c| c.name.as_str())
        )
    } else if let Some((b, c)) = baseline
        .iter()
        .zip(&info.columns)
        .find(|(b, c)| b.name != c.name || b.type_oid != c.type_oid)
    {
        if b.name != c.name {
            format!("column \"{}\" renamed to \"{}\"", b.name, c.name)
        } else {
            format!(
                "column \"{}\" changed type (oid {} to {})",
                b.name, b.type_oid, c.type_oid
            )
        }
    } else {
        return Ok(Some(table));
    };
    Err(MirrorError::SchemaChanged {
        table: table.to_string(),
        what,
    })
}

/// Applies one source transaction; returns the number of row changes applied (changes of
/// unmapped tables do not count).
pub fn apply_txn(
    tx: &mut Transaction,
    plan: &Plan,
    state: &mut ApplyState,
    reported: &mut Reported,
    txn: &SourceTxn,
) -> Result<u64, MirrorError> {
    let mut rows = 0;
    let mut created_vertices = false;
    let relation = |state: &ApplyState, oid: u32| -> Result<Relation, MirrorError> {
        state.relations.get(&oid).cloned().ok_or_else(|| {
            MirrorError::Protocol(format!("a change of relation {oid} before its description"))
        })
    };
    for change in &txn.changes {
        match change {
            Change::Relation(info) => {
                let table = check_relation(plan, info)?;
                let columns = Arc::new(info.columns.iter().map(|c| c.name.clone()).collect());
                state
                    .relations
                    .insert(info.oid, Relation { table, columns });
            }
            Change::Insert { relation: oid, new } => {
                let rel = relation(state, *oid)?;
                if let Some(table) = &rel.table {
                    let row = Row::new(&rel.columns, new);
                    created_vertices |= upsert(tx, plan, state, reported, table, None, row, true)?;
                    rows += 1;
                }
            }
            Change::Update {
                relation: oid,
                old,
                new,
            } => {
                let rel = relation(state, *oid)?;
                if let Some(table) = &rel.table {
                    let old = old.as_ref().map(|o| Row::new(&rel.columns, &o.values));
                    let row = Row::new(&rel.columns, new);
                    created_vertices |= upsert(tx, plan, state, reported, table, old, row, false)?;
                    rows += 1;
                }
            }
            Change::Delete { relation: oid, old } => {
                let rel = relation(state, *oid)?;
                if let Some(table) = &rel.table {
                    delete(tx, plan, state, table, Row::new(&rel.columns, &old.values))?;
                    rows += 1;
                }
            }
            Change::Truncate { relations, .. } => {
                for oid in relations {
                    let rel = relation(state, *oid)?;
                    if let Some(table) = &rel.table {
                        truncate(tx, plan, state, table)?;
                        rows += 1;
                    }
                }
            }
        }
    }
    if created_vertices && !state.pending.is_empty() {
        resolve_pending(tx, plan, state, reported)?;
    }
    Ok(rows)
}

/// An insert (`insert`) or update (`old`: its old row, when sent) of a row of `table`; true
/// when it created a vertex.
#[allow(clippy::too_many_arguments)]
fn upsert(
    tx: &mut Transaction,
    plan: &Plan,
    state: &mut ApplyState,
    reported: &mut Reported,
    table: &TableName,
    old: Option<Row<'_>>,
    new: Row<'_>,
    insert: bool,
) -> Result<bool, MirrorError> {
    let mut created = false;
    for vp in plan.vertices.iter().filter(|v| &v.table == table) {
        created |= upsert_vertex(tx, vp, old, new)?;
    }
    for ep in plan.edges.iter().filter(|e| &e.table == table) {
        upsert_edge(tx, plan, state, reported, ep, old, new)?;
    }
    for lp in plan.lists.iter().filter(|l| &l.table == table) {
        match old {
            // an update: move the element (its old value comes with the old row)
            Some(old) => {
                list_remove(tx, plan, lp, old)?;
                list_add(tx, plan, lp, new)?;
            }
            None if insert => list_add(tx, plan, lp, new)?,
            // an update that left the replica identity alone: the list's parent key and
            // value (both in the identity, see docs/mirror.md) are unchanged
            None => {}
        }
    }
    Ok(created)
}

fn delete(
    tx: &mut Transaction,
    plan: &Plan,
    state: &mut ApplyState,
    table: &TableName,
    old: Row<'_>,
) -> Result<(), MirrorError> {
    for ep in plan.edges.iter().filter(|e| &e.table == table) {
        state
            .pending
            .entries
            .remove(&(ep.alias.clone(), ep.key_texts(&old)));
        if let Some((e, _, _)) = find_edge(tx, plan, ep, old)? {
            tx.delete_edge(e)?;
        }
    }
    for vp in plan.vertices.iter().filter(|v| &v.table == table) {
        let key = vp.key_value(&old)?;
        if let Some(v) = tx.lookup(&vp.graph_table, &key)? {
            tx.delete_vertex(v, true)?;
        }
    }
    for lp in plan.lists.iter().filter(|l| &l.table == table) {
        list_remove(tx, plan, lp, old)?;
    }
    Ok(())
}

fn truncate(
    tx: &mut Transaction,
    plan: &Plan,
    state: &mut ApplyState,
    table: &TableName,
) -> Result<(), MirrorError> {
    for ep in plan.edges.iter().filter(|e| &e.table == table) {
        state
            .pending
            .entries
            .retain(|(alias, _), _| *alias != ep.alias);
        for e in tx.scan_edges(&ep.label)? {
            let (src, dst) = tx.edge_endpoints(e)?;
            if in_table(tx, plan, &ep.source, src)? && in_table(tx, plan, &ep.destination, dst)? {
                tx.delete_edge(e)?;
            }
        }
    }
    for lp in plan.lists.iter().filter(|l| &l.table == table) {
        for v in tx.scan_label(&plan.vertices[lp.vertex].graph_table)? {
            tx.remove_vertex_property(v, &lp.name)?;
        }
    }
    for vp in plan.vertices.iter().filter(|v| &v.table == table) {
        for v in tx.scan_label(&vp.graph_table)? {
            tx.delete_vertex(v, true)?;
        }
    }
    Ok(())
}

fn in_table(
    tx: &mut Transaction,
    plan: &Plan,
    end: &EndPlan,
    v: VertexId,
) -> Result<bool, MirrorError> {
    Ok(tx.vertex_has_labels(v, &[&plan.vertices[end.vertex].graph_table])?)
}

/// Creates or updates `new`'s vertex (found by `old`'s key when given: the key may change).
/// A row whose vertex exists is an update even when it comes as an insert (a replayed row).
/// True when a vertex now has a key it did not have before (created, or its key changed):
/// pending edges may reference it.
fn upsert_vertex(
    tx: &mut Transaction,
    vp: &VertexPlan,
    old: Option<Row<'_>>,
    new: Row<'_>,
) -> Result<bool, MirrorError> {
    let new_key = vp.key_value(&new)?;
    let old_key = match old {
        Some(old) if vp.has_key(&old) => vp.key_value(&old)?,
        _ => new_key.clone(),
    };
    let mut found = tx.lookup(&vp.graph_table, &old_key)?;
    if found.is_none() && old_key != new_key {
        found = tx.lookup(&vp.graph_table, &new_key)?;
    }
    let labels = vp.labels(&new)?;
    let Some(v) = found else {
        let mut props: Vec<(&str, Value)> = Vec::with_capacity(vp.properties.len());
        for p in &vp.properties {
            if let Some(value) = p.value(&new, &vp.table)?
                && value != Value::Null
            {
                props.push((p.name.as_str(), value));
            }
        }
        if vp.key.is_composite() {
            props.push((vp.key.property.as_str(), new_key));
        }
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        tx.create_vertex(&labels, &props)?;
        return Ok(true);
    };
    for p in &vp.properties {
        let Some(value) = p.value(&new, &vp.table)? else {
            continue;
        };
        if p.name == vp.key.property && value == old_key {
            continue;
        }
        tx.set_vertex_property(v, &p.name, value)?;
    }
    if vp.key.is_composite() && old_key != new_key {
        tx.set_vertex_property(v, &vp.key.property, new_key.clone())?;
    }
    if vp.mapping.label_from.is_some() {
        let current = tx.vertex_labels(v)?;
        for label in &current {
            let row_label = !vp.mapping.labels.contains(label) && *label != vp.graph_table;
            if row_label && !labels.contains(label) {
                tx.remove_label(v, label)?;
            }
        }
        for label in &labels {
            if !current.contains(label) {
                tx.add_label(v, label)?;
            }
        }
    }
    Ok(old_key != new_key)
}

fn resolve_end(
    tx: &mut Transaction,
    plan: &Plan,
    ep: &EdgePlan,
    end: &EndPlan,
    row: Row<'_>,
) -> Result<End, MirrorError> {
    let vp = &plan.vertices[end.vertex];
    let key = match vp.key.value_in(&row, &end.columns) {
        Ok(Some(key)) => key,
        Ok(None) => return Ok(End::Null),
        Err(reason) => return Err(row_error(&ep.table, &row, reason)),
    };
    Ok(match tx.lookup(&vp.graph_table, &key)? {
        Some(v) => End::Found(v),
        None => End::Missing(vp.key.describe_in(&vp.alias, &row, &end.columns)),
    })
}

/// The edge of the row identified by `ident` (its key columns), with its endpoints.
fn find_edge(
    tx: &mut Transaction,
    plan: &Plan,
    ep: &EdgePlan,
    ident: Row<'_>,
) -> Result<Option<(EdgeId, VertexId, VertexId)>, MirrorError> {
    match &ep.identity {
        EdgeIdentity::RowOwned { source } => {
            let owner_end = ep.owner(*source);
            let End::Found(owner) = resolve_end(tx, plan, ep, owner_end, ident)? else {
                return Ok(None);
            };
            let direction = if *source {
                Direction::Out
            } else {
                Direction::In
            };
            let other_table = &plan.vertices[ep.other(*source).vertex].graph_table;
            for (e, other) in tx.neighbors(owner, Some(&ep.label), direction)? {
                if tx.vertex_has_labels(other, &[other_table])? {
                    let (src, dst) = if *source {
                        (owner, other)
                    } else {
                        (other, owner)
                    };
                    return Ok(Some((e, src, dst)));
                }
            }
            Ok(None)
        }
        EdgeIdentity::Link => {
            let (End::Found(src), End::Found(dst)) = (
                resolve_end(tx, plan, ep, &ep.source, ident)?,
                resolve_end(tx, plan, ep, &ep.destination, ident)?,
            ) else {
                return Ok(None);
            };
            let found = tx.edges_between(src, Some(&ep.label), dst)?;
            Ok(found.first().map(|&e| (e, src, dst)))
        }
        EdgeIdentity::KeyProperty { key: key_plan } => {
            let key = match key_plan.value_in(&ident, &key_plan.columns()) {
                Ok(Some(key)) => key,
                Ok(None) => return Ok(None),
                Err(reason) => return Err(row_error(&ep.table, &ident, reason)),
            };
            let property = &key_plan.property;
            let indexed = match KeyRange::equal(&key) {
                Some(range) => tx.seek_edges_by_index(&ep.label, property, &range)?,
                None => None,
            };
            let candidates = match indexed {
                Some(found) => found,
                // a composite key (a list) is not indexable: first the edges between the
                // row's endpoints, when it names them, then the label's edges
                None => {
                    let between = match (
                        resolve_end(tx, plan, ep, &ep.source, ident)?,
                        resolve_end(tx, plan, ep, &ep.destination, ident)?,
                    ) {
                        (End::Found(s), End::Found(d)) => {
                            tx.edges_between(s, Some(&ep.label), d)?
                        }
                        _ => Vec::new(),
                    };
                    if let Some(found) = keyed_edge(tx, plan, ep, property, &key, between)? {
                        return Ok(Some(found));
                    }
                    tx.scan_edges(&ep.label)?
                }
            };
            keyed_edge(tx, plan, ep, property, &key, candidates)
        }
    }
}

/// The first of `candidates` whose `property` is `key` and whose endpoints are in the edge
/// table's vertex tables.
fn keyed_edge(
    tx: &mut Transaction,
    plan: &Plan,
    ep: &EdgePlan,
    property: &str,
    key: &Value,
    candidates: Vec<EdgeId>,
) -> Result<Option<(EdgeId, VertexId, VertexId)>, MirrorError> {
    for e in candidates {
        if tx.edge_property(e, property)?.as_ref() != Some(key) {
            continue;
        }
        let (src, dst) = tx.edge_endpoints(e)?;
        if in_table(tx, plan, &ep.source, src)? && in_table(tx, plan, &ep.destination, dst)? {
            return Ok(Some((e, src, dst)));
        }
    }
    Ok(None)
}

/// Creates, updates, moves or removes the edge of an edge-table row, or holds it pending.
fn upsert_edge(
    tx: &mut Transaction,
    plan: &Plan,
    state: &mut ApplyState,
    reported: &mut Reported,
    ep: &EdgePlan,
    old: Option<Row<'_>>,
    new: Row<'_>,
) -> Result<(), MirrorError> {
    let ident = old.unwrap_or(new);
    state
        .pending
        .entries
        .remove(&(ep.alias.clone(), ep.key_texts(&ident)));
    state
        .pending
        .entries
        .remove(&(ep.alias.clone(), ep.key_texts(&new)));
    let mut existing = find_edge(tx, plan, ep, ident)?;
    if existing.is_none() && old.is_some() && ep.identity == EdgeIdentity::Link {
        // the old endpoint keys may name a vertex whose key has changed since (an ON UPDATE
        // CASCADE arrives after the key change): the edge is the one between the new ones
        existing = find_edge(tx, plan, ep, new)?;
    }
    let src = resolve_end(tx, plan, ep, &ep.source, new)?;
    let dst = resolve_end(tx, plan, ep, &ep.destination, new)?;
    match (src, dst) {
        (End::Found(s), End::Found(d)) => {
            if let Some((e, es, ed)) = existing {
                if (es, ed) == (s, d) {
                    for p in &ep.properties {
                        if let Some(value) = p.value(&new, &ep.table)? {
                            tx.set_edge_property(e, &p.name, value)?;
                        }
                    }
                    if let Some((name, key)) = ep.stored_key(&new)? {
                        tx.set_edge_property(e, name, key)?;
                    }
                    return Ok(());
                }
                // an UPDATE that changes a foreign key moves the edge
                tx.delete_edge(e)?;
            }
            let mut props: Vec<(&str, Value)> = Vec::with_capacity(ep.properties.len());
            for p in &ep.properties {
                if let Some(value) = p.value(&new, &ep.table)?
                    && value != Value::Null
                {
                    props.push((p.name.as_str(), value));
                }
            }
            if let Some((name, key)) = ep.stored_key(&new)? {
                props.push((name, key));
            }
            tx.create_edge(s, &ep.label, d, &props)?;
        }
        (src, dst) => {
            if let Some((e, _, _)) = existing {
                tx.delete_edge(e)?;
            }
            let missing = match (src, dst) {
                (End::Null, _) | (_, End::Null) => None,
                (End::Missing(m), _) | (_, End::Missing(m)) => Some(m),
                (End::Found(_), End::Found(_)) => None,
            };
            if let Some(missing) = missing {
                let key = (ep.alias.clone(), ep.key_texts(&new));
                if reported.pending.insert(key.clone()) {
                    eprintln!(
                        "plexus mirror: edge row of {} ({}) {} references a missing vertex \
                         ({missing}); held pending until it arrives",
                        ep.alias,
                        ep.table,
                        new.describe()
                    );
                }
                state.pending.entries.insert(
                    key,
                    PendingEdge {
                        missing,
                        columns: new.columns.to_vec(),
                        values: new.values.to_vec(),
                    },
                );
            }
        }
    }
    Ok(())
}

/// Creates the pending edges whose endpoints all exist now.
fn resolve_pending(
    tx: &mut Transaction,
    plan: &Plan,
    state: &mut ApplyState,
    reported: &mut Reported,
) -> Result<(), MirrorError> {
    let entries: Vec<(PendingKey, PendingEdge)> = state
        .pending
        .entries
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for ((alias, _), edge) in entries {
        let Some(ep) = plan.edges.iter().find(|e| e.alias == alias) else {
            continue;
        };
        let row = Row::new(&edge.columns, &edge.values);
        let src = resolve_end(tx, plan, ep, &ep.source, row)?;
        let dst = resolve_end(tx, plan, ep, &ep.destination, row)?;
        if matches!(src, End::Missing(_)) || matches!(dst, End::Missing(_)) {
            continue;
        }
        upsert_edge(tx, plan, state, reported, ep, None, row)?;
    }
    Ok(())
}

/// The parent vertex of a child row (`None` when the row has no parent key or the parent
/// does not exist; such a child is reported and skipped).
fn list_parent(
    tx: &mut Transaction,
    plan: &Plan,
    lp: &ListPlan,
    row: Row<'_>,
) -> Result<Option<VertexId>, MirrorError> {
    let vp = &plan.vertices[lp.vertex];
    let key = match vp.key.value_in(&row, &lp.parent_columns) {
        Ok(Some(key)) => key,
        Ok(None) => return Ok(None),
        Err(reason) => return Err(row_error(&lp.table, &row, reason)),
    };
    let parent = tx.lookup(&vp.graph_table, &key)?;
    if parent.is_none() {
        eprintln!(
            "plexus mirror: list {} row {} of {} names no existing {} (skipped)",
            lp.name,
            row.describe(),
            lp.table,
            vp.alias
        );
    }
    Ok(parent)
}

fn list_add(
    tx: &mut Transaction,
    plan: &Plan,
    lp: &ListPlan,
    row: Row<'_>,
) -> Result<(), MirrorError> {
    let Some(value) = lp.value.value(&row, &lp.table)? else {
        return Ok(());
    };
    if value == Value::Null {
        return Ok(());
    }
    let Some(v) = list_parent(tx, plan, lp, row)? else {
        return Ok(());
    };
    let mut items: Vec<Value> = match tx.vertex_property(v, &lp.name)? {
        Some(Value::List(items)) => items.to_vec(),
        _ => Vec::new(),
    };
    items.push(value);
    if lp.order_by.as_deref() == Some(lp.value.column.as_str()) {
        items.sort();
    }
    tx.set_vertex_property(v, &lp.name, Value::List(items.into()))?;
    Ok(())
}

fn list_remove(
    tx: &mut Transaction,
    plan: &Plan,
    lp: &ListPlan,
    old: Row<'_>,
) -> Result<(), MirrorError> {
    let value = match lp.value.value(&old, &lp.table)? {
        Some(Value::Null) | None => {
            return Err(row_error(
                &lp.table,
                &old,
                format!(
                    "the old row lacks the list value column \"{}\": make it part of the \
                     table's replica identity (or REPLICA IDENTITY FULL)",
                    lp.value.column
                ),
            ));
        }
        Some(value) => value,
    };
    let Some(v) = list_parent(tx, plan, lp, old)? else {
        return Ok(());
    };
    let Some(Value::List(items)) = tx.vertex_property(v, &lp.name)? else {
        return Ok(());
    };
    let mut items = items.to_vec();
    if let Some(at) = items.iter().position(|x| *x == value) {
        items.remove(at);
    }
    let value = if items.is_empty() {
        Value::Null
    } else {
        Value::List(items.into())
    };
    tx.set_vertex_property(v, &lp.name, value)?;
    Ok(())
}
