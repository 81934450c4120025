//! Cypher values ↔ PackStream, as Bolt 5 defines the graph and temporal structures.
//!
//! STRUCTURES
//! ==========
//! ```text
//!   Node                'N'  id, labels, properties, element_id
//!   Relationship        'R'  id, start_id, end_id, type, properties,
//!                            element_id, start_element_id, end_element_id
//!   UnboundRelationship 'r'  id, type, properties, element_id
//!   Path                'P'  nodes, unbound relationships, indices
//!   Date                'D'  days since 1970-01-01
//!   LocalTime           't'  nanoseconds of the day
//!   Time                'T'  nanoseconds of the day, offset seconds
//!   LocalDateTime       'd'  seconds since the epoch (local), nanoseconds
//!   DateTime            'I'  seconds since the epoch (UTC), nanoseconds, offset seconds
//!   DateTimeZoneId      'i'  seconds since the epoch (UTC), nanoseconds, zone id
//!   Duration            'E'  months, days, seconds, nanoseconds
//! ```
//!
//! IDS
//! ===
//! A Plexus id is (table, offset), both u32. The integer id is `table << 32 | offset` and
//! the element id is the id's text (`v3:17` for a node, `e1:4` for a relationship), so both
//! are stable for the life of the element and the driver's `element_id` and `id` agree.
//!
//! PATHS
//! =====
//! A path is sent as its node list in order, its relationships in order, and the index list
//! `[±(i+1), i+1]` per step `i`: the relationship's 1-based index, negative when the step
//! walks the relationship against its direction, then the index of the next node.
//!
//! PARAMETERS
//! ==========
//! Clients may send the scalars, lists, maps, temporals and durations; nodes, relationships,
//! paths, byte arrays and points have no Plexus parameter form and are refused with a
//! [`ValueError`]. Temporal fields are range-checked here, because the engine trusts its
//! temporal values to lie in Cypher's year range.

use crate::packstream::{Pack, Structure};
use plexus::temporal::{Duration, Temporal, days_from_civil};
use plexus::{CypherValue as Value, EdgeId, QueryResult, VertexId};
use std::sync::Arc;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_DAY: i64 = SECONDS_PER_DAY * NANOS_PER_SECOND;
/// Largest UTC offset Cypher accepts (±18 hours), in seconds.
const MAX_OFFSET_SECONDS: i64 = 18 * 3_600;
/// Cypher's year range, which the engine's calendar arithmetic relies on.
const MIN_YEAR: i64 = -999_999_999;
const MAX_YEAR: i64 = 999_999_999;

pub const TAG_NODE: u8 = b'N';
pub const TAG_RELATIONSHIP: u8 = b'R';
pub const TAG_UNBOUND_RELATIONSHIP: u8 = b'r';
pub const TAG_PATH: u8 = b'P';
pub const TAG_DATE: u8 = b'D';
pub const TAG_LOCAL_TIME: u8 = b't';
pub const TAG_TIME: u8 = b'T';
pub const TAG_LOCAL_DATE_TIME: u8 = b'd';
pub const TAG_DATE_TIME: u8 = b'I';
pub const TAG_DATE_TIME_ZONE_ID: u8 = b'i';
pub const TAG_DURATION: u8 = b'E';

/// A parameter value Plexus cannot take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError(pub String);

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn invalid<T>(message: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(message.into()))
}

