//! `graphar`: Apache GraphAr figures (issue 21) — export and import throughput, neighbour
//! retrieval and label filtering on a graph read in place, each against its baseline in the
//! same run.
//!
//! WHAT
//! ====
//! The seeded RMAT graph of `--scale` (the generator of `rmat.rs`, seed 42: 2^scale `:V`
//! vertices, 16 edges per vertex) is bulk-loaded into a database in memory, then:
//!
//!   export_edges_per_s   `plexus_graphar::export` of the database (both adjacency orders,
//!                        Parquet), edges over seconds
//!   import_edges_per_s   `plexus_graphar::import` of those files into a fresh database
//!                        on disk (under `--data`, as `plexus import graphar` does)
//!   neighbor_retrieval   ms per vertex to fetch the out-neighbours of the `--top` vertices
//!                        of highest out-degree through `attach::AttachedGraph` (offset index
//!                        + Parquet page index; a fresh handle, so footers are read again),
//!                        against
//!                          `baseline_scan`: the same edges as a plain Parquet edge list
//!                          (src, dst, generation order), filtered by a full scan per vertex;
//!                          `baseline_pruned`: the list sorted by src, 1 Mi rows per row
//!                          group, read per vertex with the row groups' statistics and the
//!                          page index (only pages whose src range holds the vertex) — the
//!                          best a plain Parquet reader does;
//!   label_filter         ms for `(A AND B) OR C` over 2^scale vertices whose labels come in
//!                        runs (GraphAr label chunks), evaluated per run
//!                        (`AttachedGraph::filter_labels`) against the same label columns
//!                        evaluated row by row;
//!   attached_pagerank    seconds of PageRank (20 iterations, the Graphalytics definition) on
//!                        the exported files attached (`mount::Mounted`, opened afresh each
//!                        run: the edge lists are read from Parquet into a CSR) against the
//!                        same kernel on the imported database (projection from a snapshot
//!                        included); the ranks are checked equal (relative 1e-9).
//!
//! Every answer of the attached reader is checked against its baseline's (same neighbour
//! multiset, same ranges); a mismatch fails the run. Neighbour timings cover the fetches
//! only: the answers are sorted and compared after each timed loop. Times are medians of `--repeats` runs;
//! the files live under `--data` (default: a temporary directory, removed at the end).

