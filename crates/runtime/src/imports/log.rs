//! `log`: guest messages to the host's log, tagged with plugin and tool.
//!
//! The log belongs to the operator, so a guest gets a bounded, escaped share
//! of it:
//! - a message is cut at `MAX_MESSAGE_CHARS`;
//! - a call may write `limits.log_messages_per_call` messages and
//!   `limits.log_bytes_per_call` bytes; what is over the budget is dropped
//!   and counted, and one line at the end of the call says how many
//!   (`LogBudget`);
//! - control characters (`\n`, `\r`, ANSI escapes, …) and the Unicode
//!   characters that reorder or break lines are written escaped
//!   ([`crate::text::escape_controls`]), so a guest can neither forge a log line nor
//!   drive the operator's terminal.
//!
//! Messages at a level the operator's filter (`TOOLHOST_LOG`) hides cost
//! nothing and are not counted, unless the call's [`LogSink`] forwards
//! them to the client.
//!
//! The client hears nothing of this by default. An embedder may hand a call
//! a [`LogSink`] (toolhost does for a block the operator opted in with
//! `log_to_client`): each message it [`wants`](LogSink::wants) then also
//! goes to it, cut, escaped and counted against the same budget, so the
//! client's share is never more than the operator's.

use std::sync::Arc;

use super::CallState;
use crate::bindings::log::{Host, Level};
use crate::hooks::BoxFuture;
use crate::settings::PluginSettings;
use crate::spec::ToolSpec;
use crate::text::escape_controls;

/// Longest message kept, in characters; the rest is cut. Guests choose the
/// length, so one message cannot be a flood by itself.
const MAX_MESSAGE_CHARS: usize = 4096;

pub use crate::settings::LogLevel;

impl From<Level> for LogLevel {
    fn from(level: Level) -> LogLevel {
        match level {
            Level::Trace => LogLevel::Trace,
            Level::Debug => LogLevel::Debug,
            Level::Info => LogLevel::Info,
            Level::Warn => LogLevel::Warn,
            Level::Error => LogLevel::Error,
        }
    }
}

/// Receives a call's log messages besides the operator's log: the
/// embedder's way to show them to whoever made the call.
pub trait LogSink: Send + Sync {
    /// Whether messages at `level` are forwarded; asked before a message
    /// is cut, escaped or counted.
    fn wants(&self, level: LogLevel) -> bool;
    /// Forwards one message, already cut, escaped and within the call's
    /// budget.
    fn forward(&self, level: LogLevel, message: String) -> BoxFuture<'_, ()>;
}

/// One call's share of the log: what it may still write, and what it
/// dropped. Lives in the call's [`CallState`]; when the call ends (the
/// store is dropped) it writes one line for the messages it dropped.
pub(crate) struct LogBudget {
    /// Whose call this is (for the closing line).
    settings: Arc<PluginSettings>,
    /// The tool being called (for the closing line).
    tool: Arc<ToolSpec>,
    /// Messages the call may still write.
    messages_left: u32,
    /// Bytes the call may still write.
    bytes_left: u64,
    /// Messages dropped so far.
    dropped: u64,
}

impl LogBudget {
    /// A full budget for a call of `tool` in a plugin with `settings`.
    pub(crate) fn new(settings: Arc<PluginSettings>, tool: Arc<ToolSpec>) -> LogBudget {
        let limits = &settings.limits;
        LogBudget {
            messages_left: limits.log_messages_per_call,
            bytes_left: limits.log_bytes_per_call,
            dropped: 0,
            settings,
            tool,
        }
    }

    /// Takes `bytes` from the budget for one message; false (and counted
    /// as dropped) when the budget cannot cover it.
    fn spend(&mut self, bytes: usize) -> bool {
        let bytes = bytes as u64;
        if self.messages_left == 0 || bytes > self.bytes_left {
            self.dropped += 1;
            return false;
        }
        self.messages_left -= 1;
        self.bytes_left -= bytes;
        true
    }
}

impl Drop for LogBudget {
    fn drop(&mut self) {
        if self.dropped > 0 {
            let limits = &self.settings.limits;
            tracing::warn!(
                target: "plugin",
                plugin = %self.settings.name,
                tool = %self.tool.name,
                "{} log messages dropped: the call went over its log budget \
                 (limits.log_messages_per_call = {}, limits.log_bytes_per_call = {})",
                self.dropped,
                limits.log_messages_per_call,
                limits.log_bytes_per_call,
            );
        }
    }
}

/// Whether the operator's filter shows plugin messages at `level`.
fn shown(level: Level) -> bool {
    match level {
        Level::Trace => tracing::enabled!(target: "plugin", tracing::Level::TRACE),
        Level::Debug => tracing::enabled!(target: "plugin", tracing::Level::DEBUG),
        Level::Info => tracing::enabled!(target: "plugin", tracing::Level::INFO),
        Level::Warn => tracing::enabled!(target: "plugin", tracing::Level::WARN),
        Level::Error => tracing::enabled!(target: "plugin", tracing::Level::ERROR),
    }
}

impl Host for CallState {
    async fn write(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        let shown = shown(level);
        let sink = self
            .log_sink
            .clone()
            .filter(|sink| sink.wants(level.into()));
        if !shown && sink.is_none() {
            return Ok(());
        }
        let cut = match message.char_indices().nth(MAX_MESSAGE_CHARS) {
            Some((end, _)) => &message[..end],
            None => message.as_str(),
        };
        let message = escape_controls(cut);
        if !self.log.spend(message.len()) {
            return Ok(());
        }
        let plugin = self.settings.name.as_str();
        let tool = self.tool.name.as_str();
        match level {
            _ if !shown => {}
            Level::Trace => tracing::trace!(target: "plugin", plugin, tool, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", plugin, tool, "{message}"),
            Level::Info => tracing::info!(target: "plugin", plugin, tool, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", plugin, tool, "{message}"),
            Level::Error => tracing::error!(target: "plugin", plugin, tool, "{message}"),
        }
        if let Some(sink) = sink {
            sink.forward(level.into(), message.to_string()).await;
        }
        Ok(())
    }
}
