//! Shared harness for the end-to-end tests: build a plugin directory from
//! the components `cargo xtask build-plugins` made, start the real
//! `toolhost` binary, and drive it over stdio with rmcp's client in either
//! protocol era. Also a loopback HTTP server that records what reaches it.

#![allow(dead_code)]

pub mod audit;
pub mod cluster;
pub mod infra;
pub mod metrics;
pub mod offers;
pub mod otlp;
pub mod plugin_set;
pub mod sockets;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, Implementation, ProgressNotificationParam,
    ProtocolVersion, Tool,
};
use rmcp::service::{
    NotificationContext, RequestContext, RoleClient, RunningService, Subscription,
};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientServiceExt, ErrorData, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::Notify;

/// Which protocol era the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, protocol 2025-11-25.
    Legacy,
    /// Stateless 2026-07-28 (`server/discover`, per-request `_meta`).
    Modern,
}

/// Both eras, for tests that must hold in each.
pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// How the test client answers elicitations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elicitation {
    /// The client does not declare the capability.
    Unsupported,
    /// Accept with `confirm` set to this.
    Accept(bool),
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
    /// Never answer.
    Hang,
    /// Accept with `confirm: true`, after a pause: a user who takes this
    /// long to decide.
    AcceptAfter(Duration),
    /// Answer the n-th elicitation of the session with the n-th of these
    /// (one that is itself a script counts as `Hang`).
    Script(&'static [Elicitation]),
    /// Accept a form (contract 0.3) with this JSON object as its values.
    AcceptWith(&'static str),
    /// Accept with `confirm: true` once the test calls
    /// [`TestClient::release_elicitations`]: a call held in flight, at a
    /// point the test knows, for as long as the test needs.
    AcceptWhenReleased,
}

/// What the client saw besides responses.
#[derive(Debug, Default)]
pub struct Seen {
    /// The tools' own questions in the elicitations it was asked: what
    /// follows the host's first line (see `prompts` for whole messages).
    pub elicitations: Vec<String>,
    /// The whole messages of the elicitations it was asked.
    pub prompts: Vec<String>,
    /// `tools/list_changed` notifications (legacy).
    pub list_changed: usize,
    /// Progress notifications: (progress, total, message).
    pub progress: Vec<(f64, Option<f64>, Option<String>)>,
    /// The requested schemas of the elicitations it was asked, as JSON.
    pub elicitation_schemas: Vec<Value>,
    /// `resources/list_changed` notifications (legacy).
    pub resources_changed: usize,
    /// `prompts/list_changed` notifications (legacy).
    pub prompts_changed: usize,
    /// The URIs of `resources/updated` notifications, in arrival order
    /// (legacy).
    pub updated: Vec<String>,
    /// The URLs of URL-mode elicitations, in arrival order.
    pub urls: Vec<String>,
    /// `notifications/message` log messages, in arrival order: level (as
    /// MCP writes it), logger and data.
    pub logs: Vec<(String, Option<String>, Value)>,
}

impl Seen {
    /// Checks that the first question asked was a form: the host's own
    /// first line, then `question`, with `field` offered with the default
    /// `default`. `context` names the case in failures.
    pub fn assert_form_asked(&self, context: &str, question: &str, field: &str, default: &str) {
        assert!(
            self.prompts[0].contains("asks you to fill in a form"),
            "{context}: the host's own first line: {}",
            self.prompts[0]
        );
        assert_eq!(self.elicitations, [question], "{context}");
        let offered = &self.elicitation_schemas[0]["properties"][field];
        assert_eq!(offered["default"], default, "{context}: {offered}");
    }
}

/// The test client.
#[derive(Clone)]
pub struct TestClient {
    elicitation: Elicitation,
    /// What it saw.
    pub seen: Arc<Mutex<Seen>>,
    /// Woken on every event recorded in `seen`.
    pub changed: Arc<Notify>,
    /// Set by [`TestClient::release_elicitations`].
    released: Arc<tokio::sync::watch::Sender<bool>>,
    /// Capabilities declared instead of the default ones.
    capabilities: Option<ClientCapabilities>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.elicitation != Elicitation::Unsupported {
            caps.elicitation = Some(ElicitationCapability::default());
        }
        if let Some(declared) = &self.capabilities {
            caps = declared.clone();
        }
        ClientConfig::new(caps, Implementation::new("toolhost-tests", "0.1.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, schema) = match &request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                message.clone(),
                serde_json::to_value(requested_schema).unwrap_or(Value::Null),
            ),
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                self.seen.lock().unwrap().urls.push(url.clone());
                (message.clone(), Value::Null)
            }
            _ => ("(not a form)".to_string(), Value::Null),
        };
        let answer = {
            let mut seen = self.seen.lock().unwrap();
            let question = message
                .strip_prefix("toolhost: ")
                .and_then(|rest| rest.split_once("\n\n"))
                .map_or(message.as_str(), |(_, question)| question)
                .to_string();
            seen.elicitations.push(question);
            seen.prompts.push(message.clone());
            seen.elicitation_schemas.push(schema);
            match self.elicitation {
                Elicitation::Script(answers) => answers
                    .get(seen.prompts.len() - 1)
                    .copied()
                    .unwrap_or(Elicitation::Hang),
                other => other,
            }
        };
        self.changed.notify_waiters();
        Ok(match answer {
            Elicitation::Accept(yes) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "confirm": yes }))
            }
            Elicitation::AcceptWith(values) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::from_str::<Value>(values).expect("test values are JSON")),
            Elicitation::Decline => ElicitResult::new(ElicitationAction::Decline),
            Elicitation::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            Elicitation::Hang | Elicitation::Script(_) => std::future::pending().await,
            Elicitation::AcceptWhenReleased => {
                let _ = self.released.subscribe().wait_for(|r| *r).await;
                ElicitResult::new(ElicitationAction::Accept)
                    .with_content(json!({ "confirm": true }))
            }
            Elicitation::AcceptAfter(pause) => {
                tokio::time::sleep(pause).await;
                ElicitResult::new(ElicitationAction::Accept)
                    .with_content(json!({ "confirm": true }))
            }
            Elicitation::Unsupported => {
                return Err(ErrorData::method_not_found::<
                    rmcp::model::ElicitationCreateRequestMethod,
                >());
            }
        })
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen.lock().unwrap().list_changed += 1;
        self.changed.notify_waiters();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen.lock().unwrap().resources_changed += 1;
        self.changed.notify_waiters();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen.lock().unwrap().prompts_changed += 1;
        self.changed.notify_waiters();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().updated.push(params.uri);
        self.changed.notify_waiters();
    }

    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); toolhost serves it.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        self.seen
            .lock()
            .unwrap()
            .logs
            .push((level, params.logger, params.data));
        self.changed.notify_waiters();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen
            .lock()
            .unwrap()
            .progress
            .push((params.progress, params.total, params.message));
        self.changed.notify_waiters();
    }
}

