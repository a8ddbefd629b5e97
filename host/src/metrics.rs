//! Prometheus metrics: what the host counts, and `/metrics` to read it.
//!
//! Recording goes through the `metrics` crate's facade: a module that
//! knows a fact records it where it happens, with one macro (or one of the
//! typed helpers below), and needs no handle passed to it. Until
//! [`install`] runs (only when the operator asks for metrics) nothing is
//! recorded: the helpers return at once and the facade's macros are no-ops.
//! What every tool call records (its count and duration, its cost: twelve
//! series) goes through handles registered once per plugin and tool and
//! kept (`SeriesCache`), not through a lookup in the recorder's registry
//! per series per call.
//! [`install`] puts `metrics-exporter-prometheus`'s recorder in place and
//! returns its handle; [`router`] serves the handle's text at
//! `GET /metrics` (exposition format 0.0.4), and [`serve`] runs that router
//! on its own listener (`[host] metrics`).
//!
//! # The metrics
//!
//! | name | type | labels | meaning |
//! |---|---|---|---|
//! | `toolhost_calls_total` | counter | `tool`, `outcome` | `tools/call` requests by how they ended: `ok`, `error` (a tool error: `isError: true`), `input_required` (a 2026-07-28 client was asked to confirm), `cancelled` (by the client), `rejected` (a JSON-RPC error for a known tool: a bad `requestState` or `inputResponses`), `unknown_tool` (with `tool="(unknown)"`) |
//! | `toolhost_call_errors_total` | counter | `tool`, `code` | calls that ended with a tool error, by the first issue's code (`VALIDATION_ERROR`, `PERMISSION_DENIED`, `NOT_FOUND`, `CONFLICT`, `RATE_LIMIT`, `TRANSIENT`, `INTERNAL`) |
//! | `toolhost_call_duration_seconds` | histogram | `tool` | wall-clock time of a call that ran (every outcome but `rejected` and `unknown_tool`), from finding the tool to the answer: waiting for a turn, the guest, its HTTP requests and a legacy client's user included; buckets 1 ms to 60 s ([`CALL_DURATION_BUCKETS`]) |
//! | `toolhost_confirmations_total` | counter | `outcome` | answers to a tool's confirmation question: `confirmed`, `declined`, `cancelled` (dismissed or expired), `no_elicitation` (the client cannot ask and the operator's policy said no), `busy` (not asked: too many calls already wait for a user). A 2026-07-28 client's answer counts once, when it arrives, not again when the call replays it |
//! | `toolhost_upstream_requests_total` | counter | `plugin`, `host`, `status` | HTTP requests the host sent for a plugin (each redirect hop is one), by the `allow` entry's host as the operator wrote it (`api.example.com`, `*.example.com`, an address) and the response's status code (`200`, `503`, …), or `timeout` / `connection_failed` when none came |
//! | `toolhost_policy_denials_total` | counter | `plugin`, `reason` | requests the host refused to send, by [`DenialReason`]: `scheme`, `host_not_allowed`, `port`, `method`, `path`, `ambiguous_path`, `private_address`, `credential_cleartext`, `read_only`, `unconfirmed`, `method_override`, `url_override`, `no_caller_credential` |
//! | `toolhost_policy_decisions_total` | counter | `outcome`, `rule` | requests `[[policy.rules]]` decided (ADR 0034): `allow`, `deny`, `confirm`, `limit`, `hide`, by the rule's name (`default`, `access`) |
//! | `toolhost_approvals_total` | counter | `event` | approvals (ADR 0038) by what happened to them: `requested`, `approved`, `denied`, `spent` (the call ran), `void` (the call changed first), `cancelled`, `lapsed`, `lost` (a task's run lost with its replica, ADR 0068) |
//! | `toolhost_approvals_pending` | gauge | none | approvals waiting for an approver, as this replica last counted them (every replica sees the shared store's count) |
//! | `toolhost_approval_decision_seconds` | histogram | `decision` | from the call that asked to an approver's decision (`approved`, `denied`); buckets 1 s to a week ([`APPROVAL_DECISION_BUCKETS`]) |
//! | `toolhost_reloads_total` | counter | `result` | rescans of the plugin directory after a change (hot reload; the initial load is not one): `changed` (a new registry was published), `unchanged`, `failed` (the directory could not be read); and reloads of the config file: `changed` (the new settings serve), `failed` (the edit was refused) |
//! | `toolhost_component_load_failures_total` | counter | none | component files that failed to load, at start or on a reload (each distinct content once) |
//! | `toolhost_components_loaded` | gauge | none | component files serving now |
//! | `toolhost_tools_loaded` | gauge | none | tools serving now |
//! | `toolhost_http_sessions_open` | gauge | none | open MCP sessions of the HTTP transport ([`HTTP_SESSIONS_OPEN`]) |
//! | `toolhost_http_streams_open` | gauge | none | open SSE streams of the HTTP transport ([`HTTP_STREAMS_OPEN`]) |
//! | `toolhost_http_sessions_refused_total` | counter | `limit` | legacy `initialize` requests answered 429 ([`HTTP_SESSIONS_REFUSED`]), by the bound they met: `per_identity` (`http.sessions_per_identity`) or `total` (`http.max_sessions`) |
//! | `toolhost_http_sessions_uninitialized_total` | counter | none | legacy sessions closed because they sent no `notifications/initialized` within `http.uninitialized_session_idle_secs` ([`HTTP_SESSIONS_UNINITIALIZED`]) |
//! | `toolhost_http_connections_evicted_total` | counter | none | with `[auth]`, connections none of whose requests had authenticated, closed to make room for a new one past `http.max_unauthenticated_connections` ([`HTTP_CONNECTIONS_EVICTED`]) |
//! | `toolhost_auth_failures_total` | counter | `reason` | HTTP requests refused for their credentials ([`AUTH_FAILURES`]; the auth code names its reasons) |
//! | `toolhost_audit_write_failures_total` | counter | none | records the audit trail (`host.audit`) could not write ([`crate::audit`]); while writes fail, mutating calls are refused |
//! | `toolhost_offer_calls_total` | counter | `plugin`, `kind`, `outcome` | reads, gets and completions that ran a 0.2 component's code ([`OfferCount`]), by the plugin block, the [`OfferKind`] (`resource_read`, `prompt_get`, `completion`) and how they ended: `ok`, `not_found` (the guest said so), `error` (anything else: the guest's error, a trap, a limit, a policy refusal), `cancelled` (by the client). Requests refused before guest code runs (an unknown URI or prompt, bad arguments, an argument not completable) are not counted |
//! | `toolhost_offer_call_duration_seconds` | histogram | `plugin`, `kind` | wall-clock time of each of those, from its start to the answer: waiting for a turn, the guest and its HTTP requests included; the buckets of `toolhost_call_duration_seconds` |
//! | `toolhost_offers_loaded` | gauge | `kind` | what components offer beside tools, serving now: `resource`, `template`, `prompt` |
//! | `toolhost_call_cpu_seconds` | histogram | `plugin`, `tool` | CPU time of each call's execution (the component and the host's work for its imports; [`crate::cost::CallCost`]); buckets of `toolhost_call_duration_seconds` |
//! | `toolhost_call_wall_seconds` | histogram | `plugin`, `tool`, `part` | each call's wall time by part: `queue` (waiting for a turn and a slot), `run` (instantiation to the end), `upstream` (in upstream requests, part of `run`), `waiting` (for a person, part of `run`) |
//! | `toolhost_call_peak_memory_bytes` | histogram | `plugin`, `tool` | the most linear memory each call held; buckets 1 MiB to 4 GiB |
//! | `toolhost_call_upstream_bytes` | histogram | `plugin`, `tool`, `direction` | body bytes each call sent (`out`) and read (`in`) upstream; buckets 0 to 64 MiB |
//! | `toolhost_call_upstream_requests` | histogram | `plugin`, `tool` | upstream requests per call |
//! | `toolhost_call_epoch_ticks` | histogram | `plugin`, `tool` | epoch ticks (10 ms) at which each call's component was found running |
//! | `toolhost_call_limits_hit_total` | counter | `plugin`, `tool`, `limit` | calls that hit a limit, by its key (`limits.memory_mib`, `limits.call_timeout_secs`, `limits.http_requests_per_call`, `limits.http_body_bytes`, `limits.output_bytes`) |
//! | `toolhost_trace_spans_dropped_total` | counter | `reason` | finished spans that were not exported (`[telemetry]`, [`crate::telemetry`]): `queue_full` (`telemetry.queue_spans` spans were already waiting), `export_failed` (the collector refused, failed or took longer than `telemetry.export_timeout_secs`), `export_stopped` (after the exporter ended), `rejected` (over http/protobuf, the collector's answer rejected them) |
//! | `toolhost_trace_spans_exported_total` | counter | — | finished spans the collector took |
//! | `toolhost_trace_export_duration_seconds` | histogram | `outcome` | each export request to the collector, from send to answer: `ok`, `failed` (refused or unreachable), `timeout` (past `telemetry.export_timeout_secs`); buckets of `toolhost_call_duration_seconds` |
//! | `toolhost_trace_export_lag_seconds` | histogram | — | how far behind the export runs: at each export request, the age of its oldest span (since the span ended); a lag that grows means the collector, or the export thread's share of the CPU (it yields to every other thread), does not keep up, and spans will be dropped as `queue_full` |
//!
//! # Label values are bounded
//!
//! A scrape must not grow without bound because a guest chose strings.
//! No label carries a string a guest picks at call time (a URL, a host
//! name it asked for, an error message): `tool` comes from the registry,
//! `plugin` is the operator's block name (or the file's, for a file no
//! block covers), `host` is the `allow` entry that let the request through,
//! `status` is a number from 100 to 599 (anything else is `other`), and
//! every other label is a fixed word. On top of that, `tool`, `plugin` and
//! `host` each take at most [`MAX_LABEL_VALUES`] distinct values over the
//! process's life (tool names come and go with reloads); later ones are
//! counted as `(other)`.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock, RwLock};
use std::time::{Duration, Instant};

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::bindings::confirm::Outcome;
use crate::call::CallOutcome;
use crate::call::offer::OfferKind;
use crate::hooks::{CallHooks, UpstreamStatus};
use crate::policy::DenialReason;
use crate::registry::Registry;

