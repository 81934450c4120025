//! `ingest`: bulk-load throughput and memory, Plexus against Kùzu's and LadybugDB's `COPY`, on
//! the same files, in the same run.
//!
//! FILES
//! =====
//! The seeded RMAT graph of `--scale` (the generator of `rmat.rs`, seed 42, as `storage` and
//! `algo` use: `2^scale` vertices with ids `0 .. 2^scale`, `16 · 2^scale` directed edges,
//! duplicates and self-loops kept) is written to `--data` as
//!
//!   v.csv       header `id`, one vertex id per line, in id order
//!   e.csv       header `src,dst`, one edge per line, in generation order
//!   v-admin.csv, e-admin.csv   the same rows with neo4j-admin headers (`id:ID(V)`,
//!               `:START_ID(V),:END_ID(V)`), what `plexus import` reads
//!   v.parquet   one non-null int64 column `id`        (Snappy, row groups of 1 Mi rows)
//!   e.parquet   int64 columns `src`, `dst`
//!
//! (about 250 MB of CSV at scale 20). They are deleted at the end unless `--keep-data`.
//!
//! FIGURES
//! =======
//! Every figure is the load of both files into an empty database, from the files to a
//! committed load, in its own process: `value` is edges per second (e.csv rows over the
//! seconds of the whole load, vertices included), `peak_rss_bytes` that process's peak resident
//! memory (VmHWM for Plexus, `ru_maxrss` for the Python peers, interpreter included) and
//! `db_bytes` the database's size on disk once closed; the issue's target is
//! `rss_over_db` = peak RSS / size on disk ≤ 2.
//!
//!   kuzu, ladybug   (bench/peers/ingest_peers.py in the peers' virtual environment) declare
//!                   `V(id INT64, PRIMARY KEY(id))` and `E(FROM V TO V)`, then time
//!                   `COPY V FROM '…/v.csv' (HEADER=true)` and `COPY E …` (Parquet: the
//!                   `.parquet` files). These are the baselines: `baseline` and `ratio` against
//!                   Kùzu of the same format, `ladybug_baseline` / `ladybug_ratio` against
//!                   LadybugDB (the maintained fork of Kùzu).
//!   bulk_api        Rust API: the CSV parsed here, `Database::bulk_load`, `add_nodes` of the
//!                   ids and `add_relationships` in batches of BULK_BATCH_ROWS rows, `commit`.
//!   import_csv      `plexus import DB --id-type=integer --nodes=V=…/v-admin.csv
//!                   --relationships=E=…/e-admin.csv` (the CLI binary next to this one;
//!                   integer ids, as the peers' INT64 keys); peak RSS is the CLI's
//!                   (RUSAGE_CHILDREN).
//!   copy_csv        Cypher `CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))`, `CREATE REL
//!   copy_parquet    TABLE E(FROM V TO V)`, then `COPY V FROM 'v.csv' (HEADER true)` and
//!                   `COPY E FROM 'e.csv' (HEADER true)` (or `'v.parquet'` / `'e.parquet'`),
//!                   through `Connection::execute`.
//!   load_csv        `LOAD CSV` of v.csv creating `:V {id}` nodes, `CREATE INDEX FOR (n:V)
//!                   ON (n.id)`, then the edges with `CALL { … } IN TRANSACTIONS OF 100000
//!                   ROWS` (the text is in `load_csv`); `value` is e.csv rows per second of that
//!                   last statement alone (rows/s), `vertex_seconds` the statements before it.
//!   load_arrow      Python `load_arrow` (`bench/peers/ingest_peers.py --system plexus`, run
//!                   with `--plexus-python`, an interpreter with `plexusdb` and pyarrow: the
//!                   test venv that `scripts/test-py.sh` builds by default) of v.parquet and
//!                   e.parquet, each streamed batch by batch; peak RSS is that process's.
//!
//! A figure whose front end fails (today: `import`, `COPY`, `CALL … IN TRANSACTIONS` are being
//! built on other branches) prints `"value": null, "error": "<message>"` and the run goes on.
//! Nothing is retried or estimated. A load that commits fewer nodes or edges than the files
//! hold is an error too.
//!
//! The Cypher figures run with the data directory as the process's working directory and as
//! the database's `import_directory` (where `LOAD CSV` reads `file:///e.csv`), so the
//! statements name the files as the issue writes them.
//!
//! LIMITS
//! ======
//! Kùzu and LadybugDB run COPY with one thread per core; Plexus's bulk path is what it is (see
//! `plexus::bulk`). On a shared machine the figures move with the load of the other users.

