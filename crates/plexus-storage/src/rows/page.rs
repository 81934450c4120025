//! A chunk's spill page: the payload `rowcache` writes for an evicted cold chunk (see PAGE
//! FORMAT in `rowcache`) — only the in-place state and `max_write_ts`, checked against the
//! table's layout when read back.

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
