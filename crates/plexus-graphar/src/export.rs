//! Export: one pinned snapshot of a Plexus database as a GraphAr graph.
//!
//! WHAT
//! ====
//! [`export`] (or [`export_handle`], for `CALL db.export.graphar`) opens one snapshot-isolation transaction and reads everything through it, so
//! the files show the database at one instant while other writers keep committing. The
//! snapshot is read through the facade (`scan_all_vertices`, `vertex_labels`,
//! `vertex_properties`, `scan_edges`, `edge_endpoints`, `edge_properties`), materialised one
//! vertex table at a time, and handed to [`crate::write`].
//!
//! MAPPING RULES
//! =============
//! - **Vertex types**: one GraphAr vertex type per Plexus vertex table, named as the table
//!   (the table's label). Vertices without labels (Plexus's unlabeled table) become the type
//!   [`UNLABELED_TYPE`], which [`crate::import`] loads back without a label.
//! - **Labels**: every other label carried by some vertex of a table becomes a GraphAr label
//!   column of that type (a boolean per vertex, RLE); the graph file lists them all.
//! - **Ids**: vertices are renumbered densely per type in `VertexId` order, so holes left by
//!   deletes vanish. With [`ExportOptions::keep_ids`] each vertex's Plexus id (`id(n)` in
//!   Cypher) is kept as one more int64 property of that name, so the mapping survives.
//! - **Edge types**: one GraphAr edge triple per (source table, relationship type,
//!   destination table), `directed: true`, with both adjacency lists (ordered by source and
//!   by destination), each with offsets and counts.
//! - **Property types** (per type and property, over the values present; a missing property
//!   is a null):
//!
//!   | values                                         | GraphAr type                 |
//!   |------------------------------------------------|------------------------------|
//!   | all Boolean / Integer / Float / String         | bool / int64 / double / string |
//!   | Integers and Floats                            | double (integers widened)    |
//!   | all Date (within ±5.8 million years)           | date                         |
//!   | all LocalDateTime, whole ms, within int64 ms   | timestamp                    |
//!   | lists of integers / of numbers / of strings    | list<int64> / list<double> / list<string> |
//!   | anything else (mixed kinds, maps, zoned or sub-millisecond temporals, durations, other lists) | string: each value as Cypher's `toString` writes it |
//!
//!   So a round trip is exact for every property whose values share one kind of the table's
//!   first rows; widened and stringified values come back as floats and strings.
//! - **Primary keys**: a declared table's primary key is written `is_primary: true`,
//!   `is_nullable: false` (import does not declare tables, so it is not enforced there).
//! - **Layout**: prefixes `vertex/TYPE/` and `edge/SRC_EDGE_DST/`; one property group per
//!   type, prefixed by its property names joined with `_` (or `properties/` when that would
//!   not make a short, plain directory name); Parquet payloads, or CSV ones
//!   ([`ExportOptions::file_type`]) for property groups and adjacency lists — label chunks
//!   are Parquet in every GraphAr graph. GraphAr allows no list type in CSV, so with CSV
//!   payloads a list property is written as a string column (each list as `toString` writes
//!   it).
//! - Vertex tables without vertices in the snapshot and edge triples without edges are not
//!   written (tables created after the snapshot began are therefore never seen).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use plexus::{Database, DatabaseHandle, EdgeId, TemporalValue, Transaction, Value, VertexId};

use crate::meta::{
    AdjList, AdjListType, DataType, EdgeInfo, FileType, GraphInfo, Property, PropertyGroup,
    VertexInfo,
};
use crate::{EdgeData, Error, VertexData};

/// The GraphAr type of Plexus's vertices without labels.
pub const UNLABELED_TYPE: &str = "__unlabeled";
/// Vertex chunk size when none is given (GraphAr's customary default).
pub const DEFAULT_VERTEX_CHUNK_SIZE: u64 = 262_144;
/// Edge chunk size when none is given (GraphAr's customary default).
pub const DEFAULT_EDGE_CHUNK_SIZE: u64 = 4_194_304;
/// The property that keeps Plexus ids when asked without a name (`--keep-ids`,
/// `{keepIds: true}`).
pub const DEFAULT_ID_PROPERTY: &str = "plexus_id";
/// Longest property-group directory name made from property names.
const MAX_GROUP_PREFIX_BYTES: usize = 100;

