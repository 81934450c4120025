//! Writing GraphAr chunks: Parquet or CSV payloads, offsets and counts.
//!
//! WHAT
//! ====
//! [`write_vertices`] writes one vertex type (its `vertex_count`, every property group's
//! chunks with `_graphArVertexIndex`, the label chunks); [`write_edges`] writes one edge
//! triple through every adjacency list its [`EdgeInfo`] names. The metadata decides the
//! layout — prefixes, chunk sizes, types — and the caller writes the YAML with
//! `GraphInfo::write_yaml`.
//!
//! ENCODINGS
//! =========
//! Only standard Parquet encodings, so every Parquet reader reads the files:
//! - id columns (`_graphArVertexIndex`, `_graphArSrcIndex`, `_graphArDstIndex`,
//!   `_graphArOffset`) are DELTA_BINARY_PACKED without a dictionary and uncompressed: sorted
//!   or nearly sorted, they shrink to a few bits per value, which Snappy would barely shrink
//!   further while costing every neighbour read a decompression;
//! - label columns are BOOLEAN with RLE, without a dictionary: long runs of equal flags;
//! - everything else takes the writer's defaults; other pages are Snappy-compressed, and outside
//!   label chunks hold at most [`PAGE_ROWS`] rows, so the page index can skip around a
//!   vertex's rows finely.
//!
//! A property group or adjacency list whose metadata says `csv` is written as CSV instead:
//! a header row, commas, Arrow's quoting (what the readers expect, see GRAPHAR-NOTES);
//! dates as `YYYY-MM-DD`, timestamps as ISO 8601. CSV cannot hold lists (GraphAr forbids
//! them there), so such a column is refused; the export turns lists into strings first.
//! Label chunks are Parquet whatever the groups use, as GraphAr defines them.
//!
//! EDGES
//! =====
//! For each adjacency list the edges are sorted by (aligning endpoint, other endpoint) and cut
//! into parts by the aligning endpoint's vertex chunk; part `v` gets `edge_count<v>` (0 for an
//! empty part, which has no other files), chunks of `chunk_size` rows, and for an ordered list
//! offset chunk `v` with (vertices in chunk `v`) + 1 offsets. The property groups follow the
//! adjacency chunks row for row. Unordered lists are written in the same sorted order (any
//! order is valid for them), without offsets.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Float32Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringBuilder, TimestampMillisecondArray,
};
use arrow::datatypes::{DataType as ArrowType, Field, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use plexus::{TemporalValue, Value};

use crate::meta::{DataType, EdgeInfo, FileType, Property, PropertyGroup, VertexInfo};
use crate::{DST_INDEX, EdgeData, Error, OFFSET, SRC_INDEX, VERTEX_INDEX, VertexData};

/// Rows per Parquet data page at most: a neighbour lookup through the page index decodes
/// whole pages, so smaller pages waste less around a vertex's rows (each page costs a header
/// and an offset-index entry, a few dozen bytes).
const PAGE_ROWS: usize = 4096;
const NANOS_PER_MILLI: i64 = 1_000_000;
const MILLIS_PER_DAY: i64 = 86_400_000;

/// Writes `data` as vertex type `v` under `root`.
pub fn write_vertices(root: &Path, v: &VertexInfo, data: &VertexData) -> Result<(), Error> {
    let dir = root.join(&v.prefix);
    if v.chunk_size == 0 {
        return Err(Error::file(&dir, "the vertex chunk size is 0"));
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    write_count(&dir.join("vertex_count"), data.count)?;
    let chunks = v.chunk_count(data.count);
    for group in &v.property_groups {
        let file_type = group.file_type;
        for chunk in 0..chunks {
            let begin = chunk * v.chunk_size;
            let end = (begin + v.chunk_size).min(data.count);
            let path = dir.join(&group.prefix).join(format!("chunk{chunk}"));
            let rows: Vec<usize> = (begin as usize..end as usize).collect();
            let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(begin as i64..end as i64));
            let mut fields = vec![Field::new(VERTEX_INDEX, ArrowType::Int64, false)];
            let mut arrays = vec![ids];
            group_columns(&path, group, &data.columns, &rows, &mut fields, &mut arrays)?;
            write_chunk(&path, file_type, fields, arrays, &[VERTEX_INDEX], &[])?;
        }
    }
    if !data.labels.is_empty() {
        let names: Vec<&str> = data.labels.iter().map(|(l, _)| l.as_str()).collect();
        for chunk in 0..chunks {
            let begin = (chunk * v.chunk_size) as usize;
            let end = ((chunk + 1) * v.chunk_size).min(data.count) as usize;
            let path = dir.join("labels").join(format!("chunk{chunk}"));
            let fields = (names.iter())
                .map(|name| Field::new(*name, ArrowType::Boolean, false))
                .collect();
            let arrays = (data.labels.iter())
                .map(|(_, flags)| {
                    Arc::new(BooleanArray::from(flags[begin..end].to_vec())) as ArrayRef
                })
                .collect();
            write_chunk(&path, FileType::Parquet, fields, arrays, &[], &names)?;
        }
    }
    Ok(())
}

/// Writes `data` as edge triple `e` under `root`, through every adjacency list of `e`;
/// `src_count` and `dst_count` are the endpoint types' vertex counts.
pub fn write_edges(
    root: &Path,
    e: &EdgeInfo,
    data: &EdgeData,
    src_count: u64,
    dst_count: u64,
) -> Result<(), Error> {
    if e.chunk_size == 0 || e.src_chunk_size == 0 || e.dst_chunk_size == 0 {
        return Err(Error::file(&root.join(&e.prefix), "a chunk size is 0"));
    }
    for adj in &e.adj_lists {
        let dir = root.join(&e.prefix).join(&adj.prefix);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let (keys, others, aligned_count, part_size) = if adj.kind.by_source() {
            (&data.src, &data.dst, src_count, e.src_chunk_size)
        } else {
            (&data.dst, &data.src, dst_count, e.dst_chunk_size)
        };
        let order = sorted_rows(keys, others);
        write_count(&dir.join("vertex_count"), aligned_count)?;
        let mut at = 0usize;
        for part in 0..aligned_count.div_ceil(part_size) {
            let key_begin = part * part_size;
            let key_end = (key_begin + part_size).min(aligned_count);
            let len = order[at..].partition_point(|&i| keys[i] < key_end);
            let rows = &order[at..at + len];
            at += len;
            write_count(&dir.join(format!("edge_count{part}")), len as u64)?;
            if adj.kind.ordered() {
                let mut offsets = Vec::with_capacity((key_end - key_begin) as usize + 1);
                offsets.push(0i64);
                let mut done = 0usize;
                for key in key_begin..key_end {
                    done += rows[done..].partition_point(|&i| keys[i] <= key);
                    offsets.push(done as i64);
                }
                let path = dir.join(format!("offset/chunk{part}"));
                let fields = vec![Field::new(OFFSET, ArrowType::Int64, false)];
                let arrays: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(offsets))];
                write_chunk(&path, adj.file_type, fields, arrays, &[OFFSET], &[])?;
            }
            for (chunk, chunk_rows) in rows.chunks(e.chunk_size as usize).enumerate() {
                let path = dir.join(format!("adj_list/part{part}/chunk{chunk}"));
                let index = |ids: &[u64]| -> ArrayRef {
                    Arc::new(Int64Array::from_iter_values(
                        chunk_rows.iter().map(|&i| ids[i] as i64),
                    ))
                };
                let fields = vec![
                    Field::new(SRC_INDEX, ArrowType::Int64, false),
                    Field::new(DST_INDEX, ArrowType::Int64, false),
                ];
                let arrays = vec![index(&data.src), index(&data.dst)];
                let delta = [SRC_INDEX, DST_INDEX];
                write_chunk(&path, adj.file_type, fields, arrays, &delta, &[])?;
                for group in &e.property_groups {
                    let path = dir
                        .join(&group.prefix)
                        .join(format!("part{part}/chunk{chunk}"));
                    let (mut fields, mut arrays) = (Vec::new(), Vec::new());
                    group_columns(
                        &path,
                        group,
                        &data.columns,
                        chunk_rows,
                        &mut fields,
                        &mut arrays,
                    )?;
                    write_chunk(&path, group.file_type, fields, arrays, &[], &[])?;
                }
            }
        }
    }
    Ok(())
}

