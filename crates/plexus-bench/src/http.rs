//! `plexus-bench http`: point lookups through the HTTP Query API against the same lookups
//! through Bolt (the baseline), in one run on one database.
//!
//! WHAT
//! ====
//! An in-memory database with `--accounts` `:Account {id, balance}` nodes and an index on
//! `id`; an in-process Bolt server (the bank benchmark's, `bank::bolt::Server`) and an
//! in-process HTTP server (`plexus_http::HttpServer`), both on loopback without
//! authentication. `--clients` threads each loop for `--seconds`:
//!
//! ```text
//!   MATCH (a:Account {id: $id}) RETURN a.balance        $id uniform over the accounts
//!   bolt:  RUN + PULL {n: -1} in one round trip (bank::bolt::Client, auto-commit)
//!   http:  POST /db/neo4j/query/v2, keep-alive, the chunked answer read to its end
//! ```
//! Bolt runs first, then HTTP, then both again (`--rounds`), alternating so that machine
//! load drifts hit both; figures add the rounds up. Printed (JSON lines): queries/s, p50
//! and p99 latency per path, HTTP's with Bolt's as the baseline.
//!
//! WHY
//! ===
//! The issue's target is HTTP within 1.5× of Bolt's latency for a point lookup: the cost
//! of HTTP parsing, JSON encoding and the blocking-pool hand-off over Bolt's binary framing.
//!
//! NOT YET
//! =======
//! The HTTP client is the minimal one below (one request in flight per connection, no
//! pipelining), as the Bolt client is; a production HTTP client adds its own overhead.

use crate::bank::bolt::{Client, Server};
use crate::bank::{Failure, Session};
use crate::report::Figure;
use plexus::{Config, Database, Params};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The point lookup both paths run.
const LOOKUP: &str = "MATCH (a:Account {id: $id}) RETURN a.balance";
/// Largest HTTP answer the client reads, in bytes (the lookups' answers are tiny).
const MAX_ANSWER_BYTES: usize = 1 << 20;

#[derive(clap::Args, Debug)]
pub struct Options {
    /// Number of accounts.
    #[arg(long, default_value_t = 10_000)]
    accounts: usize,
    /// Seconds each path runs per round.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 4)]
    clients: usize,
    /// Rounds; each runs Bolt then HTTP.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
}

/// A blocking HTTP/1.1 client on one keep-alive connection.
struct HttpClient {
    reader: BufReader<TcpStream>,
    host: String,
}

impl HttpClient {
    fn connect(addr: SocketAddr) -> Result<HttpClient, String> {
        let stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(HttpClient {
            reader: BufReader::new(stream),
            host: addr.to_string(),
        })
    }

    /// POSTs `body` as JSON; the status and the answer's body.
    fn post(&mut self, path: &str, body: &str) -> Result<(u16, Vec<u8>), String> {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        let io = |e: std::io::Error| format!("http: {e}");
        self.reader
            .get_mut()
            .write_all(request.as_bytes())
            .map_err(io)?;
        let mut line = String::new();
        self.reader.read_line(&mut line).map_err(io)?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| format!("http: bad status line {line:?}"))?;
        let (mut length, mut chunked) = (None, false);
        loop {
            line.clear();
            self.reader.read_line(&mut line).map_err(io)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.trim().eq_ignore_ascii_case("chunked");
            }
        }
        let mut answer = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).map_err(io)?;
                let size = usize::from_str_radix(line.trim(), 16)
                    .map_err(|_| format!("http: bad chunk size {line:?}"))?;
                if answer.len() + size > MAX_ANSWER_BYTES {
                    return Err("http: answer too large".into());
                }
                let start = answer.len();
                answer.resize(start + size + 2, 0); // the chunk and its CRLF
                self.reader.read_exact(&mut answer[start..]).map_err(io)?;
                answer.truncate(start + size);
                if size == 0 {
                    break;
                }
            }
        } else {
            let length = length.ok_or("http: answer without a length")?;
            if length > MAX_ANSWER_BYTES {
                return Err("http: answer too large".into());
            }
            answer.resize(length, 0);
            self.reader.read_exact(&mut answer).map_err(io)?;
        }
        Ok((status, answer))
    }
}

/// One path's client, as the timing loop sees it.
enum Lookup {
    Bolt(Client),
    Http(HttpClient),
}

