//! Validation of a parsed mapping against the live PostgreSQL catalog.
//!
//! Reads `pg_class`, `pg_attribute`, `pg_type`, `pg_index` and `pg_constraint` (one small
//! query set per mapped table, cached), then checks every element table in order and fills
//! what the catalog decides: default keys (the primary key), implicit endpoints (the one
//! foreign key), `PROPERTIES ARE ALL COLUMNS`, and every column's [`PgType`].

use std::collections::HashMap;

use tokio_postgres::Client;

use super::model::{
    ChildList, Conversion, EdgeTable, Endpoint, PropertyGraph, PropertyMap, TableName, VertexTable,
};
use super::types::PgType;
use super::{MappingError, Span};

/// How a table identifies the old row of an update or delete (`pg_class.relreplident`).
#[derive(Clone, Debug, PartialEq)]
enum ReplicaIdentity {
    /// `f`: the whole old row.
    Full,
    /// `d` with a primary key, or `i`: these columns.
    Columns(Vec<String>),
    /// `n`.
    Nothing,
    /// `d` on a table without a primary key: nothing either.
    DefaultWithoutKey,
}

struct Column {
    name: String,
    /// `format_type` text, for messages (`numeric(12,2)`, `point`).
    type_text: String,
    /// `None`: a type the mirror does not support.
    pg_type: Option<PgType>,
    not_null: bool,
}

struct TableInfo {
    oid: i64,
    /// `r` table, `p` partitioned table, others are refused.
    relkind: String,
    columns: Vec<Column>,
    primary_key: Option<Vec<String>>,
    /// Column lists of the unique indexes without predicate or expression (the primary key
    /// among them).
    unique_keys: Vec<Vec<String>>,
    identity: ReplicaIdentity,
}

impl TableInfo {
    fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    fn column_names(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn covers(&self, columns: &[String]) -> bool {
        match &self.identity {
            ReplicaIdentity::Full => true,
            ReplicaIdentity::Columns(identity) => columns.iter().all(|c| identity.contains(c)),
            ReplicaIdentity::Nothing | ReplicaIdentity::DefaultWithoutKey => false,
        }
    }
}

/// Checks `graph` against the database `client` is connected to and returns it with every
/// default resolved and every column typed; the first problem found is the error.
pub async fn validate(
    graph: PropertyGraph,
    client: &Client,
) -> Result<PropertyGraph, MappingError> {
    graph.check_structure()?;
    let mut v = Validator {
        client,
        tables: HashMap::new(),
    };
    let mut vertex_tables = Vec::with_capacity(graph.vertex_tables.len());
    for vertex in graph.vertex_tables {
        vertex_tables.push(v.vertex_table(vertex).await?);
    }
    let mut edge_tables = Vec::with_capacity(graph.edge_tables.len());
    for edge in graph.edge_tables {
        edge_tables.push(v.edge_table(edge, &vertex_tables).await?);
    }
    let graph = PropertyGraph {
        name: graph.name,
        vertex_tables,
        edge_tables,
    };
    debug_assert!(graph.check_structure().is_ok());
    debug_assert!(
        is_resolved(&graph),
        "validate left a default unresolved: {graph:?}"
    );
    Ok(graph)
}

/// The module's invariants of a validated graph: every key and endpoint resolved, every
/// type known, no pending ALL COLUMNS.
fn is_resolved(graph: &PropertyGraph) -> bool {
    let typed =
        |properties: &[PropertyMap]| properties.iter().all(|p| p.pg_type != PgType::Unknown);
    let vertices_ok = graph.vertex_tables.iter().all(|v| {
        !v.key.is_empty()
            && v.all_columns_except.is_none()
            && typed(&v.properties)
            && v.list_properties
                .iter()
                .all(|l| l.pg_type != PgType::Unknown && l.key.len() == v.key.len())
    });
    let edges_ok = graph.edge_tables.iter().all(|e| {
        let endpoint_ok = |endpoint: &Endpoint| {
            graph.vertex_table(&endpoint.vertex_table).is_some_and(|v| {
                endpoint.referenced_columns == v.key && endpoint.columns.len() == v.key.len()
            })
        };
        !e.key.is_empty()
            && e.all_columns_except.is_none()
            && typed(&e.properties)
            && endpoint_ok(&e.source)
            && endpoint_ok(&e.destination)
    });
    vertices_ok && edges_ok
}

struct Validator<'a> {
    client: &'a Client,
    tables: HashMap<TableName, Option<TableInfo>>,
}

