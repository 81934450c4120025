//! The apply side: PostgreSQL rows → graph, exactly once.
//!
//! WHAT
//! ====
//! [`Mirror`] follows the tables a validated mapping names and keeps a Plexus graph equal to
//! them. It is a client of the facade: the initial copy is one [`plexus::BulkLoad`], the
//! stream is applied in ordinary graph transactions, and the only bookkeeping it stores in
//! the graph is the replication origin (named after the slot) that each commit carries.
//!
//! ```text
//!   start ── origin in graph? ──no──▶ publication, slot + exported snapshot,
//!     │                               COPY every table ──▶ ONE bulk load + origin = C ──┐
//!     └──────────────yes (position P)───────────────────────────────────────────────┐   │
//!                                                                                   ▼   ▼
//!   stream from P (or C) ──▶ epoch: source txns T1..Tn ──▶ one graph txn + origin = end(Tn)
//!                            ──▶ commit ──▶ durable? ──▶ confirm end(Tn) to PostgreSQL
//! ```
//!
//! GRAPH SCHEMA
//! ============
//! Each vertex table becomes a Plexus vertex table named by its first static label (by its
//! alias, capitalised, when all its labels come from LABEL FROM), with its other labels as
//! extra labels and the key as primary key (typed; other properties stay implicit): a
//! composite key is one list property ([`plan::KeyPlan`]). An edge table's edges are found
//! again by one of three identities ([`plan::EdgeIdentity`]): row-owned (the row is also the
//! vertex at one end: fraud's OWNS, SNB's HAS_CREATOR), link table (the key is the endpoint
//! columns: the edge between the two vertices) or the edge table's own key stored on the edge
//! as a property (indexed when it is one column). See [`plan`].
//!
//! EPOCHS AND EXACTLY ONCE
//! =======================
//! Source transactions are grouped into epochs: an epoch closes when the stream has nothing
//! ready, after [`MirrorOptions::epoch_max_txns`] transactions, or once
//! [`MirrorOptions::epoch_interval`] has passed since its first transaction. An epoch is one
//! graph transaction that also sets the origin to the end of its last source transaction, so
//! the graph and its position are committed atomically: after any crash the recovered
//! position is exactly the recovered graph's, and the stream restarted from it delivers
//! exactly the transactions the graph lacks. A source transaction is applied whole or not at
//! all: a fatal error in any of an epoch's transactions rolls the whole epoch back and stops
//! the mirror (a restart replays it). A commit aborted by a conflicting user transaction is
//! re-applied from the epoch's source transactions in a new graph transaction (at most
//! [`EPOCH_COMMIT_ATTEMPTS_MAX`] times, with backoff).
//!
//! CONFIRMATION
//! ============
//! PostgreSQL may discard WAL up to what the mirror confirms, so the mirror confirms only
//! positions whose commit is *durable*: each committed epoch leaves (commit timestamp,
//! position), confirmed once `Database::durable_ts` reaches the timestamp. Under the
//! `periodic` and `none` durability modes the mirror calls `Database::sync_wal` at most every
//! [`SYNC_WAL_INTERVAL_MS`] while something waits, so confirmation always progresses. Before
//! reconnecting, the WAL is synced too: a new stream reports its start position at once.
//!
//! FAILURES
//! ========
//! Transient source errors (connection lost, server restarting) drop the open epoch and
//! reconnect from the stored position with [`crate::source::Backoff`]; anything else —
//! a row the mapping cannot convert, an `ALTER TABLE` on a mapped table, a graph error —
//! stops the mirror with a [`MirrorError`] naming the table and row. Stopping closes or drops
//! the stream, as the source module requires of a caller that stops applying.
//!
//! NOT DONE
//! ========
//! An index for composite edge-table keys (a change that moves such an edge, or a delete
//! that names only its key, scans the type's edges); list properties ordered by a column
//! other than their value (the stream appends); a vertex deleted while rows without
//! foreign-key constraints still reference it loses those edges for good (they are not put
//! back to pending).

pub mod pending;
pub mod plan;
pub mod rows;
pub mod snapshot;
pub mod status;
pub mod thread;

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use plexus::{Database, OriginClaim, Timestamp, Value};

