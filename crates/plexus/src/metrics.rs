//! Counters a server exports: commits, aborts by kind, statement latency, open connections.
//!
//! WHAT
//! ====
//! One [`Metrics`] per open [`crate::Database`], shared by every [`crate::Connection`] it
//! hands out. The connection bumps it at four places only:
//!
//! ```text
//!   Connection::commit / auto-commit end ──▶ commits, or aborts{kind}
//!   Connection::rollback, a failed statement in a transaction ──▶ aborts{rollback | error}
//!   a statement's stream reaching its end ──▶ statement latency histogram
//!   Database::connect / Connection dropped ──▶ connections open, opened in total
//! ```
//! [`Metrics::snapshot`] reads everything at once for an exporter (the HTTP front end's
//! `/metrics` renders it as Prometheus text; `docs/http.md` lists the names).
//!
//! WHY
//! ===
//! An operator's first questions — is it committing, is it conflicting, how slow are
//! statements, how many clients — must be answerable without a profiler. The counters are
//! relaxed atomics (a handful of uncontended adds per statement), so they are always on.
//!
//! INVARIANTS
//! ==========
//! - Counters only grow (Prometheus counters); `connections_open` is a gauge.
//! - The histogram's buckets are cumulative only when rendered: each bucket here counts the
//!   statements whose latency is at most its bound and above the previous bound, and the
//!   last (`+Inf`) takes the rest, so `count` is the sum of the buckets.
//! - Nothing here holds text a client sent, so no secret (a mirror's connection string, a
//!   password) can reach an exporter through it.
//!
//! What the storage counts itself — every installed commit, whoever made it (bulk loads,
//! `Database::begin` transactions of an embedding program, the mirror's writes), WAL bytes
//! and fsyncs — is in [`crate::StorageStats`] (`installed_commits`, `wal_written_bytes`,
//! `wal_fsyncs`); exporters render both.
//!
//! NOT YET
//! =======
//! - Latency of a stream a client drops before its end is not observed (it never ends).
//! - Aborts of transactions outside connections (an embedding program's `Transaction`) are
//!   not counted by kind here.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the statement-latency buckets, in microseconds (the last bucket, `+Inf`,
/// is implicit).
pub const LATENCY_BUCKETS_US: [u64; 12] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 1_000_000, 10_000_000,
];

/// Why a transaction ended without committing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbortKind {
    /// Another transaction committed a write to the same item first.
    WriteConflict,
    /// SERIALIZABLE: something read was changed by a transaction that committed meanwhile.
    ReadValidation,
    /// The transaction outlived the retained conflict history.
    TooOld,
    /// A statement failed inside an explicit transaction, or the commit failed otherwise.
    Error,
    /// The client rolled back.
    Rollback,
}

impl AbortKind {
    pub const ALL: [AbortKind; 5] = [
        AbortKind::WriteConflict,
        AbortKind::ReadValidation,
        AbortKind::TooOld,
        AbortKind::Error,
        AbortKind::Rollback,
    ];

    /// The label value exporters use.
    pub fn name(self) -> &'static str {
        match self {
            AbortKind::WriteConflict => "write_conflict",
            AbortKind::ReadValidation => "read_validation",
            AbortKind::TooOld => "too_old",
            AbortKind::Error => "error",
            AbortKind::Rollback => "rollback",
        }
    }

    /// The kind of a failed commit.
    pub fn of(error: &crate::QueryError) -> AbortKind {
        match error.source.as_deref() {
            Some(crate::Error::Aborted(reason)) => match reason {
                crate::AbortReason::WriteConflict { .. } => AbortKind::WriteConflict,
                crate::AbortReason::ReadValidation { .. } => AbortKind::ReadValidation,
                crate::AbortReason::TooOld => AbortKind::TooOld,
            },
            _ => AbortKind::Error,
        }
    }
}

