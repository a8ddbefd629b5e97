//! The axum side of authentication: the [`require_identity`] middleware,
//! the 401/403 answers, and the protected-resource metadata (RFC 9728).
//!
//! The transport wraps its MCP endpoint in
//! `axum::middleware::from_fn_with_state(authenticator, require_identity)`
//! and merges [`metadata_router`] outside it; `/metrics` on that listener
//! is behind [`require_identity`] and then [`require_metrics_scope`]. A
//! request that authenticates
//! carries its [`Identity`] in its extensions from then on; rmcp hands the
//! request's `http::request::Parts` to the server, which reads it there.
//!
//! A refusal is `401` (no token, or a token that proves nothing) or `403`
//! (a valid token without the required scopes), each with the
//! `WWW-Authenticate: Bearer …` challenge MCP clients read to find the
//! authorization server (with the reason as `error_description` when a
//! token was sent), or `503` with `Retry-After` when the issuer's keys
//! cannot be had. The body says what to do. The token is never
//! echoed or logged; the reason is logged at `info` and counted in
//! `toolhost_auth_failures_total{reason}`.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use super::{AuthFailure, Authenticator, Identity};

/// The metadata path (RFC 9728 §3), also served with the resource's path
/// appended (`/.well-known/oauth-protected-resource/mcp`).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The profile an HTTP request's path names (`/mcp/NAME`), put into the
/// request's extensions by the transport before authentication: a refusal
/// there names that profile's metadata, and a token issued for the
/// profile's resource URI is accepted.
#[derive(Debug, Clone)]
pub struct ProfilePath(pub String);

/// Authenticates the request; on success inserts its [`Identity`] into the
/// request's extensions and runs the rest, on failure answers 401/403.
pub async fn require_identity(
    State(auth): State<Authenticator>,
    mut request: Request,
    next: Next,
) -> Response {
    // A request to a profile's path (`/mcp/NAME`), as the transport named
    // it: its own resource URI, and its own metadata in a refusal.
    let profile = request
        .extensions()
        .get::<ProfilePath>()
        .map(|p| p.0.clone());
    match auth
        .authenticate_for(request.headers(), profile.as_deref())
        .await
    {
        Ok(identity) => {
            tracing::debug!(caller = %identity.key(), "authenticated");
            if let Ok(token) = super::bearer_token(request.headers()) {
                let token = super::CallerToken(token.into());
                request.extensions_mut().insert(token);
            }
            request.extensions_mut().insert::<Identity>(identity);
            next.run(request).await
        }
        Err(failure) => {
            tracing::info!(
                reason = failure.reason(),
                method = %request.method(),
                path = %request.uri().path(),
                "HTTP request refused: {failure}"
            );
            metrics::counter!("toolhost_auth_failures_total", "reason" => failure.reason())
                .increment(1);
            refusal_for(&auth, failure, profile.as_deref())
        }
    }
}

/// Lets through only a caller whose token grants `auth.metrics_scope`
/// (runs inside [`require_identity`]): metrics name every tool and plugin,
/// hidden ones included, and count every caller's use. Anyone else gets
/// 403 with an `insufficient_scope` challenge naming the scope.
pub async fn require_metrics_scope(
    State(auth): State<Authenticator>,
    request: Request,
    next: Next,
) -> Response {
    let scope = auth.metrics_scope();
    if request
        .extensions()
        .get::<Identity>()
        .is_some_and(|identity| identity.scopes.contains(scope))
    {
        return next.run(request).await;
    }
    tracing::info!(
        path = %request.uri().path(),
        "HTTP request refused: the token lacks the metrics scope (auth.metrics_scope)"
    );
    metrics::counter!("toolhost_auth_failures_total", "reason" => "insufficient_scope")
        .increment(1);
    let description = format!(
        "reading metrics needs the scope {scope:?} (auth.metrics_scope): request a token that \
         grants it, or read them on a listener of their own (host.metrics)"
    );
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", error_description=\"{}\", scope=\"{}\", \
         resource_metadata=\"{}\"",
        quotable(&description),
        quotable(scope),
        auth.metadata_url()
    );
    let body = Json(json!({
        "error": "insufficient_scope",
        "error_description": description,
        "resource_metadata": auth.metadata_url(),
    }));
    let mut response = (StatusCode::FORBIDDEN, body).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The answer to a request `failure` refused.
