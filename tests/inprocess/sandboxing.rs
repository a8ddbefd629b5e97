//! Containment: a hostile or buggy component cannot hurt the host, other
//! tools, or anything the operator did not allow. Each test checks the right
//! error, within the deadline, and that other tools still answer. (The
//! process's memory and its environment are the process tier's.)

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Elicitation, Host, HostOptions, Recorder};

/// A host serving the misbehaving component and `hello`, with `config`.
async fn host(config: &str) -> Host {
    Host::start(HostOptions::new(&["misbehaving", "hello"]).config(config)).await
}

async fn other_tools_answer(host: &Host) {
    assert_eq!(
        host.ok("greet", json!({"name": "ok"})).await["message"],
        "Hello, ok!"
    );
    host.tool_error("fail", json!({})).await;
}

#[tokio::test]
async fn an_infinite_loop_ends_at_the_deadline_while_other_tools_answer() {
    let host = host("[plugins.misbehaving.limits]\ncall_timeout_secs = 2\n").await;
    let started = Instant::now();
    let spin = {
        let peer = host.client.peer().clone();
        tokio::spawn(async move {
            peer.call_tool(rmcp::model::CallToolRequestParams::new("spin"))
                .await
        })
    };
    // Other calls are served while the loop runs (the guest yields every tick).
    for i in 0..10 {
        assert_eq!(
            host.ok("greet", json!({"name": i.to_string()})).await["message"],
            format!("Hello, {i}!")
        );
    }
    let result = spin.await.unwrap().expect("answered");
    let elapsed = started.elapsed();
    assert_eq!(result.is_error, Some(true));
    let issue = &result.structured_content.unwrap()["issues"][0];
    assert_eq!(issue["code"], "INTERNAL");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("limits.call_timeout_secs"),
        "{issue}"
    );
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(10),
        "{elapsed:?}"
    );
    other_tools_answer(&host).await;
}

#[tokio::test]
async fn unbounded_recursion_is_a_tool_error() {
    let host = host("").await;
    let issue = host.tool_error("recurse", json!({})).await;
    assert_eq!(issue["code"], "INTERNAL");
    let message = issue["message"].as_str().unwrap();
    assert!(message.contains("stack"), "{issue}");
    other_tools_answer(&host).await;
}

#[tokio::test]
async fn a_100_mb_output_is_refused_by_a_named_limit() {
    let host = host("").await;
    // 100 MB cannot even be built inside the default 64 MiB instance.
    let issue = host
        .tool_error("big_output", json!({"megabytes": 100}))
        .await;
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("limits.memory_mib"),
        "{issue}"
    );
    // An output that fits in memory but not in the output limit.
    let issue = host.tool_error("big_output", json!({"megabytes": 2})).await;
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("limits.output_bytes"),
        "{issue}"
    );
    other_tools_answer(&host).await;
}

#[tokio::test]
async fn ten_thousand_confirmations_stop_at_the_limit() {
    let host =
        Host::start(HostOptions::new(&["misbehaving"]).elicitation(Elicitation::Accept(true)))
            .await;
    let issue = host.tool_error("confirm_storm", json!({})).await;
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("limits.confirmations_per_call"),
        "{issue}"
    );
    assert_eq!(
        host.handler.seen.lock().unwrap().elicitations.len(),
        2,
        "the user was asked twice, not 10,000 times"
    );
}

#[tokio::test]
async fn requests_per_call_are_limited() {
    let server = Recorder::start().await;
    let config = format!(
        "{}\n[plugins.hello.limits]\nhttp_requests_per_call = 1\n",
        server.allow_block("hello")
    );
    let host = Host::start(HostOptions::new(&["hello"]).config(config)).await;
    // A redirect is a second request.
    let url = format!("{}/redirect?to={}/x", server.url, server.url);
    let issue = host.tool_error("fetch_url", json!({"url": url})).await;
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("limit of 1 HTTP requests per call"),
        "{issue}"
    );
}

#[tokio::test]
async fn loopback_metadata_and_unlisted_hosts_are_refused() {
    let server = Recorder::start().await;
    // The plugin may reach *.example.com only.
    let host = host("[[plugins.misbehaving.allow]]\nhost = \"*.example.com\"\n").await;
    for url in [
        format!("{}/x", server.url),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://[::1]:80/".to_string(),
        "http://10.0.0.1/".to_string(),
    ] {
        let issue = host.tool_error("get", json!({"url": url})).await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{url}: {issue}");
    }
    assert!(server.received().is_empty());
    other_tools_answer(&host).await;
}

