//! The apply plan: a validated mapping compiled into what applying a row needs — each
//! vertex table's Plexus table, key and properties, each edge table's way of finding the
//! edge of a row, each child list's parent — and the graph schema it implies.
//!
//! A [`Plan`] is built once at start from the validated [`PropertyGraph`] and the source
//! tables' catalog columns ([`TableColumns`]); everything the mapping allows but the apply
//! side cannot apply unambiguously (two edge tables whose row-owned edges it could not tell
//! apart, two vertex tables becoming one Plexus table) is refused here, before anything is
//! copied.
//!
//! KEYS
//! ====
//! A Plexus vertex table has a one-property primary key, so a vertex table's key becomes one
//! property ([`KeyPlan`]): a one-column key is that column's property; a composite key is a
//! list property holding the key columns' values in key order, named after their property
//! names joined with `_` (`KEY (order_id, line_no)` → `order_id_line_no: [7, 2]`). Every
//! column set that names a vertex — the key itself, an edge table's endpoint columns, a
//! child list's parent columns — is decoded by the same [`KeyPlan`], so the values always
//! compare equal. An edge table's own composite key is stored on its edges the same way.

use std::collections::HashMap;

use plexus::{DataType, Database, Error as GraphError, Value, VertexTableSpec};

use super::MirrorError;
use crate::change::Datum;
use crate::mapping::{Conversion, PgType, PropertyGraph, PropertyMap, TableName, decode};

/// One catalog column of a source table: name, type oid, type modifier, enum-ness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogColumn {
    pub name: String,
    pub type_oid: u32,
    pub type_modifier: i32,
    pub is_enum: bool,
}

/// The catalog columns of every source table, in column order.
pub type TableColumns = HashMap<TableName, Vec<CatalogColumn>>;

/// A mapped property: a column decoded into a property.
#[derive(Clone, Debug, PartialEq)]
pub struct PropPlan {
    pub column: String,
    pub name: String,
    pub pg_type: PgType,
    pub conversion: Conversion,
}

impl PropPlan {
    /// The property of a key column the mapping does not map: named after the column, typed
    /// from the catalog.
    fn unmapped(
        columns: &TableColumns,
        table: &TableName,
        column: &str,
    ) -> Result<PropPlan, MirrorError> {
        Ok(PropPlan {
            column: column.to_owned(),
            name: column.to_owned(),
            pg_type: column_type(columns, table, column)?,
            conversion: Conversion::None,
        })
    }

    /// The property's value in `row`: `Ok(None)` when the column is an unchanged TOAST
    /// value (leave the property as it is), `Value::Null` for SQL NULL.
    pub fn value(&self, row: &Row<'_>, table: &TableName) -> Result<Option<Value>, MirrorError> {
        match row.get(&self.column) {
            Datum::Null => Ok(Some(Value::Null)),
            Datum::UnchangedToast => Ok(None),
            Datum::Text(text) => decode(&self.pg_type, self.conversion, text)
                .map(Some)
                .map_err(|reason| MirrorError::Row {
                    table: table.to_string(),
                    key: row.describe(),
                    reason: format!("column \"{}\": {reason}", self.column),
                }),
        }
    }
}

/// A row as column names and values (of a copy or a stream change).
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    pub columns: &'a [String],
    pub values: &'a [Datum],
}

const NULL: Datum = Datum::Null;

impl<'a> Row<'a> {
    pub fn new(columns: &'a [String], values: &'a [Datum]) -> Row<'a> {
        debug_assert_eq!(columns.len(), values.len());
        Row { columns, values }
    }

    /// The value of `column` (NULL when the row does not carry it).
    pub fn get(&self, column: &str) -> &'a Datum {
        match self.columns.iter().position(|c| c == column) {
            Some(i) => self.values.get(i).unwrap_or(&NULL),
            None => &NULL,
        }
    }

    /// The text of `column`, `None` for NULL or unchanged.
    pub fn text(&self, column: &str) -> Option<&'a str> {
        match self.get(column) {
            Datum::Text(text) => Some(text),
            Datum::Null | Datum::UnchangedToast => None,
        }
    }

    /// The row's first few columns, for messages.
    pub fn describe(&self) -> String {
        let shown: Vec<String> = (self.columns.iter().zip(self.values))
            .take(4)
            .map(|(c, v)| match v {
                Datum::Text(t) => format!("{c}={t}"),
                Datum::Null => format!("{c}=NULL"),
                Datum::UnchangedToast => format!("{c}=<unchanged>"),
            })
            .collect();
        format!("({})", shown.join(", "))
    }
}

