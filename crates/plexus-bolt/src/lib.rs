//! Plexus Bolt server: lets Neo4j drivers (the official Python, Java, JavaScript, Go, .NET
//! drivers, cypher-shell, ...) talk to a Plexus database.
//!
//! THE PIPELINE
//! ============
//! ```text
//!   TCP ─▶ handshake ─▶ chunk framing ─▶ PackStream ─▶ Request ─▶ Session ─▶ plexus::Connection
//!          (version)    (max message     (values,      (HELLO,    (state      (on a blocking
//!                        size)            structs)      RUN, ...)  machine)    thread)
//!   TCP ◀─ chunk framing ◀─ PackStream ◀─ Response (SUCCESS / RECORD / IGNORED / FAILURE) ◀─┘
//! ```
//! One module per stage: [`handshake`] picks the protocol version, [`chunk`] cuts the byte
//! stream into messages, [`packstream`] decodes and encodes values without knowing Cypher,
//! [`message`] turns structures into requests, [`values`] maps Cypher values (nodes, paths,
//! temporals) to Bolt structures and back, [`session`] is the per-connection state machine,
//! [`status`] names errors with Neo4j status codes, and [`server`] runs it all on tokio.
//!
//! WHAT IS SUPPORTED
//! =================
//! Bolt 5.0 to 5.4: HELLO, LOGON / LOGOFF, RUN, PULL, DISCARD, BEGIN, COMMIT, ROLLBACK,
//! RESET, GOODBYE, ROUTE (a single-server table) and TELEMETRY (acknowledged). Basic
//! authentication against users given at start, or none. Every Cypher value Plexus has;
//! Plexus has no points or byte arrays, so those are refused as parameters. See
//! `docs/bolt.md` for the limits and what is not supported.
//!
//! ROBUSTNESS
//! ==========
//! Input from the network is never trusted: decoding never panics (property-tested on random
//! bytes), every buffer has a bound, and a misbehaving client only loses its own connection,
//! whose open transaction is rolled back.

pub mod auth;
pub mod chunk;
pub mod handshake;
pub mod message;
pub mod packstream;
pub mod server;
pub mod session;
pub mod status;
pub mod values;

pub use auth::{Auth, User};
pub use server::{DEFAULT_LISTEN, ServeError, ServerConfig, serve};
