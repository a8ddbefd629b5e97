//! MCP over Streamable HTTP (`serve --http`): the real binary on a loopback
//! port, rmcp's Streamable HTTP client in both eras, raw HTTP for what a
//! hostile client sends.
//!
//! What stdio does works over HTTP (the StatusPro and Katana key paths with
//! confirmation, hot reload, progress; cancellation is in `confirmation`); many clients share
//! one server; bad requests get a clear status and the server keeps
//! serving; per-caller bounds answer 429; SIGTERM lets calls finish and
//! exits 0.

use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use statuspro_sandbox::seed;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Changes, ERAS, Elicitation, Era, Host, HostOptions, Recorder};

/// A bound on anything a test waits for: hitting it is a hang, not slowness.
pub(crate) const HANG: Duration = Duration::from_secs(60);

/// Raw HTTP for the tests that play a hostile or a plain client (a
/// connection of its own for each client).
pub(crate) fn raw() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(HANG)
        .build()
        .expect("a reqwest client")
}

/// A JSON-RPC `initialize`, as raw bytes a client would POST.
pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// POSTs `body` to the host's endpoint with the headers a conforming
/// client sends, plus `extra`, on a connection of its own.
pub(crate) async fn post(
    host: &Host,
    body: impl Into<reqwest::Body>,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    post_with(&raw(), host, body, extra).await
}

/// As [`post`], with `client`.
pub(crate) async fn post_with(
    client: &reqwest::Client,
    host: &Host,
    body: impl Into<reqwest::Body>,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client
        .post(host.url.as_deref().unwrap())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    request.body(body).send().await.expect("the server answers")
}

/// A `fetch_url` call of `server`'s `/hold`, running until the server
/// releases it.
fn held_fetch(
    host: &Host,
    server: &Recorder,
) -> tokio::task::JoinHandle<Result<rmcp::model::CallToolResult, rmcp::ServiceError>> {
    let peer = host.client.peer().clone();
    let Value::Object(args) = json!({ "url": format!("{}/hold", server.url) }) else {
        unreachable!()
    };
    tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("fetch_url").with_arguments(args))
            .await
    })
}

/// The host's base address, `http://127.0.0.1:PORT`.
pub(crate) fn base(host: &Host) -> String {
    host.url
        .as_deref()
        .unwrap()
        .trim_end_matches("/mcp")
        .to_string()
}

#[tokio::test]
async fn statuspro_previews_declines_and_confirms_over_http_in_both_eras() {
    for era in ERAS {
        let statuspro = crate::statuspro::Setup::new()
            .http()
            .era(era)
            .elicitation(Elicitation::Decline)
            .start()
            .await;
        let host = &statuspro.host;
        assert_eq!(host.tools().await.len(), 9, "{era:?}");
        let listed = host.ok("list_orders", json!({"page": 1})).await;
        assert!(listed.to_string().contains("\"id\""), "{era:?}: {listed}");

        let id = seed::order_with_viable_next("st000003").unwrap();
        let change =
            |confirm: bool| json!({"order_id": id, "status_code": "st000003", "confirm": confirm});
        let writes = || {
            statuspro
                .requests()
                .into_iter()
                .filter(|r| r.starts_with("POST"))
                .count()
        };
        host.ok("update_order_status", change(false)).await;
        assert_eq!(writes(), 0, "{era:?}: a preview sends nothing");
        host.call("update_order_status", change(true))
            .await
            .unwrap();
        assert_eq!(
            host.handler.seen.lock().unwrap().elicitations.len(),
            1,
            "{era:?}: asked once"
        );
        assert_eq!(writes(), 0, "{era:?}: a decline sends nothing");

        // Another client of the same server, whose user says yes.
        let yes = host
            .another_client(era, Elicitation::Accept(true), None)
            .await;
        yes.ok("update_order_status", change(true)).await;
        assert_eq!(writes(), 1, "{era:?}: the yes sent the change");
        assert_eq!(
            statuspro.sandbox.order(id).unwrap().status.code.as_deref(),
            Some("st000003"),
            "{era:?}"
        );
    }
}

