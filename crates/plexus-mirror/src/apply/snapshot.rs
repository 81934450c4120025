//! The initial copy: every mapped table read under the slot's exported snapshot and loaded
//! into the graph in ONE bulk load, committed with the slot's consistent point as the
//! replication origin's position.
//!
//! The tables are copied first (into memory: a bulk load's write set is in memory anyway),
//! then loaded synchronously in dependency order: child tables gathered into lists per parent
//! key, vertex tables (with their lists), then edge tables, whose endpoints are found with
//! [`BulkLoad::lookup`]. An edge row whose endpoint does not exist goes to the pending set.
//! Either the whole copy commits, with the origin, or nothing does: a crash during the copy
//! leaves a graph without an origin, and the next start finds the slot existing while the
//! graph has no position and asks for `--drop` (the slot's snapshot is gone).

use std::collections::{BTreeMap, HashMap};

use plexus::{BulkLoad, Value, VertexId};

use super::MirrorError;
use super::pending::{PendingEdge, PendingSet};
use super::plan::{EdgeIdentity, EndPlan, Plan, Row};
use super::rows::Reported;
use crate::change::Datum;
use crate::mapping::TableName;

/// The copied rows of one table: the columns read and every row's values.
pub struct CopiedTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Datum>>,
}

/// What the load did, per table and in total.
#[derive(Debug, Default)]
pub struct LoadSummary {
    pub vertices: u64,
    pub edges: u64,
}

fn rejected(table: &TableName, what: &str, errors: &[(usize, plexus::Error)]) -> MirrorError {
    let (row, error) = &errors[0];
    MirrorError::Row {
        table: table.to_string(),
        key: format!("copied row {}", row + 1),
        reason: format!("{what} refused ({} rows in all): {error}", errors.len()),
    }
}

