//! `plexus-tck`: runs the openCypher TCK against Plexus.
//!
//! ```text
//! cargo run --release -p plexus-tck -- ../shared/data/opencypher-tck/features [--floor FILE]
//! ```
//!
//! Every scenario — every Examples row of an outline — runs on a fresh in-memory database
//! (`Database::open_in_memory`) through a `plexus::Connection`: the `Given` graph and
//! `having executed` queries set it up, `When executing query` runs the query under test, and
//! the `Then` steps check its rows (in order, in any order, or ignoring list order), its side
//! effects (the TCK's +nodes / -relationships / +properties / +labels counts, measured by
//! diffing the graph before and after) or the error it must raise (class, detail code and
//! phase).
//!
//! Output: one line per feature folder, then `N passed, M failed`. With `--floor FILE`
//! (a file holding a number) the exit status is non-zero if fewer scenarios pass.
//! `--failures` lists the failing scenarios with the reason; `--filter TEXT` runs only the
//! scenarios whose file path or name contains TEXT; `--set NAME=VALUE` (repeatable) opens
//! every database with that setting (`--set default_jit=on`: every filter compiled).

mod gherkin;
mod values;

use clap::Parser as _;
use gherkin::{Scenario, Step};
use plexus::settings::{Settings, Source};
use plexus::{Config, Connection, Database, Params, Procedure, QueryResult};
use plexus::{ErrorClass, Phase, QueryError};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use values::TVal;

#[derive(clap::Parser)]
#[command(about = "Run the openCypher TCK against Plexus")]
struct Args {
    /// The TCK `features` directory.
    features: PathBuf,
    /// Fail (exit 1) if fewer scenarios pass than the number in this file.
    #[arg(long)]
    floor: Option<PathBuf>,
    /// Print each failing scenario and why it failed.
    #[arg(long)]
    failures: bool,
    /// Only run scenarios whose file path or name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// A database setting for every scenario, `NAME=VALUE` (repeatable), e.g.
    /// `--set default_jit=on` to run every filter compiled.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    settings: Vec<String>,
}

/// Stack for the thread that runs the scenarios (deeply nested queries recurse).
const RUNNER_STACK_BYTES: usize = 256 << 20;

fn main() {
    let args = Args::parse();
    let worker = std::thread::Builder::new()
        .stack_size(RUNNER_STACK_BYTES)
        .spawn(move || run(args));
    let code = match worker.map(|handle| handle.join()) {
        Ok(Ok(code)) => code,
        _ => {
            eprintln!("plexus-tck: the runner thread failed");
            2
        }
    };
    std::process::exit(code);
}

fn collect_features(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_features(&path, out);
        } else if path.extension().is_some_and(|e| e == "feature") {
            out.push(path);
        }
    }
}

fn run(args: Args) -> i32 {
    let mut files = Vec::new();
    collect_features(&args.features, &mut files);
    files.sort();
    if files.is_empty() {
        eprintln!(
            "plexus-tck: no .feature files under {}",
            args.features.display()
        );
        return 2;
    }
    let mut settings = Settings::from_config(Config::default());
    for pair in &args.settings {
        let applied = pair
            .split_once('=')
            .ok_or_else(|| format!("--set {pair}: expected NAME=VALUE"))
            .and_then(|(name, value)| {
                settings
                    .set(name.trim(), value.trim(), Source::CommandLine)
                    .map_err(|e| format!("--set {pair}: {e}"))
            });
        if let Err(e) = applied {
            eprintln!("plexus-tck: {e}");
            return 2;
        }
    }
    let graphs = args.features.join("../graphs");
    // Keep panics from tests quiet; they are reported as failures.
    std::panic::set_hook(Box::new(|_| {}));
    let mut folders: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        let relative = file.strip_prefix(&args.features).unwrap_or(file);
        let folder = relative
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let Ok(text) = std::fs::read_to_string(file) else {
            eprintln!("plexus-tck: cannot read {}", file.display());
            return 2;
        };
        let file_name = relative.display().to_string();
        for scenario in gherkin::parse_feature(&text, &file_name) {
            if let Some(filter) = &args.filter
                && !file_name.contains(filter.as_str())
                && !scenario.name.contains(filter.as_str())
            {
                continue;
            }
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_scenario(&scenario, &graphs, &settings)
            }))
            .unwrap_or_else(|_| Err("panicked".to_string()));
            let entry = folders.entry(folder.clone()).or_default();
            match outcome {
                Ok(()) => {
                    passed += 1;
                    entry.0 += 1;
                }
                Err(reason) => {
                    failed += 1;
                    entry.1 += 1;
                    if args.failures {
                        println!(
                            "FAIL {file_name}: {}\n     {}",
                            scenario.name,
                            reason.replace('\n', "\n     ")
                        );
                    }
                }
            }
        }
    }
    for (folder, (p, f)) in &folders {
        println!("{folder:<45} {p:>4} / {:<4} passed", p + f);
    }
    println!("{passed} passed, {failed} failed");
    if let Some(floor_file) = &args.floor {
        let floor: usize = match std::fs::read_to_string(floor_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            Some(n) => n,
            None => {
                eprintln!(
                    "plexus-tck: cannot read a number from {}",
                    floor_file.display()
                );
                return 2;
            }
        };
        if passed < floor {
            eprintln!("plexus-tck: {passed} scenarios passed, below the floor of {floor}");
            return 1;
        }
    }
    0
}

