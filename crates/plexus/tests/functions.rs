//! Every scalar function the binder accepts (`plexus_plan::catalog`) is one the executor
//! implements: called with its fewest arguments, all null, it returns a value or a type
//! error — never "unknown function", which would mean the two lists drifted apart.

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
