//! Start-up: `initialize` is answered while the plugin directory loads,
//! `tools/list` and `tools/call` wait for that load (up to
//! `host.load_wait_secs`), each distinct content compiles once, and tool
//! names keep their owner across a restart.

use serde_json::json;

use crate::support::{Changes, ERAS, Host, HostOptions, Recorder, component};

async fn names(host: &Host) -> Vec<String> {
    host.tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// `toolhost.toml` for a misbehaving component whose listing waits until
/// `server` releases its `/hold` requests.
fn held_listing(server: &Recorder, host_table: &str) -> String {
    format!(
        "{host_table}[plugins.misbehaving.config]\nlisting_waits_for = \"{}/hold\"\n\n{}",
        server.url,
        server.allow_block("misbehaving")
    )
}

/// Starts a host, failing the test if `initialize` is not answered.
async fn start(options: HostOptions) -> Host {
    tokio::time::timeout(std::time::Duration::from_secs(30), Host::start(options))
        .await
        .expect("initialize is answered while the plugin directory is loading")
}

#[tokio::test]
async fn initialize_is_answered_while_loading_and_tools_list_waits_for_the_load() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = start(
            HostOptions::new(&["misbehaving"])
                .era(era)
                .config(held_listing(&server, "")),
        )
        .await;
        // The load is in progress: the component is listing its tools and
        // waits on the server.
        server.wait_for_requests(1).await;
        assert!(
            !host
                .stderr
                .lock()
                .unwrap()
                .contains("plugin directory loaded"),
            "{era:?}: the load cannot be done while its listing is held"
        );
        let listing = {
            let client = host.client.peer().clone();
            tokio::spawn(async move { client.list_all_tools().await })
        };
        host.wait_for_stderr("a request waits for the plugin directory to load")
            .await;
        server.release();
        let tools = listing.await.unwrap().expect("tools/list is answered");
        assert!(
            tools.iter().any(|t| t.name == "crash"),
            "{era:?}: the answer waited for the load: {tools:?}"
        );
        // Nothing was answered early, so no list change is sent.
        assert_eq!(host.handler.seen.lock().unwrap().list_changed, 0, "{era:?}");
        host.tool_error("fail", json!({})).await;
    }
}

#[tokio::test]
async fn past_load_wait_secs_the_list_is_answered_and_a_change_follows() {
    for era in ERAS {
        let server = Recorder::start().await;
        let host = start(
            HostOptions::new(&["misbehaving"])
                .era(era)
                .config(held_listing(&server, "[host]\nload_wait_secs = 0\n\n")),
        )
        .await;
        let mut changes = Changes::listen(&host, era).await;
        server.wait_for_requests(1).await;
        assert!(names(&host).await.is_empty(), "{era:?}: answered at once");
        host.wait_for_stderr(
            "answering before the plugin directory has loaded (host.load_wait_secs)",
        )
        .await;
        server.release();
        changes.next(&host).await;
        assert!(names(&host).await.contains(&"crash".to_string()), "{era:?}");
    }
}

#[tokio::test]
async fn a_call_answered_before_the_load_is_in_says_still_loading_and_how_far_not_unknown() {
    let server = Recorder::start().await;
    let host = start(
        HostOptions::new(&["misbehaving", "hello"])
            .config(held_listing(&server, "[host]\nload_wait_secs = 0\n\n")),
    )
    .await;
    server.wait_for_requests(1).await;
    let error = host
        .call("crash", json!({}))
        .await
        .expect_err("not served yet")
        .to_string();
    assert!(
        error.contains("no tool \"crash\" is served yet: the plugin directory is still loading (")
            && error.contains("of 2 components compiled")
            && error.contains("of 2 files loaded"),
        "{error}"
    );
    assert!(!error.contains("unknown tool"), "{error}");
    server.release();
    host.wait_for_stderr("plugin directory loaded").await;
    // Once loaded, a name nobody serves is unknown again.
    let error = host.call("nothing_here", json!({})).await.unwrap_err();
    assert!(error.to_string().contains("unknown tool"), "{error}");
}