use crate::change::{Lsn, SourceTxn};
use crate::mapping::{MappingError, PropertyGraph, TableName};
use crate::source::{
    self, Backoff, ReplicationStream, SourceConfig, SourceError, copy_table,
    create_slot_with_snapshot, ensure_publication, slot_position, start_stream,
};
use pending::PendingSet;
use plan::{CatalogColumn, Plan, TableColumns};
use rows::{ApplyState, Reported, apply_txn};
use snapshot::{CopiedTable, copied_counts, load_copy};
pub use status::{MirrorHandle, MirrorState, MirrorStatus};
pub use thread::MirrorThread;

/// Default slot (and replication origin) name.
pub const DEFAULT_SLOT: &str = "plexus_mirror";
/// Default publication name.
pub const DEFAULT_PUBLICATION: &str = "plexus_mirror";
/// Default longest time an epoch gathers source transactions.
pub const DEFAULT_EPOCH_INTERVAL_MS: u64 = 2;
/// Default most source transactions in one epoch.
pub const DEFAULT_EPOCH_MAX_TXNS: usize = 1_000;
/// Attempts at committing one epoch when user transactions conflict with it.
pub const EPOCH_COMMIT_ATTEMPTS_MAX: u32 = 8;
/// Least time between two `sync_wal` calls made to let confirmation progress.
pub const SYNC_WAL_INTERVAL_MS: u64 = 200;
/// How long a stopping mirror waits for its stream to close cleanly.
const STREAM_CLOSE_TIMEOUT_MS: u64 = 2_000;

/// Why the mirror stopped or could not start. Texts never contain the connection's password.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("graph: {0}")]
    Graph(#[from] plexus::Error),
    #[error(transparent)]
    MappingText(#[from] MappingError),
    #[error("mapping: {0}")]
    Mapping(String),
    #[error("table {table} row {key}: {reason}")]
    Row {
        table: String,
        key: String,
        reason: String,
    },
    #[error(
        "ALTER TABLE on {table}: {what} — the mirror stopped; drop it (plexus mirror --drop) \
         and start again with a mapping that matches"
    )]
    SchemaChanged { table: String, what: String },
    #[error("replication stream: {0}")]
    Protocol(String),
    #[error("pending edges file {0}")]
    Pending(String),
    #[error(
        "the replication slot {slot} exists but the graph has no position for it (an \
         interrupted initial copy, or another database's slot): run `plexus mirror --drop` \
         and start again"
    )]
    SlotExists { slot: String },
    #[error("catching up: applied {applied} has not reached {target} in time")]
    CatchUpTimeout { applied: Lsn, target: Lsn },
    #[error("the mirror's thread: {0}")]
    Thread(#[from] std::io::Error),
    #[error("the mirror's thread panicked")]
    Panicked,
}

impl MirrorError {
    fn is_retryable(&self) -> bool {
        matches!(self, MirrorError::Graph(e) if e.is_retryable())
    }
}

/// What and how to mirror.
#[derive(Clone, Debug)]
pub struct MirrorOptions {
    /// `postgres://` URL or `key=value` string; may hold a password (never printed).
    pub conninfo: String,
    /// Replication slot name, also the graph's replication origin name.
    pub slot: String,
    pub publication: String,
    /// A validated mapping ([`load_mapping`]).
    pub mapping: PropertyGraph,
    pub epoch_interval: Duration,
    pub epoch_max_txns: usize,
    /// Where the pending edges are kept across restarts (`None`: in memory only).
    pub pending_file: Option<PathBuf>,
}

impl MirrorOptions {
    /// Options with the default slot, publication and epoch bounds.
    pub fn new(conninfo: &str, mapping: PropertyGraph) -> MirrorOptions {
        MirrorOptions {
            conninfo: conninfo.to_owned(),
            slot: DEFAULT_SLOT.to_owned(),
            publication: DEFAULT_PUBLICATION.to_owned(),
            mapping,
            epoch_interval: Duration::from_millis(DEFAULT_EPOCH_INTERVAL_MS),
            epoch_max_txns: DEFAULT_EPOCH_MAX_TXNS,
            pending_file: None,
        }
    }

    /// The pending file of an on-disk database in `db_dir`: `<db_dir>/mirror-<slot>.pending`.
    pub fn pending_file_in(mut self, db_dir: &std::path::Path) -> MirrorOptions {
        self.pending_file = Some(db_dir.join(format!("mirror-{}.pending", self.slot)));
        self
    }

