//! Loading one component file into a [`Plugin`]: compile, link, ask it for
//! its tools, and check them.
//!
//! Loading is bounded by the plugin's limits, each named in its error: the
//! file's size (`limits.wasm_bytes`, checked before it is read), compile
//! time (`limits.compile_timeout_secs`), and what listing may return
//! (`limits.tools_per_component`, `limits.definition_bytes`,
//! `limits.schema_bytes`; the bytes wasmtime copies out of the guest's
//! answer are capped by the same limits before anything is checked).
//! Compiling and checking run on the blocking pool, never on the async
//! workers that serve calls.
//!
//! A plugin is immutable once loaded. Replacing the file produces a new
//! `Plugin`; calls already running keep the old one alive until they finish.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};
use thiserror::Error;
use tokio::io::AsyncReadExt;
use tokio::sync::Semaphore;
use wasmtime::component::{Component, InstancePre, Linker};

use crate::bindings::confirm::Outcome;
use crate::bindings::types::ToolDefinition;
use crate::cache::CompileCache;
use crate::compiler::CompileFailure;
use crate::engine::Runtime;
use crate::imports::confirm::FixedAnswer;
use crate::imports::http::HttpClient;
use crate::imports::{CallState, new_store};
use crate::offers::{Contract, OfferLoadError, Offers};
use crate::settings::{Limits, PluginConfig, PluginSettings};
use crate::spec::{SpecError, ToolSpec, check_definitions};

/// A loaded, validated component.
pub struct Plugin {
    /// The file name in the plugin directory, e.g. `hello.wasm`.
    pub file: String,
    /// Where it was loaded from.
    pub path: PathBuf,
    /// SHA-256 of the file's bytes, hex.
    pub digest: String,
    /// The operator's settings that apply to it.
    pub settings: Arc<PluginSettings>,
    /// The component, linked and ready to instantiate.
    pub pre: InstancePre<CallState>,
    /// Where its `tools` export is (0.1's or 0.3's).
    pub(crate) tools_export: ToolsExport,
    /// Whether it imports contract 0.3's `form`: it may ask the user forms
    /// of its own.
    pub asks_forms: bool,
    /// Its tools, in the component's order.
    pub tools: Vec<Arc<ToolSpec>>,
    /// What it offers beside tools: `Some` for a component that targets
    /// `toolhost:plugin@0.2.0` (ADR 0017) or 0.3.0 (ADR 0035), `None` for
    /// 0.1.0.
    pub offers: Option<Arc<Offers>>,
    /// Bounds concurrent calls (`limits.concurrent_calls`), shared by every
    /// file of the plugin's block. A call waiting for a human gives its
    /// permit back until the answer comes.
    pub concurrency: Arc<Semaphore>,
    /// The HTTP client its calls send through, built for the configuration
    /// it was loaded with (its block's `allow_private` rules): a call keeps
    /// it, like the settings, when the configuration is reloaded.
    pub http: HttpClient,
    /// Its names as every call's telemetry repeats them, made once here.
    pub labels: Labels,
}

/// A plugin's names as every call's span and cost metrics carry them: the
/// same strings as [`Plugin`]'s fields, shared, so that a call takes a
/// reference to them instead of copying each (the embedder turns an
/// `Arc<str>` into an attribute value without copying its text).
#[derive(Debug, Clone)]
pub struct Labels {
    /// The plugin's block name (`settings.name`).
    pub block: Arc<str>,
    /// The file name (`file`).
    pub file: Arc<str>,
    /// The SHA-256 of its bytes, hex (`digest`).
    pub digest: Arc<str>,
    /// Its tools' served names, in the component's order.
    pub tools: Vec<Arc<str>>,
}

impl Labels {
    /// The served name `name` as a shared string: one of [`Labels::tools`]
    /// if it is one of them (it is, for every tool the registry serves),
    /// else a copy.
    pub fn tool(&self, name: &str) -> Arc<str> {
        self.tools
            .iter()
            .find(|t| &***t == name)
            .cloned()
            .unwrap_or_else(|| Arc::from(name))
    }
}

