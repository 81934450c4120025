//! Temporal values: DATE, LOCAL TIME, TIME, LOCAL DATETIME, DATETIME and DURATION.
//!
//! REPRESENTATION
//! ==============
//! ```text
//!   Date            days since 1970-01-01 (proleptic Gregorian)
//!   LocalTime       nanoseconds since midnight
//!   Time            nanoseconds since midnight (local) + UTC offset in seconds
//!   LocalDateTime   days + nanoseconds of the day
//!   DateTime        local days + nanoseconds + offset + optional zone name
//!                   (`2015-07-21T21:40+02:00[Europe/Stockholm]`); its instant is
//!                   local − offset
//!   Duration        months, days, seconds, nanoseconds (0 ≤ nanos < 10⁹) — the three
//!                   calendar units are kept apart because a month and a day have no fixed
//!                   length
//! ```
//! Named zones are resolved with the IANA database bundled by `jiff` (so `1818-07-21` in
//! Stockholm is `+00:53:28`, local mean time); everything else is plain integer arithmetic
//! on the representation above (civil-from-days after H. Hinnant).
//!
//! SEMANTICS (as the openCypher TCK pins them)
//! ===========================================
//! - constructors take a map (`date({year: 1984, week: 10, dayOfWeek: 3})`, calendar, week,
//!   ordinal and quarter forms, selecting from another temporal with `{date: d, day: 28}`),
//!   an ISO 8601 string (basic or extended form), or nothing (the statement's clock);
//! - duration fields may be fractional and cascade down (`{months: 0.75}` is 22 days 19:51:49.5,
//!   a month being 365.2425 / 12 days);
//! - temporal ± duration adds months (clamping the day to the month's end), then days, then
//!   seconds; a date ignores the sub-day part, a time ignores months and days;
//! - comparison is within one type only (times and datetimes by instant); anything else is
//!   null;
//! - `duration.between(a, b)` counts whole months, then whole days, then seconds.

use crate::bind::ArithOp;
use crate::error::{ErrorClass, QueryError, Result};
use crate::exec::ExecContext;
use crate::value::{MapValue, Value};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SECOND;
const SECONDS_PER_DAY: i64 = 86_400;
/// The average Gregorian month, in seconds (365.2425 days / 12).
const SECONDS_PER_MONTH: f64 = 2_629_746.0;
/// Years a temporal may name (Cypher's range; printed with a sign beyond four digits).
const MIN_YEAR: i64 = -999_999_999;
const MAX_YEAR: i64 = 999_999_999;
/// Years the time zone database covers: named zones are only resolved within these.
const ZONE_YEARS: std::ops::RangeInclusive<i64> = -9_999..=9_999;