fn err(message: String, span: Span, clause: &str) -> MappingError {
    MappingError::new(message, span, clause.to_owned())
}

impl Validator<'_> {
    /// The table's catalog entry (loaded once), or an error naming it at `span`.
    async fn table(
        &mut self,
        name: &TableName,
        span: Span,
        clause: &str,
    ) -> Result<&TableInfo, MappingError> {
        if !self.tables.contains_key(name) {
            let info = load_table(self.client, name).await.map_err(|e| {
                err(
                    format!("reading the catalog for {name} failed: {e}"),
                    span,
                    clause,
                )
            })?;
            self.tables.insert(name.clone(), info);
        }
        match self.tables.get(name) {
            Some(Some(info)) if info.relkind == "r" || info.relkind == "p" => Ok(info),
            Some(Some(info)) => Err(err(
                format!(
                    "{name} is not a table (relkind {}); only tables can be mirrored",
                    info.relkind
                ),
                span,
                clause,
            )),
            _ => Err(err(format!("table {name} does not exist"), span, clause)),
        }
    }

    /// Loads an element table's catalog entry (see [`Validator::table`]) and resolves its KEY
    /// (see [`resolve_key`]); `clause` names the element table.
    async fn element_key(
        &mut self,
        element: &mut impl Element,
        clause: &str,
        vertex: bool,
    ) -> Result<&TableInfo, MappingError> {
        let parts = element.parts();
        let info = self.table(parts.table, parts.span, clause).await?;
        *parts.key = resolve_key(
            info,
            parts.table,
            std::mem::take(parts.key),
            parts.key_spans,
            &format!("{clause} KEY"),
            vertex,
        )?;
        Ok(info)
    }

    async fn vertex_table(&mut self, mut vertex: VertexTable) -> Result<VertexTable, MappingError> {
        let clause = format!("VERTEX TABLE {}", vertex.alias);
        let info = self.element_key(&mut vertex, &clause, true).await?;
        if let Some(from) = &vertex.label_from {
            let clause = format!("{clause} LABEL FROM");
            let ty = typed_column(info, &vertex.table, &from.column, from.span, &clause)?;
            if matches!(ty, PgType::Array(_)) {
                return Err(err(
                    format!("the label column \"{}\" is an array", from.column),
                    from.span,
                    &clause,
                ));
            }
        }
        element_properties(info, &mut vertex, &clause)?;
        let key_types: Vec<PgType> = vertex
            .key
            .iter()
            .map(|k| {
                info.column(k)
                    .and_then(|c| c.pg_type.clone())
                    .unwrap_or(PgType::Unknown)
            })
            .collect();
        let mut lists = Vec::with_capacity(vertex.list_properties.len());
        for list in std::mem::take(&mut vertex.list_properties) {
            lists.push(self.child_list(list, &vertex, &key_types, &clause).await?);
        }
        vertex.list_properties = lists;
        Ok(vertex)
    }

    async fn child_list(
        &mut self,
        mut list: ChildList,
        vertex: &VertexTable,
        key_types: &[PgType],
        clause: &str,
    ) -> Result<ChildList, MappingError> {
        let clause = format!("{clause} PROPERTY {}", list.name);
        let span = list.span;
        let info = self.table(&list.table, span, &clause).await?;
        let ty = typed_column(info, &list.table, &list.value_column, span, &clause)?;
        if matches!(ty, PgType::Array(_)) {
            return Err(err(
                format!(
                    "the list's value column \"{}\" is an array (lists of lists are not supported)",
                    list.value_column
                ),
                span,
                &clause,
            ));
        }
        list.pg_type = ty;
        if list.key.len() != vertex.key.len() {
            return Err(err(
                format!(
                    "the list's KEY ({}) must reference the vertex key ({}): same number of columns",
                    list.key.join(", "),
                    vertex.key.join(", ")
                ),
                span,
                &clause,
            ));
        }
        for ((column, key_type), key) in list.key.iter().zip(key_types).zip(&vertex.key) {
            let ty = typed_column(info, &list.table, column, span, &clause)?;
            if ty != *key_type {
                return Err(err(
                    format!(
                        "column \"{column}\" of {} ({ty:?}) cannot reference the vertex key column \
                         \"{key}\" ({key_type:?})",
                        list.table
                    ),
                    span,
                    &clause,
                ));
            }
        }
        let mut needed = list.key.clone();
        needed.push(list.value_column.clone());
        if let Some(order) = &list.order_by {
            typed_column(info, &list.table, order, span, &clause)?;
            needed.push(order.clone());
        }
        check_identity(
            info,
            &list.table,
            &needed,
            "the list's KEY, value and ORDER BY columns",
            span,
            &clause,
        )?;
        Ok(list)
    }

    /// The entry of a table [`Validator::table`] loaded and accepted before (every vertex
    /// table's, once the vertex tables are validated).
    fn loaded(
        &self,
        name: &TableName,
        span: Span,
        clause: &str,
    ) -> Result<&TableInfo, MappingError> {
        match self.tables.get(name) {
            Some(Some(info)) => Ok(info),
            _ => Err(err(format!("table {name} does not exist"), span, clause)),
        }
    }

    async fn edge_table(
        &mut self,
        mut edge: EdgeTable,
        vertices: &[VertexTable],
    ) -> Result<EdgeTable, MappingError> {
        let clause = format!("EDGE TABLE {}", edge.alias);
        self.element_key(&mut edge, &clause, false).await?;
        for source in [true, false] {
            let which = if source { "SOURCE" } else { "DESTINATION" };
            let clause = format!("{clause} {which} KEY");
            let endpoint = if source {
                &mut edge.source
            } else {
                &mut edge.destination
            };
            let vertex = find_vertex(vertices, &endpoint.vertex_table, endpoint.span, &clause)?;
            if endpoint.columns.is_empty() {
                let (columns, referenced) = self
                    .only_foreign_key(&edge.table, vertex, endpoint.span, &clause)
                    .await?;
                endpoint.columns = columns;
                endpoint.referenced_columns = referenced;
            }
            let info = self.loaded(&edge.table, edge.span, &clause)?;
            let vertex_info = self.loaded(&vertex.table, vertex.span, &clause)?;
            resolve_endpoint(info, &edge.table, endpoint, vertex, vertex_info, &clause)?;
        }
        let info = self.loaded(&edge.table, edge.span, &clause)?;
        element_properties(info, &mut edge, &clause)?;
        Ok(edge)
    }

    /// The implicit endpoint: the one foreign key from the edge table to the vertex table.
    async fn only_foreign_key(
        &self,
        edge_table: &TableName,
        vertex: &VertexTable,
        span: Span,
        clause: &str,
    ) -> Result<(Vec<String>, Vec<String>), MappingError> {
        let edge_oid = self.loaded(edge_table, span, clause)?.oid;
        let vertex_oid = self.loaded(&vertex.table, vertex.span, clause)?.oid;
        let rows = self
            .client
            .query(FOREIGN_KEYS_SQL, &[&edge_oid, &vertex_oid])
            .await
            .map_err(|e| {
                err(
                    format!("reading the foreign keys of {edge_table} failed: {e}"),
                    span,
                    clause,
                )
            })?;
        let mut keys = Vec::new();
        for row in rows {
            let columns: Vec<String> = row
                .try_get(0)
                .map_err(|e| err(e.to_string(), span, clause))?;
            let referenced: Vec<String> = row
                .try_get(1)
                .map_err(|e| err(e.to_string(), span, clause))?;
            keys.push((columns, referenced));
        }
        match keys.len() {
            1 => Ok(keys.remove(0)),
            n => Err(err(
                format!(
                    "{edge_table} has {n} foreign keys to {} (vertex table {}); the implicit form \
                     needs exactly one: write KEY (...) REFERENCES {} (...)",
                    vertex.table, vertex.alias, vertex.alias
                ),
                span,
                clause,
            )),
        }
    }
}

