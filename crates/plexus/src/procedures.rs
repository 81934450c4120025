//! Analytics as Cypher procedures: `CALL algo.pagerank({...}) YIELD node, score`.
//!
//! Every procedure takes one map of options and runs its kernel (see `plexus_algo`) on a
//! snapshot at the calling transaction's start timestamp — the data the rest of the statement
//! reads (the transaction's own uncommitted writes are not included). The rows it yields
//! compose with the rest of the query (`ORDER BY`, `LIMIT`, `MATCH` on the yielded node).
//! With `writeProperty: 'name'` each vertex's result is also written as a property in the
//! calling transaction.
//!
//! Options: `vertexLabels` (list of labels; all when absent), `edgeTypes` (list; all),
//! `direction` (`'out'`, `'in'` or `'both'` = undirected; default `'out'`), `iterations`
//! (pagerank, cdlp), `damping` (pagerank, default 0.85), `source` (bfs, sssp: a node),
//! `weightProperty` (sssp), `k` (khop, default 2), `writeProperty`. An unknown option or a value
//! of the wrong type is an `ArgumentError`. `algo.triangles` yields one row, `count`.
//!
//! WEIGHTED SHORTEST PATHS
//! =======================
//! `CALL algo.shortestPath({source: a, target: b, weightProperty: 'w', edgeTypes: ['R'],
//! direction: 'out'}) YIELD path, cost` is Dijkstra's search from `source` over the calling
//! transaction's own view (its uncommitted writes included, unlike the kernels above, which
//! read a snapshot), stopping when `target` is settled: one row with a cheapest path and its
//! total weight, none when `target` cannot be reached. Without `weightProperty` every
//! relationship weighs 1. A weight must be a number, at least 0: a missing, non-numeric,
//! negative or NaN weight on a relationship the search reaches is an `ArgumentError` naming
//! it (Dijkstra is wrong with negative weights). Usable inside queries: `MATCH (a {id: 1}),
//! (b {id: 9}) CALL algo.shortestPath({source: a, target: b, weightProperty: 'w'}) YIELD
//! path, cost RETURN …`.

use plexus_algo::Direction;
use plexus_algo::{AnalyticsError, GraphInput, Projection};
use plexus_exec::{CypherValueMap, Procedure, ProcedureFn, QueryError, Value};
use plexus_txn::Transaction;
use plexus_types::VertexId;
use std::sync::Arc;

/// One computed result per vertex.
type PerVertex = Vec<(VertexId, Value)>;

/// Options shared by every procedure, parsed from the config map.
struct Options {
    projection: Projection,
    iterations: Option<usize>,
    damping: Option<f64>,
    source: Option<VertexId>,
    target: Option<VertexId>,
    k: Option<u32>,
    write_property: Option<String>,
}

fn strings(key: &str, value: &Value) -> Result<Vec<String>, QueryError> {
    let bad = || QueryError::argument(format!("algo option '{key}' must be a list of strings"));
    match value {
        Value::List(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.to_string()),
                _ => Err(bad()),
            })
            .collect(),
        _ => Err(bad()),
    }
}

