//! ISO 8601 text to temporal values and durations: dates in calendar, week, ordinal and
//! quarter forms, times with fractions, offsets and zone names (`[Europe/Stockholm]`), basic
//! (`20150721T214032`) and extended (`2015-07-21T21:40:32`) forms; durations in the unit
//! form (`P1Y2M3DT4H`, fractions cascading down) and the date-and-time form
//! (`P2012-02-02T14:37:21.545`).

use super::*;

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

pub(crate) fn parse_temporal_text(kind: Kind, s: &str) -> Result<Temporal> {
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

pub(crate) fn parse_duration_text(s: &str) -> Result<Duration> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_parse_in_basic_and_extended_forms() {
        let t = parse_temporal_text(Kind::DateTime, "2015-W30T2140-02").unwrap();
        assert_eq!(t.to_string(), "2015-07-20T21:40-02:00");
        let t = parse_temporal_text(Kind::Time, "214032.142Z").unwrap();
        assert_eq!(t.to_string(), "21:40:32.142Z");
        let t = parse_temporal_text(Kind::DateTime, "1818-07-21T21:40:32.142[Europe/Stockholm]")
            .unwrap();
        assert_eq!(
            t.to_string(),
            "1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]"
        );
    }
}