#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// The graph's name (`NAME.graph.yml`).
    pub name: String,
    /// Vertices per chunk (also every edge triple's source and destination chunk size).
    pub vertex_chunk_size: u64,
    /// Edges per adjacency chunk.
    pub edge_chunk_size: u64,
    /// Only these vertex tables (and edges between them); `None`: all.
    pub labels: Option<Vec<String>>,
    /// Only these relationship types; `None`: all.
    pub types: Option<Vec<String>>,
    /// Keep each vertex's Plexus id (`id(n)`) as an int64 property of this name.
    pub keep_ids: Option<String>,
    /// The payload of property groups and adjacency lists: Parquet or CSV.
    pub file_type: FileType,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            name: "graph".to_string(),
            vertex_chunk_size: DEFAULT_VERTEX_CHUNK_SIZE,
            edge_chunk_size: DEFAULT_EDGE_CHUNK_SIZE,
            labels: None,
            types: None,
            keep_ids: None,
            file_type: FileType::Parquet,
        }
    }
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSummary {
    pub graph_file: PathBuf,
    pub vertices: u64,
    pub edges: u64,
    pub vertex_types: usize,
    pub edge_types: usize,
}

/// Writes the database as it is now (one snapshot) into `out`, which must not exist or be an
/// empty directory. On error, what was written is removed again.
pub fn export(db: &Database, out: &Path, options: &ExportOptions) -> Result<ExportSummary, Error> {
    export_handle(&db.handle(), out, options)
}