use crate::report::Figure;
use crate::rmat;
use arrow::array::{ArrayRef, Int64Array};
use arrow::datatypes::{DataType as ArrowType, Field, Schema};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use plexus::{Config, Database, Params, SettingSource, Settings, Value, VertexId};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

const EDGE_SEED: u64 = 42;
/// Rows per Parquet row group (and per Arrow batch written).
const PARQUET_ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows parsed (and, for edges, mapped to vertex ids) and handed to `add_nodes` or
/// `add_relationships` at a time.
const BULK_BATCH_ROWS: usize = 1 << 20;
/// Read buffer of the CSV parser.
const CSV_BUFFER_BYTES: usize = 1 << 20;
/// The peers' Python, relative to the workspace root (bench/peers/run.sh creates it).
const DEFAULT_PYTHON: &str = "target/peers-venv/bin/python";
/// Python with `plexusdb` (scripts/python-env.sh's venv, where scripts/test-py.sh builds it).
const DEFAULT_PLEXUS_PYTHON: &str = "target/py-venv/bin/python";

#[derive(clap::Args)]
pub struct Options {
    /// RMAT scale: 2^scale vertices, 16 edges per vertex.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=26))]
    pub scale: u32,
    /// Directory for the generated files (default: <temp dir>/plexus-ingest-<scale>).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Directory for the benchmark databases (default: the data directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Plexus figures (comma-separated; default all): bulk_api, import_csv, copy_csv,
    /// copy_parquet, load_csv, load_arrow.
    #[arg(long, value_delimiter = ',', value_parser = Front::parse)]
    pub figures: Vec<Front>,
    /// Baseline systems (comma-separated; `none` for none): kuzu, ladybug.
    #[arg(long, value_delimiter = ',', default_value = "kuzu,ladybug")]
    pub peers: Vec<String>,
    /// Python of the peers' virtual environment (with kuzu and ladybug installed).
    #[arg(long, default_value = DEFAULT_PYTHON)]
    pub python: PathBuf,
    /// Python with `plexusdb` and pyarrow installed, for `load_arrow` (scripts/test-py.sh
    /// builds plexusdb into this venv; a release build: `maturin develop --release`).
    #[arg(long, default_value = DEFAULT_PLEXUS_PYTHON)]
    pub plexus_python: PathBuf,
    /// Keep the generated files (and reuse them if present with the same scale).
    #[arg(long)]
    pub keep_data: bool,
}

/// One way of loading the files into Plexus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    BulkApi,
    ImportCsv,
    CopyCsv,
    CopyParquet,
    LoadCsv,
    LoadArrow,
}

impl Front {
    const ALL: [Front; 6] = [
        Front::BulkApi,
        Front::ImportCsv,
        Front::CopyCsv,
        Front::CopyParquet,
        Front::LoadCsv,
        Front::LoadArrow,
    ];

    pub fn parse(name: &str) -> Result<Front, String> {
        Front::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| format!("unknown figure '{name}'"))
    }

    pub fn name(self) -> &'static str {
        match self {
            Front::BulkApi => "bulk_api",
            Front::ImportCsv => "import_csv",
            Front::CopyCsv => "copy_csv",
            Front::CopyParquet => "copy_parquet",
            Front::LoadCsv => "load_csv",
            Front::LoadArrow => "load_arrow",
        }
    }

    fn format(self) -> &'static str {
        match self {
            Front::CopyParquet => "parquet",
            Front::LoadArrow => "arrow",
            _ => "csv",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Front::LoadCsv => "rows/s",
            _ => "edges/s",
        }
    }
}

/// What one load measured (a child's line, or a peer's).
#[derive(Debug, Default)]
struct Measured {
    seconds: f64,
    nodes: u64,
    edges: u64,
    peak_rss_bytes: f64,
    db_bytes: f64,
    /// Plexus: `Database::close` after the load; `load_csv`: the vertex statements.
    other_seconds: f64,
}

