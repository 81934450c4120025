//! Expression evaluation, one row at a time.
//!
//! An expression is evaluated against an [`Env`]: one row of a batch plus the local
//! variables of the comprehensions, quantifiers and `reduce`s being evaluated (an overlay,
//! so the batch is never copied). Graph access (properties, labels, neighbours for pattern
//! subqueries) goes through the context's transaction.
//!
//! NULL
//! ====
//! Almost every operator returns null when an operand is null; the exceptions are Cypher's
//! three-valued logic (`null OR true` is true, `null AND false` is false), `IS [NOT] NULL`,
//! `coalesce` and the list predicates, which follow the rules in their functions below.
//!
//! Evaluation is row-at-a-time inside each batch, except for node and relationship property
//! reads, which Project, Filter, Aggregate and Sort read for the whole batch first
//! (`prefetch`). Vectorised kernels for comparisons and arithmetic over whole columns are a
//! later optimisation.

pub mod aggregate;
pub mod functions;
pub(crate) mod labels;
pub mod prefetch;
mod types;
pub(crate) mod vector;

use crate::context::{Batch, ExecContext};
use plexus_cypher::ast::{ComparisonOp, Quantifier};
use plexus_plan::logical::{
    ArithOp, BExpr, MapProjectionItem, PathElement, StringOp, SubqueryKind,
};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::temporal_fns;
use plexus_value::value::{MapValue, PathValue, Value, compare, equals};
use std::cmp::Ordering;
use std::sync::Arc;

/// What a slot beyond the batch holds.
static NULL_VALUE: Value = Value::Null;

/// One row and the local variables bound on top of it.
pub struct Env<'a> {
    batch: &'a Batch,
    row: usize,
    locals: Vec<(usize, Value)>,
    /// Property columns read ahead for the batch (see `prefetch`).
    prefetched: Option<&'a prefetch::Prefetched>,
}

impl<'a> Env<'a> {
    pub fn new(batch: &'a Batch, row: usize) -> Self {
        Env {
            batch,
            row,
            locals: Vec::new(),
            prefetched: None,
        }
    }

    /// Row `row` of `batch`, whose properties in `prefetched` were read ahead.
    pub fn with_prefetched(
        batch: &'a Batch,
        row: usize,
        prefetched: &'a prefetch::Prefetched,
    ) -> Self {
        Env {
            prefetched: Some(prefetched),
            ..Env::new(batch, row)
        }
    }

    /// The prefetched value of `slot.key` on this row, unless a local shadows the slot.
    fn prefetched(&self, slot: usize, key: &str) -> Option<Value> {
        let prefetched = self.prefetched?;
        if self.locals.iter().any(|(s, _)| *s == slot) {
            return None;
        }
        prefetched.get(slot, key, self.row)
    }

    pub fn push_local(&mut self, slot: usize, value: Value) {
        self.locals.push((slot, value));
    }

    fn pop_local(&mut self) {
        self.locals.pop();
    }

    fn get(&self, slot: usize) -> Value {
        self.get_ref(slot).clone()
    }

    /// [`get`](Self::get) borrowed: a property of a map in a slot (`row.src` of `LOAD CSV`)
    /// is read without copying the map's handle.
    fn get_ref(&self, slot: usize) -> &Value {
        if let Some((_, v)) = self.locals.iter().rev().find(|(s, _)| *s == slot) {
            return v;
        }
        match slot < self.batch.width() {
            true => self.batch.get(slot, self.row),
            false => &NULL_VALUE,
        }
    }

    /// The row with the locals applied (the argument of a subquery).
    fn full_row(&self) -> Vec<Value> {
        let mut row = self.batch.row(self.row);
        for (slot, value) in &self.locals {
            if let Some(cell) = row.get_mut(*slot) {
                *cell = value.clone();
            }
        }
        row
    }
}

/// Whether a predicate value passes (only `true` does).
pub fn truthy(value: &Value) -> bool {
    matches!(value, Value::Bool(true))
}

fn boolean(value: Value, what: &str) -> Result<Option<bool>> {
    match value {
        Value::Bool(b) => Ok(Some(b)),
        Value::Null => Ok(None),
        other => Err(QueryError::type_error(format!(
            "{what} expects a boolean, not {}",
            other.type_name()
        ))),
    }
}

