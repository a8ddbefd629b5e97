//! Network policy through the Gateway: which port, path and address a
//! rule covers, what a request may carry (credentials, method overrides),
//! and that every redirect hop is held to the same rules. Upstreams are
//! loopback [`Recorder`]s; each test checks what reached them, not only the
//! error the guest saw.

use serde_json::{Value, json};

use crate::support::{Host, HostOptions, Recorder};

/// A host serving the misbehaving component with `config`.
async fn misbehaving(config: &str) -> Host {
    Host::start(HostOptions::new(&["misbehaving"]).config(config)).await
}

/// An issue's message.
fn message(issue: &Value) -> &str {
    issue["message"].as_str().expect("a message")
}

/// Expects `url` to be refused by policy, and returns the message.
async fn denied(host: &Host, url: &str) -> String {
    let issue = host.tool_error("get", json!({ "url": url })).await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{url}: {issue}");
    message(&issue).to_string()
}

#[tokio::test]
async fn the_guests_own_credentials_do_not_follow_a_redirect_to_another_origin() {
    let first = Recorder::start().await;
    let second = Recorder::start().await;
    let config = format!(
        "{}{}[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {}\nallow_private = true\n",
        first.allow_block("misbehaving"),
        second.allow_block("misbehaving"),
        first.port
    );
    let host = misbehaving(&config).await;
    let headers = json!({
        "Authorization": "Bearer guest-token",
        "Cookie": "session=guest",
        "X-Trace": "kept",
    });
    let get = |url: String| {
        let host = &host;
        let headers = headers.clone();
        async move {
            host.ok(
                "get_with_headers",
                json!({ "url": url, "headers": headers }),
            )
            .await
        }
    };

    // Another port: a different origin.
    get(format!(
        "{}/redirect?to={}/other-port",
        first.url, second.url
    ))
    .await;
    let sent = first.received().pop().unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer guest-token"));
    assert_eq!(sent.header("cookie"), Some("session=guest"));
    let landed = second.received().pop().unwrap();
    assert_eq!(landed.path, "/other-port");
    assert_eq!(landed.header("authorization"), None, "{landed:?}");
    assert_eq!(landed.header("cookie"), None, "{landed:?}");
    assert_eq!(landed.header("x-trace"), Some("kept"), "{landed:?}");

    // Another host name on the same port: a different origin too.
    get(format!(
        "{}/redirect?to=http://localhost:{}/other-host",
        first.url, first.port
    ))
    .await;
    let landed = first.received().pop().unwrap();
    assert_eq!(landed.path, "/other-host");
    assert_eq!(landed.header("authorization"), None, "{landed:?}");
    assert_eq!(landed.header("cookie"), None, "{landed:?}");

    // The same origin keeps them.
    get(format!("{}/redirect?to=/same-origin", first.url)).await;
    let landed = first.received().pop().unwrap();
    assert_eq!(landed.path, "/same-origin");
    assert_eq!(landed.header("authorization"), Some("Bearer guest-token"));
    assert_eq!(landed.header("cookie"), Some("session=guest"));
}

#[tokio::test]
async fn a_credential_is_never_sent_in_clear_text() {
    let server = Recorder::start().await;
    let port = server.port;
    // The README's block, with `localhost` for the API's name: the
    // credential's port defaults to 443, and an allow entry admits port 443.
    // A loopback address takes its credential over plain http.
    let config = format!(
        "[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = 443\nallow_private = true\n\
         [[plugins.misbehaving.credentials]]\nhost = \"localhost\"\nheader = \"Authorization\"\nvalue = \"Bearer api-key-1\"\n\
         [[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {port}\nallow_private = true\n\
         [[plugins.misbehaving.credentials]]\nhost = \"localhost\"\nport = {port}\nheader = \"Authorization\"\nvalue = \"Bearer api-key-2\"\n\
         {}\
         [[plugins.misbehaving.credentials]]\nhost = \"127.0.0.1\"\nport = {port}\nheader = \"X-Local-Key\"\nvalue = \"local-key\"\n",
        server.allow_block("misbehaving")
    );
    let host = misbehaving(&config).await;

    // http to the credential's port 443: refused before any connection
    // (nothing listens there; a connection attempt would fail otherwise).
    let why = denied(&host, "http://localhost:443/orders").await;
    assert!(
        why.contains("`credentials`") && why.contains("https"),
        "{why}"
    );
    assert!(!why.contains("api-key"), "{why}");

    // http to a credential's explicit port on a name: refused, nothing sent.
    let why = denied(&host, &format!("http://localhost:{port}/orders")).await;
    assert!(
        why.contains("`credentials`") && why.contains("https"),
        "{why}"
    );
    assert!(server.received().is_empty());

    // A loopback address gets its credential over http; a redirect from it
    // to the name whose credential needs https is refused on that hop.
    let why = denied(
        &host,
        &format!("{}/redirect?to=http://localhost:{port}/leak", server.url),
    )
    .await;
    assert!(why.contains("redirect refused"), "{why}");
    let received = server.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0].path, "/redirect");
    assert_eq!(received[0].header("x-local-key"), Some("local-key"));
    assert_eq!(received[0].authorization, None);
}

