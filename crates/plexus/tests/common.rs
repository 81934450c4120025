//! Helpers shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

use plexus::testing::FaultVfs;
use plexus::{Config, Database};
use std::path::PathBuf;
use std::sync::Arc;

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("plexus-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh in-memory database.
pub fn memory_db() -> Database {
    Database::open_in_memory(Config::default()).expect("open in-memory db")
}

/// A fresh database on a fault-injecting in-memory file system, which the test keeps to
/// inspect or damage the files.
pub fn fault_db() -> (Database, FaultVfs) {
    let vfs = FaultVfs::new();
    let db = Database::open_with_vfs(Arc::new(vfs.clone()), Config::default())
        .expect("open in-memory db");
    (db, vfs)
}
