//! Writing operators: CREATE, MERGE, SET / REMOVE, DELETE, FOREACH.
//!
//! Each reads its whole input first, then writes row by row through the connection's
//! transaction, then emits its rows (see "WRITES ARE EAGER" in the module above). DELETE
//! collects every entity of every row first and deletes relationships before nodes, so
//! `MATCH (a)-[r]-(b) DELETE a, r, b` works whatever the row order; deleting a node that
//! still has relationships without DETACH fails with `DeleteConnectedNode`.

use super::ops::run_inner;
use super::{Batch, ExecContext, Materialized, Operator, drain};
use crate::eval::labels::dynamic_names;
use crate::eval::{Env, entity_properties, eval};
use plexus_plan::logical::BExpr;
use plexus_plan::logical::{CreatePattern, LogicalPlan, RelTypeName, SetOp, WriteLabels};
use plexus_types::{Direction, EdgeId, VertexId};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::{MapValue, Value};
use std::collections::HashSet;
use std::sync::Arc;

pub(super) fn build_write(
    plan: &LogicalPlan,
    child: &mut dyn FnMut(&LogicalPlan) -> Box<dyn Operator>,
) -> Box<dyn Operator> {
    // Build the input first: operators are numbered in pre-order (see `plexus_plan::logical::explain`).
    let input = match plan {
        LogicalPlan::Create { input, .. }
        | LogicalPlan::Merge { input, .. }
        | LogicalPlan::Set { input, .. }
        | LogicalPlan::Delete { input, .. }
        | LogicalPlan::Foreach { input, .. } => child(input),
        _ => unreachable!("build_write is only called for writing operators"),
    };
    let kind = match plan {
        LogicalPlan::Merge {
            matcher,
            pattern,
            on_match,
            on_create,
            ..
        } => WriteKind::Merge {
            matcher: child(matcher),
            pattern: pattern.clone(),
            on_match: on_match.clone(),
            on_create: on_create.clone(),
        },
        LogicalPlan::Set { ops, .. } => WriteKind::Set(ops.clone()),
        LogicalPlan::Delete { exprs, detach, .. } => WriteKind::Delete {
            exprs: exprs.clone(),
            detach: *detach,
        },
        LogicalPlan::Foreach {
            slot, list, body, ..
        } => WriteKind::Foreach {
            slot: *slot,
            list: list.clone(),
            body: child(body),
        },
        LogicalPlan::Create { pattern, .. } => WriteKind::Create(pattern.clone()),
        _ => unreachable!("build_write is only called for writing operators"),
    };
    Box::new(Write {
        input,
        kind,
        output: Materialized::default(),
    })
}

enum WriteKind {
    Create(CreatePattern),
    Merge {
        matcher: Box<dyn Operator>,
        pattern: CreatePattern,
        on_match: Vec<SetOp>,
        on_create: Vec<SetOp>,
    },
    Set(Vec<SetOp>),
    Delete {
        exprs: Vec<BExpr>,
        detach: bool,
    },
    Foreach {
        slot: usize,
        list: BExpr,
        body: Box<dyn Operator>,
    },
}

struct Write {
    input: Box<dyn Operator>,
    kind: WriteKind,
    output: Materialized,
}

impl Operator for Write {
    fn next(&mut self, ctx: &mut ExecContext) -> Result<Option<Batch>> {
        if !self.output.is_computed() {
            let input = drain(self.input.as_mut(), ctx)?;
            let output = self.run(input, ctx)?;
            self.output.fill(output);
        }
        Ok(self.output.next_batch())
    }

    fn reset(&mut self) {
        self.input.reset();
        self.output.reset();
        match &mut self.kind {
            WriteKind::Merge { matcher, .. } => matcher.reset(),
            WriteKind::Foreach { body, .. } => body.reset(),
            _ => {}
        }
    }
}

