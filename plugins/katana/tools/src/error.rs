//! Katana failures in the shared error vocabulary (the envelope StatusPro's
//! tools use too).
//!
//! [`api_error`] starts from the SDK's status mapping
//! ([`toolhost_sdk::http::error_for_status`]: 400/422 `VALIDATION_ERROR`,
//! 401/403 `PERMISSION_DENIED`, 404 `NOT_FOUND`, 409 `CONFLICT`, 429
//! `RATE_LIMIT` with `retry_after_ms`, 5xx `TRANSIENT`, else `INTERNAL`),
//! which already takes Katana's `message` as the message, and adds the
//! hint: the first `details` entry of a 422, or what to do about the other
//! codes.

use serde::Deserialize;
use toolhost_sdk::http::{self, Response};
use toolhost_sdk::{ErrorCode, ToolError};

/// The tool error for an unsuccessful Katana response. `missing` names
/// what a 404 means for this request, e.g. `purchase order 7001`.
pub fn api_error(response: &Response, missing: &str) -> ToolError {
    let mut error = http::error_for_status(response);
    error.hint = match error.code {
        ErrorCode::ValidationError => first_detail(&response.body),
        ErrorCode::PermissionDenied => Some(
            "Katana refused the API key. The operator sets it in toolhost.toml (the \
             `credentials` entry for the API's host, usually from KATANA_API_KEY); retrying \
             will not help."
                .to_string(),
        ),
        ErrorCode::NotFound => Some(not_found_hint(missing)),
        ErrorCode::RateLimit => Some(
            "Katana allows 60 requests a minute per API key. Wait retry_after_ms before \
             calling again."
                .to_string(),
        ),
        ErrorCode::Transient => {
            Some("Katana had a temporary problem; try again in a little while.".to_string())
        }
        _ => None,
    };
    error
}

/// What to do when Katana has no `missing` (e.g. `purchase order 7001`):
/// an order is found by its number with `find_order`, a variant by SKU or
/// name with `search_items`.
pub fn not_found_hint(missing: &str) -> String {
    if missing.contains("order") {
        format!(
            "Katana has no {missing}. Check the order_id and order type; find_order looks an \
             order up by its number (e.g. PO-25-001) and returns its id and rows."
        )
    } else if missing.contains("variant") {
        format!(
            "Katana has no {missing}. Check the id; search_items finds variant ids by SKU or name."
        )
    } else {
        format!("Katana has no {missing}. Check the id.")
    }
}

/// The hint for an error answered to a change that was sent: the SDK's
/// shared rule ([`toolhost_sdk::mutation::sent_but_unconfirmed`]): a 5xx or
/// a lost answer leaves its outcome unknown, so the caller must `check`
/// before trying again; other errors keep their hints.
pub fn after_write(error: ToolError, check: &str) -> ToolError {
    toolhost_sdk::mutation::sent_but_unconfirmed(error, check)
}

/// The error for a change Katana accepted (2xx) with an answer that could
/// not be read: the change was made, so it must not be repeated.
pub fn unreadable_answer(mut error: ToolError, check: &str) -> ToolError {
    error.hint = Some(format!(
        "Katana accepted the change, so do not repeat it. {check} to see the result."
    ));
    error
}

/// The first entry of a 422 body's `details`, as `field: message`.
pub fn first_detail(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Body {
        #[serde(default)]
        details: Vec<Detail>,
    }
    #[derive(Deserialize)]
    struct Detail {
        #[serde(default)]
        path: Option<String>,
        #[serde(default)]
        message: Option<String>,
    }
    let body: Body = serde_json::from_slice(body).ok()?;
    let detail = body.details.into_iter().next()?;
    let field = detail
        .path
        .as_deref()
        .map(|p| p.trim_start_matches('.'))
        .filter(|p| !p.is_empty());
    match (field, detail.message) {
        (Some(field), Some(message)) => Some(format!("{field}: {message}")),
        (None, Some(message)) => Some(message),
        (Some(field), None) => Some(format!("{field} is invalid")),
        (None, None) => None,
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
    fn a_422_keeps_katanas_message_and_hints_with_the_first_detail() {
        let e = api_error(
            &response(
                422,
                r#"{"statusCode":422,"name":"UnprocessableEntityError","message":"Validation failed","code":"VALIDATION_FAILED","details":[{"path":".order_no","code":"required","message":"must have required property 'order_no'"},{"path":".x","code":"y","message":"z"}]}"#,
                &[],
            ),
            "purchase order",
        );
        assert_eq!(e.code, ErrorCode::ValidationError);
        assert_eq!(e.message, "Validation failed");
        assert_eq!(
            e.hint.as_deref(),
            Some("order_no: must have required property 'order_no'")
        );
    }

    #[test]
    fn a_400_without_details_has_no_hint() {
        let e = api_error(
            &response(
                400,
                r#"{"statusCode":400,"name":"BadRequest","message":"Bad Request"}"#,
                &[],
            ),
            "x",
        );
        assert_eq!((e.code, e.hint), (ErrorCode::ValidationError, None));
    }

    #[test]
    fn other_codes_get_their_hints() {
        let e = api_error(
            &response(
                404,
                r#"{"statusCode":404,"name":"NotFoundError","message":"Not found"}"#,
                &[],
            ),
            "purchase order 9999",
        );
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::NotFound, "Not found")
        );
        let hint = e.hint.unwrap();
        assert!(
            hint.contains("purchase order 9999") && hint.contains("find_order"),
            "{hint}"
        );
        assert!(not_found_hint("variant 5999").contains("search_items"));
        let e = api_error(
            &response(
                429,
                r#"{"message":"Too Many Requests"}"#,
                &[("retry-after", "7")],
            ),
            "x",
        );
        assert_eq!(
            (e.code, e.retry_after_ms),
            (ErrorCode::RateLimit, Some(7000))
        );
        let e = api_error(&response(401, r#"{"message":"Unauthorized"}"#, &[]), "x");
        assert!(e.hint.unwrap().contains("KATANA_API_KEY"));
        assert_eq!(
            api_error(&response(503, "", &[]), "x").code,
            ErrorCode::Transient
        );
    }

    #[test]
    fn a_failed_write_says_its_outcome_is_unknown() {
        let e = after_write(ToolError::transient("boom"), "Look at the order");
        assert!(e.hint.unwrap().contains("may or may not"));
        let v = after_write(ToolError::validation("bad").with_hint("h"), "Look");
        assert_eq!(v.hint.as_deref(), Some("h"));
        let u = unreadable_answer(ToolError::internal("bad JSON"), "Read the order");
        assert!(u.hint.unwrap().starts_with("Katana accepted the change"));
    }
}
