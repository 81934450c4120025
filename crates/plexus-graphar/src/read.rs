//! Reading GraphAr chunks into Plexus values.
//!
//! WHAT
//! ====
//! [`read_vertices`] and [`read_edges`] read one vertex type or one edge triple (through one
//! of its adjacency lists) into [`VertexData`] / [`EdgeData`]: property columns converted by
//! the facade's Arrow mapping (`plexus::bulk::batch_columns`: int32/int64 → Int, float/double
//! → Float, date → Date, timestamp → LocalDateTime, list → List), labels as flags, endpoint
//! indices as `u64`. [`for_each_edge_part`] hands an edge triple over one part at a time
//! (what an import stages without holding the whole list).
//!
//! WHAT IS CHECKED
//! ===============
//! The counts decide which files must exist; the files never decide the counts:
//! - vertex chunk `i` of a type with `n` vertices holds `min(chunk_size, n - i·chunk_size)`
//!   rows, in every property group and the label chunks;
//! - part `v` of an adjacency list holds `edge_count<v>` edges in
//!   `ceil(edge_count<v> / chunk_size)` chunks, each full but the last — so an exactly full
//!   part has no extra, empty chunk (the official reader looks for one);
//! - every edge of part `v` has its aligning endpoint in vertex chunk `v`, and both endpoints
//!   are below their type's vertex count;
//! - for an ordered list, offset chunk `v` has at least (vertices in chunk `v`) + 1 rows
//!   (a padded last chunk is accepted), starts at 0, never decreases, ends at
//!   `edge_count<v>`, and agrees vertex by vertex with the sorted adjacency chunks;
//! - every column has the type the metadata declares (any timestamp unit is accepted).
//!
//! Any disagreement is an [`Error::File`] naming the file where it was seen. ORC and JSON
//! payloads are refused with an error naming the first such file.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType as ArrowType, Field, Int64Type, Schema};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;

use crate::meta::{AdjList, DataType, EdgeInfo, FileType, GraphInfo, Property, VertexInfo};
use crate::{DST_INDEX, EdgeData, Error, OFFSET, SRC_INDEX, VertexData};

/// Reads a count file: a raw 8-byte little-endian int64.
pub fn read_count(path: &Path) -> Result<u64, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let raw: [u8; 8] = bytes.as_slice().try_into().map_err(|_| {
        Error::file(
            path,
            format!(
                "a count file holds 8 bytes (little-endian int64), this one {}",
                bytes.len()
            ),
        )
    })?;
    u64::try_from(i64::from_le_bytes(raw))
        .map_err(|_| Error::file(path, "the count is negative".to_string()))
}

/// The directory of a vertex type.
pub fn vertex_dir(graph: &GraphInfo, v: &VertexInfo) -> PathBuf {
    graph.root.join(&v.prefix)
}

/// The directory of one adjacency list of an edge triple.
pub fn adj_dir(graph: &GraphInfo, e: &EdgeInfo, adj: &AdjList) -> PathBuf {
    graph.root.join(&e.prefix).join(&adj.prefix)
}

/// The number of vertices of a type (its `vertex_count` file).
pub fn vertex_count(graph: &GraphInfo, v: &VertexInfo) -> Result<u64, Error> {
    read_count(&vertex_dir(graph, v).join("vertex_count"))
}

/// The adjacency list an import reads: ordered by source if there is one, else the first.
pub fn preferred_adj_list(e: &EdgeInfo) -> Result<&AdjList, Error> {
    e.adj_lists
        .iter()
        .find(|adj| adj.kind == crate::meta::AdjListType::OrderedBySource)
        .or_else(|| e.adj_lists.first())
        .ok_or_else(|| Error::file(&e.file, "no adjacency list".to_string()))
}

