//! One Bolt connection's state machine, over its own Plexus [`Connection`].
//!
//! STATES
//! ======
//! ```text
//!             HELLO (5.0: with credentials)          LOGON
//!   AwaitHello ─────────────────────────▶ AwaitLogon ─────▶ Ready ◀──────┐
//!        │ 5.0 and credentials accepted ───────────────────▲   │         │ RESET
//!        │                                                      │ FAILURE │
//!        └─ anything else: FAILURE, close                       ▼         │
//!                                                             Failed ─────┘
//! ```
//! `Ready` covers the Bolt states READY, STREAMING, TX_READY and TX_STREAMING, which are told
//! apart by two fields: whether an explicit transaction is open (`tx_open`) and the open
//! result streams (`streams`). In `Failed` every message but RESET and GOODBYE is answered
//! IGNORED. RESET rolls back the open transaction, drops the streams and returns to `Ready`.
//! Wrong credentials and protocol violations (a message the state cannot take at all, such as
//! a second HELLO) answer FAILURE and close the connection.
//!
//! RESULTS
//! =======
//! RUN opens a [`QueryStream`] on the Plexus connection (see `plexus::Connection` for what a
//! stream holds); PULL {n} pulls engine batches as needed and sends the next `n` rows as
//! RECORDs with `has_more: true` until the last one, whose SUCCESS carries the summary (query
//! type, update counters). At most one engine batch (plus the look-ahead that tells whether
//! more rows exist) is held per stream, so a large read result is never materialised.
//!
//! - A read in auto-commit mode runs as it is pulled, in a transaction of its own that stays
//!   open (its snapshot pinned) until the last row is pulled or the stream is discarded,
//!   reset or disconnected.
//! - A statement that may write runs to its end at RUN; in auto-commit mode it has committed
//!   when RUN answers SUCCESS — earlier than Neo4j, which commits when the stream ends — so a
//!   client that disconnects after RUN does not undo it, and its errors answer RUN.
//! - In an explicit transaction each RUN opens a stream with its own `qid`; before the next
//!   RUN the open streams are drained into memory (a later statement must not change what an
//!   earlier result returns), and nothing is committed before COMMIT; a disconnect rolls the
//!   transaction back.
//!
//! Engine calls are synchronous, so each runs under `tokio::task::block_in_place`: on the
//! session's own worker thread, while the runtime hands that thread's other tasks to another
//! worker. (It replaced a `spawn_blocking` per message, whose hand-off to the blocking pool
//! and back cost ~45 context switches per bank transfer and half the Bolt throughput:
//! docs/benchmarks.md, "Bolt: engine calls in place".) A panic in an engine call that the
//! engine's own guard did not catch loses the connection (the session then fails every
//! request), never the server.

use crate::auth::Auth;
use crate::handshake::Version;
use crate::message::{Credentials, Fetch, Request, RequestedIsolation, Response};
use crate::packstream::Pack;
use crate::status;
use crate::values::to_pack;
use plexus::{Connection, Params, QueryError, QueryResult, QueryStream};
use std::sync::Arc;
use std::time::Instant;

/// The name reported as the database of every result (Plexus serves one database; the `db`
/// a client names is ignored).
pub const DATABASE_NAME: &str = "neo4j";
/// How long a client may cache the routing table that ROUTE returns, in seconds.
const ROUTING_TABLE_TTL_S: i64 = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitHello,
    AwaitLogon,
    Ready,
    Failed,
}

/// What the connection does after a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Close,
}

/// A result being pulled.
struct Stream {
    /// Set in explicit transactions, where several streams may be open.
    qid: Option<u64>,
    /// The engine side; `None` only while an engine call has it.
    source: Option<QueryStream>,
    /// The engine batch being sent, from `next_row` on.
    chunk: QueryResult,
    next_row: usize,
    started: Instant,
}

impl Stream {
    fn rows_left(&self) -> usize {
        self.chunk.rows.len() - self.next_row
    }
}

/// Fixed facts about the connection a session serves.
pub struct SessionInfo {
    pub version: Version,
    pub connection_id: u64,
    /// The address clients should use for this server (ROUTE answers with it).
    pub advertised_address: String,
    pub auth: Arc<Auth>,
}

