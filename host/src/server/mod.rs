//! The MCP server: the only module (with [`crate::confirmation`]) that knows
//! MCP's methods. It knows no transport; [`crate::transport`] serves it.
//!
//! A request travels: rmcp decodes it and calls [`Gateway`]'s
//! `ServerHandler` impl, which only dispatches: it begins the request's context
//! (`request::Request::begin`: registry and its config, identity, era,
//! what the caller may see) and calls the method's handler, one file per
//! kind of thing served:
//!
//! | file               | methods                                                        |
//! |--------------------|----------------------------------------------------------------|
//! | `request`          | the request context, the one access check, audit and metrics   |
//! | `tools.rs`         | `tools/list`, `tools/call` (confirmation in both eras)          |
//! | `resources.rs`     | `resources/list`, `resources/templates/list`, `resources/read`  |
//! | `prompts.rs`       | `prompts/list`, `prompts/get`                                   |
//! | `completion.rs`    | `completion/complete`                                           |
//! | `subscriptions.rs` | `resources/subscribe`, `unsubscribe`, `subscriptions/listen`    |
//! | `notify.rs`        | list changes and resource updates sent to clients               |
//! | `logging.rs`       | `logging/setLevel`; a component's log sent to its caller        |
//! | `convert.rs`       | what components define, as MCP's types                          |
//!
//! What each method does:
//! - `tools/list` lists the tools the caller may see; `tools/call` looks
//!   the tool up (unknown or hidden: JSON-RPC `-32602`, the same text for
//!   both, so the answer does not reveal that a hidden tool exists), picks
//!   the [`Confirmer`](crate::imports::confirm::Confirmer) for this client, runs the
//!   call with [`run_call_with_hooks`](crate::call::run_call_with_hooks), and
//!   maps the [`CallOutcome`](crate::call::CallOutcome): success →
//!   `structuredContent` plus the same JSON as text; failure → `isError`
//!   with the envelope `{"ok":false,"result":null,"issues":[…]}`; a
//!   confirmation for a 2026-07-28 client → `input_required`;
//! - over HTTP, the caller's [`Identity`] (put into
//!   the request's extensions by [`crate::auth::http::require_identity`])
//!   decides which plugins it sees (`[[access]]`, ADR 0012), by the rules
//!   of the configuration the request's registry was built for, so a
//!   config reload reaches every method at once. The subject is logged
//!   with each call and never reaches the guest. Over stdio there is no
//!   identity and everything is served;
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
//!   resource-not-found (a listen stream's acknowledgement leaves such a
//!   URI out); at most `host.resource_subscriptions` per session or
//!   stream. A hot or config reload that reloads, replaces or removes the
//!   component behind a subscribed URI (or changes its block's settings)
//!   sends `notifications/resources/updated` for it, after the list
//!   changes. `resources.subscribe` is advertised with `resources`.
//!
//! - logging (ADR 0046): the `logging` capability is advertised and
//!   `logging/setLevel` kept per legacy session; a component's `log`
//!   messages reach the calling client only for a block with
//!   `log_to_client` (the `logging` module).
//!
//! Start-up (ADR 0006): the transports answer `initialize` at once while
//! the plugin directory loads in the background. Every method that reads
//! the registry waits for that initial load, up to `host.load_wait_secs`;
//! past it it answers with what is serving, and every client is sent a
//! list change once the load is in.
//!
//! **Architecture invariant:** the Gateway holds no configuration. A
//! handler reads settings from the registry its request holds
//! ([`Registry::config`]); what is fixed at start (the audit trail, the
//! confirmation-state keys) is held as live objects, not as settings.

mod approval;
mod completion;
mod convert;
mod discovery;
mod logging;
mod notify;
mod prompts;
pub(crate) mod request;
mod resources;
mod subscriptions;
mod tools;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PromptsCapability, ReadResourceRequestParams, ReadResourceResponse, ResourcesCapability,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext, SubscriptionSink,
};
use rmcp::{ErrorData, ServerHandler};

use crate::audit::AuditLog;
use crate::auth::Identity;
use crate::call::CallEnv;
use crate::confirmation::RequestStates;
use crate::plugin::Loader;
use crate::registry::Registry;
use request::Request;

use crate::telemetry::{SpanTarget, request_span};
pub use approval::DecideError;
pub use request::ClientAddress;

pub use subscriptions::MAX_SUBSCRIBED_URI_BYTES;

