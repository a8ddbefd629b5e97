//! One vocabulary for tools that change things: what a two-step
//! (preview, then confirm) call reports, whichever plugin set it is in.
//!
//! A mutating tool takes `confirm` (default `false`) and flattens a
//! [`Report`] into its output, beside its own fields:
//!
//! ```json
//! {"is_preview": true, "result": "preview", "message": "Preview: …; nothing was changed",
//!  "warnings": [], "next_actions": ["Call again with confirm=true to …"],
//!  "confirmed": false, "success": false, "status_code": null}
//! ```
//!
//! | what happened | `result` | `is_preview` | `confirmed` | `success` | `status_code` | how |
//! |---|---|---|---|---|---|---|
//! | `confirm: false`: nothing asked, nothing sent | `preview` | true | false | false | null | [`Report::preview`] |
//! | the user said yes and the upstream made the change | `confirmed` | false | true | true | the API's (200, 202, 204…) | [`Report::done`] |
//! | the user answered no | `declined` | true | false | false | null | [`Report::not_confirmed`] |
//! | the user dismissed the question, or the client cannot ask | `cancelled` | true | false | false | null | [`Report::not_confirmed`] |
//! | nothing needed changing; nothing was asked | `unchanged` | false | false | false | null | [`Report::unchanged`] |
//!
//! The fields come from two records: `is_preview`, `result`, `message`,
//! `warnings` and `next_actions` from Katana's, `confirmed`, `success` and
//! `status_code` from StatusPro's, so a client written against either
//! reads every mutation of both sets. `is_preview` is true exactly when
//! nothing was written; `confirmed` exactly when the user said yes and the
//! change was applied; `success` means the API accepted the change (always
//! with `confirmed`, since a refused change is a tool error, never a
//! report); `status_code` is the HTTP status the API answered the change
//! with, `null` when nothing was sent. A refusal is
//! never a report: a change the tool can tell is impossible (a status the
//! order cannot take, a row already received) is refused **before the user
//! is asked**, and a change the upstream refuses, are tool errors
//! ([`ToolError`](crate::ToolError)): the client sees `isError: true` and the
//! host's envelope `{"ok":false,"result":null,"issues":[…]}`. A change sent
//! whose outcome is unknown (a 5xx, a lost answer) is a `TRANSIENT` error
//! whose hint says to check before repeating it ([`sent_but_unconfirmed`]).

use schemars::JsonSchema;
use serde::Serialize;

use crate::confirm::{Confirmation, UNSUPPORTED_HINT, UNSUPPORTED_REASON};
use crate::{ErrorCode, ToolError};

/// What became of a call to a mutating tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::schema::plain_enum)]
pub enum Outcome {
    /// confirm was false: nothing was asked or changed.
    Preview,
    /// The user confirmed and the change was made.
    Confirmed,
    /// The user answered no; nothing was changed.
    Declined,
    /// The user dismissed the question, or the client cannot ask; nothing was changed.
    Cancelled,
    /// Nothing needed changing (e.g. the order was already done); nothing was asked.
    Unchanged,
}

/// The fields every mutating tool reports besides its own; flatten it into
/// the output (`#[serde(flatten)]`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Report {
    /// True when nothing was changed (a preview, or the user did not confirm).
    pub is_preview: bool,
    /// What became of the call.
    pub result: Outcome,
    /// One sentence on what happened or would happen.
    pub message: String,
    /// Things to check before (or after) going ahead.
    pub warnings: Vec<String>,
    /// Suggested next steps.
    pub next_actions: Vec<String>,
    /// True exactly when the user confirmed and the change was applied;
    /// false on a preview, a no, a dismissal or a call with nothing to do.
    pub confirmed: bool,
    /// True when the API accepted the change (a 2xx); false when none was sent.
    pub success: bool,
    /// The HTTP status the API answered the change with; null when nothing was sent.
    pub status_code: Option<u16>,
}

impl Report {
    /// The report of a preview: `message` says what would happen.
    pub fn preview(message: String, warnings: Vec<String>, next_actions: Vec<String>) -> Report {
        Report {
            is_preview: true,
            result: Outcome::Preview,
            message,
            warnings,
            next_actions,
            confirmed: false,
            success: false,
            status_code: None,
        }
    }

    /// The report of a change the upstream made, answering it with the
    /// HTTP status `status_code`.
    pub fn done(
        status_code: u16,
        message: String,
        warnings: Vec<String>,
        next_actions: Vec<String>,
    ) -> Report {
        Report {
            is_preview: false,
            result: Outcome::Confirmed,
            message,
            warnings,
            next_actions,
            confirmed: true,
            success: true,
            status_code: Some(status_code),
        }
    }

    /// The report when nothing needed changing, so nobody was asked.
    pub fn unchanged(message: String, warnings: Vec<String>) -> Report {
        Report {
            is_preview: false,
            result: Outcome::Unchanged,
            message,
            warnings,
            next_actions: Vec::new(),
            confirmed: false,
            success: false,
            status_code: None,
        }
    }

