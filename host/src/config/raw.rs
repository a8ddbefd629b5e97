//! `toolhost.toml` as written: the serde structs the file deserialises
//! into, before anything is checked or defaulted (resolution does that),
//! and the reading of the TOML text itself, whose errors never quote the
//! file ([`TomlError`]).
//!
//! An absent key is `None` (or serde's empty value) here: its default, its
//! range and its documentation are its row of [`super::keys`]. Each field's
//! doc comment starts with the key in backticks; a docs test holds every
//! such key to a mention in `docs/configuration.md`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::{NoElicitationPolicy, UnmatchedFiles};
use crate::policy::PortRule;

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
    pub auth: Option<super::auth::RawAuth>,
    /// `[[access]]`: which plugins each HTTP caller sees.
    #[serde(default)]
    pub access: Vec<super::auth::RawAccess>,
    /// `components`: components to fetch from OCI registries
    /// (`oci://REGISTRY/REPO:TAG` or `…@sha256:…`), installed into the
    /// plugin directory at start.
    #[serde(default)]
    pub components: Vec<String>,
    /// `[oci]`: trust policy and bounds for OCI components.
    #[serde(default)]
    pub oci: RawOci,
    /// `[policy]`: the rule layer (`[[policy.rules]]`).
    #[serde(default)]
    pub policy: super::policy::RawPolicy,
    /// `[approvals]`: the approval page (ADR 0038).
    #[serde(default)]
    pub approvals: RawApprovals,
    /// `[token_exchange.NAME]`: credentials exchanged per caller.
    #[serde(default)]
    pub token_exchange: BTreeMap<String, super::exchange::RawTokenExchange>,
    /// `[telemetry]`: traces over OTLP.
    #[serde(default)]
    pub telemetry: super::telemetry::RawTelemetry,
    /// `[[profiles]]`: named surfaces of what is served.
    #[serde(default)]
    pub profiles: Vec<super::profiles::RawProfile>,
}

/// `[approvals]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApprovals {
    /// `url`: where approvers find the page, as callers are told.
    pub url: Option<String>,
    /// `[approvals.oauth]`: approvers sign in through the identity
    /// provider.
    pub oauth: Option<RawApprovalsOAuth>,
    /// `task_lease_secs`: how long a replica running a task's call may go
    /// without saying so before the run is taken as lost.
    pub task_lease_secs: Option<u64>,
    /// `pending_per_caller`: approvals one caller may have waiting.
    pub pending_per_caller: Option<u64>,
}

/// `[approvals.oauth]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApprovalsOAuth {
    /// `client_id`: toolhost's public client at the provider.
    pub client_id: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `scopes`: asked for at sign-in (none: `auth.oauth.scopes`).
    pub scopes: Option<Vec<String>>,
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

/// An entry of `trusted_keys`: a path, or a table naming the path and
/// whether the key's signatures count in any repository.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawTrustedKey {
    /// A path: `"keys/acme.pub"`.
    Path(PathBuf),
    /// A table: `{ path = "keys/mirror.pub", any_repository = true }`.
    Table(RawTrustedKeyTable),
}

/// The table form of a `trusted_keys` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTrustedKeyTable {
    /// `path`: the public key file.
    pub path: PathBuf,
    /// `any_repository`: accept its signatures whatever repository they
    /// name.
    #[serde(default)]
    pub any_repository: bool,
}

impl From<RawTrustedKey> for crate::oci::signature::KeySpec {
    fn from(raw: RawTrustedKey) -> Self {
        match raw {
            RawTrustedKey::Path(path) => crate::oci::signature::KeySpec::new(path),
            RawTrustedKey::Table(t) => crate::oci::signature::KeySpec {
                path: t.path,
                any_repository: t.any_repository,
            },
        }
    }
}