    fn source_config(&self) -> SourceConfig {
        SourceConfig {
            conninfo: self.conninfo.clone(),
            slot: self.slot.clone(),
            publication: self.publication.clone(),
            tables: (self.mapping.source_tables().into_iter())
                .map(|t| (t.schema, t.name))
                .collect(),
        }
    }
}

/// Parses `text` (named `file` in errors) and validates it against the database `conninfo`
/// names.
pub async fn load_mapping(
    conninfo: &str,
    text: &str,
    file: &str,
) -> Result<PropertyGraph, MirrorError> {
    let graph = crate::mapping::parse(text).map_err(|e| e.in_file(file))?;
    let config = SourceConfig {
        conninfo: conninfo.to_owned(),
        slot: DEFAULT_SLOT.to_owned(),
        publication: DEFAULT_PUBLICATION.to_owned(),
        tables: Vec::new(),
    };
    let endpoint = config.endpoint()?;
    let client = source::connect_sql(&endpoint).await?;
    Ok(crate::mapping::validate(graph, &client)
        .await
        .map_err(|e| e.in_file(file))?)
}

/// `conninfo` (a URL or `key=value` string) with `password` added when it names none (how
/// `PGPASSWORD` is honoured).
pub fn with_default_password(conninfo: &str, password: &str) -> String {
    let has_password = conninfo
        .parse::<tokio_postgres::Config>()
        .is_ok_and(|c| c.get_password().is_some());
    if has_password || password.is_empty() {
        return conninfo.to_owned();
    }
    if conninfo.starts_with("postgres://") || conninfo.starts_with("postgresql://") {
        let encoded: String = password
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        let separator = if conninfo.contains('?') { '&' } else { '?' };
        format!("{conninfo}{separator}password={encoded}")
    } else {
        let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
        format!("{conninfo} password='{quoted}'")
    }
}

/// Reads the catalog columns of every table in `tables`.
async fn catalog_columns(
    config: &SourceConfig,
    tables: &[TableName],
) -> Result<TableColumns, MirrorError> {
    let endpoint = config.endpoint()?;
    let client = source::connect_sql(&endpoint).await?;
    let mut columns = HashMap::new();
    for table in tables {
        let rows = client
            .query(
                "SELECT a.attname::text, a.atttypid, a.atttypmod, t.typtype = 'e' \
                 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
                 WHERE a.attrelid = format('%I.%I', $1::text, $2::text)::regclass \
                   AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                &[&table.schema, &table.name],
            )
            .await
            .map_err(|e| {
                endpoint
                    .redactor
                    .sql("reading the mapped tables' columns", e)
            })?;
        let found = rows
            .iter()
            .map(|row| CatalogColumn {
                name: row.get(0),
                type_oid: row.get(1),
                type_modifier: row.get(2),
                is_enum: row.get(3),
            })
            .collect();
        columns.insert(table.clone(), found);
    }
    Ok(columns)
}

/// A function run before an epoch commit (see `Mirror::before_commit`).
#[cfg(test)]
type CommitHook = Box<dyn FnMut(&OriginClaim) + Send>;

/// A running mirror; see the module documentation.
pub struct Mirror {
    db: Arc<Database>,
    /// The hold on the replication origin: the mirror writes through it (it may write the
    /// labels and types it protects) and publishes its status through it.
    claim: OriginClaim,
    config: SourceConfig,
    options: MirrorOptions,
    plan: Plan,
    state: ApplyState,
    reported: Reported,
    stream: Option<ReplicationStream>,
    /// The stored origin position: the end of the last source transaction in the graph.
    position: Lsn,
    /// Committed epochs not yet confirmed: (commit timestamp, position), oldest first.
    waiting: VecDeque<(Timestamp, Lsn)>,
    last_sync: Instant,
    backoff: Backoff,
    handle: MirrorHandle,
    /// Runs before every epoch commit attempt (tests commit conflicting writes here).
    #[cfg(test)]
    before_commit: Option<CommitHook>,
}

impl Mirror {
    /// Starts mirroring into `db`: creates the graph schema, makes the initial copy when the
    /// graph has no position for the slot yet, and connects the stream.
    pub async fn start(db: Arc<Database>, options: MirrorOptions) -> Result<Mirror, MirrorError> {
        Mirror::start_with(db, options, MirrorHandle::default()).await
    }

