//! `storage`: insert, scan and transaction figures for the core engine.
//!
//! Phases (each on its own database directory, removed afterwards):
//! 1. bulk: vertices, then all RMAT edges in batched transactions (`bulk_insert`), a compaction
//!    (what a bulk load ends with), full out-neighbour scans (`edge_scan_bulk`) against a static
//!    CSR of the same edges built in this run, `topology_bytes_per_edge`, single-edge
//!    transactions (`txn_single_edge_periodic`), and scans while a writer commits
//!    (`edge_scan_under_writes`).
//! 2. random: the same edges inserted in small transactions and scanned without an explicit
//!    compaction (`edge_scan_random`).
//! 3. fsync: single-edge transactions acknowledged only after fsync (`txn_single_edge_fsync`),
//!    with one thread and with several (group commit).
//!
//! Scans are single-threaded on both sides and sum neighbour ids, so neither loop can be
//! optimised away. The static CSR stores what a property-graph CSR needs: offsets (u64),
//! destinations (u32) and edge ids (u32).

pub(crate) mod lsm;

use crate::report::Figure;
use crate::rmat::{self, Rng};
use plexus::{Config, Database, DurabilityMode, Error, GraphSnapshot, Value, VertexId};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

pub struct Options {
    pub scale: u32,
    pub seconds: f64,
    pub dir: PathBuf,
    /// Memtable budget of the disk-tier figures.
    pub lsm_budget_bytes: u64,
    /// Only the disk-tier figures.
    pub lsm_only: bool,
    /// Neighbour packing of the disk-tier runs.
    pub lsm_run_packing: plexus::RunPacking,
}

const BULK_BATCH_EDGES: usize = 100_000;
const SMALL_TXN_EDGES: usize = 64;
const VERTEX_BATCH: usize = 100_000;
const SCAN_REPEATS: usize = 3;
const FSYNC_THREADS: usize = 8;

struct StaticCsr {
    offsets: Vec<u64>,
    dst: Vec<u32>,
    eid: Vec<u32>,
}

