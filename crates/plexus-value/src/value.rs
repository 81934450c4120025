//! The Cypher value and its relations: equality ([`equals`]), comparison ([`compare`]),
//! orderability ([`order`]) and equivalence ([`GroupKey`]). The rules, and why there are
//! four, are in the crate documentation.

use crate::temporal::{Duration, Temporal};
use plexus_types::{EdgeId, VertexId};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A Cypher map: keys sorted (printing order does not matter in Cypher).
pub type MapValue = BTreeMap<Arc<str>, Value>;

#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
    List(Arc<Vec<Value>>),
    Map(Arc<MapValue>),
    Node(VertexId),
    Rel(EdgeId),
    Path(Arc<PathValue>),
    Temporal(Temporal),
    Duration(Duration),
}

/// The arithmetic operators on values (`+ - * / % ^`). Numbers are the evaluator's; temporal
/// operands go to [`crate::temporal_fns::arith`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
    Power,
}

/// A path: `nodes.len() == rels.len() + 1`; `rels[i]` joins `nodes[i]` and `nodes[i + 1]` in
/// either direction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathValue {
    pub nodes: Vec<VertexId>,
    pub rels: Vec<EdgeId>,
}

impl Value {
    pub fn string(text: &str) -> Value {
        Value::String(Arc::from(text))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    pub fn map(entries: MapValue) -> Value {
        Value::Map(Arc::new(entries))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The name of the value's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Bool(_) => "BOOLEAN",
            Value::Int(_) => "INTEGER",
            Value::Float(_) => "FLOAT",
            Value::String(_) => "STRING",
            Value::List(_) => "LIST",
            Value::Map(_) => "MAP",
            Value::Node(_) => "NODE",
            Value::Rel(_) => "RELATIONSHIP",
            Value::Path(_) => "PATH",
            Value::Temporal(t) => t.type_name(),
            Value::Duration(_) => "DURATION",
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Converts a stored property value.
    pub fn from_storage(value: plexus_types::Value) -> Value {
        match value {
            plexus_types::Value::Null => Value::Null,
            plexus_types::Value::Bool(b) => Value::Bool(b),
            plexus_types::Value::Int(i) => Value::Int(i),
            plexus_types::Value::Float(f) => Value::Float(f),
            plexus_types::Value::String(s) => Value::String(s),
            plexus_types::Value::List(items) => Value::list(
                items
                    .iter()
                    .map(|item| Value::from_storage(item.clone()))
                    .collect(),
            ),
            plexus_types::Value::Map(entries) => Value::map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from_storage(v.clone())))
                    .collect(),
            ),
            plexus_types::Value::Temporal(t) => temporal_from_storage(t),
        }
    }

    /// Converts to a storable property value; `None` for values a property cannot hold
    /// (nodes, relationships, paths, maps, lists of those).
    pub fn to_storage(&self) -> Option<plexus_types::Value> {
        Some(match self {
            Value::Null => plexus_types::Value::Null,
            Value::Bool(b) => plexus_types::Value::Bool(*b),
            Value::Int(i) => plexus_types::Value::Int(*i),
            Value::Float(f) => plexus_types::Value::Float(*f),
            Value::String(s) => plexus_types::Value::String(s.clone()),
            Value::List(items) => {
                let converted: Option<Vec<_>> = items
                    .iter()
                    .map(|item| match item {
                        Value::List(_) | Value::Map(_) | Value::Null => None,
                        other => other.to_storage(),
                    })
                    .collect();
                plexus_types::Value::List(Arc::from(converted?))
            }
            Value::Temporal(_) | Value::Duration(_) => {
                plexus_types::Value::Temporal(temporal_to_storage(self)?)
            }
            _ => return None,
        })
    }
}

/// The stored form of a temporal value or duration; `None` for any other value.
fn temporal_to_storage(value: &Value) -> Option<plexus_types::TemporalValue> {
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

/// A stored temporal value or duration as a Cypher value.
fn temporal_from_storage(t: plexus_types::TemporalValue) -> Value {
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

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::string(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(Arc::from(v))
    }
}

fn numeric_eq(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x == y),
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => {
            Some(int_float_cmp(*x, *y) == Some(Ordering::Equal))
        }
        (Value::Float(x), Value::Float(y)) => Some(x == y),
        _ => None,
    }
}

