//! Bounds on what a component hands the host in one call: its error text
//! and its confirmation question (`limits.output_bytes`), and the data one
//! host call may copy out of it (`limits.memory_mib`); and the one
//! `limits.concurrent_calls` a plugin block's files share.

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::{ERAS, Elicitation, Host, HostOptions, Recorder};

#[tokio::test]
async fn a_huge_error_message_and_hint_are_cut_to_output_bytes() {
    let host = Host::start(HostOptions::new(&["misbehaving"])).await;
    let issue = host.tool_error("long_error", json!({"megabytes": 2})).await;
    let message = issue["message"].as_str().unwrap();
    let hint = issue["hint"].as_str().unwrap();
    assert!(
        message.len() + hint.len() <= (1 << 20) + 200,
        "{} + {} bytes",
        message.len(),
        hint.len()
    );
    assert!(message.starts_with("mmmm"), "the start is kept");
    assert!(
        message.ends_with("exceed limits.output_bytes]"),
        "…{}",
        &message[message.len() - 80..]
    );
    // The host keeps serving.
    assert_eq!(
        host.ok("report_progress", json!({})).await["detail"],
        "done"
    );
}

#[tokio::test]
async fn a_huge_confirmation_question_is_refused_and_nobody_is_asked() {
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["misbehaving"])
                .era(era)
                .elicitation(Elicitation::Accept(true)),
        )
        .await;
        let issue = host
            .tool_error("long_question", json!({"megabytes": 2}))
            .await;
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("limits.output_bytes"),
            "{era:?}: {message}"
        );
        assert!(message.len() < 1000, "the question is not echoed");
        assert!(host.handler.seen.lock().unwrap().prompts.is_empty());
    }
}

#[tokio::test]
async fn one_string_named_by_120_headers_is_refused_by_the_copy_budget() {
    let server = Recorder::start().await;
    let host =
        Host::start(HostOptions::new(&["misbehaving"]).config(server.allow_block("misbehaving")))
            .await;
    let issue = host
        .tool_error("header_flood", json!({"url": format!("{}/x", server.url)}))
        .await;
    assert_eq!(issue["code"], "INTERNAL");
    let message = issue["message"].as_str().unwrap();
    assert!(
        message.contains("more data to the host in one call")
            && message.contains("limits.memory_mib = 64"),
        "{message}"
    );
    assert!(server.received().is_empty(), "nothing was sent");
    // The host keeps serving.
    assert_eq!(
        host.ok("report_progress", json!({})).await["detail"],
        "done"
    );
}

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
