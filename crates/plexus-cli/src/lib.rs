//! What the `plexus` command-line tool does, as a library so that tests run exactly the code
//! the binary runs. `main.rs` only parses arguments and prints.
//!
//! `plexus shell <db>` is the [`shell`] module (its own design notes there); the rest of this
//! file is `plexus algo validate`.
//!
//! `plexus algo validate <dir>`
//! ============================
//! LDBC Graphalytics conformance of the analytics *as users call them*: through a database
//! and the snapshot API, not on an in-memory CSR. The file reading, parameters and comparison
//! rules are the conformance crate's `plexus_tck::graphalytics` (shared with its in-memory
//! validation); this module supplies the [`Runner`] that goes through Plexus:
//!
//! ```text
//!   EdgeListGraph ──load──▶ one database in a fresh temporary directory (real files):
//!                             vertex table <graph name> (id Int64, primary key)
//!                             edge table <graph>-[LINK {weight Float64}]->(<graph>)
//!                 ──run───▶ pin a snapshot; Projection { labels [<graph>], types [LINK],
//!                             direction Out (directed) | Both (undirected), weight for SSSP }
//!                             plexus::algo::<kernel>(&snapshot, &projection, ..)
//!                           results (VertexId, value) ──read `id` at the snapshot──▶ file ids
//! ```
//!
//! All graphs share one database, so every projection must pick its own graph out of the
//! others by label and edge type. An undirected graph is stored as one edge per pair and read
//! with direction `Both`. Vertices are created in increasing id order, so `VertexId` order
//! (which breaks CDLP ties) is id order, as the specification's smallest-label rule needs.
//! Results are mapped back through the `id` property read at the same snapshot, not through
//! the loader's own table, so the test covers the mapping too.
//!
//! Loads commit in transactions of `LOAD_BATCH` items and report progress as
//! [`Event::Loading`] after every batch; the caller decides what to show.

pub mod graphar;
pub mod import;
mod progress;
pub mod settings_args;
pub mod shell;

use std::path::{Path, PathBuf};

use plexus::algo::{self, Direction, Projection};
use plexus::{
    Config, DataType, Database, DurabilityMode, Error, GraphSnapshot, Value, VertexId,
    VertexTableSpec,
};
use plexus_tck::graphalytics::{
    Case, CaseOutput, CaseReport, EdgeListGraph, Runner, RunnerError, ValidationReport,
    validate_dir_with,
};

/// Vertices or edges per loading transaction.
pub const LOAD_BATCH: usize = 10_000;
/// The edge type every validation graph's edges get.
const EDGE_TYPE: &str = "LINK";
const ID: &str = "id";
const WEIGHT: &str = "weight";

/// What [`validate_graphalytics`] reports while it runs.
pub enum Event<'a> {
    /// After each loading transaction of a graph.
    Loading {
        graph: &'a str,
        edges_done: usize,
        edges_total: usize,
    },
    /// A case finished.
    Case(&'a CaseReport),
}

/// Validate the snapshot analytics against the Graphalytics data in `root` (see the module
/// doc), in a database created under `db_parent` (the system temp dir if `None`) and removed
/// afterwards. Fails only if the database cannot be created; everything else is in the report.
pub fn validate_graphalytics(
    root: &Path,
    db_parent: Option<&Path>,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<ValidationReport, Error> {
    let parent = db_parent.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let dir = ScratchDir::new(&parent)?;
    let config = Config {
        durability: DurabilityMode::Periodic,
        ..Config::default()
    };
    let db = Database::open(&dir.0, config)?;
    let mut runner = PlexusRunner { db: &db, events };
    Ok(validate_dir_with(root, &mut runner))
}

/// A database directory that is removed when dropped (after the database, which is declared
/// later and so dropped first).
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(parent: &Path) -> Result<ScratchDir, Error> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!("plexus-validate-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Loads each graph into the database and runs cases through `plexus::algo`.
struct PlexusRunner<'a> {
    db: &'a Database,
    events: &'a mut dyn FnMut(Event<'_>),
}

/// A graph in the database: its label and its vertices by dense id of the file graph.
struct Loaded {
    label: String,
    vertices: Vec<VertexId>,
}