    /// [`Mirror::start`], reporting into `handle` from the beginning (so the initial copy's
    /// progress can be watched while `start` runs).
    pub async fn start_with(
        db: Arc<Database>,
        options: MirrorOptions,
        handle: MirrorHandle,
    ) -> Result<Mirror, MirrorError> {
        let config = options.source_config();
        let claim = db.claim_replication_origin(&options.slot)?;
        handle.update(|s| s.slot = options.slot.clone());
        let columns = catalog_columns(&config, &options.mapping.source_tables()).await?;
        let plan = Plan::new(&options.mapping, columns)?;
        plan.create_schema(&db)?;
        claim.protect(
            &plan.protected_labels(),
            &plan.protected_edge_types(),
            &format!(
                "mirrored from PostgreSQL by the mirror of slot '{}'",
                options.slot
            ),
        );
        claim.publish_status(status_columns(handle.clone()));
        let mut mirror = Mirror {
            db,
            claim,
            config,
            plan,
            state: ApplyState::default(),
            reported: Reported::default(),
            stream: None,
            position: Lsn(0),
            waiting: VecDeque::new(),
            last_sync: Instant::now(),
            backoff: Backoff::new(),
            handle,
            #[cfg(test)]
            before_commit: None,
            options,
        };
        match mirror.db.replication_origin(&mirror.options.slot) {
            None => mirror.initial_copy().await?,
            Some((position, _)) => {
                mirror.position = Lsn(position);
                if let Some(file) = &mirror.options.pending_file {
                    mirror.state.pending = PendingSet::load(file)?;
                }
                mirror.handle.update(|s| {
                    s.applied = Lsn(position);
                    s.confirmed = Lsn(position);
                });
                mirror.connect().await?;
            }
        }
        mirror.publish_pending();
        Ok(mirror)
    }

    async fn initial_copy(&mut self) -> Result<(), MirrorError> {
        ensure_publication(&self.config).await?;
        if slot_position(&self.config).await?.is_some() {
            return Err(MirrorError::SlotExists {
                slot: self.config.slot.clone(),
            });
        }
        let exported = create_slot_with_snapshot(&self.config).await?;
        let mut copied: HashMap<TableName, CopiedTable> = HashMap::new();
        for table in self.options.mapping.source_tables() {
            let columns = self.plan.columns_read(&table);
            let mut rows = Vec::new();
            copy_table(
                &self.config,
                &exported.snapshot_name,
                (&table.schema, &table.name),
                &columns,
                |row| {
                    rows.push(row);
                    Ok::<(), std::convert::Infallible>(())
                },
            )
            .await?;
            copied.insert(table, CopiedTable { columns, rows });
            let counts = copied_counts(&copied);
            self.handle.update(|s| s.snapshot_rows = counts);
        }
        let mut pending = PendingSet::default();
        let mut load = self.claim.bulk_load();
        load_copy(
            &mut load,
            &self.plan,
            &copied,
            &mut pending,
            &mut self.reported,
        )?;
        drop(copied);
        load.set_origin(&self.options.slot, exported.consistent_point.0)?;
        if let Some(file) = &self.options.pending_file {
            pending.store(file)?;
        }
        let summary = load.commit()?;
        self.state.pending = pending;
        self.position = exported.consistent_point;
        self.waiting
            .push_back((summary.commit_ts, exported.consistent_point));
        let position = self.position;
        self.handle.update(|s| s.applied = position);
        let stream = start_stream(
            &self.config,
            exported.consistent_point,
            Some(exported.session),
        )
        .await?;
        self.stream = Some(stream);
        self.handle.update(|s| s.state = MirrorState::Streaming);
        Ok(())
    }