/// `[oci]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOci {
    /// `trusted_keys`: public keys (PEM files) whose signatures are
    /// trusted for every OCI component.
    #[serde(default)]
    pub trusted_keys: Vec<RawTrustedKey>,
    /// `require_signature`: refuse OCI components without a trusted
    /// signature.
    pub require_signature: Option<bool>,
    /// `max_manifest_bytes`: largest manifest read from a registry.
    pub max_manifest_bytes: Option<u64>,
    /// `max_blob_bytes`: largest component layer read from a registry.
    pub max_blob_bytes: Option<u64>,
    /// `max_signatures`: most signatures considered on one manifest.
    pub max_signatures: Option<u64>,
    /// `pull_timeout_secs`: the longest one component's install may take.
    pub pull_timeout_secs: Option<u64>,
    /// `token_hosts`: hosts whose token service may receive a registry's
    /// credentials, besides the registry's own.
    #[serde(default)]
    pub token_hosts: Vec<String>,
    /// `store_dir`: the content store's directory.
    pub store_dir: Option<PathBuf>,
}

/// `[host]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    /// `secrets_dir`: where credentials chosen per caller are read.
    pub secrets_dir: Option<PathBuf>,
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
    /// `compile_memory_mib`: the memory the compiling process may use.
    pub compile_memory_mib: Option<u64>,
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
    /// hash.
    #[serde(default)]
    pub audit_arguments: bool,
    /// `audit_max_bytes`: size at which the audit file is rotated.
    pub audit_max_bytes: Option<u64>,
    /// `audit_keep`: rotated audit files kept.
    pub audit_keep: Option<u32>,
    /// `audit_refused_per_window`: refused-call records per caller and
    /// window.
    pub audit_refused_per_window: Option<u64>,
    /// `audit_refused_window_secs`: that window.
    pub audit_refused_window_secs: Option<u64>,
    /// `resource_subscriptions`: resource URIs one session (or one
    /// 2026-07-28 listen stream) may subscribe to.
    pub resource_subscriptions: Option<u32>,
    /// `list_ttl_ms`: how long a client may treat a list as fresh
    /// (2026-07-28 `ttlMs`).
    pub list_ttl_ms: Option<u64>,
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
    /// `trusted_proxies`: addresses or blocks whose `X-Forwarded-For` is
    /// believed.
    #[serde(default)]
    pub trusted_proxies: Vec<String>,
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
    /// `max_unauthenticated_connections`: with `[auth]`, open connections
    /// none of whose requests has authenticated yet.
    pub max_unauthenticated_connections: Option<u32>,
    /// `sessions_per_identity`: legacy sessions one caller may hold open.
    pub sessions_per_identity: Option<u32>,
    /// `max_sessions`: legacy sessions open, all callers together.
    pub max_sessions: Option<u32>,
    /// `uninitialized_session_idle_secs`: a legacy session that never sent
    /// `notifications/initialized` is closed this long after it opened.
    pub uninitialized_session_idle_secs: Option<u64>,
    /// `session_idle_secs`: a legacy session with no traffic for this long
    /// is closed.
    pub session_idle_secs: Option<u64>,
    /// `shutdown_grace_secs`: on SIGTERM/SIGINT, how long calls in flight
    /// may take to finish.
    pub shutdown_grace_secs: Option<f64>,
}

/// `[plugins.NAME]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPlugin {
    /// `files`: glob patterns over file names in the plugin directory that
    /// this block applies to.
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
    pub trusted_keys: Vec<RawTrustedKey>,
    /// `require_signature`: overrides `oci.require_signature` for OCI
    /// components installed as files this block matches.
    pub require_signature: Option<bool>,
    /// `prefix`: serve this block's tools as `PREFIX.TOOL` (the separator
    /// is `prefix_separator`).
    pub prefix: Option<String>,
    /// `propagate_trace_context`: send `traceparent` upstream.
    pub propagate_trace_context: Option<bool>,
    /// `log_to_client`: the least severe `log` level also sent to the
    /// calling client, or `"off"`.
    pub log_to_client: Option<String>,
    /// `prefix_separator`: `"."`, `"_"` or `"-"`; only with `prefix`.
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
