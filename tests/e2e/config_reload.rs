//! Per-plugin names and config reload: a block's `prefix` serves its tools
//! under `PREFIX.TOOL` (two components offering the same name coexist),
//! checked against MCP's name rules; `serve` applies a valid edit of
//! `toolhost.toml` without a restart (a rotated API key, a new prefix, a
//! removed block), keeps the old settings on an invalid one, and lets calls
//! in flight finish with the settings they started with. A syntax error is
//! reported by line, column and key, never by the text written there (it
//! may be a credential); an edit refused because a component would not load
//! applies once the component is fixed.

use std::process::Output;

use serde_json::json;
use statuspro_sandbox::{SandboxConfig, seed};

use crate::statuspro::{COMPONENTS, config as statuspro_config};
use crate::support::{
    Changes, ERAS, Elicitation, Era, Host, HostOptions, Recorder, component, test_cache_home,
    write_then_rename,
};

/// A second copy of `hello` under its own block.
const TWO: &str = "[plugins.two]\nfiles = [\"hello2.wasm\"]\nprefix = \"two\"\n";

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn two_components_offering_the_same_names_are_served_side_by_side_under_prefixes() {
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["hello"])
                .file("hello2.wasm", component("hello"))
                .file("hello3.wasm", component("hello"))
                .era(era)
                .config(format!(
                    "{TWO}[plugins.three]\nfiles = [\"hello3.wasm\"]\nprefix = \"three\"\nprefix_separator = \"_\"\n"
                )),
        )
        .await;
        assert_eq!(
            names(&host.tools().await),
            [
                "fetch_url",
                "greet",
                "three_fetch_url",
                "three_greet",
                "two.fetch_url",
                "two.greet"
            ],
            "{era:?}"
        );
        // Each name reaches its own file, which is called with its own name.
        for tool in ["greet", "two.greet", "three_greet"] {
            let out = host.ok(tool, json!({"name": "Ada"})).await;
            assert_eq!(out["message"], "Hello, Ada!", "{era:?} {tool}: {out}");
        }
        // The component's own name is not served under a prefixed block.
        let err = host.call("two.two.greet", json!({})).await.unwrap_err();
        assert!(err.to_string().contains("unknown tool"), "{err}");
    }
}

/// Runs `toolhost list` over a directory holding `hello.wasm` and
/// `hello2.wasm`, with `config`.
fn list(config: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    std::fs::write(plugins.join("hello2.wasm"), component("hello")).unwrap();
    let path = dir.path().join("toolhost.toml");
    std::fs::write(&path, config).unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["list", "--plugins"])
        .arg(&plugins)
        .arg("--config")
        .arg(&path)
        .env("XDG_CACHE_HOME", test_cache_home())
        .env("TOOLHOST_LOG", "warn")
        .output()
        .unwrap()
}

#[test]
fn list_shows_the_served_name_and_the_components_own_name() {
    let out = list(TWO);
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("TOOL") && lines[0].contains("OWN NAME"),
        "{table}"
    );
    let row = lines
        .iter()
        .find(|l| l.starts_with("two.greet "))
        .unwrap_or_else(|| panic!("no two.greet row:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..2], ["two.greet", "greet"], "{table}");
    assert!(row.ends_with("hello2.wasm"), "{table}");
    let plain = lines.iter().find(|l| l.starts_with("greet ")).unwrap();
    assert!(plain.ends_with("hello.wasm"), "{table}");
}

#[test]
fn an_invalid_prefix_is_refused_with_the_key_and_the_rule() {
    for (prefix, separator) in [("two words", "."), ("", "."), ("two", "/"), ("ünï", ".")] {
        let out = list(&format!(
            "[plugins.two]\nfiles = [\"hello2.wasm\"]\nprefix = {prefix:?}\nprefix_separator = {separator:?}\n"
        ));
        assert!(
            !out.status.success(),
            "{prefix:?} {separator:?} was accepted"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("[plugins.two]"), "{err}");
        let key = if separator == "/" {
            "`prefix_separator` must be"
        } else {
            "`prefix` must be"
        };
        assert!(err.contains(key), "{prefix:?}: {err}");
    }
    let out = list("[plugins.two]\nfiles = [\"hello2.wasm\"]\nprefix_separator = \"_\"\n");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`prefix_separator` is set without `prefix`")
    );

    // A prefix within the rules that makes a served name too long: the
    // component is refused at load, naming the block's key; the rest serves.
    let long = "p".repeat(120);
    let out = list(&format!(
        "[plugins.two]\nfiles = [\"hello2.wasm\"]\nprefix = \"{long}\"\n"
    ));
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hello2.wasm")
            && err.contains("longer than the 128 characters MCP allows")
            && err.contains("shorten `prefix` in [plugins.two]"),
        "{err}"
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        !table.contains("hello2.wasm") && table.contains("greet"),
        "{table}"
    );
}

