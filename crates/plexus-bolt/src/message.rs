//! Bolt request and response messages.
//!
//! Every message is one PackStream structure whose tag names the message:
//!
//! ```text
//!   requests                                     responses
//!   01 HELLO     {extra}                         70 SUCCESS  {metadata}
//!   02 GOODBYE                                   71 RECORD   [fields]
//!   0F RESET                                     7E IGNORED
//!   10 RUN       query, {params}, {extra}        7F FAILURE  {code, message}
//!   11 BEGIN     {extra}
//!   12 COMMIT    13 ROLLBACK
//!   2F DISCARD   {n, qid}     3F PULL {n, qid}
//!   54 TELEMETRY api          (5.4+)
//!   66 ROUTE     {routing}, [bookmarks], {extra}
//!   6A LOGON     {auth}       6B LOGOFF          (5.1+)
//! ```
//!
//! Parsing checks field counts and types: a request that does not parse is a protocol
//! violation (the session answers FAILURE and closes the connection). Extras the server does
//! not use (bookmarks, tx_timeout, mode, db, notification filters) are accepted and ignored.
//!
//! `tx_metadata` of BEGIN and RUN is read for one key, `isolation` (`"serializable"` or
//! `"snapshot"`, any case): the level of that transaction — what the drivers send for
//! `session.begin_transaction(metadata={"isolation": …})` and `unit_of_work(metadata=…)`.
//! Drivers pool connections, so a per-transaction level is the one that cannot leak into
//! another driver session. Any other metadata is ignored; an unknown level is a FAILURE of the
//! message (not a protocol violation).

use crate::packstream::{Pack, Structure, encode};
use crate::values::{ValueError, from_pack};
use plexus::{IsolationLevel, Params};

/// The isolation level `tx_metadata` asks for: `None` when it names none, `Err` (the message
/// for the FAILURE) when it names an unknown one.
pub type RequestedIsolation = Result<Option<IsolationLevel>, String>;

/// The credentials of HELLO (before 5.1) or LOGON.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Credentials {
    pub scheme: String,
    pub principal: String,
    pub credentials: String,
}

impl Credentials {
    fn from_map(map: &Pack) -> Credentials {
        let text = |key| {
            map.get(key)
                .and_then(Pack::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Credentials {
            scheme: text("scheme"),
            principal: text("principal"),
            credentials: text("credentials"),
        }
    }
}

/// How many records PULL / DISCARD want and from which stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fetch {
    /// `None` for all (`n: -1`).
    pub n: Option<usize>,
    /// `None` for the most recent stream (`qid: -1`).
    pub qid: Option<u64>,
}

#[derive(Debug)]
pub enum Request {
    Hello(Credentials),
    Logon(Credentials),
    Logoff,
    Goodbye,
    Reset,
    Run {
        query: String,
        /// Parameters, or why one of them cannot be taken (reported as a FAILURE of the RUN,
        /// not as a protocol violation).
        params: Result<Params, ValueError>,
        /// From `tx_metadata` (auto-commit RUN only; see the module docs).
        isolation: RequestedIsolation,
    },
    Begin {
        isolation: RequestedIsolation,
    },
    Commit,
    Rollback,
    Pull(Fetch),
    Discard(Fetch),
    Route,
    Telemetry,
}

impl Request {
    pub fn name(&self) -> &'static str {
        match self {
            Request::Hello(_) => "HELLO",
            Request::Logon(_) => "LOGON",
            Request::Logoff => "LOGOFF",
            Request::Goodbye => "GOODBYE",
            Request::Reset => "RESET",
            Request::Run { .. } => "RUN",
            Request::Begin { .. } => "BEGIN",
            Request::Commit => "COMMIT",
            Request::Rollback => "ROLLBACK",
            Request::Pull(_) => "PULL",
            Request::Discard(_) => "DISCARD",
            Request::Route => "ROUTE",
            Request::Telemetry => "TELEMETRY",
        }
    }
}

/// Why a message is not a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn violation<T>(message: impl Into<String>) -> Result<T, ProtocolError> {
    Err(ProtocolError(message.into()))
}