fn parse(args: &[Value]) -> Result<Options, QueryError> {
    let mut options = Options {
        projection: Projection::new(),
        iterations: None,
        damping: None,
        source: None,
        target: None,
        k: None,
        write_property: None,
    };
    let config: &CypherValueMap = match args.first() {
        Some(Value::Map(map)) => map,
        Some(Value::Null) | None => return Ok(options),
        Some(other) => {
            return Err(QueryError::argument(format!(
                "algo procedures take a map of options, not {}",
                other.type_name()
            )));
        }
    };
    for (key, value) in config.iter() {
        let wrong =
            |what: &str| QueryError::argument(format!("algo option '{key}' must be {what}"));
        match &**key {
            "vertexLabels" => options.projection.vertex_labels = strings(key, value)?,
            "edgeTypes" => options.projection.edge_types = strings(key, value)?,
            "direction" => {
                options.projection.direction = match value {
                    Value::String(d) if &**d == "out" => Direction::Out,
                    Value::String(d) if &**d == "in" => Direction::In,
                    Value::String(d) if &**d == "both" => Direction::Both,
                    _ => return Err(wrong("'out', 'in' or 'both'")),
                }
            }
            "iterations" => match value {
                Value::Int(n) if *n >= 1 && *n <= 10_000 => options.iterations = Some(*n as usize),
                _ => return Err(wrong("an integer from 1 to 10000")),
            },
            "damping" => match value.as_f64() {
                Some(d) if (0.0..=1.0).contains(&d) => options.damping = Some(d),
                _ => return Err(wrong("a number from 0 to 1")),
            },
            "source" => match value {
                Value::Node(v) => options.source = Some(*v),
                _ => return Err(wrong("a node")),
            },
            "target" => match value {
                Value::Node(v) => options.target = Some(*v),
                _ => return Err(wrong("a node")),
            },
            "k" => match value {
                Value::Int(k) if (1..=64).contains(k) => options.k = Some(*k as u32),
                _ => return Err(wrong("an integer from 1 to 64")),
            },
            "weightProperty" => match value {
                Value::String(name) => options.projection.weight = Some(name.to_string()),
                _ => return Err(wrong("a string")),
            },
            "writeProperty" => match value {
                Value::String(name) => options.write_property = Some(name.to_string()),
                _ => return Err(wrong("a string")),
            },
            _ => return Err(QueryError::argument(format!("unknown algo option '{key}'"))),
        }
    }
    Ok(options)
}

fn analytics_error(e: AnalyticsError) -> QueryError {
    match e {
        AnalyticsError::Storage(e) => e.into(),
        other => QueryError::argument(other.to_string()),
    }
}

/// Writes each vertex's result as a property, when asked.
fn write_back(
    tx: &mut Transaction,
    name: Option<&str>,
    results: &PerVertex,
) -> Result<(), QueryError> {
    let Some(name) = name else { return Ok(()) };
    for (v, value) in results {
        let stored = match value {
            Value::Node(c) => {
                plexus_types::Value::Int(i64::from(c.table) << 32 | i64::from(c.offset))
            }
            other => other.to_storage().unwrap_or(plexus_types::Value::Null),
        };
        tx.set_vertex_property(*v, name, stored)?;
    }
    Ok(())
}

