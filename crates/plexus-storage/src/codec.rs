//! Little-endian binary encoding for WAL records, checkpoints and the manifest.
//!
//! Integers are fixed width; strings and lists are length-prefixed (u32). The decoder never
//! panics on bad input: every read checks the remaining length and returns a
//! [`DecodeError`] with the offset, which callers turn into `Error::Corruption` naming the file.

use plexus_types::{TemporalValue, Value, VertexId};
use std::sync::Arc;

/// Containers decoded from disk are bounded by this many elements, so a corrupt length field
/// cannot make the decoder allocate without bound.
pub const MAX_DECODED_ELEMENTS: usize = 1 << 28;
/// Nesting bound for lists and maps inside values.
pub const MAX_VALUE_DEPTH: usize = 64;

#[derive(Debug)]
pub struct DecodeError {
    pub offset: u64,
    pub detail: String,
}

pub type DecodeResult<T> = Result<T, DecodeError>;

#[derive(Default)]
pub struct Encoder {
    pub buf: Vec<u8>,
}

impl Encoder {
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn len(&mut self, n: usize) {
        assert!(
            n <= MAX_DECODED_ELEMENTS,
            "container too large to encode: {n}"
        );
        self.u32(n as u32);
    }
    pub fn str(&mut self, s: &str) {
        self.len(s.len());
        self.buf.extend_from_slice(s.as_bytes());
    }
    pub fn vertex(&mut self, v: VertexId) {
        self.u32(v.table);
        self.u32(v.offset);
    }
    pub fn u32s(&mut self, items: &[u32]) {
        self.len(items.len());
        for &item in items {
            self.u32(item);
        }
    }

    pub fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.u8(0),
            Value::Bool(b) => {
                self.u8(1);
                self.u8(*b as u8);
            }
            Value::Int(i) => {
                self.u8(2);
                self.u64(*i as u64);
            }
            Value::Float(x) => {
                self.u8(3);
                self.u64(x.to_bits());
            }
            Value::String(s) => {
                self.u8(4);
                self.str(s);
            }
            Value::List(items) => {
                self.u8(5);
                self.len(items.len());
                items.iter().for_each(|item| self.value(item));
            }
            Value::Map(entries) => {
                self.u8(6);
                self.len(entries.len());
                for (k, v) in entries.iter() {
                    self.str(k);
                    self.value(v);
                }
            }
            Value::Temporal(t) => {
                self.u8(7);
                self.temporal(t);
            }
        }
    }

    /// Tag 7's body: a kind byte, then the kind's fields (i64 as u64, offsets as u32).
    fn temporal(&mut self, t: &TemporalValue) {
        let i = |e: &mut Self, v: i64| e.u64(v as u64);
        match t {
            TemporalValue::Date { days } => {
                self.u8(0);
                i(self, *days);
            }
            TemporalValue::LocalTime { nanos } => {
                self.u8(1);
                i(self, *nanos);
            }
            TemporalValue::Time {
                nanos,
                offset_seconds,
            } => {
                self.u8(2);
                i(self, *nanos);
                self.u32(*offset_seconds as u32);
            }
            TemporalValue::LocalDateTime { days, nanos } => {
                self.u8(3);
                i(self, *days);
                i(self, *nanos);
            }
            TemporalValue::DateTime {
                days,
                nanos,
                offset_seconds,
                zone,
            } => {
                self.u8(4);
                i(self, *days);
                i(self, *nanos);
                self.u32(*offset_seconds as u32);
                match zone {
                    Some(z) => {
                        self.u8(1);
                        self.str(z);
                    }
                    None => self.u8(0),
                }
            }
            TemporalValue::Duration {
                months,
                days,
                seconds,
                nanos,
            } => {
                self.u8(5);
                i(self, *months);
                i(self, *days);
                i(self, *seconds);
                i(self, *nanos);
            }
        }
    }
}

pub struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of `data[0]` in the file, for error messages.
    base_offset: u64,
}

