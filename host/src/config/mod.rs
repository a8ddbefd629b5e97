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
//! absent key (`Limits::default()` resolves an empty `[plugins.NAME.limits]`),
//! so no default is written twice. The key tables of
//! `docs/configuration.md` are generated from [`keys`] (`cargo xtask
//! config-docs`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::policy::{CredentialScope, NetworkPolicy};

pub mod auth;
pub mod keys;
pub mod raw;
mod resolve;
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
    /// Served under [`PluginSettings::unconfigured`]: their own names, no
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

/// Resource limits for one plugin, defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Linear memory per instance, in bytes.
    pub memory_bytes: u64,
    /// Deadline of one call (guest and HTTP time; confirmation excluded).
    pub call_timeout: Duration,
    /// Largest tool output, in bytes.
    pub output_bytes: u64,
    /// Largest HTTP response body, in bytes.
    pub http_body_bytes: u64,
    /// Timeout of one HTTP request.
    pub http_timeout: Duration,
    /// HTTP requests one call may make.
    pub http_requests_per_call: u32,
    /// Calls of one plugin's tools running at once; more wait their turn.
    pub concurrent_calls: u32,
    /// Confirmations one call may ask for.
    pub confirmations_per_call: u32,
    /// Log messages one call may write; the rest are dropped and counted.
    pub log_messages_per_call: u32,
    /// Bytes of log messages one call may write; the rest are dropped and
    /// counted.
    pub log_bytes_per_call: u64,
    /// Largest component file, in bytes; a larger one is not read.
    pub wasm_bytes: u64,
    /// Longest a component may take to compile.
    pub compile_timeout: Duration,
    /// Most tools one component may list.
    pub tools_per_component: u32,
    /// Largest tool definition (all its text together), in bytes.
    pub definition_bytes: u64,
    /// Largest input or output schema, in bytes.
    pub schema_bytes: u64,
}

impl Default for Limits {
    /// An absent `[plugins.NAME.limits]`, resolved.
    fn default() -> Self {
        resolve_limits(RawLimits::default()).expect("an absent [plugins.NAME.limits] resolves")
    }
}

/// A header the host adds to requests for one destination. The value is a
/// secret: it is never shown to the guest and never logged.
#[derive(Clone)]
pub struct Credential {
    /// Where it applies: host, port, and https unless loopback.
    pub scope: CredentialScope,
    /// The header name.
    pub header: String,
    /// The header value.
    pub value: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("scope", &self.scope)
            .field("header", &self.header)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// The resolved settings of one `[plugins.NAME]` block.
#[derive(Debug, Clone)]
pub struct PluginSettings {
    /// The block's name.
    pub name: String,
    /// File-name patterns the block applies to.
    pub files: Vec<glob::Pattern>,
    /// Values readable through the `config` import.
    pub values: BTreeMap<String, String>,
    /// Where the plugin may send requests.
    pub network: NetworkPolicy,
    /// Headers injected per destination.
    pub credentials: Vec<Credential>,
    /// Resource limits.
    pub limits: Limits,
    /// Keys trusted for OCI components this block matches, besides the
    /// global ones.
    pub trusted_keys: Vec<PathBuf>,
    /// Whether an OCI component this block matches must be signed; the
    /// global setting when `None`.
    pub require_signature: Option<bool>,
    /// `prefix` and `prefix_separator` joined (`"statuspro."`), put before
    /// each tool's own name to make the name it is served under; empty
    /// without a prefix. See [`served_name`].
    pub name_prefix: String,
}

/// The name a tool of a plugin with `settings` is served under: the
/// block's `prefix` and `prefix_separator` before the component's own
/// name (`statuspro.list_orders`), or the own name without a prefix. The
/// guest is always called with its own name.
pub fn served_name(settings: &PluginSettings, own: &str) -> String {
    format!("{}{own}", settings.name_prefix)
}

impl PluginSettings {
    /// The settings of a plugin that no block mentions: no network, no
    /// values, default limits.
    pub fn unconfigured(name: &str) -> Self {
        PluginSettings {
            name: name.to_string(),
            files: Vec::new(),
            values: BTreeMap::new(),
            network: NetworkPolicy::default(),
            credentials: Vec::new(),
            limits: Limits::default(),
            trusted_keys: Vec::new(),
            require_signature: None,
            name_prefix: String::new(),
        }
    }
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
    /// Whether files no block matches are served ([`Config::serves`]).
    pub unmatched_files: UnmatchedFiles,
    /// How long `tools/list` and `tools/call` wait for the plugin
    /// directory's initial load before answering with what is loaded.
    pub load_wait: Duration,
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
    /// `[[access]]`: which plugins each HTTP caller sees.
    pub access: crate::auth::Access,
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
}

impl Default for Config {
    /// An empty file, resolved: what `serve` runs with without `--config`.
    fn default() -> Self {
        Config::from_raw(RawConfig::default()).expect("an empty file resolves")
    }
}

impl Config {
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
        Self::from_raw(raw)
    }

    /// The settings for the component file `file_name` (e.g.
    /// `statuspro_list_orders.wasm`): the first block whose `files` match,
    /// or [`PluginSettings::unconfigured`].
    pub fn settings_for(&self, file_name: &str) -> PluginSettings {
        self.plugins
            .iter()
            .find(|p| p.files.iter().any(|g| g.matches(file_name)))
            .cloned()
            .unwrap_or_else(|| PluginSettings::unconfigured(file_name.trim_end_matches(".wasm")))
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
        let settings = self.settings_for(file_name);
        crate::oci::TrustPolicy::new(
            &self.oci,
            &settings.trusted_keys,
            settings.require_signature,
        )
    }

    /// Installs every `components` entry into `plugins`, each with its
    /// [`Config::trust_policy`] ([`crate::oci::install_configured`]).
    pub async fn install_components(
        &self,
        lock_path: &Path,
        plugins: &Path,
        update: bool,
    ) -> std::result::Result<
        (Vec<crate::oci::Update>, Vec<(String, crate::oci::OciError)>),
        crate::oci::OciError,
    > {
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

    /// The largest memory limit any plugin has; sizes the instance pool.
    pub fn max_memory_bytes(&self) -> u64 {
        self.plugins
            .iter()
            .map(|p| p.limits.memory_bytes)
            .fold(Limits::default().memory_bytes, u64::max)
    }
}

/// The default of `host.max_message_bytes`, from [`keys`].
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = key!("host.max_message_bytes").default_int() as usize;

/// The default of `oci.max_manifest_bytes`, from [`keys`]: what `toolhost
/// push` reads back, with no config file.
pub const DEFAULT_MAX_MANIFEST_BYTES: u64 = key!("oci.max_manifest_bytes").default_int();

/// The default of `oci.max_blob_bytes`, from [`keys`]: what `toolhost
/// push` reads back, with no config file.
pub const DEFAULT_MAX_BLOB_BYTES: u64 = key!("oci.max_blob_bytes").default_int();
