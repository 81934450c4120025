//! A GraphAr graph mounted for Cypher: `ATTACH GRAPHAR '<graph.yml>' AS name`.
//!
//! WHAT
//! ====
//! [`Mounted`] is an [`AttachedGraph`] seen as Plexus's [`ExternalGraph`]: a read-only
//! transaction over it (`USE name MATCH …`) answers label scans, properties, neighbours and
//! edges from the GraphAr files, on demand, through the attached graph's bounded cache. The
//! analytics kernels read its edge lists ([`ExternalGraph::edge_list`]).
//!
//! IDS
//! ===
//! Vertex table `t` is the graph's `t`-th vertex type; a vertex's offset is its GraphAr
//! index. Edge table `t` is the `t`-th edge triple; an edge's offset is its row in the
//! triple's *numbering list* — the adjacency list ordered by source if there is one, else the
//! one ordered by destination — counted across parts (`part_bases`). An edge reached from the
//! other end (through the other ordered list, or through the reverse index below) is given the
//! same number: its source's rows in the numbering list are read and the rows pointing back
//! are taken in order, so parallel edges keep distinct ids and relationship uniqueness holds.
//!
//! READS AND THEIR COST
//! ====================
//! - a vertex property: the property group's chunk is decoded once (all its columns) and
//!   cached; a scan that reads the property of every vertex decodes every chunk once;
//! - labels: the label chunk decoded once per chunk; label scans use
//!   [`AttachedGraph::filter_labels`] (one evaluation per RLE run);
//! - neighbours along the numbering list: its offsets and the pages holding the rows
//!   ([`AttachedGraph::neighbor_rows`]); against it, through the other ordered list if the
//!   graph has one, else through a reverse index (destination → edge rows) built from the
//!   whole list on first use and cached like the rest — the cost of a graph written with one
//!   ordered list only;
//! - an edge's endpoints: a binary search in its part's offsets and one cached index column.
//!
//! Memory stays within the cache budget plus what one call decodes; an entry larger than the
//! budget is used for its call and dropped.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use plexus::{
    Direction, EdgeId, ExternalEdgeTable, ExternalGraph, ExternalVertexTable, Value, VertexId,
    VertexTableId,
};

use crate::attach::{self, AttachedGraph, Entry, LabelFilter};
use crate::meta::{AdjList, AdjListType, DataType, EdgeInfo, FileType, PropertyGroup, VertexInfo};
use crate::read::{adj_dir, expect_rows, property_type, read_chunk, read_count, vertex_dir};
use crate::{DST_INDEX, Error, SRC_INDEX};
use rayon::prelude::*;

/// A decoded chunk: one column of values per property of its group.
type Columns = Arc<Vec<Vec<Value>>>;

/// A reverse index of an adjacency list: (offsets per far-end vertex, edge rows).
type ReverseIndex = Arc<(Vec<u64>, Vec<u64>)>;

/// A GraphAr graph attached under a name (see the module docs).
pub struct Mounted {
    name: String,
    graph: AttachedGraph,
    vertex_tables: Vec<ExternalVertexTable>,
    edge_tables: Vec<ExternalEdgeTable>,
    edges: Vec<EdgeMeta>,
}

/// How one edge table's edges are numbered.
struct EdgeMeta {
    /// The numbering list (an index into the triple's `adj_lists`).
    numbering: usize,
    /// The other ordered list, if the graph has one.
    other: Option<usize>,
    /// The numbering list's first edge of each part, then the total.
    part_bases: Vec<u64>,
}

