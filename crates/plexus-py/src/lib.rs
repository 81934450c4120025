//! `plexusdb`: the Python package for Plexus (built by maturin from this crate).
//!
//! ```python
//! import plexusdb
//! with plexusdb.Database("/tmp/graph") as db, db.connect() as conn:
//!     conn.execute("CREATE (:Person {name: $name})", {"name": "Ada"})
//!     for (name,) in conn.execute("MATCH (p:Person) RETURN p.name"):
//!         print(name)
//! ```
//!
//! MODULES
//! =======
//! - `database`: `Database`, `Connection`, `Result`, transactions and context managers, how
//!   closing works, and releasing the GIL while the engine runs;
//! - `bulk`: `Connection.load_arrow` / `load_pandas`, Arrow streams through the bulk loader;
//! - `snapshot`: `Snapshot` — the `algo.*` kernels as DataFrames, `to_networkx`, `to_pyg`;
//! - `convert`: the mapping between Cypher and Python values (both directions);
//! - `types`: `Node`, `Relationship`, `Path`, and `Duration` / `Temporal` for temporal values
//!   with no exact `datetime` equivalent;
//! - `errors`: the exception hierarchy, one class per kind of engine error.
//!
//! OPTIONAL PACKAGES
//! =================
//! pandas, pyarrow, networkx, numpy and torch_geometric are imported by the methods that use
//! them, when called; without them the rest of the package works, and the method raises an
//! `ImportError` naming the package to install.
//!
//! BUILDING
//! ========
//! `maturin develop` / `maturin build` enable the `extension-module` feature (pyproject.toml);
//! `cargo build` / `cargo test` / `cargo clippy` build without it and link libpython, so the
//! crate can stay a workspace member. `scripts/test-py.sh` builds the package into the test
//! virtual environment and runs the pytest suite in `tests/`.

mod bulk;
mod convert;
mod database;
mod errors;
mod shared;
mod snapshot;
mod types;

use pyo3::prelude::*;

#[pymodule]
fn plexusdb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<database::Database>()?;
    m.add_class::<database::Connection>()?;
    m.add_class::<database::Result>()?;
    m.add_class::<database::Stream>()?;
    m.add_class::<database::TransactionScope>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<types::Node>()?;
    m.add_class::<types::Relationship>()?;
    m.add_class::<types::Path>()?;
    m.add_class::<types::Duration>()?;
    m.add_class::<types::Temporal>()?;
    errors::register(m)?;
    Ok(())
}
