//! Hot reload in-process: the reload task follows the plugin directory
//! while calls run, in both eras. Reloads whose outcome is read from the
//! log, and `--no-watch`, are the process tier's (`tests/e2e/hot_reload.rs`).

use serde_json::json;

use crate::support::{Changes, ERAS, Host, HostOptions, Recorder, component, write_then_rename};

async fn names(host: &Host) -> Vec<String> {
    host.tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[tokio::test]
async fn a_call_in_flight_finishes_on_the_version_it_started_with() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = Host::start(
            HostOptions::new(&["misbehaving"])
                .era(era)
                .config(server.allow_block("misbehaving")),
        )
        .await;
        let mut changes = Changes::open(&host, era).await;
        let url = format!("{}/hold", server.url);
        let call = {
            let client = host.client.peer().clone();
            tokio::spawn(async move {
                let Some(args) = json!({"url": url}).as_object().cloned() else {
                    unreachable!()
                };
                client
                    .call_tool(rmcp::model::CallToolRequestParams::new("get").with_arguments(args))
                    .await
            })
        };
        // The call is now inside the old version, waiting on the server.
        server.wait_for_requests(1).await;
        write_then_rename(&host.plugins, "misbehaving.wasm", &component("hello"));
        changes.next(&host).await;
        assert_eq!(
            names(&host).await,
            ["fetch_url", "greet"],
            "{era:?}: the new version serves"
        );
        server.release();
        let result = call.await.unwrap().expect("the old call completes");
        assert_eq!(result.structured_content.unwrap()["status"], 200, "{era:?}");
        // New calls see the new version.
        assert!(
            host.call("get", json!({"url": "http://127.0.0.1/"}))
                .await
                .is_err()
        );
    }
}

#[tokio::test]
async fn rapid_successive_writes_end_in_one_consistent_state() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        let mut changes = Changes::open(&host, era).await;
        let (a, b) = (component("misbehaving"), component("hello"));
        for i in 0..10 {
            std::fs::write(
                host.plugins.join("burst.wasm"),
                if i % 2 == 0 { &a } else { &b },
            )
            .unwrap();
        }
        std::fs::write(host.plugins.join("burst.wasm"), &a).unwrap();
        changes.next(&host).await;
        // Whatever intermediate states were seen, the last one wins.
        let want = [
            "big_output",
            "confirm_storm",
            "confirm_then_post",
            "crash",
            "fail",
            "fetch_url",
            "get",
            "greet",
        ];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let listed = names(&host).await;
            if want.iter().all(|w| listed.contains(&w.to_string())) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{era:?}: final state never served: {listed:?}"
            );
            changes.next(&host).await;
        }
        host.tool_error("fail", json!({})).await;
    }
}