#[tokio::test]
async fn katana_reads_and_a_confirmed_creation_over_http_in_both_eras() {
    use katana_sandbox::seed;
    for era in ERAS {
        let katana = crate::katana::Setup::new()
            .http()
            .era(era)
            .elicitation(Elicitation::Accept(false))
            .start()
            .await;
        let host = &katana.host;
        assert_eq!(host.tools().await.len(), 7, "{era:?}");
        let found = host
            .ok("search_items", json!({"query": "knf-8in-blk"}))
            .await;
        assert!(
            found.to_string().to_lowercase().contains("knf-8in-blk"),
            "{era:?}: {found}"
        );

        let create = json!({"variant_id": seed::KNIFE_WALNUT, "planned_quantity": 5,
                            "location_id": seed::LOCATION_MAIN, "order_no": "MO-25-010",
                            "production_deadline_date": "2026-03-20T17:00:00.000Z", "confirm": true});
        host.call("create_manufacturing_order", create.clone())
            .await
            .unwrap();
        assert!(katana.writes().is_empty(), "{era:?}: a no sends nothing");
        let yes = host
            .another_client(era, Elicitation::Accept(true), None)
            .await;
        yes.ok("create_manufacturing_order", create).await;
        assert_eq!(katana.writes(), ["POST /manufacturing_orders"], "{era:?}");
    }
}

#[tokio::test]
async fn a_client_that_cannot_elicit_gets_the_operators_policy_over_http() {
    let id = seed::order_with_viable_next("st000003").unwrap();
    let change = json!({"order_id": id, "status_code": "st000003", "confirm": true});
    for (policy, writes) in [
        ("", 0),
        ("\n[host]\nconfirmation = \"trust-confirm-flag\"\n", 1),
    ] {
        let statuspro = crate::statuspro::Setup::new()
            .http()
            .config(policy)
            .start()
            .await;
        statuspro
            .host
            .call("update_order_status", change.clone())
            .await
            .unwrap();
        let posts = statuspro
            .requests()
            .iter()
            .filter(|r| r.starts_with("POST"))
            .count();
        assert_eq!(posts, writes, "policy {policy:?}");
    }
}

#[tokio::test]
async fn a_hot_reload_reaches_every_http_client_in_both_eras() {
    let host = Host::start(HostOptions::new(&["hello"]).http()).await;
    let modern = host
        .another_client(Era::Modern, Elicitation::Unsupported, None)
        .await;
    let mut legacy_changes = Changes::open(&host, Era::Legacy).await;
    let mut modern_changes = Changes::open(&modern, Era::Modern).await;

    let staged = host.plugins.join(".echo.wasm.partial");
    std::fs::write(&staged, crate::support::component("echo")).unwrap();
    std::fs::rename(&staged, host.plugins.join("echo.wasm")).unwrap();
    legacy_changes.next(&host).await;
    modern_changes.next(&modern).await;
    for client in [&host, &modern] {
        let names: Vec<String> = client
            .tools()
            .await
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert!(names.contains(&"echo".to_string()), "{names:?}");
    }
}

#[tokio::test]
async fn progress_reaches_http_clients_in_both_eras() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["misbehaving"]).http().era(era)).await;
        host.ok("report_progress", json!({})).await;
        host.wait_for_seen(|s| s.progress.len() == 3).await;
        let steps: Vec<f64> = host
            .handler
            .seen
            .lock()
            .unwrap()
            .progress
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(steps, [1.0, 2.0, 3.0], "{era:?}");
    }
}

