//! The PostgreSQL side of the mirror: publication, replication slot, initial copy and the
//! `pgoutput` stream, decoded into [`SourceTxn`](crate::change::SourceTxn)s.
//!
//! WHAT
//! ====
//! The mirror follows a set of tables of one PostgreSQL database. PostgreSQL offers exactly
//! the two tools needed: a *publication* (which tables' changes logical decoding emits) and a
//! *logical replication slot* (a durable cursor in the WAL that keeps WAL alive until the
//! consumer confirms it). This module drives them with two kinds of connections:
//!
//! - ordinary SQL sessions (`tokio-postgres`) for the catalog (publication, slot position,
//!   dropping) and for the initial copy (`COPY (SELECT ...) TO STDOUT`);
//! - a replication session (`pgwire-replication`, `replication=database`, SCRAM) that creates
//!   the slot and streams `pgoutput` protocol 1. The transport reads only the Begin and
//!   Commit boundaries and hands everything else over as raw XLogData; the decoding
//!   ([`pgoutput`]) and the assembly into transactions ([`stream`]) are ours.
//!
//! ```text
//!   ensure_publication ──> create_slot_with_snapshot ──┬──> copy_table × N (snapshot S)
//!                           (slot at consistent point C,│
//!                            snapshot S exported,       └──> start_stream(from = C, session)
//!                            session kept idle)                 └─> next_txn / confirm ...
//! ```
//!
//! POSITIONS
//! =========
//! Every position is an [`Lsn`](crate::change::Lsn). A transaction carries `commit_lsn` (where
//! its commit record starts) and `end_lsn` (where it ends). The position that means "everything
//! up to here is applied" is an `end_lsn` (or the slot's consistent point, before any
//! transaction): restarting from position X delivers exactly the transactions whose `end_lsn`
//! is greater than X. PostgreSQL may resend transactions from the slot's confirmed position,
//! which can lag what the caller applied; the stream skips every transaction that ends at or
//! before the `from` it was started with, and never delivers one twice. For example:
//!
//! ```text
//!   WAL:  C=0/1000 ··· T1 commit 0/1500, end 0/1530 ··· T2 commit 0/1600, end 0/1630 ···
//!   the caller applies T1 and stores 0/1530 with it, then calls confirm(0/1530);
//!   it crashes before applying T2; on restart start_stream(from = 0/1530) delivers T2
//!   (and PostgreSQL, even if its slot still says 0/1000, cannot make it deliver T1 again).
//! ```
//!
//! SNAPSHOT HAND-OFF
//! =================
//! `CREATE_REPLICATION_SLOT ... LOGICAL pgoutput EXPORT_SNAPSHOT` returns a consistent point
//! C and a snapshot name S with one guarantee: a transaction is visible in S if and only if it
//! committed before C, and the slot decodes exactly the transactions that commit at or after
//! C. So copying every table under S and then streaming from C sees each committed row change
//! exactly once, however busy the writers are meanwhile. S stays importable only while the
//! exporting session is idle, so [`ExportedSnapshot`] keeps that session open (untouched) and
//! [`start_stream`] reuses it once the copies are done; several [`copy_table`] calls (one
//! connection each, possibly concurrent) import S with `SET TRANSACTION SNAPSHOT`.
//!
//! WHAT IS CONFIRMED WHEN
//! ======================
//! Exactly-once is the caller's job: it stores the `end_lsn` of the last transaction it applied
//! with its own commit, and passes it as `from` on restart. The stream reports to PostgreSQL
//! (standby status updates: write = flush = apply) only positions the caller passed to
//! [`ReplicationStream::confirm`] or as `from`, so PostgreSQL never discards WAL the caller
//! still needs. Updates go out when PostgreSQL asks for one (keepalive) and at least every
//! [`STATUS_INTERVAL_MS`]. One refinement keeps an idle, fully confirmed stream from pinning
//! WAL and from blocking a server shutdown (a walsender waits for its client to confirm
//! everything it sent before it exits): when no transaction is open and every transaction
//! delivered has been confirmed, a keepalive's WAL position is confirmed too. Nothing lies
//! between the last delivered transaction and that position, so restarting from either
//! delivers the same transactions. The converse is an obligation on the caller: while a
//! delivered transaction stays unconfirmed, a clean PostgreSQL shutdown (`pg_ctl stop -m
//! fast`) waits for this client, so a caller that stops applying (say, on a schema change it
//! cannot follow) must close or drop its stream rather than leave it open and unconfirmed.
//! Keepalives that ask for a reply are answered by the transport's own task with the last
//! reported position, whether or not the caller is inside `next_txn`; the keepalive position
//! itself is taken into account when `next_txn` reaches it in stream order.
//!
//! SESSION SETTINGS
//! ================
//! `pgoutput` and `COPY` both send values in their text output format, which depends on
//! session settings (dates and timestamps on `DateStyle` and `TimeZone`, floats on
//! `extra_float_digits`, intervals on `IntervalStyle`, bytea on `bytea_output`). Both kinds
//! of session get the same [`SESSION_SETTINGS`] (the replication session through the `options`
//! startup parameter, the copy session with `SET LOCAL`), so a value reads the same whether it
//! arrived by copy or by stream.
//!
//! FAILURES
//! ========
//! Errors are [`SourceError`]s; [`SourceError::is_transient`] says whether reconnecting can
//! help (a lost connection, a server shutting down or starting, the slot still held by a
//! session that is exiting) or not (bad credentials, a missing table, malformed data).
//! Reconnecting is the caller's loop, paced by [`Backoff`], from its last applied position.
//! Connection strings hold passwords: the password is cut out of every error text, and
//! [`SourceConfig`]'s `Debug` shows the connection without it.
//!
//! NOT DONE
//! ========
//! TLS (the mirror follows a server on a trusted network or loopback), `pgoutput` protocol 2+
//! (streaming of in-progress transactions), binary tuple format, and origins (Origin and Type
//! messages are decoded but carry nothing the apply side uses, so the stream drops them).

