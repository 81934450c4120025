//! `plexus serve`: the Bolt server on a database directory (see `docs/bolt.md`).
//!
//! Authentication must be chosen explicitly: one or more `--user NAME:PASSWORD`, or
//! `--no-auth`. With neither the command refuses to start (exit 2) rather than silently
//! serving an open database.
//!
//! Settings come from `plexus.toml` in the database directory, overridden by `--set
//! NAME=VALUE` and the named flags (`settings_args`); they are fixed for the server's life
//! (clients change only their own session settings). The listen address and the user names
//! are listed by `SHOW SETTINGS` too, never the passwords.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use plexus::settings::{REDACTED, Source};
use plexus_bolt::{Auth, ServerConfig, User};
use plexus_cli::settings_args::SettingsArgs;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// The database directory (created if absent).
    db: PathBuf,
    /// Address to listen on; port 0 picks a free port. The bound address is printed on
    /// stdout as `Bolt server listening on bolt://ADDR`.
    #[arg(long, value_name = "ADDR", default_value = plexus_bolt::DEFAULT_LISTEN)]
    bolt: SocketAddr,
    /// Accept clients without checking credentials.
    #[arg(long, conflicts_with = "user")]
    no_auth: bool,
    /// A user for basic authentication (repeatable).
    #[arg(long, value_name = "NAME:PASSWORD", value_parser = User::parse)]
    user: Vec<User>,
    #[command(flatten)]
    settings: SettingsArgs,
}

/// Runs the server until ctrl-c or SIGTERM.
pub fn run(args: ServeArgs) -> ExitCode {
    let auth = if args.no_auth {
        Auth::None
    } else if args.user.is_empty() {
        eprintln!(
            "plexus serve: no users given: pass --user NAME:PASSWORD (repeatable), \
             or --no-auth to accept clients without credentials"
        );
        return ExitCode::from(2);
    } else {
        Auth::Basic(args.user)
    };
    let mut settings = match args.settings.load(&args.db) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("plexus serve: {e}");
            return ExitCode::from(2);
        }
    };
    settings.add_front_end(
        "bolt_listen_address",
        &args.bolt.to_string(),
        "the address plexus serve listens on (--bolt)",
        false,
        Source::CommandLine,
    );
    let users = match &auth {
        Auth::None => "none (--no-auth)".to_string(),
        Auth::Basic(users) => users
            .iter()
            .map(|user| format!("{}:{REDACTED}", user.name))
            .collect::<Vec<_>>()
            .join(", "),
    };
    settings.add_front_end(
        "bolt_users",
        &users,
        "the users basic authentication accepts (--user; passwords are never shown)",
        false,
        Source::CommandLine,
    );
    let db = match plexus::Database::open_settings(&args.db, settings) {
        Ok(db) => Arc::new(db),
        Err(e) => {
            eprintln!("plexus: cannot open {}: {e}", args.db.display());
            return ExitCode::FAILURE;
        }
    };
    match plexus_bolt::serve(db, ServerConfig::new(args.bolt, auth)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("plexus: {e}");
            ExitCode::FAILURE
        }
    }
}
