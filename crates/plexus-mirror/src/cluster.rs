//! Throwaway PostgreSQL servers: a private cluster on a free loopback port, for the mirror's
//! tests, its benchmark and the demo.
//!
//! [`ThrowawayCluster::start`] runs the machine's PostgreSQL 15 server binaries (`initdb`,
//! `pg_ctl`) on a fresh directory under the system temp dir: `wal_level = logical`,
//! connections over TCP on 127.0.0.1 only, password (SCRAM-SHA-256) authentication for TCP and
//! replication connections, trust only on the cluster's private Unix socket (which is how the
//! setup commands run). It creates one login role with a generated password (SUPERUSER and
//! REPLICATION, so it may create publications and slots) and one database. Dropping the value
//! stops the server and removes the directory.
//!
//! PostgreSQL refuses to run as root: when this process is root, every server command runs as
//! the `postgres` system user (`runuser`), which owns the directory.

use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the server binaries are looked for when `PLEXUS_PG_BIN` is not set.
const DEFAULT_BIN_DIRS: [&str; 1] = ["/usr/lib/postgresql/15/bin"];

/// Settings a throwaway cluster starts with.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    pub user: String,
    pub database: String,
    /// Extra `-c name=value` server settings (e.g. `synchronous_commit=on`).
    pub settings: Vec<(String, String)>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            user: "plexus".to_owned(),
            database: "plexus".to_owned(),
            settings: Vec::new(),
        }
    }
}

/// A running private PostgreSQL server; stopped and removed on drop.
pub struct ThrowawayCluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    options: ClusterOptions,
    password: String,
    as_postgres: bool,
    running: bool,
}

fn failed(what: &str, output: &Output) -> io::Error {
    io::Error::other(format!(
        "{what} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// The PostgreSQL server binaries: `$PLEXUS_PG_BIN`, else the Debian package's directory.
pub fn server_bin_dir() -> io::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PLEXUS_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    DEFAULT_BIN_DIRS
        .iter()
        .map(PathBuf::from)
        .find(|dir| dir.join("initdb").exists())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "PostgreSQL 15 server binaries not found (looked in /usr/lib/postgresql/15/bin; \
                 set PLEXUS_PG_BIN to another bin directory). scripts/test.sh installs them \
                 with `apt-get install -y postgresql`.",
            )
        })
}

