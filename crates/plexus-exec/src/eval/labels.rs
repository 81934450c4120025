//! Dynamic labels and types (`n:$(expr)`, `[r:$any(expr)]`, `SET n:$(expr)`, Neo4j 5.26):
//! the value of `expr` as label names, and the label test on an entity.
//!
//! A dynamic label's value is a STRING or a LIST<STRING>; any other type is a `TypeError`. As
//! in Neo4j 5.26: a write refuses a null (`TypeError`) and an empty name (no label or type
//! can be called `''`); a read finds nothing for a null, a list holding a null, or `''`.

use super::{edge_type, entity_error};
use crate::context::ExecContext;
use plexus_value::error::{QueryError, Result};
use plexus_value::value::Value;
use std::sync::Arc;

/// The label names `value` gives; `write` refuses an empty name.
pub(crate) fn dynamic_names(value: Value, write: bool) -> Result<Vec<Arc<str>>> {
    let name = |item: &Value| match item {
        Value::String(s) if write && s.is_empty() => Err(QueryError::argument(
            "a label or relationship type name cannot be the empty string",
        )),
        Value::String(s) => Ok(Arc::from(&**s)),
        other => Err(QueryError::type_error(format!(
            "a dynamic label or type must be a STRING or a LIST<STRING>, not a list holding {}",
            other.type_name()
        ))),
    };
    match value {
        Value::String(_) => Ok(vec![name(&value)?]),
        Value::List(items) => items.iter().map(name).collect(),
        other => Err(QueryError::type_error(format!(
            "a dynamic label or type must be a STRING or a LIST<STRING>, not {}",
            other.type_name()
        ))),
    }
}

/// `entity:$(names)` (all of the names) or `entity:$any(names)` (one of them); null for a
/// null entity. A relationship carries its one type.
pub(super) fn dynamic_label_test(
    entity: Value,
    names: Value,
    any: bool,
    ctx: &mut ExecContext,
) -> Result<Value> {
    if entity.is_null() {
        return Ok(Value::Null);
    }
    let holds_null = match &names {
        Value::Null => true,
        Value::List(items) => items.iter().any(Value::is_null),
        _ => false,
    };
    if holds_null {
        return Ok(Value::Bool(false));
    }
    let names = dynamic_names(names, false)?;
    let matched = match entity {
        Value::Node(v) if any => {
            let mut found = false;
            for name in &names {
                if ctx.tx.vertex_has_labels(v, &[name]).map_err(entity_error)? {
                    found = true;
                    break;
                }
            }
            found
        }
        Value::Node(v) => ctx.tx.vertex_has_labels(v, &names).map_err(entity_error)?,
        Value::Rel(e) => {
            let rel_type = edge_type(e, ctx)?;
            let is_type = |name: &Arc<str>| **name == *rel_type;
            if any {
                names.iter().any(is_type)
            } else {
                names.iter().all(is_type)
            }
        }
        other => {
            return Err(QueryError::type_error(format!(
                "label predicates apply to nodes, not {}",
                other.type_name()
            )));
        }
    };
    Ok(Value::Bool(matched))
}
