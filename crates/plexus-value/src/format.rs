//! Values as text the way Cypher's `toString` writes them: strings unquoted, floats always
//! with a fraction or exponent (`1.0`, `1.0E20`, `NaN`, `Infinity`), temporal values in ISO
//! 8601 (the `Display` of [`crate::temporal::Temporal`] and [`crate::temporal::Duration`]).
//! The TCK notation of whole result rows, which needs the labels and properties of the nodes
//! a row mentions, is the query result's (`plexus_exec::result`).

use crate::value::Value;

/// A scalar as Cypher's `toString` writes it (strings unquoted); other values in a
/// debugging form.
pub fn plain_text(value: &Value) -> String {
    text(value, false)
}

/// [`plain_text`] with strings as Cypher literals (`'1'` is not `1`), in lists and maps too:
/// what EXPLAIN writes for constants.
pub fn literal_text(value: &Value) -> String {
    text(value, true)
}

fn text(value: &Value, quoted: bool) -> String {
    let text = |v: &Value| text(v, quoted);
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => float_text(*f),
        Value::String(s) if quoted => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::String(s) => s.to_string(),
        Value::Temporal(t) => t.to_string(),
        Value::Duration(d) => d.to_string(),
        Value::List(items) => format!(
            "[{}]",
            items.iter().map(text).collect::<Vec<_>>().join(", ")
        ),
        Value::Map(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k}: {}", text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Node(v) => format!("node {v}"),
        Value::Rel(e) => format!("relationship {e}"),
        Value::Path(p) => format!("path of length {}", p.rels.len()),
    }
}

/// Floats as Cypher (Neo4j, after Java's `Double.toString`) prints them: `1.0`, `0.5`,
/// `0.001`, `9999999.0`, and in scientific notation below 10^-3 or from 10^7 on (`1.0E-4`,
/// `1.0E7`, `1.234567895E8`), `NaN`, `Infinity`. The digits are the shortest that read back
/// as the same float.
pub fn float_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if f != 0.0 && (f.abs() >= 1e7 || f.abs() < 1e-3) {
        let s = format!("{f:e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exponent}")
    } else if f.fract() == 0.0 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}
