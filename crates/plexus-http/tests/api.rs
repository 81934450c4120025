//! The HTTP API end to end: a server in-process on port 0, a real HTTP client.
//!
//! Covers queries and parameters in plain and typed JSON (big integers, NaN, temporals),
//! explicit transactions, schema, metrics, health, and each refusal (credentials, bad JSON,
//! content type, body size, unknown route, Host / Origin) with its 4xx JSON error — while a
//! second client keeps being served.

mod client;

use client::StatusCode;
use plexus::{Config, Database};
use plexus_bolt::{Auth, User};
use plexus_http::{HttpConfig, HttpServer};
use serde_json::{Value as Json, json};
use std::sync::Arc;
use std::time::Duration;

const USER: &str = "ada";
const PASSWORD: &str = "s3cret";

struct Server {
    server: HttpServer,
    client: client::Client,
}

impl Server {
    fn start() -> Server {
        Server::start_with(|_| {})
    }

    fn start_with(configure: impl FnOnce(&mut HttpConfig)) -> Server {
        let db = Arc::new(Database::open_in_memory(Config::default()).expect("open"));
        let users = vec![User::parse(&format!("{USER}:{PASSWORD}")).expect("user")];
        let mut config = HttpConfig::new("127.0.0.1:0".parse().expect("addr"), Auth::Basic(users));
        config.database_name = Some("movies".into());
        configure(&mut config);
        let server = HttpServer::start(db, config).expect("bind");
        Server {
            server,
            client: client::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.server.local_addr())
    }

    fn post(&self, path: &str) -> client::RequestBuilder {
        self.post_as(path, "application/json")
    }

    fn post_as(&self, path: &str, content_type: &str) -> client::RequestBuilder {
        self.client
            .post(self.url(path))
            .basic_auth(USER, Some(PASSWORD))
            .header("content-type", content_type)
    }

