//! The Python classes that stand for Cypher values with no built-in Python equivalent.
//!
//! GRAPH ELEMENTS
//! ==============
//! `Node`, `Relationship` and `Path` are immutable snapshots of what the query returned (a
//! result is materialised: the labels and properties were copied when the statement ran).
//! Ids are the integers Cypher's `id()` returns (`table << 32 | offset`), so
//! `conn.execute("MATCH (n) WHERE id(n) = $id ...", {"id": node.id})` finds the node again, and
//! a `Node` is itself accepted as a parameter. Two elements are equal when their ids are.
//! `element_id` is the text Cypher's `elementId()` returns and the Neo4j drivers show
//! (`v3:17`, `e1:4`), so `MATCH (n) WHERE elementId(n) = $e` finds the node too.
//!
//! TEMPORAL VALUES WITHOUT AN EXACT PYTHON TWIN
//! ============================================
//! Cypher temporals convert to `datetime` types when the conversion loses nothing (see
//! `convert`). The others — nanosecond precision, years outside 1..=9999, a named zone that
//! Python's `zoneinfo` cannot reproduce — become a `Temporal`, which keeps the exact engine
//! value (so it round-trips as a parameter) and prints as ISO 8601. Durations with a month
//! part or sub-microsecond precision become a `Duration` (months, days, seconds, nanoseconds,
//! as Cypher keeps them apart); `Duration(...)` can also be built to pass such a parameter.

use plexus::CypherValue as Value;
use plexus::temporal::{Duration as EngineDuration, Temporal as EngineTemporal};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// A node: `id`, `labels` (tuple of str), `properties` (dict).
#[pyclass(module = "plexusdb", frozen)]
pub struct Node {
    #[pyo3(get)]
    pub(crate) id: i64,
    #[pyo3(get)]
    pub(crate) labels: Py<PyTuple>,
    #[pyo3(get)]
    pub(crate) properties: Py<PyDict>,
}

/// A relationship: `id`, `type`, `start` and `end` (node ids), `properties` (dict).
#[pyclass(module = "plexusdb", frozen)]
pub struct Relationship {
    #[pyo3(get)]
    pub(crate) id: i64,
    #[pyo3(get, name = "type")]
    pub(crate) rel_type: String,
    #[pyo3(get)]
    pub(crate) start: i64,
    #[pyo3(get)]
    pub(crate) end: i64,
    #[pyo3(get)]
    pub(crate) properties: Py<PyDict>,
}

/// A path: `nodes` (tuple of Node, one more than relationships) and `relationships`;
/// `relationships[i]` joins `nodes[i]` and `nodes[i + 1]` in either direction.
#[pyclass(module = "plexusdb", frozen)]
pub struct Path {
    #[pyo3(get)]
    pub(crate) nodes: Py<PyTuple>,
    #[pyo3(get)]
    pub(crate) relationships: Py<PyTuple>,
}

/// A Cypher duration as the engine keeps it: months, days, seconds and nanoseconds.
#[pyclass(module = "plexusdb", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct Duration {
    pub(crate) value: EngineDuration,
}

/// A Cypher temporal value with no exact `datetime` equivalent; `kind` is its Cypher type
/// (`DATE`, `LOCAL TIME`, `TIME`, `LOCAL DATETIME`, `DATETIME`), `str()` its ISO 8601 text.
#[pyclass(module = "plexusdb", frozen)]
pub struct Temporal {
    pub(crate) value: EngineTemporal,
}

fn repr(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(obj.repr()?.to_string())
}

#[pymethods]
impl Node {
    /// The element id, as Cypher's `elementId(n)` and the Neo4j drivers show it (`v3:17`).
    #[getter]
    fn element_id(&self) -> String {
        plexus::VertexId::new((self.id >> 32) as u32, self.id as u32).to_string()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.properties.bind(py).as_any().get_item(key)
    }

    /// The property `key`, or `default` when the node has none.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.properties.bind(py).get_item(key)?.or(default))
    }

    /// `{"id": ..., "labels": [...], "properties": {...}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("id", self.id)?;
        dict.set_item("labels", self.labels.bind(py).to_list())?;
        dict.set_item("properties", self.properties.bind(py).copy()?)?;
        Ok(dict)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Node>().is_ok_and(|o| o.get().id == self.id)
    }

    fn __hash__(&self) -> i64 {
        self.id
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Node(id={}, labels={}, properties={})",
            self.id,
            repr(self.labels.bind(py))?,
            repr(self.properties.bind(py))?
        ))
    }
}