#[derive(Clone, Debug)]
pub enum Temporal {
    Date(i64),
    LocalTime(i64),
    Time {
        nanos: i64,
        offset: i32,
    },
    LocalDateTime {
        days: i64,
        nanos: i64,
    },
    DateTime {
        days: i64,
        nanos: i64,
        offset: i32,
        zone: Option<Arc<str>>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Duration {
    pub months: i64,
    pub days: i64,
    pub seconds: i64,
    /// 0 ≤ nanos < 10⁹
    pub nanos: i64,
}

fn arg_error(message: impl Into<String>) -> QueryError {
    QueryError::runtime(ErrorClass::ArgumentError, "InvalidArgumentValue", message)
}

// ---- civil calendar --------------------------------------------------------------------------

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a day number.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// ISO day of week, Monday = 1.
fn day_of_week(days: i64) -> i64 {
    (days + 3).rem_euclid(7) + 1
}

/// Monday of ISO week 1 of `week_year`.
fn week_one(week_year: i64) -> i64 {
    let jan4 = days_from_civil(week_year, 1, 4);
    jan4 - (day_of_week(jan4) - 1)
}

/// (week year, week, day of week) of a day.
fn iso_week(days: i64) -> (i64, i64, i64) {
    let (y, _, _) = civil_from_days(days);
    let mut week_year = y + 1;
    while days < week_one(week_year) {
        week_year -= 1;
    }
    let week = (days - week_one(week_year)) / 7 + 1;
    (week_year, week, day_of_week(days))
}

fn checked_date(y: i64, m: i64, d: i64) -> Result<i64> {
    if !(MIN_YEAR..=MAX_YEAR).contains(&y)
        || !(1..=12).contains(&m)
        || d < 1
        || d > days_in_month(y, m)
    {
        return Err(arg_error(format!("invalid date {y}-{m}-{d}")));
    }
    Ok(days_from_civil(y, m, d))
}

fn add_months(days: i64, months: i64) -> Result<i64> {
    let (y, m, d) = civil_from_days(days);
    let total = y as i128 * 12 + (m - 1) as i128 + months as i128;
    let (ny, nm) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as i64);
    if !(MIN_YEAR as i128..=MAX_YEAR as i128).contains(&ny) {
        return Err(arg_error("date out of range"));
    }
    let ny = ny as i64;
    Ok(days_from_civil(ny, nm, d.min(days_in_month(ny, nm))))
}

/// `days + more`, or an error past the representable range.
fn add_days(days: i64, more: i64) -> Result<i64> {
    days.checked_add(more)
        .filter(|d| d.unsigned_abs() < 400_000_000_000)
        .ok_or_else(|| arg_error("date out of range"))
}

// ---- time zones ------------------------------------------------------------------------------

fn zone(name: &str) -> Result<jiff::tz::TimeZone> {
    jiff::tz::TimeZone::get(name).map_err(|_| arg_error(format!("unknown time zone '{name}'")))
}

/// The offset of zone `name` at local time (days, nanos); gaps and overlaps resolve as
/// `compatible` (the earlier offset before the transition).
fn offset_at_local(name: &str, days: i64, nanos: i64) -> Result<i32> {
    let tz = zone(name)?;
    let (y, m, d) = civil_from_days(days);
    if !ZONE_YEARS.contains(&y) {
        return Err(arg_error(format!(
            "time zone '{name}' cannot be resolved in year {y}"
        )));
    }
    let secs = nanos / NANOS_PER_SECOND;
    let dt = jiff::civil::DateTime::new(
        y as i16,
        m as i8,
        d as i8,
        (secs / 3600) as i8,
        (secs / 60 % 60) as i8,
        (secs % 60) as i8,
        (nanos % NANOS_PER_SECOND) as i32,
    )
    .map_err(|e| arg_error(e.to_string()))?;
    let zoned = tz
        .to_ambiguous_zoned(dt)
        .compatible()
        .map_err(|e| arg_error(e.to_string()))?;
    Ok(zoned.offset().seconds())
}

/// The offset of zone `name` at an instant (seconds since the epoch).
fn offset_at_instant(name: &str, epoch_seconds: i64) -> Result<i32> {
    let tz = zone(name)?;
    let ts = jiff::Timestamp::from_second(epoch_seconds).map_err(|e| arg_error(e.to_string()))?;
    Ok(tz.to_offset(ts).seconds())
}

/// Parses `Z`, `+01`, `+0100`, `+01:00`, `+01:00:30` into seconds.
fn parse_offset(s: &str) -> Option<i32> {
    if s == "Z" {
        return Some(0);
    }
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = s[1..].chars().filter(|c| *c != ':').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (h, m, sec) = match digits.len() {
        2 => (digits[0..2].parse::<i32>().ok()?, 0, 0),
        4 => (digits[0..2].parse().ok()?, digits[2..4].parse().ok()?, 0),
        6 => (
            digits[0..2].parse().ok()?,
            digits[2..4].parse().ok()?,
            digits[4..6].parse().ok()?,
        ),
        _ => return None,
    };
    if h > 18 || m > 59 || sec > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + sec))
}

/// A `timezone` value: an offset or a zone name.
#[derive(Clone)]
enum Zone {
    Offset(i32),
    Named(Arc<str>),
}

fn parse_zone(s: &str) -> Result<Zone> {
    match parse_offset(s) {
        Some(o) => Ok(Zone::Offset(o)),
        None => {
            zone(s)?;
            Ok(Zone::Named(Arc::from(s)))
        }
    }
}

fn make_datetime(days: i64, nanos: i64, zone: Zone) -> Result<Temporal> {
    Ok(match zone {
        Zone::Offset(offset) => Temporal::DateTime {
            days,
            nanos,
            offset,
            zone: None,
        },
        Zone::Named(name) => Temporal::DateTime {
            days,
            nanos,
            offset: offset_at_local(&name, days, nanos)?,
            zone: Some(name),
        },
    })
}

/// A datetime at an instant, shown in `zone`.
fn datetime_at_instant(epoch_nanos: i128, zone: Zone) -> Result<Temporal> {
    let offset = match &zone {
        Zone::Offset(o) => *o,
        Zone::Named(name) => offset_at_instant(
            name,
            (epoch_nanos.div_euclid(NANOS_PER_SECOND as i128)) as i64,
        )?,
    };
    let local = epoch_nanos + offset as i128 * NANOS_PER_SECOND as i128;
    let days = local.div_euclid(NANOS_PER_DAY as i128) as i64;
    let nanos = local.rem_euclid(NANOS_PER_DAY as i128) as i64;
    Ok(Temporal::DateTime {
        days,
        nanos,
        offset,
        zone: match zone {
            Zone::Named(n) => Some(n),
            Zone::Offset(_) => None,
        },
    })
}

// ---- instants, comparison --------------------------------------------------------------------

