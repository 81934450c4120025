//! Settings: one registry of everything a user can configure, from every surface.
//!
//! WHAT
//! ====
//! Every setting has a name (units in the name: `_bytes`, `_ms`), a scope, a type and a
//! description, listed once in [`REGISTRY`]. The same names are used everywhere:
//!
//! - `plexus.toml` in the database directory (`key = value` lines, read by [`Settings::load`]);
//! - the command line (`plexus serve|shell --set key=value`, plus named flags for the common
//!   ones) and Python keyword arguments (`plexusdb.Database(path, durability="periodic")`),
//!   both through [`Settings::set`];
//! - `SET SESSION name = value` for the per-session ones (see `Connection`);
//! - `SHOW SETTINGS` / `CALL db.settings()`, which list the effective values and where each
//!   came from ([`Source`]).
//!
//! Later settings override earlier ones: default < `plexus.toml` < command line / keyword
//! argument. The Rust API's `Database::open(path, Config)` takes its `Config` as given and does
//! not read `plexus.toml`; `Database::open_settings(path, Settings::load(path)?…)` does.
//!
//! SCOPES
//! ======
//! A **server** setting (durability, budgets, merge policy, …) is fixed when the database
//! opens: a Bolt client has no role that could be trusted to change it, so at run time it is
//! read-only. A **session** setting (`transaction_isolation`, `query_threads`) starts from its
//! server-wide default (`default_isolation`, `default_query_threads`) and each connection may
//! change its own with `SET SESSION`; it never leaks into another connection.
//!
//! VALUES
//! ======
//! Sizes take binary units (`512MiB`, `4GiB`, `64KiB`, `1TiB`, plain bytes) or `unbounded`;
//! durations are integer milliseconds (`10`, or `10ms`); enumerations take their names in
//! lower case. A bad value or an unknown key is an error naming the key (and, for an unknown
//! key, the closest known one).
//!
//! IMPORT DIRECTORY
//! ================
//! `import_directory` (server scope) is the only directory `LOAD CSV` reads from: every file
//! name a statement gives is resolved under it, and one leaving it is refused (see
//! `plexus_ingest::ImportDir`). A relative value is relative to the database directory; the
//! default, `import`, is created there when the database opens. A database in memory has no
//! directory of its own, so it has an import directory only when the setting is given (then
//! relative to the process's working directory), and `LOAD CSV` otherwise fails saying so.
//! `export_directory` is its counterpart for files statements write (`COPY ... (REPORT
//! 'f')`), resolved the same way (`plexus_ingest::ExportDir`), default `export`.
//!
//! SECRETS
//! =======
//! Values are listed through [`redact`]: a password in a connection string
//! (`postgres://user:secret@host`, `password=secret`) is shown as `********`, and front-end
//! settings registered as secret ([`Settings::add_front_end`]) never show their value. Nothing
//! here logs values.

use plexus_exec::{JitMode, ParallelConfig};
use plexus_ingest::{ExportDir, ImportDir};
use plexus_types::{
    Config, DurabilityMode, Error, IsolationLevel, MergePolicy, Result, RunPacking,
};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The import directory's default, under the database directory.
pub const DEFAULT_IMPORT_DIRECTORY: &str = "import";
/// The default export directory, relative to the database directory.
pub const DEFAULT_EXPORT_DIRECTORY: &str = "export";
/// The settings file in a database directory.
pub const SETTINGS_FILE: &str = "plexus.toml";
/// What a redacted secret shows.
pub const REDACTED: &str = "********";
/// The most query worker threads a session may ask for.
pub const MAX_QUERY_THREADS: usize = plexus_exec::MAX_QUERY_THREADS;

/// Who may change a setting, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Fixed when the database opens.
    Server,
    /// Each session (connection) may change its own at run time.
    Session,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Server => "server",
            Scope::Session => "session",
        }
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    /// `plexus.toml` at this path.
    File(PathBuf),
    /// `--set` or a named flag of `plexus serve` / `plexus shell`.
    CommandLine,
    /// A keyword argument (Python) or a `Config` given to the Rust API.
    Argument,
    /// An environment variable (`PLEXUS_QUERY_THREADS` for `default_query_threads`).
    Environment(&'static str),
    /// `SET SESSION …` on this connection.
    Session,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(path) => write!(f, "{}", path.display()),
            Source::CommandLine => f.write_str("command line"),
            Source::Argument => f.write_str("argument"),
            Source::Environment(name) => write!(f, "environment {name}"),
            Source::Session => f.write_str("session"),
        }
    }
}

