//! The query endpoints: auto-commit statements streamed as they are pulled, and explicit
//! transactions held between requests.
//!
//! WHAT
//! ====
//! ```text
//!   POST /db/{db}/query/v2          pool ─▶ Connection ─▶ engine thread ──batches──▶ body
//!                                   {"statement", "parameters", "includeCounters"}
//!   POST /db/{db}/query/v2/tx       a Connection in BEGIN, kept under an id (+ a statement)
//!   POST …/tx/{id}                  a statement in it (result buffered, bounded)
//!   POST …/tx/{id}/commit           (a statement, then) COMMIT; the id is gone
//!   DELETE …/tx/{id}                ROLLBACK; the id is gone
//! ```
//! A response is `{"data": {"fields", "values"}, "counters"?, "queryPlan"? |
//! "profiledQueryPlan"?, "bookmarks": [], "transaction"?: {"id", "expires"}}` — Neo4j's
//! shapes — with HTTP 202 like Neo4j; a statement that fails before its first row answers
//! a 4xx/5xx with `{"errors": [{code, message, position?}]}`.
//!
//! STREAMING
//! =========
//! An auto-commit statement starts in place on the request's runtime worker
//! (`block_in_place`, as the Bolt sessions do): it runs and is pulled until its end or
//! `IN_PLACE_BYTES` of answer, so a short result (a point lookup) is answered whole with no
//! thread hand-off, and parse, planning and early run-time errors get a proper status. The
//! rest of a larger result is pulled on a blocking thread that sends each engine batch,
//! encoded, through a channel of [`crate::STREAM_BUFFER_BATCHES`] to the response body. A failure after that (or the statement's timeout) can no longer
//! change the status: the body then ends with `"errors": […]` after the rows sent so far,
//! and the transaction is rolled back.
//!
//! TIME LIMIT AND CANCELLATION
//! ===========================
//! Each statement gets a fresh [`plexus::Interrupt`] on its connection and a watcher task
//! ([`watch`]) that raises it when the time limit passes or, once streaming, when the client
//! disconnects (the body, and with it the channel's receiver, is dropped). The engine looks
//! at the flag before every batch any pipeline moves — inside a sort or an aggregation too —
//! so the statement stops within one batch of work and its transaction is rolled back; the
//! answer (if anyone still listens) is a timeout error. The watcher is aborted when the
//! statement ends, and the next request on the connection gets a new flag.
//!
//! INVARIANTS
//! ==========
//! - A connection goes back to the pool only outside a transaction, with its session reset.
//! - A transaction belongs to the user who opened it; another user gets 404 for its id.
//! - One request at a time per transaction: a second concurrent one gets 409.
//! - Idle transactions are rolled back after [`crate::TRANSACTION_IDLE_TIMEOUT_MS`].
//!
//! NOT YET
//! =======
//! - Notifications are never sent.

