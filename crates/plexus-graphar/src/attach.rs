//! Attached GraphAr graphs: read-only, out-of-core access to a graph left in its files.
//!
//! WHAT
//! ====
//! [`AttachedGraph::open`] reads only the YAML metadata. Everything else is read on demand,
//! a few pages at a time:
//!
//! - [`AttachedGraph::neighbors`]: the neighbours of one vertex through an ordered adjacency
//!   list. The vertex's part is `index / part_chunk_size`; that part's offset chunk (cached)
//!   gives the vertex's edge rows `[begin, end)`; only the adjacency chunks holding those rows
//!   are opened, and in each only the other endpoint's column is read, with a row selection
//!   over the Parquet page index, so the pages before and after the rows are skipped, not
//!   decoded. A high-degree vertex costs one offset lookup and a few pages; a full scan of the
//!   edge list costs every page.
//! - [`AttachedGraph::filter_labels`]: the vertices of a type whose labels satisfy a
//!   [`LabelFilter`] (AND / OR / NOT over label names), as ranges of indices. GraphAr writes
//!   labels as boolean columns in RLE; each involved column is read as runs straight from
//!   its RLE pages (`crate::rle`; through Arrow for other writers' layouts), the runs are
//!   merged into stretches where no involved label changes, and the filter is evaluated once
//!   per stretch, not once per vertex ("label filtering with RLE runs as intervals").
//!
//! MEMORY
//! ======
//! The cache keeps offset chunks and Parquet footers (with their page indexes) up to
//! `cache_budget_bytes`, evicting the oldest entry first; neighbour lists and label columns
//! are not cached (they are read per call and dropped). So memory is bounded by the budget
//! plus one call's pages, whatever the graph's size.
//!
//! USES
//! ====
//! `crate::mount` puts Cypher and the analytics kernels on top (`ATTACH GRAPHAR … AS name`,
//! `USE name MATCH …`), caching decoded property and label chunks here too. CSV payloads are
//! read whole per chunk (CSV has no pages to skip); unordered lists have no offsets, so
//! [`AttachedGraph::neighbors`] refuses them.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::datatypes::Int64Type;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::file::metadata::PageIndexPolicy;

use crate::meta::{AdjList, AdjListType, DataType, EdgeInfo, FileType, GraphInfo, VertexInfo};
use crate::read::{adj_dir, read_chunk, read_count, vertex_dir};
use crate::{DST_INDEX, Error, OFFSET, SRC_INDEX};

/// Cache budget when none is given: offsets and footers of a few thousand chunks.
pub const DEFAULT_CACHE_BUDGET_BYTES: usize = 64 << 20;

/// Neighbour lookups in one offset chunk answered by reading their two offsets alone, before
/// the chunk is loaded whole into the cache (see `AttachedGraph::offset_range`).
pub const POINT_READS_PER_CHUNK: u32 = 256;

/// Which neighbours: along the edges (through the list ordered by source) or against them
/// (ordered by destination).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Out,
    In,
}

/// A boolean expression over a vertex's labels.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelFilter {
    Label(String),
    And(Box<LabelFilter>, Box<LabelFilter>),
    Or(Box<LabelFilter>, Box<LabelFilter>),
    Not(Box<LabelFilter>),
}

impl LabelFilter {
    /// The labels the filter reads, each once, in first-use order.
    pub fn labels(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            LabelFilter::Label(l) => {
                if !out.contains(&l.as_str()) {
                    out.push(l);
                }
            }
            LabelFilter::And(a, b) | LabelFilter::Or(a, b) => {
                a.collect(out);
                b.collect(out);
            }
            LabelFilter::Not(a) => a.collect(out),
        }
    }

    /// The filter on one combination of flags (`flags[i]` for `labels[i]`).
    pub fn eval(&self, labels: &[&str], flags: &[bool]) -> bool {
        match self {
            LabelFilter::Label(l) => labels.iter().position(|x| x == l).is_some_and(|i| flags[i]),
            LabelFilter::And(a, b) => a.eval(labels, flags) && b.eval(labels, flags),
            LabelFilter::Or(a, b) => a.eval(labels, flags) || b.eval(labels, flags),
            LabelFilter::Not(a) => !a.eval(labels, flags),
        }
    }
}

