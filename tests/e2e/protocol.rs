//! An answer to every line on stdin. Raw bytes go to the real binary's
//! stdin beside a real rmcp client that shares the pipe: each malformed
//! line gets the JSON-RPC error it deserves (with the request's id where it
//! can be read), lines that must not be answered get nothing, stdout
//! carries nothing but JSON-RPC messages, and the client keeps being served
//! after each.
//!
//! Ordering, without sleeps: the reader answers lines in order, so after
//! the raw bytes under test a *sentinel* line (a `tools/call` whose params
//! do not fit, which the host answers itself) is sent; every answer to the
//! bytes under test arrives before the sentinel's.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::Notify;

use crate::support::{capture_stderr, component, test_cache_home};

/// A legacy-era client that asks nothing of the server but answers.
#[derive(Clone)]
pub(crate) struct PlainClient;

impl ClientHandler for PlainClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolhost-protocol-tests", "0.1.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// `toolhost serve` with `hello`, its stdin shared by raw writes and an
/// rmcp client, every stdout line recorded.
struct Wire {
    child: Child,
    /// The host's stdin; `None` once closed.
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    /// Every line the host wrote to stdout, parsed (a line that is not JSON
    /// is kept as a string, and fails [`Wire::only_json_on_stdout`]).
    lines: Arc<Mutex<Vec<Value>>>,
    grew: Arc<Notify>,
    /// Everything the host wrote to stderr.
    stderr: Arc<Mutex<String>>,
    stderr_grew: Arc<Notify>,
    client: RunningService<RoleClient, PlainClient>,
    sentinels: u32,
    _dir: tempfile::TempDir,
}

impl Wire {
    async fn start(config: Option<&str>) -> Wire {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        std::fs::write(plugins.join("hello.wasm"), component("hello")).unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .args(["serve", "--no-watch", "--plugins"])
            .arg(&plugins)
            .env("TOOLHOST_LOG", "info")
            .env("XDG_CACHE_HOME", test_cache_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(text) = config {
            let path = dir.path().join("toolhost.toml");
            std::fs::write(&path, text).unwrap();
            command.arg("--config").arg(path);
        }
        let mut child = command.spawn().expect("toolhost starts");
        let stdin = Arc::new(tokio::sync::Mutex::new(child.stdin.take()));
        let stdout = child.stdout.take().unwrap();
        let (stderr, stderr_grew) = capture_stderr(child.stderr.take());

        // The client talks through an in-memory pipe; its lines are copied
        // to the host's stdin whole, so they never mix with raw writes.
        let (client_end, wire_end) = tokio::io::duplex(1 << 20);
        let (from_client, mut to_client) = tokio::io::split(wire_end);
        {
            let stdin = stdin.clone();
            tokio::spawn(async move {
                let mut from_client = BufReader::new(from_client);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    match from_client.read_until(b'\n', &mut line).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    let mut stdin = stdin.lock().await;
                    let Some(stdin) = stdin.as_mut() else { return };
                    if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                        return;
                    }
                }
            });
        }
        let lines = Arc::new(Mutex::new(Vec::new()));
        let grew = Arc::new(Notify::new());
        {
            let (lines, grew) = (lines.clone(), grew.clone());
            tokio::spawn(async move {
                let mut stdout = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = stdout.next_line().await {
                    let value = serde_json::from_str(&line).unwrap_or(Value::String(line.clone()));
                    lines.lock().unwrap().push(value);
                    grew.notify_waiters();
                    if to_client
                        .write_all(format!("{line}\n").as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
        let client = PlainClient
            .serve(client_end)
            .await
            .expect("the client connects");
        Wire {
            child,
            stdin,
            lines,
            grew,
            stderr,
            stderr_grew,
            client,
            sentinels: 0,
            _dir: dir,
        }
    }

    /// Waits until the host's stderr contains `needle`.
    async fn wait_for_stderr(&self, needle: &str) {
        let wait = async {
            loop {
                let grew = self.stderr_grew.notified();
                if self.stderr.lock().unwrap().contains(needle) {
                    return;
                }
                grew.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "stderr never contained {needle:?}:\n{}",
                    self.stderr.lock().unwrap()
                )
            });
    }

    /// Writes `bytes` to the host's stdin as they are.
    async fn raw(&self, bytes: &[u8]) {
        let mut stdin = self.stdin.lock().await;
        let stdin = stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Closes the host's stdin.
    async fn close_stdin(&self) {
        self.stdin.lock().await.take();
    }

    /// Waits for the first stdout line that answers `id`, returns it and
    /// how many lines came before it.
    async fn answer(&self, id: &Value) -> (usize, Value) {
        let wait = async {
            loop {
                let notified = self.grew.notified();
                {
                    let lines = self.lines.lock().unwrap();
                    if let Some(found) = lines.iter().position(|l| l.get("id") == Some(id)) {
                        return (found, lines[found].clone());
                    }
                }
                notified.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no answer for id {id}; stdout so far: {:?}",
                    self.lines.lock().unwrap()
                )
            })
    }

    /// Sends `bytes`, then a sentinel line, and returns every line the
    /// host wrote in between: the answers to `bytes`, in order.
    async fn answers_to(&mut self, bytes: &[u8]) -> Vec<Value> {
        let before = self.lines.lock().unwrap().len();
        self.answers_since(before, bytes).await
    }

    /// Like [`Wire::answers_to`], counting the host's lines from `before`
    /// (a length of the lines seen), for input written in several parts
    /// that may be answered before its last part.
    async fn answers_since(&mut self, before: usize, bytes: &[u8]) -> Vec<Value> {
        self.sentinels += 1;
        let id = json!(format!("sentinel-{}", self.sentinels));
        let sentinel = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"greet","arguments":[1,2]}}}}"#
        );
        self.raw(bytes).await;
        self.raw(format!("{sentinel}\n").as_bytes()).await;
        let (at, answer) = self.answer(&id).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        self.lines.lock().unwrap()[before..at].to_vec()
    }

    /// The client still gets answers: `tools/list` and a `greet` call.
    async fn still_serving(&self) {
        let tools = self
            .client
            .list_all_tools()
            .await
            .expect("tools/list works");
        assert!(tools.iter().any(|t| t.name == "greet"));
        let mut params = CallToolRequestParams::new("greet");
        params = params.with_arguments(json!({"name": "Ada"}).as_object().unwrap().clone());
        let result = self.client.call_tool(params).await.expect("greet answers");
        assert_eq!(
            result.structured_content,
            Some(json!({"message": "Hello, Ada!"}))
        );
    }

    /// Every line on stdout was a JSON-RPC message.
    fn only_json_on_stdout(&self) {
        for line in self.lines.lock().unwrap().iter() {
            assert_eq!(
                line["jsonrpc"], "2.0",
                "not a JSON-RPC message on stdout: {line}"
            );
        }
    }
}

