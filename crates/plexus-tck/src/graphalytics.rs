//! Validation of the kernels against the LDBC Graphalytics reference outputs.
//!
//! A conformance suite like the openCypher TCK, so it lives in the conformance crate and, like
//! every front end, reaches the engine through the facade only: kernels, parameters and the
//! CSR [`Graph`] are `plexus::algo`'s.
//!
//! THE DATA
//! ========
//! `validate_dir(root)` reads a copy of the Graphalytics validation data:
//!
//! ```text
//!   root/properties/<graph>.properties   graph.<graph>.directed = true
//!                                        graph.<graph>.algorithms = bfs, cdlp, lcc, pr, sssp, wcc
//!                                        graph.<graph>.bfs.source-vertex = 1   (and so on)
//!   root/example/example-directed.{v,e}  vertex file (one id per line), edge file (src dst [w])
//!   root/example/example-directed-BFS    expected output: "vertexId value" per line
//!   root/bfs/dir-input, dir-output       adjacency list "v n1 n2 …" and its expected output
//!   root/sssp/dir-input.{v,e}, dir-output
//! ```
//!
//! A properties file's graph is found, in this order:
//! 1. its `vertex-file` and `edge-file` in `root` or one of its immediate subdirectories
//!    (the example graphs); expected outputs are `<graph>-<ALGO>` beside them;
//! 2. for a graph named `test-<algo>-<directed|undirected>`: `root/<algo>/<dir|undir>-input`,
//!    as `.v`/`.e` files if present, else as one adjacency-list file; the expected output of
//!    `<algo>` is `root/<algo>/<dir|undir>-output`.
//!
//! Properties files whose graph is in neither place (the large benchmark graphs) are listed as
//! skipped. An undirected adjacency list names each edge at both ends; it is read as a set of
//! unordered pairs.
//!
//! IDS
//! ===
//! External ids (`u64`) are mapped to dense ids in increasing order, so dense order is external
//! order: CDLP's "smallest label" tie-break and WCC's smallest-id labels mean the same under
//! both numberings. Kernel labels are mapped back to external ids for comparison.
//!
//! RUNNERS
//! =======
//! The validator owns everything the specification fixes — finding the files, reading them
//! into an [`EdgeListGraph`], turning `properties/` into kernel parameters ([`Case`]), and
//! the comparison rules — and asks a [`Runner`] only to load a graph and run a case:
//!
//! ```text
//!   properties + files ──▶ EdgeListGraph ──Runner::load──▶ Loaded ──Runner::run(Case)──▶ output
//!                                                                                        │
//!                              expected output file ──▶ rules (exact / bijection / 1e-4) ◀┘
//! ```
//!
//! [`validate_dir`] uses [`CsrRunner`] (a [`Graph`] in memory); `plexus algo validate` uses
//! a runner that loads every graph into a Plexus database and runs the snapshot API, so both
//! paths are held to the same rules by the same code. A runner's outputs are indexed by the
//! dense ids of the [`EdgeListGraph`], and CDLP/WCC labels are dense ids of vertices.
//!
//! RULES (from the Graphalytics specification)
//! ===========================================
//! - BFS, CDLP: exact;
//! - WCC: equal up to a bijection between our and the expected labels;
//! - PR, LCC, SSSP: `|expected − actual| ≤ 1e-4 · |expected|`, and an infinity equals only
//!   the same infinity;
//! - every vertex of the graph must appear exactly once in the expected output.
//!
//! ERRORS
//! ======
//! Nothing read from a file is trusted: a malformed line, an unknown or duplicate vertex id, a
//! missing or bad property becomes a [`ValidationError`] naming the file and line. Errors of
//! one case are reported in that case and validation goes on with the next.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use plexus::algo::kernels::{bfs, cdlp, lcc, pagerank, sssp, wcc};
use plexus::algo::{
    BfsParams, CdlpParams, Edge, Graph, GraphError, LccParams, PageRankParams, SsspParams,
    WccParams,
};

/// Relative error allowed for PR, LCC and SSSP.
pub const EPSILON: f64 = 1e-4;
/// How many mismatches of a failed case are kept for the report.
pub const MAX_REPORTED_MISMATCHES: usize = 5;

/// The six Graphalytics algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    Bfs,
    Cdlp,
    Lcc,
    Pr,
    Sssp,
    Wcc,
}

