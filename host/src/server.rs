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
//! - with `host.audit`, every `tools/call` leaves one [`crate::audit`]
//!   record, written before the answer goes out: a cancelled call, and a
//!   call refused before it ran (an unknown or hidden tool, a forged,
//!   replayed or stale `requestState`, a missing or malformed
//!   `inputResponses`), too, with the refusal's code;
//! - list changes go to legacy sessions as `notifications/tools/list_changed`
//!   and to 2026-07-28 clients on their `subscriptions/listen` streams;
//! - what `toolhost:plugin@0.2.0` components offer beside tools (ADR 0017):
//!   `resources/list`, `resources/templates/list`, `resources/read`,
//!   `prompts/list`, `prompts/get` and `completion/complete`, each read, get
//!   and completion run by [`crate::offers`] in a fresh instance under the
//!   plugin's limits and policy. An unknown URI is MCP's resource-not-found
//!   error (`-32002`; rmcp sends 2026-07-28 clients `-32602`, as that
//!   revision asks); a guest's failure is an internal error naming the
//!   cause. A template's variables reach the guest percent-decoded; one
//!   that is not UTF-8 decoded is invalid params. Each read, get and
//!   completion that runs guest code is counted in the metrics
//!   (`toolhost_offer_calls_total`) and, with `host.audit`, leaves one
//!   audit record (`kind` and `target`, [`crate::audit`]), written before
//!   the answer. The `resources`, `prompts` and `completions` capabilities are
//!   advertised when a served component offers them, and always while the
//!   initial load runs or hot reload follows the directory (a component
//!   that offers them may appear, and capabilities are fixed for a
//!   session), with `listChanged`; a reload that
//!   touches them sends `notifications/resources/list_changed` and
//!   `notifications/prompts/list_changed` beside the tools' one;
//! - resource subscriptions (ADR 0027): `resources/subscribe` and
//!   `resources/unsubscribe` for legacy sessions (over HTTP, per
//!   `Mcp-Session-Id`), a listen stream's `resourceSubscriptions` for
//!   2026-07-28 clients; only a URI a served component offers (a resource,
//!   or one its template matches) and the caller may see, else
//!   resource-not-found; at most `host.resource_subscriptions` per session
//!   or stream. A hot or config reload that reloads, replaces or removes the
//!   component behind a subscribed URI (or changes its block's settings)
//!   sends `notifications/resources/updated` for it, after the list
//!   changes. `resources.subscribe` is advertised with `resources`.
//!
//! Start-up (ADR 0006): [`serve_stdio`](crate::transport::serve_stdio) answers `initialize` at once and
//! loads the plugin directory in the background. `tools/list` and
//! `tools/call` wait for that initial load, up to `host.load_wait_secs`;
//! past it they answer with what is serving, and every client is sent a
//! list change once the load is in.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rmcp::model::{
    Annotations, CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, Prompt, PromptArgument, PromptMessage,
    PromptsCapability, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, Resource, ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam,
    ResourcesCapability, Role, SubscribeRequestParams, UnsubscribeRequestParams,
};
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
use crate::bindings::v0_2::content::{
    Body, CompletionTarget, MessageContent, PromptDefinition, ResourceDefinition,
    ResourceTemplate as ResourceTemplateDefinition,
};
use crate::call::{BoxFuture, CallEnv, CallOutcome, Confirmer, ProgressSink, run_call_audited};
use crate::config::Config;
use crate::confirmation::{
    CallBinding, Elicit, Replay, RequestStates, StateError, elicitation_params, outcome_of,
    without_elicitation,
};
use crate::metrics;
use crate::offers::{OfferError, OfferKind};
use crate::plugin::{Loader, Plugin};
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
    /// Whether hot reload follows the plugin directory, so a component
    /// offering resources or prompts may appear at any time.
    follows_reloads: AtomicBool,
    /// Legacy sessions' resource subscriptions (`resources/subscribe`).
    subscriptions: Mutex<Vec<SessionSubscriptions>>,
    /// 2026-07-28 listen streams that subscribed to resource URIs.
    resource_listeners: Mutex<Vec<ResourceListener>>,
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
                follows_reloads: AtomicBool::new(false),
                subscriptions: Mutex::new(Vec::new()),
                resource_listeners: Mutex::new(Vec::new()),
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

    /// Notes that hot reload follows the plugin directory: the resources,
    /// prompts and completions capabilities are advertised from now on,
    /// since a component offering them may appear at any time and
    /// capabilities cannot change within a session.
    pub fn follow_reloads(&self) {
        self.inner.follows_reloads.store(true, Ordering::SeqCst);
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
    /// changed (and its resource and prompt lists, when either registry
    /// offers any).
    pub async fn replace_registry(&self, registry: Registry) {
        let before = self.inner.registry.swap(Arc::new(registry));
        self.notify_tools_changed().await;
        self.notify_offers_changed(&before).await;
        self.notify_resources_updated(&before).await;
    }

    /// Sends `resources/list_changed` when `before` or the registry now
    /// served offers resources or templates, and `prompts/list_changed` when
    /// either offers prompts, to every legacy session and listen stream.
    async fn notify_offers_changed(&self, before: &Registry) {
        let now = self.registry();
        let has_resources =
            |r: &Registry| r.resources().next().is_some() || r.templates().next().is_some();
        let resources = has_resources(before) || has_resources(&now);
        let prompts = before.prompts().next().is_some() || now.prompts().next().is_some();
        self.notify_offer_lists(resources, prompts).await;
    }

    /// Sends `resources/list_changed` if `resources`, and
    /// `prompts/list_changed` if `prompts`, to every legacy session and
    /// listen stream.
    async fn notify_offer_lists(&self, resources: bool, prompts: bool) {
        if !resources && !prompts {
            return;
        }
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.inner.legacy_peers.lock().expect("not poisoned");
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if resources && let Err(e) = peer.notify_resource_list_changed().await {
                tracing::debug!("cannot send resources/list_changed: {e}");
            }
            if prompts && let Err(e) = peer.notify_prompt_list_changed().await {
                tracing::debug!("cannot send prompts/list_changed: {e}");
            }
        }
        let sinks: Vec<SubscriptionSink> =
            self.inner.listeners.lock().expect("not poisoned").clone();
        for sink in sinks {
            if resources && let Err(e) = sink.notify_resource_list_changed().await {
                tracing::debug!("cannot notify listen stream: {e}");
            }
            if prompts && let Err(e) = sink.notify_prompt_list_changed().await {
                tracing::debug!("cannot notify listen stream: {e}");
            }
        }
    }

    /// Whether `identity` may see what the plugin block `block` serves
    /// (`[[access]]`).
    fn allows(&self, identity: Option<&Identity>, block: &str) -> bool {
        self.inner.config.access.allows(identity, block)
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
    /// `[[access]]` rules that decide who sees it, changed; their resource
    /// and prompt lists likewise; and subscribers of a URI whose block's
    /// settings changed that it was updated.
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
        // A block added or removed (`unmatched_files = "skip"`) adds or
        // removes what its components offer; a prefix renames prompts.
        let resources = |r: &Registry| -> Vec<Value> {
            let listed = r
                .resources()
                .map(|o| serde_json::to_value(mcp_resource(&o.item)));
            let templates = r
                .templates()
                .map(|t| serde_json::to_value(mcp_template(&t.item.definition)));
            listed
                .chain(templates)
                .map(|v| v.unwrap_or(Value::Null))
                .collect()
        };
        let prompts = |r: &Registry| -> Vec<Value> {
            r.prompts()
                .map(|p| serde_json::to_value(mcp_prompt(&p.key, &p.item)).unwrap_or(Value::Null))
                .collect()
        };
        let access_changed = before.config().access != registry.config().access;
        let differ = |a: Vec<Value>, b: Vec<Value>| {
            a != b || (access_changed && !(a.is_empty() && b.is_empty()))
        };
        let resources_changed = differ(resources(&before), resources(&registry));
        let prompts_changed = differ(prompts(&before), prompts(&registry));
        self.inner.registry.store(Arc::new(registry));
        if changed {
            self.notify_tools_changed().await;
        }
        self.notify_offer_lists(resources_changed, prompts_changed)
            .await;
        self.notify_resources_updated(&before).await;
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
    let protocol = ctx.protocol_version().map(|v| v.to_string());
    http_audit_context(parts, identity, protocol, via)
}