#[tokio::test]
async fn adding_and_removing_a_prefix_tells_clients_and_the_new_names_work() {
    for http in [false, true] {
        for era in ERAS {
            let options = HostOptions::new(&["hello"]).era(era);
            let options = if http { options.http() } else { options };
            let host = Host::start(options).await;
            let mut changes = Changes::open(&host, era).await;

            host.write_config("[plugins.hello]\nprefix = \"hi\"\n");
            changes.next(&host).await;
            assert_eq!(names(&host.tools().await), ["hi.fetch_url", "hi.greet"]);
            let out = host.ok("hi.greet", json!({"name": "Bo"})).await;
            assert_eq!(out["message"], "Hello, Bo!");
            let err = host.call("greet", json!({"name": "Bo"})).await.unwrap_err();
            assert!(err.to_string().contains("unknown tool"), "{err}");

            host.write_config("[plugins.hello]\n");
            changes.next(&host).await;
            assert_eq!(names(&host.tools().await), ["fetch_url", "greet"]);
            host.ok("greet", json!({"name": "Bo"})).await;
            let stderr = host.wait_for_stderr("configuration reloaded").await;
            assert!(!stderr.contains("was not applied"), "{stderr}");
        }
    }
}

#[tokio::test]
async fn an_invalid_edit_changes_nothing_and_is_logged_once() {
    let recorder = Recorder::start().await;
    let good = format!(
        "[plugins.hello]\nprefix = \"hi\"\n{}",
        recorder.allow_block("hello")
    );
    let host = Host::start(HostOptions::new(&["hello"]).config(good.clone())).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    let fetch = json!({"url": format!("{}/x", recorder.url)});
    assert_eq!(host.ok("hi.fetch_url", fetch.clone()).await["status"], 200);

    // Invalid: a bad prefix; then the same bytes saved again.
    let bad = good.replace("prefix = \"hi\"", "prefix = \"h i\"");
    host.write_config(&bad);
    host.wait_for_stderr("was not applied").await;
    host.write_config(&bad);
    // Still the old names and the old allow-list.
    assert_eq!(names(&host.tools().await), ["hi.fetch_url", "hi.greet"]);
    assert_eq!(host.ok("hi.fetch_url", fetch.clone()).await["status"], 200);

    // Valid again, without the allow-list: applied (events are handled in
    // order, so the second save of the bad bytes was handled before).
    host.write_config("[plugins.hello]\nprefix = \"hi\"\n");
    let stderr = host.wait_for_stderr("configuration reloaded").await;
    assert_eq!(
        stderr.matches("was not applied").count(),
        1,
        "the same invalid content is reported once:\n{stderr}"
    );
    assert!(stderr.contains("`prefix` must be"), "{stderr}");
    let before = recorder.received().len();
    let issue = host
        .tool_error(
            "hi.fetch_url",
            json!({"url": format!("{}/y", recorder.url)}),
        )
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED", "{issue}");
    assert_eq!(recorder.received().len(), before, "nothing left the host");
    // The tools did not change: no list change was sent.
    assert_eq!(changes.unread(&host).await, 0);
}

