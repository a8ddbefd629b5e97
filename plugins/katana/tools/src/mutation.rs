//! The two-step confirmation flow of the four tools that change Katana,
//! and the fields every one of them reports.
//!
//! 1. `confirm: false` (the default): a preview. Building it sends at most
//!    `GET` requests; the result is `preview` and `is_preview` is true.
//! 2. `confirm: true`: the tool first checks what it can (a refusal here is
//!    a tool error, before anyone is asked), then asks the user through the
//!    host ([`decide`]) with its fixed question.
//!    * accepted with `confirm: true`: the change is sent; `confirmed`.
//!    * accepted with `confirm: false`: `declined`, "… declined by user".
//!    * declined or dismissed: `cancelled`, "… cancelled by user".
//!    * the client cannot ask and the operator's policy does not let the
//!      call proceed (`unsupported`): `cancelled`, with a warning saying so
//!      and how the operator can allow it.
//!
//!    Whenever nothing was sent, `is_preview` stays true.
//! 3. A change Katana refuses is a tool error with Katana's message.

use schemars::JsonSchema;
use serde::Serialize;
use toolhost_sdk::confirm::{
    Confirmation, UNSUPPORTED_HINT, UNSUPPORTED_REASON, require_confirmation,
};

/// What became of a call to a mutating tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::inputs::plain_enum)]
pub enum Outcome {
    /// confirm was false: nothing was asked or changed.
    Preview,
    /// The user confirmed and Katana made the change.
    Confirmed,
    /// The user answered no; nothing was changed.
    Declined,
    /// The user dismissed the question, or the client cannot ask; nothing was changed.
    Cancelled,
    /// Nothing needed changing (e.g. the order was already done); nothing was asked.
    Unchanged,
}

/// The fields every mutating tool reports besides its own.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Report {
    /// True when nothing was changed in Katana (a preview, or the user did not confirm).
    pub is_preview: bool,
    /// What became of the call.
    pub result: Outcome,
    /// One sentence on what happened or would happen.
    pub message: String,
    /// Things to check before (or after) going ahead.
    pub warnings: Vec<String>,
    /// Suggested next steps.
    pub next_actions: Vec<String>,
}

impl Report {
    /// The report of a preview.
    pub fn preview(message: String, warnings: Vec<String>, next_actions: Vec<String>) -> Report {
        Report {
            is_preview: true,
            result: Outcome::Preview,
            message,
            warnings,
            next_actions,
        }
    }

    /// The report of a change Katana made.
    pub fn done(message: String, warnings: Vec<String>, next_actions: Vec<String>) -> Report {
        Report {
            is_preview: false,
            result: Outcome::Confirmed,
            message,
            warnings,
            next_actions,
        }
    }

    /// The report when the user did not approve `action` (e.g. "Purchase
    /// order PO-25-010 creation"): the preview's warnings stay.
    pub fn stopped(why: Stop, action: &str, mut warnings: Vec<String>) -> Report {
        let (result, message) = match why {
            Stop::Declined => (Outcome::Declined, format!("{action} declined by user")),
            Stop::Cancelled => (Outcome::Cancelled, format!("{action} cancelled by user")),
            Stop::Unsupported => {
                warnings.push(format!("{UNSUPPORTED_REASON} {UNSUPPORTED_HINT}"));
                (
                    Outcome::Cancelled,
                    format!("{action} cancelled: this client cannot ask the user to confirm"),
                )
            }
        };
        Report {
            is_preview: true,
            result,
            message,
            warnings,
            next_actions: vec![
                "Nothing was changed. Call again with confirm=true when the user wants to go ahead."
                    .to_string(),
            ],
        }
    }
}

/// Why a confirmed call did not go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The user answered no.
    Declined,
    /// The user dismissed the question.
    Cancelled,
    /// The client cannot ask.
    Unsupported,
}

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Return the preview.
    Preview,
    /// The user confirmed: make the change.
    Proceed,
    /// Return the preview, reporting why nothing was changed.
    Stop(Stop),
}

/// For `confirm: false`, [`Decision::Preview`] without asking; otherwise
/// asks the user `question` and maps the answer.
pub fn decide(confirm: bool, question: &str) -> Decision {
    if !confirm {
        return Decision::Preview;
    }
    match require_confirmation(question) {
        Confirmation::Confirmed => Decision::Proceed,
        Confirmation::Declined => Decision::Stop(Stop::Declined),
        Confirmation::Cancelled => Decision::Stop(Stop::Cancelled),
        Confirmation::Unsupported => Decision::Stop(Stop::Unsupported),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reports_serialize_flat_and_complete() {
        let report = Report::preview("Preview".into(), vec!["w".into()], vec!["n".into()]);
        assert_eq!(
            serde_json::to_value(report).unwrap(),
            json!({"is_preview": true, "result": "preview", "message": "Preview",
                   "warnings": ["w"], "next_actions": ["n"]})
        );
    }

    #[test]
    fn not_confirmed_reports_say_who_stopped_it() {
        let declined = Report::stopped(Stop::Declined, "Purchase order PO-1 creation", vec![]);
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
        let cancelled = Report::stopped(Stop::Cancelled, "X", vec!["kept".into()]);
        assert_eq!(cancelled.message, "X cancelled by user");
        assert_eq!(cancelled.warnings, ["kept"]);
        let unsupported = Report::stopped(Stop::Unsupported, "X", vec![]);
        assert_eq!(unsupported.result, Outcome::Cancelled);
        assert!(unsupported.warnings[0].contains("trust-confirm-flag"));
    }
}
