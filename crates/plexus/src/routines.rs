//! `SHOW FUNCTIONS` and `SHOW PROCEDURES`: what a session can call, as rows.
//!
//! Functions come from the planner's catalog (`plexus_plan::catalog::functions`, which its
//! tests keep equal to what the binder accepts): `name` as Neo4j spells it, `category` and
//! `description`. Procedures are the connection's registry — built-in, `algo.*`, catalog
//! procedures and any a front end registered — with `name` and `signature`
//! (`name(input :: TYPE, …) :: (output, …)`); Plexus keeps no description for them.

use plexus_exec::{ProcedureRegistry, QueryResult, Value};

/// The columns of `SHOW FUNCTIONS`.
pub(crate) const FUNCTION_COLUMNS: [&str; 3] = ["name", "category", "description"];
/// The columns of `SHOW PROCEDURES`.
pub(crate) const PROCEDURE_COLUMNS: [&str; 2] = ["name", "signature"];

/// Every function, by name; none with `user_defined` (Plexus has no user-defined functions).
pub(crate) fn functions(user_defined: bool) -> QueryResult {
    let rows = if user_defined {
        Vec::new()
    } else {
        plexus_plan::catalog::functions()
            .into_iter()
            .map(|f| {
                vec![
                    Value::string(f.name),
                    Value::string(f.category),
                    Value::string(f.description),
                ]
            })
            .collect()
    };
    QueryResult {
        columns: FUNCTION_COLUMNS.map(String::from).to_vec(),
        rows,
        ..QueryResult::default()
    }
}

/// Every procedure `procedures` holds, by name.
pub(crate) fn procedures(procedures: &ProcedureRegistry) -> QueryResult {
    let mut listed: Vec<_> = procedures.values().collect();
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    let rows = listed
        .into_iter()
        .map(|p| {
            // Neo4j's form: `config = {} :: MAP` for an input with a default value.
            let first_default = p.inputs.len() - p.defaults.len().min(p.inputs.len());
            let inputs: Vec<String> = (p.inputs.iter().enumerate())
                .map(|(i, name)| {
                    let default = (i.checked_sub(first_default))
                        .and_then(|d| p.defaults.get(d))
                        .map(|v| format!(" = {}", plexus_value::format::plain_text(v)))
                        .unwrap_or_default();
                    match p.input_types.get(i) {
                        Some(ty) => format!("{name}{default} :: {ty}"),
                        None => format!("{name}{default}"),
                    }
                })
                .collect();
            let signature = format!(
                "{}({}) :: ({})",
                p.name,
                inputs.join(", "),
                p.outputs.join(", ")
            );
            vec![Value::string(&p.name), Value::string(&signature)]
        })
        .collect();
    QueryResult {
        columns: PROCEDURE_COLUMNS.map(String::from).to_vec(),
        rows,
        ..QueryResult::default()
    }
}