impl Write {
    fn run(&mut self, input: Vec<Batch>, ctx: &mut ExecContext) -> Result<Vec<Batch>> {
        match &mut self.kind {
            WriteKind::Create(pattern) => {
                let mut output = Vec::with_capacity(input.len());
                for batch in input {
                    let mut out = Batch::new(batch.width());
                    for row in 0..batch.len() {
                        let mut values = batch.row(row);
                        create(pattern, &mut values, ctx)?;
                        out.push_row(values);
                    }
                    output.push(out);
                }
                Ok(output)
            }
            WriteKind::Set(ops) => {
                for batch in &input {
                    for row in 0..batch.len() {
                        apply_set_ops(ops, batch, row, ctx)?;
                    }
                }
                Ok(input)
            }
            WriteKind::Delete { exprs, detach } => {
                let mut nodes: Vec<VertexId> = Vec::new();
                let mut rels: Vec<EdgeId> = Vec::new();
                for batch in &input {
                    for row in 0..batch.len() {
                        let mut env = Env::new(batch, row);
                        for e in exprs.iter() {
                            let value = eval(e, &mut env, ctx)?;
                            collect_deletions(&value, &mut nodes, &mut rels)?;
                        }
                    }
                }
                delete(nodes, rels, *detach, ctx)?;
                Ok(input)
            }
            WriteKind::Foreach { slot, list, body } => {
                for batch in &input {
                    for row in 0..batch.len() {
                        let mut env = Env::new(batch, row);
                        let items = match eval(list, &mut env, ctx)? {
                            Value::Null => continue,
                            Value::List(items) => items,
                            other => {
                                return Err(QueryError::type_error(format!(
                                    "FOREACH expects a list, not {}",
                                    other.type_name()
                                )));
                            }
                        };
                        for item in items.iter() {
                            let mut values = batch.row(row);
                            values[*slot] = item.clone();
                            run_inner(body.as_mut(), Arc::new(values), ctx)?;
                        }
                    }
                }
                Ok(input)
            }
            WriteKind::Merge {
                matcher,
                pattern,
                on_match,
                on_create,
            } => {
                let mut output = Vec::new();
                for batch in input {
                    let mut out = Batch::new(batch.width());
                    for row in 0..batch.len() {
                        let values = batch.row(row);
                        let matched = run_inner(matcher.as_mut(), Arc::new(values.clone()), ctx)?;
                        if matched.iter().any(|b| !b.is_empty()) {
                            for m in &matched {
                                for r in 0..m.len() {
                                    apply_set_ops(on_match, m, r, ctx)?;
                                    out.push_from(m, r);
                                }
                            }
                        } else {
                            let mut values = values;
                            check_merge_nulls(pattern, &values, ctx)?;
                            create(pattern, &mut values, ctx)?;
                            let single = Batch::single(values);
                            apply_set_ops(on_create, &single, 0, ctx)?;
                            out.push_from(&single, 0);
                        }
                    }
                    output.push(out);
                }
                Ok(output)
            }
        }
    }
}

/// MERGE cannot create an entity with a null property value (it could never match it).
fn check_merge_nulls(pattern: &CreatePattern, row: &[Value], ctx: &mut ExecContext) -> Result<()> {
    let single = Batch::single(row.to_vec());
    let props = pattern
        .nodes
        .iter()
        .filter(|n| !n.bound)
        .filter_map(|n| n.properties.as_ref())
        .chain(pattern.rels.iter().filter_map(|r| r.properties.as_ref()));
    for expr in props {
        let mut env = Env::new(&single, 0);
        if let Value::Map(map) = eval(expr, &mut env, ctx)?
            && let Some((key, _)) = map.iter().find(|(_, v)| v.is_null())
        {
            return Err(QueryError::runtime(
                ErrorClass::SemanticError,
                "MergeReadOwnWrites",
                format!("cannot merge with a null value for property `{key}`"),
            ));
        }
    }
    Ok(())
}

/// Storable (name, value) pairs of a property map; nulls are dropped.
fn property_list(value: Value) -> Result<Vec<(Arc<str>, plexus_types::Value)>> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Map(map) => {
            let mut props = Vec::with_capacity(map.len());
            for (k, v) in map.iter() {
                if v.is_null() {
                    continue;
                }
                props.push((k.clone(), storable(v)?));
            }
            Ok(props)
        }
        other => Err(QueryError::type_error(format!(
            "properties must be given as a map, not {}",
            other.type_name()
        ))),
    }
}

/// A value as a property value, or `InvalidPropertyType`.
pub(crate) fn storable(value: &Value) -> Result<plexus_types::Value> {
    value.to_storage().ok_or_else(|| {
        QueryError::runtime(
            ErrorClass::TypeError,
            "InvalidPropertyType",
            format!(
                "a {} cannot be stored as a property value",
                value.type_name()
            ),
        )
    })
}