pub mod catalog;
pub mod copy_text;
pub mod pgoutput;
pub mod snapshot;
pub mod stream;

use std::error::Error as StdError;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub use catalog::{drop_slot_and_publication, ensure_publication, slot_position};
pub use snapshot::{ExportedSnapshot, ReplicationSession, copy_table, create_slot_with_snapshot};
pub use stream::{ReplicationStream, start_stream};

/// Session settings that fix the text output of values, for copy and stream alike.
pub const SESSION_SETTINGS: [(&str, &str); 5] = [
    ("DateStyle", "ISO"),
    ("TimeZone", "UTC"),
    ("IntervalStyle", "postgres"),
    ("extra_float_digits", "1"),
    ("bytea_output", "hex"),
];

/// How often the stream reports the confirmed position at the latest.
pub const STATUS_INTERVAL_MS: u64 = 1_000;
/// First reconnect delay of [`Backoff`].
pub const RECONNECT_BACKOFF_INITIAL_MS: u64 = 50;
/// Largest reconnect delay of [`Backoff`].
pub const RECONNECT_BACKOFF_MAX_MS: u64 = 5_000;
/// Longest identifier PostgreSQL keeps (`NAMEDATALEN - 1`).
const MAX_IDENTIFIER_BYTES: usize = 63;

/// Where and what to follow.
#[derive(Clone)]
pub struct SourceConfig {
    /// A `postgres://` URL or a `key=value` string (as `tokio-postgres` reads them); may hold
    /// a password.
    pub conninfo: String,
    /// Replication slot name: lower-case letters, digits and underscores.
    pub slot: String,
    pub publication: String,
    /// The published tables, as (schema, table).
    pub tables: Vec<(String, String)>,
}

impl fmt::Debug for SourceConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let conninfo = match tokio_postgres::Config::from_str(&self.conninfo) {
            Ok(parsed) => Endpoint::describe(&parsed),
            Err(_) => "<unparsable, not shown>".to_owned(),
        };
        f.debug_struct("SourceConfig")
            .field("conninfo", &conninfo)
            .field("slot", &self.slot)
            .field("publication", &self.publication)
            .field("tables", &self.tables)
            .finish()
    }
}

