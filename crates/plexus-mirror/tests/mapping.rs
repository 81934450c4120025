//! The mapping language: parsing (every clause, errors with positions, no panic on any
//! prefix or garbling), validation against throwaway PostgreSQL clusters (the fraud and SNB
//! fixtures, and one cluster of broken schemas), and decoding real server output.

use std::sync::Arc;

use plexus::{TemporalValue, Value};
use plexus_mirror::cluster::{ClusterOptions, ThrowawayCluster};
use plexus_mirror::mapping::{
    Conversion, Endpoint, MappingError, PgType, PropertyGraph, TableName, VertexTable, decode,
    parse, validate,
};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

const SNB_DATA_DIR: &str = "/work/shared/data/ldbc-snb-mini/postgres/test-data";

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn parse_err(text: &str) -> MappingError {
    match parse(text) {
        Ok(graph) => panic!("expected an error, parsed {graph:#?}"),
        Err(e) => e,
    }
}

fn table(name: &str) -> TableName {
    TableName {
        schema: "public".to_owned(),
        name: name.to_owned(),
    }
}

fn vertex<'g>(graph: &'g PropertyGraph, alias: &str) -> &'g VertexTable {
    graph
        .vertex_table(alias)
        .unwrap_or_else(|| panic!("no vertex table {alias}"))
}

/// The cases of a `.test` fixture: (mapping, expected error display). See
/// fixtures/parse-errors.test for the format.
fn cases(name: &str) -> Vec<(String, String)> {
    let text = fixture(name);
    let mut cases = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        assert_eq!(line, "mapping", "{name}: a case starts with `mapping`");
        let mut mapping = Vec::new();
        let expected = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("{name}: a case ends with `error ...`"));
            match line.strip_prefix("error ") {
                Some(expected) => break expected.to_owned(),
                None => mapping.push(line),
            }
        };
        cases.push((mapping.join("\n"), expected));
    }
    assert!(!cases.is_empty(), "{name} has no cases");
    cases
}

/// A cluster with `schema_sql` applied and a client connected with the mirror's session
/// settings (ISO dates, UTC).
async fn cluster_with(schema_sql: &str) -> (ThrowawayCluster, Client) {
    let cluster = ThrowawayCluster::start(ClusterOptions::default()).expect("start PostgreSQL");
    cluster.psql(schema_sql).expect("schema");
    let (client, connection) = tokio_postgres::connect(&cluster.conninfo(), NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
        .batch_execute("SET DateStyle = ISO; SET TimeZone = 'UTC'")
        .await
        .expect("session settings");
    (cluster, client)
}

/// Every row of `sql` as PostgreSQL's text output (`None` for NULL).
async fn text_rows(client: &Client, sql: &str) -> Vec<Vec<Option<String>>> {
    let messages = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    messages
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).map(str::to_owned))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// Decodes every mapped property of every row of every element table (what the initial copy
/// does) and every row's labels; returns the number of values decoded.
async fn decode_everything(client: &Client, graph: &PropertyGraph) -> usize {
    let mut decoded = 0;
    for v in &graph.vertex_tables {
        let label_column = v
            .label_from
            .as_ref()
            .map_or("NULL".to_owned(), |f| format!("\"{}\"", f.column));
        let columns: Vec<String> = v
            .properties
            .iter()
            .map(|p| format!("\"{}\"", p.column))
            .collect();
        let sql = format!(
            "SELECT {label_column}, \"{}\", {} FROM {}",
            v.key[0],
            columns.join(", "),
            v.table
        );
        for row in text_rows(client, &sql).await {
            let key = row[1].clone().unwrap_or_default();
            let labels = v
                .labels_for_row(row[0].as_deref(), &[&key])
                .expect("labels");
            assert!(!labels.is_empty());
            for (p, text) in v.properties.iter().zip(&row[2..]) {
                if let Some(text) = text {
                    decode(&p.pg_type, p.conversion, text)
                        .unwrap_or_else(|e| panic!("{} {}: {e}", v.table, p.column));
                    decoded += 1;
                }
            }
        }
        for list in &v.list_properties {
            let sql = format!("SELECT \"{}\" FROM {}", list.value_column, list.table);
            for row in text_rows(client, &sql).await {
                if let Some(text) = &row[0] {
                    decode(&list.pg_type, Conversion::None, text).expect("list element");
                    decoded += 1;
                }
            }
        }
    }
    for e in &graph.edge_tables {
        if e.properties.is_empty() {
            continue;
        }
        let columns: Vec<String> = e
            .properties
            .iter()
            .map(|p| format!("\"{}\"", p.column))
            .collect();
        for row in text_rows(
            client,
            &format!("SELECT {} FROM {}", columns.join(", "), e.table),
        )
        .await
        {
            for (p, text) in e.properties.iter().zip(&row) {
                if let Some(text) = text {
                    decode(&p.pg_type, p.conversion, text)
                        .unwrap_or_else(|err| panic!("{} {}: {err}", e.table, p.column));
                    decoded += 1;
                }
            }
        }
    }
    decoded
}

