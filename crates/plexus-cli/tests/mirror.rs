//! `plexus mirror` as a process: start, stream, SIGKILL mid-stream while a writer runs,
//! restart, and compare the graph with PostgreSQL row by row; `--drop`; mapping errors; the
//! password never printed.

mod common;

use common::{Scratch, assert_same_graph, compare_snb_queries, cypher_dir};

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plexus::{Config, Database, Value};
use plexus_mirror::change::Lsn;
use plexus_mirror::cluster::{ClusterOptions, ThrowawayCluster};

const FRAUD_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../plexus-mirror/tests/fixtures"
);
const WAIT: Duration = Duration::from_secs(30);

/// A running `plexus mirror` with its output collected line by line.
struct Running {
    child: Child,
    lines: Receiver<String>,
    seen: Arc<Mutex<Vec<String>>>,
}

fn plexus(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_plexus"));
    command.args(args).env_remove("PGPASSWORD");
    command
}

fn spawn(args: &[&str], seen: &Arc<Mutex<Vec<String>>>) -> Running {
    let mut child = plexus(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn plexus mirror");
    let (sender, lines) = channel();
    for stream in [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let (sender, seen) = (sender.clone(), seen.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                seen.lock().expect("lines").push(line.clone());
                let _ = sender.send(line);
            }
        });
    }
    Running {
        child,
        lines,
        seen: seen.clone(),
    }
}

impl Running {
    /// Waits for a line satisfying `accept`.
    fn wait_for(&self, what: &str, accept: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(100))
                && accept(&line)
            {
                return line;
            }
        }
        panic!(
            "no line {what} within {WAIT:?}; output: {:?}",
            self.seen.lock().expect("lines")
        );
    }

    fn terminate(mut self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
        let exit = self.child.wait().expect("wait");
        assert!(exit.success(), "exit after SIGTERM: {exit:?}");
    }
}

/// The applied position of a status line (`... applied 0/16B3A8C8, ...`).
fn applied(line: &str) -> Option<Lsn> {
    let rest = line.split("applied ").nth(1)?;
    rest.split(',').next()?.parse().ok()
}

fn sync_point(cluster: &ThrowawayCluster) -> Lsn {
    let out = cluster
        .psql(
            "BEGIN; INSERT INTO person (id, name) VALUES (-1, 'sync'); \
             DELETE FROM person WHERE id = -1; SELECT pg_current_wal_insert_lsn(); COMMIT;",
        )
        .expect("sync point");
    out.lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no LSN in {out:?}"))
}

fn pg_set(cluster: &ThrowawayCluster, sql: &str) -> BTreeSet<String> {
    cluster
        .psql(sql)
        .expect(sql)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn text(value: Option<Value>) -> String {
    match value {
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::String(s)) => s.to_string(),
        other => format!("{other:?}"),
    }
}

/// Persons, OWNS and TRANSFER edges of the graph in `dir` and of PostgreSQL: equal sets,
/// and no more graph elements than rows (no duplicates).
fn assert_graph_matches(dir: &Path, cluster: &ThrowawayCluster) {
    let db = Database::open(dir, Config::default()).expect("open graph");
    let mut tx = db.begin();
    let mut persons = Vec::new();
    for v in tx.scan_label("Person").expect("persons") {
        let id = text(tx.vertex_property(v, "id").expect("id"));
        let name = text(tx.vertex_property(v, "name").expect("name"));
        persons.push(format!("{id}|{name}"));
    }
    let mut edges = |label: &str, key: Option<&str>| {
        let mut found = Vec::new();
        for e in tx.scan_edges(label).expect("edges") {
            let (s, d) = tx.edge_endpoints(e).expect("endpoints");
            let mut row = match key {
                Some(key) => format!("{}|", text(tx.edge_property(e, key).expect("key"))),
                None => String::new(),
            };
            row.push_str(&format!(
                "{}|{}",
                text(tx.vertex_property(s, "id").expect("src")),
                text(tx.vertex_property(d, "id").expect("dst"))
            ));
            found.push(row);
        }
        found
    };
    let owns = edges("OWNS", None);
    let transfers = edges("TRANSFER", Some("id"));
    tx.rollback();
    for (name, found, sql) in [
        ("persons", persons, "SELECT id || '|' || name FROM person"),
        (
            "OWNS",
            owns,
            "SELECT owner_id || '|' || id FROM account WHERE owner_id IS NOT NULL",
        ),
        (
            "TRANSFER",
            transfers,
            "SELECT id || '|' || src_account || '|' || dst_account FROM transfer",
        ),
    ] {
        let expected = pg_set(cluster, sql);
        let found_set: BTreeSet<String> = found.iter().cloned().collect();
        assert_eq!(
            found.len(),
            found_set.len(),
            "{name}: duplicates in the graph"
        );
        assert_eq!(found_set, expected, "{name}");
    }
}