pub struct Session {
    info: SessionInfo,
    phase: Phase,
    /// `None` only if an engine call panicked outside the engine's own guard.
    conn: Option<Connection>,
    tx_open: bool,
    streams: Vec<Stream>,
    next_qid: u64,
}

/// Why `BEGIN`, `COMMIT` and `ROLLBACK` as Cypher text are refused: they would change the
/// Plexus connection's transaction behind the Bolt state machine's back (clients use the
/// BEGIN / COMMIT / ROLLBACK messages).
const TRANSACTION_STATEMENTS_REFUSED: &str = "BEGIN, COMMIT and ROLLBACK are Bolt messages \
    here, not statements (use the driver's transaction functions)";

fn failure(code: &'static str, message: impl Into<String>) -> Response {
    Response::Failure {
        code,
        message: message.into(),
    }
}

fn success() -> Response {
    Response::Success(Vec::new())
}

fn elapsed_ms(since: Instant) -> Pack {
    Pack::Int(i64::try_from(since.elapsed().as_millis()).unwrap_or(i64::MAX))
}

impl Session {
    pub fn new(info: SessionInfo, mut conn: Connection) -> Session {
        conn.refuse_transaction_statements(TRANSACTION_STATEMENTS_REFUSED);
        conn.confine_files();
        Session {
            info,
            phase: Phase::AwaitHello,
            conn: Some(conn),
            tx_open: false,
            streams: Vec::new(),
            next_qid: 0,
        }
    }