impl Mounted {
    /// Opens the graph file `path` under `name` with a cache of `cache_budget_bytes`: reads
    /// the metadata and the vertex and edge counts, nothing else.
    pub fn open(name: &str, path: &Path, cache_budget_bytes: usize) -> Result<Mounted, Error> {
        let graph = AttachedGraph::open(path, cache_budget_bytes)?;
        let info = graph.graph();
        let mut vertex_tables = Vec::with_capacity(info.vertices.len());
        for v in &info.vertices {
            let count = graph.vertex_count(&v.type_name)?;
            vertex_tables.push(ExternalVertexTable {
                name: v.type_name.clone(),
                labels: v.labels.clone(),
                count: within_u32(&v.file, count, "vertices")?,
            });
        }
        let type_index = |e: &EdgeInfo, name: &str| {
            (info.vertices.iter().position(|v| v.type_name == name)).ok_or_else(|| {
                Error::file(
                    &e.file,
                    format!("the vertex type {name:?} is not in the graph"),
                )
            })
        };
        let mut edge_tables = Vec::with_capacity(info.edges.len());
        let mut edges = Vec::with_capacity(info.edges.len());
        for e in &info.edges {
            let (src, dst) = (type_index(e, &e.src_type)?, type_index(e, &e.dst_type)?);
            let find = |kind| e.adj_lists.iter().position(|a| a.kind == kind);
            let (by_source, by_dest) = (
                find(AdjListType::OrderedBySource),
                find(AdjListType::OrderedByDest),
            );
            let (numbering, other) = match (by_source, by_dest) {
                (Some(s), d) => (s, d),
                (None, Some(d)) => (d, None),
                (None, None) => {
                    return Err(Error::file(
                        &e.file,
                        "only unordered adjacency lists: attaching needs an ordered list \
                         (its offsets find a vertex's edges)",
                    ));
                }
            };
            let adj = &e.adj_lists[numbering];
            let aligned = if adj.kind.by_source() { src } else { dst };
            let part_size = part_size(e, adj);
            let parts = u64::from(vertex_tables[aligned].count).div_ceil(part_size);
            let dir = adj_dir(info, e, adj);
            let mut part_bases = vec![0u64];
            for part in 0..parts {
                let count = read_count(&dir.join(format!("edge_count{part}")))?;
                part_bases.push(part_bases[part as usize] + count);
            }
            let total = part_bases.last().copied().unwrap_or(0);
            edge_tables.push(ExternalEdgeTable {
                edge_type: e.edge_type.clone(),
                src: src as VertexTableId,
                dst: dst as VertexTableId,
                count: within_u32(&e.file, total, "edges")?,
            });
            edges.push(EdgeMeta {
                numbering,
                other,
                part_bases,
            });
        }
        Ok(Mounted {
            name: name.to_string(),
            graph,
            vertex_tables,
            edge_tables,
            edges,
        })
    }

    fn vertex_info(&self, table: VertexTableId) -> &VertexInfo {
        &self.graph.graph().vertices[table as usize]
    }

    fn edge_info(&self, table: u32) -> &EdgeInfo {
        &self.graph.graph().edges[table as usize]
    }

    /// Property group `group`'s chunk holding vertex `v`, decoded, and `v`'s row in it.
    fn property_chunk(&self, v: VertexId, group: usize) -> Result<(Columns, usize), Error> {
        let info = self.vertex_info(v.table);
        let group = &info.property_groups[group];
        let chunk = u64::from(v.offset) / info.chunk_size;
        let row = (u64::from(v.offset) % info.chunk_size) as usize;
        let path = vertex_dir(self.graph.graph(), info)
            .join(&group.prefix)
            .join(format!("chunk{chunk}"));
        let wanted: Vec<(&str, DataType)> = (group.properties.iter())
            .map(|p| (p.name.as_str(), property_type(p)))
            .collect();
        let values = self.decoded(&path, group.file_type, &wanted)?;
        Ok((values, row))
    }

