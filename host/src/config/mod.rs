//! `toolhost.toml`: the operator's configuration, parsed and checked.
//!
//! Three parts, as ripgrep has for its flags:
//!
//! | module | job |
//! |---|---|
//! | [`auth`] | `[auth]` and `[[access]]`: their raw tables, resolved into [`crate::auth`]'s settings |
//! | [`keys`] | the table of keys: each key's path, default, range, unit, whether it needs a restart, its doc |
//! | [`raw`] | the file as written: the serde structs ([`RawConfig`]) and the TOML reading ([`TomlError`]) |
//! | `resolve` | [`Config::from_raw`]: environment variables and files read, defaults and ranges from [`keys`] |
//!
//! and this module, the resolved [`Config`] the host uses. Errors name the
//! key and say how to fix it. A default is what resolution makes of an
//! absent key ([`default_limits`] resolves an empty `[plugins.NAME.limits]`),
//! so no default is written twice. The key tables of
//! `docs/configuration.md` are generated from [`keys`] (`cargo xtask
//! config-docs`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

pub mod auth;
pub mod exchange;
pub mod keys;
pub mod policy;
pub mod profiles;
pub mod raw;
mod resolve;
pub mod secrets;
pub mod telemetry;
#[cfg(test)]
mod tests;

/// The row of [`keys::KEYS`] for a path, found while compiling: a path
/// with no row fails the build, so a key the code reads is always one the
/// table (and the doc generated from it) has.
macro_rules! key {
    ($path:literal) => {
        const { $crate::config::keys::key($path) }
    };
}
pub(crate) use key;

pub use crate::oci::OciSettings;
pub use crate::settings::{Credential, Limits, PluginConfig, PluginSettings, served_name};
pub use raw::{
    RawAllow, RawConfig, RawCredential, RawHost, RawHttp, RawLimits, RawOci, RawPlugin, RawState,
    RawStateKey, TomlError, parse_toml,
};
use resolve::{resolve_audit, resolve_limits};

/// What to do when a tool asks for confirmation and the client cannot show
/// an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum NoElicitationPolicy {
    /// The confirmation is `unsupported`: mutations do not happen.
    #[default]
    Deny,
    /// The tool's own `confirm: true` argument counts as the user's yes.
    /// For clients that show their own approval prompt before running a
    /// destructive tool.
    TrustConfirmFlag,
}

/// Whether the plugin directory's files that no `[plugins.NAME]` block
/// matches are served (`host.unmatched_files`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum UnmatchedFiles {
    /// Served under [`unconfigured`] settings: their own names, no
    /// network, no values, default limits. A drop-in directory works with
    /// no configuration at all.
    #[default]
    Serve,
    /// Not loaded: the configuration names every plugin that runs, and
    /// removing a block stops serving its files.
    Skip,
}

/// The resolved `[state]`.
#[derive(Clone, Default)]
pub struct StateSettings {
    /// (id, key) pairs; the first seals. Empty: a random key of this
    /// process's own.
    pub keys: Vec<(String, String)>,
    /// The Redis URL of the shared replay store; none: in-process.
    pub replay: Option<ReplayUrl>,
}

/// `state.replay` resolved: the Redis URL with each `${VAR}` replaced. It
/// may hold a password, so it is never shown (`Debug` redacts it) and
/// errors about it never quote it.
#[derive(Clone)]
pub struct ReplayUrl {
    /// The URL to connect to.
    pub url: String,
    /// Whether the config file itself holds the password (rather than a
    /// `${VAR}`): warned about at start.
    pub literal_password: bool,
}

impl std::fmt::Debug for ReplayUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReplayUrl(<redacted>)")
    }
}

impl std::fmt::Debug for StateSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("StateSettings")
            .field("keys", &ids)
            .field("replay", &self.replay.as_ref().map(|_| "redis"))
            .finish()
    }
}