    /// Opens a stream from the stored position; a transient failure leaves the mirror
    /// reconnecting.
    async fn connect(&mut self) -> Result<(), MirrorError> {
        if !self.waiting.is_empty() {
            // the new stream reports its start position at once: make it durable first
            self.db.sync_wal()?;
            self.confirm_durable()?;
        }
        match start_stream(&self.config, self.position, None).await {
            Ok(stream) => {
                self.stream = Some(stream);
                self.backoff.reset();
                self.handle.update(|s| {
                    s.state = MirrorState::Streaming;
                    s.message = None;
                });
                Ok(())
            }
            Err(e) if e.is_transient() => {
                self.reconnecting(&e);
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn reconnecting(&mut self, error: &SourceError) {
        self.stream = None;
        let message = error.to_string();
        self.handle.update(|s| {
            s.state = MirrorState::Reconnecting;
            s.message = Some(message);
        });
    }

    /// A handle on the status (usable from other tasks and threads).
    pub fn handle(&self) -> MirrorHandle {
        self.handle.clone()
    }

    pub fn status(&self) -> MirrorStatus {
        self.handle.status()
    }

    /// The end of the last source transaction committed in the graph.
    pub fn applied(&self) -> Lsn {
        self.position
    }

    /// Confirms every committed epoch whose commit is durable.
    fn confirm_durable(&mut self) -> Result<(), MirrorError> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let mut durable = self.db.durable_ts();
        if self.waiting.front().is_some_and(|(ts, _)| *ts > durable)
            && self.last_sync.elapsed() >= Duration::from_millis(SYNC_WAL_INTERVAL_MS)
        {
            self.db.sync_wal()?;
            self.last_sync = Instant::now();
            durable = self.db.durable_ts();
        }
        let mut confirmed = None;
        while let Some(&(ts, lsn)) = self.waiting.front() {
            if ts > durable {
                break;
            }
            confirmed = Some(lsn);
            self.waiting.pop_front();
        }
        if let (Some(lsn), Some(stream)) = (confirmed, self.stream.as_mut()) {
            debug_assert!(lsn <= self.position);
            stream.confirm(lsn);
            self.handle.update(|s| s.confirmed = lsn);
        }
        Ok(())
    }

    /// One round: (re)connects if needed, waits up to `wait` for a source transaction,
    /// gathers an epoch and applies it. Returns whether an epoch was committed.
    async fn step(&mut self, wait: Duration) -> Result<bool, MirrorError> {
        if self.stream.is_none() {
            self.backoff.wait().await;
            self.connect().await?;
        }
        self.confirm_durable()?;
        let Some(stream) = self.stream.as_mut() else {
            return Ok(false);
        };
        let wait = if self.waiting.is_empty() {
            wait
        } else {
            wait.min(Duration::from_millis(SYNC_WAL_INTERVAL_MS))
        };
        let first = match tokio::time::timeout(wait, stream.next_txn()).await {
            Err(_) => return Ok(false),
            Ok(Ok(txn)) => txn,
            Ok(Err(e)) => return self.source_failed(e),
        };
        let started = Instant::now();
        let mut txns = vec![first];
        while txns.len() < self.options.epoch_max_txns
            && started.elapsed() < self.options.epoch_interval
        {
            match tokio::time::timeout(Duration::ZERO, stream.next_txn()).await {
                Err(_) => break,
                Ok(Ok(txn)) => txns.push(txn),
                // the open epoch is dropped: it is streamed again after reconnecting
                Ok(Err(e)) => return self.source_failed(e),
            }
        }
        txns.retain(|t| t.end_lsn > self.position);
        if txns.is_empty() {
            return Ok(false);
        }
        self.apply_epoch(&txns)?;
        self.confirm_durable()?;
        Ok(true)
    }

    fn source_failed(&mut self, e: SourceError) -> Result<bool, MirrorError> {
        if e.is_transient() {
            self.reconnecting(&e);
            Ok(false)
        } else {
            Err(e.into())
        }
    }

    /// Applies `txns` in one graph transaction with the origin, re-applying them on aborts.
    fn apply_epoch(&mut self, txns: &[SourceTxn]) -> Result<(), MirrorError> {
        let last = txns.last().map_or(self.position, |t| t.end_lsn);
        debug_assert!(txns.windows(2).all(|w| w[0].end_lsn < w[1].end_lsn));
        debug_assert!(last > self.position);
        let mut attempt = 0;
        let (commit_ts, rows, state) = loop {
            match self.try_epoch(txns, last) {
                Ok(done) => break done,
                Err(e) if e.is_retryable() && attempt + 1 < EPOCH_COMMIT_ATTEMPTS_MAX => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(1 << attempt));
                }
                Err(e) => return Err(e),
            }
        };
        let now_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        self.handle.record_freshness(
            txns.iter()
                .map(|t| (now_us - t.commit_time_unix_us).max(0) as f64 / 1_000.0),
        );
        self.state = state;
        self.position = last;
        self.waiting.push_back((commit_ts, last));
        let count = txns.len() as u64;
        self.handle.update(|s| {
            s.applied = last;
            s.source_txns += count;
            s.epochs += 1;
            s.rows += rows;
        });
        self.publish_pending();
        Ok(())
    }

