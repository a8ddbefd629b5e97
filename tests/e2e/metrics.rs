//! Prometheus metrics through the real binary: `[host] metrics` on a
//! loopback port the host picks, read with a plain HTTP GET after real
//! calls against the StatusPro sandbox, a policy denial, and a hot reload.
//! Each test reads the counters the calls must have moved, with their
//! labels and exact values.

use std::process::Command;

use serde_json::json;
use statuspro_sandbox::seed;

use crate::statuspro;
use crate::support::metrics::Scrape;
use crate::support::{
    Changes, ERAS, Elicitation, Era, Host, HostOptions, component, test_cache_home,
};

/// The `[host]` lines that turn metrics on, on a port the host picks.
const METRICS_ON: &str = "\n[host]\nmetrics = \"127.0.0.1:0\"\n";

/// The address the host logged: `metrics on http://ADDR/metrics`.
async fn metrics_url(host: &Host) -> String {
    let log = host.wait_for_stderr("/metrics").await;
    let start = log.find("metrics on http://").expect("the metrics line") + "metrics on ".len();
    let rest = &log[start..];
    rest[..rest.find("/metrics").unwrap() + "/metrics".len()].to_string()
}

#[tokio::test]
async fn calls_confirmations_upstream_requests_and_denials_are_counted_with_their_labels() {
    for era in ERAS {
        let sandbox = statuspro_sandbox::start(Default::default())
            .await
            .expect("the sandbox starts");
        let mut components = statuspro::COMPONENTS.to_vec();
        components.push("misbehaving");
        let host = Host::start(
            HostOptions::new(&components)
                .era(era)
                // The first question is confirmed, the second declined.
                .elicitation(Elicitation::Script(&[
                    Elicitation::Accept(true),
                    Elicitation::Accept(false),
                ]))
                .env("STATUSPRO_API_KEY", sandbox.api_key())
                .config(statuspro::config(&sandbox, METRICS_ON)),
        )
        .await;
        let url = metrics_url(&host).await;
        let before = Scrape::of(&url).await;
        before.expect(
            "toolhost_calls_total",
            &[("tool", "list_statuses"), ("outcome", "ok")],
            0.0,
        );

        // A success, a tool error, a confirmed and a declined mutation, a
        // request the policy refuses.
        host.ok("list_statuses", json!({})).await;
        let issue = host
            .tool_error("get_order", json!({"order_id": seed::UNKNOWN_ORDER_ID}))
            .await;
        assert_eq!(issue["code"], "NOT_FOUND");
        let id = seed::order_with_viable_next("st000003").unwrap();
        let out = host
            .ok(
                "update_order_status",
                json!({"order_id": id, "status_code": "st000003", "confirm": true}),
            )
            .await;
        assert_eq!(out["result"], "confirmed", "{era:?}: {out}");
        let out = host
            .ok(
                "add_order_comment",
                json!({"order_id": id, "comment": "Not today.", "confirm": true}),
            )
            .await;
        assert_eq!(out["result"], "declined", "{era:?}: {out}");
        let issue = host
            .tool_error("get", json!({"url": "http://127.0.0.1:9/elsewhere"}))
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED");
        // A name the registry does not have is one series, whatever it is.
        for name in ["no_such_tool", "another_missing_tool"] {
            assert!(host.call(name, json!({})).await.is_err());
        }

        let m = Scrape::of(&url).await;
        m.expect(
            "toolhost_calls_total",
            &[("tool", "(unknown)"), ("outcome", "unknown_tool")],
            2.0,
        );
        assert_eq!(
            m.sum("toolhost_calls_total", &[("tool", "no_such_tool")]),
            0.0
        );
        let calls = "toolhost_calls_total";
        m.expect(calls, &[("tool", "list_statuses"), ("outcome", "ok")], 1.0);
        m.expect(calls, &[("tool", "get_order"), ("outcome", "error")], 1.0);
        m.expect(
            "toolhost_call_errors_total",
            &[("tool", "get_order"), ("code", "NOT_FOUND")],
            1.0,
        );
        m.expect(
            calls,
            &[("tool", "update_order_status"), ("outcome", "ok")],
            1.0,
        );
        m.expect(
            calls,
            &[("tool", "add_order_comment"), ("outcome", "ok")],
            1.0,
        );
        m.expect(calls, &[("tool", "get"), ("outcome", "error")], 1.0);
        // A 2026-07-28 client is asked in an `input_required` round first.
        let rounds = if era == Era::Modern { 1.0 } else { 0.0 };
        for tool in ["update_order_status", "add_order_comment"] {
            m.expect(
                calls,
                &[("tool", tool), ("outcome", "input_required")],
                rounds,
            );
        }
        // Every call that ran has one latency sample.
        m.expect(
            "toolhost_call_duration_seconds_count",
            &[("tool", "update_order_status")],
            1.0 + rounds,
        );
        m.expect(
            "toolhost_call_duration_seconds_bucket",
            &[("tool", "list_statuses"), ("le", "60")],
            1.0,
        );

        // Each answer counts once, though a 2026-07-28 call replays it.
        m.expect(
            "toolhost_confirmations_total",
            &[("outcome", "confirmed")],
            1.0,
        );
        m.expect(
            "toolhost_confirmations_total",
            &[("outcome", "declined")],
            1.0,
        );

        // What reached the sandbox, by the allow entry's host and status.
        let upstream = "toolhost_upstream_requests_total";
        let sent = sandbox.requests().len() as f64;
        assert!(sent >= 4.0, "{era:?}: {sent}");
        assert_eq!(
            m.sum(upstream, &[("plugin", "statuspro")]),
            sent,
            "{}",
            m.text
        );
        assert_eq!(
            m.sum(upstream, &[("plugin", "statuspro"), ("host", "127.0.0.1")]),
            sent
        );
        m.expect(
            upstream,
            &[
                ("plugin", "statuspro"),
                ("host", "127.0.0.1"),
                ("status", "404"),
            ],
            1.0,
        );
        assert!(
            m.get(
                upstream,
                &[
                    ("plugin", "statuspro"),
                    ("host", "127.0.0.1"),
                    ("status", "200")
                ]
            ) >= 3.0
        );

        m.expect(
            "toolhost_policy_denials_total",
            &[("plugin", "misbehaving"), ("reason", "host_not_allowed")],
            1.0,
        );
        assert_eq!(m.sum(upstream, &[("plugin", "misbehaving")]), 0.0);

        m.expect("toolhost_components_loaded", &[], 10.0);
        m.expect(
            "toolhost_tools_loaded",
            &[],
            (statuspro::COMPONENTS.len() + crate::support::MISBEHAVING_TOOLS) as f64,
        );
    }
}

