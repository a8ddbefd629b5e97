//! HTTP through the host, with JSON in and out and the shared error mapping.
//!
//! The host sends the request, so its policy applies: allowed hosts and
//! methods, address checks, and confirmation for anything but `GET`/`HEAD`
//! in tools that are not read-only. Credentials the operator configured for
//! the destination are added by the host and never visible here.
//!
//! Every error from [`Request::send`] and [`Response::json`] starts with
//! the request it concerns (`GET /v1/orders: …`, the URL's path without its
//! query), so the model and the operator see which request failed. Build
//! URLs from the operator's base URL with [`join`].
//!
//! ```no_run
//! # use toolhost_sdk::{http, ToolError};
//! # #[derive(serde::Deserialize)] struct Order { id: u64 }
//! # fn f(base: &str) -> Result<(), ToolError> {
//! let order: Order = http::Request::get(format!("{base}/orders/42"))
//!     .send()?
//!     .error_for_status()?
//!     .json()?;
//! # Ok(()) }
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::toolhost::plugin0_1_0::http as wit;
use crate::tool::{ErrorCode, ToolError};

pub use wit::Method;

impl Method {
    /// The method's name: `GET`, `POST`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
        }
    }
}

/// `path` under the API root `base`, with exactly one `/` between them
/// whatever the operator wrote: `join("https://api.example.com/v1/",
/// "/orders")` is `https://api.example.com/v1/orders`.
pub fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// A request being built. Send it with [`Request::send`].
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    timeout_ms: Option<u32>,
}

impl Request {
    /// A request with `method` to `url`.
    pub fn new(method: Method, url: impl Into<String>) -> Self {
        Request {
            method,
            url: url.into(),
            headers: vec![("accept".into(), "application/json".into())],
            body: None,
            timeout_ms: None,
        }
    }

    /// A `GET` request.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new(Method::Get, url)
    }

    /// A `POST` request.
    pub fn post(url: impl Into<String>) -> Self {
        Self::new(Method::Post, url)
    }

    /// Appends query parameters, percent-encoded. Repeat a key to send a list.
    pub fn query<K: AsRef<str>, V: AsRef<str>>(mut self, pairs: &[(K, V)]) -> Self {
        if pairs.is_empty() {
            return self;
        }
        let mut encoded = form_urlencoded::Serializer::new(String::new());
        for (k, v) in pairs {
            encoded.append_pair(k.as_ref(), v.as_ref());
        }
        let sep = if self.url.contains('?') { '&' } else { '?' };
        self.url = format!("{}{sep}{}", self.url, encoded.finish());
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets a JSON body (and `content-type: application/json`).
    pub fn json<B: Serialize + ?Sized>(mut self, body: &B) -> Result<Self, ToolError> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| ToolError::internal(format!("cannot encode the request body: {e}")))?;
        self.headers
            .push(("content-type".into(), "application/json".into()));
        self.body = Some(bytes);
        Ok(self)
    }

    /// Sets a timeout for this request; the host caps it at its own limit.
    pub fn timeout_ms(mut self, millis: u32) -> Self {
        self.timeout_ms = Some(millis);
        self
    }

    /// The URL, query included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `METHOD path`: the method and the URL's path without its query,
    /// as errors name the request.
    pub fn request_line(&self) -> String {
        format!("{} {}", self.method.as_str(), url_path(&self.url))
    }

    /// Sends the request. A response of any status is `Ok`; see
    /// [`Response::error_for_status`]. Failures to get a response become
    /// tool errors whose message starts with [`Request::request_line`]: a
    /// policy refusal is `PERMISSION_DENIED`, a timeout or a connection
    /// failure `TRANSIENT`.
    pub fn send(self) -> Result<Response, ToolError> {
        let request_line = self.request_line();
        let request = wit::Request {
            method: self.method,
            url: self.url,
            headers: self.headers,
            body: self.body,
            timeout_ms: self.timeout_ms,
        };
        match wit::send(&request) {
            Ok(r) => Ok(Response {
                status: r.status,
                headers: r.headers,
                body: r.body,
                request_line,
            }),
            Err(e) => Err(prefixed(transport_error(e), &request_line)),
        }
    }
}

/// The path of `url` (after the scheme and authority), without its query
/// or fragment; `/` when it has none.
fn url_path(url: &str) -> &str {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme
        .find('/')
        .map_or("/", |slash| &after_scheme[slash..]);
    let end = path.find(['?', '#']).unwrap_or(path.len());
    &path[..end]
}

/// `error` with `request_line` in front of its message.
fn prefixed(mut error: ToolError, request_line: &str) -> ToolError {
    if !request_line.is_empty() {
        error.message = format!("{request_line}: {}", error.message);
    }
    error
}

