//! `Database`, `Connection`, `Result` and the transaction context manager.
//!
//! LIFETIME AND CLOSING
//! ====================
//! ```text
//!   Database ──owns──▶ Shared { RwLock<Option<plexus::Database>> } ◀──Arc── Connection, Snapshot
//! ```
//! Every operation that reaches the engine holds the read side of the lock while it runs;
//! `Database.close()` takes the write side, so it waits for running statements, then takes
//! the engine out, flushes the WAL with fsync and releases the directory lock. From then on
//! each `Connection` and `Snapshot` of that database raises `DatabaseClosed` (the engine
//! itself would let them go on, but the directory is no longer locked, so another process
//! could open it). Closing twice is allowed and does nothing.
//!
//! THREADS AND THE GIL
//! ===================
//! The GIL is released while the engine runs (opening, statements, commits, analytics), so
//! Python threads run queries in parallel, each on its own `Connection`. A `Connection` may
//! also be shared between threads: its statements then run one at a time (a mutex, taken
//! with the GIL released, so waiting never blocks other Python threads). Converting rows to
//! Python objects needs the GIL and happens after the engine is done.
//!
//! TRANSACTIONS
//! ============
//! A connection auto-commits each statement until `begin()` (or `execute("BEGIN")`); then
//! statements share one transaction until `commit()` / `rollback()`. A statement that fails
//! inside it rolls the whole transaction back (see `plexus::Connection`). The context
//! managers build on that: `with conn.transaction():` begins, and at the end commits, or
//! rolls back if the block raised; `with db.connect() as conn:` does the same for a
//! transaction left open in the block, then closes the connection. Neither swallows the
//! exception.
//!
//! ISOLATION AND SETTINGS
//! ======================
//! `plexusdb.Database(path, **settings)` takes any server setting as a keyword argument
//! (over `plexus.toml`); `db.connect(isolation="serializable")` sets a connection's session
//! level, `conn.begin(isolation=…)` and `conn.transaction(isolation=…)` one transaction's, and
//! `conn.isolation` reads or sets the session's. `conn.execute("SHOW SETTINGS")` lists them.

use crate::convert::{map_from_python, to_python};
use crate::errors::{engine_error, query_error};
use crate::shared::{Failure, Shared, optional_module};
use parking_lot::{Mutex, RwLock};
use plexus::{Params, QueryError, QueryResult};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::path::PathBuf;
use std::sync::Arc;

/// An open database directory (one `Database` per directory at a time, in any process).
#[pyclass(module = "plexusdb", frozen)]
pub struct Database {
    shared: Arc<Shared>,
    #[pyo3(get)]
    path: PathBuf,
}

#[pymethods]
impl Database {
    /// Opens the database in directory `path`, creating it if absent, and recovers it.
    /// Keyword arguments are settings (`durability="periodic"`, `memtable_budget_bytes=
    /// "512MiB"` or an int, `default_isolation="serializable"`, …; see `SHOW SETTINGS`); they
    /// override `plexus.toml` in the directory. An unknown name or a bad value raises
    /// `ValueError` naming the setting.
    #[new]
    #[pyo3(signature = (path, **settings))]
    fn new(py: Python<'_>, path: PathBuf, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let settings = settings_from_python(&path, settings)?;
        let engine = py
            .detach(|| plexus::Database::open_settings(&path, settings))
            .map_err(|e| engine_error(py, &e))?;
        Ok(Database {
            shared: Arc::new(Shared {
                engine: RwLock::new(Some(engine)),
            }),
            path,
        })
    }

    /// A new connection (auto-commit until `begin()`); `isolation` ("snapshot" or
    /// "serializable") sets its session level, else it starts at `default_isolation`.
    #[pyo3(signature = (isolation=None))]
    fn connect(&self, py: Python<'_>, isolation: Option<&str>) -> PyResult<Connection> {
        let isolation = isolation.map(isolation_level).transpose()?;
        let connection = py
            .detach(|| {
                let engine = self.shared.engine.read();
                let mut connection = engine.as_ref().map(plexus::Database::connect)?;
                if let Some(level) = isolation {
                    connection.set_isolation(level);
                }
                Some(connection)
            })
            .ok_or_else(|| Failure::DatabaseClosed("Database.connect()").into_py(py))?;
        Ok(Connection {
            shared: self.shared.clone(),
            inner: Mutex::new(Some(connection)),
        })
    }