#[tokio::test]
async fn health_says_alive_and_readiness_says_whether_tools_are_served() {
    let host = Host::start(HostOptions::new(&["hello"]).http()).await;
    host.tools().await;
    let alive = raw()
        .get(format!("{}/healthz", base(&host)))
        .send()
        .await
        .unwrap();
    assert_eq!(alive.status(), 200);
    let ready = raw()
        .get(format!("{}/readyz", base(&host)))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let body: Value = serde_json::from_str(&ready.text().await.unwrap()).unwrap();
    assert_eq!(
        (body["ready"].as_bool(), body["tools"].as_u64()),
        (Some(true), Some(2))
    );

    let empty = Host::start(HostOptions::new(&[]).http()).await;
    empty.tools().await;
    let ready = raw()
        .get(format!("{}/readyz", base(&empty)))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    assert_eq!(ready.headers()["retry-after"], "1");
    let body: Value = serde_json::from_str(&ready.text().await.unwrap()).unwrap();
    assert_eq!(body["ready"], false);
    assert!(
        body["reason"].as_str().unwrap().contains("no tools"),
        "{body}"
    );

    // A file no block names, under `unmatched_files = "skip"`: not loaded,
    // and the reason says which setting to look at.
    let skipped = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[host]\nunmatched_files = \"skip\"\n"),
    )
    .await;
    skipped.tools().await;
    let ready = raw()
        .get(format!("{}/readyz", base(&skipped)))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    let body: Value = serde_json::from_str(&ready.text().await.unwrap()).unwrap();
    assert!(
        body["reason"]
            .as_str()
            .unwrap()
            .contains("host.unmatched_files = \"skip\""),
        "{body}"
    );
    let alive = raw()
        .get(format!("{}/healthz", base(&empty)))
        .send()
        .await
        .unwrap();
    assert_eq!(alive.status(), 200);
}

#[tokio::test]
async fn hostile_requests_get_a_clear_status_and_the_server_keeps_serving() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[host]\nmax_message_bytes = 4096\n[http]\nallowed_origins = [\"https://app.example.com\"]\n"),
    )
    .await;
    let url = host.url.clone().unwrap();

    let oversized = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    assert_eq!(
        post(&host, oversized, &[]).await.status(),
        413,
        "an oversized body"
    );

    // Malformed JSON-RPC gets the same JSON-RPC errors as on stdio.
    for (body, code) in [
        ("{\"jsonrpc\": \"2.0\", \"id\": 1, ", -32700),
        ("[1, 2]", -32600),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":[1,2]}}"#,
            -32602,
        ),
    ] {
        let answer = post(&host, body, &[]).await;
        assert_eq!(answer.status(), 400, "{body}");
        let answer: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
    }

    let wrong_type = raw()
        .post(&url)
        .header("content-type", "text/plain")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_type.status(), 415, "wrong Content-Type");

    let wrong_accept = raw()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "text/html")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_accept.status(), 406, "wrong Accept");

    let foreign = post(&host, INITIALIZE, &[("origin", "https://evil.example")]).await;
    assert_eq!(foreign.status(), 403, "an Origin not allowed");
    let allowed = post(&host, INITIALIZE, &[("origin", "https://app.example.com")]).await;
    assert_eq!(allowed.status(), 200, "an allowed Origin");

    let rebound = post(&host, INITIALIZE, &[("host", "attacker.example")]).await;
    assert_eq!(
        rebound.status(),
        403,
        "a Host that is not this server (DNS rebinding)"
    );

    let greeting = host.ok("greet", json!({"name": "Ada"})).await;
    assert_eq!(greeting["message"], "Hello, Ada!");
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[http]\nheader_read_timeout_secs = 0.5\n"),
    )
    .await;
    let addr = base(&host).trim_start_matches("http://").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(HANG, slow.read_to_end(&mut answer))
        .await
        .expect("the server closes a slow client's connection")
        .ok();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    assert_eq!(
        host.ok("greet", json!({"name": "Ada"})).await["message"],
        "Hello, Ada!"
    );
}

#[tokio::test]
async fn a_body_that_cannot_be_read_is_a_400_that_says_so_not_a_413() {
    let host = Host::start(HostOptions::new(&["hello"]).http()).await;
    let addr = base(&host).trim_start_matches("http://").to_string();
    let mut client = tokio::net::TcpStream::connect(&addr).await.unwrap();
    client
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n\
                 zz\r\n{{}}\r\n0\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(HANG, client.read_to_end(&mut answer))
        .await
        .expect("answered, then closed")
        .ok();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("could not be read"), "{answer}");
    assert_eq!(
        host.ok("greet", json!({"name": "Ada"})).await["message"],
        "Hello, Ada!"
    );
}

