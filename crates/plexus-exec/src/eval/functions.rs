//! Scalar functions: the implementations of the names, arities and argument types the binder
//! checks (`plexus_plan::catalog`). Names are matched case-insensitively (the binder
//! lower-cases them). An argument whose type the binder could not know is checked here: a
//! value of the wrong type is a run-time `TypeError` (`InvalidArgumentValue`), a value of the
//! right type outside the function's domain an `ArgumentError`.
//! Temporal constructors and their namespaced helpers live in `plexus_value::temporal_fns`.

use super::{ExecContext, entity_error, entity_properties};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::temporal_fns;
use plexus_value::value::Value;

fn type_error(name: &str, value: &Value) -> QueryError {
    QueryError::runtime(
        ErrorClass::TypeError,
        "InvalidArgumentValue",
        format!(
            "{name}() does not accept an argument of type {}",
            value.type_name()
        ),
    )
}

/// A negative start or length of `substring`, `left` or `right`: Neo4j fails with a Java
/// `IndexOutOfBoundsException` (a `DatabaseError`, as if the server were at fault); Plexus
/// names the client's mistake.
fn negative_length(name: &str) -> QueryError {
    QueryError::runtime(
        ErrorClass::ArgumentError,
        "NegativeIntegerArgument",
        format!("{name}() start and length must not be negative"),
    )
}

fn number(name: &str, value: &Value) -> Result<Option<f64>> {
    match value {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i as f64)),
        Value::Float(f) => Ok(Some(*f)),
        other => Err(type_error(name, other)),
    }
}

fn float_fn(name: &str, args: &[Value], f: impl Fn(f64) -> f64) -> Result<Value> {
    Ok(number(name, &args[0])?.map_or(Value::Null, |x| Value::Float(f(x))))
}

fn string_arg<'v>(name: &str, value: &'v Value) -> Result<Option<&'v str>> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        other => Err(type_error(name, other)),
    }
}

/// Parses Cypher's string forms of numbers (`'1'`, `' 2.5 '`, `'1e3'`).
fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("nan") || t.to_ascii_lowercase().contains("inf") {
        return None;
    }
    t.parse::<f64>().ok()
}

/// What `toInteger` makes of a string.
#[derive(Debug, PartialEq)]
enum StringInteger {
    Int(i64),
    /// Not a decimal number: `toInteger` answers null.
    NotANumber,
    /// A decimal number outside the integer range: an error for `toInteger`, null for
    /// `toIntegerOrNull`.
    OutOfRange,
}

/// Neo4j's string-to-integer rule: an integer literal with an optional sign, else a decimal
/// number (`'2.9'`, `'1e3'`, `'.5'`) truncated toward zero when its exact value lies in the
/// integer range. Nothing else is a number: no surrounding whitespace (unlike `toFloat`,
/// which trims), no hex, no `NaN` or `Infinity`.
fn parse_integer(s: &str) -> StringInteger {
    if let Ok(i) = s.parse::<i64>() {
        return StringInteger::Int(i);
    }
    let (negative, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (int_digits, frac_digits) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if int_digits.len() + frac_digits.len() == 0
        || !all_digits(int_digits)
        || !all_digits(frac_digits)
    {
        return StringInteger::NotANumber;
    }
    // The exponent must fit a 32-bit integer, as Java's BigDecimal requires.
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !all_digits(digits) {
                return StringInteger::NotANumber;
            }
            match e.parse::<i32>() {
                Ok(e) => i64::from(e),
                Err(_) => return StringInteger::NotANumber,
            }
        }
    };
    // value = digits × 10^shift, digits without leading zeros.
    let joined = format!("{int_digits}{frac_digits}");
    let digits = joined.trim_start_matches('0');
    if digits.is_empty() {
        return StringInteger::Int(0);
    }
    let shift = exponent - frac_digits.len() as i64;
    // More than 20 integer digits is beyond any i64 (19 digits) whatever the fraction.
    const MAX_INTEGER_DIGITS: i64 = 20;
    let (whole, fraction_nonzero) = if shift >= 0 {
        if digits.len() as i64 + shift > MAX_INTEGER_DIGITS {
            return StringInteger::OutOfRange;
        }
        (format!("{digits}{}", "0".repeat(shift as usize)), false)
    } else {
        let cut = digits.len() as i64 + shift;
        if cut <= 0 {
            (String::new(), true)
        } else {
            let (w, f) = digits.split_at(cut as usize);
            if w.len() as i64 > MAX_INTEGER_DIGITS {
                return StringInteger::OutOfRange;
            }
            (w.to_string(), f.bytes().any(|b| b != b'0'))
        }
    };
    let magnitude: i128 = if whole.is_empty() {
        0
    } else {
        match whole.parse() {
            Ok(m) => m,
            Err(_) => return StringInteger::OutOfRange,
        }
    };
    let truncated = if negative { -magnitude } else { magnitude };
    // The exact value, fraction included, must lie in the range (a fraction past MAX or
    // MIN is out of range even though its truncation is not).
    let below =
        truncated < i128::from(i64::MIN) || (truncated == i128::from(i64::MIN) && fraction_nonzero);
    let above =
        truncated > i128::from(i64::MAX) || (truncated == i128::from(i64::MAX) && fraction_nonzero);
    if below || above {
        return StringInteger::OutOfRange;
    }
    StringInteger::Int(truncated as i64)
}