    /// Runs `f` on the connection in place (see the module doc); `None` if the connection is
    /// gone.
    async fn engine<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Connection) -> T + Send + 'static,
    ) -> Option<T> {
        let mut conn = self.conn.take()?;
        let ran = tokio::task::block_in_place(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut conn)))
        });
        match ran {
            Ok(out) => {
                self.conn = Some(conn);
                Some(out)
            }
            Err(_) => {
                eprintln!(
                    "bolt[{}]: engine call panicked; the connection is lost",
                    self.info.connection_id
                );
                None
            }
        }
    }

    /// Runs `f` on the connection, or fails if the connection was lost.
    async fn call<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Connection) -> Result<T, QueryError> + Send + 'static,
    ) -> Result<T, QueryError> {
        self.engine(f).await.unwrap_or_else(|| {
            Err(QueryError::runtime(
                plexus::ErrorClass::DatabaseError,
                "ConnectionLost",
                "the engine connection was lost",
            ))
        })
    }

    /// The next engine batch of `stream`, or `None` at its end.
    async fn pull(&mut self, stream: &mut Stream) -> Result<Option<QueryResult>, QueryError> {
        let Some(mut source) = stream.source.take() else {
            return Ok(None);
        };
        let (source, pulled) = self
            .call(move |conn| {
                let pulled = conn.pull(&mut source);
                Ok((source, pulled))
            })
            .await?;
        stream.source = Some(source);
        pulled
    }

    /// Drains every open stream into memory (before another statement of the transaction).
    async fn buffer_streams(&mut self) -> Result<(), QueryError> {
        let mut sources: Vec<QueryStream> = self
            .streams
            .iter_mut()
            .filter_map(|s| s.source.take())
            .collect();
        let (buffered, result) = self
            .call(move |conn| {
                let result = sources.iter_mut().try_for_each(|s| conn.buffer(s));
                Ok((sources, result))
            })
            .await?;
        let mut buffered = buffered.into_iter();
        for stream in &mut self.streams {
            stream.source = buffered.next();
        }
        result
    }

    /// Rolls back the open transaction (if any) and drops every stream.
    async fn clear(&mut self) {
        self.streams.clear();
        self.tx_open = false;
        // RESET and LOGOFF also end `SET SESSION …`: a pooled connection must not carry one
        // driver session's settings into the next.
        let rollback = |conn: &mut Connection| {
            if conn.in_transaction() {
                let _ = conn.rollback();
            }
            conn.reset_session();
        };
        let _ = self.engine(rollback).await;
    }

    /// Ends the session: an open transaction is rolled back.
    pub async fn close(mut self) {
        self.clear().await;
    }

    fn fail(&mut self, out: &mut Vec<Response>, response: Response) -> Flow {
        out.push(response);
        self.phase = Phase::Failed;
        self.streams.clear();
        Flow::Continue
    }

    fn violation(&mut self, out: &mut Vec<Response>, message: String) -> Flow {
        eprintln!(
            "bolt[{}]: protocol violation: {message}; closing",
            self.info.connection_id
        );
        out.push(failure(status::REQUEST_INVALID, message));
        Flow::Close
    }

    fn authenticate(&mut self, credentials: &Credentials, out: &mut Vec<Response>) -> Flow {
        if self.info.auth.accepts(
            &credentials.scheme,
            &credentials.principal,
            &credentials.credentials,
        ) {
            self.phase = Phase::Ready;
            Flow::Continue
        } else {
            eprintln!(
                "bolt[{}]: authentication failed for '{}'; closing",
                self.info.connection_id, credentials.principal
            );
            out.push(failure(
                status::UNAUTHORIZED,
                "The client is unauthorized due to authentication failure.",
            ));
            Flow::Close
        }
    }

    fn hello_metadata(&self) -> Vec<(String, Pack)> {
        vec![
            (
                "server".into(),
                Pack::string(concat!("Plexus/", env!("CARGO_PKG_VERSION"))),
            ),
            (
                "connection_id".into(),
                Pack::String(format!("bolt-{}", self.info.connection_id)),
            ),
            ("hints".into(), Pack::Map(Vec::new())),
        ]
    }

    /// Handles one request, appending its responses to `out`.
    pub async fn handle(&mut self, request: Request, out: &mut Vec<Response>) -> Flow {
        if matches!(request, Request::Goodbye) {
            return Flow::Close;
        }
        match self.phase {
            Phase::AwaitHello => match request {
                Request::Hello(credentials) => {
                    if self.info.version.has_logon() {
                        self.phase = Phase::AwaitLogon;
                    } else if self.authenticate(&credentials, out) == Flow::Close {
                        return Flow::Close;
                    }
                    out.push(Response::Success(self.hello_metadata()));
                    Flow::Continue
                }
                other => self.violation(out, format!("expected HELLO, got {}", other.name())),
            },
            Phase::AwaitLogon => match request {
                Request::Logon(credentials) => {
                    if self.authenticate(&credentials, out) == Flow::Close {
                        return Flow::Close;
                    }
                    out.push(success());
                    Flow::Continue
                }
                other => self.violation(out, format!("expected LOGON, got {}", other.name())),
            },
            Phase::Failed => match request {
                Request::Reset => {
                    self.clear().await;
                    self.phase = Phase::Ready;
                    out.push(success());
                    Flow::Continue
                }
                _ => {
                    out.push(Response::Ignored);
                    Flow::Continue
                }
            },
            Phase::Ready => self.ready(request, out).await,
        }
    }

    async fn ready(&mut self, request: Request, out: &mut Vec<Response>) -> Flow {
        match request {
            Request::Reset => {
                self.clear().await;
                out.push(success());
            }
            Request::Hello(_) | Request::Logon(_) => {
                return self.violation(out, format!("{} after authentication", request.name()));
            }
            Request::Logoff if self.info.version.has_logon() => {
                if self.tx_open || !self.streams.is_empty() {
                    return self.fail(
                        out,
                        failure(status::REQUEST_INVALID, "LOGOFF inside a transaction"),
                    );
                }
                self.engine(Connection::reset_session).await;
                self.phase = Phase::AwaitLogon;
                out.push(success());
            }
            Request::Telemetry if self.info.version.has_telemetry() => out.push(success()),
            Request::Logoff | Request::Telemetry => {
                let message = format!(
                    "{} is not part of Bolt {}",
                    request.name(),
                    self.info.version
                );
                return self.violation(out, message);
            }
            Request::Route => {
                out.push(Response::Success(vec![("rt".into(), self.routing_table())]))
            }
            Request::Run {
                query,
                params,
                isolation,
            } => return self.run(query, params, isolation, out).await,
            Request::Begin { isolation } => {
                if self.tx_open || !self.streams.is_empty() {
                    return self.fail(
                        out,
                        failure(
                            status::REQUEST_INVALID,
                            "BEGIN while a transaction or result is open",
                        ),
                    );
                }
                let isolation = match isolation {
                    Ok(isolation) => isolation,
                    Err(message) => {
                        return self.fail(out, failure(status::REQUEST_INVALID, message));
                    }
                };
                let begun = match isolation {
                    Some(level) => self.call(move |conn| conn.begin_with(level)).await,
                    None => self.call(Connection::begin).await,
                };
                match begun {
                    Ok(()) => {
                        self.tx_open = true;
                        out.push(success());
                    }
                    Err(e) => return self.fail(out, failure(status::code(&e), e.to_string())),
                }
            }
            Request::Commit | Request::Rollback => {
                let command = request.name();
                if !self.tx_open {
                    let message = format!("{command} without an open transaction");
                    return self.fail(out, failure(status::REQUEST_INVALID, message));
                }
                self.streams.clear();
                self.tx_open = false;
                let end = match request {
                    Request::Commit => Connection::commit,
                    _ => Connection::rollback,
                };
                if let Err(e) = self.call(end).await {
                    return self.fail(out, failure(status::code(&e), e.to_string()));
                }
                out.push(success());
            }
            Request::Pull(fetch) => return self.fetch(fetch, true, out).await,
            Request::Discard(fetch) => return self.fetch(fetch, false, out).await,
            Request::Goodbye => return Flow::Close,
        }
        Flow::Continue
    }

    async fn run(
        &mut self,
        query: String,
        params: Result<Params, crate::values::ValueError>,
        isolation: RequestedIsolation,
        out: &mut Vec<Response>,
    ) -> Flow {
        if !self.tx_open && !self.streams.is_empty() {
            let message = "RUN while the previous auto-commit result is still open";
            return self.fail(out, failure(status::REQUEST_INVALID, message));
        }
        let params = match params {
            Ok(params) => params,
            Err(e) => return self.fail(out, failure(status::PARAMETER_TYPE, e.0)),
        };
        if self.tx_open
            && let Err(e) = self.buffer_streams().await
        {
            self.tx_open = self.conn.as_ref().is_some_and(Connection::in_transaction);
            return self.fail(out, failure(status::code(&e), e.to_string()));
        }
        // An auto-commit statement's own level; in an explicit transaction BEGIN chose it.
        let isolation = match isolation {
            Ok(level) => level.filter(|_| !self.tx_open),
            Err(message) => return self.fail(out, failure(status::REQUEST_INVALID, message)),
        };
        let started = Instant::now();
        let result = self
            .call(move |conn| {
                if let Some(level) = isolation {
                    conn.set_next_isolation(level)?;
                }
                conn.run(&query, &params)
            })
            .await;
        // A failed statement rolls an explicit transaction back (see plexus::Connection).
        let still_open = self.conn.as_ref().is_some_and(Connection::in_transaction);
        self.tx_open = self.tx_open && still_open;
        match result {
            Ok(source) => {
                let qid = self.tx_open.then(|| {
                    self.next_qid += 1;
                    self.next_qid - 1
                });
                let mut metadata = vec![
                    (
                        "fields".into(),
                        Pack::List(source.columns().iter().map(Pack::string).collect()),
                    ),
                    ("t_first".into(), elapsed_ms(started)),
                ];
                if let Some(qid) = qid {
                    metadata.push(("qid".into(), Pack::Int(qid as i64)));
                }
                self.streams.push(Stream {
                    qid,
                    source: Some(source),
                    chunk: QueryResult::default(),
                    next_row: 0,
                    started: Instant::now(),
                });
                out.push(Response::Success(metadata));
                Flow::Continue
            }
            Err(e) => self.fail(out, failure(status::code(&e), e.to_string())),
        }
    }

    /// PULL (`send`) or DISCARD: the next `fetch.n` rows (all if unset) of a stream.
    async fn fetch(&mut self, fetch: Fetch, send: bool, out: &mut Vec<Response>) -> Flow {
        let found = match fetch.qid {
            None => self.streams.len().checked_sub(1),
            Some(qid) => self.streams.iter().position(|s| s.qid == Some(qid)),
        };
        let Some(index) = found else {
            let message = format!("no open result for qid {:?}", fetch.qid);
            return self.fail(out, failure(status::REQUEST_INVALID, message));
        };
        let mut stream = self.streams.remove(index);
        let mut wanted = fetch.n.unwrap_or(usize::MAX);
        loop {
            let count = wanted.min(stream.rows_left());
            if send {
                let rows = &stream.chunk.rows[stream.next_row..stream.next_row + count];
                for row in rows {
                    let fields = row.iter().map(|v| to_pack(v, &stream.chunk)).collect();
                    out.push(Response::Record(fields));
                }
            }
            stream.next_row += count;
            wanted -= count;
            if stream.rows_left() > 0 {
                break;
            }
            // The batch is used up: fetch the next one, also to learn whether rows remain.
            match self.pull(&mut stream).await {
                Ok(Some(chunk)) => {
                    stream.chunk = chunk;
                    stream.next_row = 0;
                }
                Ok(None) => {
                    out.push(Response::Success(summary(&stream)));
                    return Flow::Continue;
                }
                Err(e) => {
                    self.tx_open = self.conn.as_ref().is_some_and(Connection::in_transaction);
                    return self.fail(out, failure(status::code(&e), e.to_string()));
                }
            }
            if wanted == 0 && stream.rows_left() > 0 {
                break;
            }
        }
        self.streams.insert(index, stream);
        out.push(Response::Success(vec![(
            "has_more".into(),
            Pack::Bool(true),
        )]));
        Flow::Continue
    }

    fn routing_table(&self) -> Pack {
        let server = |role: &str| {
            Pack::Map(vec![
                (
                    "addresses".into(),
                    Pack::List(vec![Pack::string(self.info.advertised_address.as_str())]),
                ),
                ("role".into(), Pack::string(role)),
            ])
        };
        Pack::Map(vec![
            ("ttl".into(), Pack::Int(ROUTING_TABLE_TTL_S)),
            ("db".into(), Pack::string(DATABASE_NAME)),
            (
                "servers".into(),
                Pack::List(vec![server("WRITE"), server("READ"), server("ROUTE")]),
            ),
        ])
    }
}