/// The import of contract 0.3's forms.
const FORM_IMPORT: &str = "toolhost:plugin/form@0.3.0";

/// Where a component's `tools` export is: 0.1's, whose calls return JSON,
/// or 0.3's, whose calls return content blocks beside it.
pub(crate) enum ToolsExport {
    /// `toolhost:plugin/tools@0.1.0` (0.1 and 0.2 components).
    V0_1(crate::bindings::exports::toolhost::plugin::tools::GuestIndices),
    /// `toolhost:plugin/tools@0.3.0`.
    V0_3(crate::bindings::v0_3::tools::GuestIndices),
}

impl ToolsExport {
    /// Finds the export of the component behind `pre`: 0.3's when it has
    /// it, else 0.1's.
    fn detect(pre: &InstancePre<CallState>) -> wasmtime::Result<ToolsExport> {
        match crate::bindings::v0_3::tools::GuestIndices::new(pre) {
            Ok(v0_3) => Ok(ToolsExport::V0_3(v0_3)),
            Err(_) => Ok(ToolsExport::V0_1(
                crate::bindings::exports::toolhost::plugin::tools::GuestIndices::new(pre)?,
            )),
        }
    }
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("file", &self.file)
            .field("digest", &self.digest)
            .finish_non_exhaustive()
    }
}

/// Why a component file was not loaded. Each says what to do.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Read(#[from] std::io::Error),
    /// Not a valid component for this host.
    #[error(
        "not a valid WebAssembly component (build it for wasm32-wasip2 with toolhost-sdk): {0}"
    )]
    Compile(String),
    /// The process it was compiled in failed: it could not start, or it
    /// ended before answering (ADR 0058). Says nothing of the component.
    #[error(
        "it was not compiled: {0}. Nothing is known of the component yet; it is compiled again \
         at the next reload or restart"
    )]
    CompileProcess(String),
    /// It imports something the host does not provide.
    #[error(
        "it imports something this host does not provide: {0}. A component may import the \
         toolhost:plugin interfaces of contract 0.1.x or 0.2.x, WASI 0.2 (wasi:cli, wasi:clocks, \
         wasi:random, wasi:io; wasi:filesystem and wasi:sockets link but reach nothing) and \
         wasi:http/outgoing-handler (sent under the host's network policy); rebuild it without \
         the import named (`toolhost wit` writes the contract's WIT)"
    )]
    Link(String),
    /// Listing its tools failed.
    #[error("listing its tools failed: {0}")]
    List(String),
    /// A tool definition breaks the rules.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// It offers no tools.
    #[error("it exports no tools")]
    NoTools,
    /// A tool's served name (the block's `prefix` and its own name) is
    /// longer than MCP allows.
    #[error(
        "tool {tool:?} would be served as {served:?}, longer than the 128 characters MCP allows a tool name; \
         shorten `prefix` in [plugins.{block}]"
    )]
    ServedNameTooLong {
        /// The tool's own name.
        tool: String,
        /// The name it would be served under (cut at 64 characters).
        served: String,
        /// The block whose `prefix` it is.
        block: String,
    },
    /// Its 0.2.0 offers (resources, templates, prompts) break a rule.
    #[error("{0}")]
    Offers(#[from] OfferLoadError),
    /// A 0.2.0 component that offers nothing at all.
    #[error("it offers no tools, resources, resource templates or prompts")]
    NothingOffered,
    /// The file is larger than `limits.wasm_bytes`.
    #[error(
        "the file is {bytes} bytes, more than limits.wasm_bytes ({limit}) allows; raise it in the plugin's [plugins.NAME.limits] block if the component is trusted"
    )]
    TooLarge {
        /// The file's size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// Compiling took longer than `limits.compile_timeout_secs`.
    #[error(
        "compiling it took longer than limits.compile_timeout_secs ({secs}) allows; raise it in the plugin's [plugins.NAME.limits] block if the component is trusted"
    )]
    CompileTimeout {
        /// The limit, in seconds.
        secs: f64,
    },
    /// Its answer to `list` is larger than the listing limits allow in
    /// total.
    #[error(
        "its tool list is larger than limits.tools_per_component ({tools}) definitions of limits.definition_bytes ({bytes}) allow"
    )]
    ListTooLarge {
        /// `limits.tools_per_component`.
        tools: u32,
        /// `limits.definition_bytes`.
        bytes: u64,
    },
}

