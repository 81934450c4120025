//! Index commands on a connection: `CREATE INDEX`, `DROP INDEX` and `SHOW INDEXES`.
//!
//! They are parsed by `plexus_cypher::parse_command` and carried out here, outside the
//! query pipeline, because an index is a catalog change (durable at once, not part of any
//! transaction — see `plexus_txn::schema`) rather than a statement over a snapshot:
//!
//! - `CREATE INDEX [name] [IF NOT EXISTS] FOR (n:Label) ON (n.prop)` builds a node index,
//!   `… FOR ()-[r:TYPE]-() ON (r.prop)` (or `-[…]->`, `<-[…]-`) a relationship index (commits
//!   wait for one pass over the rows of the vertex tables, or of the type's edge tables); it
//!   returns no rows. The name defaults to `index_<Label or TYPE>_<prop>`. An index on a
//!   label, type or property not in use is allowed, as in Neo4j: elements that get them later
//!   are indexed as they commit. A name already taken, or an index of another name on the
//!   same label or type and property, is an error (`IndexAlreadyExists`, at the name if
//!   given), or nothing with `IF NOT EXISTS` — even when the index of that name has another
//!   definition, as in Neo4j;
//! - `DROP INDEX name [IF EXISTS]` removes either kind; a missing name is an error
//!   (`IndexNotFound`) unless `IF EXISTS`;
//! - `SHOW INDEXES` lists what `CALL db.indexes()` does: one row per index, `name, label, property,
//!   entityType` (`label` holds the relationship type of a relationship index, whose
//!   `entityType` is `'RELATIONSHIP'`; a node index's is `'NODE'`).
//!
//! Inside an explicit transaction (`BEGIN` … `COMMIT`) the two DDL commands are refused
//! (`SchemaCommandInTransaction`) and the transaction stays open: a catalog change cannot be
//! rolled back with it.

use plexus_cypher::ast::{IndexFor, SchemaCommand};
use plexus_exec::{ErrorClass, QueryError, QueryResult};
use plexus_txn::{IndexCreated, IndexOn, TxnManager};

/// Carries out `CREATE INDEX` or `DROP INDEX` (not `SHOW INDEXES`, which the connection
/// answers with the rows of `db.indexes()`); the result counts the index added or removed
/// (none when `IF NOT EXISTS` / `IF EXISTS` found nothing to do).
pub(crate) fn run_index_ddl(
    manager: &TxnManager,
    command: SchemaCommand,
    in_transaction: bool,
) -> Result<QueryResult, QueryError> {
    if in_transaction {
        return Err(QueryError::runtime(
            ErrorClass::SemanticError,
            "SchemaCommandInTransaction",
            "CREATE INDEX and DROP INDEX cannot run inside an explicit transaction; \
             COMMIT or ROLLBACK first (the transaction is still open)",
        ));
    }
    let mut result = QueryResult::default();
    match command {
        SchemaCommand::CreateIndex {
            name,
            if_not_exists,
            on,
            property,
        } => {
            let on = match &on {
                IndexFor::Label(label) => IndexOn::Label(&label.name),
                IndexFor::RelationshipType(ty) => IndexOn::RelationshipType(&ty.name),
            };
            let span = name.as_ref().map(|ident| ident.span);
            let given = name.as_ref().map(|ident| ident.name.as_str());
            let (name, created) = plexus_txn::create_index_as(manager, given, on, &property.name)?;
            if let Some(message) = refusal(&created, &name, on, &property.name)
                && !if_not_exists
            {
                return Err(schema_error("IndexAlreadyExists", span, message));
            }
            result.stats.indexes_added = u64::from(matches!(created, IndexCreated::Created));
        }
        SchemaCommand::DropIndex { name, if_exists } => {
            let dropped = plexus_txn::drop_index(manager, &name.name)?;
            if !dropped && !if_exists {
                let message = format!("there is no index named '{}'", name.name);
                return Err(schema_error("IndexNotFound", Some(name.span), message));
            }
            result.stats.indexes_removed = u64::from(dropped);
        }
        SchemaCommand::ShowIndexes => unreachable!("the connection answers SHOW INDEXES itself"),
    }
    Ok(result)
}

/// Why `CREATE INDEX name` on `on` by `property` changed nothing (`None`: it created it).
pub(crate) fn refusal(
    created: &IndexCreated,
    name: &str,
    on: IndexOn,
    property: &str,
) -> Option<String> {
    match created {
        IndexCreated::Created => None,
        IndexCreated::NameTaken { .. } => Some(format!("an index named '{name}' already exists")),
        IndexCreated::Equivalent(other) => Some(format!(
            "index '{other}' already indexes {}",
            on.describe(property)
        )),
    }
}

fn schema_error(
    code: &'static str,
    span: Option<plexus_cypher::ast::Span>,
    message: String,
) -> QueryError {
    match span {
        Some(span) => QueryError::compile(ErrorClass::SemanticError, code, span, message),
        None => QueryError::runtime(ErrorClass::SemanticError, code, message),
    }
}
