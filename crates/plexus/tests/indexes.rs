//! Secondary property indexes end to end: the definition survives close and reopen (its
//! content is rebuilt), seeks read only the matching rows, and they see exactly what a label
//! scan at the same snapshot would — before and after updates, rollbacks and GC.

mod common;

use common::{TempDir, memory_db};
use plexus::{Config, Connection, CypherValue, Database, Error, KeyRange, Params};
use proptest::prelude::*;
use std::ops::Bound;

const PEOPLE: i64 = 100;

fn run(conn: &mut Connection, query: &str) -> Vec<String> {
    let result = conn
        .execute(query, &Params::new())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut rows: Vec<String> = result
        .rows
        .iter()
        .map(|row| {
            let cells: Vec<String> = row.iter().map(|v| result.render(v)).collect();
            cells.join(" | ")
        })
        .collect();
    rows.sort();
    rows
}

/// `PEOPLE` people named `p<i>`, with `age = i % 10`.
fn people(conn: &mut Connection) {
    let create = format!(
        "UNWIND range(0, {}) AS i CREATE (:Person {{name: 'p' + toString(i), age: i % 10}})",
        PEOPLE - 1
    );
    run(conn, &create);
}

/// The rows the `Person` seek or scan produced in `query`'s PROFILE, and its plan line.
fn profiled_scan(conn: &mut Connection, query: &str) -> (u64, String) {
    profiled_scan_with(conn, query, &Params::new())
}

fn profiled_scan_with(conn: &mut Connection, query: &str, params: &Params) -> (u64, String) {
    let result = conn
        .execute(&format!("PROFILE {query}"), params)
        .expect("profile");
    let plan = result.plan.expect("a PROFILE plan");
    let line = plan
        .lines()
        .find(|l| l.contains("s0:Person"))
        .unwrap_or_else(|| panic!("no Person scan in\n{plan}"))
        .trim()
        .to_string();
    let rows = line.split("[rows=").nth(1).expect("[rows=");
    let digits = &rows[..rows
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rows.len())];
    (digits.parse().expect("a row count"), line)
}

#[test]
fn an_index_survives_close_and_reopen_with_its_content_rebuilt() {
    let dir = TempDir::new("index-reopen");
    let query = "MATCH (p:Person {age: 3}) RETURN p.name";
    let expected: Vec<String> = (0..PEOPLE)
        .filter(|i| i % 10 == 3)
        .map(|i| format!("'p{i}'"))
        .collect();
    let sorted = |mut rows: Vec<String>| {
        rows.sort();
        rows
    };
    {
        let db = Database::open(&dir.0, Config::default()).expect("open");
        let mut conn = db.connect();
        people(&mut conn);
        run(
            &mut conn,
            "CREATE INDEX person_age FOR (p:Person) ON (p.age)",
        );
        assert_eq!(run(&mut conn, query), sorted(expected.clone()));
        db.close().expect("close");
    }
    // Reopened from the WAL: the definition is replayed, the content rebuilt from the rows.
    {
        let db = Database::open(&dir.0, Config::default()).expect("reopen");
        let mut conn = db.connect();
        assert_eq!(
            run(&mut conn, "SHOW INDEXES"),
            ["'person_age' | 'Person' | 'age'"]
        );
        let (rows, line) = profiled_scan(&mut conn, query);
        assert!(line.contains("NodeIndexSeek"), "{line}");
        assert_eq!(
            rows,
            expected.len() as u64,
            "the seek reads only matching rows"
        );
        assert_eq!(run(&mut conn, query), sorted(expected.clone()));
        // Updates after the reopen are maintained.
        run(&mut conn, "MATCH (p:Person {name: 'p4'}) SET p.age = 3");
        assert_eq!(run(&mut conn, query).len(), expected.len() + 1);
        // From a checkpoint this time.
        db.checkpoint().expect("checkpoint");
        db.close().expect("close");
    }
    {
        let db = Database::open(&dir.0, Config::default()).expect("reopen");
        let mut conn = db.connect();
        assert_eq!(run(&mut conn, query).len(), expected.len() + 1);
        let (rows, _) = profiled_scan(&mut conn, query);
        assert_eq!(rows, expected.len() as u64 + 1);
        run(&mut conn, "DROP INDEX person_age");
        db.close().expect("close");
    }
    let db = Database::open(&dir.0, Config::default()).expect("reopen");
    assert!(db.schema().indexes.is_empty(), "the drop is durable too");
    let mut conn = db.connect();
    let (rows, line) = profiled_scan(&mut conn, query);
    assert!(!line.contains("NodeIndexSeek"), "{line}");
    assert_eq!(rows, PEOPLE as u64, "back to the label scan");
}

