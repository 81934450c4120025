//! Typed bulk reads: one declared property of many rows as a vector of its type.
//!
//! WHAT
//! ====
//! [`RowTable::typed_prop_many`] reads property `key` of a list of rows at a timestamp into a
//! [`TypedProps`]: a `Vec<i64>` (`Vec<f64>`, `Vec<bool>`) with one value per row and a
//! validity flag per row (false: the row has no value for the key). It is what a query's
//! scan hands to its vectorised filters and kernels, which take Arrow arrays built on these
//! vectors without a copy — no `Value` is made per row, the cost `prop_many` pays.
//!
//! WHEN
//! ====
//! For a key declared on the table with type BOOLEAN, INT64 or FLOAT64 and stored in its
//! own column (not in a column family): those columns hold exactly the values the row store
//! would return, unboxed. A STRING column too when the caller asks (`strings`): its values
//! are copied into one byte buffer with an end offset per row ([`TypedValues::Utf8`]) — worth
//! it for a consumer that works on the bytes (a vectorised string predicate), not for one
//! that wants a `Value` per row back (it would allocate each string again), hence the
//! choice. A temporal column or a family answers `None` and the caller reads values one by
//! one as before.
//!
//! UNDECLARED
//! ==========
//! A key the table does not declare is kept per row (`Chunk::dynamic`), typed by nothing but
//! its values — yet in a graph loaded by `CREATE` most keys hold one type on every row. Such a
//! key is read typed too: the vector takes the type of the first value found (BOOLEAN,
//! INT64, FLOAT64; STRING only with `strings`), rows without the key are invalid, and the
//! read answers `None` — the caller's row-by-row path then answering — as soon as a value
//! of another type (an integer among floats, a list, a temporal) turns up, or when no row
//! has a value (no type to give). Same answers as above: a value is put in the vector only
//! where `prop` returns that very value. An evicted chunk's undeclared keys are read from
//! its spill page as declared columns are (EVICTION in the module essay), in one walk of the
//! page's rows — for a run of rows in ascending order (a list in any other order loads the
//! chunk). All of a read's undeclared keys are taken in the same walk of the rows: each
//! row's list is one allocation, a cache miss (prefetched a few rows ahead) paid once.
//!
//! ONE WALK
//! ========
//! A read of several keys cuts its rows into runs (consecutive rows of the list in one
//! chunk) once, and walks them once: each chunk is latched (or its page read) once for all
//! the declared keys, its rows checked for existence once. A run of consecutive rows — what
//! a scan's batches are made of — is copied from each column as one slice (values and
//! validity), not gathered row by row, and a list that is one stretch of consecutive rows is
//! cut at the chunk edges without a look at each row's chunk. Per row, what remains is the
//! copy.
//!
//! SCATTERED
//! =========
//! Rows are read run by run, a run being consecutive rows of the list in one chunk, under
//! that chunk's read latch. The nodes a hash join matched come in probe order, jumping
//! between the build side's chunks on almost every row: a latch per row, contended by every
//! worker. A list whose runs average under four rows (and of at least `MIN_SCATTERED_ROWS`)
//! is therefore read in row order — one run per chunk — and each value put back at the
//! place it was asked for; a row's value does not depend on the order it is read in.
//!
//! SHARED
//! ======
//! A scan's batch is one run of consecutive rows, and with batches cut at chunk edges (a
//! parallel scan's morsels are whole chunks) one chunk's run. Such a read — one run, of a
//! resident chunk seen whole — hands out an INT64 or FLOAT64 column without copying it:
//! [`TypedValues::SharedInt64`] holds the chunk column's `Arc` and the run's range, and the
//! query side wraps those bytes as an Arrow buffer. The chunk keeps its column shared:
//! an in-place write (`Column::set`) copies a column a reader still holds before changing
//! it (`Arc::make_mut`), so a shared run never changes under its reader, and a chunk
//! evicted meanwhile leaves the run to its reader. Copying the two filter columns of a 10 M
//! row scan was 18 % of its workers' time. A read of several runs, or of rows gathered one
//! by one, copies as before; a read that goes on to change its values owns them first
//! (`TypedValues::own`).
//!
//! SAME ANSWERS
//! ============
//! The result is, row for row, what [`RowTable::prop`] returns at `ts`: a chunk whose newest
//! write is not newer than `ts` (`ts >= max_write_ts`, see VERSIONS in the module essay) is
//! read straight from its column — its in-place values are the ones every such reader sees —
//! and any other chunk row by row through the version chains (`Chunk::read_prop`). A row that
//! does not exist at `ts` (deleted, not yet created, past the last chunk) makes the whole
//! read `None`: the caller's row-by-row path then reports that row the way it always has.

use super::*;

/// Values of one declared property, one per row read (see [`TypedProps`]). Equal when the
/// values are, shared or not.
#[derive(Debug, Clone)]
pub enum TypedValues {
    Bool(Vec<bool>),
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    /// Values `range` of a chunk's INT64 column, shared with the chunk instead of copied (see
    /// SHARED).
    SharedInt64(Arc<Vec<i64>>, Range<usize>),
    /// As `SharedInt64`, of a FLOAT64 column.
    SharedFloat64(Arc<Vec<f64>>, Range<usize>),
    /// Strings end to end in `bytes` (UTF-8): row `i`'s are `bytes[ends[i - 1]..ends[i]]`
    /// (from 0 for the first row); a row without a value takes no bytes.
    Utf8 {
        bytes: Vec<u8>,
        ends: Vec<usize>,
    },
}

/// A typed bulk read: `values[i]` is row `i`'s value where `valid[i]`; where the row has no
/// value for the key, `values[i]` is unspecified (a column's stale bytes, or 0 / false).
#[derive(Debug, Clone, PartialEq)]
pub struct TypedProps {
    pub values: TypedValues,
    pub valid: Vec<bool>,
}

impl RowTable {
    /// `read(payload)` of the page of evicted chunk `index` (its `state`, latched by the
    /// caller) when a reader at `ts` sees the chunk whole; `None` otherwise.
    fn page_of(
        &self,
        state: &ChunkState,
        index: usize,
        ts: Timestamp,
        read: impl FnOnce(&[u8]) -> DecodeResult<bool>,
    ) -> Result<Option<bool>> {
        debug_assert!(state.chunk.is_none());
        let (Some(page), Some(existing)) = (state.page, &state.existing) else {
            return Ok(None);
        };
        if ts < existing.max_write_ts {
            return Ok(None);
        }
        let payload = self.cache.read_page(page, index as u32)?;
        self.cache.note_page_read();
        match read(&payload) {
            Ok(answered) => Ok(Some(answered)),
            Err(e) => Err(self.cache.decode_error(page, e.offset, e.detail)),
        }
    }
}