impl TestClient {
    /// A client answering elicitations with `elicitation`.
    pub fn new(elicitation: Elicitation) -> TestClient {
        TestClient {
            elicitation,
            seen: Arc::default(),
            changed: Arc::new(Notify::new()),
            released: Arc::new(tokio::sync::watch::Sender::new(false)),
            capabilities: None,
        }
    }

    /// The same client, declaring `capabilities` (e.g. the tasks
    /// extension) instead of the default ones.
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> TestClient {
        self.capabilities = Some(capabilities);
        self
    }

    /// Lets every elicitation answered with
    /// [`Elicitation::AcceptWhenReleased`] (held or still to come) accept.
    pub fn release_elicitations(&self) {
        self.released.send_replace(true);
    }

    /// Connects over `transport` as an `era` client.
    pub async fn start<T, E, A>(
        self,
        era: Era,
        transport: T,
    ) -> RunningService<RoleClient, TestClient>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let client = match era {
            Era::Legacy => self
                .serve(transport)
                .await
                .expect("the legacy client connects"),
            Era::Modern => self
                .serve_with_lifecycle(
                    transport,
                    rmcp::service::ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .expect("the 2026-07-28 client connects"),
        };
        client
            .set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
            .await;
        client
    }
}

/// Waits until `text` (growing, with `grew` woken on each change) contains
/// `needle`; the whole text then.
pub async fn wait_for_text(text: &Mutex<String>, grew: &Notify, needle: &str) -> String {
    let wait = async {
        loop {
            let notified = grew.notified();
            {
                let text = text.lock().unwrap();
                if text.contains(needle) {
                    return text.clone();
                }
            }
            notified.await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("never saw {needle:?} in:\n{}", text.lock().unwrap()))
}

/// Connects a new client to the HTTP endpoint `url` in `era`, answering
/// elicitations with `elicitation`, sending `bearer` if given.
pub async fn http_client(
    url: &str,
    era: Era,
    elicitation: Elicitation,
    bearer: Option<&str>,
) -> (RunningService<RoleClient, TestClient>, TestClient) {
    install_tls_provider();
    let mut config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_string(),
        );
    if let Some(token) = bearer {
        config = config.auth_header(token.to_string());
    }
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    let handler = TestClient::new(elicitation);
    let client = handler.clone().start(era, transport).await;
    (client, handler)
}