impl Temporal {
    pub fn type_name(&self) -> &'static str {
        match self {
            Temporal::Date(_) => "DATE",
            Temporal::LocalTime(_) => "LOCAL TIME",
            Temporal::Time { .. } => "TIME",
            Temporal::LocalDateTime { .. } => "LOCAL DATETIME",
            Temporal::DateTime { .. } => "DATETIME",
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Temporal::Date(_) => 0,
            Temporal::LocalTime(_) => 1,
            Temporal::Time { .. } => 2,
            Temporal::LocalDateTime { .. } => 3,
            Temporal::DateTime { .. } => 4,
        }
    }

    /// A key that orders values of one type: days and nanos (instants for zoned types).
    fn key(&self) -> i128 {
        match self {
            Temporal::Date(d) => *d as i128,
            Temporal::LocalTime(n) => *n as i128,
            Temporal::Time { nanos, offset } => {
                *nanos as i128 - *offset as i128 * NANOS_PER_SECOND as i128
            }
            Temporal::LocalDateTime { days, nanos } => {
                *days as i128 * NANOS_PER_DAY as i128 + *nanos as i128
            }
            Temporal::DateTime {
                days,
                nanos,
                offset,
                ..
            } => {
                *days as i128 * NANOS_PER_DAY as i128 + *nanos as i128
                    - *offset as i128 * NANOS_PER_SECOND as i128
            }
        }
    }

    pub fn equals(&self, other: &Temporal) -> Option<bool> {
        Some(self.rank() == other.rank() && self.key() == other.key())
    }

    pub fn compare(&self, other: &Temporal) -> Option<Ordering> {
        (self.rank() == other.rank()).then(|| self.key().cmp(&other.key()))
    }

    pub fn order(&self, other: &Temporal) -> Ordering {
        self.rank()
            .cmp(&other.rank())
            .then_with(|| self.key().cmp(&other.key()))
    }

    pub fn hash_key<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        self.key().hash(state);
    }

    fn date_days(&self) -> Option<i64> {
        match self {
            Temporal::Date(d) => Some(*d),
            Temporal::LocalDateTime { days, .. } | Temporal::DateTime { days, .. } => Some(*days),
            _ => None,
        }
    }

    fn time_nanos(&self) -> Option<i64> {
        match self {
            Temporal::LocalTime(n) | Temporal::Time { nanos: n, .. } => Some(*n),
            Temporal::LocalDateTime { nanos, .. } | Temporal::DateTime { nanos, .. } => {
                Some(*nanos)
            }
            Temporal::Date(_) => None,
        }
    }

    fn zone(&self) -> Option<Zone> {
        match self {
            Temporal::Time { offset, .. } => Some(Zone::Offset(*offset)),
            Temporal::DateTime { zone: Some(z), .. } => Some(Zone::Named(z.clone())),
            Temporal::DateTime { offset, .. } => Some(Zone::Offset(*offset)),
            _ => None,
        }
    }

    fn offset(&self) -> Option<i32> {
        match self {
            Temporal::Time { offset, .. } | Temporal::DateTime { offset, .. } => Some(*offset),
            _ => None,
        }
    }
}

impl Duration {
    /// Builds a normalised duration from possibly out-of-range seconds and nanoseconds.
    pub fn new(months: i64, days: i64, seconds: i64, nanos: i64) -> Duration {
        let seconds = seconds.saturating_add(nanos.div_euclid(NANOS_PER_SECOND));
        Duration {
            months,
            days,
            seconds,
            nanos: nanos.rem_euclid(NANOS_PER_SECOND),
        }
    }

    fn total_nanos(self) -> i128 {
        self.seconds as i128 * NANOS_PER_SECOND as i128 + self.nanos as i128
    }

    pub fn negate(self) -> Duration {
        Duration::new(
            self.months.saturating_neg(),
            self.days.saturating_neg(),
            self.seconds.saturating_neg(),
            -self.nanos,
        )
    }

    /// Scales by a factor, cascading fractions of months into days and of days into seconds.
    pub fn scale(self, factor: f64) -> Duration {
        fractional_nanos(
            self.months as f64 * factor,
            self.days as f64 * factor,
            self.total_nanos() as f64 * factor,
        )
    }

    pub fn divide(self, by: f64) -> Duration {
        fractional_nanos(
            self.months as f64 / by,
            self.days as f64 / by,
            self.total_nanos() as f64 / by,
        )
    }

    fn add(self, other: Duration) -> Duration {
        Duration::new(
            self.months.saturating_add(other.months),
            self.days.saturating_add(other.days),
            self.seconds.saturating_add(other.seconds),
            self.nanos + other.nanos,
        )
    }
}

/// A duration from fractional months, days and seconds.
fn fractional(months: f64, days: f64, seconds: f64) -> Duration {
    fractional_nanos(months, days, seconds * NANOS_PER_SECOND as f64)
}

