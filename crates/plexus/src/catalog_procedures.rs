//! Catalog procedures every connection has, as in Neo4j: `CALL db.labels() YIELD label`,
//! `CALL db.relationshipTypes() YIELD relationshipType`, `CALL db.propertyKeys() YIELD
//! propertyKey`. Drivers and tools call them to discover a graph.
//!
//! They list the catalog's tokens as of the calling transaction's snapshot, in creation order:
//! every label, relationship type and property key ever used or declared — a token stays in
//! the catalog after the last element using it is deleted (Neo4j lists only those in use).
//! The empty label of unlabelled vertices is not listed.
//!
//! `CALL db.indexes() YIELD name, label, property, entityType` lists the secondary property
//! indexes in creation order (what `SHOW INDEXES` runs; see `index_commands`): `label` is the
//! label of a node index (`entityType` `'NODE'`) or the type of a relationship index
//! (`'RELATIONSHIP'`). The last column came with relationship indexes; the first three are
//! as before.

use crate::schema::IndexSchema;
use plexus_exec::{Procedure, ProcedureFn, QueryError, Value};
use plexus_storage::Catalog;
use plexus_txn::Transaction;
use std::sync::Arc;

/// The `db.*` procedures.
pub(crate) fn catalog_procedures() -> Vec<Procedure> {
    vec![
        tokens("db.labels", "label", |c| names(&c.labels)),
        tokens("db.relationshipTypes", "relationshipType", |c| {
            names(&c.edge_types)
        }),
        tokens("db.propertyKeys", "propertyKey", |c| names(&c.prop_keys)),
        indexes(),
    ]
}

/// The columns of `CALL db.indexes()` and `SHOW INDEXES`.
pub(crate) const INDEX_COLUMNS: [&str; 4] = ["name", "label", "property", "entityType"];

/// One row per index as of `tx`'s snapshot, in creation order (see the module doc).
pub(crate) fn index_rows(tx: &mut Transaction) -> Vec<Vec<Value>> {
    let catalog = tx.snapshot().catalog();
    catalog
        .indexes
        .iter()
        .map(|index| {
            let index = IndexSchema::of(&catalog, index);
            vec![
                Value::string(&index.name),
                Value::string(&index.label),
                Value::string(&index.property),
                Value::string(index.entity.name()),
            ]
        })
        .collect()
}

fn indexes() -> Procedure {
    let body = |_: &[Value], tx: &mut Transaction| -> Result<Vec<Vec<Value>>, QueryError> {
        Ok(index_rows(tx))
    };
    Procedure {
        name: "db.indexes".into(),
        inputs: Vec::new(),
        input_types: Vec::new(),
        defaults: Vec::new(),
        outputs: INDEX_COLUMNS.map(String::from).to_vec(),
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    }
}

fn names(tokens: &plexus_storage::Tokens) -> Vec<String> {
    (0..tokens.len() as u32)
        .filter_map(|id| tokens.name(id))
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect()
}

fn tokens(
    name: &str,
    output: &str,
    list: impl Fn(&Catalog) -> Vec<String> + Send + Sync + 'static,
) -> Procedure {
    let body = move |_: &[Value], tx: &mut Transaction| -> Result<Vec<Vec<Value>>, QueryError> {
        let catalog = tx.snapshot().catalog();
        Ok(list(&catalog)
            .iter()
            .map(|name| vec![Value::string(name)])
            .collect())
    };
    Procedure {
        name: name.into(),
        inputs: Vec::new(),
        input_types: Vec::new(),
        defaults: Vec::new(),
        outputs: vec![output.into()],
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    }
}
