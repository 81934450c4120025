//! Identifiers.
//!
//! Vertices live in vertex tables and are addressed by a dense offset within their table;
//! edges likewise live in edge tables (one per source table, edge type, destination table).
//! Offsets are 32 bits: adjacency arrays store a neighbour as a bare `u32` offset into the
//! neighbour's table, which is what makes them as compact as a static CSR. A table therefore
//! holds at most `u32::MAX` rows; the storage layer checks this limit and reports it as an error.

use std::fmt;

/// A logical timestamp from the timestamp oracle. `0` is "before everything".
pub type Timestamp = u64;

/// Catalog token ids. They are dense and never reused.
pub type LabelId = u32;
pub type PropKeyId = u32;
pub type EdgeTypeId = u32;
pub type VertexTableId = u32;
pub type EdgeTableId = u32;

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct VertexId {
    pub table: VertexTableId,
    pub offset: u32,
}

impl VertexId {
    pub fn new(table: VertexTableId, offset: u32) -> Self {
        Self { table, offset }
    }
}

/// The element id every surface shows for a vertex — `elementId(n)` in Cypher, the Bolt
/// `element_id` the Neo4j drivers see, `Node.element_id` in Python: `v<table>:<offset>`. It is
/// stable for the life of the vertex, across restarts (ids are durable).
impl fmt::Display for VertexId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}:{}", self.table, self.offset)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct EdgeId {
    pub table: EdgeTableId,
    pub offset: u32,
}

impl EdgeId {
    pub fn new(table: EdgeTableId, offset: u32) -> Self {
        Self { table, offset }
    }
}

/// The element id of a relationship on every surface (see `VertexId`'s): `e<table>:<offset>`.
impl fmt::Display for EdgeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}:{}", self.table, self.offset)
    }
}

/// Which adjacency of a vertex to read: its out-edges, its in-edges, or both.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Direction {
    Out,
    In,
    Both,
}
