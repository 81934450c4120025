//! `plexus serve`: the Bolt server on a database directory (see `docs/bolt.md`), and with
//! `--http ADDR` the HTTP Query API and web console beside it (see `docs/http.md`).
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
use plexus_mirror::MirrorThread;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// The database directory (created if absent).
    db: PathBuf,
    /// Address to listen on; port 0 picks a free port. The bound address is printed on
    /// stdout as `Bolt server listening on bolt://ADDR`.
    #[arg(long, value_name = "ADDR", default_value = plexus_bolt::DEFAULT_LISTEN)]
    bolt: SocketAddr,
    /// Also serve the HTTP API and web console here (loopback unless told otherwise, e.g.
    /// `--http 127.0.0.1:7474`); the bound address is printed on stdout as `HTTP server
    /// listening on http://ADDR`. Same users as Bolt.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// A further `Host` header value the HTTP server accepts (repeatable; e.g. a DNS name
    /// a proxy forwards with). The bound address and, on loopback, localhost are accepted.
    #[arg(long, value_name = "HOST:PORT", requires = "http")]
    http_allow_host: Vec<String>,
    /// An origin allowed to call the HTTP API cross-origin (CORS; repeatable). Off unless
    /// given.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    http_cors_origin: Vec<String>,
    /// Accept clients without checking credentials.
    #[arg(long, conflicts_with = "user")]
    no_auth: bool,
    /// A user for basic authentication (repeatable).
    #[arg(long, value_name = "NAME:PASSWORD", value_parser = User::parse)]
    user: Vec<User>,
    /// Follow this PostgreSQL database while serving (docs/mirror.md): a `postgres://` URL
    /// or `key=value` string; the password may come from PGPASSWORD and is never shown.
    #[arg(long, value_name = "URL", requires = "mirror_mapping")]
    mirror_source: Option<String>,
    /// The mirror's mapping file (one CREATE PROPERTY GRAPH, docs/mirror-mapping.md).
    #[arg(long, value_name = "FILE", requires = "mirror_source")]
    mirror_mapping: Option<PathBuf>,
    /// The mirror's replication slot (also the graph's replication origin).
    #[arg(long, value_name = "NAME", default_value = plexus_mirror::apply::DEFAULT_SLOT)]
    mirror_slot: String,
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
    if let Some(http) = args.http {
        settings.add_front_end(
            "http_listen_address",
            &http.to_string(),
            "the address plexus serve's HTTP API and console listen on (--http)",
            false,
            Source::CommandLine,
        );
    }
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
    let follow = match (&args.mirror_source, &args.mirror_mapping) {
        (Some(source), Some(mapping)) => {
            let conninfo = crate::mirror::with_env_password(source);
            for (name, value, description) in [
                (
                    "mirror_source",
                    source.as_str(),
                    "the PostgreSQL database the mirror follows",
                ),
                (
                    "mirror_mapping",
                    &mapping.display().to_string(),
                    "the mirror's mapping file",
                ),
                (
                    "mirror_slot",
                    &args.mirror_slot,
                    "the mirror's replication slot",
                ),
            ] {
                let value = plexus::settings::redact(value);
                settings.add_front_end(name, &value, description, false, Source::CommandLine);
            }
            let options = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
                .and_then(|runtime| {
                    runtime.block_on(crate::mirror::mirror_options(
                        &conninfo,
                        mapping,
                        &args.db,
                        &args.mirror_slot,
                    ))
                });
            match options {
                Ok(options) => Some(options),
                Err(e) => {
                    eprintln!("plexus serve: mirror: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => None,
    };
    let db = match plexus::Database::open_settings(&args.db, settings) {
        Ok(db) => Arc::new(db),
        Err(e) => {
            eprintln!("plexus: cannot open {}: {e}", args.db.display());
            return ExitCode::FAILURE;
        }
    };
    // `CALL db.export.graphar(...)` writes under the export directory (docs/graphar.md).
    plexus_graphar::register_procedures(&db);
    // The mirror follows on a thread of its own while Bolt clients query the graph; its
    // status is `CALL db.mirror.status()`.
    let mirror = match follow.map(|options| MirrorThread::start(db.clone(), options)) {
        Some(Ok(mirror)) => {
            eprintln!("plexus serve: mirror: {}", mirror.handle().status());
            Some(mirror)
        }
        Some(Err(e)) => {
            eprintln!("plexus serve: mirror: {e}");
            return ExitCode::FAILURE;
        }
        None => None,
    };
    // HTTP runs on a runtime of its own beside Bolt's (see plexus_http); it stops when
    // Bolt's server returns (ctrl-c or SIGTERM).
    let http = match args.http {
        Some(listen) => {
            let mut config = plexus_http::HttpConfig::new(listen, auth.clone());
            config.database_name = args
                .db
                .file_name()
                .map(|name| name.to_string_lossy().into_owned());
            config.allowed_hosts = args.http_allow_host;
            config.cors_origins = args.http_cors_origin;
            match plexus_http::HttpServer::start(db.clone(), config) {
                Ok(server) => {
                    println!("HTTP server listening on http://{}", server.local_addr());
                    let _ = std::io::Write::flush(&mut std::io::stdout());
                    Some(server)
                }
                Err(e) => {
                    eprintln!("plexus serve: cannot serve HTTP on {listen}: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        None => None,
    };
    let served = plexus_bolt::serve(db, ServerConfig::new(args.bolt, auth));
    if let Some(http) = http {
        http.stop();
    }
    let stopped = mirror.map_or(Ok(()), MirrorThread::stop);
    match (served, stopped) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(e), _) => {
            eprintln!("plexus: {e}");
            ExitCode::FAILURE
        }
        (_, Err(e)) => {
            eprintln!("plexus serve: mirror: {e}");
            ExitCode::FAILURE
        }
    }
}
