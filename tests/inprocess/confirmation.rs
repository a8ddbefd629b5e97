//! Confirmation: the `confirm` import over elicitation in both eras, the
//! operator's policy for clients that cannot elicit, the sealed
//! `requestState` of 2026-07-28 rounds, the host's gate on mutations, and
//! cancellation while a confirmation is pending.

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitResult, ElicitationAction, InputRequiredResult,
    InputResponses,
};
use serde_json::{Value, json};

use crate::support::session::retry_with_state;
use crate::support::{ERAS, Elicitation, Era, Host, HostOptions, Recorder};

/// A host serving the misbehaving component, allowed to reach `server`.
async fn host(server: &Recorder, era: Era, elicitation: Elicitation, extra_config: &str) -> Host {
    Host::start(
        HostOptions::new(&["misbehaving"])
            .era(era)
            .elicitation(elicitation)
            .config(format!(
                "{extra_config}\n{}",
                server.allow_block("misbehaving")
            )),
    )
    .await
}

fn post_args(server: &Recorder) -> Value {
    json!({"url": format!("{}/hook", server.url), "confirm": true})
}

/// Runs the first round of a 2026-07-28 confirmation by hand.
async fn first_round(
    host: &Host,
    server: &Recorder,
) -> (CallToolRequestParams, InputRequiredResult) {
    let Value::Object(args) = post_args(server) else {
        unreachable!()
    };
    let params = CallToolRequestParams::new("confirm_then_post").with_arguments(args);
    match host
        .client
        .call_tool_once(params.clone())
        .await
        .expect("answered")
    {
        CallToolResponse::InputRequired(ir) => {
            let request = serde_json::to_value(&ir.input_requests).unwrap();
            assert_eq!(request["confirm"]["method"], "elicitation/create");
            assert_eq!(request["confirm"]["params"]["mode"], "form");
            let schema = &request["confirm"]["params"]["requestedSchema"];
            assert_eq!(schema["required"], json!(["confirm"]));
            assert_eq!(schema["properties"]["confirm"]["type"], "boolean");
            assert!(schema["properties"]["confirm"]["description"].is_string());
            assert!(ir.request_state.is_some());
            (params, ir)
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

fn retry(
    params: &CallToolRequestParams,
    round: &InputRequiredResult,
    yes: bool,
) -> CallToolRequestParams {
    retry_with_state(params, round.request_state.clone().unwrap(), yes)
}

fn assert_refused(result: Result<CallToolResponse, ServiceError>, needle: &str) {
    match result {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32602);
            assert!(
                e.message.contains("requestState") && e.message.contains(needle),
                "{}",
                e.message
            );
        }
        other => panic!("expected the state to be refused, got {other:?}"),
    }
}

/// The host's first line of every prompt for `tool` of the misbehaving
/// component.
fn host_line(tool: &str) -> String {
    format!("toolhost: the tool \"{tool}\" of plugin \"misbehaving\" (misbehaving.wasm) asks")
}

/// Calls `tool` with `arguments` once, without following rounds, and
/// expects an `input_required`; returns its prompt.
fn prompt_of(response: CallToolResponse) -> (String, InputRequiredResult) {
    match response {
        CallToolResponse::InputRequired(ir) => {
            let request = serde_json::to_value(&ir.input_requests).unwrap();
            let message = request["confirm"]["params"]["message"]
                .as_str()
                .expect("a message")
                .to_string();
            (message, ir)
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

#[tokio::test]
async fn an_accepted_confirmation_lets_the_mutation_through() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(&server, era, Elicitation::Accept(true), "").await;
        let out = host.ok("confirm_then_post", post_args(&server)).await;
        assert_eq!(out["detail"], "posted: 200", "{era:?}");
        assert_eq!(server.posts(), 1, "{era:?}");
        let seen = host.handler.seen.lock().unwrap();
        assert_eq!(
            seen.elicitations,
            [format!("Post to {}/hook?", server.url)],
            "{era:?}"
        );
    }
}

#[tokio::test]
async fn a_preview_asks_nothing_and_sends_nothing() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(&server, era, Elicitation::Accept(true), "").await;
        let out = host
            .ok(
                "confirm_then_post",
                json!({"url": format!("{}/hook", server.url)}),
            )
            .await;
        assert_eq!(out["detail"], "preview");
        assert!(server.received().is_empty());
        assert!(host.handler.seen.lock().unwrap().elicitations.is_empty());
    }
}