use crate::guard::{self, REQUEST_INVALID, error};
use crate::json::{self, Format};
use crate::{AppState, MAX_OPEN_TRANSACTIONS, MAX_TRANSACTION_RESULT_ROWS};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use plexus::{Connection, Database, Interrupt, Params, QueryError, QueryResult, QueryStream};
use serde_json::{Map, Value as Json, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc;

/// Connections kept idle for reuse (opening one registers the built-in procedures).
const MAX_IDLE_CONNECTIONS: usize = crate::MAX_CONCURRENT_QUERIES;
/// How often idle transactions are looked for, in milliseconds.
const EXPIRY_SWEEP_MS: u64 = 1_000;
/// Why transaction statements sent as text are refused.
const TRANSACTION_STATEMENTS_REFUSED: &str = "BEGIN, COMMIT and ROLLBACK are endpoints here \
    (POST …/query/v2/tx, …/tx/{id}/commit, DELETE …/tx/{id}), not statements";

/// Idle connections to the database.
pub struct ConnectionPool {
    db: Arc<Database>,
    idle: Mutex<Vec<Connection>>,
}

impl ConnectionPool {
    pub fn new(db: Arc<Database>) -> ConnectionPool {
        ConnectionPool {
            db,
            idle: Mutex::new(Vec::new()),
        }
    }

    pub fn take(&self) -> Connection {
        let reused = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        reused.unwrap_or_else(|| {
            let mut conn = self.db.connect();
            conn.refuse_transaction_statements(TRANSACTION_STATEMENTS_REFUSED);
            conn.confine_files();
            conn
        })
    }

    /// Returns a connection (rolled back and reset; dropped if the pool is full).
    pub fn give(&self, mut conn: Connection) {
        if conn.in_transaction() {
            let _ = conn.rollback();
        }
        conn.reset_session();
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE_CONNECTIONS
        {
            idle.push(conn);
        }
    }
}

/// A statement request.
struct Statement {
    text: String,
    params: Params,
    counters: bool,
}

/// Parses a request body; `None` when it has no statement and `required` is false.
/// What every query request starts with: the database must be the served one, the body is
/// read within its limit, and its statement parsed (`required`: an empty body is an error);
/// returns the statement and the response's format.
async fn read_request(
    state: &AppState,
    db: &str,
    headers: &HeaderMap,
    body: Body,
    required: bool,
) -> Result<(Option<Statement>, Format), Box<Response>> {
    if !state.serves(db) {
        return Err(Box::new(unknown_database(db)));
    }
    let (format_in, format_out) = formats(headers);
    let body = guard::read_body(body).await.map_err(Box::new)?;
    Ok((parse_statement(&body, format_in, required)?, format_out))
}

fn parse_statement(
    body: &[u8],
    format: Format,
    required: bool,
) -> Result<Option<Statement>, Box<Response>> {
    let bad = |message: String| Box::new(error(StatusCode::BAD_REQUEST, REQUEST_INVALID, message));
    if body.iter().all(u8::is_ascii_whitespace) && !required {
        return Ok(None);
    }
    let json: Json = serde_json::from_slice(body).map_err(|e| {
        bad(format!(
            "malformed JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let Json::Object(object) = json else {
        return Err(bad("the request body must be a JSON object".into()));
    };
    let text = match object.get("statement") {
        Some(Json::String(s)) => s.clone(),
        None if !required => return Ok(None),
        None => return Err(bad("the request has no \"statement\"".into())),
        Some(_) => return Err(bad("\"statement\" must be a string".into())),
    };
    let mut params = Params::new();
    match object.get("parameters") {
        None | Some(Json::Null) => {}
        Some(Json::Object(map)) => {
            for (name, value) in map {
                let value = json::from_json(value, format, &format!("${name}"))
                    .map_err(|e| Box::new(error(StatusCode::BAD_REQUEST, TYPE_ERROR, e.0)))?;
                params.insert(name.clone(), value);
            }
        }
        Some(_) => return Err(bad("\"parameters\" must be a JSON object".into())),
    }
    let counters = matches!(object.get("includeCounters"), Some(Json::Bool(true)));
    Ok(Some(Statement {
        text,
        params,
        counters,
    }))
}

/// The code of a parameter Plexus cannot take.
pub const TYPE_ERROR: &str = "Neo.ClientError.Statement.TypeError";
const TIMED_OUT: &str = "Neo.ClientError.Transaction.TransactionTimedOut";

/// HTTP status and JSON error for an engine error.
fn query_error(e: &QueryError) -> Response {
    let code = plexus_bolt::status::code(e);
    let status = if code.starts_with("Neo.ClientError") {
        StatusCode::BAD_REQUEST
    } else if code.starts_with("Neo.TransientError") {
        StatusCode::CONFLICT
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    (status, axum::Json(json!({ "errors": [error_json(e)] }))).into_response()
}

fn error_json(e: &QueryError) -> Json {
    let mut object = json!({ "code": plexus_bolt::status::code(e), "message": e.to_string() });
    if let Some(span) = e.span {
        object["position"] = json!({
            "offset": span.start, "line": span.line, "column": span.column
        });
    }
    object
}

fn timed_out(timeout: Duration) -> QueryError {
    QueryError::runtime(
        plexus::ErrorClass::DatabaseError,
        "TransactionTimedOut",
        format!(
            "the statement ran longer than the limit of {} ms and was stopped",
            timeout.as_millis()
        ),
    )
}

/// The JSON error of a timeout (the engine's class for it has no Neo4j code of its own).
fn timeout_json(e: &QueryError) -> Json {
    json!({ "code": TIMED_OUT, "message": e.message })
}

/// An interrupted statement's error as the request sees it: its watcher raised the flag
/// for the time limit (a client that went away reads no answer).
fn interrupted_as_timeout(e: QueryError, timeout: Duration) -> QueryError {
    if e.code == plexus::INTERRUPTED {
        return timed_out(timeout);
    }
    e
}

/// Gives `conn`'s next statement a fresh interrupt flag and raises it at `deadline`, or
/// when `client` is closed (its receiver, the response body, dropped); abort the returned
/// handle when the statement is over.
fn watch(
    conn: &mut Connection,
    deadline: Instant,
    client: Option<mpsc::Sender<Bytes>>,
) -> tokio::task::AbortHandle {
    let interrupt = Interrupt::new();
    conn.set_interrupt(interrupt.clone());
    let deadline = tokio::time::Instant::from_std(deadline);
    tokio::spawn(async move {
        match client {
            Some(client) => {
                tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {}
                    () = client.closed() => {}
                }
            }
            None => tokio::time::sleep_until(deadline).await,
        }
        interrupt.raise();
    })
    .abort_handle()
}

fn formats(headers: &HeaderMap) -> (Format, Format) {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    (
        Format::of(text(header::CONTENT_TYPE)),
        Format::of(text(header::ACCEPT)),
    )
}

fn unknown_database(name: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "Neo.ClientError.Database.DatabaseNotFound",
        format!("database '{name}' does not exist here"),
    )
}

fn busy() -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "Neo.TransientError.General.OutOfMemoryError",
        format!(
            "{} statements are running already; retry later",
            crate::MAX_CONCURRENT_QUERIES
        ),
    )
}

/// Rows of `chunk` as JSON arrays, each preceded by a comma unless it is the very first.
fn encode_rows(chunk: &QueryResult, format: Format, first: &mut bool, out: &mut Vec<u8>) {
    for row in &chunk.rows {
        if !std::mem::take(first) {
            out.push(b',');
        }
        let values: Vec<Json> = row
            .iter()
            .map(|v| json::to_json(v, chunk, format))
            .collect();
        // Writing JSON values to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, &values);
    }
}

/// The fields after `data`: counters (if asked), the plan (EXPLAIN / PROFILE), bookmarks.
fn summary_fields(summary: &QueryResult, counters: bool, query: &str) -> Map<String, Json> {
    let mut fields = Map::new();
    if counters {
        let s = &summary.stats;
        let updates = s.data_updates() + s.schema_updates();
        fields.insert(
            "counters".into(),
            json!({
                "containsUpdates": updates > 0,
                "nodesCreated": s.nodes_created,
                "nodesDeleted": s.nodes_deleted,
                "propertiesSet": s.properties_set,
                "relationshipsCreated": s.relationships_created,
                "relationshipsDeleted": s.relationships_deleted,
                "labelsAdded": s.labels_added,
                "labelsRemoved": s.labels_removed,
                "indexesAdded": s.indexes_added,
                "indexesRemoved": s.indexes_removed,
                "constraintsAdded": s.constraints_added,
                "constraintsRemoved": s.constraints_removed,
                "containsSystemUpdates": false,
                "systemUpdates": 0,
            }),
        );
    }
    if let Some(plan) = &summary.plan {
        let profiled = query
            .trim_start()
            .get(..7)
            .is_some_and(|w| w.eq_ignore_ascii_case("profile"));
        let key = if profiled {
            "profiledQueryPlan"
        } else {
            "queryPlan"
        };
        fields.insert(key.into(), crate::query::plan_json(plan));
        fields.insert("planText".into(), Json::String(plan.clone()));
    }
    fields.insert("bookmarks".into(), json!([]));
    fields
}

/// Appends `fields` to an open JSON object (after a first member).
fn append_fields(out: &mut Vec<u8>, fields: &Map<String, Json>) {
    for (key, value) in fields {
        out.push(b',');
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
        let _ = serde_json::to_writer(&mut *out, value);
    }
}

fn head(columns: &[String]) -> Vec<u8> {
    let mut out = b"{\"data\":{\"fields\":".to_vec();
    let _ = serde_json::to_writer(&mut out, columns);
    out.extend_from_slice(b",\"values\":[");
    out
}

/// Encoded answer bytes kept in place before the rest of a result is handed to a blocking
/// thread and streamed (see STREAMING in the module doc), in bytes.
const IN_PLACE_BYTES: usize = 64 * 1024;

/// A statement started in place: failed, answered whole, or with more rows to stream.
enum Started {
    Failed(QueryError),
    Complete(Vec<u8>),
    Streaming {
        stream: QueryStream,
        out: Vec<u8>,
        first_row: bool,
    },
}

/// Runs one auto-commit statement and pulls it until its end or [`IN_PLACE_BYTES`] of
/// answer: a point lookup is answered without leaving the request's thread.
fn start_statement(conn: &mut Connection, statement: &Statement, format: Format) -> Started {
    let started = conn
        .run(&statement.text, &statement.params)
        .and_then(|mut stream| conn.pull(&mut stream).map(|first| (stream, first)));
    let (mut stream, first) = match started {
        Ok(started) => started,
        Err(e) => return Started::Failed(e),
    };
    let mut out = head(stream.columns());
    let mut first_row = true;
    let mut next = first;
    while let Some(chunk) = next {
        encode_rows(&chunk, format, &mut first_row, &mut out);
        if out.len() >= IN_PLACE_BYTES {
            return Started::Streaming {
                stream,
                out,
                first_row,
            };
        }
        next = match conn.pull(&mut stream) {
            Ok(next) => next,
            Err(e) => {
                return Started::Complete(tail(out, &stream, statement, Some(error_json(&e))));
            }
        };
    }
    Started::Complete(tail(out, &stream, statement, None))
}

/// Closes the `values` array and the answer: the summary fields, or the error.
fn tail(
    mut out: Vec<u8>,
    stream: &QueryStream,
    statement: &Statement,
    failed: Option<Json>,
) -> Vec<u8> {
    out.extend_from_slice(b"]}");
    match failed {
        Some(e) => append_fields(&mut out, &Map::from_iter([("errors".into(), json!([e]))])),
        None => append_fields(
            &mut out,
            &summary_fields(&stream.summary(), statement.counters, &statement.text),
        ),
    }
    out.push(b'}');
    out
}

/// Streams the rest of a started statement on a blocking thread: `out` first, then each
/// engine batch, until the end, an error, the time limit (`timeout`: the watcher raised the
/// interrupt), or the client is gone.
fn stream_rest(
    conn: &mut Connection,
    statement: &Statement,
    format: Format,
    (mut stream, mut out, mut first_row): (QueryStream, Vec<u8>, bool),
    timeout: Duration,
    tx: &mpsc::Sender<Bytes>,
) {
    let failed = loop {
        if tx
            .blocking_send(Bytes::from(std::mem::take(&mut out)))
            .is_err()
        {
            return; // the client is gone: dropping `stream` rolls its transaction back
        }
        match conn.pull(&mut stream) {
            Ok(Some(chunk)) => encode_rows(&chunk, format, &mut first_row, &mut out),
            Ok(None) => break None,
            Err(e) if e.code == plexus::INTERRUPTED => {
                break Some(timeout_json(&timed_out(timeout)));
            }
            Err(e) => break Some(error_json(&e)),
        }
    };
    let _ = tx.blocking_send(Bytes::from(tail(out, &stream, statement, failed)));
}

fn answer(format: Format, body: Body) -> Response {
    (
        StatusCode::ACCEPTED,
        [(header::CONTENT_TYPE, format.content_type())],
        body,
    )
        .into_response()
}

/// `POST /db/{db}/query/v2`.
pub async fn auto_commit(
    State(state): State<Arc<AppState>>,
    Path(db): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (statement, format_out) = match read_request(&state, &db, &headers, body, true).await {
        Ok((Some(statement), format_out)) => (statement, format_out),
        Ok((None, _)) => return error(StatusCode::BAD_REQUEST, REQUEST_INVALID, "no statement"),
        Err(response) => return *response,
    };
    let Ok(permit) = state.running.clone().try_acquire_owned() else {
        return busy();
    };
    let timeout = state.config.query_timeout;
    let deadline = Instant::now() + timeout;
    // In place, like the Bolt sessions' engine calls: the runtime moves this worker's other
    // tasks elsewhere meanwhile, and a short statement costs no thread hand-off.
    let mut conn = state.pool.take();
    let (tx, rx) = mpsc::channel(crate::STREAM_BUFFER_BATCHES);
    let watcher = watch(&mut conn, deadline, Some(tx.clone()));
    let started = tokio::task::block_in_place(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            start_statement(&mut conn, &statement, format_out)
        }))
    });
    let started = match started {
        Ok(started) => started,
        Err(_) => {
            watcher.abort();
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Neo.DatabaseError.General.UnknownError",
                "the statement failed unexpectedly; its connection was dropped",
            );
        }
    };
    let (stream, out, first_row) = match started {
        Started::Failed(e) => {
            watcher.abort();
            state.pool.give(conn);
            return transaction_error(&interrupted_as_timeout(e, timeout));
        }
        Started::Complete(out) => {
            watcher.abort();
            state.pool.give(conn);
            return answer(format_out, Body::from(out));
        }
        Started::Streaming {
            stream,
            out,
            first_row,
        } => (stream, out, first_row),
    };
    let worker_state = state.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            stream_rest(
                &mut conn,
                &statement,
                format_out,
                (stream, out, first_row),
                timeout,
                &tx,
            )
        }));
        watcher.abort();
        if ran.is_ok() {
            worker_state.pool.give(conn);
        }
    });
    let chunks = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|piece| (Ok::<_, std::io::Error>(piece), rx))
    });
    answer(format_out, Body::from_stream(chunks))
}
/// An open explicit transaction between requests.
struct OpenTransaction {
    owner: String,
    /// `None` while a request is using it.
    conn: Option<Connection>,
    expires: Instant,
}