/// The one error in `answers`, checked to carry `code` and `id` (`None`:
/// no id, or a null one); returns its message.
fn one_error(answers: &[Value], code: i64, id: Option<&Value>) -> String {
    assert_eq!(answers.len(), 1, "expected one answer: {answers:?}");
    let answer = &answers[0];
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    match id {
        Some(id) => assert_eq!(answer.get("id"), Some(id), "{answer}"),
        None => assert!(answer.get("id").is_none_or(Value::is_null), "{answer}"),
    }
    answer["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error_and_serving_goes_on() {
    let mut wire = Wire::start(None).await;
    for line in [
        &b"this is not json\n"[..],
        // Truncated: the closing brace never came.
        b"{\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"method\":\"tools/list\"\n",
        // Not UTF-8.
        b"{\"jsonrpc\":\"2.0\",\"id\":\"t2\",\"method\":\"\xff\xfe\"}\n",
    ] {
        let answers = wire.answers_to(line).await;
        let message = one_error(&answers, -32700, None);
        assert!(message.contains("not"), "{message}");
        wire.still_serving().await;
    }
    wire.only_json_on_stdout();
}

#[tokio::test]
async fn a_request_nested_deeper_than_the_parser_reads_gets_invalid_request_with_its_id() {
    let mut wire = Wire::start(None).await;
    let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{{"name":"greet","arguments":{{"name":{deep}}}}}}}"#
    );
    let answers = wire.answers_to(format!("{line}\n").as_bytes()).await;
    let message = one_error(&answers, -32600, Some(&json!("deep")));
    assert!(message.contains("nested deeper than 127"), "{message}");
    wire.still_serving().await;
    wire.only_json_on_stdout();
}

#[tokio::test]
async fn a_known_method_with_params_that_do_not_fit_is_invalid_params_not_method_not_found() {
    let mut wire = Wire::start(None).await;
    for (id, line) in [
        (
            json!(41),
            r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"greet","arguments":[1,2]}}"#,
        ),
        (
            json!("s"),
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":"greet"}"#,
        ),
        (
            json!(42),
            r#"{"jsonrpc":"2.0","id":42,"method":"tools/list","params":[1]}"#,
        ),
    ] {
        let answers = wire.answers_to(format!("{line}\n").as_bytes()).await;
        let message = one_error(&answers, -32602, Some(&id));
        assert!(
            message.starts_with("invalid params for tools/"),
            "{message}"
        );
    }
    // An unknown method is still rmcp's "method not found".
    wire.raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"unknown\",\"method\":\"no/such\"}\n")
        .await;
    let (_, answer) = wire.answer(&json!("unknown")).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    wire.still_serving().await;
    wire.only_json_on_stdout();
}

