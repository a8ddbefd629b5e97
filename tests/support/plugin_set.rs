//! One setup for every plugin set the tests serve against its sandbox: the
//! StatusPro components, the Katana component, and any set added later.
//!
//! A [`PluginSet`] names its components and its sandbox; [`Setup`] starts
//! that sandbox in this process, then the real host serving the set with
//! the block an operator writes for the real API (the sandbox's address in
//! `base_url`, its port allowed, the key injected by the host from the
//! environment; [`sandbox_kit::ApiSandbox::toolhost_config_with`]) and the
//! audit trail on. The [`Running`] set it returns checks, as the test ends,
//! that every change the sandbox received was recorded as made by a
//! confirmed call ([`super::audit`]).

use sandbox_kit::ApiSandbox;

use super::audit;
use super::{Elicitation, Era, Host, HostOptions};

/// Components served together against one sandbox.
pub trait PluginSet {
    /// The sandbox standing in for the set's API.
    type Sandbox: ApiSandbox;
    /// The component files, by stem, as `cargo xtask build-plugins` names
    /// them.
    const COMPONENTS: &'static [&'static str];
    /// The methods the block's `allow` entry grants unless a test says
    /// otherwise: those the set's tools send.
    const METHODS: &'static [&'static str];
}

/// The operator's configuration for the set against `sandbox` (the default
/// methods, no further settings), followed by `extra`.
pub fn config<P: PluginSet>(sandbox: &P::Sandbox, extra: &str) -> String {
    sandbox.toolhost_config(P::METHODS) + extra
}

/// How to start a [`Running`] set.
pub struct Setup<P: PluginSet> {
    /// Serve over Streamable HTTP instead of stdio.
    http: bool,
    /// The sandbox's configuration.
    sandbox: <P::Sandbox as ApiSandbox>::Config,
    /// The client's protocol era.
    era: Era,
    /// How the client answers confirmations.
    elicitation: Elicitation,
    /// The key the host is given, when not the sandbox's.
    api_key: Option<String>,
    /// The methods the block's `allow` entry grants.
    methods: &'static [&'static str],
    /// Plugin `config` keys besides `base_url`.
    settings: Vec<(&'static str, &'static str)>,
    /// TOML appended to the generated `toolhost.toml`.
    extra_config: String,
    /// The client's bearer token (HTTP).
    bearer: Option<String>,
}

impl<P: PluginSet> Setup<P> {
    /// A default sandbox, a legacy client that cannot elicit, the right key.
    pub fn new() -> Setup<P> {
        Setup {
            http: false,
            sandbox: Default::default(),
            era: Era::Legacy,
            elicitation: Elicitation::Unsupported,
            api_key: None,
            methods: P::METHODS,
            settings: Vec::new(),
            extra_config: String::new(),
            bearer: None,
        }
    }

    /// The client's `Authorization: Bearer` token (HTTP).
    pub fn bearer(mut self, token: &str) -> Setup<P> {
        self.bearer = Some(token.to_string());
        self
    }

    /// Starts the sandbox with `config`.
    pub fn sandbox(mut self, config: <P::Sandbox as ApiSandbox>::Config) -> Setup<P> {
        self.sandbox = config;
        self
    }

    /// The client's protocol era.
    pub fn era(mut self, era: Era) -> Setup<P> {
        self.era = era;
        self
    }

    /// Serves over Streamable HTTP instead of stdio.
    pub fn http(mut self) -> Setup<P> {
        self.http = true;
        self
    }

    /// How the client answers confirmations.
    pub fn elicitation(mut self, elicitation: Elicitation) -> Setup<P> {
        self.elicitation = elicitation;
        self
    }

    /// Gives the host this API key instead of the sandbox's.
    pub fn api_key(mut self, key: &str) -> Setup<P> {
        self.api_key = Some(key.to_string());
        self
    }

    /// The methods the `allow` entry grants.
    pub fn methods(mut self, methods: &'static [&'static str]) -> Setup<P> {
        self.methods = methods;
        self
    }

    /// Sets a key of the plugin's `config` table besides `base_url`.
    pub fn setting(mut self, key: &'static str, value: &'static str) -> Setup<P> {
        self.settings.push((key, value));
        self
    }

    /// Appends TOML to the generated `toolhost.toml`.
    pub fn config(mut self, toml: &str) -> Setup<P> {
        self.extra_config.push_str(toml);
        self
    }

    /// Makes the host add `X-Sandbox-Fault: fault` to every request to the
    /// sandbox, as an operator's credential header would be added.
    pub fn fault(self, fault: &str) -> Setup<P> {
        self.config(&sandbox_kit::fault_credentials(
            <P::Sandbox as ApiSandbox>::PLUGIN,
            fault,
        ))
    }

    /// Starts the sandbox, then the host pointed at it.
    pub async fn start(self) -> Running<P> {
        let sandbox = <P::Sandbox as ApiSandbox>::start(self.sandbox)
            .await
            .expect("the sandbox starts");
        let key = self
            .api_key
            .unwrap_or_else(|| sandbox.api_key().to_string());
        let config =
            sandbox.toolhost_config_with(self.methods, &self.settings) + &self.extra_config;
        let options = HostOptions::new(P::COMPONENTS)
            .era(self.era)
            .elicitation(self.elicitation)
            .env(<P::Sandbox as ApiSandbox>::KEY_ENV, &key)
            .config(audit::with_trail(&config));
        let options = if self.http { options.http() } else { options };
        let options = match &self.bearer {
            Some(token) => options.bearer(token),
            None => options,
        };
        let host = Host::start(options).await;
        Running { sandbox, host }
    }
}

/// A sandbox and a host serving a plugin set against it.
pub struct Running<P: PluginSet> {
    /// The sandbox: its state and request log are the tests' ground truth.
    pub sandbox: P::Sandbox,
    /// The host, with a connected client.
    pub host: Host,
}

/// Every change the sandbox received is in the audit trail, made by a call
/// whose latest confirmation was a yes; no call changed anything without
/// one (so every declined, cancelled or unanswered confirmation left a
/// record without a change). Checked as each test's set goes away.
impl<P: PluginSet> Drop for Running<P> {
    fn drop(&mut self) {
        audit::assert_sandbox_changes_recorded(&self.host, self.sandbox.request_log().mutations());
    }
}

impl<P: PluginSet> Running<P> {
    /// A default setup: the sandbox and a legacy client that cannot elicit.
    pub async fn start() -> Running<P> {
        Setup::new().start().await
    }

    /// The host's audit trail (`host.audit`, on in every setup).
    pub fn audit_trail(&self) -> std::path::PathBuf {
        audit::trail_of(&self.host)
    }

    /// `METHOD path` (without the API's prefix, e.g. `/api/v1`) of every
    /// request the sandbox received.
    pub fn requests(&self) -> Vec<String> {
        let prefix = <P::Sandbox as ApiSandbox>::API_PREFIX;
        self.sandbox
            .request_log()
            .entries()
            .iter()
            .map(|r| {
                let path = r.path.strip_prefix(prefix).unwrap_or(&r.path);
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