#[tokio::test]
async fn copies_of_one_component_compile_once_at_start_and_on_reload() {
    let mut options = HostOptions::new(&["hello"]).arg("--no-cache");
    for i in 0..4 {
        options = options.file(&format!("copy_{i}.wasm"), component("misbehaving"));
    }
    let host = Host::start(options).await;
    let stderr = host.wait_for_stderr("plugin directory loaded").await;
    assert!(
        stderr.contains("5 files, 5 read, 2 compiled, 5 loaded"),
        "{stderr}"
    );
    // A fifth copy, dropped in while serving, reuses the compiled form.
    let tmp = host.plugins.join(".copy.tmp");
    std::fs::write(&tmp, component("misbehaving")).unwrap();
    std::fs::rename(&tmp, host.plugins.join("copy_4.wasm")).unwrap();
    let stderr = host.wait_for_stderr("plugin directory rescanned").await;
    let rescan = stderr
        .lines()
        .find(|l| l.contains("plugin directory rescanned"))
        .unwrap();
    assert!(rescan.contains("0 compiled, 1 loaded"), "{rescan}");
}

#[tokio::test]
async fn a_restart_does_not_give_a_tool_name_to_a_file_dropped_in_later() {
    // While serving, a file dropped in later cannot take names in use.
    let host = Host::start(HostOptions::new(&["hello"])).await;
    assert_eq!(names(&host).await, ["fetch_url", "greet"]);
    let tmp = host.plugins.join(".incoming.tmp");
    std::fs::write(&tmp, component("hello")).unwrap();
    std::fs::rename(&tmp, host.plugins.join("a_hello.wasm")).unwrap();
    host.wait_for_stderr("a_hello.wasm was refused").await;
    assert_eq!(
        host.ok("greet", json!({"name": "A"})).await["message"],
        "Hello, A!"
    );
    drop(host);

    // The same directory after a restart: a_hello.wasm sorts first, yet it
    // does not take greet; neither file serves the ambiguous names, and the
    // error names both files.
    let restarted =
        Host::start(HostOptions::new(&["hello"]).file("a_hello.wasm", component("hello"))).await;
    assert!(names(&restarted).await.is_empty());
    let stderr = restarted
        .wait_for_stderr("tool \"greet\" is not served")
        .await;
    assert!(
        stderr.contains("a_hello.wasm and hello.wasm offer it"),
        "{stderr}"
    );
    assert!(restarted.call("greet", json!({"name": "B"})).await.is_err());

    // The operator removes one file; the other serves the names.
    std::fs::remove_file(restarted.plugins.join("a_hello.wasm")).unwrap();
    restarted.wait_for_seen(|s| s.list_changed >= 1).await;
    assert_eq!(names(&restarted).await, ["fetch_url", "greet"]);
    assert_eq!(
        restarted.ok("greet", json!({"name": "C"})).await["message"],
        "Hello, C!"
    );
}

#[tokio::test]
async fn a_client_that_leaves_before_initialize_ends_the_server_cleanly() {
    // A client that closes stdin before `initialize`, while the plugin
    // directory is still loading, is not an error: exit 0, no ERROR line.
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    for name in ["hello", "echo", "offers", "katana"] {
        std::fs::write(plugins.join(format!("{name}.wasm")), component(name)).unwrap();
    }
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--no-cache", "--plugins"])
        .arg(&plugins)
        .env_remove("TOOLHOST_LOG")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), run)
        .await
        .expect("toolhost exits once stdin is closed")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("ERROR"), "{stderr}");
    assert!(!stderr.contains("Error:"), "{stderr}");
    assert!(out.stdout.is_empty(), "stdout carries the protocol only");
}

#[tokio::test]
async fn a_credential_no_allow_rule_reaches_is_warned_about_at_start() {
    // The rule names port 8443; the credential has no `port`, so 443: it
    // would never be sent, and the operator is told so at start.
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[plugins.hello]\n\
         [[plugins.hello.allow]]\nhost = \"api.example.com\"\nport = 8443\n\
         [[plugins.hello.credentials]]\nhost = \"api.example.com\"\nheader = \"X-Key\"\nvalue = \"k\"\n",
    )
    .unwrap();
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--no-watch", "--plugins"])
        .arg(&plugins)
        .arg("--config")
        .arg(&config)
        .env_remove("TOOLHOST_LOG")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), run)
        .await
        .expect("toolhost exits once stdin is closed")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("WARN")
            && stderr.contains("`credentials` entry 1 (X-Key for api.example.com:443)")
            && stderr.contains("never sent")
            && !stderr.contains("\"k\""),
        "{stderr}"
    );
}
