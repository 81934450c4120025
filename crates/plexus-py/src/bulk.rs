//! `Connection.load_arrow` / `load_pandas`: Arrow data into the graph through the bulk loader.
//!
//! WHAT
//! ====
//! ```python
//! conn.load_arrow(people, label="Person", key="id")           # nodes: one per row
//! conn.load_arrow(knows, rel_type="KNOWS",
//!                 src=("Person", "from_id"), dst=("Person", "to_id"))  # relationships
//! conn.load_pandas(df, label=["Person", "Admin"])
//! ```
//! `data` is anything with `__arrow_c_stream__` (a `pyarrow.Table`, `RecordBatchReader`,
//! polars frames, …); `load_pandas` converts a DataFrame with `pyarrow.Table.from_pandas`
//! first. The stream is read through the Arrow C stream interface
//! (`arrow::ffi_stream::RecordBatchStreamReader` over the `arrow_array_stream` capsule), batch
//! by batch, and every batch goes to `plexus::BulkLoad` as property columns
//! (`plexus::bulk::batch_columns`: the one Arrow → Plexus mapping, shared with `COPY … FROM
//! 'x.parquet'`). No Python object is made per row or per value. The whole call is one load:
//! it commits once, and returns `{"nodes": n, "relationships": m, "commit_ts": ts}`.
//!
//! NODES AND KEYS
//! ==============
//! Nodes get `label` (a string or a list; the first label with a table decides the table, as
//! for `CREATE`) and every column as a property, named by the column (null = no property).
//! `key="id"` makes column `id` the label's primary key: for a label with no table yet it
//! declares the key first, as `CREATE CONSTRAINT IF NOT EXISTS FOR (n:Label) REQUIRE n.id IS
//! UNIQUE` would (a catalog change, durable even if the load then fails); for a declared table
//! its key must be that column. Relationships find their endpoints through primary keys
//! only: `src=(label, column)` names the FROM nodes' label and the column holding their key
//! values, `dst` likewise; each value is looked up in that label's primary-key index (nodes
//! committed before, or loaded with a key earlier). So nodes of an undeclared label that
//! relationships will point at are loaded with `key=`; no scan ever resolves an endpoint.
//! The other columns of a relationship frame are its properties.
//!
//! ERRORS
//! ======
//! A row the load rejects (a value of the wrong type for a declared column, a duplicate or
//! null key, an endpoint that does not exist) raises, naming the 1-based row in the stream;
//! nothing of the call becomes visible. Inside an explicit transaction the call is refused:
//! it commits on its own. The GIL is held while loading (a Python-backed stream may call back
//! into Python).

use crate::shared::Failure;
use plexus::bulk::batch_columns;
use plexus::{ErrorClass, QueryError, Value};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

/// What the rows of a `load_arrow` call become (see the module doc).
pub(crate) enum Target {
    Nodes {
        labels: Vec<String>,
        key: Option<String>,
    },
    Rels {
        rel_type: String,
        /// (label, key column) of the FROM and TO nodes.
        src: (String, String),
        dst: (String, String),
    },
}

fn argument(message: String) -> Failure {
    Failure::Query(QueryError::runtime(
        ErrorClass::ArgumentError,
        "InvalidArgumentValue",
        message,
    ))
}