fn to_integer(value: &Value, strict: bool) -> Result<Value> {
    Ok(match value {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Int(*i),
        Value::Float(f) => {
            if f.is_nan() || f.is_infinite() || f.abs() >= 9.3e18 {
                Value::Null
            } else {
                Value::Int(f.trunc() as i64)
            }
        }
        Value::String(s) => match parse_integer(s) {
            StringInteger::Int(i) => Value::Int(i),
            StringInteger::NotANumber => Value::Null,
            StringInteger::OutOfRange if strict => {
                return Err(QueryError::runtime(
                    ErrorClass::TypeError,
                    "IntegerOverflow",
                    format!("toInteger(): integer, {s}, is too large"),
                ));
            }
            StringInteger::OutOfRange => Value::Null,
        },
        Value::Bool(b) => Value::Int(*b as i64),
        other if strict => return Err(type_error("toInteger", other)),
        _ => Value::Null,
    })
}

fn to_float(value: &Value, strict: bool) -> Result<Value> {
    Ok(match value {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Float(*i as f64),
        Value::Float(f) => Value::Float(*f),
        Value::String(s) => parse_float(s).map_or(Value::Null, Value::Float),
        other if strict => return Err(type_error("toFloat", other)),
        _ => Value::Null,
    })
}

fn to_boolean(value: &Value, strict: bool) -> Result<Value> {
    Ok(match value {
        Value::Null => Value::Null,
        Value::Bool(b) => Value::Bool(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Null,
        },
        Value::Int(i) => Value::Bool(*i != 0),
        other if strict => return Err(type_error("toBoolean", other)),
        _ => Value::Null,
    })
}

fn to_string(value: &Value, strict: bool) -> Result<Value> {
    Ok(match value {
        Value::Null => Value::Null,
        Value::String(s) => Value::String(s.clone()),
        Value::Int(_)
        | Value::Float(_)
        | Value::Bool(_)
        | Value::Temporal(_)
        | Value::Duration(_) => Value::from(plexus_value::format::plain_text(value)),
        other if strict => return Err(type_error("toString", other)),
        _ => Value::Null,
    })
}

/// Cypher's `round(x)` rounds half up, towards positive infinity (`round(-1.5)` is `-1.0`), keeping
/// the sign of a negative result that rounds to zero (`round(-0.4)` is `-0.0`).
fn round_half_up(x: f64) -> f64 {
    let r = (x + 0.5).floor();
    if r == 0.0 && x < 0.0 { -0.0 } else { r }
}

