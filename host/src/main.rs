//! The `toolhost` command line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use toolhost::cache::CacheSetting;
use toolhost::call::CallEnv;
use toolhost::config::Config;
use toolhost::plugin::Loader;
use toolhost::registry::Registry;

/// An MCP gateway that runs every tool as a sandboxed WebAssembly component.
#[derive(Parser)]
#[command(name = "toolhost", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the plugin directory's tools to an MCP client over stdio, or
    /// to many clients over Streamable HTTP (`--http`).
    ///
    /// The directory is watched: copy a component in and its tools appear,
    /// replace it and they change, delete it and they go; clients are told.
    /// So is the `--config` file: a valid edit applies without a restart.
    Serve {
        #[command(flatten)]
        plugins: PluginArgs,
        /// Do not watch the plugin directory or the config file for changes.
        #[arg(long)]
        no_watch: bool,
        /// Serve MCP over Streamable HTTP at `http://ADDR/mcp` instead of
        /// stdio (overrides `host.http`), e.g. `127.0.0.1:8080`. Only
        /// loopback addresses may go without `[auth]`.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Serve only the profile NAME (`[[profiles]]` in the config file)
        /// on stdio. Over HTTP every profile is served at `/mcp/NAME`.
        #[arg(long, value_name = "NAME", conflicts_with = "http")]
        profile: Option<String>,
    },
    /// Print the tools a plugin directory provides, as a table: the name
    /// each is served under (with its block's `prefix`) and the
    /// component's own name; then the resources, resource templates and
    /// prompts its 0.2 components offer, if any.
    List(PluginArgs),
    /// Load a component and lint its tools (and its resources, templates
    /// and prompts) against the design guidelines; exits non-zero on
    /// errors.
    Check {
        /// The component file.
        file: PathBuf,
        /// Where to keep compiled components, so the next check of the
        /// same bytes skips compilation. Default: as for `serve`.
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Compile the component; keep nothing on disk.
        #[arg(long, conflicts_with = "cache_dir")]
        no_cache: bool,
    },
    /// Call one tool from the terminal through the same path as `serve`,
    /// and print the result. Confirmations are asked on the terminal
    /// (y/N), and a tool's form field by field; without a terminal they
    /// are shown and declined.
    Call {
        /// The tool's name.
        tool: String,
        /// Its arguments, a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Also print what the call cost (CPU, wall time by part, peak
        /// memory, epoch ticks, upstream requests, bytes, hosts, a limit
        /// hit) as JSON on stderr.
        #[arg(long)]
        cost: bool,
        #[command(flatten)]
        plugins: PluginArgs,
    },
    /// Create a tool component crate that builds and passes `check`.
    New {
        /// The crate's name, e.g. `weather-tools`.
        name: String,
        /// Where to create it.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// A toolhost-sdk checkout to depend on. Default: the SDK this
        /// binary carries, written into the crate's `vendor/toolhost-sdk`.
        #[arg(long, value_name = "PATH")]
        sdk: Option<PathBuf>,
    },
    /// Write the WIT contract this binary carries: for each version, a WIT
    /// directory in the standard `deps/` layout (`DIR/VERSION/`) and the
    /// package encoded for a package registry
    /// (`DIR/toolhost-plugin-VERSION.wasm`, for `toolhost push`).
    Wit {
        /// Where to write.
        #[arg(long, default_value = "wit")]
        out: PathBuf,
    },
    /// Publish a component to an OCI registry (Wasm OCI artifact layout);
    /// prints the manifest digest.
    Push {
        /// The component file.
        file: PathBuf,
        /// Where to publish it: REGISTRY/REPOSITORY:TAG (`oci://` optional).
        reference: String,
        /// Sign it with this private key (PEM, P-256), in cosign's format.
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
        /// Configuration file: `[oci]` (`token_hosts`, the hosts whose
        /// token service may receive the registry's credentials).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Fetch a component from an OCI registry, verify it and install it
    /// into the plugin directory (write, then rename).
    Pull {
        /// REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST.
        reference: String,
        /// The plugin directory to install into.
        #[arg(long, value_name = "DIR")]
        plugins: PathBuf,
        /// Configuration file: trust policy (`[oci]`, per-plugin
        /// `trusted_keys`), size bounds, content store.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Trust signatures by this public key (PEM), besides the config's.
        #[arg(long = "key", value_name = "KEY")]
        keys: Vec<PathBuf>,
        /// Install even without a trusted signature.
        #[arg(long)]
        allow_unsigned: bool,
    },
    /// Resolve the tags of the config's `components` again, install what
    /// changed, and show the difference from the lock file.
    Update {
        /// The plugin directory to install into.
        #[arg(long, value_name = "DIR")]
        plugins: PathBuf,
        /// The configuration file whose `components` are updated; the lock
        /// file is beside it.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
    },
    /// Operator tools for `[[policy.rules]]`.
    Policy {
        /// What to do.
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Print the audit trail (`host.audit`) as a table: time, caller, tool
    /// (or a resource read's, prompt get's or completion's kind and
    /// target), confirmation, upstream requests, result, duration. Rotated
    /// files are read too, oldest first.
    Audit {
        /// The audit file.
        #[arg(
            long,
            value_name = "PATH",
            conflicts_with = "config",
            required_unless_present_any = ["config", "verify"]
        )]
        file: Option<PathBuf>,
        /// The configuration file whose `host.audit` names the file.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Only calls since then: an RFC 3339 time or a duration back
        /// from now (`90s`, `15m`, `1h`, `2days`).
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Only calls of this tool (its served name), or reads, gets and
        /// completions of this target (a resource URI, a URI template, a
        /// prompt's served name).
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
        /// Only calls by this caller, as the table shows it
        /// (`token:alice`, `jwt:…`, `http`, `stdio`, `cli`).
        #[arg(long, value_name = "CALLER")]
        caller: Option<String>,
        /// Only records from this address or block (`203.0.113.9`,
        /// `10.0.0.0/8`): calls over HTTP and approval decisions; records
        /// without an address (stdio, `toolhost call`, suppressed counts)
        /// are left out.
        #[arg(long, value_name = "ADDRESS")]
        client: Option<String>,
        /// Check the trail's hash chain instead (the file named here, or by
        /// --file or --config, and its rotated files): the first break,
        /// with its line, and exit 1; or how many records it holds.
        #[arg(long, value_name = "PATH", num_args = 0..=1, conflicts_with_all = ["since", "tool", "caller", "client"])]
        verify: Option<Option<PathBuf>>,
    },
    /// Compile the components sent on stdin and answer on stdout: the
    /// child process a load compiles in (ADR 0058), started by toolhost
    /// itself, never by hand.
    #[command(hide = true)]
    CompileWorker {
        /// The memory it may allocate, in MiB (`host.compile_memory_mib`).
        #[arg(long, value_name = "MIB")]
        memory_mib: Option<u64>,
    },
}

