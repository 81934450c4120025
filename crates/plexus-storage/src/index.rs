//! Secondary property indexes: `(label, property)` → the vertices that may hold a value, and
//! `(edge type, property)` → the edges that may, in value order, so that seeks can ask for one
//! value, a range or a string prefix.
//!
//! WHAT IS DURABLE
//! ===============
//! Only the definition: an [`IndexDef`](crate::catalog::IndexDef) `(name, label or edge type,
//! property)` in the catalog, logged to the WAL as a `CatalogOp` and stored in every checkpoint
//! like a table definition. The content is rebuilt from the rows — when the index is created
//! and each time the database opens — so it can never disagree with the data on disk, and no
//! index format needs versioning. Cost: one pass over every row of every table that keeps the
//! index (plus its kept versions), O(rows); a create does it under the commit lock, so commits
//! wait for the build.
//!
//! STRUCTURE
//! =========
//! Vertex and edge tables keep index content alike: per table, one [`PropertyIndexes`] holding
//! an ordered map (an [`IndexMap`] of kind `Ordered`: a `BTreeMap` in memory plus sorted runs
//! on disk, see SPILLING; every seek is a walk that starts with an O(log keys) descent or
//! binary search) per *indexed property key*:
//!
//! ```text
//!   table Person, key name:   'Ada' → [3, 17]     row 17 was renamed 'Bob' at ts 9
//!                             'Bob' → [17]        a reader at ts 8 still finds 17 under 'Ada'
//!   reader at ts 8 seeks 'Ada': candidates [3, 17] → re-check at ts 8: both hold 'Ada'
//!   reader at ts 9 seeks 'Ada': candidates [3, 17] → re-check at ts 9: only 3
//! ```
//!
//! Like the primary-key index, the map is *lossy*: value → rows that held it in some version
//! still kept, with no timestamps. Readers re-check existence, label or type, and value at
//! their snapshot, so MVCC, aborted transactions (never installed) and deletes stay correct
//! without index versions.
//!
//! Which tables keep which keys ([`IndexHome`](crate::catalog::IndexHome)):
//!
//! - Every vertex table keeps the key of every label's index, whether or not it carries the
//!   label yet: a label can be installed as an extra label on any table at any commit, and an
//!   index that covered only the tables carrying the label when it was built would miss those
//!   vertices. Seeks only visit the tables that may carry the label (its own table and those
//!   that installed it as an extra label — the tables a label scan visits).
//! - An edge table keeps only the keys of its own edge type's indexes: an edge table holds the
//!   edges of one (source table, type, destination table), and an edge never changes type.
//!   Seeks visit the edge tables of the type; one created later starts with its type's keys.
//!
//! KEYS
//! ====
//! Values are indexed by [`IndexKey`], which must be equal for any two values Cypher's `=`
//! calls equal: every number becomes its `f64` (so `1` and `1.0` meet; integers beyond 2^53
//! may share a key with a neighbour — the re-check separates them), `-0.0` becomes `0.0`.
//! Strings and booleans are themselves. `null`, NaN, lists, maps and temporal values are not
//! indexed: an equality with `null` or NaN matches nothing, and a seek for a list, map or
//! temporal value falls back to the scan (of the label, or the edge type).
//!
//! Keys are ordered kind by kind — every boolean, then every number, then every string — and
//! within a kind as Cypher's `<` orders them: `false < true`; numbers numerically (the `f64`
//! is stored as bits whose unsigned order is the numeric order, `sortable_bits`); strings
//! by code point (Rust's `str` order, which `plexus_value::compare` uses too).
//!
//! The maps store a key as bytes ([`IndexKey::encode`]) whose byte order is that order: a
//! tag per kind (0 boolean, 1 number, 2 string), then the boolean as one byte, the sortable
//! bits big-endian, or the string's UTF-8 (whose byte order is the code point order). So a
//! string prefix is a byte prefix, and a range of one kind is the byte strings after its
//! lower bound, before its upper one, starting with its kind's tag (`KeyRange::bytes`).
//!
//! RANGES
//! ======
//! A seek asks for a [`KeyRange`]: one key (`=`), the keys between two bounds of one kind
//! (`<`, `<=`, `>`, `>=`, one side or both), or the strings with a prefix (`STARTS WITH`). It
//! is answered by one walk of the ordered map, from the range's first key until a key falls
//! outside it; a range never leaves its kind, because Cypher compares a number with a string
//! (or a boolean) to null, which no filter accepts:
//!
//! ```text
//!   keys:  false true | -inf … 2.5 10 11 12 … +inf | '' '10' 'abc' 'item1' 'item10' 'item2'
//!   v >= 10 AND v < 12        walks  10 11             (stops at 12)
//!   v < 3                     walks  -inf … 2.5        (from the first number; stops at 10)
//!   name STARTS WITH 'item1'  walks  'item1' 'item10'  (stops at 'item2')
//! ```
//!
//! The walk lists candidates, and the caller's re-check (at its snapshot, by key) and the
//! filter above the seek (by Cypher's comparison) keep the true matches. So a range may list
//! too much but must never miss a row, which rounding could cause: from 2^53 on, integers
//! round to a neighbouring `f64`, and `2^53 + 1 > 2^53` holds though both have the key of
//! 2^53. Rounding is monotone (`a <= b` implies `key(a) <= key(b)`), so inclusive bounds are
//! always safe; a strict bound on a number of magnitude 2^53 or more is widened to an
//! inclusive one, so the rows under its key are listed too. Below 2^53 every key stands for
//! one number, and strict bounds stay strict.
//!
//! A null or NaN bound, or bounds of two kinds, give the empty range (no value compares true
//! with them); a bound of a kind that is not indexed (a list, a map, a temporal value) gives
//! no range at all, and the caller scans — the filter then decides, as with any scan.
//!
//! MAINTENANCE AND GROWTH
//! ======================
//! The commit pipeline adds `value → row` after installing each created vertex or edge and
//! each property write (after, so that GC pruning can never remove an entry whose version it
//! has not seen). Entries are never removed at commit time; [`PropertyIndexes::prune`] (run by
//! `Storage::maintain`, after the versions below the GC horizon are dropped) removes a row
//! from a value's list when no kept version of the row holds that value. So between two
//! maintenance passes an index holds at most one entry per installed write, and after one it
//! holds one entry per (row, distinct value among the row's kept versions) — about one per
//! row when no long-running reader pins old versions. Pruning visits every resident entry:
//! O(entries) per pass, with the map read-locked; the stale entries are removed under the
//! write lock after a re-check. (Spilled entries are not pruned: see SPILLING.)
//!
//! SPILLING
//! ========
//! The maps of every table, with the primary-key indexes (`store`), share the database's
//! [`IndexCache`] and its budget (`Config::index_cache_bytes`): past it, the largest resident
//! part of a map is written as a sorted run to a scratch file and dropped from memory (see
//! `indexcache`). Content is rebuilt at open (WHAT IS DURABLE), so the runs are scratch
//! files, deleted at open. A seek merges the resident part and every run of its map — the
//! same rows, in the same order (key by key, each key's rows ascending and each once), as if
//! nothing were spilled — and reading a damaged run is `Corruption` naming the file, which
//! the seek returns. What changes once a map has runs:
//!
//! - `prune` cleans the resident part only: a stale entry already in a run stays until the
//!   database restarts (harmless: readers re-check; merges of runs cannot tell stale entries,
//!   which needs the rows).
//! - `distinct_values` sums the distinct keys of each part, so a value found in several
//!   parts counts once per part: an overestimate by at most the number of parts (exact while
//!   nothing is spilled). The planner only needs the order of magnitude.
//! - A seek reads blocks of the runs (through the operating system's page cache).
//!
//! STATES
//! ======
//! A key's map is *building* from the moment it is tracked until its first build finishes;
//! seeks on it answer `None` (scan instead) until it is ready, and so does every seek on a key
//! no longer tracked (index dropped while a plan using it ran).
//!
//! NOT SUPPORTED
//! =============
//! Composite indexes (several properties), indexes over several labels or edge types,
//! `ENDS WITH` / `CONTAINS` / regular expressions, ranges over temporal values or lists, and
//! any ordering the index could hand to `ORDER BY` (rows come back in row order after the
//! re-check).

