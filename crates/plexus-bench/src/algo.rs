//! `algo`: the Graphalytics kernels on a live Plexus snapshot, against the same kernels on a
//! static CSR of the same edges, measured in the same run.
//!
//! PHASES
//! ======
//! 1. Generate the seeded RMAT graph (`2^scale` vertices, `16 · 2^scale` directed edges,
//!    duplicates and self-loops kept) and one weight per edge, uniform in `[0, 1)`, seeded.
//! 2. Baseline graph: `Graph::from_edges` of that list (directed, weighted), timed.
//! 3. Load it into Plexus: a declared vertex table `V`, an edge table `E` with a `Float64`
//!    `weight`, edges in transactions of `LOAD_BATCH_EDGES`, then `Database::compact` (what a
//!    bulk load ends with). Vertex `i` of the list is the `i`-th vertex created.
//!    Then the warm-up (`settle`, skipped with `--no-warm-up`): read passes over every edge,
//!    each followed by the merges and flushes the elastic policy asks for in response, until
//!    a pass changes nothing — the layout a loaded graph reaches once analytics run on it.
//!    With `--bulk-load` the graph is loaded by one `Database::bulk_load` instead (vertices,
//!    edges with their weights, one commit), then the same steps follow.
//! 4. `projection_build`: `Projection::build` on a pinned snapshot (baseline: `Graph::from_edges`
//!    from the in-memory list), unweighted and weighted.
//! 5. Per kernel, `value` is the call through the snapshot API — `plexus::algo::pagerank(
//!    &snapshot, &projection, &params)` and so on, as a user runs it, projection included —
//!    and `baseline` the kernel alone on the static graph; `kernel_s` is the kernel alone on
//!    a prebuilt projection. Every result is checked against the static one.
//! 6. The API's PageRank builds the projection's CSR; WCC and BFS read the snapshot directly;
//!    `pagerank_from_slices`, `wcc_via_csr` and `bfs_via_csr` measure the other design of each
//!    in the same run. `docs/design/analytics.md` explains the choices.
//! 7. `algo_under_writes[_from_slices|_reserved_core]`: PageRank (fresh snapshot per run) while one
//!    writer thread commits single-edge transactions, against the idle time right before (on
//!    the compacted and warmed-up layout: each variant starts from the same state);
//!    and `writer_commit_rate_under_algo[...]`, the writer's rate meanwhile against its rate
//!    alone, measured in windows that alternate with the PageRank runs (see `interleaved`).
//!    The first two run on the API's analytics pool (all cores, lowered CPU priority);
//!    `_reserved_core` runs PageRank in a normal-priority rayon pool one thread short of the
//!    cores.
//!
//! Times are the median of `--repeats` runs, or of more runs for measurements shorter than a
//! second in all (see `median`). With `--write-edges DIR` the command only writes
//! the generated list for `bench/peers/` (`rmat-<scale>.bin`: little-endian `u32 src, u32 dst,
//! f64 weight` records; `rmat-<scale>.csv`: `src,dst,weight` with a header) and exits.

use crate::report::Figure;
use crate::rmat::{self, Rng};
use crate::storage::{create_vertices, single_edge_writer_counted};
use plexus::algo::{
    BfsParams, CdlpParams, Direction, Graph, LccParams, PageRankParams, Projection, SsspParams,
    WccParams, kernels,
};
use plexus::{
    Config, DataType, Database, DurabilityMode, Error, GraphSnapshot, Value, VertexId,
    VertexTableSpec, admin,
};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Options {
    /// RMAT scale: 2^scale vertices, 16 edges per vertex.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=26))]
    pub scale: u32,
    /// Runs per measurement (at least; short ones repeat for a second); the median is printed.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeats: u32,
    /// Seconds the writer runs alone in all, in windows between the busy PageRank runs.
    #[arg(long, default_value_t = 5.0)]
    pub writer_seconds: f64,
    /// Directory for the benchmark database (default: the system temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Only write the generated edge list to DIR (rmat-<scale>.bin and .csv) and exit.
    #[arg(long, value_name = "DIR")]
    pub write_edges: Option<PathBuf>,
    /// Kernels to measure (comma-separated; default all six).
    #[arg(long, value_delimiter = ',', value_parser = Kernel::parse)]
    pub kernels: Vec<Kernel>,
    /// Skip the PageRank-under-writes phase.
    #[arg(long)]
    pub skip_writes: bool,
    /// The database's `memtable_budget_bytes`, in MiB (default: the engine's default); a small
    /// budget puts most of the graph in CSR runs on disk.
    #[arg(long)]
    pub memtable_budget_mb: Option<u64>,
    /// Time the kernels right after the load, without the warm-up read passes: memtable
    /// entries then sit beside the runs' for most vertices, and the merges and flushes the
    /// first reads ask for run in the background during the first kernels.
    #[arg(long)]
    pub no_warm_up: bool,
    /// Load the graph with one bulk load (`Database::bulk_load`: adjacency written straight
    /// into CSR runs) instead of transactions of LOAD_BATCH_EDGES edges; the steps after the
    /// load (compaction, warm-up) are the same.
    #[arg(long)]
    pub bulk_load: bool,
}

