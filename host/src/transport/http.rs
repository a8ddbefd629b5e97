//! MCP over Streamable HTTP: one endpoint (`/mcp`), both protocol eras,
//! every resource bounded.
//!
//! The protocol itself is rmcp's `StreamableHttpService` (legacy sessions
//! with `Mcp-Session-Id`, server-to-client requests on the response stream,
//! the GET stream, DELETE; stateless 2026-07-28 requests). This module puts
//! it on a socket and bounds what a client can hold. A request travels:
//!
//! 1. [`serve`]'s accept loop: a connection takes one of
//!    `http.max_connections` permits, or is closed at once;
//! 2. hyper's HTTP/1 connection: headers must arrive within
//!    `http.header_read_timeout_secs` (slow-header clients are cut off);
//! 3. the router: `/healthz`, `/readyz`, the protected-resource metadata
//!    (with `[auth]`), or `/mcp`, where the layers run outermost first:
//!    - `refuse_while_draining`: after SIGTERM/SIGINT, new work goes
//!      elsewhere (503) while existing sessions finish;
//!    - with `[auth]`, [`require_identity`](crate::auth::http::require_identity):
//!      the bearer token establishes the caller's `Identity` or the request
//!      is refused (401/403) before anything runs;
//!    - `limit_per_caller`: requests in flight and event streams per
//!      identity (`http.requests_per_identity`, `http.streams_per_identity`),
//!      held until the response body ends, so one caller's flood meets 429s
//!      while another's calls go on; a legacy session belongs to the caller
//!      that opened it (another caller is told it does not exist);
//!    - `answer_what_rmcp_would_not`: a POSTed JSON body is read (up to
//!      `host.max_message_bytes`, else 413; within
//!      `http.body_read_timeout_secs`, else 408) and triaged as a stdio line is
//!      ([`super::triage`]): malformed JSON, a batch, a request rmcp cannot
//!      decode or whose params do not fit get their JSON-RPC error (`-32700`,
//!      `-32600`, `-32602`) with HTTP 400; the rest goes on;
//! 4. rmcp: `Host` and `Origin` checks (DNS-rebinding protection), media
//!    types, sessions, then [`Gateway`].
//!
//! Shutdown ([`until_signal`]): stop accepting, wait up to
//! `http.shutdown_grace_secs` for the POSTs in flight (their responses
//! included; a `subscriptions/listen` stream does not count), close the
//! streams, exit 0. See ADR 0011.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::StreamExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::triage::{Triage, too_long, triage};
use crate::auth::{Authenticator, Identity};
use crate::config::{HttpSettings, UnmatchedFiles};
use crate::server::Gateway;

/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";

/// How long open connections get to close after the streams were told to
/// end, before the process exits anyway.
const CONNECTION_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What the HTTP transport needs of the configuration (all restart-only).
pub struct HttpOptions {
    /// `[http]`.
    pub settings: HttpSettings,
    /// `host.max_message_bytes`: the largest request body.
    pub max_body: usize,
    /// Whether `GET /metrics` is served on this listener (no
    /// `host.metrics` listener of its own).
    pub metrics_here: bool,
}

