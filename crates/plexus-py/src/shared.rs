//! What the Python objects over one database share: the engine handle (`None` once the
//! database is closed), how work done without the GIL reports failure, and the import of
//! optional packages (pyarrow, pandas, ...) with an install hint.

use crate::errors::{connection_closed, database_closed, engine_error, query_error};
use parking_lot::{Mutex, RwLock};
use plexus::QueryError;
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;

/// What `Database`, its connections and snapshots share.
pub(crate) struct Shared {
    pub(crate) engine: RwLock<Option<plexus::Database>>,
}

impl Shared {
    /// Runs `f` on the object in `slot` with the GIL released, while the database is open
    /// (its read lock held) and the object is not closed (`closed` otherwise).
    pub(crate) fn while_open<X: Send, T: Send>(
        &self,
        py: Python<'_>,
        what: &'static str,
        slot: &Mutex<Option<X>>,
        closed: Failure,
        f: impl FnOnce(&mut X) -> std::result::Result<T, Failure> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let engine = self.engine.read();
            if engine.is_none() {
                return Err(Failure::DatabaseClosed(what));
            }
            let mut guard = slot.lock();
            f(guard.as_mut().ok_or(closed)?)
        })
        .map_err(|f| f.into_py(py))
    }
}

/// Why an operation that ran without the GIL failed (turned into an exception with it).
pub(crate) enum Failure {
    /// The database was closed; the operation that found out.
    DatabaseClosed(&'static str),
    SnapshotClosed,
    ConnectionClosed,
    Query(QueryError),
    Engine(plexus::Error),
}

impl Failure {
    pub(crate) fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::DatabaseClosed(what) => {
                database_closed(py, format!("{what}: the database is closed"))
            }
            Failure::SnapshotClosed => database_closed(py, "the snapshot is closed".into()),
            Failure::ConnectionClosed => connection_closed(py),
            Failure::Query(e) => query_error(py, &e),
            Failure::Engine(e) => engine_error(py, &e),
        }
    }
}

impl From<QueryError> for Failure {
    fn from(e: QueryError) -> Self {
        Failure::Query(e)
    }
}

impl From<plexus::Error> for Failure {
    fn from(e: plexus::Error) -> Self {
        Failure::Engine(e)
    }
}

/// Imports an optional package, or explains which method needs it and how to install it.
pub(crate) fn optional_module<'py>(
    py: Python<'py>,
    name: &str,
    method: &str,
) -> PyResult<Bound<'py, PyModule>> {
    py.import(name).map_err(|e| {
        let err = PyImportError::new_err(format!(
            "{method} needs the optional package '{name}' (pip install {name}); \
             the rest of plexusdb works without it"
        ));
        err.set_cause(py, Some(e));
        err
    })
}
