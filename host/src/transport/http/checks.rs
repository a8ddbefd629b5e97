//! The checks a request meets before rmcp, outermost first: the `Host` and
//! `Origin` guard, the drain after a signal, the profile named in the path,
//! and the body's triage ([`answer_what_rmcp_would_not`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, RequestId};

use crate::auth::Identity;
use crate::transport::rebinding::RebindingGuard;
use crate::transport::triage::{Triage, too_long, triage};

use super::callers::over_limit;
use super::holds::{Holds, PostInFlight, StreamOpen, hold_until_body_ends};
use super::{HttpState, MCP_PATH, session_id};

/// The profile a `/mcp/<profile>` path names, if it names one.
fn profile_in_path(path: &str) -> Option<&str> {
    path.strip_prefix(MCP_PATH)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|name| !name.is_empty())
}

/// A `/mcp/<profile>` request: 404 when it names no profile of the
/// configuration being served, before rmcp sees it; else the profile's
/// name goes into the request's extensions for the request context.
pub(super) async fn refuse_unknown_profile(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let named = profile_in_path(request.uri().path()).map(str::to_string);
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
pub(super) async fn name_profile(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let named = profile_in_path(request.uri().path())
        .filter(|name| state.gateway.registry().config().profile(name).is_some())
        .map(|name| crate::auth::http::ProfilePath(name.to_string()));
    let extensions = request.extensions_mut();
    extensions.remove::<crate::auth::http::ProfilePath>();
    if let Some(named) = named {
        extensions.insert(named);
    }
    next.run(request).await
}

/// Refuses (403) a request whose `Host` or `Origin` is not allowed, before
/// any other layer runs: a DNS-rebinding page reaches nothing of
/// toolhost's, not even the audit record of a malformed call.
pub(super) async fn refuse_rebinding(
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
                crate::transport::rebinding::Refusal::BadHost => StatusCode::BAD_REQUEST,
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
pub(super) async fn refuse_while_draining(
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

/// The method and id a POSTed body holds, for the layers inside
/// [`answer_what_rmcp_would_not`].
#[derive(Clone)]
pub(super) struct BodyMethod {
    /// The JSON-RPC method; `None` for a response or an error.
    pub(super) method: Option<String>,
    /// The request's id; `None` for anything but a request.
    pub(super) id: Option<RequestId>,
}

impl BodyMethod {
    pub(super) fn of(message: &ClientJsonRpcMessage) -> BodyMethod {
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

    pub(super) fn is(&self, method: &str) -> bool {
        self.method.as_deref() == Some(method)
    }
}

/// Reads a POSTed JSON body and answers, as stdio does, what rmcp would
/// drop or misanswer (see [`triage`](crate::transport::triage)); refuses an `Mcp-Method`
/// header that disagrees with the body; moves a `subscriptions/listen`
/// request from the caller's requests to its streams; hands the rest on.
pub(super) async fn answer_what_rmcp_would_not(
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
        Ok(Err(e)) => {
            let cause = e.into_inner();
            if cause.is::<http_body_util::LengthLimitError>() {
                return json_rpc_answer(StatusCode::PAYLOAD_TOO_LARGE, &too_long(state.max_body));
            }
            // A broken chunked encoding, a connection reset mid-body.
            return (
                StatusCode::BAD_REQUEST,
                format!(
                    "the request body could not be read ({cause}); send it whole, framed by its \
                     Content-Length or a valid chunked encoding\n"
                ),
            )
                .into_response();
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
pub(super) fn header_disagrees(
    headers: &axum::http::HeaderMap,
    body: &BodyMethod,
) -> Option<Response> {
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

/// A JSON-RPC message as the whole response, with `status`.
pub(super) fn json_rpc_answer(
    status: StatusCode,
    message: &rmcp::model::ServerJsonRpcMessage,
) -> Response {
    (status, axum::Json(message)).into_response()
}
