//! The Bolt side of the bank benchmark: an in-process server and a minimal blocking client.
//!
//! SERVER
//! ======
//! [`Server::start`] binds `127.0.0.1:0` (loopback only, a free port) on its own tokio runtime
//! and runs `plexus_bolt::server::accept_loop` there, exactly what `plexus serve` runs after
//! binding, without authentication. Dropping the server shuts the runtime down.
//!
//! CLIENT
//! ======
//! No Rust Bolt driver is in the tree, so [`Client`] speaks the protocol itself on a blocking
//! `TcpStream`, reusing the server crate's PackStream encoder/decoder and chunk writer. It
//! does what a driver's explicit transaction does and nothing more:
//!
//! ```text
//!   connect   handshake (offers 5.4 down to 5.0), HELLO, LOGON (5.1+) with scheme "none"
//!   begin     nothing yet: BEGIN {tx_metadata: {isolation}} goes out with the first RUN
//!   query     [BEGIN,] RUN query params {}, PULL {n: -1}      one round trip
//!   commit    COMMIT                                           one round trip
//!   abandon   RESET after a FAILURE, ROLLBACK otherwise
//! ```
//!
//! Pipelining BEGIN with the first RUN is what the official drivers do, so a transfer costs
//! three round trips (BEGIN+read, write, COMMIT), against four calls on the embedded path. A
//! FAILURE whose code is a `Neo.TransientError` (a conflict: `...Transaction.Outdated`) is
//! retryable; every other one is fatal to the benchmark.

use super::{Failure, Level, Session};
use plexus::Database;
use plexus_bolt::chunk::write_message;
use plexus_bolt::handshake::MAGIC;
use plexus_bolt::packstream::{Pack, decode, encode};
use plexus_bolt::{Auth, ServerConfig};
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// Worker threads of the server's runtime (as in `plexus_bolt::serve`).
const SERVER_WORKER_THREADS: usize = 2;
/// Time the server's runtime gets to finish its tasks at shutdown, in milliseconds.
const SERVER_SHUTDOWN_MS: u64 = 2_000;
/// Largest reply the client accepts, in bytes (the benchmark's replies are tiny).
const MAX_REPLY_BYTES: usize = 1 << 20;

/// An in-process Bolt server on a loopback port.
pub struct Server {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Server {
    pub fn start(db: Arc<Database>) -> Result<Server, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(SERVER_WORKER_THREADS)
            .enable_all()
            .build()
            .map_err(|e| format!("bolt runtime: {e}"))?;
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let config = ServerConfig::new(addr, Auth::None);
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?
        };
        runtime.spawn(plexus_bolt::server::accept_loop(listener, db, config));
        Ok(Server {
            addr,
            runtime: Some(runtime),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_millis(SERVER_SHUTDOWN_MS));
        }
    }
}

/// What the server answered to one request.
enum Reply {
    Success,
    Failure { code: String, message: String },
    Ignored,
}

/// One Bolt connection.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// The BEGIN to send with the next RUN.
    pending_begin: Option<Level>,
    in_tx: bool,
    /// A FAILURE was answered; only RESET is accepted until it is sent.
    failed: bool,
}

