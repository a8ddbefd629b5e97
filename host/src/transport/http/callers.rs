//! Requests in flight and event streams per caller
//! (`http.requests_per_identity`, `http.streams_per_identity`): one
//! caller's flood meets 429s while another's calls go on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::HttpSettings;

use super::answering::RequestPermit;
use super::holds::{Holds, StreamOpen, hold_until_body_ends};
use super::{HttpState, caller_of, session_id};

/// Per-caller bounds on what is held open at once.
pub(super) struct CallerLimits {
    pub(super) requests: u32,
    pub(super) streams: u32,
    pub(super) callers: Mutex<HashMap<String, Arc<CallerPermits>>>,
}

/// One caller's permits.
pub(super) struct CallerPermits {
    pub(super) requests: Arc<Semaphore>,
    pub(super) streams: Arc<Semaphore>,
}

/// Callers remembered before idle ones are forgotten.
pub(super) const REMEMBERED_CALLERS: usize = 4096;

impl CallerLimits {
    pub(super) fn new(settings: &HttpSettings) -> CallerLimits {
        CallerLimits {
            requests: settings.requests_per_identity,
            streams: settings.streams_per_identity,
            callers: Mutex::new(HashMap::new()),
        }
    }

    /// A permit for one more request (or event stream, `stream`) by `caller`,
    /// or the key of the limit it would pass.
    pub(super) fn try_acquire(
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
pub(super) fn over_limit(caller: &str, key: &'static str, limit: u32, stream: bool) -> Response {
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
/// answered ([`Answering`](super::answering::Answering); what rmcp answers itself, until the response
/// body ends), a stream's until the stream ends; over the limit, 429. Refuses a session another caller
/// opened as if it did not exist.
pub(super) async fn limit_per_caller(
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
        // A handler that begins after its permit was given back takes one
        // again through the caller's current bound (the one it was taken
        // from may have been forgotten meanwhile).
        let again = {
            let state = state.clone();
            let caller = caller.clone();
            move || state.callers.try_acquire(&caller, false).ok()
        };
        let permit = RequestPermit::new(permit, again);
        request.extensions_mut().insert(permit.clone());
        holds.with(|h| h.request = Some(permit));
    }
    hold_until_body_ends(next.run(request).await, holds)
}