/// The graph state the TCK's side-effect counts are defined over.
#[derive(Default)]
struct GraphState {
    nodes: HashSet<String>,
    rels: HashSet<String>,
    /// (entity, key, value) triples, as text.
    properties: HashMap<String, usize>,
    labels: HashSet<String>,
}

fn graph_state(db: &Database) -> Result<GraphState, String> {
    let mut tx = db.begin();
    let mut state = GraphState::default();
    let vertices = tx.scan_all_vertices().map_err(|e| e.to_string())?;
    for v in vertices {
        state.nodes.insert(v.to_string());
        for label in tx.vertex_labels(v).map_err(|e| e.to_string())? {
            state.labels.insert(label);
        }
        for (k, value) in tx.vertex_properties(v).map_err(|e| e.to_string())? {
            *state
                .properties
                .entry(format!("{v}|{k}|{value}"))
                .or_default() += 1;
        }
        for (e, _) in tx
            .neighbors(v, None, plexus::Direction::Out)
            .map_err(|e| e.to_string())?
        {
            state.rels.insert(e.to_string());
            for (k, value) in tx.edge_properties(e).map_err(|e| e.to_string())? {
                *state
                    .properties
                    .entry(format!("{e}|{k}|{value}"))
                    .or_default() += 1;
            }
        }
    }
    Ok(state)
}

fn count_diff(before: &HashMap<String, usize>, after: &HashMap<String, usize>) -> (usize, usize) {
    let mut added = 0;
    let mut removed = 0;
    for (k, n) in after {
        added += n.saturating_sub(*before.get(k).unwrap_or(&0));
    }
    for (k, n) in before {
        removed += n.saturating_sub(*after.get(k).unwrap_or(&0));
    }
    (added, removed)
}

fn side_effects(before: &GraphState, after: &GraphState) -> BTreeMap<&'static str, usize> {
    let (props_added, props_removed) = count_diff(&before.properties, &after.properties);
    BTreeMap::from([
        ("+nodes", after.nodes.difference(&before.nodes).count()),
        ("-nodes", before.nodes.difference(&after.nodes).count()),
        (
            "+relationships",
            after.rels.difference(&before.rels).count(),
        ),
        (
            "-relationships",
            before.rels.difference(&after.rels).count(),
        ),
        ("+properties", props_added),
        ("-properties", props_removed),
        ("+labels", after.labels.difference(&before.labels).count()),
        ("-labels", before.labels.difference(&after.labels).count()),
    ])
}

struct Outcome {
    result: Result<QueryResult, QueryError>,
    before: GraphState,
    after: GraphState,
}

/// `test.my.proc(in :: INTEGER?) :: (out :: STRING?):` → name, inputs, input types,
/// outputs.
type Signature = (String, Vec<String>, Vec<String>, Vec<String>);

