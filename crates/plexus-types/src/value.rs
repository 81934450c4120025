//! Property values and their data types.
//!
//! `Value` is what a property holds and what crosses the API. Floats compare by total order
//! (`f64::total_cmp`) so values can be hashed and sorted; this matters for primary keys only,
//! Cypher comparison semantics are the query engine's business.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
    List(Arc<[Value]>),
    /// Keys sorted and unique.
    Map(Arc<[(Arc<str>, Value)]>),
    /// A date, time, datetime or duration (see [`TemporalValue`]).
    Temporal(TemporalValue),
}

/// A temporal value as stored. Only the representation lives here; the calendar and time zone
/// semantics (and the ISO 8601 text form) are the query engine's (`plexus_value::temporal`).
/// Days count from 1970-01-01, nanoseconds from midnight (local time), offsets are seconds
/// east of UTC; a datetime holds its local date and time, its offset and its zone name, if any.
/// Orders by variant, then field by field — a total order for keys, not Cypher's ordering.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TemporalValue {
    Date {
        days: i64,
    },
    LocalTime {
        nanos: i64,
    },
    Time {
        nanos: i64,
        offset_seconds: i32,
    },
    LocalDateTime {
        days: i64,
        nanos: i64,
    },
    DateTime {
        days: i64,
        nanos: i64,
        offset_seconds: i32,
        zone: Option<Arc<str>>,
    },
    /// Months, days and seconds are separate units; 0 ≤ nanos < 10⁹.
    Duration {
        months: i64,
        days: i64,
        seconds: i64,
        nanos: i64,
    },
}

/// The type of a declared column. `Bool`, `Int64` and `Float64` columns are stored unboxed;
/// the others hold values, and [`DataType::accepts`] is what keeps a `Date` column to dates
/// (checked on every write, see `plexus_storage::rows`). Persisted by [`DataType::name`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DataType {
    Bool,
    Int64,
    Float64,
    String,
    List,
    Map,
    /// A date (`TemporalValue::Date`).
    Date,
    /// An instant: a datetime with an offset or zone (`TemporalValue::DateTime`).
    Timestamp,
    /// A duration (`TemporalValue::Duration`).
    Interval,
    /// Any value; what undeclared properties have.
    Any,
}

impl DataType {
    pub fn name(self) -> &'static str {
        match self {
            DataType::Bool => "BOOL",
            DataType::Int64 => "INT64",
            DataType::Float64 => "FLOAT64",
            DataType::String => "STRING",
            DataType::List => "LIST",
            DataType::Map => "MAP",
            DataType::Date => "DATE",
            DataType::Timestamp => "TIMESTAMP",
            DataType::Interval => "INTERVAL",
            DataType::Any => "ANY",
        }
    }

    pub fn parse(name: &str) -> Option<DataType> {
        Some(match name.to_ascii_uppercase().as_str() {
            "BOOL" | "BOOLEAN" => DataType::Bool,
            "INT64" | "INT" | "INTEGER" => DataType::Int64,
            "FLOAT64" | "FLOAT" | "DOUBLE" => DataType::Float64,
            "STRING" => DataType::String,
            "LIST" => DataType::List,
            "MAP" => DataType::Map,
            "DATE" => DataType::Date,
            "TIMESTAMP" => DataType::Timestamp,
            "INTERVAL" => DataType::Interval,
            "ANY" => DataType::Any,
            _ => return None,
        })
    }

    /// Whether a non-null value of type `value` can be stored in a column of this type.
    pub fn accepts(self, value: &Value) -> bool {
        matches!(
            (self, value),
            (DataType::Any, _)
                | (_, Value::Null)
                | (DataType::Bool, Value::Bool(_))
                | (DataType::Int64, Value::Int(_))
                | (DataType::Float64, Value::Float(_))
                | (DataType::String, Value::String(_))
                | (DataType::List, Value::List(_))
                | (DataType::Map, Value::Map(_))
                | (DataType::Date, Value::Temporal(TemporalValue::Date { .. }))
                | (
                    DataType::Timestamp,
                    Value::Temporal(TemporalValue::DateTime { .. })
                )
                | (
                    DataType::Interval,
                    Value::Temporal(TemporalValue::Duration { .. })
                )
        )
    }
}

impl Value {
    pub fn data_type(&self) -> DataType {
        match self {
            Value::Null => DataType::Any,
            Value::Bool(_) => DataType::Bool,
            Value::Int(_) => DataType::Int64,
            Value::Float(_) => DataType::Float64,
            Value::String(_) => DataType::String,
            Value::List(_) => DataType::List,
            Value::Map(_) => DataType::Map,
            Value::Temporal(TemporalValue::Date { .. }) => DataType::Date,
            Value::Temporal(TemporalValue::DateTime { .. }) => DataType::Timestamp,
            Value::Temporal(TemporalValue::Duration { .. }) => DataType::Interval,
            // Times and local datetimes have no column type; undeclared properties hold them.
            Value::Temporal(_) => DataType::Any,
        }
    }

    pub fn string(text: &str) -> Value {
        Value::String(Arc::from(text))
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Int(_) => 2,
            Value::Float(_) => 3,
            Value::String(_) => 4,
            Value::List(_) => 5,
            Value::Map(_) => 6,
            Value::Temporal(_) => 7,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::string(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(Arc::from(v))
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::String(a), Value::String(b)) => a.cmp(b),
            (Value::List(a), Value::List(b)) => a.cmp(b),
            (Value::Map(a), Value::Map(b)) => a.cmp(b),
            (Value::Temporal(a), Value::Temporal(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}
impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Int(i) => i.hash(state),
            Value::Float(f) => f.to_bits().hash(state),
            Value::String(s) => s.hash(state),
            Value::List(items) => items.hash(state),
            Value::Map(entries) => entries.hash(state),
            Value::Temporal(t) => t.hash(state),
        }
    }
}

/// Prints in the openCypher TCK notation: strings single-quoted, lists `[1, 2]`, maps `{k: 1}`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_nan() => write!(f, "NaN"),
            Value::Float(x) if x.is_infinite() => {
                write!(f, "{}Inf", if *x < 0.0 { "-" } else { "" })
            }
            Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e16 => write!(f, "{x:.1}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::String(s) => write!(f, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Value::List(items) => {
                write!(f, "[")?;
                for (i, item) in items.iter().enumerate() {
                    write!(f, "{}{item}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, "]")
            }
            Value::Map(entries) => {
                write!(f, "{{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    write!(f, "{}{k}: {v}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, "}}")
            }
            Value::Temporal(t) => write!(f, "{t:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_uses_tck_notation() {
        let list = Value::List(Arc::from(vec![
            Value::Int(1),
            Value::string("a'b"),
            Value::Null,
        ]));
        assert_eq!(list.to_string(), "[1, 'a\\'b', null]");
        assert_eq!(Value::Float(2.0).to_string(), "2.0");
    }

    #[test]
    fn declared_types_accept_null_and_matching_values_only() {
        assert!(DataType::Int64.accepts(&Value::Int(3)));
        assert!(DataType::Int64.accepts(&Value::Null));
        assert!(!DataType::Int64.accepts(&Value::string("3")));
        assert!(DataType::Any.accepts(&Value::Float(1.5)));
    }
}