use crate::indexcache::{ByteRange, IndexCache, IndexMap, MapKind};
use crate::rows::RowTable;
use parking_lot::RwLock;
use plexus_types::{PropKeyId, Result, Value};
use std::collections::HashMap;
use std::mem::discriminant;
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::Arc;

/// Bound on the number of index definitions in a catalog.
pub const MAX_INDEXES: usize = 1024;

/// 2^53: every integer of smaller magnitude is exact in `f64`; from here on neighbouring
/// integers round to one `f64` and so share a key (see RANGES).
const MIN_INEXACT_F64_MAGNITUDE: f64 = 9_007_199_254_740_992.0;

/// The equality class of an indexable value (see KEYS), in the order of RANGES.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IndexKey {
    Bool(bool),
    /// The number's `f64`, `-0.0` folded into `0.0`, as `sortable_bits`.
    Number(u64),
    String(Arc<str>),
}

impl IndexKey {
    /// The key of `value`, or `None` if such values are not indexed.
    pub fn of(value: &Value) -> Option<IndexKey> {
        match value {
            Value::Bool(b) => Some(IndexKey::Bool(*b)),
            Value::String(s) => Some(IndexKey::String(s.clone())),
            _ => {
                let x = number(value)?;
                (!x.is_nan()).then(|| IndexKey::Number(sortable_bits(x)))
            }
        }
    }

    /// The smallest key of this key's kind.
    fn first_of_kind(&self) -> IndexKey {
        match self {
            IndexKey::Bool(_) => IndexKey::Bool(false),
            // Below every encoded number: the encoding of -inf is 0x000F_FFFF_FFFF_FFFF.
            IndexKey::Number(_) => IndexKey::Number(0),
            IndexKey::String(_) => IndexKey::String(Arc::from("")),
        }
    }