/// The MCP server: shared by every request of every session. rmcp serves
/// it as a `Service`; clones share one state.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    /// The engine and HTTP client calls run with.
    env: CallEnv,
    /// What is served, with the configuration it was built for; replaced
    /// whole on change.
    registry: ArcSwap<Registry>,
    /// Seals `requestState` for 2026-07-28 confirmation rounds.
    states: RequestStates,
    /// Approvals (`approve` rules, ADR 0038): in the shared Redis of
    /// `state.replay` when configured, in this process otherwise.
    approvals: crate::approvals::Approvals,
    /// Exchanges callers' tokens for upstream credentials (RFC 8693),
    /// with its cache.
    exchanger: crate::auth::exchange::Exchanger,
    /// Where this process serves the approval page, once its HTTP
    /// listener is bound.
    page_base: std::sync::OnceLock<String>,
    /// Counts `limit` rules: in the shared Redis of `state.replay` when
    /// configured (one budget for every replica), in this process otherwise.
    limiter: crate::rules::limits::Limiter,
    /// The legacy sessions' peers, each once its `initialized` arrived
    /// (one over stdio; one per `Mcp-Session-Id` over HTTP).
    legacy_peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Open `subscriptions/listen` streams (2026-07-28).
    listeners: Mutex<Vec<SubscriptionSink>>,
    /// Whether the initial load of the plugin directory is in.
    loaded: tokio::sync::watch::Sender<bool>,
    /// How far that load has come, for the answers given before it is in.
    progress: Arc<LoadProgress>,
    /// Whether a request was answered before the initial load was in (so
    /// its result will need a list change).
    answered_early: AtomicBool,
    /// The audit trail (`host.audit`), if any.
    audit: Option<AuditLog>,
    /// Whether hot reload follows the plugin directory, so a component
    /// offering resources or prompts may appear at any time.
    follows_reloads: AtomicBool,
    /// Legacy sessions' resource subscriptions (`resources/subscribe`).
    subscriptions: Mutex<Vec<subscriptions::SessionSubscriptions>>,
    /// Legacy sessions' `logging/setLevel` levels.
    log_levels: Mutex<Vec<logging::SessionLevel>>,
    /// 2026-07-28 listen streams that subscribed to resource URIs.
    resource_listeners: Mutex<Vec<subscriptions::ResourceListener>>,
    /// The profile stdio requests come through (`serve --profile`); set
    /// once, before serving. Over HTTP the path names it.
    stdio_profile: std::sync::OnceLock<String>,
    /// Search indexes of discovery profiles ([`discovery`]).
    indexes: discovery::Indexes,
    /// Profiles' surfaces, per registry.
    surfaces: discovery::Surfaces,
    /// The tools legacy sessions enabled through discovery profiles.
    enabled: Mutex<Vec<discovery::Enabled>>,
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
    /// requests wait (up to `host.load_wait_secs`) for
    /// [`Gateway::publish_initial`].
    pub fn loading(env: CallEnv, loader: &Loader) -> anyhow::Result<Gateway> {
        let config = loader.config.clone();
        // The trail's file is locked now: a second process on it is
        // refused before it serves anything.
        let audit = config.audit.clone().map(AuditLog::open).transpose()?;
        let states = RequestStates::configured(config.elicitation_timeout, &config.state)?;
        Ok(Gateway {
            inner: Arc::new(Inner {
                env,
                page_base: std::sync::OnceLock::new(),
                exchanger: crate::auth::exchange::Exchanger::new(),
                approvals: match states.shared_store() {
                    Some(redis) => crate::approvals::Approvals::shared(redis),
                    None => crate::approvals::Approvals::local(),
                },
                limiter: crate::rules::limits::Limiter::new(
                    states
                        .shared_store()
                        .map(|s| s as Arc<dyn crate::rules::limits::SharedCounters>),
                ),
                states,
                // Empty, but with the settings: the wait for the initial
                // load reads `host.load_wait_secs` from it.
                registry: ArcSwap::from_pointee(Registry::empty(config)),
                legacy_peers: Mutex::new(Vec::new()),
                listeners: Mutex::new(Vec::new()),
                loaded: tokio::sync::watch::Sender::new(false),
                progress: Arc::default(),
                answered_early: AtomicBool::new(false),
                audit,
                follows_reloads: AtomicBool::new(false),
                subscriptions: Mutex::new(Vec::new()),
                log_levels: Mutex::new(Vec::new()),
                resource_listeners: Mutex::new(Vec::new()),
                stdio_profile: std::sync::OnceLock::new(),
                indexes: discovery::Indexes::default(),
                surfaces: discovery::Surfaces::default(),
                enabled: Mutex::new(Vec::new()),
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
        let load_wait = self.registry().config().load_wait;
        let wait = tokio::time::timeout(load_wait, loaded.wait_for(|l| *l));
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

    /// Serves stdio requests through the profile `name` (`serve
    /// --profile`; ADR 0040). Set once: a second call changes nothing.
    pub fn serve_profile(&self, name: &str) {
        let _ = self.inner.stdio_profile.set(name.to_string());
    }

    /// The surface of the profile `name` in `registry` (computed once per
    /// registry).
    fn surface(&self, registry: &Arc<Registry>, name: &str) -> Arc<[crate::catalog::Shown]> {
        self.inner.surfaces.of(registry, name)
    }

    /// The profile stdio requests come through, if one was chosen.
    pub(crate) fn stdio_profile(&self) -> Option<String> {
        self.inner.stdio_profile.get().cloned()
    }

    /// Whether the initial load of the plugin directory is in.
    pub fn is_loaded(&self) -> bool {
        *self.inner.loaded.borrow()
    }

    /// Where the initial load reports how far it has come.
    pub fn load_progress(&self) -> Arc<LoadProgress> {
        self.inner.progress.clone()
    }

    /// While the initial load is not in: what to answer a request for a
    /// tool, resource or prompt not served (yet), which may be one the load
    /// has not reached, instead of calling it unknown.
    pub fn still_loading(&self) -> Option<String> {
        if self.is_loaded() {
            return None;
        }
        Some(format!(
            "the plugin directory is still loading ({}); ask again once it has loaded \
             (a list change is sent then; a compile cache, on by default, makes later starts fast)",
            self.inner.progress
        ))
    }

    /// The registry being served.
    pub fn registry(&self) -> Arc<Registry> {
        self.inner.registry.load_full()
    }

    /// The audit trail, with `host.audit`.
    fn audit_log(&self) -> Option<&AuditLog> {
        self.inner.audit.as_ref()
    }

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
        request::record_malformed_call(self, message, parts).await;
    }

    /// Narrows a decoded `subscriptions/listen` request's resource URIs to
    /// those `identity`, calling over `transport` (`stdio` or `http`)
    /// through `profile` (none: the whole catalog), may see, as that
    /// profile serves them, before rmcp acknowledges it; whether it removed
    /// any. rmcp sends
    /// the acknowledgement before the handler runs and asks for the
    /// accepted filter without the request's context, so each transport,
    /// which knows its caller, hands the request here first.
    pub fn narrow_listen_request(
        &self,
        message: &mut ClientJsonRpcMessage,
        identity: Option<&Identity>,
        transport: &'static str,
        profile: Option<&str>,
    ) -> bool {
        let ClientJsonRpcMessage::Request(request) = message else {
            return false;
        };
        let ClientRequest::SubscriptionsListenRequest(listen) = &mut request.request else {
            return false;
        };
        let registry = self.registry();
        let visible =
            request::Visible::new(&registry, identity, transport).through_named(&registry, profile);
        subscriptions::narrow_to_visible(visible, &mut listen.params.notifications)
    }

    /// What the server advertises: tools always; resources, prompts and
    /// completions when a served component offers them, while the initial
    /// load runs, or while hot reload follows the directory.
    fn server_config(&self) -> ServerConfig {
        let registry = self.registry();
        // A call an `approve` rule holds becomes a task for a client that
        // declared them (ADR 0038): advertised while such a rule exists.
        let mut capabilities = if registry.config().policy.has_approvals() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        };
        // While the initial load runs, what components offer is not known
        // yet; under hot reload it can change at any time: then every
        // capability is advertised, and empty lists are answers.
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
        // Always: `logging/setLevel` is answered in every session, and
        // whether a component's messages reach the client is each block's
        // choice (`log_to_client`), which a reload may change (ADR 0046).
        capabilities.logging = Some(rmcp::model::JsonObject::new());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools served by toolhost from sandboxed WebAssembly components. Tools that change \
                 data preview first (confirm=false) and ask the user before acting (confirm=true).",
            )
    }
}

/// rmcp's `ServerHandler`: it only dispatches. Each method begins the
/// request's context and calls its handler.
impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        self.server_config()
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.add_legacy_peer(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = request_span(&context, "tools/list", SpanTarget::None);
        traced(span, async {
            let request = Request::begin(self, &context).await;
            let (ttl, scope) = request.list_hints();
            Ok(tools::list(self, &request)
                .with_ttl_ms(ttl)
                .with_cache_scope(scope))
        })
        .await
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = request_span(&context, "tools/call", SpanTarget::Tool(&params.name));
        traced(span, async {
            let request = Request::begin(self, &context).await;
            let params = match discovery::intercept(&self.inner.indexes, &request, params)? {
                discovery::Meta::Answer(answer) => return Ok(CallToolResponse::Complete(answer)),
                discovery::Meta::Enable(name, answer) => {
                    discovery::enable(self, &request, &context.peer, name).await;
                    return Ok(CallToolResponse::Complete(answer));
                }
                discovery::Meta::Call(params) => params,
            };
            tools::call(self, &request, params, &context).await
        })
        .await
    }

    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); served while specified.
    async fn set_level(
        &self,
        params: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = Request::now(self, &context);
        logging::set_level(self, &request, params.level, &context);
        Ok(())
    }

    async fn get_task(
        &self,
        params: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let request = Request::now(self, &context);
        approval::get_task(self, &request, params).await
    }

    async fn update_task(
        &self,
        params: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = Request::now(self, &context);
        approval::update_task(self, &request, params).await
    }

    async fn cancel_task(
        &self,
        params: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = Request::now(self, &context);
        approval::cancel_task(self, &request, params).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let span = request_span(&context, "resources/list", SpanTarget::None);
        traced(span, async {
            let request = Request::begin(self, &context).await;
            let (ttl, scope) = request.list_hints();
            Ok(resources::list(&request)
                .with_ttl_ms(ttl)
                .with_cache_scope(scope))
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let span = request_span(&context, "resources/templates/list", SpanTarget::None);
        traced(span, async {
            let request = Request::begin(self, &context).await;
            let (ttl, scope) = request.list_hints();
            Ok(resources::list_templates(&request)
                .with_ttl_ms(ttl)
                .with_cache_scope(scope))
        })
        .await
    }

    async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let span = request_span(
            &context,
            "resources/read",
            SpanTarget::Resource(&params.uri),
        );
        traced(span, async {
            let request = Request::begin(self, &context).await;
            resources::read(self, &request, params, &context).await
        })
        .await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let span = request_span(&context, "prompts/list", SpanTarget::None);
        traced(span, async {
            let request = Request::begin(self, &context).await;
            let (ttl, scope) = request.list_hints();
            Ok(prompts::list(&request)
                .with_ttl_ms(ttl)
                .with_cache_scope(scope))
        })
        .await
    }

    async fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let span = request_span(&context, "prompts/get", SpanTarget::Prompt(&params.name));
        traced(span, async {
            let request = Request::begin(self, &context).await;
            prompts::get(self, &request, params, &context).await
        })
        .await
    }

    async fn complete(
        &self,
        params: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let span = request_span(&context, "completion/complete", SpanTarget::None);
        traced(span, async {
            let request = Request::begin(self, &context).await;
            completion::complete(self, &request, params, &context).await
        })
        .await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // The URIs were narrowed to what the caller may see before rmcp
        // asked (by the transport: `Gateway::narrow_listen_request`).
        Some(subscriptions::accepted_filter(self, requested))
    }

    async fn subscribe(
        &self,
        params: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = request_span(
            &context,
            "resources/subscribe",
            SpanTarget::Resource(&params.uri),
        );
        traced(span, async {
            let request = Request::begin(self, &context).await;
            subscriptions::subscribe(self, &request, params.uri, &context)
        })
        .await
    }

    async fn unsubscribe(
        &self,
        params: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = Request::now(self, &context);
        subscriptions::unsubscribe(self, &request, &params.uri);
        Ok(())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let request = Request::now(self, context.request_context());
        subscriptions::listen(self, &request, context).await
    }
}

