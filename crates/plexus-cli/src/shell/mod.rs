//! `plexus shell <db>`: an interactive Cypher shell, and a script runner when stdin is not a
//! terminal.
//!
//! INPUT
//! =====
//! ```text
//!   terminal: rustyline (editing, history) ─┐            ┌─▶ ':command' line ─▶ Session::command
//!   pipe:     stdin, line by line  ─────────┴─▶ line ────┤
//!                                                        └─▶ Splitter ─▶ statements ─▶ Connection
//! ```
//! Statements end with `;` and may span lines; a `;` inside a string, a backquoted name or a
//! comment does not end one (see [`split`]). A line starting with `:` when no statement is
//! pending is a shell command: `:help`, `:schema`, `:timing`, `:rows N`, `:explain <query>`,
//! `:isolation [snapshot|serializable]` (the session's level, as `SET SESSION TRANSACTION
//! ISOLATION LEVEL`), `:settings` (as `SHOW SETTINGS`), `:quit` / `:exit` (or end of input). `BEGIN` / `COMMIT` / `ROLLBACK` are statements like
//! any other (the connection's commands); the prompt shows `plexus(tx)>` while a transaction
//! is open.
//!
//! ERRORS
//! ======
//! Interactive: the error is printed and the shell goes on. A statement that fails inside an
//! explicit transaction makes the *engine* roll the whole transaction back (no savepoints);
//! its message says so, and the prompt drops the `(tx)`.
//!
//! Script (stdin not a terminal): the first error stops the run. Its message goes to stderr
//! with the position relative to the script (`at line 7, column 12`) and the offending line
//! with a caret; nothing after it runs and the exit status is 1. An explicit transaction left
//! open at the end of a script is rolled back, with a warning. A last statement without `;`
//! still runs. `--echo` prints each statement (after a prompt) before its result, so a run's
//! output reads like a session (the transcript tests use it).
//!
//! LIMITS
//! ======
//! - a statement longer than [`STATEMENT_MAX_BYTES`] is refused (its text is dropped);
//! - at most `:rows N` rows of a result are printed (default [`DEFAULT_MAX_ROWS`]), then
//!   `… N more rows` — the engine still materialises every row;
//! - history keeps the last [`HISTORY_MAX_ENTRIES`] statements, in `$HOME/.plexus_history`
//!   (no history file when `$HOME` is unset; a history that cannot be read or written is
//!   skipped silently — it never stops the shell).
//!
//! One process at a time may open a database; a second `plexus shell` on the same directory
//! fails with "database … is in use by another process".

pub mod split;
pub mod table;

use std::fmt;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use plexus::{Connection, Database, IsolationLevel, Params, QueryError, Schema};
use rustyline::error::ReadlineError;

use split::{Position, Splitter, Statement};

/// Longest statement accepted, in bytes of text.
pub const STATEMENT_MAX_BYTES: usize = 16 << 20;
/// Rows printed per result until `:rows` says otherwise.
pub const DEFAULT_MAX_ROWS: usize = 1_000;
/// Statements (and commands) kept in the history file.
pub const HISTORY_MAX_ENTRIES: usize = 1_000;
/// The history file's name, in `$HOME`.
const HISTORY_FILE: &str = ".plexus_history";

const PROMPT: &str = "plexus> ";
const PROMPT_IN_TRANSACTION: &str = "plexus(tx)> ";
const PROMPT_CONTINUE: &str = "     -> ";

const HELP: &str = "\
Statements end with ';' and may span lines. BEGIN, COMMIT and ROLLBACK control transactions.
Commands:
  :help               this text
  :schema             labels, vertex tables and edge tables
  :timing             toggle printing each statement's time
  :rows [N]           show or set how many rows of a result are printed
  :explain <query>    print the plan of a query without running it
  :isolation [LEVEL]  show or set this session's isolation level (snapshot, serializable)
  :settings           every setting, its value and where it came from (SHOW SETTINGS)
  :quit, :exit        leave (so does end of input, Ctrl-D)";

const COMMANDS: &str =
    ":help, :schema, :timing, :rows, :explain, :isolation, :settings, :quit, :exit";

/// What `plexus shell` was asked to do.
pub struct Options {
    /// The database directory (created if absent).
    pub db: PathBuf,
    /// Print each statement before its result (script mode).
    pub echo: bool,
    /// Settings the database opens with (`plexus.toml` and the command line's).
    pub settings: plexus::Settings,
}

