//! A read-only description of the catalog, by name: what `Database::schema` returns.
//!
//! The storage catalog (`plexus_storage::Catalog`) speaks in dense token ids and is shaped for
//! the engine; tools (the shell's `:schema`, drivers listing labels) want names. This module
//! copies the catalog into plain owned values, so the copy outlives any later catalog change
//! and callers need no storage types. Tables are listed in creation order (their id order).
//!
//! A vertex table is *declared* (typed properties, optional primary key) or *implicit*
//! (created by the first use of a label; every property is dynamic, so `properties` is
//! empty). An edge table exists per (source table, edge type, destination table).

use plexus_storage::{Catalog, IndexDef, IndexTarget, PropertyDef};
use plexus_types::DataType;

/// The catalog by name (see the module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// Every label ever used, in creation order (table labels and extra labels).
    pub labels: Vec<String>,
    pub vertex_tables: Vec<VertexTableSchema>,
    pub edge_tables: Vec<EdgeTableSchema>,
    /// Secondary property indexes, in creation order.
    pub indexes: Vec<IndexSchema>,
}

/// A secondary property index: the vertices carrying a label, or the relationships of a
/// type, by their value of `property`.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexSchema {
    pub name: String,
    /// The label — or, when `entity` is `Relationship`, the relationship type.
    pub label: String,
    pub property: String,
    pub entity: IndexEntity,
}

/// What an index holds: nodes or relationships (Neo4j's `entityType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexEntity {
    Node,
    Relationship,
}

impl IndexEntity {
    /// Neo4j's name for it: `NODE` or `RELATIONSHIP`.
    pub fn name(self) -> &'static str {
        match self {
            IndexEntity::Node => "NODE",
            IndexEntity::Relationship => "RELATIONSHIP",
        }
    }
}

impl IndexSchema {
    pub(crate) fn of(catalog: &Catalog, index: &IndexDef) -> IndexSchema {
        let entity = match index.target {
            IndexTarget::Label(_) => IndexEntity::Node,
            IndexTarget::EdgeType(_) => IndexEntity::Relationship,
        };
        IndexSchema {
            name: index.name.clone(),
            label: catalog.target_name(index.target).to_string(),
            property: catalog.prop_name(index.key).to_string(),
            entity,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct VertexTableSchema {
    /// The table's name, which is also the label all its vertices carry.
    pub name: String,
    pub declared: bool,
    /// Typed properties (declared tables only).
    pub properties: Vec<PropertySchema>,
    /// The primary-key property, if any.
    pub primary_key: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EdgeTableSchema {
    /// The source vertex table's name.
    pub from: String,
    pub edge_type: String,
    /// The destination vertex table's name.
    pub to: String,
    pub declared: bool,
    pub properties: Vec<PropertySchema>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PropertySchema {
    pub name: String,
    pub data_type: DataType,
}

impl Schema {
    pub(crate) fn of(catalog: &Catalog) -> Schema {
        let properties = |defs: &[PropertyDef]| {
            defs.iter()
                .map(|p| PropertySchema {
                    name: catalog.prop_keys.name(p.key).unwrap_or("?").to_string(),
                    data_type: p.data_type,
                })
                .collect::<Vec<_>>()
        };
        let table_name = |id| {
            catalog
                .vertex_table(id)
                .map_or_else(|_| "?".to_string(), |t| t.name.clone())
        };
        let vertex_tables = catalog
            .vertex_tables
            .iter()
            .map(|t| {
                let properties = properties(&t.properties);
                let primary_key = t
                    .primary_key
                    .and_then(|i| properties.get(i))
                    .map(|p| p.name.clone());
                VertexTableSchema {
                    name: t.name.clone(),
                    declared: t.declared,
                    properties,
                    primary_key,
                }
            })
            .collect();
        let edge_tables = catalog
            .edge_tables
            .iter()
            .map(|t| EdgeTableSchema {
                from: table_name(t.src),
                edge_type: catalog.edge_types.name(t.edge_type).unwrap_or("?").into(),
                to: table_name(t.dst),
                declared: t.declared,
                properties: properties(&t.properties),
            })
            .collect();
        // Token ids are dense, so the names run from id 0 to the first missing id.
        let labels = (0..)
            .map_while(|id| catalog.labels.name(id).map(str::to_string))
            .collect();
        let indexes = (catalog.indexes.iter())
            .map(|index| IndexSchema::of(catalog, index))
            .collect();
        Schema {
            labels,
            vertex_tables,
            edge_tables,
            indexes,
        }
    }
}
