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

#[test]
fn copies_of_a_component_compiled_in_one_load_compile_their_shared_functions_once() {
    // Two distinct components (different bytes, digests and tool names)
    // built from one source: the second is made of the first's functions.
    let runtime = toolhost::engine::Runtime::new(64 << 20).unwrap();
    let first = component("numbered");
    let placeholder = b"numbered_XXXXXX";
    let at = first
        .windows(placeholder.len())
        .position(|w| w == placeholder)
        .expect("numbered.wasm holds its placeholder tool name");
    let mut second = first.clone();
    second[at..at + placeholder.len()].copy_from_slice(b"numbered_000002");

    wasmtime::component::Component::new(&runtime.engine, &first).unwrap();
    let kept = runtime.functions.len();
    assert!(
        kept > 0,
        "the first compile keeps its functions for the load"
    );
    // Identical functions within one component are compiled once too.
    let reused_by_first = runtime.functions.reused();
    wasmtime::component::Component::new(&runtime.engine, &second).unwrap();
    let reused_by_second = runtime.functions.reused() - reused_by_first;
    assert!(
        reused_by_second * 10 >= kept * 9,
        "the copy reuses (nearly) every function: {reused_by_second} of {kept}"
    );
    // Alone the copy compiles almost nothing anew; beside other tests'
    // compiles (wasmtime compiles functions in parallel) up to about a
    // seventh of them have been seen compiled again, so the bound is a
    // quarter.
    let compiled_by_second = runtime.functions.len() - kept;
    assert!(
        compiled_by_second * 4 <= kept,
        "and compiles few anew: {compiled_by_second} (kept {kept}, reused {reused_by_second}, the first reused {reused_by_first})"
    );

    // The end of a load empties it, so its memory goes back.
    runtime.functions.clear();
    assert!(runtime.functions.is_empty());
    assert_eq!(runtime.functions.reused(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_compiles_only_in_one_of_the_turns_two_per_core_and_gives_it_back() {
    // A first start hands the loader every file at once; two compiles per
    // core run, the rest wait their turn (side by side they would only add
    // threads and a peak of compiler memory the allocator keeps).
    let config = toolhost::config::Config::parse(
        "[plugins.numbered]\nfiles = [\"numbered.wasm\"]\nlimits = { compile_timeout_secs = 4 }\n",
    )
    .unwrap();
    let loader = toolhost::plugin::Loader::from_config(config, None).expect("the loader builds");
    let permits = toolhost::engine::compile_permits();
    assert_eq!(loader.runtime.compiling.available_permits(), permits);

    // Every turn taken: a compile waits. Alone, this one takes well under
    // a second in a debug build.
    let turns = loader
        .runtime
        .compiling
        .clone()
        .acquire_many_owned(permits as u32)
        .await
        .unwrap();
    let compiling = {
        let loader = loader.clone();
        tokio::spawn(async move { loader.compile("numbered.wasm", component("numbered")).await })
    };
    let mut compiling = std::pin::pin!(compiling);
    let waited = tokio::time::timeout(std::time::Duration::from_secs(5), &mut compiling).await;
    assert!(
        waited.is_err(),
        "the compile waits while every turn is taken"
    );
    assert!(loader.runtime.functions.is_empty(), "and has not begun");

    // A turn given back: it compiles, and the 5 s it waited are not held
    // against its block's `limits.compile_timeout_secs` (4 s); it gives
    // the turn back.
    drop(turns);
    compiling
        .await
        .unwrap()
        .expect("it compiles once it has a turn");
    assert!(!loader.runtime.functions.is_empty());
    assert_eq!(loader.runtime.compiling.available_permits(), permits);
}