/// [`export`] through a [`DatabaseHandle`] (what `CALL db.export.graphar` keeps).
pub fn export_handle(
    db: &DatabaseHandle,
    out: &Path,
    options: &ExportOptions,
) -> Result<ExportSummary, Error> {
    if options.vertex_chunk_size == 0 || options.edge_chunk_size == 0 {
        return Err(Error::file(out, "chunk sizes must be positive"));
    }
    check_name(out, "graph name", &options.name)?;
    if !matches!(options.file_type, FileType::Parquet | FileType::Csv) {
        return Err(Error::file(
            out,
            format!(
                "the writer writes Parquet or CSV payloads, not {}",
                options.file_type.name()
            ),
        ));
    }
    if options.keep_ids.as_deref().is_some_and(str::is_empty) {
        return Err(Error::file(out, "the id property's name is empty"));
    }
    let existed = out.exists();
    let empty = std::fs::read_dir(out).map_or(true, |mut entries| entries.next().is_none());
    if !empty {
        return Err(Error::file(
            out,
            "exists and is not empty: export into a new directory",
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let result = export_into(db, out, options);
    if result.is_err() {
        // Leave the directory as it was: absent, or empty.
        if existed {
            for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
                let path = entry.path();
                let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
            }
        } else {
            let _ = std::fs::remove_dir_all(out);
        }
    }
    result
}

fn export_into(
    db: &DatabaseHandle,
    out: &Path,
    options: &ExportOptions,
) -> Result<ExportSummary, Error> {
    let mut tx = db.begin_snapshot();
    // Read after the snapshot began: tables only grow, so this names every table it can see.
    let schema = db.schema();
    let db_err = |e: plexus::Error| Error::Database(e.to_string());

    // Vertices by table, in id order: the position in a table's list is the GraphAr index.
    let mut tables: BTreeMap<u32, Vec<VertexId>> = BTreeMap::new();
    for v in tx.scan_all_vertices().map_err(db_err)? {
        tables.entry(v.table).or_default().push(v);
    }
    let type_name = |table: u32| -> String {
        match schema.vertex_tables.get(table as usize) {
            Some(t) if !t.name.is_empty() => t.name.clone(),
            _ => UNLABELED_TYPE.to_string(),
        }
    };
    let wanted = |name: &str| {
        options
            .labels
            .as_ref()
            .is_none_or(|l| l.iter().any(|x| x == name))
    };
    tables.retain(|&table, _| wanted(&type_name(table)));

    let mut graph = GraphInfo {
        name: options.name.clone(),
        root: out.to_path_buf(),
        vertices: Vec::new(),
        edges: Vec::new(),
        labels: Vec::new(),
        extra_info: Vec::new(),
        file: PathBuf::new(),
    };
    let mut all_labels = BTreeSet::new();
    let mut vertices = 0;
    for (&table, ids) in &tables {
        let name = type_name(table);
        check_name(out, "vertex type", &name)?;
        let primary_key =
            (schema.vertex_tables.get(table as usize)).and_then(|t| t.primary_key.as_deref());
        let (info, data) = vertex_type(&mut tx, &name, primary_key, ids, options)?;
        crate::write::write_vertices(out, &info, &data)?;
        all_labels.extend(info.labels.iter().cloned());
        vertices += data.count;
        graph.vertices.push(info);
    }

    let mut edge_types: Vec<&str> = (schema.edge_tables.iter())
        .map(|t| t.edge_type.as_str())
        .filter(|t| {
            options
                .types
                .as_ref()
                .is_none_or(|w| w.iter().any(|x| x == t))
        })
        .collect();
    edge_types.sort_unstable();
    edge_types.dedup();
    let mut edges = 0;
    for edge_type in edge_types {
        check_name(out, "relationship type", edge_type)?;
        // Each edge with its endpoints, read once, grouped by (source table, destination table).
        let mut triples: BTreeMap<(u32, u32), Vec<EdgeWithEnds>> = BTreeMap::new();
        for e in tx.scan_edges(edge_type).map_err(db_err)? {
            let (s, d) = tx.edge_endpoints(e).map_err(db_err)?;
            if tables.contains_key(&s.table) && tables.contains_key(&d.table) {
                triples
                    .entry((s.table, d.table))
                    .or_default()
                    .push((e, s, d));
            }
        }
        for ((src_table, dst_table), ids) in triples {
            let info = EdgeInfo {
                src_type: type_name(src_table),
                edge_type: edge_type.to_string(),
                dst_type: type_name(dst_table),
                chunk_size: options.edge_chunk_size,
                src_chunk_size: options.vertex_chunk_size,
                dst_chunk_size: options.vertex_chunk_size,
                directed: true,
                prefix: String::new(),
                adj_lists: [AdjListType::OrderedBySource, AdjListType::OrderedByDest]
                    .into_iter()
                    .map(|kind| AdjList {
                        kind,
                        prefix: kind.default_prefix().to_string(),
                        file_type: options.file_type,
                    })
                    .collect(),
                property_groups: Vec::new(),
                file: PathBuf::new(),
            };
            let prefix = format!("edge/{}/", info.key());
            let (src_ids, dst_ids) = (&tables[&src_table], &tables[&dst_table]);
            let mut data = EdgeData::default();
            let mut rows = Vec::with_capacity(ids.len());
            for &(e, s, d) in &ids {
                data.src.push(dense(src_ids, s)?);
                data.dst.push(dense(dst_ids, d)?);
                rows.push(tx.edge_properties(e).map_err(db_err)?);
            }
            let (columns, properties) = property_columns(rows, options.file_type);
            data.columns = columns;
            let info = EdgeInfo {
                prefix,
                property_groups: groups(properties, options.file_type),
                ..info
            };
            crate::write::write_edges(
                out,
                &info,
                &data,
                src_ids.len() as u64,
                dst_ids.len() as u64,
            )?;
            edges += data.src.len() as u64;
            graph.edges.push(info);
        }
    }
    graph.labels = all_labels.into_iter().collect();
    let graph_file = graph.write_yaml(out)?;
    Ok(ExportSummary {
        graph_file,
        vertices,
        edges,
        vertex_types: graph.vertices.len(),
        edge_types: graph.edges.len(),
    })
}

/// A relationship and its (source, destination).
type EdgeWithEnds = (EdgeId, VertexId, VertexId);

/// The GraphAr index of `v` among its table's vertices.
fn dense(ids: &[VertexId], v: VertexId) -> Result<u64, Error> {
    ids.binary_search(&v).map(|i| i as u64).map_err(|_| {
        Error::Database(format!(
            "the snapshot names vertex {v:?} as an endpoint but not among its vertices"
        ))
    })
}

/// Refuses names that cannot be a file or directory name.
fn check_name(out: &Path, what: &str, name: &str) -> Result<(), Error> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(Error::file(
            out,
            format!("the {what} {name:?} cannot be a GraphAr file name"),
        ));
    }
    Ok(())
}

