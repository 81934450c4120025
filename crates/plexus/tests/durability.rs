//! Durability modes, automatic checkpoints with WAL truncation, and the single-process lock.

mod common;

use common::TempDir;
use plexus::{Config, Database, DurabilityMode, Error, Value};

fn wal_segments(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("wal-")
        })
        .count()
}

#[test]
fn every_durability_mode_survives_a_clean_close() {
    for durability in [
        DurabilityMode::Fsync,
        DurabilityMode::Periodic,
        DurabilityMode::None,
    ] {
        let dir = TempDir::new("modes");
        let config = Config {
            durability,
            sync_interval_ms: 5,
            ..Config::default()
        };
        {
            let db = Database::open(&dir.0, config.clone()).unwrap();
            for i in 0..20 {
                let mut tx = db.begin();
                tx.create_vertex(&["N"], &[("i", Value::from(i))]).unwrap();
                tx.commit().unwrap();
            }
            // Commits are visible at once in every mode, durable or not yet.
            assert_eq!(
                db.begin().scan_label("N").unwrap().len(),
                20,
                "{durability:?}"
            );
        }
        let db = Database::open(&dir.0, config).unwrap();
        assert_eq!(
            db.begin().scan_label("N").unwrap().len(),
            20,
            "{durability:?}"
        );
    }
}

#[test]
fn periodic_mode_makes_commits_durable_in_the_background() {
    let dir = TempDir::new("periodic");
    let config = Config {
        durability: DurabilityMode::Periodic,
        sync_interval_ms: 1,
        ..Config::default()
    };
    let db = Database::open(&dir.0, config).unwrap();
    let mut tx = db.begin();
    tx.create_vertex(&["N"], &[]).unwrap();
    tx.commit().unwrap();
    // Without closing: the flusher thread must have written the WAL (bounded wait).
    let wal_bytes = || -> u64 {
        std::fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().starts_with("wal-"))
            .map(|e| e.metadata().unwrap().len())
            .sum()
    };
    let written = (0..2_000).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(1));
        wal_bytes() > 0
    });
    assert!(written, "the background flusher wrote the WAL");
    std::mem::forget(db); // a crash: no close, no final flush
    let db = Database::open(&dir.0, Config::default());
    // The lock is still held by the leaked handle in this process.
    assert!(matches!(db, Err(Error::AlreadyOpen { .. })));
}

#[test]
fn automatic_checkpoints_retire_the_wal() {
    let dir = TempDir::new("autockpt");
    let config = Config {
        checkpoint_wal_bytes: 4 << 10,
        ..Config::default()
    };
    {
        let db = Database::open(&dir.0, config.clone()).unwrap();
        for i in 0..300 {
            let mut tx = db.begin();
            tx.create_vertex(
                &["N"],
                &[("payload", Value::from(format!("row {i} with some text")))],
            )
            .unwrap();
            tx.commit().unwrap();
        }
        assert!(
            wal_segments(&dir.0) <= 2,
            "old segments are deleted after each checkpoint"
        );
        let checkpoints = std::fs::read_dir(&dir.0)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".ckpt")
            })
            .count();
        assert_eq!(checkpoints, 1, "only the newest checkpoint is kept");
    }
    let db = Database::open(&dir.0, config).unwrap();
    assert!(db.recovery_report().checkpoint_ts > 0);
    assert_eq!(db.begin().scan_label("N").unwrap().len(), 300);
}

/// The lock must hold across processes: the test re-runs its own binary as a child that tries
/// to open the same directory.
#[test]
fn a_second_process_cannot_open_the_database() {
    if let Ok(path) = std::env::var("PLEXUS_LOCK_CHILD_DIR") {
        match Database::open(&path, Config::default()) {
            Err(Error::AlreadyOpen { .. }) => std::process::exit(42),
            Ok(_) => std::process::exit(0),
            Err(e) => panic!("child could not open for another reason: {e}"),
        }
    }
    let dir = TempDir::new("lock");
    let child = || {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_second_process_cannot_open_the_database",
                "--test-threads=1",
            ])
            .env("PLEXUS_LOCK_CHILD_DIR", &dir.0)
            .status()
            .unwrap()
            .code()
    };
    let db = Database::open(&dir.0, Config::default()).unwrap();
    assert_eq!(
        child(),
        Some(42),
        "child process was refused with AlreadyOpen"
    );
    drop(db);
    assert_eq!(child(), Some(0), "after close the child opens it");
}
