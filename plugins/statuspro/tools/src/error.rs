//! StatusPro failures in the shared error vocabulary.
//!
//! [`api_error`] starts from the SDK's status mapping
//! ([`toolhost_sdk::http::error_for_status`]: 400/422 `VALIDATION_ERROR`,
//! 401/403 `PERMISSION_DENIED`, 404 `NOT_FOUND`, 409 `CONFLICT`, 429
//! `RATE_LIMIT` with `retry_after_ms`, 5xx `TRANSIENT`, else `INTERNAL`) and
//! adds what only StatusPro knows: the first field error of a 422 as the
//! hint, the way out of a non-viable status change (call
//! `get_viable_statuses`), and what to do about the other codes.
//!
//! An entry of a result's `issues` list (a mutation the API refused, a walk
//! cut short) is the SDK's [`ToolError`] itself, which serializes as one
//! issue of the host's error envelope, so a model reads both the same way.

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use toolhost_sdk::http::{self, Response};
use toolhost_sdk::{ErrorCode, ToolError};

/// The tool error for an unsuccessful API response.
pub fn api_error(response: &Response) -> ToolError {
    let mut error = http::error_for_status(response);
    error.hint = match error.code {
        ErrorCode::ValidationError => validation_hint(&response.body),
        ErrorCode::PermissionDenied => Some(
            "StatusPro refused the API key. The operator sets it in toolhost.toml (the \
             `credentials` entry for the API's host, usually from STATUSPRO_API_KEY); \
             retrying will not help."
                .to_string(),
        ),
        ErrorCode::NotFound => Some(
            "No such order. Check the order_id, or find the order with list_orders or \
             lookup_order."
                .to_string(),
        ),
        ErrorCode::RateLimit => Some(
            "StatusPro allows 60 requests a minute (5 for bulk updates). Wait retry_after_ms \
             before calling again."
                .to_string(),
        ),
        ErrorCode::Transient => {
            Some("StatusPro had a temporary problem; try again in a little while.".to_string())
        }
        _ => None,
    };
    error
}

/// The hint for a 400/422: the first field error, and for a status that
/// is not viable for the order, the tool that lists the ones that are.
fn validation_hint(body: &[u8]) -> Option<String> {
    let (field, message) = first_field_error(body)?;
    if field == "status_code" && message.to_ascii_lowercase().contains("viable") {
        Some(format!(
            "{message} Call get_viable_statuses with this order_id to see the statuses the \
             order can move to, then use one of those codes."
        ))
    } else {
        Some(format!("{field}: {message}"))
    }
}

/// The first message of the first field in a 422 body's `errors`, in the
/// order the API sent them.
pub fn first_field_error(body: &[u8]) -> Option<(String, String)> {
    #[derive(Deserialize)]
    struct Body {
        errors: FirstFieldError,
    }
    let body: Body = serde_json::from_slice(body).ok()?;
    body.errors.0
}

/// The first `(field, message)` of an `errors` object, read in wire order
/// (a map type would sort the fields).
struct FirstFieldError(Option<(String, String)>);

impl<'de> Deserialize<'de> for FirstFieldError {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FirstVisitor;
        impl<'de> Visitor<'de> for FirstVisitor {
            type Value = FirstFieldError;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of field errors")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut first = None;
                while let Some((field, messages)) = map.next_entry::<String, Vec<String>>()? {
                    if first.is_none()
                        && let Some(message) = messages.into_iter().next()
                    {
                        first = Some((field, message));
                    }
                }
                Ok(FirstFieldError(first))
            }
        }
        deserializer.deserialize_map(FirstVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, body: &str, headers: &[(&str, &str)]) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.as_bytes().to_vec(),
            request_line: "GET /v1/x".to_string(),
        }
    }

    #[test]
    fn a_validation_error_hints_with_the_first_field_error_in_wire_order() {
        let e = api_error(&response(
            422,
            r#"{"message":"The given data was invalid.","errors":{"per_page":["The per page field must be between 1 and 100."],"page":["The page field must be at least 1."]}}"#,
            &[],
        ));
        assert_eq!(e.code, ErrorCode::ValidationError);
        assert_eq!(e.message, "The given data was invalid.");
        assert_eq!(
            e.hint.as_deref(),
            Some("per_page: The per page field must be between 1 and 100.")
        );
    }

    #[test]
    fn a_non_viable_status_points_to_get_viable_statuses() {
        let e = api_error(&response(
            422,
            r#"{"message":"The given data was invalid.","errors":{"status_code":["The status st000004 (Delivered) is not a viable next status for this order."]}}"#,
            &[],
        ));
        let hint = e.hint.unwrap();
        assert!(hint.starts_with("The status st000004 (Delivered) is not a viable"));
        assert!(hint.contains("get_viable_statuses"));
    }

    #[test]
    fn a_400_without_field_errors_has_no_hint() {
        let e = api_error(&response(400, r#"{"message":"Malformed JSON."}"#, &[]));
        assert_eq!(e.code, ErrorCode::ValidationError);
        assert_eq!(e.hint, None);
    }

    #[test]
    fn rate_limits_keep_the_retry_after_and_other_codes_get_hints() {
        let e = api_error(&response(
            429,
            r#"{"message":"Too Many Requests"}"#,
            &[("retry-after", "7")],
        ));
        assert_eq!(
            (e.code, e.retry_after_ms),
            (ErrorCode::RateLimit, Some(7000))
        );
        let e = api_error(&response(401, r#"{"message":"Unauthenticated."}"#, &[]));
        assert_eq!(e.code, ErrorCode::PermissionDenied);
        assert!(e.hint.unwrap().contains("toolhost.toml"));
        let e = api_error(&response(404, r#"{"message":"Order not found."}"#, &[]));
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::NotFound, "Order not found.")
        );
        assert_eq!(
            api_error(&response(503, "", &[])).code,
            ErrorCode::Transient
        );
    }
}
