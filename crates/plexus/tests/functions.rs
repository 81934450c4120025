//! Every scalar function the binder accepts (`plexus_plan::catalog`) is one the executor
//! implements: called with its fewest arguments, all null, it returns a value or a type
//! error — never "unknown function", which would mean the two lists drifted apart. And
//! `SHOW FUNCTIONS` / `SHOW PROCEDURES` list what a session can call.

use plexus::{Config, Database, Params};

#[test]
fn every_function_the_binder_accepts_is_implemented() {
    let db = Database::open_in_memory(Config::default()).expect("open");
    let mut conn = db.connect();
    let names: Vec<&str> = plexus_plan::catalog::function_names().collect();
    assert!(
        names.len() > 50,
        "the catalog lists {} functions",
        names.len()
    );
    for name in names {
        let (min, _) = plexus_plan::catalog::arity(name).expect("listed");
        let args = vec!["null"; min].join(", ");
        let query = format!("RETURN {name}({args}) AS v");
        if let Err(e) = conn.execute(&query, &Params::new()) {
            assert_ne!(e.code, "UnknownFunction", "{query}: {e}");
        }
    }
}

#[test]
fn show_functions_and_procedures_list_what_a_session_can_call() {
    let db = Database::open_in_memory(Config::default()).expect("open");
    let mut conn = db.connect();
    let functions = conn
        .execute("SHOW FUNCTIONS", &Params::new())
        .expect("show");
    assert_eq!(functions.columns, ["name", "category", "description"]);
    let rows: Vec<String> = functions
        .rows
        .iter()
        .map(|r| functions.render_row(r))
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("'toUpper' | 'String' | ")),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("'count' | 'Aggregating' | "))
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("'duration.between' | 'Duration' | "))
    );
    assert_eq!(rows.len(), plexus_plan::catalog::functions().len());
    let none = conn
        .execute("SHOW USER DEFINED FUNCTIONS", &Params::new())
        .expect("show");
    assert!(none.rows.is_empty());
    let procedures = conn
        .execute("SHOW PROCEDURES", &Params::new())
        .expect("show");
    assert_eq!(procedures.columns, ["name", "signature"]);
    let rows: Vec<String> = procedures
        .rows
        .iter()
        .map(|r| procedures.render_row(r))
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("'db.labels' | 'db.labels() :: (label")),
        "{rows:?}"
    );
    // An input with a default value is listed as Neo4j lists it.
    assert!(
        rows.iter()
            .any(|r| r == "'algo.wcc' | 'algo.wcc(config = {} :: MAP) :: (node, component)'"),
        "{rows:?}"
    );
    let mut names: Vec<&String> = rows.iter().collect();
    names.sort();
    assert_eq!(names, rows.iter().collect::<Vec<_>>(), "sorted by name");
    let error = conn
        .execute("SHOW BUILT IN PROCEDURES", &Params::new())
        .expect_err("not a listing Plexus has");
    assert_eq!(error.code, "UnexpectedSyntax");
}
