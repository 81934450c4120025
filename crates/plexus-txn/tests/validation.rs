//! Validation scenarios as data: every `tests/cases/*.test` file of this crate is a list of
//! scenarios, each on a fresh in-memory database, each run once under `fsync` durability
//! (every commit summary is kept) and once under `none` (a summary is kept only while another
//! transaction is open, see `manager`), with the same expected outcomes.
//!
//! FORMAT (line-oriented; blank lines are ignored, `#` starts a comment)
//! ======
//! ```text
//! scenario write skew: each doctor reads both and takes one off call
//! setup                                  # optional marker; setup ends at the first step
//! table Account id                       # a declared vertex table, Int64 primary key `id`
//! vertex a :Doctor {on: true}            # committed together, before any step runs
//! vertex b :Doctor {on: true}
//! edge k a :KNOWS b {since: 2020}
//! step T1 begin serializable             # or: snapshot
//! step T2 begin serializable
//! step T1 read scan :Doctor = [a, b]     # `= …` checks the result; without it, only reads
//! step T1 read b.on = true
//! step T2 read scan :Doctor
//! step T2 read a.on
//! step T1 set a.on = false
//! step T2 set b.on = false
//! step T1 commit ok
//! step T2 commit abort ReadValidation on property 'on' of vertex a
//! ```
//! (A label scan alone reads the label's membership, not the vertices' properties: without
//! the two property reads both commit — `cases/phantoms.test`.)
//! Names (`a`, `k`, `T1`) are the scenario's own: a vertex or edge is named where it is
//! created, in setup or in a step, and every later line refers to it by that name.
//!
//! STEPS (`step <txn> <verb> …`)
//! =====
//! - `begin snapshot|serializable`
//! - reads, each optionally followed by `= <expected>`:
//!   `read a.p` (a vertex property: a value, `null` if absent), `read exists a` (`true` or
//!   `false`), `read labels a` (`:A:B`, sorted), `read scan :L` (a label scan: `[a, b]`),
//!   `read scan-any :L1:L2` (the union of the labels' scans, each vertex once: `[a, b]`),
//!   `read neighbors a out|in|both [:T]` (the vertices at the other end, of one edge type or
//!   all: `[b]`), `read edges :T` (an edge-type scan: `[k]`), `read lookup Account 7` (a
//!   primary-key lookup: a name or `null`). Lists are sorted by name. A read that fails
//!   shows as `error <Error variant>`, e.g. `= error NotFound`.
//! - writes, each optionally followed by `error <Error variant>` when the call must fail:
//!   `set a.p = <value>`, `vertex c :L1:L2 {p: 1}`, `edge k a :T b {p: 1}`, `delete a`
//!   (a vertex with edges fails) or `delete k` (an edge), `detach-delete a`,
//!   `label a +L` / `label a -L` (add or remove a label).
//! - `commit ok`, `commit abort WriteConflict|ReadValidation|TooOld [on <item>]` — the item,
//!   when given, must equal the abort's item text with vertex and edge ids replaced by names;
//!   `rollback`.
//!
//! Values are `null`, `true`, `false`, integers, floats and `'strings'`. Every step's outcome
//! is compared with the expectation; the first mismatch ends the scenario and is reported
//! with the file and line. All failures of all files are collected before the test fails.

use plexus_storage::FaultVfs;
use plexus_storage::Storage;
use plexus_txn::{Transaction, TxnManager, VertexTableSpec};
use plexus_types::{
    AbortReason, Config, DataType, Direction, DurabilityMode, EdgeId, Error, IsolationLevel, Value,
    VertexId,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

struct Scenario {
    /// `file:line` of the `scenario` line.
    at: String,
    title: String,
    /// (line, text) of each setup line, then of each step (without the `step` word).
    setup: Vec<(usize, String)>,
    steps: Vec<(usize, String)>,
}

fn parse_file(path: &Path, text: &str) -> Result<Vec<Scenario>, String> {
    let mut out: Vec<Scenario> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let text = strip_comment(raw).trim();
        if text.is_empty() || text == "setup" {
            continue;
        }
        let at = format!("{}:{line}", path.display());
        if let Some(title) = text.strip_prefix("scenario") {
            out.push(Scenario {
                at,
                title: title.trim().to_string(),
                setup: Vec::new(),
                steps: Vec::new(),
            });
            continue;
        }
        let Some(current) = out.last_mut() else {
            return Err(format!("{at}: a line before the first `scenario`"));
        };
        if let Some(step) = text.strip_prefix("step ") {
            current.steps.push((line, step.trim().to_string()));
        } else if current.steps.is_empty() {
            current.setup.push((line, text.to_string()));
        } else {
            return Err(format!("{at}: setup line after the first step: {text}"));
        }
    }
    Ok(out)
}