#[tokio::test]
async fn batches_scalars_and_broken_envelopes_are_invalid_requests() {
    let mut wire = Wire::start(None).await;
    for line in [
        "[]",
        r#"[{"jsonrpc":"2.0","id":"in-batch","method":"ping"}]"#,
        "42",
        "null",
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","method":7}"#,
        r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
    ] {
        let answers = wire.answers_to(format!("{line}\n").as_bytes()).await;
        one_error(&answers, -32600, None);
    }
    // A readable id is echoed even when the rest of the envelope is wrong.
    let answers = wire
        .answers_to(b"{\"jsonrpc\":\"1.0\",\"id\":\"old\",\"method\":\"ping\"}\n")
        .await;
    let message = one_error(&answers, -32600, Some(&json!("old")));
    assert!(message.contains("jsonrpc"), "{message}");
    wire.still_serving().await;
    wire.only_json_on_stdout();
}

#[tokio::test]
async fn notifications_responses_and_blank_lines_get_no_answer() {
    let mut wire = Wire::start(None).await;
    let silent = concat!(
        "\n",
        "   \r\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/something_new\"}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":42}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":\"nobody-asked\",\"result\":{}}\n",
        "{\"jsonrpc\":\"2.0\",\"result\":{}}\n",
    );
    let answers = wire.answers_to(silent.as_bytes()).await;
    assert_eq!(answers, Vec::<Value>::new());
    wire.still_serving().await;
    // The operator is told what was ignored.
    wire.wait_for_stderr("invalid params for the notification notifications/cancelled")
        .await;
    wire.only_json_on_stdout();
}

#[tokio::test]
async fn an_overlong_line_is_refused_and_reading_resumes_at_the_next_line() {
    let mut wire = Wire::start(Some("[host]\nmax_message_bytes = 4096\n")).await;
    let name = "x".repeat(100_000);
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{{"name":"greet","arguments":{{"name":"{name}"}}}}}}"#
    );
    // In one write, followed on the same write by the sentinel.
    let answers = wire.answers_to(format!("{long}\n").as_bytes()).await;
    let message = one_error(&answers, -32600, None);
    assert!(
        message.contains("longer than 4096 bytes (host.max_message_bytes)"),
        "{message}"
    );
    // In pieces: the answer comes once, and the tail is skipped.
    let before = wire.lines.lock().unwrap().len();
    for piece in long.as_bytes().chunks(30_000) {
        wire.raw(piece).await;
    }
    let answers = wire.answers_since(before, b"\n").await;
    one_error(&answers, -32600, None);
    // A message within the limit still works.
    wire.still_serving().await;
    wire.only_json_on_stdout();
}

#[tokio::test]
async fn a_last_line_without_newline_is_answered_and_the_server_exits_when_stdin_closes() {
    let mut wire = Wire::start(None).await;
    wire.still_serving().await;
    wire.raw(br#"{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"greet","arguments":[1]}}"#)
        .await;
    wire.close_stdin().await;
    let (_, answer) = wire.answer(&json!("last")).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let status = tokio::time::timeout(Duration::from_secs(30), wire.child.wait())
        .await
        .expect("the server exits when stdin closes")
        .unwrap();
    assert!(status.success(), "{status}");
    wire.only_json_on_stdout();
}

#[tokio::test]
async fn a_tools_call_answered_on_stdio_is_on_the_audit_trail() {
    let trail_dir = tempfile::tempdir().unwrap();
    let trail = trail_dir.path().join("audit.jsonl");
    let config = format!("[host]\naudit = \"{}\"\n", trail.display());
    let mut wire = Wire::start(Some(&config)).await;
    // Loaded, so the records can name the tool's plugin.
    wire.still_serving().await;
    let answers = wire
        .answers_to(
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"greet","arguments":5}}
"#,
        )
        .await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["error"]["code"], -32602, "{answers:?}");

    // The line and the sentinel after it (whose arguments are an array):
    // both refused by the transport, recorded before they were answered.
    let records = crate::audit::records(&trail);
    let refused: Vec<_> = records
        .iter()
        .filter(|r| r["result"] == "refused")
        .collect();
    assert_eq!(refused.len(), 2, "{records:#?}");
    for (record, arguments) in refused.into_iter().zip(["5", "[1,2]"]) {
        assert_eq!(
            (
                &record["caller"],
                &record["tool"],
                &record["plugin"],
                &record["result"],
                &record["issues"]
            ),
            (
                &json!("stdio"),
                &json!("greet"),
                &json!("hello"),
                &json!("refused"),
                &json!(["MALFORMED_REQUEST"])
            ),
            "{record}"
        );
        assert_eq!(
            record["arguments_sha256"],
            crate::support::infra::sha256_hex(arguments),
            "{record}"
        );
    }
    wire.still_serving().await;
}
