//! The primary keys of the vertices a bulk load staged, per vertex table.
//!
//! WHAT
//! ====
//! [`Transaction::stage_vertices`](crate::Transaction::stage_vertices) stages a load's nodes
//! as columns (`VertexBatch`); their primary keys go here, each with its vertex row:
//!
//! ```text
//!   per table   ints     ahash map i64 → row offset      (INT64 keys, the usual case)
//!               others   ahash map Value → row offset    (strings, dates, …)
//! ```
//!
//! One structure answers three questions: is a key free for the next staged node (a
//! duplicate within the load), which node holds a key (the load's `lookup`, edge files
//! naming their endpoints by key), and — shared by the load's commit summary, not copied
//! into it — did a concurrent transaction claim one of the load's keys. A key claimed a row
//! at a time (`create_vertex`, `WriteSet::pk_claims`) costs a `(table, Value)` pair and a
//! `VertexId` in a map, ~50 bytes a slot; an integer key here costs 12.
//!
//! INVARIANTS
//! ==========
//! - Every entry is the key of one vertex the transaction staged, with that vertex's row
//!   offset; a key appears at most once per table (the stager checks before inserting).
//! - Entries are never removed: staged vertices cannot be deleted or changed.

use ahash::RandomState;
use plexus_types::{Value, VertexId, VertexTableId};
use std::collections::HashMap;

#[derive(Clone, Default, Debug)]
pub struct StagedKeys {
    /// Per table (a load stages into a handful: searched in turn).
    tables: Vec<(VertexTableId, TableKeys)>,
    len: usize,
}

#[derive(Clone, Default, Debug)]
struct TableKeys {
    ints: HashMap<i64, u32, RandomState>,
    others: HashMap<Value, u32, RandomState>,
}

impl TableKeys {
    fn get(&self, key: &Value) -> Option<u32> {
        match key {
            Value::Int(i) => self.ints.get(i).copied(),
            other => self.others.get(other).copied(),
        }
    }

    fn len(&self) -> usize {
        self.ints.len() + self.others.len()
    }

    fn keys(&self) -> impl Iterator<Item = Value> + '_ {
        let ints = self.ints.keys().map(|&i| Value::Int(i));
        ints.chain(self.others.keys().cloned())
    }
}

impl StagedKeys {
    fn table(&self, table: VertexTableId) -> Option<&TableKeys> {
        let found = self.tables.iter().find(|(t, _)| *t == table);
        found.map(|(_, keys)| keys)
    }

    fn table_mut(&mut self, table: VertexTableId) -> &mut TableKeys {
        let at = match self.tables.iter().position(|(t, _)| *t == table) {
            Some(at) => at,
            None => {
                self.tables.push((table, TableKeys::default()));
                self.tables.len() - 1
            }
        };
        &mut self.tables[at].1
    }

    /// The staged vertex of `table` whose key is `key`.
    pub fn get(&self, table: VertexTableId, key: &Value) -> Option<VertexId> {
        let offset = self.table(table)?.get(key)?;
        Some(VertexId::new(table, offset))
    }

    /// Records that staged vertex `v` holds `key` in its table. The caller checked that no
    /// staged vertex holds it (asserted in debug builds).
    pub fn insert(&mut self, v: VertexId, key: &Value) {
        let keys = self.table_mut(v.table);
        let previous = match key {
            Value::Int(i) => keys.ints.insert(*i, v.offset),
            other => keys.others.insert(other.clone(), v.offset),
        };
        debug_assert!(previous.is_none(), "key {key} staged twice");
        self.len += 1;
    }

    /// Makes room for `additional` more keys of `table` like `sample`'s.
    pub fn reserve(&mut self, table: VertexTableId, sample: &Value, additional: usize) {
        let keys = self.table_mut(table);
        match sample {
            Value::Int(_) => keys.ints.reserve(additional),
            _ => keys.others.reserve(additional),
        }
    }

    pub fn len(&self) -> usize {
        debug_assert_eq!(self.len, self.tables.iter().map(|(_, k)| k.len()).sum());
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `key` of `table` is one of these keys.
    pub fn contains(&self, table: VertexTableId, key: &Value) -> bool {
        self.table(table)
            .is_some_and(|keys| keys.get(key).is_some())
    }

    /// A key both hold, if any (the smaller one's keys are looked up in the larger).
    pub fn common_key(&self, other: &StagedKeys) -> Option<(VertexTableId, Value)> {
        let (small, large) = match self.len() <= other.len() {
            true => (self, other),
            false => (other, self),
        };
        small
            .iter()
            .find(|(table, key)| large.contains(*table, key))
    }

    /// Every key, with its table.
    pub fn iter(&self) -> impl Iterator<Item = (VertexTableId, Value)> + '_ {
        (self.tables.iter()).flat_map(|(table, keys)| keys.keys().map(move |key| (*table, key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_by_table_and_kind() {
        let mut keys = StagedKeys::default();
        keys.insert(VertexId::new(0, 7), &Value::Int(42));
        keys.insert(VertexId::new(1, 3), &Value::Int(42));
        keys.insert(VertexId::new(0, 8), &Value::from("ada"));
        assert_eq!(keys.get(0, &Value::Int(42)), Some(VertexId::new(0, 7)));
        assert_eq!(keys.get(1, &Value::Int(42)), Some(VertexId::new(1, 3)));
        assert_eq!(keys.get(0, &Value::from("ada")), Some(VertexId::new(0, 8)));
        assert_eq!(keys.get(1, &Value::from("ada")), None, "another table");
        assert_eq!(keys.get(2, &Value::Int(42)), None, "no such table");
        assert_eq!(keys.len(), 3);
        let mut all: Vec<_> = keys.iter().collect();
        all.sort_by_key(|(t, k)| (*t, k.to_string()));
        assert_eq!(
            all,
            [
                (0, Value::from("ada")), // displayed quoted: 'ada' < 42
                (0, Value::Int(42)),
                (1, Value::Int(42))
            ]
        );
        let mut other = StagedKeys::default();
        other.insert(VertexId::new(1, 0), &Value::from("ada"));
        assert_eq!(keys.common_key(&other), None, "same key, other table");
        other.insert(VertexId::new(1, 1), &Value::Int(42));
        assert_eq!(keys.common_key(&other), Some((1, Value::Int(42))));
        assert_eq!(other.common_key(&keys), Some((1, Value::Int(42))));
    }
}
