//! `cypher` k-hop figures (issue 24): `MATCH (a:V {id: $s})-[:E*1..k]->(b) RETURN
//! count(DISTINCT b)` for k = 1, 2, 3 on the seeded RMAT graph, Plexus against igraph's
//! `neighborhood` on the same edges, in the same run, and the same sets through the
//! `plexus::algo` kernel.
//!
//! WHAT
//! ====
//! Issue 24 found that a variable-length pattern whose endpoints are only counted distinct is
//! executed by enumerating every trail (k=2 7.9 s for 20 starts at scale 20, k=3 failing with
//! `LimitExceeded`), where a frontier BFS over a visited set answers it in igraph's time. These
//! figures follow that work:
//!
//!   khop_k<k>_ms          the query above, once per start (auto-commit `Connection::execute`),
//!                         20 starts, after one unmeasured pass: total wall time in ms;
//!                         `baseline` = igraph's `Graph.neighborhood(vertices=starts, order=k,
//!                         mode="out", mindist=1)` (one call for the 20 starts, after one
//!                         unmeasured call), `ratio` = Plexus / igraph (issue 24's target: ≤ 2);
//!                         `plan` = the start's seek operator in EXPLAIN (a primary-key or index
//!                         seek is expected, not a label scan).
//!   khop_kernel_k<k>_ms   `plexus::algo::kernels::khop_from_sources` (one bounded BFS per start,
//!                         in turn on the calling thread, one visited array for all: as igraph's
//!                         one call) on a CSR projection (`Projection::build`) of the loaded
//!                         database, the same 20 starts, after one unmeasured call; same
//!                         baseline. The projection's build time is `projection_s`.
//!   khop_load_s           the bulk load of the graph into the fresh database (seconds).
//!
//! All times are wall-clock; `_ms` figures in milliseconds as the other `cypher` figures, the
//! load in seconds.
//!
//! DATA
//! ====
//! The RMAT generator of `rmat.rs` with the seed `plexus-bench algo`, `storage` and `ingest`
//! use ([`EDGE_SEED`] = 42) at `--khop-scale` (default 20: 1,048,576 vertices, 16,777,216
//! directed edges, duplicates and self-loops kept). The edges are written once to
//! `--khop-data` (default `<temp>/plexus-khop-<scale>`) as `e.bin` (little-endian `u32 src,
//! u32 dst` records, 128 MiB at scale 20) and reused while its `khop-data` marker says the same
//! scale and seed; both systems read that file.
//!
//! Plexus loads it with its fastest bulk path (docs/benchmarks.md, ingest: `bulk_api` ahead of
//! `plexus import` and `COPY`): a declared vertex table `V(id INT64, PRIMARY KEY (id))` and an
//! edge table `E(FROM V TO V)`, then one `Database::bulk_load` — `add_nodes` of the ids 0 ..
//! 2^scale, `add_relationships` of the edges in batches, one commit — into a fresh database
//! under the data directory (removed at the end). Then `CREATE INDEX v_id FOR (v:V) ON (v.id)`
//! is tried (its seconds are `index_s` on the load figure, or its error `index_error`): with
//! the primary key alone the start is a `NodeByKeySeek`, with the index a `NodeIndexSeek`.
//! igraph builds `Graph(n=2^scale, edges=…, directed=True)` (`bench/peers/khop_peers.py`).
//!
//! The starts: [`STARTS`] vertices drawn from [`START_SEED`] among those with out-degree ≥ 1,
//! without repeats (the same on every machine for a given scale).
//!
//! HOW MEASURED
//! ============
//! igraph runs first, in its own process (the peers' virtual environment, `--python`; igraph
//! pinned in `bench/peers/run.sh`), and exits before Plexus loads, so the two never share
//! memory. Plexus then runs in this process. Each pass is timed as a whole; there is one
//! measured pass per k (20 queries, or one kernel call for the 20 starts as igraph's one
//! call), as in the numbers.
//!
//! CHECKING
//! ========
//! Per start and k, igraph's count is the number of vertices at distance 1..k. Cypher's
//! `*1..k` can come back to the start, so Plexus's count must be igraph's plus one when the
//! start lies on a directed cycle of length ≤ k (computed here on the edge list, independent of
//! both systems); the kernel, which never counts its source, must equal igraph's. A difference
//! is printed on stderr with `ERROR` and the figure carries `"check": "mismatch: …"`; otherwise
//! `"check": "ok"`.
//!
//! LIMITS
//! ======
//! A query that fails (today: k=3 at scale 20 with `LimitExceeded`, var-length expands
//! enumerate paths) gives a figure with `"value": null` and `error`, and the part goes on. The
//! machine is shared: figures carry the 1-minute load average before and after
//! (`load_avg`, `load_avg_end`). `--khop-scale 12 --khop-k 1,2` runs the part in seconds;
//! k=3 of the query at scale 12 enumerates paths for 110 s per pass (on c0ea929), while at
//! scale 20 it fails on the first start.

