//! Building temporal values: from a map (`date({year: 1984, week: 10, dayOfWeek: 3})`,
//! selecting from another temporal with `{date: d, day: 28}`), from text, from another
//! temporal (`date(datetime)`), from the statement's clock (`date()`), truncated
//! (`date.truncate('month', d)`) — and the table of temporal functions the evaluator calls.

use crate::error::Result;
use crate::temporal::{
    Duration, Kind, NANOS_PER_DAY, NANOS_PER_SECOND, StatementClock, Temporal, Zone, arg_error,
    between, checked_date, civil_from_days, datetime_at_instant, day_of_week, days_from_civil,
    fractional, iso_week, make_datetime, offset_at_instant, offset_at_local, offset_text,
    ordinal_date, parse_duration_text, parse_temporal_text, parse_zone, quarter_date, week_date,
    week_one,
};
use crate::value::{MapValue, Value};
use std::sync::Arc;

/// Reads an integer field of a constructor map.
fn field(map: &MapValue, key: &str) -> Result<Option<i64>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(*i)),
        Some(other) => Err(arg_error(format!(
            "'{key}' must be an integer, not {}",
            other.type_name()
        ))),
    }
}

fn temporal_field(map: &MapValue, key: &str) -> Option<Temporal> {
    match map.get(key) {
        Some(Value::Temporal(t)) => Some(t.clone()),
        _ => None,
    }
}

/// The date part of a constructor map (None if it names no date field).
fn date_from_map(map: &MapValue, base: Option<i64>) -> Result<Option<i64>> {
    let year = field(map, "year")?;
    let (month, day) = (field(map, "month")?, field(map, "day")?);
    let (week, dow) = (field(map, "week")?, field(map, "dayOfWeek")?);
    let ordinal = field(map, "ordinalDay")?;
    let (quarter, doq) = (field(map, "quarter")?, field(map, "dayOfQuarter")?);
    let any = [year, month, day, week, dow, ordinal, quarter, doq]
        .iter()
        .any(Option::is_some);
    if !any {
        return Ok(base);
    }
    let base_civil = base.map(civil_from_days);
    if week.is_some() || (dow.is_some() && month.is_none()) {
        let base_week = base.map(iso_week);
        let wy = year
            .or(base_week.map(|b| b.0))
            .ok_or_else(|| arg_error("year is required"))?;
        let w = week.or(base_week.map(|b| b.1)).unwrap_or(1);
        let d = dow.or(base_week.map(|b| b.2)).unwrap_or(1);
        return week_date(wy, w, d).map(Some);
    }
    let y = year
        .or(base_civil.map(|b| b.0))
        .ok_or_else(|| arg_error("year is required"))?;
    if let Some(o) = ordinal {
        return ordinal_date(y, o).map(Some);
    }
    if quarter.is_some() || doq.is_some() {
        let base_q = base.map(|b| {
            let (by, bm, _) = civil_from_days(b);
            let q = (bm - 1) / 3 + 1;
            (q, b - days_from_civil(by, (q - 1) * 3 + 1, 1) + 1)
        });
        let q = quarter.or(base_q.map(|b| b.0)).unwrap_or(1);
        let d = doq.or(base_q.map(|b| b.1)).unwrap_or(1);
        return quarter_date(y, q, d).map(Some);
    }
    if day.is_some() && month.is_none() && base.is_none() {
        return Err(arg_error("month is required with day"));
    }
    let m = month.or(base_civil.map(|b| b.1)).unwrap_or(1);
    let d = day.or(base_civil.map(|b| b.2)).unwrap_or(1);
    checked_date(y, m, d).map(Some)
}

