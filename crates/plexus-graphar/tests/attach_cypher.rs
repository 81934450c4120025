//! `ATTACH GRAPHAR … AS name` and `USE name …`: Cypher on a GraphAr graph read in place
//! answers as the database it was exported from (both payload formats, small chunks so that
//! every read crosses chunk and part boundaries), and as the imported copy of a fixture
//! written with one adjacency list only; analytics run on it; everything that cannot work
//! on a read-only attached graph is a clear error.

use std::path::{Path, PathBuf};

use plexus::{Config, Connection, CypherValue, Database, Params};
use plexus_graphar::meta::FileType;
use plexus_graphar::{ExportOptions, GraphInfo, export, import, register_procedures};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "plexus-attach-cypher-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The rows of `query`, each value as its debug text (values have no `PartialEq`).
fn run(conn: &mut Connection, query: &str) -> Vec<Vec<String>> {
    let text = |row: Vec<CypherValue>| row.iter().map(|v| format!("{v:?}")).collect();
    values(conn, query).into_iter().map(text).collect()
}

fn values(conn: &mut Connection, query: &str) -> Vec<Vec<CypherValue>> {
    match conn.execute(query, &Params::new()) {
        Ok(result) => result.rows,
        Err(e) => panic!("{query}: {e}"),
    }
}

/// The debug text of `value`, as `run` shows it.
fn text(value: CypherValue) -> String {
    format!("{value:?}")
}

fn error(conn: &mut Connection, query: &str) -> String {
    match conn.execute(query, &Params::new()) {
        Ok(result) => panic!("{query} succeeded: {:?}", result.rows),
        Err(e) => format!("{}: {}", e.code, e.message),
    }
}

/// People (two with the extra label Admin, one deleted: an id hole), cities, KNOWS with
/// parallel edges and a self-loop, LIVES_IN.
fn source() -> Database {
    let db = Database::open_in_memory(Config::default()).unwrap();
    let mut conn = db.connect();
    for query in [
        "UNWIND range(0, 39) AS i CREATE (:Person {name: 'p' + i, age: 20 + i % 17, \
         score: i / 4.0})",
        "UNWIND ['Oslo', 'Lima', 'Pune'] AS c CREATE (:City {name: c})",
        "MATCH (p:Person) WHERE p.age % 5 = 0 SET p:Admin",
        "MATCH (a:Person), (b:Person) WHERE (a.age * 7 + b.age) % 11 = 0 AND a <> b \
         CREATE (a)-[:KNOWS {since: 2000 + a.age}]->(b)",
        "MATCH (a:Person {name: 'p3'}), (b:Person {name: 'p4'}) \
         CREATE (a)-[:KNOWS {since: 1}]->(b), (a)-[:KNOWS {since: 2}]->(b)",
        "MATCH (a:Person {name: 'p9'}) CREATE (a)-[:KNOWS {since: 9}]->(a)",
        "MATCH (p:Person), (c:City) WHERE p.age % 3 = size(c.name) % 3 CREATE (p)-[:LIVES_IN]->(c)",
        "MATCH (p:Person {name: 'p5'}) DETACH DELETE p",
    ] {
        run(&mut conn, query);
    }
    db
}

fn exported(db: &Database, name: &str, file_type: FileType) -> (Scratch, PathBuf) {
    let out = Scratch::new(name);
    let options = ExportOptions {
        name: "lake".into(),
        vertex_chunk_size: 8,
        edge_chunk_size: 5,
        file_type,
        ..ExportOptions::default()
    };
    let summary = export(db, &out.0, &options).unwrap();
    (out, summary.graph_file)
}

