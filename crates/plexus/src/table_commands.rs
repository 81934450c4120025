//! Table and constraint commands on a connection: Kùzu's table DDL and Neo4j's key
//! constraints, both onto the declared tables of `plexus_txn::schema`.
//!
//! They are parsed by `plexus_cypher::parse_command` (`parser::table`) and carried out here,
//! outside the query pipeline: like an index, a table is a catalog change, durable at once and
//! not part of any transaction (see `plexus_storage::catalog`).
//!
//! TABLES
//! ======
//! - `CREATE NODE TABLE Person(id INT64, name STRING, PRIMARY KEY (id))` declares the vertex
//!   table `Person` — the table of every node whose first label with a table is `Person` —
//!   with typed columns and an optional primary key (required on every node and unique; the
//!   machinery behind `Database::create_vertex_table`). Like a Kùzu node, a node of a declared
//!   table carries no other label. The key is `INT64` (or a narrower integer name), `STRING`,
//!   `DATE` or `TIMESTAMP`.
//! - `CREATE REL TABLE Knows(FROM Person TO Person [, FROM …], since DATE)` declares one edge
//!   table per `FROM … TO …` pair, all of type `Knows`, with typed columns; the node tables
//!   must exist. Relationships between other tables are not refused: they go to schema-free
//!   edge tables, as before.
//! - Column types are mapped onto `DataType`: `INT64`, `INT32`, `INT16`, `INT8` → `INT64`
//!   (the narrower names are not range-checked), `DOUBLE`, `FLOAT` → `FLOAT64`, `STRING`,
//!   `BOOL`/`BOOLEAN`, and `DATE`, `TIMESTAMP` (a datetime with an offset or zone, as
//!   `datetime()` makes) and `INTERVAL` (a duration) — stored as value columns whose kind
//!   every write checks (`DataType::accepts`).
//! - `DROP TABLE` is refused (`TableDropNotSupported`): the catalog has no operation that
//!   removes a table yet. `DROP TABLE IF EXISTS` of a name with no table does nothing.
//! - `SHOW TABLES` answers one row per table, vertex tables then edge tables, in creation
//!   order, like Kùzu's `CALL show_tables()`: [`TABLE_COLUMNS`] — `name`; `type`, `'NODE'` or
//!   `'REL'`; `declared` (false for the schema-free tables that first use of a label or
//!   relationship type creates); `primaryKey` (null if none, and for REL tables);
//!   `properties`, the declared columns as `'name TYPE'` strings; `from` and `to`, the node
//!   tables of a REL table (null for NODE tables; `''` for the
//!   table of unlabelled nodes). A REL table with several pairs has a row
//!   per pair.
//!
//! CONSTRAINTS
//! ===========
//! A key constraint is a declared table's primary key, so both Neo4j forms — `IS UNIQUE` and
//! `IS NODE KEY` — give the stricter node-key semantics: the property is required and unique.
//! `CREATE CONSTRAINT FOR (p:Person) REQUIRE p.id IS UNIQUE` on a label with no table
//! declares the table `Person` with the one column `id` (of any type) as its key; its nodes
//! may carry other labels and other properties, as in Neo4j. On a declared table whose key is
//! that property it changes nothing (an error without `IF NOT EXISTS`); on any other table it
//! is refused: a key cannot be added to a table that exists. The name of a constraint is not
//! kept: `SHOW CONSTRAINTS` ([`CONSTRAINT_COLUMNS`]) lists each key as
//! `constraint_<Label>_<property>`, type `'NODE_KEY'`, entity type `'NODE'`. `DROP CONSTRAINT`
//! is refused for a key (`ConstraintDropNotSupported`) and is an error (or nothing, with
//! `IF EXISTS`) for any other name.
//!
//! REFUSALS
//! ========
//! A label or type first used schema-free already has a table — the one its nodes or
//! relationships went to — which a declaration cannot replace (`SchemaFreeTableExists`); nor
//! can a label that nodes of other tables carried (`LabelInUse`: their keys would not be
//! checked). Errors
//! about a name point at it in the statement. Inside an explicit transaction every command
//! but `SHOW` is refused (`SchemaCommandInTransaction`) and the transaction stays open.

use crate::schema::{EdgeTableSchema, Schema, VertexTableSchema};
use plexus_cypher::ast::{ColumnDef, ColumnType, Ident, Span, TableCommand};
use plexus_exec::{ErrorClass, QueryError, QueryResult, Value};
use plexus_txn::{TxnManager, VertexTableSpec};
use plexus_types::DataType;
use std::collections::HashSet;

