//! PostgreSQL column types → Plexus values.
//!
//! Validation resolves each mapped column's catalog type into a [`PgType`]; [`decode`] then
//! turns PostgreSQL's *text output* for that type (what `COPY ... TO STDOUT` and `pgoutput`
//! send) into a [`Value`]. One decoder therefore serves the initial copy and the stream.
//!
//! ASSUMPTIONS
//! ===========
//! The mirror's connections run with `DateStyle = ISO` and `TimeZone = UTC`, so dates print
//! as `2010-02-14`, timestamps as `2010-02-14 15:32:10.447` and timestamptz values as
//! `2010-02-14 15:32:10.447+00`. The decoder still accepts any offset (`+05:30`,
//! `-03:00:15`) and normalises a timestamptz to UTC.
//!
//! RULES
//! =====
//! - numeric with a scale, or without a type modifier, is a float (precision beyond f64 is
//!   lost); `numeric(p, 0)` is an integer, and a value outside i64 is a row error;
//! - json and jsonb become strings holding the JSON text;
//! - `infinity` dates and timestamps have no Plexus value: a row error.

use std::sync::Arc;

use plexus::{TemporalValue, Value};
use plexus_value::temporal::days_from_civil;

use super::model::Conversion;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_MILLI: i64 = 1_000_000;
/// Array nesting PostgreSQL allows (`MAXDIM`); deeper input is refused, not recursed into.
const ARRAY_MAX_DIMENSIONS: usize = 6;

/// A mapped column's type, as far as the mirror distinguishes types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PgType {
    /// Not yet resolved against the catalog (a parsed, unvalidated mapping).
    Unknown,
    /// smallint, integer, bigint, numeric(p, 0) → `Value::Int`.
    Int,
    /// real, double precision, numeric with a scale or no modifier → `Value::Float`.
    Float,
    /// text, varchar, char(n) (padded as PostgreSQL prints it), name, uuid, json, jsonb,
    /// enum types → `Value::String`.
    String,
    /// boolean → `Value::Bool`.
    Bool,
    /// date → a Plexus date.
    Date,
    /// timestamp (without time zone) → a Plexus local datetime.
    Timestamp,
    /// timestamptz → a Plexus datetime with offset 0 (UTC).
    TimestampTz,
    /// An array of a supported scalar type → `Value::List` (nested for several dimensions).
    Array(Box<PgType>),
}

// Built-in type oids (pg_type.dat); stable across PostgreSQL versions.
const BOOL: u32 = 16;
const CHAR: u32 = 18;
const NAME: u32 = 19;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const TEXT: u32 = 25;
const JSON: u32 = 114;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const BPCHAR: u32 = 1042;
const VARCHAR: u32 = 1043;
const DATE: u32 = 1082;
const TIMESTAMP: u32 = 1114;
const TIMESTAMPTZ: u32 = 1184;
const NUMERIC: u32 = 1700;
const UUID: u32 = 2950;
const JSONB: u32 = 3802;

impl PgType {
    /// The type of a scalar column of type `oid` with modifier `typmod` (`atttypmod`, -1 for
    /// none); `is_enum` when the type is an enum (`typtype = 'e'`). `None`: unsupported.
    pub fn scalar(oid: u32, typmod: i32, is_enum: bool) -> Option<PgType> {
        Some(match oid {
            INT2 | INT4 | INT8 => PgType::Int,
            FLOAT4 | FLOAT8 => PgType::Float,
            // numeric's typmod is ((precision << 16) | scale) + 4 (VARHDRSZ)
            NUMERIC if typmod >= 4 && ((typmod - 4) & 0xFFFF) == 0 => PgType::Int,
            NUMERIC => PgType::Float,
            TEXT | VARCHAR | BPCHAR | NAME | CHAR | UUID | JSON | JSONB => PgType::String,
            BOOL => PgType::Bool,
            DATE => PgType::Date,
            TIMESTAMP => PgType::Timestamp,
            TIMESTAMPTZ => PgType::TimestampTz,
            _ if is_enum => PgType::String,
            _ => return None,
        })
    }

    pub fn is_temporal(&self) -> bool {
        matches!(self, PgType::Date | PgType::Timestamp | PgType::TimestampTz)
    }