    fn try_epoch(
        &mut self,
        txns: &[SourceTxn],
        last: Lsn,
    ) -> Result<(Timestamp, u64, ApplyState), MirrorError> {
        let mut state = self.state.clone();
        let mut tx = self.claim.begin();
        let mut rows = 0;
        for txn in txns {
            rows += apply_txn(&mut tx, &self.plan, &mut state, &mut self.reported, txn)?;
        }
        tx.set_origin(&self.options.slot, last.0)?;
        if let Some(file) = &self.options.pending_file
            && state.pending != self.state.pending
        {
            state.pending.store(file)?;
        }
        #[cfg(test)]
        if let Some(hook) = &mut self.before_commit {
            hook(&self.claim);
        }
        let commit_ts = tx.commit()?;
        Ok((commit_ts, rows, state))
    }

    fn publish_pending(&self) {
        let (count, listed) = (self.state.pending.len(), self.state.pending.listed());
        self.handle.update(|s| {
            s.pending = count;
            s.pending_listed = listed;
        });
    }

    /// Applies until `stop` completes (then drops the open epoch and closes the stream) or a
    /// fatal error (returned; the status says `failed`).
    pub async fn run_until(mut self, stop: impl Future<Output = ()>) -> Result<(), MirrorError> {
        let mut stop = std::pin::pin!(stop);
        let result = loop {
            tokio::select! {
                biased;
                () = &mut stop => break Ok(()),
                stepped = self.step(Duration::from_millis(100)) => {
                    if let Err(e) = stepped {
                        break Err(e);
                    }
                }
            }
        };
        self.finish(result).await
    }

    /// Applies until the applied position reaches `target` (a position read from PostgreSQL
    /// inside or after the last transaction to wait for) or `timeout` passes.
    pub async fn catch_up(&mut self, target: Lsn, timeout: Duration) -> Result<(), MirrorError> {
        let deadline = Instant::now() + timeout;
        while self.position < target {
            if Instant::now() >= deadline {
                return Err(MirrorError::CatchUpTimeout {
                    applied: self.position,
                    target,
                });
            }
            if let Err(e) = self.step(Duration::from_millis(50)).await {
                let message = e.to_string();
                self.handle.update(|s| {
                    s.state = MirrorState::Failed;
                    s.message = Some(message);
                });
                self.stream = None;
                return Err(e);
            }
        }
        Ok(())
    }

    /// Confirms what is durable and closes the stream (a clean stop).
    pub async fn stop(self) -> Result<(), MirrorError> {
        self.finish(Ok(())).await
    }

    async fn finish(mut self, result: Result<(), MirrorError>) -> Result<(), MirrorError> {
        if result.is_ok() && !self.waiting.is_empty() {
            self.db.sync_wal()?;
            self.last_sync = Instant::now();
            self.confirm_durable()?;
        }
        if let Some(stream) = self.stream.take() {
            let close = tokio::time::timeout(
                Duration::from_millis(STREAM_CLOSE_TIMEOUT_MS),
                stream.close(),
            );
            // a stream that does not close in time is dropped, which ends the session too
            let _ = close.await;
        }
        let (state, message) = match &result {
            Ok(()) => (MirrorState::Stopped, None),
            Err(e) => (MirrorState::Failed, Some(e.to_string())),
        };
        self.handle.update(|s| {
            s.state = state;
            s.message = message;
        });
        result
    }
}

