//! Values between Cypher and Python.
//!
//! RESULTS (Cypher → Python)
//! =========================
//! ```text
//!   null, BOOLEAN, INTEGER, FLOAT, STRING   None, bool, int, float, str
//!   LIST, MAP                               list, dict
//!   NODE, RELATIONSHIP, PATH                plexusdb.Node, .Relationship, .Path
//!   DATE                                    datetime.date           (years 1..=9999)
//!   LOCAL TIME, TIME                        datetime.time           (naive / fixed offset)
//!   LOCAL DATETIME                          datetime.datetime       (naive)
//!   DATETIME with an offset                 datetime.datetime       (datetime.timezone)
//!   DATETIME with a named zone              datetime.datetime       (zoneinfo.ZoneInfo, when it
//!                                                                    gives the same offset)
//!   DURATION without months                 datetime.timedelta
//!   anything else temporal                  plexusdb.Temporal / plexusdb.Duration
//! ```
//! "Anything else" is what Python's types cannot hold exactly: nanoseconds that are not whole
//! microseconds, years outside 1..=9999, a zone `zoneinfo` does not know or resolves to
//! another offset, and durations with months (a month has no fixed length). Note that a
//! timedelta adds a duration's days and seconds together; Cypher keeps them apart (a day is
//! not always 86 400 s across a DST change), so `duration({seconds: 86400})` comes back as
//! `timedelta(days=1)`, which as a parameter is `duration({days: 1})`.
//!
//! PARAMETERS (Python → Cypher)
//! ============================
//! The reverse of the table, plus `tuple` as a list and any object with `__index__` (numpy
//! integers) as an INTEGER. An aware `datetime` becomes a DATETIME with its UTC offset, and
//! keeps the zone name when its tzinfo is a `zoneinfo.ZoneInfo`; an aware `time` a TIME; a
//! naive one a LOCAL DATETIME / LOCAL TIME. Map keys must be strings, integers must fit in 64
//! bits, and lists and maps nest at most [`MAX_PARAMETER_DEPTH`] deep (which also stops a list
//! that contains itself). Anything else is a `TypeError` naming the type.

use crate::types::{Duration, Node, Path, Relationship, Temporal};
use plexus::temporal::{
    Duration as EngineDuration, Temporal as EngineTemporal, civil_from_days, days_from_civil,
};
use plexus::{CypherValue as Value, CypherValueMap};
use plexus::{EdgeId, QueryResult, VertexId};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDate, PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess, PyDict, PyFloat, PyInt,
    PyList, PyString, PyTime, PyTimeAccess, PyTuple, PyTzInfo, PyTzInfoAccess,
};
use std::sync::Arc;

/// How deep lists and maps may nest in one parameter.
pub(crate) const MAX_PARAMETER_DEPTH: usize = 64;

const NANOS_PER_MICRO: i64 = 1_000;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_DAY: i64 = SECONDS_PER_DAY * NANOS_PER_SECOND;
/// The years `datetime.date` can hold.
const PYTHON_YEARS: std::ops::RangeInclusive<i64> = 1..=9_999;

// ---- ids ---------------------------------------------------------------------------------------

/// The (table, offset) pair an integer id names; ids are non-negative.
fn split_key(id: i64, what: &str) -> PyResult<(u32, u32)> {
    if id < 0 {
        return Err(PyValueError::new_err(format!(
            "{what} id {id} is negative; ids are what id() returns"
        )));
    }
    Ok(((id >> 32) as u32, id as u32))
}

/// The vertex an integer id (or a `Node`) names.
pub(crate) fn vertex_of(obj: &Bound<'_, PyAny>) -> PyResult<VertexId> {
    if let Ok(node) = obj.cast::<Node>() {
        return vertex_of(&node.get().id.into_pyobject(obj.py())?.into_any());
    }
    let id: i64 = obj
        .extract()
        .map_err(|_| PyTypeError::new_err("expected a plexusdb.Node or an integer node id"))?;
    let (table, offset) = split_key(id, "node")?;
    Ok(VertexId::new(table, offset))
}

// ---- Cypher → Python ---------------------------------------------------------------------------