fn find_vertex<'v>(
    vertices: &'v [VertexTable],
    alias: &str,
    span: Span,
    clause: &str,
) -> Result<&'v VertexTable, MappingError> {
    vertices
        .iter()
        .find(|v| v.alias == alias)
        .ok_or_else(|| err(format!("no vertex table \"{alias}\""), span, clause))
}

/// The column's type, or an error when it is missing or of an unsupported type.
fn typed_column(
    info: &TableInfo,
    table: &TableName,
    name: &str,
    span: Span,
    clause: &str,
) -> Result<PgType, MappingError> {
    let Some(column) = info.column(name) else {
        return Err(err(
            format!(
                "column \"{name}\" does not exist in table {table} (columns: {})",
                info.column_names()
            ),
            span,
            clause,
        ));
    };
    column.pg_type.clone().ok_or_else(|| {
        err(
            format!(
                "column \"{name}\" of table {table} has type {}, which the mirror does not support \
                 (integers, numeric, real, double precision, text, varchar, char, name, uuid, \
                 boolean, date, timestamp, timestamptz, json, jsonb, enums and arrays of these); \
                 leave it out of the properties",
                column.type_text
            ),
            span,
            clause,
        )
    })
}

/// Where a KEY clause and its columns are written.
#[derive(Clone, Copy)]
struct KeySpans<'a> {
    clause: Span,
    columns: &'a [Span],
}