/// A GraphAr graph opened for reading in place (see the module docs).
pub struct AttachedGraph {
    graph: GraphInfo,
    cache: Mutex<Cache>,
}

impl AttachedGraph {
    /// Opens the graph file `path` (metadata only) with a cache of `cache_budget_bytes`.
    pub fn open(path: &Path, cache_budget_bytes: usize) -> Result<AttachedGraph, Error> {
        Ok(AttachedGraph {
            graph: GraphInfo::load(path)?,
            cache: Mutex::new(Cache::new(cache_budget_bytes)),
        })
    }

    pub fn graph(&self) -> &GraphInfo {
        &self.graph
    }

    /// The number of vertices of `vertex_type`.
    pub fn vertex_count(&self, vertex_type: &str) -> Result<u64, Error> {
        let v = self.vertex_info(vertex_type)?;
        read_count(&vertex_dir(&self.graph, v).join("vertex_count"))
    }

    /// The edge triple `(src_type, edge_type, dst_type)`.
    pub fn edge_info(&self, src: &str, edge: &str, dst: &str) -> Result<&EdgeInfo, Error> {
        (self.graph.edges.iter())
            .find(|e| e.src_type == src && e.edge_type == edge && e.dst_type == dst)
            .ok_or_else(|| {
                Error::file(
                    &self.graph.file,
                    format!("no edge type {src}_{edge}_{dst} in the graph"),
                )
            })
    }

    fn vertex_info(&self, vertex_type: &str) -> Result<&VertexInfo, Error> {
        (self.graph.vertices.iter())
            .find(|v| v.type_name == vertex_type)
            .ok_or_else(|| {
                Error::file(
                    &self.graph.file,
                    format!("no vertex type {vertex_type:?} in the graph"),
                )
            })
    }

    /// The neighbours of vertex `index` of `edge`'s source type (`Out`) or destination type
    /// (`In`), as indices of the other endpoint's type, in the adjacency list's order (one
    /// per edge: parallel edges repeat a neighbour).
    pub fn neighbors(
        &self,
        edge: &EdgeInfo,
        direction: Direction,
        index: u64,
    ) -> Result<Vec<u64>, Error> {
        Ok(self.neighbor_rows(edge, direction, index)?.1)
    }

    /// [`neighbors`](Self::neighbors) with the row of the first one in the vertex's part
    /// of the list (the neighbours are rows `begin..begin + len` of the part).
    pub fn neighbor_rows(
        &self,
        edge: &EdgeInfo,
        direction: Direction,
        index: u64,
    ) -> Result<(u64, Vec<u64>), Error> {
        let kind = match direction {
            Direction::Out => AdjListType::OrderedBySource,
            Direction::In => AdjListType::OrderedByDest,
        };
        let adj = (edge.adj_lists.iter())
            .find(|a| a.kind == kind)
            .ok_or_else(|| {
                Error::file(
                    &edge.file,
                    format!(
                        "no {} adjacency list: neighbours need its offsets",
                        kind.default_prefix().trim_end_matches('/')
                    ),
                )
            })?;
        let (part_size, other) = match direction {
            Direction::Out => (edge.src_chunk_size, DST_INDEX),
            Direction::In => (edge.dst_chunk_size, SRC_INDEX),
        };
        let dir = adj_dir(&self.graph, edge, adj);
        let part = index / part_size;
        let local = (index - part * part_size) as usize;
        let (begin, end) = self.offset_range(&dir, adj, part, local)?;
        let mut out = Vec::with_capacity((end - begin) as usize);
        let chunk_size = edge.chunk_size;
        let mut at = begin;
        while at < end {
            let chunk = at / chunk_size;
            let chunk_end = ((chunk + 1) * chunk_size).min(end);
            let path = dir.join(format!("adj_list/part{part}/chunk{chunk}"));
            let rows =
                (at - chunk * chunk_size) as usize..(chunk_end - chunk * chunk_size) as usize;
            self.read_rows(&path, adj.file_type, other, rows, &mut out)?;
            at = chunk_end;
        }
        Ok((begin, out))
    }