#[tokio::test]
async fn a_caller_over_its_request_bound_gets_429_until_one_finishes() {
    let server = Recorder::start().await;
    let host = Host::start(HostOptions::new(&["hello"]).http().config(format!(
        "[http]\nrequests_per_identity = 2\n{}",
        server.allow_block("hello")
    )))
    .await;
    host.tools().await;
    let held: Vec<_> = (0..2).map(|_| held_fetch(&host, &server)).collect();
    server.wait_for_requests(2).await;

    let refused = post(&host, INITIALIZE, &[]).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("http.requests_per_identity")
    );

    server.release();
    for call in held {
        let result = tokio::time::timeout(HANG, call)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(result.structured_content.unwrap()["status"], 200);
    }
    assert_eq!(
        post(&host, INITIALIZE, &[]).await.status(),
        200,
        "the bound frees up"
    );
}

#[tokio::test]
async fn sigterm_lets_a_call_in_flight_finish_then_exits_0() {
    let server = Recorder::start().await;
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config(server.allow_block("hello")),
    )
    .await;
    let held = held_fetch(&host, &server);
    server.wait_for_requests(1).await;
    host.terminate();
    host.wait_for_stderr("shutting down").await;
    let addr = base(&host).trim_start_matches("http://").to_string();
    assert!(
        tokio::net::TcpStream::connect(&addr).await.is_err(),
        "no new connections once shutting down"
    );
    server.release();
    let result = tokio::time::timeout(HANG, held)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        result.structured_content.unwrap()["status"],
        200,
        "the call finished"
    );
    assert!(host.exit_status().await.success());
}

#[tokio::test]
async fn a_call_that_outlasts_the_shutdown_grace_is_ended_and_the_exit_is_clean() {
    let server = Recorder::start().await;
    let host = Host::start(HostOptions::new(&["hello"]).http().config(format!(
        "[http]\nshutdown_grace_secs = 0.2\n{}",
        server.allow_block("hello")
    )))
    .await;
    let _held = held_fetch(&host, &server);
    server.wait_for_requests(1).await;
    host.terminate();
    assert!(host.exit_status().await.success());
    assert!(
        host.stderr
            .lock()
            .unwrap()
            .contains("still running after http.shutdown_grace_secs")
    );
}

#[tokio::test]
async fn a_non_loopback_address_without_auth_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--http", "0.0.0.0:0", "--plugins"])
        .arg(dir.path())
        .env("XDG_CACHE_HOME", crate::support::test_cache_home())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("without authentication") && stderr.contains("[auth]"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// `[auth]` with two static-token callers, `flood` and `calm` (whose token
/// may read metrics).
fn two_callers(extra: &str) -> String {
    let digest = crate::support::infra::sha256_hex;
    format!(
        "[auth]\nresource = \"http://127.0.0.1/mcp\"\n\
         [[auth.tokens]]\nsubject = \"flood\"\nsha256 = \"{}\"\n\
         [[auth.tokens]]\nsubject = \"calm\"\nsha256 = \"{}\"\n\
         scopes = [\"toolhost:metrics\"]\n{extra}",
        digest(FLOOD_TOKEN),
        digest(CALM_TOKEN)
    )
}

const FLOOD_TOKEN: &str = "flood-token-0123456789abcdef";
const CALM_TOKEN: &str = "calm-token-0123456789abcdef";

#[tokio::test]
async fn a_thousand_streams_from_one_caller_do_not_starve_another() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(CALM_TOKEN)
            // The flood's connections authenticate, but 1,000 opened at
            // once are not all authenticated yet when the next arrives:
            // room for all of them, so this test sees the per-caller bound
            // alone (http_bounds.rs tests the unauthenticated one).
            .config(two_callers(
                "[http]\nrequests_per_identity = 16\nbody_read_timeout_secs = 10\n\
                 max_unauthenticated_connections = 2048\n",
            )),
    )
    .await;
    host.tools().await;
    let addr = base(&host).trim_start_matches("http://").to_string();

    // 1,000 connections from `flood`, each a request whose body never
    // arrives: a request held open as long as the client likes.
    let mut held = Vec::new();
    for _ in 0..1000 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {FLOOD_TOKEN}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: 100\r\n\r\n{{"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        held.push(stream);
    }
    // Meanwhile `calm` lists and calls as usual.
    assert_eq!(host.tools().await.len(), 2);
    let greeting = host.ok("greet", json!({"name": "Ada"})).await;
    assert_eq!(greeting["message"], "Hello, Ada!");

    // Every flood connection was answered: 429 at once past the bound, or
    // 408 when the body it never sent timed out.
    let (mut too_many, mut timed_out) = (0, 0);
    for stream in &mut held {
        let mut first = [0u8; 12];
        let n = tokio::time::timeout(HANG, stream.read(&mut first))
            .await
            .expect("every flood request is answered")
            .unwrap();
        match &first[..n] {
            b"HTTP/1.1 429" => too_many += 1,
            b"HTTP/1.1 408" => timed_out += 1,
            other => panic!("{:?}", String::from_utf8_lossy(other)),
        }
    }
    assert_eq!(too_many + timed_out, 1000);
    assert!(
        timed_out <= 16,
        "{timed_out} held, over http.requests_per_identity"
    );
    drop(held);
    assert_eq!(
        host.ok("greet", json!({"name": "Bo"})).await["message"],
        "Hello, Bo!"
    );
}