fn round_fn(args: &[Value]) -> Result<Value> {
    let Some(x) = number("round", &args[0])? else {
        return Ok(Value::Null);
    };
    if args.len() == 1 {
        return Ok(Value::Float(round_half_up(x)));
    }
    // Neo4j truncates a float precision toward zero (`round(1.55, 1.9)` is 1.6).
    let precision = match &args[1] {
        Value::Null => return Ok(Value::Null),
        Value::Int(i) => *i,
        Value::Float(f) => f.trunc() as i64,
        other => return Err(type_error("round", other)),
    };
    if precision == 0 && args.len() == 2 {
        // Neo4j 5.26: `round(x, 0)` without a mode rounds as `round(x)` does
        // (`round(-2.5, 0)` is -2.0), while `round(-2.5, 0, 'HALF_UP')` is -3.0.
        return Ok(Value::Float(round_half_up(x)));
    }
    let mode = match args.get(2) {
        Some(m) => match string_arg("round", m)? {
            Some(m) => m.to_ascii_uppercase(),
            None => return Ok(Value::Null),
        },
        None => "HALF_UP".to_string(),
    };
    let factor = 10f64.powi(precision as i32);
    let scaled = x * factor;
    let rounded = match mode.as_str() {
        "HALF_UP" => (scaled.abs() + 0.5).floor().copysign(scaled),
        "HALF_DOWN" => {
            let f = scaled.abs();
            let r = if f - f.floor() > 0.5 {
                f.ceil()
            } else {
                f.floor()
            };
            r.copysign(scaled)
        }
        "HALF_EVEN" => {
            let f = scaled.abs();
            let floor = f.floor();
            let diff = f - floor;
            let r = if diff > 0.5 || (diff == 0.5 && floor % 2.0 != 0.0) {
                floor + 1.0
            } else {
                floor
            };
            r.copysign(scaled)
        }
        "CEILING" => scaled.ceil(),
        "FLOOR" => scaled.floor(),
        "UP" => scaled.abs().ceil().copysign(scaled),
        "DOWN" => scaled.trunc(),
        _ => {
            return Err(QueryError::argument(format!(
                "unknown rounding mode {mode}"
            )));
        }
    };
    Ok(Value::Float(rounded / factor))
}

