//! Secondary property indexes end to end, on vertices and on relationships: the definition
//! survives close and reopen (its content is rebuilt), seeks read only the matching rows, and
//! they see exactly what a label (or relationship-type) scan at the same snapshot would —
//! before and after updates, own writes, rollbacks and GC.

mod common;

use common::{TempDir, memory_db};
use plexus::{
    Config, Connection, CypherValue, Database, EdgeId, Error, IndexEntity, IsolationLevel,
    KeyRange, Params, Transaction, Value,
};
use proptest::prelude::*;
use std::ops::Bound;

const PEOPLE: i64 = 100;

fn run(conn: &mut Connection, query: &str) -> Vec<String> {
    let result = conn
        .execute(query, &Params::new())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut rows = result.rendered_rows();
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
    profiled(conn, query, params, "s0:Person")
}

/// The rows the first operator of `query`'s PROFILE whose line holds `marker` produced, and
/// its line.
fn profiled(conn: &mut Connection, query: &str, params: &Params, marker: &str) -> (u64, String) {
    let result = conn
        .execute(&format!("PROFILE {query}"), params)
        .expect("profile");
    let plan = result.plan.expect("a PROFILE plan");
    let line = plan
        .lines()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker} in\n{plan}"))
        .trim()
        .to_string();
    let rows = line.split("[rows=").nth(1).expect("[rows=");
    let digits = &rows[..rows
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rows.len())];
    (digits.parse().expect("a row count"), line)
}

/// An index's life across reopens (see [`survives_reopens`]).
struct Lifecycle<'a> {
    setup: fn(&mut Connection),
    create: &'a str,
    /// Its `SHOW INDEXES` row.
    listed: &'a str,
    /// A query its seek answers, which finds `before` rows, and `after` once `update` ran.
    query: &'a str,
    before: usize,
    update: &'a str,
    after: usize,
    /// What the seek's plan line holds.
    seek: &'a str,
    drop: &'a str,
}

/// Created on `setup`'s data, the index answers `query` (its seek reading only the rows
/// found) after a reopen from the WAL, where its definition is replayed and its content
/// rebuilt; it maintains `update` made after that reopen; it answers again after a reopen
/// from a checkpoint; and once dropped it stays dropped across the next reopen, where the
/// query is answered without it.
fn survives_reopens(tag: &str, case: Lifecycle) {
    let dir = TempDir::new(tag);
    let open = || Database::open(&dir.0, Config::default()).expect("open");
    let seek_rows = |conn: &mut Connection| {
        let (rows, line) = profiled(conn, case.query, &Params::new(), case.seek);
        assert!(line.contains(case.seek), "{line}");
        rows as usize
    };
    {
        let db = open();
        let mut conn = db.connect();
        (case.setup)(&mut conn);
        run(&mut conn, case.create);
        assert_eq!(run(&mut conn, case.query).len(), case.before);
        db.close().expect("close");
    }
    {
        let db = open();
        let mut conn = db.connect();
        assert_eq!(run(&mut conn, "SHOW INDEXES"), [case.listed]);
        assert_eq!(
            seek_rows(&mut conn),
            case.before,
            "the seek reads only matching rows"
        );
        run(&mut conn, case.update);
        assert_eq!(run(&mut conn, case.query).len(), case.after);
        db.checkpoint().expect("checkpoint");
        db.close().expect("close");
    }
    {
        let db = open();
        let mut conn = db.connect();
        assert_eq!(seek_rows(&mut conn), case.after);
        assert_eq!(run(&mut conn, case.query).len(), case.after);
        run(&mut conn, case.drop);
        db.close().expect("close");
    }
    let db = open();
    assert!(db.schema().indexes.is_empty(), "the drop is durable too");
    let mut conn = db.connect();
    let explain = conn.execute(&format!("EXPLAIN {}", case.query), &Params::new());
    let plan = explain.expect("explain").plan.expect("a plan");
    assert!(!plan.contains(case.seek), "{plan}");
    assert_eq!(run(&mut conn, case.query).len(), case.after);
}

