//! Plexus HTTP server: a Query API in the shape of Neo4j's (v2), Prometheus metrics, a schema
//! endpoint and the web console, for `plexus serve --http ADDR`.
//!
//! WHAT
//! ====
//! ```text
//!   GET  /                                  the console (assets embedded in the binary)
//!   GET  /health                            liveness, no authentication
//!   GET  /metrics                           Prometheus text (observe)
//!   GET  /db/{db}/schema                    labels, types, property keys, indexes (observe)
//!   POST /db/{db}/query/v2                  one auto-commit statement, streamed (query)
//!   POST /db/{db}/query/v2/tx               open an explicit transaction (+ a statement)
//!   POST /db/{db}/query/v2/tx/{id}          a statement in it
//!   POST /db/{db}/query/v2/tx/{id}/commit   commit (+ a last statement)
//!   DELETE /db/{db}/query/v2/tx/{id}        roll back
//! ```
//! `{db}` is `neo4j` or the served database's own name. Every request passes [`guard`]
//! first (Host / Origin, content type, basic authentication with the Bolt server's users),
//! values are converted by [`json`] (plain JSON, or Neo4j's typed JSON when the request
//! asks for `application/vnd.neo4j.query`), and engine calls run on blocking threads.
//! `docs/http.md` is the reference, including where this differs from Neo4j.
//!
//! WHY
//! ===
//! Programs that cannot link a Bolt driver (shell scripts, serverless functions, browsers)
//! speak HTTP, and the console gives people a way to look at a graph. Reusing Neo4j's Query
//! API shapes lets its existing clients work unchanged.
//!
//! INVARIANTS
//! ==========
//! - Bad input never panics and never affects another client: each failure is a 4xx with a
//!   JSON body `{"errors": [{"code", "message"}]}`.
//! - Every limit is a named constant with its unit (below) or a field of [`HttpConfig`].
//! - The server runs on a tokio runtime of its own ([`HttpServer::start`]), beside the Bolt
//!   server's: the Bolt crate stays untouched, and a flood of HTTP requests cannot starve Bolt
//!   sessions of runtime workers (engine work runs on the blocking pool either way).
//!
//! NOT YET
//! =======
//! - Bookmarks are accepted and ignored (Plexus is one server; every commit is visible to
//!   the next request); responses carry an empty `bookmarks` list.
//! - TLS: put a reverse proxy in front.

pub mod console;
pub mod guard;
pub mod json;
pub mod observe;
pub mod query;

use axum::Router;
use axum::routing::{get, post};
use plexus::Database;
use plexus_bolt::Auth;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Default listen address when `--http` is given without one: loopback, Neo4j's HTTP port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7474";
/// Largest request body accepted, in bytes (a statement with its parameters); larger is 413.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// Statements running at once over HTTP; more are refused with 503 until one ends.
pub const MAX_CONCURRENT_QUERIES: usize = 64;
/// Explicit transactions open at once; more are refused with 503.
pub const MAX_OPEN_TRANSACTIONS: usize = 256;
/// An explicit transaction untouched this long is rolled back, in milliseconds (Neo4j's
/// default too); each request in it restarts the clock.
pub const TRANSACTION_IDLE_TIMEOUT_MS: u64 = 30_000;
/// Default per-statement time limit, in milliseconds ([`HttpConfig::query_timeout`]).
pub const DEFAULT_QUERY_TIMEOUT_MS: u64 = 60_000;
/// Rows one response of a statement inside an explicit transaction may hold (such results
/// are buffered, not streamed); auto-commit results stream without a row limit.
pub const MAX_TRANSACTION_RESULT_ROWS: usize = 100_000;
/// Encoded result batches buffered between the engine thread and the socket of one
/// streamed response (each batch is one engine batch of rows).
pub const STREAM_BUFFER_BATCHES: usize = 4;
/// Worker threads of the HTTP runtime (engine calls run on its blocking pool).
const RUNTIME_WORKER_THREADS: usize = 2;