// ---------------------------------------------------------------------------------------
// parsing

#[test]
fn the_fraud_mapping_parses_into_the_model() {
    let graph = parse(&fixture("fraud-graph.sql")).expect("parse");
    assert_eq!(graph.name, "fraud");
    let person = vertex(&graph, "person");
    assert_eq!(person.table, table("person"));
    assert!(
        person.key.is_empty(),
        "the primary key, filled by validation"
    );
    assert_eq!(person.labels, ["Person"]);
    let names: Vec<&str> = person.properties.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "id",
            "name",
            "birthday",
            "email",
            "riskScore",
            "flagged",
            "tags"
        ]
    );
    assert_eq!(person.properties[4].column, "risk_score");
    assert!(
        person
            .properties
            .iter()
            .all(|p| p.pg_type == PgType::Unknown)
    );
    let account = vertex(&graph, "account");
    assert_eq!(account.key, ["id"]);
    assert_eq!(account.properties[1].name, "openedAt");
    assert_eq!(account.properties[1].conversion, Conversion::EpochMillis);
    assert_eq!(
        (
            account.properties[1].span.line,
            account.properties[1].span.column
        ),
        (9, 37)
    );

    let owns = &graph.edge_tables[0];
    assert_eq!(
        (
            owns.alias.as_str(),
            owns.table.name.as_str(),
            owns.label.as_str()
        ),
        ("owns", "account", "OWNS")
    );
    assert_eq!(owns.key, ["id"]);
    assert_eq!(owns.source.columns, ["owner_id"]);
    assert_eq!(owns.source.vertex_table, "person");
    assert_eq!(owns.destination.referenced_columns, ["id"]);
    assert!(owns.properties.is_empty() && owns.all_columns_except.is_none());
    let transfer = &graph.edge_tables[1];
    assert_eq!(transfer.alias, "transfer");
    assert!(transfer.key.is_empty());
    assert_eq!(transfer.properties.len(), 4);
    assert_eq!(
        graph.source_tables(),
        [table("account"), table("person"), table("transfer")]
    );
}

