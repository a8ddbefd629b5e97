//! What the HTTP transport bounds and checks before anything runs (ADR
//! 0033), through the real binary: legacy sessions per caller and in total,
//! sessions that never finish their handshake, the permit pool chosen by
//! the body and not by a header, connections that never authenticate,
//! drain against made-up sessions, the `Host`/`Origin` check ahead of every
//! other layer, origins without a port, `/metrics` behind its scope, and
//! DELETE answered as clients expect.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::http::{HANG, INITIALIZE, base, post, post_with, raw};
use crate::support::{Host, HostOptions, Recorder};

/// The notification that finishes a legacy handshake.
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A legacy `ping`.
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

const FLOOD_TOKEN: &str = "flood-token-0123456789abcdef";
const CALM_TOKEN: &str = "calm-token-0123456789abcdef";
const OPS_TOKEN: &str = "ops-token-0123456789abcdef";

/// `[auth]` with three static-token callers: `flood`, `calm`, and `ops`,
/// whose token grants `scope`; then `extra`.
fn three_callers(scope: &str, extra: &str) -> String {
    let digest = crate::support::infra::sha256_hex;
    format!(
        "[auth]\nresource = \"http://127.0.0.1/mcp\"\n\
         [[auth.tokens]]\nsubject = \"flood\"\nsha256 = \"{}\"\n\
         [[auth.tokens]]\nsubject = \"calm\"\nsha256 = \"{}\"\n\
         [[auth.tokens]]\nsubject = \"ops\"\nsha256 = \"{}\"\nscopes = [\"{scope}\"]\n{extra}",
        digest(FLOOD_TOKEN),
        digest(CALM_TOKEN),
        digest(OPS_TOKEN),
    )
}

/// The `Bearer` header value of `token`.
fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Opens a legacy session as `token`'s caller (or anonymously); its id.
async fn open_session(host: &Host, token: Option<&str>, initialized: bool) -> String {
    let auth = token.map(bearer);
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("authorization", a)])
        .unwrap_or_default();
    let opened = post(host, INITIALIZE, &headers).await;
    assert_eq!(opened.status(), 200);
    let id = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    if initialized {
        let mut in_session = headers.clone();
        in_session.push(("mcp-session-id", &id));
        in_session.push(("mcp-protocol-version", "2025-11-25"));
        assert_eq!(post(host, INITIALIZED, &in_session).await.status(), 202);
    }
    id
}

/// The value of the series `name{…label…}` in a Prometheus text scrape.
fn series(text: &str, name: &str, label: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(name) && l.contains(label))
        .find_map(|l| l.rsplit(' ').next()?.parse().ok())
}

/// A stateless 2026-07-28 request of `method` with `params`, as raw bytes.
pub(crate) fn modern(method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params}).to_string()
}

#[tokio::test]
async fn initialize_past_a_callers_or_the_servers_session_bound_gets_429_until_one_ends() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(CALM_TOKEN)
            .config(three_callers(
                "toolhost:metrics",
                "[http]\nsessions_per_identity = 2\nmax_sessions = 4\n",
            )),
    )
    .await;
    host.tools().await;
    // `calm`'s own client holds one session; `flood` opens two, its bound.
    let first = open_session(&host, Some(FLOOD_TOKEN), true).await;
    open_session(&host, Some(FLOOD_TOKEN), true).await;
    let refused = post(
        &host,
        INITIALIZE,
        &[("authorization", &bearer(FLOOD_TOKEN))],
    )
    .await;
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let answer: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("http.sessions_per_identity") && message.contains("DELETE"),
        "{message}"
    );

    // `calm` opens its second: four in all, the server's bound, which
    // `ops` (no session yet) meets.
    open_session(&host, Some(CALM_TOKEN), true).await;
    let refused = post(&host, INITIALIZE, &[("authorization", &bearer(OPS_TOKEN))]).await;
    assert_eq!(refused.status(), 429);
    let answer: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("http.max_sessions"),
        "{answer}"
    );

    // Ending a session frees its place.
    let ended = raw()
        .delete(host.url.as_deref().unwrap())
        .header("authorization", bearer(FLOOD_TOKEN))
        .header("mcp-session-id", &first)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    open_session(&host, Some(OPS_TOKEN), true).await;

    let text = raw()
        .get(format!("{}/metrics", base(&host)))
        .bearer_auth(OPS_TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let refused = |limit: &str| {
        series(
            &text,
            "toolhost_http_sessions_refused_total",
            &format!("limit=\"{limit}\""),
        )
    };
    assert_eq!(
        (refused("per_identity"), refused("total")),
        (Some(1.0), Some(1.0)),
        "{text}"
    );
}