#[test]
fn mirror_process_survives_sigkill_mid_stream_exactly_once() {
    let cluster = ThrowawayCluster::start(ClusterOptions::default()).expect("PostgreSQL");
    cluster
        .psql(&std::fs::read_to_string(format!("{FRAUD_DIR}/fraud-schema.sql")).expect("schema"))
        .expect("schema");
    let dir = Scratch::new("cli-mirror", "kill");
    let db_dir = dir.0.join("graph");
    let mapping = format!("{FRAUD_DIR}/fraud-graph.sql");
    let url = cluster.url();
    let args = [
        "mirror",
        "--source",
        &url,
        "--mapping",
        &mapping,
        db_dir.to_str().expect("utf-8 path"),
    ];
    let seen = Arc::new(Mutex::new(Vec::new()));
    let first = spawn(&args, &seen);
    first.wait_for("streaming", |l| l.contains("streaming"));

    // a writer of 150 transactions while the mirror is killed
    let mut script = String::new();
    for i in 0..150 {
        let id = 10_000 + i;
        script.push_str(&format!(
            "BEGIN; INSERT INTO person (id, name) VALUES ({id}, 'w{id}'); \
             INSERT INTO account VALUES ({id}, {id}, now(), 'savings', NULL, NULL); \
             INSERT INTO transfer VALUES ({id}, {id}, 10, 1, now(), NULL); COMMIT; \
             SELECT pg_sleep(0.004);"
        ));
    }
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| cluster.psql(&script).expect("writer"));
        let written = || {
            cluster
                .psql("SELECT count(*) FROM person WHERE id >= 10000")
                .expect("count")
                .trim()
                .parse::<u64>()
                .expect("number")
        };
        let deadline = Instant::now() + WAIT;
        while written() < 20 {
            assert!(Instant::now() < deadline, "the writer does not write");
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut first = first;
        first.child.kill().expect("SIGKILL");
        first.child.wait().expect("reap");
        // killed mid-stream: the writer was not done
        assert!(written() < 150);
        writer.join().expect("writer thread");
    });
    let target = sync_point(&cluster);
    let second = spawn(&args, &seen);
    second.wait_for(&format!("applied ≥ {target}"), |l| {
        applied(l).is_some_and(|a| a >= target)
    });
    second.terminate();
    assert_graph_matches(&db_dir, &cluster);

    // --drop removes the slot
    let dropped = plexus(&["mirror", "--drop", "--source", &url])
        .output()
        .expect("--drop");
    assert!(dropped.status.success(), "{dropped:?}");
    assert_eq!(
        cluster
            .psql("SELECT count(*) FROM pg_replication_slots")
            .expect("slots")
            .trim(),
        "0"
    );
    let mut all = seen.lock().expect("lines").clone();
    all.push(String::from_utf8_lossy(&dropped.stdout).into_owned());
    all.push(String::from_utf8_lossy(&dropped.stderr).into_owned());
    let password = cluster.password();
    assert!(!password.is_empty());
    for line in &all {
        assert!(!line.contains(password), "the password was printed: {line}");
    }
}