/// A result value as PackStream; nodes and relationships are filled in from `result`.
pub fn to_pack(value: &Value, result: &QueryResult) -> Pack {
    match value {
        Value::Null => Pack::Null,
        Value::Bool(b) => Pack::Bool(*b),
        Value::Int(i) => Pack::Int(*i),
        Value::Float(f) => Pack::Float(*f),
        Value::String(s) => Pack::string(s.as_ref()),
        Value::List(items) => Pack::List(items.iter().map(|v| to_pack(v, result)).collect()),
        Value::Map(map) => Pack::Map(
            map.iter()
                .map(|(k, v)| (k.to_string(), to_pack(v, result)))
                .collect(),
        ),
        Value::Node(v) => node(*v, result),
        Value::Rel(e) => relationship(*e, result),
        Value::Path(path) => {
            let nodes = path.nodes.iter().map(|v| node(*v, result)).collect();
            let rels = path
                .rels
                .iter()
                .map(|e| unbound_relationship(*e, result))
                .collect();
            let mut indices = Vec::with_capacity(2 * path.rels.len());
            for (i, e) in path.rels.iter().enumerate() {
                let forward = result
                    .relationships
                    .get(e)
                    .is_none_or(|data| data.src == path.nodes[i]);
                let index = i as i64 + 1;
                indices.push(Pack::Int(if forward { index } else { -index }));
                indices.push(Pack::Int(index));
            }
            Pack::structure(
                TAG_PATH,
                vec![Pack::List(nodes), Pack::List(rels), Pack::List(indices)],
            )
        }
        Value::Temporal(t) => temporal(t),
        Value::Duration(d) => Pack::structure(
            TAG_DURATION,
            vec![
                Pack::Int(d.months),
                Pack::Int(d.days),
                Pack::Int(d.seconds),
                Pack::Int(d.nanos),
            ],
        ),
    }
}

fn properties(map: &plexus::CypherValueMap, result: &QueryResult) -> Pack {
    Pack::Map(
        map.iter()
            .map(|(k, v)| (k.to_string(), to_pack(v, result)))
            .collect(),
    )
}

fn node(v: VertexId, result: &QueryResult) -> Pack {
    let (labels, props) = match result.nodes.get(&v) {
        Some(data) => (
            data.labels.iter().map(Pack::string).collect(),
            properties(&data.properties, result),
        ),
        None => (Vec::new(), Pack::Map(Vec::new())),
    };
    Pack::structure(
        TAG_NODE,
        vec![
            Pack::Int(v.cypher_id()),
            Pack::List(labels),
            props,
            Pack::string(v.to_string()),
        ],
    )
}

fn relationship(e: EdgeId, result: &QueryResult) -> Pack {
    let data = result.relationships.get(&e);
    let end = |id: Option<VertexId>| match id {
        Some(v) => (Pack::Int(v.cypher_id()), Pack::string(v.to_string())),
        None => (Pack::Int(-1), Pack::string("")),
    };
    let (start_id, start_element_id) = end(data.map(|d| d.src));
    let (end_id, end_element_id) = end(data.map(|d| d.dst));
    Pack::structure(
        TAG_RELATIONSHIP,
        vec![
            Pack::Int(e.cypher_id()),
            start_id,
            end_id,
            Pack::string(data.map(|d| d.rel_type.as_str()).unwrap_or_default()),
            data.map_or(Pack::Map(Vec::new()), |d| properties(&d.properties, result)),
            Pack::string(e.to_string()),
            start_element_id,
            end_element_id,
        ],
    )
}

fn unbound_relationship(e: EdgeId, result: &QueryResult) -> Pack {
    let data = result.relationships.get(&e);
    Pack::structure(
        TAG_UNBOUND_RELATIONSHIP,
        vec![
            Pack::Int(e.cypher_id()),
            Pack::string(data.map(|d| d.rel_type.as_str()).unwrap_or_default()),
            data.map_or(Pack::Map(Vec::new()), |d| properties(&d.properties, result)),
            Pack::string(e.to_string()),
        ],
    )
}

fn temporal(t: &Temporal) -> Pack {
    let split = |days: i64, nanos: i64| {
        (
            days * SECONDS_PER_DAY + nanos.div_euclid(NANOS_PER_SECOND),
            nanos.rem_euclid(NANOS_PER_SECOND),
        )
    };
    match t {
        Temporal::Date(days) => Pack::structure(TAG_DATE, vec![Pack::Int(*days)]),
        Temporal::LocalTime(nanos) => Pack::structure(TAG_LOCAL_TIME, vec![Pack::Int(*nanos)]),
        Temporal::Time { nanos, offset } => {
            Pack::structure(TAG_TIME, vec![Pack::Int(*nanos), Pack::Int(*offset as i64)])
        }
        Temporal::LocalDateTime { days, nanos } => {
            let (seconds, nanos) = split(*days, *nanos);
            Pack::structure(
                TAG_LOCAL_DATE_TIME,
                vec![Pack::Int(seconds), Pack::Int(nanos)],
            )
        }
        Temporal::DateTime {
            days,
            nanos,
            offset,
            zone,
        } => {
            let (local_seconds, nanos) = split(*days, *nanos);
            let utc_seconds = local_seconds - *offset as i64;
            match zone {
                Some(zone) => Pack::structure(
                    TAG_DATE_TIME_ZONE_ID,
                    vec![
                        Pack::Int(utc_seconds),
                        Pack::Int(nanos),
                        Pack::string(zone.as_ref()),
                    ],
                ),
                None => Pack::structure(
                    TAG_DATE_TIME,
                    vec![
                        Pack::Int(utc_seconds),
                        Pack::Int(nanos),
                        Pack::Int(*offset as i64),
                    ],
                ),
            }
        }
    }
}

