//! Contract 0.3 (`toolhost:plugin@0.3.0`, ADR 0035) through the real
//! binary and rmcp's client in both eras: content blocks in tool results
//! and prompts, checked for MIME type and size; a tool's own forms, asked
//! with the host's first line, their answers checked before the tool sees
//! them, never an approval, refused when they ask for a secret; and 0.2
//! builds served unchanged.

use base64::Engine as _;
use rmcp::model::{ContentBlock, GetPromptRequestParams, ResourceContents};
use serde_json::{Value, json};

use crate::support::{ERAS, Elicitation, Era, Host, HostOptions, Recorder};

/// The 1×1 PNG the `media` component returns.
const PIXEL_PREFIX: &[u8] = &[0x89, 0x50, 0x4e, 0x47];

async fn media(era: Era, elicitation: Elicitation, config: &str) -> Host {
    Host::start(
        HostOptions::new(&["media"])
            .era(era)
            .elicitation(elicitation)
            .config(config.to_string()),
    )
    .await
}

#[tokio::test]
async fn a_tools_image_reaches_the_client_with_its_mime_type_beside_its_json() {
    for era in ERAS {
        let host = media(era, Elicitation::Unsupported, "").await;
        let result = host.call("show_pixel", json!({})).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{era:?}");
        assert_eq!(
            result.structured_content,
            Some(json!({"note": "one red pixel"}))
        );
        assert_eq!(result.content.len(), 2, "{era:?}: {:?}", result.content);
        let text = result.content[0].as_text().expect("the JSON as text first");
        assert_eq!(
            serde_json::from_str::<Value>(&text.text).unwrap(),
            json!({"note": "one red pixel"})
        );
        match &result.content[1] {
            ContentBlock::Image(image) => {
                assert_eq!(image.mime_type, "image/png", "{era:?}");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&image.data)
                    .unwrap();
                assert!(bytes.starts_with(PIXEL_PREFIX), "{era:?}");
            }
            other => panic!("{era:?}: expected an image, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_wrongly_typed_or_oversize_block_is_a_clear_tool_error() {
    for era in ERAS {
        let host = media(
            era,
            Elicitation::Unsupported,
            "[plugins.media]\nfiles = [\"media.wasm\"]\n[plugins.media.limits]\noutput_bytes = 4096\n",
        )
        .await;
        let issue = host.tool_error("mislabelled_image", json!({})).await;
        assert_eq!(issue["code"], "INTERNAL", "{era:?}");
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("content block 2") && message.contains("image/*"),
            "{era:?}: {message}"
        );

        let issue = host.tool_error("large_image", json!({"bytes": 5000})).await;
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("limits.output_bytes (4096)"),
            "{era:?}: {message}"
        );
        // Within the limit, the same tool succeeds.
        let fits = host
            .call("large_image", json!({"bytes": 1000}))
            .await
            .unwrap();
        assert_ne!(fits.is_error, Some(true), "{era:?}");
    }
}