/// What vertex and edge tables alike resolve against the catalog: their table, KEY and
/// properties.
struct ElementParts<'a> {
    table: &'a TableName,
    span: Span,
    key: &'a mut Vec<String>,
    key_spans: KeySpans<'a>,
    properties: &'a mut Vec<PropertyMap>,
    all_columns_except: &'a mut Option<Vec<String>>,
}

/// A vertex or edge table.
trait Element {
    fn parts(&mut self) -> ElementParts<'_>;
}

/// Implements [`Element`] for element table types, which share these fields.
macro_rules! impl_element {
    ($($element:ty),*) => {$(
        impl Element for $element {
            fn parts(&mut self) -> ElementParts<'_> {
                ElementParts {
                    table: &self.table,
                    span: self.span,
                    key: &mut self.key,
                    key_spans: KeySpans {
                        clause: self.key_span,
                        columns: &self.key_spans,
                    },
                    properties: &mut self.properties,
                    all_columns_except: &mut self.all_columns_except,
                }
            }
        }
    )*};
}

impl_element!(VertexTable, EdgeTable);

/// Resolves an element table's properties (see [`resolve_properties`]); `clause` names the
/// element table.
fn element_properties(
    info: &TableInfo,
    element: &mut impl Element,
    clause: &str,
) -> Result<(), MappingError> {
    let parts = element.parts();
    *parts.properties = resolve_properties(
        info,
        parts.table,
        std::mem::take(parts.properties),
        parts.all_columns_except.take(),
        parts.span,
        &format!("{clause} PROPERTIES"),
    )?;
    Ok(())
}