/// Installs rustls's ring provider for this process: the workspace's
/// rustls is built without a default provider (no C crypto library), and
/// rmcp's HTTP client needs one. Idempotent.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Sends SIGTERM to `pid`.
fn send_sigterm(pid: u32) {
    let pid = rustix::process::Pid::from_raw(pid as i32).expect("a process id is positive");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM)
        .expect("the host process takes a signal");
}

/// Writes `bytes` as `name` the way editors and build tools do: to a
/// temporary file, then renamed into place.
pub fn write_then_rename(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

/// How many tools `misbehaving.wasm` (tests/components/misbehaving) lists.
pub const MISBEHAVING_TOOLS: usize = 24;

/// The directory `cargo xtask build-plugins` fills.
pub fn components_dir() -> PathBuf {
    target_dir().join("components")
}

/// Where test hosts keep their default compile cache: inside the
/// checkout, never the user's home. Set as `XDG_CACHE_HOME`.
pub fn test_cache_home() -> PathBuf {
    target_dir().join("test-cache")
}

/// A listed tool's four annotation hints: read-only, destructive,
/// idempotent, open-world (`None` where the tool left one out).
pub fn hints(tool: &Tool) -> (Option<bool>, Option<bool>, Option<bool>, Option<bool>) {
    let a = tool.annotations.as_ref().expect("annotations");
    (
        a.read_only_hint,
        a.destructive_hint,
        a.idempotent_hint,
        a.open_world_hint,
    )
}

/// The workspace's `target/` directory.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// The built component `name` (e.g. `hello`), as bytes.
pub fn component(name: &str) -> Vec<u8> {
    let path = components_dir().join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!("cannot read {}: {e}. Build the components first: `cargo xtask build-plugins` (or run `cargo xtask test`)", path.display())
    })
}

/// How long test hosts let `tools/list` and `tools/call` wait for the
/// initial load (`host.load_wait_secs`), unless a test sets its own.
///
/// The default (45 s) suits a client's request timeout; a test machine that
/// compiles many components at once for parallel tests can take longer on a
/// first run, and a test must see the whole directory, not race its load.
const TEST_LOAD_WAIT_SECS: u64 = 600;

/// `text` (a `toolhost.toml`, or none) with `[host] load_wait_secs` set to
/// [`TEST_LOAD_WAIT_SECS`] unless the test chose a value.
fn with_test_load_wait(text: Option<&str>) -> String {
    let text = text.unwrap_or("");
    if text.contains("load_wait_secs") {
        return text.to_string();
    }
    let line = format!("load_wait_secs = {TEST_LOAD_WAIT_SECS}\n");
    match text.find("[host]\n") {
        Some(at) => {
            let after = at + "[host]\n".len();
            format!("{}{line}{}", &text[..after], &text[after..])
        }
        None => format!("{text}\n[host]\n{line}"),
    }
}