/// `toolhost policy …`.
#[derive(Subcommand)]
enum PolicyCommand {
    /// Print what the config's `[[policy.rules]]` decide for one request,
    /// and the rule that decides (nothing runs, no limit is counted): a
    /// tools/call (`--call TOOL [ARGS]`), a resources/read (`--read URI`)
    /// or a prompts/get (`--prompt NAME [ARGS]`).
    Test {
        /// The plugin directory and the configuration.
        #[command(flatten)]
        plugins: PluginArgs,
        /// The caller, as JSON: `{"source": "jwt", "subject": "alice",
        /// "scopes": ["orders:write"], "claims": {"groups": ["support"]}}`
        /// (`source` is `jwt` or `token`). Without it: the stdio caller.
        #[arg(long, value_name = "JSON")]
        identity: Option<String>,
        /// A tools/call of TOOL with the arguments ARGS (a JSON object).
        #[arg(long, num_args = 1..=2, value_names = ["TOOL", "ARGS"], conflicts_with_all = ["read", "prompt"])]
        call: Option<Vec<String>>,
        /// A resources/read of URI.
        #[arg(long, value_name = "URI", conflicts_with = "prompt")]
        read: Option<String>,
        /// A prompts/get of PROMPT with the arguments ARGS (a JSON object).
        #[arg(long, num_args = 1..=2, value_names = ["PROMPT", "ARGS"])]
        prompt: Option<Vec<String>>,
    },
}

