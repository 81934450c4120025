//! Cypher values ↔ JSON, in Neo4j's two Query API formats.
//!
//! WHAT
//! ====
//! ```text
//!   Cypher           plain JSON (application/json)       typed JSON (application/vnd.neo4j.query)
//!   null, bool       null, true                          {"$type":"Null"|"Boolean","_value":…}
//!   integer          number                              {"$type":"Integer","_value":"123"}
//!   float            number; "NaN" / "Infinity" text     {"$type":"Float","_value":"1.5" | "NaN"}
//!   string           string                              {"$type":"String",…}
//!   list, map        array, object                       {"$type":"List"|"Map","_value":[…]|{…}}
//!   date …           ISO text (Cypher's toString)        {"$type":"Date"|"Time"|"LocalTime"|
//!                                                          "LocalDateTime"|"OffsetDateTime"|
//!                                                          "ZonedDateTime"|"Duration",…}
//!   node             {elementId, labels, properties}     {"$type":"Node","_value":{_element_id,
//!                                                          _labels, _properties}}
//!   relationship     {elementId, startNodeElementId,     {"$type":"Relationship","_value":{
//!                     endNodeElementId, type, properties}  _element_id, _start_node_element_id, …}}
//!   path             [node, rel, node, …]                {"$type":"Path","_value":[…]}
//! ```
//!
//! WHY
//! ===
//! Plain JSON is what people read and what most clients want; it loses integers beyond 2^53
//! in JavaScript, NaN and the temporal types. Typed JSON keeps them all, so a value sent as a
//! typed parameter and returned comes back equal.
//!
//! INVARIANTS
//! ==========
//! - Parameters: in plain JSON an integer literal that fits i64 is an INTEGER, any other
//!   number a FLOAT. In typed JSON every value must be a `{"$type", "_value"}` object; an
//!   unknown type or a malformed `_value` is an error naming the parameter path.
//! - Typed temporal text is parsed with Cypher's own constructors (`date('…')` and the
//!   rest), so it accepts exactly what Cypher accepts.
//! - Element ids are Plexus's (`v3:17`, `e1:4`), the same as Bolt's.
//!
//! NOT YET
//! =======
//! - `Point` and `Base64` (byte arrays): Plexus has neither, so such parameters are refused.

use plexus::temporal::Temporal;
use plexus::{CypherValue as Value, EdgeId, QueryResult, VertexId};
use serde_json::{Map, Value as Json, json};
use std::sync::Arc;

/// Which of the two formats a request or response uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plain,
    Typed,
}

/// The content type of typed JSON.
pub const TYPED_CONTENT_TYPE: &str = "application/vnd.neo4j.query";

impl Format {
    /// From a Content-Type or Accept header value.
    pub fn of(header: Option<&str>) -> Format {
        match header {
            Some(h) if h.to_ascii_lowercase().contains(TYPED_CONTENT_TYPE) => Format::Typed,
            _ => Format::Plain,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Plain => "application/json",
            Format::Typed => TYPED_CONTENT_TYPE,
        }
    }
}

fn typed(kind: &str, value: Json) -> Json {
    json!({ "$type": kind, "_value": value })
}

fn float_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        plexus_value::format::float_text(f)
    }
}

/// The typed-JSON name of a temporal value.
fn temporal_type(t: &Temporal) -> &'static str {
    match t {
        Temporal::Date(_) => "Date",
        Temporal::LocalTime(_) => "LocalTime",
        Temporal::Time { .. } => "Time",
        Temporal::LocalDateTime { .. } => "LocalDateTime",
        Temporal::DateTime { zone: None, .. } => "OffsetDateTime",
        Temporal::DateTime { zone: Some(_), .. } => "ZonedDateTime",
    }
}

