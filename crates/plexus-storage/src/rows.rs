//! Row tables: columnar, chunked, multi-versioned storage of vertex (and edge) rows.
//!
//! LAYOUT
//! ======
//! Rows are addressed by a dense offset and grouped into chunks of `CHUNK_ROWS`. A chunk holds,
//! per row: an existence flag, an optional set of extra labels, one typed column per declared
//! property (or one row-wise column per declared *column family*), and a dynamic column with
//! the undeclared properties as a small key/value list. Chunks of edge rows also hold each
//! edge's endpoints (see ENDPOINTS).
//!
//! VERSIONS
//! ========
//! The newest committed value of every *slot* (existence, labels, one property) is stored in
//! place. Older values live in per-chunk version chains, HyPer-style undo:
//!
//! ```text
//!   slot (row 7, prop age):  in place = 42 (written at ts 9)
//!   chain: newest_ts = 9, older = [(0, 40), (5, 41)]   // 40 from the beginning, 41 from ts 5
//!   reader at ts 3 → 40;  at ts 6 → 41;  at ts 9 or later → 42 (in place)
//! ```
//!
//! Every chunk remembers the newest commit timestamp written into it (`max_write_ts`). A reader
//! whose timestamp is at least that reads the columns directly without consulting any chain:
//! the analytic fast path.
//!
//! INVARIANTS
//! ==========
//! - A slot whose in-place value was written after the GC horizon has a chain; a slot without
//!   a chain holds a value older than every active reader.
//! - Chain versions are ordered by timestamp and `older` entries precede `newest_ts`.
//! - Only the commit pipeline writes (one commit at a time, under the commit lock); readers take a
//!   chunk's read latch for the duration of one access.
//! - Uncommitted data never enters a row table: transactions buffer writes privately.
//!
//! ENDPOINTS
//! =========
//! An edge row carries its (source offset, destination offset), written by the creation that
//! installs the row (`install_create_edge`, under the same latch as its properties) and never
//! changed after: a column of the chunk, `(u32, u32)` per row, allocated on the chunk's first
//! edge, with `NO_ENDPOINTS` for rows never created (a rolled-back transaction's hole).
//!
//! ```text
//!   edge chunk 3 (rows 6144..8191):  exists    [1, 0, 1, 0, ...]
//!                                    endpoints [(7, 9), (MAX, MAX), (2, 7), (4, 4), ...]
//!   row 6145: a hole (never created)        → endpoints None
//!   row 6147: created, then deleted at ts 12 → endpoints (4, 4) at every ts
//! ```
//!
//! - **Not versioned.** Endpoints need no chain: they exist from the row's creation and no
//!   write replaces them, so every reader that can see the edge (`exists` at its timestamp,
//!   checked by the caller) reads the same pair, and a deleted edge keeps it for the readers
//!   older than the deletion. It does not keep a chunk from being cold.
//! - **Spilled with the row.** The column is part of the chunk's spill page and of its size
//!   estimate (8 bytes per row of a chunk holding any edge), so endpoints are evicted and read
//!   back like every other column: no per-edge state stays resident outside the chunks.
//! - **Cheap to read.** `endpoints(row)` is the one chunk lookup every row read makes (two
//!   atomic loads in the `ChunkDirectory`) and the chunk's read latch; no table-wide lock.
//! - **Recovery** rebuilds them with the rows: a checkpoint stores the endpoints of every
//!   edge existing at its timestamp, and WAL replay re-installs every later creation (so an
//!   edge created after the checkpoint and deleted since has them again). An edge deleted
//!   before the checkpoint is not in it and has none after a restart — as none of its other
//!   columns; no reader of the reopened database is old enough to see it.
//!
//! EVICTION
//! ========
//! Under a finite `Config::row_cache_bytes`, chunks can be evicted to a spill file and read
//! back (`rowcache` owns the files, the page format and the byte account). Each chunk sits in
//! a `ChunkSlot`: a latch over `{chunk: Option<Chunk>, page: Option<PageRef>}`, a clock
//! reference bit, and the chunk's share of the resident bytes.
//!
//! ```text
//!   resident, no page ──evict (cold)──▶ write page ──▶ spilled(page)
//!        ▲                                                  │ any access: load page
//!        └──── write (the page is now dead) ◀── resident, clean(page) ◀──┘
//!                                   resident, clean ──evict──▶ spilled (no write)
//! ```
//!
//! - **Finding a chunk takes no lock.** Slots live in an append-only two-level directory of
//!   `OnceLock`s (`ChunkDirectory`) for the table's lifetime: a lookup is two atomic loads,
//!   with no shared counter written, so threads reading one table (the workers of a
//!   parallel query) do not bounce a cache line per row.
//! - **One accessor.** Every read and write of a chunk goes through `latch_read` /
//!   `latch_write` (`with_chunk`, `with_chunk_mut`, `prop_many`, `scan`), which load an evicted
//!   chunk first. A load happens under the chunk's write latch and re-checks the state, so
//!   two threads missing at once load it once (loads are idempotent); a reader then keeps the
//!   latch, downgraded, so the chunk cannot be evicted between its load and its read.
//! - **Never evicted while latched.** Eviction takes the latch with `try_write` and skips a
//!   chunk someone holds; readers never wait for an eviction, and an eviction never waits.
//! - **Only cold chunks.** A chunk is evicted only after collecting its versions below the
//!   horizon leaves it without chains and without creation timestamps: then every reader
//!   (none is older than the horizon) reads the in-place values, which are all the page holds.
//!   The chunk receiving a table's new rows is never evicted (it is being written).
//! - **Clean pages are reused.** A loaded chunk keeps its page until written; evicting it
//!   again writes nothing. A write drops the page (it becomes dead bytes in the file).
//! - **Policy.** A clock sweep per table, starting where the last stopped, skipping (and
//!   clearing) chunks referenced since the last pass, stopping once the cache is below its
//!   target. `Storage::evict_rows` runs it after commits, in background maintenance, while a
//!   checkpoint reads every row, and during recovery.
//! - **Compaction** (see COMPACTION in `rowcache`) moves a slot's page to a newer spill file
//!   under the slot's latch (`try_write`, as eviction: a latched chunk keeps its page until a
//!   later round), so a load never reads a page whose file is being deleted.
//! - **Failures.** A page that fails its checks is an error naming the spill file and offset
//!   (reads return it; nothing is guessed). A failed spill write leaves the chunk resident.
//! - `scan` lists a chunk's rows under its latch and calls back after releasing it, so the
//!   callback may read the table (parking_lot read latches are not recursive: a reader
//!   re-entering a latch behind a queued writer would deadlock).

use crate::catalog::PropertyDef;
use crate::codec::{DecodeResult, Decoder, Encoder};
use crate::rowcache::{CompactTrigger, CompactionRound, PageRef, RowCache};
use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use plexus_types::{DataType, Error, LabelId, PropKeyId, Result, TemporalValue, Timestamp, Value};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

pub const CHUNK_ROWS: usize = 2048;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Slot {
    Exists,
    Labels,
    Prop(PropKeyId),
}

#[derive(Clone, Debug)]
enum SlotValue {
    Exists(bool),
    Labels(Option<Box<[LabelId]>>),
    Prop(Option<Value>),
}

struct VersionChain {
    newest_ts: Timestamp,
    /// (valid-from timestamp, value), ascending; all older than `newest_ts`.
    older: Vec<(Timestamp, SlotValue)>,
}

/// Typed storage for one declared property, or row-wise storage for a column family.
enum ColumnData {
    Bool(Vec<bool>),
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    Values(Vec<Value>),
    Family(Vec<Option<Box<[Value]>>>),
}

struct Column {
    data: ColumnData,
    /// Null mask for single-property columns; family cells hold `Value::Null` instead.
    valid: Vec<bool>,
}

/// Where a declared property lives: its own column, or a position within a family column.
#[derive(Clone, Copy)]
enum ColumnRef {
    Single(usize),
    Family {
        column: usize,
        position: usize,
        width: usize,
    },
}

struct Chunk {
    max_write_ts: Timestamp,
    exists: Vec<bool>,
    /// Allocated on first use (edge rows never carry labels): empty means all `None`.
    labels: Vec<Option<Box<[LabelId]>>>,
    columns: Vec<Column>,
    /// Allocated on first use: empty means no row has undeclared properties.
    dynamic: Vec<DynamicProps>,
    /// (source offset, destination offset) per edge row, fixed when the row is created (see
    /// ENDPOINTS). Allocated on the chunk's first edge creation: vertex chunks never hold
    /// one; `NO_ENDPOINTS` marks rows never created (holes of rolled-back transactions).
    endpoints: Vec<(u32, u32)>,
    /// Creation timestamps of rows created after the GC horizon; allocated while any row of
    /// the chunk is that young, dropped by GC. A reader older than a row's creation sees
    /// nothing of it. (Cheaper than a version chain per created row.)
    created_at: Vec<Timestamp>,
    /// The compact form of `created_at` for a chunk whose rows one commit created — a bulk
    /// load fills millions: `(first, ts)` says every row from `first` on was created at `ts`
    /// (rows never created there are never read as existing). Set only on a chunk no row
    /// was ever written to (`max_write_ts == 0`), so it claims no older row; a creation at
    /// another timestamp turns it into `created_at` first. At most one of the two is in use.
    created_suffix: Option<(u32, Timestamp)>,
    chains: HashMap<(u32, Slot), VersionChain>,
}

/// Undeclared properties of one row: a boxed slice keeps the per-row cost at one pointer.
type DynamicProps = Option<Box<[(PropKeyId, Value)]>>;

/// The endpoints of a row never created as an edge. Vertex offsets stop below `u32::MAX`
/// (`store::MAX_VERTEX_ROWS`), so no edge has it as an endpoint.
const NO_ENDPOINTS: (u32, u32) = (u32::MAX, u32::MAX);

/// Declared properties of a table and how they map to columns.
struct Layout {
    declared: HashMap<PropKeyId, (DataType, ColumnRef)>,
    /// The type of each column: family columns first (`Any`, a row-wise group), then one per
    /// declared property outside a family (which may be `Any` too).
    columns: Vec<DataType>,
    /// How many of `columns` are family columns.
    family_columns: usize,
}

impl Layout {
    /// Where declared property `key` is stored (`None`: undeclared, kept per row).
    fn locate(&self, key: PropKeyId) -> Option<ColumnRef> {
        self.declared.get(&key).map(|&(_, at)| at)
    }

    fn new(properties: &[PropertyDef], families: &[Vec<usize>]) -> Self {
        let mut declared = HashMap::new();
        let mut columns = Vec::new();
        for family in families {
            let column = columns.len();
            columns.push(DataType::Any);
            for (position, &member) in family.iter().enumerate() {
                let p = &properties[member];
                let width = family.len();
                declared.insert(
                    p.key,
                    (
                        p.data_type,
                        ColumnRef::Family {
                            column,
                            position,
                            width,
                        },
                    ),
                );
            }
        }
        let family_columns = columns.len();
        for p in properties {
            if let std::collections::hash_map::Entry::Vacant(slot) = declared.entry(p.key) {
                slot.insert((p.data_type, ColumnRef::Single(columns.len())));
                columns.push(p.data_type);
            }
        }
        Self {
            declared,
            columns,
            family_columns,
        }
    }

    fn is_family(&self, column: usize) -> bool {
        column < self.family_columns
    }
}

impl Column {
    fn new(data_type: DataType, is_family: bool) -> Self {
        let data = match data_type {
            _ if is_family => ColumnData::Family(vec![None; CHUNK_ROWS]),
            DataType::Bool => ColumnData::Bool(vec![false; CHUNK_ROWS]),
            DataType::Int64 => ColumnData::Int64(vec![0; CHUNK_ROWS]),
            DataType::Float64 => ColumnData::Float64(vec![0.0; CHUNK_ROWS]),
            _ => ColumnData::Values(vec![Value::Null; CHUNK_ROWS]),
        };
        Self {
            data,
            valid: vec![false; CHUNK_ROWS],
        }
    }

