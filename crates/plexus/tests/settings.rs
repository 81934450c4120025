//! Settings and session isolation through the embedded API: `plexus.toml` read by
//! `Database::open_settings`, overrides and their sources in `SHOW SETTINGS`, the isolation
//! level per connection / transaction, and the write skew that SERIALIZABLE prevents when it
//! is chosen from Cypher.

use plexus::settings::{Settings, Source};
use plexus::{CypherValue, Database, DurabilityMode, IsolationLevel, Params};
use std::path::PathBuf;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("plexus-settings-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn int(value: &CypherValue) -> i64 {
    match value {
        CypherValue::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

fn text(value: &CypherValue) -> String {
    match value {
        CypherValue::String(s) => s.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

/// `SHOW SETTINGS` as (name, value, scope, source) rows.
fn show_settings(conn: &mut plexus::Connection) -> Vec<[String; 4]> {
    let result = conn.execute("SHOW SETTINGS", &Params::new()).unwrap();
    assert_eq!(
        result.columns,
        ["name", "value", "scope", "source", "description"]
    );
    result
        .rows
        .iter()
        .map(|row| [text(&row[0]), text(&row[1]), text(&row[2]), text(&row[3])])
        .collect()
}

fn row(rows: &[[String; 4]], name: &str) -> [String; 4] {
    rows.iter()
        .find(|r| r[0] == name)
        .unwrap_or_else(|| panic!("no setting {name}"))
        .clone()
}

#[test]
fn plexus_toml_and_overrides_reach_the_engine_and_show_settings() {
    let dir = TempDir::new("toml");
    std::fs::write(
        dir.0.join("plexus.toml"),
        "durability = \"periodic\"\nrow_cache_bytes = \"64MiB\"\ndefault_isolation = \"serializable\"\n",
    )
    .unwrap();
    let mut settings = Settings::load(&dir.0).unwrap();
    settings
        .set("row_cache_bytes", "32MiB", Source::CommandLine)
        .unwrap();
    let db = Database::open_settings(&dir.0, settings).unwrap();
    assert_eq!(db.config().durability, DurabilityMode::Periodic);
    assert_eq!(db.config().row_cache_bytes, 32 << 20);
    assert_eq!(db.begin().isolation(), IsolationLevel::Serializable);

    let mut conn = db.connect();
    assert_eq!(conn.isolation(), IsolationLevel::Serializable);
    let rows = show_settings(&mut conn);
    let file = dir.0.join("plexus.toml").display().to_string();
    assert_eq!(
        row(&rows, "durability"),
        ["durability", "periodic", "server", &file]
    );
    assert_eq!(
        row(&rows, "row_cache_bytes"),
        ["row_cache_bytes", "32MiB", "server", "command line"]
    );
    assert_eq!(row(&rows, "sync_interval_ms")[3], "default");
    assert_eq!(
        row(&rows, "transaction_isolation"),
        ["transaction_isolation", "serializable", "session", &file]
    );
    // CALL db.settings() lists the same rows.
    let called = conn
        .execute(
            "CALL db.settings() YIELD name RETURN count(*)",
            &Params::new(),
        )
        .unwrap();
    assert_eq!(int(&called.rows[0][0]), rows.len() as i64);
}

#[test]
fn a_bad_settings_file_is_refused_with_file_and_line() {
    let dir = TempDir::new("bad");
    std::fs::write(dir.0.join("plexus.toml"), "\ndurability = \"eventually\"\n").unwrap();
    let e = Settings::load(&dir.0).unwrap_err().to_string();
    assert!(e.contains("plexus.toml:2: setting 'durability'"), "{e}");
    assert!(e.contains("eventually"), "{e}");
}

/// Two doctors on call; each transaction reads both and takes one off call.
fn write_skew(db: &Database, set_level: &str) -> (bool, bool) {
    let mut setup = db.connect();
    let none = Params::new();
    setup
        .execute("MATCH (d:Doctor) DETACH DELETE d", &none)
        .unwrap();
    setup
        .execute(
            "CREATE (:Doctor {name: 'a', on: true}), (:Doctor {name: 'b', on: true})",
            &none,
        )
        .unwrap();
    let mut t1 = db.connect();
    let mut t2 = db.connect();
    for (conn, name) in [(&mut t1, "a"), (&mut t2, "b")] {
        conn.execute(set_level, &none).unwrap();
        conn.execute("BEGIN", &none).unwrap();
        let on = conn
            .execute("MATCH (d:Doctor) WHERE d.on RETURN count(*)", &none)
            .unwrap();
        assert_eq!(int(&on.rows[0][0]), 2);
        let off = format!("MATCH (d:Doctor {{name: '{name}'}}) SET d.on = false");
        conn.execute(&off, &none).unwrap();
    }
    let first = t1.execute("COMMIT", &none).is_ok();
    let second = match t2.execute("COMMIT", &none) {
        Ok(_) => true,
        Err(e) => {
            assert!(e.is_retryable(), "{e}");
            assert!(e.to_string().contains("serialization failure"), "{e}");
            false
        }
    };
    (first, second)
}

#[test]
fn write_skew_is_prevented_when_cypher_asks_for_serializable() {
    let dir = TempDir::new("skew");
    let db = Database::open(&dir.0, plexus::Config::default()).unwrap();
    let snapshot = "SET SESSION TRANSACTION ISOLATION LEVEL SNAPSHOT";
    let serializable = "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE";
    let next = "SET NEXT TRANSACTION ISOLATION LEVEL SERIALIZABLE";
    assert_eq!(write_skew(&db, snapshot), (true, true));
    assert_eq!(write_skew(&db, serializable), (true, false));
    assert_eq!(write_skew(&db, next), (true, false));
}

#[test]
fn session_levels_are_per_connection_and_reset_returns_to_the_default() {
    let dir = TempDir::new("session");
    let db = Database::open(&dir.0, plexus::Config::default()).unwrap();
    let mut a = db.connect();
    let b = db.connect();
    a.set_isolation(IsolationLevel::Serializable);
    assert_eq!(b.isolation(), IsolationLevel::Snapshot);
    a.begin_with(IsolationLevel::Snapshot).unwrap();
    assert_eq!(a.effective_isolation(), IsolationLevel::Snapshot);
    assert!(
        a.begin_with(IsolationLevel::Snapshot).is_err(),
        "one transaction at a time"
    );
    assert!(a.set_next_isolation(IsolationLevel::Snapshot).is_err());
    a.execute("COMMIT", &Params::new()).unwrap();
    assert_eq!(a.effective_isolation(), IsolationLevel::Serializable);
    a.set_session_setting("query_threads", "1").unwrap();
    assert_eq!(a.parallel().workers, 1);
    a.reset_session();
    assert_eq!(a.isolation(), IsolationLevel::Snapshot);
    assert_eq!(a.parallel().workers, db.settings().default_query_threads());
    let e = a
        .set_session_setting("row_cache_bytes", "1GiB")
        .unwrap_err();
    assert!(e.to_string().contains("server-wide"), "{e}");
}