pub fn refusal(auth: &Authenticator, failure: AuthFailure) -> Response {
    refusal_for(auth, failure, None)
}

/// The answer to a request to the profile `profile` (`/mcp/NAME`; `None`
/// for anything else) that `failure` refused: its challenge and body name
/// that profile's metadata.
pub fn refusal_for(auth: &Authenticator, failure: AuthFailure, profile: Option<&str>) -> Response {
    let metadata_url = match profile {
        Some(name) => auth.profile_metadata_url(name),
        None => auth.metadata_url().to_string(),
    };
    let metadata = format!("resource_metadata=\"{metadata_url}\"");
    let scope = auth.required_scopes().join(" ");
    let description = format!("error_description=\"{}\"", quotable(&failure.to_string()));
    let (status, error, challenge) = match failure {
        AuthFailure::MissingToken | AuthFailure::MalformedHeader => {
            let mut challenge = format!("Bearer {metadata}");
            if !scope.is_empty() {
                challenge.push_str(&format!(", scope=\"{scope}\""));
            }
            (StatusCode::UNAUTHORIZED, "invalid_request", Some(challenge))
        }
        AuthFailure::InsufficientScope => (
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            Some(format!(
                "Bearer error=\"insufficient_scope\", {description}, scope=\"{scope}\", {metadata}"
            )),
        ),
        AuthFailure::KeysUnavailable => (
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            None,
        ),
        _ => (
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            Some(format!(
                "Bearer error=\"invalid_token\", {description}, {metadata}"
            )),
        ),
    };
    let body = Json(json!({
        "error": error,
        "error_description": failure.to_string(),
        "resource_metadata": metadata_url,
    }));
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    if let Some(challenge) = challenge
        && let Ok(value) = HeaderValue::from_str(&challenge)
    {
        headers.insert(header::WWW_AUTHENTICATE, value);
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        headers.insert(
            header::RETRY_AFTER,
            HeaderValue::from(auth.retry_after().as_secs()),
        );
    }
    response
}

/// `text` as an RFC 6750 `error_description` may hold it: printable ASCII
/// without `"` and `\`.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

/// `GET /.well-known/oauth-protected-resource` and its path-suffixed form:
/// the protected-resource metadata (RFC 9728 §2) clients read to find the
/// authorization server; and, below it, each profile's (`…/mcp/NAME`,
/// naming the profile's resource URI) while `serves_profile(NAME)` says
/// the configuration has one by that name, else 404. Not behind
/// [`require_identity`].
pub fn metadata_router(
    auth: &Authenticator,
    serves_profile: impl Fn(&str) -> bool + Clone + Send + Sync + 'static,
) -> axum::Router {
    let document_for = {
        let auth = auth.clone();
        move |resource: String| {
            let mut document = json!({
                "resource": resource,
                "bearer_methods_supported": ["header"],
                "scopes_supported": auth.inner.scopes_supported,
            });
            if let Some(jwt) = &auth.inner.jwt {
                document["authorization_servers"] = json!([jwt.issuer()]);
            }
            Json(document)
        }
    };
    let suffixed = auth
        .metadata_url()
        .split_once(METADATA_PATH)
        .map(|(_, path)| path.to_string())
        .unwrap_or_default();
    let document = document_for(auth.resource().to_string());
    let handler = move || {
        let document = document.clone();
        async move { document }
    };
    let profile_handler = {
        let auth = auth.clone();
        move |axum::extract::Path(name): axum::extract::Path<String>| {
            let answer = if serves_profile(&name) {
                document_for(auth.profile_resource(&name)).into_response()
            } else {
                StatusCode::NOT_FOUND.into_response()
            };
            async move { answer }
        }
    };
    let mut router = axum::Router::new()
        .route(METADATA_PATH, get(handler.clone()))
        .route(
            &format!("{METADATA_PATH}{suffixed}/{{profile}}"),
            get(profile_handler),
        );
    if !suffixed.is_empty() {
        router = router.route(&format!("{METADATA_PATH}{suffixed}"), get(handler));
    }
    router
}
