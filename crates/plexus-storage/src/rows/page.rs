//! A chunk's spill page: the payload `rowcache` writes for an evicted cold chunk (see PAGE
//! FORMAT in `rowcache`) — only the in-place state and `max_write_ts`, checked against the
//! table's layout when read back.

use super::typed::Undeclared;
use super::*;

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

/// A column of `CHUNK_ROWS` little-endian 64-bit words (what `Encoder::u64` wrote), taken as
/// one slice rather than word by word.
fn decode_words<T>(dec: &mut Decoder<'_>, of: impl Fn(u64) -> T) -> DecodeResult<Vec<T>> {
    let bytes = dec.bytes(CHUNK_ROWS * 8)?;
    Ok((bytes.chunks_exact(8))
        .map(|word| {
            of(u64::from_le_bytes(
                word.try_into().expect("chunks of 8 bytes"),
            ))
        })
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
    /// The payload of this chunk's spill page (see PAGE FORMAT in `rowcache`). Cold chunks
    /// only: chains and creation timestamps are not written.
    pub(super) fn encode(&self, layout: &Layout) -> Vec<u8> {
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
            encode_column(&mut enc, column);
        }
        enc.u8(if self.dynamic.is_empty() {
            ABSENT
        } else {
            PRESENT
        });
        if !self.dynamic.is_empty() {
            // (UNDECLARED COLUMNS) The keys most rows have, each as a column; the rest per row.
            let columns = self.dynamic_columns();
            enc.len(columns.len());
            for (key, column) in &columns {
                enc.u32(*key);
                encode_column(&mut enc, column);
            }
            let in_column = |key: &PropKeyId| columns.iter().any(|(k, _)| k == key);
            for props in &self.dynamic {
                let rest = props.iter().flatten().filter(|(key, _)| !in_column(key));
                match rest.clone().count() {
                    0 => enc.u8(ABSENT),
                    n => {
                        enc.u8(PRESENT);
                        enc.len(n);
                        for (key, value) in rest {
                            enc.u32(*key);
                            enc.value(value);
                        }
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
    pub(super) fn decode(layout: &Layout, payload: &[u8]) -> DecodeResult<Chunk> {
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
            let expected = match data_type {
                _ if layout.is_family(i) => KIND_FAMILY,
                DataType::Bool => KIND_BOOL,
                DataType::Int64 => KIND_INT64,
                DataType::Float64 => KIND_FLOAT64,
                _ => KIND_VALUES,
            };
            columns.push(decode_column(&mut dec, Some(expected))?);
        }
        let mut dynamic = Vec::new();
        if decode_marker(&mut dec)? {
            let keyed = (0..dec.len()?)
                .map(|_| Ok((dec.u32()?, decode_column(&mut dec, None)?)))
                .collect::<DecodeResult<Vec<_>>>()?;
            dynamic.reserve_exact(CHUNK_ROWS);
            for row in 0..CHUNK_ROWS {
                let mut props: Vec<(PropKeyId, Value)> = (keyed.iter())
                    .filter_map(|(key, column)| Some((*key, column.get(row, SINGLE)?)))
                    .collect();
                if decode_marker(&mut dec)? {
                    for _ in 0..dec.len()? {
                        props.push((dec.u32()?, dec.value()?));
                    }
                }
                dynamic.push((!props.is_empty()).then(|| props.into_boxed_slice()));
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
            existing_runs: OnceLock::new(),
            zones: OnceLock::new(),
        })
    }
}

/// Where each row's value of a `KIND_VALUES` column lies in a page: its tag's offset.
type ValueOffsets = Vec<u32>;

impl Chunk {
    /// Column `column`'s values for chunk rows `rows` (each of `CHUNK_ROWS`), appended to
    /// `values` and `valid`, read straight from the spill page `payload` of a chunk encoded by
    /// [`encode`](Self::encode) — without decoding the chunk (see EVICTION, "Typed reads skip
    /// loads"). `Ok(false)` when it cannot answer (a row that does not exist in the page, a
    /// value not of the vector's type: the caller loads the chunk and reads it as usual).
    pub(super) fn read_typed_column(
        layout: &Layout,
        payload: &[u8],
        column: usize,
        rows: impl Iterator<Item = usize> + Clone,
        values: &mut TypedValues,
        valid: &mut Vec<bool>,
    ) -> DecodeResult<bool> {
        let Some(mut dec) = page_columns(layout, payload, rows.clone())? else {
            return Ok(false);
        };
        if column >= layout.columns.len() {
            return Err(dec.error(format!("no column {column} in the table's layout")));
        }
        for _ in 0..column {
            skip_column(&mut dec)?;
        }
        let valid_bits = dec.bytes(CHUNK_ROWS / 8)?;
        let kind = dec.u8()?;
        let bit = |bits: &[u8], r: usize| bits[r / 8] & (1 << (r % 8)) != 0;
        let word = |data: &[u8], r: usize| {
            u64::from_le_bytes(data[r * 8..r * 8 + 8].try_into().expect("8 bytes"))
        };
        match (kind, values) {
            (KIND_BOOL, TypedValues::Bool(out)) => {
                let data = dec.bytes(CHUNK_ROWS / 8)?;
                out.extend(rows.clone().map(|r| bit(data, r)));
            }
            (KIND_INT64, TypedValues::Int64(out)) => {
                let data = dec.bytes(CHUNK_ROWS * 8)?;
                out.extend(rows.clone().map(|r| word(data, r) as i64));
            }
            (KIND_FLOAT64, TypedValues::Float64(out)) => {
                let data = dec.bytes(CHUNK_ROWS * 8)?;
                out.extend(rows.clone().map(|r| f64::from_bits(word(data, r))));
            }
            (KIND_VALUES, TypedValues::Utf8 { bytes, ends }) => {
                let mut at: ValueOffsets = Vec::with_capacity(CHUNK_ROWS);
                for _ in 0..CHUNK_ROWS {
                    at.push(dec.position() as u32);
                    dec.skip_value()?;
                }
                for r in rows.clone() {
                    // As `Column::extend_typed`: a row's bytes only where it has a value.
                    if bit(valid_bits, r) {
                        let from = at[r] as usize;
                        let mut cell = Decoder::new(&payload[from..], from as u64);
                        match cell.u8()? {
                            4 => bytes.extend_from_slice(cell.str()?.as_bytes()),
                            // Not a string: left to the chunk's own read.
                            _ => return Ok(false),
                        }
                    }
                    ends.push(bytes.len());
                }
            }
            _ => return Ok(false),
        }
        valid.extend(rows.map(|r| bit(valid_bits, r)));
        Ok(true)
    }
}

impl Chunk {
    /// Undeclared properties `keys` of chunk rows `rows` (each of `CHUNK_ROWS`, in ascending
    /// order), pushed to `outs` (one per key), read straight from the spill page `payload`
    /// as [`read_typed_column`](Self::read_typed_column) reads a column: a wanted key the
    /// page stores as a column (UNDECLARED COLUMNS) decoded as one, the others' per-row lists
    /// walked once — only when one of the wanted keys is among them — with the wanted keys of
    /// the wanted rows decoded and every other value skipped.
    /// `Ok(false)` when a row of `rows` does not exist in the page.
    pub(super) fn read_undeclared(
        layout: &Layout,
        payload: &[u8],
        rows: &[usize],
        keys: &[PropKeyId],
        outs: &mut [Undeclared],
    ) -> DecodeResult<bool> {
        debug_assert!(rows.is_sorted() && outs.len() == keys.len());
        let Some(mut dec) = page_columns(layout, payload, rows.iter().copied())? else {
            return Ok(false);
        };
        for _ in 0..layout.columns.len() {
            skip_column(&mut dec)?;
        }
        let any = decode_marker(&mut dec)?;
        // The wanted keys stored as columns (UNDECLARED COLUMNS), the others skipped.
        let mut columns: Vec<Option<Column>> = (0..keys.len()).map(|_| None).collect();
        if any {
            for _ in 0..dec.len()? {
                let key = dec.u32()?;
                match keys.iter().position(|k| *k == key) {
                    Some(i) => columns[i] = Some(decode_column(&mut dec, None)?),
                    None => skip_column(&mut dec)?,
                }
            }
        }
        // The per-row lists hold the other keys: walked only if one of them is wanted.
        let walk = any && columns.iter().any(Option::is_none);
        let mut found: Vec<Option<Value>> = vec![None; keys.len()];
        let mut wanted = rows.iter().peekable();
        for r in 0..CHUNK_ROWS {
            let Some(&&next) = wanted.peek() else {
                break;
            };
            let want = next == r;
            if walk && decode_marker(&mut dec)? {
                for _ in 0..dec.len()? {
                    let key = dec.u32()?;
                    match keys.iter().position(|k| *k == key).filter(|_| want) {
                        Some(i) => found[i] = Some(dec.value()?),
                        None => dec.skip_value()?,
                    }
                }
            }
            // A row asked for more than once gets its values each time.
            while wanted.next_if(|&&row| row == r).is_some() {
                for ((out, value), column) in outs.iter_mut().zip(&found).zip(&columns) {
                    match column {
                        Some(column) => push_from_column(out, column, r),
                        None => out.push(value.as_ref()),
                    }
                }
            }
            found.iter_mut().for_each(|value| *value = None);
            if outs.iter().all(Undeclared::is_refused) {
                break;
            }
        }
        Ok(true)
    }
}

/// A decoder of spill page `payload` past its header and labels, at its first column, after
/// checking the page has the layout's number of columns; `None` when a row of `rows` does
/// not exist in the page.
fn page_columns<'p>(
    layout: &Layout,
    payload: &'p [u8],
    mut rows: impl Iterator<Item = usize>,
) -> DecodeResult<Option<Decoder<'p>>> {
    let mut dec = Decoder::new(payload, 0);
    dec.u64()?; // max_write_ts: the caller checked it against the slot's copy.
    let exists = dec.bytes(CHUNK_ROWS / 8)?;
    if !rows.all(|r| exists[r / 8] & (1 << (r % 8)) != 0) {
        return Ok(None);
    }
    if decode_marker(&mut dec)? {
        for _ in 0..CHUNK_ROWS {
            if decode_marker(&mut dec)? {
                let n = dec.len()?;
                dec.bytes(n * 4)?;
            }
        }
    }
    let column_count = dec.len()?;
    if column_count != layout.columns.len() {
        return Err(dec.error(format!(
            "{column_count} columns, the table has {}",
            layout.columns.len()
        )));
    }
    Ok(Some(dec))
}

/// Moves `dec` past one column of a spill page (its validity, kind and values).
fn skip_column(dec: &mut Decoder<'_>) -> DecodeResult<()> {
    dec.bytes(CHUNK_ROWS / 8)?;
    match dec.u8()? {
        KIND_BOOL => {
            dec.bytes(CHUNK_ROWS / 8)?;
        }
        KIND_INT64 | KIND_FLOAT64 => {
            dec.bytes(CHUNK_ROWS * 8)?;
        }
        KIND_VALUES => (0..CHUNK_ROWS).try_for_each(|_| dec.skip_value())?,
        KIND_FAMILY => {
            for _ in 0..CHUNK_ROWS {
                if decode_marker(dec)? {
                    (0..dec.len()?).try_for_each(|_| dec.skip_value())?;
                }
            }
        }
        kind => return Err(dec.error(format!("unknown column kind {kind}"))),
    }
    Ok(())
}

/// A column at position 0 (how a dynamic column is read: it stands alone).
const SINGLE: ColumnRef = ColumnRef::Single(0);

/// Fewest rows of a chunk holding an undeclared key for the page to store the key as a
/// column (see UNDECLARED COLUMNS in [`Chunk::dynamic_columns`]).
const DYNAMIC_COLUMN_MIN_ROWS: usize = CHUNK_ROWS / 2;

/// Row `r` of an undeclared key's column pushed to `out`.
fn push_from_column(out: &mut Undeclared, column: &Column, r: usize) {
    if !column.valid[r] {
        return out.push(None);
    }
    match &column.data {
        ColumnData::Int64(v) => out.push(Some(&Value::Int(v[r]))),
        ColumnData::Float64(v) => out.push(Some(&Value::Float(v[r]))),
        ColumnData::Bool(v) => out.push(Some(&Value::Bool(v[r]))),
        ColumnData::Values(_) | ColumnData::Family(_) => {
            unreachable!("an undeclared key's column is BOOLEAN, INT64 or FLOAT64")
        }
    }
}

/// One column of a spill page: its validity, kind and values.
fn encode_column(enc: &mut Encoder, column: &Column) {
    encode_bits(enc, &column.valid);
    match &column.data {
        ColumnData::Bool(v) => {
            enc.u8(KIND_BOOL);
            encode_bits(enc, v);
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

/// A column written by [`encode_column`], of kind `expected` when given (a declared
/// column's, from the layout), else a BOOLEAN, INT64 or FLOAT64 one (an undeclared key's).
fn decode_column(dec: &mut Decoder<'_>, expected: Option<u8>) -> DecodeResult<Column> {
    let valid = decode_bits(dec)?;
    let kind = dec.u8()?;
    match expected {
        Some(expected) if kind != expected => {
            return Err(dec.error(format!("column kind {kind}, expected {expected}")));
        }
        None if !matches!(kind, KIND_BOOL | KIND_INT64 | KIND_FLOAT64) => {
            return Err(dec.error(format!("column kind {kind} for an undeclared key")));
        }
        _ => {}
    }
    let data = match kind {
        KIND_BOOL => ColumnData::Bool(decode_bits(dec)?),
        KIND_INT64 => ColumnData::Int64(Arc::new(decode_words(dec, |x| x as i64)?)),
        KIND_FLOAT64 => ColumnData::Float64(Arc::new(decode_words(dec, f64::from_bits)?)),
        KIND_VALUES => ColumnData::Values(
            (0..CHUNK_ROWS)
                .map(|_| dec.value())
                .collect::<DecodeResult<_>>()?,
        ),
        KIND_FAMILY => {
            let mut cells = Vec::with_capacity(CHUNK_ROWS);
            for _ in 0..CHUNK_ROWS {
                cells.push(match decode_marker(dec)? {
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
        kind => return Err(dec.error(format!("unknown column kind {kind}"))),
    };
    Ok(Column { data, valid })
}

impl Chunk {
    /// UNDECLARED COLUMNS: the undeclared keys at least [`DYNAMIC_COLUMN_MIN_ROWS`] of the
    /// chunk's rows hold, all with BOOLEAN, INT64 or FLOAT64 values of one type, each as a
    /// column of that type for its spill page, in key order. A typed read of such a key then
    /// takes its column from the page as a declared column's (the per-row lists would be
    /// walked row by row, every value before it skipped), and a walk for the other keys
    /// skips it in one step. The keys few rows hold stay in the per-row lists, where an
    /// absent row costs nothing, and so do strings and other values (as a column of values
    /// a read would make every row's value to take the few it wants: measured 15 % slower on
    /// a string filter over spilled rows than walking the lists).
    pub(super) fn dynamic_columns(&self) -> Vec<(PropKeyId, Column)> {
        let mut counts: HashMap<PropKeyId, (usize, Option<DataType>)> = HashMap::new();
        for (key, value) in self.dynamic.iter().flatten().flat_map(|props| props.iter()) {
            let data_type = match value {
                Value::Bool(_) => Some(DataType::Bool),
                Value::Int(_) => Some(DataType::Int64),
                Value::Float(_) => Some(DataType::Float64),
                _ => None,
            };
            let (n, seen) = counts.entry(*key).or_insert((0, data_type));
            *n += 1;
            if *seen != data_type {
                *seen = None;
            }
        }
        let mut keys: Vec<(PropKeyId, DataType)> = (counts.into_iter())
            .filter_map(|(key, (n, data_type))| {
                (n >= DYNAMIC_COLUMN_MIN_ROWS).then_some((key, data_type?))
            })
            .collect();
        keys.sort_unstable_by_key(|(key, _)| *key);
        keys.into_iter()
            .map(|(key, data_type)| {
                let mut column = Column::new(data_type, false);
                for (row, props) in self.dynamic.iter().enumerate() {
                    let value = props.iter().flatten().find(|(k, _)| *k == key);
                    column.set(row, SINGLE, value.map(|(_, v)| v.clone()));
                }
                (key, column)
            })
            .collect()
    }
}