    /// A pinned, read-only snapshot of the committed graph, for analytics and export.
    fn snapshot(&self, py: Python<'_>) -> PyResult<crate::snapshot::Snapshot> {
        crate::snapshot::Snapshot::pin(py, self.shared.clone())
    }

    /// Writes a checkpoint and retires the WAL before it.
    fn checkpoint(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let engine = self.shared.engine.read();
            let engine = engine
                .as_ref()
                .ok_or(Failure::DatabaseClosed("Database.checkpoint()"))?;
            engine.checkpoint().map_err(Failure::from)
        })
        .map_err(|f| f.into_py(py))
    }

    /// Waits for running statements, flushes the WAL with fsync and releases the directory.
    /// Closing a closed database does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| match self.shared.engine.write().take() {
            Some(engine) => engine.close(),
            None => Ok(()),
        })
        .map_err(|e| engine_error(py, &e))
    }

    #[getter]
    fn closed(&self) -> bool {
        self.shared.engine.read().is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("<plexusdb.Database {:?} {state}>", self.path)
    }
}

/// A session running Cypher statements; see the module doc for transactions.
#[pyclass(module = "plexusdb", frozen)]
pub struct Connection {
    shared: Arc<Shared>,
    inner: Mutex<Option<plexus::Connection>>,
}

impl Connection {
    /// Runs `f` on the engine connection with the GIL released.
    fn engine<T: Send>(
        &self,
        py: Python<'_>,
        what: &'static str,
        f: impl FnOnce(&mut plexus::Connection) -> std::result::Result<T, QueryError> + Send,
    ) -> PyResult<T> {
        self.shared
            .while_open(py, what, &self.inner, Failure::ConnectionClosed, |c| {
                f(c).map_err(Failure::from)
            })
    }

    /// Runs one statement and returns all its rows.
    fn run(&self, py: Python<'_>, query: &str, params: &Params) -> PyResult<QueryResult> {
        self.engine(py, "Connection.execute()", |c| c.execute(query, params))
    }

    fn command(&self, py: Python<'_>, command: &str) -> PyResult<()> {
        self.run(py, command, &Params::new()).map(drop)
    }
}

#[pymethods]
impl Connection {
    /// Runs `query` with `params` (a dict of name → value, `$name` in the query) and returns
    /// the whole result.
    #[pyo3(signature = (query, params=None))]
    fn execute(
        &self,
        py: Python<'_>,
        query: &str,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Result> {
        let result = self.run(py, query, &params_from_python(params)?)?;
        Result::from_engine(py, &result)
    }

    /// Loads an Arrow table or stream (anything with `__arrow_c_stream__`) as nodes
    /// (`label=`, optional `key=`) or relationships (`rel_type=`, `src=(label, column)`,
    /// `dst=(label, column)`), committed at once; see the `bulk` module.
    #[pyo3(signature = (data, label=None, key=None, rel_type=None, src=None, dst=None))]
    #[allow(clippy::too_many_arguments)]
    fn load_arrow<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        label: Option<&Bound<'py, PyAny>>,
        key: Option<String>,
        rel_type: Option<String>,
        src: Option<(String, String)>,
        dst: Option<(String, String)>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let target = crate::bulk::target(label, key, rel_type, src, dst);
        let target = target.map_err(|f| f.into_py(py))?;
        match self.inner.lock().as_ref() {
            None => return Err(Failure::ConnectionClosed.into_py(py)),
            Some(c) if c.in_transaction() => {
                let message = "load_arrow() commits on its own and cannot run inside an \
                               explicit transaction; commit() or rollback() first";
                let error = QueryError::runtime(
                    plexus::ErrorClass::SemanticError,
                    "LoadInTransaction",
                    message,
                );
                return Err(query_error(py, &error));
            }
            Some(_) => {}
        }
        let engine = self.shared.engine.read();
        let Some(db) = engine.as_ref() else {
            return Err(Failure::DatabaseClosed("Connection.load_arrow()").into_py(py));
        };
        crate::bulk::load_arrow(py, db, data, target).map_err(|f| f.into_py(py))
    }

