//! `toolhost.toml`: the operator's configuration, parsed and checked.
//!
//! Parsing is two steps, as ripgrep does with its flags: serde reads the raw
//! file ([`RawConfig`]), then [`Config::from_raw`] resolves it into what the
//! host uses (environment variables read, files read, defaults applied), with
//! errors that name the key and say how to fix it. Every key is documented in
//! `docs/configuration.md`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::policy::{CredentialScope, HostRule, NetworkPolicy, PortRule};

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

/// The whole file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// Host-wide settings.
    #[serde(default)]
    pub host: RawHost,
    /// Per-plugin blocks, keyed by a name of the operator's choosing.
    #[serde(default)]
    pub plugins: BTreeMap<String, RawPlugin>,
    /// `[http]`: serving MCP over Streamable HTTP.
    #[serde(default)]
    pub http: RawHttp,
    /// `[state]`: sealing and spending 2026-07-28 confirmation states.
    #[serde(default)]
    pub state: RawState,
    /// `[auth]`: who may connect over HTTP.
    pub auth: Option<crate::auth::config::RawAuth>,
    /// `[[access]]`: which plugins each HTTP caller sees.
    #[serde(default)]
    pub access: Vec<crate::auth::config::RawAccess>,
    /// `components`: components to fetch from OCI registries
    /// (`oci://REGISTRY/REPO:TAG` or `…@sha256:…`), installed into the
    /// plugin directory at start.
    #[serde(default)]
    pub components: Vec<String>,
    /// `[oci]`: trust policy and bounds for OCI components.
    #[serde(default)]
    pub oci: RawOci,
}

/// `[state]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawState {
    /// `keys`: the sealing key ring; the first key seals, every key opens.
    #[serde(default)]
    pub keys: Vec<RawStateKey>,
    /// `replay`: a `redis://` URL for the spent-state set replicas share;
    /// `${VAR}` is replaced by the environment variable `VAR` (keep the
    /// password there).
    pub replay: Option<String>,
}

/// One `[[state.keys]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStateKey {
    /// `id`: the key id written into each state it seals.
    pub id: String,
    /// `env`: the environment variable holding the key.
    pub env: Option<String>,
    /// `file`: the file holding the key.
    pub file: Option<PathBuf>,
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

impl ReplayUrl {
    /// Resolves `state.replay` as written.
    fn resolve(written: &str) -> Result<ReplayUrl> {
        if !(written.starts_with("redis://") || written.starts_with("rediss://")) {
            // Not quoted: it may hold a password.
            bail!(
                "`state.replay` must be a redis:// or rediss:// URL, e.g. \
                 \"redis://:${{TOOLHOST_REDIS_PASSWORD}}@redis:6379/0\""
            );
        }
        // A value put into the user or password is percent-encoded, so a
        // generated password holding `@`, `/` or `:` works as it is.
        let (start, end) = userinfo_span(written).unwrap_or((0, 0));
        let encode = |value: &str| {
            percent_encoding::utf8_percent_encode(value, USERINFO_ESCAPED).to_string()
        };
        let url = [
            expand_env(&written[..start]),
            expand_env_with(&written[start..end], encode),
            expand_env(&written[end..]),
        ]
        .into_iter()
        .collect::<Result<String>>()
        .context("in `state.replay`")?;
        Ok(ReplayUrl {
            url,
            literal_password: has_literal_password(written),
        })
    }
}

/// What is escaped in a value put into a URL's user or password: all but
/// RFC 3986's unreserved characters.
const USERINFO_ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The byte range of the user information (`user:password`, before the
/// last `@` of the authority) in a URL as written, if it has one.
fn userinfo_span(written: &str) -> Option<(usize, usize)> {
    let start = written.find("://")? + 3;
    let authority_len = written[start..]
        .find(['/', '?', '#'])
        .unwrap_or(written.len() - start);
    let at = written[start..start + authority_len].rfind('@')?;
    Some((start, start + at))
}

/// Whether the URL as written has a password that is not (only) `${VAR}`
/// references: `redis://:hunter2@host` does, `redis://:${PASS}@host` does
/// not.
fn has_literal_password(written: &str) -> bool {
    let after_scheme = written.split_once("://").map_or(written, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return false;
    };
    let Some((_, password)) = userinfo.split_once(':') else {
        return false;
    };
    let mut literal = String::new();
    let mut rest = password;
    while let Some(start) = rest.find("${") {
        literal.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => rest = &rest[start + end + 1..],
            None => rest = "",
        }
    }
    literal.push_str(rest);
    !literal.is_empty()
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

impl StateSettings {
    fn resolve(raw: RawState) -> Result<StateSettings> {
        let mut keys = Vec::new();
        for (i, key) in raw.keys.into_iter().enumerate() {
            let at = || format!("`state.keys` entry {} (id {:?})", i + 1, key.id);
            if key.id.is_empty() || key.id.len() > 255 || key.id.chars().any(char::is_control) {
                bail!("{}: `id` must be 1 to 255 printable characters", at());
            }
            let value = match (&key.env, &key.file) {
                (Some(var), None) => std::env::var(var)
                    .with_context(|| format!("the environment variable {var} is not set"))
                    .with_context(at)?,
                (None, Some(path)) => std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read `file` {}", path.display()))
                    .with_context(at)?,
                _ => bail!("{}: set exactly one of `env` and `file`", at()),
            };
            let value = value.trim().to_string();
            if value.len() < 32 {
                bail!(
                    "{}: the key has {} bytes; use at least 32 random bytes, e.g. \
                     `openssl rand -base64 48`",
                    at(),
                    value.len()
                );
            }
            if keys.iter().any(|(id, _)| id == &key.id) {
                bail!("{}: the id is used twice", at());
            }
            keys.push((key.id, value));
        }
        let replay = raw.replay.as_deref().map(ReplayUrl::resolve).transpose()?;
        Ok(StateSettings { keys, replay })
    }
}

/// `[oci]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOci {
    /// `trusted_keys`: public keys (PEM files) whose signatures are
    /// trusted for every OCI component.
    #[serde(default)]
    pub trusted_keys: Vec<PathBuf>,
    /// `require_signature`: refuse OCI components without a trusted
    /// signature. Default: true.
    pub require_signature: Option<bool>,
    /// `max_manifest_bytes`: largest manifest read from a registry.
    pub max_manifest_bytes: Option<u64>,
    /// `max_blob_bytes`: largest component layer read from a registry.
    pub max_blob_bytes: Option<u64>,
    /// `store_dir`: the content store's directory.
    pub store_dir: Option<PathBuf>,
}

/// `[host]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    /// `confirmation`: the policy for clients without elicitation.
    #[serde(default)]
    pub confirmation: NoElicitationPolicy,
    /// `unmatched_files`: whether files no plugin block matches are served.
    #[serde(default)]
    pub unmatched_files: UnmatchedFiles,
    /// `elicitation_timeout_secs`: how long to wait for a user's answer.
    pub elicitation_timeout_secs: Option<u64>,
    /// `load_wait_secs`: how long `tools/list` and `tools/call` wait for
    /// the plugin directory's initial load.
    pub load_wait_secs: Option<u64>,
    /// `max_message_bytes`: the longest line (one JSON-RPC message) read
    /// from stdin, and the largest HTTP request body.
    pub max_message_bytes: Option<u64>,
    /// `metrics`: where to serve Prometheus metrics (`GET /metrics`), an
    /// address and port such as `"127.0.0.1:9464"`, or a port alone (on
    /// loopback). Off when absent.
    pub metrics: Option<String>,
    /// `http`: serve MCP over Streamable HTTP on this address instead of
    /// stdio (`serve --http` overrides it).
    pub http: Option<String>,
    /// `audit`: the audit trail's file (one JSON line per tool call). Off
    /// when absent.
    pub audit: Option<PathBuf>,
    /// `audit_arguments`: record the arguments themselves, not only their
    /// hash. Default: false.
    #[serde(default)]
    pub audit_arguments: bool,
    /// `audit_max_bytes`: size at which the audit file is rotated.
    pub audit_max_bytes: Option<u64>,
    /// `audit_keep`: rotated audit files kept.
    pub audit_keep: Option<u32>,
    /// `resource_subscriptions`: resource URIs one session (or one
    /// 2026-07-28 listen stream) may subscribe to.
    pub resource_subscriptions: Option<u32>,
}

