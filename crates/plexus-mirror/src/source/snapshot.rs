//! The initial copy: create the slot with an exported snapshot, then copy tables under it.
//!
//! The slot is created on a replication session that then stays idle: PostgreSQL keeps an
//! exported snapshot importable only until its session runs another command or ends. That
//! session is handed back inside [`ExportedSnapshot`] and later becomes the stream
//! ([`super::start_stream`]), so the stream begins exactly at the snapshot's consistent point
//! on the session that created it.
//!
//! Each [`copy_table`] opens its own SQL session, imports the snapshot in a REPEATABLE READ
//! read-only transaction, fixes the output settings ([`super::SESSION_SETTINGS`]) and reads
//! `COPY (SELECT columns FROM table) TO STDOUT` in text format, row by row, without holding
//! the table in memory.

use std::error::Error as StdError;
use std::fmt;

use futures_util::StreamExt;
use pgwire_replication::ReplicationClient;

use super::copy_text::CopyTextParser;
use super::{
    Redactor, SESSION_SETTINGS, SourceConfig, SourceError, connect_sql, quote_ident, quote_literal,
    replication_config,
};
use crate::change::{Datum, Lsn};

/// An authenticated replication session that has not started streaming (it holds the slot's
/// exported snapshot while idle). Dropping it ends the session and the snapshot.
pub struct ReplicationSession {
    pub(crate) client: ReplicationClient,
    pub(crate) redactor: Redactor,
}

impl fmt::Debug for ReplicationSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicationSession")
            .field("running", &self.client.is_running())
            .finish()
    }
}

/// A new slot's starting point: copy under `snapshot_name`, then stream from
/// `consistent_point` on `session`.
#[derive(Debug)]
pub struct ExportedSnapshot {
    /// The slot's first position: transactions committed before it are in the snapshot,
    /// those committed at or after it come through the slot.
    pub consistent_point: Lsn,
    /// For `SET TRANSACTION SNAPSHOT`; valid while `session` stays open and idle.
    pub snapshot_name: String,
    pub session: ReplicationSession,
}

/// Creates the logical slot `config.slot` (plugin `pgoutput`) with an exported snapshot.
/// Fails (not transiently) if the slot exists: a slot that exists has a position to resume
/// from instead ([`super::slot_position`]).
pub async fn create_slot_with_snapshot(
    config: &SourceConfig,
) -> Result<ExportedSnapshot, SourceError> {
    let endpoint = config.endpoint()?;
    let redactor = endpoint.redactor.clone();
    // START_REPLICATION on this session is sent later from 0/0, which PostgreSQL reads as
    // "from the slot's confirmed position" — the consistent point of the slot created here.
    let replication = replication_config(config, &endpoint, Lsn(0));
    let mut client = ReplicationClient::connect_gated(replication)
        .await
        .map_err(|e| redactor.replication("replication connect", e))?;
    let rows = client
        .simple_query(&format!(
            "CREATE_REPLICATION_SLOT {} LOGICAL pgoutput EXPORT_SNAPSHOT",
            config.slot
        ))
        .await
        .map_err(|e| redactor.replication("CREATE_REPLICATION_SLOT", e))?;
    // One row: slot_name, consistent_point, snapshot_name, output_plugin.
    let column = |index: usize| -> Result<String, SourceError> {
        rows.first()
            .and_then(|row| row.get(index))
            .and_then(|value| value.as_ref())
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .ok_or_else(|| {
                SourceError::Protocol(format!(
                    "CREATE_REPLICATION_SLOT answered without column {index} ({} rows)",
                    rows.len()
                ))
            })
    };
    if rows.len() != 1 {
        return Err(SourceError::Protocol(format!(
            "CREATE_REPLICATION_SLOT answered {} rows, expected 1",
            rows.len()
        )));
    }
    let consistent_point = column(1)?.parse::<Lsn>().map_err(SourceError::Protocol)?;
    let snapshot_name = column(2)?;
    Ok(ExportedSnapshot {
        consistent_point,
        snapshot_name,
        session: ReplicationSession { client, redactor },
    })
}

/// Copies `columns` of `table` (schema, name) as of the exported snapshot `snapshot_name`,
/// handing each row to `on_row` in the order PostgreSQL sends them. Returns the number of
/// rows. Several copies may run at once on the same snapshot.
pub async fn copy_table<E>(
    config: &SourceConfig,
    snapshot_name: &str,
    table: (&str, &str),
    columns: &[String],
    mut on_row: impl FnMut(Vec<Datum>) -> Result<(), E>,
) -> Result<u64, SourceError>
where
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    if columns.is_empty() {
        return Err(SourceError::Config(format!(
            "copy of {}.{} names no columns",
            table.0, table.1
        )));
    }
    let endpoint = config.endpoint()?;
    let mut client = connect_sql(&endpoint).await?;
    let sql_error = |context: &'static str| {
        let redactor = endpoint.redactor.clone();
        move |e| redactor.sql(context, e)
    };
    let transaction = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(sql_error("BEGIN"))?;
    let mut setup = format!("SET TRANSACTION SNAPSHOT {};", quote_literal(snapshot_name));
    for (name, value) in SESSION_SETTINGS {
        setup.push_str(&format!(" SET LOCAL {name} = {};", quote_literal(value)));
    }
    transaction
        .batch_execute(&setup)
        .await
        .map_err(sql_error("importing the snapshot"))?;
    let select_list = columns
        .iter()
        .map(|column| quote_ident(column))
        .collect::<Vec<_>>()
        .join(", ");
    let copy = format!(
        "COPY (SELECT {select_list} FROM {}.{}) TO STDOUT",
        quote_ident(table.0),
        quote_ident(table.1)
    );
    let stream = transaction
        .copy_out(&copy)
        .await
        .map_err(sql_error("COPY TO STDOUT"))?;
    let mut stream = std::pin::pin!(stream);
    let mut parser = CopyTextParser::new(columns.len());
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(sql_error("COPY TO STDOUT"))?;
        parser.feed(&chunk, |row| {
            on_row(row).map_err(|e| SourceError::Consumer(e.into()))
        })?;
    }
    let rows = parser.finish()?;
    transaction.commit().await.map_err(sql_error("COMMIT"))?;
    Ok(rows)
}
