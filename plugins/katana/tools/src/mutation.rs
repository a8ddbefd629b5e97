//! The two-step confirmation flow of the four tools that change Katana,
//! and the fields every one of them reports.
//!
//! 1. `confirm: false` (the default): a preview. Building it sends at most
//!    `GET` requests; the result is `preview` and `is_preview` is true.
//! 2. `confirm: true`: the tool first checks what it can (a refusal here is
//!    a tool error, before anyone is asked), then asks the user through the
//!    host ([`approve`]) with its fixed question.
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
use toolhost_sdk::confirm::{Confirmation, UNSUPPORTED_HINT, UNSUPPORTED_REASON};

use crate::client::Client;

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

    /// The report when the user's `answer` was not a yes, saying who
    /// stopped `action` (e.g. "Purchase order PO-25-010 creation"); the
    /// preview's `warnings` stay. `None` for a yes: the change goes ahead.
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
            next_actions: vec![
                "Nothing was changed. Call again with confirm=true when the user wants to go ahead."
                    .to_string(),
            ],
        })
    }
}

/// Asks the user `question` through `client` (whose retry clock leaves the
/// wait out). A yes is `Ok(())`: make the change. Anything else is the
/// report to return instead ([`Report::not_confirmed`]).
pub fn approve(
    client: &Client,
    question: &str,
    action: &str,
    warnings: &[String],
) -> Result<(), Report> {
    match Report::not_confirmed(client.confirm(question), action, warnings) {
        None => Ok(()),
        Some(stopped) => Err(stopped),
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
        assert_eq!(
            Report::not_confirmed(Confirmation::Confirmed, "X", &[]),
            None,
            "a yes goes ahead"
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
        assert_eq!(cancelled.warnings, ["kept"]);
        let unsupported = Report::not_confirmed(Confirmation::Unsupported, "X", &[]).unwrap();
        assert_eq!(unsupported.result, Outcome::Cancelled);
        assert!(unsupported.warnings[0].contains("trust-confirm-flag"));
    }
}