const EDGE_SEED: u64 = 42;
const WEIGHT_SEED: u64 = 4242;
const WRITER_SEED: u64 = 77;
const LOAD_BATCH_EDGES: usize = 100_000;
/// Load progress is printed every this many batches.
const PROGRESS_EVERY_BATCHES: usize = 10;
const PAGERANK_ITERATIONS: usize = 20;
const DAMPING: f64 = 0.85;
const CDLP_ITERATIONS: usize = 10;
/// Largest relative difference accepted between Plexus and static floating-point results.
const CHECK_EPSILON: f64 = 1e-9;
/// Short measurements repeat until their runs add up to this (see `median`).
const MIN_MEASURE_SECONDS: f64 = 1.0;
/// Most runs of one measurement, whatever `--repeats` and `MIN_MEASURE_SECONDS` ask.
const MAX_RUNS: usize = 100;
/// Bound on the read passes of the warm-up (see `settle`).
const MAX_WARM_UP_PASSES: usize = 4;

pub fn run(options: &Options) -> Result<(), Error> {
    let scale = options.scale;
    let n = 1usize << scale;
    eprintln!(
        "generating RMAT scale {scale}: {n} vertices, {} edges",
        rmat::EDGE_FACTOR << scale
    );
    let pairs = rmat::edges(scale, EDGE_SEED);
    let mut rng = Rng::new(WEIGHT_SEED);
    let weights: Vec<f64> = pairs.iter().map(|_| rng.unit()).collect();
    if let Some(dir) = &options.write_edges {
        return write_edge_list(dir, scale, &pairs, &weights);
    }
    let s = f64::from(scale);
    let repeats = options.repeats as usize;

    let edges: Vec<_> = pairs
        .iter()
        .zip(&weights)
        .map(|(&(src, dst), &w)| (src, dst, Some(w)))
        .collect();
    let (static_build_s, fixed) = median(repeats, || {
        Graph::from_edges(n, &edges, true).map_err(failure)
    })?;
    drop(edges);
    // BFS and SSSP start at the vertex with the most out-edges (the smallest such id); the
    // peers pick the same one.
    let source = (0..n as u32)
        .max_by_key(|&v| (fixed.out().degree(v), std::cmp::Reverse(v)))
        .unwrap_or(0);

    let dir = options
        .dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("plexus-bench-algo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = Config {
        durability: DurabilityMode::Periodic,
        checkpoint_wal_bytes: 0,
        ..Config::default()
    };
    if let Some(mb) = options.memtable_budget_mb {
        config.memtable_budget_bytes = mb << 20;
    }
    let db = Arc::new(Database::open(&dir, config)?);
    let ids = if options.bulk_load {
        bulk_load(&db, n, &pairs, &weights)?
    } else {
        load(&db, n, &pairs, &weights)?
    };
    let ids = Arc::new(ids);
    drop((pairs, weights));
    db.compact();
    if !options.no_warm_up {
        settle(&db)?;
    }

    let bench = Bench {
        snapshot: db.snapshot(),
        fixed,
        ids: &ids,
        source,
        repeats,
        scale: s,
    };
    bench.projections(static_build_s)?;
    let kernels = if options.kernels.is_empty() {
        &Kernel::ALL[..]
    } else {
        &options.kernels[..]
    };
    for &kernel in kernels {
        bench.kernel(kernel)?;
    }
    drop(bench);
    if !options.skip_writes {
        under_writes(&db, &ids, options, s)?;
    }
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Lets the disk tier adapt to analytics before anything is timed: passes reading every edge
/// both ways, each followed by the merges and flushes they ask for (the elastic policy
/// collapses a range read in full into one run, and flushes a memtable read twice over), until
/// a pass changes nothing (at most `MAX_WARM_UP_PASSES`). In the background this work would
/// otherwise run during the first timed kernels and take a core from them.
fn settle(db: &Database) -> Result<(), Error> {
    let started = Instant::now();
    let layout = |s: &plexus::StorageStats| {
        (
            s.memtable_bytes,
            s.run_bytes,
            s.flushed_runs,
            s.merged_bytes,
        )
    };
    let mut passes = 0;
    while passes < MAX_WARM_UP_PASSES {
        let before = layout(&db.storage_stats());
        Projection::new()
            .edge_types(&["E"])
            .direction(Direction::Both)
            .build(&db.snapshot())
            .map_err(failure)?;
        admin::merge_runs(db)?;
        passes += 1;
        if layout(&db.storage_stats()) == before {
            break;
        }
    }
    let stats = db.storage_stats();
    eprintln!(
        "warm-up: {passes} read passes in {:.1} s; {:.0} MiB in topology memtables, {:.0} MiB in CSR runs",
        started.elapsed().as_secs_f64(),
        stats.memtable_bytes as f64 / f64::from(1u32 << 20),
        stats.run_bytes as f64 / f64::from(1u32 << 20),
    );
    Ok(())
}

/// Everything the per-kernel measurements share.
struct Bench<'a> {
    snapshot: GraphSnapshot,
    /// The static baseline graph.
    fixed: Graph,
    ids: &'a [VertexId],
    source: u32,
    repeats: usize,
    scale: f64,
}

