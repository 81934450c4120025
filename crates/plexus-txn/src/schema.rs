//! Schema operations: registering names, declaring tables, creating and dropping indexes.
//!
//! Declared tables give typed columns, a primary key, column families and an allowed label
//! list; they are the fast path. Declaring is a catalog change, logged immediately and not
//! part of any transaction (like token creation, see `plexus_storage::Catalog`). Every schema
//! change of the layers above goes through these functions, which take the
//! [`TxnManager`](crate::TxnManager): storage's catalog operations are not reached past it.

use crate::TxnManager;
use plexus_storage::{
    Catalog, CatalogOp, EdgeTableDef, IndexDef, IndexTarget, PropertyDef, Storage, Tokens,
    VertexTableDef, validate_table_def,
};
use plexus_types::{DataType, EdgeTableId, Error, Result, VertexTableId};

/// Longest label, property or edge-type name accepted.
pub const MAX_NAME_BYTES: usize = 1024;

#[derive(Clone, Copy)]
pub(crate) enum TokenKind {
    Label,
    PropKey,
    EdgeType,
}

impl TokenKind {
    fn tokens(self, catalog: &Catalog) -> &Tokens {
        match self {
            TokenKind::Label => &catalog.labels,
            TokenKind::PropKey => &catalog.prop_keys,
            TokenKind::EdgeType => &catalog.edge_types,
        }
    }

    fn what(self) -> &'static str {
        match self {
            TokenKind::Label => "label",
            TokenKind::PropKey => "property name",
            TokenKind::EdgeType => "edge type",
        }
    }
}

/// The id of `name`, registering it on first use.
pub(crate) fn ensure_token(storage: &Storage, name: &str, kind: TokenKind) -> Result<u32> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(Error::InvalidArgument(format!(
            "{} must be 1 to {MAX_NAME_BYTES} bytes long, got {} bytes",
            kind.what(),
            name.len()
        )));
    }
    storage.change_catalog(
        |c| kind.tokens(c).id(name),
        |c| {
            let id = kind.tokens(c).len() as u32;
            let name = name.to_string();
            Ok(match kind {
                TokenKind::Label => CatalogOp::Label { id, name },
                TokenKind::PropKey => CatalogOp::PropKey { id, name },
                TokenKind::EdgeType => CatalogOp::EdgeType { id, name },
            })
        },
    )
}

/// A vertex table declaration.
#[derive(Clone, Debug, Default)]
pub struct VertexTableSpec {
    /// Table name, which is also the label every vertex of the table carries.
    pub name: String,
    pub properties: Vec<(String, DataType)>,
    pub primary_key: Option<String>,
    /// Groups of declared properties stored together, row-wise.
    pub families: Vec<Vec<String>>,
    /// Labels a vertex of this table may carry besides the table's own.
    pub extra_labels: Vec<String>,
    /// Whether a vertex of this table may carry any other label, as on an implicit table
    /// (then `extra_labels` is moot): Neo4j's model, where a key constraint does not limit
    /// a node's labels.
    pub any_extra_label: bool,
}

impl VertexTableSpec {
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            ..Default::default()
        }
    }

    pub fn property(mut self, name: &str, data_type: DataType) -> Self {
        self.properties.push((name.to_string(), data_type));
        self
    }

    pub fn primary_key(mut self, name: &str) -> Self {
        self.primary_key = Some(name.to_string());
        self
    }

    pub fn family(mut self, members: &[&str]) -> Self {
        self.families
            .push(members.iter().map(|m| m.to_string()).collect());
        self
    }

    pub fn extra_label(mut self, label: &str) -> Self {
        self.extra_labels.push(label.to_string());
        self
    }

    /// Lets a vertex of this table carry any other label (see the field of that name).
    pub fn any_extra_label(mut self) -> Self {
        self.any_extra_label = true;
        self
    }
}

fn position(spec: &VertexTableSpec, name: &str, what: &str) -> Result<usize> {
    spec.properties
        .iter()
        .position(|(p, _)| p == name)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{what} '{name}' of vertex table '{}' is not a declared property",
                spec.name
            ))
        })
}

