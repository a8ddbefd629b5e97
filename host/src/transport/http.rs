//! MCP over Streamable HTTP: one endpoint (`/mcp`), both protocol eras,
//! every resource bounded.
//!
//! The protocol itself is rmcp's `StreamableHttpService` (legacy sessions
//! with `Mcp-Session-Id`, server-to-client requests on the response stream,
//! the GET stream, DELETE; stateless 2026-07-28 requests). This module puts
//! it on a socket and bounds what a client can hold. A request travels:
//!
//! 1. [`serve`]'s accept loop, on a listener whose kernel queue holds a
//!    burst of connecting clients ([`listen`]): a connection takes one of
//!    `http.max_connections` permits, or is closed at once. With `[auth]`,
//!    a connection none of whose requests has authenticated yet is also one
//!    of at most `http.max_unauthenticated_connections`: past it the oldest
//!    such connection is closed to make room (`Unauthenticated`), so
//!    unauthenticated clients cannot hold every slot;
//! 2. hyper's HTTP/1 connection: headers must arrive within
//!    `http.header_read_timeout_secs` (slow-header clients are cut off);
//! 3. the router: `/healthz`, `/readyz`, the protected-resource metadata
//!    (with `[auth]`), `/metrics` (unless `host.metrics` serves it
//!    elsewhere) or `/mcp`, where the layers run outermost first:
//!    - `refuse_rebinding`: the `Host` and `Origin` checks
//!      ([`super::rebinding`], DNS-rebinding protection), before anything
//!      else looks at the request (`/metrics` too);
//!    - `refuse_while_draining`: after SIGTERM/SIGINT, new work goes
//!      elsewhere (503) while existing sessions finish: only a request
//!      naming a session that is open gets through;
//!    - with `[auth]`, `close_unauthenticated` and
//!      [`require_identity`](crate::auth::http::require_identity): the
//!      bearer token establishes the caller's `Identity` or the request is
//!      refused (401/403, and the connection closed) before anything runs;
//!      on `/metrics` the token must also grant `auth.metrics_scope`;
//!    - `limit_per_caller`: requests in flight and event streams per
//!      identity (`http.requests_per_identity`, `http.streams_per_identity`),
//!      so one caller's flood meets 429s while another's calls go on. A
//!      request's permit is given back as soon as the gateway has its
//!      answer, before it is sent (`Answering`; what rmcp answers itself,
//!      when the response body ends): a client never meets its own
//!      finished request. A stream's is held until the stream ends. A
//!      legacy session belongs to the caller that opened it (another
//!      caller is told it does not exist);
//!    - `answer_what_rmcp_would_not`: a POSTed JSON body is read (up to
//!      `host.max_message_bytes`, else 413; within
//!      `http.body_read_timeout_secs`, else 408) and triaged as a stdio line is
//!      ([`super::triage`]): malformed JSON, a batch, a request rmcp cannot
//!      decode or whose params do not fit get their JSON-RPC error (`-32700`,
//!      `-32600`, `-32602`) with HTTP 400. The method is the body's: an
//!      `Mcp-Method` header that names another is refused (`-32020`), and a
//!      `subscriptions/listen` body exchanges the request's permit for a
//!      stream's;
//!    - `bound_sessions`: a legacy `initialize` opens a session only
//!      within `http.sessions_per_identity` and `http.max_sessions` (else
//!      429); a session that sends no `notifications/initialized` within
//!      `http.uninitialized_session_idle_secs` is closed; DELETE answers 204;
//! 4. rmcp: media types, sessions, then [`Gateway`] (as `Answering`).
//!
//! Shutdown ([`until_signal`]): stop accepting, wait up to
//! `http.shutdown_grace_secs` for the POSTs in flight (their responses
//! included; a `subscriptions/listen` stream does not count), close the
//! streams, exit 0. See ADR 0011 and ADR 0033.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
use rmcp::model::{ClientJsonRpcMessage, RequestId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::rebinding::RebindingGuard;
use super::triage::{Triage, too_long, triage};
use crate::auth::{Authenticator, Identity};
use crate::config::{HttpSettings, UnmatchedFiles};
use crate::server::{ClientAddress, Gateway};

mod answering;

use answering::{Answering, RequestPermit};

/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";

/// Connections the kernel completes and holds for the accept loop
/// ([`listen`]); it caps the figure at `net.core.somaxconn` (4096 by
/// default since Linux 5.4).
pub const ACCEPT_BACKLOG: u32 = 1024;

/// A listener on `addr` whose kernel queue holds [`ACCEPT_BACKLOG`]
/// connections not yet accepted. The standard library's 128 let a burst of
/// clients connecting at once (a few hundred agents starting together, a
/// load balancer opening its pool) overflow it: the kernel dropped the
/// SYNs past it, and each of those clients waited a second for its
/// retransmission before its first request.
pub fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As the standard library does on Unix: a restart can bind again while
    // the last process's connections linger in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(ACCEPT_BACKLOG)
}

