//! Temporal arithmetic: temporal ± duration (months first, clamping the day to the month's
//! end, then days, then the time of day) and `duration.between` (whole months, then whole
//! days, then seconds). Duration ± duration and duration × or ÷ a number are methods of
//! [`Duration`]; the `+ - * /` of Cypher values dispatch to all of these in
//! `crate::temporal_fns::arith`.

use super::*;

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

pub(crate) fn between(a: &Temporal, b: &Temporal, unit: &str) -> Result<Duration> {
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

/// `t + d`: months first (clamping the day to the month's end), then days, then the time
/// of day; a named zone is re-resolved at the new local time.
pub(crate) fn add_duration(t: &Temporal, d: &Duration) -> Result<Temporal> {
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