fn create(pattern: &CreatePattern, row: &mut [Value], ctx: &mut ExecContext) -> Result<()> {
    for node in &pattern.nodes {
        if node.bound {
            match &row[node.slot] {
                Value::Node(_) => continue,
                other => {
                    return Err(QueryError::runtime(
                        ErrorClass::SemanticError,
                        "CreateOnNull",
                        format!("cannot create a relationship to a {}", other.type_name()),
                    ));
                }
            }
        }
        let single = Batch::single(row.to_vec());
        let props = match &node.properties {
            Some(e) => {
                let mut env = Env::new(&single, 0);
                property_list(eval(e, &mut env, ctx)?)?
            }
            None => Vec::new(),
        };
        let labels = write_labels(&node.labels, &mut Env::new(&single, 0), ctx)?;
        let labels: Vec<&str> = labels.iter().map(|l| &**l).collect();
        let props_ref: Vec<(&str, plexus_types::Value)> =
            props.iter().map(|(k, v)| (&**k, v.clone())).collect();
        let id = ctx.tx.create_vertex(&labels, &props_ref)?;
        ctx.state.stats.nodes_created += 1;
        ctx.state.stats.properties_set += props.len() as u64;
        ctx.state.stats.labels_added += labels.len() as u64;
        row[node.slot] = Value::Node(id);
    }
    for rel in &pattern.rels {
        let (Value::Node(src), Value::Node(dst)) = (&row[rel.src], &row[rel.dst]) else {
            return Err(QueryError::runtime(
                ErrorClass::SemanticError,
                "CreateOnNull",
                "cannot create a relationship with a missing end node",
            ));
        };
        let (src, dst) = (*src, *dst);
        // The row as a batch, for the expressions of a property map or a dynamic type only:
        // a plain `CREATE (a)-[:E]->(b)` (`LOAD CSV`'s relationships) copies no row.
        let cell = std::cell::OnceCell::new();
        let single = || cell.get_or_init(|| Batch::single(row.to_vec()));
        let props = match &rel.properties {
            Some(e) => {
                let mut env = Env::new(single(), 0);
                property_list(eval(e, &mut env, ctx)?)?
            }
            None => Vec::new(),
        };
        let props_ref: Vec<(&str, plexus_types::Value)> =
            props.iter().map(|(k, v)| (&**k, v.clone())).collect();
        let rel_type = match &rel.rel_type {
            RelTypeName::Fixed(name) => name.clone(),
            RelTypeName::Dynamic(e) => {
                let mut env = Env::new(single(), 0);
                match dynamic_names(eval(e, &mut env, ctx)?, true)?.as_slice() {
                    [name] => name.clone(),
                    names => {
                        return Err(QueryError::type_error(format!(
                            "a created relationship takes exactly one type, not {}",
                            names.len()
                        )));
                    }
                }
            }
        };
        let id = ctx.tx.create_edge(src, &rel_type, dst, &props_ref)?;
        ctx.state.stats.relationships_created += 1;
        ctx.state.stats.properties_set += props.len() as u64;
        row[rel.slot] = Value::Rel(id);
    }
    for (slot, expr) in &pattern.paths {
        let single = Batch::single(row.to_vec());
        let mut env = Env::new(&single, 0);
        row[*slot] = eval(expr, &mut env, ctx)?;
    }
    Ok(())
}

fn set_property(entity: &Value, key: &str, value: &Value, ctx: &mut ExecContext) -> Result<()> {
    let stored = if value.is_null() {
        plexus_types::Value::Null
    } else {
        storable(value)?
    };
    match entity {
        Value::Node(v) => ctx
            .tx
            .set_vertex_property(*v, key, stored)
            .map_err(deleted)?,
        Value::Rel(e) => ctx.tx.set_edge_property(*e, key, stored).map_err(deleted)?,
        Value::Null => return Ok(()),
        other => {
            return Err(QueryError::type_error(format!(
                "cannot set a property on a {}",
                other.type_name()
            )));
        }
    }
    ctx.state.stats.properties_set += 1;
    Ok(())
}

fn deleted(error: plexus_types::Error) -> QueryError {
    match error {
        plexus_types::Error::NotFound(message) => {
            QueryError::runtime(ErrorClass::EntityNotFound, "DeletedEntityAccess", message)
        }
        other => other.into(),
    }
}