/// Fewest rows read in row order when they are scattered (see SCATTERED).
const MIN_SCATTERED_ROWS: usize = 64;

/// Whether a list of `rows` rows cut in `runs` runs jumps between chunks so often (runs of
/// under four rows, on average) that reading it in row order pays for the sort (see
/// SCATTERED).
fn scattered(rows: usize, runs: usize) -> bool {
    rows >= MIN_SCATTERED_ROWS && runs * 4 > rows
}

/// One run of a typed read: the rows at positions `at` of its list, all in chunk `index`;
/// `slice`, their rows in the chunk when they are consecutive and ascending.
struct Run {
    index: usize,
    at: Range<usize>,
    slice: Option<Range<usize>>,
}

/// The runs of `rows`, in list order (see SCATTERED). A list of consecutive rows — what a
/// scan's batch is — is cut at the chunk edges without a look at each row's chunk.
fn runs(rows: &[u32]) -> Vec<Run> {
    let mut out = Vec::new();
    let mut at = 0;
    if rows
        .first()
        .is_some_and(|&first| ascending_by_one(rows, first))
    {
        while at < rows.len() {
            let row = rows[at] as usize;
            let start = row % CHUNK_ROWS;
            let len = (CHUNK_ROWS - start).min(rows.len() - at);
            out.push(Run {
                index: row / CHUNK_ROWS,
                at: at..at + len,
                slice: Some(start..start + len),
            });
            at += len;
        }
        return out;
    }
    for run in rows.chunk_by(|a, b| *a as usize / CHUNK_ROWS == *b as usize / CHUNK_ROWS) {
        out.push(Run {
            index: run[0] as usize / CHUNK_ROWS,
            at: at..at + run.len(),
            slice: consecutive(run),
        });
        at += run.len();
    }
    out
}

impl TypedValues {
    /// No values yet, room for `n`, of a typed column's type.
    fn with_capacity(data_type: DataType, n: usize) -> TypedValues {
        match data_type {
            DataType::Bool => TypedValues::Bool(Vec::with_capacity(n)),
            DataType::Int64 => TypedValues::Int64(Vec::with_capacity(n)),
            DataType::Float64 => TypedValues::Float64(Vec::with_capacity(n)),
            DataType::String => TypedValues::Utf8 {
                bytes: Vec::new(),
                ends: Vec::with_capacity(n),
            },
            other => unreachable!("typed_source answers only typed columns, not {other:?}"),
        }
    }
}