impl Bench<'_> {
    fn projections(&self, static_build_s: f64) -> Result<(), Error> {
        for (name, projection) in [
            ("projection_build", Kernel::Bfs.projection()),
            ("projection_build_weighted", Kernel::Sssp.projection()),
        ] {
            let (seconds, built) = median(self.repeats, || {
                projection.build(&self.snapshot).map_err(failure)
            })?;
            if built.graph().out().edge_count() != self.fixed.out().edge_count() {
                return Err(failure(
                    "the projection and the static graph differ in edges",
                ));
            }
            Figure::new(name, seconds, "s")
                .baseline(static_build_s)
                .with("scale", self.scale)
                .print();
        }
        Ok(())
    }

    fn kernel(&self, kernel: Kernel) -> Result<(), Error> {
        eprintln!("{}", kernel.name());
        let (static_s, expected) =
            median(self.repeats, || kernel.on_graph(&self.fixed, self.source))?;
        let source = self.ids[self.source as usize];
        let (api_s, actual) = median(self.repeats, || kernel.on_snapshot(&self.snapshot, source))?;
        expected.check(&actual.into_output(), kernel.name())?;
        let built = kernel.projection().build(&self.snapshot).map_err(failure)?;
        let (kernel_s, _) = median(self.repeats, || kernel.on_graph(built.graph(), self.source))?;
        Figure::new(kernel.name(), api_s, "s")
            .baseline(static_s)
            .with("kernel_s", kernel_s)
            .with("scale", self.scale)
            .print();
        if let Some(alternative) = kernel.alternative_name() {
            // Measure the design the API did not take for this kernel beside it.
            let (other_s, actual) =
                median(self.repeats, || kernel.alternative(&self.snapshot, source))?;
            expected.check(&actual.into_output(), alternative)?;
            Figure::new(alternative, other_s, "s")
                .baseline(static_s)
                .with("scale", self.scale)
                .print();
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
pub enum Kernel {
    PageRank,
    Wcc,
    Bfs,
    Cdlp,
    Lcc,
    Sssp,
}

/// A kernel's per-vertex output, indexed by RMAT vertex id.
#[derive(PartialEq)]
enum Output {
    Floats(Vec<f64>),
    Ints(Vec<i64>),
    Labels(Vec<u32>),
}

impl Kernel {
    const ALL: [Kernel; 6] = [
        Kernel::PageRank,
        Kernel::Wcc,
        Kernel::Bfs,
        Kernel::Cdlp,
        Kernel::Lcc,
        Kernel::Sssp,
    ];

    fn parse(name: &str) -> Result<Kernel, String> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| format!("unknown kernel `{name}` (pagerank, wcc, bfs, cdlp, lcc, sssp)"))
    }

    fn name(self) -> &'static str {
        match self {
            Kernel::PageRank => "pagerank",
            Kernel::Wcc => "wcc",
            Kernel::Bfs => "bfs",
            Kernel::Cdlp => "cdlp",
            Kernel::Lcc => "lcc",
            Kernel::Sssp => "sssp",
        }
    }

    /// Kernels with two designs measured, with the name of the one the API did not take.
    fn alternative_name(self) -> Option<&'static str> {
        match self {
            Kernel::PageRank => Some("pagerank_from_slices"),
            Kernel::Wcc => Some("wcc_via_csr"),
            Kernel::Bfs => Some("bfs_via_csr"),
            _ => None,
        }
    }

    /// The design not taken: PageRank pulling from the snapshot's slices in every pass; WCC
    /// and BFS building the projection's CSR first (BFS from `source`, as the API's).
    fn alternative(self, snap: &GraphSnapshot, source: VertexId) -> Result<Keyed, Error> {
        let p = self.projection();
        Ok(match self {
            Kernel::PageRank => Keyed::Floats(
                plexus::algo::pagerank_from_slices(snap, &p, &Self::pagerank_params())
                    .map_err(failure)?,
            ),
            Kernel::Bfs => {
                Keyed::Ints(plexus::algo::bfs_via_csr(snap, &p, source).map_err(failure)?)
            }
            _ => {
                let built = p.build(snap).map_err(failure)?;
                Keyed::Dense(self.on_graph(built.graph(), 0)?)
            }
        })
    }

    fn pagerank_params() -> PageRankParams {
        PageRankParams {
            damping: DAMPING,
            iterations: PAGERANK_ITERATIONS,
            tolerance: None,
        }
    }

    fn projection(self) -> Projection {
        let projection = Projection::new().edge_types(&["E"]);
        match self {
            Kernel::Sssp => projection.weight("weight"),
            _ => projection,
        }
    }

    fn on_graph(self, g: &Graph, source: u32) -> Result<Output, Error> {
        Ok(match self {
            Kernel::PageRank => {
                Output::Floats(kernels::pagerank(g, &Self::pagerank_params()).map_err(failure)?)
            }
            Kernel::Wcc => Output::Labels(kernels::wcc(g, &WccParams::default())),
            Kernel::Bfs => Output::Ints(kernels::bfs(g, &BfsParams { source }).map_err(failure)?),
            Kernel::Cdlp => Output::Labels(kernels::cdlp(
                g,
                &CdlpParams {
                    iterations: CDLP_ITERATIONS,
                },
            )),
            Kernel::Lcc => Output::Floats(kernels::lcc(g, &LccParams::default())),
            Kernel::Sssp => {
                let params = SsspParams {
                    source,
                    delta: None,
                };
                Output::Floats(kernels::sssp(g, &params).map_err(failure)?)
            }
        })
    }

    /// Through the snapshot API, as a user calls it.
    fn on_snapshot(self, snap: &GraphSnapshot, source: VertexId) -> Result<Keyed, Error> {
        use plexus::algo as api;
        let p = self.projection();
        Ok(match self {
            Kernel::PageRank => {
                Keyed::Floats(api::pagerank(snap, &p, &Self::pagerank_params()).map_err(failure)?)
            }
            Kernel::Wcc => {
                Keyed::Labels(api::wcc(snap, &p, &WccParams::default()).map_err(failure)?)
            }
            Kernel::Bfs => Keyed::Ints(api::bfs(snap, &p, source).map_err(failure)?),
            Kernel::Cdlp => {
                let params = CdlpParams {
                    iterations: CDLP_ITERATIONS,
                };
                Keyed::Labels(api::cdlp(snap, &p, &params).map_err(failure)?)
            }
            Kernel::Lcc => {
                Keyed::Floats(api::lcc(snap, &p, &LccParams::default()).map_err(failure)?)
            }
            Kernel::Sssp => Keyed::Floats(api::sssp(snap, &p, source, None).map_err(failure)?),
        })
    }
}