fn expect_fields(s: &Structure, name: &str, counts: &[usize]) -> Result<(), ProtocolError> {
    if counts.contains(&s.fields.len()) {
        Ok(())
    } else {
        violation(format!(
            "{name} has {} fields, expected {counts:?}",
            s.fields.len()
        ))
    }
}

fn map_field<'a>(s: &'a Structure, n: usize, name: &str) -> Result<&'a Pack, ProtocolError> {
    match s.fields.get(n) {
        Some(map @ Pack::Map(_)) => Ok(map),
        _ => violation(format!("{name}: field {n} must be a map")),
    }
}

fn fetch(s: &Structure, name: &str) -> Result<Fetch, ProtocolError> {
    expect_fields(s, name, &[1])?;
    let extra = map_field(s, 0, name)?;
    let n = match extra.get("n").and_then(Pack::as_int) {
        Some(-1) => None,
        Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        other => return violation(format!("{name}: n must be -1 or positive, got {other:?}")),
    };
    let qid = match extra.get("qid").and_then(Pack::as_int) {
        None | Some(-1) => None,
        Some(qid) if qid >= 0 => Some(qid as u64),
        Some(other) => return violation(format!("{name}: invalid qid {other}")),
    };
    Ok(Fetch { n, qid })
}

/// `extra.tx_metadata.isolation`, if any (see the module docs).
fn requested_isolation(extra: &Pack) -> RequestedIsolation {
    let Some(value) = extra.get("tx_metadata").and_then(|m| m.get("isolation")) else {
        return Ok(None);
    };
    match value.as_str() {
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|e: String| format!("tx_metadata isolation: {e}")),
        None => {
            Err("tx_metadata isolation must be a string: \"serializable\" or \"snapshot\"".into())
        }
    }
}

/// Parses a decoded message.
pub fn parse(message: Pack) -> Result<Request, ProtocolError> {
    let Pack::Struct(s) = message else {
        return violation("a message must be a structure");
    };
    Ok(match s.tag {
        0x01 => {
            expect_fields(&s, "HELLO", &[1])?;
            Request::Hello(Credentials::from_map(map_field(&s, 0, "HELLO")?))
        }
        0x02 => Request::Goodbye,
        0x0F => Request::Reset,
        0x10 => {
            expect_fields(&s, "RUN", &[2, 3])?;
            let isolation = match s.fields.get(2) {
                Some(extra) => requested_isolation(extra),
                None => Ok(None),
            };
            let mut fields = s.fields.into_iter();
            let (Some(Pack::String(query)), Some(Pack::Map(params))) =
                (fields.next(), fields.next())
            else {
                return violation("RUN needs a query string and a parameter map");
            };
            let params = params
                .into_iter()
                .map(|(k, v)| Ok((k, from_pack(v)?)))
                .collect();
            Request::Run {
                query,
                params,
                isolation,
            }
        }
        0x11 => Request::Begin {
            isolation: match s.fields.first() {
                Some(extra) => requested_isolation(extra),
                None => Ok(None),
            },
        },
        0x12 => Request::Commit,
        0x13 => Request::Rollback,
        0x2F => Request::Discard(fetch(&s, "DISCARD")?),
        0x3F => Request::Pull(fetch(&s, "PULL")?),
        0x54 => Request::Telemetry,
        0x66 => Request::Route,
        0x6A => {
            expect_fields(&s, "LOGON", &[1])?;
            Request::Logon(Credentials::from_map(map_field(&s, 0, "LOGON")?))
        }
        0x6B => Request::Logoff,
        other => return violation(format!("unknown message tag 0x{other:02X}")),
    })
}