/// Loads the Arrow stream of `data` into `db` (see the module doc).
pub(crate) fn load_arrow<'py>(
    py: Python<'py>,
    db: &plexus::Database,
    data: &Bound<'py, PyAny>,
    target: Target,
) -> Result<Bound<'py, PyDict>, Failure> {
    if !data.hasattr("__arrow_c_stream__").unwrap_or(false) {
        return Err(argument(
            "load_arrow() takes an object with __arrow_c_stream__ (a pyarrow Table or \
             RecordBatchReader, …); for a pandas DataFrame use load_pandas()"
                .into(),
        ));
    }
    let capsule = data
        .call_method0("__arrow_c_stream__")
        .map_err(|e| argument(format!("__arrow_c_stream__() failed: {e}")))?;
    let capsule = capsule
        .cast::<PyCapsule>()
        .map_err(|_| argument("__arrow_c_stream__() did not return a capsule".into()))?;
    let pointer = capsule
        .pointer_checked(Some(c"arrow_array_stream"))
        .map_err(|e| argument(format!("not an Arrow stream capsule: {e}")))?;
    // SAFETY: the capsule is named "arrow_array_stream", so by the Arrow PyCapsule interface
    // it holds an `ArrowArrayStream`; `from_raw` moves the stream out and leaves a released
    // one behind, which the capsule's destructor then ignores.
    let reader =
        unsafe { arrow::ffi_stream::RecordBatchStreamReader::from_raw(pointer.as_ptr().cast()) }
            .map_err(|e| argument(format!("cannot read the Arrow stream: {e}")))?;
    if let Target::Nodes {
        labels,
        key: Some(key),
    } = &target
    {
        declare_key(db, labels, key)?;
    }
    let mut load = db.bulk_load();
    let mut rows_before = 0usize;
    for batch in reader {
        let batch = batch.map_err(|e| argument(format!("reading the Arrow stream: {e}")))?;
        let columns = batch_columns(&batch).map_err(|e| argument(e.to_string()))?;
        let rows = batch.num_rows();
        let row_error = |row: usize, error: plexus::Error| {
            let mut error = QueryError::from(error);
            error.message = format!("row {}: {}", rows_before + row + 1, error.message);
            Failure::Query(error)
        };
        match &target {
            Target::Nodes { labels, .. } => {
                let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                let added = load.add_nodes(&labels, None, &columns, rows)?;
                if let Some((row, error)) = added.rejected.into_iter().next() {
                    return Err(row_error(row, error));
                }
            }
            Target::Rels { rel_type, src, dst } => {
                let column = |name: &str| {
                    (columns.iter().position(|(n, _)| n == name)).ok_or_else(|| {
                        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
                        argument(format!(
                            "no column '{name}' in the data (columns: {})",
                            names.join(", ")
                        ))
                    })
                };
                let (src_column, dst_column) = (column(&src.1)?, column(&dst.1)?);
                let mut ends = [Vec::with_capacity(rows), Vec::with_capacity(rows)];
                for (end, ((label, name), index)) in [(src, src_column), (dst, dst_column)]
                    .into_iter()
                    .enumerate()
                {
                    for (row, key) in columns[index].1.iter().enumerate() {
                        let found = match key {
                            Value::Null => None,
                            key => load.lookup(label, key)?,
                        };
                        let Some(id) = found else {
                            return Err(Failure::Query(QueryError::runtime(
                                ErrorClass::EntityNotFound,
                                "EntityNotFound",
                                format!(
                                    "row {}: no :{label} node has the key {key:?} (column \
                                     '{name}'), so the relationship has no {} node",
                                    rows_before + row + 1,
                                    if end == 0 { "source" } else { "target" }
                                ),
                            )));
                        };
                        ends[end].push(id);
                    }
                }
                let properties: Vec<(String, Vec<Value>)> = columns
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| *i != src_column && *i != dst_column)
                    .map(|(_, column)| column)
                    .collect();
                let added = load.add_relationships(rel_type, &ends[0], &ends[1], &properties)?;
                if let Some((row, error)) = added.rejected.into_iter().next() {
                    return Err(row_error(row, error));
                }
            }
        }
        rows_before += rows;
    }
    let summary = load.commit()?;
    let dict = PyDict::new(py);
    let set = |k: &str, v: u64| dict.set_item(k, v).map_err(|e| argument(e.to_string()));
    set("nodes", summary.nodes)?;
    set("relationships", summary.relationships)?;
    set("commit_ts", summary.commit_ts)?;
    Ok(dict)
}

/// Makes `key` the primary key of the first label's table: declared as a key constraint when
/// the label has no table, checked against the declared key otherwise (see NODES AND KEYS).
fn declare_key(db: &plexus::Database, labels: &[String], key: &str) -> Result<(), Failure> {
    let Some(label) = labels.first() else {
        return Err(argument("load_arrow() needs a label for nodes".into()));
    };
    let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
    let schema = db.schema();
    if let Some(table) = schema.vertex_tables.iter().find(|t| t.name == *label) {
        return match &table.primary_key {
            Some(existing) if existing == key => Ok(()),
            Some(existing) => Err(argument(format!(
                "key='{key}': table '{label}' has the primary key '{existing}'"
            ))),
            None => Err(argument(format!(
                "key='{key}': table '{label}' exists without a primary key, and one cannot be \
                 added to it"
            ))),
        };
    }
    let statement = format!(
        "CREATE CONSTRAINT IF NOT EXISTS FOR (n:{}) REQUIRE n.{} IS UNIQUE",
        quote(label),
        quote(key)
    );
    db.connect()
        .execute(&statement, &plexus::Params::new())
        .map(drop)
        .map_err(Failure::Query)
}

/// The target the keyword arguments describe: `label` (and `key`) for nodes, `rel_type`,
/// `src` and `dst` for relationships.
pub(crate) fn target(
    label: Option<&Bound<'_, PyAny>>,
    key: Option<String>,
    rel_type: Option<String>,
    src: Option<(String, String)>,
    dst: Option<(String, String)>,
) -> Result<Target, Failure> {
    match (label, rel_type) {
        (Some(label), None) => {
            if src.is_some() || dst.is_some() {
                return Err(argument(
                    "src= and dst= go with rel_type=, not label=".into(),
                ));
            }
            let labels = match label.extract::<String>() {
                Ok(one) => vec![one],
                Err(_) => label
                    .extract::<Vec<String>>()
                    .map_err(|_| argument("label= is a string or a list of strings".into()))?,
            };
            if labels.is_empty() {
                return Err(argument("label= names at least one label".into()));
            }
            Ok(Target::Nodes { labels, key })
        }
        (None, Some(rel_type)) => {
            if key.is_some() {
                return Err(argument("key= goes with label= (nodes)".into()));
            }
            match (src, dst) {
                (Some(src), Some(dst)) => Ok(Target::Rels { rel_type, src, dst }),
                _ => Err(argument(
                    "relationships need src=(label, key column) and dst=(label, key column)".into(),
                )),
            }
        }
        _ => Err(argument(
            "give label= (nodes) or rel_type= (relationships), one of them".into(),
        )),
    }
}