/// A duration from fractional months, days and nanoseconds: fractions of a month become days
/// (of 365.2425 / 12), fractions of a day nanoseconds; sub-nanosecond remainders are
/// truncated (as Cypher does) after absorbing float noise.
fn fractional_nanos(months: f64, days: f64, nanos: f64) -> Duration {
    let whole_months = months.trunc();
    let days = days + (months - whole_months) * SECONDS_PER_MONTH / SECONDS_PER_DAY as f64;
    let whole_days = days.trunc();
    let nanos = nanos + (days - whole_days) * NANOS_PER_DAY as f64;
    let nanos = if nanos >= 0.0 {
        (nanos + 1e-3).floor()
    } else {
        (nanos - 1e-3).ceil()
    } as i128;
    let seconds = nanos.div_euclid(NANOS_PER_SECOND as i128);
    Duration::new(
        whole_months as i64,
        whole_days as i64,
        seconds.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
        nanos.rem_euclid(NANOS_PER_SECOND as i128) as i64,
    )
}

// ---- printing --------------------------------------------------------------------------------

fn fraction_text(nanos: i64) -> String {
    if nanos == 0 {
        return String::new();
    }
    let s = format!("{nanos:09}");
    format!(".{}", s.trim_end_matches('0'))
}

fn date_text(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!("{y:+05}-{m:02}-{d:02}")
    }
}

fn time_text(nanos: i64) -> String {
    let secs = nanos / NANOS_PER_SECOND;
    let frac = nanos % NANOS_PER_SECOND;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if s == 0 && frac == 0 {
        format!("{h:02}:{m:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}{}", fraction_text(frac))
    }
}