/// The open explicit transactions, by id.
#[derive(Default)]
pub struct Transactions {
    open: Mutex<HashMap<String, OpenTransaction>>,
}

impl Transactions {
    pub fn len(&self) -> usize {
        self.open.lock().map_or(0, |open| open.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rolls back and forgets every open transaction (at shutdown).
    pub fn clear(&self) {
        let drained: Vec<_> = match self.open.lock() {
            Ok(mut open) => open.drain().collect(),
            Err(_) => return,
        };
        for (_, mut open) in drained {
            if let Some(conn) = open.conn.as_mut() {
                let _ = conn.rollback();
            }
        }
    }
}

/// Rolls back transactions idle past their expiry, forever.
pub async fn expire_transactions(state: Arc<AppState>) {
    loop {
        tokio::time::sleep(Duration::from_millis(EXPIRY_SWEEP_MS)).await;
        let now = Instant::now();
        let expired: Vec<Connection> = match state.transactions.open.lock() {
            Ok(mut open) => {
                let ids: Vec<String> = open
                    .iter()
                    .filter(|(_, t)| t.conn.is_some() && t.expires <= now)
                    .map(|(id, _)| id.clone())
                    .collect();
                ids.iter()
                    .filter_map(|id| open.remove(id).and_then(|t| t.conn))
                    .collect()
            }
            Err(_) => continue,
        };
        if expired.is_empty() {
            continue;
        }
        let pool_state = state.clone();
        let _ = tokio::task::spawn_blocking(move || {
            for conn in expired {
                pool_state.pool.give(conn);
            }
        })
        .await;
    }
}

/// The basic-auth principal of a request ("" without credentials).
fn principal(headers: &HeaderMap) -> String {
    use base64::Engine as _;
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .and_then(|(_, encoded)| {
            base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .ok()
        })
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.split_once(':').map(|(name, _)| name.to_owned()))
        .unwrap_or_default()
}

/// A transaction id nobody can guess: random bits from the standard library's hasher keys.
fn new_transaction_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let bits = |salt: u128| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(salt);
        h.finish()
    };
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("{:016x}{:016x}", bits(now), bits(now ^ 0x5bd1e995))
}