/// KEY columns: the given ones or the primary key; each typed, together unique and not
/// null, and covered by the replica identity.
fn resolve_key(
    info: &TableInfo,
    table: &TableName,
    key: Vec<String>,
    spans: KeySpans<'_>,
    clause: &str,
    vertex: bool,
) -> Result<Vec<String>, MappingError> {
    let span = spans.clause;
    let key = if key.is_empty() {
        match &info.primary_key {
            Some(pk) => pk.clone(),
            None => {
                let what = if vertex { "vertex" } else { "edge" };
                return Err(err(
                    format!(
                        "table {table} has no primary key: give the {what} table a KEY (...) of unique columns"
                    ),
                    span,
                    clause,
                ));
            }
        }
    } else {
        key
    };
    for (i, column) in key.iter().enumerate() {
        let column_span = spans.columns.get(i).copied().unwrap_or(span);
        let ty = typed_column(info, table, column, column_span, clause)?;
        if matches!(ty, PgType::Array(_)) {
            return Err(err(
                format!("key column \"{column}\" is an array"),
                column_span,
                clause,
            ));
        }
    }
    let unique = info
        .unique_keys
        .iter()
        .any(|u| u.len() == key.len() && u.iter().all(|c| key.contains(c)));
    if !unique {
        return Err(err(
            format!(
                "KEY ({}) is not unique in {table}: it must be the primary key or have a unique \
                 index (e.g. ALTER TABLE {table} ADD UNIQUE ({}))",
                key.join(", "),
                key.join(", ")
            ),
            span,
            clause,
        ));
    }
    if let Some(at) = key
        .iter()
        .position(|c| info.column(c).is_some_and(|c| !c.not_null))
    {
        let nullable = &key[at];
        return Err(err(
            format!(
                "key column \"{nullable}\" of {table} may be NULL: declare it NOT NULL (ALTER TABLE {table} ALTER COLUMN {nullable} SET NOT NULL)"
            ),
            spans.columns.get(at).copied().unwrap_or(span),
            clause,
        ));
    }
    check_identity(info, table, &key, "the KEY", span, clause)?;
    Ok(key)
}

/// The replica identity must send `needed` in the old row of an update or delete.
fn check_identity(
    info: &TableInfo,
    table: &TableName,
    needed: &[String],
    what: &str,
    span: Span,
    clause: &str,
) -> Result<(), MappingError> {
    match &info.identity {
        ReplicaIdentity::Nothing => Err(err(
            format!(
                "table {table} has REPLICA IDENTITY NOTHING, so its updates and deletes cannot be \
                 mirrored; fix: ALTER TABLE {table} REPLICA IDENTITY FULL; (or DEFAULT with a primary key)"
            ),
            span,
            clause,
        )),
        ReplicaIdentity::DefaultWithoutKey => Err(err(
            format!(
                "table {table} has no primary key, so PostgreSQL identifies no row for its updates \
                 and deletes; fix: add a primary key, or ALTER TABLE {table} REPLICA IDENTITY FULL;"
            ),
            span,
            clause,
        )),
        _ if info.covers(needed) => Ok(()),
        _ => Err(err(
            format!(
                "the replica identity of {table} does not include {what} ({}), which the mirror \
                 needs from the old row of an update or delete; fix: ALTER TABLE {table} REPLICA \
                 IDENTITY FULL; (or make those columns the primary key)",
                needed.join(", ")
            ),
            span,
            clause,
        )),
    }
}