fn from_option(value: Option<bool>) -> Value {
    value.map_or(Value::Null, Value::Bool)
}

#[inline]
pub fn eval(e: &BExpr, env: &mut Env, ctx: &mut ExecContext) -> Result<Value> {
    // Slots and constants, by far the commonest, without the large frame of the full match.
    match e {
        BExpr::Slot(slot) => Ok(env.get(*slot)),
        BExpr::Const(v) => Ok(v.clone()),
        _ => eval_compound(e, env, ctx),
    }
}

/// [`eval`] of any expression.
fn eval_compound(e: &BExpr, env: &mut Env, ctx: &mut ExecContext) -> Result<Value> {
    Ok(match e {
        BExpr::Const(v) => v.clone(),
        BExpr::Param(name) => ctx.params.get(&**name).cloned().ok_or_else(|| {
            QueryError::runtime(
                ErrorClass::ParameterMissing,
                "MissingParameter",
                format!("expected a value for parameter ${name}"),
            )
        })?,
        BExpr::Slot(slot) => env.get(*slot),
        BExpr::Property(base, key) => {
            if let BExpr::Slot(slot) = **base {
                if let Some(value) = env.prefetched(slot, key) {
                    return Ok(value);
                }
                return property(env.get_ref(slot), key, ctx);
            }
            let base = eval(base, env, ctx)?;
            property(&base, key, ctx)?
        }
        BExpr::Index(base, index) => {
            let base = eval(base, env, ctx)?;
            let index = eval(index, env, ctx)?;
            index_value(&base, &index, ctx)?
        }
        BExpr::Slice(base, from, to) => {
            let base = eval(base, env, ctx)?;
            let from = match from {
                Some(e) => Some(eval(e, env, ctx)?),
                None => None,
            };
            let to = match to {
                Some(e) => Some(eval(e, env, ctx)?),
                None => None,
            };
            slice(&base, from, to)?
        }
        BExpr::HasLabels(base, labels) => match eval(base, env, ctx)? {
            Value::Null => Value::Null,
            Value::Node(v) => {
                Value::Bool(ctx.tx.vertex_has_labels(v, labels).map_err(entity_error)?)
            }
            Value::Rel(e) => {
                let rel_type = edge_type(e, ctx)?;
                Value::Bool(labels.iter().all(|l| **l == *rel_type))
            }
            other => {
                return Err(QueryError::type_error(format!(
                    "label predicates apply to nodes, not {}",
                    other.type_name()
                )));
            }
        },
        BExpr::LabelTest(base, test) => match eval(base, env, ctx)? {
            Value::Null => Value::Null,
            Value::Node(v) => {
                // The same reads as `n:A` (per label) and `labels(n)` (for `%`), so
                // SERIALIZABLE records exactly what the test looked at.
                let tx = std::cell::RefCell::new(&mut *ctx.tx);
                let matched = test
                    .matches(
                        &mut |label| tx.borrow_mut().vertex_has_labels(v, &[label]),
                        &mut || Ok(!tx.borrow_mut().vertex_labels(v)?.is_empty()),
                    )
                    .map_err(entity_error)?;
                Value::Bool(matched)
            }
            Value::Rel(e) => {
                let rel_type = edge_type(e, ctx)?;
                let matched: std::result::Result<bool, std::convert::Infallible> =
                    test.matches(&mut |label| Ok(*label == *rel_type), &mut || Ok(true));
                Value::Bool(matched.unwrap_or_else(|never| match never {}))
            }
            other => {
                return Err(QueryError::type_error(format!(
                    "label predicates apply to nodes, not {}",
                    other.type_name()
                )));
            }
        },
        BExpr::DynamicLabels { entity, names, any } => {
            let entity = eval(entity, env, ctx)?;
            let names = eval(names, env, ctx)?;
            labels::dynamic_label_test(entity, names, *any, ctx)?
        }
        BExpr::Not(inner) => from_option(boolean(eval(inner, env, ctx)?, "NOT")?.map(|b| !b)),
        BExpr::Negate(inner) => match eval(inner, env, ctx)? {
            Value::Null => Value::Null,
            Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(overflow)?),
            Value::Float(f) => Value::Float(-f),
            Value::Duration(d) => Value::Duration(d.negate()),
            other => {
                return Err(QueryError::type_error(format!(
                    "cannot negate {}",
                    other.type_name()
                )));
            }
        },
        BExpr::And(a, b) => {
            let a = boolean(eval(a, env, ctx)?, "AND")?;
            if a == Some(false) {
                return Ok(Value::Bool(false));
            }
            let b = boolean(eval(b, env, ctx)?, "AND")?;
            from_option(match (a, b) {
                (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            })
        }
        BExpr::Or(a, b) => {
            let a = boolean(eval(a, env, ctx)?, "OR")?;
            if a == Some(true) {
                return Ok(Value::Bool(true));
            }
            let b = boolean(eval(b, env, ctx)?, "OR")?;
            from_option(match (a, b) {
                (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            })
        }
        BExpr::Xor(a, b) => {
            let a = boolean(eval(a, env, ctx)?, "XOR")?;
            let b = boolean(eval(b, env, ctx)?, "XOR")?;
            from_option(match (a, b) {
                (Some(x), Some(y)) => Some(x != y),
                _ => None,
            })
        }
        BExpr::Arith(op, a, b) => {
            let a = eval(a, env, ctx)?;
            let b = eval(b, env, ctx)?;
            arith(*op, &a, &b)?
        }
        BExpr::StringOp(op, a, b) => {
            let a = eval(a, env, ctx)?;
            let b = eval(b, env, ctx)?;
            string_op(*op, &a, &b, ctx)?
        }
        BExpr::In(a, b) => {
            let a = eval(a, env, ctx)?;
            let b = eval(b, env, ctx)?;
            in_list(&a, &b)?
        }
        BExpr::Compare(operands, ops) => {
            let mut result = Some(true);
            let mut left = eval(&operands[0], env, ctx)?;
            for (op, operand) in ops.iter().zip(&operands[1..]) {
                let right = eval(operand, env, ctx)?;
                let this = comparison(*op, &left, &right);
                result = match (result, this) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                left = right;
            }
            from_option(result)
        }
        BExpr::IsNull(inner, negated) => {
            let is_null = eval(inner, env, ctx)?.is_null();
            Value::Bool(is_null != *negated)
        }
        BExpr::IsType(inner, ty, negated) => {
            let value = eval(inner, env, ctx)?;
            Value::Bool(types::matches(&value, ty) != *negated)
        }
        BExpr::List(items) => {
            let mut values = Vec::with_capacity(items.len());
            for item in items {
                values.push(eval(item, env, ctx)?);
            }
            Value::list(values)
        }
        BExpr::Map(entries) => {
            let mut map = MapValue::new();
            for (k, v) in entries {
                let value = eval(v, env, ctx)?;
                map.insert(k.clone(), value);
            }
            Value::map(map)
        }
        BExpr::MapProjection(base, items) => {
            let base = eval(base, env, ctx)?;
            if base.is_null() {
                return Ok(Value::Null);
            }
            let mut map = MapValue::new();
            for item in items {
                match item {
                    MapProjectionItem::Property(key) => {
                        let value = property(&base, key, ctx)?;
                        map.insert(key.clone(), value);
                    }
                    MapProjectionItem::AllProperties => {
                        for (k, v) in entity_properties(&base, ctx)? {
                            map.insert(k, v);
                        }
                    }
                    MapProjectionItem::Entry(key, e) => {
                        let value = eval(e, env, ctx)?;
                        map.insert(key.clone(), value);
                    }
                }
            }
            Value::map(map)
        }
        // `coalesce` is lazy, as in Neo4j: `coalesce(1, 5 / 0)` is 1, the arguments after the
        // first non-null one are never evaluated.
        BExpr::Call(name, args) if &**name == "coalesce" => {
            for a in args {
                let value = eval(a, env, ctx)?;
                if !value.is_null() {
                    return Ok(value);
                }
            }
            Value::Null
        }
        BExpr::Call(name, args) => {
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                values.push(eval(a, env, ctx)?);
            }
            functions::call(name, values, ctx)?
        }
        BExpr::Agg(_) => {
            return Err(QueryError::runtime(
                ErrorClass::SemanticError,
                "InvalidAggregation",
                "aggregate function outside an aggregation",
            ));
        }
        BExpr::Case {
            operand,
            alternatives,
            default,
        } => {
            let operand = match operand {
                Some(o) => Some(eval(o, env, ctx)?),
                None => None,
            };
            for (when, then) in alternatives {
                let w = eval(when, env, ctx)?;
                let hit = match &operand {
                    Some(o) => equals(o, &w) == Some(true),
                    None => truthy(&w),
                };
                if hit {
                    return eval(then, env, ctx);
                }
            }
            match default {
                Some(d) => eval(d, env, ctx)?,
                None => Value::Null,
            }
        }
        BExpr::ListComprehension {
            slot,
            list,
            predicate,
            projection,
        } => {
            let items = match list_of(eval(list, env, ctx)?, "a list comprehension")? {
                Some(items) => items,
                None => return Ok(Value::Null),
            };
            let mut out = Vec::new();
            for item in items.iter() {
                env.push_local(*slot, item.clone());
                let result = (|| -> Result<Option<Value>> {
                    if let Some(p) = predicate
                        && !truthy(&eval(p, env, ctx)?)
                    {
                        return Ok(None);
                    }
                    Ok(Some(match projection {
                        Some(p) => eval(p, env, ctx)?,
                        None => item.clone(),
                    }))
                })();
                env.pop_local();
                if let Some(v) = result? {
                    out.push(v);
                }
            }
            Value::list(out)
        }
        BExpr::Quantifier {
            quantifier,
            slot,
            list,
            predicate,
        } => {
            let items = match list_of(eval(list, env, ctx)?, "a quantifier")? {
                Some(items) => items,
                None => return Ok(Value::Null),
            };
            let (mut trues, mut falses, mut nulls) = (0usize, 0usize, 0usize);
            for item in items.iter() {
                env.push_local(*slot, item.clone());
                let result = eval(predicate, env, ctx);
                env.pop_local();
                match boolean(result?, "a quantifier predicate")? {
                    Some(true) => trues += 1,
                    Some(false) => falses += 1,
                    None => nulls += 1,
                }
            }
            let unknown = nulls > 0;
            from_option(match quantifier {
                Quantifier::Any => {
                    if trues > 0 {
                        Some(true)
                    } else if unknown {
                        None
                    } else {
                        Some(false)
                    }
                }
                Quantifier::All => {
                    if falses > 0 {
                        Some(false)
                    } else if unknown {
                        None
                    } else {
                        Some(true)
                    }
                }
                Quantifier::None => {
                    if trues > 0 {
                        Some(false)
                    } else if unknown {
                        None
                    } else {
                        Some(true)
                    }
                }
                Quantifier::Single => {
                    if trues > 1 {
                        Some(false)
                    } else if unknown {
                        None
                    } else {
                        Some(trues == 1)
                    }
                }
            })
        }
        BExpr::Reduce {
            accumulator,
            init,
            slot,
            list,
            expr,
        } => {
            let mut acc = eval(init, env, ctx)?;
            let items = match list_of(eval(list, env, ctx)?, "reduce")? {
                Some(items) => items,
                None => return Ok(Value::Null),
            };
            for item in items.iter() {
                env.push_local(*accumulator, acc.clone());
                env.push_local(*slot, item.clone());
                let result = eval(expr, env, ctx);
                env.pop_local();
                env.pop_local();
                acc = result?;
            }
            acc
        }
        BExpr::Subquery(sub) => {
            let mut op = match ctx.state.subplans.remove(&sub.id) {
                Some(op) => op,
                None => (ctx.state.build_subplan)(&sub.plan),
            };
            let argument = Arc::new(env.full_row());
            op.reset();
            let result = (|| -> Result<Value> {
                match sub.kind {
                    SubqueryKind::Exists => {
                        let batch = ctx.with_argument(argument.clone(), |ctx| op.next(ctx))?;
                        Ok(Value::Bool(batch.is_some()))
                    }
                    SubqueryKind::Collect(slot) => {
                        let mut out = Vec::new();
                        while let Some(batch) =
                            ctx.with_argument(argument.clone(), |ctx| op.next(ctx))?
                        {
                            out.extend(batch.cells(slot).cloned());
                            crate::context::check_materialized(out.len())?;
                        }
                        Ok(Value::list(out))
                    }
                    SubqueryKind::Count => {
                        let mut count = 0i64;
                        while let Some(batch) =
                            ctx.with_argument(argument.clone(), |ctx| op.next(ctx))?
                        {
                            count += batch.len() as i64;
                        }
                        Ok(Value::Int(count))
                    }
                }
            })();
            ctx.state.subplans.insert(sub.id, op);
            result?
        }
        BExpr::Path(elements) => build_path(elements, env, ctx)?,
    })
}

