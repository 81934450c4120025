//! Catalog operations on ordinary SQL sessions: the publication, the slot's position, and
//! dropping both.
//!
//! Each call opens its own short session: these run once per mirror start (or for
//! `plexus mirror --drop`), never on the stream's hot path.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::{SourceConfig, SourceError, connect_sql, quote_ident};
use crate::change::Lsn;

/// How long [`drop_slot_and_publication`] waits for a session holding the slot to let go
/// (a stream that was just closed takes a moment to end on the server).
pub const SLOT_RELEASE_WAIT_MS: u64 = 5_000;
const SLOT_RELEASE_POLL_MS: u64 = 50;

/// SQLSTATE undefined_object: the slot was dropped meanwhile.
const UNDEFINED_OBJECT: &str = "42704";
/// SQLSTATE object_in_use: a session holds the slot.
const OBJECT_IN_USE: &str = "55006";

/// Creates the publication for exactly `config.tables`, or alters an existing one whose
/// table set differs so that it matches.
pub async fn ensure_publication(config: &SourceConfig) -> Result<(), SourceError> {
    let endpoint = config.endpoint()?;
    let wanted: BTreeSet<(String, String)> = config.tables.iter().cloned().collect();
    if wanted.is_empty() {
        return Err(SourceError::Config(
            "the mirror follows no tables (the publication would be empty)".to_owned(),
        ));
    }
    if wanted.len() != config.tables.len() {
        return Err(SourceError::Config(format!(
            "a table is listed twice in {:?}",
            config.tables
        )));
    }
    let client = connect_sql(&endpoint).await?;
    let sql_error = |context: &str| {
        let redactor = endpoint.redactor.clone();
        let context = context.to_owned();
        move |e| redactor.sql(&context, e)
    };
    let table_list = wanted
        .iter()
        .map(|(schema, table)| format!("{}.{}", quote_ident(schema), quote_ident(table)))
        .collect::<Vec<_>>()
        .join(", ");
    let publication = quote_ident(&config.publication);
    let existing = client
        .query_opt(
            "SELECT puballtables FROM pg_publication WHERE pubname = $1",
            &[&config.publication],
        )
        .await
        .map_err(sql_error("publication lookup"))?;
    let Some(existing) = existing else {
        return client
            .batch_execute(&format!(
                "CREATE PUBLICATION {publication} FOR TABLE {table_list}"
            ))
            .await
            .map_err(sql_error("CREATE PUBLICATION"));
    };
    let all_tables: bool = existing
        .try_get(0)
        .map_err(sql_error("publication lookup"))?;
    if all_tables {
        return Err(SourceError::Config(format!(
            "publication {publication} is FOR ALL TABLES; the mirror needs one for its own \
             tables (drop it or choose another name)"
        )));
    }
    let mut current = BTreeSet::new();
    for row in client
        .query(
            "SELECT schemaname::text, tablename::text FROM pg_publication_tables \
             WHERE pubname = $1",
            &[&config.publication],
        )
        .await
        .map_err(sql_error("publication tables lookup"))?
    {
        let schema: String = row.try_get(0).map_err(sql_error("publication tables"))?;
        let table: String = row.try_get(1).map_err(sql_error("publication tables"))?;
        current.insert((schema, table));
    }
    if current == wanted {
        return Ok(());
    }
    client
        .batch_execute(&format!(
            "ALTER PUBLICATION {publication} SET TABLE {table_list}"
        ))
        .await
        .map_err(sql_error("ALTER PUBLICATION"))
}

/// The slot's `confirmed_flush_lsn`, or `None` when the slot does not exist. A slot of that
/// name that is not a `pgoutput` slot of this database is a configuration error.
pub async fn slot_position(config: &SourceConfig) -> Result<Option<Lsn>, SourceError> {
    let endpoint = config.endpoint()?;
    let client = connect_sql(&endpoint).await?;
    let sql_error = |e| endpoint.redactor.sql("slot lookup", e);
    let row = client
        .query_opt(
            "SELECT plugin::text, database::text, confirmed_flush_lsn::text \
             FROM pg_replication_slots WHERE slot_name = $1",
            &[&config.slot],
        )
        .await
        .map_err(sql_error)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let plugin: Option<String> = row.try_get(0).map_err(sql_error)?;
    let database: Option<String> = row.try_get(1).map_err(sql_error)?;
    let confirmed: Option<String> = row.try_get(2).map_err(sql_error)?;
    if plugin.as_deref() != Some("pgoutput") || database.as_deref() != Some(&endpoint.database) {
        return Err(SourceError::Config(format!(
            "replication slot {:?} exists but is not a pgoutput slot of database {:?} \
             (plugin {plugin:?}, database {database:?})",
            config.slot, endpoint.database
        )));
    }
    let confirmed = confirmed.ok_or_else(|| {
        SourceError::Config(format!(
            "replication slot {:?} has no confirmed position",
            config.slot
        ))
    })?;
    confirmed
        .parse::<Lsn>()
        .map(Some)
        .map_err(SourceError::Protocol)
}

/// Drops the slot and the publication; either or both may already be gone. Waits up to
/// [`SLOT_RELEASE_WAIT_MS`] for a session holding the slot to end.
pub async fn drop_slot_and_publication(config: &SourceConfig) -> Result<(), SourceError> {
    let endpoint = config.endpoint()?;
    let client = connect_sql(&endpoint).await?;
    let sql_error = |context: &'static str| {
        let redactor = endpoint.redactor.clone();
        move |e| redactor.sql(context, e)
    };
    let deadline = Instant::now() + Duration::from_millis(SLOT_RELEASE_WAIT_MS);
    loop {
        let row = client
            .query_opt(
                "SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1",
                &[&config.slot],
            )
            .await
            .map_err(sql_error("slot lookup"))?;
        let Some(row) = row else {
            break;
        };
        let active_pid: Option<i32> = row.try_get(0).map_err(sql_error("slot lookup"))?;
        if active_pid.is_none() {
            match client
                .execute("SELECT pg_drop_replication_slot($1)", &[&config.slot])
                .await
                .map_err(sql_error("dropping the replication slot"))
            {
                Ok(_) => break,
                Err(SourceError::Sql {
                    sqlstate: Some(code),
                    ..
                }) if code == UNDEFINED_OBJECT => break,
                Err(SourceError::Sql {
                    sqlstate: Some(code),
                    ..
                }) if code == OBJECT_IN_USE => {}
                Err(e) => return Err(e),
            }
        }
        if Instant::now() >= deadline {
            return Err(SourceError::Sql {
                context: "dropping the replication slot".to_owned(),
                message: format!(
                    "slot {:?} is still in use (backend pid {}) after {SLOT_RELEASE_WAIT_MS} ms",
                    config.slot,
                    active_pid.map_or("?".to_owned(), |pid| pid.to_string())
                ),
                sqlstate: Some(OBJECT_IN_USE.to_owned()),
                transient: true,
            });
        }
        tokio::time::sleep(Duration::from_millis(SLOT_RELEASE_POLL_MS)).await;
    }
    client
        .batch_execute(&format!(
            "DROP PUBLICATION IF EXISTS {}",
            quote_ident(&config.publication)
        ))
        .await
        .map_err(sql_error("DROP PUBLICATION"))
}