/// Serves `gateway` over Streamable HTTP on `listener` until SIGTERM or
/// SIGINT, authenticating callers with `auth` if given.
pub async fn serve(
    gateway: Gateway,
    listener: TcpListener,
    auth: Option<Authenticator>,
    options: HttpOptions,
) -> Result<()> {
    let HttpOptions {
        settings,
        max_body,
        metrics_here,
    } = options;
    let local = listener.local_addr()?;
    let streams_closed = CancellationToken::new();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(settings.session_idle);
    let state = Arc::new(HttpState {
        gateway: gateway.clone(),
        draining: AtomicBool::new(false),
        posts_in_flight: tokio::sync::watch::Sender::new(0),
        callers: CallerLimits::new(&settings),
        max_body,
        body_read_timeout: settings.body_read_timeout,
        sessions: Arc::new(sessions),
        session_owners: Mutex::new(HashMap::new()),
    });
    tokio::spawn(housekeeping(Arc::downgrade(&state)));
    let app = router(
        state.clone(),
        &settings,
        local,
        max_body,
        &streams_closed,
        auth.as_ref(),
        metrics_here,
    );
    tracing::info!("serving MCP over HTTP at http://{local}{MCP_PATH}");

    let connections = accept_until_signal(listener, app, &settings).await;

    state.draining.store(true, Ordering::SeqCst);
    let mut posts = state.posts_in_flight.subscribe();
    let running = *posts.borrow();
    tracing::info!(
        "shutting down: no new connections; waiting up to {:?} for {running} request(s) in \
         flight (http.shutdown_grace_secs)",
        settings.shutdown_grace
    );
    let finished = posts.wait_for(|n| *n == 0);
    if tokio::time::timeout(settings.shutdown_grace, finished)
        .await
        .is_err()
    {
        tracing::warn!(
            "{} request(s) still running after http.shutdown_grace_secs; ending them",
            *state.posts_in_flight.borrow()
        );
    }
    streams_closed.cancel();
    if tokio::time::timeout(CONNECTION_CLOSE_WAIT, connections.shutdown())
        .await
        .is_err()
    {
        tracing::debug!("some connections did not close in time");
    }
    tracing::info!("stopped");
    Ok(())
}

/// What the HTTP layers share.
struct HttpState {
    gateway: Gateway,
    /// Set once shutdown began: new work is refused with 503.
    draining: AtomicBool,
    /// POSTs whose responses have not ended, but for `subscriptions/listen`
    /// streams: what shutdown waits for.
    posts_in_flight: tokio::sync::watch::Sender<usize>,
    callers: CallerLimits,
    /// `host.max_message_bytes`: the largest request body.
    max_body: usize,
    /// `http.body_read_timeout_secs`: how long a request body may take.
    body_read_timeout: Duration,
    /// The legacy sessions rmcp holds.
    sessions: Arc<LocalSessionManager>,
    /// Who opened each legacy session: only that caller may use it.
    session_owners: Mutex<HashMap<String, String>>,
}

/// How often [`housekeeping`] runs.
const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(5);

/// Every few seconds: forgets the owners of sessions rmcp has closed, and
/// sets the open-sessions gauge.
async fn housekeeping(state: std::sync::Weak<HttpState>) {
    let mut tick = tokio::time::interval(HOUSEKEEPING_EVERY);
    loop {
        tick.tick().await;
        let Some(state) = state.upgrade() else { return };
        let open = state.sessions.sessions.read().await;
        ::metrics::gauge!(crate::metrics::HTTP_SESSIONS_OPEN).set(open.len() as f64);
        state
            .session_owners
            .lock()
            .expect("not poisoned")
            .retain(|id, _| open.contains_key(id.as_str()));
    }
}

/// Counts one open event stream (a GET stream or a `subscriptions/listen`)
/// in `toolhost_http_streams_open` for as long as it lives.
struct StreamOpen;

impl StreamOpen {
    fn start() -> StreamOpen {
        ::metrics::gauge!(crate::metrics::HTTP_STREAMS_OPEN).increment(1.0);
        StreamOpen
    }
}

impl Drop for StreamOpen {
    fn drop(&mut self) {
        ::metrics::gauge!(crate::metrics::HTTP_STREAMS_OPEN).decrement(1.0);
    }
}

/// Counts one POST in flight for as long as it lives.
struct PostInFlight(Arc<HttpState>);

impl PostInFlight {
    fn start(state: Arc<HttpState>) -> PostInFlight {
        state.posts_in_flight.send_modify(|n| *n += 1);
        PostInFlight(state)
    }
}

impl Drop for PostInFlight {
    fn drop(&mut self) {
        self.0.posts_in_flight.send_modify(|n| *n -= 1);
    }
}

/// `response`, with `guard` kept alive until its body has been sent or
/// dropped.
fn hold_until_body_ends<T: Send + Sync + 'static>(response: Response, guard: T) -> Response {
    let (parts, body) = response.into_parts();
    let body = Body::from_stream(body.into_data_stream().map(move |chunk| {
        let _held = &guard;
        chunk
    }));
    Response::from_parts(parts, body)
}