use crate::json::{self, Json};
use crate::report::Figure;
use crate::rmat::{self, Rng};
use plexus::algo::{Direction, KHopParams, Projection, kernels};
use plexus::{Config, CypherValue, DataType, Database, Params, Value, VertexId, VertexTableSpec};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Seed of the RMAT edges: the one `plexus-bench algo` (`EDGE_SEED`), `storage` and `ingest` use.
pub const EDGE_SEED: u64 = 42;
/// Seed of the start vertices.
pub const START_SEED: u64 = 0x6b_686f_7024;
/// Start vertices per k.
pub const STARTS: usize = 20;
/// Nodes and relationships per bulk-load call.
const LOAD_BATCH_ROWS: usize = 1 << 20;

#[derive(clap::Args, Clone)]
#[group(id = "khop_options")]
pub struct Options {
    /// RMAT scale of the k-hop figures: 2^scale vertices, 16 edges per vertex.
    #[arg(long = "khop-scale", id = "khop_scale", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=26))]
    pub scale: u32,
    /// Directory of the generated edge list (default: <temp dir>/plexus-khop-<scale>); kept
    /// and reused while it matches --khop-scale. The database is created there too (removed).
    #[arg(long = "khop-data", id = "khop_data")]
    pub data: Option<PathBuf>,
    /// Hop counts to measure (comma-separated).
    #[arg(long = "khop-k", id = "khop_k", value_delimiter = ',', default_values_t = [1, 2, 3],
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub ks: Vec<u32>,
}

/// One system's pass over the starts for one k: total ms and the count per start.
type Pass = Result<(f64, Vec<u64>), String>;

/// What igraph answered.
struct Peer {
    load_seconds: f64,
    version: String,
    passes: Vec<(u32, Pass)>,
}

impl Peer {
    fn pass(&self, k: u32) -> Option<&Pass> {
        self.passes.iter().find(|(pk, _)| *pk == k).map(|(_, p)| p)
    }
}

/// What Plexus answered.
struct Plexus {
    load_seconds: f64,
    index: Result<f64, String>,
    /// Per k: the seek operator of EXPLAIN (or what it found instead), and the pass.
    queries: Vec<(u32, String, Pass)>,
    projection: Result<f64, String>,
    kernels: Vec<(u32, Pass)>,
}

// ---------------------------------------------------------------------------------------
// The part.