fn apply_set_ops(ops: &[SetOp], batch: &Batch, row: usize, ctx: &mut ExecContext) -> Result<()> {
    for op in ops {
        let mut env = Env::new(batch, row);
        match op {
            SetOp::Property { entity, key, value } => {
                let target = eval(entity, &mut env, ctx)?;
                let value = eval(value, &mut env, ctx)?;
                set_property(&target, key, &value, ctx)?;
            }
            SetOp::Properties {
                entity,
                value,
                replace,
            } => {
                let target = eval(entity, &mut env, ctx)?;
                if target.is_null() {
                    continue;
                }
                let value = eval(value, &mut env, ctx)?;
                let map: MapValue = match value {
                    Value::Map(m) => (*m).clone(),
                    Value::Node(_) | Value::Rel(_) => entity_properties(&value, ctx)?,
                    Value::Null => MapValue::new(),
                    other => {
                        return Err(QueryError::type_error(format!(
                            "SET expects a map, not {}",
                            other.type_name()
                        )));
                    }
                };
                if *replace {
                    let existing = entity_properties(&target, ctx)?;
                    for key in existing.keys() {
                        if !map.contains_key(key) {
                            set_property(&target, key, &Value::Null, ctx)?;
                        }
                    }
                }
                for (key, v) in map.iter() {
                    set_property(&target, key, v, ctx)?;
                }
            }
            SetOp::Labels {
                entity,
                labels,
                add,
            } => {
                let target = eval(entity, &mut env, ctx)?;
                let v = match target {
                    Value::Node(v) => v,
                    Value::Null => continue,
                    other => {
                        return Err(QueryError::type_error(format!(
                            "labels can only be changed on nodes, not {}",
                            other.type_name()
                        )));
                    }
                };
                let labels = write_labels(labels, &mut env, ctx)?;
                let existing = ctx.tx.vertex_labels(v).map_err(deleted)?;
                for label in &labels {
                    let has = existing.iter().any(|l| **l == **label);
                    if *add && !has {
                        ctx.tx.add_label(v, label)?;
                        ctx.state.stats.labels_added += 1;
                    } else if !*add && has {
                        ctx.tx.remove_label(v, label).map_err(|e| {
                            QueryError::runtime(
                                ErrorClass::DatabaseError,
                                "UnsupportedLabelRemoval",
                                e.to_string(),
                            )
                        })?;
                        ctx.state.stats.labels_removed += 1;
                    }
                }
            }
        }
    }
    Ok(())
}

fn collect_deletions(
    value: &Value,
    nodes: &mut Vec<VertexId>,
    rels: &mut Vec<EdgeId>,
) -> Result<()> {
    match value {
        Value::Null => {}
        Value::Node(v) => nodes.push(*v),
        Value::Rel(e) => rels.push(*e),
        Value::Path(p) => {
            nodes.extend(&p.nodes);
            rels.extend(&p.rels);
        }
        Value::List(items) => {
            for item in items.iter() {
                collect_deletions(item, nodes, rels)?;
            }
        }
        other => {
            return Err(QueryError::type_error(format!(
                "DELETE expects nodes, relationships or paths, not {}",
                other.type_name()
            )));
        }
    }
    Ok(())
}

fn delete(
    nodes: Vec<VertexId>,
    rels: Vec<EdgeId>,
    detach: bool,
    ctx: &mut ExecContext,
) -> Result<()> {
    let mut done_rels = HashSet::new();
    for e in rels {
        if done_rels.insert(e) && ctx.tx.edge_exists(e)? {
            let rel_type = ctx.tx.edge_type(e)?;
            ctx.state.deleted_edge_types.insert(e, rel_type);
            ctx.tx.delete_edge(e)?;
            ctx.state.stats.relationships_deleted += 1;
        }
    }
    let mut done_nodes = HashSet::new();
    let unique: Vec<VertexId> = nodes
        .into_iter()
        .filter(|v| done_nodes.insert(*v))
        .collect();
    if !detach {
        for &v in &unique {
            if ctx.tx.vertex_exists(v)? && !ctx.tx.neighbors(v, None, Direction::Both)?.is_empty() {
                return Err(QueryError::runtime(
                    ErrorClass::ConstraintVerificationFailed,
                    "DeleteConnectedNode",
                    format!(
                        "cannot delete node {v}: it still has relationships (use DETACH DELETE)"
                    ),
                ));
            }
        }
    }
    for v in unique {
        if ctx.tx.vertex_exists(v)? {
            let rels = ctx.tx.neighbors(v, None, Direction::Both)?;
            let distinct: HashSet<EdgeId> = rels.iter().map(|(e, _)| *e).collect();
            ctx.state.stats.relationships_deleted += distinct.len() as u64;
            ctx.tx.delete_vertex(v, true)?;
            ctx.state.stats.nodes_deleted += 1;
        }
    }
    Ok(())
}

/// The labels a write takes for the row of `env`: the fixed ones, then each `$(expr)`'s
/// names, each once.
fn write_labels(
    labels: &WriteLabels,
    env: &mut Env,
    ctx: &mut ExecContext,
) -> Result<Vec<Arc<str>>> {
    let mut names = labels.fixed.clone();
    for e in &labels.dynamic {
        for name in dynamic_names(eval(e, env, ctx)?, true)? {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    Ok(names)
}
