//! `log`: guest messages to the host's log, tagged with plugin and tool.

use crate::bindings::log::{Host, Level};
use crate::call::CallState;

/// Longest message kept; the rest is cut. Guests choose the length, so the
/// log cannot be flooded through one call.
const MAX_MESSAGE_CHARS: usize = 4096;

impl Host for CallState {
    async fn write(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        let message: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
        let plugin = self.settings.name.as_str();
        let tool = self.tool.name.as_str();
        match level {
            Level::Trace => tracing::trace!(target: "plugin", plugin, tool, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", plugin, tool, "{message}"),
            Level::Info => tracing::info!(target: "plugin", plugin, tool, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", plugin, tool, "{message}"),
            Level::Error => tracing::error!(target: "plugin", plugin, tool, "{message}"),
        }
        Ok(())
    }
}