/// `attached_graph_cache_bytes` unless set: offsets and footers of a few thousand chunks.
pub const DEFAULT_ATTACHED_GRAPH_CACHE_BYTES: u64 = 64 << 20;

/// The values the registry reads and writes: the storage engine's `Config` plus the
/// server-wide defaults of session settings that live above it.
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    pub config: Config,
    /// Query worker threads a session starts with (0: one per core).
    pub default_query_threads: usize,
    /// Where `LOAD CSV` reads files from (see IMPORT DIRECTORY); relative to the database
    /// directory.
    pub import_directory: PathBuf,
    /// Where statements write files (see IMPORT DIRECTORY); relative to the database
    /// directory.
    pub export_directory: PathBuf,
    /// The most paths a variable-length pattern may match from one start node (see
    /// `plexus_exec::DEFAULT_PATH_LIMIT`).
    pub var_length_path_limit: u64,
    /// Whether filters of the statements sessions run use compiled code (see docs/jit.md).
    pub default_jit: JitMode,
    /// The cache of each attached graph (`crate::attached`): decoded chunks, offsets, footers.
    pub attached_graph_cache_bytes: u64,
}

/// One registered setting.
pub struct Setting {
    pub name: &'static str,
    pub description: &'static str,
    /// The value as listed and as accepted back by `set`.
    get: fn(&Values) -> String,
    set: fn(&mut Values, &str) -> std::result::Result<(), String>,
}

macro_rules! setting {
    ($name:literal, $description:literal, |$v:ident| $field:expr, $parse:expr, $show:expr) => {
        Setting {
            name: $name,
            description: $description,
            get: |$v| $show(&$field),
            set: |$v, text| {
                $field = $parse(text)?;
                Ok(())
            },
        }
    };
}