pub fn run(options: &Options, python: &Path) -> Result<(), String> {
    let scale = options.scale;
    let n = 1usize << scale;
    let data = match &options.data {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("plexus-khop-{scale}")),
    };
    let data = std::path::absolute(&data).map_err(|e| format!("{}: {e}", data.display()))?;
    let edges = edge_list(&data, scale)?;
    let starts = choose_starts(&edges, n, STARTS);
    eprintln!("khop: starts {starts:?}");
    // Whether each start lies on a directed cycle of length ≤ k (see CHECKING).
    let returns: Vec<(u32, Vec<bool>)> = {
        let adjacency = OutAdjacency::new(n, &edges);
        options
            .ks
            .iter()
            .map(|&k| (k, starts.iter().map(|&s| adjacency.returns(s, k)).collect()))
            .collect()
    };
    let load_avg = load_average();

    let igraph = if python.as_os_str() == "none" {
        Err("igraph skipped (--python none)".to_string())
    } else {
        eprintln!("khop: igraph");
        run_igraph(python, &data, n, &starts, &options.ks)
    };
    if let Err(error) = &igraph {
        eprintln!("khop: igraph: {error}");
    }
    eprintln!("khop: Plexus");
    let db_dir = data.join(format!("plexus-{}.db", std::process::id()));
    let _ = std::fs::remove_dir_all(&db_dir);
    let plexus = measure_plexus(&db_dir, &edges, n, &starts, &options.ks);
    let _ = std::fs::remove_dir_all(&db_dir);
    drop(edges);
    let load_avg_end = load_average();
    let plexus = plexus?;

    let context = Context {
        scale,
        starts: starts.len(),
        load_avg,
        load_avg_end,
    };
    let mut load = Figure::new("khop_load_s", plexus.load_seconds, "s");
    if let Ok(peer) = &igraph {
        load = load
            .baseline(peer.load_seconds)
            .with_label("igraph_version", &peer.version);
    }
    load = match &plexus.index {
        Ok(seconds) => load.with("index_s", *seconds),
        Err(error) => load.with_label("index_error", error),
    };
    context.finish(load).print();

    for &k in &options.ks {
        let cycles = &returns.iter().find(|(rk, _)| *rk == k).expect("every k").1;
        let peer = igraph.as_ref().map(|p| p.pass(k));
        let name = format!("khop_k{k}_ms");
        let (plan, pass) = plexus
            .queries
            .iter()
            .find(|(qk, _, _)| *qk == k)
            .map(|(_, plan, pass)| (plan.as_str(), pass))
            .expect("every k");
        let figure =
            pass_figure(&name, k, pass, peer, &starts, Some(cycles)).with_label("plan", plan);
        context.finish(figure).print();
    }
    for &k in &options.ks {
        let peer = igraph.as_ref().map(|p| p.pass(k));
        let name = format!("khop_kernel_k{k}_ms");
        let mut figure = match &plexus.projection {
            Err(error) => Figure::failed(&name, "ms", error),
            Ok(seconds) => {
                let pass = &plexus.kernels.iter().find(|(kk, _)| *kk == k).expect("k").1;
                pass_figure(&name, k, pass, peer, &starts, None).with("projection_s", *seconds)
            }
        };
        figure = figure.with_label("kernel", "plexus::algo::kernels::khop_from_sources");
        context.finish(figure).print();
    }
    Ok(())
}

/// What every figure of the part carries.
struct Context {
    scale: u32,
    starts: usize,
    load_avg: f64,
    load_avg_end: f64,
}

impl Context {
    fn finish<'a>(&self, figure: Figure<'a>) -> Figure<'a> {
        figure
            .with_label("system", "plexus")
            .with_label("baseline_system", "igraph")
            .with("scale", f64::from(self.scale))
            .with("starts", self.starts as f64)
            .with("load_avg", self.load_avg)
            .with("load_avg_end", self.load_avg_end)
    }
}

/// One figure: Plexus's pass against igraph's, checked start by start (`cycles`: the Cypher
/// query, which counts a start that a cycle of length ≤ k leads back to; `None`: the kernel).
fn pass_figure<'a>(
    name: &'a str,
    k: u32,
    pass: &Pass,
    peer: Result<Option<&Pass>, &String>,
    starts: &[u32],
    cycles: Option<&[bool]>,
) -> Figure<'a> {
    let (ms, counts) = match pass {
        Err(error) => {
            eprintln!("khop: {name}: {error}");
            return Figure::failed(name, "ms", error);
        }
        Ok((ms, counts)) => (*ms, counts),
    };
    let mut figure = Figure::new(name, ms, "ms")
        .with("k", f64::from(k))
        .with("reached", counts.iter().sum::<u64>() as f64);
    match peer {
        Ok(Some(Ok((peer_ms, peer_counts)))) => {
            let check = check(name, starts, counts, peer_counts, cycles);
            figure = figure.baseline(*peer_ms).with_label("check", &check);
        }
        Ok(Some(Err(error))) => figure = figure.with_label("baseline_error", error),
        Ok(None) => figure = figure.with_label("baseline_error", "no answer"),
        Err(error) => figure = figure.with_label("baseline_error", error),
    }
    figure
}

