//! TCK values: the notation of expected results and parameters, and comparison with what the
//! engine returned.
//!
//! ```text
//!   null  true  42  -1.5  1e10  NaN  Inf  'text'  [1, 2]  {k: 'v'}
//!   (:A:B {k: 1})  [:T {k: 1}]  <(:A)-[:T]->(:B)<-[:U]-()>
//! ```
//! Temporal values are written as strings in the TCK (`'2015-07-21'`), so results holding
//! temporal values are compared through their string form.

use plexus::{CypherValue as Value, QueryResult};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub enum TVal {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<TVal>),
    Map(BTreeMap<String, TVal>),
    Node {
        labels: Vec<String>,
        props: BTreeMap<String, TVal>,
    },
    Rel {
        rel_type: String,
        props: BTreeMap<String, TVal>,
    },
    /// Nodes and (relationship, points forward) steps.
    Path {
        nodes: Vec<TVal>,
        rels: Vec<(TVal, bool)>,
    },
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    text: &'a str,
}

pub fn parse(text: &str) -> Result<TVal, String> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        text,
    };
    let value = p.value()?;
    p.ws();
    if p.pos != p.chars.len() {
        return Err(format!("trailing text in `{text}` at {}", p.pos));
    }
    Ok(value)
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{c}' at {} in `{}`", self.pos, self.text))
        }
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.chars.get(self.pos + i) == Some(&c))
    }

    fn name(&mut self) -> Result<String, String> {
        self.ws();
        if self.peek() == Some('`') {
            self.pos += 1;
            let mut s = String::new();
            while let Some(c) = self.peek() {
                self.pos += 1;
                if c == '`' {
                    return Ok(s);
                }
                s.push(c);
            }
            return Err("unterminated `name`".into());
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(format!(
                "expected a name at {} in `{}`",
                self.pos, self.text
            ));
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    fn props(&mut self) -> Result<BTreeMap<String, TVal>, String> {
        let mut map = BTreeMap::new();
        self.expect('{')?;
        if self.eat('}') {
            return Ok(map);
        }
        loop {
            let key = self.name()?;
            self.expect(':')?;
            let value = self.value()?;
            map.insert(key, value);
            if self.eat('}') {
                return Ok(map);
            }
            self.expect(',')?;
        }
    }

    fn node(&mut self) -> Result<TVal, String> {
        self.expect('(')?;
        let mut labels = Vec::new();
        while self.eat(':') {
            labels.push(self.name()?);
        }
        self.ws();
        let props = if self.peek() == Some('{') {
            self.props()?
        } else {
            BTreeMap::new()
        };
        self.expect(')')?;
        labels.sort();
        Ok(TVal::Node { labels, props })
    }

    fn rel(&mut self) -> Result<TVal, String> {
        self.expect('[')?;
        self.expect(':')?;
        let rel_type = self.name()?;
        self.ws();
        let props = if self.peek() == Some('{') {
            self.props()?
        } else {
            BTreeMap::new()
        };
        self.expect(']')?;
        Ok(TVal::Rel { rel_type, props })
    }

    fn value(&mut self) -> Result<TVal, String> {
        self.ws();
        let Some(c) = self.peek() else {
            return Err(format!("empty value in `{}`", self.text));
        };
        match c {
            '\'' | '"' => {
                self.pos += 1;
                let mut s = String::new();
                while let Some(d) = self.peek() {
                    self.pos += 1;
                    if d == '\\' {
                        if let Some(e) = self.peek() {
                            self.pos += 1;
                            match e {
                                '\'' | '"' | '\\' => s.push(e),
                                'n' => s.push('\n'),
                                't' => s.push('\t'),
                                other => {
                                    s.push('\\');
                                    s.push(other);
                                }
                            }
                        }
                    } else if d == c {
                        return Ok(TVal::Str(s));
                    } else {
                        s.push(d);
                    }
                }
                Err(format!("unterminated string in `{}`", self.text))
            }
            '[' => {
                let save = self.pos;
                self.pos += 1;
                self.ws();
                if self.peek() == Some(':') {
                    self.pos = save;
                    return self.rel();
                }
                let mut items = Vec::new();
                if self.eat(']') {
                    return Ok(TVal::List(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(']') {
                        return Ok(TVal::List(items));
                    }
                    self.expect(',')?;
                }
            }
            '{' => Ok(TVal::Map(self.props()?)),
            '(' => self.node(),
            '<' => {
                self.pos += 1;
                let mut nodes = vec![self.node()?];
                let mut rels = Vec::new();
                loop {
                    self.ws();
                    if self.eat('>') {
                        return Ok(TVal::Path { nodes, rels });
                    }
                    if self.starts_with("<-") {
                        self.pos += 2;
                        let rel = self.rel()?;
                        self.expect('-')?;
                        rels.push((rel, false));
                    } else {
                        self.expect('-')?;
                        let rel = self.rel()?;
                        self.expect('-')?;
                        self.expect('>')?;
                        rels.push((rel, true));
                    }
                    nodes.push(self.node()?);
                }
            }
            _ => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '-' | '+' | '.' | '_'))
                {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                match word.as_str() {
                    "null" => Ok(TVal::Null),
                    "true" => Ok(TVal::Bool(true)),
                    "false" => Ok(TVal::Bool(false)),
                    "NaN" => Ok(TVal::Float(f64::NAN)),
                    "Inf" | "Infinity" => Ok(TVal::Float(f64::INFINITY)),
                    "-Inf" | "-Infinity" => Ok(TVal::Float(f64::NEG_INFINITY)),
                    _ => {
                        if let Ok(i) = word.parse::<i64>() {
                            Ok(TVal::Int(i))
                        } else if let Ok(f) = word.parse::<f64>() {
                            Ok(TVal::Float(f))
                        } else {
                            Err(format!("cannot read `{word}` in `{}`", self.text))
                        }
                    }
                }
            }
        }
    }
}

/// Converts a parameter value to an engine value (graph elements are not allowed).
pub fn to_value(v: &TVal) -> Result<Value, String> {
    Ok(match v {
        TVal::Null => Value::Null,
        TVal::Bool(b) => Value::Bool(*b),
        TVal::Int(i) => Value::Int(*i),
        TVal::Float(f) => Value::Float(*f),
        TVal::Str(s) => Value::from(s.as_str()),
        TVal::List(items) => Value::list(items.iter().map(to_value).collect::<Result<_, _>>()?),
        TVal::Map(map) => Value::map(
            map.iter()
                .map(|(k, v)| Ok((std::sync::Arc::from(k.as_str()), to_value(v)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => return Err(format!("a parameter cannot be {other:?}")),
    })
}

fn props_of(map: &plexus::CypherValueMap, result: &QueryResult) -> BTreeMap<String, TVal> {
    map.iter()
        .map(|(k, v)| (k.to_string(), from_result(v, result)))
        .collect()
}

/// Converts a result value, reading graph elements from the result's copies.
pub fn from_result(v: &Value, result: &QueryResult) -> TVal {
    match v {
        Value::Null => TVal::Null,
        Value::Bool(b) => TVal::Bool(*b),
        Value::Int(i) => TVal::Int(*i),
        Value::Float(f) => TVal::Float(*f),
        Value::String(s) => TVal::Str(s.to_string()),
        Value::List(items) => TVal::List(items.iter().map(|i| from_result(i, result)).collect()),
        Value::Map(map) => TVal::Map(props_of(map, result)),
        Value::Node(id) => node_of(*id, result),
        Value::Rel(id) => rel_of(*id, result),
        Value::Path(p) => TVal::Path {
            nodes: p.nodes.iter().map(|n| node_of(*n, result)).collect(),
            rels: p
                .rels
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let forward = result
                        .relationships
                        .get(e)
                        .is_none_or(|d| d.src == p.nodes[i]);
                    (rel_of(*e, result), forward)
                })
                .collect(),
        },
        Value::Temporal(_) | Value::Duration(_) => TVal::Str(plexus::temporal::plain_text(v)),
    }
}

fn node_of(id: plexus::VertexId, result: &QueryResult) -> TVal {
    match result.nodes.get(&id) {
        Some(data) => {
            let mut labels = data.labels.clone();
            labels.sort();
            TVal::Node {
                labels,
                props: props_of(&data.properties, result),
            }
        }
        None => TVal::Node {
            labels: Vec::new(),
            props: BTreeMap::new(),
        },
    }
}

fn rel_of(id: plexus::EdgeId, result: &QueryResult) -> TVal {
    match result.relationships.get(&id) {
        Some(data) => TVal::Rel {
            rel_type: data.rel_type.clone(),
            props: props_of(&data.properties, result),
        },
        None => TVal::Rel {
            rel_type: String::new(),
            props: BTreeMap::new(),
        },
    }
}

fn float_eq(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan())
        || a == b
        || (a.is_finite() && b.is_finite() && (a - b).abs() <= 1e-12 * a.abs().max(b.abs()))
}

/// Equality of expected and actual values; `unordered_lists` compares lists as multisets.
pub fn equal(a: &TVal, b: &TVal, unordered_lists: bool) -> bool {
    match (a, b) {
        (TVal::Null, TVal::Null) => true,
        (TVal::Bool(x), TVal::Bool(y)) => x == y,
        (TVal::Int(x), TVal::Int(y)) => x == y,
        (TVal::Float(x), TVal::Float(y)) => float_eq(*x, *y),
        (TVal::Str(x), TVal::Str(y)) => x == y,
        (TVal::List(x), TVal::List(y)) => {
            if x.len() != y.len() {
                return false;
            }
            if unordered_lists {
                multiset_eq(x, y, |p, q| equal(p, q, true))
            } else {
                x.iter().zip(y).all(|(p, q)| equal(p, q, false))
            }
        }
        (TVal::Map(x), TVal::Map(y)) => map_eq(x, y, unordered_lists),
        (
            TVal::Node {
                labels: la,
                props: pa,
            },
            TVal::Node {
                labels: lb,
                props: pb,
            },
        ) => la == lb && map_eq(pa, pb, unordered_lists),
        (
            TVal::Rel {
                rel_type: ta,
                props: pa,
            },
            TVal::Rel {
                rel_type: tb,
                props: pb,
            },
        ) => ta == tb && map_eq(pa, pb, unordered_lists),
        (
            TVal::Path {
                nodes: na,
                rels: ra,
            },
            TVal::Path {
                nodes: nb,
                rels: rb,
            },
        ) => {
            na.len() == nb.len()
                && ra.len() == rb.len()
                && na.iter().zip(nb).all(|(p, q)| equal(p, q, unordered_lists))
                && ra
                    .iter()
                    .zip(rb)
                    .all(|((p, fp), (q, fq))| fp == fq && equal(p, q, unordered_lists))
        }
        _ => false,
    }
}

fn map_eq(x: &BTreeMap<String, TVal>, y: &BTreeMap<String, TVal>, unordered: bool) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|((ka, va), (kb, vb))| ka == kb && equal(va, vb, unordered))
}