impl PartialEq for TypedValues {
    fn eq(&self, other: &TypedValues) -> bool {
        use TypedValues::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a == b,
            (Utf8 { bytes, ends }, Utf8 { bytes: b, ends: e }) => bytes == b && ends == e,
            _ => match (self.ints(), other.ints(), self.floats(), other.floats()) {
                (Some(a), Some(b), ..) => a == b,
                (.., Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }
}

impl TypedValues {
    /// INT64 values, shared or not.
    fn ints(&self) -> Option<&[i64]> {
        match self {
            TypedValues::Int64(v) => Some(v),
            TypedValues::SharedInt64(data, range) => Some(&data[range.clone()]),
            _ => None,
        }
    }

    /// FLOAT64 values, shared or not.
    fn floats(&self) -> Option<&[f64]> {
        match self {
            TypedValues::Float64(v) => Some(v),
            TypedValues::SharedFloat64(data, range) => Some(&data[range.clone()]),
            _ => None,
        }
    }

    /// Shared values as values of their own (the copy a shared read saved), for a read that
    /// goes on to change them.
    fn own(&mut self) {
        match self {
            TypedValues::SharedInt64(data, range) => {
                *self = TypedValues::Int64(data[range.clone()].to_vec())
            }
            TypedValues::SharedFloat64(data, range) => {
                *self = TypedValues::Float64(data[range.clone()].to_vec())
            }
            _ => {}
        }
    }
}

impl TypedProps {
    /// Row `at[i]` of these as row `i`, for every `i`.
    fn gather(mut self, at: &[usize]) -> TypedProps {
        self.values.own();
        let pick = |values: &[_]| at.iter().map(|&j| values[j]).collect();
        let values = match &self.values {
            TypedValues::Bool(v) => TypedValues::Bool(at.iter().map(|&j| v[j]).collect()),
            TypedValues::Int64(v) => TypedValues::Int64(at.iter().map(|&j| v[j]).collect()),
            TypedValues::Float64(v) => TypedValues::Float64(at.iter().map(|&j| v[j]).collect()),
            TypedValues::SharedInt64(..) | TypedValues::SharedFloat64(..) => {
                unreachable!("owned above")
            }
            TypedValues::Utf8 { bytes, ends } => {
                let mut out = Vec::with_capacity(bytes.len());
                let mut out_ends = Vec::with_capacity(at.len());
                for &j in at {
                    let start = if j == 0 { 0 } else { ends[j - 1] };
                    out.extend_from_slice(&bytes[start..ends[j]]);
                    out_ends.push(out.len());
                }
                TypedValues::Utf8 {
                    bytes: out,
                    ends: out_ends,
                }
            }
        };
        TypedProps {
            values,
            valid: pick(&self.valid),
        }
    }

    pub fn len(&self) -> usize {
        self.valid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }

    /// Appends `other` (of the same type); `false`, leaving `self` unchanged, if the types
    /// differ.
    pub fn append(&mut self, mut other: TypedProps) -> bool {
        self.values.own();
        other.values.own();
        match (&mut self.values, other.values) {
            (TypedValues::Bool(a), TypedValues::Bool(b)) => a.extend(b),
            (TypedValues::Int64(a), TypedValues::Int64(b)) => a.extend(b),
            (TypedValues::Float64(a), TypedValues::Float64(b)) => a.extend(b),
            (
                TypedValues::Utf8 { bytes, ends },
                TypedValues::Utf8 {
                    bytes: more,
                    ends: more_ends,
                },
            ) => {
                let base = bytes.len();
                bytes.extend(more);
                ends.extend(more_ends.into_iter().map(|end| base + end));
            }
            _ => return false,
        }
        self.valid.extend(other.valid);
        debug_assert_eq!(self.len(), self.values_len());
        true
    }

    fn values_len(&self) -> usize {
        match &self.values {
            TypedValues::Bool(v) => v.len(),
            TypedValues::Int64(v) => v.len(),
            TypedValues::Float64(v) => v.len(),
            TypedValues::SharedInt64(_, range) | TypedValues::SharedFloat64(_, range) => {
                range.len()
            }
            TypedValues::Utf8 { ends, .. } => ends.len(),
        }
    }
}

/// Where a typed read of a key finds its values.
enum Source {
    /// A declared column of its own, of this type (see WHEN).
    Column(DataType, usize),
    /// An undeclared key, kept per row (see UNDECLARED).
    Undeclared,
}

impl RowTable {
    /// Whether [`typed_prop_many`](Self::typed_prop_many) may answer for `key` here: a
    /// BOOLEAN, INT64 or FLOAT64 property declared in a column of its own, a STRING one with
    /// `strings` (see WHEN), or an undeclared key (whose values decide, see UNDECLARED).
    pub fn has_typed_column(&self, key: PropKeyId, strings: bool) -> bool {
        self.typed_source(key, strings).is_some()
    }

    fn typed_source(&self, key: PropKeyId, strings: bool) -> Option<Source> {
        match self.layout.declared.get(&key) {
            Some(&(
                t @ (DataType::Bool | DataType::Int64 | DataType::Float64),
                ColumnRef::Single(c),
            )) => Some(Source::Column(t, c)),
            Some(&(DataType::String, ColumnRef::Single(c))) if strings => {
                Some(Source::Column(DataType::String, c))
            }
            Some(_) => None,
            None => Some(Source::Undeclared),
        }
    }

    /// Property `key` of each of `rows` at `ts` as a typed vector (see the essay above):
    /// `None` when the key is not kept in a form a typed read answers (see WHEN, UNDECLARED)
    /// or a row does not exist at `ts`.
    pub fn typed_prop_many(
        &self,
        rows: &[u32],
        key: PropKeyId,
        ts: Timestamp,
        strings: bool,
    ) -> Result<Option<TypedProps>> {
        Ok(self
            .typed_props_many(rows, &[key], ts, strings)?
            .pop()
            .flatten())
    }

    /// [`typed_prop_many`](Self::typed_prop_many) of each of `keys`, in one walk of the rows
    /// for the undeclared ones (each row's undeclared properties are one allocation: reading
    /// them once for all keys touches its memory once).
    pub fn typed_props_many(
        &self,
        rows: &[u32],
        keys: &[PropKeyId],
        ts: Timestamp,
        strings: bool,
    ) -> Result<Vec<Option<TypedProps>>> {
        // (SCATTERED) In row order, then each value back at the place it was asked for.
        let mut cut = runs(rows);
        let order: Option<Vec<u64>> = scattered(rows.len(), cut.len()).then(|| {
            let mut order: Vec<u64> = (rows.iter().enumerate())
                .map(|(i, &row)| (u64::from(row) << 32) | i as u64)
                .collect();
            order.sort_unstable();
            order
        });
        let sorted: Option<Vec<u32>> =
            (order.as_ref()).map(|order| order.iter().map(|&o| (o >> 32) as u32).collect());
        if let Some(sorted) = &sorted {
            cut = runs(sorted);
        }
        let read = sorted.as_deref().unwrap_or(rows);
        let mut out = vec![None; keys.len()];
        let mut columns = Vec::new();
        let mut undeclared = Vec::new();
        for (i, &key) in keys.iter().enumerate() {
            match self.typed_source(key, strings) {
                Some(Source::Column(data_type, column)) => {
                    columns.push((i, key, data_type, column))
                }
                Some(Source::Undeclared) => undeclared.push(i),
                None => {}
            }
        }
        if !columns.is_empty() {
            let props = self.columns_props_many(read, &cut, &columns, ts)?;
            for (&(i, ..), props) in columns.iter().zip(props) {
                out[i] = props;
            }
        }
        if !undeclared.is_empty() {
            let asked: Vec<PropKeyId> = undeclared.iter().map(|&i| keys[i]).collect();
            let props = self.undeclared_props_many(read, &cut, &asked, ts, strings)?;
            for (i, props) in undeclared.into_iter().zip(props) {
                out[i] = props;
            }
        }
        let Some(order) = order else {
            return Ok(out);
        };
        let mut at = vec![0; rows.len()];
        for (j, &o) in order.iter().enumerate() {
            at[o as u32 as usize] = j;
        }
        Ok(out
            .into_iter()
            .map(|props| props.map(|props| props.gather(&at)))
            .collect())
    }

    /// Declared properties `columns` (each `(_, key, type, column)`) of each of `rows`, cut in
    /// `runs`, in one walk of the runs: each chunk latched once for all of them, a run of
    /// consecutive rows checked for existence once and copied as slices. The leading runs
    /// whose chunks are evicted and seen whole by a reader at `ts` are read from their
    /// pages, left evicted (EVICTION, "Typed reads skip loads"); from the first run whose
    /// chunk is resident or newer on, the chunks are loaded — a read that met resident
    /// chunks (a top-k's few unskipped ones, read again and again) keeps them resident
    /// instead of decoding their pages each time.
    fn columns_props_many(
        &self,
        rows: &[u32],
        runs: &[Run],
        columns: &[(usize, PropKeyId, DataType, usize)],
        ts: Timestamp,
    ) -> Result<Vec<Option<TypedProps>>> {
        let n = rows.len();
        let mut outs: Vec<Option<TypedProps>> = (columns.iter())
            .map(|&(_, _, data_type, _)| {
                Some(TypedProps {
                    values: TypedValues::with_capacity(data_type, n),
                    valid: Vec::with_capacity(n),
                })
            })
            .collect();
        let mut all_exist = true;
        let mut loaded_any = false;
        let mut paging = true;
        // (SHARED) A read of one run is handed its resident columns' values without a copy.
        let share = runs.len() == 1;
        for run in runs {
            if !all_exist || outs.iter().all(Option::is_none) {
                break;
            }
            let Some(slot) = self.chunks.get(run.index) else {
                all_exist = false;
                break;
            };
            let run_rows = &rows[run.at.clone()];
            let chunk_rows = run_rows.iter().map(|&r| r as usize % CHUNK_ROWS);
            let from_page = |payload: &[u8]| {
                for (out, &(_, _, _, column)) in outs.iter_mut().zip(columns) {
                    let Some(props) = out else { continue };
                    let (values, valid) = (&mut props.values, &mut props.valid);
                    let rows = chunk_rows.clone();
                    if !Chunk::read_typed_column(
                        &self.layout,
                        payload,
                        column,
                        rows,
                        values,
                        valid,
                    )? {
                        *out = None;
                    }
                }
                Ok(true)
            };
            let (chunk, loaded) =
                match self.resident_or_page(slot, run.index, ts, from_page, paging)? {
                    InPlace::Chunk(chunk) => (chunk, false),
                    InPlace::Page(_) => continue,
                    InPlace::Evicted => self.latch_read(slot, run.index)?,
                };
            paging = false;
            loaded_any |= loaded;
            if ts >= chunk.max_write_ts {
                // The in-place values are what a reader at `ts` sees (VERSIONS).
                all_exist = match &run.slice {
                    Some(slice) => all_set(&chunk.exists[slice.clone()]),
                    None => chunk_rows.clone().all(|r| chunk.exists[r]),
                };
                for (out, &(_, _, _, column)) in outs.iter_mut().zip(columns) {
                    let Some(props) = out.as_mut().filter(|_| all_exist) else {
                        continue;
                    };
                    let (values, valid) = (&mut props.values, &mut props.valid);
                    let slice = run.slice.clone();
                    let column = &chunk.columns[column];
                    if !column.extend_typed(run_rows, slice, share, values, valid) {
                        *out = None;
                    }
                }
                continue;
            }
            for r in chunk_rows {
                all_exist = matches!(
                    chunk.read(&self.layout, r, Slot::Exists, ts),
                    SlotValue::Exists(true)
                );
                if !all_exist {
                    break;
                }
                for (out, &(_, key, _, column)) in outs.iter_mut().zip(columns) {
                    let Some(props) = out else { continue };
                    let value = chunk.read_prop(Some(ColumnRef::Single(column)), key, r, ts);
                    if !push_value(&mut props.values, &mut props.valid, value) {
                        // Not of the declared type: leave it to the row-by-row read.
                        *out = None;
                    }
                }
            }
        }
        if loaded_any {
            // One batch may hold more than the budget until here (as `for_each_chunk_run`).
            self.relieve();
        }
        if !all_exist {
            return Ok(vec![None; columns.len()]);
        }
        for props in outs.iter().flatten() {
            debug_assert_eq!(props.len(), n);
            debug_assert_eq!(props.values_len(), n);
        }
        Ok(outs)
    }
}

impl RowTable {
    /// Undeclared properties `keys` of each of `rows`, in row order (see UNDECLARED).
    fn undeclared_props_many(
        &self,
        rows: &[u32],
        runs: &[Run],
        keys: &[PropKeyId],
        ts: Timestamp,
        strings: bool,
    ) -> Result<Vec<Option<TypedProps>>> {
        let mut outs: Vec<Undeclared> = (keys.iter())
            .map(|_| Undeclared {
                values: None,
                valid: Vec::with_capacity(rows.len()),
                strings,
                refused: false,
            })
            .collect();
        let mut all_exist = true;
        let mut loaded_any = false;
        for Run { index, at, .. } in runs {
            if !all_exist || outs.iter().all(Undeclared::is_refused) {
                // (No answer whatever the other rows hold.)
                break;
            }
            let (index, run) = (*index, &rows[at.clone()]);
            let Some(slot) = self.chunks.get(index) else {
                all_exist = false;
                break;
            };
            // A resident chunk is read in place; an evicted one the reader sees whole from
            // its page (rows in order), left evicted; any other is loaded.
            let (chunk, loaded) = match self.resident_or_page(
                slot,
                index,
                ts,
                |payload| {
                    let chunk_rows: Vec<usize> =
                        run.iter().map(|&r| r as usize % CHUNK_ROWS).collect();
                    Chunk::read_undeclared(&self.layout, payload, &chunk_rows, keys, &mut outs)
                },
                run.is_sorted(),
            )? {
                InPlace::Chunk(chunk) => (chunk, false),
                InPlace::Page(exist) => {
                    all_exist = exist;
                    continue;
                }
                InPlace::Evicted => self.latch_read(slot, index)?,
            };
            loaded_any |= loaded;
            // The rows' in-place values are what a reader at `ts` sees (VERSIONS).
            let in_place = ts >= chunk.max_write_ts;
            for (i, &row) in run.iter().enumerate() {
                let r = row as usize % CHUNK_ROWS;
                if let Some(ahead) = run.get(i + PREFETCH_ROWS_AHEAD) {
                    chunk.prefetch_dynamic(*ahead as usize % CHUNK_ROWS);
                }
                all_exist &= match in_place {
                    true => chunk.exists[r],
                    false => matches!(
                        chunk.read(&self.layout, r, Slot::Exists, ts),
                        SlotValue::Exists(true)
                    ),
                };
                if !all_exist {
                    break;
                }
                for (out, &key) in outs.iter_mut().zip(keys) {
                    match (out.refused, in_place) {
                        (true, _) => {}
                        (false, true) => out.push(chunk.dynamic_prop(r, key)),
                        (false, false) => out.push(chunk.read_prop(None, key, r, ts).as_ref()),
                    }
                }
                if outs.iter().all(Undeclared::is_refused) {
                    // (A string key not asked as one, say: refused at its first value.)
                    break;
                }
            }
        }
        if loaded_any {
            // One batch may hold more than the budget until here (as `for_each_chunk_run`).
            self.relieve();
        }
        Ok(outs
            .into_iter()
            .map(|out| match (all_exist, out.refused, out.values) {
                (true, false, Some(values)) => {
                    let props = TypedProps {
                        values,
                        valid: out.valid,
                    };
                    debug_assert_eq!(props.values_len(), rows.len());
                    Some(props)
                }
                _ => None,
            })
            .collect())
    }
}

/// What [`RowTable::resident_or_page`] found.
enum InPlace<'a> {
    /// The resident chunk, under its read latch.
    Chunk(MappedRwLockReadGuard<'a, Chunk>),
    /// The page was read: whether it answered.
    Page(bool),
    /// Evicted, and its page not readable at the timestamp: load it.
    Evicted,
}

impl RowTable {
    /// Chunk `index` (`slot`) under one read latch: resident, or — evicted, `paged` and
    /// its newest write not newer than `ts` — `read(payload)` of its spill page, the chunk
    /// left evicted (`page_of`).
    fn resident_or_page<'a>(
        &self,
        slot: &'a ChunkSlot,
        index: usize,
        ts: Timestamp,
        read: impl FnOnce(&[u8]) -> DecodeResult<bool>,
        paged: bool,
    ) -> Result<InPlace<'a>> {
        let state = slot.state.read();
        let state = match RwLockReadGuard::try_map(state, |s| s.chunk.as_deref()) {
            Ok(chunk) => {
                slot.touch();
                return Ok(InPlace::Chunk(chunk));
            }
            Err(state) => state,
        };
        if !paged {
            return Ok(InPlace::Evicted);
        }
        Ok(match self.page_of(&state, index, ts, read)? {
            Some(answered) => InPlace::Page(answered),
            None => InPlace::Evicted,
        })
    }
}

