//! What the measurements share: the binaries, the built components, the
//! StatusPro sandbox, a `toolhost.toml` pointing the StatusPro tools at it,
//! and fresh plugin and cache directories under the work directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use statuspro_sandbox::{ApiSandbox as _, Sandbox, SandboxConfig};

use crate::session::Launch;

/// The nine StatusPro tools (`/work/shared/statuspro.md`, section 5).
pub const STATUSPRO_TOOLS: [&str; 9] = [
    "list_orders",
    "get_order",
    "lookup_order",
    "list_statuses",
    "get_viable_statuses",
    "update_order_status",
    "add_order_comment",
    "update_order_due_date",
    "bulk_update_order_status",
];

/// Where compiled components go for one toolhost start.
#[derive(Debug, Clone)]
pub enum Cache {
    /// `--cache-dir DIR`.
    Dir(PathBuf),
    /// `--no-cache`: compile every component.
    Off,
}

/// Which compile-cache flags `toolhost serve --help` lists.
#[derive(Debug, Clone, Copy)]
pub struct CacheFlags {
    /// `--cache-dir DIR` exists.
    pub cache_dir: bool,
    /// `--no-cache` exists.
    pub no_cache: bool,
}

/// Everything the measurements need.
pub struct Fixture {
    /// The release `toolhost` binary.
    pub toolhost: PathBuf,
    /// The release `native-echo` binary.
    pub native_echo: PathBuf,
    /// `target/components`, as `cargo xtask build-plugins` fills it.
    pub components: PathBuf,
    /// Scratch space for this run (emptied at start).
    pub scratch: PathBuf,
    /// The StatusPro components found, sorted.
    pub statuspro: Vec<PathBuf>,
    /// What the host's command line supports.
    pub flags: CacheFlags,
    /// The StatusPro sandbox, on loopback, rate limits lifted.
    pub sandbox: Sandbox,
    /// `toolhost.toml` for every toolhost start.
    pub config: PathBuf,
}

impl Fixture {
    /// Checks the inputs, empties `scratch`, starts the sandbox and writes
    /// the config.
    pub async fn new(
        toolhost: PathBuf,
        native_echo: PathBuf,
        components: PathBuf,
        scratch: PathBuf,
    ) -> Result<Fixture> {
        for (what, path) in [("toolhost", &toolhost), ("native-echo", &native_echo)] {
            if !path.is_file() {
                bail!(
                    "{what} binary not found at {}; `cargo xtask bench` builds it",
                    path.display()
                );
            }
        }
        for name in ["echo", "hello"] {
            let path = components.join(format!("{name}.wasm"));
            if !path.is_file() {
                bail!(
                    "{} is missing; build the components with `cargo xtask build-plugins`",
                    path.display()
                );
            }
        }
        if scratch.exists() {
            std::fs::remove_dir_all(&scratch)
                .with_context(|| format!("cannot empty {}", scratch.display()))?;
        }
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("cannot create {}", scratch.display()))?;