/// What installing the config's OCI components verified: each file's
/// component bytes (SHA-256, hex), and the key file that verified each
/// signed one, by file name.
type Verified = (BTreeMap<String, String>, BTreeMap<String, String>);

#[derive(clap::Args)]
struct PluginArgs {
    /// Directory of tool components (`*.wasm`).
    #[arg(long, value_name = "DIR")]
    plugins: PathBuf,
    /// Configuration file (toolhost.toml): network policy, credentials,
    /// settings and limits per plugin. Without it, plugins reach nothing.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where to keep compiled components, so restarts skip compilation.
    /// Default: $XDG_CACHE_HOME/toolhost or ~/.cache/toolhost.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile every component at start; keep nothing on disk.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
}

impl PluginArgs {
    /// Installs the config's `oci://` components into the plugin directory
    /// (from the content store, or the registry for what it lacks), pinning
    /// tags in the lock file. A component that cannot be installed is an
    /// error in the log; the others still serve.
    /// Returns the bytes verified for each component file (only those
    /// load: a file whose install was refused is not served) and the key
    /// that verified each signed one.
    async fn install_components(&self, config: &Config) -> Result<Verified> {
        let Some(path) = &self.config else {
            return Ok(Verified::default());
        };
        let lock = toolhost::oci::LockFile::path_for(path);
        match config.install_components(&lock, &self.plugins, false).await {
            Ok(installs) => {
                for (reference, error) in installs.failures {
                    tracing::error!("{reference} was not installed: {error}");
                }
                Ok((installs.verified, installs.signers))
            }
            // The store or the lock file cannot be used: nothing was
            // verified, so no component file is served; the rest of the
            // plugin directory is.
            Err(e) => {
                tracing::error!("no OCI component was installed: {e}");
                Ok(Verified::default())
            }
        }
    }

    async fn load(&self) -> Result<(CallEnv, Loader, Registry)> {
        let loader = self.loader(self.read_config()?).await?;
        let registry = toolhost::reload::dir::load_dir(&loader, &self.plugins).await?;
        let env = CallEnv {
            runtime: loader.runtime.clone(),
            http: loader.http.clone(),
        };
        Ok((env, loader, registry))
    }

    /// As [`PluginArgs::load`], for calling `tool`: with the compile cache's
    /// tool index, only the file that serves it is read and compiled; when
    /// the index cannot tell (or was wrong), the whole directory, and the
    /// index learns from it.
    async fn load_for(&self, tool: &str) -> Result<(CallEnv, Loader, Registry)> {
        use toolhost::reload::index::{ToolIndex, only};
        let loader = self.loader(self.read_config()?).await?;
        let env = CallEnv {
            runtime: loader.runtime.clone(),
            http: loader.http.clone(),
        };
        let cache_dir = loader.cache.as_ref().map(|c| c.dir().to_path_buf());
        let index = cache_dir.as_deref().map(ToolIndex::read);
        if let Some(file) = index
            .as_ref()
            .and_then(|i| i.file_serving(&self.plugins, &loader.config, tool))
        {
            let registry =
                toolhost::reload::dir::load_files(&loader, &self.plugins, only(file)).await?;
            if registry.tool(tool).is_some() {
                return Ok((env, loader, registry));
            }
        }
        let registry = toolhost::reload::dir::load_dir(&loader, &self.plugins).await?;
        if let (Some(dir), Some(index)) = (cache_dir, index) {
            index.record(&dir, &registry);
        }
        Ok((env, loader, registry))
    }

    /// The config file (`--config`), or the defaults without one.
    fn read_config(&self) -> Result<Config> {
        Ok(match &self.config {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        })
    }

    /// The loader for `config`, after installing its `oci://` components
    /// ([`PluginArgs::install_components`]).
    async fn loader(&self, config: Config) -> Result<Loader> {
        let verified = self.install_components(&config).await?;
        self.loader_verified(config, verified)
    }