/// A parameter value from PackStream.
pub fn from_pack(pack: Pack) -> Result<Value, ValueError> {
    Ok(match pack {
        Pack::Null => Value::Null,
        Pack::Bool(b) => Value::Bool(b),
        Pack::Int(i) => Value::Int(i),
        Pack::Float(f) => Value::Float(f),
        Pack::String(s) => Value::String(Arc::from(s)),
        Pack::Bytes(_) => return invalid("byte arrays are not supported by Plexus"),
        Pack::List(items) => {
            Value::list(items.into_iter().map(from_pack).collect::<Result<_, _>>()?)
        }
        Pack::Map(entries) => Value::map(
            entries
                .into_iter()
                .map(|(k, v)| Ok((Arc::from(k), from_pack(v)?)))
                .collect::<Result<_, ValueError>>()?,
        ),
        Pack::Struct(s) => from_structure(s)?,
    })
}

/// The `n`-th field as an integer.
fn int_field(s: &Structure, n: usize) -> Result<i64, ValueError> {
    match s.fields.get(n) {
        Some(Pack::Int(i)) => Ok(*i),
        _ => invalid(format!(
            "structure 0x{:02X}: field {n} must be an integer",
            s.tag
        )),
    }
}

fn check_fields(s: &Structure, count: usize) -> Result<(), ValueError> {
    if s.fields.len() == count {
        Ok(())
    } else {
        invalid(format!(
            "structure 0x{:02X} needs {count} fields, got {}",
            s.tag,
            s.fields.len()
        ))
    }
}

fn check_days(days: i64) -> Result<i64, ValueError> {
    let range = days_from_civil(MIN_YEAR, 1, 1)..=days_from_civil(MAX_YEAR, 12, 31);
    if range.contains(&days) {
        Ok(days)
    } else {
        invalid(format!(
            "date {days} days from 1970 is outside Cypher's year range"
        ))
    }
}

fn check_nanos_of_day(nanos: i64) -> Result<i64, ValueError> {
    if (0..NANOS_PER_DAY).contains(&nanos) {
        Ok(nanos)
    } else {
        invalid(format!("time of day {nanos} ns is outside 0..24h"))
    }
}

fn check_offset(offset: i64) -> Result<i32, ValueError> {
    if (-MAX_OFFSET_SECONDS..=MAX_OFFSET_SECONDS).contains(&offset) {
        Ok(offset as i32)
    } else {
        invalid(format!("UTC offset {offset} s is outside ±18 hours"))
    }
}

fn check_nanos_of_second(nanos: i64) -> Result<i64, ValueError> {
    if (0..NANOS_PER_SECOND).contains(&nanos) {
        Ok(nanos)
    } else {
        invalid(format!("nanoseconds {nanos} outside 0..10^9"))
    }
}

/// (days, nanoseconds of the day) of local epoch seconds and nanoseconds.
fn local_parts(seconds: i64, nanos: i64) -> Result<(i64, i64), ValueError> {
    let nanos = check_nanos_of_second(nanos)?;
    let days = check_days(seconds.div_euclid(SECONDS_PER_DAY))?;
    Ok((
        days,
        seconds.rem_euclid(SECONDS_PER_DAY) * NANOS_PER_SECOND + nanos,
    ))
}