    /// Offsets `local` and `local + 1` of chunk `part` of the list in `dir`: the vertex's rows.
    /// From the cached chunk if it is cached; else, for the first [`POINT_READS_PER_CHUNK`]
    /// vertices of a chunk, read alone through the page index (one page, not the chunk's
    /// 2^18 offsets: a few neighbour lookups should not decode whole offset chunks), and after
    /// that by loading the whole chunk into the cache.
    fn offset_range(
        &self,
        dir: &Path,
        adj: &AdjList,
        part: u64,
        local: usize,
    ) -> Result<(u64, u64), Error> {
        let path = dir.join(format!("offset/chunk{part}"));
        let missing = || Error::file(&path, format!("no offsets for vertex {local} of the part"));
        let point_read = {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(&offsets_key(&path)) {
                Some(Entry::Offsets(offsets)) => {
                    let (Some(&begin), Some(&end)) = (offsets.get(local), offsets.get(local + 1))
                    else {
                        return Err(missing());
                    };
                    return Ok((begin as u64, end as u64));
                }
                _ => {
                    let reads = cache.point_reads.entry(path.clone()).or_insert(0);
                    *reads += 1;
                    *reads <= POINT_READS_PER_CHUNK && adj.file_type == FileType::Parquet
                }
            }
        };
        if point_read {
            let mut two = Vec::with_capacity(2);
            self.read_rows(&path, adj.file_type, OFFSET, local..local + 2, &mut two)?;
            let [begin, end] = two[..] else {
                return Err(missing());
            };
            return Ok((begin, end));
        }
        let offsets = self.offsets(dir, adj, part)?;
        let (Some(&begin), Some(&end)) = (offsets.get(local), offsets.get(local + 1)) else {
            return Err(missing());
        };
        Ok((begin as u64, end as u64))
    }

    /// Offset chunk `part` of the list in `dir`, from the cache or the file.
    pub(crate) fn offsets(
        &self,
        dir: &Path,
        adj: &AdjList,
        part: u64,
    ) -> Result<Arc<Vec<i64>>, Error> {
        let path = dir.join(format!("offset/chunk{part}"));
        // Not the file's own key: its footer is cached under that (point reads).
        let entry = self.cached(offsets_key(&path), || {
            let batch = read_chunk(&path, adj.file_type, &[(OFFSET, DataType::Int64)])?;
            let column = batch.column(0).as_primitive::<Int64Type>();
            let offsets = column.values().to_vec();
            let bytes = offsets.len() * 8;
            Ok((Entry::Offsets(Arc::new(offsets)), bytes))
        })?;
        match entry {
            Entry::Offsets(offsets) => Ok(offsets),
            _ => Err(Error::file(&path, "cached as something else")),
        }
    }

    /// The entry under `key`, from the cache, or loaded by `load` (which says its size) and
    /// kept if it fits the budget.
    pub(crate) fn cached(
        &self,
        key: PathBuf,
        load: impl FnOnce() -> Result<(Entry, usize), Error>,
    ) -> Result<Entry, Error> {
        let lock = || self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = lock().get(&key) {
            return Ok(entry);
        }
        let (entry, bytes) = load()?;
        lock().put(key, entry.clone(), bytes);
        Ok(entry)
    }