    /// The report when the user's `answer` was not a yes, saying who
    /// stopped `action` (e.g. "Purchase order PO-25-010 creation"); the
    /// preview's `warnings` stay. `None` for a yes: the change goes ahead.
    ///
    /// A client that cannot ask ([`Confirmation::Unsupported`]) is
    /// `cancelled`, with a warning saying so and how the operator can allow
    /// the call.
    pub fn not_confirmed(
        answer: Confirmation,
        action: &str,
        warnings: &[String],
    ) -> Option<Report> {
        let mut warnings = warnings.to_vec();
        let (result, message) = match answer {
            Confirmation::Confirmed => return None,
            Confirmation::Declined => (Outcome::Declined, format!("{action} declined by user")),
            Confirmation::Cancelled => (Outcome::Cancelled, format!("{action} cancelled by user")),
            Confirmation::Unsupported => {
                warnings.push(format!("{UNSUPPORTED_REASON} {UNSUPPORTED_HINT}"));
                (
                    Outcome::Cancelled,
                    format!("{action} cancelled: this client cannot ask the user to confirm"),
                )
            }
        };
        Some(Report {
            is_preview: true,
            result,
            message,
            warnings,
            next_actions: vec![NOT_CONFIRMED_NEXT.to_string()],
            confirmed: false,
            success: false,
            status_code: None,
        })
    }
}

/// The next action of a call the user did not confirm.
pub const NOT_CONFIRMED_NEXT: &str =
    "Nothing was changed. Call again with confirm=true when the user wants to go ahead.";

/// The next action of a preview: "Call again with confirm=true to `what`
/// (the user is asked to approve)."
pub fn confirm_next(what: &str) -> String {
    format!("Call again with confirm=true to {what} (the user is asked to approve).")
}

/// `error`, answered to a change that was sent, with the hint its outcome
/// calls for: a `TRANSIENT` one (a 5xx, a timeout, a lost answer) leaves the
/// change unknown, so the caller must `check` (e.g. "Read order 7 with
/// get_order") before trying again. Other errors keep their hints: a 4xx
/// changed nothing, and a refusal by the host sent nothing.
pub fn sent_but_unconfirmed(mut error: ToolError, check: &str) -> ToolError {
    if error.code == ErrorCode::Transient {
        error.hint = Some(format!(
            "The change was sent but the upstream did not confirm it, so it may or may not \
             have been made. {check} before trying again."
        ));
    }
    error
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::output_schema_text;

    #[test]
    fn reports_serialize_flat_and_complete() {
        let report = Report::preview("Preview".into(), vec!["w".into()], vec!["n".into()]);
        assert_eq!(
            serde_json::to_value(report).unwrap(),
            json!({"is_preview": true, "result": "preview", "message": "Preview",
                   "warnings": ["w"], "next_actions": ["n"],
                   "confirmed": false, "success": false, "status_code": null})
        );
        let done = Report::done(202, "Queued".into(), Vec::new(), Vec::new());
        assert_eq!(
            serde_json::to_value(done).unwrap(),
            json!({"is_preview": false, "result": "confirmed", "message": "Queued",
                   "warnings": [], "next_actions": [],
                   "confirmed": true, "success": true, "status_code": 202})
        );
        let schema: serde_json::Value =
            serde_json::from_str(&output_schema_text::<Report>()).unwrap();
        assert_eq!(
            schema["properties"]["result"]["enum"],
            json!(["preview", "confirmed", "declined", "cancelled", "unchanged"])
        );
        assert_eq!(schema["properties"]["confirmed"]["type"], "boolean");
        assert_eq!(schema["properties"]["success"]["type"], "boolean");
        assert_eq!(
            schema["properties"]["status_code"]["type"],
            json!(["integer", "null"])
        );
    }

    #[test]
    fn not_confirmed_reports_say_who_stopped_it() {
        assert_eq!(
            Report::not_confirmed(Confirmation::Confirmed, "X", &[]),
            None
        );
        let declined =
            Report::not_confirmed(Confirmation::Declined, "Purchase order PO-1 creation", &[])
                .unwrap();
        assert_eq!(
            (
                declined.result,
                declined.message.as_str(),
                declined.is_preview
            ),
            (
                Outcome::Declined,
                "Purchase order PO-1 creation declined by user",
                true
            )
        );
        let cancelled =
            Report::not_confirmed(Confirmation::Cancelled, "X", &["kept".into()]).unwrap();
        assert_eq!(cancelled.message, "X cancelled by user");
        assert_eq!(
            (
                cancelled.confirmed,
                cancelled.success,
                cancelled.status_code
            ),
            (false, false, None)
        );
        assert_eq!(cancelled.warnings, ["kept"]);
        let unsupported = Report::not_confirmed(Confirmation::Unsupported, "X", &[]).unwrap();
        assert_eq!(unsupported.result, Outcome::Cancelled);
        assert!(unsupported.warnings[0].contains("trust-confirm-flag"));
    }

    #[test]
    fn a_change_of_unknown_outcome_says_to_check_first() {
        let e = sent_but_unconfirmed(ToolError::transient("boom"), "Read order 7");
        assert!(e.hint.unwrap().contains("may or may not"));
        let v = sent_but_unconfirmed(ToolError::validation("bad").with_hint("h"), "Look");
        assert_eq!(v.hint.as_deref(), Some("h"));
    }
}