/// `[http]`: how the Streamable HTTP transport serves.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    /// `allowed_origins`: browser origins allowed to call (`Origin`
    /// header) besides the server's own address; any other present
    /// `Origin` is refused.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// `allowed_hosts`: `Host` header values accepted besides loopback
    /// names and the listen address (DNS-rebinding protection).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// `header_read_timeout_secs`: how long a client may take to send a
    /// request's headers.
    pub header_read_timeout_secs: Option<f64>,
    /// `body_read_timeout_secs`: how long a client may take to send a
    /// request's body.
    pub body_read_timeout_secs: Option<f64>,
    /// `requests_per_identity`: requests one caller may have in flight.
    pub requests_per_identity: Option<u32>,
    /// `streams_per_identity`: event streams (GET, `subscriptions/listen`) one caller
    /// may hold open.
    pub streams_per_identity: Option<u32>,
    /// `max_connections`: open connections, all callers together.
    pub max_connections: Option<u32>,
    /// `session_idle_secs`: a legacy session with no traffic for this long
    /// is closed.
    pub session_idle_secs: Option<u64>,
    /// `shutdown_grace_secs`: on SIGTERM/SIGINT, how long calls in flight
    /// may take to finish.
    pub shutdown_grace_secs: Option<f64>,
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
    /// Idle time after which a legacy session is closed.
    pub session_idle: Duration,
    /// How long calls in flight may take to finish at shutdown.
    pub shutdown_grace: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            listen: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            requests_per_identity: 64,
            streams_per_identity: 8,
            max_connections: 1024,
            session_idle: Duration::from_secs(600),
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

impl HttpSettings {
    fn resolve(listen: Option<&str>, raw: RawHttp) -> Result<HttpSettings> {
        let d = HttpSettings::default();
        let listen = listen
            .map(|a| {
                a.parse().with_context(|| {
                    format!("`host.http` must be an address and port such as \"127.0.0.1:8080\", not {a:?}")
                })
            })
            .transpose()?;
        for origin in &raw.allowed_origins {
            if origin != "null" && !origin.contains("://") {
                bail!(
                    "`http.allowed_origins`: {origin:?} has no scheme; write it as a browser \
                     sends it, e.g. \"https://app.example.com\" (or \"http://localhost:*\" for any port)"
                );
            }
        }
        Ok(HttpSettings {
            listen,
            allowed_origins: raw.allowed_origins,
            allowed_hosts: raw.allowed_hosts,
            header_read_timeout: Duration::from_secs_f64(HEADER_READ_TIMEOUT_SECS.check_or(
                raw.header_read_timeout_secs,
                d.header_read_timeout.as_secs_f64(),
            )?),
            body_read_timeout: Duration::from_secs_f64(BODY_READ_TIMEOUT_SECS.check_or(
                raw.body_read_timeout_secs,
                d.body_read_timeout.as_secs_f64(),
            )?),
            requests_per_identity: REQUESTS_PER_IDENTITY
                .check_or(raw.requests_per_identity, d.requests_per_identity)?,
            streams_per_identity: STREAMS_PER_IDENTITY
                .check_or(raw.streams_per_identity, d.streams_per_identity)?,
            max_connections: MAX_CONNECTIONS.check_or(raw.max_connections, d.max_connections)?,
            session_idle: Duration::from_secs(
                SESSION_IDLE_SECS.check_or(raw.session_idle_secs, d.session_idle.as_secs())?,
            ),
            shutdown_grace: Duration::from_secs_f64(
                SHUTDOWN_GRACE_SECS
                    .check_or(raw.shutdown_grace_secs, d.shutdown_grace.as_secs_f64())?,
            ),
        })
    }
}

/// `[plugins.NAME]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPlugin {
    /// `files`: glob patterns over file names in the plugin directory that
    /// this block applies to. Default: `["NAME.wasm"]`.
    pub files: Option<Vec<String>>,
    /// `config`: string values the plugin can read.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// `allow`: the destinations the plugin may reach.
    #[serde(default)]
    pub allow: Vec<RawAllow>,
    /// `credentials`: headers the host adds for a destination.
    #[serde(default)]
    pub credentials: Vec<RawCredential>,
    /// `limits`: resource limits.
    #[serde(default)]
    pub limits: RawLimits,
    /// `trusted_keys`: public keys trusted for OCI components installed as
    /// files this block matches, besides `oci.trusted_keys`.
    #[serde(default)]
    pub trusted_keys: Vec<PathBuf>,
    /// `require_signature`: overrides `oci.require_signature` for OCI
    /// components installed as files this block matches.
    pub require_signature: Option<bool>,
    /// `prefix`: serve this block's tools as `PREFIX.TOOL` (the separator
    /// is `prefix_separator`).
    pub prefix: Option<String>,
    /// `prefix_separator`: `"."` (the default), `"_"` or `"-"`; only with
    /// `prefix`.
    pub prefix_separator: Option<String>,
}

/// One `[[plugins.NAME.allow]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAllow {
    /// `host`: an exact name, `*.domain`, or an IP address.
    pub host: String,
    /// `port`: the only port allowed, or `"*"` for any; the scheme's own
    /// port (443 for https, 80 for http) when absent.
    pub port: Option<PortRule>,
    /// `methods`: allowed methods; all when absent.
    pub methods: Option<Vec<String>>,
    /// `paths`: path patterns allowed (`*` matches anything, `/` included,
    /// so `/api/v1/orders*` is a prefix); every path when absent.
    pub paths: Option<Vec<String>>,
    /// `allow_private`: let this name resolve to loopback, private or
    /// link-local addresses.
    #[serde(default)]
    pub allow_private: bool,
}

/// One `[[plugins.NAME.credentials]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCredential {
    /// `host`: the destination, matched like an `allow` entry's host.
    pub host: String,
    /// `port`: the destination's port, or `"*"` for any; 443 when absent.
    /// The credential goes only over https, except to a loopback address.
    pub port: Option<PortRule>,
    /// `header`: the header to set, e.g. `Authorization`.
    pub header: String,
    /// `value`: the header value; `${VAR}` is replaced by the environment
    /// variable `VAR`.
    pub value: Option<String>,
    /// `value_file`: read the value from this file (trailing newline dropped).
    pub value_file: Option<PathBuf>,
}

