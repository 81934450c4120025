//! The timestamp oracle and the registry of active snapshots.
//!
//! Commit timestamps are assigned by the commit pipeline (one at a time, under its lock).
//! The *visible* timestamp is the newest commit that every new snapshot may see: it advances
//! only past commits that are fully installed — and, in `fsync` mode, durable — so a reader
//! never sees commit 9 while commit 8 is half-way in.
//!
//! Every transaction and snapshot registers its read timestamp here; the minimum over them (and
//! the visible timestamp, since a new reader may start there at any moment) is the GC horizon;
//! the same minimum over read-write transactions only bounds the conflict summaries kept:
//! versions older than what a reader at the horizon needs may be dropped. Registration and the
//! horizon read happen under one mutex, so a reader that has read the visible timestamp is
//! registered before any horizon computed after that read.

use parking_lot::Mutex;
use plexus_types::Timestamp;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Oracle {
    visible_ts: AtomicU64,
    active: Mutex<Active>,
}

/// Registered readers by read timestamp: all of them (the GC horizon) and the read-write
/// transactions among them (who may still need conflict summaries; snapshots never validate).
/// One mutex for both, so a transaction is never in one and not yet in the other.
#[derive(Default)]
struct Active {
    readers: BTreeMap<Timestamp, u32>,
    transactions: BTreeMap<Timestamp, u32>,
}

fn add(map: &mut BTreeMap<Timestamp, u32>, ts: Timestamp) {
    *map.entry(ts).or_insert(0) += 1;
}

fn remove(map: &mut BTreeMap<Timestamp, u32>, ts: Timestamp) {
    let count = map.get_mut(&ts).expect("released reader was registered");
    *count -= 1;
    if *count == 0 {
        map.remove(&ts);
    }
}

/// Who a registered reader is: a read-write transaction, or a read-only snapshot.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ReaderKind {
    Transaction,
    Snapshot,
}

impl Oracle {
    pub fn new(recovered_ts: Timestamp) -> Self {
        Self {
            visible_ts: AtomicU64::new(recovered_ts),
            active: Mutex::new(Active::default()),
        }
    }

    /// Registers a new reader at the visible timestamp and returns that timestamp.
    pub fn register_reader(&self, kind: ReaderKind) -> Timestamp {
        let mut active = self.active.lock();
        let ts = self.visible_ts.load(Ordering::Acquire);
        add(&mut active.readers, ts);
        if kind == ReaderKind::Transaction {
            add(&mut active.transactions, ts);
        }
        ts
    }

    /// Registers a snapshot reader at a timestamp that is already protected (at or above the
    /// horizon), e.g. a checkpoint pinning the last commit while holding the commit lock.
    pub fn register_reader_at(&self, ts: Timestamp) {
        let mut active = self.active.lock();
        debug_assert!(
            ts >= self.horizon_locked(&active.readers),
            "registering below the horizon"
        );
        add(&mut active.readers, ts);
    }

    pub fn release_reader(&self, ts: Timestamp, kind: ReaderKind) {
        let mut active = self.active.lock();
        remove(&mut active.readers, ts);
        if kind == ReaderKind::Transaction {
            remove(&mut active.transactions, ts);
        }
    }

    pub fn visible_ts(&self) -> Timestamp {
        self.visible_ts.load(Ordering::Acquire)
    }

    pub fn advance_visible(&self, ts: Timestamp) {
        self.visible_ts.fetch_max(ts, Ordering::AcqRel);
    }

    /// The oldest timestamp any current or future reader may read at (the GC horizon).
    pub fn horizon(&self) -> Timestamp {
        self.horizon_locked(&self.active.lock().readers)
    }

    /// The oldest start timestamp any current or future read-write transaction may validate
    /// from: commit summaries at or below it are no longer needed.
    pub fn transaction_horizon(&self) -> Timestamp {
        self.horizon_locked(&self.active.lock().transactions)
    }

    fn horizon_locked(&self, active: &BTreeMap<Timestamp, u32>) -> Timestamp {
        let visible = self.visible_ts.load(Ordering::Acquire);
        active
            .keys()
            .next()
            .map_or(visible, |&oldest| oldest.min(visible))
    }

    /// Registered read-write transactions.
    pub fn transaction_count(&self) -> usize {
        self.active
            .lock()
            .transactions
            .values()
            .map(|&c| c as usize)
            .sum()
    }
}