/// `expires` as ISO-8601 UTC text.
fn expiry_text(from_now: Duration) -> String {
    let at = SystemTime::now() + from_now;
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs() as i64;
    let (y, m, d) = plexus::temporal::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Runs `statement` to its end inside the connection's transaction: the JSON response
/// object, or the error (after which the engine has rolled the transaction back).
fn run_buffered(
    conn: &mut Connection,
    statement: &Statement,
    format: Format,
    timeout: Duration,
) -> Result<Map<String, Json>, QueryError> {
    let mut stream = conn.run(&statement.text, &statement.params)?;
    let mut values = Vec::new();
    while let Some(chunk) = conn
        .pull(&mut stream)
        .map_err(|e| interrupted_as_timeout(e, timeout))?
    {
        for row in &chunk.rows {
            values.push(Json::Array(
                row.iter()
                    .map(|v| json::to_json(v, &chunk, format))
                    .collect(),
            ));
        }
        if values.len() > MAX_TRANSACTION_RESULT_ROWS {
            let _ = conn.rollback();
            return Err(QueryError::runtime(
                plexus::ErrorClass::DatabaseError,
                "ResultTooLarge",
                format!(
                    "a result in an explicit transaction may hold {MAX_TRANSACTION_RESULT_ROWS} \
                     rows; use an auto-commit request (streamed) for larger results"
                ),
            ));
        }
    }
    let mut object = Map::new();
    object.insert(
        "data".into(),
        json!({ "fields": stream.columns(), "values": values }),
    );
    object.extend(summary_fields(
        &stream.summary(),
        statement.counters,
        &statement.text,
    ));
    Ok(object)
}

/// The error answer of a statement in a transaction: timeouts get their own code.
fn transaction_error(e: &QueryError) -> Response {
    if e.code == "TransactionTimedOut" {
        return (
            StatusCode::REQUEST_TIMEOUT,
            axum::Json(json!({ "errors": [timeout_json(e)] })),
        )
            .into_response();
    }
    query_error(e)
}

/// What a transaction request does once it holds the connection.
enum Step {
    Begin,
    Run,
    Commit,
}

/// Runs one transaction request on a blocking thread: the optional statement, then the
/// step's own action. Returns the connection if the transaction stays open.
async fn transaction_step(
    state: &Arc<AppState>,
    mut conn: Connection,
    statement: Option<Statement>,
    format: Format,
    step: Step,
) -> (Option<Connection>, Response) {
    let timeout = state.config.query_timeout;
    let watcher = watch(&mut conn, Instant::now() + timeout, None);
    let worker = tokio::task::spawn_blocking(move || {
        let result = (|| -> Result<Map<String, Json>, QueryError> {
            let mut object = Map::new();
            if matches!(step, Step::Begin) {
                conn.begin()?;
            }
            if let Some(statement) = &statement {
                object.extend(run_buffered(&mut conn, statement, format, timeout)?);
            }
            if matches!(step, Step::Commit) {
                conn.commit()?;
            }
            Ok(object)
        })();
        (conn, result)
    });
    let joined = worker.await;
    watcher.abort();
    let Ok((conn, result)) = joined else {
        let failed = error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Neo.DatabaseError.General.UnknownError",
            "the transaction's engine thread failed; the transaction is lost",
        );
        return (None, failed);
    };
    // Ended (committed, failed or rolled back): the connection goes back to the pool.
    let conn = if conn.in_transaction() {
        Some(conn)
    } else {
        state.pool.give(conn);
        None
    };
    match result {
        Ok(mut object) => {
            if !object.contains_key("data") {
                object.insert("data".into(), json!({ "fields": [], "values": [] }));
                object.insert("bookmarks".into(), json!([]));
            }
            let response = (
                StatusCode::ACCEPTED,
                [(header::CONTENT_TYPE, format.content_type())],
                axum::Json(Json::Object(object)),
            );
            (conn, response.into_response())
        }
        Err(e) => (conn, transaction_error(&e)),
    }
}