/// Why a shell run failed. Statement errors in interactive mode are not failures.
#[derive(Debug)]
pub enum ShellError {
    /// Another process holds the database open.
    InUse { path: PathBuf },
    Open {
        path: PathBuf,
        source: plexus::Error,
    },
    /// Reading input or writing output failed.
    Io(std::io::Error),
    /// A script stopped at its first error; the text says which and where.
    Script(String),
    /// The database could not be closed cleanly (its last writes may not be durable).
    Close(plexus::Error),
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShellError::InUse { path } => write!(
                f,
                "database {} is in use by another process",
                path.display()
            ),
            ShellError::Open { path, source } => {
                write!(f, "cannot open database {}: {source}", path.display())
            }
            ShellError::Io(e) => write!(f, "input/output error: {e}"),
            ShellError::Script(text) => f.write_str(text),
            ShellError::Close(e) => write!(f, "closing the database failed: {e}"),
        }
    }
}

impl std::error::Error for ShellError {}

impl From<std::io::Error> for ShellError {
    fn from(e: std::io::Error) -> Self {
        ShellError::Io(e)
    }
}

/// Opens the database and runs the shell: interactive on a terminal, else a script read from
/// stdin (see the module doc).
pub fn run(options: &Options) -> Result<(), ShellError> {
    let db =
        Database::open_settings(&options.db, options.settings.clone()).map_err(|e| match e {
            plexus::Error::AlreadyOpen { .. } => ShellError::InUse {
                path: options.db.clone(),
            },
            source => ShellError::Open {
                path: options.db.clone(),
                source,
            },
        })?;
    // `CALL db.export.graphar(...)` writes under the export directory (docs/graphar.md).
    plexus_graphar::register_procedures(&db);
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut session = Session {
        conn: db.connect(),
        db: &db,
        script: !interactive,
        echo: options.echo,
        timing: false,
        max_rows: DEFAULT_MAX_ROWS,
        out: std::io::stdout().lock(),
    };
    let result = if interactive {
        writeln!(
            session.out,
            "Plexus shell on {}. Statements end with ';'; :help lists the commands.",
            options.db.display()
        )?;
        session.drive(&mut Terminal::new()?)
    } else {
        session.drive(&mut Script(stdin.lock()))
    };
    drop(session);
    let closed = db.close().map_err(ShellError::Close);
    result.and(closed)
}

/// One line of input, or why there is none.
enum Read {
    Line(String),
    /// Ctrl-C: drop the statement being typed.
    Interrupted,
    Eof,
}

/// Where lines come from.
trait Input {
    fn read(&mut self, prompt: &str) -> Result<Read, ShellError>;
    /// Adds a complete statement or command to the history.
    fn remember(&mut self, entry: &str);
}

/// A script on stdin.
struct Script<R>(R);

impl<R: BufRead> Input for Script<R> {
    fn read(&mut self, _prompt: &str) -> Result<Read, ShellError> {
        let mut line = String::new();
        if self.0.read_line(&mut line)? == 0 {
            return Ok(Read::Eof);
        }
        let end = line.trim_end_matches(['\n', '\r']).len();
        line.truncate(end);
        Ok(Read::Line(line))
    }

    fn remember(&mut self, _entry: &str) {}
}

/// A terminal, with line editing and a history file.
struct Terminal {
    editor: rustyline::DefaultEditor,
    history: Option<PathBuf>,
}

impl Terminal {
    fn new() -> Result<Terminal, ShellError> {
        let readline_error = |e: ReadlineError| ShellError::Io(std::io::Error::other(e));
        let config = rustyline::Config::builder()
            .max_history_size(HISTORY_MAX_ENTRIES)
            .map_err(readline_error)?
            .auto_add_history(false)
            .build();
        let mut editor = rustyline::DefaultEditor::with_config(config).map_err(readline_error)?;
        let history = std::env::var_os("HOME").map(|home| Path::new(&home).join(HISTORY_FILE));
        if let Some(path) = &history {
            // A missing or unreadable history is not worth refusing to start over.
            let _ = editor.load_history(path);
        }
        Ok(Terminal { editor, history })
    }
}

impl Input for Terminal {
    fn read(&mut self, prompt: &str) -> Result<Read, ShellError> {
        match self.editor.readline(prompt) {
            Ok(line) => Ok(Read::Line(line)),
            Err(ReadlineError::Interrupted) => Ok(Read::Interrupted),
            Err(ReadlineError::Eof) => Ok(Read::Eof),
            Err(e) => Err(ShellError::Io(std::io::Error::other(e))),
        }
    }

    fn remember(&mut self, entry: &str) {
        let _ = self.editor.add_history_entry(entry);
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Some(path) = &self.history {
            let _ = self.editor.save_history(path);
        }
    }
}

/// What to do after a command.
enum Flow {
    Continue,
    Quit,
}