/// How long open connections get to close after the streams were told to
/// end, before the process exits anyway.
const CONNECTION_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// How long a new connection that closed an unauthenticated one waits for
/// that connection's slot to come free.
const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// The JSON-RPC error code of an `initialize` refused by a session bound:
/// an implementation-defined server error (JSON-RPC reserves -32000 to
/// -32099 for them).
const SESSION_LIMIT_CODE: i32 = -32000;

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
        book: Mutex::new(SessionBook::default()),
        sessions_per_identity: settings.sessions_per_identity as usize,
        max_sessions: settings.max_sessions as usize,
        uninitialized_idle: settings.uninitialized_session_idle,
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

    let unauthenticated = auth.is_some().then(|| {
        Arc::new(Unauthenticated::new(
            settings.max_unauthenticated_connections as usize,
        ))
    });
    let connections = accept_until_signal(listener, app, &settings, unauthenticated).await;

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
    /// Who opened each legacy session, and the sessions being opened.
    book: Mutex<SessionBook>,
    /// `http.sessions_per_identity`.
    sessions_per_identity: usize,
    /// `http.max_sessions`.
    max_sessions: usize,
    /// `http.uninitialized_session_idle_secs`.
    uninitialized_idle: Duration,
}

/// The legacy sessions toolhost knows of: who opened each (only that
/// caller may use it) and whether it sent `notifications/initialized`,
/// and the `initialize` requests under way, per caller, which count
/// against the bounds until their session is entered here.
#[derive(Default)]
struct SessionBook {
    open: HashMap<String, SessionEntry>,
    opening: HashMap<String, usize>,
}

/// One open legacy session.
struct SessionEntry {
    owner: String,
    initialized: bool,
}

/// Which session bound an `initialize` met.
#[derive(Debug, Clone, Copy)]
enum SessionLimit {
    PerIdentity(usize),
    Total(usize),
}

/// One `initialize` under way, counted in [`SessionBook::opening`] until
/// dropped.
struct Opening {
    state: Arc<HttpState>,
    caller: String,
}

impl Drop for Opening {
    fn drop(&mut self) {
        let mut book = self.state.book.lock().expect("not poisoned");
        if let Some(n) = book.opening.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                book.opening.remove(&self.caller);
            }
        }
    }
}

impl HttpState {
    /// A place for one more legacy session of `caller`, or the bound it
    /// would pass. Sessions rmcp has closed (idle, ended) are forgotten
    /// first, so the count is of open ones.
    async fn admit_session(self: &Arc<Self>, caller: &str) -> Result<Opening, SessionLimit> {
        let open = self.sessions.sessions.read().await;
        let mut book = self.book.lock().expect("not poisoned");
        // rmcp enters a session while holding the map's write lock, before
        // its `initialize` is answered and entered here: with the read lock
        // held, every session in the book that is missing from the map has
        // closed.
        book.open.retain(|id, _| open.contains_key(id.as_str()));
        drop(open);
        let mine = book.open.values().filter(|e| e.owner == caller).count()
            + book.opening.get(caller).copied().unwrap_or(0);
        let all = book.open.len() + book.opening.values().sum::<usize>();
        if mine >= self.sessions_per_identity {
            return Err(SessionLimit::PerIdentity(self.sessions_per_identity));
        }
        if all >= self.max_sessions {
            return Err(SessionLimit::Total(self.max_sessions));
        }
        *book.opening.entry(caller.to_string()).or_default() += 1;
        Ok(Opening {
            state: self.clone(),
            caller: caller.to_string(),
        })
    }

    /// Enters the new session `id` of `caller`, and closes it after
    /// `http.uninitialized_session_idle_secs` unless it sent
    /// `notifications/initialized` by then.
    fn enter_session(self: &Arc<Self>, id: &str, caller: String) {
        self.book.lock().expect("not poisoned").open.insert(
            id.to_string(),
            SessionEntry {
                owner: caller,
                initialized: false,
            },
        );
        let state = Arc::downgrade(self);
        let id = id.to_string();
        let idle = self.uninitialized_idle;
        tokio::spawn(async move {
            tokio::time::sleep(idle).await;
            let Some(state) = state.upgrade() else { return };
            let unused = state
                .book
                .lock()
                .expect("not poisoned")
                .open
                .get(&id)
                .is_some_and(|e| !e.initialized);
            if !unused {
                return;
            }
            let session: Arc<str> = Arc::from(id.as_str());
            if let Err(e) = state.sessions.close_session(&session).await {
                tracing::warn!("cannot close an uninitialised session: {e}");
                return;
            }
            state.book.lock().expect("not poisoned").open.remove(&id);
            ::metrics::counter!(crate::metrics::HTTP_SESSIONS_UNINITIALIZED).increment(1);
            tracing::info!(
                "closed a legacy session that sent no notifications/initialized within {idle:?} \
                 (http.uninitialized_session_idle_secs)"
            );
        });
    }