    /// Whether `conversion` applies to a column of this type.
    pub fn accepts(&self, conversion: Conversion) -> bool {
        match conversion {
            Conversion::None => true,
            Conversion::EpochMillis => self.is_temporal(),
            Conversion::EpochDays => *self == PgType::Date,
        }
    }
}

/// Converts PostgreSQL's text output `text` for a value of type `ty` (never SQL NULL: that
/// is `Value::Null` without decoding) into a Plexus value, applying `conversion`. The error
/// says what was expected; the caller adds the table, row and column.
pub fn decode(ty: &PgType, conversion: Conversion, text: &str) -> Result<Value, String> {
    if !ty.accepts(conversion) {
        return Err(format!(
            "conversion {conversion:?} does not apply to {ty:?}"
        ));
    }
    match (ty, conversion) {
        (PgType::Date, Conversion::EpochDays) => Ok(Value::Int(parse_date(text)?)),
        (PgType::Date, Conversion::EpochMillis) => Ok(Value::Int(
            parse_date(text)?
                .checked_mul(MILLIS_PER_DAY)
                .ok_or_else(|| format!("date {text:?} is out of range for epoch milliseconds"))?,
        )),
        (PgType::Timestamp | PgType::TimestampTz, Conversion::EpochMillis) => {
            let (days, nanos) = utc_instant(ty, text)?;
            days.checked_mul(MILLIS_PER_DAY)
                .and_then(|ms| ms.checked_add(nanos.div_euclid(NANOS_PER_MILLI)))
                .map(Value::Int)
                .ok_or_else(|| format!("timestamp {text:?} is out of range for epoch milliseconds"))
        }
        _ => decode_plain(ty, text, 0),
    }
}

fn decode_plain(ty: &PgType, text: &str, depth: usize) -> Result<Value, String> {
    match ty {
        PgType::Unknown => {
            Err("the column's type is not resolved (validate the mapping first)".to_owned())
        }
        PgType::Int => text
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| format!("not an integer in the 64-bit range: {text:?}")),
        PgType::Float => text
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| format!("not a number: {text:?}")),
        PgType::String => Ok(Value::string(text)),
        PgType::Bool => match text {
            "t" | "true" => Ok(Value::Bool(true)),
            "f" | "false" => Ok(Value::Bool(false)),
            _ => Err(format!("not a boolean (t or f): {text:?}")),
        },
        PgType::Date => Ok(Value::Temporal(TemporalValue::Date {
            days: parse_date(text)?,
        })),
        PgType::Timestamp => {
            let (days, nanos, offset) = parse_timestamp(text, false)?;
            debug_assert_eq!(offset, 0);
            Ok(Value::Temporal(TemporalValue::LocalDateTime {
                days,
                nanos,
            }))
        }
        PgType::TimestampTz => {
            let (days, nanos) = utc_instant(ty, text)?;
            Ok(Value::Temporal(TemporalValue::DateTime {
                days,
                nanos,
                offset_seconds: 0,
                zone: None,
            }))
        }
        PgType::Array(element) => {
            if depth >= ARRAY_MAX_DIMENSIONS {
                return Err(format!(
                    "array nested deeper than {ARRAY_MAX_DIMENSIONS} dimensions"
                ));
            }
            let mut parser = ArrayParser {
                text,
                pos: array_body_start(text)?,
            };
            let value = parser.array(element, depth)?;
            if parser.pos != text.len() {
                return Err(format!("unexpected text after the array: {text:?}"));
            }
            Ok(value)
        }
    }
}

/// The instant a timestamp (read as UTC) or timestamptz denotes: (days, nanos of the day),
/// both in UTC.
fn utc_instant(ty: &PgType, text: &str) -> Result<(i64, i64), String> {
    let (days, nanos, offset_seconds) = parse_timestamp(text, *ty == PgType::TimestampTz)?;
    let total = i128::from(days) * i128::from(SECONDS_PER_DAY * NANOS_PER_SECOND)
        + i128::from(nanos)
        - i128::from(offset_seconds) * i128::from(NANOS_PER_SECOND);
    let per_day = i128::from(SECONDS_PER_DAY * NANOS_PER_SECOND);
    let days = i64::try_from(total.div_euclid(per_day))
        .map_err(|_| format!("timestamp out of range: {text:?}"))?;
    // (the remainder is below one day's nanoseconds, so it fits)
    let nanos = i64::try_from(total.rem_euclid(per_day)).unwrap_or(0);
    Ok((days, nanos))
}

