//! Running one call in a fresh instance: a tool call (here) or a read, get
//! or completion of a 0.2 component ([`offer`]).
//!
//! The flow of a tool call, top to bottom:
//! 1. [`run_call`] checks the arguments against the tool's schema;
//! 2. waits for the plugin's concurrency permit and a pool slot (while the
//!    call waits for a human's answer it gives the permit back, and only a
//!    bounded number of calls may wait at once: see
//!    [`WaitingForUser`](crate::engine::WaitingForUser));
//! 3. builds a [`Store`](wasmtime::Store) whose data is a [`CallState`]: everything the
//!    imports may use during this call and nothing else (the plugin's
//!    settings, who answers confirmations, where progress goes, the
//!    deadline, counters);
//! 4. instantiates the pre-linked component and calls `tools.call`;
//! 5. turns what happened (output, tool error, trap, limit, policy
//!    violation, a confirmation that needs the client) into a
//!    [`CallOutcome`].
//!
//! Nothing survives between calls: the store and instance are dropped at the
//! end, whatever happened. What a call does (upstream requests, denials,
//! confirmations) is reported to its [`CallHooks`].
//!
//! **Architecture invariant:** the runtime (this module, [`crate::imports`],
//! [`crate::offers`], [`crate::plugin`], [`crate::registry`],
//! [`crate::engine`]) never names `audit`, `metrics` or anything that knows
//! MCP; the audit trail and the metrics hear of a call through
//! [`CallHooks`].

pub mod offer;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::bindings::types::{ErrorCode, ToolError};
use crate::engine::{Runtime, Turn};
use crate::hooks::{CallHooks, NoHooks};
use crate::imports::confirm::{Answer, Confirmer};
use crate::imports::http::HttpClient;
use crate::imports::progress::ProgressSink;
use crate::imports::{CallState, Stop, new_store};
use crate::plugin::Plugin;
use crate::spec::ToolSpec;

/// One entry of the error envelope's `issues` list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    /// `VALIDATION_ERROR`, `NOT_FOUND`, … (the shared vocabulary).
    pub code: &'static str,
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// For `RATE_LIMIT`: how long to wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl Issue {
    /// An issue with no hint.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Issue {
        Issue {
            code: code_name(code),
            message: message.into(),
            hint: None,
            retry_after_ms: None,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Issue {
        self.hint = Some(hint.into());
        self
    }
}

impl From<ToolError> for Issue {
    fn from(e: ToolError) -> Issue {
        Issue {
            code: code_name(e.code),
            message: e.message,
            hint: e.hint,
            retry_after_ms: e.retry_after_ms,
        }
    }
}

/// The wire name of an error code.
pub fn code_name(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::ValidationError => "VALIDATION_ERROR",
        ErrorCode::PermissionDenied => "PERMISSION_DENIED",
        ErrorCode::NotFound => "NOT_FOUND",
        ErrorCode::Conflict => "CONFLICT",
        ErrorCode::RateLimit => "RATE_LIMIT",
        ErrorCode::Transient => "TRANSIENT",
        ErrorCode::Internal => "INTERNAL",
    }
}

/// How a call ended.
#[derive(Debug)]
pub enum CallOutcome {
    /// The tool returned this JSON.
    Success(Value),
    /// The tool, or the host on its behalf, reported these issues.
    Failed(Vec<Issue>),
    /// The tool asked for a confirmation that the client must collect
    /// (2026-07-28 clients). `answered` holds the questions already asked
    /// and answered in earlier rounds of this call, in order.
    InputRequired {
        /// The prompt for the user: the host's line, then the tool's question.
        message: String,
        /// Answers from earlier rounds, each with the question it answered.
        answered: Vec<Answer>,
    },
}