/// A parsed connection: what both kinds of session need.
pub(crate) struct Endpoint {
    pub(crate) pg: tokio_postgres::Config,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: String,
    pub(crate) database: String,
    pub(crate) redactor: Redactor,
}

impl Endpoint {
    /// The first host: a name or address, or a Unix socket directory (starts with `/`).
    fn host(pg: &tokio_postgres::Config) -> String {
        match pg.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
            #[cfg(unix)]
            Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
            None => "localhost".to_owned(),
        }
    }

    /// The connection without its password, for `Debug`.
    fn describe(pg: &tokio_postgres::Config) -> String {
        format!(
            "host={} port={} user={} password={} dbname={}",
            Endpoint::host(pg),
            pg.get_ports().first().copied().unwrap_or(5432),
            pg.get_user().unwrap_or(""),
            if pg.get_password().is_some() {
                "<hidden>"
            } else {
                "<none>"
            },
            pg.get_dbname().or(pg.get_user()).unwrap_or("")
        )
    }
}

impl SourceConfig {
    /// Checks the names and parses the connection string.
    pub(crate) fn endpoint(&self) -> Result<Endpoint, SourceError> {
        validate_slot_name(&self.slot)?;
        if self.publication.is_empty()
            || self.publication.len() > MAX_IDENTIFIER_BYTES
            || self.publication.contains('\0')
        {
            return Err(SourceError::Config(format!(
                "publication name {:?} must be 1 to {MAX_IDENTIFIER_BYTES} bytes without NUL",
                self.publication
            )));
        }
        let mut pg = tokio_postgres::Config::from_str(&self.conninfo).map_err(|e| {
            // (tokio-postgres names the offending option, never the string itself)
            SourceError::Config(format!("invalid connection string: {e}"))
        })?;
        let password = pg
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .unwrap_or_default();
        let redactor = Redactor {
            password: (!password.is_empty()).then(|| password.clone()),
        };
        let host = Endpoint::host(&pg);
        let port = pg.get_ports().first().copied().unwrap_or(5432);
        let user = pg
            .get_user()
            .ok_or_else(|| SourceError::Config("the connection string names no user".to_owned()))?
            .to_owned();
        let database = pg.get_dbname().unwrap_or(&user).to_owned();
        pg.application_name("plexus-mirror");
        Ok(Endpoint {
            pg,
            host,
            port,
            user,
            password,
            database,
            redactor,
        })
    }
}

fn validate_slot_name(slot: &str) -> Result<(), SourceError> {
    let valid = !slot.is_empty()
        && slot.len() <= MAX_IDENTIFIER_BYTES
        && slot
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(SourceError::Config(format!(
            "replication slot name {slot:?} must be 1 to {MAX_IDENTIFIER_BYTES} lower-case \
             letters, digits or underscores"
        )))
    }
}

/// `name` as a quoted SQL identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as a quoted SQL string literal.
pub(crate) fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Cuts the connection's password out of texts that leave this module.
#[derive(Clone, Debug)]
pub(crate) struct Redactor {
    password: Option<String>,
}

impl Redactor {
    pub(crate) fn clean(&self, text: impl fmt::Display) -> String {
        let text = text.to_string();
        match &self.password {
            Some(password) => text.replace(password.as_str(), "<password>"),
            None => text,
        }
    }

    /// An error from an ordinary SQL session, during `context`.
    pub(crate) fn sql(&self, context: &str, e: tokio_postgres::Error) -> SourceError {
        if let Some(db) = e.as_db_error() {
            let code = db.code().code().to_owned();
            let mut message = format!("{}: {}", db.severity(), db.message());
            if let Some(detail) = db.detail() {
                message.push_str(&format!(" ({detail})"));
            }
            return SourceError::Sql {
                context: context.to_owned(),
                message: self.clean(message),
                transient: is_transient_sqlstate(&code),
                sqlstate: Some(code),
            };
        }
        let io = e
            .source()
            .is_some_and(|source| source.downcast_ref::<std::io::Error>().is_some());
        if e.is_closed() || io {
            return SourceError::Disconnected(self.clean(format!("{context}: {e}")));
        }
        SourceError::Sql {
            context: context.to_owned(),
            message: self.clean(&e),
            sqlstate: None,
            transient: false,
        }
    }