impl<'a> Decoder<'a> {
    pub fn new(data: &'a [u8], base_offset: u64) -> Self {
        Self {
            data,
            pos: 0,
            base_offset,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn error(&self, detail: impl Into<String>) -> DecodeError {
        DecodeError {
            offset: self.base_offset + self.pos as u64,
            detail: detail.into(),
        }
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn bytes(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        if self.data.len() - self.pos < n {
            return Err(self.short(n));
        }
        let slice = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    /// The error of a read of `n` bytes past the end (out of line: decoding loops stay small).
    #[cold]
    #[inline(never)]
    fn short(&self, n: usize) -> DecodeError {
        self.error(format!(
            "unexpected end of data: need {n} bytes, {} left",
            self.data.len() - self.pos
        ))
    }

    pub fn u8(&mut self) -> DecodeResult<u8> {
        Ok(self.bytes(1)?[0])
    }
    pub fn u32(&mut self) -> DecodeResult<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> DecodeResult<u64> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    pub fn len(&mut self) -> DecodeResult<usize> {
        let n = self.u32()? as usize;
        if n > MAX_DECODED_ELEMENTS || n > self.data.len() - self.pos {
            // Every element takes at least one byte, so a longer count is corrupt.
            return Err(self.error(format!("implausible element count {n}")));
        }
        Ok(n)
    }
    pub fn str(&mut self) -> DecodeResult<&'a str> {
        let n = self.len()?;
        let bytes = self.bytes(n)?;
        std::str::from_utf8(bytes).map_err(|_| self.error("string is not valid UTF-8"))
    }
    pub fn vertex(&mut self) -> DecodeResult<VertexId> {
        Ok(VertexId::new(self.u32()?, self.u32()?))
    }
    pub fn u32s(&mut self) -> DecodeResult<Vec<u32>> {
        let n = self.len()?;
        (0..n).map(|_| self.u32()).collect()
    }

    pub fn value(&mut self) -> DecodeResult<Value> {
        self.value_at_depth(0)
    }

    fn temporal(&mut self) -> DecodeResult<TemporalValue> {
        let kind = self.u8()?;
        let i = |d: &mut Self| -> DecodeResult<i64> { Ok(d.u64()? as i64) };
        Ok(match kind {
            0 => TemporalValue::Date { days: i(self)? },
            1 => TemporalValue::LocalTime { nanos: i(self)? },
            2 => TemporalValue::Time {
                nanos: i(self)?,
                offset_seconds: self.u32()? as i32,
            },
            3 => TemporalValue::LocalDateTime {
                days: i(self)?,
                nanos: i(self)?,
            },
            4 => TemporalValue::DateTime {
                days: i(self)?,
                nanos: i(self)?,
                offset_seconds: self.u32()? as i32,
                zone: match self.u8()? {
                    0 => None,
                    _ => Some(Arc::from(self.str()?)),
                },
            },
            5 => TemporalValue::Duration {
                months: i(self)?,
                days: i(self)?,
                seconds: i(self)?,
                nanos: i(self)?,
            },
            other => return Err(self.error(format!("unknown temporal kind {other}"))),
        })
    }

    /// Moves past a string by its length (its bytes are not checked as UTF-8: nothing is
    /// made of them).
    fn skip_str(&mut self) -> DecodeResult<()> {
        let n = self.len()?;
        self.bytes(n).map(|_| ())
    }

    /// Moves past one value (what [`value`](Self::value) would decode), making none: a
    /// string or a list is skipped by its length, not allocated.
    pub fn skip_value(&mut self) -> DecodeResult<()> {
        self.skip_value_at_depth(0)
    }

    fn skip_value_at_depth(&mut self, depth: usize) -> DecodeResult<()> {
        if depth > MAX_VALUE_DEPTH {
            return Err(self.error("value nesting too deep"));
        }
        match self.u8()? {
            0 => {}
            1 => {
                self.u8()?;
            }
            2 | 3 => {
                self.bytes(8)?;
            }
            4 => self.skip_str()?,
            5 => {
                for _ in 0..self.len()? {
                    self.skip_value_at_depth(depth + 1)?;
                }
            }
            6 => {
                for _ in 0..self.len()? {
                    self.skip_str()?;
                    self.skip_value_at_depth(depth + 1)?;
                }
            }
            7 => {
                self.temporal()?;
            }
            tag => return Err(self.error(format!("unknown value tag {tag}"))),
        }
        Ok(())
    }

    fn value_at_depth(&mut self, depth: usize) -> DecodeResult<Value> {
        if depth > MAX_VALUE_DEPTH {
            return Err(self.error("value nesting too deep"));
        }
        Ok(match self.u8()? {
            0 => Value::Null,
            1 => Value::Bool(self.u8()? != 0),
            2 => Value::Int(self.u64()? as i64),
            3 => Value::Float(f64::from_bits(self.u64()?)),
            4 => Value::string(self.str()?),
            5 => {
                let n = self.len()?;
                let items: DecodeResult<Vec<Value>> =
                    (0..n).map(|_| self.value_at_depth(depth + 1)).collect();
                Value::List(Arc::from(items?))
            }
            6 => {
                let n = self.len()?;
                let mut entries = Vec::with_capacity(n);
                for _ in 0..n {
                    let key: Arc<str> = Arc::from(self.str()?);
                    entries.push((key, self.value_at_depth(depth + 1)?));
                }
                Value::Map(Arc::from(entries))
            }
            7 => Value::Temporal(self.temporal()?),
            tag => return Err(self.error(format!("unknown value tag {tag}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let map = Value::Map(Arc::from(vec![(Arc::from("k"), Value::Float(1.5))]));
        let value = Value::List(Arc::from(vec![
            Value::Int(-3),
            Value::string("é"),
            map,
            Value::Null,
        ]));
        let mut enc = Encoder::default();
        enc.value(&value);
        let mut dec = Decoder::new(&enc.buf, 0);
        assert_eq!(dec.value().unwrap(), value);
        assert!(dec.is_empty());
    }

    #[test]
    fn temporal_values_round_trip() {
        let values = [
            TemporalValue::Date { days: -719_162 },
            TemporalValue::Time {
                nanos: 1,
                offset_seconds: -3600,
            },
            TemporalValue::DateTime {
                days: 16_637,
                nanos: 78_032_142_000_000,
                offset_seconds: 7200,
                zone: Some(Arc::from("Europe/Stockholm")),
            },
            TemporalValue::Duration {
                months: -14,
                days: 3,
                seconds: -70,
                nanos: 999_999_999,
            },
        ];
        for t in values {
            let value = Value::Temporal(t);
            let mut enc = Encoder::default();
            enc.value(&value);
            let mut dec = Decoder::new(&enc.buf, 0);
            assert_eq!(dec.value().unwrap(), value);
            assert!(dec.is_empty());
        }
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let mut enc = Encoder::default();
        enc.value(&Value::string("hello"));
        for cut in 0..enc.buf.len() {
            assert!(Decoder::new(&enc.buf[..cut], 0).value().is_err());
        }
    }
}
