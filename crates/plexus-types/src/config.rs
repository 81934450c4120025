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

impl IsolationLevel {
    /// The level's name as settings and statements print it.
    pub fn name(self) -> &'static str {
        match self {
            IsolationLevel::Snapshot => "snapshot",
            IsolationLevel::Serializable => "serializable",
        }
    }
}

impl std::str::FromStr for IsolationLevel {
    type Err = String;
    /// `snapshot` (also `snapshot isolation`, `si`) or `serializable`, in any case.
    fn from_str(text: &str) -> Result<Self, String> {
        let words: Vec<String> = text
            .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["snapshot"] | ["snapshot", "isolation"] | ["si"] => Ok(Self::Snapshot),
            ["serializable"] => Ok(Self::Serializable),
            _ => Err(format!(
                "unknown isolation level '{text}' (expected serializable or snapshot)"
            )),
        }
    }
}

/// How CSR runs of a vertex range are merged (see `plexus_storage::lsm`).
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub enum MergePolicy {
    /// Merge every flushed run into the range's last-level run at once: one run per range,
    /// best scans, most rewriting.
    Leveling,
    /// Let `lsm_tier_runs` runs accumulate per range before merging: least rewriting, more
    /// runs to read.
    Tiering,
    /// Per range: merge eagerly when `elastic_weight * tombstone_ratio + (1 - elastic_weight)
    /// * read_ratio` reaches `elastic_bound`, otherwise behave like tiering.
    ///
    /// Also flushes an active memtable of at least 1/16 of `memtable_budget_bytes` once scans
    /// have read its adjacency twice over since its last commit.
    #[default]
    Elastic,
}

impl std::str::FromStr for MergePolicy {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "leveling" => Ok(Self::Leveling),
            "tiering" => Ok(Self::Tiering),
            "elastic" => Ok(Self::Elastic),
            other => Err(format!(
                "unknown merge policy '{other}' (expected leveling, tiering or elastic)"
            )),
        }
    }
}

/// Whether flushes and merges bit-pack the neighbour array of the CSR runs they write (see
/// `plexus_storage::run`, NEIGHBOUR PACKING).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum RunPacking {
    /// Raw `u32` neighbours: scans hand out the mapped array itself. The default: with the
    /// runs in memory, decoding costs scans more than the bytes saved (measured: leveled
    /// scans at 0.32 of a static CSR packed against 0.94 raw; `docs/benchmarks.md`).
    #[default]
    Never,
    /// Packed when the packed array is small enough against the raw one to be worth decoding
    /// (`plexus_storage::run::PACK_MAX_PERCENT_OF_RAW`), decided per run: for run files
    /// larger than memory, where a quarter fewer bytes read and written (write amplification
    /// too) outweighs the decoding.
    WhenItPays,
    /// Packed whatever it saves (tests and benchmarks: exercises the decoder on any data).
    Always,
}

impl std::str::FromStr for RunPacking {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "never" => Ok(Self::Never),
            "when-it-pays" => Ok(Self::WhenItPays),
            "always" => Ok(Self::Always),
            other => Err(format!(
                "unknown run packing '{other}' (expected never, when-it-pays or always)"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
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
    /// Topology memtables (all edge tables and directions) are frozen and flushed to CSR runs
    /// when they hold more than this; writers wait while frozen memtables exceed it too.
    pub memtable_budget_bytes: u64,
    /// Row tables (vertex and edge rows with their properties) keep at most about this many
    /// bytes of row chunks in memory; colder chunks are evicted to a spill file in the
    /// database directory and read back on access (`plexus_storage::rowcache`). The spill file
    /// is a cache, not durable state. Chunks with versions a reader may still need, and the
    /// chunk receiving new rows of each table, are never evicted, so the resident bytes can
    /// exceed the budget while many recent writes are unreclaimed. `u64::MAX`: unbounded,
    /// never spill. Default 1 GiB (four times the memtable budget).
    pub row_cache_bytes: u64,
    /// The primary-key and secondary indexes keep at most about this many bytes of index
    /// entries in memory; beyond it, the largest resident part of an index is written as a
    /// sorted run to a scratch file in the database directory and looked up there
    /// (`plexus_storage::indexcache`). Index content is rebuilt from the rows at open, so the
    /// runs are scratch, not durable state. Each run keeps a small resident summary — a key
    /// per 4 KiB block, and for primary keys a bloom filter of 1.25 bytes per key — which is
    /// not bounded by this budget. `u64::MAX`: unbounded, never spill. Default 256 MiB.
    pub index_cache_bytes: u64,
    pub merge_policy: MergePolicy,
    /// Vertices per CSR run range (a multiple of 1,024).
    pub lsm_range_vertices: u32,
    /// Size ratio between levels: a tiered level promotes once it holds this many runs of a
    /// range; a leveled level `i` holds up to `T^(i-1) × max(lsm_level1_bytes, T × the range's
    /// latest flush)` with `T = lsm_tier_runs`.
    pub lsm_tier_runs: usize,
    /// Least level-1 size of a range under leveling, in bytes (see `lsm_tier_runs`).
    pub lsm_level1_bytes: u64,
    pub elastic_weight: f64,
    pub elastic_bound: f64,
    /// Whether CSR runs store their neighbours delta- and bit-packed (default: never, see
    /// [`RunPacking`]).
    pub run_packing: RunPacking,
    /// Run flushes and merges on a background thread (`true`) or inline in the committing
    /// thread (`false`: deterministic, for tests).
    pub background_maintenance: bool,
    /// The isolation level a connection's transactions start with (each session may change
    /// its own: `SET SESSION TRANSACTION ISOLATION LEVEL …`). `Database::begin` uses it too.
    pub default_isolation: IsolationLevel,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            durability: DurabilityMode::Fsync,
            sync_interval_ms: 10,
            wal_segment_max_bytes: 64 << 20,
            checkpoint_wal_bytes: 256 << 20,
            memtable_budget_bytes: 256 << 20,
            row_cache_bytes: 1 << 30,
            index_cache_bytes: 256 << 20,
            merge_policy: MergePolicy::Elastic,
            lsm_range_vertices: 1 << 16,
            lsm_tier_runs: 4,
            lsm_level1_bytes: 64 << 10,
            elastic_weight: 0.5,
            elastic_bound: 0.3,
            run_packing: RunPacking::Never,
            background_maintenance: true,
            default_isolation: IsolationLevel::Snapshot,
        }
    }
}