/// Every server setting (all of scope [`Scope::Server`]), in the order `SHOW SETTINGS` lists them (the session settings follow,
/// see [`SESSION_SETTINGS`]).
pub static REGISTRY: &[Setting] = &[
    setting!(
        "durability",
        "when a commit is acknowledged: fsync (after its WAL record is on disk), periodic (WAL synced every sync_interval_ms) or none",
        |v| v.config.durability,
        parse_enum::<DurabilityMode>,
        |d: &DurabilityMode| durability_name(*d).to_string()
    ),
    setting!(
        "sync_interval_ms",
        "background WAL sync period of durability = periodic (write-back period of none)",
        |v| v.config.sync_interval_ms,
        parse_millis,
        u64::to_string
    ),
    setting!(
        "wal_segment_max_bytes",
        "a WAL segment larger than this is closed and a new one started",
        |v| v.config.wal_segment_max_bytes,
        parse_bytes,
        |b: &u64| show_bytes(*b)
    ),
    setting!(
        "checkpoint_wal_bytes",
        "take a checkpoint once this many WAL bytes accumulated (0: never automatically)",
        |v| v.config.checkpoint_wal_bytes,
        parse_bytes,
        |b: &u64| show_bytes(*b)
    ),
    setting!(
        "memtable_budget_bytes",
        "topology memtables are flushed to CSR runs on disk beyond this",
        |v| v.config.memtable_budget_bytes,
        parse_bytes,
        |b: &u64| show_bytes(*b)
    ),
    setting!(
        "row_cache_bytes",
        "row chunks (properties, edge endpoints) kept in memory; colder ones spill to a cache file",
        |v| v.config.row_cache_bytes,
        parse_bytes,
        |b: &u64| show_bytes(*b)
    ),
    setting!(
        "index_cache_bytes",
        "primary-key and property index entries kept in memory; the rest spill to scratch runs",
        |v| v.config.index_cache_bytes,
        parse_bytes,
        |b: &u64| show_bytes(*b)
    ),
    setting!(
        "merge_policy",
        "how CSR runs are merged: leveling, tiering or elastic",
        |v| v.config.merge_policy,
        parse_enum::<MergePolicy>,
        |m: &MergePolicy| merge_policy_name(*m).to_string()
    ),
    setting!(
        "lsm_range_vertices",
        "vertices per CSR run range (a multiple of 1024)",
        |v| v.config.lsm_range_vertices,
        parse_range_vertices,
        u32::to_string
    ),
    setting!(
        "lsm_tier_runs",
        "size ratio between LSM levels (runs per tier before a merge)",
        |v| v.config.lsm_tier_runs,
        parse_tier_runs,
        usize::to_string
    ),
    setting!(
        "lsm_level1_bytes",
        "least level-1 size of a range under leveling",
        |v| v.config.lsm_level1_bytes,
        parse_bytes,
        |b: &u64| show_bytes(*b)
    ),
    setting!(
        "elastic_weight",
        "elastic merges: weight of the tombstone ratio against the read ratio (0 to 1)",
        |v| v.config.elastic_weight,
        parse_fraction,
        f64::to_string
    ),
    setting!(
        "elastic_bound",
        "elastic merges: merge eagerly from this weighted ratio on (0 to 1)",
        |v| v.config.elastic_bound,
        parse_fraction,
        f64::to_string
    ),
    setting!(
        "run_packing",
        "bit-pack CSR run neighbours: never, when-it-pays or always",
        |v| v.config.run_packing,
        parse_enum::<RunPacking>,
        |p: &RunPacking| run_packing_name(*p).to_string()
    ),
    setting!(
        "background_maintenance",
        "run flushes and merges on a background thread (false: in the committing thread)",
        |v| v.config.background_maintenance,
        parse_bool,
        bool::to_string
    ),
    setting!(
        "import_directory",
        "the only directory LOAD CSV reads files from; relative to the database directory (created there if absent); a database in memory has one only when this is set",
        |v| v.import_directory,
        parse_path,
        |p: &PathBuf| p.display().to_string()
    ),
    setting!(
        "export_directory",
        "the only directory statements write files to (COPY's REPORT file); relative to the database directory (created there if absent); a database in memory has one only when this is set",
        |v| v.export_directory,
        parse_path,
        |p: &PathBuf| p.display().to_string()
    ),
    setting!(
        "var_length_path_limit",
        "the most paths a variable-length pattern may enumerate from one start node before the statement fails (a safety net: patterns whose end nodes are only counted or de-duplicated run as a breadth-first search, which it does not bound)",
        |v| v.var_length_path_limit,
        parse_path_limit,
        u64::to_string
    ),
    setting!(
        "attached_graph_cache_bytes",
        "memory each attached graph (ATTACH GRAPHAR) may keep of its files: decoded chunks, offsets, Parquet footers",
        |v| v.attached_graph_cache_bytes,
        parse_bytes,
        |b: &u64| show_bytes(*b)
    ),
    setting!(
        "default_jit",
        "whether sessions start with filters compiled to machine code: off, on (compile before the first batch) or adaptive (interpret, compile in the background, switch when ready)",
        |v| v.default_jit,
        parse_enum::<JitMode>,
        |m: &JitMode| m.name().to_string()
    ),
    setting!(
        "default_isolation",
        "the isolation level sessions start with: snapshot or serializable",
        |v| v.config.default_isolation,
        parse_enum::<IsolationLevel>,
        |l: &IsolationLevel| l.name().to_string()
    ),
    setting!(
        "default_query_threads",
        "worker threads of read-only statements that sessions start with (0: one per core; 1: serial)",
        |v| v.default_query_threads,
        parse_query_threads,
        usize::to_string
    ),
];

/// The per-session settings: (name, description, its server-wide default in [`REGISTRY`]).
pub static SESSION_SETTINGS: &[(&str, &str, &str)] = &[
    (
        "transaction_isolation",
        "the isolation level of this session's next transactions (SET SESSION TRANSACTION ISOLATION LEVEL …)",
        "default_isolation",
    ),
    (
        "query_threads",
        "worker threads of this session's read-only statements (1: serial)",
        "default_query_threads",
    ),
    (
        "jit",
        "whether this session's filters run compiled code: off, on or adaptive",
        "default_jit",
    ),
];

/// A front-end's own setting (the Bolt address, its user), listed beside the engine's.
#[derive(Debug, Clone)]
struct FrontEnd {
    name: String,
    value: String,
    description: String,
    source: Source,
}

/// The effective settings of a database and where each came from.
#[derive(Clone)]
pub struct Settings {
    values: Values,
    /// Parallel to [`REGISTRY`].
    sources: Vec<Source>,
    front_ends: Vec<FrontEnd>,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_map();
        for row in self.rows() {
            list.entry(&row.name, &row.value);
        }
        list.finish()
    }
}

/// One line of `SHOW SETTINGS`.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingRow {
    pub name: String,
    /// Redacted where it holds a secret.
    pub value: String,
    pub scope: Scope,
    pub source: String,
    pub description: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::new()
    }
}

