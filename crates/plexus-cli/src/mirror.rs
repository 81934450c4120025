//! `plexus mirror`: follow a PostgreSQL database into a graph, in the foreground.
//!
//!     plexus mirror --source postgres://app@db.internal/shop --mapping graph.sql ./shop-graph
//!     plexus mirror --drop --source postgres://app@db.internal/shop
//!
//! The first run copies the mapped tables (one snapshot) and then follows the replication
//! slot; later runs resume from the position stored in the graph. A status line goes to
//! stderr every second. Ctrl-c or SIGTERM stops it: the open epoch (at most
//! `--epoch-max-txns` source transactions not yet committed in the graph) is dropped and
//! streamed again by the next run, which is exactly-once safe. Exit status 1 on a fatal error
//! (the message names the table, row or mapping position), 2 on a usage error. The password
//! comes from the URL or from `PGPASSWORD` and is never printed (docs/mirror.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use plexus::{Database, Settings};
use plexus_mirror::source::{SourceConfig, drop_slot_and_publication};
use plexus_mirror::{Mirror, MirrorHandle, MirrorOptions, load_mapping};

/// How often the status line is printed.
const STATUS_INTERVAL_MS: u64 = 1_000;

#[derive(Args)]
pub struct MirrorArgs {
    /// The PostgreSQL database to follow: a `postgres://user[:password]@host[:port]/db` URL or
    /// a `key=value` string (the password may also come from PGPASSWORD).
    #[arg(long, value_name = "URL")]
    source: String,
    /// The mapping: one SQL/PGQ CREATE PROPERTY GRAPH statement (docs/mirror-mapping.md).
    #[arg(long, value_name = "FILE", required_unless_present = "drop")]
    mapping: Option<PathBuf>,
    /// Replication slot name, also the graph's replication origin.
    #[arg(long, default_value = plexus_mirror::apply::DEFAULT_SLOT)]
    slot: String,
    /// Publication name.
    #[arg(long, default_value = plexus_mirror::apply::DEFAULT_PUBLICATION)]
    publication: String,
    /// Longest time an epoch gathers source transactions, in milliseconds.
    #[arg(long, default_value_t = plexus_mirror::apply::DEFAULT_EPOCH_INTERVAL_MS)]
    epoch_ms: u64,
    /// Most source transactions per epoch (one graph commit).
    #[arg(long, default_value_t = plexus_mirror::apply::DEFAULT_EPOCH_MAX_TXNS)]
    epoch_max_txns: usize,
    /// Drop the replication slot and the publication, then exit.
    #[arg(long)]
    drop: bool,
    /// The database directory (created if absent).
    #[arg(required_unless_present = "drop")]
    db: Option<PathBuf>,
}

/// `conninfo` with the password from `PGPASSWORD` added when it names none.
pub(crate) fn with_env_password(conninfo: &str) -> String {
    match std::env::var("PGPASSWORD") {
        Ok(password) => plexus_mirror::apply::with_default_password(conninfo, &password),
        Err(_) => conninfo.to_owned(),
    }
}

pub fn run(args: MirrorArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("plexus mirror: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let conninfo = with_env_password(&args.source);
    let result = if args.drop {
        runtime.block_on(drop_mirror(&args, &conninfo))
    } else {
        runtime.block_on(follow(&args, &conninfo))
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("plexus mirror: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn drop_mirror(args: &MirrorArgs, conninfo: &str) -> Result<(), String> {
    let config = SourceConfig {
        conninfo: conninfo.to_owned(),
        slot: args.slot.clone(),
        publication: args.publication.clone(),
        tables: Vec::new(),
    };
    drop_slot_and_publication(&config)
        .await
        .map_err(|e| e.to_string())?;
    eprintln!(
        "plexus mirror: dropped replication slot {} and publication {}",
        args.slot, args.publication
    );
    Ok(())
}

async fn follow(args: &MirrorArgs, conninfo: &str) -> Result<(), String> {
    let (Some(mapping_file), Some(db_dir)) = (&args.mapping, &args.db) else {
        return Err("--mapping and a database directory are required".to_owned());
    };
    let mut options = mirror_options(conninfo, mapping_file, db_dir, &args.slot).await?;
    options.publication = args.publication.clone();
    options.epoch_interval = Duration::from_millis(args.epoch_ms);
    options.epoch_max_txns = args.epoch_max_txns.max(1);
    let db = open(db_dir)?;
    let handle = MirrorHandle::default();
    let watched = handle.clone();
    let printer = tokio::spawn(async move {
        let mut ticks = tokio::time::interval(Duration::from_millis(STATUS_INTERVAL_MS));
        ticks.tick().await;
        loop {
            ticks.tick().await;
            eprintln!("plexus mirror: {}", watched.status());
        }
    });
    let result = match Mirror::start_with(db, options, handle.clone()).await {
        Ok(mirror) => {
            eprintln!("plexus mirror: {}", handle.status());
            mirror.run_until(shutdown_signal()).await
        }
        Err(e) => Err(e),
    };
    printer.abort();
    result.map_err(|e| e.to_string())
}

/// Reads and validates the mapping file against the source, and returns the options of a
/// mirror into the database in `db_dir` with slot `slot` (other options at their defaults).
pub(crate) async fn mirror_options(
    conninfo: &str,
    mapping_file: &Path,
    db_dir: &Path,
    slot: &str,
) -> Result<MirrorOptions, String> {
    let text = std::fs::read_to_string(mapping_file)
        .map_err(|e| format!("{}: {e}", mapping_file.display()))?;
    let mapping = load_mapping(conninfo, &text, &mapping_file.display().to_string())
        .await
        .map_err(|e| e.to_string())?;
    let mut options = MirrorOptions::new(conninfo, mapping);
    options.slot = slot.to_owned();
    Ok(options.pending_file_in(db_dir))
}

fn open(dir: &Path) -> Result<Arc<Database>, String> {
    let settings = Settings::load(dir).map_err(|e| e.to_string())?;
    let db =
        Database::open_settings(dir, settings).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(Arc::new(db))
}

/// Completes on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