/// Queries whose answers name no ids: the same on the database and on the attached graph.
const QUERIES: &[&str] = &[
    "MATCH (p:Person) RETURN p.name AS name, p.age AS age, p.score AS score ORDER BY name",
    "MATCH (p:Admin) RETURN p.name AS name ORDER BY name",
    "MATCH (p:Person:Admin) RETURN count(*) AS c",
    "MATCH (p:Person) WHERE p.age > 30 RETURN labels(p) AS l, p.name AS n ORDER BY n",
    "MATCH (a:Person)-[k:KNOWS]->(b:Person) RETURN a.name AS a, b.name AS b, k.since AS s \
     ORDER BY a, b, s",
    "MATCH (a:Person)<-[k:KNOWS]-(b) RETURN a.name AS a, b.name AS b, k.since AS s \
     ORDER BY a, b, s",
    "MATCH (a:Person)-[k:KNOWS]-(b) RETURN a.name AS a, b.name AS b, k.since AS s \
     ORDER BY a, b, s",
    "MATCH (a)-[r1:KNOWS]->(b)<-[r2:KNOWS]-(c) RETURN count(*) AS c",
    "MATCH (a)-[r1:KNOWS]->(b)-[r2:KNOWS]-(c) RETURN count(*) AS c",
    "MATCH (a)-[k:KNOWS]->(a) RETURN a.name AS self, k.since AS s ORDER BY self",
    "MATCH (a:Person)-[k:KNOWS]->(b) RETURN startNode(k).name AS s, endNode(k).name AS e, \
     type(k) AS t ORDER BY s, e",
    "MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN c.name AS city, count(*) AS n ORDER BY city",
    "MATCH (c:City)<-[:LIVES_IN]-(p) RETURN c.name AS city, count(p) AS n, min(p.name) AS first \
     ORDER BY city",
    "MATCH (n) RETURN count(n) AS n",
    "MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n ORDER BY t",
    "MATCH (p:Person {name: 'p3'})-[:KNOWS*1..3]->(q) RETURN count(*) AS paths, \
     count(DISTINCT q) AS reached",
    "MATCH (p:Person {name: 'p7'}) RETURN properties(p) AS props, keys(p) AS k",
    "MATCH (a:Person)-[k:KNOWS]->(b {name: 'p4'}) RETURN properties(k) AS props ORDER BY props.since",
    "MATCH (a:Person {name: 'p3'}), (b:Person) WHERE b <> a \
     MATCH p = shortestPath((a)-[:KNOWS*]-(b)) RETURN b.name AS b, length(p) AS len ORDER BY b",
    "MATCH (p:Person) OPTIONAL MATCH (p)-[:LIVES_IN]->(c) RETURN p.name AS p, c.name AS c \
     ORDER BY p, c",
    "MATCH (p:Person) WHERE EXISTS { (p)-[:KNOWS]->(:Admin) } RETURN count(p) AS c",
    "MATCH (p:Person) RETURN p.age % 4 AS g, count(*) AS n, avg(p.score) AS s ORDER BY g",
    "CALL algo.wcc({vertexLabels: ['Person']}) YIELD node, component \
     RETURN node.name AS n, component.name AS c ORDER BY n",
    "CALL algo.degree({edgeTypes: ['KNOWS']}) YIELD node, degree \
     RETURN node.name AS n, degree ORDER BY n",
    "MATCH (a:Person {name: 'p3'}), (b:Person) WHERE b.name IN ['p4', 'p10', 'p20', 'p33'] \
     CALL algo.shortestPath({source: a, target: b, weightProperty: 'since', \
     edgeTypes: ['KNOWS'], direction: 'both'}) YIELD cost RETURN b.name AS b, cost ORDER BY b",
    "MATCH (s:Person {name: 'p3'}) CALL algo.sssp({source: s, weightProperty: 'since', \
     edgeTypes: ['KNOWS'], direction: 'both'}) YIELD node, distance \
     RETURN node.name AS n, distance ORDER BY n",
    "MATCH (s:Person {name: 'p3'}) CALL algo.bfs({source: s, vertexLabels: ['Person']}) \
     YIELD node, depth RETURN node.name AS n, depth ORDER BY n",
];

fn attach(conn: &mut Connection, file: &Path, name: &str) -> Vec<Vec<String>> {
    run(
        conn,
        &format!("ATTACH GRAPHAR '{}' AS {name}", file.display()),
    )
}

#[test]
fn cypher_on_an_attached_graph_answers_as_the_database() {
    let db = source();
    for (format, file_type) in [("parquet", FileType::Parquet), ("csv", FileType::Csv)] {
        let (_dir, file) = exported(&db, format, file_type);
        let lake = Database::open_in_memory(Config::default()).unwrap();
        register_procedures(&lake);
        let mut conn = lake.connect();
        let attached = attach(&mut conn, &file, "lake");
        assert_eq!(
            attached,
            vec![vec![
                text(CypherValue::string("lake")),
                text(CypherValue::string("GRAPHAR")),
                text(CypherValue::string(file.to_str().unwrap())),
                text(CypherValue::Int(42)),
                run(&mut db.connect(), "MATCH ()-[r]->() RETURN count(r)")[0][0].clone(),
            ]]
        );
        let mut want = db.connect();
        for query in QUERIES {
            let expected = run(&mut want, query);
            assert!(!expected.is_empty(), "{query} finds something");
            let got = run(&mut conn, &format!("USE lake {query}"));
            assert_eq!(got, expected, "{format}: {query}");
        }
        // PageRank: the same definition on a CSR of the attached graph.
        let ranks = |conn: &mut Connection, prefix: &str| {
            let rows = values(
                conn,
                &format!(
                    "{prefix} CALL algo.pagerank() YIELD node, score \
                     RETURN node.name AS n, score ORDER BY n"
                ),
            );
            rows.into_iter()
                .map(|row| match row[1] {
                    CypherValue::Float(score) => (text(row[0].clone()), score),
                    ref other => panic!("score {other:?}"),
                })
                .collect::<Vec<_>>()
        };
        let (expected, got) = (ranks(&mut want, ""), ranks(&mut conn, "USE lake"));
        assert_eq!(expected.len(), got.len());
        for ((n, a), (m, b)) in expected.iter().zip(&got) {
            assert_eq!(n, m);
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                "{n:?}: {a} vs {b}"
            );
        }
        // The database's own graph is untouched and still what plain statements read.
        assert_eq!(
            run(&mut conn, "MATCH (n) RETURN count(n)")[0][0],
            text(CypherValue::Int(0))
        );
    }
}