/// The time part of a constructor map (None if it names no time field).
fn time_from_map(map: &MapValue, base: Option<i64>) -> Result<Option<i64>> {
    let h = field(map, "hour")?;
    let m = field(map, "minute")?;
    let s = field(map, "second")?;
    let ms = field(map, "millisecond")?;
    let us = field(map, "microsecond")?;
    let ns = field(map, "nanosecond")?;
    if [h, m, s, ms, us, ns].iter().all(Option::is_none) {
        return Ok(base);
    }
    let b = base.unwrap_or(0);
    let b_secs = b / NANOS_PER_SECOND;
    let b_frac = b % NANOS_PER_SECOND;
    let hour = h.unwrap_or(if base.is_some() { b_secs / 3600 } else { 0 });
    let minute = m.unwrap_or(if base.is_some() { b_secs / 60 % 60 } else { 0 });
    let second = s.unwrap_or(if base.is_some() { b_secs % 60 } else { 0 });
    let sub = if ms.is_some() || us.is_some() || ns.is_some() {
        // Unnamed sub-second parts come from the base (millis, then micros within the milli,
        // then nanos within the micro).
        let (base_ms, base_us, base_ns) = match base {
            Some(_) => (b_frac / 1_000_000, b_frac / 1000 % 1000, b_frac % 1000),
            None => (0, 0, 0),
        };
        let ms = ms.unwrap_or(if us.is_some_and(|u| u >= 1000) {
            0
        } else {
            base_ms
        });
        let us = us.unwrap_or(if ns.is_some_and(|n| n >= 1000) {
            0
        } else {
            base_us
        });
        let ns = ns.unwrap_or(base_ns);
        if !(0..1000).contains(&ms)
            || !(0..1_000_000).contains(&us)
            || !(0..NANOS_PER_SECOND).contains(&ns)
        {
            return Err(arg_error("sub-second field out of range"));
        }
        let total = ms * 1_000_000 + us * 1000 + ns;
        if total >= NANOS_PER_SECOND {
            return Err(arg_error("sub-second fields add up to a second or more"));
        }
        total
    } else {
        b_frac
    };
    if !(0..24).contains(&hour) || !(0..60).contains(&minute) || !(0..60).contains(&second) {
        return Err(arg_error("time field out of range"));
    }
    if m.is_some() && h.is_none() && base.is_none() || s.is_some() && m.is_none() && base.is_none()
    {
        return Err(arg_error("a smaller time unit needs the larger ones"));
    }
    Ok(Some(
        ((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + sub,
    ))
}

fn construct_from_map(kind: Kind, map: &MapValue, clock: StatementClock) -> Result<Temporal> {
    let tz = match map.get("timezone") {
        Some(Value::String(s)) => Some(parse_zone(s)?),
        Some(Value::Null) | None => None,
        Some(other) => {
            return Err(arg_error(format!(
                "timezone must be a string, not {}",
                other.type_name()
            )));
        }
    };
    if kind == Kind::DateTime
        && (map.contains_key("epochSeconds") || map.contains_key("epochMillis"))
    {
        let nanos = field(map, "nanosecond")?.unwrap_or(0) as i128;
        let instant = match (field(map, "epochSeconds")?, field(map, "epochMillis")?) {
            (Some(s), _) => s as i128 * NANOS_PER_SECOND as i128 + nanos,
            (None, Some(ms)) => ms as i128 * 1_000_000 + nanos,
            _ => return Err(arg_error("epochSeconds or epochMillis is required")),
        };
        return datetime_at_instant(instant, tz.unwrap_or(Zone::Offset(0)));
    }
    // Selection from other temporal values: {date: d}, {time: t}, {datetime: dt}.
    let from_datetime = temporal_field(map, "datetime");
    let date_source = temporal_field(map, "date").or_else(|| from_datetime.clone());
    let time_source = temporal_field(map, "time").or_else(|| from_datetime.clone());
    let base_date = date_source.as_ref().and_then(Temporal::date_days);
    let base_time = time_source.as_ref().and_then(Temporal::time_nanos);
    // A source with a zone, re-expressed in a requested other zone, keeps its instant.
    let source_zone = time_source.as_ref().and_then(Temporal::zone);
    let days = if kind.has_date() {
        date_from_map(map, base_date)?
    } else {
        None
    };
    let mut nanos = if kind.has_time() {
        time_from_map(map, base_time)?
    } else {
        None
    };
    if map.is_empty() {
        return Err(arg_error("an empty map names no temporal value"));
    }
    if kind.has_date() && days.is_none() {
        return Err(arg_error("year is required"));
    }
    if kind.has_time() && nanos.is_none() {
        if kind.has_date() {
            nanos = Some(0);
        } else {
            return Err(arg_error("hour is required"));
        }
    }
    let days = days.unwrap_or(0);
    let nanos = nanos.unwrap_or(0);
    // Converting a zoned time into another zone keeps the instant.
    let shift = |zone_target: &Zone, days: i64, nanos: i64| -> Result<(i64, i64)> {
        let (Some(src), Some(fixed_offset)) = (
            &source_zone,
            time_source.as_ref().and_then(Temporal::offset),
        ) else {
            return Ok((days, nanos));
        };
        // A named source zone is re-resolved at the new local date and time; the same
        // named zone as the target keeps the local time.
        let src_offset = match (src, zone_target) {
            (Zone::Named(a), Zone::Named(b)) if a == b => return Ok((days, nanos)),
            (Zone::Named(a), _) => offset_at_local(a, days, nanos)?,
            (Zone::Offset(_), _) => fixed_offset,
        };
        let target_offset = match zone_target {
            Zone::Offset(o) => *o,
            Zone::Named(n) => offset_at_local(n, days, nanos)?,
        };
        let local = days as i128 * NANOS_PER_DAY as i128
            + nanos as i128
            + (target_offset - src_offset) as i128 * NANOS_PER_SECOND as i128;
        Ok((
            local.div_euclid(NANOS_PER_DAY as i128) as i64,
            local.rem_euclid(NANOS_PER_DAY as i128) as i64,
        ))
    };
    Ok(match kind {
        Kind::Date => Temporal::Date(days),
        Kind::LocalTime => Temporal::LocalTime(nanos),
        Kind::LocalDateTime => Temporal::LocalDateTime { days, nanos },
        Kind::Time => {
            let zone = tz.or(source_zone.clone()).unwrap_or_else(default_zone);
            let (_, nanos) = shift(&zone, days, nanos)?;
            let offset = match &zone {
                Zone::Offset(o) => *o,
                Zone::Named(n) => offset_at_instant(n, clock.epoch_seconds())?,
            };
            Temporal::Time { nanos, offset }
        }
        Kind::DateTime => {
            let zone = tz.or(source_zone.clone()).unwrap_or_else(default_zone);
            let (days, nanos) = shift(&zone, days, nanos)?;
            make_datetime(days, nanos, zone)?
        }
    })
}

/// The zone of a temporal made without one: UTC (there is no session time zone).
fn default_zone() -> Zone {
    Zone::Offset(0)
}

/// `date()`, `datetime({timezone: 'Europe/Berlin'})`, ...: the statement's clock.
fn now(kind: Kind, zone: Option<Zone>, clock: StatementClock) -> Result<Temporal> {
    let zone = zone.unwrap_or_else(default_zone);
    let current = datetime_at_instant(clock.epoch_nanos(), zone)?;
    let Temporal::DateTime {
        days,
        nanos,
        offset,
        ..
    } = &current
    else {
        return Ok(current);
    };
    Ok(match kind {
        Kind::Date => Temporal::Date(*days),
        Kind::LocalTime => Temporal::LocalTime(*nanos),
        Kind::Time => Temporal::Time {
            nanos: *nanos,
            offset: *offset,
        },
        Kind::LocalDateTime => Temporal::LocalDateTime {
            days: *days,
            nanos: *nanos,
        },
        Kind::DateTime => current,
    })
}

/// Converts any temporal to `kind` (`date(datetime)`, `localtime(time)`, ...).
fn convert(kind: Kind, t: &Temporal, clock: StatementClock) -> Result<Temporal> {
    let mut map = MapValue::new();
    let key = match t {
        Temporal::Date(_) => "date",
        Temporal::LocalTime(_) | Temporal::Time { .. } => "time",
        _ => "datetime",
    };
    if kind.has_date() && t.date_days().is_none() {
        return Err(arg_error(format!(
            "cannot make a {} from a {}",
            kind.name(),
            t.type_name()
        )));
    }
    if kind == Kind::Date || kind.has_time() {
        map.insert(Arc::from(key), Value::Temporal(t.clone()));
    }
    if !kind.has_time() {
        return Ok(Temporal::Date(t.date_days().unwrap_or(0)));
    }
    if kind.has_date() && t.time_nanos().is_none() {
        // date → datetime: midnight.
        map.insert(Arc::from("hour"), Value::Int(0));
    }
    construct_from_map(kind, &map, clock)
}

fn construct(kind: Kind, args: &[Value], clock: StatementClock) -> Result<Value> {
    let t = match args.first() {
        None => now(kind, None, clock)?,
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::String(s)) => parse_temporal_text(kind, s)?,
        Some(Value::Map(map)) => {
            if map.len() == 1 && map.contains_key("timezone") {
                let zone = match map.get("timezone") {
                    Some(Value::String(s)) => Some(parse_zone(s)?),
                    _ => None,
                };
                now(kind, zone, clock)?
            } else {
                construct_from_map(kind, map, clock)?
            }
        }
        Some(Value::Temporal(t)) => convert(kind, t, clock)?,
        Some(other) => {
            return Err(arg_error(format!(
                "{}() does not accept {}",
                kind.name(),
                other.type_name()
            )));
        }
    };
    Ok(Value::Temporal(t))
}

fn duration_from_map(map: &MapValue) -> Result<Duration> {
    let mut months = 0.0;
    let mut days = 0.0;
    let mut seconds = 0.0;
    let mut int_nanos: i64 = 0;
    for (key, value) in map.iter() {
        let n = match value {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            Value::Null => continue,
            other => {
                return Err(arg_error(format!(
                    "duration field '{key}' must be a number, not {}",
                    other.type_name()
                )));
            }
        };
        match &**key {
            "years" => months += n * 12.0,
            "quarters" => months += n * 3.0,
            "months" => months += n,
            "weeks" => days += n * 7.0,
            "days" => days += n,
            "hours" => seconds += n * 3600.0,
            "minutes" => seconds += n * 60.0,
            "seconds" => seconds += n,
            "milliseconds" => match value {
                Value::Int(i) => int_nanos = int_nanos.saturating_add(i.saturating_mul(1_000_000)),
                _ => seconds += n / 1e3,
            },
            "microseconds" => match value {
                Value::Int(i) => int_nanos = int_nanos.saturating_add(i.saturating_mul(1000)),
                _ => seconds += n / 1e6,
            },
            "nanoseconds" => match value {
                Value::Int(i) => int_nanos = int_nanos.saturating_add(*i),
                _ => seconds += n / 1e9,
            },
            other => return Err(arg_error(format!("unknown duration field '{other}'"))),
        }
    }
    let d = fractional(months, days, seconds);
    Ok(Duration::new(
        d.months,
        d.days,
        d.seconds,
        d.nanos.saturating_add(int_nanos),
    ))
}

fn truncate(
    kind: Kind,
    unit: &str,
    t: &Temporal,
    overrides: Option<&MapValue>,
    clock: StatementClock,
) -> Result<Temporal> {
    let days = t.date_days();
    let nanos = t.time_nanos().unwrap_or(0);
    let unit = unit.to_ascii_lowercase();
    let new_days = match (days, unit.as_str()) {
        (Some(d), "millennium" | "century" | "decade" | "year" | "quarter" | "month") => {
            let (y, m, _) = civil_from_days(d);
            let (y, m) = match unit.as_str() {
                "millennium" => (y.div_euclid(1000) * 1000, 1),
                "century" => (y.div_euclid(100) * 100, 1),
                "decade" => (y.div_euclid(10) * 10, 1),
                "year" => (y, 1),
                "quarter" => (y, (m - 1) / 3 * 3 + 1),
                _ => (y, m),
            };
            Some(days_from_civil(y, m, 1))
        }
        (Some(d), "weekyear") => Some(week_one(iso_week(d).0)),
        (Some(d), "week") => Some(d - (day_of_week(d) - 1)),
        (d, _) => d,
    };
    let date_unit = matches!(
        unit.as_str(),
        "millennium"
            | "century"
            | "decade"
            | "year"
            | "weekyear"
            | "quarter"
            | "month"
            | "week"
            | "day"
    );
    let new_nanos = if date_unit {
        0
    } else {
        let step = match unit.as_str() {
            "hour" => 3600 * NANOS_PER_SECOND,
            "minute" => 60 * NANOS_PER_SECOND,
            "second" => NANOS_PER_SECOND,
            "millisecond" => 1_000_000,
            "microsecond" => 1000,
            "nanosecond" => 1,
            other => return Err(arg_error(format!("unknown truncation unit '{other}'"))),
        };
        nanos - nanos % step
    };
    if kind.has_date() && new_days.is_none() {
        return Err(arg_error(format!(
            "cannot truncate a {} to a {}",
            t.type_name(),
            kind.name()
        )));
    }
    let mut map = MapValue::new();
    if let Some(d) = new_days
        && kind.has_date()
    {
        map.insert(Arc::from("date"), Value::Temporal(Temporal::Date(d)));
    }
    if kind.has_time() {
        // The truncated fields are kept as they are; a zone given in the overrides replaces
        // the original one without converting the instant.
        map.insert(
            Arc::from("time"),
            Value::Temporal(Temporal::LocalTime(new_nanos)),
        );
        match t {
            Temporal::DateTime { zone: Some(z), .. } => {
                map.insert(Arc::from("timezone"), Value::from(&**z));
            }
            Temporal::DateTime { offset, .. } | Temporal::Time { offset, .. } => {
                map.insert(Arc::from("timezone"), Value::from(offset_text(*offset)));
            }
            _ => {}
        }
    }
    if let Some(o) = overrides {
        for (k, v) in o.iter() {
            map.insert(k.clone(), v.clone());
        }
    }
    if kind == Kind::Date {
        return Ok(Temporal::Date(date_from_map(&map, new_days)?.unwrap_or(0)));
    }
    construct_from_map(kind, &map, clock)
}

// ---- the function table ----------------------------------------------------------------------

/// Arity of the temporal functions (constructors and their namespaced helpers).
pub fn arity(name: &str) -> Option<(usize, usize)> {
    if Kind::from_name(name).is_some() || name == "duration" {
        return Some((if name == "duration" { 1 } else { 0 }, 1));
    }
    let (ns, f) = name.split_once('.')?;
    if Kind::from_name(ns).is_none() && ns != "duration" {
        return None;
    }
    Some(match (ns, f) {
        ("duration", "between" | "inmonths" | "indays" | "inseconds") => (2, 2),
        (_, "truncate") => (2, 3),
        ("datetime", "fromepoch") => (2, 2),
        ("datetime", "fromepochmillis") => (1, 1),
        (_, "statement" | "transaction" | "realtime") if ns != "duration" => (0, 1),
        _ => return None,
    })
}

/// Calls a temporal function; `None` if `name` is not one. Functions that read "now" read
/// `clock`.
pub fn call(name: &str, args: &[Value], clock: StatementClock) -> Option<Result<Value>> {
    if let Some(kind) = Kind::from_name(name) {
        return Some(construct(kind, args, clock));
    }
    if name == "duration" {
        return Some(match args.first() {
            Some(Value::Null) => Ok(Value::Null),
            Some(Value::String(s)) => parse_duration_text(s).map(Value::Duration),
            Some(Value::Map(m)) => duration_from_map(m).map(Value::Duration),
            Some(Value::Duration(d)) => Ok(Value::Duration(*d)),
            Some(other) => Err(arg_error(format!(
                "duration() does not accept {}",
                other.type_name()
            ))),
            None => Err(arg_error("duration() needs an argument")),
        });
    }
    let (ns, f) = name.split_once('.')?;
    let kind = Kind::from_name(ns);
    Some((|| -> Result<Value> {
        match (ns, f) {
            ("duration", "between" | "inmonths" | "indays" | "inseconds") => {
                let (Value::Temporal(a), Value::Temporal(b)) = (&args[0], &args[1]) else {
                    if args[0].is_null() || args[1].is_null() {
                        return Ok(Value::Null);
                    }
                    return Err(arg_error("duration.between() takes two temporal values"));
                };
                let unit = match f {
                    "inmonths" => "months",
                    "indays" => "days",
                    "inseconds" => "seconds",
                    _ => "all",
                };
                between(a, b, unit).map(Value::Duration)
            }
            (_, "truncate") => {
                let Some(kind) = kind else {
                    return Err(arg_error("truncate needs a temporal type"));
                };
                let Value::String(unit) = &args[0] else {
                    return Err(arg_error("the truncation unit must be a string"));
                };
                let t = match &args[1] {
                    Value::Temporal(t) => t.clone(),
                    Value::Null => return Ok(Value::Null),
                    other => {
                        return Err(arg_error(format!("cannot truncate {}", other.type_name())));
                    }
                };
                let overrides = match args.get(2) {
                    Some(Value::Map(m)) => Some(m.clone()),
                    _ => None,
                };
                truncate(kind, unit, &t, overrides.as_deref(), clock).map(Value::Temporal)
            }
            ("datetime", "fromepoch") => match (&args[0], &args[1]) {
                (Value::Int(s), Value::Int(n)) => datetime_at_instant(
                    *s as i128 * NANOS_PER_SECOND as i128 + *n as i128,
                    Zone::Offset(0),
                )
                .map(Value::Temporal),
                _ => Ok(Value::Null),
            },
            ("datetime", "fromepochmillis") => match &args[0] {
                Value::Int(ms) => datetime_at_instant(*ms as i128 * 1_000_000, Zone::Offset(0))
                    .map(Value::Temporal),
                _ => Ok(Value::Null),
            },
            (_, "statement" | "transaction" | "realtime") => match kind {
                Some(kind) => construct(kind, args, clock),
                None => Err(arg_error("unknown temporal function")),
            },
            _ => Err(arg_error(format!("unknown function {name}"))),
        }
    })())
}