    /// `load_arrow(pyarrow.Table.from_pandas(df, preserve_index=False), …)`.
    #[pyo3(signature = (df, label=None, key=None, rel_type=None, src=None, dst=None))]
    #[allow(clippy::too_many_arguments)]
    fn load_pandas<'py>(
        &self,
        py: Python<'py>,
        df: &Bound<'py, PyAny>,
        label: Option<&Bound<'py, PyAny>>,
        key: Option<String>,
        rel_type: Option<String>,
        src: Option<(String, String)>,
        dst: Option<(String, String)>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let pyarrow = optional_module(py, "pyarrow", "Connection.load_pandas()")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("preserve_index", false)?;
        let table = (pyarrow.getattr("Table")?).call_method("from_pandas", (df,), Some(&kwargs))?;
        self.load_arrow(py, &table, label, key, rel_type, src, dst)
    }

    /// Runs `query` and returns its rows as an iterator that pulls them from the engine a
    /// batch at a time (see `plexus::Connection::run`): a large result is never held whole.
    /// A read in auto-commit mode keeps its snapshot until the iterator is exhausted or
    /// closed; a statement that may write has run (and in auto-commit mode committed) when
    /// `stream` returns.
    #[pyo3(signature = (query, params=None))]
    fn stream(
        slf: &Bound<'_, Self>,
        query: &str,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Stream> {
        let params = params_from_python(params)?;
        let source = slf
            .get()
            .engine(slf.py(), "Connection.stream()", |c| c.run(query, &params))?;
        Ok(Stream {
            connection: slf.clone().unbind(),
            columns: source.columns().to_vec(),
            state: Mutex::new(StreamState {
                source: Some(source),
                pending: std::collections::VecDeque::new(),
                busy: false,
            }),
        })
    }

    /// Opens an explicit transaction (`BEGIN`), at `isolation` ("snapshot" or
    /// "serializable") if given, else at the session's level.
    #[pyo3(signature = (isolation=None))]
    fn begin(&self, py: Python<'_>, isolation: Option<&str>) -> PyResult<()> {
        match isolation.map(isolation_level).transpose()? {
            Some(level) => self.engine(py, "Connection.begin()", |c| c.begin_with(level)),
            None => self.command(py, "BEGIN"),
        }
    }

    /// The session's isolation level: "snapshot" or "serializable". Assigning it is
    /// `SET SESSION TRANSACTION ISOLATION LEVEL` (later transactions; an open one keeps its).
    #[getter]
    fn get_isolation(&self, py: Python<'_>) -> PyResult<String> {
        self.engine(py, "Connection.isolation", |c| {
            Ok(c.isolation().name().to_string())
        })
    }

    #[setter]
    fn set_isolation(&self, py: Python<'_>, isolation: &str) -> PyResult<()> {
        let level = isolation_level(isolation)?;
        self.engine(py, "Connection.isolation", |c| {
            c.set_isolation(level);
            Ok(())
        })
    }

    /// Commits the open transaction (`COMMIT`); `TransactionAborted` on a conflict.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.command(py, "COMMIT")
    }

    /// Rolls the open transaction back (`ROLLBACK`).
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        self.command(py, "ROLLBACK")
    }

    /// Whether an explicit transaction is open.
    #[getter]
    fn in_transaction(&self) -> bool {
        self.inner
            .lock()
            .as_ref()
            .is_some_and(plexus::Connection::in_transaction)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().is_none() || self.shared.engine.read().is_none()
    }

    /// `with conn.transaction():` — begin (at `isolation` if given); commit at the end, or
    /// roll back if the block raised.
    #[pyo3(signature = (isolation=None))]
    fn transaction(slf: Py<Self>, isolation: Option<String>) -> PyResult<TransactionScope> {
        if let Some(isolation) = &isolation {
            isolation_level(isolation)?;
        }
        Ok(TransactionScope {
            connection: slf,
            isolation,
        })
    }

    /// Closes the connection, rolling back a transaction left open.
    fn close(&self, py: Python<'_>) {
        let connection = self.inner.lock().take();
        py.detach(|| drop(connection));
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Commits a transaction left open (rolls it back if the block raised), then closes.
    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let ended = self.end_transaction(py, exc_type.is_none());
        self.close(py);
        ended.map(|()| false)
    }
}

