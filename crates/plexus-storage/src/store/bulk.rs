//! Bulk loads: a large commit installed into the storage's compact forms directly.
//!
//! WHAT
//! ====
//! `COPY`, `plexus import` and Python's `load_arrow` hand the commit pipeline one commit
//! with up to millions of new vertices and edges. Installed like any commit, every edge
//! would go through a topology memtable (one versioned entry per direction), the WAL would
//! carry every row once more, and a later flush and merges would rewrite the adjacency
//! into runs. [`Storage::install_bulk`] instead:
//!
//! ```text
//!   (caller: commit lock held, WAL rotated, every memtable frozen)
//!   checkpoint lock ─────────────────────────────────────────────────────────────
//!   1. flush every frozen memtable        commits before the load are now in runs
//!   2. install the rows at ts             invisible: readers start below ts
//!   3. write the adjacency as CSR runs    counting sort, one run per vertex range
//!      and, on a thread of its own, the checkpoint file ckpt-<ts> (every row at ts)
//!   LSM lock ─────────────────────────────────────────────────────────────────
//!   4. publish the runs (visible from ts)
//!   5. write the manifest naming ckpt-<ts> and the runs                     ← the switch
//!   ─────────────────────────────────────────────────────────────────────────────
//!   6. delete the WAL segments and checkpoints the new one replaced
//! ```
//!
//! The load never enters the WAL: its durable form is the checkpoint (rows) and the run
//! files (adjacency), and the manifest replacement in step 5 is the single point at which
//! it becomes part of the database on disk.
//!
//! INVARIANTS
//! ==========
//! - **All or nothing on disk.** Before step 5 the manifest names the previous checkpoint,
//!   the WAL segments after it and runs that hold no entry of the load (step 1 published
//!   them; the load's run files are not listed, and `open` deletes unlisted run files). After it, the checkpoint holds every row up to
//!   `ts` and the runs every edge up to `ts`. A crash anywhere recovers one state or the
//!   other; the fault-injection tests crash at every sync.
//! - **No manifest lists the load's runs early.** Maintenance publishes manifests under the
//!   LSM lock; the load holds it from publishing its runs (step 4) until its own manifest
//!   (step 5), so a manifest listing them also names the checkpoint holding their rows.
//! - **Readers.** Everything is installed at `ts`, which the caller makes visible only
//!   after this returns; rows carry `ts` as their creation timestamp and runs are visible
//!   from `ts`, so an older reader sees none of it before, during or after.
//! - **Failure.** An error after step 2 leaves memory holding rows no reader can see yet
//!   but that the disk may lack: the WAL is poisoned (the database refuses further writes
//!   until it is reopened), as after a failed checkpoint.
//!
//! COST
//! ====
//! Rows: one install per row, as a commit's (chunk latches, index inserts), staged vertices
//! ([`VertexBatch`](crate::VertexBatch)) read in place, the primary-key index grown once per
//! batch. Adjacency: two
//! counting sorts and the run files, one per direction, on two threads beside the one
//! writing the checkpoint; staged edges ([`EdgeBatch`]) are read in place by the
//! sorts, never copied into adjacency entries. The checkpoint rewrites every row of the database, not
//! only the load's — a load into a large database pays for the whole database once, as a
//! checkpoint does.

use super::{EdgeTable, PendingAdjacency, Storage, install_rows};
use crate::checkpoint;
use crate::lsm::{BULK_GROUP_ENTRIES, RunEntry};
use crate::record::{CommitRecord, EdgeBatch};
use plexus_types::{EdgeTableId, Result, Timestamp};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Each topology's new runs: (table, outgoing, runs).
type WrittenRuns = Vec<(Arc<EdgeTable>, bool, Vec<RunEntry>)>;