/// `text` (a `toolhost.toml`) with `line` added to its `[host]` table
/// (made at the end when there is none), unless the text already sets
/// `key` there.
pub fn with_host_setting(text: &str, key: &str, line: &str) -> String {
    if text
        .lines()
        .any(|l| l.trim_start().starts_with(&format!("{key} =")))
    {
        return text.to_string();
    }
    match text.find("[host]\n") {
        Some(at) => {
            let after = at + "[host]\n".len();
            format!("{}{line}\n{}", &text[..after], &text[after..])
        }
        None => format!("{text}\n[host]\n{line}\n"),
    }
}

/// Copies what a child writes to `pipe` into a string (and to the test's
/// own stderr), waking the returned `Notify` on every write.
pub fn capture_stderr(
    pipe: Option<impl tokio::io::AsyncRead + Unpin + Send + 'static>,
) -> (Arc<Mutex<String>>, Arc<Notify>) {
    let stderr = Arc::new(Mutex::new(String::new()));
    let grew = Arc::new(Notify::new());
    if let Some(mut pipe) = pipe {
        let (stderr, grew) = (stderr.clone(), grew.clone());
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]).to_string();
                eprint!("{text}");
                stderr.lock().unwrap().push_str(&text);
                grew.notify_waiters();
            }
        });
    }
    (stderr, grew)
}

/// How to start a host.
pub struct HostOptions {
    /// Components to put in the plugin directory, by name.
    pub components: Vec<String>,
    /// Extra files for the plugin directory: (file name, bytes).
    pub extra_files: Vec<(String, Vec<u8>)>,
    /// `toolhost.toml` text, if any.
    pub config: Option<String>,
    /// The client's era.
    pub era: Era,
    /// How the client answers elicitations.
    pub elicitation: Elicitation,
    /// Environment variables for the host process.
    pub env: Vec<(String, String)>,
    /// Extra arguments for `toolhost serve`.
    pub args: Vec<String>,
    /// Serve over Streamable HTTP on a loopback port instead of stdio.
    pub http: bool,
    /// The client's `Authorization: Bearer` token (HTTP only).
    pub bearer: Option<String>,
}

impl HostOptions {
    /// A host serving `components`, with a legacy client that cannot elicit.
    pub fn new(components: &[&str]) -> HostOptions {
        HostOptions {
            components: components.iter().map(|s| s.to_string()).collect(),
            extra_files: Vec::new(),
            config: None,
            era: Era::Legacy,
            elicitation: Elicitation::Unsupported,
            env: Vec::new(),
            args: Vec::new(),
            http: false,
            bearer: None,
        }
    }

    /// Serves over Streamable HTTP (`serve --http 127.0.0.1:0`); the client
    /// connects to `/mcp`.
    pub fn http(mut self) -> Self {
        self.http = true;
        self
    }

    /// Sends `Authorization: Bearer TOKEN` (HTTP only).
    pub fn bearer(mut self, token: &str) -> Self {
        self.bearer = Some(token.to_string());
        self
    }

    /// Adds an argument to `toolhost serve`.
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_string());
        self
    }

    /// Sets the era.
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// Sets the config file's text.
    pub fn config(mut self, text: impl Into<String>) -> Self {
        self.config = Some(text.into());
        self
    }

    /// Sets how elicitations are answered.
    pub fn elicitation(mut self, e: Elicitation) -> Self {
        self.elicitation = e;
        self
    }

    /// Adds a file to the plugin directory.
    pub fn file(mut self, name: &str, bytes: Vec<u8>) -> Self {
        self.extra_files.push((name.to_string(), bytes));
        self
    }

    /// Sets an environment variable for the host.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }
}