#[tokio::test]
async fn under_unmatched_files_skip_removing_a_block_removes_its_tools_with_list_changed() {
    let recorder = Recorder::start().await;
    let skip = "[host]\nunmatched_files = \"skip\"\n";
    let web = format!(
        "[plugins.web]\nfiles = [\"hello.wasm\"]\nprefix = \"web\"\n{}",
        recorder.allow_block("web")
    );
    let url = json!({ "url": format!("{}/x", recorder.url) });
    for era in ERAS {
        let host = Host::start(
            HostOptions::new(&["hello"])
                .file("hello2.wasm", component("hello"))
                .era(era)
                .config(format!("{skip}{TWO}")),
        )
        .await;
        // At start, the file no block matches is not served.
        assert_eq!(
            names(&host.tools().await),
            ["two.fetch_url", "two.greet"],
            "{era:?}"
        );
        let stderr = host.wait_for_stderr("not served").await;
        assert!(
            stderr.contains("hello.wasm") && stderr.contains("add a block"),
            "{stderr}"
        );
        let mut changes = Changes::open(&host, era).await;

        // A block added: its file is served with the block's settings.
        host.write_config(&format!("{skip}{TWO}{web}"));
        changes.next(&host).await;
        assert_eq!(
            names(&host.tools().await),
            ["two.fetch_url", "two.greet", "web.fetch_url", "web.greet"]
        );
        assert_eq!(host.ok("web.fetch_url", url.clone()).await["status"], 200);

        // The block removed: its tools go, with a list change; the other
        // block's stay, and nothing of the removed one can be called.
        host.write_config(&format!("{skip}{TWO}"));
        changes.next(&host).await;
        assert_eq!(
            names(&host.tools().await),
            ["two.fetch_url", "two.greet"],
            "{era:?}"
        );
        let before = recorder.received().len();
        for tool in ["web.fetch_url", "fetch_url"] {
            let err = host.call(tool, url.clone()).await.unwrap_err();
            assert!(err.to_string().contains("unknown tool"), "{tool}: {err}");
        }
        assert_eq!(recorder.received().len(), before, "nothing left the host");
        host.wait_for_stderr("no longer served").await;

        // A file dropped in without a block is not served either.
        std::fs::write(host.plugins.join("echo.wasm"), component("echo")).unwrap();
        let stderr = host.wait_for_stderr("echo.wasm").await;
        assert!(stderr.contains("not served"), "{stderr}");
        assert_eq!(names(&host.tools().await), ["two.fetch_url", "two.greet"]);

        // Back to the default: files no block matches serve under their
        // own names, with no network.
        host.write_config(TWO);
        changes.next(&host).await;
        assert_eq!(
            names(&host.tools().await),
            ["echo", "fetch_url", "greet", "two.fetch_url", "two.greet"]
        );
        assert_eq!(changes.unread(&host).await, 0);
    }
}