pub fn run(options: &Options) -> Result<(), String> {
    let scale = options.scale;
    let s = f64::from(scale);
    let data = match &options.data {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("plexus-ingest-{scale}")),
    };
    let dbs = options.dir.clone().unwrap_or_else(|| data.clone());
    let n = 1u64 << scale;
    let m = (rmat::EDGE_FACTOR as u64) << scale;
    write_files(&data, scale, options.keep_data)?;
    let fronts: Vec<Front> = if options.figures.is_empty() {
        Front::ALL.to_vec()
    } else {
        options.figures.clone()
    };
    let formats: Vec<&str> = ["csv", "parquet"]
        .into_iter()
        .filter(|f| fronts.iter().any(|front| front.format() == *f))
        .collect();

    // Baselines first: each Plexus figure is printed with them.
    let mut baselines: Vec<(String, &str, f64)> = Vec::new();
    for peer in options.peers.iter().filter(|p| p.as_str() != "none") {
        for &format in &formats {
            let db = dbs.join(format!("{peer}-{format}.db"));
            eprintln!("ingest: {peer} COPY from {format}");
            let name = format!("copy_{format}");
            match run_python(&options.python, peer, format, &data, &db) {
                Ok((measured, version)) if measured.edges == m && measured.nodes == n => {
                    let value = m as f64 / measured.seconds;
                    baselines.push((peer.clone(), format, value));
                    with_memory(Figure::new(&name, value, "edges/s"), &measured)
                        .with_label("system", peer)
                        .with_label("version", &version)
                        .with("scale", s)
                        .print();
                }
                Ok((measured, _)) => Figure::failed(
                    &name,
                    "edges/s",
                    &format!(
                        "loaded {} nodes and {} edges of {n} and {m}",
                        measured.nodes, measured.edges
                    ),
                )
                .with_label("system", peer)
                .with("scale", s)
                .print(),
                Err(error) => Figure::failed(&name, "edges/s", &error)
                    .with_label("system", peer)
                    .with("scale", s)
                    .print(),
            }
        }
    }
    let baseline = |peer: &str, format: &str| {
        baselines
            .iter()
            .find(|(p, f, _)| p == peer && *f == format)
            .map(|b| b.2)
    };

    for front in fronts {
        eprintln!("ingest: plexus {}", front.name());
        let db = dbs.join(format!("plexus-{}.db", front.name()));
        let result = if front == Front::LoadArrow {
            run_python(&options.plexus_python, "plexus", "arrow", &data, &db).map(|(m, _)| m)
        } else {
            run_child(front, &data, &db)
        };
        let _ = std::fs::remove_dir_all(&db);
        let figure = match result {
            Ok(measured) if measured.edges == m && measured.nodes == n => {
                let value = m as f64 / measured.seconds;
                let other = match front {
                    Front::LoadCsv => "vertex_seconds",
                    _ => "close_seconds",
                };
                let mut figure =
                    with_memory(Figure::new(front.name(), value, front.unit()), &measured)
                        .with(other, measured.other_seconds);
                if let Some(b) = baseline("kuzu", front.format()) {
                    figure = figure.baseline(b);
                }
                if let Some(b) = baseline("ladybug", front.format()) {
                    figure = figure
                        .with("ladybug_baseline", b)
                        .with("ladybug_ratio", value / b);
                }
                figure
            }
            Ok(measured) => Figure::failed(
                front.name(),
                front.unit(),
                &format!(
                    "loaded {} nodes and {} edges of {n} and {m}",
                    measured.nodes, measured.edges
                ),
            ),
            Err(error) => Figure::failed(front.name(), front.unit(), &error),
        };
        figure
            .with_label("system", "plexus")
            .with_label("format", front.format())
            .with("scale", s)
            .print();
    }
    if !options.keep_data {
        for file in DATA_FILES {
            let _ = std::fs::remove_file(data.join(file));
        }
        let _ = std::fs::remove_dir(&data);
    }
    Ok(())
}

fn with_memory<'a>(figure: Figure<'a>, measured: &Measured) -> Figure<'a> {
    figure
        .with("seconds", measured.seconds)
        .with("peak_rss_bytes", measured.peak_rss_bytes)
        .with("db_bytes", measured.db_bytes)
        .with("rss_over_db", measured.peak_rss_bytes / measured.db_bytes)
}

// ---------------------------------------------------------------------------------------
// The files.

/// Every file `write_files` writes (the CSVs first: see there).
const DATA_FILES: [&str; 7] = [
    "scale",
    "v.csv",
    "e.csv",
    "v-admin.csv",
    "e-admin.csv",
    "v.parquet",
    "e.parquet",
];