impl StaticCsr {
    fn build(n: usize, edges: &[(u32, u32)]) -> Self {
        let mut offsets = vec![0u64; n + 1];
        for &(s, _) in edges {
            offsets[s as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut cursor = offsets.clone();
        let (mut dst, mut eid) = (vec![0u32; edges.len()], vec![0u32; edges.len()]);
        for (i, &(s, d)) in edges.iter().enumerate() {
            let at = cursor[s as usize] as usize;
            dst[at] = d;
            eid[at] = i as u32;
            cursor[s as usize] += 1;
        }
        Self { offsets, dst, eid }
    }

    fn scan(&self) -> u64 {
        let mut acc = 0u64;
        for v in 0..self.offsets.len() - 1 {
            let (a, b) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
            acc = acc.wrapping_add(self.dst[a..b].iter().map(|&x| u64::from(x)).sum::<u64>());
        }
        acc
    }

    fn size_bytes(&self) -> usize {
        self.offsets.len() * 8 + self.dst.len() * 4 + self.eid.len() * 4
    }
}

/// Sums neighbour ids over every out-adjacency of every edge table at the snapshot.
pub(crate) fn plexus_scan(snap: &GraphSnapshot) -> Result<(u64, u64), Error> {
    let (mut acc, mut edges) = (0u64, 0u64);
    for (table, _) in snap.edge_tables(Some("E")) {
        for segment in 0..snap.segment_count(table, true)? {
            snap.scan_segment(table, true, segment, |_, nbrs| {
                acc = acc.wrapping_add(nbrs.iter().map(|&x| u64::from(x)).sum::<u64>());
                edges += nbrs.len() as u64;
            })?;
        }
    }
    Ok((acc, edges))
}

/// Edges/s of `scan` (which returns (checksum, edges)), run at least `SCAN_REPEATS` times and
/// for at least `min_seconds`: total edges over total time.
pub(crate) fn edges_per_s(
    min_seconds: f64,
    mut scan: impl FnMut() -> Result<(u64, u64), Error>,
) -> Result<(f64, u64), Error> {
    let started = Instant::now();
    let (mut edges, mut runs, mut checksum) = (0u64, 0usize, 0u64);
    while runs < SCAN_REPEATS || started.elapsed().as_secs_f64() < min_seconds {
        let (sum, n) = scan()?;
        checksum = std::hint::black_box(sum);
        edges += n;
        runs += 1;
    }
    Ok((edges as f64 / started.elapsed().as_secs_f64(), checksum))
}

pub(crate) fn fresh_dir(options: &Options, tag: &str) -> PathBuf {
    let dir = options
        .dir
        .join(format!("plexus-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The in-memory engine's figures: no memtable budget, so the topology stays in memtables
/// (the disk tier is measured separately by the `lsm_*` figures).
fn config(durability: DurabilityMode) -> Config {
    Config {
        durability,
        checkpoint_wal_bytes: 0,
        memtable_budget_bytes: u64::MAX,
        ..Config::default()
    }
}

pub(crate) fn create_vertices(db: &Database, n: usize) -> Result<Vec<VertexId>, Error> {
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(VERTEX_BATCH) {
        let mut tx = db.begin();
        for _ in start..(start + VERTEX_BATCH).min(n) {
            ids.push(tx.create_vertex(&["V"], &[])?);
        }
        tx.commit()?;
    }
    Ok(ids)
}

fn insert_edges(
    db: &Database,
    ids: &[VertexId],
    edges: &[(u32, u32)],
    per_txn: usize,
) -> Result<f64, Error> {
    let started = Instant::now();
    for (i, batch) in edges.chunks(per_txn).enumerate() {
        let mut tx = db.begin();
        for &(s, d) in batch {
            tx.create_edge(ids[s as usize], "E", ids[d as usize], &[])?;
        }
        tx.commit()?;
        if i % (1_000_000 / per_txn).max(1) == 0 {
            eprint!(
                "\r  {:>5.1}% of {} edges",
                100.0 * (i * per_txn) as f64 / edges.len() as f64,
                edges.len()
            );
        }
    }
    eprintln!("\r  100.0% of {} edges", edges.len());
    Ok(edges.len() as f64 / started.elapsed().as_secs_f64())
}

/// Commits single-edge transactions between random vertices until `stop`; returns commits.
pub(crate) fn single_edge_writer(
    db: &Database,
    ids: &[VertexId],
    seed: u64,
    stop: &AtomicBool,
) -> Result<u64, Error> {
    single_edge_writer_counted(db, ids, seed, stop, &AtomicU64::new(0))
}

/// [`single_edge_writer`] keeping the commits so far in `progress` (this writer's own counter)
/// for an observer that measures the rate over windows while it runs.
pub(crate) fn single_edge_writer_counted(
    db: &Database,
    ids: &[VertexId],
    seed: u64,
    stop: &AtomicBool,
    progress: &AtomicU64,
) -> Result<u64, Error> {
    let mut rng = Rng::new(seed);
    let mut commits = 0;
    while !stop.load(Ordering::Relaxed) {
        let (s, d) = (
            rng.below(ids.len() as u64) as usize,
            rng.below(ids.len() as u64) as usize,
        );
        let mut tx = db.begin();
        tx.create_edge(ids[s], "E", ids[d], &[])?;
        tx.commit()?;
        commits += 1;
        progress.store(commits, Ordering::Relaxed);
    }
    Ok(commits)
}

/// Runs `threads` single-edge writers for `seconds`; returns commits/s.
pub(crate) fn single_edge_rate(
    db: &Arc<Database>,
    ids: &Arc<Vec<VertexId>>,
    threads: usize,
    seconds: f64,
) -> Result<f64, Error> {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (db, ids, stop) = (db.clone(), ids.clone(), stop.clone());
            std::thread::spawn(move || single_edge_writer(&db, &ids, 1000 + t as u64, &stop))
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let mut commits = 0;
    for h in handles {
        commits += h.join().expect("writer thread")?;
    }
    Ok(commits as f64 / started.elapsed().as_secs_f64())
}

pub fn run(options: &Options) -> Result<(), Error> {
    let scale = options.scale;
    let n = 1usize << scale;
    eprintln!(
        "generating RMAT scale {scale}: {n} vertices, {} edges",
        rmat::EDGE_FACTOR << scale
    );
    let edges = rmat::edges(scale, 42);
    let csr = StaticCsr::build(n, &edges);
    let (csr_rate, csr_sum) = edges_per_s(options.seconds / 2.0, || {
        Ok((csr.scan(), csr.dst.len() as u64))
    })?;
    let s = f64::from(scale);

    if !options.lsm_only {
        bulk_phase(options, n, &edges, csr_rate, csr_sum, &csr)?;
        random_phase(options, n, &edges, csr_rate, csr_sum, s)?;
        fsync_phase(options, s)?;
    }
    drop(csr);
    lsm::run(options, n, &edges, csr_rate, csr_sum)
}

fn bulk_phase(
    options: &Options,
    n: usize,
    edges: &[(u32, u32)],
    csr_rate: f64,
    csr_sum: u64,
    csr: &StaticCsr,
) -> Result<(), Error> {
    let s = f64::from(options.scale);
    let dir = fresh_dir(options, "bulk");
    let db = Arc::new(Database::open(&dir, config(DurabilityMode::Periodic))?);
    eprintln!("bulk phase: {n} vertices, then edges in transactions of {BULK_BATCH_EDGES}");
    let ids = Arc::new(create_vertices(&db, n)?);
    let rate = insert_edges(&db, &ids, edges, BULK_BATCH_EDGES)?;
    Figure::new("bulk_insert", rate, "edges/s")
        .with("scale", s)
        .with("batch_edges", BULK_BATCH_EDGES as f64)
        .print();
    db.compact();

    let snap = db.snapshot();
    let (scan_rate, sum) = edges_per_s(options.seconds / 2.0, || plexus_scan(&snap))?;
    assert_eq!(
        sum, csr_sum,
        "Plexus and the static CSR scanned the same edges"
    );
    Figure::new("edge_scan_bulk", scan_rate, "edges/s")
        .baseline(csr_rate)
        .with("scale", s)
        .print();
    let plexus_bytes = snap.topology_size_bytes(true) as f64 / edges.len() as f64;
    let csr_bytes = csr.size_bytes() as f64 / edges.len() as f64;
    Figure::new("topology_bytes_per_edge", plexus_bytes, "bytes/edge")
        .baseline(csr_bytes)
        .with("scale", s)
        .print();
    drop(snap);

    let periodic = single_edge_rate(&db, &ids, 1, options.seconds)?;
    Figure::new("txn_single_edge_periodic", periodic, "txn/s")
        .with("threads", 1.0)
        .print();

    db.compact();
    let (idle, _) = edges_per_s(options.seconds, || plexus_scan(&db.snapshot()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let writer = {
        let (db, ids, stop, commits) = (db.clone(), ids.clone(), stop.clone(), commits.clone());
        std::thread::spawn(move || -> Result<(), Error> {
            commits.store(single_edge_writer(&db, &ids, 7, &stop)?, Ordering::Relaxed);
            Ok(())
        })
    };
    let started = Instant::now();
    let (busy, _) = edges_per_s(options.seconds, || plexus_scan(&db.snapshot()))?;
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer")?;
    let writer_rate = commits.load(Ordering::Relaxed) as f64 / elapsed;
    Figure::new("edge_scan_under_writes", busy, "edges/s")
        .baseline(idle)
        .with("writer_txn_per_s", writer_rate)
        .with("scale", s)
        .print();
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn random_phase(
    options: &Options,
    n: usize,
    edges: &[(u32, u32)],
    csr_rate: f64,
    csr_sum: u64,
    s: f64,
) -> Result<(), Error> {
    let dir = fresh_dir(options, "random");
    let db = Database::open(&dir, config(DurabilityMode::Periodic))?;
    eprintln!("random phase: edges in transactions of {SMALL_TXN_EDGES}");
    let ids = create_vertices(&db, n)?;
    let rate = insert_edges(&db, &ids, edges, SMALL_TXN_EDGES)?;
    Figure::new("insert_small_txns", rate, "edges/s")
        .with("txn_edges", SMALL_TXN_EDGES as f64)
        .with("scale", s)
        .print();
    let snap = db.snapshot();
    let (scan_rate, sum) = edges_per_s(options.seconds / 2.0, || plexus_scan(&snap))?;
    assert_eq!(
        sum, csr_sum,
        "Plexus and the static CSR scanned the same edges"
    );
    Figure::new("edge_scan_random", scan_rate, "edges/s")
        .baseline(csr_rate)
        .with("scale", s)
        .print();
    drop(snap);
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn fsync_phase(options: &Options, s: f64) -> Result<(), Error> {
    let dir = fresh_dir(options, "fsync");
    let db = Arc::new(Database::open(&dir, config(DurabilityMode::Fsync))?);
    let ids = {
        let mut tx = db.begin();
        let ids: Vec<_> = (0..1000)
            .map(|i| tx.create_vertex(&["V"], &[("i", Value::from(i))]))
            .collect::<Result<_, _>>()?;
        tx.commit()?;
        Arc::new(ids)
    };
    eprintln!("fsync phase: single-edge transactions, 1 and {FSYNC_THREADS} threads");
    for threads in [1, FSYNC_THREADS] {
        let rate = single_edge_rate(&db, &ids, threads, options.seconds)?;
        Figure::new("txn_single_edge_fsync", rate, "txn/s")
            .with("threads", threads as f64)
            .with("scale", s)
            .print();
    }
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