/// [`audit_context`] from what the HTTP request (if any) holds.
fn http_audit_context(
    parts: Option<&axum::http::request::Parts>,
    identity: Option<&Identity>,
    protocol: Option<String>,
    via: &'static str,
) -> CallContext {
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
        protocol,
        session,
        via,
    }
}

impl Gateway {
    /// With `host.audit`, records a `tools/call` a transport answered
    /// itself because rmcp cannot decode it (`message`, the POSTed body or
    /// the stdin line; its `params` do not fit): `refused` with
    /// `MALFORMED_REQUEST`, the tool name it sent (and its plugin, once
    /// loaded) and the hash of its `arguments`, whatever they are. `parts`
    /// is the HTTP request, `None` on stdio. Any other message is not
    /// recorded.
    pub async fn audit_malformed_call(
        &self,
        message: &[u8],
        parts: Option<&axum::http::request::Parts>,
    ) {
        let Some(log) = &self.inner.audit else {
            return;
        };
        let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        if request.get("method").and_then(Value::as_str) != Some("tools/call") {
            return;
        }
        let params = request.get("params");
        let name = params
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = params
            .and_then(|p| p.get("arguments"))
            .cloned()
            .unwrap_or(Value::Null);
        let protocol = parts
            .and_then(|p| p.headers.get("mcp-protocol-version"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let identity = parts.and_then(|p| p.extensions.get::<Identity>());
        let context = http_audit_context(parts, identity, protocol, "none");
        let plugin = self.registry().tool(name).map(|t| t.plugin.clone());
        let audit = log.start_refused(context, plugin.as_deref(), name, &arguments);
        let _ = audit.finish(Ending::Refused("MALFORMED_REQUEST")).await;
    }
}

/// The audit trail's code for a continuation whose `inputResponses` is
/// missing, malformed, or sent without its `requestState` (or the state
/// without it).
const INVALID_INPUT_RESPONSES: &str = "INVALID_INPUT_RESPONSES";

/// The audit trail's code for a refused `requestState`: a replay and a
/// state from a replaced component each have their own; anything else
/// (altered, forged, expired, another server's) is `INVALID_REQUEST_STATE`.
fn refused_state_code(error: &StateError) -> &'static str {
    match error {
        StateError::Replayed => "REPLAYED_REQUEST_STATE",
        StateError::ComponentChanged => "STALE_REQUEST_STATE",
        StateError::StoreUnavailable(_) => "TRANSIENT",
        StateError::Invalid => "INVALID_REQUEST_STATE",
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

/// What a failed read, get or completion is on the wire: the guest's
/// not-found as `not_found` says, anything else an internal error.
fn offer_error(error: OfferError, not_found: impl FnOnce(String) -> ErrorData) -> ErrorData {
    match error {
        OfferError::NotFound(message) => not_found(message),
        OfferError::Failed { message, .. } => ErrorData::internal_error(message, None),
    }
}

/// The answer to a read, get or completion the client cancelled.
fn cancelled() -> ErrorData {
    ErrorData::invalid_request("the request was cancelled", None)
}

impl Gateway {
    /// Runs one read, get or completion of `plugin`'s code (`run`, given
    /// the audit record to add upstream requests to): counted in the
    /// metrics and, with `host.audit`, recorded as `kind` of `target` with
    /// the client's `arguments` (see [`crate::audit`]) before the answer.
    /// `None` when the client cancelled it.
    async fn run_offer<T, F>(
        &self,
        context: &RequestContext<RoleServer>,
        identity: Option<&Identity>,
        plugin: &Arc<Plugin>,
        (kind, target): (OfferKind, &str),
        arguments: Value,
        run: impl FnOnce(Option<Arc<CallAudit>>) -> F,
    ) -> Option<Result<T, OfferError>>
    where
        F: std::future::Future<Output = Result<T, OfferError>>,
    {
        let mut counted = metrics::OfferCount::start(&plugin.settings.name, kind);
        let audit = self.inner.audit.as_ref().map(|log| {
            log.start_offer(
                audit_context(context, identity, "none"),
                plugin,
                kind,
                target,
                &arguments,
            )
        });
        let result = tokio::select! {
            result = run(audit.clone()) => result,
            _ = context.ct.cancelled() => {
                // Dropped unfinished: counted as cancelled, before the log line.
                drop(counted);
                audit_finish(&audit, Ending::Cancelled).await;
                tracing::info!(plugin = %plugin.file, "{} cancelled by the client", kind.label());
                return None;
            }
        };
        let ending = result.as_ref().map(|_| ()).map_err(OfferError::code);
        counted.finish(ending);
        audit_finish(&audit, Ending::Offer(ending)).await;
        Some(result)
    }
}

/// The string arguments of a request: every value must be a string.
fn string_arguments(
    arguments: Option<rmcp::model::JsonObject>,
) -> Result<Vec<(String, String)>, ErrorData> {
    arguments
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(v) => Ok((name, v)),
            other => Err(ErrorData::invalid_params(
                format!("argument {name:?} is {other}, but prompt arguments are strings"),
                None,
            )),
        })
        .collect()
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        // While the initial load runs, what components offer is not known
        // yet; under hot reload it can change at any time: then every
        // capability is advertised, and empty lists are answers.
        let registry = self.registry();
        let loading = !self.is_loaded() || self.inner.follows_reloads.load(Ordering::SeqCst);
        let plugins = || registry.plugins().filter_map(|p| p.offers.as_ref());
        if loading || plugins().any(|o| !o.resources.is_empty() || !o.templates.is_empty()) {
            let mut resources = ResourcesCapability::default();
            resources.list_changed = Some(true);
            resources.subscribe = Some(true);
            capabilities.resources = Some(resources);
        }
        if loading || plugins().any(|o| !o.prompts.is_empty()) {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = Some(true);
            capabilities.prompts = Some(prompts);
        }
        if loading || plugins().any(|o| o.completes()) {
            capabilities.completions = Some(rmcp::model::JsonObject::new());
        }
        ServerConfig::new(capabilities)
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
            if let Some(log) = &self.inner.audit {
                // Recorded for the operator: a hidden tool by its plugin.
                let hidden = registry.tool(&request.name).map(|t| t.plugin.clone());
                let code = if hidden.is_some() {
                    "PERMISSION_DENIED"
                } else {
                    "UNKNOWN_TOOL"
                };
                let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
                let audit = log.start_refused(
                    audit_context(&context, identity.as_ref(), "none"),
                    hidden.as_deref(),
                    &request.name,
                    &arguments,
                );
                let _ = audit.finish(Ending::Refused(code)).await;
            }
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
                    // The answer is read before the state is opened: opening
                    // spends it, and a client that sent a malformed answer
                    // can send the same state again with a proper one.
                    let answer = match responses.get(CONFIRM_KEY).cloned() {
                        Some(answer) => answer,
                        None => {
                            audit_finish(&audit, Ending::Refused(INVALID_INPUT_RESPONSES)).await;
                            return Err(ErrorData::invalid_params(
                                format!("inputResponses has no {CONFIRM_KEY:?} answer"),
                                None,
                            ));
                        }
                    };
                    let answer: ElicitResult = match serde_json::from_value(answer) {
                        Ok(answer) => answer,
                        Err(e) => {
                            audit_finish(&audit, Ending::Refused(INVALID_INPUT_RESPONSES)).await;
                            return Err(ErrorData::invalid_params(
                                format!(
                                    "inputResponses.{CONFIRM_KEY} is not an elicitation result: {e}"
                                ),
                                None,
                            ));
                        }
                    };
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
                            let code = refused_state_code(&e);
                            tracing::warn!(tool = %tool.name, code, "refused a requestState: {e}");
                            audit_finish(&audit, Ending::Refused(code)).await;
                            return Err(ErrorData::invalid_params(e.to_string(), None));
                        }
                    };
                    let outcome = outcome_of(&answer);
                    metrics::confirmation_answered(outcome);
                    Box::new(Replay::new(opened.with_answer(outcome)))
                }
                _ => {
                    audit_finish(&audit, Ending::Refused(INVALID_INPUT_RESPONSES)).await;
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

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.wait_until_loaded().await;
        let identity = caller(&context);
        let resources = self
            .registry()
            .resources()
            .filter(|r| self.allows(identity.as_ref(), &r.plugin.settings.name))
            .map(|r| mcp_resource(&r.item))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.wait_until_loaded().await;
        let identity = caller(&context);
        let templates = self
            .registry()
            .templates()
            .filter(|t| self.allows(identity.as_ref(), &t.plugin.settings.name))
            .map(|t| mcp_template(&t.item.definition))
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.wait_until_loaded().await;
        let registry = self.registry();
        let identity = caller(&context);
        let uri = request.uri;
        let found = match registry.resource(&uri) {
            Some(r) => Some((r.plugin.clone(), Vec::new(), r.item.uri.clone())),
            None => registry.template_for(&uri).map(|(t, variables)| {
                (
                    t.plugin.clone(),
                    variables,
                    t.item.definition.uri_template.clone(),
                )
            }),
        };
        // The URI in `data`, as MCP's example and SEP-2164 have it.
        let not_found =
            |message: String| ErrorData::resource_not_found(message, Some(json!({ "uri": uri })));
        let Some((plugin, variables, target)) =
            found.filter(|(p, _, _)| self.allows(identity.as_ref(), &p.settings.name))
        else {
            return Err(not_found(format!(
                "no resource at {uri:?}; call resources/list and resources/templates/list to see what is served"
            )));
        };
        let variables = crate::offers::decode_variables(variables)
            .map_err(|e| ErrorData::invalid_params(format!("{uri:?}: {e}"), None))?;
        let env = &self.inner.env;
        let contents = self
            .run_offer(
                &context,
                identity.as_ref(),
                &plugin,
                (OfferKind::ResourceRead, &target),
                json!({ "uri": uri }),
                |audit| crate::offers::read_resource(env, &plugin, &uri, &variables, audit),
            )
            .await
            .ok_or_else(cancelled)?
            .map_err(|e| offer_error(e, |m| not_found(format!("no resource at {uri:?}: {m}"))))?;
        Ok(ReadResourceResult::new(contents.into_iter().map(mcp_contents).collect()).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.wait_until_loaded().await;
        let identity = caller(&context);
        let prompts = self
            .registry()
            .prompts()
            .filter(|p| self.allows(identity.as_ref(), &p.plugin.settings.name))
            .map(|p| mcp_prompt(&p.key, &p.item))
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.wait_until_loaded().await;
        let registry = self.registry();
        let identity = caller(&context);
        let Some(prompt) = registry
            .prompt(&request.name)
            .filter(|p| self.allows(identity.as_ref(), &p.plugin.settings.name))
            .cloned()
        else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown prompt {:?}; call prompts/list to see the prompts available",
                    request.name
                ),
                None,
            ));
        };
        let arguments = string_arguments(request.arguments)?;
        let declared = &prompt.item.arguments;
        if let Some((name, _)) = arguments
            .iter()
            .find(|(name, _)| !declared.iter().any(|a| &a.name == name))
        {
            return Err(ErrorData::invalid_params(
                format!(
                    "prompt {:?} has no argument {name:?}; its arguments are listed by prompts/list",
                    request.name
                ),
                None,
            ));
        }
        if let Some(missing) = declared
            .iter()
            .find(|a| a.required && !arguments.iter().any(|(name, _)| name == &a.name))
        {
            return Err(ErrorData::invalid_params(
                format!(
                    "prompt {:?} needs the argument {:?}",
                    request.name, missing.name
                ),
                None,
            ));
        }
        let env = &self.inner.env;
        let recorded = Value::Object(
            arguments
                .iter()
                .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                .collect(),
        );
        let result = self
            .run_offer(
                &context,
                identity.as_ref(),
                &prompt.plugin,
                (OfferKind::PromptGet, &prompt.key),
                recorded,
                |audit| {
                    crate::offers::get_prompt(
                        env,
                        &prompt.plugin,
                        &prompt.item.name,
                        &arguments,
                        audit,
                    )
                },
            )
            .await
            .ok_or_else(cancelled)?
            .map_err(|e| offer_error(e, |m| ErrorData::invalid_params(m, None)))?;
        let mut answer = GetPromptResult::new(
            result
                .messages
                .into_iter()
                .map(|m| {
                    let content = match m.content {
                        MessageContent::Text(text) => ContentBlock::text(text),
                        MessageContent::Resource(r) => ContentBlock::resource(mcp_contents(r)),
                    };
                    PromptMessage::new(mcp_role(m.role), content)
                })
                .collect(),
        );
        if let Some(description) = result.description {
            answer = answer.with_description(description);
        }
        Ok(answer.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.wait_until_loaded().await;
        let registry = self.registry();
        let identity = caller(&context);
        let argument = request.argument.name;
        let (plugin, target, completable, served) = match &request.r#ref {
            Reference::Prompt(p) => {
                let prompt = registry
                    .prompt(&p.name)
                    .filter(|o| self.allows(identity.as_ref(), &o.plugin.settings.name))
                    .ok_or_else(|| {
                        ErrorData::invalid_params(format!("unknown prompt {:?}", p.name), None)
                    })?;
                let declared = prompt
                    .item
                    .arguments
                    .iter()
                    .find(|a| a.name == argument)
                    .ok_or_else(|| {
                        ErrorData::invalid_params(
                            format!("prompt {:?} has no argument {argument:?}", p.name),
                            None,
                        )
                    })?;
                (
                    prompt.plugin.clone(),
                    CompletionTarget::Prompt(prompt.item.name.clone()),
                    declared.completable,
                    prompt.key.clone(),
                )
            }
            Reference::Resource(r) => {
                let template = registry
                    .template(&r.uri)
                    .filter(|o| self.allows(identity.as_ref(), &o.plugin.settings.name))
                    .ok_or_else(|| {
                        ErrorData::invalid_params(
                            format!(
                                "unknown resource template {:?}; call resources/templates/list",
                                r.uri
                            ),
                            None,
                        )
                    })?;
                if !template.item.variables.contains(&argument) {
                    return Err(ErrorData::invalid_params(
                        format!("resource template {:?} has no variable {argument:?}", r.uri),
                        None,
                    ));
                }
                (
                    template.plugin.clone(),
                    CompletionTarget::ResourceTemplate(
                        template.item.definition.uri_template.clone(),
                    ),
                    template.item.definition.completable.contains(&argument),
                    template.item.definition.uri_template.clone(),
                )
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "completion/complete refers to a prompt (ref/prompt) or a resource template (ref/resource)",
                    None,
                ));
            }
        };
        if !completable {
            return Ok(CompleteResult::default());
        }
        let context_arguments: Vec<(String, String)> = request
            .context
            .and_then(|c| c.arguments)
            .map(|a| a.into_iter().collect())
            .unwrap_or_default();
        let env = &self.inner.env;
        let value = request.argument.value;
        let recorded = json!({
            "argument": argument,
            "value": value,
            "context": context_arguments
                .iter()
                .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                .collect::<serde_json::Map<String, Value>>(),
        });
        let completions = self
            .run_offer(
                &context,
                identity.as_ref(),
                &plugin,
                (OfferKind::Completion, &served),
                recorded,
                |audit| {
                    crate::offers::complete(
                        env,
                        &plugin,
                        &target,
                        &argument,
                        &value,
                        &context_arguments,
                        audit,
                    )
                },
            )
            .await
            .ok_or_else(cancelled)?
            .map_err(|e| offer_error(e, |m| ErrorData::invalid_params(m, None)))?;
        let mut values = completions.values;
        let more = values.len() > CompletionInfo::MAX_VALUES;
        values.truncate(CompletionInfo::MAX_VALUES);
        let info = CompletionInfo::with_pagination(
            values,
            completions.total,
            completions.has_more || more,
        )
        .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = requested.supported_by(&self.get_info().capabilities);
        // Only URIs served now; the acknowledgement says which.
        if let Some(uris) = &mut accepted.resource_subscriptions {
            let registry = self.registry();
            uris.retain(|uri| {
                uri.len() <= MAX_SUBSCRIBED_URI_BYTES
                    && crate::offers::offered_by(&registry, uri).is_some()
            });
        }
        Some(accepted)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.wait_until_loaded().await;
        self.subscribe_session(request.uri, &context)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe_session(&request.uri, &context);
        Ok(())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let resources = self.listen_to_resources(&context)?;
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
        if resources {
            self.inner
                .resource_listeners
                .lock()
                .expect("not poisoned")
                .retain(|l| l.sink.id() != &id);
        }
        Ok(())
    }
}

