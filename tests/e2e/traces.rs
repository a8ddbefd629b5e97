//! Traces (`[telemetry]`, ADR 0039) through the real binary, exported to a
//! real OTLP receiver built on the official protobuf definitions
//! (`support::otlp`), over http/protobuf and gRPC; and each call's cost.
//!
//! | test | what it proves |
//! |---|---|
//! | a confirmed StatusPro call | one trace per request: server span, policy, component, the confirmation wait, each upstream request, in both eras and over HTTP |
//! | propagation | a client's `traceparent` in `_meta` and in the HTTP headers is the server span's parent |
//! | no secrets | no attribute holds the arguments, the API key or a query string |
//! | dead collector | calls are answered while the collector is down or never answers; what is dropped is counted |
//! | cost | the figures a call reports lie within what the `spend` component is known to spend |
//! | sampling | a request not sampled exports nothing and its log lines name no trace; a sampled one's lines name its trace and span, never repeated as attributes |

use serde_json::{Value, json};

use crate::statuspro;
use crate::support::metrics::Scrape;
use crate::support::otlp::{Collector, ExportedSpan, svg_timeline, tree};
use crate::support::{Elicitation, Era, Host, HostOptions, Recorder};

/// The arguments of the confirmed call: an order's comment the test can
/// look for in every attribute.
const COMMENT: &str = "Secret comment 7f3a";

/// The sandbox's seeded order the call comments on.
fn comment_args() -> Value {
    json!({
        "order_id": statuspro_sandbox::seed::order_without_due_date(),
        "comment": COMMENT,
        "confirm": true,
    })
}

/// Every attribute value of every span, for looking for what must not be
/// there.
fn all_values(spans: &[ExportedSpan]) -> String {
    spans
        .iter()
        .flat_map(|s| s.attributes.values().cloned().chain([s.name.clone()]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The trace of a confirmed `add_order_comment` call through a host
/// serving StatusPro in `era` (over HTTP with `http`), exported to
/// `collector`.
async fn confirmed_call_trace(era: Era, http: bool, collector: &Collector) -> Vec<ExportedSpan> {
    let mut setup = statuspro::Setup::new()
        .era(era)
        .elicitation(Elicitation::Accept(true))
        .config(&collector.config());
    if http {
        setup = setup.http();
    }
    let running = setup.start().await;
    let out = running.host.ok("add_order_comment", comment_args()).await;
    assert_eq!(out["result"], "confirmed", "{out}");
    let key = sandbox_kit::ApiSandbox::api_key(&running.sandbox).to_string();
    // The round that sent the POST: in 2026-07-28, the retry that carried
    // the answer.
    let spans = collector
        .trace_with(|s| s.kind == "client" && s.name == "POST")
        .await;
    let text = all_values(&collector.spans());
    assert!(
        !text.contains(COMMENT),
        "no argument in any attribute:\n{text}"
    );
    assert!(
        !text.contains(&key),
        "no credential in any attribute:\n{text}"
    );
    spans
}

#[tokio::test]
async fn a_confirmed_statuspro_call_is_one_trace_from_the_request_to_the_upstream_in_both_eras_and_over_http()
 {
    for (era, http, collector) in [
        (Era::Legacy, false, Collector::http().await),
        (Era::Modern, false, Collector::grpc().await),
        (Era::Legacy, true, Collector::grpc().await),
        (Era::Modern, true, Collector::http().await),
    ] {
        let spans = confirmed_call_trace(era, http, &collector).await;
        let shape = tree(&spans);
        let expected_start = [
            "server tools/call add_order_comment",
            "  internal policy",
            "  internal component",
        ];
        assert_eq!(
            &shape[..3],
            &expected_start,
            "{era:?} http={http}: {shape:#?}"
        );
        assert!(
            shape.iter().any(|l| l == "    client POST"),
            "{era:?}: the upstream POST under the component: {shape:#?}"
        );
        if era == Era::Legacy {
            assert!(
                shape.iter().any(|l| l == "    internal confirmation"),
                "{era:?}: the wait for the person: {shape:#?}"
            );
            let confirmation = spans.iter().find(|s| s.name == "confirmation").unwrap();
            assert_eq!(
                confirmation.attr("toolhost.outcome"),
                Some("confirmed"),
                "{confirmation:?}"
            );
        }
        let server = spans.iter().find(|s| s.kind == "server").unwrap();
        assert_eq!(server.service, "toolhost-test");
        assert_eq!(server.attr("mcp.method.name"), Some("tools/call"));
        assert_eq!(server.attr("gen_ai.tool.name"), Some("add_order_comment"));
        assert!(server.attr("jsonrpc.request.id").is_some(), "{server:?}");
        assert_eq!(
            server.attr("mcp.protocol.version"),
            Some(match era {
                Era::Legacy => "2025-11-25",
                Era::Modern => "2026-07-28",
            })
        );
        assert_eq!(
            server.attr("network.transport"),
            Some(if http { "tcp" } else { "pipe" })
        );
        let post = spans.iter().find(|s| s.name == "POST").unwrap();
        assert_eq!(post.attr("http.request.method"), Some("POST"));
        assert_eq!(post.attr("http.response.status_code"), Some("200"));
        assert!(
            post.attr("url.full")
                .unwrap()
                .starts_with("http://127.0.0.1:")
                && !post.attr("url.full").unwrap().contains('?'),
            "{post:?}"
        );
        let component = spans.iter().find(|s| s.name == "component").unwrap();
        assert_eq!(component.attr("toolhost.plugin"), Some("statuspro"));
        // The plugin's labels, shared by every call of it (made at load).
        assert_eq!(
            component.attr("gen_ai.tool.name"),
            Some("add_order_comment")
        );
        assert!(
            component
                .attr("toolhost.component.file")
                .is_some_and(|f| f.ends_with(".wasm")),
            "{component:?}"
        );
        assert!(
            component
                .attr("toolhost.component.digest")
                .is_some_and(|d| d.len() == 64 && d.chars().all(|c| c.is_ascii_hexdigit())),
            "{component:?}"
        );
        assert!(
            component.attr("toolhost.cost.cpu_us").is_some(),
            "{component:?}"
        );
        assert!(
            component
                .attr("toolhost.cost.upstream_requests")
                .unwrap()
                .parse::<u32>()
                .unwrap()
                >= 1
        );
        if era == Era::Legacy && !http {
            // The picture in docs/observability.md, drawn from this trace.
            let svg = svg_timeline(&spans);
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/trace-timeline.svg");
            // `target/` is absent here when CARGO_TARGET_DIR points elsewhere.
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, svg).unwrap();
        }
    }
}

/// A client's trace: its id, and the id of the client's own span.
const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
/// The client's span.
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// A 2026-07-28 `tools/call` of `greet` as raw JSON, with `meta` added to
/// its `_meta`.
fn greet_call(id: u32, meta: Value) -> String {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "greet",
        "arguments": {"name": "Ada"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }});
    if let Value::Object(extra) = meta {
        for (k, v) in extra {
            request["params"]["_meta"][k] = v;
        }
    }
    request.to_string()
}

