//! `Database`: opening, locking, transactions, snapshots, checkpoints, closing.
//!
//! One process at a time: `open` takes an exclusive advisory lock on `<dir>/LOCK` and refuses
//! with `Error::AlreadyOpen` if another process holds it. In the `periodic` and `none`
//! durability modes a background thread flushes the WAL every `sync_interval_ms`; it stops when
//! the database is dropped, after a final flush with fsync.

use crate::attached::{AttachedGraphs, GraphFormat};
use crate::extensions::{DatabaseHandle, Extensions};
use crate::follower_status::{FollowerStatuses, StatusFn};
use crate::settings::Settings;
use parking_lot::{Condvar, Mutex};
use plexus_exec::Procedure;
use plexus_ingest::{ExportDir, ImportDir};
use plexus_storage::{OsVfs, RecoveryReport, Storage, StorageStats, Vfs};
use plexus_txn::{GraphSnapshot, IndexOn, Protection, Transaction, TxnManager, VertexTableSpec};
use plexus_types::{
    Config, DataType, DurabilityMode, EdgeTableId, Error, IsolationLevel, Result, Timestamp,
    VertexTableId,
};
use std::collections::HashSet;
use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Database {
    /// Shared with `crate::admin`, whose maintenance operations call into it directly.
    pub(crate) manager: Arc<TxnManager>,
    /// The effective settings (fixed while open) and where each came from.
    settings: Arc<Settings>,
    /// Where `LOAD CSV` reads files from (`import_directory`, resolved when opening).
    import_dir: Option<Arc<ImportDir>>,
    /// Where statements write files (`export_directory`, resolved when opening).
    pub(crate) export_dir: Option<Arc<ExportDir>>,
    /// Procedures front ends registered (`crate::extensions`).
    pub(crate) extensions: Arc<Extensions>,
    /// Graph formats front ends registered and the graphs attached (`crate::attached`).
    attached: Arc<AttachedGraphs>,
    report: RecoveryReport,
    /// Replication origins a follower holds (see `claim_replication_origin`).
    origin_claims: Arc<Mutex<HashSet<String>>>,
    /// The followers' status functions (`CALL db.mirror.status()`).
    followers: Arc<FollowerStatuses>,
    /// Commits, aborts, statement latency and connections (`crate::metrics`).
    metrics: Arc<crate::metrics::Metrics>,
    /// Background threads: the WAL flusher (periodic/none modes) and disk-tier maintenance.
    workers: Vec<Worker>,
    closed: bool,
    _lock: Option<File>,
}

/// A follower's hold on a replication origin (see [`Database::claim_replication_origin`]):
/// the follower writes through it and may protect the labels and relationship types it owns
/// from other writers. Released, with its protections, on drop.
pub struct OriginClaim {
    name: String,
    claims: Arc<Mutex<HashSet<String>>>,
    manager: Arc<TxnManager>,
    followers: Arc<FollowerStatuses>,
}

impl OriginClaim {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Makes `labels` and `edge_types` read-only to every transaction but this follower's
    /// (see [`OriginClaim::begin`]) until the claim is dropped; `reason` completes the error
    /// message ("label :Person is read-only here: it is {reason}; change the source
    /// instead"). Replaces an earlier protection of this claim.
    pub fn protect(&self, labels: &[String], edge_types: &[String], reason: &str) {
        self.manager.protections().set(Protection {
            owner: self.name.clone(),
            labels: labels.iter().cloned().collect(),
            edge_types: edge_types.iter().cloned().collect(),
            reason: reason.to_owned(),
        });
    }

    /// A snapshot-isolation transaction writing for this follower: it may write what the
    /// claim protects.
    pub fn begin(&self) -> Transaction {
        let mut tx = plexus_txn::begin(&self.manager, IsolationLevel::Snapshot);
        tx.follow(&self.name);
        tx
    }

    /// Publishes this follower's status to `CALL db.mirror.status()` (one row per follower;
    /// `status` returns (column, value) pairs, columns from [`crate::MIRROR_STATUS_COLUMNS`])
    /// until the claim is dropped.
    pub fn publish_status(&self, status: StatusFn) {
        self.followers.set(&self.name, status);
    }

    /// A bulk load writing for this follower (its initial copy).
    pub fn bulk_load(&self) -> crate::BulkLoad {
        crate::BulkLoad::new(self.begin())
    }
}

impl Drop for OriginClaim {
    fn drop(&mut self) {
        self.manager.protections().clear(&self.name);
        self.followers.remove(&self.name);
        self.claims.lock().remove(&self.name);
    }
}

