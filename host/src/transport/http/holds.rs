//! What a request holds until its response body ends: its place among the
//! POSTs shutdown waits for, its caller's permit, its count among open
//! streams ([`Holds`]).

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use futures_util::StreamExt;
use tokio::sync::OwnedSemaphorePermit;

use super::HttpState;
use super::answering::RequestPermit;

/// Counts one open event stream (a GET stream or a `subscriptions/listen`)
/// in `toolhost_http_streams_open` for as long as it lives.
pub(super) struct StreamOpen;

impl StreamOpen {
    pub(super) fn start() -> StreamOpen {
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
pub(super) struct PostInFlight(pub(super) Arc<HttpState>);

impl PostInFlight {
    pub(super) fn start(state: Arc<HttpState>) -> PostInFlight {
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
/// layers fill it; [`answer_what_rmcp_would_not`](super::checks::answer_what_rmcp_would_not) revises it once the body
/// says the request is a `subscriptions/listen` stream (the headers alone
/// decide nothing). It travels in the request's extensions as far as
/// [`bound_sessions`](super::sessions::bound_sessions), which takes it out before rmcp sees the request.
#[derive(Clone, Default)]
pub(super) struct Holds(Arc<Mutex<Held>>);

#[derive(Default)]
pub(super) struct Held {
    pub(super) post: Option<PostInFlight>,
    /// A POST's request permit, given back as soon as the gateway has its
    /// answer ([`Answering`](super::answering::Answering)) or, for what rmcp answers itself, when the
    /// body ends.
    pub(super) request: Option<RequestPermit>,
    /// An event stream's permit, held for as long as the stream lives.
    pub(super) stream_permit: Option<OwnedSemaphorePermit>,
    pub(super) stream: Option<StreamOpen>,
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
    pub(super) fn of(request: &mut Request) -> Holds {
        request
            .extensions_mut()
            .get_or_insert_default::<Holds>()
            .clone()
    }

    pub(super) fn with<T>(&self, f: impl FnOnce(&mut Held) -> T) -> T {
        f(&mut self.0.lock().expect("not poisoned"))
    }
}

/// `response`, with `guard` kept alive until its body has been sent or
/// dropped.
pub(super) fn hold_until_body_ends<T: Send + Sync + 'static>(
    response: Response,
    guard: T,
) -> Response {
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