#[tokio::test]
async fn a_clients_traceparent_in_meta_or_in_the_headers_is_the_parent_of_the_server_span() {
    let collector = Collector::http().await;
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .era(Era::Modern)
            .config(collector.config()),
    )
    .await;
    let traceparent = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "greet"),
    ];
    // In `_meta`.
    let answer = crate::http::post(
        &host,
        greet_call(
            7,
            json!({"traceparent": traceparent, "tracestate": "vendor=1"}),
        ),
        &headers,
    )
    .await;
    assert!(
        answer.status().is_success(),
        "{}",
        answer.text().await.unwrap()
    );
    let spans = collector
        .trace_with(|s| s.kind == "server" && s.attr("jsonrpc.request.id") == Some("7"))
        .await;
    let server = spans.iter().find(|s| s.kind == "server").unwrap();
    assert_eq!(
        (server.trace_id.as_str(), server.parent.as_str()),
        (CLIENT_TRACE, CLIENT_SPAN)
    );

    // In the HTTP headers, another span of the same trace.
    let other_span = "1111111111111111";
    let header = format!("00-{CLIENT_TRACE}-{other_span}-01");
    let mut with_header = headers.to_vec();
    with_header.push(("traceparent", &header));
    let answer = crate::http::post(&host, greet_call(8, json!({})), &with_header).await;
    assert!(answer.status().is_success());
    let spans = collector
        .trace_with(|s| s.kind == "server" && s.attr("jsonrpc.request.id") == Some("8"))
        .await;
    let server = spans
        .iter()
        .find(|s| s.attr("jsonrpc.request.id") == Some("8"))
        .unwrap();
    assert_eq!(
        (server.trace_id.as_str(), server.parent.as_str()),
        (CLIENT_TRACE, other_span)
    );
}

