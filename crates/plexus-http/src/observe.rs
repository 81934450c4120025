//! What the server tells about itself: `/health`, `/metrics` (Prometheus text) and
//! `/db/{db}/schema`.
//!
//! WHAT
//! ====
//! `/metrics` renders, in Prometheus's text format (version 0.0.4):
//! ```text
//!   plexus_commits_total                      counter  transactions committed by connections
//!   plexus_installed_commits_total            counter  writing commits installed, whoever ran
//!                                                      them (connections, embedding programs,
//!                                                      bulk loads, the PostgreSQL mirror)
//!   plexus_wal_written_bytes_total            counter  bytes written to WAL segment files
//!   plexus_wal_fsyncs_total                   counter  fsyncs of WAL segments (group commit)
//!   plexus_aborts_total{kind}                 counter  write_conflict, read_validation, too_old,
//!                                                      error, rollback
//!   plexus_query_latency_seconds              histogram  statements, run to their last row
//!   plexus_connections_open                   gauge    engine connections (Bolt sessions, HTTP
//!                                                      pool, embedded)
//!   plexus_connections_opened_total           counter
//!   plexus_memtable_bytes, plexus_run_bytes   gauge    topology memtables, CSR run files
//!   plexus_flushed_bytes_total, plexus_merged_bytes_total  counter  disk-tier writes
//!   plexus_row_cache_resident_bytes, plexus_index_cache_resident_bytes  gauge
//!   plexus_http_transactions_open             gauge    explicit HTTP transactions
//!   plexus_mirror_freshness_ms{follower,quantile}  gauge  the PostgreSQL mirror, when one runs
//!   plexus_mirror_pending{follower}           gauge
//! ```
//! Label values are names Plexus chose or a follower's origin name; no setting value (and
//! so no connection string) is ever rendered.
//!
//! `/db/{db}/schema` answers labels and relationship types with counts, every property key
//! (`db.propertyKeys()`) with the types tables declare for it (`on`; empty when no table
//! declares it: any type), and indexes, from the catalog and the planner's
//! statistics (O(tables), never a scan; counts are the statistics' upper bounds, see
//! `plexus_storage::stats`).

use crate::AppState;
use crate::guard::error;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use plexus::metrics::LATENCY_BUCKETS_US;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

pub async fn health() -> Response {
    axum::Json(json!({ "status": "ok" })).into_response()
}

/// One metric family's `# HELP` and `# TYPE` lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn single(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    family(out, name, kind, help);
    let _ = writeln!(out, "{name} {value}");
}

/// Escapes a label value (backslash, quote, newline).
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The numeric mirror columns of `CALL db.mirror.status()`, per follower.
fn mirror_status(state: &AppState) -> Vec<(String, Vec<(String, f64)>)> {
    let mut conn = state.pool.take();
    let result = conn.execute("CALL db.mirror.status()", &plexus::Params::new());
    state.pool.give(conn);
    let Ok(result) = result else {
        return Vec::new();
    };
    let column = |name: &str| result.columns.iter().position(|c| c == name);
    let Some(name_at) = column("name") else {
        return Vec::new();
    };
    let numeric = [
        "freshnessP50Ms",
        "freshnessP99Ms",
        "freshnessMaxMs",
        "pending",
    ];
    result
        .rows
        .iter()
        .map(|row| {
            let name = plexus::temporal::plain_text(&row[name_at]);
            let values = numeric
                .iter()
                .filter_map(|c| {
                    let value = match row.get(column(c)?)? {
                        plexus::CypherValue::Int(i) => *i as f64,
                        plexus::CypherValue::Float(f) => *f,
                        _ => return None,
                    };
                    Some((c.to_string(), value))
                })
                .collect();
            (name, values)
        })
        .collect()
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let db_state = state.clone();
    let Ok(text) = tokio::task::spawn_blocking(move || render(&db_state)).await else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Neo.DatabaseError.General.UnknownError",
            "collecting the metrics failed",
        );
    };
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