    fn get(&self, row: usize, at: ColumnRef) -> Option<Value> {
        if let (ColumnData::Family(cells), ColumnRef::Family { position, .. }) = (&self.data, at) {
            return match cells[row].as_ref().map(|c| &c[position]) {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.clone()),
            };
        }
        if !self.valid[row] {
            return None;
        }
        Some(match &self.data {
            ColumnData::Bool(v) => Value::Bool(v[row]),
            ColumnData::Int64(v) => Value::Int(v[row]),
            ColumnData::Float64(v) => Value::Float(v[row]),
            ColumnData::Values(v) => v[row].clone(),
            ColumnData::Family(_) => unreachable!("family column addressed as single"),
        })
    }

    fn set(&mut self, row: usize, at: ColumnRef, value: Option<Value>) {
        if let (
            ColumnData::Family(cells),
            ColumnRef::Family {
                position, width, ..
            },
        ) = (&mut self.data, at)
        {
            let cell =
                cells[row].get_or_insert_with(|| vec![Value::Null; width].into_boxed_slice());
            cell[position] = value.unwrap_or(Value::Null);
            return;
        }
        self.valid[row] = value.is_some();
        let Some(value) = value else { return };
        match (&mut self.data, value) {
            (ColumnData::Bool(v), Value::Bool(x)) => v[row] = x,
            (ColumnData::Int64(v), Value::Int(x)) => v[row] = x,
            (ColumnData::Float64(v), Value::Float(x)) => v[row] = x,
            (ColumnData::Values(v), x) => v[row] = x,
            _ => panic!("value type was checked before install"),
        }
    }
}

impl Chunk {
    fn new(layout: &Layout) -> Self {
        Self {
            max_write_ts: 0,
            exists: vec![false; CHUNK_ROWS],
            labels: Vec::new(),
            columns: layout
                .columns
                .iter()
                .enumerate()
                .map(|(i, &t)| Column::new(t, layout.is_family(i)))
                .collect(),
            dynamic: Vec::new(),
            endpoints: Vec::new(),
            created_at: Vec::new(),
            created_suffix: None,
            chains: HashMap::new(),
        }
    }

    /// When row `row` was created, if after the GC horizon (0: before it).
    fn created(&self, row: usize) -> Timestamp {
        match self.created_suffix {
            Some((first, ts)) if row >= first as usize => ts,
            Some(_) => 0,
            None => self.created_at.get(row).copied().unwrap_or(0),
        }
    }

    /// Records that row `row` was created at `ts`, after the GC horizon. Call before
    /// raising `max_write_ts` to `ts`.
    fn note_created(&mut self, row: usize, ts: Timestamp) {
        debug_assert!(self.created_at.is_empty() || self.created_suffix.is_none());
        match self.created_suffix {
            None if self.created_at.is_empty() && self.max_write_ts == 0 => {
                self.created_suffix = Some((row as u32, ts));
                return;
            }
            Some((first, at)) if at == ts => {
                // rows below `first` were never created (the chunk was fresh): lower it
                self.created_suffix = Some((first.min(row as u32), ts));
                return;
            }
            Some((first, at)) => {
                self.created_at = vec![0; CHUNK_ROWS];
                self.created_at[first as usize..].fill(at);
                self.created_suffix = None;
            }
            None => {}
        }
        self.created_at.resize(CHUNK_ROWS, 0);
        self.created_at[row] = ts;
    }

    /// The endpoints of `row`, if it was ever created as an edge (whatever its existence now).
    fn endpoints_of(&self, row: usize) -> Option<(u32, u32)> {
        self.endpoints
            .get(row)
            .copied()
            .filter(|&ends| ends != NO_ENDPOINTS)
    }

    /// Records the endpoints of edge row `row` at its creation; they never change after.
    fn set_endpoints(&mut self, row: usize, ends: (u32, u32)) {
        assert!(ends != NO_ENDPOINTS, "vertex offsets stop below u32::MAX");
        if self.endpoints.is_empty() {
            self.endpoints = vec![NO_ENDPOINTS; CHUNK_ROWS];
        }
        assert_eq!(
            self.endpoints[row], NO_ENDPOINTS,
            "an edge's endpoints are written once, at its creation"
        );
        self.endpoints[row] = ends;
    }

    fn read_in_place(&self, layout: &Layout, row: usize, slot: Slot) -> SlotValue {
        match slot {
            Slot::Exists => SlotValue::Exists(self.exists[row]),
            Slot::Labels => SlotValue::Labels(self.labels.get(row).cloned().flatten()),
            Slot::Prop(key) => SlotValue::Prop(self.prop_in_place(layout.locate(key), key, row)),
        }
    }

    /// Property `key` of `row` as stored in place; `at` is where the layout declares it.
    fn prop_in_place(&self, at: Option<ColumnRef>, key: PropKeyId, row: usize) -> Option<Value> {
        match at {
            Some(at) => self.columns[column_of(at)].get(row, at),
            None => self
                .dynamic
                .get(row)
                .and_then(Option::as_ref)
                .and_then(|props| {
                    props
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map(|(_, v)| v.clone())
                }),
        }
    }

    fn write_in_place(&mut self, layout: &Layout, row: usize, value: (Slot, SlotValue)) {
        match value {
            (Slot::Exists, SlotValue::Exists(e)) => self.exists[row] = e,
            (Slot::Labels, SlotValue::Labels(l)) => {
                if l.is_some() || !self.labels.is_empty() {
                    self.labels.resize(CHUNK_ROWS, None);
                    self.labels[row] = l;
                }
            }
            (Slot::Prop(key), SlotValue::Prop(v)) => match layout.declared.get(&key) {
                Some(&(_, at)) => self.columns[column_of(at)].set(row, at, v),
                None if v.is_none() && self.dynamic.is_empty() => {}
                None => {
                    self.dynamic.resize(CHUNK_ROWS, None);
                    set_dynamic(&mut self.dynamic[row], key, v);
                }
            },
            _ => unreachable!("slot and value kinds match"),
        }
    }

    fn read(&self, layout: &Layout, row: usize, slot: Slot, ts: Timestamp) -> SlotValue {
        self.older_value(row, slot, ts)
            .unwrap_or_else(|| self.read_in_place(layout, row, slot))
    }

    /// Property `key` (declared at `at`, see [`Layout::locate`]) of `row` at `ts`: what
    /// `read` returns for `Slot::Prop(key)`, without looking the key up in the layout.
    fn read_prop(
        &self,
        at: Option<ColumnRef>,
        key: PropKeyId,
        row: usize,
        ts: Timestamp,
    ) -> Option<Value> {
        match self.older_value(row, Slot::Prop(key), ts) {
            Some(SlotValue::Prop(value)) => value,
            Some(_) => unreachable!("a property slot holds a property value"),
            None => self.prop_in_place(at, key, row),
        }
    }

    /// The value of `slot` at `ts` when it is not the one stored in place: absent before the
    /// row's creation, else from the slot's version chain (`None`: read in place).
    fn older_value(&self, row: usize, slot: Slot, ts: Timestamp) -> Option<SlotValue> {
        if ts >= self.max_write_ts {
            return None;
        }
        if self.created(row) > ts {
            return Some(absent(slot));
        }
        match self.chains.get(&(row as u32, slot)) {
            Some(chain) if chain.newest_ts > ts => Some(
                chain
                    .older
                    .iter()
                    .rev()
                    .find(|(from, _)| *from <= ts)
                    .map_or_else(|| absent(slot), |(_, v)| v.clone()),
            ),
            _ => None,
        }
    }

    /// Writes a slot at `ts`, keeping the old value for readers older than `ts`.
    fn write(
        &mut self,
        layout: &Layout,
        row: usize,
        slot: Slot,
        value: SlotValue,
        ts: Timestamp,
        horizon: Timestamp,
    ) {
        assert!(
            ts >= self.max_write_ts,
            "commits install in timestamp order"
        );
        let old = self.read_in_place(layout, row, slot);
        let created = self.created(row);
        let chain = self
            .chains
            .entry((row as u32, slot))
            .or_insert(VersionChain {
                newest_ts: created,
                older: Vec::new(),
            });
        chain.older.push((chain.newest_ts, old));
        chain.newest_ts = ts;
        prune_chain(chain, horizon);
        self.max_write_ts = ts;
        self.write_in_place(layout, row, (slot, value));
    }
}

/// Bytes of one `Value` cell, and what a value holds on the heap beyond it (estimates, see
/// ACCOUNTING in `rowcache`; shared `Arc`s are counted once per holder).
const VALUE_BYTES: u64 = size_of::<Value>() as u64;
/// Per-entry cost of the chain map beyond its key and value (hash table control and slack).
const CHAIN_ENTRY_OVERHEAD_BYTES: u64 = 16;
const ARC_HEADER_BYTES: u64 = 16;

fn value_heap_bytes(value: &Value) -> u64 {
    match value {
        Value::String(s) => ARC_HEADER_BYTES + s.len() as u64,
        Value::List(items) => {
            ARC_HEADER_BYTES
                + items
                    .iter()
                    .map(|v| VALUE_BYTES + value_heap_bytes(v))
                    .sum::<u64>()
        }
        Value::Map(entries) => {
            ARC_HEADER_BYTES
                + entries
                    .iter()
                    .map(|(k, v)| {
                        16 + ARC_HEADER_BYTES + k.len() as u64 + VALUE_BYTES + value_heap_bytes(v)
                    })
                    .sum::<u64>()
        }
        Value::Temporal(TemporalValue::DateTime { zone: Some(z), .. }) => {
            ARC_HEADER_BYTES + z.len() as u64
        }
        _ => 0,
    }
}

fn slot_value_heap_bytes(value: &SlotValue) -> u64 {
    match value {
        SlotValue::Exists(_) | SlotValue::Labels(None) | SlotValue::Prop(None) => 0,
        SlotValue::Labels(Some(labels)) => (labels.len() * size_of::<LabelId>()) as u64,
        SlotValue::Prop(Some(v)) => value_heap_bytes(v),
    }
}

/// Column kinds in a spill page (must match the table's layout when read back).
const KIND_BOOL: u8 = 1;
const KIND_INT64: u8 = 2;
const KIND_FLOAT64: u8 = 3;
const KIND_VALUES: u8 = 4;
const KIND_FAMILY: u8 = 5;
/// `Option` markers in a spill page.
const ABSENT: u8 = 0;
const PRESENT: u8 = 1;

fn encode_bits(enc: &mut Encoder, bits: &[bool]) {
    debug_assert_eq!(bits.len(), CHUNK_ROWS);
    for byte in bits.chunks(8) {
        enc.u8(byte
            .iter()
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | (u8::from(b) << i)));
    }
}

fn decode_bits(dec: &mut Decoder<'_>) -> DecodeResult<Vec<bool>> {
    let bytes = dec.bytes(CHUNK_ROWS / 8)?;
    Ok((0..CHUNK_ROWS)
        .map(|i| bytes[i / 8] & (1 << (i % 8)) != 0)
        .collect())
}

fn decode_marker(dec: &mut Decoder<'_>) -> DecodeResult<bool> {
    match dec.u8()? {
        ABSENT => Ok(false),
        PRESENT => Ok(true),
        other => Err(dec.error(format!("bad presence marker {other}"))),
    }
}

impl Chunk {
    /// True when no reader needs anything but the in-place values: no version chains and no
    /// creation younger than the GC horizon (see INVARIANTS). Only cold chunks are evicted,
    /// so a spill page holds exactly the in-place state and `max_write_ts`.
    fn is_cold(&self) -> bool {
        self.chains.is_empty() && self.created_at.is_empty() && self.created_suffix.is_none()
    }

