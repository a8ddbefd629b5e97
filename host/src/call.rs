//! Running one tool call in a fresh instance.
//!
//! The flow, top to bottom:
//! 1. [`run_call`] checks the arguments against the tool's schema;
//! 2. waits for the plugin's concurrency permit and a pool slot (while the
//!    call waits for a human's answer it gives the permit back, and only a
//!    bounded number of calls may wait at once: see [`WaitingForUser`]);
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

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
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
    /// (2026-07-28 clients). `answered` holds the questions already asked
    /// and answered in earlier rounds of this call, in order.
    InputRequired {
        /// The prompt for the user: the host's line, then the tool's question.
        message: String,
        /// Answers from earlier rounds, each with the question it answered.
        answered: Vec<Answer>,
    },
}

/// A question's fingerprint: the SHA-256 of the prompt the user was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuestionHash(pub [u8; 32]);

impl QuestionHash {
    /// The fingerprint of `prompt`.
    pub fn of(prompt: &str) -> QuestionHash {
        QuestionHash(Sha256::digest(prompt.as_bytes()).into())
    }
}

/// One answered confirmation: what was asked and what the user said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The prompt's fingerprint.
    pub question: QuestionHash,
    /// The answer.
    pub outcome: Outcome,
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

    /// Whether asking waits for a human (an elicitation, a terminal). Such
    /// a wait gives the plugin's concurrency permit back and counts against
    /// [`WaitingForUser`]; an answer known at once does neither.
    fn waits_for_user(&self) -> bool {
        true
    }

    /// Whether its answers are new ones, counted in the metrics
    /// (`toolhost_confirmations_total`) when given. A replay of answers the
    /// client already sent is not: those were counted when they arrived.
    fn answers_afresh(&self) -> bool {
        true
    }
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

    fn waits_for_user(&self) -> bool {
        false
    }
}

/// Most calls that may wait for a human's answer at once, host-wide: half
/// the instance pool, so calls nobody answers can never take every slot.
pub const MAX_WAITING_FOR_USER: u32 = crate::engine::MAX_INSTANCES / 2;

/// Counts the calls waiting for a human's answer, host-wide and per plugin
/// block. A waiting call keeps its instance (and so its pool slot) alive,
/// so the count is capped below the pool size: [`MAX_WAITING_FOR_USER`]
/// host-wide, and a block's `limits.concurrent_calls` per block. A call
/// past either cap is not queued: it ends with a retryable error.
#[derive(Debug, Default)]
pub struct WaitingForUser {
    counts: Mutex<WaitCounts>,
}

#[derive(Debug, Default)]
struct WaitCounts {
    total: u32,
    by_block: HashMap<String, u32>,
}

/// Holds one place among the calls waiting for a human; gives it back
/// when dropped.
#[derive(Debug)]
pub struct WaitingPlace {
    waits: Arc<WaitingForUser>,
    block: String,
}

impl WaitingForUser {
    /// Takes a place for a call of the plugin block `block`, whose cap is
    /// `block_cap`; `Err` says which cap is full.
    pub fn enter(self: &Arc<Self>, block: &str, block_cap: u32) -> Result<WaitingPlace, String> {
        let mut counts = self.counts.lock().expect("not poisoned");
        if counts.total >= MAX_WAITING_FOR_USER {
            return Err(format!(
                "{MAX_WAITING_FOR_USER} calls are already waiting for a user's answer, the most the host allows at once"
            ));
        }
        let of_block = counts.by_block.get(block).copied().unwrap_or(0);
        if of_block >= block_cap {
            return Err(format!(
                "{of_block} calls of plugin {block} are already waiting for a user's answer (limits.concurrent_calls = {block_cap})"
            ));
        }
        counts.total += 1;
        *counts.by_block.entry(block.to_string()).or_default() += 1;
        Ok(WaitingPlace {
            waits: self.clone(),
            block: block.to_string(),
        })
    }

    /// How many calls are waiting now.
    pub fn total(&self) -> u32 {
        self.counts.lock().expect("not poisoned").total
    }
}