    /// The columns `wanted` of the chunk at `path` as values, from the cache or decoded.
    fn decoded(
        &self,
        path: &Path,
        file_type: FileType,
        wanted: &[(&str, DataType)],
    ) -> Result<Columns, Error> {
        let entry = self.graph.cached(path.to_path_buf(), || {
            let batch = read_chunk(path, file_type, wanted)?;
            let columns = plexus::bulk::batch_columns(&batch)
                .map_err(|e| Error::file(path, e.to_string()))?;
            let columns: Vec<Vec<Value>> = columns.into_iter().map(|(_, c)| c).collect();
            let bytes = columns.iter().map(|c| c.len() * 32).sum::<usize>();
            Ok((Entry::Values(Arc::new(columns)), bytes))
        })?;
        match entry {
            Entry::Values(values) => Ok(values),
            _ => Err(Error::file(path, "cached as something else")),
        }
    }

    /// One index column (`SRC_INDEX` or `DST_INDEX`) of an adjacency chunk, cached.
    fn index_column(
        &self,
        path: &Path,
        adj: &AdjList,
        column: &str,
    ) -> Result<Arc<Vec<u64>>, Error> {
        let key = PathBuf::from(format!("{}#{column}", path.display()));
        let entry = self.graph.cached(key, || {
            let batch = read_chunk(path, adj.file_type, &[(column, DataType::Int64)])?;
            let values = attach::int64_column(path, batch.column(0), column)?;
            let bytes = values.len() * 8;
            Ok((Entry::Indices(Arc::new(values)), bytes))
        })?;
        match entry {
            Entry::Indices(values) => Ok(values),
            _ => Err(Error::file(path, "cached as something else")),
        }
    }

    /// Both index columns of every chunk of edge table `table`'s numbering list, in row
    /// order (chunks decoded in parallel).
    fn whole_list(&self, table: u32) -> Result<(Vec<u32>, Vec<u32>), Error> {
        let e = self.edge_info(table);
        let meta = &self.edges[table as usize];
        let adj = &e.adj_lists[meta.numbering];
        let dir = adj_dir(self.graph.graph(), e, adj);
        let chunks = self.numbering_chunks(table);
        let wanted = [(SRC_INDEX, DataType::Int64), (DST_INDEX, DataType::Int64)];
        let decoded: Vec<(Vec<u32>, Vec<u32>)> = chunks
            .into_par_iter()
            .map(|(part, chunk, rows)| {
                let path = dir.join(format!("adj_list/part{part}/chunk{chunk}"));
                let batch = read_chunk(&path, adj.file_type, &wanted)?;
                expect_rows(&path, &batch, rows)?;
                let column = |i: usize| -> Result<Vec<u32>, Error> {
                    let values = attach::int64_column(&path, batch.column(i), wanted[i].0)?;
                    Ok(values.into_iter().map(|v| v as u32).collect())
                };
                Ok((column(0)?, column(1)?))
            })
            .collect::<Result<_, Error>>()?;
        let total = meta.part_bases.last().copied().unwrap_or(0) as usize;
        let (mut src, mut dst) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for (s, d) in decoded {
            src.extend(s);
            dst.extend(d);
        }
        Ok((src, dst))
    }

    /// Every chunk of `table`'s numbering list: (part, chunk, rows in it), in row order.
    fn numbering_chunks(&self, table: u32) -> Vec<(usize, u64, usize)> {
        let chunk_size = self.edge_info(table).chunk_size;
        let bases = &self.edges[table as usize].part_bases;
        (bases.windows(2).enumerate())
            .flat_map(|(part, bounds)| {
                let count = bounds[1] - bounds[0];
                (0..count.div_ceil(chunk_size)).map(move |chunk| {
                    let rows = chunk_size.min(count - chunk * chunk_size) as usize;
                    (part, chunk, rows)
                })
            })
            .collect()
    }