fn list_of(value: Value, what: &str) -> Result<Option<Arc<Vec<Value>>>> {
    match value {
        Value::Null => Ok(None),
        Value::List(items) => Ok(Some(items)),
        other => Err(QueryError::type_error(format!(
            "{what} expects a list, not {}",
            other.type_name()
        ))),
    }
}

fn overflow() -> QueryError {
    QueryError::runtime(
        ErrorClass::ArithmeticError,
        "IntegerOverflow",
        "integer arithmetic overflowed 64 bits",
    )
}

fn entity_error(error: plexus_types::Error) -> QueryError {
    match error {
        plexus_types::Error::NotFound(message) => {
            QueryError::runtime(ErrorClass::EntityNotFound, "DeletedEntityAccess", message)
        }
        other => other.into(),
    }
}

/// The type of a relationship, also of one deleted earlier in this query.
pub fn edge_type(e: plexus_types::EdgeId, ctx: &mut ExecContext) -> Result<String> {
    if let Some(t) = ctx.state.deleted_edge_types.get(&e) {
        return Ok(t.clone());
    }
    ctx.tx.edge_type(e).map_err(entity_error)
}

/// `base.key` for maps, nodes, relationships and temporal values.
pub fn property(base: &Value, key: &str, ctx: &mut ExecContext) -> Result<Value> {
    Ok(match base {
        Value::Null => Value::Null,
        Value::Map(map) => map.get(key).cloned().unwrap_or(Value::Null),
        Value::Node(v) => ctx
            .tx
            .vertex_property(*v, key)
            .map_err(entity_error)?
            .map_or(Value::Null, Value::from_storage),
        Value::Rel(e) => ctx
            .tx
            .edge_property(*e, key)
            .map_err(entity_error)?
            .map_or(Value::Null, Value::from_storage),
        Value::Temporal(_) | Value::Duration(_) => temporal_fns::component(base, key)?,
        other => {
            return Err(QueryError::type_error(format!(
                "cannot read property `{key}` of a {}",
                other.type_name()
            )));
        }
    })
}

