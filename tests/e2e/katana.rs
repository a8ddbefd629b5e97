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

use katana_sandbox::{API_PREFIX, ApiSandbox as _, Sandbox, SandboxConfig};

use crate::support::{Elicitation, Era, Host, HostOptions};

/// A sandbox and a host serving the Katana component against it.
pub struct Katana {
    /// The sandbox: its state and request log are the tests' ground truth.
    pub sandbox: Sandbox,
    /// The host, with a connected client.
    pub host: Host,
}

/// How to start a [`Katana`].
pub struct Setup {
    /// Serve over Streamable HTTP instead of stdio.
    http: bool,
    sandbox: SandboxConfig,
    era: Era,
    elicitation: Elicitation,
    api_key: Option<String>,
    methods: &'static [&'static str],
    settings: Vec<(&'static str, &'static str)>,
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
            methods: &["GET", "POST", "PATCH"],
            settings: Vec::new(),
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

    /// The methods the `allow` entry grants.
    pub fn methods(mut self, methods: &'static [&'static str]) -> Setup {
        self.methods = methods;
        self
    }

    /// Sets a key of the plugin's `config` table besides `base_url`.
    pub fn setting(mut self, key: &'static str, value: &'static str) -> Setup {
        self.settings.push((key, value));
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
            "\n[[plugins.katana.credentials]]\nhost = \"127.0.0.1\"\nport = \"*\"\nheader = \"X-Sandbox-Fault\"\nvalue = \"{fault}\"\n"
        ))
    }

    /// Starts the sandbox, then the host pointed at it.
    pub async fn start(self) -> Katana {
        let sandbox = katana_sandbox::start(self.sandbox)
            .await
            .expect("the sandbox starts");
        let key = self
            .api_key
            .unwrap_or_else(|| sandbox.api_key().to_string());
        let options = HostOptions::new(&["katana"])
            .era(self.era)
            .elicitation(self.elicitation)
            .env("KATANA_API_KEY", &key)
            .config(crate::audit::with_trail(
                &(sandbox.toolhost_config_with(self.methods, &self.settings) + &self.extra_config),
            ));
        let options = if self.http { options.http() } else { options };
        let host = Host::start(options).await;
        Katana { sandbox, host }
    }
}

/// Every change the sandbox received is in the audit trail, made by a call
/// whose latest confirmation was a yes; no call changed anything without
/// one (so every declined, cancelled or unanswered confirmation left a
/// record without a change). Checked as each test's Katana goes away.
impl Drop for Katana {
    fn drop(&mut self) {
        crate::audit::assert_sandbox_changes_recorded(&self.host, self.sandbox.mutations());
    }
}

impl Katana {
    /// The host's audit trail (`host.audit`, on in every setup).
    pub fn audit_trail(&self) -> std::path::PathBuf {
        crate::audit::trail_of(&self.host)
    }

    /// A default setup: the sandbox and a legacy client that cannot elicit.
    pub async fn start() -> Katana {
        Setup::new().start().await
    }

    /// `METHOD path` (without `/v1`) of every request the sandbox received.
    pub fn requests(&self) -> Vec<String> {
        self.sandbox
            .requests()
            .iter()
            .map(|r| {
                let path = r.path.strip_prefix(API_PREFIX).unwrap_or(&r.path);
                format!("{} {path}", r.method)
            })
            .collect()
    }

    /// `METHOD path` of the requests that could change something.
    pub fn writes(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| !r.starts_with("GET ") && !r.starts_with("HEAD "))
            .collect()
    }

    /// The confirmation questions the client was asked.
    pub fn questions(&self) -> Vec<String> {
        self.host.handler.seen.lock().unwrap().elicitations.clone()
    }
}
