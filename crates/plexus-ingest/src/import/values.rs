//! Field text → [`Value`] for a typed header column (`age:int`, `tags:string[]`, `born:date`).
//!
//! RULES
//! =====
//! - an empty (unquoted) field is no value: the property is left out, as neo4j-admin does;
//! - integers (`int`, `long`, `short`, `byte`) and floats (`float`, `double`) are read after
//!   trimming spaces; `boolean` is `true` or `false` in any case; anything else is an error
//!   (never a silent null or `false`);
//! - `string` and `char` are the field as written (a quoted `""` is the empty string);
//! - temporal types are read by the caller's [`TemporalParser`] (the query engine's
//!   `date('…')` text rules: this crate knows no calendar) — without one they are an error;
//! - an array column splits the field on the array delimiter and reads each element by the
//!   element type; empty elements are dropped (`a;;b` is `['a', 'b']`).

use super::TemporalParser;
use crate::header::FieldType;
use plexus_types::Value;
use std::sync::Arc;

/// Reads `text` as `ty` (an array of `ty` when `array`); `Ok(None)` for no value.
pub(crate) fn convert(
    text: Option<&str>,
    ty: FieldType,
    array: bool,
    array_delimiter: char,
    temporal: Option<TemporalParser>,
) -> Result<Option<Value>, String> {
    let Some(text) = text else {
        return Ok(None);
    };
    if !array {
        return scalar(text, ty, temporal).map(Some);
    }
    if text.is_empty() {
        // `""`: an empty array.
        return Ok(Some(Value::List(Arc::from(Vec::new()))));
    }
    let items = text
        .split(array_delimiter)
        .filter(|item| !item.is_empty())
        .map(|item| scalar(item, ty, temporal))
        .collect::<Result<Vec<Value>, String>>()?;
    Ok(Some(Value::List(Arc::from(items))))
}

fn scalar(text: &str, ty: FieldType, temporal: Option<TemporalParser>) -> Result<Value, String> {
    let what = |name: &str| format!("cannot read {text:?} as {name}");
    match ty {
        FieldType::String => Ok(Value::from(text)),
        FieldType::Integer => text
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| what("an integer")),
        FieldType::Float => text
            .trim()
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| what("a float")),
        FieldType::Boolean => match text.trim() {
            t if t.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
            t if t.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
            _ => Err(what("a boolean (true or false)")),
        },
        FieldType::Date
        | FieldType::LocalTime
        | FieldType::Time
        | FieldType::LocalDateTime
        | FieldType::DateTime
        | FieldType::Duration => match temporal {
            Some(parse) => parse(ty, text.trim()),
            None => Err(format!(
                "no reader for {} values was given to the importer",
                type_name(ty)
            )),
        },
    }
}

/// The header's name of a type (for messages).
pub fn type_name(ty: FieldType) -> &'static str {
    match ty {
        FieldType::Integer => "int",
        FieldType::Float => "float",
        FieldType::Boolean => "boolean",
        FieldType::String => "string",
        FieldType::Date => "date",
        FieldType::LocalTime => "localtime",
        FieldType::Time => "time",
        FieldType::LocalDateTime => "localdatetime",
        FieldType::DateTime => "datetime",
        FieldType::Duration => "duration",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::from(items))
    }

    #[test]
    fn scalars_arrays_and_errors() {
        let c = |text, ty, array| convert(text, ty, array, ';', None);
        assert_eq!(c(None, FieldType::Integer, false), Ok(None));
        assert_eq!(
            c(Some(" 42 "), FieldType::Integer, false),
            Ok(Some(Value::Int(42)))
        );
        assert_eq!(
            c(Some("2.5"), FieldType::Float, false),
            Ok(Some(Value::Float(2.5)))
        );
        assert_eq!(
            c(Some("TRUE"), FieldType::Boolean, false),
            Ok(Some(Value::Bool(true)))
        );
        assert_eq!(
            c(Some(""), FieldType::String, false),
            Ok(Some(Value::from("")))
        );
        assert_eq!(
            c(Some("a;;b"), FieldType::String, true),
            Ok(Some(list(vec![Value::from("a"), Value::from("b")])))
        );
        assert_eq!(
            c(Some("1;2"), FieldType::Integer, true),
            Ok(Some(list(vec![Value::Int(1), Value::Int(2)])))
        );
        assert_eq!(
            c(Some("x"), FieldType::Integer, false),
            Err("cannot read \"x\" as an integer".to_string())
        );
        assert!(c(Some("1;x"), FieldType::Integer, true).is_err());
        assert!(c(Some("yes"), FieldType::Boolean, false).is_err());
        assert!(
            c(Some("2020-01-01"), FieldType::Date, false)
                .unwrap_err()
                .contains("no reader for date values")
        );
        fn days(_: FieldType, text: &str) -> Result<Value, String> {
            text.parse::<i64>()
                .map(Value::Int)
                .map_err(|e| e.to_string())
        }
        assert_eq!(
            convert(Some("7"), FieldType::Date, false, ';', Some(days)),
            Ok(Some(Value::Int(7)))
        );
    }
}