    /// The loader for `config` with `verified` component files and their
    /// signers.
    fn loader_verified(&self, mut config: Config, (verified, signers): Verified) -> Result<Loader> {
        config.verified_components = verified;
        config.component_signers = signers;
        let cache = if self.no_cache {
            CacheSetting::Off
        } else {
            match &self.cache_dir {
                Some(dir) => CacheSetting::Dir(dir.clone()),
                None => CacheSetting::Default,
            }
        };
        let loader = Loader::from_config(config, cache.open())?;
        // Each load compiles in a child process that ends with it, so the
        // compiler's memory goes back (ADR 0058), within
        // `host.compile_memory_mib`.
        loader.compile_in(loader.config.compile_worker()?);
        Ok(loader)
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if let Command::CompileWorker { memory_mib } = cli.command {
        // No log, no runtime: stdout carries the answers, stderr a
        // failure's message.
        return toolhost::compiler::serve_compilations(
            std::io::stdin().lock(),
            std::io::stdout(),
            memory_mib.map(|mib| mib << 20),
        );
    }
    // stdout carries the protocol; every log line goes to stderr. A server
    // never waits for stderr (lines are dropped when nobody reads them);
    // the guard, dropped after the runtime, flushes what is queued.
    let mut serve_config = None;
    let _log = match &cli.command {
        Command::Serve { plugins, .. } => {
            // `[telemetry]` is read before the log starts: the span
            // exporter is a layer of the log's subscriber. The config is
            // read once, here, and used for the rest of the start.
            let config = plugins.read_config()?;
            let guard = toolhost::logging::init_serving(config.telemetry.as_ref())?;
            serve_config = Some(config);
            Some(guard)
        }
        _ => {
            toolhost::logging::init_interactive();
            None
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Serve {
                plugins,
                no_watch,
                http,
                profile,
            } => {
                let config = match serve_config {
                    Some(config) => config,
                    None => plugins.read_config()?,
                };
                let loader = plugins.loader(config).await?;
                let options = toolhost::serve::ServeOptions {
                    dir: plugins.plugins.clone(),
                    watch: !no_watch,
                    http,
                    profile,
                };
                toolhost::serve::serve(loader, options).await
            }
            Command::List(args) => {
                let (_, _, registry) = args.load().await?;
                print_table(&registry);
                Ok(())
            }
            Command::Check {
                file,
                cache_dir,
                no_cache,
            } => check(&file, cache_dir, no_cache).await,
            Command::Policy {
                command:
                    PolicyCommand::Test {
                        plugins,
                        identity,
                        call,
                        read,
                        prompt,
                    },
            } => policy_test(&plugins, identity.as_deref(), (call, read, prompt)).await,
            Command::Call {
                tool,
                arguments,
                cost,
                plugins,
            } => call(&plugins, &tool, &arguments, cost).await,
            Command::New { name, dir, sdk } => {
                let created = toolhost::scaffold::create(&dir, &name, sdk.as_deref())?;
                eprintln!(
                    "created {}\nbuild it:  cd {} && cargo build --target wasm32-wasip2 --release",
                    created.display(),
                    created.display()
                );
                Ok(())
            }
            Command::Wit { out } => {
                for written in toolhost::wit::write(&out)? {
                    println!(
                        "toolhost:plugin@{}\t{}\t{}",
                        written.version,
                        written.dir.display(),
                        written.package.display()
                    );
                }
                Ok(())
            }
            Command::Push {
                file,
                reference,
                sign,
                config,
            } => {
                let reference = toolhost::oci::ComponentRef::parse(&reference)?;
                let settings = match config {
                    Some(path) => Config::load(&path)?,
                    None => Config::default(),
                };
                let settings = settings.oci.client_settings();
                let digest = toolhost::oci::push(&file, &reference, sign.as_deref(), &settings)
                    .await
                    .with_context(|| format!("cannot push {}", file.display()))?;
                println!("{digest}");
                eprintln!(
                    "pushed {} as {reference}{}",
                    file.display(),
                    if sign.is_some() { ", signed" } else { "" }
                );
                Ok(())
            }
            Command::Pull {
                reference,
                plugins,
                config,
                keys,
                allow_unsigned,
            } => {
                pull(
                    &reference,
                    &plugins,
                    config.as_deref(),
                    &keys,
                    allow_unsigned,
                )
                .await
            }
            Command::Audit {
                file,
                config,
                verify: Some(named),
                ..
            } => verify_audit(named.or(file), config),
            Command::Audit {
                file,
                config,
                since,
                tool,
                caller,
                client,
                verify: None,
            } => audit(
                file,
                config,
                toolhost::audit::Filter {
                    since: since
                        .map(|s| toolhost::audit::parse_since(&s, chrono::Utc::now()))
                        .transpose()?,
                    tool,
                    caller,
                    client: client
                        .map(|c| toolhost::audit::parse_client(&c))
                        .transpose()?,
                },
            ),
            Command::CompileWorker { .. } => unreachable!("answered before the runtime starts"),
            Command::Update { plugins, config } => {
                let settings = Config::load(&config)?;
                if settings.components.is_empty() {
                    anyhow::bail!(
                        "{} names no `components` (oci://…) to update",
                        config.display()
                    );
                }
                let lock = toolhost::oci::LockFile::path_for(&config);
                let toolhost::oci::Installs {
                    updates, failures, ..
                } = settings.install_components(&lock, &plugins, true).await?;
                for update in &updates {
                    match &update.before {
                        Some(before) if *before == update.after => {
                            println!("{}: unchanged ({})", update.reference, update.after)
                        }
                        Some(before) => {
                            println!("{}: {before} -> {}", update.reference, update.after)
                        }
                        None => println!("{}: pinned {}", update.reference, update.after),
                    }
                }
                for (reference, error) in &failures {
                    eprintln!("error: {reference}: {error}");
                }
                if !failures.is_empty() {
                    std::process::exit(1);
                }
                Ok(())
            }
        }
    })
}

