//! `wasi:http/outgoing-handler`: standard outbound HTTP, under the same
//! policy as `toolhost:plugin/http`.
//!
//! wasmtime-wasi-http implements the `wasi:http` interfaces (requests,
//! fields, bodies, futures); what it would send, it hands to
//! [`PolicyHooks::send_request`], which gathers the request (its body up
//! to `limits.memory_mib`, what the guest could hand `toolhost:plugin/http`
//! in one list; and the bodies of all of a call's requests gathered at
//! once, together, no more: a guest that opens many requests and never
//! finishes their bodies holds no more of the host's memory than one) and
//! sends it through
//! `Outbound::send` (in `imports/http.rs`): the allow-list, the
//! address check, the operator's credentials, the confirmation gate and
//! read-only rule, the limits, the audit record and the metrics are those
//! of the `http` import, in the same code. wasmtime-wasi-http's own client
//! is not compiled in, so there is no other way out.
//!
//! What the guest sees: the response (status, headers, a body read to
//! `limits.http_body_bytes`), or an `error-code`: `HTTP-request-denied`
//! for a request the policy refused (the host's log says why; a broken
//! rule fails the call with the reason whatever the guest returns),
//! `HTTP-response-body-size` past the body limit, `connection-timeout` at
//! the timeout, `internal-error` with the reason otherwise.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use wasmtime_wasi_http::{Error as WasiError, RequestOptions, WasiBody, WasiHttpHooks};

use super::http::{Outbound, OutboundRequest, Refused};
use crate::bindings::http::Error;

/// The `wasi:http` hooks of a call: its policy path, as of the guest's
/// latest `wasi:http` host call.
#[derive(Default)]
pub struct PolicyHooks {
    /// Set by `CallState`'s `WasiHttpView` before every `wasi:http` host
    /// call.
    pub(crate) outbound: Option<Outbound>,
}

type Sent = Box<dyn Future<Output = Result<(), WasiError>> + Send>;

impl WasiHttpHooks for PolicyHooks {
    fn set_host_header(&mut self) -> bool {
        // The host derives `Host` from the URL it sends to, as for
        // `toolhost:plugin/http`.
        false
    }

    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Sent,
    ) -> Box<dyn Future<Output = Result<(http::Response<WasiBody>, Sent), WasiError>> + Send> {
        let outbound = self.outbound.clone();
        let Some(outbound) = outbound else {
            return Box::new(async {
                Err(WasiError::InternalError(Some(
                    "no call to send this request for".into(),
                )))
            });
        };
        // The request may run in a task of its own: it keeps the call's
        // span, so its own span is the call's child, and runs within the
        // call's context as its hooks keep it (the trace's).
        let span = tracing::Span::current();
        let hooks = outbound.hooks();
        let (answer, answered) = tokio::sync::oneshot::channel();
        let work = tracing::Instrument::instrument(
            async move {
                let deadline = tokio::time::Instant::from_std(outbound.deadline());
                let sent = tokio::time::timeout_at(deadline, send(&outbound, request, options))
                    .await
                    .unwrap_or(Err(WasiError::ConnectionTimeout));
                let _ = answer.send(sent);
            },
            span,
        );
        let work = hooks.within_call(Box::pin(work));
        Box::new(async move {
            work.await;
            let sent = answered.await.unwrap_or(Err(WasiError::InternalError(Some(
                "the request ended without an answer".into(),
            ))))?;
            Ok((sent, Box::new(async { Ok(()) }) as Sent))
        })
    }
}

/// A request body gathered in the host, counted against the call's
/// `limits.memory_mib` until the request is done with it.
struct HeldBody<'a> {
    outbound: &'a Outbound,
    bytes: u64,
}

impl Drop for HeldBody<'_> {
    fn drop(&mut self) {
        self.outbound.release_request_body(self.bytes);
    }
}

/// Gathers `request` and sends it through the policy path.
async fn send(
    outbound: &Outbound,
    request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Result<http::Response<WasiBody>, WasiError> {
    let (parts, mut body) = request.into_parts();
    let limit = outbound.settings().limits.memory_bytes;
    let mut bytes = Vec::new();
    let mut held = HeldBody { outbound, bytes: 0 };
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            if !outbound.hold_request_body(data.len() as u64) {
                return Err(WasiError::HttpRequestBodySize(Some(limit)));
            }
            held.bytes += data.len() as u64;
            bytes.extend_from_slice(&data);
        }
    }
    let mut headers = Vec::with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        // wasmtime-wasi-http checked it against the body; the host sets
        // its own from the body it sends.
        if name == http::header::CONTENT_LENGTH {
            continue;
        }
        let value = value.to_str().map_err(|_| {
            WasiError::InternalError(Some(format!("the header {name} is not text")))
        })?;
        headers.push((name.as_str().to_string(), value.to_string()));
    }
    let timeout_ms = options
        .and_then(|o| o.first_byte_timeout.or(o.connect_timeout))
        .map(|t| u32::try_from(t.as_millis()).unwrap_or(u32::MAX));
    let has_body =
        !bytes.is_empty() || !matches!(parts.method, http::Method::GET | http::Method::HEAD);
    let request = OutboundRequest {
        method: parts.method,
        url: parts.uri.to_string(),
        headers,
        body: has_body.then_some(bytes),
        timeout_ms,
    };
    match outbound.send(request).await {
        Ok(response) => {
            let mut builder = http::Response::builder().status(response.status);
            for (name, value) in response.headers {
                builder = builder.header(name, value);
            }
            builder
                .body(
                    Full::new(Bytes::from(response.body))
                        .map_err(|never| match never {})
                        .boxed_unsync(),
                )
                .map_err(|e| WasiError::InternalError(Some(e.to_string())))
        }
        Err(Refused::EndCall(_)) => Err(WasiError::HttpRequestDenied),
        Err(Refused::Error(error)) => Err(match error {
            Error::Denied(_) => WasiError::HttpRequestDenied,
            Error::Timeout => WasiError::ConnectionTimeout,
            Error::BodyTooLarge(limit) => WasiError::HttpResponseBodySize(Some(limit)),
            Error::TooManyRequests(most) => WasiError::InternalError(Some(format!(
                "the call made {most} requests, the most limits.http_requests_per_call allows"
            ))),
            Error::InvalidRequest(why) | Error::ConnectionFailed(why) => {
                WasiError::InternalError(Some(why))
            }
        }),
    }
}