#[pymethods]
impl Relationship {
    /// The element id, as Cypher's `elementId(r)` and the Neo4j drivers show it (`e1:4`).
    #[getter]
    fn element_id(&self) -> String {
        plexus::EdgeId::new((self.id >> 32) as u32, self.id as u32).to_string()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.properties.bind(py).as_any().get_item(key)
    }

    /// The property `key`, or `default` when the relationship has none.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.properties.bind(py).get_item(key)?.or(default))
    }

    /// `{"id", "type", "start", "end", "properties"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("id", self.id)?;
        dict.set_item("type", &self.rel_type)?;
        dict.set_item("start", self.start)?;
        dict.set_item("end", self.end)?;
        dict.set_item("properties", self.properties.bind(py).copy()?)?;
        Ok(dict)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Relationship>()
            .is_ok_and(|o| o.get().id == self.id)
    }

    fn __hash__(&self) -> i64 {
        self.id
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Relationship(id={}, type={:?}, start={}, end={}, properties={})",
            self.id,
            self.rel_type,
            self.start,
            self.end,
            repr(self.properties.bind(py))?
        ))
    }
}

#[pymethods]
impl Path {
    /// The number of relationships.
    fn __len__(&self, py: Python<'_>) -> usize {
        self.relationships.bind(py).len()
    }

    /// `{"nodes": [...], "relationships": [...]}` with elements as dicts.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let dicts = |items: &Py<PyTuple>| -> PyResult<Vec<Bound<'py, PyAny>>> {
            items
                .bind(py)
                .iter()
                .map(|item| item.call_method0("to_dict"))
                .collect()
        };
        dict.set_item("nodes", dicts(&self.nodes)?)?;
        dict.set_item("relationships", dicts(&self.relationships)?)?;
        Ok(dict)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<Path>() else {
            return Ok(false);
        };
        let py = other.py();
        let other = other.get();
        Ok(self.nodes.bind(py).eq(other.nodes.bind(py))?
            && self
                .relationships
                .bind(py)
                .eq(other.relationships.bind(py))?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Path(nodes={}, relationships={})",
            repr(self.nodes.bind(py))?,
            repr(self.relationships.bind(py))?
        ))
    }
}

#[pymethods]
impl Duration {
    /// Fields may be negative; seconds and nanoseconds are normalised (0 ≤ nanoseconds < 10⁹).
    #[new]
    #[pyo3(signature = (months=0, days=0, seconds=0, nanoseconds=0))]
    fn new(months: i64, days: i64, seconds: i64, nanoseconds: i64) -> Self {
        Duration {
            value: EngineDuration::new(months, days, seconds, nanoseconds),
        }
    }

    #[getter]
    fn months(&self) -> i64 {
        self.value.months
    }

    #[getter]
    fn days(&self) -> i64 {
        self.value.days
    }

    #[getter]
    fn seconds(&self) -> i64 {
        self.value.seconds
    }

    #[getter]
    fn nanoseconds(&self) -> i64 {
        self.value.nanos
    }

    /// ISO 8601, as Cypher's `toString` prints it (`P1M2DT3.5S`).
    fn __str__(&self) -> String {
        plexus::temporal::text(&Value::Duration(self.value))
    }

    fn __repr__(&self) -> String {
        format!(
            "Duration(months={}, days={}, seconds={}, nanoseconds={})",
            self.value.months, self.value.days, self.value.seconds, self.value.nanos
        )
    }
}

#[pymethods]
impl Temporal {
    /// The Cypher type: `DATE`, `LOCAL TIME`, `TIME`, `LOCAL DATETIME` or `DATETIME`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.value.type_name()
    }

    fn __str__(&self) -> String {
        plexus::temporal::text(&Value::Temporal(self.value.clone()))
    }

    fn __repr__(&self) -> String {
        format!("Temporal({:?}, {:?})", self.kind(), self.__str__())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Temporal>()
            .is_ok_and(|o| self.value.equals(&o.get().value) == Some(true))
    }
}
