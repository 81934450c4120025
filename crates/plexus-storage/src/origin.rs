//! Replication origins: how far a follower of another system has applied it, stored with the
//! graph commits that applied it.
//!
//! A follower (the PostgreSQL mirror) writes the source's changes in ordinary commits and
//! adds to each a [`WriteOp::SetOrigin`](crate::WriteOp::SetOrigin) naming its origin and the
//! source position the commit brings the graph up to. Because the position is part of the
//! commit record, it is exactly as durable as the writes: after any crash the recovered
//! position is the one the recovered graph reflects, so the follower resumes there and applies
//! nothing twice and nothing never. (This is PostgreSQL's "replication origin" idea.)
//!
//! Storage keeps, per origin, the positions set by recent commits with their timestamps, so a
//! checkpoint of the state at `ts` records the position as of `ts` while later commits run.
//!
//! Invariants: per origin, timestamps strictly increase; the history holds every entry newer
//! than the last checkpoint plus the newest one at or before it (older ones are pruned).

use parking_lot::Mutex;
use plexus_types::Timestamp;
use std::collections::BTreeMap;

/// Origin names are short identifiers chosen by the follower.
pub const ORIGIN_NAME_MAX_BYTES: usize = 255;

#[derive(Default)]
pub(crate) struct Origins {
    state: Mutex<OriginState>,
}

#[derive(Default)]
struct OriginState {
    /// Per origin: (commit timestamp, position), oldest first.
    history: BTreeMap<String, Vec<(Timestamp, u64)>>,
    checkpointed_ts: Timestamp,
}

impl Origins {
    /// Records that the commit at `ts` applied origin `name` up to `position`.
    pub(crate) fn set(&self, name: &str, ts: Timestamp, position: u64) {
        let mut state = self.state.lock();
        let checkpointed_ts = state.checkpointed_ts;
        let history = state.history.entry(name.to_owned()).or_default();
        assert!(
            history.last().is_none_or(|&(last, _)| last < ts),
            "origin {name}: commit timestamps must increase"
        );
        history.push((ts, position));
        prune(history, checkpointed_ts);
    }

    /// The newest position of `name` and the timestamp of the commit that set it.
    pub(crate) fn latest(&self, name: &str) -> Option<(u64, Timestamp)> {
        let state = self.state.lock();
        let &(ts, position) = state.history.get(name)?.last()?;
        Some((position, ts))
    }

    /// Every origin's position as of `ts` (for a checkpoint of that state); later
    /// checkpoints are never older, so history before it may go.
    pub(crate) fn as_of(&self, ts: Timestamp) -> Vec<(String, u64)> {
        let mut state = self.state.lock();
        state.checkpointed_ts = state.checkpointed_ts.max(ts);
        let checkpointed_ts = state.checkpointed_ts;
        let mut positions = Vec::new();
        for (name, history) in &mut state.history {
            if let Some(&(_, position)) = history.iter().rev().find(|(at, _)| *at <= ts) {
                positions.push((name.clone(), position));
            }
            prune(history, checkpointed_ts);
        }
        positions
    }

    /// Loads a checkpoint's positions (the state at `ts`).
    pub(crate) fn load(&self, positions: Vec<(String, u64)>, ts: Timestamp) {
        let mut state = self.state.lock();
        state.checkpointed_ts = ts;
        for (name, position) in positions {
            state.history.insert(name, vec![(ts, position)]);
        }
    }
}

/// Drops entries older than the newest one at or before `checkpointed_ts`.
fn prune(history: &mut Vec<(Timestamp, u64)>, checkpointed_ts: Timestamp) {
    let keep_from = history
        .iter()
        .rposition(|(ts, _)| *ts <= checkpointed_ts)
        .unwrap_or(0);
    history.drain(..keep_from);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_sees_the_position_as_of_its_timestamp_and_history_stays_short() {
        let origins = Origins::default();
        origins.set("pg", 10, 100);
        origins.set("pg", 20, 200);
        origins.set("other", 15, 7);
        assert_eq!(origins.latest("pg"), Some((200, 20)));
        assert_eq!(origins.latest("missing"), None);
        let mut at_17 = origins.as_of(17);
        at_17.sort();
        assert_eq!(at_17, vec![("other".to_owned(), 7), ("pg".to_owned(), 100)]);
        for ts in 21..1000 {
            origins.set("pg", ts, ts * 10);
        }
        origins.as_of(998);
        let state = origins.state.lock();
        assert_eq!(state.history["pg"], vec![(998, 9980), (999, 9990)]);
    }

    #[test]
    fn loading_a_checkpoint_replaces_the_positions() {
        let origins = Origins::default();
        origins.load(vec![("pg".to_owned(), 42)], 9);
        assert_eq!(origins.latest("pg"), Some((42, 9)));
        origins.set("pg", 10, 43);
        assert_eq!(origins.as_of(9), vec![("pg".to_owned(), 42)]);
    }
}