fn transaction_not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "Neo.ClientError.Transaction.TransactionNotFound",
        format!("transaction '{id}' does not exist, has expired or was ended"),
    )
}

/// `POST /db/{db}/query/v2/tx`.
pub async fn begin(
    State(state): State<Arc<AppState>>,
    Path(db): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (statement, format_out) = match read_request(&state, &db, &headers, body, false).await {
        Ok(read) => read,
        Err(response) => return *response,
    };
    let full = state
        .transactions
        .open
        .lock()
        .map_or(true, |open| open.len() >= MAX_OPEN_TRANSACTIONS);
    if full {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "Neo.TransientError.Transaction.MaximumTransactionLimitReached",
            format!("{MAX_OPEN_TRANSACTIONS} transactions are open already"),
        );
    }
    let conn = state.pool.take();
    let (conn, response) = transaction_step(&state, conn, statement, format_out, Step::Begin).await;
    let Some(conn) = conn else {
        return response;
    };
    let id = new_transaction_id();
    let idle = Duration::from_millis(crate::TRANSACTION_IDLE_TIMEOUT_MS);
    if let Ok(mut open) = state.transactions.open.lock() {
        open.insert(
            id.clone(),
            OpenTransaction {
                owner: principal(&headers),
                conn: Some(conn),
                expires: Instant::now() + idle,
            },
        );
    }
    with_transaction(response, &id, idle).await
}