/// `YYYY-MM-DD` (four or more year digits) with an optional ` BC` → days since 1970-01-01.
fn parse_date(text: &str) -> Result<i64, String> {
    let bad = || format!("not an ISO date (YYYY-MM-DD): {text:?}");
    if text == "infinity" || text == "-infinity" {
        return Err(format!("{text} has no Plexus date"));
    }
    let (body, bc) = match text.strip_suffix(" BC") {
        Some(body) => (body, true),
        None => (text, false),
    };
    let mut parts = body.splitn(3, '-');
    let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    if y.len() < 4 || m.len() != 2 || d.len() != 2 {
        return Err(bad());
    }
    let year = digits(y).ok_or_else(bad)?;
    let month = digits(m).ok_or_else(bad)?;
    let day = digits(d).ok_or_else(bad)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month, bc) {
        return Err(bad());
    }
    if year == 0 || year > 10_000_000 {
        return Err(bad());
    }
    // 1 BC is the astronomical year 0
    let year = if bc { 1 - year } else { year };
    Ok(days_from_civil(year, month, day))
}

fn days_in_month(year: i64, month: i64, bc: bool) -> i64 {
    let year = if bc { 1 - year } else { year };
    let leap = year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// ASCII digits only (no sign, no spaces) as a number; `None` otherwise or when too long.
fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM[:SS]]][ BC]` → (days, nanos of the day, offset
/// seconds east of UTC). The offset is required when `with_offset`, refused otherwise.
fn parse_timestamp(text: &str, with_offset: bool) -> Result<(i64, i64, i32), String> {
    let bad = || {
        if with_offset {
            format!("not an ISO timestamptz (YYYY-MM-DD HH:MM:SS[.f]+HH[:MM]): {text:?}")
        } else {
            format!("not an ISO timestamp (YYYY-MM-DD HH:MM:SS[.f]): {text:?}")
        }
    };
    if text == "infinity" || text == "-infinity" {
        return Err(format!("{text} has no Plexus datetime"));
    }
    let (body, bc) = match text.strip_suffix(" BC") {
        Some(body) => (body, " BC"),
        None => (text, ""),
    };
    let (date, rest) = body.split_once([' ', 'T']).ok_or_else(bad)?;
    let days = parse_date(&format!("{date}{bc}")).map_err(|_| bad())?;
    let (time, offset_seconds) = if with_offset {
        let at = rest.find(['+', '-']).ok_or_else(bad)?;
        (&rest[..at], parse_offset(&rest[at..]).ok_or_else(bad)?)
    } else {
        (rest, 0)
    };
    let nanos = parse_time(time).ok_or_else(bad)?;
    Ok((days, nanos, offset_seconds))
}

/// `HH:MM:SS[.f{1,9}]` → nanoseconds since midnight (24:00:00 allowed, as PostgreSQL does).
fn parse_time(text: &str) -> Option<i64> {
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (text, None),
    };
    let mut parts = whole.split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || h.len() != 2 || m.len() != 2 || s.len() != 2 {
        return None;
    }
    let (h, m, s) = (digits(h)?, digits(m)?, digits(s)?);
    if h > 24 || m > 59 || s > 60 || (h == 24 && (m, s) != (0, 0)) {
        return None;
    }
    let mut nanos = (h * 3600 + m * 60 + s) * NANOS_PER_SECOND;
    if let Some(fraction) = fraction {
        if fraction.is_empty() || fraction.len() > 9 {
            return None;
        }
        let value = digits(fraction)?;
        nanos += value * 10_i64.pow(9 - fraction.len() as u32);
    }
    Some(nanos)
}

/// `±HH[:MM[:SS]]` or `±HHMM` → seconds east of UTC.
fn parse_offset(text: &str) -> Option<i32> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = &text[1..];
    if !body.bytes().all(|b| b.is_ascii_digit() || b == b':') {
        return None;
    }
    let fields: Vec<&str> = if body.contains(':') {
        body.split(':').collect()
    } else if body.len() == 4 {
        vec![&body[..2], &body[2..]]
    } else {
        vec![body]
    };
    if fields.is_empty() || fields.len() > 3 || fields.iter().any(|f| f.len() != 2) {
        return None;
    }
    let mut seconds = 0;
    for (field, unit) in fields.iter().zip([3600, 60, 1]) {
        let value = digits(field)?;
        if unit != 3600 && value > 59 {
            return None;
        }
        seconds += value * unit;
    }
    i32::try_from(sign * seconds).ok()
}

/// Where the `{` starts: after an optional dimension decoration `[0:2]={...}`.
fn array_body_start(text: &str) -> Result<usize, String> {
    if text.starts_with('[') {
        let eq = text
            .find("={")
            .ok_or_else(|| format!("not a PostgreSQL array: {text:?}"))?;
        Ok(eq + 1)
    } else {
        Ok(0)
    }
}

struct ArrayParser<'a> {
    text: &'a str,
    pos: usize,
}

impl ArrayParser<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn error(&self, what: &str) -> String {
        format!("{what} at byte {} of array {:?}", self.pos, self.text)
    }

    /// `{elem, ...}` at `pos`; elements of type `element`, or nested arrays.
    fn array(&mut self, element: &PgType, depth: usize) -> Result<Value, String> {
        if depth >= ARRAY_MAX_DIMENSIONS {
            return Err(self.error("too many dimensions"));
        }
        if self.bump() != Some('{') {
            return Err(self.error("expected {"));
        }
        let mut values = Vec::new();
        self.skip_spaces();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(Value::List(Arc::from(values)));
        }
        loop {
            self.skip_spaces();
            let value = match self.peek() {
                Some('{') => self.array(element, depth + 1)?,
                Some('"') => {
                    let text = self.quoted()?;
                    decode_plain(element, &text, depth + 1)?
                }
                Some(_) => {
                    let text = self.unquoted()?;
                    if text.eq_ignore_ascii_case("NULL") {
                        Value::Null
                    } else {
                        decode_plain(element, &text, depth + 1)?
                    }
                }
                None => return Err(self.error("unterminated array")),
            };
            values.push(value);
            self.skip_spaces();
            match self.bump() {
                Some(',') => continue,
                Some('}') => return Ok(Value::List(Arc::from(values))),
                _ => return Err(self.error("expected , or }")),
            }
        }
    }

    fn quoted(&mut self) -> Result<String, String> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            match self.bump() {
                Some('"') => return Ok(out),
                Some('\\') => match self.bump() {
                    Some(c) => out.push(c),
                    None => return Err(self.error("unterminated escape")),
                },
                Some(c) => out.push(c),
                None => return Err(self.error("unterminated quoted element")),
            }
        }
    }

    fn unquoted(&mut self) -> Result<String, String> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            match c {
                ',' | '}' => break,
                '{' | '"' => return Err(self.error("unexpected character in an element")),
                '\\' => {
                    self.pos += 1;
                    match self.bump() {
                        Some(c) => out.push(c),
                        None => return Err(self.error("unterminated escape")),
                    }
                }
                _ => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
        let trimmed = out.trim_end();
        if trimmed.is_empty() {
            return Err(self.error("empty element"));
        }
        Ok(trimmed.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(ty: &PgType, text: &str) -> Value {
        decode(ty, Conversion::None, text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn datetime(days: i64, nanos: i64) -> Value {
        Value::Temporal(TemporalValue::DateTime {
            days,
            nanos,
            offset_seconds: 0,
            zone: None,
        })
    }

    #[test]
    fn scalar_types_come_from_the_catalog_oid_and_modifier() {
        assert_eq!(PgType::scalar(INT4, -1, false), Some(PgType::Int));
        assert_eq!(PgType::scalar(NUMERIC, -1, false), Some(PgType::Float));
        // numeric(12,2): (12 << 16 | 2) + 4
        assert_eq!(
            PgType::scalar(NUMERIC, (12 << 16 | 2) + 4, false),
            Some(PgType::Float)
        );
        assert_eq!(
            PgType::scalar(NUMERIC, (20 << 16) + 4, false),
            Some(PgType::Int)
        );
        assert_eq!(PgType::scalar(JSONB, -1, false), Some(PgType::String));
        assert_eq!(PgType::scalar(60_000, -1, true), Some(PgType::String));
        assert_eq!(PgType::scalar(600, -1, false), None, "point");
    }

    #[test]
    fn numbers_booleans_and_strings() {
        assert_eq!(ok(&PgType::Int, "-42"), Value::Int(-42));
        assert!(decode(&PgType::Int, Conversion::None, "12.5").is_err());
        assert!(decode(&PgType::Int, Conversion::None, "99999999999999999999").is_err());
        assert_eq!(ok(&PgType::Float, "12.50"), Value::Float(12.5));
        assert_eq!(ok(&PgType::Float, "Infinity"), Value::Float(f64::INFINITY));
        assert_eq!(
            ok(&PgType::Float, "-Infinity"),
            Value::Float(f64::NEG_INFINITY)
        );
        assert!(matches!(ok(&PgType::Float, "NaN"), Value::Float(f) if f.is_nan()));
        assert!(decode(&PgType::Float, Conversion::None, "twelve").is_err());
        assert_eq!(ok(&PgType::Bool, "t"), Value::Bool(true));
        assert_eq!(ok(&PgType::Bool, "f"), Value::Bool(false));
        assert!(decode(&PgType::Bool, Conversion::None, "yes").is_err());
        assert_eq!(
            ok(&PgType::String, "{\"a\": 1}"),
            Value::string("{\"a\": 1}")
        );
        assert!(decode(&PgType::Unknown, Conversion::None, "1").is_err());
    }

    #[test]
    fn dates() {
        let date = |days| Value::Temporal(TemporalValue::Date { days });
        assert_eq!(ok(&PgType::Date, "1970-01-01"), date(0));
        assert_eq!(ok(&PgType::Date, "2010-02-14"), date(14_654));
        assert_eq!(ok(&PgType::Date, "1969-12-31"), date(-1));
        assert_eq!(
            ok(&PgType::Date, "0001-01-01 BC"),
            date(days_from_civil(0, 1, 1))
        );
        assert_eq!(
            ok(&PgType::Date, "10000-01-01"),
            date(days_from_civil(10_000, 1, 1))
        );
        for bad in [
            "2010-2-14",
            "2010-02-30",
            "2010-13-01",
            "infinity",
            "",
            "x",
            "2010-02-14 ",
        ] {
            assert!(
                decode(&PgType::Date, Conversion::None, bad).is_err(),
                "{bad}"
            );
        }
        assert_eq!(
            decode(&PgType::Date, Conversion::EpochDays, "2010-02-14"),
            Ok(Value::Int(14_654))
        );
        assert_eq!(
            decode(&PgType::Date, Conversion::EpochMillis, "1970-01-02"),
            Ok(Value::Int(86_400_000))
        );
    }

    #[test]
    fn timestamps_and_timestamptz() {
        let ms = 447 * NANOS_PER_MILLI;
        let t = (15 * 3600 + 32 * 60 + 10) * NANOS_PER_SECOND;
        assert_eq!(
            ok(&PgType::Timestamp, "2010-02-14 15:32:10.447"),
            Value::Temporal(TemporalValue::LocalDateTime {
                days: 14_654,
                nanos: t + ms
            })
        );
        assert_eq!(
            ok(&PgType::TimestampTz, "2010-02-14 15:32:10.447+00"),
            datetime(14_654, t + ms)
        );
        assert_eq!(
            ok(&PgType::TimestampTz, "2010-02-14 15:32:10+00"),
            datetime(14_654, t)
        );
        // the same instant written with other offsets
        assert_eq!(
            ok(&PgType::TimestampTz, "2010-02-14 21:02:10.447+05:30"),
            datetime(14_654, t + ms)
        );
        assert_eq!(
            ok(&PgType::TimestampTz, "2010-02-14 12:32:10.447-03"),
            datetime(14_654, t + ms)
        );
        assert_eq!(
            ok(&PgType::TimestampTz, "2010-02-15 01:02:10.447+0930"),
            datetime(14_654, t + ms)
        );
        assert_eq!(
            ok(&PgType::TimestampTz, "1970-01-01 00:00:00+00:00:30"),
            datetime(-1, 86_370 * NANOS_PER_SECOND)
        );
        assert_eq!(
            ok(&PgType::TimestampTz, "2010-06-27T23:36:57.123456789+00"),
            datetime(
                14_787,
                (23 * 3600 + 36 * 60 + 57) * NANOS_PER_SECOND + 123_456_789
            )
        );
        for bad in [
            "2010-02-14 15:32:10.447",
            "2010-02-14 25:00:00+00",
            "2010-02-14 15:32+00",
            "2010-02-14 15:32:10.+00",
            "2010-02-14 15:32:10+1",
            "infinity",
        ] {
            assert!(
                decode(&PgType::TimestampTz, Conversion::None, bad).is_err(),
                "{bad}"
            );
        }
        assert!(
            decode(
                &PgType::Timestamp,
                Conversion::None,
                "2010-02-14 15:32:10+00"
            )
            .is_err()
        );
        assert_eq!(
            decode(
                &PgType::TimestampTz,
                Conversion::EpochMillis,
                "2010-02-14 15:32:10.447+00"
            ),
            Ok(Value::Int(1_266_161_530_447))
        );
        assert_eq!(
            decode(
                &PgType::TimestampTz,
                Conversion::EpochMillis,
                "2010-02-14 16:32:10.447+01"
            ),
            Ok(Value::Int(1_266_161_530_447))
        );
        assert_eq!(
            decode(
                &PgType::Timestamp,
                Conversion::EpochMillis,
                "1969-12-31 23:59:59.999"
            ),
            Ok(Value::Int(-1))
        );
        assert!(
            decode(
                &PgType::Timestamp,
                Conversion::EpochDays,
                "2010-02-14 00:00:00"
            )
            .is_err()
        );
        assert!(decode(&PgType::Int, Conversion::EpochMillis, "1").is_err());
    }

    /// Server text is input too: no prefix or garbling of valid text panics.
    #[test]
    fn no_text_makes_decode_panic() {
        let samples = [
            "2010-02-14 15:32:10.447+05:30:15 BC",
            "{{\"a\\\"b\",NULL},{c,\"\"}}",
            "[0:1]={7,8}",
            "-Infinity",
            "+aé1",
            "2010-02-14T15:32:10+aé1",
            "1970-01-01 24:00:00+00",
        ];
        let types = [
            PgType::Int,
            PgType::Float,
            PgType::Bool,
            PgType::Date,
            PgType::Timestamp,
            PgType::TimestampTz,
            PgType::Array(Box::new(PgType::String)),
            PgType::Array(Box::new(PgType::TimestampTz)),
        ];
        let conversions = [
            Conversion::None,
            Conversion::EpochMillis,
            Conversion::EpochDays,
        ];
        for sample in samples {
            let chars: Vec<char> = sample.chars().collect();
            for end in 0..=chars.len() {
                for skip in 0..=end {
                    let text: String = chars[..end]
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != skip)
                        .map(|(_, c)| c)
                        .collect();
                    for ty in &types {
                        for conversion in conversions {
                            let _ = decode(ty, conversion, &text);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn arrays() {
        let ints = PgType::Array(Box::new(PgType::Int));
        let texts = PgType::Array(Box::new(PgType::String));
        let list = |values: Vec<Value>| Value::List(Arc::from(values));
        assert_eq!(
            ok(&ints, "{1,2,3}"),
            list(vec![1.into(), 2.into(), 3.into()])
        );
        assert_eq!(ok(&ints, "{}"), list(vec![]));
        assert_eq!(ok(&ints, "{1,NULL}"), list(vec![1.into(), Value::Null]));
        assert_eq!(ok(&ints, "[0:1]={7,8}"), list(vec![7.into(), 8.into()]));
        assert_eq!(
            ok(&ints, "{{1,2},{3,4}}"),
            list(vec![
                list(vec![1.into(), 2.into()]),
                list(vec![3.into(), 4.into()])
            ])
        );
        assert_eq!(
            ok(
                &texts,
                r#"{"a b",c,NULL,"NULL","q\"uote","back\\slash",""}"#
            ),
            list(vec![
                "a b".into(),
                "c".into(),
                Value::Null,
                "NULL".into(),
                "q\"uote".into(),
                "back\\slash".into(),
                "".into()
            ])
        );
        assert_eq!(
            ok(&PgType::Array(Box::new(PgType::Date)), "{2010-02-14}"),
            list(vec![Value::Temporal(TemporalValue::Date { days: 14_654 })])
        );
        for bad in [
            "",
            "{",
            "{1,2",
            "{1,,2}",
            "1,2",
            "{1}x",
            "{\"a}",
            "{a\"b}",
            "{x}",
            "{{{{{{{1}}}}}}}",
        ] {
            assert!(decode(&ints, Conversion::None, bad).is_err(), "{bad}");
        }
    }
}
