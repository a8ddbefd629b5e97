//! Hot reload: a running server follows its plugin directory and tells
//! clients, in both eras (legacy `notifications/tools/list_changed`;
//! 2026-07-28 `subscriptions/listen` streams).

use serde_json::json;

use crate::support::{Changes, ERAS, Era, Host, HostOptions, component, write_then_rename};

async fn names(host: &Host) -> Vec<String> {
    host.tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
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

/// How often `needle` occurs in the host's stderr so far.
fn count_in_stderr(host: &Host, needle: &str) -> usize {
    host.stderr.lock().unwrap().matches(needle).count()
}

/// Waits until `needle` occurs `n` times in the host's stderr.
async fn wait_for_count(host: &Host, needle: &str, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while count_in_stderr(host, needle) < n {
        assert!(
            std::time::Instant::now() < deadline,
            "stderr never held {needle:?} {n} times:\n{}",
            host.stderr.lock().unwrap()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The quiet period the watcher is observed over after a change: thirteen
/// debounce windows, in which a watcher woken by its own reads would
/// rescan about twelve times.
const OBSERVED: std::time::Duration = std::time::Duration::from_secs(1);

#[tokio::test]
async fn after_one_change_the_watcher_rescans_once_and_goes_quiet() {
    let host = Host::start(HostOptions::new(&["hello"])).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    write_then_rename(&host.plugins, "extra.wasm", &component("misbehaving"));
    changes.next(&host).await;
    wait_for_count(&host, "plugin directory rescanned", 1).await;
    // The subject of this test is what happens over a quiet period, so it
    // waits one out.
    tokio::time::sleep(OBSERVED).await;
    let stderr = host.stderr.lock().unwrap().clone();
    let rescans: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("plugin directory rescanned"))
        .collect();
    assert_eq!(rescans.len(), 1, "{stderr}");
    // Only the new file was read: hello.wasm was not re-read, unless it
    // changed within the racy window before the start-up scan.
    assert!(
        rescans[0].contains("1 read") || rescans[0].contains("2 read"),
        "{}",
        rescans[0]
    );
    assert!(rescans[0].contains("1 loaded"), "{}", rescans[0]);
}

#[tokio::test]
async fn a_garbage_file_is_reported_once_per_content() {
    let host = Host::start(HostOptions::new(&["hello"])).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    let error = "skipped";
    write_then_rename(&host.plugins, "broken.wasm", b"garbage, not a component");
    wait_for_count(&host, error, 1).await;

    // Another change makes another scan; the broken file, unchanged, is
    // neither loaded nor reported again.
    write_then_rename(&host.plugins, "extra.wasm", &component("misbehaving"));
    changes.next(&host).await;
    wait_for_count(&host, "plugin directory rescanned", 2).await;
    tokio::time::sleep(OBSERVED).await;
    let stderr = host.stderr.lock().unwrap().clone();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains(error)).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("broken.wasm"), "{}", errors[0]);

    // Different garbage is a different content: reported once more.
    write_then_rename(
        &host.plugins,
        "broken.wasm",
        b"other garbage, still no component",
    );
    wait_for_count(&host, error, 2).await;
    assert!(names(&host).await.contains(&"crash".to_string()));
}

#[tokio::test]
async fn a_file_name_that_is_not_utf8_is_skipped_with_an_error() {
    use std::os::unix::ffi::OsStrExt;
    let host = Host::start(HostOptions::new(&["hello"])).await;
    assert_eq!(names(&host).await, ["fetch_url", "greet"]);
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.wasm");
    let tmp = host.plugins.join(".incoming.tmp");
    std::fs::write(&tmp, component("misbehaving")).unwrap();
    std::fs::rename(&tmp, host.plugins.join(name)).unwrap();
    let stderr = host
        .wait_for_stderr("the file name is not valid UTF-8")
        .await;
    assert!(stderr.contains("rename it"), "{stderr}");
    assert_eq!(names(&host).await, ["fetch_url", "greet"]);
}