#[tokio::test]
async fn a_rotated_api_key_is_used_by_new_calls_and_never_mid_call() {
    // The upstream accepts both keys while the rotation lasts; its request
    // log records which key each request carried.
    let sandbox = statuspro_sandbox::start(SandboxConfig {
        api_key: "old-key".into(),
        also_accepted_keys: vec!["new-key".into()],
        ..SandboxConfig::default()
    })
    .await
    .unwrap();
    let config = statuspro_config(&sandbox, "");
    let host = Host::start(
        HostOptions::new(&COMPONENTS)
            .env("STATUSPRO_API_KEY", "old-key")
            .elicitation(Elicitation::AcceptWhenReleased)
            .config(config.clone()),
    )
    .await;
    let keys = || -> Vec<(String, Option<String>)> {
        sandbox
            .requests()
            .into_iter()
            .map(|r| (format!("{} {}", r.method, r.path), r.api_key))
            .collect()
    };
    host.ok("list_statuses", json!({})).await;

    // A mutation in flight: it has read with the old key and waits for the
    // user's yes.
    let order = seed::order_with_viable_next("st000003").unwrap();
    let mutation = host.call(
        "update_order_status",
        json!({"order_id": order, "status_code": "st000003", "comment": "Rotated.", "confirm": true}),
    );
    let rotate = async {
        host.wait_for_seen(|s| !s.elicitations.is_empty()).await;
        let before_swap = sandbox.requests().len();
        host.write_config(&config.replace("${STATUSPRO_API_KEY}", "new-key"));
        host.wait_for_stderr("configuration reloaded").await;
        // A call that starts now uses the new key.
        host.ok("list_statuses", json!({})).await;
        let during: Vec<_> = keys()[before_swap..].to_vec();
        host.handler.release_elicitations();
        during
    };
    let (result, during) = tokio::join!(mutation, rotate);
    let result = result.expect("the call succeeds");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.structured_content.as_ref().unwrap()["result"],
        "confirmed"
    );
    assert!(!during.is_empty());
    assert!(
        during
            .iter()
            .all(|(_, key)| key.as_deref() == Some("new-key")),
        "{during:?}"
    );

    // Every request of the mutation, the POST after the swap included,
    // carried the key it started with.
    let all = keys();
    let post = all
        .iter()
        .find(|(line, _)| line.starts_with("POST "))
        .expect("the change was sent");
    assert_eq!(post.1.as_deref(), Some("old-key"), "{all:?}");
    let old: Vec<_> = all
        .iter()
        .filter(|(_, k)| k.as_deref() == Some("old-key"))
        .collect();
    let new: Vec<_> = all
        .iter()
        .filter(|(_, k)| k.as_deref() == Some("new-key"))
        .collect();
    assert_eq!(old.len() + new.len(), all.len(), "{all:?}");
    assert!(
        old.len() >= 3,
        "the first read, the mutation's read and its POST: {all:?}"
    );

    // Later calls use the new key.
    let seen = all.len();
    host.ok("get_order", json!({"order_id": order})).await;
    let later = keys();
    assert!(later.len() > seen);
    assert!(
        later[seen..]
            .iter()
            .all(|(_, k)| k.as_deref() == Some("new-key")),
        "{later:?}"
    );
}

#[tokio::test]
async fn the_confirmation_policy_reloads_and_a_restart_only_key_keeps_its_value() {
    let sandbox = statuspro_sandbox::start(SandboxConfig::default())
        .await
        .unwrap();
    let config = statuspro_config(&sandbox, "");
    // A client that cannot elicit: the policy decides.
    let host = Host::start(
        HostOptions::new(&COMPONENTS)
            .env("STATUSPRO_API_KEY", sandbox.api_key())
            .config(config.clone()),
    )
    .await;
    let order = seed::order_with_viable_next("st000003").unwrap();
    let change = json!({"order_id": order, "status_code": "st000003", "confirm": true});
    let out = host.ok("update_order_status", change.clone()).await;
    assert_eq!(out["result"], "cancelled", "{out}");
    assert!(sandbox.mutations().is_empty(), "denied: nothing sent");

    host.write_config(&format!(
        "[host]\nconfirmation = \"trust-confirm-flag\"\nmax_message_bytes = 4096\n{config}"
    ));
    let stderr = host.wait_for_stderr("configuration reloaded").await;
    assert!(
        stderr.contains("`host.max_message_bytes` changed, and needs a restart"),
        "{stderr}"
    );
    let out = host.ok("update_order_status", change).await;
    assert_eq!(out["result"], "confirmed", "{out}");
    assert_eq!(sandbox.mutations().len(), 1);
    // The running limit was kept: a message past the new one still passes.
    let long = "x".repeat(8192);
    host.call("list_orders", json!({ "search": long }))
        .await
        .expect("a message longer than the new host.max_message_bytes is still read");
}

#[tokio::test]
async fn a_raised_concurrent_calls_lets_new_calls_run_beside_a_held_one() {
    let server = Recorder::start().await;
    let block = |turns: u32| {
        format!(
            "[plugins.hello.limits]\nconcurrent_calls = {turns}\n{}",
            server.allow_block("hello")
        )
    };
    let host = Host::start(HostOptions::new(&["hello"]).config(block(1))).await;
    // A call takes the block's only turn and holds it.
    let held = host.call("fetch_url", json!({"url": format!("{}/hold", server.url)}));
    let rest = async {
        server.wait_for_requests(1).await;
        host.write_config(&block(2));
        host.wait_for_stderr("configuration reloaded").await;
        // A new call takes a turn among the new number while the first
        // still holds the old one.
        let wait = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            host.ok("greet", json!({"name": "Ada"})),
        );
        let out = wait
            .await
            .expect("the new call did not wait for the held one");
        server.release();
        out
    };
    let (held, out) = tokio::join!(held, rest);
    assert_eq!(out["message"], "Hello, Ada!");
    assert_ne!(held.unwrap().is_error, Some(true));
}