/// One vertex table as a vertex type and its data.
fn vertex_type(
    tx: &mut Transaction,
    name: &str,
    primary_key: Option<&str>,
    ids: &[VertexId],
    options: &ExportOptions,
) -> Result<(VertexInfo, VertexData), Error> {
    let db_err = |e: plexus::Error| Error::Database(e.to_string());
    let mut rows = Vec::with_capacity(ids.len());
    let mut label_sets = Vec::with_capacity(ids.len());
    let mut labels = BTreeSet::new();
    for &v in ids {
        let own: Vec<String> = (tx.vertex_labels(v).map_err(db_err)?.into_iter())
            .filter(|l| l != name)
            .collect();
        labels.extend(own.iter().cloned());
        label_sets.push(own);
        rows.push(tx.vertex_properties(v).map_err(db_err)?);
    }
    let (mut columns, mut properties) = property_columns(rows, options.file_type);
    if let Some(id_name) = &options.keep_ids {
        if properties.iter().any(|p| p.name == *id_name) {
            return Err(Error::Database(format!(
                "vertex type {name:?} has a property {id_name:?} already: choose another name \
                 for the kept ids"
            )));
        }
        let ids = ids.iter().map(|v| Value::Int(v.cypher_id())).collect();
        columns.push((id_name.clone(), ids));
        let mut property = Property::new(id_name, DataType::Int64);
        property.is_nullable = false;
        properties.push(property);
    }
    for p in &mut properties {
        if Some(p.name.as_str()) == primary_key {
            // A primary key is unique and present on every row.
            p.is_primary = true;
            p.is_nullable = false;
        }
    }
    let labels: Vec<String> = labels.into_iter().collect();
    let flags = (labels.iter())
        .map(|l| {
            let flags = label_sets.iter().map(|set| set.contains(l)).collect();
            (l.clone(), flags)
        })
        .collect();
    let info = VertexInfo {
        type_name: name.to_string(),
        chunk_size: options.vertex_chunk_size,
        prefix: format!("vertex/{name}/"),
        labels,
        property_groups: groups(properties, options.file_type),
        file: PathBuf::new(),
    };
    let data = VertexData {
        count: ids.len() as u64,
        columns,
        labels: flags,
    };
    Ok((info, data))
}

/// One group holding every property, or none when there are no properties.
fn groups(properties: Vec<Property>, file_type: FileType) -> Vec<PropertyGroup> {
    if properties.is_empty() {
        return Vec::new();
    }
    let mut group = PropertyGroup::new(file_type, properties);
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let name = &group.prefix[..group.prefix.len() - 1];
    if name.len() > MAX_GROUP_PREFIX_BYTES || !name.chars().all(plain) {
        group.prefix = "properties/".to_string();
    }
    vec![group]
}

/// Rows of `(property, value)` as columns (first-seen property order), each typed by the
/// module's rule and its values converted to fit (lists as strings in CSV payloads).
fn property_columns(
    rows: Vec<Vec<(String, Value)>>,
    file_type: FileType,
) -> (Vec<(String, Vec<Value>)>, Vec<Property>) {
    let mut columns: Vec<(String, Vec<Value>)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let n = rows.len();
    for (row, props) in rows.into_iter().enumerate() {
        for (name, value) in props {
            let column = *index.entry(name.clone()).or_insert_with(|| {
                columns.push((name, vec![Value::Null; n]));
                columns.len() - 1
            });
            columns[column].1[row] = value;
        }
    }
    let mut properties = Vec::with_capacity(columns.len());
    for (name, values) in &mut columns {
        let ty = match column_type(values) {
            DataType::List(_) if file_type == FileType::Csv => DataType::String,
            ty => ty,
        };
        if ty == DataType::String {
            for value in values.iter_mut() {
                if !matches!(value, Value::Null | Value::String(_)) {
                    *value = Value::from(text(value));
                }
            }
        }
        properties.push(Property::new(name, ty));
    }
    (columns, properties)
}

/// The kind of one value, for the type rule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
    String,
    Date,
    Timestamp,
    IntList,
    NumberList,
    StringList,
    EmptyList,
    Other,
}