use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Int64Array, RecordBatch};
use arrow::datatypes::{DataType as ArrowType, Field, Int64Type, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::Statistics;
use plexus::{Config, Database, Value, VertexId};
use plexus_graphar::attach::{AttachedGraph, DEFAULT_CACHE_BUDGET_BYTES, Direction, LabelFilter};
use plexus_graphar::meta::{GraphInfo, PropertyGroup, VertexInfo};
use plexus_graphar::mount::Mounted;
use plexus_graphar::{ExportOptions, VertexData, export, import};

use crate::report::Figure;
use crate::rmat;

/// Rows per row group of the pruned baseline's sorted edge list.
const PRUNED_ROW_GROUP_ROWS: usize = 1 << 20;
/// Edges handed to `add_relationships` at a time.
const LOAD_BATCH_EDGES: usize = 1 << 20;

#[derive(clap::Args)]
pub struct Options {
    /// RMAT scale: 2^scale vertices, 16 edges per vertex.
    #[arg(long, default_value_t = 20)]
    scale: u32,
    /// Where to write the files (default: a temporary directory, removed at the end).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Vertices of highest out-degree whose neighbours are fetched.
    #[arg(long, default_value_t = 100)]
    top: usize,
    /// Of those, how many the full-scan baseline fetches (each is a scan of every edge).
    #[arg(long, default_value_t = 10)]
    scan_vertices: usize,
    /// Measured runs per figure (the median is printed).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
}

pub fn run(options: &Options) -> Result<(), String> {
    let temp = options.data.is_none();
    let root = (options.data.clone()).unwrap_or_else(|| {
        std::env::temp_dir().join(format!("plexus-graphar-bench-{}", std::process::id()))
    });
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let result = measure(options, &root);
    if temp {
        let _ = std::fs::remove_dir_all(&root);
    }
    result
}

fn measure(options: &Options, root: &Path) -> Result<(), String> {
    let scale = options.scale;
    let edges = rmat::edges(scale, 42);
    let n = 1u64 << scale;
    let m = edges.len() as f64;
    let extra = |f: Figure<'static>| f.with("scale", f64::from(scale));
    eprintln!("graphar: {n} vertices, {} edges", edges.len());

    // Export and import.
    let db = load(n, &edges)?;
    let out = root.join("export");
    let started = Instant::now();
    let options_export = ExportOptions {
        name: "rmat".into(),
        ..ExportOptions::default()
    };
    let summary = export(&db, &out, &options_export).map_err(|e| e.to_string())?;
    let export_s = started.elapsed().as_secs_f64();
    drop(db);
    extra(Figure::new("export_edges_per_s", m / export_s, "edges/s").with("seconds", export_s))
        .print();
    let graph = GraphInfo::load(&summary.graph_file).map_err(|e| e.to_string())?;
    // On disk, as `plexus import graphar` loads (a database in memory keeps its files in the
    // tests' fault-injecting store, which copies each file at every sync).
    let copy_dir = root.join("imported");
    let _ = std::fs::remove_dir_all(&copy_dir);
    let copy = Database::open(&copy_dir, Config::default()).map_err(|e| e.to_string())?;
    let started = Instant::now();
    import(&copy, &graph, &mut |_| {}).map_err(|e| e.to_string())?;
    let import_s = started.elapsed().as_secs_f64();
    extra(Figure::new("import_edges_per_s", m / import_s, "edges/s").with("seconds", import_s))
        .print();

    // PageRank on the attached files against the imported database.
    let params = plexus::algo::PageRankParams {
        damping: 0.85,
        iterations: 20,
        tolerance: None,
    };
    let projection = plexus::algo::Projection::new();
    // Settled first: no merge left for background maintenance to run during the figures.
    plexus::admin::merge_runs(&copy).map_err(|e| e.to_string())?;
    let mut imported_ranks = Vec::new();
    let imported_s = median(options.repeats, || {
        let started = Instant::now();
        let snapshot = copy.snapshot();
        imported_ranks =
            plexus::algo::pagerank(&snapshot, &projection, &params).map_err(|e| e.to_string())?;
        Ok(started.elapsed().as_secs_f64())
    })?;
    // The imported database (and its background maintenance) ends before the next figures.
    drop(copy);
    std::fs::remove_dir_all(&copy_dir).map_err(|e| format!("{}: {e}", copy_dir.display()))?;
    let mut attached_ranks = Vec::new();
    let attached_s = median(options.repeats, || {
        let started = Instant::now();
        let mounted = Mounted::open("rmat", &summary.graph_file, DEFAULT_CACHE_BUDGET_BYTES)
            .map_err(|e| e.to_string())?;
        let input = plexus::algo::GraphInput::External(&mounted);
        attached_ranks =
            plexus::algo::pagerank(input, &projection, &params).map_err(|e| e.to_string())?;
        Ok(started.elapsed().as_secs_f64())
    })?;
    same_ranks(&imported_ranks, &attached_ranks)?;
    extra(
        Figure::new("attached_pagerank", attached_s, "s")
            .baseline(imported_s)
            .with("iterations", 20.0)
            .with_label("baseline_system", "plexus imported"),
    )
    .print();

    // Neighbour retrieval.
    let mut degree = vec![0u32; n as usize];
    for &(s, _) in &edges {
        degree[s as usize] += 1;
    }
    let mut by_degree: Vec<u32> = (0..n as u32).collect();
    by_degree.sort_by_key(|&v| (std::cmp::Reverse(degree[v as usize]), v));
    let top: Vec<u64> = by_degree
        .iter()
        .take(options.top)
        .map(|&v| u64::from(v))
        .collect();
    let plain = root.join("edges.parquet");
    write_edge_list(&plain, edges.iter().copied(), usize::MAX)?;
    let mut sorted_edges = edges.clone();
    sorted_edges.sort_unstable();
    let pruned = root.join("edges-sorted.parquet");
    write_edge_list(&pruned, sorted_edges.into_iter(), PRUNED_ROW_GROUP_ROWS)?;
    drop(edges);

    // Each timed loop only fetches; answers are sorted and compared after its clock stops.
    let mut attached_answers = BTreeMap::new();
    let attached_ms = median(options.repeats, || {
        let g = AttachedGraph::open(&summary.graph_file, DEFAULT_CACHE_BUDGET_BYTES)
            .map_err(|e| e.to_string())?;
        let e = g
            .edge_info("V", "E", "V")
            .map_err(|e| e.to_string())?
            .clone();
        let mut fetched = Vec::with_capacity(top.len());
        let started = Instant::now();
        for &v in &top {
            fetched.push(
                g.neighbors(&e, Direction::Out, v)
                    .map_err(|e| e.to_string())?,
            );
        }
        let ms = started.elapsed().as_secs_f64() * 1e3 / top.len() as f64;
        for (&v, mut got) in top.iter().zip(fetched) {
            got.sort_unstable();
            attached_answers.insert(v, got);
        }
        Ok(ms)
    })?;
    let scan_top = &top[..options.scan_vertices.min(top.len())];
    let scan_ms = median(options.repeats, || {
        let mut fetched = Vec::with_capacity(scan_top.len());
        let started = Instant::now();
        for &v in scan_top {
            fetched.push(scan_neighbors(&plain, v)?);
        }
        let ms = started.elapsed().as_secs_f64() * 1e3 / scan_top.len() as f64;
        for (&v, got) in scan_top.iter().zip(fetched) {
            check(&attached_answers, v, got)?;
        }
        Ok(ms)
    })?;
    let pruned_ms = median(options.repeats, || {
        let mut fetched = Vec::with_capacity(top.len());
        let started = Instant::now();
        let metadata = footer(&pruned)?;
        for &v in &top {
            fetched.push(pruned_neighbors(&pruned, &metadata, v)?);
        }
        let ms = started.elapsed().as_secs_f64() * 1e3 / top.len() as f64;
        for (&v, got) in top.iter().zip(fetched) {
            check(&attached_answers, v, got)?;
        }
        Ok(ms)
    })?;
    let neighbours: usize = attached_answers.values().map(Vec::len).sum();
    extra(
        Figure::new("neighbor_retrieval", attached_ms, "ms/vertex")
            .baseline(scan_ms)
            .with("baseline_pruned", pruned_ms)
            .with("speedup_vs_scan", scan_ms / attached_ms)
            .with("speedup_vs_pruned", pruned_ms / attached_ms)
            .with("vertices", top.len() as f64)
            .with("scan_vertices", scan_top.len() as f64)
            .with("neighbours", neighbours as f64)
            .with_label("baseline_system", "parquet full scan"),
    )
    .print();

    // Label filtering.
    let labels_root = root.join("labels");
    let labelled = write_labelled(&labels_root, n)?;
    let filter = LabelFilter::Or(
        Box::new(LabelFilter::And(
            Box::new(LabelFilter::Label("A".into())),
            Box::new(LabelFilter::Label("B".into())),
        )),
        Box::new(LabelFilter::Label("C".into())),
    );
    let mut by_runs = Vec::new();
    let runs_ms = median(options.repeats, || {
        let g = AttachedGraph::open(&labelled, DEFAULT_CACHE_BUDGET_BYTES)
            .map_err(|e| e.to_string())?;
        let started = Instant::now();
        by_runs = g.filter_labels("P", &filter).map_err(|e| e.to_string())?;
        Ok(started.elapsed().as_secs_f64() * 1e3)
    })?;
    let rows_ms = median(options.repeats, || {
        let started = Instant::now();
        let by_rows = filter_row_by_row(&labels_root, n, &filter)?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        if by_rows != by_runs {
            return Err("label_filter: runs and rows disagree".into());
        }
        Ok(ms)
    })?;
    let matched: u64 = by_runs.iter().map(|r| r.end - r.start).sum();
    extra(
        Figure::new("label_filter", runs_ms, "ms")
            .baseline(rows_ms)
            .with("speedup", rows_ms / runs_ms)
            .with("vertices", n as f64)
            .with("matched", matched as f64)
            .with("ranges", by_runs.len() as f64)
            .with_label("baseline_system", "row by row"),
    )
    .print();

    Ok(())
}

/// Whether two PageRank results hold the same rank for each vertex offset (the imported
/// database keeps GraphAr's order within its one table).
fn same_ranks(a: &[(VertexId, f64)], b: &[(VertexId, f64)]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!(
            "attached_pagerank: {} vs {} vertices",
            a.len(),
            b.len()
        ));
    }
    for ((u, x), (v, y)) in a.iter().zip(b) {
        if u.offset != v.offset || (x - y).abs() > 1e-9 * x.abs().max(1e-12) {
            return Err(format!("attached_pagerank: {u} has {x}, {v} has {y}"));
        }
    }
    Ok(())
}

