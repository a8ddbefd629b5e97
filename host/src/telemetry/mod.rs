//! Traces: OpenTelemetry spans of every MCP request, exported over OTLP when
//! `[telemetry]` names a collector (ADR 0039, [observability.md]).
//!
//! **The three spans every call has are made with the SDK directly**: the
//! request's server span, `policy` and `component` are [`Span`]s, each a
//! `tracing` span for the log beside, when its trace is sampled, an
//! OpenTelemetry span built by the SDK's tracer, whose context the code
//! within runs in (attached at each poll). The other spans (an upstream
//! request, a Redis command, a wait for a person) are `tracing` spans that
//! a `tracing-opentelemetry` layer, installed by [`crate::logging`] only
//! when `[telemetry]` is set, turns into OpenTelemetry spans ([`layer`]),
//! children of the context they start in. Going through the layer cost a
//! sampled call about as much again as the SDK's own work (a builder kept
//! in the span's extensions, every field visited and formatted for the log
//! too, a look-up of the span at each context read), for the spans every
//! call makes (measurement 21 in docs/benchmarks.md).
//! [`export::QueueProcessor`] sends them without ever holding up a call.
//! Without `[telemetry]` nothing is exported, and the spans cost what any
//! `tracing` span costs.
//!
//! **Sampling is decided once, at the request's entry** ([`request_span`]):
//! the SDK's parent-based ratio sampler is asked before the request's span
//! exists. A sampled request's code runs in its span's context; an
//! unsampled one's in a context marked not sampled (`NotSampled`), so
//! neither [`Span`]s nor the layer's filter ([`layer`]) make anything for
//! it. Outside any request (an approved call run later), a span starts a
//! trace of its own, sampled at the same ratio. An unsampled request
//! therefore makes no OpenTelemetry span or attribute, and the SDK's own
//! sampler (parent-based, always on) follows the decision already made.
//! What it keeps of its trace lives in its `tracing` span: a client's
//! trace id as the log field `trace_id`, and the context its upstream
//! requests pass on, not sampled ([`current_trace_headers`]).
//!
//! Where each span begins (one place each):
//!
//! | span | kind | where |
//! |---|---|---|
//! | `{mcp.method.name} {target}` | server | [`request_span`], for every request the server dispatches (`server/mod.rs`) |
//! | `policy` | internal | [`policy_span`], around `[[policy.rules]]`' decision |
//! | `component` | internal | [`component_span`], the run of a component's code (`server/tools.rs`) |
//! | `confirmation` | internal | waiting for a person (the runtime's `ask_user`), with how it ended |
//! | `form` | internal | waiting for the answer to a tool's own form (the runtime's `form::ask`), with how it ended, never the values |
//! | `{METHOD}` | client | each upstream HTTP request, each redirect hop one (the runtime's `Outbound::send_checked`) |
//! | `{COMMAND}` | client | each Redis command (`replay::RedisReplay::run`) |
//!
//! **Architecture invariant:** no span attribute holds a call's arguments,
//! its result, a header's value, a URL's query or userinfo, or guest text:
//! what a span says is the operator's vocabulary (method, tool, plugin,
//! host, status, sizes and times). The parent context comes from the
//! request's `_meta` (`traceparent`, `tracestate`) or else its HTTP headers.
//!
//! [observability.md]: ../../docs/observability.md

pub mod export;

use std::sync::OnceLock;

use opentelemetry::KeyValue;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{FutureExt as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    IdGenerator, RandomIdGenerator, Sampler, SamplingDecision, SdkTracerProvider, ShouldSample,
};
use rmcp::service::{RequestContext, RoleServer};
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::auth::Identity;
use crate::config::telemetry::TelemetrySettings;

/// The sampler deciding which traces are kept: set once, when the layer
/// is installed (so also: whether `[telemetry]` is on).
static SAMPLER: OnceLock<Sampler> = OnceLock::new();