#[tokio::test]
async fn a_mutation_without_a_yes_counts_as_an_unconfirmed_denial_and_a_no_elicitation_answer() {
    // A client that cannot elicit: the operator's policy answers for it
    // (`deny`), and the misbehaving tool that posts anyway is refused.
    let host = Host::start(
        HostOptions::new(&["misbehaving"]).config(format!("{METRICS_ON}confirmation = \"deny\"\n")),
    )
    .await;
    let url = metrics_url(&host).await;
    host.tool_error("post_unconfirmed", json!({"url": "http://127.0.0.1:9/"}))
        .await;
    let out = host
        .ok(
            "confirm_then_post",
            json!({"url": "http://127.0.0.1:9/", "confirm": true}),
        )
        .await;
    assert_eq!(out["detail"], "unsupported");
    let m = Scrape::of(&url).await;
    m.expect(
        "toolhost_policy_denials_total",
        &[("plugin", "misbehaving"), ("reason", "unconfirmed")],
        1.0,
    );
    m.expect(
        "toolhost_confirmations_total",
        &[("outcome", "no_elicitation")],
        1.0,
    );
}

#[tokio::test]
async fn a_hot_reload_moves_the_reload_counter_and_the_loaded_gauges() {
    let host = Host::start(HostOptions::new(&["hello"]).config(METRICS_ON)).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    let url = metrics_url(&host).await;
    let before = Scrape::of(&url).await;
    before.expect("toolhost_reloads_total", &[("result", "changed")], 0.0);
    before.expect("toolhost_components_loaded", &[], 1.0);
    before.expect("toolhost_tools_loaded", &[], 2.0);

    let tmp = host.plugins.join(".misbehaving.wasm.tmp");
    std::fs::write(&tmp, component("misbehaving")).unwrap();
    std::fs::rename(&tmp, host.plugins.join("misbehaving.wasm")).unwrap();
    changes.next(&host).await;

    let after = Scrape::of(&url).await;
    after.expect("toolhost_reloads_total", &[("result", "changed")], 1.0);
    after.expect("toolhost_components_loaded", &[], 2.0);
    after.expect(
        "toolhost_tools_loaded",
        &[],
        (2 + crate::support::MISBEHAVING_TOOLS) as f64,
    );
    after.expect("toolhost_component_load_failures_total", &[], 0.0);
}

