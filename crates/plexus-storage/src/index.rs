//! Secondary property indexes: `(label, property)` → the vertices that may hold a value.
//!
//! WHAT IS DURABLE
//! ===============
//! Only the definition: an [`IndexDef`](crate::catalog::IndexDef) `(name, label, property)` in
//! the catalog, logged to the WAL as a `CatalogOp` and stored in every checkpoint like a
//! table definition. The content is rebuilt from the rows — when the index is created and each
//! time the database opens — so it can never disagree with the data on disk, and no index
//! format needs versioning. Cost: one pass over every row of every vertex table per indexed
//! property (plus its kept versions), O(rows); a create does it under the commit lock, so
//! commits wait for the build.
//!
//! STRUCTURE
//! =========
//! Per vertex table, one map per *indexed property key* (whatever the label):
//!
//! ```text
//!   table Person, key name:   'Ada' → [3, 17]     row 17 was renamed 'Bob' at ts 9
//!                             'Bob' → [17]        a reader at ts 8 still finds 17 under 'Ada'
//!   reader at ts 8 seeks 'Ada': candidates [3, 17] → re-check at ts 8: both hold 'Ada'
//!   reader at ts 9 seeks 'Ada': candidates [3, 17] → re-check at ts 9: only 3
//! ```
//!
//! Like the primary-key index, the map is *lossy*: value → rows that held it in some version
//! still kept, with no timestamps. Readers re-check existence, label and value at their
//! snapshot, so MVCC, aborted transactions (never installed) and deletes stay correct without
//! index versions. Every table indexes every indexed key, whether or not it carries the label
//! yet: a label can be installed as an extra label on any table at any commit, and an index
//! that covered only the tables carrying the label when it was built would miss those
//! vertices. Seeks only visit the tables that may carry the label (its own table and those
//! that installed it as an extra label — the tables a label scan visits).
//!
//! KEYS
//! ====
//! Values are indexed by [`IndexKey`], which must be equal for any two values Cypher's `=`
//! calls equal: every number becomes its `f64` (so `1` and `1.0` meet; integers beyond 2^53
//! may share a key with a neighbour — the re-check separates them), `-0.0` becomes `0.0`.
//! Strings and booleans are themselves. `null`, NaN, lists, maps and temporal values are not
//! indexed: an equality with `null` or NaN matches nothing, and a seek for a list, map or
//! temporal value falls back to the label scan.
//!
//! MAINTENANCE AND GROWTH
//! ======================
//! The commit pipeline adds `value → row` after installing each created vertex and property
//! write (after, so that GC pruning can never remove an entry whose version it has not seen).
//! Entries are never removed at commit time; [`PropertyIndexes::prune`] (run by
//! `Storage::maintain`, after the versions below the GC horizon are dropped) removes a row
//! from a value's list when no kept version of the row holds that value. So between two
//! maintenance passes an index holds at most one entry per installed write, and after one it
//! holds one entry per (row, distinct value among the row's kept versions) — about one per
//! row when no long-running reader pins old versions. Pruning visits every entry: O(entries)
//! per pass, with the map read-locked; the stale entries are removed under the write lock
//! after a re-check.
//!
//! STATES
//! ======
//! A key's map is *building* from the moment it is tracked until its first build finishes;
//! seeks on it answer `None` (scan the label instead) until it is ready, and so does every seek
//! on a key no longer tracked (index dropped while a plan using it ran).

use crate::rows::RowTable;
use parking_lot::RwLock;
use plexus_types::{PropKeyId, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Bound on the number of index definitions in a catalog.
pub const MAX_INDEXES: usize = 1024;

/// The equality class of an indexable value (see KEYS).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexKey {
    Bool(bool),
    /// `f64::to_bits` of the number, `-0.0` folded into `0.0`.
    Number(u64),
    String(Arc<str>),
}

impl IndexKey {
    /// The key of `value`, or `None` if such values are not indexed.
    pub fn of(value: &Value) -> Option<IndexKey> {
        let number = |x: f64| (!x.is_nan()).then(|| IndexKey::Number((x + 0.0).to_bits()));
        match value {
            Value::Bool(b) => Some(IndexKey::Bool(*b)),
            Value::Int(i) => number(*i as f64),
            Value::Float(x) => number(*x),
            Value::String(s) => Some(IndexKey::String(s.clone())),
            _ => None,
        }
    }
}

/// One indexed key's map in one table.
#[derive(Default)]
struct KeyIndex {
    /// False while the first build runs (see STATES).
    ready: bool,
    rows: HashMap<IndexKey, Vec<u32>>,
}

/// The secondary indexes of one vertex table: one map per indexed property key.
#[derive(Default)]
pub struct PropertyIndexes {
    keys: RwLock<HashMap<PropKeyId, KeyIndex>>,
}

impl PropertyIndexes {
    /// Starts maintaining `key` (building); a no-op if it is maintained already.
    pub fn track(&self, key: PropKeyId) {
        self.keys.write().entry(key).or_default();
    }

    /// Stops maintaining `key` and frees its map.
    pub fn untrack(&self, key: PropKeyId) {
        self.keys.write().remove(&key);
    }

    /// Indexes every value `key` holds in a kept version of any row of `rows`, then marks the
    /// key ready. Commits may install concurrently: they index their own writes.
    pub fn build(&self, key: PropKeyId, rows: &RowTable) {
        for row in 0..rows.row_count() {
            for value in rows.retained_values(row, key) {
                self.insert(key, &value, row);
            }
        }
        if let Some(index) = self.keys.write().get_mut(&key) {
            index.ready = true;
        }
    }