/// A procedure named `algo.<name>` yielding `node` and `output`, computed by `kernel`.
fn procedure(
    name: &str,
    output: &str,
    kernel: impl Fn(GraphInput<'_>, &Options) -> Result<PerVertex, AnalyticsError>
    + Send
    + Sync
    + 'static,
) -> Procedure {
    let body = move |args: &[Value], tx: &mut Transaction| -> Result<Vec<Vec<Value>>, QueryError> {
        let options = parse(args)?;
        let results = with_input(tx, |input| kernel(input, &options)).map_err(analytics_error)?;
        write_back(tx, options.write_property.as_deref(), &results)?;
        Ok(results
            .into_iter()
            .map(|(v, value)| vec![Value::Node(v), value])
            .collect())
    };
    Procedure {
        name: format!("algo.{name}"),
        inputs: vec!["config".into()],
        input_types: vec!["MAP".into()],
        defaults: vec![Value::Map(Default::default())],
        outputs: vec!["node".into(), output.into()],
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    }
}

/// Runs `f` on what `tx` reads: its attached graph (`USE name`), else a snapshot at its start.
fn with_input<T>(tx: &Transaction, f: impl FnOnce(GraphInput<'_>) -> T) -> T {
    match tx.external() {
        Some(graph) => f(GraphInput::External(&**graph)),
        None => f(GraphInput::Snapshot(&tx.snapshot())),
    }
}

fn nodes(results: Vec<(VertexId, VertexId)>) -> PerVertex {
    results
        .into_iter()
        .map(|(v, c)| (v, Value::Node(c)))
        .collect()
}

/// The `algo.*` procedures every connection has. Bindings call them directly on a read-only
/// transaction (the Python `Snapshot` does), so options are parsed and checked in one place.
pub fn algo_procedures() -> Vec<Procedure> {
    vec![
        procedure("pagerank", "score", |snap, o| {
            let params = plexus_algo::PageRankParams {
                damping: o.damping.unwrap_or(0.85),
                iterations: o.iterations.unwrap_or(20),
                tolerance: None,
            };
            let ranks = plexus_algo::pagerank(snap, &o.projection, &params)?;
            Ok(ranks
                .into_iter()
                .map(|(v, r)| (v, Value::Float(r)))
                .collect())
        }),
        procedure("wcc", "component", |snap, o| {
            Ok(nodes(plexus_algo::wcc(
                snap,
                &o.projection,
                &plexus_algo::WccParams {},
            )?))
        }),
        procedure("cdlp", "community", |snap, o| {
            let params = plexus_algo::CdlpParams {
                iterations: o.iterations.unwrap_or(10),
            };
            Ok(nodes(plexus_algo::cdlp(snap, &o.projection, &params)?))
        }),
        procedure("lcc", "coefficient", |snap, o| {
            let lcc = plexus_algo::lcc(snap, &o.projection, &plexus_algo::LccParams {})?;
            Ok(lcc.into_iter().map(|(v, c)| (v, Value::Float(c))).collect())
        }),
        procedure("bfs", "depth", |snap, o| {
            let depths = plexus_algo::bfs(snap, &o.projection, source(o, "bfs")?)?;
            let reached = depths
                .into_iter()
                .filter(|(_, d)| *d != plexus_algo::BFS_UNREACHABLE);
            Ok(reached.map(|(v, d)| (v, Value::Int(d))).collect())
        }),
        procedure("sssp", "distance", |snap, o| {
            let distances = plexus_algo::sssp(snap, &o.projection, source(o, "sssp")?, None)?;
            let reached = distances.into_iter().filter(|(_, d)| d.is_finite());
            Ok(reached.map(|(v, d)| (v, Value::Float(d))).collect())
        }),
        procedure("khop", "reachable", |snap, o| {
            let params = plexus_algo::KHopParams {
                k: o.k.unwrap_or(2),
                direction: Direction::Out,
            };
            Ok(counts(plexus_algo::khop_count(
                snap,
                &o.projection,
                &params,
            )?))
        }),
        procedure("degree", "degree", |snap, o| {
            let params = plexus_algo::DegreeParams {
                direction: Direction::Out,
            };
            Ok(counts(plexus_algo::degree(snap, &o.projection, &params)?))
        }),
        triangles(),
        weighted_shortest_path(),
    ]
}

/// `algo.shortestPath` (see WEIGHTED SHORTEST PATHS).
fn weighted_shortest_path() -> Procedure {
    let body = |args: &[Value], tx: &mut Transaction| -> Result<Vec<Vec<Value>>, QueryError> {
        let options = parse(args)?;
        let (Some(source), Some(target)) = (options.source, options.target) else {
            return Err(QueryError::argument(
                "algo.shortestPath needs a 'source' and a 'target' node",
            ));
        };
        if options.write_property.is_some() || !options.projection.vertex_labels.is_empty() {
            return Err(QueryError::argument(
                "algo.shortestPath takes no 'writeProperty' or 'vertexLabels'",
            ));
        }
        Ok(dijkstra(tx, &options.projection, source, target)?
            .map(|(path, cost)| vec![Value::Path(Arc::new(path)), Value::Float(cost)])
            .into_iter()
            .collect())
    };
    Procedure {
        name: "algo.shortestPath".into(),
        inputs: vec!["config".into()],
        input_types: vec!["MAP".into()],
        defaults: vec![Value::Map(Default::default())],
        outputs: vec!["path".into(), "cost".into()],
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    }
}

/// A cheapest path from `source` to `target` and its cost, by Dijkstra's search.
fn dijkstra(
    tx: &mut Transaction,
    projection: &Projection,
    source: VertexId,
    target: VertexId,
) -> Result<Option<(plexus_value::value::PathValue, f64)>, QueryError> {
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, HashMap};
    let direction = match projection.direction {
        Direction::Out => plexus_types::Direction::Out,
        Direction::In => plexus_types::Direction::In,
        Direction::Both => plexus_types::Direction::Both,
    };
    let types: Vec<Option<&str>> = if projection.edge_types.is_empty() {
        vec![None]
    } else {
        projection
            .edge_types
            .iter()
            .map(|t| Some(t.as_str()))
            .collect()
    };
    // Costs are non-negative finite floats: their bit patterns order as the values do.
    let mut best: HashMap<VertexId, f64> = HashMap::from([(source, 0.0)]);
    let mut previous: HashMap<VertexId, (plexus_types::EdgeId, VertexId)> = HashMap::new();
    let mut heap = BinaryHeap::from([Reverse((0f64.to_bits(), source))]);
    let mut found = Vec::new();
    while let Some(Reverse((bits, v))) = heap.pop() {
        let cost = f64::from_bits(bits);
        if best.get(&v).is_some_and(|b| *b < cost) {
            continue;
        }
        if v == target {
            let mut path = plexus_value::value::PathValue {
                nodes: vec![target],
                rels: Vec::new(),
            };
            let mut at = target;
            while let Some(&(e, from)) = previous.get(&at) {
                path.rels.push(e);
                path.nodes.push(from);
                at = from;
            }
            path.nodes.reverse();
            path.rels.reverse();
            return Ok(Some((path, cost)));
        }
        for ty in &types {
            found.clear();
            tx.neighbors_into(v, *ty, direction, &mut found)?;
            for &(e, w) in &found {
                let weight = match &projection.weight {
                    None => 1.0,
                    Some(name) => edge_weight(tx, e, name)?,
                };
                let next = cost + weight;
                if best.get(&w).is_none_or(|b| next < *b) {
                    best.insert(w, next);
                    previous.insert(w, (e, v));
                    heap.push(Reverse((next.to_bits(), w)));
                }
            }
        }
    }
    Ok(None)
}

/// Relationship `e`'s weight `name`: a number, at least 0.
fn edge_weight(
    tx: &mut Transaction,
    e: plexus_types::EdgeId,
    name: &str,
) -> Result<f64, QueryError> {
    let weight = match tx.edge_property(e, name)? {
        Some(plexus_types::Value::Int(i)) => i as f64,
        Some(plexus_types::Value::Float(f)) => f,
        _ => f64::NAN,
    };
    if weight.is_nan() || weight < 0.0 {
        return Err(QueryError::argument(format!(
            "algo.shortestPath: relationship {e} has weight '{name}' that is not a number of at \
             least 0 (Dijkstra's search needs non-negative weights)"
        )));
    }
    Ok(weight)
}

/// The required `source` option of a traversal.
fn source(o: &Options, name: &str) -> Result<VertexId, AnalyticsError> {
    o.source.ok_or_else(|| {
        AnalyticsError::Storage(plexus_types::Error::InvalidArgument(format!(
            "algo.{name} needs a 'source' node"
        )))
    })
}

fn counts(results: Vec<(VertexId, u64)>) -> PerVertex {
    results
        .into_iter()
        .map(|(v, n)| (v, Value::Int(n as i64)))
        .collect()
}

/// `algo.triangles`: the number of triangles of the projection read as undirected, one row.
fn triangles() -> Procedure {
    let body = |args: &[Value], tx: &mut Transaction| -> Result<Vec<Vec<Value>>, QueryError> {
        let options = parse(args)?;
        if options.write_property.is_some() {
            return Err(QueryError::argument(
                "algo.triangles has no per-vertex result to write",
            ));
        }
        let params = plexus_algo::TriangleParams {};
        let count = with_input(tx, |input| {
            plexus_algo::triangle_count(input, &options.projection, &params)
        })
        .map_err(analytics_error)?;
        Ok(vec![vec![Value::Int(count as i64)]])
    };
    Procedure {
        name: "algo.triangles".into(),
        inputs: vec!["config".into()],
        input_types: vec!["MAP".into()],
        defaults: vec![Value::Map(Default::default())],
        outputs: vec!["count".into()],
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    }
}