/// A `port` value as written: a number, or `"*"` for any port.
impl<'de> Deserialize<'de> for PortRule {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PortVisitor;
        impl serde::de::Visitor<'_> for PortVisitor {
            type Value = PortRule;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a port number from 1 to 65535, or \"*\" for any port")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<PortRule, E> {
                match u16::try_from(v) {
                    Ok(port) if port > 0 => Ok(PortRule::Only(port)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PortRule, E> {
                match u16::try_from(v) {
                    Ok(port) if port > 0 => Ok(PortRule::Only(port)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Unsigned(v), &self)),
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PortRule, E> {
                match v {
                    "*" => Ok(PortRule::Any),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(PortVisitor)
    }
}

/// `[plugins.NAME.limits]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    /// `memory_mib`: linear memory per instance.
    pub memory_mib: Option<u64>,
    /// `call_timeout_secs`: wall-clock deadline of one call, not counting
    /// time spent waiting for the user's confirmation.
    pub call_timeout_secs: Option<f64>,
    /// `output_bytes`: largest tool output.
    pub output_bytes: Option<u64>,
    /// `http_body_bytes`: largest HTTP response body.
    pub http_body_bytes: Option<u64>,
    /// `http_timeout_secs`: timeout of one HTTP request.
    pub http_timeout_secs: Option<f64>,
    /// `http_requests_per_call`: HTTP requests one call may make.
    pub http_requests_per_call: Option<u32>,
    /// `concurrent_calls`: calls of this plugin's tools running at once.
    pub concurrent_calls: Option<u32>,
    /// `confirmations_per_call`: confirmations one call may ask for.
    pub confirmations_per_call: Option<u32>,
    /// `log_messages_per_call`: log messages one call may write.
    pub log_messages_per_call: Option<u32>,
    /// `log_bytes_per_call`: bytes of log messages one call may write.
    pub log_bytes_per_call: Option<u64>,
    /// `wasm_bytes`: largest component file the host reads.
    pub wasm_bytes: Option<u64>,
    /// `compile_timeout_secs`: longest a component may take to compile.
    pub compile_timeout_secs: Option<f64>,
    /// `tools_per_component`: most tools one component may list.
    pub tools_per_component: Option<u32>,
    /// `definition_bytes`: largest tool definition (name, title,
    /// description and both schemas together).
    pub definition_bytes: Option<u64>,
    /// `schema_bytes`: largest input or output schema.
    pub schema_bytes: Option<u64>,
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
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            call_timeout: Duration::from_secs(30),
            output_bytes: 1 << 20,
            http_body_bytes: 8 << 20,
            http_timeout: Duration::from_secs(10),
            http_requests_per_call: 200,
            concurrent_calls: 16,
            confirmations_per_call: 2,
            log_messages_per_call: 1000,
            log_bytes_per_call: 256 << 10,
            wasm_bytes: 128 << 20,
            compile_timeout: Duration::from_secs(300),
            tools_per_component: 256,
            definition_bytes: 64 << 10,
            schema_bytes: 32 << 10,
        }
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
    pub auth: Option<crate::auth::config::AuthSettings>,
    /// `[[access]]`: which plugins each HTTP caller sees.
    pub access: crate::auth::Access,
    /// Components named by OCI reference (`components`).
    pub components: Vec<crate::oci::ComponentRef>,
    /// Trust policy and bounds for OCI components (`[oci]`).
    pub oci: OciSettings,
    /// The audit trail (`host.audit*`), if the operator asked for one.
    pub audit: Option<crate::audit::AuditSettings>,
    /// The file this configuration was read from, when it came from one
    /// ([`Config::load`]); `serve` watches it ([`crate::reconfigure`]).
    pub path: Option<PathBuf>,
    /// Resource URIs one session (or one 2026-07-28 listen stream) may
    /// subscribe to (`host.resource_subscriptions`).
    pub resource_subscriptions: usize,
}

/// The resolved `[oci]` table.
#[derive(Debug, Clone)]
pub struct OciSettings {
    /// Keys trusted for every OCI component.
    pub trusted_keys: Vec<PathBuf>,
    /// Whether OCI components must carry a trusted signature.
    pub require_signature: bool,
    /// Largest manifest read, in bytes.
    pub max_manifest_bytes: u64,
    /// Largest component layer read, in bytes.
    pub max_blob_bytes: u64,
    /// The content store's directory, when the operator set one.
    pub store_dir: Option<PathBuf>,
}

impl Default for OciSettings {
    fn default() -> Self {
        OciSettings {
            trusted_keys: Vec::new(),
            require_signature: true,
            max_manifest_bytes: DEFAULT_MAX_MANIFEST_BYTES,
            max_blob_bytes: Limits::default().wasm_bytes,
            store_dir: None,
        }
    }
}

/// Default of `host.load_wait_secs`.
pub const DEFAULT_LOAD_WAIT_SECS: u64 = 45;

impl Default for Config {
    fn default() -> Self {
        Config {
            confirmation: NoElicitationPolicy::Deny,
            elicitation_timeout: Duration::from_secs(300),
            plugins: Vec::new(),
            unmatched_files: UnmatchedFiles::Serve,
            load_wait: Duration::from_secs(DEFAULT_LOAD_WAIT_SECS),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            metrics: None,
            http: HttpSettings::default(),
            state: StateSettings::default(),
            auth: None,
            access: crate::auth::Access::default(),
            components: Vec::new(),
            oci: OciSettings::default(),
            audit: None,
            path: None,
            resource_subscriptions: DEFAULT_RESOURCE_SUBSCRIPTIONS as usize,
        }
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
    pub fn load_audit(path: &Path) -> Result<Option<crate::audit::AuditSettings>> {
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

    /// Resolves a parsed file: applies defaults, reads environment variables
    /// and files named by credentials.
    pub fn from_raw(raw: RawConfig) -> Result<Config> {
        let mut plugins = Vec::new();
        for (name, block) in raw.plugins {
            plugins.push(
                resolve_plugin(&name, block).with_context(|| format!("in [plugins.{name}]"))?,
            );
        }
        let host = raw.host;
        let elicitation_timeout_secs = match host.elicitation_timeout_secs {
            Some(secs) => ELICITATION_TIMEOUT_SECS.check(secs)?,
            None => 300,
        };
        let max_message_bytes = match host.max_message_bytes {
            Some(bytes) => MAX_MESSAGE_BYTES.check(bytes)? as usize,
            None => DEFAULT_MAX_MESSAGE_BYTES,
        };
        let load_wait_secs = match host.load_wait_secs {
            Some(secs) => LOAD_WAIT_SECS.check(secs)?,
            None => DEFAULT_LOAD_WAIT_SECS,
        };
        let metrics = host.metrics.as_deref().map(metrics_address).transpose()?;
        let audit = resolve_audit(&host)?;
        let http = HttpSettings::resolve(host.http.as_deref(), raw.http)?;
        let state = StateSettings::resolve(raw.state)?;
        let components = raw
            .components
            .iter()
            .map(|c| match c.strip_prefix(crate::oci::SCHEME) {
                Some(_) => crate::oci::ComponentRef::parse(c).context("in `components`"),
                None => bail!(
                    "`components`: {c:?} is not an OCI reference; write oci://REGISTRY/REPOSITORY:TAG \
                     or oci://REGISTRY/REPOSITORY@sha256:DIGEST (files go in the plugin directory)"
                ),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Config {
            confirmation: host.confirmation,
            elicitation_timeout: Duration::from_secs(elicitation_timeout_secs),
            plugins,
            unmatched_files: host.unmatched_files,
            load_wait: Duration::from_secs(load_wait_secs),
            max_message_bytes,
            metrics,
            http,
            state,
            auth: raw
                .auth
                .map(crate::auth::config::resolve_auth)
                .transpose()
                .context("in [auth]")?,
            access: crate::auth::config::resolve_access(raw.access)?,
            components,
            oci: resolve_oci(raw.oci)?,
            audit,
            path: None,
            resource_subscriptions: RESOURCE_SUBSCRIPTIONS
                .check_or(host.resource_subscriptions, DEFAULT_RESOURCE_SUBSCRIPTIONS)?
                as usize,
        })
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

    /// The largest memory limit any plugin has; sizes the instance pool.
    pub fn max_memory_bytes(&self) -> u64 {
        self.plugins
            .iter()
            .map(|p| p.limits.memory_bytes)
            .chain([Limits::default().memory_bytes])
            .max()
            .unwrap_or(64 << 20)
    }
}

fn resolve_plugin(name: &str, raw: RawPlugin) -> Result<PluginSettings> {
    let patterns = raw.files.unwrap_or_else(|| vec![format!("{name}.wasm")]);
    let files = patterns
        .iter()
        .map(|p| glob::Pattern::new(p).with_context(|| format!("`files`: bad pattern {p:?}")))
        .collect::<Result<Vec<_>>>()?;

    let mut rules = Vec::new();
    for (i, allow) in raw.allow.iter().enumerate() {
        rules.push(
            HostRule::parse(
                &allow.host,
                allow.port.unwrap_or(PortRule::SchemeDefault),
                allow.methods.as_deref(),
                allow.paths.as_deref(),
                allow.allow_private,
            )
            .with_context(|| format!("`allow` entry {}", i + 1))?,
        );
    }

    let mut credentials = Vec::new();
    for (i, c) in raw.credentials.into_iter().enumerate() {
        let at = || {
            format!(
                "`credentials` entry {} ({} for {})",
                i + 1,
                c.header,
                c.host
            )
        };
        let value = match (&c.value, &c.value_file) {
            (Some(v), None) => expand_env(v).with_context(at)?,
            (None, Some(path)) => std::fs::read_to_string(path)
                .with_context(|| format!("cannot read `value_file` {}", path.display()))
                .with_context(at)?
                .trim_end_matches(['\n', '\r'])
                .to_string(),
            _ => bail!("{}: set exactly one of `value` and `value_file`", at()),
        };
        credentials.push(Credential {
            scope: CredentialScope::parse(&c.host, c.port).with_context(at)?,
            header: c.header,
            value,
        });
    }

    let d = Limits::default();
    let l = raw.limits;
    let secs = |value: Option<f64>, range: &Range<f64>, default: Duration| -> Result<Duration> {
        match value {
            Some(secs) => Ok(Duration::from_secs_f64(range.check(secs)?)),
            None => Ok(default),
        }
    };
    let limits = Limits {
        memory_bytes: match l.memory_mib {
            Some(mib) => MEMORY_MIB.check(mib)? << 20,
            None => d.memory_bytes,
        },
        call_timeout: secs(l.call_timeout_secs, &CALL_TIMEOUT_SECS, d.call_timeout)?,
        output_bytes: OUTPUT_BYTES.check_or(l.output_bytes, d.output_bytes)?,
        http_body_bytes: HTTP_BODY_BYTES.check_or(l.http_body_bytes, d.http_body_bytes)?,
        http_timeout: secs(l.http_timeout_secs, &HTTP_TIMEOUT_SECS, d.http_timeout)?,
        http_requests_per_call: HTTP_REQUESTS_PER_CALL
            .check_or(l.http_requests_per_call, d.http_requests_per_call)?,
        concurrent_calls: CONCURRENT_CALLS.check_or(l.concurrent_calls, d.concurrent_calls)?,
        confirmations_per_call: CONFIRMATIONS_PER_CALL
            .check_or(l.confirmations_per_call, d.confirmations_per_call)?,
        log_messages_per_call: LOG_MESSAGES_PER_CALL
            .check_or(l.log_messages_per_call, d.log_messages_per_call)?,
        log_bytes_per_call: LOG_BYTES_PER_CALL
            .check_or(l.log_bytes_per_call, d.log_bytes_per_call)?,
        wasm_bytes: WASM_BYTES.check_or(l.wasm_bytes, d.wasm_bytes)?,
        compile_timeout: secs(
            l.compile_timeout_secs,
            &COMPILE_TIMEOUT_SECS,
            d.compile_timeout,
        )?,
        tools_per_component: TOOLS_PER_COMPONENT
            .check_or(l.tools_per_component, d.tools_per_component)?,
        definition_bytes: DEFINITION_BYTES.check_or(l.definition_bytes, d.definition_bytes)?,
        schema_bytes: SCHEMA_BYTES.check_or(l.schema_bytes, d.schema_bytes)?,
    };

    Ok(PluginSettings {
        name: name.to_string(),
        files,
        values: raw.config,
        network: NetworkPolicy::new(rules),
        credentials,
        limits,
        trusted_keys: raw.trusted_keys,
        require_signature: raw.require_signature,
        name_prefix: name_prefix(raw.prefix.as_deref(), raw.prefix_separator.as_deref())?,
    })
}

/// The separators `prefix_separator` accepts.
const PREFIX_SEPARATORS: [&str; 3] = [".", "_", "-"];

/// `prefix` and `prefix_separator` joined, checked against MCP's tool-name
/// rules (`A-Z a-z 0-9 _ . -`, names up to 128 characters: the prefix
/// leaves room for a one-character tool name; each tool's whole served name
/// is checked when its component loads).
fn name_prefix(prefix: Option<&str>, separator: Option<&str>) -> Result<String> {
    let Some(prefix) = prefix else {
        if separator.is_some() {
            bail!("`prefix_separator` is set without `prefix`; add `prefix` or remove it");
        }
        return Ok(String::new());
    };
    let separator = match separator {
        None => ".",
        Some(sep) if PREFIX_SEPARATORS.contains(&sep) => sep,
        Some(sep) => bail!(
            "`prefix_separator` must be \".\", \"_\" or \"-\" (characters MCP allows in tool names), not {sep:?}"
        ),
    };
    let joined = format!("{prefix}{separator}");
    if prefix.is_empty() || joined.len() > MAX_PREFIX_BYTES || !crate::spec::is_valid_name(&joined)
    {
        bail!(
            "`prefix` must be 1 to {} characters of A-Z a-z 0-9 _ . - (MCP's tool-name rules: \
             a served name is the prefix, the separator and the tool's own name, 128 characters \
             at most), not {:?}",
            MAX_PREFIX_BYTES - 1,
            prefix.chars().take(64).collect::<String>()
        );
    }
    Ok(joined)
}

/// The longest `prefix` and separator together: room is left for a
/// one-character tool name within MCP's 128.
const MAX_PREFIX_BYTES: usize = 127;

/// The default of `host.max_message_bytes`: 16 MiB, what rmcp's own stdio
/// transport accepts.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 << 20;

/// The values a numeric key accepts. Every numeric key is checked against
/// its range at load, before any arithmetic uses it: a huge timeout would
/// overflow `Duration`/`Instant` arithmetic (a panic, under a lock), a huge
/// `memory_mib` would wrap when shifted to bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range<T> {
    /// The key as written in `toolhost.toml`, e.g. `limits.memory_mib`.
    pub key: &'static str,
    /// The smallest value allowed.
    pub min: T,
    /// The largest value allowed.
    pub max: T,
    /// What the number counts, for the error message.
    pub unit: &'static str,
}

impl<T: PartialOrd + Copy + std::fmt::Display> Range<T> {
    /// `value` if it lies in the range, else an error naming the key and
    /// the range.
    pub(crate) fn check(&self, value: T) -> Result<T> {
        // `!(a <= b)` rather than `a > b`, so that NaN fails too.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let outside = !(self.min <= value && value <= self.max);
        if outside {
            bail!(
                "`{}` must be between {} and {} ({}), not {value}",
                self.key,
                self.min,
                self.max,
                self.unit
            );
        }
        Ok(value)
    }

    /// [`Range::check`] for a key that may be absent; `default` when it is.
    pub(crate) fn check_or(&self, value: Option<T>, default: T) -> Result<T> {
        value.map_or(Ok(default), |v| self.check(v))
    }
}

/// `host.load_wait_secs`: up to an hour.
const LOAD_WAIT_SECS: Range<u64> = Range {
    key: "host.load_wait_secs",
    min: 0,
    max: 3600,
    unit: "seconds",
};
/// `host.elicitation_timeout_secs`: 1 second to a day.
const ELICITATION_TIMEOUT_SECS: Range<u64> = Range {
    key: "host.elicitation_timeout_secs",
    min: 1,
    max: 86_400,
    unit: "seconds",
};
/// `http.header_read_timeout_secs`: 0.1 second to 5 minutes.
const HEADER_READ_TIMEOUT_SECS: Range<f64> = Range {
    key: "http.header_read_timeout_secs",
    min: 0.1,
    max: 300.0,
    unit: "seconds",
};
/// `http.body_read_timeout_secs`: 0.1 second to an hour.
const BODY_READ_TIMEOUT_SECS: Range<f64> = Range {
    key: "http.body_read_timeout_secs",
    min: 0.1,
    max: 3600.0,
    unit: "seconds",
};
/// `http.requests_per_identity`: 1 to 100,000.
const REQUESTS_PER_IDENTITY: Range<u32> = Range {
    key: "http.requests_per_identity",
    min: 1,
    max: 100_000,
    unit: "requests",
};
/// `http.streams_per_identity`: 1 to 10,000.
const STREAMS_PER_IDENTITY: Range<u32> = Range {
    key: "http.streams_per_identity",
    min: 1,
    max: 10_000,
    unit: "streams",
};
/// `http.max_connections`: 1 to 1,000,000.
const MAX_CONNECTIONS: Range<u32> = Range {
    key: "http.max_connections",
    min: 1,
    max: 1_000_000,
    unit: "connections",
};
/// `http.session_idle_secs`: 1 second to a day.
const SESSION_IDLE_SECS: Range<u64> = Range {
    key: "http.session_idle_secs",
    min: 1,
    max: 86_400,
    unit: "seconds",
};
/// `http.shutdown_grace_secs`: 0 to an hour.
const SHUTDOWN_GRACE_SECS: Range<f64> = Range {
    key: "http.shutdown_grace_secs",
    min: 0.0,
    max: 3600.0,
    unit: "seconds",
};
/// `host.max_message_bytes`: 1 KiB to 256 MiB.
const MAX_MESSAGE_BYTES: Range<u64> = Range {
    key: "host.max_message_bytes",
    min: 1 << 10,
    max: 256 << 20,
    unit: "bytes",
};
/// The default of `host.resource_subscriptions`.
pub const DEFAULT_RESOURCE_SUBSCRIPTIONS: u32 = 100;
/// `host.resource_subscriptions`: 1 to 10,000.
const RESOURCE_SUBSCRIPTIONS: Range<u32> = Range {
    key: "host.resource_subscriptions",
    min: 1,
    max: 10_000,
    unit: "URIs",
};
/// `limits.memory_mib`: up to 4 GiB, wasm32's whole address space.
const MEMORY_MIB: Range<u64> = Range {
    key: "limits.memory_mib",
    min: 1,
    max: 4096,
    unit: "MiB",
};
/// `limits.call_timeout_secs`: a millisecond to a day.
const CALL_TIMEOUT_SECS: Range<f64> = Range {
    key: "limits.call_timeout_secs",
    min: 0.001,
    max: 86_400.0,
    unit: "seconds",
};
/// `limits.output_bytes`: up to 1 GiB.
const OUTPUT_BYTES: Range<u64> = Range {
    key: "limits.output_bytes",
    min: 1,
    max: 1 << 30,
    unit: "bytes",
};
/// `limits.http_body_bytes`: up to 1 GiB.
const HTTP_BODY_BYTES: Range<u64> = Range {
    key: "limits.http_body_bytes",
    min: 1,
    max: 1 << 30,
    unit: "bytes",
};
/// `limits.http_timeout_secs`: a millisecond to a day.
const HTTP_TIMEOUT_SECS: Range<f64> = Range {
    key: "limits.http_timeout_secs",
    min: 0.001,
    max: 86_400.0,
    unit: "seconds",
};
/// `limits.http_requests_per_call`: 0 (no HTTP at all) to 100,000.
const HTTP_REQUESTS_PER_CALL: Range<u32> = Range {
    key: "limits.http_requests_per_call",
    min: 0,
    max: 100_000,
    unit: "requests",
};
/// `limits.concurrent_calls`: 1 to 1024.
const CONCURRENT_CALLS: Range<u32> = Range {
    key: "limits.concurrent_calls",
    min: 1,
    max: 1024,
    unit: "calls",
};
/// `limits.confirmations_per_call`: 0 (never ask) to 100.
const CONFIRMATIONS_PER_CALL: Range<u32> = Range {
    key: "limits.confirmations_per_call",
    min: 0,
    max: 100,
    unit: "confirmations",
};
/// `limits.log_messages_per_call`: 0 (log nothing) to 1,000,000.
const LOG_MESSAGES_PER_CALL: Range<u32> = Range {
    key: "limits.log_messages_per_call",
    min: 0,
    max: 1_000_000,
    unit: "messages",
};
/// `limits.log_bytes_per_call`: 0 (log nothing) to 64 MiB.
const LOG_BYTES_PER_CALL: Range<u64> = Range {
    key: "limits.log_bytes_per_call",
    min: 0,
    max: 64 << 20,
    unit: "bytes",
};

/// `limits.wasm_bytes`: up to 4 GiB.
const WASM_BYTES: Range<u64> = Range {
    key: "limits.wasm_bytes",
    min: 1,
    max: 4 << 30,
    unit: "bytes",
};
/// `limits.compile_timeout_secs`: a millisecond to a day.
const COMPILE_TIMEOUT_SECS: Range<f64> = Range {
    key: "limits.compile_timeout_secs",
    min: 0.001,
    max: 86_400.0,
    unit: "seconds",
};
/// `limits.tools_per_component`: 1 to 100,000.
const TOOLS_PER_COMPONENT: Range<u32> = Range {
    key: "limits.tools_per_component",
    min: 1,
    max: 100_000,
    unit: "tools",
};
/// `limits.definition_bytes`: up to 64 MiB.
const DEFINITION_BYTES: Range<u64> = Range {
    key: "limits.definition_bytes",
    min: 1,
    max: 64 << 20,
    unit: "bytes",
};
/// `limits.schema_bytes`: up to 64 MiB.
const SCHEMA_BYTES: Range<u64> = Range {
    key: "limits.schema_bytes",
    min: 1,
    max: 64 << 20,
    unit: "bytes",
};

/// `host.audit_max_bytes`: 4 KiB to 1 TiB.
const AUDIT_MAX_BYTES: Range<u64> = Range {
    key: "host.audit_max_bytes",
    min: 4 << 10,
    max: 1 << 40,
    unit: "bytes",
};
/// `host.audit_keep`: 1 to 1000 rotated files.
const AUDIT_KEEP: Range<u32> = Range {
    key: "host.audit_keep",
    min: 1,
    max: 1000,
    unit: "files",
};

/// The `host.audit*` keys; `None` without `host.audit`.
fn resolve_audit(host: &RawHost) -> Result<Option<crate::audit::AuditSettings>> {
    let Some(path) = &host.audit else {
        if host.audit_arguments || host.audit_max_bytes.is_some() || host.audit_keep.is_some() {
            bail!(
                "`host.audit_arguments`, `host.audit_max_bytes` and `host.audit_keep` need \
                 `host.audit`, the audit trail's file, e.g. audit = \"/var/log/toolhost/audit.jsonl\""
            );
        }
        return Ok(None);
    };
    if path.as_os_str().is_empty() {
        bail!("`host.audit` is empty; name the audit trail's file, or leave the key out");
    }
    Ok(Some(crate::audit::AuditSettings {
        path: path.clone(),
        arguments: host.audit_arguments,
        max_bytes: AUDIT_MAX_BYTES
            .check_or(host.audit_max_bytes, crate::audit::DEFAULT_MAX_BYTES)?,
        keep: AUDIT_KEEP.check_or(host.audit_keep, crate::audit::DEFAULT_KEEP)?,
    }))
}

/// `host.metrics` as written: `"ADDRESS:PORT"` (`"[::1]:9464"` for IPv6),
/// or a port alone, which means loopback (`"9464"` is `127.0.0.1:9464`).
fn metrics_address(text: &str) -> Result<SocketAddr> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    bail!(
        "`host.metrics` must be an IP address and port such as \"127.0.0.1:9464\" (or a port alone, on loopback), not {text:?}"
    )
}

/// `toolhost.toml` could not be read as TOML, or a value has the wrong
/// type or name: where (line, column, key) and what is wrong. Never the
/// text found there: `toml`'s own message quotes the offending line, and a
/// broken line may hold a credential (`value = "Bearer sk-…` without its
/// closing quote).
#[derive(Debug, thiserror::Error)]
#[error("{place}: {problem}")]
pub struct TomlError {
    /// `line 7, column 9 (`value` in [[plugins.web.credentials]])`.
    place: String,
    /// What the parser or the key's type expected.
    problem: String,
}

/// Reads `text` as `T`; a [`TomlError`] if it cannot.
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    toml::from_str(text).map_err(|e| toml_error(&e, text))
}

fn toml_error(error: &toml::de::Error, text: &str) -> TomlError {
    // Without its input, the error shows its message and key path alone.
    let mut bare = error.clone();
    bare.set_input(None);
    let shown = bare.to_string();
    let keys = shown
        .strip_prefix(error.message())
        .map(str::trim)
        .and_then(|rest| rest.strip_prefix("in `"))
        .and_then(|rest| rest.strip_suffix('`'))
        .filter(|keys| !keys.is_empty());
    let mut place = Vec::new();
    let mut context = keys.map(|keys| format!("`{keys}`"));
    if let Some(span) = error.span() {
        let start = span.start.min(text.len());
        let before = text.get(..start).unwrap_or("");
        let line = before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        place.push(format!("line {}, column {column}", line + 1));
        if context.is_none() {
            context = syntax_context(text, line);
        }
    }
    if let Some(context) = context {
        place.push(format!("({context})"));
    }
    if place.is_empty() {
        place.push("TOML".to_string());
    }
    TomlError {
        place: place.join(" "),
        problem: without_quoted_strings(error.message().trim()),
    }
}

/// Where a syntax error on line `line` (from 0) is, in names the file
/// uses: the key the line sets and the table header above it, each shown
/// only when it is made of characters a key may have.
fn syntax_context(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let is_key = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-. \"'".contains(c))
    };
    let key = lines
        .get(line)
        .and_then(|l| l.split_once('='))
        .map(|(key, _)| key.trim())
        .filter(|k| is_key(k));
    let table = lines.get(..line.min(lines.len())).and_then(|above| {
        above.iter().rev().find_map(|l| {
            let l = l.trim();
            let name = l
                .strip_prefix("[[")
                .and_then(|n| n.strip_suffix("]]"))
                .or_else(|| l.strip_prefix('[').and_then(|n| n.strip_suffix(']')))?;
            is_key(name.trim()).then(|| l.to_string())
        })
    });
    match (key, table) {
        (Some(key), Some(table)) => Some(format!("`{key}` in {table}")),
        (Some(key), None) => Some(format!("`{key}`")),
        (None, Some(table)) => Some(format!("in {table}")),
        (None, None) => None,
    }
}

/// `message` with each `string "…"` (how serde shows a string value it
/// did not expect) shown as `a string`, so no value is quoted.
fn without_quoted_strings(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(start) = rest.find("string \"") {
        out.push_str(&rest[..start]);
        out.push_str("a string");
        let value = &rest[start + "string \"".len()..];
        let mut escaped = false;
        let end = value.char_indices().find_map(|(i, c)| {
            let closes = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            closes.then_some(i + 1)
        });
        rest = &value[end.unwrap_or(value.len())..];
    }
    out.push_str(rest);
    out
}

/// Replaces each `${VAR}` in `text` with the environment variable `VAR`.
fn expand_env(text: &str) -> Result<String> {
    expand_env_with(text, str::to_string)
}

/// Replaces each `${VAR}` in `text` with `put(value of VAR)`.
fn expand_env_with(text: &str, put: impl Fn(&str) -> String) -> Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        // The text is not quoted: it may hold a secret written literally.
        let end = after.find('}').with_context(|| {
            format!(
                "`${{` at character {} is not closed; write `${{NAME}}`",
                text[..text.len() - after.len()].chars().count() - 1
            )
        })?;
        let var = &after[..end];
        let value = std::env::var(var).with_context(|| {
            format!("the environment variable {var} is not set; export it before starting toolhost")
        })?;
        out.push_str(&put(&value));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Default of `oci.max_manifest_bytes`: 4 MiB, the size registries must
/// accept.
pub const DEFAULT_MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// `oci.max_manifest_bytes`: 256 bytes to 64 MiB.
const MAX_MANIFEST_BYTES: Range<u64> = Range {
    key: "oci.max_manifest_bytes",
    min: 256,
    max: 64 << 20,
    unit: "bytes",
};
/// `oci.max_blob_bytes`: 1 KiB to 1 GiB.
const MAX_BLOB_BYTES: Range<u64> = Range {
    key: "oci.max_blob_bytes",
    min: 1 << 10,
    max: 1 << 30,
    unit: "bytes",
};

fn resolve_oci(raw: RawOci) -> Result<OciSettings> {
    let d = OciSettings::default();
    Ok(OciSettings {
        trusted_keys: raw.trusted_keys,
        require_signature: raw.require_signature.unwrap_or(d.require_signature),
        max_manifest_bytes: MAX_MANIFEST_BYTES
            .check_or(raw.max_manifest_bytes, d.max_manifest_bytes)?,
        max_blob_bytes: MAX_BLOB_BYTES.check_or(raw.max_blob_bytes, d.max_blob_bytes)?,
        store_dir: raw.store_dir,
    })
}

impl Config {
    /// Makes the relative paths of the OCI keys (`trusted_keys`,
    /// `oci.store_dir`) relative to `dir`, the config file's directory.
    fn resolve_paths_against(&mut self, dir: &Path) {
        let absolute = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        };
        self.oci.trusted_keys.iter_mut().for_each(absolute);
        if let Some(store) = &mut self.oci.store_dir {
            absolute(store);
        }
        for plugin in &mut self.plugins {
            plugin.trusted_keys.iter_mut().for_each(absolute);
        }
        if let Some(audit) = &mut self.audit {
            absolute(&mut audit.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmatched_files_are_served_unless_the_config_says_skip() {
        let serve = Config::parse("[plugins.hello]\n").unwrap();
        assert!(serve.serves("hello.wasm") && serve.serves("other.wasm"));
        assert!(Config::default().serves("other.wasm"));

        let skip = Config::parse(
            "components = [\"oci://127.0.0.1:5000/tools/wordcount:1.0\"]\n\
             [host]\nunmatched_files = \"skip\"\n\
             [plugins.sp]\nfiles = [\"statuspro_*.wasm\"]\n",
        )
        .unwrap();
        assert!(skip.serves("statuspro_list_orders.wasm"));
        assert!(skip.serves("wordcount.wasm"), "named in `components`");
        assert!(!skip.serves("other.wasm"));

        let err = Config::parse("[host]\nunmatched_files = \"drop\"\n").unwrap_err();
        assert!(format!("{err:#}").contains("unknown variant"), "{err:#}");
    }

    #[test]
    fn defaults_apply_when_a_block_is_empty() {
        let c = Config::parse("[plugins.hello]\n").unwrap();
        let s = c.settings_for("hello.wasm");
        assert_eq!(s.name, "hello");
        assert_eq!(s.limits, Limits::default());
        assert_eq!(c.settings_for("other.wasm").name, "other");
    }

    #[test]
    fn one_block_serves_many_files() {
        let c = Config::parse(
            "[plugins.statuspro]\nfiles = [\"statuspro_*.wasm\"]\nconfig = { base_url = \"http://x\" }\n",
        )
        .unwrap();
        let s = c.settings_for("statuspro_list_orders.wasm");
        assert_eq!(s.name, "statuspro");
        assert_eq!(s.values["base_url"], "http://x");
        assert_eq!(c.settings_for("hello.wasm").name, "hello");
    }

    #[test]
    fn credentials_read_the_environment_and_stay_redacted() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("TOOLHOST_TEST_KEY_1", "s3cret") };
        let c = Config::parse(
            "[[plugins.p.credentials]]\nhost = \"api.example.com\"\nheader = \"Authorization\"\nvalue = \"Bearer ${TOOLHOST_TEST_KEY_1}\"\n",
        )
        .unwrap();
        let cred = &c.plugins[0].credentials[0];
        assert_eq!(cred.value, "Bearer s3cret");
        assert!(!format!("{cred:?}").contains("s3cret"));
    }

    #[test]
    fn a_missing_variable_names_it() {
        let err = Config::parse(
            "[[plugins.p.credentials]]\nhost = \"a.b\"\nheader = \"X\"\nvalue = \"${TOOLHOST_TEST_SURELY_UNSET}\"\n",
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("TOOLHOST_TEST_SURELY_UNSET"),
            "{err:#}"
        );
    }

    /// An error's whole chain, as `main` prints it.
    fn error_of(text: &str) -> String {
        format!("{:#}", Config::parse(text).unwrap_err())
    }

    #[test]
    fn a_huge_timeout_is_refused_not_a_panic() {
        // `Duration::from_secs_f64(1e30)` panics; `Instant::now() + 1e15 s`
        // overflows. Both must be load errors naming the key and its range.
        for value in ["1e30", "1e15", "86400.5"] {
            let err = error_of(&format!(
                "[plugins.p.limits]\ncall_timeout_secs = {value}\n"
            ));
            assert!(
                err.contains(
                    "`limits.call_timeout_secs` must be between 0.001 and 86400 (seconds)"
                ),
                "{err}"
            );
            assert!(err.contains("[plugins.p]"), "{err}");
        }
        let err = error_of(&format!(
            "[host]\nelicitation_timeout_secs = {}\n",
            i64::MAX
        ));
        assert!(
            err.contains("`host.elicitation_timeout_secs` must be between 1 and 86400 (seconds)"),
            "{err}"
        );
    }

    #[test]
    fn a_memory_size_that_would_wrap_is_refused() {
        // 2^44 MiB << 20 wraps to 0 bytes, 2^44 + 1 to exactly 1 MiB.
        for mib in [1u64 << 44, (1 << 44) + 1, 4097] {
            let err = error_of(&format!("[plugins.p.limits]\nmemory_mib = {mib}\n"));
            assert!(
                err.contains("`limits.memory_mib` must be between 1 and 4096 (MiB)"),
                "{err}"
            );
        }
        let c = Config::parse("[plugins.p.limits]\nmemory_mib = 4096\n").unwrap();
        assert_eq!(c.plugins[0].limits.memory_bytes, 4 << 30);
    }

    #[test]
    fn every_numeric_key_has_a_range() {
        // (key as written, a value below its range or absurd, a value in it)
        let cases = [
            ("host", "elicitation_timeout_secs", "0", "1"),
            ("host", "max_message_bytes", "100", "4096"),
            ("limits", "memory_mib", "0", "1"),
            ("limits", "call_timeout_secs", "0", "0.5"),
            ("limits", "call_timeout_secs", "-1", "86400"),
            ("limits", "call_timeout_secs", "nan", "30"),
            ("limits", "call_timeout_secs", "inf", "30"),
            ("limits", "output_bytes", "0", "1"),
            ("limits", "http_body_bytes", "0", "1073741824"),
            ("limits", "http_timeout_secs", "1e300", "0.001"),
            ("limits", "http_requests_per_call", "100001", "0"),
            ("limits", "concurrent_calls", "0", "1024"),
            ("limits", "confirmations_per_call", "101", "0"),
            ("limits", "log_messages_per_call", "1000001", "0"),
            ("limits", "log_bytes_per_call", "67108865", "0"),
        ];
        for (section, key, bad, good) in cases {
            let table = match section {
                "host" => "[host]",
                _ => "[plugins.p.limits]",
            };
            let err = error_of(&format!("{table}\n{key} = {bad}\n"));
            assert!(
                err.contains(&format!("`{section}.{key}` must be between")),
                "{key} = {bad}: {err}"
            );
            Config::parse(&format!("{table}\n{key} = {good}\n"))
                .unwrap_or_else(|e| panic!("{key} = {good} is refused: {e:#}"));
        }
    }

    #[test]
    fn the_log_budget_and_message_size_have_defaults_and_keys() {
        let c = Config::parse(
            "[host]\nmax_message_bytes = 4096\n[plugins.p.limits]\nlog_messages_per_call = 5\nlog_bytes_per_call = 100\n",
        )
        .unwrap();
        assert_eq!(c.max_message_bytes, 4096);
        assert_eq!(c.plugins[0].limits.log_messages_per_call, 5);
        assert_eq!(c.plugins[0].limits.log_bytes_per_call, 100);
        let d = Config::default();
        assert_eq!(d.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
        assert_eq!(Limits::default().log_messages_per_call, 1000);
    }

    #[test]
    fn ports_are_numbers_or_a_star_and_default_to_the_schemes() {
        use reqwest::Url;
        let c = Config::parse(
            "[[plugins.p.allow]]\nhost = \"a.example\"\n\
             [[plugins.p.allow]]\nhost = \"b.example\"\nport = 8080\n\
             [[plugins.p.allow]]\nhost = \"c.example\"\nport = \"*\"\npaths = [\"/v1/*\"]\n",
        )
        .unwrap();
        let policy = &c.plugins[0].network;
        let allowed = |u: &str| policy.check("GET", &Url::parse(u).unwrap()).is_ok();
        assert!(allowed("https://a.example/"));
        assert!(!allowed("https://a.example:22/"));
        assert!(allowed("http://b.example:8080/"));
        assert!(!allowed("https://b.example/"));
        assert!(allowed("https://c.example:22/v1/x"));
        assert!(!allowed("https://c.example:22/v2/x"));
        for bad in ["\"any\"", "0", "70000", "-1"] {
            let err = Config::parse(&format!(
                "[[plugins.p.allow]]\nhost = \"a.example\"\nport = {bad}\n"
            ))
            .unwrap_err();
            assert!(
                format!("{err:#}").contains("\"*\" for any port"),
                "{bad}: {err:#}"
            );
        }
    }

    #[test]
    fn loading_limits_are_read_and_zero_is_refused() {
        let c = Config::parse(
            "[plugins.p.limits]\ntools_per_component = 3\ndefinition_bytes = 100\nschema_bytes = 50\nwasm_bytes = 1000\ncompile_timeout_secs = 0.5\n",
        )
        .unwrap();
        let l = &c.plugins[0].limits;
        assert_eq!(
            (
                l.tools_per_component,
                l.definition_bytes,
                l.schema_bytes,
                l.wasm_bytes
            ),
            (3, 100, 50, 1000)
        );
        assert_eq!(l.compile_timeout, Duration::from_millis(500));
        let err = Config::parse("[plugins.p.limits]\ntools_per_component = 0\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("limits.tools_per_component"),
            "{err:#}"
        );
    }

    #[test]
    fn the_metrics_address_is_an_address_or_a_port_on_loopback() {
        let addr = |text: &str| Config::parse(&format!("[host]\nmetrics = {text:?}\n"));
        assert_eq!(Config::default().metrics, None);
        assert_eq!(
            addr("127.0.0.1:9464").unwrap().metrics,
            Some("127.0.0.1:9464".parse().unwrap())
        );
        assert_eq!(
            addr("9464").unwrap().metrics,
            Some("127.0.0.1:9464".parse().unwrap())
        );
        assert_eq!(
            addr("[::]:9464").unwrap().metrics,
            Some("[::]:9464".parse().unwrap())
        );
        for bad in ["localhost:9464", "127.0.0.1", "70000", ""] {
            let err = format!("{:#}", addr(bad).unwrap_err());
            assert!(err.contains("`host.metrics` must be"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_prefix_and_its_separator_make_the_served_name() {
        let c = Config::parse(
            "[plugins.a]\nprefix = \"shop\"\n[plugins.b]\nprefix = \"inv\"\nprefix_separator = \"_\"\n",
        )
        .unwrap();
        assert_eq!(
            served_name(&c.settings_for("a.wasm"), "search"),
            "shop.search"
        );
        assert_eq!(
            served_name(&c.settings_for("b.wasm"), "search"),
            "inv_search"
        );
        assert_eq!(served_name(&c.settings_for("c.wasm"), "search"), "search");
        let longest = "p".repeat(126);
        Config::parse(&format!("[plugins.a]\nprefix = \"{longest}\"\n")).unwrap();
        for (bad, says) in [
            (
                format!("prefix = \"{longest}p\""),
                "`prefix` must be 1 to 126 characters",
            ),
            ("prefix = \"a b\"".to_string(), "`prefix` must be"),
            ("prefix = \"\"".to_string(), "`prefix` must be"),
            (
                "prefix = \"a\"\nprefix_separator = \"::\"".to_string(),
                "`prefix_separator` must be",
            ),
            (
                "prefix_separator = \"-\"".to_string(),
                "`prefix_separator` is set without `prefix`",
            ),
        ] {
            let err = error_of(&format!("[plugins.a]\n{bad}\n"));
            assert!(
                err.contains(says) && err.contains("[plugins.a]"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn a_toml_error_names_the_line_column_and_key_never_the_text() {
        let secret = "sk-live-0a1b2c3d";
        // A basic string left open on a credentials line.
        let err = error_of(&format!(
            "[host]\nconfirmation = \"deny\"\n[[plugins.web.credentials]]\nhost = \"a.b\"\n\
             header = \"Authorization\"\nvalue = \"Bearer {secret}\n"
        ));
        assert!(
            err.contains("line 6, column")
                && err.contains("(`value` in [[plugins.web.credentials]])")
                && err.contains("invalid basic string"),
            "{err}"
        );
        assert!(!err.contains(secret), "{err}");
        // A value of the wrong kind: its key path, not its text.
        let err = error_of(&format!(
            "[[plugins.web.allow]]\nhost = \"a.b\"\nport = \"{secret}\"\n"
        ));
        assert!(
            err.contains("line 3, column 8 (`plugins.web.allow.port`)"),
            "{err}"
        );
        assert!(err.contains("invalid value: a string"), "{err}");
        assert!(!err.contains(secret), "{err}");
        // An unclosed `${` is placed, not quoted.
        let err = error_of(&format!(
            "[[plugins.w.credentials]]\nhost = \"a.b\"\nheader = \"X\"\nvalue = \"{secret} ${{KEY\"\n"
        ));
        assert!(err.contains("`${` at character 18 is not closed"), "{err}");
        assert!(!err.contains(secret), "{err}");
    }

    #[test]
    fn the_replay_url_reads_the_environment_and_stays_redacted() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("TOOLHOST_TEST_REDIS_PASSWORD", "r3dis-pw") };
        let c = Config::parse(
            "[state]\nreplay = \"redis://:${TOOLHOST_TEST_REDIS_PASSWORD}@redis:6379/0\"\n",
        )
        .unwrap();
        let replay = c.state.replay.as_ref().unwrap();
        assert_eq!(replay.url, "redis://:r3dis-pw@redis:6379/0");
        assert!(!replay.literal_password);
        assert!(!format!("{c:?}").contains("r3dis-pw"));
        assert!(!format!("{replay:?}").contains("r3dis-pw"));

        for (url, literal) in [
            ("redis://:hunter2@redis:6379/0", true),
            ("redis://user:hunter2@redis/0", true),
            ("redis://:pre${TOOLHOST_TEST_REDIS_PASSWORD}@redis", true),
            ("redis://user@redis:6379", false),
            ("rediss://redis:6380/1", false),
            (
                "redis://:${TOOLHOST_TEST_REDIS_PASSWORD}@redis/0?protocol=resp3",
                false,
            ),
        ] {
            assert_eq!(has_literal_password(url), literal, "{url}");
        }

        // A value in the user information is percent-encoded; the rest of
        // the URL takes values as they are.
        // SAFETY: as above.
        unsafe {
            std::env::set_var("TOOLHOST_TEST_REDIS_ODD_PASSWORD", "p@ss/w:rd%?#ü");
            std::env::set_var("TOOLHOST_TEST_REDIS_HOST", "redis.internal:6380");
        }
        let c = Config::parse(
            "[state]\nreplay = \"redis://u:${TOOLHOST_TEST_REDIS_ODD_PASSWORD}@${TOOLHOST_TEST_REDIS_HOST}/0\"\n",
        )
        .unwrap();
        let url = &c.state.replay.as_ref().unwrap().url;
        assert_eq!(
            url,
            "redis://u:p%40ss%2Fw%3Ard%25%3F%23%C3%BC@redis.internal:6380/0"
        );
        let parsed = url::Url::parse(url).unwrap();
        assert_eq!(
            percent_encoding::percent_decode_str(parsed.password().unwrap())
                .decode_utf8()
                .unwrap(),
            "p@ss/w:rd%?#ü"
        );
        assert_eq!(parsed.host_str(), Some("redis.internal"));

        let err = error_of("[state]\nreplay = \"http://:hunter2@redis\"\n");
        assert!(err.contains("must be a redis:// or rediss:// URL"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        let err = error_of("[state]\nreplay = \"redis://:${TOOLHOST_TEST_SURELY_UNSET}@r\"\n");
        assert!(
            err.contains("`state.replay`") && err.contains("TOOLHOST_TEST_SURELY_UNSET"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let err = Config::parse("[plugins.p]\nalow = []\n").unwrap_err();
        assert!(format!("{err:#}").contains("alow"), "{err:#}");
    }

    #[test]
    fn the_audit_keys_default_check_their_ranges_and_need_a_file() {
        assert_eq!(Config::parse("").unwrap().audit, None);
        let audit = Config::parse("[host]\naudit = \"audit.jsonl\"\n")
            .unwrap()
            .audit
            .unwrap();
        assert_eq!(
            (audit.arguments, audit.max_bytes, audit.keep),
            (false, 64 << 20, 5)
        );
        let err = Config::parse("[host]\naudit = \"a\"\naudit_max_bytes = 10\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("`host.audit_max_bytes` must be between 4096"),
            "{err:#}"
        );
        let err = Config::parse("[host]\naudit_arguments = true\n").unwrap_err();
        assert!(format!("{err:#}").contains("need `host.audit`"), "{err:#}");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("toolhost.toml");
        std::fs::write(&file, "[host]\naudit = \"logs/audit.jsonl\"\n").unwrap();
        let expected = dir.path().join("logs/audit.jsonl");
        assert_eq!(Config::load(&file).unwrap().audit.unwrap().path, expected);
        assert_eq!(Config::load_audit(&file).unwrap().unwrap().path, expected);
    }
}