struct Session<'db, W> {
    db: &'db Database,
    conn: Connection,
    /// Script mode: stop at the first error, positions relative to the input.
    script: bool,
    echo: bool,
    timing: bool,
    max_rows: usize,
    out: W,
}

impl<W: Write> Session<'_, W> {
    /// Reads and runs everything `input` gives, until `:quit` or its end.
    fn drive(&mut self, input: &mut dyn Input) -> Result<(), ShellError> {
        let mut splitter = Splitter::default();
        loop {
            let prompt = if splitter.is_pending() {
                PROMPT_CONTINUE
            } else {
                self.prompt()
            };
            let line = match input.read(prompt)? {
                Read::Line(line) => line,
                Read::Interrupted => {
                    splitter.discard();
                    continue;
                }
                Read::Eof => break,
            };
            let command = line.trim();
            if !splitter.is_pending() && command.starts_with(':') {
                let indent = line[..line.len() - line.trim_start().len()].chars().count();
                let at = Position {
                    line: splitter.next_line(),
                    column: u32::try_from(indent + 1).unwrap_or(u32::MAX),
                };
                splitter.skip_line();
                input.remember(command);
                if let Flow::Quit = self.command(command, at)? {
                    return self.end();
                }
                continue;
            }
            for statement in splitter.push_line(&line) {
                input.remember(&format!("{};", statement.text));
                self.statement(&statement)?;
            }
            if splitter.pending_bytes() > STATEMENT_MAX_BYTES {
                splitter.discard();
                self.fail(format!(
                    "statement longer than {STATEMENT_MAX_BYTES} bytes; it was dropped"
                ))?;
            }
        }
        if let Some(statement) = splitter.finish() {
            self.statement(&statement)?;
        }
        self.end()
    }

    fn prompt(&self) -> &'static str {
        if self.conn.in_transaction() {
            PROMPT_IN_TRANSACTION
        } else {
            PROMPT
        }
    }

    /// Leaves: rolls back a transaction left open.
    fn end(&mut self) -> Result<(), ShellError> {
        if self.conn.in_transaction() {
            let _ = self.conn.execute("ROLLBACK", &Params::new());
            eprintln!("warning: the open transaction was rolled back (no COMMIT)");
        }
        self.out.flush()?;
        Ok(())
    }

    /// Runs one statement and prints its result or its error.
    fn statement(&mut self, statement: &Statement) -> Result<(), ShellError> {
        if self.echo {
            self.echo_text(&format!("{};", statement.text))?;
        }
        self.execute(&statement.text, statement.origin)
    }

    /// Runs `query`, whose first character is at `origin` in the input.
    fn execute(&mut self, query: &str, origin: Position) -> Result<(), ShellError> {
        let started = Instant::now();
        let result = self.conn.execute(query, &Params::new());
        let elapsed = self.timing.then(|| started.elapsed());
        match result {
            Ok(result) => {
                let text = table::render(&result, self.max_rows, elapsed);
                self.out.write_all(text.as_bytes())?;
                self.out.flush()?;
                Ok(())
            }
            Err(error) => {
                let origin = if self.script {
                    origin
                } else {
                    Position { line: 1, column: 1 }
                };
                self.fail(describe(&error, query, origin, self.script))
            }
        }
    }

    /// An error: ends a script, is printed interactively.
    fn fail(&mut self, message: String) -> Result<(), ShellError> {
        if self.script {
            return Err(ShellError::Script(message));
        }
        self.out.flush()?;
        eprintln!("error: {message}");
        Ok(())
    }

    fn echo_text(&mut self, text: &str) -> Result<(), ShellError> {
        for (i, line) in text.lines().enumerate() {
            let prompt = if i == 0 {
                self.prompt()
            } else {
                PROMPT_CONTINUE
            };
            writeln!(self.out, "{prompt}{line}")?;
        }
        Ok(())
    }

    fn print_row_limit(&mut self) -> Result<(), ShellError> {
        let rows = table::plural(self.max_rows as u64, "row");
        writeln!(self.out, "printing at most {} {rows}", self.max_rows)?;
        Ok(())
    }

    /// Runs a `:command` line found at `at`.
    fn command(&mut self, line: &str, at: Position) -> Result<Flow, ShellError> {
        if self.echo {
            self.echo_text(line)?;
        }
        let line = line.trim_end_matches(';').trim_end();
        let (name, argument) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(n, a)| (n, a.trim()));
        match (name, argument) {
            (":quit" | ":exit", "") => return Ok(Flow::Quit),
            (":help", "") => writeln!(self.out, "{HELP}")?,
            (":schema", "") => {
                let text = schema_text(&self.db.schema());
                self.out.write_all(text.as_bytes())?;
            }
            (":timing", "") => {
                self.timing = !self.timing;
                let state = if self.timing { "on" } else { "off" };
                writeln!(self.out, "timing {state}")?;
            }
            (":rows", "") => self.print_row_limit()?,
            (":rows", n) => match n.parse::<usize>() {
                Ok(n) if n > 0 => {
                    self.max_rows = n;
                    self.print_row_limit()?;
                }
                _ => self.fail(at_line(
                    at,
                    self.script,
                    format!(":rows needs a positive number, not '{n}'"),
                ))?,
            },
            (":isolation", "") => {
                let level = self.conn.isolation().name();
                writeln!(self.out, "isolation level {level}")?;
            }
            (":isolation", level) => match level.parse::<IsolationLevel>() {
                Ok(level) => {
                    self.conn.set_isolation(level);
                    writeln!(self.out, "isolation level {}", level.name())?;
                }
                Err(message) => self.fail(at_line(at, self.script, message))?,
            },
            (":settings", "") => self.execute("SHOW SETTINGS", at)?,
            (":explain", "") => {
                self.fail(at_line(at, self.script, ":explain needs a query".into()))?;
            }
            (":explain", query) => {
                const PREFIX: &str = "EXPLAIN ";
                // Where `PREFIX` would start if it replaced ":explain " (`line` starts at `at`,
                // `query` is its suffix), so positions in the query map back to the input.
                let before_query = line[..line.len() - query.len()].chars().count();
                let shift = u32::try_from(before_query.saturating_sub(PREFIX.len())).unwrap_or(0);
                let origin = Position {
                    line: at.line,
                    column: at.column.saturating_add(shift),
                };
                self.execute(&format!("{PREFIX}{query}"), origin)?;
            }
            _ => {
                let message = format!("unknown command {name}; the commands are {COMMANDS}");
                self.fail(at_line(at, self.script, message))?;
            }
        }
        self.out.flush()?;
        Ok(Flow::Continue)
    }
}