#[test]
fn the_snb_mapping_parses_into_the_model() {
    let graph = parse(&fixture("snb-graph.sql")).expect("parse");
    assert_eq!(graph.vertex_tables.len(), 8);
    assert_eq!(graph.edge_tables.len(), 23);
    assert_eq!(vertex(&graph, "post").labels, ["Post", "Message"]);
    let place = vertex(&graph, "place");
    assert_eq!(place.labels, ["Place"]);
    let from = place.label_from.as_ref().expect("LABEL FROM");
    assert_eq!(from.column, "type");
    assert_eq!(from.values.as_ref().map(Vec::len), Some(3));
    let person = vertex(&graph, "person");
    assert_eq!(person.list_properties.len(), 2);
    let email = &person.list_properties[0];
    assert_eq!(
        (email.name.as_str(), email.value_column.as_str()),
        ("email", "email")
    );
    assert_eq!(email.table, table("person_email_emailaddress"));
    assert_eq!(email.key, ["personid"]);
    assert_eq!(email.order_by.as_deref(), Some("email"));
    assert_eq!(person.list_properties[1].order_by, None);
    // aliases are SQL identifiers: folded to lower case
    let tagged = graph
        .edge_tables
        .iter()
        .find(|e| e.alias == "post_hastag")
        .expect("post_hasTag");
    assert_eq!(
        tagged.source,
        Endpoint {
            columns: vec![],
            vertex_table: "post".to_owned(),
            referenced_columns: vec![],
            span: tagged.source.span,
            column_spans: vec![],
            referenced_spans: vec![]
        }
    );
    let creators = graph
        .edge_tables
        .iter()
        .filter(|e| e.label == "HAS_CREATOR")
        .count();
    assert_eq!(creators, 2);
    let located = graph
        .edge_tables
        .iter()
        .filter(|e| e.label == "IS_LOCATED_IN")
        .count();
    assert_eq!(located, 4);
    // the comment table is a vertex table and four edge tables
    let comment_tables = graph
        .edge_tables
        .iter()
        .filter(|e| e.table.name == "comment")
        .count();
    assert_eq!(comment_tables, 4);
    let sources = graph.source_tables();
    assert_eq!(sources.len(), 20);
    assert!(sources.contains(&table("person_speaks_language")));
}

#[test]
fn label_and_property_clauses() {
    let graph = parse(
        r#"create property graph "G" vertex tables (
             -- no clause: DEFAULT LABEL PROPERTIES ARE ALL COLUMNS
             a,
             Sales.B AS bee KEY (X, "Y") DEFAULT LABEL NO PROPERTIES,
             c PROPERTIES (c1 AS One, c2 EPOCH_DAYS),
             d /* a comment */ LABEL D1 PROPERTIES (x) LABEL D2 PROPERTIES (x, y AS why)
               LABEL D3,
             e LABEL "Quoted Label" PROPERTIES ARE ALL COLUMNS EXCEPT (secret, "Other"),
             f PROPERTIES ALL COLUMNS,
             g LABEL FROM kind,
             h LABEL H NO PROPERTIES LABEL FROM kind (1 AS One, 'two' AS "Two")
           ) edge tables (
             l SOURCE KEY (a1, a2) REFERENCES a DESTINATION bee,
             m KEY (id) SOURCE KEY (x) REFERENCES c (id) DESTINATION KEY (y) REFERENCES c
               DEFAULT LABEL PROPERTIES (w AS weight)
           );"#,
    )
    .expect("parse");
    assert_eq!(graph.name, "G");
    let a = vertex(&graph, "a");
    assert_eq!(a.labels, ["a"]);
    assert_eq!(a.all_columns_except, Some(vec![]));
    let bee = vertex(&graph, "bee");
    assert_eq!(
        bee.table,
        TableName {
            schema: "sales".to_owned(),
            name: "b".to_owned()
        }
    );
    assert_eq!(bee.key, ["x", "Y"]);
    assert_eq!(bee.labels, ["bee"]);
    assert!(bee.properties.is_empty() && bee.all_columns_except.is_none());
    let c = vertex(&graph, "c");
    assert_eq!(c.labels, ["c"]);
    assert_eq!(
        (
            c.properties[0].column.as_str(),
            c.properties[0].name.as_str()
        ),
        ("c1", "One")
    );
    assert_eq!(c.properties[1].conversion, Conversion::EpochDays);
    let d = vertex(&graph, "d");
    assert_eq!(d.labels, ["D1", "D2", "D3"]);
    let names: Vec<&str> = d.properties.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["x", "why"], "the labels' properties united");
    assert_eq!(d.all_columns_except, Some(vec![]), "D3 has all columns");
    let e = vertex(&graph, "e");
    assert_eq!(e.labels, ["Quoted Label"]);
    assert_eq!(
        e.all_columns_except,
        Some(vec!["secret".to_owned(), "Other".to_owned()])
    );
    assert_eq!(vertex(&graph, "f").all_columns_except, Some(vec![]));
    let g = vertex(&graph, "g");
    assert!(g.labels.is_empty(), "LABEL FROM alone: no default label");
    assert_eq!(
        g.label_from.as_ref().map(|f| f.values.is_none()),
        Some(true)
    );
    let h = vertex(&graph, "h");
    assert_eq!(h.labels, ["H"]);
    let values = h
        .label_from
        .as_ref()
        .and_then(|f| f.values.clone())
        .expect("values");
    assert_eq!(
        values,
        [
            ("1".to_owned(), "One".to_owned()),
            ("two".to_owned(), "Two".to_owned())
        ]
    );
    assert!(h.properties.is_empty() && h.all_columns_except.is_none());

    let l = &graph.edge_tables[0];
    assert_eq!(l.label, "l");
    assert_eq!(l.source.columns, ["a1", "a2"]);
    assert!(l.destination.columns.is_empty() && l.destination.vertex_table == "bee");
    let m = &graph.edge_tables[1];
    assert_eq!(m.label, "m");
    assert!(
        m.destination.referenced_columns.is_empty(),
        "the vertex key, by validation"
    );
    assert_eq!(m.properties[0].name, "weight");
}

