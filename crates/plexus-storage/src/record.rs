//! Redo records: what the WAL stores and what recovery replays.
//!
//! A committed transaction is one [`CommitRecord`]: its commit timestamp and its writes as a
//! list of [`WriteOp`]s with every id resolved (vertex and edge offsets were reserved while the
//! transaction ran, so replay reproduces them exactly). Catalog changes are separate
//! [`LogRecord::Catalog`] records written before the first commit that uses them.
//!
//! A bulk load's commit may also carry its new vertices and edges as columns ([`VertexBatch`],
//! [`EdgeBatch`]): those are installed only by `Storage::install_bulk`, whose durable form is
//! a checkpoint, and never reach the WAL (encoding a record that holds any is a bug,
//! asserted).
//!
//! The format is versioned by the record tag; adding an op means a new tag, never a changed one,
//! so logs stay replayable (read replicas will follow this same log).

use crate::catalog::CatalogOp;
use crate::codec::{DecodeResult, Decoder, Encoder};
use plexus_types::{
    EdgeId, EdgeTableId, LabelId, PropKeyId, Timestamp, Value, VertexId, VertexTableId,
};

#[derive(Clone, Debug, PartialEq)]
pub enum WriteOp {
    CreateVertex {
        id: VertexId,
        labels: Vec<LabelId>,
        props: Vec<(PropKeyId, Value)>,
    },
    DeleteVertex {
        id: VertexId,
    },
    /// `None` removes the property.
    SetVertexProp {
        id: VertexId,
        key: PropKeyId,
        value: Option<Value>,
    },
    /// The vertex's complete new set of extra labels.
    SetLabels {
        id: VertexId,
        labels: Vec<LabelId>,
    },
    CreateEdge {
        id: EdgeId,
        src: VertexId,
        dst: VertexId,
        props: Vec<(PropKeyId, Value)>,
    },
    DeleteEdge {
        id: EdgeId,
        src: VertexId,
        dst: VertexId,
    },
    SetEdgeProp {
        id: EdgeId,
        key: PropKeyId,
        value: Option<Value>,
    },
    /// Replication progress committed with the writes it produced: the commit applied the
    /// source's changes up to `position` of replication origin `name` (see `origin`).
    SetOrigin {
        name: String,
        position: u64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct CommitRecord {
    pub ts: Timestamp,
    pub ops: Vec<WriteOp>,
    /// A bulk load's new vertices, as columns (see the module documentation).
    pub vertex_batches: Vec<VertexBatch>,
    /// A bulk load's new edges, as columns (see the module documentation).
    pub edge_batches: Vec<EdgeBatch>,
}

impl CommitRecord {
    /// A record of `ops` alone.
    pub fn new(ts: Timestamp, ops: Vec<WriteOp>) -> CommitRecord {
        CommitRecord {
            ts,
            ops,
            vertex_batches: Vec::new(),
            edge_batches: Vec::new(),
        }
    }

    /// Whether the record carries staged batches (a bulk load's, installed only by
    /// `Storage::install_bulk`).
    pub fn has_batches(&self) -> bool {
        !self.vertex_batches.is_empty() || !self.edge_batches.is_empty()
    }
}

/// New vertices of one vertex table, as columns: vertex row `first + i` (for `i < count`)
/// carries the extra labels `labels` (sorted; beyond the table's own) — or `row_labels[i]`
/// when the batch has per-row label sets — and property `props[k].0` valued `props[k].1[i]`
/// (`Null`: absent). A bulk load stages its nodes this way: one value per property per node
/// until the install, where a node in a write set cost a map entry, a property vector and a
/// key claim.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexBatch {
    pub table: VertexTableId,
    pub first: u32,
    pub count: u32,
    pub labels: Vec<LabelId>,
    /// Empty, or one sorted label set per row (replacing `labels` for that row).
    pub row_labels: Vec<Vec<LabelId>>,
    pub props: Vec<(PropKeyId, Vec<Value>)>,
}

impl VertexBatch {
    /// Row `i`'s extra labels.
    pub fn labels_of(&self, i: usize) -> &[LabelId] {
        match self.row_labels.get(i) {
            Some(labels) => labels,
            None => &self.labels,
        }
    }