#[tokio::test]
async fn decline_cancel_and_accept_with_false_send_nothing_and_say_which() {
    for era in ERAS {
        for (answer, expected) in [
            (Elicitation::Decline, "cancelled"),
            (Elicitation::Cancel, "cancelled"),
            (Elicitation::Accept(false), "declined"),
        ] {
            let server = Recorder::start().await;
            let host = host(&server, era, answer, "").await;
            let out = host.ok("confirm_then_post", post_args(&server)).await;
            assert_eq!(out["detail"], expected, "{era:?} {answer:?}");
            assert_eq!(host.handler.seen.lock().unwrap().elicitations.len(), 1);
            assert!(
                server.received().is_empty(),
                "{era:?} {answer:?}: nothing may be sent"
            );
        }
    }
}

#[tokio::test]
async fn an_unanswered_legacy_elicitation_expires_as_cancelled() {
    let server = Recorder::start().await;
    let host = host(
        &server,
        Era::Legacy,
        Elicitation::Hang,
        "[host]\nelicitation_timeout_secs = 1\n",
    )
    .await;
    let out = host.ok("confirm_then_post", post_args(&server)).await;
    assert_eq!(out["detail"], "cancelled");
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn an_expired_request_state_is_refused() {
    // The 2026-07-28 counterpart of an elicitation timeout: the state lives
    // for elicitation_timeout_secs, so a late answer is refused.
    let server = Recorder::start().await;
    let host = host(
        &server,
        Era::Modern,
        Elicitation::Accept(true),
        "[host]\nelicitation_timeout_secs = 1\n",
    )
    .await;
    let (params, first) = first_round(&host, &server).await;
    // Waiting out the state's one-second lifetime is the behaviour under test.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let refused = host
        .client
        .call_tool_once(retry(&params, &first, true))
        .await;
    assert_refused(refused, "invalid");
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn without_elicitation_the_deny_policy_refuses_and_explains() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(&server, era, Elicitation::Unsupported, "").await;
        let out = host.ok("confirm_then_post", post_args(&server)).await;
        assert_eq!(out["detail"], "unsupported", "{era:?}");
        assert!(server.received().is_empty());
        assert!(
            host.handler.seen.lock().unwrap().elicitations.is_empty(),
            "never elicit an incapable client"
        );
    }
}

#[tokio::test]
async fn without_elicitation_trust_confirm_flag_takes_confirm_true_as_the_yes() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(
            &server,
            era,
            Elicitation::Unsupported,
            "[host]\nconfirmation = \"trust-confirm-flag\"\n",
        )
        .await;
        let out = host.ok("confirm_then_post", post_args(&server)).await;
        assert_eq!(out["detail"], "posted: 200", "{era:?}");
        assert_eq!(server.posts(), 1);
        assert!(host.handler.seen.lock().unwrap().elicitations.is_empty());
        // A lying component cannot mutate without the flag.
        let issue = host
            .tool_error(
                "post_unconfirmed",
                json!({"url": format!("{}/hook", server.url)}),
            )
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED");
        assert_eq!(server.posts(), 1);
    }
}

#[tokio::test]
async fn a_read_only_tool_cannot_post_even_when_confirmed() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(&server, era, Elicitation::Accept(true), "").await;
        let issue = host
            .tool_error(
                "readonly_post",
                json!({"url": format!("{}/hook", server.url)}),
            )
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}");
        assert!(
            issue["message"].as_str().unwrap().contains("read-only"),
            "{issue}"
        );
        assert!(server.received().is_empty());
    }
}