/// A result value as a Python object; graph elements take their data from `result`.
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    value: &Value,
    result: &QueryResult,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::List(items) => {
            let items: Vec<_> = items
                .iter()
                .map(|item| to_python(py, item, result))
                .collect::<PyResult<_>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Map(entries) => map_to_python(py, entries, result)?.into_any(),
        Value::Node(v) => node(py, *v, result)?.into_any(),
        Value::Rel(e) => relationship(py, *e, result)?.into_any(),
        Value::Path(p) => {
            let nodes: Vec<_> = p
                .nodes
                .iter()
                .map(|v| node(py, *v, result))
                .collect::<PyResult<_>>()?;
            let rels: Vec<_> = p
                .rels
                .iter()
                .map(|e| relationship(py, *e, result))
                .collect::<PyResult<_>>()?;
            let path = Path {
                nodes: PyTuple::new(py, nodes)?.unbind(),
                relationships: PyTuple::new(py, rels)?.unbind(),
            };
            Bound::new(py, path)?.into_any()
        }
        Value::Temporal(t) => match temporal_to_python(py, t)? {
            Some(exact) => exact,
            None => Bound::new(py, Temporal { value: t.clone() })?.into_any(),
        },
        Value::Duration(d) => match duration_to_python(py, d)? {
            Some(exact) => exact,
            None => Bound::new(py, Duration { value: *d })?.into_any(),
        },
    })
}

/// A map of Cypher values as a dict.
pub(crate) fn map_to_python<'py>(
    py: Python<'py>,
    entries: &CypherValueMap,
    result: &QueryResult,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in entries {
        dict.set_item(&**k, to_python(py, v, result)?)?;
    }
    Ok(dict)
}

/// Stored properties (as the snapshot reads them) as a dict.
pub(crate) fn properties_to_python<'py>(
    py: Python<'py>,
    properties: Vec<(String, plexus::Value)>,
) -> PyResult<Bound<'py, PyDict>> {
    let empty = QueryResult::default();
    let dict = PyDict::new(py);
    for (k, v) in properties {
        dict.set_item(k, to_python(py, &Value::from_storage(v), &empty)?)?;
    }
    Ok(dict)
}

fn node<'py>(py: Python<'py>, v: VertexId, result: &QueryResult) -> PyResult<Bound<'py, Node>> {
    let (labels, properties) = match result.nodes.get(&v) {
        Some(data) => (
            PyTuple::new(py, &data.labels)?,
            map_to_python(py, &data.properties, result)?,
        ),
        None => (PyTuple::empty(py), PyDict::new(py)),
    };
    Bound::new(
        py,
        Node {
            id: v.cypher_id(),
            labels: labels.unbind(),
            properties: properties.unbind(),
        },
    )
}

fn relationship<'py>(
    py: Python<'py>,
    e: EdgeId,
    result: &QueryResult,
) -> PyResult<Bound<'py, Relationship>> {
    let rel = match result.relationships.get(&e) {
        Some(data) => Relationship {
            id: e.cypher_id(),
            rel_type: data.rel_type.clone(),
            start: data.src.cypher_id(),
            end: data.dst.cypher_id(),
            properties: map_to_python(py, &data.properties, result)?.unbind(),
        },
        // Every relationship a row mentions is materialised; this is only a fallback.
        None => Relationship {
            id: e.cypher_id(),
            rel_type: String::new(),
            start: -1,
            end: -1,
            properties: PyDict::new(py).unbind(),
        },
    };
    Bound::new(py, rel)
}

/// (hour, minute, second, microsecond) of a time of day, if it is whole microseconds.
fn clock(nanos: i64) -> Option<(u8, u8, u8, u32)> {
    if !(0..NANOS_PER_DAY).contains(&nanos) || nanos % NANOS_PER_MICRO != 0 {
        return None;
    }
    let seconds = nanos / NANOS_PER_SECOND;
    let micros = (nanos % NANOS_PER_SECOND) / NANOS_PER_MICRO;
    Some((
        (seconds / 3600) as u8,
        (seconds / 60 % 60) as u8,
        (seconds % 60) as u8,
        micros as u32,
    ))
}

/// (year, month, day) of a day number, if `datetime.date` can hold it.
fn calendar(days: i64) -> Option<(i32, u8, u8)> {
    let (y, m, d) = civil_from_days(days);
    PYTHON_YEARS
        .contains(&y)
        .then_some((y as i32, m as u8, d as u8))
}

fn fixed_offset<'py>(py: Python<'py>, offset_seconds: i32) -> PyResult<Bound<'py, PyTzInfo>> {
    PyTzInfo::fixed_offset(py, PyDelta::new(py, 0, offset_seconds, 0, true)?)
}