/// The resolved `[http]` table and `host.http`.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// `host.http`: where to serve, if over HTTP.
    pub listen: Option<std::net::SocketAddr>,
    /// Browser origins allowed to call.
    pub allowed_origins: Vec<String>,
    /// Extra `Host` header values accepted.
    pub allowed_hosts: Vec<String>,
    /// The proxies in front whose `X-Forwarded-For` names the client
    /// (`http.trusted_proxies`; [`crate::transport::client_address`]).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// How long a client may take to send a request's headers.
    pub header_read_timeout: Duration,
    /// How long a client may take to send a request's body.
    pub body_read_timeout: Duration,
    /// Requests one caller may have in flight.
    pub requests_per_identity: u32,
    /// Standalone event streams one caller may hold open.
    pub streams_per_identity: u32,
    /// Open connections, all callers together.
    pub max_connections: u32,
    /// With `[auth]`, open connections none of whose requests has
    /// authenticated yet.
    pub max_unauthenticated_connections: u32,
    /// Legacy sessions one caller may hold open.
    pub sessions_per_identity: u32,
    /// Legacy sessions open, all callers together.
    pub max_sessions: u32,
    /// How long a legacy session that never sent
    /// `notifications/initialized` stays open.
    pub uninitialized_session_idle: Duration,
    /// Idle time after which a legacy session is closed.
    pub session_idle: Duration,
    /// How long calls in flight may take to finish at shutdown.
    pub shutdown_grace: Duration,
}

impl Default for HttpSettings {
    /// An absent `[http]` table and `host.http`, resolved.
    fn default() -> Self {
        HttpSettings::resolve(None, RawHttp::default()).expect("an absent [http] resolves")
    }
}

/// An absent `[plugins.NAME.limits]`, resolved: the default of every
/// limit, from [`keys`].
pub fn default_limits() -> Limits {
    resolve_limits(RawLimits::default()).expect("an absent [plugins.NAME.limits] resolves")
}

/// The settings of a plugin that no block mentions: no network, no
/// values, [`default_limits`].
pub fn unconfigured(name: &str) -> PluginSettings {
    PluginSettings::unconfigured(name, default_limits())
}

/// A `[plugins.NAME]` block's trust settings for the OCI components
/// installed as files it matches. toolhost's own: the runtime never sees
/// them (it runs what the plugin directory holds; installing is toolhost's).
#[derive(Debug, Clone, Default)]
pub struct BlockTrust {
    /// Keys trusted besides `oci.trusted_keys` (`trusted_keys`).
    pub trusted_keys: Vec<crate::oci::signature::KeySpec>,
    /// Whether a component must be signed (`require_signature`); the
    /// global setting when `None`.
    pub require_signature: Option<bool>,
}