/// A background thread running `job` every interval until stopped.
struct Worker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

/// Disk-tier maintenance (flushes, merges, retirement) runs this often when nothing wakes it.
const MAINTENANCE_INTERVAL_MS: u64 = 10;

impl Database {
    /// Opens the database in directory `path`, creating it if absent, and recovers it, with
    /// `config` exactly as given (`plexus.toml` is not read: see [`Database::open_settings`]).
    pub fn open(path: impl AsRef<Path>, config: Config) -> Result<Database> {
        Self::open_settings(path, Settings::from_config(config))
    }

    /// Opens the database in directory `path` with `settings`, typically
    /// `Settings::load(path)?` (defaults and the directory's `plexus.toml`) with overrides set
    /// on it; `SHOW SETTINGS` then lists where each value came from.
    pub fn open_settings(path: impl AsRef<Path>, settings: Settings) -> Result<Database> {
        let path = path.as_ref();
        let vfs = OsVfs::new(path)?;
        let lock = lock_directory(path)?;
        let mut db = Self::open_vfs_settings(Arc::new(vfs), settings, Some(path))?;
        db._lock = Some(lock);
        Ok(db)
    }

    /// Opens a database that lives in this process's memory only: nothing is written to disk,
    /// nothing is durable, and everything is gone when the `Database` is dropped. Everything
    /// else behaves as for [`open`](Self::open) with the same `config` — transactions,
    /// indexes, checkpoints (kept in memory too) and the memory budgets, whose "spills" go to
    /// memory. Meant for scratch graphs, caches of derived data and tests; no lock is taken,
    /// since no other process can see the database. Known cost: the files are held by the
    /// tests' fault-injecting `Vfs`, which keeps a second copy of each file (what a crash would
    /// leave) and copies a file at each sync — about twice the bytes of the on-disk form; a
    /// plain in-memory `Vfs` would halve that.
    pub fn open_in_memory(config: Config) -> Result<Database> {
        Self::open_in_memory_settings(Settings::from_config(config))
    }

    /// [`open_in_memory`](Self::open_in_memory) with `settings` (e.g. an `import_directory`
    /// for `LOAD CSV`, which a database in memory otherwise lacks).
    pub fn open_in_memory_settings(settings: Settings) -> Result<Database> {
        let vfs = Arc::new(plexus_storage::FaultVfs::new());
        Self::open_vfs_settings(vfs, settings, None)
    }

    /// Opens a database stored in any [`Vfs`] (tests use the fault-injecting
    /// [`crate::testing::FaultVfs`]). No lock.
    pub fn open_with_vfs(vfs: Arc<dyn Vfs>, config: Config) -> Result<Database> {
        Self::open_vfs_settings(vfs, Settings::from_config(config), None)
    }

    /// `dir`: the database directory (`None` in memory), where the import directory is.
    fn open_vfs_settings(
        vfs: Arc<dyn Vfs>,
        settings: Settings,
        dir: Option<&Path>,
    ) -> Result<Database> {
        let import_dir = settings.import_dir(dir)?;
        let export_dir = settings.export_dir(dir)?;
        let config = settings.config().clone();
        let (storage, report) = Storage::open(vfs, &config)?;
        let manager = TxnManager::new(Arc::new(storage), config.clone());
        let mut workers = Vec::new();
        if config.durability != DurabilityMode::Fsync {
            let sync = config.durability == DurabilityMode::Periodic;
            // An error poisons the WAL; committers see it on their next commit.
            let job = move |m: &TxnManager| drop(m.flush_wal(sync));
            workers.push(Worker::start(
                &manager,
                "plexus-wal-flusher",
                config.sync_interval_ms,
                job,
            ));
        }
        if config.background_maintenance {
            // An error poisons the database; committers see it on their next commit.
            let job = |m: &TxnManager| drop(m.run_maintenance());
            workers.push(Worker::start(
                &manager,
                "plexus-maintenance",
                MAINTENANCE_INTERVAL_MS,
                job,
            ));
        }
        Ok(Database {
            manager,
            import_dir,
            export_dir,
            settings: Arc::new(settings),
            metrics: Arc::default(),
            report,
            origin_claims: Arc::default(),
            followers: Arc::default(),
            extensions: Arc::default(),
            attached: Arc::default(),
            workers,
            closed: false,
            _lock: None,
        })
    }