/// Calls the scalar function `name` (lower case) on evaluated arguments.
pub fn call(name: &str, args: Vec<Value>, ctx: &mut ExecContext) -> Result<Value> {
    if let Some(result) = temporal_fns::call(name, &args, ctx.state.clock) {
        return result;
    }
    let a0 = args.first().cloned().unwrap_or(Value::Null);
    Ok(match name {
        "abs" => match &a0 {
            Value::Null => Value::Null,
            Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(|| {
                QueryError::runtime(
                    ErrorClass::ArithmeticError,
                    "IntegerOverflow",
                    "abs overflowed",
                )
            })?),
            Value::Float(f) => Value::Float(f.abs()),
            other => return Err(type_error(name, other)),
        },
        "ceil" => float_fn(name, &args, f64::ceil)?,
        "floor" => float_fn(name, &args, f64::floor)?,
        "round" => round_fn(&args)?,
        "sign" => match &a0 {
            Value::Null => Value::Null,
            Value::Int(i) => Value::Int(i.signum()),
            Value::Float(f) => Value::Int(if *f > 0.0 {
                1
            } else if *f < 0.0 {
                -1
            } else {
                0
            }),
            other => return Err(type_error(name, other)),
        },
        "rand" => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            Value::Float((nanos % 1_000_000) as f64 / 1_000_000.0)
        }
        "sqrt" => float_fn(name, &args, f64::sqrt)?,
        "exp" => float_fn(name, &args, f64::exp)?,
        "log" => float_fn(name, &args, f64::ln)?,
        "log10" => float_fn(name, &args, f64::log10)?,
        "e" => Value::Float(std::f64::consts::E),
        "pi" => Value::Float(std::f64::consts::PI),
        "sin" => float_fn(name, &args, f64::sin)?,
        "cos" => float_fn(name, &args, f64::cos)?,
        "tan" => float_fn(name, &args, f64::tan)?,
        "cot" => float_fn(name, &args, |x| 1.0 / x.tan())?,
        "asin" => float_fn(name, &args, f64::asin)?,
        "acos" => float_fn(name, &args, f64::acos)?,
        "atan" => float_fn(name, &args, f64::atan)?,
        "atan2" => match (number(name, &args[0])?, number(name, &args[1])?) {
            (Some(y), Some(x)) => Value::Float(y.atan2(x)),
            _ => Value::Null,
        },
        "degrees" => float_fn(name, &args, f64::to_degrees)?,
        "radians" => float_fn(name, &args, f64::to_radians)?,
        "haversin" => float_fn(name, &args, |x| (1.0 - x.cos()) / 2.0)?,
        "tointeger" => to_integer(&a0, true)?,
        "tointegerornull" => to_integer(&a0, false)?,
        "tofloat" => to_float(&a0, true)?,
        "tofloatornull" => to_float(&a0, false)?,
        "toboolean" => to_boolean(&a0, true)?,
        "tobooleanornull" => to_boolean(&a0, false)?,
        "tostring" => to_string(&a0, true)?,
        "tostringornull" => to_string(&a0, false)?,
        "size" => match &a0 {
            Value::Null => Value::Null,
            Value::List(items) => Value::Int(items.len() as i64),
            Value::String(s) => Value::Int(s.chars().count() as i64),
            other => return Err(type_error(name, other)),
        },
        "length" => match &a0 {
            Value::Null => Value::Null,
            Value::Path(p) => Value::Int(p.rels.len() as i64),
            // Neo4j 5: length() is for paths only; size() counts a string or a list.
            other => return Err(type_error(name, other)),
        },
        "isempty" => match &a0 {
            Value::Null => Value::Null,
            Value::List(items) => Value::Bool(items.is_empty()),
            Value::String(s) => Value::Bool(s.is_empty()),
            Value::Map(m) => Value::Bool(m.is_empty()),
            other => return Err(type_error(name, other)),
        },
        "head" => match &a0 {
            Value::Null => Value::Null,
            Value::List(items) => items.first().cloned().unwrap_or(Value::Null),
            other => return Err(type_error(name, other)),
        },
        "last" => match &a0 {
            Value::Null => Value::Null,
            Value::List(items) => items.last().cloned().unwrap_or(Value::Null),
            other => return Err(type_error(name, other)),
        },
        "tail" => match &a0 {
            Value::Null => Value::Null,
            Value::List(items) => Value::list(items.iter().skip(1).cloned().collect()),
            other => return Err(type_error(name, other)),
        },
        "reverse" => match &a0 {
            Value::Null => Value::Null,
            Value::List(items) => Value::list(items.iter().rev().cloned().collect()),
            Value::String(s) => Value::from(s.chars().rev().collect::<String>()),
            other => return Err(type_error(name, other)),
        },
        "range" => {
            let integer = |v: &Value| -> Result<Option<i64>> {
                match v {
                    Value::Null => Ok(None),
                    Value::Int(i) => Ok(Some(*i)),
                    other => Err(QueryError::runtime(
                        ErrorClass::ArgumentError,
                        "InvalidArgumentType",
                        format!("range() takes integers, not {}", other.type_name()),
                    )),
                }
            };
            // A null bound or step is Neo4j's `TypeError` ("expected a numeric value").
            let null = |what: &str| {
                QueryError::runtime(
                    ErrorClass::TypeError,
                    "InvalidArgumentValue",
                    format!("range() {what} cannot be null"),
                )
            };
            let (Some(start), Some(end)) = (integer(&args[0])?, integer(&args[1])?) else {
                return Err(null("bounds"));
            };
            let step = match args.get(2) {
                Some(v) => integer(v)?.ok_or_else(|| null("step"))?,
                None => 1,
            };
            if step == 0 {
                return Err(QueryError::runtime(
                    ErrorClass::ArgumentError,
                    "NumberOutOfRange",
                    "range() step cannot be zero",
                ));
            }
            let count = if (step > 0 && start > end) || (step < 0 && start < end) {
                0
            } else {
                ((end as i128 - start as i128) / step as i128 + 1) as u128
            };
            if count > crate::context::MAX_MATERIALIZED_ROWS as u128 {
                return Err(QueryError::argument(
                    "range() would produce too many elements",
                ));
            }
            let mut items = Vec::with_capacity(count as usize);
            let mut x = start as i128;
            for _ in 0..count {
                items.push(Value::Int(x as i64));
                x += step as i128;
            }
            Value::list(items)
        }
        "keys" => match &a0 {
            Value::Null => Value::Null,
            Value::Node(_) | Value::Rel(_) | Value::Map(_) => Value::list(
                entity_properties(&a0, ctx)?
                    .into_iter()
                    .filter(|(_, v)| !v.is_null() || matches!(a0, Value::Map(_)))
                    .map(|(k, _)| Value::String(k))
                    .collect(),
            ),
            other => return Err(type_error(name, other)),
        },
        "properties" => match &a0 {
            Value::Null => Value::Null,
            Value::Node(_) | Value::Rel(_) | Value::Map(_) => {
                Value::map(entity_properties(&a0, ctx)?)
            }
            other => return Err(type_error(name, other)),
        },
        "labels" => match &a0 {
            Value::Null => Value::Null,
            Value::Node(v) => Value::list(
                ctx.tx
                    .vertex_labels(*v)
                    .map_err(entity_error)?
                    .into_iter()
                    .map(Value::from)
                    .collect(),
            ),
            other => return Err(type_error(name, other)),
        },
        "type" => match &a0 {
            Value::Null => Value::Null,
            Value::Rel(e) => Value::from(super::edge_type(*e, ctx)?),
            other => return Err(type_error(name, other)),
        },
        "id" => match &a0 {
            Value::Null => Value::Null,
            Value::Node(v) => Value::Int(v.cypher_id()),
            Value::Rel(e) => Value::Int(e.cypher_id()),
            other => return Err(type_error(name, other)),
        },
        // The element id the drivers see (Bolt's `element_id`): one format everywhere, see
        // `plexus_types::VertexId`'s `Display`.
        "elementid" => match &a0 {
            Value::Null => Value::Null,
            Value::Node(v) => Value::from(v.to_string()),
            Value::Rel(e) => Value::from(e.to_string()),
            other => return Err(type_error(name, other)),
        },
        "nodes" => match &a0 {
            Value::Null => Value::Null,
            Value::Path(p) => Value::list(p.nodes.iter().map(|v| Value::Node(*v)).collect()),
            other => return Err(type_error(name, other)),
        },
        "relationships" => match &a0 {
            Value::Null => Value::Null,
            Value::Path(p) => Value::list(p.rels.iter().map(|e| Value::Rel(*e)).collect()),
            other => return Err(type_error(name, other)),
        },
        "startnode" | "endnode" => match &a0 {
            Value::Null => Value::Null,
            Value::Rel(e) => {
                let (src, dst) = ctx.tx.edge_endpoints(*e).map_err(entity_error)?;
                Value::Node(if name == "startnode" { src } else { dst })
            }
            other => return Err(type_error(name, other)),
        },
        "coalesce" => args
            .into_iter()
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null),
        "left" | "right" => {
            let Some(s) = string_arg(name, &args[0])? else {
                return Ok(Value::Null);
            };
            // Neo4j answers `left('', -1)` with '' but fails `right('', -1)`.
            let n = match &args[1] {
                Value::Null => return Ok(Value::Null),
                Value::Int(n) if *n >= 0 => *n as usize,
                Value::Int(_) if s.is_empty() && name == "left" => 0,
                Value::Int(_) => return Err(negative_length(name)),
                other => return Err(type_error(name, other)),
            };
            let chars: Vec<char> = s.chars().collect();
            let n = n.min(chars.len());
            let part: String = if name == "left" {
                chars[..n].iter().collect()
            } else {
                chars[chars.len() - n..].iter().collect()
            };
            Value::from(part)
        }
        "substring" => {
            let Some(s) = string_arg(name, &args[0])? else {
                return Ok(Value::Null);
            };
            // A negative start or length of the empty string is '' in Neo4j.
            let start = match &args[1] {
                Value::Null => return Ok(Value::Null),
                Value::Int(i) if *i >= 0 || s.is_empty() => (*i).max(0) as usize,
                Value::Int(_) => return Err(negative_length(name)),
                other => return Err(type_error(name, other)),
            };
            let len = match args.get(2) {
                None => usize::MAX,
                Some(Value::Null) => return Ok(Value::Null),
                Some(Value::Int(i)) if *i >= 0 || s.is_empty() => (*i).max(0) as usize,
                Some(Value::Int(_)) => return Err(negative_length(name)),
                Some(other) => return Err(type_error(name, other)),
            };
            Value::from(s.chars().skip(start).take(len).collect::<String>())
        }
        "toupper" => string_arg(name, &a0)?.map_or(Value::Null, |s| Value::from(s.to_uppercase())),
        "tolower" => string_arg(name, &a0)?.map_or(Value::Null, |s| Value::from(s.to_lowercase())),
        "trim" => string_arg(name, &a0)?.map_or(Value::Null, |s| Value::from(s.trim())),
        "ltrim" => string_arg(name, &a0)?.map_or(Value::Null, |s| Value::from(s.trim_start())),
        "rtrim" => string_arg(name, &a0)?.map_or(Value::Null, |s| Value::from(s.trim_end())),
        "replace" => match (
            string_arg(name, &args[0])?,
            string_arg(name, &args[1])?,
            string_arg(name, &args[2])?,
        ) {
            (Some(s), Some(from), Some(to)) => Value::from(s.replace(from, to)),
            _ => Value::Null,
        },
        "split" => match (string_arg(name, &args[0])?, string_arg(name, &args[1])?) {
            (Some(s), Some(sep)) => {
                // Neo4j splits the empty string into [''] whatever the separator, even ''.
                let parts: Vec<Value> = if s.is_empty() {
                    vec![Value::from("")]
                } else if sep.is_empty() {
                    s.chars().map(|c| Value::from(c.to_string())).collect()
                } else {
                    s.split(sep).map(Value::from).collect()
                };
                Value::list(parts)
            }
            _ => Value::Null,
        },
        "timestamp" => Value::Int(ctx.state.clock.epoch_millis()),
        _ => {
            return Err(QueryError::runtime(
                ErrorClass::SyntaxError,
                "UnknownFunction",
                format!("unknown function '{name}'"),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{StringInteger, parse_integer};

    #[test]
    fn string_to_integer_follows_neo4j() {
        let int = StringInteger::Int;
        assert_eq!(parse_integer("42"), int(42));
        assert_eq!(parse_integer("+4"), int(4));
        assert_eq!(parse_integer("-2.9"), int(-2));
        assert_eq!(parse_integer("1e3"), int(1000));
        assert_eq!(parse_integer("1E+3"), int(1000));
        assert_eq!(parse_integer("12e-1"), int(1));
        assert_eq!(parse_integer("5e-400"), int(0));
        assert_eq!(parse_integer("000.000"), int(0));
        assert_eq!(parse_integer("0e99999"), int(0));
        assert_eq!(parse_integer("9223372036854775807.0"), int(i64::MAX));
        assert_eq!(parse_integer("-9223372036854775808"), int(i64::MIN));
        assert_eq!(parse_integer("-9223372036854775807.9"), int(-i64::MAX));
        for out in [
            "9223372036854775808",
            "9223372036854775807.5",
            "-9223372036854775808.5",
            "1e19",
            "1e99999",
            "123456789012345678901234567890.5",
        ] {
            assert_eq!(parse_integer(out), StringInteger::OutOfRange, "{out}");
        }
        for not in [
            "",
            " 4",
            "4 ",
            "0x1F",
            "NaN",
            "Infinity",
            ".",
            "-",
            "1e",
            "1e+",
            "1.2.3",
            "e3",
            "1_000",
            "1e2147483648",
        ] {
            assert_eq!(parse_integer(not), StringInteger::NotANumber, "{not:?}");
        }
    }
}