    /// `POST …/tx` (with a first statement or none): the transaction's id and the answer.
    async fn begin(&self, statement: Option<&str>) -> (String, Json) {
        let request = self.post("/db/neo4j/query/v2/tx");
        let request = match statement {
            Some(statement) => request.json(&json!({ "statement": statement })),
            None => request.body(""),
        };
        let begun: Json = request.json_answer().await;
        let id = begun["transaction"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        (id, begun)
    }

    async fn query(&self, statement: &str, parameters: Json) -> (StatusCode, Json) {
        let response = self
            .post("/db/neo4j/query/v2")
            .json(&json!({ "statement": statement, "parameters": parameters, "includeCounters": true }))
            .send()
            .await
            .expect("send");
        let status = response.status();
        (status, response.json().await.expect("JSON body"))
    }
}

fn code(body: &Json) -> &str {
    body["errors"][0]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_return_neo4j_shapes_with_counters() {
    let s = Server::start();
    let (status, body) = s
        .query(
            "CREATE (a:Person {name: $name})-[r:KNOWS {since: 2020}]->(b:Person {name: 'Bob'}) \
             RETURN a, r, b.name AS name",
            json!({ "name": "Ada" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["data"]["fields"], json!(["a", "r", "name"]));
    let row = &body["data"]["values"][0];
    assert_eq!(row[0]["labels"], json!(["Person"]));
    assert_eq!(row[0]["properties"]["name"], "Ada");
    assert_eq!(row[1]["type"], "KNOWS");
    assert_eq!(row[1]["startNodeElementId"], row[0]["elementId"]);
    assert_eq!(row[2], "Bob");
    assert_eq!(body["counters"]["nodesCreated"], 2);
    assert_eq!(body["counters"]["containsUpdates"], true);
    // Schema commands count what they changed (and an IF NOT EXISTS that found it: nothing).
    let (_, body) = s
        .query("CREATE INDEX age FOR (p:Person) ON (p.age)", json!({}))
        .await;
    assert_eq!(body["counters"]["indexesAdded"], 1, "{body}");
    assert_eq!(body["counters"]["containsUpdates"], true);
    let (_, body) = s
        .query(
            "CREATE INDEX age IF NOT EXISTS FOR (p:Person) ON (p.age)",
            json!({}),
        )
        .await;
    assert_eq!(body["counters"]["indexesAdded"], 0, "{body}");
    assert_eq!(body["counters"]["containsUpdates"], false);
    let (_, body) = s.query("DROP INDEX age", json!({})).await;
    assert_eq!(body["counters"]["indexesRemoved"], 1, "{body}");
    assert_eq!(body["bookmarks"], json!([]));
    // The database also answers to its own name; a path comes back as node, rel, node.
    let response = s
        .post("/db/movies/query/v2")
        .json(&json!({ "statement": "MATCH p = (:Person)-[:KNOWS]->() RETURN p" }))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let body: Json = response.json().await.expect("JSON");
    let path = body["data"]["values"][0][0].as_array().expect("path array");
    assert_eq!(path.len(), 3);
    assert_eq!(path[1]["type"], "KNOWS");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_json_round_trips_big_integers_nan_and_temporals() {
    let s = Server::start();
    let parameters = json!({
        "big": {"$type": "Integer", "_value": "9007199254740993"},
        "nan": {"$type": "Float", "_value": "NaN"},
        "day": {"$type": "Date", "_value": "2024-02-29"},
        "at": {"$type": "ZonedDateTime", "_value": "2015-11-21T21:40:32.142+01:00[Europe/Berlin]"},
        "span": {"$type": "Duration", "_value": "P14DT16H12M"},
    });
    let response = s
        .post_as("/db/neo4j/query/v2", "application/vnd.neo4j.query")
        .header("accept", "application/vnd.neo4j.query")
        .body(
            json!({
                "statement": "RETURN $big AS big, $big + 1 AS next, $nan AS nan, $day AS day, \
                              $at AS at, $span AS span",
                "parameters": parameters,
            })
            .to_string(),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(
        response.status(),
        StatusCode::ACCEPTED,
        "{:?}",
        response.text().await
    );
    assert!(
        response.headers()["content-type"]
            .to_str()
            .is_ok_and(|t| t.starts_with("application/vnd.neo4j.query"))
    );
    let body: Json = response.json().await.expect("JSON");
    let row = &body["data"]["values"][0];
    assert_eq!(row[0], parameters["big"]);
    assert_eq!(
        row[1],
        json!({"$type": "Integer", "_value": "9007199254740994"})
    );
    assert_eq!(row[2], parameters["nan"]);
    assert_eq!(row[3], parameters["day"]);
    assert_eq!(row[4], parameters["at"]);
    assert_eq!(row[5], parameters["span"]);
    // A malformed typed value is a 400 naming the parameter.
    let response = s
        .post_as("/db/neo4j/query/v2", "application/vnd.neo4j.query")
        .body(json!({"statement": "RETURN $x", "parameters": {"x": {"$type": "Date", "_value": "no"}}}).to_string())
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Json = response.json().await.expect("JSON");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("$x"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_codes_and_positions() {
    let s = Server::start();
    let (status, body) = s.query("MATCH (n)\nRETURN n +", json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(code(&body), "Neo.ClientError.Statement.SyntaxError");
    assert_eq!(body["errors"][0]["position"]["line"], 2, "{body}");
    let (status, body) = s.query("RETURN $missing", json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(code(&body), "Neo.ClientError.Statement.ParameterMissing");
    let (status, body) = s.query("BEGIN", json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

async fn count(s: &Server) -> Json {
    let (_, body) = s.query("MATCH (n:T) RETURN count(n) AS c", json!({})).await;
    body["data"]["values"][0][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_transactions_commit_and_roll_back() {
    let s = Server::start();
    let (id, begun) = s.begin(Some("CREATE (:T {v: 1})")).await;
    assert!(
        begun["transaction"]["expires"]
            .as_str()
            .is_some_and(|e| e.ends_with('Z'))
    );
    // Not visible outside before COMMIT; visible inside.
    assert_eq!(count(&s).await, 0);
    let inside: Json = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}"))
        .json(&json!({ "statement": "CREATE (:T {v: 2}) WITH 1 AS x MATCH (n:T) RETURN count(n)" }))
        .json_answer()
        .await;
    assert_eq!(inside["data"]["values"][0][0], 2, "{inside}");
    // Another user's id guess, or a wrong id, is not found.
    let other = s
        .client
        .post(s.url(&format!("/db/neo4j/query/v2/tx/{id}x")))
        .basic_auth(USER, Some(PASSWORD))
        .header("content-type", "application/json")
        .body(r#"{"statement": "RETURN 1"}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
    let committed = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}/commit"))
        .body("{}")
        .send()
        .await
        .expect("send");
    assert_eq!(committed.status(), StatusCode::ACCEPTED);
    assert_eq!(count(&s).await, 2);
    // The id is gone after COMMIT.
    let again = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}/commit"))
        .body("{}")
        .send()
        .await
        .expect("send");
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    // ROLLBACK undoes.
    let (id, _) = s.begin(None).await;
    let ran = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}"))
        .json(&json!({ "statement": "CREATE (:T)" }))
        .send()
        .await
        .expect("send");
    assert_eq!(ran.status(), StatusCode::ACCEPTED);
    let rolled = s
        .client
        .delete(s.url(&format!("/db/neo4j/query/v2/tx/{id}")))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .await
        .expect("send");
    assert_eq!(rolled.status(), StatusCode::ACCEPTED);
    assert_eq!(count(&s).await, 2);
    // A failing statement ends the transaction.
    let (id, _) = s.begin(None).await;
    let failed = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}"))
        .json(&json!({ "statement": "RETURN 1/0" }))
        .send()
        .await
        .expect("send");
    assert_eq!(failed.status(), StatusCode::BAD_REQUEST);
    let after = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}"))
        .json(&json!({ "statement": "RETURN 1" }))
        .send()
        .await
        .expect("send");
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

/// Sends the headers of a body one byte over the limit and a little of it; the answer.
async fn oversized(s: &Server) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = s.server.local_addr();
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let auth = "YWRhOnMzY3JldA=="; // ada:s3cret
    let head = format!(
        "POST /db/neo4j/query/v2 HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic {auth}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{{\"statement\": ",
        plexus_http::MAX_BODY_BYTES + 1
    );
    socket.write_all(head.as_bytes()).await.expect("write");
    let mut answer = vec![0; 4096];
    let n = socket.read(&mut answer).await.expect("read");
    String::from_utf8_lossy(&answer[..n]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_json_errors_and_others_are_still_served() {
    let s = Server::start();
    let url = s.url("/db/neo4j/query/v2");
    let cases: Vec<(client::RequestBuilder, StatusCode, &str)> = vec![
        (
            s.client
                .post(&url)
                .header("content-type", "application/json")
                .body(r#"{"statement":"RETURN 1"}"#),
            StatusCode::UNAUTHORIZED,
            "no credentials",
        ),
        (
            s.client
                .post(&url)
                .basic_auth(USER, Some("wrong"))
                .header("content-type", "application/json")
                .body(r#"{"statement":"RETURN 1"}"#),
            StatusCode::UNAUTHORIZED,
            "wrong password",
        ),
        (
            s.post("/db/neo4j/query/v2")
                .body(r#"{"statement": "RETURN 1""#),
            StatusCode::BAD_REQUEST,
            "malformed JSON",
        ),
        (
            s.post_as("/db/neo4j/query/v2", "text/plain")
                .body(r#"{"statement":"RETURN 1"}"#),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "wrong content type",
        ),
        (
            s.post("/nowhere").body("{}"),
            StatusCode::NOT_FOUND,
            "unknown route",
        ),
        (
            s.post("/db/other/query/v2")
                .body(r#"{"statement":"RETURN 1"}"#),
            StatusCode::NOT_FOUND,
            "unknown database",
        ),
        (
            s.post("/db/neo4j/query/v2")
                .header("host", "evil.example:7474")
                .body(r#"{"statement":"RETURN 1"}"#),
            StatusCode::FORBIDDEN,
            "foreign Host (DNS rebinding)",
        ),
        (
            s.post("/db/neo4j/query/v2")
                .header("origin", "http://evil.example")
                .body(r#"{"statement":"RETURN 1"}"#),
            StatusCode::FORBIDDEN,
            "cross-site Origin",
        ),
    ];
    for (request, expected, what) in cases {
        let response = request.send().await.expect("send");
        assert_eq!(response.status(), expected, "{what}");
        assert!(
            response.headers().get("www-authenticate").is_none(),
            "{what}"
        );
        let body: Json = response
            .json()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(code(&body).starts_with("Neo.ClientError"), "{what}: {body}");
        // Another client is served all along.
        let (status, ok) = s.query("RETURN 1 AS one", json!({})).await;
        assert_eq!(
            (status, &ok["data"]["values"]),
            (StatusCode::ACCEPTED, &json!([[1]])),
            "{what}"
        );
    }
    // An oversized body is refused from its Content-Length, before it is read (a raw
    // socket: an HTTP client still writing the body when the 413 arrives sees a broken pipe).
    let answer = oversized(&s).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("exceeds the limit"), "{answer}");
    let (status, _) = s.query("RETURN 1 AS one", json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // Same-origin requests from the console pass.
    let same = s
        .post("/db/neo4j/query/v2")
        .header("origin", format!("http://{}", s.server.local_addr()))
        .body(r#"{"statement":"RETURN 1"}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(same.status(), StatusCode::ACCEPTED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_results_stream_and_plans_come_back() {
    let s = Server::start();
    let (status, body) = s
        .query("UNWIND range(1, 50000) AS i RETURN i", json!({}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let values = body["data"]["values"].as_array().expect("values");
    assert_eq!(values.len(), 50_000);
    assert_eq!(values[49_999], json!([50_000]));
    let (_, body) = s
        .query("PROFILE UNWIND range(1, 3) AS i RETURN i", json!({}))
        .await;
    let plan = &body["profiledQueryPlan"];
    assert!(plan["operatorType"].is_string(), "{body}");
    assert_eq!(plan["rows"], 3, "{body}");
    let (_, body) = s.query("EXPLAIN MATCH (n) RETURN n", json!({})).await;
    assert!(body["queryPlan"]["operatorType"].is_string(), "{body}");
    assert_eq!(body["data"]["values"], json!([]));
}

/// 10^10 rows into one aggregation: hours of work inside a single pull of the engine, which
/// only the interrupt raised by the time limit can stop.
const ENDLESS: &str = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN count(*)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_limit_stops_a_statement_inside_an_aggregation() {
    let s = Server::start_with(|config| config.query_timeout = Duration::from_millis(200));
    let (status, body) = s.query(ENDLESS, json!({})).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT, "{body}");
    assert_eq!(
        code(&body),
        "Neo.ClientError.Transaction.TransactionTimedOut"
    );
    // The pooled connection that ran it serves the next statement (its flag is not raised).
    for _ in 0..3 {
        let (status, ok) = s.query("RETURN 1 AS one", json!({})).await;
        assert_eq!(
            (status, &ok["data"]["values"]),
            (StatusCode::ACCEPTED, &json!([[1]]))
        );
    }
    // In an explicit transaction: 408, and the transaction is rolled back.
    let (id, _) = s.begin(Some("CREATE (:Kept)")).await;
    let ran = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}"))
        .json(&json!({ "statement": ENDLESS }))
        .send()
        .await
        .expect("send");
    assert_eq!(ran.status(), StatusCode::REQUEST_TIMEOUT);
    let committed = s
        .post(&format!("/db/neo4j/query/v2/tx/{id}/commit"))
        .body("")
        .send()
        .await
        .expect("send");
    assert_eq!(committed.status(), StatusCode::NOT_FOUND);
    let (_, kept) = s.query("MATCH (k:Kept) RETURN count(k)", json!({})).await;
    assert_eq!(kept["data"]["values"], json!([[0]]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_metrics_schema_and_console() {
    let s = Server::start();
    s.query(
        "CREATE (:City {name: 'Oslo'})-[:ROAD]->(:City {name: 'Bergen'})",
        json!({}),
    )
    .await;
    let health = s.client.get(s.url("/health")).send().await.expect("send");
    assert_eq!(health.status(), StatusCode::OK);
    let unauthorized = s.client.get(s.url("/metrics")).send().await.expect("send");
    assert_eq!(unauthorized.status(), StatusCode::UNAUTHORIZED);
    let metrics = s
        .client
        .get(s.url("/metrics"))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("text");
    let commits = metrics
        .lines()
        .find_map(|l| l.strip_prefix("plexus_commits_total "))
        .and_then(|n| n.parse::<u64>().ok())
        .expect("plexus_commits_total");
    assert!(commits >= 1, "{metrics}");
    let counter = |name: &str| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{name} in {metrics}"))
    };
    // The CREATE above installed a commit, wrote its WAL frame and (fsync durability, the
    // default) synced it.
    assert!(counter("plexus_installed_commits_total") >= 1, "{metrics}");
    assert!(counter("plexus_wal_written_bytes_total") > 0, "{metrics}");
    assert!(counter("plexus_wal_fsyncs_total") >= 1, "{metrics}");
    assert!(metrics.contains("plexus_query_latency_seconds_bucket{le=\"+Inf\"}"));
    assert!(metrics.contains("plexus_aborts_total{kind=\"write_conflict\"} 0"));
    let schema: Json = s
        .client
        .get(s.url("/db/neo4j/schema"))
        .basic_auth(USER, Some(PASSWORD))
        .json_answer()
        .await;
    assert_eq!(schema["labels"][0]["name"], "City", "{schema}");
    assert_eq!(schema["relationshipTypes"][0]["name"], "ROAD", "{schema}");
    assert_eq!(schema["relationshipTypes"][0]["count"], 1, "{schema}");
    assert_eq!(schema["propertyKeys"][0]["name"], "name", "{schema}");
    let console = s.client.get(s.url("/")).send().await.expect("send");
    assert_eq!(console.status(), StatusCode::OK);
    let policy = console.headers()["content-security-policy"]
        .to_str()
        .expect("text")
        .to_owned();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(
        console
            .text()
            .await
            .expect("html")
            .contains("<title>Plexus")
    );
    let library = s
        .client
        .get(s.url("/console/cytoscape.min.js"))
        .send()
        .await
        .expect("send");
    assert_eq!(library.status(), StatusCode::OK);
}