/// The columns of `SHOW TABLES` (see TABLES).
pub(crate) const TABLE_COLUMNS: [&str; 7] = [
    "name",
    "type",
    "declared",
    "primaryKey",
    "properties",
    "from",
    "to",
];

/// The columns of `SHOW CONSTRAINTS` (see CONSTRAINTS).
pub(crate) const CONSTRAINT_COLUMNS: [&str; 5] =
    ["name", "type", "entityType", "labelsOrTypes", "properties"];

/// Carries out a table or constraint command (see the module doc); `SHOW` commands answer
/// rows, the others none (`CREATE CONSTRAINT` counts the constraint it added).
pub(crate) fn run_table_command(
    manager: &TxnManager,
    command: TableCommand,
    in_transaction: bool,
) -> Result<QueryResult, QueryError> {
    let schema = Schema::of(&manager.catalog());
    let ddl = Ddl { manager, schema };
    let mut result = QueryResult::default();
    match command {
        TableCommand::ShowTables => return Ok(ddl.show_tables()),
        TableCommand::ShowConstraints => return Ok(ddl.show_constraints()),
        _ if in_transaction => {
            return Err(QueryError::runtime(
                ErrorClass::SemanticError,
                "SchemaCommandInTransaction",
                "table and constraint commands cannot run inside an explicit transaction; \
                 COMMIT or ROLLBACK first (the transaction is still open)",
            ));
        }
        TableCommand::CreateNodeTable {
            name,
            if_not_exists,
            columns,
            primary_key,
        } => ddl.create_node_table(&name, if_not_exists, &columns, primary_key.as_ref())?,
        TableCommand::CreateRelTable {
            name,
            if_not_exists,
            connections,
            columns,
        } => ddl.create_rel_table(&name, if_not_exists, &connections, &columns)?,
        TableCommand::DropTable { name, if_exists } => ddl.drop_table(&name, if_exists)?,
        TableCommand::CreateConstraint {
            if_not_exists,
            label,
            property,
            ..
        } => {
            result.stats.constraints_added =
                ddl.create_constraint(&label, &property, if_not_exists)?;
        }
        TableCommand::DropConstraint { name, if_exists } => {
            ddl.drop_constraint(&name, if_exists)?
        }
    }
    Ok(result)
}

/// The storage type of a declared column type (see TABLES).
fn data_type(column_type: ColumnType) -> DataType {
    match column_type {
        ColumnType::Int64 | ColumnType::Int32 | ColumnType::Int16 | ColumnType::Int8 => {
            DataType::Int64
        }
        ColumnType::Double | ColumnType::Float => DataType::Float64,
        ColumnType::String => DataType::String,
        ColumnType::Bool => DataType::Bool,
        ColumnType::Date => DataType::Date,
        ColumnType::Timestamp => DataType::Timestamp,
        ColumnType::Interval => DataType::Interval,
    }
}

/// Whether a primary key may be of this type: one whose values are equal exactly when their
/// encodings are (no floats, whose `1.0 = 1` and NaN would break that) and that names things.
fn key_type(data_type: DataType) -> bool {
    matches!(
        data_type,
        DataType::Int64 | DataType::String | DataType::Date | DataType::Timestamp
    )
}

/// The name `SHOW CONSTRAINTS` gives the key of `table` (see CONSTRAINTS).
fn constraint_name(table: &str, key: &str) -> String {
    format!("constraint_{table}_{key}")
}

/// One command's view: the engine and the catalog as the command started.
struct Ddl<'a> {
    manager: &'a TxnManager,
    schema: Schema,
}