/// `message`, said to be at `at`'s line in a script.
fn at_line(at: Position, script: bool, message: String) -> String {
    if script {
        format!("line {}: {message}", at.line)
    } else {
        message
    }
}

/// A query error with its position relative to the input (the statement starts at `origin`)
/// and, when it has one, the offending line with a caret under the column.
fn describe(error: &QueryError, query: &str, origin: Position, script: bool) -> String {
    let head = format!("{} ({})", error.class.name(), error.code);
    let Some(span) = error.span else {
        return if script {
            format!(
                "{head} in the statement at line {}: {}",
                origin.line, error.message
            )
        } else {
            format!("{head}: {}", error.message)
        };
    };
    let at = origin.offset_by(span.line, span.column);
    let mut text = format!(
        "{head} at line {}, column {}: {}",
        at.line, at.column, error.message
    );
    if let Some(source) = query.lines().nth(span.line.saturating_sub(1) as usize) {
        // Keep tabs so that the caret lines up under them.
        let indent: String = source
            .chars()
            .take(span.column.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        text.push_str(&format!("\n  {source}\n  {indent}^"));
    }
    text
}

/// `:schema`'s text.
fn schema_text(schema: &Schema) -> String {
    let none = |empty: bool| if empty { " (none)" } else { "" };
    let properties = |props: &[plexus::PropertySchema], key: Option<&str>| {
        let list: Vec<String> = props
            .iter()
            .map(|p| {
                let pk = if key == Some(p.name.as_str()) {
                    " PRIMARY KEY"
                } else {
                    ""
                };
                format!("{} {}{pk}", p.name, p.data_type.name())
            })
            .collect();
        if list.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", list.join(", "))
        }
    };
    let implicit = |declared: bool| if declared { "" } else { " (implicit)" };
    let mut out = format!(
        "labels:{}{}\n",
        none(schema.labels.is_empty()),
        if schema.labels.is_empty() {
            String::new()
        } else {
            format!(" {}", schema.labels.join(", "))
        }
    );
    out.push_str(&format!(
        "vertex tables:{}\n",
        none(schema.vertex_tables.is_empty())
    ));
    for t in &schema.vertex_tables {
        out.push_str(&format!(
            "  {}{}{}\n",
            t.name,
            properties(&t.properties, t.primary_key.as_deref()),
            implicit(t.declared)
        ));
    }
    out.push_str(&format!(
        "edge tables:{}\n",
        none(schema.edge_tables.is_empty())
    ));
    for t in &schema.edge_tables {
        out.push_str(&format!(
            "  ({})-[:{}{}]->({}){}\n",
            t.from,
            t.edge_type,
            properties(&t.properties, None),
            t.to,
            implicit(t.declared)
        ));
    }
    out
}
