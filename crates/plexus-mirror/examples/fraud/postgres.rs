//! The demo's `--postgres URL` mode: the writers commit the transfers in PostgreSQL and the
//! mirror follows them into the embedded database, where the detector runs as in the embedded
//! run.
//!
//! In that database the demo (re)creates its own two tables, inserts the accounts, maps them
//! with [`MAPPING`] (the same labels and property names as the embedded run, so the detector's
//! queries are unchanged) and starts a [`MirrorThread`] on slot and publication [`NAME`]. At
//! the end, whatever happened, it drops the slot and the publication (PostgreSQL would keep
//! WAL for them) and the tables. The password (from the URL or `PGPASSWORD`) is never printed.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use plexus::Database;
use plexus::settings::redact;
use plexus_mirror::apply::with_default_password;
use plexus_mirror::mapping::PropertyGraph;
use plexus_mirror::source::{SourceConfig, drop_slot_and_publication};
use plexus_mirror::{MirrorOptions, MirrorThread, load_mapping};
use tokio::runtime::Runtime;
use tokio_postgres::{Client, NoTls, Statement};

use crate::{Args, Hop, Shared, Sink, detect_while_writing};

/// The demo's replication slot and publication.
const NAME: &str = "plexus_fraud_demo";

const CREATE_TABLES: &str = "
DROP TABLE IF EXISTS plexus_demo_transfer, plexus_demo_account;
CREATE TABLE plexus_demo_account (id bigint PRIMARY KEY, owner text NOT NULL);
CREATE TABLE plexus_demo_transfer (
    id bigserial PRIMARY KEY,
    src bigint NOT NULL REFERENCES plexus_demo_account,
    dst bigint NOT NULL REFERENCES plexus_demo_account,
    amount float8 NOT NULL,
    at bigint NOT NULL
)";

const INSERT_ACCOUNTS: &str = "
INSERT INTO plexus_demo_account (id, owner)
SELECT g, 'owner-' || g FROM generate_series(0, $1::bigint - 1) AS g";

const INSERT_TRANSFER: &str =
    "INSERT INTO plexus_demo_transfer (src, dst, amount, at) VALUES ($1, $2, $3, $4)";

const DROP_TABLES: &str = "DROP TABLE IF EXISTS plexus_demo_transfer, plexus_demo_account";

/// The graph the mirror keeps: Account vertices, TRANSFER edges.
const MAPPING: &str = "
CREATE PROPERTY GRAPH plexus_fraud_demo
  VERTEX TABLES (
    plexus_demo_account KEY (id) LABEL Account PROPERTIES (id, owner)
  )
  EDGE TABLES (
    plexus_demo_transfer
      SOURCE KEY (src) REFERENCES plexus_demo_account (id)
      DESTINATION KEY (dst) REFERENCES plexus_demo_account (id)
      LABEL TRANSFER PROPERTIES (amount, at)
  )";

/// Runs the demo against the PostgreSQL database `url`, mirrored into `db` (in `dir`).
pub(crate) fn run(db: &Arc<Database>, dir: &Path, url: &str, args: &Args) -> Result<bool, String> {
    println!("PostgreSQL {}", redact(url));
    // the demo recreates its PostgreSQL tables and mirrors them from a fresh snapshot: a
    // graph holding an earlier run (mirrored or embedded) would not match them
    let vertices = db
        .connect()
        .execute("MATCH (n) RETURN count(n)", &plexus::Params::new())
        .map_err(|e| format!("counting the graph's vertices: {e}"))?;
    if !matches!(
        vertices.rows.first().and_then(|r| r.first()),
        Some(plexus::CypherValue::Int(0))
    ) {
        return Err(format!(
            "{} already holds a graph (an earlier run?): --postgres mirrors into an empty \
             database; leave --db out or name a new directory",
            dir.display()
        ));
    }
    let conninfo = match std::env::var("PGPASSWORD") {
        Ok(password) => with_default_password(url, &password),
        Err(_) => url.to_owned(),
    };
    let runtime = runtime()?;
    // (nothing of this run to clean up yet if this fails)
    runtime
        .block_on(drop_slot_and_publication(&source_config(&conninfo)))
        .map_err(|e| format!("dropping a leftover slot or publication {NAME}: {e}"))?;
    let outcome = runtime
        .block_on(prepare(&conninfo, args.accounts))
        .and_then(|mapping| mirror_and_detect(db, dir, &conninfo, mapping, args));
    let cleaned = runtime.block_on(clean_up(&conninfo));
    match (outcome, cleaned) {
        (Ok(ok), Ok(())) => Ok(ok),
        (Ok(_), Err(e)) => Err(e),
        (Err(e), Ok(())) => Err(e),
        (Err(e), Err(cleaning)) => Err(format!("{e} (then, cleaning up: {cleaning})")),
    }
}

fn runtime() -> Result<Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

