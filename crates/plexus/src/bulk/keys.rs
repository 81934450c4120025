//! The primary keys a bulk load has found, per vertex table.
//!
//! WHAT
//! ====
//! Edge files name each node many times (16 times on average in the RMAT benchmark), so
//! [`BulkLoad::lookup`](super::BulkLoad::lookup) remembers every key the transaction found.
//! Kept in a map of `Value`s, a hit cost ~250 ns at a million keys — a cache miss on the
//! entry, then SipHash and `Value` equality — and hits were a third of a `COPY`'s time.
//! Integer keys, the usual case, are kept by their `i64` instead:
//!
//! ```text
//!   dense    rows[key - base] = row offset (ABSENT where no key was found)   4 bytes a slot
//!   sparse   ahash map i64 → row offset, once the keys spread too far for the array
//!   others   map Value → row offset (strings, dates, …)
//! ```
//!
//! INVARIANTS
//! ==========
//! - Every entry is a key the transaction found in that table, with its row offset; a key is
//!   never removed (a load only creates: a found node stays found, see `BulkLoad`).
//! - The dense array spans at most `max(DENSE_SLOTS_PER_KEY × keys, DENSE_SLOTS_MIN)` slots;
//!   an insert that would need more turns the table's integer keys sparse, for good.
//! - `ABSENT` (`u32::MAX`) is never a row offset: vertex offsets stay below it.

use ahash::RandomState;
use plexus_types::{Value, VertexId, VertexTableId};
use std::collections::HashMap;

/// A dense slot without a key.
const ABSENT: u32 = u32::MAX;
/// Slots the dense array may spend per key before it turns sparse.
const DENSE_SLOTS_PER_KEY: usize = 4;
/// Slots the dense array may always span (16 MiB), however few its keys: edge files name
/// their nodes in no order, so the first keys found are spread over the whole id range.
const DENSE_SLOTS_MIN: usize = 1 << 22;

/// Found keys of every table a load looked up (a handful: searched in turn).
#[derive(Default)]
pub(super) struct FoundKeys {
    tables: Vec<(String, TableKeys)>,
    len: usize,
}

struct TableKeys {
    table: VertexTableId,
    ints: IntKeys,
    others: HashMap<Value, u32>,
    /// Integer keys held (dense or sparse).
    int_count: usize,
}

enum IntKeys {
    Dense { base: i64, rows: Vec<u32> },
    Sparse(HashMap<i64, u32, RandomState>),
}

impl FoundKeys {
    /// Keys held, all tables together.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn get(&self, table: &str, key: &Value) -> Option<VertexId> {
        let (_, keys) = self.tables.iter().find(|(name, _)| name == table)?;
        let row = match key {
            Value::Int(k) => keys.ints.get(*k),
            other => keys.others.get(other).copied(),
        }?;
        Some(VertexId::new(keys.table, row))
    }

    /// Remembers that `key` names `v` in `table` (a table's keys all name its own vertices).
    pub(super) fn insert(&mut self, table: &str, key: &Value, v: VertexId) {
        assert_ne!(v.offset, ABSENT, "vertex offsets stay below u32::MAX");
        let at = match self.tables.iter().position(|(name, _)| name == table) {
            Some(at) => at,
            None => {
                let keys = TableKeys {
                    table: v.table,
                    ints: IntKeys::Dense {
                        base: 0,
                        rows: Vec::new(),
                    },
                    others: HashMap::new(),
                    int_count: 0,
                };
                self.tables.push((table.to_owned(), keys));
                self.tables.len() - 1
            }
        };
        let keys = &mut self.tables[at].1;
        debug_assert_eq!(
            keys.table, v.table,
            "one table's keys name its own vertices"
        );
        let new = match key {
            Value::Int(k) => {
                let new = keys.ints.insert(*k, v.offset, keys.int_count + 1);
                keys.int_count += usize::from(new);
                new
            }
            other => keys.others.insert(other.clone(), v.offset).is_none(),
        };
        self.len += usize::from(new);
    }
}

impl IntKeys {
    fn get(&self, key: i64) -> Option<u32> {
        match self {
            IntKeys::Dense { base, rows } => {
                let slot = usize::try_from(key.checked_sub(*base)?).ok()?;
                rows.get(slot).copied().filter(|&row| row != ABSENT)
            }
            IntKeys::Sparse(map) => map.get(&key).copied(),
        }
    }