#[test]
fn an_index_survives_close_and_reopen_with_its_content_rebuilt() {
    survives_reopens(
        "index-reopen",
        Lifecycle {
            setup: people,
            create: "CREATE INDEX person_age FOR (p:Person) ON (p.age)",
            listed: "'person_age' | 'Person' | 'age' | 'NODE'",
            query: "MATCH (p:Person {age: 3}) RETURN p.name",
            before: (PEOPLE / 10) as usize,
            update: "MATCH (p:Person {name: 'p4'}) SET p.age = 3",
            after: (PEOPLE / 10) as usize + 1,
            seek: "NodeIndexSeek",
            drop: "DROP INDEX person_age",
        },
    );
}

/// Statements over elements (vertices or edges) named by an indexed property, for
/// [`old_snapshots_and_own_writes`]; each takes its names as parameters.
struct Renames<'a> {
    /// Creates 'Ada' and 'Bob', and the index.
    setup: &'a str,
    /// `count(*)` of the elements named `$name`, which the index answers.
    count: &'a str,
    /// Renames `$from` to `$to`.
    rename: &'a str,
    /// Creates one more element named `$name`.
    create: &'a str,
    /// Deletes the elements named `$name`.
    delete: &'a str,
}

/// A reader whose snapshot predates an update finds the element by its old value, also after
/// GC ran while it was open; new readers find the new value, also once GC pruned the old
/// entry. A transaction's seeks find its own renames and creations and not its deletions, and
/// its rollback leaves no trace.
fn old_snapshots_and_own_writes(case: Renames) {
    let db = memory_db();
    let mut writer = db.connect();
    let exec = |conn: &mut Connection, query: &str, names: &[(&str, &str)]| {
        let params = names
            .iter()
            .map(|(key, name)| (key.to_string(), CypherValue::string(name)))
            .collect();
        let result = conn.execute(query, &params).expect(query);
        result.rows.first().map(|row| result.render(&row[0]))
    };
    let count = |conn: &mut Connection, name: &str| {
        exec(conn, case.count, &[("name", name)]).expect("a count")
    };
    let rename = |conn: &mut Connection, from: &str, to: &str| {
        exec(conn, case.rename, &[("from", from), ("to", to)]);
    };
    for statement in case.setup.split(';') {
        run(&mut writer, statement);
    }
    let mut old = db.connect();
    run(&mut old, "BEGIN");
    assert_eq!(count(&mut old, "Ada"), "1");
    rename(&mut writer, "Ada", "Eve");
    // GC while the old snapshot is open must keep what it can see, in rows and index.
    db.compact();
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

    run(&mut writer, "BEGIN");
    // Equality seeks before the transaction's first vertex write are remembered (REPEATED
    // SEEKS in `Transaction::seek_by_index`); after it they must be asked again.
    assert_eq!(count(&mut writer, "Bob"), "1");
    assert_eq!(count(&mut writer, "Zed"), "0");
    rename(&mut writer, "Bob", "Zed");
    exec(&mut writer, case.create, &[("name", "Zed")]);
    exec(&mut writer, case.delete, &[("name", "Eve")]);
    assert_eq!(
        count(&mut writer, "Zed"),
        "2",
        "own writes are found by the seek"
    );
    assert_eq!(count(&mut writer, "Bob"), "0");
    assert_eq!(count(&mut writer, "Eve"), "0", "own deletions are not");
    run(&mut writer, "ROLLBACK");
    assert_eq!(count(&mut writer, "Zed"), "0");
    assert_eq!(count(&mut writer, "Bob"), "1");
    assert_eq!(count(&mut writer, "Eve"), "1");
}

#[test]
fn a_snapshot_from_before_an_update_finds_the_row_by_its_old_value() {
    old_snapshots_and_own_writes(Renames {
        setup: "CREATE (:Person {name: 'Ada'}), (:Person {name: 'Bob'}); \
                CREATE INDEX FOR (p:Person) ON (p.name)",
        count: "MATCH (p:Person {name: $name}) RETURN count(*)",
        rename: "MATCH (p:Person {name: $from}) SET p.name = $to",
        create: "CREATE (:Person {name: $name})",
        delete: "MATCH (p:Person {name: $name}) DELETE p",
    });
}