impl Ddl<'_> {
    /// The vertex table named `name` (never the unlabelled nodes' table, whose name is empty).
    fn vertex_table(&self, name: &str) -> Option<&VertexTableSchema> {
        (self.schema.vertex_tables.iter()).find(|t| !t.name.is_empty() && t.name == name)
    }

    /// The edge tables of relationship type `name`.
    fn edge_tables(&self, name: &str) -> impl Iterator<Item = &EdgeTableSchema> {
        let name = name.to_string();
        (self.schema.edge_tables.iter()).filter(move |t| t.edge_type == name)
    }

    /// Refuses a new declared table for `label` if nodes of other tables carried it.
    fn check_label_unused(&self, label: &Ident) -> Result<(), QueryError> {
        let carriers = self.manager.statistics().label_vertices(&label.name);
        if carriers > 0 {
            return Err(error(
                "LabelInUse",
                label.span,
                format!(
                    "nodes of other tables have carried the label '{}' as a further label, so \
                     a table for it could not check them; declare tables before creating nodes",
                    label.name
                ),
            ));
        }
        Ok(())
    }

    fn create_node_table(
        &self,
        name: &Ident,
        if_not_exists: bool,
        columns: &[ColumnDef],
        primary_key: Option<&Ident>,
    ) -> Result<(), QueryError> {
        match self.vertex_table(&name.name) {
            Some(table) if !table.declared => return Err(schema_free(name, "nodes labelled")),
            Some(_) if if_not_exists => return Ok(()),
            Some(_) => {
                let message = format!("node table '{}' already exists", name.name);
                return Err(error("TableAlreadyExists", name.span, message));
            }
            None => self.check_label_unused(name)?,
        }
        let mut spec = VertexTableSpec::new(&name.name);
        for column in checked_columns(columns)? {
            spec = spec.property(&column.name.name, data_type(column.column_type));
        }
        if let Some(key) = primary_key {
            let Some(column) = columns.iter().find(|c| c.name.name == key.name) else {
                let message = format!(
                    "primary key '{}' is not a column of table '{}'",
                    key.name, name.name
                );
                return Err(error("UnknownPrimaryKey", key.span, message));
            };
            let key_data_type = data_type(column.column_type);
            if !key_type(key_data_type) {
                let message = format!(
                    "primary key '{}' is {}; a primary key is INT64 (or INT32, INT16, INT8), \
                     STRING, DATE or TIMESTAMP",
                    key.name,
                    key_data_type.name()
                );
                return Err(error(
                    "UnsupportedPrimaryKeyType",
                    column.type_span,
                    message,
                ));
            }
            spec = spec.primary_key(&key.name);
        }
        plexus_txn::create_vertex_table(self.manager, &spec)?;
        Ok(())
    }

    fn create_rel_table(
        &self,
        name: &Ident,
        if_not_exists: bool,
        connections: &[(Ident, Ident)],
        columns: &[ColumnDef],
    ) -> Result<(), QueryError> {
        let existing: Vec<&EdgeTableSchema> = self.edge_tables(&name.name).collect();
        if existing.iter().any(|t| !t.declared) {
            return Err(schema_free(name, "relationships of type"));
        }
        if !existing.is_empty() {
            if if_not_exists {
                return Ok(());
            }
            let message = format!("rel table '{}' already exists", name.name);
            return Err(error("TableAlreadyExists", name.span, message));
        }
        let mut pairs = HashSet::new();
        for (from, to) in connections {
            for end in [from, to] {
                if self.vertex_table(&end.name).is_none() {
                    let message = format!("there is no node table named '{}'", end.name);
                    return Err(error("TableNotFound", end.span, message));
                }
            }
            if !pairs.insert((&from.name, &to.name)) {
                let message = format!("FROM {} TO {} is named twice", from.name, to.name);
                return Err(error("DuplicateConnection", from.span, message));
            }
        }
        let properties: Vec<(&str, DataType)> = checked_columns(columns)?
            .iter()
            .map(|c| (c.name.name.as_str(), data_type(c.column_type)))
            .collect();
        for (from, to) in connections {
            plexus_txn::create_edge_table(
                self.manager,
                &from.name,
                &name.name,
                &to.name,
                &properties,
            )?;
        }
        Ok(())
    }

    fn drop_table(&self, name: &Ident, if_exists: bool) -> Result<(), QueryError> {
        let exists = self.vertex_table(&name.name).is_some()
            || self.edge_tables(&name.name).next().is_some();
        if !exists {
            if if_exists {
                return Ok(());
            }
            let message = format!("there is no table named '{}'", name.name);
            return Err(error("TableNotFound", name.span, message));
        }
        let message = format!(
            "DROP TABLE is not supported yet: the catalog has no operation that removes a \
             table, so '{}' stays",
            name.name
        );
        Err(error("TableDropNotSupported", name.span, message))
    }

    /// Returns the constraints added: 1, or 0 when `IF NOT EXISTS` found the key there.
    fn create_constraint(
        &self,
        label: &Ident,
        property: &Ident,
        if_not_exists: bool,
    ) -> Result<u64, QueryError> {
        let Some(table) = self.vertex_table(&label.name) else {
            self.check_label_unused(label)?;
            let spec = VertexTableSpec::new(&label.name)
                .property(&property.name, DataType::Any)
                .family(&[&property.name]) // an ANY column is stored as a family
                .primary_key(&property.name)
                .any_extra_label();
            plexus_txn::create_vertex_table(self.manager, &spec)?;
            return Ok(1);
        };
        if !table.declared {
            return Err(schema_free(label, "nodes labelled"));
        }
        match &table.primary_key {
            Some(key) if *key == property.name && if_not_exists => Ok(0),
            Some(key) if *key == property.name => {
                let message = format!(
                    "the constraint '{}' already requires :{}({key}) to be a key",
                    constraint_name(&table.name, key),
                    table.name
                );
                Err(error("ConstraintAlreadyExists", label.span, message))
            }
            Some(key) => {
                let message = format!(
                    "table '{}' has the key '{key}'; a table has one key",
                    table.name
                );
                Err(error("ConstraintNotSupported", property.span, message))
            }
            None => {
                let message = format!(
                    "table '{}' exists without a key, and a key cannot be added to a table; \
                     declare it in CREATE NODE TABLE",
                    table.name
                );
                Err(error("ConstraintNotSupported", label.span, message))
            }
        }
    }

    fn drop_constraint(&self, name: &Ident, if_exists: bool) -> Result<(), QueryError> {
        let is_key = self
            .keys()
            .any(|(table, key)| constraint_name(table, key) == name.name);
        if is_key {
            let message = format!(
                "constraint '{}' is a table's primary key, which cannot be dropped",
                name.name
            );
            return Err(error("ConstraintDropNotSupported", name.span, message));
        }
        if if_exists {
            return Ok(());
        }
        let message = format!("there is no constraint named '{}'", name.name);
        Err(error("ConstraintNotFound", name.span, message))
    }

    /// Every (table, key property) pair, in table order.
    fn keys(&self) -> impl Iterator<Item = (&str, &str)> {
        (self.schema.vertex_tables.iter())
            .filter_map(|t| Some((t.name.as_str(), t.primary_key.as_deref()?)))
    }

    fn show_tables(&self) -> QueryResult {
        let strings =
            |names: &[String]| Value::list(names.iter().map(|n| Value::string(n)).collect());
        let columns = |properties: &[crate::schema::PropertySchema]| {
            let typed: Vec<String> = (properties.iter())
                .map(|p| format!("{} {}", p.name, p.data_type.name()))
                .collect();
            strings(&typed)
        };
        let optional = |text: Option<&str>| text.map_or(Value::Null, Value::string);
        let nodes = (self.schema.vertex_tables.iter())
            .filter(|t| !t.name.is_empty())
            .map(|t| {
                vec![
                    Value::string(&t.name),
                    Value::string("NODE"),
                    Value::Bool(t.declared),
                    optional(t.primary_key.as_deref()),
                    columns(&t.properties),
                    Value::Null,
                    Value::Null,
                ]
            });
        let rels = self.schema.edge_tables.iter().map(|t| {
            vec![
                Value::string(&t.edge_type),
                Value::string("REL"),
                Value::Bool(t.declared),
                Value::Null,
                columns(&t.properties),
                Value::string(&t.from),
                Value::string(&t.to),
            ]
        });
        QueryResult {
            columns: TABLE_COLUMNS.map(String::from).to_vec(),
            rows: nodes.chain(rels).collect(),
            ..QueryResult::default()
        }
    }

    fn show_constraints(&self) -> QueryResult {
        let rows = self
            .keys()
            .map(|(table, key)| {
                vec![
                    Value::string(&constraint_name(table, key)),
                    Value::string("NODE_KEY"),
                    Value::string("NODE"),
                    Value::list(vec![Value::string(table)]),
                    Value::list(vec![Value::string(key)]),
                ]
            })
            .collect();
        QueryResult {
            columns: CONSTRAINT_COLUMNS.map(String::from).to_vec(),
            rows,
            ..QueryResult::default()
        }
    }
}

/// `columns`, refusing a name declared twice (at the second).
fn checked_columns(columns: &[ColumnDef]) -> Result<&[ColumnDef], QueryError> {
    let mut seen = HashSet::new();
    for column in columns {
        if !seen.insert(&column.name.name) {
            let message = format!("column '{}' is declared twice", column.name.name);
            return Err(error("DuplicateColumn", column.name.span, message));
        }
    }
    Ok(columns)
}

/// The refusal for a declaration of `name`, which already has a schema-free table (`what`
/// went there: "nodes labelled", "relationships of type").
fn schema_free(name: &Ident, what: &str) -> QueryError {
    let message = format!(
        "{what} '{0}' were created before any declaration, so '{0}' has a schema-free table, \
         which a declared table cannot replace",
        name.name
    );
    error("SchemaFreeTableExists", name.span, message)
}

fn error(code: &'static str, span: Span, message: String) -> QueryError {
    QueryError::compile(ErrorClass::SemanticError, code, span, message)
}