/// How a set of columns names a vertex (or a keyed edge); see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyPlan {
    /// The key columns in key order, each decoded as its property is.
    pub parts: Vec<PropPlan>,
    /// The property holding the key (for a composite key, the list of the parts' values).
    pub property: String,
}

impl KeyPlan {
    /// The plan of key `key_columns` of `table`: each column's mapped property, or else a
    /// new property named after the column (a one-column key's is added to `properties`,
    /// typed from the catalog).
    fn new(
        properties: &mut Vec<PropPlan>,
        columns: &TableColumns,
        table: &TableName,
        key_columns: &[String],
    ) -> Result<KeyPlan, MirrorError> {
        if let [column] = key_columns {
            let part = match properties.iter().find(|p| p.column == *column) {
                Some(p) => p.clone(),
                None => {
                    let p = PropPlan::unmapped(columns, table, column)?;
                    properties.push(p.clone());
                    p
                }
            };
            return Ok(KeyPlan {
                property: part.name.clone(),
                parts: vec![part],
            });
        }
        let parts = key_columns
            .iter()
            .map(
                |column| match properties.iter().find(|p| p.column == *column) {
                    Some(p) => Ok(p.clone()),
                    None => PropPlan::unmapped(columns, table, column),
                },
            )
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
        let property = names.join("_");
        if properties.iter().any(|p| p.name == property) {
            return Err(MirrorError::Mapping(format!(
                "{table}: the composite key ({}) is stored as the list property {property}, \
                 which the mapping also gives to a column; rename that property with AS",
                key_columns.join(", ")
            )));
        }
        Ok(KeyPlan { parts, property })
    }

    pub fn is_composite(&self) -> bool {
        self.parts.len() > 1
    }

    /// The key columns' names, in key order.
    pub fn columns(&self) -> Vec<String> {
        self.parts.iter().map(|p| p.column.clone()).collect()
    }

    /// The type of the key property.
    pub fn data_type(&self) -> DataType {
        if self.is_composite() {
            return DataType::List;
        }
        match self.parts[0].pg_type {
            PgType::Int => DataType::Int64,
            PgType::String => DataType::String,
            PgType::Bool => DataType::Bool,
            PgType::Float => DataType::Float64,
            _ => DataType::Any,
        }
    }

    /// The key named by `columns` of `row` (the key columns themselves, an endpoint's
    /// columns or a child's parent columns, in key order): `Ok(None)` when one of them is
    /// NULL, `Err(reason)` when one cannot be decoded or came as an unchanged TOAST value.
    pub fn value_in(&self, row: &Row<'_>, columns: &[String]) -> Result<Option<Value>, String> {
        debug_assert_eq!(columns.len(), self.parts.len());
        let mut values = Vec::with_capacity(columns.len());
        for (part, column) in self.parts.iter().zip(columns) {
            let text = match row.get(column) {
                Datum::Null => return Ok(None),
                Datum::UnchangedToast => {
                    return Err(format!(
                        "key column \"{column}\" came as an unchanged TOAST value"
                    ));
                }
                Datum::Text(text) => text,
            };
            values.push(
                decode(&part.pg_type, part.conversion, text)
                    .map_err(|reason| format!("column \"{column}\": {reason}"))?,
            );
        }
        Ok(Some(match <[Value; 1]>::try_from(values) {
            Ok([one]) => one,
            Err(values) => Value::List(values.into()),
        }))
    }