/// A 0.2 component's resource as MCP lists it.
fn mcp_resource(r: &ResourceDefinition) -> Resource {
    let mut resource = Resource::new(r.uri.clone(), r.name.clone());
    resource.title = r.title.clone();
    resource.description = r.description.clone();
    resource.mime_type = r.mime_type.clone();
    resource.size = r.size;
    resource.annotations = r.annotations.as_ref().map(mcp_annotations);
    resource
}

/// A 0.2 component's resource template as MCP lists it.
fn mcp_template(t: &ResourceTemplateDefinition) -> ResourceTemplate {
    let mut template = ResourceTemplate::new(t.uri_template.clone(), t.name.clone());
    template.title = t.title.clone();
    template.description = t.description.clone();
    template.mime_type = t.mime_type.clone();
    template.annotations = t.annotations.as_ref().map(mcp_annotations);
    template
}

fn mcp_annotations(a: &crate::bindings::v0_2::content::ResourceAnnotations) -> Annotations {
    let mut annotations = Annotations::default();
    if !a.audience.is_empty() {
        annotations.audience = Some(a.audience.iter().copied().map(mcp_role).collect());
    }
    annotations.priority = a.priority.map(|p| p.clamp(0.0, 1.0) as f32);
    annotations.last_modified = a.last_modified.clone();
    annotations
}