/// Expands ALL COLUMNS, checks every property column and conversion, fills `pg_type`.
fn resolve_properties(
    info: &TableInfo,
    table: &TableName,
    mut properties: Vec<PropertyMap>,
    all_columns_except: Option<Vec<String>>,
    span: Span,
    clause: &str,
) -> Result<Vec<PropertyMap>, MappingError> {
    if let Some(except) = all_columns_except {
        // an excepted column may have any type; it only has to exist
        if let Some(missing) = except.iter().find(|c| info.column(c).is_none()) {
            return Err(err(
                format!(
                    "EXCEPT names column \"{missing}\", which does not exist in table {table} (columns: {})",
                    info.column_names()
                ),
                span,
                clause,
            ));
        }
        for column in info.columns.iter().filter(|c| !except.contains(&c.name)) {
            if !properties.iter().any(|p| p.name == column.name) {
                properties.push(PropertyMap {
                    column: column.name.clone(),
                    name: column.name.clone(),
                    conversion: Conversion::None,
                    pg_type: PgType::Unknown,
                    span,
                });
            }
        }
    }
    for p in &mut properties {
        let ty = typed_column(info, table, &p.column, p.span, clause)?;
        if !ty.accepts(p.conversion) {
            let (name, allowed) = match p.conversion {
                Conversion::EpochDays => ("EPOCH_DAYS", "date"),
                _ => ("EPOCH_MILLIS", "date, timestamp and timestamptz"),
            };
            let type_text = info
                .column(&p.column)
                .map(|c| c.type_text.as_str())
                .unwrap_or("?");
            return Err(err(
                format!(
                    "{name} applies to {allowed} columns; column \"{}\" of {table} has type {type_text}",
                    p.column
                ),
                p.span,
                clause,
            ));
        }
        p.pg_type = ty;
    }
    Ok(properties)
}

/// Checks an explicit endpoint: its columns exist, the referenced columns are exactly the
/// vertex key (reordered to key order), types match pairwise.
fn resolve_endpoint(
    info: &TableInfo,
    table: &TableName,
    endpoint: &mut Endpoint,
    vertex: &VertexTable,
    vertex_info: &TableInfo,
    clause: &str,
) -> Result<(), MappingError> {
    let span = endpoint.span;
    if endpoint.referenced_columns.is_empty() {
        endpoint.referenced_columns = vertex.key.clone();
    }
    let same_set = endpoint.referenced_columns.len() == vertex.key.len()
        && vertex
            .key
            .iter()
            .all(|k| endpoint.referenced_columns.contains(k));
    if !same_set {
        let stray = endpoint
            .referenced_columns
            .iter()
            .position(|r| !vertex.key.contains(r));
        let span = stray
            .and_then(|at| endpoint.referenced_spans.get(at))
            .copied()
            .unwrap_or(span);
        return Err(err(
            format!(
                "REFERENCES {} ({}) must name exactly that vertex table's KEY ({})",
                vertex.alias,
                endpoint.referenced_columns.join(", "),
                vertex.key.join(", ")
            ),
            span,
            clause,
        ));
    }
    if endpoint.columns.len() != vertex.key.len() {
        return Err(err(
            format!(
                "{} column(s) reference the {} key column(s) of {}",
                endpoint.columns.len(),
                vertex.key.len(),
                vertex.alias
            ),
            span,
            clause,
        ));
    }
    let mut columns = Vec::with_capacity(vertex.key.len());
    let mut column_spans = Vec::with_capacity(endpoint.column_spans.len());
    let mut referenced_spans = Vec::with_capacity(endpoint.referenced_spans.len());
    for key in &vertex.key {
        // (the same-set check above found every key column among the referenced ones)
        let Some(at) = endpoint.referenced_columns.iter().position(|r| r == key) else {
            continue;
        };
        let column = endpoint.columns[at].clone();
        let column_span = endpoint.column_spans.get(at).copied();
        let ty = typed_column(info, table, &column, column_span.unwrap_or(span), clause)?;
        let key_ty = typed_column(vertex_info, &vertex.table, key, span, clause)?;
        if ty != key_ty {
            return Err(err(
                format!(
                    "column \"{column}\" of {table} ({ty:?}) cannot reference \"{key}\" of {} ({key_ty:?})",
                    vertex.table
                ),
                column_span.unwrap_or(span),
                clause,
            ));
        }
        columns.push(column);
        column_spans.extend(column_span);
        referenced_spans.extend(endpoint.referenced_spans.get(at).copied());
    }
    debug_assert_eq!(columns.len(), vertex.key.len());
    endpoint.columns = columns;
    endpoint.column_spans = column_spans;
    endpoint.referenced_spans = referenced_spans;
    endpoint.referenced_columns = vertex.key.clone();
    Ok(())
}

