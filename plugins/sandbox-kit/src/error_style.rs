//! Error-body shapes: how a sandbox spells the errors the kit produces itself.
//!
//! The kit answers some requests without reaching a sandbox's handlers: a bad
//! bearer key (401), an exhausted rate limit (429), an injected fault (500, 503,
//! 429, 504) and a malformed request (400, 413). Each upstream spells those
//! bodies differently, so the kit asks an [`ErrorStyle`] for both the message
//! and the JSON shape:
//!
//! * [`MessageStyle`]: Laravel's `{"message": "..."}` (StatusPro).
//! * [`NamedStyle`]: `{"statusCode": 401, "name": "UnauthorizedError", "message": "..."}`
//!   (Katana-like APIs).
//! * any closure `Fn(StatusCode, &str) -> serde_json::Value`, which keeps the
//!   default messages and only changes the shape.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

/// Decides the message and JSON body of the error responses the kit produces.
///
/// Sandboxes usually also use their style for their own errors, so that every
/// error body of one sandbox has the same shape.
pub trait ErrorStyle: Send + Sync + 'static {
    /// The JSON body for an error with `status` and `message`.
    fn body(&self, status: StatusCode, message: &str) -> Value;

    /// The message the kit uses for an error it produces on its own.
    ///
    /// The default is the canonical reason phrase (`"Unauthorized"`,
    /// `"Too Many Requests"`, ...).
    fn message(&self, status: StatusCode) -> String {
        status.canonical_reason().unwrap_or("Error").to_owned()
    }

    /// A complete response: `status`, a JSON content type and [`Self::body`].
    fn response(&self, status: StatusCode, message: &str) -> Response {
        (status, Json(self.body(status, message))).into_response()
    }

    /// A response for an error the kit produces on its own, using [`Self::message`].
    fn default_response(&self, status: StatusCode) -> Response {
        self.response(status, &self.message(status))
    }
}

impl<F> ErrorStyle for F
where
    F: Fn(StatusCode, &str) -> Value + Send + Sync + 'static,
{
    fn body(&self, status: StatusCode, message: &str) -> Value {
        self(status, message)
    }
}

/// Laravel's error body, `{"message": "..."}`, with Laravel's messages.
///
/// Messages: 401 `Unauthenticated.`, 404 `Not Found`, 429 `Too Many Requests`,
/// 500 `Server Error`, 503 `Service Unavailable`, 504 `Gateway Timeout`; others
/// use the canonical reason phrase.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageStyle;

impl ErrorStyle for MessageStyle {
    fn body(&self, _status: StatusCode, message: &str) -> Value {
        json!({ "message": message })
    }

    fn message(&self, status: StatusCode) -> String {
        match status {
            StatusCode::UNAUTHORIZED => "Unauthenticated.",
            StatusCode::NOT_FOUND => "Not Found",
            StatusCode::TOO_MANY_REQUESTS => "Too Many Requests",
            StatusCode::INTERNAL_SERVER_ERROR => "Server Error",
            StatusCode::SERVICE_UNAVAILABLE => "Service Unavailable",
            StatusCode::GATEWAY_TIMEOUT => "Gateway Timeout",
            other => other.canonical_reason().unwrap_or("Error"),
        }
        .to_owned()
    }
}

/// The `{"statusCode", "name", "message"}` error body of Katana-like APIs.
///
/// `name` is the reason phrase in upper camel case with an `Error` suffix
/// (`UnauthorizedError`, `TooManyRequestsError`, `InternalServerError`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NamedStyle;

impl NamedStyle {
    /// The `name` field for `status`.
    pub fn name(status: StatusCode) -> String {
        let reason = status.canonical_reason().unwrap_or("Unknown");
        let camel: String = reason
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(|word| {
                let mut chars = word.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            })
            .collect();
        if camel.ends_with("Error") {
            camel
        } else {
            camel + "Error"
        }
    }
}

impl ErrorStyle for NamedStyle {
    fn body(&self, status: StatusCode, message: &str) -> Value {
        json!({
            "statusCode": status.as_u16(),
            "name": Self::name(status),
            "message": message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_style_uses_laravel_messages() {
        let style = MessageStyle;
        assert_eq!(style.message(StatusCode::UNAUTHORIZED), "Unauthenticated.");
        assert_eq!(
            style.body(StatusCode::UNAUTHORIZED, "Unauthenticated."),
            json!({"message": "Unauthenticated."})
        );
    }

    #[test]
    fn named_style_builds_error_names() {
        assert_eq!(
            NamedStyle::name(StatusCode::UNAUTHORIZED),
            "UnauthorizedError"
        );
        assert_eq!(
            NamedStyle::name(StatusCode::TOO_MANY_REQUESTS),
            "TooManyRequestsError"
        );
        assert_eq!(
            NamedStyle::name(StatusCode::INTERNAL_SERVER_ERROR),
            "InternalServerError"
        );
        assert_eq!(
            NamedStyle.body(StatusCode::NOT_FOUND, "gone"),
            json!({"statusCode": 404, "name": "NotFoundError", "message": "gone"})
        );
    }

    #[test]
    fn closures_are_styles() {
        let style =
            |status: StatusCode, message: &str| json!({"code": status.as_u16(), "error": message});
        assert_eq!(
            style.body(StatusCode::BAD_GATEWAY, "x"),
            json!({"code": 502, "error": "x"})
        );
        assert_eq!(style.message(StatusCode::BAD_GATEWAY), "Bad Gateway");
    }
}
