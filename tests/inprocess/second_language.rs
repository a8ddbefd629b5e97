//! A tool component written in Python (`plugins/examples/python-wordcount`,
//! built with componentize-py) served by the same Gateway, through the same
//! WIT contract, as the Rust components: listing, a tool error and a
//! contract 0.2.0 resource. (What reads its `log` lines is the process
//! tier's.)

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
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["count_chosen", "word_count"], "{era:?}");
        let tool = &tools[1];
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
