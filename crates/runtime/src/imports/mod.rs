//! A call's store data, [`CallState`], and the host side of each WIT
//! import, implemented on it.
//!
//! [`CallState`] holds everything a call's imports may use and nothing
//! else: the plugin's settings, who answers confirmations, where progress
//! goes, the deadline, counters, and the [`CallHooks`] that hear what the
//! call does. `new_store` builds its [`Store`] with the memory cap, the
//! copy budget and the deadline armed.
//!
//! | import     | module        | what it may touch                                   |
//! |------------|---------------|-----------------------------------------------------|
//! | `http`     | [`http`]      | destinations the plugin's policy allows, nothing else |
//! | `confirm`  | [`confirm`]   | the call's [`Confirmer`]                            |
//! | `log`      | [`log`]       | the host's log (stderr)                              |
//! | `config`   | [`config`]    | the plugin's `config` values                         |
//! | `progress` | [`progress`]  | the call's progress sink, if any                     |
//! | `form` (0.3) | [`form`]    | the call's [`Confirmer`], like `confirm`            |
//!
//! | `wasi:http` | [`wasi_http`] | the same as `http`: one policy path for both         |
//!
//! WASI is linked with an empty context: no environment, arguments, files or
//! sockets; clocks and randomness work.
//!
//! **Architecture invariant:** the imports never name `call`, `audit` or
//! `metrics`: what a call does is reported through its [`CallHooks`], and
//! who runs the call (`call`) is above them.

pub mod config;
pub mod confirm;
pub mod form;
pub mod http;
pub mod log;
pub mod progress;
pub mod wasi_http;

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::{Plugin as PluginWorld, types};
use crate::engine::{Runtime, Turn, WaitingForUser};
use crate::hooks::{CallHooks, NoHooks};
use crate::settings::PluginSettings;
use crate::spec::ToolSpec;
use confirm::{Answer, Confirmer};
use http::{HttpClient, OutboundRecord};
use log::LogBudget;
use progress::ProgressSink;

impl types::Host for CallState {}

/// A linker with WASI and every toolhost import.
pub fn linker(engine: &wasmtime::Engine) -> Result<Linker<CallState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    PluginWorld::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
    // Contract 0.3's one new import; older components do not import it.
    crate::bindings::v0_3::form::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
    Ok(linker)
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
    /// The most `used` has been, for the call's cost.
    peak: usize,
}

