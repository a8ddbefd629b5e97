//! Loading one component file into a [`Plugin`]: compile, link, ask it for
//! its tools, and check them.
//!
//! A plugin is immutable once loaded. Replacing the file produces a new
//! `Plugin`; calls already running keep the old one alive until they finish.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use thiserror::Error;
use tokio::sync::Semaphore;
use wasmtime::component::{Component, Linker};

use crate::bindings::PluginPre;
use crate::bindings::confirm::Outcome;
use crate::cache::CompileCache;
use crate::call::{CallState, FixedAnswer, new_store};
use crate::config::{Config, PluginSettings};
use crate::engine::Runtime;
use crate::imports::http::HttpClient;
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
    pub pre: PluginPre<CallState>,
    /// Its tools, in the component's order.
    pub tools: Vec<Arc<ToolSpec>>,
    /// Bounds concurrent calls (`limits.concurrent_calls`), shared by every
    /// file of the plugin's block. A call waiting for a human gives its
    /// permit back until the answer comes.
    pub concurrency: Arc<Semaphore>,
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
    /// It imports something the host does not provide.
    #[error(
        "it needs imports this host does not provide (is it built against toolhost:plugin@0.1?): {0}"
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
}

/// What loading needs: the engine, the linker, the configuration.
#[derive(Clone)]
pub struct Loader {
    /// The engine and pool.
    pub runtime: Runtime,
    /// The linker with every import.
    pub linker: Arc<Linker<CallState>>,
    /// The operator's configuration.
    pub config: Arc<Config>,
    /// The HTTP client (imports need one even while listing).
    pub http: HttpClient,
    /// Where compiled components are kept, if anywhere.
    pub cache: Option<CompileCache>,
}

impl Loader {
    /// Reads and loads the component at `path`.
    pub async fn load_file(&self, path: &Path) -> Result<Plugin, LoadError> {
        let bytes = tokio::fs::read(path).await?;
        self.load_bytes(path, bytes).await
    }

    /// Loads a component from `bytes` (read from `path`).
    pub async fn load_bytes(&self, path: &Path, bytes: Vec<u8>) -> Result<Plugin, LoadError> {
        let digest = hex(&Sha256::digest(&bytes));
        let component = self.compile(bytes).await?;
        self.load_compiled(path, digest, component).await
    }

    /// Compiles `bytes` (or finds them in the compile cache), off the async
    /// workers. Files with the same bytes can share the result: see
    /// [`Loader::load_compiled`].
    pub async fn compile(&self, bytes: Vec<u8>) -> Result<Component, LoadError> {
        // Compiling is CPU-bound: keep it off the async workers.
        let engine = self.runtime.engine.clone();
        let cache = self.cache.clone();
        tokio::task::spawn_blocking(move || match cache {
            Some(cache) => cache.compile(&engine, &bytes),
            None => Component::new(&engine, &bytes),
        })
        .await
        .map_err(|e| LoadError::Compile(e.to_string()))?
        .map_err(|e| LoadError::Compile(format!("{e:#}")))
    }

    /// Loads the file at `path`, whose bytes (SHA-256 `digest`, hex) compiled
    /// to `component`: links it, lists its tools with the settings for its
    /// file name, and checks them.
    pub async fn load_compiled(
        &self,
        path: &Path,
        digest: String,
        component: Component,
    ) -> Result<Plugin, LoadError> {
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let settings = Arc::new(self.config.settings_for(&file));
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Link(format!("{e:#}")))?;
        let pre = PluginPre::new(pre).map_err(|e| LoadError::Link(format!("{e:#}")))?;

        let definitions = {
            let _slot = self.runtime.slots.acquire().await;
            let state = CallState::new(
                settings.clone(),
                Arc::new(ToolSpec::listing()),
                self.http.clone(),
                Box::new(FixedAnswer(Outcome::Unsupported)),
                None,
            );
            let mut store = new_store(&self.runtime, state);
            let instance = pre
                .instantiate_async(&mut store)
                .await
                .map_err(|e| LoadError::List(format!("{e:#}")))?;
            instance
                .toolhost_plugin_tools()
                .call_list(&mut store)
                .await
                .map_err(|e| LoadError::List(format!("{e:#}")))?
        };
        let tools = check_definitions(definitions)?;
        if tools.is_empty() {
            return Err(LoadError::NoTools);
        }
        Ok(Plugin {
            file,
            path: path.to_path_buf(),
            digest,
            concurrency: self
                .runtime
                .turns
                .for_block(&settings.name, settings.limits.concurrent_calls),
            settings,
            pre,
            tools,
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