impl Settings {
    /// The defaults (with `PLEXUS_QUERY_THREADS` applied, if set).
    pub fn new() -> Settings {
        let mut settings = Settings {
            values: Values {
                config: Config::default(),
                default_query_threads: 0,
                import_directory: PathBuf::from(DEFAULT_IMPORT_DIRECTORY),
                export_directory: PathBuf::from(DEFAULT_EXPORT_DIRECTORY),
                var_length_path_limit: plexus_exec::DEFAULT_PATH_LIMIT as u64,
                default_jit: JitMode::default(),
                attached_graph_cache_bytes: DEFAULT_ATTACHED_GRAPH_CACHE_BYTES,
            },
            sources: vec![Source::Default; REGISTRY.len()],
            front_ends: Vec::new(),
        };
        const ENV: &str = plexus_exec::QUERY_THREADS_ENV;
        if std::env::var_os(ENV).is_some() {
            // Read as the engine always read it: capped at the cores, a bad value ignored.
            settings.values.default_query_threads = ParallelConfig::from_env().workers;
            settings.sources[REGISTRY.len() - 1] = Source::Environment(ENV);
        }
        debug_assert_eq!(REGISTRY[REGISTRY.len() - 1].name, "default_query_threads");
        settings
    }

    /// `config` as given: a field that differs from the default is listed as an argument.
    pub fn from_config(config: Config) -> Settings {
        let mut settings = Settings::new();
        let defaults = settings.values.clone();
        settings.values.config = config;
        for (i, setting) in REGISTRY.iter().enumerate() {
            if (setting.get)(&settings.values) != (setting.get)(&defaults) {
                settings.sources[i] = Source::Argument;
            }
        }
        settings
    }

    /// The defaults, overridden by `dir/plexus.toml` if the file exists.
    pub fn load(dir: impl AsRef<Path>) -> Result<Settings> {
        let mut settings = Settings::new();
        let path = dir.as_ref().join(SETTINGS_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => settings.apply_file(&path, &text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(Error::Io {
                    file: path.display().to_string(),
                    source,
                });
            }
        }
        Ok(settings)
    }