#[tokio::test]
async fn a_body_that_never_arrives_is_answered_408() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[http]\nbody_read_timeout_secs = 0.5\n"),
    )
    .await;
    let addr = base(&host).trim_start_matches("http://").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{"
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 256];
    let n = tokio::time::timeout(HANG, slow.read(&mut answer))
        .await
        .expect("answered in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert_eq!(
        host.ok("greet", json!({"name": "Ada"})).await["message"],
        "Hello, Ada!"
    );
}

#[tokio::test]
async fn a_legacy_session_belongs_to_the_caller_that_opened_it() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(CALM_TOKEN)
            .config(two_callers("")),
    )
    .await;
    // `flood` opens a session with a raw initialize; `calm` tries to use it.
    let opened = post(
        &host,
        INITIALIZE,
        &[("authorization", &format!("Bearer {FLOOD_TOKEN}"))],
    )
    .await;
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let stolen = post(
        &host,
        ping,
        &[
            ("authorization", &format!("Bearer {CALM_TOKEN}")),
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    )
    .await;
    assert_eq!(
        stolen.status(),
        404,
        "another caller's session does not exist for it"
    );
    let own = post(
        &host,
        ping,
        &[
            ("authorization", &format!("Bearer {FLOOD_TOKEN}")),
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    )
    .await;
    assert_ne!(own.status(), 404, "its owner still reaches it");
}

#[tokio::test]
async fn metrics_are_served_on_the_http_listener_with_sessions_and_streams() {
    let host = Host::start(HostOptions::new(&["hello"]).http()).await;
    host.ok("greet", json!({"name": "Ada"})).await;
    let text = raw()
        .get(format!("{}/metrics", base(&host)))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("toolhost_calls_total{") && text.contains("tool=\"greet\""),
        "{text}"
    );
}

#[tokio::test]
async fn an_idle_legacy_session_expires() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .config("[http]\nsession_idle_secs = 1\n"),
    )
    .await;
    let opened = post(&host, INITIALIZE, &[]).await;
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    // No traffic for longer than http.session_idle_secs: the time is the
    // behaviour under test.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let late = post(
        &host,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    )
    .await;
    assert_eq!(late.status(), 404, "the idle session is gone");
}

/// The value of the series `name{labels…}` in a Prometheus text scrape.
fn series(text: &str, name: &str, label: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(name) && l.contains(label))
        .find_map(|l| l.rsplit(' ').next()?.parse().ok())
}

