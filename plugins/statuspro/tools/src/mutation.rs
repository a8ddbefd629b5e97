//! The two-step confirmation flow every StatusPro mutation follows.
//!
//! 1. `confirm: false` (the default): return `{"preview": P, "confirmed":
//!    false}`. `P` names the action and echoes the effective arguments;
//!    building it sends at most `GET` requests, never a change.
//! 2. `confirm: true`: ask the user through the host
//!    ([`require_confirmation`]) with the tool's fixed question. Anything
//!    but a yes returns `{"preview": P, "confirmed": false, "result":
//!    "cancelled" | "declined" | "unsupported"}` and sends nothing;
//!    `unsupported` (the client cannot show confirmations) also carries an
//!    issue telling the operator how to allow the call.
//! 3. Confirmed: send the change and return `{"confirmed": true,
//!    "success": <2xx>, "status_code": <HTTP status>}`, plus the issues
//!    when the API refused it. A request that got no answer at all is a
//!    tool error instead: nothing is known to have happened.

use schemars::JsonSchema;
use serde::Serialize;
use toolhost_sdk::confirm::{
    Confirmation, UNSUPPORTED_HINT, UNSUPPORTED_REASON, require_confirmation,
};
use toolhost_sdk::http::Response;
use toolhost_sdk::{ErrorCode, ToolError};

use crate::error::api_error;

/// Why a mutation was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::inputs::plain_enum)]
pub enum NotConfirmed {
    /// The user dismissed the question or it expired, or the client cannot
    /// show confirmations and the operator's policy does not let the call go
    /// ahead without one (then an issue says so and what to change).
    Cancelled,
    /// The user answered no.
    Declined,
}

/// What a mutation tool returns; `P` is its preview.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MutationResult<P> {
    /// What the change would do, with the effective arguments. Absent once the change was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<P>,
    /// Whether the user confirmed and the change was sent to StatusPro.
    pub confirmed: bool,
    /// Why the change was not made, when confirm was true but the user did not approve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<NotConfirmed>,
    /// Whether StatusPro accepted the change (HTTP 2xx). Present once the change was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
    /// The HTTP status StatusPro answered, e.g. 200, 202 or 422. Present once the change was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    /// A remark about what happens next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What went wrong, when something did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<ToolError>,
}

impl<P> MutationResult<P> {
    /// The answer to `confirm: false`.
    pub fn preview(preview: P) -> Self {
        MutationResult {
            preview: Some(preview),
            confirmed: false,
            result: None,
            success: None,
            status_code: None,
            note: None,
            issues: Vec::new(),
        }
    }

    /// The answer when the user did not approve; `issues` say why, when the
    /// user was never asked.
    pub fn not_confirmed(preview: P, why: NotConfirmed, issues: Vec<ToolError>) -> Self {
        MutationResult {
            result: Some(why),
            issues,
            ..Self::preview(preview)
        }
    }

    /// The answer once the change was sent and StatusPro answered.
    pub fn executed(response: &Response) -> Self {
        let success = response.is_success();
        MutationResult {
            preview: None,
            confirmed: true,
            result: None,
            success: Some(success),
            status_code: Some(response.status),
            note: None,
            issues: if success {
                Vec::new()
            } else {
                vec![api_error(response)]
            },
        }
    }
}

/// The issue explaining a `cancelled` outcome when the client cannot confirm.
fn unsupported_issue() -> ToolError {
    ToolError::new(ErrorCode::PermissionDenied, UNSUPPORTED_REASON).with_hint(UNSUPPORTED_HINT)
}

/// Runs the flow: a preview for `confirm: false`; otherwise asks
/// `question` and, only on a yes, calls `execute` and reports its answer.
pub fn two_step<P>(
    confirm: bool,
    preview: P,
    question: &str,
    execute: impl FnOnce() -> Result<Response, ToolError>,
) -> Result<MutationResult<P>, ToolError> {
    if !confirm {
        return Ok(MutationResult::preview(preview));
    }
    let (why, issues) = match require_confirmation(question) {
        Confirmation::Confirmed => return Ok(MutationResult::executed(&execute()?)),
        Confirmation::Declined => (NotConfirmed::Declined, Vec::new()),
        Confirmation::Cancelled => (NotConfirmed::Cancelled, Vec::new()),
        Confirmation::Unsupported => (NotConfirmed::Cancelled, vec![unsupported_issue()]),
    };
    Ok(MutationResult::not_confirmed(preview, why, issues))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn response(status: u16, body: &str) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
            request_line: "GET /v1/x".to_string(),
        }
    }

    #[test]
    fn a_preview_is_just_the_preview_and_confirmed_false() {
        let out = MutationResult::preview(json!({"action": "x"}));
        assert_eq!(
            serde_json::to_value(out).unwrap(),
            json!({"preview": {"action": "x"}, "confirmed": false})
        );
    }

    #[test]
    fn not_confirmed_says_why_and_an_unasked_user_is_explained() {
        let out = MutationResult::not_confirmed(json!({}), NotConfirmed::Declined, Vec::new());
        assert_eq!(
            serde_json::to_value(out).unwrap(),
            json!({"preview": {}, "confirmed": false, "result": "declined"})
        );
        let out = serde_json::to_value(MutationResult::not_confirmed(
            json!({}),
            NotConfirmed::Cancelled,
            vec![unsupported_issue()],
        ))
        .unwrap();
        assert_eq!(out["result"], "cancelled");
        assert_eq!(out["issues"][0]["code"], "PERMISSION_DENIED");
        assert!(
            out["issues"][0]["hint"]
                .as_str()
                .unwrap()
                .contains("trust-confirm-flag")
        );
    }

    #[test]
    fn executed_reports_the_status_and_issues_on_failure() {
        let ok = MutationResult::<()>::executed(&response(200, r#"{"message":"ok"}"#));
        assert_eq!(
            serde_json::to_value(ok).unwrap(),
            json!({"confirmed": true, "success": true, "status_code": 200})
        );
        let failed = serde_json::to_value(MutationResult::<()>::executed(&response(
            404,
            r#"{"message":"Order not found."}"#,
        )))
        .unwrap();
        assert_eq!(failed["success"], false);
        assert_eq!(failed["status_code"], 404);
        assert_eq!(failed["issues"][0]["code"], "NOT_FOUND");
    }
}
