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
use crate::bindings::v0_2::content::Body;
pub use crate::bindings::v0_3::content::{Block, Media, ResourceLink, ToolOutput};
use crate::engine::{Runtime, Turn};
use crate::hooks::{CallHooks, NoHooks};
use crate::imports::confirm::{Answer, Confirmer};
use crate::imports::http::HttpClient;
use crate::imports::progress::ProgressSink;
use crate::imports::{CallState, Pending, Stop, new_store};
use crate::plugin::{Plugin, ToolsExport};
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
    /// The tool (contract 0.3) returned content blocks, with or without
    /// JSON beside them; checked against the output limit and MIME rules.
    Content {
        /// The structured result, if any.
        structured: Option<Value>,
        /// The blocks, in order.
        content: Vec<Block>,
    },
    /// The tool, or the host on its behalf, reported these issues.
    Failed(Vec<Issue>),
    /// The tool asked a question (a confirmation, or a form of contract
    /// 0.3) that the client must answer (2026-07-28 clients). `answered`
    /// holds the questions already asked and answered in earlier rounds of
    /// this call, in order.
    InputRequired {
        /// The prompt for the user: the host's line, then the tool's words.
        message: String,
        /// Answers from earlier rounds, each with the question it answered.
        answered: Vec<Answer>,
        /// For a form, its schema (JSON Schema text); `None` for a
        /// confirmation.
        form: Option<String>,
    },
}

/// How the host's own question before a call ended it, if it did: a yes
/// lets the call go on (`None`); a question the client must collect is
/// [`CallOutcome::InputRequired`]; any other answer, or too many calls
/// waiting for a user, ends it with nothing run.
fn host_question_stop(
    state: &mut CallState,
    asked: wasmtime::Result<crate::bindings::confirm::Outcome>,
) -> Option<CallOutcome> {
    use crate::bindings::confirm::Outcome;
    let refused = |message: &str| {
        Some(CallOutcome::Failed(vec![
            Issue::new(ErrorCode::PermissionDenied, message)
                .hint("the operator's policy needs the user's yes before this tool runs; call it again and confirm"),
        ]))
    };
    match asked {
        Ok(Outcome::Confirmed) => None,
        Ok(Outcome::Declined) => refused("the user declined; the tool did not run"),
        Ok(Outcome::Cancelled) => {
            refused("the confirmation was cancelled or not answered; the tool did not run")
        }
        Ok(Outcome::Unsupported) => Some(CallOutcome::Failed(vec![
            Issue::new(
                ErrorCode::PermissionDenied,
                "this call needs the user's confirmation, and the client cannot ask (it did not \
                 declare elicitation); the tool did not run",
            )
            .hint("use a client that supports elicitation"),
        ])),
        Err(_) => match state.stop.take() {
            Some(Stop::NeedsInput(Pending { message, form })) => Some(CallOutcome::InputRequired {
                message,
                answered: std::mem::take(&mut state.answers),
                form,
            }),
            Some(Stop::Busy(why)) => Some(CallOutcome::Failed(vec![
                Issue::new(ErrorCode::Transient, format!("{why}; nothing was changed")).hint(
                    "answer or dismiss the confirmations already open, then call the tool again",
                ),
            ])),
            _ => refused("the confirmation could not be asked; the tool did not run"),
        },
    }
}

/// Whether `mime` looks like a MIME type, `type/subtype` (parameters after
/// `;` allowed); its top-level type, lower case, when it does.
fn mime_top(mime: &str) -> Option<String> {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let (top, sub) = essence.split_once('/')?;
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-".contains(c))
    };
    (token(top) && token(sub)).then(|| top.to_ascii_lowercase())
}

