//! Katana end to end: the one `katana.wasm` component and its seven tools,
//! served by the real `toolhost` binary, driven by rmcp's client, against
//! the Katana sandbox started in this process.
//!
//! The configuration is the one an operator writes for the real API, with
//! the sandbox's address: one `[plugins.katana]` block, `base_url` in
//! `config`, the sandbox's port allowed for `GET`, `POST` and `PATCH`, and
//! the API key injected by the host from `KATANA_API_KEY` (the component
//! never sees it). Error paths use the same operator features: a
//! `credentials` entry that adds the sandbox's `X-Sandbox-Fault` header
//! forces 5xx and 429 answers.
//!
//! The sandbox's state (orders, stock) and its request log are the ground
//! truth: a preview is proved to write nothing by the log, a change by the
//! state.
//!
//! | module | what it proves |
//! |---|---|
//! | `listing` | `tools/list`: names, titles, annotations, documented schemas |
//! | `reads` | `search_items` ranking and `verify_order_document` verdicts |
//! | `mutations` | previews, confirmations in both eras, and the changes they make |
//! | `errors` | each error code, from what the API (or the host) did |
//! | `annotations` | each tool's hints against what two identical calls do to the workshop |

mod annotations;
mod errors;
mod listing;
mod mutations;
mod reads;

use crate::support::plugin_set::{self, PluginSet, Running};

/// The one Katana component against the Katana sandbox, allowed `GET`,
/// `POST` and `PATCH`.
pub struct Tools;

impl PluginSet for Tools {
    type Sandbox = katana_sandbox::Sandbox;
    const COMPONENTS: &'static [&'static str] = &["katana"];
    const METHODS: &'static [&'static str] = &["GET", "POST", "PATCH"];
}

/// A sandbox and a host serving the Katana component against it.
pub type Katana = Running<Tools>;

/// How to start a [`Katana`].
pub type Setup = plugin_set::Setup<Tools>;