/// The rows of an edge list in (aligning endpoint, other endpoint, row) order. The keys are
/// sorted by value, not through the row index: where both endpoints fit in 32 bits (every
/// graph up to 2^32 vertices per type) one `u64` per row carries them, so the sort touches
/// contiguous memory only.
fn sorted_rows(keys: &[u64], others: &[u64]) -> Vec<usize> {
    debug_assert_eq!(keys.len(), others.len());
    let narrow = |v: &u64| *v <= u64::from(u32::MAX);
    if keys.iter().all(narrow) && others.iter().all(narrow) && keys.len() <= u32::MAX as usize {
        let mut packed: Vec<(u64, u32)> = (keys.iter().zip(others).enumerate())
            .map(|(row, (k, o))| ((k << 32) | o, row as u32))
            .collect();
        packed.sort_unstable();
        return packed.into_iter().map(|(_, row)| row as usize).collect();
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| (keys[i], others[i]));
    order
}

/// Appends the group's properties, restricted to `rows`, as Arrow columns.
fn group_columns(
    path: &Path,
    group: &PropertyGroup,
    columns: &[(String, Vec<Value>)],
    rows: &[usize],
    fields: &mut Vec<Field>,
    arrays: &mut Vec<ArrayRef>,
) -> Result<(), Error> {
    for p in &group.properties {
        let values = columns
            .iter()
            .find(|(name, _)| *name == p.name)
            .map(|(_, values)| values)
            .ok_or_else(|| Error::file(path, format!("no values for property {:?}", p.name)))?;
        let picked: Vec<&Value> = rows.iter().map(|&i| &values[i]).collect();
        let array = to_array(&picked, &p.data_type)
            .map_err(|message| Error::file(path, format!("property {:?}: {message}", p.name)))?;
        fields.push(field_of(p));
        arrays.push(array);
    }
    Ok(())
}