#[tokio::test]
async fn a_session_that_never_sends_initialized_is_closed_after_its_own_idle_time() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[http]\nuninitialized_session_idle_secs = 1\n"),
    )
    .await;
    let unused = open_session(&host, None, false).await;
    let used = open_session(&host, None, true).await;
    // Longer than http.uninitialized_session_idle_secs, far shorter than
    // http.session_idle_secs: the time is the behaviour under test.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ping = |id: String| {
        let host = &host;
        async move {
            post(
                host,
                PING,
                &[
                    ("mcp-session-id", &id),
                    ("mcp-protocol-version", "2025-11-25"),
                ],
            )
            .await
            .status()
        }
    };
    assert_eq!(ping(unused).await, 404, "the unused session is gone");
    assert_eq!(ping(used).await, 200, "the initialised one serves on");
    let log = host
        .wait_for_stderr("http.uninitialized_session_idle_secs")
        .await;
    assert!(log.contains("closed a legacy session"), "{log}");
}

#[tokio::test]
async fn ending_a_legacy_session_answers_204_as_clients_expect() {
    let host = Host::start(HostOptions::new(&["hello"]).http()).await;
    let id = open_session(&host, None, true).await;
    let ended = raw()
        .delete(host.url.as_deref().unwrap())
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    // The Python SDK logs "Session termination failed" for anything but
    // 200 and 204.
    assert_eq!(ended.status(), 204);
    let after = post(
        &host,
        PING,
        &[
            ("mcp-session-id", &id),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    )
    .await;
    assert_eq!(after.status(), 404, "the session has ended");
    // Ending it again, or a session that never was: not found, as for
    // any other request naming it.
    for unknown in [id.as_str(), "made-up-session-id"] {
        let again = raw()
            .delete(host.url.as_deref().unwrap())
            .header("mcp-session-id", unknown)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 404, "{unknown}");
    }
}

