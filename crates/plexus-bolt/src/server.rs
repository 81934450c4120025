//! The TCP side: accept connections, run the handshake, frame messages for a [`Session`].
//!
//! Each accepted connection is a tokio task owning one [`Session`] (and so one Plexus
//! `Connection`). Its loop is: read a message (bounded by `max_message_size_bytes`), decode
//! it, let the session handle it, write the responses and flush. Every way a connection can
//! go wrong — a bad handshake, garbage bytes, an oversized message, an unknown message, a
//! client that vanishes mid-stream — ends in the same place: the error is logged to stderr,
//! the session is closed (rolling back its open transaction) and only that connection is
//! dropped. Connections beyond `max_connections` are accepted and closed at once with a log
//! line, so a client sees a closed socket instead of a hang.

use crate::auth::Auth;
use crate::chunk::{FrameError, read_message, write_message};
use crate::handshake::{HANDSHAKE_SIZE_BYTES, HandshakeError, answer, negotiate};
use crate::message::{Response, parse};
use crate::packstream::decode;
use crate::session::{Flow, Session, SessionInfo};
use crate::status;
use plexus::Database;
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Default listen address: loopback only, the Bolt port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7687";
/// Default bound on one request message (a RUN with its parameters), in bytes.
pub const DEFAULT_MAX_MESSAGE_SIZE_BYTES: usize = 16 * 1024 * 1024;
/// Default bound on connections served at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// Time a client has to send the 20 handshake bytes, in milliseconds.
pub const HANDSHAKE_TIMEOUT_MS: u64 = 10_000;
/// Time running engine calls get to finish after a shutdown signal, in milliseconds.
pub const SHUTDOWN_GRACE_MS: u64 = 5_000;
/// Worker threads of the async runtime. A session's engine call blocks its worker in place
/// (`block_in_place`, see `session`); the runtime then moves that worker's other tasks to a
/// fresh thread, so two workers suffice however many sessions run statements at once.
const RUNTIME_WORKER_THREADS: usize = 2;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where to listen; port 0 picks a free port (the real one is printed).
    pub listen: SocketAddr,
    pub auth: Auth,
    pub max_connections: usize,
    pub max_message_size_bytes: usize,
}

impl ServerConfig {
    /// The defaults with the given listen address and authentication.
    pub fn new(listen: SocketAddr, auth: Auth) -> ServerConfig {
        ServerConfig {
            listen,
            auth,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_message_size_bytes: DEFAULT_MAX_MESSAGE_SIZE_BYTES,
        }
    }
}

/// Why the server could not run.
#[derive(Debug)]
pub enum ServeError {
    /// The async runtime could not start.
    Runtime(io::Error),
    /// The listen address could not be bound.
    Bind(SocketAddr, io::Error),
    /// Installing the signal handlers failed.
    Signal(io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Runtime(e) => write!(f, "cannot start the runtime: {e}"),
            ServeError::Bind(addr, e) => write!(f, "cannot listen on {addr}: {e}"),
            ServeError::Signal(e) => write!(f, "cannot install signal handlers: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Serves Bolt on `config.listen` until ctrl-c or SIGTERM. Prints
/// `Bolt server listening on bolt://ADDR` on stdout once it accepts connections.
pub fn serve(db: Arc<Database>, config: ServerConfig) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(RUNTIME_WORKER_THREADS)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = runtime.block_on(async {
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|e| ServeError::Bind(config.listen, e))?;
        let local = listener
            .local_addr()
            .map_err(|e| ServeError::Bind(config.listen, e))?;
        let shutdown = shutdown_signal()?;
        println!("Bolt server listening on bolt://{local}");
        let _ = io::stdout().flush();
        tokio::select! {
            () = accept_loop(listener, db, config) => {}
            () = shutdown => eprintln!("bolt: shutting down"),
        }
        Ok(())
    });
    runtime.shutdown_timeout(Duration::from_millis(SHUTDOWN_GRACE_MS));
    result
}

/// Resolves on ctrl-c or (on Unix) SIGTERM.
fn shutdown_signal() -> Result<impl Future<Output = ()>, ServeError> {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(ServeError::Signal)?;
    Ok(async move {
        #[cfg(unix)]
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// Accepts connections forever, one task each.
pub async fn accept_loop(listener: TcpListener, db: Arc<Database>, config: ServerConfig) {
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let auth = Arc::new(config.auth);
    let next_id = AtomicU64::new(1);
    loop {
        let (socket, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                eprintln!("bolt: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            eprintln!(
                "bolt[{id}]: refusing {peer}: {} connections already open",
                config.max_connections
            );
            continue;
        };
        let advertised_address = socket
            .local_addr()
            .map_or_else(|_| String::new(), |a| a.to_string());
        let (db, auth) = (db.clone(), auth.clone());
        let max_message_size_bytes = config.max_message_size_bytes;
        tokio::spawn(async move {
            let _slot = slot;
            let _ = socket.set_nodelay(true);
            let limits = ConnectionLimits {
                max_message_size_bytes,
            };
            let info = |version| SessionInfo {
                version,
                connection_id: id,
                advertised_address,
                auth,
            };
            if let Err(e) = serve_connection(socket, &db, info, limits).await {
                eprintln!("bolt[{id}]: {peer}: {e}; connection closed");
            }
        });
    }
}

/// Per-connection bounds.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    pub max_message_size_bytes: usize,
}

/// Why a connection ended abnormally.
#[derive(Debug)]
pub enum ConnectionError {
    Io(io::Error),
    Handshake(String),
    Frame(FrameError),
    Protocol(String),
}

impl std::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionError::Io(e) => write!(f, "i/o error: {e}"),
            ConnectionError::Handshake(e) => write!(f, "handshake failed: {e}"),
            ConnectionError::Frame(e) => write!(f, "{e}"),
            ConnectionError::Protocol(e) => write!(f, "protocol error: {e}"),
        }
    }
}

