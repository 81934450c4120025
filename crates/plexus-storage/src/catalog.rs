//! The catalog: labels, property keys, edge types, vertex tables and edge tables.
//!
//! TOKENS AND TABLES
//! =================
//! Names are interned to dense ids that are never reused. A vertex table is either *declared*
//! (typed properties, optional primary key, column families, an allowed label list) or
//! *implicit*: created on first use of a label, schema-free, every property dynamic. An edge
//! table exists per (source table, edge type, destination table), declared or implicit.
//!
//! DURABILITY
//! ==========
//! Catalog changes are [`CatalogOp`]s. They are written to the WAL as they happen, before any
//! commit record that uses them, and are *not* transactional: a token created by a transaction
//! that later aborts stays (as in Neo4j). Checkpoints store the whole catalog. Replaying an op
//! whose id already exists is a no-op, so replay is idempotent.
//!
//! INDEXES
//! =======
//! Secondary index definitions ([`IndexDef`]: name, a label or an edge type, property key) are
//! catalog entries too, named rather than numbered: `CreateIndex` puts a definition under its
//! name (replacing one of the same name) and `DropIndex` removes the name, so replaying any
//! suffix of the log over a checkpoint taken in the middle of it ends with the definitions of
//! the last op per name — the state before the crash. Their content is not in the catalog (see
//! `index`).
//!
//! In the encoding, a vertex index's `CreateIndex` has tag 5 (as before edge indexes existed,
//! so older logs and checkpoints read unchanged) and an edge index's has tag 7; `DropIndex`,
//! by name, is tag 6 for both.

use crate::codec::{DecodeResult, Decoder, Encoder};
use plexus_types::{
    DataType, EdgeTableId, EdgeTypeId, Error, LabelId, PropKeyId, Result, VertexTableId,
};
use std::collections::HashMap;

/// A marker in a vertex's label set meaning "the vertex no longer carries its table's label"
/// (`REMOVE n:TableLabel`): the vertex stays in its table — its id does not change — but label
/// reads and label scans no longer see that label. Never a real token: ids are dense and
/// bounded by `MAX_CATALOG_TOKENS`.
pub const HIDDEN_TABLE_LABEL: LabelId = LabelId::MAX;

/// Bound on catalog size, so a runaway client cannot grow it without limit.
pub const MAX_CATALOG_TOKENS: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq)]
pub struct PropertyDef {
    pub key: PropKeyId,
    pub data_type: DataType,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VertexTableDef {
    pub name: String,
    /// The table's own label; every vertex of the table carries it.
    pub label: LabelId,
    pub declared: bool,
    /// Typed columns (declared tables only).
    pub properties: Vec<PropertyDef>,
    /// Index into `properties` of the primary key.
    pub primary_key: Option<usize>,
    /// Groups of indexes into `properties` stored row-wise together.
    pub families: Vec<Vec<usize>>,
    /// Labels a vertex may carry besides `label`; `None` allows any (implicit tables).
    pub extra_labels: Option<Vec<LabelId>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EdgeTableDef {
    pub src: VertexTableId,
    pub edge_type: EdgeTypeId,
    pub dst: VertexTableId,
    pub declared: bool,
    pub properties: Vec<PropertyDef>,
}

/// What a secondary index covers: the vertices carrying a label, or the edges of a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexTarget {
    Label(LabelId),
    EdgeType(EdgeTypeId),
}

/// The tables that keep index content (see `index`): every vertex table keeps the keys of
/// every label's index, since a label can be installed on any table; an edge table keeps
/// those of its own edge type's indexes, since an edge's type never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexHome {
    VertexTables,
    EdgeTables(EdgeTypeId),
}

impl IndexTarget {
    /// Where this index's content is kept.
    pub fn home(self) -> IndexHome {
        match self {
            IndexTarget::Label(_) => IndexHome::VertexTables,
            IndexTarget::EdgeType(ty) => IndexHome::EdgeTables(ty),
        }
    }
}

