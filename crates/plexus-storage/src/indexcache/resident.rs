//! The resident part of an index map: key → rows in memory, a B-tree of `OrderedKey`s for an
//! ordered map or a hash map for a hashed one (see KINDS), with each key's cost to the budget
//! (see ACCOUNTING).

use super::*;
use std::collections::hash_map::Entry;

/// The resident part of a map: key → rows, ascending, each once.
pub(super) enum Resident {
    Ordered(BTreeMap<OrderedKey, Vec<u32>>),
    Hashed(HashedPart),
}

/// The resident part of a hashed map. The primary-key index keys its entries by an 8-byte
/// digest of the key (see `VertexTable::pk_digest`) and nearly every key has one row, so an
/// 8-byte key with one row is held inline — 16 bytes a slot, no allocation — where a general
/// entry costs a boxed key and a row vector (two allocations, ~100 bytes with the slot).
///
/// Invariant: a key is in at most one of the two maps; `single` holds only 8-byte keys.
#[derive(Default)]
pub(super) struct HashedPart {
    single: HashMap<u64, u32, ahash::RandomState>,
    general: HashMap<Box<[u8]>, Vec<u32>, ahash::RandomState>,
}

/// An 8-byte key as the integer `HashedPart::single` holds it.
fn inline_key(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.try_into().ok()?))
}

/// A key handed out by [`Resident::sorted`]: the map's own bytes, or an inline key's.
pub(super) enum EntryKey<'a> {
    Borrowed(&'a [u8]),
    Inline([u8; 8]),
}

impl EntryKey<'_> {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            EntryKey::Borrowed(bytes) => bytes,
            EntryKey::Inline(bytes) => bytes,
        }
    }
}

impl HashedPart {
    fn get(&self, key: &[u8]) -> Option<&[u32]> {
        if let Some(k) = inline_key(key)
            && let Some(row) = self.single.get(&k)
        {
            return Some(std::slice::from_ref(row));
        }
        self.general.get(key).map(|rows| &rows[..])
    }

    /// Adds `row` under `key`; the bytes the part grew by.
    fn insert(&mut self, key: &[u8], row: u32) -> u64 {
        if let Some(rows) = self.general.get_mut(key) {
            return insert_row(rows, row);
        }
        let Some(k) = inline_key(key) else {
            let rows = vec![row];
            let cost = key_cost(key.len(), rows.capacity());
            self.general.insert(key.into(), rows);
            return cost;
        };
        match self.single.entry(k) {
            Entry::Vacant(slot) => {
                slot.insert(row);
                INLINE_KEY_COST_BYTES
            }
            Entry::Occupied(slot) if *slot.get() == row => 0,
            Entry::Occupied(slot) => {
                // A second row: the key moves to the general map.
                let first = slot.remove();
                let rows = vec![first.min(row), first.max(row)];
                let cost = key_cost(key.len(), rows.capacity());
                self.general.insert(key.into(), rows);
                cost - INLINE_KEY_COST_BYTES
            }
        }
    }

    /// Removes `row` from `key`; the bytes freed, `None` if it was not there.
    fn remove(&mut self, key: &[u8], row: u32) -> Option<u64> {
        if let Some(k) = inline_key(key)
            && self.single.get(&k) == Some(&row)
        {
            self.single.remove(&k);
            return Some(INLINE_KEY_COST_BYTES);
        }
        let rows = self.general.get_mut(key)?;
        let at = rows.binary_search(&row).ok()?;
        rows.remove(at);
        if !rows.is_empty() {
            return Some(0);
        }
        let capacity = rows.capacity();
        self.general.remove(key);
        Some(key_cost(key.len(), capacity))
    }

    fn for_each(&self, f: &mut dyn FnMut(&[u8], &[u32])) {
        for (k, row) in &self.single {
            f(&k.to_be_bytes(), std::slice::from_ref(row));
        }
        self.general.iter().for_each(|(k, rows)| f(k, rows));
    }

