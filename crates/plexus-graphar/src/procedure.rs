//! `CALL db.export.graphar(outDir, options)`: a running database writes one pinned snapshot as
//! GraphAr under its export directory (docs/graphar.md).
//!
//! The facade cannot call this crate (it is built on the facade), so the program that opens
//! the database — `plexus serve`, `plexus shell`, an embedding application — calls
//! [`register_procedures`] once at start; every connection opened afterwards has the
//! procedure (see `plexus::Database::register_procedure`).
//!
//! ```text
//! CALL db.export.graphar('snapshots/monday', {chunkSize: 100000})
//!   YIELD directory, graphFile, vertices, edges, vertexTypes, edgeTypes
//! ```
//!
//! - `outDir` names a directory *under the export directory* as `COPY ... REPORT` names a
//!   file (`'snap'`, `'file:///snap'`): `..` that climbs out and symbolic links leading out
//!   are refused (`plexus_ingest::ExportDir`), as is the export directory itself; the target
//!   is created and must be new or empty. A database without an export directory refuses.
//! - `options` (a map; optional, `{}` when left out): `chunkSize`, `edgeChunkSize`, `labels`,
//!   `types`, `name`, `keepIds` (true, or the property's name), `format` (`'parquet'`,
//!   `'csv'`) — the CLI's `--chunk-size`, `--edge-chunk-size`, `--labels`, `--types`,
//!   `--name`, `--keep-ids`, `--format`.
//!   The name defaults to the directory's last component when that is a plain file name
//!   (letters, digits, `_`, `-`, `.`), else `graph`; a given name must be such a name.
//! - The export runs on a snapshot-isolation transaction of its own, begun when the
//!   procedure runs: the files show the committed database at that instant, not the calling
//!   transaction's uncommitted writes, while other writers keep committing.
//! - It yields one row; `directory` and `graphFile` are relative to the export directory
//!   (messages never show the server's absolute paths).

use std::path::Path;
use std::sync::Arc;

use plexus::{
    CypherValue, Database, DatabaseHandle, ErrorClass, Procedure, ProcedureFn, QueryError,
    Transaction,
};

use crate::export::{
    DEFAULT_EDGE_CHUNK_SIZE, DEFAULT_ID_PROPERTY, DEFAULT_VERTEX_CHUNK_SIZE, ExportOptions,
};
use crate::meta::FileType;
use crate::{Error, export::export_handle};

/// The procedure's name.
pub const EXPORT_PROCEDURE: &str = "db.export.graphar";

/// The columns `CALL db.export.graphar` yields, in order.
pub const EXPORT_COLUMNS: [&str; 6] = [
    "directory",
    "graphFile",
    "vertices",
    "edges",
    "vertexTypes",
    "edgeTypes",
];

/// Longest graph name accepted (it becomes a file name).
const MAX_NAME_BYTES: usize = 100;

/// Registers `db.export.graphar` and the `GRAPHAR` format of `ATTACH` on `db`: connections
/// opened afterwards can call the procedure; every connection can attach GraphAr graphs
/// (`crate::mount`, each with a cache of the `attached_graph_cache_bytes` setting).
pub fn register_procedures(db: &Database) {
    db.register_graph_format(
        "GRAPHAR",
        std::sync::Arc::new(|name: &str, path: &std::path::Path, budget: usize| {
            let mounted = crate::mount::Mounted::open(name, path, budget);
            match mounted {
                Ok(graph) => {
                    Ok(std::sync::Arc::new(graph) as std::sync::Arc<dyn plexus::ExternalGraph>)
                }
                Err(e) => Err(e.to_string()),
            }
        }),
    );
    let handle = db.handle();
    let body = move |args: &[CypherValue],
                     _: &mut Transaction|
          -> Result<Vec<Vec<CypherValue>>, QueryError> {
        Ok(vec![export_call(&handle, args)?])
    };
    db.register_procedure(Procedure {
        name: EXPORT_PROCEDURE.into(),
        inputs: vec!["outDir".into(), "options".into()],
        input_types: vec!["STRING".into(), "MAP".into()],
        defaults: vec![CypherValue::Map(Default::default())],
        outputs: EXPORT_COLUMNS.map(String::from).to_vec(),
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    });
}

fn argument(message: impl Into<String>) -> QueryError {
    QueryError::argument(format!("{EXPORT_PROCEDURE}: {}", message.into()))
}

fn refused(code: &'static str, message: impl Into<String>) -> QueryError {
    QueryError::runtime(
        ErrorClass::ExternalResourceFailed,
        code,
        format!("{EXPORT_PROCEDURE}: {}", message.into()),
    )
}

/// Whether `name` can be the graph's name: a plain file name, no dot first.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && !name.starts_with('.')
        && (name.bytes()).all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// One call: checks the arguments, resolves the directory, exports, and returns the row.