    fn same_kind(&self, other: &IndexKey) -> bool {
        discriminant(self) == discriminant(other)
    }

    /// The key as the index maps store it (see KEYS): a tag in kind order, then the boolean
    /// as a byte, the number's sortable bits big-endian, or the string's UTF-8. Byte order is
    /// the key order, and a string prefix is a byte prefix.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = vec![self.tag()];
        match self {
            IndexKey::Bool(b) => bytes.push(u8::from(*b)),
            IndexKey::Number(bits) => bytes.extend_from_slice(&bits.to_be_bytes()),
            IndexKey::String(s) => bytes.extend_from_slice(s.as_bytes()),
        }
        bytes
    }

    fn tag(&self) -> u8 {
        match self {
            IndexKey::Bool(_) => 0,
            IndexKey::Number(_) => 1,
            IndexKey::String(_) => 2,
        }
    }
}

/// The value of a number as `f64` (integers rounded to the nearest), `None` for others.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Int(i) => Some(*i as f64),
        Value::Float(x) => Some(*x),
        _ => None,
    }
}

/// `x` (not NaN) as bits whose unsigned order is the numeric order of `x`: the sign bit of
/// a positive number is set, every bit of a negative one flipped. `-0.0` becomes `0.0` first.
fn sortable_bits(x: f64) -> u64 {
    debug_assert!(!x.is_nan(), "NaN is never indexed");
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// Whether a comparison with `value` is never true: null, and NaN (every comparison with NaN
/// is false).
fn never_compares(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Float(x) => x.is_nan(),
        _ => false,
    }
}

/// The keys a seek asks an index for (see RANGES): one walk over a stretch of the ordered
/// map, all keys of one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyRange {
    /// No key: the predicate is never true (a null or NaN operand, bounds of two kinds).
    Empty,
    /// The keys of `lower`'s kind from `lower` (never `Unbounded`) to `upper` (a key of the
    /// same kind, or `Unbounded`: to the kind's last key).
    Between {
        lower: Bound<IndexKey>,
        upper: Bound<IndexKey>,
    },
    /// The strings starting with the prefix.
    Prefix(Arc<str>),
}

impl KeyRange {
    /// The one key of a range that holds exactly one (`= value`).
    pub fn point(&self) -> Option<&IndexKey> {
        match self {
            KeyRange::Between {
                lower: Included(low),
                upper: Included(high),
            } if low == high => Some(low),
            _ => None,
        }
    }

    /// The keys `= value` may match: `value`'s key, `Empty` for null or NaN, `None` when such
    /// values are not indexed (the caller scans).
    pub fn equal(value: &Value) -> Option<KeyRange> {
        if never_compares(value) {
            return Some(KeyRange::Empty);
        }
        let key = IndexKey::of(value)?;
        Some(KeyRange::between_keys(Included(key.clone()), Included(key)))
    }

    /// The keys `key > lower` (`Excluded`) or `>=` (`Included`) and `key < upper` / `<=` may
    /// match, `Unbounded` for a missing side: `Empty` when a bound is null or NaN or the two
    /// are of different kinds (no value compares with both), `None` when a bound is not
    /// indexable or both are missing (the caller scans). Strict numeric bounds that may share
    /// their key with other numbers are widened to inclusive ones (see RANGES).
    pub fn between(lower: Bound<&Value>, upper: Bound<&Value>) -> Option<KeyRange> {
        let bounds = [lower, upper];
        if bounds
            .iter()
            .filter_map(bound_value)
            .any(|v| never_compares(v))
        {
            return Some(KeyRange::Empty);
        }
        let (lower, upper) = (bound_key(lower)?, bound_key(upper)?);
        match (bound_value(&lower), bound_value(&upper)) {
            (None, None) => None,
            (Some(low), Some(high)) if !low.same_kind(high) => Some(KeyRange::Empty),
            (None, Some(high)) => Some(KeyRange::between_keys(
                Included(high.first_of_kind()),
                upper,
            )),
            _ => Some(KeyRange::between_keys(lower, upper)),
        }
    }

    /// The keys `STARTS WITH value` may match: `Empty` for null, `None` for other non-strings
    /// (the caller scans, and the filter decides).
    pub fn prefix(value: &Value) -> Option<KeyRange> {
        match value {
            Value::Null => Some(KeyRange::Empty),
            Value::String(prefix) => Some(KeyRange::Prefix(prefix.clone())),
            _ => None,
        }
    }

    fn between_keys(lower: Bound<IndexKey>, upper: Bound<IndexKey>) -> KeyRange {
        let low = bound_value(&lower).expect("a range starts at a key");
        debug_assert!(
            bound_value(&upper).is_none_or(|high| high.same_kind(low)),
            "a range holds keys of one kind"
        );
        KeyRange::Between { lower, upper }
    }

