//! Asking the user to approve an action.
//!
//! The host asks through the MCP client. In a tool that is not read-only,
//! the host refuses every request other than `GET`/`HEAD` until the user has
//! confirmed in the same call, so ask before you mutate.

use crate::bindings::toolhost::plugin0_1_0::confirm as wit;

/// What the user decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmation {
    /// The user said yes.
    Confirmed,
    /// The user answered no.
    Declined,
    /// The user dismissed the question, or it expired.
    Cancelled,
    /// The client cannot ask, and the operator's policy does not let the
    /// call go ahead without an answer.
    Unsupported,
}

impl Confirmation {
    /// Whether the action may go ahead.
    pub fn is_confirmed(self) -> bool {
        self == Confirmation::Confirmed
    }

    /// The answer as one word: `confirmed`, `declined`, `cancelled` or
    /// `unsupported`. Tools do not report `unsupported` as a `result`: the
    /// user was never asked, which [`crate::mutation::Report::not_confirmed`]
    /// reports as `cancelled` with a warning saying why.
    pub fn as_str(self) -> &'static str {
        match self {
            Confirmation::Confirmed => "confirmed",
            Confirmation::Declined => "declined",
            Confirmation::Cancelled => "cancelled",
            Confirmation::Unsupported => "unsupported",
        }
    }
}

/// Why nothing changed when the answer was [`Confirmation::Unsupported`]:
/// the first half of what a tool reports then.
pub const UNSUPPORTED_REASON: &str =
    "This MCP client cannot show confirmation prompts, so nothing was changed.";

/// What to change when the answer was [`Confirmation::Unsupported`]: the
/// second half of what a tool reports then.
pub const UNSUPPORTED_HINT: &str = "Use a client that supports elicitation, or the operator \
    can set `confirmation = \"trust-confirm-flag\"` under [host] in toolhost.toml to let \
    `confirm: true` stand for the user's approval.";

/// Asks the user to approve `message` and waits for the answer.
pub fn require_confirmation(message: &str) -> Confirmation {
    match wit::request(message) {
        wit::Outcome::Confirmed => Confirmation::Confirmed,
        wit::Outcome::Declined => Confirmation::Declined,
        wit::Outcome::Cancelled => Confirmation::Cancelled,
        wit::Outcome::Unsupported => Confirmation::Unsupported,
    }
}