    /// Notes that `row` holds `value` for `key`, if `key` is tracked and the value indexable.
    /// Called for every property a commit installs: an untracked key costs one uncontended
    /// read latch. (Keys are tracked under the commit lock, so none appears meanwhile.)
    pub fn insert(&self, key: PropKeyId, value: &Value, row: u32) {
        if !self.keys.read().contains_key(&key) {
            return;
        }
        let Some(index_key) = IndexKey::of(value) else {
            return;
        };
        let mut keys = self.keys.write();
        let Some(index) = keys.get_mut(&key) else {
            return;
        };
        let rows = index.rows.entry(index_key).or_default();
        if !rows.contains(&row) {
            rows.push(row);
        }
    }

    /// The rows that may hold `value` for `key`, or `None` when `key` has no ready index.
    pub fn candidates(&self, key: PropKeyId, value: &IndexKey) -> Option<Vec<u32>> {
        let keys = self.keys.read();
        let index = keys.get(&key).filter(|index| index.ready)?;
        Some(index.rows.get(value).cloned().unwrap_or_default())
    }

    /// Removes `value → row` entries no kept version of `row` supports (see MAINTENANCE AND
    /// GROWTH); returns how many were removed.
    pub fn prune(&self, rows: &RowTable) -> usize {
        let holds = |key: PropKeyId, value: &IndexKey, row: u32| {
            rows.retained_values(row, key)
                .iter()
                .any(|held| IndexKey::of(held).as_ref() == Some(value))
        };
        let mut stale: Vec<(PropKeyId, IndexKey, u32)> = Vec::new();
        for (&key, index) in self.keys.read().iter() {
            for (value, candidates) in &index.rows {
                let gone = candidates.iter().filter(|&&row| !holds(key, value, row));
                stale.extend(gone.map(|&row| (key, value.clone(), row)));
            }
        }
        let mut keys = self.keys.write();
        let mut removed = 0;
        for (key, value, row) in stale {
            // Re-checked under the write lock: a commit may have installed the value again.
            if holds(key, &value, row) {
                continue;
            }
            let Some(index) = keys.get_mut(&key) else {
                continue;
            };
            if let Some(candidates) = index.rows.get_mut(&value) {
                candidates.retain(|&r| r != row);
                removed += 1;
                if candidates.is_empty() {
                    index.rows.remove(&value);
                }
            }
        }
        removed
    }

    /// Entries (value, row) over all keys.
    #[cfg(test)]
    fn entry_count(&self) -> usize {
        let keys = self.keys.read();
        keys.values()
            .map(|index| index.rows.values().map(Vec::len).sum::<usize>())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::PropertyDef;

    const NAME: PropKeyId = 0;

    fn table_with(values: &[(u32, Value)]) -> RowTable {
        let rows = RowTable::new("T", &[] as &[PropertyDef], &[]);
        rows.ensure_reserved(values.len() as u32);
        for (row, value) in values {
            rows.install_create(*row, 1, 1, &[], &[(NAME, value.clone())]);
        }
        rows
    }

    #[test]
    fn integers_and_floats_that_cypher_calls_equal_share_a_key() {
        assert_eq!(
            IndexKey::of(&Value::Int(1)),
            IndexKey::of(&Value::Float(1.0))
        );
        assert_eq!(
            IndexKey::of(&Value::Float(-0.0)),
            IndexKey::of(&Value::Int(0))
        );
        assert_ne!(
            IndexKey::of(&Value::Int(1)),
            IndexKey::of(&Value::Float(1.5))
        );
        assert_eq!(IndexKey::of(&Value::Float(f64::NAN)), None);
        assert_eq!(IndexKey::of(&Value::Null), None);
    }

    #[test]
    fn an_index_is_not_answered_before_its_build_finishes() {
        let rows = table_with(&[(0, Value::Int(7))]);
        let indexes = PropertyIndexes::default();
        let seven = IndexKey::of(&Value::Int(7)).expect("indexable");
        indexes.track(NAME);
        assert_eq!(indexes.candidates(NAME, &seven), None);
        indexes.build(NAME, &rows);
        assert_eq!(indexes.candidates(NAME, &seven), Some(vec![0]));
        indexes.untrack(NAME);
        assert_eq!(indexes.candidates(NAME, &seven), None);
    }

    #[test]
    fn pruning_keeps_values_readers_above_the_horizon_can_see() {
        let rows = table_with(&[(0, Value::Int(1))]);
        let indexes = PropertyIndexes::default();
        indexes.track(NAME);
        indexes.build(NAME, &rows);
        // ts 5: row 0 becomes 2; a reader at ts 4 may still look for 1.
        rows.install_prop(0, 5, 4, NAME, Some(Value::Int(2)));
        indexes.insert(NAME, &Value::Int(2), 0);
        rows.gc(4);
        assert_eq!(indexes.prune(&rows), 0);
        assert_eq!(indexes.entry_count(), 2);
        // Once no reader is older than ts 5, the entry for 1 goes.
        rows.gc(5);
        assert_eq!(indexes.prune(&rows), 1);
        let one = IndexKey::of(&Value::Int(1)).expect("indexable");
        assert_eq!(indexes.candidates(NAME, &one), Some(vec![]));
    }
}