/// "ok", or "mismatch: …" (also printed on stderr).
fn check(
    name: &str,
    starts: &[u32],
    ours: &[u64],
    igraph: &[u64],
    cycles: Option<&[bool]>,
) -> String {
    let mut differences = Vec::new();
    if ours.len() != igraph.len() || ours.len() != starts.len() {
        differences.push(format!(
            "{} counts against igraph's {} for {} starts",
            ours.len(),
            igraph.len(),
            starts.len()
        ));
    }
    for (i, ((&s, &got), &theirs)) in starts.iter().zip(ours).zip(igraph).enumerate() {
        let back = cycles.is_some_and(|c| c.get(i).copied().unwrap_or(false));
        let expected = theirs + u64::from(back);
        if got != expected {
            differences.push(format!(
                "start {s}: {got}, expected {expected} (igraph {theirs}{})",
                if back { " + 1, on a cycle" } else { "" }
            ));
        }
    }
    if differences.is_empty() {
        return "ok".into();
    }
    let text = differences.join("; ");
    eprintln!("khop: ERROR: {name}: Plexus and igraph differ: {text}");
    format!("mismatch: {text}")
}

/// The 1-minute load average (NaN where /proc/loadavg is missing).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(f64::NAN)
}

// ---------------------------------------------------------------------------------------
// The data.