    fn entries(&self) -> Vec<(EntryKey<'_>, &[u32])> {
        let single = (self.single.iter())
            .map(|(k, row)| (EntryKey::Inline(k.to_be_bytes()), std::slice::from_ref(row)));
        let general = (self.general.iter()).map(|(k, rows)| (EntryKey::Borrowed(k), &rows[..]));
        single.chain(general).collect()
    }
}

/// Inserts `row` into the ascending `rows` unless there; the bytes the vector grew by.
fn insert_row(rows: &mut Vec<u32>, row: u32) -> u64 {
    let Err(at) = rows.binary_search(&row) else {
        return 0;
    };
    let capacity = rows.capacity();
    rows.insert(at, row);
    4 * (rows.capacity() - capacity) as u64
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
            MapKind::Hashed => Resident::Hashed(HashedPart::default()),
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Resident::Ordered(map) => map.len(),
            Resident::Hashed(part) => part.single.len() + part.general.len(),
        }
    }

    /// Room for `additional` more keys (of the primary-key index's kind: 8 bytes, one row).
    pub(super) fn reserve(&mut self, additional: usize) {
        match self {
            Resident::Ordered(_) => {}
            Resident::Hashed(part) => part.single.reserve(additional),
        }
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<&[u32]> {
        match self {
            Resident::Ordered(map) => map.get(&OrderedKey::new(key)).map(|rows| &rows[..]),
            Resident::Hashed(part) => part.get(key),
        }
    }

    /// Adds `row` under `key`; returns the bytes the part grew by.
    pub(super) fn insert(&mut self, key: &[u8], row: u32) -> u64 {
        let map = match self {
            Resident::Hashed(part) => return part.insert(key, row),
            Resident::Ordered(map) => map,
        };
        if let Some(rows) = map.get_mut(&OrderedKey::new(key)) {
            return insert_row(rows, row);
        }
        let rows = vec![row];
        let cost = key_cost(key.len(), rows.capacity());
        map.insert(OrderedKey::new(key), rows);
        cost
    }

    /// Removes `row` from `key`; returns the bytes freed, `None` if it was not there.
    pub(super) fn remove(&mut self, key: &[u8], row: u32) -> Option<u64> {
        let map = match self {
            Resident::Hashed(part) => return part.remove(key, row),
            Resident::Ordered(map) => map,
        };
        let rows = map.get_mut(&OrderedKey::new(key))?;
        let at = rows.binary_search(&row).ok()?;
        rows.remove(at);
        if !rows.is_empty() {
            return Some(0);
        }
        let capacity = rows.capacity();
        map.remove(&OrderedKey::new(key));
        Some(key_cost(key.len(), capacity))
    }

    /// Every entry, in no particular order.
    pub(super) fn for_each(&self, f: &mut dyn FnMut(&[u8], &[u32])) {
        match self {
            Resident::Ordered(map) => map.iter().for_each(|(k, rows)| f(&k.bytes, rows)),
            Resident::Hashed(part) => part.for_each(f),
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
            Resident::Hashed(_) => {
                // Hashed maps answer points only; a range still gets a correct answer.
                let sorted = self.sorted().into_iter();
                let found = sorted.filter(|(key, _)| range.contains(key.bytes()));
                found.for_each(|(key, rows)| f(key.bytes(), rows));
            }
        }
    }

    /// Every entry in key order (what a run holds).
    pub(super) fn sorted(&self) -> Vec<(EntryKey<'_>, &[u32])> {
        match self {
            Resident::Ordered(map) => (map.iter())
                .map(|(k, rows)| (EntryKey::Borrowed(&k.bytes), &rows[..]))
                .collect(),
            Resident::Hashed(part) => {
                let mut entries = part.entries();
                entries.sort_unstable_by(|a, b| a.0.bytes().cmp(b.0.bytes()));
                entries
            }
        }
    }
}