/// Checks content blocks (a tool's result, a prompt's messages): every
/// MIME type well formed and fitting its block, every URI and name
/// present. Returns how many bytes they hold (text, bytes before base64,
/// URIs, names and titles), or what is wrong, naming the block by its
/// place (from 1).
pub fn check_blocks<'a>(blocks: impl IntoIterator<Item = &'a Block>) -> Result<usize, String> {
    let mut bytes = 0usize;
    for (i, block) in blocks.into_iter().enumerate() {
        let n = i + 1;
        let mime_ok = |mime: &str, kind: &str| -> Result<(), String> {
            match mime_top(mime) {
                None => Err(format!(
                    "content block {n} ({kind}) has the MIME type {mime:?}, which is not of the form type/subtype"
                )),
                Some(top) if (kind == "image" || kind == "audio") && top != kind => Err(format!(
                    "content block {n} is an {kind} block with the MIME type {mime:?}; an {kind} block needs an {kind}/* type"
                )),
                Some(_) => Ok(()),
            }
        };
        bytes += match block {
            Block::Text(text) => text.len(),
            Block::Image(m) | Block::Audio(m) => {
                let kind = if matches!(block, Block::Image(_)) {
                    "image"
                } else {
                    "audio"
                };
                mime_ok(&m.mime_type, kind)?;
                if m.data.is_empty() {
                    return Err(format!("content block {n} ({kind}) has no data"));
                }
                m.mime_type.len() + m.data.len()
            }
            Block::Resource(r) => {
                if r.uri.is_empty() {
                    return Err(format!("content block {n} (resource) has no URI"));
                }
                if let Some(mime) = &r.mime_type {
                    mime_ok(mime, "resource")?;
                }
                r.uri.len()
                    + r.mime_type.as_ref().map_or(0, String::len)
                    + match &r.body {
                        Body::Text(t) => t.len(),
                        Body::Blob(b) => b.len(),
                    }
            }
            Block::ResourceLink(l) => {
                if l.uri.is_empty() || l.name.is_empty() {
                    return Err(format!(
                        "content block {n} (resource link) needs a URI and a name"
                    ));
                }
                if let Some(mime) = &l.mime_type {
                    mime_ok(mime, "resource link")?;
                }
                [
                    Some(&l.uri),
                    Some(&l.name),
                    l.title.as_ref(),
                    l.description.as_ref(),
                    l.mime_type.as_ref(),
                ]
                .into_iter()
                .flatten()
                .map(String::len)
                .sum()
            }
        };
    }
    Ok(bytes)
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
    let options = CallOptions {
        confirmer,
        progress,
        hooks,
        ask_first: None,
        caller_credentials: Vec::new(),
        log_sink: None,
    };
    run_call_with(env, plugin, tool, arguments, options).await
}

/// What one call is run with, beyond the plugin, the tool and the
/// arguments.
pub struct CallOptions {
    /// Who answers the call's questions.
    pub confirmer: Box<dyn Confirmer>,
    /// Where progress goes, if the client asked for it.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Who hears what the call does.
    pub hooks: Arc<dyn CallHooks>,
    /// A question the host asks the user, as written, before the component
    /// is even instantiated (an embedder's policy wanting a yes for this
    /// call). Anything but a yes ends the call with nothing run. A yes lets
    /// the tool run; it is not the confirmation a mutation needs, which
    /// stays the tool's own question's.
    pub ask_first: Option<String>,
    /// The values of the plugin's per-caller credentials
    /// ([`Credential::per_caller`](crate::settings::Credential::per_caller))
    /// for this call's caller, by the credential's index; empty when there
    /// are none.
    pub caller_credentials: Vec<Option<String>>,
    /// Where the call's log messages go besides the operator's log (the
    /// client, for a block that opted in); `None`: the operator's log
    /// alone.
    pub log_sink: Option<Arc<dyn crate::imports::log::LogSink>>,
}

/// [`run_call_with_hooks`] with every option ([`CallOptions`]).
pub async fn run_call_with(
    env: &CallEnv,
    plugin: &Arc<Plugin>,
    tool: &Arc<ToolSpec>,
    arguments: &Value,
    options: CallOptions,
) -> CallOutcome {
    let CallOptions {
        confirmer,
        progress,
        hooks,
        ask_first,
        caller_credentials,
        log_sink,
    } = options;
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
    let queued = std::time::Instant::now();
    let turn = Turn::take(&plugin.concurrency).await;
    let _slot = env.runtime.slots.acquire().await;
    let queue = queued.elapsed();

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
    state.caller_credentials = Arc::from(caller_credentials);
    state.log_sink = log_sink;
    let mut store = new_store(&env.runtime, state);
    let started = std::time::Instant::now();
    let mut cpu = std::time::Duration::ZERO;
    let outcome = run_in_store(&mut store, plugin, tool, arguments, ask_first, &mut cpu).await;
    let cost = cost_of(store.data(), queue, started.elapsed(), cpu, &outcome);
    store.data().hooks.finished(&cost);
    outcome
}

/// What the call in `store` cost, from what its state measured.
fn cost_of(
    state: &CallState,
    queue: std::time::Duration,
    run: std::time::Duration,
    cpu: std::time::Duration,
    outcome: &CallOutcome,
) -> crate::cost::CallCost {
    use crate::cost::micros;
    let record = state.outbound.lock().expect("not poisoned");
    let output_limit = matches!(outcome, CallOutcome::Failed(issues)
        if issues.iter().any(|i| i.message.contains("limits.output_bytes")));
    let limit = state
        .limit_hit
        .or(record.limit_hit)
        .or(state.limiter_hit().then_some("limits.memory_mib"))
        .or(output_limit.then_some("limits.output_bytes"));
    crate::cost::CallCost {
        cpu_us: micros(cpu),
        queue_us: micros(queue),
        run_us: micros(run),
        upstream_us: micros(record.upstream_time),
        waiting_us: micros(state.waited_for_person),
        peak_memory_bytes: state.peak_memory(),
        epoch_ticks: state.epoch_ticks,
        upstream_requests: record.requests_made,
        bytes_out: record.bytes_out,
        bytes_in: record.bytes_in,
        hosts: record.hosts.clone(),
        limit: limit.map(str::to_string),
    }
}