    /// Drops versions no reader at or after `horizon` needs; true if anything changed.
    fn gc(&mut self, horizon: Timestamp) -> bool {
        let before = (
            self.chains.len(),
            self.created_at.len(),
            self.created_suffix,
        );
        let mut pruned = false;
        self.chains.retain(|_, chain| {
            let len = chain.older.len();
            prune_chain(chain, horizon);
            pruned |= chain.older.len() != len;
            chain.newest_ts > horizon
        });
        if self.created_at.iter().all(|&created| created <= horizon) {
            self.created_at = Vec::new();
        }
        if self.created_suffix.is_some_and(|(_, ts)| ts <= horizon) {
            self.created_suffix = None;
        }
        pruned
            || before
                != (
                    self.chains.len(),
                    self.created_at.len(),
                    self.created_suffix,
                )
    }

    /// What this chunk holds in memory, estimated (see ACCOUNTING in `rowcache`).
    fn size_bytes(&self) -> u64 {
        let rows = CHUNK_ROWS as u64;
        let mut bytes = size_of::<Chunk>() as u64 + rows; // exists
        bytes += (self.labels.capacity() * size_of::<Option<Box<[LabelId]>>>()) as u64;
        bytes += self
            .labels
            .iter()
            .flatten()
            .map(|l| (l.len() * size_of::<LabelId>()) as u64)
            .sum::<u64>();
        for column in &self.columns {
            bytes += size_of::<Column>() as u64 + rows; // validity
            bytes += match &column.data {
                ColumnData::Bool(_) => rows,
                ColumnData::Int64(_) | ColumnData::Float64(_) => 8 * rows,
                ColumnData::Values(values) => {
                    rows * VALUE_BYTES + values.iter().map(value_heap_bytes).sum::<u64>()
                }
                ColumnData::Family(cells) => {
                    rows * size_of::<Option<Box<[Value]>>>() as u64
                        + cells
                            .iter()
                            .flatten()
                            .flat_map(|cell| cell.iter())
                            .map(|v| VALUE_BYTES + value_heap_bytes(v))
                            .sum::<u64>()
                }
            };
        }
        bytes += (self.dynamic.capacity() * size_of::<DynamicProps>()) as u64;
        bytes += self
            .dynamic
            .iter()
            .flatten()
            .flat_map(|props| props.iter())
            .map(|(_, v)| size_of::<(PropKeyId, Value)>() as u64 + value_heap_bytes(v))
            .sum::<u64>();
        bytes += (self.endpoints.capacity() * size_of::<(u32, u32)>()) as u64;
        bytes += (self.created_at.capacity() * size_of::<Timestamp>()) as u64;
        bytes += self
            .chains
            .values()
            .map(|chain| {
                (size_of::<(u32, Slot)>() + size_of::<VersionChain>()) as u64
                    + CHAIN_ENTRY_OVERHEAD_BYTES
                    + (chain.older.capacity() * size_of::<(Timestamp, SlotValue)>()) as u64
                    + chain
                        .older
                        .iter()
                        .map(|(_, v)| slot_value_heap_bytes(v))
                        .sum::<u64>()
            })
            .sum::<u64>();
        bytes
    }

    /// The payload of this chunk's spill page (see PAGE FORMAT in `rowcache`). Cold chunks
    /// only: chains and creation timestamps are not written.
    fn encode(&self, layout: &Layout) -> Vec<u8> {
        debug_assert!(self.is_cold(), "only cold chunks are spilled");
        debug_assert_eq!(self.columns.len(), layout.columns.len());
        let mut enc = Encoder::default();
        enc.u64(self.max_write_ts);
        encode_bits(&mut enc, &self.exists);
        enc.u8(if self.labels.is_empty() {
            ABSENT
        } else {
            PRESENT
        });
        for labels in &self.labels {
            match labels {
                None => enc.u8(ABSENT),
                Some(labels) => {
                    enc.u8(PRESENT);
                    enc.u32s(labels);
                }
            }
        }
        enc.len(self.columns.len());
        for column in &self.columns {
            encode_bits(&mut enc, &column.valid);
            match &column.data {
                ColumnData::Bool(v) => {
                    enc.u8(KIND_BOOL);
                    encode_bits(&mut enc, v);
                }
                ColumnData::Int64(v) => {
                    enc.u8(KIND_INT64);
                    v.iter().for_each(|&x| enc.u64(x as u64));
                }
                ColumnData::Float64(v) => {
                    enc.u8(KIND_FLOAT64);
                    v.iter().for_each(|&x| enc.u64(x.to_bits()));
                }
                ColumnData::Values(v) => {
                    enc.u8(KIND_VALUES);
                    v.iter().for_each(|x| enc.value(x));
                }
                ColumnData::Family(cells) => {
                    enc.u8(KIND_FAMILY);
                    for cell in cells {
                        match cell {
                            None => enc.u8(ABSENT),
                            Some(values) => {
                                enc.u8(PRESENT);
                                enc.len(values.len());
                                values.iter().for_each(|x| enc.value(x));
                            }
                        }
                    }
                }
            }
        }
        enc.u8(if self.dynamic.is_empty() {
            ABSENT
        } else {
            PRESENT
        });
        for props in &self.dynamic {
            match props {
                None => enc.u8(ABSENT),
                Some(props) => {
                    enc.u8(PRESENT);
                    enc.len(props.len());
                    for (key, value) in props.iter() {
                        enc.u32(*key);
                        enc.value(value);
                    }
                }
            }
        }
        enc.u8(if self.endpoints.is_empty() {
            ABSENT
        } else {
            PRESENT
        });
        for &(src, dst) in &self.endpoints {
            enc.u32(src);
            enc.u32(dst);
        }
        enc.buf
    }

    /// The chunk encoded by [`encode`](Self::encode), checked against `layout`.
    fn decode(layout: &Layout, payload: &[u8]) -> DecodeResult<Chunk> {
        let mut dec = Decoder::new(payload, 0);
        let max_write_ts = dec.u64()?;
        let exists = decode_bits(&mut dec)?;
        let mut labels = Vec::new();
        if decode_marker(&mut dec)? {
            labels.reserve_exact(CHUNK_ROWS);
            for _ in 0..CHUNK_ROWS {
                labels.push(match decode_marker(&mut dec)? {
                    false => None,
                    true => Some(dec.u32s()?.into_boxed_slice()),
                });
            }
        }
        let column_count = dec.len()?;
        if column_count != layout.columns.len() {
            return Err(dec.error(format!(
                "{column_count} columns, the table has {}",
                layout.columns.len()
            )));
        }
        let mut columns = Vec::with_capacity(column_count);
        for (i, &data_type) in layout.columns.iter().enumerate() {
            let valid = decode_bits(&mut dec)?;
            let kind = dec.u8()?;
            let expected = match data_type {
                _ if layout.is_family(i) => KIND_FAMILY,
                DataType::Bool => KIND_BOOL,
                DataType::Int64 => KIND_INT64,
                DataType::Float64 => KIND_FLOAT64,
                _ => KIND_VALUES,
            };
            if kind != expected {
                return Err(dec.error(format!("column kind {kind}, expected {expected}")));
            }
            let data = match kind {
                KIND_BOOL => ColumnData::Bool(decode_bits(&mut dec)?),
                KIND_INT64 => ColumnData::Int64(
                    (0..CHUNK_ROWS)
                        .map(|_| dec.u64().map(|x| x as i64))
                        .collect::<DecodeResult<_>>()?,
                ),
                KIND_FLOAT64 => ColumnData::Float64(
                    (0..CHUNK_ROWS)
                        .map(|_| dec.u64().map(f64::from_bits))
                        .collect::<DecodeResult<_>>()?,
                ),
                KIND_VALUES => ColumnData::Values(
                    (0..CHUNK_ROWS)
                        .map(|_| dec.value())
                        .collect::<DecodeResult<_>>()?,
                ),
                _ => {
                    let mut cells = Vec::with_capacity(CHUNK_ROWS);
                    for _ in 0..CHUNK_ROWS {
                        cells.push(match decode_marker(&mut dec)? {
                            false => None,
                            true => {
                                let n = dec.len()?;
                                let values = (0..n)
                                    .map(|_| dec.value())
                                    .collect::<DecodeResult<Vec<_>>>()?;
                                Some(values.into_boxed_slice())
                            }
                        });
                    }
                    ColumnData::Family(cells)
                }
            };
            columns.push(Column { data, valid });
        }
        let mut dynamic = Vec::new();
        if decode_marker(&mut dec)? {
            dynamic.reserve_exact(CHUNK_ROWS);
            for _ in 0..CHUNK_ROWS {
                dynamic.push(match decode_marker(&mut dec)? {
                    false => None,
                    true => {
                        let n = dec.len()?;
                        let props = (0..n)
                            .map(|_| Ok((dec.u32()?, dec.value()?)))
                            .collect::<DecodeResult<Vec<_>>>()?;
                        Some(props.into_boxed_slice())
                    }
                });
            }
        }
        let mut endpoints = Vec::new();
        if decode_marker(&mut dec)? {
            endpoints = (0..CHUNK_ROWS)
                .map(|_| Ok((dec.u32()?, dec.u32()?)))
                .collect::<DecodeResult<_>>()?;
        }
        if !dec.is_empty() {
            return Err(dec.error("trailing bytes after the chunk"));
        }
        Ok(Chunk {
            max_write_ts,
            exists,
            labels,
            columns,
            dynamic,
            endpoints,
            created_at: Vec::new(),
            created_suffix: None,
            chains: HashMap::new(),
        })
    }
}

fn column_of(at: ColumnRef) -> usize {
    match at {
        ColumnRef::Single(c) | ColumnRef::Family { column: c, .. } => c,
    }
}

fn absent(slot: Slot) -> SlotValue {
    match slot {
        Slot::Exists => SlotValue::Exists(false),
        Slot::Labels => SlotValue::Labels(None),
        Slot::Prop(_) => SlotValue::Prop(None),
    }
}

/// Drops versions no reader at or after `horizon` can see: all but the newest one valid at it.
fn prune_chain(chain: &mut VersionChain, horizon: Timestamp) {
    if let Some(keep_from) = chain.older.iter().rposition(|(from, _)| *from <= horizon) {
        chain.older.drain(..keep_from);
    }
}

fn set_dynamic(cell: &mut DynamicProps, key: PropKeyId, value: Option<Value>) {
    let mut props: Vec<(PropKeyId, Value)> = cell.take().map(Vec::from).unwrap_or_default();
    props.retain(|(k, _)| *k != key);
    if let Some(v) = value {
        props.push((key, v));
    }
    *cell = (!props.is_empty()).then(|| props.into_boxed_slice());
}

/// One chunk's place in its table: the chunk when resident, its spill page when it has one
/// (see EVICTION in the module documentation).
struct ChunkSlot {
    state: RwLock<ChunkState>,
    /// The clock's reference bit: set by every access, cleared by a passing eviction sweep.
    referenced: AtomicBool,
    /// Written since its size was last estimated (it is then listed in `RowTable::stale`).
    stale: AtomicBool,
    /// This chunk's share of the cache's resident bytes (0 while spilled).
    size_bytes: AtomicU64,
}

struct ChunkState {
    /// `None`: evicted; `page` then holds it.
    chunk: Option<Box<Chunk>>,
    /// A page holding exactly the resident chunk (clean), or the evicted chunk.
    page: Option<PageRef>,
}

impl ChunkSlot {
    fn touch(&self) {
        if !self.referenced.load(Ordering::Relaxed) {
            self.referenced.store(true, Ordering::Relaxed);
        }
    }
}

/// `DIRECTORY_BLOCK_CHUNKS` slots of a `ChunkDirectory`, allocated on first use.
type DirectoryBlock = Box<[OnceLock<ChunkSlot>]>;

/// Chunks per directory block (2 M rows).
const DIRECTORY_BLOCK_CHUNKS: usize = 1024;
/// Directory blocks: enough for every `u32` row offset.
const DIRECTORY_BLOCKS: usize = (1usize << 32) / CHUNK_ROWS / DIRECTORY_BLOCK_CHUNKS;

