//! Standard `wasi:http` outgoing requests (the `wasi_fetch` component, built
//! with the `wasip2` crate's bindings, as JavaScript's `fetch` and other
//! languages' ordinary clients reach the network) go through the same
//! policy path as `toolhost:plugin/http`: the allow-list, the operator's
//! credentials set by the host, the read-only rule and the confirmation
//! gate, the address check, and the audit record (ADR 0036).

use serde_json::json;

use crate::support::audit::{records, trail_of, with_trail};
use crate::support::{Elicitation, Host, HostOptions, Recorder};

/// The `[plugins.wasi_fetch]` blocks: `server` allowed, with a credential
/// for it from the host's environment; `localhost` on its port allowed by
/// the allow-list but not to a non-public address (no `allow_private`).
fn config(server: &Recorder) -> String {
    format!(
        "{}\n[[plugins.wasi_fetch.allow]]\nhost = \"localhost\"\nport = {}\n\n[[plugins.wasi_fetch.credentials]]\nhost = \"127.0.0.1\"\nport = {}\nheader = \"Authorization\"\nvalue = \"Bearer ${{WASI_FETCH_KEY}}\"\n",
        server.allow_block("wasi_fetch"),
        server.port,
        server.port
    )
}

async fn host(server: &Recorder, elicitation: Elicitation) -> Host {
    Host::start(
        HostOptions::new(&["wasi_fetch"])
            .config(with_trail(&config(server)))
            .env("WASI_FETCH_KEY", "held-by-the-host")
            .elicitation(elicitation),
    )
    .await
}

#[tokio::test]
async fn a_wasi_http_get_reaches_an_allowed_server_with_the_hosts_credential_and_is_audited() {
    let server = Recorder::start().await;
    let host = host(&server, Elicitation::Unsupported).await;
    let out = host
        .ok(
            "wasi_get",
            json!({"url": format!("{}/items?q=1", server.url), "header": ["x-trace", "abc"]}),
        )
        .await;
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(out["body"], "recorded", "{out}");
    let received = server.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0].path, "/items");
    assert_eq!(
        received[0].authorization.as_deref(),
        Some("Bearer held-by-the-host"),
        "the host sets the operator's credential"
    );
    assert_eq!(received[0].header("x-trace"), Some("abc"));

    // The guest cannot put its own value in the credential's place.
    host.ok(
        "wasi_get",
        json!({"url": format!("{}/again", server.url), "header": ["authorization", "Bearer guest"]}),
    )
    .await;
    assert_eq!(
        server.received()[1].authorization.as_deref(),
        Some("Bearer held-by-the-host")
    );

    let records = records(&trail_of(&host));
    let call = records
        .iter()
        .find(|r| r["record"] == "call" && r["tool"] == "wasi_get")
        .expect("the call is recorded");
    let upstream = call["upstream"].as_array().unwrap();
    assert_eq!(upstream.len(), 1, "{call}");
    assert_eq!(upstream[0]["method"], "GET");
    assert_eq!(upstream[0]["status"], 200);
}

#[tokio::test]
async fn a_wasi_http_request_to_a_destination_no_rule_allows_is_denied_and_nothing_leaves() {
    let server = Recorder::start().await;
    let other = Recorder::start().await;
    let host = host(&server, Elicitation::Unsupported).await;
    let out = host
        .ok("wasi_get", json!({"url": format!("{}/secret", other.url)}))
        .await;
    assert_eq!(out["error"], "ErrorCode::HttpRequestDenied", "{out}");
    assert!(other.received().is_empty());
    // A name the allow-list allows, resolving to a loopback address, is
    // refused by the address check (no `allow_private`).
    let out = host
        .ok(
            "wasi_get",
            json!({"url": format!("http://localhost:{}/x", server.port)}),
        )
        .await;
    assert_eq!(out["error"], "ErrorCode::HttpRequestDenied", "{out}");
    assert!(server.received().is_empty());
    host.wait_for_stderr("resolves to a non-public address")
        .await;
}

#[tokio::test]
async fn a_read_only_tool_cannot_post_through_wasi_http() {
    let server = Recorder::start().await;
    let host = host(&server, Elicitation::Accept(true)).await;
    let issue = host
        .tool_error(
            "wasi_readonly_post",
            json!({"url": format!("{}/hook", server.url)}),
        )
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    assert!(
        issue["message"].as_str().unwrap().contains("read-only"),
        "{issue}"
    );
    assert_eq!(server.posts(), 0);
}

#[tokio::test]
async fn a_wasi_http_post_needs_the_users_confirmation_in_the_call() {
    let server = Recorder::start().await;
    let host = host(&server, Elicitation::Accept(true)).await;
    let url = format!("{}/hook", server.url);
    let issue = host
        .tool_error("wasi_post", json!({"url": url, "confirm": false}))
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("without the user's confirmation"),
        "{issue}"
    );
    assert_eq!(server.posts(), 0, "an unconfirmed POST never leaves");

    let out = host
        .ok("wasi_post", json!({"url": url, "confirm": true}))
        .await;
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(server.posts(), 1);
    let post = server
        .received()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(
        post.authorization.as_deref(),
        Some("Bearer held-by-the-host")
    );
    assert_eq!(post.header("content-length"), Some("7"));
}

#[tokio::test]
async fn no_method_but_the_usual_seven_leaves_through_wasi_http_even_with_the_users_yes() {
    // TRACE echoes the request back, the operator's credential included.
    let server = Recorder::start().await;
    let host = host(&server, Elicitation::Accept(true)).await;
    for method in ["TRACE", "PROPFIND", "TRACK"] {
        let out = host
            .ok(
                "wasi_method",
                json!({"url": format!("{}/hook", server.url), "method": method}),
            )
            .await;
        let error = out["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(&format!("the host sends no {method} requests")),
            "{method}: {out}"
        );
    }
    assert!(server.received().is_empty(), "{:?}", server.received());
}

#[tokio::test]
async fn a_calls_unfinished_wasi_http_bodies_hold_no_more_of_the_host_than_its_memory_limit() {
    // Two requests, 6 MiB written into each, neither finished: together
    // past the call's 8 MiB, so the host ends the second rather than hold
    // it (each alone is within the limit).
    let server = Recorder::start().await;
    let config = format!(
        "{}\n[plugins.wasi_fetch.limits]\nmemory_mib = 8\ncall_timeout_secs = 20\n",
        server.allow_block("wasi_fetch")
    );
    let host = Host::start(HostOptions::new(&["wasi_fetch"]).config(config)).await;
    let out = host
        .ok(
            "wasi_unfinished_bodies",
            json!({"url": format!("{}/hook", server.url), "requests": 2, "mib_each": 6}),
        )
        .await;
    let errors = out["errors"].as_array().unwrap();
    assert!(
        errors[0].is_null(),
        "the first still waits for its end: {out}"
    );
    assert!(
        errors[1]
            .as_str()
            .is_some_and(|e| e.contains("HttpRequestBodySize")),
        "{out}"
    );
    assert!(server.received().is_empty(), "nothing was sent");
}
