//! Database configuration and its defaults.

/// When a commit is acknowledged relative to the WAL reaching stable storage.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum DurabilityMode {
    /// A commit returns only after its WAL record is fsynced (group commit shares one fsync
    /// among the commits that arrive while the previous one runs). Nothing acknowledged is lost.
    #[default]
    Fsync,
    /// The WAL is written and fsynced by a background thread every `sync_interval_ms`; a crash
    /// may lose the commits of the last interval, never a part of one.
    Periodic,
    /// The WAL is written in the background but never fsynced; survives a process crash, not
    /// an operating-system crash.
    None,
}

impl std::str::FromStr for DurabilityMode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "fsync" => Ok(Self::Fsync),
            "periodic" => Ok(Self::Periodic),
            "none" => Ok(Self::None),
            other => Err(format!(
                "unknown durability mode '{other}' (expected fsync, periodic or none)"
            )),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum IsolationLevel {
    /// Reads see the snapshot at the start timestamp; write-write conflicts abort the later
    /// committer ("first committer wins"). Write skew is possible.
    #[default]
    Snapshot,
    /// Snapshot isolation plus validation of everything read (items and predicates such as
    /// label scans and adjacency reads) against transactions that committed meanwhile.
    Serializable,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub durability: DurabilityMode,
    /// Background WAL sync period for `DurabilityMode::Periodic` (and write-back period for
    /// `DurabilityMode::None`).
    pub sync_interval_ms: u64,
    /// A WAL segment larger than this is closed and a new one started.
    pub wal_segment_max_bytes: u64,
    /// Take a checkpoint automatically once this many WAL bytes accumulated since the last one
    /// (0 disables automatic checkpoints).
    pub checkpoint_wal_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            durability: DurabilityMode::Fsync,
            sync_interval_ms: 10,
            wal_segment_max_bytes: 64 << 20,
            checkpoint_wal_bytes: 256 << 20,
        }
    }
}
