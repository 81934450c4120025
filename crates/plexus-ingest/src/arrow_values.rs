//! Arrow columns as Plexus values.
//!
//! WHAT
//! ====
//! Parquet files (`COPY … FROM 'x.parquet'`), CSV read through `arrow-csv`, and Python's Arrow
//! tables and DataFrames all arrive as Arrow record batches. [`batch_columns`] turns one into
//! the bulk loader's property columns — one `Vec<Value>` per field, `Value::Null` for a null
//! slot — with one mapping for every front end, so a Parquet `date32` and a pandas `datetime64`
//! land as the same Plexus types whichever way they came in.
//!
//! MAPPING
//! =======
//! | Arrow                                   | Plexus                                     |
//! |-----------------------------------------|--------------------------------------------|
//! | Boolean                                 | Bool                                       |
//! | Int8/16/32/64, UInt8/16/32              | Int                                        |
//! | UInt64                                  | Int (values above `i64::MAX` are an error) |
//! | Float16/32/64                           | Float                                      |
//! | Utf8, LargeUtf8, Utf8View               | String                                     |
//! | Date32, Date64                          | Date                                       |
//! | Timestamp without a zone                | LocalDateTime                              |
//! | Timestamp with a zone                   | DateTime at UTC (offset 0, the zone kept)  |
//! | Time32/64                               | LocalTime                                  |
//! | Duration                                | Duration (seconds and nanoseconds)         |
//! | List, LargeList, FixedSizeList of these | List                                       |
//! | Dictionary of any of these              | its values                                 |
//! | Null                                    | Null                                       |
//!
//! Anything else (binary, decimals, structs, maps, unions) is an error naming the column and
//! its Arrow type; nothing is converted by guess.

use crate::error::{IngestError, IngestErrorKind, Result};
use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType as ArrowType, Date32Type, Date64Type, DurationMicrosecondType,
    DurationMillisecondType, DurationNanosecondType, DurationSecondType, Float16Type, Float32Type,
    Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, Time32MillisecondType,
    Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimeUnit, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use plexus_types::{TemporalValue, Value};
use std::sync::Arc;

const NANOS_PER_DAY: i64 = 86_400 * 1_000_000_000;

/// Every field of `batch` as `(field name, values)`.
pub fn batch_columns(batch: &RecordBatch) -> Result<Vec<(String, Vec<Value>)>> {
    let schema = batch.schema();
    schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(field, array)| Ok((field.name().clone(), column_values(field.name(), array)?)))
        .collect()
}