/// A transaction's remembered equality seeks and existing vertices pass to the next one (as
/// `CALL { … } IN TRANSACTIONS` hands them from batch to batch) only while no commit since
/// their snapshot changed a vertex (`Transaction::adopt_carried_reads`): after a commit of
/// relationships alone they are taken over; after a rename, or a deletion, they are refused
/// and the seek asks the index again, the existence check the rows.
#[test]
fn remembered_reads_pass_on_only_while_no_vertex_changed() {
    let db = memory_db();
    let mut conn = db.connect();
    run(
        &mut conn,
        "CREATE (:Person {name: 'Ada'}), (:Person {name: 'Bob'})",
    );
    run(&mut conn, "CREATE INDEX FOR (p:Person) ON (p.name)");
    let key = |name: &str| KeyRange::equal(&Value::string(name)).expect("a key");
    let seek = |tx: &mut Transaction, name: &str| {
        (tx.seek_by_index("Person", "name", &key(name)).unwrap()).expect("an index")
    };

    let mut first = db.begin();
    let ada = seek(&mut first, "Ada");
    let bob = seek(&mut first, "Bob");
    assert_eq!((ada.len(), bob.len()), (1, 1));
    assert!(first.vertex_exists(bob[0]).unwrap());
    let mut carried = first.take_carried_reads();
    first.commit().unwrap();
    // Each step: `statement` commits on another connection, then a transaction is offered
    // what the last one carried.
    let mut step = |carried, statement: &str, adopted: bool| {
        run(&mut conn, statement);
        let mut tx = db.begin();
        assert_eq!(
            tx.adopt_carried_reads(carried),
            adopted,
            "after {statement}"
        );
        tx
    };

    // Relationships only: every vertex reads as before.
    let mut second = step(
        carried,
        "MATCH (a {name: 'Ada'}), (b {name: 'Bob'}) CREATE (a)-[:KNOWS]->(b)",
        true,
    );
    assert_eq!(seek(&mut second, "Ada"), ada);
    assert!(second.vertex_exists(bob[0]).unwrap());
    carried = second.take_carried_reads();
    second.commit().unwrap();

    let mut third = step(
        carried,
        "MATCH (p:Person {name: 'Ada'}) SET p.name = 'Eve'",
        false,
    );
    assert_eq!(seek(&mut third, "Ada"), Vec::new(), "Ada is Eve now");
    assert!(third.vertex_exists(bob[0]).unwrap());
    carried = third.take_carried_reads();
    third.commit().unwrap();

    let mut fourth = step(
        carried,
        "MATCH (p:Person {name: 'Bob'}) DETACH DELETE p",
        false,
    );
    assert!(!fourth.vertex_exists(bob[0]).unwrap(), "Bob is gone");
}

