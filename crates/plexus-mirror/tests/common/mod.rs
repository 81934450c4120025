//! What the mirror's PostgreSQL tests share: fixtures, a cluster with a schema and a client
//! with the mirror's session settings, rows as PostgreSQL's text.

#![allow(dead_code)] // each test file uses its own part

use std::time::Duration;

use plexus_mirror::change::Lsn;
use plexus_mirror::cluster::{ClusterOptions, ThrowawayCluster};
use plexus_mirror::mapping::PropertyGraph;
use plexus_mirror::{Mirror, load_mapping};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// The SNB mini data set's PostgreSQL CSV files (`../shared/data`, beside the repository),
/// as a canonical path: the PostgreSQL server (another user) reads them by it.
pub fn snb_data_dir() -> String {
    let dir = format!(
        "{}/../../../shared/data/ldbc-snb-mini/postgres/test-data",
        env!("CARGO_MANIFEST_DIR")
    );
    let dir = std::fs::canonicalize(&dir).unwrap_or_else(|e| panic!("{dir}: {e}"));
    dir.to_str().expect("a UTF-8 path").to_owned()
}

/// The text of `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The mapping in the fixture file `name`, loaded against `cluster`'s catalog.
pub async fn fixture_mapping(cluster: &ThrowawayCluster, name: &str) -> PropertyGraph {
    load_mapping(&cluster.conninfo(), &fixture(name), name)
        .await
        .expect("mapping")
}

/// A client of `cluster` with the session settings the mirror uses (ISO dates, UTC, …).
pub async fn connect(cluster: &ThrowawayCluster) -> Client {
    let (client, connection) = tokio_postgres::connect(&cluster.conninfo(), NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
        .batch_execute(
            "SET DateStyle = ISO; SET TimeZone = 'UTC'; SET extra_float_digits = 1; \
             SET IntervalStyle = postgres; SET bytea_output = hex",
        )
        .await
        .expect("session settings");
    client
}

/// A fresh cluster with `schema_sql` applied, and a client of it.
pub async fn cluster_with(schema_sql: &str) -> (ThrowawayCluster, Client) {
    let cluster = ThrowawayCluster::start(ClusterOptions::default()).expect("start PostgreSQL");
    cluster.psql(schema_sql).expect("schema");
    let client = connect(&cluster).await;
    (cluster, client)
}

/// Every row of `sql` as PostgreSQL's text output (`None` for NULL).
pub async fn text_rows(client: &Client, sql: &str) -> Vec<Vec<Option<String>>> {
    let messages = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    messages
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).map(str::to_owned))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// How long a test waits for the mirror to reach a source position.
pub const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `touch` (statements changing a mapped table) in a transaction that reads the WAL
/// insert position before committing: once the mirror has applied a position at or past it,
/// this transaction and every one committed before it are in the graph.
pub async fn sync_point(client: &Client, touch: &str) -> Lsn {
    client.batch_execute("BEGIN").await.expect("begin");
    client.batch_execute(touch).await.expect("touch");
    let rows = text_rows(client, "SELECT pg_current_wal_insert_lsn()::text").await;
    client.batch_execute("COMMIT").await.expect("commit");
    rows[0][0]
        .as_deref()
        .expect("lsn")
        .parse()
        .expect("lsn text")
}

pub async fn catch_up(mirror: &mut Mirror, client: &Client, touch: &str) {
    let target = sync_point(client, touch).await;
    mirror
        .catch_up(target, CATCH_UP_TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("catch up to {target}: {e}"));
}
