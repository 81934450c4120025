//! The resident part of an index map: key → rows in memory, a B-tree of `OrderedKey`s for an
//! ordered map or a hash map for a hashed one (see KINDS), with each key's cost to the budget
//! (see ACCOUNTING).

use super::*;

/// The resident part of a map: key → rows, ascending, each once.
pub(super) enum Resident {
    Ordered(BTreeMap<OrderedKey, Vec<u32>>),
    Hashed(HashMap<Box<[u8]>, Vec<u32>, ahash::RandomState>),
}

/// A key of an ordered resident part: its bytes, in byte-string order, with the first eight
/// also held as one big-endian integer. A B-tree search compares the sought key with several
/// keys per node; keys mostly differ within their first eight bytes (a number's key is nine
/// bytes), so most comparisons are one integer compare instead of a `memcmp` call. Equal
/// heads (zero-padded, so `"a"` and `"a\0"` tie) fall back to comparing the bytes, which keeps
/// the order exactly the byte strings' order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OrderedKey {
    pub(super) head: u64,
    pub(super) bytes: Box<[u8]>,
}

impl OrderedKey {
    pub(super) fn new(bytes: &[u8]) -> Self {
        let mut head = [0u8; 8];
        let n = bytes.len().min(head.len());
        head[..n].copy_from_slice(&bytes[..n]);
        OrderedKey {
            head: u64::from_be_bytes(head),
            bytes: bytes.into(),
        }
    }
}

impl Ord for OrderedKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.head.cmp(&other.head)).then_with(|| self.bytes.cmp(&other.bytes))
    }
}

impl PartialOrd for OrderedKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Estimated resident bytes of a key with `capacity` row slots (see ACCOUNTING).
pub(super) fn key_cost(key_len: usize, capacity: usize) -> u64 {
    key_len as u64 + 4 * capacity as u64 + RESIDENT_KEY_OVERHEAD_BYTES
}

impl Resident {
    pub(super) fn new(kind: MapKind) -> Self {
        match kind {
            MapKind::Ordered => Resident::Ordered(BTreeMap::new()),
            MapKind::Hashed => Resident::Hashed(HashMap::default()),
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Resident::Ordered(map) => map.len(),
            Resident::Hashed(map) => map.len(),
        }
    }

    pub(super) fn reserve(&mut self, additional: usize) {
        match self {
            Resident::Ordered(_) => {}
            Resident::Hashed(map) => map.reserve(additional),
        }
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<&Vec<u32>> {
        match self {
            Resident::Ordered(map) => map.get(&OrderedKey::new(key)),
            Resident::Hashed(map) => map.get(key),
        }
    }

    pub(super) fn get_mut(&mut self, key: &[u8]) -> Option<&mut Vec<u32>> {
        match self {
            Resident::Ordered(map) => map.get_mut(&OrderedKey::new(key)),
            Resident::Hashed(map) => map.get_mut(key),
        }
    }

    /// Adds `row` under `key`; returns the bytes the part grew by.
    pub(super) fn insert(&mut self, key: &[u8], row: u32) -> u64 {
        if let Some(rows) = self.get_mut(key) {
            let Err(at) = rows.binary_search(&row) else {
                return 0;
            };
            let capacity = rows.capacity();
            rows.insert(at, row);
            return 4 * (rows.capacity() - capacity) as u64;
        }
        let rows = vec![row];
        let cost = key_cost(key.len(), rows.capacity());
        match self {
            Resident::Ordered(map) => map.insert(OrderedKey::new(key), rows),
            Resident::Hashed(map) => map.insert(key.into(), rows),
        };
        cost
    }

    /// Removes `row` from `key`; returns the bytes freed, `None` if it was not there.
    pub(super) fn remove(&mut self, key: &[u8], row: u32) -> Option<u64> {
        let rows = self.get_mut(key)?;
        let at = rows.binary_search(&row).ok()?;
        rows.remove(at);
        if !rows.is_empty() {
            return Some(0);
        }
        let capacity = rows.capacity();
        match self {
            Resident::Ordered(map) => map.remove(&OrderedKey::new(key)),
            Resident::Hashed(map) => map.remove(key),
        };
        Some(key_cost(key.len(), capacity))
    }

    /// Every entry, in no particular order.
    pub(super) fn for_each(&self, f: &mut dyn FnMut(&[u8], &[u32])) {
        match self {
            Resident::Ordered(map) => map.iter().for_each(|(k, rows)| f(&k.bytes, rows)),
            Resident::Hashed(map) => map.iter().for_each(|(k, rows)| f(k, rows)),
        }
    }

    /// The keys of `range` in key order, with their rows.
    pub(super) fn range(&self, range: &ByteRange, f: &mut dyn FnMut(&[u8], &[u32])) {
        match self {
            Resident::Ordered(map) => {
                // From the start only: an upper bound below the start would make `range` panic.
                let start = range.start().map(OrderedKey::new);
                let walk = map.range((start, Unbounded));
                for (key, rows) in walk.take_while(|(key, _)| range.continues_to(&key.bytes)) {
                    f(&key.bytes, rows);
                }
            }
            Resident::Hashed(map) => {
                // Hashed maps answer points only; a range still gets a correct answer.
                let mut found: Vec<(&[u8], &[u32])> = (map.iter())
                    .filter(|(key, _)| range.contains(key))
                    .map(|(key, rows)| (&**key, &rows[..]))
                    .collect();
                found.sort_unstable();
                found.into_iter().for_each(|(key, rows)| f(key, rows));
            }
        }
    }

    /// Every entry in key order (what a run holds).
    pub(super) fn sorted(&self) -> Vec<(&[u8], &[u32])> {
        match self {
            Resident::Ordered(map) => (map.iter())
                .map(|(k, rows)| (&*k.bytes, &rows[..]))
                .collect(),
            Resident::Hashed(map) => {
                let mut entries: Vec<(&[u8], &[u32])> =
                    map.iter().map(|(k, rows)| (&**k, &rows[..])).collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                entries
            }
        }
    }
}
