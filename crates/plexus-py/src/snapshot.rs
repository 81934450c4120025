//! `Snapshot`: analytics and export (networkx, PyTorch Geometric) over one pinned state.
//!
//! WHAT IS PINNED
//! ==============
//! `db.snapshot()` begins a read-only transaction. Everything the snapshot returns — algorithm
//! results, `to_networkx()`, `to_pyg()` — reads the graph as committed when it was taken,
//! whatever commits afterwards, so two exports of one snapshot agree. It keeps old versions
//! from being garbage-collected while open: close it (`close()` or `with db.snapshot() as s:`)
//! when done. The transaction is never committed.
//!
//! PROJECTIONS
//! ===========
//! Every method selects part of the graph the way the `algo.*` Cypher procedures do
//! (`plexus_algo::projection`): `vertex_labels` (vertices with any of them; all when `None`),
//! `edge_types` (all when `None`), and the induced subgraph — an edge is kept only when both
//! ends are selected. Naming a label or type the database does not know is an error (most
//! likely a typo), not an empty graph.
//!
//! ALGORITHMS
//! ==========
//! `pagerank`, `wcc`, `cdlp`, `lcc`, `bfs` and `sssp` call the very procedures `CALL algo.*`
//! runs (`plexus::algo_procedures`), so options are checked in one place and mean the same
//! thing: `direction` is `"out"` (default), `"in"` or `"both"`; `iterations` and `damping`
//! default to 20 and 0.85 for PageRank, `iterations` to 10 for CDLP. Each returns a
//! `pandas.DataFrame` with a `node` column (the `id()` of the vertex) and the procedure's
//! output column (`score`, `component`, `community`, `coefficient`, `depth`, `distance`), one
//! row per vertex in id order; `component` and `community` are node ids too. `bfs` and `sssp`
//! leave out unreachable vertices.
//!
//! EXPORT
//! ======
//! - `to_networkx()`: a `MultiDiGraph` (`MultiGraph` with `directed=False`) keyed by node id,
//!   node attribute `labels` (list) plus properties, edge key = relationship id and edge
//!   attribute `type` plus properties (`properties=False` or a list of names narrows them;
//!   `labels` and `type` win over properties of the same name). Parallel edges are kept.
//! - `to_pyg()`: plain numpy arrays — `edge_index` (int64, 2 × E, dense indices as stored:
//!   source row 0, target row 1), `x` (float64, N × F, one column per name in `features`:
//!   integers and floats as numbers, booleans as 0/1, a missing property as NaN, anything else
//!   an error) and `node_ids` (int64, N: `node_ids[i]` is the id of dense vertex `i`).
//!   `as_data=True` returns a `torch_geometric.data.Data` instead (x as float32).

use crate::convert::{properties_to_python, to_python, vertex_of};
use crate::shared::{Failure, Shared, optional_module};
use parking_lot::Mutex;
use plexus::CypherValueMap;
use plexus::algo::{Direction, Projection};
use plexus::{CypherValue, EdgeId, QueryError, QueryResult, Transaction, VertexId};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::collections::HashSet;
use std::sync::Arc;

/// A pinned, read-only view of the graph (see the module doc).
#[pyclass(module = "plexusdb", frozen)]
pub struct Snapshot {
    shared: Arc<Shared>,
    tx: Mutex<Option<Transaction>>,
}

/// Which properties `to_networkx` copies.
enum PropertySelection {
    All,
    Only(HashSet<String>),
}

impl PropertySelection {
    fn from_python(obj: &Bound<'_, PyAny>) -> PyResult<PropertySelection> {
        if let Ok(all) = obj.extract::<bool>() {
            return Ok(if all {
                PropertySelection::All
            } else {
                PropertySelection::Only(HashSet::new())
            });
        }
        Ok(PropertySelection::Only(
            obj.extract::<Vec<String>>()?.into_iter().collect(),
        ))
    }

    fn wants_any(&self) -> bool {
        !matches!(self, PropertySelection::Only(names) if names.is_empty())
    }

    fn keep(&self, mut properties: Vec<(String, plexus::Value)>) -> Vec<(String, plexus::Value)> {
        if let PropertySelection::Only(names) = self {
            properties.retain(|(name, _)| names.contains(name));
        }
        properties
    }
}

type Properties = Vec<(String, plexus::Value)>;

/// The graph `to_networkx` builds, read without the GIL.
struct Export {
    nodes: Vec<(VertexId, Vec<String>, Properties)>,
    edges: Vec<(EdgeId, VertexId, VertexId, String, Properties)>,
}