/// `toolhost audit --verify`: "N records, chain intact", or the first
/// break and exit 1.
fn verify_audit(file: Option<PathBuf>, config: Option<PathBuf>) -> Result<()> {
    let path = audit_path(file, config)?;
    match toolhost::audit::verify(&path)? {
        Ok(report) => {
            for note in &report.notes {
                println!("note: {note}");
            }
            println!(
                "{} records in {} file(s), chain intact; last line sha256 {}",
                report.records,
                report.files.len(),
                report.head.as_deref().unwrap_or("-")
            );
            Ok(())
        }
        Err(broken) => {
            eprintln!("error: the audit trail's chain is broken: {broken}");
            std::process::exit(1);
        }
    }
}

/// `toolhost audit`.
fn audit(
    file: Option<PathBuf>,
    config: Option<PathBuf>,
    filter: toolhost::audit::Filter,
) -> Result<()> {
    let path = audit_path(file, config)?;
    let records = toolhost::audit::read_trail(&path)?;
    toolhost::audit::print_table(&records, &filter, &mut std::io::stdout().lock())?;
    Ok(())
}

/// The trail `toolhost audit` reads: `--file`, or `--config`'s `host.audit`.
fn audit_path(file: Option<PathBuf>, config: Option<PathBuf>) -> Result<PathBuf> {
    Ok(match (file, config) {
        (Some(file), _) => file,
        (None, Some(config)) => {
            let Some(audit) = Config::load_audit(&config)? else {
                anyhow::bail!(
                    "{} sets no `host.audit`; there is no audit trail to show",
                    config.display()
                );
            };
            audit.path
        }
        (None, None) => anyhow::bail!("name the audit trail: --file PATH or --config FILE"),
    })
}

/// `toolhost pull REF --plugins DIR`.
async fn pull(
    reference: &str,
    plugins: &std::path::Path,
    config: Option<&std::path::Path>,
    keys: &[PathBuf],
    allow_unsigned: bool,
) -> Result<()> {
    let reference = toolhost::oci::ComponentRef::parse(reference)?;
    // Before the registry is contacted: a missing directory is named, not
    // a file in it after the download.
    if let Err(e) = toolhost::oci::check_plugin_directory(plugins) {
        eprintln!("error: {reference} was not installed: {e}");
        std::process::exit(1);
    }
    let config = match config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let installer = toolhost::oci::Installer::new(&config.oci)?;
    let mut policy = config.trust_policy(&reference.file_name())?;
    for key in keys {
        policy.keys.push(toolhost::oci::signature::TrustedKey::load(
            &toolhost::oci::signature::KeySpec::new(key),
        )?);
    }
    if allow_unsigned {
        policy.require_signature = false;
    }
    let install = async {
        let digest = installer.resolve(&reference).await?;
        installer
            .install(&reference, &digest, &policy, plugins)
            .await
    };
    let result = toolhost::oci::within_pull_timeout(&config.oci, &reference, install).await;
    match result {
        Ok(installed) => {
            println!("{} {}", installed.digest, installed.path.display());
            Ok(())
        }
        Err(e) => {
            eprintln!("error: {reference} was not installed: {e}");
            std::process::exit(1);
        }
    }
}