fn render(state: &AppState) -> String {
    let m = state.db.metrics();
    let storage = state.db.storage_stats();
    let mut out = String::new();
    single(
        &mut out,
        "plexus_commits_total",
        "counter",
        "Transactions committed by connections (auto-commit statements and COMMIT).",
        m.commits,
    );
    family(
        &mut out,
        "plexus_aborts_total",
        "counter",
        "Transactions ended without committing, by kind.",
    );
    for (kind, n) in &m.aborts {
        let _ = writeln!(out, "plexus_aborts_total{{kind=\"{}\"}} {n}", kind.name());
    }
    family(
        &mut out,
        "plexus_query_latency_seconds",
        "histogram",
        "Statement latency, from start to last row (statements run to their end).",
    );
    let mut cumulative = 0;
    for (bound, n) in LATENCY_BUCKETS_US.iter().zip(&m.latency_buckets) {
        cumulative += n;
        let le = *bound as f64 / 1e6;
        let _ = writeln!(
            out,
            "plexus_query_latency_seconds_bucket{{le=\"{le}\"}} {cumulative}"
        );
    }
    let count = m.latency_count();
    let _ = writeln!(
        out,
        "plexus_query_latency_seconds_bucket{{le=\"+Inf\"}} {count}"
    );
    let _ = writeln!(
        out,
        "plexus_query_latency_seconds_sum {}",
        m.latency_sum_us as f64 / 1e6
    );
    let _ = writeln!(out, "plexus_query_latency_seconds_count {count}");
    single(
        &mut out,
        "plexus_connections_open",
        "gauge",
        "Engine connections open (Bolt sessions, pooled HTTP connections, embedded).",
        m.connections_open,
    );
    single(
        &mut out,
        "plexus_connections_opened_total",
        "counter",
        "Engine connections opened since start.",
        m.connections_total,
    );
    for (name, kind, help, value) in [
        (
            "plexus_installed_commits_total",
            "counter",
            "Writing commits installed, from connections, embedding programs, bulk loads and the mirror.",
            storage.installed_commits,
        ),
        (
            "plexus_wal_written_bytes_total",
            "counter",
            "Bytes written to WAL segment files.",
            storage.wal_written_bytes,
        ),
        (
            "plexus_wal_fsyncs_total",
            "counter",
            "fsyncs of WAL segment files (one per group commit).",
            storage.wal_fsyncs,
        ),
        (
            "plexus_memtable_bytes",
            "gauge",
            "Bytes in topology memtables (active and frozen).",
            storage.memtable_bytes,
        ),
        (
            "plexus_run_bytes",
            "gauge",
            "Bytes in current CSR run files.",
            storage.run_bytes,
        ),
        (
            "plexus_flushed_bytes_total",
            "counter",
            "Bytes written by memtable flushes.",
            storage.flushed_bytes,
        ),
        (
            "plexus_merged_bytes_total",
            "counter",
            "Bytes written by run merges.",
            storage.merged_bytes,
        ),
        (
            "plexus_row_cache_resident_bytes",
            "gauge",
            "Bytes of row chunks held in memory.",
            storage.row_cache.resident_bytes,
        ),
        (
            "plexus_index_cache_resident_bytes",
            "gauge",
            "Bytes of index entries held in memory.",
            storage.index_cache.resident_bytes,
        ),
    ] {
        single(&mut out, name, kind, help, value);
    }
    let open = state.transactions_open();
    single(
        &mut out,
        "plexus_http_transactions_open",
        "gauge",
        "Explicit transactions open over HTTP.",
        open,
    );
    let mirror = mirror_status(state);
    if !mirror.is_empty() {
        family(
            &mut out,
            "plexus_mirror_freshness_ms",
            "gauge",
            "PostgreSQL mirror: time from a source commit to its apply, in milliseconds.",
        );
        for (follower, values) in &mirror {
            for (column, value) in values {
                let quantile = match column.as_str() {
                    "freshnessP50Ms" => "0.5",
                    "freshnessP99Ms" => "0.99",
                    "freshnessMaxMs" => "1",
                    _ => continue,
                };
                let _ = writeln!(
                    out,
                    "plexus_mirror_freshness_ms{{follower=\"{}\",quantile=\"{quantile}\"}} {value}",
                    label(follower)
                );
            }
        }
        family(
            &mut out,
            "plexus_mirror_pending",
            "gauge",
            "PostgreSQL mirror: source transactions received but not applied yet.",
        );
        for (follower, values) in &mirror {
            if let Some((_, value)) = values.iter().find(|(c, _)| c == "pending") {
                let _ = writeln!(
                    out,
                    "plexus_mirror_pending{{follower=\"{}\"}} {value}",
                    label(follower)
                );
            }
        }
    }
    out
}