    /// Row `i`'s properties that are not `Null`, into `out` (cleared first).
    pub fn row_props(&self, i: usize, out: &mut Vec<(PropKeyId, Value)>) {
        row_props(&self.props, i, out)
    }
}

/// Row `i` of property columns, without its `Null`s, into `out` (cleared first).
fn row_props(columns: &[(PropKeyId, Vec<Value>)], i: usize, out: &mut Vec<(PropKeyId, Value)>) {
    out.clear();
    out.extend(
        (columns.iter())
            .filter(|(_, column)| !matches!(column[i], Value::Null))
            .map(|(key, column)| (*key, column[i].clone())),
    );
}

/// New edges of one edge table, as columns: edge row `first + i` goes from offset `src[i]`
/// of vertex table `src_table` to offset `dst[i]` of `dst_table` (an edge table joins one
/// pair of vertex tables), with property `props[k].0` valued `props[k].1[i]` (`Null`:
/// absent). A bulk load stages its edges this way — 8 bytes per property-less edge until the
/// install, where an edge as a [`WriteOp::CreateEdge`] in a write set costs twenty times
/// that.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeBatch {
    pub table: EdgeTableId,
    pub first: u32,
    pub src_table: VertexTableId,
    pub dst_table: VertexTableId,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub props: Vec<(PropKeyId, Vec<Value>)>,
}