#[tokio::test]
async fn a_name_that_resolves_to_a_private_address_is_refused() {
    let server = Recorder::start().await;
    let url = format!("http://localhost:{}/x", server.port);
    let denied = host(&format!(
        "[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {}\n",
        server.port
    ))
    .await;
    let issue = denied.tool_error("get", json!({"url": url})).await;
    assert_eq!(issue["code"], "PERMISSION_DENIED");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("non-public address"),
        "{issue}"
    );
    assert!(server.received().is_empty());

    // The operator can allow it explicitly.
    let allowed = host(&format!(
        "[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {}\nallow_private = true\n",
        server.port
    ))
    .await;
    assert_eq!(allowed.ok("get", json!({"url": url})).await["status"], 200);
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn one_plugins_allow_private_does_not_extend_to_another() {
    let server = Recorder::start().await;
    let url = format!("http://localhost:{}/x", server.port);
    // Both may reach `localhost`; only `hello` may reach it on a private
    // address.
    let host = host(&format!(
        "[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {port}\n\n\
         [[plugins.hello.allow]]\nhost = \"localhost\"\nport = {port}\nallow_private = true\n",
        port = server.port
    ))
    .await;
    let issue = host.tool_error("get", json!({"url": url})).await;
    assert_eq!(issue["code"], "PERMISSION_DENIED");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("non-public address"),
        "{issue}"
    );
    assert!(server.received().is_empty());

    // `hello`, whose rule allows it, gets through on the same name.
    let fetched = host.ok("fetch_url", json!({"url": url})).await;
    assert_eq!(fetched["status"], 200, "{fetched}");
    assert_eq!(server.received().len(), 1);

    // And misbehaving is still refused afterwards (no shared connection
    // or cached answer lends it the address).
    host.tool_error("get", json!({"url": url})).await;
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_redirect_to_a_forbidden_host_is_not_followed() {
    let allowed = Recorder::start().await;
    let forbidden = Recorder::start().await;
    let host = host(&allowed.allow_block("misbehaving")).await;
    let url = format!("{}/redirect?to={}/secret", allowed.url, forbidden.url);
    let issue = host.tool_error("get", json!({"url": url})).await;
    assert_eq!(issue["code"], "PERMISSION_DENIED");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("redirect refused"),
        "{issue}"
    );
    assert!(forbidden.received().is_empty());
    // A redirect within the allowed host is followed.
    let url = format!("{}/redirect?to=/fine", allowed.url);
    assert_eq!(host.ok("get", json!({"url": url})).await["status"], 200);
    assert_eq!(allowed.received().last().unwrap().path, "/fine");
}

#[tokio::test]
async fn credentials_go_only_to_their_host_across_redirects() {
    let allowed = Recorder::start().await;
    let other = Recorder::start().await;
    let config = format!(
        "{}\n[[plugins.hello.allow]]\nhost = \"localhost\"\nport = {}\nallow_private = true\n\
         [[plugins.hello.credentials]]\nhost = \"127.0.0.1\"\nport = {}\nheader = \"Authorization\"\nvalue = \"Bearer only-for-127\"\n",
        allowed.allow_block("hello"),
        other.port,
        allowed.port
    );
    let host = Host::start(HostOptions::new(&["hello"]).config(config)).await;
    let url = format!(
        "{}/redirect?to=http://localhost:{}/landing",
        allowed.url, other.port
    );
    assert_eq!(
        host.ok("fetch_url", json!({"url": url})).await["status"],
        200
    );
    assert_eq!(
        allowed.received()[0].authorization.as_deref(),
        Some("Bearer only-for-127")
    );
    let landing = other.received().pop().unwrap();
    assert_eq!(landing.path, "/landing");
    assert_eq!(
        landing.authorization, None,
        "the credential must not follow the redirect"
    );
}

#[tokio::test]
async fn a_tool_that_never_returns_does_not_block_concurrent_calls() {
    let host = host("[plugins.misbehaving.limits]\ncall_timeout_secs = 30\n").await;
    let peer = host.client.peer().clone();
    let spins: Vec<_> = (0..3)
        .map(|_| {
            let peer = peer.clone();
            tokio::spawn(async move {
                peer.call_tool(rmcp::model::CallToolRequestParams::new("spin"))
                    .await
            })
        })
        .collect();
    let greets: Vec<_> = (0..20)
        .map(|i| {
            let peer = peer.clone();
            tokio::spawn(async move {
                let args = json!({"name": i.to_string()}).as_object().cloned().unwrap();
                peer.call_tool(
                    rmcp::model::CallToolRequestParams::new("greet").with_arguments(args),
                )
                .await
            })
        })
        .collect();
    for g in greets {
        assert_ne!(g.await.unwrap().unwrap().is_error, Some(true));
    }
    for s in spins {
        s.abort();
    }
}
