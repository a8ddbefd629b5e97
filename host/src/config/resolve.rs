//! Resolution: the file as written ([`super::raw`]) turned into what the
//! host uses. Environment variables and files are read, defaults applied,
//! every number checked against its range, and each error names the key and
//! says how to fix it.
//!
//! Every number's range and default come from its row of [`super::keys`]
//! (`key!("host.load_wait_secs").secs(…)`): nothing here writes one.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::keys::{Key, Number, Range};
use super::*;
use crate::auth::settings::AuthSettings;
use crate::policy::{CredentialScope, HostRule, NetworkPolicy, PortRule};

impl Config {
    /// Resolves a parsed file: applies defaults, reads environment variables
    /// and files named by credentials.
    pub fn from_raw(raw: RawConfig) -> Result<Config> {
        Config::from_raw_text(raw, None)
    }

    /// [`Config::from_raw`] for a file whose `text` is known: a policy
    /// condition that does not compile is placed by line and column in it.
    pub fn from_raw_text(raw: RawConfig, text: Option<&str>) -> Result<Config> {
        let mut plugins = Vec::new();
        let mut trust = BTreeMap::new();
        let secrets_dir = raw.host.secrets_dir.clone();
        let token_exchanges = super::exchange::resolve_exchanges(&raw.token_exchange)?;
        for (name, block) in raw.plugins {
            let (settings, block_trust) =
                resolve_plugin(&name, block, secrets_dir.as_deref(), &token_exchanges)
                    .with_context(|| format!("in [plugins.{name}]"))?;
            plugins.push(settings);
            trust.insert(name, block_trust);
        }
        let host = raw.host;
        let elicitation_timeout =
            key!("host.elicitation_timeout_secs").secs(host.elicitation_timeout_secs)?;
        let max_message_bytes = key!("host.max_message_bytes").u64(host.max_message_bytes)?;
        let load_wait = key!("host.load_wait_secs").secs(host.load_wait_secs)?;
        let compile_memory_mib = key!("host.compile_memory_mib").u64(host.compile_memory_mib)?;
        let metrics = host.metrics.as_deref().map(metrics_address).transpose()?;
        let auth = raw
            .auth
            .map(super::auth::resolve_auth)
            .transpose()
            .context("in [auth]")?;
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
        let access = super::auth::resolve_access(
            raw.access,
            &auth.as_ref().map(AuthSettings::sources).unwrap_or_default(),
        )?;
        let policy = super::policy::resolve_policy(&raw.policy, access.clone(), text)?;
        let approvals_url = raw
            .approvals
            .url
            .as_deref()
            .map(|u| {
                url::Url::parse(u)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https"))
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "`approvals.url`: {u:?} is not an http(s) URL; write where approvers \
                             open the page, e.g. \"https://tools.example.com/approvals\""
                        )
                    })
            })
            .transpose()?;
        let task_lease = key!("approvals.task_lease_secs").secs(raw.approvals.task_lease_secs)?;
        let pending_per_caller =
            key!("approvals.pending_per_caller").u64(raw.approvals.pending_per_caller)?;
        let approvals_oauth = match &raw.approvals.oauth {
            None => None,
            Some(oauth) => {
                let Some(issuer) = auth.as_ref().and_then(|a| a.oauth.as_ref()) else {
                    bail!(
                        "`[approvals.oauth]` needs `[auth.oauth]`: the access token an approver \
                         brings back from the provider is verified as `/mcp` verifies tokens; \
                         add `[auth.oauth]` with the provider's issuer and key set"
                    );
                };
                let endpoint = |key: &str, value: &str| {
                    url::Url::parse(value)
                        .ok()
                        .filter(|u| matches!(u.scheme(), "http" | "https"))
                        .ok_or_else(|| {
                            anyhow::anyhow!(
                                "`approvals.oauth.{key}`: {value:?} is not an http(s) URL; write \
                                 the provider's endpoint from its metadata \
                                 (/.well-known/oauth-authorization-server)"
                            )
                        })
                };
                if oauth.client_id.trim().is_empty() {
                    bail!(
                        "`approvals.oauth.client_id` is empty; register toolhost with the \
                         provider as a public client and write its id"
                    );
                }
                Some(super::ApprovalsOAuth {
                    client_id: oauth.client_id.clone(),
                    authorization_endpoint: endpoint(
                        "authorization_endpoint",
                        &oauth.authorization_endpoint,
                    )?,
                    token_endpoint: endpoint("token_endpoint", &oauth.token_endpoint)?,
                    scopes: oauth
                        .scopes
                        .clone()
                        .unwrap_or_else(|| issuer.scopes.iter().cloned().collect()),
                })
            }
        };
        let profiles = super::profiles::resolve_profiles(raw.profiles, text)?.into();
        Ok(Config {
            token_exchanges,
            approvals_oauth,
            task_lease,
            pending_per_caller: usize::try_from(pending_per_caller).unwrap_or(usize::MAX),
            approvals_url,
            confirmation: host.confirmation,
            elicitation_timeout,
            plugins,
            verified_components: BTreeMap::new(),
            component_signers: BTreeMap::new(),
            trust,
            unmatched_files: host.unmatched_files,
            load_wait,
            compile_memory_mib,
            // At most 256 MiB: it fits any `usize` toolhost builds for.
            max_message_bytes: max_message_bytes as usize,
            metrics,
            http,
            state,
            access,
            policy,
            profiles,
            auth,
            components,
            oci: resolve_oci(raw.oci)?,
            audit,
            path: None,
            resource_subscriptions: key!("host.resource_subscriptions")
                .u32(host.resource_subscriptions)? as usize,
            list_ttl_ms: key!("host.list_ttl_ms").u64(host.list_ttl_ms)?,
            secrets_dir,
            telemetry: super::telemetry::resolve_telemetry(raw.telemetry)
                .map_err(|e| e.context("in [telemetry]"))?,
        })
    }
}