#[tokio::test]
async fn an_mcp_method_header_that_disagrees_with_the_body_is_refused_and_picks_no_permit() {
    let server = Recorder::start().await;
    let host = Host::start(HostOptions::new(&["hello"]).http().config(format!(
        "[http]\nrequests_per_identity = 1\n{}",
        server.allow_block("hello")
    )))
    .await;
    host.tools().await;
    let session = open_session(&host, None, true).await;
    let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    let in_session = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut spoofed = in_session.to_vec();
    spoofed.push(("mcp-method", "subscriptions/listen"));
    let answer = post(&host, list, &spoofed).await;
    assert_eq!(answer.status(), 400, "the header is not the body's method");
    let answer: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
    assert_eq!(answer["error"]["code"], -32020, "{answer}");
    assert_eq!(answer["id"], 3, "{answer}");

    // The caller's one request permit, held by a call in flight: the
    // label buys no stream permit instead.
    let peer = host.client.peer().clone();
    let Value::Object(args) = json!({ "url": format!("{}/hold", server.url) }) else {
        unreachable!()
    };
    let held = tokio::spawn(async move {
        peer.call_tool(rmcp::model::CallToolRequestParams::new("fetch_url").with_arguments(args))
            .await
    });
    server.wait_for_requests(1).await;
    assert_eq!(post(&host, list, &spoofed).await.status(), 429);
    assert_eq!(post(&host, list, &in_session).await.status(), 429);

    server.release();
    tokio::time::timeout(HANG, held)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn during_drain_a_made_up_session_id_gets_503_and_runs_nothing() {
    let server = Recorder::start().await;
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config(server.allow_block("hello")),
    )
    .await;
    host.tools().await;
    // A connection opened before the signal, kept alive: the only way in
    // once the listener has closed.
    let kept = reqwest::Client::builder()
        .timeout(HANG)
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let alive = kept
        .get(format!("{}/healthz", base(&host)))
        .send()
        .await
        .unwrap();
    assert_eq!(alive.text().await.unwrap(), "ok\n");
    // A call in flight keeps the drain open.
    let peer = host.client.peer().clone();
    let Value::Object(args) = json!({ "url": format!("{}/hold", server.url) }) else {
        unreachable!()
    };
    let held = tokio::spawn(async move {
        peer.call_tool(rmcp::model::CallToolRequestParams::new("fetch_url").with_arguments(args))
            .await
    });
    server.wait_for_requests(1).await;
    host.terminate();
    host.wait_for_stderr("shutting down").await;

    let call = modern(
        "tools/call",
        json!({"name": "fetch_url", "arguments": {"url": format!("{}/after", server.url)}}),
    );
    let answer = post_with(
        &kept,
        &host,
        call.clone(),
        &[
            ("mcp-session-id", "made-up-session"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "fetch_url"),
        ],
    )
    .await;
    assert_eq!(answer.status(), 503);
    assert_eq!(answer.headers()["retry-after"], "1");

    server.release();
    tokio::time::timeout(HANG, held)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(host.exit_status().await.success());
    let paths: Vec<String> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(paths, ["/hold"], "the refused call sent nothing");
}

/// Opens `n` connections to `addr`, each sending `request` (if any) and
/// reading the start of its answer; keeps them open.
async fn hold_connections(
    addr: &str,
    n: usize,
    request: Option<&str>,
) -> Vec<tokio::net::TcpStream> {
    let mut held = Vec::new();
    for _ in 0..n {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        if let Some(request) = request {
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut head = [0u8; 12];
            let _ = tokio::time::timeout(HANG, stream.read(&mut head)).await;
        }
        held.push(stream);
    }
    held
}

#[tokio::test]
async fn connections_that_never_authenticate_cannot_lock_out_a_client_with_a_token() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(CALM_TOKEN)
            .config(three_callers(
                "toolhost:metrics",
                "[http]\nmax_connections = 8\nmax_unauthenticated_connections = 4\n\
                 header_read_timeout_secs = 60\n",
            )),
    )
    .await;
    host.tools().await;
    let addr = base(&host).trim_start_matches("http://").to_string();
    let with_token = [("authorization", bearer(OPS_TOKEN))];
    let with_token: Vec<(&str, &str)> = with_token.iter().map(|(k, v)| (*k, v.as_str())).collect();

    // Keep-alive requests without a token, each answered 401.
    let unauthenticated = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    let refused = hold_connections(&addr, 8, Some(&unauthenticated)).await;
    let answer = post(&host, INITIALIZE, &with_token).await;
    assert_eq!(answer.status(), 200, "a client with a token gets in");
    drop(refused);

    // Connections that send nothing at all.
    let idle = hold_connections(&addr, 8, None).await;
    let answer = post(&host, INITIALIZE, &with_token).await;
    assert_eq!(answer.status(), 200, "a client with a token gets in");
    drop(idle);
}