    /// `columns` of `row` as text, for messages and for grouping rows by key (`None` when
    /// one is NULL or unchanged).
    pub fn text_in(&self, row: &Row<'_>, columns: &[String]) -> Option<String> {
        let texts = columns
            .iter()
            .map(|c| row.text(c))
            .collect::<Option<Vec<&str>>>()?;
        Some(match texts.as_slice() {
            [one] => (*one).to_owned(),
            more => format!("({})", more.join(", ")),
        })
    }

    /// What a missing vertex named by `columns` of `row` is, for the pending set's report:
    /// the vertex table's alias and key columns, with the row's values.
    pub fn describe_in(&self, alias: &str, row: &Row<'_>, columns: &[String]) -> String {
        let text = self
            .text_in(row, columns)
            .unwrap_or_else(|| "NULL".to_owned());
        match self.columns().as_slice() {
            [one] => format!("{alias} {one}={text}"),
            more => format!("{alias} ({})={text}", more.join(", ")),
        }
    }
}

/// A vertex table of the mapping as the apply side uses it.
#[derive(Clone, Debug)]
pub struct VertexPlan {
    pub alias: String,
    pub table: TableName,
    /// The Plexus vertex table (and the label every vertex of it carries).
    pub graph_table: String,
    pub mapping: crate::mapping::VertexTable,
    /// The key columns and the primary-key property they feed.
    pub key: KeyPlan,
    /// Every mapped property, a one-column key's property included (a composite key's
    /// list property is not among them).
    pub properties: Vec<PropPlan>,
    /// Every label a LABEL FROM can give (to move them on update); empty without LABEL FROM
    /// or when it has no value list.
    pub label_from_labels: Vec<String>,
}

impl VertexPlan {
    /// The key value of `row` (an error when NULL or undecodable).
    pub fn key_value(&self, row: &Row<'_>) -> Result<Value, MirrorError> {
        let error = |reason: String| MirrorError::Row {
            table: self.table.to_string(),
            key: row.describe(),
            reason,
        };
        let columns = self.key.columns();
        match self.key.value_in(row, &columns) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(error(format!(
                "key column(s) {} NULL or missing",
                columns.join(", ")
            ))),
            Err(reason) => Err(error(reason)),
        }
    }

    /// Whether `row` carries every key column (an old row may carry none).
    pub fn has_key(&self, row: &Row<'_>) -> bool {
        self.key.parts.iter().all(|p| row.text(&p.column).is_some())
    }

    /// The labels of `row`'s vertex.
    pub fn labels(&self, row: &Row<'_>) -> Result<Vec<String>, MirrorError> {
        let label_value = self
            .mapping
            .label_from
            .as_ref()
            .and_then(|from| row.text(&from.column));
        let key: Vec<&str> = (self.key.parts.iter())
            .map(|p| row.text(&p.column).unwrap_or("NULL"))
            .collect();
        self.mapping
            .labels_for_row(label_value, &key)
            .map_err(|reason| MirrorError::Row {
                table: self.table.to_string(),
                key: row.describe(),
                reason,
            })
    }
}

/// A list property gathered from a child table.
#[derive(Clone, Debug)]
pub struct ListPlan {
    /// Index of the parent in [`Plan::vertices`].
    pub vertex: usize,
    pub name: String,
    pub table: TableName,
    pub value: PropPlan,
    /// The child's columns holding the parent's key, in key order.
    pub parent_columns: Vec<String>,
    pub order_by: Option<String>,
}

/// One endpoint of an edge table: the edge row's columns holding the vertex key, in key
/// order.
#[derive(Clone, Debug)]
pub struct EndPlan {
    pub columns: Vec<String>,
    /// Index in [`Plan::vertices`].
    pub vertex: usize,
}

/// How the edge of a row is found again (for an update or delete).
#[derive(Clone, Debug, PartialEq)]
pub enum EdgeIdentity {
    /// The row is also a vertex of one endpoint (`source` says which): the edge is the one of
    /// this label at that vertex, in that direction, whose other end is in the other
    /// endpoint's table.
    RowOwned { source: bool },
    /// The key is the endpoint columns: the edge between the two vertices.
    Link,
    /// The edge table's own key, stored on the edge as property `key.property` and found by
    /// the relationship index on (label, property).
    KeyProperty { key: KeyPlan },
}

