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
//! - temporal ± duration adds months (clamping the day to the month's end), then days, then
//!   seconds; a date ignores the sub-day part, a time ignores months and days;
//! - duration fields may be fractional and cascade down (`P0.75M`, like
//!   `duration({months: 0.75})`, is 22 days 19:51:49.5, a month being 365.2425 / 12 days);
//!   a duration scaled or divided by a number cascades the same way;
//! - comparison is within one type only (times and datetimes by instant); anything else is
//!   null;
//! - `duration.between(a, b)` counts whole months, then whole days, then seconds.
//!
//! TYPES HERE, FUNCTIONS ON VALUES IN `temporal_fns`
//! ================================================
//! A Cypher [`Value`](crate::value::Value) holds a [`Temporal`] or a [`Duration`], so these
//! types sit below the value: nothing in this module knows a `Value`. What Cypher does with
//! temporal *values* — the constructors from maps and strings (`date({year: 1984})`), the
//! function table (`call`, `arity`), `+ - * /` on values, `t.year` and `toString` — is
//! [`crate::temporal_fns`], which builds on these types. So `value` uses `temporal`,
//! `temporal_fns` uses both, and `temporal` uses neither: no cycle between the modules.
//!
//! THE STATEMENT'S CLOCK
//! =====================
//! `date()`, `datetime.statement()`, ... read one instant per statement, a
//! [`StatementClock`] the executor makes when the statement starts and passes in; nothing
//! here reads the system clock, so a statement sees one "now" however long it runs.
//!
//! FILES
//! =====
//! - this file: the types, the kinds a constructor names, the civil calendar, time zones,
//!   ordering, the parts a component reads (days, nanos, offset, instant);
//! - `format.rs`: ISO 8601 text (`Display`, what `toString` returns);
//! - `parse.rs`: ISO 8601 text in, basic and extended forms;
//! - `arith.rs`: temporal ± duration, duration + duration, `duration.between`.
//!
//! The conversion to and from the stored `plexus_types::TemporalValue` is the value's
//! ([`crate::value`]), which converts every stored property value.

mod arith;
mod format;
mod parse;

pub(crate) use arith::{add_duration, between};
pub(crate) use format::offset_text;
pub(crate) use parse::{parse_duration_text, parse_temporal_text};

use crate::error::{ErrorClass, QueryError, Result};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::SystemTime;

pub(crate) const NANOS_PER_SECOND: i64 = 1_000_000_000;
pub(crate) const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SECOND;
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

/// The instant a statement started, which every temporal function of the statement reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatementClock {
    epoch_nanos: i128,
}

impl StatementClock {
    /// The clock of a statement starting at `time` (before 1970 reads as the epoch).
    pub fn at(time: SystemTime) -> StatementClock {
        let epoch_nanos = time
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        StatementClock { epoch_nanos }
    }

    /// The clock of a statement starting now.
    pub fn now() -> StatementClock {
        StatementClock::at(SystemTime::now())
    }

    /// Nanoseconds since 1970-01-01T00:00Z.
    pub fn epoch_nanos(self) -> i128 {
        self.epoch_nanos
    }

    /// Milliseconds since 1970-01-01T00:00Z (what `timestamp()` returns).
    pub fn epoch_millis(self) -> i64 {
        (self.epoch_nanos / 1_000_000) as i64
    }

    pub(crate) fn epoch_seconds(self) -> i64 {
        (self.epoch_nanos / NANOS_PER_SECOND as i128) as i64
    }
}

/// The temporal type a constructor or a text names: `date`, `localtime`, `time`,
/// `localdatetime`, `datetime` (a duration is not one: it has its own constructor).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
}

impl Kind {
    pub(crate) fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "date" => Kind::Date,
            "localtime" => Kind::LocalTime,
            "time" => Kind::Time,
            "localdatetime" => Kind::LocalDateTime,
            "datetime" => Kind::DateTime,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::LocalTime => "local time",
            Kind::Time => "time",
            Kind::LocalDateTime => "local datetime",
            Kind::DateTime => "datetime",
        }
    }

    pub(crate) fn has_date(self) -> bool {
        matches!(self, Kind::Date | Kind::LocalDateTime | Kind::DateTime)
    }

    pub(crate) fn has_time(self) -> bool {
        !matches!(self, Kind::Date)
    }
}

