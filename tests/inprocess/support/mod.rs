//! The in-process harness: the library's composition root
//! ([`toolhost::serve::start`]) builds a Gateway and its reload task from a
//! config file and a plugin directory in a temporary directory, and rmcp's
//! client talks to it over an in-memory duplex, through the same line
//! framing as stdio ([`toolhost::transport::stdio::serve`]). No process, no
//! stdout, no stderr: a test that must read the log or the exit status
//! belongs to the process tier (`tests/e2e`).
//!
//! The client ([`TestClient`]), the eras, the elicitation behaviours, the
//! loopback [`Recorder`] and the component files are the process tier's
//! own (`tests/support`), included here, so both tiers drive toolhost
//! with the same client.

#![allow(dead_code)]

// What the process tier exports for its own tests is not all used here.
#[allow(unused_imports)]
#[path = "../../support/mod.rs"]
mod shared;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolResult, Tool};
use rmcp::service::{RoleClient, RunningService, Subscription};
use serde_json::Value;
use toolhost::cache::CompileCache;
use toolhost::config::Config;
use toolhost::plugin::Loader;
use toolhost::server::Gateway;

pub use shared::{
    ERAS, Elicitation, Era, MISBEHAVING_TOOLS, Recorder, Seen, TestClient, component,
    components_dir, hints, offers, session, test_cache_home, with_host_setting, write_then_rename,
};

/// How long a test Gateway lets requests wait for the initial load
/// (`host.load_wait_secs`) unless the test sets its own, as the process
/// tier does: a loaded machine compiling for parallel tests can take longer
/// than the default, and a test must see the whole directory.
const TEST_LOAD_WAIT: &str = "load_wait_secs = 600";

/// How to start a Gateway.
pub struct HostOptions {
    /// Components to put in the plugin directory, by name.
    pub components: Vec<String>,
    /// Extra files for the plugin directory: (file name, bytes).
    pub extra_files: Vec<(String, Vec<u8>)>,
    /// `toolhost.toml` text, if any.
    pub config: Option<String>,
    /// The client's era.
    pub era: Era,
    /// How the client answers elicitations.
    pub elicitation: Elicitation,
    /// Whether hot reload follows the directory and the config file (as
    /// `serve` does unless `--no-watch`).
    pub watch: bool,
}

impl HostOptions {
    /// A Gateway serving `components`, with a legacy client that cannot
    /// elicit.
    pub fn new(components: &[&str]) -> HostOptions {
        HostOptions {
            components: components.iter().map(|s| s.to_string()).collect(),
            extra_files: Vec::new(),
            config: None,
            era: Era::Legacy,
            elicitation: Elicitation::Unsupported,
            watch: true,
        }
    }

    /// Sets the era.
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// Sets the config file's text.
    pub fn config(mut self, text: impl Into<String>) -> Self {
        self.config = Some(text.into());
        self
    }

    /// Sets how elicitations are answered.
    pub fn elicitation(mut self, e: Elicitation) -> Self {
        self.elicitation = e;
        self
    }

    /// Adds a file to the plugin directory.
    pub fn file(mut self, name: &str, bytes: Vec<u8>) -> Self {
        self.extra_files.push((name.to_string(), bytes));
        self
    }

    /// Loads the directory once and follows neither it nor the config.
    pub fn no_watch(mut self) -> Self {
        self.watch = false;
        self
    }
}

/// `text` (a `toolhost.toml`) with the tests' `host.load_wait_secs`,
/// unless it sets its own.
fn with_test_load_wait(text: &str) -> String {
    with_host_setting(text, "load_wait_secs", TEST_LOAD_WAIT)
}

/// The compile cache every test host shares with the process tier's hosts
/// (`XDG_CACHE_HOME` = [`test_cache_home`] there): inside the checkout,
/// never the user's home, and its key beside it.
fn test_compile_cache() -> Option<CompileCache> {
    let home = test_cache_home();
    CompileCache::open_with_key_file(&home.join("toolhost"), &home.join("toolhost.key")).ok()
}

/// A Gateway serving a plugin directory in this process, with a connected
/// client. Dropped with the test's runtime: its reload task, its session
/// and its watchers end with it.
pub struct Host {
    /// The client session.
    pub client: RunningService<RoleClient, TestClient>,
    /// The client's handler state.
    pub handler: TestClient,
    /// The plugin directory.
    pub plugins: PathBuf,
    /// The Gateway the client talks to.
    pub gateway: Gateway,
    _dir: Arc<tempfile::TempDir>,
}