#[tokio::test]
async fn an_edit_under_which_a_serving_component_would_not_load_changes_nothing() {
    let host = Host::start(HostOptions::new(&["hello"]).config("[plugins.hello]\n")).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    // Valid on its own, but `fetch_url` would be served under 130
    // characters.
    let long = "p".repeat(120);
    host.write_config(&format!("[plugins.hello]\nprefix = \"{long}\"\n"));
    let stderr = host.wait_for_stderr("was not applied").await;
    assert!(
        stderr.contains("shorten `prefix` in [plugins.hello]")
            && stderr.contains("hello.wasm cannot be loaded under it"),
        "{stderr}"
    );
    // Not even `greet`, whose prefixed name would fit, changed.
    assert_eq!(names(&host.tools().await), ["fetch_url", "greet"]);
    host.ok("greet", json!({"name": "Ada"})).await;
    assert_eq!(changes.unread(&host).await, 0);
}

#[tokio::test]
async fn a_configmap_style_swap_of_a_linked_directory_is_seen() {
    use std::os::unix::fs::symlink;
    let host = Host::start(HostOptions::new(&["hello"])).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    // As a Kubernetes ConfigMap volume lays it out: the file is a link
    // into `..data`, itself a link to a versioned directory.
    let path = host.config_path();
    let dir = path.parent().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::create_dir(dir.join("..v1")).unwrap();
    std::fs::write(dir.join("..v1/toolhost.toml"), &text).unwrap();
    symlink("..v1", dir.join("..data")).unwrap();
    symlink("..data/toolhost.toml", dir.join("toolhost.toml.link")).unwrap();
    std::fs::rename(dir.join("toolhost.toml.link"), &path).unwrap();
    // The same content: nothing to do (and the swap below is an event of
    // its own).
    host.wait_for_stderr("no new content").await;

    // An update: a new version directory, `..data` swapped by rename.
    std::fs::create_dir(dir.join("..v2")).unwrap();
    std::fs::write(
        dir.join("..v2/toolhost.toml"),
        format!("{text}\n[plugins.hello]\nprefix = \"hi\"\n"),
    )
    .unwrap();
    symlink("..v2", dir.join("..data_tmp")).unwrap();
    std::fs::rename(dir.join("..data_tmp"), dir.join("..data")).unwrap();
    changes.next(&host).await;
    assert_eq!(names(&host.tools().await), ["hi.fetch_url", "hi.greet"]);
}

/// A credential for a [`Recorder`]'s loopback port, as `hello` sends it.
fn credential_block(server: &Recorder, value: &str) -> String {
    format!(
        "[plugins.hello]\n{}[[plugins.hello.credentials]]\nhost = \"127.0.0.1\"\nport = {}\n\
         header = \"Authorization\"\nvalue = {value}\n",
        server.allow_block("hello"),
        server.port
    )
}

/// A credential that must never reach the log.
const SECRET: &str = "sk-live-4f9c2e7b1d";

/// The credentials line of [`credential_block`] with its closing quote
/// missing, and where the error is reported.
fn broken_credentials(server: &Recorder) -> String {
    credential_block(server, &format!("\"Bearer {SECRET}"))
}

/// What a report of [`broken_credentials`] must say, and must not.
fn assert_reported_without_the_secret(stderr: &str) {
    assert!(
        stderr.contains("line 9, column")
            && stderr.contains("(`value` in [[plugins.hello.credentials]])")
            && stderr.contains("invalid basic string"),
        "{stderr}"
    );
    assert!(!stderr.contains(SECRET), "the secret was logged:\n{stderr}");
}