/// `toolhost_calls_total{tool, outcome}`.
pub const CALLS: &str = "toolhost_calls_total";
/// `toolhost_call_errors_total{tool, code}`.
pub const CALL_ERRORS: &str = "toolhost_call_errors_total";
/// `toolhost_call_duration_seconds{tool}`.
pub const CALL_DURATION: &str = "toolhost_call_duration_seconds";
/// `toolhost_confirmations_total{outcome}`.
pub const CONFIRMATIONS: &str = "toolhost_confirmations_total";
/// `toolhost_upstream_requests_total{plugin, host, status}`.
pub const UPSTREAM_REQUESTS: &str = "toolhost_upstream_requests_total";
/// `toolhost_policy_denials_total{plugin, reason}`.
pub const POLICY_DENIALS: &str = "toolhost_policy_denials_total";
/// `toolhost_policy_decisions_total{outcome, rule}`: `[[policy.rules]]`.
pub const POLICY_DECISIONS: &str = "toolhost_policy_decisions_total";
/// `toolhost_approvals_total{event}`.
pub const APPROVALS: &str = "toolhost_approvals_total";
/// `toolhost_approvals_pending`.
pub const APPROVALS_PENDING: &str = "toolhost_approvals_pending";
/// `toolhost_approval_decision_seconds{decision}`.
pub const APPROVAL_DECISION: &str = "toolhost_approval_decision_seconds";
/// `toolhost_reloads_total{result}`.
pub const RELOADS: &str = "toolhost_reloads_total";
/// `toolhost_component_load_failures_total`.
pub const COMPONENT_LOAD_FAILURES: &str = "toolhost_component_load_failures_total";
/// `toolhost_components_loaded`.
pub const COMPONENTS_LOADED: &str = "toolhost_components_loaded";
/// `toolhost_tools_loaded`.
pub const TOOLS_LOADED: &str = "toolhost_tools_loaded";
/// `toolhost_http_sessions_open`: the HTTP transport increments it when a
/// session opens and decrements it when the session ends.
pub const HTTP_SESSIONS_OPEN: &str = "toolhost_http_sessions_open";
/// `toolhost_http_streams_open`: the HTTP transport increments it when an
/// SSE stream opens and decrements it when the stream closes.
pub const HTTP_STREAMS_OPEN: &str = "toolhost_http_streams_open";
/// `toolhost_http_sessions_refused_total{limit}`: `limit` is
/// `per_identity` or `total`.
pub const HTTP_SESSIONS_REFUSED: &str = "toolhost_http_sessions_refused_total";
/// `toolhost_http_sessions_uninitialized_total`: sessions closed because
/// they never sent `notifications/initialized`.
pub const HTTP_SESSIONS_UNINITIALIZED: &str = "toolhost_http_sessions_uninitialized_total";
/// `toolhost_http_connections_evicted_total`.
pub const HTTP_CONNECTIONS_EVICTED: &str = "toolhost_http_connections_evicted_total";
/// `toolhost_auth_failures_total{reason}`: the auth code counts each
/// refused request, `reason` one of its fixed words (never token text).
pub const AUTH_FAILURES: &str = "toolhost_auth_failures_total";
/// `toolhost_audit_write_failures_total`.
pub const AUDIT_WRITE_FAILURES: &str = "toolhost_audit_write_failures_total";
/// `toolhost_offer_calls_total{plugin, kind, outcome}`.
pub const OFFER_CALLS: &str = "toolhost_offer_calls_total";
/// `toolhost_offer_call_duration_seconds{plugin, kind}`.
pub const OFFER_CALL_DURATION: &str = "toolhost_offer_call_duration_seconds";
/// `toolhost_offers_loaded{kind}`.
pub const OFFERS_LOADED: &str = "toolhost_offers_loaded";
/// `toolhost_trace_spans_dropped_total{reason}`.
pub const TRACE_SPANS_DROPPED: &str = "toolhost_trace_spans_dropped_total";
/// `toolhost_trace_spans_exported_total`.
pub const TRACE_SPANS_EXPORTED: &str = "toolhost_trace_spans_exported_total";
/// `toolhost_trace_export_duration_seconds{outcome}`.
pub const TRACE_EXPORT_DURATION: &str = "toolhost_trace_export_duration_seconds";
/// `toolhost_trace_export_lag_seconds`.
pub const TRACE_EXPORT_LAG: &str = "toolhost_trace_export_lag_seconds";
/// `toolhost_call_cpu_seconds{plugin, tool}`.
pub const CALL_CPU: &str = "toolhost_call_cpu_seconds";
/// `toolhost_call_wall_seconds{plugin, tool, part}`.
pub const CALL_WALL: &str = "toolhost_call_wall_seconds";
/// `toolhost_call_peak_memory_bytes{plugin, tool}`.
pub const CALL_PEAK_MEMORY: &str = "toolhost_call_peak_memory_bytes";
/// `toolhost_call_upstream_bytes{plugin, tool, direction}`.
pub const CALL_UPSTREAM_BYTES: &str = "toolhost_call_upstream_bytes";
/// `toolhost_call_upstream_requests{plugin, tool}`.
pub const CALL_UPSTREAM_REQUESTS: &str = "toolhost_call_upstream_requests";
/// `toolhost_call_epoch_ticks{plugin, tool}`.
pub const CALL_EPOCH_TICKS: &str = "toolhost_call_epoch_ticks";
/// `toolhost_call_limits_hit_total{plugin, tool, limit}`.
pub const CALL_LIMITS_HIT: &str = "toolhost_call_limits_hit_total";

