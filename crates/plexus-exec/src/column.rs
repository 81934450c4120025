//! Typed column vectors: a batch column of one type as an Arrow array.
//!
//! A [`Vector`] holds the values of one column of a batch when they are all of one type
//! (nulls anywhere): 64-bit integers, floats, booleans or strings, each an Arrow array with
//! its null bitmap. Storage's typed property reads arrive as vectors without a `Value` per
//! row (`eval::prefetch`), vectorised expressions compute them (`eval::vector`), and a
//! batch column may hold one in place of its values (`context::Batch`, TYPED COLUMNS).
//! Row `i` of a vector is the value the row evaluator sees for that row: `Vector::value`.

use arrow::array::{
    Array, AsArray, BooleanArray, Float64Array, Int64Array, StringArray, UInt32Array,
};
use arrow::buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::compute::take;
use arrow::datatypes::{ArrowNativeType, Float64Type, Int64Type, ToByteSlice};
use plexus_txn::{TypedProps, TypedValues};
use plexus_value::value::Value;
use std::ops::Range;
use std::sync::Arc;

/// A column of one type over the rows of a batch.
#[derive(Debug, Clone)]
pub(crate) enum Vector {
    Int(Int64Array),
    Float(Float64Array),
    Bool(BooleanArray),
    Str(StringArray),
}

/// Values `range` of a storage chunk's column as an Arrow buffer over the same memory: the
/// buffer holds the column's `Arc` (storage's typed reads, SHARED), no value is copied.
fn shared<T: ArrowNativeType>(data: Arc<Vec<T>>, range: Range<usize>) -> ScalarBuffer<T> {
    /// The column as the bytes an Arrow buffer is made of.
    struct Column<T>(Arc<Vec<T>>);
    impl<T: ArrowNativeType> AsRef<[u8]> for Column<T> {
        fn as_ref(&self) -> &[u8] {
            self.0.to_byte_slice()
        }
    }
    let buffer = Buffer::from(bytes::Bytes::from_owner(Column(data)));
    ScalarBuffer::new(buffer, range.start, range.len())
}

impl Vector {
    /// A storage column read in bulk (`Transaction::vertex_typed_properties_many`) as a vector,
    /// without copying its values: Arrow's buffers take the vectors over (a string column's
    /// bytes too; its end offsets become Arrow's 32-bit offsets), or share a chunk's column.
    /// `None` for strings whose bytes do not fit 32-bit offsets (over 2 GiB in one batch) or
    /// are not UTF-8.
    pub(crate) fn from_typed(props: TypedProps) -> Option<Vector> {
        // (A fold, not `all`: without the early exit the test vectorises.)
        let all_valid = props.valid.iter().fold(true, |all, &v| all & v);
        let nulls = (!all_valid).then(|| NullBuffer::from(props.valid));
        Some(match props.values {
            TypedValues::Int64(values) => Vector::Int(Int64Array::new(values.into(), nulls)),
            TypedValues::Float64(values) => Vector::Float(Float64Array::new(values.into(), nulls)),
            TypedValues::Bool(values) => Vector::Bool(BooleanArray::new(values.into(), nulls)),
            TypedValues::SharedInt64(data, range) => {
                Vector::Int(Int64Array::new(shared(data, range), nulls))
            }
            TypedValues::SharedFloat64(data, range) => {
                Vector::Float(Float64Array::new(shared(data, range), nulls))
            }
            TypedValues::Utf8 { bytes, ends } => {
                // The ends ascend: all fit when the last does (then converted without a
                // test per row, which vectorises).
                i32::try_from(ends.last().copied().unwrap_or(0)).ok()?;
                let offsets: Vec<i32> = (std::iter::once(0))
                    .chain(ends.iter().map(|&end| end as i32))
                    .collect();
                let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
                let array = StringArray::try_new(offsets, Buffer::from_vec(bytes), nulls);
                Vector::Str(array.ok()?)
            }
        })
    }

    /// Row `row` as a value (`Value::Null` where the vector is null).
    pub(crate) fn value(&self, row: usize) -> Value {
        if self.array().is_null(row) {
            return Value::Null;
        }
        match self {
            Vector::Int(a) => Value::Int(a.value(row)),
            Vector::Float(a) => Value::Float(a.value(row)),
            Vector::Bool(a) => Value::Bool(a.value(row)),
            Vector::Str(a) => Value::String(a.value(row).into()),
        }
    }

    /// Rows.
    pub(crate) fn len(&self) -> usize {
        self.array().len()
    }

    /// `len` rows from `offset` on, sharing this vector's buffers.
    pub(crate) fn slice(&self, offset: usize, len: usize) -> Vector {
        match self {
            Vector::Int(a) => Vector::Int(a.slice(offset, len)),
            Vector::Float(a) => Vector::Float(a.slice(offset, len)),
            Vector::Bool(a) => Vector::Bool(a.slice(offset, len)),
            Vector::Str(a) => Vector::Str(a.slice(offset, len)),
        }
    }

    /// Rows `rows` (each within the vector), in that order.
    pub(crate) fn take(&self, rows: &[u32]) -> Vector {
        let indices = UInt32Array::from_iter_values(rows.iter().copied());
        let taken = take(self.array(), &indices, None).expect("rows within the vector");
        match self {
            Vector::Int(_) => Vector::Int(taken.as_primitive::<Int64Type>().clone()),
            Vector::Float(_) => Vector::Float(taken.as_primitive::<Float64Type>().clone()),
            Vector::Bool(_) => Vector::Bool(taken.as_boolean().clone()),
            Vector::Str(_) => Vector::Str(taken.as_string::<i32>().clone()),
        }
    }

    /// Every row as a value.
    pub(crate) fn values(&self) -> Vec<Value> {
        // Without nulls, straight from the values buffer (no validity test per row).
        match self {
            Vector::Int(a) if a.null_count() == 0 => {
                a.values().iter().map(|&i| Value::Int(i)).collect()
            }
            Vector::Float(a) if a.null_count() == 0 => {
                a.values().iter().map(|&f| Value::Float(f)).collect()
            }
            _ => (0..self.array().len()).map(|row| self.value(row)).collect(),
        }
    }

    pub(crate) fn array(&self) -> &dyn Array {
        match self {
            Vector::Int(a) => a,
            Vector::Float(a) => a,
            Vector::Bool(a) => a,
            Vector::Str(a) => a,
        }
    }

    /// Row `row` as a number (`None`: null, or not a number).
    pub(crate) fn number(&self, row: usize) -> Option<Value> {
        match self {
            Vector::Int(a) if a.is_valid(row) => Some(Value::Int(a.value(row))),
            Vector::Float(a) if a.is_valid(row) => Some(Value::Float(a.value(row))),
            _ => None,
        }
    }

    pub(crate) fn is_number(&self) -> bool {
        matches!(self, Vector::Int(_) | Vector::Float(_))
    }
}
