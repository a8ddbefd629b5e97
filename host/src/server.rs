//! The MCP server: the only module (with [`crate::confirmation`]) that knows
//! MCP's methods. It knows no transport; [`crate::transport`] serves it.
//!
//! [`Gateway`] implements rmcp's `ServerHandler` for both protocol eras in
//! one process:
//! - `tools/list` reads the current [`Registry`];
//! - `tools/call` looks the tool up (unknown: JSON-RPC `-32602`), picks the
//!   [`Confirmer`](crate::call::Confirmer) for this client, runs the call
//!   with [`run_call`], and maps the [`CallOutcome`]: success →
//!   `structuredContent` plus the same JSON as text; failure → `isError`
//!   with the envelope `{"ok":false,"result":null,"issues":[…]}`; a
//!   confirmation for a 2026-07-28 client → `input_required`;
//! - over HTTP, the caller's [`Identity`] (put into the request's
//!   extensions by [`crate::auth::http::require_identity`]) decides which
//!   plugins' tools it sees: `tools/list` leaves the others out and
//!   `tools/call` answers them exactly as an unknown tool (`[[access]]`,
//!   ADR 0012). The subject is logged with each call and never reaches the
//!   guest. Over stdio there is no identity and every tool is served;
//! - with `host.audit`, every `tools/call` of a known tool leaves one
//!   [`crate::audit`] record, written before the answer goes out (a
//!   cancelled call and a refused `requestState` too);
//! - list changes go to legacy sessions as `notifications/tools/list_changed`
//!   and to 2026-07-28 clients on their `subscriptions/listen` streams.
//!
//! Start-up (ADR 0006): [`serve_stdio`](crate::transport::serve_stdio) answers `initialize` at once and
//! loads the plugin directory in the background. `tools/list` and
//! `tools/call` wait for that initial load, up to `host.load_wait_secs`;
//! past it they answer with what is serving, and every client is sent a
//! list change once the load is in.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequest, ElicitResult,
    Implementation, InputRequest, InputRequests, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, ToolAnnotations,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext, SubscriptionSink,
};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::audit::{AuditLog, CallAudit, CallContext, Ending};
use crate::auth::Identity;
use crate::call::{BoxFuture, CallEnv, CallOutcome, Confirmer, ProgressSink, run_call_audited};
use crate::config::Config;
use crate::confirmation::{
    CallBinding, Elicit, Replay, RequestStates, StateError, elicitation_params, outcome_of,
    without_elicitation,
};
use crate::metrics;
use crate::plugin::Loader;
use crate::registry::Registry;

/// The key of the confirmation in `inputRequests` / `inputResponses`.
const CONFIRM_KEY: &str = "confirm";

/// The MCP server: shared by every request of the session.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    env: CallEnv,
    config: Arc<Config>,
    /// The tools being served; replaced whole on change.
    registry: ArcSwap<Registry>,
    /// Seals `requestState` for 2026-07-28 confirmation rounds.
    states: RequestStates,
    /// The legacy sessions' peers, each once its `initialized` arrived
    /// (one over stdio; one per `Mcp-Session-Id` over HTTP).
    legacy_peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Open `subscriptions/listen` streams (2026-07-28).
    listeners: Mutex<Vec<SubscriptionSink>>,
    /// Whether the initial load of the plugin directory is in.
    loaded: tokio::sync::watch::Sender<bool>,
    /// Whether a request was answered before the initial load was in (so
    /// its result will need a list change).
    answered_early: AtomicBool,
    /// The audit trail (`host.audit`), if any.
    audit: Option<AuditLog>,
}

impl Gateway {
    /// A gateway serving `registry`.
    pub fn new(env: CallEnv, loader: &Loader, registry: Registry) -> anyhow::Result<Gateway> {
        let gateway = Gateway::loading(env, loader)?;
        gateway.inner.registry.store(Arc::new(registry));
        gateway.inner.loaded.send_replace(true);
        Ok(gateway)
    }