/// How far ahead of the row it reads an undeclared walk asks for a row's properties: each
/// row's are a heap allocation of their own, a cache miss the walk would otherwise wait for.
const PREFETCH_ROWS_AHEAD: usize = 16;

/// An undeclared key's vector being read: typed by its first value (see UNDECLARED).
pub(super) struct Undeclared {
    /// `None` until a row has a value.
    values: Option<TypedValues>,
    valid: Vec<bool>,
    strings: bool,
    /// A value the vector cannot hold exactly was found: no typed answer.
    refused: bool,
}

impl Undeclared {
    /// Appends one row's value, or marks the read refused for a value the vector cannot hold
    /// exactly.
    pub(super) fn push(&mut self, value: Option<&Value>) {
        if !self.refused && !self.append(value) {
            self.refused = true;
        }
    }

    /// Whether a value the vector cannot hold was found (the read answers `None`).
    pub(super) fn is_refused(&self) -> bool {
        self.refused
    }

    fn append(&mut self, value: Option<&Value>) -> bool {
        let value = value.filter(|v| !matches!(v, Value::Null));
        if self.values.is_none() {
            let Some(first) = value else {
                self.valid.push(false);
                return true;
            };
            // The rows before had no value: the type's zero (no bytes) for each.
            let n = self.valid.len();
            self.values = Some(match first {
                Value::Bool(_) => TypedValues::Bool(vec![false; n]),
                Value::Int(_) => TypedValues::Int64(vec![0; n]),
                Value::Float(_) => TypedValues::Float64(vec![0.0; n]),
                Value::String(_) if self.strings => TypedValues::Utf8 {
                    bytes: Vec::new(),
                    ends: vec![0; n],
                },
                _ => return false,
            });
        }
        let Some(values) = &mut self.values else {
            unreachable!("typed above")
        };
        let pushed = append(values, value);
        if pushed {
            self.valid.push(value.is_some());
        }
        pushed
    }
}