/// All properties of a node, relationship or map.
pub fn entity_properties(value: &Value, ctx: &mut ExecContext) -> Result<MapValue> {
    let pairs = match value {
        Value::Node(v) => ctx.tx.vertex_properties(*v).map_err(entity_error)?,
        Value::Rel(e) => ctx.tx.edge_properties(*e).map_err(entity_error)?,
        Value::Map(map) => return Ok((**map).clone()),
        Value::Null => return Ok(MapValue::new()),
        other => {
            return Err(QueryError::type_error(format!(
                "{} has no properties",
                other.type_name()
            )));
        }
    };
    Ok(pairs
        .into_iter()
        .map(|(k, v)| (Arc::from(k.as_str()), Value::from_storage(v)))
        .collect())
}

fn index_value(base: &Value, index: &Value, ctx: &mut ExecContext) -> Result<Value> {
    Ok(match (base, index) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::List(items), Value::Int(i)) => {
            let len = items.len() as i64;
            let i = if *i < 0 { len + i } else { *i };
            if i < 0 || i >= len {
                Value::Null
            } else {
                items[i as usize].clone()
            }
        }
        (Value::List(_), other) => {
            return Err(QueryError::runtime(
                ErrorClass::TypeError,
                "ListElementAccessByNonInteger",
                format!("list index must be an integer, not {}", other.type_name()),
            ));
        }
        (Value::Map(_) | Value::Node(_) | Value::Rel(_), Value::String(key)) => {
            property(base, key, ctx)?
        }
        (Value::Map(_) | Value::Node(_) | Value::Rel(_), other) => {
            return Err(QueryError::runtime(
                ErrorClass::TypeError,
                "MapElementAccessByNonString",
                format!("map key must be a string, not {}", other.type_name()),
            ));
        }
        (other, _) => {
            return Err(QueryError::type_error(format!(
                "cannot index into a {}",
                other.type_name()
            )));
        }
    })
}

