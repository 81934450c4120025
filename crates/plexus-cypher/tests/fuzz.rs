//! Property tests: `parse` never panics, and whatever it accepts round-trips through the
//! printer (parse → print → parse gives an equal tree).
//!
//! Generators, from least to most structured:
//! - arbitrary bytes (mostly lexer errors);
//! - streams of real Cypher tokens glued with or without spaces behind a clause prefix, which
//!   reach deep into the parser's error paths;
//! - expressions and patterns built from a small grammar, which are valid by construction and
//!   so exercise the printer's parenthesisation on every operator combination.

mod common;

use proptest::prelude::*;

const CASES: u32 = 2_000;

fn config() -> ProptestConfig {
    // No regression files: the crate directory is shared with other engineers' work.
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const TOKENS: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "AS",
    "CREATE",
    "MERGE",
    "ON",
    "SET",
    "REMOVE",
    "DELETE",
    "DETACH",
    "CALL",
    "YIELD",
    "FOREACH",
    "UNION",
    "ALL",
    "DISTINCT",
    "ORDER",
    "BY",
    "DESC",
    "SKIP",
    "LIMIT",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "EXISTS",
    "true",
    "count",
    "COUNT {",
    "COLLECT {",
    "FINISH",
    "any",
    "reduce",
    "shortestPath",
    "a",
    "b",
    "n",
    "x",
    "`q q`",
    "Label",
    "0",
    "1",
    "42",
    "-1",
    "1.5",
    ".5",
    "1e3",
    "0x1F",
    "9223372036854775808",
    "'s'",
    "\"d\"",
    "$p",
    "$0",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "..",
    ":",
    ";",
    "|",
    "&",
    "!",
    "=",
    "<>",
    "<",
    ">",
    "<=",
    ">=",
    "=~",
    "+",
    "+=",
    "-",
    "*",
    "/",
    "%",
    "^",
    "->",
    "<-",
    "--",
    "-->",
    "<--",
    "-[",
    "]->",
];

const PREFIXES: &[&str] = &[
    "",
    "RETURN ",
    "MATCH ",
    "MATCH (n) WHERE ",
    "WITH 1 AS x RETURN ",
    "CREATE ",
    "MATCH (a)",
];

/// If `input` parses, checks the round trip. (That `parse` itself returns is the other half.)
fn check_round_trip(input: &str) -> Result<(), TestCaseError> {
    if plexus_cypher::parse(input).is_ok() {
        common::round_trip(input).map_err(TestCaseError::fail)?;
    }
    Ok(())
}

fn token_query() -> impl Strategy<Value = String> {
    let token = (prop::sample::select(TOKENS), any::<bool>());
    (
        prop::sample::select(PREFIXES),
        prop::collection::vec(token, 0..40),
    )
        .prop_map(|(prefix, tokens)| {
            let mut query = prefix.to_string();
            for (token, space) in tokens {
                query.push_str(token);
                if space {
                    query.push(' ');
                }
            }
            query
        })
}