impl Algorithm {
    /// From a name as written in properties files (`bfs`, `pr`, …), case-insensitive.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Some(match name.to_ascii_lowercase().as_str() {
            "bfs" => Algorithm::Bfs,
            "cdlp" => Algorithm::Cdlp,
            "lcc" => Algorithm::Lcc,
            "pr" => Algorithm::Pr,
            "sssp" => Algorithm::Sssp,
            "wcc" => Algorithm::Wcc,
            _ => return None,
        })
    }

    /// The name as used in output file names (`BFS`, `PR`, …).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bfs => "BFS",
            Algorithm::Cdlp => "CDLP",
            Algorithm::Lcc => "LCC",
            Algorithm::Pr => "PR",
            Algorithm::Sssp => "SSSP",
            Algorithm::Wcc => "WCC",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Something wrong with the validation data, or a kernel refusing its parameters.
#[derive(Debug, thiserror::Error)]
pub enum ValidationError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}:{line}: unknown vertex id {id}", path.display())]
    UnknownVertex { path: PathBuf, line: usize, id: u64 },
    #[error("{}:{line}: vertex id {id} listed twice", path.display())]
    DuplicateVertex { path: PathBuf, line: usize, id: u64 },
    #[error("{}: missing property {key}", path.display())]
    MissingProperty { path: PathBuf, key: String },
    #[error("{}:{line}: property {key} = {value:?}: {reason}", path.display())]
    BadProperty {
        path: PathBuf,
        line: usize,
        key: String,
        value: String,
        reason: String,
    },
    #[error("{}: {source}", path.display())]
    Graph { path: PathBuf, source: GraphError },
    #[error("no expected output for {algorithm} of graph {graph}")]
    NoExpectedOutput { graph: String, algorithm: Algorithm },
    #[error("{0}")]
    Runner(RunnerError),
}

/// A graph as read from Graphalytics files: external ids and an edge list over dense ids
/// (positions in `external_ids`). What every [`Runner`] loads.
#[derive(Clone, Debug)]
pub struct EdgeListGraph {
    /// `external_ids[dense]`, strictly increasing.
    pub external_ids: Vec<u64>,
    /// Undirected: each edge once. Weighted iff the graph's SSSP weight was read.
    pub edges: Vec<Edge>,
    pub directed: bool,
}

impl EdgeListGraph {
    /// Dense id of an external vertex id.
    pub fn dense_id(&self, external: u64) -> Option<u32> {
        dense_id(&self.external_ids, external)
    }

    /// Build the CSR [`Graph`]; `path` names the input in errors.
    pub fn into_loaded(self, path: &Path) -> Result<LoadedGraph, ValidationError> {
        let graph = Graph::from_edges(self.external_ids.len(), &self.edges, self.directed)
            .map_err(graph_error(path))?;
        Ok(LoadedGraph {
            graph,
            external_ids: self.external_ids,
        })
    }
}

/// A graph read from Graphalytics files as a CSR [`Graph`], with its id mapping.
#[derive(Clone, Debug)]
pub struct LoadedGraph {
    pub graph: Graph,
    /// `external_ids[dense]`, strictly increasing.
    pub external_ids: Vec<u64>,
}

impl LoadedGraph {
    /// Dense id of an external vertex id.
    pub fn dense_id(&self, external: u64) -> Option<u32> {
        dense_id(&self.external_ids, external)
    }
}

/// Load a `.v` file (one vertex id per line) and an `.e` file (`src dst [properties…]`).
/// `weight_column` picks the edge property used as weight (0 = the third column), if any.
pub fn load_vertex_edge_files(
    vertex_path: &Path,
    edge_path: &Path,
    directed: bool,
    weight_column: Option<usize>,
) -> Result<LoadedGraph, ValidationError> {
    read_vertex_edge_files(vertex_path, edge_path, directed, weight_column)?.into_loaded(edge_path)
}

/// Load an adjacency-list file: `v n1 n2 …` per line (see [`read_adjacency_file`]).
pub fn load_adjacency_file(path: &Path, directed: bool) -> Result<LoadedGraph, ValidationError> {
    read_adjacency_file(path, directed)?.into_loaded(path)
}