fn write_files(data: &Path, scale: u32, reuse: bool) -> Result<(), String> {
    let marker = data.join("scale");
    let files = &DATA_FILES[1..5];
    let present = files
        .iter()
        .chain(&["v.parquet", "e.parquet"])
        .all(|file| data.join(file).exists());
    if reuse
        && present
        && std::fs::read_to_string(&marker).ok().as_deref() == Some(&scale.to_string())
    {
        eprintln!("ingest: reusing the files in {}", data.display());
        return Ok(());
    }
    std::fs::create_dir_all(data).map_err(|e| format!("{}: {e}", data.display()))?;
    let started = Instant::now();
    let n = 1i64 << scale;
    let edges = rmat::edges(scale, EDGE_SEED);
    eprintln!(
        "ingest: writing {n} vertices and {} edges to {}",
        edges.len(),
        data.display()
    );
    for (file, header) in files
        .iter()
        .zip(["id", "src,dst", "id:ID(V)", ":START_ID(V),:END_ID(V)"])
    {
        match file.starts_with('v') {
            true => write_csv(&data.join(file), header, (0..n).map(|id| [id, 0]), 1)?,
            false => write_csv(
                &data.join(file),
                header,
                edges.iter().map(|&(s, d)| [i64::from(s), i64::from(d)]),
                2,
            )?,
        }
    }
    let ids: Vec<i64> = (0..n).collect();
    write_parquet(&data.join("v.parquet"), &[("id", &ids)])?;
    drop(ids);
    let src: Vec<i64> = edges.iter().map(|e| i64::from(e.0)).collect();
    let dst: Vec<i64> = edges.iter().map(|e| i64::from(e.1)).collect();
    drop(edges);
    write_parquet(&data.join("e.parquet"), &[("src", &src), ("dst", &dst)])?;
    std::fs::write(&marker, scale.to_string()).map_err(|e| format!("{}: {e}", marker.display()))?;
    eprintln!(
        "ingest: files written in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn write_csv(
    path: &Path,
    header: &str,
    rows: impl Iterator<Item = [i64; 2]>,
    columns: usize,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    writeln!(out, "{header}").map_err(io)?;
    for row in rows {
        if columns == 1 {
            writeln!(out, "{}", row[0]).map_err(io)?;
        } else {
            writeln!(out, "{},{}", row[0], row[1]).map_err(io)?;
        }
    }
    out.flush().map_err(io)
}

fn write_parquet(path: &Path, columns: &[(&str, &Vec<i64>)]) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, _)| Field::new(*name, ArrowType::Int64, false))
            .collect::<Vec<_>>(),
    ));
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(PARQUET_ROW_GROUP_ROWS))
        .build();
    let mut writer =
        ArrowWriter::try_new(file, schema.clone(), Some(properties)).map_err(|e| fail(&e))?;
    let rows = columns[0].1.len();
    for start in (0..rows).step_by(PARQUET_ROW_GROUP_ROWS) {
        let end = (start + PARQUET_ROW_GROUP_ROWS).min(rows);
        let arrays: Vec<ArrayRef> = columns
            .iter()
            .map(|(_, values)| Arc::new(Int64Array::from(values[start..end].to_vec())) as ArrayRef)
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| fail(&e))?;
        writer.write(&batch).map_err(|e| fail(&e))?;
    }
    writer.close().map_err(|e| fail(&e))?;
    Ok(())
}

/// Calls `f` with every batch of up to `batch` rows of the integer CSV at `path` (header
/// skipped), as one `Vec` per column.
fn read_int_csv(
    path: &Path,
    columns: usize,
    batch: usize,
    mut f: impl FnMut(&[Vec<i64>]) -> Result<(), String>,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut reader =
        BufReader::with_capacity(CSV_BUFFER_BYTES, std::fs::File::open(path).map_err(io)?);
    let mut line = Vec::new();
    let mut out: Vec<Vec<i64>> = vec![Vec::with_capacity(batch.min(BULK_BATCH_ROWS)); columns];
    let mut number = 0usize;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        number += 1;
        if number == 1 {
            continue; // the header
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.is_empty() {
            continue;
        }
        let mut fields = text.split(|&b| b == b',');
        for column in out.iter_mut() {
            let value = fields.next().and_then(parse_i64).ok_or_else(|| {
                format!("{}:{number}: expected {columns} integers", path.display())
            })?;
            column.push(value);
        }
        if out[0].len() == batch {
            f(&out)?;
            out.iter_mut().for_each(Vec::clear);
        }
    }
    if !out[0].is_empty() {
        f(&out)?;
    }
    Ok(())
}