/// The part of [`run_call_with`] that runs in the call's store: the host's
/// question, the component, and what came of it; CPU time of running the
/// component added to `cpu`.
async fn run_in_store(
    store: &mut wasmtime::Store<CallState>,
    plugin: &Arc<Plugin>,
    tool: &Arc<ToolSpec>,
    arguments: &Value,
    ask_first: Option<String>,
    cpu: &mut std::time::Duration,
) -> CallOutcome {
    let mut store = store;
    let arguments = arguments.to_string();

    if let Some(question) = ask_first {
        let state = store.data_mut();
        state.host_asked = true;
        let asked = state.ask_user(question).await;
        if let Some(stop) = host_question_stop(state, asked) {
            return stop;
        }
    }

    // The future is dropped before the store is read again.
    let result = {
        let run = async {
            let instance = plugin.pre.instantiate_async(&mut store).await?;
            match &plugin.tools_export {
                ToolsExport::V0_1(indices) => {
                    let guest = indices.load(&mut store, &instance)?;
                    let output = guest.call_call(&mut store, &tool.name, &arguments).await?;
                    Ok(output.map(|json| ToolOutput {
                        structured: Some(json),
                        content: Vec::new(),
                    }))
                }
                ToolsExport::V0_3(indices) => {
                    let guest = indices.load(&mut store, &instance)?;
                    guest.call_call(&mut store, &tool.name, &arguments).await
                }
            }
        };
        let run = std::pin::pin!(run);
        crate::cost::CpuTimed {
            inner: run,
            total: cpu,
        }
        .await
    };

    let state = store.data_mut();
    let stop = state.take_stop();
    // A broken rule ends the call before anything else it did counts,
    // a question it asked afterwards included.
    if let Some(violation) = state.take_violation() {
        return CallOutcome::Failed(vec![Issue::new(ErrorCode::PermissionDenied, violation)
            .hint("the host only lets a tool change things after the user confirms, and never lets a read-only tool")]);
    }
    if let Some(Stop::NeedsInput(Pending { message, form })) = stop {
        return CallOutcome::InputRequired {
            message,
            answered: std::mem::take(&mut state.answers),
            form,
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
        Ok(Ok(output)) => finish_output(output, tool, limits.output_bytes),
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

/// What a tool returned, checked: its JSON and blocks together within
/// `limits.output_bytes` (`max_bytes`), its blocks' MIME types, its JSON
/// parsed, and JSON present when the tool declares an output schema.
fn finish_output(output: ToolOutput, tool: &ToolSpec, max_bytes: u64) -> CallOutcome {
    let failed =
        |message: String| CallOutcome::Failed(vec![Issue::new(ErrorCode::Internal, message)]);
    let blocks = match check_blocks(&output.content) {
        Ok(bytes) => bytes,
        Err(why) => return failed(format!("the tool's result was refused: {why}")),
    };
    let json = output.structured.as_ref().map_or(0, String::len);
    let total = json.saturating_add(blocks);
    if total as u64 > max_bytes {
        return failed(if output.content.is_empty() {
            format!("the tool's output ({total} bytes) exceeds limits.output_bytes ({max_bytes})")
        } else {
            format!(
                "the tool's output ({total} bytes: {json} of JSON, {blocks} of content blocks) exceeds limits.output_bytes ({max_bytes})"
            )
        });
    }
    let structured = match output.structured.as_deref().map(serde_json::from_str) {
        None => None,
        Some(Ok(value)) => Some(value),
        Some(Err(e)) => return failed(format!("the tool returned output that is not JSON: {e}")),
    };
    match structured {
        Some(value) if output.content.is_empty() => CallOutcome::Success(value),
        None if tool.output_schema.is_some() => {
            failed("the tool declares an output schema but returned no structured result".into())
        }
        structured => CallOutcome::Content {
            structured,
            content: output.content,
        },
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
    fn blocks_need_mime_types_that_fit_them_and_count_every_byte() {
        let image = |mime: &str| {
            Block::Image(Media {
                mime_type: mime.into(),
                data: vec![1, 2, 3],
            })
        };
        assert_eq!(
            check_blocks(&[Block::Text("ab".into()), image("image/png")]),
            Ok(2 + "image/png".len() + 3)
        );
        assert!(check_blocks(&[image("image/svg+xml; charset=utf-8")]).is_ok());
        let wrong = check_blocks(&[Block::Text("a".into()), image("text/plain")]).unwrap_err();
        assert!(
            wrong.contains("content block 2") && wrong.contains("image/*"),
            "{wrong}"
        );
        assert!(check_blocks(&[image("png")]).is_err());
        let audio = Block::Audio(Media {
            mime_type: "image/png".into(),
            data: vec![1],
        });
        assert!(check_blocks(&[audio]).unwrap_err().contains("audio/*"));
        let link = Block::ResourceLink(ResourceLink {
            uri: String::new(),
            name: "n".into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        });
        assert!(check_blocks(&[link]).is_err());
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
