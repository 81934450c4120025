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
//! [`IdMap`] is the same structure for loaders that keep identifiers of their own (`plexus
//! import`'s id groups: integer or string ids → the nodes the import created, in any table).
//!
//! INVARIANTS
//! ==========
//! - Every entry is a key the transaction found in that table, with its row offset (for an
//!   `IdMap`, an id the loader added, with its node); a key is never removed (a load only
//!   creates: a found node stays found, see `BulkLoad`).
//! - The dense array spans at most `max(DENSE_SLOTS_PER_KEY × keys, DENSE_SLOTS_MIN)` slots;
//!   an insert that would need more turns the integer keys sparse, for good.
//! - `Slot::ABSENT` is never a stored value: vertex offsets (and tables) stay below
//!   `u32::MAX`.

use ahash::RandomState;
use plexus_ingest::import::IdKey;
use plexus_types::{Value, VertexId, VertexTableId};
use std::collections::HashMap;

/// What a dense array holds per key, with the value that marks a slot without one.
trait Slot: Copy + PartialEq {
    const ABSENT: Self;
}

impl Slot for u32 {
    const ABSENT: u32 = u32::MAX;
}

impl Slot for VertexId {
    const ABSENT: VertexId = VertexId {
        table: u32::MAX,
        offset: u32::MAX,
    };
}
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
    ints: IntKeys<u32>,
    others: HashMap<Value, u32>,
    /// Integer keys held (dense or sparse).
    int_count: usize,
}

enum IntKeys<T> {
    Dense { base: i64, rows: Vec<T> },
    Sparse(HashMap<i64, T, RandomState>),
}

impl<T> Default for IntKeys<T> {
    fn default() -> Self {
        IntKeys::Dense {
            base: 0,
            rows: Vec::new(),
        }
    }
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

    /// Reads the slots of `keys` (integer keys held densely) without using them, so the
    /// cache misses of a batch overlap and the lookups after it hit the cache: a lookup's
    /// miss costs ~60 ns on its own, a batch of them in a loop doing nothing else a few.
    pub(super) fn prefetch<'a>(&self, table: &str, keys: impl Iterator<Item = &'a Value>) {
        let Some((_, keys_of)) = self.tables.iter().find(|(name, _)| name == table) else {
            return;
        };
        if let IntKeys::Dense { base, rows } = &keys_of.ints {
            let mut touched = 0u32;
            for key in keys {
                if let Value::Int(k) = key
                    && let Some(slot) = k.checked_sub(*base)
                    && let Ok(slot) = usize::try_from(slot)
                    && let Some(row) = rows.get(slot)
                {
                    touched ^= *row;
                }
            }
            std::hint::black_box(touched);
        }
    }

    /// Remembers that `key` names `v` in `table` (a table's keys all name its own vertices).
    pub(super) fn insert(&mut self, table: &str, key: &Value, v: VertexId) {
        assert_ne!(v.offset, u32::ABSENT, "vertex offsets stay below u32::MAX");
        let at = match self.tables.iter().position(|(name, _)| name == table) {
            Some(at) => at,
            None => {
                let keys = TableKeys {
                    table: v.table,
                    ints: IntKeys::default(),
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

/// Identifiers → nodes, for a loader that keeps its own ids (see the module doc).
#[derive(Default)]
pub struct IdMap {
    ints: IntKeys<VertexId>,
    int_count: usize,
    strings: HashMap<Box<str>, VertexId, RandomState>,
}

impl IdMap {
    /// Ids held.
    pub fn len(&self) -> usize {
        self.int_count + self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, id: &IdKey) -> Option<VertexId> {
        match id {
            IdKey::Int(i) => self.ints.get(*i),
            IdKey::Str(s) => self.strings.get(s).copied(),
        }
    }

    /// Maps `id` to `v`; whether `id` is new.
    pub fn insert(&mut self, id: &IdKey, v: VertexId) -> bool {
        assert!(v != VertexId::ABSENT, "vertex ids stay below u32::MAX");
        match id {
            IdKey::Int(i) => {
                let new = self.ints.insert(*i, v, self.int_count + 1);
                self.int_count += usize::from(new);
                new
            }
            IdKey::Str(s) => self.strings.insert(s.clone(), v).is_none(),
        }
    }
}

impl<T: Slot> IntKeys<T> {
    fn get(&self, key: i64) -> Option<T> {
        match self {
            IntKeys::Dense { base, rows } => {
                let slot = usize::try_from(key.checked_sub(*base)?).ok()?;
                rows.get(slot).copied().filter(|&row| row != T::ABSENT)
            }
            IntKeys::Sparse(map) => map.get(&key).copied(),
        }
    }

    /// Sets `key`; `keys` is how many integer keys the table holds with this one. Whether
    /// the key is new.
    fn insert(&mut self, key: i64, row: T, keys: usize) -> bool {
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
                    rows.splice(0..0, std::iter::repeat_n(T::ABSENT, shift));
                    *base = new_base;
                }
                let slot = (key - *base) as usize;
                if slot >= rows.len() {
                    rows.resize(slot + 1, T::ABSENT);
                }
                let new = rows[slot] == T::ABSENT;
                rows[slot] = row;
                return new;
            }
            let map = (rows.iter().enumerate())
                .filter(|(_, row)| **row != T::ABSENT)
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

    #[test]
    fn an_id_map_holds_integer_and_string_ids() {
        let (int, text) = (IdKey::Int, |s: &str| IdKey::Str(s.into()));
        let mut ids = IdMap::default();
        assert!(ids.is_empty());
        assert!(ids.insert(&int(7), VertexId::new(1, 0)));
        assert!(ids.insert(&int(1 << 40), VertexId::new(2, 5)));
        assert!(!ids.insert(&int(7), VertexId::new(1, 0)));
        assert!(ids.insert(&text("7"), VertexId::new(3, 1)));
        assert_eq!(ids.len(), 3);
        assert_eq!(ids.get(&int(7)), Some(VertexId::new(1, 0)));
        assert_eq!(ids.get(&int(1 << 40)), Some(VertexId::new(2, 5)));
        assert_eq!(ids.get(&int(8)), None);
        assert_eq!(ids.get(&text("7")), Some(VertexId::new(3, 1)));
        assert_eq!(ids.get(&text("8")), None);
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
