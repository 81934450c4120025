//! Type predicates: whether a value is of a Cypher type (`x IS :: INTEGER NOT NULL`).
//!
//! Null is a value of every type not marked `NOT NULL` — except `NOTHING`, which has no
//! values — and the only value of `NULL`. `LIST<T>` holds the lists whose every element is of
//! type `T` (so `[]` is of every list type, and `[1, null]` is a `LIST<INTEGER>` but not a
//! `LIST<INTEGER NOT NULL>`); a union holds what any member holds. `PROPERTY VALUE` is what a
//! property can store: a boolean, string, integer, float, temporal value or duration, or a
//! list of non-null values of one of those kinds. Plexus has no points, so `POINT` holds only
//! null.

use plexus_cypher::ast::{CypherType, TypeKind};
use plexus_value::temporal::Temporal;
use plexus_value::value::Value;

/// Whether `value` is of type `ty` (see the module doc).
pub(crate) fn matches(value: &Value, ty: &CypherType) -> bool {
    if value.is_null() {
        return !ty.not_null
            && match &ty.kind {
                TypeKind::Nothing => false,
                TypeKind::Union(members) => members.iter().any(|m| matches(value, m)),
                _ => true,
            };
    }
    match &ty.kind {
        TypeKind::Any => true,
        TypeKind::Nothing | TypeKind::Null | TypeKind::Point => false,
        TypeKind::Boolean => matches!(value, Value::Bool(_)),
        TypeKind::String => matches!(value, Value::String(_)),
        TypeKind::Integer => matches!(value, Value::Int(_)),
        TypeKind::Float => matches!(value, Value::Float(_)),
        TypeKind::Date => matches!(value, Value::Temporal(Temporal::Date(_))),
        TypeKind::LocalTime => matches!(value, Value::Temporal(Temporal::LocalTime(_))),
        TypeKind::ZonedTime => matches!(value, Value::Temporal(Temporal::Time { .. })),
        TypeKind::LocalDateTime => {
            matches!(value, Value::Temporal(Temporal::LocalDateTime { .. }))
        }
        TypeKind::ZonedDateTime => matches!(value, Value::Temporal(Temporal::DateTime { .. })),
        TypeKind::Duration => matches!(value, Value::Duration(_)),
        TypeKind::Node => matches!(value, Value::Node(_)),
        TypeKind::Relationship => matches!(value, Value::Rel(_)),
        TypeKind::Map => matches!(value, Value::Map(_)),
        TypeKind::Path => matches!(value, Value::Path(_)),
        TypeKind::PropertyValue => property_value(value),
        TypeKind::List(inner) => match value {
            Value::List(items) => items.iter().all(|item| matches(item, inner)),
            _ => false,
        },
        TypeKind::Union(members) => members.iter().any(|m| matches(value, m)),
    }
}

/// The kind of a value a property can store on its own, or `None`.
fn scalar_kind(value: &Value) -> Option<u8> {
    Some(match value {
        Value::Bool(_) => 0,
        Value::String(_) => 1,
        Value::Int(_) => 2,
        Value::Float(_) => 3,
        Value::Temporal(Temporal::Date(_)) => 4,
        Value::Temporal(Temporal::LocalTime(_)) => 5,
        Value::Temporal(Temporal::Time { .. }) => 6,
        Value::Temporal(Temporal::LocalDateTime { .. }) => 7,
        Value::Temporal(Temporal::DateTime { .. }) => 8,
        Value::Duration(_) => 9,
        _ => return None,
    })
}

fn property_value(value: &Value) -> bool {
    match value {
        Value::List(items) => {
            let mut kinds = items.iter().map(scalar_kind);
            match kinds.next() {
                None => true,
                Some(None) => false,
                Some(Some(first)) => kinds.all(|k| k == Some(first)),
            }
        }
        other => scalar_kind(other).is_some(),
    }
}