fn mcp_role(role: crate::bindings::v0_2::content::Role) -> Role {
    match role {
        crate::bindings::v0_2::content::Role::User => Role::User,
        crate::bindings::v0_2::content::Role::Assistant => Role::Assistant,
    }
}

/// Contents a 0.2 component read, as MCP sends them (bytes base64-encoded).
fn mcp_contents(c: crate::bindings::v0_2::content::ResourceContents) -> ResourceContents {
    use base64::Engine as _;
    let contents = match c.body {
        Body::Text(text) => ResourceContents::text(text, c.uri),
        Body::Blob(bytes) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            c.uri,
        ),
    };
    match c.mime_type {
        Some(mime) => contents.with_mime_type(mime),
        None => contents,
    }
}

/// A 0.2 component's prompt as MCP lists it, under its served `name`.
fn mcp_prompt(name: &str, p: &PromptDefinition) -> Prompt {
    let arguments = p
        .arguments
        .iter()
        .map(|a| {
            let mut argument = PromptArgument::new(a.name.clone()).with_required(a.required);
            if let Some(title) = &a.title {
                argument = argument.with_title(title.clone());
            }
            if let Some(description) = &a.description {
                argument = argument.with_description(description.clone());
            }
            argument
        })
        .collect();
    let mut prompt = Prompt::new(name.to_string(), p.description.clone(), Some(arguments));
    prompt.title = p.title.clone();
    prompt
}

