//! `Connection`: Cypher statements over a [`Database`].
//!
//! TRANSACTIONS
//! ============
//! A connection is in one of two modes:
//!
//! - **auto-commit** (the default): each `execute` runs in a transaction of its own, committed
//!   when the statement succeeds and rolled back when it fails, so a failed statement leaves
//!   no trace;
//! - **explicit**: `BEGIN` opens a transaction that the following statements share (each sees
//!   the writes of the previous ones) until `COMMIT` or `ROLLBACK`. A statement that fails
//!   inside it rolls the whole transaction back (Plexus has no statement-level savepoints
//!   yet), and the error says so.
//!
//! `BEGIN`, `COMMIT` and `ROLLBACK` are commands of the connection, not Cypher; they must be
//! the whole statement (a trailing `;` is allowed). So are the index commands (`CREATE INDEX`,
//! `DROP INDEX`, `SHOW INDEXES`; see `index_commands`), the table and constraint commands
//! (`CREATE NODE TABLE`, `SHOW TABLES`, `CREATE CONSTRAINT`, …; see `table_commands`), `COPY`
//! (a bulk load that commits on its own; see `copy_command`) and the session commands below.
//!
//! SESSION: ISOLATION LEVEL AND SETTINGS
//! =====================================
//! A connection is a session. Its transactions start at the session's isolation level, which
//! starts as the server-wide `default_isolation` (see `crate::settings`):
//!
//! - `SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE | SNAPSHOT [ISOLATION]` sets it for
//!   every later transaction (one already open keeps its level);
//! - `SET NEXT TRANSACTION ISOLATION LEVEL …` for the next transaction only — the next
//!   `BEGIN`, or the next auto-commit statement that runs in a transaction (refused while a
//!   transaction is open, since its level is already fixed);
//! - `SET GLOBAL …` is refused: the server-wide default is fixed at start-up;
//! - `SHOW TRANSACTION ISOLATION LEVEL` answers one row, `isolation_level`: the open
//!   transaction's level, or else the level the next transaction gets;
//! - `SET SESSION name = value` changes a per-session setting (`transaction_isolation`,
//!   `query_threads`, `jit`); a server setting is refused with the reason;
//! - `SHOW SETTINGS` and `CALL db.settings()` list every setting: `name, value, scope,
//!   source, description`, session settings with this session's values.
//!
//! [`Connection::begin_with`] opens an explicit transaction at a given level (Bolt's BEGIN
//! with `tx_metadata: {isolation: …}` and Python's `conn.begin(isolation=…)` use it), and
//! [`Connection::reset_session`] returns the session to the server defaults (Bolt's RESET and
//! LOGOFF, so nothing leaks between driver sessions sharing a pooled connection). A failed
//! session command never rolls back an open transaction: it changed nothing in it.
//!
//! RESULTS: MATERIALISED OR STREAMED
//! =================================
//! [`Connection::execute`] returns every row at once, with the nodes and relationships they
//! mention copied in (see `plexus_exec::result`), so a result outlives its transaction.
//!
//! [`Connection::run`] returns a [`QueryStream`] instead, and [`Connection::pull`] produces
//! its rows a batch at a time as the caller asks, so a large result never sits in memory
//! whole. [`Connection::stream`] wraps both in an iterator of rows. What a stream holds:
//!
//! - an **auto-commit read** runs in a transaction the stream owns; its snapshot stays pinned
//!   until the last batch is pulled (then it commits) or the stream is dropped (then it rolls
//!   back — a read has nothing to lose);
//! - a **statement that may write** (an updating clause, or a computed procedure such as
//!   `algo.*` with `writeProperty`) runs to its end inside `run` — and in auto-commit mode
//!   commits there — so its errors are reported by `run`, and dropping the stream never
//!   skips or undoes a write; the stream then hands out the buffered rows;
//! - a **read in an explicit transaction** pulls in the connection's transaction. A later
//!   statement in the same transaction makes the older stream stale (pulling it is an error),
//!   because its remaining rows would otherwise see writes made after it started;
//!   [`Connection::buffer`] drains a stream first for a caller that wants to keep it.
//!
//! A failure while pulling ends the stream; in an explicit transaction it rolls the
//! transaction back, exactly as for `execute`.