/// The mirror's row of `CALL db.mirror.status()` (columns: `plexus::MIRROR_STATUS_COLUMNS`).
fn status_columns(handle: MirrorHandle) -> plexus::StatusFn {
    Arc::new(move || {
        let status = handle.status();
        let text = |s: String| Value::from(s);
        let float = |v: Option<f64>| v.map_or(Value::Null, Value::Float);
        vec![
            ("state", text(status.state.to_string())),
            ("message", status.message.map_or(Value::Null, text)),
            ("slot", text(status.slot)),
            ("appliedPosition", text(status.applied.to_string())),
            ("confirmedPosition", text(status.confirmed.to_string())),
            ("sourceTransactions", Value::Int(status.source_txns as i64)),
            ("epochs", Value::Int(status.epochs as i64)),
            ("pending", Value::Int(status.pending as i64)),
            ("freshnessP50Ms", float(status.freshness_p50_ms)),
            ("freshnessP99Ms", float(status.freshness_p99_ms)),
            ("freshnessMaxMs", float(status.freshness_max_ms)),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mirror can run on any runtime thread: `tokio::spawn(mirror.run_until(stop))`.
    #[test]
    fn a_running_mirror_is_send() {
        fn send<T: Send>(_: &T) {}
        fn mirror_run(mirror: Mirror) {
            send(&mirror.run_until(std::future::pending()));
        }
        let _ = mirror_run;
        fn handle_is_sync<T: Send + Sync>() {}
        handle_is_sync::<MirrorHandle>();
    }

    #[test]
    fn a_default_password_is_added_only_when_none_is_given() {
        let url = with_default_password("postgres://u@h:5/db", "p w@");
        assert_eq!(url, "postgres://u@h:5/db?password=p%20w%40");
        let parsed: tokio_postgres::Config = url.parse().expect("url");
        assert_eq!(parsed.get_password(), Some(&b"p w@"[..]));
        assert_eq!(
            with_default_password("postgres://u:x@h/db", "y"),
            "postgres://u:x@h/db"
        );
        let kv = with_default_password("host=h user=u", "it's");
        let parsed: tokio_postgres::Config = kv.parse().expect("key=value");
        assert_eq!(parsed.get_password(), Some(&b"it's"[..]));
    }

    /// An epoch whose commit a conflicting commit aborts is applied again from its source
    /// transactions, in a new graph transaction: the graph ends as the source says.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_epoch_aborted_by_a_conflicting_commit_is_applied_again() {
        use std::sync::atomic::{AtomicU32, Ordering};

        use crate::cluster::{ClusterOptions, ThrowawayCluster};

        let cluster = ThrowawayCluster::start(ClusterOptions::default()).expect("PostgreSQL");
        cluster
            .psql("CREATE TABLE person (id int PRIMARY KEY, name text); INSERT INTO person VALUES (1, 'a')")
            .expect("schema");
        let mapping =
            "CREATE PROPERTY GRAPH g VERTEX TABLES (person LABEL Person PROPERTIES (id, name))";
        let graph = load_mapping(&cluster.conninfo(), mapping, "g.sql")
            .await
            .expect("mapping");
        let db = Arc::new(Database::open_in_memory(plexus::Config::default()).expect("database"));
        let options = MirrorOptions::new(&cluster.conninfo(), graph);
        let mut mirror = Mirror::start(db.clone(), options).await.expect("start");
        let attempts = Arc::new(AtomicU32::new(0));
        let counted = attempts.clone();
        mirror.before_commit = Some(Box::new(move |claim: &OriginClaim| {
            if counted.fetch_add(1, Ordering::SeqCst) > 0 {
                return;
            }
            // the first attempt: another writer changes the same vertex and commits first
            let mut tx = claim.begin();
            let v = tx
                .lookup("Person", &Value::Int(1))
                .expect("lookup")
                .expect("vertex");
            tx.set_vertex_property(v, "name", Value::from("intruder"))
                .expect("write");
            tx.commit().expect("the conflicting commit");
        }));
        let lsn = cluster
            .psql("UPDATE person SET name = 'b' WHERE id = 1; SELECT pg_current_wal_insert_lsn()")
            .expect("update");
        let target: Lsn = lsn.trim().parse().expect("lsn");
        mirror
            .catch_up(target, Duration::from_secs(30))
            .await
            .expect("caught up");
        assert_eq!(attempts.load(Ordering::SeqCst), 2, "one abort, one retry");
        let mut tx = db.begin();
        let v = tx
            .lookup("Person", &Value::Int(1))
            .expect("lookup")
            .expect("vertex");
        assert_eq!(
            tx.vertex_property(v, "name").expect("name"),
            Some(Value::from("b"))
        );
        tx.rollback();
        mirror.stop().await.expect("stop");
    }
}