        let mut statuspro: Vec<PathBuf> = std::fs::read_dir(&components)
            .with_context(|| format!("cannot read {}", components.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("statuspro_") && n.ends_with(".wasm"))
            })
            .collect();
        statuspro.sort();

        let flags = cache_flags(&toolhost)?;
        let sandbox = statuspro_sandbox::start(SandboxConfig {
            // The benchmark makes thousands of requests; the real limit (60
            // a minute) would turn them into 429s.
            rate_limit_per_minute: 10_000_000,
            ..SandboxConfig::default()
        })
        .await
        .context("cannot start the StatusPro sandbox")?;
        let config = scratch.join("toolhost.toml");
        std::fs::write(&config, config_text(&sandbox))
            .with_context(|| format!("cannot write {}", config.display()))?;
        Ok(Fixture {
            toolhost,
            native_echo,
            components,
            scratch,
            statuspro,
            flags,
            sandbox,
            config,
        })
    }

    /// Why the StatusPro measurements cannot run, if they cannot.
    pub fn statuspro_missing(&self) -> Option<String> {
        self.statuspro
            .is_empty()
            .then(|| format!("statuspro_*.wasm missing in {}", self.components.display()))
    }

    /// The built component `name` (`echo`, `hello`, …).
    pub fn component(&self, name: &str) -> PathBuf {
        self.components.join(format!("{name}.wasm"))
    }

    /// A fresh directory `scratch/name`.
    pub fn fresh_dir(&self, name: &str) -> Result<PathBuf> {
        let dir = self.scratch.join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot empty {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(dir)
    }

    /// A fresh plugin directory `scratch/name` holding copies of `files`.
    pub fn plugin_dir(&self, name: &str, files: &[PathBuf]) -> Result<PathBuf> {
        let dir = self.fresh_dir(name)?;
        for file in files {
            let to = dir.join(file.file_name().context("a component has a file name")?);
            std::fs::copy(file, &to)
                .with_context(|| format!("cannot copy {} to {}", file.display(), to.display()))?;
        }
        Ok(dir)
    }

    /// The benchmark's config with `change` made, written as
    /// `scratch/LABEL.toml`; its path.
    pub fn config_with(&self, label: &str, change: &ConfigChange) -> Result<PathBuf> {
        let text = std::fs::read_to_string(&self.config)?;
        let text = text.replacen("[host]\n", &format!("[host]\n{}", change.host_keys), 1);
        let path = self.scratch.join(format!("{label}.toml"));
        std::fs::write(&path, format!("{text}\n{}", change.tables))
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }

    /// `toolhost serve` on `plugins` with the benchmark's config and `cache`
    /// (ignored, with the host's default, when the host has no cache flags).
    pub fn toolhost(&self, label: &str, plugins: &Path, cache: &Cache) -> Launch {
        self.toolhost_with_config(label, plugins, cache, &self.config)
    }

    /// [`Fixture::toolhost`] reading `config` instead of the benchmark's.
    pub fn toolhost_with_config(
        &self,
        label: &str,
        plugins: &Path,
        cache: &Cache,
        config: &Path,
    ) -> Launch {
        let mut launch = Launch::new(label, &self.toolhost)
            .arg("serve")
            .arg("--plugins")
            .arg(plugins)
            .arg("--config")
            .arg(config)
            .env("STATUSPRO_API_KEY", self.sandbox.api_key());
        match cache {
            Cache::Dir(dir) if self.flags.cache_dir => {
                launch = launch.arg("--cache-dir").arg(dir);
            }
            Cache::Off if self.flags.no_cache => launch = launch.arg("--no-cache"),
            _ => {}
        }
        launch
    }

    /// The native rmcp echo server.
    pub fn native_echo(&self) -> Launch {
        Launch::new("native rmcp", &self.native_echo)
    }

    /// [`Fixture::toolhost`] serving Streamable HTTP on a loopback port it
    /// picks (`--http 127.0.0.1:0`).
    pub fn toolhost_http(&self, label: &str, plugins: &Path, cache: &Cache) -> Launch {
        self.toolhost(label, plugins, cache)
            .arg("--http")
            .arg("127.0.0.1:0")
    }

    /// The native rmcp echo server over Streamable HTTP, on a loopback port
    /// it picks.
    pub fn native_echo_http(&self) -> Launch {
        Launch::new("native rmcp HTTP", &self.native_echo)
            .arg("--http")
            .arg("127.0.0.1:0")
    }
}

/// Reads `toolhost serve --help` for the compile-cache flags.
fn cache_flags(toolhost: &Path) -> Result<CacheFlags> {
    let output = Command::new(toolhost)
        .args(["serve", "--help"])
        .output()
        .with_context(|| format!("cannot run {} serve --help", toolhost.display()))?;
    let help = String::from_utf8_lossy(&output.stdout);
    Ok(CacheFlags {
        cache_dir: help.contains("--cache-dir"),
        no_cache: help.contains("--no-cache"),
    })
}

/// The benchmark's `toolhost.toml`: the StatusPro tools may read the
/// sandbox, with its key injected by the host (as `cargo xtask demo` does).
/// Over HTTP, every client of the benchmark is the same caller (no auth on
/// loopback), and the throughput rows open up to 256 sessions at once (and
/// more over a row, as closed ones expire), each with its event stream and
/// a call in flight: the per-caller bounds are raised above that, so the
/// rows measure calls, not the flood protection.
fn config_text(sandbox: &Sandbox) -> String {
    format!(
        "# Written by toolhost-bench: StatusPro tools against the local sandbox.\n\
         [host]\nconfirmation = \"deny\"\n\n\
         [http]\nrequests_per_identity = 1024\nstreams_per_identity = 1024\nsessions_per_identity = 4096\n\n{}",
        sandbox.toolhost_config(&["GET", "POST"])
    )
}

/// A change to the benchmark's config for one server: keys added to
/// `[host]`, tables added at the end.
#[derive(Debug, Clone, Default)]
pub struct ConfigChange {
    /// Lines added to `[host]`, e.g. `audit = "…"\n`.
    pub host_keys: String,
    /// Tables appended, e.g. `[state]\n…`.
    pub tables: String,
}

impl ConfigChange {
    /// Only `tables` appended.
    pub fn tables(tables: String) -> ConfigChange {
        ConfigChange {
            host_keys: String::new(),
            tables,
        }
    }

    /// Only `host_keys` added to `[host]`.
    pub fn host(host_keys: String) -> ConfigChange {
        ConfigChange {
            host_keys,
            tables: String::new(),
        }
    }
}