fn offset_text(offset: i32) -> String {
    if offset == 0 {
        return "Z".into();
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    if s == 0 {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{s:02}")
    }
}

fn duration_text(d: &Duration) -> String {
    let mut out = String::from("P");
    let (years, months) = (d.months / 12, d.months % 12);
    if years != 0 {
        out.push_str(&format!("{years}Y"));
    }
    if months != 0 {
        out.push_str(&format!("{months}M"));
    }
    if d.days != 0 {
        out.push_str(&format!("{}D", d.days));
    }
    let total = d.total_nanos();
    if total != 0 {
        out.push('T');
        let negative = total < 0;
        let a = total.abs();
        let secs = (a / NANOS_PER_SECOND as i128) as i64;
        let frac = (a % NANOS_PER_SECOND as i128) as i64;
        let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
        let sign = if negative { "-" } else { "" };
        if h != 0 {
            out.push_str(&format!("{sign}{h}H"));
        }
        if m != 0 {
            out.push_str(&format!("{sign}{m}M"));
        }
        if s != 0 || frac != 0 {
            out.push_str(&format!("{sign}{s}{}S", fraction_text(frac)));
        }
    }
    if out == "P" {
        out.push_str("T0S");
    }
    out
}

/// ISO 8601 text of a temporal value or duration (what `toString` returns).
pub fn text(value: &Value) -> String {
    match value {
        Value::Temporal(t) => match t {
            Temporal::Date(d) => date_text(*d),
            Temporal::LocalTime(n) => time_text(*n),
            Temporal::Time { nanos, offset } => {
                format!("{}{}", time_text(*nanos), offset_text(*offset))
            }
            Temporal::LocalDateTime { days, nanos } => {
                format!("{}T{}", date_text(*days), time_text(*nanos))
            }
            Temporal::DateTime {
                days,
                nanos,
                offset,
                zone,
            } => {
                let mut s = format!(
                    "{}T{}{}",
                    date_text(*days),
                    time_text(*nanos),
                    offset_text(*offset)
                );
                if let Some(z) = zone {
                    s.push_str(&format!("[{z}]"));
                }
                s
            }
        },
        Value::Duration(d) => duration_text(d),
        other => format!("{other:?}"),
    }
}

// ---- parsing ---------------------------------------------------------------------------------

fn num(s: &str) -> Option<i64> {
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_date_text(s: &str) -> Option<i64> {
    let (year_text, rest) = if s.starts_with('+') || s.starts_with('-') {
        let end = s[1..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(s.len(), |i| i + 1);
        (&s[..end], &s[end..])
    } else {
        s.split_at(s.len().min(4))
    };
    let y: i64 = year_text.parse().ok()?;
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    if rest.is_empty() {
        return checked_date(y, 1, 1).ok();
    }
    if let Some(w) = rest.strip_prefix('W') {
        let w = w.replace('-', "");
        let (week, dow) = match w.len() {
            2 => (num(&w)?, 1),
            3 => (num(&w[..2])?, num(&w[2..])?),
            _ => return None,
        };
        return week_date(y, week, dow).ok();
    }
    let digits = rest.replace('-', "");
    match digits.len() {
        2 => checked_date(y, num(&digits)?, 1).ok(),
        3 => ordinal_date(y, num(&digits)?).ok(),
        4 => checked_date(y, num(&digits[..2])?, num(&digits[2..])?).ok(),
        _ => None,
    }
}

fn parse_time_text(s: &str) -> Option<i64> {
    let (main, frac) = match s.find(['.', ',']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = main.replace(':', "");
    let (h, m, sec) = match digits.len() {
        2 => (num(&digits)?, 0, 0),
        4 => (num(&digits[..2])?, num(&digits[2..])?, 0),
        6 => (num(&digits[..2])?, num(&digits[2..4])?, num(&digits[4..])?),
        _ => return None,
    };
    let nanos = match frac {
        Some(f) if !f.is_empty() && f.len() <= 9 => num(f)? * 10i64.pow(9 - f.len() as u32),
        Some(_) => return None,
        None => 0,
    };
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    Some(((h * 60 + m) * 60 + sec) * NANOS_PER_SECOND + nanos)
}

/// Splits `time[offset][[zone]]` into its parts.
fn split_zone(s: &str) -> (&str, Option<&str>, Option<&str>) {
    let (s, zone) = match s.find('[') {
        Some(i) => (&s[..i], s[i + 1..].strip_suffix(']')),
        None => (s, None),
    };
    match s.find(['+', '-', 'Z']) {
        Some(i) => (&s[..i], Some(&s[i..]), zone),
        None => (s, None, zone),
    }
}

fn parse_temporal_text(kind: Kind, s: &str) -> Result<Temporal> {
    let bad = || arg_error(format!("cannot parse '{s}' as a {}", kind.name()));
    match kind {
        Kind::Date => parse_date_text(s).map(Temporal::Date).ok_or_else(bad),
        Kind::LocalTime => parse_time_text(s).map(Temporal::LocalTime).ok_or_else(bad),
        Kind::Time => {
            let (t, off, _) = split_zone(s);
            let nanos = parse_time_text(t).ok_or_else(bad)?;
            let offset = match off {
                Some(o) => parse_offset(o).ok_or_else(bad)?,
                None => 0,
            };
            Ok(Temporal::Time { nanos, offset })
        }
        Kind::LocalDateTime | Kind::DateTime => {
            let (date_part, time_part) = match s.find('T') {
                Some(i) => (&s[..i], &s[i + 1..]),
                None => (s, ""),
            };
            let days = parse_date_text(date_part).ok_or_else(bad)?;
            let (t, off, zone_name) = split_zone(time_part);
            let nanos = if t.is_empty() {
                0
            } else {
                parse_time_text(t).ok_or_else(bad)?
            };
            if kind == Kind::LocalDateTime {
                return Ok(Temporal::LocalDateTime { days, nanos });
            }
            match (off, zone_name) {
                (_, Some(z)) => {
                    zone(z)?;
                    make_datetime(days, nanos, Zone::Named(Arc::from(z)))
                }
                (Some(o), None) => {
                    make_datetime(days, nanos, Zone::Offset(parse_offset(o).ok_or_else(bad)?))
                }
                (None, None) => make_datetime(days, nanos, Zone::Offset(0)),
            }
        }
    }
}

fn parse_duration_text(s: &str) -> Result<Duration> {
    let bad = || arg_error(format!("cannot parse '{s}' as a duration"));
    let body = s.strip_prefix('P').ok_or_else(bad)?;
    // The alternative form P2012-02-02T14:37:21.545.
    if body.len() > 4
        && body.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && body.as_bytes()[4] == b'-'
    {
        let (date_part, time_part) = body.split_once('T').unwrap_or((body, ""));
        let parts: Vec<&str> = date_part.split('-').collect();
        if parts.len() != 3 {
            return Err(bad());
        }
        let (y, m, d) = (
            num(parts[0]).ok_or_else(bad)?,
            num(parts[1]).ok_or_else(bad)?,
            num(parts[2]).ok_or_else(bad)?,
        );
        let nanos = if time_part.is_empty() {
            0
        } else {
            parse_time_text(time_part).ok_or_else(bad)?
        };
        return Ok(Duration::new(y * 12 + m, d, 0, nanos));
    }
    let (date_part, time_part) = body.split_once('T').unwrap_or((body, ""));
    let (mut months, mut days, mut seconds) = (0.0, 0.0, 0.0);
    let mut read = |part: &str, in_time: bool| -> Result<()> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' || c == ',' || c == '-' || c == '+' {
                number.push(if c == ',' { '.' } else { c });
                continue;
            }
            let n: f64 = number.parse().map_err(|_| bad())?;
            number.clear();
            match (c, in_time) {
                ('Y', false) => months += n * 12.0,
                ('M', false) => months += n,
                ('W', false) => days += n * 7.0,
                ('D', false) => days += n,
                ('H', true) => seconds += n * 3600.0,
                ('M', true) => seconds += n * 60.0,
                ('S', true) => seconds += n,
                _ => return Err(bad()),
            }
        }
        if number.is_empty() {
            Ok(())
        } else {
            Err(bad())
        }
    };
    read(date_part, false)?;
    read(time_part, true)?;
    Ok(fractional(months, days, seconds))
}

// ---- constructors from maps ------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "date" => Kind::Date,
            "localtime" => Kind::LocalTime,
            "time" => Kind::Time,
            "localdatetime" => Kind::LocalDateTime,
            "datetime" => Kind::DateTime,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::LocalTime => "local time",
            Kind::Time => "time",
            Kind::LocalDateTime => "local datetime",
            Kind::DateTime => "datetime",
        }
    }

    fn has_date(self) -> bool {
        matches!(self, Kind::Date | Kind::LocalDateTime | Kind::DateTime)
    }

    fn has_time(self) -> bool {
        !matches!(self, Kind::Date)
    }
}