impl Connection {
    /// Commits (`success`) or rolls back the open transaction, if any.
    fn end_transaction(&self, py: Python<'_>, success: bool) -> PyResult<()> {
        match (self.in_transaction(), success) {
            (false, _) => Ok(()),
            (true, true) => self.commit(py),
            (true, false) => self.rollback(py),
        }
    }
}

/// The context manager `Connection.transaction()` returns.
#[pyclass(module = "plexusdb", frozen)]
pub struct TransactionScope {
    connection: Py<Connection>,
    isolation: Option<String>,
}

#[pymethods]
impl TransactionScope {
    /// Begins the transaction and returns the connection.
    fn __enter__(&self, py: Python<'_>) -> PyResult<Py<Connection>> {
        self.connection.get().begin(py, self.isolation.as_deref())?;
        Ok(self.connection.clone_ref(py))
    }

    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.connection
            .get()
            .end_transaction(py, exc_type.is_none())?;
        Ok(false)
    }
}

/// "snapshot" or "serializable" (any case), else `ValueError`.
fn isolation_level(text: &str) -> PyResult<plexus::IsolationLevel> {
    text.parse()
        .map_err(|e: String| pyo3::exceptions::PyValueError::new_err(e))
}

/// `plexus.toml` in `path` overridden by the keyword arguments (str, int, float or bool
/// values); `ValueError` naming the setting for a bad one.
fn settings_from_python(
    path: &std::path::Path,
    keywords: Option<&Bound<'_, PyDict>>,
) -> PyResult<plexus::Settings> {
    let bad = |e: plexus::Error| match e {
        plexus::Error::InvalidArgument(message) => pyo3::exceptions::PyValueError::new_err(message),
        other => pyo3::exceptions::PyValueError::new_err(other.to_string()),
    };
    let mut settings = plexus::Settings::load(path).map_err(bad)?;
    for (name, value) in keywords.into_iter().flatten() {
        let name: String = name.extract()?;
        let text = if let Ok(flag) = value.cast::<pyo3::types::PyBool>() {
            flag.is_true().to_string()
        } else if let Ok(text) = value.extract::<String>() {
            text
        } else if let Ok(number) = value.extract::<i128>() {
            number.to_string()
        } else if let Ok(number) = value.extract::<f64>() {
            number.to_string()
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "setting '{name}' takes a str, int, float or bool, not {}",
                value.get_type().name()?
            )));
        };
        settings
            .set(&name, &text, plexus::SettingSource::Argument)
            .map_err(bad)?;
    }
    Ok(settings)
}

/// A materialised query result: `columns` and rows as tuples (iterate it, index it, `len()`).
/// One result row as a tuple (graph elements from `result`'s copies).
fn row_to_python<'py>(
    py: Python<'py>,
    row: &[plexus::CypherValue],
    result: &QueryResult,
) -> PyResult<Bound<'py, PyTuple>> {
    let values = row
        .iter()
        .map(|v| to_python(py, v, result))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, values)
}

fn params_from_python(params: Option<&Bound<'_, PyDict>>) -> PyResult<Params> {
    let mut converted = Params::new();
    if let Some(params) = params {
        for (name, value) in map_from_python(params, 0)? {
            converted.insert(name.to_string(), value);
        }
    }
    Ok(converted)
}

/// The rows of `Connection.stream()`: an iterator of tuples.
#[pyclass(module = "plexusdb", frozen)]
pub struct Stream {
    connection: Py<Connection>,
    columns: Vec<String>,
    state: Mutex<StreamState>,
}

struct StreamState {
    /// `None` once exhausted, failed or closed.
    source: Option<plexus::QueryStream>,
    /// Converted rows of the current batch.
    pending: std::collections::VecDeque<Py<PyTuple>>,
    /// A thread is pulling the next batch (`source` is out meanwhile).
    busy: bool,
}