#[test]
fn a_fixture_with_one_adjacency_list_answers_as_its_import() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/graphar-testing/modern_graph/modern_graph.graph.yml");
    let imported = Database::open_in_memory(Config::default()).unwrap();
    let info = GraphInfo::load(&file).unwrap();
    import(&imported, &info, &mut |_| {}).unwrap();
    let lake = Database::open_in_memory(Config::default()).unwrap();
    register_procedures(&lake);
    let mut conn = lake.connect();
    attach(&mut conn, &file, "modern");
    let mut want = imported.connect();
    for query in [
        "MATCH (p:person) RETURN p.id AS id, p.name AS name, p.age AS age ORDER BY id",
        "MATCH (a:person)-[k:knows]->(b) RETURN a.name AS a, b.name AS b, k.weight AS w \
         ORDER BY a, b",
        // Against the only list: through the reverse index.
        "MATCH (s:software)<-[c:created]-(p) RETURN s.name AS s, p.name AS p, c.weight AS w \
         ORDER BY s, p",
        "MATCH (a)-[k]-(b) RETURN a.name AS a, b.name AS b, type(k) AS t ORDER BY a, b, t",
        "MATCH (a)-[r1]->(b)<-[r2]-(c) RETURN a.name AS a, b.name AS b, c.name AS c \
         ORDER BY a, b, c",
        "MATCH (n) RETURN labels(n) AS l, count(*) AS c ORDER BY c",
        "CALL db.labels() YIELD label RETURN label ORDER BY label",
        "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t ORDER BY t",
        "CALL db.propertyKeys() YIELD propertyKey AS k RETURN k ORDER BY k",
    ] {
        let expected = run(&mut want, query);
        assert!(!expected.is_empty(), "{query} finds something");
        assert_eq!(
            run(&mut conn, &format!("USE modern {query}")),
            expected,
            "{query}"
        );
    }
}