/// Read a `.v` and an `.e` file as [`load_vertex_edge_files`] does, without building a CSR.
pub fn read_vertex_edge_files(
    vertex_path: &Path,
    edge_path: &Path,
    directed: bool,
    weight_column: Option<usize>,
) -> Result<EdgeListGraph, ValidationError> {
    let text = read(vertex_path)?;
    let mut ids: Vec<(u64, usize)> = Vec::new();
    for (line, tokens) in lines(&text) {
        match tokens.as_slice() {
            [id] => ids.push((parse_id(id, vertex_path, line)?, line)),
            _ => return Err(parse_error(vertex_path, line, "expected one vertex id")),
        }
    }
    ids.sort_by_key(|&(id, _)| id); // stable: the first occurrence stays first
    if let Some(pair) = ids.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(ValidationError::DuplicateVertex {
            path: vertex_path.to_owned(),
            line: pair[1].1,
            id: pair[1].0,
        });
    }
    let external_ids: Vec<u64> = ids.into_iter().map(|(id, _)| id).collect();

    let text = read(edge_path)?;
    let columns = 2 + weight_column.map_or(0, |c| c + 1);
    let mut edges: Vec<Edge> = Vec::new();
    for (line, tokens) in lines(&text) {
        if tokens.len() < columns {
            let message = format!("expected at least {columns} columns");
            return Err(parse_error(edge_path, line, &message));
        }
        let src = dense(&external_ids, tokens[0], edge_path, line)?;
        let dst = dense(&external_ids, tokens[1], edge_path, line)?;
        let weight = match weight_column {
            Some(c) => Some(tokens[2 + c].parse::<f64>().map_err(|_| {
                parse_error(edge_path, line, &format!("bad weight {:?}", tokens[2 + c]))
            })?),
            None => None,
        };
        edges.push((src, dst, weight));
    }
    Ok(EdgeListGraph {
        external_ids,
        edges,
        directed,
    })
}

/// Read an adjacency-list file: `v n1 n2 …` per line. Vertices are all ids that appear. An
/// undirected list names each edge at both ends; it becomes one undirected edge.
pub fn read_adjacency_file(path: &Path, directed: bool) -> Result<EdgeListGraph, ValidationError> {
    let text = read(path)?;
    let mut external_ids = Vec::new();
    for (line, tokens) in lines(&text) {
        for token in tokens {
            external_ids.push(parse_id(token, path, line)?);
        }
    }
    external_ids.sort_unstable();
    external_ids.dedup();
    let mut edges: Vec<Edge> = Vec::new();
    for (line, tokens) in lines(&text) {
        let Some((head, rest)) = tokens.split_first() else {
            continue;
        };
        let v = dense(&external_ids, head, path, line)?;
        for token in rest {
            let u = dense(&external_ids, token, path, line)?;
            edges.push(if directed || v <= u {
                (v, u, None)
            } else {
                (u, v, None)
            });
        }
    }
    if !directed {
        edges.sort_unstable_by_key(|&(s, d, _)| (s, d));
        edges.dedup_by_key(|&mut (s, d, _)| (s, d));
    }
    Ok(EdgeListGraph {
        external_ids,
        edges,
        directed,
    })
}

/// One kernel run a case asks for, with its parameters from the properties file; vertices
/// are dense ids of the [`EdgeListGraph`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Case {
    Bfs(BfsParams),
    Cdlp(CdlpParams),
    Lcc(LccParams),
    Pr(PageRankParams),
    Sssp(SsspParams),
    Wcc(WccParams),
}

/// What a [`Runner`] returns for a case, indexed by dense id of the [`EdgeListGraph`].
#[derive(Clone, Debug, PartialEq)]
pub enum CaseOutput {
    /// BFS depths ([`plexus::algo::BFS_UNREACHABLE`] when unreachable).
    Depths(Vec<i64>),
    /// CDLP and WCC labels, each the dense id of a vertex.
    Labels(Vec<u32>),
    /// PR, LCC and SSSP values.
    Values(Vec<f64>),
}

/// How a validation loads a graph and runs a case; the file reading, parameters and
/// comparison rules are the validator's. [`CsrRunner`] builds a [`Graph`] in memory; the CLI's
/// runner loads each graph into a Plexus database and runs the snapshot API.
pub trait Runner {
    /// A graph as the runner loaded it.
    type Loaded;
    /// Load `graph` (named `name`, unique within a validation run) once for all its cases.
    fn load(&mut self, name: &str, graph: &EdgeListGraph) -> Result<Self::Loaded, RunnerError>;
    /// Run `case` on a loaded graph.
    fn run(
        &mut self,
        loaded: &Self::Loaded,
        graph: &EdgeListGraph,
        case: &Case,
    ) -> Result<CaseOutput, RunnerError>;
    /// Called with each case's report as soon as it is known (to print progress).
    fn case_done(&mut self, _report: &CaseReport) {}
}