/// The application: `/mcp` behind its layers, and the health endpoints.
fn router(
    state: Arc<HttpState>,
    settings: &HttpSettings,
    local: SocketAddr,
    max_body: usize,
    streams_closed: &CancellationToken,
    auth: Option<&crate::auth::Authenticator>,
    metrics_here: bool,
) -> Router {
    let mut allowed_hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
        .into_iter()
        .map(String::from)
        .collect();
    allowed_hosts.push(local.ip().to_string());
    allowed_hosts.push(local.to_string());
    allowed_hosts.extend(settings.allowed_hosts.iter().cloned());
    // The server's own origin is no rebinding: a page there could only
    // have come from this port, which serves none. A rebinding page's
    // `Origin` names the attacker's host, and is refused.
    let mut allowed_origins = settings.allowed_origins.clone();
    allowed_origins.extend(own_origins(local));
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts)
        .with_allowed_origins(allowed_origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(max_body)
        .with_cancellation_token(streams_closed.clone());
    let gateway = state.gateway.clone();
    let mcp =
        StreamableHttpService::new(move || Ok(gateway.clone()), state.sessions.clone(), config);

    let mut endpoint = Router::new()
        .route_service(MCP_PATH, mcp)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            answer_what_rmcp_would_not,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            limit_per_caller,
        ));
    if let Some(auth) = auth {
        endpoint = endpoint.layer(middleware::from_fn_with_state(
            auth.clone(),
            crate::auth::http::require_identity,
        ));
    }
    let endpoint = endpoint.layer(middleware::from_fn_with_state(
        state.clone(),
        refuse_while_draining,
    ));
    let mut app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readiness).with_state(state))
        .merge(endpoint);
    if let Some(auth) = auth {
        app = app.merge(crate::auth::http::metadata_router(auth));
    }
    if metrics_here {
        // Behind the same authentication as `/mcp`: a scraper sends a token.
        let mut metrics = crate::metrics::router(crate::metrics::install());
        if let Some(auth) = auth {
            metrics = metrics.layer(middleware::from_fn_with_state(
                auth.clone(),
                crate::auth::http::require_identity,
            ));
        }
        app = app.merge(metrics);
    }
    app
}

/// The origins of the listen address itself: `http://127.0.0.1:PORT` (the
/// address as bound) and, on loopback, `http://localhost:PORT`.
fn own_origins(local: SocketAddr) -> Vec<String> {
    let mut origins = vec![format!("http://{local}")];
    if local.ip().is_loopback() {
        origins.push(format!("http://localhost:{}", local.port()));
    }
    origins
}