/// Buckets of the memory histogram, in bytes: 1 MiB to 4 GiB.
pub const MEMORY_BUCKETS: [f64; 12] = [
    1048576.0,
    2097152.0,
    4194304.0,
    8388608.0,
    16777216.0,
    33554432.0,
    67108864.0,
    134217728.0,
    268435456.0,
    536870912.0,
    1073741824.0,
    4294967296.0,
];

/// Buckets of the byte histograms, in bytes: 0 to 64 MiB.
pub const BYTE_BUCKETS: [f64; 10] = [
    0.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0, 67108864.0,
];

/// Buckets of the count histograms (requests, ticks).
pub const COUNT_BUCKETS: [f64; 10] = [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 1024.0];

/// Upper bounds of the call latency histogram's buckets, in seconds: 1 ms
/// to 60 s, roughly 1-2.5-5 per decade.
pub const CALL_DURATION_BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0,
];

/// Upper bounds of the approval decision histogram's buckets, in seconds:
/// a second to a week.
pub const APPROVAL_DECISION_BUCKETS: [f64; 11] = [
    1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 14_400.0, 86_400.0, 259_200.0, 604_800.0,
];

/// Most distinct values one of the `tool`, `plugin` and `host` labels takes;
/// later values are recorded as [`OTHER`].
pub const MAX_LABEL_VALUES: usize = 1000;

/// The label value that stands for every value past [`MAX_LABEL_VALUES`].
pub const OTHER: &str = "(other)";