/// 2^63: floats from here up are above every `i64`, floats below its negation below every
/// one; between, a float's whole part is an exact `i64`.
const I64_LIMIT_F64: f64 = 9_223_372_036_854_775_808.0;

/// The integer `f` equals (`=` is true), if there is one: a float with no fraction in
/// `i64`'s range.
pub fn integral_float(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && (-I64_LIMIT_F64..I64_LIMIT_F64).contains(&f)).then_some(f as i64)
}

/// Exact comparison of an integer with a float (no rounding of large integers).
fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= I64_LIMIT_F64 {
        return Some(Ordering::Less);
    }
    if f < -I64_LIMIT_F64 {
        return Some(Ordering::Greater);
    }
    let truncated = f.trunc() as i64;
    match i.cmp(&truncated) {
        Ordering::Equal => {
            let fraction = f - f.trunc();
            Some(if fraction > 0.0 {
                Ordering::Less
            } else if fraction < 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            })
        }
        other => Some(other),
    }
}

/// Cypher `=`: `None` is null.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Bool(x), Value::Bool(y)) => Some(x == y),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => numeric_eq(a, b),
        (Value::String(x), Value::String(y)) => Some(x == y),
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            let mut unknown = false;
            for (p, q) in x.iter().zip(y.iter()) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            if unknown { None } else { Some(true) }
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() || x.keys().zip(y.keys()).any(|(p, q)| p != q) {
                return Some(false);
            }
            let mut unknown = false;
            for (p, q) in x.values().zip(y.values()) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            if unknown { None } else { Some(true) }
        }
        (Value::Node(x), Value::Node(y)) => Some(x == y),
        (Value::Rel(x), Value::Rel(y)) => Some(x == y),
        (Value::Path(x), Value::Path(y)) => Some(x == y),
        (Value::Temporal(x), Value::Temporal(y)) => x.equals(y),
        (Value::Duration(x), Value::Duration(y)) => Some(x == y),
        _ => Some(false),
    }
}

/// Cypher `<`/`>`: `None` when the values are not comparable (the result is null).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Int(x), Value::Float(y)) => int_float_cmp(*x, *y),
        (Value::Float(x), Value::Int(y)) => int_float_cmp(*y, *x).map(Ordering::reverse),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                match compare(p, q) {
                    Some(Ordering::Equal) => {}
                    other => {
                        if other.is_none() && equals(p, q) == Some(true) {
                            continue;
                        }
                        return other;
                    }
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        (Value::Temporal(x), Value::Temporal(y)) => x.compare(y),
        _ => None,
    }
}

fn order_rank(v: &Value) -> u8 {
    match v {
        Value::Map(_) => 0,
        Value::Node(_) => 1,
        Value::Rel(_) => 2,
        Value::List(_) => 3,
        Value::Path(_) => 4,
        Value::Temporal(_) => 5,
        Value::Duration(_) => 6,
        Value::String(_) => 7,
        Value::Bool(_) => 8,
        Value::Int(_) | Value::Float(_) => 9,
        Value::Null => 10,
    }
}

/// The total order of `ORDER BY` (ascending; null last).
pub fn order(a: &Value, b: &Value) -> Ordering {
    let (ra, rb) = (order_rank(a), order_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Value::Map(x), Value::Map(y)) => {
            for ((kx, vx), (ky, vy)) in x.iter().zip(y.iter()) {
                let o = kx.cmp(ky).then_with(|| order(vx, vy));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Node(x), Value::Node(y)) => x.cmp(y),
        (Value::Rel(x), Value::Rel(y)) => x.cmp(y),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let o = order(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Path(x), Value::Path(y)) => x.nodes.cmp(&y.nodes).then_with(|| x.rels.cmp(&y.rels)),
        (Value::Temporal(x), Value::Temporal(y)) => x.order(y),
        (Value::Duration(x), Value::Duration(y)) => x.cmp(y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) if x.is_nan() || y.is_nan() => {
            x.is_nan().cmp(&y.is_nan())
        }
        (Value::Float(x), _) if x.is_nan() => Ordering::Greater,
        (_, Value::Float(y)) if y.is_nan() => Ordering::Less,
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// A value under equivalence (`null ≡ null`, `NaN ≡ NaN`, `1 ≡ 1.0`), hashable: the key of
/// DISTINCT, grouping and UNION, and of hash joins. Values that are equal (`=` is true) are
/// equivalent and hash alike; for values that [`can_be_equal`], equivalence is exactly `=`.
#[derive(Clone, Debug, Default)]
pub struct GroupKey(pub Vec<Value>);

/// Whether `v = x` can be true for some `x`: not when `v` is null or NaN or holds one in a
/// list or map (`=` is then null or false whatever `x` is). A hash join skips such keys.
pub fn can_be_equal(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Float(f) => !f.is_nan(),
        Value::List(items) => items.iter().all(can_be_equal),
        Value::Map(entries) => entries.values().all(can_be_equal),
        _ => true,
    }
}

fn equivalent(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // The common keys first: what `equals` answers for them, without its dispatch.
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Node(x), Value::Node(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::Float(x), Value::Float(y)) if x.is_nan() && y.is_nan() => true,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equivalent(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((kx, vx), (ky, vy))| kx == ky && equivalent(vx, vy))
        }
        _ => equals(a, b) == Some(true),
    }
}

fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    order_rank(v).hash(state);
    match v {
        Value::Null => {}
        Value::Bool(b) => b.hash(state),
        Value::Int(i) => i.hash(state),
        Value::Float(f) => {
            // Hashed as the integer `int_float_cmp` finds it equal to, if any.
            if let Some(i) = integral_float(*f) {
                i.hash(state)
            } else if f.is_nan() {
                0u8.hash(state)
            } else {
                f.to_bits().hash(state)
            }
        }
        Value::String(s) => s.hash(state),
        Value::List(items) => {
            items.len().hash(state);
            for item in items.iter() {
                hash_value(item, state);
            }
        }
        Value::Map(entries) => {
            for (k, item) in entries.iter() {
                k.hash(state);
                hash_value(item, state);
            }
        }
        Value::Node(id) => id.hash(state),
        Value::Rel(id) => id.hash(state),
        Value::Path(p) => p.hash(state),
        Value::Temporal(t) => t.hash_key(state),
        Value::Duration(d) => d.hash(state),
    }
}

impl PartialEq for GroupKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0.iter())
                .all(|(a, b)| equivalent(a, b))
    }
}
impl Eq for GroupKey {}
impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for v in &self.0 {
            hash_value(v, state);
        }
    }
}

/// One value under [`GroupKey`]'s equivalence, without the key's list: what a DISTINCT
/// aggregate remembers of each argument it has seen. Hashes and compares as the one-value
/// `GroupKey`.
#[derive(Clone, Debug)]
pub struct DistinctValue(pub Value);