impl Column {
    /// Appends the values of the chunk's rows `run` (row numbers of the table, all in this
    /// chunk) to `values` and their validity to `valid`; `false` if a value is not of the
    /// vector's type (install checks declared types: only a bug would store one). `slice`:
    /// the run's chunk rows when they are consecutive (`consecutive(run)`).
    fn extend_typed(
        &self,
        run: &[u32],
        slice: Option<Range<usize>>,
        share: bool,
        values: &mut TypedValues,
        valid: &mut Vec<bool>,
    ) -> bool {
        let at = |r: &u32| *r as usize % CHUNK_ROWS;
        // A scan's rows come in consecutive runs: copied as slices, not gathered row by row
        // — or, the read's only run, shared (SHARED).
        if let Some(rows) = slice {
            let copied = match (&self.data, &mut *values) {
                (ColumnData::Int64(data), TypedValues::Int64(out)) if share => {
                    debug_assert!(out.is_empty());
                    *values = TypedValues::SharedInt64(Arc::clone(data), rows.clone());
                    true
                }
                (ColumnData::Float64(data), TypedValues::Float64(out)) if share => {
                    debug_assert!(out.is_empty());
                    *values = TypedValues::SharedFloat64(Arc::clone(data), rows.clone());
                    true
                }
                (ColumnData::Bool(data), TypedValues::Bool(out)) => {
                    out.extend_from_slice(&data[rows.clone()]);
                    true
                }
                (ColumnData::Int64(data), TypedValues::Int64(out)) => {
                    out.extend_from_slice(&data[rows.clone()]);
                    true
                }
                (ColumnData::Float64(data), TypedValues::Float64(out)) => {
                    out.extend_from_slice(&data[rows.clone()]);
                    true
                }
                _ => false,
            };
            if copied {
                valid.extend_from_slice(&self.valid[rows]);
                return true;
            }
        }
        match (&self.data, values) {
            (ColumnData::Bool(data), TypedValues::Bool(out)) => {
                out.extend(run.iter().map(|r| data[at(r)]))
            }
            (ColumnData::Int64(data), TypedValues::Int64(out)) => {
                out.extend(run.iter().map(|r| data[at(r)]))
            }
            (ColumnData::Float64(data), TypedValues::Float64(out)) => {
                out.extend(run.iter().map(|r| data[at(r)]))
            }
            (ColumnData::Values(data), TypedValues::Utf8 { bytes, ends }) => {
                for r in run {
                    match (&data[at(r)], self.valid[at(r)]) {
                        (Value::String(s), true) => bytes.extend_from_slice(s.as_bytes()),
                        (_, false) => {}
                        (other, true) => {
                            debug_assert!(false, "a STRING column holds {other:?}");
                            return false;
                        }
                    }
                    ends.push(bytes.len());
                }
            }
            _ => unreachable!("a typed single column's data has its declared type"),
        }
        valid.extend(run.iter().map(|r| self.valid[at(r)]));
        true
    }
}

/// The chunk rows of `run` (table rows, all in one chunk) when they are consecutive and
/// ascending: `run[0] % CHUNK_ROWS ..` of its length.
fn consecutive(run: &[u32]) -> Option<Range<usize>> {
    let first = *run.first()?;
    let start = first as usize % CHUNK_ROWS;
    ascending_by_one(run, first).then_some(start..start + run.len())
}

/// Whether `rows` are `first, first + 1, …` (one pass without an early exit: it vectorises).
fn ascending_by_one(rows: &[u32], first: u32) -> bool {
    (rows.iter().zip(first..)).fold(true, |all, (&r, expected)| all & (r == expected))
}