#[tokio::test]
async fn upstream_requests_carry_traceparent_only_where_the_plugins_config_says_so() {
    let collector = Collector::http().await;
    let upstream = Recorder::start().await;
    for propagate in [false, true] {
        let config = format!(
            "[plugins.hello]\nallow = [{{ host = \"127.0.0.1\", port = {}, methods = [\"GET\"] }}]\npropagate_trace_context = {propagate}\n{}",
            upstream.port,
            collector.config()
        );
        let host = Host::start(HostOptions::new(&["hello"]).config(&config)).await;
        host.ok(
            "fetch_url",
            json!({"url": format!("{}/page?secret=1", upstream.url)}),
        )
        .await;
        let recorded = upstream.requests.lock().unwrap().last().cloned().unwrap();
        let sent = recorded
            .headers
            .iter()
            .find(|(name, _)| name == "traceparent")
            .map(|(_, value)| value.clone());
        match (propagate, sent) {
            (false, None) => {}
            (true, Some(value)) => {
                let parts: Vec<&str> = value.split('-').collect();
                let (trace, span) = (parts[1].to_string(), parts[2].to_string());
                let spans = collector.trace_with(|s| s.span_id == span).await;
                let client = spans.iter().find(|s| s.span_id == span).unwrap();
                assert_eq!(
                    (client.kind, client.trace_id.as_str(), client.name.as_str()),
                    ("client", trace.as_str(), "GET"),
                    "the upstream's parent is the host's request span"
                );
                assert!(
                    !client.attr("url.full").unwrap().contains("secret"),
                    "{client:?}"
                );
            }
            (propagate, sent) => panic!("propagate = {propagate}, sent {sent:?}"),
        }
        host.stop().await;
    }
}

#[tokio::test]
async fn a_wasi_http_request_sent_from_a_task_of_its_own_is_a_client_span_within_the_calls_trace() {
    // wasmtime's `wasi:http` polls an outgoing request in a task of its
    // own: the call's trace context travels with it, so the request is the
    // component's child in the call's trace, and the upstream is told so.
    let collector = Collector::http().await;
    let upstream = Recorder::start().await;
    let config = format!(
        "[plugins.wasi_fetch]\npropagate_trace_context = true\n\n{}{}",
        upstream.allow_block("wasi_fetch"),
        collector.config()
    );
    let host = Host::start(HostOptions::new(&["wasi_fetch"]).config(&config)).await;
    let out = host
        .ok(
            "wasi_get",
            json!({"url": format!("{}/traced", upstream.url)}),
        )
        .await;
    assert_eq!(out["status"], 200, "{out}");
    let spans = collector
        .trace_with(|s| s.kind == "client" && s.name == "GET")
        .await;
    let shape = tree(&spans);
    assert_eq!(
        shape,
        [
            "server tools/call wasi_get",
            "  internal policy",
            "  internal component",
            "    client GET",
        ],
        "one trace, the request under the component: {shape:#?}"
    );
    let client = spans.iter().find(|s| s.kind == "client").unwrap();
    assert_eq!(
        sent_traceparent(&upstream, "/traced"),
        Some(format!("00-{}-{}-01", client.trace_id, client.span_id)),
        "the upstream's parent is the host's client span"
    );
    host.stop().await;
}

/// `hello` over HTTP exporting to `collector`, after five greetings whose
/// last server span the collector has: the host and its metrics URL.
async fn five_greetings_exported_to(collector: &Collector) -> (Host, String) {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config(collector.config()),
    )
    .await;
    for i in 0..5 {
        host.ok("greet", json!({"name": format!("n{i}")})).await;
    }
    let last = collector
        .trace_with(|s| s.attr("gen_ai.tool.name") == Some("greet") && s.kind == "server")
        .await;
    assert!(!last.is_empty());
    let url = host.url.as_deref().unwrap().replace("/mcp", "/metrics");
    (host, url)
}

#[tokio::test]
async fn each_export_is_measured_the_spans_taken_its_time_and_how_far_behind_it_ran() {
    let collector = Collector::http().await;
    let (host, url) = five_greetings_exported_to(&collector).await;
    // The spans the collector holds were counted as exported once their
    // export was answered.
    let scrape = Scrape::until(
        &url,
        "the spans the collector took counted as exported",
        |s| s.get("toolhost_trace_spans_exported_total", &[]) >= collector.spans().len() as f64,
    )
    .await;
    assert!(
        scrape.get(
            "toolhost_trace_export_duration_seconds_count",
            &[("outcome", "ok")]
        ) >= 1.0
    );
    assert!(scrape.get("toolhost_trace_export_lag_seconds_count", &[]) >= 1.0);
    assert_eq!(
        scrape.sum("toolhost_trace_spans_dropped_total", &[]),
        0.0,
        "nothing dropped"
    );
    host.stop().await;
}