fn export_call(db: &DatabaseHandle, args: &[CypherValue]) -> Result<Vec<CypherValue>, QueryError> {
    let out = match args.first() {
        Some(CypherValue::String(out)) => out.to_string(),
        Some(other) => {
            return Err(argument(format!(
                "outDir must be a string, not {}",
                other.type_name()
            )));
        }
        None => return Err(argument("outDir is missing")),
    };
    let mut options = parse_options(args.get(1))?;
    let default_name = out.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let name = match options.name.take() {
        Some(name) if plain_name(&name) => name,
        Some(name) => {
            return Err(argument(format!(
                "name {name:?} must be a plain file name (letters, digits, '_', '-', '.'; \
                 not starting with '.')"
            )));
        }
        None if plain_name(default_name) => default_name.to_string(),
        None => "graph".to_string(),
    };
    let Some(dir) = db.export_dir() else {
        return Err(refused(
            "NoExportDirectory",
            "writes under the export directory, and this database has none (set \
             export_directory; a database in memory has none by default)",
        ));
    };
    // The graph file's name, resolved, creates and checks every directory on the way.
    let resolved = (dir.resolve(&format!("{out}/{name}.graph.yml")))
        .map_err(|e| refused("FileLocationRefused", e.to_string()))?;
    let target = resolved.path.parent().unwrap_or(dir.root());
    let directory = match resolved.name.rsplit_once('/') {
        Some((directory, _)) if target != dir.root() => directory.to_string(),
        _ => {
            return Err(refused(
                "FileLocationRefused",
                format!(
                    "'{out}' names the export directory itself; export into a directory under it"
                ),
            ));
        }
    };
    let export_options = ExportOptions {
        name: name.clone(),
        vertex_chunk_size: options.chunk_size.unwrap_or(DEFAULT_VERTEX_CHUNK_SIZE),
        edge_chunk_size: (options.edge_chunk_size)
            .or(options.chunk_size)
            .unwrap_or(DEFAULT_EDGE_CHUNK_SIZE),
        labels: options.labels,
        types: options.types,
        keep_ids: options.keep_ids,
        file_type: options.file_type,
    };
    let summary = export_handle(db, target, &export_options)
        .map_err(|e| refused("ExportFailed", relative_message(e, dir.root())))?;
    let count = |n: u64| CypherValue::Int(i64::try_from(n).unwrap_or(i64::MAX));
    Ok(vec![
        CypherValue::string(&directory),
        CypherValue::string(&format!("{directory}/{name}.graph.yml")),
        count(summary.vertices),
        count(summary.edges),
        count(summary.vertex_types as u64),
        count(summary.edge_types as u64),
    ])
}

/// An export error with paths relative to the export directory.
fn relative_message(e: Error, root: &Path) -> String {
    match e {
        Error::File { path, message } => match path.strip_prefix(root) {
            Ok(relative) => format!("{}: {message}", relative.display()),
            Err(_) => message,
        },
        Error::Database(message) => message,
    }
}

/// The options map, parsed (`name` checked by the caller).
#[derive(Default)]
struct CallOptions {
    name: Option<String>,
    chunk_size: Option<u64>,
    edge_chunk_size: Option<u64>,
    labels: Option<Vec<String>>,
    types: Option<Vec<String>>,
    keep_ids: Option<String>,
    file_type: FileType,
}

fn parse_options(value: Option<&CypherValue>) -> Result<CallOptions, QueryError> {
    let mut options = CallOptions::default();
    let map = match value {
        None | Some(CypherValue::Null) => return Ok(options),
        Some(CypherValue::Map(map)) => map,
        Some(other) => {
            return Err(argument(format!(
                "options must be a map, not {}",
                other.type_name()
            )));
        }
    };
    for (key, value) in map.iter() {
        let wrong = |what: &str| argument(format!("option '{key}' must be {what}"));
        let positive = || match value {
            CypherValue::Int(n) if *n >= 1 => Ok(*n as u64),
            _ => Err(wrong("a positive integer")),
        };
        let strings = || match value {
            CypherValue::List(items) => (items.iter())
                .map(|item| match item {
                    CypherValue::String(s) => Ok(s.to_string()),
                    _ => Err(wrong("a list of strings")),
                })
                .collect::<Result<Vec<_>, _>>(),
            _ => Err(wrong("a list of strings")),
        };
        match &**key {
            "chunkSize" => options.chunk_size = Some(positive()?),
            "edgeChunkSize" => options.edge_chunk_size = Some(positive()?),
            "labels" => options.labels = Some(strings()?),
            "types" => options.types = Some(strings()?),
            "name" => match value {
                CypherValue::String(name) => options.name = Some(name.to_string()),
                _ => return Err(wrong("a string")),
            },
            "keepIds" => match value {
                CypherValue::Bool(true) => options.keep_ids = Some(DEFAULT_ID_PROPERTY.into()),
                CypherValue::Bool(false) => options.keep_ids = None,
                CypherValue::String(name) if !name.is_empty() => {
                    options.keep_ids = Some(name.to_string())
                }
                _ => return Err(wrong("a boolean or a property name")),
            },
            "format" => match value {
                CypherValue::String(f) if f.eq_ignore_ascii_case("parquet") => {
                    options.file_type = FileType::Parquet
                }
                CypherValue::String(f) if f.eq_ignore_ascii_case("csv") => {
                    options.file_type = FileType::Csv
                }
                _ => return Err(wrong("'parquet' or 'csv'")),
            },
            _ => {
                return Err(argument(format!(
                    "unknown option '{key}' (chunkSize, edgeChunkSize, labels, types, name, \
                     keepIds, format)"
                )));
            }
        }
    }
    Ok(options)
}