/// A table's chunk slots: append-only, and read without a lock. Two levels of `OnceLock`s, so
/// finding a slot is two atomic loads and a slot lives (at a fixed address) as long as its
/// table. A `RwLock<Vec<Arc<ChunkSlot>>>` cost every row read a read-modify-write on the lock
/// word and on the slot's `Arc` count — cache lines that two threads reading one table
/// bounced between their cores on every row (`docs/benchmarks.md`, "Parallel Cypher on a
/// million vertices"). Slots `0..len` are published in order by `grow`, under its mutex.
struct ChunkDirectory {
    blocks: Box<[OnceLock<DirectoryBlock>]>,
    len: AtomicUsize,
    grow: Mutex<()>,
}

impl ChunkDirectory {
    fn new() -> Self {
        ChunkDirectory {
            blocks: (0..DIRECTORY_BLOCKS).map(|_| OnceLock::new()).collect(),
            len: AtomicUsize::new(0),
            grow: Mutex::new(()),
        }
    }

    fn get(&self, index: usize) -> Option<&ChunkSlot> {
        self.blocks
            .get(index / DIRECTORY_BLOCK_CHUNKS)?
            .get()?
            .get(index % DIRECTORY_BLOCK_CHUNKS)?
            .get()
    }

    /// Slots published so far; every index below is present.
    fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The published slots with their indexes, as of the call.
    fn iter(&self) -> impl Iterator<Item = (usize, &ChunkSlot)> {
        (0..self.len()).map(|index| (index, self.get(index).expect("published slot")))
    }

    /// Slot `index`, publishing `make()` for it and every missing slot below it first.
    fn grow(&self, index: usize, mut make: impl FnMut() -> ChunkSlot) -> &ChunkSlot {
        let _one_writer = self.grow.lock();
        assert!(
            index < DIRECTORY_BLOCKS * DIRECTORY_BLOCK_CHUNKS,
            "chunk {index} past the directory"
        );
        while self.len() <= index {
            let next = self.len();
            let block = self.blocks[next / DIRECTORY_BLOCK_CHUNKS].get_or_init(|| {
                (0..DIRECTORY_BLOCK_CHUNKS)
                    .map(|_| OnceLock::new())
                    .collect()
            });
            let fresh = block[next % DIRECTORY_BLOCK_CHUNKS].set(make()).is_ok();
            assert!(fresh, "slot {next} published twice");
            self.len.store(next + 1, Ordering::Release);
        }
        self.get(index).expect("published above")
    }
}

/// One table of rows. See the module documentation.
pub struct RowTable {
    name: String,
    layout: Layout,
    next_row: AtomicU32,
    chunks: ChunkDirectory,
    cache: Arc<RowCache>,
    /// Chunks written since their size was last estimated.
    stale: Mutex<Vec<usize>>,
    /// Where the next eviction sweep starts.
    clock_hand: AtomicUsize,
}

/// A row's complete state at a timestamp.
#[derive(Clone, Debug, PartialEq)]
pub struct RowImage {
    pub labels: Vec<LabelId>,
    pub props: Vec<(PropKeyId, Value)>,
}

impl RowTable {
    /// A table whose chunks stay resident (no spill file).
    #[cfg(test)]
    pub(crate) fn new(name: &str, properties: &[PropertyDef], families: &[Vec<usize>]) -> Self {
        Self::with_cache(name, properties, families, RowCache::unbounded())
    }

    /// A table accounting its chunks in `cache` and spilling cold ones to its files.
    pub(crate) fn with_cache(
        name: &str,
        properties: &[PropertyDef],
        families: &[Vec<usize>],
        cache: Arc<RowCache>,
    ) -> Self {
        Self {
            name: name.to_string(),
            layout: Layout::new(properties, families),
            next_row: AtomicU32::new(0),
            chunks: ChunkDirectory::new(),
            cache,
            stale: Mutex::new(Vec::new()),
            clock_hand: AtomicUsize::new(0),
        }
    }

    /// Reserves a fresh row offset (rows of aborted transactions stay as holes).
    pub(crate) fn reserve(&self, limit: u32) -> Result<u32> {
        self.reserve_many(1, limit)
    }