fn procedure_signature(text: &str) -> Option<Signature> {
    let rest = text.strip_prefix("there exists a procedure ")?;
    let open = rest.find('(')?;
    let name = rest[..open].trim().to_string();
    let close = rest[open..].find(')')? + open;
    let names = |list: &str| -> Vec<String> {
        list.split(',')
            .filter_map(|p| p.split("::").next())
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect()
    };
    let inputs = names(&rest[open + 1..close]);
    let input_types: Vec<String> = rest[open + 1..close]
        .split(',')
        .filter_map(|p| p.split_once("::"))
        .map(|(_, t)| t.trim().to_string())
        .collect();
    let after = &rest[close + 1..];
    let out_open = after.find('(')?;
    let out_close = after.rfind(')')?;
    let outputs = names(&after[out_open + 1..out_close]);
    Some((name, inputs, input_types, outputs))
}

fn run_scenario(scenario: &Scenario, graphs: &Path, settings: &Settings) -> Result<(), String> {
    let db = Database::open_in_memory_settings(settings.clone())
        .map_err(|e| format!("cannot open a database: {e}"))?;
    let mut conn = db.connect();
    let mut params = Params::new();
    let mut outcome: Option<Outcome> = None;
    for step in &scenario.steps {
        let text = step.text.as_str();
        if text == "an empty graph" || text == "any graph" {
            continue;
        }
        if let Some(name) = text
            .strip_prefix("the ")
            .and_then(|t| t.strip_suffix(" graph"))
        {
            let script = graphs.join(name).join(format!("{name}.cypher"));
            let query = std::fs::read_to_string(&script)
                .map_err(|e| format!("cannot read {}: {e}", script.display()))?;
            conn.execute(&query, &Params::new())
                .map_err(|e| format!("setting up graph {name} failed: {e}"))?;
        } else if text.starts_with("having executed") || text.starts_with("after having executed") {
            let query = step.docstring.as_deref().unwrap_or_default();
            conn.execute(query, &Params::new())
                .map_err(|e| format!("setup query failed: {e}\n{query}"))?;
        } else if text.starts_with("parameters are") || text.starts_with("parameter values are") {
            for row in &step.table {
                if row.len() < 2 {
                    continue;
                }
                let value = values::parse(&row[1]).and_then(|v| values::to_value(&v))?;
                params.insert(row[0].clone(), value);
            }
        } else if text.starts_with("there exists a procedure") {
            register_procedure(&mut conn, text, step)?;
        } else if text.starts_with("executing query") || text.starts_with("executing control query")
        {
            let query = step.docstring.clone().unwrap_or_else(|| {
                text.split_once(':')
                    .map(|(_, q)| q.trim().to_string())
                    .unwrap_or_default()
            });
            let before = graph_state(&db)?;
            let result = conn.execute(&query, &params);
            let after = graph_state(&db)?;
            outcome = Some(Outcome {
                result,
                before,
                after,
            });
        } else if text.starts_with("the result should be") {
            let outcome = outcome.as_ref().ok_or("no query was executed")?;
            let result = outcome
                .result
                .as_ref()
                .map_err(|e| format!("query failed: {e}"))?;
            check_rows(result, step)?;
        } else if text.starts_with("no side effects") {
            let outcome = outcome.as_ref().ok_or("no query was executed")?;
            if let Err(e) = &outcome.result {
                return Err(format!("query failed: {e}"));
            }
            let effects = side_effects(&outcome.before, &outcome.after);
            if let Some((name, n)) = effects.iter().find(|(_, n)| **n != 0) {
                return Err(format!("expected no side effects, got {name} {n}"));
            }
        } else if text.starts_with("the side effects should be") {
            let outcome = outcome.as_ref().ok_or("no query was executed")?;
            if let Err(e) = &outcome.result {
                return Err(format!("query failed: {e}"));
            }
            let effects = side_effects(&outcome.before, &outcome.after);
            let mut expected: BTreeMap<String, usize> = BTreeMap::new();
            for row in &step.table {
                if row.len() >= 2 {
                    expected.insert(row[0].clone(), row[1].parse().unwrap_or(usize::MAX));
                }
            }
            for (name, n) in &effects {
                let want = expected.get(*name).copied().unwrap_or(0);
                if want != *n {
                    return Err(format!("side effect {name}: expected {want}, got {n}"));
                }
            }
        } else if text.starts_with("a ") && text.contains(" should be raised at ") {
            let outcome = outcome.as_ref().ok_or("no query was executed")?;
            check_error(&outcome.result, text)?;
        } else {
            return Err(format!("unsupported step: {text}"));
        }
    }
    Ok(())
}