impl From<io::Error> for ConnectionError {
    fn from(e: io::Error) -> Self {
        ConnectionError::Io(e)
    }
}

/// Serves one connection from handshake to close; the session is closed (its transaction
/// rolled back) however the connection ends.
pub async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(
    socket: S,
    db: &Database,
    info: impl FnOnce(crate::handshake::Version) -> SessionInfo,
    limits: ConnectionLimits,
) -> Result<(), ConnectionError> {
    let (reader, writer) = tokio::io::split(socket);
    let mut reader = BufReader::new(reader);
    let mut writer = BufWriter::new(writer);

    let mut hello = [0u8; HANDSHAKE_SIZE_BYTES];
    let timeout = Duration::from_millis(HANDSHAKE_TIMEOUT_MS);
    match tokio::time::timeout(timeout, reader.read_exact(&mut hello)).await {
        Ok(read) => read?,
        Err(_) => {
            return Err(ConnectionError::Handshake(format!(
                "no handshake within {HANDSHAKE_TIMEOUT_MS} ms"
            )));
        }
    };
    let version = negotiate(&hello);
    // A Bolt client without a common version is told so; anything else is just dropped.
    if !matches!(version, Err(HandshakeError::BadMagic(_))) {
        writer
            .write_all(&answer(version.as_ref().ok().copied()))
            .await?;
        writer.flush().await?;
    }
    let version = version.map_err(|e| ConnectionError::Handshake(e.to_string()))?;

    let mut session = Session::new(info(version), db.connect());
    let outcome = message_loop(&mut session, &mut reader, &mut writer, limits).await;
    session.close().await;
    outcome
}

async fn message_loop<R, W>(
    session: &mut Session,
    reader: &mut BufReader<R>,
    writer: &mut W,
    limits: ConnectionLimits,
) -> Result<(), ConnectionError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut responses = Vec::new();
    loop {
        let bytes = match read_message(reader, limits.max_message_size_bytes).await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(()),
            Err(e) => {
                if let FrameError::TooLarge { .. } = e {
                    let _ = send(writer, vec![failure(status::REQUEST_INVALID, &e)]).await;
                }
                return Err(ConnectionError::Frame(e));
            }
        };
        let request = match decode(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|pack| parse(pack).map_err(|e| e.to_string()))
        {
            Ok(request) => request,
            Err(e) => {
                let _ = send(writer, vec![failure(status::REQUEST_INVALID, &e)]).await;
                return Err(ConnectionError::Protocol(e));
            }
        };
        let flow = session.handle(request, &mut responses).await;
        // A client that pipelines (RUN + PULL, BEGIN + RUN) gets the answers to all the
        // requests already read in one write: flush only when none is waiting.
        write_responses(writer, responses.drain(..)).await?;
        if reader.buffer().is_empty() || flow == Flow::Close {
            writer.flush().await?;
        }
        if flow == Flow::Close {
            return Ok(());
        }
    }
}

fn failure(code: &'static str, message: &impl ToString) -> Response {
    Response::Failure {
        code,
        message: message.to_string(),
    }
}

/// Frames `responses` and writes them in one flush.
async fn send<W: AsyncWrite + Unpin>(
    writer: &mut W,
    responses: impl IntoIterator<Item = Response>,
) -> io::Result<()> {
    write_responses(writer, responses).await?;
    writer.flush().await
}

/// Frames `responses` into the writer's buffer (not flushed).
async fn write_responses<W: AsyncWrite + Unpin>(
    writer: &mut W,
    responses: impl IntoIterator<Item = Response>,
) -> io::Result<()> {
    let mut wire = Vec::new();
    let mut message = Vec::new();
    for response in responses {
        message.clear();
        response.encode(&mut message);
        write_message(&message, &mut wire);
    }
    writer.write_all(&wire).await
}