fn field_of(p: &Property) -> Field {
    Field::new(&p.name, arrow_type(&p.data_type), p.is_nullable)
}

/// The Arrow type the writer uses for a GraphAr type.
pub fn arrow_type(ty: &DataType) -> ArrowType {
    match ty {
        DataType::Bool => ArrowType::Boolean,
        DataType::Int32 => ArrowType::Int32,
        DataType::Int64 => ArrowType::Int64,
        DataType::Float => ArrowType::Float32,
        DataType::Double => ArrowType::Float64,
        DataType::String => ArrowType::Utf8,
        DataType::Date => ArrowType::Date32,
        DataType::Timestamp => ArrowType::Timestamp(TimeUnit::Millisecond, None),
        DataType::List(inner) => {
            ArrowType::List(Arc::new(Field::new("item", arrow_type(inner), true)))
        }
    }
}

/// Milliseconds since the epoch of a local date-time, if it has no finer part and fits.
pub fn timestamp_millis(days: i64, nanos: i64) -> Option<i64> {
    if nanos % NANOS_PER_MILLI != 0 {
        return None;
    }
    days.checked_mul(MILLIS_PER_DAY)?
        .checked_add(nanos / NANOS_PER_MILLI)
}

/// Values of one column as an Arrow array of `ty`; `Null` is a null slot, any other value
/// that `ty` cannot hold is an error.
fn to_array(values: &[&Value], ty: &DataType) -> Result<ArrayRef, String> {
    let wrong = |v: &Value| format!("a {ty} column cannot hold {v:?}");
    macro_rules! scalars {
        ($array:ty, |$v:ident| $pattern:pat $(if $guard:expr)? => $make:expr) => {{
            let mut out = Vec::with_capacity(values.len());
            for $v in values {
                out.push(match $v {
                    Value::Null => None,
                    $pattern $(if $guard)? => Some($make),
                    other => return Err(wrong(other)),
                });
            }
            Ok(Arc::new(<$array>::from(out)) as ArrayRef)
        }};
    }
    match ty {
        DataType::Bool => scalars!(BooleanArray, |v| Value::Bool(b) => *b),
        DataType::Int32 => {
            scalars!(Int32Array, |v| Value::Int(i) if i32::try_from(*i).is_ok() => *i as i32)
        }
        DataType::Int64 => scalars!(Int64Array, |v| Value::Int(i) => *i),
        DataType::Float => scalars!(Float32Array, |v| Value::Float(f) => *f as f32),
        DataType::Double => {
            let mut out = Vec::with_capacity(values.len());
            for v in values {
                out.push(match v {
                    Value::Null => None,
                    Value::Float(f) => Some(*f),
                    Value::Int(i) => Some(*i as f64),
                    other => return Err(wrong(other)),
                });
            }
            Ok(Arc::new(Float64Array::from(out)))
        }
        DataType::String => {
            let mut out = StringBuilder::with_capacity(values.len(), 0);
            for v in values {
                match v {
                    Value::Null => out.append_null(),
                    Value::String(s) => out.append_value(s),
                    other => return Err(wrong(other)),
                }
            }
            Ok(Arc::new(out.finish()))
        }
        DataType::Date => {
            scalars!(Date32Array, |v| Value::Temporal(TemporalValue::Date { days }) if i32::try_from(*days).is_ok() => *days as i32)
        }
        DataType::Timestamp => {
            let mut out = Vec::with_capacity(values.len());
            for v in values {
                out.push(match v {
                    Value::Null => None,
                    Value::Temporal(TemporalValue::LocalDateTime { days, nanos }) => {
                        Some(timestamp_millis(*days, *nanos).ok_or_else(|| wrong(v))?)
                    }
                    other => return Err(wrong(other)),
                });
            }
            Ok(Arc::new(TimestampMillisecondArray::from(out)))
        }
        DataType::List(inner) => list_array(values, inner, &wrong),
    }
}

