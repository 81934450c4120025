//! The mapping model: what a parsed (and then validated) `CREATE PROPERTY GRAPH` says.
//!
//! [`parse`](super::parse) fills everything the text states, with `pg_type` left
//! [`PgType::Unknown`] and defaults that need the catalog left empty (an empty `key` means
//! "the primary key", empty endpoint columns mean "the one foreign key", empty referenced
//! columns mean "the vertex key", `all_columns_except` stands for `PROPERTIES ARE ALL
//! COLUMNS`). [`validate`](super::validate) resolves all of those; a validated graph has no
//! `Unknown` type, no empty key or endpoint and no pending `all_columns_except`.

use std::fmt;

use super::types::PgType;
use super::{MappingError, Span};

/// A validated or parsed property graph: one mapping file.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyGraph {
    pub name: String,
    pub vertex_tables: Vec<VertexTable>,
    pub edge_tables: Vec<EdgeTable>,
}

/// A PostgreSQL table name, schema-qualified (`public` when the mapping does not say).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableName {
    pub schema: String,
    pub name: String,
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.schema, self.name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct VertexTable {
    /// Unique among all element tables of the graph; the table name by default.
    pub alias: String,
    pub table: TableName,
    /// The columns identifying a row (and so a vertex); the primary key by default.
    pub key: Vec<String>,
    /// Labels every row's vertex gets.
    pub labels: Vec<String>,
    /// Plexus extension: a per-row label taken from a column.
    pub label_from: Option<LabelFrom>,
    pub properties: Vec<PropertyMap>,
    /// Plexus extension: list properties gathered from child tables.
    pub list_properties: Vec<ChildList>,
    /// `Some(except)` while `PROPERTIES ARE ALL COLUMNS [EXCEPT (...)]` awaits expansion
    /// (validation expands it into `properties`).
    pub all_columns_except: Option<Vec<String>>,
    /// The table name's position.
    pub span: Span,
    /// The KEY clause's position (the table name's when the key is the default).
    pub key_span: Span,
    /// The positions of the written KEY columns (empty when the key is the default).
    pub key_spans: Vec<Span>,
}

/// `LABEL FROM column [(value AS Label, ...)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelFrom {
    pub column: String,
    /// (column value as PostgreSQL prints it, label); `None`: the value with its first
    /// letter upper-cased.
    pub values: Option<Vec<(String, String)>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PropertyMap {
    pub column: String,
    /// The property name in the graph.
    pub name: String,
    pub conversion: Conversion,
    /// The column's type; [`PgType::Unknown`] until validated.
    pub pg_type: PgType,
    pub span: Span,
}

/// A per-column conversion (Plexus extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    None,
    /// date / timestamp / timestamptz → integer milliseconds since 1970-01-01T00:00Z.
    EpochMillis,
    /// date → integer days since 1970-01-01.
    EpochDays,
}

/// `PROPERTY name LIST FROM child (value) KEY (fk, ...) [ORDER BY col]`: the values of
/// `value_column` of the child rows whose `key` equals the vertex key, as one list property.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildList {
    pub name: String,
    pub table: TableName,
    pub value_column: String,
    /// The child's columns referencing the vertex key, in the vertex key's order.
    pub key: Vec<String>,
    pub order_by: Option<String>,
    /// The value column's type (each element's); [`PgType::Unknown`] until validated.
    pub pg_type: PgType,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EdgeTable {
    pub alias: String,
    pub table: TableName,
    /// The columns identifying a row (and so an edge); the primary key by default.
    pub key: Vec<String>,
    /// The relationship type.
    pub label: String,
    pub source: Endpoint,
    pub destination: Endpoint,
    pub properties: Vec<PropertyMap>,
    /// As for [`VertexTable::all_columns_except`].
    pub all_columns_except: Option<Vec<String>>,
    pub span: Span,
    pub key_span: Span,
    pub key_spans: Vec<Span>,
}

/// `SOURCE KEY (columns) REFERENCES vertex_table (referenced_columns)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Endpoint {
    /// Columns of the edge table; empty until validation when the mapping names only the
    /// vertex table (the implicit form: the one foreign key to it).
    pub columns: Vec<String>,
    /// The referenced vertex table's alias.
    pub vertex_table: String,
    /// Columns of the vertex table: after validation, exactly its key, in key order (and
    /// `columns` in the matching order).
    pub referenced_columns: Vec<String>,
    /// The SOURCE or DESTINATION keyword's position.
    pub span: Span,
    /// The positions of the written `columns` and `referenced_columns` (empty where the
    /// mapping leaves them implicit; parallel to the columns otherwise, also after
    /// validation reorders them).
    pub column_spans: Vec<Span>,
    pub referenced_spans: Vec<Span>,
}

impl PropertyGraph {
    /// Every table the mirror must replicate (vertex, edge and child-list tables), sorted,
    /// each once.
    pub fn source_tables(&self) -> Vec<TableName> {
        let mut tables: Vec<TableName> = self
            .vertex_tables
            .iter()
            .flat_map(|v| {
                std::iter::once(v.table.clone())
                    .chain(v.list_properties.iter().map(|l| l.table.clone()))
            })
            .chain(self.edge_tables.iter().map(|e| e.table.clone()))
            .collect();
        tables.sort();
        tables.dedup();
        tables
    }

    pub fn vertex_table(&self, alias: &str) -> Option<&VertexTable> {
        self.vertex_tables.iter().find(|v| v.alias == alias)
    }

