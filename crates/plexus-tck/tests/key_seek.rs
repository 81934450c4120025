//! Primary-key seeks: `MATCH (n:Account {id: $id})` reads one row through the index of a
//! declared table, and gives exactly what the label scan would in every case where the index
//! cannot answer (no table, wrong value type, the label carried by vertices of other tables,
//! the transaction's own writes).

use plexus::{Config, CypherValue, DataType, Database, Params, VertexTableSpec};

const ACCOUNTS: i64 = 200;

fn accounts() -> Database {
    let db = Database::open_in_memory(Config::default()).expect("open");
    db.create_vertex_table(
        &VertexTableSpec::new("Account")
            .property("id", DataType::Int64)
            .property("owner", DataType::String)
            .primary_key("id"),
    )
    .expect("table");
    let mut conn = db.connect();
    let mut params = Params::new();
    params.insert("n".into(), CypherValue::Int(ACCOUNTS));
    conn.execute(
        "UNWIND range(0, $n - 1) AS i CREATE (:Account {id: i, owner: 'owner-' + toString(i)})",
        &params,
    )
    .expect("create");
    db
}

fn id_param(id: CypherValue) -> Params {
    let mut params = Params::new();
    params.insert("id".into(), id);
    params
}

/// The owners found by `query` with `$id`, sorted.
fn owners(conn: &mut plexus::Connection, query: &str, id: CypherValue) -> Vec<String> {
    let result = conn.execute(query, &id_param(id)).expect(query);
    let mut owners: Vec<String> = result.rows.iter().map(|r| result.render(&r[0])).collect();
    owners.sort();
    owners
}

/// The rows the scan operator (the line naming `label`, e.g. `:Account`) produced, from
/// PROFILE.
fn scanned_rows(conn: &mut plexus::Connection, query: &str, id: CypherValue, label: &str) -> u64 {
    let result = conn
        .execute(&format!("PROFILE {query}"), &id_param(id))
        .expect("profile");
    let plan = result.plan.expect("a PROFILE plan");
    let line = plan
        .lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no scan of {label} in\n{plan}"));
    let rows = line.split("[rows=").nth(1).expect("[rows=");
    rows[..rows.find(|c: char| !c.is_ascii_digit()).unwrap()]
        .parse()
        .unwrap()
}

/// `query`'s EXPLAIN plan with `$id` = 7.
fn explain(conn: &mut plexus::Connection, query: &str) -> String {
    conn.execute(&format!("EXPLAIN {query}"), &id_param(CypherValue::Int(7)))
        .expect("explain")
        .plan
        .expect("an EXPLAIN plan")
}

/// The EXPLAIN line of the scan naming `label` (e.g. `:Account`) in `query`'s plan.
fn scan_line(conn: &mut plexus::Connection, query: &str, label: &str) -> String {
    let plan = explain(conn, query);
    let line = plan.lines().find(|l| l.contains(label));
    line.unwrap_or_else(|| panic!("no scan of {label} in\n{plan}"))
        .trim()
        .to_string()
}

const BY_ID: &str = "MATCH (a:Account {id: $id}) RETURN a.owner";

#[test]
fn an_equality_on_the_primary_key_reads_one_row() {
    let db = accounts();
    let mut conn = db.connect();
    let explain = conn
        .execute(&format!("EXPLAIN {BY_ID}"), &id_param(CypherValue::Int(1)))
        .unwrap();
    assert!(
        explain.plan.unwrap().contains("NodeByKeySeek"),
        "the plan names the seek"
    );
    assert_eq!(
        owners(&mut conn, BY_ID, CypherValue::Int(42)),
        ["'owner-42'"]
    );
    assert_eq!(
        scanned_rows(&mut conn, BY_ID, CypherValue::Int(42), ":Account"),
        1
    );
    assert!(owners(&mut conn, BY_ID, CypherValue::Int(ACCOUNTS)).is_empty());
    assert!(owners(&mut conn, BY_ID, CypherValue::Null).is_empty());
    // WHERE on a single-node pattern and a value from another variable seek too.
    let joined = "MATCH (b:Account {id: 7}) MATCH (a:Account {id: b.id + 0}) RETURN a.owner";
    assert_eq!(owners(&mut conn, joined, CypherValue::Null), ["'owner-7'"]);
    let chained = "MATCH (b:Account {id: 7}) MATCH (a:Account) WHERE a.id = b.id RETURN a.owner";
    assert_eq!(owners(&mut conn, chained, CypherValue::Null), ["'owner-7'"]);
}