    /// The counters of this database's connections (see `crate::metrics`).
    pub fn metrics(&self) -> crate::metrics::MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// What recovery found when this database was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.report
    }

    /// Opens a Cypher connection (auto-commit until `BEGIN`).
    pub fn connect(&self) -> crate::Connection {
        let mut connection = crate::Connection::new(
            self.manager.clone(),
            self.settings.clone(),
            self.import_dir.clone(),
            self.export_dir.clone(),
            self.followers.clone(),
            self.metrics.clone(),
            self.attached.clone(),
        );
        for procedure in self.extensions.procedures() {
            connection.register_procedure(procedure);
        }
        connection
    }

    /// Begins a snapshot-isolation transaction.
    /// Begins a transaction at [`Config::default_isolation`] (snapshot unless configured).
    pub fn begin(&self) -> Transaction {
        self.begin_with(self.manager.config().default_isolation)
    }

    pub fn begin_with(&self, isolation: IsolationLevel) -> Transaction {
        plexus_txn::begin(&self.manager, isolation)
    }

    // ---- replication origins ----------------------------------------------------------------

    /// Replication origin `name`'s committed position and the timestamp of the commit that
    /// set it: how far a follower of another system (the PostgreSQL mirror) has applied it.
    /// The position is stored in the same commit as the writes that applied it
    /// ([`Transaction::set_origin`]), so after a crash it is exactly the recovered graph's.
    pub fn replication_origin(&self, name: &str) -> Option<(u64, Timestamp)> {
        self.manager.replication_origin(name)
    }

    /// Claims origin `name` for this follower: one follower writes an origin at a time.
    /// The claim ends when the returned value is dropped.
    pub fn claim_replication_origin(&self, name: &str) -> Result<OriginClaim> {
        let mut claimed = self.origin_claims.lock();
        if !claimed.insert(name.to_owned()) {
            return Err(Error::InvalidArgument(format!(
                "replication origin '{name}' is already being followed in this database"
            )));
        }
        Ok(OriginClaim {
            name: name.to_owned(),
            claims: self.origin_claims.clone(),
            manager: self.manager.clone(),
            followers: self.followers.clone(),
        })
    }

    /// The newest commit timestamp that is durable on disk (its WAL record fsynced): a
    /// follower confirms a source position to the source only once the commit that applied
    /// it is durable.
    pub fn durable_ts(&self) -> Timestamp {
        self.manager.durable_ts()
    }

    /// Makes every commit so far durable now (writes and fsyncs the WAL), in any durability
    /// mode.
    pub fn sync_wal(&self) -> Result<()> {
        self.manager.flush_wal(true)
    }

    /// Starts a bulk load: nodes and relationships added in batches and made visible in one
    /// commit (see [`crate::bulk`]).
    pub fn bulk_load(&self) -> crate::BulkLoad {
        crate::BulkLoad::new(self.begin_with(IsolationLevel::Snapshot))
    }

    /// Pins a read-only snapshot of the newest visible state for analytics.
    pub fn snapshot(&self) -> GraphSnapshot {
        plexus_txn::snapshot(&self.manager)
    }

    /// Writes a checkpoint and retires the WAL before it.
    pub fn checkpoint(&self) -> Result<()> {
        self.manager.checkpoint()
    }

    /// Garbage-collects old versions and compacts the topology (what a checkpoint does after
    /// writing, without writing).
    pub fn compact(&self) {
        self.manager.maintain();
    }

    /// Flushes all topology memtables to CSR runs now and runs the merges the policy asks for
    /// (normally this happens in the background when `memtable_budget_bytes` is exceeded).
    pub fn flush(&self) -> Result<()> {
        self.manager.flush_memtables()
    }

    /// The planner's table statistics (vertex counts per label, edge counts per type): what
    /// `Connection` hands `plexus_exec::Cursor::open_with` with every statement. O(tables).
    pub fn statistics(&self) -> plexus_txn::Statistics {
        self.manager.statistics()
    }

    /// Disk-tier figures: memtable and run sizes, bytes ingested, flushed and merged.
    pub fn storage_stats(&self) -> StorageStats {
        self.manager.storage_stats()
    }

    pub fn create_vertex_table(&self, spec: &VertexTableSpec) -> Result<VertexTableId> {
        plexus_txn::create_vertex_table(&self.manager, spec)
    }

    pub fn create_edge_table(
        &self,
        from: &str,
        edge_type: &str,
        to: &str,
        properties: &[(&str, DataType)],
    ) -> Result<EdgeTableId> {
        plexus_txn::create_edge_table(&self.manager, from, edge_type, to, properties)
    }

    /// Creates a secondary index on the vertices carrying `label` by `property` and returns
    /// its name (`name`, or `index_<label>_<property>` by default, with a `_2`, `_3`, … suffix
    /// if a relationship-type index of the same name holds that name). The label and
    /// property need not exist yet. Commits wait while the index is built: one pass over every
    /// vertex row (see `plexus_storage::index`). The definition is durable; the content is
    /// rebuilt from the rows at every open. Fails with `Error::Constraint` if an index of that
    /// name, or one on the same label and property, exists.
    pub fn create_index(&self, label: &str, property: &str, name: Option<&str>) -> Result<String> {
        self.create_index_on(IndexOn::Label(label), property, name)
    }

    /// Creates a secondary index on the relationships of type `rel_type` by `property`, as
    /// [`create_index`](Self::create_index) does for a label (default name
    /// `index_<rel_type>_<property>`); commits wait for one pass over the type's edge rows.
    pub fn create_relationship_index(
        &self,
        rel_type: &str,
        property: &str,
        name: Option<&str>,
    ) -> Result<String> {
        self.create_index_on(IndexOn::RelationshipType(rel_type), property, name)
    }

    fn create_index_on(&self, on: IndexOn, property: &str, name: Option<&str>) -> Result<String> {
        let (name, created) = plexus_txn::create_index_as(&self.manager, name, on, property)?;
        match crate::index_commands::refusal(&created, &name, on, property) {
            None => Ok(name),
            Some(message) => Err(Error::Constraint(message)),
        }
    }

    /// Drops the secondary index `name`; fails with `Error::NotFound` if there is none.
    pub fn drop_index(&self, name: &str) -> Result<()> {
        if plexus_txn::drop_index(&self.manager, name)? {
            Ok(())
        } else {
            Err(Error::NotFound(format!("index '{name}'")))
        }
    }

    /// The labels and the vertex and edge tables, by name (a copy; see [`crate::Schema`]).
    pub fn schema(&self) -> crate::Schema {
        crate::Schema::of(&self.manager.catalog())
    }

    /// The effective settings and where each came from (what `SHOW SETTINGS` lists).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn config(&self) -> &Config {
        self.manager.config()
    }

    /// Flushes and fsyncs the WAL and closes the database, reporting any error
    /// (dropping does the same but can only ignore errors).
    pub fn close(mut self) -> Result<()> {
        self.stop_workers();
        let result = self.manager.flush_wal(true);
        self.closed = true;
        result
    }

    fn stop_workers(&mut self) {
        for worker in self.workers.drain(..) {
            worker.stop();
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.stop_workers();
        if !self.closed {
            let _ = self.manager.flush_wal(true);
        }
    }
}