use crate::attached::AttachedGraphs;
use crate::catalog_procedures::{INDEX_COLUMNS, index_rows};
use crate::copy_command::run_copy;
use crate::index_commands::run_index_ddl;
use crate::metrics::{AbortKind, Metrics, OpenConnection};
use crate::settings::{
    self, SESSION_SETTINGS, Scope, SettingRow, Settings, Source as SettingSource,
};
use crate::table_commands::run_table_command;
use plexus_cypher::ast::{
    Command, GraphCommand, IsolationName, IsolationScope, SchemaCommand, SessionCommand,
    SettingValue, Span, TransactionCommand,
};
use plexus_exec::{
    Cursor, ErrorClass, JitMode, ParallelConfig, Params, Procedure, ProcedureRegistry, QueryError,
    QueryResult, Value as CypherValue,
};
use plexus_ingest::{ExportDir, ImportDir};
use plexus_txn::{Transaction, TxnManager};
use plexus_types::IsolationLevel;
use std::sync::Arc;
use std::time::Instant;

/// The columns of `SHOW SETTINGS` and `CALL db.settings()`.
const SETTINGS_COLUMNS: [&str; 5] = ["name", "value", "scope", "source", "description"];

/// A connection shares the engine with its `Database` (it does not borrow it), so it can be
/// moved to another thread or kept by a server session; it stays usable after the `Database`
/// handle is dropped, like an open `Transaction`.
pub struct Connection {
    manager: Arc<TxnManager>,
    tx: Option<Transaction>,
    /// Statements started in the explicit transaction so far (see RESULTS: MATERIALISED OR
    /// STREAMED); a stream records the number of its own statement.
    statements_in_tx: u64,
    procedures: ProcedureRegistry,
    /// Parallelism of read-only statements (see [`Connection::set_parallel`]).
    parallel: ParallelConfig,
    /// The server-wide settings, fixed while the database is open.
    settings: Arc<Settings>,
    session: Session,
    /// Set by [`Connection::refuse_transaction_statements`]: the error for `BEGIN` text.
    transaction_statements: Option<&'static str>,
    /// Where `LOAD CSV` reads files from (the database's `import_directory`).
    import_dir: Option<Arc<ImportDir>>,
    /// Where `COPY ... (REPORT 'f')` writes (the database's `export_directory`).
    export_dir: Option<Arc<ExportDir>>,
    /// The database's counters (`crate::metrics`); also counts this connection open.
    open: OpenConnection,
    /// Handed to every statement `run` starts (see [`Connection::set_interrupt`]).
    interrupt: plexus_exec::Interrupt,
    /// The database's attached graphs (`crate::attached`).
    attached: Arc<AttachedGraphs>,
    /// Whether files named by statements must lie under the import directory (a server's
    /// connection; see [`Connection::confine_files`]).
    confined: bool,
}

/// The session's own state (see SESSION in the module docs).
#[derive(Debug, Clone, PartialEq)]
struct Session {
    isolation: IsolationLevel,
    /// `Session` once changed on this connection, else the server default's source.
    isolation_source: SettingSource,
    /// `SET NEXT TRANSACTION ISOLATION LEVEL`: taken by the next transaction.
    next_isolation: Option<IsolationLevel>,
    query_threads_source: SettingSource,
    /// Whether this session's filters run compiled code (`SET SESSION jit = …`).
    jit: JitMode,
    jit_source: SettingSource,
}

/// The rows of one statement, pulled with [`Connection::pull`] (see the module docs).
pub struct QueryStream {
    columns: Vec<String>,
    source: Source,
    /// When `run` started the statement (its end is observed by `crate::metrics`).
    started: Instant,
}

enum Source {
    /// Pulled in a transaction the stream owns (auto-commit read).
    Own {
        cursor: Box<Cursor>,
        tx: Box<Transaction>,
    },
    /// Pulled in the connection's explicit transaction; `statement` numbers it there.
    Connection { cursor: Box<Cursor>, statement: u64 },
    /// Rows computed already; the summary is kept for the end.
    Buffered {
        rows: Option<Box<QueryResult>>,
        summary: Box<QueryResult>,
    },
    /// The summary of a finished stream.
    Done(Box<QueryResult>),
}

impl QueryStream {
    /// The names of the result's columns.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Whether every row has been pulled.
    pub fn is_finished(&self) -> bool {
        matches!(self.source, Source::Done(_))
    }

    /// Update counters and, for EXPLAIN and PROFILE, the plan text (PROFILE's once
    /// finished); no rows.
    pub fn summary(&self) -> QueryResult {
        match &self.source {
            Source::Own { cursor, .. } | Source::Connection { cursor, .. } => cursor.summary(),
            Source::Buffered { summary, .. } | Source::Done(summary) => (**summary).clone(),
        }
    }
}