/// `toolhost check FILE`, with the compile cache unless `no_cache`.
async fn check(file: &std::path::Path, cache_dir: Option<PathBuf>, no_cache: bool) -> Result<()> {
    let args = PluginArgs {
        plugins: PathBuf::new(),
        config: None,
        cache_dir,
        no_cache,
    };
    let loader = args.loader_verified(args.read_config()?, Verified::default())?;
    let plugin = match loader.load_file(file).await {
        Ok(plugin) => plugin,
        Err(e) => {
            eprintln!("error: {} cannot be loaded: {e}", file.display());
            std::process::exit(1);
        }
    };
    let mut errors = 0;
    let mut warnings = 0;
    // Tools, then what a 0.2 component offers beside them.
    let findings = plugin
        .tools
        .iter()
        .flat_map(|tool| toolhost::lint::lint(tool))
        .chain(
            plugin
                .offers
                .as_deref()
                .map(toolhost::lint::lint_offers)
                .unwrap_or_default(),
        );
    for finding in findings {
        match finding.severity {
            toolhost::lint::Severity::Error => errors += 1,
            toolhost::lint::Severity::Warning => warnings += 1,
        }
        println!("{finding}");
    }
    // Which contract it targets, and what a 0.2 component offers beside
    // tools (ADR 0017).
    let offers = plugin
        .offers
        .as_ref()
        .map(|o| format!(" ({})", o.summary()))
        .unwrap_or_default();
    println!(
        "{}: targets toolhost:plugin@{}{offers}",
        file.display(),
        plugin.contract().version()
    );
    if plugin.asks_forms {
        println!(
            "{}: may ask forms of its own (it imports toolhost:plugin/form@0.3.0): the host refuses a form that asks for a secret \
             (a field whose name, title or description speaks of a password, token, API key, credential, PIN or card number), \
             or that is outside MCP's elicitation subset, and checks every answer against its form",
            file.display()
        );
    }
    println!(
        "{}: {} tools, {errors} errors, {warnings} warnings",
        file.display(),
        plugin.tools.len()
    );
    if errors > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// The request `toolhost policy test` asks about: a call, a read or a
/// prompt get, each as given on the command line.
type PolicyRequest = (Option<Vec<String>>, Option<String>, Option<Vec<String>>);

/// `toolhost policy test`.
async fn policy_test(
    plugins: &PluginArgs,
    identity: Option<&str>,
    (call, read, prompt): PolicyRequest,
) -> Result<()> {
    use toolhost::rules::{Facts, Target};
    let identity = identity
        .map(toolhost::auth::Identity::from_json)
        .transpose()
        .context("--identity")?;
    let arguments = |given: Option<&String>| -> Result<serde_json::Value> {
        match given {
            None => Ok(serde_json::json!({})),
            Some(text) => serde_json::from_str(text)
                .context("the arguments are not valid JSON; pass an object such as '{\"id\":1}'"),
        }
    };
    let (_, loader, registry) = plugins.load().await?;
    let config = &loader.config;
    let (method, plugin, target, arguments) = if let Some(call) = &call {
        let name = &call[0];
        let Some(tool) = registry.tool(name) else {
            anyhow::bail!("no tool named {name:?} in {}", plugins.plugins.display());
        };
        let target = Target::Tool {
            name: &tool.name,
            spec: &tool.spec,
        };
        (
            "tools/call",
            tool.plugin.clone(),
            target,
            arguments(call.get(1))?,
        )
    } else if let Some(uri) = &read {
        let plugin = registry
            .resource(uri)
            .map(|r| r.plugin.clone())
            .or_else(|| {
                registry
                    .templates_for(uri)
                    .next()
                    .map(|(t, _)| t.plugin.clone())
            });
        let Some(plugin) = plugin else {
            anyhow::bail!("nothing in {} serves {uri:?}", plugins.plugins.display());
        };
        let arguments = serde_json::json!({ "uri": uri });
        ("resources/read", plugin, Target::Resource(uri), arguments)
    } else if let Some(prompt) = &prompt {
        let name = &prompt[0];
        let Some(found) = registry.prompt(name) else {
            anyhow::bail!("no prompt named {name:?} in {}", plugins.plugins.display());
        };
        let target = Target::Prompt(&found.key);
        (
            "prompts/get",
            found.plugin.clone(),
            target,
            arguments(prompt.get(1))?,
        )
    } else {
        anyhow::bail!("say which request: --call TOOL [ARGS], --read URI or --prompt NAME [ARGS]");
    };
    let facts = Facts {
        identity: identity.as_ref(),
        transport: if identity.is_some() { "http" } else { "stdio" },
        era: "modern",
        method,
        profile: "",
        plugin: &plugin,
        target,
        arguments: Some(&arguments),
        signer: config.signer_of(&plugin.file),
    };
    println!("{}", config.policy.explain(&facts));
    Ok(())
}

/// `toolhost call TOOL [JSON]`.
/// Keeps the cost a call reports, for `toolhost call --cost`.
#[derive(Default)]
struct CostCell(std::sync::Mutex<Option<toolhost::cost::CallCost>>);

impl toolhost::hooks::CallHooks for CostCell {
    fn finished(&self, cost: &toolhost::cost::CallCost) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(cost.clone());
    }
}

