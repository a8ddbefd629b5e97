//! The gate: one middleware that runs the kit's checks in a fixed order.
//!
//! Every request to a gated router goes through these steps, and the first one
//! that answers ends the request:
//!
//! 1. **Log**: the body is read (up to [`Gate::with_max_body_bytes`], 1 MiB by default) and the request
//!    is appended to the [`RequestLog`]: every request is logged, even one that
//!    fails the next steps.
//! 2. **Auth**: a missing or wrong bearer key gets 401 and the style's message.
//!    Nothing else is looked at first, not even whether the route exists.
//! 3. **Body size**: a body over the cap gets 413.
//! 4. **Fault**: an `X-Sandbox-Fault` header forces its outcome (see
//!    [`crate::fault`]); an unknown value gets 400. Injected faults do not
//!    count against the rate limits, so tests can inject freely.
//! 5. **Rate limit**: the request counts against the buckets the classifier
//!    names; over a limit it gets 429 with `Retry-After: <seconds>`.
//! 6. The router's handler runs, with the body it would have had.
//!
//! With [`Gate::with_rate_limit_headers`], every response after step 2 (so
//! every response to an authenticated key: faults, 413s and 429s included)
//! also carries `X-Ratelimit-Limit`, `X-Ratelimit-Remaining` and
//! `X-Ratelimit-Reset` for one bucket, read after the request was counted.
//! The reset is the wall-clock time, in milliseconds since the Unix epoch, at
//! which the oldest request in the window leaves it and frees a slot (now,
//! when the key has no request in the window). A 401 has no key to report
//! on and carries none of them.
//!
//! **Architecture Invariant:** the gate knows nothing of a sandbox's routes
//! beyond what the bucket classifier tells it; error bodies come only from the
//! [`ErrorStyle`].

use std::{
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, Method, StatusCode, header::RETRY_AFTER, request::Parts},
    middleware::{self, Next},
    response::Response,
};
use serde_json::Value;

use crate::{
    ErrorStyle, LoggedRequest, RateLimiter, RequestLog,
    auth::check_bearer,
    fault::{FAULT_HEADER, FAULT_RETRY_AFTER_SECS, Fault},
};

/// The default hold time of an injected `timeout` fault.
pub const DEFAULT_FAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default cap on a request body, 1 MiB: far above any real request to
/// the sandboxed APIs, low enough that a runaway client cannot exhaust memory.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// The response header naming the bucket's limit per window (added by
/// [`Gate::with_rate_limit_headers`]).
pub const RATE_LIMIT_HEADER: &str = "x-ratelimit-limit";

/// The response header counting the requests left in the current window.
pub const RATE_REMAINING_HEADER: &str = "x-ratelimit-remaining";

/// The response header giving, in milliseconds since the Unix epoch, when the
/// next slot frees.
pub const RATE_RESET_HEADER: &str = "x-ratelimit-reset";

/// Names the rate-limit buckets a request counts against, from its method and
/// full path.
pub type BucketClassifier = Arc<dyn Fn(&Method, &str) -> Vec<String> + Send + Sync>;

/// Auth, rate limiting, fault injection and request logging for one sandbox.
///
/// Build it with [`Gate::new`] and the `with_*` methods, then wrap the
/// sandbox's finished router (routes and fallbacks added) with [`Gate::wrap`].
#[derive(Clone)]
pub struct Gate {
    /// The API key the sandbox accepts.
    api_key: String,
    /// Further keys accepted, as during a key rotation.
    also_accepted: Vec<String>,
    /// Spells the errors the gate produces.
    style: Arc<dyn ErrorStyle>,
    /// The limiter, if the sandbox limits rates at all.
    limiter: Option<Arc<RateLimiter>>,
    /// Picks the limiter buckets of each request.
    buckets: BucketClassifier,
    /// How long an injected `timeout` fault holds its request before the 504.
    fault_timeout: Duration,
    /// Where every request is recorded; shared with the sandbox's handle.
    log: RequestLog,
    /// Largest accepted request body.
    max_body_bytes: usize,
    /// The bucket whose status the `X-Ratelimit-*` headers report, if any.
    rate_headers: Option<String>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("limiter", &self.limiter)
            .field("fault_timeout", &self.fault_timeout)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("rate_headers", &self.rate_headers)
            .finish_non_exhaustive()
    }
}

impl Gate {
    /// A gate accepting `api_key`, without rate limits, with a fresh request
    /// log, the default fault timeout and the default body cap.
    pub fn new(api_key: impl Into<String>, style: impl ErrorStyle) -> Self {
        Self {
            api_key: api_key.into(),
            also_accepted: Vec::new(),
            style: Arc::new(style),
            limiter: None,
            buckets: Arc::new(|_, _| Vec::new()),
            fault_timeout: DEFAULT_FAULT_TIMEOUT,
            log: RequestLog::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            rate_headers: None,
        }
    }

    /// Limits rates with `limiter`; `buckets` names the buckets each request
    /// counts against (for example `["default"]`, plus `"bulk"` on a bulk route).
    pub fn with_rate_limiter<F>(mut self, limiter: Arc<RateLimiter>, buckets: F) -> Self
    where
        F: Fn(&Method, &str) -> Vec<String> + Send + Sync + 'static,
    {
        self.limiter = Some(limiter);
        self.buckets = Arc::new(buckets);
        self
    }

    /// Accepts `keys` too, beside the gate's API key: an upstream in the
    /// middle of a key rotation, where the old key and the new both work.
    pub fn also_accepting(mut self, keys: impl IntoIterator<Item = String>) -> Self {
        self.also_accepted.extend(keys);
        self
    }