    /// Appends rows `rows` of column `name` of the chunk at `path` to `out`: through the
    /// page index for Parquet (only the pages holding the rows are decoded), whole for CSV.
    fn read_rows(
        &self,
        path: &Path,
        file_type: FileType,
        name: &str,
        rows: Range<usize>,
        out: &mut Vec<u64>,
    ) -> Result<(), Error> {
        if file_type != FileType::Parquet {
            let batch = read_chunk(path, file_type, &[(name, DataType::Int64)])?;
            let column = batch.column(0).as_primitive::<Int64Type>();
            let Some(values) = column.values().get(rows.clone()) else {
                return Err(Error::file(path, format!("fewer than {} rows", rows.end)));
            };
            out.extend(values.iter().map(|&v| v as u64));
            return Ok(());
        }
        let metadata = self.footer(path)?;
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let bad = |e: parquet::errors::ParquetError| Error::file(path, e.to_string());
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata);
        let column = (builder.schema().fields().iter())
            .position(|f| f.name() == name)
            .ok_or_else(|| Error::file(path, format!("no column {name:?}")))?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), [column]);
        let selection = RowSelection::from(vec![
            RowSelector::skip(rows.start),
            RowSelector::select(rows.len()),
        ]);
        // One batch for the rows (the reader's default cuts them into 1,024-row batches).
        let reader = (builder.with_projection(mask).with_row_selection(selection))
            .with_batch_size(rows.len().max(1))
            .build()
            .map_err(bad)?;
        let mut read = 0;
        for batch in reader {
            let batch = batch.map_err(|e| Error::file(path, e.to_string()))?;
            // Index columns may be int32 (the official writer's offsets sometimes are).
            let column = arrow::compute::cast(batch.column(0), &arrow::datatypes::DataType::Int64)
                .map_err(|_| Error::file(path, format!("column {name:?} is not an integer")))?;
            let values = int64_column(path, &column, name)?;
            read += values.len();
            out.extend(values);
        }
        if read != rows.len() {
            return Err(Error::file(path, format!("fewer than {} rows", rows.end)));
        }
        Ok(())
    }

    /// The Parquet footer (with the page index) of `path`, from the cache or the file.
    fn footer(&self, path: &Path) -> Result<ArrowReaderMetadata, Error> {
        let entry = self.cached(path.to_path_buf(), || {
            let file = File::open(path).map_err(|e| Error::io(path, e))?;
            let options =
                ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
            let metadata = ArrowReaderMetadata::load(&file, options)
                .map_err(|e| Error::file(path, format!("not a Parquet file: {e}")))?;
            let bytes = metadata.metadata().memory_size();
            Ok((Entry::Footer(metadata), bytes))
        })?;
        match entry {
            Entry::Footer(metadata) => Ok(metadata),
            _ => Err(Error::file(path, "cached as something else")),
        }
    }

    /// The vertices of `vertex_type` whose labels satisfy `filter`, as sorted, disjoint,
    /// non-adjacent ranges of indices (see the module docs: one evaluation per run).
    pub fn filter_labels(
        &self,
        vertex_type: &str,
        filter: &LabelFilter,
    ) -> Result<Vec<Range<u64>>, Error> {
        let v = self.vertex_info(vertex_type)?;
        let count = self.vertex_count(vertex_type)?;
        let labels = filter.labels();
        for label in &labels {
            if !v.labels.iter().any(|l| l == label) {
                return Err(Error::file(
                    &v.file,
                    format!("vertex type {vertex_type:?} has no label {label:?}"),
                ));
            }
        }
        let dir = vertex_dir(&self.graph, v);
        let mut ranges: Vec<Range<u64>> = Vec::new();
        let mut flags = vec![false; labels.len()];
        for chunk in 0..v.chunk_count(count) {
            let base = chunk * v.chunk_size;
            let rows = (count - base).min(v.chunk_size) as usize;
            let path = dir.join(format!("labels/chunk{chunk}"));
            let columns = match crate::rle::label_runs(&path, &labels, rows)? {
                Some(runs) => runs,
                None => decoded_runs(&path, &labels, rows)?,
            };
            // Each column's next run; the filter is evaluated once per stretch where no
            // column's run ends.
            let mut next = vec![0usize; columns.len()];
            let mut start = 0;
            while start < rows {
                let mut end = rows;
                for ((flag, at), runs) in flags.iter_mut().zip(&mut next).zip(&columns) {
                    while runs[*at].0 <= start {
                        *at += 1; // runs end at `rows`, so this stays in bounds
                    }
                    *flag = runs[*at].1;
                    end = end.min(runs[*at].0);
                }
                if filter.eval(&labels, &flags) {
                    let range = base + start as u64..base + end as u64;
                    match ranges.last_mut() {
                        Some(last) if last.end == range.start => last.end = range.end,
                        _ => ranges.push(range),
                    }
                }
                start = end;
            }
        }
        Ok(ranges)
    }
}

/// The runs of the columns `labels` of the chunk at `path`, decoded through Arrow (a layout
/// `crate::rle` does not read directly: another writer's encoding, nullable flags).
fn decoded_runs(path: &Path, labels: &[&str], rows: usize) -> Result<Vec<crate::rle::Runs>, Error> {
    let wanted: Vec<(&str, DataType)> = labels.iter().map(|l| (*l, DataType::Bool)).collect();
    let batch = read_chunk(path, FileType::Parquet, &wanted)?;
    crate::read::expect_rows(path, &batch, rows)?;
    let runs_of = |column: &BooleanArray| {
        let mut runs = Vec::new();
        let mut start = 0;
        while start < rows {
            let end = next_change(column, start, rows);
            runs.push((end, column.is_valid(start) && column.value(start)));
            start = end;
        }
        runs
    };
    Ok(batch
        .columns()
        .iter()
        .map(|c| runs_of(c.as_boolean()))
        .collect())
}