fn week_date(week_year: i64, week: i64, dow: i64) -> Result<i64> {
    if !(1..=53).contains(&week)
        || !(1..=7).contains(&dow)
        || !(MIN_YEAR..=MAX_YEAR).contains(&week_year)
    {
        return Err(arg_error("invalid week date"));
    }
    let days = week_one(week_year) + (week - 1) * 7 + (dow - 1);
    if week == 53 && iso_week(days).0 != week_year {
        return Err(arg_error("invalid week date"));
    }
    Ok(days)
}

fn ordinal_date(y: i64, ordinal: i64) -> Result<i64> {
    let len = if is_leap(y) { 366 } else { 365 };
    if !(1..=len).contains(&ordinal) || !(MIN_YEAR..=MAX_YEAR).contains(&y) {
        return Err(arg_error("invalid ordinal date"));
    }
    Ok(days_from_civil(y, 1, 1) + ordinal - 1)
}

fn quarter_date(y: i64, quarter: i64, day: i64) -> Result<i64> {
    if !(1..=4).contains(&quarter) {
        return Err(arg_error("invalid quarter"));
    }
    let start = checked_date(y, (quarter - 1) * 3 + 1, 1)?;
    let end = add_months(start, 3)?;
    if day < 1 || start + day > end {
        return Err(arg_error("invalid day of quarter"));
    }
    Ok(start + day - 1)
}

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

fn construct_from_map(kind: Kind, map: &MapValue, ctx: &ExecContext) -> Result<Temporal> {
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
            let zone = tz
                .or(source_zone.clone())
                .unwrap_or_else(|| default_zone(ctx));
            let (_, nanos) = shift(&zone, days, nanos)?;
            let offset = match &zone {
                Zone::Offset(o) => *o,
                Zone::Named(n) => offset_at_instant(n, epoch_seconds_now(ctx))?,
            };
            Temporal::Time { nanos, offset }
        }
        Kind::DateTime => {
            let zone = tz
                .or(source_zone.clone())
                .unwrap_or_else(|| default_zone(ctx));
            let (days, nanos) = shift(&zone, days, nanos)?;
            make_datetime(days, nanos, zone)?
        }
    })
}

fn default_zone(_ctx: &ExecContext) -> Zone {
    Zone::Offset(0)
}