    /// Sets how long an injected `timeout` fault holds its request.
    pub fn with_fault_timeout(mut self, timeout: Duration) -> Self {
        self.fault_timeout = timeout;
        self
    }

    /// Records requests into `log` (a clone of a log the caller keeps).
    pub fn with_request_log(mut self, log: RequestLog) -> Self {
        self.log = log;
        self
    }

    /// Sets the largest accepted request body, in bytes.
    pub fn with_max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// Adds `X-Ratelimit-Limit`, `-Remaining` and `-Reset` for `bucket` to
    /// every response to an authenticated request (see the module docs).
    ///
    /// Needs a limiter with that bucket ([`Self::with_rate_limiter`]);
    /// without one, no headers are added.
    pub fn with_rate_limit_headers(mut self, bucket: impl Into<String>) -> Self {
        self.rate_headers = Some(bucket.into());
        self
    }

    /// The request log this gate records into.
    pub fn request_log(&self) -> &RequestLog {
        &self.log
    }

    /// Wraps `router` (routes and fallbacks already added) with the gate.
    pub fn wrap(self, router: Router) -> Router {
        router.layer(middleware::from_fn_with_state(Arc::new(self), run_gate))
    }
}

/// The middleware body; see the module docs for the order of the steps.
async fn run_gate(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    tracing::debug!(method = %parts.method, %path, "request");

    let bytes = axum::body::to_bytes(body, gate.max_body_bytes).await;
    let fault_header = parts
        .headers
        .get(FAULT_HEADER)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let logged_body = match &bytes {
        Ok(bytes) if !bytes.is_empty() => serde_json::from_slice(bytes).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    gate.log.record(LoggedRequest {
        method: parts.method.as_str().to_owned(),
        path: path.clone(),
        query: parts.uri.query().map(str::to_owned),
        body: logged_body,
        fault: fault_header.clone(),
        api_key: bearer_token(&parts.headers),
    });

    let accepted = gate
        .also_accepted
        .iter()
        .find_map(|key| check_bearer(&parts.headers, key).ok());
    let key = match accepted.map_or_else(|| check_bearer(&parts.headers, &gate.api_key), Ok) {
        Ok(key) => key,
        Err(err) => {
            tracing::debug!(%path, %err, "rejected: unauthenticated");
            return gate.style.default_response(StatusCode::UNAUTHORIZED);
        }
    };

    let response = authenticated(&gate, key, parts, bytes, fault_header, next).await;
    with_rate_headers(&gate, key, response)
}

/// The token of an `Authorization: Bearer TOKEN` header, for the log.
fn bearer_token(headers: &axum::http::HeaderMap) -> Option<String> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
}

/// Steps 3 to 6, for a request that passed authentication with `key`.
async fn authenticated(
    gate: &Gate,
    key: &str,
    parts: Parts,
    bytes: Result<axum::body::Bytes, axum::Error>,
    fault_header: Option<String>,
    next: Next,
) -> Response {
    let path = parts.uri.path();
    let Ok(bytes) = bytes else {
        let message = format!(
            "The request body is larger than {} bytes.",
            gate.max_body_bytes
        );
        return gate.style.response(StatusCode::PAYLOAD_TOO_LARGE, &message);
    };

    if let Some(value) = fault_header {
        return match value.parse::<Fault>() {
            Ok(fault) => inject(gate, fault).await,
            Err(err) => gate
                .style
                .response(StatusCode::BAD_REQUEST, &err.to_string()),
        };
    }

    if let Some(limiter) = &gate.limiter {
        let buckets = (gate.buckets)(&parts.method, path);
        let buckets: Vec<&str> = buckets.iter().map(String::as_str).collect();
        if let Err(limited) = limiter.acquire(key, &buckets) {
            tracing::debug!(%path, bucket = %limited.bucket, "rejected: rate limited");
            return too_many_requests(gate, limited.retry_after_secs());
        }
    }

    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Adds the `X-Ratelimit-*` headers for `key`, if the gate reports them.
fn with_rate_headers(gate: &Gate, key: &str, mut response: Response) -> Response {
    let (Some(bucket), Some(limiter)) = (&gate.rate_headers, &gate.limiter) else {
        return response;
    };
    let Some(status) = limiter.status(key, bucket) else {
        return response;
    };
    let reset_ms = (SystemTime::now() + status.reset_after)
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    let headers = response.headers_mut();
    headers.insert(RATE_LIMIT_HEADER, HeaderValue::from(status.limit));
    headers.insert(RATE_REMAINING_HEADER, HeaderValue::from(status.remaining));
    headers.insert(RATE_RESET_HEADER, HeaderValue::from(reset_ms));
    response
}

/// Produces the response an injected fault asks for.
async fn inject(gate: &Gate, fault: Fault) -> Response {
    tracing::debug!(%fault, "injecting fault");
    match fault {
        Fault::ServerError => gate
            .style
            .default_response(StatusCode::INTERNAL_SERVER_ERROR),
        Fault::Unavailable => gate.style.default_response(StatusCode::SERVICE_UNAVAILABLE),
        Fault::RateLimited => too_many_requests(gate, FAULT_RETRY_AFTER_SECS),
        Fault::Timeout => {
            // Only this request's task sleeps; the server keeps serving others.
            tokio::time::sleep(gate.fault_timeout).await;
            gate.style.default_response(StatusCode::GATEWAY_TIMEOUT)
        }
    }
}

/// A 429 in the gate's style with a `Retry-After` header.
fn too_many_requests(gate: &Gate, retry_after_secs: u64) -> Response {
    let mut response = gate.style.default_response(StatusCode::TOO_MANY_REQUESTS);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
    response
}