/// The first row after `start` whose flag differs from row `start`'s in `c`, or `rows`;
/// whole bytes of the bitmap that hold only the run's flag are stepped over at once.
fn next_change(c: &BooleanArray, start: usize, rows: usize) -> usize {
    let flag = |i: usize| c.is_valid(i) && c.value(i);
    let first = flag(start);
    let (bits, offset) = (c.values().values(), c.values().offset());
    let uniform = if first { 0xFF } else { 0x00 };
    let mut i = start + 1;
    while i < rows {
        let bit = offset + i;
        if bit.is_multiple_of(8) && i + 8 <= rows && c.null_count() == 0 && bits[bit / 8] == uniform
        {
            i += 8;
            continue;
        }
        if flag(i) != first {
            return i;
        }
        i += 1;
    }
    rows
}

/// The cache key of offset chunk `path` decoded whole.
fn offsets_key(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}#offsets", path.display()))
}

/// One cached item.
#[derive(Clone)]
pub(crate) enum Entry {
    Offsets(Arc<Vec<i64>>),
    Footer(ArrowReaderMetadata),
    /// A decoded property chunk: one column per property of its group (`crate::mount`).
    Values(Arc<Vec<Vec<plexus::Value>>>),
    /// A decoded label chunk: one flag column per label of its type (`crate::mount`).
    Flags(Arc<Vec<Vec<bool>>>),
    /// One index column of an adjacency chunk (`crate::mount`).
    Indices(Arc<Vec<u64>>),
    /// A reverse index of an adjacency list: (offsets, edge rows) (`crate::mount`).
    Csr(Arc<(Vec<u64>, Vec<u64>)>),
}

/// An index column's values (int64 after `read_chunk`'s widening), naming `path` if not.
pub(crate) fn int64_column(path: &Path, column: &ArrayRef, name: &str) -> Result<Vec<u64>, Error> {
    let values = column
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::file(path, format!("column {name:?} is not int64")))?;
    if values.null_count() > 0 {
        return Err(Error::file(path, format!("column {name:?} holds nulls")));
    }
    Ok(values.values().iter().map(|&v| v as u64).collect())
}

/// Each boolean column of `batch` as flags (null: false).
pub(crate) fn flag_columns(batch: &arrow::record_batch::RecordBatch) -> Vec<Vec<bool>> {
    (batch.columns().iter())
        .map(|c| {
            let flags = c.as_boolean();
            (0..flags.len())
                .map(|i| flags.is_valid(i) && flags.value(i))
                .collect()
        })
        .collect()
}

/// Offsets, footers and decoded chunks by file, oldest evicted first past the budget.
struct Cache {
    budget_bytes: usize,
    used_bytes: usize,
    /// Point reads of offsets per offset chunk not (yet) cached whole.
    point_reads: HashMap<PathBuf, u32>,
    entries: HashMap<PathBuf, (Entry, usize)>,
    order: VecDeque<PathBuf>,
}

impl Cache {
    fn new(budget_bytes: usize) -> Cache {
        Cache {
            budget_bytes,
            used_bytes: 0,
            point_reads: HashMap::new(),
            entries: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    fn get(&self, path: &Path) -> Option<Entry> {
        self.entries.get(path).map(|(e, _)| e.clone())
    }

    fn put(&mut self, path: PathBuf, entry: Entry, bytes: usize) {
        if bytes > self.budget_bytes {
            return;
        }
        if let Some((_, old)) = self.entries.insert(path.clone(), (entry, bytes)) {
            self.used_bytes -= old;
            self.order.retain(|p| *p != path);
        }
        self.used_bytes += bytes;
        self.order.push_back(path);
        while self.used_bytes > self.budget_bytes {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some((_, bytes)) = self.entries.remove(&oldest) {
                self.used_bytes -= bytes;
            }
        }
        debug_assert!(
            self.used_bytes <= self.budget_bytes,
            "the cache keeps its budget"
        );
    }
}
