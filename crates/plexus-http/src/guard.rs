//! What every request passes before a handler: Host and Origin checks, the JSON content-type
//! rule, the body-size limit, CORS (off unless configured) and basic authentication; and the
//! JSON error every refusal answers with.
//!
//! WHAT
//! ====
//! ```text
//!   request ─▶ Host allowed? ─no─▶ 403 Neo.ClientError.Request.Invalid (DNS rebinding)
//!           ─▶ Origin same-origin or a CORS origin? ─no─▶ 403
//!           ─▶ OPTIONS from a CORS origin ─▶ 204 preflight answer
//!           ─▶ POST with a JSON content type? ─no─▶ 415
//!           ─▶ Content-Length ≤ MAX_BODY_BYTES? ─no─▶ 413
//!           ─▶ console asset or /health? ─yes─▶ handler (no credentials needed)
//!           ─▶ Authorization: Basic with a configured user? ─no─▶ 401
//!           ─▶ handler
//! ```
//!
//! WHY
//! ===
//! A server on loopback is still reachable from any web page the user opens: a page can
//! POST to `127.0.0.1:7474` (a "simple" cross-site request needs no preflight if its content
//! type is a form type), and a rebinding DNS name can make the browser treat the server as
//! the attacker's own origin. Requiring a JSON content type forces a CORS preflight, which
//! fails because CORS is off; checking `Host` against the bound address defeats rebinding;
//! checking `Origin` refuses cross-site requests even when credentials were cached.
//!
//! INVARIANTS
//! ==========
//! - On a loopback bind the accepted hosts are the bound `ip:port`, `localhost:port`,
//!   `127.0.0.1:port` and `[::1]:port`, plus `HttpConfig::allowed_hosts`. On any other bind
//!   every host is accepted unless `allowed_hosts` is set (rebinding targets loopback
//!   servers; a public server's names are the operator's to list).
//! - No `WWW-Authenticate` header is sent with 401, so a browser never pops its own login
//!   dialog over the console.
//! - Bodies larger than the limit are also refused while being read (a chunked body has no
//!   Content-Length): the extractors enforce [`crate::MAX_BODY_BYTES`] too.

use crate::AppState;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use std::sync::Arc;

pub const REQUEST_INVALID: &str = "Neo.ClientError.Request.Invalid";
pub const UNAUTHORIZED: &str = "Neo.ClientError.Security.Unauthorized";
pub const FORBIDDEN: &str = "Neo.ClientError.Security.Forbidden";
pub const NOT_FOUND: &str = "Neo.ClientError.Request.ResourceNotFound";

/// A refusal: status, Neo4j-style code and message, as `{"errors": [{code, message}]}`.
pub fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = serde_json::json!({
        "errors": [{ "code": code, "message": message.into() }]
    });
    (status, axum::Json(body)).into_response()
}

pub async fn not_found(uri: axum::http::Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        NOT_FOUND,
        format!("no such endpoint: {}", uri.path()),
    )
}

/// Whether a content type is one the query endpoints read (plain or typed JSON).
pub fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.starts_with("application/vnd.neo4j.query")
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The `Host` values this server answers to, or `None` if any is accepted.
fn allowed_hosts(state: &AppState) -> Option<Vec<String>> {
    let port = state.local.port();
    let mut hosts = state.config.allowed_hosts.clone();
    if state.local.ip().is_loopback() {
        hosts.push(state.local.to_string());
        for name in ["localhost", "127.0.0.1", "[::1]"] {
            hosts.push(format!("{name}:{port}"));
        }
    } else if hosts.is_empty() {
        return None;
    } else {
        hosts.push(state.local.to_string());
    }
    Some(hosts)
}

fn host_allowed(state: &AppState, host: Option<&str>) -> bool {
    match allowed_hosts(state) {
        None => true,
        Some(hosts) => host.is_some_and(|h| hosts.iter().any(|a| a.eq_ignore_ascii_case(h))),
    }
}

/// Same origin: `http://` + the request's (already checked) Host.
fn same_origin(origin: &str, host: Option<&str>) -> bool {
    host.is_some_and(|host| {
        origin
            .strip_prefix("http://")
            .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
    })
}

/// Whether the request needs no credentials: the console's files and `/health`.
fn is_public(method: &Method, path: &str) -> bool {
    *method == Method::GET && (path == "/" || path == "/health" || path.starts_with("/console/"))
}