fn slice(base: &Value, from: Option<Value>, to: Option<Value>) -> Result<Value> {
    let items = match base {
        Value::Null => return Ok(Value::Null),
        Value::List(items) => items,
        other => {
            return Err(QueryError::type_error(format!(
                "cannot slice a {}",
                other.type_name()
            )));
        }
    };
    let len = items.len() as i64;
    let bound = |v: Option<Value>, default: i64| -> Result<Option<i64>> {
        match v {
            None => Ok(Some(default)),
            Some(Value::Null) => Ok(None),
            Some(Value::Int(i)) => Ok(Some(if i < 0 { (len + i).max(0) } else { i.min(len) })),
            Some(other) => Err(QueryError::type_error(format!(
                "list slice bounds must be integers, not {}",
                other.type_name()
            ))),
        }
    };
    let (Some(start), Some(end)) = (bound(from, 0)?, bound(to, len)?) else {
        return Ok(Value::Null);
    };
    if start >= end {
        return Ok(Value::list(Vec::new()));
    }
    Ok(Value::list(items[start as usize..end as usize].to_vec()))
}

pub(crate) fn comparison(op: ComparisonOp, a: &Value, b: &Value) -> Option<bool> {
    match op {
        ComparisonOp::Eq => equals(a, b),
        ComparisonOp::NotEq => equals(a, b).map(|x| !x),
        _ => {
            if a.is_null() || b.is_null() {
                return None;
            }
            let nan = |v: &Value| matches!(v, Value::Float(f) if f.is_nan());
            if (nan(a) || nan(b)) && a.as_f64().is_some() && b.as_f64().is_some() {
                return Some(false);
            }
            let o = compare(a, b)?;
            Some(match op {
                ComparisonOp::Lt => o == Ordering::Less,
                ComparisonOp::Gt => o == Ordering::Greater,
                ComparisonOp::Le => o != Ordering::Greater,
                ComparisonOp::Ge => o != Ordering::Less,
                ComparisonOp::Eq | ComparisonOp::NotEq => return None,
            })
        }
    }
}

