//! Row tables: columnar, chunked, multi-versioned storage of vertex (and edge) rows.
//!
//! LAYOUT
//! ======
//! Rows are addressed by a dense offset and grouped into chunks of `CHUNK_ROWS`. A chunk holds,
//! per row: an existence flag, an optional set of extra labels, one typed column per declared
//! property (or one row-wise column per declared *column family*), and a dynamic column with
//! the undeclared properties as a small key/value list.
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

use crate::catalog::PropertyDef;
use parking_lot::RwLock;
use plexus_types::{DataType, Error, LabelId, PropKeyId, Result, Timestamp, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

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
    /// Creation timestamps of rows created after the GC horizon; allocated while any row of
    /// the chunk is that young, dropped by GC. A reader older than a row's creation sees
    /// nothing of it. (Cheaper than a version chain per created row.)
    created_at: Vec<Timestamp>,
    chains: HashMap<(u32, Slot), VersionChain>,
}

/// Undeclared properties of one row: a boxed slice keeps the per-row cost at one pointer.
type DynamicProps = Option<Box<[(PropKeyId, Value)]>>;

/// Declared properties of a table and how they map to columns.
struct Layout {
    declared: HashMap<PropKeyId, (DataType, ColumnRef)>,
    columns: Vec<DataType>, // per column; `DataType::Any` marks a family column
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
        for p in properties {
            if let std::collections::hash_map::Entry::Vacant(slot) = declared.entry(p.key) {
                slot.insert((p.data_type, ColumnRef::Single(columns.len())));
                columns.push(p.data_type);
            }
        }
        Self { declared, columns }
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
                .map(|&t| Column::new(t, t == DataType::Any))
                .collect(),
            dynamic: Vec::new(),
            created_at: Vec::new(),
            chains: HashMap::new(),
        }
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
        if self
            .created_at
            .get(row)
            .is_some_and(|&created| created > ts)
        {
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
        let created = self.created_at.get(row).copied().unwrap_or(0);
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

/// One table of rows. See the module documentation.
pub struct RowTable {
    name: String,
    layout: Layout,
    next_row: AtomicU32,
    chunks: RwLock<Vec<Arc<RwLock<Chunk>>>>,
}

/// A row's complete state at a timestamp.
#[derive(Clone, Debug, PartialEq)]
pub struct RowImage {
    pub labels: Vec<LabelId>,
    pub props: Vec<(PropKeyId, Value)>,
}

impl RowTable {
    pub fn new(name: &str, properties: &[PropertyDef], families: &[Vec<usize>]) -> Self {
        Self {
            name: name.to_string(),
            layout: Layout::new(properties, families),
            next_row: AtomicU32::new(0),
            chunks: RwLock::new(Vec::new()),
        }
    }

    /// Reserves a fresh row offset (rows of aborted transactions stay as holes).
    pub fn reserve(&self, limit: u32) -> Result<u32> {
        self.next_row
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .map_err(|n| {
                Error::LimitExceeded(format!(
                    "table '{}' is full: {n} rows, at most {limit}",
                    self.name
                ))
            })
    }

    pub fn row_count(&self) -> u32 {
        self.next_row.load(Ordering::Acquire)
    }

    /// Makes sure offsets below `rows` are never handed out again (recovery).
    pub fn ensure_reserved(&self, rows: u32) {
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

    fn chunk(&self, row: u32) -> Option<Arc<RwLock<Chunk>>> {
        self.chunks.read().get(row as usize / CHUNK_ROWS).cloned()
    }

    fn chunk_for_write(&self, row: u32) -> Arc<RwLock<Chunk>> {
        let index = row as usize / CHUNK_ROWS;
        if let Some(chunk) = self.chunks.read().get(index) {
            return chunk.clone();
        }
        let mut chunks = self.chunks.write();
        while chunks.len() <= index {
            chunks.push(Arc::new(RwLock::new(Chunk::new(&self.layout))));
        }
        chunks[index].clone()
    }

    fn read(&self, row: u32, slot: Slot, ts: Timestamp) -> SlotValue {
        match self.chunk(row) {
            Some(chunk) => chunk
                .read()
                .read(&self.layout, row as usize % CHUNK_ROWS, slot, ts),
            None => absent(slot),
        }
    }

    pub fn exists(&self, row: u32, ts: Timestamp) -> bool {
        matches!(self.read(row, Slot::Exists, ts), SlotValue::Exists(true))
    }

    pub fn labels(&self, row: u32, ts: Timestamp) -> Vec<LabelId> {
        match self.read(row, Slot::Labels, ts) {
            SlotValue::Labels(Some(labels)) => labels.into_vec(),
            _ => Vec::new(),
        }
    }

    pub fn prop(&self, row: u32, key: PropKeyId, ts: Timestamp) -> Option<Value> {
        match self.read(row, Slot::Prop(key), ts) {
            SlotValue::Prop(v) => v,
            _ => None,
        }
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
    ) {
        let chunks = self.chunks.read();
        let at = self.layout.locate(key);
        let mut latched: Option<(usize, parking_lot::RwLockReadGuard<'_, Chunk>)> = None;
        for (i, &row) in rows.iter().enumerate() {
            let index = row as usize / CHUNK_ROWS;
            if latched.as_ref().is_none_or(|(at, _)| *at != index) {
                latched = chunks.get(index).map(|chunk| (index, chunk.read()));
            }
            let value = latched
                .as_ref()
                .and_then(|(_, chunk)| chunk.read_prop(at, key, row as usize % CHUNK_ROWS, ts));
            f(i, value);
        }
    }

    /// All properties of a row at `ts`, sorted by key.
    pub fn props(&self, row: u32, ts: Timestamp) -> Vec<(PropKeyId, Value)> {
        let Some(chunk) = self.chunk(row) else {
            return Vec::new();
        };
        let chunk = chunk.read();
        let r = row as usize % CHUNK_ROWS;
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
    }

    pub fn image(&self, row: u32, ts: Timestamp) -> RowImage {
        RowImage {
            labels: self.labels(row, ts),
            props: self.props(row, ts),
        }
    }

    /// Calls `f` with every row that exists at `ts`, in offset order.
    pub fn scan(&self, ts: Timestamp, mut f: impl FnMut(u32)) {
        let chunks: Vec<_> = self.chunks.read().clone();
        for (index, chunk) in chunks.iter().enumerate() {
            let chunk = chunk.read();
            let base = (index * CHUNK_ROWS) as u32;
            let fast = ts >= chunk.max_write_ts;
            for r in 0..CHUNK_ROWS {
                let exists = if fast {
                    chunk.exists[r]
                } else {
                    matches!(
                        chunk.read(&self.layout, r, Slot::Exists, ts),
                        SlotValue::Exists(true)
                    )
                };
                if exists {
                    f(base + r as u32);
                }
            }
        }
    }

    pub fn install_create(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        labels: &[LabelId],
        props: &[(PropKeyId, Value)],
    ) {
        let chunk = self.chunk_for_write(row);
        let mut chunk = chunk.write();
        let r = row as usize % CHUNK_ROWS;
        assert!(
            !chunk.exists[r],
            "row {row} of '{}' created twice",
            self.name
        );
        // Properties and labels of a row that did not exist need no old versions: no reader
        // can see the row before `ts`.
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
        chunk.max_write_ts = ts;
        if ts > horizon {
            chunk.created_at.resize(CHUNK_ROWS, 0);
            chunk.created_at[r] = ts;
        }
    }

    pub fn install_delete(&self, row: u32, ts: Timestamp, horizon: Timestamp) {
        let chunk = self.chunk_for_write(row);
        let mut chunk = chunk.write();
        chunk.write(
            &self.layout,
            row as usize % CHUNK_ROWS,
            Slot::Exists,
            SlotValue::Exists(false),
            ts,
            horizon,
        );
    }

    pub fn install_prop(
        &self,
        row: u32,
        ts: Timestamp,
        horizon: Timestamp,
        key: PropKeyId,
        value: Option<Value>,
    ) {
        let chunk = self.chunk_for_write(row);
        let mut chunk = chunk.write();
        chunk.write(
            &self.layout,
            row as usize % CHUNK_ROWS,
            Slot::Prop(key),
            SlotValue::Prop(value),
            ts,
            horizon,
        );
    }

    pub fn install_labels(&self, row: u32, ts: Timestamp, horizon: Timestamp, labels: &[LabelId]) {
        let chunk = self.chunk_for_write(row);
        let mut chunk = chunk.write();
        let value =
            SlotValue::Labels((!labels.is_empty()).then(|| labels.to_vec().into_boxed_slice()));
        chunk.write(
            &self.layout,
            row as usize % CHUNK_ROWS,
            Slot::Labels,
            value,
            ts,
            horizon,
        );
    }

    /// Every value property `key` of `row` holds in a version still kept (in place or in the
    /// slot's version chain) — after `gc(horizon)`, every value a reader at or after `horizon`
    /// can see; before it, a superset. Empty when the row exists in no kept version (never
    /// created, or deleted before every kept version). Secondary indexes are built and pruned
    /// from this (see `index`).
    pub fn retained_values(&self, row: u32, key: PropKeyId) -> Vec<Value> {
        let Some(chunk) = self.chunk(row) else {
            return Vec::new();
        };
        let chunk = chunk.read();
        let r = row as usize % CHUNK_ROWS;
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
    }

    /// Drops every version no reader at or after `horizon` needs.
    pub fn gc(&self, horizon: Timestamp) {
        let chunks: Vec<_> = self.chunks.read().clone();
        for chunk in chunks {
            let mut chunk = chunk.write();
            chunk.chains.retain(|_, chain| {
                prune_chain(chain, horizon);
                chain.newest_ts > horizon
            });
            if chunk.created_at.iter().all(|&created| created <= horizon) {
                chunk.created_at = Vec::new();
            }
        }
    }

    /// Number of version-chain entries still held (for tests and statistics).
    pub fn version_count(&self) -> usize {
        self.chunks
            .read()
            .iter()
            .map(|c| {
                c.read()
                    .chains
                    .values()
                    .map(|ch| ch.older.len())
                    .sum::<usize>()
            })
            .sum()
    }
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
            t.install_create(row, 2, 0, &[], &[(2, Value::Float(f64::from(row)))]);
        }
        // Rows in both chunks change at ts 5; one has its property removed at ts 8.
        for &row in [3, CHUNK_ROWS as u32 + 4].iter() {
            t.install_prop(row, 5, 0, 2, Some(Value::Float(-1.0)));
        }
        t.install_prop(7, 8, 0, 2, None);
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
            t.prop_many(&asked, 2, ts, &mut |i, v| got.push((i, v)));
            let want: Vec<_> = asked
                .iter()
                .enumerate()
                .map(|(i, &row)| (i, t.prop(row, 2, ts)))
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
        );
        t.install_prop(row, 5, 0, 0, Some(Value::Int(41)));
        t.install_prop(row, 9, 0, 0, Some(Value::Int(42)));
        t.install_prop(row, 9, 0, 7, None);
        assert!(!t.exists(row, 1));
        assert_eq!(t.prop(row, 0, 3), Some(Value::Int(40)));
        assert_eq!(t.prop(row, 0, 6), Some(Value::Int(41)));
        assert_eq!(t.prop(row, 0, 9), Some(Value::Int(42)));
        assert_eq!(
            t.props(row, 8).len(),
            3,
            "dynamic prop 7 still visible at ts 8"
        );
        assert_eq!(
            t.props(row, 9),
            vec![(0, Value::Int(42)), (1, Value::string("a"))]
        );
        t.install_delete(row, 12, 0);
        assert!(t.exists(row, 11) && !t.exists(row, 12));
    }

    #[test]
    fn gc_keeps_what_readers_at_the_horizon_need() {
        let t = table();
        let row = t.reserve(u32::MAX).unwrap();
        t.install_create(row, 1, 0, &[], &[(0, Value::Int(1))]);
        for ts in 2..10 {
            t.install_prop(row, ts, 0, 0, Some(Value::Int(ts as i64)));
        }
        t.gc(5);
        assert_eq!(t.prop(row, 0, 5), Some(Value::Int(5)));
        assert_eq!(t.prop(row, 0, 7), Some(Value::Int(7)));
        t.gc(100);
        assert_eq!(t.version_count(), 0);
        assert_eq!(t.prop(row, 0, 100), Some(Value::Int(9)));
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
            t.install_create(row, ts, 0, &[], &[]);
        }
        t.install_delete(0, 4, 0);
        let rows = |ts| {
            let mut v = vec![];
            t.scan(ts, |r| v.push(r));
            v
        };
        assert_eq!(rows(2), vec![0, 1]);
        assert_eq!(rows(4), vec![1, 2]);
    }
}