/// `state.replay = "local"`: spent states are remembered in this process
/// alone, said explicitly (required with `[[state.keys]]`).
const LOCAL_REPLAY: &str = "local";

impl ReplayUrl {
    /// Resolves `state.replay` as written.
    fn resolve(written: &str) -> Result<ReplayUrl> {
        if !(written.starts_with("redis://") || written.starts_with("rediss://")) {
            // Not quoted: it may hold a password.
            bail!(
                "`state.replay` must be a redis:// or rediss:// URL, e.g. \
                 \"redis://:${{TOOLHOST_REDIS_PASSWORD}}@redis:6379/0\", or \"local\""
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
        let replay = match raw.replay.as_deref() {
            None if !keys.is_empty() => bail!(
                "`[[state.keys]]` is set but `state.replay` is not: replicas that share these \
                 keys would each accept the same confirmed answer once, so one confirmation \
                 could apply on every replica. Set `state.replay = \"redis://…\"`, the store \
                 of spent states the replicas share (docs/scaling.md), or \
                 `state.replay = \"local\"` if this process is the only one with these keys"
            ),
            None | Some(LOCAL_REPLAY) => None,
            Some(url) => Some(ReplayUrl::resolve(url)?),
        };
        Ok(StateSettings { keys, replay })
    }
}

impl HttpSettings {
    /// Resolves `[http]` and `host.http` (`listen`).
    pub(super) fn resolve(listen: Option<&str>, raw: RawHttp) -> Result<HttpSettings> {
        let listen = listen
            .map(|a| {
                a.parse().with_context(|| {
                    format!("`host.http` must be an address and port such as \"127.0.0.1:8080\", not {a:?}")
                })
            })
            .transpose()?;
        let allowed_origins = raw
            .allowed_origins
            .iter()
            .map(|origin| normalise_origin(origin))
            .collect::<Result<Vec<_>>>()?;
        let trusted_proxies = raw
            .trusted_proxies
            .iter()
            .map(|entry| {
                super::address_or_block(entry).ok_or_else(|| {
                    anyhow::anyhow!(
                        "`http.trusted_proxies`: {entry:?} is neither an address nor a block; \
                             write \"10.0.0.7\" or \"10.0.0.0/8\""
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(HttpSettings {
            listen,
            allowed_origins,
            allowed_hosts: raw.allowed_hosts,
            trusted_proxies,
            header_read_timeout: key!("http.header_read_timeout_secs")
                .secs_f64(raw.header_read_timeout_secs)?,
            body_read_timeout: key!("http.body_read_timeout_secs")
                .secs_f64(raw.body_read_timeout_secs)?,
            requests_per_identity: key!("http.requests_per_identity")
                .u32(raw.requests_per_identity)?,
            streams_per_identity: key!("http.streams_per_identity")
                .u32(raw.streams_per_identity)?,
            max_connections: key!("http.max_connections").u32(raw.max_connections)?,
            max_unauthenticated_connections: key!("http.max_unauthenticated_connections")
                .u32(raw.max_unauthenticated_connections)?,
            sessions_per_identity: key!("http.sessions_per_identity")
                .u32(raw.sessions_per_identity)?,
            max_sessions: key!("http.max_sessions").u32(raw.max_sessions)?,
            uninitialized_session_idle: key!("http.uninitialized_session_idle_secs")
                .secs(raw.uninitialized_session_idle_secs)?,
            session_idle: key!("http.session_idle_secs").secs(raw.session_idle_secs)?,
            shutdown_grace: key!("http.shutdown_grace_secs").secs_f64(raw.shutdown_grace_secs)?,
        })
    }
}

/// An `http.allowed_origins` entry as the transport compares it: scheme
/// and host in lower case, and the port always written, so that an entry
/// without one means the scheme's default port (`https://app.example.com`
/// is `https://app.example.com:443`), as a browser's `Origin` without a port
/// does. `:*` (any port) and `"null"` stay as written.
fn normalise_origin(origin: &str) -> Result<String> {
    let refuse = |why: &str| {
        anyhow::anyhow!(
            "`http.allowed_origins`: {origin:?} {why}; write it as a browser sends it, e.g. \
             \"https://app.example.com\" (port 443), \"http://localhost:3000\", or \
             \"http://localhost:*\" for any port"
        )
    };
    if origin == "null" {
        return Ok(origin.to_string());
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Err(refuse("has no scheme"));
    };
    let scheme = scheme.to_ascii_lowercase();
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
        return Err(refuse("is not a scheme, host and optional port"));
    }
    if let Some(host) = rest.strip_suffix(":*") {
        return Ok(format!("{scheme}://{}:*", host.to_ascii_lowercase()));
    }
    let authority: axum::http::uri::Authority = rest
        .parse()
        .map_err(|_| refuse("is not a scheme, host and optional port"))?;
    let host = authority.host().to_ascii_lowercase();
    let port = match (authority.port_u16(), scheme.as_str()) {
        (Some(port), _) => port,
        (None, "https") => 443,
        (None, "http") => 80,
        // A scheme without a default port (a browser extension's): only an
        // `Origin` without a port matches.
        (None, _) => return Ok(format!("{scheme}://{host}")),
    };
    Ok(format!("{scheme}://{host}:{port}"))
}

fn resolve_plugin(
    name: &str,
    raw: RawPlugin,
    secrets_dir: Option<&Path>,
    exchanges: &BTreeMap<String, super::exchange::TokenExchange>,
) -> Result<(PluginSettings, BlockTrust)> {
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
        // A value naming a secret per caller is kept as written and read at
        // each call (`config::secrets`).
        let exchanged = match &c.value {
            Some(v) => super::exchange::ExchangeTemplate::parse(v).with_context(at)?,
            None => None,
        };
        if let Some(template) = &exchanged
            && !exchanges.contains_key(&template.name)
        {
            bail!(
                "{}: `${{exchange:{}}}` names no `[token_exchange.{}]` table; add one with the \
                 provider's token endpoint",
                at(),
                template.name,
                template.name
            );
        }
        let secret = match &c.value {
            Some(v) if exchanged.is_none() => super::secrets::SecretTemplate::parse(v)
                .with_context(at)?
                .is_some(),
            _ => false,
        };
        let per_caller = secret || exchanged.is_some();
        if secret && secrets_dir.is_none() {
            bail!(
                "{}: its value names a secret per caller; set `host.secrets_dir` to the directory \
                 holding them (e.g. a mounted Kubernetes Secret)",
                at()
            );
        }
        let value = match (&c.value, &c.value_file) {
            (Some(v), None) if per_caller => v.clone(),
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
            per_caller,
        });
    }

    let limits = resolve_limits(raw.limits)?;
    let log_to_client = match raw.log_to_client.as_deref() {
        None | Some("off") => None,
        Some(level) => Some(
            crate::imports::log::LogLevel::parse(level).with_context(|| {
                format!(
                    "`plugins.{name}.log_to_client` is {level:?}; write one of \"off\", \
                     \"trace\", \"debug\", \"info\", \"warn\", \"error\""
                )
            })?,
        ),
    };

    let settings = PluginSettings {
        name: name.to_string(),
        files,
        values: raw.config,
        network: NetworkPolicy::new(rules),
        credentials,
        limits,
        name_prefix: name_prefix(raw.prefix.as_deref(), raw.prefix_separator.as_deref())?,
        propagate_trace_context: raw
            .propagate_trace_context
            .unwrap_or(key!("plugins.*.propagate_trace_context").default_bool()),
        log_to_client,
    };
    let trust = BlockTrust {
        trusted_keys: raw.trusted_keys.into_iter().map(Into::into).collect(),
        require_signature: raw.require_signature,
    };
    Ok((settings, trust))
}

/// Resolves `[plugins.NAME.limits]`.
pub(super) fn resolve_limits(l: RawLimits) -> Result<Limits> {
    Ok(Limits {
        // At most 4096 MiB: the shift cannot wrap.
        memory_bytes: key!("plugins.*.limits.memory_mib").u64(l.memory_mib)? << 20,
        call_timeout: key!("plugins.*.limits.call_timeout_secs").secs_f64(l.call_timeout_secs)?,
        output_bytes: key!("plugins.*.limits.output_bytes").u64(l.output_bytes)?,
        http_body_bytes: key!("plugins.*.limits.http_body_bytes").u64(l.http_body_bytes)?,
        http_timeout: key!("plugins.*.limits.http_timeout_secs").secs_f64(l.http_timeout_secs)?,
        http_requests_per_call: key!("plugins.*.limits.http_requests_per_call")
            .u32(l.http_requests_per_call)?,
        concurrent_calls: key!("plugins.*.limits.concurrent_calls").u32(l.concurrent_calls)?,
        confirmations_per_call: key!("plugins.*.limits.confirmations_per_call")
            .u32(l.confirmations_per_call)?,
        log_messages_per_call: key!("plugins.*.limits.log_messages_per_call")
            .u32(l.log_messages_per_call)?,
        log_bytes_per_call: key!("plugins.*.limits.log_bytes_per_call")
            .u64(l.log_bytes_per_call)?,
        wasm_bytes: key!("plugins.*.limits.wasm_bytes").u64(l.wasm_bytes)?,
        compile_timeout: key!("plugins.*.limits.compile_timeout_secs")
            .secs_f64(l.compile_timeout_secs)?,
        tools_per_component: key!("plugins.*.limits.tools_per_component")
            .u32(l.tools_per_component)?,
        definition_bytes: key!("plugins.*.limits.definition_bytes").u64(l.definition_bytes)?,
        schema_bytes: key!("plugins.*.limits.schema_bytes").u64(l.schema_bytes)?,
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
    if prefix.is_empty() || joined.len() > MAX_PREFIX_BYTES || !crate::names::is_valid_name(&joined)
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

/// The `host.audit*` keys; `None` without `host.audit`.
pub(super) fn resolve_audit(host: &RawHost) -> Result<Option<AuditSettings>> {
    let Some(path) = &host.audit else {
        if host.audit_arguments
            || host.audit_max_bytes.is_some()
            || host.audit_keep.is_some()
            || host.audit_refused_per_window.is_some()
            || host.audit_refused_window_secs.is_some()
        {
            bail!(
                "`host.audit_arguments`, `host.audit_max_bytes`, `host.audit_keep`, \
                 `host.audit_refused_per_window` and `host.audit_refused_window_secs` need \
                 `host.audit`, the audit trail's file, e.g. audit = \"/var/log/toolhost/audit.jsonl\""
            );
        }
        return Ok(None);
    };
    if path.as_os_str().is_empty() {
        bail!("`host.audit` is empty; name the audit trail's file, or leave the key out");
    }
    Ok(Some(AuditSettings {
        path: path.clone(),
        arguments: host.audit_arguments,
        max_bytes: key!("host.audit_max_bytes").u64(host.audit_max_bytes)?,
        keep: key!("host.audit_keep").u32(host.audit_keep)?,
        refused_per_window: key!("host.audit_refused_per_window")
            .u64(host.audit_refused_per_window)?,
        refused_window: std::time::Duration::from_secs(
            key!("host.audit_refused_window_secs").u64(host.audit_refused_window_secs)?,
        ),
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

/// Resolves `[oci]`.
pub(super) fn resolve_oci(raw: RawOci) -> Result<OciSettings> {
    Ok(OciSettings {
        trusted_keys: raw.trusted_keys.into_iter().map(Into::into).collect(),
        require_signature: raw
            .require_signature
            .unwrap_or(key!("oci.require_signature").default_bool()),
        max_manifest_bytes: key!("oci.max_manifest_bytes").u64(raw.max_manifest_bytes)?,
        max_blob_bytes: key!("oci.max_blob_bytes").u64(raw.max_blob_bytes)?,
        max_signatures: key!("oci.max_signatures").u64(raw.max_signatures)?,
        pull_timeout: key!("oci.pull_timeout_secs").secs(raw.pull_timeout_secs)?,
        token_hosts: raw.token_hosts,
        store_dir: raw.store_dir,
        default_store_dir: crate::cache::CompileCache::default_dir()
            .map(|d| d.with_file_name("toolhost-oci")),
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
        self.oci
            .trusted_keys
            .iter_mut()
            .for_each(|k| absolute(&mut k.path));
        if let Some(store) = &mut self.oci.store_dir {
            absolute(store);
        }
        for block in self.trust.values_mut() {
            block
                .trusted_keys
                .iter_mut()
                .for_each(|k| absolute(&mut k.path));
        }
        if let Some(audit) = &mut self.audit {
            absolute(&mut audit.path);
        }
        if let Some(dir) = &mut self.secrets_dir {
            absolute(dir);
        }
    }
}

/// Reading a number through its row of the table: the value as written,
/// checked against the row's range, or the row's default when the key is
/// absent. An error names the key as [`Key::name`] does and gives the range
/// and unit, e.g. ``limits.memory_mib` must be between 1 and 4096 (MiB), not
/// 17592186044417``. Which method a key takes follows its raw field's type;
/// a row of the other kind (a whole-number key with a fractional range) is
/// a mistake in the table, and panics on the first load, as every test's
/// `Config::default()` is one.
impl Key {
    /// A whole number.
    pub(crate) fn u64(&self, value: Option<u64>) -> Result<u64> {
        let Some(value) = value else {
            return Ok(self.default_int());
        };
        let (min, max) = match self.range {
            Some(Range {
                min: Number::Int(min),
                max: Number::Int(max),
                ..
            }) => (min, max),
            _ => panic!("`{}` has no whole-number range in config::keys", self.path),
        };
        self.check(value, min, max)
    }

    /// A whole number written as a `u32`.
    pub(crate) fn u32(&self, value: Option<u32>) -> Result<u32> {
        let value = self.u64(value.map(u64::from))?;
        // A value written is a `u32` already; a default that is not fails
        // the first `Config::default()`.
        Ok(u32::try_from(value).expect("a u32 key's default fits a u32"))
    }

    /// A number with a fraction.
    pub(crate) fn f64(&self, value: Option<f64>) -> Result<f64> {
        let Some(value) = value else {
            return Ok(self.default_float());
        };
        let (min, max) = match self.range {
            Some(Range {
                min: Number::Float(min),
                max: Number::Float(max),
                ..
            }) => (min, max),
            _ => panic!("`{}` has no fractional range in config::keys", self.path),
        };
        self.check(value, min, max)
    }

    /// Whole seconds.
    pub(crate) fn secs(&self, value: Option<u64>) -> Result<Duration> {
        self.u64(value).map(Duration::from_secs)
    }

    /// Seconds with a fraction. The range keeps `Duration::from_secs_f64`
    /// from panicking (NaN, infinite, past `u64::MAX` seconds).
    pub(crate) fn secs_f64(&self, value: Option<f64>) -> Result<Duration> {
        self.f64(value).map(Duration::from_secs_f64)
    }

    /// `value` if it lies between `min` and `max`, else an error naming the
    /// key, the range and its unit.
    fn check<T: PartialOrd + Copy + std::fmt::Display>(
        &self,
        value: T,
        min: T,
        max: T,
    ) -> Result<T> {
        // `!(a <= b)` rather than `a > b`, so that NaN fails too.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let outside = !(min <= value && value <= max);
        if outside {
            let unit = self.range.map_or("", |r| r.unit);
            bail!(
                "`{}` must be between {min} and {max} ({unit}), not {value}",
                self.name()
            );
        }
        Ok(value)
    }
}
