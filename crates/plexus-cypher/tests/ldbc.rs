//! Parses (and round-trips) every LDBC SNB Interactive query in
//! `shared/data/ldbc-snb-mini/cypher/queries/*.cypher`.

mod common;

use std::fs;

#[test]
fn every_ldbc_query_parses_and_round_trips() {
    let dir = common::shared_data("ldbc-snb-mini/cypher/queries");
    let mut paths: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cypher"))
        .collect();
    paths.sort();
    assert!(
        !paths.is_empty(),
        "no .cypher files under {}",
        dir.display()
    );

    let mut failures = Vec::new();
    for path in &paths {
        let query = fs::read_to_string(path).expect("query file is readable");
        if let Err(error) = common::round_trip(&query) {
            failures.push(format!("{}: {error}", path.display()));
        }
    }
    println!(
        "LDBC: {} / {} queries parse and round-trip",
        paths.len() - failures.len(),
        paths.len()
    );
    assert!(
        failures.is_empty(),
        "LDBC failures:\n{}",
        failures.join("\n")
    );
}
