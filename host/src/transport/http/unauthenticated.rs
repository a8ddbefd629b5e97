//! With `[auth]`, connections none of whose requests has authenticated yet:
//! at most `http.max_unauthenticated_connections` of them, the oldest closed
//! to make room, and `/mcp` behind [`require_identity`](crate::auth::http::require_identity).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use tokio_util::sync::CancellationToken;

use crate::auth::{Authenticator, Identity};

/// How long a new connection that closed an unauthenticated one waits for
/// that connection's slot to come free.
pub(super) const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// `routes` behind `[auth]`: [`close_unauthenticated`] around
/// [`require_identity`](crate::auth::http::require_identity), and the
/// connection marked authenticated once a request on it is.
pub(super) fn authenticated(routes: Router, auth: &Authenticator) -> Router {
    routes
        .layer(middleware::from_fn(note_authenticated))
        .layer(middleware::from_fn_with_state(
            auth.clone(),
            crate::auth::http::require_identity,
        ))
        .layer(middleware::from_fn(close_unauthenticated))
}

/// With `[auth]`: the connections none of whose requests has authenticated
/// yet, oldest first, at most `http.max_unauthenticated_connections`. A
/// new connection past it closes the oldest: clients that never
/// authenticate cannot keep every connection slot, and the one that just
/// arrived is the one most likely to be a real client's about to send its
/// token.
pub(super) struct Unauthenticated {
    pub(super) max: usize,
    pub(super) next_id: AtomicU64,
    pub(super) waiting: Mutex<VecDeque<(u64, CancellationToken)>>,
}

impl Unauthenticated {
    pub(super) fn new(max: usize) -> Unauthenticated {
        Unauthenticated {
            max: max.max(1),
            next_id: AtomicU64::new(0),
            waiting: Mutex::new(VecDeque::new()),
        }
    }

    /// Enters a new connection, its place held until the returned
    /// [`Registered`] is dropped (or it authenticates); closes the oldest
    /// unauthenticated one if there are too many (then `true`).
    pub(super) fn admit(self: &Arc<Self>) -> (Registered, CancellationToken, bool) {
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
        // Registered at once: a connection refused at the door gives its
        // place back as it is dropped, so it never stands in the queue
        // (where its eviction would free no slot).
        let connection = Registered(ConnectionAuth {
            id,
            book: self.clone(),
            authenticated: Arc::new(AtomicBool::new(false)),
        });
        (connection, closed, evicted)
    }

    pub(super) fn forget(&self, id: u64) {
        self.waiting
            .lock()
            .expect("not poisoned")
            .retain(|(other, _)| *other != id);
    }
}

/// One connection's standing with `[auth]`, in each of its requests'
/// extensions.
#[derive(Clone)]
pub(super) struct ConnectionAuth {
    pub(super) id: u64,
    pub(super) book: Arc<Unauthenticated>,
    pub(super) authenticated: Arc<AtomicBool>,
}

impl ConnectionAuth {
    /// A request on this connection authenticated: it is no longer one of
    /// the unauthenticated ones.
    pub(super) fn authenticated(&self) {
        if !self.authenticated.swap(true, Ordering::SeqCst) {
            self.book.forget(self.id);
        }
    }

    pub(super) fn is_authenticated(&self) -> bool {
        self.authenticated.load(Ordering::SeqCst)
    }
}

/// A connection's place among the unauthenticated ones, given up when
/// the connection ends.
pub(super) struct Registered(pub(super) ConnectionAuth);

impl Drop for Registered {
    fn drop(&mut self) {
        if !self.0.is_authenticated() {
            self.0.book.forget(self.0.id);
        }
    }
}

/// Marks the connection authenticated once a request on it has an
/// identity (runs inside `require_identity`).
pub(super) async fn note_authenticated(request: Request, next: Next) -> Response {
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
pub(super) async fn close_unauthenticated(request: Request, next: Next) -> Response {
    let connection = request.extensions().get::<ConnectionAuth>().cloned();
    let mut response = next.run(request).await;
    if connection.is_some_and(|c| !c.is_authenticated()) {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_refused_at_the_door_leaves_no_place_in_the_queue_to_evict() {
        let book = Arc::new(Unauthenticated::new(1));
        // Admitted, then refused (every slot taken): dropped at once.
        let (refused, _, evicted) = book.admit();
        assert!(!evicted);
        drop(refused);
        assert!(book.waiting.lock().unwrap().is_empty());
        // The next one finds nobody to evict.
        let (kept, closed, evicted) = book.admit();
        assert!(!evicted, "no place was left behind by the refused one");
        // And one past the bound closes it.
        let (_next, _, evicted) = book.admit();
        assert!(evicted && closed.is_cancelled());
        drop(kept);
    }
}