    /// A gateway whose tools are still loading: it serves nothing yet, and
    /// `tools/list` and `tools/call` wait (up to `host.load_wait_secs`) for
    /// [`Gateway::publish_initial`].
    pub fn loading(env: CallEnv, loader: &Loader) -> anyhow::Result<Gateway> {
        let config = loader.config.clone();
        let audit = config.audit.clone().map(AuditLog::new);
        let states = RequestStates::configured(config.elicitation_timeout, &config.state)?;
        Ok(Gateway {
            inner: Arc::new(Inner {
                env,
                states,
                config,
                registry: ArcSwap::from_pointee(Registry::default()),
                legacy_peers: Mutex::new(Vec::new()),
                listeners: Mutex::new(Vec::new()),
                loaded: tokio::sync::watch::Sender::new(false),
                answered_early: AtomicBool::new(false),
                audit,
            }),
        })
    }

    /// Serves the initial load's `registry` from now on. Clients hear of it
    /// only if a request was answered before it was in.
    pub async fn publish_initial(&self, registry: Registry) {
        self.inner.registry.store(Arc::new(registry));
        self.inner.loaded.send_replace(true);
        if self.inner.answered_early.load(Ordering::SeqCst) {
            self.notify_tools_changed().await;
        }
    }

    /// Waits until the initial load is in, or `host.load_wait_secs` have
    /// passed since this request began waiting.
    async fn wait_until_loaded(&self) {
        if *self.inner.loaded.borrow() {
            return;
        }
        tracing::debug!("a request waits for the plugin directory to load");
        let mut loaded = self.inner.loaded.subscribe();
        let wait = tokio::time::timeout(self.inner.config.load_wait, loaded.wait_for(|l| *l));
        if !matches!(wait.await, Ok(Ok(_))) {
            // Set before the registry is read: the initial load, published
            // after that read, sees it and sends a list change.
            if !self.inner.answered_early.swap(true, Ordering::SeqCst) {
                tracing::warn!(
                    "answering before the plugin directory has loaded (host.load_wait_secs): \
                     clients get a tool-list change once it has"
                );
            }
        }
    }

    /// Whether the initial load of the plugin directory is in.
    pub fn is_loaded(&self) -> bool {
        *self.inner.loaded.borrow()
    }

    /// The registry being served.
    pub fn registry(&self) -> Arc<Registry> {
        self.inner.registry.load_full()
    }

    /// Serves `registry` from now on and tells every client its tool list
    /// changed.
    pub async fn replace_registry(&self, registry: Registry) {
        self.inner.registry.store(Arc::new(registry));
        self.notify_tools_changed().await;
    }

    /// Sends `tools/list_changed` to every legacy session and every listen
    /// stream.
    pub async fn notify_tools_changed(&self) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.inner.legacy_peers.lock().expect("not poisoned");
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!("cannot send tools/list_changed: {e}");
            }
        }
        let sinks: Vec<SubscriptionSink> =
            self.inner.listeners.lock().expect("not poisoned").clone();
        for sink in sinks {
            if let Err(e) = sink.notify_tool_list_changed().await {
                tracing::debug!("cannot notify listen stream: {e}");
            }
        }
    }

    /// Serves `registry`, built for a reloaded configuration (which it
    /// carries), from now on. Clients are told their tool list changed only
    /// if it may have: a tool's definition or served name, or the
    /// `[[access]]` rules that decide who sees it, changed.
    pub async fn replace_settings(&self, registry: Registry) {
        let before = self.registry();
        let listed = |r: &Registry| -> Vec<Value> {
            mcp_tools(r, None)
                .iter()
                .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
                .collect()
        };
        let changed = listed(&before) != listed(&registry)
            || before.config().access != registry.config().access;
        self.inner.registry.store(Arc::new(registry));
        if changed {
            self.notify_tools_changed().await;
        }
    }

    /// The tools `identity` may see (`[[access]]`), as MCP tools.
    fn mcp_tools(&self, identity: Option<&Identity>) -> Vec<Tool> {
        mcp_tools(&self.registry(), identity)
    }
}

/// The tools of `registry` that `identity` may see (by the `[[access]]`
/// rules of the configuration the registry was built for), as MCP tools,
/// under their served names.
fn mcp_tools(registry: &Registry, identity: Option<&Identity>) -> Vec<Tool> {
    registry
        .tools()
        .filter(|t| {
            registry
                .config()
                .access
                .allows(identity, &t.plugin.settings.name)
        })
        .map(|t| {
            let s = &t.spec;
            let a = &s.annotations;
            let mut tool = Tool::new(
                t.name.clone(),
                s.description.clone(),
                s.input_schema.clone(),
            )
            .with_title(s.title.clone())
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(a.read_only)
                    .destructive(a.destructive)
                    .idempotent(a.idempotent)
                    .open_world(a.open_world),
            );
            if let Some(out) = &s.output_schema {
                tool = tool.with_raw_output_schema(out.clone());
            }
            tool
        })
        .collect()
}

