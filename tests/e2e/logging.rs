//! The log belongs to the operator: a component's messages stay within a
//! per-call budget, cannot forge log lines or drive a terminal, and a
//! client that never reads the server's stderr cannot stall it. A copy
//! reaches the calling client, at or above the level it asked for, only
//! from a block the operator opted in (`log_to_client`).

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::protocol::PlainClient;
use crate::support::{Elicitation, Era, Host, HostOptions, component, test_cache_home};

/// Lines of `stderr` holding `needle`.
fn count_lines(stderr: &str, needle: &str) -> usize {
    stderr.lines().filter(|l| l.contains(needle)).count()
}

#[tokio::test]
async fn a_tool_writing_100k_lines_stays_within_its_log_budget() {
    let host = Host::start(HostOptions::new(&["misbehaving"])).await;
    let out = host
        .ok(
            "log_lines",
            json!({"text": "flood-marker", "count": 100_000}),
        )
        .await;
    assert_eq!(out["detail"], "100000 messages written");
    let stderr = host.wait_for_stderr("log messages dropped").await;
    // The default budget: 1000 messages per call, then one closing line.
    assert_eq!(count_lines(&stderr, "flood-marker"), 1000, "{stderr:.2000}");
    let closing: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("log messages dropped"))
        .collect();
    assert_eq!(closing.len(), 1, "{closing:?}");
    assert!(
        closing[0].contains("99000 log messages dropped")
            && closing[0].contains("limits.log_messages_per_call = 1000")
            && closing[0].contains("tool=log_lines"),
        "{}",
        closing[0]
    );
}

#[tokio::test]
async fn the_byte_budget_counts_too_and_each_call_gets_its_own() {
    let host = Host::start(
        HostOptions::new(&["misbehaving"])
            .config("[plugins.misbehaving.limits]\nlog_bytes_per_call = 1000\n"),
    )
    .await;
    // 100-byte messages against a 1000-byte budget: 10 kept per call.
    for (call, count) in [(1, 50), (2, 60)] {
        let marker = format!("call{call}-marker-");
        let text = format!("{marker}{}", "y".repeat(100 - marker.len()));
        host.ok("log_lines", json!({"text": text, "count": count}))
            .await;
        let stderr = host
            .wait_for_stderr(&format!("{} log messages dropped", count - 10))
            .await;
        assert_eq!(count_lines(&stderr, &marker), 10, "call {call}");
    }
}

#[tokio::test]
async fn guest_text_cannot_forge_a_log_line_or_drive_the_terminal() {
    let host = Host::start(HostOptions::new(&["misbehaving"])).await;
    let forged = "a\nINFO fake confirmation answered: Confirmed\r\u{1b}[2J\u{1b}[31mred\u{202e}";
    host.ok("log_lines", json!({"text": forged, "count": 1}))
        .await;
    let stderr = host.wait_for_stderr("INFO fake confirmation").await;
    assert!(
        !stderr
            .lines()
            .any(|l| l.trim_start().starts_with("INFO fake")),
        "a guest forged a log line:\n{stderr}"
    );
    assert!(
        stderr.contains(
            r"a\nINFO fake confirmation answered: Confirmed\r\u{1b}[2J\u{1b}[31mred\u{202e}"
        ),
        "the message is kept, escaped:\n{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "an escape reached stderr");
    assert!(!stderr.contains('\r'), "a carriage return reached stderr");
}

#[tokio::test]
async fn a_server_whose_stderr_nobody_reads_still_answers_calls() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    for name in ["misbehaving", "hello"] {
        std::fs::write(plugins.join(format!("{name}.wasm")), component(name)).unwrap();
    }
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[plugins.misbehaving.limits]\nlog_messages_per_call = 1000000\nlog_bytes_per_call = 67108864\n",
    )
    .unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .args(["serve", "--no-watch", "--plugins"])
        .arg(&plugins)
        .arg("--config")
        .arg(&config)
        .env("TOOLHOST_LOG", "info")
        .env("XDG_CACHE_HOME", test_cache_home());
    // stderr is a pipe this test never reads: after 64 KiB it is full.
    let (transport, unread_stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _unread_stderr = unread_stderr.expect("a stderr pipe");
    let client = PlainClient.serve(transport).await.expect("connects");

    let call = |name: &str, arguments: Value| {
        let mut params = CallToolRequestParams::new(name.to_string());
        params = params.with_arguments(arguments.as_object().unwrap().clone());
        let peer = client.peer().clone();
        async move {
            tokio::time::timeout(Duration::from_secs(60), peer.call_tool(params))
                .await
                .expect("the call is answered, not stalled on stderr")
                .expect("the call succeeds")
        }
    };
    // About 20 MB of log lines, far more than the pipe holds.
    let line = "stderr-filler ".repeat(30);
    for _ in 0..2 {
        let result = call("log_lines", json!({"text": line, "count": 50_000})).await;
        assert_ne!(result.is_error, Some(true), "{result:?}");
        let result = call("greet", json!({"name": "Ada"})).await;
        assert_eq!(
            result.structured_content,
            Some(json!({"message": "Hello, Ada!"}))
        );
    }
}