const TABLE_SQL: &str = "SELECT c.oid::int8, c.relkind::text, c.relreplident::text \
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE n.nspname::text = $1::text AND c.relname::text = $2::text";

const COLUMNS_SQL: &str = "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), \
       a.atttypid::int8, a.atttypmod, t.typtype::text, t.typcategory::text, t.typelem::int8, \
       coalesce(e.typtype::text, ''), a.attnotnull \
     FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
       LEFT JOIN pg_type e ON e.oid = t.typelem \
     WHERE a.attrelid = $1::int8::oid AND a.attnum > 0 AND NOT a.attisdropped \
     ORDER BY a.attnum";

const INDEXES_SQL: &str = "SELECT i.indisprimary, i.indisreplident, \
       ARRAY(SELECT a.attname::text \
             FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord) \
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum \
             WHERE k.ord <= i.indnkeyatts ORDER BY k.ord) \
     FROM pg_index i \
     WHERE i.indrelid = $1::int8::oid AND i.indisunique AND i.indisvalid \
       AND i.indpred IS NULL AND i.indexprs IS NULL";

const FOREIGN_KEYS_SQL: &str = "SELECT \
       ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord) \
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.ord), \
       ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, ord) \
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.ord) \
     FROM pg_constraint c \
     WHERE c.contype = 'f' AND c.conrelid = $1::int8::oid AND c.confrelid = $2::int8::oid";

/// The catalog entry of `name`, `None` when no relation has that name.
async fn load_table(
    client: &Client,
    name: &TableName,
) -> Result<Option<TableInfo>, tokio_postgres::Error> {
    let Some(row) = client
        .query_opt(TABLE_SQL, &[&name.schema, &name.name])
        .await?
    else {
        return Ok(None);
    };
    let oid: i64 = row.try_get(0)?;
    let relkind: String = row.try_get(1)?;
    let replident: String = row.try_get(2)?;
    let mut columns = Vec::new();
    for row in client.query(COLUMNS_SQL, &[&oid]).await? {
        let type_oid: i64 = row.try_get(2)?;
        let typmod: i32 = row.try_get(3)?;
        let typtype: String = row.try_get(4)?;
        let category: String = row.try_get(5)?;
        let element: i64 = row.try_get(6)?;
        let element_typtype: String = row.try_get(7)?;
        let pg_type = if category == "A" && element != 0 {
            u32::try_from(element)
                .ok()
                .and_then(|e| PgType::scalar(e, typmod, element_typtype == "e"))
                .map(|e| PgType::Array(Box::new(e)))
        } else {
            u32::try_from(type_oid)
                .ok()
                .and_then(|t| PgType::scalar(t, typmod, typtype == "e"))
        };
        columns.push(Column {
            name: row.try_get(0)?,
            type_text: row.try_get(1)?,
            pg_type,
            not_null: row.try_get(8)?,
        });
    }
    let mut primary_key = None;
    let mut identity_index = None;
    let mut unique_keys = Vec::new();
    for row in client.query(INDEXES_SQL, &[&oid]).await? {
        let is_primary: bool = row.try_get(0)?;
        let is_identity: bool = row.try_get(1)?;
        let key: Vec<String> = row.try_get(2)?;
        if is_primary {
            primary_key = Some(key.clone());
        }
        if is_identity {
            identity_index = Some(key.clone());
        }
        unique_keys.push(key);
    }
    let identity = match (replident.as_str(), &primary_key, identity_index) {
        ("f", _, _) => ReplicaIdentity::Full,
        ("d", Some(pk), _) => ReplicaIdentity::Columns(pk.clone()),
        ("d", None, _) => ReplicaIdentity::DefaultWithoutKey,
        ("i", _, Some(index)) => ReplicaIdentity::Columns(index),
        // 'n', or an identity index that was dropped
        _ => ReplicaIdentity::Nothing,
    };
    Ok(Some(TableInfo {
        oid,
        relkind,
        columns,
        primary_key,
        unique_keys,
        identity,
    }))
}