/// One Arrow array as values; `name` is the column's name for error messages.
pub fn column_values(name: &str, array: &dyn Array) -> Result<Vec<Value>> {
    let unsupported = || {
        IngestError::new(
            IngestErrorKind::Format,
            format!(
                "column '{name}' has Arrow type {} which Plexus cannot store",
                array.data_type()
            ),
        )
    };
    let n = array.len();
    let mut out = Vec::with_capacity(n);
    macro_rules! each {
        ($array:expr, |$v:ident| $make:expr) => {{
            let a = $array;
            for i in 0..n {
                out.push(if a.is_null(i) {
                    Value::Null
                } else {
                    let $v = a.value(i);
                    $make
                });
            }
        }};
    }
    match array.data_type() {
        ArrowType::Null => out.resize(n, Value::Null),
        ArrowType::Boolean => each!(array.as_boolean(), |v| Value::Bool(v)),
        ArrowType::Int8 => each!(array.as_primitive::<Int8Type>(), |v| Value::Int(v.into())),
        ArrowType::Int16 => each!(array.as_primitive::<Int16Type>(), |v| Value::Int(v.into())),
        ArrowType::Int32 => each!(array.as_primitive::<Int32Type>(), |v| Value::Int(v.into())),
        ArrowType::Int64 => each!(array.as_primitive::<Int64Type>(), |v| Value::Int(v)),
        ArrowType::UInt8 => each!(array.as_primitive::<UInt8Type>(), |v| Value::Int(v.into())),
        ArrowType::UInt16 => each!(array.as_primitive::<UInt16Type>(), |v| Value::Int(v.into())),
        ArrowType::UInt32 => each!(array.as_primitive::<UInt32Type>(), |v| Value::Int(v.into())),
        ArrowType::UInt64 => {
            let a = array.as_primitive::<UInt64Type>();
            for i in 0..n {
                if a.is_null(i) {
                    out.push(Value::Null);
                    continue;
                }
                let v = i64::try_from(a.value(i)).map_err(|_| {
                    IngestError::new(
                        IngestErrorKind::Format,
                        format!(
                            "column '{name}' row {}: {} does not fit a 64-bit signed integer",
                            i + 1,
                            a.value(i)
                        ),
                    )
                })?;
                out.push(Value::Int(v));
            }
        }
        ArrowType::Float16 => each!(array.as_primitive::<Float16Type>(), |v| Value::Float(
            v.to_f64()
        )),
        ArrowType::Float32 => each!(array.as_primitive::<Float32Type>(), |v| Value::Float(
            v.into()
        )),
        ArrowType::Float64 => each!(array.as_primitive::<Float64Type>(), |v| Value::Float(v)),
        ArrowType::Utf8 => each!(array.as_string::<i32>(), |v| Value::from(v)),
        ArrowType::LargeUtf8 => each!(array.as_string::<i64>(), |v| Value::from(v)),
        ArrowType::Utf8View => each!(array.as_string_view(), |v| Value::from(v)),
        ArrowType::Date32 => each!(array.as_primitive::<Date32Type>(), |v| date(v.into())),
        ArrowType::Date64 => each!(array.as_primitive::<Date64Type>(), |v| date(
            v.div_euclid(86_400_000)
        )),
        ArrowType::Time32(TimeUnit::Second) => {
            each!(array.as_primitive::<Time32SecondType>(), |v| local_time(
                i64::from(v) * 1_000_000_000
            ))
        }
        ArrowType::Time32(TimeUnit::Millisecond) => {
            each!(array.as_primitive::<Time32MillisecondType>(), |v| {
                local_time(i64::from(v) * 1_000_000)
            })
        }
        ArrowType::Time64(TimeUnit::Microsecond) => {
            each!(array.as_primitive::<Time64MicrosecondType>(), |v| {
                local_time(v * 1_000)
            })
        }
        ArrowType::Time64(TimeUnit::Nanosecond) => {
            each!(
                array.as_primitive::<Time64NanosecondType>(),
                |v| local_time(v)
            )
        }
        ArrowType::Timestamp(unit, zone) => {
            let zone = zone.as_deref().map(Arc::<str>::from);
            for (i, v) in raw_i64(array, *unit, true).into_iter().enumerate() {
                let Some(v) = v else {
                    out.push(Value::Null);
                    continue;
                };
                let nanos = v.checked_mul(nanos_per(*unit)).ok_or_else(|| {
                    IngestError::new(
                        IngestErrorKind::Format,
                        format!("column '{name}' row {}: timestamp out of range", i + 1),
                    )
                })?;
                let (days, nanos) = (
                    nanos.div_euclid(NANOS_PER_DAY),
                    nanos.rem_euclid(NANOS_PER_DAY),
                );
                out.push(Value::Temporal(match &zone {
                    None => TemporalValue::LocalDateTime { days, nanos },
                    Some(zone) => TemporalValue::DateTime {
                        days,
                        nanos,
                        offset_seconds: 0,
                        zone: zone_name(zone),
                    },
                }));
            }
        }
        ArrowType::Duration(unit) => {
            let per_second = 1_000_000_000 / nanos_per(*unit);
            for v in raw_i64(array, *unit, false) {
                out.push(match v {
                    None => Value::Null,
                    Some(v) => Value::Temporal(TemporalValue::Duration {
                        months: 0,
                        days: 0,
                        seconds: v.div_euclid(per_second),
                        nanos: v.rem_euclid(per_second) * nanos_per(*unit),
                    }),
                });
            }
        }
        ArrowType::List(_) => list_values(name, array.as_list::<i32>(), &mut out)?,
        ArrowType::LargeList(_) => list_values(name, array.as_list::<i64>(), &mut out)?,
        ArrowType::FixedSizeList(_, _) => {
            let a = array.as_fixed_size_list();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    Value::Null
                } else {
                    Value::List(column_values(name, a.value(i).as_ref())?.into())
                });
            }
        }
        ArrowType::Dictionary(_, _) => {
            let a = array.as_any_dictionary();
            let dictionary = column_values(name, a.values().as_ref())?;
            for (i, key) in a.normalized_keys().into_iter().enumerate() {
                out.push(if array.is_null(i) {
                    Value::Null
                } else {
                    dictionary[key].clone()
                });
            }
        }
        _ => return Err(unsupported()),
    }
    debug_assert_eq!(out.len(), n);
    Ok(out)
}

fn list_values<O: arrow::array::OffsetSizeTrait>(
    name: &str,
    a: &arrow::array::GenericListArray<O>,
    out: &mut Vec<Value>,
) -> Result<()> {
    for i in 0..a.len() {
        out.push(if a.is_null(i) {
            Value::Null
        } else {
            Value::List(column_values(name, a.value(i).as_ref())?.into())
        });
    }
    Ok(())
}