/// The live counters (see the module doc).
#[derive(Debug, Default)]
pub struct Metrics {
    commits: AtomicU64,
    aborts: [AtomicU64; AbortKind::ALL.len()],
    latency_buckets: [AtomicU64; LATENCY_BUCKETS_US.len() + 1],
    latency_sum_us: AtomicU64,
    connections_open: AtomicI64,
    connections_total: AtomicU64,
}

/// The counters at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsSnapshot {
    pub commits: u64,
    /// Per [`AbortKind::ALL`], in that order.
    pub aborts: Vec<(AbortKind, u64)>,
    /// Per bucket of [`LATENCY_BUCKETS_US`] then `+Inf`: the statements in that bucket alone
    /// (not cumulative).
    pub latency_buckets: Vec<u64>,
    pub latency_sum_us: u64,
    pub connections_open: i64,
    pub connections_total: u64,
}

impl MetricsSnapshot {
    /// Statements observed by the latency histogram.
    pub fn latency_count(&self) -> u64 {
        self.latency_buckets.iter().sum()
    }
}

impl Metrics {
    pub(crate) fn commit(&self) {
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn abort(&self, kind: AbortKind) {
        let index = AbortKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
        self.aborts[index].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a commit's outcome.
    pub(crate) fn ended<T>(&self, result: &Result<T, crate::QueryError>) {
        match result {
            Ok(_) => self.commit(),
            Err(e) => self.abort(AbortKind::of(e)),
        }
    }

    pub(crate) fn statement(&self, took: Duration) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        let bucket = LATENCY_BUCKETS_US
            .iter()
            .position(|bound| us <= *bound)
            .unwrap_or(LATENCY_BUCKETS_US.len());
        self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us.fetch_add(us, Ordering::Relaxed);
    }

    pub(crate) fn connected(&self) {
        self.connections_open.fetch_add(1, Ordering::Relaxed);
        self.connections_total.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn disconnected(&self) {
        self.connections_open.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> MetricsSnapshot {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        MetricsSnapshot {
            commits: load(&self.commits),
            aborts: AbortKind::ALL
                .iter()
                .zip(&self.aborts)
                .map(|(kind, n)| (*kind, load(n)))
                .collect(),
            latency_buckets: self.latency_buckets.iter().map(load).collect(),
            latency_sum_us: load(&self.latency_sum_us),
            connections_open: self.connections_open.load(Ordering::Relaxed),
            connections_total: load(&self.connections_total),
        }
    }
}

/// Held by a connection: counts it open until dropped.
#[derive(Debug)]
pub(crate) struct OpenConnection(pub(crate) std::sync::Arc<Metrics>);

impl OpenConnection {
    pub(crate) fn new(metrics: std::sync::Arc<Metrics>) -> OpenConnection {
        metrics.connected();
        OpenConnection(metrics)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.disconnected();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_lands_in_its_bucket_and_connections_are_a_gauge() {
        let metrics = std::sync::Arc::new(Metrics::default());
        metrics.statement(Duration::from_micros(100));
        metrics.statement(Duration::from_micros(101));
        metrics.statement(Duration::from_secs(60));
        let open = OpenConnection::new(metrics.clone());
        let s = metrics.snapshot();
        assert_eq!(s.latency_buckets[0], 1);
        assert_eq!(s.latency_buckets[1], 1);
        assert_eq!(s.latency_buckets[LATENCY_BUCKETS_US.len()], 1);
        assert_eq!(s.latency_count(), 3);
        assert_eq!(s.latency_sum_us, 100 + 101 + 60_000_000);
        assert_eq!((s.connections_open, s.connections_total), (1, 1));
        drop(open);
        assert_eq!(metrics.snapshot().connections_open, 0);
        let conflict =
            crate::QueryError::from(crate::Error::Aborted(crate::AbortReason::WriteConflict {
                item: "v1:2".into(),
            }));
        metrics.ended::<()>(&Err(conflict));
        metrics.ended(&Ok(()));
        let s = metrics.snapshot();
        assert_eq!(s.commits, 1);
        assert_eq!(s.aborts[0], (AbortKind::WriteConflict, 1));
    }
}
