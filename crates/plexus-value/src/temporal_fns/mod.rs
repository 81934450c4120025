//! Cypher's temporal functions over values: the constructors (`date(...)`, `duration(...)`,
//! `datetime.fromepoch(...)`, `date.truncate(...)`), `+ - * /` with temporal operands,
//! components (`t.year`, `d.hours`) and `toString`. The types they work on, and everything
//! about them that needs no [`Value`], are [`crate::temporal`]'s.
//!
//! SEMANTICS (as the openCypher TCK pins them)
//! ===========================================
//! - constructors take a map (`date({year: 1984, week: 10, dayOfWeek: 3})`, calendar, week,
//!   ordinal and quarter forms, selecting from another temporal with `{date: d, day: 28}`),
//!   an ISO 8601 string (basic or extended form), another temporal (`date(datetime)`), or
//!   nothing (the statement's clock); a null argument gives null;
//! - duration fields may be fractional and cascade down (`duration({months: 0.75})` is 22
//!   days 19:51:49.5, a month being 365.2425 / 12 days); integer milli-, micro- and
//!   nanoseconds are added exactly;
//! - `+ - * /` apply when either operand is temporal: temporal ± duration, duration ±
//!   duration, duration × or ÷ a number; any other mix with a temporal operand is a type
//!   error, and operands with none are left to the caller ([`arith`] returns `None`).
//!
//! WHY APART FROM THE TYPES
//! ========================
//! A [`Value`] holds a [`Temporal`] or a [`Duration`](crate::temporal::Duration), so the
//! types sit below the value module, and these functions — which take and return values —
//! above it: `value` uses `temporal`, this module uses both, and `temporal` uses neither.
//! The module is the evaluator's entry to temporal Cypher: [`call`] and [`arity`] for the
//! function table, [`arith`] for operators, [`component`] for property access.
//!
//! THE STATEMENT'S CLOCK
//! =====================
//! Functions that read "now" (`date()`, `datetime.statement()`, a time in a named zone)
//! read the [`StatementClock`](crate::temporal::StatementClock) passed to [`call`], never
//! the system clock.
//!
//! FILES
//! =====
//! - this file: operators, components, text and the stored form of a temporal value;
//! - `construct.rs`: constructors from maps, text and other temporals, truncation, and the
//!   function table (`call`, `arity`).

mod construct;

pub use construct::{arity, call};

use crate::error::{ErrorClass, QueryError, Result};
use crate::temporal::{
    NANOS_PER_SECOND, Temporal, add_duration, civil_from_days, days_from_civil, iso_week,
    offset_text,
};
use crate::value::{ArithOp, Value};

/// Temporal arithmetic; `None` if neither operand is temporal.
pub fn arith(op: ArithOp, a: &Value, b: &Value) -> Option<Result<Value>> {
    let number = |v: &Value| v.as_f64();
    Some(match (op, a, b) {
        (ArithOp::Add, Value::Temporal(t), Value::Duration(d))
        | (ArithOp::Add, Value::Duration(d), Value::Temporal(t)) => {
            add_duration(t, d).map(Value::Temporal)
        }
        (ArithOp::Subtract, Value::Temporal(t), Value::Duration(d)) => {
            add_duration(t, &d.negate()).map(Value::Temporal)
        }
        (ArithOp::Add, Value::Duration(x), Value::Duration(y)) => Ok(Value::Duration(x.add(*y))),
        (ArithOp::Subtract, Value::Duration(x), Value::Duration(y)) => {
            Ok(Value::Duration(x.add(y.negate())))
        }
        (ArithOp::Multiply, Value::Duration(d), n) | (ArithOp::Multiply, n, Value::Duration(d))
            if number(n).is_some() =>
        {
            Ok(Value::Duration(d.scale(number(n).unwrap_or(1.0))))
        }
        (ArithOp::Divide, Value::Duration(d), n) if number(n).is_some() => {
            Ok(Value::Duration(d.divide(number(n).unwrap_or(1.0))))
        }
        (_, Value::Temporal(_) | Value::Duration(_), _)
        | (_, _, Value::Temporal(_) | Value::Duration(_)) => Err(QueryError::type_error(format!(
            "cannot apply {op:?} to {} and {}",
            a.type_name(),
            b.type_name()
        ))),
        _ => return None,
    })
}