fn list_array(
    values: &[&Value],
    inner: &DataType,
    wrong: &dyn Fn(&Value) -> String,
) -> Result<ArrayRef, String> {
    let mut lengths = Vec::with_capacity(values.len());
    let mut items: Vec<&Value> = Vec::new();
    for v in values {
        match v {
            Value::Null => lengths.push(None),
            Value::List(list) => {
                lengths.push(Some(list.len()));
                items.extend(list.iter());
            }
            other => return Err(wrong(other)),
        }
    }
    let flat = to_array(&items, inner)?;
    let field = Arc::new(Field::new("item", arrow_type(inner), true));
    let offsets = arrow::buffer::OffsetBuffer::from_lengths(lengths.iter().map(|l| l.unwrap_or(0)));
    let nulls: arrow::buffer::NullBuffer = lengths.iter().map(Option::is_some).collect();
    let list = arrow::array::ListArray::try_new(field, offsets, flat, Some(nulls))
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(list))
}

/// Writes one chunk file (Parquet only).
fn write_chunk(
    path: &Path,
    file_type: FileType,
    fields: Vec<Field>,
    arrays: Vec<ArrayRef>,
    delta_columns: &[&str],
    rle_columns: &[&str],
) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays)
        .map_err(|e| Error::file(path, format!("cannot build the chunk: {e}")))?;
    match file_type {
        FileType::Parquet => write_parquet(path, &batch, delta_columns, rle_columns),
        FileType::Csv => write_csv(path, &batch),
        FileType::Orc | FileType::Json => Err(Error::file(
            path,
            format!(
                "the writer writes Parquet or CSV payloads, the metadata asks for {}",
                file_type.name()
            ),
        )),
    }
}

/// One chunk as CSV (see the module docs); a list column is an error.
fn write_csv(path: &Path, batch: &RecordBatch) -> Result<(), Error> {
    let schema = batch.schema();
    if let Some(field) =
        (schema.fields().iter()).find(|f| matches!(f.data_type(), ArrowType::List(_)))
    {
        return Err(Error::file(
            path,
            format!(
                "column {:?} is a list: list types are not allowed in CSV",
                field.name()
            ),
        ));
    }
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    let mut writer = arrow::csv::WriterBuilder::new()
        .with_header(true)
        .build(file);
    (writer.write(batch)).map_err(|e| Error::file(path, format!("writing CSV: {e}")))
}

/// One chunk as Parquet, with the module's encodings for the id and label columns.
fn write_parquet(
    path: &Path,
    batch: &RecordBatch,
    delta_columns: &[&str],
    rle_columns: &[&str],
) -> Result<(), Error> {
    let schema = batch.schema();
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
    if rle_columns.is_empty() {
        // Label chunks are read whole (their runs are long): default pages decode faster.
        props = props.set_data_page_row_count_limit(PAGE_ROWS);
    }
    for (columns, encoding) in [
        (delta_columns, Encoding::DELTA_BINARY_PACKED),
        (rle_columns, Encoding::RLE),
    ] {
        for column in columns {
            let column = ColumnPath::new(vec![column.to_string()]);
            props = props
                .set_column_dictionary_enabled(column.clone(), false)
                .set_column_encoding(column.clone(), encoding);
            if encoding == Encoding::DELTA_BINARY_PACKED {
                // Sorted indices delta-pack to a few bits each, which Snappy barely shrinks;
                // uncompressed pages spare every neighbour read a decompression and a copy.
                props = props.set_column_compression(column, Compression::UNCOMPRESSED);
            }
        }
    }
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    let parquet = |e: parquet::errors::ParquetError| Error::file(path, format!("writing: {e}"));
    let mut writer = ArrowWriter::try_new(file, schema, Some(props.build())).map_err(parquet)?;
    writer.write(batch).map_err(parquet)?;
    writer.close().map_err(parquet)?;
    Ok(())
}

/// Writes a count file: a raw 8-byte little-endian int64.
pub fn write_count(path: &Path, count: u64) -> Result<(), Error> {
    std::fs::write(path, (count as i64).to_le_bytes()).map_err(|e| Error::io(path, e))
}