#[test]
fn a_metrics_port_in_use_stops_the_start_naming_the_key() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, format!("[host]\nmetrics = \"127.0.0.1:{port}\"\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--no-watch", "--plugins"])
        .arg(&plugins)
        .arg("--config")
        .arg(&config)
        .env("TOOLHOST_LOG", "warn")
        .env("XDG_CACHE_HOME", test_cache_home())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("toolhost runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started without its metrics port");
    assert!(
        stderr.contains(&format!(
            "cannot listen for metrics on 127.0.0.1:{port} (host.metrics)"
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "stdout carries the protocol only");
}

#[test]
fn every_metric_is_in_the_module_doc_and_docs_metrics_md() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let source = std::fs::read_to_string(root.join("host/src/metrics.rs")).unwrap();
    let doc = std::fs::read_to_string(root.join("docs/metrics.md")).unwrap();
    let names: Vec<&str> = source
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter_map(|l| l.split_once(": &str = \"toolhost_"))
        .map(|(_, rest)| rest.trim_end_matches("\";"))
        .collect();
    assert!(names.len() >= 13, "{names:?}");
    for name in names {
        let row = format!("| `toolhost_{name}` |");
        assert!(
            source.contains(&format!("//! {row}")),
            "the module doc lacks {name}"
        );
        assert!(doc.contains(&row), "docs/metrics.md lacks {name}");
    }
}

#[tokio::test]
async fn reads_gets_and_completions_are_counted_by_plugin_kind_and_outcome() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["offers"]).era(era).config(format!(
            "[plugins.colors]\nfiles = [\"offers.wasm\"]\n{METRICS_ON}"
        )))
        .await;
        let url = metrics_url(&host).await;
        let read = |uri: &str| {
            host.client
                .read_resource(ReadResourceRequestParams::new(uri.to_string()))
        };
        // Three reads that run the guest: ok, not found (the guest says
        // so), an error (a trap); two requests refused before it runs.
        assert!(read("test://colors/red").await.is_ok());
        assert!(read("test://colors/purple").await.is_err());
        assert!(read("test://crash").await.is_err());
        assert!(read("test://nothing-here").await.is_err());
        assert!(read("test://colors/%FF").await.is_err());
        let arguments = json!({"color": "gold"});
        host.client
            .get_prompt(
                GetPromptRequestParams::new("describe_color")
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        host.client
            .complete_prompt_argument("describe_color", "color", "g", None)
            .await
            .unwrap();
        // Not completable: answered without running the guest.
        host.client
            .complete_prompt_argument("describe_color", "tone", "p", None)
            .await
            .unwrap();

        let m = Scrape::of(&url).await;
        let offers = "toolhost_offer_calls_total";
        let reads = [("plugin", "colors"), ("kind", "resource_read")];
        for (outcome, count) in [("ok", 1.0), ("not_found", 1.0), ("error", 1.0)] {
            m.expect(offers, &[reads[0], reads[1], ("outcome", outcome)], count);
        }
        assert_eq!(m.sum(offers, &reads), 3.0, "{era:?}:\n{}", m.text);
        m.expect(
            offers,
            &[
                ("plugin", "colors"),
                ("kind", "prompt_get"),
                ("outcome", "ok"),
            ],
            1.0,
        );
        m.expect(
            offers,
            &[
                ("plugin", "colors"),
                ("kind", "completion"),
                ("outcome", "ok"),
            ],
            1.0,
        );
        assert_eq!(m.sum(offers, &[]), 5.0, "{era:?}:\n{}", m.text);
        // One latency sample each, in the call histogram's buckets.
        let duration = "toolhost_offer_call_duration_seconds";
        m.expect(&format!("{duration}_count"), &reads, 3.0);
        m.expect(
            &format!("{duration}_bucket"),
            &[reads[0], reads[1], ("le", "60")],
            3.0,
        );
        // What is served beside tools.
        for (kind, count) in [("resource", 5.0), ("template", 1.0), ("prompt", 1.0)] {
            m.expect("toolhost_offers_loaded", &[("kind", kind)], count);
        }
        // No URI, prompt argument or value is a label.
        for chosen in ["test://", "purple", "gold", "describe_color"] {
            assert!(!m.text.contains(chosen), "{chosen} in:\n{}", m.text);
        }
        // Tools are counted apart.
        assert_eq!(m.sum("toolhost_calls_total", &[]), 0.0);
    }
}

#[tokio::test]
async fn a_read_the_client_cancels_is_counted_as_cancelled() {
    let server = crate::support::Recorder::start().await;
    let config = format!(
        "{}[plugins.offers.config]\nfetch_url = \"{}/hold\"\n{METRICS_ON}",
        server.allow_block("offers"),
        server.url
    );
    let host = Host::start(HostOptions::new(&["offers"]).config(config)).await;
    let url = metrics_url(&host).await;
    host.cancel_a_held_read("test://fetched", &server).await;
    let m = Scrape::of(&url).await;
    m.expect(
        "toolhost_offer_calls_total",
        &[
            ("plugin", "offers"),
            ("kind", "resource_read"),
            ("outcome", "cancelled"),
        ],
        1.0,
    );
    assert_eq!(m.sum("toolhost_offer_calls_total", &[]), 1.0, "{}", m.text);
}