#[tokio::test]
async fn a_tampered_request_state_is_refused_and_nothing_is_sent() {
    let server = Recorder::start().await;
    let host = host(&server, Era::Modern, Elicitation::Accept(true), "").await;
    let (params, round) = first_round(&host, &server).await;
    let state = round.request_state.clone().unwrap();
    // Flip one character of the payload.
    let mut tampered: Vec<char> = state.chars().collect();
    let i = 6;
    tampered[i] = if tampered[i] == 'A' { 'B' } else { 'A' };
    let tampered: String = tampered.into_iter().collect();
    assert_refused(
        host.client
            .call_tool_once(retry_with_state(&params, tampered, true))
            .await,
        "altered",
    );
    // The same state bound to other arguments is refused too.
    let Value::Object(other) = json!({"url": format!("{}/other", server.url), "confirm": true})
    else {
        unreachable!()
    };
    let moved = CallToolRequestParams::new("confirm_then_post").with_arguments(other);
    assert_refused(
        host.client
            .call_tool_once(retry(&moved, &round, true))
            .await,
        "different arguments",
    );
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn a_foreign_request_state_is_refused() {
    let server = Recorder::start().await;
    let one = host(&server, Era::Modern, Elicitation::Accept(true), "").await;
    let two = host(&server, Era::Modern, Elicitation::Accept(true), "").await;
    let (params, round) = first_round(&one, &server).await;
    assert_refused(
        two.client
            .call_tool_once(retry(&params, &round, true))
            .await,
        "another server process",
    );
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn a_replayed_request_state_is_refused() {
    let server = Recorder::start().await;
    let host = host(&server, Era::Modern, Elicitation::Accept(true), "").await;
    let (params, round) = first_round(&host, &server).await;
    match host
        .client
        .call_tool_once(retry(&params, &round, true))
        .await
        .unwrap()
    {
        CallToolResponse::Complete(result) => {
            assert_eq!(result.structured_content.unwrap()["detail"], "posted: 200");
        }
        other => panic!("expected the call to complete, got {other:?}"),
    }
    assert_eq!(server.posts(), 1);
    assert_refused(
        host.client
            .call_tool_once(retry(&params, &round, true))
            .await,
        "already used",
    );
    assert_eq!(server.posts(), 1, "the replay sent nothing");
}

/// The 2026-07-28 counterpart of cancelling a pending confirmation: the
/// server holds no pending call (it answered `input_required`), so the
/// user's cancel reaches it as the retry's answer, or not at all.
#[tokio::test]
async fn a_2026_client_that_cancels_the_pending_confirmation_sends_nothing() {
    let server = Recorder::start().await;
    let host = host(&server, Era::Modern, Elicitation::Accept(true), "").await;
    let (params, round) = first_round(&host, &server).await;

    // The user dismissed the dialog: the client retries with `cancel`.
    let mut responses = InputResponses::new();
    responses.insert(
        "confirm".into(),
        serde_json::to_value(ElicitResult::new(ElicitationAction::Cancel)).unwrap(),
    );
    let cancelled = params
        .clone()
        .with_input_responses(responses)
        .with_request_state(round.request_state.clone().unwrap());
    match host
        .client
        .call_tool_once(cancelled)
        .await
        .expect("answered")
    {
        CallToolResponse::Complete(result) => {
            assert_eq!(result.structured_content.unwrap()["detail"], "cancelled");
        }
        other => panic!("expected a result, got {other:?}"),
    }
    assert!(server.received().is_empty(), "a cancel sends nothing");

    // The state was spent on the cancel: a later yes cannot revive it.
    assert_refused(
        host.client
            .call_tool_once(retry(&params, &round, true))
            .await,
        "already used",
    );
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn progress_reaches_the_client_in_both_eras() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["misbehaving"]).era(era)).await;
        host.ok("report_progress", json!({})).await;
        host.wait_for_seen(|s| s.progress.len() == 3).await;
        let seen = host.handler.seen.lock().unwrap();
        let steps: Vec<f64> = seen.progress.iter().map(|p| p.0).collect();
        assert_eq!(steps, [1.0, 2.0, 3.0], "{era:?}");
        assert_eq!(seen.progress[2].1, Some(3.0));
        assert_eq!(seen.progress[2].2.as_deref(), Some("step 3"));
    }
}