    /// Applies the `key = value` lines of a settings file's `text`.
    pub fn apply_file(&mut self, path: &Path, text: &str) -> Result<()> {
        let file = path.display();
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let at = e
                .span()
                .map(|span| format!(" at line {}", line_of(text, span.start)))
                .unwrap_or_default();
            invalid(format!("{file}{at}: {}", e.message()))
        })?;
        for (key, value) in &table {
            let at = text
                .lines()
                .position(|line| line.trim_start().starts_with(key.as_str()))
                .map(|i| format!(":{}", i + 1))
                .unwrap_or_default();
            let text = match value {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(x) => x.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                _ => {
                    return Err(invalid(format!(
                        "{file}{at}: setting '{key}' must be a string, number or boolean"
                    )));
                }
            };
            self.set(key, &text, Source::File(path.to_path_buf()))
                .map_err(|e| invalid(format!("{file}{at}: {}", message(e))))?;
        }
        Ok(())
    }

    /// Sets server setting `name` from `text` (at start-up: from the command line, a keyword
    /// argument or the settings file).
    pub fn set(&mut self, name: &str, text: &str, source: Source) -> Result<()> {
        let Some(i) = REGISTRY.iter().position(|s| s.name == name) else {
            if let Some((_, _, default)) = SESSION_SETTINGS.iter().find(|(n, ..)| *n == name) {
                return Err(invalid(format!(
                    "setting '{name}' is per session (SET SESSION {name} = …); its server-wide \
                     default is '{default}'"
                )));
            }
            return Err(invalid(unknown_setting(name)));
        };
        (REGISTRY[i].set)(&mut self.values, text.trim())
            .map_err(|e| invalid(format!("setting '{name}': {e}")))?;
        self.sources[i] = source;
        Ok(())
    }

    /// Parses `NAME=VALUE` (the form of `--set`) and sets it.
    pub fn set_assignment(&mut self, assignment: &str, source: Source) -> Result<()> {
        let Some((name, value)) = assignment.split_once('=') else {
            return Err(invalid(format!(
                "'{assignment}' is not NAME=VALUE (e.g. memtable_budget_bytes=512MiB)"
            )));
        };
        self.set(name.trim(), value, source)
    }

    /// Lists a front-end's own setting (server scope) beside the engine's; a `secret` value
    /// is never shown.
    pub fn add_front_end(
        &mut self,
        name: &str,
        value: &str,
        description: &str,
        secret: bool,
        source: Source,
    ) {
        let value = if secret {
            REDACTED.to_string()
        } else {
            value.to_string()
        };
        self.front_ends.retain(|f| f.name != name);
        self.front_ends.push(FrontEnd {
            name: name.into(),
            value,
            description: description.into(),
            source,
        });
    }

    pub fn config(&self) -> &Config {
        &self.values.config
    }

    /// The directory `LOAD CSV` reads from (see IMPORT DIRECTORY) for a database in directory
    /// `db_dir` (`None`: in memory). Created if it is the default and absent; `None` for a
    /// database in memory unless the setting was given.
    pub fn import_dir(&self, db_dir: Option<&Path>) -> Result<Option<Arc<ImportDir>>> {
        let Some(path) =
            self.directory("import_directory", &self.values.import_directory, db_dir)?
        else {
            return Ok(None);
        };
        let dir = ImportDir::new(&path)
            .map_err(|e| invalid(format!("setting 'import_directory': {e}")))?;
        Ok(Some(Arc::new(dir)))
    }

    /// The directory statements write files to, as [`Settings::import_dir`] for reading.
    pub fn export_dir(&self, db_dir: Option<&Path>) -> Result<Option<Arc<ExportDir>>> {
        let Some(path) =
            self.directory("export_directory", &self.values.export_directory, db_dir)?
        else {
            return Ok(None);
        };
        let dir = ExportDir::new(&path)
            .map_err(|e| invalid(format!("setting 'export_directory': {e}")))?;
        Ok(Some(Arc::new(dir)))
    }

    /// The path of directory setting `name` for a database in `db_dir`, created when it is
    /// the default and absent.
    fn directory(
        &self,
        name: &str,
        configured: &Path,
        db_dir: Option<&Path>,
    ) -> Result<Option<PathBuf>> {
        let given = self.source(name) != Some(&Source::Default);
        let path = match db_dir {
            Some(dir) => dir.join(configured),
            None if given => configured.to_path_buf(),
            None => return Ok(None),
        };
        if !given {
            std::fs::create_dir_all(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
        }
        Ok(Some(path))
    }

    /// The most paths a variable-length pattern may enumerate from one start node.
    pub fn var_length_path_limit(&self) -> u64 {
        self.values.var_length_path_limit
    }

    /// The cache budget of each attached graph (`attached_graph_cache_bytes`).
    pub fn attached_graph_cache_bytes(&self) -> u64 {
        self.values.attached_graph_cache_bytes
    }

    /// Whether sessions start with filters compiled (`default_jit`).
    pub fn default_jit(&self) -> JitMode {
        self.values.default_jit
    }

    /// Worker threads a session starts with (resolved: 0 becomes one per core).
    pub fn default_query_threads(&self) -> usize {
        resolve_query_threads(self.values.default_query_threads)
    }

    /// The value of server setting `name`, as listed.
    pub fn get(&self, name: &str) -> Option<String> {
        REGISTRY
            .iter()
            .find(|s| s.name == name)
            .map(|s| redact(&(s.get)(&self.values)))
    }

    /// Every server setting (engine, then front-ends) with its value and source.
    pub fn rows(&self) -> Vec<SettingRow> {
        let engine = REGISTRY
            .iter()
            .zip(&self.sources)
            .map(|(s, source)| SettingRow {
                name: s.name.into(),
                value: redact(&(s.get)(&self.values)),
                scope: Scope::Server,
                source: source.to_string(),
                description: s.description.into(),
            });
        let front_ends = self.front_ends.iter().map(|f| SettingRow {
            name: f.name.clone(),
            value: redact(&f.value),
            scope: Scope::Server,
            source: f.source.to_string(),
            description: f.description.clone(),
        });
        engine.chain(front_ends).collect()
    }

    /// Where server setting `name`'s value came from.
    pub fn source(&self, name: &str) -> Option<&Source> {
        REGISTRY
            .iter()
            .position(|s| s.name == name)
            .map(|i| &self.sources[i])
    }
}

/// 0 → one per core; otherwise capped at [`MAX_QUERY_THREADS`].
pub(crate) fn resolve_query_threads(threads: usize) -> usize {
    let threads = if threads == 0 {
        plexus_plan::available_cores()
    } else {
        threads
    };
    threads.min(MAX_QUERY_THREADS)
}

