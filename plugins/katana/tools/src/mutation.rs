//! The two-step confirmation flow of the four tools that change Katana.
//! What they report is the SDK's shared vocabulary
//! ([`toolhost_sdk::mutation`]), re-exported here: the StatusPro tools
//! report the same fields.
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
//!      call proceed: `cancelled`, with a warning saying so and how the
//!      operator can allow it.
//!
//!    Whenever nothing was sent, `is_preview` stays true.
//! 3. A change Katana refuses is a tool error with Katana's message.

pub use toolhost_sdk::mutation::{Outcome, Report};

use crate::client::Client;

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