/// A running `toolhost serve` with a connected client.
pub struct Host {
    /// The client session.
    pub client: RunningService<RoleClient, TestClient>,
    /// The client's handler state.
    pub handler: TestClient,
    /// Everything the host wrote to stderr so far.
    pub stderr: Arc<Mutex<String>>,
    stderr_grew: Arc<Notify>,
    /// The plugin directory.
    pub plugins: PathBuf,
    /// The host's process id.
    pub pid: u32,
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`, when serving HTTP.
    pub url: Option<String>,
    /// The process, when the client does not own it (HTTP).
    process: Option<Arc<tokio::sync::Mutex<tokio::process::Child>>>,
    _dir: Arc<tempfile::TempDir>,
}

impl Host {
    /// Starts the host and connects.
    pub async fn start(options: HostOptions) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        for name in &options.components {
            std::fs::write(plugins.join(format!("{name}.wasm")), component(name)).unwrap();
        }
        for (name, bytes) in &options.extra_files {
            std::fs::write(plugins.join(name), bytes).unwrap();
        }
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .arg("serve")
            .arg("--plugins")
            .arg(&plugins)
            .args(&options.args);
        let config = with_test_load_wait(options.config.as_deref());
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, config).unwrap();
        command.arg("--config").arg(path);
        command.env("TOOLHOST_LOG", "info,toolhost=debug");
        // The default compile cache, kept inside the checkout: tests never
        // write to the user's home, and every test host shares the compiled
        // components (a test that needs its own cache passes --cache-dir).
        command.env("XDG_CACHE_HOME", test_cache_home());
        for (k, v) in &options.env {
            command.env(k, v);
        }
        if options.http {
            return Host::start_http(command, &options, dir, plugins).await;
        }
        Host::connect(command, options.era, options.elicitation, dir, plugins).await
    }

    /// Runs `command` with `--http 127.0.0.1:0`, waits for the address it
    /// logs, and connects to it over Streamable HTTP.
    async fn start_http(
        mut command: tokio::process::Command,
        options: &HostOptions,
        dir: tempfile::TempDir,
        plugins: PathBuf,
    ) -> Host {
        command
            .arg("--http")
            .arg("127.0.0.1:0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("toolhost starts");
        let pid = child.id().expect("the host is running");
        let (stderr, stderr_grew) = capture_stderr(child.stderr.take());
        const SERVING: &str = "serving MCP over HTTP at ";
        let log = wait_for_text(&stderr, &stderr_grew, SERVING).await;
        let url = log
            .split(SERVING)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .expect("the log names the endpoint")
            .to_string();
        let (client, handler) = http_client(
            &url,
            options.era,
            options.elicitation,
            options.bearer.as_deref(),
        )
        .await;
        Host {
            client,
            handler,
            stderr,
            stderr_grew,
            plugins,
            pid,
            url: Some(url),
            process: Some(Arc::new(tokio::sync::Mutex::new(child))),
            _dir: Arc::new(dir),
        }
    }

    /// Another client of this HTTP host, in `era`, answering elicitations
    /// with `elicitation`, sending `bearer` if given.
    pub async fn another_client(
        &self,
        era: Era,
        elicitation: Elicitation,
        bearer: Option<&str>,
    ) -> Host {
        let url = self.url.as_deref().expect("the host serves HTTP");
        let (client, handler) = http_client(url, era, elicitation, bearer).await;
        Host {
            client,
            handler,
            stderr: self.stderr.clone(),
            stderr_grew: self.stderr_grew.clone(),
            plugins: self.plugins.clone(),
            pid: self.pid,
            url: self.url.clone(),
            process: self.process.clone(),
            _dir: self._dir.clone(),
        }
    }

    /// Closes the client and waits until the host's process has exited (a
    /// stdio host exits when its stdin closes; an HTTP host is sent
    /// SIGTERM): what it held, such as the audit trail's lock, is free
    /// after.
    pub async fn stop(self) {
        let _ = self.client.cancel().await;
        if let Some(process) = &self.process {
            send_sigterm(self.pid);
            let mut child = process.lock().await;
            tokio::time::timeout(Duration::from_secs(60), child.wait())
                .await
                .expect("the host exits in time")
                .expect("the host's status can be read");
        }
    }

    /// Sends SIGTERM to the host's process.
    pub fn terminate(&self) {
        send_sigterm(self.pid);
    }

    /// Waits for the host's process to exit (HTTP hosts); its exit status.
    pub async fn exit_status(&self) -> std::process::ExitStatus {
        let process = self.process.clone().expect("the harness owns the process");
        let mut child = process.lock().await;
        tokio::time::timeout(Duration::from_secs(60), child.wait())
            .await
            .expect("the host exits in time")
            .expect("the host's status can be read")
    }

    /// Runs `command`, a server on stdio (e.g. the README's demo command),
    /// and connects to it as an `era` client answering elicitations with
    /// `elicitation`.
    pub async fn spawn(
        command: tokio::process::Command,
        era: Era,
        elicitation: Elicitation,
    ) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().to_path_buf();
        Host::connect(command, era, elicitation, dir, plugins).await
    }

    async fn connect(
        command: tokio::process::Command,
        era: Era,
        elicitation: Elicitation,
        dir: tempfile::TempDir,
        plugins: PathBuf,
    ) -> Host {
        let (transport, stderr_pipe) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = transport.id().expect("the host is running");
        let (stderr, stderr_grew) = capture_stderr(stderr_pipe);
        let handler = TestClient::new(elicitation);
        let client = handler.clone().start(era, transport).await;
        Host {
            pid,
            client,
            handler,
            stderr,
            stderr_grew,
            plugins,
            url: None,
            process: None,
            _dir: Arc::new(dir),
        }
    }

    /// Opens a `subscriptions/listen` stream for tool-list changes
    /// (2026-07-28 clients).
    pub async fn listen(&self) -> rmcp::service::Subscription {
        session::listen(&self.client).await
    }

    /// Lists every tool.
    pub async fn tools(&self) -> Vec<Tool> {
        session::tools(&self.client).await
    }

    /// Calls `name` with `arguments` (an object), following
    /// `input_required` rounds as a real client does.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        session::call(&self.client, name, arguments).await
    }

    /// Calls and expects a successful result; returns `structuredContent`.
    pub async fn ok(&self, name: &str, arguments: Value) -> Value {
        session::ok(&self.client, name, arguments).await
    }

    /// Reads `uri`, whose read the component holds in a request to
    /// `upstream` (which holds it), and cancels the read once the request
    /// arrived; returns when the host has logged the cancellation (its
    /// metrics and audit record are written before that line), with
    /// `upstream` released.
    pub async fn cancel_a_held_read(&self, uri: &str, upstream: &Recorder) {
        use rmcp::model::{ClientRequest, ReadResourceRequestParams, Request};
        let request =
            ClientRequest::ReadResourceRequest(Request::new(ReadResourceRequestParams::new(uri)));
        let handle = self
            .client
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await
            .unwrap();
        upstream.wait_for_requests(1).await;
        handle.cancel(Some("closed".into())).await.unwrap();
        self.wait_for_stderr("resource_read cancelled by the client")
            .await;
        upstream.release();
    }

    /// Calls and expects a tool error; returns the envelope's first issue.
    pub async fn tool_error(&self, name: &str, arguments: Value) -> Value {
        session::tool_error(&self.client, name, arguments).await
    }

    /// The host's resident memory in KiB (VmRSS).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc")
    }

    /// Waits until stderr contains `needle`.
    pub async fn wait_for_stderr(&self, needle: &str) -> String {
        wait_for_text(&self.stderr, &self.stderr_grew, needle).await
    }

    /// The host's `toolhost.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.plugins
            .parent()
            .expect("beside the plugins")
            .join("toolhost.toml")
    }

    /// Replaces the host's `toolhost.toml` with `text` (plus the tests'
    /// `host.load_wait_secs`, as at start), as an editor saves: a new file
    /// renamed into place.
    pub fn write_config(&self, text: &str) {
        let path = self.config_path();
        let staged = path.with_extension("toml.new");
        std::fs::write(&staged, with_test_load_wait(Some(text))).unwrap();
        std::fs::rename(&staged, &path).unwrap();
    }

    /// Waits until `check` holds for what the client saw.
    pub async fn wait_for_seen(&self, check: impl Fn(&Seen) -> bool) {
        session::wait_for_seen(&self.handler, check).await
    }
}