/// A host over HTTP serving `misbehaving` twice: as `misbehaving`, whose
/// block sends its log to the client from `info` up, and as `quiet.*`
/// (`quiet.wasm`), whose block does not.
async fn opted_in_host() -> Host {
    Host::start(
        HostOptions::new(&["misbehaving"])
            .http()
            .file("quiet.wasm", component("misbehaving"))
            .config(
                "[plugins.misbehaving]\nlog_to_client = \"info\"\n\n\
                 [plugins.quiet]\nfiles = [\"quiet.wasm\"]\nprefix = \"quiet\"\n",
            ),
    )
    .await
}

/// Asks the host to send `client` log messages from `level` up.
#[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); toolhost serves it.
async fn set_level(client: &Host, level: rmcp::model::LoggingLevel) {
    client
        .client
        .peer()
        .set_level(rmcp::model::SetLevelRequestParams::new(level))
        .await
        .expect("logging/setLevel is answered");
}

/// The log messages `client` received whose text holds `marker`.
fn logs_with(client: &Host, marker: &str) -> Vec<(String, Option<String>, Value)> {
    let seen = client.handler.seen.lock().unwrap();
    seen.logs
        .iter()
        .filter(|(_, _, data)| data["message"].as_str().is_some_and(|m| m.contains(marker)))
        .cloned()
        .collect()
}

/// Waits until `client` received `n` log messages holding `marker`.
async fn wait_for_logs(client: &Host, marker: &str, n: usize) {
    client
        .wait_for_seen(|seen| {
            seen.logs
                .iter()
                .filter(|(_, _, d)| d["message"].as_str().is_some_and(|m| m.contains(marker)))
                .count()
                >= n
        })
        .await;
}

#[tokio::test]
#[allow(deprecated)]
async fn an_opted_in_blocks_log_lines_reach_the_caller_at_or_above_its_session_level() {
    use rmcp::model::LoggingLevel;
    let host = opted_in_host().await;
    // `info` lines below the session's `warning`: none sent.
    set_level(&host, LoggingLevel::Warning).await;
    host.ok("log_lines", json!({"text": "below-marker", "count": 2}))
        .await;
    // At the session's `info`: sent, in the call's session.
    set_level(&host, LoggingLevel::Info).await;
    host.ok("log_lines", json!({"text": "at-marker", "count": 2}))
        .await;
    wait_for_logs(&host, "at-marker", 2).await;
    let sent = logs_with(&host, "at-marker");
    assert_eq!(sent.len(), 2, "{sent:?}");
    for (level, logger, data) in &sent {
        assert_eq!(level, "info");
        assert_eq!(logger.as_deref(), Some("misbehaving"));
        assert_eq!(data, &json!({"tool": "log_lines", "message": "at-marker"}));
    }
    // Sent in order on one stream: what was below the level came first and
    // was left out.
    assert!(logs_with(&host, "below-marker").is_empty());
    // The operator's log has both, as before. It is read as the process
    // writes it, in order: once a later call's line is in, these are too.
    host.ok("log_lines", json!({"text": "end-marker", "count": 1}))
        .await;
    let stderr = host.wait_for_stderr("end-marker").await;
    assert_eq!(count_lines(&stderr, "below-marker"), 2, "{stderr:.3000}");
    assert_eq!(count_lines(&stderr, "at-marker"), 2, "{stderr:.3000}");
}

#[tokio::test]
#[allow(deprecated)]
async fn a_block_not_opted_in_sends_the_caller_no_log_lines() {
    let host = opted_in_host().await;
    set_level(&host, rmcp::model::LoggingLevel::Debug).await;
    host.ok(
        "quiet.log_lines",
        json!({"text": "quiet-marker", "count": 2}),
    )
    .await;
    // An opted-in call after it, on the same stream: once its lines are
    // in, the quiet block's would be too.
    host.ok("log_lines", json!({"text": "loud-marker", "count": 1}))
        .await;
    wait_for_logs(&host, "loud-marker", 1).await;
    assert!(logs_with(&host, "quiet-marker").is_empty());
    // Read in order: the later call's line in means the quiet ones are.
    let stderr = host.wait_for_stderr("loud-marker").await;
    assert_eq!(count_lines(&stderr, "quiet-marker"), 2, "{stderr:.3000}");
}

#[tokio::test]
#[allow(deprecated)]
async fn another_session_receives_none_of_a_calls_log_lines() {
    use rmcp::model::LoggingLevel;
    let host = opted_in_host().await;
    let other = host
        .another_client(Era::Legacy, Elicitation::Accept(true), None)
        .await;
    set_level(&host, LoggingLevel::Info).await;
    set_level(&other, LoggingLevel::Info).await;
    host.ok("log_lines", json!({"text": "first-session", "count": 2}))
        .await;
    wait_for_logs(&host, "first-session", 2).await;
    // The other session's own lines arrive after anything sent before.
    other
        .ok("log_lines", json!({"text": "second-session", "count": 1}))
        .await;
    wait_for_logs(&other, "second-session", 1).await;
    assert!(logs_with(&other, "first-session").is_empty());
    assert!(logs_with(&host, "second-session").is_empty());
}