#[tokio::test]
async fn spans_a_collector_rejects_in_a_partial_success_are_counted_as_dropped_not_exported() {
    let collector = Collector::http_rejecting(1).await;
    let (host, url) = five_greetings_exported_to(&collector).await;
    let scrape = Scrape::until(&url, "every span the collector took counted", |s| {
        s.get("toolhost_trace_spans_exported_total", &[])
            + s.get(
                "toolhost_trace_spans_dropped_total",
                &[("reason", "rejected")],
            )
            >= collector.spans().len() as f64
    })
    .await;
    let rejected = collector.rejected();
    assert!(rejected >= 1, "the collector rejected one span an export");
    assert_eq!(
        scrape.get(
            "toolhost_trace_spans_dropped_total",
            &[("reason", "rejected")]
        ),
        rejected as f64,
        "each span the collector rejected is dropped"
    );
    assert_eq!(
        scrape.get("toolhost_trace_spans_exported_total", &[]),
        (collector.spans().len() as u64 - rejected) as f64,
        "and only the rest are exported"
    );
    host.stop().await;
}

#[tokio::test]
async fn a_dead_or_silent_collector_costs_dropped_spans_and_never_a_call() {
    // Nothing listens on a port just closed; a listener that accepts and
    // never answers holds every export until its timeout.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let _held = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    for (port, protocol) in [
        (closed, "http/protobuf"),
        (silent_port, "http/protobuf"),
        (silent_port, "grpc"),
    ] {
        let host = Host::start(
            HostOptions::new(&["hello"]).http().config(format!(
                "[telemetry]\nendpoint = \"http://127.0.0.1:{port}\"\nprotocol = \"{protocol}\"\nexport_timeout_secs = 0.5\nqueue_spans = 8\n"
            )),
        )
        .await;
        for i in 0..40 {
            let out = host.ok("greet", json!({"name": format!("n{i}")})).await;
            assert_eq!(
                out["message"],
                format!("Hello, n{i}!"),
                "{protocol} :{port}"
            );
        }
        // What could not be sent is counted, and so is each export that
        // failed, by how.
        let url = host.url.as_deref().unwrap().replace("/mcp", "/metrics");
        let scrape = Scrape::until(
            &url,
            "the dropped spans and the failed exports counted",
            |s| {
                let dropped: f64 = ["queue_full", "export_failed"]
                    .iter()
                    .map(|r| s.get("toolhost_trace_spans_dropped_total", &[("reason", r)]))
                    .sum();
                dropped > 0.0 && s.sum("toolhost_trace_export_duration_seconds_count", &[]) >= 1.0
            },
        )
        .await;
        assert_eq!(
            scrape.get(
                "toolhost_trace_export_duration_seconds_count",
                &[("outcome", "ok")]
            ),
            0.0,
            "{protocol} :{port}"
        );
        assert_eq!(scrape.get("toolhost_trace_spans_exported_total", &[]), 0.0);
        host.stop().await;
    }
}

#[tokio::test]
async fn a_calls_cost_lies_within_what_the_component_is_known_to_spend() {
    let upstream = Recorder::start().await;
    let config = format!(
        "[host]\naudit = \"AUDIT\"\n[plugins.spend]\nallow = [{{ host = \"127.0.0.1\", port = {}, methods = [\"GET\"] }}]\n[plugins.spend.limits]\nmemory_mib = 64\n",
        upstream.port
    );
    let dir = tempfile::tempdir().unwrap();
    let trail = dir.path().join("audit.jsonl");
    let config = config.replace("AUDIT", trail.to_str().unwrap());
    let host = Host::start(HostOptions::new(&["spend"]).config(&config)).await;
    let (mib, bytes) = (16u64, 5000u64);
    host.ok(
        "spend",
        json!({"mib": mib, "url": format!("{}/spend", upstream.url), "bytes": bytes}),
    )
    .await;
    // Over the limit: the cost names the limit it hit.
    let over = host
        .call(
            "spend",
            json!({"mib": 100, "url": format!("{}/spend", upstream.url), "bytes": 1}),
        )
        .await
        .unwrap();
    assert_eq!(over.is_error, Some(true));
    host.stop().await;
    let records: Vec<Value> = std::fs::read_to_string(&trail)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &Value| r["record"] != "intent")
        .collect();
    let cost = &records[0]["cost"];
    let peak = cost["peak_memory_bytes"].as_u64().unwrap();
    assert!(
        peak >= mib << 20 && peak <= (mib + 8) << 20,
        "the peak holds the {mib} MiB and little more: {cost}"
    );
    assert_eq!(cost["bytes_out"], bytes, "{cost}");
    assert_eq!(cost["bytes_in"], "recorded".len(), "{cost}");
    assert_eq!(cost["upstream_requests"], 1);
    assert_eq!(cost["hosts"], json!(["127.0.0.1"]));
    let run = cost["run_us"].as_u64().unwrap();
    assert!(cost["upstream_us"].as_u64().unwrap() <= run, "{cost}");
    assert!(cost["cpu_us"].as_u64().unwrap() > 0, "{cost}");
    assert!(cost.get("limit").is_none(), "{cost}");
    assert_eq!(
        records[1]["cost"]["limit"], "limits.memory_mib",
        "{}",
        records[1]
    );
}