/// The tracer [`Span`]s are built with: set with [`SAMPLER`].
static TRACER: OnceLock<opentelemetry_sdk::trace::SdkTracer> = OnceLock::new();

/// Marks the OpenTelemetry context of a request whose trace is not
/// sampled: nothing within it is exported, and nothing within it starts a
/// trace of its own. For a trace that starts here, it keeps the ids its
/// upstream requests pass on, drawn at the first ([`current_trace_headers`]).
#[derive(Clone, Debug, Default)]
struct NotSampled {
    /// The trace context drawn for the request's upstreams.
    drawn: std::sync::Arc<OnceLock<opentelemetry::trace::SpanContext>>,
}

/// The target of a request's span ([`request_span`]).
const REQUEST_TARGET: &str = "toolhost::request";

/// The target of the policy's span ([`policy_span`]).
const POLICY_TARGET: &str = "toolhost::policy";

/// The target of a component run's log span ([`component_span`]'s).
pub const CALL_TARGET: &str = "toolhost::call";

/// Whether `[telemetry]` is on in this process.
pub fn enabled() -> bool {
    SAMPLER.get().is_some()
}

/// Whether a trace with `parent` (a client's span, or none) is kept: the
/// configured sampler's decision, made once per trace.
fn sampled(parent: &opentelemetry::Context, name: &str, kind: SpanKind) -> bool {
    let Some(sampler) = SAMPLER.get() else {
        return false;
    };
    let span = parent.span();
    let known = span.span_context();
    let trace_id = if known.is_valid() {
        known.trace_id()
    } else {
        RandomIdGenerator::default().new_trace_id()
    };
    let result = sampler.should_sample(Some(parent), trace_id, name, &kind, &[], &[]);
    result.decision == SamplingDecision::RecordAndSample
}

/// The layer's filter: whether the span `meta` describes becomes an
/// OpenTelemetry span (see the module doc). Called only for the spans of
/// toolhost's own crates at `INFO` or above (the callsite filter).
fn exported_span<S>(
    meta: &tracing::Metadata<'_>,
    cx: &tracing_subscriber::layer::Context<'_, S>,
) -> bool
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    if !exportable(meta) {
        return false;
    }
    // Within a span of the layer's own (the filtered context sees only
    // exported spans).
    if cx.lookup_current().is_some() {
        return true;
    }
    // Within a sampled request, policy or component ([`Span`]s), or within
    // an unsampled request.
    let current = opentelemetry::Context::current();
    if current.span().span_context().is_sampled() {
        return true;
    }
    if current.get::<NotSampled>().is_some() {
        return false;
    }
    // Outside every span: a trace that starts here.
    cx.current_span().id().is_none()
        && sampled(
            &opentelemetry::Context::new(),
            meta.name(),
            SpanKind::Internal,
        )
}

/// Spans the layer may export: toolhost's own, at `INFO` or above, never
/// those a [`Span`] exports itself, never an event (log events stay the
/// operator's log: they may carry guest text).
fn exportable(meta: &tracing::Metadata<'_>) -> bool {
    meta.is_span()
        && *meta.level() <= tracing::Level::INFO
        && meta.target().starts_with("toolhost")
        && ![REQUEST_TARGET, POLICY_TARGET, CALL_TARGET].contains(&meta.target())
}

/// Keeps the exporter running; dropping it sends what is queued (waiting
/// at most two seconds: a collector that is down costs those spans).
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        let _ = self.provider.shutdown();
    }
}

