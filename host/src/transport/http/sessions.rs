//! Legacy sessions and their bounds: who opened each (only that caller
//! may use it), `http.sessions_per_identity` and `http.max_sessions` for an
//! `initialize`, the close of a session that never sends
//! `notifications/initialized`, and the housekeeping that forgets the
//! sessions rmcp has closed (ADR 0033).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::RequestId;
use rmcp::transport::streamable_http_server::session::SessionManager;

use super::checks::{BodyMethod, json_rpc_answer};
use super::holds::Holds;
use super::unauthenticated::ConnectionAuth;
use super::{HttpState, caller_of, session_id};

/// The JSON-RPC error code of an `initialize` refused by a session bound:
/// an implementation-defined server error (JSON-RPC reserves -32000 to
/// -32099 for them).
pub(super) const SESSION_LIMIT_CODE: i32 = -32000;

/// The legacy sessions toolhost knows of: who opened each (only that
/// caller may use it) and whether it sent `notifications/initialized`,
/// and the `initialize` requests under way, per caller, which count
/// against the bounds until their session is entered here.
#[derive(Default)]
pub(super) struct SessionBook {
    pub(super) open: HashMap<String, SessionEntry>,
    pub(super) opening: HashMap<String, usize>,
}

/// One open legacy session.
pub(super) struct SessionEntry {
    pub(super) owner: String,
    pub(super) initialized: bool,
}

/// Which session bound an `initialize` met.
#[derive(Debug, Clone, Copy)]
pub(super) enum SessionLimit {
    PerIdentity(usize),
    Total(usize),
}

/// One `initialize` under way, counted in [`SessionBook::opening`] until
/// dropped.
pub(super) struct Opening {
    pub(super) state: Arc<HttpState>,
    pub(super) caller: String,
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
    pub(super) async fn admit_session(
        self: &Arc<Self>,
        caller: &str,
    ) -> Result<Opening, SessionLimit> {
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
    pub(super) fn enter_session(self: &Arc<Self>, id: &str, caller: String) {
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
    pub(super) async fn session_is_open(&self, id: &str) -> bool {
        self.sessions.sessions.read().await.contains_key(id)
    }
}

/// How often [`housekeeping`] runs.
pub(super) const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(5);

/// Every few seconds: forgets the sessions rmcp has closed, and sets the
/// open-sessions gauge.
pub(super) async fn housekeeping(state: std::sync::Weak<HttpState>) {
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
/// [`RequestPermit`](super::answering::RequestPermit) stays, for its handler ([`Answering`](super::answering::Answering)).
pub(super) async fn bound_sessions(
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
pub(super) fn too_many_sessions(
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