impl PartialEq for DistinctValue {
    fn eq(&self, other: &Self) -> bool {
        equivalent(&self.0, &other.0)
    }
}
impl Eq for DistinctValue {}
impl Hash for DistinctValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(&self.0, state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn integral_floats_are_the_integers_they_equal() {
        for (f, i) in [
            (1.0, Some(1)),
            (-0.0, Some(0)),
            (-3.0, Some(-3)),
            (2.5, None),
        ] {
            assert_eq!(integral_float(f), i, "{f}");
        }
        assert_eq!(integral_float(-I64_LIMIT_F64), Some(i64::MIN));
        for f in [I64_LIMIT_F64, 1e30, f64::INFINITY, f64::NAN] {
            assert_eq!(integral_float(f), None, "{f}");
        }
        // Whenever it gives an integer, the two are equal, and otherwise no integer is.
        for f in [1.0, -0.0, 2.5, 1e30, f64::NAN, -I64_LIMIT_F64] {
            if let Some(i) = integral_float(f) {
                assert_eq!(equals(&Value::Int(i), &Value::Float(f)), Some(true));
            }
        }
    }

    #[test]
    fn equality_is_ternary() {
        assert_eq!(equals(&Value::Int(1), &Value::Float(1.0)), Some(true));
        assert_eq!(equals(&Value::Null, &Value::Null), None);
        let a = Value::list(vec![Value::Int(1), Value::Null]);
        let b = Value::list(vec![Value::Int(2), Value::Null]);
        assert_eq!(equals(&a, &b), Some(false));
        assert_eq!(equals(&a, &a), None);
        assert_eq!(equals(&Value::Int(1), &Value::string("1")), Some(false));
    }

    #[test]
    fn integers_compare_exactly_with_floats_up_to_the_ends_of_i64() {
        let cmp = |i: i64, f: f64| compare(&Value::Int(i), &Value::Float(f));
        // 2^53 + 1 rounds to 2^53 as a float, but is above it.
        assert_eq!(
            cmp((1 << 53) + 1, 9_007_199_254_740_992.0),
            Some(Ordering::Greater)
        );
        // i64::MAX rounds to 2^63; every float from 2^63 up is above it.
        assert_eq!(cmp(i64::MAX, I64_LIMIT_F64), Some(Ordering::Less));
        assert_eq!(cmp(i64::MAX, 9.25e18), Some(Ordering::Less));
        assert_eq!(cmp(i64::MIN, -I64_LIMIT_F64), Some(Ordering::Equal));
        assert_eq!(cmp(i64::MIN, -9.25e18), Some(Ordering::Greater));
        assert_eq!(cmp(3, 2.5), Some(Ordering::Greater));
        assert_eq!(cmp(-3, -2.5), Some(Ordering::Less));
        assert_eq!(cmp(0, f64::NAN), None);
    }

    #[test]
    fn order_is_total_with_null_last() {
        let mut values = [
            Value::Null,
            Value::Float(f64::NAN),
            Value::Int(2),
            Value::string("a"),
            Value::Float(1.5),
        ];
        values.sort_by(order);
        let shown: Vec<_> = values.iter().map(|v| format!("{v:?}")).collect();
        assert_eq!(
            shown,
            [
                "String(\"a\")",
                "Float(1.5)",
                "Int(2)",
                "Float(NaN)",
                "Null"
            ]
        );
    }

    fn arbitrary_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            prop_oneof![
                -3i64..3,
                Just(i64::MAX),
                Just(i64::MIN),
                Just(9_200_000_000_000_000_000)
            ]
            .prop_map(Value::Int),
            prop_oneof![
                (-3i64..3).prop_map(|i| i as f64),
                Just(0.5),
                Just(-0.0),
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(9.2e18),
                Just(i64::MAX as f64),
                Just(i64::MIN as f64)
            ]
            .prop_map(Value::Float),
            prop_oneof![Just("a"), Just("b")].prop_map(Value::string),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::list),
                proptest::collection::btree_map(
                    prop_oneof![Just(Arc::<str>::from("k")), Just(Arc::<str>::from("l"))],
                    inner,
                    0..3
                )
                .prop_map(Value::map),
            ]
        })
    }

    fn hash_of(key: &GroupKey) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut hasher);
        hasher.finish()
    }

    proptest! {
        /// What hash joins rely on: equal values are equivalent, hash alike and can be equal;
        /// values that can be equal are equivalent exactly when they are equal.
        #[test]
        fn equal_values_share_a_group_key(a in arbitrary_value(), b in arbitrary_value()) {
            let (ka, kb) = (GroupKey(vec![a.clone()]), GroupKey(vec![b.clone()]));
            if equals(&a, &b) == Some(true) {
                prop_assert!(ka == kb);
                prop_assert_eq!(hash_of(&ka), hash_of(&kb));
                prop_assert!(can_be_equal(&a) && can_be_equal(&b));
            }
            if can_be_equal(&a) && can_be_equal(&b) {
                prop_assert_eq!(ka == kb, equals(&a, &b) == Some(true));
            }
        }
    }

    #[test]
    fn a_large_integral_float_hashes_as_the_integer_it_equals() {
        // i64::MAX as f64 is 2^63, one above i64::MAX: equal to no integer (see
        // `int_float_cmp`); i64::MIN is -2^63 exactly.
        for (i, f) in [
            (i64::MIN, i64::MIN as f64),
            (9_200_000_000_000_000_000, 9.2e18),
        ] {
            assert_eq!(equals(&Value::Int(i), &Value::Float(f)), Some(true));
            let (ki, kf) = (
                GroupKey(vec![Value::Int(i)]),
                GroupKey(vec![Value::Float(f)]),
            );
            assert_eq!(hash_of(&ki), hash_of(&kf));
        }
    }

    #[test]
    fn group_keys_treat_null_and_numbers_as_equivalent() {
        use std::collections::HashSet;
        let set: HashSet<GroupKey> = [
            GroupKey(vec![Value::Null]),
            GroupKey(vec![Value::Null]),
            GroupKey(vec![Value::Int(1)]),
            GroupKey(vec![Value::Float(1.0)]),
        ]
        .into_iter()
        .collect();
        assert_eq!(set.len(), 2);
    }
}