#[test]
fn an_in_list_on_the_primary_key_seeks_each_value() {
    let db = accounts();
    let mut conn = db.connect();
    let list = |ids: &[i64]| CypherValue::list(ids.iter().map(|&i| CypherValue::Int(i)).collect());
    let query = "MATCH (a:Account) WHERE a.id IN $id RETURN a.owner";
    assert!(scan_line(&mut conn, query, ":Account").contains("NodeByKeySeek"));
    assert_eq!(
        owners(&mut conn, query, list(&[3, 5, 3, ACCOUNTS])),
        ["'owner-3'", "'owner-5'"]
    );
    assert_eq!(scanned_rows(&mut conn, query, list(&[3, 5]), ":Account"), 2);
    // A float element falls back to the scan for the whole list; the rows are the same.
    let mixed = CypherValue::list(vec![CypherValue::Int(3), CypherValue::Float(5.0)]);
    assert_eq!(owners(&mut conn, query, mixed), ["'owner-3'", "'owner-5'"]);
}

#[test]
fn values_of_another_type_fall_back_to_the_scan() {
    let db = accounts();
    let mut conn = db.connect();
    // 42.0 = 42 in Cypher, but the index holds integers: the scan answers.
    assert_eq!(
        owners(&mut conn, BY_ID, CypherValue::Float(42.0)),
        ["'owner-42'"]
    );
    assert_eq!(
        scanned_rows(&mut conn, BY_ID, CypherValue::Float(42.0), ":Account"),
        ACCOUNTS as u64
    );
    assert!(owners(&mut conn, BY_ID, CypherValue::string("42")).is_empty());
}

#[test]
fn the_label_on_vertices_of_other_tables_falls_back_to_the_scan() {
    let db = accounts();
    let mut conn = db.connect();
    let none = Params::new();
    conn.execute("CREATE (:Other {id: 42, owner: 'impostor'})", &none)
        .unwrap();
    conn.execute("BEGIN", &none).unwrap();
    conn.execute("MATCH (o:Other) SET o:Account", &none)
        .unwrap();
    assert_eq!(
        owners(&mut conn, BY_ID, CypherValue::Int(42)),
        ["'impostor'", "'owner-42'"],
        "the transaction's own label change"
    );
    conn.execute("COMMIT", &none).unwrap();
    assert_eq!(
        owners(&mut conn, BY_ID, CypherValue::Int(42)),
        ["'impostor'", "'owner-42'"],
        "a committed label change"
    );
}

#[test]
fn own_writes_and_removed_labels_are_seen() {
    let db = accounts();
    let mut conn = db.connect();
    let none = Params::new();
    conn.execute("BEGIN", &none).unwrap();
    conn.execute("CREATE (:Account {id: 1000, owner: 'new'})", &none)
        .unwrap();
    assert_eq!(owners(&mut conn, BY_ID, CypherValue::Int(1000)), ["'new'"]);
    conn.execute("MATCH (a:Account {id: 5}) DETACH DELETE a", &none)
        .unwrap();
    assert!(owners(&mut conn, BY_ID, CypherValue::Int(5)).is_empty());
    conn.execute("MATCH (a:Account {id: 6}) SET a.id = 6000", &none)
        .unwrap();
    assert!(owners(&mut conn, BY_ID, CypherValue::Int(6)).is_empty());
    assert_eq!(
        owners(&mut conn, BY_ID, CypherValue::Int(6000)),
        ["'owner-6'"]
    );
    conn.execute("MATCH (a:Account {id: 7}) REMOVE a:Account", &none)
        .unwrap();
    assert!(owners(&mut conn, BY_ID, CypherValue::Int(7)).is_empty());
    conn.execute("ROLLBACK", &none).unwrap();
    assert_eq!(owners(&mut conn, BY_ID, CypherValue::Int(7)), ["'owner-7'"]);
}