/// The line without its `#` comment (a `#` inside a quoted string is kept).
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '#' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

#[derive(Clone, Copy, PartialEq)]
enum Named {
    Vertex(VertexId),
    Edge(EdgeId),
}

/// One scenario's database, transactions and names.
struct World {
    manager: Arc<TxnManager>,
    names: HashMap<String, Named>,
    txns: HashMap<String, Transaction>,
}

fn parse_value(text: &str) -> Result<Value, String> {
    let t = text.trim();
    Ok(match t {
        "null" => Value::Null,
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') => {
            Value::String(t[1..t.len() - 1].into())
        }
        _ => match t.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Float(t.parse().map_err(|_| format!("bad value `{t}`"))?),
        },
    })
}

fn render_value(value: &Option<Value>) -> String {
    match value {
        None | Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(f)) => format!("{f:?}"),
        Some(Value::String(s)) => format!("'{s}'"),
        Some(other) => format!("{other:?}"),
    }
}

/// `{p: 1, q: 'x'}` (or nothing) as property pairs.
fn parse_props(text: &str) -> Result<Vec<(String, Value)>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    let inner = t
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| format!("expected {{…}} properties, got `{t}`"))?;
    let mut out = Vec::new();
    for pair in inner.split(',').filter(|p| !p.trim().is_empty()) {
        let (key, value) = pair
            .split_once(':')
            .ok_or_else(|| format!("bad property `{pair}`"))?;
        out.push((key.trim().to_string(), parse_value(value)?));
    }
    Ok(out)
}

/// `:A:B` as label names.
fn parse_labels(text: &str) -> Result<Vec<&str>, String> {
    let rest = text
        .strip_prefix(':')
        .ok_or_else(|| format!("expected :Label, got `{text}`"))?;
    Ok(rest.split(':').collect())
}

/// The Error variant's name (`NotFound`, `Aborted`, …).
fn error_kind(e: &Error) -> String {
    let debug = format!("{e:?}");
    let end = debug
        .find(|c: char| !c.is_alphanumeric())
        .unwrap_or(debug.len());
    debug[..end].to_string()
}

/// Splits `text` at its last `error <Kind>` suffix, if any.
fn split_expected_error(text: &str) -> (&str, Option<&str>) {
    match text.rsplit_once(" error ") {
        Some((body, kind)) if !kind.contains(' ') => (body.trim(), Some(kind.trim())),
        _ => (text, None),
    }
}

impl World {
    fn open(durability: DurabilityMode) -> Result<World, String> {
        let config = Config {
            durability,
            background_maintenance: false,
            ..Config::default()
        };
        let (storage, _report) =
            Storage::open(Arc::new(FaultVfs::new()), &config).map_err(|e| e.to_string())?;
        Ok(World {
            manager: TxnManager::new(Arc::new(storage), config),
            names: HashMap::new(),
            txns: HashMap::new(),
        })
    }

    fn vertex(&self, name: &str) -> Result<VertexId, String> {
        match self.names.get(name) {
            Some(Named::Vertex(v)) => Ok(*v),
            _ => Err(format!("no vertex named `{name}`")),
        }
    }

    fn name_of(&self, item: Named) -> String {
        let found = self.names.iter().find(|(_, n)| **n == item);
        match (found, item) {
            (Some((name, _)), _) => name.clone(),
            (None, Named::Vertex(v)) => v.to_string(),
            (None, Named::Edge(e)) => e.to_string(),
        }
    }