/// Runs one request's handler inside its server span (made by
/// [`request_span`], the one place a request's span begins), so that every
/// span of the request (the policy, the component, its upstream requests,
/// Redis) hangs under it, and marks the span when the answer is a JSON-RPC
/// error.
async fn traced<T>(
    span: crate::telemetry::Span,
    handler: impl std::future::Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let result = span.in_span(handler).await;
    if let Err(error) = &result {
        crate::telemetry::record_error(&span, Some(error.code.0), false);
    }
    result
}

/// How far the initial load of the plugin directory has come: distinct
/// contents compiled (or taken from the compile cache) and files loaded,
/// each of how many.
#[derive(Debug, Default)]
pub struct LoadProgress {
    contents: AtomicUsize,
    compiled: AtomicUsize,
    files: AtomicUsize,
    loaded: AtomicUsize,
}

impl LoadProgress {
    /// The load found `contents` distinct contents in `files` files.
    pub fn expect(&self, contents: usize, files: usize) {
        self.contents.store(contents, Ordering::Relaxed);
        self.files.store(files, Ordering::Relaxed);
    }

    /// One content is compiled (or failed to).
    pub fn compiled_one(&self) {
        self.compiled.fetch_add(1, Ordering::Relaxed);
    }

    /// One file is loaded (or failed to).
    pub fn loaded_one(&self) {
        self.loaded.fetch_add(1, Ordering::Relaxed);
    }
}

impl std::fmt::Display for LoadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.files.load(Ordering::Relaxed);
        if files == 0 {
            return write!(f, "reading the directory");
        }
        write!(
            f,
            "{} of {} components compiled, {} of {files} files loaded",
            self.compiled.load(Ordering::Relaxed),
            self.contents.load(Ordering::Relaxed),
            self.loaded.load(Ordering::Relaxed),
        )
    }
}