/// Loads `copied` into `load` (not committed); dangling edges go to `pending`.
pub fn load_copy(
    load: &mut BulkLoad,
    plan: &Plan,
    copied: &HashMap<TableName, CopiedTable>,
    pending: &mut PendingSet,
    reported: &mut Reported,
) -> Result<LoadSummary, MirrorError> {
    let mut summary = LoadSummary::default();
    let empty = CopiedTable {
        columns: Vec::new(),
        rows: Vec::new(),
    };
    let table_of = |name: &TableName| copied.get(name).unwrap_or(&empty);
    // child lists, per list: parent key text → (order value, element)
    let mut lists: Vec<HashMap<String, Vec<(Value, Value)>>> = Vec::new();
    for lp in &plan.lists {
        let child = table_of(&lp.table);
        let parent_key = &plan.vertices[lp.vertex].key;
        let mut by_parent: HashMap<String, Vec<(Value, Value)>> = HashMap::new();
        for values in &child.rows {
            let row = Row::new(&child.columns, values);
            let (Some(parent), Some(value)) = (
                parent_key.text_in(&row, &lp.parent_columns),
                lp.value.value(&row, &lp.table)?,
            ) else {
                continue;
            };
            if value == Value::Null {
                continue;
            }
            let order = match &lp.order_by {
                Some(column) if *column == lp.value.column => value.clone(),
                Some(column) => row.text(column).map_or(Value::Null, Value::from),
                None => Value::Null,
            };
            by_parent.entry(parent).or_default().push((order, value));
        }
        for items in by_parent.values_mut() {
            if lp.order_by.is_some() {
                items.sort_by(|a, b| a.0.cmp(&b.0));
            }
        }
        lists.push(by_parent);
    }
    for (index, vp) in plan.vertices.iter().enumerate() {
        let source = table_of(&vp.table);
        let count = source.rows.len();
        let mut columns: Vec<(String, Vec<Value>)> = vp
            .properties
            .iter()
            .map(|p| (p.name.clone(), Vec::with_capacity(count)))
            .collect();
        let own_lists: Vec<usize> = (plan.lists.iter().enumerate())
            .filter(|(_, l)| l.vertex == index)
            .map(|(i, _)| i)
            .collect();
        for &l in &own_lists {
            columns.push((plan.lists[l].name.clone(), Vec::with_capacity(count)));
        }
        let mut keys: Vec<Value> = Vec::new();
        let key_columns = vp.key.columns();
        let mut row_labels: Vec<Vec<String>> = Vec::with_capacity(count);
        for values in &source.rows {
            let row = Row::new(&source.columns, values);
            let key = vp.key_value(&row)?;
            if vp.key.is_composite() {
                keys.push(key);
            }
            for (p, column) in vp.properties.iter().zip(columns.iter_mut()) {
                column
                    .1
                    .push(p.value(&row, &vp.table)?.unwrap_or(Value::Null));
            }
            let key_text = vp.key.text_in(&row, &key_columns).unwrap_or_default();
            for (&l, column) in own_lists
                .iter()
                .zip(columns.iter_mut().skip(vp.properties.len()))
            {
                let items = lists[l].remove(&key_text).unwrap_or_default();
                column.1.push(if items.is_empty() {
                    Value::Null
                } else {
                    Value::List(items.into_iter().map(|(_, v)| v).collect::<Vec<_>>().into())
                });
            }
            let labels = vp.labels(&row)?;
            row_labels.push(
                labels
                    .into_iter()
                    .filter(|l| *l != vp.graph_table)
                    .collect(),
            );
        }
        if vp.key.is_composite() {
            columns.push((vp.key.property.clone(), keys));
        }
        let added = load.add_nodes(
            &[vp.graph_table.as_str()],
            Some(&row_labels),
            &columns,
            count,
        )?;
        if !added.rejected.is_empty() {
            return Err(rejected(&vp.table, "vertex", &added.rejected));
        }
        summary.vertices += count as u64;
    }
    for ep in &plan.edges {
        let source = table_of(&ep.table);
        let mut src_ids: Vec<VertexId> = Vec::new();
        let mut dst_ids: Vec<VertexId> = Vec::new();
        let mut columns: Vec<(String, Vec<Value>)> = ep
            .properties
            .iter()
            .map(|p| (p.name.clone(), Vec::new()))
            .collect();
        let mut edge_keys: Vec<Value> = Vec::new();
        for values in &source.rows {
            let row = Row::new(&source.columns, values);
            let src = lookup_end(load, plan, &ep.table, &ep.source, &row)?;
            let dst = lookup_end(load, plan, &ep.table, &ep.destination, &row)?;
            match (src, dst) {
                (Some(Ok(s)), Some(Ok(d))) => {
                    src_ids.push(s);
                    dst_ids.push(d);
                    for (p, column) in ep.properties.iter().zip(columns.iter_mut()) {
                        column
                            .1
                            .push(p.value(&row, &ep.table)?.unwrap_or(Value::Null));
                    }
                    if let Some((_, key)) = ep.stored_key(&row)? {
                        edge_keys.push(key);
                    }
                }
                (None, _) | (_, None) => {}
                (Some(Err(missing)), _) | (_, Some(Err(missing))) => {
                    let key = (ep.alias.clone(), ep.key_texts(&row));
                    if reported.pending.insert(key.clone()) {
                        eprintln!(
                            "plexus mirror: edge row of {} ({}) {} references a missing \
                             vertex ({missing}); held pending until it arrives",
                            ep.alias,
                            ep.table,
                            row.describe()
                        );
                    }
                    pending.entries.insert(
                        key,
                        PendingEdge {
                            missing,
                            columns: source.columns.clone(),
                            values: values.clone(),
                        },
                    );
                }
            }
        }
        if let EdgeIdentity::KeyProperty { key } = &ep.identity
            && key.is_composite()
        {
            columns.push((key.property.clone(), edge_keys));
        }
        let added = load.add_relationships(&ep.label, &src_ids, &dst_ids, &columns)?;
        if !added.rejected.is_empty() {
            return Err(rejected(&ep.table, "edge", &added.rejected));
        }
        summary.edges += src_ids.len() as u64;
    }
    Ok(summary)
}

/// An endpoint of a copied edge row: `None` for NULL, `Err(what is missing)` for a vertex
/// that does not exist.
fn lookup_end(
    load: &mut BulkLoad,
    plan: &Plan,
    table: &TableName,
    end: &EndPlan,
    row: &Row<'_>,
) -> Result<Option<Result<VertexId, String>>, MirrorError> {
    let vp = &plan.vertices[end.vertex];
    let key = match vp.key.value_in(row, &end.columns) {
        Ok(Some(key)) => key,
        Ok(None) => return Ok(None),
        Err(reason) => {
            return Err(MirrorError::Row {
                table: table.to_string(),
                key: row.describe(),
                reason,
            });
        }
    };
    Ok(Some(match load.lookup(&vp.graph_table, &key)? {
        Some(v) => Ok(v),
        None => Err(vp.key.describe_in(&vp.alias, row, &end.columns)),
    }))
}

/// Rows copied per table, sorted by table, for the status.
pub fn copied_counts(copied: &HashMap<TableName, CopiedTable>) -> BTreeMap<String, u64> {
    copied
        .iter()
        .map(|(t, c)| (t.to_string(), c.rows.len() as u64))
        .collect()
}