    /// Property `name` of every edge of `table` in numbering order (its group's chunks of the
    /// numbering list decoded in parallel); all absent if no group declares it.
    fn whole_property(&self, table: u32, name: &str) -> Result<Vec<Option<Value>>, Error> {
        let e = self.edge_info(table);
        let meta = &self.edges[table as usize];
        let total = meta.part_bases.last().copied().unwrap_or(0) as usize;
        let found = (e.property_groups.iter())
            .find_map(|g| Some((g, g.properties.iter().find(|p| p.name == name)?)));
        let Some((group, property)) = found else {
            return Ok(vec![None; total]);
        };
        let dir = adj_dir(self.graph.graph(), e, &e.adj_lists[meta.numbering]).join(&group.prefix);
        let chunks = self.numbering_chunks(table);
        let wanted = [(name, property.data_type.clone())];
        let decoded: Vec<Vec<Value>> = chunks
            .into_par_iter()
            .map(|(part, chunk, rows)| {
                let path = dir.join(format!("part{part}/chunk{chunk}"));
                let batch = read_chunk(&path, group.file_type, &wanted)?;
                expect_rows(&path, &batch, rows)?;
                let mut columns = plexus::bulk::batch_columns(&batch)
                    .map_err(|e| Error::file(&path, e.to_string()))?;
                Ok(columns.pop().map(|(_, values)| values).unwrap_or_default())
            })
            .collect::<Result<_, Error>>()?;
        let mut values = Vec::with_capacity(total);
        for chunk in decoded {
            values.extend(chunk.iter().map(present));
        }
        Ok(values)
    }

    /// The part of the numbering list holding edge `offset`, and the edge's row in it.
    fn locate(&self, table: u32, offset: u32) -> (usize, u64) {
        let bases = &self.edges[table as usize].part_bases;
        let offset = u64::from(offset);
        let part = bases.partition_point(|&b| b <= offset) - 1;
        (part, offset - bases[part])
    }

    /// The numbering-list rows of the edges `from → to` of edge table `table` where `from` is
    /// the list's aligned endpoint, as edge offsets.
    fn rows_between(&self, table: u32, from: u64, to: u64) -> Result<Vec<u32>, Error> {
        let e = self.edge_info(table);
        let meta = &self.edges[table as usize];
        let adj = &e.adj_lists[meta.numbering];
        let direction = if adj.kind.by_source() {
            attach::Direction::Out
        } else {
            attach::Direction::In
        };
        let part = (from / part_size(e, adj)) as usize;
        let (begin, others) = self.graph.neighbor_rows(e, direction, from)?;
        let base = meta.part_bases[part] + begin;
        Ok((others.iter().enumerate())
            .filter(|(_, n)| **n == to)
            .map(|(i, _)| (base + i as u64) as u32)
            .collect())
    }

    /// The reverse of the numbering list of `table`: for each vertex at the list's other end,
    /// its edges' offsets (CSR style: `offsets` into `edges`), cached.
    fn reverse_index(&self, table: u32) -> Result<ReverseIndex, Error> {
        let e = self.edge_info(table);
        let adj = &e.adj_lists[self.edges[table as usize].numbering];
        let key = adj_dir(self.graph.graph(), e, adj).join("#reverse");
        let ends = &self.edge_tables[table as usize];
        let far_table = if adj.kind.by_source() {
            ends.dst
        } else {
            ends.src
        };
        let n = self.vertex_tables[far_table as usize].count as usize;
        let entry = self.graph.cached(key.clone(), || {
            let (src, dst) = self.whole_list(table)?;
            let far = if adj.kind.by_source() { dst } else { src };
            let mut offsets = vec![0u64; n + 1];
            for &o in &far {
                offsets[o as usize + 1] += 1;
            }
            for i in 0..n {
                offsets[i + 1] += offsets[i];
            }
            let mut cursor = offsets.clone();
            let mut edges = vec![0u64; far.len()];
            for (row, &o) in far.iter().enumerate() {
                edges[cursor[o as usize] as usize] = row as u64;
                cursor[o as usize] += 1;
            }
            let bytes = (offsets.len() + edges.len()) * 8;
            Ok((Entry::Csr(Arc::new((offsets, edges))), bytes))
        })?;
        match entry {
            Entry::Csr(csr) => Ok(csr),
            _ => Err(Error::file(&key, "cached as something else")),
        }
    }