/// The longest URI a session may subscribe to, in bytes: with
/// `host.resource_subscriptions`, what bounds the memory one session's
/// subscriptions hold.
pub const MAX_SUBSCRIBED_URI_BYTES: usize = 4096;

/// The resource URIs one legacy session subscribed to
/// (`resources/subscribe`), kept until it unsubscribes or the session ends.
struct SessionSubscriptions {
    /// The session's `Mcp-Session-Id` over HTTP; `None` over stdio, which
    /// serves one session.
    session: Option<String>,
    /// Where its `notifications/resources/updated` go; closed once the
    /// session ended, and then the entry is dropped.
    peer: Peer<RoleServer>,
    /// Who subscribed (HTTP with `[auth]`): an update is sent only for a URI
    /// this identity may see (`[[access]]`).
    identity: Option<Identity>,
    /// The URIs, each one a served resource's or one a template matches
    /// when it was subscribed to.
    uris: BTreeSet<String>,
}

/// A 2026-07-28 `subscriptions/listen` stream whose acknowledged filter
/// holds resource URIs: it hears of those URIs until it closes.
struct ResourceListener {
    /// The stream; its accepted filter holds the URIs.
    sink: SubscriptionSink,
    /// Who opened it, as for [`SessionSubscriptions::identity`].
    identity: Option<Identity>,
}