/// Valid expressions (as text) from a small grammar, with arbitrary operator nesting.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "1",
        "-1",
        "0",
        "1.5",
        "-0.5",
        "'s'",
        "null",
        "true",
        "$p",
        "n",
        "n.x",
        "x",
        "`a b`",
        "[]",
        "{}",
        "count(*)",
        "9223372036854775807",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(5, 64, 3, |inner| {
        let binary_op = prop::sample::select(vec![
            "+",
            "-",
            "*",
            "/",
            "%",
            "^",
            "=",
            "<>",
            "<",
            "<=",
            ">",
            ">=",
            "AND",
            "OR",
            "XOR",
            "IN",
            "STARTS WITH",
            "ENDS WITH",
            "CONTAINS",
            "=~",
        ]);
        let unary_op = prop::sample::select(vec!["NOT ", "-", "- ", "+"]);
        let postfix = prop::sample::select(vec![
            ".key",
            "[0]",
            "[1..]",
            "[..x]",
            " IS NULL",
            " IS NOT NULL",
            ":L",
            ":(A|B)&!C",
            ":!%",
            ":A&B",
        ]);
        prop_oneof![
            (inner.clone(), binary_op, inner.clone())
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (unary_op, inner.clone()).prop_map(|(op, a)| format!("{op}{a}")),
            // Double parentheses: `(x) - -(y)` would be the pattern `(x)--(y)` (see pattern.rs).
            inner.clone().prop_map(|a| format!("(({a}))")),
            (inner.clone(), postfix).prop_map(|(a, postfix)| format!("{a}{postfix}")),
            inner.clone().prop_map(|a| format!("[{a}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("[{a}, {b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{{k: {a}, `k 2`: {b}}}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("f(DISTINCT {a}, {b})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("CASE WHEN {a} THEN {b} ELSE {c} END")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("CASE {a} WHEN {b} THEN {c} END")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("[x IN {a} WHERE {b} | {c}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("any(x IN {a} WHERE {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| {
                format!("COUNT {{ (n)-->(m) WHERE {a} }} + COUNT {{ MATCH (n) RETURN {b} }}")
            }),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| {
                format!("COLLECT {{ MATCH (n) WHERE {a} RETURN {b} ORDER BY {a} }}")
            }),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(a, b, c)| format!("reduce(s = {a}, x IN {b} | {c})")),
        ]
    })
}

/// A valid pattern element: a chain of up to four nodes.
fn pattern_element() -> impl Strategy<Value = String> {
    let node = prop::sample::select(vec![
        "(n)",
        "()",
        "(:A)",
        "(n:A:B {k: 1})",
        "(m $p)",
        "(`odd n`)",
        "(n:A|B)",
        "(:!A&(B|%) {k: 1})",
        "(n:A&!B)",
    ]);
    let rel = prop::sample::select(vec![
        "-->",
        "<--",
        "--",
        "<-->",
        "-[r]->",
        "<-[:T|U]-",
        "-[r:T*1..2 {w: 0}]-",
        "-[*]->",
        "-[*..3]-",
        "-[:T*2]->",
    ]);
    (node.clone(), prop::collection::vec((rel, node), 0..4)).prop_map(|(first, steps)| {
        steps
            .into_iter()
            .fold(first.to_string(), |text, (rel, node)| {
                format!("{text}{rel}{node}")
            })
    })
}

/// A valid MATCH pattern: up to three comma-separated, optionally named, elements.
fn pattern() -> impl Strategy<Value = String> {
    let part = (prop::sample::select(vec!["", "p = "]), pattern_element())
        .prop_map(|(name, element)| format!("{name}{element}"));
    prop::collection::vec(part, 1..4).prop_map(|parts| parts.join(", "))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        check_round_trip(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn random_token_streams_never_panic(query in token_query()) {
        check_round_trip(&query)?;
    }

    #[test]
    fn generated_expressions_parse_and_round_trip(expr in expression(), predicate in expression()) {
        for query in [format!("RETURN {expr}"), format!("MATCH (n) WHERE {predicate} RETURN n")] {
            common::round_trip(&query).map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn generated_patterns_parse_and_round_trip(
        pattern in pattern(),
        element in pattern_element(),
        expr in expression(),
    ) {
        // An element with a relationship can also be a predicate or a comprehension.
        let element = format!("{element}-->()");
        for query in [
            format!("MATCH {pattern} WHERE {expr} RETURN *"),
            format!("MATCH (n) WHERE ({element}) OR NOT {element} RETURN n"),
            format!("RETURN [{element} WHERE {expr} | 1]"),
            format!("RETURN COUNT {{ {pattern} WHERE {expr} }}, count {{.x}}"),
            format!("MATCH {pattern} WHERE {expr} FINISH"),
            format!("RETURN COLLECT {{ MATCH {pattern} RETURN {expr} }}, collect {{.x}}"),
        ] {
            common::round_trip(&query).map_err(TestCaseError::fail)?;
        }
    }
}