#[tokio::test]
async fn sessions_streams_and_auth_failures_are_counted() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .bearer(CALM_TOKEN)
            .config(two_callers("")),
    )
    .await;
    host.tools().await;
    let refused = post(&host, INITIALIZE, &[]).await;
    assert_eq!(refused.status(), 401);

    // The scrape needs a token too; the gauges are refreshed every few
    // seconds, so read until they show the client's session and stream.
    let scrape = || async {
        raw()
            .get(format!("{}/metrics", base(&host)))
            .bearer_auth(CALM_TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let seen = async {
        loop {
            let text = scrape().await;
            if series(&text, "toolhost_http_sessions_open", "").unwrap_or(0.0) >= 1.0
                && series(&text, "toolhost_http_streams_open", "").unwrap_or(0.0) >= 1.0
            {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let text = tokio::time::timeout(HANG, seen)
        .await
        .expect("the gauges show the open session and stream");
    assert_eq!(
        series(
            &text,
            "toolhost_auth_failures_total",
            "reason=\"missing_token\""
        ),
        Some(1.0),
        "{text}"
    );
    let unauthenticated = raw()
        .get(format!("{}/metrics", base(&host)))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401, "metrics sit behind [auth]");
    let unscoped = raw()
        .get(format!("{}/metrics", base(&host)))
        .bearer_auth(FLOOD_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(unscoped.status(), 403, "and the metrics scope");
}

#[tokio::test]
async fn a_listen_stream_counts_as_a_stream_not_as_a_request_in_flight() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .http()
            .era(Era::Modern)
            .config("[http]\nrequests_per_identity = 1\nstreams_per_identity = 1\n"),
    )
    .await;
    let _listening = Changes::open(&host, Era::Modern).await;
    // The open stream leaves the one request permit free for calls…
    assert_eq!(
        host.ok("greet", json!({"name": "Ada"})).await["message"],
        "Hello, Ada!"
    );
    // …and takes the one stream permit: a second listen body (the body
    // says what a request is, not a header) meets the bound.
    let listen = crate::http_bounds::modern(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let second = post(
        &host,
        listen,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ],
    )
    .await;
    let status = second.status();
    let text = second.text().await.unwrap();
    assert!(
        status == 429 && text.contains("http.streams_per_identity"),
        "a second listen stream meets the stream bound (the call before it holds nothing once answered): {status} {text}"
    );
}

#[tokio::test]
async fn a_caller_at_one_request_at_a_time_never_meets_its_own_answered_request() {
    // The permit of a request is given back before its answer is sent: a
    // client that sends its next request the moment it reads an answer is
    // never refused for the one it just had answered, in either era.
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["hello"])
                .http()
                .era(era)
                .config("[http]\nrequests_per_identity = 1\n"),
        )
        .await;
        for i in 0..150 {
            let name = format!("caller {i}");
            let answer = host.call("greet", json!({ "name": name })).await;
            let result = answer.unwrap_or_else(|e| {
                panic!("{era:?} call {i} after an answered one is served: {e:?}")
            });
            assert_eq!(
                result.structured_content.unwrap()["message"],
                format!("Hello, {name}!")
            );
        }
    }
}

#[tokio::test]
async fn each_connection_sends_its_answer_without_waiting_for_the_clients_ack() {
    // An answer leaves in several small writes (the SSE stream's priming
    // event, then the result); with Nagle's algorithm on, the result waits
    // for the client's ACK of the first write, which a client blocked
    // reading delays by up to 40 ms. The server's side of the connection is
    // looked at directly: a copy of its socket, taken from the process.
    let host = Host::start(HostOptions::new(&["hello"]).http()).await;
    let addr = base(&host).trim_start_matches("http://").to_string();
    let mut client = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    client.write_all(request.as_bytes()).await.unwrap();
    let mut answer = [0u8; 64];
    let read = tokio::time::timeout(HANG, client.read(&mut answer))
        .await
        .expect("the server answers")
        .unwrap();
    assert!(answer[..read].starts_with(b"HTTP/1.1 200"), "{answer:?}");

    let server_side = crate::support::sockets::peer_socket_of(
        host.pid,
        client.peer_addr().unwrap(),
        client.local_addr().unwrap(),
    );
    assert!(
        server_side.nodelay().unwrap(),
        "the server's end of the connection has TCP_NODELAY set"
    );
}