/// Adds `"transaction": {"id", "expires"}` to a 202 JSON response.
async fn with_transaction(response: Response, id: &str, idle: Duration) -> Response {
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let Ok(Json::Object(mut object)) = serde_json::from_slice::<Json>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    object.insert(
        "transaction".into(),
        json!({ "id": id, "expires": expiry_text(idle) }),
    );
    let body = serde_json::to_vec(&Json::Object(object)).unwrap_or_default();
    let mut parts = parts;
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// Takes the connection of transaction `id` for one request.
fn checkout(state: &AppState, id: &str, owner: &str) -> Result<Connection, Box<Response>> {
    let mut open = state
        .transactions
        .open
        .lock()
        .map_err(|_| Box::new(transaction_not_found(id)))?;
    match open.get_mut(id) {
        Some(t) if t.owner == owner => t.conn.take().ok_or_else(|| {
            Box::new(error(
                StatusCode::CONFLICT,
                "Neo.ClientError.Transaction.ConcurrentRequest",
                format!("transaction '{id}' is serving another request"),
            ))
        }),
        _ => Err(Box::new(transaction_not_found(id))),
    }
}

/// Puts the connection back (the transaction is open) or forgets the id (it ended).
fn checkin(state: &AppState, id: &str, conn: Option<Connection>) {
    let ended = match state.transactions.open.lock() {
        Ok(mut open) => match conn {
            Some(conn) => match open.get_mut(id) {
                Some(t) => {
                    t.conn = Some(conn);
                    t.expires =
                        Instant::now() + Duration::from_millis(crate::TRANSACTION_IDLE_TIMEOUT_MS);
                    None
                }
                None => Some(conn),
            },
            None => {
                open.remove(id);
                None
            }
        },
        Err(_) => conn,
    };
    if let Some(conn) = ended {
        state.pool.give(conn);
    }
}

async fn transaction_request(
    state: Arc<AppState>,
    db: String,
    id: String,
    headers: HeaderMap,
    body: Body,
    step: Step,
) -> Response {
    let required = matches!(step, Step::Run);
    let (statement, format_out) = match read_request(&state, &db, &headers, body, required).await {
        Ok(read) => read,
        Err(response) => return *response,
    };
    let conn = match checkout(&state, &id, &principal(&headers)) {
        Ok(conn) => conn,
        Err(response) => return *response,
    };
    let (conn, response) = transaction_step(&state, conn, statement, format_out, step).await;
    let open = conn.is_some();
    checkin(&state, &id, conn);
    if open {
        let idle = Duration::from_millis(crate::TRANSACTION_IDLE_TIMEOUT_MS);
        with_transaction(response, &id, idle).await
    } else {
        response
    }
}

/// `POST /db/{db}/query/v2/tx/{id}`.
pub async fn in_transaction(
    State(state): State<Arc<AppState>>,
    Path((db, id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    transaction_request(state, db, id, headers, body, Step::Run).await
}

/// `POST /db/{db}/query/v2/tx/{id}/commit`.
pub async fn commit(
    State(state): State<Arc<AppState>>,
    Path((db, id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    transaction_request(state, db, id, headers, body, Step::Commit).await
}

/// `DELETE /db/{db}/query/v2/tx/{id}`.
pub async fn rollback(
    State(state): State<Arc<AppState>>,
    Path((db, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if !state.serves(&db) {
        return unknown_database(&db);
    }
    let mut conn = match checkout(&state, &id, &principal(&headers)) {
        Ok(conn) => conn,
        Err(response) => return *response,
    };
    let rolled_back = tokio::task::spawn_blocking(move || {
        let result = conn.rollback();
        (conn, result)
    })
    .await;
    match rolled_back {
        Ok((conn, _)) => {
            if let Ok(mut open) = state.transactions.open.lock() {
                open.remove(&id);
            }
            state.pool.give(conn);
            (
                StatusCode::ACCEPTED,
                axum::Json(json!({ "data": { "fields": [], "values": [] }, "bookmarks": [] })),
            )
                .into_response()
        }
        Err(_) => {
            checkin(&state, &id, None);
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Neo.DatabaseError.General.UnknownError",
                "the rollback's engine thread failed",
            )
        }
    }
}

/// A plan text (one operator per line, children indented under `└ `) as Neo4j's plan
/// objects: `{operatorType, details, estimatedRows?, rows?, time?, children}`. Lines after
/// the main tree (subquery plans) become further roots under `subqueries`.
pub fn plan_json(text: &str) -> Json {
    let mut roots: Vec<Json> = Vec::new();
    // The path of open operators: (depth, node) from the root down.
    let mut stack: Vec<(usize, Json)> = Vec::new();
    let close = |stack: &mut Vec<(usize, Json)>, roots: &mut Vec<Json>, depth: usize| {
        while stack.last().is_some_and(|(d, _)| *d >= depth) {
            let (_, node) = stack.pop().unwrap_or_default();
            match stack.last_mut() {
                Some((_, parent)) => {
                    if let Some(children) = parent["children"].as_array_mut() {
                        children.push(node);
                    }
                }
                None => roots.push(node),
            }
        }
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        let (depth, rest) = match rest.strip_prefix("└ ") {
            Some(rest) => (indent / 2 + 1, rest),
            None => (0, rest),
        };
        close(&mut stack, &mut roots, depth);
        stack.push((depth, plan_operator(rest)));
    }
    close(&mut stack, &mut roots, 0);
    let mut roots = roots.into_iter();
    let mut root = roots.next().unwrap_or_else(|| plan_operator(""));
    let subqueries: Vec<Json> = roots.collect();
    if !subqueries.is_empty() {
        root["subqueries"] = Json::Array(subqueries);
    }
    root
}

/// One operator line: `Name details est_rows=N  [rows=R, time=Tms]`.
fn plan_operator(line: &str) -> Json {
    let (description, profile) = match line.rsplit_once("  [rows=") {
        Some((d, p)) => (d, Some(p.trim_end_matches(']'))),
        None => (line, None),
    };
    let (operator, details) = description.split_once(' ').unwrap_or((description, ""));
    let mut node = json!({ "operatorType": operator, "details": details.trim(), "children": [] });
    if let Some(estimate) = details.rsplit_once("est_rows=").map(|(_, e)| e) {
        let number: String = estimate
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if let Ok(rows) = number.parse::<f64>() {
            node["estimatedRows"] = json!(rows);
        }
    }
    if let Some(profile) = profile {
        let (rows, time) = profile.split_once(", time=").unwrap_or((profile, ""));
        if let Ok(rows) = rows.parse::<u64>() {
            node["rows"] = json!(rows);
        }
        if let Ok(ms) = time.trim_end_matches("ms").parse::<f64>() {
            node["timeMs"] = json!(ms);
        }
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_text_becomes_a_tree() {
        let text = "Results s0  [rows=2, time=0.010ms]\n\
                    └ Projection s0  [rows=2, time=0.008ms]\n  \
                      └ NodeScan s1:Person est_rows=2  [rows=2, time=0.004ms]\n\
                    └ Other x\n";
        let plan = plan_json(text);
        assert_eq!(plan["operatorType"], "Results");
        assert_eq!(plan["rows"], 2);
        let children = plan["children"].as_array().expect("children");
        assert_eq!(children.len(), 2);
        assert_eq!(children[0]["operatorType"], "Projection");
        let scan = &children[0]["children"][0];
        assert_eq!(scan["operatorType"], "NodeScan");
        assert_eq!(scan["estimatedRows"], 2.0);
        assert_eq!(scan["timeMs"], 0.004);
        assert_eq!(children[1]["operatorType"], "Other");
    }

    #[test]
    fn statements_parse_or_say_why_not() {
        let ok = parse_statement(
            br#"{"statement": "RETURN $x", "parameters": {"x": 1}}"#,
            Format::Plain,
            true,
        );
        assert!(matches!(ok, Ok(Some(s)) if s.params.len() == 1));
        for bad in [
            &b"{"[..],
            b"[]",
            br#"{"statement": 1}"#,
            br#"{"parameters": {}}"#,
        ] {
            assert!(parse_statement(bad, Format::Plain, true).is_err());
        }
        assert!(matches!(
            parse_statement(b"", Format::Plain, false),
            Ok(None)
        ));
    }
}
