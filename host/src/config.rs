//! `toolhost.toml`: the operator's configuration, parsed and checked.
//!
//! Parsing is two steps, as ripgrep does with its flags: serde reads the raw
//! file ([`RawConfig`]), then [`Config::from_raw`] resolves it into what the
//! host uses (environment variables read, files read, defaults applied), with
//! errors that name the key and say how to fix it. Every key is documented in
//! `docs/configuration.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::policy::{HostRule, NetworkPolicy};

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
}

/// `[host]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    /// `confirmation`: the policy for clients without elicitation.
    #[serde(default)]
    pub confirmation: NoElicitationPolicy,
    /// `elicitation_timeout_secs`: how long to wait for a user's answer.
    pub elicitation_timeout_secs: Option<u64>,
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
}

/// One `[[plugins.NAME.allow]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAllow {
    /// `host`: an exact name, `*.domain`, or an IP address.
    pub host: String,
    /// `port`: the only port allowed; any port when absent.
    pub port: Option<u16>,
    /// `methods`: allowed methods; all when absent.
    pub methods: Option<Vec<String>>,
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
    /// Where it applies.
    pub host: HostRule,
    /// The header name.
    pub header: String,
    /// The header value.
    pub value: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("host", &self.host)
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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            confirmation: NoElicitationPolicy::Deny,
            elicitation_timeout: Duration::from_secs(300),
            plugins: Vec::new(),
        }
    }
}

impl Config {
    /// Reads and resolves the file at `path`.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the config file {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("in the config file {}", path.display()))
    }

    /// Parses and resolves config text.
    pub fn parse(text: &str) -> Result<Config> {
        let raw: RawConfig = toml::from_str(text)?;
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
        Ok(Config {
            confirmation: raw.host.confirmation,
            elicitation_timeout: Duration::from_secs(
                raw.host.elicitation_timeout_secs.unwrap_or(300),
            ),
            plugins,
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
                allow.port,
                allow.methods.as_deref(),
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
            host: HostRule::parse(&c.host, None, None, false).with_context(at)?,
            header: c.header,
            value,
        });
    }

    let d = Limits::default();
    let l = raw.limits;
    let secs = |v: Option<f64>, default: Duration, key: &str| -> Result<Duration> {
        match v {
            None => Ok(default),
            Some(s) if s > 0.0 && s.is_finite() => Ok(Duration::from_secs_f64(s)),
            Some(s) => bail!("`limits.{key}` must be a positive number of seconds, not {s}"),
        }
    };
    let limits = Limits {
        memory_bytes: l.memory_mib.map(|m| m << 20).unwrap_or(d.memory_bytes),
        call_timeout: secs(l.call_timeout_secs, d.call_timeout, "call_timeout_secs")?,
        output_bytes: l.output_bytes.unwrap_or(d.output_bytes),
        http_body_bytes: l.http_body_bytes.unwrap_or(d.http_body_bytes),
        http_timeout: secs(l.http_timeout_secs, d.http_timeout, "http_timeout_secs")?,
        http_requests_per_call: l.http_requests_per_call.unwrap_or(d.http_requests_per_call),
        concurrent_calls: l.concurrent_calls.unwrap_or(d.concurrent_calls).max(1),
        confirmations_per_call: l.confirmations_per_call.unwrap_or(d.confirmations_per_call),
        wasm_bytes: at_least_one(l.wasm_bytes, d.wasm_bytes, "wasm_bytes")?,
        compile_timeout: secs(
            l.compile_timeout_secs,
            d.compile_timeout,
            "compile_timeout_secs",
        )?,
        tools_per_component: at_least_one(
            l.tools_per_component.map(u64::from),
            d.tools_per_component.into(),
            "tools_per_component",
        )? as u32,
        definition_bytes: at_least_one(l.definition_bytes, d.definition_bytes, "definition_bytes")?,
        schema_bytes: at_least_one(l.schema_bytes, d.schema_bytes, "schema_bytes")?,
    };
    if limits.memory_bytes == 0 || limits.memory_bytes > 4 << 30 {
        bail!("`limits.memory_mib` must be between 1 and 4096");
    }

    Ok(PluginSettings {
        name: name.to_string(),
        files,
        values: raw.config,
        network: NetworkPolicy::new(rules),
        credentials,
        limits,
    })
}

/// A count or size limit: `default` when unset; zero is refused, since it
/// would refuse every component.
fn at_least_one(value: Option<u64>, default: u64, key: &str) -> Result<u64> {
    match value {
        None => Ok(default),
        Some(0) => bail!("`limits.{key}` must be at least 1"),
        Some(v) => Ok(v),
    }
}

/// Replaces each `${VAR}` in `text` with the environment variable `VAR`.
fn expand_env(text: &str) -> Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .with_context(|| format!("unclosed `${{` in {text:?}"))?;
        let var = &after[..end];
        let value = std::env::var(var).with_context(|| {
            format!("the environment variable {var} is not set; export it before starting toolhost")
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn unknown_keys_are_rejected() {
        let err = Config::parse("[plugins.p]\nalow = []\n").unwrap_err();
        assert!(format!("{err:#}").contains("alow"), "{err:#}");
    }
}