/// Whether `error` is wasmtime's refusal to copy past the budget
/// [`hostcall_copy_budget`] sets. The error type is private to wasmtime;
/// its text is pinned by the end-to-end test of the budget.
fn is_copy_budget_exhausted(error: &wasmtime::Error) -> bool {
    format!("{error:#}").contains("fuel allocated for hostcalls has been exhausted")
}

/// Host-wide things every call uses.
#[derive(Clone)]
pub struct CallEnv {
    /// The engine and pool.
    pub runtime: Runtime,
    /// The shared HTTP client.
    pub http: HttpClient,
}

/// Runs `tool` of `plugin` with `arguments`.
pub async fn run_call(
    env: &CallEnv,
    plugin: &Arc<Plugin>,
    tool: &Arc<ToolSpec>,
    arguments: &Value,
    confirmer: Box<dyn Confirmer>,
    progress: Option<Arc<dyn ProgressSink>>,
) -> CallOutcome {
    run_call_with_hooks(
        env,
        plugin,
        tool,
        arguments,
        confirmer,
        progress,
        Arc::new(NoHooks),
    )
    .await
}

/// [`run_call`], reporting to `hooks` what the call asks and sends; a
/// mutation the hooks refuse (the audit trail cannot record it first) is
/// not sent.
pub async fn run_call_with_hooks(
    env: &CallEnv,
    plugin: &Arc<Plugin>,
    tool: &Arc<ToolSpec>,
    arguments: &Value,
    confirmer: Box<dyn Confirmer>,
    progress: Option<Arc<dyn ProgressSink>>,
    hooks: Arc<dyn CallHooks>,
) -> CallOutcome {
    if let Err(errors) = tool.validate(arguments) {
        let message = format!(
            "the arguments do not match the tool's input schema: {}",
            errors.join("; ")
        );
        return CallOutcome::Failed(vec![
            Issue::new(ErrorCode::ValidationError, message)
                .hint("fix the arguments to match the tool's inputSchema and call again"),
        ]);
    }
    let turn = Turn::take(&plugin.concurrency).await;
    let _slot = env.runtime.slots.acquire().await;

    let mut state = CallState::new(
        plugin.settings.clone(),
        tool.clone(),
        plugin.http.clone(),
        confirmer,
        progress,
    );
    state.file = plugin.file.clone();
    state.turn = Some(turn);
    state.waits = env.runtime.waiting.clone();
    state.hooks = hooks;
    let mut store = new_store(&env.runtime, state);
    let arguments = arguments.to_string();

    let result = async {
        let instance = plugin.pre.instantiate_async(&mut store).await?;
        instance
            .toolhost_plugin_tools()
            .call_call(&mut store, &tool.name, &arguments)
            .await
    }
    .await;

    let state = store.data_mut();
    let stop = state.take_stop();
    // A broken rule ends the call before anything else it did counts,
    // a question it asked afterwards included.
    if let Some(violation) = state.take_violation() {
        return CallOutcome::Failed(vec![Issue::new(ErrorCode::PermissionDenied, violation)
            .hint("the host only lets a tool change things after the user confirms, and never lets a read-only tool")]);
    }
    if let Some(Stop::NeedsInput(message)) = stop {
        return CallOutcome::InputRequired {
            message,
            answered: std::mem::take(&mut state.answers),
        };
    }
    if let Some(Stop::Busy(why)) = stop {
        tracing::warn!(plugin = %plugin.file, tool = %tool.name, "{why}");
        return CallOutcome::Failed(vec![
            Issue::new(ErrorCode::Transient, format!("{why}; nothing was changed"))
                .hint("answer or dismiss the confirmations already open, then call the tool again"),
        ]);
    }
    if let Some(Stop::Unaudited(why)) = stop {
        return CallOutcome::Failed(vec![
            Issue::new(ErrorCode::Transient, format!("{why}; nothing was changed"))
                .hint("the operator must make the audit trail writable again (host.audit); then call the tool again"),
        ]);
    }
    let limits = &state.settings.limits;
    match result {
        Ok(Ok(output)) => {
            if output.len() as u64 > limits.output_bytes {
                return CallOutcome::Failed(vec![Issue::new(
                    ErrorCode::Internal,
                    format!(
                        "the tool's output ({} bytes) exceeds limits.output_bytes ({})",
                        output.len(),
                        limits.output_bytes
                    ),
                )]);
            }
            match serde_json::from_str(&output) {
                Ok(value) => CallOutcome::Success(value),
                Err(e) => CallOutcome::Failed(vec![Issue::new(
                    ErrorCode::Internal,
                    format!("the tool returned output that is not JSON: {e}"),
                )]),
            }
        }
        Ok(Err(tool_error)) => {
            CallOutcome::Failed(vec![bounded_issue(tool_error, limits.output_bytes)])
        }
        Err(trap) => {
            let message = if let Some(Stop::Limit(why)) = stop {
                why
            } else if is_copy_budget_exhausted(&trap) {
                format!(
                    "the tool passed more data to the host in one call than its memory limit (limits.memory_mib = {})",
                    limits.memory_bytes >> 20
                )
            } else if state.limiter_hit() {
                format!(
                    "the tool ran out of memory (limits.memory_mib = {})",
                    limits.memory_bytes >> 20
                )
            } else {
                format!("the tool crashed: {}", trap_summary(&trap))
            };
            tracing::warn!(plugin = %plugin.file, tool = %tool.name, "{message}");
            CallOutcome::Failed(vec![Issue::new(ErrorCode::Internal, message)])
        }
    }
}