/// The RMAT graph in a database in memory, through one bulk load.
fn load(n: u64, edges: &[(u32, u32)]) -> Result<Database, String> {
    let e = |e: plexus::Error| e.to_string();
    let db = Database::open_in_memory(Config::default()).map_err(e)?;
    let mut load = db.bulk_load();
    let ids: Vec<Value> = (0..n as i64).map(Value::Int).collect();
    let added = load
        .add_nodes(&["V"], None, &[("id".to_string(), ids)], n as usize)
        .map_err(e)?;
    let nodes: Vec<VertexId> = added
        .ids
        .into_iter()
        .collect::<Option<_>>()
        .ok_or("a vertex was refused")?;
    for batch in edges.chunks(LOAD_BATCH_EDGES) {
        let src: Vec<VertexId> = batch.iter().map(|&(s, _)| nodes[s as usize]).collect();
        let dst: Vec<VertexId> = batch.iter().map(|&(_, d)| nodes[d as usize]).collect();
        load.add_relationships("E", &src, &dst, &[]).map_err(e)?;
    }
    load.commit().map_err(e)?;
    Ok(db)
}

/// The median of `repeats` (at least one) measurements.
fn median(repeats: usize, mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    let mut times = Vec::new();
    for _ in 0..repeats.max(1) {
        times.push(f()?);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Fails unless a baseline found `v`'s neighbours as the attached reader did.
fn check(answers: &BTreeMap<u64, Vec<u64>>, v: u64, mut got: Vec<u64>) -> Result<(), String> {
    got.sort_unstable();
    if answers.get(&v) != Some(&got) {
        return Err(format!(
            "the neighbours of {v} differ between the attached graph and a baseline"
        ));
    }
    Ok(())
}

/// (src, dst) as a plain Parquet edge list, `row_group_rows` rows per row group.
fn write_edge_list(
    path: &Path,
    edges: impl Iterator<Item = (u32, u32)>,
    row_group_rows: usize,
) -> Result<(), String> {
    let (src, dst): (Vec<i64>, Vec<i64>) = edges.map(|(s, d)| (i64::from(s), i64::from(d))).unzip();
    let schema = Arc::new(Schema::new(vec![
        Field::new("src", ArrowType::Int64, false),
        Field::new("dst", ArrowType::Int64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(src)),
        Arc::new(Int64Array::from(dst)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())?;
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(row_group_rows.min(batch.num_rows().max(1))))
        .build();
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut writer = ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| e.to_string())?;
    writer.write(&batch).map_err(|e| e.to_string())?;
    writer.close().map_err(|e| e.to_string())?;
    Ok(())
}

/// `v`'s out-neighbours by a full scan of the plain list.
fn scan_neighbors(path: &Path, v: u64) -> Result<Vec<u64>, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        collect(&batch, v, &mut out);
    }
    Ok(out)
}

/// The dst of every row of `batch` whose src is `v`.
fn collect(batch: &RecordBatch, v: u64, out: &mut Vec<u64>) {
    let src = batch.column(0).as_primitive::<Int64Type>();
    let dst = batch.column(1).as_primitive::<Int64Type>();
    for (s, d) in src.values().iter().zip(dst.values()) {
        if *s as u64 == v {
            out.push(*d as u64);
        }
    }
}

fn footer(path: &Path) -> Result<ArrowReaderMetadata, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    ArrowReaderMetadata::load(&file, options).map_err(|e| e.to_string())
}