fn from_structure(s: Structure) -> Result<Value, ValueError> {
    let temporal = match s.tag {
        TAG_DATE => {
            check_fields(&s, 1)?;
            Temporal::Date(check_days(int_field(&s, 0)?)?)
        }
        TAG_LOCAL_TIME => {
            check_fields(&s, 1)?;
            Temporal::LocalTime(check_nanos_of_day(int_field(&s, 0)?)?)
        }
        TAG_TIME => {
            check_fields(&s, 2)?;
            Temporal::Time {
                nanos: check_nanos_of_day(int_field(&s, 0)?)?,
                offset: check_offset(int_field(&s, 1)?)?,
            }
        }
        TAG_LOCAL_DATE_TIME => {
            check_fields(&s, 2)?;
            let (days, nanos) = local_parts(int_field(&s, 0)?, int_field(&s, 1)?)?;
            Temporal::LocalDateTime { days, nanos }
        }
        TAG_DATE_TIME => {
            check_fields(&s, 3)?;
            let offset = check_offset(int_field(&s, 2)?)?;
            let local = int_field(&s, 0)?.saturating_add(offset as i64);
            let (days, nanos) = local_parts(local, int_field(&s, 1)?)?;
            Temporal::DateTime {
                days,
                nanos,
                offset,
                zone: None,
            }
        }
        TAG_DATE_TIME_ZONE_ID => {
            check_fields(&s, 3)?;
            let utc_seconds = int_field(&s, 0)?;
            let Some(Pack::String(zone)) = s.fields.get(2) else {
                return invalid("DateTimeZoneId: field 2 must be a zone id string");
            };
            let tz = jiff::tz::TimeZone::get(zone)
                .or_else(|_| invalid(format!("unknown time zone '{zone}'")))?;
            let instant = jiff::Timestamp::from_second(utc_seconds)
                .or_else(|_| invalid(format!("instant {utc_seconds} s is outside zone data")))?;
            let offset = tz.to_offset(instant).seconds();
            let (days, nanos) =
                local_parts(utc_seconds.saturating_add(offset as i64), int_field(&s, 1)?)?;
            Temporal::DateTime {
                days,
                nanos,
                offset,
                zone: Some(Arc::from(zone.as_str())),
            }
        }
        TAG_DURATION => {
            check_fields(&s, 4)?;
            return Ok(Value::Duration(Duration::new(
                int_field(&s, 0)?,
                int_field(&s, 1)?,
                int_field(&s, 2)?,
                int_field(&s, 3)?,
            )));
        }
        TAG_NODE | TAG_RELATIONSHIP | TAG_UNBOUND_RELATIONSHIP | TAG_PATH => {
            return invalid("nodes, relationships and paths cannot be parameters");
        }
        b'X' | b'Y' => return invalid("points are not supported by Plexus"),
        other => return invalid(format!("unknown structure tag 0x{other:02X}")),
    };
    Ok(Value::Temporal(temporal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus::{NodeData, PathValue, RelData};

    fn empty() -> QueryResult {
        QueryResult::default()
    }

    fn round_trip(value: Value) {
        let pack = to_pack(&value, &empty());
        let back = from_pack(pack.clone()).expect("decodes");
        assert_eq!(to_pack(&back, &empty()), pack, "{value:?}");
    }

    #[test]
    fn temporals_and_durations_round_trip() {
        let day = days_from_civil(2024, 2, 29);
        let nanos = (13 * 3600 + 5) * NANOS_PER_SECOND + 123;
        for value in [
            Temporal::Date(day),
            Temporal::Date(days_from_civil(-3, 1, 1)),
            Temporal::LocalTime(nanos),
            Temporal::Time {
                nanos,
                offset: -3600,
            },
            Temporal::LocalDateTime { days: day, nanos },
            Temporal::LocalDateTime { days: -1, nanos: 5 },
            Temporal::DateTime {
                days: day,
                nanos,
                offset: 7200,
                zone: None,
            },
            Temporal::DateTime {
                days: day,
                nanos,
                offset: 3600,
                zone: Some(Arc::from("Europe/Stockholm")),
            },
        ] {
            round_trip(Value::Temporal(value));
        }
        round_trip(Value::Duration(Duration::new(14, -3, 3_700, 5)));
    }

    #[test]
    fn zoned_datetimes_are_sent_in_utc() {
        // 2024-07-01T12:00 in Stockholm is 10:00 UTC (summer time, +02:00).
        let days = days_from_civil(2024, 7, 1);
        let noon = Value::Temporal(Temporal::DateTime {
            days,
            nanos: 12 * 3600 * NANOS_PER_SECOND,
            offset: 7200,
            zone: Some(Arc::from("Europe/Stockholm")),
        });
        let Pack::Struct(s) = to_pack(&noon, &empty()) else {
            panic!("structure expected");
        };
        assert_eq!(s.tag, TAG_DATE_TIME_ZONE_ID);
        assert_eq!(s.fields[0], Pack::Int(days * SECONDS_PER_DAY + 10 * 3600));
        // and the zone's offset is found again from the instant
        let Value::Temporal(Temporal::DateTime { offset, nanos, .. }) =
            from_pack(Pack::Struct(s)).expect("decodes")
        else {
            panic!("datetime expected");
        };
        assert_eq!((offset, nanos), (7200, 12 * 3600 * NANOS_PER_SECOND));
    }

    #[test]
    fn bad_parameters_are_refused_not_panicked_on() {
        let bad = [
            Pack::Bytes(vec![1]),
            Pack::structure(TAG_DATE, vec![Pack::Int(i64::MAX)]),
            Pack::structure(TAG_DATE, vec![]),
            Pack::structure(TAG_LOCAL_TIME, vec![Pack::Int(-1)]),
            Pack::structure(TAG_TIME, vec![Pack::Int(0), Pack::Int(100_000)]),
            Pack::structure(
                TAG_DATE_TIME,
                vec![Pack::Int(i64::MAX), Pack::Int(0), Pack::Int(3600)],
            ),
            Pack::structure(
                TAG_DATE_TIME_ZONE_ID,
                vec![Pack::Int(0), Pack::Int(0), Pack::string("Mars/Olympus")],
            ),
            Pack::structure(
                TAG_DATE_TIME_ZONE_ID,
                vec![Pack::Int(i64::MIN), Pack::Int(0), Pack::string("UTC")],
            ),
            Pack::structure(TAG_LOCAL_DATE_TIME, vec![Pack::Int(0), Pack::Int(-1)]),
            Pack::structure(TAG_NODE, vec![]),
            Pack::structure(b'X', vec![Pack::Int(0), Pack::Float(1.0), Pack::Float(2.0)]),
            Pack::structure(0x01, vec![]),
            Pack::List(vec![Pack::Int(1), Pack::Bytes(vec![])]),
        ];
        for pack in bad {
            assert!(from_pack(pack.clone()).is_err(), "{pack:?}");
        }
    }

    #[test]
    fn graph_values_carry_ids_and_element_ids() {
        let (a, b) = (VertexId::new(1, 7), VertexId::new(1, 8));
        let e = EdgeId::new(2, 3);
        let mut result = empty();
        result.nodes.insert(
            a,
            NodeData {
                labels: vec!["Person".into()],
                properties: [(Arc::from("name"), Value::string("Ada"))].into(),
            },
        );
        result.nodes.insert(b, NodeData::default());
        result.relationships.insert(
            e,
            RelData {
                rel_type: "KNOWS".into(),
                src: a,
                dst: b,
                properties: Default::default(),
            },
        );
        let Pack::Struct(n) = to_pack(&Value::Node(a), &result) else {
            panic!()
        };
        assert_eq!(n.tag, TAG_NODE);
        assert_eq!(n.fields[0], Pack::Int((1 << 32) | 7));
        assert_eq!(n.fields[1], Pack::List(vec![Pack::string("Person")]));
        assert_eq!(n.fields[3], Pack::string("v1:7"));
        let Pack::Struct(r) = to_pack(&Value::Rel(e), &result) else {
            panic!()
        };
        assert_eq!(r.fields.len(), 8);
        assert_eq!(r.fields[3], Pack::string("KNOWS"));
        assert_eq!(r.fields[6], Pack::string("v1:7"));
        // b <-[e]- a walks e backwards
        let path = Value::Path(Arc::new(PathValue {
            nodes: vec![b, a],
            rels: vec![e],
        }));
        let Pack::Struct(p) = to_pack(&path, &result) else {
            panic!()
        };
        assert_eq!(p.fields[2], Pack::List(vec![Pack::Int(-1), Pack::Int(1)]));
    }
}