fn map(entries: Vec<(&str, Pack)>) -> Pack {
    Pack::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn io_error(e: std::io::Error) -> Failure {
    Failure::Fatal(format!("bolt connection: {e}"))
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Result<Client, Failure> {
        let stream = TcpStream::connect(addr).map_err(io_error)?;
        stream.set_nodelay(true).map_err(io_error)?;
        let writer = stream.try_clone().map_err(io_error)?;
        let mut client = Client {
            reader: BufReader::new(stream),
            writer,
            pending_begin: None,
            in_tx: false,
            failed: false,
        };
        let mut hello = MAGIC.to_vec();
        hello.extend_from_slice(&[0, 4, 4, 5]); // 5.4 and the 4 minors below it
        hello.extend_from_slice(&[0; 12]);
        client.writer.write_all(&hello).map_err(io_error)?;
        let mut version = [0u8; 4];
        client.reader.read_exact(&mut version).map_err(io_error)?;
        let (minor, major) = (version[2], version[3]);
        if major != 5 {
            return Err(Failure::Fatal(format!("server chose Bolt {major}.{minor}")));
        }
        let mut requests = vec![Pack::structure(
            0x01,
            vec![map(vec![("user_agent", Pack::string("plexus-bench"))])],
        )];
        if minor >= 1 {
            let logon = map(vec![("scheme", Pack::string("none"))]);
            requests.push(Pack::structure(0x6A, vec![logon]));
        }
        for (reply, _) in client.exchange(&requests)? {
            client.expect_success(reply)?;
        }
        Ok(client)
    }

    /// Sends `requests` in one write and reads one reply (with its records) for each.
    fn exchange(&mut self, requests: &[Pack]) -> Result<Vec<(Reply, Vec<Pack>)>, Failure> {
        let mut wire = Vec::new();
        let mut message = Vec::new();
        for request in requests {
            message.clear();
            encode(request, &mut message);
            write_message(&message, &mut wire);
        }
        self.writer.write_all(&wire).map_err(io_error)?;
        let mut replies = Vec::with_capacity(requests.len());
        for _ in requests {
            let mut records = Vec::new();
            loop {
                let bytes = self.read_message()?;
                let Pack::Struct(s) = decode(&bytes).map_err(|e| Failure::Fatal(e.to_string()))?
                else {
                    return Err(Failure::Fatal("reply is not a structure".into()));
                };
                let mut fields = s.fields.into_iter();
                let reply = match s.tag {
                    0x71 => {
                        records.push(fields.next().unwrap_or(Pack::Null));
                        continue;
                    }
                    0x70 => Reply::Success,
                    0x7E => Reply::Ignored,
                    0x7F => {
                        let metadata = fields.next().unwrap_or(Pack::Null);
                        let text = |key| {
                            metadata
                                .get(key)
                                .and_then(Pack::as_str)
                                .unwrap_or_default()
                                .to_owned()
                        };
                        Reply::Failure {
                            code: text("code"),
                            message: text("message"),
                        }
                    }
                    other => return Err(Failure::Fatal(format!("unknown reply 0x{other:02X}"))),
                };
                replies.push((reply, records));
                break;
            }
        }
        Ok(replies)
    }

    fn read_message(&mut self) -> Result<Vec<u8>, Failure> {
        let mut message = Vec::new();
        loop {
            let mut size = [0u8; 2];
            self.reader.read_exact(&mut size).map_err(io_error)?;
            let size = u16::from_be_bytes(size) as usize;
            if size == 0 {
                if message.is_empty() {
                    continue; // NOOP
                }
                return Ok(message);
            }
            let start = message.len();
            if start + size > MAX_REPLY_BYTES {
                return Err(Failure::Fatal("reply too large".into()));
            }
            message.resize(start + size, 0);
            self.reader
                .read_exact(&mut message[start..])
                .map_err(io_error)?;
        }
    }

    fn expect_success(&mut self, reply: Reply) -> Result<(), Failure> {
        match reply {
            Reply::Success => Ok(()),
            Reply::Ignored => {
                self.failed = true;
                Err(Failure::Fatal("request ignored".into()))
            }
            Reply::Failure { code, message } => {
                self.failed = true;
                self.in_tx = false;
                let text = format!("{code}: {message}");
                Err(if code.starts_with("Neo.TransientError.") {
                    Failure::Retryable(text)
                } else {
                    Failure::Fatal(text)
                })
            }
        }
    }
}

impl Session for Client {
    fn begin(&mut self, level: Level) -> Result<(), Failure> {
        self.pending_begin = Some(level);
        self.in_tx = true;
        Ok(())
    }

    fn query(&mut self, query: &str, params: &[(&str, i64)]) -> Result<Vec<Vec<i64>>, Failure> {
        let mut requests = Vec::with_capacity(3);
        if let Some(level) = self.pending_begin.take() {
            let metadata = map(vec![("isolation", Pack::string(level.name()))]);
            requests.push(Pack::structure(
                0x11,
                vec![map(vec![("tx_metadata", metadata)])],
            ));
        }
        let params = params.iter().map(|&(k, v)| (k, Pack::Int(v))).collect();
        requests.push(Pack::structure(
            0x10,
            vec![Pack::string(query), map(params), map(vec![])],
        ));
        requests.push(Pack::structure(0x3F, vec![map(vec![("n", Pack::Int(-1))])]));
        let mut rows = Vec::new();
        for (reply, records) in self.exchange(&requests)? {
            self.expect_success(reply)?;
            for record in records {
                let Pack::List(values) = record else {
                    return Err(Failure::Fatal("RECORD without a list".into()));
                };
                let row = values.iter().map(Pack::as_int).collect::<Option<Vec<_>>>();
                rows.push(row.ok_or_else(|| Failure::Fatal("non-integer value".into()))?);
            }
        }
        Ok(rows)
    }

    fn commit(&mut self) -> Result<(), Failure> {
        self.in_tx = false;
        if self.pending_begin.take().is_some() {
            return Ok(()); // nothing was sent
        }
        let replies = self.exchange(&[Pack::structure(0x12, vec![])])?;
        for (reply, _) in replies {
            self.expect_success(reply)?;
        }
        Ok(())
    }

    fn abandon(&mut self) -> Result<(), Failure> {
        self.pending_begin = None;
        let request = if self.failed {
            Pack::structure(0x0F, vec![]) // RESET
        } else if self.in_tx {
            Pack::structure(0x13, vec![]) // ROLLBACK
        } else {
            return Ok(());
        };
        self.failed = false;
        self.in_tx = false;
        for (reply, _) in self.exchange(&[request])? {
            self.expect_success(reply)?;
        }
        Ok(())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut wire = Vec::new();
        let mut goodbye = Vec::new();
        encode(&Pack::structure(0x02, vec![]), &mut goodbye);
        write_message(&goodbye, &mut wire);
        let _ = self.writer.write_all(&wire);
    }
}