#[test]
fn the_rust_api_creates_lists_and_drops_indexes() {
    let db = memory_db();
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
    let db = memory_db();
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
    let db = memory_db();
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

/// `{pattern} WHERE {predicate(first, "$a")}`, then ` AND {predicate(op, "$b")}` for a second
/// predicate.
fn predicate_query(
    pattern: &str,
    predicate: impl Fn(usize, &str) -> String,
    first: usize,
    second: Option<&(usize, CypherValue)>,
) -> String {
    let mut text = format!("{pattern} WHERE {}", predicate(first, "$a"));
    if let Some((op, _)) = second {
        text += &format!(" AND {}", predicate(*op, "$b"));
    }
    text
}

/// `$a`, and `$b` for a second predicate.
fn query_params(a: CypherValue, second: Option<(usize, CypherValue)>) -> Params {
    let mut params = Params::from([("a".to_string(), a)]);
    if let Some((_, b)) = second {
        params.insert("b".to_string(), b);
    }
    params
}

/// Checks that `queries` return the same rows (sorted) before and after `create` makes an
/// index, and that the first one's plan then holds `seek`.
fn same_answers_with_index(
    conn: &mut Connection,
    queries: &[(String, Params)],
    create: &str,
    seek: &str,
) -> Result<(), TestCaseError> {
    let answers = |conn: &mut Connection| -> Vec<Vec<String>> {
        let rows = |(text, params): &(String, Params)| {
            let result = conn.execute(text, params).expect("query");
            let mut rows = result.rendered_rows();
            rows.sort();
            rows
        };
        queries.iter().map(rows).collect()
    };
    let without = answers(conn);
    run(conn, create);
    let (text, params) = &queries[0];
    let explain = conn.execute(&format!("EXPLAIN {text}"), params);
    let plan = explain.expect("explain").plan.expect("a plan");
    prop_assert!(plan.contains(seek), "{}", plan);
    prop_assert_eq!(answers(conn), without);
    Ok(())
}

/// A database in memory with a `:P {id: i, v: values[i]}` node per value (no `v` for `None`),
/// and a connection to it.
fn p_nodes(values: Vec<Option<CypherValue>>) -> (Database, Connection) {
    let db = memory_db();
    let mut conn = db.connect();
    let stored = values
        .into_iter()
        .map(|v| v.unwrap_or(CypherValue::Null))
        .collect();
    let params = Params::from([("values".to_string(), CypherValue::list(stored))]);
    conn.execute(
        "UNWIND range(0, size($values) - 1) AS i CREATE (:P {id: i, v: $values[i]})",
        &params,
    )
    .expect("create");
    (db, conn)
}

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
        let (_db, mut conn) = p_nodes(values);
        let queries: Vec<(String, Params)> = predicates
            .into_iter()
            .map(|(first, a, second)| {
                let predicate = |op: usize, param: &str| format!("p.v {} {param}", OPERATORS[op]);
                let text = predicate_query("MATCH (p:P)", predicate, first, second.as_ref());
                (text + " RETURN p.id", query_params(a, second))
            })
            .collect();
        same_answers_with_index(&mut conn, &queries, "CREATE INDEX p_v FOR (p:P) ON (p.v)", "NodeIndexSeek")?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Equality seeks — whose Filter is skipped on batches found exactly (`exec::scan`, EXACT
    /// SEEKS) — return what the label scan returns: one operand per statement, either way
    /// round, and one per input row (a batch mixing exact keys, big integers the index
    /// cannot tell apart, nulls, NaN and lists it cannot seek).
    #[test]
    fn equality_seeks_return_what_the_label_scan_returns(
        values in prop::collection::vec(prop::option::of(value()), 1..24),
        keys in prop::collection::vec(bound_value(), 1..12),
    ) {
        let (_db, mut conn) = p_nodes(values);
        let first = Params::from([("a".to_string(), keys[0].clone())]);
        let all = Params::from([("keys".to_string(), CypherValue::list(keys))]);
        // A subquery per key: its scan seeks with the key bound (a MATCH after the UNWIND
        // would hash-join this small label).
        let per_key = |predicate: &str| {
            format!("UNWIND $keys AS k CALL {{ WITH k MATCH (p:P) WHERE {predicate} RETURN p.id AS id }} RETURN k, id")
        };
        let queries = vec![
            (per_key("p.v = k"), all.clone()),
            (per_key("k = p.v"), all.clone()),
            ("MATCH (p:P) WHERE p.v = $a RETURN p.id".to_string(), first.clone()),
            ("MATCH (p:P) WHERE $a = p.v RETURN p.id".to_string(), first),
            ("UNWIND $keys AS k MATCH (p:P {v: k}) RETURN k, p.id".to_string(), all),
        ];
        same_answers_with_index(&mut conn, &queries, "CREATE INDEX p_v FOR (p:P) ON (p.v)", "NodeIndexSeek")?;
    }
}

// ---- relationship indexes ------------------------------------------------------------------

/// `PEOPLE` people (see [`people`]) in a ring: `(p<i>)-[:KNOWS {since: i % 10}]->(p<i+1>)`.
fn ring(conn: &mut Connection) {
    people(conn);
    let link = format!(
        "UNWIND range(0, {last}) AS i \
         MATCH (a:Person {{name: 'p' + toString(i)}}), \
               (b:Person {{name: 'p' + toString((i + 1) % {PEOPLE})}}) \
         CREATE (a)-[:KNOWS {{since: i % 10}}]->(b)",
        last = PEOPLE - 1
    );
    run(conn, &link);
}

#[test]
fn a_relationship_index_survives_reopen_from_the_wal_and_from_a_checkpoint() {
    survives_reopens(
        "rel-index-reopen",
        Lifecycle {
            setup: ring,
            create: "CREATE INDEX knows_since FOR ()-[r:KNOWS]-() ON (r.since)",
            listed: "'knows_since' | 'KNOWS' | 'since' | 'RELATIONSHIP'",
            query: "MATCH (a)-[r:KNOWS {since: 3}]->(b) RETURN a.name, b.name",
            before: (PEOPLE / 10) as usize,
            update: "MATCH ()-[r:KNOWS {since: 4}]->() SET r.since = 3",
            after: 2 * (PEOPLE / 10) as usize,
            seek: "RelationshipIndexSeek",
            drop: "DROP INDEX knows_since",
        },
    );
}

#[test]
fn an_old_snapshot_seeks_a_relationship_by_its_old_value_across_update_and_gc() {
    old_snapshots_and_own_writes(Renames {
        setup: "CREATE (a:P)-[:R {w: 'Ada'}]->(b:P), (b)-[:R {w: 'Bob'}]->(a); \
                CREATE INDEX FOR ()-[r:R]-() ON (r.w)",
        count: "MATCH ()-[r:R {w: $name}]->() RETURN count(*)",
        rename: "MATCH ()-[r:R {w: $from}]->() SET r.w = $to",
        create: "MATCH (a:P) WITH a LIMIT 1 CREATE (a)-[:R {w: $name}]->(a)",
        delete: "MATCH ()-[r:R {w: $name}]->() DELETE r",
    });
    // The plan seeks the relationship index.
    let db = memory_db();
    let mut conn = db.connect();
    run(&mut conn, "CREATE ()-[:R {w: 'Ada'}]->()");
    db.create_relationship_index("R", "w", None).expect("index");
    let seek = "MATCH ()-[r:R {w: 'Ada'}]-() RETURN r";
    let (rows, line) = profiled(&mut conn, seek, &Params::new(), "RelationshipIndexSeek");
    assert!(line.contains("index index_R_w"), "{line}");
    assert_eq!(rows, 2, "one relationship, both orientations");
}

#[test]
fn the_rust_api_creates_relationship_indexes_beside_node_indexes() {
    let db = memory_db();
    let name = db
        .create_relationship_index("KNOWS", "since", None)
        .expect("create");
    assert_eq!(name, "index_KNOWS_since");
    assert!(matches!(
        db.create_relationship_index("KNOWS", "since", Some("again")),
        Err(Error::Constraint(message)) if message.contains("[:KNOWS](since)")
    ));
    // A label of the same name is indexed apart (under another name).
    db.create_index("KNOWS", "since", Some("knows_label"))
        .expect("a node index");
    let listed: Vec<(String, String, IndexEntity)> = db
        .schema()
        .indexes
        .into_iter()
        .map(|i| (i.name, i.label, i.entity))
        .collect();
    assert_eq!(
        listed,
        [
            (
                "index_KNOWS_since".into(),
                "KNOWS".into(),
                IndexEntity::Relationship
            ),
            ("knows_label".into(), "KNOWS".into(), IndexEntity::Node),
        ]
    );
    db.drop_index("index_KNOWS_since").expect("drop");
    assert_eq!(db.schema().indexes.len(), 1);
}

#[test]
fn a_serializable_relationship_seek_conflicts_with_an_update_into_its_range() {
    let db = memory_db();
    let mut conn = db.connect();
    run(&mut conn, "CREATE (a:P)-[:R {w: 1}]->(a)");
    db.create_relationship_index("R", "w", None).expect("index");
    let five = KeyRange::equal(&plexus::Value::Int(5)).expect("indexable");
    let mut reader = db.begin_with(IsolationLevel::Serializable);
    let found = reader.seek_edges_by_index("R", "w", &five).expect("seek");
    assert_eq!(found, Some(Vec::new()));
    reader
        .create_vertex(&["Seen"], &[])
        .expect("a write to validate");
    // Another transaction moves the edge into the range the reader sought.
    run(&mut conn, "MATCH ()-[r:R]->() SET r.w = 5");
    assert!(matches!(reader.commit(), Err(Error::Aborted(_))));
}

/// The edges of `T` whose `v` is an integer in `wanted`, by a scan of the type.
fn scanned(tx: &mut Transaction, wanted: &std::ops::Range<i64>) -> Vec<EdgeId> {
    let mut found = Vec::new();
    for e in tx.scan_edges("T").expect("scan") {
        let held = tx.edge_property(e, "v").expect("prop");
        if matches!(held, Some(plexus::Value::Int(v)) if wanted.contains(&v)) {
            found.push(e);
        }
    }
    found.sort_unstable();
    found
}

/// A change to the edges of `T` (by index into those created so far), or to the transaction.
#[derive(Clone, Debug)]
enum EdgeOp {
    Create(usize, usize, Option<i64>),
    Set(usize, Option<i64>),
    SetText(usize),
    Delete(usize),
    Commit,
    Rollback,
    Compact,
}

fn edge_op() -> impl Strategy<Value = EdgeOp> {
    let value = prop::option::of(0..4_i64);
    prop_oneof![
        4 => (0..3_usize, 0..3_usize, value.clone()).prop_map(|(a, b, v)| EdgeOp::Create(a, b, v)),
        3 => (0..16_usize, value).prop_map(|(e, v)| EdgeOp::Set(e, v)),
        1 => (0..16_usize).prop_map(EdgeOp::SetText),
        1 => (0..16_usize).prop_map(EdgeOp::Delete),
        1 => Just(EdgeOp::Commit),
        1 => Just(EdgeOp::Rollback),
        1 => Just(EdgeOp::Compact),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Relationship seeks find what the type scan finds — in a transaction with uncommitted
    /// creates, updates and deletes, after commits and rollbacks, across GC, and in a reader
    /// whose snapshot predates them all.
    #[test]
    fn relationship_seeks_equal_type_scans_through_writes_rollbacks_and_gc(
        ops in prop::collection::vec(edge_op(), 1..40),
    ) {
        let db = memory_db();
        let mut setup = db.begin();
        let nodes: Vec<_> = (0..3)
            .map(|_| setup.create_vertex(&["N"], &[]).expect("vertex"))
            .collect();
        let first = setup.create_edge(nodes[0], "T", nodes[1], &[("v", plexus::Value::Int(1))]);
        first.expect("edge");
        setup.commit().expect("commit");
        db.create_relationship_index("T", "v", None).expect("index");
        let mut reader = db.begin();
        // The writing transaction; a new one begins once the last has committed or rolled back.
        let mut writing = Some(db.begin());
        let mut edges: Vec<EdgeId> = reader.scan_edges("T").expect("scan");
        let int = plexus::Value::Int;
        let ranges = [(int(1), 1..2), (int(0), 0..1)];
        let (low, high) = (int(1), int(3));
        let between = KeyRange::between(Bound::Included(&low), Bound::Excluded(&high));
        let ranges: Vec<(KeyRange, std::ops::Range<i64>)> = ranges
            .iter()
            .map(|(value, wanted)| (KeyRange::equal(value).expect("indexable"), wanted.clone()))
            .chain([(between.expect("indexable"), 1..3)])
            .collect();
        let check = |tx: &mut Transaction| -> Result<(), TestCaseError> {
            for (range, wanted) in &ranges {
                let sought = tx.seek_edges_by_index("T", "v", range).expect("seek");
                let mut sought = sought.expect("a ready index");
                sought.sort_unstable();
                prop_assert_eq!(sought, scanned(tx, wanted));
            }
            Ok(())
        };
        let reader_sees = scanned(&mut reader, &(0..4));
        for op in ops {
            let pick = |i: usize| edges.get(i % edges.len()).copied();
            let tx = writing.as_mut().expect("a writing transaction");
            // Writes to edges deleted or rolled back fail in the transaction's view: skipped.
            match op {
                EdgeOp::Create(a, b, v) => {
                    let props: Vec<(&str, plexus::Value)> = v.map(|v| ("v", int(v))).into_iter().collect();
                    edges.push(tx.create_edge(nodes[a], "T", nodes[b], &props).expect("create"));
                }
                EdgeOp::Set(i, v) => {
                    let value = v.map_or(plexus::Value::Null, int);
                    let _ = pick(i).map(|e| tx.set_edge_property(e, "v", value));
                }
                EdgeOp::SetText(i) => {
                    let _ = pick(i).map(|e| tx.set_edge_property(e, "v", plexus::Value::from("1")));
                }
                EdgeOp::Delete(i) => {
                    let _ = pick(i).map(|e| tx.delete_edge(e));
                }
                EdgeOp::Commit => {
                    writing.take().map(Transaction::commit).expect("open").expect("commit");
                }
                EdgeOp::Rollback => writing.take().map(Transaction::rollback).expect("open"),
                EdgeOp::Compact => db.compact(),
            }
            let tx = writing.get_or_insert_with(|| db.begin());
            check(tx)?;
            prop_assert_eq!(scanned(&mut reader, &(0..4)), reader_sees.clone());
            check(&mut reader)?;
        }
    }

    /// Cypher relationship seeks — equality, `IN`, one- and two-sided ranges, prefixes, in
    /// every direction — return what the plan without the index returns, on the same data.
    #[test]
    fn relationship_index_seeks_return_what_the_plan_without_them_returns(
        values in prop::collection::vec(prop::option::of(value()), 1..24),
        predicates in prop::collection::vec(rel_predicates(), 1..6),
    ) {
        let db = memory_db();
        let mut conn = db.connect();
        run(&mut conn, "UNWIND range(0, 4) AS i CREATE (:N {id: i})");
        let stored = values.into_iter().map(|v| v.unwrap_or(CypherValue::Null)).collect();
        let params = Params::from([("values".to_string(), CypherValue::list(stored))]);
        conn.execute(
            "UNWIND range(0, size($values) - 1) AS i \
             MATCH (a:N {id: i % 5}), (b:N {id: i * 3 % 5}) \
             CREATE (a)-[:T {id: i, v: $values[i]}]->(b)",
            &params,
        )
        .expect("create");
        let arrows = [("-", "->"), ("<-", "-"), ("-", "-")];
        let queries: Vec<(String, Params)> = predicates
            .into_iter()
            .map(|(first, a, second, arrow)| {
                let (l, r) = arrows[arrow];
                let pattern = format!("MATCH (x){l}[t:T]{r}(y)");
                let text = predicate_query(&pattern, rel_predicate, first, second.as_ref());
                (text + " RETURN x.id, t.id, y.id", query_params(a, second))
            })
            .collect();
        let create = "CREATE INDEX t_v FOR ()-[t:T]-() ON (t.v)";
        same_answers_with_index(&mut conn, &queries, create, "RelationshipIndexSeek")?;
    }
}

const REL_OPERATORS: [&str; 7] = [">", ">=", "<", "<=", "STARTS WITH", "=", "IN"];

/// A predicate on `t.v` (an operator of [`REL_OPERATORS`] and its operand), optionally a
/// second one (a comparison), and the direction of the pattern (an index into its arrows).
fn rel_predicates()
-> impl Strategy<Value = (usize, CypherValue, Option<(usize, CypherValue)>, usize)> {
    let second = prop::option::of((0..4_usize, bound_value()));
    (0..REL_OPERATORS.len(), bound_value(), second, 0..3_usize)
}

/// `t.v <op> param` for operator `op` of [`REL_OPERATORS`] (`IN` a two-element list).
fn rel_predicate(op: usize, param: &str) -> String {
    match REL_OPERATORS[op] {
        "IN" => format!("t.v IN [{param}, 2]"),
        op => format!("t.v {op} {param}"),
    }
}

/// An index statement is acknowledged only once its definition is as durable as a commit:
/// with `Fsync` durability a crash right after `create_index` / `drop_index` (no commit after
/// them to carry their catalog records) must not lose them. Failed before the DDL waited for
/// the WAL: the index was gone after the crash.
#[test]
fn index_statements_survive_a_crash_right_after_them() {
    let vfs = plexus::testing::FaultVfs::new();
    let config = Config::default();
    assert_eq!(config.durability, plexus::DurabilityMode::Fsync);
    let db = Database::open_with_vfs(std::sync::Arc::new(vfs.clone()), config.clone()).unwrap();
    let mut tx = db.begin();
    tx.create_vertex(&["P"], &[("x", plexus::Value::from(1))])
        .unwrap();
    tx.commit().unwrap();
    db.create_index("P", "x", None).unwrap();
    db.create_index("P", "y", Some("by_y")).unwrap();
    let names = |db: &Database| -> Vec<String> {
        db.schema().indexes.into_iter().map(|i| i.name).collect()
    };
    let crashed = |vfs: &plexus::testing::FaultVfs| {
        Database::open_with_vfs(std::sync::Arc::new(vfs.after_crash(false)), config.clone())
            .unwrap()
    };
    assert_eq!(names(&crashed(&vfs)), ["index_P_x", "by_y"]);
    db.drop_index("by_y").unwrap();
    assert_eq!(names(&crashed(&vfs)), ["index_P_x"]);
}