#[test]
fn a_snapshot_from_before_an_update_finds_the_row_by_its_old_value() {
    let (db, _vfs) = memory_db();
    let mut writer = db.connect();
    run(
        &mut writer,
        "CREATE (:Person {name: 'Ada'}), (:Person {name: 'Bob'})",
    );
    db.create_index("Person", "name", None).expect("index");
    let mut old = db.connect();
    run(&mut old, "BEGIN");
    assert_eq!(
        run(&mut old, "MATCH (p:Person {name: 'Ada'}) RETURN count(*)"),
        ["1"]
    );

    run(
        &mut writer,
        "MATCH (p:Person {name: 'Ada'}) SET p.name = 'Eve'",
    );
    // GC while the old snapshot is open must keep what it can see, in rows and index.
    db.compact();
    let count = |conn: &mut Connection, name: &str| {
        let query = format!("MATCH (p:Person {{name: '{name}'}}) RETURN count(*)");
        run(conn, &query)[0].clone()
    };
    assert_eq!(
        count(&mut old, "Ada"),
        "1",
        "the old snapshot still sees Ada"
    );
    assert_eq!(count(&mut old, "Eve"), "0", "and not Eve");
    assert_eq!(
        count(&mut writer, "Ada"),
        "0",
        "a new reader sees the update"
    );
    assert_eq!(count(&mut writer, "Eve"), "1");
    run(&mut old, "COMMIT");

    // Once no reader needs the old value, GC prunes its entry; answers stay the same.
    db.compact();
    assert_eq!(count(&mut writer, "Ada"), "0");
    assert_eq!(count(&mut writer, "Eve"), "1");

    // A rolled-back update leaves no trace, though the transaction saw its own write.
    run(&mut writer, "BEGIN");
    run(
        &mut writer,
        "MATCH (p:Person {name: 'Bob'}) SET p.name = 'Zed'",
    );
    run(&mut writer, "CREATE (:Person {name: 'Zed'})");
    assert_eq!(
        count(&mut writer, "Zed"),
        "2",
        "own writes are found by the seek"
    );
    assert_eq!(count(&mut writer, "Bob"), "0");
    run(&mut writer, "ROLLBACK");
    assert_eq!(count(&mut writer, "Zed"), "0");
    assert_eq!(count(&mut writer, "Bob"), "1");
}

#[test]
fn the_rust_api_creates_lists_and_drops_indexes() {
    let (db, _vfs) = memory_db();
    let name = db.create_index("Person", "age", None).expect("create");
    assert_eq!(name, "index_Person_age");
    let named = db
        .create_index("City", "name", Some("city_name"))
        .expect("create");
    assert_eq!(named, "city_name");
    assert!(matches!(
        db.create_index("Person", "name", Some("city_name")),
        Err(Error::Constraint(_))
    ));
    assert!(matches!(
        db.create_index("Person", "age", Some("again")),
        Err(Error::Constraint(_))
    ));
    let listed: Vec<(String, String, String)> = db
        .schema()
        .indexes
        .into_iter()
        .map(|i| (i.name, i.label, i.property))
        .collect();
    assert_eq!(
        listed,
        [
            ("index_Person_age".into(), "Person".into(), "age".into()),
            ("city_name".into(), "City".into(), "name".into()),
        ]
    );
    db.drop_index("city_name").expect("drop");
    assert!(matches!(
        db.drop_index("city_name"),
        Err(Error::NotFound(_))
    ));
    assert_eq!(db.schema().indexes.len(), 1);
}