/// Runs `toolhost call spend ARGS` on a directory holding the `spend`
/// component, allowed to reach `upstream`, with `flags` after the
/// arguments; its exit status, stdout and stderr.
async fn call_spend(
    upstream: &Recorder,
    arguments: Value,
    flags: &[&str],
) -> (bool, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(
        plugins.join("spend.wasm"),
        crate::support::component("spend"),
    )
    .unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[plugins.spend]\nallow = [{{ host = \"127.0.0.1\", port = {}, methods = [\"GET\"] }}]\n[plugins.spend.limits]\nmemory_mib = 64\n",
            upstream.port
        ),
    )
    .unwrap();
    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    // The CLI blocks; the upstream answers on this test's runtime meanwhile.
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["call", "spend", &arguments.to_string()])
            .args(&flags)
            .arg("--plugins")
            .arg(&plugins)
            .arg("--config")
            .arg(&config)
            .env("XDG_CACHE_HOME", crate::support::test_cache_home())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is the tool's output alone ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (
        out.status.success(),
        stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The JSON object that follows `cost: ` on `stderr`, if any.
fn printed_cost(stderr: &str) -> Option<Value> {
    let at = stderr.find("cost: ")? + "cost: ".len();
    let mut values = serde_json::Deserializer::from_str(&stderr[at..]).into_iter::<Value>();
    Some(values.next()?.expect("the cost is JSON"))
}

#[tokio::test]
async fn toolhost_call_with_cost_prints_the_figures_the_call_really_spent_on_stderr() {
    let upstream = Recorder::start().await;
    let (mib, bytes) = (8u64, 3000u64);
    let arguments = json!({"mib": mib, "url": format!("{}/spend", upstream.url), "bytes": bytes});

    let (ok, out, stderr) = call_spend(&upstream, arguments.clone(), &["--cost"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(out["status"], 200, "stdout holds the result, not the cost");
    let cost = printed_cost(&stderr).unwrap_or_else(|| panic!("no cost on stderr: {stderr}"));
    let figure = |key: &str| {
        cost[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key} is a number: {cost}"))
    };
    // Wall time holds the CPU time and the parts of the run.
    assert!(figure("cpu_us") > 0, "{cost}");
    assert!(
        figure("cpu_us") <= figure("queue_us") + figure("run_us"),
        "CPU time within the wall time: {cost}"
    );
    assert!(figure("run_us") > 0, "{cost}");
    assert!(
        figure("upstream_us") + figure("waiting_us") <= figure("run_us"),
        "{cost}"
    );
    assert!(figure("upstream_us") > 0, "the GET took time: {cost}");
    assert_eq!(figure("waiting_us"), 0, "nobody was asked: {cost}");
    // What the component is known to spend.
    let peak = figure("peak_memory_bytes");
    assert!(
        peak >= mib << 20 && peak <= (mib + 8) << 20,
        "the peak holds the {mib} MiB: {cost}"
    );
    assert_eq!(figure("upstream_requests"), 1, "{cost}");
    assert_eq!(figure("bytes_out"), bytes, "{cost}");
    assert_eq!(figure("bytes_in"), "recorded".len() as u64, "{cost}");
    assert_eq!(cost["hosts"], json!(["127.0.0.1"]), "{cost}");
    assert!(cost.get("limit").is_none(), "{cost}");
    assert_eq!(upstream.received().len(), 1);

    // A call over its memory names the limit, and exits non-zero.
    let over = json!({"mib": 100, "url": format!("{}/spend", upstream.url), "bytes": 1});
    let (ok, out, stderr) = call_spend(&upstream, over, &["--cost"]).await;
    assert!(!ok && out["ok"] == false, "{out}");
    let cost = printed_cost(&stderr).unwrap_or_else(|| panic!("no cost on stderr: {stderr}"));
    assert_eq!(cost["limit"], "limits.memory_mib", "{cost}");
    assert_eq!(cost["upstream_requests"], 0, "{cost}");

    // Without `--cost`, no cost.
    let (ok, _, stderr) = call_spend(&upstream, arguments, &[]).await;
    assert!(ok && printed_cost(&stderr).is_none(), "{stderr}");
}

/// The value of `field=` in a log `line` (up to the next space, `}` or `:`).
fn log_field<'a>(line: &'a str, field: &str) -> Option<&'a str> {
    let at = line.find(&format!("{field}="))? + field.len() + 1;
    let rest = &line[at..];
    Some(&rest[..rest.find([' ', '}', ':']).unwrap_or(rest.len())])
}

#[tokio::test]
async fn a_log_line_written_during_a_call_names_the_trace_id_its_exported_span_has() {
    let collector = Collector::http().await;
    let host = Host::start(HostOptions::new(&["hello"]).config(collector.config())).await;
    // Nothing allows this host: the refusal is logged inside the call.
    let issue = host
        .tool_error(
            "fetch_url",
            json!({"url": "http://127.0.0.1:9/denied-here"}),
        )
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    let log = host.wait_for_stderr("/denied-here").await;
    let line = log
        .lines()
        .find(|l| l.contains("/denied-here"))
        .unwrap()
        .to_string();
    let logged = log_field(&line, "trace_id")
        .unwrap_or_else(|| panic!("the line names the trace: {line}"))
        .to_string();
    let spans = collector
        .trace_with(|s| s.kind == "server" && s.attr("gen_ai.tool.name") == Some("fetch_url"))
        .await;
    let server = spans.iter().find(|s| s.kind == "server").unwrap();
    assert_eq!(logged, server.trace_id, "{line}");
    // And the request's own span, the one to open in a trace viewer.
    assert_eq!(
        log_field(&line, "span_id"),
        Some(server.span_id.as_str()),
        "{line}"
    );
    // The ids are the span's own, never also its attributes.
    for span in &spans {
        for key in ["trace_id", "span_id"] {
            assert_eq!(
                span.attr(key),
                None,
                "{key} on {}: {:?}",
                span.name,
                span.attributes
            );
        }
    }
    host.stop().await;
}

/// A 2026-07-28 `tools/call` of `fetch_url` for `url` as raw JSON, with
/// `meta` added to its `_meta`.
fn fetch_call(id: u32, url: &str, meta: Value) -> String {
    let mut request: Value = serde_json::from_str(&greet_call(id, meta)).unwrap();
    request["params"]["name"] = json!("fetch_url");
    request["params"]["arguments"] = json!({ "url": url });
    request.to_string()
}

/// Calls `fetch_url` (request `id`, `meta` in its `_meta`) for `path` on a
/// closed loopback port, which the host refuses and logs within the
/// request; the log line naming `path`.
async fn refused_fetch_logged(
    host: &Host,
    headers: &[(&str, &str)],
    id: u32,
    path: &str,
    meta: Value,
) -> String {
    let url = format!("http://127.0.0.1:9{path}");
    let answer = crate::http::post(host, fetch_call(id, &url, meta), headers).await;
    assert!(answer.status().is_success());
    let log = host.wait_for_stderr(path).await;
    log.lines().find(|l| l.contains(path)).unwrap().to_string()
}

#[tokio::test]
async fn a_request_not_sampled_exports_nothing_and_its_log_lines_name_no_trace_while_a_sampled_ones_do()
 {
    let collector = Collector::http().await;
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .era(Era::Modern)
            .config(format!("{}sampling_ratio = 0.0\n", collector.config())),
    )
    .await;
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "fetch_url"),
    ];
    // A trace that would start here: not sampled at 0.0. Nothing allows
    // the host, so the refusal is logged within the request.
    let line = refused_fetch_logged(&host, &headers, 21, "/not-sampled-here", json!({})).await;
    let line = line.as_str();
    assert!(
        line.contains("request"),
        "still within the request's span: {line}"
    );
    assert_eq!(
        log_field(line, "trace_id"),
        None,
        "no trace to open: {line}"
    );
    assert_eq!(log_field(line, "span_id"), None, "{line}");

    // A client's trace not sampled: nothing to open here either, but its
    // lines name the client's trace, to find in the client's own log.
    let unsampled_parent = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-00");
    let meta = json!({ "traceparent": unsampled_parent });
    let line = refused_fetch_logged(&host, &headers, 20, "/client-not-sampled", meta).await;
    let line = line.as_str();
    assert_eq!(log_field(line, "trace_id"), Some(CLIENT_TRACE), "{line}");
    assert_eq!(log_field(line, "span_id"), None, "no span of ours: {line}");

    // A client's sampled parent is followed even at 0.0.
    let traceparent = format!("00-{SAMPLED_TRACE}-{CLIENT_SPAN}-01");
    let meta = json!({ "traceparent": traceparent });
    let line = refused_fetch_logged(&host, &headers, 22, "/sampled-here", meta).await;
    let line = line.as_str();
    let spans = collector
        .trace_with(|s| s.kind == "server" && s.attr("jsonrpc.request.id") == Some("22"))
        .await;
    let server = spans.iter().find(|s| s.kind == "server").unwrap();
    assert_eq!(server.trace_id, SAMPLED_TRACE);
    assert_eq!(log_field(line, "trace_id"), Some(SAMPLED_TRACE), "{line}");
    assert_eq!(
        log_field(line, "span_id"),
        Some(server.span_id.as_str()),
        "{line}"
    );
    // Spans leave in the order they end, through one queue: had the first
    // request exported anything, it would be in by now.
    let exported = collector.spans();
    assert!(
        exported.iter().all(|s| s.trace_id == SAMPLED_TRACE),
        "only the sampled request's trace: {:#?}",
        tree(&exported)
    );
    host.stop().await;
}