pub(crate) fn arg_error(message: impl Into<String>) -> QueryError {
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
pub(crate) fn day_of_week(days: i64) -> i64 {
    (days + 3).rem_euclid(7) + 1
}

/// Monday of ISO week 1 of `week_year`.
pub(crate) fn week_one(week_year: i64) -> i64 {
    let jan4 = days_from_civil(week_year, 1, 4);
    jan4 - (day_of_week(jan4) - 1)
}

/// (week year, week, day of week) of a day.
pub(crate) fn iso_week(days: i64) -> (i64, i64, i64) {
    let (y, _, _) = civil_from_days(days);
    let mut week_year = y + 1;
    while days < week_one(week_year) {
        week_year -= 1;
    }
    let week = (days - week_one(week_year)) / 7 + 1;
    (week_year, week, day_of_week(days))
}

pub(crate) fn checked_date(y: i64, m: i64, d: i64) -> Result<i64> {
    if !(MIN_YEAR..=MAX_YEAR).contains(&y)
        || !(1..=12).contains(&m)
        || d < 1
        || d > days_in_month(y, m)
    {
        return Err(arg_error(format!("invalid date {y}-{m}-{d}")));
    }
    Ok(days_from_civil(y, m, d))
}

pub(crate) fn week_date(week_year: i64, week: i64, dow: i64) -> Result<i64> {
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

pub(crate) fn ordinal_date(y: i64, ordinal: i64) -> Result<i64> {
    let len = if is_leap(y) { 366 } else { 365 };
    if !(1..=len).contains(&ordinal) || !(MIN_YEAR..=MAX_YEAR).contains(&y) {
        return Err(arg_error("invalid ordinal date"));
    }
    Ok(days_from_civil(y, 1, 1) + ordinal - 1)
}

pub(crate) fn quarter_date(y: i64, quarter: i64, day: i64) -> Result<i64> {
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
pub(crate) fn offset_at_local(name: &str, days: i64, nanos: i64) -> Result<i32> {
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
pub(crate) fn offset_at_instant(name: &str, epoch_seconds: i64) -> Result<i32> {
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
pub(crate) enum Zone {
    Offset(i32),
    Named(Arc<str>),
}

pub(crate) fn parse_zone(s: &str) -> Result<Zone> {
    match parse_offset(s) {
        Some(o) => Ok(Zone::Offset(o)),
        None => {
            zone(s)?;
            Ok(Zone::Named(Arc::from(s)))
        }
    }
}

pub(crate) fn make_datetime(days: i64, nanos: i64, zone: Zone) -> Result<Temporal> {
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
pub(crate) fn datetime_at_instant(epoch_nanos: i128, zone: Zone) -> Result<Temporal> {
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
    pub(crate) fn key(&self) -> i128 {
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

    pub(crate) fn date_days(&self) -> Option<i64> {
        match self {
            Temporal::Date(d) => Some(*d),
            Temporal::LocalDateTime { days, .. } | Temporal::DateTime { days, .. } => Some(*days),
            _ => None,
        }
    }

    pub(crate) fn time_nanos(&self) -> Option<i64> {
        match self {
            Temporal::LocalTime(n) | Temporal::Time { nanos: n, .. } => Some(*n),
            Temporal::LocalDateTime { nanos, .. } | Temporal::DateTime { nanos, .. } => {
                Some(*nanos)
            }
            Temporal::Date(_) => None,
        }
    }

    pub(crate) fn zone(&self) -> Option<Zone> {
        match self {
            Temporal::Time { offset, .. } => Some(Zone::Offset(*offset)),
            Temporal::DateTime { zone: Some(z), .. } => Some(Zone::Named(z.clone())),
            Temporal::DateTime { offset, .. } => Some(Zone::Offset(*offset)),
            _ => None,
        }
    }

    pub(crate) fn offset(&self) -> Option<i32> {
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

    pub(crate) fn total_nanos(self) -> i128 {
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

    pub(crate) fn add(self, other: Duration) -> Duration {
        Duration::new(
            self.months.saturating_add(other.months),
            self.days.saturating_add(other.days),
            self.seconds.saturating_add(other.seconds),
            self.nanos + other.nanos,
        )
    }
}

/// A duration from fractional months, days and seconds.
pub(crate) fn fractional(months: f64, days: f64, seconds: f64) -> Duration {
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

#[cfg(test)]
mod tests {
    use super::format::date_text;
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
}