    /// Whether `id` names a legacy session that is open now.
    async fn session_is_open(&self, id: &str) -> bool {
        self.sessions.sessions.read().await.contains_key(id)
    }
}

/// How often [`housekeeping`] runs.
const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(5);

/// Every few seconds: forgets the sessions rmcp has closed, and sets the
/// open-sessions gauge.
async fn housekeeping(state: std::sync::Weak<HttpState>) {
    let mut tick = tokio::time::interval(HOUSEKEEPING_EVERY);
    loop {
        tick.tick().await;
        let Some(state) = state.upgrade() else { return };
        let open = state.sessions.sessions.read().await;
        ::metrics::gauge!(crate::metrics::HTTP_SESSIONS_OPEN).set(open.len() as f64);
        state
            .book
            .lock()
            .expect("not poisoned")
            .open
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

/// What one request holds until its response body has been sent or
/// dropped: its place among the POSTs shutdown waits for, its caller's
/// stream permit (a request's is shared with its handler, which gives it
/// back as it answers: [`RequestPermit`]), its count among open streams. The outer
/// layers fill it; [`answer_what_rmcp_would_not`] revises it once the body
/// says the request is a `subscriptions/listen` stream (the headers alone
/// decide nothing). It travels in the request's extensions as far as
/// [`bound_sessions`], which takes it out before rmcp sees the request.
#[derive(Clone, Default)]
struct Holds(Arc<Mutex<Held>>);

#[derive(Default)]
struct Held {
    post: Option<PostInFlight>,
    /// A POST's request permit, given back as soon as the gateway has its
    /// answer ([`Answering`]) or, for what rmcp answers itself, when the
    /// body ends.
    request: Option<RequestPermit>,
    /// An event stream's permit, held for as long as the stream lives.
    stream_permit: Option<OwnedSemaphorePermit>,
    stream: Option<StreamOpen>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // rmcp may keep a copy of the request's parts (and with them the
        // permit's slot) past the response: the slot is emptied here,
        // unless a handler still runs with it.
        if let Some(request) = &self.request {
            request.release_unless_answering();
        }
    }
}

impl Holds {
    /// The request's holds, put into its extensions if it had none.
    fn of(request: &mut Request) -> Holds {
        request
            .extensions_mut()
            .get_or_insert_default::<Holds>()
            .clone()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Held) -> T) -> T {
        f(&mut self.0.lock().expect("not poisoned"))
    }
}

/// `response`, with `guard` kept alive until its body has been sent or
/// dropped.
fn hold_until_body_ends<T: Send + Sync + 'static>(response: Response, guard: T) -> Response {
    use axum::body::HttpBody as _;
    let (parts, body) = response.into_parts();
    if body.is_end_stream() {
        // Nothing more to send (a 202 to a notification): the client may
        // send its next request as soon as it reads this answer, so what
        // this one held must be free by then.
        drop(guard);
        return Response::from_parts(parts, body);
    }
    // Given back when the body's last frame has been taken, before the
    // server writes the end of the response; a guard kept until the body
    // was dropped outlived the answer the client had already read, and a
    // client's next request could meet its own finished one's permit.
    let mut guard = Some(guard);
    let released = futures_util::stream::poll_fn(move |_| {
        drop(guard.take());
        std::task::Poll::Ready(None)
    });
    let body = Body::from_stream(body.into_data_stream().chain(released));
    Response::from_parts(parts, body)
}