/// The arrays `to_pyg` returns, read without the GIL.
struct Tensors {
    node_ids: Vec<i64>,
    /// Sources then targets (row-major 2 × E).
    edge_index: Vec<i64>,
    /// Row-major N × F.
    features: Vec<f64>,
}

fn projection(vertex_labels: Option<Vec<String>>, edge_types: Option<Vec<String>>) -> Projection {
    Projection {
        vertex_labels: vertex_labels.unwrap_or_default(),
        edge_types: edge_types.unwrap_or_default(),
        direction: Direction::Out,
        weight: None,
    }
}

fn analytics_failure(e: plexus::algo::AnalyticsError) -> Failure {
    match e {
        plexus::algo::AnalyticsError::Storage(e) => Failure::Engine(e),
        other => Failure::Query(QueryError::argument(other.to_string())),
    }
}

/// A feature value as a number (see EXPORT in the module doc).
fn feature(v: VertexId, name: &str, value: Option<plexus::Value>) -> Result<f64, Failure> {
    match value {
        None | Some(plexus::Value::Null) => Ok(f64::NAN),
        Some(plexus::Value::Int(i)) => Ok(i as f64),
        Some(plexus::Value::Float(f)) => Ok(f),
        Some(plexus::Value::Bool(b)) => Ok(if b { 1.0 } else { 0.0 }),
        Some(other) => Err(Failure::Query(QueryError::type_error(format!(
            "feature '{name}' of node {} is {other:?}, not a number",
            v.cypher_id()
        )))),
    }
}

/// The options map of an `algo.*` procedure, built from keyword arguments.
struct AlgoOptions(CypherValueMap);

impl AlgoOptions {
    fn new(
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        direction: Option<String>,
    ) -> Self {
        let strings = |items: Vec<String>| {
            CypherValue::list(items.into_iter().map(CypherValue::from).collect())
        };
        AlgoOptions(CypherValueMap::new())
            .set("vertexLabels", vertex_labels.map(strings))
            .set("edgeTypes", edge_types.map(strings))
            .set("direction", direction.map(CypherValue::from))
    }

    fn set(mut self, key: &str, value: Option<CypherValue>) -> Self {
        if let Some(value) = value {
            self.0.insert(Arc::from(key), value);
        }
        self
    }
}

impl Snapshot {
    pub(crate) fn pin(py: Python<'_>, shared: Arc<Shared>) -> PyResult<Snapshot> {
        let tx = py
            .detach(|| shared.engine.read().as_ref().map(plexus::Database::begin))
            .ok_or_else(|| Failure::DatabaseClosed("Database.snapshot()").into_py(py))?;
        Ok(Snapshot {
            shared,
            tx: Mutex::new(Some(tx)),
        })
    }

    /// Runs `f` on the snapshot's transaction with the GIL released, while the database and
    /// the snapshot are open.
    fn with_tx<T: Send>(
        &self,
        py: Python<'_>,
        what: &'static str,
        f: impl FnOnce(&mut Transaction) -> Result<T, Failure> + Send,
    ) -> PyResult<T> {
        self.shared
            .while_open(py, what, &self.tx, Failure::SnapshotClosed, f)
    }

    /// Runs procedure `algo.<name>` and returns its rows as a DataFrame `node`, `output`.
    fn algorithm<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        output: &str,
        options: AlgoOptions,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pandas = optional_module(py, "pandas", "Snapshot algorithms")?;
        let qualified = format!("algo.{name}");
        let body = plexus::algo_procedures()
            .into_iter()
            .find(|p| p.name == qualified)
            .and_then(|p| p.compute)
            .ok_or_else(|| {
                Failure::Query(QueryError::argument(format!("no procedure {qualified}")))
                    .into_py(py)
            })?;
        let config = [CypherValue::map(options.0)];
        let rows = self.with_tx(py, "Snapshot algorithms", |tx| {
            (body.0)(&config, tx).map_err(Failure::from)
        })?;
        let empty = QueryResult::default();
        let mut nodes = Vec::with_capacity(rows.len());
        let mut values = Vec::with_capacity(rows.len());
        for row in rows {
            let [CypherValue::Node(v), value] =
                <[CypherValue; 2]>::try_from(row).map_err(|_| {
                    Failure::Query(QueryError::argument(format!(
                        "{qualified} returned a row that is not (node, value)"
                    )))
                    .into_py(py)
                })?
            else {
                continue;
            };
            nodes.push(v.cypher_id());
            values.push(match value {
                CypherValue::Node(c) => c.cypher_id().into_pyobject(py)?.into_any(),
                other => to_python(py, &other, &empty)?,
            });
        }
        let columns = PyDict::new(py);
        columns.set_item("node", nodes)?;
        columns.set_item(output, values)?;
        pandas.getattr("DataFrame")?.call1((columns,))
    }
}