fn kind(value: &Value) -> Option<Kind> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::String(_) => Kind::String,
        Value::Temporal(TemporalValue::Date { days }) if i32::try_from(*days).is_ok() => Kind::Date,
        Value::Temporal(TemporalValue::LocalDateTime { days, nanos })
            if crate::write::timestamp_millis(*days, *nanos).is_some() =>
        {
            Kind::Timestamp
        }
        Value::List(items) if items.is_empty() => Kind::EmptyList,
        Value::List(items) if items.iter().all(|i| matches!(i, Value::Int(_))) => Kind::IntList,
        Value::List(items)
            if items
                .iter()
                .all(|i| matches!(i, Value::Int(_) | Value::Float(_))) =>
        {
            Kind::NumberList
        }
        Value::List(items) if items.iter().all(|i| matches!(i, Value::String(_))) => {
            Kind::StringList
        }
        _ => Kind::Other,
    })
}

/// The column type of `values` (see the module's table).
fn column_type(values: &[Value]) -> DataType {
    let mut seen: Option<Kind> = None;
    for k in values.iter().filter_map(kind) {
        seen = Some(match (seen, k) {
            (None, k) => k,
            (Some(a), b) if a == b => a,
            (Some(Kind::Int | Kind::Float), Kind::Int | Kind::Float) => Kind::Float,
            (Some(Kind::EmptyList), l @ (Kind::IntList | Kind::NumberList | Kind::StringList))
            | (Some(l @ (Kind::IntList | Kind::NumberList | Kind::StringList)), Kind::EmptyList) => {
                l
            }
            (Some(Kind::IntList | Kind::NumberList), Kind::IntList | Kind::NumberList) => {
                Kind::NumberList
            }
            _ => return DataType::String,
        });
    }
    let list = |t| DataType::List(Box::new(t));
    match seen {
        Some(Kind::Bool) => DataType::Bool,
        Some(Kind::Int) => DataType::Int64,
        Some(Kind::Float) => DataType::Double,
        Some(Kind::Date) => DataType::Date,
        Some(Kind::Timestamp) => DataType::Timestamp,
        Some(Kind::IntList | Kind::EmptyList) => list(DataType::Int64),
        Some(Kind::NumberList) => list(DataType::Double),
        Some(Kind::StringList) => list(DataType::String),
        Some(Kind::String | Kind::Other) | None => DataType::String,
    }
}

/// A value as Cypher's `toString` writes it.
fn text(value: &Value) -> String {
    plexus_value::format::plain_text(&plexus_value::Value::from_storage(value.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_rule_widens_numbers_and_falls_back_to_strings() {
        let date = Value::Temporal(TemporalValue::Date { days: 3 });
        let far = Value::Temporal(TemporalValue::Date { days: 1 << 40 });
        assert_eq!(column_type(&[date.clone(), far]), DataType::String);
        let far = Value::Temporal(TemporalValue::LocalDateTime {
            days: 1 << 40,
            nanos: 0,
        });
        assert_eq!(column_type(&[far]), DataType::String);
        assert_eq!(column_type(&[Value::Int(1), Value::Null]), DataType::Int64);
        assert_eq!(
            column_type(&[Value::Int(1), Value::Float(0.5)]),
            DataType::Double
        );
        assert_eq!(
            column_type(&[Value::Int(1), Value::from("x")]),
            DataType::String
        );
        assert_eq!(column_type(&[date.clone(), Value::Null]), DataType::Date);
        assert_eq!(column_type(&[date, Value::Int(1)]), DataType::String);
        let ints = Value::List(vec![Value::Int(1)].into());
        let floats = Value::List(vec![Value::Float(1.5)].into());
        let empty = Value::List(Vec::new().into());
        assert_eq!(
            column_type(&[ints.clone(), empty]),
            DataType::List(Box::new(DataType::Int64))
        );
        assert_eq!(
            column_type(&[ints, floats]),
            DataType::List(Box::new(DataType::Double))
        );
        let (columns, _) = property_columns(
            vec![
                vec![("p".to_string(), Value::Int(7))],
                vec![("p".to_string(), Value::from("x"))],
                vec![],
            ],
            FileType::Parquet,
        );
        assert_eq!(
            columns[0].1,
            vec![Value::from("7"), Value::from("x"), Value::Null]
        );
    }
}