/// The application: `/mcp` behind its layers, `/metrics` (if served
/// here), and the health endpoints.
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
    let guard = Arc::new(RebindingGuard::new(&allowed_hosts, &allowed_origins));
    // The guard is the one `Host` and `Origin` check, first of every
    // layer. rmcp's own check of the same lists is off: it would repeat
    // the guard's on every request that got past it, parsing each list
    // entry again, and copy both lists with the service rmcp clones for
    // each request.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_body)
        .with_cancellation_token(streams_closed.clone());
    let gateway = Answering(state.gateway.clone());
    let mcp =
        StreamableHttpService::new(move || Ok(gateway.clone()), state.sessions.clone(), config);

    let mut endpoint = Router::new()
        .route_service(MCP_PATH, mcp.clone())
        // Each profile of `[[profiles]]` (ADR 0040); one the configuration
        // does not name is 404, behind authentication like the rest.
        .route_service(&format!("{MCP_PATH}/{{profile}}"), mcp)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            bound_sessions,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            answer_what_rmcp_would_not,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            limit_per_caller,
        ))
        // Outside the others: a listen stream's acknowledgement is
        // narrowed to the profile it came through.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            refuse_unknown_profile,
        ));
    if let Some(auth) = auth {
        endpoint = authenticated(endpoint, auth)
            // Before authentication: a refusal at `/mcp/NAME` names that
            // profile's metadata, and its token's audience may be its own.
            .layer(middleware::from_fn_with_state(state.clone(), name_profile));
    }
    let endpoint = endpoint
        .layer(middleware::from_fn_with_state(
            state.clone(),
            refuse_while_draining,
        ))
        .layer(middleware::from_fn_with_state(
            guard.clone(),
            refuse_rebinding,
        ));
    let mut app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readiness).with_state(state.clone()))
        .merge(endpoint);
    if let Some(auth) = auth {
        let gateway = state.gateway.clone();
        let serves_profile = move |name: &str| gateway.registry().config().profile(name).is_some();
        app = app.merge(crate::auth::http::metadata_router(auth, serves_profile));
    }
    // The approval page (ADR 0038): approvers sign in there, so it is not
    // behind `/mcp`'s bearer check; the rebinding guard applies.
    let page_base = format!("http://{local}{}", super::approval_page::PAGE_PATH);
    state.gateway.serve_approval_page_at(page_base);
    let secure = state
        .gateway
        .registry()
        .config()
        .approvals_url
        .as_ref()
        .is_some_and(|u| u.scheme() == "https");
    app = app.merge(
        super::approval_page::router(state.gateway.clone(), auth.cloned(), secure).layer(
            middleware::from_fn_with_state(guard.clone(), refuse_rebinding),
        ),
    );
    if metrics_here {
        // Behind the same authentication as `/mcp`, and the metrics scope:
        // a scraper sends a token of its own.
        let mut metrics = crate::metrics::router(crate::metrics::install());
        if let Some(auth) = auth {
            metrics = metrics.layer(middleware::from_fn_with_state(
                auth.clone(),
                crate::auth::http::require_metrics_scope,
            ));
            metrics = authenticated(metrics, auth);
        }
        metrics = metrics.layer(middleware::from_fn_with_state(guard, refuse_rebinding));
        app = app.merge(metrics);
    }
    app
}

/// A `/mcp/<profile>` request: 404 when it names no profile of the
/// configuration being served, before rmcp sees it; else the profile's
/// name goes into the request's extensions for the request context.
async fn refuse_unknown_profile(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let named = request
        .uri()
        .path()
        .strip_prefix(MCP_PATH)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|name| !name.is_empty())
        .map(str::to_string);
    // Only the transport says which profile a request came through.
    request
        .extensions_mut()
        .remove::<crate::catalog::ProfileName>();
    let Some(name) = named else {
        return next.run(request).await;
    };
    if state.gateway.registry().config().profile(&name).is_none() {
        return (
            StatusCode::NOT_FOUND,
            format!(
                "no profile {name:?} is served here; the operator's [[profiles]] names those served \
                 at /mcp/NAME\n"
            ),
        )
            .into_response();
    }
    request
        .extensions_mut()
        .insert(crate::catalog::ProfileName(name));
    next.run(request).await
}

/// Names the profile a `/mcp/<profile>` request is for (in its
/// extensions) when the configuration has one by that name, for
/// authentication to read; an unknown one is refused after it
/// ([`refuse_unknown_profile`]).
async fn name_profile(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let named = request
        .uri()
        .path()
        .strip_prefix(MCP_PATH)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|name| state.gateway.registry().config().profile(name).is_some())
        .map(|name| crate::auth::http::ProfilePath(name.to_string()));
    let extensions = request.extensions_mut();
    extensions.remove::<crate::auth::http::ProfilePath>();
    if let Some(named) = named {
        extensions.insert(named);
    }
    next.run(request).await
}

/// `routes` behind `[auth]`: [`close_unauthenticated`] around
/// [`require_identity`](crate::auth::http::require_identity), and the
/// connection marked authenticated once a request on it is.
fn authenticated(routes: Router, auth: &Authenticator) -> Router {
    routes
        .layer(middleware::from_fn(note_authenticated))
        .layer(middleware::from_fn_with_state(
            auth.clone(),
            crate::auth::http::require_identity,
        ))
        .layer(middleware::from_fn(close_unauthenticated))
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

/// Refuses (403) a request whose `Host` or `Origin` is not allowed, before
/// any other layer runs: a DNS-rebinding page reaches nothing of
/// toolhost's, not even the audit record of a malformed call.
async fn refuse_rebinding(
    State(guard): State<Arc<RebindingGuard>>,
    request: Request,
    next: Next,
) -> Response {
    match guard.check(request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            tracing::warn!(
                path = %request.uri().path(),
                "refused a request: {refusal}"
            );
            let status = match refusal {
                super::rebinding::Refusal::BadHost => StatusCode::BAD_REQUEST,
                _ => StatusCode::FORBIDDEN,
            };
            (status, format!("{refusal}\n")).into_response()
        }
    }
}