/// How the HTTP server runs.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The Bolt server's users (the same `--user` list).
    pub auth: Auth,
    /// The database's own name (besides `neo4j`) in `/db/{db}/…` paths.
    pub database_name: Option<String>,
    /// Extra `Host` header values accepted (besides the bound address and, on loopback,
    /// `localhost` / `127.0.0.1` / `[::1]` with the bound port).
    pub allowed_hosts: Vec<String>,
    /// Origins allowed cross-origin (CORS); empty: only same-origin requests are served.
    pub cors_origins: Vec<String>,
    /// Time limit of one statement.
    pub query_timeout: Duration,
}

impl HttpConfig {
    pub fn new(listen: SocketAddr, auth: Auth) -> HttpConfig {
        HttpConfig {
            listen,
            auth,
            database_name: None,
            allowed_hosts: Vec::new(),
            cors_origins: Vec::new(),
            query_timeout: Duration::from_millis(DEFAULT_QUERY_TIMEOUT_MS),
        }
    }
}

/// What every handler shares.
pub struct AppState {
    pub db: Arc<Database>,
    pub config: HttpConfig,
    /// The address actually bound (port 0 resolved).
    pub local: SocketAddr,
    pub pool: query::ConnectionPool,
    pub transactions: query::Transactions,
    pub running: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    /// Explicit HTTP transactions open now.
    pub fn transactions_open(&self) -> usize {
        self.transactions.len()
    }

    /// Whether `name` in a `/db/{name}/…` path is the served database.
    pub fn serves(&self, name: &str) -> bool {
        name == plexus_bolt::session::DATABASE_NAME
            || self.config.database_name.as_deref() == Some(name)
    }
}

/// The routes, with the guard in front of them.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(console::index))
        .route("/console/{*file}", get(console::asset))
        .route("/health", get(observe::health))
        .route("/metrics", get(observe::metrics))
        .route("/db/{db}/schema", get(observe::schema))
        .route("/db/{db}/query/v2", post(query::auto_commit))
        .route("/db/{db}/query/v2/tx", post(query::begin))
        .route(
            "/db/{db}/query/v2/tx/{id}",
            post(query::in_transaction).delete(query::rollback),
        )
        .route("/db/{db}/query/v2/tx/{id}/commit", post(query::commit))
        .fallback(guard::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::check,
        ))
        .with_state(state)
}

/// A running HTTP server.
pub struct HttpServer {
    local: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HttpServer {
    /// Binds `config.listen` and serves on a thread with its own runtime; returns once bound
    /// (a bind error is returned here, not on the thread).
    pub fn start(db: Arc<Database>, config: HttpConfig) -> std::io::Result<HttpServer> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_WORKER_THREADS)
            .thread_name("plexus-http")
            .enable_all()
            .build()?;
        // Bound with std so that `start` may be called from inside another runtime (tests).
        let listener = std::net::TcpListener::bind(config.listen)?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::new(AppState {
            pool: query::ConnectionPool::new(db.clone()),
            transactions: query::Transactions::default(),
            running: Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_QUERIES)),
            db,
            config,
            local,
        });
        let thread = std::thread::Builder::new()
            .name("plexus-http".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(e) => {
                            eprintln!("http: cannot listen: {e}");
                            return;
                        }
                    };
                    // Without TCP_NODELAY a response written in pieces (headers, then the
                    // streamed body) waits for the client's delayed ACK: ~40 ms per request.
                    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                        let _ = tcp.set_nodelay(true);
                    });
                    tokio::spawn(query::expire_transactions(state.clone()));
                    let app = router(state.clone());
                    let served = axum::serve(listener, app).with_graceful_shutdown(async {
                        let _ = stopped.await;
                    });
                    if let Err(e) = served.await {
                        eprintln!("http: server stopped: {e}");
                    }
                    state.transactions.clear();
                });
                runtime.shutdown_timeout(Duration::from_secs(5));
            })?;
        Ok(HttpServer {
            local,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Stops accepting, lets running requests finish (bounded) and rolls back open
    /// transactions.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}