/// Reads every vertex of `v`: property groups and label columns.
pub fn read_vertices(graph: &GraphInfo, v: &VertexInfo) -> Result<VertexData, Error> {
    let dir = vertex_dir(graph, v);
    let count = vertex_count(graph, v)?;
    let chunks = v.chunk_count(count);
    let rows_of = |chunk: u64| v.chunk_size.min(count - chunk * v.chunk_size) as usize;
    let mut columns: Vec<(String, Vec<crate::Value>)> = Vec::new();
    for group in &v.property_groups {
        let first = columns.len();
        columns.extend((group.properties.iter()).map(|p| (p.name.clone(), Vec::new())));
        for chunk in 0..chunks {
            let path = dir.join(&group.prefix).join(format!("chunk{chunk}"));
            let wanted: Vec<(&str, DataType)> = (group.properties.iter())
                .map(|p| (p.name.as_str(), property_type(p)))
                .collect();
            let batch = read_chunk(&path, group.file_type, &wanted)?;
            expect_rows(&path, &batch, rows_of(chunk))?;
            let values = plexus::bulk::batch_columns(&batch)
                .map_err(|e| Error::file(&path, e.to_string()))?;
            for (slot, (_, column)) in columns[first..].iter_mut().zip(values) {
                slot.1.extend(column);
            }
        }
    }
    let mut labels: Vec<(String, Vec<bool>)> =
        (v.labels.iter()).map(|l| (l.clone(), Vec::new())).collect();
    if !v.labels.is_empty() {
        let wanted: Vec<(&str, DataType)> = (v.labels.iter())
            .map(|l| (l.as_str(), DataType::Bool))
            .collect();
        for chunk in 0..chunks {
            let path = dir.join("labels").join(format!("chunk{chunk}"));
            let batch = read_chunk(&path, FileType::Parquet, &wanted)?;
            expect_rows(&path, &batch, rows_of(chunk))?;
            for (slot, array) in labels.iter_mut().zip(batch.columns()) {
                let flags = array.as_boolean();
                slot.1
                    .extend((0..flags.len()).map(|i| flags.is_valid(i) && flags.value(i)));
            }
        }
    }
    Ok(VertexData {
        count,
        columns,
        labels,
    })
}

/// The Arrow-level type of a property's column: a list for list and set cardinalities.
pub(crate) fn property_type(p: &Property) -> DataType {
    match (&p.cardinality, &p.data_type) {
        (crate::meta::Cardinality::Single, ty) | (_, ty @ DataType::List(_)) => ty.clone(),
        (_, ty) => DataType::List(Box::new(ty.clone())),
    }
}

/// The number of edges in one adjacency list (the sum of its `edge_count<v>` files).
pub fn edge_count(graph: &GraphInfo, e: &EdgeInfo, adj: &AdjList) -> Result<u64, Error> {
    let dir = adj_dir(graph, e, adj);
    let (parts, _) = parts_of(graph, e, adj)?;
    let mut total = 0u64;
    for part in 0..parts {
        let path = dir.join(format!("edge_count{part}"));
        total = (total.checked_add(read_count(&path)?))
            .ok_or_else(|| Error::file(&path, "the edge counts add up beyond 2^64"))?;
    }
    Ok(total)
}

/// The number of parts of an adjacency list and the vertex count of its aligning type.
fn parts_of(graph: &GraphInfo, e: &EdgeInfo, adj: &AdjList) -> Result<(u64, u64), Error> {
    let dir = adj_dir(graph, e, adj);
    let (type_name, part_size) = if adj.kind.by_source() {
        (&e.src_type, e.src_chunk_size)
    } else {
        (&e.dst_type, e.dst_chunk_size)
    };
    let count_path = dir.join("vertex_count");
    let vertices = if count_path.exists() {
        read_count(&count_path)?
    } else {
        let v = endpoint(graph, e, type_name)?;
        vertex_count(graph, v)?
    };
    Ok((vertices.div_ceil(part_size), vertices))
}

fn endpoint<'g>(
    graph: &'g GraphInfo,
    e: &EdgeInfo,
    type_name: &str,
) -> Result<&'g VertexInfo, Error> {
    graph.vertex(type_name).ok_or_else(|| {
        Error::file(
            &e.file,
            format!("the vertex type {type_name:?} is not in the graph"),
        )
    })
}

/// One adjacency chunk's edges: source and destination indices, one column per property.
type ChunkEdges = (Vec<u64>, Vec<u64>, Vec<Vec<crate::Value>>);

/// Reads every edge of `e` through the adjacency list `adj`, with its property groups
/// (chunks decoded in parallel).
pub fn read_edges(graph: &GraphInfo, e: &EdgeInfo, adj: &AdjList) -> Result<EdgeData, Error> {
    let mut all = EdgeData {
        columns: edge_columns(e),
        ..EdgeData::default()
    };
    for_each_edge_part(graph, e, adj, &mut |part| {
        all.src.extend_from_slice(&part.src);
        all.dst.extend_from_slice(&part.dst);
        for (slot, (_, values)) in all.columns.iter_mut().zip(&part.columns) {
            slot.1.extend_from_slice(values);
        }
        Ok(())
    })?;
    Ok(all)
}

/// The property columns of edge triple `e`, empty.
fn edge_columns(e: &EdgeInfo) -> Vec<(String, Vec<crate::Value>)> {
    (e.property_groups.iter())
        .flat_map(|g| g.properties.iter().map(|p| (p.name.clone(), Vec::new())))
        .collect()
}