/// The closing SUCCESS of a stream: query type, update counters, timing.
fn summary(stream: &Stream) -> Vec<(String, Pack)> {
    let result = stream
        .source
        .as_ref()
        .map(QueryStream::summary)
        .unwrap_or_default();
    let s = &result.stats;
    let counters: Vec<(String, Pack)> = [
        ("nodes-created", s.nodes_created),
        ("nodes-deleted", s.nodes_deleted),
        ("relationships-created", s.relationships_created),
        ("relationships-deleted", s.relationships_deleted),
        ("properties-set", s.properties_set),
        ("labels-added", s.labels_added),
        ("labels-removed", s.labels_removed),
        ("indexes-added", s.indexes_added),
        ("indexes-removed", s.indexes_removed),
        ("constraints-added", s.constraints_added),
        ("constraints-removed", s.constraints_removed),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(name, n)| {
        (
            name.to_owned(),
            Pack::Int(i64::try_from(n).unwrap_or(i64::MAX)),
        )
    })
    .collect();
    // Neo4j's query types: read, write, read-write, schema write.
    let query_type = match (s.data_updates() > 0, s.schema_updates() > 0) {
        (false, true) => "s",
        (false, false) => "r",
        (true, _) if result.columns.is_empty() => "w",
        (true, _) => "rw",
    };
    let mut metadata = vec![
        ("type".into(), Pack::string(query_type)),
        ("t_last".into(), elapsed_ms(stream.started)),
        ("db".into(), Pack::string(DATABASE_NAME)),
    ];
    if !counters.is_empty() {
        metadata.push(("stats".into(), Pack::Map(counters)));
    }
    metadata
}