    /// The checks that need no catalog: unique aliases, endpoints naming vertex tables,
    /// matching column counts, one label per edge table, no property defined twice
    /// differently. [`parse`](super::parse) runs them; so does [`validate`](super::validate).
    pub fn check_structure(&self) -> Result<(), MappingError> {
        let mut seen: Vec<(&str, Span)> = Vec::new();
        let aliases = self
            .vertex_tables
            .iter()
            .map(|v| (v.alias.as_str(), v.span, "VERTEX"))
            .chain(
                self.edge_tables
                    .iter()
                    .map(|e| (e.alias.as_str(), e.span, "EDGE")),
            );
        for (alias, span, kind) in aliases {
            if let Some((_, first)) = seen.iter().find(|(a, _)| *a == alias) {
                return Err(MappingError::new(
                    format!(
                        "alias \"{alias}\" is already used by the element table at line {}; \
                         give this one another alias with AS",
                        first.line
                    ),
                    span,
                    format!("{kind} TABLE {alias}"),
                ));
            }
            seen.push((alias, span));
        }
        for v in &self.vertex_tables {
            let clause = format!("VERTEX TABLE {}", v.alias);
            if v.labels.is_empty() && v.label_from.is_none() {
                return Err(MappingError::new(
                    "a vertex table needs at least one label".to_owned(),
                    v.span,
                    clause,
                ));
            }
            check_unique_properties(&v.properties, &clause)?;
            for list in &v.list_properties {
                if v.properties.iter().any(|p| p.name == list.name) {
                    return Err(MappingError::new(
                        format!("property \"{}\" is defined twice", list.name),
                        list.span,
                        clause,
                    ));
                }
                if !v.key.is_empty() && list.key.len() != v.key.len() {
                    return Err(MappingError::new(
                        format!(
                            "the list's KEY has {} column(s) but the vertex key ({}) has {}",
                            list.key.len(),
                            v.key.join(", "),
                            v.key.len()
                        ),
                        list.span,
                        format!("{clause} PROPERTY {}", list.name),
                    ));
                }
            }
        }
        for e in &self.edge_tables {
            let clause = format!("EDGE TABLE {}", e.alias);
            check_unique_properties(&e.properties, &clause)?;
            for (endpoint, which) in [(&e.source, "SOURCE"), (&e.destination, "DESTINATION")] {
                let clause = format!("{clause} {which} KEY");
                let Some(vertex) = self.vertex_table(&endpoint.vertex_table) else {
                    let known: Vec<&str> = self
                        .vertex_tables
                        .iter()
                        .map(|v| v.alias.as_str())
                        .collect();
                    return Err(MappingError::new(
                        format!(
                            "no vertex table \"{}\" (vertex tables: {})",
                            endpoint.vertex_table,
                            known.join(", ")
                        ),
                        endpoint.span,
                        clause,
                    ));
                };
                let referenced = if endpoint.referenced_columns.is_empty() {
                    &vertex.key
                } else {
                    &endpoint.referenced_columns
                };
                if !endpoint.columns.is_empty()
                    && !referenced.is_empty()
                    && endpoint.columns.len() != referenced.len()
                {
                    return Err(MappingError::new(
                        format!(
                            "{} column(s) reference {} column(s) of {}",
                            endpoint.columns.len(),
                            referenced.len(),
                            vertex.alias
                        ),
                        endpoint.span,
                        clause,
                    ));
                }
            }
        }
        Ok(())
    }
}

fn check_unique_properties(properties: &[PropertyMap], clause: &str) -> Result<(), MappingError> {
    for (i, p) in properties.iter().enumerate() {
        if let Some(first) = properties[..i].iter().find(|q| q.name == p.name) {
            return Err(MappingError::new(
                format!(
                    "property \"{}\" is defined twice (column {} at line {}, column {} here)",
                    p.name, first.column, first.span.line, p.column
                ),
                p.span,
                clause.to_owned(),
            ));
        }
    }
    Ok(())
}

impl VertexTable {
    /// The labels of one row's vertex: the static labels plus, with `LABEL FROM`, the label
    /// the row's value selects. `label_value` is the label column's text (`None`: SQL NULL);
    /// `key` the row's key values as text, for the error message. An unlisted or NULL
    /// value is a row error naming the table, the key and the value.
    pub fn labels_for_row(
        &self,
        label_value: Option<&str>,
        key: &[&str],
    ) -> Result<Vec<String>, String> {
        let mut labels = self.labels.clone();
        let Some(from) = &self.label_from else {
            return Ok(labels);
        };
        let row = || {
            format!(
                "table {} row ({})=({})",
                self.table,
                self.key.join(", "),
                key.join(", ")
            )
        };
        let Some(value) = label_value else {
            return Err(format!(
                "{}: label column \"{}\" is NULL",
                row(),
                from.column
            ));
        };
        let label = match &from.values {
            Some(values) => match values.iter().find(|(v, _)| v == value) {
                Some((_, label)) => label.clone(),
                None => {
                    let listed: Vec<&str> = values.iter().map(|(v, _)| v.as_str()).collect();
                    return Err(format!(
                        "{}: label column \"{}\" has value {value:?}, which LABEL FROM does \
                         not list ({})",
                        row(),
                        from.column,
                        listed.join(", ")
                    ));
                }
            },
            None => {
                let mut chars = value.chars();
                match chars.next() {
                    Some(first) => first.to_uppercase().chain(chars).collect(),
                    None => {
                        return Err(format!(
                            "{}: label column \"{}\" is empty",
                            row(),
                            from.column
                        ));
                    }
                }
            }
        };
        if !labels.contains(&label) {
            labels.push(label);
        }
        Ok(labels)
    }
}