fn source_config(conninfo: &str) -> SourceConfig {
    SourceConfig {
        conninfo: conninfo.to_owned(),
        slot: NAME.to_owned(),
        publication: NAME.to_owned(),
        tables: Vec::new(),
    }
}

/// `e` as text, with PostgreSQL's own message when there is one.
fn sql_error(context: &str, e: tokio_postgres::Error) -> String {
    let message = match e.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => e.to_string(),
    };
    redact(&format!("{context}: {message}"))
}

/// Connects; the connection runs on the calling runtime.
async fn connect(conninfo: &str) -> Result<Client, String> {
    let (client, connection) = tokio_postgres::connect(conninfo, NoTls)
        .await
        .map_err(|e| sql_error("connecting to PostgreSQL", e))?;
    tokio::spawn(async move {
        // a broken connection also fails the client's next request, which reports it
        let _ = connection.await;
    });
    Ok(client)
}

/// (Re)creates the tables, inserts the accounts and returns the validated mapping.
async fn prepare(conninfo: &str, accounts: i64) -> Result<PropertyGraph, String> {
    let client = connect(conninfo).await?;
    client
        .batch_execute(CREATE_TABLES)
        .await
        .map_err(|e| sql_error("creating the demo's tables", e))?;
    let started = Instant::now();
    client
        .execute(INSERT_ACCOUNTS, &[&accounts])
        .await
        .map_err(|e| sql_error("inserting the accounts", e))?;
    println!(
        "inserted {accounts} accounts in PostgreSQL in {:.0} ms",
        crate::ms(started.elapsed())
    );
    load_mapping(conninfo, MAPPING, "the demo's mapping")
        .await
        .map_err(|e| e.to_string())
}

/// Starts the mirror, then the writers and the detector; stops the mirror at the end.
fn mirror_and_detect(
    db: &Arc<Database>,
    dir: &Path,
    conninfo: &str,
    mapping: PropertyGraph,
    args: &Args,
) -> Result<bool, String> {
    let options = MirrorOptions {
        slot: NAME.to_owned(),
        publication: NAME.to_owned(),
        ..MirrorOptions::new(conninfo, mapping)
    }
    .pending_file_in(dir);
    let started = Instant::now();
    let mirror =
        MirrorThread::start(db.clone(), options).map_err(|e| format!("the mirror: {e}"))?;
    let status = mirror.handle().status();
    println!(
        "mirror copied {} accounts in {:.0} ms, now following slot {NAME}",
        status.snapshot_rows.values().sum::<u64>(),
        crate::ms(started.elapsed())
    );
    let sinks = (0..args.writers)
        .map(|_| PgWriter::connect(conninfo).map(|w| Box::new(w) as Box<dyn Sink>))
        .collect::<Result<Vec<_>, _>>()?;
    let shared = Shared::new(db.clone(), args.accounts);
    let ok = detect_while_writing(&shared, args, sinks, Some(&mirror))?;
    mirror.stop().map_err(|e| format!("the mirror: {e}"))?;
    Ok(ok)
}

/// Drops the slot, the publication and the tables.
async fn clean_up(conninfo: &str) -> Result<(), String> {
    drop_slot_and_publication(&source_config(conninfo))
        .await
        .map_err(|e| format!("dropping the slot and publication {NAME}: {e}"))?;
    let client = connect(conninfo).await?;
    client
        .batch_execute(DROP_TABLES)
        .await
        .map_err(|e| sql_error("dropping the demo's tables", e))?;
    println!("dropped the slot, the publication and the tables in PostgreSQL");
    Ok(())
}

/// A writer's PostgreSQL session, on a runtime of its own.
struct PgWriter {
    runtime: Runtime,
    client: Client,
    insert: Statement,
}

impl PgWriter {
    fn connect(conninfo: &str) -> Result<PgWriter, String> {
        let runtime = runtime()?;
        let (client, insert) = runtime.block_on(async {
            let client = connect(conninfo).await?;
            let insert = (client.prepare(INSERT_TRANSFER).await)
                .map_err(|e| sql_error("preparing the insert", e))?;
            Ok::<_, String>((client, insert))
        })?;
        Ok(PgWriter {
            runtime,
            client,
            insert,
        })
    }
}

impl Sink for PgWriter {
    /// One transfer: one autocommitted INSERT; a ring: three INSERTs in one transaction.
    fn commit(&mut self, shared: &Shared, hops: &[Hop]) -> Result<(), String> {
        let PgWriter {
            runtime,
            client,
            insert,
        } = self;
        let at = shared.now_ms();
        runtime
            .block_on(async {
                if let [(src, dst, amount)] = hops {
                    return client
                        .execute(insert, &[src, dst, amount, &at])
                        .await
                        .map(drop);
                }
                let tx = client.transaction().await?;
                for (src, dst, amount) in hops {
                    tx.execute(insert, &[src, dst, amount, &at]).await?;
                }
                tx.commit().await
            })
            .map_err(|e| sql_error("committing a transfer", e))
    }
}