/// A kernel's result as the snapshot API returns it, keyed by vertex: what a timed call
/// yields. Turned into an [`Output`] for the comparison only after the clock stops, so the
/// API's figure holds the call and nothing of the benchmark's own bookkeeping.
enum Keyed {
    Floats(Vec<(VertexId, f64)>),
    Ints(Vec<(VertexId, i64)>),
    Labels(Vec<(VertexId, VertexId)>),
    /// Already indexed by RMAT vertex id (a kernel run on a built projection).
    Dense(Output),
}

impl Keyed {
    /// Values in `VertexId` order, which is RMAT vertex id order (vertex `i` is the `i`-th
    /// created); labels as the offsets of the vertices they name.
    fn into_output(self) -> Output {
        fn values<T>(pairs: Vec<(VertexId, T)>) -> Vec<T> {
            pairs.into_iter().map(|(_, value)| value).collect()
        }
        match self {
            Keyed::Floats(pairs) => Output::Floats(values(pairs)),
            Keyed::Ints(pairs) => Output::Ints(values(pairs)),
            Keyed::Labels(pairs) => {
                Output::Labels(pairs.into_iter().map(|(_, l)| l.offset).collect())
            }
            Keyed::Dense(output) => output,
        }
    }
}

impl Output {
    /// `self` is the static result; `actual` must agree (floats within `CHECK_EPSILON`).
    fn check(&self, actual: &Output, what: &str) -> Result<(), Error> {
        let same = match (self, actual) {
            (Output::Floats(a), Output::Floats(b)) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| {
                        x == y || (x - y).abs() <= CHECK_EPSILON * x.abs().max(y.abs())
                    })
            }
            _ => self == actual,
        };
        if same {
            Ok(())
        } else {
            Err(failure(format!(
                "{what}: Plexus and the static graph disagree"
            )))
        }
    }
}

