//! Secondary property indexes end to end: the definition survives close and reopen (its
//! content is rebuilt), seeks read only the matching rows, and they see exactly what a label
//! scan at the same snapshot would — before and after updates, rollbacks and GC.

mod common;

use common::{TempDir, memory_db};
use plexus::{Config, Connection, Database, Error, Params};

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
    let result = conn
        .execute(&format!("PROFILE {query}"), &Params::new())
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
            for age in 0..AGES {
                let wanted = Value::Int(age);
                let Some(mut sought) = tx.seek_by_index("Person", "age", &wanted).expect("seek")
                else {
                    continue; // no index yet
                };
                sought.sort_unstable();
                let mut scanned = Vec::new();
                for &v in &people {
                    if tx.vertex_property(v, "age").expect("prop") == Some(wanted.clone()) {
                        scanned.push(v);
                    }
                }
                assert_eq!(sought, scanned, "age {age} in round {round}");
                checked += 1;
            }
        }
        done.store(true, Ordering::Relaxed);
        assert!(checked > 0, "the index was used");
    });
}