/// After shutdown began, requests outside a legacy session that is open
/// are answered 503 (a load balancer retries them elsewhere); a session's
/// own requests (an elicitation's answer, say) still reach it, and a
/// made-up `Mcp-Session-Id` is no way past. Counts POSTs in flight for
/// shutdown to wait for.
async fn refuse_while_draining(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response {
    if state.draining.load(Ordering::SeqCst) {
        let session = session_id(&request);
        let open = match &session {
            Some(id) => state.session_is_open(id).await,
            None => false,
        };
        if !open {
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
    }
    let holds = Holds::of(&mut request);
    if request.method() == Method::POST {
        // Until the body says it is a `subscriptions/listen` stream.
        holds.with(|h| h.post = Some(PostInFlight::start(state)));
    }
    hold_until_body_ends(next.run(request).await, holds)
}

/// The `Mcp-Session-Id` a request names.
fn session_id(request: &Request) -> Option<String> {
    request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The caller a request's identity names, qualified by its source (`token:alice`);
/// without `[auth]`.
fn caller_of(request: &Request) -> String {
    request
        .extensions()
        .get::<Identity>()
        .map_or_else(|| "anonymous".to_string(), Identity::key)
}

/// The method and id a POSTed body holds, for the layers inside
/// [`answer_what_rmcp_would_not`].
#[derive(Clone)]
struct BodyMethod {
    /// The JSON-RPC method; `None` for a response or an error.
    method: Option<String>,
    /// The request's id; `None` for anything but a request.
    id: Option<RequestId>,
}

impl BodyMethod {
    fn of(message: &ClientJsonRpcMessage) -> BodyMethod {
        match message {
            ClientJsonRpcMessage::Request(request) => BodyMethod {
                method: Some(request.request.method().to_string()),
                id: Some(request.id.clone()),
            },
            ClientJsonRpcMessage::Notification(notification) => BodyMethod {
                method: serde_json::to_value(&notification.notification)
                    .ok()
                    .and_then(|v| v.get("method")?.as_str().map(str::to_string)),
                id: None,
            },
            _ => BodyMethod {
                method: None,
                id: None,
            },
        }
    }

    fn is(&self, method: &str) -> bool {
        self.method.as_deref() == Some(method)
    }
}

/// Reads a POSTed JSON body and answers, as stdio does, what rmcp would
/// drop or misanswer (see [`super::triage`]); refuses an `Mcp-Method`
/// header that disagrees with the body; moves a `subscriptions/listen`
/// request from the caller's requests to its streams; hands the rest on.
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
            let body_method = BodyMethod::of(&message);
            if let Some(refusal) = header_disagrees(&parts.headers, &body_method) {
                tracing::info!("refused a POST whose Mcp-Method header disagrees with its body");
                return refusal;
            }
            if body_method.is("subscriptions/listen")
                && let Some(holds) = parts.extensions.get::<Holds>().cloned()
            {
                // A listen stream lasts as long as the client listens: a
                // stream's permit, not a request's, and no call shutdown
                // waits for. Counted under the caller `limit_per_caller`
                // counts its GET streams under (`token:alice`), not its
                // bare subject, which another source may share.
                let caller = parts
                    .extensions
                    .get::<Identity>()
                    .map_or_else(|| "anonymous".to_string(), Identity::key);
                match state.callers.try_acquire(&caller, true) {
                    Ok(permit) => holds.with(|h| {
                        h.post = None;
                        if let Some(request) = h.request.take() {
                            request.release();
                        }
                        h.stream_permit = Some(permit);
                        h.stream = Some(StreamOpen::start());
                    }),
                    Err((key, limit)) => return over_limit(&caller, key, limit, true),
                }
            }
            parts.extensions.insert(body_method);
            // A listen stream is acknowledged before any handler runs: the
            // server narrows its resource URIs to what this caller may see
            // first.
            let identity = parts.extensions.get::<Identity>();
            let profile = parts
                .extensions
                .get::<crate::catalog::ProfileName>()
                .map(|p| p.0.as_str());
            let body =
                if state
                    .gateway
                    .narrow_listen_request(&mut message, identity, "http", profile)
                {
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

/// The answer to a POST whose `Mcp-Method` header names another method
/// than its body (or is sent twice): `-32020` (HeaderMismatch) with HTTP
/// 400, in every protocol era. A proxy or a bound that routes on the
/// header must see what will run; `None` when the header agrees or is
/// absent.
fn header_disagrees(headers: &axum::http::HeaderMap, body: &BodyMethod) -> Option<Response> {
    let mut values = headers.get_all("mcp-method").iter();
    let first = values.next()?;
    let agrees = values.next().is_none()
        && body
            .method
            .as_deref()
            .is_some_and(|method| first.as_bytes() == method.as_bytes());
    if agrees {
        return None;
    }
    let message = format!(
        "the Mcp-Method header ({:?}) does not name the method of the body ({}): send the \
         body's method in the header, once, or no header",
        String::from_utf8_lossy(first.as_bytes()),
        body.method.as_deref().unwrap_or("none"),
    );
    Some(json_rpc_answer(
        StatusCode::BAD_REQUEST,
        &rmcp::model::ServerJsonRpcMessage::error(
            rmcp::ErrorData::header_mismatch(message, None),
            body.id.clone(),
        ),
    ))
}

/// Bounds legacy sessions: an `initialize` outside a session opens one
/// only within `http.sessions_per_identity` and `http.max_sessions` (else
/// 429 with `Retry-After` and a JSON-RPC error that says what to do); a
/// new session is entered with its caller and closed after
/// `http.uninitialized_session_idle_secs` unless it sends
/// `notifications/initialized`; a DELETE that ended a session answers 204
/// (clients such as the Python SDK log any other status as a failure), and
/// one naming a session that is not open 404.
/// Takes the request's [`Holds`] out of its extensions, so that nothing
/// rmcp keeps holds a stream or the drain's count; the request's
/// [`RequestPermit`] stays, for its handler ([`Answering`]).
async fn bound_sessions(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response {
    request.extensions_mut().remove::<Holds>();
    request.extensions_mut().remove::<ConnectionAuth>();
    let body = request.extensions_mut().remove::<BodyMethod>();
    let caller = caller_of(&request);
    let session = session_id(&request);
    if request.method() == Method::DELETE {
        // A session that is not open (never was, or already ended) is not
        // found, as for any other request naming it.
        if let Some(id) = &session
            && !state
                .book
                .lock()
                .expect("not poisoned")
                .open
                .contains_key(id)
        {
            return (StatusCode::NOT_FOUND, "Not Found: Session not found\n").into_response();
        }
        let response = next.run(request).await;
        if response.status() != StatusCode::ACCEPTED {
            return response;
        }
        if let Some(id) = &session {
            state.book.lock().expect("not poisoned").open.remove(id);
        }
        return StatusCode::NO_CONTENT.into_response();
    }
    let opening = match (&session, &body) {
        (None, Some(body)) if body.is("initialize") => match state.admit_session(&caller).await {
            Ok(opening) => Some(opening),
            Err(limit) => return too_many_sessions(&state, &caller, limit, body.id.clone()),
        },
        _ => None,
    };
    let initialized = body
        .as_ref()
        .is_some_and(|b| b.is("notifications/initialized"));
    let response = next.run(request).await;
    if let Some(opening) = opening {
        if response.status().is_success()
            && let Some(new) = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
        {
            state.enter_session(new, caller);
        }
        // The session is in the book before its place is given back.
        drop(opening);
    } else if initialized
        && response.status().is_success()
        && let Some(id) = &session
        && let Some(entry) = state.book.lock().expect("not poisoned").open.get_mut(id)
    {
        entry.initialized = true;
    }
    response
}

/// The 429 answer to an `initialize` past a session bound.
fn too_many_sessions(
    state: &HttpState,
    caller: &str,
    limit: SessionLimit,
    id: Option<RequestId>,
) -> Response {
    let (label, what) = match limit {
        SessionLimit::PerIdentity(n) => (
            "per_identity",
            format!("this caller has {n} legacy sessions open (http.sessions_per_identity)"),
        ),
        SessionLimit::Total(n) => (
            "total",
            format!("this server has {n} legacy sessions open (http.max_sessions)"),
        ),
    };
    ::metrics::counter!(crate::metrics::HTTP_SESSIONS_REFUSED, "limit" => label).increment(1);
    tracing::info!(caller, "refused an initialize: {what}");
    let retry = state.uninitialized_idle.as_secs().max(1);
    let message = format!(
        "{what}: end sessions you no longer use (DELETE with their Mcp-Session-Id), or retry \
         in {retry} s; a session without traffic closes after http.session_idle_secs"
    );
    let mut response = json_rpc_answer(
        StatusCode::TOO_MANY_REQUESTS,
        &rmcp::model::ServerJsonRpcMessage::error(
            rmcp::ErrorData::new(rmcp::model::ErrorCode(SESSION_LIMIT_CODE), message, None),
            id,
        ),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry));
    response
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

/// The 429 answer to a request past a per-caller bound.
fn over_limit(caller: &str, key: &'static str, limit: u32, stream: bool) -> Response {
    tracing::info!(caller, "refused a request over {key} ({limit})");
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "too many {} open for this caller ({key} = {limit}); retry when one has finished\n",
            if stream { "streams" } else { "requests" }
        ),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Holds a permit per request (per stream for a GET stream; a
/// `subscriptions/listen` exchanges its request permit for a stream's once
/// its body is read) for the caller: a request's until its handler has
/// answered ([`Answering`]; what rmcp answers itself, until the response
/// body ends), a stream's until the stream ends; over the limit, 429. Refuses a session another caller
/// opened as if it did not exist.
async fn limit_per_caller(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let caller = caller_of(&request);
    if let Some(id) = session_id(&request) {
        let owner = state
            .book
            .lock()
            .expect("not poisoned")
            .open
            .get(&id)
            .map(|e| e.owner.clone());
        if owner.is_some_and(|owner| owner != caller) {
            // Another caller's session does not exist for this one.
            tracing::info!(caller, "refused a request naming another caller's session");
            return (StatusCode::NOT_FOUND, "Not Found: Session not found\n").into_response();
        }
    }
    let stream = request.method() == Method::GET;
    let permit = match state.callers.try_acquire(&caller, stream) {
        Ok(permit) => permit,
        Err((key, limit)) => return over_limit(&caller, key, limit, stream),
    };
    let holds = Holds::of(&mut request);
    if stream {
        holds.with(|h| {
            h.stream_permit = Some(permit);
            h.stream = Some(StreamOpen::start());
        });
    } else {
        let permit = RequestPermit::new(permit);
        request.extensions_mut().insert(permit.clone());
        holds.with(|h| h.request = Some(permit));
    }
    hold_until_body_ends(next.run(request).await, holds)
}

/// With `[auth]`: the connections none of whose requests has authenticated
/// yet, oldest first, at most `http.max_unauthenticated_connections`. A
/// new connection past it closes the oldest: clients that never
/// authenticate cannot keep every connection slot, and the one that just
/// arrived is the one most likely to be a real client's about to send its
/// token.
struct Unauthenticated {
    max: usize,
    next_id: AtomicU64,
    waiting: Mutex<VecDeque<(u64, CancellationToken)>>,
}

impl Unauthenticated {
    fn new(max: usize) -> Unauthenticated {
        Unauthenticated {
            max: max.max(1),
            next_id: AtomicU64::new(0),
            waiting: Mutex::new(VecDeque::new()),
        }
    }

    /// Enters a new connection; closes the oldest unauthenticated one if
    /// there are too many (then `true`).
    fn admit(self: &Arc<Self>) -> (ConnectionAuth, CancellationToken, bool) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let closed = CancellationToken::new();
        let mut waiting = self.waiting.lock().expect("not poisoned");
        let evicted = if waiting.len() >= self.max {
            if let Some((_, oldest)) = waiting.pop_front() {
                oldest.cancel();
            }
            ::metrics::counter!(crate::metrics::HTTP_CONNECTIONS_EVICTED).increment(1);
            true
        } else {
            false
        };
        waiting.push_back((id, closed.clone()));
        let connection = ConnectionAuth {
            id,
            book: self.clone(),
            authenticated: Arc::new(AtomicBool::new(false)),
        };
        (connection, closed, evicted)
    }

    fn forget(&self, id: u64) {
        self.waiting
            .lock()
            .expect("not poisoned")
            .retain(|(other, _)| *other != id);
    }
}

/// One connection's standing with `[auth]`, in each of its requests'
/// extensions.
#[derive(Clone)]
struct ConnectionAuth {
    id: u64,
    book: Arc<Unauthenticated>,
    authenticated: Arc<AtomicBool>,
}

impl ConnectionAuth {
    /// A request on this connection authenticated: it is no longer one of
    /// the unauthenticated ones.
    fn authenticated(&self) {
        if !self.authenticated.swap(true, Ordering::SeqCst) {
            self.book.forget(self.id);
        }
    }

    fn is_authenticated(&self) -> bool {
        self.authenticated.load(Ordering::SeqCst)
    }
}

/// A connection's place among the unauthenticated ones, given up when
/// the connection ends.
struct Registered(ConnectionAuth);

impl Drop for Registered {
    fn drop(&mut self) {
        if !self.0.is_authenticated() {
            self.0.book.forget(self.0.id);
        }
    }
}

/// Marks the connection authenticated once a request on it has an
/// identity (runs inside `require_identity`).
async fn note_authenticated(request: Request, next: Next) -> Response {
    if request.extensions().get::<Identity>().is_some()
        && let Some(connection) = request.extensions().get::<ConnectionAuth>()
    {
        connection.authenticated();
    }
    next.run(request).await
}

/// Answers with `Connection: close` on a connection none of whose requests
/// has authenticated (a 401 or 403): a client without a valid token keeps
/// no connection open by sending requests on it (runs outside
/// `require_identity`).
async fn close_unauthenticated(request: Request, next: Next) -> Response {
    let connection = request.extensions().get::<ConnectionAuth>().cloned();
    let mut response = next.run(request).await;
    if connection.is_some_and(|c| !c.is_authenticated()) {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Accepts connections and serves `app` on them until SIGTERM or SIGINT;
/// returns the open connections, to be closed gracefully. With
/// `unauthenticated` (`[auth]`), connections that have not authenticated
/// are bounded apart.
async fn accept_until_signal(
    listener: TcpListener,
    app: Router,
    settings: &HttpSettings,
    unauthenticated: Option<Arc<Unauthenticated>>,
) -> hyper_util::server::graceful::GracefulShutdown {
    let connections = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(settings.max_connections as usize));
    let trusted_proxies: Arc<[ipnet::IpNet]> = settings.trusted_proxies.clone().into();
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
        let (standing, closed, evicted) = match &unauthenticated {
            Some(book) => {
                let (standing, closed, evicted) = book.admit();
                (Some(standing), Some(closed), evicted)
            }
            None => (None, None, false),
        };
        let slot = slots.clone().try_acquire_owned().ok();
        if slot.is_none() && !evicted {
            if !warned_full {
                tracing::warn!(
                    "refusing connections: {} open (http.max_connections)",
                    settings.max_connections
                );
                warned_full = true;
            }
            drop(stream);
            continue;
        }
        warned_full = false;
        // An answer goes out in several small writes (the SSE stream's
        // priming event, then the result): with Nagle's algorithm the
        // second waits for the client's ACK of the first, which a client
        // blocked reading delays by up to 40 ms on Linux. Every call would
        // pay that wait.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY on a connection from {peer}: {e}");
        }
        let app = app.clone();
        let request_standing = standing.clone();
        let trusted = trusted_proxies.clone();
        let service =
            hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                // Worked out once per request (a proxy's connection carries
                // many clients' requests), for whatever counts or records
                // by client address.
                let client = super::client_address(Some(peer), request.headers(), &trusted);
                if let Some(client) = client {
                    request.extensions_mut().insert(ClientAddress(client));
                }
                if let Some(standing) = &request_standing {
                    request.extensions_mut().insert(standing.clone());
                }
                tower::ServiceExt::oneshot(app.clone(), request.map(Body::new))
            });
        let connection = connections.watch(http1.serve_connection(TokioIo::new(stream), service));
        let slots = slots.clone();
        tokio::spawn(async move {
            let _registered = standing.map(Registered);
            let evicted = async {
                match &closed {
                    Some(token) => token.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(evicted);
            let slot = match slot {
                Some(slot) => slot,
                // This connection closed an unauthenticated one: its slot
                // comes free as that one ends.
                None => tokio::select! {
                    slot = tokio::time::timeout(EVICTION_WAIT, slots.acquire_owned()) => {
                        match slot {
                            Ok(Ok(slot)) => slot,
                            _ => return,
                        }
                    }
                    () = &mut evicted => return,
                },
            };
            tokio::select! {
                ended = connection => {
                    if let Err(e) = ended {
                        tracing::debug!(%peer, "connection ended: {e}");
                    }
                }
                () = &mut evicted => {
                    tracing::info!(
                        %peer,
                        "closed a connection that had not authenticated, to make room for a \
                         newer one (http.max_unauthenticated_connections)"
                    );
                }
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::body::Body;
    use axum::response::Response;
    use futures_util::StreamExt;

    use super::{ACCEPT_BACKLOG, hold_until_body_ends, listen};

    /// How many holders `held` has besides this test's own.
    fn holders(held: &Arc<()>) -> usize {
        Arc::strong_count(held) - 1
    }

    #[tokio::test]
    async fn an_answer_without_a_body_holds_nothing_once_it_is_made() {
        let held = Arc::new(());
        let response = hold_until_body_ends(Response::new(Body::empty()), held.clone());
        assert_eq!(
            holders(&held),
            0,
            "freed before the answer is written, so the client's next request finds it free"
        );
        drop(response);
    }

    #[tokio::test]
    async fn an_answers_hold_ends_with_its_last_frame_not_when_the_body_is_dropped() {
        let held = Arc::new(());
        let frames = futures_util::stream::iter(["data: one\n\n", "data: two\n\n"])
            .map(|text| Ok::<_, std::convert::Infallible>(bytes::Bytes::from(text)));
        let response = hold_until_body_ends(Response::new(Body::from_stream(frames)), held.clone());
        let mut body = response.into_body().into_data_stream();
        assert!(body.next().await.is_some());
        assert!(body.next().await.is_some());
        assert_eq!(holders(&held), 1, "held while frames remain to be sent");
        assert!(body.next().await.is_none(), "the body ends");
        assert_eq!(
            holders(&held),
            0,
            "freed once the last frame was taken, before the server writes the end"
        );
        drop(body);
    }

    #[tokio::test]
    async fn a_burst_of_connections_waits_in_the_queue_instead_of_being_dropped() {
        // The kernel completes a connection as soon as it fits in the
        // listener's queue, and drops the SYN of one that does not (the
        // client then waits a second for its retransmission). Nothing is
        // accepted here, so the queue alone decides.
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(ACCEPT_BACKLOG);
        // Past the standard library's 128, within what this kernel allows.
        let burst = 300.min(ACCEPT_BACKLOG.min(somaxconn) as usize);
        assert!(
            burst > 129,
            "net.core.somaxconn is {somaxconn}: too low to tell"
        );
        let connects = (0..burst).map(|_| {
            tokio::time::timeout(
                std::time::Duration::from_millis(500),
                tokio::net::TcpStream::connect(addr),
            )
        });
        let results = futures_util::future::join_all(connects).await;
        let completed = results.iter().filter(|r| matches!(r, Ok(Ok(_)))).count();
        assert_eq!(completed, burst, "every connection of the burst was queued");
        drop(listener);
    }
}
