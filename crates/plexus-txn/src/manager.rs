//! The commit pipeline and database-wide transaction state.
//!
//! COMMIT
//! ======
//! ```text
//!   build redo record from the write set         (no lock)
//!   ── commit lock ──────────────────────────────
//!   validate against summaries of later commits  (SI writes; SERIALIZABLE also reads)
//!   re-check primary keys against the newest state
//!   ts = last_ts + 1
//!   install into storage at ts                    (invisible: readers start at visible_ts < ts)
//!   append the record to the WAL buffer           (after install, so a flusher that makes ts
//!                                                  durable can never expose a half install)
//!   remember the summary if a concurrent transaction may need it
//!   ── unlock ───────────────────────────────────
//!   fsync mode: wait for the group-commit flush, then advance visible_ts to the durable ts
//!   other modes: visible_ts was advanced under the lock
//! ```
//! Installing takes only short per-chunk and per-segment latches, never a lock held for a
//! transaction's lifetime. An install or WAL failure poisons the database (see `wal`).
//!
//! CHECKPOINT
//! ==========
//! Under the commit lock the WAL is rotated and the last commit timestamp pinned as a reader;
//! the checkpoint is then written without blocking commits. Checkpoints also run automatically
//! after `checkpoint_wal_bytes` of WAL, in the committing thread that crossed the threshold.

use crate::oracle::{Oracle, ReaderKind};
use crate::protection::Protections;
use crate::staged_keys::StagedKeys;
use crate::validation::{self, CommitSummary, MAX_RETAINED_SUMMARIES};
use crate::write_set::WriteSet;
use parking_lot::Mutex;
use plexus_storage::{Catalog, EdgeBatch, Statistics, Storage, StorageStats, WriteOp};
use plexus_types::{AbortReason, Config, DurabilityMode, Error, Result, Timestamp, VertexId};
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::validation::ReadItem;

/// Longest a committer waits for flushes to catch up before going on regardless.
pub const WRITE_STALL_MAX_MS: u64 = 10_000;
/// Bound on the maintenance rounds of one [`TxnManager::settle_lsm`]: each round runs up to
/// 64 merges per adjacency, so this is far above what any merge cascade needs.
const MAX_SETTLE_ROUNDS: usize = 100;

struct CommitState {
    last_ts: Timestamp,
    summaries: VecDeque<Arc<CommitSummary>>,
    /// Summaries of commits at or below this were not kept (no one could need them) or were
    /// dropped by the bound; transactions that started below it cannot be validated.
    forgotten_up_to: Timestamp,
}

pub struct TxnManager {
    storage: Arc<Storage>,
    config: Config,
    pub(crate) oracle: Oracle,
    commit: Mutex<CommitState>,
    checkpoint_running: AtomicBool,
    /// Labels and relationship types followers own (see `protection`).
    protections: Protections,
}

/// What a committing transaction hands to the pipeline.
pub(crate) struct CommitRequest {
    pub start_ts: Timestamp,
    pub serializable: bool,
    pub writes: WriteSet,
    pub reads: HashSet<ReadItem>,
}

impl TxnManager {
    pub fn new(storage: Arc<Storage>, config: Config) -> Arc<Self> {
        let recovered = storage.recovered_ts();
        Arc::new(Self {
            storage,
            config,
            oracle: Oracle::new(recovered),
            commit: Mutex::new(CommitState {
                last_ts: recovered,
                summaries: VecDeque::new(),
                forgotten_up_to: recovered,
            }),
            checkpoint_running: AtomicBool::new(false),
            protections: Protections::default(),
        })
    }

    /// The labels and relationship types followers protect (see `protection`).
    pub fn protections(&self) -> &Protections {
        &self.protections
    }