/// Whatever a [`Runner`] fails with.
pub type RunnerError = Box<dyn std::error::Error + Send + Sync>;

/// The in-memory runner: [`Graph::from_edges`] and the [`plexus::algo::kernels`].
#[derive(Clone, Copy, Debug, Default)]
pub struct CsrRunner;

impl Runner for CsrRunner {
    type Loaded = Graph;

    fn load(&mut self, _name: &str, graph: &EdgeListGraph) -> Result<Graph, RunnerError> {
        let n = graph.external_ids.len();
        Ok(Graph::from_edges(n, &graph.edges, graph.directed)?)
    }

    fn run(
        &mut self,
        g: &Graph,
        _: &EdgeListGraph,
        case: &Case,
    ) -> Result<CaseOutput, RunnerError> {
        Ok(match case {
            Case::Bfs(params) => CaseOutput::Depths(bfs(g, params)?),
            Case::Cdlp(params) => CaseOutput::Labels(cdlp(g, params)),
            Case::Lcc(params) => CaseOutput::Values(lcc(g, params)),
            Case::Pr(params) => CaseOutput::Values(pagerank(g, params)?),
            Case::Sssp(params) => CaseOutput::Values(sssp(g, params)?),
            Case::Wcc(params) => CaseOutput::Labels(wcc(g, params)),
        })
    }
}

/// One (graph, algorithm) comparison.
#[derive(Debug)]
pub struct CaseReport {
    pub graph: String,
    pub algorithm: Algorithm,
    pub outcome: Outcome,
}

#[derive(Debug)]
pub enum Outcome {
    Passed {
        vertices: usize,
    },
    Failed {
        mismatch_count: usize,
        /// The first [`MAX_REPORTED_MISMATCHES`] mismatches, e.g. `vertex 5: expected 2, got 3`.
        first_mismatches: Vec<String>,
    },
    /// The case could not be run (bad input file, missing property, …).
    Error(String),
}

impl CaseReport {
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed { .. })
    }
}

impl fmt::Display for CaseReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head = format!("{} {}", self.graph, self.algorithm);
        match &self.outcome {
            Outcome::Passed { vertices } => write!(f, "PASS  {head} ({vertices} vertices)"),
            Outcome::Failed {
                mismatch_count,
                first_mismatches,
            } => write!(
                f,
                "FAIL  {head}: {mismatch_count} mismatches; {}",
                first_mismatches.join("; ")
            ),
            Outcome::Error(message) => write!(f, "ERROR {head}: {message}"),
        }
    }
}

/// Everything `validate_dir` found.
#[derive(Debug, Default)]
pub struct ValidationReport {
    pub cases: Vec<CaseReport>,
    /// Graphs with a properties file but no data here (the large benchmark graphs).
    pub skipped_graphs: Vec<String>,
    /// Problems not tied to one case (unreadable directory, malformed properties file).
    pub problems: Vec<ValidationError>,
}

impl ValidationReport {
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.passed()).count()
    }

    /// Failed cases plus problems.
    pub fn failed(&self) -> usize {
        self.cases.len() - self.passed() + self.problems.len()
    }

    pub fn all_passed(&self) -> bool {
        !self.cases.is_empty() && self.failed() == 0
    }

    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed(), self.failed())
    }
}

/// Validate every graph under `root` (see the module doc) with the in-memory [`CsrRunner`].
pub fn validate_dir(root: &Path) -> ValidationReport {
    validate_dir_with(root, &mut CsrRunner)
}

/// Validate every graph under `root` (see the module doc), loading and running through
/// `runner`.
pub fn validate_dir_with<R: Runner>(root: &Path, runner: &mut R) -> ValidationReport {
    let mut report = ValidationReport::default();
    let properties_dir = root.join("properties");
    let listed = list_dir(&properties_dir).and_then(|props| Ok((props, list_dir(root)?)));
    let (property_files, root_entries) = match listed {
        Ok(listed) => listed,
        Err(e) => {
            report.problems.push(e);
            return report;
        }
    };
    let data_dirs: Vec<PathBuf> = std::iter::once(root.to_owned())
        .chain(root_entries.into_iter().filter(|p| p.is_dir()))
        .collect();
    for path in property_files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "properties"))
    {
        if let Err(e) = validate_graph(root, &data_dirs, path, runner, &mut report) {
            report.problems.push(e);
        }
    }
    report
}

