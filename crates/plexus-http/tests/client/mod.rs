//! A small HTTP/1.1 test client over hyper's client connection (one connection per request).
//!
//! Why not a full client crate: the tests need POST/GET/DELETE with headers, basic auth and a
//! JSON or text body back. hyper is already in the build for the server, so this costs a
//! feature flag instead of a client crate with its URL, IDNA and TLS dependency trees.

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue};
pub use hyper::{HeaderMap, Method, StatusCode};
use hyper_util::rt::TokioIo;

#[derive(Clone, Default)]
pub struct Client;

impl Client {
    pub fn new() -> Client {
        Client
    }

    pub fn get(&self, url: impl AsRef<str>) -> RequestBuilder {
        RequestBuilder::new(Method::GET, url.as_ref())
    }

    pub fn post(&self, url: impl AsRef<str>) -> RequestBuilder {
        RequestBuilder::new(Method::POST, url.as_ref())
    }

    pub fn delete(&self, url: impl AsRef<str>) -> RequestBuilder {
        RequestBuilder::new(Method::DELETE, url.as_ref())
    }
}

pub struct RequestBuilder {
    method: Method,
    /// `host:port` and the path (with query) of an `http://` URL.
    authority: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl RequestBuilder {
    fn new(method: Method, url: &str) -> RequestBuilder {
        let rest = url.strip_prefix("http://").expect("an http:// URL");
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        RequestBuilder {
            method,
            authority: authority.to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Sets a header, replacing one of the same name (case-insensitive).
    pub fn header(mut self, name: &str, value: impl Into<String>) -> RequestBuilder {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.into()));
        self
    }

    pub fn basic_auth(self, user: &str, password: Option<&str>) -> RequestBuilder {
        let pair = format!("{user}:{}", password.unwrap_or(""));
        let token = base64::engine::general_purpose::STANDARD.encode(pair);
        self.header("authorization", format!("Basic {token}"))
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> RequestBuilder {
        self.body = body.into();
        self
    }

    /// A JSON body; sets the content type unless one was set already.
    pub fn json(mut self, value: &serde_json::Value) -> RequestBuilder {
        self.body = serde_json::to_vec(value).expect("serialise");
        if !self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            self = self.header("content-type", "application/json");
        }
        self
    }

    /// Sends and reads the answer's JSON body; panics (a test failure) on any error.
    pub async fn json_answer(self) -> serde_json::Value {
        self.send().await.expect("send").json().await.expect("JSON")
    }

    pub async fn send(self) -> Result<Response, String> {
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| format!("connect {}: {e}", self.authority))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        let mut request = hyper::Request::builder()
            .method(self.method)
            .uri(&self.path)
            .header("host", &self.authority);
        let headers = request.headers_mut().expect("valid request head");
        for (name, value) in &self.headers {
            headers.insert(
                HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?,
                HeaderValue::from_str(value).map_err(|e| e.to_string())?,
            );
        }
        let request = request
            .body(Full::new(Bytes::from(self.body)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}

pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Response {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    pub async fn text(self) -> Result<String, String> {
        String::from_utf8(self.body.to_vec()).map_err(|e| e.to_string())
    }

    pub async fn json(self) -> Result<serde_json::Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| e.to_string())
    }
}