/// [`read_edges`] one part (the edges of one vertex chunk of the aligning endpoint) at a
/// time, in order, each part checked whole before `f` sees it: what a reader that need not
/// hold the whole list uses (an import stages each part as it comes). The buffer `f` gets is
/// reused from part to part.
pub fn for_each_edge_part(
    graph: &GraphInfo,
    e: &EdgeInfo,
    adj: &AdjList,
    f: &mut dyn FnMut(&EdgeData) -> Result<(), Error>,
) -> Result<(), Error> {
    let dir = adj_dir(graph, e, adj);
    let src_count = vertex_count(graph, endpoint(graph, e, &e.src_type)?)?;
    let dst_count = vertex_count(graph, endpoint(graph, e, &e.dst_type)?)?;
    let (parts, aligned_count) = parts_of(graph, e, adj)?;
    let part_size = if adj.kind.by_source() {
        e.src_chunk_size
    } else {
        e.dst_chunk_size
    };
    let mut data = EdgeData {
        columns: edge_columns(e),
        ..EdgeData::default()
    };
    let index_columns = [(SRC_INDEX, DataType::Int64), (DST_INDEX, DataType::Int64)];
    for part in 0..parts {
        let count = read_count(&dir.join(format!("edge_count{part}")))?;
        data.src.clear();
        data.dst.clear();
        data.columns
            .iter_mut()
            .for_each(|(_, values)| values.clear());
        let keys = part * part_size..((part + 1).saturating_mul(part_size)).min(aligned_count);
        // Chunks decode in parallel; they are appended in order.
        let chunks: Vec<ChunkEdges> = (0..count.div_ceil(e.chunk_size))
            .into_par_iter()
            .map(|chunk| {
                let rows = e.chunk_size.min(count - chunk * e.chunk_size) as usize;
                let path = dir.join(format!("adj_list/part{part}/chunk{chunk}"));
                let batch = read_chunk(&path, adj.file_type, &index_columns)?;
                expect_rows(&path, &batch, rows)?;
                let src = indices(&path, batch.column(0), SRC_INDEX, src_count)?;
                let dst = indices(&path, batch.column(1), DST_INDEX, dst_count)?;
                let aligned = if adj.kind.by_source() { &src } else { &dst };
                if let Some(stray) = aligned.iter().find(|k| !keys.contains(k)) {
                    return Err(Error::file(
                        &path,
                        format!(
                            "vertex index {stray} is not in vertex chunk {part} ({}..{}), \
                             the chunk this part belongs to",
                            keys.start, keys.end
                        ),
                    ));
                }
                let mut columns = Vec::new();
                for group in &e.property_groups {
                    let path = dir
                        .join(&group.prefix)
                        .join(format!("part{part}/chunk{chunk}"));
                    let wanted: Vec<(&str, DataType)> = (group.properties.iter())
                        .map(|p| (p.name.as_str(), p.data_type.clone()))
                        .collect();
                    let batch = read_chunk(&path, group.file_type, &wanted)?;
                    expect_rows(&path, &batch, rows)?;
                    let values = plexus::bulk::batch_columns(&batch)
                        .map_err(|e| Error::file(&path, e.to_string()))?;
                    columns.extend(values.into_iter().map(|(_, v)| v));
                }
                Ok((src, dst, columns))
            })
            .collect::<Result<_, Error>>()?;
        for (src, dst, columns) in chunks {
            data.src.extend(src);
            data.dst.extend(dst);
            for (slot, values) in data.columns.iter_mut().zip(columns) {
                slot.1.extend(values);
            }
        }
        if adj.kind.ordered() {
            let aligned = if adj.kind.by_source() {
                &data.src
            } else {
                &data.dst
            };
            check_offsets(&dir, adj, part, count, &keys, aligned)?;
        }
        f(&data)?;
    }
    Ok(())
}

