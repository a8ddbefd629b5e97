//! The two-step confirmation flow every StatusPro mutation follows. What
//! it reports is the SDK's shared vocabulary ([`toolhost_sdk::mutation`]),
//! the one the Katana tools report too, beside the StatusPro `preview`.
//!
//! 1. `confirm: false` (the default): `{"preview": P, "is_preview": true,
//!    "result": "preview", "message", "warnings", "next_actions"}`. `P`
//!    names the action and echoes the effective arguments; building it
//!    sends at most `GET` requests, never a change.
//! 2. `confirm: true`: what the tool can tell is impossible (a status the
//!    order cannot take) is refused first, as a `VALIDATION_ERROR` tool
//!    error, before anyone is asked. Then the user is asked through the
//!    host ([`require_confirmation`]) with the tool's fixed question.
//!    Anything but a yes returns `result` `declined` or `cancelled` (a
//!    client that cannot ask is `cancelled`, with a warning saying how the
//!    operator can allow the call) and sends nothing.
//! 3. Confirmed: the change is sent. StatusPro's 2xx is `result:
//!    "confirmed"`, `is_preview: false`, and (as the StatusPro record has
//!    it) `confirmed: true, success: true, status_code: <the API's>`; every
//!    report that sent nothing says `confirmed: false`; a refusal is a tool error with
//!    StatusPro's message, and a 5xx or a lost answer a `TRANSIENT` one
//!    whose hint says to read the order before trying again.

use schemars::JsonSchema;
use serde::Serialize;
use toolhost_sdk::ToolError;
use toolhost_sdk::confirm::require_confirmation;
use toolhost_sdk::http::Response;
use toolhost_sdk::mutation::{Report, confirm_next, sent_but_unconfirmed};

use crate::error::api_error;

/// What a mutation tool returns; `P` is its preview.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MutationResult<P> {
    /// The change with its effective arguments: what it would do (in a preview) or did.
    pub preview: P,
    /// What happened, warnings and next steps.
    #[serde(flatten)]
    pub report: Report,
}

/// What one mutation call will do, for its report and its question.
#[derive(Debug, Clone)]
pub struct Plan<P> {
    /// The preview.
    pub preview: P,
    /// What the change does, as a verb phrase: "change order 7's status to
    /// st000003".
    pub summary: String,
    /// The question the user is asked, e.g. "Change order 7 status to st000003?".
    pub question: String,
    /// Who stops it, for a no: "Status change of order 7".
    pub action: String,
    /// What to say once made: "Order 7 is now in status st000003".
    pub done: String,
    /// What to check before going ahead.
    pub warnings: Vec<String>,
    /// How to check the outcome when it is unknown: "Read order 7 with get_order".
    pub check: String,
}

/// Runs the flow for `plan`: a preview for `confirm: false`; otherwise asks
/// the plan's question and, only on a yes, calls `execute` and reports its
/// answer (a refusal is a tool error).
pub fn two_step<P>(
    confirm: bool,
    plan: Plan<P>,
    execute: impl FnOnce() -> Result<Response, ToolError>,
) -> Result<MutationResult<P>, ToolError> {
    let Plan {
        preview,
        summary,
        question,
        action,
        done,
        warnings,
        check,
    } = plan;
    if !confirm {
        return Ok(MutationResult {
            preview,
            report: Report::preview(
                format!("Preview: {summary}; nothing was changed"),
                warnings,
                vec![confirm_next(&summary)],
            ),
        });
    }
    if let Some(stopped) =
        Report::not_confirmed(require_confirmation(&question), &action, &warnings)
    {
        return Ok(MutationResult {
            preview,
            report: stopped,
        });
    }
    let response = execute().map_err(|e| sent_but_unconfirmed(e, &check))?;
    if !response.is_success() {
        return Err(sent_but_unconfirmed(api_error(&response), &check));
    }
    Ok(MutationResult {
        preview,
        report: Report::done(response.status, done, warnings, Vec::new()),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolhost_sdk::mutation::Outcome;

    use super::*;

    #[test]
    fn a_result_is_the_preview_beside_the_shared_report() {
        let out = MutationResult {
            preview: json!({"action": "x"}),
            report: Report::preview("Preview: x".into(), Vec::new(), vec!["n".into()]),
        };
        assert_eq!(
            serde_json::to_value(out).unwrap(),
            json!({"preview": {"action": "x"}, "is_preview": true, "result": "preview",
                   "message": "Preview: x", "warnings": [], "next_actions": ["n"],
                   "confirmed": false, "success": false, "status_code": null})
        );
        assert_eq!(
            Report::done(200, "d".into(), Vec::new(), Vec::new()).result,
            Outcome::Confirmed
        );
    }
}