#[tokio::test]
async fn the_prompt_opens_with_the_hosts_line_naming_tool_plugin_and_what_yes_permits() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(&server, era, Elicitation::Accept(true), "").await;
        host.ok("confirm_then_post", post_args(&server)).await;
        let prompts = host.handler.seen.lock().unwrap().prompts.clone();
        assert_eq!(prompts.len(), 1, "{era:?}");
        let (first, question) = prompts[0]
            .split_once("\n\n")
            .expect("a line, then the question");
        assert!(
            first.starts_with(&host_line("confirm_then_post")),
            "{first}"
        );
        assert!(
            first.contains("Yes lets this one call send requests that change data"),
            "{first}"
        );
        assert_eq!(question, format!("Post to {}/hook?", server.url));
    }
}

#[tokio::test]
async fn a_no_after_a_yes_takes_the_yes_back_and_nothing_is_sent() {
    static ACCEPT_THEN_NO: [Elicitation; 2] =
        [Elicitation::Accept(true), Elicitation::Accept(false)];
    static ACCEPT_THEN_DECLINE: [Elicitation; 2] =
        [Elicitation::Accept(true), Elicitation::Decline];
    static ACCEPT_THEN_CANCEL: [Elicitation; 2] = [Elicitation::Accept(true), Elicitation::Cancel];
    for era in ERAS {
        for script in [&ACCEPT_THEN_NO, &ACCEPT_THEN_DECLINE, &ACCEPT_THEN_CANCEL] {
            let server = Recorder::start().await;
            let host = host(&server, era, Elicitation::Script(script), "").await;
            let issue = host
                .tool_error(
                    "ask_twice_then_post",
                    json!({"url": format!("{}/hook", server.url)}),
                )
                .await;
            assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?} {script:?}");
            assert_eq!(
                host.handler.seen.lock().unwrap().elicitations,
                ["Show the preview?", "Show the details too?"],
                "{era:?}"
            );
            assert!(
                server.received().is_empty(),
                "{era:?} {script:?}: the second answer took the yes back"
            );
        }
    }
}

#[tokio::test]
async fn a_mutation_before_any_yes_ends_the_call_without_asking() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = host(&server, era, Elicitation::Accept(true), "").await;
        let issue = host
            .tool_error(
                "post_then_confirm",
                json!({"url": format!("{}/hook", server.url)}),
            )
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("without the user's confirmation"),
            "{issue}"
        );
        assert!(
            host.handler.seen.lock().unwrap().prompts.is_empty(),
            "{era:?}: no prompt after a refused mutation"
        );
        assert!(server.received().is_empty(), "{era:?}");
    }
}

#[tokio::test]
async fn a_retry_whose_question_changed_is_asked_again_and_sends_nothing() {
    let server = Recorder::start().await;
    let host = host(&server, Era::Modern, Elicitation::Accept(true), "").await;
    let Value::Object(args) = json!({"url": server.url}) else {
        unreachable!()
    };
    let params = CallToolRequestParams::new("count_then_confirm").with_arguments(args);
    let (asked, round) = prompt_of(host.client.call_tool_once(params.clone()).await.unwrap());
    assert!(
        asked.starts_with(&host_line("count_then_confirm")),
        "{asked}"
    );
    assert!(asked.ends_with("Change 1 orders?"), "{asked}");

    // The counter moved between the rounds: the yes was for "1 orders",
    // so the retry is a new question, not a POST.
    let (asked_again, round) = prompt_of(
        host.client
            .call_tool_once(retry(&params, &round, true))
            .await
            .unwrap(),
    );
    assert!(asked_again.ends_with("Change 2 orders?"), "{asked_again}");
    assert!(round.request_state.is_some());
    assert_eq!(server.posts(), 0);
    assert_eq!(server.received().len(), 2, "only the two counter reads");
}