fn in_list(item: &Value, list: &Value) -> Result<Value> {
    let items = match list {
        Value::Null => return Ok(Value::Null),
        Value::List(items) => items,
        other => {
            return Err(QueryError::type_error(format!(
                "IN expects a list, not {}",
                other.type_name()
            )));
        }
    };
    let mut unknown = false;
    for candidate in items.iter() {
        match equals(item, candidate) {
            Some(true) => return Ok(Value::Bool(true)),
            None => unknown = true,
            Some(false) => {}
        }
    }
    Ok(if unknown {
        Value::Null
    } else {
        Value::Bool(false)
    })
}

fn string_op(op: StringOp, a: &Value, b: &Value, ctx: &mut ExecContext) -> Result<Value> {
    let (Value::String(a), Value::String(b)) = (a, b) else {
        return Ok(Value::Null);
    };
    Ok(Value::Bool(match op {
        StringOp::StartsWith => a.starts_with(&**b),
        StringOp::EndsWith => a.ends_with(&**b),
        StringOp::Contains => a.contains(&**b),
        StringOp::Regex => {
            if !ctx.state.regexes.contains_key(b) {
                // Neo4j's class for an invalid pattern ("Invalid Regex"), raised when the
                // pattern is used.
                let re = regex::Regex::new(&format!("^(?s:{b})$")).map_err(|e| {
                    QueryError::runtime(
                        ErrorClass::SemanticError,
                        "InvalidRegex",
                        format!("invalid regular expression: {e}"),
                    )
                })?;
                ctx.state.regexes.insert(b.clone(), re);
            }
            ctx.state.regexes.get(b).is_some_and(|re| re.is_match(a))
        }
    }))
}

