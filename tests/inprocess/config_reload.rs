//! Config reload in-process: removing a block serves its files under
//! defaults, with list_changed. Config reloads whose outcome is read from
//! the log, and the `list` command, are the process tier's
//! (`tests/e2e/config_reload.rs`).

use serde_json::json;

use crate::support::{Changes, ERAS, Host, HostOptions, Recorder};

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn removing_a_block_serves_its_files_under_defaults_with_list_changed() {
    let recorder = Recorder::start().await;
    let block = format!(
        "[plugins.web]\nfiles = [\"hello.wasm\"]\nprefix = \"web\"\n{}",
        recorder.allow_block("web")
    );
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era).config(block.clone())).await;
        let mut changes = Changes::open(&host, era).await;
        let url = format!("{}/before", recorder.url);
        assert_eq!(
            host.ok("web.fetch_url", json!({ "url": url })).await["status"],
            200
        );

        host.write_config("");
        changes.next(&host).await;
        // The block's names went; the file serves as a file no block
        // covers: its own names, no network.
        assert_eq!(
            names(&host.tools().await),
            ["fetch_url", "greet"],
            "{era:?}"
        );
        let err = host
            .call("web.fetch_url", json!({ "url": url }))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("unknown tool"), "{err}");
        let before = recorder.received().len();
        let issue = host
            .tool_error(
                "fetch_url",
                json!({"url": format!("{}/after", recorder.url)}),
            )
            .await;
        assert_eq!(issue["code"], "PERMISSION_DENIED", "{era:?}: {issue}");
        assert_eq!(recorder.received().len(), before);

        // Added back: its names and its allow-list return.
        host.write_config(&block);
        changes.next(&host).await;
        assert_eq!(names(&host.tools().await), ["web.fetch_url", "web.greet"]);
        assert_eq!(
            host.ok("web.fetch_url", json!({ "url": url })).await["status"],
            200
        );
    }
}