/// A client's trace that it samples, other than [`CLIENT_TRACE`].
const SAMPLED_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";

/// The header `name` the upstream `recorder` was sent on the request to
/// `path`, if any.
fn sent_header(recorder: &Recorder, path: &str, name: &str) -> Option<String> {
    let requests = recorder.requests.lock().unwrap();
    let request = requests.iter().find(|r| r.path == path).unwrap();
    request
        .headers
        .iter()
        .find(|(sent, _)| sent == name)
        .map(|(_, value)| value.clone())
}

/// The `traceparent` the upstream `recorder` was sent on the request to
/// `path`, if any.
fn sent_traceparent(recorder: &Recorder, path: &str) -> Option<String> {
    sent_header(recorder, path, "traceparent")
}

#[tokio::test]
async fn a_trace_not_sampled_reaches_the_upstream_not_sampled_with_the_clients_trace_id_and_nothing_is_exported()
 {
    // The log's filter does not matter: also when it wants none of the
    // request's spans.
    for log in ["info,toolhost=debug", "warn,toolhost::transport=info"] {
        let collector = Collector::http().await;
        let upstream = Recorder::start().await;
        let config = format!(
            "[plugins.hello]\nallow = [{{ host = \"127.0.0.1\", port = {}, methods = [\"GET\"] }}]\npropagate_trace_context = true\n{}sampling_ratio = 0.0\n",
            upstream.port,
            collector.config()
        );
        let host = Host::start(
            HostOptions::new(&["hello"])
                .http()
                .era(Era::Modern)
                .env("TOOLHOST_LOG", log)
                .config(config),
        )
        .await;
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "fetch_url"),
        ];
        let call = |id: u32, path: &str, meta: Value| {
            let host = &host;
            let request = fetch_call(id, &format!("{}{path}", upstream.url), meta);
            async move {
                let answer = crate::http::post(host, request, &headers).await;
                assert!(answer.status().is_success());
                let text = answer.text().await.unwrap();
                assert!(!text.contains("\"isError\":true"), "{text}");
            }
        };

        // The client's trace, not sampled: passed on as it came, so that the
        // upstream follows the client's decision.
        let unsampled = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-00");
        call(
            31,
            "/client-not-sampled",
            json!({ "traceparent": unsampled, "tracestate": "vendor=1" }),
        )
        .await;
        assert_eq!(
            sent_traceparent(&upstream, "/client-not-sampled").as_deref(),
            Some(unsampled.as_str())
        );
        assert_eq!(
            sent_header(&upstream, "/client-not-sampled", "tracestate").as_deref(),
            Some("vendor=1")
        );

        // A trace that starts here, not sampled at 0.0: the upstream is told so,
        // under one trace id for the whole request.
        call(32, "/root-not-sampled", json!({})).await;
        let sent = sent_traceparent(&upstream, "/root-not-sampled")
            .unwrap_or_else(|| panic!("no traceparent sent"));
        let parts: Vec<&str> = sent.split('-').collect();
        assert_eq!(parts.len(), 4, "{sent}");
        assert_eq!((parts[0], parts[3]), ("00", "00"), "not sampled: {sent}");
        assert_ne!(parts[1], "0".repeat(32), "{sent}");
        assert_ne!(parts[1], CLIENT_TRACE, "{sent}");

        // A sampled request last: spans leave in the order they end, through
        // one queue, so had the others exported anything it would be in.
        let sampled = format!("00-{SAMPLED_TRACE}-{CLIENT_SPAN}-01");
        call(33, "/sampled", json!({ "traceparent": sampled })).await;
        let spans = collector
            .trace_with(|s| s.kind == "client" && s.trace_id == SAMPLED_TRACE)
            .await;
        let client = spans.iter().find(|s| s.kind == "client").unwrap();
        let sent = sent_traceparent(&upstream, "/sampled").unwrap();
        assert_eq!(
            sent,
            format!("00-{SAMPLED_TRACE}-{}-01", client.span_id),
            "the sampled request's upstream follows its client span"
        );
        let exported = collector.spans();
        assert!(
            exported.iter().all(|s| s.trace_id == SAMPLED_TRACE),
            "only the sampled request's trace: {:#?}",
            tree(&exported)
        );
        host.stop().await;
    }
}