/// A timestamp or duration array's raw 64-bit values, `None` for nulls.
fn raw_i64(array: &dyn Array, unit: TimeUnit, timestamp: bool) -> Vec<Option<i64>> {
    macro_rules! collect {
        ($t:ty) => {
            array.as_primitive::<$t>().iter().collect()
        };
    }
    use arrow::datatypes::{
        TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
        TimestampSecondType,
    };
    match (timestamp, unit) {
        (true, TimeUnit::Second) => collect!(TimestampSecondType),
        (true, TimeUnit::Millisecond) => collect!(TimestampMillisecondType),
        (true, TimeUnit::Microsecond) => collect!(TimestampMicrosecondType),
        (true, TimeUnit::Nanosecond) => collect!(TimestampNanosecondType),
        (false, TimeUnit::Second) => collect!(DurationSecondType),
        (false, TimeUnit::Millisecond) => collect!(DurationMillisecondType),
        (false, TimeUnit::Microsecond) => collect!(DurationMicrosecondType),
        (false, TimeUnit::Nanosecond) => collect!(DurationNanosecondType),
    }
}

fn nanos_per(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

fn date(days: i64) -> Value {
    Value::Temporal(TemporalValue::Date { days })
}

fn local_time(nanos: i64) -> Value {
    Value::Temporal(TemporalValue::LocalTime { nanos })
}

/// Arrow writes a fixed offset as its zone (`+00:00`, `UTC`); only region names are kept.
fn zone_name(zone: &Arc<str>) -> Option<Arc<str>> {
    let fixed = zone.starts_with('+') || zone.starts_with('-') || &**zone == "UTC";
    (!fixed).then(|| zone.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{
        ArrayRef, BooleanArray, Date32Array, Float64Array, Int32Array, ListArray, StringArray,
        TimestampMillisecondArray, UInt64Array,
    };
    use arrow::datatypes::Int32Type;

    #[test]
    fn primitive_and_temporal_columns_convert_with_nulls() {
        let batch = RecordBatch::try_from_iter([
            (
                "i",
                Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
            ),
            (
                "f",
                Arc::new(Float64Array::from(vec![1.5, 2.0])) as ArrayRef,
            ),
            (
                "s",
                Arc::new(StringArray::from(vec![Some("a"), None])) as ArrayRef,
            ),
            (
                "b",
                Arc::new(BooleanArray::from(vec![true, false])) as ArrayRef,
            ),
            (
                "d",
                Arc::new(Date32Array::from(vec![0, 19_000])) as ArrayRef,
            ),
            (
                "t",
                Arc::new(TimestampMillisecondArray::from(vec![86_400_001, -1])) as ArrayRef,
            ),
        ])
        .unwrap();
        let columns = batch_columns(&batch).unwrap();
        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["i", "f", "s", "b", "d", "t"]);
        assert_eq!(columns[0].1, [Value::Int(1), Value::Null]);
        assert_eq!(columns[1].1, [Value::Float(1.5), Value::Float(2.0)]);
        assert_eq!(columns[2].1, [Value::from("a"), Value::Null]);
        assert_eq!(columns[3].1, [Value::Bool(true), Value::Bool(false)]);
        assert_eq!(columns[4].1[1], date(19_000));
        assert_eq!(
            columns[5].1,
            [
                Value::Temporal(TemporalValue::LocalDateTime {
                    days: 1,
                    nanos: 1_000_000
                }),
                Value::Temporal(TemporalValue::LocalDateTime {
                    days: -1,
                    nanos: NANOS_PER_DAY - 1_000_000
                }),
            ]
        );
    }

    #[test]
    fn lists_become_lists() {
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>([
            Some(vec![Some(1), Some(2)]),
            None,
            Some(vec![]),
        ]);
        let values = column_values("tags", &list).unwrap();
        assert_eq!(
            values,
            [
                Value::List(vec![Value::Int(1), Value::Int(2)].into()),
                Value::Null,
                Value::List(Vec::new().into()),
            ]
        );
    }

    #[test]
    fn unsupported_types_and_overflow_are_errors_naming_the_column() {
        let err = column_values("big", &UInt64Array::from(vec![u64::MAX])).unwrap_err();
        assert!(err.message.contains("column 'big' row 1"), "{err}");
        let binary = arrow::array::BinaryArray::from(vec![&b"x"[..]]);
        let err = column_values("blob", &binary).unwrap_err();
        assert!(
            err.message.contains("column 'blob' has Arrow type Binary"),
            "{err}"
        );
    }
}