fn register_procedure(conn: &mut Connection, text: &str, step: &Step) -> Result<(), String> {
    let (name, inputs, input_types, outputs) = procedure_signature(text)
        .ok_or_else(|| format!("cannot read procedure signature: {text}"))?;
    let mut rows = Vec::new();
    if let Some((header, body)) = step.table.split_first() {
        for row in body {
            let mut values = Vec::new();
            for column in inputs.iter().chain(&outputs) {
                let index = header
                    .iter()
                    .position(|h| h == column)
                    .ok_or_else(|| format!("procedure table has no column {column}"))?;
                let cell = row.get(index).ok_or("short procedure table row")?;
                values.push(values::to_value(&values::parse(cell)?)?);
            }
            rows.push(values);
        }
    }
    conn.register_procedure(Procedure {
        name,
        inputs,
        input_types,
        defaults: Vec::new(),
        outputs,
        rows,
        compute: None,
    });
    Ok(())
}

fn check_rows(result: &QueryResult, step: &Step) -> Result<(), String> {
    let ordered = step.text.contains("in order");
    let unordered_lists = step.text.contains("ignoring element order for lists");
    let expected_empty = step.text.contains("should be empty");
    let (header, body): (Vec<String>, &[Vec<String>]) = if expected_empty {
        (result.columns.clone(), &[])
    } else {
        match step.table.split_first() {
            Some((h, b)) => (h.clone(), b),
            None => (Vec::new(), &[]),
        }
    };
    if !expected_empty && header != result.columns {
        return Err(format!(
            "columns: expected {header:?}, got {:?}",
            result.columns
        ));
    }
    let index: Vec<usize> = header
        .iter()
        .map(|h| result.columns.iter().position(|c| c == h).unwrap_or(0))
        .collect();
    let mut expected = Vec::with_capacity(body.len());
    for row in body {
        let mut values = Vec::with_capacity(row.len());
        for cell in row {
            values.push(values::parse(cell)?);
        }
        expected.push(values);
    }
    let actual: Vec<Vec<TVal>> = result
        .rows
        .iter()
        .map(|row| {
            index
                .iter()
                .map(|&i| {
                    row.get(i)
                        .map_or(TVal::Null, |v| values::from_result(v, result))
                })
                .collect()
        })
        .collect();
    let row_eq = |a: &Vec<TVal>, b: &Vec<TVal>| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| values::equal(x, y, unordered_lists))
    };
    let same = if ordered {
        expected.len() == actual.len() && expected.iter().zip(&actual).all(|(a, b)| row_eq(a, b))
    } else {
        values::multiset_eq(&expected, &actual, row_eq)
    };
    if same {
        return Ok(());
    }
    let shown: Vec<String> = result
        .rows
        .iter()
        .take(20)
        .map(|row| result.render_row(row))
        .collect();
    Err(format!(
        "rows differ: expected {} row(s) {:?}, got {} row(s):\n{}",
        body.len(),
        body.iter().take(10).collect::<Vec<_>>(),
        result.rows.len(),
        shown.join("\n")
    ))
}

fn check_error(result: &Result<QueryResult, QueryError>, text: &str) -> Result<(), String> {
    // "a SyntaxError should be raised at compile time: UndefinedVariable"
    let rest = text.strip_prefix("a ").unwrap_or(text);
    let (class, rest) = rest
        .split_once(" should be raised at ")
        .ok_or("bad error step")?;
    let (phase, code) = rest.split_once(':').unwrap_or((rest, ""));
    let (phase, code) = (phase.trim(), code.trim());
    let error = match result {
        Ok(r) => {
            return Err(format!(
                "expected {class} {code}, but the query returned {} row(s)",
                r.rows.len()
            ));
        }
        Err(e) => e,
    };
    let class_ok = error.class.name() == class
        || (class == "ConstraintVerificationFailed"
            && error.class == ErrorClass::ConstraintVerificationFailed);
    let phase_ok = match phase {
        "compile time" => error.phase == Phase::Compile,
        "runtime" => error.phase == Phase::Runtime,
        _ => true,
    };
    let code_ok = code.is_empty() || code == "*" || error.code == code;
    if class_ok && phase_ok && code_ok {
        Ok(())
    } else {
        Err(format!(
            "expected {class} at {phase}: {code}, got {error} ({:?})",
            error.phase
        ))
    }
}