/// What loading needs: the engine, the linker, the configuration (the
/// embedder's, `C`: the runtime reads each file's [`PluginSettings`] from
/// it through [`PluginConfig`]).
pub struct Loader<C> {
    /// The engine and pool.
    pub runtime: Runtime,
    /// The linker with every import.
    pub linker: Arc<Linker<CallState>>,
    /// The operator's configuration.
    pub config: Arc<C>,
    /// The HTTP client (imports need one even while listing).
    pub http: HttpClient,
    /// Where compiled components are kept, if anywhere.
    pub cache: Option<CompileCache>,
}

impl<C> Clone for Loader<C> {
    fn clone(&self) -> Self {
        Loader {
            runtime: self.runtime.clone(),
            linker: self.linker.clone(),
            config: self.config.clone(),
            http: self.http.clone(),
            cache: self.cache.clone(),
        }
    }
}

impl<C: PluginConfig> Loader<C> {
    /// Everything loading needs for `config`: the engine and its pool
    /// (instance memory up to the largest `limits.memory_mib` of any block),
    /// the linker with every import, the HTTP client the imports use, and
    /// `cache` for compiled components (`None`: compile every component).
    ///
    /// What `toolhost serve`, `list`, `call` and `check` load with, and
    /// what the in-process tests build a Gateway from (toolhost's
    /// `serve::start`).
    pub fn from_config(config: C, cache: Option<CompileCache>) -> anyhow::Result<Loader<C>> {
        use anyhow::Context;
        let runtime = Runtime::new(config.max_memory_bytes())?;
        let http = HttpClient::new(config.plugins()).context("cannot build the HTTP client")?;
        let linker = crate::imports::linker(&runtime.engine)?;
        Ok(Loader {
            runtime,
            linker: Arc::new(linker),
            config: Arc::new(config),
            http,
            cache,
        })
    }

    /// Compiles components in `place` from the next compilation on
    /// (toolhost's binary: a child process of its own per load, ADR 0058).
    pub fn compile_in(&self, place: crate::compiler::CompileIn) {
        self.runtime.compiler.compile_in(place);
    }

    /// Reads and loads the component at `path`; a file larger than
    /// `limits.wasm_bytes` is refused before it is read.
    pub async fn load_file(&self, path: &Path) -> Result<Plugin, LoadError> {
        let limit = self.config.settings_for(&file_name(path)).limits.wasm_bytes;
        let file = tokio::fs::File::open(path).await?;
        let size = file.metadata().await?.len();
        if size > limit {
            return Err(LoadError::TooLarge { bytes: size, limit });
        }
        let mut bytes = Vec::with_capacity(size as usize);
        // A file that grows meanwhile is read one byte past the limit at most.
        file.take(limit + 1).read_to_end(&mut bytes).await?;
        self.load_bytes(path, bytes).await
    }

    /// Loads a component from `bytes` (read from `path`).
    pub async fn load_bytes(&self, path: &Path, bytes: Vec<u8>) -> Result<Plugin, LoadError> {
        let digest = hex::encode(Sha256::digest(&bytes));
        let component = self.compile(&file_name(path), bytes).await?;
        self.load_compiled(path, digest, component).await
    }

    /// Compiles `bytes` (or finds them in the compile cache) for the file
    /// named `file`, under its block's `limits.wasm_bytes` and
    /// `limits.compile_timeout_secs`, off the async workers.
    pub async fn compile(&self, file: &str, bytes: Vec<u8>) -> Result<Component, LoadError> {
        let size = bytes.len() as u64;
        let (component, took) = self.compile_shared(&[file], bytes).await?;
        self.within_limits(file, size, took)?;
        Ok(component)
    }