/// `|expected − actual| ≤ EPSILON · |expected|`; an infinity equals only itself.
pub fn epsilon_equal(expected: f64, actual: f64) -> bool {
    if expected.is_infinite() || actual.is_infinite() {
        return expected == actual;
    }
    (expected - actual).abs() <= EPSILON * expected.abs()
}

/// Where a graph's files are.
enum Input {
    VertexEdge { vertices: PathBuf, edges: PathBuf },
    Adjacency(PathBuf),
}

/// Where the expected outputs are.
enum Outputs {
    /// `dir/<graph>-<ALGO>` for every algorithm.
    PerAlgorithm { dir: PathBuf },
    /// One file, for one algorithm.
    Single { algorithm: Algorithm, path: PathBuf },
}

fn validate_graph<R: Runner>(
    root: &Path,
    data_dirs: &[PathBuf],
    props_path: &Path,
    runner: &mut R,
    report: &mut ValidationReport,
) -> Result<(), ValidationError> {
    let props = Properties::read(props_path)?;
    let Some((input, outputs)) = locate(root, data_dirs, &props) else {
        report.skipped_graphs.push(props.graph.clone());
        return Ok(());
    };
    let directed = props.parse::<bool>("directed")?;
    let (algorithms_text, line) = props.get("algorithms")?;
    let algorithms = algorithms_text
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| {
            Algorithm::from_name(name).ok_or_else(|| ValidationError::BadProperty {
                path: props.path.clone(),
                line,
                key: props.key("algorithms"),
                value: algorithms_text.to_owned(),
                reason: format!("unknown algorithm {name:?}"),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let weight_column = if algorithms.contains(&Algorithm::Sssp) {
        Some(props.weight_column()?)
    } else {
        None
    };
    let read = match &input {
        Input::VertexEdge { vertices, edges } => {
            read_vertex_edge_files(vertices, edges, directed, weight_column)
        }
        Input::Adjacency(path) => read_adjacency_file(path, directed),
    };
    let loaded = read.map_err(|e| e.to_string()).and_then(|graph| {
        let loaded = runner
            .load(&props.graph, &graph)
            .map_err(|e| format!("loading: {e}"))?;
        Ok((graph, loaded))
    });
    for algorithm in algorithms {
        let outcome = loaded
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|(graph, loaded)| {
                let expected = match &outputs {
                    Outputs::PerAlgorithm { dir } => {
                        Some(dir.join(format!("{}-{}", props.graph, algorithm.name())))
                    }
                    Outputs::Single { algorithm: a, path } if *a == algorithm => Some(path.clone()),
                    Outputs::Single { .. } => None,
                };
                let expected = expected.ok_or_else(|| {
                    ValidationError::NoExpectedOutput {
                        graph: props.graph.clone(),
                        algorithm,
                    }
                    .to_string()
                })?;
                let case = props.case(algorithm, graph).map_err(|e| e.to_string())?;
                let output = runner
                    .run(loaded, graph, &case)
                    .map_err(|e| format!("running: {e}"))?;
                check(graph, algorithm, output, &expected).map_err(|e| e.to_string())
            })
            .unwrap_or_else(Outcome::Error);
        let case = CaseReport {
            graph: props.graph.clone(),
            algorithm,
            outcome,
        };
        runner.case_done(&case);
        report.cases.push(case);
    }
    Ok(())
}

fn locate(root: &Path, data_dirs: &[PathBuf], props: &Properties) -> Option<(Input, Outputs)> {
    if let (Ok((vertex_file, _)), Ok((edge_file, _))) =
        (props.get("vertex-file"), props.get("edge-file"))
    {
        for dir in data_dirs {
            let (vertices, edges) = (dir.join(vertex_file), dir.join(edge_file));
            if vertices.is_file() && edges.is_file() {
                let outputs = Outputs::PerAlgorithm { dir: dir.clone() };
                return Some((Input::VertexEdge { vertices, edges }, outputs));
            }
        }
    }
    let (algo, kind) = props.graph.strip_prefix("test-")?.rsplit_once('-')?;
    let algorithm = Algorithm::from_name(algo)?;
    let short = match kind {
        "directed" => "dir",
        "undirected" => "undir",
        _ => return None,
    };
    let dir = root.join(algo);
    let base = dir.join(format!("{short}-input"));
    let (vertices, edges) = (base.with_extension("v"), base.with_extension("e"));
    let input = if vertices.is_file() && edges.is_file() {
        Input::VertexEdge { vertices, edges }
    } else if base.is_file() {
        Input::Adjacency(base)
    } else {
        return None;
    };
    let path = dir.join(format!("{short}-output"));
    Some((input, Outputs::Single { algorithm, path }))
}

/// Compare a runner's output for `algorithm` with the expected output file (see RULES).
fn check(
    graph: &EdgeListGraph,
    algorithm: Algorithm,
    output: CaseOutput,
    expected_path: &Path,
) -> Result<Outcome, ValidationError> {
    let ids = &graph.external_ids;
    let n = ids.len();
    let output_len = match &output {
        CaseOutput::Depths(v) => v.len(),
        CaseOutput::Labels(v) => v.len(),
        CaseOutput::Values(v) => v.len(),
    };
    let malformed = |what: &str| {
        ValidationError::Runner(format!("{algorithm}: the runner returned {what}").into())
    };
    if output_len != n {
        return Err(malformed(&format!("{output_len} values for {n} vertices")));
    }
    let mut mismatches = Mismatches::default();
    match (algorithm, output) {
        (Algorithm::Bfs, CaseOutput::Depths(actual)) => {
            let expected = read_expected::<i64>(expected_path, ids)?;
            mismatches.compare(ids, &expected, &actual, |e, a| e == a);
        }
        (Algorithm::Cdlp, CaseOutput::Labels(labels)) => {
            if labels.iter().any(|&l| l as usize >= n) {
                return Err(malformed("a label that is not a vertex"));
            }
            let actual: Vec<u64> = labels.iter().map(|&l| ids[l as usize]).collect();
            let expected = read_expected::<u64>(expected_path, ids)?;
            mismatches.compare(ids, &expected, &actual, |e, a| e == a);
        }
        (Algorithm::Wcc, CaseOutput::Labels(labels)) => {
            if labels.iter().any(|&l| l as usize >= n) {
                return Err(malformed("a label that is not a vertex"));
            }
            let expected = read_expected::<u64>(expected_path, ids)?;
            mismatches.compare_up_to_bijection(ids, &expected, &labels);
        }
        (Algorithm::Lcc | Algorithm::Pr | Algorithm::Sssp, CaseOutput::Values(actual)) => {
            let expected = read_expected::<f64>(expected_path, ids)?;
            mismatches.compare(ids, &expected, &actual, |e, a| epsilon_equal(*e, *a));
        }
        _ => return Err(malformed("the wrong kind of output")),
    }
    Ok(if mismatches.count == 0 {
        Outcome::Passed { vertices: n }
    } else {
        Outcome::Failed {
            mismatch_count: mismatches.count,
            first_mismatches: mismatches.first,
        }
    })
}

#[derive(Default)]
struct Mismatches {
    count: usize,
    first: Vec<String>,
}

impl Mismatches {
    fn push(&mut self, message: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.len() < MAX_REPORTED_MISMATCHES {
            self.first.push(message());
        }
    }

    fn compare<T: fmt::Display>(
        &mut self,
        external_ids: &[u64],
        expected: &[Option<T>],
        actual: &[T],
        same: impl Fn(&T, &T) -> bool,
    ) {
        for ((e, a), id) in expected.iter().zip(actual).zip(external_ids) {
            match e {
                None => self.push(|| format!("vertex {id}: missing from expected output")),
                Some(e) if !same(e, a) => {
                    self.push(|| format!("vertex {id}: expected {e}, got {a}"));
                }
                Some(_) => {}
            }
        }
    }

    /// WCC: our dense labels must pair one-to-one with the expected labels.
    fn compare_up_to_bijection(
        &mut self,
        external_ids: &[u64],
        expected: &[Option<u64>],
        actual: &[u32],
    ) {
        let mut ours_to_theirs: HashMap<u32, u64> = HashMap::new();
        let mut theirs_to_ours: HashMap<u64, u32> = HashMap::new();
        for ((e, &a), id) in expected.iter().zip(actual).zip(external_ids) {
            let Some(e) = *e else {
                self.push(|| format!("vertex {id}: missing from expected output"));
                continue;
            };
            let ours = *ours_to_theirs.entry(a).or_insert(e);
            let theirs = *theirs_to_ours.entry(e).or_insert(a);
            if ours != e || theirs != a {
                let our_label = external_ids[a as usize];
                self.push(|| {
                    format!(
                        "vertex {id}: expected component {e}, got {our_label}, which is paired \
                         with expected component {ours}"
                    )
                });
            }
        }
    }
}

/// Expected values per dense vertex, from a `vertexId value` file.
fn read_expected<T: FromStr>(
    path: &Path,
    external_ids: &[u64],
) -> Result<Vec<Option<T>>, ValidationError> {
    let text = read(path)?;
    let mut values: Vec<Option<T>> = (0..external_ids.len()).map(|_| None).collect();
    for (line, tokens) in lines(&text) {
        let [id, value] = tokens.as_slice() else {
            return Err(parse_error(path, line, "expected `vertexId value`"));
        };
        let v = dense(external_ids, id, path, line)?;
        let value = value
            .parse::<T>()
            .map_err(|_| parse_error(path, line, &format!("bad value {value:?}")))?;
        let slot = &mut values[v as usize];
        if slot.is_some() {
            return Err(ValidationError::DuplicateVertex {
                path: path.to_owned(),
                line,
                id: external_ids[v as usize],
            });
        }
        *slot = Some(value);
    }
    Ok(values)
}

/// A `.properties` file: `key = value` lines, `#` and `!` comments.
struct Properties {
    path: PathBuf,
    /// The graph name: the file name without `.properties`.
    graph: String,
    entries: HashMap<String, (String, usize)>,
}

impl Properties {
    fn read(path: &Path) -> Result<Properties, ValidationError> {
        let text = read(path)?;
        let graph = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut entries = HashMap::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
                continue;
            }
            let Some((key, value)) = trimmed.split_once('=') else {
                return Err(parse_error(path, line, "expected `key = value`"));
            };
            match entries.entry(key.trim().to_owned()) {
                Entry::Occupied(_) => {
                    let message = format!("property {} set twice", key.trim());
                    return Err(parse_error(path, line, &message));
                }
                Entry::Vacant(slot) => {
                    slot.insert((value.trim().to_owned(), line));
                }
            }
        }
        Ok(Properties {
            path: path.to_owned(),
            graph,
            entries,
        })
    }

    /// `graph.<graph>.<name>`
    fn key(&self, name: &str) -> String {
        format!("graph.{}.{name}", self.graph)
    }

    fn get(&self, name: &str) -> Result<(&str, usize), ValidationError> {
        let key = self.key(name);
        match self.entries.get(&key) {
            Some((value, line)) => Ok((value, *line)),
            None => Err(ValidationError::MissingProperty {
                path: self.path.clone(),
                key,
            }),
        }
    }

    fn parse<T: FromStr>(&self, name: &str) -> Result<T, ValidationError>
    where
        T::Err: fmt::Display,
    {
        let (value, line) = self.get(name)?;
        value
            .parse()
            .map_err(|e: T::Err| ValidationError::BadProperty {
                path: self.path.clone(),
                line,
                key: self.key(name),
                value: value.to_owned(),
                reason: e.to_string(),
            })
    }

    /// A vertex-id property, as a dense id of `graph`.
    fn vertex(&self, name: &str, graph: &EdgeListGraph) -> Result<u32, ValidationError> {
        let (value, line) = self.get(name)?;
        dense(&graph.external_ids, value, &self.path, line)
    }

    /// The kernel run that `algorithm` asks for on this graph.
    fn case(&self, algorithm: Algorithm, graph: &EdgeListGraph) -> Result<Case, ValidationError> {
        Ok(match algorithm {
            Algorithm::Bfs => Case::Bfs(BfsParams {
                source: self.vertex("bfs.source-vertex", graph)?,
            }),
            Algorithm::Cdlp => Case::Cdlp(CdlpParams {
                iterations: self.parse("cdlp.max-iterations")?,
            }),
            Algorithm::Lcc => Case::Lcc(LccParams::default()),
            Algorithm::Pr => Case::Pr(PageRankParams {
                damping: self.parse("pr.damping-factor")?,
                iterations: self.parse("pr.num-iterations")?,
                tolerance: None,
            }),
            Algorithm::Sssp => Case::Sssp(SsspParams {
                source: self.vertex("sssp.source-vertex", graph)?,
                delta: None,
            }),
            Algorithm::Wcc => Case::Wcc(WccParams::default()),
        })
    }

    /// Column of the SSSP weight among the edge properties.
    fn weight_column(&self) -> Result<usize, ValidationError> {
        let (weight, _) = self.get("sssp.weight-property")?;
        let (names, line) = self.get("edge-properties.names")?;
        names
            .split(',')
            .map(str::trim)
            .position(|name| name == weight)
            .ok_or_else(|| ValidationError::BadProperty {
                path: self.path.clone(),
                line,
                key: self.key("edge-properties.names"),
                value: names.to_owned(),
                reason: format!("does not list the SSSP weight property {weight:?}"),
            })
    }
}