fn parse_i64(field: &[u8]) -> Option<i64> {
    std::str::from_utf8(field).ok()?.trim().parse().ok()
}

// ---------------------------------------------------------------------------------------
// The peers (Python, one process per system and format).

/// Runs `bench/peers/ingest_peers.py` for `system` and `format` with `python`.
fn run_python(
    python: &Path,
    peer: &str,
    format: &str,
    data: &Path,
    db: &Path,
) -> Result<(Measured, String), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers/ingest_peers.py");
    if !python.exists() {
        return Err(format!(
            "no Python at {} (bench/peers/run.sh creates the peers' virtual environment; \
             scripts/python-env.sh the one with plexusdb)",
            python.display()
        ));
    }
    let output = Command::new(python)
        .arg(&script)
        .args(["--system", peer, "--format", format])
        .arg("--data")
        .arg(data)
        .arg("--db")
        .arg(db)
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or("");
    if let Some(error) = json_string(line, "error") {
        return Err(error);
    }
    let number = |key: &str| {
        json_number(line, key).ok_or_else(|| {
            format!(
                "{peer}: no '{key}' in its output: {line} {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
    };
    let measured = Measured {
        seconds: number("seconds")?,
        nodes: number("nodes")? as u64,
        edges: number("edges")? as u64,
        peak_rss_bytes: number("peak_rss_bytes")?,
        db_bytes: number("db_bytes")?,
        other_seconds: 0.0,
    };
    Ok((
        measured,
        json_string(line, "version").unwrap_or_else(|| "?".into()),
    ))
}

/// The number after `"key": ` in a flat JSON object (the peers' one-line output).
fn json_number(line: &str, key: &str) -> Option<f64> {
    let at = line.find(&format!("\"{key}\": "))? + key.len() + 4;
    let rest = &line[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

/// The string after `"key": ` in a flat JSON object (escapes other than `\"` kept as they are).
fn json_string(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("\"{key}\": \""))? + key.len() + 5;
    let mut out = String::new();
    let mut chars = line[at..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    None
}

// ---------------------------------------------------------------------------------------
// Plexus: the parent's side.

/// Runs `plexus-bench ingest-child` for `front` and parses its line.
fn run_child(front: Front, data: &Path, db: &Path) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
    let data = std::path::absolute(data).map_err(|e| format!("{}: {e}", data.display()))?;
    let db = std::path::absolute(db).map_err(|e| format!("{}: {e}", db.display()))?;
    let _ = std::fs::remove_dir_all(&db);
    let output = Command::new(&exe)
        .args(["ingest-child", "--figure", front.name()])
        .arg("--data")
        .arg(&data)
        .arg("--db")
        .arg(&db)
        .current_dir(&data)
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or("");
    if let Some(error) = line.strip_prefix("error ") {
        return Err(error.to_string());
    }
    let fields: Vec<f64> = line
        .strip_prefix("ok ")
        .map(|rest| rest.split(' ').filter_map(|f| f.parse().ok()).collect())
        .unwrap_or_default();
    if fields.len() != 6 {
        return Err(format!(
            "ingest-child ({}) exited with {}: {}",
            front.name(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .filter(|l| !l.starts_with("note:") && !l.trim().is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(Measured {
        seconds: fields[0],
        nodes: fields[1] as u64,
        edges: fields[2] as u64,
        peak_rss_bytes: fields[3],
        db_bytes: fields[4],
        other_seconds: fields[5],
    })
}

// ---------------------------------------------------------------------------------------
// Plexus: the child's side, one small function per front end.

/// The child: loads the files into a fresh database at `db` with `front` and prints
/// `ok <seconds> <nodes> <edges> <peak RSS bytes> <db bytes> <other seconds>`, or
/// `error <message>` (one line; the parent turns it into a figure).
pub fn child(front: &str, data: &Path, db_dir: &Path) -> Result<(), plexus::Error> {
    match child_measure(front, data, db_dir) {
        Ok(m) => println!(
            "ok {} {} {} {} {} {}",
            m.seconds, m.nodes, m.edges, m.peak_rss_bytes, m.db_bytes, m.other_seconds
        ),
        Err(error) => println!("error {}", error.replace('\n', " ")),
    }
    let _ = std::fs::remove_dir_all(db_dir);
    Ok(())
}

fn child_measure(front: &str, data: &Path, db_dir: &Path) -> Result<Measured, String> {
    let front = Front::parse(front)?;
    if front == Front::ImportCsv {
        let mut m = import_csv(data, db_dir)?;
        m.db_bytes = dir_bytes(db_dir) as f64;
        return Ok(m);
    }
    let mut settings = Settings::from_config(Config::default());
    let text = data.to_str().ok_or("data directory is not UTF-8")?;
    settings
        .set("import_directory", text, SettingSource::Argument)
        .map_err(|e| e.to_string())?;
    let db = Database::open_settings(db_dir, settings).map_err(|e| e.to_string())?;
    let mut m = match front {
        Front::BulkApi => bulk_api(&db, data)?,
        Front::CopyCsv => copy(&db, "v.csv", "e.csv", " (HEADER true)")?,
        Front::CopyParquet => copy(&db, "v.parquet", "e.parquet", "")?,
        Front::LoadCsv => load_csv(&db)?,
        Front::ImportCsv | Front::LoadArrow => unreachable!("not run in a child"),
    };
    (m.nodes, m.edges) = counts(&db)?;
    let started = Instant::now();
    db.close().map_err(|e| e.to_string())?;
    if front != Front::LoadCsv {
        m.other_seconds = started.elapsed().as_secs_f64();
    }
    m.peak_rss_bytes = peak_rss_bytes()?;
    m.db_bytes = dir_bytes(db_dir) as f64;
    Ok(m)
}

/// The Rust API: files parsed here, one bulk load, one commit.
fn bulk_api(db: &Database, data: &Path) -> Result<Measured, String> {
    let e = |e: plexus::Error| e.to_string();
    db.create_vertex_table(
        &plexus::VertexTableSpec::new("V")
            .property("id", plexus::DataType::Int64)
            .primary_key("id"),
    )
    .map_err(e)?;
    db.create_edge_table("V", "E", "V", &[]).map_err(e)?;
    let started = Instant::now();
    let mut load = db.bulk_load();
    // Vertex ids are dense (0 .. n), so the id → node map is a vector indexed by id.
    let mut nodes: Vec<Option<VertexId>> = Vec::new();
    read_int_csv(&data.join("v.csv"), 1, BULK_BATCH_ROWS, |columns| {
        let ids = &columns[0];
        let values: Vec<Value> = ids.iter().map(|&id| Value::Int(id)).collect();
        let added = load
            .add_nodes(&["V"], None, &[("id".to_string(), values)], ids.len())
            .map_err(e)?;
        if let Some((row, error)) = added.rejected.first() {
            return Err(format!("v.csv row {}: {error}", row + 1));
        }
        for (&id, node) in ids.iter().zip(added.ids) {
            let slot = usize::try_from(id).map_err(|_| format!("negative id {id}"))?;
            if slot >= nodes.len() {
                nodes.resize(slot + 1, None);
            }
            nodes[slot] = node;
        }
        Ok(())
    })?;
    let node = |id: i64| {
        usize::try_from(id)
            .ok()
            .and_then(|i| nodes.get(i).copied().flatten())
            .ok_or_else(|| format!("e.csv: no vertex {id}"))
    };
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    read_int_csv(&data.join("e.csv"), 2, BULK_BATCH_ROWS, |columns| {
        src.clear();
        dst.clear();
        for (&s, &d) in columns[0].iter().zip(&columns[1]) {
            src.push(node(s)?);
            dst.push(node(d)?);
        }
        let added = load.add_relationships("E", &src, &dst, &[]).map_err(e)?;
        match added.rejected.first() {
            Some((row, error)) => Err(format!("e.csv batch row {row}: {error}")),
            None => Ok(()),
        }
    })?;
    load.commit().map_err(e)?;
    Ok(Measured {
        seconds: started.elapsed().as_secs_f64(),
        ..Measured::default()
    })
}

/// `plexus import` (Neo4j-admin style) on the CSV files: the command line the CLI is
/// expected to take; adjust here when it lands.
fn import_csv(data: &Path, db_dir: &Path) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
    let plexus = exe.with_file_name("plexus");
    if !plexus.exists() {
        return Err(format!(
            "no plexus CLI at {} (cargo build --release -p plexus-cli)",
            plexus.display()
        ));
    }
    let started = Instant::now();
    let output = Command::new(&plexus)
        .arg("import")
        .arg(db_dir)
        // Integer ids, as the peers' `V(id INT64, PRIMARY KEY(id))` (neo4j-admin's default
        // would read them as strings).
        .arg("--id-type=integer")
        .arg(format!("--nodes=V={}", data.join("v-admin.csv").display()))
        .arg(format!(
            "--relationships=E={}",
            data.join("e-admin.csv").display()
        ))
        .output()
        .map_err(|e| format!("{}: {e}", plexus.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("plexus import: {}", stderr.trim()));
    }
    // The peak RSS that counts is the CLI's (the largest of this process's waited-for
    // children), taken before this process opens the database to count.
    let peak_rss_bytes = children_peak_rss_bytes();
    let db = Database::open(db_dir, Config::default()).map_err(|e| e.to_string())?;
    let (nodes, edges) = counts(&db)?;
    db.close().map_err(|e| e.to_string())?;
    Ok(Measured {
        seconds,
        nodes,
        edges,
        peak_rss_bytes,
        ..Measured::default()
    })
}

/// Cypher `COPY` into declared tables.
fn copy(db: &Database, vertices: &str, edges: &str, options: &str) -> Result<Measured, String> {
    let mut conn = db.connect();
    execute(&mut conn, "CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))")?;
    execute(&mut conn, "CREATE REL TABLE E(FROM V TO V)")?;
    let started = Instant::now();
    execute(&mut conn, &format!("COPY V FROM '{vertices}'{options}"))?;
    execute(&mut conn, &format!("COPY E FROM '{edges}'{options}"))?;
    Ok(Measured {
        seconds: started.elapsed().as_secs_f64(),
        ..Measured::default()
    })
}

/// `LOAD CSV` as a Neo4j user writes it: vertices, an index on the key, then the edges in
/// transactions of 100,000 rows; the last statement alone is the figure.
fn load_csv(db: &Database) -> Result<Measured, String> {
    let mut conn = db.connect();
    let started = Instant::now();
    execute(
        &mut conn,
        "LOAD CSV WITH HEADERS FROM 'file:///v.csv' AS r \
         CALL { WITH r CREATE (:V {id: toInteger(r.id)}) } IN TRANSACTIONS OF 100000 ROWS",
    )?;
    execute(&mut conn, "CREATE INDEX FOR (n:V) ON (n.id)")?;
    let vertex_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    execute(
        &mut conn,
        "LOAD CSV WITH HEADERS FROM 'file:///e.csv' AS r \
         CALL { WITH r MATCH (a:V {id: toInteger(r.src)}), (b:V {id: toInteger(r.dst)}) \
         CREATE (a)-[:E]->(b) } IN TRANSACTIONS OF 100000 ROWS",
    )?;
    Ok(Measured {
        seconds: started.elapsed().as_secs_f64(),
        other_seconds: vertex_seconds,
        ..Measured::default()
    })
}

fn execute(conn: &mut plexus::Connection, query: &str) -> Result<(), String> {
    conn.execute(query, &Params::new())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Nodes labelled V and relationships of type E, as loaded.
fn counts(db: &Database) -> Result<(u64, u64), String> {
    let mut conn = db.connect();
    let mut count = |query: &str| -> Result<u64, String> {
        let result = conn
            .execute(query, &Params::new())
            .map_err(|e| e.to_string())?;
        match result.rows.first().and_then(|row| row.first()) {
            Some(plexus::CypherValue::Int(n)) => Ok(*n as u64),
            other => Err(format!("{query}: returned {other:?}")),
        }
    };
    Ok((
        count("MATCH (v:V) RETURN count(*)")?,
        count("MATCH ()-[e:E]->() RETURN count(*)")?,
    ))
}

/// VmHWM of this process, in bytes.
fn peak_rss_bytes() -> Result<f64, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("/proc/self/status: {e}"))?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map(|kib| kib * 1024.0)
        .ok_or_else(|| "no VmHWM in /proc/self/status".into())
}

/// The largest peak resident memory of this process's waited-for children, in bytes.
fn children_peak_rss_bytes() -> f64 {
    crate::report::rusage(libc::RUSAGE_CHILDREN)
        .map_or(f64::NAN, |usage| usage.ru_maxrss as f64 * 1024.0) // KiB on Linux
}

/// Bytes of the files under `dir` (recursively).
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => dir_bytes(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}
