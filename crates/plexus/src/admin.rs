//! Maintenance operations: run now, in the caller's thread, what the database otherwise does on
//! its own.
//!
//! WHAT RUNS BY ITSELF
//! ===================
//! A database keeps its memory within the budgets of [`Config`](crate::Config) without being
//! asked: commits and the background maintenance thread (`Config::background_maintenance`)
//! flush topology memtables to CSR runs and merge runs as the merge policy asks, evict cold
//! row chunks to the row cache's spill files and compact those files when dead pages dominate,
//! and commits that take the indexes over `index_cache_bytes` spill them to run files.
//!
//! ```text
//!   trigger                       work                           forced here by
//!   ───────────────────────────── ────────────────────────────── ─────────────────────
//!   maintenance tick, reads       merges of CSR runs, freezes   merge_runs
//!   row cache over its budget     evict cold row chunks          evict_rows
//!   spill files mostly dead       copy live pages, delete files  compact_row_spill
//!   indexes over their budget     write index entries to runs    spill_indexes
//! ```
//!
//! WHY FORCE IT
//! ============
//! An operator may want the work done at a moment of their choosing (before a benchmark, after
//! a bulk load, before measuring memory) or with background maintenance turned off; a test
//! wants it done at a known point so that it can check what follows. Each operation is safe at
//! any time, concurrently with transactions, and changes no visible data — only where it lives
//! (memory, runs, spill files). Each returns how much work it did, or the error it met; a failed
//! eviction or spill write leaves the data where it was (in memory), so that error costs
//! nothing but the work not done.
//!
//! NOT HERE
//! ========
//! Flushing all memtables ([`Database::flush`]), checkpoints ([`Database::checkpoint`]) and
//! version garbage collection ([`Database::compact`]) are ordinary `Database` methods; disk-tier
//! figures are [`Database::storage_stats`].

use crate::Database;
use plexus_types::Result;

/// Runs the CSR-run merges the merge policy asks for until it asks for none (normally the
/// background maintenance thread does this within a second; the elastic policy also asks for
/// merges of ranges that reads have made read-heavy, and flushes memtables they made
/// read-heavy). Returns the maintenance rounds that did work. Other memtables are not flushed:
/// see [`Database::flush`].
pub fn merge_runs(db: &Database) -> Result<usize> {
    db.manager.settle_lsm()
}

/// Evicts cold row chunks to the spill file while the row cache holds more than
/// `Config::row_cache_bytes` (this also happens after commits and in background maintenance),
/// then runs a round of spill-file compaction if dead pages dominate. Returns how many chunks
/// were evicted; a failed spill write is returned and leaves the chunk in memory, and a spill
/// page that fails its checks is a `Corruption` error.
pub fn evict_rows(db: &Database) -> Result<usize> {
    db.manager.evict_rows()
}

/// Compacts the row cache's spill files if they hold any dead pages, whatever the thresholds
/// background maintenance waits for: live pages are copied to a new file (at most
/// `SPILL_COMPACT_ROUND_MAX_BYTES` per call; a chunk being read keeps its page until a later
/// call) and files no chunk refers to are deleted. Returns the dead bytes reclaimed; see
/// `StorageStats::row_cache` and `plexus_storage::rowcache`.
pub fn compact_row_spill(db: &Database) -> Result<u64> {
    db.manager.compact_row_spill()
}

/// Writes the resident part of every index (primary keys and secondary indexes) to run files,
/// whatever `Config::index_cache_bytes` (this also happens whenever an insert takes the indexes
/// over that budget). Returns how many runs were written; a failed write is returned and leaves
/// the entries in memory. See `StorageStats::index_cache` and `plexus_storage::indexcache`.
pub fn spill_indexes(db: &Database) -> Result<usize> {
    db.manager.spill_indexes()
}