    /// An error from the replication session, during `context`.
    pub(crate) fn replication(
        &self,
        context: &str,
        e: pgwire_replication::PgWireError,
    ) -> SourceError {
        use pgwire_replication::PgWireError as W;
        match e {
            W::Io(_) | W::Task(_) => {
                SourceError::Disconnected(self.clean(format!("{context}: {e}")))
            }
            W::Auth(_) | W::Tls(_) => SourceError::Connect {
                message: self.clean(format!("{context}: {e}")),
                transient: false,
            },
            W::Server(ref text) => {
                let sqlstate = text
                    .rsplit_once("(SQLSTATE ")
                    .and_then(|(_, tail)| tail.get(..5))
                    .map(str::to_owned);
                SourceError::Sql {
                    context: context.to_owned(),
                    message: self.clean(text),
                    transient: sqlstate.as_deref().is_some_and(is_transient_sqlstate),
                    sqlstate,
                }
            }
            _ => SourceError::Protocol(self.clean(format!("{context}: {e}"))),
        }
    }
}

/// Server errors after which the same request can succeed later.
fn is_transient_sqlstate(code: &str) -> bool {
    code.starts_with("08") // connection exception
        || matches!(
            code,
            "57P01" // admin_shutdown
            | "57P02" // crash_shutdown
            | "57P03" // cannot_connect_now (starting up, shutting down)
            | "53300" // too_many_connections
            | "55006" // object_in_use: the slot is still held by an exiting session
            | "40001" // serialization_failure
            | "40P01" // deadlock_detected
        )
}

/// Why a source operation failed. Texts never contain the connection's password.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("mirror source configuration: {0}")]
    Config(String),
    #[error("cannot connect to PostgreSQL: {message}")]
    Connect { message: String, transient: bool },
    #[error("PostgreSQL {context}: {message}")]
    Sql {
        context: String,
        message: String,
        sqlstate: Option<String>,
        transient: bool,
    },
    #[error("PostgreSQL replication protocol: {0}")]
    Protocol(String),
    #[error(transparent)]
    Decode(#[from] pgoutput::DecodeError),
    #[error(transparent)]
    CopyText(#[from] copy_text::CopyTextError),
    #[error("connection to PostgreSQL lost: {0}")]
    Disconnected(String),
    #[error("the copied-row consumer failed: {0}")]
    Consumer(Box<dyn StdError + Send + Sync>),
}

impl SourceError {
    /// Whether reconnecting (after a [`Backoff`] delay) and retrying can succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            SourceError::Connect { transient, .. } | SourceError::Sql { transient, .. } => {
                *transient
            }
            SourceError::Disconnected(_) => true,
            SourceError::Config(_)
            | SourceError::Protocol(_)
            | SourceError::Decode(_)
            | SourceError::CopyText(_)
            | SourceError::Consumer(_) => false,
        }
    }
}

/// Bounded exponential backoff between reconnect attempts: [`RECONNECT_BACKOFF_INITIAL_MS`],
/// doubling up to [`RECONNECT_BACKOFF_MAX_MS`]; [`Backoff::reset`] after a success. No
/// jitter: one mirror follows one server.
#[derive(Clone, Debug)]
pub struct Backoff {
    next_delay_ms: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    pub fn new() -> Backoff {
        Backoff {
            next_delay_ms: RECONNECT_BACKOFF_INITIAL_MS,
        }
    }

    /// The delay before the next attempt (and advance the sequence).
    pub fn next_delay(&mut self) -> Duration {
        let delay_ms = self.next_delay_ms;
        self.next_delay_ms = delay_ms.saturating_mul(2).min(RECONNECT_BACKOFF_MAX_MS);
        debug_assert!(delay_ms <= RECONNECT_BACKOFF_MAX_MS);
        Duration::from_millis(delay_ms)
    }