/// The RMAT edges of `scale`, read from `data/e.bin` or generated and written there.
fn edge_list(data: &Path, scale: u32) -> Result<Vec<(u32, u32)>, String> {
    let file = data.join("e.bin");
    let marker = data.join("khop-data");
    let stamp = format!("{scale} {EDGE_SEED}\n");
    let fail = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
    let expected_bytes = (rmat::EDGE_FACTOR << scale) as u64 * 8;
    let present = std::fs::metadata(&file).is_ok_and(|m| m.len() == expected_bytes);
    if present && std::fs::read_to_string(&marker).ok().as_deref() == Some(stamp.as_str()) {
        let mut bytes = Vec::with_capacity(expected_bytes as usize);
        std::fs::File::open(&file)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(|e| fail(&file, e))?;
        eprintln!("khop: reusing {}", file.display());
        return Ok(bytes
            .chunks_exact(8)
            .map(|r| {
                let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                (word(&r[..4]), word(&r[4..]))
            })
            .collect());
    }
    std::fs::create_dir_all(data).map_err(|e| fail(data, e))?;
    let _ = std::fs::remove_file(&marker);
    let started = Instant::now();
    let edges = rmat::edges(scale, EDGE_SEED);
    let mut out = BufWriter::new(std::fs::File::create(&file).map_err(|e| fail(&file, e))?);
    for &(s, d) in &edges {
        out.write_all(&s.to_le_bytes())
            .and_then(|()| out.write_all(&d.to_le_bytes()))
            .map_err(|e| fail(&file, e))?;
    }
    out.flush().map_err(|e| fail(&file, e))?;
    std::fs::write(&marker, stamp).map_err(|e| fail(&marker, e))?;
    eprintln!(
        "khop: wrote {} edges to {} in {:.1} s",
        edges.len(),
        file.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(edges)
}

/// `count` distinct vertices with out-degree ≥ 1, drawn from [`START_SEED`].
fn choose_starts(edges: &[(u32, u32)], n: usize, count: usize) -> Vec<u32> {
    let mut has_out = vec![false; n];
    for &(s, _) in edges {
        has_out[s as usize] = true;
    }
    let count = count.min(has_out.iter().filter(|&&b| b).count());
    let mut rng = Rng::new(START_SEED);
    let mut starts = Vec::with_capacity(count);
    while starts.len() < count {
        let v = rng.below(n as u64) as u32;
        if has_out[v as usize] && !starts.contains(&v) {
            starts.push(v);
        }
    }
    starts
}

/// Out-neighbour lists of the edge list (a CSR of its own, for the cycle check only).
struct OutAdjacency {
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl OutAdjacency {
    fn new(n: usize, edges: &[(u32, u32)]) -> Self {
        let mut offsets = vec![0usize; n + 1];
        for &(s, _) in edges {
            offsets[s as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut next = offsets.clone();
        let mut targets = vec![0u32; edges.len()];
        for &(s, d) in edges {
            targets[next[s as usize]] = d;
            next[s as usize] += 1;
        }
        Self { offsets, targets }
    }

    fn neighbors(&self, v: u32) -> &[u32] {
        &self.targets[self.offsets[v as usize]..self.offsets[v as usize + 1]]
    }

    /// Whether a directed walk of 1..=k edges leads from `start` back to it (a vertex at
    /// distance d < k with an edge to `start`; a self-loop is a cycle of length 1).
    fn returns(&self, start: u32, k: u32) -> bool {
        let mut seen = std::collections::HashSet::from([start]);
        let mut frontier = vec![start];
        for _ in 0..k {
            let mut next = Vec::new();
            for &v in &frontier {
                for &u in self.neighbors(v) {
                    if u == start {
                        return true;
                    }
                    if seen.insert(u) {
                        next.push(u);
                    }
                }
            }
            frontier = next;
        }
        false
    }
}

// ---------------------------------------------------------------------------------------
// igraph.

/// Runs `bench/peers/khop_peers.py` and reads its answers.
fn run_igraph(
    python: &Path,
    data: &Path,
    n: usize,
    starts: &[u32],
    ks: &[u32],
) -> Result<Peer, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/khop_peers.py");
    if !python.exists() {
        return Err(format!(
            "no Python at {} (bench/peers/run.sh creates the peers' virtual environment)",
            python.display()
        ));
    }
    let list = |items: &[u32]| {
        items
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let output = Command::new(python)
        .arg(&script)
        .arg("--edges")
        .arg(data.join("e.bin"))
        .args(["--vertices", &n.to_string()])
        .args(["--starts", &list(starts)])
        .args(["--k", &list(ks)])
        .args(["--warmup", "1"])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("khop_peers.py: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut peer = Peer {
        load_seconds: f64::NAN,
        version: String::new(),
        passes: Vec::new(),
    };
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let value = json::parse(line).map_err(|e| format!("khop_peers.py: {e}: {line}"))?;
        let error = value.get("error").and_then(Json::as_str);
        let Some(k) = value.get("k").and_then(Json::as_f64) else {
            if let Some(error) = error {
                return Err(format!("khop_peers.py: {error}"));
            }
            peer.load_seconds = value
                .get("load_seconds")
                .and_then(Json::as_f64)
                .unwrap_or(f64::NAN);
            peer.version = value
                .get("version")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string();
            continue;
        };
        let pass = match (
            error,
            value.get("ms").and_then(Json::as_f64),
            value.get("counts"),
        ) {
            (Some(error), _, _) => Err(error.to_string()),
            (None, Some(ms), Some(Json::Array(counts))) => Ok((
                ms,
                counts
                    .iter()
                    .map(|c| c.as_f64().unwrap_or(f64::NAN) as u64)
                    .collect(),
            )),
            _ => Err(format!("an answer without ms or counts: {line}")),
        };
        peer.passes.push((k as u32, pass));
    }
    if !output.status.success() || peer.passes.is_empty() {
        return Err(format!("khop_peers.py exited with {}", output.status));
    }
    Ok(peer)
}

// ---------------------------------------------------------------------------------------
// Plexus.

fn measure_plexus(
    db_dir: &Path,
    edges: &[(u32, u32)],
    n: usize,
    starts: &[u32],
    ks: &[u32],
) -> Result<Plexus, String> {
    let db = Database::open(db_dir, Config::default()).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let nodes = bulk_load(&db, edges, n)?;
    let load_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "khop: loaded {n} :V and {} :E in {load_seconds:.1} s",
        edges.len()
    );
    let mut conn = db.connect();
    let none = Params::new();
    let started = Instant::now();
    let index = conn
        .execute("CREATE INDEX v_id FOR (v:V) ON (v.id)", &none)
        .map(|_| started.elapsed().as_secs_f64())
        .map_err(|e| e.to_string());
    if let Err(error) = &index {
        eprintln!("khop: CREATE INDEX: {error} (the primary key serves the seek)");
    }

    let mut queries = Vec::new();
    for &k in ks {
        let query = format!("MATCH (a:V {{id: $s}})-[:E*1..{k}]->(b) RETURN count(DISTINCT b)");
        let plan = seek_operator(&mut conn, &query, starts[0]);
        eprintln!("khop: k={k} {plan}");
        let pass = query_pass(&mut conn, &query, starts);
        if let Ok((ms, _)) = &pass {
            eprintln!("khop: k={k} Cypher {ms:.1} ms");
        }
        queries.push((k, plan, pass));
    }
    drop(conn);

    let started = Instant::now();
    let projected = Projection::new()
        .vertex_labels(&["V"])
        .edge_types(&["E"])
        .build(&db.snapshot());
    let projection_seconds = started.elapsed().as_secs_f64();
    let mut kernel_passes = Vec::new();
    let projection = match projected {
        Err(e) => Err(e.to_string()),
        Ok(projected) => {
            let dense: Result<Vec<u32>, String> = starts
                .iter()
                .map(|&s| {
                    projected
                        .require(nodes[s as usize])
                        .map_err(|e| e.to_string())
                })
                .collect();
            for &k in ks {
                let params = KHopParams {
                    k,
                    direction: Direction::Out,
                };
                let pass = dense.clone().and_then(|dense| {
                    let pass = || -> Pass {
                        let started = Instant::now();
                        let counts = kernels::khop_from_sources(projected.graph(), &dense, &params)
                            .map_err(|e| e.to_string())?;
                        Ok((started.elapsed().as_secs_f64() * 1e3, counts))
                    };
                    pass()?; // warm-up
                    pass()
                });
                if let Ok((ms, _)) = &pass {
                    eprintln!("khop: k={k} kernel {ms:.1} ms");
                }
                kernel_passes.push((k, pass));
            }
            Ok(projection_seconds)
        }
    };
    db.close().map_err(|e| e.to_string())?;
    Ok(Plexus {
        load_seconds,
        index,
        queries,
        projection,
        kernels: kernel_passes,
    })
}

/// Declares `V(id INT64, PRIMARY KEY (id))` and `E(FROM V TO V)` and bulk-loads the vertices
/// 0 .. n and the edges in one commit; answers the node of each id.
fn bulk_load(db: &Database, edges: &[(u32, u32)], n: usize) -> Result<Vec<VertexId>, String> {
    let e = |e: plexus::Error| e.to_string();
    db.create_vertex_table(
        &VertexTableSpec::new("V")
            .property("id", DataType::Int64)
            .primary_key("id"),
    )
    .map_err(e)?;
    db.create_edge_table("V", "E", "V", &[]).map_err(e)?;
    let mut load = db.bulk_load();
    let mut nodes = Vec::with_capacity(n);
    for begin in (0..n).step_by(LOAD_BATCH_ROWS) {
        let end = (begin + LOAD_BATCH_ROWS).min(n);
        let ids: Vec<Value> = (begin..end).map(|i| Value::Int(i as i64)).collect();
        let added = load
            .add_nodes(&["V"], None, &[("id".to_string(), ids)], end - begin)
            .map_err(e)?;
        if let Some((row, error)) = added.rejected.first() {
            return Err(format!("vertex {}: {error}", begin + row));
        }
        for id in added.ids {
            nodes.push(id.ok_or("a node without an id")?);
        }
    }
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for chunk in edges.chunks(LOAD_BATCH_ROWS) {
        src.clear();
        dst.clear();
        src.extend(chunk.iter().map(|&(s, _)| nodes[s as usize]));
        dst.extend(chunk.iter().map(|&(_, d)| nodes[d as usize]));
        let added = load.add_relationships("E", &src, &dst, &[]).map_err(e)?;
        if let Some((row, error)) = added.rejected.first() {
            return Err(format!("edge batch row {row}: {error}"));
        }
    }
    let summary = load.commit().map_err(e)?;
    if summary.nodes != n as u64 || summary.relationships != edges.len() as u64 {
        return Err(format!(
            "the load committed {} nodes and {} relationships of {n} and {}",
            summary.nodes,
            summary.relationships,
            edges.len()
        ));
    }
    Ok(nodes)
}

/// The start's operator in EXPLAIN of `query`: the line naming a seek (`NodeByKeySeek …` or
/// `NodeIndexSeek …`), else `no seek: ` and the scan line. The whole plan goes to stderr.
fn seek_operator(conn: &mut plexus::Connection, query: &str, start: u32) -> String {
    let params = Params::from([("s".to_string(), CypherValue::Int(i64::from(start)))]);
    let plan = match conn.execute(&format!("EXPLAIN {query}"), &params) {
        Ok(result) => result.plan.unwrap_or_default(),
        Err(error) => return format!("EXPLAIN failed: {error}"),
    };
    eprintln!("khop: EXPLAIN {query}\n{plan}");
    let operator = |word: &str| {
        plan.lines()
            .find_map(|l| l.find(word).map(|at| l[at..].trim().to_string()))
    };
    operator("NodeIndexSeek")
        .or_else(|| operator("NodeByKeySeek"))
        .or_else(|| operator("NodeByIdSeek"))
        .unwrap_or_else(|| match operator("Scan") {
            Some(scan) => format!("no seek: {scan}"),
            None => "no seek".into(),
        })
}

/// One unmeasured, then one measured pass of `query` over the starts (one auto-commit
/// `execute` each): total ms and the count per start, or the first failure.
fn query_pass(conn: &mut plexus::Connection, query: &str, starts: &[u32]) -> Pass {
    let mut result = Err("no pass".to_string());
    for pass in ["warm-up", "measured"] {
        let started = Instant::now();
        let mut counts = Vec::with_capacity(starts.len());
        for (i, &s) in starts.iter().enumerate() {
            let params = Params::from([("s".to_string(), CypherValue::Int(i64::from(s)))]);
            let answer = conn.execute(query, &params).map_err(|e| {
                format!(
                    "{pass} pass, start {} of {} (id {s}): {e}",
                    i + 1,
                    starts.len()
                )
            })?;
            match answer.rows.first().and_then(|r| r.first()) {
                Some(CypherValue::Int(c)) => counts.push(*c as u64),
                other => return Err(format!("start {s}: count(DISTINCT b) returned {other:?}")),
            }
        }
        result = Ok((started.elapsed().as_secs_f64() * 1e3, counts));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_and_starts() {
        // 0 → 1 → 2 → 0 (a 3-cycle), 3 → 3 (self-loop), 4 → 0, 5 isolated
        let edges = [(0, 1), (1, 2), (2, 0), (3, 3), (4, 0)];
        let adjacency = OutAdjacency::new(6, &edges);
        assert!(!adjacency.returns(0, 2));
        assert!(adjacency.returns(0, 3));
        assert!(adjacency.returns(3, 1));
        assert!(!adjacency.returns(4, 5));
        assert!(!adjacency.returns(5, 5));
        let starts = choose_starts(&edges, 6, 20);
        assert_eq!(starts.len(), 5, "only vertices with out-edges: {starts:?}");
        assert!(!starts.contains(&5));
        assert_eq!(starts, choose_starts(&edges, 6, 20), "deterministic");
    }

    #[test]
    fn the_check_allows_a_return_to_the_start() {
        let starts = [7, 8];
        assert_eq!(
            check("t", &starts, &[3, 5], &[2, 5], Some(&[true, false])),
            "ok"
        );
        assert!(check("t", &starts, &[3, 5], &[2, 5], None).starts_with("mismatch"));
        assert!(
            check("t", &starts, &[2, 5], &[2, 5], Some(&[true, false])).starts_with("mismatch")
        );
        assert!(check("t", &starts, &[2], &[2, 5], None).starts_with("mismatch"));
    }
}