/// The rows of a streamed statement as an iterator (see [`Connection::stream`]).
pub struct Rows<'c> {
    connection: &'c mut Connection,
    stream: QueryStream,
    pending: std::vec::IntoIter<Vec<plexus_exec::Value>>,
}

impl Rows<'_> {
    pub fn columns(&self) -> &[String] {
        self.stream.columns()
    }

    /// Update counters and plan text once the rows are consumed (see [`QueryStream::summary`]).
    pub fn summary(&self) -> QueryResult {
        self.stream.summary()
    }
}

impl Iterator for Rows<'_> {
    type Item = Result<Vec<plexus_exec::Value>, QueryError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(row) = self.pending.next() {
                return Some(Ok(row));
            }
            match self.connection.pull(&mut self.stream) {
                Ok(Some(chunk)) => self.pending = chunk.rows.into_iter(),
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

fn transaction_error(code: &'static str, message: &str) -> QueryError {
    QueryError::runtime(ErrorClass::DatabaseError, code, message)
}

impl Connection {
    pub(crate) fn new(
        manager: Arc<TxnManager>,
        settings: Arc<Settings>,
        import_dir: Option<Arc<ImportDir>>,
        export_dir: Option<Arc<ExportDir>>,
        followers: Arc<crate::follower_status::FollowerStatuses>,
        metrics: Arc<Metrics>,
        attached: Arc<AttachedGraphs>,
    ) -> Self {
        let (session, parallel) = Self::session_defaults(&settings);
        let mut connection = Connection {
            manager,
            tx: None,
            statements_in_tx: 0,
            procedures: ProcedureRegistry::new(),
            parallel,
            settings,
            session,
            transaction_statements: None,
            import_dir,
            export_dir,
            open: OpenConnection::new(metrics),
            interrupt: plexus_exec::Interrupt::new(),
            attached,
            confined: false,
        };
        let built_in = crate::procedures::algo_procedures()
            .into_iter()
            .chain(crate::catalog_procedures::catalog_procedures())
            .chain([crate::follower_status::status_procedure(followers)]);
        for procedure in built_in {
            connection.register_procedure(procedure);
        }
        connection.refresh_settings_procedure();
        connection
    }

    fn session_defaults(settings: &Settings) -> (Session, ParallelConfig) {
        let source = |name| {
            settings
                .source(name)
                .cloned()
                .unwrap_or(SettingSource::Default)
        };
        let session = Session {
            isolation: settings.config().default_isolation,
            isolation_source: source("default_isolation"),
            next_isolation: None,
            query_threads_source: source("default_query_threads"),
            jit: settings.default_jit(),
            jit_source: source("default_jit"),
        };
        let parallel = ParallelConfig {
            workers: settings.default_query_threads(),
            ..ParallelConfig::serial()
        };
        (session, parallel)
    }

    /// Starts a transaction at the level `SET NEXT` chose, else at the session's level.
    fn new_transaction(&mut self) -> Transaction {
        let level = self
            .session
            .next_isolation
            .take()
            .unwrap_or(self.session.isolation);
        plexus_txn::begin(&self.manager, level)
    }

    /// Opens an explicit transaction (as `BEGIN` does) at `level`, whatever the session's
    /// level is; an error if one is open already.
    pub fn begin_with(&mut self, level: IsolationLevel) -> Result<(), QueryError> {
        self.check_no_transaction()?;
        self.session.next_isolation = None;
        self.tx = Some(plexus_txn::begin(&self.manager, level));
        self.statements_in_tx = 0;
        Ok(())
    }

    /// The isolation level of the session's transactions (see SESSION in the module docs).
    pub fn isolation(&self) -> IsolationLevel {
        self.session.isolation
    }

    /// `SET SESSION TRANSACTION ISOLATION LEVEL`: the level of every later transaction.
    pub fn set_isolation(&mut self, level: IsolationLevel) {
        self.session.isolation = level;
        self.session.isolation_source = SettingSource::Session;
        self.refresh_settings_procedure();
    }

    /// `SET NEXT TRANSACTION ISOLATION LEVEL`: the level of the next transaction only (the
    /// next `BEGIN` or auto-commit statement); an error while a transaction is open.
    pub fn set_next_isolation(&mut self, level: IsolationLevel) -> Result<(), QueryError> {
        if self.tx.is_some() {
            return Err(session_error(
                "InvalidInTransaction",
                "SET NEXT TRANSACTION ISOLATION LEVEL inside an open transaction: its level \
                 is fixed; set it before BEGIN",
                None,
            ));
        }
        self.session.next_isolation = Some(level);
        Ok(())
    }

    /// The level the open transaction runs at, or else the one the next transaction gets.
    pub fn effective_isolation(&self) -> IsolationLevel {
        match &self.tx {
            Some(tx) => tx.isolation(),
            None => self
                .session
                .next_isolation
                .unwrap_or(self.session.isolation),
        }
    }

    /// Returns every session setting to its server-wide default (an open transaction is not
    /// touched). Bolt's RESET and LOGOFF call it.
    pub fn reset_session(&mut self) {
        let defaults = Self::session_defaults(&self.settings);
        if (&self.session, &self.parallel) != (&defaults.0, &defaults.1) {
            // `db.settings` renders every setting: only when something changed (a server
            // resets its pooled connections after every request).
            (self.session, self.parallel) = defaults;
            self.refresh_settings_procedure();
        }
    }

    /// `SET SESSION name = value` for a per-session setting.
    pub fn set_session_setting(&mut self, name: &str, value: &str) -> Result<(), QueryError> {
        self.set_session_setting_at(name, value, None)
    }

    fn set_session_setting_at(
        &mut self,
        name: &str,
        value: &str,
        span: Option<Span>,
    ) -> Result<(), QueryError> {
        let bad_value = |message: String| session_error("InvalidSettingValue", &message, span);
        match name {
            "transaction_isolation" => {
                let level = value
                    .parse()
                    .map_err(|e: String| bad_value(format!("setting '{name}': {e}")))?;
                self.set_isolation(level);
            }
            "query_threads" => {
                let threads = settings::parse_query_threads(value)
                    .map_err(|e| bad_value(format!("setting '{name}': {e}")))?;
                self.parallel.workers = settings::resolve_query_threads(threads);
                self.session.query_threads_source = SettingSource::Session;
                self.refresh_settings_procedure();
            }
            "jit" => {
                let mode = value
                    .parse()
                    .map_err(|e: String| bad_value(format!("setting '{name}': {e}")))?;
                self.session.jit = mode;
                self.session.jit_source = SettingSource::Session;
                self.refresh_settings_procedure();
            }
            _ if self.settings.get(name).is_some() => {
                return Err(session_error(
                    "ServerSettingReadOnly",
                    &format!(
                        "setting '{name}' is server-wide: it is fixed at start-up (plexus.toml, \
                         --set {name}=… or a keyword argument), not per session"
                    ),
                    span,
                ));
            }
            _ => {
                let message = settings::unknown_setting(name);
                return Err(session_error("UnknownSetting", &message, span));
            }
        }
        Ok(())
    }

    /// Every setting: the server's, then this session's.
    pub fn settings(&self) -> Vec<SettingRow> {
        let mut rows = self.settings.rows();
        for (name, description, _) in SESSION_SETTINGS {
            let (value, source) = match *name {
                "transaction_isolation" => (
                    self.session.isolation.name().to_string(),
                    &self.session.isolation_source,
                ),
                "jit" => (
                    self.session.jit.name().to_string(),
                    &self.session.jit_source,
                ),
                _ => (
                    self.parallel.workers.to_string(),
                    &self.session.query_threads_source,
                ),
            };
            rows.push(SettingRow {
                name: name.to_string(),
                value,
                scope: Scope::Session,
                source: source.to_string(),
                description: description.to_string(),
            });
        }
        rows
    }

    fn settings_result(&self) -> QueryResult {
        QueryResult {
            columns: SETTINGS_COLUMNS.map(String::from).to_vec(),
            rows: self
                .settings()
                .into_iter()
                .map(|row| {
                    [
                        row.name,
                        row.value,
                        row.scope.name().to_string(),
                        row.source,
                        row.description,
                    ]
                    .iter()
                    .map(|text| CypherValue::string(text))
                    .collect()
                })
                .collect(),
            ..QueryResult::default()
        }
    }

    /// `CALL db.settings()` lists what `SHOW SETTINGS` does: a table procedure, registered
    /// again whenever a session setting changes.
    fn refresh_settings_procedure(&mut self) {
        let rows = self.settings_result().rows;
        self.register_procedure(Procedure {
            name: "db.settings".into(),
            inputs: Vec::new(),
            input_types: Vec::new(),
            defaults: Vec::new(),
            outputs: SETTINGS_COLUMNS.map(String::from).to_vec(),
            rows,
            compute: None,
        });
    }

    fn session_command(&mut self, command: SessionCommand) -> Result<QueryStream, QueryError> {
        let level = |name| match name {
            IsolationName::Snapshot => IsolationLevel::Snapshot,
            IsolationName::Serializable => IsolationLevel::Serializable,
        };
        match command {
            SessionCommand::SetIsolation {
                scope,
                level: name,
                span,
            } => match scope {
                IsolationScope::Session => self.set_isolation(level(name)),
                IsolationScope::Next => {
                    self.set_next_isolation(level(name))
                        .map_err(|e| QueryError {
                            span: Some(span),
                            ..e
                        })?
                }
                IsolationScope::Global => {
                    return Err(session_error(
                        "ServerSettingReadOnly",
                        "the server-wide default isolation level is fixed at start-up \
                         (default_isolation in plexus.toml, --default-isolation or --set); \
                         use SET SESSION or SET NEXT TRANSACTION ISOLATION LEVEL",
                        Some(span),
                    ));
                }
            },
            SessionCommand::SetSetting {
                name,
                value: SettingValue { text, span },
            } => {
                let at = Some(name.span.to(span));
                self.set_session_setting_at(&name.name, &text, at)?;
            }
            SessionCommand::ShowIsolation => {
                let result = QueryResult {
                    columns: vec!["isolation_level".into()],
                    rows: vec![vec![CypherValue::string(self.effective_isolation().name())]],
                    ..QueryResult::default()
                };
                return Ok(rows_stream(result));
            }
            SessionCommand::ShowSettings => return Ok(rows_stream(self.settings_result())),
            SessionCommand::ShowFunctions { user_defined } => {
                return Ok(rows_stream(crate::routines::functions(user_defined)));
            }
            SessionCommand::ShowProcedures => {
                return Ok(rows_stream(crate::routines::procedures(&self.procedures)));
            }
        }
        Ok(finished(QueryResult::default()))
    }

    fn check_no_transaction(&self) -> Result<(), QueryError> {
        if self.tx.is_some() {
            return Err(transaction_error(
                "TransactionAlreadyOpen",
                "a transaction is already open on this connection",
            ));
        }
        Ok(())
    }

    /// Whether an explicit transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.tx.is_some()
    }

    /// Makes a procedure callable with `CALL` on this connection.
    pub fn register_procedure(&mut self, procedure: Procedure) {
        self.procedures
            .insert(procedure.name.to_ascii_lowercase(), Arc::new(procedure));
    }

    /// Runs one statement (or `BEGIN` / `COMMIT` / `ROLLBACK`) with `params` and returns
    /// all its rows.
    pub fn execute(&mut self, query: &str, params: &Params) -> Result<QueryResult, QueryError> {
        let mut stream = self.run(query, params)?;
        let mut result = self.collect(&mut stream)?;
        let summary = stream.summary();
        result.stats = summary.stats;
        result.plan = summary.plan;
        Ok(result)
    }

    /// Runs one statement and returns its rows as an iterator, pulled as it is consumed.
    pub fn stream(&mut self, query: &str, params: &Params) -> Result<Rows<'_>, QueryError> {
        let stream = self.run(query, params)?;
        Ok(Rows {
            connection: self,
            stream,
            pending: Vec::new().into_iter(),
        })
    }

    /// How this connection's read-only statements use threads: worker threads per parallel
    /// pipeline (below 2: everything serial), the estimated scan size from which a pipeline
    /// runs in parallel, and the vertices per morsel. The default is
    /// [`ParallelConfig::from_env`]: as many workers as cores, or `PLEXUS_QUERY_THREADS`.
    /// Applies to statements started afterwards.
    pub fn set_parallel(&mut self, config: ParallelConfig) {
        self.parallel = config;
    }

    /// See [`Connection::set_parallel`].
    pub fn parallel(&self) -> &ParallelConfig {
        &self.parallel
    }

    /// The flag the statements `run` starts from now on look at: raising it (from any
    /// thread) stops the running one within a batch of work, failing its next `pull` with
    /// [`crate::INTERRUPTED`] and rolling its transaction back (an explicit one too, as
    /// after any failed statement in it). A server gives each
    /// request a fresh one, so a late raise never reaches the connection's next user.
    pub fn set_interrupt(&mut self, interrupt: plexus_exec::Interrupt) {
        self.interrupt = interrupt;
    }

    /// Confines the files statements name to the database's directories: `ATTACH` then
    /// reads graphs only under the import directory, as `LOAD CSV` and `COPY` always do. A
    /// server calls it for every connection it opens for a remote client.
    pub fn confine_files(&mut self) {
        self.confined = true;
    }

    /// Starts one statement (or carries out `BEGIN` / `COMMIT` / `ROLLBACK`); its rows come
    /// from [`Connection::pull`]. Parse and planning errors are reported here, errors while
    /// running by `pull` (statements that may write run here, see module docs).
    pub fn run(&mut self, query: &str, params: &Params) -> Result<QueryStream, QueryError> {
        let started = Instant::now();
        let parsed =
            guarded(|| plexus_cypher::parse_command(query).map_err(plexus_exec::syntax_error));
        let statement = match self.fail_in_tx_if_open(parsed)? {
            Command::Transaction(command) => {
                self.transaction_command(command)?;
                return Ok(finished(QueryResult::default()));
            }
            Command::Session(command) => return self.session_command(command),
            Command::Schema(SchemaCommand::ShowIndexes) => return self.show_indexes(),
            Command::Schema(command) => {
                let in_tx = self.tx.is_some();
                return run_index_ddl(&self.manager, command, in_tx).map(finished);
            }
            Command::Table(command) => {
                let in_tx = self.tx.is_some();
                return run_table_command(&self.manager, command, in_tx).map(rows_stream);
            }
            Command::Copy(copy) => {
                let dirs = (self.import_dir.as_deref(), self.export_dir.as_deref());
                let in_tx = self.tx.is_some();
                return run_copy(&self.manager, dirs, copy, in_tx).map(rows_stream);
            }
            Command::Graph(command) => return self.graph_command(command).map(rows_stream),
            Command::Query(statement) => statement,
        };
        // `USE name`: the statement reads the attached graph in a read-only transaction of
        // its own, also inside an explicit transaction (drivers wrap every statement in one),
        // which it neither reads nor joins: the attached graph never changes.
        let graph = match &statement.graph {
            Some(name) => Some(self.fail_in_tx_if_open(self.attached.get(&name.name))?),
            None => None,
        };
        // O(tables), never a scan: see plexus_storage::stats. An attached graph has none.
        let stats = graph.is_none().then(|| self.manager.statistics());
        let opened = guarded(|| {
            Cursor::open_statement(
                &statement,
                query,
                params,
                &self.procedures,
                stats.as_ref(),
                &self.parallel,
            )
            .map(|cursor| {
                let limit = usize::try_from(self.settings.var_length_path_limit());
                cursor
                    .with_import_dir(self.import_dir.clone())
                    .with_path_limit(limit.unwrap_or(usize::MAX))
                    .with_jit(self.session.jit)
                    .with_interrupt(self.interrupt.clone())
            })
            .and_then(|cursor| cursor.with_implicit_transaction(self.tx.is_none()))
        });
        let cursor = self.fail_in_tx_if_open(opened)?;
        if cursor.is_finished() {
            return Ok(finished(cursor.summary())); // EXPLAIN: a plan, no rows
        }
        let may_write = cursor.may_write();
        if let (Some(graph), true) = (&graph, cursor.updates()) {
            let refused = crate::attached::graph_error(
                ErrorClass::SemanticError,
                "GraphIsReadOnly",
                format!(
                    "graph '{}' is attached read-only: a statement on it cannot write",
                    graph.name()
                ),
            );
            return self.fail_in_tx_if_open(Err(refused));
        }
        let columns = cursor.columns().to_vec();
        let source = if let Some(graph) = graph {
            Source::Own {
                cursor: Box::new(cursor),
                tx: Box::new(plexus_txn::begin_external(&self.manager, graph)),
            }
        } else if self.tx.is_some() {
            self.statements_in_tx += 1;
            Source::Connection {
                cursor: Box::new(cursor),
                statement: self.statements_in_tx,
            }
        } else {
            Source::Own {
                cursor: Box::new(cursor),
                tx: Box::new(self.new_transaction()),
            }
        };
        let mut stream = QueryStream {
            columns,
            source,
            started,
        };
        if may_write {
            // Runs to the end now (and commits in auto-commit mode): see module docs.
            self.buffer(&mut stream)?;
        }
        Ok(stream)
    }

    /// The next batch of `stream`'s rows (with the nodes and relationships they mention), or
    /// `None` when it is finished.
    pub fn pull(&mut self, stream: &mut QueryStream) -> Result<Option<QueryResult>, QueryError> {
        let (chunk, finished_summary) = match &mut stream.source {
            Source::Done(_) => return Ok(None),
            Source::Buffered { rows, summary } => match rows.take() {
                Some(rows) => return Ok(Some(*rows)),
                None => {
                    // Its statement's latency was observed when it was buffered.
                    stream.source = Source::Done(summary.clone());
                    return Ok(None);
                }
            },
            Source::Own { cursor, tx } => {
                let pulled = guarded(|| cursor.next_chunk(tx));
                if !cursor.is_finished() {
                    return pulled;
                }
                let summary = cursor.summary();
                let Source::Own { tx, .. } =
                    std::mem::replace(&mut stream.source, Source::Done(Box::new(summary)))
                else {
                    unreachable!("matched Source::Own above")
                };
                // A failed pull drops `tx` here, which rolls it back.
                let chunk = pulled.inspect_err(|_| self.open.0.abort(AbortKind::Error))?;
                let committed = tx.commit().map_err(QueryError::from);
                self.open.0.ended(&committed);
                self.open.0.statement(stream.started.elapsed());
                committed?;
                return Ok(chunk);
            }
            Source::Connection { cursor, statement } => {
                let statement = *statement;
                let chunk = self.pull_in_tx(cursor, statement);
                if !cursor.is_finished() {
                    return chunk;
                }
                (chunk?, Box::new(cursor.summary()))
            }
        };
        self.open.0.statement(stream.started.elapsed());
        stream.source = Source::Done(finished_summary);
        Ok(chunk)
    }

    /// Pulls the rest of `stream` into memory, so that later statements of the transaction
    /// cannot make it stale; its rows are then handed out by `pull` as before.
    pub fn buffer(&mut self, stream: &mut QueryStream) -> Result<(), QueryError> {
        if matches!(stream.source, Source::Buffered { .. } | Source::Done(_)) {
            return Ok(());
        }
        let rows = self.collect(stream)?;
        stream.source = Source::Buffered {
            rows: Some(Box::new(rows)),
            summary: Box::new(stream.summary()),
        };
        Ok(())
    }

    /// Every remaining row of `stream`, in one result.
    fn collect(&mut self, stream: &mut QueryStream) -> Result<QueryResult, QueryError> {
        let mut rows = QueryResult {
            columns: stream.columns.clone(),
            ..QueryResult::default()
        };
        while let Some(chunk) = self.pull(stream)? {
            rows.append(chunk)?;
        }
        Ok(rows)
    }

    fn pull_in_tx(
        &mut self,
        cursor: &mut Cursor,
        statement: u64,
    ) -> Result<Option<QueryResult>, QueryError> {
        if self.tx.is_none() {
            return Err(transaction_error(
                "TransactionEnded",
                "the transaction of this result has ended; pull results before COMMIT or ROLLBACK",
            ));
        }
        if statement != self.statements_in_tx {
            return Err(transaction_error(
                "ResultConsumed",
                "a later statement ran in this transaction; consume (or buffer) a result \
                 before running the next statement",
            ));
        }
        let pulled = match self.tx.as_mut() {
            Some(tx) => guarded(|| cursor.next_chunk(tx)),
            None => unreachable!("checked above"),
        };
        self.fail_in_tx(pulled)
    }

    /// Like [`Connection::fail_in_tx`] in an explicit transaction; `result` as it is outside.
    fn fail_in_tx_if_open<T>(&mut self, result: Result<T, QueryError>) -> Result<T, QueryError> {
        if self.tx.is_some() {
            self.fail_in_tx(result)
        } else {
            result
        }
    }

    /// `ATTACH`, `DETACH GRAPH`, `SHOW GRAPHS` (see `crate::attached`).
    fn graph_command(&mut self, command: GraphCommand) -> Result<QueryResult, QueryError> {
        match command {
            GraphCommand::Show => Ok(self.attached.show()),
            GraphCommand::Detach { name } => self.attached.detach(&name.name),
            GraphCommand::Attach { format, file, name } => {
                let (path, shown) = match (self.confined, self.import_dir.as_deref()) {
                    (false, _) => (std::path::PathBuf::from(&file.value), file.value.clone()),
                    (true, Some(dir)) => {
                        let resolved = dir.resolve(&file.value).map_err(|e| {
                            crate::attached::graph_error(
                                ErrorClass::ExternalResourceFailed,
                                "FileLocationRefused",
                                format!("ATTACH: {e}"),
                            )
                        })?;
                        (resolved.path, resolved.name)
                    }
                    (true, None) => {
                        return Err(crate::attached::graph_error(
                            ErrorClass::ExternalResourceFailed,
                            "NoImportDirectory",
                            "ATTACH reads graphs from the import directory, and this server has \
                             none (set import_directory)"
                                .to_string(),
                        ));
                    }
                };
                let hidden = (self.confined)
                    .then(|| self.import_dir.as_deref().map(ImportDir::root))
                    .flatten();
                let budget = usize::try_from(self.settings.attached_graph_cache_bytes());
                let limits = (hidden, budget.unwrap_or(usize::MAX));
                (self.attached).attach(&format.name, (&path, shown), &name.name, limits)
            }
        }
    }

    /// `SHOW INDEXES`: the rows of `CALL db.indexes()`, at the open transaction's snapshot or
    /// a fresh one.
    fn show_indexes(&mut self) -> Result<QueryStream, QueryError> {
        let rows = match self.tx.as_mut() {
            Some(tx) => index_rows(tx),
            None => index_rows(&mut self.new_transaction()),
        };
        Ok(rows_stream(QueryResult {
            columns: INDEX_COLUMNS.map(String::from).to_vec(),
            rows,
            ..QueryResult::default()
        }))
    }

    /// Rolls the explicit transaction back if `result` is an error, and says so.
    fn fail_in_tx<T>(&mut self, result: Result<T, QueryError>) -> Result<T, QueryError> {
        result.map_err(|mut error| {
            if let Some(tx) = self.tx.take() {
                tx.rollback();
                self.open.0.abort(AbortKind::Error);
            }
            error.message.push_str(" (the transaction was rolled back)");
            error
        })
    }

    /// `BEGIN`: opens an explicit transaction at the level `SET NEXT` chose, else at the
    /// session's level; an error if one is open already.
    pub fn begin(&mut self) -> Result<(), QueryError> {
        self.check_no_transaction()?;
        self.tx = Some(self.new_transaction());
        self.statements_in_tx = 0;
        Ok(())
    }

    /// `COMMIT`: commits the explicit transaction (a conflict is a retryable error, and the
    /// transaction is gone either way).
    pub fn commit(&mut self) -> Result<(), QueryError> {
        match self.tx.take() {
            Some(tx) => {
                let committed = tx.commit().map(drop).map_err(QueryError::from);
                self.open.0.ended(&committed);
                committed
            }
            None => Err(transaction_error(
                "NoOpenTransaction",
                "COMMIT without BEGIN",
            )),
        }
    }

    /// `ROLLBACK`: rolls the explicit transaction back.
    pub fn rollback(&mut self) -> Result<(), QueryError> {
        match self.tx.take() {
            Some(tx) => {
                tx.rollback();
                self.open.0.abort(AbortKind::Rollback);
                Ok(())
            }
            None => Err(transaction_error(
                "NoOpenTransaction",
                "ROLLBACK without BEGIN",
            )),
        }
    }

    /// Makes `BEGIN`, `COMMIT` and `ROLLBACK` as statement text an error (with `message`), for
    /// a front end whose protocol has transaction messages of its own (Bolt): statements
    /// would otherwise change the transaction behind the protocol's state machine.
    pub fn refuse_transaction_statements(&mut self, message: &'static str) {
        self.transaction_statements = Some(message);
    }

    fn transaction_command(&mut self, command: TransactionCommand) -> Result<(), QueryError> {
        if let Some(message) = self.transaction_statements {
            return Err(QueryError::runtime(
                ErrorClass::SyntaxError,
                "TransactionStatementRefused",
                message,
            ));
        }
        match command {
            TransactionCommand::Begin => self.begin(),
            TransactionCommand::Commit => self.commit(),
            TransactionCommand::Rollback => self.rollback(),
        }
    }
}