#[pymethods]
impl Stream {
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        loop {
            // The lock is never held while the engine runs (the GIL is released then, and a
            // thread waiting here holds it).
            let mut source = {
                let mut state = self.state.lock();
                if let Some(row) = state.pending.pop_front() {
                    return Ok(Some(row));
                }
                if state.busy {
                    return Err(PyRuntimeError::new_err(
                        "this Stream is being read by another thread",
                    ));
                }
                let Some(source) = state.source.take() else {
                    return Ok(None);
                };
                state.busy = true;
                source
            };
            let pulled = self
                .connection
                .get()
                .engine(py, "Stream.__next__()", |c| c.pull(&mut source));
            let mut state = self.state.lock();
            state.busy = false;
            // After an error or at the end the source is dropped: the stream is over.
            let Some(chunk) = pulled? else {
                return Ok(None);
            };
            for row in &chunk.rows {
                state
                    .pending
                    .push_back(row_to_python(py, row, &chunk)?.unbind());
            }
            state.source = Some(source);
        }
    }

    /// Ends the stream early; an auto-commit read releases its snapshot.
    fn close(&self) {
        let mut state = self.state.lock();
        state.source = None;
        state.pending.clear();
    }

    fn __repr__(&self) -> String {
        format!("<plexusdb.Stream columns={:?}>", self.columns)
    }
}

#[pyclass(module = "plexusdb", frozen, sequence)]
pub struct Result {
    columns: Vec<String>,
    rows: Py<PyList>,
}

impl Result {
    fn from_engine(py: Python<'_>, result: &QueryResult) -> PyResult<Result> {
        let rows = PyList::empty(py);
        for row in &result.rows {
            rows.append(row_to_python(py, row, result)?)?;
        }
        Ok(Result {
            columns: result.columns.clone(),
            rows: rows.unbind(),
        })
    }

    /// Column `i` of every row.
    fn column<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.rows
            .bind(py)
            .iter()
            .map(|row| row.get_item(i))
            .collect()
    }
}

/// A value ready for `pyarrow.array`: graph elements as dicts, wrapper temporals as ISO text.
fn arrow_ready<'py>(value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    if value.is_instance_of::<crate::types::Node>()
        || value.is_instance_of::<crate::types::Relationship>()
        || value.is_instance_of::<crate::types::Path>()
    {
        return arrow_ready(value.call_method0("to_dict")?);
    }
    if value.is_instance_of::<crate::types::Duration>()
        || value.is_instance_of::<crate::types::Temporal>()
    {
        return Ok(value.str()?.into_any());
    }
    if let Ok(list) = value.cast::<PyList>() {
        let items = list.iter().map(arrow_ready).collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(py, items)?.into_any());
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (k, v) in dict.iter() {
            out.set_item(k, arrow_ready(v)?)?;
        }
        return Ok(out.into_any());
    }
    Ok(value)
}

#[pymethods]
impl Result {
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    /// The rows, a list of tuples.
    #[getter]
    fn rows(&self, py: Python<'_>) -> Py<PyList> {
        self.rows.clone_ref(py)
    }

    /// The rows as dicts keyed by column name.
    fn dicts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.rows
            .bind(py)
            .iter()
            .map(|row| {
                let dict = PyDict::new(py);
                for (name, value) in self.columns.iter().zip(row.try_iter()?) {
                    dict.set_item(name, value?)?;
                }
                Ok(dict)
            })
            .collect()
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.rows.bind(py).len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.rows.bind(py).try_iter()?.into_any())
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.rows.bind(py).as_any().get_item(index)
    }

    /// A `pandas.DataFrame` with one column per result column (graph elements stay objects).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pandas = optional_module(py, "pandas", "Result.to_pandas()")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("columns", self.columns.clone())?;
        pandas
            .getattr("DataFrame")?
            .call((self.rows.bind(py),), Some(&kwargs))
    }

    /// A `pyarrow.Table`; nodes, relationships and paths become structs (`to_dict()`), and
    /// temporals without an exact Python type their ISO 8601 text.
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pyarrow = optional_module(py, "pyarrow", "Result.to_arrow()")?;
        let array = pyarrow.getattr("array")?;
        let arrays = (0..self.columns.len())
            .map(|i| {
                let values = self
                    .column(py, i)?
                    .into_iter()
                    .map(arrow_ready)
                    .collect::<PyResult<Vec<_>>>()?;
                array.call1((values,))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("names", self.columns.clone())?;
        pyarrow
            .getattr("Table")?
            .call_method("from_arrays", (arrays,), Some(&kwargs))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<plexusdb.Result columns={:?} rows={}>",
            self.columns,
            self.__len__(py)
        )
    }
}
