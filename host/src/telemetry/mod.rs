//! Traces: OpenTelemetry spans of every MCP request, exported over OTLP when
//! `[telemetry]` names a collector (ADR 0039, [observability.md]).
//!
//! Spans are `tracing` spans; a `tracing-opentelemetry` layer, installed by
//! [`crate::logging`] only when `[telemetry]` is set, turns those of
//! toolhost's own crates into OpenTelemetry spans ([`layer`]), and
//! [`export::QueueProcessor`] sends them without ever holding up a call.
//! Without `[telemetry]` nothing is exported, and the spans cost what any
//! `tracing` span costs.
//!
//! Where each span begins (one place each):
//!
//! | span | kind | where |
//! |---|---|---|
//! | `{mcp.method.name} {target}` | server | [`request_span`], for every request the server dispatches (`server/mod.rs`) |
//! | `policy` | internal | [`policy_span`], around `[[policy.rules]]`' decision |
//! | `component` | internal | the run of a component's code (`server/tools.rs`, `server/request.rs`) |
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

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use rmcp::service::{RequestContext, RoleServer};
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::auth::Identity;
use crate::config::telemetry::TelemetrySettings;

/// Whether spans are exported: set once, when the layer is installed.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether `[telemetry]` is on in this process.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
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
    let provider = SdkTracerProvider::builder()
        .with_resource(resource)
        // A client's sampled parent is followed; traces that start here
        // are kept at the operator's ratio.
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            settings.sampling_ratio,
        ))))
        .with_span_processor(processor)
        .build();
    let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "toolhost");
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_level(false)
        .with_tracked_inactivity(false)
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.is_span()
                && *meta.level() <= tracing::Level::INFO
                && meta.target().starts_with("toolhost")
        }));
    ENABLED.store(true, Ordering::Relaxed);
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

/// The server span of one MCP request of `method`, with the MCP semantic
/// conventions' attributes read from `context`, its parent taken from the
/// request's `_meta` or, failing that, its HTTP headers. The one place a
/// request's span begins. Its `trace_id` and `span_id` fields put the
/// trace and this span on every log line written inside it.
pub fn request_span(
    context: &RequestContext<RoleServer>,
    method: &'static str,
    target: SpanTarget<'_>,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: "toolhost::request",
        "request",
        otel.name = Empty,
        otel.kind = Empty,
        otel.status_code = Empty,
        trace_id = Empty,
        span_id = Empty,
    );
    if !enabled() || span.is_disabled() {
        return span;
    }
    let name = match target {
        SpanTarget::Tool(name) | SpanTarget::Prompt(name) => format!("{method} {name}"),
        _ => method.to_string(),
    };
    span.record("otel.name", name.as_str());
    span.record("otel.kind", "server");
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let _ = span.set_parent(parent_context(context, parts));
    span.set_attribute("mcp.method.name", method);
    span.set_attribute("jsonrpc.request.id", request_id(&context.id));
    match target {
        SpanTarget::Tool(name) => {
            span.set_attribute("gen_ai.tool.name", name.to_string());
            span.set_attribute("gen_ai.operation.name", "execute_tool");
        }
        SpanTarget::Resource(uri) => span.set_attribute("mcp.resource.uri", without_query(uri)),
        SpanTarget::Prompt(name) => span.set_attribute("gen_ai.prompt.name", name.to_string()),
        SpanTarget::None => {}
    }
    if let Some(version) = context.protocol_version() {
        span.set_attribute("mcp.protocol.version", version.to_string());
    }
    match parts {
        Some(parts) => {
            span.set_attribute("network.transport", "tcp");
            span.set_attribute("network.protocol.name", "http");
            if let Some(session) = parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
            {
                span.set_attribute("mcp.session.id", session.to_string());
            }
            if let Some(identity) = parts.extensions.get::<Identity>() {
                span.set_attribute("user.id", identity.key());
            }
        }
        None => span.set_attribute("network.transport", "pipe"),
    }
    // On every log line written within the request: the trace, and this
    // span, to open in a trace viewer.
    let context = span.context();
    let own = context.span().span_context().clone();
    span.record("trace_id", tracing::field::display(own.trace_id()));
    span.record("span_id", tracing::field::display(own.span_id()));
    span
}