/// Whether the request speaks 2026-07-28 or later (no server-to-client
/// requests; confirmations travel in `input_required` results).
fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// The caller's identity: over HTTP, what authentication put into the
/// request's extensions; over stdio, none.
fn caller(ctx: &RequestContext<RoleServer>) -> Option<Identity> {
    ctx.extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<Identity>()
        .cloned()
}

/// Who calls and how, for the audit trail: the identity's subject over
/// HTTP with `[auth]`, `http` without, `stdio` otherwise; the protocol
/// version and the HTTP session.
fn audit_context(
    ctx: &RequestContext<RoleServer>,
    identity: Option<&Identity>,
    via: &'static str,
) -> CallContext {
    let parts = ctx.extensions.get::<axum::http::request::Parts>();
    let caller = match (identity, parts) {
        (Some(identity), _) => identity.subject.clone(),
        (None, Some(_)) => "http".to_string(),
        (None, None) => "stdio".to_string(),
    };
    let session = parts
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    CallContext {
        caller,
        protocol: ctx.protocol_version().map(|v| v.to_string()),
        session,
        via,
    }
}

/// Writes `audit`'s record as the call ends (a failure is logged and
/// counted by the trail; the answer stands).
async fn audit_finish(audit: &Option<Arc<CallAudit>>, ending: Ending<'_>) {
    if let Some(audit) = audit {
        let _ = audit.finish(ending).await;
    }
}

/// Whether the client declared the elicitation capability.
fn can_elicit(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some()
}