/// The `tool` label of a call to a tool the registry does not have.
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// How often the recorder's upkeep runs (it drains histogram samples, so
/// that memory stays bounded between scrapes).
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether [`install`] has run; until then the helpers record nothing.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// The handle [`install`] made.
static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the Prometheus recorder (once; later calls return the same
/// handle), describes every metric, and starts the upkeep thread. From
/// then on everything the host records is kept.
pub fn install() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full(CALL_DURATION.into()), &CALL_DURATION_BUCKETS)
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(OFFER_CALL_DURATION.into()),
                        &CALL_DURATION_BUCKETS,
                    )
                })
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(APPROVAL_DECISION.into()),
                        &APPROVAL_DECISION_BUCKETS,
                    )
                })
                .and_then(cost_buckets)
                .expect("the bucket list is not empty");
            let handle = match builder.install_recorder() {
                Ok(handle) => handle,
                Err(e) => {
                    // Another recorder is in place (an embedding program's):
                    // this one still renders, though it sees nothing.
                    tracing::warn!("metrics: cannot install the Prometheus recorder: {e}");
                    PrometheusBuilder::new().build_recorder().handle()
                }
            };
            describe();
            let upkeep = handle.clone();
            let spawned = std::thread::Builder::new()
                .name("metrics-upkeep".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(UPKEEP_EVERY);
                        upkeep.run_upkeep();
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("metrics: no upkeep thread ({e}); histograms drain on each scrape");
            }
            ENABLED.store(true, Ordering::Release);
            handle
        })
        .clone()
}

/// Whether metrics are being recorded.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

/// The `# HELP` text of every metric.
fn describe() {
    use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(CALLS, "tools/call requests by tool and how they ended");
    describe_counter!(
        CALL_ERRORS,
        "calls that ended with a tool error, by the first issue's code"
    );
    describe_histogram!(
        CALL_DURATION,
        Unit::Seconds,
        "wall-clock time of a tool call, from request to answer"
    );
    describe_counter!(
        CONFIRMATIONS,
        "answers to tools' confirmation questions, by outcome"
    );
    describe_counter!(
        UPSTREAM_REQUESTS,
        "HTTP requests sent for plugins, by allow entry host and status"
    );
    describe_counter!(
        POLICY_DENIALS,
        "requests the host refused to send for plugins, by reason"
    );
    describe_counter!(APPROVALS, "approvals by what happened to them");
    describe_gauge!(APPROVALS_PENDING, "approvals waiting for an approver");
    describe_histogram!(
        APPROVAL_DECISION,
        Unit::Seconds,
        "time from the call that asked to an approver's decision"
    );
    describe_counter!(
        RELOADS,
        "hot reloads of the plugin directory and the config file, by result"
    );
    describe_counter!(
        COMPONENT_LOAD_FAILURES,
        "component files that failed to load"
    );
    describe_gauge!(COMPONENTS_LOADED, "component files serving now");
    describe_gauge!(TOOLS_LOADED, "tools serving now");
    describe_gauge!(HTTP_SESSIONS_OPEN, "open MCP sessions over HTTP");
    describe_gauge!(HTTP_STREAMS_OPEN, "open SSE streams over HTTP");
    describe_counter!(
        HTTP_SESSIONS_REFUSED,
        "legacy initialize requests refused by a session bound, by the bound"
    );
    describe_counter!(
        HTTP_SESSIONS_UNINITIALIZED,
        "legacy sessions closed for never sending notifications/initialized"
    );
    describe_counter!(
        HTTP_CONNECTIONS_EVICTED,
        "unauthenticated connections closed to make room for a new one"
    );
    describe_counter!(
        AUTH_FAILURES,
        "HTTP requests refused for their credentials, by reason"
    );
    describe_counter!(
        AUDIT_WRITE_FAILURES,
        "audit trail records that could not be written"
    );
    describe_counter!(
        OFFER_CALLS,
        "resource reads, prompt gets and completions that ran component code, by outcome"
    );
    describe_histogram!(
        OFFER_CALL_DURATION,
        Unit::Seconds,
        "wall-clock time of a resource read, prompt get or completion"
    );
    describe_gauge!(
        OFFERS_LOADED,
        "resources, resource templates and prompts serving now"
    );
    describe_counter!(
        POLICY_DECISIONS,
        "requests decided by [[policy.rules]], by outcome and the rule that decided"
    );
    describe_telemetry();
}

/// The `# HELP` text of the metrics about traces and calls' costs.
fn describe_telemetry() {
    use ::metrics::describe_counter;
    describe_counter!(
        TRACE_SPANS_DROPPED,
        "finished spans not exported, by reason: queue_full, export_failed, export_stopped, rejected"
    );
    describe_counter!(TRACE_SPANS_EXPORTED, "finished spans the collector took");
    use ::metrics::{Unit, describe_histogram};
    describe_histogram!(
        TRACE_EXPORT_DURATION,
        Unit::Seconds,
        "each export request to the collector, by outcome: ok, failed, timeout"
    );
    describe_histogram!(
        TRACE_EXPORT_LAG,
        Unit::Seconds,
        "the age of each export request's oldest span: how far behind the export runs"
    );
    describe_histogram!(CALL_CPU, Unit::Seconds, "CPU time of each call's execution");
    describe_histogram!(
        CALL_WALL,
        Unit::Seconds,
        "each call's wall time by part: queue, run, upstream, waiting"
    );
    describe_histogram!(
        CALL_PEAK_MEMORY,
        Unit::Bytes,
        "the most linear memory each call held"
    );
    describe_histogram!(
        CALL_UPSTREAM_BYTES,
        Unit::Bytes,
        "body bytes each call sent (out) and read (in) upstream"
    );
    describe_histogram!(CALL_UPSTREAM_REQUESTS, "upstream requests per call");
    describe_histogram!(
        CALL_EPOCH_TICKS,
        "epoch ticks at which each call's component ran"
    );
    describe_counter!(
        CALL_LIMITS_HIT,
        "calls that hit a limit, by the limit's key"
    );
}

/// The buckets of the cost histograms.
fn cost_buckets(
    builder: PrometheusBuilder,
) -> Result<PrometheusBuilder, metrics_exporter_prometheus::BuildError> {
    builder
        .set_buckets_for_metric(Matcher::Full(CALL_CPU.into()), &CALL_DURATION_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(CALL_WALL.into()), &CALL_DURATION_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(CALL_PEAK_MEMORY.into()), &MEMORY_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(CALL_UPSTREAM_BYTES.into()), &BYTE_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(CALL_UPSTREAM_REQUESTS.into()), &COUNT_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(CALL_EPOCH_TICKS.into()), &COUNT_BUCKETS)?
        .set_buckets_for_metric(
            Matcher::Full(TRACE_EXPORT_DURATION.into()),
            &CALL_DURATION_BUCKETS,
        )?
        .set_buckets_for_metric(
            Matcher::Full(TRACE_EXPORT_LAG.into()),
            &CALL_DURATION_BUCKETS,
        )
}