impl Drop for WaitingPlace {
    fn drop(&mut self) {
        let mut counts = self.waits.counts.lock().expect("not poisoned");
        counts.total -= 1;
        if let Some(n) = counts.by_block.get_mut(&self.block) {
            *n -= 1;
            if *n == 0 {
                counts.by_block.remove(&self.block);
            }
        }
    }
}

/// The turns of each plugin block: one semaphore of
/// `limits.concurrent_calls` permits per block, shared by every file the
/// block's `files` match and kept across reloads.
#[derive(Debug, Default)]
pub struct BlockTurns {
    /// By block name and number of turns.
    by_block: Mutex<HashMap<(String, u32), Arc<Semaphore>>>,
}

impl BlockTurns {
    /// The semaphore of the block `block` with `permits` turns, made the
    /// first time. A reloaded configuration that changes the number gets
    /// another semaphore: calls running keep the turns they hold, new calls
    /// take turns among the new number (and a reload that is refused, or
    /// undone, finds the running one again).
    pub fn for_block(&self, block: &str, permits: u32) -> Arc<Semaphore> {
        self.by_block
            .lock()
            .expect("not poisoned")
            .entry((block.to_string(), permits))
            .or_insert_with(|| Arc::new(Semaphore::new(permits as usize)))
            .clone()
    }
}

/// A call's turn among the plugin's `limits.concurrent_calls`: the permit,
/// given back while the call waits for a human and taken again after.
pub(crate) struct Turn {
    semaphore: Arc<Semaphore>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Turn {
    /// Waits for a turn.
    pub(crate) async fn take(semaphore: &Arc<Semaphore>) -> Turn {
        let permit = match semaphore.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                tracing::debug!("waiting for a turn (limits.concurrent_calls)");
                semaphore
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed")
            }
        };
        Turn {
            semaphore: semaphore.clone(),
            permit: Some(permit),
        }
    }

    /// Gives the permit back (while waiting for a human).
    pub(crate) fn release(&mut self) {
        self.permit = None;
    }

    /// Takes the permit again, waiting if others hold them all.
    pub(crate) async fn resume(&mut self) {
        if self.permit.is_none() {
            self.permit = Some(
                self.semaphore
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed"),
            );
        }
    }
}

/// Caps the call's linear memory, all of its memories together, and its
/// tables; remembers whether the cap was hit so the error can name the
/// limit.
struct MemoryCap {
    max_bytes: usize,
    /// Bytes of every memory of the store together.
    used: usize,
    /// The growth granted last, taken back if the growth then failed.
    last_grant: usize,
    hit: bool,
}

impl MemoryCap {
    fn new(max_bytes: usize) -> MemoryCap {
        MemoryCap {
            max_bytes,
            used: 0,
            last_grant: 0,
            hit: false,
        }
    }
}

/// Largest table a guest may grow (elements). Rust guests use a few hundred.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Called with `current = 0` when a memory is created, so every
        // memory of the store is counted from its first page.
        let grant = desired.saturating_sub(current);
        if self.used.saturating_add(grant) > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
        self.used += grant;
        self.last_grant = grant;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.used -= std::mem::take(&mut self.last_grant);
        Ok(())
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
    /// Too many calls are waiting for a human; the text says which cap.
    /// Retryable.
    Busy(String),
    /// A mutation was refused because the audit trail cannot record it;
    /// the text says why. Retryable once the operator fixes the trail.
    Unaudited(String),
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
    /// The component's file name, for the confirmation prompt.
    pub(crate) file: String,
    /// The shared HTTP client.
    pub(crate) http: HttpClient,
    /// Who answers confirmations.
    pub(crate) confirmer: Box<dyn Confirmer>,
    /// Where progress goes, if the client asked for it.
    pub(crate) progress: Option<Arc<dyn ProgressSink>>,
    /// This call's confirmations so far: each prompt's fingerprint and
    /// its answer.
    pub(crate) answers: Vec<Answer>,
    /// Whether the latest answer in this call is a yes: the gate for
    /// mutations. Any other answer takes an earlier yes back.
    pub(crate) confirmed: bool,
    /// The call's turn among the plugin's concurrent calls, if it holds one.
    pub(crate) turn: Option<Turn>,
    /// Where calls waiting for a human are counted.
    pub(crate) waits: Arc<WaitingForUser>,
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
    /// The call's audit record, when `host.audit` is set.
    pub(crate) audit: Option<Arc<crate::audit::CallAudit>>,
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
            limiter: MemoryCap::new(limits.memory_bytes as usize),
            deadline: Instant::now() + limits.call_timeout,
            log: LogBudget::new(settings.clone(), tool.clone()),
            file: settings.name.clone(),
            settings,
            tool,
            http,
            confirmer,
            progress,
            answers: Vec::new(),
            confirmed: false,
            turn: None,
            waits: Arc::default(),
            requests_made: 0,
            violation: None,
            stop: None,
            audit: None,
        }
    }

    /// Whether the call hit its memory limit (`limits.memory_mib`).
    pub(crate) fn limiter_hit(&self) -> bool {
        self.limiter.hit
    }

    /// Time left before the deadline.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