fn session_error(code: &'static str, message: &str, span: Option<Span>) -> QueryError {
    QueryError {
        span,
        ..QueryError::runtime(ErrorClass::ArgumentError, code, message)
    }
}

/// A stream of rows computed already (session commands that answer rows).
fn rows_stream(result: QueryResult) -> QueryStream {
    QueryStream {
        started: Instant::now(),
        columns: result.columns.clone(),
        source: Source::Buffered {
            summary: Box::new(QueryResult {
                columns: result.columns.clone(),
                stats: result.stats.clone(),
                plan: result.plan.clone(),
                ..QueryResult::default()
            }),
            rows: Some(Box::new(result)),
        },
    }
}

fn finished(summary: QueryResult) -> QueryStream {
    QueryStream {
        started: Instant::now(),
        columns: summary.columns.clone(),
        source: Source::Done(Box::new(summary)),
    }
}

/// Runs a step of a statement, turning a panic inside the engine (a bug, never expected) into
/// an `InternalError` so that the caller's process survives; the transaction is then rolled
/// back by the caller like after any other error.
fn guarded<T>(step: impl FnOnce() -> Result<T, QueryError>) -> Result<T, QueryError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).unwrap_or_else(|_| {
        Err(transaction_error(
            "InternalError",
            "internal error while executing the statement (please report it); nothing was committed",
        ))
    })
}