#[tokio::test]
async fn a_document_and_a_link_reach_the_client_as_an_embedded_resource_and_a_resource_link() {
    for era in ERAS {
        let host = media(era, Elicitation::Unsupported, "").await;
        let result = host.call("purchase_order", json!({})).await.unwrap();
        assert_eq!(result.content.len(), 3, "{era:?}: {:?}", result.content);
        match &result.content[1] {
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => {
                    assert_eq!(uri, "test://po/1");
                    assert_eq!(mime_type.as_deref(), Some("text/markdown"));
                    assert!(text.starts_with("# PO-1"), "{text}");
                }
                other => panic!("{era:?}: expected text contents, got {other:?}"),
            },
            other => panic!("{era:?}: expected a resource, got {other:?}"),
        }
        match &result.content[2] {
            ContentBlock::ResourceLink(link) => {
                assert_eq!(link.uri, "test://po/1");
                assert_eq!(link.name, "po-1");
            }
            other => panic!("{era:?}: expected a resource link, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_prompt_carries_an_image() {
    for era in ERAS {
        let host = media(era, Elicitation::Unsupported, "").await;
        let prompt = host
            .client
            .get_prompt(GetPromptRequestParams::new("describe_pixel"))
            .await
            .unwrap();
        assert_eq!(prompt.messages.len(), 2, "{era:?}");
        match &prompt.messages[0].content {
            ContentBlock::Image(image) => {
                assert_eq!(image.mime_type, "image/png", "{era:?}")
            }
            other => panic!("{era:?}: expected an image, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_form_is_asked_with_the_hosts_first_line_and_its_answer_reaches_the_tool() {
    for era in ERAS {
        let host = media(
            era,
            Elicitation::AcceptWith(r#"{"color": "blue", "note": "matte"}"#),
            "",
        )
        .await;
        let out = host.ok("pick_color", json!({})).await;
        assert_eq!(
            out,
            json!({"answer": "accepted", "color": "blue", "note": "matte", "posted": null}),
            "{era:?}"
        );
        let seen = host.client.service().seen.lock().unwrap();
        assert_eq!(seen.prompts.len(), 1, "{era:?}");
        assert!(
            seen.prompts[0].starts_with(
                "toolhost: the tool \"pick_color\" of plugin \"media\" (media.wasm) asks you to fill in a form."
            ),
            "{era:?}: {}",
            seen.prompts[0]
        );
        assert!(seen.prompts[0].contains("approves nothing"));
        assert_eq!(seen.elicitations[0], "Which color should the fence be?");
        let color = &seen.elicitation_schemas[0]["properties"]["color"];
        assert_eq!(color["default"], "green", "{era:?}: {color}");
        assert_eq!(color["oneOf"][2], json!({"const": "blue", "title": "Blue"}));
    }
}

#[tokio::test]
async fn a_question_the_host_asks_first_leaves_the_tool_its_whole_question_limit() {
    // The operator's own question (a `confirm` rule) is the host's, not
    // the tool's: with room for one question, the tool's form is still
    // asked.
    let config = r#"
[[policy.rules]]
name = "ask-before-colouring"
when = 'tool.name == "pick_color"'
outcome = "confirm"

[plugins.media.limits]
confirmations_per_call = 1
"#;
    for era in ERAS {
        let answers = Elicitation::Script(&[
            Elicitation::Accept(true),
            Elicitation::AcceptWith(r#"{"color": "blue", "note": "matte"}"#),
        ]);
        let host = media(era, answers, config).await;
        let out = host.ok("pick_color", json!({})).await;
        assert_eq!(out["color"], "blue", "{era:?}: {out}");
        let seen = host.client.service().seen.lock().unwrap();
        assert_eq!(seen.prompts.len(), 2, "{era:?}: {:?}", seen.prompts);
        assert!(
            seen.prompts[0].starts_with("toolhost: the operator's policy"),
            "{era:?}: the host asked first: {:?}",
            seen.prompts
        );
    }
}

#[tokio::test]
async fn an_answer_that_does_not_match_the_form_is_refused_before_the_tool_sees_it() {
    for era in ERAS {
        let host = media(era, Elicitation::AcceptWith(r#"{"color": "purple"}"#), "").await;
        let issue = host.tool_error("pick_color", json!({})).await;
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("does not match the form")
                && message.contains("the tool did not see it"),
            "{era:?}: {message}"
        );
    }
}

#[tokio::test]
async fn a_declined_or_dismissed_form_reaches_the_tool_as_such() {
    for era in ERAS {
        for (answer, word) in [
            (Elicitation::Decline, "declined"),
            (Elicitation::Cancel, "cancelled"),
            (Elicitation::Unsupported, "unsupported"),
        ] {
            let host = media(era, answer, "").await;
            let out = host.ok("pick_color", json!({})).await;
            assert_eq!(out["answer"], word, "{era:?}");
            assert_eq!(out["color"], Value::Null);
        }
    }
}

#[tokio::test]
async fn a_form_answer_never_passes_the_confirmation_gate() {
    for era in ERAS {
        let server = Recorder::start().await;
        let url = format!("{}/hook", server.url);
        // A form answered, then a POST without a confirmation.
        let host = media(
            era,
            Elicitation::AcceptWith(r#"{"color": "red"}"#),
            &server.allow_block("media"),
        )
        .await;
        let issue = host.tool_error("pick_then_post", json!({"url": url})).await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}: {issue}");
        // A yes, then a form answered: the form takes the yes back.
        let host = media(
            era,
            Elicitation::Script(&[
                Elicitation::Accept(true),
                Elicitation::AcceptWith(r#"{"color": "red"}"#),
            ]),
            &server.allow_block("media"),
        )
        .await;
        let issue = host
            .tool_error("confirm_pick_post", json!({"url": url}))
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}: {issue}");
        assert_eq!(host.client.service().seen.lock().unwrap().prompts.len(), 2);
        assert!(server.received().is_empty(), "{era:?}: nothing was sent");
    }
}

#[tokio::test]
async fn a_form_that_asks_for_a_secret_is_refused_at_run_time_and_check_says_so() {
    for era in ERAS {
        let host = media(
            era,
            Elicitation::AcceptWith(r#"{"user_password": "x"}"#),
            "",
        )
        .await;
        let issue = host.tool_error("ask_password", json!({})).await;
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("asks for a secret (field \"user_password\")")
                && message.contains("nobody was asked"),
            "{era:?}: {message}"
        );
        assert!(
            host.client
                .service()
                .seen
                .lock()
                .unwrap()
                .prompts
                .is_empty()
        );
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("check")
        .arg(crate::support::components_dir().join("media.wasm"))
        .output()
        .unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.contains("targets toolhost:plugin@0.3.0 (0 resources, 0 templates, 1 prompt)"),
        "{report}"
    );
    assert!(
        report.contains("may ask forms of its own")
            && report.contains("refuses a form that asks for a secret"),
        "{report}"
    );
}

#[tokio::test]
async fn components_built_against_0_2_load_and_run_unchanged() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/contract-0.2");
    for era in ERAS {
        let mut options = HostOptions::new(&[]).era(era);
        for name in ["hello.wasm", "offers.wasm"] {
            options = options.file(name, std::fs::read(fixtures.join(name)).unwrap());
        }
        let host = Host::start(options).await;
        assert_eq!(
            host.ok("greet", json!({"name": "Old"})).await["message"],
            "Hello, Old!",
            "{era:?}"
        );
        assert_eq!(host.client.list_all_resources().await.unwrap().len(), 5);
        let prompt = host
            .client
            .get_prompt(
                GetPromptRequestParams::new("describe_color").with_arguments(
                    serde_json::Map::from_iter([("color".to_string(), json!("blue"))]),
                ),
            )
            .await
            .unwrap();
        assert!(!prompt.messages.is_empty(), "{era:?}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("check")
        .arg(fixtures.join("offers.wasm"))
        .output()
        .unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.contains("targets toolhost:plugin@0.2.0 ("),
        "{report}"
    );
}

#[tokio::test]
async fn statuspro_asks_the_user_which_status_when_several_are_viable() {
    use statuspro_sandbox::seed;
    // Order Received may move to In Production or On Hold.
    let order = seed::order_in_status("st000001").unwrap();
    for era in ERAS {
        let statuspro = crate::statuspro::Setup::new()
            .era(era)
            .elicitation(Elicitation::AcceptWith(r#"{"status_code": "st000005"}"#))
            .start()
            .await;
        let host = &statuspro.host;
        let out = host
            .ok(
                "get_viable_statuses",
                json!({"order_id": order, "ask_user": true}),
            )
            .await;
        assert_eq!(
            out["user_choice"],
            json!({"answer": "accepted", "status_code": "st000005"}),
            "{era:?}"
        );
        {
            let seen = host.client.service().seen.lock().unwrap();
            assert!(
                seen.elicitations[0].contains("can move to 2 statuses"),
                "{:?}",
                seen.elicitations
            );
            let options = &seen.elicitation_schemas[0]["properties"]["status_code"]["oneOf"];
            assert_eq!(
                options,
                &json!([
                    {"const": "st000002", "title": "In Production"},
                    {"const": "st000005", "title": "On Hold"}
                ])
            );
        }
        // Without ask_user the tool lists them, as before.
        let out = host
            .ok("get_viable_statuses", json!({"order_id": order}))
            .await;
        assert!(out.get("user_choice").is_none(), "{era:?}: {out}");
        assert!(statuspro.writes().is_empty(), "a choice changes nothing");
    }
}

#[tokio::test]
async fn katana_returns_a_purchase_order_as_an_embedded_document() {
    let katana = crate::katana::Katana::start().await;
    let result = katana
        .host
        .call(
            "find_order",
            json!({"order_type": "purchase", "order_number": "PO-25-003"}),
        )
        .await
        .unwrap();
    assert_eq!(result.content.len(), 2, "{:?}", result.content);
    match &result.content[1] {
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => {
                assert_eq!(
                    uri,
                    &format!(
                        "katana://purchase-orders/{}",
                        katana_sandbox::seed::PO_PARTIALLY_RECEIVED
                    )
                );
                assert_eq!(mime_type.as_deref(), Some("text/markdown"));
                assert!(text.starts_with("# Purchase order PO-25-003"), "{text}");
                assert!(text.contains("PARTIALLY_RECEIVED"), "{text}");
            }
            other => panic!("expected text contents, got {other:?}"),
        },
        other => panic!("expected an embedded resource, got {other:?}"),
    }
    // Other kinds of order come without a document.
    let sales = katana
        .host
        .call(
            "find_order",
            json!({"order_type": "sales", "order_id": katana_sandbox::seed::SO_NOT_SHIPPED}),
        )
        .await
        .unwrap();
    assert_eq!(sales.content.len(), 1, "{:?}", sales.content);
}

#[tokio::test]
async fn the_audit_trail_records_a_forms_answer_but_never_its_values() {
    use crate::support::audit::{records, trail_of, with_trail};
    for era in ERAS {
        let host = media(
            era,
            Elicitation::AcceptWith(r#"{"color": "blue", "note": "matte"}"#),
            &with_trail(""),
        )
        .await;
        host.ok("pick_color", json!({})).await;
        let trail = records(&trail_of(&host));
        let call = trail
            .iter()
            .rev()
            .find(|r| r["record"] == "call" && r["tool"] == "pick_color")
            .expect("the call is on record");
        assert_eq!(
            call["confirmation"]["outcome"], "form-accepted",
            "{era:?}: {call}"
        );
        let text = std::fs::read_to_string(trail_of(&host)).unwrap();
        assert!(!text.contains("matte"), "{era:?}: the values stay out");
    }
}

#[tokio::test]
async fn a_form_that_names_its_input_key_is_asked_and_answered_under_it() {
    use rmcp::model::{CallToolRequestParams, CallToolResponse, InputRequest, InputResponses};
    // A client that can answer forms; each round is driven by hand.
    let host = media(
        Era::Modern,
        Elicitation::AcceptWith(r#"{"color": "red"}"#),
        "",
    )
    .await;
    let params = CallToolRequestParams::new("pick_keyed_color");
    let round = match host.client.call_tool_once(params.clone()).await.unwrap() {
        CallToolResponse::InputRequired(round) => round,
        other => panic!("expected input_required, got {other:?}"),
    };
    let requests = round.input_requests.expect("a question");
    let keys: Vec<&String> = requests.keys().collect();
    assert_eq!(keys, ["fence_color"]);
    let InputRequest::Elicitation(asked) = &requests["fence_color"] else {
        panic!("expected an elicitation, got {requests:?}");
    };
    let asked = serde_json::to_value(asked).unwrap();
    let schema = &asked["params"]["requestedSchema"];
    assert!(schema.get("x-toolhost-input-key").is_none(), "{schema}");
    assert!(schema["properties"].get("color").is_some(), "{schema}");
    let state = round.request_state.expect("a sealed state");
    let answer = |key: &str| {
        let responses: InputResponses = serde_json::from_value(json!({
            key: {"action": "accept", "content": {"color": "red"}}
        }))
        .unwrap();
        params
            .clone()
            .with_request_state(state.clone())
            .with_input_responses(responses)
    };
    // An answer under another key (the confirmations' own) is refused and
    // leaves the state unspent.
    let refused = host.client.call_tool_once(answer("confirm")).await;
    let message = crate::support::session::refusal(refused);
    assert!(message.contains("\"fence_color\""), "{message}");
    let done = match host
        .client
        .call_tool_once(answer("fence_color"))
        .await
        .unwrap()
    {
        CallToolResponse::Complete(result) => result.structured_content.unwrap(),
        other => panic!("expected the result, got {other:?}"),
    };
    assert_eq!(done["answer"], "accepted", "{done}");
    assert_eq!(done["color"], "red", "{done}");
}