/// `v`'s out-neighbours from the sorted list: row groups whose src statistics hold `v`, and
/// in them only the pages whose src min/max (page index) hold it.
fn pruned_neighbors(
    path: &Path,
    metadata: &ArrowReaderMetadata,
    v: u64,
) -> Result<Vec<u64>, String> {
    let meta = metadata.metadata();
    let v = v as i64;
    let mut row_groups = Vec::new();
    let mut selectors = Vec::new();
    for (rg, group) in meta.row_groups().iter().enumerate() {
        let holds = match group.column(0).statistics() {
            Some(Statistics::Int64(s)) => {
                s.min_opt().is_none_or(|min| *min <= v) && s.max_opt().is_none_or(|max| *max >= v)
            }
            _ => true,
        };
        if !holds {
            continue;
        }
        row_groups.push(rg);
        let rows = group.num_rows() as usize;
        let pages = meta
            .page_index()
            .and_then(|p| Some((p.column_index(rg, 0)?, p.offset_index(rg, 0)?)));
        let Some((ColumnIndexMetaData::INT64(index), offsets)) = pages else {
            selectors.push(RowSelector::select(rows));
            continue;
        };
        let starts: Vec<usize> = (offsets.page_locations().iter())
            .map(|p| p.first_row_index as usize)
            .collect();
        for (page, &start) in starts.iter().enumerate() {
            let end = starts.get(page + 1).copied().unwrap_or(rows);
            let keep = index.min_value(page).is_none_or(|min| *min <= v)
                && index.max_value(page).is_none_or(|max| *max >= v);
            selectors.push(if keep {
                RowSelector::select(end - start)
            } else {
                RowSelector::skip(end - start)
            });
        }
    }
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata.clone())
        .with_row_groups(row_groups)
        .with_row_selection(RowSelection::from(selectors))
        .build()
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for batch in reader {
        collect(&batch.map_err(|e| e.to_string())?, v as u64, &mut out);
    }
    Ok(out)
}