/// Whether two sequences are equal as multisets under `eq`.
pub fn multiset_eq<T>(x: &[T], y: &[T], eq: impl Fn(&T, &T) -> bool) -> bool {
    if x.len() != y.len() {
        return false;
    }
    let mut used = vec![false; y.len()];
    'outer: for a in x {
        for (i, b) in y.iter().enumerate() {
            if !used[i] && eq(a, b) {
                used[i] = true;
                continue 'outer;
            }
        }
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_tck_notation() {
        let v = parse("<(:A {name: 'a'})-[:T]->(:B)<-[:U {w: 1.5}]-()>").unwrap();
        let TVal::Path { nodes, rels } = v else {
            panic!("not a path")
        };
        assert_eq!(nodes.len(), 3);
        assert!(rels[0].1 && !rels[1].1);
        assert!(
            matches!(parse("[[:T]]").unwrap(), TVal::List(items) if matches!(items[0], TVal::Rel { .. }))
        );
        assert!(matches!(parse("-Inf").unwrap(), TVal::Float(f) if f == f64::NEG_INFINITY));
        assert!(equal(
            &parse("[1, 2]").unwrap(),
            &parse("[2, 1]").unwrap(),
            true
        ));
        assert!(!equal(
            &parse("[1, 2]").unwrap(),
            &parse("[2, 1]").unwrap(),
            false
        ));
    }
}