#[test]
fn attached_graphs_are_read_only_and_named_clearly() {
    let db = source();
    let (_dir, file) = exported(&db, "errors", FileType::Parquet);
    let lake = Database::open_in_memory(Config::default()).unwrap();
    let mut conn = lake.connect();
    // No format registered yet.
    let e = error(
        &mut conn,
        &format!("ATTACH GRAPHAR '{}' AS lake", file.display()),
    );
    assert!(
        e.contains("UnknownGraphFormat") && e.contains("none registered"),
        "{e}"
    );
    register_procedures(&lake);
    let mut conn = lake.connect();
    let e = error(
        &mut conn,
        &format!("ATTACH ORC '{}' AS lake", file.display()),
    );
    assert!(e.contains("no graph format 'ORC' (known: GRAPHAR)"), "{e}");
    let e = error(&mut conn, "ATTACH GRAPHAR '/nowhere/g.graph.yml' AS lake");
    assert!(
        e.contains("GraphUnreadable") && e.contains("/nowhere/g.graph.yml"),
        "{e}"
    );
    attach(&mut conn, &file, "lake");
    let e = error(
        &mut conn,
        &format!("ATTACH GRAPHAR '{}' AS LAKE", file.display()),
    );
    assert!(e.contains("GraphAlreadyAttached"), "{e}");
    // Every connection of the database sees it; names ignore case.
    let mut other = lake.connect();
    assert_eq!(
        run(&mut other, "USE Lake MATCH (c:City) RETURN count(c)"),
        vec![vec![text(CypherValue::Int(3))]]
    );
    for write in [
        "USE lake CREATE (:City {name: 'Rome'})",
        "USE lake MATCH (c:City) SET c.name = 'x'",
        "USE lake MATCH (c:City) DETACH DELETE c",
        "USE lake MERGE (c:City {name: 'Oslo'})",
    ] {
        let e = error(&mut conn, write);
        assert!(
            e.contains("GraphIsReadOnly") && e.contains("'lake'"),
            "{write}: {e}"
        );
    }
    let e = error(
        &mut conn,
        "USE lake CALL algo.pagerank({writeProperty: 'r'})",
    );
    assert!(e.contains("read-only"), "{e}");
    // LIVES_IN has no `since`: a weight missing on the attached graph is named as on a
    // snapshot.
    let e = error(
        &mut conn,
        "USE lake MATCH (s:Person) WITH s LIMIT 1 \
         CALL algo.sssp({source: s, weightProperty: 'since'}) YIELD node RETURN count(*)",
    );
    assert!(e.contains("has no weight property \"since\""), "{e}");
    let e = error(&mut conn, "USE nowhere MATCH (n) RETURN n");
    assert!(
        e.contains("GraphNotFound") && e.contains("SHOW GRAPHS"),
        "{e}"
    );
    // Inside an explicit transaction (what drivers send) a USE statement reads the graph
    // in a transaction of its own; the explicit one goes on and commits its writes.
    run(&mut conn, "BEGIN");
    run(&mut conn, "CREATE (:Local)");
    assert_eq!(
        run(&mut conn, "USE lake MATCH (c:City) RETURN count(c)"),
        vec![vec![text(CypherValue::Int(3))]]
    );
    assert_eq!(
        run(&mut conn, "MATCH (l:Local) RETURN count(l)"),
        vec![vec![text(CypherValue::Int(1))]]
    );
    let e = error(&mut conn, "USE lake CREATE (:City)");
    assert!(
        e.contains("GraphIsReadOnly") && e.contains("rolled back"),
        "{e}"
    );
    assert_eq!(
        run(&mut other, "MATCH (l:Local) RETURN count(l)"),
        vec![vec![text(CypherValue::Int(0))]],
        "the refused statement rolled the explicit transaction back"
    );
    let shown = run(&mut conn, "SHOW GRAPHS");
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0][0], text(CypherValue::string("lake")));
    assert_eq!(run(&mut conn, "DETACH GRAPH lake").len(), 1);
    assert!(run(&mut conn, "SHOW GRAPHS").is_empty());
    let e = error(&mut conn, "USE lake MATCH (n) RETURN count(n)");
    assert!(e.contains("GraphNotFound"), "{e}");
    let e = error(&mut conn, "DETACH GRAPH lake");
    assert!(e.contains("GraphNotFound"), "{e}");
}

#[test]
fn a_server_connection_attaches_only_under_the_import_directory_with_its_cache_budget() {
    let db = source();
    let import = Scratch::new("import");
    let graphs = import.0.join("graphs");
    std::fs::create_dir_all(&graphs).unwrap();
    let options = ExportOptions {
        name: "lake".into(),
        ..ExportOptions::default()
    };
    export(&db, &graphs, &options).unwrap();
    let outside = Scratch::new("outside");
    export(&db, &outside.0, &options).unwrap();
    std::os::unix::fs::symlink(&outside.0, import.0.join("escape")).unwrap();
    let mut settings = plexus::Settings::new();
    let root = import.0.display().to_string();
    (settings.set("import_directory", &root, plexus::SettingSource::Argument)).unwrap();
    // A cache far smaller than one chunk: every read decodes again, answers stay the same.
    let tiny = plexus::SettingSource::Argument;
    (settings.set("attached_graph_cache_bytes", "1KiB", tiny)).unwrap();
    let lake = Database::open_in_memory_settings(settings).unwrap();
    register_procedures(&lake);
    let mut conn = lake.connect();
    conn.confine_files();
    for refused in [
        "../outside/lake.graph.yml".to_string(),
        "escape/lake.graph.yml".to_string(),
    ] {
        let e = error(&mut conn, &format!("ATTACH GRAPHAR '{refused}' AS lake"));
        assert!(e.contains("FileLocationRefused"), "{refused}: {e}");
    }
    let attached = run(&mut conn, "ATTACH GRAPHAR 'graphs/lake.graph.yml' AS lake");
    assert_eq!(
        attached[0][2],
        text(CypherValue::string("graphs/lake.graph.yml"))
    );
    assert_eq!(
        run(&mut conn, "USE lake MATCH (p:Person) RETURN count(p)"),
        vec![vec![text(CypherValue::Int(39))]]
    );
    let mut want = db.connect();
    for query in &QUERIES[..8] {
        let got = run(&mut conn, &format!("USE lake {query}"));
        assert_eq!(got, run(&mut want, query), "1 KiB cache: {query}");
    }
}