    /// The storage under this manager: the crate's own way in. Layers above reach storage
    /// only through the manager's operations and [`Transaction`](crate::Transaction) /
    /// [`GraphSnapshot`](crate::GraphSnapshot).
    pub(crate) fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// The current catalog (an immutable copy).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.storage.catalog()
    }

    /// The planner's table statistics, as the tables are now (O(tables); see
    /// `plexus_storage::Statistics`).
    pub fn statistics(&self) -> Statistics {
        self.storage.statistics()
    }

    /// The disk tier's sizes and counters and the row and index caches' figures.
    pub fn storage_stats(&self) -> StorageStats {
        self.storage.storage_stats()
    }

    /// Writes the resident part of every index to run files now, whatever the index cache
    /// budget; returns how many runs were written.
    pub fn spill_indexes(&self) -> Result<usize> {
        self.storage.spill_indexes()
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn visible_ts(&self) -> Timestamp {
        self.oracle.visible_ts()
    }

    pub(crate) fn commit(&self, request: CommitRequest) -> Result<Timestamp> {
        let catalog = self.storage.catalog();
        let (mut record, keys, source) = request.writes.into_record();
        let mut state = self.commit.lock();
        if let Some(reason) = self.storage.wal_poisoned() {
            return Err(Error::Poisoned(reason));
        }
        if request.start_ts < state.forgotten_up_to {
            return Err(Error::Aborted(AbortReason::TooOld));
        }
        // Newest first, stopping at the transaction's start: the cost is the number of commits
        // concurrent with it, not the number of summaries kept.
        let concurrent = state
            .summaries
            .iter()
            .rev()
            .take_while(|s| s.ts > request.start_ts);
        for theirs in concurrent {
            let mut verdict = validation::check_writes(&keys, theirs, &catalog);
            if request.serializable && verdict.is_ok() {
                verdict = validation::check_reads(&request.reads, theirs, &catalog);
            }
            if let Err(abort) = verdict {
                // Return only once the winner is visible, so that an immediate retry starts
                // from a snapshot that includes it instead of failing the same way again.
                let winner_lsn = theirs.lsn;
                drop(state);
                self.wait_visible(winner_lsn)?;
                return Err(abort);
            }
        }
        self.check_primary_keys(source.pk_claims(), state.last_ts, &record)?;
        let ts = state.last_ts + 1;
        record.ts = ts;
        let horizon = self.oracle.horizon();
        let logged = self
            .storage
            .install(&record, horizon)
            .and_then(|()| self.storage.log_commit(&record));
        let lsn = match logged {
            Ok(lsn) => lsn,
            Err(e) => {
                self.storage
                    .poison_wal(format!("commit {ts} could not be installed or logged: {e}"));
                return Err(e);
            }
        };
        state.last_ts = ts;
        if self.storage.active_bytes() as u64 > self.config.memtable_budget_bytes {
            // Under the commit lock, so no install lands in a memtable after it froze.
            self.storage.freeze_all();
        }
        // A summary is only read by a transaction that started before `ts`. With no other
        // transaction registered and visibility advancing right here (non-fsync modes), no one
        // can; anyone who registers in between is told to retry (TooOld) rather than missed.
        let fsync = self.config.durability == DurabilityMode::Fsync;
        if fsync || self.oracle.transaction_count() > 1 {
            let mut summary = source.build(&record, &catalog);
            summary.lsn = lsn;
            state.summaries.push_back(Arc::new(summary));
        } else {
            state.forgotten_up_to = ts;
        }
        self.prune_summaries(&mut state, self.oracle.transaction_horizon());
        if !fsync {
            self.oracle.advance_visible(ts);
        }
        drop(state);
        if fsync {
            self.wait_visible(lsn)?;
        }
        Ok(ts)
    }

    /// Commits a bulk load's write set (new vertices and edges only) through the storage's
    /// bulk install (see `plexus_storage`'s `store::bulk`): validated like a commit — a
    /// primary key that a concurrent commit claimed first, or an endpoint it deleted,
    /// aborts the load — then installed with its adjacency written straight into runs and
    /// made durable by a checkpoint at its timestamp rather than by the WAL. Commits wait
    /// for the commit lock meanwhile. Its summary (for transactions still running) is
    /// coarse: per table, label and edge type rather than per entity (see
    /// `SummarySource::build_bulk`).
    pub(crate) fn commit_bulk(&self, request: CommitRequest) -> Result<Timestamp> {
        let catalog = self.storage.catalog();
        let (mut record, keys, source) = request.writes.into_bulk_record();
        assert!(
            record.ops.iter().all(|op| matches!(
                op,
                WriteOp::CreateVertex { .. }
                    | WriteOp::CreateEdge { .. }
                    | WriteOp::SetOrigin { .. }
            )),
            "a bulk load only creates (and may set a replication origin)"
        );
        let mut state = self.commit.lock();
        if let Some(reason) = self.storage.wal_poisoned() {
            return Err(Error::Poisoned(reason));
        }
        if request.start_ts < state.forgotten_up_to {
            return Err(Error::Aborted(AbortReason::TooOld));
        }
        let concurrent: Vec<Arc<CommitSummary>> = state
            .summaries
            .iter()
            .filter(|s| s.ts > request.start_ts)
            .cloned()
            .collect();
        if !concurrent.is_empty() {
            let deleted: HashSet<VertexId> = concurrent
                .iter()
                .flat_map(|s| s.deleted.iter())
                .filter_map(|e| match e {
                    validation::Entity::Vertex(v) => Some(*v),
                    validation::Entity::Edge(_) => None,
                })
                .collect();
            let staged = (record.edge_batches.iter()).flat_map(EdgeBatch::endpoints);
            let mut endpoints = keys.new_edge_endpoints.iter().copied().chain(staged);
            if !deleted.is_empty()
                && let Some(v) = endpoints.find(|v| deleted.contains(v))
            {
                return Err(Error::Aborted(AbortReason::WriteConflict {
                    item: format!("vertex {v} (new edge's endpoint was deleted concurrently)"),
                }));
            }
            // Keys committed since the load began; everything older was checked as it was
            // added.
            self.check_primary_keys(source.pk_claims(), state.last_ts, &record)?;
            check_staged_keys(source.staged_pk(), &concurrent, &catalog)?;
        }
        let ts = state.last_ts + 1;
        record.ts = ts;
        let wal_start = self.storage.rotate_wal()?;
        self.storage.freeze_all();
        self.storage
            .install_bulk(&record, self.oracle.horizon(), wal_start)?;
        state.last_ts = ts;
        if self.config.durability == DurabilityMode::Fsync || self.oracle.transaction_count() > 1 {
            state
                .summaries
                .push_back(Arc::new(source.build_bulk(&record, &catalog)));
        } else {
            state.forgotten_up_to = ts;
        }
        self.prune_summaries(&mut state, self.oracle.transaction_horizon());
        // Durable already: the checkpoint holds every commit up to `ts`.
        self.oracle.advance_visible(ts);
        Ok(ts)
    }

    /// Fsync mode: waits until the WAL is durable up to `lsn` and advances visibility to it.
    /// (In the other modes commits are visible as soon as they are installed.)
    fn wait_visible(&self, lsn: u64) -> Result<()> {
        if self.config.durability == DurabilityMode::Fsync {
            self.storage.wait_durable(lsn)?;
            self.oracle.advance_visible(self.storage.durable_ts());
        }
        Ok(())
    }

    fn prune_summaries(&self, state: &mut CommitState, horizon: Timestamp) {
        while let Some(front) = state.summaries.front() {
            let unneeded = front.ts <= horizon;
            if !unneeded && state.summaries.len() <= MAX_RETAINED_SUMMARIES {
                break;
            }
            if !unneeded {
                state.forgotten_up_to = front.ts;
            }
            state.summaries.pop_front();
        }
    }

    /// Final uniqueness check of claimed primary keys against everything committed so far.
    fn check_primary_keys(
        &self,
        claims: &[(u32, plexus_types::Value, VertexId)],
        newest: Timestamp,
        record: &plexus_storage::CommitRecord,
    ) -> Result<()> {
        for (table, key, mine) in claims {
            let table_ref = self.storage.vertex_table(*table)?;
            if let Some(row) = table_ref.lookup_pk(key, newest)? {
                let holder = VertexId::new(*table, row);
                let released_here = record.ops.iter().any(|op| match op {
                    plexus_storage::WriteOp::DeleteVertex { id } => *id == holder,
                    plexus_storage::WriteOp::SetVertexProp { id, key: k, .. } => {
                        *id == holder && Some(*k) == table_ref.pk_key()
                    }
                    _ => false,
                });
                if holder != *mine && !released_here {
                    return Err(Error::Aborted(AbortReason::WriteConflict {
                        item: format!(
                            "primary key {key} of table '{}'",
                            self.storage.catalog().table_name(*table)
                        ),
                    }));
                }
            }
        }
        Ok(())
    }

    /// Runs `f` with the commit lock held: no commit installs meanwhile (index builds).
    pub fn with_commits_paused<T>(&self, f: impl FnOnce() -> T) -> T {
        let _state = self.commit.lock();
        f()
    }

    /// Takes a checkpoint (see CHECKPOINT). Concurrent calls are serialised.
    pub fn checkpoint(&self) -> Result<()> {
        let (wal_start, ts) = {
            let state = self.commit.lock();
            let wal_start = self.storage.rotate_wal()?;
            // Every memtable now holds exactly the commits up to `last_ts`; the checkpoint
            // flushes them to runs.
            self.storage.freeze_all();
            self.oracle.register_reader_at(state.last_ts);
            (wal_start, state.last_ts)
        };
        let result = self.storage.write_checkpoint(ts, wal_start);
        self.oracle.release_reader(ts, ReaderKind::Snapshot);
        result?;
        self.maintain();
        self.run_maintenance()
    }

    /// Freezes every topology memtable and flushes it to CSR runs now (then merges as the
    /// policy asks), regardless of the memory budget.
    pub fn flush_memtables(&self) -> Result<()> {
        {
            let _state = self.commit.lock();
            self.storage.freeze_all();
        }
        self.run_maintenance()
    }

    /// One round of maintenance: freeze read-heavy memtables, flush frozen ones, merge runs,
    /// retire what no reader needs, evict cold row chunks over the row cache budget (the
    /// facade's background thread calls this).
    pub fn run_maintenance(&self) -> Result<()> {
        let horizon = self.oracle.horizon();
        self.maintenance_round()?;
        self.storage.evict_rows(horizon).map(drop)
    }

    /// Evicts cold row chunks now while the row cache is over its budget (see
    /// `plexus_storage::rowcache`), then compacts the spill file if dead pages dominate;
    /// returns how many chunks were evicted.
    pub fn evict_rows(&self) -> Result<usize> {
        self.storage.evict_rows(self.oracle.horizon())
    }

    /// A round of spill-file compaction now, whenever the spill files hold dead pages (see
    /// COMPACTION in `plexus_storage::rowcache`); returns the dead bytes reclaimed.
    pub fn compact_row_spill(&self) -> Result<u64> {
        self.storage.compact_spill_now()
    }

    /// Maintenance rounds in the caller's thread until one finds nothing to flush or merge
    /// (at most `MAX_SETTLE_ROUNDS`); returns the rounds that did work.
    pub fn settle_lsm(&self) -> Result<usize> {
        for round in 0..MAX_SETTLE_ROUNDS {
            if !self.maintenance_round()? {
                return Ok(round);
            }
        }
        Ok(MAX_SETTLE_ROUNDS)
    }

    /// Freezes the memtables scans made read-heavy (under the commit lock, so no commit
    /// straddles the freeze), then one disk-tier round; whether it flushed or merged.
    fn maintenance_round(&self) -> Result<bool> {
        if self.storage.has_read_heavy_memtable() {
            let _state = self.commit.lock();
            self.storage.freeze_read_heavy_memtables();
        }
        self.storage.maintain_lsm(self.oracle.horizon())
    }

    /// After a commit: automatic checkpoint, and the disk tier's share of the work — inline
    /// when `background_maintenance` is off, otherwise only backpressure: while memtables
    /// (active, frozen and flushed-but-not-yet-retired) hold more than twice the budget, the
    /// committer waits (at most `WRITE_STALL_MAX_MS`) for the background flushes. With the
    /// active memtable frozen past the budget, memtables stay within about twice the budget
    /// plus one commit.
    pub(crate) fn after_commit(&self) -> Result<()> {
        self.maybe_checkpoint()?;
        // The commit is durable and visible: a failed spill write must not report it as failed.
        // The chunk stays resident and the failure is counted (`spill_write_errors`); the next
        // round, or background maintenance (which returns the error), tries again.
        if let Err(e) = self.storage.evict_rows_after_commit(self.oracle.horizon()) {
            debug_assert!(self.storage.row_cache_stats().spill_write_errors > 0, "{e}");
        }
        if self.storage.frozen_bytes() == 0 {
            return Ok(());
        }
        if !self.config.background_maintenance {
            return self.run_maintenance();
        }
        let limit = self.config.memtable_budget_bytes.saturating_mul(2);
        for _ in 0..WRITE_STALL_MAX_MS {
            if self.storage.memtable_bytes() as u64 <= limit {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Ok(())
    }

    /// Garbage-collects versions no reader needs and compacts the topology.
    pub fn maintain(&self) {
        self.storage.maintain(self.oracle.horizon());
    }

    /// Runs a checkpoint if enough WAL accumulated and no other checkpoint is running.
    pub(crate) fn maybe_checkpoint(&self) -> Result<()> {
        let threshold = self.config.checkpoint_wal_bytes;
        if threshold == 0 || self.storage.wal_bytes_since_checkpoint() < threshold {
            return Ok(());
        }
        if self.checkpoint_running.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let result = self.checkpoint();
        self.checkpoint_running.store(false, Ordering::Release);
        result
    }

    /// Replication origin `name`'s newest committed position and the timestamp of the commit
    /// that set it (see `Transaction::set_origin`).
    pub fn replication_origin(&self, name: &str) -> Option<(u64, Timestamp)> {
        self.storage.origin(name)
    }

    /// The newest commit timestamp the WAL holds durably (fsynced).
    pub fn durable_ts(&self) -> Timestamp {
        self.storage.durable_ts()
    }

    /// Writes buffered WAL records out (with fsync when `sync`); used by the background
    /// flusher of the `periodic` and `none` modes, and at close.
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        self.storage.flush_wal(sync)?;
        if sync {
            self.oracle.advance_visible(self.storage.durable_ts());
        }
        Ok(())
    }
}

/// Fails if a commit in `concurrent` claimed one of the keys of a load's staged vertices
/// (first committer wins). The concurrent commits' claims are looked up among the load's —
/// a handful each, where checking each of the load's keys against the index would cost a
/// lookup per node.
fn check_staged_keys(
    staged: &StagedKeys,
    concurrent: &[Arc<CommitSummary>],
    catalog: &Catalog,
) -> Result<()> {
    if staged.is_empty() {
        return Ok(());
    }
    for theirs in concurrent {
        let claimed = (theirs.pk.iter())
            .find(|(table, key)| staged.contains(*table, key))
            .cloned()
            .or_else(|| (theirs.staged_pk.as_ref()).and_then(|other| staged.common_key(other)));
        if let Some((table, key)) = claimed {
            return Err(Error::Aborted(AbortReason::WriteConflict {
                item: format!("primary key {key} of table '{}'", catalog.table_name(table)),
            }));
        }
    }
    Ok(())
}