/// A response about to be framed.
pub enum Response {
    Success(Vec<(String, Pack)>),
    Record(Vec<Pack>),
    Ignored,
    Failure { code: &'static str, message: String },
}

impl Response {
    /// The PackStream bytes of the message (not yet chunked).
    pub fn encode(self, out: &mut Vec<u8>) {
        let message = match self {
            Response::Success(metadata) => Pack::structure(0x70, vec![Pack::Map(metadata)]),
            Response::Record(fields) => Pack::structure(0x71, vec![Pack::List(fields)]),
            Response::Ignored => Pack::structure(0x7E, vec![]),
            Response::Failure { code, message } => Pack::structure(
                0x7F,
                vec![Pack::Map(vec![
                    ("code".into(), Pack::string(code)),
                    ("message".into(), Pack::String(message)),
                ])],
            ),
        };
        encode(&message, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(tag: u8, fields: Vec<Pack>) -> Pack {
        Pack::structure(tag, fields)
    }

    fn map(entries: &[(&str, Pack)]) -> Pack {
        Pack::Map(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn requests_parse() {
        let hello = msg(
            0x01,
            vec![map(&[
                ("user_agent", Pack::string("test")),
                ("scheme", Pack::string("basic")),
                ("principal", Pack::string("ada")),
                ("credentials", Pack::string("secret")),
            ])],
        );
        let Ok(Request::Hello(c)) = parse(hello) else {
            panic!()
        };
        assert_eq!(
            (c.principal.as_str(), c.credentials.as_str()),
            ("ada", "secret")
        );
        let run = msg(
            0x10,
            vec![
                Pack::string("RETURN $x"),
                map(&[("x", Pack::Int(1))]),
                map(&[]),
            ],
        );
        let Ok(Request::Run { query, params, .. }) = parse(run) else {
            panic!()
        };
        assert_eq!(query, "RETURN $x");
        assert_eq!(params.expect("params").len(), 1);
        let pull = msg(
            0x3F,
            vec![map(&[("n", Pack::Int(-1)), ("qid", Pack::Int(3))])],
        );
        assert!(matches!(
            parse(pull),
            Ok(Request::Pull(Fetch {
                n: None,
                qid: Some(3)
            }))
        ));
    }

    #[test]
    fn malformed_requests_are_violations() {
        for bad in [
            Pack::Int(1),
            msg(0x77, vec![]),
            msg(0x01, vec![]),
            msg(0x10, vec![Pack::Int(1), map(&[])]),
            msg(0x3F, vec![map(&[("n", Pack::Int(0))])]),
            msg(0x3F, vec![map(&[])]),
            msg(
                0x2F,
                vec![map(&[("n", Pack::Int(5)), ("qid", Pack::Int(-7))])],
            ),
        ] {
            assert!(parse(bad.clone()).is_err(), "{bad:?}");
        }
        // a bad parameter is not a violation: RUN fails, the connection lives
        let run = msg(
            0x10,
            vec![Pack::string("RETURN 1"), map(&[("b", Pack::Bytes(vec![]))])],
        );
        assert!(matches!(
            parse(run),
            Ok(Request::Run { params: Err(_), .. })
        ));
    }

    #[test]
    fn tx_metadata_names_the_isolation_level() {
        let begin = |metadata: Pack| match parse(msg(0x11, vec![map(&[("tx_metadata", metadata)])]))
        {
            Ok(Request::Begin { isolation }) => isolation,
            other => panic!("{other:?}"),
        };
        let level = |text: &str| begin(map(&[("isolation", Pack::string(text))]));
        assert_eq!(
            level("serializable"),
            Ok(Some(IsolationLevel::Serializable))
        );
        assert_eq!(level("SNAPSHOT"), Ok(Some(IsolationLevel::Snapshot)));
        assert_eq!(begin(map(&[("app", Pack::string("x"))])), Ok(None));
        assert!(matches!(
            parse(msg(0x11, vec![map(&[])])),
            Ok(Request::Begin {
                isolation: Ok(None)
            })
        ));
        let unknown = level("read committed").unwrap_err();
        assert!(
            unknown.contains("unknown isolation level 'read committed'"),
            "{unknown}"
        );
        let wrong_type = begin(map(&[("isolation", Pack::Int(1))])).unwrap_err();
        assert!(wrong_type.contains("must be a string"), "{wrong_type}");
        let run = msg(
            0x10,
            vec![
                Pack::string("RETURN 1"),
                map(&[]),
                map(&[(
                    "tx_metadata",
                    map(&[("isolation", Pack::string("serializable"))]),
                )]),
            ],
        );
        assert!(matches!(
            parse(run),
            Ok(Request::Run {
                isolation: Ok(Some(IsolationLevel::Serializable)),
                ..
            })
        ));
    }
}