/// A secondary property index: the vertices carrying a label, or the edges of a type, by
/// their value of `key`.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDef {
    pub name: String,
    pub target: IndexTarget,
    pub key: PropKeyId,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CatalogOp {
    Label {
        id: LabelId,
        name: String,
    },
    PropKey {
        id: PropKeyId,
        name: String,
    },
    EdgeType {
        id: EdgeTypeId,
        name: String,
    },
    VertexTable {
        id: VertexTableId,
        def: VertexTableDef,
    },
    EdgeTable {
        id: EdgeTableId,
        def: EdgeTableDef,
    },
    CreateIndex(IndexDef),
    DropIndex {
        name: String,
    },
}

/// A name ↔ id interning table. Names are looked up per row on some paths (an expand by
/// relationship type names each type at every node it visits), so the maps here hash with
/// `ahash` rather than SipHash — a fifth of a variable-length expand's time went to hashing
/// type names before.
#[derive(Default, Clone)]
pub struct Tokens {
    names: Vec<String>,
    ids: HashMap<String, u32, ahash::RandomState>,
}

impl Tokens {
    pub fn id(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }
    pub fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }
    pub fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    fn insert(&mut self, id: u32, name: &str) {
        if (id as usize) < self.names.len() {
            return; // replayed op
        }
        assert_eq!(id as usize, self.names.len(), "catalog token ids are dense");
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
    }
}

#[derive(Default, Clone)]
pub struct Catalog {
    pub labels: Tokens,
    pub prop_keys: Tokens,
    pub edge_types: Tokens,
    pub vertex_tables: Vec<VertexTableDef>,
    pub edge_tables: Vec<EdgeTableDef>,
    /// Secondary index definitions, in creation order (see INDEXES).
    pub indexes: Vec<IndexDef>,
    table_by_label: HashMap<LabelId, VertexTableId, ahash::RandomState>,
    edge_table_by_triple:
        HashMap<(VertexTableId, EdgeTypeId, VertexTableId), EdgeTableId, ahash::RandomState>,
    edge_tables_from: HashMap<VertexTableId, Vec<EdgeTableId>, ahash::RandomState>,
    edge_tables_to: HashMap<VertexTableId, Vec<EdgeTableId>, ahash::RandomState>,
}

impl Catalog {
    pub fn apply(&mut self, op: &CatalogOp) {
        match op {
            CatalogOp::Label { id, name } => self.labels.insert(*id, name),
            CatalogOp::PropKey { id, name } => self.prop_keys.insert(*id, name),
            CatalogOp::EdgeType { id, name } => self.edge_types.insert(*id, name),
            CatalogOp::VertexTable { id, def } => {
                if (*id as usize) < self.vertex_tables.len() {
                    return;
                }
                assert_eq!(
                    *id as usize,
                    self.vertex_tables.len(),
                    "table ids are dense"
                );
                self.table_by_label.insert(def.label, *id);
                self.vertex_tables.push(def.clone());
            }
            CatalogOp::EdgeTable { id, def } => {
                if (*id as usize) < self.edge_tables.len() {
                    return;
                }
                assert_eq!(*id as usize, self.edge_tables.len(), "table ids are dense");
                self.edge_table_by_triple
                    .insert((def.src, def.edge_type, def.dst), *id);
                self.edge_tables_from.entry(def.src).or_default().push(*id);
                self.edge_tables_to.entry(def.dst).or_default().push(*id);
                self.edge_tables.push(def.clone());
            }
            CatalogOp::CreateIndex(def) => {
                self.indexes.retain(|index| index.name != def.name);
                self.indexes.push(def.clone());
            }
            CatalogOp::DropIndex { name } => self.indexes.retain(|index| index.name != *name),
        }
    }

    /// The index named `name`.
    pub fn index(&self, name: &str) -> Option<&IndexDef> {
        self.indexes.iter().find(|index| index.name == name)
    }

    /// An index on `target` by property `key`.
    pub fn index_on(&self, target: IndexTarget, key: PropKeyId) -> Option<&IndexDef> {
        self.indexes
            .iter()
            .find(|index| index.target == target && index.key == key)
    }