    /// Whether the range holds `key`.
    pub fn contains(&self, key: &IndexKey) -> bool {
        let after_start = match self.start() {
            Some(Included(start)) => key >= &start,
            Some(Excluded(start)) => key > &start,
            Some(Unbounded) | None => false,
        };
        after_start && self.continues_to(key)
    }

    /// The range over encoded keys ([`IndexKey::encode`]) that the index maps walk: the same
    /// keys in the same order; `None` for `Empty`.
    fn bytes(&self) -> Option<ByteRange> {
        let encode = |bound: &Bound<IndexKey>| match bound {
            Included(key) => Included(key.encode().into_boxed_slice()),
            Excluded(key) => Excluded(key.encode().into_boxed_slice()),
            Unbounded => Unbounded,
        };
        match self {
            KeyRange::Empty => None,
            KeyRange::Between { lower, upper } => {
                let kind = bound_value(lower).expect("a range starts at a key").tag();
                Some(ByteRange {
                    lower: encode(lower),
                    upper: encode(upper),
                    prefix: Box::new([kind]),
                })
            }
            KeyRange::Prefix(prefix) => {
                let start = IndexKey::String(prefix.clone()).encode().into_boxed_slice();
                Some(ByteRange {
                    lower: Included(start.clone()),
                    upper: Unbounded,
                    prefix: start,
                })
            }
        }
    }

    /// Where the walk over the ordered map starts; `None` for `Empty`.
    fn start(&self) -> Option<Bound<IndexKey>> {
        match self {
            KeyRange::Empty => None,
            KeyRange::Between { lower, .. } => Some(lower.clone()),
            KeyRange::Prefix(prefix) => Some(Included(IndexKey::String(prefix.clone()))),
        }
    }

    /// Whether `key`, at or after the start, is still in the range: the walk stops at the
    /// first key that is not.
    fn continues_to(&self, key: &IndexKey) -> bool {
        match self {
            KeyRange::Empty => false,
            KeyRange::Between { lower, upper } => {
                let same_kind = bound_value(lower).is_some_and(|low| low.same_kind(key));
                same_kind
                    && match upper {
                        Included(high) => key <= high,
                        Excluded(high) => key < high,
                        Unbounded => true,
                    }
            }
            KeyRange::Prefix(prefix) => {
                matches!(key, IndexKey::String(s) if s.starts_with(&**prefix))
            }
        }
    }
}

fn bound_value<T>(bound: &Bound<T>) -> Option<&T> {
    match bound {
        Included(x) | Excluded(x) => Some(x),
        Unbounded => None,
    }
}

/// The index bound for a comparison with `value`, or `None` if `value` is not indexable. A
/// strict bound on a number of magnitude 2^53 or more becomes inclusive: integers that differ
/// from it may round to its key (see RANGES).
fn bound_key(bound: Bound<&Value>) -> Option<Bound<IndexKey>> {
    let shares_key =
        |value: &Value| number(value).is_some_and(|x| x.abs() >= MIN_INEXACT_F64_MAGNITUDE);
    Some(match bound {
        Unbounded => Unbounded,
        Included(value) => Included(IndexKey::of(value)?),
        Excluded(value) if shares_key(value) => Included(IndexKey::of(value)?),
        Excluded(value) => Excluded(IndexKey::of(value)?),
    })
}

/// One indexed key's map in one table.
struct KeyIndex {
    /// False while the first build runs (see STATES).
    ready: bool,
    map: Arc<IndexMap>,
}

/// The secondary indexes of one vertex or edge table: one map per indexed property key,
/// accounted in the database's [`IndexCache`] (see SPILLING).
pub struct PropertyIndexes {
    cache: Arc<IndexCache>,
    keys: RwLock<HashMap<PropKeyId, KeyIndex>>,
}

impl Default for PropertyIndexes {
    /// Indexes that never spill (for tables used on their own).
    fn default() -> Self {
        Self::new(IndexCache::unbounded())
    }
}

impl PropertyIndexes {
    pub fn new(cache: Arc<IndexCache>) -> Self {
        Self {
            cache,
            keys: RwLock::new(HashMap::new()),
        }
    }

    /// Starts maintaining `key` (building); returns `false` (and changes nothing) if it is
    /// maintained already.
    pub fn track(&self, key: PropKeyId) -> bool {
        let mut keys = self.keys.write();
        if keys.contains_key(&key) {
            return false;
        }
        let map = self.cache.new_map(MapKind::Ordered);
        keys.insert(key, KeyIndex { ready: false, map });
        true
    }

    /// Stops maintaining `key` and frees its map (and its runs' files, once no lookup holds
    /// them).
    pub fn untrack(&self, key: PropKeyId) {
        self.keys.write().remove(&key);
    }