impl Runner for PlexusRunner<'_> {
    type Loaded = Loaded;

    fn load(&mut self, name: &str, graph: &EdgeListGraph) -> Result<Loaded, RunnerError> {
        let db = self.db;
        let weighted = graph.edges.first().is_some_and(|e| e.2.is_some());
        db.create_vertex_table(
            &VertexTableSpec::new(name)
                .property(ID, DataType::Int64)
                .primary_key(ID),
        )?;
        let edge_props: &[(&str, DataType)] = if weighted {
            &[(WEIGHT, DataType::Float64)]
        } else {
            &[]
        };
        db.create_edge_table(name, EDGE_TYPE, name, edge_props)?;

        let mut vertices = Vec::with_capacity(graph.external_ids.len());
        for batch in graph.external_ids.chunks(LOAD_BATCH) {
            let mut tx = db.begin();
            for &id in batch {
                let id = i64::try_from(id).map_err(|_| format!("vertex id {id} exceeds Int64"))?;
                vertices.push(tx.create_vertex(&[name], &[(ID, Value::from(id))])?);
            }
            tx.commit()?;
        }
        let total = graph.edges.len();
        for (i, batch) in graph.edges.chunks(LOAD_BATCH).enumerate() {
            let mut tx = db.begin();
            for &(src, dst, weight) in batch {
                let weight_prop;
                let props: &[(&str, Value)] = match weight {
                    Some(w) => {
                        weight_prop = [(WEIGHT, Value::from(w))];
                        &weight_prop
                    }
                    None => &[],
                };
                let (src, dst) = (vertices[src as usize], vertices[dst as usize]);
                tx.create_edge(src, EDGE_TYPE, dst, props)?;
            }
            tx.commit()?;
            (self.events)(Event::Loading {
                graph: name,
                edges_done: (i * LOAD_BATCH + batch.len()).min(total),
                edges_total: total,
            });
        }
        Ok(Loaded {
            label: name.to_string(),
            vertices,
        })
    }

    fn run(
        &mut self,
        loaded: &Loaded,
        graph: &EdgeListGraph,
        case: &Case,
    ) -> Result<CaseOutput, RunnerError> {
        let snapshot = self.db.snapshot();
        let projection = Projection::new()
            .vertex_labels(&[&loaded.label])
            .edge_types(&[EDGE_TYPE])
            .direction(if graph.directed {
                Direction::Out
            } else {
                Direction::Both
            });
        let vertex = |dense: u32| {
            loaded
                .vertices
                .get(dense as usize)
                .copied()
                .ok_or_else(|| format!("no vertex with dense id {dense}"))
        };
        let ids = IdMap {
            snapshot: &snapshot,
            graph,
        };
        Ok(match case {
            Case::Bfs(p) => CaseOutput::Depths(ids.values(algo::bfs(
                &snapshot,
                &projection,
                vertex(p.source)?,
            )?)?),
            Case::Cdlp(p) => {
                CaseOutput::Labels(ids.labels(algo::cdlp(&snapshot, &projection, p)?)?)
            }
            Case::Lcc(p) => {
                CaseOutput::Values(ids.values(algo::lcc(&snapshot, &projection, p)?)?)
            }
            Case::Pr(p) => {
                CaseOutput::Values(ids.values(algo::pagerank(&snapshot, &projection, p)?)?)
            }
            Case::Sssp(p) => {
                let weighted = projection.weight(WEIGHT);
                let distances = algo::sssp(&snapshot, &weighted, vertex(p.source)?, p.delta)?;
                CaseOutput::Values(ids.values(distances)?)
            }
            Case::Wcc(p) => {
                CaseOutput::Labels(ids.labels(algo::wcc(&snapshot, &projection, p)?)?)
            }
        })
    }

    fn case_done(&mut self, report: &CaseReport) {
        (self.events)(Event::Case(report));
    }
}

/// Maps snapshot results back to the file graph's dense ids through the `id` property.
struct IdMap<'a> {
    snapshot: &'a GraphSnapshot,
    graph: &'a EdgeListGraph,
}

impl IdMap<'_> {
    fn dense(&self, v: VertexId) -> Result<u32, RunnerError> {
        let id = match self.snapshot.vertex_property(v, ID)? {
            Some(Value::Int(id)) => id,
            other => return Err(format!("vertex {v} has id {other:?}, not an integer").into()),
        };
        u64::try_from(id)
            .ok()
            .and_then(|id| self.graph.dense_id(id))
            .ok_or_else(|| format!("vertex {v} has id {id}, which the graph does not have").into())
    }

    /// Per-vertex values in dense order; every vertex of the graph exactly once.
    fn values<T>(&self, pairs: Vec<(VertexId, T)>) -> Result<Vec<T>, RunnerError> {
        let n = self.graph.external_ids.len();
        let mut values: Vec<Option<T>> = (0..n).map(|_| None).collect();
        for (v, value) in pairs {
            let slot = &mut values[self.dense(v)? as usize];
            if slot.replace(value).is_some() {
                return Err(format!("vertex {v} appears twice in the result").into());
            }
        }
        values
            .into_iter()
            .enumerate()
            .map(|(dense, value)| {
                value.ok_or_else(|| {
                    let id = self.graph.external_ids[dense];
                    format!("vertex {id} is missing from the result").into()
                })
            })
            .collect()
    }

    /// Per-vertex labels (vertices) as dense ids, in dense order.
    fn labels(&self, pairs: Vec<(VertexId, VertexId)>) -> Result<Vec<u32>, RunnerError> {
        let labelled = pairs
            .into_iter()
            .map(|(v, label)| Ok((v, self.dense(label)?)))
            .collect::<Result<Vec<_>, RunnerError>>()?;
        self.values(labelled)
    }
}