    fn list(&self, items: impl IntoIterator<Item = Named>) -> String {
        let mut names: Vec<String> = items.into_iter().map(|i| self.name_of(i)).collect();
        names.sort();
        format!("[{}]", names.join(", "))
    }

    /// An abort's item text with ids replaced by names.
    fn named_item(&self, item: &str) -> String {
        let display: HashMap<String, &String> = (self.names.iter())
            .map(|(name, n)| match n {
                Named::Vertex(v) => (v.to_string(), name),
                Named::Edge(e) => (e.to_string(), name),
            })
            .collect();
        item.split(' ')
            .map(|word| display.get(word).map_or(word, |n| n.as_str()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn run_setup(&mut self, lines: &[(usize, String)]) -> Result<(), (usize, String)> {
        let mut txn = plexus_txn::begin(&self.manager, IsolationLevel::Snapshot);
        for (line, text) in lines {
            let fail = |e: String| (*line, e);
            if let Some(rest) = text.strip_prefix("table ") {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let [table, key] = words[..] else {
                    return Err(fail(format!("expected `table <Name> <key>`: {text}")));
                };
                let spec = VertexTableSpec::new(table)
                    .property(key, DataType::Int64)
                    .primary_key(key);
                plexus_txn::create_vertex_table(&self.manager, &spec)
                    .map_err(|e| fail(e.to_string()))?;
                continue;
            }
            self.write(&mut txn, text).map_err(fail)?;
        }
        txn.commit()
            .map(drop)
            .map_err(|e| (0, format!("setup commit: {e}")))
    }

    /// Runs one step; returns a mismatch description.
    fn step(&mut self, text: &str) -> Result<(), String> {
        let (txn_name, rest) = text
            .split_once(' ')
            .ok_or_else(|| format!("expected `<txn> <verb> …`: {text}"))?;
        let (verb, args) = rest.split_once(' ').unwrap_or((rest, ""));
        match verb {
            "begin" => {
                let level = match args.trim() {
                    "snapshot" => IsolationLevel::Snapshot,
                    "serializable" => IsolationLevel::Serializable,
                    other => return Err(format!("unknown isolation level `{other}`")),
                };
                let txn = plexus_txn::begin(&self.manager, level);
                if self.txns.insert(txn_name.to_string(), txn).is_some() {
                    return Err(format!("{txn_name} was already open"));
                }
                Ok(())
            }
            "commit" => {
                let txn = self.take_txn(txn_name)?;
                let actual = match txn.commit() {
                    Ok(_) => "ok".to_string(),
                    Err(Error::Aborted(reason)) => match reason {
                        AbortReason::WriteConflict { item } => {
                            format!("abort WriteConflict on {}", self.named_item(&item))
                        }
                        AbortReason::ReadValidation { item } => {
                            format!("abort ReadValidation on {}", self.named_item(&item))
                        }
                        AbortReason::TooOld => "abort TooOld".to_string(),
                    },
                    Err(e) => format!("error {}: {e}", error_kind(&e)),
                };
                let expected = args.trim();
                let matches = if expected.contains(" on ") {
                    actual == expected
                } else {
                    actual.split(" on ").next() == Some(expected)
                };
                if matches {
                    Ok(())
                } else {
                    Err(format!("expected commit {expected}, got {actual}"))
                }
            }
            "rollback" => {
                self.take_txn(txn_name)?.rollback();
                Ok(())
            }
            "read" => {
                let (target, expected) = match args.split_once(" = ") {
                    Some((t, e)) => (t.trim(), Some(e.trim())),
                    None => (args.trim(), None),
                };
                let mut txn = self.take_txn(txn_name)?;
                let actual = self.read(&mut txn, target);
                self.txns.insert(txn_name.to_string(), txn);
                let actual = actual?;
                match expected {
                    Some(e) if e != actual => Err(format!("expected {e}, got {actual}")),
                    _ => Ok(()),
                }
            }
            _ => {
                let (body, expected_error) = split_expected_error(rest);
                let mut txn = self.take_txn(txn_name)?;
                let result = self.write(&mut txn, body);
                self.txns.insert(txn_name.to_string(), txn);
                match (result, expected_error) {
                    (Ok(()), None) => Ok(()),
                    (Ok(()), Some(kind)) => {
                        Err(format!("expected error {kind}, the write succeeded"))
                    }
                    (Err(e), None) => Err(format!("the write failed: {e}")),
                    (Err(e), Some(kind)) if e.starts_with(&format!("{kind}:")) => Ok(()),
                    (Err(e), Some(kind)) => Err(format!("expected error {kind}, got {e}")),
                }
            }
        }
    }

    fn take_txn(&mut self, name: &str) -> Result<Transaction, String> {
        self.txns
            .remove(name)
            .ok_or_else(|| format!("transaction {name} is not open"))
    }

    /// A read's rendered result (`error <Kind>` if the call failed); `Err` for a bad line.
    fn read(&self, txn: &mut Transaction, target: &str) -> Result<String, String> {
        let words: Vec<&str> = target.split_whitespace().collect();
        let render_err = |e: Error| format!("error {}", error_kind(&e));
        Ok(match words[..] {
            ["exists", v] => match txn.vertex_exists(self.vertex(v)?) {
                Ok(b) => b.to_string(),
                Err(e) => render_err(e),
            },
            ["labels", v] => match txn.vertex_labels(self.vertex(v)?) {
                Ok(mut labels) => {
                    labels.sort();
                    labels.iter().map(|l| format!(":{l}")).collect()
                }
                Err(e) => render_err(e),
            },
            ["scan", label] => match txn.scan_label(parse_labels(label)?[0]) {
                Ok(vs) => self.list(vs.into_iter().map(Named::Vertex)),
                Err(e) => render_err(e),
            },
            ["scan-any", labels] => match txn.scan_any_label(&parse_labels(labels)?) {
                Ok(vs) => self.list(vs.into_iter().map(Named::Vertex)),
                Err(e) => render_err(e),
            },
            ["edges", ty] => match txn.scan_edges(parse_labels(ty)?[0]) {
                Ok(es) => self.list(es.into_iter().map(Named::Edge)),
                Err(e) => render_err(e),
            },
            ["lookup", table, key] => match txn.lookup(table, &parse_value(key)?) {
                Ok(Some(v)) => self.name_of(Named::Vertex(v)),
                Ok(None) => "null".to_string(),
                Err(e) => render_err(e),
            },
            ["neighbors", v, dir, ref ty @ ..] => {
                let dir = match dir {
                    "out" => Direction::Out,
                    "in" => Direction::In,
                    "both" => Direction::Both,
                    other => return Err(format!("unknown direction `{other}`")),
                };
                let ty = match ty {
                    [] => None,
                    [t] => Some(parse_labels(t)?[0]),
                    _ => return Err(format!("bad neighbors read `{target}`")),
                };
                match txn.neighbors(self.vertex(v)?, ty, dir) {
                    Ok(found) => self.list(found.into_iter().map(|(_, n)| Named::Vertex(n))),
                    Err(e) => render_err(e),
                }
            }
            [prop] => {
                let (v, key) = prop
                    .split_once('.')
                    .ok_or_else(|| format!("unknown read `{target}`"))?;
                match txn.vertex_property(self.vertex(v)?, key) {
                    Ok(value) => render_value(&value),
                    Err(e) => render_err(e),
                }
            }
            _ => return Err(format!("unknown read `{target}`")),
        })
    }

    /// Performs a write (setup line or step); `Err("<Kind>: message")` if the call failed,
    /// `Err(description)` for a bad line.
    fn write(&mut self, txn: &mut Transaction, text: &str) -> Result<(), String> {
        let (verb, args) = text.split_once(' ').unwrap_or((text, ""));
        let call_err = |e: Error| format!("{}: {e}", error_kind(&e));
        match verb {
            "vertex" => {
                let (name, rest) = args.trim().split_once(' ').unwrap_or((args.trim(), ""));
                let rest = rest.trim();
                let (labels, props) = match rest.find('{') {
                    Some(at) => (rest[..at].trim(), &rest[at..]),
                    None => (rest, ""),
                };
                let labels = if labels.is_empty() {
                    Vec::new()
                } else {
                    parse_labels(labels)?
                };
                let props = parse_props(props)?;
                let props: Vec<(&str, Value)> =
                    props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                let v = txn.create_vertex(&labels, &props).map_err(call_err)?;
                self.names.insert(name.to_string(), Named::Vertex(v));
            }
            "edge" => {
                let (head, props) = match args.find('{') {
                    Some(at) => (&args[..at], &args[at..]),
                    None => (args, ""),
                };
                let words: Vec<&str> = head.split_whitespace().collect();
                let [name, src, ty, dst] = words[..] else {
                    return Err(format!("expected `edge <name> <src> :TYPE <dst>`: {text}"));
                };
                let props = parse_props(props)?;
                let props: Vec<(&str, Value)> =
                    props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                let (src, dst) = (self.vertex(src)?, self.vertex(dst)?);
                let ty = parse_labels(ty)?[0];
                let e = txn.create_edge(src, ty, dst, &props).map_err(call_err)?;
                self.names.insert(name.to_string(), Named::Edge(e));
            }
            "set" => {
                let (target, value) = args
                    .split_once(" = ")
                    .ok_or_else(|| format!("expected `set a.p = value`: {text}"))?;
                let (v, key) = target
                    .trim()
                    .split_once('.')
                    .ok_or_else(|| format!("expected `set a.p = value`: {text}"))?;
                let value = parse_value(value)?;
                (txn.set_vertex_property(self.vertex(v)?, key, value)).map_err(call_err)?;
            }
            "delete" | "detach-delete" => match self.names.get(args.trim()).copied() {
                Some(Named::Vertex(v)) => {
                    (txn.delete_vertex(v, verb == "detach-delete")).map_err(call_err)?
                }
                Some(Named::Edge(e)) => txn.delete_edge(e).map_err(call_err)?,
                None => return Err(format!("nothing named `{}`", args.trim())),
            },
            "label" => {
                let words: Vec<&str> = args.split_whitespace().collect();
                let [v, change] = words[..] else {
                    return Err(format!("expected `label a +L|-L`: {text}"));
                };
                let v = self.vertex(v)?;
                let result = match (change.strip_prefix('+'), change.strip_prefix('-')) {
                    (Some(label), _) => txn.add_label(v, label),
                    (_, Some(label)) => txn.remove_label(v, label),
                    _ => return Err(format!("expected `label a +L|-L`: {text}")),
                };
                result.map_err(call_err)?;
            }
            _ => return Err(format!("unknown step `{text}`")),
        }
        Ok(())
    }
}

fn run_scenario(scenario: &Scenario, path: &Path, durability: DurabilityMode) -> Option<String> {
    let fail = |line: usize, e: String| {
        let at = if line == 0 {
            scenario.at.clone()
        } else {
            format!("{}:{line}", path.display())
        };
        Some(format!("{at} [{durability:?}] ({}): {e}", scenario.title))
    };
    let mut world = match World::open(durability) {
        Ok(w) => w,
        Err(e) => return fail(0, format!("cannot open storage: {e}")),
    };
    if let Err((line, e)) = world.run_setup(&scenario.setup) {
        return fail(line, e);
    }
    for (line, text) in &scenario.steps {
        if let Err(e) = world.step(text) {
            return fail(*line, format!("step `{text}`: {e}"));
        }
    }
    None
}

#[test]
fn validation_cases() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/cases exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .test files under {}", dir.display());
    let mut failures = Vec::new();
    let mut count = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable case file");
        let scenarios = match parse_file(path, &text) {
            Ok(s) => s,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for scenario in &scenarios {
            count += 1;
            for durability in [DurabilityMode::Fsync, DurabilityMode::None] {
                failures.extend(run_scenario(scenario, path, durability));
            }
        }
    }
    assert!(count > 0, "no scenarios");
    assert!(
        failures.is_empty(),
        "{} failure(s) in {count} scenarios (each run under Fsync and None):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