/// A label without a table of its own (`Message`), carried as an extra label by two keyed
/// tables, seeks both; once an unkeyed table carries it too, the scan answers.
#[test]
fn a_label_carried_by_several_keyed_tables_seeks_each() {
    let db = Database::open_in_memory(Config::default()).expect("open");
    for table in ["Post", "Comment"] {
        let spec = VertexTableSpec::new(table)
            .property("id", DataType::Int64)
            .primary_key("id")
            .extra_label("Message");
        db.create_vertex_table(&spec).expect("table");
    }
    let mut conn = db.connect();
    let none = Params::new();
    conn.execute(
        "UNWIND range(1, 50) AS i CREATE (:Post:Message {id: i, owner: 'post-' + toString(i)}), \
         (:Comment:Message {id: i, owner: 'comment-' + toString(i)})",
        &none,
    )
    .unwrap();
    let by_id = "MATCH (m:Message {id: $id}) RETURN m.owner";
    assert_eq!(
        owners(&mut conn, by_id, CypherValue::Int(7)),
        ["'comment-7'", "'post-7'"]
    );
    assert_eq!(
        scanned_rows(&mut conn, by_id, CypherValue::Int(7), ":Message"),
        2
    );
    // The planner's statistics see the same: one key shared by every carrier, then none.
    assert!(scan_line(&mut conn, by_id, ":Message").ends_with("est_rows=1"));
    conn.execute("CREATE (:Note:Message {id: 7, owner: 'note-7'})", &none)
        .unwrap();
    assert!(scan_line(&mut conn, by_id, ":Message").ends_with("est_rows=101"));
    assert_eq!(
        owners(&mut conn, by_id, CypherValue::Int(7)),
        ["'comment-7'", "'note-7'", "'post-7'"]
    );
    assert_eq!(
        scanned_rows(&mut conn, by_id, CypherValue::Int(7), ":Message"),
        101
    );
}

/// WHERE conjuncts move down to the operator that binds their variables, so a key equality in
/// WHERE seeks too, and a condition on the far end filters right after its expand.
#[test]
fn where_conjuncts_are_pushed_down_to_the_scan() {
    let db = accounts();
    let mut conn = db.connect();
    let none = Params::new();
    conn.execute(
        "MATCH (a:Account), (b:Account) WHERE b.id = a.id + 1 AND a.id < 10 CREATE (a)-[:NEXT]->(b)",
        &none,
    )
    .unwrap();
    let query = "MATCH (a:Account)-[:NEXT]->(b)-[:NEXT]->(c) \
                 WHERE a.id = $id AND b.owner STARTS WITH 'owner' AND c.id > 0 RETURN c.owner";
    let plan = conn
        .execute(&format!("EXPLAIN {query}"), &id_param(CypherValue::Int(3)))
        .unwrap()
        .plan
        .unwrap();
    let lines: Vec<&str> = plan.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no '{needle}' in\n{plan}"))
    };
    // The tree prints parents first: a filter above its binder has a smaller line number.
    assert!(
        at("NodeByKeySeek") > at("Expand"),
        "the seek is at the bottom:\n{plan}"
    );
    assert!(
        at("STARTS WITH") > at("Expand (s2)"),
        "b's filter sits below c's expand:\n{plan}"
    );
    assert!(
        at("Expand (s2)") > at("s4.id > 0"),
        "c's filter is above its expand:\n{plan}"
    );
    assert_eq!(owners(&mut conn, query, CypherValue::Int(3)), ["'owner-5'"]);
    assert_eq!(
        scanned_rows(&mut conn, query, CypherValue::Int(3), ":Account"),
        1
    );
}

/// With statistics the planner starts a pattern at the node a primary key finds, wherever it
/// stands in the pattern, and expands away from it — here incoming, against the arrow.
#[test]
fn a_key_seek_at_the_far_end_starts_the_pattern() {
    let db = accounts();
    let mut conn = db.connect();
    conn.execute(
        "MATCH (a:Account) UNWIND [1, 2] AS k CREATE (:Holder {n: a.id * 10 + k})-[:OWNS]->(a)",
        &Params::new(),
    )
    .unwrap();
    let query = "MATCH (h:Holder)-[:OWNS]->(a:Account {id: $id}) RETURN h.n";
    let plan = explain(&mut conn, query);
    let lines: Vec<&str> = plan.lines().map(str::trim).collect();
    assert!(
        lines.contains(&"└ Expand (s2)<-[s1:OWNS]-(s0) est_rows=2"),
        "expands incoming from the account, two holders each:\n{plan}"
    );
    assert!(
        lines.contains(
            &"└ NodeByKeySeek s2:Account(id = $id) [primary key, else label scan] est_rows=1"
        ),
        "starts at the seek, one row:\n{plan}"
    );
    let holders = conn.execute(query, &id_param(CypherValue::Int(7))).unwrap();
    let mut found: Vec<String> = holders.rows.iter().map(|r| holders.render(&r[0])).collect();
    found.sort();
    assert_eq!(found, ["71", "72"]);
    assert_eq!(
        scanned_rows(&mut conn, query, CypherValue::Int(7), ":Account"),
        1
    );
}