/// Creates a store for `state` with the memory cap, the copy budget and
/// the deadline armed.
pub(crate) fn new_store(runtime: &Runtime, state: CallState) -> Store<CallState> {
    let copy_budget = hostcall_copy_budget(&state.settings.limits);
    let mut store = Store::new(&runtime.engine, state);
    store.limiter(|s| &mut s.limiter);
    // What one host call may copy out of the guest (strings, lists): no
    // more than the guest may hold, instead of wasmtime's default 128 MiB.
    // A guest pointing many list entries at one string cannot make the
    // host allocate more than its own memory limit.
    store.set_hostcall_fuel(copy_budget);
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

/// Bytes one host call may copy out of a guest with `limits`: its memory
/// limit (`limits.memory_mib`).
pub(crate) fn hostcall_copy_budget(limits: &crate::config::Limits) -> usize {
    limits.memory_bytes as usize
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
    run_call_audited(env, plugin, tool, arguments, confirmer, progress, None).await
}

/// [`run_call`], recording into `audit` what the call asks and sends; a
/// mutation the audit trail cannot record first is refused.
pub async fn run_call_audited(
    env: &CallEnv,
    plugin: &Arc<Plugin>,
    tool: &Arc<ToolSpec>,
    arguments: &Value,
    confirmer: Box<dyn Confirmer>,
    progress: Option<Arc<dyn ProgressSink>>,
    audit: Option<Arc<crate::audit::CallAudit>>,
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
    state.audit = audit;
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
    // A broken rule ends the call before anything else it did counts,
    // a question it asked afterwards included.
    if let Some(violation) = state.violation.take() {
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
    fn every_memory_of_a_store_counts_against_one_limit() {
        let mut cap = MemoryCap::new(64 << 20);
        assert!(cap.memory_growing(0, 40 << 20, None).unwrap());
        assert!(
            !cap.memory_growing(0, 40 << 20, None).unwrap(),
            "a second memory shares the first one's limit"
        );
        assert!(cap.hit);
        assert!(cap.memory_growing(0, 20 << 20, None).unwrap());
        assert!(cap.memory_growing(40 << 20, 44 << 20, None).unwrap());
        assert!(!cap.memory_growing(44 << 20, 45 << 20, None).unwrap());
    }

    #[test]
    fn a_growth_that_failed_is_given_back() {
        let mut cap = MemoryCap::new(64 << 20);
        assert!(cap.memory_growing(0, 60 << 20, None).unwrap());
        cap.memory_grow_failed(wasmtime::format_err!("no memory"))
            .unwrap();
        assert!(cap.memory_growing(0, 60 << 20, None).unwrap());
    }

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

    #[test]
    fn waiting_for_users_is_capped_per_block_and_host_wide() {
        let waits = Arc::new(WaitingForUser::default());
        let a = waits.enter("a", 1).unwrap();
        assert!(
            waits
                .enter("a", 1)
                .unwrap_err()
                .contains("limits.concurrent_calls")
        );
        let mut held = Vec::new();
        for _ in 1..MAX_WAITING_FOR_USER {
            held.push(waits.enter("b", u32::MAX).unwrap());
        }
        assert!(waits.enter("c", 1).unwrap_err().contains("already waiting"));
        drop(a);
        assert_eq!(waits.total(), MAX_WAITING_FOR_USER - 1);
        assert!(waits.enter("a", 1).is_ok());
    }
}