/// How PageRank runs in one `under_writes` variant.
#[derive(Clone, Copy)]
enum Variant {
    /// Through the API, on all cores at the analytics pool's lowered priority.
    Api,
    /// Pulling from the snapshot's slices every pass (the design not taken), on all cores at
    /// the analytics pool's lowered priority.
    FromSlices,
    /// Through the API in a normal-priority pool with one thread fewer than cores, leaving
    /// one to the writer.
    ReservedCore,
}

impl Variant {
    fn suffix(self) -> &'static str {
        match self {
            Variant::Api => "",
            Variant::FromSlices => "_from_slices",
            Variant::ReservedCore => "_reserved_core",
        }
    }
}

/// PageRank on a fresh snapshot per run while one writer commits single-edge transactions,
/// against PageRank idle right before; and the writer's commit rate meanwhile against its rate
/// alone. The graph grows by the writer's commits (`writer_commits`).
fn under_writes(
    db: &Arc<Database>,
    ids: &Arc<Vec<VertexId>>,
    options: &Options,
    s: f64,
) -> Result<(), Error> {
    let repeats = options.repeats as usize;
    let threads = rayon::current_num_threads();
    for variant in [Variant::Api, Variant::FromSlices, Variant::ReservedCore] {
        eprintln!("pagerank under writes{}", variant.suffix());
        let pool_threads = match variant {
            Variant::ReservedCore => threads.saturating_sub(1).max(1),
            _ => threads,
        };
        // The API's own pool (lowered priority, see `plexus::algo::priority`) unless the
        // variant reserves a core, which takes a normal-priority pool of its own.
        let reserved = match variant {
            Variant::ReservedCore => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(pool_threads)
                    .build()
                    .map_err(failure)?,
            ),
            _ => None,
        };
        let pagerank = || match (variant, &reserved) {
            (Variant::FromSlices, _) => Kernel::PageRank.alternative(&db.snapshot(), ids[0]),
            (_, Some(pool)) => {
                pool.install(|| Kernel::PageRank.on_snapshot(&db.snapshot(), ids[0]))
            }
            (_, None) => Kernel::PageRank.on_snapshot(&db.snapshot(), ids[0]),
        };
        // Each variant starts from the layout the kernels above were timed on (the previous
        // variant's writes compacted and settled), so the variants and the idle runs compare.
        db.compact();
        if !options.no_warm_up {
            settle(db)?;
        }
        let (idle_s, _) = median(repeats, pagerank)?;
        let windows = interleaved(db, ids, repeats, options.writer_seconds, pagerank)?;
        let suffix = variant.suffix();
        Figure::new(
            &format!("algo_under_writes{suffix}"),
            windows.busy_median_s,
            "s",
        )
        .baseline(idle_s)
        .with("threads", pool_threads as f64)
        .with("writer_commits", windows.commits as f64)
        .with("scale", s)
        .print();
        Figure::new(
            &format!("writer_commit_rate_under_algo{suffix}"),
            windows.busy_rate(),
            "txn/s",
        )
        .baseline(windows.alone_rate())
        .with("threads", pool_threads as f64)
        .with("scale", s)
        .print();
    }
    Ok(())
}