    /// Makes the maintained keys exactly `keys`: each key not maintained yet is tracked and
    /// built from `rows`, each maintained key not in `keys` is freed. How a table follows the
    /// catalog's index definitions at open, at `CREATE INDEX` (under the commit lock, so no
    /// commit installs between tracking a key and building it), at `DROP INDEX` and when the
    /// table is created.
    pub fn keep_exactly(&self, keys: &[PropKeyId], rows: &RowTable) -> Result<()> {
        let unwanted: Vec<PropKeyId> = (self.keys.read().keys())
            .filter(|key| !keys.contains(key))
            .copied()
            .collect();
        for key in unwanted {
            self.untrack(key);
        }
        for &key in keys {
            if self.track(key) {
                self.build(key, rows)?;
            }
        }
        Ok(())
    }

    /// Indexes every value `key` holds in a kept version of any row of `rows`, then marks the
    /// key ready. Commits may install concurrently: they index their own writes.
    pub fn build(&self, key: PropKeyId, rows: &RowTable) -> Result<()> {
        for row in 0..rows.row_count() {
            for value in rows.retained_values(row, key)? {
                self.insert(key, &value, row);
            }
        }
        if let Some(index) = self.keys.write().get_mut(&key) {
            index.ready = true;
        }
        Ok(())
    }

    /// `key`'s map, ready or building.
    fn map(&self, key: PropKeyId) -> Option<Arc<IndexMap>> {
        self.keys.read().get(&key).map(|index| index.map.clone())
    }

    /// `key`'s map, if ready (see STATES).
    fn ready_map(&self, key: PropKeyId) -> Option<Arc<IndexMap>> {
        let keys = self.keys.read();
        let index = keys.get(&key).filter(|index| index.ready)?;
        Some(index.map.clone())
    }

    /// Notes that `row` holds `value` for `key`, if `key` is tracked and the value indexable.
    /// Called for every property a commit installs: an untracked key costs one uncontended
    /// read latch. (Keys are tracked under the commit lock, so none appears meanwhile.) May
    /// spill index maps over the budget (see SPILLING), after releasing every latch here.
    pub fn insert(&self, key: PropKeyId, value: &Value, row: u32) {
        let Some(map) = self.map(key) else {
            return;
        };
        if let Some(index_key) = IndexKey::of(value) {
            map.insert(&index_key.encode(), row);
        }
    }

    /// [`insert`](Self::insert) for each of the properties a created row holds.
    pub fn insert_all(&self, props: &[(PropKeyId, Value)], row: u32) {
        for (key, value) in props {
            self.insert(*key, value, row);
        }
    }

    /// How many distinct values `key`'s ready index holds (stale values not pruned yet
    /// included), or `None` when `key` has no ready index: the planner's estimate of an
    /// equality's selectivity (see `stats`). Exact while the map is resident; once parts are
    /// spilled, a value found in several parts counts once per part (see SPILLING).
    pub fn distinct_values(&self, key: PropKeyId) -> Option<u64> {
        Some(self.ready_map(key)?.distinct_keys())
    }

    /// The rows that may hold a value in `range` for `key`, key by key in key order (a row
    /// may be listed once per key it was found under; each key's rows ascending, each once),
    /// or `Ok(None)` when `key` has no ready index. Reading a spilled run may fail
    /// (`Corruption` naming the file, or an I/O error).
    pub fn candidates(&self, key: PropKeyId, range: &KeyRange) -> Result<Option<Vec<u32>>> {
        let Some(map) = self.ready_map(key) else {
            return Ok(None);
        };
        match range.bytes() {
            Some(range) => map.range(&range).map(Some),
            None => Ok(Some(Vec::new())),
        }
    }

    /// Removes `value → row` entries no kept version of `row` supports from the resident
    /// part of each map (see MAINTENANCE AND GROWTH; spilled entries stay, see SPILLING);
    /// returns how many were removed.
    pub fn prune(&self, rows: &RowTable) -> usize {
        // A row whose chunk cannot be read back keeps its entry: an index may list extra
        // rows (readers re-check), never miss one.
        let holds = |key: PropKeyId, value: &[u8], row: u32| {
            rows.retained_values(row, key).map_or(true, |held| {
                held.iter()
                    .any(|held| IndexKey::of(held).is_some_and(|k| k.encode() == value))
            })
        };
        let maps: Vec<(PropKeyId, Arc<IndexMap>)> = (self.keys.read().iter())
            .map(|(&key, index)| (key, index.map.clone()))
            .collect();
        let mut removed = 0;
        for (key, map) in maps {
            removed += map.prune(|value, row| holds(key, value, row));
        }
        removed
    }