#[test]
fn the_password_may_come_from_pgpassword_and_mapping_errors_have_positions() {
    let cluster = ThrowawayCluster::start(ClusterOptions::default()).expect("PostgreSQL");
    cluster
        .psql(&std::fs::read_to_string(format!("{FRAUD_DIR}/fraud-schema.sql")).expect("schema"))
        .expect("schema");
    let dir = Scratch::new("cli-mirror", "errors");
    let bad = dir.0.join("bad.sql");
    std::fs::write(
        &bad,
        "CREATE PROPERTY GRAPH g\n  VERTEX TABLES (\n    person KEY (nosuch) LABEL Person\n  )",
    )
    .expect("bad mapping");
    let url = format!(
        "postgres://{}@127.0.0.1:{}/{}",
        cluster.user(),
        cluster.port(),
        cluster.database()
    );
    let output = plexus(&[
        "mirror",
        "--source",
        &url,
        "--mapping",
        bad.to_str().expect("utf-8"),
        dir.0.join("g").to_str().expect("utf-8"),
    ])
    .env("PGPASSWORD", cluster.password())
    .output()
    .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("bad.sql:3:"), "{stderr}");
    assert!(!stderr.contains(cluster.password()), "{stderr}");
}

/// The SNB mini data set twice: loaded into PostgreSQL and mirrored with snb-graph.sql, and
/// imported from its CSV files with `plexus import ldbc-snb`. Both graphs must hold the same
/// nodes, labels, properties and relationships, and answer every SNB query alike.
#[test]
fn the_mirrored_snb_graph_equals_the_csv_import() {
    // canonical: the PostgreSQL server (another user) reads the files by this path
    let snb_pg = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/ldbc-snb-mini/postgres/test-data")
        .canonicalize()
        .expect("the SNB mini data beside the repository");
    let snb_pg = snb_pg.to_str().expect("a UTF-8 path");
    let cypher = cypher_dir();
    let cluster = ThrowawayCluster::start(ClusterOptions::default()).expect("PostgreSQL");
    let schema = std::fs::read_to_string(format!("{FRAUD_DIR}/snb-schema.sql")).expect("schema");
    let load = std::fs::read_to_string(format!("{FRAUD_DIR}/snb-load.sql"))
        .expect("load")
        .replace("@DATA@", snb_pg);
    cluster
        .psql(&format!("{schema}\n{load}"))
        .expect("load SNB");
    let dir = Scratch::new("cli-mirror", "snb");
    let (mirrored, imported) = (dir.0.join("mirrored"), dir.0.join("imported"));

    let import = plexus(&[
        "import",
        "ldbc-snb",
        cypher.join("test-data/vanilla").to_str().expect("utf-8"),
        imported.to_str().expect("utf-8"),
    ])
    .output()
    .expect("plexus import");
    assert!(import.status.success(), "{import:?}");
    let url = cluster.url();
    let mapping = format!("{FRAUD_DIR}/snb-graph.sql");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mirror = spawn(
        &[
            "mirror",
            "--source",
            &url,
            "--mapping",
            &mapping,
            mirrored.to_str().expect("utf-8"),
        ],
        &seen,
    );
    mirror.wait_for("streaming", |l| l.contains("streaming"));
    mirror.terminate();

    let ours = Database::open(&mirrored, Config::default()).expect("mirrored graph");
    let reference = Database::open(&imported, Config::default()).expect("imported graph");
    let (mut ours, mut theirs) = (ours.connect(), reference.connect());
    assert_same_graph(&mut ours, &mut theirs, ["mirror", "import"]);
    let compared = compare_snb_queries(&mut ours, &mut theirs, &cypher);
    assert!(compared >= 29, "{compared}");
}
