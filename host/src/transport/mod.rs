//! How toolhost is reached: MCP over stdio, with an answer to every line.
//!
//! [`server::Gateway`](crate::server::Gateway) is rmcp's handler and knows
//! no transport. This module puts it on stdin/stdout:
//! - [`stdio`] runs the session: a reader, rmcp, and one writer;
//! - [`triage`] decides, for one line, whether rmcp gets it or toolhost
//!   answers it itself (input rmcp would drop unanswered, or answer with
//!   the wrong error). See ADR 0013.

pub mod stdio;
pub mod triage;

use std::path::PathBuf;

use crate::call::CallEnv;
use crate::plugin::Loader;
use crate::registry::Registry;
use crate::server::Gateway;

/// Serves `registry` on stdin/stdout until the client goes away, watching
/// `watch_dir` for plugin changes when given.
pub async fn serve_stdio(
    env: CallEnv,
    loader: Loader,
    registry: Registry,
    watch_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    let max_message_bytes = loader.config.max_message_bytes;
    let gateway = Gateway::new(env, &loader, registry);
    if let Some(dir) = watch_dir {
        crate::watch::watch(&dir, loader, gateway.clone())?;
    }
    let tools = gateway.registry().tools().count();
    tracing::info!(tools, "serving on stdio");
    stdio::serve(
        gateway,
        tokio::io::stdin(),
        tokio::io::stdout(),
        max_message_bytes,
    )
    .await
}