/// Records what one call of `tool` of `plugin` cost.
pub fn call_cost(plugin: &str, tool: &str, cost: &crate::cost::CallCost) {
    if !enabled() {
        return;
    }
    let series = COST_SERIES.of((plugin, tool), || {
        let (plugin, tool) = (PLUGINS.get(plugin), TOOLS.get(tool));
        let labels = [("plugin", plugin.clone()), ("tool", tool.clone())];
        let wall = |part: &'static str| {
            ::metrics::histogram!(CALL_WALL, "plugin" => plugin.clone(), "tool" => tool.clone(), "part" => part)
        };
        let bytes = |direction: &'static str| {
            ::metrics::histogram!(CALL_UPSTREAM_BYTES, "plugin" => plugin.clone(), "tool" => tool.clone(), "direction" => direction)
        };
        CostSeries {
            cpu: ::metrics::histogram!(CALL_CPU, &labels),
            queue: wall("queue"),
            run: wall("run"),
            upstream: wall("upstream"),
            waiting: wall("waiting"),
            peak_memory: ::metrics::histogram!(CALL_PEAK_MEMORY, &labels),
            bytes_out: bytes("out"),
            bytes_in: bytes("in"),
            upstream_requests: ::metrics::histogram!(CALL_UPSTREAM_REQUESTS, &labels),
            epoch_ticks: ::metrics::histogram!(CALL_EPOCH_TICKS, &labels),
            labels: (plugin, tool),
        }
    });
    let secs = |us: u64| us as f64 / 1e6;
    series.cpu.record(secs(cost.cpu_us));
    series.queue.record(secs(cost.queue_us));
    series.run.record(secs(cost.run_us));
    series.upstream.record(secs(cost.upstream_us));
    series.waiting.record(secs(cost.waiting_us));
    series.peak_memory.record(cost.peak_memory_bytes as f64);
    series.bytes_out.record(cost.bytes_out as f64);
    series.bytes_in.record(cost.bytes_in as f64);
    series
        .upstream_requests
        .record(f64::from(cost.upstream_requests));
    series.epoch_ticks.record(cost.epoch_ticks as f64);
    if let Some(limit) = &cost.limit {
        let (plugin, tool) = series.labels.clone();
        ::metrics::counter!(CALL_LIMITS_HIT, "plugin" => plugin, "tool" => tool, "limit" => limit.clone())
            .increment(1);
    }
}

/// The series one call's cost is recorded in, for one plugin and tool:
/// registered once, so that a call records into ten histograms without
/// ten lookups in the recorder's registry (each building its key, labels
/// and hash).
struct CostSeries {
    cpu: ::metrics::Histogram,
    queue: ::metrics::Histogram,
    run: ::metrics::Histogram,
    upstream: ::metrics::Histogram,
    waiting: ::metrics::Histogram,
    peak_memory: ::metrics::Histogram,
    bytes_out: ::metrics::Histogram,
    bytes_in: ::metrics::Histogram,
    upstream_requests: ::metrics::Histogram,
    epoch_ticks: ::metrics::Histogram,
    /// The `plugin` and `tool` label values (bounded) they carry.
    labels: (String, String),
}

/// The series of [`call_cost`], by plugin and tool.
static COST_SERIES: LazyLock<SeriesCache<CostSeries>> = LazyLock::new(SeriesCache::default);

/// The series of a finished call of a tool ([`record_call`]), by tool.
struct CallSeries {
    ok: ::metrics::Counter,
    duration: ::metrics::Histogram,
}

/// The series of [`record_call`], by tool (under the plugin `""`).
static CALL_SERIES: LazyLock<SeriesCache<CallSeries>> = LazyLock::new(SeriesCache::default);

/// Metric handles registered once per plugin and tool and kept: at most
/// [`MAX_CACHED_SERIES`] pairs (registry names, not guest strings); past
/// that, a pair's handles are registered on each use and not kept.
struct SeriesCache<V> {
    by_plugin: RwLock<HashMap<String, HashMap<String, Arc<V>>>>,
    kept: AtomicUsize,
}

impl<V> Default for SeriesCache<V> {
    fn default() -> Self {
        SeriesCache {
            by_plugin: RwLock::default(),
            kept: AtomicUsize::new(0),
        }
    }
}

/// Most plugin and tool pairs a [`SeriesCache`] keeps.
const MAX_CACHED_SERIES: usize = 4096;

impl<V> SeriesCache<V> {
    /// The handles of `tool` of `plugin`, registered by `register` the
    /// first time.
    fn of(&self, (plugin, tool): (&str, &str), register: impl FnOnce() -> V) -> Arc<V> {
        let kept = self.by_plugin.read().expect("not poisoned");
        if let Some(series) = kept.get(plugin).and_then(|tools| tools.get(tool)) {
            return series.clone();
        }
        drop(kept);
        let series = Arc::new(register());
        if self.kept.load(Ordering::Relaxed) < MAX_CACHED_SERIES {
            let mut kept = self.by_plugin.write().expect("not poisoned");
            let tools = kept.entry(plugin.to_string()).or_default();
            if tools.insert(tool.to_string(), series.clone()).is_none() {
                self.kept.fetch_add(1, Ordering::Relaxed);
            }
        }
        series
    }
}

/// `count` finished spans were dropped for `reason` (a fixed word).
pub fn trace_spans_dropped(reason: &'static str, count: u64) {
    if !enabled() {
        return;
    }
    ::metrics::counter!(TRACE_SPANS_DROPPED, "reason" => reason).increment(count);
}