    /// Reserves `count` consecutive rows (none on error); the first of them.
    pub(crate) fn reserve_many(&self, count: u32, limit: u32) -> Result<u32> {
        self.next_row
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                n.checked_add(count).filter(|&end| end <= limit)
            })
            .map_err(|n| {
                Error::LimitExceeded(format!(
                    "table '{}' is full: {n} rows, at most {limit} ({count} asked for)",
                    self.name
                ))
            })
    }

    pub fn row_count(&self) -> u32 {
        self.next_row.load(Ordering::Acquire)
    }

    /// Makes sure offsets below `rows` are never handed out again (recovery).
    pub(crate) fn ensure_reserved(&self, rows: u32) {
        self.next_row.fetch_max(rows, Ordering::AcqRel);
    }

    /// Checks that `value` may be stored under `key` in this table.
    pub fn check_type(&self, key: PropKeyId, value: &Value, key_name: &str) -> Result<()> {
        match self.layout.declared.get(&key) {
            Some(&(data_type, _)) if !data_type.accepts(value) => {
                Err(Error::TypeMismatch(format!(
                    "property '{key_name}' of table '{}' is declared {} but the value {value} is {}",
                    self.name,
                    data_type.name(),
                    value.data_type().name()
                )))
            }
            _ => Ok(()),
        }
    }

    // ---- the chunk accessor: every read and write of a chunk goes through these ----------

    fn slot(&self, row: u32) -> Option<&ChunkSlot> {
        self.chunks.get(row as usize / CHUNK_ROWS)
    }

    fn slot_for_write(&self, row: u32) -> &ChunkSlot {
        let index = row as usize / CHUNK_ROWS;
        if let Some(slot) = self.chunks.get(index) {
            return slot;
        }
        self.chunks.grow(index, || {
            let chunk = Chunk::new(&self.layout);
            let size = chunk.size_bytes();
            self.cache.account(0, size);
            self.cache.note_new_chunk();
            ChunkSlot {
                state: RwLock::new(ChunkState {
                    chunk: Some(Box::new(chunk)),
                    page: None,
                }),
                referenced: AtomicBool::new(true),
                stale: AtomicBool::new(false),
                size_bytes: AtomicU64::new(size),
            }
        })
    }

    /// Reads an evicted chunk's page back into `state` (a no-op when another thread did);
    /// true if this call loaded it.
    fn load(&self, slot: &ChunkSlot, state: &mut ChunkState, index: usize) -> Result<bool> {
        if state.chunk.is_some() {
            return Ok(false);
        }
        let Some(page) = state.page else {
            unreachable!("an evicted chunk has a page")
        };
        let payload = self.cache.read_page(page, index as u32)?;
        let chunk = Chunk::decode(&self.layout, &payload)
            .map_err(|e| self.cache.decode_error(page, e.offset, e.detail))?;
        let size = chunk.size_bytes();
        let old = slot.size_bytes.swap(size, Ordering::AcqRel);
        self.cache.account(old, size);
        self.cache.note_load();
        state.chunk = Some(Box::new(chunk));
        Ok(true)
    }

    /// The read latch of chunk `index` of `slot`, loading the chunk first if it was evicted
    /// (then also `true`: the caller calls [`relieve`](Self::relieve) once it holds no latch).
    fn latch_read<'a>(
        &self,
        slot: &'a ChunkSlot,
        index: usize,
    ) -> Result<(MappedRwLockReadGuard<'a, Chunk>, bool)> {
        slot.touch();
        let state = slot.state.read();
        let state = match RwLockReadGuard::try_map(state, |s| s.chunk.as_deref()) {
            Ok(chunk) => return Ok((chunk, false)),
            Err(state) => state,
        };
        drop(state);
        let mut state = slot.state.write();
        let loaded = self.load(slot, &mut state, index)?;
        let state = RwLockWriteGuard::downgrade(state);
        match RwLockReadGuard::try_map(state, |s| s.chunk.as_deref()) {
            Ok(chunk) => Ok((chunk, loaded)),
            Err(_) => unreachable!("loaded under the write latch, downgraded atomically"),
        }
    }

    /// After a read loaded chunks, with no latch or directory lock held: while the cache is
    /// over its budget, evicts cold chunks of this table in one clock pass (no GC — readers do
    /// not know the horizon — so mostly clean chunks read back earlier, which costs no write;
    /// one pass, so the chunks just read get a second chance instead of thrashing). Keeps
    /// read-only workloads bounded between commits and maintenance rounds. A failed spill
    /// write leaves its chunk resident and is counted in the cache statistics; the read
    /// itself succeeded and returns its data.
    fn relieve(&self) {
        if self.cache.resident_bytes() > self.cache.budget_bytes() {
            let target = self.cache.target_bytes();
            if self.sweep(0, target, 1).is_err() {
                debug_assert!(self.cache.stats().spill_write_errors > 0);
            }
        }
    }

    /// The write latch of chunk `index` of `slot`, loaded; the chunk's page (if any) no longer
    /// matches it once written, and its size is re-estimated at the next refresh.
    fn latch_write<'a>(
        &self,
        slot: &'a ChunkSlot,
        index: usize,
    ) -> Result<MappedRwLockWriteGuard<'a, Chunk>> {
        slot.touch();
        let mut state = slot.state.write();
        self.load(slot, &mut state, index)?;
        // Writers (the commit pipeline) do not relieve: eviction after the commit does.
        if let Some(page) = state.page.take() {
            self.cache.note_dead(page);
        }
        self.mark_stale(slot, index);
        match RwLockWriteGuard::try_map(state, |s| s.chunk.as_deref_mut()) {
            Ok(chunk) => Ok(chunk),
            Err(_) => unreachable!("loaded under the write latch"),
        }
    }

    fn mark_stale(&self, slot: &ChunkSlot, index: usize) {
        if !slot.stale.swap(true, Ordering::AcqRel) {
            self.stale.lock().push(index);
        }
    }

    /// `f` with the chunk holding `row` (`None`: past the last chunk).
    fn with_chunk<T>(&self, row: u32, f: impl FnOnce(&Chunk, usize) -> T) -> Result<Option<T>> {
        let Some(slot) = self.slot(row) else {
            return Ok(None);
        };
        let (chunk, loaded) = self.latch_read(slot, row as usize / CHUNK_ROWS)?;
        let result = f(&chunk, row as usize % CHUNK_ROWS);
        drop(chunk);
        if loaded {
            self.relieve();
        }
        Ok(Some(result))
    }

    fn with_chunk_mut<T>(&self, row: u32, f: impl FnOnce(&mut Chunk, usize) -> T) -> Result<T> {
        let slot = self.slot_for_write(row);
        let mut chunk = self.latch_write(slot, row as usize / CHUNK_ROWS)?;
        Ok(f(&mut chunk, row as usize % CHUNK_ROWS))
    }

    // ---- reads ----------------------------------------------------------------------------

    fn read(&self, row: u32, slot: Slot, ts: Timestamp) -> Result<SlotValue> {
        let value = self.with_chunk(row, |chunk, r| chunk.read(&self.layout, r, slot, ts))?;
        Ok(value.unwrap_or_else(|| absent(slot)))
    }

    pub fn exists(&self, row: u32, ts: Timestamp) -> Result<bool> {
        Ok(matches!(
            self.read(row, Slot::Exists, ts)?,
            SlotValue::Exists(true)
        ))
    }

    pub fn labels(&self, row: u32, ts: Timestamp) -> Result<Vec<LabelId>> {
        Ok(match self.read(row, Slot::Labels, ts)? {
            SlotValue::Labels(Some(labels)) => labels.into_vec(),
            _ => Vec::new(),
        })
    }

    pub fn prop(&self, row: u32, key: PropKeyId, ts: Timestamp) -> Result<Option<Value>> {
        Ok(match self.read(row, Slot::Prop(key), ts)? {
            SlotValue::Prop(v) => v,
            _ => None,
        })
    }

    /// `f(i, value)` with property `key` of `rows[i]` at `ts`, for bulk readers (analytics
    /// projections): the chunk directory is locked once for the batch, and a chunk's latch is
    /// kept across consecutive rows of the same chunk, instead of both per row as in [`prop`].
    ///
    /// [`prop`]: Self::prop
    pub fn prop_many(
        &self,
        rows: &[u32],
        key: PropKeyId,
        ts: Timestamp,
        f: &mut dyn FnMut(usize, Option<Value>),
    ) -> Result<()> {
        let at = self.layout.locate(key);
        let read = |chunk: &Chunk, r: usize| chunk.read_prop(at, key, r, ts);
        self.read_many(rows, read, &mut |i, value| f(i, value.flatten()))
    }

    /// `f(i, exists, value)` with whether `rows[i]` exists at `ts` and, if it does, its property
    /// `key` (`None`: no key to read): [`exists`](Self::exists) and [`prop`](Self::prop) for
    /// each row, reading both under one latch per chunk as [`prop_many`](Self::prop_many) does.
    pub fn exists_and_prop_many(
        &self,
        rows: &[u32],
        key: Option<PropKeyId>,
        ts: Timestamp,
        f: &mut dyn FnMut(usize, bool, Option<Value>),
    ) -> Result<()> {
        let at = key.and_then(|key| self.layout.locate(key));
        let read = |chunk: &Chunk, r: usize| {
            let exists = matches!(
                chunk.read(&self.layout, r, Slot::Exists, ts),
                SlotValue::Exists(true)
            );
            let value = key
                .filter(|_| exists)
                .and_then(|k| chunk.read_prop(at, k, r, ts));
            (exists, value)
        };
        self.read_many(rows, read, &mut |i, read| {
            let (exists, value) = read.unwrap_or((false, None));
            f(i, exists, value)
        })
    }

    /// `f(i, read(chunk, row in chunk))` for each of `rows` (`None` past the last chunk): the
    /// chunk directory is looked up once per chunk switch and a chunk's read latch kept across
    /// consecutive rows of the same chunk.
    fn read_many<T>(
        &self,
        rows: &[u32],
        read: impl Fn(&Chunk, usize) -> T,
        f: &mut dyn FnMut(usize, Option<T>),
    ) -> Result<()> {
        let mut latched: Option<(usize, MappedRwLockReadGuard<'_, Chunk>)> = None;
        let mut loaded_any = false;
        for (i, &row) in rows.iter().enumerate() {
            let index = row as usize / CHUNK_ROWS;
            if latched.as_ref().is_none_or(|(at, _)| *at != index) {
                latched = None;
                if let Some(slot) = self.chunks.get(index) {
                    let (chunk, loaded) = self.latch_read(slot, index)?;
                    loaded_any |= loaded;
                    latched = Some((index, chunk));
                }
            }
            let value = latched
                .as_ref()
                .map(|(_, chunk)| read(chunk, row as usize % CHUNK_ROWS));
            f(i, value);
        }
        drop(latched);
        if loaded_any {
            // One batch may hold more than the budget until here.
            self.relieve();
        }
        Ok(())
    }

    /// The (source, destination) offsets of edge row `row`: `None` for a row never created
    /// (a hole, or past the last chunk). Endpoints are fixed at creation and not versioned, so
    /// a deleted edge keeps them; the caller decides visibility with [`exists`](Self::exists).
    /// One lock-free chunk lookup and the chunk's read latch (a load if it was evicted).
    pub(crate) fn endpoints(&self, row: u32) -> Result<Option<(u32, u32)>> {
        let ends = self.with_chunk(row, |chunk, r| chunk.endpoints_of(r))?;
        Ok(ends.flatten())
    }

    /// All properties of a row at `ts`, sorted by key.
    pub fn props(&self, row: u32, ts: Timestamp) -> Result<Vec<(PropKeyId, Value)>> {
        let props = self.with_chunk(row, |chunk, r| {
            let mut keys: Vec<PropKeyId> = self.layout.declared.keys().copied().collect();
            if let Some(dynamic) = chunk.dynamic.get(r).and_then(Option::as_ref) {
                keys.extend(dynamic.iter().map(|(k, _)| *k));
            }
            if ts < chunk.max_write_ts {
                // Properties removed since `ts` are only in the chains.
                keys.extend(
                    chunk
                        .chains
                        .keys()
                        .filter(|(row, _)| *row as usize == r)
                        .filter_map(|(_, s)| match s {
                            Slot::Prop(k) => Some(*k),
                            _ => None,
                        }),
                );
            }
            keys.sort_unstable();
            keys.dedup();
            keys.into_iter()
                .filter_map(|k| match chunk.read(&self.layout, r, Slot::Prop(k), ts) {
                    SlotValue::Prop(Some(v)) => Some((k, v)),
                    _ => None,
                })
                .collect()
        })?;
        Ok(props.unwrap_or_default())
    }

    pub(crate) fn image(&self, row: u32, ts: Timestamp) -> Result<RowImage> {
        Ok(RowImage {
            labels: self.labels(row, ts)?,
            props: self.props(row, ts)?,
        })
    }

    /// Calls `f` with every row that exists at `ts`, in offset order. `f` runs with no latch
    /// held (a chunk's rows are listed first), so it may read the table and chunks may be
    /// evicted meanwhile.
    pub fn scan(&self, ts: Timestamp, mut f: impl FnMut(u32)) -> Result<()> {
        self.scan_ranges(ts, |rows| rows.for_each(&mut f))
    }

    /// [`scan`](Self::scan) by runs of rows: `f` gets the maximal ranges of consecutive rows
    /// that exist at `ts` within each chunk, in offset order — one range per chunk for a table
    /// without deleted rows, where a caller that wants counts or bounds (analytics' vertex
    /// selection) need not visit every row. Latching as in `scan`.
    pub fn scan_ranges(&self, ts: Timestamp, mut f: impl FnMut(Range<u32>)) -> Result<()> {
        let mut found: Vec<Range<u32>> = Vec::new();
        for (index, slot) in self.chunks.iter() {
            let base = (index * CHUNK_ROWS) as u32;
            let loaded = {
                let (chunk, loaded) = self.latch_read(slot, index)?;
                let exists = |r: usize| {
                    if ts >= chunk.max_write_ts {
                        chunk.exists[r]
                    } else {
                        matches!(
                            chunk.read(&self.layout, r, Slot::Exists, ts),
                            SlotValue::Exists(true)
                        )
                    }
                };
                let mut start = None;
                for r in 0..CHUNK_ROWS {
                    match (exists(r), start) {
                        (true, None) => start = Some(r),
                        (false, Some(first)) => {
                            found.push(base + first as u32..base + r as u32);
                            start = None;
                        }
                        _ => {}
                    }
                }
                if let Some(first) = start {
                    found.push(base + first as u32..base + CHUNK_ROWS as u32);
                }
                loaded
            };
            if loaded {
                self.relieve();
            }
            found.drain(..).for_each(&mut f);
        }
        Ok(())
    }

    // ---- writes (the commit pipeline, one commit at a time) ----------------------------------

    /// Creates vertex row `row` at `ts` with `labels` and `props`.
    pub(crate) fn install_create(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        labels: &[LabelId],
        props: &[(PropKeyId, Value)],
    ) -> Result<()> {
        self.install_row(row, (ts, horizon), labels, props, None)
    }

    /// Creates edge row `row` at `ts` with its endpoints `ends` (source offset, destination
    /// offset: fixed from here on, see ENDPOINTS) and `props`, under one latch.
    pub(crate) fn install_create_edge(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        ends: (u32, u32),
        props: &[(PropKeyId, Value)],
    ) -> Result<()> {
        self.install_row(row, (ts, horizon), &[], props, Some(ends))
    }

    fn install_row(
        &self,
        row: u32,
        (ts, horizon): (Timestamp, Timestamp),
        labels: &[LabelId],
        props: &[(PropKeyId, Value)],
        endpoints: Option<(u32, u32)>,
    ) -> Result<()> {
        self.with_chunk_mut(row, |chunk, r| {
            assert!(
                !chunk.exists[r],
                "row {row} of '{}' created twice",
                self.name
            );
            if let Some(ends) = endpoints {
                chunk.set_endpoints(r, ends);
            }
            // Properties and labels of a row that did not exist need no old versions: no
            // reader can see the row before `ts`.
            for (key, value) in props {
                chunk.write_in_place(
                    &self.layout,
                    r,
                    (Slot::Prop(*key), SlotValue::Prop(Some(value.clone()))),
                );
            }
            let labels = (!labels.is_empty()).then(|| labels.to_vec().into_boxed_slice());
            chunk.write_in_place(&self.layout, r, (Slot::Labels, SlotValue::Labels(labels)));
            chunk.write_in_place(&self.layout, r, (Slot::Exists, SlotValue::Exists(true)));
            assert!(
                ts >= chunk.max_write_ts,
                "commits install in timestamp order"
            );
            if ts > horizon {
                chunk.note_created(r, ts);
            }
            chunk.max_write_ts = ts;
        })
    }

    pub(crate) fn install_delete(&self, row: u32, ts: Timestamp, horizon: Timestamp) -> Result<()> {
        self.with_chunk_mut(row, |chunk, r| {
            chunk.write(
                &self.layout,
                r,
                Slot::Exists,
                SlotValue::Exists(false),
                ts,
                horizon,
            )
        })
    }

    pub(crate) fn install_prop(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        key: PropKeyId,
        value: Option<Value>,
    ) -> Result<()> {
        self.with_chunk_mut(row, |chunk, r| {
            chunk.write(
                &self.layout,
                r,
                Slot::Prop(key),
                SlotValue::Prop(value),
                ts,
                horizon,
            )
        })
    }

    pub(crate) fn install_labels(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        labels: &[LabelId],
    ) -> Result<()> {
        let value =
            SlotValue::Labels((!labels.is_empty()).then(|| labels.to_vec().into_boxed_slice()));
        self.with_chunk_mut(row, |chunk, r| {
            chunk.write(&self.layout, r, Slot::Labels, value, ts, horizon)
        })
    }

    /// Every value property `key` of `row` holds in a version still kept (in place or in the
    /// slot's version chain) — after `gc(horizon)`, every value a reader at or after `horizon`
    /// can see; before it, a superset. Empty when the row exists in no kept version (never
    /// created, or deleted before every kept version). Secondary indexes are built and pruned
    /// from this (see `index`).
    pub(crate) fn retained_values(&self, row: u32, key: PropKeyId) -> Result<Vec<Value>> {
        let values = self.with_chunk(row, |chunk, r| {
            let chain = |slot: Slot| chunk.chains.get(&(row, slot));
            if !chunk.exists[r] && chain(Slot::Exists).is_none() {
                return Vec::new();
            }
            let mut values: Vec<Value> = chunk
                .prop_in_place(self.layout.locate(key), key, r)
                .into_iter()
                .collect();
            if let Some(chain) = chain(Slot::Prop(key)) {
                values.extend(chain.older.iter().filter_map(|(_, old)| match old {
                    SlotValue::Prop(value) => value.clone(),
                    _ => None,
                }));
            }
            values
        })?;
        Ok(values.unwrap_or_default())
    }

    // ---- maintenance --------------------------------------------------------------------------

    /// Drops every version no reader at or after `horizon` needs. Evicted chunks have none.
    pub(crate) fn gc(&self, horizon: Timestamp) {
        for (index, slot) in self.chunks.iter() {
            let mut state = slot.state.write();
            if let Some(chunk) = state.chunk.as_mut()
                && chunk.gc(horizon)
            {
                drop(state);
                self.mark_stale(slot, index);
            }
        }
    }

    /// Number of version-chain entries still held (for tests and statistics).
    #[cfg(test)]
    pub(crate) fn version_count(&self) -> usize {
        self.chunks
            .iter()
            .map(|(_, slot)| {
                slot.state.read().chunk.as_ref().map_or(0, |c| {
                    c.chains.values().map(|ch| ch.older.len()).sum::<usize>()
                })
            })
            .sum()
    }

    /// Chunks of this table held in memory, and chunks evicted to the spill file.
    #[cfg(test)]
    pub(crate) fn chunk_residency(&self) -> (usize, usize) {
        let chunks = self.chunks.len();
        let resident = self
            .chunks
            .iter()
            .take(chunks)
            .filter(|(_, slot)| slot.state.read().chunk.is_some())
            .count();
        (resident, chunks - resident)
    }

    /// Re-estimates the size of every chunk written since the last refresh, so the cache's
    /// resident bytes are current (see ACCOUNTING in `rowcache`).
    pub(crate) fn refresh_sizes(&self) {
        let stale = std::mem::take(&mut *self.stale.lock());
        for index in stale {
            let slot = self.chunks.get(index).expect("a stale chunk exists");
            slot.stale.store(false, Ordering::Release);
            let state = slot.state.read();
            if let Some(chunk) = &state.chunk {
                let size = chunk.size_bytes();
                let old = slot.size_bytes.swap(size, Ordering::AcqRel);
                self.cache.account(old, size);
            }
        }
    }

    /// Moves this table's pages of generations below `round.below_generation` to the spill
    /// file being appended to, until the round's budget is spent (see COMPACTION in
    /// `rowcache`). A chunk someone holds keeps its page for a later round. A page that does
    /// not read back is noted in `round.unreadable` and keeps its slot; a failed write of a
    /// copy is returned at once (counted like any spill write error) and the slot keeps its
    /// old page.
    fn move_pages(&self, round: &mut CompactionRound) -> Result<()> {
        for (index, slot) in self.chunks.iter() {
            if round.budget_bytes == 0 {
                break;
            }
            let Some(mut state) = slot.state.try_write() else {
                continue;
            };
            let Some(page) = state
                .page
                .filter(|page| page.generation < round.below_generation)
            else {
                continue;
            };
            let payload = match self.cache.read_page(page, index as u32) {
                Ok(payload) => payload,
                Err(e) => {
                    round.unreadable.get_or_insert(e);
                    continue;
                }
            };
            let moved = self.cache.write_page(index as u32, &payload)?;
            debug_assert!(moved.generation >= round.below_generation);
            self.cache.note_moved(page);
            state.page = Some(moved);
            round.budget_bytes = round.budget_bytes.saturating_sub(u64::from(page.len_bytes));
        }
        Ok(())
    }

    /// One clock sweep (at most two passes over the chunks): evicts cold chunks until the
    /// cache holds at most `target_bytes`, collecting versions below `horizon` on the way.
    /// Returns the number of chunks evicted. A failed spill write stops the sweep with the
    /// error; the chunk concerned stays resident. See EVICTION.
    pub(crate) fn evict(&self, horizon: Timestamp, target_bytes: u64) -> Result<usize> {
        self.sweep(horizon, target_bytes, 2)
    }

    /// A clock sweep of at most `passes` passes: with one pass, every chunk referenced since
    /// the last sweep (the one just loaded, at least) gets its second chance.
    fn sweep(&self, horizon: Timestamp, target_bytes: u64, passes: usize) -> Result<usize> {
        if !self.cache.bounded() {
            return Ok(0);
        }
        // The chunk that receives new rows (and any after it) is being written.
        let tail = (self.row_count().saturating_sub(1)) as usize / CHUNK_ROWS;
        let n = self.chunks.len().min(tail);
        if n == 0 {
            return Ok(0);
        }
        let mut hand = self.clock_hand.load(Ordering::Relaxed) % n;
        let mut evicted = 0;
        for _ in 0..passes * n {
            if self.cache.resident_bytes() <= target_bytes {
                break;
            }
            let index = hand;
            hand = (hand + 1) % n;
            let slot = self.chunks.get(index).expect("below the published length");
            if slot.referenced.swap(false, Ordering::AcqRel) {
                continue;
            }
            let outcome = self.evict_chunk(slot, index, horizon);
            self.clock_hand.store(hand, Ordering::Relaxed);
            evicted += usize::from(outcome?);
        }
        self.clock_hand.store(hand, Ordering::Relaxed);
        Ok(evicted)
    }

    /// Evicts one chunk if it is resident, unlatched and cold after collecting its versions
    /// below `horizon`. A clean chunk needs no write: its page still holds it.
    fn evict_chunk(&self, slot: &ChunkSlot, index: usize, horizon: Timestamp) -> Result<bool> {
        // Never evicted while latched: a reader or writer holding the latch keeps it.
        let Some(mut guard) = slot.state.try_write() else {
            return Ok(false);
        };
        let state: &mut ChunkState = &mut guard;
        let Some(chunk) = state.chunk.as_mut() else {
            return Ok(false);
        };
        if chunk.gc(horizon) {
            self.mark_stale(slot, index);
        }
        if !chunk.is_cold() {
            return Ok(false);
        }
        let page = match state.page {
            Some(page) => page,
            None => {
                let payload = chunk.encode(&self.layout);
                self.cache.write_page(index as u32, &payload)?
            }
        };
        state.page = Some(page);
        state.chunk = None;
        let old = slot.size_bytes.swap(0, Ordering::AcqRel);
        self.cache.account(old, 0);
        self.cache.note_eviction();
        Ok(true)
    }
}