    /// Entries (value, row) over all keys, the spilled ones included.
    #[cfg(test)]
    fn entry_count(&self) -> usize {
        let keys = self.keys.read();
        keys.values()
            .map(|index| {
                let everything = ByteRange {
                    lower: Unbounded,
                    upper: Unbounded,
                    prefix: Box::new([]),
                };
                index.map.range(&everything).expect("readable").len()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::PropertyDef;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    const NAME: PropKeyId = 0;
    /// 2^53, as an integer.
    const EXACT_LIMIT: i64 = 1 << 53;

    fn table_with(values: &[(u32, Value)]) -> RowTable {
        let rows = RowTable::new("T", &[] as &[PropertyDef], &[]);
        rows.ensure_reserved(values.len() as u32);
        for (row, value) in values {
            rows.install_create(*row, 1, 1, &[], &[(NAME, value.clone())])
                .unwrap();
        }
        rows
    }

    /// Two ready indexes over `values`, the value of row i at position i: one resident, one
    /// whose map is spilled every few entries (runs and their merges answer most of it).
    struct Indexed {
        resident: PropertyIndexes,
        spilled: PropertyIndexes,
    }

    fn indexed(values: &[Value]) -> Indexed {
        let numbered: Vec<(u32, Value)> = (0..).zip(values.iter().cloned()).collect();
        let rows = table_with(&numbered);
        let resident = PropertyIndexes::default();
        let vfs = crate::fault::FaultVfs::new();
        let spilled = PropertyIndexes::new(IndexCache::open(Arc::new(vfs), 300).unwrap());
        for indexes in [&resident, &spilled] {
            indexes.track(NAME);
            indexes.build(NAME, &rows).unwrap();
        }
        Indexed { resident, spilled }
    }

    /// The rows `range` finds, sorted, without repeats — the same with and without spilling.
    fn found(indexes: &Indexed, range: &KeyRange) -> Vec<u32> {
        let read = |indexes: &PropertyIndexes| {
            let rows = indexes.candidates(NAME, range).unwrap();
            rows.expect("a ready index")
        };
        let (mut rows, spilled) = (read(&indexes.resident), read(&indexes.spilled));
        assert_eq!(rows, spilled, "{range:?}");
        rows.sort_unstable();
        rows.dedup();
        rows
    }

    fn between(lower: Bound<Value>, upper: Bound<Value>) -> KeyRange {
        KeyRange::between(lower.as_ref(), upper.as_ref()).expect("indexable bounds")
    }

    fn string(s: &str) -> Value {
        Value::String(Arc::from(s))
    }

    #[test]
    fn number_keys_sort_as_the_numbers_do() {
        let numbers = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1.0,
            -f64::MIN_POSITIVE,
            0.0,
            5e-324,
            1.0,
            2.5,
            1e300,
            f64::INFINITY,
        ];
        let keys: Vec<IndexKey> = numbers
            .iter()
            .map(|&x| IndexKey::of(&Value::Float(x)).expect("indexable"))
            .collect();
        assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?}");
        assert!(keys[0].first_of_kind() < keys[0]);
        assert_eq!(
            IndexKey::of(&Value::Int(-3)),
            IndexKey::of(&Value::Float(-3.0))
        );
    }

    #[test]
    fn a_range_finds_values_of_its_bounds_kind_only() {
        use Bound::{Excluded as Gt, Included as Ge, Unbounded as Any};
        let indexes = indexed(&[
            Value::Int(1),
            Value::Float(2.5),
            Value::Int(10),
            string("10"),
            string("b"),
            Value::Bool(false),
            Value::Bool(true),
            Value::Float(f64::NEG_INFINITY),
        ]);
        let find = |lower, upper| found(&indexes, &between(lower, upper));
        assert_eq!(find(Gt(Value::Int(1)), Any), [1, 2]);
        assert_eq!(find(Ge(Value::Float(1.0)), Any), [0, 1, 2]);
        assert_eq!(find(Any, Gt(Value::Int(10))), [0, 1, 7]);
        assert_eq!(find(Ge(Value::Int(1)), Gt(Value::Int(10))), [0, 1]);
        assert_eq!(find(Ge(string("a")), Any), [4]);
        assert_eq!(find(Any, Gt(string("a"))), [3]);
        assert_eq!(find(Gt(Value::Bool(false)), Any), [6]);
        assert_eq!(find(Any, Ge(Value::Bool(true))), [5, 6]);
        let prefix = |p: &str| found(&indexes, &KeyRange::prefix(&string(p)).expect("a string"));
        assert_eq!(prefix("1"), [3]);
        assert_eq!(prefix(""), [3, 4]);
        // Inverted and empty ranges find nothing (and do not trip the map's range checks).
        assert_eq!(find(Gt(Value::Int(5)), Gt(Value::Int(5))), [] as [u32; 0]);
        assert_eq!(find(Ge(Value::Int(10)), Ge(Value::Int(1))), [] as [u32; 0]);
    }

    #[test]
    fn null_nan_and_mixed_bounds_match_nothing_and_unindexable_ones_scan() {
        use Bound::{Excluded, Included, Unbounded};
        let nan = Value::Float(f64::NAN);
        let list = Value::List(Arc::from([Value::Int(1)]));
        let range = |lower: Bound<&Value>, upper: Bound<&Value>| KeyRange::between(lower, upper);
        let one = Value::Int(1);
        assert_eq!(
            range(Excluded(&Value::Null), Unbounded),
            Some(KeyRange::Empty)
        );
        assert_eq!(range(Included(&nan), Included(&one)), Some(KeyRange::Empty));
        assert_eq!(
            range(Included(&list), Included(&Value::Null)),
            Some(KeyRange::Empty)
        );
        assert_eq!(
            range(Included(&one), Excluded(&string("z"))),
            Some(KeyRange::Empty)
        );
        assert_eq!(range(Included(&list), Unbounded), None);
        assert_eq!(range(Unbounded, Unbounded), None);
        assert_eq!(KeyRange::equal(&Value::Null), Some(KeyRange::Empty));
        assert_eq!(KeyRange::equal(&nan), Some(KeyRange::Empty));
        assert_eq!(KeyRange::equal(&list), None);
        assert_eq!(KeyRange::prefix(&Value::Null), Some(KeyRange::Empty));
        assert_eq!(KeyRange::prefix(&one), None);
        let indexes = indexed(&[one]);
        let empty = indexes.spilled.candidates(NAME, &KeyRange::Empty);
        assert_eq!(empty.unwrap(), Some(vec![]));
    }

    #[test]
    fn strict_bounds_from_2_pow_53_on_are_widened_so_no_integer_is_missed() {
        use Bound::{Excluded, Included, Unbounded};
        let indexes = indexed(&[
            Value::Int(EXACT_LIMIT - 1),
            Value::Int(EXACT_LIMIT),
            Value::Int(EXACT_LIMIT + 1), // rounds to 2^53 in f64
            Value::Int(EXACT_LIMIT + 2),
            Value::Float(EXACT_LIMIT as f64),
            Value::Int(-EXACT_LIMIT - 1),
            Value::Int(i64::MAX),
            Value::Int(i64::MIN),
        ]);
        let find = |lower, upper| found(&indexes, &between(lower, upper));
        let int = Value::Int;
        // 2^53 + 1 > 2^53 though both have the key of 2^53.
        assert_eq!(find(Excluded(int(EXACT_LIMIT)), Unbounded), [1, 2, 3, 4, 6]);
        assert_eq!(
            find(Unbounded, Excluded(int(EXACT_LIMIT + 1))),
            [0, 1, 2, 4, 5, 7]
        );
        assert_eq!(find(Unbounded, Excluded(int(-EXACT_LIMIT))), [5, 7]);
        assert_eq!(find(Excluded(int(i64::MAX - 1)), Unbounded), [6]);
        assert_eq!(
            find(Included(int(i64::MIN)), Excluded(int(i64::MIN + 1))),
            [7]
        );
        // Below 2^53 every key is one number: a strict bound stays strict.
        assert_eq!(
            find(Excluded(int(EXACT_LIMIT - 1)), Unbounded),
            [1, 2, 3, 4, 6]
        );
        assert_eq!(
            between(Excluded(int(EXACT_LIMIT)), Unbounded),
            between(Included(int(EXACT_LIMIT)), Unbounded)
        );
    }

    #[test]
    fn a_prefix_finds_the_strings_that_start_with_it_in_any_script() {
        let values = ["e", "é", "éa", "ê", "f", "é\u{10FFFF}", ""].map(string);
        let indexes = indexed(&values);
        assert_eq!(
            found(&indexes, &KeyRange::Prefix(Arc::from("é"))),
            [1, 2, 5]
        );
        assert_eq!(found(&indexes, &KeyRange::Prefix(Arc::from("éa"))), [2]);
    }

    /// Cypher's `compare` of two indexable values (as `plexus_value::compare`): `None`
    /// across kinds and with NaN; integers and floats exactly, without rounding.
    fn cypher_compare(a: &Value, b: &Value) -> Option<Ordering> {
        let int_float = |i: i64, f: f64| -> Option<Ordering> {
            if f.abs() >= 1e19 {
                // Beyond every i64, infinities included.
                return Some(if f > 0.0 {
                    Ordering::Less
                } else {
                    Ordering::Greater
                });
            }
            let whole = f.trunc();
            // At an equal whole part, a positive fraction puts the float above the integer.
            let fraction = f.partial_cmp(&whole)?.reverse();
            Some(i128::from(i).cmp(&(whole as i128)).then(fraction))
        };
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
            (Value::Int(x), Value::Float(y)) => int_float(*x, *y),
            (Value::Float(x), Value::Int(y)) => int_float(*y, *x).map(Ordering::reverse),
            (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
            (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
            (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
            _ => None,
        }
    }

    fn indexable_value() -> impl Strategy<Value = Value> {
        let near_limit = (-3..=3_i64, prop::bool::ANY).prop_map(|(d, negative)| {
            Value::Int(if negative { -EXACT_LIMIT } else { EXACT_LIMIT } + d)
        });
        prop_oneof![
            (-4..=4_i64).prop_map(Value::Int),
            any::<i64>().prop_map(Value::Int),
            near_limit,
            prop::sample::select(vec![i64::MIN, i64::MAX, i64::MAX - 1]).prop_map(Value::Int),
            (-8..=8_i32).prop_map(|x| Value::Float(f64::from(x) / 2.0)),
            prop::num::f64::ANY.prop_map(Value::Float),
            (-3..=3_i64).prop_map(|d| Value::Float((EXACT_LIMIT + d) as f64)),
            "[ab]{0,3}".prop_map(|s| string(&s)),
            any::<bool>().prop_map(Value::Bool),
        ]
    }

    fn bound() -> impl Strategy<Value = Bound<Value>> {
        let value = prop_oneof![9 => indexable_value(), 1 => Just(Value::Null)];
        prop_oneof![
            1 => Just(Bound::Unbounded),
            3 => value.clone().prop_map(Bound::Included),
            3 => value.prop_map(Bound::Excluded),
        ]
    }

    /// Whether `value` is on the right side of `bound` by Cypher's comparison (`above`: a
    /// lower bound).
    fn satisfies(value: &Value, bound: &Bound<Value>, above: bool) -> bool {
        let (limit, inclusive) = match bound {
            Bound::Unbounded => return true,
            Bound::Included(limit) => (limit, true),
            Bound::Excluded(limit) => (limit, false),
        };
        let wanted = if above {
            Ordering::Greater
        } else {
            Ordering::Less
        };
        cypher_compare(value, limit)
            .is_some_and(|o| o == wanted || (inclusive && o == Ordering::Equal))
    }

    proptest! {
        #[test]
        fn a_range_seek_finds_every_row_the_comparison_accepts(
            values in prop::collection::vec(indexable_value(), 0..24),
            lower in bound(),
            upper in bound(),
        ) {
            let indexes = indexed(&values);
            let Some(range) = KeyRange::between(lower.as_ref(), upper.as_ref()) else {
                prop_assert!(matches!((&lower, &upper), (Bound::Unbounded, Bound::Unbounded)));
                return Ok(());
            };
            let sought = found(&indexes, &range);
            for (row, value) in (0..).zip(&values) {
                let accepted = satisfies(value, &lower, true) && satisfies(value, &upper, false);
                let listed = sought.contains(&row);
                prop_assert!(!accepted || listed, "row {} ({:?}) missed by {:?}", row, value, range);
                let in_range = IndexKey::of(value).is_some_and(|key| range.contains(&key));
                prop_assert_eq!(listed, in_range, "row {} ({:?}) in {:?}", row, value, range);
            }
        }

        #[test]
        fn a_prefix_seek_finds_exactly_the_strings_with_the_prefix(
            values in prop::collection::vec(indexable_value(), 0..24),
            prefix in "[ab]{0,2}",
        ) {
            let indexes = indexed(&values);
            let sought = found(&indexes, &KeyRange::prefix(&string(&prefix)).expect("a string"));
            let expected: Vec<u32> = (0..).zip(&values)
                .filter(|(_, v)| matches!(v, Value::String(s) if s.starts_with(&*prefix)))
                .map(|(row, _)| row)
                .collect();
            prop_assert_eq!(sought, expected);
        }
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
        let seven = KeyRange::equal(&Value::Int(7)).expect("indexable");
        indexes.track(NAME);
        assert_eq!(indexes.candidates(NAME, &seven).unwrap(), None);
        indexes.build(NAME, &rows).unwrap();
        assert_eq!(indexes.candidates(NAME, &seven).unwrap(), Some(vec![0]));
        indexes.untrack(NAME);
        assert_eq!(indexes.candidates(NAME, &seven).unwrap(), None);
    }

    #[test]
    fn distinct_values_count_keys_once_ready() {
        let values = [Value::Int(7), Value::Float(7.0), Value::Int(8), Value::Null];
        let rows = table_with(&[(0, values[0].clone()), (1, values[1].clone())]);
        let indexes = PropertyIndexes::default();
        indexes.track(NAME);
        assert_eq!(indexes.distinct_values(NAME), None);
        indexes.build(NAME, &rows).unwrap();
        // 7 and 7.0 share a key (Cypher calls them equal); null is not indexed.
        assert_eq!(indexes.distinct_values(NAME), Some(1));
        indexes.insert(NAME, &values[2], 2);
        indexes.insert(NAME, &values[3], 3);
        assert_eq!(indexes.distinct_values(NAME), Some(2));
    }

    #[test]
    fn pruning_keeps_values_readers_above_the_horizon_can_see() {
        let rows = table_with(&[(0, Value::Int(1))]);
        let indexes = PropertyIndexes::default();
        indexes.track(NAME);
        indexes.build(NAME, &rows).unwrap();
        // ts 5: row 0 becomes 2; a reader at ts 4 may still look for 1.
        rows.install_prop(0, 5, 4, NAME, Some(Value::Int(2)))
            .unwrap();
        indexes.insert(NAME, &Value::Int(2), 0);
        rows.gc(4);
        assert_eq!(indexes.prune(&rows), 0);
        assert_eq!(indexes.entry_count(), 2);
        // Once no reader is older than ts 5, the entry for 1 goes.
        rows.gc(5);
        assert_eq!(indexes.prune(&rows), 1);
        let one = KeyRange::equal(&Value::Int(1)).expect("indexable");
        assert_eq!(indexes.candidates(NAME, &one).unwrap(), Some(vec![]));
    }
}