#[tokio::test]
async fn a_broken_credentials_line_is_reported_by_line_and_key_never_by_its_text() {
    let server = Recorder::start().await;
    let broken = broken_credentials(&server);

    // At start: `list` and `serve` exit with the error.
    let out = list(&broken);
    assert!(!out.status.success(), "{out:?}");
    assert_reported_without_the_secret(&String::from_utf8_lossy(&out.stderr));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, &broken).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--plugins"])
        .arg(dir.path())
        .arg("--config")
        .arg(&config)
        .env("XDG_CACHE_HOME", test_cache_home())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "stdout carries the protocol only");
    assert_reported_without_the_secret(&String::from_utf8_lossy(&out.stderr));

    // On reload: refused, reported the same way; the old credential serves.
    let host = Host::start(
        HostOptions::new(&["hello"]).config(credential_block(&server, "\"Bearer old-token\"")),
    )
    .await;
    let fetch = json!({"url": format!("{}/x", server.url)});
    let sent =
        |host_server: &Recorder| host_server.received().last().unwrap().authorization.clone();
    assert_eq!(host.ok("fetch_url", fetch.clone()).await["status"], 200);
    assert_eq!(sent(&server).as_deref(), Some("Bearer old-token"));
    host.write_config(&broken);
    let stderr = host.wait_for_stderr("was not applied").await;
    assert_reported_without_the_secret(&stderr);
    assert_eq!(host.ok("fetch_url", fetch).await["status"], 200);
    assert_eq!(sent(&server).as_deref(), Some("Bearer old-token"));
}

#[tokio::test]
async fn an_edit_refused_for_a_broken_component_applies_once_the_component_is_fixed() {
    let host = Host::start(HostOptions::new(&["hello"]).config("[plugins.hello]\n")).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    let good = component("hello");

    // The serving file replaced by bytes that do not load: the previous
    // version keeps serving.
    write_then_rename(&host.plugins, "hello.wasm", &good[..good.len() / 2]);
    host.wait_for_stderr("the new version was not loaded").await;
    // A valid edit, refused while the file does not load under it.
    host.write_config("[plugins.hello]\nprefix = \"hi\"\n");
    let stderr = host.wait_for_stderr("was not applied").await;
    assert!(
        stderr.contains("hello.wasm cannot be loaded under it")
            && stderr.contains("tried again when the plugin directory's files change"),
        "{stderr}"
    );
    assert_eq!(names(&host.tools().await), ["fetch_url", "greet"]);
    assert_eq!(changes.unread(&host).await, 0);

    // The component fixed, toolhost.toml untouched: the edit applies.
    write_then_rename(&host.plugins, "hello.wasm", &good);
    changes.next(&host).await;
    assert_eq!(names(&host.tools().await), ["hi.fetch_url", "hi.greet"]);
    assert_eq!(
        host.ok("hi.greet", json!({"name": "Ada"})).await["message"],
        "Hello, Ada!"
    );
    let stderr = host.wait_for_stderr("configuration reloaded").await;
    assert_eq!(
        stderr.matches("was not applied").count(),
        1,
        "the refused content is reported once:\n{stderr}"
    );
}

#[tokio::test]
async fn an_edit_saved_with_a_broken_component_in_one_window_applies_once_it_is_fixed() {
    let host = Host::start(HostOptions::new(&["hello"]).config("[plugins.hello]\n")).await;
    let mut changes = Changes::open(&host, Era::Legacy).await;
    let good = component("hello");

    // Both saved at once: whichever event is handled first, the edit is
    // refused (once) while the file does not load.
    write_then_rename(&host.plugins, "hello.wasm", &good[..good.len() / 3]);
    host.write_config("[plugins.hello]\nprefix = \"hi\"\n");
    host.wait_for_stderr("was not applied").await;
    assert_eq!(names(&host.tools().await), ["fetch_url", "greet"]);

    write_then_rename(&host.plugins, "hello.wasm", &good);
    changes.next(&host).await;
    assert_eq!(names(&host.tools().await), ["hi.fetch_url", "hi.greet"]);
    let stderr = host.wait_for_stderr("configuration reloaded").await;
    assert_eq!(stderr.matches("was not applied").count(), 1, "{stderr}");
}