/// One export request of `spans` spans ended with `outcome` (`ok`,
/// `failed`, `timeout`) after `took`; its oldest span had waited `lag`.
pub fn trace_export(outcome: &'static str, spans: u64, took: Duration, lag: Duration) {
    if !enabled() {
        return;
    }
    ::metrics::histogram!(TRACE_EXPORT_DURATION, "outcome" => outcome).record(took.as_secs_f64());
    ::metrics::histogram!(TRACE_EXPORT_LAG).record(lag.as_secs_f64());
    // Counted last: a scrape that sees the spans sees their export too.
    if outcome == "ok" {
        ::metrics::counter!(TRACE_SPANS_EXPORTED).increment(spans);
    }
}

/// A set of label values capped at [`MAX_LABEL_VALUES`].
struct BoundedLabel {
    seen: RwLock<HashSet<String>>,
}

impl BoundedLabel {
    fn new() -> BoundedLabel {
        BoundedLabel {
            seen: RwLock::new(HashSet::new()),
        }
    }

    /// `value`, or [`OTHER`] once [`MAX_LABEL_VALUES`] others were seen.
    fn get(&self, value: &str) -> String {
        if self.seen.read().expect("not poisoned").contains(value) {
            return value.to_string();
        }
        let mut seen = self.seen.write().expect("not poisoned");
        if seen.len() < MAX_LABEL_VALUES {
            seen.insert(value.to_string());
            return value.to_string();
        }
        if seen.contains(value) {
            value.to_string()
        } else {
            OTHER.to_string()
        }
    }
}

static TOOLS: LazyLock<BoundedLabel> = LazyLock::new(BoundedLabel::new);
static PLUGINS: LazyLock<BoundedLabel> = LazyLock::new(BoundedLabel::new);
static HOSTS: LazyLock<BoundedLabel> = LazyLock::new(BoundedLabel::new);

/// How a `tools/call` request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallResult {
    /// The tool returned its output.
    Ok,
    /// A tool error; the first issue's code.
    Error(&'static str),
    /// A 2026-07-28 client was asked to confirm.
    InputRequired,
    /// The client cancelled the request.
    Cancelled,
    /// A JSON-RPC error for a known tool (a bad `requestState`, say).
    Rejected,
}

impl CallResult {
    /// The `outcome` label.
    pub fn label(self) -> &'static str {
        match self {
            CallResult::Ok => "ok",
            CallResult::Error(_) => "error",
            CallResult::InputRequired => "input_required",
            CallResult::Cancelled => "cancelled",
            CallResult::Rejected => "rejected",
        }
    }
}

/// Records a call of `tool` that ended with `result`, and how long it took
/// when it ran.
fn record_call(tool: &str, result: CallResult, took: Option<Duration>) {
    if let (CallResult::Ok, Some(took)) = (result, took) {
        // The common case, from handles registered once for the tool.
        let series = CALL_SERIES.of(("", tool), || {
            let tool = TOOLS.get(tool);
            CallSeries {
                ok: ::metrics::counter!(CALLS, "tool" => tool.clone(), "outcome" => CallResult::Ok.label()),
                duration: ::metrics::histogram!(CALL_DURATION, "tool" => tool),
            }
        });
        series.ok.increment(1);
        series.duration.record(took.as_secs_f64());
        return;
    }
    let tool = TOOLS.get(tool);
    ::metrics::counter!(CALLS, "tool" => tool.clone(), "outcome" => result.label()).increment(1);
    if let CallResult::Error(code) = result {
        ::metrics::counter!(CALL_ERRORS, "tool" => tool.clone(), "code" => code).increment(1);
    }
    if let Some(took) = took {
        ::metrics::histogram!(CALL_DURATION, "tool" => tool).record(took.as_secs_f64());
    }
}

/// Counts one `tools/call` of a known tool, however it ends: made when the
/// tool is found, told when the call starts running and how it finished.
/// Dropped before it runs, the call was `rejected` (a bad `requestState`);
/// dropped while running, `cancelled` (the client cancelled it, or the
/// transport dropped the request).
pub struct CallCount {
    /// The tool, while there is something to record.
    tool: Option<String>,
    started: Instant,
    running: bool,
}

impl CallCount {
    /// Starts counting a call of `tool` (a registry name).
    pub fn start(tool: &str) -> CallCount {
        CallCount {
            tool: enabled().then(|| tool.to_string()),
            started: Instant::now(),
            running: false,
        }
    }

    /// The call is running: a drop from now on means it was cancelled.
    pub fn running(&mut self) {
        self.running = true;
    }

    /// The call ended with a tool error of `code` before it ran (the
    /// confirmation-state store was out of reach, say): an `error`, with
    /// no latency sample.
    pub fn failed_before_running(&mut self, code: &'static str) {
        if let Some(tool) = self.tool.take() {
            record_call(&tool, CallResult::Error(code), None);
        }
    }

    /// The call ended with `outcome`.
    pub fn finish(&mut self, outcome: &CallOutcome) {
        if let Some(tool) = self.tool.take() {
            let result = match outcome {
                CallOutcome::Success(_) | CallOutcome::Content { .. } => CallResult::Ok,
                CallOutcome::Failed(issues) => {
                    CallResult::Error(issues.first().map_or("INTERNAL", |i| i.code))
                }
                CallOutcome::InputRequired { .. } => CallResult::InputRequired,
            };
            record_call(&tool, result, Some(self.started.elapsed()));
        }
    }
}

impl Drop for CallCount {
    fn drop(&mut self) {
        if let Some(tool) = self.tool.take() {
            if self.running {
                record_call(&tool, CallResult::Cancelled, Some(self.started.elapsed()));
            } else {
                record_call(&tool, CallResult::Rejected, None);
            }
        }
    }
}

/// Records a call of a tool the registry does not have.
pub fn unknown_tool() {
    if enabled() {
        ::metrics::counter!(CALLS, "tool" => UNKNOWN_TOOL, "outcome" => "unknown_tool")
            .increment(1);
    }
}

/// The `outcome` label of a confirmation answer.
pub fn outcome_label(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Confirmed => "confirmed",
        Outcome::Declined => "declined",
        Outcome::Cancelled => "cancelled",
        Outcome::Unsupported => "no_elicitation",
    }
}

