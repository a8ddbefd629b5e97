//! [`ApiSandbox`]: what code that runs or tests a sandbox needs from it,
//! whichever API it stands in for.
//!
//! The sandbox binaries' `main` ([`crate::cli`]), the sandboxes' HTTP test
//! harness (`testing`, behind the `testing` feature) and toolhost's
//! end-to-end tests are written once against it. Each sandbox implements it
//! over its own methods, which stay its API: tests call `sandbox.api_key()`
//! without importing the trait.

use std::future::Future;
use std::net::SocketAddr;

use crate::{RequestLog, ToolhostBlock};

/// A running sandbox standing in for one upstream API.
pub trait ApiSandbox: Sized + Send + Sync + 'static {
    /// How a sandbox is configured; [`Default`] matches the real API's
    /// limits on a free port.
    type Config: Default + Send + 'static;

    /// The API's name as its vendor writes it, e.g. `StatusPro`: the
    /// binary's announcement ([`crate::cli::announcement`]) starts with it.
    const API: &'static str;
    /// The path the API's routes are under, e.g. `/api/v1`.
    const API_PREFIX: &'static str;
    /// The `[plugins.NAME]` block that serves the API's tools, e.g.
    /// `statuspro`.
    const PLUGIN: &'static str;
    /// The component files that block covers, as a glob, e.g.
    /// `statuspro_*.wasm`.
    const PLUGIN_FILES: &'static str;
    /// The environment variable the host reads the API key from, e.g.
    /// `STATUSPRO_API_KEY`.
    const KEY_ENV: &'static str;

    /// Starts one with fresh seed data on `127.0.0.1`, on the current tokio
    /// runtime.
    fn start(config: Self::Config) -> impl Future<Output = anyhow::Result<Self>> + Send;

    /// The bound address.
    fn addr(&self) -> SocketAddr;

    /// The bearer key it accepts.
    fn api_key(&self) -> &str;

    /// Every request it received (since the last clear), oldest first.
    fn request_log(&self) -> &RequestLog;

    /// Stops the server and waits for the requests in flight to finish.
    fn shutdown(self) -> impl Future<Output = anyhow::Result<()>> + Send;

    /// The API base URL, `http://127.0.0.1:PORT` and [`Self::API_PREFIX`]
    /// (no trailing slash).
    fn base_url(&self) -> String {
        format!("http://{}{}", self.addr(), Self::API_PREFIX)
    }

    /// The `[plugins.PLUGIN]` block of a `toolhost.toml` that serves the
    /// API's tools against this sandbox: `base_url` pointed here, this port
    /// allowed for `methods`, and the key injected by the host from
    /// [`Self::KEY_ENV`] (see [`ToolhostBlock`]).
    fn toolhost_config(&self, methods: &[&str]) -> String {
        self.toolhost_config_with(methods, &[])
    }

    /// [`ApiSandbox::toolhost_config`] with further plugin `config` keys,
    /// e.g. `("retry_deadline_ms", "1500")`.
    fn toolhost_config_with(&self, methods: &[&str], settings: &[(&str, &str)]) -> String {
        ToolhostBlock {
            name: Self::PLUGIN,
            files: Self::PLUGIN_FILES,
            base_url: &self.base_url(),
            port: self.addr().port(),
            methods,
            key_env: Self::KEY_ENV,
            settings,
        }
        .to_toml()
    }
}