impl MemoryCap {
    fn new(max_bytes: usize) -> MemoryCap {
        MemoryCap {
            max_bytes,
            used: 0,
            last_grant: 0,
            hit: false,
            peak: 0,
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
        self.peak = self.peak.max(self.used);
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
    /// The answer must be collected by the client.
    NeedsInput(Pending),
    /// A limit was reached; the text names it.
    Limit(String),
    /// Too many calls are waiting for a human; the text says which cap.
    /// Retryable.
    Busy(String),
    /// A mutation was refused because the audit trail cannot record it;
    /// the text says why. Retryable once the operator fixes the trail.
    Unaudited(String),
}

/// The question a call stopped at, for the client to answer in another
/// round.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The prompt: the host's line, then the tool's words.
    pub message: String,
    /// For a form, its schema (JSON Schema text); `None` for a
    /// confirmation.
    pub form: Option<String>,
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
    /// The values of the plugin's per-caller credentials for this call's
    /// caller, by the index of the credential (`None`: the caller has
    /// none).
    pub(crate) caller_credentials: Arc<[Option<String>]>,
    /// Where progress goes, if the client asked for it.
    pub(crate) progress: Option<Arc<dyn ProgressSink>>,
    /// Where log messages go besides the operator's log, if anywhere.
    pub(crate) log_sink: Option<Arc<dyn log::LogSink>>,
    /// This call's confirmations and forms so far: each prompt's
    /// fingerprint and its answer (the host's own question first, when it
    /// asked one).
    pub(crate) answers: Vec<Answer>,
    /// Whether the host asked its own question before the tool ran (not
    /// counted against `limits.confirmations_per_call`).
    pub(crate) host_asked: bool,
    /// Whether the latest answer in this call is a yes: the gate for
    /// mutations. Any other answer takes an earlier yes back.
    pub(crate) confirmed: bool,
    /// The call's turn among the plugin's concurrent calls, if it holds one.
    pub(crate) turn: Option<Turn>,
    /// Where calls waiting for a human are counted.
    pub(crate) waits: Arc<WaitingForUser>,
    /// What the call's HTTP requests left behind (requests made, a rule
    /// broken, a mutation the audit trail could not record), shared with
    /// `wasi:http` requests still in flight.
    pub(crate) outbound: Arc<std::sync::Mutex<OutboundRecord>>,
    /// `wasi:http`'s own state (its resources live in `table`).
    wasi_http: wasmtime_wasi_http::WasiHttpCtx,
    /// The policy hooks `wasi:http` sends through, refreshed from this
    /// state on every `wasi:http` host call.
    wasi_http_hooks: wasi_http::PolicyHooks,
    /// Set when the host stopped the call.
    pub(crate) stop: Option<Stop>,
    /// When the call's time is up. Time spent waiting for the user moves it.
    pub(crate) deadline: Instant,
    /// What the call may still write to the log; reports what it dropped
    /// when the call ends.
    pub(crate) log: LogBudget,
    /// Who hears what the call does (the audit record, the metrics):
    /// upstream requests, denials, confirmations.
    pub(crate) hooks: Arc<dyn CallHooks>,
    /// Epoch ticks at which the guest was found running, for the cost.
    pub(crate) epoch_ticks: u64,
    /// Time spent waiting for a person, for the cost.
    pub(crate) waited_for_person: std::time::Duration,
    /// The limit the call hit, by its key, for the cost.
    pub(crate) limit_hit: Option<&'static str>,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl wasmtime_wasi_http::WasiHttpView for CallState {
    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        // The hooks see the call as it is now (its latest confirmation,
        // its deadline), as `toolhost:plugin/http`'s `send` does.
        self.wasi_http_hooks.outbound = Some(self.outbound());
        wasmtime_wasi_http::WasiHttpCtxView {
            ctx: &mut self.wasi_http,
            table: &mut self.table,
            hooks: &mut self.wasi_http_hooks,
        }
    }
}

impl CallState {
    /// A rule the call broke, if it broke one (taken: asked once, when the
    /// call ends).
    pub(crate) fn take_violation(&mut self) -> Option<String> {
        self.outbound.lock().expect("not poisoned").violation.take()
    }

    /// Why the host ended the call early, if it did (taken).
    pub(crate) fn take_stop(&mut self) -> Option<Stop> {
        let from_http = self.outbound.lock().expect("not poisoned").stop.take();
        self.stop.take().or(from_http)
    }

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
            caller_credentials: Arc::from(Vec::new()),
            progress,
            log_sink: None,
            answers: Vec::new(),
            host_asked: false,
            confirmed: false,
            turn: None,
            waits: Arc::default(),
            outbound: Arc::default(),
            wasi_http: wasmtime_wasi_http::WasiHttpCtx::new(),
            wasi_http_hooks: wasi_http::PolicyHooks::default(),
            stop: None,
            hooks: Arc::new(NoHooks),
            epoch_ticks: 0,
            waited_for_person: std::time::Duration::ZERO,
            limit_hit: None,
        }
    }

    /// The peak bytes of the call's linear memories together.
    pub(crate) fn peak_memory(&self) -> u64 {
        self.limiter.peak as u64
    }

    /// Whether the call hit its memory limit (`limits.memory_mib`).
    pub(crate) fn limiter_hit(&self) -> bool {
        self.limiter.hit
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
        state.epoch_ticks += 1;
        if Instant::now() >= state.deadline {
            state.limit_hit = Some("limits.call_timeout_secs");
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
pub(crate) fn hostcall_copy_budget(limits: &crate::settings::Limits) -> usize {
    limits.memory_bytes as usize
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
}