impl Worker {
    fn start(
        manager: &Arc<TxnManager>,
        name: &str,
        interval_ms: u64,
        job: impl Fn(&TxnManager) + Send + 'static,
    ) -> Worker {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let weak = Arc::downgrade(manager);
        let interval = Duration::from_millis(interval_ms.max(1));
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let (lock, condvar) = &*signal;
                let mut stopped = lock.lock();
                while !*stopped {
                    condvar.wait_for(&mut stopped, interval);
                    let Some(manager) = weak.upgrade() else {
                        return;
                    };
                    job(&manager);
                }
            })
            .expect("spawning a background thread");
        Worker { stop, thread }
    }

    fn stop(self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
        let _ = self.thread.join();
    }
}

fn lock_directory(path: &Path) -> Result<File> {
    let lock_path = path.join("LOCK");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| Error::io(lock_path.display().to_string(), e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(Error::AlreadyOpen {
            path: path.display().to_string(),
        }),
        Err(TryLockError::Error(e)) => Err(Error::io(lock_path.display().to_string(), e)),
    }
}

/// Procedures front ends add (see `crate::extensions`).
impl Database {
    /// Makes `procedure` callable on every connection opened from now on (see the module
    /// docs).
    pub fn register_procedure(&self, procedure: Procedure) {
        self.extensions.add(procedure);
    }

    /// Makes `ATTACH <name> 'file' AS …` open files with `open` (see `crate::attached`);
    /// `plexus_graphar::register_procedures` registers `GRAPHAR`.
    pub fn register_graph_format(&self, name: &str, open: GraphFormat) {
        self.attached.register_format(name, open);
    }

    /// A handle for a registered procedure's body.
    pub fn handle(&self) -> DatabaseHandle {
        DatabaseHandle::new(self.manager.clone(), self.export_dir.clone())
    }
}