pub fn create_vertex_table(manager: &TxnManager, spec: &VertexTableSpec) -> Result<VertexTableId> {
    let storage = manager.storage();
    let label = ensure_token(storage, &spec.name, TokenKind::Label)?;
    if storage.catalog().table_of_label(label).is_some() {
        return Err(Error::Constraint(format!(
            "vertex table '{}' already exists",
            spec.name
        )));
    }
    let mut properties: Vec<PropertyDef> = Vec::new();
    for (name, data_type) in &spec.properties {
        let key = ensure_token(storage, name, TokenKind::PropKey)?;
        if properties.iter().any(|p| p.key == key) {
            return Err(Error::InvalidArgument(format!(
                "property '{name}' is declared twice in '{}'",
                spec.name
            )));
        }
        properties.push(PropertyDef {
            key,
            data_type: *data_type,
        });
    }
    let primary_key = spec
        .primary_key
        .as_deref()
        .map(|pk| position(spec, pk, "primary key"))
        .transpose()?;
    let families = spec
        .families
        .iter()
        .map(|f| {
            f.iter()
                .map(|m| position(spec, m, "column family member"))
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let extra_labels = spec
        .extra_labels
        .iter()
        .map(|l| ensure_token(storage, l, TokenKind::Label))
        .collect::<Result<Vec<_>>>()?;
    let def = VertexTableDef {
        name: spec.name.clone(),
        label,
        declared: true,
        properties,
        primary_key,
        families,
        extra_labels: (!spec.any_extra_label).then_some(extra_labels),
    };
    validate_table_def(&def).map_err(Error::InvalidArgument)?;
    let mut created = false;
    let id = storage.change_catalog(
        |c| c.table_of_label(label),
        |c| {
            created = true;
            Ok(CatalogOp::VertexTable {
                id: c.vertex_tables.len() as u32,
                def,
            })
        },
    )?;
    if !created {
        return Err(Error::Constraint(format!(
            "vertex table '{}' already exists",
            spec.name
        )));
    }
    storage.persist_catalog()?;
    Ok(id)
}

/// Declares the edge table `(from)-[edge_type]->(to)` with typed properties.
pub fn create_edge_table(
    manager: &TxnManager,
    from: &str,
    edge_type: &str,
    to: &str,
    properties: &[(&str, DataType)],
) -> Result<EdgeTableId> {
    let storage = manager.storage();
    let catalog = storage.catalog();
    let table = |name: &str| {
        catalog
            .labels
            .id(name)
            .and_then(|l| catalog.table_of_label(l))
            .ok_or_else(|| Error::NotFound(format!("vertex table '{name}'")))
    };
    let (src, dst) = (table(from)?, table(to)?);
    let ty = ensure_token(storage, edge_type, TokenKind::EdgeType)?;
    let mut props = Vec::new();
    for (name, data_type) in properties {
        props.push(PropertyDef {
            key: ensure_token(storage, name, TokenKind::PropKey)?,
            data_type: *data_type,
        });
    }
    let def = EdgeTableDef {
        src,
        edge_type: ty,
        dst,
        declared: true,
        properties: props,
    };
    let mut created = false;
    let id = storage.change_catalog(
        |c| c.edge_table(src, ty, dst),
        |c| {
            created = true;
            Ok(CatalogOp::EdgeTable {
                id: c.edge_tables.len() as u32,
                def,
            })
        },
    )?;
    if !created {
        return Err(Error::Constraint(format!(
            "edge table ({from})-[{edge_type}]->({to}) already exists"
        )));
    }
    storage.persist_catalog()?;
    Ok(id)
}

/// What [`create_index`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexCreated {
    Created,
    /// An index of that name existed already; nothing changed. `same_definition`: it indexes
    /// the same label or type and property.
    NameTaken {
        same_definition: bool,
    },
    /// An index with another name indexes the same label or type and property (its name);
    /// nothing changed.
    Equivalent(String),
}

/// What a secondary index covers, by name: the vertices carrying a label, or the
/// relationships (edges) of a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexOn<'a> {
    Label(&'a str),
    RelationshipType(&'a str),
}

impl IndexOn<'_> {
    /// The label or type name.
    pub fn name(&self) -> &str {
        match self {
            IndexOn::Label(name) | IndexOn::RelationshipType(name) => name,
        }
    }

    /// The index on property `key`, as messages write it: `:Person(age)`, `[:KNOWS](since)`.
    pub fn describe(&self, key: &str) -> String {
        match self {
            IndexOn::Label(label) => format!(":{label}({key})"),
            IndexOn::RelationshipType(ty) => format!("[:{ty}]({key})"),
        }
    }
}

/// The name an unnamed index gets: `index_<label or type>_<property>`, deterministic so that
/// a repeated `CREATE INDEX IF NOT EXISTS` finds its own index. A label and a relationship
/// type of the same name would share it: see [`create_index_as`].
fn default_index_name(on: IndexOn, key: &str) -> String {
    format!("index_{}_{key}", on.name())
}

/// Bound on the suffixes [`create_index_as`] tries after the default name.
const MAX_DEFAULT_NAME_SUFFIX: u32 = 100;

/// [`create_index`] under `name`, or when there is none under the default name — and when an
/// index on something else (a label and a relationship type of the same name) holds that
/// name, under the first free `<default>_2`, `<default>_3`, …; returns the name it settled on.
/// An index on the same label or type and property under any of those names is found, not
/// duplicated.
pub fn create_index_as(
    manager: &TxnManager,
    name: Option<&str>,
    on: IndexOn,
    key: &str,
) -> Result<(String, IndexCreated)> {
    if let Some(name) = name {
        return Ok((name.to_string(), create_index(manager, name, on, key)?));
    }
    let default = default_index_name(on, key);
    for suffix in 1..=MAX_DEFAULT_NAME_SUFFIX {
        let name = match suffix {
            1 => default.clone(),
            n => format!("{default}_{n}"),
        };
        let created = create_index(manager, &name, on, key)?;
        if created
            != (IndexCreated::NameTaken {
                same_definition: false,
            })
        {
            return Ok((name, created));
        }
    }
    Err(Error::LimitExceeded(format!(
        "indexes named {default} to {default}_{MAX_DEFAULT_NAME_SUFFIX} all exist on other \
         labels or types; name the index"
    )))
}

/// Creates secondary index `name` on the vertices carrying a label, or the edges of a type,
/// by property `key` (see `plexus_storage::index`). The label or type and the property need
/// not be in use: their names are registered, and elements that get them later are indexed as
/// they are committed (as in Neo4j). The build runs under the commit lock: commits wait for
/// one pass over the rows of the tables that keep the index. Not transactional, like every
/// catalog change.
pub fn create_index(
    manager: &TxnManager,
    name: &str,
    on: IndexOn,
    key: &str,
) -> Result<IndexCreated> {
    check_index_name(name)?;
    let storage = manager.storage();
    let target = match on {
        IndexOn::Label(label) => {
            IndexTarget::Label(ensure_token(storage, label, TokenKind::Label)?)
        }
        IndexOn::RelationshipType(ty) => {
            IndexTarget::EdgeType(ensure_token(storage, ty, TokenKind::EdgeType)?)
        }
    };
    let key = ensure_token(storage, key, TokenKind::PropKey)?;
    let def = IndexDef {
        name: name.to_string(),
        target,
        key,
    };
    let existing = manager.with_commits_paused(|| storage.create_index(def))?;
    Ok(match existing {
        None => IndexCreated::Created,
        Some(index) if index.name == name => IndexCreated::NameTaken {
            same_definition: index.target == target && index.key == key,
        },
        Some(index) => IndexCreated::Equivalent(index.name),
    })
}

/// Drops secondary index `name` (of either kind): its removal is logged and published, then
/// its content freed. Returns `false` if there is no such index. Not transactional, like
/// every catalog change.
pub fn drop_index(manager: &TxnManager, name: &str) -> Result<bool> {
    manager.storage().drop_index(name)
}

fn check_index_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(Error::InvalidArgument(format!(
            "an index name must be 1 to {MAX_NAME_BYTES} bytes long, got {} bytes",
            name.len()
        )));
    }
    Ok(())
}
