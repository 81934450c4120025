//! Chunk internals: reading and writing a chunk's columns in place, its version chains (see
//! VERSIONS in the module documentation), creation timestamps and endpoints, garbage
//! collection below the horizon, and the chunk's size estimate for the row cache.

use super::*;
impl Column {
    pub(super) fn new(data_type: DataType, is_family: bool) -> Self {
        let data = match data_type {
            _ if is_family => ColumnData::Family(vec![None; CHUNK_ROWS]),
            DataType::Bool => ColumnData::Bool(vec![false; CHUNK_ROWS]),
            DataType::Int64 => ColumnData::Int64(Arc::new(vec![0; CHUNK_ROWS])),
            DataType::Float64 => ColumnData::Float64(Arc::new(vec![0.0; CHUNK_ROWS])),
            _ => ColumnData::Values(vec![Value::Null; CHUNK_ROWS]),
        };
        Self {
            data,
            valid: vec![false; CHUNK_ROWS],
        }
    }

    pub(super) fn get(&self, row: usize, at: ColumnRef) -> Option<Value> {
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

    pub(super) fn set(&mut self, row: usize, at: ColumnRef, value: Option<Value>) {
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
            (ColumnData::Int64(v), Value::Int(x)) => Arc::make_mut(v)[row] = x,
            (ColumnData::Float64(v), Value::Float(x)) => Arc::make_mut(v)[row] = x,
            (ColumnData::Values(v), x) => v[row] = x,
            _ => panic!("value type was checked before install"),
        }
    }
}

impl Chunk {
    pub(super) fn new(layout: &Layout) -> Self {
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
            existing_runs: OnceLock::new(),
            zones: OnceLock::new(),
        }
    }

    /// When row `row` was created, if after the GC horizon (0: before it).
    pub(super) fn created(&self, row: usize) -> Timestamp {
        match self.created_suffix {
            Some((first, ts)) if row >= first as usize => ts,
            Some(_) => 0,
            None => self.created_at.get(row).copied().unwrap_or(0),
        }
    }

    /// Records that row `row` was created at `ts`, after the GC horizon. Call before
    /// raising `max_write_ts` to `ts`.
    pub(super) fn note_created(&mut self, row: usize, ts: Timestamp) {
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
    pub(super) fn endpoints_of(&self, row: usize) -> Option<(u32, u32)> {
        self.endpoints
            .get(row)
            .copied()
            .filter(|&ends| ends != NO_ENDPOINTS)
    }

    /// Records the endpoints of edge row `row` at its creation; they never change after.
    pub(super) fn set_endpoints(&mut self, row: usize, ends: (u32, u32)) {
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
    pub(super) fn prop_in_place(
        &self,
        at: Option<ColumnRef>,
        key: PropKeyId,
        row: usize,
    ) -> Option<Value> {
        match at {
            Some(at) => self.columns[column_of(at)].get(row, at),
            None => self.dynamic_prop(row, key).cloned(),
        }
    }

    /// Asks the CPU to bring `row`'s undeclared properties (one allocation per row) into
    /// the cache, for a walk that reads them a few rows later.
    pub(super) fn prefetch_dynamic(&self, row: usize) {
        if let Some(Some(props)) = self.dynamic.get(row) {
            prefetch(props.as_ptr());
        }
    }

    /// Undeclared property `key` of `row` as stored in place (kept per row, see `Layout`).
    pub(super) fn dynamic_prop(&self, row: usize, key: PropKeyId) -> Option<&Value> {
        let props = self.dynamic.get(row)?.as_ref()?;
        props.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub(super) fn write_in_place(&mut self, layout: &Layout, row: usize, value: (Slot, SlotValue)) {
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

    pub(super) fn read(&self, layout: &Layout, row: usize, slot: Slot, ts: Timestamp) -> SlotValue {
        self.older_value(row, slot, ts)
            .unwrap_or_else(|| self.read_in_place(layout, row, slot))
    }

    /// Property `key` (declared at `at`, see [`Layout::locate`]) of `row` at `ts`: what
    /// `read` returns for `Slot::Prop(key)`, without looking the key up in the layout.
    pub(super) fn read_prop(
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
    pub(super) fn write(
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

impl Chunk {
    /// True when no reader needs anything but the in-place values: no version chains and no
    /// creation younger than the GC horizon (see INVARIANTS). Only cold chunks are evicted,
    /// so a spill page holds exactly the in-place state and `max_write_ts`.
    pub(super) fn is_cold(&self) -> bool {
        self.chains.is_empty() && self.created_at.is_empty() && self.created_suffix.is_none()
    }

    /// Drops versions no reader at or after `horizon` needs; true if anything changed.
    pub(super) fn gc(&mut self, horizon: Timestamp) -> bool {
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
    pub(super) fn size_bytes(&self) -> u64 {
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
}

fn column_of(at: ColumnRef) -> usize {
    match at {
        ColumnRef::Single(c) | ColumnRef::Family { column: c, .. } => c,
    }
}

pub(super) fn absent(slot: Slot) -> SlotValue {
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

/// A hint to load the cache line at `p`; nothing on targets without one.
#[inline]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing into the program and never faults,
    // whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