    /// The property keys the tables of `home` keep index content for, sorted, each once.
    pub fn keys_kept_in(&self, home: IndexHome) -> Vec<PropKeyId> {
        let mut keys: Vec<PropKeyId> = self
            .indexes
            .iter()
            .filter(|index| index.target.home() == home)
            .map(|index| index.key)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The name of the label or edge type an index covers.
    pub fn target_name(&self, target: IndexTarget) -> &str {
        match target {
            IndexTarget::Label(label) => self.label_name(label),
            IndexTarget::EdgeType(ty) => self.edge_types.name(ty).unwrap_or("?"),
        }
    }

    pub fn table_of_label(&self, label: LabelId) -> Option<VertexTableId> {
        self.table_by_label.get(&label).copied()
    }

    pub fn edge_table(
        &self,
        src: VertexTableId,
        ty: EdgeTypeId,
        dst: VertexTableId,
    ) -> Option<EdgeTableId> {
        self.edge_table_by_triple.get(&(src, ty, dst)).copied()
    }

    /// Edge tables whose source (`outgoing`) or destination table is `table`.
    pub fn edge_tables_of(&self, table: VertexTableId, outgoing: bool) -> &[EdgeTableId] {
        let map = if outgoing {
            &self.edge_tables_from
        } else {
            &self.edge_tables_to
        };
        map.get(&table).map_or(&[], Vec::as_slice)
    }

    pub fn vertex_table(&self, id: VertexTableId) -> Result<&VertexTableDef> {
        self.vertex_tables
            .get(id as usize)
            .ok_or_else(|| Error::NotFound(format!("vertex table {id}")))
    }

    pub fn edge_table_def(&self, id: EdgeTableId) -> Result<&EdgeTableDef> {
        self.edge_tables
            .get(id as usize)
            .ok_or_else(|| Error::NotFound(format!("edge table {id}")))
    }

    pub fn label_name(&self, id: LabelId) -> &str {
        self.labels.name(id).unwrap_or("?")
    }

    pub fn prop_name(&self, id: PropKeyId) -> &str {
        self.prop_keys.name(id).unwrap_or("?")
    }

    pub fn table_name(&self, id: VertexTableId) -> &str {
        self.vertex_tables
            .get(id as usize)
            .map_or("?", |t| t.name.as_str())
    }

    /// All catalog contents as ops, in an order that `apply` accepts.
    pub fn to_ops(&self) -> Vec<CatalogOp> {
        let mut ops = Vec::new();
        let tokens = |t: &Tokens| {
            t.names
                .clone()
                .into_iter()
                .enumerate()
                .map(|(i, n)| (i as u32, n))
        };
        ops.extend(tokens(&self.labels).map(|(id, name)| CatalogOp::Label { id, name }));
        ops.extend(tokens(&self.prop_keys).map(|(id, name)| CatalogOp::PropKey { id, name }));
        ops.extend(tokens(&self.edge_types).map(|(id, name)| CatalogOp::EdgeType { id, name }));
        for (id, def) in self.vertex_tables.iter().enumerate() {
            ops.push(CatalogOp::VertexTable {
                id: id as u32,
                def: def.clone(),
            });
        }
        for (id, def) in self.edge_tables.iter().enumerate() {
            ops.push(CatalogOp::EdgeTable {
                id: id as u32,
                def: def.clone(),
            });
        }
        ops.extend(self.indexes.iter().cloned().map(CatalogOp::CreateIndex));
        ops
    }

    pub fn check_token_limit(&self) -> Result<()> {
        let total = self.labels.len()
            + self.prop_keys.len()
            + self.edge_types.len()
            + self.vertex_tables.len()
            + self.edge_tables.len();
        if total >= MAX_CATALOG_TOKENS {
            return Err(Error::LimitExceeded(format!(
                "the catalog holds {total} entries; at most {MAX_CATALOG_TOKENS} are allowed"
            )));
        }
        Ok(())
    }
}

fn encode_props(enc: &mut Encoder, props: &[PropertyDef]) {
    enc.len(props.len());
    for p in props {
        enc.u32(p.key);
        enc.str(p.data_type.name());
    }
}

fn decode_props(dec: &mut Decoder) -> DecodeResult<Vec<PropertyDef>> {
    let n = dec.len()?;
    let mut props = Vec::with_capacity(n);
    for _ in 0..n {
        let key = dec.u32()?;
        let type_name = dec.str()?;
        let data_type = DataType::parse(type_name)
            .ok_or_else(|| dec.error(format!("unknown data type '{type_name}'")))?;
        props.push(PropertyDef { key, data_type });
    }
    Ok(props)
}

impl CatalogOp {
    pub fn encode(&self, enc: &mut Encoder) {
        match self {
            CatalogOp::Label { id, name }
            | CatalogOp::PropKey { id, name }
            | CatalogOp::EdgeType { id, name } => {
                enc.u8(match self {
                    CatalogOp::Label { .. } => 0,
                    CatalogOp::PropKey { .. } => 1,
                    _ => 2,
                });
                enc.u32(*id);
                enc.str(name);
            }
            CatalogOp::VertexTable { id, def } => {
                enc.u8(3);
                enc.u32(*id);
                enc.str(&def.name);
                enc.u32(def.label);
                enc.u8(def.declared as u8);
                encode_props(enc, &def.properties);
                enc.u32(def.primary_key.map_or(u32::MAX, |i| i as u32));
                enc.len(def.families.len());
                for family in &def.families {
                    let members: Vec<u32> = family.iter().map(|&i| i as u32).collect();
                    enc.u32s(&members);
                }
                match &def.extra_labels {
                    None => enc.u8(0),
                    Some(labels) => {
                        enc.u8(1);
                        enc.u32s(labels);
                    }
                }
            }
            CatalogOp::EdgeTable { id, def } => {
                enc.u8(4);
                enc.u32(*id);
                enc.u32(def.src);
                enc.u32(def.edge_type);
                enc.u32(def.dst);
                enc.u8(def.declared as u8);
                encode_props(enc, &def.properties);
            }
            CatalogOp::CreateIndex(def) => {
                let (tag, token) = match def.target {
                    IndexTarget::Label(label) => (5, label),
                    IndexTarget::EdgeType(ty) => (7, ty),
                };
                enc.u8(tag);
                enc.str(&def.name);
                enc.u32(token);
                enc.u32(def.key);
            }
            CatalogOp::DropIndex { name } => {
                enc.u8(6);
                enc.str(name);
            }
        }
    }