/// The tool's error as an issue, its `message` and `hint` cut so that
/// together they fit in `max_bytes` (`limits.output_bytes`), each cut one
/// saying so.
fn bounded_issue(error: ToolError, max_bytes: u64) -> Issue {
    let mut issue = Issue::from(error);
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    issue.message = cut(issue.message, max);
    let left = max.saturating_sub(issue.message.len());
    issue.hint = issue.hint.map(|h| cut(h, left));
    issue
}

/// `text` cut to at most `max` bytes (at a character boundary), ending in a
/// note naming the limit when it was cut.
pub(crate) fn cut(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let note = format!(" … [cut: {} bytes exceed limits.output_bytes]", text.len());
    let mut end = max.saturating_sub(note.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &text[..end])
}

/// What a trap means, in words, without the backtrace.
pub(crate) fn trap_summary(error: &wasmtime::Error) -> String {
    match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::StackOverflow) => "it exhausted its call stack".into(),
        // Rust and C guests keep their stack in linear memory; overflowing
        // it usually surfaces as an out-of-bounds access.
        Some(wasmtime::Trap::MemoryOutOfBounds) => {
            "it accessed memory out of bounds (a stack overflow in the component looks like this)"
                .into()
        }
        Some(wasmtime::Trap::UnreachableCodeReached) => {
            "it panicked or reached unreachable code".into()
        }
        Some(trap) => trap.to_string(),
        None => error
            .to_string()
            .lines()
            .next()
            .unwrap_or("trap")
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_text_fits_keeps_characters_whole_and_names_the_limit() {
        assert_eq!(cut("short".into(), 100), "short");
        let long = "é".repeat(1000);
        let out = cut(long, 200);
        assert!(out.len() <= 200, "{}", out.len());
        assert!(out.starts_with("éé"));
        assert!(out.ends_with("exceed limits.output_bytes]"), "{out}");
    }

    #[test]
    fn error_message_and_hint_share_the_output_limit() {
        let issue = bounded_issue(
            ToolError {
                code: ErrorCode::Internal,
                message: "m".repeat(3000),
                hint: Some("h".repeat(3000)),
                retry_after_ms: None,
            },
            1000,
        );
        assert!(issue.message.len() <= 1000);
        assert!(issue.message.len() + issue.hint.as_deref().unwrap_or("").len() <= 1000 + 100);
    }
}