impl EdgeBatch {
    /// Every endpoint, as vertex ids (sources, then destinations).
    pub fn endpoints(&self) -> impl Iterator<Item = VertexId> + '_ {
        let src = (self.src.iter()).map(|&o| VertexId::new(self.src_table, o));
        src.chain((self.dst.iter()).map(|&o| VertexId::new(self.dst_table, o)))
    }

    pub fn len(&self) -> usize {
        self.src.len()
    }

    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }

    /// Row `i`'s properties that are not `Null`, into `out` (cleared first).
    pub fn row_props(&self, i: usize, out: &mut Vec<(PropKeyId, Value)>) {
        row_props(&self.props, i, out)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum LogRecord {
    Catalog(CatalogOp),
    Commit(CommitRecord),
}

const TAG_CATALOG: u8 = 1;
const TAG_COMMIT: u8 = 2;

fn encode_props(enc: &mut Encoder, props: &[(PropKeyId, Value)]) {
    enc.len(props.len());
    for (key, value) in props {
        enc.u32(*key);
        enc.value(value);
    }
}

fn decode_props(dec: &mut Decoder) -> DecodeResult<Vec<(PropKeyId, Value)>> {
    let n = dec.len()?;
    (0..n).map(|_| Ok((dec.u32()?, dec.value()?))).collect()
}

fn encode_opt(enc: &mut Encoder, value: &Option<Value>) {
    match value {
        None => enc.u8(0),
        Some(v) => {
            enc.u8(1);
            enc.value(v);
        }
    }
}

fn decode_opt(dec: &mut Decoder) -> DecodeResult<Option<Value>> {
    Ok(match dec.u8()? {
        0 => None,
        _ => Some(dec.value()?),
    })
}

fn encode_edge(enc: &mut Encoder, id: EdgeId) {
    enc.u32(id.table);
    enc.u32(id.offset);
}

fn decode_edge(dec: &mut Decoder) -> DecodeResult<EdgeId> {
    Ok(EdgeId::new(dec.u32()?, dec.u32()?))
}

impl WriteOp {
    pub fn encode(&self, enc: &mut Encoder) {
        match self {
            WriteOp::CreateVertex { id, labels, props } => {
                enc.u8(0);
                enc.vertex(*id);
                enc.u32s(labels);
                encode_props(enc, props);
            }
            WriteOp::DeleteVertex { id } => {
                enc.u8(1);
                enc.vertex(*id);
            }
            WriteOp::SetVertexProp { id, key, value } => {
                enc.u8(2);
                enc.vertex(*id);
                enc.u32(*key);
                encode_opt(enc, value);
            }
            WriteOp::SetLabels { id, labels } => {
                enc.u8(3);
                enc.vertex(*id);
                enc.u32s(labels);
            }
            WriteOp::CreateEdge {
                id,
                src,
                dst,
                props,
            } => {
                enc.u8(4);
                encode_edge(enc, *id);
                enc.vertex(*src);
                enc.vertex(*dst);
                encode_props(enc, props);
            }
            WriteOp::DeleteEdge { id, src, dst } => {
                enc.u8(5);
                encode_edge(enc, *id);
                enc.vertex(*src);
                enc.vertex(*dst);
            }
            WriteOp::SetEdgeProp { id, key, value } => {
                enc.u8(6);
                encode_edge(enc, *id);
                enc.u32(*key);
                encode_opt(enc, value);
            }
            WriteOp::SetOrigin { name, position } => {
                enc.u8(7);
                enc.str(name);
                enc.u64(*position);
            }
        }
    }

    pub fn decode(dec: &mut Decoder) -> DecodeResult<WriteOp> {
        Ok(match dec.u8()? {
            0 => WriteOp::CreateVertex {
                id: dec.vertex()?,
                labels: dec.u32s()?,
                props: decode_props(dec)?,
            },
            1 => WriteOp::DeleteVertex { id: dec.vertex()? },
            2 => WriteOp::SetVertexProp {
                id: dec.vertex()?,
                key: dec.u32()?,
                value: decode_opt(dec)?,
            },
            3 => WriteOp::SetLabels {
                id: dec.vertex()?,
                labels: dec.u32s()?,
            },
            4 => WriteOp::CreateEdge {
                id: decode_edge(dec)?,
                src: dec.vertex()?,
                dst: dec.vertex()?,
                props: decode_props(dec)?,
            },
            5 => WriteOp::DeleteEdge {
                id: decode_edge(dec)?,
                src: dec.vertex()?,
                dst: dec.vertex()?,
            },
            6 => WriteOp::SetEdgeProp {
                id: decode_edge(dec)?,
                key: dec.u32()?,
                value: decode_opt(dec)?,
            },
            7 => WriteOp::SetOrigin {
                name: dec.str()?.to_owned(),
                position: dec.u64()?,
            },
            tag => return Err(dec.error(format!("unknown write op tag {tag}"))),
        })
    }
}

impl LogRecord {
    pub fn encode(&self, enc: &mut Encoder) {
        match self {
            LogRecord::Catalog(op) => {
                enc.u8(TAG_CATALOG);
                op.encode(enc);
            }
            LogRecord::Commit(commit) => {
                assert!(
                    !commit.has_batches(),
                    "a commit with staged batches is installed only by install_bulk"
                );
                enc.u8(TAG_COMMIT);
                enc.u64(commit.ts);
                enc.len(commit.ops.len());
                commit.ops.iter().for_each(|op| op.encode(enc));
            }
        }
    }

    pub fn decode(dec: &mut Decoder) -> DecodeResult<LogRecord> {
        let record = match dec.u8()? {
            TAG_CATALOG => LogRecord::Catalog(CatalogOp::decode(dec)?),
            TAG_COMMIT => {
                let ts = dec.u64()?;
                let n = dec.len()?;
                let ops: DecodeResult<Vec<WriteOp>> =
                    (0..n).map(|_| WriteOp::decode(dec)).collect();
                LogRecord::Commit(CommitRecord::new(ts, ops?))
            }
            tag => return Err(dec.error(format!("unknown log record tag {tag}"))),
        };
        if !dec.is_empty() {
            return Err(dec.error("trailing bytes after log record"));
        }
        Ok(record)
    }
}
