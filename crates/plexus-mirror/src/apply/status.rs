//! The mirror's status: a snapshot any thread can take while the mirror runs.
//!
//! Freshness is measured per source transaction as the time its epoch's graph commit
//! returned (the moment the rows became visible) minus the transaction's PostgreSQL commit
//! time, in milliseconds. The two clocks are the same machine's in tests and the demo; across
//! machines the figure includes their clock difference. The window keeps the last
//! [`FRESHNESS_WINDOW_SAMPLES`] samples of the last [`FRESHNESS_WINDOW_MS`].

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::change::Lsn;

/// Freshness samples kept at most.
pub const FRESHNESS_WINDOW_SAMPLES: usize = 10_000;
/// Age of the oldest freshness sample kept.
pub const FRESHNESS_WINDOW_MS: u64 = 60_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MirrorState {
    /// Connecting, creating the slot, copying the tables.
    #[default]
    Snapshot,
    Streaming,
    /// The connection to PostgreSQL was lost; reconnecting with backoff.
    Reconnecting,
    /// Stopped on request.
    Stopped,
    /// Stopped by an error (`MirrorStatus::message`).
    Failed,
}

impl fmt::Display for MirrorState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MirrorState::Snapshot => "snapshot",
            MirrorState::Streaming => "streaming",
            MirrorState::Reconnecting => "reconnecting",
            MirrorState::Stopped => "stopped",
            MirrorState::Failed => "failed",
        })
    }
}

/// A point-in-time copy of the mirror's status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MirrorStatus {
    pub state: MirrorState,
    /// Why the mirror is reconnecting or failed.
    pub message: Option<String>,
    pub slot: String,
    /// The end of the last source transaction committed in the graph.
    pub applied: Lsn,
    /// The last position confirmed to PostgreSQL (durable in the graph).
    pub confirmed: Lsn,
    pub source_txns: u64,
    pub epochs: u64,
    pub rows: u64,
    pub pending: usize,
    /// The first few pending edges, as `alias (key): missing what`.
    pub pending_listed: Vec<String>,
    pub freshness_p50_ms: Option<f64>,
    pub freshness_p99_ms: Option<f64>,
    pub freshness_max_ms: Option<f64>,
    /// Rows the initial copy read, per source table.
    pub snapshot_rows: BTreeMap<String, u64>,
}

impl fmt::Display for MirrorStatus {
    /// `streaming 1234 txns, applied 0/16B3A8C8, confirmed 0/16B3A8C8, pending 0,
    /// freshness p50 1.2 ms p99 3.4 ms`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} txns, applied {}, confirmed {}, pending {}",
            self.state, self.source_txns, self.applied, self.confirmed, self.pending
        )?;
        if let (Some(p50), Some(p99)) = (self.freshness_p50_ms, self.freshness_p99_ms) {
            write!(f, ", freshness p50 {p50:.1} ms p99 {p99:.1} ms")?;
        }
        if let Some(message) = &self.message {
            write!(f, " ({message})")?;
        }
        Ok(())
    }
}

#[derive(Debug, Default)]
struct Shared {
    status: MirrorStatus,
    /// (when recorded, freshness in ms)
    freshness: VecDeque<(Instant, f64)>,
}

/// A handle on a running mirror's status; cheap to clone and to read.
#[derive(Clone, Debug, Default)]
pub struct MirrorHandle {
    shared: Arc<Mutex<Shared>>,
}

fn percentile(sorted: &[f64], fraction: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted.get(rank.min(sorted.len() - 1)).copied()
}

impl MirrorHandle {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The status now (freshness percentiles computed over the window).
    pub fn status(&self) -> MirrorStatus {
        let mut shared = self.lock();
        let horizon = Duration::from_millis(FRESHNESS_WINDOW_MS);
        while shared
            .freshness
            .front()
            .is_some_and(|(at, _)| at.elapsed() > horizon)
        {
            shared.freshness.pop_front();
        }
        let mut sorted: Vec<f64> = shared.freshness.iter().map(|(_, ms)| *ms).collect();
        sorted.sort_by(f64::total_cmp);
        let mut status = shared.status.clone();
        status.freshness_p50_ms = percentile(&sorted, 0.50);
        status.freshness_p99_ms = percentile(&sorted, 0.99);
        status.freshness_max_ms = sorted.last().copied();
        status
    }

    pub(crate) fn update(&self, change: impl FnOnce(&mut MirrorStatus)) {
        change(&mut self.lock().status);
    }

    pub(crate) fn record_freshness(&self, samples_ms: impl IntoIterator<Item = f64>) {
        let mut shared = self.lock();
        let now = Instant::now();
        for ms in samples_ms {
            if shared.freshness.len() == FRESHNESS_WINDOW_SAMPLES {
                shared.freshness.pop_front();
            }
            shared.freshness.push_back((now, ms));
        }
        debug_assert!(shared.freshness.len() <= FRESHNESS_WINDOW_SAMPLES);
    }
}
