//! Bad input never panics: random token streams through parse → bind → optimizer passes.
//!
//! The generator glues real Cypher tokens (keywords, punctuation, names, literals,
//! parameters) behind a clause prefix, so a good share of the inputs parse and reach the
//! binder and planner, whose error paths are what this test is about. Bounded: a fixed number
//! of cases, no persistence files.

use plexus_plan::logical::ProcedureRegistry;
use plexus_plan::optimizer::{self, OptimizerContext};
use plexus_plan::{ParallelConfig, Params, plan_statement};
use plexus_value::Value;
use proptest::prelude::*;

const CASES: u32 = 3_000;

/// Parsing and binding recurse; give them the stack a server thread would have.
const STACK_BYTES: usize = 64 << 20;

const TOKENS: &[&str] = &[
    "MATCH",
    "OPTIONAL MATCH",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "AS",
    "CREATE",
    "MERGE",
    "ON CREATE SET",
    "ON MATCH SET",
    "SET",
    "REMOVE",
    "DELETE",
    "DETACH DELETE",
    "CALL",
    "YIELD",
    "FOREACH",
    "UNION",
    "UNION ALL",
    "DISTINCT",
    "ORDER BY",
    "DESC",
    "SKIP",
    "LIMIT",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS NULL",
    "IS NOT NULL",
    "STARTS WITH",
    "CONTAINS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "EXISTS",
    "count",
    "COUNT {",
    "COUNT { (n)-->() }",
    "COLLECT {",
    "COLLECT { MATCH (n)-->(m) RETURN m }",
    "FINISH",
    "collect",
    "sum",
    "size",
    "reduce",
    "all",
    "any",
    "none",
    "single",
    "shortestPath",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "-",
    "->",
    "<-",
    "-->",
    "<--",
    "--",
    ":",
    ",",
    ".",
    "..",
    "*",
    "+",
    "/",
    "%",
    "^",
    "=",
    "<>",
    "<",
    ">",
    "<=",
    ">=",
    "|",
    "=~",
    "$p",
    "$q",
    "n",
    "m",
    "r",
    "p",
    "x",
    "a",
    "b",
    "Person",
    "KNOWS",
    "name",
    "0",
    "1",
    "-1",
    "2.5",
    "'s'",
    "true",
    "false",
    "null",
    "9223372036854775807",
    "[1, 2, 3]",
    "{k: 1}",
    "(n)",
    "(n)-[r]->(m)",
    "p = (a)--(b)",
];

const PREFIXES: &[&str] = &[
    "",
    "MATCH (n) ",
    "MATCH (n)-[r]->(m) ",
    "WITH 1 AS x ",
    "UNWIND [1] AS x ",
];

fn token_stream() -> impl Strategy<Value = String> {
    (
        prop::sample::select(PREFIXES),
        prop::collection::vec(prop::sample::select(TOKENS), 1..24),
        any::<bool>(),
    )
        .prop_map(|(prefix, tokens, spaced)| {
            let sep = if spaced { " " } else { "" };
            format!("{prefix}{}", tokens.join(sep))
        })
}

fn check(query: &str) {
    let mut params = Params::new();
    params.insert("p".into(), Value::Int(1));
    let procedures = ProcedureRegistry::new();
    let Ok(statement) = plexus_cypher::parse(query) else {
        return;
    };
    if let Ok(mut plan) = plan_statement(&statement, query, &params, &procedures, None) {
        let parallel = ParallelConfig {
            workers: 2,
            min_scan_rows: 0.0,
            ..ParallelConfig::serial()
        };
        let ctx = OptimizerContext {
            stats: None,
            parallel: &parallel,
        };
        optimizer::optimize(&mut plan, &ctx, Some(&mut Vec::new()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_token_streams_never_panic(query in token_stream()) {
        let q = query.clone();
        let outcome = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn(move || check(&q))
            .expect("spawn")
            .join();
        prop_assert!(outcome.is_ok(), "panicked on: {}", query);
    }

    #[test]
    fn valid_queries_with_random_returns_never_panic(
        items in prop::collection::vec(prop::sample::select(TOKENS), 1..8),
    ) {
        let query = format!("MATCH (n)-[r]->(m) WITH n, r, m RETURN {}", items.join(" "));
        let q = query.clone();
        let outcome = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn(move || check(&q))
            .expect("spawn")
            .join();
        prop_assert!(outcome.is_ok(), "panicked on: {}", query);
    }
}
