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

    /// The integer `id(n)` gives in Cypher: the table in the high 32 bits, the offset in the
    /// low ones.
    pub fn cypher_id(self) -> i64 {
        (i64::from(self.table) << 32) | i64::from(self.offset)
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

    /// The integer `id(r)` gives in Cypher (as [`VertexId::cypher_id`]).
    pub fn cypher_id(self) -> i64 {
        (i64::from(self.table) << 32) | i64::from(self.offset)
    }
}

/// Parses a vertex's element id (`v<table>:<offset>`, decimal digits only, each part within
/// `u32`): the inverse of `Display`. Anything else — an `e…` id, signs, spaces — is an error.
impl std::str::FromStr for VertexId {
    type Err = ();
    fn from_str(text: &str) -> Result<Self, ()> {
        parse_element_id(text, 'v').map(|(table, offset)| VertexId::new(table, offset))
    }
}

/// Parses a relationship's element id (`e<table>:<offset>`), the inverse of `Display`.
impl std::str::FromStr for EdgeId {
    type Err = ();
    fn from_str(text: &str) -> Result<Self, ()> {
        parse_element_id(text, 'e').map(|(table, offset)| EdgeId::new(table, offset))
    }
}

fn parse_element_id(text: &str, kind: char) -> Result<(u32, u32), ()> {
    let (table, offset) = text
        .strip_prefix(kind)
        .ok_or(())?
        .split_once(':')
        .ok_or(())?;
    let part = |digits: &str| {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(());
        }
        digits.parse::<u32>().map_err(drop)
    };
    Ok((part(table)?, part(offset)?))
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

impl Direction {
    /// The same adjacency walked from the other end: `Out` ↔ `In`, `Both` stays.
    pub fn reversed(self) -> Direction {
        match self {
            Direction::Out => Direction::In,
            Direction::In => Direction::Out,
            Direction::Both => Direction::Both,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_ids_parse_back_and_nothing_else_does() {
        let v = VertexId::new(3, 17);
        let e = EdgeId::new(1, u32::MAX);
        assert_eq!(v.to_string().parse::<VertexId>(), Ok(v));
        assert_eq!(e.to_string().parse::<EdgeId>(), Ok(e));
        for bad in [
            "e3:17",
            "v3",
            "v:1",
            "v3:",
            "v+3:1",
            "v 3:1",
            "v3:4294967296",
            "V3:1",
            "",
        ] {
            assert_eq!(bad.parse::<VertexId>(), Err(()), "{bad}");
        }
        assert_eq!("v1:4".parse::<EdgeId>(), Err(()));
    }
}