/// Hides passwords in connection strings: the password of `scheme://user:password@host` and
/// the value of `password=…` (libpq's keyword form) become [`REDACTED`].
pub fn redact(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    // URL userinfo: "://user:password@".
    while let Some(scheme_end) = rest.find("://") {
        let (head, tail) = rest.split_at(scheme_end + 3);
        out.push_str(head);
        let authority_end = tail.find(['/', '?', '#', ' ']).unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..=colon]);
                out.push_str(REDACTED);
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    // Keyword form: "password=…" up to the next space.
    let lower = out.to_ascii_lowercase();
    let mut result = String::with_capacity(out.len());
    let mut i = 0;
    while let Some(found) = lower[i..].find("password=") {
        let start = i + found + "password=".len();
        result.push_str(&out[i..start]);
        let end = out[start..]
            .find(char::is_whitespace)
            .map_or(out.len(), |n| start + n);
        result.push_str(REDACTED);
        i = end;
    }
    result.push_str(&out[i..]);
    result
}

fn invalid(message: String) -> Error {
    Error::InvalidArgument(message)
}

fn message(error: Error) -> String {
    match error {
        Error::InvalidArgument(message) => message,
        other => other.to_string(),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Every name `SET SESSION`, `--set` and `plexus.toml` know, for suggestions.
fn known_names() -> impl Iterator<Item = &'static str> {
    REGISTRY
        .iter()
        .map(|s| s.name)
        .chain(SESSION_SETTINGS.iter().map(|(name, ..)| *name))
}

/// Why `name` is no setting, with the closest known name when one is near.
pub(crate) fn unknown_setting(name: &str) -> String {
    let closest = known_names()
        .map(|known| (edit_distance(name, known), known))
        .min()
        .filter(|(distance, known)| *distance <= known.len() / 2)
        .map(|(_, known)| format!(" (did you mean '{known}'?)"))
        .unwrap_or_default();
    format!("unknown setting '{name}'{closest}; SHOW SETTINGS lists them")
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

fn parse_enum<T: std::str::FromStr<Err = String>>(text: &str) -> std::result::Result<T, String> {
    text.to_ascii_lowercase().parse()
}

fn parse_path(text: &str) -> std::result::Result<PathBuf, String> {
    if text.is_empty() {
        return Err("a directory path is needed".to_string());
    }
    Ok(PathBuf::from(text))
}

fn parse_bool(text: &str) -> std::result::Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is not a boolean (true or false)")),
    }
}

fn parse_u64(text: &str, what: &str) -> std::result::Result<u64, String> {
    text.replace('_', "")
        .parse()
        .map_err(|_| format!("'{text}' is not {what}"))
}

fn parse_millis(text: &str) -> std::result::Result<u64, String> {
    let number = text.strip_suffix("ms").unwrap_or(text).trim();
    parse_u64(number, "a number of milliseconds")
}

/// `123`, `64KiB`, `512MiB`, `4GiB`, `1TiB` (also `K`, `M`, `G`, `T` and `KB`… as binary
/// units, as most databases read them) or `unbounded`.
pub fn parse_bytes(text: &str) -> std::result::Result<u64, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("unbounded") {
        return Ok(u64::MAX);
    }
    let digits = text
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "'{text}' is not a size (a number of bytes with an optional unit KiB, MiB, GiB \
                 or TiB, e.g. 512MiB; or unbounded)"
            ));
        }
    };
    let number = parse_u64(number, "a size")?;
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// Bytes in the largest binary unit that divides them (`unbounded` for `u64::MAX`).
pub fn show_bytes(bytes: u64) -> String {
    if bytes == u64::MAX {
        return "unbounded".into();
    }
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes != 0 && bytes.is_multiple_of(1u64 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

fn parse_fraction(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("'{text}' is not a number from 0 to 1")),
    }
}

fn parse_range_vertices(text: &str) -> std::result::Result<u32, String> {
    let n = parse_u64(text, "a number of vertices")?;
    match u32::try_from(n) {
        Ok(n) if n > 0 && n.is_multiple_of(1024) => Ok(n),
        _ => Err(format!("'{text}' is not a positive multiple of 1024")),
    }
}

fn parse_tier_runs(text: &str) -> std::result::Result<usize, String> {
    match parse_u64(text, "a number of runs")? {
        n @ 2..=64 => Ok(n as usize),
        _ => Err(format!("'{text}' is not from 2 to 64")),
    }
}