    /// Compiles `bytes`, which every file named in `files` holds, once:
    /// under the most lenient of their blocks' `limits.wasm_bytes` and
    /// `limits.compile_timeout_secs`. Returns the component and how long
    /// compiling took; [`Loader::within_limits`] then holds each file to its
    /// own block's limits, and [`Loader::load_compiled`] loads each from the
    /// shared result.
    pub async fn compile_shared(
        &self,
        files: &[&str],
        bytes: Vec<u8>,
    ) -> Result<(Component, Duration), LoadError> {
        let limits: Vec<Limits> = files
            .iter()
            .map(|f| self.config.settings_for(f).limits)
            .collect();
        let max_bytes = limits.iter().map(|l| l.wasm_bytes).max().unwrap_or(0);
        if bytes.len() as u64 > max_bytes {
            return Err(LoadError::TooLarge {
                bytes: bytes.len() as u64,
                limit: max_bytes,
            });
        }
        let timeout = limits
            .iter()
            .map(|l| l.compile_timeout)
            .max()
            .unwrap_or_default();
        self.compile_within(bytes, timeout).await
    }

    /// Whether the file named `file`, `size` bytes long, whose compilation
    /// took `compile_time`, is within its block's loading limits.
    pub fn within_limits(
        &self,
        file: &str,
        size: u64,
        compile_time: Duration,
    ) -> Result<(), LoadError> {
        let limits = self.config.settings_for(file).limits;
        if size > limits.wasm_bytes {
            return Err(LoadError::TooLarge {
                bytes: size,
                limit: limits.wasm_bytes,
            });
        }
        if compile_time > limits.compile_timeout {
            return Err(LoadError::CompileTimeout {
                secs: limits.compile_timeout.as_secs_f64(),
            });
        }
        Ok(())
    }

    /// Loads the file at `path`, whose bytes (SHA-256 `digest`, hex) compiled
    /// to `component`: links it, lists its tools with the settings for its
    /// file name, and checks them against the listing limits.
    pub async fn load_compiled(
        &self,
        path: &Path,
        digest: String,
        component: Component,
    ) -> Result<Plugin, LoadError> {
        let file = file_name(path);
        let settings = Arc::new(self.config.settings_for(&file));
        let limits = &settings.limits;
        let asks_forms = component
            .component_type()
            .imports(&self.runtime.engine)
            .any(|(name, _)| name == FORM_IMPORT);
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Link(format!("{e:#}")))?;
        let tools_export =
            ToolsExport::detect(&pre).map_err(|e| LoadError::Link(format!("{e:#}")))?;
        let exports = crate::offers::detect(&pre, matches!(tools_export, ToolsExport::V0_3(_)))?;

