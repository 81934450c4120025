//! The replication stream: `START_REPLICATION ... LOGICAL` with `pgoutput` protocol 1, and
//! the assembly of its messages into [`SourceTxn`]s.
//!
//! ASSEMBLY
//! ========
//! `pgoutput` sends each committed transaction as Begin, its changes (with a Relation message
//! before the first change of a relation in the session, and again after the relation's
//! definition changed), then Commit. The transport (`pgwire-replication`) hands Begin and
//! Commit over as its own events and everything else as raw XLogData, which [`super::pgoutput`]
//! decodes. A transaction is collected whole and checked at its Commit:
//!
//! ```text
//!   Begin(final_lsn F, xid) · R(t1) · I(t1) · U(t1) · R(t2) · D(t2) · Commit(lsn F, end E)
//!     └──────────────────── one SourceTxn { commit_lsn: F, end_lsn: E, changes } ─────┘
//! ```
//!
//! INVARIANTS
//! ==========
//! - transactions are delivered in commit order, each at most once: a transaction whose
//!   `end_lsn` is not above the start position (`from`) or the last delivered one is skipped
//!   (PostgreSQL resends from the slot's confirmed position, which may lag `from`);
//! - a Commit matches its Begin (`commit_lsn == final_lsn`); changes outside a transaction,
//!   nested Begins and rows whose column count differs from their relation's are protocol
//!   errors;
//! - every delivered row change is preceded, in the delivered sequence, by a
//!   [`Change::Relation`] with the definition the change was decoded under: if that Relation
//!   message travelled in a skipped transaction, it is re-inserted before the first delivered
//!   change of the relation;
//! - positions reported to PostgreSQL never pass an unconfirmed delivered transaction (see the
//!   module essay in [`super`]); [`ReplicationStream::confirm`] refuses a position beyond what
//!   was delivered.
//!
//! After any error the stream is finished: every later [`ReplicationStream::next_txn`] fails
//! again (as transient as the first error was), and the caller reconnects with
//! [`start_stream`] from its last applied position. `next_txn` is cancel-safe (a partly received transaction stays
//! buffered in the stream), so it may be raced against a timer.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use pgwire_replication::{ReplicationClient, ReplicationEvent};

use super::pgoutput::{self, PgOutputMessage};
use super::snapshot::ReplicationSession;
use super::{Redactor, SourceConfig, SourceError, from_wire_lsn, replication_config, to_wire_lsn};
use crate::change::{Change, Lsn, RelationInfo, SourceTxn};

/// PostgreSQL's epoch (2000-01-01 00:00:00 UTC) in microseconds since the Unix epoch.
pub const PG_EPOCH_UNIX_US: i64 = 946_684_800_000_000;
/// How long [`start_stream`] waits for a previous session to release the slot.
pub const SLOT_ACQUIRE_WAIT_MS: u64 = 5_000;
const SLOT_ACQUIRE_POLL_MS: u64 = 50;
/// SQLSTATE object_in_use: the slot is held by another (possibly exiting) session.
const OBJECT_IN_USE: &str = "55006";

/// A transaction between its Begin and its Commit.
#[derive(Debug)]
struct OpenTxn {
    xid: u32,
    final_lsn: Lsn,
    changes: Vec<Change>,
}

/// Turns decoded messages into transactions (no I/O: the stream feeds it).
#[derive(Debug)]
pub(crate) struct Assembler {
    /// Transactions ending at or before this were applied before the stream started.
    from: Lsn,
    /// `end_lsn` of the last delivered transaction (initially `from`).
    delivered_end: Lsn,
    open: Option<OpenTxn>,
    /// Each relation's definition as the stream last described it.
    latest: HashMap<u32, RelationInfo>,
    /// Each relation's definition as last delivered to the caller.
    delivered: HashMap<u32, RelationInfo>,
}

/// A started replication stream; see the module documentation.
pub struct ReplicationStream {
    client: ReplicationClient,
    redactor: Redactor,
    assembler: Assembler,
    /// The highest position the caller confirmed (initially `from`).
    confirmed: Lsn,
    /// The highest position handed to the transport to report (`confirmed`, or a keepalive
    /// position reached while idle and fully confirmed).
    reported: Lsn,
    /// Why the stream ended, once it did, and whether reconnecting can help.
    failed: Option<(String, bool)>,
}