    /// Sleeps for [`Backoff::next_delay`].
    pub async fn wait(&mut self) {
        tokio::time::sleep(self.next_delay()).await;
    }

    /// Starts the sequence over (after a successful reconnect).
    pub fn reset(&mut self) {
        self.next_delay_ms = RECONNECT_BACKOFF_INITIAL_MS;
    }
}

/// Opens an ordinary SQL session; its connection runs on a spawned task.
pub(crate) async fn connect_sql(
    endpoint: &Endpoint,
) -> Result<tokio_postgres::Client, SourceError> {
    let (client, connection) = endpoint
        .pg
        .connect(tokio_postgres::NoTls)
        .await
        .map_err(|e| connect_error(&endpoint.redactor, e))?;
    // The connection's own error, if any, also fails the client's next request, which is
    // where it is reported.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

fn connect_error(redactor: &Redactor, e: tokio_postgres::Error) -> SourceError {
    match redactor.sql("connect", e) {
        SourceError::Sql {
            message, transient, ..
        } => SourceError::Connect { message, transient },
        SourceError::Disconnected(message) => SourceError::Connect {
            message,
            transient: true,
        },
        other => other,
    }
}

/// Converts between the two crates' LSN types.
pub(crate) fn to_wire_lsn(lsn: crate::change::Lsn) -> pgwire_replication::Lsn {
    pgwire_replication::Lsn::from_u64(lsn.0)
}

pub(crate) fn from_wire_lsn(lsn: pgwire_replication::Lsn) -> crate::change::Lsn {
    crate::change::Lsn(lsn.as_u64())
}

/// The replication session's settings: `replication=database`, no TLS, SCRAM, the
/// [`SESSION_SETTINGS`], status updates every [`STATUS_INTERVAL_MS`].
pub(crate) fn replication_config(
    config: &SourceConfig,
    endpoint: &Endpoint,
    start: crate::change::Lsn,
) -> pgwire_replication::ReplicationConfig {
    let options = SESSION_SETTINGS
        .iter()
        .map(|(name, value)| format!("-c {name}={value}"))
        .collect::<Vec<_>>()
        .join(" ");
    pgwire_replication::ReplicationConfig::new(
        endpoint.host.clone(),
        endpoint.user.clone(),
        endpoint.password.clone(),
        endpoint.database.clone(),
        config.slot.clone(),
        // publication_names is parsed as a list of identifiers: quote to keep case and commas
        quote_ident(&config.publication),
    )
    .with_port(endpoint.port)
    .with_tls(pgwire_replication::TlsConfig::disabled())
    .with_start_lsn(to_wire_lsn(start))
    .with_options(options)
    .with_status_interval(Duration::from_millis(STATUS_INTERVAL_MS))
    .with_wakeup_interval(Duration::from_millis(STATUS_INTERVAL_MS))
    .with_application_name("plexus-mirror")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_bound_and_resets() {
        let mut backoff = Backoff::new();
        let delays: Vec<u64> = (0..10)
            .map(|_| backoff.next_delay().as_millis() as u64)
            .collect();
        assert_eq!(
            delays,
            [50, 100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]
        );
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(50));
    }

    #[test]
    fn debug_output_hides_the_password() {
        let config = SourceConfig {
            conninfo: "postgres://u:s3cretpw@127.0.0.1:5433/db".to_owned(),
            slot: "s".to_owned(),
            publication: "p".to_owned(),
            tables: vec![("public".to_owned(), "t".to_owned())],
        };
        let debug = format!("{config:?}");
        assert!(!debug.contains("s3cretpw"), "{debug}");
        assert!(debug.contains("port=5433"), "{debug}");
        let keyvalue = SourceConfig {
            conninfo: "host=127.0.0.1 user=u password=s3cretpw".to_owned(),
            ..config
        };
        assert!(!format!("{keyvalue:?}").contains("s3cretpw"));
    }

    #[test]
    fn slot_names_are_checked() {
        assert!(validate_slot_name("plexus_1").is_ok());
        for bad in ["", "Upper", "semi;colon", &"x".repeat(64)] {
            assert!(validate_slot_name(bad).is_err(), "{bad:?}");
        }
    }
}