/// The `tracing` layer that turns toolhost's spans into OpenTelemetry spans
/// exported as `settings` say, and the guard that keeps the export running.
/// Only spans reach it (log events stay the operator's log: they may carry
/// guest text), and only those of toolhost's own crates at `INFO` or above.
pub fn layer<S>(
    settings: &TelemetrySettings,
) -> anyhow::Result<(impl tracing_subscriber::Layer<S> + use<S>, Telemetry)>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    let processor = export::QueueProcessor::start(settings)?;
    let resource = opentelemetry_sdk::Resource::builder_empty()
        .with_service_name(settings.service_name.clone())
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    // A client's sampled parent is followed; traces that start here are
    // kept at the operator's ratio. Decided before a span reaches the SDK
    // (`exported_span`), so the SDK keeps every span it is given.
    let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
        settings.sampling_ratio,
    )));
    let provider = SdkTracerProvider::builder()
        .with_resource(resource)
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
        .with_span_processor(processor)
        .build();
    let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "toolhost");
    let _ = TRACER.set(tracer.clone());
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_level(false)
        .with_tracked_inactivity(false)
        // Parents are found through the `tracing` spans (the filtered
        // context), so no OpenTelemetry context is attached and detached
        // at each poll of an instrumented future.
        .with_context_activation(false)
        .with_filter(
            tracing_subscriber::filter::dynamic_filter_fn(exported_span::<S>).with_callsite_filter(
                |meta| {
                    if exportable(meta) {
                        tracing::subscriber::Interest::sometimes()
                    } else {
                        tracing::subscriber::Interest::never()
                    }
                },
            ),
        );
    SAMPLER
        .set(sampler)
        .map_err(|_| anyhow::anyhow!("the trace layer is installed once per process"))?;
    Ok((layer, Telemetry { provider }))
}

