//! A tool component written in Python (`plugins/examples/python-wordcount`,
//! built with componentize-py) served by the same host, through the same
//! WIT contract, as the Rust components: listing, a call, a tool error, the
//! `log` import, the host's argument validation, and a contract 0.2.0
//! resource.

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::json;

use crate::support::{ERAS, Host, HostOptions, components_dir, hints};

/// Fails with the way to build the component when it is missing: this test
/// must not pass by skipping.
fn python_component() -> &'static str {
    let path = components_dir().join("python_wordcount.wasm");
    assert!(
        path.exists(),
        "{} is missing: run `cargo xtask setup-python` and `cargo xtask build-plugins` \
         (`cargo xtask test` does both)",
        path.display()
    );
    "python_wordcount"
}

#[tokio::test]
async fn the_python_tool_is_listed_with_its_schemas_and_annotations() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&[python_component()]).era(era)).await;
        let tools = host.tools().await;
        assert_eq!(tools.len(), 1, "{era:?}");
        let tool = &tools[0];
        assert_eq!(tool.name, "word_count");
        assert_eq!(tool.title.as_deref(), Some("Count Words"));
        assert!(
            tool.description
                .as_deref()
                .unwrap()
                .starts_with("Count the words, characters and lines in a text."),
            "{:?}",
            tool.description
        );
        let schema = &tool.input_schema;
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["text"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        let text = &schema["properties"]["text"];
        assert_eq!(text["type"], "string");
        assert!(!text["description"].as_str().unwrap().is_empty());
        assert!(!text["examples"].as_array().unwrap().is_empty());
        let output = tool.output_schema.as_ref().expect("an output schema");
        assert_eq!(output["required"], json!(["words", "characters", "lines"]));
        for field in ["words", "characters", "lines"] {
            assert_eq!(output["properties"][field]["type"], "integer", "{field}");
        }
        assert_eq!(
            hints(tool),
            (Some(true), Some(false), Some(true), Some(false)),
            "{era:?}"
        );
    }
}

#[tokio::test]
async fn the_python_tool_returns_structured_output_and_logs_through_the_host() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&[python_component()]).era(era)).await;
        let out = host
            .ok(
                "word_count",
                json!({"text": "The quick brown fox\njumps over the lazy dög.\n"}),
            )
            .await;
        assert_eq!(
            out,
            json!({"words": 9, "characters": 45, "lines": 2}),
            "{era:?}"
        );
        // Characters are code points; a text without a final line feed
        // still has its last line; whitespace of any kind separates words.
        let out = host
            .ok("word_count", json!({"text": "naïve\tcafé  ünïcödé"}))
            .await;
        assert_eq!(out, json!({"words": 3, "characters": 19, "lines": 1}));
        let out = host.ok("word_count", json!({"text": "   "})).await;
        assert_eq!(out, json!({"words": 0, "characters": 3, "lines": 1}));

        // The `log` import reaches the host's log, tagged with plugin and tool.
        let stderr = host
            .wait_for_stderr("counted 9 words, 45 characters, 2 lines")
            .await;
        let line = stderr
            .lines()
            .find(|l| l.contains("counted 9 words"))
            .unwrap();
        assert!(
            line.contains("python_wordcount") && line.contains("word_count"),
            "{line}"
        );
    }
}

#[tokio::test]
async fn the_python_tool_error_comes_back_in_the_envelope() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&[python_component()]).era(era)).await;
        let issue = host.tool_error("word_count", json!({"text": ""})).await;
        assert_eq!(
            issue,
            json!({
                "code": "VALIDATION_ERROR",
                "message": "`text` is empty: there is nothing to count",
                "hint": "pass the text itself, e.g. {\"text\": \"one two three\"}"
            }),
            "{era:?}"
        );
        // A tool error ends the call, not the component: the next call works.
        let out = host.ok("word_count", json!({"text": "still here"})).await;
        assert_eq!(out["words"], 2);
    }
}

#[tokio::test]
async fn the_host_validates_arguments_before_python_sees_them() {
    let host = Host::start(HostOptions::new(&[python_component()])).await;
    let issue = host.tool_error("word_count", json!({"text": 5})).await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    let message = issue["message"].as_str().unwrap();
    assert!(
        message.contains("`text`") && message.contains("string"),
        "{message}"
    );

    let issue = host.tool_error("word_count", json!({})).await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("\"text\" is a required property"),
        "{issue}"
    );

    let issue = host
        .tool_error("word_count", json!({"text": "a", "extra": 1}))
        .await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert!(
        issue["message"].as_str().unwrap().contains("extra"),
        "{issue}"
    );

    // None of them reached the component (Python would have raised a
    // TypeError on `5`, an internal error): it logs every call it runs.
    host.ok("word_count", json!({"text": "done"})).await;
    let stderr = host.wait_for_stderr("counted 1 words").await;
    assert_eq!(
        stderr.matches("counted ").count(),
        1,
        "only the valid call ran Python:\n{stderr}"
    );
}

#[tokio::test]
async fn the_python_component_offers_its_guide_as_a_resource() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&[python_component()]).era(era)).await;
        let resources = host.client.list_all_resources().await.unwrap();
        assert_eq!(resources.len(), 1, "{era:?}");
        let guide = &resources[0];
        assert_eq!(guide.uri, "wordcount://guide");
        assert_eq!(guide.mime_type.as_deref(), Some("text/markdown"));
        assert_eq!(guide.title.as_deref(), Some("How word_count counts"));

        let read = host
            .client
            .read_resource(ReadResourceRequestParams::new("wordcount://guide"))
            .await
            .unwrap();
        match &read.contents[..] {
            [
                ResourceContents::TextResourceContents {
                    text, mime_type, ..
                },
            ] => {
                assert!(text.starts_with("# word_count"), "{text}");
                assert_eq!(guide.size, Some(text.len() as u64));
                assert_eq!(mime_type.as_deref(), Some("text/markdown"));
            }
            other => panic!("expected one text, got {other:?}"),
        }
    }
}