/// Records an answer to a confirmation question.
pub fn confirmation_answered(outcome: Outcome) {
    if enabled() {
        ::metrics::counter!(CONFIRMATIONS, "outcome" => outcome_label(outcome)).increment(1);
    }
}

/// Records a confirmation not asked because too many calls already wait
/// for a user.
pub fn confirmation_busy() {
    if enabled() {
        ::metrics::counter!(CONFIRMATIONS, "outcome" => "busy").increment(1);
    }
}

/// Records one request sent for the plugin block `plugin`, labelled with
/// `rule_host`, the host of the `allow` entry that covers it (not the
/// URL's).
pub fn upstream_request(plugin: &str, rule_host: &str, status: UpstreamStatus) {
    if enabled() {
        ::metrics::counter!(
            UPSTREAM_REQUESTS,
            "plugin" => PLUGINS.get(plugin),
            "host" => HOSTS.get(rule_host),
            "status" => status.label()
        )
        .increment(1);
    }
}

/// Records a request of `plugin` the host refused to send.
pub fn policy_denial(plugin: &str, reason: DenialReason) {
    if enabled() {
        ::metrics::counter!(
            POLICY_DENIALS,
            "plugin" => PLUGINS.get(plugin),
            "reason" => reason.label()
        )
        .increment(1);
    }
}

/// Counts one `event` of an approval (see the module table).
pub fn approval(event: &'static str) {
    if enabled() {
        ::metrics::counter!(APPROVALS, "event" => event).increment(1);
    }
}

/// Sets how many approvals wait for an approver.
pub fn approvals_pending(count: usize) {
    if enabled() {
        ::metrics::gauge!(APPROVALS_PENDING).set(count as f64);
    }
}

/// Records an approver's `decision`, `waited` after the call that asked.
pub fn approval_decided(decision: &'static str, waited: Duration) {
    if enabled() {
        ::metrics::histogram!(APPROVAL_DECISION, "decision" => decision)
            .record(waited.as_secs_f64());
    }
}

/// Records one decision of `[[policy.rules]]`: its outcome (`allow`,
/// `deny`, `confirm`, `limit`, `hide`) and the rule that made it. Rule
/// names come from the configuration, so the label set is bounded.
pub fn policy_decision(outcome: &'static str, rule: &str) {
    if enabled() {
        ::metrics::counter!(
            POLICY_DECISIONS,
            "outcome" => outcome,
            "rule" => rule.to_string()
        )
        .increment(1);
    }
}

/// What a running call counts: its policy denials, upstream responses and
/// confirmations. Hooked into every call the server runs
/// ([`crate::hooks`]); counts nothing while metrics are off.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallMetrics;

impl CallHooks for CallMetrics {
    fn policy_denial(&self, plugin: &str, reason: DenialReason) {
        policy_denial(plugin, reason);
    }

    fn upstream_status(&self, plugin: &str, rule_host: &str, status: UpstreamStatus) {
        upstream_request(plugin, rule_host, status);
    }

    fn answered(&self, outcome: Outcome, afresh: bool) {
        // A replay of answers the client already sent was counted when
        // they arrived.
        if afresh {
            confirmation_answered(outcome);
        }
    }

    fn busy(&self) {
        confirmation_busy();
    }
}

/// Records an audit trail record that could not be written.
pub fn audit_write_failure() {
    if enabled() {
        ::metrics::counter!(AUDIT_WRITE_FAILURES).increment(1);
    }
}

/// How a hot reload ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReloadResult {
    /// A new registry was published.
    Changed,
    /// Nothing that serves changed.
    Unchanged,
    /// The directory could not be scanned.
    Failed,
}

/// Records a hot reload.
pub fn reload(result: ReloadResult) {
    if enabled() {
        let label = match result {
            ReloadResult::Changed => "changed",
            ReloadResult::Unchanged => "unchanged",
            ReloadResult::Failed => "failed",
        };
        ::metrics::counter!(RELOADS, "result" => label).increment(1);
    }
}

/// Records what a scan produced: `registry` serves from now on, and
/// `failed` files did not load.
pub fn loaded(registry: &Registry, failed: usize) {
    if enabled() {
        ::metrics::gauge!(COMPONENTS_LOADED).set(registry.plugins().count() as f64);
        ::metrics::gauge!(TOOLS_LOADED).set(registry.tools().count() as f64);
        for (kind, count) in [
            ("resource", registry.resources().count()),
            ("template", registry.templates().count()),
            ("prompt", registry.prompts().count()),
        ] {
            ::metrics::gauge!(OFFERS_LOADED, "kind" => kind).set(count as f64);
        }
        ::metrics::counter!(COMPONENT_LOAD_FAILURES).increment(failed as u64);
    }
}

/// Counts one read, get or completion that runs a component's code: made
/// just before it runs, told how it ended; dropped unfinished, it was
/// `cancelled` (the client cancelled it, or the transport dropped the
/// request).
pub struct OfferCount {
    /// The plugin block, while there is something to record.
    plugin: Option<String>,
    kind: OfferKind,
    started: Instant,
}

impl OfferCount {
    /// Starts counting a `kind` of `plugin` (its block name).
    pub fn start(plugin: &str, kind: OfferKind) -> OfferCount {
        OfferCount {
            plugin: enabled().then(|| plugin.to_string()),
            kind,
            started: Instant::now(),
        }
    }

    /// It ended: `Ok`, or the error's code (`NOT_FOUND` is `not_found`,
    /// anything else `error`).
    pub fn finish(&mut self, result: Result<(), &str>) {
        let outcome = match result {
            Ok(()) => "ok",
            Err("NOT_FOUND") => "not_found",
            Err(_) => "error",
        };
        self.record(outcome);
    }

    fn record(&mut self, outcome: &'static str) {
        if let Some(plugin) = self.plugin.take() {
            let plugin = PLUGINS.get(&plugin);
            let kind = self.kind.label();
            ::metrics::counter!(
                OFFER_CALLS,
                "plugin" => plugin.clone(),
                "kind" => kind,
                "outcome" => outcome
            )
            .increment(1);
            ::metrics::histogram!(OFFER_CALL_DURATION, "plugin" => plugin, "kind" => kind)
                .record(self.started.elapsed().as_secs_f64());
        }
    }
}

