//! Hot reload: a running server follows its plugin directory and tells
//! clients, in both eras (legacy `notifications/tools/list_changed`;
//! 2026-07-28 `subscriptions/listen` streams).

use std::path::Path;

use rmcp::model::ServerNotification;
use rmcp::service::Subscription;
use serde_json::json;

use crate::support::{ERAS, Era, Host, HostOptions, Recorder, component};

/// Counts tool-list changes the way each era receives them.
struct Changes {
    stream: Option<Subscription>,
    seen: usize,
}

impl Changes {
    async fn open(host: &Host, era: Era) -> Changes {
        let stream = match era {
            Era::Legacy => None,
            Era::Modern => Some(host.listen().await),
        };
        Changes { stream, seen: 0 }
    }

    /// Waits for the next change notification.
    async fn next(&mut self, host: &Host) {
        match &mut self.stream {
            None => {
                let want = self.seen + 1;
                host.wait_for_seen(|s| s.list_changed >= want).await;
            }
            Some(stream) => {
                let n = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
                    .await
                    .expect("a change arrives in time")
                    .expect("the stream works")
                    .expect("the stream is open");
                assert!(
                    matches!(n, ServerNotification::ToolListChangedNotification(_)),
                    "{n:?}"
                );
            }
        }
        self.seen += 1;
    }

    /// How many notifications arrived that were not yet consumed with `next`.
    async fn unread(&mut self, host: &Host) -> usize {
        match &mut self.stream {
            None => host.handler.seen.lock().unwrap().list_changed - self.seen,
            Some(stream) => {
                let mut n = 0;
                while let Ok(Ok(Some(_))) =
                    tokio::time::timeout(std::time::Duration::from_millis(200), stream.next()).await
                {
                    n += 1;
                }
                n
            }
        }
    }
}

async fn names(host: &Host) -> Vec<String> {
    host.tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// Writes `bytes` as `name` the way editors and build tools do: to a
/// temporary file, then renamed into place.
fn write_then_rename(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

#[tokio::test]
async fn add_replace_and_delete_update_the_tool_list_and_tell_clients() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        let mut changes = Changes::open(&host, era).await;
        assert_eq!(names(&host).await, ["fetch_url", "greet"]);

        // Add: copied in, in chunks.
        let bytes = component("misbehaving");
        let path = host.plugins.join("extra.wasm");
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&path).unwrap();
            for chunk in bytes.chunks(bytes.len() / 4 + 1) {
                f.write_all(chunk).unwrap();
                f.flush().unwrap();
            }
        }
        changes.next(&host).await;
        let listed = names(&host).await;
        assert!(
            listed.contains(&"crash".to_string()) && listed.contains(&"greet".to_string()),
            "{era:?} {listed:?}"
        );
        host.tool_error("fail", json!({})).await;

        // Replace with a changed tool list (write-then-rename).
        write_then_rename(&host.plugins, "extra.wasm", &component("hello"));
        changes.next(&host).await;
        // hello's tools are already served by hello.wasm: the newcomer's
        // clashing tools are refused, so only hello's remain.
        assert_eq!(names(&host).await, ["fetch_url", "greet"], "{era:?}");
        host.wait_for_stderr("extra.wasm was refused").await;

        // Delete: the tools go, and names hello.wasm held pass to the file
        // next in line (extra.wasm, which now has hello's bytes).
        std::fs::remove_file(host.plugins.join("hello.wasm")).unwrap();
        changes.next(&host).await;
        assert_eq!(names(&host).await, ["fetch_url", "greet"], "{era:?}");
        assert_eq!(
            host.ok("greet", json!({"name": "E"})).await["message"],
            "Hello, E!"
        );
        std::fs::remove_file(host.plugins.join("extra.wasm")).unwrap();
        changes.next(&host).await;
        assert!(names(&host).await.is_empty(), "{era:?}");
        assert!(host.call("crash", json!({})).await.is_err());
    }
}

#[tokio::test]
async fn a_corrupt_replacement_leaves_the_old_version_serving() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        let mut changes = Changes::open(&host, era).await;
        write_then_rename(&host.plugins, "hello.wasm", b"\0asm\x0d\0\x01\0 truncated");
        host.wait_for_stderr("the previous one keeps serving").await;
        assert_eq!(
            host.ok("greet", json!({"name": "Still"})).await["message"],
            "Hello, Still!"
        );
        assert_eq!(names(&host).await, ["fetch_url", "greet"]);
        assert_eq!(
            changes.unread(&host).await,
            0,
            "{era:?}: a failed reload is not a change"
        );
    }
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

#[tokio::test]
async fn rewriting_the_same_bytes_is_not_a_change() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["hello"]).era(era)).await;
        let mut changes = Changes::open(&host, era).await;
        write_then_rename(&host.plugins, "hello.wasm", &component("hello"));
        host.wait_for_stderr("rescanned: no changes").await;
        // A real change afterwards produces exactly one notification.
        std::fs::write(host.plugins.join("more.wasm"), component("misbehaving")).unwrap();
        changes.next(&host).await;
        assert_eq!(
            changes.unread(&host).await,
            0,
            "{era:?}: the identical rewrite sent nothing"
        );
    }
}

#[tokio::test]
async fn no_watch_turns_watching_off() {
    let watching = Host::start(HostOptions::new(&["hello"])).await;
    watching.wait_for_stderr("serving on stdio").await;
    assert!(
        watching
            .stderr
            .lock()
            .unwrap()
            .contains("for plugin changes")
    );

    let host = Host::start(HostOptions::new(&["hello"]).arg("--no-watch")).await;
    // The watch is set up before serving starts, so by now it would be on.
    let stderr = host.wait_for_stderr("serving on stdio").await;
    assert!(!stderr.contains("for plugin changes"), "{stderr}");
}
