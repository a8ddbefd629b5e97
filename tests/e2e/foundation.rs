//! The core loop: listing, calling, validation, errors, traps, corrupt
//! components, and HTTP under policy with injected credentials.

use serde_json::json;

use crate::support::{ERAS, Host, HostOptions, Recorder};

#[tokio::test]
async fn a_corrupt_component_is_skipped_and_the_others_serve() {
    let host = Host::start(
        HostOptions::new(&["hello"])
            .file("broken.wasm", b"\0asm but not really".to_vec())
            .file("empty.wasm", Vec::new()),
    )
    .await;
    let names: Vec<String> = host
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["fetch_url", "greet"]);
    let stderr = host.wait_for_stderr("empty.wasm").await;
    assert!(
        stderr.contains("skipped") && stderr.contains("broken.wasm"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not a valid WebAssembly component"),
        "{stderr}"
    );
    host.ok("greet", json!({"name": "D"})).await;
}

#[tokio::test]
async fn http_to_an_allowed_loopback_server_carries_the_injected_credential() {
    let server = Recorder::start().await;
    let config = format!(
        "{}\n[[plugins.hello.credentials]]\nhost = \"127.0.0.1\"\nport = {}\nheader = \"Authorization\"\nvalue = \"Bearer ${{HELLO_TEST_KEY}}\"\n",
        server.allow_block("hello"),
        server.port
    );
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["hello"])
                .era(era)
                .config(&config)
                .env("HELLO_TEST_KEY", "s3cret-value"),
        )
        .await;
        let out = host
            .ok(
                "fetch_url",
                json!({"url": format!("{}/orders", server.url)}),
            )
            .await;
        assert_eq!(out["status"], 200);
        assert_eq!(out["body"], "recorded");
        let last = server.received().pop().expect("the request arrived");
        assert_eq!(
            (last.method.as_str(), last.path.as_str()),
            ("GET", "/orders")
        );
        assert_eq!(last.authorization.as_deref(), Some("Bearer s3cret-value"));
        assert!(
            !host.stderr.lock().unwrap().contains("s3cret-value"),
            "the secret must not be logged"
        );
    }
}