/// What one writer did in the windows of [`interleaved`].
struct Windows {
    busy_median_s: f64,
    busy_commits: u64,
    busy_s: f64,
    alone_commits: u64,
    alone_s: f64,
    commits: u64,
}

impl Windows {
    fn busy_rate(&self) -> f64 {
        self.busy_commits as f64 / self.busy_s
    }

    fn alone_rate(&self) -> f64 {
        self.alone_commits as f64 / self.alone_s
    }
}

/// One writer commits throughout while windows alternate: the writer alone for
/// `alone_seconds / runs`, then `pagerank` once, `runs` times. The writer's rate alone and
/// under PageRank are its commits over the summed window times of each kind. Interleaving
/// keeps both measured on the same, growing graph: measured in separate phases, the rate
/// alone drifted by up to a fifth between right before and right after the busy phase (the
/// memtables the writer fills, the merges they cause).
fn interleaved(
    db: &Arc<Database>,
    ids: &Arc<Vec<VertexId>>,
    runs: usize,
    alone_seconds: f64,
    pagerank: impl Fn() -> Result<Keyed, Error>,
) -> Result<Windows, Error> {
    let runs = runs.max(1);
    let window = std::time::Duration::from_secs_f64(alone_seconds / runs as f64);
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicU64::new(0));
    let writer = {
        let (db, ids, stop, progress) = (db.clone(), ids.clone(), stop.clone(), progress.clone());
        std::thread::spawn(move || {
            single_edge_writer_counted(&db, &ids, WRITER_SEED, &stop, &progress)
        })
    };
    let mut busy_times = Vec::with_capacity(runs);
    let (mut busy_commits, mut alone_commits, mut alone_s) = (0, 0, 0.0);
    let measured = (0..runs).try_for_each(|_| {
        let (started, before) = (Instant::now(), progress.load(Ordering::Relaxed));
        std::thread::sleep(window);
        alone_s += started.elapsed().as_secs_f64();
        let (started, between) = (Instant::now(), progress.load(Ordering::Relaxed));
        alone_commits += between - before;
        pagerank()?;
        busy_times.push(started.elapsed().as_secs_f64());
        busy_commits += progress.load(Ordering::Relaxed) - between;
        Ok::<(), Error>(())
    });
    stop.store(true, Ordering::Relaxed);
    let commits = writer
        .join()
        .map_err(|_| failure("the writer thread panicked"))??;
    measured?;
    let busy_s = busy_times.iter().sum();
    Ok(Windows {
        busy_median_s: median_of(&mut busy_times),
        busy_commits,
        busy_s,
        alone_commits,
        alone_s,
        commits,
    })
}

/// Vertices, then weighted edges in batched transactions (vertex `i` = `ids[i]`).
fn load(
    db: &Database,
    n: usize,
    pairs: &[(u32, u32)],
    weights: &[f64],
) -> Result<Vec<VertexId>, Error> {
    db.create_vertex_table(&VertexTableSpec::new("V"))?;
    db.create_edge_table("V", "E", "V", &[("weight", DataType::Float64)])?;
    let ids = create_vertices(db, n)?;
    let started = Instant::now();
    let batches = pairs.len().div_ceil(LOAD_BATCH_EDGES);
    for (i, (batch, batch_weights)) in pairs
        .chunks(LOAD_BATCH_EDGES)
        .zip(weights.chunks(LOAD_BATCH_EDGES))
        .enumerate()
    {
        let mut tx = db.begin();
        for (&(src, dst), &w) in batch.iter().zip(batch_weights) {
            tx.create_edge(
                ids[src as usize],
                "E",
                ids[dst as usize],
                &[("weight", Value::from(w))],
            )?;
        }
        tx.commit()?;
        if i % PROGRESS_EVERY_BATCHES == 0 || i + 1 == batches {
            eprint!(
                "\r  loading: {:>5.1}% of {} edges",
                100.0 * (i + 1) as f64 / batches as f64,
                pairs.len()
            );
        }
    }
    eprintln!(" in {:.1} s", started.elapsed().as_secs_f64());
    Ok(ids)
}