fn transport_error(e: wit::Error) -> ToolError {
    match e {
        wit::Error::Denied(why) => ToolError::new(
            ErrorCode::PermissionDenied,
            format!("the host refused the request: {why}"),
        )
        .with_hint("the operator's policy in toolhost.toml decides what a plugin may reach"),
        wit::Error::InvalidRequest(why) => ToolError::internal(format!("invalid request: {why}")),
        wit::Error::Timeout => ToolError::transient("the upstream service did not answer in time"),
        wit::Error::ConnectionFailed(why) => {
            ToolError::transient(format!("cannot reach the upstream service: {why}"))
        }
        wit::Error::BodyTooLarge(limit) => ToolError::internal(format!(
            "the upstream response exceeded the host's body limit of {limit} bytes"
        )),
        wit::Error::TooManyRequests(limit) => ToolError::internal(format!(
            "this call reached the host's limit of {limit} HTTP requests per call"
        )),
    }
}

/// A complete response.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// The request this answers, as [`Request::request_line`] names it
    /// (empty in a response made by hand); errors start with it.
    pub request_line: String,
}

impl Response {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Parses the body as JSON. The error's message starts with the
    /// request's [`Request::request_line`].
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            prefixed(
                ToolError::internal(format!(
                    "the upstream service sent an unexpected response (HTTP {}): {e}",
                    self.status
                )),
                &self.request_line,
            )
        })
    }

    /// `Ok(self)` for 2xx, otherwise the mapped [`ToolError`]
    /// (see [`error_for_status`]).
    pub fn error_for_status(self) -> Result<Self, ToolError> {
        if self.is_success() {
            Ok(self)
        } else {
            Err(error_for_status(&self))
        }
    }

    /// The `Retry-After` header in milliseconds, when it holds seconds.
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.header("retry-after")?
            .trim()
            .parse::<u64>()
            .ok()
            .map(|s| s.saturating_mul(1000))
    }
}

/// Maps an unsuccessful response to the shared error vocabulary:
///
/// | status | code |
/// |---|---|
/// | 400, 422 | `VALIDATION_ERROR` |
/// | 401, 403 | `PERMISSION_DENIED` |
/// | 404 | `NOT_FOUND` |
/// | 409 | `CONFLICT` |
/// | 429 | `RATE_LIMIT`, with `retry_after_ms` from `Retry-After` |
/// | 5xx | `TRANSIENT` |
/// | other | `INTERNAL` |
///
/// The message is the body's `message` field when there is one.
pub fn error_for_status(response: &Response) -> ToolError {
    let status = response.status;
    let code = match status {
        400 | 422 => ErrorCode::ValidationError,
        401 | 403 => ErrorCode::PermissionDenied,
        404 => ErrorCode::NotFound,
        409 => ErrorCode::Conflict,
        429 => ErrorCode::RateLimit,
        500..=599 => ErrorCode::Transient,
        _ => ErrorCode::Internal,
    };
    let message = serde_json::from_slice::<serde_json::Value>(&response.body)
        .ok()
        .and_then(|v| v.get("message")?.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("the upstream service answered HTTP {status}"));
    let mut error = ToolError::new(code, message);
    if code == ErrorCode::RateLimit {
        error.retry_after_ms = Some(response.retry_after_ms().unwrap_or(60_000));
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_puts_one_slash_between_base_and_path() {
        for base in ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"] {
            for path in ["/orders/1", "orders/1"] {
                assert_eq!(join(base, path), "http://127.0.0.1:8080/v1/orders/1");
            }
        }
    }

    #[test]
    fn a_request_is_named_by_method_and_path_without_the_query() {
        let request = Request::get("https://api.example.com/v1/orders")
            .query(&[("search", "jon@example.com")]);
        assert_eq!(request.request_line(), "GET /v1/orders");
        assert_eq!(
            Request::post("http://127.0.0.1:9/x#frag").request_line(),
            "POST /x"
        );
        assert_eq!(
            Request::new(Method::Patch, "http://127.0.0.1:9").request_line(),
            "PATCH /"
        );
    }

    #[test]
    fn an_unreadable_body_names_the_request() {
        let response = Response {
            status: 200,
            body: b"not json".to_vec(),
            request_line: "GET /v1/orders".into(),
            ..Response::default()
        };
        let error = response.json::<serde_json::Value>().unwrap_err();
        assert!(
            error.message.starts_with(
                "GET /v1/orders: the upstream service sent an unexpected response (HTTP 200)"
            ),
            "{error}"
        );
    }
}