/// The resolved `host.audit*` keys.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditSettings {
    /// `host.audit`: the file.
    pub path: PathBuf,
    /// `host.audit_arguments`: record the arguments themselves, not only
    /// their hash.
    pub arguments: bool,
    /// `host.audit_max_bytes`: size at which the file is rotated.
    pub max_bytes: u64,
    /// `host.audit_keep`: rotated files kept.
    pub keep: u32,
    /// `host.audit_refused_per_window`: records of refused calls one
    /// caller may leave per window.
    pub refused_per_window: u64,
    /// `host.audit_refused_window_secs`: that window.
    pub refused_window: std::time::Duration,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The policy for clients without elicitation.
    pub confirmation: NoElicitationPolicy,
    /// How long to wait for a user's answer to an elicitation.
    pub elicitation_timeout: Duration,
    /// Plugin blocks, in file order of their names.
    pub plugins: Vec<PluginSettings>,
    /// The component files `components` entries were verified and
    /// installed as at this start, by file name: the SHA-256 (hex) of the
    /// bytes verified. Not read from the file: filled in after the install
    /// ([`Config::install_components`]) and kept across config reloads. A
    /// file an entry names is loaded only if it holds these bytes
    /// ([`Config::component_gate`]).
    pub verified_components: BTreeMap<String, String>,
    /// The trusted key that verified each component installed from OCI with
    /// a signature, by file name (the key file's name): what policy
    /// conditions read as `plugin.signer`. Filled in with
    /// [`Config::verified_components`] and kept across reloads.
    pub component_signers: BTreeMap<String, String>,
    /// Each `[plugins.NAME]` block's trust settings for the OCI components
    /// it matches, by block name (a block without any: none here).
    pub trust: BTreeMap<String, BlockTrust>,
    /// Whether files no block matches are served ([`Config::serves`]).
    pub unmatched_files: UnmatchedFiles,
    /// How long `tools/list` and `tools/call` wait for the plugin
    /// directory's initial load before answering with what is loaded.
    pub load_wait: Duration,
    /// The memory the process a load compiles in may allocate, in MiB
    /// (`host.compile_memory_mib`).
    pub compile_memory_mib: u64,
    /// The longest line (one JSON-RPC message) read from stdin, and the
    /// largest HTTP request body, in bytes.
    pub max_message_bytes: usize,
    /// Where to serve Prometheus metrics, if anywhere (`host.metrics`).
    pub metrics: Option<SocketAddr>,
    /// Serving over Streamable HTTP.
    pub http: HttpSettings,
    /// Sealing and spending 2026-07-28 confirmation states.
    pub state: StateSettings,
    /// `[auth]`: how HTTP requests authenticate; `None` without the table.
    pub auth: Option<crate::auth::settings::AuthSettings>,
    /// `[[access]]`: which plugins each HTTP caller sees. Also the first
    /// hide rule of `policy`, which is what requests ask.
    pub access: crate::auth::Access,
    /// `[[policy.rules]]`, after `[[access]]`: what each request may see
    /// and do (ADR 0034).
    pub policy: crate::rules::Policy,
    /// `[[profiles]]`: named surfaces, each served at `/mcp/NAME` and by
    /// `serve --profile NAME` (ADR 0040).
    pub profiles: std::sync::Arc<[crate::catalog::Profile]>,
    /// Components named by OCI reference (`components`).
    pub components: Vec<crate::oci::ComponentRef>,
    /// Trust policy and bounds for OCI components (`[oci]`).
    pub oci: OciSettings,
    /// The audit trail (`host.audit*`), if the operator asked for one.
    pub audit: Option<AuditSettings>,
    /// The file this configuration was read from, when it came from one
    /// ([`Config::load`]); `serve` watches it ([`crate::reload::config`]).
    pub path: Option<PathBuf>,
    /// Resource URIs one session (or one 2026-07-28 listen stream) may
    /// subscribe to (`host.resource_subscriptions`).
    pub resource_subscriptions: usize,
    /// `host.list_ttl_ms`: the `ttlMs` hint on list results.
    pub list_ttl_ms: u64,
    /// `host.secrets_dir`: where credentials chosen per caller are read
    /// ([`secrets`]).
    pub secrets_dir: Option<PathBuf>,
    /// `approvals.url`: where approvers find the approval page, as callers
    /// are told (none: the HTTP listener's own `/approvals`).
    pub approvals_url: Option<url::Url>,
    /// `[approvals.oauth]`: approvers sign in through the identity
    /// provider (authorization code with PKCE).
    pub approvals_oauth: Option<ApprovalsOAuth>,
    /// `approvals.task_lease_secs`: how long the replica running a task's
    /// call holds it without renewing; past it the run is taken as lost
    /// and the task fails (ADR 0068).
    pub task_lease: std::time::Duration,
    /// `approvals.pending_per_caller`: approvals one caller identity may
    /// have waiting at once.
    pub pending_per_caller: usize,
    /// `[token_exchange.NAME]`: credentials exchanged per caller (RFC 8693).
    pub token_exchanges: BTreeMap<String, exchange::TokenExchange>,
    /// `[telemetry]`: where traces go, if anywhere (ADR 0039).
    pub telemetry: Option<telemetry::TelemetrySettings>,
}

/// Who a call's per-caller credentials are for
/// ([`Config::caller_credentials`]).
pub struct CallerOf<'a> {
    /// The caller, if the transport established one.
    pub identity: Option<&'a crate::auth::Identity>,
    /// The bearer token it authenticated with (HTTP), for a token
    /// exchange.
    pub token: Option<&'a str>,
    /// Exchanges tokens, with its cache.
    pub exchanger: &'a crate::auth::exchange::Exchanger,
}

/// `[approvals.oauth]`, resolved: toolhost as a public OAuth client of the
/// issuer `[auth.oauth]` trusts, for the approval page's sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalsOAuth {
    /// The client id.
    pub client_id: String,
    /// Where the browser is sent to sign in.
    pub authorization_endpoint: url::Url,
    /// Where the code is exchanged for an access token.
    pub token_endpoint: url::Url,
    /// The scopes asked for.
    pub scopes: Vec<String>,
}

impl Default for Config {
    /// An empty file, resolved: what `serve` runs with without `--config`.
    fn default() -> Self {
        Config::from_raw(RawConfig::default()).expect("an empty file resolves")
    }
}

impl Config {
    /// Where this configuration's loads compile: a child process running
    /// this program's `compile-worker`, within `host.compile_memory_mib`
    /// (ADRs 0058 and 0062).
    pub fn compile_worker(&self) -> anyhow::Result<crate::compiler::CompileIn> {
        let memory_mib = self.compile_memory_mib.to_string();
        crate::compiler::CompileIn::this_program(&["compile-worker", "--memory-mib", &memory_mib])
    }