fn epoch_nanos_now(ctx: &ExecContext) -> i128 {
    ctx.state
        .statement_time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

fn epoch_seconds_now(ctx: &ExecContext) -> i64 {
    (epoch_nanos_now(ctx) / NANOS_PER_SECOND as i128) as i64
}

/// `date()`, `datetime({timezone: 'Europe/Berlin'})`, ...: the statement's clock.
fn now(kind: Kind, zone: Option<Zone>, ctx: &ExecContext) -> Result<Temporal> {
    let zone = zone.unwrap_or_else(|| default_zone(ctx));
    let current = datetime_at_instant(epoch_nanos_now(ctx), zone)?;
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
fn convert(kind: Kind, t: &Temporal, ctx: &ExecContext) -> Result<Temporal> {
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
    construct_from_map(kind, &map, ctx)
}

fn construct(kind: Kind, args: &[Value], ctx: &ExecContext) -> Result<Value> {
    let t = match args.first() {
        None => now(kind, None, ctx)?,
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::String(s)) => parse_temporal_text(kind, s)?,
        Some(Value::Map(map)) => {
            if map.len() == 1 && map.contains_key("timezone") {
                let zone = match map.get("timezone") {
                    Some(Value::String(s)) => Some(parse_zone(s)?),
                    _ => None,
                };
                now(kind, zone, ctx)?
            } else {
                construct_from_map(kind, map, ctx)?
            }
        }
        Some(Value::Temporal(t)) => convert(kind, t, ctx)?,
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

// ---- between, truncate -----------------------------------------------------------------------

/// (days, nanos) on a common local timeline for `between`; zoned values are shifted to the
/// other operand's offset so that instants are compared.
fn between_parts(a: &Temporal, b: &Temporal) -> (Option<i64>, i64, Option<i64>, i64) {
    let a_days = a.date_days();
    let b_days = b.date_days();
    let mut a_nanos = a.time_nanos().unwrap_or(0);
    let b_nanos = b.time_nanos().unwrap_or(0);
    let mut a_days_adj = a_days;
    if let (Some(oa), Some(ob)) = (a.offset(), b.offset()) {
        let shifted = a_days.unwrap_or(0) as i128 * NANOS_PER_DAY as i128
            + a_nanos as i128
            + (ob - oa) as i128 * NANOS_PER_SECOND as i128;
        a_nanos = shifted.rem_euclid(NANOS_PER_DAY as i128) as i64;
        if a_days.is_some() {
            a_days_adj = Some(shifted.div_euclid(NANOS_PER_DAY as i128) as i64);
        }
    }
    (a_days_adj, a_nanos, b_days, b_nanos)
}

/// A value without an offset, read in the zone of a zoned datetime (on that datetime's date
/// if it has none), so that `between` measures elapsed time across DST changes.
fn in_zone_of(local: &Temporal, zoned: &Temporal) -> Result<Option<Temporal>> {
    let (Temporal::DateTime { days, .. }, None) = (zoned, local.offset()) else {
        return Ok(None);
    };
    let Some(zone) = zoned.zone() else {
        return Ok(None);
    };
    let date = local.date_days().unwrap_or(*days);
    make_datetime(date, local.time_nanos().unwrap_or(0), zone).map(Some)
}

fn between(a: &Temporal, b: &Temporal, unit: &str) -> Result<Duration> {
    let a_zoned = in_zone_of(a, b)?;
    let b_zoned = in_zone_of(b, a)?;
    let a = a_zoned.as_ref().unwrap_or(a);
    let b = b_zoned.as_ref().unwrap_or(b);
    let (a_days, a_nanos, b_days, b_nanos) = between_parts(a, b);
    let has_dates = a_days.is_some() && b_days.is_some();
    let (ad, bd) = if has_dates {
        (a_days.unwrap_or(0), b_days.unwrap_or(0))
    } else {
        (0, 0)
    };
    let total = |ad: i64, an: i64, bd: i64, bn: i64| -> i128 {
        (bd - ad) as i128 * NANOS_PER_DAY as i128 + (bn - an) as i128
    };
    let diff = total(ad, a_nanos, bd, b_nanos);
    match unit {
        "seconds" => {
            let secs = (diff / NANOS_PER_SECOND as i128) as i64;
            let nanos = (diff % NANOS_PER_SECOND as i128) as i64;
            Ok(Duration::new(0, 0, secs, nanos))
        }
        "days" => Ok(Duration::new(
            0,
            (diff / NANOS_PER_DAY as i128) as i64,
            0,
            0,
        )),
        _ => {
            let mut months = 0;
            if has_dates {
                let (ay, am, _) = civil_from_days(ad);
                let (by, bm, _) = civil_from_days(bd);
                months = (by - ay) * 12 + (bm - am);
                let past = |m: i64| -> Result<bool> {
                    let moved = add_months(ad, m)?;
                    let rest = total(moved, a_nanos, bd, b_nanos);
                    Ok(if m > 0 { rest < 0 } else { rest > 0 })
                };
                if months != 0 && past(months)? {
                    months -= months.signum();
                }
            }
            if unit == "months" {
                return Ok(Duration::new(months, 0, 0, 0));
            }
            let moved = if has_dates {
                add_months(ad, months)?
            } else {
                0
            };
            let rest = total(moved, a_nanos, bd, b_nanos);
            let days = (rest / NANOS_PER_DAY as i128) as i64;
            let rest = rest % NANOS_PER_DAY as i128;
            Ok(Duration::new(
                months,
                days,
                (rest / NANOS_PER_SECOND as i128) as i64,
                (rest % NANOS_PER_SECOND as i128) as i64,
            ))
        }
    }
}

fn truncate(
    kind: Kind,
    unit: &str,
    t: &Temporal,
    overrides: Option<&MapValue>,
    ctx: &ExecContext,
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
    construct_from_map(kind, &map, ctx)
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

/// Calls a temporal function; `None` if `name` is not one.
pub fn call(name: &str, args: &[Value], ctx: &mut ExecContext) -> Option<Result<Value>> {
    if let Some(kind) = Kind::from_name(name) {
        return Some(construct(kind, args, ctx));
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
                truncate(kind, unit, &t, overrides.as_deref(), ctx).map(Value::Temporal)
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
                Some(kind) => construct(kind, args, ctx),
                None => Err(arg_error("unknown temporal function")),
            },
            _ => Err(arg_error(format!("unknown function {name}"))),
        }
    })())
}

// ---- arithmetic and components ---------------------------------------------------------------