async fn call(plugins: &PluginArgs, tool: &str, arguments: &str, show_cost: bool) -> Result<()> {
    let arguments: serde_json::Value = serde_json::from_str(arguments)
        .context("the arguments are not valid JSON; pass an object such as '{\"name\":\"Ada\"}'")?;
    let (env, loader, registry) = plugins.load_for(tool).await?;
    let Some(found) = registry.tool(tool) else {
        let names: Vec<&str> = registry.tools().map(|t| t.name.as_str()).collect();
        anyhow::bail!(
            "no tool named {tool:?}; the directory has: {}",
            names.join(", ")
        );
    };
    // The trail is locked before the tool runs: when `toolhost serve`
    // writes it, the call is refused, never run unrecorded.
    let log = loader
        .config
        .audit
        .clone()
        .map(toolhost::audit::AuditLog::open)
        .transpose()?;
    let audit = log.map(|log| {
        let context = toolhost::audit::CallContext {
            caller: "cli".to_string(),
            protocol: None,
            session: None,
            client: None,
            via: "terminal",
            // The operator's own terminal: `[[policy.rules]]` decide what
            // MCP clients may do, not what the operator runs by hand.
            policy: None,
        };
        log.start_call(context, &found.plugin, &found.spec, &found.name, &arguments)
    });
    // The metrics, off in `toolhost call`, and the audit record.
    let cost = std::sync::Arc::new(CostCell::default());
    let hooks = std::sync::Arc::new((
        (toolhost::metrics::CallMetrics, audit.clone()),
        cost.clone(),
    ));
    let outcome = toolhost::call::run_call_with_hooks(
        &env,
        &found.plugin,
        &found.spec,
        &arguments,
        Box::new(toolhost::confirmation::Terminal),
        None,
        hooks,
    )
    .await;
    if let Some(audit) = &audit {
        // A failure is logged; the outcome stands.
        let _ = audit
            .finish(toolhost::audit::Ending::Outcome(&outcome))
            .await;
    }
    // On stderr: stdout carries the tool's output alone.
    if show_cost && let Some(cost) = cost.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
        eprintln!("cost: {}", serde_json::to_string_pretty(&cost)?);
    }
    match outcome {
        toolhost::call::CallOutcome::Success(value) => {
            println!("{}", serde_json::to_string_pretty(&value)?);
            Ok(())
        }
        toolhost::call::CallOutcome::Content {
            structured,
            content,
        } => {
            // The terminal shows what each block is; bytes are counted,
            // not printed.
            let blocks: Vec<serde_json::Value> = content.iter().map(block_summary).collect();
            let shown = serde_json::json!({"structured": structured, "content": blocks});
            println!("{}", serde_json::to_string_pretty(&shown)?);
            Ok(())
        }
        toolhost::call::CallOutcome::Failed(issues) => {
            let envelope = serde_json::json!({"ok": false, "result": null, "issues": issues});
            println!("{}", serde_json::to_string_pretty(&envelope)?);
            std::process::exit(1);
        }
        toolhost::call::CallOutcome::InputRequired { .. } => {
            unreachable!("the terminal answers every confirmation")
        }
    }
}