/// A result value in `format`; nodes and relationships are filled in from `result`.
pub fn to_json(value: &Value, result: &QueryResult, format: Format) -> Json {
    let plain = format == Format::Plain;
    match value {
        Value::Null if plain => Json::Null,
        Value::Null => typed("Null", Json::Null),
        Value::Bool(b) if plain => Json::Bool(*b),
        Value::Bool(b) => typed("Boolean", Json::Bool(*b)),
        Value::Int(i) if plain => json!(i),
        Value::Int(i) => typed("Integer", Json::String(i.to_string())),
        Value::Float(f) if plain => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(float_text(*f))),
        Value::Float(f) => typed("Float", Json::String(float_text(*f))),
        Value::String(s) if plain => Json::String(s.to_string()),
        Value::String(s) => typed("String", Json::String(s.to_string())),
        Value::List(items) => {
            let items = items.iter().map(|v| to_json(v, result, format)).collect();
            if plain {
                Json::Array(items)
            } else {
                typed("List", Json::Array(items))
            }
        }
        Value::Map(map) => {
            let entries = map
                .iter()
                .map(|(k, v)| (k.to_string(), to_json(v, result, format)))
                .collect();
            if plain {
                Json::Object(entries)
            } else {
                typed("Map", Json::Object(entries))
            }
        }
        Value::Node(v) => node(*v, result, format),
        Value::Rel(e) => relationship(*e, result, format),
        Value::Path(path) => {
            let mut items = Vec::with_capacity(path.nodes.len() + path.rels.len());
            for (i, v) in path.nodes.iter().enumerate() {
                items.push(node(*v, result, format));
                if let Some(e) = path.rels.get(i) {
                    items.push(relationship(*e, result, format));
                }
            }
            if plain {
                Json::Array(items)
            } else {
                typed("Path", Json::Array(items))
            }
        }
        Value::Temporal(t) if plain => Json::String(plexus::temporal::text(value)),
        Value::Temporal(t) => typed(
            temporal_type(t),
            Json::String(plexus::temporal::text(value)),
        ),
        Value::Duration(_) if plain => Json::String(plexus::temporal::text(value)),
        Value::Duration(_) => typed("Duration", Json::String(plexus::temporal::text(value))),
    }
}

fn properties(map: &plexus::CypherValueMap, result: &QueryResult, format: Format) -> Json {
    Json::Object(
        map.iter()
            .map(|(k, v)| (k.to_string(), to_json(v, result, format)))
            .collect(),
    )
}

fn node(v: VertexId, result: &QueryResult, format: Format) -> Json {
    let data = result.nodes.get(&v);
    let labels: Vec<&str> = data
        .map(|d| d.labels.iter().map(|l| l.as_ref()).collect())
        .unwrap_or_default();
    let props = data.map_or(Json::Object(Map::new()), |d| {
        properties(&d.properties, result, format)
    });
    match format {
        Format::Plain => {
            json!({ "elementId": v.to_string(), "labels": labels, "properties": props })
        }
        Format::Typed => typed(
            "Node",
            json!({ "_element_id": v.to_string(), "_labels": labels, "_properties": props }),
        ),
    }
}

fn relationship(e: EdgeId, result: &QueryResult, format: Format) -> Json {
    let data = result.relationships.get(&e);
    let end = |id: Option<VertexId>| id.map(|v| v.to_string()).unwrap_or_default();
    let start = end(data.map(|d| d.src));
    let finish = end(data.map(|d| d.dst));
    let rel_type = data.map(|d| d.rel_type.as_str()).unwrap_or_default();
    let props = data.map_or(Json::Object(Map::new()), |d| {
        properties(&d.properties, result, format)
    });
    match format {
        Format::Plain => json!({
            "elementId": e.to_string(),
            "startNodeElementId": start,
            "endNodeElementId": finish,
            "type": rel_type,
            "properties": props,
        }),
        Format::Typed => typed(
            "Relationship",
            json!({
                "_element_id": e.to_string(),
                "_start_node_element_id": start,
                "_end_node_element_id": finish,
                "_type": rel_type,
                "_properties": props,
            }),
        ),
    }
}

/// A parameter value that cannot be taken, with the path to it (`$p.list[2]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError(pub String);

/// A parameter from JSON in `format`; `path` names it in errors.
pub fn from_json(json: &Json, format: Format, path: &str) -> Result<Value, ParamError> {
    match format {
        Format::Plain => Ok(from_plain(json)),
        Format::Typed => from_typed(json, path),
    }
}

fn from_plain(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(Arc::from(s.as_str())),
        Json::Array(items) => Value::list(items.iter().map(from_plain).collect()),
        Json::Object(map) => Value::map(
            map.iter()
                .map(|(k, v)| (Arc::from(k.as_str()), from_plain(v)))
                .collect(),
        ),
    }
}