#[derive(Clone, Debug)]
pub struct EdgePlan {
    pub alias: String,
    pub table: TableName,
    pub label: String,
    pub key: Vec<String>,
    pub source: EndPlan,
    pub destination: EndPlan,
    /// Every mapped property (with [`EdgeIdentity::KeyProperty`], a one-column key's
    /// property included).
    pub properties: Vec<PropPlan>,
    pub identity: EdgeIdentity,
}

impl EdgePlan {
    /// The composite key property of `row`'s edge (name and value), when the edge table
    /// stores one: a one-column key is an ordinary mapped property.
    pub fn stored_key(&self, row: &Row<'_>) -> Result<Option<(&str, Value)>, MirrorError> {
        let EdgeIdentity::KeyProperty { key } = &self.identity else {
            return Ok(None);
        };
        if !key.is_composite() {
            return Ok(None);
        }
        let error = |reason: String| MirrorError::Row {
            table: self.table.to_string(),
            key: row.describe(),
            reason,
        };
        match key.value_in(row, &key.columns()) {
            Ok(Some(value)) => Ok(Some((key.property.as_str(), value))),
            Ok(None) => Err(error(format!(
                "key column(s) {} NULL",
                key.columns().join(", ")
            ))),
            Err(reason) => Err(error(reason)),
        }
    }

    /// The row's identity as text values of the key columns (for the pending set).
    pub fn key_texts(&self, row: &Row<'_>) -> Vec<Option<String>> {
        self.key
            .iter()
            .map(|c| row.text(c).map(str::to_owned))
            .collect()
    }
}

/// The compiled mapping; see the module documentation.
#[derive(Clone, Debug)]
pub struct Plan {
    pub vertices: Vec<VertexPlan>,
    pub edges: Vec<EdgePlan>,
    pub lists: Vec<ListPlan>,
    /// Every source table with its catalog columns (the baseline schema changes are checked
    /// against).
    pub columns: TableColumns,
}