fn offset_seconds(delta: &Bound<'_, PyDelta>) -> i64 {
    i64::from(delta.get_days()) * SECONDS_PER_DAY + i64::from(delta.get_seconds())
}

/// The exact `datetime` equivalent of a temporal value, or `None` (see the module doc).
fn temporal_to_python<'py>(
    py: Python<'py>,
    t: &EngineTemporal,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(match t {
        EngineTemporal::Date(days) => match calendar(*days) {
            Some((y, m, d)) => Some(PyDate::new(py, y, m, d)?.into_any()),
            None => None,
        },
        EngineTemporal::LocalTime(nanos) => match clock(*nanos) {
            Some((h, mi, s, us)) => Some(PyTime::new(py, h, mi, s, us, None)?.into_any()),
            None => None,
        },
        EngineTemporal::Time { nanos, offset } => match clock(*nanos) {
            Some((h, mi, s, us)) => {
                let tz = fixed_offset(py, *offset)?;
                Some(PyTime::new(py, h, mi, s, us, Some(&tz))?.into_any())
            }
            None => None,
        },
        EngineTemporal::LocalDateTime { days, nanos } => match (calendar(*days), clock(*nanos)) {
            (Some((y, m, d)), Some((h, mi, s, us))) => {
                Some(PyDateTime::new(py, y, m, d, h, mi, s, us, None)?.into_any())
            }
            _ => None,
        },
        EngineTemporal::DateTime {
            days,
            nanos,
            offset,
            zone,
        } => {
            let (Some((y, m, d)), Some((h, mi, s, us))) = (calendar(*days), clock(*nanos)) else {
                return Ok(None);
            };
            let Some(zone) = zone else {
                let tz = fixed_offset(py, *offset)?;
                return Ok(Some(
                    PyDateTime::new(py, y, m, d, h, mi, s, us, Some(&tz))?.into_any(),
                ));
            };
            let Ok(tz) = PyTzInfo::timezone(py, &**zone) else {
                return Ok(None);
            };
            // A local time in a DST overlap exists twice; `fold` picks the one with our offset.
            for fold in [false, true] {
                let dt = PyDateTime::new_with_fold(py, y, m, d, h, mi, s, us, Some(&tz), fold)?;
                let utc_offset = dt.call_method0("utcoffset")?;
                if let Ok(delta) = utc_offset.cast::<PyDelta>()
                    && offset_seconds(delta) == i64::from(*offset)
                {
                    return Ok(Some(dt.into_any()));
                }
            }
            None
        }
    })
}

/// A duration as a `timedelta`, when it has no months and whole microseconds.
fn duration_to_python<'py>(
    py: Python<'py>,
    d: &EngineDuration,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if d.months != 0 || d.nanos % NANOS_PER_MICRO != 0 {
        return Ok(None);
    }
    let days = d.days.saturating_add(d.seconds.div_euclid(SECONDS_PER_DAY));
    let (Ok(days), Ok(seconds)) = (
        i32::try_from(days),
        i32::try_from(d.seconds.rem_euclid(SECONDS_PER_DAY)),
    ) else {
        return Ok(None);
    };
    let micros = (d.nanos / NANOS_PER_MICRO) as i32;
    // timedelta holds ±999 999 999 days; beyond that the wrapper keeps the value.
    Ok(PyDelta::new(py, days, seconds, micros, true)
        .ok()
        .map(Bound::into_any))
}

// ---- Python → Cypher ---------------------------------------------------------------------------