    pub fn decode(dec: &mut Decoder) -> DecodeResult<CatalogOp> {
        let tag = dec.u8()?;
        // Index ops are named, not numbered: no id follows their tag.
        match tag {
            5 | 7 => {
                let name = dec.str()?.to_string();
                let token = dec.u32()?;
                let target = if tag == 5 {
                    IndexTarget::Label(token)
                } else {
                    IndexTarget::EdgeType(token)
                };
                let key = dec.u32()?;
                return Ok(CatalogOp::CreateIndex(IndexDef { name, target, key }));
            }
            6 => {
                let name = dec.str()?.to_string();
                return Ok(CatalogOp::DropIndex { name });
            }
            _ => {}
        }
        let id = dec.u32()?;
        Ok(match tag {
            0 => CatalogOp::Label {
                id,
                name: dec.str()?.to_string(),
            },
            1 => CatalogOp::PropKey {
                id,
                name: dec.str()?.to_string(),
            },
            2 => CatalogOp::EdgeType {
                id,
                name: dec.str()?.to_string(),
            },
            3 => {
                let name = dec.str()?.to_string();
                let label = dec.u32()?;
                let declared = dec.u8()? != 0;
                let properties = decode_props(dec)?;
                let pk = dec.u32()?;
                let primary_key = (pk != u32::MAX).then_some(pk as usize);
                let n = dec.len()?;
                let mut families = Vec::with_capacity(n);
                for _ in 0..n {
                    families.push(dec.u32s()?.into_iter().map(|i| i as usize).collect());
                }
                let extra_labels = match dec.u8()? {
                    0 => None,
                    _ => Some(dec.u32s()?),
                };
                let def = VertexTableDef {
                    name,
                    label,
                    declared,
                    properties,
                    primary_key,
                    families,
                    extra_labels,
                };
                validate_table_def(&def).map_err(|e| dec.error(e))?;
                CatalogOp::VertexTable { id, def }
            }
            4 => CatalogOp::EdgeTable {
                id,
                def: EdgeTableDef {
                    src: dec.u32()?,
                    edge_type: dec.u32()?,
                    dst: dec.u32()?,
                    declared: dec.u8()? != 0,
                    properties: decode_props(dec)?,
                },
            },
            other => return Err(dec.error(format!("unknown catalog op tag {other}"))),
        })
    }
}

/// Structural checks on a vertex table definition (indexes in range, families disjoint).
pub fn validate_table_def(def: &VertexTableDef) -> Result<(), String> {
    let n = def.properties.len();
    if def.primary_key.is_some_and(|pk| pk >= n) {
        return Err(format!(
            "table '{}': primary key index out of range",
            def.name
        ));
    }
    let mut seen = vec![false; n];
    for family in &def.families {
        for &member in family {
            if member >= n || std::mem::replace(&mut seen[member], true) {
                return Err(format!(
                    "table '{}': column families must name distinct declared properties",
                    def.name
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Encoder;

    fn create(name: &str, key: PropKeyId) -> CatalogOp {
        CatalogOp::CreateIndex(IndexDef {
            name: name.into(),
            target: IndexTarget::Label(0),
            key,
        })
    }

    #[test]
    fn index_ops_round_trip_through_the_encoding() {
        let edge_index = CatalogOp::CreateIndex(IndexDef {
            name: "by_since".into(),
            target: IndexTarget::EdgeType(2),
            key: 4,
        });
        for op in [
            create("by_age", 3),
            edge_index,
            CatalogOp::DropIndex { name: "x".into() },
        ] {
            let mut enc = Encoder::default();
            op.encode(&mut enc);
            let mut dec = Decoder::new(&enc.buf, 0);
            assert_eq!(CatalogOp::decode(&mut dec).unwrap(), op);
            assert!(dec.is_empty());
        }
    }

    #[test]
    fn vertex_tables_keep_every_label_index_key_and_edge_tables_their_types() {
        let index = |name: &str, target, key| {
            CatalogOp::CreateIndex(IndexDef {
                name: name.into(),
                target,
                key,
            })
        };
        let mut catalog = Catalog::default();
        for op in [
            index("a", IndexTarget::Label(0), 5),
            index("b", IndexTarget::Label(1), 5),
            index("c", IndexTarget::Label(1), 2),
            index("d", IndexTarget::EdgeType(0), 7),
            index("e", IndexTarget::EdgeType(1), 5),
        ] {
            catalog.apply(&op);
        }
        assert_eq!(catalog.keys_kept_in(IndexHome::VertexTables), [2, 5]);
        assert_eq!(catalog.keys_kept_in(IndexHome::EdgeTables(0)), [7]);
        assert_eq!(catalog.keys_kept_in(IndexHome::EdgeTables(1)), [5]);
        assert_eq!(
            catalog.keys_kept_in(IndexHome::EdgeTables(2)),
            [] as [u32; 0]
        );
    }

    #[test]
    fn a_vertex_index_written_before_edge_indexes_existed_still_reads() {
        // The layout of tag 5 from before edge indexes: name, label, key.
        let mut enc = Encoder::default();
        enc.u8(5);
        enc.str("old");
        enc.u32(1);
        enc.u32(2);
        let mut dec = Decoder::new(&enc.buf, 0);
        let expected = CatalogOp::CreateIndex(IndexDef {
            name: "old".into(),
            target: IndexTarget::Label(1),
            key: 2,
        });
        assert_eq!(CatalogOp::decode(&mut dec).unwrap(), expected);
    }

    #[test]
    fn replaying_index_ops_over_a_later_state_ends_at_the_last_op_per_name() {
        // Log: create a(key 1), drop a, create a(key 2), create b. A checkpoint taken after
        // the third op, then the whole log replayed over it, must give the final state.
        let log = [
            create("a", 1),
            CatalogOp::DropIndex { name: "a".into() },
            create("a", 2),
            create("b", 1),
        ];
        let mut checkpointed = Catalog::default();
        log[..3].iter().for_each(|op| checkpointed.apply(op));
        let mut recovered = Catalog::default();
        checkpointed
            .to_ops()
            .iter()
            .chain(&log)
            .for_each(|op| recovered.apply(op));
        let mut direct = Catalog::default();
        log.iter().for_each(|op| direct.apply(op));
        let keys = |c: &Catalog| -> Vec<(String, PropKeyId)> {
            let mut keys: Vec<_> = c.indexes.iter().map(|i| (i.name.clone(), i.key)).collect();
            keys.sort();
            keys
        };
        assert_eq!(keys(&recovered), keys(&direct));
        assert_eq!(keys(&direct), [("a".into(), 2), ("b".into(), 1)]);
    }
}
