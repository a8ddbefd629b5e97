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
//! This module is the composition: the listener, the accept loop, the
//! state the layers share and the router that orders them. Each layer
//! lives apart: `checks` (the guard, the drain, the profile, the body's
//! triage), `callers` (the per-caller bounds), `sessions` (the legacy
//! sessions' bounds and housekeeping), `holds` (what a request holds until
//! its body ends), `unauthenticated` (connections not yet authenticated)
//! and `answering` (the permit a handler gives back as it answers).
//!
//! Shutdown ([`until_signal`]): stop accepting, wait up to
//! `http.shutdown_grace_secs` for the POSTs in flight (their responses
//! included; a `subscriptions/listen` stream does not count), close the
//! streams, exit 0. See ADR 0011 and ADR 0033.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::rebinding::RebindingGuard;
use crate::auth::{Authenticator, Identity};
use crate::config::{HttpSettings, UnmatchedFiles};
use crate::server::{ClientAddress, Gateway};

mod answering;
mod callers;
mod checks;
mod holds;
mod sessions;
mod unauthenticated;

use answering::Answering;
use callers::{CallerLimits, limit_per_caller};
use checks::{
    answer_what_rmcp_would_not, name_profile, refuse_rebinding, refuse_unknown_profile,
    refuse_while_draining,
};
use sessions::{SessionBook, bound_sessions, housekeeping};
use unauthenticated::{EVICTION_WAIT, Unauthenticated, authenticated};

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
        // A connection refused below gives its place among the
        // unauthenticated ones back as `registered` is dropped.
        let (registered, closed, evicted) = match &unauthenticated {
            Some(book) => {
                let (registered, closed, evicted) = book.admit();
                (Some(registered), Some(closed), evicted)
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
        let request_standing = registered.as_ref().map(|r| r.0.clone());
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
            let _registered = registered;
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

    use super::holds::hold_until_body_ends;
    use super::{ACCEPT_BACKLOG, listen};

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
