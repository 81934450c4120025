//! Hash joins return the rows of the nested plan. On random data — integers, floats (NaN and
//! -0.0 among them), strings, booleans, lists, missing properties — every query runs twice:
//! as written, which EXPLAIN must show as a `HashJoin`, and with each equality `x = y`
//! rewritten as `NOT (x <> y)`, the same predicate, which the planner cannot join on and so
//! plans nested. The two must return the same rows, or fail alike (`a.k + 1` on a boolean:
//! each query has one key that can fail, which both plans evaluate on every row).
//!
//! OPTIONAL MATCH alike (`OPTIONAL_QUERIES`): as written a `LeftOuterHashJoin`, rewritten an
//! `Optional` over the nested part; the two must return the same rows in the same order (input
//! order, then build order), the null-extended ones included.

use plexus::{Config, Connection, Database, Params};
use proptest::prelude::*;

/// Property values, as Cypher literals; `None`: the property is missing (null).
const VALUES: [Option<&str>; 13] = [
    None,
    Some("0"),
    Some("-0.0"),
    Some("1"),
    Some("1.0"),
    Some("2"),
    Some("2.5"),
    Some("0.0 / 0.0"),
    Some("'a'"),
    Some("'b'"),
    Some("true"),
    Some("[1, 2]"),
    Some("[1.0, 2]"),
];

/// Queries over `(a:A)` and `(b:B)` nodes with properties `i` (unique), `k` and `j`: a
/// template whose `{where}` takes the equalities, and the equalities.
const QUERIES: [(&str, &[(&str, &str)]); 7] = [
    (
        "MATCH (a:A), (b:B) WHERE {where} RETURN a.i, b.i",
        &[("a.k", "b.k")],
    ),
    (
        "MATCH (a:A), (b:B) WHERE {where} RETURN a.i, b.i",
        &[("b.k", "a.k"), ("a.j", "b.j")],
    ),
    (
        "MATCH (a:A) WITH a.k AS k, a.i AS i MATCH (b:B) WHERE {where} RETURN i, b.i",
        &[("k", "b.k")],
    ),
    (
        "MATCH (a:A), (b:B) WHERE {where} RETURN a.i, b.i",
        &[("[a.k, a.j]", "[b.k, b.j]")],
    ),
    (
        "MATCH (a:A), (b:B) WHERE {where} RETURN a.i, b.i",
        &[("{x: a.k}", "{x: b.j}")],
    ),
    (
        "MATCH (a:A) MATCH (b:B) WHERE {where} AND a.i < b.i RETURN a.i, b.i",
        &[("a.k", "b.k")],
    ),
    (
        "MATCH (a:A), (b:B) WHERE {where} AND b.j IS NOT NULL RETURN a.i, b.k",
        &[("a.k + 1", "b.k + 1")],
    ),
];

/// OPTIONAL MATCH queries over the same nodes, as `QUERIES`: keys, residuals on the input, on
/// both sides and on the build side alone, a failing key.
const OPTIONAL_QUERIES: [(&str, &[(&str, &str)]); 6] = [
    (
        "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE {where} RETURN a.i, b.i",
        &[("a.k", "b.k")],
    ),
    (
        "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE {where} RETURN a.i, b.i",
        &[("b.k", "a.k"), ("a.j", "b.j")],
    ),
    (
        "MATCH (a:A) WITH a.k AS k, a.i AS i OPTIONAL MATCH (b:B) WHERE {where} RETURN i, b.i",
        &[("k", "b.k")],
    ),
    (
        "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE {where} AND a.i < b.i AND a.j IS NULL \
         RETURN a.i, b.i",
        &[("[a.k, a.j]", "[b.k, b.j]")],
    ),
    (
        "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE {where} AND b.j <> 'a' RETURN a.i, b.k",
        &[("{x: a.k}", "{x: b.k}")],
    ),
    (
        "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE {where} AND b.j IS NOT NULL RETURN a.i, b.k",
        &[("a.k + 1", "b.k + 1")],
    ),
];

/// `CREATE`s the nodes of `label`, one per (k, j) pair of value indexes.
fn create(conn: &mut Connection, label: &str, nodes: &[(usize, usize)]) {
    for (i, (k, j)) in nodes.iter().enumerate() {
        let props: Vec<String> = [("k", VALUES[*k]), ("j", VALUES[*j])]
            .iter()
            .filter_map(|(key, value)| value.map(|v| format!("{key}: {v}")))
            .chain([format!("i: {i}")])
            .collect();
        let query = format!("CREATE (:{label} {{{}}})", props.join(", "));
        conn.execute(&query, &Params::new()).expect(&query);
    }
}

