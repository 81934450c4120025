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
        tokens("db.labels", "label", Token::Label),
        tokens("db.relationshipTypes", "relationshipType", Token::Type),
        tokens("db.propertyKeys", "propertyKey", Token::Key),
        indexes(),
    ]
}

/// The columns of `CALL db.indexes()` and `SHOW INDEXES`.
pub(crate) const INDEX_COLUMNS: [&str; 4] = ["name", "label", "property", "entityType"];

/// One row per index as of `tx`'s snapshot, in creation order (see the module doc).
pub(crate) fn index_rows(tx: &mut Transaction) -> Vec<Vec<Value>> {
    if tx.external().is_some() {
        return Vec::new(); // an attached graph has no indexes
    }
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

/// Which tokens a `db.*` procedure lists.
#[derive(Clone, Copy)]
enum Token {
    Label,
    Type,
    Key,
}

impl Token {
    fn of_catalog(self, c: &Catalog) -> Vec<String> {
        names(match self {
            Token::Label => &c.labels,
            Token::Type => &c.edge_types,
            Token::Key => &c.prop_keys,
        })
    }

    /// The tokens of an attached graph, in table order, each once.
    fn of_external(self, graph: &dyn plexus_txn::ExternalGraph) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let vertex_tables = graph.vertex_tables().iter();
        match self {
            Token::Label => found.extend(
                vertex_tables
                    .flat_map(|t| std::iter::once(&t.name).chain(&t.labels))
                    .cloned(),
            ),
            Token::Type => found.extend(graph.edge_tables().iter().map(|t| t.edge_type.clone())),
            Token::Key => found.extend(graph.property_keys()),
        }
        let mut seen = std::collections::HashSet::new();
        found.retain(|name| seen.insert(name.clone()));
        found
    }
}

fn tokens(name: &str, output: &str, token: Token) -> Procedure {
    let body = move |_: &[Value], tx: &mut Transaction| -> Result<Vec<Vec<Value>>, QueryError> {
        let list = match tx.external() {
            Some(graph) => token.of_external(&**graph),
            None => token.of_catalog(&tx.snapshot().catalog()),
        };
        Ok(list.iter().map(|name| vec![Value::string(name)]).collect())
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