    /// The edges of vertex `index` of table `table` reached against the numbering list, as
    /// (edge offset, index of the vertex at the other end).
    fn against_numbering(&self, table: u32, index: u64) -> Result<Vec<(u32, u64)>, Error> {
        let e = self.edge_info(table);
        let meta = &self.edges[table as usize];
        let numbering = &e.adj_lists[meta.numbering];
        let reverse = if numbering.kind.by_source() {
            attach::Direction::In
        } else {
            attach::Direction::Out
        };
        if meta.other.is_some() {
            // The other ordered list finds the far ends; their rows in the numbering list
            // give the ids (each far end once, its rows pointing back taken in order).
            let (_, far_ends) = self.graph.neighbor_rows(e, reverse, index)?;
            let mut found = Vec::with_capacity(far_ends.len());
            let mut distinct = far_ends.clone();
            distinct.sort_unstable();
            distinct.dedup();
            for far in distinct {
                for offset in self.rows_between(table, far, index)? {
                    found.push((offset, far));
                }
            }
            return Ok(found);
        }
        let reverse = self.reverse_index(table)?;
        let (offsets, edges) = (&reverse.0, &reverse.1);
        if index as usize + 1 >= offsets.len() {
            return Ok(Vec::new());
        }
        let range = offsets[index as usize] as usize..offsets[index as usize + 1] as usize;
        let mut found = Vec::with_capacity(range.len());
        for &row in &edges[range] {
            let (from, _) = self.endpoints_in_numbering(table, row as u32)?;
            found.push((row as u32, from));
        }
        Ok(found)
    }

    /// (aligned end, other end) of edge `offset` of `table` in its numbering list.
    fn endpoints_in_numbering(&self, table: u32, offset: u32) -> Result<(u64, u64), Error> {
        let e = self.edge_info(table);
        let meta = &self.edges[table as usize];
        let adj = &e.adj_lists[meta.numbering];
        let dir = adj_dir(self.graph.graph(), e, adj);
        let (part, row) = self.locate(table, offset);
        let offsets = self.graph.offsets(&dir, adj, part as u64)?;
        let local = offsets.partition_point(|&o| o as u64 <= row) - 1;
        let aligned = part as u64 * part_size(e, adj) + local as u64;
        let chunk = row / e.chunk_size;
        let path = dir.join(format!("adj_list/part{part}/chunk{chunk}"));
        let column = if adj.kind.by_source() {
            DST_INDEX
        } else {
            SRC_INDEX
        };
        let others = self.index_column(&path, adj, column)?;
        let other = (others.get((row % e.chunk_size) as usize).copied())
            .ok_or_else(|| Error::file(&path, format!("no row {row}")))?;
        Ok((aligned, other))
    }

    /// Edge property group `group`'s chunk holding edge `offset` of `table`, and its row.
    fn edge_chunk(&self, table: u32, offset: u32, group: usize) -> Result<(Columns, usize), Error> {
        let e = self.edge_info(table);
        let meta = &self.edges[table as usize];
        let adj = &e.adj_lists[meta.numbering];
        let group = &e.property_groups[group];
        let (part, row) = self.locate(table, offset);
        let path = adj_dir(self.graph.graph(), e, adj)
            .join(&group.prefix)
            .join(format!("part{part}/chunk{}", row / e.chunk_size));
        let wanted: Vec<(&str, DataType)> = (group.properties.iter())
            .map(|p| (p.name.as_str(), p.data_type.clone()))
            .collect();
        let values = self.decoded(&path, group.file_type, &wanted)?;
        Ok((values, (row % e.chunk_size) as usize))
    }
}

impl ExternalGraph for Mounted {
    fn name(&self) -> &str {
        &self.name
    }

    fn vertex_tables(&self) -> &[ExternalVertexTable] {
        &self.vertex_tables
    }