fn add_duration(t: &Temporal, d: &Duration) -> Result<Temporal> {
    let shift_time = |nanos: i64| -> i64 {
        (nanos as i128 + d.total_nanos()).rem_euclid(NANOS_PER_DAY as i128) as i64
    };
    let shift_datetime = |days: i64, nanos: i64| -> Result<(i64, i64)> {
        let days = add_days(add_months(days, d.months)?, d.days)?;
        let local = days as i128 * NANOS_PER_DAY as i128 + nanos as i128 + d.total_nanos();
        Ok((
            local.div_euclid(NANOS_PER_DAY as i128) as i64,
            local.rem_euclid(NANOS_PER_DAY as i128) as i64,
        ))
    };
    Ok(match t {
        Temporal::Date(days) => {
            let whole_days = (d.total_nanos() / NANOS_PER_DAY as i128) as i64;
            Temporal::Date(add_days(
                add_days(add_months(*days, d.months)?, d.days)?,
                whole_days,
            )?)
        }
        Temporal::LocalTime(n) => Temporal::LocalTime(shift_time(*n)),
        Temporal::Time { nanos, offset } => Temporal::Time {
            nanos: shift_time(*nanos),
            offset: *offset,
        },
        Temporal::LocalDateTime { days, nanos } => {
            let (days, nanos) = shift_datetime(*days, *nanos)?;
            Temporal::LocalDateTime { days, nanos }
        }
        Temporal::DateTime {
            days,
            nanos,
            offset,
            zone,
        } => {
            let (days, nanos) = shift_datetime(*days, *nanos)?;
            match zone {
                Some(z) => make_datetime(days, nanos, Zone::Named(z.clone()))?,
                None => Temporal::DateTime {
                    days,
                    nanos,
                    offset: *offset,
                    zone: None,
                },
            }
        }
    })
}

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

// ---- storage -------------------------------------------------------------------------------

/// The stored form of a temporal value or duration.
pub fn to_storage(value: &Value) -> Option<plexus_types::TemporalValue> {
    use plexus_types::TemporalValue as S;
    Some(match value {
        Value::Temporal(Temporal::Date(days)) => S::Date { days: *days },
        Value::Temporal(Temporal::LocalTime(nanos)) => S::LocalTime { nanos: *nanos },
        Value::Temporal(Temporal::Time { nanos, offset }) => S::Time {
            nanos: *nanos,
            offset_seconds: *offset,
        },
        Value::Temporal(Temporal::LocalDateTime { days, nanos }) => S::LocalDateTime {
            days: *days,
            nanos: *nanos,
        },
        Value::Temporal(Temporal::DateTime {
            days,
            nanos,
            offset,
            zone,
        }) => S::DateTime {
            days: *days,
            nanos: *nanos,
            offset_seconds: *offset,
            zone: zone.clone(),
        },
        Value::Duration(d) => S::Duration {
            months: d.months,
            days: d.days,
            seconds: d.seconds,
            nanos: d.nanos,
        },
        _ => return None,
    })
}

/// A stored temporal value as a Cypher value.
pub fn from_storage(t: plexus_types::TemporalValue) -> Value {
    use plexus_types::TemporalValue as S;
    match t {
        S::Date { days } => Value::Temporal(Temporal::Date(days)),
        S::LocalTime { nanos } => Value::Temporal(Temporal::LocalTime(nanos)),
        S::Time {
            nanos,
            offset_seconds,
        } => Value::Temporal(Temporal::Time {
            nanos,
            offset: offset_seconds,
        }),
        S::LocalDateTime { days, nanos } => {
            Value::Temporal(Temporal::LocalDateTime { days, nanos })
        }
        S::DateTime {
            days,
            nanos,
            offset_seconds,
            zone,
        } => Value::Temporal(Temporal::DateTime {
            days,
            nanos,
            offset: offset_seconds,
            zone,
        }),
        S::Duration {
            months,
            days,
            seconds,
            nanos,
        } => Value::Duration(Duration::new(months, days, seconds, nanos)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip_and_weeks() {
        for days in [-800_000, -1, 0, 1, 365, 18_000, 2_900_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(date_text(week_date(1817, 1, 1).unwrap()), "1816-12-30");
        assert_eq!(date_text(week_date(1818, 53, 1).unwrap()), "1818-12-28");
        let (wy, w, dow) = iso_week(days_from_civil(1984, 10, 11));
        assert_eq!((wy, w, dow), (1984, 41, 4));
    }

    #[test]
    fn durations_print_and_parse() {
        let d = parse_duration_text("P0.75M").unwrap();
        assert_eq!(duration_text(&d), "P22DT19H51M49.5S");
        let d = Duration::new(0, 0, -60, -1_000_000);
        assert_eq!(duration_text(&d), "PT-1M-0.001S");
        let d = parse_duration_text("P2012-02-02T14:37:21.545").unwrap();
        assert_eq!(duration_text(&d), "P2012Y2M2DT14H37M21.545S");
    }

    #[test]
    fn strings_parse_in_basic_and_extended_forms() {
        let t = parse_temporal_text(Kind::DateTime, "2015-W30T2140-02").unwrap();
        assert_eq!(text(&Value::Temporal(t)), "2015-07-20T21:40-02:00");
        let t = parse_temporal_text(Kind::Time, "214032.142Z").unwrap();
        assert_eq!(text(&Value::Temporal(t)), "21:40:32.142Z");
        let t = parse_temporal_text(Kind::DateTime, "1818-07-21T21:40:32.142[Europe/Stockholm]")
            .unwrap();
        assert_eq!(
            text(&Value::Temporal(t)),
            "1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]"
        );
    }
}