/// The legacy session a request belongs to: its `Mcp-Session-Id` over
/// HTTP, `None` over stdio.
fn session_of(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.extensions
        .get::<axum::http::request::Parts>()?
        .headers
        .get("mcp-session-id")?
        .to_str()
        .ok()
        .map(str::to_string)
}

/// Whether `identity` may see what `registry` serves at `uri`.
fn may_see(registry: &Registry, identity: Option<&Identity>, uri: &str) -> bool {
    crate::offers::offered_by(registry, uri)
        .is_some_and(|p| registry.config().access.allows(identity, &p.settings.name))
}

/// The refusal of a subscription past `host.resource_subscriptions`.
fn too_many_subscriptions(limit: usize, holder: &str, instead: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "{holder} may subscribe to at most {limit} resource URIs (host.resource_subscriptions); \
             {instead}, or raise host.resource_subscriptions"
        ),
        None,
    )
}

impl Gateway {
    /// `resources/subscribe`: adds `uri`, which some served component must
    /// offer (a resource, or a URI one of its templates matches) and the
    /// caller may see, to the session's subscriptions, up to
    /// `host.resource_subscriptions`. Subscribing twice is one
    /// subscription.
    fn subscribe_session(
        &self,
        uri: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "a subscribed URI is at most {MAX_SUBSCRIBED_URI_BYTES} bytes; this one is {}",
                    uri.len()
                ),
                None,
            ));
        }
        let registry = self.registry();
        let identity = caller(context);
        if !may_see(&registry, identity.as_ref(), &uri) {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource at {uri:?} to subscribe to; call resources/list and \
                     resources/templates/list to see what is served"
                ),
                Some(json!({ "uri": uri })),
            ));
        }
        let limit = registry.config().resource_subscriptions;
        let session = session_of(context);
        let mut sessions = self.inner.subscriptions.lock().expect("not poisoned");
        sessions.retain(|s| !s.peer.is_transport_closed());
        let index = match sessions.iter().position(|s| s.session == session) {
            Some(index) => index,
            None => {
                sessions.push(SessionSubscriptions {
                    session,
                    peer: context.peer.clone(),
                    identity: None,
                    uris: BTreeSet::new(),
                });
                sessions.len() - 1
            }
        };
        let held = &mut sessions[index];
        held.identity = identity;
        if !held.uris.contains(&uri) && held.uris.len() >= limit {
            return Err(too_many_subscriptions(
                limit,
                "a session",
                "unsubscribe (resources/unsubscribe) from one first",
            ));
        }
        tracing::debug!(uri = %uri, "resource subscribed to");
        held.uris.insert(uri);
        Ok(())
    }

    /// `resources/unsubscribe`: drops `uri` from the session's
    /// subscriptions. A URI it does not hold is no error: unsubscribing
    /// twice (a retry) ends in the same state.
    fn unsubscribe_session(&self, uri: &str, context: &RequestContext<RoleServer>) {
        let session = session_of(context);
        let mut sessions = self.inner.subscriptions.lock().expect("not poisoned");
        sessions.retain(|s| !s.peer.is_transport_closed());
        let removed = sessions
            .iter_mut()
            .find(|s| s.session == session)
            .is_some_and(|s| s.uris.remove(uri));
        sessions.retain(|s| !s.uris.is_empty());
        if !removed {
            tracing::debug!(uri = %uri, "unsubscribe from a URI the session did not hold");
        }
    }

    /// Registers a listen stream whose acknowledged filter holds resource
    /// URIs; `false` when it holds none. More URIs than
    /// `host.resource_subscriptions` end the stream with an error naming
    /// the limit.
    fn listen_to_resources(&self, context: &SubscriptionContext) -> Result<bool, ErrorData> {
        let accepted = context
            .accepted()
            .resource_subscriptions
            .as_ref()
            .map_or(0, Vec::len);
        if accepted == 0 {
            return Ok(false);
        }
        let limit = self.registry().config().resource_subscriptions;
        if accepted > limit {
            return Err(too_many_subscriptions(
                limit,
                "a subscriptions/listen stream",
                "listen to fewer URIs per stream",
            ));
        }
        self.inner
            .resource_listeners
            .lock()
            .expect("not poisoned")
            .push(ResourceListener {
                sink: context.sink().clone(),
                identity: caller(context.request_context()),
            });
        Ok(true)
    }

    /// Sends `notifications/resources/updated` for every subscribed URI
    /// whose offering changed from `before` to the registry now served
    /// ([`crate::offers::offer_changed`]: its component reloaded, replaced
    /// or removed, or its block's settings changed), to each legacy session
    /// and listen stream that subscribed to it and may see it, in URI order.
    async fn notify_resources_updated(&self, before: &Registry) {
        let now = self.registry();
        let due = |identity: Option<&Identity>, uri: &str| {
            crate::offers::offer_changed(before, &now, uri)
                && (may_see(before, identity, uri) || may_see(&now, identity, uri))
        };
        let sessions: Vec<(Peer<RoleServer>, Vec<String>)> = {
            let mut sessions = self.inner.subscriptions.lock().expect("not poisoned");
            sessions.retain(|s| !s.peer.is_transport_closed());
            sessions
                .iter()
                .map(|s| {
                    let uris = s.uris.iter().filter(|u| due(s.identity.as_ref(), u));
                    (s.peer.clone(), uris.cloned().collect())
                })
                .collect()
        };
        for (peer, uris) in sessions {
            for uri in uris {
                let update = ResourceUpdatedNotificationParam::new(uri);
                if let Err(e) = peer.notify_resource_updated(update).await {
                    tracing::debug!("cannot send resources/updated: {e}");
                }
            }
        }
        let listeners: Vec<(SubscriptionSink, Vec<String>)> = self
            .inner
            .resource_listeners
            .lock()
            .expect("not poisoned")
            .iter()
            .map(|l| {
                let mut uris: Vec<String> = l
                    .sink
                    .accepted()
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .filter(|u| due(l.identity.as_ref(), u))
                    .cloned()
                    .collect();
                uris.sort();
                uris.dedup();
                (l.sink.clone(), uris)
            })
            .collect();
        for (sink, uris) in listeners {
            for uri in uris {
                if let Err(e) = sink.notify_resource_updated(uri).await {
                    tracing::debug!("cannot notify listen stream: {e}");
                }
            }
        }
    }
}