/// `GET /db/{db}/schema`.
pub async fn schema(State(state): State<Arc<AppState>>, Path(db): Path<String>) -> Response {
    if !state.serves(&db) {
        return error(
            StatusCode::NOT_FOUND,
            "Neo.ClientError.Database.DatabaseNotFound",
            format!("database '{db}' does not exist here"),
        );
    }
    let db_state = state.clone();
    match tokio::task::spawn_blocking(move || describe(&db_state)).await {
        Ok(schema) => axum::Json(schema).into_response(),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Neo.DatabaseError.General.UnknownError",
            "reading the schema failed",
        ),
    }
}

fn describe(state: &AppState) -> Json {
    let db = &state.db;
    let schema = db.schema();
    let stats = db.statistics();
    let labels: Vec<Json> = schema
        .labels
        .iter()
        .map(|l| json!({ "name": l, "count": stats.label_vertices(l) }))
        .collect();
    let mut types: BTreeMap<&str, u64> = BTreeMap::new();
    for table in &schema.edge_tables {
        types.entry(table.edge_type.as_str()).or_default();
    }
    let types: Vec<Json> = types
        .keys()
        .map(|t| json!({ "name": t, "count": stats.edge_type(Some(t)).edges }))
        .collect();
    // property key -> the types it is declared with, and where (none: undeclared, any type)
    let mut conn = state.pool.take();
    let used = conn.execute("CALL db.propertyKeys()", &plexus::Params::new());
    state.pool.give(conn);
    let used: Vec<String> = used
        .map(|r| {
            r.rows
                .iter()
                .map(|row| plexus::temporal::plain_text(&row[0]))
                .collect()
        })
        .unwrap_or_default();
    let mut keys: BTreeMap<&str, Vec<Json>> =
        used.iter().map(|k| (k.as_str(), Vec::new())).collect();
    for table in &schema.vertex_tables {
        for p in &table.properties {
            keys.entry(p.name.as_str())
                .or_default()
                .push(json!({ "label": table.name, "type": p.data_type.name() }));
        }
    }
    for table in &schema.edge_tables {
        for p in &table.properties {
            keys.entry(p.name.as_str())
                .or_default()
                .push(json!({ "relationshipType": table.edge_type, "type": p.data_type.name() }));
        }
    }
    let keys: Vec<Json> = keys
        .into_iter()
        .map(|(name, on)| json!({ "name": name, "on": on }))
        .collect();
    let indexes: Vec<Json> = schema
        .indexes
        .iter()
        .map(|i| {
            json!({
                "name": i.name,
                "entityType": i.entity.name(),
                "labelOrType": i.label,
                "property": i.property,
            })
        })
        .collect();
    json!({
        "labels": labels,
        "relationshipTypes": types,
        "propertyKeys": keys,
        "indexes": indexes,
        "nodeCount": stats.vertices(),
        "relationshipCount": stats.edge_type(None).edges,
    })
}