fn from_typed(json: &Json, path: &str) -> Result<Value, ParamError> {
    let bad = |what: &str| Err(ParamError(format!("parameter {path}: {what}")));
    let Some(object) = json.as_object() else {
        return bad("typed JSON needs an object {\"$type\": …, \"_value\": …}");
    };
    let (Some(Json::String(kind)), Some(value)) = (object.get("$type"), object.get("_value"))
    else {
        return bad("typed JSON needs \"$type\" (a string) and \"_value\"");
    };
    let text = || value.as_str();
    Ok(match (kind.as_str(), value) {
        ("Null", _) => Value::Null,
        ("Boolean", Json::Bool(b)) => Value::Bool(*b),
        ("Integer", _) => match text()
            .and_then(|t| t.parse::<i64>().ok())
            .or(value.as_i64())
        {
            Some(i) => Value::Int(i),
            None => return bad("Integer _value must be a 64-bit integer (as text)"),
        },
        ("Float", _) => {
            let parsed = match text() {
                Some("NaN") => Some(f64::NAN),
                Some("Infinity") => Some(f64::INFINITY),
                Some("-Infinity") => Some(f64::NEG_INFINITY),
                Some(t) => t.parse::<f64>().ok(),
                None => value.as_f64(),
            };
            match parsed {
                Some(f) => Value::Float(f),
                None => return bad("Float _value must be a number, NaN, Infinity or -Infinity"),
            }
        }
        ("String", Json::String(s)) => Value::String(Arc::from(s.as_str())),
        ("List", Json::Array(items)) => Value::list(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| from_typed(item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        ("Map", Json::Object(map)) => Value::map(
            map.iter()
                .map(|(k, v)| {
                    Ok((
                        Arc::from(k.as_str()),
                        from_typed(v, &format!("{path}.{k}"))?,
                    ))
                })
                .collect::<Result<_, ParamError>>()?,
        ),
        (
            "Date" | "Time" | "LocalTime" | "LocalDateTime" | "OffsetDateTime" | "ZonedDateTime"
            | "DateTime" | "Duration",
            Json::String(s),
        ) => {
            let function = match kind.as_str() {
                "Date" => "date",
                "Time" => "time",
                "LocalTime" => "localtime",
                "LocalDateTime" => "localdatetime",
                "Duration" => "duration",
                _ => "datetime",
            };
            let arg = [Value::String(Arc::from(s.as_str()))];
            let clock = plexus_value::temporal::StatementClock::now();
            match plexus_value::temporal_fns::call(function, &arg, clock) {
                Some(Ok(v)) => v,
                Some(Err(e)) => return bad(&format!("{kind} '{s}': {}", e.message)),
                None => return bad(&format!("{kind} is not a temporal type")),
            }
        }
        ("Point" | "Base64", _) => return bad(&format!("Plexus has no {kind} values")),
        (
            "Boolean" | "String" | "List" | "Map" | "Date" | "Time" | "LocalTime" | "LocalDateTime"
            | "OffsetDateTime" | "ZonedDateTime" | "DateTime" | "Duration",
            _,
        ) => return bad(&format!("{kind} has a _value of the wrong JSON type")),
        _ => return bad(&format!("unknown $type '{kind}'")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(json: Json) -> Json {
        let value = from_json(&json, Format::Typed, "$p").expect("valid typed JSON");
        to_json(&value, &QueryResult::default(), Format::Typed)
    }

    #[test]
    fn typed_values_survive_the_trip() {
        for json in [
            json!({"$type": "Integer", "_value": "9007199254740993"}),
            json!({"$type": "Float", "_value": "NaN"}),
            json!({"$type": "Float", "_value": "-Infinity"}),
            json!({"$type": "Date", "_value": "2024-02-29"}),
            json!({"$type": "LocalTime", "_value": "12:50:35.556"}),
            json!({"$type": "OffsetDateTime", "_value": "2024-01-01T21:40:32-01:00"}),
            json!({"$type": "ZonedDateTime", "_value": "2015-11-21T21:40:32.142+01:00[Europe/Berlin]"}),
            json!({"$type": "Duration", "_value": "P14DT16H12M"}),
            json!({"$type": "List", "_value": [{"$type": "Boolean", "_value": true}]}),
        ] {
            assert_eq!(round_trip(json.clone()), json);
        }
    }

    #[test]
    fn bad_typed_values_name_their_path() {
        let bad = json!({"$type": "Map", "_value": {"a": {"$type": "Integer", "_value": "x"}}});
        let error = from_json(&bad, Format::Typed, "$p").expect_err("bad integer");
        assert!(error.0.contains("$p.a"), "{error:?}");
        assert!(from_json(&json!(1), Format::Typed, "$p").is_err());
        assert!(
            from_json(
                &json!({"$type": "Point", "_value": "x"}),
                Format::Typed,
                "$p"
            )
            .is_err()
        );
    }

    #[test]
    fn plain_numbers_are_integers_when_they_fit() {
        assert!(matches!(from_plain(&json!(3)), Value::Int(3)));
        assert!(matches!(from_plain(&json!(3.5)), Value::Float(f) if f == 3.5));
        assert!(matches!(from_plain(&json!(1e300)), Value::Float(f) if f == 1e300));
    }
}