/// `query`'s rows, rendered and sorted.
fn rows(conn: &mut Connection, query: &str) -> Result<Vec<String>, String> {
    let mut rows = rows_in_order(conn, query)?;
    rows.sort();
    Ok(rows)
}

/// `query`'s rows, rendered, in the order they came.
fn rows_in_order(conn: &mut Connection, query: &str) -> Result<Vec<String>, String> {
    let result = conn
        .execute(query, &Params::new())
        .map_err(|e| e.to_string())?;
    Ok(result.rendered_rows())
}

/// `template` with its `{where}` the conjunction of `equalities`, each written by `form`.
fn with_equalities(
    template: &str,
    equalities: &[(&str, &str)],
    form: &dyn Fn(&str, &str) -> String,
) -> String {
    let conjuncts: Vec<String> = equalities.iter().map(|(x, y)| form(x, y)).collect();
    template.replace("{where}", &conjuncts.join(" AND "))
}

/// The joined and the nested form of a query: `x = y`, and `NOT (x <> y)`.
fn joined_and_nested(template: &str, equalities: &[(&str, &str)]) -> (String, String) {
    (
        with_equalities(template, equalities, &|x, y| format!("{x} = {y}")),
        with_equalities(template, equalities, &|x, y| format!("NOT ({x} <> {y})")),
    )
}

fn plan(conn: &mut Connection, query: &str) -> String {
    let result = conn.execute(&format!("EXPLAIN {query}"), &Params::new());
    result.expect("explain").plan.expect("a plan")
}

fn database() -> Database {
    Database::open_in_memory(Config::default()).expect("open")
}