impl Lookup {
    fn run(&mut self, id: i64) -> Result<(), String> {
        match self {
            Lookup::Bolt(client) => {
                let rows = client.query(LOOKUP, &[("id", id)]).map_err(|e| match e {
                    Failure::Retryable(m) | Failure::Fatal(m) => m,
                })?;
                (rows.len() == 1)
                    .then_some(())
                    .ok_or_else(|| format!("bolt: {} rows for id {id}", rows.len()))
            }
            Lookup::Http(client) => {
                let body = format!(r#"{{"statement": "{LOOKUP}", "parameters": {{"id": {id}}}}}"#);
                let (status, answer) = client.post("/db/neo4j/query/v2", &body)?;
                let text = String::from_utf8_lossy(&answer);
                if status != 202 || !text.contains(r#""values":[["#) {
                    return Err(format!("http: status {status}: {text}"));
                }
                Ok(())
            }
        }
    }
}

/// Latencies (µs) of every lookup the clients made in `seconds`.
fn measure(
    seconds: f64,
    clients: usize,
    accounts: usize,
    connect: &(dyn Fn() -> Result<Lookup, String> + Sync),
) -> Result<Vec<u64>, String> {
    let deadline = Duration::from_secs_f64(seconds);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..clients)
            .map(|worker| {
                scope.spawn(move || -> Result<Vec<u64>, String> {
                    let mut client = connect()?;
                    let mut latencies = Vec::new();
                    // A xorshift per worker: uniform ids without a shared generator.
                    let mut state = 0x9E37_79B9_7F4A_7C15_u64 ^ (worker as u64 + 1);
                    let started = Instant::now();
                    while started.elapsed() < deadline {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        let id = (state % accounts as u64) as i64;
                        let began = Instant::now();
                        client.run(id)?;
                        latencies.push(began.elapsed().as_micros() as u64);
                    }
                    Ok(latencies)
                })
            })
            .collect();
        let mut all = Vec::new();
        for worker in workers {
            all.extend(
                worker
                    .join()
                    .map_err(|_| "a client panicked".to_string())??,
            );
        }
        Ok(all)
    })
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64
}

pub fn run(options: &Options) -> Result<(), String> {
    let db = Arc::new(Database::open_in_memory(Config::default()).map_err(|e| e.to_string())?);
    let mut conn = db.connect();
    let setup = |conn: &mut plexus::Connection, q: &str| {
        conn.execute(q, &Params::new())
            .map_err(|e| format!("{q}: {e}"))
    };
    setup(
        &mut conn,
        "CREATE INDEX account_id FOR (a:Account) ON (a.id)",
    )?;
    setup(
        &mut conn,
        &format!(
            "UNWIND range(0, {}) AS i CREATE (:Account {{id: i, balance: 100}})",
            options.accounts.saturating_sub(1)
        ),
    )?;
    drop(conn);
    let bolt = Server::start(db.clone())?;
    let http = plexus_http::HttpServer::start(
        db.clone(),
        plexus_http::HttpConfig::new(
            "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?,
            plexus_bolt::Auth::None,
        ),
    )
    .map_err(|e| format!("http: {e}"))?;
    let http_addr = http.local_addr();
    let bolt_addr = bolt.addr;
    let mut latencies: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut elapsed = [0.0_f64; 2];
    for _ in 0..options.rounds {
        for (path, slot) in [("bolt", 0), ("http", 1)] {
            let connect = move || -> Result<Lookup, String> {
                match path {
                    "bolt" => Client::connect(bolt_addr)
                        .map(Lookup::Bolt)
                        .map_err(|e| match e {
                            Failure::Retryable(m) | Failure::Fatal(m) => m,
                        }),
                    _ => HttpClient::connect(http_addr).map(Lookup::Http),
                }
            };
            let started = Instant::now();
            let measured = measure(options.seconds, options.clients, options.accounts, &connect)?;
            elapsed[slot] += started.elapsed().as_secs_f64();
            latencies[slot].extend(measured);
        }
    }
    http.stop();
    let figures: Vec<(f64, f64, f64)> = latencies
        .iter_mut()
        .zip(elapsed)
        .map(|(l, seconds)| {
            l.sort_unstable();
            (
                l.len() as f64 / seconds,
                percentile(l, 0.50),
                percentile(l, 0.99),
            )
        })
        .collect();
    let (bolt_fig, http_fig) = (figures[0], figures[1]);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split(' ').next().unwrap_or("").to_string();
    for (name, unit, path, value, baseline) in [
        (
            "http_point_lookup_qps",
            "queries/s",
            "bolt",
            bolt_fig.0,
            None,
        ),
        (
            "http_point_lookup_qps",
            "queries/s",
            "http",
            http_fig.0,
            Some(bolt_fig.0),
        ),
        ("http_point_lookup_p50", "us", "bolt", bolt_fig.1, None),
        (
            "http_point_lookup_p50",
            "us",
            "http",
            http_fig.1,
            Some(bolt_fig.1),
        ),
        ("http_point_lookup_p99", "us", "bolt", bolt_fig.2, None),
        (
            "http_point_lookup_p99",
            "us",
            "http",
            http_fig.2,
            Some(bolt_fig.2),
        ),
    ] {
        let mut figure = Figure::new(name, value, unit)
            .with_label("path", path)
            .with_label("loadavg_1m", &load)
            .with("clients", options.clients as f64)
            .with("accounts", options.accounts as f64)
            .with("seconds_per_round", options.seconds)
            .with("rounds", options.rounds as f64);
        if let Some(baseline) = baseline {
            figure = figure.baseline(baseline);
        }
        figure.print();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_ranked_sample() {
        let sorted: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&sorted, 0.50), 50.0);
        assert_eq!(percentile(&sorted, 0.99), 99.0);
        assert!(percentile(&[], 0.5).is_nan());
    }
}
