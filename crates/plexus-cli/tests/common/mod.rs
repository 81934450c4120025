//! What the CLI tests share: scratch directories, the SNB mini data set's Cypher directory,
//! query results as text, and comparisons of two SNB graphs.

#![allow(dead_code)] // each test file uses its own part

use std::path::{Path, PathBuf};

use plexus::{Connection, Params};
use plexus_tck::ldbc_queries::{parameter_candidates, queries};

/// Runs the `plexus` binary the tests were built with.
pub fn plexus<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(args)
        .output()
        .expect("run plexus")
}

/// Process output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A scratch directory under the system temp dir (`plexus-<tag>-<pid>-<name>`, emptied
/// first), removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str, name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("plexus-{tag}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        Scratch(dir)
    }

    /// Writes `files` (name, text) into the directory.
    pub fn with(self, files: &[(&str, &str)]) -> Scratch {
        for (name, text) in files {
            std::fs::write(self.0.join(name), text).expect("write a test file");
        }
        self
    }

    /// `name` in the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The SNB mini data set's Cypher directory (CSV files, `headers.txt`, the queries), beside
/// the repository.
pub fn cypher_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ldbc-snb-mini/cypher")
}

/// The rows of `query`, each rendered as its values joined by ` | `.
pub fn rows(conn: &mut Connection, query: &str, params: &Params) -> Result<Vec<String>, String> {
    let result = conn.execute(query, params).map_err(|e| e.to_string())?;
    Ok(result
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| result.render(v))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect())
}

/// Asserts that two graphs hold the same nodes (labels and properties) and relationships;
/// `names` names `ours` and `theirs` in the message of a difference.
pub fn assert_same_graph(ours: &mut Connection, theirs: &mut Connection, names: [&str; 2]) {
    let none = Params::new();
    let width = names.iter().map(|n| n.len() + 1).max().unwrap_or(0);
    let [our_name, their_name] = names.map(|n| format!("{:width$}", format!("{n}:")));
    for whole in [
        "MATCH (n) RETURN labels(n) AS l, properties(n) AS p ORDER BY l, n.id",
        "MATCH (a)-[r]->(b) RETURN labels(a)[0] AS la, a.id AS a, type(r) AS t, \
         properties(r) AS p, labels(b)[0] AS lb, b.id AS b ORDER BY la, a, t, lb, b, p",
    ] {
        let mine = rows(ours, whole, &none).expect(whole);
        let reference = rows(theirs, whole, &none).expect(whole);
        assert_eq!(mine.len(), reference.len(), "{whole}");
        if let Some(at) = mine.iter().zip(&reference).position(|(a, b)| a != b) {
            panic!(
                "{whole}: row {at} differs:\n  {our_name} {}\n  {their_name} {}",
                mine[at], reference[at]
            );
        }
    }
}

/// Runs every SNB query in `cypher` (file order: the updates change both graphs alike) on
/// both graphs, with the parameters the LDBC test tries until one gives rows, and asserts the
/// same results; returns how many runs were compared.
pub fn compare_snb_queries(ours: &mut Connection, theirs: &mut Connection, cypher: &Path) -> usize {
    let mut compared = 0;
    for query in queries(cypher).expect("queries") {
        let candidates = parameter_candidates(theirs, cypher, &query);
        for params in &candidates {
            let reference = rows(theirs, &query.text, params);
            let mine = rows(ours, &query.text, params);
            assert_eq!(mine, reference, "{} with {params:?}", query.name);
            compared += 1;
            if reference.is_ok_and(|r| !r.is_empty()) {
                break;
            }
        }
    }
    compared
}