/// The target of a request, as its span names it.
pub enum SpanTarget<'a> {
    /// A tool (`tools/call`): `gen_ai.tool.name`, and the span's name.
    Tool(&'a str),
    /// A resource URI (`resources/read`, subscribe): `mcp.resource.uri`,
    /// never in the span's name (unbounded).
    Resource(&'a str),
    /// A prompt (`prompts/get`): `gen_ai.prompt.name`, and the span's name.
    Prompt(&'a str),
    /// Nothing in particular.
    None,
}

/// One span as the log and the trace see it: the `tracing` span the log's
/// lines within it are written under, and, when its trace is sampled, the
/// OpenTelemetry span exported for it, made with the SDK directly (see the
/// module doc). Code runs within it through [`Span::in_span`]; the
/// exported span ends when this is dropped.
pub struct Span {
    /// The log's span.
    log: tracing::Span,
    /// The OpenTelemetry context code within runs in: the exported span's,
    /// an unsampled request's (marked [`NotSampled`]), or none (traces off,
    /// or nothing to export).
    context: Option<opentelemetry::Context>,
    /// Whether `context` holds a span of this one's own, to end.
    exported: bool,
}

impl Span {
    /// `log` alone: nothing exported, the context left as it is.
    fn log_only(log: tracing::Span) -> Span {
        Span {
            log,
            context: None,
            exported: false,
        }
    }

    /// `log`, with an exported span named `name` of `kind` with
    /// `attributes`: a child of the current context's span when that is
    /// sampled; nothing within a request not sampled; outside any request,
    /// a trace of its own if the sampler keeps it.
    fn within_current(
        log: tracing::Span,
        name: &'static str,
        kind: SpanKind,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> Span {
        let Some(tracer) = TRACER.get().filter(|_| enabled()) else {
            return Span::log_only(log);
        };
        let current = opentelemetry::Context::current();
        let export = current.span().span_context().is_sampled()
            || (current.get::<NotSampled>().is_none()
                && tracing::Span::current().is_none()
                && sampled(&opentelemetry::Context::new(), name, kind.clone()));
        if !export {
            return Span::log_only(log);
        }
        let span = tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes())
            .start_with_context(tracer, &current);
        Span {
            log,
            context: Some(current.with_span(span)),
            exported: true,
        }
    }

    /// The log's span.
    pub fn log(&self) -> &tracing::Span {
        &self.log
    }

    /// `future`, run within this span: its log lines under the log's span,
    /// what it traces within this span's context.
    pub fn in_span<F: std::future::Future>(
        &self,
        future: F,
    ) -> impl std::future::Future<Output = F::Output> + use<F> {
        let future = tracing::Instrument::instrument(future, self.log.clone());
        let context = self.context.clone();
        async move {
            match context {
                Some(context) => future.with_context(context).await,
                None => future.await,
            }
        }
    }

    /// `f` on the exported span, if there is one.
    fn on_exported(&self, f: impl FnOnce(opentelemetry::trace::SpanRef<'_>)) {
        if let (true, Some(context)) = (self.exported, &self.context) {
            f(context.span());
        }
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        self.on_exported(|span| span.end());
    }
}

/// The server span of one MCP request of `method`, with the MCP semantic
/// conventions' attributes read from `context`, its parent taken from the
/// request's `_meta` or, failing that, its HTTP headers. The one place a
/// request's span begins, and where its trace is sampled: an unsampled
/// request's span is a plain `tracing` span (the log's `request: …`, or
/// `request{trace_id=…}: …` naming a client's trace) whose code runs in a
/// context marked not sampled, and nothing is built for the trace. A
/// sampled request's log lines name its trace and its server span
/// (`request{trace_id=… span_id=…}: …`), to open in a trace viewer: fields
/// of the log's span only, since the layer never sees it, so never also
/// attributes.
pub fn request_span(
    context: &RequestContext<RoleServer>,
    method: &'static str,
    target: SpanTarget<'_>,
) -> Span {
    // With tracing off the log's `request` span would carry nothing; not
    // making it saves every request a span of the log's own, entered and
    // left at each poll.
    let Some(tracer) = TRACER.get().filter(|_| enabled()) else {
        return Span::log_only(tracing::Span::none());
    };
    let log = tracing::info_span!(
        target: REQUEST_TARGET,
        "request",
        trace_id = Empty,
        span_id = Empty
    );
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let parent = parent_context(context, parts);
    if !sampled(&parent, method, SpanKind::Server) {
        // A client's trace not sampled: its id on the log lines (a field of
        // a span never exported, so never an attribute). Its context stays
        // in `parent`, for the upstreams it is passed on to.
        let client = parent.span();
        if client.span_context().is_valid() {
            let trace_id = client.span_context().trace_id();
            log.record("trace_id", tracing::field::display(trace_id));
        }
        return Span {
            log,
            context: Some(parent.with_value(NotSampled::default())),
            exported: false,
        };
    }
    let name = match target {
        SpanTarget::Tool(name) | SpanTarget::Prompt(name) => format!("{method} {name}"),
        _ => method.to_string(),
    };
    let mut attributes = Vec::with_capacity(8);
    attributes.push(KeyValue::new("mcp.method.name", method));
    attributes.push(KeyValue::new("jsonrpc.request.id", request_id(&context.id)));
    match target {
        SpanTarget::Tool(name) => {
            attributes.push(KeyValue::new("gen_ai.tool.name", name.to_string()));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        SpanTarget::Resource(uri) => {
            attributes.push(KeyValue::new("mcp.resource.uri", without_query(uri)));
        }
        SpanTarget::Prompt(name) => {
            attributes.push(KeyValue::new("gen_ai.prompt.name", name.to_string()));
        }
        SpanTarget::None => {}
    }
    if let Some(version) = context.protocol_version() {
        attributes.push(KeyValue::new("mcp.protocol.version", version.to_string()));
    }
    match parts {
        Some(parts) => {
            attributes.push(KeyValue::new("network.transport", "tcp"));
            attributes.push(KeyValue::new("network.protocol.name", "http"));
            if let Some(session) = parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
            {
                attributes.push(KeyValue::new("mcp.session.id", session.to_string()));
            }
            if let Some(identity) = parts.extensions.get::<Identity>() {
                attributes.push(KeyValue::new("user.id", identity.key()));
            }
        }
        None => attributes.push(KeyValue::new("network.transport", "pipe")),
    }
    let span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Server)
        .with_attributes(attributes)
        .start_with_context(tracer, &parent);
    let own = opentelemetry::trace::Span::span_context(&span);
    log.record("trace_id", tracing::field::display(own.trace_id()));
    log.record("span_id", tracing::field::display(own.span_id()));
    Span {
        log,
        context: Some(parent.with_span(span)),
        exported: true,
    }
}

/// Marks `span` (a server span) as having ended with a JSON-RPC error
/// `code`, or, with `tool_error`, a tool error (`isError`).
pub fn record_error(span: &Span, code: Option<i32>, tool_error: bool) {
    span.on_exported(|exported| mark_error(&exported, code, tool_error));
}

/// Marks the span code runs in now (within a request: the request's
/// server span) as having ended with a tool error.
pub fn record_tool_error() {
    let current = opentelemetry::Context::current();
    let exported = current.span();
    if exported.span_context().is_sampled() {
        mark_error(&exported, None, true);
    }
}

/// Sets the error status and attributes on `exported`.
fn mark_error(exported: &opentelemetry::trace::SpanRef<'_>, code: Option<i32>, tool_error: bool) {
    if code.is_none() && !tool_error {
        return;
    }
    exported.set_status(Status::error(""));
    match code {
        Some(code) => {
            let code = code.to_string();
            exported.set_attribute(KeyValue::new("error.type", code.clone()));
            exported.set_attribute(KeyValue::new("rpc.response.status_code", code));
        }
        None => exported.set_attribute(KeyValue::new("error.type", "tool_error")),
    }
}

/// The span of `[[policy.rules]]`' decision; [`record_policy`] says what
/// it decided.
pub fn policy_span() -> Span {
    if !enabled() {
        // Nothing to export and nothing for the log: the rule and the
        // outcome are written on the audit record and the metrics.
        return Span::log_only(tracing::Span::none());
    }
    Span::within_current(
        tracing::info_span!(target: POLICY_TARGET, "policy"),
        "policy",
        SpanKind::Internal,
        Vec::new,
    )
}

/// Records the policy's decision on its span: the rule and the outcome.
pub fn record_policy(span: &Span, rule: &str, outcome: &str) {
    span.on_exported(|exported| {
        exported.set_attributes([
            KeyValue::new("toolhost.policy.rule", rule.to_string()),
            KeyValue::new("toolhost.policy.outcome", outcome.to_string()),
        ]);
    });
}

/// Attributes a `component` span starts with ([`component_span`]).
const COMPONENT_ATTRIBUTES: usize = 4;

/// Attributes [`record_cost`] adds to it, at most.
const COST_ATTRIBUTES: usize = 12;

/// The trace's span of one run of `plugin`'s code for `tool` (its served
/// name), named `component`, with the plugin's block, file and digest,
/// beside `log` (the log's `call` span, of target [`CALL_TARGET`]).
///
/// The four strings are the plugin's [`Labels`](crate::plugin::Labels),
/// made once at load: a call's attributes share them (a reference count
/// each) rather than copy them, and the attribute list has room from the
/// start for the cost the call adds when it ends, so it never grows.
pub fn component_span(log: tracing::Span, plugin: &crate::plugin::Plugin, tool: &str) -> Span {
    Span::within_current(log, "component", SpanKind::Internal, || {
        let labels = &plugin.labels;
        let mut attributes = Vec::with_capacity(COMPONENT_ATTRIBUTES + COST_ATTRIBUTES);
        attributes.extend([
            KeyValue::new("toolhost.plugin", shared(&labels.block)),
            KeyValue::new("toolhost.component.file", shared(&labels.file)),
            KeyValue::new("toolhost.component.digest", shared(&labels.digest)),
            KeyValue::new("gen_ai.tool.name", shared(&labels.tool(tool))),
        ]);
        attributes
    })
}

/// `text` as an attribute value that shares it (no copy of the text).
fn shared(text: &std::sync::Arc<str>) -> opentelemetry::Value {
    opentelemetry::Value::String(opentelemetry::StringValue::from(text.clone()))
}

/// The W3C trace context of the current span, as headers, for a plugin
/// whose upstream requests carry it (`propagate_trace_context`). Within a
/// request not sampled, the unsampled context (`unsampled_context`), so
/// that the upstream follows the decision made here rather than start a
/// trace of its own.
pub fn current_trace_headers() -> Vec<(String, String)> {
    if !enabled() {
        return Vec::new();
    }
    let current = tracing::Span::current();
    let mut context = current.context();
    if !context.span().span_context().is_valid() {
        // Within a [`Span`] rather than a span of the layer's.
        context = opentelemetry::Context::current();
    }
    if let Some(not_sampled) = context.get::<NotSampled>() {
        // A request not sampled: the client's context as it came, or one
        // drawn for the whole request.
        let client = context.span().span_context().clone();
        let passed = if client.is_valid() {
            client
        } else {
            not_sampled.drawn.get_or_init(unsampled_ids).clone()
        };
        context = opentelemetry::Context::new().with_remote_span_context(passed);
    }
    if !context.span().span_context().is_valid() {
        match unsampled_context(&current) {
            Some(unsampled) => {
                context = opentelemetry::Context::new().with_remote_span_context(unsampled)
            }
            None => return Vec::new(),
        }
    }
    let mut headers = std::collections::HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut headers);
    headers.into_iter().collect()
}

/// The trace context, not sampled, drawn for a trace that starts outside
/// any request, kept in its outermost span's extensions.
struct Unsampled(opentelemetry::trace::SpanContext);

/// The context an upstream request made within `current` (a span with no
/// exported span) passes on when no request's context is current (a
/// request's is `NotSampled`'s, in [`current_trace_headers`]): for a trace
/// that starts here unsampled, one drawn at the first upstream request and
/// kept with the request's span, or the outermost span for a call run
/// outside any request, so that every upstream request of it names one
/// trace. Drawn only here, so a call that sends nothing upstream pays
/// nothing for it.
fn unsampled_context(current: &tracing::Span) -> Option<opentelemetry::trace::SpanContext> {
    use tracing_subscriber::registry::LookupSpan as _;
    let id = current.id()?;
    tracing::dispatcher::get_default(|dispatch| {
        let registry = dispatch.downcast_ref::<tracing_subscriber::Registry>()?;
        let span = registry.span(&id)?;
        let mut holder = None;
        for span in span.scope() {
            if let Some(Unsampled(context)) = span.extensions().get::<Unsampled>() {
                return Some(context.clone());
            }
            let is_request = span.metadata().target() == REQUEST_TARGET;
            holder = Some(span);
            if is_request {
                break;
            }
        }
        let holder = holder?;
        let mut extensions = holder.extensions_mut();
        // Another upstream request of the call may have drawn it meanwhile.
        if let Some(Unsampled(context)) = extensions.get_mut::<Unsampled>() {
            return Some(context.clone());
        }
        let context = unsampled_ids();
        extensions.insert(Unsampled(context.clone()));
        Some(context)
    })
}

/// A new trace context, not sampled, for a trace that starts here.
fn unsampled_ids() -> opentelemetry::trace::SpanContext {
    use opentelemetry::trace::{SpanContext, TraceFlags, TraceState};
    let ids = RandomIdGenerator::default();
    SpanContext::new(
        ids.new_trace_id(),
        ids.new_span_id(),
        TraceFlags::default(),
        false,
        TraceState::default(),
    )
}

/// The parent of a request's span: the `traceparent`/`tracestate` of its
/// `_meta` if it has one, else of its HTTP headers.
fn parent_context(
    context: &RequestContext<RoleServer>,
    parts: Option<&axum::http::request::Parts>,
) -> opentelemetry::Context {
    let propagator = TraceContextPropagator::new();
    let from_meta = propagator.extract(&MetaCarrier(&context.meta));
    if from_meta.span().span_context().is_valid() {
        return from_meta;
    }
    match parts {
        Some(parts) => propagator.extract(&HeaderCarrier(&parts.headers)),
        None => opentelemetry::Context::new(),
    }
}

/// A request's `_meta`, read as a propagation carrier.
struct MetaCarrier<'a>(&'a rmcp::model::JsonObject);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(serde_json::Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// HTTP headers, read as a propagation carrier.
struct HeaderCarrier<'a>(&'a http::HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// A JSON-RPC id as the attribute writes it.
fn request_id(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}

/// A URI without its query and fragment (they may carry data).
pub fn without_query(uri: &str) -> String {
    uri.split(['?', '#']).next().unwrap_or_default().to_string()
}

/// What a running call reports to traces and the cost metrics: the trace
/// context for its upstream requests, and what it cost (on the current
/// span, the component's, and in the cost histograms).
///
/// Its names are the plugin's shared [`Labels`](crate::plugin::Labels)
/// ([`CallTrace::new`]), not copies made for every call.
#[derive(Clone)]
pub struct CallTrace {
    /// The plugin's block name.
    pub plugin: std::sync::Arc<str>,
    /// The tool's served name.
    pub tool: std::sync::Arc<str>,
}

impl CallTrace {
    /// The trace of a call of `plugin`'s tool served as `tool`.
    pub fn new(plugin: &crate::plugin::Plugin, tool: &str) -> CallTrace {
        CallTrace {
            plugin: plugin.labels.block.clone(),
            tool: plugin.labels.tool(tool),
        }
    }
}

impl toolhost_runtime::hooks::CallHooks for CallTrace {
    fn trace_context(&self) -> Vec<(String, String)> {
        current_trace_headers()
    }

    fn finished(&self, cost: &crate::cost::CallCost) {
        crate::metrics::call_cost(&self.plugin, &self.tool, cost);
        record_cost(cost);
    }

    fn within_call(
        &self,
        work: toolhost_runtime::hooks::BoxFuture<'static, ()>,
    ) -> toolhost_runtime::hooks::BoxFuture<'static, ()> {
        if !enabled() {
            return work;
        }
        Box::pin(work.with_context(opentelemetry::Context::current()))
    }
}

/// Puts `cost` on the span code runs in now (within a call: its
/// `component` span) as `toolhost.cost.*` attributes.
pub fn record_cost(cost: &crate::cost::CallCost) {
    let current = opentelemetry::Context::current();
    let exported = current.span();
    if !exported.span_context().is_sampled() {
        return;
    }
    {
        let int = |us: u64| i64::try_from(us).unwrap_or(i64::MAX);
        exported.set_attributes([
            KeyValue::new("toolhost.cost.cpu_us", int(cost.cpu_us)),
            KeyValue::new("toolhost.cost.queue_us", int(cost.queue_us)),
            KeyValue::new("toolhost.cost.run_us", int(cost.run_us)),
            KeyValue::new("toolhost.cost.upstream_us", int(cost.upstream_us)),
            KeyValue::new("toolhost.cost.waiting_us", int(cost.waiting_us)),
            KeyValue::new(
                "toolhost.cost.peak_memory_bytes",
                int(cost.peak_memory_bytes),
            ),
            KeyValue::new("toolhost.cost.epoch_ticks", int(cost.epoch_ticks)),
            KeyValue::new(
                "toolhost.cost.upstream_requests",
                i64::from(cost.upstream_requests),
            ),
            KeyValue::new("toolhost.cost.bytes_out", int(cost.bytes_out)),
            KeyValue::new("toolhost.cost.bytes_in", int(cost.bytes_in)),
            KeyValue::new(
                "toolhost.cost.hosts",
                opentelemetry::Value::Array(opentelemetry::Array::String(
                    cost.hosts.iter().map(|h| h.clone().into()).collect(),
                )),
            ),
        ]);
        if let Some(limit) = &cost.limit {
            exported.set_attribute(KeyValue::new("toolhost.cost.limit", limit.clone()));
        }
    }
}