#[tokio::test]
#[ignore = "needs redis-server (apt-get install -y redis-server); cargo xtask test runs it when installed"]
async fn each_redis_command_of_a_call_is_a_client_span_within_the_calls_trace() {
    use crate::support::infra::{Redis, require};
    require(&["redis-server"]);
    let redis = Redis::start(None).await.expect("redis-server starts");
    let collector = Collector::grpc().await;
    // A `limit` rule counts each call in the shared Redis.
    let config = format!(
        "[state]\nreplay = \"{}\"\n\n[[policy.rules]]\nname = \"budget\"\noutcome = \"limit\"\nlimit = {{ count = 100, window_secs = 3600 }}\n{}",
        redis.url,
        collector.config()
    );
    let host = Host::start(HostOptions::new(&["hello"]).config(config)).await;
    host.ok("greet", json!({"name": "Ada"})).await;
    let spans = collector
        .trace_with(|s| s.attr("db.system.name") == Some("redis"))
        .await;
    let server = spans
        .iter()
        .find(|s| s.kind == "server")
        .expect("the call's server span");
    assert_eq!(server.attr("gen_ai.tool.name"), Some("greet"));
    let commands: Vec<&ExportedSpan> = spans
        .iter()
        .filter(|s| s.attr("db.system.name") == Some("redis"))
        .collect();
    for command in &commands {
        assert_eq!(command.kind, "client", "{command:?}");
        let operation = command.attr("db.operation.name").unwrap();
        assert_eq!(command.name, operation, "named after its command");
        assert!(
            operation.chars().all(|c| c.is_ascii_uppercase()),
            "a command's name, never its arguments: {command:?}"
        );
        assert_eq!(command.attr("server.address"), Some("127.0.0.1"));
        assert_eq!(
            command.attr("server.port"),
            Some(redis.port.to_string().as_str())
        );
        // Within the call: its ancestors lead to the server span.
        let mut parent = command.parent.as_str();
        let mut path = Vec::new();
        while let Some(span) = spans.iter().find(|s| s.span_id == parent) {
            path.push(span.name.as_str());
            parent = span.parent.as_str();
        }
        assert_eq!(
            path.last(),
            Some(&"tools/call greet"),
            "{command:?} under {path:?}"
        );
    }
    let shape = tree(&spans);
    assert!(
        shape.iter().any(|l| l.starts_with("    client ")) && shape[1] == "  internal policy",
        "the counter is read within the policy's decision: {shape:#?}"
    );
    host.stop().await;
}

