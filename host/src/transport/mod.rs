//! How toolhost is reached: MCP over stdio (the default), or over
//! Streamable HTTP.
//!
//! [`server::Gateway`](crate::server::Gateway) is rmcp's handler and knows
//! no transport. This module puts it on stdin/stdout or on a socket:
//! - [`stdio`] runs the session: a reader, rmcp, and one writer;
//! - [`triage`] decides, for one line, whether rmcp gets it or toolhost
//!   answers it itself (input rmcp would drop unanswered, or answer with
//!   the wrong error). See ADR 0010;
//! - [`http`] serves `/mcp` with rmcp's Streamable HTTP service for many
//!   clients in both eras, bounded per caller, with health endpoints and a
//!   graceful shutdown. See ADR 0011.

pub mod http;
pub mod stdio;
pub mod triage;

pub use http::serve_http;

use std::path::PathBuf;

use crate::call::CallEnv;
use crate::plugin::Loader;
use crate::server::Gateway;

/// Serves the tools of the plugin directory `dir` on stdin/stdout until the
/// client goes away, watching `dir` for changes when `watch` is set.
///
/// `initialize` is answered at once; the directory loads in the background
/// and tool requests wait for it (ADR 0006, [`crate::server`]).
pub async fn serve_stdio(
    env: CallEnv,
    loader: Loader,
    dir: PathBuf,
    watch: bool,
) -> anyhow::Result<()> {
    // A missing or unreadable directory is an error now, not a log line
    // later.
    crate::registry::wasm_files(&dir)?;
    let max_message_bytes = loader.config.max_message_bytes;
    let gateway = Gateway::loading(env, &loader)?;
    let watch = if watch {
        Some(crate::watch::watch_dir(&dir)?)
    } else {
        None
    };
    tokio::spawn(crate::watch::run(dir, loader, gateway.clone(), watch));
    tracing::info!("serving on stdio");
    let mut restore = stdio::BlockingRestored::default();
    let input = stdio::input(&mut restore);
    let output = stdio::output(&mut restore);
    stdio::serve(gateway, input, output, max_message_bytes).await
}