/// `Authorization: Basic base64(name:password)` checked against the configured users.
fn authenticated(state: &AppState, headers: &HeaderMap) -> bool {
    if state.config.auth == plexus_bolt::Auth::None {
        return true;
    }
    let Some(value) = header_text(headers, header::AUTHORIZATION) else {
        return false;
    };
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return false;
    }
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
        return false;
    };
    let Ok(text) = String::from_utf8(decoded) else {
        return false;
    };
    match text.split_once(':') {
        Some((name, password)) => state.config.auth.accepts("basic", name, password),
        None => false,
    }
}

fn cors_headers(response: &mut Response, origin: &str) {
    let headers = response.headers_mut();
    if let Ok(origin) = HeaderValue::from_str(origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type, accept"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE"),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
}

/// The middleware (see the module doc for the order of checks).
pub async fn check(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = header_text(headers, header::HOST);
    if !host_allowed(&state, host) {
        return error(
            StatusCode::FORBIDDEN,
            FORBIDDEN,
            format!(
                "Host '{}' is not an address of this server (add it to the allowed hosts)",
                host.unwrap_or("")
            ),
        );
    }
    let origin = header_text(headers, header::ORIGIN).map(str::to_owned);
    let cors_origin = origin
        .as_deref()
        .filter(|o| state.config.cors_origins.iter().any(|a| a == o))
        .map(str::to_owned);
    if let Some(origin) = &origin
        && !same_origin(origin, host)
        && cors_origin.is_none()
    {
        return error(
            StatusCode::FORBIDDEN,
            FORBIDDEN,
            format!("cross-origin request from '{origin}' refused (CORS is not enabled for it)"),
        );
    }
    if request.method() == Method::OPTIONS
        && let Some(origin) = &cors_origin
    {
        let mut response = StatusCode::NO_CONTENT.into_response();
        cors_headers(&mut response, origin);
        return response;
    }
    if request.method() == Method::POST {
        let content_type = header_text(headers, header::CONTENT_TYPE).unwrap_or("");
        if !is_json(content_type) {
            return error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                REQUEST_INVALID,
                format!(
                    "content type '{content_type}' refused: send application/json or \
                     application/vnd.neo4j.query"
                ),
            );
        }
    }
    let length = header_text(headers, header::CONTENT_LENGTH).and_then(|l| l.parse::<u64>().ok());
    if length.is_some_and(|l| l > crate::MAX_BODY_BYTES as u64) {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            REQUEST_INVALID,
            format!(
                "request body of {} bytes exceeds the limit of {} bytes",
                length.unwrap_or(0),
                crate::MAX_BODY_BYTES
            ),
        );
    }
    if !is_public(request.method(), request.uri().path()) && !authenticated(&state, headers) {
        return error(
            StatusCode::UNAUTHORIZED,
            UNAUTHORIZED,
            "The client is unauthorized due to authentication failure.",
        );
    }
    let mut response = next.run(request).await;
    if let Some(origin) = &cors_origin {
        cors_headers(&mut response, origin);
    }
    response
}

/// Reads a request body of at most [`crate::MAX_BODY_BYTES`] (a chunked body has no length
/// for [`check`] to refuse up front).
pub async fn read_body(body: Body) -> Result<bytes::Bytes, Response> {
    axum::body::to_bytes(body, crate::MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            error(
                StatusCode::PAYLOAD_TOO_LARGE,
                REQUEST_INVALID,
                format!(
                    "request body exceeds the limit of {} bytes (or could not be read)",
                    crate::MAX_BODY_BYTES
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        assert!(is_json("application/json"));
        assert!(is_json("application/json; charset=utf-8"));
        assert!(is_json("application/vnd.neo4j.query"));
        assert!(is_json("application/vnd.neo4j.query.v1.1"));
        assert!(!is_json("text/plain"));
        assert!(!is_json("application/x-www-form-urlencoded"));
        assert!(!is_json(""));
    }

    #[test]
    fn origin_must_match_the_host() {
        assert!(same_origin("http://127.0.0.1:7474", Some("127.0.0.1:7474")));
        assert!(!same_origin("http://evil.example", Some("127.0.0.1:7474")));
        assert!(!same_origin(
            "https://127.0.0.1:7474",
            Some("127.0.0.1:7474")
        ));
        assert!(!same_origin("http://127.0.0.1:7474", None));
    }
}
