//! The Bolt state machine end to end over an in-memory pipe: handshake, framing, PackStream
//! and a real database, without sockets or a driver.

use plexus::{Config, Database};
use plexus_bolt::auth::{Auth, User};
use plexus_bolt::chunk::{read_message, write_message};
use plexus_bolt::handshake::{MAGIC, Version};
use plexus_bolt::packstream::{Pack, Structure, decode, encode};
use plexus_bolt::server::{ConnectionLimits, serve_connection};
use plexus_bolt::session::SessionInfo;
use proptest::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;

const MAX_MESSAGE_SIZE_BYTES: usize = 64 * 1024;
const PIPE_BUFFER_BYTES: usize = 1 << 20;
const SUCCESS: u8 = 0x70;
const RECORD: u8 = 0x71;
const IGNORED: u8 = 0x7E;
const FAILURE: u8 = 0x7F;

/// A database in a fresh temporary directory, removed when dropped.
struct TempDb {
    db: Arc<Database>,
    dir: std::path::PathBuf,
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl std::ops::Deref for TempDb {
    type Target = Arc<Database>;
    fn deref(&self) -> &Arc<Database> {
        &self.db
    }
}

fn temp_db() -> TempDb {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "plexus-bolt-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let db = Arc::new(Database::open(&dir, Config::default()).expect("open database"));
    TempDb { db, dir }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn map(entries: &[(&str, Pack)]) -> Pack {
    Pack::Map(
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

struct Client {
    io: DuplexStream,
    server: JoinHandle<Result<(), String>>,
}

/// Connects a client speaking Bolt 5.4 to a new session on `db`.
async fn connect(db: &Arc<Database>, auth: Auth) -> Client {
    let (mut io, server_io) = tokio::io::duplex(PIPE_BUFFER_BYTES);
    let db = db.clone();
    let server = tokio::spawn(async move {
        let info = |version| SessionInfo {
            version,
            connection_id: 1,
            advertised_address: "127.0.0.1:7687".into(),
            auth: Arc::new(auth),
        };
        let limits = ConnectionLimits {
            max_message_size_bytes: MAX_MESSAGE_SIZE_BYTES,
        };
        serve_connection(server_io, &db, info, limits)
            .await
            .map_err(|e| e.to_string())
    });
    let mut hello = MAGIC.to_vec();
    hello.extend_from_slice(&[0, 4, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    io.write_all(&hello).await.expect("handshake");
    let mut answer = [0u8; 4];
    io.read_exact(&mut answer).await.expect("handshake answer");
    assert_eq!(answer, [0, 0, 4, 5], "Bolt {}", Version::new(5, 4));
    Client { io, server }
}

impl Client {
    async fn send(&mut self, tag: u8, fields: Vec<Pack>) {
        let mut message = Vec::new();
        encode(&Pack::structure(tag, fields), &mut message);
        let mut wire = Vec::new();
        write_message(&message, &mut wire);
        self.io.write_all(&wire).await.expect("send");
    }

    /// The next response, `None` once the server closed the connection.
    async fn recv(&mut self) -> Option<Structure> {
        let bytes = read_message(&mut self.io, usize::MAX).await.ok()??;
        match decode(&bytes).expect("server sends valid PackStream") {
            Pack::Struct(s) => Some(s),
            other => panic!("not a message: {other:?}"),
        }
    }

    async fn expect(&mut self, tag: u8) -> Structure {
        let got = self.recv().await.expect("a response");
        assert_eq!(got.tag, tag, "{got:?}");
        got
    }

    async fn login(&mut self, user: &str, password: &str) -> Structure {
        self.send(0x01, vec![map(&[("user_agent", Pack::string("test"))])])
            .await;
        self.expect(SUCCESS).await;
        let credentials = map(&[
            ("scheme", Pack::string("basic")),
            ("principal", Pack::string(user)),
            ("credentials", Pack::string(password)),
        ]);
        self.send(0x6A, vec![credentials]).await;
        self.recv().await.expect("LOGON answered")
    }

    async fn run(&mut self, query: &str) -> Structure {
        self.send(0x10, vec![Pack::string(query), map(&[]), map(&[])])
            .await;
        self.recv().await.expect("RUN answered")
    }

    /// PULL {n}: the records, then the closing SUCCESS / FAILURE / IGNORED.
    async fn pull(&mut self, n: i64) -> (Vec<Vec<Pack>>, Structure) {
        self.send(0x3F, vec![map(&[("n", Pack::Int(n))])]).await;
        let mut records = Vec::new();
        loop {
            let message = self.recv().await.expect("PULL answered");
            if message.tag != RECORD {
                return (records, message);
            }
            let Some(Pack::List(fields)) = message.fields.into_iter().next() else {
                panic!("RECORD without fields");
            };
            records.push(fields);
        }
    }

    /// Closes the client side and waits for the session to end.
    async fn hang_up(self) -> Result<(), String> {
        drop(self.io);
        self.server.await.expect("session task")
    }
}

fn failure_code(s: &Structure) -> &str {
    s.fields[0]
        .get("code")
        .and_then(Pack::as_str)
        .unwrap_or_default()
}

async fn count(db: &Arc<Database>, label: &str) -> i64 {
    let mut client = connect(db, Auth::None).await;
    client.login("", "").await;
    client
        .run(&format!("MATCH (n:{label}) RETURN count(n)"))
        .await;
    let (records, _) = client.pull(-1).await;
    client.hang_up().await.expect("clean close");
    records[0][0].as_int().expect("a count")
}

#[test]
fn failure_ignores_everything_until_reset() {
    runtime().block_on(async {
        let db = temp_db();
        let mut client = connect(&db, Auth::None).await;
        assert_eq!(client.login("", "").await.tag, SUCCESS);
        let failed = client.run("MATCH (n RETURN n").await;
        assert_eq!(failed.tag, FAILURE);
        assert_eq!(
            failure_code(&failed),
            "Neo.ClientError.Statement.SyntaxError"
        );
        let (records, ignored) = client.pull(-1).await;
        assert!(records.is_empty());
        assert_eq!(ignored.tag, IGNORED);
        assert_eq!(client.run("RETURN 1").await.tag, IGNORED);
        client.send(0x0F, vec![]).await;
        client.expect(SUCCESS).await;
        assert_eq!(client.run("RETURN 1 AS one").await.tag, SUCCESS);
        let (records, done) = client.pull(-1).await;
        assert_eq!(records, vec![vec![Pack::Int(1)]]);
        assert_eq!(done.tag, SUCCESS);
        client.send(0x02, vec![]).await; // GOODBYE
        assert!(client.recv().await.is_none());
        client.hang_up().await.expect("clean close");
    });
}

#[test]
fn pull_sends_batches_with_has_more() {
    runtime().block_on(async {
        let db = temp_db();
        let mut client = connect(&db, Auth::None).await;
        client.login("", "").await;
        client.run("UNWIND range(1, 5) AS i RETURN i").await;
        let (first, more) = client.pull(2).await;
        assert_eq!(first, vec![vec![Pack::Int(1)], vec![Pack::Int(2)]]);
        assert_eq!(more.fields[0].get("has_more"), Some(&Pack::Bool(true)));
        let (rest, done) = client.pull(10).await;
        assert_eq!(rest.len(), 3);
        assert_eq!(done.fields[0].get("has_more"), None);
        assert_eq!(done.fields[0].get("type"), Some(&Pack::string("r")));
        client.hang_up().await.expect("clean close");
    });
}

#[test]
fn schema_commands_report_schema_counters() {
    runtime().block_on(async {
        let db = temp_db();
        let mut client = connect(&db, Auth::None).await;
        client.login("", "").await;
        let stats = |done: &Structure| match done.fields[0].get("stats") {
            Some(Pack::Map(entries)) => entries.clone(),
            other => panic!("no stats: {other:?}"),
        };
        client
            .run("CREATE INDEX age FOR (p:Person) ON (p.age)")
            .await;
        let (_, done) = client.pull(10).await;
        assert_eq!(done.fields[0].get("type"), Some(&Pack::string("s")));
        assert_eq!(stats(&done), vec![("indexes-added".into(), Pack::Int(1))]);
        client.run("DROP INDEX age").await;
        let (_, done) = client.pull(10).await;
        assert_eq!(stats(&done), vec![("indexes-removed".into(), Pack::Int(1))]);
        client
            .run("CREATE CONSTRAINT FOR (c:City) REQUIRE c.name IS UNIQUE")
            .await;
        let (_, done) = client.pull(10).await;
        assert_eq!(
            stats(&done),
            vec![("constraints-added".into(), Pack::Int(1))]
        );
        client.hang_up().await.expect("clean close");
    });
}

#[test]
fn wrong_password_fails_and_closes() {
    runtime().block_on(async {
        let db = temp_db();
        let auth = Auth::Basic(vec![User::parse("neo4j:secret").expect("user")]);
        let mut client = connect(&db, auth.clone()).await;
        let refused = client.login("neo4j", "guess").await;
        assert_eq!(
            failure_code(&refused),
            "Neo.ClientError.Security.Unauthorized"
        );
        assert!(client.recv().await.is_none(), "connection closed");
        let mut client = connect(&db, auth).await;
        assert_eq!(client.login("neo4j", "secret").await.tag, SUCCESS);
        client.hang_up().await.expect("clean close");
    });
}

#[test]
fn disconnect_mid_stream_rolls_the_transaction_back() {
    runtime().block_on(async {
        let db = temp_db();
        let mut client = connect(&db, Auth::None).await;
        client.login("", "").await;
        client.send(0x11, vec![map(&[])]).await; // BEGIN
        client.expect(SUCCESS).await;
        assert_eq!(client.run("CREATE (:Gone)").await.tag, SUCCESS);
        let (_, done) = client.pull(-1).await;
        assert_eq!(done.tag, SUCCESS);
        let streaming = client.run("UNWIND range(1, 100) AS i RETURN i").await;
        assert_eq!(streaming.fields[0].get("qid"), Some(&Pack::Int(1)));
        let (some, _) = client.pull(3).await;
        assert_eq!(some.len(), 3);
        client.hang_up().await.expect("a hang-up is a normal end");
        assert_eq!(count(&db, "Gone").await, 0);
    });
}

#[test]
fn malformed_messages_close_the_connection() {
    runtime().block_on(async {
        let db = temp_db();
        for bad in [
            vec![0xC7],                   // no such marker
            vec![0xB0, 0x77],             // no such message
            vec![0xB1, 0x10, 0x01],       // RUN without its fields
            vec![0x91; 1000],             // nested too deep
            vec![0xD6, 0xFF, 0xFF, 0xFF], // truncated
        ] {
            let mut client = connect(&db, Auth::None).await;
            client.login("", "").await;
            let mut wire = Vec::new();
            write_message(&bad, &mut wire);
            client.io.write_all(&wire).await.expect("send");
            let refused = client.expect(FAILURE).await;
            assert_eq!(failure_code(&refused), "Neo.ClientError.Request.Invalid");
            assert!(client.recv().await.is_none());
            assert!(client.server.await.expect("session task").is_err());
        }
        // a message over the size limit is refused before it is read
        let mut client = connect(&db, Auth::None).await;
        client.login("", "").await;
        let mut wire = Vec::new();
        write_message(&vec![0; 2 * MAX_MESSAGE_SIZE_BYTES], &mut wire);
        let _ = client.io.write_all(&wire).await;
        let refused = client.expect(FAILURE).await;
        assert!(format!("{refused:?}").contains("exceeds the limit"));
        assert!(client.server.await.expect("session task").is_err());
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_bytes_after_login_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let runtime = runtime();
        let db = temp_db();
        runtime.block_on(async {
            let mut client = connect(&db, Auth::None).await;
            client.login("", "").await;
            client.io.write_all(&bytes).await.expect("send");
            drop(client.io);
            // the session ends (cleanly or with an error), never with a panic
            client.server.await.expect("the session task does not panic")
        }).ok();
    }
}