fn free_loopback_port() -> io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// A password unique to this process and moment (not a secret against local users, who can
/// read the cluster's files anyway; it makes every connection go through SCRAM).
fn generated_password() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("pw{:x}{:x}{n}", nanos, std::process::id())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl ThrowawayCluster {
    /// Initialises and starts a new cluster (about a second).
    pub fn start(options: ClusterOptions) -> io::Result<ThrowawayCluster> {
        let bin = server_bin_dir()?;
        let as_postgres = is_root();
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("plexus-pg-{}-{stamp:x}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let mut cluster = ThrowawayCluster {
            dir,
            bin,
            port: free_loopback_port()?,
            options,
            password: generated_password(),
            as_postgres,
            running: false,
        };
        if as_postgres {
            cluster.run(
                "chown",
                Command::new("chown")
                    .arg("postgres:postgres")
                    .arg(&cluster.dir),
            )?;
        }
        let pwfile = cluster.dir.join("superuser-password");
        std::fs::write(&pwfile, format!("{}\n", cluster.password))?;
        if as_postgres {
            cluster.run(
                "chown",
                Command::new("chown").arg("postgres:postgres").arg(&pwfile),
            )?;
        }
        let data = cluster.dir.join("data");
        let mut initdb = cluster.server_command("initdb");
        initdb
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .args(["-E", "UTF8", "--no-sync", "--no-instructions"]);
        cluster.run("initdb", &mut initdb)?;
        std::fs::remove_file(&pwfile)?;
        cluster.pg_ctl_start()?;
        let user = cluster.options.user.clone();
        let database = cluster.options.database.clone();
        let password = cluster.password.clone();
        cluster.psql_as_superuser(
            "postgres",
            &format!("CREATE ROLE \"{user}\" LOGIN SUPERUSER REPLICATION PASSWORD '{password}'"),
        )?;
        // (a statement of its own: CREATE DATABASE cannot run inside psql's -c transaction)
        cluster.psql_as_superuser(
            "postgres",
            &format!("CREATE DATABASE \"{database}\" OWNER \"{user}\""),
        )?;
        Ok(cluster)
    }

    fn server_command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }

    fn run(&self, what: &str, command: &mut Command) -> io::Result<Output> {
        let output = command.output()?;
        if !output.status.success() {
            return Err(failed(what, &output));
        }
        Ok(output)
    }

    fn pg_ctl_start(&mut self) -> io::Result<()> {
        let mut options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c wal_level=logical \
             -c max_replication_slots=10 -c max_wal_senders=10 -c fsync=off",
            self.port,
            self.dir.display()
        );
        for (name, value) in &self.options.settings {
            options.push_str(&format!(" -c {name}={value}"));
        }
        let mut start = self.server_command("pg_ctl");
        start
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-w", "start", "-o"])
            .arg(options);
        self.run("pg_ctl start", &mut start)?;
        self.running = true;
        Ok(())
    }

    fn pg_ctl_stop(&mut self, mode: &str) -> io::Result<()> {
        let mut stop = self.server_command("pg_ctl");
        stop.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-w", "-m", mode, "stop"]);
        self.run("pg_ctl stop", &mut stop)?;
        self.running = false;
        Ok(())
    }

    /// Stops the server (fast shutdown) and starts it again on the same port.
    pub fn restart(&mut self) -> io::Result<()> {
        self.pg_ctl_stop("fast")?;
        self.pg_ctl_start()
    }

    /// Stops the server immediately, as a crash would (no shutdown checkpoint).
    pub fn crash_and_restart(&mut self) -> io::Result<()> {
        self.pg_ctl_stop("immediate")?;
        self.pg_ctl_start()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn user(&self) -> &str {
        &self.options.user
    }

    pub fn database(&self) -> &str {
        &self.options.database
    }

    pub fn password(&self) -> &str {
        &self.password
    }

    /// The directory holding the data directory, the server log and the Unix socket.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `postgres://user:password@127.0.0.1:port/database` (holds the password: never log it).
    pub fn url(&self) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{}",
            self.options.user, self.password, self.port, self.options.database
        )
    }

    /// A key=value connection string for `tokio-postgres` (holds the password).
    pub fn conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user={} password={} dbname={}",
            self.port, self.options.user, self.password, self.options.database
        )
    }

    /// Runs SQL with `psql` in the cluster's database (over its private socket) and returns
    /// what it printed (unaligned, tuples only); an SQL error is an `Err`.
    pub fn psql(&self, sql: &str) -> io::Result<String> {
        let database = self.options.database.clone();
        self.psql_as_superuser(&database, sql)
    }

    fn psql_as_superuser(&self, database: &str, sql: &str) -> io::Result<String> {
        let mut psql = self.server_command("psql");
        psql.arg("-h")
            .arg(&self.dir)
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                database,
            ])
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]);
        let output = self.run("psql", &mut psql)?;
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

impl Drop for ThrowawayCluster {
    fn drop(&mut self) {
        if self.running {
            let _ = self.pg_ctl_stop("immediate");
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throwaway_cluster_starts_answers_and_restarts() {
        let mut cluster = ThrowawayCluster::start(ClusterOptions::default()).unwrap();
        cluster
            .psql("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2);")
            .unwrap();
        assert_eq!(cluster.psql("SELECT count(*) FROM t").unwrap().trim(), "2");
        assert_eq!(cluster.psql("SHOW wal_level").unwrap().trim(), "logical");
        assert!(cluster.psql("SELECT * FROM missing").is_err());
        cluster.restart().unwrap();
        assert_eq!(cluster.psql("SELECT count(*) FROM t").unwrap().trim(), "2");
        let dir = cluster.dir().to_owned();
        drop(cluster);
        assert!(!dir.exists());
    }
}