        let (definitions, offers) = {
            let _slot = self.runtime.slots.acquire().await;
            let state = CallState::new(
                settings.clone(),
                Arc::new(ToolSpec::listing()),
                self.http.clone(),
                Box::new(FixedAnswer(Outcome::Unsupported)),
                None,
            );
            let mut store = new_store(&self.runtime, state);
            store.set_hostcall_fuel(listing_fuel(limits));
            let instance = match pre.instantiate_async(&mut store).await {
                // The first instance of a component makes its memory image
                // (a sealed memfd on Linux); the kernel refuses the seal
                // while something else briefly holds one of its pages
                // (EBUSY). Not the component's doing: tried once more.
                Err(e) if is_busy(&e) => {
                    tracing::debug!(file = %file, "instantiating again after a busy memory image: {e:#}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    pre.instantiate_async(&mut store).await
                }
                instantiated => instantiated,
            }
            .map_err(|e| LoadError::List(format!("{e:#}")))?;
            let listed = match &tools_export {
                ToolsExport::V0_1(indices) => {
                    let guest = indices
                        .load(&mut store, &instance)
                        .map_err(|e| LoadError::List(format!("{e:#}")))?;
                    guest.call_list(&mut store).await
                }
                ToolsExport::V0_3(indices) => {
                    let guest = indices
                        .load(&mut store, &instance)
                        .map_err(|e| LoadError::List(format!("{e:#}")))?;
                    guest.call_list(&mut store).await
                }
            };
            let definitions = listed.map_err(|e| list_error(e, limits))?;
            let offers = match exports {
                Some(exports) => Some(Arc::new(
                    crate::offers::list(exports, &mut store, &instance, limits, |store| {
                        store.set_hostcall_fuel(listing_fuel(limits))
                    })
                    .await?,
                )),
                None => None,
            };
            (definitions, offers)
        };
        // Parsing and compiling schemas is CPU work: off the async workers.
        let check_limits = limits.clone();
        let known = self.cache.clone();
        let tools = tokio::task::spawn_blocking(move || {
            check_definitions(definitions, &check_limits, known.as_ref())
        })
        .await
        .map_err(|e| LoadError::List(format!("checking its tools failed: {e}")))??;
        match &offers {
            None if tools.is_empty() => return Err(LoadError::NoTools),
            Some(offers) if tools.is_empty() && offers.is_empty() => {
                return Err(LoadError::NothingOffered);
            }
            _ => {}
        }
        let mut served_names = Vec::with_capacity(tools.len());
        for tool in &tools {
            let served = crate::settings::served_name(&settings, &tool.name);
            if !crate::names::is_valid_name(&served) {
                return Err(LoadError::ServedNameTooLong {
                    tool: tool.name.clone(),
                    served: served.chars().take(64).chain(['…']).collect(),
                    block: settings.name.clone(),
                });
            }
            served_names.push(Arc::from(served));
        }
        let labels = Labels {
            block: Arc::from(settings.name.as_str()),
            file: Arc::from(file.as_str()),
            digest: Arc::from(digest.as_str()),
            tools: served_names,
        };
        Ok(Plugin {
            labels,
            file,
            path: path.to_path_buf(),
            digest,
            concurrency: self
                .runtime
                .turns
                .for_block(&settings.name, settings.limits.concurrent_calls),
            settings,
            pre,
            tools_export,
            asks_forms,
            tools,
            http: self.http.clone(),
            offers,
        })
    }
}

impl Plugin {
    /// The version of the WIT contract it targets.
    pub fn contract(&self) -> Contract {
        match (&self.tools_export, &self.offers) {
            (ToolsExport::V0_3(_), _) => Contract::V0_3,
            (_, Some(_)) => Contract::V0_2,
            (_, None) => Contract::V0_1,
        }
    }
}

