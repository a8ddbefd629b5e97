//! What the runtime needs to know of the operator's configuration: each
//! plugin's settings ([`PluginSettings`], [`Limits`], [`Credential`]) and a
//! way to find them by file name ([`PluginConfig`]).
//!
//! The runtime reads no configuration file: the embedder resolves these
//! (toolhost from `toolhost.toml`, its `config` module) and hands them over.
//! A [`crate::plugin::Loader`] and a [`crate::registry::Registry`] carry the
//! embedder's whole configuration as an opaque `C: PluginConfig`, so a
//! registry and the configuration it was built for are swapped together.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::policy::{CredentialScope, NetworkPolicy};

/// The embedder's configuration, as the runtime reads it.
pub trait PluginConfig: Send + Sync + 'static {
    /// The settings the component file `file_name` (e.g.
    /// `statuspro_list_orders.wasm`) loads and runs with.
    fn settings_for(&self, file_name: &str) -> PluginSettings;
    /// Every configured plugin block (the HTTP client learns their
    /// destinations from them).
    fn plugins(&self) -> &[PluginSettings];
    /// The largest memory limit any plugin has; sizes the instance pool.
    fn max_memory_bytes(&self) -> u64;
}

/// Resource limits for one plugin, defaults applied (the embedder resolves
/// them: toolhost from `[plugins.NAME.limits]` and its table of keys).
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

/// A header the host adds to requests for one destination. The value is a
/// secret: it is never shown to the guest and never logged.
#[derive(Clone)]
pub struct Credential {
    /// Where it applies: host, port, and https unless loopback.
    pub scope: CredentialScope,
    /// The header name.
    pub header: String,
    /// The header value; for a credential chosen per caller, the embedder's
    /// description of where the caller's value is (never sent).
    pub value: String,
    /// Whether the value is chosen per caller: each call is given its
    /// caller's value by the embedder ([`crate::call::CallOptions`]), and a
    /// request this credential applies to is refused when the call has
    /// none (nothing is sent).
    pub per_caller: bool,
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
    /// `prefix` and `prefix_separator` joined (`"statuspro."`), put before
    /// each tool's own name to make the name it is served under; empty
    /// without a prefix. See [`served_name`].
    pub name_prefix: String,
    /// Whether upstream requests carry the call's W3C trace context
    /// (`traceparent`, `tracestate`), from [`CallHooks::trace_context`](crate::hooks::CallHooks::trace_context).
    pub propagate_trace_context: bool,
    /// The least severe `log` messages of a call that also go to the
    /// client that made it; `None` (the default): the operator's log
    /// alone. The runtime only carries it: the embedder reads it to hand a
    /// call its `LogSink` (`imports::log`).
    pub log_to_client: Option<LogLevel>,
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
    /// values, `limits` (the embedder's defaults).
    pub fn unconfigured(name: &str, limits: Limits) -> Self {
        PluginSettings {
            name: name.to_string(),
            files: Vec::new(),
            values: BTreeMap::new(),
            network: NetworkPolicy::default(),
            credentials: Vec::new(),
            limits,
            name_prefix: String::new(),
            propagate_trace_context: false,
            log_to_client: None,
        }
    }
}

/// A level of the `log` import, from the least to the most severe (so
/// levels compare as severities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `trace`.
    Trace,
    /// `debug`.
    Debug,
    /// `info`.
    Info,
    /// `warn`.
    Warn,
    /// `error`.
    Error,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 5] = [
        LogLevel::Trace,
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warn,
        LogLevel::Error,
    ];

    /// The level's name as configuration writes it (`"info"`).
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Trace => "trace",
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }

    /// The level named `name` ([`LogLevel::name`]), if any.
    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.name() == name)
    }
}