#[pymethods]
impl Snapshot {
    /// PageRank (Graphalytics definition): DataFrame `node`, `score`.
    #[pyo3(signature = (*, vertex_labels=None, edge_types=None, direction=None, iterations=None, damping=None))]
    fn pagerank<'py>(
        &self,
        py: Python<'py>,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        direction: Option<String>,
        iterations: Option<i64>,
        damping: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = AlgoOptions::new(vertex_labels, edge_types, direction)
            .set("iterations", iterations.map(CypherValue::Int))
            .set("damping", damping.map(CypherValue::Float));
        self.algorithm(py, "pagerank", "score", options)
    }

    /// Weakly connected components: DataFrame `node`, `component` (smallest node id in it).
    #[pyo3(signature = (*, vertex_labels=None, edge_types=None))]
    fn wcc<'py>(
        &self,
        py: Python<'py>,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = AlgoOptions::new(vertex_labels, edge_types, None);
        self.algorithm(py, "wcc", "component", options)
    }

    /// Community detection by label propagation: DataFrame `node`, `community`.
    #[pyo3(signature = (*, vertex_labels=None, edge_types=None, direction=None, iterations=None))]
    fn cdlp<'py>(
        &self,
        py: Python<'py>,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        direction: Option<String>,
        iterations: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = AlgoOptions::new(vertex_labels, edge_types, direction)
            .set("iterations", iterations.map(CypherValue::Int));
        self.algorithm(py, "cdlp", "community", options)
    }

    /// Local clustering coefficient: DataFrame `node`, `coefficient`.
    #[pyo3(signature = (*, vertex_labels=None, edge_types=None, direction=None))]
    fn lcc<'py>(
        &self,
        py: Python<'py>,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        direction: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = AlgoOptions::new(vertex_labels, edge_types, direction);
        self.algorithm(py, "lcc", "coefficient", options)
    }

    /// Breadth-first search from `source` (a Node or node id): DataFrame `node`, `depth`.
    #[pyo3(signature = (source, *, vertex_labels=None, edge_types=None, direction=None))]
    fn bfs<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        direction: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = AlgoOptions::new(vertex_labels, edge_types, direction)
            .set("source", Some(CypherValue::Node(vertex_of(source)?)));
        self.algorithm(py, "bfs", "depth", options)
    }

    /// Single-source shortest paths from `source`, weighted by the relationship property
    /// `weight_property` (non-negative numbers on every selected edge): DataFrame `node`,
    /// `distance`.
    #[pyo3(signature = (source, weight_property, *, vertex_labels=None, edge_types=None, direction=None))]
    fn sssp<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        weight_property: String,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        direction: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = AlgoOptions::new(vertex_labels, edge_types, direction)
            .set("source", Some(CypherValue::Node(vertex_of(source)?)))
            .set("weightProperty", Some(CypherValue::from(weight_property)));
        self.algorithm(py, "sssp", "distance", options)
    }

    /// The graph as a networkx multigraph (see EXPORT in the module doc).
    #[pyo3(signature = (vertex_labels=None, edge_types=None, directed=true, properties=None))]
    fn to_networkx<'py>(
        &self,
        py: Python<'py>,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        directed: bool,
        properties: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let networkx = optional_module(py, "networkx", "Snapshot.to_networkx()")?;
        let selection = match properties {
            Some(obj) => PropertySelection::from_python(obj)?,
            None => PropertySelection::All,
        };
        let types: Option<HashSet<String>> = edge_types.clone().map(|t| t.into_iter().collect());
        let projection = projection(vertex_labels, edge_types);
        let export = self.with_tx(py, "Snapshot.to_networkx()", |tx| {
            let projected = projection
                .build(&tx.snapshot())
                .map_err(analytics_failure)?;
            let mut export = Export {
                nodes: Vec::with_capacity(projected.vertex_count()),
                edges: Vec::new(),
            };
            for v in projected.vertex_ids() {
                let props = if selection.wants_any() {
                    selection.keep(tx.vertex_properties(v)?)
                } else {
                    Vec::new()
                };
                export.nodes.push((v, tx.vertex_labels(v)?, props));
                for (e, u) in tx.neighbors(v, None, plexus::Direction::Out)? {
                    if projected.dense_id(u).is_none() {
                        continue;
                    }
                    let rel_type = tx.edge_type(e)?;
                    if types.as_ref().is_some_and(|t| !t.contains(&rel_type)) {
                        continue;
                    }
                    let props = if selection.wants_any() {
                        selection.keep(tx.edge_properties(e)?)
                    } else {
                        Vec::new()
                    };
                    export.edges.push((e, v, u, rel_type, props));
                }
            }
            Ok(export)
        })?;
        let graph = networkx
            .getattr(if directed {
                "MultiDiGraph"
            } else {
                "MultiGraph"
            })?
            .call0()?;
        let add_node = graph.getattr("add_node")?;
        for (v, labels, props) in export.nodes {
            let attrs = properties_to_python(py, props)?;
            attrs.set_item("labels", labels)?;
            add_node.call((v.cypher_id(),), Some(&attrs))?;
        }
        let add_edge = graph.getattr("add_edge")?;
        for (e, src, dst, rel_type, props) in export.edges {
            let attrs = properties_to_python(py, props)?;
            attrs.set_item("type", rel_type)?;
            attrs.set_item("key", e.cypher_id())?;
            add_edge.call((src.cypher_id(), dst.cypher_id()), Some(&attrs))?;
        }
        Ok(graph)
    }

    /// The graph as numpy arrays for PyTorch Geometric (see EXPORT in the module doc).
    #[pyo3(signature = (vertex_labels=None, edge_types=None, features=None, as_data=false))]
    fn to_pyg<'py>(
        &self,
        py: Python<'py>,
        vertex_labels: Option<Vec<String>>,
        edge_types: Option<Vec<String>>,
        features: Option<Vec<String>>,
        as_data: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let numpy = optional_module(py, "numpy", "Snapshot.to_pyg()")?;
        let features = features.unwrap_or_default();
        let projection = projection(vertex_labels, edge_types);
        let tensors = self.with_tx(py, "Snapshot.to_pyg()", |tx| {
            let projected = projection
                .build(&tx.snapshot())
                .map_err(analytics_failure)?;
            let out = projected.graph().out();
            let n = projected.vertex_count();
            let mut sources = Vec::with_capacity(out.edge_count());
            for v in 0..n {
                let degree = out.degree(v as u32);
                sources.extend(std::iter::repeat_n(v as i64, degree));
            }
            let mut edge_index = sources;
            edge_index.extend(out.targets().iter().map(|&u| i64::from(u)));
            let ids = projected.vertex_ids();
            let mut values = Vec::with_capacity(n * features.len());
            for &v in &ids {
                for name in &features {
                    values.push(feature(v, name, tx.vertex_property(v, name)?)?);
                }
            }
            Ok(Tensors {
                node_ids: ids.into_iter().map(VertexId::cypher_id).collect(),
                edge_index,
                features: values,
            })
        })?;
        let array = |bytes: Vec<u8>, dtype: &str, shape: (usize, usize)| {
            numpy
                .call_method1("frombuffer", (PyBytes::new(py, &bytes), dtype))?
                .call_method1("reshape", shape)?
                .call_method0("copy")
        };
        let n = tensors.node_ids.len();
        let e = tensors.edge_index.len() / 2;
        let bytes_i64 = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let edge_index = array(bytes_i64(&tensors.edge_index), "<i8", (2, e))?;
        let x_bytes = tensors
            .features
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let x = array(x_bytes, "<f8", (n, features.len()))?;
        let node_ids = array(bytes_i64(&tensors.node_ids), "<i8", (1, n))?.call_method0("ravel")?;
        if as_data {
            let torch = optional_module(py, "torch", "Snapshot.to_pyg(as_data=True)")?;
            let data =
                optional_module(py, "torch_geometric.data", "Snapshot.to_pyg(as_data=True)")?;
            let from_numpy = torch.getattr("from_numpy")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("x", from_numpy.call1((x,))?.call_method0("float")?)?;
            kwargs.set_item("edge_index", from_numpy.call1((edge_index,))?)?;
            kwargs.set_item("node_ids", from_numpy.call1((node_ids,))?)?;
            return data.getattr("Data")?.call((), Some(&kwargs));
        }
        let result = PyDict::new(py);
        result.set_item("edge_index", edge_index)?;
        result.set_item("x", x)?;
        result.set_item("node_ids", node_ids)?;
        Ok(result.into_any())
    }

    /// The commit timestamp the snapshot reads at.
    #[getter]
    fn timestamp(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_tx(py, "Snapshot.timestamp", |tx| Ok(tx.start_ts()))
    }

    /// Releases the snapshot (old versions may then be garbage-collected).
    fn close(&self, py: Python<'_>) {
        let tx = self.tx.lock().take();
        py.detach(|| {
            if let Some(tx) = tx {
                tx.rollback();
            }
        });
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}