/// A vertex type `P` of `n` vertices with labels A, B, C in runs (GraphAr files written by
/// `plexus_graphar::write`); returns its graph file.
fn write_labelled(root: &Path, n: u64) -> Result<PathBuf, String> {
    let mut rng = rmat::Rng::new(7);
    let mut flags = |mean_run: u64| {
        let mut out = Vec::with_capacity(n as usize);
        let mut on = false;
        while (out.len() as u64) < n {
            let run = 1 + rng.below(2 * mean_run);
            out.extend(std::iter::repeat_n(
                on,
                run.min(n - out.len() as u64) as usize,
            ));
            on = !on;
        }
        out
    };
    let labels = vec![
        ("A".to_string(), flags(5_000)),
        ("B".to_string(), flags(3_000)),
        ("C".to_string(), flags(20_000)),
    ];
    let info = VertexInfo {
        type_name: "P".into(),
        chunk_size: 1 << 18,
        prefix: "vertex/P/".into(),
        labels: labels.iter().map(|(l, _)| l.clone()).collect(),
        property_groups: Vec::<PropertyGroup>::new(),
        file: PathBuf::new(),
    };
    let data = VertexData {
        count: n,
        columns: Vec::new(),
        labels,
    };
    plexus_graphar::write::write_vertices(root, &info, &data).map_err(|e| e.to_string())?;
    let graph = GraphInfo {
        name: "labelled".into(),
        root: root.to_path_buf(),
        vertices: vec![info],
        edges: Vec::new(),
        labels: vec!["A".into(), "B".into(), "C".into()],
        extra_info: Vec::new(),
        file: PathBuf::new(),
    };
    graph.write_yaml(root).map_err(|e| e.to_string())
}

/// The baseline of `label_filter`: the same label chunks, the filter evaluated per row.
fn filter_row_by_row(root: &Path, n: u64, filter: &LabelFilter) -> Result<Vec<Range<u64>>, String> {
    let names = filter.labels();
    let chunk_size = 1u64 << 18;
    let mut out: Vec<Range<u64>> = Vec::new();
    let mut flags = vec![false; names.len()];
    for chunk in 0..n.div_ceil(chunk_size) {
        let path = root.join(format!("vertex/P/labels/chunk{chunk}"));
        let file = File::open(&path).map_err(|e| e.to_string())?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| e.to_string())?;
        let mut row = chunk * chunk_size;
        for batch in reader {
            let batch = batch.map_err(|e| e.to_string())?;
            let columns: Vec<&BooleanArray> = (names.iter())
                .map(|name| {
                    batch
                        .column_by_name(name)
                        .map(|c| c.as_boolean())
                        .ok_or(format!("no label {name}"))
                })
                .collect::<Result<_, _>>()?;
            for i in 0..batch.num_rows() {
                for (flag, column) in flags.iter_mut().zip(&columns) {
                    *flag = column.is_valid(i) && column.value(i);
                }
                if filter.eval(&names, &flags) {
                    match out.last_mut() {
                        Some(last) if last.end == row => last.end = row + 1,
                        _ => out.push(row..row + 1),
                    }
                }
                row += 1;
            }
        }
    }
    Ok(out)
}