fn nodes() -> impl Strategy<Value = Vec<(usize, usize)>> {
    proptest::collection::vec((0..VALUES.len(), 0..VALUES.len()), 4..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn hash_joins_return_the_rows_of_the_nested_plan(a in nodes(), b in nodes()) {
        let db = database();
        let mut conn = db.connect();
        create(&mut conn, "A", &a);
        create(&mut conn, "B", &b);
        for (template, equalities) in QUERIES {
            let (joined, nested) = joined_and_nested(template, equalities);
            prop_assert!(plan(&mut conn, &joined).contains("HashJoin"), "{}", joined);
            prop_assert!(!plan(&mut conn, &nested).contains("HashJoin"), "{}", nested);
            let expected = rows(&mut conn, &nested);
            prop_assert_eq!(rows(&mut conn, &joined), expected, "{}", joined);
        }
    }

    #[test]
    fn left_outer_hash_joins_return_the_rows_of_the_nested_optional_match(
        a in nodes(),
        b in nodes(),
    ) {
        let db = database();
        let mut conn = db.connect();
        create(&mut conn, "A", &a);
        create(&mut conn, "B", &b);
        for (template, equalities) in OPTIONAL_QUERIES {
            let (joined, nested) = joined_and_nested(template, equalities);
            prop_assert!(plan(&mut conn, &joined).contains("LeftOuterHashJoin"), "{}", joined);
            prop_assert!(plan(&mut conn, &nested).contains("Optional"), "{}", nested);
            prop_assert!(!plan(&mut conn, &nested).contains("HashJoin"), "{}", nested);
            let expected = rows_in_order(&mut conn, &nested);
            prop_assert_eq!(rows_in_order(&mut conn, &joined), expected, "{}", joined);
        }
    }
}

/// The rows PROFILE reports for the first line of `query`'s plan containing `needle`.
fn profiled_rows(conn: &mut Connection, query: &str, needle: &str) -> u64 {
    let result = conn.execute(&format!("PROFILE {query}"), &Params::new());
    let plan = result.expect("profile").plan.expect("a plan");
    let line = plan.lines().find(|l| l.contains(needle));
    let line = line.unwrap_or_else(|| panic!("no {needle} in\n{plan}"));
    let rows = line.split("[rows=").nth(1).expect("[rows=");
    rows[..rows.find(',').expect("rows=N,")]
        .parse()
        .expect("a count")
}

#[test]
fn a_read_only_statement_builds_the_table_once_for_all_runs_of_an_inner_plan() {
    let db = database();
    let mut conn = db.connect();
    create(&mut conn, "A", &[(3, 0), (3, 0), (3, 0)]);
    create(&mut conn, "B", &[(3, 0), (5, 0), (6, 0), (8, 0), (9, 0)]);
    let query = "UNWIND range(1, 10) AS i \
                 CALL { MATCH (a:A), (b:B) WHERE a.k = b.k RETURN count(*) AS n } RETURN i, n";
    assert_eq!(rows(&mut conn, query).unwrap().len(), 10);
    assert!(
        rows(&mut conn, query)
            .unwrap()
            .iter()
            .all(|r| r.ends_with("| 3"))
    );
    // The build side (the scan of B) ran once: 5 rows, not 10 × 5. The probe side ran ten
    // times, and the join's 3 rows each time.
    assert_eq!(profiled_rows(&mut conn, query, "NodeByLabelScan s2:B"), 5);
    assert_eq!(profiled_rows(&mut conn, query, "NodeByLabelScan s1:A"), 30);
    assert_eq!(profiled_rows(&mut conn, query, "HashJoin"), 30);
}

#[test]
fn a_group_larger_than_a_batch_continues_in_the_next() {
    let db = database();
    let mut conn = db.connect();
    let params = Params::new();
    conn.execute("UNWIND range(1, 3) AS i CREATE (:A {k: 1, i: i})", &params)
        .expect("create");
    conn.execute(
        "UNWIND range(1, 5000) AS i CREATE (:B {k: 1, i: i})",
        &params,
    )
    .expect("create");
    let query = "MATCH (a:A), (b:B) WHERE a.k = b.k RETURN a.i, count(*), sum(b.i)";
    assert!(plan(&mut conn, query).contains("HashJoin"));
    let expected: Vec<String> = (1..=3).map(|i| format!("{i} | 5000 | 12502500")).collect();
    assert_eq!(rows(&mut conn, query).unwrap(), expected);
}

#[test]
fn a_left_outer_hash_join_profiles_its_rows_and_builds_once() {
    let db = database();
    let mut conn = db.connect();
    // A: k = 1, 1, 2, 'a', null; B: k = 1, 1.0, 2.5. A's 1s find two partners each, the rest
    // none: 2 × 2 + 3 rows.
    create(&mut conn, "A", &[(3, 0), (3, 0), (5, 0), (8, 0), (0, 0)]);
    create(&mut conn, "B", &[(3, 0), (4, 0), (6, 0)]);
    let query = "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE a.k = b.k RETURN a.i, b.i";
    assert!(plan(&mut conn, query).contains("LeftOuterHashJoin"));
    assert_eq!(rows(&mut conn, query).unwrap().len(), 7);
    assert_eq!(profiled_rows(&mut conn, query, "LeftOuterHashJoin"), 7);
    assert_eq!(profiled_rows(&mut conn, query, "NodeByLabelScan s1:B"), 3);
    // In an inner plan of a read-only statement, the build side still runs once.
    let inner = "UNWIND range(1, 4) AS x CALL { MATCH (a:A) OPTIONAL MATCH (b:B) \
                 WHERE a.k = b.k RETURN a.i AS ai, b.i AS bi } RETURN x, ai, bi";
    assert!(plan(&mut conn, inner).contains("LeftOuterHashJoin"));
    assert_eq!(rows(&mut conn, inner).unwrap().len(), 28);
    assert_eq!(profiled_rows(&mut conn, inner, "LeftOuterHashJoin"), 28);
    assert_eq!(profiled_rows(&mut conn, inner, ":B"), 3);
}

#[test]
fn a_left_outer_join_group_larger_than_a_batch_continues_in_the_next() {
    let db = database();
    let mut conn = db.connect();
    let params = Params::new();
    conn.execute(
        "UNWIND range(1, 3) AS i CREATE (:A {k: i % 2, i: i})",
        &params,
    )
    .expect("create");
    conn.execute(
        "UNWIND range(1, 5000) AS i CREATE (:B {k: 1, i: i})",
        &params,
    )
    .expect("create");
    let query = "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE a.k = b.k AND b.i > 10 \
                 RETURN a.i, count(b), sum(b.i)";
    assert!(plan(&mut conn, query).contains("LeftOuterHashJoin"));
    let expected = ["1 | 4990 | 12502445", "2 | 0 | 0", "3 | 4990 | 12502445"];
    assert_eq!(rows(&mut conn, query).unwrap(), expected);
}

/// Build columns the table keeps typed (`exec::join`, TABLE) — integers, floats, strings and
/// booleans with nulls among them, the build side's nodes — and the ones it keeps as values
/// (mixed types, all null) come out as the nested plan's, in an inner join and a left outer
/// one, the build side's properties read before the join (carried) and after it.
#[test]
fn typed_build_columns_return_the_nested_plans_values() {
    let db = database();
    let mut conn = db.connect();
    for i in 0..24 {
        let props = match i % 5 {
            0 => format!("k: {}", i % 7),
            _ => format!(
                "k: {}, n: {i}, f: {i}.5, s: 's{i}', t: {}, m: {}",
                i % 7,
                i % 3 == 0,
                if i % 2 == 0 { "1" } else { "'x'" }
            ),
        };
        let query = format!("CREATE (:B {{{props}}})");
        conn.execute(&query, &Params::new()).expect(&query);
    }
    for i in 0..60 {
        let query = format!("CREATE (:A {{i: {i}, k: {}}})", i % 9);
        conn.execute(&query, &Params::new()).expect(&query);
    }
    let templates = [
        "MATCH (a:A), (b:B) WHERE {where} RETURN a.i, b, b.n, b.f, b.s, b.t, b.m, b.z",
        "MATCH (a:A), (b:B) WHERE {where} WITH a, b RETURN a.i, b.n + 1, b.s + '!', b",
        "MATCH (a:A) OPTIONAL MATCH (b:B) WHERE {where} RETURN a.i, b, b.n, b.f, b.s, b.t, b.m",
    ];
    for template in templates {
        let _ = joined_as_nested(&mut conn, template);
    }
}

/// `template` joined on `a.k = b.k` — which EXPLAIN must show as a hash join — and its rows,
/// after checking them against the nested plan's in order.
fn joined_as_nested(conn: &mut Connection, template: &str) -> Result<Vec<String>, String> {
    let (joined, nested) = joined_and_nested(template, &[("a.k", "b.k")]);
    let explained = plan(conn, &joined);
    assert!(explained.contains("HashJoin"), "{joined}\n{explained}");
    let rows = rows_in_order(conn, &joined);
    assert_eq!(rows, rows_in_order(conn, &nested), "{joined}");
    rows
}

/// INTEGER BUILD (`exec::join`): a build side keyed by integers is grouped by a sort that
/// keeps each group's rows in build order, leaves out null keys, and — when a later build
/// batch's keys are not all integers (floats equal to them, `3.0 = 3`) — goes on row by row
/// with the rows kept so far. 2,100 build rows (a batch of integer keys, then one with
/// floats), keys repeating out of order, every 13th null: the nested plan's rows in its
/// order, inner and left outer; and with integer keys only.
#[test]
fn an_integer_build_keeps_each_groups_rows_in_build_order() {
    let db = database();
    let mut conn = db.connect();
    let params = Params::new();
    for (label, floats) in [("B", "i >= 2048 AND i % 2 = 0"), ("C", "false")] {
        let query = format!(
            "UNWIND range(0, 2099) AS i CREATE (:{label} {{i: i, k: CASE WHEN i % 13 = 0 \
             THEN null WHEN {floats} THEN toFloat((i * 37) % 11) ELSE (i * 37) % 11 END}})"
        );
        conn.execute(&query, &params).expect(&query);
    }
    conn.execute(
        "UNWIND range(0, 29) AS i CREATE (:A {i: i, k: i % 12})",
        &params,
    )
    .expect("create");
    let templates = [
        "MATCH (a:A), (b:B) WHERE {where} RETURN a.i, b.i",
        "MATCH (a:A), (b:C) WHERE {where} RETURN a.i, b.i",
        "MATCH (a:A) OPTIONAL MATCH (b:C) WHERE {where} RETURN a.i, b.i",
    ];
    for template in templates {
        let rows = joined_as_nested(&mut conn, template);
        assert!(
            rows.as_ref().is_ok_and(|r| r.len() > 1000),
            "{template}: {rows:?}"
        );
    }
}

/// INTEGER KEYS (`exec::join`): a build key the vectors do not compute (`toInteger` of a
/// string) is built row by row; when every key comes out an integer the groups are indexed
/// by the integer all the same — sorted into key order, as the dense index needs — and the
/// rows come out as the nested plan's, with keys repeated out of order, gaps between them and
/// probes outside their range.
#[test]
fn integer_keys_built_row_by_row_are_indexed_in_key_order() {
    let db = database();
    let mut conn = db.connect();
    let params = Params::new();
    for query in [
        "UNWIND range(0, 299) AS i CREATE (:B {i: i, s: toString((i * 37) % 101)})",
        "UNWIND range(0, 39) AS i CREATE (:A {i: i, k: i * 3 - 10})",
    ] {
        conn.execute(query, &params).expect(query);
    }
    let template = "MATCH (a:A), (b:B) WHERE {where} RETURN a.i, b.i";
    let (joined, nested) = joined_and_nested(template, &[("a.k", "toInteger(b.s)")]);
    let explained = plan(&mut conn, &joined);
    assert!(explained.contains("HashJoin"), "{joined}\n{explained}");
    let rows = rows_in_order(&mut conn, &joined);
    assert_eq!(rows, rows_in_order(&mut conn, &nested), "{joined}");
    assert!(rows.is_ok_and(|r| r.len() > 50), "{joined}");
}
