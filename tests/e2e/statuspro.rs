//! StatusPro end to end: the nine tool components served by the real
//! `toolhost` binary, driven by rmcp's client, against the StatusPro
//! sandbox started in this process.
//!
//! The configuration is the one an operator writes for the real API, with
//! the sandbox's address: one `[plugins.statuspro]` block for all nine
//! components, `base_url` in `config`, the sandbox's port allowed for `GET`
//! and `POST`, and the API key injected by the host from
//! `STATUSPRO_API_KEY` (the components never see it). Error paths use the
//! same operator features: a `credentials` entry that adds the sandbox's
//! `X-Sandbox-Fault` header forces 5xx and timeouts, and
//! `limits.http_timeout_secs` makes the host give up on a held request.
//!
//! | module | what it proves |
//! |---|---|
//! | `listing` | `tools/list`: names, titles, annotations, documented schemas |
//! | `reads` | the five read tools' success paths, paging and filters |
//! | `errors` | each error code, mapped from what the API (or the network) did |
//! | `mutations` | previews, confirmations in both eras, the changes they make, bulk |
//! | `annotations` | each tool's hints against what two identical calls do to the orders |

mod annotations;
mod errors;
mod listing;
mod mutations;
mod reads;

use crate::support::plugin_set::{self, PluginSet, Running};

/// The nine StatusPro components, by file stem.
pub const COMPONENTS: [&str; 9] = [
    "statuspro_list_orders",
    "statuspro_get_order",
    "statuspro_lookup_order",
    "statuspro_list_statuses",
    "statuspro_get_viable_statuses",
    "statuspro_update_order_status",
    "statuspro_add_order_comment",
    "statuspro_update_order_due_date",
    "statuspro_bulk_update_order_status",
];

/// The nine components against the StatusPro sandbox, allowed `GET` and
/// `POST`.
pub struct Tools;

impl PluginSet for Tools {
    type Sandbox = statuspro_sandbox::Sandbox;
    const COMPONENTS: &'static [&'static str] = &COMPONENTS;
    const METHODS: &'static [&'static str] = &["GET", "POST"];
}

/// A sandbox and a host serving the nine tools against it.
pub type StatusPro = Running<Tools>;

/// How to start a [`StatusPro`].
pub type Setup = plugin_set::Setup<Tools>;

/// The operator's configuration for the nine tools against `sandbox`.
pub fn config(sandbox: &statuspro_sandbox::Sandbox, extra: &str) -> String {
    plugin_set::config::<Tools>(sandbox, extra)
}