/// Marks `span` (a server span) as having ended with a JSON-RPC error
/// `code`, or, with `tool_error`, a tool error (`isError`).
pub fn record_error(span: &tracing::Span, code: Option<i32>, tool_error: bool) {
    if !enabled() {
        return;
    }
    if let Some(code) = code {
        span.record("otel.status_code", "error");
        span.set_attribute("error.type", code.to_string());
        span.set_attribute("rpc.response.status_code", code.to_string());
    } else if tool_error {
        span.record("otel.status_code", "error");
        span.set_attribute("error.type", "tool_error");
    }
}

/// The span of `[[policy.rules]]`' decision; [`record_policy`] says what
/// it decided.
pub fn policy_span() -> tracing::Span {
    tracing::info_span!(target: "toolhost::policy", "policy", otel.name = "policy")
}

/// Records the policy's decision on its span: the rule and the outcome.
pub fn record_policy(span: &tracing::Span, rule: &str, outcome: &str) {
    if enabled() {
        span.set_attribute("toolhost.policy.rule", rule.to_string());
        span.set_attribute("toolhost.policy.outcome", outcome.to_string());
    }
}

/// Makes `span` (declared with an empty `otel.name`) the trace's span of
/// one run of `plugin`'s code for `tool`: named `component`, with the
/// plugin's block, file and digest.
pub fn component(span: &tracing::Span, plugin: &crate::plugin::Plugin, tool: &str) {
    if !enabled() {
        return;
    }
    span.record("otel.name", "component");
    span.set_attribute("toolhost.plugin", plugin.settings.name.clone());
    span.set_attribute("toolhost.component.file", plugin.file.clone());
    span.set_attribute("toolhost.component.digest", plugin.digest.clone());
    span.set_attribute("gen_ai.tool.name", tool.to_string());
}

/// The W3C trace context of the current span, as headers, for a plugin
/// whose upstream requests carry it (`propagate_trace_context`).
pub fn current_trace_headers() -> Vec<(String, String)> {
    if !enabled() {
        return Vec::new();
    }
    let context = tracing::Span::current().context();
    if !context.span().span_context().is_valid() {
        return Vec::new();
    }
    let mut headers = std::collections::HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut headers);
    headers.into_iter().collect()
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
#[derive(Clone)]
pub struct CallTrace {
    /// The plugin's block name.
    pub plugin: String,
    /// The tool's served name.
    pub tool: String,
}

impl toolhost_runtime::hooks::CallHooks for CallTrace {
    fn trace_context(&self) -> Vec<(String, String)> {
        current_trace_headers()
    }

    fn finished(&self, cost: &crate::cost::CallCost) {
        crate::metrics::call_cost(&self.plugin, &self.tool, cost);
        record_cost(&tracing::Span::current(), cost);
    }
}

/// Puts `cost` on `span` as `toolhost.cost.*` attributes.
pub fn record_cost(span: &tracing::Span, cost: &crate::cost::CallCost) {
    if !enabled() {
        return;
    }
    let int = |us: u64| i64::try_from(us).unwrap_or(i64::MAX);
    span.set_attribute("toolhost.cost.cpu_us", int(cost.cpu_us));
    span.set_attribute("toolhost.cost.queue_us", int(cost.queue_us));
    span.set_attribute("toolhost.cost.run_us", int(cost.run_us));
    span.set_attribute("toolhost.cost.upstream_us", int(cost.upstream_us));
    span.set_attribute("toolhost.cost.waiting_us", int(cost.waiting_us));
    span.set_attribute(
        "toolhost.cost.peak_memory_bytes",
        int(cost.peak_memory_bytes),
    );
    span.set_attribute("toolhost.cost.epoch_ticks", int(cost.epoch_ticks));
    span.set_attribute(
        "toolhost.cost.upstream_requests",
        i64::from(cost.upstream_requests),
    );
    span.set_attribute("toolhost.cost.bytes_out", int(cost.bytes_out));
    span.set_attribute("toolhost.cost.bytes_in", int(cost.bytes_in));
    span.set_attribute(
        "toolhost.cost.hosts",
        opentelemetry::Value::Array(opentelemetry::Array::String(
            cost.hosts.iter().map(|h| h.clone().into()).collect(),
        )),
    );
    if let Some(limit) = &cost.limit {
        span.set_attribute("toolhost.cost.limit", limit.clone());
    }
}