/// A Python object as a parameter value nested `depth` lists or maps deep (see PARAMETERS in
/// the module doc).
fn from_python_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_PARAMETER_DEPTH {
        return Err(PyValueError::new_err(format!(
            "parameter nests lists and dicts deeper than {MAX_PARAMETER_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return integer(obj);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::string(s.to_str()?));
    }
    if let Ok(dt) = obj.cast::<PyDateTime>() {
        return datetime_from_python(dt);
    }
    if let Ok(date) = obj.cast::<PyDate>() {
        let days = days_from_civil(
            i64::from(date.get_year()),
            i64::from(date.get_month()),
            i64::from(date.get_day()),
        );
        return Ok(Value::Temporal(EngineTemporal::Date(days)));
    }
    if let Ok(time) = obj.cast::<PyTime>() {
        let nanos = time_nanos(time);
        return Ok(Value::Temporal(match utc_offset(obj)? {
            Some(offset) => EngineTemporal::Time { nanos, offset },
            None => EngineTemporal::LocalTime(nanos),
        }));
    }
    if let Ok(delta) = obj.cast::<PyDelta>() {
        return Ok(Value::Duration(EngineDuration::new(
            0,
            i64::from(delta.get_days()),
            i64::from(delta.get_seconds()),
            i64::from(delta.get_microseconds()) * NANOS_PER_MICRO,
        )));
    }
    if let Ok(node) = obj.cast::<Node>() {
        return Ok(Value::Node(vertex_of(node.as_any())?));
    }
    if let Ok(rel) = obj.cast::<Relationship>() {
        let (table, offset) = split_key(rel.get().id, "relationship")?;
        return Ok(Value::Rel(EdgeId::new(table, offset)));
    }
    if let Ok(d) = obj.cast::<Duration>() {
        return Ok(Value::Duration(d.get().value));
    }
    if let Ok(t) = obj.cast::<Temporal>() {
        return Ok(Value::Temporal(t.get().value.clone()));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return list_from_python(list.iter(), depth);
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return list_from_python(tuple.iter(), depth);
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        return Ok(Value::map(map_from_python(dict, depth)?));
    }
    if obj.hasattr("__index__")? {
        return integer(&obj.call_method0("__index__")?);
    }
    Err(PyTypeError::new_err(format!(
        "a parameter cannot be of type {}: use None, bool, int, float, str, list, tuple, dict, \
         datetime types, plexusdb.Node or plexusdb.Duration",
        obj.get_type().name()?
    )))
}

fn integer(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    obj.extract::<i64>().map(Value::Int).map_err(|_| {
        PyValueError::new_err(format!(
            "integer parameter {obj} does not fit in 64 bits (Cypher INTEGER)"
        ))
    })
}

fn list_from_python<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    depth: usize,
) -> PyResult<Value> {
    let values = items
        .map(|item| from_python_at(&item, depth + 1))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Value::list(values))
}

/// A dict with string keys as a Cypher map.
pub(crate) fn map_from_python(dict: &Bound<'_, PyDict>, depth: usize) -> PyResult<CypherValueMap> {
    let mut map = CypherValueMap::new();
    for (k, v) in dict.iter() {
        let key = k.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "parameter map keys must be str, not {}",
                k.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        map.insert(Arc::from(key.to_str()?), from_python_at(&v, depth + 1)?);
    }
    Ok(map)
}

fn time_nanos(t: &impl PyTimeAccess) -> i64 {
    let seconds =
        (i64::from(t.get_hour()) * 60 + i64::from(t.get_minute())) * 60 + i64::from(t.get_second());
    seconds * NANOS_PER_SECOND + i64::from(t.get_microsecond()) * NANOS_PER_MICRO
}

/// `obj.utcoffset()` in whole seconds (`None` for naive values).
fn utc_offset(obj: &Bound<'_, PyAny>) -> PyResult<Option<i32>> {
    let offset = obj.call_method0("utcoffset")?;
    if offset.is_none() {
        return Ok(None);
    }
    let delta = offset.cast::<PyDelta>()?;
    if delta.get_microseconds() != 0 {
        return Err(PyValueError::new_err(
            "UTC offsets must be whole seconds in Cypher",
        ));
    }
    // |offset| < 24 h, which Python enforces.
    Ok(Some(offset_seconds(delta) as i32))
}

fn datetime_from_python(dt: &Bound<'_, PyDateTime>) -> PyResult<Value> {
    let days = days_from_civil(
        i64::from(dt.get_year()),
        i64::from(dt.get_month()),
        i64::from(dt.get_day()),
    );
    let nanos = time_nanos(dt);
    let Some(offset) = utc_offset(dt.as_any())? else {
        return Ok(Value::Temporal(EngineTemporal::LocalDateTime {
            days,
            nanos,
        }));
    };
    // A zoneinfo.ZoneInfo names its zone in `key`; fixed offsets have none.
    let zone = match dt.get_tzinfo() {
        Some(tz) if tz.hasattr("key")? => tz
            .getattr("key")?
            .extract::<String>()
            .ok()
            .map(|k| Arc::from(k.as_str())),
        _ => None,
    };
    Ok(Value::Temporal(EngineTemporal::DateTime {
        days,
        nanos,
        offset,
        zone,
    }))
}