#[tokio::test]
async fn a_retry_after_the_component_was_replaced_is_refused() {
    let server = Recorder::start().await;
    let host = host(&server, Era::Modern, Elicitation::Accept(true), "").await;
    let mut changes = host.listen().await;
    let (params, round) = first_round(&host, &server).await;

    // Another build of the component: the same tools, other bytes (a
    // custom section appended).
    let mut bytes = crate::support::component("misbehaving");
    let name = b"rebuilt";
    bytes.extend_from_slice(&[0, (1 + name.len() + 1) as u8, name.len() as u8]);
    bytes.extend_from_slice(name);
    bytes.push(1);
    let tmp = host.plugins.join(".misbehaving.wasm.tmp");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, host.plugins.join("misbehaving.wasm")).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(30), changes.next())
        .await
        .expect("the replacement is loaded in time")
        .expect("the stream works");

    assert_refused(
        host.client
            .call_tool_once(retry(&params, &round, true))
            .await,
        "replaced",
    );
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn a_call_waiting_for_the_user_gives_its_turn_back() {
    let server = Recorder::start().await;
    let host = host(
        &server,
        Era::Legacy,
        Elicitation::Hang,
        "[plugins.misbehaving.limits]\nconcurrent_calls = 1\n",
    )
    .await;
    let peer = host.client.peer().clone();
    let Value::Object(args) = post_args(&server) else {
        unreachable!()
    };
    let waiting = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("confirm_then_post").with_arguments(args))
            .await
    });
    host.wait_for_seen(|s| s.prompts.len() == 1).await;

    // The plugin's only turn is free while its user decides: another call
    // of the plugin runs (the timeout only detects a hang).
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        host.ok(
            "confirm_then_post",
            json!({"url": format!("{}/hook", server.url)}),
        ),
    )
    .await
    .expect("a call of the plugin runs while another waits for its user");
    assert_eq!(out["detail"], "preview");
    // But a second call may not wait for a user too (the block's cap is
    // its concurrent_calls): it ends with a retryable error, unasked.
    let issue = host
        .tool_error("confirm_then_post", post_args(&server))
        .await;
    assert_eq!(issue["code"], "TRANSIENT", "{issue}");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("limits.concurrent_calls"),
        "{issue}"
    );
    assert_eq!(host.handler.seen.lock().unwrap().prompts.len(), 1);
    assert!(!waiting.is_finished());
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn calls_nobody_answers_do_not_starve_other_plugins() {
    let server = Recorder::start().await;
    let host = Host::start(
        HostOptions::new(&["misbehaving", "hello"])
            .elicitation(Elicitation::Hang)
            .config(format!(
                "[plugins.misbehaving.limits]\nconcurrent_calls = 128\n{}",
                server.allow_block("misbehaving")
            )),
    )
    .await;
    // As many calls as the pool has slots, each asking a user who never
    // answers.
    let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..128 {
        let peer = host.client.peer().clone();
        let done = done.clone();
        let Value::Object(args) = post_args(&server) else {
            unreachable!()
        };
        tokio::spawn(async move {
            let result = peer
                .call_tool(CallToolRequestParams::new("confirm_then_post").with_arguments(args))
                .await;
            let _ = done.send(result);
        });
    }
    // Half the pool may wait for users; the rest are told to retry.
    let hang_detector = std::time::Duration::from_secs(60);
    for _ in 0..64 {
        let result = tokio::time::timeout(hang_detector, finished.recv())
            .await
            .expect("the calls past the cap are answered")
            .unwrap()
            .expect("a result");
        assert_eq!(result.is_error, Some(true));
        let issue = &result.structured_content.unwrap()["issues"][0];
        assert_eq!(issue["code"], "TRANSIENT", "{issue}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("already waiting for a user's answer"),
            "{issue}"
        );
    }
    host.wait_for_seen(|s| s.prompts.len() == 64).await;

    // Another plugin's tool still gets a slot and answers.
    let greeting = tokio::time::timeout(hang_detector, host.ok("greet", json!({"name": "Ada"})))
        .await
        .expect("greet answers while 64 calls wait for users");
    assert_eq!(greeting["message"], "Hello, Ada!");
    assert!(finished.try_recv().is_err(), "the 64 still wait");
    assert!(server.received().is_empty());
}
