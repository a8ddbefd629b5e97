//! The core loop, in-process: listing, calling, validation, errors, traps,
//! and HTTP under policy. (A corrupt component's log line and credentials
//! injected from the environment are the process tier's: `tests/e2e`.)

use rmcp::ServiceError;
use serde_json::json;

use crate::support::{ERAS, Host, HostOptions, MISBEHAVING_TOOLS, Recorder, hints};

#[tokio::test]
async fn tools_are_listed_with_schemas_titles_and_all_four_annotations() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello", "misbehaving"]).era(era)).await;
        let tools = host.tools().await;
        let greet = tools
            .iter()
            .find(|t| t.name == "greet")
            .expect("greet is listed");
        assert_eq!(greet.title.as_deref(), Some("Greet Someone"));
        assert!(
            greet
                .description
                .as_deref()
                .unwrap()
                .starts_with("Greet a person by name.")
        );
        let name = &greet.input_schema["properties"]["name"];
        assert_eq!(name["type"], "string");
        assert!(
            name["description"]
                .as_str()
                .unwrap()
                .contains("name of the person")
        );
        assert_eq!(name["examples"], json!(["Ada"]));
        assert_eq!(greet.input_schema["required"], json!(["name"]));
        let output = greet.output_schema.as_ref().expect("an output schema");
        assert_eq!(output["type"], "object");
        assert_eq!(
            hints(greet),
            (Some(true), Some(false), Some(true), Some(false)),
            "{era:?}"
        );
        let post = tools
            .iter()
            .find(|t| t.name == "confirm_then_post")
            .unwrap();
        let a = post.annotations.as_ref().unwrap();
        assert_eq!(
            (a.read_only_hint, a.destructive_hint),
            (Some(false), Some(true))
        );
        assert_eq!(
            tools.len(),
            2 + MISBEHAVING_TOOLS,
            "{era:?}: every tool of both components"
        );
    }
}

#[tokio::test]
async fn a_call_returns_structured_output_and_the_same_json_as_text() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        let out = host.ok("greet", json!({"name": "Ada"})).await;
        assert_eq!(out, json!({"message": "Hello, Ada!"}), "{era:?}");
        let out = host
            .ok("greet", json!({"name": "Ada", "shout": true}))
            .await;
        assert_eq!(out, json!({"message": "HELLO, ADA!"}));
    }
}

#[tokio::test]
async fn arguments_that_fail_the_schema_name_the_field_and_the_rule() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        let issue = host.tool_error("greet", json!({"name": 5})).await;
        assert_eq!(issue["code"], "VALIDATION_ERROR");
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("`name`") && message.contains("string"),
            "{message}"
        );

        let issue = host.tool_error("greet", json!({})).await;
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("\"name\" is a required property"),
            "{issue}"
        );

        let issue = host
            .tool_error("greet", json!({"name": "Ada", "extra": 1}))
            .await;
        assert!(
            issue["message"].as_str().unwrap().contains("extra"),
            "{issue}"
        );

        let issue = host.tool_error("greet", json!({"name": ""})).await;
        assert!(
            issue["message"].as_str().unwrap().contains("`name`"),
            "{issue}"
        );
    }
}

#[tokio::test]
async fn a_tool_error_comes_back_in_the_envelope() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["misbehaving"]).era(era)).await;
        let issue = host.tool_error("fail", json!({})).await;
        assert_eq!(
            issue,
            json!({"code": "NOT_FOUND", "message": "there is no such thing", "hint": "look elsewhere"})
        );
    }
}

#[tokio::test]
async fn a_trap_is_a_tool_error_and_the_host_keeps_serving() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello", "misbehaving"]).era(era)).await;
        let issue = host.tool_error("crash", json!({})).await;
        assert_eq!(issue["code"], "INTERNAL");
        assert!(
            issue["message"].as_str().unwrap().contains("crashed"),
            "{issue}"
        );
        // The same component and the others still answer.
        host.tool_error("fail", json!({})).await;
        assert_eq!(
            host.ok("greet", json!({"name": "B"})).await["message"],
            "Hello, B!"
        );
    }
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        match host.call("no_such_tool", json!({})).await {
            Err(ServiceError::McpError(e)) => {
                assert_eq!(e.code.0, -32602, "{era:?}");
                assert!(e.message.contains("no_such_tool"));
            }
            other => panic!("{era:?}: expected -32602, got {other:?}"),
        }
        // The session is still usable.
        host.ok("greet", json!({"name": "C"})).await;
    }
}

#[tokio::test]
async fn http_to_a_host_that_is_not_allowed_is_denied_and_nothing_is_sent() {
    let server = Recorder::start().await;
    let other = Recorder::start().await;
    for era in ERAS {
        // Only `other` is allowed; `server` is on the same address, another port.
        let host = Host::start(
            HostOptions::new(&["hello"])
                .era(era)
                .config(other.allow_block("hello")),
        )
        .await;
        let issue = host
            .tool_error("fetch_url", json!({"url": format!("{}/x", server.url)}))
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("is allowed, but not on port"),
            "{issue}"
        );
        let issue = host
            .tool_error("fetch_url", json!({"url": "http://example.com/"}))
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED");
        assert!(server.received().is_empty());
    }
    // With no config at all, nothing is reachable.
    let host = Host::start(HostOptions::new(&["hello"])).await;
    let issue = host
        .tool_error("fetch_url", json!({"url": format!("{}/x", other.url)}))
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED");
    assert!(other.received().is_empty());
}