/// `/readyz`: ready once the initial load is in and at least one tool is
/// served; not ready (503 with `Retry-After`) while shutting down.
async fn readiness(State(state): State<Arc<HttpState>>) -> Response {
    let registry = state.gateway.registry();
    let tools = registry.tools().count();
    let (ready, reason) = if state.draining.load(Ordering::SeqCst) {
        (false, "shutting down")
    } else if !state.gateway.is_loaded() {
        (false, "the plugin directory is still loading")
    } else if tools == 0 && registry.config().unmatched_files == UnmatchedFiles::Skip {
        (
            false,
            "no tools are served: with host.unmatched_files = \"skip\" only files a \
             [plugins.NAME] block names are loaded; check the blocks, the plugin directory \
             and the log",
        )
    } else if tools == 0 {
        (
            false,
            "no tools are served: check the plugin directory and the log",
        )
    } else {
        (true, "serving")
    };
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({ "ready": ready, "reason": reason, "tools": tools });
    let mut response = (status, axum::Json(body)).into_response();
    if !ready {
        // Every 503 this transport sends says when to ask again.
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// After shutdown began, requests outside an existing legacy session are
/// answered 503 (a load balancer retries them elsewhere); a session's own
/// requests (an elicitation's answer, say) still reach it. Counts POSTs in
/// flight for shutdown to wait for.
async fn refuse_while_draining(
    State(state): State<Arc<HttpState>>,
    request: Request,
    next: Next,
) -> Response {
    if state.draining.load(Ordering::SeqCst) && !request.headers().contains_key("mcp-session-id") {
        let mut response = (
            StatusCode::SERVICE_UNAVAILABLE,
            "this server is shutting down; retry the request (on another replica)\n",
        )
            .into_response();
        let headers = response.headers_mut();
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    if request.method() != Method::POST || is_listen_stream(&request) {
        return next.run(request).await;
    }
    let in_flight = PostInFlight::start(state);
    hold_until_body_ends(next.run(request).await, in_flight)
}

/// Reads a POSTed JSON body and answers, as stdio does, what rmcp would
/// drop or misanswer (see [`super::triage`]); hands the rest on.
async fn answer_what_rmcp_would_not(
    State(state): State<Arc<HttpState>>,
    request: Request,
    next: Next,
) -> Response {
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    if request.method() != Method::POST || !is_json {
        // rmcp answers other methods and media types itself.
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        state.body_read_timeout,
        axum::body::to_bytes(body, state.max_body),
    );
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return json_rpc_answer(StatusCode::PAYLOAD_TOO_LARGE, &too_long(state.max_body));
        }
        Err(_) => {
            return (
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {:?} (http.body_read_timeout_secs)\n",
                    state.body_read_timeout
                ),
            )
                .into_response();
        }
    };
    match triage(&bytes) {
        Triage::Deliver(mut message) => {
            let mut parts = parts;
            // A listen stream is acknowledged before any handler runs: the
            // server narrows its resource URIs to what this caller may see
            // first.
            let identity = parts.extensions.get::<Identity>();
            let body = if state.gateway.narrow_listen_request(&mut message, identity) {
                match serde_json::to_vec(&message) {
                    Ok(narrowed) => {
                        parts
                            .headers
                            .insert(header::CONTENT_LENGTH, HeaderValue::from(narrowed.len()));
                        Body::from(narrowed)
                    }
                    Err(e) => {
                        tracing::error!("cannot encode a narrowed listen request: {e}");
                        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                    }
                }
            } else {
                Body::from(bytes)
            };
            next.run(Request::from_parts(parts, body)).await
        }
        Triage::Answer(answer) => {
            // A tools/call refused here is on the audit trail too.
            state
                .gateway
                .audit_malformed_call(&bytes, Some(&parts))
                .await;
            json_rpc_answer(StatusCode::BAD_REQUEST, &answer)
        }
        Triage::Skip => json_rpc_answer(
            StatusCode::BAD_REQUEST,
            &rmcp::model::ServerJsonRpcMessage::error(
                rmcp::ErrorData::new(
                    rmcp::model::ErrorCode::PARSE_ERROR,
                    "the request body is empty; POST one JSON-RPC message",
                    None,
                ),
                None,
            ),
        ),
        Triage::Ignore(why) => {
            tracing::info!("refused a POSTed message: {why}");
            (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response()
        }
    }
}

/// A JSON-RPC message as the whole response, with `status`.
fn json_rpc_answer(status: StatusCode, message: &rmcp::model::ServerJsonRpcMessage) -> Response {
    (status, axum::Json(message)).into_response()
}

/// Per-caller bounds on what is held open at once.
struct CallerLimits {
    requests: u32,
    streams: u32,
    callers: Mutex<HashMap<String, Arc<CallerPermits>>>,
}

/// One caller's permits.
struct CallerPermits {
    requests: Arc<Semaphore>,
    streams: Arc<Semaphore>,
}

/// Callers remembered before idle ones are forgotten.
const REMEMBERED_CALLERS: usize = 4096;

impl CallerLimits {
    fn new(settings: &HttpSettings) -> CallerLimits {
        CallerLimits {
            requests: settings.requests_per_identity,
            streams: settings.streams_per_identity,
            callers: Mutex::new(HashMap::new()),
        }
    }

    /// A permit for one more request (or event stream, `stream`) by `caller`,
    /// or the key of the limit it would pass.
    fn try_acquire(
        &self,
        caller: &str,
        stream: bool,
    ) -> Result<OwnedSemaphorePermit, (&'static str, u32)> {
        let permits = {
            let mut callers = self.callers.lock().expect("not poisoned");
            if callers.len() >= REMEMBERED_CALLERS && !callers.contains_key(caller) {
                // Forget callers holding nothing.
                callers.retain(|_, p| {
                    p.requests.available_permits() < self.requests as usize
                        || p.streams.available_permits() < self.streams as usize
                });
            }
            callers
                .entry(caller.to_string())
                .or_insert_with(|| {
                    Arc::new(CallerPermits {
                        requests: Arc::new(Semaphore::new(self.requests as usize)),
                        streams: Arc::new(Semaphore::new(self.streams as usize)),
                    })
                })
                .clone()
        };
        let (semaphore, limit) = if stream {
            (
                &permits.streams,
                ("http.streams_per_identity", self.streams),
            )
        } else {
            (
                &permits.requests,
                ("http.requests_per_identity", self.requests),
            )
        };
        semaphore.clone().try_acquire_owned().map_err(|_| limit)
    }
}

/// Whether `request` opens a 2026-07-28 `subscriptions/listen` stream (a
/// POST whose response lasts as long as the client listens).
fn is_listen_stream(request: &Request) -> bool {
    request
        .headers()
        .get("mcp-method")
        .is_some_and(|m| m == "subscriptions/listen")
}

/// Holds a permit per request (per stream for a GET stream or a
/// `subscriptions/listen`) for the caller, until the response body has been
/// sent or dropped; over the limit, 429.
async fn limit_per_caller(
    State(state): State<Arc<HttpState>>,
    request: Request,
    next: Next,
) -> Response {
    let caller = request
        .extensions()
        .get::<Identity>()
        .map_or_else(|| "anonymous".to_string(), Identity::key);
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(id) = &session {
        let owner = state
            .session_owners
            .lock()
            .expect("not poisoned")
            .get(id)
            .cloned();
        if owner.is_some_and(|owner| owner != caller) {
            // Another caller's session does not exist for this one.
            tracing::info!(caller, "refused a request naming another caller's session");
            return (StatusCode::NOT_FOUND, "Not Found: Session not found\n").into_response();
        }
    }
    let stream = request.method() == Method::GET || is_listen_stream(&request);
    let permit = match state.callers.try_acquire(&caller, stream) {
        Ok(permit) => permit,
        Err((key, limit)) => {
            tracing::info!(caller, "refused a request over {key} ({limit})");
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many {} open for this caller ({key} = {limit}); retry when one has \
                     finished\n",
                    if stream { "streams" } else { "requests" }
                ),
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        }
    };
    let deleting = request.method() == Method::DELETE;
    let open = stream.then(StreamOpen::start);
    let response = next.run(request).await;
    if let Some(id) = &session {
        if deleting && response.status().is_success() {
            state
                .session_owners
                .lock()
                .expect("not poisoned")
                .remove(id);
        }
    } else if let Some(new) = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        state
            .session_owners
            .lock()
            .expect("not poisoned")
            .insert(new.to_string(), caller);
    }
    hold_until_body_ends(response, (permit, open))
}

/// Accepts connections and serves `app` on them until SIGTERM or SIGINT;
/// returns the open connections, to be closed gracefully.
async fn accept_until_signal(
    listener: TcpListener,
    app: Router,
    settings: &HttpSettings,
) -> hyper_util::server::graceful::GracefulShutdown {
    let connections = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(settings.max_connections as usize));
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_read_timeout);
    let signal = until_signal();
    tokio::pin!(signal);
    let mut warned_full = false;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: back off, keep serving.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut signal => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !warned_full {
                tracing::warn!(
                    "refusing connections: {} open (http.max_connections)",
                    settings.max_connections
                );
                warned_full = true;
            }
            drop(stream);
            continue;
        };
        warned_full = false;
        let app = app.clone();
        let service =
            hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                tower::ServiceExt::oneshot(app.clone(), request.map(Body::new))
            });
        let connection = connections.watch(http1.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%peer, "connection ended: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    connections
}

/// Resolves on the first SIGTERM or SIGINT.
pub async fn until_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("a SIGTERM handler can be installed");
        tokio::select! {
            _ = interrupt => tracing::info!("SIGINT received"),
            _ = terminate.recv() => tracing::info!("SIGTERM received"),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
        tracing::info!("interrupt received");
    }
}