    /// The profile called `name` (`[[profiles]]`), if there is one.
    pub fn profile(&self, name: &str) -> Option<&crate::catalog::Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// Reads and resolves the file at `path`.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the config file {}", path.display()))?;
        Self::parse_at(&text, path)
    }

    /// Parses and resolves `text`, read from the file at `path` (relative
    /// paths in it are relative to its directory).
    pub fn parse_at(text: &str, path: &Path) -> Result<Config> {
        let mut config =
            Self::parse(text).with_context(|| format!("in the config file {}", path.display()))?;
        config.resolve_paths_against(path.parent().unwrap_or(Path::new(".")));
        config.path = Some(path.to_path_buf());
        Ok(config)
    }

    /// Only the `host.audit*` keys of the file at `path` (relative paths
    /// taken from its directory), without resolving the rest: reading the
    /// trail needs no credentials in the environment.
    pub fn load_audit(path: &Path) -> Result<Option<AuditSettings>> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the config file {}", path.display()))?;
        let raw: RawConfig =
            parse_toml(&text).with_context(|| format!("in the config file {}", path.display()))?;
        let mut audit = resolve_audit(&raw.host)
            .with_context(|| format!("in the config file {}", path.display()))?;
        if let Some(audit) = &mut audit
            && audit.path.is_relative()
        {
            audit.path = path.parent().unwrap_or(Path::new(".")).join(&audit.path);
        }
        Ok(audit)
    }

    /// Parses and resolves config text. A syntax error names its line,
    /// column and key, never the text written there ([`TomlError`]).
    pub fn parse(text: &str) -> Result<Config> {
        let raw: RawConfig = parse_toml(text)?;
        Self::from_raw_text(raw, Some(text))
    }

    /// The settings for the component file `file_name` (e.g.
    /// `statuspro_list_orders.wasm`): the first block whose `files` match,
    /// or [`PluginSettings::unconfigured`].
    pub fn settings_for(&self, file_name: &str) -> PluginSettings {
        self.plugins
            .iter()
            .find(|p| p.files.iter().any(|g| g.matches(file_name)))
            .cloned()
            .unwrap_or_else(|| unconfigured(file_name.trim_end_matches(".wasm")))
    }

    /// Whether the plugin directory's file `file_name` is served: always
    /// under `unmatched_files = "serve"`; under `"skip"`, only when a
    /// `[plugins.NAME]` block matches it or an entry of `components` is
    /// installed as it (naming a component there is asking for it).
    pub fn serves(&self, file_name: &str) -> bool {
        self.unmatched_files == UnmatchedFiles::Serve
            || self
                .plugins
                .iter()
                .any(|p| p.files.iter().any(|g| g.matches(file_name)))
            || self.components.iter().any(|c| c.file_name() == file_name)
    }

    /// The trust policy for the OCI component installed as `file_name`:
    /// the global keys plus those of the matching `[plugins.NAME]` block,
    /// whose `require_signature` overrides the global one.
    pub fn trust_policy(
        &self,
        file_name: &str,
    ) -> std::result::Result<crate::oci::TrustPolicy, crate::oci::OciError> {
        let block = self
            .trust
            .get(&self.settings_for(file_name).name)
            .cloned()
            .unwrap_or_default();
        crate::oci::TrustPolicy::new(&self.oci, &block.trusted_keys, block.require_signature)
    }

    /// Installs every `components` entry into `plugins`, each with its
    /// [`Config::trust_policy`] ([`crate::oci::install_configured`]).
    pub async fn install_components(
        &self,
        lock_path: &Path,
        plugins: &Path,
        update: bool,
    ) -> std::result::Result<crate::oci::Installs, crate::oci::OciError> {
        crate::oci::install_configured(
            &self.components,
            &self.oci,
            |file_name| self.trust_policy(file_name),
            lock_path,
            plugins,
            update,
        )
        .await
    }

    /// Whether the plugin directory's file `file_name`, whose bytes have
    /// the SHA-256 `digest` (hex), may be loaded: any file no `components`
    /// entry names may; one that an entry names only if this process
    /// verified exactly these bytes for it at start
    /// ([`Config::verified_components`]). Otherwise, why not, saying what
    /// to do.
    pub fn component_gate(&self, file_name: &str, digest: &str) -> std::result::Result<(), String> {
        let Some(entry) = self.components.iter().find(|c| c.file_name() == file_name) else {
            return Ok(());
        };
        match self.verified_components.get(file_name) {
            Some(verified) if verified == digest => Ok(()),
            Some(_) => Err(format!(
                "it is installed from {entry}, but its bytes are not the ones verified at start: \
                 it was changed since (run `toolhost update` and restart to move to a new \
                 version; a file written by hand in its place is never served)"
            )),
            None => Err(format!(
                "it is installed from {entry}, and that install was refused at start (the error \
                 above says why: a signature or key the trust policy no longer accepts, or a \
                 registry that could not be reached); the file left from an earlier install is \
                 not served"
            )),
        }
    }

    /// What is valid but cannot be what the operator meant, one sentence
    /// each, saying what to change: a credential no `allow` rule reaches
    /// (never sent). Logged at start and on each reload.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for block in &self.plugins {
            for (i, credential) in block.credentials.iter().enumerate() {
                if !credential.scope.reachable_under(&block.network) {
                    warnings.push(format!(
                        "[plugins.{}] `credentials` entry {} ({} for {}) is covered by no `allow` \
                         rule, so it is never sent: allow that host and port, or give the \
                         credential the `port` its rule names (a credential without `port` \
                         means 443)",
                        block.name,
                        i + 1,
                        credential.header,
                        credential.scope,
                    ));
                }
            }
        }
        warnings
    }

    /// The values of `plugin`'s per-caller credentials for `caller`, by
    /// the credential's index (what the runtime is given for the call:
    /// [`crate::call::CallOptions::caller_credentials`]), and the names of
    /// what was used (a secret's path, `exchange:NAME`), for the audit
    /// trail. Empty when the block has no such credential.
    pub async fn caller_credentials(
        &self,
        plugin: &PluginSettings,
        caller: CallerOf<'_>,
    ) -> (Vec<Option<String>>, Vec<String>) {
        let mut values = Vec::new();
        let mut used = Vec::new();
        if !plugin.credentials.iter().any(|c| c.per_caller) {
            return (values, used);
        }
        for credential in &plugin.credentials {
            let value = if !credential.per_caller {
                None
            } else if let Some(template) = exchange::ExchangeTemplate::parse(&credential.value)
                .ok()
                .flatten()
            {
                match (caller.token, self.token_exchanges.get(&template.name)) {
                    (Some(token), Some(exchange)) => caller
                        .exchanger
                        .token_for(exchange, token)
                        .await
                        .map(|issued| {
                            (
                                format!("{}{issued}{}", template.before, template.after),
                                format!("exchange:{}", template.name),
                            )
                        }),
                    _ => None,
                }
            } else {
                match (
                    &self.secrets_dir,
                    secrets::SecretTemplate::parse(&credential.value)
                        .ok()
                        .flatten(),
                ) {
                    (Some(dir), Some(template)) => template.value_for(dir, caller.identity).await,
                    _ => None,
                }
            };
            values.push(value.map(|(value, name)| {
                used.push(name);
                value
            }));
        }
        (values, used)
    }

    /// The key that verified the component file `file_name`, if it was
    /// installed from OCI with a signature ([`Config::component_signers`]).
    pub fn signer_of(&self, file_name: &str) -> Option<&str> {
        self.component_signers.get(file_name).map(String::as_str)
    }

    /// The largest memory limit any plugin has; sizes the instance pool.
    pub fn max_memory_bytes(&self) -> u64 {
        self.plugins
            .iter()
            .map(|p| p.limits.memory_bytes)
            .fold(default_limits().memory_bytes, u64::max)
    }
}

impl PluginConfig for Config {
    fn settings_for(&self, file_name: &str) -> PluginSettings {
        Config::settings_for(self, file_name)
    }

    fn plugins(&self) -> &[PluginSettings] {
        &self.plugins
    }

    fn max_memory_bytes(&self) -> u64 {
        Config::max_memory_bytes(self)
    }
}

/// The default of `host.max_message_bytes`, from [`keys`].
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = key!("host.max_message_bytes").default_int() as usize;

/// An address (`203.0.113.9`, one address's block) or a block
/// (`10.0.0.0/8`), as `http.trusted_proxies` and `toolhost audit --client`
/// take them. An IPv4 address written IPv4-mapped (`::ffff:203.0.113.9`)
/// is the IPv4 address, as a client's address is recorded.
pub fn address_or_block(text: &str) -> Option<ipnet::IpNet> {
    text.parse::<ipnet::IpNet>().ok().or_else(|| {
        text.parse::<std::net::IpAddr>()
            .ok()
            .map(|a| ipnet::IpNet::from(a.to_canonical()))
    })
}
