//! How stdin and stdout are driven (ADR 0024). A pipe or a Unix socket is
//! switched to non-blocking mode and served on the event loop, then handed
//! back in blocking mode when the session ends; stdout that stderr shares
//! stays blocking (a log line must never meet a full pipe in non-blocking
//! mode); files work through tokio's blocking-thread streams.
//!
//! The mode belongs to the open file, which the test keeps a descriptor of
//! (a clone of the end it gave the host), so it can look while the host
//! serves and after it exits.

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use crate::protocol::PlainClient;
use crate::support::{component, test_cache_home};

/// Whether the open file behind `fd` is in non-blocking mode.
fn nonblocking(fd: impl AsFd) -> bool {
    rustix::fs::fcntl_getfl(fd)
        .expect("the descriptor's flags can be read")
        .contains(rustix::fs::OFlags::NONBLOCK)
}

/// `toolhost serve` with `hello`, no watching, logs as `log` says; the
/// caller gives its stdio.
fn serve(dir: &Path, log: &str) -> tokio::process::Command {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .args(["serve", "--no-watch", "--plugins"])
        .arg(&plugins)
        .env("TOOLHOST_LOG", log)
        .env("XDG_CACHE_HOME", test_cache_home())
        .kill_on_drop(true);
    command
}

/// An rmcp client on the other ends of the host's stdin and stdout pipes.
async fn client_on_pipes(
    to_host: PipeWriter,
    from_host: PipeReader,
) -> RunningService<RoleClient, PlainClient> {
    let writer = tokio::net::unix::pipe::Sender::from_owned_fd(OwnedFd::from(to_host)).unwrap();
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(from_host)).unwrap();
    PlainClient
        .serve((reader, writer))
        .await
        .expect("the client connects")
}

/// `greet` answers through `client`.
async fn greets(client: &RunningService<RoleClient, PlainClient>) {
    let params = CallToolRequestParams::new("greet")
        .with_arguments(json!({"name": "Ada"}).as_object().unwrap().clone());
    let result = client.call_tool(params).await.expect("greet answers");
    assert_eq!(
        result.structured_content,
        Some(json!({"message": "Hello, Ada!"}))
    );
}

/// Ends the session from the client's side and waits for the host to exit
/// cleanly.
async fn close_and_wait(
    client: RunningService<RoleClient, PlainClient>,
    mut child: tokio::process::Child,
) {
    drop(client);
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the host exits once its input ends")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn pipes_are_served_non_blocking_and_handed_back_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let (host_stdin, to_host) = std::io::pipe().unwrap();
    let (from_host, host_stdout) = std::io::pipe().unwrap();
    let stdin_file = host_stdin.try_clone().unwrap();
    let stdout_file = host_stdout.try_clone().unwrap();
    assert!(!nonblocking(&stdin_file) && !nonblocking(&stdout_file));

    let mut command = serve(dir.path(), "info");
    command
        .stdin(Stdio::from(host_stdin))
        .stdout(Stdio::from(host_stdout))
        .stderr(Stdio::null());
    let child = command.spawn().expect("toolhost starts");
    drop(command);
    let client = client_on_pipes(to_host, from_host).await;
    greets(&client).await;
    assert!(
        nonblocking(&stdin_file),
        "stdin (a pipe) is read on the event loop"
    );
    assert!(
        nonblocking(&stdout_file),
        "stdout (a pipe) is written on the event loop"
    );

    close_and_wait(client, child).await;
    assert!(!nonblocking(&stdin_file), "stdin is handed back blocking");
    assert!(!nonblocking(&stdout_file), "stdout is handed back blocking");
}

#[tokio::test]
async fn a_unix_socket_is_served_non_blocking_and_handed_back_blocking() {
    let dir = tempfile::tempdir().unwrap();
    // One socket for stdin and stdout, as Node's `child_process` and inetd
    // give a child.
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut command = serve(dir.path(), "info");
    command
        .stdin(Stdio::from(OwnedFd::from(theirs.try_clone().unwrap())))
        .stdout(Stdio::from(OwnedFd::from(theirs.try_clone().unwrap())))
        .stderr(Stdio::null());
    let child = command.spawn().expect("toolhost starts");
    drop(command);
    ours.set_nonblocking(true).unwrap();
    let client = PlainClient
        .serve(tokio::net::UnixStream::from_std(ours).unwrap().into_split())
        .await
        .expect("the client connects");
    greets(&client).await;
    assert!(
        nonblocking(&theirs),
        "the socket is served on the event loop"
    );

    close_and_wait(client, child).await;
    assert!(!nonblocking(&theirs), "the socket is handed back blocking");
}

#[tokio::test]
async fn stdout_that_stderr_shares_stays_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let (host_stdin, to_host) = std::io::pipe().unwrap();
    let (from_host, host_stdout) = std::io::pipe().unwrap();
    let stdin_file = host_stdin.try_clone().unwrap();
    let stdout_file = host_stdout.try_clone().unwrap();

    // `2>&1`: stderr is the same open file as stdout. Logs are off so the
    // client reads the protocol alone.
    let mut command = serve(dir.path(), "off");
    command
        .stdin(Stdio::from(host_stdin))
        .stderr(Stdio::from(host_stdout.try_clone().unwrap()))
        .stdout(Stdio::from(host_stdout));
    let child = command.spawn().expect("toolhost starts");
    drop(command);
    let client = client_on_pipes(to_host, from_host).await;
    greets(&client).await;
    assert!(nonblocking(&stdin_file), "stdin is still on the event loop");
    assert!(
        !nonblocking(&stdout_file),
        "stdout shared with stderr stays blocking"
    );
    close_and_wait(client, child).await;
}

#[tokio::test]
async fn requests_from_a_file_are_answered_into_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "file", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "greet", "arguments": {"name": "Ada"}}}),
    ];
    let input = dir.path().join("requests.jsonl");
    let text: String = requests.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let output = dir.path().join("answers.jsonl");

    let mut command = serve(dir.path(), "info");
    command
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null());
    let status = tokio::time::timeout(Duration::from_secs(60), command.status())
        .await
        .expect("the host exits at the end of its input")
        .unwrap();
    assert!(status.success(), "{status}");

    let answers: Vec<Value> = std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect();
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {answers:?}"))
    };
    assert_eq!(by_id(1)["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        by_id(2)["result"]["structuredContent"],
        json!({"message": "Hello, Ada!"})
    );
}