/// `t.year`, `d.hours`, ...
pub fn component(value: &Value, key: &str) -> Result<Value> {
    let missing = || {
        QueryError::runtime(
            ErrorClass::TypeError,
            "InvalidArgumentValue",
            format!("{} has no component '{key}'", value.type_name()),
        )
    };
    if let Value::Duration(d) = value {
        let total = d.total_nanos();
        let secs = (total.div_euclid(NANOS_PER_SECOND as i128)) as i64;
        let sub = (total.rem_euclid(NANOS_PER_SECOND as i128)) as i64;
        return Ok(Value::Int(match key {
            "years" => d.months / 12,
            "quarters" => d.months / 3,
            "months" => d.months,
            "weeks" => d.days / 7,
            "days" => d.days,
            "hours" => secs / 3600,
            "minutes" => secs / 60,
            "seconds" => secs,
            "milliseconds" => secs * 1000 + sub / 1_000_000,
            "microseconds" => secs * 1_000_000 + sub / 1000,
            "nanoseconds" => secs * NANOS_PER_SECOND + sub,
            "quartersOfYear" => d.months / 3 % 4,
            "monthsOfQuarter" => d.months % 3,
            "monthsOfYear" => d.months % 12,
            "daysOfWeek" => d.days % 7,
            "minutesOfHour" => secs / 60 % 60,
            "secondsOfMinute" => secs % 60,
            "millisecondsOfSecond" => sub / 1_000_000,
            "microsecondsOfSecond" => sub / 1000,
            "nanosecondsOfSecond" => sub,
            _ => return Err(missing()),
        }));
    }
    let Value::Temporal(t) = value else {
        return Err(missing());
    };
    if let Some(days) = t.date_days() {
        let (y, m, d) = civil_from_days(days);
        let (wy, w, dow) = iso_week(days);
        let q = (m - 1) / 3 + 1;
        let date_value = match key {
            "year" => Some(y),
            "quarter" => Some(q),
            "month" => Some(m),
            "week" => Some(w),
            "weekYear" => Some(wy),
            "day" => Some(d),
            "ordinalDay" => Some(days - days_from_civil(y, 1, 1) + 1),
            "weekDay" | "dayOfWeek" => Some(dow),
            "dayOfQuarter" => Some(days - days_from_civil(y, (q - 1) * 3 + 1, 1) + 1),
            _ => None,
        };
        if let Some(v) = date_value {
            return Ok(Value::Int(v));
        }
    }
    if let Some(nanos) = t.time_nanos() {
        let secs = nanos / NANOS_PER_SECOND;
        let sub = nanos % NANOS_PER_SECOND;
        let time_value = match key {
            "hour" => Some(secs / 3600),
            "minute" => Some(secs / 60 % 60),
            "second" => Some(secs % 60),
            "millisecond" => Some(sub / 1_000_000),
            "microsecond" => Some(sub / 1000),
            "nanosecond" => Some(sub),
            _ => None,
        };
        if let Some(v) = time_value {
            return Ok(Value::Int(v));
        }
    }
    if let Some(offset) = t.offset() {
        match key {
            "timezone" => {
                return Ok(match t {
                    Temporal::DateTime { zone: Some(z), .. } => Value::from(&**z),
                    _ => Value::from(offset_text(offset)),
                });
            }
            "offset" => return Ok(Value::from(offset_text(offset))),
            "offsetMinutes" => return Ok(Value::Int(offset as i64 / 60)),
            "offsetSeconds" => return Ok(Value::Int(offset as i64)),
            _ => {}
        }
    }
    if let Temporal::DateTime { .. } = t {
        let instant = t.key();
        match key {
            "epochMillis" => return Ok(Value::Int((instant.div_euclid(1_000_000)) as i64)),
            "epochSeconds" => {
                return Ok(Value::Int(
                    (instant.div_euclid(NANOS_PER_SECOND as i128)) as i64,
                ));
            }
            _ => {}
        }
    }
    Err(missing())
}

/// ISO 8601 text of a temporal value or duration (what `toString` returns); other values in
/// a debugging form.
pub fn text(value: &Value) -> String {
    match value {
        Value::Temporal(t) => t.to_string(),
        Value::Duration(d) => d.to_string(),
        other => format!("{other:?}"),
    }
}

/// The stored form of a temporal value or duration; `None` for any other value.
pub fn to_storage(value: &Value) -> Option<plexus_types::TemporalValue> {
    match value {
        Value::Temporal(_) | Value::Duration(_) => match value.to_storage()? {
            plexus_types::Value::Temporal(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}