/// Checks offset chunk `part` against the part's edge count and its sorted aligning indices.
fn check_offsets(
    dir: &Path,
    adj: &AdjList,
    part: u64,
    count: u64,
    keys: &std::ops::Range<u64>,
    aligned: &[u64],
) -> Result<(), Error> {
    let path = dir.join(format!("offset/chunk{part}"));
    let batch = read_chunk(&path, adj.file_type, &[(OFFSET, DataType::Int64)])?;
    let offsets = batch.column(0).as_primitive::<Int64Type>();
    let vertices = (keys.end - keys.start) as usize;
    if offsets.len() < vertices + 1 || offsets.null_count() > 0 {
        return Err(Error::file(
            &path,
            format!(
                "an offset chunk for {vertices} vertices needs {} offsets without nulls, \
                 this one has {} rows",
                vertices + 1,
                offsets.len()
            ),
        ));
    }
    let offsets = offsets.values();
    let end = offsets[vertices];
    if offsets[0] != 0 || u64::try_from(end) != Ok(count) {
        return Err(Error::file(
            &path,
            format!(
                "offsets run from {} to {end}, but edge_count{part} says {count} edges",
                offsets[0]
            ),
        ));
    }
    if offsets[vertices..].iter().any(|&o| o != end) {
        return Err(Error::file(
            &path,
            "the padding after the last vertex's offset does not repeat the edge count",
        ));
    }
    let mut at = 0usize;
    for (j, pair) in offsets[..=vertices].windows(2).enumerate() {
        let key = keys.start + j as u64;
        let degree = pair[1] - pair[0];
        let run = aligned[at..].iter().take_while(|&&k| k == key).count();
        if degree < 0 || run as i64 != degree {
            return Err(Error::file(
                &path,
                format!(
                    "offsets give vertex {key} {degree} edges, the adjacency chunks of part \
                     {part} list {run} at that position (they must be sorted)"
                ),
            ));
        }
        at += run;
    }
    Ok(())
}

/// An index column as `u64`s below `limit`.
fn indices(path: &Path, array: &ArrayRef, name: &str, limit: u64) -> Result<Vec<u64>, Error> {
    let array = array.as_primitive::<Int64Type>();
    if array.null_count() > 0 {
        return Err(Error::file(path, format!("column {name} has nulls")));
    }
    array
        .values()
        .iter()
        .map(|&i| match u64::try_from(i) {
            Ok(i) if i < limit => Ok(i),
            _ => Err(Error::file(
                path,
                format!("{name} {i} is not a vertex index (the type has {limit} vertices)"),
            )),
        })
        .collect()
}

pub(crate) fn expect_rows(path: &Path, batch: &RecordBatch, rows: usize) -> Result<(), Error> {
    if batch.num_rows() == rows {
        Ok(())
    } else {
        Err(Error::file(
            path,
            format!(
                "the chunk has {} rows, the counts say {rows}",
                batch.num_rows()
            ),
        ))
    }
}

/// Reads the columns `wanted` (name, declared type) of one chunk, in that order, checking
/// their types.
pub fn read_chunk(
    path: &Path,
    file_type: FileType,
    wanted: &[(&str, DataType)],
) -> Result<RecordBatch, Error> {
    match file_type {
        FileType::Parquet => read_parquet(path, wanted),
        FileType::Csv => read_csv(path, wanted),
        FileType::Orc => Err(Error::file(
            path,
            "ORC payloads are not supported (Plexus reads Parquet and CSV GraphAr files)",
        )),
        FileType::Json => Err(Error::file(
            path,
            "JSON payloads are not supported (Plexus reads Parquet and CSV GraphAr files)",
        )),
    }
}

fn read_parquet(path: &Path, wanted: &[(&str, DataType)]) -> Result<RecordBatch, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| Error::file(path, format!("not a readable Parquet file: {e}")))?;
    let schema = builder.schema().clone();
    let mut roots = Vec::with_capacity(wanted.len());
    for (name, ty) in wanted {
        let (index, field) = schema.column_with_name(name).ok_or_else(|| {
            Error::file(
                path,
                format!("no column {name:?} (the metadata declares it)"),
            )
        })?;
        // Index columns may be int32 (the official writer's offsets sometimes are).
        let narrow_index = *ty == DataType::Int64
            && name.starts_with("_graphAr")
            && field.data_type() == &ArrowType::Int32;
        if !arrow_matches(ty, field.data_type()) && !narrow_index {
            return Err(Error::file(
                path,
                format!(
                    "column {name:?} has type {}, the metadata declares {ty}",
                    field.data_type()
                ),
            ));
        }
        roots.push(index);
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| Error::file(path, format!("not a readable Parquet file: {e}")))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::file(path, format!("truncated or corrupt Parquet data: {e}")))?;
    let projected = match batches.first() {
        Some(batch) => batch.schema(),
        None => Arc::new(
            schema
                .project(&sorted(&roots))
                .map_err(|e| Error::file(path, e.to_string()))?,
        ),
    };
    let batch = arrow::compute::concat_batches(&projected, &batches)
        .map_err(|e| Error::file(path, e.to_string()))?;
    // The projection keeps file order; put the columns in the order asked for.
    let order = (wanted.iter())
        .map(|(name, _)| projected.index_of(name))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|e| Error::file(path, e.to_string()))?;
    let batch = batch
        .project(&order)
        .map_err(|e| Error::file(path, e.to_string()))?;
    widen_indices(path, batch, wanted)
}

