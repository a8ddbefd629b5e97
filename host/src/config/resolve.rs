//! Resolution: the file as written ([`super::raw`]) turned into what the
//! host uses. Environment variables and files are read, defaults applied,
//! every number checked against its range, and each error names the key and
//! says how to fix it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::*;
use crate::policy::{CredentialScope, HostRule, NetworkPolicy, PortRule};

impl Config {
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
pub(super) fn has_literal_password(written: &str) -> bool {
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
pub(super) fn resolve_audit(host: &RawHost) -> Result<Option<crate::audit::AuditSettings>> {
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
    pub(super) fn resolve_paths_against(&mut self, dir: &Path) {
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