#[test]
fn labels_for_rows_come_from_the_label_column() {
    let graph = parse(
        "CREATE PROPERTY GRAPH g VERTEX TABLES (
           place KEY (id) LABEL Place LABEL FROM type ('city' AS City, 'country' AS Country),
           org KEY (id) LABEL FROM type)",
    )
    .expect("parse");
    let place = vertex(&graph, "place");
    assert_eq!(
        place.labels_for_row(Some("city"), &["7"]),
        Ok(vec!["Place".to_owned(), "City".to_owned()])
    );
    let error = place
        .labels_for_row(Some("village"), &["7"])
        .expect_err("unlisted");
    assert!(
        error.contains("public.place")
            && error.contains("(id)=(7)")
            && error.contains("\"village\""),
        "{error}"
    );
    assert!(
        place
            .labels_for_row(None, &["8"])
            .expect_err("NULL")
            .contains("NULL")
    );
    let org = vertex(&graph, "org");
    assert_eq!(
        org.labels_for_row(Some("university"), &["1"]),
        Ok(vec!["University".to_owned()])
    );
    assert_eq!(
        org.labels_for_row(Some("élan"), &["1"]),
        Ok(vec!["Élan".to_owned()])
    );
    assert!(org.labels_for_row(Some(""), &["1"]).is_err());
}

#[test]
fn malformed_mappings_are_errors_at_the_offending_token() {
    for (text, expected) in cases("parse-errors.test") {
        assert_eq!(parse_err(&text).to_string(), expected, "{text}");
    }
    let error =
        parse_err("CREATE PROPERTY GRAPH g\nVERTEX TABLES (person KEY id)").in_file("mapping.sql");
    assert_eq!(
        error.to_string(),
        "mapping.sql:2:27: VERTEX TABLE person: expected `(`, found `id`"
    );
}

