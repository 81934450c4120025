//! Attached graphs: `ATTACH GRAPHAR '<graph.yml>' AS name`, `USE name MATCH …`,
//! `DETACH GRAPH name`, `SHOW GRAPHS`.
//!
//! WHAT
//! ====
//! An attached graph is a read-only graph left in its files (a GraphAr directory in a data
//! lake) that statements read in place: `USE name` before a statement runs it in a read-only
//! transaction over the graph ([`plexus_txn::begin_external`]), so every read clause,
//! expression, procedure and result conversion works on it unchanged; its analytics
//! procedures (`USE lake CALL algo.pagerank()`) read its edge lists. A statement reads one
//! graph; writes are refused (`GraphIsReadOnly`). Inside an explicit transaction (drivers
//! wrap every statement in one) a `USE` statement still runs in its own read-only transaction
//! over the graph: it neither sees nor joins the explicit one, which goes on — an attached
//! graph never changes, so there is nothing for the two to agree on.
//!
//! Formats are registered by the crates that read them (the facade cannot depend on them):
//! `plexus_graphar::register_procedures` registers `GRAPHAR`. Attachments belong to the
//! database — every connection sees them — and end with `DETACH GRAPH` or when the database
//! closes; statements already running keep reading a detached graph to their end.
//!
//! FILES
//! =====
//! A connection serving a remote client (Bolt, HTTP: [`crate::Connection::confine_files`])
//! attaches only files under the import directory, resolved like `LOAD CSV`'s (`..` and
//! symlinks out of it refused); an embedded connection attaches any path.

use parking_lot::Mutex;
use plexus_exec::{ErrorClass, QueryError, QueryResult, Value};
use plexus_txn::ExternalGraph;
use std::path::Path;
use std::sync::Arc;

/// Opens a graph of one format: (name to attach it under, file, cache budget in bytes — the
/// `attached_graph_cache_bytes` setting) → the graph, or the reason.
pub type GraphFormat =
    Arc<dyn Fn(&str, &Path, usize) -> Result<Arc<dyn ExternalGraph>, String> + Send + Sync>;

/// The columns of `ATTACH` and `SHOW GRAPHS`.
pub const GRAPH_COLUMNS: [&str; 5] = ["name", "format", "file", "vertices", "relationships"];

/// The database's graph formats and attached graphs (see the module docs).
#[derive(Default)]
pub(crate) struct AttachedGraphs {
    formats: Mutex<Vec<(String, GraphFormat)>>,
    graphs: Mutex<Vec<Attachment>>,
}

struct Attachment {
    name: String,
    format: String,
    /// As shown: relative to the import directory, or as given.
    file: String,
    graph: Arc<dyn ExternalGraph>,
}

impl Attachment {
    fn row(&self) -> Vec<Value> {
        let vertices: u64 = (self.graph.vertex_tables().iter())
            .map(|t| u64::from(t.count))
            .sum();
        let edges: u64 = (self.graph.edge_tables().iter())
            .map(|t| u64::from(t.count))
            .sum();
        vec![
            Value::string(&self.name),
            Value::string(&self.format),
            Value::string(&self.file),
            Value::Int(vertices as i64),
            Value::Int(edges as i64),
        ]
    }
}

impl AttachedGraphs {
    /// Registers (or replaces) format `name` (matched without regard to case).
    pub(crate) fn register_format(&self, name: &str, open: GraphFormat) {
        let mut formats = self.formats.lock();
        formats.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        formats.push((name.to_ascii_uppercase(), open));
    }

    /// `ATTACH format 'file' AS name`, the file already resolved to `path`; a server's
    /// connection passes its import directory as `hidden`, which errors then do not name.
    pub(crate) fn attach(
        &self,
        format: &str,
        (path, shown): (&Path, String),
        name: &str,
        (hidden, cache_budget_bytes): (Option<&Path>, usize),
    ) -> Result<QueryResult, QueryError> {
        let open = {
            let formats = self.formats.lock();
            let found = formats.iter().find(|(n, _)| n.eq_ignore_ascii_case(format));
            match found {
                Some((_, open)) => open.clone(),
                None => {
                    let known: Vec<&str> = formats.iter().map(|(n, _)| n.as_str()).collect();
                    return Err(graph_error(
                        ErrorClass::ArgumentError,
                        "UnknownGraphFormat",
                        format!(
                            "no graph format '{format}' (known: {})",
                            if known.is_empty() {
                                "none registered".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    ));
                }
            }
        };
        if self.find(name).is_some() {
            return Err(graph_error(
                ErrorClass::ArgumentError,
                "GraphAlreadyAttached",
                format!("a graph named '{name}' is attached already; DETACH GRAPH {name} first"),
            ));
        }
        let graph = open(name, path, cache_budget_bytes).map_err(|mut reason| {
            if let Some(root) = hidden {
                reason = reason.replace(&format!("{}/", root.display()), "");
            }
            graph_error(
                ErrorClass::ExternalResourceFailed,
                "GraphUnreadable",
                format!("cannot attach '{shown}' as '{name}': {reason}"),
            )
        })?;
        let attachment = Attachment {
            name: name.to_string(),
            format: format.to_ascii_uppercase(),
            file: shown,
            graph,
        };
        let row = attachment.row();
        let mut graphs = self.graphs.lock();
        // Checked again: another connection may have attached the name meanwhile.
        if graphs.iter().any(|g| g.name.eq_ignore_ascii_case(name)) {
            return Err(graph_error(
                ErrorClass::ArgumentError,
                "GraphAlreadyAttached",
                format!("a graph named '{name}' is attached already; DETACH GRAPH {name} first"),
            ));
        }
        graphs.push(attachment);
        Ok(graph_rows(vec![row]))
    }

    /// `DETACH GRAPH name`.
    pub(crate) fn detach(&self, name: &str) -> Result<QueryResult, QueryError> {
        let mut graphs = self.graphs.lock();
        let Some(at) = graphs
            .iter()
            .position(|g| g.name.eq_ignore_ascii_case(name))
        else {
            return Err(not_attached(name));
        };
        let row = graphs.remove(at).row();
        Ok(graph_rows(vec![row]))
    }

    /// `SHOW GRAPHS`.
    pub(crate) fn show(&self) -> QueryResult {
        graph_rows(self.graphs.lock().iter().map(Attachment::row).collect())
    }

    /// The graph `USE name` reads.
    pub(crate) fn get(&self, name: &str) -> Result<Arc<dyn ExternalGraph>, QueryError> {
        self.find(name).ok_or_else(|| not_attached(name))
    }

    fn find(&self, name: &str) -> Option<Arc<dyn ExternalGraph>> {
        let graphs = self.graphs.lock();
        let found = graphs.iter().find(|g| g.name.eq_ignore_ascii_case(name));
        found.map(|g| g.graph.clone())
    }
}

fn graph_rows(rows: Vec<Vec<Value>>) -> QueryResult {
    QueryResult {
        columns: GRAPH_COLUMNS.map(String::from).to_vec(),
        rows,
        ..QueryResult::default()
    }
}

fn not_attached(name: &str) -> QueryError {
    graph_error(
        ErrorClass::EntityNotFound,
        "GraphNotFound",
        format!("no graph named '{name}' is attached (SHOW GRAPHS lists them)"),
    )
}

pub(crate) fn graph_error(class: ErrorClass, code: &'static str, message: String) -> QueryError {
    QueryError::runtime(class, code, message)
}