/// A request that reached a [`Recorder`].
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The method.
    pub method: String,
    /// The path.
    pub path: String,
    /// The `authorization` header, if any.
    pub authorization: Option<String>,
    /// Every header, names in lower case.
    pub headers: Vec<(String, String)>,
}

impl Recorded {
    fn of(request: &axum::extract::Request) -> Recorded {
        Recorded {
            method: request.method().to_string(),
            path: request.uri().path().to_string(),
            authorization: request
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            headers: request
                .headers()
                .iter()
                .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
                .collect(),
        }
    }

    /// The value of the header `name` (lower case), if it was sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A loopback HTTP server that records every request and answers 200
/// (or redirects, under `/redirect?to=URL`; or, under `/counter`, the
/// number of requests received so far, that one included).
pub struct Recorder {
    /// Requests to `/hold` wait until this is true.
    release: tokio::sync::watch::Sender<bool>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The port.
    pub port: u16,
    /// Requests received.
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    _server: sandbox_kit::ServerHandle,
}

impl Recorder {
    /// Starts one.
    pub async fn start() -> Recorder {
        use axum::extract::{Query, Request};
        use axum::response::{IntoResponse, Redirect};
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let log = requests.clone();
        let (release, released) = tokio::sync::watch::channel(false);
        let hold_log = requests.clone();
        let router = axum::Router::new()
            .route(
                "/hold",
                axum::routing::get(move || {
                    let mut released = released.clone();
                    let log = hold_log.clone();
                    async move {
                        log.lock().unwrap().push(Recorded {
                            method: "GET".into(),
                            path: "/hold".into(),
                            authorization: None,
                            headers: Vec::new(),
                        });
                        let _ = released.wait_for(|r| *r).await;
                        "released"
                    }
                }),
            )
            .route(
                "/counter",
                axum::routing::get({
                    let log = requests.clone();
                    move |request: Request| {
                        let log = log.clone();
                        async move {
                            let mut log = log.lock().unwrap();
                            log.push(Recorded::of(&request));
                            log.len().to_string()
                        }
                    }
                }),
            )
            .route(
                "/redirect",
                axum::routing::any({
                    let log = requests.clone();
                    move |Query(q): Query<std::collections::HashMap<String, String>>,
                          request: Request| {
                        let log = log.clone();
                        async move {
                            log.lock().unwrap().push(Recorded::of(&request));
                            Redirect::temporary(&q["to"]).into_response()
                        }
                    }
                }),
            )
            .fallback(move |request: Request| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(Recorded::of(&request));
                    "recorded"
                }
            });
        let server = sandbox_kit::serve(router, 0).await.unwrap();
        Recorder {
            release,
            url: server.url(),
            port: server.addr().port(),
            requests,
            _server: server,
        }
    }

    /// Lets every request held at `/hold` finish.
    pub fn release(&self) {
        self.release.send_replace(true);
    }

    /// Waits until `n` requests have arrived.
    pub async fn wait_for_requests(&self, n: usize) {
        let wait = async {
            loop {
                if self.requests.lock().unwrap().len() >= n {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .expect("the requests arrived in time");
    }

    /// Requests received so far.
    pub fn received(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// How many `POST`s arrived so far: the mutations applied.
    pub fn posts(&self) -> usize {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.method == "POST")
            .count()
    }

    /// A config block letting `misbehaving.wasm` reach this server.
    pub fn allow_block(&self, plugin: &str) -> String {
        format!(
            "[[plugins.{plugin}.allow]]\nhost = \"127.0.0.1\"\nport = {}\n",
            self.port
        )
    }
}

/// Counts tool-list changes the way each era receives them.
pub struct Changes {
    stream: Option<Subscription>,
    seen: usize,
}

impl Changes {
    /// Starts counting, once the host serves its initial load (it answers
    /// `initialize` before that, and `tools/list` waits for it).
    pub async fn open(host: &Host, era: Era) -> Changes {
        host.tools().await;
        Changes::listen(host, era).await
    }

    /// Starts counting now, whether or not the initial load is in.
    pub async fn listen(host: &Host, era: Era) -> Changes {
        let stream = match era {
            Era::Legacy => None,
            Era::Modern => Some(host.listen().await),
        };
        Changes { stream, seen: 0 }
    }

    /// Waits for the next change notification.
    pub async fn next(&mut self, host: &Host) {
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
                    matches!(
                        n,
                        rmcp::model::ServerNotification::ToolListChangedNotification(_)
                    ),
                    "{n:?}"
                );
            }
        }
        self.seen += 1;
    }

    /// How many notifications arrived that were not yet consumed with `next`.
    pub async fn unread(&mut self, host: &Host) -> usize {
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

/// What a connected client does in a session, whatever serves it (the
/// binary, or a Gateway in-process): both tiers' `Host`s delegate here.
pub mod session {
    use std::time::Duration;

    use rmcp::ServiceError;
    use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
    use rmcp::service::{RoleClient, RunningService, Subscription};
    use serde_json::{Value, json};

    use super::{Seen, TestClient};

    /// The test client's side of a session.
    pub type Client = RunningService<RoleClient, TestClient>;

    /// `params` again, as a 2026-07-28 client retries after
    /// `input_required`: the sealed `state` and the user's answer to the
    /// confirmation (`yes`: accept with `confirm: true`; else `false`).
    pub fn retry_with_state(
        params: &CallToolRequestParams,
        state: impl Into<String>,
        yes: bool,
    ) -> CallToolRequestParams {
        let answer = rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
            .with_content(json!({"confirm": yes}));
        let mut responses = rmcp::model::InputResponses::new();
        responses.insert("confirm".into(), serde_json::to_value(answer).unwrap());
        params
            .clone()
            .with_input_responses(responses)
            .with_request_state(state.into())
    }

    /// The message of a retry whose state was refused (a tool error or a
    /// JSON-RPC error); panics if the tool ran.
    pub fn refusal(answer: Result<rmcp::model::CallToolResponse, ServiceError>) -> String {
        match answer {
            Ok(rmcp::model::CallToolResponse::Complete(result))
                if result.is_error == Some(true) =>
            {
                result.structured_content.unwrap().to_string()
            }
            Err(ServiceError::McpError(e)) => e.message.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// Opens a `subscriptions/listen` stream for tool-list changes
    /// (2026-07-28 clients).
    pub async fn listen(client: &Client) -> Subscription {
        client
            .listen(
                rmcp::model::SubscriptionFilter::builder()
                    .tools_list_changed()
                    .build(),
            )
            .await
            .expect("the listen stream opens")
    }

    /// Lists every tool.
    pub async fn tools(client: &Client) -> Vec<Tool> {
        client.list_all_tools().await.expect("tools/list works")
    }

    /// Calls `name` with `arguments` (an object).
    pub async fn call(
        client: &Client,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ServiceError> {
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Value::Object(map) = arguments {
            params = params.with_arguments(map);
        }
        client.call_tool(params).await
    }

    /// Calls and expects a successful result; returns `structuredContent`.
    pub async fn ok(client: &Client, name: &str, arguments: Value) -> Value {
        let result = call(client, name, arguments)
            .await
            .expect("the call is answered");
        assert_ne!(
            result.is_error,
            Some(true),
            "{name} failed: {:?}",
            result.structured_content
        );
        check_text_matches_structured(&result);
        result.structured_content.expect("structured content")
    }

    /// Calls and expects a tool error; returns the envelope's first issue.
    pub async fn tool_error(client: &Client, name: &str, arguments: Value) -> Value {
        let result = call(client, name, arguments)
            .await
            .expect("the call is answered");
        assert_eq!(
            result.is_error,
            Some(true),
            "{name} should fail: {:?}",
            result.structured_content
        );
        check_text_matches_structured(&result);
        let envelope = result.structured_content.expect("an error envelope");
        assert_eq!(envelope["ok"], json!(false));
        assert_eq!(envelope["result"], Value::Null);
        envelope["issues"][0].clone()
    }

    /// Waits until `check` holds for what `handler` saw.
    pub async fn wait_for_seen(handler: &TestClient, check: impl Fn(&Seen) -> bool) {
        let wait = async {
            loop {
                let notified = handler.changed.notified();
                if check(&handler.seen.lock().unwrap()) {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .expect("the client saw the event in time");
    }

    /// The text block must carry the same JSON as `structuredContent`.
    fn check_text_matches_structured(result: &CallToolResult) {
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .expect("a text block");
        let parsed: Value = serde_json::from_str(&text).expect("the text block is JSON");
        assert_eq!(
            Some(parsed),
            result.structured_content,
            "text and structuredContent differ"
        );
    }
}
