//! ISO 8601 text of temporal values and durations, as Cypher's `toString` writes them:
//! `2015-07-21`, `21:40:32.142+01:00`, `1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]`,
//! `P1Y2M3DT4H5M6.5S`. Minutes are always shown, seconds only when not zero, fractions without
//! trailing zeros; years beyond four digits carry a sign. The text is each type's `Display`.

use super::{Duration, NANOS_PER_SECOND, Temporal, civil_from_days};
use std::fmt;

fn fraction_text(nanos: i64) -> String {
    if nanos == 0 {
        return String::new();
    }
    let s = format!("{nanos:09}");
    format!(".{}", s.trim_end_matches('0'))
}

pub(super) fn date_text(days: i64) -> String {
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

pub(crate) fn offset_text(offset: i32) -> String {
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

/// ISO 8601 text of a temporal value (what `toString` returns).
impl fmt::Display for Temporal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Temporal::Date(d) => f.write_str(&date_text(*d)),
            Temporal::LocalTime(n) => f.write_str(&time_text(*n)),
            Temporal::Time { nanos, offset } => {
                write!(f, "{}{}", time_text(*nanos), offset_text(*offset))
            }
            Temporal::LocalDateTime { days, nanos } => {
                write!(f, "{}T{}", date_text(*days), time_text(*nanos))
            }
            Temporal::DateTime {
                days,
                nanos,
                offset,
                zone,
            } => {
                write!(
                    f,
                    "{}T{}{}",
                    date_text(*days),
                    time_text(*nanos),
                    offset_text(*offset)
                )?;
                if let Some(z) = zone {
                    write!(f, "[{z}]")?;
                }
                Ok(())
            }
        }
    }
}

/// ISO 8601 text of a duration (what `toString` returns): `P1Y2M3DT4H5M6.5S`, `PT0S`.
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&duration_text(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::parse::parse_duration_text;

    #[test]
    fn durations_print_and_parse() {
        let d = parse_duration_text("P0.75M").unwrap();
        assert_eq!(duration_text(&d), "P22DT19H51M49.5S");
        let d = Duration::new(0, 0, -60, -1_000_000);
        assert_eq!(duration_text(&d), "PT-1M-0.001S");
        let d = parse_duration_text("P2012-02-02T14:37:21.545").unwrap();
        assert_eq!(duration_text(&d), "P2012Y2M2DT14H37M21.545S");
    }
}
