//! Bounds on what a component hands the host in one call: its error text
//! and its confirmation question (`limits.output_bytes`), and the data one
//! host call may copy out of it (`limits.memory_mib`); and the one
//! `limits.concurrent_calls` a plugin block's files share.

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::{Host, HostOptions, Recorder};

#[tokio::test]
async fn concurrent_calls_counts_the_calls_of_every_file_of_a_block() {
    let server = Recorder::start().await;
    let host = Host::start(HostOptions::new(&["misbehaving", "hello"]).config(format!(
        "[plugins.tools]\nfiles = [\"misbehaving.wasm\", \"hello.wasm\"]\n\
         [plugins.tools.limits]\nconcurrent_calls = 1\n{}",
        server.allow_block("tools")
    )))
    .await;
    // A call of misbehaving.wasm takes the block's only turn and holds it.
    let peer = host.client.peer().clone();
    let url = format!("{}/hold", server.url);
    let held = tokio::spawn(async move {
        let Value::Object(args) = json!({ "url": url }) else {
            unreachable!()
        };
        peer.call_tool(CallToolRequestParams::new("get").with_arguments(args))
            .await
    });
    server.wait_for_requests(1).await;
    // A call of hello.wasm, another file of the same block, waits for it.
    let peer = host.client.peer().clone();
    let greeting = tokio::spawn(async move {
        let Value::Object(args) = json!({"name": "Ada"}) else {
            unreachable!()
        };
        peer.call_tool(CallToolRequestParams::new("greet").with_arguments(args))
            .await
    });
    host.wait_for_stderr("waiting for a turn (limits.concurrent_calls)")
        .await;
    server.release();
    let hang_detector = std::time::Duration::from_secs(30);
    let held = tokio::time::timeout(hang_detector, held)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(held.structured_content.unwrap()["status"], 200);
    let greeting = tokio::time::timeout(hang_detector, greeting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        greeting.structured_content.unwrap()["message"],
        "Hello, Ada!"
    );
}