/// Whether every flag is set (no early exit: it vectorises).
fn all_set(flags: &[bool]) -> bool {
    flags.iter().fold(true, |all, &flag| all & flag)
}

/// Appends one value read through the version chains; `false` (nothing appended) for a value
/// not of the vector's type (install checks declared types, so only a bug would produce one).
fn push_value(values: &mut TypedValues, valid: &mut Vec<bool>, value: Option<Value>) -> bool {
    if !append(values, value.as_ref()) {
        debug_assert!(false, "a typed column holds {value:?}");
        return false;
    }
    valid.push(value.is_some());
    true
}

/// Appends one value (`None`: the row has none) to `values`, its validity left to the
/// caller; `false` (nothing appended) for a value not of the vector's type.
fn append(values: &mut TypedValues, value: Option<&Value>) -> bool {
    values.own();
    match (values, value) {
        (TypedValues::Bool(out), Some(Value::Bool(x))) => out.push(*x),
        (TypedValues::Int64(out), Some(Value::Int(x))) => out.push(*x),
        (TypedValues::Float64(out), Some(Value::Float(x))) => out.push(*x),
        (TypedValues::Utf8 { bytes, ends }, Some(Value::String(s))) => {
            bytes.extend_from_slice(s.as_bytes());
            ends.push(bytes.len());
        }
        (TypedValues::Utf8 { bytes, ends }, None) => ends.push(bytes.len()),
        (TypedValues::Bool(out), None) => out.push(false),
        (TypedValues::Int64(out), None) => out.push(0),
        (TypedValues::Float64(out), None) => out.push(0.0),
        (TypedValues::SharedInt64(..) | TypedValues::SharedFloat64(..), None) => {
            unreachable!("owned above")
        }
        (_, Some(_)) => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT: PropKeyId = 0;
    const FLOAT: PropKeyId = 1;
    const BOOL: PropKeyId = 2;
    const TEXT: PropKeyId = 3;
    const IN_FAMILY: PropKeyId = 4;
    const UNDECLARED: PropKeyId = 9;

    fn table() -> RowTable {
        let def = |key, data_type| PropertyDef { key, data_type };
        let props = [
            def(INT, DataType::Int64),
            def(FLOAT, DataType::Float64),
            def(BOOL, DataType::Bool),
            def(TEXT, DataType::String),
            def(IN_FAMILY, DataType::Int64),
            def(5, DataType::Int64),
        ];
        RowTable::new("t", &props, &[vec![4, 5]])
    }

    /// What `prop` answers for each row, as the typed read should.
    fn expected(t: &RowTable, rows: &[u32], key: PropKeyId, ts: Timestamp) -> TypedProps {
        let mut values = match key {
            INT => TypedValues::Int64(Vec::new()),
            FLOAT => TypedValues::Float64(Vec::new()),
            TEXT => TypedValues::Utf8 {
                bytes: Vec::new(),
                ends: Vec::new(),
            },
            _ => TypedValues::Bool(Vec::new()),
        };
        let mut valid = Vec::new();
        for &row in rows {
            assert!(push_value(
                &mut values,
                &mut valid,
                t.prop(row, key, ts).unwrap()
            ));
        }
        TypedProps { values, valid }
    }

    /// `props` with 0 / false where a row has no value (those values are unspecified).
    fn masked(mut props: TypedProps) -> TypedProps {
        props.values.own();
        let valid = &props.valid;
        match &mut props.values {
            TypedValues::Int64(v) => {
                (v.iter_mut().zip(valid)).for_each(|(x, ok)| *x *= i64::from(*ok))
            }
            TypedValues::Float64(v) => (v.iter_mut().zip(valid))
                .filter(|(_, ok)| !**ok)
                .for_each(|(x, _)| *x = 0.0),
            TypedValues::Bool(v) => (v.iter_mut().zip(valid)).for_each(|(x, ok)| *x &= *ok),
            // A row without a value takes no bytes: nothing unspecified.
            TypedValues::Utf8 { .. } => {}
            TypedValues::SharedInt64(..) | TypedValues::SharedFloat64(..) => unreachable!(),
        }
        props
    }

    #[test]
    fn typed_reads_agree_with_single_reads_at_every_timestamp() {
        let t = table();
        let rows: Vec<u32> = (0..(2 * CHUNK_ROWS as u32 + 10))
            .map(|_| t.reserve(u32::MAX).unwrap())
            .collect();
        for &row in &rows {
            let mut props = vec![(INT, Value::Int(i64::from(row) - 5))];
            if row % 3 != 0 {
                props.push((FLOAT, Value::Float(f64::from(row) / 4.0)));
            }
            props.push((BOOL, Value::Bool(row % 2 == 0)));
            if row % 4 != 1 {
                props.push((TEXT, Value::string(&"é".repeat(row as usize % 5))));
            }
            t.install_create(row, 2, 0, &[], &props).unwrap();
        }
        // Rows of the first two chunks change at ts 5; one loses its value at ts 8; the third
        // chunk is never written after its creation (read in place at every timestamp).
        for row in [3, 4, CHUNK_ROWS as u32 + 4] {
            t.install_prop(row, 5, 0, INT, Some(Value::Int(-1)))
                .unwrap();
            t.install_prop(row, 5, 0, FLOAT, Some(Value::Float(-1.5)))
                .unwrap();
            t.install_prop(row, 5, 0, BOOL, Some(Value::Bool(true)))
                .unwrap();
            t.install_prop(row, 5, 0, TEXT, Some(Value::string("changed")))
                .unwrap();
        }
        for key in [INT, FLOAT, BOOL, TEXT] {
            t.install_prop(7, 8, 0, key, None).unwrap();
        }
        // Out of order, repeated, across the three chunks.
        let asked = [
            CHUNK_ROWS as u32 + 4,
            3,
            4,
            7,
            0,
            2 * CHUNK_ROWS as u32 + 3,
            CHUNK_ROWS as u32 + 4,
            6,
        ];
        // Scattered over the three chunks (read in row order, see SCATTERED), repeats too.
        let scattered_rows: Vec<u32> = (0..300u32)
            .map(|i| rows[(i as usize * 2053) % rows.len()])
            .chain([3, 3, 7])
            .collect();
        let is_scattered = |rows: &[u32]| scattered(rows.len(), runs(rows).len());
        assert!(is_scattered(&scattered_rows) && !is_scattered(&asked));
        // Consecutive across a chunk edge (copied as slices), with a gap, with a repeat.
        let consecutive_rows: Vec<u32> = (2..CHUNK_ROWS as u32 + 9).collect();
        let gap: Vec<u32> = (0..40).filter(|&r| r != 20).collect();
        let repeat: Vec<u32> = vec![3, 3, 4, 5];
        for ts in [2, 4, 5, 7, 8, 9] {
            for key in [INT, FLOAT, BOOL, TEXT] {
                for asked in [
                    &asked[..],
                    &scattered_rows,
                    &consecutive_rows,
                    &gap,
                    &repeat,
                ] {
                    let got = t.typed_prop_many(asked, key, ts, true).unwrap().map(masked);
                    assert_eq!(got, Some(expected(&t, asked, key, ts)), "key {key} ts {ts}");
                }
            }
        }
    }

    #[test]
    fn typed_reads_refuse_what_they_cannot_answer_exactly() {
        let t = table();
        for _ in 0..3 {
            let row = t.reserve(u32::MAX).unwrap();
            let props = [
                (INT, Value::Int(1)),
                (TEXT, Value::string("a")),
                (IN_FAMILY, Value::Int(2)),
                (UNDECLARED, Value::Int(3)),
            ];
            t.install_create(row, 2, 0, &[], &props).unwrap();
        }
        t.install_delete(1, 6, 0).unwrap();
        // Not a typed column of its own (a STRING one only when asked for).
        for key in [TEXT, IN_FAMILY] {
            assert_eq!(
                t.typed_prop_many(&[0, 2], key, 9, false).unwrap(),
                None,
                "key {key}"
            );
            assert!(!t.has_typed_column(key, false), "key {key}");
        }
        assert_eq!(
            t.typed_prop_many(&[0, 2], IN_FAMILY, 9, true).unwrap(),
            None
        );
        assert!(!t.has_typed_column(IN_FAMILY, true));
        assert!(t.has_typed_column(INT, false) && t.has_typed_column(TEXT, true));
        // An undeclared key: typed by its values (see UNDECLARED).
        assert!(t.has_typed_column(UNDECLARED, false));
        let undeclared = t.typed_prop_many(&[0, 2], UNDECLARED, 9, false).unwrap();
        assert_eq!(undeclared.unwrap().values, TypedValues::Int64(vec![3, 3]));
        let text = t.typed_prop_many(&[0, 2], TEXT, 9, true).unwrap().unwrap();
        let two_as = TypedValues::Utf8 {
            bytes: b"aa".to_vec(),
            ends: vec![1, 2],
        };
        assert_eq!(text.values, two_as);
        // A row that does not exist at the timestamp: before creation, after deletion, a
        // reserved row never created, past the last chunk.
        assert_eq!(t.typed_prop_many(&[0, 2], INT, 1, false).unwrap(), None);
        assert_eq!(t.typed_prop_many(&[0, 1], INT, 6, false).unwrap(), None);
        assert!(t.typed_prop_many(&[0, 1], INT, 5, false).unwrap().is_some());
        let hole = t.reserve(u32::MAX).unwrap();
        assert_eq!(t.typed_prop_many(&[0, hole], INT, 9, false).unwrap(), None);
        assert_eq!(
            t.typed_prop_many(&[0, 10 * CHUNK_ROWS as u32], INT, 9, false)
                .unwrap(),
            None
        );
        // Nothing asked: an empty vector of the type.
        let empty = t.typed_prop_many(&[], INT, 9, false).unwrap().unwrap();
        assert!(empty.is_empty() && empty.values == TypedValues::Int64(Vec::new()));
    }

    #[test]
    fn undeclared_keys_read_typed_agree_with_single_reads_or_refuse() {
        const INTS: PropKeyId = 10;
        const FLOATS: PropKeyId = 11;
        const FLAGS: PropKeyId = 12;
        const WORDS: PropKeyId = 13;
        const MIXED: PropKeyId = 14;
        const NONE: PropKeyId = 15;
        let t = table();
        let rows: Vec<u32> = (0..(CHUNK_ROWS as u32 + 40))
            .map(|_| t.reserve(u32::MAX).unwrap())
            .collect();
        for &row in &rows {
            // The first rows have none of the keys: the vector's type comes from a later one.
            let mut props = vec![];
            if row >= 3 && row % 5 != 0 {
                props.push((INTS, Value::Int(i64::from(row) * 7 - 1_000)));
                props.push((FLOATS, Value::Float(f64::from(row) / -8.0)));
                props.push((FLAGS, Value::Bool(row % 3 == 0)));
                props.push((WORDS, Value::string(&"ü".repeat(row as usize % 4))));
            }
            // Integers on every row but one float near the end.
            let mixed = match row == CHUNK_ROWS as u32 + 30 {
                true => Value::Float(1.5),
                false => Value::Int(1),
            };
            props.push((MIXED, mixed));
            t.install_create(row, 2, 0, &[], &props).unwrap();
        }
        // Changes at ts 5 (one row gains, one loses, one changes type to a list), read
        // through the version chains before it.
        t.install_prop(0, 5, 0, INTS, Some(Value::Int(-9))).unwrap();
        t.install_prop(4, 5, 0, INTS, None).unwrap();
        t.install_prop(6, 5, 0, FLOATS, Some(Value::Float(-0.0)))
            .unwrap();
        t.install_prop(8, 5, 0, FLAGS, Some(Value::List(Arc::new([]))))
            .unwrap();
        let scattered_rows: Vec<u32> = (0..200u32)
            .map(|i| rows[(i as usize * 389) % rows.len()])
            .collect();
        let asked = [&rows[..], &rows[..20], &scattered_rows];
        for ts in [2, 4, 5, 9] {
            for key in [INTS, FLOATS, WORDS] {
                for asked in asked {
                    let got = t.typed_prop_many(asked, key, ts, true).unwrap().map(masked);
                    let mut values = match key {
                        INTS => TypedValues::Int64(Vec::new()),
                        FLOATS => TypedValues::Float64(Vec::new()),
                        _ => TypedValues::Utf8 {
                            bytes: Vec::new(),
                            ends: Vec::new(),
                        },
                    };
                    let mut valid = Vec::new();
                    for &row in asked {
                        let value = t.prop(row, key, ts).unwrap();
                        assert!(push_value(&mut values, &mut valid, value));
                    }
                    let want = TypedProps { values, valid };
                    assert_eq!(got, Some(want), "key {key} ts {ts}");
                }
            }
            // Strings only when asked for.
            assert_eq!(t.typed_prop_many(&rows, WORDS, ts, false).unwrap(), None);
        }
        // The flags: booleans until the list installed at ts 5.
        let flags = t.typed_prop_many(&rows, FLAGS, 4, false).unwrap().unwrap();
        let has = |&row: &u32| t.prop(row, FLAGS, 4).unwrap().is_some();
        assert_eq!(flags.valid, rows.iter().map(has).collect::<Vec<_>>());
        assert_eq!(t.typed_prop_many(&rows, FLAGS, 5, false).unwrap(), None);
        assert!(
            t.typed_prop_many(&rows[..8], FLAGS, 5, false)
                .unwrap()
                .is_some()
        );
        // A float among integers, a key no row has, a row deleted: left to single reads.
        assert_eq!(t.typed_prop_many(&rows, MIXED, 9, false).unwrap(), None);
        assert!(
            t.typed_prop_many(&rows[..100], MIXED, 9, false)
                .unwrap()
                .is_some()
        );
        assert_eq!(t.typed_prop_many(&rows, NONE, 9, false).unwrap(), None);
        // Many keys in one walk (a declared one among them): each as read alone.
        let keys = [INTS, MIXED, INT, FLOATS, NONE, WORDS, FLAGS];
        for ts in [4, 9] {
            for asked in asked {
                let many = t.typed_props_many(asked, &keys, ts, true).unwrap();
                let alone = keys.map(|key| t.typed_prop_many(asked, key, ts, true).unwrap());
                assert_eq!(many, alone, "ts {ts}");
            }
        }
        // Every key refused (strings not asked for, a float among integers): none, and the
        // walk stops at the refusal.
        let refused = t
            .typed_props_many(&rows, &[WORDS, MIXED], 9, false)
            .unwrap();
        assert!(refused.iter().all(Option::is_none));
        t.install_delete(10, 6, 0).unwrap();
        let none = t.typed_props_many(&rows, &keys, 9, false).unwrap();
        assert!(none.iter().all(Option::is_none));
        assert_eq!(t.typed_prop_many(&rows, INTS, 9, false).unwrap(), None);
        assert!(t.typed_prop_many(&rows, INTS, 5, false).unwrap().is_some());
    }

    #[test]
    fn typed_reads_append_only_their_own_type() {
        let ints = |v: Vec<i64>| TypedProps {
            valid: vec![true; v.len()],
            values: TypedValues::Int64(v),
        };
        let mut a = ints(vec![1, 2]);
        assert!(a.append(ints(vec![3])));
        assert_eq!(a, ints(vec![1, 2, 3]));
        let floats = TypedProps {
            values: TypedValues::Float64(vec![1.0]),
            valid: vec![false],
        };
        assert!(!a.append(floats));
        assert_eq!(a.len(), 3);
        // Strings: the appended ends are moved past the bytes already held.
        let text = |bytes: &[u8], ends: Vec<usize>, valid: Vec<bool>| TypedProps {
            values: TypedValues::Utf8 {
                bytes: bytes.to_vec(),
                ends,
            },
            valid,
        };
        let mut s = text(b"abc", vec![1, 1, 3], vec![true, false, true]);
        assert!(!s.append(ints(vec![4])));
        assert!(s.append(text("dé".as_bytes(), vec![0, 3], vec![true, true])));
        let joined = text(
            "abcdé".as_bytes(),
            vec![1, 1, 3, 3, 6],
            vec![true, false, true, true, true],
        );
        assert_eq!(s, joined);
    }

    /// SHARED: a read of one run of a resident chunk hands out its INT64 and FLOAT64 columns
    /// without a copy, and a later write to the chunk does not change what it handed out.
    #[test]
    fn a_shared_run_does_not_change_under_its_reader() {
        let t = table();
        for row in 0..CHUNK_ROWS as u32 + 10 {
            assert_eq!(t.reserve(u32::MAX).unwrap(), row);
            let props = [
                (INT, Value::Int(i64::from(row))),
                (FLOAT, Value::Float(f64::from(row) / 2.0)),
            ];
            t.install_create(row, 2, 0, &[], &props).unwrap();
        }
        let chunk: Vec<u32> = (0..CHUNK_ROWS as u32).collect();
        let read = |rows: &[u32], ts| t.typed_props_many(rows, &[INT, FLOAT], ts, false).unwrap();
        let before = read(&chunk[..], 3);
        let [Some(ints), Some(floats)] = &before[..] else {
            panic!("both keys read typed: {before:?}");
        };
        assert!(matches!(&ints.values, TypedValues::SharedInt64(_, r) if *r == (0..CHUNK_ROWS)));
        assert!(matches!(&floats.values, TypedValues::SharedFloat64(..)));
        let expected_before = [expected(&t, &chunk, INT, 3), expected(&t, &chunk, FLOAT, 3)];
        // Part of a chunk is shared too (the same column); rows in two chunks are copied.
        let part = read(&chunk[5..9], 3);
        let (TypedValues::SharedInt64(all, _), Some(TypedValues::SharedInt64(data, range))) =
            (&ints.values, part[0].as_ref().map(|p| &p.values))
        else {
            panic!("shared: {part:?}");
        };
        assert!(Arc::ptr_eq(all, data) && *range == (5..9));
        let across: Vec<u32> = (CHUNK_ROWS as u32 - 2..CHUNK_ROWS as u32 + 2).collect();
        assert!(
            matches!(&read(&across, 3)[0], Some(p) if matches!(p.values, TypedValues::Int64(_)))
        );

        t.install_prop(5, 6, 0, INT, Some(Value::Int(-1))).unwrap();
        t.install_prop(5, 6, 0, FLOAT, None).unwrap();
        // What was handed out is unchanged; a reader at 3 still sees it (through the version
        // chains now), one at 7 the write.
        for (props, expected) in before.into_iter().zip(&expected_before) {
            assert_eq!(&masked(props.unwrap()), expected);
        }
        let old = read(&chunk[..], 3);
        for (props, expected) in old.into_iter().zip(&expected_before) {
            assert_eq!(&masked(props.unwrap()), expected);
        }
        let new = read(&chunk[..], 7);
        let ints = masked(new[0].clone().unwrap());
        assert_eq!(ints, expected(&t, &chunk, INT, 7));
        assert!(matches!(&ints.values, TypedValues::Int64(v) if v[5] == -1 && v[4] == 4));
        assert!(!new[1].as_ref().unwrap().valid[5]);
    }
}
