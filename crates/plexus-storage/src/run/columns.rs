//! Property columns of a run: the kind of a column's 8-byte values, a column being written
//! (`ColumnData`), and a column's values as read (`ColumnSlice`).

use super::*;
/// How a property column's 8-byte values are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    Int64 = 1,
    Float64 = 2,
}

impl ColumnKind {
    pub(super) fn from_tag(tag: u32) -> Option<ColumnKind> {
        match tag {
            1 => Some(ColumnKind::Int64),
            2 => Some(ColumnKind::Float64),
            _ => None,
        }
    }

    /// The 8 bytes stored for `value`, if it has this kind (an integer column holds only
    /// integers, a float column only floats).
    pub fn encode(self, value: &Value) -> Option<u64> {
        match (self, value) {
            (ColumnKind::Int64, Value::Int(i)) => Some(*i as u64),
            (ColumnKind::Float64, Value::Float(f)) => Some(f.to_bits()),
            _ => None,
        }
    }

    fn to_f64(self, bits: u64) -> f64 {
        match self {
            ColumnKind::Int64 => bits as i64 as f64,
            ColumnKind::Float64 => f64::from_bits(bits),
        }
    }

    fn decode(self, bits: u64) -> Value {
        match self {
            ColumnKind::Int64 => Value::Int(bits as i64),
            ColumnKind::Float64 => Value::Float(f64::from_bits(bits)),
        }
    }
}

/// One property column of a run being written: a value (or null) per entry, in entry order.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnData {
    pub key: u32,
    pub kind: ColumnKind,
    pub(super) values: Vec<u64>,
    pub(super) valid: Vec<u64>,
}

impl ColumnData {
    pub fn new(key: u32, kind: ColumnKind, capacity: usize) -> Self {
        Self {
            key,
            kind,
            values: Vec::with_capacity(capacity),
            valid: Vec::with_capacity(capacity.div_ceil(64)),
        }
    }

    /// Appends the next entry's value (`None`: null, or a value of another kind).
    pub fn push(&mut self, value: Option<&Value>) {
        let bits = value.and_then(|v| self.kind.encode(v));
        let i = self.values.len();
        if i.is_multiple_of(64) {
            self.valid.push(0);
        }
        if bits.is_some() {
            self.valid[i / 64] |= 1 << (i % 64);
        }
        self.values.push(bits.unwrap_or(0));
    }

    /// Appends entry `i` of `slice` (its value, or null).
    pub fn push_from(&mut self, slice: &ColumnSlice<'_>, i: usize) {
        self.push(slice.value(i).as_ref());
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }
}

/// One vertex's entries of a run's property column: value `i` belongs to the `i`-th
/// neighbour of the slice it was handed out with.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSlice<'a> {
    pub(super) kind: ColumnKind,
    pub(super) values: &'a [u64],
    pub(super) valid: &'a [u64],
    /// Index of `values[0]` within the whole column (the validity bitmap is not sliced).
    pub(super) first: usize,
}

impl ColumnSlice<'_> {
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The stored bits of entry `i` (`None`: null).
    pub(super) fn bits(&self, i: usize) -> Option<u64> {
        let at = self.first + i;
        (self.valid[at / 64] & (1 << (at % 64)) != 0).then(|| self.values[i])
    }

    /// The value of entry `i` (`None`: null).
    pub fn value(&self, i: usize) -> Option<Value> {
        self.bits(i).map(|bits| self.kind.decode(bits))
    }

    /// The value of entry `i` as a float (integers converted), `None` when null.
    pub fn as_f64(&self, i: usize) -> Option<f64> {
        self.bits(i).map(|bits| self.kind.to_f64(bits))
    }

    /// Appends every value as a float to `out`; false (with `out` partly filled) at the first
    /// null.
    pub fn extend_f64(&self, out: &mut Vec<f64>) -> bool {
        (0..self.len()).all(|i| self.as_f64(i).map(|w| out.push(w)).is_some())
    }
}
