//! Loading in-process: a third-party schema is published with standard
//! formats and enforced. Load refusals read from the log, and the limits
//! set on the command line, are the process tier's (`tests/e2e/loading.rs`).

use serde_json::json;

use crate::support::{Host, HostOptions, component};

#[tokio::test]
async fn a_third_party_schema_is_published_with_standard_formats_and_enforced() {
    // Not built with toolhost-sdk's schemas: the schema is the operator's
    // text, as a third-party component would publish it.
    let schema = r#"{"type":"object","properties":{"id":{"type":"integer","format":"uint64","minimum":0},"ratio":{"type":"number","format":"double"},"when":{"type":"string","format":"date"}}}"#;
    let options = HostOptions::new(&["hello"])
        .file("custom.wasm", component("misbehaving"))
        .config(format!(
            "[plugins.custom.config]\nlist_input_schema = '{schema}'\n"
        ));
    let host = Host::start(options).await;
    let tools = host.tools().await;
    let tool = tools.iter().find(|t| t.name == "delete_record").unwrap();
    let properties = &tool.input_schema["properties"];
    assert_eq!(
        properties["id"],
        json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
    );
    assert_eq!(properties["ratio"], json!({"type": "number"}));
    assert_eq!(properties["when"]["format"], "date");
    // The published bound is the one enforced.
    let issue = host
        .tool_error("delete_record", json!({"id": 1.9e19}))
        .await;
    assert_eq!(issue["code"], "VALIDATION_ERROR", "{issue}");
    assert!(
        issue["message"].as_str().unwrap().contains("maximum"),
        "{issue}"
    );
}