/// `a <op> b` for numbers, strings, lists and temporal values.
pub fn arith(op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    if let Some(result) = temporal_fns::arith(op, a, b) {
        return result;
    }
    let mismatch = || {
        QueryError::type_error(format!(
            "cannot apply {op:?} to {} and {}",
            a.type_name(),
            b.type_name()
        ))
    };
    Ok(match op {
        ArithOp::Add => match (a, b) {
            (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_add(*y).ok_or_else(overflow)?),
            (Value::String(x), Value::String(y)) => Value::from(format!("{x}{y}")),
            (Value::String(x), Value::Int(_) | Value::Float(_) | Value::Bool(_)) => {
                Value::from(format!("{x}{}", plexus_value::format::plain_text(b)))
            }
            (Value::Int(_) | Value::Float(_) | Value::Bool(_), Value::String(y)) => {
                Value::from(format!("{}{y}", plexus_value::format::plain_text(a)))
            }
            (Value::List(x), Value::List(y)) => {
                let mut items = (**x).clone();
                items.extend(y.iter().cloned());
                Value::list(items)
            }
            (Value::List(x), other) => {
                let mut items = (**x).clone();
                items.push(other.clone());
                Value::list(items)
            }
            (other, Value::List(y)) => {
                let mut items = vec![other.clone()];
                items.extend(y.iter().cloned());
                Value::list(items)
            }
            _ => float_op(a, b, |x, y| x + y).ok_or_else(mismatch)?,
        },
        ArithOp::Subtract => match (a, b) {
            (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_sub(*y).ok_or_else(overflow)?),
            _ => float_op(a, b, |x, y| x - y).ok_or_else(mismatch)?,
        },
        ArithOp::Multiply => match (a, b) {
            (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_mul(*y).ok_or_else(overflow)?),
            _ => float_op(a, b, |x, y| x * y).ok_or_else(mismatch)?,
        },
        // An integer zero divisor is an error even under a float dividend (`1.5 / 0`), as in
        // Neo4j; a float zero divisor gives an infinity or NaN.
        ArithOp::Divide => match (a, b) {
            (Value::Int(_) | Value::Float(_), Value::Int(0)) => {
                return Err(QueryError::runtime(
                    ErrorClass::ArithmeticError,
                    "DivisionByZero",
                    "division by zero",
                ));
            }
            (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_div(*y).ok_or_else(overflow)?),
            _ => float_op(a, b, |x, y| x / y).ok_or_else(mismatch)?,
        },
        ArithOp::Modulo => match (a, b) {
            (Value::Int(_), Value::Int(0)) => {
                return Err(QueryError::runtime(
                    ErrorClass::ArithmeticError,
                    "DivisionByZero",
                    "modulo by zero",
                ));
            }
            (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_rem(*y).unwrap_or(0)),
            _ => float_op(a, b, |x, y| x % y).ok_or_else(mismatch)?,
        },
        ArithOp::Power => float_op(a, b, f64::powf).ok_or_else(mismatch)?,
    })
}

fn float_op(a: &Value, b: &Value, f: impl Fn(f64, f64) -> f64) -> Option<Value> {
    Some(Value::Float(f(a.as_f64()?, b.as_f64()?)))
}

fn build_path(elements: &[PathElement], env: &mut Env, ctx: &mut ExecContext) -> Result<Value> {
    let mut path = PathValue {
        nodes: Vec::new(),
        rels: Vec::new(),
    };
    for element in elements {
        match element {
            PathElement::Node(slot) => match env.get(*slot) {
                Value::Node(v) => {
                    if path.nodes.last() != Some(&v) || path.nodes.len() == path.rels.len() {
                        path.nodes.push(v);
                    }
                }
                _ => return Ok(Value::Null),
            },
            PathElement::Rel(slot) => match env.get(*slot) {
                Value::Rel(e) => path.rels.push(e),
                _ => return Ok(Value::Null),
            },
            PathElement::Rels(slot) => match env.get(*slot) {
                Value::List(items) => {
                    for item in items.iter() {
                        let Value::Rel(e) = item else {
                            return Ok(Value::Null);
                        };
                        let Some(&current) = path.nodes.last() else {
                            return Ok(Value::Null);
                        };
                        let (src, dst) = ctx.tx.edge_endpoints(*e).map_err(entity_error)?;
                        let next = if src == current { dst } else { src };
                        path.rels.push(*e);
                        path.nodes.push(next);
                    }
                }
                _ => return Ok(Value::Null),
            },
        }
    }
    if path.nodes.len() != path.rels.len() + 1 {
        return Ok(Value::Null);
    }
    Ok(Value::Path(Arc::new(path)))
}
