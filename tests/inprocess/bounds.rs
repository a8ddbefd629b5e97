//! Bounds on what a component hands the host in one call: its error text
//! and its confirmation question (`limits.output_bytes`), and the data one
//! host call may copy out of it (`limits.memory_mib`).

use serde_json::json;

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