/// Forwards progress reports as `notifications/progress`.
struct PeerProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl ProgressSink for PeerProgress {
    fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
            if let Some(total) = total {
                param = param.with_total(total);
            }
            if let Some(message) = message {
                param = param.with_message(message);
            }
            if let Err(e) = self.peer.notify_progress(param).await {
                tracing::debug!("cannot send progress: {e}");
            }
        })
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Tools served by toolhost from sandboxed WebAssembly components. Tools that change \
                 data preview first (confirm=false) and ask the user before acting (confirm=true).",
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = self.inner.legacy_peers.lock().expect("not poisoned");
        peers.retain(|p| !p.is_transport_closed());
        peers.push(context.peer.clone());
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.wait_until_loaded().await;
        let identity = caller(&context);
        Ok(ListToolsResult::with_all_items(
            self.mcp_tools(identity.as_ref()),
        ))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.wait_until_loaded().await;
        // The registry and the settings it was built for: the call keeps
        // both however the configuration changes meanwhile.
        let registry = self.registry();
        let config = registry.config().clone();
        let identity = caller(&context);
        // A tool this caller may not see is unknown to it: same error, same
        // text, so the answer does not reveal that it exists.
        let visible = registry.tool(&request.name).filter(|t| {
            config
                .access
                .allows(identity.as_ref(), &t.plugin.settings.name)
        });
        let Some(tool) = visible.cloned() else {
            metrics::unknown_tool();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; call tools/list to see the tools available",
                    request.name
                ),
                None,
            ));
        };
        // Counts the call however it ends, an early return included.
        let mut counted = metrics::CallCount::start(&tool.name);
        let arguments = Value::Object(request.arguments.take().unwrap_or_default());
        let modern = is_modern(&context);
        // A sealed state belongs to this tool, these arguments and the
        // component serving the tool now.
        let binding = CallBinding {
            tool: &tool.name,
            arguments: &arguments,
            component: &tool.plugin.digest,
        };

        let via = if !can_elicit(&context) {
            "policy"
        } else if !modern {
            "elicitation"
        } else {
            "input_required"
        };
        let audit = self.inner.audit.as_ref().map(|log| {
            log.start_call(
                audit_context(&context, identity.as_ref(), via),
                &tool.plugin,
                &tool.spec,
                &tool.name,
                &arguments,
            )
        });
        let confirmer: Box<dyn Confirmer> = if !can_elicit(&context) {
            Box::new(without_elicitation(config.confirmation, &arguments))
        } else if !modern {
            Box::new(Elicit {
                peer: context.peer.clone(),
                timeout: self.inner.config.elicitation_timeout,
            })
        } else {
            match (&request.request_state, &request.input_responses) {
                (None, None) => Box::new(Replay::new(Vec::new())),
                (Some(state), Some(responses)) => {
                    let opened = match self.inner.states.open(&binding, state).await {
                        Ok(opened) => opened,
                        Err(e @ StateError::StoreUnavailable(_)) => {
                            // Nothing was spent: the same retry can succeed later.
                            counted.failed_before_running("TRANSIENT");
                            audit_finish(&audit, Ending::Refused("TRANSIENT")).await;
                            return Ok(CallToolResult::structured_error(json!({
                                "ok": false,
                                "result": null,
                                "issues": [{
                                    "code": "TRANSIENT",
                                    "message": e.to_string(),
                                    "retry_after_ms": 1000,
                                }],
                            }))
                            .into());
                        }
                        Err(e) => {
                            audit_finish(&audit, Ending::Refused("INVALID_REQUEST_STATE")).await;
                            return Err(ErrorData::invalid_params(e.to_string(), None));
                        }
                    };
                    let answer = responses.get(CONFIRM_KEY).cloned().ok_or_else(|| {
                        ErrorData::invalid_params(
                            format!("inputResponses has no {CONFIRM_KEY:?} answer"),
                            None,
                        )
                    })?;
                    let answer: ElicitResult = serde_json::from_value(answer).map_err(|e| {
                        ErrorData::invalid_params(
                            format!(
                                "inputResponses.{CONFIRM_KEY} is not an elicitation result: {e}"
                            ),
                            None,
                        )
                    })?;
                    let outcome = outcome_of(&answer);
                    metrics::confirmation_answered(outcome);
                    Box::new(Replay::new(opened.with_answer(outcome)))
                }
                _ => {
                    return Err(ErrorData::invalid_params(
                        "send requestState and inputResponses together, as the input_required result asked",
                        None,
                    ));
                }
            }
        };
        let progress: Option<Arc<dyn ProgressSink>> =
            context.meta.get_progress_token().map(|token| {
                Arc::new(PeerProgress {
                    peer: context.peer.clone(),
                    token,
                }) as _
            });

        // Every line of this call names the tool as clients know it (its
        // served name) and, over HTTP, the subject, which never reaches
        // the guest.
        let span = match &identity {
            Some(identity) => {
                let span =
                    tracing::info_span!("call", tool = %tool.name, subject = %identity.subject);
                span.in_scope(|| tracing::info!(tool = %tool.name, "tool call"));
                span
            }
            None => tracing::info_span!("call", tool = %tool.name),
        };
        let call = run_call_audited(
            &self.inner.env,
            &tool.plugin,
            &tool.spec,
            &arguments,
            confirmer,
            progress,
            audit.clone(),
        )
        .instrument(span);
        counted.running();
        let outcome = tokio::select! {
            outcome = call => outcome,
            _ = context.ct.cancelled() => {
                audit_finish(&audit, Ending::Cancelled).await;
                tracing::info!(tool = %tool.name, "call cancelled by the client");
                return Err(ErrorData::invalid_request("the request was cancelled", None));
            }
        };
        counted.finish(&outcome);
        // On record before the client hears the result.
        audit_finish(&audit, Ending::Outcome(&outcome)).await;
        Ok(match outcome {
            CallOutcome::Success(value) => CallToolResult::structured(value).into(),
            CallOutcome::Failed(issues) => CallToolResult::structured_error(
                json!({"ok": false, "result": null, "issues": issues}),
            )
            .into(),
            CallOutcome::InputRequired { message, answered } => {
                let state = self.inner.states.seal(&binding, &answered, &message);
                let mut requests = InputRequests::new();
                requests.insert(
                    CONFIRM_KEY.to_string(),
                    InputRequest::Elicitation(ElicitRequest::new(elicitation_params(&message))),
                );
                InputRequiredResult::new(Some(requests), Some(state)).into()
            }
        })
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        self.inner
            .listeners
            .lock()
            .expect("not poisoned")
            .push(sink);
        context.cancelled().await;
        self.inner
            .listeners
            .lock()
            .expect("not poisoned")
            .retain(|s| s.id() != &id);
        Ok(())
    }
}