#[tokio::test]
async fn a_tools_own_form_is_a_span_that_says_how_it_was_answered_and_never_the_answer() {
    use crate::support::ERAS;
    for era in ERAS {
        for (answer, outcome) in [
            (
                Elicitation::AcceptWith(r#"{"color": "blue", "note": "matte finish 5c1e"}"#),
                "accepted",
            ),
            (Elicitation::Decline, "declined"),
            (Elicitation::Cancel, "cancelled"),
        ] {
            let collector = Collector::http().await;
            let host = Host::start(
                HostOptions::new(&["media"])
                    .era(era)
                    .elicitation(answer)
                    .config(collector.config()),
            )
            .await;
            let out = host.ok("pick_color", json!({})).await;
            assert_eq!(out["answer"], outcome, "{era:?}: {out}");
            // The round the answer reached the tool in (in 2026-07-28, the
            // retry that carried it).
            let spans = collector
                .trace_with(|s| s.name == "form" && s.attr("toolhost.outcome") == Some(outcome))
                .await;
            let shape = tree(&spans);
            assert_eq!(
                shape,
                [
                    "server tools/call pick_color",
                    "  internal policy",
                    "  internal component",
                    "    internal form",
                ],
                "{era:?} {outcome}"
            );
            let form = spans.iter().find(|s| s.name == "form").unwrap();
            assert_eq!(
                form.attributes.keys().collect::<Vec<_>>(),
                ["toolhost.outcome"],
                "{era:?}: how it ended, and nothing of the question or the answer: {form:?}"
            );
            if era == Era::Modern {
                // The first round ended asking the client for the answer.
                let asked = collector
                    .trace_with(|s| {
                        s.name == "form" && s.attr("toolhost.outcome") == Some("input_required")
                    })
                    .await;
                assert!(asked.iter().any(|s| s.kind == "server"), "{asked:#?}");
            }
            let text = all_values(&collector.spans());
            for content in ["matte finish 5c1e", "blue", "Which color"] {
                assert!(
                    !text.contains(content),
                    "{era:?}: {content:?} in an attribute:\n{text}"
                );
            }
            host.stop().await;
        }
    }
}