impl Drop for OfferCount {
    fn drop(&mut self) {
        self.record("cancelled");
    }
}

/// `GET /metrics`: the handle's text, in exposition format 0.0.4.
pub fn router(handle: PrometheusHandle) -> axum::Router {
    axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let handle = handle.clone();
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, CONTENT_TYPE)],
                    handle.render(),
                )
            }
        }),
    )
}

/// The metrics listener could not start.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot listen for metrics on {addr} (host.metrics): {cause}; pick a free port or remove the key"
)]
pub struct ListenError {
    /// The address asked for.
    pub addr: SocketAddr,
    /// Why binding failed.
    pub cause: std::io::Error,
}

/// Serves [`router`] on `addr` (`[host] metrics`) in the background, with
/// the recorder installed; returns the address bound (the port chosen when
/// `addr`'s is 0) and logs `metrics on http://ADDR/metrics`. An address
/// that is not loopback is served too, with a warning: the endpoint has no
/// authentication.
pub async fn serve(addr: SocketAddr) -> Result<SocketAddr, ListenError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|cause| ListenError { addr, cause })?;
    let bound = listener
        .local_addr()
        .map_err(|cause| ListenError { addr, cause })?;
    if !bound.ip().is_loopback() {
        tracing::warn!(
            "the metrics endpoint on {bound} is not on loopback and has no authentication: \
             anyone who can reach it can read the metrics (tool names, plugin names, allowed \
             hosts); bind it to 127.0.0.1 and scrape through a proxy, or firewall it (host.metrics)"
        );
    }
    let app = router(install());
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("the metrics listener stopped: {e}");
        }
    });
    tracing::info!("metrics on http://{bound}/metrics");
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_capped() {
        let label = BoundedLabel::new();
        for i in 0..MAX_LABEL_VALUES {
            assert_eq!(label.get(&format!("t{i}")), format!("t{i}"));
        }
        assert_eq!(label.get("one-too-many"), OTHER);
        assert_eq!(label.get("t0"), "t0", "values seen before keep their label");
    }

    #[test]
    fn a_tools_cost_series_are_registered_once_and_record_every_call() {
        let handle = install();
        let cost = |cpu_us| crate::cost::CallCost {
            cpu_us,
            queue_us: 0,
            run_us: 10,
            upstream_us: 0,
            waiting_us: 0,
            peak_memory_bytes: 1 << 20,
            epoch_ticks: 0,
            upstream_requests: 2,
            bytes_out: 5,
            bytes_in: 7,
            hosts: Vec::new(),
            limit: Some("limits.output_bytes".into()),
        };
        call_cost("unit_test_block", "cost_series_tool", &cost(1_000));
        let first = COST_SERIES.of(("unit_test_block", "cost_series_tool"), || {
            panic!("registered again")
        });
        call_cost("unit_test_block", "cost_series_tool", &cost(3_000));
        let kept = COST_SERIES.of(("unit_test_block", "cost_series_tool"), || {
            panic!("registered again")
        });
        assert!(
            Arc::ptr_eq(&first, &kept),
            "the same handles serve every call"
        );
        let text = handle.render();
        let labels = r#"plugin="unit_test_block",tool="cost_series_tool""#;
        for line in [
            format!("toolhost_call_cpu_seconds_count{{{labels}}} 2"),
            format!("toolhost_call_cpu_seconds_sum{{{labels}}} 0.004"),
            format!(r#"toolhost_call_wall_seconds_count{{{labels},part="run"}} 2"#),
            format!(r#"toolhost_call_upstream_bytes_sum{{{labels},direction="in"}} 14"#),
            format!("toolhost_call_upstream_requests_sum{{{labels}}} 4"),
            format!(r#"toolhost_call_limits_hit_total{{{labels},limit="limits.output_bytes"}} 2"#),
        ] {
            assert!(text.contains(&line), "{line} in {text}");
        }
    }

    #[test]
    fn status_labels_are_codes_or_fixed_words() {
        assert_eq!(UpstreamStatus::Code(200).label(), "200");
        assert_eq!(UpstreamStatus::Code(599).label(), "599");
        assert_eq!(UpstreamStatus::Code(999).label(), "other");
        assert_eq!(UpstreamStatus::Timeout.label(), "timeout");
    }

    #[tokio::test]
    async fn the_endpoint_serves_what_was_recorded_in_the_text_format() {
        let handle = install();
        assert!(enabled());
        assert_eq!(
            install().render(),
            handle.render(),
            "installing twice is one recorder"
        );
        let mut count = CallCount::start("unit_test_tool");
        count.running();
        count.finish(&CallOutcome::Failed(vec![crate::call::Issue::new(
            crate::bindings::types::ErrorCode::NotFound,
            "no such order",
        )]));
        drop(count);
        drop(CallCount::start("unit_test_tool"));
        let addr = serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let response = reqwest::get(format!("http://{addr}/metrics"))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            CONTENT_TYPE
        );
        let text = response.text().await.unwrap();
        assert!(
            text.contains(r#"toolhost_calls_total{tool="unit_test_tool",outcome="error"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"toolhost_calls_total{tool="unit_test_tool",outcome="rejected"} 1"#),
            "a count dropped before the call ran: {text}"
        );
        assert!(
            text.contains(
                r#"toolhost_call_errors_total{tool="unit_test_tool",code="NOT_FOUND"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"toolhost_call_duration_seconds_bucket{tool="unit_test_tool",le="60"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"toolhost_call_duration_seconds_count{tool="unit_test_tool"} 1"#),
            "one duration: the rejected call did not run: {text}"
        );
        assert!(text.contains("# HELP toolhost_calls_total"), "{text}");
        let other = reqwest::get(format!("http://{addr}/other")).await.unwrap();
        assert_eq!(other.status(), 404);
    }
}
