//! What a sandbox binary does around its own flags: [`run`].
//!
//! Each binary (`statuspro-sandbox`, `katana-sandbox`) parses its flags
//! into its sandbox's configuration and hands it to [`run`], which logs to
//! stderr, starts the sandbox, prints the [`announcement`] (where it
//! listens and the key it takes), serves until Ctrl-C or SIGTERM, and shuts
//! down. Everything goes to stderr; stdout stays unused.

use std::io::IsTerminal as _;

use anyhow::Context as _;
use tracing_subscriber::EnvFilter;

use crate::ApiSandbox;

/// Runs a sandbox of type `S` with `config` until Ctrl-C or SIGTERM.
///
/// Logs go to stderr (`RUST_LOG` filters them, default `info`; coloured only
/// on a terminal); the [`announcement`] is printed to stderr once the
/// server is up.
pub async fn run<S: ApiSandbox>(config: S::Config) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let sandbox = S::start(config).await?;
    eprintln!("{}", announcement(&sandbox));

    crate::wait_for_stop_signal()
        .await
        .context("waiting for Ctrl-C or SIGTERM")?;
    tracing::info!("shutting down");
    sandbox.shutdown().await
}

/// The line a running sandbox binary prints: `StatusPro sandbox:
/// http://127.0.0.1:8787/api/v1 (Authorization: Bearer sandbox-key)`. It
/// starts with [`announcement_prefix`], and the base URL follows it up to
/// the first space.
pub fn announcement<S: ApiSandbox>(sandbox: &S) -> String {
    format!(
        "{}{} (Authorization: Bearer {})",
        announcement_prefix::<S>(),
        sandbox.base_url(),
        sandbox.api_key()
    )
}

/// How [`announcement`] starts for `S`, e.g. `StatusPro sandbox: `: what a
/// reader of a binary's stderr looks for.
pub fn announcement_prefix<S: ApiSandbox>() -> String {
    format!("{} sandbox: ", S::API)
}