fn capitalised(alias: &str) -> String {
    let mut chars = alias.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Whether `a` and `b` hold the same column names (in any order).
fn same_columns(a: &[String], b: &[String]) -> bool {
    a.iter().all(|c| b.contains(c)) && b.iter().all(|c| a.contains(c))
}

fn column_type(
    columns: &TableColumns,
    table: &TableName,
    column: &str,
) -> Result<PgType, MirrorError> {
    let found = columns
        .get(table)
        .and_then(|cs| cs.iter().find(|c| c.name == column))
        .ok_or_else(|| MirrorError::Mapping(format!("table {table} has no column \"{column}\"")))?;
    PgType::scalar(found.type_oid, found.type_modifier, found.is_enum).ok_or_else(|| {
        MirrorError::Mapping(format!(
            "column \"{column}\" of {table} (type oid {}) cannot be a key",
            found.type_oid
        ))
    })
}

/// The mapped properties of an element table, as planned.
fn prop_plans(properties: &[PropertyMap]) -> Vec<PropPlan> {
    properties
        .iter()
        .map(|p| PropPlan {
            column: p.column.clone(),
            name: p.name.clone(),
            pg_type: p.pg_type.clone(),
            conversion: p.conversion,
        })
        .collect()
}

impl Plan {
    /// The labels the mirror owns (read-only to users while it runs): every vertex table's
    /// labels, including the LABEL FROM values it lists. (A LABEL FROM without a value list
    /// protects its vertices through their table's label.)
    pub fn protected_labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = self
            .vertices
            .iter()
            .flat_map(|v| {
                std::iter::once(v.graph_table.clone())
                    .chain(v.mapping.labels.iter().cloned())
                    .chain(v.label_from_labels.iter().cloned())
            })
            .collect();
        labels.sort();
        labels.dedup();
        labels
    }

    /// The relationship types the mirror owns.
    pub fn protected_edge_types(&self) -> Vec<String> {
        let mut types: Vec<String> = self.edges.iter().map(|e| e.label.clone()).collect();
        types.sort();
        types.dedup();
        types
    }

    /// Compiles a validated `graph`; `columns` must hold every source table.
    pub fn new(graph: &PropertyGraph, columns: TableColumns) -> Result<Plan, MirrorError> {
        let mut vertices: Vec<VertexPlan> = Vec::new();
        for v in &graph.vertex_tables {
            let graph_table = v
                .labels
                .first()
                .cloned()
                .unwrap_or_else(|| capitalised(&v.alias));
            if let Some(other) = vertices.iter().find(|o| o.graph_table == graph_table) {
                return Err(MirrorError::Mapping(format!(
                    "vertex tables {} and {} would both become the Plexus table {graph_table} \
                     (their first label): give one of them another first label",
                    other.alias, v.alias
                )));
            }
            let mut properties = prop_plans(&v.properties);
            let key = KeyPlan::new(&mut properties, &columns, &v.table, &v.key)?;
            let label_from_labels = v
                .label_from
                .as_ref()
                .and_then(|from| from.values.as_ref())
                .map(|values| values.iter().map(|(_, l)| l.clone()).collect())
                .unwrap_or_default();
            vertices.push(VertexPlan {
                alias: v.alias.clone(),
                table: v.table.clone(),
                graph_table,
                mapping: v.clone(),
                key,
                properties,
                label_from_labels,
            });
        }
        let mut lists = Vec::new();
        for (index, v) in graph.vertex_tables.iter().enumerate() {
            for list in &v.list_properties {
                lists.push(ListPlan {
                    vertex: index,
                    name: list.name.clone(),
                    table: list.table.clone(),
                    value: PropPlan {
                        column: list.value_column.clone(),
                        name: list.name.clone(),
                        pg_type: list.pg_type.clone(),
                        conversion: Conversion::None,
                    },
                    parent_columns: list.key.clone(),
                    order_by: list.order_by.clone(),
                });
            }
        }
        let vertex_index = |alias: &str| {
            vertices
                .iter()
                .position(|v| v.alias == alias)
                .ok_or_else(|| MirrorError::Mapping(format!("no vertex table {alias}")))
        };
        let mut edges: Vec<EdgePlan> = Vec::new();
        for e in &graph.edge_tables {
            let end = |endpoint: &crate::mapping::Endpoint| -> Result<EndPlan, MirrorError> {
                Ok(EndPlan {
                    columns: endpoint.columns.clone(),
                    vertex: vertex_index(&endpoint.vertex_table)?,
                })
            };
            let source = end(&e.source)?;
            let destination = end(&e.destination)?;
            let mut properties = prop_plans(&e.properties);
            // the row is the endpoint's vertex: the endpoint columns are that vertex table's
            // own key columns, and the edge table's key
            let owns = |end: &EndPlan| {
                vertices[end.vertex].table == e.table
                    && vertices[end.vertex].key.columns() == end.columns
                    && same_columns(&e.key, &end.columns)
            };
            let endpoint_columns: Vec<String> =
                (source.columns.iter().chain(&destination.columns).cloned()).collect();
            let identity = if owns(&source) {
                EdgeIdentity::RowOwned { source: true }
            } else if owns(&destination) {
                EdgeIdentity::RowOwned { source: false }
            } else if same_columns(&e.key, &endpoint_columns) {
                EdgeIdentity::Link
            } else {
                let key = KeyPlan::new(&mut properties, &columns, &e.table, &e.key)?;
                EdgeIdentity::KeyProperty { key }
            };
            let plan = EdgePlan {
                alias: e.alias.clone(),
                table: e.table.clone(),
                label: e.label.clone(),
                key: e.key.clone(),
                source,
                destination,
                properties,
                identity,
            };
            if let EdgeIdentity::RowOwned { source } = plan.identity
                && let Some(other) = edges.iter().find(|o| {
                    o.label == plan.label
                        && o.identity == plan.identity
                        && o.owner(source).vertex == plan.owner(source).vertex
                        && o.other(source).vertex == plan.other(source).vertex
                })
            {
                return Err(MirrorError::Mapping(format!(
                    "edge tables {} and {} both give a {} edge at the same vertex, in the same \
                     direction, to the same vertex table: the mirror could not tell their \
                     edges apart",
                    other.alias, plan.alias, plan.label
                )));
            }
            edges.push(plan);
        }
        Ok(Plan {
            vertices,
            edges,
            lists,
            columns,
        })
    }

    /// Creates the Plexus vertex tables and relationship indexes the plan needs, or checks
    /// that those that exist (a restart) match.
    pub fn create_schema(&self, db: &Database) -> Result<(), MirrorError> {
        let schema = db.schema();
        for v in &self.vertices {
            if let Some(existing) = schema
                .vertex_tables
                .iter()
                .find(|t| t.name == v.graph_table)
            {
                if existing.primary_key.as_deref() != Some(v.key.property.as_str()) {
                    return Err(MirrorError::Mapping(format!(
                        "the graph already has a vertex table {} whose primary key is {:?}, \
                         not {} as the mapping says",
                        v.graph_table, existing.primary_key, v.key.property
                    )));
                }
                continue;
            }
            let mut spec = VertexTableSpec::new(&v.graph_table)
                .property(&v.key.property, v.key.data_type())
                .primary_key(&v.key.property);
            spec.extra_labels = v.mapping.labels.iter().skip(1).cloned().collect();
            match &v.mapping.label_from {
                Some(from) if from.values.is_none() => spec.any_extra_label = true,
                Some(_) => spec
                    .extra_labels
                    .extend(v.label_from_labels.iter().cloned()),
                None => {}
            }
            if v.mapping.labels.is_empty() {
                // named after the alias, every label comes from LABEL FROM
                spec.any_extra_label = true;
            }
            db.create_vertex_table(&spec)?;
        }
        for e in &self.edges {
            let EdgeIdentity::KeyProperty { key } = &e.identity else {
                continue;
            };
            if key.is_composite() {
                continue; // lists are not indexable; see rows::find_edge
            }
            let exists = schema
                .indexes
                .iter()
                .any(|i| i.label == e.label && i.property == key.property);
            if !exists {
                match db.create_relationship_index(&e.label, &key.property, None) {
                    Ok(_) | Err(GraphError::Constraint(_)) => {}
                    Err(other) => return Err(other.into()),
                }
            }
        }
        Ok(())
    }

    /// Every column of `table` the plan reads (for the initial copy).
    pub fn columns_read(&self, table: &TableName) -> Vec<String> {
        let mut columns: Vec<String> = Vec::new();
        let mut add = |c: &str| {
            if !columns.iter().any(|x| x == c) {
                columns.push(c.to_owned());
            }
        };
        for v in self.vertices.iter().filter(|v| &v.table == table) {
            v.key.parts.iter().for_each(|p| add(&p.column));
            v.properties.iter().for_each(|p| add(&p.column));
            if let Some(from) = &v.mapping.label_from {
                add(&from.column);
            }
        }
        for e in self.edges.iter().filter(|e| &e.table == table) {
            e.key.iter().for_each(|c| add(c));
            e.source.columns.iter().for_each(|c| add(c));
            e.destination.columns.iter().for_each(|c| add(c));
            e.properties.iter().for_each(|p| add(&p.column));
        }
        for l in self.lists.iter().filter(|l| &l.table == table) {
            l.parent_columns.iter().for_each(|c| add(c));
            add(&l.value.column);
            if let Some(order) = &l.order_by {
                add(order);
            }
        }
        columns
    }
}

impl EdgePlan {
    pub fn owner(&self, source: bool) -> &EndPlan {
        if source {
            &self.source
        } else {
            &self.destination
        }
    }

    pub fn other(&self, source: bool) -> &EndPlan {
        if source {
            &self.destination
        } else {
            &self.source
        }
    }
}