fn read(path: &Path) -> Result<String, ValidationError> {
    fs::read_to_string(path).map_err(|source| ValidationError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Entries of a directory, sorted by name.
fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, ValidationError> {
    let io_error = |source| ValidationError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut paths = fs::read_dir(dir)
        .map_err(io_error)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io_error)?;
    paths.sort();
    Ok(paths)
}

/// Non-blank lines as (1-based line number, whitespace-separated tokens).
fn lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split_ascii_whitespace().collect::<Vec<_>>()))
        .filter(|(_, tokens)| !tokens.is_empty())
}

fn parse_error(path: &Path, line: usize, message: &str) -> ValidationError {
    ValidationError::Parse {
        path: path.to_owned(),
        line,
        message: message.to_owned(),
    }
}

fn parse_id(token: &str, path: &Path, line: usize) -> Result<u64, ValidationError> {
    token
        .parse()
        .map_err(|_| parse_error(path, line, &format!("bad vertex id {token:?}")))
}

/// Dense id of an external id in sorted `external_ids`.
fn dense_id(external_ids: &[u64], id: u64) -> Option<u32> {
    external_ids.binary_search(&id).ok().map(|i| i as u32)
}

/// Parse an external id token and map it to its dense id.
fn dense(
    external_ids: &[u64],
    token: &str,
    path: &Path,
    line: usize,
) -> Result<u32, ValidationError> {
    let id = parse_id(token, path, line)?;
    dense_id(external_ids, id).ok_or_else(|| ValidationError::UnknownVertex {
        path: path.to_owned(),
        line,
        id,
    })
}