impl Storage {
    /// Installs `record` (new vertices and edges; see the module documentation) at `record.ts` and
    /// makes it durable through a checkpoint at that timestamp; `wal_start` is the WAL
    /// segment the caller rotated to. The caller holds the commit lock (no other commit
    /// installs meanwhile), froze every memtable after rotating, and makes `record.ts`
    /// visible only after this returns.
    pub fn install_bulk(
        &self,
        record: &CommitRecord,
        horizon: Timestamp,
        wal_start: u64,
    ) -> Result<()> {
        let _one_at_a_time = self.checkpoint_lock.lock();
        self.note_vertex_changes(record);
        let result = self.install_bulk_locked(record, horizon, wal_start);
        if let Err(e) = &result {
            self.wal
                .poison(format!("bulk load at {} failed: {e}", record.ts));
        }
        result?;
        self.installed_commits.fetch_add(1, Ordering::Relaxed);
        self.remove_before_checkpoint(record.ts, wal_start)
    }

    fn install_bulk_locked(
        &self,
        record: &CommitRecord,
        horizon: Timestamp,
        wal_start: u64,
    ) -> Result<()> {
        let ts = record.ts;
        self.flush_and_merge(false)?;
        let tables = self.live_tables();
        let pending = install_rows(&tables, record, horizon)?;
        // The runs' property columns are read at `ts` (see PROPERTY COLUMNS in `lsm`).
        self.installed_ts.store(ts, Ordering::Release);
        let mut table_ids: BTreeSet<EdgeTableId> = pending.by_table.keys().copied().collect();
        table_ids.extend(record.edge_batches.iter().map(|b| b.table));
        // The checkpoint file (step 5's rows) reads only the installed rows: it is written
        // while the runs are, and named by the manifest only after both are done.
        let name = checkpoint::checkpoint_name(ts);
        let (written, checkpoint) = std::thread::scope(|scope| {
            let checkpoint = scope.spawn(|| self.write_checkpoint_file(&name, ts));
            let written = self.write_runs_of(&tables.edge, &table_ids, &pending, record);
            let checkpoint = checkpoint.join();
            (
                written,
                checkpoint.unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            )
        });
        let written = written?;
        checkpoint?;
        let _lsm = self.lsm_lock.lock();
        for (table, outgoing, runs) in written {
            table.adjacency(outgoing).publish_bulk(runs, ts);
        }
        self.publish_checkpoint(name, ts, wal_start)
    }

    /// Step 3: each edge table's runs, both directions on two threads.
    fn write_runs_of(
        &self,
        tables: &[Arc<EdgeTable>],
        table_ids: &BTreeSet<EdgeTableId>,
        pending: &PendingAdjacency,
        record: &CommitRecord,
    ) -> Result<WrittenRuns> {
        let by_table = &pending.by_table;
        let ts = record.ts;
        let mut written = Vec::new();
        for &id in table_ids {
            let table = &tables[id as usize];
            let batches: Vec<&EdgeBatch> = (record.edge_batches.iter())
                .filter(|b| b.table == id)
                .collect();
            // One direction's runs: its own topology, files and arrays, so the two directions
            // are written on two threads (what the entries share is only read).
            let write = |direction: usize, outgoing: bool| -> Result<Vec<RunEntry>> {
                let ops = by_table.get(&id).map_or(&[][..], |d| &d[direction][..]);
                let entries = |visit: &mut dyn FnMut(u32, u32, u32)| {
                    ops.iter().for_each(|&(v, n, e)| visit(v, n, e));
                    for batch in &batches {
                        let ends = batch.src.iter().zip(&batch.dst);
                        for (row, (&s, &d)) in (batch.first..).zip(ends) {
                            match outgoing {
                                true => visit(s, d, row),
                                false => visit(d, s, row),
                            }
                        }
                    }
                };
                table.adjacency(outgoing).write_bulk_runs(
                    self.vfs.as_ref(),
                    self,
                    &self.config,
                    &entries,
                    (ts, BULK_GROUP_ENTRIES),
                )
            };
            let (out_runs, in_runs) = std::thread::scope(|scope| {
                let incoming = scope.spawn(|| write(1, false));
                let outgoing = write(0, true);
                (outgoing, incoming.join())
            });
            let in_runs = in_runs.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            written.push((table.clone(), true, out_runs?));
            written.push((table.clone(), false, in_runs?));
        }
        Ok(written)
    }
}
