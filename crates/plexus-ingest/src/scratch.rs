//! Scratch directories for the crate's unit tests.

use std::path::PathBuf;

/// `<temp dir>/plexus-ingest-<tag>-<pid>`, created empty, removed when dropped.
pub(crate) struct Scratch(pub PathBuf);

impl Scratch {
    pub(crate) fn new(tag: &str) -> Scratch {
        let base = std::env::temp_dir().join(format!("plexus-ingest-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("scratch directory");
        Scratch(base)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