impl Host {
    /// Builds the Gateway (the initial load runs in the background, as in
    /// `serve`) and connects.
    pub async fn start(options: HostOptions) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        for name in &options.components {
            std::fs::write(plugins.join(format!("{name}.wasm")), component(name)).unwrap();
        }
        for (name, bytes) in &options.extra_files {
            std::fs::write(plugins.join(name), bytes).unwrap();
        }
        let path = dir.path().join("toolhost.toml");
        std::fs::write(
            &path,
            with_test_load_wait(options.config.as_deref().unwrap_or("")),
        )
        .unwrap();
        let config = Config::load(&path).expect("the test's config is valid");
        let loader = Loader::from_config(config, test_compile_cache()).expect("the loader builds");
        let max_message_bytes = loader.config.max_message_bytes;
        let gateway = toolhost::serve::start(loader, plugins.clone(), options.watch)
            .expect("the Gateway starts");
        let (client_end, server_end) = tokio::io::duplex(64 << 10);
        let (input, output) = tokio::io::split(server_end);
        tokio::spawn(toolhost::transport::stdio::serve(
            gateway.clone(),
            input,
            output,
            max_message_bytes,
        ));
        let handler = TestClient::new(options.elicitation);
        let client = handler.clone().start(options.era, client_end).await;
        Host {
            client,
            handler,
            plugins,
            gateway,
            _dir: Arc::new(dir),
        }
    }

    /// Opens a `subscriptions/listen` stream for tool-list changes
    /// (2026-07-28 clients).
    pub async fn listen(&self) -> rmcp::service::Subscription {
        shared::session::listen(&self.client).await
    }

    /// Lists every tool.
    pub async fn tools(&self) -> Vec<Tool> {
        shared::session::tools(&self.client).await
    }

    /// Calls `name` with `arguments` (an object), following
    /// `input_required` rounds as a real client does.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        shared::session::call(&self.client, name, arguments).await
    }

    /// Calls and expects a successful result; returns `structuredContent`.
    pub async fn ok(&self, name: &str, arguments: Value) -> Value {
        shared::session::ok(&self.client, name, arguments).await
    }

    /// Calls and expects a tool error; returns the envelope's first issue.
    pub async fn tool_error(&self, name: &str, arguments: Value) -> Value {
        shared::session::tool_error(&self.client, name, arguments).await
    }

    /// The Gateway's `toolhost.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.plugins
            .parent()
            .expect("beside the plugins")
            .join("toolhost.toml")
    }

    /// Replaces the `toolhost.toml` with `text` (plus the tests'
    /// `host.load_wait_secs`, as at start), as an editor saves: a new file
    /// renamed into place.
    pub fn write_config(&self, text: &str) {
        let path = self.config_path();
        let staged = path.with_extension("toml.new");
        std::fs::write(&staged, with_test_load_wait(text)).unwrap();
        std::fs::rename(&staged, &path).unwrap();
    }

    /// Waits until `check` holds for what the client saw.
    pub async fn wait_for_seen(&self, check: impl Fn(&Seen) -> bool) {
        shared::session::wait_for_seen(&self.handler, check).await
    }
}

/// Counts tool-list changes the way each era receives them.
pub struct Changes {
    stream: Option<Subscription>,
    seen: usize,
}

impl Changes {
    /// Starts counting, once the Gateway serves its initial load (it
    /// answers `initialize` before that, and `tools/list` waits for it).
    pub async fn open(host: &Host, era: Era) -> Changes {
        host.tools().await;
        Changes::listen(host, era).await
    }

    /// Starts counting now, whether or not the initial load is in.
    pub async fn listen(host: &Host, era: Era) -> Changes {
        let stream = match era {
            Era::Legacy => None,
            Era::Modern => Some(host.listen().await),
        };
        Changes { stream, seen: 0 }
    }

    /// Waits for the next change notification.
    pub async fn next(&mut self, host: &Host) {
        match &mut self.stream {
            None => {
                let want = self.seen + 1;
                host.wait_for_seen(|s| s.list_changed >= want).await;
            }
            Some(stream) => {
                let n = tokio::time::timeout(Duration::from_secs(30), stream.next())
                    .await
                    .expect("a change arrives in time")
                    .expect("the stream works")
                    .expect("the stream is open");
                assert!(
                    matches!(
                        n,
                        rmcp::model::ServerNotification::ToolListChangedNotification(_)
                    ),
                    "{n:?}"
                );
            }
        }
        self.seen += 1;
    }

    /// How many notifications arrived that were not yet consumed with `next`.
    pub async fn unread(&mut self, host: &Host) -> usize {
        match &mut self.stream {
            None => host.handler.seen.lock().unwrap().list_changed - self.seen,
            Some(stream) => {
                let mut n = 0;
                while let Ok(Ok(Some(_))) =
                    tokio::time::timeout(Duration::from_millis(200), stream.next()).await
                {
                    n += 1;
                }
                n
            }
        }
    }
}