/// One round of spill-file compaction over `tables`, which are every table accounting its
/// chunks in `cache` (see COMPACTION in `rowcache`): continues the compaction under way, or
/// starts one as `trigger` asks, moves at most `SPILL_COMPACT_ROUND_MAX_BYTES` (plus one
/// page) of pages, then deletes the files no slot refers to. Returns the dead bytes reclaimed.
/// A failed copy write is returned (first); else a page that did not read back; else a failed
/// delete. Nothing referenced is ever lost: a slot leaves its page only for a verified copy.
pub fn compact_spill(
    cache: &RowCache,
    tables: &[&RowTable],
    trigger: CompactTrigger,
) -> Result<u64> {
    let mut moved = Ok(());
    let mut unreadable = None;
    if let Some(mut round) = cache.begin_round(trigger) {
        moved = tables.iter().try_for_each(|t| {
            debug_assert!(std::ptr::eq(t.cache.as_ref(), cache));
            t.move_pages(&mut round)
        });
        unreadable = round.unreadable;
    }
    let reclaimed_bytes = cache.remove_unreferenced_files();
    moved?;
    if let Some(e) = unreadable {
        return Err(e);
    }
    reclaimed_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> RowTable {
        let props = [
            PropertyDef {
                key: 0,
                data_type: DataType::Int64,
            },
            PropertyDef {
                key: 1,
                data_type: DataType::String,
            },
            PropertyDef {
                key: 2,
                data_type: DataType::Float64,
            },
        ];
        RowTable::new("t", &props, &[vec![1, 2]])
    }

    #[test]
    fn bulk_property_reads_agree_with_single_reads_at_every_timestamp() {
        let t = table();
        let rows: Vec<u32> = (0..(CHUNK_ROWS as u32 + 10))
            .map(|_| t.reserve(u32::MAX).unwrap())
            .collect();
        for &row in &rows {
            t.install_create(row, 2, 0, &[], &[(2, Value::Float(f64::from(row)))])
                .unwrap();
        }
        // Rows in both chunks change at ts 5; one has its property removed at ts 8.
        for &row in [3, CHUNK_ROWS as u32 + 4].iter() {
            t.install_prop(row, 5, 0, 2, Some(Value::Float(-1.0)))
                .unwrap();
        }
        t.install_prop(7, 8, 0, 2, None).unwrap();
        // Out of order and across chunks, with a row past the last chunk.
        let asked = [
            CHUNK_ROWS as u32 + 4,
            3,
            7,
            0,
            CHUNK_ROWS as u32 + 4,
            10 * CHUNK_ROWS as u32,
        ];
        for ts in [1, 2, 5, 8, 9] {
            let mut got = Vec::new();
            t.prop_many(&asked, 2, ts, &mut |i, v| got.push((i, v)))
                .unwrap();
            let want: Vec<_> = asked
                .iter()
                .enumerate()
                .map(|(i, &row)| (i, t.prop(row, 2, ts).unwrap()))
                .collect();
            assert_eq!(got, want, "ts {ts}");
        }
    }

    #[test]
    fn readers_see_the_version_of_their_timestamp() {
        let t = table();
        let row = t.reserve(u32::MAX).unwrap();
        t.install_create(
            row,
            2,
            0,
            &[],
            &[
                (0, Value::Int(40)),
                (1, Value::string("a")),
                (7, Value::Bool(true)),
            ],
        )
        .unwrap();
        t.install_prop(row, 5, 0, 0, Some(Value::Int(41))).unwrap();
        t.install_prop(row, 9, 0, 0, Some(Value::Int(42))).unwrap();
        t.install_prop(row, 9, 0, 7, None).unwrap();
        assert!(!t.exists(row, 1).unwrap());
        assert_eq!(t.prop(row, 0, 3).unwrap(), Some(Value::Int(40)));
        assert_eq!(t.prop(row, 0, 6).unwrap(), Some(Value::Int(41)));
        assert_eq!(t.prop(row, 0, 9).unwrap(), Some(Value::Int(42)));
        assert_eq!(
            t.props(row, 8).unwrap().len(),
            3,
            "dynamic prop 7 still visible at ts 8"
        );
        assert_eq!(
            t.props(row, 9).unwrap(),
            vec![(0, Value::Int(42)), (1, Value::string("a"))]
        );
        t.install_delete(row, 12, 0).unwrap();
        assert!(t.exists(row, 11).unwrap() && !t.exists(row, 12).unwrap());
    }

    #[test]
    fn gc_keeps_what_readers_at_the_horizon_need() {
        let t = table();
        let row = t.reserve(u32::MAX).unwrap();
        t.install_create(row, 1, 0, &[], &[(0, Value::Int(1))])
            .unwrap();
        for ts in 2..10 {
            t.install_prop(row, ts, 0, 0, Some(Value::Int(ts as i64)))
                .unwrap();
        }
        t.gc(5);
        assert_eq!(t.prop(row, 0, 5).unwrap(), Some(Value::Int(5)));
        assert_eq!(t.prop(row, 0, 7).unwrap(), Some(Value::Int(7)));
        t.gc(100);
        assert_eq!(t.version_count(), 0);
        assert_eq!(t.prop(row, 0, 100).unwrap(), Some(Value::Int(9)));
    }

    #[test]
    fn declared_types_are_enforced() {
        let t = table();
        assert!(t.check_type(0, &Value::Int(1), "age").is_ok());
        let err = t.check_type(0, &Value::string("x"), "age").unwrap_err();
        assert!(err.to_string().contains("declared INT64"), "{err}");
        assert!(t.check_type(99, &Value::string("x"), "free").is_ok());
    }

    #[test]
    fn scan_sees_rows_of_its_snapshot() {
        let t = table();
        for ts in 1..=3 {
            let row = t.reserve(u32::MAX).unwrap();
            t.install_create(row, ts, 0, &[], &[]).unwrap();
        }
        t.install_delete(0, 4, 0).unwrap();
        let rows = |ts| {
            let mut v = vec![];
            t.scan(ts, |r| v.push(r)).unwrap();
            v
        };
        assert_eq!(rows(2), vec![0, 1]);
        assert_eq!(rows(4), vec![1, 2]);
    }

    // ---- eviction ------------------------------------------------------------------------

    use crate::fault::FaultVfs;
    use crate::vfs::Vfs;

    /// A table of every column kind, over a fault-injecting file system, whose cache wants
    /// every evictable chunk out (budget 1 byte).
    fn spilling_table() -> (FaultVfs, Arc<RowCache>, RowTable) {
        let vfs = FaultVfs::new();
        let cache = RowCache::open(Arc::new(vfs.clone()), 1).unwrap();
        let def = |key, data_type| PropertyDef { key, data_type };
        let props = [
            def(0, DataType::Bool),
            def(1, DataType::Int64),
            def(2, DataType::Float64),
            def(3, DataType::String),
            def(4, DataType::List),
            def(5, DataType::Map),
            def(6, DataType::String),
            def(7, DataType::Int64),
            // A declared property of any type outside a family: its own column of values.
            def(8, DataType::Any),
        ];
        let table = RowTable::with_cache("t", &props, &[vec![6, 7]], cache.clone());
        (vfs, cache, table)
    }

    /// Row `row`'s labels and properties: every column kind, some nulls, dynamic properties
    /// of several value kinds (keys 20..), and extra labels on some rows.
    fn row_content(row: u32) -> (Vec<LabelId>, Vec<(PropKeyId, Value)>) {
        let i = i64::from(row);
        let mut props = vec![
            (0, Value::Bool(row.is_multiple_of(3))),
            (1, Value::Int(i * 1_000_003 - 7)),
            (2, Value::Float(i as f64 / 3.0)),
            (6, Value::string(&format!("fam{row}"))),
            (
                8,
                match row % 3 {
                    0 => Value::Int(i),
                    1 => Value::string("any"),
                    _ => Value::List(vec![Value::Float(0.25)].into()),
                },
            ),
        ];
        if row % 4 != 1 {
            props.push((3, Value::string(&format!("name-{row}-ü"))));
            props.push((7, Value::Int(-i)));
        }
        if row.is_multiple_of(5) {
            props.push((
                4,
                Value::List(vec![Value::Int(i), Value::string("x"), Value::Null].into()),
            ));
            props.push((
                5,
                Value::Map(vec![(Arc::from("k"), Value::Float(0.5))].into()),
            ));
        }
        if row.is_multiple_of(7) {
            props.push((20, Value::string("dynamic")));
            props.push((21, Value::Temporal(TemporalValue::Date { days: i })));
            props.push((22, Value::List(vec![Value::Bool(true)].into())));
        }
        let labels = match row % 6 {
            0 => vec![9],
            1 => vec![9, 11],
            _ => Vec::new(),
        };
        (labels, props)
    }

    /// The endpoints of row `row` when the tests create it as an edge: the rows without
    /// labels, so every chunk mixes rows with and without endpoints.
    fn row_endpoints(row: u32) -> Option<(u32, u32)> {
        (row % 6 >= 2).then(|| (row.wrapping_mul(2_654_435_761) >> 3, u32::MAX - 1 - row))
    }

    fn fill(t: &RowTable, rows: u32, ts: Timestamp, horizon: Timestamp) {
        for _ in 0..rows {
            let row = t.reserve(u32::MAX).unwrap();
            let (labels, props) = row_content(row);
            match row_endpoints(row) {
                Some(ends) => t.install_create_edge(row, ts, horizon, ends, &props),
                None => t.install_create(row, ts, horizon, &labels, &props),
            }
            .unwrap();
        }
    }

    /// A row, its labels and properties, and its endpoints.
    type RowState = (u32, RowImage, Option<(u32, u32)>);

    /// What a reader at `ts` reads of `row`: its labels, properties and endpoints.
    fn row_state(t: &RowTable, row: u32, ts: Timestamp) -> RowState {
        (row, t.image(row, ts).unwrap(), t.endpoints(row).unwrap())
    }

    fn images(t: &RowTable, ts: Timestamp) -> Vec<RowState> {
        let mut rows = Vec::new();
        t.scan(ts, |row| rows.push(row)).unwrap();
        rows.into_iter().map(|row| row_state(t, row, ts)).collect()
    }

    #[test]
    fn evicted_chunks_read_back_every_column_kind_dynamic_properties_and_labels() {
        let (_vfs, cache, t) = spilling_table();
        let rows = 2 * CHUNK_ROWS as u32 + 5;
        fill(&t, rows, 1, 1);
        let before = images(&t, 1);
        assert_eq!(before.len(), rows as usize);
        for (row, image, ends) in &before {
            let (mut labels, mut props) = row_content(*row);
            labels.sort_unstable();
            props.sort_by_key(|(k, _)| *k);
            assert_eq!(
                (&image.labels, &image.props, *ends),
                (&labels, &props, row_endpoints(*row)),
                "row {row}"
            );
        }
        t.refresh_sizes();
        let full = cache.resident_bytes();
        assert_eq!(
            t.evict(1, 0).unwrap(),
            2,
            "all but the chunk taking new rows"
        );
        assert_eq!(t.chunk_residency(), (1, 2));
        assert!(
            cache.resident_bytes() < full / 2,
            "{} of {full}",
            cache.resident_bytes()
        );
        let stats = cache.stats();
        assert_eq!((stats.evictions, stats.pages_written), (2, 2));
        // Every access path reads the pages back (and a reader's misses evict again).
        assert_eq!(images(&t, 1), before);
        assert!(cache.stats().misses >= 2);
        t.evict(1, 0).unwrap();
        let asked: Vec<u32> = (0..rows).rev().step_by(3).collect();
        let mut got = Vec::new();
        t.prop_many(&asked, 7, 1, &mut |i, v| got.push((asked[i], v)))
            .unwrap();
        for (row, value) in got {
            let want = row_content(row).1.into_iter().find(|(k, _)| *k == 7);
            assert_eq!(value, want.map(|(_, v)| v), "row {row}");
        }
        t.evict(1, 0).unwrap();
        assert_eq!(
            t.retained_values(14, 20).unwrap(),
            vec![Value::string("dynamic")]
        );
        assert_eq!(t.labels(1, 1).unwrap(), vec![9, 11]);
        // Clean chunks are evicted again without writing; a written one gets a new page.
        t.scan(1, |_| {}).unwrap();
        t.evict(1, 0).unwrap();
        assert_eq!(t.chunk_residency(), (1, 2));
        assert_eq!(cache.stats().pages_written, 2, "clean pages are reused");
        t.install_prop(3, 2, 2, 20, Some(Value::Int(5))).unwrap();
        t.install_labels(3, 2, 2, &[11]).unwrap();
        assert_eq!(t.chunk_residency(), (2, 1));
        assert!(cache.stats().dead_bytes > 0);
        assert_eq!(t.evict(2, 0).unwrap(), 1);
        assert_eq!(cache.stats().pages_written, 3);
        assert_eq!(t.prop(3, 20, 2).unwrap(), Some(Value::Int(5)));
        assert_eq!(t.labels(3, 2).unwrap(), vec![11]);
        assert_eq!(images(&t, 2)[4..], images(&t, 1)[4..]);
    }

    /// Endpoints are a column of the chunk: counted in its size, spilled with it, read back
    /// for created rows (deleted ones too), `None` for holes; a damaged page is an error.
    #[test]
    fn endpoints_are_spilled_with_their_chunk_and_counted_in_its_size() {
        let (vfs, cache, t) = spilling_table();
        let mut chunk = Chunk::new(&t.layout);
        let bare_bytes = chunk.size_bytes();
        chunk.set_endpoints(5, (1, 2));
        let edge_bytes = (CHUNK_ROWS * size_of::<(u32, u32)>()) as u64;
        assert_eq!(chunk.size_bytes(), bare_bytes + edge_bytes);
        // What stays resident of an evicted chunk (docs/design/storage.md says under 100 B).
        assert!(size_of::<OnceLock<ChunkSlot>>() < 100);
        assert_eq!(
            Chunk::decode(&t.layout, &chunk.encode(&t.layout))
                .unwrap()
                .endpoints,
            chunk.endpoints
        );
        // Rows 0..2 chunks + 1: every 5th a hole, every 7th created and then deleted.
        let rows = 2 * CHUNK_ROWS as u32 + 1;
        let created = |row: u32| row < rows && !row.is_multiple_of(5);
        let want = |row: u32| created(row).then_some((row / 3, row ^ 0x5555));
        for row in 0..rows {
            assert_eq!(t.reserve(u32::MAX).unwrap(), row);
            if let Some(ends) = want(row) {
                t.install_create_edge(row, 1, 1, ends, &[]).unwrap();
            }
        }
        for row in (0..rows).step_by(7) {
            if want(row).is_some() {
                t.install_delete(row, 2, 2).unwrap();
            }
        }
        t.refresh_sizes();
        assert!(cache.resident_bytes() >= 3 * (bare_bytes + edge_bytes));
        assert_eq!(t.evict(2, 0).unwrap(), 2);
        assert_eq!(
            cache.resident_bytes(),
            bare_bytes + edge_bytes,
            "only the chunk taking new rows"
        );
        for row in 0..rows + 3 {
            assert_eq!(t.endpoints(row).unwrap(), want(row), "row {row}");
            let exists = created(row) && !row.is_multiple_of(7);
            assert_eq!(t.exists(row, 2).unwrap(), exists, "row {row}");
        }
        assert!(cache.stats().misses >= 2);
        // A damaged page: the endpoints of its rows are an error naming the file, never data.
        t.evict(2, 0).unwrap();
        let page = t.slot(0).unwrap().state.read().page.unwrap();
        let file = crate::rowcache::spill_name(page.generation);
        let end = (page.offset + u64::from(page.len_bytes)) as usize;
        vfs.corrupt(&file, end - 20, &[0xAB]).unwrap();
        let err = t.endpoints(1).unwrap_err();
        assert!(matches!(err, Error::Corruption { .. }), "{err}");
        assert!(err.to_string().contains(&file), "{err}");
        assert_eq!(
            t.endpoints(CHUNK_ROWS as u32 + 1).unwrap(),
            want(CHUNK_ROWS as u32 + 1)
        );
    }

    #[test]
    fn chunks_with_versions_stay_until_no_reader_needs_them() {
        let (_vfs, _cache, t) = spilling_table();
        fill(&t, CHUNK_ROWS as u32 + 1, 1, 0);
        // Created after the horizon (0): the creation timestamps keep the chunk resident.
        assert_eq!(t.evict(0, 0).unwrap(), 0);
        assert!(!t.exists(5, 0).unwrap() && t.exists(5, 1).unwrap());
        t.install_prop(5, 3, 0, 1, Some(Value::Int(-1))).unwrap();
        t.install_delete(6, 4, 0).unwrap();
        // A reader at 2 still needs the chains: GC at horizon 2 keeps them, nothing evicted.
        assert_eq!(t.evict(2, 0).unwrap(), 0);
        assert_eq!(t.chunk_residency(), (2, 0));
        assert_eq!(
            t.prop(5, 1, 2).unwrap(),
            row_content(5).1[1].1.clone().into()
        );
        assert!(t.exists(6, 3).unwrap());
        // Once the horizon passes every write, the chunk is cold and goes.
        assert_eq!(t.evict(4, 0).unwrap(), 1);
        assert_eq!(t.prop(5, 1, 4).unwrap(), Some(Value::Int(-1)));
        assert!(!t.exists(6, 4).unwrap());
        assert!(t.exists(7, 4).unwrap());
        assert_eq!(t.version_count(), 0);
    }

    #[test]
    fn a_latched_chunk_is_not_evicted() {
        let (_vfs, _cache, t) = spilling_table();
        fill(&t, CHUNK_ROWS as u32 + 1, 1, 1);
        let slot = t.slot(0).unwrap();
        let latch = t.latch_read(slot, 0).unwrap().0;
        assert_eq!(t.evict(1, 0).unwrap(), 0);
        drop(latch);
        assert_eq!(t.evict(1, 0).unwrap(), 1);
    }

    #[test]
    fn a_corrupt_or_truncated_spill_page_is_an_error_naming_the_file_never_data() {
        let (vfs, _cache, t) = spilling_table();
        fill(&t, 2 * CHUNK_ROWS as u32 + 1, 1, 1);
        assert_eq!(t.evict(1, 0).unwrap(), 2);
        let file = crate::rowcache::spill_name(1);
        let page = |row: u32| t.slot(row).unwrap().state.read().page.unwrap();
        let (first, second) = (page(0), page(CHUNK_ROWS as u32));
        assert_eq!(
            (first.offset, second.offset),
            (0, u64::from(first.len_bytes))
        );
        let page_len = first.len_bytes as usize;
        // A flipped byte in the second page's payload.
        vfs.corrupt(&file, page_len + 100, &[0xFF, 0x00, 0xAB])
            .unwrap();
        let err = t.prop(CHUNK_ROWS as u32, 1, 1).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Corruption { .. }), "{text}");
        assert!(text.contains(&file) && text.contains("checksum"), "{text}");
        assert!(text.contains(&format!("byte {}", page_len + 12)), "{text}");
        let mut visited = 0;
        assert!(t.scan(1, |_| visited += 1).is_err());
        assert_eq!(
            visited, CHUNK_ROWS,
            "the first chunk's rows, then the error"
        );
        // The first page is intact.
        assert_eq!(
            t.prop(3, 1, 1).unwrap(),
            Some(Value::Int(3 * 1_000_003 - 7))
        );
        // A truncated file: the first page is cut short.
        t.evict(1, 0).unwrap();
        vfs.truncate(&file, page_len as u64 / 2).unwrap();
        let text = t.prop(0, 1, 1).unwrap_err().to_string();
        assert!(text.contains(&file) && text.contains("truncated"), "{text}");
        assert!(text.contains("byte 0"), "{text}");
    }

    #[test]
    fn a_failed_spill_write_keeps_the_chunk_and_loses_nothing() {
        let (vfs, cache, t) = spilling_table();
        fill(&t, 2 * CHUNK_ROWS as u32 + 1, 1, 1);
        let before = images(&t, 1);
        vfs.fail_writes_after(1);
        assert!(t.evict(1, 0).is_err());
        assert_eq!(t.chunk_residency(), (3, 0));
        assert_eq!(cache.stats().spill_write_errors, 1);
        assert_eq!(images(&t, 1), before);
        // Writes work again: a new spill file takes the pages.
        vfs.fail_writes_after(u64::MAX);
        assert_eq!(t.evict(1, 0).unwrap(), 2);
        assert!(vfs.exists(&crate::rowcache::spill_name(2)));
        assert_eq!(images(&t, 1), before);
    }

    // ---- chunk directory --------------------------------------------------------------------

    fn bare_slot() -> ChunkSlot {
        ChunkSlot {
            state: RwLock::new(ChunkState {
                chunk: None,
                page: None,
            }),
            referenced: AtomicBool::new(false),
            stale: AtomicBool::new(false),
            size_bytes: AtomicU64::new(0),
        }
    }

    #[test]
    fn the_chunk_directory_publishes_slots_in_order_across_blocks() {
        let dir = ChunkDirectory::new();
        assert!(dir.get(0).is_none());
        let n = DIRECTORY_BLOCK_CHUNKS + 3;
        let made = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            // A reader sees every published slot, never one past the length.
            let reader = scope.spawn(|| {
                while dir.len() < n {
                    let len = dir.len();
                    assert!((0..len).all(|i| dir.get(i).is_some()));
                }
            });
            for index in [0, 5, DIRECTORY_BLOCK_CHUNKS - 1, n - 1] {
                let slot = dir.grow(index, || {
                    made.fetch_add(1, Ordering::Relaxed);
                    bare_slot()
                });
                assert!(std::ptr::eq(slot, dir.get(index).unwrap()));
            }
            reader.join().unwrap();
        });
        assert_eq!(made.into_inner(), n, "each slot made once");
        assert_eq!(dir.iter().count(), n);
        assert!(dir.get(n).is_none());
        // Growing to a published index makes nothing.
        dir.grow(3, || unreachable!("slot 3 exists"));
    }

    // ---- spill-file compaction -----------------------------------------------------------

    use crate::rowcache::spill_name;

    fn page_of(t: &RowTable, chunk: usize) -> Option<PageRef> {
        t.slot((chunk * CHUNK_ROWS) as u32)
            .unwrap()
            .state
            .read()
            .page
    }

    /// Rewrites property 1 of a row of `chunk` with the value it holds (at `ts`, collected at
    /// once): the rows read the same, but the chunk's page is dead.
    fn rewrite_in_place(t: &RowTable, chunk: usize, ts: Timestamp) {
        let row = (chunk * CHUNK_ROWS) as u32 + 1;
        let value = t.prop(row, 1, ts).unwrap();
        t.install_prop(row, ts, ts, 1, value).unwrap();
    }

    fn spill_files(vfs: &FaultVfs) -> Vec<String> {
        let names = vfs.list().unwrap();
        names
            .into_iter()
            .filter(|n| n.ends_with(".spill"))
            .collect()
    }

    /// Four evictable chunks spilled to generation 1, chunks 0 and 1 then written (dead pages,
    /// new pages in generation 1 again) and chunk 2 read back (clean, resident).
    fn table_with_dead_pages() -> (FaultVfs, Arc<RowCache>, RowTable, Vec<RowState>) {
        let (vfs, cache, t) = spilling_table();
        fill(&t, 4 * CHUNK_ROWS as u32 + 1, 1, 1);
        let before = images(&t, 1);
        assert_eq!(t.evict(1, 0).unwrap(), 4);
        rewrite_in_place(&t, 0, 2);
        rewrite_in_place(&t, 1, 2);
        assert_eq!(t.evict(2, 0).unwrap(), 2);
        assert!(t.prop((2 * CHUNK_ROWS) as u32, 1, 2).unwrap().is_some());
        assert_eq!(
            t.chunk_residency(),
            (2, 3),
            "chunk 2 read back and still clean"
        );
        assert!(page_of(&t, 2).is_some());
        (vfs, cache, t, before)
    }

    #[test]
    fn compaction_moves_every_live_page_and_deletes_the_old_file() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let stats = cache.stats();
        let referenced_bytes = |t: &RowTable| {
            (0..4)
                .map(|chunk| u64::from(page_of(t, chunk).unwrap().len_bytes))
                .sum::<u64>()
        };
        assert_eq!(stats.live_bytes, referenced_bytes(&t), "{stats:?}");
        assert_eq!(
            stats.live_bytes + stats.dead_bytes,
            stats.spill_bytes_written
        );
        assert!(stats.dead_bytes > 0, "{stats:?}");
        assert_eq!(spill_files(&vfs), vec![spill_name(1)]);
        // Below the minimum: maintenance leaves it; an explicit compaction runs.
        assert_eq!(
            compact_spill(&cache, &[&t], CompactTrigger::WhenDue).unwrap(),
            0
        );
        assert_eq!(cache.stats().spill_compactions, 0);
        let file_bytes = stats.live_bytes + stats.dead_bytes;
        assert_eq!(
            compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap(),
            file_bytes
        );
        let after = cache.stats();
        assert_eq!(
            spill_files(&vfs),
            vec![spill_name(2)],
            "the old file is deleted"
        );
        assert_eq!(after.dead_bytes, 0);
        assert_eq!(after.live_bytes, stats.live_bytes);
        assert_eq!(after.live_bytes, referenced_bytes(&t));
        assert_eq!(after.spill_bytes_copied, stats.live_bytes);
        assert_eq!(after.spill_bytes_reclaimed, file_bytes);
        assert_eq!((after.spill_files, after.spill_compactions), (1, 1));
        for chunk in 0..4 {
            assert_eq!(page_of(&t, chunk).unwrap().generation, 2, "chunk {chunk}");
        }
        assert_eq!(t.chunk_residency(), (2, 3), "compaction loads nothing");
        assert_eq!(images(&t, 2), before);
        // The clean chunk's copy is its page: evicting it again writes nothing.
        let written = cache.stats().pages_written;
        t.evict(2, 0).unwrap();
        assert_eq!(cache.stats().pages_written, written);
        assert_eq!(images(&t, 2), before);
    }

    #[test]
    fn a_latched_chunk_keeps_its_page_and_its_file_until_a_later_round() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let slot = t.slot(3 * CHUNK_ROWS as u32).unwrap();
        let latch = t.latch_read(slot, 3).unwrap().0;
        compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
        assert_eq!(page_of(&t, 3).unwrap().generation, 1);
        assert_eq!(page_of(&t, 0).unwrap().generation, 2);
        assert_eq!(spill_files(&vfs), vec![spill_name(1), spill_name(2)]);
        assert_eq!(cache.stats().spill_compactions, 0);
        assert_eq!(images(&t, 2)[..CHUNK_ROWS], before[..CHUNK_ROWS]);
        drop(latch);
        // The compaction under way continues without a new trigger.
        compact_spill(&cache, &[&t], CompactTrigger::WhenDue).unwrap();
        assert_eq!(spill_files(&vfs), vec![spill_name(2)]);
        assert_eq!(cache.stats().spill_compactions, 1);
        assert_eq!(images(&t, 2), before);
    }

    #[test]
    fn readers_during_compaction_see_every_row() {
        let (_vfs, cache, t) = spilling_table();
        fill(&t, 4 * CHUNK_ROWS as u32 + 1, 1, 1);
        let before = images(&t, 1);
        t.evict(1, 0).unwrap();
        const ROUNDS: u64 = 12;
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        let mut passes = 0;
                        while passes == 0 || !done.load(Ordering::Acquire) {
                            assert_eq!(images(&t, Timestamp::MAX), before);
                            passes += 1;
                        }
                        passes
                    })
                })
                .collect();
            for round in 0..ROUNDS {
                let ts = 2 + round;
                rewrite_in_place(&t, (round % 4) as usize, ts);
                while t.evict(ts, 0).is_err() {}
                compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
            }
            done.store(true, Ordering::Release);
            for reader in readers {
                assert!(reader.join().unwrap() > 0);
            }
        });
        // Latched chunks may have kept pages back: later rounds finish the compaction.
        while cache.stats().dead_bytes > 0 {
            compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
        }
        let stats = cache.stats();
        assert!(stats.spill_compactions >= 1, "{stats:?}");
        assert_eq!(stats.spill_files, 1, "{stats:?}");
        assert_eq!(images(&t, Timestamp::MAX), before);
    }

    #[test]
    fn a_corrupt_page_met_by_compaction_is_an_error_naming_the_file_and_stays_referenced() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let damaged = page_of(&t, 3).unwrap();
        let file = spill_name(1);
        vfs.corrupt(&file, damaged.offset as usize + 200, &[0xEE, 0x11])
            .unwrap();
        let err = compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Corruption { .. }), "{text}");
        assert!(text.contains(&file) && text.contains("checksum"), "{text}");
        assert!(
            text.contains(&format!("byte {}", damaged.offset + 12)),
            "{text}"
        );
        // Never copied, never dropped: the chunk still refers to it and its reads still fail.
        assert_eq!(page_of(&t, 3), Some(damaged));
        assert!(vfs.exists(&file));
        let read = t.prop(3 * CHUNK_ROWS as u32, 1, 2).unwrap_err().to_string();
        assert!(read.contains(&file) && read.contains("checksum"), "{read}");
        // The other pages moved and read back.
        for chunk in 0..3 {
            assert_eq!(page_of(&t, chunk).unwrap().generation, 2, "chunk {chunk}");
        }
        let mut rows = Vec::new();
        for row in 0..3 * CHUNK_ROWS as u32 {
            rows.push(row_state(&t, row, 2));
        }
        assert_eq!(rows, before[..3 * CHUNK_ROWS]);
        assert_eq!(cache.stats().spill_compactions, 0);
        assert!(compact_spill(&cache, &[&t], CompactTrigger::Now).is_err());
    }

    #[test]
    fn a_failed_write_during_compaction_loses_nothing() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let pages: Vec<_> = (0..4).map(|chunk| page_of(&t, chunk)).collect();
        let errors = cache.stats().spill_write_errors;
        vfs.fail_writes_after(1);
        let err = compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap_err();
        assert!(err.to_string().contains("injected"), "{err}");
        assert_eq!(cache.stats().spill_write_errors, errors + 1);
        assert_eq!(
            (0..4).map(|chunk| page_of(&t, chunk)).collect::<Vec<_>>(),
            pages
        );
        assert!(vfs.exists(&spill_name(1)));
        assert_eq!(images(&t, 2), before);
        // The disk works again: the next round finishes, in a new file.
        vfs.fail_writes_after(u64::MAX);
        compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
        let stats = cache.stats();
        assert_eq!(
            (stats.spill_compactions, stats.dead_bytes),
            (1, 0),
            "{stats:?}"
        );
        assert_eq!(
            spill_files(&vfs),
            vec![spill_name(3)],
            "1 and the failed 2 are gone"
        );
        assert_eq!(images(&t, 2), before);
    }
}
