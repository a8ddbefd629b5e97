//! Running one tool call in a fresh instance.
//!
//! The flow, top to bottom:
//! 1. [`run_call`] checks the arguments against the tool's schema;
//! 2. waits for the plugin's concurrency permit and a pool slot;
//! 3. builds a [`Store`] whose data is a [`CallState`]: everything the
//!    imports may use during this call and nothing else (the plugin's
//!    settings, who answers confirmations, where progress goes, the
//!    deadline, counters);
//! 4. instantiates the pre-linked component and calls `tools.call`;
//! 5. turns what happened (output, tool error, trap, limit, policy
//!    violation, a confirmation that needs the client) into a
//!    [`CallOutcome`].
//!
//! Nothing survives between calls: the store and instance are dropped at the
//! end, whatever happened.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::confirm::Outcome;
use crate::bindings::types::{ErrorCode, ToolError};
use crate::config::PluginSettings;
use crate::engine::Runtime;
use crate::imports::http::HttpClient;
use crate::imports::log::LogBudget;
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
    /// (2026-07-28 clients). `answered` holds the outcomes already given in
    /// earlier rounds of this call, in order.
    InputRequired {
        /// The question for the user.
        message: String,
        /// Answers from earlier rounds.
        answered: Vec<Outcome>,
    },
}

/// What a [`Confirmer`] says about one question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// The answer.
    Answered(Outcome),
    /// The answer must come from the client in another round; end the call.
    NeedsInput,
}

/// A boxed future, as the traits below return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Answers a call's confirmation questions. Which one a call gets depends on
/// the client: elicitation (legacy), input-required rounds (2026-07-28), the
/// operator's policy (no elicitation), or a terminal (`toolhost call`).
pub trait Confirmer: Send {
    /// Asks `message`.
    fn ask<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Asked>;
}

/// Receives a call's progress reports.
pub trait ProgressSink: Send + Sync {
    /// Forwards one report.
    fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'_, ()>;
}

/// Answers every question with one fixed outcome.
pub struct FixedAnswer(pub Outcome);

impl Confirmer for FixedAnswer {
    fn ask<'a>(&'a mut self, _message: &'a str) -> BoxFuture<'a, Asked> {
        let answer = self.0;
        Box::pin(async move { Asked::Answered(answer) })
    }
}

/// Caps linear memory and tables, and remembers whether the cap was hit so
/// the error can name the limit.
struct MemoryCap {
    max_bytes: usize,
    hit: bool,
}

/// Largest table a guest may grow (elements). Rust guests use a few hundred.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// Why the host ended a call early.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// The confirmation must be collected by the client.
    NeedsInput(String),
    /// A limit was reached; the text names it.
    Limit(String),
}

/// Everything a call's imports may use: the data of its [`Store`].
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryCap,
    /// The plugin's settings (policy, values, limits).
    pub(crate) settings: Arc<PluginSettings>,
    /// The tool being called.
    pub(crate) tool: Arc<ToolSpec>,
    /// The shared HTTP client.
    pub(crate) http: HttpClient,
    /// Who answers confirmations.
    pub(crate) confirmer: Box<dyn Confirmer>,
    /// Where progress goes, if the client asked for it.
    pub(crate) progress: Option<Arc<dyn ProgressSink>>,
    /// Outcomes of this call's confirmations so far.
    pub(crate) outcomes: Vec<Outcome>,
    /// Whether the user confirmed in this call: the gate for mutations.
    pub(crate) confirmed: bool,
    /// HTTP requests made so far (redirect hops included).
    pub(crate) requests_made: u32,
    /// A rule the tool broke; the call fails with it whatever it returns.
    pub(crate) violation: Option<String>,
    /// Set when the host stopped the call.
    pub(crate) stop: Option<Stop>,
    /// When the call's time is up. Time spent waiting for the user moves it.
    pub(crate) deadline: Instant,
    /// What the call may still write to the log; reports what it dropped
    /// when the call ends.
    pub(crate) log: LogBudget,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl CallState {
    /// State for a call of `tool` in a plugin with `settings`.
    pub(crate) fn new(
        settings: Arc<PluginSettings>,
        tool: Arc<ToolSpec>,
        http: HttpClient,
        confirmer: Box<dyn Confirmer>,
        progress: Option<Arc<dyn ProgressSink>>,
    ) -> CallState {
        let limits = &settings.limits;
        CallState {
            // No environment, arguments or preopened directories; no TCP,
            // UDP or name lookup; stdin is empty and stdout/stderr are
            // discarded. Clocks and randomness work.
            wasi: WasiCtx::builder()
                .allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false)
                .build(),
            table: ResourceTable::new(),
            limiter: MemoryCap {
                max_bytes: limits.memory_bytes as usize,
                hit: false,
            },
            deadline: Instant::now() + limits.call_timeout,
            log: LogBudget::new(settings.clone(), tool.clone()),
            settings,
            tool,
            http,
            confirmer,
            progress,
            outcomes: Vec::new(),
            confirmed: false,
            requests_made: 0,
            violation: None,
            stop: None,
        }
    }

    /// Time left before the deadline.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

/// Creates a store for `state` with the memory cap and the deadline armed.
pub(crate) fn new_store(runtime: &Runtime, state: CallState) -> Store<CallState> {
    let mut store = Store::new(&runtime.engine, state);
    store.limiter(|s| &mut s.limiter);
    // The deadline is armed before instantiation: instantiating runs guest
    // code. Every tick the callback checks the wall clock and yields to the
    // runtime, so a spinning guest neither overruns nor starves other calls.
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut ctx| {
        let state = ctx.data_mut();
        if Instant::now() >= state.deadline {
            let secs = state.settings.limits.call_timeout.as_secs_f64();
            state.stop.get_or_insert(Stop::Limit(format!(
                "the call ran past its deadline (limits.call_timeout_secs = {secs})"
            )));
            return Err(wasmtime::format_err!("call deadline reached"));
        }
        Ok(UpdateDeadline::Yield(1))
    });
    store
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
    let _turn = plugin.concurrency.acquire().await;
    let _slot = env.runtime.slots.acquire().await;

    let state = CallState::new(
        plugin.settings.clone(),
        tool.clone(),
        env.http.clone(),
        confirmer,
        progress,
    );
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
    let stop = state.stop.take();
    if let Some(Stop::NeedsInput(message)) = stop {
        return CallOutcome::InputRequired {
            message,
            answered: std::mem::take(&mut state.outcomes),
        };
    }
    let limits = &state.settings.limits;
    if let Some(violation) = state.violation.take() {
        return CallOutcome::Failed(vec![Issue::new(ErrorCode::PermissionDenied, violation)
            .hint("the host only lets a tool change things after the user confirms, and never lets a read-only tool")]);
    }
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
        Ok(Err(tool_error)) => CallOutcome::Failed(vec![tool_error.into()]),
        Err(trap) => {
            let message = if let Some(Stop::Limit(why)) = stop {
                why
            } else if state.limiter.hit {
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

/// What a trap means, in words, without the backtrace.
fn trap_summary(error: &wasmtime::Error) -> String {
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