#[tokio::test]
async fn an_allow_entry_without_a_port_allows_only_the_schemes_port() {
    let server = Recorder::start().await;
    let url = format!("http://localhost:{}/x", server.port);
    let host =
        misbehaving("[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nallow_private = true\n")
            .await;
    let why = denied(&host, &url).await;
    assert!(
        why.contains(&format!("port = {}", server.port)) && why.contains("port = \"*\""),
        "{why}"
    );
    assert!(server.received().is_empty());

    let host = misbehaving(
        "[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = \"*\"\nallow_private = true\n",
    )
    .await;
    assert_eq!(host.ok("get", json!({ "url": url })).await["status"], 200);
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn allow_private_belongs_to_the_rule_that_covers_the_request() {
    let private = Recorder::start().await;
    let public = Recorder::start().await;
    let host = misbehaving(&format!(
        "[[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {}\nallow_private = true\n\
         [[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {}\n",
        private.port, public.port
    ))
    .await;
    let to_public = format!("http://localhost:{}/x", public.port);
    let why = denied(&host, &to_public).await;
    assert!(why.contains("non-public address"), "{why}");
    // The guest is not told where the name points.
    assert!(
        !why.contains("127.0.0.1") && !why.contains("::1"),
        "the refusal echoes the address: {why}"
    );
    assert!(public.received().is_empty());

    let to_private = format!("http://localhost:{}/x", private.port);
    assert_eq!(
        host.ok("get", json!({ "url": to_private })).await["status"],
        200
    );
    assert_eq!(private.received().len(), 1);
    // Still refused after the allowed request (no shared connection or
    // answer lends the address).
    denied(&host, &to_public).await;
    assert!(public.received().is_empty());
}

#[tokio::test]
async fn other_spellings_of_loopback_are_refused() {
    let server = Recorder::start().await;
    let port = server.port;
    let host = misbehaving(&format!(
        "[[plugins.misbehaving.allow]]\nhost = \"*.example.com\"\n\
         [[plugins.misbehaving.allow]]\nhost = \"localhost\"\nport = {port}\n"
    ))
    .await;
    for url in [
        format!("http://2130706433:{port}/"),
        format!("http://0177.0.0.1:{port}/"),
        format!("http://0x7f.1:{port}/"),
        format!("http://0x7f000001:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://[::ffff:7f00:1]:{port}/"),
        format!("http://[::127.0.0.1]:{port}/"),
        format!("http://localhost:{port}/"),
    ] {
        denied(&host, &url).await;
    }
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn method_and_url_override_headers_are_refused() {
    let server = Recorder::start().await;
    let host = misbehaving(&server.allow_block("misbehaving")).await;
    let url = format!("{}/orders/1", server.url);
    let overrides = [
        ("X-HTTP-Method-Override", "DELETE"),
        ("x-http-method", "DELETE"),
        ("X-Method-Override", "DELETE"),
        // Routing to another path than the one `paths` checked.
        ("X-Original-URL", "/admin/users"),
        ("X-Rewrite-URL", "/admin/users"),
        ("X-Forwarded-Prefix", "/admin"),
    ];
    for (name, value) in overrides {
        let issue = host
            .tool_error(
                "get_with_headers",
                json!({ "url": url, "headers": { name: value } }),
            )
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
        assert!(message(&issue).contains(name), "{issue}");
    }
    assert!(server.received().is_empty());
    // Other headers pass.
    host.ok(
        "get_with_headers",
        json!({ "url": url, "headers": { "X-Request-Id": "1" } }),
    )
    .await;
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn paths_restrict_a_rule_on_every_hop() {
    let server = Recorder::start().await;
    let host = misbehaving(&format!(
        "[[plugins.misbehaving.allow]]\nhost = \"127.0.0.1\"\nport = {}\npaths = [\"/api/v1/orders*\", \"/redirect\"]\n",
        server.port
    ))
    .await;
    let base = &server.url;
    assert_eq!(
        host.ok("get", json!({ "url": format!("{base}/api/v1/orders/7") }))
            .await["status"],
        200
    );
    for path in [
        "/api/v1/admin",
        "/api/v1/orders/../admin",
        "/api/v1/orders/%2e%2e/%2e%2e/admin",
        "/api/v1/orders%2F..%2Fadmin",
        "/api/v1/orders/..;/admin",
    ] {
        let why = denied(&host, &format!("{base}{path}")).await;
        assert!(why.contains("path"), "{path}: {why}");
    }
    let why = denied(&host, &format!("{base}/redirect?to=/api/v1/admin")).await;
    assert!(why.contains("redirect refused"), "{why}");
    assert_eq!(
        host.ok(
            "get",
            json!({ "url": format!("{base}/redirect?to=/api/v1/orders/8") })
        )
        .await["status"],
        200
    );
    let paths: Vec<String> = server.received().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/api/v1/orders/7",
            "/redirect",
            "/redirect",
            "/api/v1/orders/8"
        ]
    );
}
