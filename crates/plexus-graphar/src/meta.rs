//! GraphAr metadata: the graph, vertex and edge YAML files, read and written.
//!
//! WHAT
//! ====
//! A GraphAr graph is described by one `NAME.graph.yml` naming `TYPE.vertex.yml` and
//! `SRC_EDGE_DST.edge.yml` files beside it (`../shared/GRAPHAR-NOTES.md` is the reference for
//! every field). [`GraphInfo::load`] reads all three kinds into plain values with every
//! default applied, so the reader and the writer never look at YAML again:
//!
//! ```text
//!   graph.yml ── prefix (default: its folder) ──▶ GraphInfo.root (absolute)
//!     vertices: [person.vertex.yml]  ──▶ VertexInfo { type, chunk_size, prefix, labels, groups }
//!     edges:    [a_knows_b.edge.yml] ──▶ EdgeInfo   { src/edge/dst type, chunk sizes, adj lists }
//! ```
//!
//! DEFAULTS AND OLD SPELLINGS
//! ==========================
//! - `type` may be spelled `label` (vertex), `src_label`/`edge_label`/`dst_label` (edge);
//! - a vertex prefix defaults to `TYPE/`, an edge prefix to `SRC_EDGE_DST/`, a property group's
//!   to its property names joined by `_` plus `/`, an adjacency list's to `ordered_by_source/`,
//!   `ordered_by_dest/`, `unordered_by_source/` or `unordered_by_dest/`;
//! - `is_nullable` missing means true, `is_primary` false, `cardinality` single, `directed`
//!   false; `src_chunk_size` / `dst_chunk_size` default to the endpoint types' chunk sizes.
//!
//! ERRORS
//! ======
//! A missing required field, or a field of the wrong kind (a string where an integer belongs),
//! is an [`Error::File`] naming the file and the field; nothing is guessed.
//!
//! WRITING
//! =======
//! [`GraphInfo::write_yaml`] writes every file with every prefix spelled out (the official
//! library accepts both), relative file names in the graph file, and no `prefix` in the graph
//! file (its folder is the root).

use std::fmt;
use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value as Yaml};

use crate::Error;

/// The format version every file carries.
pub const VERSION: &str = "gar/v1";

/// How a property group's or adjacency list's chunks are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileType {
    #[default]
    Parquet,
    Csv,
    Orc,
    Json,
}

impl FileType {
    pub fn name(self) -> &'static str {
        match self {
            FileType::Parquet => "parquet",
            FileType::Csv => "csv",
            FileType::Orc => "orc",
            FileType::Json => "json",
        }
    }
}

/// A GraphAr property data type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataType {
    Bool,
    Int32,
    Int64,
    Float,
    Double,
    String,
    /// Days since 1970-01-01 (Arrow date32).
    Date,
    /// Milliseconds since 1970-01-01 00:00 (Arrow timestamp without a zone; other units are
    /// accepted when read).
    Timestamp,
    /// `list<T>` of a scalar type.
    List(Box<DataType>),
}

impl DataType {
    /// Parses a `data_type` field (`int64`, `list<float>`, …).
    pub fn parse(text: &str) -> Option<DataType> {
        let text = text.trim();
        if let Some(inner) = text.strip_prefix("list<").and_then(|t| t.strip_suffix('>')) {
            return match DataType::parse(inner)? {
                DataType::List(_) => None,
                scalar => Some(DataType::List(Box::new(scalar))),
            };
        }
        Some(match text {
            "bool" => DataType::Bool,
            "int32" => DataType::Int32,
            "int64" => DataType::Int64,
            "float" => DataType::Float,
            "double" => DataType::Double,
            "string" => DataType::String,
            "date" => DataType::Date,
            "timestamp" => DataType::Timestamp,
            _ => return None,
        })
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            DataType::Bool => "bool",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::Float => "float",
            DataType::Double => "double",
            DataType::String => "string",
            DataType::Date => "date",
            DataType::Timestamp => "timestamp",
            DataType::List(inner) => return write!(f, "list<{inner}>"),
        };
        f.write_str(name)
    }
}