/// The same graph as `load`, in one bulk load: vertices, then edges in batches of
/// LOAD_BATCH_EDGES, one commit.
fn bulk_load(
    db: &Database,
    n: usize,
    pairs: &[(u32, u32)],
    weights: &[f64],
) -> Result<Vec<VertexId>, Error> {
    db.create_vertex_table(&VertexTableSpec::new("V"))?;
    db.create_edge_table("V", "E", "V", &[("weight", DataType::Float64)])?;
    let started = Instant::now();
    let mut load = db.bulk_load();
    let added = load.add_nodes(&["V"], None, &[], n)?;
    let ids: Vec<VertexId> = added
        .ids
        .into_iter()
        .map(|id| id.ok_or_else(|| failure("bulk load rejected a vertex")))
        .collect::<Result<_, _>>()?;
    for (batch, batch_weights) in pairs
        .chunks(LOAD_BATCH_EDGES)
        .zip(weights.chunks(LOAD_BATCH_EDGES))
    {
        let src: Vec<VertexId> = batch.iter().map(|e| ids[e.0 as usize]).collect();
        let dst: Vec<VertexId> = batch.iter().map(|e| ids[e.1 as usize]).collect();
        let column = [(
            "weight".to_string(),
            batch_weights.iter().map(|&w| Value::from(w)).collect(),
        )];
        let added = load.add_relationships("E", &src, &dst, &column)?;
        if let Some((row, e)) = added.rejected.first() {
            return Err(failure(format!("bulk load rejected edge {row}: {e}")));
        }
    }
    load.commit()?;
    eprintln!(
        "  bulk load: {} edges in {:.1} s",
        pairs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(ids)
}

fn write_edge_list(
    dir: &Path,
    scale: u32,
    pairs: &[(u32, u32)],
    weights: &[f64],
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    let edges = || pairs.iter().zip(weights);
    let bin = dir.join(format!("rmat-{scale}.bin"));
    write_file(&bin, |out| {
        for (&(src, dst), &w) in edges() {
            out.write_all(&src.to_le_bytes())?;
            out.write_all(&dst.to_le_bytes())?;
            out.write_all(&w.to_le_bytes())?;
        }
        Ok(())
    })?;
    let csv = dir.join(format!("rmat-{scale}.csv"));
    write_file(&csv, |out| {
        writeln!(out, "src,dst,weight")?;
        for (&(src, dst), &w) in edges() {
            writeln!(out, "{src},{dst},{w}")?;
        }
        Ok(())
    })?;
    eprintln!("wrote {} and {}", bin.display(), csv.display());
    Ok(())
}

/// Create `path` and fill it through a buffer with `body`.
fn write_file(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), Error> {
    let io = |e| Error::io(path.display().to_string(), e);
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    body(&mut out).map_err(io)?;
    out.flush().map_err(io)
}

/// Median wall-clock seconds of the runs of `f`, and the last run's result: `repeats` runs,
/// or more while they add up to less than `MIN_MEASURE_SECONDS` (at most `MAX_RUNS`). A kernel
/// of 20 ms measured three times mostly measures the allocator faulting in fresh pages for
/// its first result vectors; repeated for a second, the median is the steady state — on both
/// sides of every ratio, as both are measured by this function.
fn median<T>(repeats: usize, mut f: impl FnMut() -> Result<T, Error>) -> Result<(f64, T), Error> {
    let mut times = Vec::with_capacity(repeats);
    let mut total_s = 0.0;
    let result = loop {
        let started = Instant::now();
        let result = f()?;
        let seconds = started.elapsed().as_secs_f64();
        times.push(seconds);
        total_s += seconds;
        let enough = times.len() >= repeats.max(1) && total_s >= MIN_MEASURE_SECONDS;
        if enough || times.len() >= MAX_RUNS {
            break result;
        }
    };
    Ok((median_of(&mut times), result))
}

/// The median of `times` (not empty), which it sorts.
fn median_of(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The driver reports every failure as a `plexus::Error` (what `main` prints).
fn failure(e: impl ToString) -> Error {
    Error::InvalidArgument(format!("algo benchmark: {}", e.to_string()))
}