impl<C> Loader<C> {
    /// Compiles `bytes` (or loads them from the cache), giving up after
    /// `timeout`; returns the component and how long compiling took. It
    /// waits first for one of the runtime's
    /// [`compiling`](Runtime::compiling) permits, which it holds until the
    /// compilation ends; the wait counts against no limit. The compilation
    /// runs where the runtime's [`Compiler`](crate::compiler::Compiler)
    /// compiles. One given up on is discarded, not cached (the limit holds
    /// on the next start too), and keeps its permit (it still takes a
    /// core) until it ends: in this process, when wasmtime finishes it
    /// (wasmtime cannot stop a compilation); in a child process, at the
    /// latest when the load ends and the child is stopped.
    async fn compile_within(
        &self,
        bytes: Vec<u8>,
        timeout: Duration,
    ) -> Result<(Component, Duration), LoadError> {
        let permit = self
            .runtime
            .compiling
            .clone()
            .acquire_owned()
            .await
            .expect("the compile permits are never closed");
        let started = std::time::Instant::now();
        let engine = self.runtime.engine.clone();
        let compiler = self.runtime.compiler.clone();
        let cache = self.cache.clone();
        let abandoned = Arc::new(AtomicBool::new(false));
        let given_up = abandoned.clone();
        // A task of its own, so that one given up on still holds its
        // permit until it ends.
        let compiling = tokio::spawn(async move {
            let _permit = permit;
            let bytes = Arc::new(bytes);
            let cached = {
                let (engine, cache, bytes) = (engine.clone(), cache.clone(), bytes.clone());
                tokio::task::spawn_blocking(move || {
                    cache.as_ref().and_then(|c| c.load(&engine, &bytes))
                })
                .await
                .map_err(|e| LoadError::Compile(e.to_string()))?
            };
            if let Some(component) = cached {
                return Ok(component);
            }
            if abandoned.load(Ordering::Relaxed) {
                // Given up on while looking in the cache: nobody waits.
                return Err(LoadError::CompileTimeout {
                    secs: timeout.as_secs_f64(),
                });
            }
            let artifact = compiler
                .precompile(bytes.clone(), abandoned.clone())
                .await
                .map_err(|e| match e {
                    CompileFailure::Compiler(text) => LoadError::Compile(text),
                    CompileFailure::Child(text) => LoadError::CompileProcess(text),
                })?;
            tokio::task::spawn_blocking(move || {
                // SAFETY: `artifact` was just compiled with the serving
                // engine's settings (`compiler::compiling_config`), in this
                // process or by this program in a child; wasmtime checks
                // that they match.
                let component = unsafe { Component::deserialize(&engine, &artifact) }
                    .map_err(|e| LoadError::Compile(format!("{e:#}")))?;
                if let Some(cache) = cache.filter(|_| !abandoned.load(Ordering::Relaxed)) {
                    cache.store_artifact(&engine, &bytes, &artifact);
                }
                Ok(component)
            })
            .await
            .map_err(|e| LoadError::Compile(e.to_string()))?
        });
        match tokio::time::timeout(timeout, compiling).await {
            Err(_) => {
                given_up.store(true, Ordering::Relaxed);
                Err(LoadError::CompileTimeout {
                    secs: timeout.as_secs_f64(),
                })
            }
            Ok(joined) => joined
                .map_err(|e| LoadError::Compile(e.to_string()))?
                .map(|component| (component, started.elapsed())),
        }
    }
}

/// The most bytes wasmtime may copy out of a component's answer to `list`:
/// every definition at its largest, plus the host's record of each. Caps
/// the host's memory before the count and sizes are checked.
fn listing_fuel(limits: &Limits) -> usize {
    let per_tool = limits
        .definition_bytes
        .saturating_add(std::mem::size_of::<ToolDefinition>() as u64);
    let total = per_tool.saturating_mul(limits.tools_per_component.into());
    usize::try_from(total).unwrap_or(usize::MAX)
}

/// The error for a failed `list` call, naming the limits when the answer
/// was larger than they allow.
fn list_error(error: wasmtime::Error, limits: &Limits) -> LoadError {
    let text = format!("{error:#}");
    // wasmtime's error for exhausted hostcall fuel is a private type; its
    // message is the only sign of it.
    if text.contains("fuel allocated for hostcalls") {
        LoadError::ListTooLarge {
            tools: limits.tools_per_component,
            bytes: limits.definition_bytes,
        }
    } else {
        LoadError::List(text)
    }
}

/// The file name of `path`, as the registry and config know it.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether `error` came from the kernel saying a resource was busy
/// (`EBUSY`), a refusal that passes.
fn is_busy(error: &wasmtime::Error) -> bool {
    // wasmtime's chain holds its own contexts; the OS error is the
    // standard `source` of the one that wraps it.
    error.chain().any(|cause| {
        std::iter::successors(Some(cause), |e| e.source())
            .filter_map(|e| e.downcast_ref::<std::io::Error>())
            .any(|io| io.kind() == std::io::ErrorKind::ResourceBusy)
    })
}

#[cfg(test)]
mod labels_tests {
    use super::*;

    #[test]
    fn a_served_tool_name_is_shared_not_copied() {
        let labels = Labels {
            block: Arc::from("shop"),
            file: Arc::from("shop.wasm"),
            digest: Arc::from("00"),
            tools: vec![Arc::from("shop_list"), Arc::from("shop_get")],
        };
        let served = labels.tool("shop_get");
        assert!(Arc::ptr_eq(&served, &labels.tools[1]));
        let other = labels.tool("elsewhere");
        assert_eq!(&*other, "elsewhere");
        assert!(!labels.tools.iter().any(|t| Arc::ptr_eq(t, &other)));
    }
}