    fn edge_tables(&self) -> &[ExternalEdgeTable] {
        &self.edge_tables
    }

    fn property_keys(&self) -> Vec<String> {
        let info = self.graph.graph();
        let vertex_groups = info.vertices.iter().flat_map(|v| &v.property_groups);
        let edge_groups = info.edges.iter().flat_map(|e| &e.property_groups);
        (vertex_groups.chain(edge_groups))
            .flat_map(|g| g.properties.iter().map(|p| p.name.clone()))
            .collect()
    }

    fn has_extra_label(&self, v: VertexId, label: &str) -> plexus::Result<bool> {
        let info = self.vertex_info(v.table);
        let Some(which) = info.labels.iter().position(|l| l == label) else {
            return Ok(false);
        };
        let chunk = u64::from(v.offset) / info.chunk_size;
        let path = vertex_dir(self.graph.graph(), info).join(format!("labels/chunk{chunk}"));
        let entry = self
            .graph
            .cached(path.clone(), || {
                let wanted: Vec<(&str, DataType)> = (info.labels.iter())
                    .map(|l| (l.as_str(), DataType::Bool))
                    .collect();
                let batch = read_chunk(&path, FileType::Parquet, &wanted)?;
                let flags = attach::flag_columns(&batch);
                let bytes = flags.iter().map(Vec::len).sum();
                Ok((Entry::Flags(Arc::new(flags)), bytes))
            })
            .map_err(storage_error)?;
        let row = (u64::from(v.offset) % info.chunk_size) as usize;
        match entry {
            Entry::Flags(flags) => Ok(flags[which].get(row).copied().unwrap_or(false)),
            _ => Err(storage_error(Error::file(
                &path,
                "cached as something else",
            ))),
        }
    }

    fn scan_extra_label(&self, table: VertexTableId, label: &str) -> plexus::Result<Vec<VertexId>> {
        let info = self.vertex_info(table);
        let filter = LabelFilter::Label(label.to_string());
        let ranges: Vec<Range<u64>> =
            (self.graph.filter_labels(&info.type_name, &filter)).map_err(storage_error)?;
        Ok(ranges
            .into_iter()
            .flatten()
            .map(|i| VertexId::new(table, i as u32))
            .collect())
    }

    fn vertex_property(&self, v: VertexId, name: &str) -> plexus::Result<Option<Value>> {
        let groups = &self.vertex_info(v.table).property_groups;
        property(groups, name, |g| self.property_chunk(v, g))
    }

    fn vertex_properties(&self, v: VertexId) -> plexus::Result<Vec<(String, Value)>> {
        let groups = &self.vertex_info(v.table).property_groups;
        properties(groups, |g| self.property_chunk(v, g))
    }

    fn neighbors_into(
        &self,
        v: VertexId,
        tables: &[u32],
        dir: Direction,
        found: &mut Vec<(EdgeId, VertexId)>,
    ) -> plexus::Result<()> {
        let index = u64::from(v.offset);
        for &table in tables {
            let e = self.edge_info(table);
            let meta = &self.edges[table as usize];
            let ends = &self.edge_tables[table as usize];
            let far_table = if dir == Direction::Out {
                ends.dst
            } else {
                ends.src
            };
            let along = e.adj_lists[meta.numbering].kind.by_source() == (dir == Direction::Out);
            if along {
                let (part, begin, others) = {
                    let adj = &e.adj_lists[meta.numbering];
                    let direction = if dir == Direction::Out {
                        attach::Direction::Out
                    } else {
                        attach::Direction::In
                    };
                    let (begin, others) = self
                        .graph
                        .neighbor_rows(e, direction, index)
                        .map_err(storage_error)?;
                    ((index / part_size(e, adj)) as usize, begin, others)
                };
                let base = meta.part_bases[part] + begin;
                found.extend(others.into_iter().enumerate().map(|(i, far)| {
                    (
                        EdgeId::new(table, (base + i as u64) as u32),
                        VertexId::new(far_table, far as u32),
                    )
                }));
            } else {
                let edges = self
                    .against_numbering(table, index)
                    .map_err(storage_error)?;
                found.extend(edges.into_iter().map(|(offset, far)| {
                    (
                        EdgeId::new(table, offset),
                        VertexId::new(far_table, far as u32),
                    )
                }));
            }
        }
        Ok(())
    }