#[test]
fn seeks_agree_with_scans_while_writers_update_and_gc_prunes() {
    use plexus::Value;
    use std::sync::atomic::{AtomicBool, Ordering};
    const AGES: i64 = 5;
    let (db, _vfs) = memory_db();
    let mut conn = db.connect();
    people(&mut conn);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for writer in 0..2_i64 {
            let (db, done) = (&db, &done);
            scope.spawn(move || {
                let mut step = writer;
                while !done.load(Ordering::Relaxed) {
                    let mut tx = db.begin();
                    let people = tx.scan_label("Person").expect("scan");
                    let v = people[(step * 7 % PEOPLE) as usize];
                    let age = Value::Int((step * 3) % AGES);
                    // Conflicts between the two writers are expected; retrying is not needed.
                    let _ = tx.set_vertex_property(v, "age", age).map(|()| tx.commit());
                    step += 2;
                }
            });
        }
        // Each age by equality, and ages 1 and 2 by a range.
        let one = Value::Int(1);
        let three = Value::Int(3);
        let seeks: Vec<(KeyRange, std::ops::RangeInclusive<i64>)> = (0..AGES)
            .map(|age| {
                (
                    KeyRange::equal(&Value::Int(age)).expect("indexable"),
                    age..=age,
                )
            })
            .chain([(
                KeyRange::between(Bound::Included(&one), Bound::Excluded(&three))
                    .expect("indexable"),
                1..=2,
            )])
            .collect();
        let mut checked = 0;
        for round in 0..300 {
            if round == 20 {
                db.create_index("Person", "age", None)
                    .expect("index under load");
            }
            if round % 25 == 0 {
                db.compact();
            }
            let mut tx = db.begin();
            let people = tx.scan_label("Person").expect("scan");
            for (range, ages) in &seeks {
                let Some(mut sought) = tx.seek_by_index("Person", "age", range).expect("seek")
                else {
                    continue; // no index yet
                };
                sought.sort_unstable();
                let mut scanned = Vec::new();
                for &v in &people {
                    let age = tx.vertex_property(v, "age").expect("prop");
                    if matches!(age, Some(Value::Int(age)) if ages.contains(&age)) {
                        scanned.push(v);
                    }
                }
                assert_eq!(sought, scanned, "ages {ages:?} in round {round}");
                checked += 1;
            }
        }
        done.store(true, Ordering::Relaxed);
        assert!(checked > 0, "the index was used");
    });
}

#[test]
fn range_and_prefix_seeks_read_only_their_rows_and_see_their_snapshot() {
    let (db, _vfs) = memory_db();
    let mut writer = db.connect();
    people(&mut writer);
    run(
        &mut writer,
        "CREATE INDEX person_age FOR (p:Person) ON (p.age)",
    );
    run(
        &mut writer,
        "CREATE INDEX person_name FOR (p:Person) ON (p.name)",
    );
    let range = "MATCH (p:Person) WHERE p.age >= 3 AND p.age < 5 RETURN p.name";
    let (rows, line) = profiled_scan(&mut writer, range);
    assert!(line.contains("NodeIndexSeek"), "{line}");
    assert_eq!(rows, 20, "ages 3 and 4, ten people each");
    let prefix = "MATCH (p:Person) WHERE p.name STARTS WITH $prefix RETURN p.name";
    let params = Params::from([("prefix".to_string(), CypherValue::string("p1"))]);
    let (rows, line) = profiled_scan_with(&mut writer, prefix, &params);
    assert!(line.contains("STARTS WITH $prefix"), "{line}");
    assert_eq!(rows, 11, "p1 and p10 to p19");

    let mut old = db.connect();
    run(&mut old, "BEGIN");
    let names = |conn: &mut Connection| -> Vec<String> { run(conn, range) };
    let before = names(&mut old);
    assert!(before.contains(&"'p3'".to_string()) && !before.contains(&"'p0'".to_string()));
    // p3 leaves the range, p0 enters it; GC runs while the old snapshot is open.
    run(&mut writer, "MATCH (p:Person {name: 'p3'}) SET p.age = 7");
    run(&mut writer, "MATCH (p:Person {name: 'p0'}) SET p.age = 4");
    db.compact();
    assert_eq!(
        names(&mut old),
        before,
        "the old snapshot sees the old values"
    );
    let after = names(&mut writer);
    assert!(after.contains(&"'p0'".to_string()) && !after.contains(&"'p3'".to_string()));
    assert_eq!(after.len(), 20);
    run(&mut old, "COMMIT");
    db.compact();
    assert_eq!(
        names(&mut writer),
        after,
        "pruning keeps the current values"
    );
}