#[tokio::test]
async fn a_rebinding_host_reaches_neither_the_audit_trail_nor_metrics() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[host]\naudit = \"audit.jsonl\"\n"),
    )
    .await;
    host.tools().await;
    let malformed = |tool: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{tool}","arguments":[1,2]}}}}"#
        )
    };
    let rebound = post(
        &host,
        malformed("from_rebinding"),
        &[("host", "attacker.example")],
    )
    .await;
    assert_eq!(rebound.status(), 403);
    let local = post(&host, malformed("from_here"), &[]).await;
    assert_eq!(local.status(), 400);
    let trail =
        std::fs::read_to_string(host.plugins.parent().unwrap().join("audit.jsonl")).unwrap();
    assert!(trail.contains("from_here"), "{trail}");
    assert!(!trail.contains("from_rebinding"), "{trail}");

    let metrics = raw()
        .get(format!("{}/metrics", base(&host)))
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status(), 403, "/metrics checks the Host too");
    let metrics = raw()
        .get(format!("{}/metrics", base(&host)))
        .header("origin", "https://attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status(), 403, "and the Origin");
}

#[tokio::test]
async fn an_allowed_origin_without_a_port_allows_its_schemes_default_port_only() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[http]\nallowed_origins = [\"https://app.example.com\"]\n"),
    )
    .await;
    for (origin, status) in [
        ("https://app.example.com", 200),
        ("https://app.example.com:443", 200),
        ("https://app.example.com:8443", 403),
        ("http://app.example.com", 403),
    ] {
        let answer = post(&host, INITIALIZE, &[("origin", origin)]).await;
        assert_eq!(answer.status(), status, "{origin}");
    }
}

#[tokio::test]
async fn metrics_on_the_mcp_listener_need_the_metrics_scope() {
    for (scope_key, scope) in [
        ("", "toolhost:metrics"),
        ("metrics_scope = \"ops:read\"\n", "ops:read"),
    ] {
        let config = three_callers(scope, "").replace(
            "resource = \"http://127.0.0.1/mcp\"\n",
            &format!("resource = \"http://127.0.0.1/mcp\"\n{scope_key}"),
        );
        let host = Host::start(
            HostOptions::new(&["hello"])
                .http()
                .bearer(CALM_TOKEN)
                .config(config),
        )
        .await;
        host.tools().await;
        let scrape = |token: &'static str| {
            let url = format!("{}/metrics", base(&host));
            async move { raw().get(url).bearer_auth(token).send().await.unwrap() }
        };
        let refused = scrape(CALM_TOKEN).await;
        assert_eq!(refused.status(), 403, "{scope}");
        let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.contains("insufficient_scope")
                && challenge.contains(&format!("scope=\"{scope}\"")),
            "{challenge}"
        );
        let allowed = scrape(OPS_TOKEN).await;
        assert_eq!(allowed.status(), 200, "{scope}");
        assert!(
            allowed
                .text()
                .await
                .unwrap()
                .contains("toolhost_tools_loaded")
        );
    }
}

#[tokio::test]
async fn an_authenticated_callers_get_and_listen_streams_share_one_bound() {
    // A GET stream and a listen stream of the same token caller are both
    // its streams: with `streams_per_identity = 1`, holding one refuses
    // the other (ADR 0064).
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(CALM_TOKEN)
            .config(three_callers("x", "[http]\nstreams_per_identity = 1\n")),
    )
    .await;
    let session = open_session(&host, Some(FLOOD_TOKEN), true).await;
    let get_stream = raw()
        .get(host.url.as_deref().unwrap())
        .header("authorization", bearer(FLOOD_TOKEN))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(get_stream.status(), 200, "the GET stream is open");

    let listen = modern(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let second = post(
        &host,
        listen,
        &[
            ("authorization", &bearer(FLOOD_TOKEN)),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ],
    )
    .await;
    assert_eq!(
        second.status(),
        429,
        "the listen stream meets the bound the GET stream holds"
    );
    let text = second.text().await.unwrap();
    assert!(text.contains("http.streams_per_identity"), "{text}");
    drop(get_stream);
}