    fn edge_endpoints(&self, e: EdgeId) -> plexus::Result<(VertexId, VertexId)> {
        let (aligned, other) = self
            .endpoints_in_numbering(e.table, e.offset)
            .map_err(storage_error)?;
        let info = self.edge_info(e.table);
        let ends = &self.edge_tables[e.table as usize];
        let by_source = info.adj_lists[self.edges[e.table as usize].numbering]
            .kind
            .by_source();
        let (src, dst) = if by_source {
            (aligned, other)
        } else {
            (other, aligned)
        };
        Ok((
            VertexId::new(ends.src, src as u32),
            VertexId::new(ends.dst, dst as u32),
        ))
    }

    fn edge_property(&self, e: EdgeId, name: &str) -> plexus::Result<Option<Value>> {
        let groups = &self.edge_info(e.table).property_groups;
        property(groups, name, |g| self.edge_chunk(e.table, e.offset, g))
    }

    fn edge_properties(&self, e: EdgeId) -> plexus::Result<Vec<(String, Value)>> {
        let groups = &self.edge_info(e.table).property_groups;
        properties(groups, |g| self.edge_chunk(e.table, e.offset, g))
    }

    fn edge_values(&self, table: u32, name: &str) -> plexus::Result<Vec<Option<Value>>> {
        self.whole_property(table, name).map_err(storage_error)
    }

    fn edge_list(&self, table: u32) -> plexus::Result<(Vec<u32>, Vec<u32>)> {
        self.whole_list(table).map_err(storage_error)
    }
}

/// Property `name` of an element whose group `g`'s chunk (and row in it) `chunk` gives.
fn property(
    groups: &[PropertyGroup],
    name: &str,
    chunk: impl Fn(usize) -> Result<(Columns, usize), Error>,
) -> plexus::Result<Option<Value>> {
    for (g, group) in groups.iter().enumerate() {
        if let Some(p) = group.properties.iter().position(|p| p.name == name) {
            let (values, row) = chunk(g).map_err(storage_error)?;
            return Ok(present(&values[p][row]));
        }
    }
    Ok(None)
}

/// Every present property of such an element, in declaration order.
fn properties(
    groups: &[PropertyGroup],
    chunk: impl Fn(usize) -> Result<(Columns, usize), Error>,
) -> plexus::Result<Vec<(String, Value)>> {
    let mut found = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let (values, row) = chunk(g).map_err(storage_error)?;
        for (p, column) in group.properties.iter().zip(values.iter()) {
            if let Some(value) = present(&column[row]) {
                found.push((p.name.clone(), value));
            }
        }
    }
    Ok(found)
}

/// The vertices of an aligning type per part of list `adj`.
fn part_size(e: &EdgeInfo, adj: &AdjList) -> u64 {
    if adj.kind.by_source() {
        e.src_chunk_size
    } else {
        e.dst_chunk_size
    }
}

/// `None` for a null (an absent property).
fn present(value: &Value) -> Option<Value> {
    (!matches!(value, Value::Null)).then(|| value.clone())
}

fn within_u32(file: &Path, count: u64, what: &str) -> Result<u32, Error> {
    u32::try_from(count).map_err(|_| {
        Error::file(
            file,
            format!("{count} {what}: an attached graph holds at most 2^32 - 1 per type"),
        )
    })
}

/// A GraphAr failure as the engine reports a storage read failure (naming the file).
fn storage_error(e: Error) -> plexus::Error {
    plexus::Error::InvalidArgument(e.to_string())
}
