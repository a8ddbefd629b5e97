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

use statuspro_sandbox::{ApiSandbox as _, Sandbox, SandboxConfig};

use crate::support::{Elicitation, Era, Host, HostOptions};

/// The nine components, by file stem.
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

/// A sandbox and a host serving the nine tools against it.
pub struct StatusPro {
    /// The sandbox: its state and request log are the tests' ground truth.
    pub sandbox: Sandbox,
    /// The host, with a connected client.
    pub host: Host,
}

/// How to start a [`StatusPro`].
pub struct Setup {
    /// Serve over Streamable HTTP instead of stdio.
    http: bool,
    sandbox: SandboxConfig,
    era: Era,
    elicitation: Elicitation,
    api_key: Option<String>,
    extra_config: String,
}

impl Setup {
    /// A default sandbox, a legacy client that cannot elicit, the right key.
    pub fn new() -> Setup {
        Setup {
            http: false,
            sandbox: SandboxConfig::default(),
            era: Era::Legacy,
            elicitation: Elicitation::Unsupported,
            api_key: None,
            extra_config: String::new(),
        }
    }

    /// Starts the sandbox with `config`.
    pub fn sandbox(mut self, config: SandboxConfig) -> Setup {
        self.sandbox = config;
        self
    }

    /// The client's protocol era.
    pub fn era(mut self, era: Era) -> Setup {
        self.era = era;
        self
    }

    /// Serves over Streamable HTTP instead of stdio.
    pub fn http(mut self) -> Setup {
        self.http = true;
        self
    }

    /// How the client answers confirmations.
    pub fn elicitation(mut self, elicitation: Elicitation) -> Setup {
        self.elicitation = elicitation;
        self
    }

    /// Gives the host this API key instead of the sandbox's.
    pub fn api_key(mut self, key: &str) -> Setup {
        self.api_key = Some(key.to_string());
        self
    }

    /// Appends TOML to the generated `toolhost.toml`.
    pub fn config(mut self, toml: &str) -> Setup {
        self.extra_config.push_str(toml);
        self
    }

    /// Makes the host add `X-Sandbox-Fault: fault` to every request to the
    /// sandbox, as an operator's credential header would be added.
    pub fn fault(self, fault: &str) -> Setup {
        self.config(&format!(
            "\n[[plugins.statuspro.credentials]]\nhost = \"127.0.0.1\"\nport = \"*\"\nheader = \"X-Sandbox-Fault\"\nvalue = \"{fault}\"\n"
        ))
    }

    /// Starts the sandbox, then the host pointed at it.
    pub async fn start(self) -> StatusPro {
        let sandbox = statuspro_sandbox::start(self.sandbox)
            .await
            .expect("the sandbox starts");
        let key = self
            .api_key
            .unwrap_or_else(|| sandbox.api_key().to_string());
        let options = HostOptions::new(&COMPONENTS)
            .era(self.era)
            .elicitation(self.elicitation)
            .env("STATUSPRO_API_KEY", &key)
            .config(crate::audit::with_trail(&config(
                &sandbox,
                &self.extra_config,
            )));
        let options = if self.http { options.http() } else { options };
        let host = Host::start(options).await;
        StatusPro { sandbox, host }
    }
}

/// The operator's configuration for the nine tools against `sandbox`.
pub fn config(sandbox: &Sandbox, extra: &str) -> String {
    sandbox.toolhost_config(&["GET", "POST"]) + extra
}

/// Every change the sandbox received is in the audit trail, made by a call
/// whose latest confirmation was a yes; no call changed anything without
/// one (so every declined, cancelled or unanswered confirmation left a
/// record without a change). Checked as each test's StatusPro goes away.
impl Drop for StatusPro {
    fn drop(&mut self) {
        crate::audit::assert_sandbox_changes_recorded(&self.host, self.sandbox.mutations());
    }
}

impl StatusPro {
    /// The host's audit trail (`host.audit`, on in every setup).
    pub fn audit_trail(&self) -> std::path::PathBuf {
        crate::audit::trail_of(&self.host)
    }

    /// A default setup: the sandbox and a legacy client that cannot elicit.
    pub async fn start() -> StatusPro {
        Setup::new().start().await
    }

    /// The methods and paths (without `/api/v1`) the sandbox received.
    pub fn requests(&self) -> Vec<String> {
        self.sandbox
            .requests()
            .iter()
            .map(|r| {
                let path = r
                    .path
                    .strip_prefix(statuspro_sandbox::API_PREFIX)
                    .unwrap_or(&r.path);
                format!("{} {path}", r.method)
            })
            .collect()
    }
}