#[test]
fn every_prefix_and_garbling_of_a_mapping_is_ok_or_an_error() {
    for name in ["fraud-graph.sql", "snb-graph.sql"] {
        let text = fixture(name);
        for (at, _) in text.char_indices() {
            let _ = parse(&text[..at]);
        }
        // deterministic garbling: delete, duplicate or replace one character at pseudo-random
        // places, and splice in tokens that are valid elsewhere
        let chars: Vec<char> = text.chars().collect();
        let inserts = [
            "(", ")", ",", "\"", "'", "/*", "--", "LABEL", "KEY", "FROM", ";", "é", "-1",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for round in 0..3000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let at = (state >> 33) as usize % chars.len();
            let mut garbled: Vec<char> = chars.clone();
            match round % 3 {
                0 => {
                    garbled.remove(at);
                }
                1 => garbled.insert(at, chars[at]),
                _ => {
                    let insert = inserts[(state >> 13) as usize % inserts.len()];
                    garbled.splice(at..at, insert.chars());
                }
            }
            let garbled: String = garbled.into_iter().collect();
            if let Err(error) = parse(&garbled) {
                assert!(error.line >= 1 && error.column >= 1, "{error}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// validation against PostgreSQL

#[tokio::test]
async fn the_fraud_mapping_validates_and_its_rows_decode() {
    let (_cluster, client) = cluster_with(&fixture("fraud-schema.sql")).await;
    let graph = validate(parse(&fixture("fraud-graph.sql")).expect("parse"), &client)
        .await
        .expect("validate");
    let person = vertex(&graph, "person");
    assert_eq!(person.key, ["id"]);
    let types: Vec<(&str, &PgType)> = person
        .properties
        .iter()
        .map(|p| (p.name.as_str(), &p.pg_type))
        .collect();
    assert_eq!(
        types,
        [
            ("id", &PgType::Int),
            ("name", &PgType::String),
            ("birthday", &PgType::Date),
            ("email", &PgType::String),
            ("riskScore", &PgType::Float),
            ("flagged", &PgType::Bool),
            ("tags", &PgType::Array(Box::new(PgType::String))),
        ]
    );
    let account = vertex(&graph, "account");
    let account_types: Vec<&PgType> = account.properties.iter().map(|p| &p.pg_type).collect();
    assert_eq!(
        account_types,
        [
            &PgType::Int,
            &PgType::TimestampTz,
            &PgType::String,
            &PgType::String,
            &PgType::String
        ]
    );
    let transfer = &graph.edge_tables[1];
    assert_eq!(transfer.key, ["id"]);
    assert_eq!(
        transfer.properties[0].pg_type,
        PgType::Float,
        "numeric(12,2)"
    );
    assert_eq!(transfer.source.referenced_columns, ["id"]);

    assert!(decode_everything(&client, &graph).await >= 30);
    // values as the server prints them
    let rows = text_rows(
        &client,
        "SELECT tags, at FROM person, transfer WHERE person.id = 1 AND transfer.id = 101",
    )
    .await;
    let (tags, at) = (
        rows[0][0].as_deref().expect("tags"),
        rows[0][1].as_deref().expect("at"),
    );
    assert_eq!(tags, r#"{math,"first programmer"}"#);
    assert_eq!(
        decode(
            &PgType::Array(Box::new(PgType::String)),
            Conversion::None,
            tags
        ),
        Ok(Value::List(Arc::from(vec![
            Value::string("math"),
            Value::string("first programmer")
        ])))
    );
    assert_eq!(at, "2023-03-02 10:30:00.5+00");
    assert_eq!(
        decode(&PgType::TimestampTz, Conversion::EpochMillis, at),
        Ok(Value::Int(1_677_753_000_500))
    );
    let rows = text_rows(
        &client,
        "SELECT '-infinity'::date, 'NaN'::numeric, '{{1,2},{3,NULL}}'::int[], '1815-12-10'::date",
    )
    .await;
    assert!(
        decode(
            &PgType::Date,
            Conversion::None,
            rows[0][0].as_deref().unwrap_or("")
        )
        .is_err()
    );
    assert!(
        matches!(decode(&PgType::Float, Conversion::None, rows[0][1].as_deref().unwrap_or("")), Ok(Value::Float(f)) if f.is_nan())
    );
    let nested = decode(
        &PgType::Array(Box::new(PgType::Int)),
        Conversion::None,
        rows[0][2].as_deref().unwrap_or(""),
    );
    assert_eq!(
        nested,
        Ok(Value::List(Arc::from(vec![
            Value::List(Arc::from(vec![Value::Int(1), Value::Int(2)])),
            Value::List(Arc::from(vec![Value::Int(3), Value::Null])),
        ])))
    );
    assert_eq!(
        decode(
            &PgType::Date,
            Conversion::None,
            rows[0][3].as_deref().unwrap_or("")
        ),
        Ok(Value::Temporal(TemporalValue::Date { days: -56_270 }))
    );
}

#[tokio::test]
async fn the_snb_mapping_validates_over_the_loaded_mini_dataset() {
    let load = fixture("snb-load.sql").replace("@DATA@", SNB_DATA_DIR);
    let (_cluster, client) = cluster_with(&format!("{}\n{load}", fixture("snb-schema.sql"))).await;
    let graph = validate(parse(&fixture("snb-graph.sql")).expect("parse"), &client)
        .await
        .expect("validate");
    assert!(graph.vertex_tables.iter().all(|v| v.key == ["id"]));
    let has_tag = graph
        .edge_tables
        .iter()
        .find(|e| e.alias == "forum_hastag")
        .expect("forum_hasTag");
    assert_eq!(
        (
            has_tag.source.columns.as_slice(),
            has_tag.source.referenced_columns.as_slice()
        ),
        (&["forumid".to_owned()][..], &["id".to_owned()][..])
    );
    assert_eq!(has_tag.destination.columns, ["tagid"]);
    assert_eq!(has_tag.key, ["forumid", "tagid"]);
    let person = vertex(&graph, "person");
    assert_eq!(person.list_properties[0].pg_type, PgType::String);
    assert!(
        person
            .properties
            .iter()
            .all(|p| p.pg_type != PgType::Unknown)
    );
    let decoded = decode_everything(&client, &graph).await;
    assert!(decoded > 50_000, "{decoded}");
    // one known row, as the mirror will see it
    let rows = text_rows(
        &client,
        "SELECT birthday, creationdate FROM person WHERE id = 8796093022220",
    )
    .await;
    let birthday = rows[0][0].as_deref().expect("birthday");
    let created = rows[0][1].as_deref().expect("creationdate");
    assert_eq!(
        (birthday, created),
        ("1987-09-18", "2010-09-16 06:54:00.602+00")
    );
    assert_eq!(
        decode(&PgType::Date, Conversion::EpochMillis, birthday),
        Ok(Value::Int(558_921_600_000))
    );
    assert_eq!(
        decode(&PgType::TimestampTz, Conversion::EpochMillis, created),
        Ok(Value::Int(1_284_620_040_602))
    );
}

/// One cluster of deliberately unmappable tables; each case is a mapping and the error it
/// must produce.
#[tokio::test]
async fn validation_reports_what_the_catalog_refuses() {
    let (_cluster, client) = cluster_with(&fixture("validation-errors-schema.sql")).await;
    let check = |text: &str| {
        let text = text.to_owned();
        let client = &client;
        async move {
            validate(
                parse(&text).unwrap_or_else(|e| panic!("{text}: {e}")),
                client,
            )
            .await
        }
    };
    for (text, expected) in cases("validation-errors.test") {
        let error = check(&text).await.expect_err(&text);
        assert_eq!(error.to_string(), expected, "{text}");
    }
    // and what does validate
    let ok = "CREATE PROPERTY GRAPH g VERTEX TABLES (
          p PROPERTIES (id, born AS bornDays EPOCH_DAYS, born AS bornMillis EPOCH_MILLIS,
                        at EPOCH_MILLIS)
            PROPERTY phones LIST FROM phones (phone) KEY (pid) ORDER BY id,
          dup KEY (a),
          ident KEY (id))
        EDGE TABLES (
          member SOURCE p DESTINATION dup NO PROPERTIES,
          link SOURCE KEY (src) REFERENCES p DESTINATION KEY (dst) REFERENCES p
            PROPERTIES ALL COLUMNS EXCEPT (id))";
    let graph = check(ok).await.unwrap_or_else(|e| panic!("{e}"));
    let member = &graph.edge_tables[0];
    assert_eq!(
        (
            member.source.columns.as_slice(),
            member.destination.columns.as_slice()
        ),
        (&["pid".to_owned()][..], &["did".to_owned()][..])
    );
    assert_eq!(member.destination.referenced_columns, ["a"]);
    let link = &graph.edge_tables[1];
    let names: Vec<&str> = link.properties.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["src", "dst", "label"]);
    assert_eq!(link.source.referenced_columns, ["id"]);
    assert_eq!(
        vertex(&graph, "p").list_properties[0].pg_type,
        PgType::String
    );
}