/// Index columns read as int32 become int64, the type the rest of the reader expects.
fn widen_indices(
    path: &Path,
    batch: RecordBatch,
    wanted: &[(&str, DataType)],
) -> Result<RecordBatch, Error> {
    let narrow = |column: &ArrayRef, (_, ty): &(&str, DataType)| {
        *ty == DataType::Int64 && column.data_type() == &ArrowType::Int32
    };
    if !batch
        .columns()
        .iter()
        .zip(wanted)
        .any(|(c, w)| narrow(c, w))
    {
        return Ok(batch);
    }
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    let schema = batch.schema();
    for ((field, column), want) in schema.fields().iter().zip(batch.columns()).zip(wanted) {
        if narrow(column, want) {
            let wide = arrow::compute::cast(column, &ArrowType::Int64)
                .map_err(|e| Error::file(path, e.to_string()))?;
            fields.push(Field::new(
                field.name(),
                ArrowType::Int64,
                field.is_nullable(),
            ));
            columns.push(wide);
        } else {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| Error::file(path, e.to_string()))
}

fn sorted(indices: &[usize]) -> Vec<usize> {
    let mut indices = indices.to_vec();
    indices.sort_unstable();
    indices.dedup();
    indices
}

/// Whether an Arrow column type stores a GraphAr type.
fn arrow_matches(expected: &DataType, actual: &ArrowType) -> bool {
    match (expected, actual) {
        (DataType::Bool, ArrowType::Boolean)
        | (DataType::Int32, ArrowType::Int32)
        | (DataType::Int64, ArrowType::Int64)
        | (DataType::Float, ArrowType::Float32)
        | (DataType::Double, ArrowType::Float64)
        | (DataType::String, ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View)
        | (DataType::Date, ArrowType::Date32 | ArrowType::Date64)
        | (DataType::Timestamp, ArrowType::Timestamp(_, _)) => true,
        (
            DataType::List(inner),
            ArrowType::List(field)
            | ArrowType::LargeList(field)
            | ArrowType::FixedSizeList(field, _),
        ) => arrow_matches(inner, field.data_type()),
        _ => false,
    }
}

/// The Arrow type a CSV column of a GraphAr type is parsed as.
fn csv_type(path: &Path, name: &str, ty: &DataType) -> Result<ArrowType, Error> {
    if let DataType::List(_) = ty {
        return Err(Error::file(
            path,
            format!("column {name:?} is a {ty}: list types are not allowed in CSV"),
        ));
    }
    Ok(crate::write::arrow_type(ty))
}

fn read_csv(path: &Path, wanted: &[(&str, DataType)]) -> Result<RecordBatch, Error> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let format = arrow::csv::reader::Format::default().with_header(true);
    let (header, _) = format
        .infer_schema(&mut file, Some(0))
        .map_err(|e| Error::file(path, format!("bad CSV header: {e}")))?;
    // Every column of the file, the wanted ones typed, the others read as text.
    let mut fields = Vec::with_capacity(header.fields().len());
    for field in header.fields() {
        let ty = match wanted.iter().find(|(name, _)| name == field.name()) {
            Some((name, ty)) => csv_type(path, name, ty)?,
            None => ArrowType::Utf8,
        };
        fields.push(Field::new(field.name(), ty, true));
    }
    let schema = Arc::new(Schema::new(fields));
    let mut indices = Vec::with_capacity(wanted.len());
    for (name, _) in wanted {
        let index = schema.index_of(name).map_err(|_| {
            Error::file(
                path,
                format!("no column {name:?} (the metadata declares it)"),
            )
        })?;
        indices.push(index);
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let reader = arrow::csv::ReaderBuilder::new(schema.clone())
        .with_format(format)
        .with_projection(indices)
        .build(file)
        .map_err(|e| Error::file(path, format!("bad CSV: {e}")))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::file(path, format!("bad CSV: {e}")))?;
    let projected = match batches.first() {
        Some(batch) => batch.schema(),
        None => {
            let fields: Vec<Field> = (wanted.iter())
                .map(|(name, ty)| Ok(Field::new(*name, csv_type(path, name, ty)?, true)))
                .collect::<Result<_, Error>>()?;
            Arc::new(Schema::new(fields))
        }
    };
    arrow::compute::concat_batches(&projected, &batches)
        .map_err(|e| Error::file(path, e.to_string()))
}