/// Values of every kind a property holds that a range compares: small and big integers
/// (around 2^53, where they round in f64), floats, strings, booleans — and for bounds also
/// null, NaN and lists (which the index cannot seek).
fn value() -> impl Strategy<Value = CypherValue> {
    const LIMIT: i64 = 1 << 53;
    prop_oneof![
        (-3..=3_i64).prop_map(CypherValue::Int),
        (-2..=2_i64).prop_map(|d| CypherValue::Int(LIMIT + d)),
        (-2..=2_i64).prop_map(|d| CypherValue::Float((LIMIT + d) as f64)),
        (-6..=6_i32).prop_map(|x| CypherValue::Float(f64::from(x) / 2.0)),
        "[ab]{0,2}".prop_map(|s| CypherValue::string(&s)),
        any::<bool>().prop_map(CypherValue::Bool),
    ]
}

fn bound_value() -> impl Strategy<Value = CypherValue> {
    prop_oneof![
        8 => value(),
        1 => Just(CypherValue::Null),
        1 => Just(CypherValue::Float(f64::NAN)),
        1 => value().prop_map(|v| CypherValue::list(vec![v])),
    ]
}

const OPERATORS: [&str; 5] = [">", ">=", "<", "<=", "STARTS WITH"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Range and prefix seeks return what the label scan returns, on the same data, for
    /// one- and two-sided bounds given as parameters.
    #[test]
    fn range_seeks_return_what_the_label_scan_returns(
        values in prop::collection::vec(prop::option::of(value()), 1..24),
        predicates in prop::collection::vec(
            (0..OPERATORS.len(), bound_value(), prop::option::of((0..4_usize, bound_value()))),
            1..6,
        ),
    ) {
        let (db, _vfs) = memory_db();
        let mut conn = db.connect();
        let stored = values.into_iter().map(|v| v.unwrap_or(CypherValue::Null)).collect();
        let params = Params::from([("values".to_string(), CypherValue::list(stored))]);
        conn.execute(
            "UNWIND range(0, size($values) - 1) AS i CREATE (:P {id: i, v: $values[i]})",
            &params,
        )
        .expect("create");
        let queries: Vec<(String, Params)> = predicates
            .into_iter()
            .map(|(first, a, second)| {
                let mut text = format!("MATCH (p:P) WHERE p.v {} $a", OPERATORS[first]);
                let mut params = Params::from([("a".to_string(), a)]);
                if let Some((op, b)) = second {
                    text += &format!(" AND p.v {} $b", OPERATORS[op]);
                    params.insert("b".to_string(), b);
                }
                (text + " RETURN p.id", params)
            })
            .collect();
        let answers = |conn: &mut Connection| -> Vec<Vec<String>> {
            queries
                .iter()
                .map(|(text, params)| {
                    let result = conn.execute(text, params).expect("query");
                    let mut ids: Vec<String> = result.rows.iter().map(|r| result.render(&r[0])).collect();
                    ids.sort();
                    ids
                })
                .collect()
        };
        let scanned = answers(&mut conn);
        run(&mut conn, "CREATE INDEX p_v FOR (p:P) ON (p.v)");
        let plan = conn.execute(&format!("EXPLAIN {}", queries[0].0), &queries[0].1)
            .expect("explain").plan.expect("a plan");
        prop_assert!(plan.contains("NodeIndexSeek"), "{}", plan);
        prop_assert_eq!(answers(&mut conn), scanned);
    }
}