/// How many values a vertex property holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cardinality {
    Single,
    List,
    Set,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    pub name: String,
    pub data_type: DataType,
    pub is_primary: bool,
    pub is_nullable: bool,
    pub cardinality: Cardinality,
}

impl Property {
    /// A nullable, single-valued, non-primary property.
    pub fn new(name: &str, data_type: DataType) -> Property {
        Property {
            name: name.to_string(),
            data_type,
            is_primary: false,
            is_nullable: true,
            cardinality: Cardinality::Single,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PropertyGroup {
    /// Relative to the vertex prefix or the adjacency list's prefix; ends with `/`.
    pub prefix: String,
    pub file_type: FileType,
    pub properties: Vec<Property>,
}

impl PropertyGroup {
    /// A group with the default prefix (property names joined by `_`).
    pub fn new(file_type: FileType, properties: Vec<Property>) -> PropertyGroup {
        PropertyGroup {
            prefix: default_group_prefix(&properties),
            file_type,
            properties,
        }
    }
}

fn default_group_prefix(properties: &[Property]) -> String {
    let names: Vec<&str> = properties.iter().map(|p| p.name.as_str()).collect();
    format!("{}/", names.join("_"))
}

#[derive(Clone, Debug, PartialEq)]
pub struct VertexInfo {
    pub type_name: String,
    pub chunk_size: u64,
    /// Relative to the graph root; ends with `/`.
    pub prefix: String,
    /// Label columns (one boolean per vertex in `labels/chunk<i>`).
    pub labels: Vec<String>,
    pub property_groups: Vec<PropertyGroup>,
    /// The file it was read from, for error messages (empty for a graph built in memory).
    pub file: PathBuf,
}

/// Which adjacency list: sorted or not, and by which endpoint it is split into parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdjListType {
    OrderedBySource,
    OrderedByDest,
    UnorderedBySource,
    UnorderedByDest,
}

impl AdjListType {
    pub fn ordered(self) -> bool {
        matches!(
            self,
            AdjListType::OrderedBySource | AdjListType::OrderedByDest
        )
    }

    /// Whether parts follow the source's vertex chunks (else the destination's).
    pub fn by_source(self) -> bool {
        matches!(
            self,
            AdjListType::OrderedBySource | AdjListType::UnorderedBySource
        )
    }

    pub fn default_prefix(self) -> &'static str {
        match self {
            AdjListType::OrderedBySource => "ordered_by_source/",
            AdjListType::OrderedByDest => "ordered_by_dest/",
            AdjListType::UnorderedBySource => "unordered_by_source/",
            AdjListType::UnorderedByDest => "unordered_by_dest/",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AdjList {
    pub kind: AdjListType,
    /// Relative to the edge prefix; ends with `/`.
    pub prefix: String,
    pub file_type: FileType,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EdgeInfo {
    pub src_type: String,
    pub edge_type: String,
    pub dst_type: String,
    pub chunk_size: u64,
    pub src_chunk_size: u64,
    pub dst_chunk_size: u64,
    pub directed: bool,
    /// Relative to the graph root; ends with `/`.
    pub prefix: String,
    pub adj_lists: Vec<AdjList>,
    pub property_groups: Vec<PropertyGroup>,
    pub file: PathBuf,
}

impl EdgeInfo {
    /// `SRC_EDGE_DST`, the edge's file stem and default prefix.
    pub fn key(&self) -> String {
        format!("{}_{}_{}", self.src_type, self.edge_type, self.dst_type)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct GraphInfo {
    pub name: String,
    /// Where every vertex and edge prefix starts (absolute when loaded from a file).
    pub root: PathBuf,
    pub vertices: Vec<VertexInfo>,
    pub edges: Vec<EdgeInfo>,
    pub labels: Vec<String>,
    pub extra_info: Vec<(String, String)>,
    /// The graph file it was read from.
    pub file: PathBuf,
}

impl GraphInfo {
    /// Reads `path` (a `.graph.yml`) and the vertex and edge files it names.
    pub fn load(path: &Path) -> Result<GraphInfo, Error> {
        let path = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
        let doc = Doc::read(&path)?;
        let folder = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let root = match doc.opt_str("prefix")? {
            Some(prefix) => folder.join(prefix),
            None => folder.clone(),
        };
        let mut vertices = Vec::new();
        for file in doc.str_list("vertices")? {
            vertices.push(VertexInfo::load(&folder.join(file))?);
        }
        let mut edges = Vec::new();
        for file in doc.str_list("edges")? {
            edges.push(EdgeInfo::load(&folder.join(file), &vertices)?);
        }
        let extra_info = match doc.map.get("extra_info") {
            None | Some(Yaml::Null) => Vec::new(),
            Some(Yaml::Sequence(items)) => items
                .iter()
                .map(|item| {
                    let entry = doc.nested(item, "extra_info")?;
                    Ok((entry.req_str("key")?, entry.req_str("value")?))
                })
                .collect::<Result<_, Error>>()?,
            Some(other) => return Err(doc.wrong("extra_info", "a list", other)),
        };
        Ok(GraphInfo {
            name: doc.req_str("name")?,
            root,
            vertices,
            edges,
            labels: doc.str_list("labels")?,
            extra_info,
            file: path,
        })
    }

    pub fn vertex(&self, type_name: &str) -> Option<&VertexInfo> {
        self.vertices.iter().find(|v| v.type_name == type_name)
    }

    /// Writes `NAME.graph.yml` and every vertex and edge file into `dir`, which becomes the
    /// graph's root. Returns the graph file's path.
    pub fn write_yaml(&self, dir: &Path) -> Result<PathBuf, Error> {
        let mut vertex_files = Vec::new();
        for v in &self.vertices {
            let name = format!("{}.vertex.yml", v.type_name);
            write_doc(&dir.join(&name), v.to_yaml())?;
            vertex_files.push(Yaml::from(name));
        }
        let mut edge_files = Vec::new();
        for e in &self.edges {
            let name = format!("{}.edge.yml", e.key());
            write_doc(&dir.join(&name), e.to_yaml())?;
            edge_files.push(Yaml::from(name));
        }
        let mut map = Mapping::new();
        map.insert("name".into(), self.name.clone().into());
        map.insert("vertices".into(), Yaml::Sequence(vertex_files));
        map.insert("edges".into(), Yaml::Sequence(edge_files));
        if !self.labels.is_empty() {
            map.insert("labels".into(), strings(&self.labels));
        }
        if !self.extra_info.is_empty() {
            let entries = self.extra_info.iter().map(|(key, value)| {
                let mut entry = Mapping::new();
                entry.insert("key".into(), key.clone().into());
                entry.insert("value".into(), value.clone().into());
                Yaml::Mapping(entry)
            });
            map.insert("extra_info".into(), Yaml::Sequence(entries.collect()));
        }
        map.insert("version".into(), VERSION.into());
        let path = dir.join(format!("{}.graph.yml", self.name));
        write_doc(&path, map)?;
        Ok(path)
    }
}

impl VertexInfo {
    fn load(path: &Path) -> Result<VertexInfo, Error> {
        let doc = Doc::read(path)?;
        let type_name = doc.req_str_either("type", "label")?;
        let prefix = doc
            .opt_str("prefix")?
            .unwrap_or_else(|| format!("{type_name}/"));
        Ok(VertexInfo {
            chunk_size: doc.req_chunk_size("chunk_size")?,
            prefix: with_slash(prefix),
            labels: doc.str_list("labels")?,
            property_groups: doc.property_groups()?,
            type_name,
            file: path.to_path_buf(),
        })
    }

    fn to_yaml(&self) -> Mapping {
        let mut map = Mapping::new();
        map.insert("type".into(), self.type_name.clone().into());
        map.insert("chunk_size".into(), self.chunk_size.into());
        map.insert("prefix".into(), self.prefix.clone().into());
        if !self.labels.is_empty() {
            map.insert("labels".into(), strings(&self.labels));
        }
        map.insert("property_groups".into(), groups_yaml(&self.property_groups));
        map.insert("version".into(), VERSION.into());
        map
    }

    /// Chunks holding `count` vertices.
    pub fn chunk_count(&self, count: u64) -> u64 {
        count.div_ceil(self.chunk_size)
    }
}

impl EdgeInfo {
    fn load(path: &Path, vertices: &[VertexInfo]) -> Result<EdgeInfo, Error> {
        let doc = Doc::read(path)?;
        let src_type = doc.req_str_either("src_type", "src_label")?;
        let edge_type = doc.req_str_either("edge_type", "edge_label")?;
        let dst_type = doc.req_str_either("dst_type", "dst_label")?;
        let endpoint_chunk = |field: &str, type_name: &str| -> Result<u64, Error> {
            match doc.map.get(field) {
                None | Some(Yaml::Null) => vertices
                    .iter()
                    .find(|v| v.type_name == type_name)
                    .map(|v| v.chunk_size)
                    .ok_or_else(|| {
                        doc.error(format!(
                            "no `{field}`, and no vertex type {type_name:?} to take it from"
                        ))
                    }),
                Some(_) => doc.req_chunk_size(field),
            }
        };
        let src_chunk_size = endpoint_chunk("src_chunk_size", &src_type)?;
        let dst_chunk_size = endpoint_chunk("dst_chunk_size", &dst_type)?;
        let mut adj_lists = Vec::new();
        match doc.map.get("adj_lists") {
            Some(Yaml::Sequence(items)) => {
                for item in items {
                    let adj = doc.nested(item, "adj_lists")?;
                    let ordered = adj.opt_bool("ordered")?.unwrap_or(false);
                    let by_source = match adj.opt_str("aligned_by")?.as_deref() {
                        None | Some("src") => true,
                        Some("dst") => false,
                        Some(other) => {
                            return Err(doc
                                .error(format!("`aligned_by` is {other:?}: expected src or dst")));
                        }
                    };
                    let kind = match (ordered, by_source) {
                        (true, true) => AdjListType::OrderedBySource,
                        (true, false) => AdjListType::OrderedByDest,
                        (false, true) => AdjListType::UnorderedBySource,
                        (false, false) => AdjListType::UnorderedByDest,
                    };
                    let prefix = adj
                        .opt_str("prefix")?
                        .unwrap_or_else(|| kind.default_prefix().to_string());
                    adj_lists.push(AdjList {
                        kind,
                        prefix: with_slash(prefix),
                        file_type: adj.file_type()?,
                    });
                }
            }
            None => return Err(doc.error("no `adj_lists`".to_string())),
            Some(other) => return Err(doc.wrong("adj_lists", "a list", other)),
        }
        let key = format!("{src_type}_{edge_type}_{dst_type}");
        let prefix = doc.opt_str("prefix")?.unwrap_or_else(|| format!("{key}/"));
        Ok(EdgeInfo {
            chunk_size: doc.req_chunk_size("chunk_size")?,
            src_chunk_size,
            dst_chunk_size,
            directed: doc.opt_bool("directed")?.unwrap_or(false),
            prefix: with_slash(prefix),
            adj_lists,
            property_groups: doc.property_groups()?,
            src_type,
            edge_type,
            dst_type,
            file: path.to_path_buf(),
        })
    }

    fn to_yaml(&self) -> Mapping {
        let mut map = Mapping::new();
        map.insert("src_type".into(), self.src_type.clone().into());
        map.insert("edge_type".into(), self.edge_type.clone().into());
        map.insert("dst_type".into(), self.dst_type.clone().into());
        map.insert("chunk_size".into(), self.chunk_size.into());
        map.insert("src_chunk_size".into(), self.src_chunk_size.into());
        map.insert("dst_chunk_size".into(), self.dst_chunk_size.into());
        map.insert("directed".into(), self.directed.into());
        map.insert("prefix".into(), self.prefix.clone().into());
        let adj_lists = self.adj_lists.iter().map(|adj| {
            let mut entry = Mapping::new();
            entry.insert("ordered".into(), adj.kind.ordered().into());
            let aligned_by = if adj.kind.by_source() { "src" } else { "dst" };
            entry.insert("aligned_by".into(), aligned_by.into());
            entry.insert("prefix".into(), adj.prefix.clone().into());
            entry.insert("file_type".into(), adj.file_type.name().into());
            Yaml::Mapping(entry)
        });
        map.insert("adj_lists".into(), Yaml::Sequence(adj_lists.collect()));
        if !self.property_groups.is_empty() {
            map.insert("property_groups".into(), groups_yaml(&self.property_groups));
        }
        map.insert("version".into(), VERSION.into());
        map
    }
}

fn with_slash(prefix: String) -> String {
    if prefix.ends_with('/') {
        prefix
    } else {
        prefix + "/"
    }
}

fn strings(items: &[String]) -> Yaml {
    Yaml::Sequence(items.iter().map(|s| Yaml::from(s.clone())).collect())
}

fn groups_yaml(groups: &[PropertyGroup]) -> Yaml {
    let groups = groups.iter().map(|group| {
        let properties = group.properties.iter().map(|p| {
            let mut entry = Mapping::new();
            entry.insert("name".into(), p.name.clone().into());
            entry.insert("data_type".into(), p.data_type.to_string().into());
            entry.insert("is_primary".into(), p.is_primary.into());
            entry.insert("is_nullable".into(), p.is_nullable.into());
            if p.cardinality != Cardinality::Single {
                let name = match p.cardinality {
                    Cardinality::List => "list",
                    _ => "set",
                };
                entry.insert("cardinality".into(), name.into());
            }
            Yaml::Mapping(entry)
        });
        let mut entry = Mapping::new();
        entry.insert("prefix".into(), group.prefix.clone().into());
        entry.insert("file_type".into(), group.file_type.name().into());
        entry.insert("properties".into(), Yaml::Sequence(properties.collect()));
        Yaml::Mapping(entry)
    });
    Yaml::Sequence(groups.collect())
}

fn write_doc(path: &Path, map: Mapping) -> Result<(), Error> {
    let mut text = String::new();
    emit_mapping(&mut text, &map, 0, false);
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// Writes `map` in the block style of GraphAr's own files: sequence items indented two
/// spaces under their key, a mapping item's first key on the `- ` line. (The official C++
/// reader's YAML parser refuses the unindented `- ` items most emitters write.)
fn emit_mapping(out: &mut String, map: &Mapping, indent: usize, first_inline: bool) {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 || !first_inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&scalar(key));
        out.push(':');
        match value {
            Yaml::Sequence(items) if !items.is_empty() => {
                out.push('\n');
                for item in items {
                    out.push_str(&" ".repeat(indent + 2));
                    out.push_str("- ");
                    match item {
                        Yaml::Mapping(inner) => emit_mapping(out, inner, indent + 4, true),
                        other => {
                            out.push_str(&scalar(other));
                            out.push('\n');
                        }
                    }
                }
            }
            Yaml::Sequence(_) => out.push_str(" []\n"),
            Yaml::Mapping(inner) => {
                out.push('\n');
                emit_mapping(out, inner, indent + 2, false);
            }
            other => {
                out.push(' ');
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

/// A scalar as YAML text: plain when it reads back as the same string, else double-quoted.
fn scalar(value: &Yaml) -> String {
    match value {
        Yaml::Bool(b) => b.to_string(),
        Yaml::Number(n) => n.to_string(),
        Yaml::String(s) => {
            let plain = s
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./<>-".contains(c))
                && !s.starts_with('-')
                && serde_yaml_ng::from_str::<Yaml>(s).ok() == Some(Yaml::String(s.clone()));
            if plain {
                s.clone()
            } else {
                let mut quoted = String::with_capacity(s.len() + 2);
                quoted.push('"');
                for c in s.chars() {
                    match c {
                        '"' => quoted.push_str("\\\""),
                        '\\' => quoted.push_str("\\\\"),
                        '\n' => quoted.push_str("\\n"),
                        c if c.is_control() => quoted.push_str(&format!("\\u{:04x}", c as u32)),
                        c => quoted.push(c),
                    }
                }
                quoted.push('"');
                quoted
            }
        }
        _ => "null".to_string(),
    }
}

/// One YAML mapping and the file it came from: typed field access with errors naming both.
struct Doc<'a> {
    path: &'a Path,
    map: Mapping,
    /// Where in the file the mapping is (`""` for the top level, else `adj_lists` …).
    at: &'static str,
}

fn kind_of(value: &Yaml) -> &'static str {
    match value {
        Yaml::Null => "nothing",
        Yaml::Bool(_) => "a boolean",
        Yaml::Number(_) => "a number",
        Yaml::String(_) => "a string",
        Yaml::Sequence(_) => "a list",
        Yaml::Mapping(_) => "a mapping",
        Yaml::Tagged(_) => "a tagged value",
    }
}

impl<'a> Doc<'a> {
    fn read(path: &'a Path) -> Result<Doc<'a>, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let value: Yaml = serde_yaml_ng::from_str(&text)
            .map_err(|e| Error::file(path, format!("not valid YAML: {e}")))?;
        match value {
            Yaml::Mapping(map) => Ok(Doc { path, map, at: "" }),
            other => Err(Error::file(
                path,
                format!("expected a mapping of fields, found {}", kind_of(&other)),
            )),
        }
    }

    fn nested(&self, value: &Yaml, at: &'static str) -> Result<Doc<'a>, Error> {
        match value {
            Yaml::Mapping(map) => Ok(Doc {
                path: self.path,
                map: map.clone(),
                at,
            }),
            other => Err(self.wrong(at, "a mapping", other)),
        }
    }

    fn error(&self, message: String) -> Error {
        if self.at.is_empty() {
            Error::file(self.path, message)
        } else {
            Error::file(self.path, format!("in `{}`: {message}", self.at))
        }
    }

    fn wrong(&self, field: &str, expected: &str, found: &Yaml) -> Error {
        self.error(format!(
            "field `{field}` must be {expected}, found {}",
            kind_of(found)
        ))
    }

    fn opt_str(&self, field: &str) -> Result<Option<String>, Error> {
        match self.map.get(field) {
            None | Some(Yaml::Null) => Ok(None),
            Some(Yaml::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(field, "a string", other)),
        }
    }

    fn req_str(&self, field: &str) -> Result<String, Error> {
        self.opt_str(field)?
            .ok_or_else(|| self.error(format!("missing field `{field}`")))
    }

    /// A required string under its name or its old spelling.
    fn req_str_either(&self, field: &str, old: &str) -> Result<String, Error> {
        match self.opt_str(field)? {
            Some(s) => Ok(s),
            None => self
                .opt_str(old)?
                .ok_or_else(|| self.error(format!("missing field `{field}`"))),
        }
    }

    fn opt_bool(&self, field: &str) -> Result<Option<bool>, Error> {
        match self.map.get(field) {
            None | Some(Yaml::Null) => Ok(None),
            Some(Yaml::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(field, "true or false", other)),
        }
    }

    fn req_chunk_size(&self, field: &str) -> Result<u64, Error> {
        match self.map.get(field) {
            Some(Yaml::Number(n)) => match n.as_u64() {
                Some(size) if size > 0 => Ok(size),
                _ => Err(self.error(format!("`{field}` must be a positive integer, is {n}"))),
            },
            None | Some(Yaml::Null) => Err(self.error(format!("missing field `{field}`"))),
            Some(other) => Err(self.wrong(field, "a positive integer", other)),
        }
    }

    fn str_list(&self, field: &str) -> Result<Vec<String>, Error> {
        match self.map.get(field) {
            None | Some(Yaml::Null) => Ok(Vec::new()),
            Some(Yaml::Sequence(items)) => items
                .iter()
                .map(|item| match item {
                    Yaml::String(s) => Ok(s.clone()),
                    other => Err(self.wrong(field, "a list of strings", other)),
                })
                .collect(),
            Some(other) => Err(self.wrong(field, "a list of strings", other)),
        }
    }

    fn file_type(&self) -> Result<FileType, Error> {
        Ok(match self.req_str("file_type")?.as_str() {
            "parquet" => FileType::Parquet,
            "csv" => FileType::Csv,
            "orc" => FileType::Orc,
            "json" => FileType::Json,
            other => {
                return Err(self.error(format!(
                    "`file_type` is {other:?}: expected parquet, csv, orc or json"
                )));
            }
        })
    }

    fn property_groups(&self) -> Result<Vec<PropertyGroup>, Error> {
        let items = match self.map.get("property_groups") {
            None | Some(Yaml::Null) => return Ok(Vec::new()),
            Some(Yaml::Sequence(items)) => items,
            Some(other) => return Err(self.wrong("property_groups", "a list", other)),
        };
        let mut groups = Vec::new();
        for item in items {
            let group = self.nested(item, "property_groups")?;
            let mut properties = Vec::new();
            match group.map.get("properties") {
                Some(Yaml::Sequence(props)) => {
                    for prop in props {
                        let p = group.nested(prop, "properties")?;
                        let data_type = p.req_str("data_type")?;
                        let cardinality = match p.opt_str("cardinality")?.as_deref() {
                            None | Some("single") => Cardinality::Single,
                            Some("list") => Cardinality::List,
                            Some("set") => Cardinality::Set,
                            Some(other) => {
                                return Err(p.error(format!(
                                    "`cardinality` is {other:?}: expected single, list or set"
                                )));
                            }
                        };
                        properties.push(Property {
                            name: p.req_str("name")?,
                            data_type: DataType::parse(&data_type).ok_or_else(|| {
                                p.error(format!("unknown `data_type` {data_type:?}"))
                            })?,
                            is_primary: p.opt_bool("is_primary")?.unwrap_or(false),
                            is_nullable: p.opt_bool("is_nullable")?.unwrap_or(true),
                            cardinality,
                        });
                    }
                }
                None => return Err(group.error("missing field `properties`".to_string())),
                Some(other) => return Err(group.wrong("properties", "a list", other)),
            }
            let prefix = group
                .opt_str("prefix")?
                .unwrap_or_else(|| default_group_prefix(&properties));
            groups.push(PropertyGroup {
                prefix: with_slash(prefix),
                file_type: group.file_type()?,
                properties,
            });
        }
        Ok(groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_types_parse_and_print_back() {
        for text in [
            "bool",
            "int32",
            "int64",
            "float",
            "double",
            "string",
            "date",
            "timestamp",
            "list<float>",
            "list<string>",
        ] {
            assert_eq!(DataType::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(DataType::parse("list<list<int32>>"), None);
        assert_eq!(DataType::parse("decimal"), None);
    }

    #[test]
    fn written_scalars_read_back_as_the_same_strings() {
        for text in [
            "person",
            "vertex/person/",
            "list<int64>",
            "true",
            "12",
            "a: b",
            "",
            "-x",
            "é \"q\" \\ \n",
        ] {
            let written = scalar(&Yaml::from(text));
            let read: Yaml = serde_yaml_ng::from_str(&written).unwrap();
            assert_eq!(read, Yaml::from(text), "{written}");
        }
        assert_eq!(scalar(&Yaml::from("vertex/person/")), "vertex/person/");
    }
}