fn parse_path_limit(text: &str) -> std::result::Result<u64, String> {
    match parse_u64(text, "a number of paths")? {
        0 => Err(format!("'{text}' is not a positive number of paths")),
        n => Ok(n),
    }
}

pub(crate) fn parse_query_threads(text: &str) -> std::result::Result<usize, String> {
    let n = parse_u64(text, "a number of threads")?;
    if n > MAX_QUERY_THREADS as u64 {
        return Err(format!("'{text}' is more than {MAX_QUERY_THREADS} threads"));
    }
    Ok(n as usize)
}

fn durability_name(mode: DurabilityMode) -> &'static str {
    match mode {
        DurabilityMode::Fsync => "fsync",
        DurabilityMode::Periodic => "periodic",
        DurabilityMode::None => "none",
    }
}

fn merge_policy_name(policy: MergePolicy) -> &'static str {
    match policy {
        MergePolicy::Leveling => "leveling",
        MergePolicy::Tiering => "tiering",
        MergePolicy::Elastic => "elastic",
    }
}

fn run_packing_name(packing: RunPacking) -> &'static str {
    match packing {
        RunPacking::Never => "never",
        RunPacking::WhenItPays => "when-it-pays",
        RunPacking::Always => "always",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lists_as_it_is_read_back() {
        let settings = Settings::new();
        for setting in REGISTRY {
            let shown = (setting.get)(&settings.values);
            let mut values = settings.values.clone();
            (setting.set)(&mut values, &shown)
                .unwrap_or_else(|e| panic!("{}: '{shown}': {e}", setting.name));
            assert_eq!(values, settings.values, "{}", setting.name);
        }
        assert_eq!(
            known_names().count(),
            REGISTRY.len() + SESSION_SETTINGS.len()
        );
    }

    /// docs/settings.md lists every setting with its default, so the two cannot drift.
    #[test]
    fn every_setting_is_documented_with_its_default() {
        let doc = include_str!("../../../docs/settings.md");
        // The defaults before the environment: PLEXUS_QUERY_THREADS may be set in a test run.
        let defaults = Values {
            config: Config::default(),
            default_query_threads: 0,
            import_directory: PathBuf::from(DEFAULT_IMPORT_DIRECTORY),
            export_directory: PathBuf::from(DEFAULT_EXPORT_DIRECTORY),
            var_length_path_limit: plexus_exec::DEFAULT_PATH_LIMIT as u64,
            default_jit: JitMode::default(),
            attached_graph_cache_bytes: DEFAULT_ATTACHED_GRAPH_CACHE_BYTES,
        };
        for setting in REGISTRY {
            let row = format!("| `{}` | `{}` |", setting.name, (setting.get)(&defaults));
            assert!(doc.contains(&row), "docs/settings.md lacks the row {row}");
        }
        for (name, _, default) in SESSION_SETTINGS {
            let row = format!("| `{name}` | `{default}` |");
            assert!(doc.contains(&row), "docs/settings.md lacks the row {row}");
        }
    }

    #[test]
    fn sizes_take_units() {
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(parse_bytes("4 gb"), Ok(4 << 30));
        assert_eq!(parse_bytes("65536"), Ok(65536));
        assert_eq!(parse_bytes("1_024KiB"), Ok(1 << 20));
        assert_eq!(parse_bytes("unbounded"), Ok(u64::MAX));
        assert!(parse_bytes("12XB").unwrap_err().contains("not a size"));
        assert!(parse_bytes("-1").is_err());
        assert!(
            parse_bytes("99999999999TiB")
                .unwrap_err()
                .contains("too large")
        );
        assert_eq!(show_bytes(256 << 20), "256MiB");
        assert_eq!(show_bytes(1 << 30), "1GiB");
        assert_eq!(show_bytes(1000), "1000");
        assert_eq!(show_bytes(0), "0");
        assert_eq!(show_bytes(u64::MAX), "unbounded");
    }

    #[test]
    fn sources_follow_precedence() {
        let mut settings = Settings::new();
        let file = PathBuf::from("/db/plexus.toml");
        settings
            .apply_file(
                &file,
                "durability = \"periodic\"\nmemtable_budget_bytes = \"512MiB\"\nsync_interval_ms = 25\n",
            )
            .unwrap();
        settings
            .set_assignment("memtable_budget_bytes=1GiB", Source::CommandLine)
            .unwrap();
        let config = settings.config();
        assert_eq!(config.durability, DurabilityMode::Periodic);
        assert_eq!(config.memtable_budget_bytes, 1 << 30);
        assert_eq!(config.sync_interval_ms, 25);
        assert_eq!(settings.source("durability"), Some(&Source::File(file)));
        assert_eq!(
            settings.source("memtable_budget_bytes"),
            Some(&Source::CommandLine)
        );
        assert_eq!(settings.source("row_cache_bytes"), Some(&Source::Default));
        let row = |name: &str| {
            settings
                .rows()
                .into_iter()
                .find(|r| r.name == name)
                .unwrap()
        };
        assert_eq!(row("memtable_budget_bytes").value, "1GiB");
        assert_eq!(row("memtable_budget_bytes").source, "command line");
        assert_eq!(row("durability").source, "/db/plexus.toml");
    }

    #[test]
    fn bad_keys_and_values_name_the_key() {
        let mut settings = Settings::new();
        let e = message(
            settings
                .set("memtable_budget", "1", Source::CommandLine)
                .unwrap_err(),
        );
        assert!(e.contains("unknown setting 'memtable_budget'"), "{e}");
        assert!(e.contains("did you mean 'memtable_budget_bytes'"), "{e}");
        let e = message(
            settings
                .set("durability", "sometimes", Source::CommandLine)
                .unwrap_err(),
        );
        assert!(
            e.contains("setting 'durability'") && e.contains("sometimes"),
            "{e}"
        );
        let e = message(
            settings
                .set("query_threads", "2", Source::CommandLine)
                .unwrap_err(),
        );
        assert!(
            e.contains("per session") && e.contains("default_query_threads"),
            "{e}"
        );
        let e = message(
            settings
                .set_assignment("durability", Source::CommandLine)
                .unwrap_err(),
        );
        assert!(e.contains("NAME=VALUE"), "{e}");
        let e = message(
            settings
                .set("lsm_range_vertices", "1000", Source::CommandLine)
                .unwrap_err(),
        );
        assert!(e.contains("multiple of 1024"), "{e}");

        let file = Path::new("/db/plexus.toml");
        let e = message(
            settings
                .apply_file(file, "# budgets\n\nrow_cache = \"1GiB\"\n")
                .unwrap_err(),
        );
        assert!(
            e.starts_with("/db/plexus.toml:3: unknown setting 'row_cache'"),
            "{e}"
        );
        let e = message(settings.apply_file(file, "durability = \n").unwrap_err());
        assert!(e.contains("/db/plexus.toml at line 1"), "{e}");
        let e = message(settings.apply_file(file, "[server]\nx = 1\n").unwrap_err());
        assert!(
            e.contains("'server' must be a string, number or boolean"),
            "{e}"
        );
        let e = message(
            settings
                .apply_file(file, "elastic_bound = 3.5\n")
                .unwrap_err(),
        );
        assert!(
            e.contains("setting 'elastic_bound'") && e.contains("0 to 1"),
            "{e}"
        );
    }

    #[test]
    fn a_config_given_as_is_lists_its_changes_as_arguments() {
        let config = Config {
            durability: DurabilityMode::None,
            ..Config::default()
        };
        let settings = Settings::from_config(config);
        assert_eq!(settings.source("durability"), Some(&Source::Argument));
        assert_eq!(settings.source("sync_interval_ms"), Some(&Source::Default));
        assert_eq!(settings.get("durability").as_deref(), Some("none"));
    }

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(
            redact("postgres://mirror:s3cret@127.0.0.1:5432/shop"),
            "postgres://mirror:********@127.0.0.1:5432/shop"
        );
        assert_eq!(
            redact("host=localhost user=mirror password=s3cret dbname=shop"),
            "host=localhost user=mirror password=******** dbname=shop"
        );
        assert_eq!(redact("PASSWORD=x"), "PASSWORD=********");
        assert_eq!(
            redact("postgres://mirror@host/db"),
            "postgres://mirror@host/db"
        );
        assert_eq!(redact("512MiB"), "512MiB");
        let mut settings = Settings::new();
        settings.add_front_end(
            "bolt_auth",
            "neo4j:hunter2",
            "user",
            true,
            Source::CommandLine,
        );
        let listed = format!("{settings:?} {:?}", settings.rows());
        assert!(!listed.contains("hunter2"), "{listed}");
        assert!(listed.contains(REDACTED), "{listed}");
    }
}