/// One content block of a 0.3 tool's result as `toolhost call` prints it:
/// text in full, media and blobs by MIME type and size.
fn block_summary(block: &toolhost::call::Block) -> serde_json::Value {
    use toolhost::bindings::v0_2::content::Body;
    use toolhost::call::Block;
    match block {
        Block::Text(text) => serde_json::json!({"type": "text", "text": text}),
        Block::Image(m) => {
            serde_json::json!({"type": "image", "mimeType": m.mime_type, "bytes": m.data.len()})
        }
        Block::Audio(m) => {
            serde_json::json!({"type": "audio", "mimeType": m.mime_type, "bytes": m.data.len()})
        }
        Block::Resource(r) => match &r.body {
            Body::Text(text) => serde_json::json!({
                "type": "resource", "uri": r.uri, "mimeType": r.mime_type, "text": text
            }),
            Body::Blob(bytes) => serde_json::json!({
                "type": "resource", "uri": r.uri, "mimeType": r.mime_type, "bytes": bytes.len()
            }),
        },
        Block::ResourceLink(l) => serde_json::json!({
            "type": "resource_link", "uri": l.uri, "name": l.name, "mimeType": l.mime_type
        }),
    }
}

/// Prints a table to stdout.
fn print_rows<const N: usize>(header: [&str; N], rows: &[[String; N]]) {
    // A closed stdout (`toolhost list | head`) ends the table early.
    let _ = toolhost::table::write(&mut std::io::stdout().lock(), header, rows);
}

fn print_table(registry: &Registry) {
    let rows: Vec<[String; 5]> = registry
        .tools()
        .map(|t| {
            let a = &t.spec.annotations;
            let flags = [
                (a.read_only, "read-only"),
                (a.destructive, "destructive"),
                (a.idempotent, "idempotent"),
                (a.open_world, "open-world"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| *name)
            .collect::<Vec<_>>()
            .join(",");
            [
                t.name.clone(),
                t.spec.name.clone(),
                t.spec.title.clone(),
                flags,
                t.plugin.file.clone(),
            ]
        })
        .collect();
    // TOOL is the name clients call (with the block's `prefix`); OWN NAME
    // the component's own.
    let header = ["TOOL", "OWN NAME", "TITLE", "ANNOTATIONS", "FILE"];
    print_rows(header, &rows);
    print_offers(registry);
}

/// The resources, resource templates and prompts served, after the tools
/// (and a blank line), when there are any: what clients see (a URI, a
/// template, a prompt's served name), the component's own name, title and
/// file.
fn print_offers(registry: &Registry) {
    let row = |kind: &str, served: &str, own: &str, title: &Option<String>, file: &str| {
        [
            served.to_string(),
            kind.to_string(),
            own.to_string(),
            title.clone().unwrap_or_default(),
            file.to_string(),
        ]
    };
    let mut rows: Vec<[String; 5]> = Vec::new();
    rows.extend(registry.resources().map(|r| {
        row(
            "resource",
            &r.item.uri,
            &r.item.name,
            &r.item.title,
            &r.plugin.file,
        )
    }));
    rows.extend(registry.templates().map(|t| {
        let d = &t.item.definition;
        row(
            "template",
            &d.uri_template,
            &d.name,
            &d.title,
            &t.plugin.file,
        )
    }));
    rows.extend(registry.prompts().map(|p| {
        row(
            "prompt",
            &p.key,
            &p.item.name,
            &p.item.title,
            &p.plugin.file,
        )
    }));
    if rows.is_empty() {
        return;
    }
    println!();
    print_rows(["OFFER", "KIND", "OWN NAME", "TITLE", "FILE"], &rows);
}