impl fmt::Debug for ReplicationStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicationStream")
            .field("from", &self.assembler.from)
            .field("confirmed", &self.confirmed)
            .field("reported", &self.reported)
            .field("delivered_end", &self.assembler.delivered_end)
            .field("in_transaction", &self.assembler.open.is_some())
            .field("failed", &self.failed)
            .finish()
    }
}

/// Starts streaming the slot from `from` (the end of the last transaction the caller applied,
/// or the slot's consistent point). With `session` (from
/// [`super::create_slot_with_snapshot`], after the copy), streams on that session; otherwise
/// opens a new replication connection, waiting up to [`SLOT_ACQUIRE_WAIT_MS`] for a previous
/// session to release the slot.
pub async fn start_stream(
    config: &SourceConfig,
    from: Lsn,
    session: Option<ReplicationSession>,
) -> Result<ReplicationStream, SourceError> {
    let endpoint = config.endpoint()?;
    let client = match session {
        Some(ReplicationSession {
            mut client,
            redactor,
        }) => {
            client
                .start()
                .await
                .map_err(|e| redactor.replication("START_REPLICATION", e))?;
            client
                .wait_started()
                .await
                .map_err(|e| redactor.replication("START_REPLICATION", e))?;
            client
        }
        None => {
            let deadline = Instant::now() + Duration::from_millis(SLOT_ACQUIRE_WAIT_MS);
            loop {
                let mut client =
                    ReplicationClient::connect(replication_config(config, &endpoint, from))
                        .await
                        .map_err(|e| endpoint.redactor.replication("replication connect", e))?;
                match client.wait_started().await {
                    Ok(()) => break client,
                    Err(e) => {
                        let error = endpoint.redactor.replication("START_REPLICATION", e);
                        let slot_busy = matches!(&error, SourceError::Sql {
                            sqlstate: Some(code), ..
                        } if code == OBJECT_IN_USE);
                        if !slot_busy || Instant::now() >= deadline {
                            return Err(error);
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(SLOT_ACQUIRE_POLL_MS)).await;
            }
        }
    };
    // The session path started from 0/0 (the slot's confirmed position): report `from`, the
    // caller's applied position, from now on. (Monotonic: a no-op on the other path.)
    client.update_applied_lsn(to_wire_lsn(from));
    Ok(ReplicationStream {
        client,
        redactor: endpoint.redactor,
        assembler: Assembler::new(from),
        confirmed: from,
        reported: from,
        failed: None,
    })
}

impl ReplicationStream {
    /// The next committed transaction that ends after `from`, in commit order. Answers
    /// keepalives while waiting.
    pub async fn next_txn(&mut self) -> Result<SourceTxn, SourceError> {
        if let Some((reason, transient)) = &self.failed {
            let reason = format!("the replication stream ended earlier: {reason}");
            return Err(if *transient {
                SourceError::Disconnected(reason)
            } else {
                SourceError::Protocol(reason)
            });
        }
        match self.receive().await {
            Ok(txn) => Ok(txn),
            Err(error) => {
                self.failed = Some((error.to_string(), error.is_transient()));
                Err(error)
            }
        }
    }

    /// Records that every transaction ending at or before `flushed` is applied durably:
    /// the stream reports it to PostgreSQL with its next status update (on a keepalive, and
    /// at least every [`super::STATUS_INTERVAL_MS`]), which lets PostgreSQL discard the WAL
    /// before it. Lower positions than an earlier confirm are ignored.
    ///
    /// # Panics
    /// If `flushed` is beyond the end of the last delivered transaction (or `from`):
    /// reporting it could make PostgreSQL drop transactions the caller never saw.
    pub fn confirm(&mut self, flushed: Lsn) {
        assert!(
            flushed <= self.assembler.delivered_end,
            "confirm({flushed}) beyond the last delivered transaction's end {}",
            self.assembler.delivered_end
        );
        if flushed > self.confirmed {
            self.confirmed = flushed;
            self.report(flushed);
        }
    }

    /// The highest position confirmed so far (initially `from`): where to restart from.
    pub fn confirmed(&self) -> Lsn {
        self.confirmed
    }

    /// Ends the stream cleanly (CopyDone) and waits for the session to close, so the slot is
    /// free for the next session at once.
    pub async fn close(mut self) -> Result<(), SourceError> {
        self.client
            .shutdown()
            .await
            .map_err(|e| self.redactor.replication("closing the stream", e))
    }

    fn report(&mut self, position: Lsn) {
        if position > self.reported {
            self.reported = position;
            self.client.update_applied_lsn(to_wire_lsn(position));
        }
    }

    async fn receive(&mut self) -> Result<SourceTxn, SourceError> {
        loop {
            let event = match self.client.recv().await {
                Ok(Some(event)) => event,
                Ok(None) => {
                    return Err(SourceError::Disconnected(
                        "the server ended the replication stream".to_owned(),
                    ));
                }
                Err(e) => return Err(self.redactor.replication("replication stream", e)),
            };
            let message = match event {
                ReplicationEvent::Begin {
                    final_lsn,
                    xid,
                    commit_time_micros,
                } => PgOutputMessage::Begin {
                    final_lsn: from_wire_lsn(final_lsn),
                    commit_time_pg_us: commit_time_micros,
                    xid,
                },
                ReplicationEvent::Commit {
                    lsn,
                    end_lsn,
                    commit_time_micros,
                } => PgOutputMessage::Commit {
                    flags: 0,
                    commit_lsn: from_wire_lsn(lsn),
                    end_lsn: from_wire_lsn(end_lsn),
                    commit_time_pg_us: commit_time_micros,
                },
                ReplicationEvent::XLogData { data, .. } => pgoutput::decode(&data)?,
                ReplicationEvent::KeepAlive { wal_end, .. } => {
                    self.on_keepalive(from_wire_lsn(wal_end));
                    continue;
                }
                // Logical decoding messages (pg_logical_emit_message) carry no row changes.
                ReplicationEvent::Message { .. } => continue,
                ReplicationEvent::StoppedAt { reached } => {
                    return Err(SourceError::Protocol(format!(
                        "the transport stopped at {reached} though no stop position was set"
                    )));
                }
            };
            if let Some(txn) = self.assembler.push(message)? {
                return Ok(txn);
            }
        }
    }

    /// An idle, fully confirmed stream confirms the server's position too: no transaction
    /// ends between the last delivered one and `wal_end` (the keepalive follows everything
    /// sent before it), so restarting from either delivers the same transactions.
    fn on_keepalive(&mut self, wal_end: Lsn) {
        if self.assembler.open.is_none() && self.confirmed >= self.assembler.delivered_end {
            self.report(wal_end);
        }
    }
}

impl Assembler {
    pub(crate) fn new(from: Lsn) -> Assembler {
        Assembler {
            from,
            delivered_end: from,
            open: None,
            latest: HashMap::new(),
            delivered: HashMap::new(),
        }
    }

    /// Takes the next message; returns the transaction its Commit completes, unless that
    /// transaction is skipped.
    pub(crate) fn push(
        &mut self,
        message: PgOutputMessage,
    ) -> Result<Option<SourceTxn>, SourceError> {
        let change = match message {
            PgOutputMessage::Begin { final_lsn, xid, .. } => {
                if let Some(open) = &self.open {
                    return Err(SourceError::Protocol(format!(
                        "Begin of xid {xid} inside the open transaction xid {}",
                        open.xid
                    )));
                }
                self.open = Some(OpenTxn {
                    xid,
                    final_lsn,
                    changes: Vec::new(),
                });
                return Ok(None);
            }
            PgOutputMessage::Commit {
                commit_lsn,
                end_lsn,
                commit_time_pg_us,
                ..
            } => return self.on_commit(commit_lsn, end_lsn, commit_time_pg_us),
            // Origins and non-built-in type names carry nothing the apply side uses.
            PgOutputMessage::Origin { .. }
            | PgOutputMessage::Type { .. }
            | PgOutputMessage::Message { .. } => return Ok(None),
            PgOutputMessage::Change(change) => change,
        };
        match &mut self.open {
            Some(open) => {
                open.changes.push(change);
                Ok(None)
            }
            None => Err(SourceError::Protocol(format!(
                "a change outside any transaction: {}",
                change_kind(&change)
            ))),
        }
    }

    fn on_commit(
        &mut self,
        commit_lsn: Lsn,
        end_lsn: Lsn,
        commit_time_pg_us: i64,
    ) -> Result<Option<SourceTxn>, SourceError> {
        let open = self.open.take().ok_or_else(|| {
            SourceError::Protocol(format!("Commit at {commit_lsn} without a Begin"))
        })?;
        if open.final_lsn != commit_lsn || end_lsn <= commit_lsn {
            return Err(SourceError::Protocol(format!(
                "Commit of xid {} at {commit_lsn} (end {end_lsn}) does not match its Begin \
                 (final LSN {})",
                open.xid, open.final_lsn
            )));
        }
        let deliver = end_lsn > self.from && end_lsn > self.delivered_end;
        let changes = self.resolve_relations(open.changes, deliver)?;
        if !deliver {
            return Ok(None);
        }
        let commit_time_unix_us =
            commit_time_pg_us
                .checked_add(PG_EPOCH_UNIX_US)
                .ok_or_else(|| {
                    SourceError::Protocol(format!("commit time {commit_time_pg_us} out of range"))
                })?;
        debug_assert!(end_lsn > self.delivered_end);
        self.delivered_end = end_lsn;
        Ok(Some(SourceTxn {
            xid: open.xid,
            commit_lsn,
            end_lsn,
            commit_time_unix_us,
            changes,
        }))
    }

    /// Checks each row change against its relation's definition and, when delivering, puts a
    /// Relation change before any change whose definition the caller has not been given.
    fn resolve_relations(
        &mut self,
        changes: Vec<Change>,
        deliver: bool,
    ) -> Result<Vec<Change>, SourceError> {
        let mut out = Vec::with_capacity(if deliver { changes.len() } else { 0 });
        for change in changes {
            if let Change::Relation(info) = &change {
                self.latest.insert(info.oid, info.clone());
                if deliver {
                    self.delivered.insert(info.oid, info.clone());
                    out.push(change);
                }
                continue;
            }
            for (oid, arity) in row_relations(&change) {
                let info = self.latest.get(&oid).ok_or_else(|| {
                    SourceError::Protocol(format!(
                        "{} of relation oid {oid} before any Relation message for it",
                        change_kind(&change)
                    ))
                })?;
                if let Some(arity) = arity.into_iter().find(|&n| n != info.columns.len()) {
                    return Err(SourceError::Protocol(format!(
                        "{} of {}.{} has {arity} columns, its relation {}",
                        change_kind(&change),
                        info.schema,
                        info.name,
                        info.columns.len()
                    )));
                }
                if deliver && self.delivered.get(&oid) != Some(info) {
                    self.delivered.insert(oid, info.clone());
                    out.push(Change::Relation(info.clone()));
                }
            }
            if deliver {
                out.push(change);
            }
        }
        Ok(out)
    }
}

/// The relations a row change names, each with the column counts of its tuples.
fn row_relations(change: &Change) -> Vec<(u32, Vec<usize>)> {
    match change {
        Change::Relation(_) => Vec::new(),
        Change::Insert { relation, new } => vec![(*relation, vec![new.len()])],
        Change::Update { relation, old, new } => {
            let mut arity = vec![new.len()];
            arity.extend(old.iter().map(|old| old.values.len()));
            vec![(*relation, arity)]
        }
        Change::Delete { relation, old } => vec![(*relation, vec![old.values.len()])],
        Change::Truncate { relations, .. } => {
            relations.iter().map(|&oid| (oid, Vec::new())).collect()
        }
    }
}

fn change_kind(change: &Change) -> &'static str {
    match change {
        Change::Relation(_) => "Relation",
        Change::Insert { .. } => "Insert",
        Change::Update { .. } => "Update",
        Change::Delete { .. } => "Delete",
        Change::Truncate { .. } => "Truncate",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::{Datum, RelationColumn};

    fn relation(oid: u32, columns: &[&str]) -> RelationInfo {
        RelationInfo {
            oid,
            schema: "public".to_owned(),
            name: format!("t{oid}"),
            replica_identity: b'd',
            columns: columns
                .iter()
                .map(|name| RelationColumn {
                    name: (*name).to_owned(),
                    type_oid: 23,
                    type_modifier: -1,
                    is_key: *name == "id",
                })
                .collect(),
        }
    }

    fn begin(final_lsn: u64) -> PgOutputMessage {
        PgOutputMessage::Begin {
            final_lsn: Lsn(final_lsn),
            commit_time_pg_us: 0,
            xid: final_lsn as u32,
        }
    }

    fn commit(commit_lsn: u64) -> PgOutputMessage {
        PgOutputMessage::Commit {
            flags: 0,
            commit_lsn: Lsn(commit_lsn),
            end_lsn: Lsn(commit_lsn + 8),
            commit_time_pg_us: 1,
        }
    }

    fn insert(oid: u32, values: &[&str]) -> PgOutputMessage {
        PgOutputMessage::Change(Change::Insert {
            relation: oid,
            new: values
                .iter()
                .map(|v| Datum::Text((*v).to_owned()))
                .collect(),
        })
    }

    /// Feeds one transaction; returns what was delivered.
    fn txn(
        assembler: &mut Assembler,
        lsn: u64,
        body: Vec<PgOutputMessage>,
    ) -> Result<Option<SourceTxn>, SourceError> {
        assert!(assembler.push(begin(lsn))?.is_none());
        for message in body {
            assert!(assembler.push(message)?.is_none());
        }
        assembler.push(commit(lsn))
    }

    #[test]
    fn transactions_carry_positions_and_unix_time() {
        let mut assembler = Assembler::new(Lsn(0));
        let delivered = txn(
            &mut assembler,
            100,
            vec![
                PgOutputMessage::Change(Change::Relation(relation(1, &["id"]))),
                insert(1, &["5"]),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (delivered.commit_lsn, delivered.end_lsn, delivered.xid),
            (Lsn(100), Lsn(108), 100)
        );
        assert_eq!(delivered.commit_time_unix_us, PG_EPOCH_UNIX_US + 1);
        assert_eq!(delivered.changes.len(), 2);
    }

    #[test]
    fn skipped_transactions_still_teach_relations() {
        // from = 108: the transaction ending there is skipped, but its Relation message is
        // the only description of relation 1 the stream will send
        let mut assembler = Assembler::new(Lsn(108));
        let skipped = txn(
            &mut assembler,
            100,
            vec![
                PgOutputMessage::Change(Change::Relation(relation(1, &["id"]))),
                insert(1, &["5"]),
            ],
        );
        assert!(skipped.unwrap().is_none());
        let delivered = txn(
            &mut assembler,
            200,
            vec![insert(1, &["6"]), insert(1, &["7"])],
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            delivered.changes,
            [
                Change::Relation(relation(1, &["id"])),
                Change::Insert {
                    relation: 1,
                    new: vec![Datum::Text("6".to_owned())]
                },
                Change::Insert {
                    relation: 1,
                    new: vec![Datum::Text("7".to_owned())]
                },
            ]
        );
        // a replayed (older) transaction is skipped too
        assert!(
            txn(&mut assembler, 150, vec![insert(1, &["6"])])
                .unwrap()
                .is_none()
        );
        assert!(
            txn(&mut assembler, 200, vec![insert(1, &["6"])])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn protocol_violations_are_errors() {
        let mut assembler = Assembler::new(Lsn(0));
        assert!(matches!(
            assembler.push(insert(1, &["1"])),
            Err(SourceError::Protocol(_))
        ));
        assert!(matches!(
            assembler.push(commit(10)),
            Err(SourceError::Protocol(_))
        ));
        assembler.push(begin(10)).unwrap();
        assert!(matches!(
            assembler.push(begin(20)),
            Err(SourceError::Protocol(_))
        ));

        let mut mismatch = Assembler::new(Lsn(0));
        mismatch.push(begin(10)).unwrap();
        assert!(matches!(
            mismatch.push(commit(11)),
            Err(SourceError::Protocol(_))
        ));

        let unknown = txn(&mut Assembler::new(Lsn(0)), 10, vec![insert(9, &["1"])]);
        assert!(matches!(unknown, Err(SourceError::Protocol(m)) if m.contains("oid 9")));

        let arity = txn(
            &mut Assembler::new(Lsn(0)),
            10,
            vec![
                PgOutputMessage::Change(Change::Relation(relation(1, &["id", "a"]))),
                insert(1, &["1"]),
            ],
        );
        assert!(matches!(arity, Err(SourceError::Protocol(m)) if m.contains("1 columns")));
    }
}