fn graph_error(path: &Path) -> impl Fn(GraphError) -> ValidationError + '_ {
    move |source| ValidationError::Graph {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epsilon_rule() {
        assert!(epsilon_equal(1.0, 1.00009));
        assert!(!epsilon_equal(1.0, 1.0002));
        assert!(epsilon_equal(0.0, 0.0));
        assert!(!epsilon_equal(0.0, 1e-30));
        assert!(epsilon_equal(f64::INFINITY, f64::INFINITY));
        assert!(!epsilon_equal(f64::INFINITY, 1e300));
        assert!(!epsilon_equal(1e300, f64::INFINITY));
        assert!(!epsilon_equal(1.0, f64::NAN));
    }

    #[test]
    fn algorithm_names_round_trip() {
        for a in [
            Algorithm::Bfs,
            Algorithm::Cdlp,
            Algorithm::Lcc,
            Algorithm::Pr,
            Algorithm::Sssp,
            Algorithm::Wcc,
        ] {
            assert_eq!(Algorithm::from_name(a.name()), Some(a));
        }
        assert_eq!(Algorithm::from_name("ffm"), None);
    }

    #[test]
    fn bijection_detects_merged_and_split_components() {
        let ids = [10, 20, 30, 40];
        let expected = [Some(7), Some(7), Some(9), Some(9)];
        let mut ok = Mismatches::default();
        ok.compare_up_to_bijection(&ids, &expected, &[3, 3, 0, 0]);
        assert_eq!(ok.count, 0);
        let mut merged = Mismatches::default();
        merged.compare_up_to_bijection(&ids, &expected, &[0, 0, 0, 0]);
        assert_eq!(merged.count, 2);
        let mut split = Mismatches::default();
        split.compare_up_to_bijection(&ids, &expected, &[0, 1, 2, 2]);
        assert_eq!(split.count, 1);
    }
}