    /// Sets `key`; `keys` is how many integer keys the table holds with this one. Whether
    /// the key is new.
    fn insert(&mut self, key: i64, row: u32, keys: usize) -> bool {
        if let IntKeys::Dense { base, rows } = self {
            let limit = (DENSE_SLOTS_PER_KEY.saturating_mul(keys)).max(DENSE_SLOTS_MIN);
            if rows.is_empty() {
                *base = key;
            }
            // The span the array needs with `key` in it, computed without overflow.
            let lo = (*base).min(key);
            let hi = (*base).saturating_add(rows.len() as i64 - 1).max(key);
            let span = (i128::from(hi) - i128::from(lo) + 1) as u128;
            if span <= limit as u128 {
                if key < *base {
                    // Room below too, so keys arriving in falling order do not shift the
                    // array each time.
                    let spare = (limit - span as usize).min(rows.len());
                    let new_base = key.saturating_sub(spare as i64);
                    let shift = (*base - new_base) as usize;
                    rows.splice(0..0, std::iter::repeat_n(ABSENT, shift));
                    *base = new_base;
                }
                let slot = (key - *base) as usize;
                if slot >= rows.len() {
                    rows.resize(slot + 1, ABSENT);
                }
                let new = rows[slot] == ABSENT;
                rows[slot] = row;
                return new;
            }
            let map = (rows.iter().enumerate())
                .filter(|(_, row)| **row != ABSENT)
                .map(|(slot, row)| (*base + slot as i64, *row))
                .collect();
            *self = IntKeys::Sparse(map);
        }
        match self {
            IntKeys::Sparse(map) => map.insert(key, row).is_none(),
            IntKeys::Dense { .. } => unreachable!("turned sparse above"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(offset: u32) -> VertexId {
        VertexId::new(3, offset)
    }

    #[test]
    fn dense_keys_stay_in_an_array_and_spread_keys_turn_sparse() {
        let mut found = FoundKeys::default();
        for k in (0..1000).rev().chain([4_000_000, 3_000_000]) {
            found.insert("V", &Value::Int(k), v(k as u32 * 2));
        }
        assert!(matches!(found.tables[0].1.ints, IntKeys::Dense { .. }));
        assert_eq!(found.get("V", &Value::Int(999)), Some(v(1998)));
        assert_eq!(found.get("V", &Value::Int(1000)), None);
        assert_eq!(found.get("V", &Value::Int(3_000_000)), Some(v(6_000_000)));
        assert_eq!(found.get("V", &Value::Int(-1)), None);
        assert_eq!(found.get("W", &Value::Int(1)), None);
        found.insert("V", &Value::Int(i64::MAX), v(7));
        found.insert("V", &Value::Int(i64::MIN), v(8));
        assert!(matches!(found.tables[0].1.ints, IntKeys::Sparse(_)));
        assert_eq!(found.get("V", &Value::Int(i64::MAX)), Some(v(7)));
        assert_eq!(found.get("V", &Value::Int(500)), Some(v(1000)));
        found.insert("V", &Value::from("a"), v(9));
        assert_eq!(found.get("V", &Value::from("a")), Some(v(9)));
        assert_eq!(found.get("V", &Value::Float(500.0)), None);
        assert_eq!(found.len(), 1005);
    }

    proptest! {
        /// Whatever order and spread the keys come in, the cache answers as a plain map.
        #[test]
        fn answers_as_a_map(
            keys in prop::collection::vec(
                prop_oneof![-70_000i64..70_000, -5_000_000i64..5_000_000, any::<i64>(), Just(i64::MIN), Just(i64::MAX)],
                1..400,
            ),
        ) {
            let mut found = FoundKeys::default();
            let mut model = HashMap::new();
            for (i, &k) in keys.iter().enumerate() {
                found.insert("V", &Value::Int(k), v(i as u32));
                model.insert(k, i as u32);
                prop_assert_eq!(found.len(), model.len());
            }
            for &k in keys.iter().chain(&[0, 1, -1, 69_999, i64::MIN + 1]) {
                prop_assert_eq!(found.get("V", &Value::Int(k)), model.get(&k).map(|&o| v(o)));
            }
        }
    }
}
