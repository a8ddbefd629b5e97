//! Starting a server and driving it with rmcp's client.
//!
//! Every server the harness measures (toolhost, `native-echo`, FastMCP) is a
//! child process, started from a [`Launch`] and connected with the same
//! client: rmcp, legacy era (`initialize`, protocol 2025-11-25), no response
//! cache. Most speak MCP over stdio ([`Session::start`]); for the HTTP rows,
//! toolhost and `native-echo` serve Streamable HTTP on a loopback port they
//! choose and log ([`HttpServer`]), and any number of clients connect to
//! one server ([`HttpServer::connect`]). The client counts
//! `notifications/tools/list_changed` and notes when the last one arrived,
//! for the hot-reload and cold-start measurements.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    Implementation, ProtocolVersion,
};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::{oneshot, watch};

/// How long a server may take to answer anything before the harness gives
/// up on it.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// How much of a server's stderr is kept, to explain a failure.
const STDERR_TAIL: usize = 16 * 1024;

/// What a server serving Streamable HTTP logs, before its endpoint's URL,
/// once it listens: toolhost (`serve --http`) and `native-echo --http` alike.
pub const LISTENING: &str = "serving MCP over HTTP at ";

/// How to start one server.
#[derive(Debug, Clone)]
pub struct Launch {
    /// What the table calls it.
    pub label: String,
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl Launch {
    /// A launch of `program` with no arguments.
    pub fn new(label: impl Into<String>, program: impl Into<PathBuf>) -> Launch {
        Launch {
            label: label.into(),
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Launch {
        self.args.push(arg.into());
        self
    }

    /// Adds an environment variable.
    pub fn env(mut self, key: &str, value: &str) -> Launch {
        self.env.push((key.to_string(), value.to_string()));
        self
    }
}

/// What the client has seen of `notifications/tools/list_changed`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListChanged {
    /// How many arrived.
    pub count: usize,
    /// When the last one arrived.
    pub last: Option<Instant>,
}

/// The client's handler: legacy era, no capabilities, counts list changes.
#[derive(Clone)]
pub struct BenchClient {
    /// Updated on every `notifications/tools/list_changed`.
    list_changed: Arc<watch::Sender<ListChanged>>,
}

impl BenchClient {
    /// A handler, and what it will see of list changes.
    fn new() -> (BenchClient, watch::Receiver<ListChanged>) {
        let (sender, list_changed) = watch::channel(ListChanged::default());
        let handler = BenchClient {
            list_changed: Arc::new(sender),
        };
        (handler, list_changed)
    }
}

impl ClientHandler for BenchClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolhost-bench", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let now = Instant::now();
        self.list_changed.send_modify(|seen| {
            seen.count += 1;
            seen.last = Some(now);
        });
    }
}

/// A running server with a connected client.
pub struct Session {
    /// The client session.
    pub client: RunningService<RoleClient, BenchClient>,
    /// The server's process id.
    pub pid: u32,
    /// When the process was spawned (just before).
    pub spawned: Instant,
    /// What the client saw of list changes.
    pub list_changed: watch::Receiver<ListChanged>,
    /// The last [`STDERR_TAIL`] bytes the server wrote to stderr.
    stderr: Arc<Mutex<String>>,
    /// What the table calls the server.
    pub label: String,
}

impl Session {
    /// Spawns the server and completes the `initialize` handshake.
    pub async fn start(launch: &Launch) -> Result<Session> {
        let mut command = tokio::process::Command::new(&launch.program);
        command.args(&launch.args);
        for (k, v) in &launch.env {
            command.env(k, v);
        }
        let spawned = Instant::now();
        let (transport, stderr_pipe) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", launch.program.display()))?;
        let pid = transport
            .id()
            .with_context(|| format!("{} exited at once", launch.label))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut pipe) = stderr_pipe {
            // Keep reading, so a chatty server never blocks on a full pipe.
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    keep_tail(&tail, &String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let (handler, list_changed) = BenchClient::new();
        let connected = tokio::time::timeout(PATIENCE, handler.serve(transport)).await;
        let client = match connected {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                bail!(
                    "{} did not complete initialize: {e}; its stderr ends with:\n{}",
                    launch.label,
                    stderr.lock().expect("not poisoned")
                );
            }
            Err(_) => bail!("{} did not answer initialize in {PATIENCE:?}", launch.label),
        };
        client
            .set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
            .await;
        Ok(Session {
            client,
            pid,
            spawned,
            list_changed,
            stderr,
            label: launch.label.clone(),
        })
    }

    /// Connects a new client to `server`, reached at `url`, over Streamable
    /// HTTP and completes the `initialize` handshake: a session of its own.
    pub async fn connect_http(server: &HttpServer, url: &str) -> Result<Session> {
        // rustls is built without a default provider in this workspace (no
        // C crypto library); rmcp's HTTP client needs one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let transport = StreamableHttpClientTransport::from_uri(url.to_string());
        let (handler, list_changed) = BenchClient::new();
        let client = tokio::time::timeout(PATIENCE, handler.serve(transport))
            .await
            .with_context(|| format!("{} did not answer initialize in {PATIENCE:?}", server.label))?
            .with_context(|| {
                format!(
                    "{} did not complete initialize over HTTP; its stderr ends with:\n{}",
                    server.label,
                    server.stderr_tail()
                )
            })?;
        client
            .set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
            .await;
        Ok(Session {
            client,
            pid: server.pid,
            spawned: server.spawned,
            list_changed,
            stderr: server.stderr.clone(),
            label: server.label.clone(),
        })
    }

    /// A handle for sending requests; clones share the session.
    pub fn peer(&self) -> Peer<RoleClient> {
        self.client.peer().clone()
    }

    /// The names of the tools the server lists now.
    pub async fn tool_names(&self) -> Result<BTreeSet<String>> {
        let tools = tokio::time::timeout(PATIENCE, self.client.list_all_tools())
            .await
            .with_context(|| format!("{} did not answer tools/list in time", self.label))?
            .with_context(|| format!("tools/list failed on {}", self.label))?;
        Ok(tools.into_iter().map(|t| t.name.into_owned()).collect())
    }

    /// Lists tools until every name in `expected` is there, waiting for
    /// `notifications/tools/list_changed` in between (a server may answer
    /// before it has loaded everything).
    pub async fn wait_for_tools(&self, expected: &BTreeSet<String>) -> Result<()> {
        let deadline = Instant::now() + PATIENCE;
        let mut changes = self.list_changed.clone();
        loop {
            let seen = changes.borrow_and_update().count;
            let names = self.tool_names().await?;
            if expected.is_subset(&names) {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let changed = tokio::time::timeout(left, changes.wait_for(|c| c.count > seen)).await;
            if changed.is_err() {
                let missing: Vec<&String> = expected.difference(&names).collect();
                bail!(
                    "{} never listed {missing:?}; its stderr ends with:\n{}",
                    self.label,
                    self.stderr_tail()
                );
            }
        }
    }

    /// The tool list once it has stopped changing: lists, then waits `quiet`
    /// for a list-changed notification, and repeats while they come.
    pub async fn settled_tool_names(&self, quiet: Duration) -> Result<BTreeSet<String>> {
        let mut changes = self.list_changed.clone();
        loop {
            let seen = changes.borrow_and_update().count;
            let names = self.tool_names().await?;
            let changed = tokio::time::timeout(quiet, changes.wait_for(|c| c.count > seen)).await;
            if changed.is_err() {
                return Ok(names);
            }
        }
    }

    /// The server's resident memory in KiB (`VmRSS` in `/proc/PID/status`).
    pub fn rss_kib(&self) -> Result<u64> {
        rss_kib(self.pid)
    }

    /// CPU time the server has used so far, all threads, user + system.
    pub fn cpu_time(&self) -> Result<Duration> {
        cpu_time(self.pid)
    }

    /// What the server last wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().expect("not poisoned").clone()
    }

    /// Closes the session; the server exits when its stdin closes (or is
    /// killed if it does not).
    pub async fn stop(self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.client.cancel()).await;
    }
}

/// A server process serving MCP over Streamable HTTP on a loopback port.
/// Killed when dropped.
pub struct HttpServer {
    /// What the table calls it.
    pub label: String,
    /// Its MCP endpoint, as it logged it.
    pub url: String,
    /// Its process id.
    pub pid: u32,
    /// When the process was spawned (just before).
    pub spawned: Instant,
    /// The last [`STDERR_TAIL`] bytes it wrote to stderr.
    stderr: Arc<Mutex<String>>,
    /// The process, killed on drop.
    _process: tokio::process::Child,
}

impl HttpServer {
    /// Spawns the server (`launch` carries its HTTP flag, with port 0) and
    /// waits until it logs the URL it listens on ([`LISTENING`]).
    pub async fn start(launch: &Launch) -> Result<HttpServer> {
        let mut command = tokio::process::Command::new(&launch.program);
        command
            .args(&launch.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in &launch.env {
            command.env(k, v);
        }
        let spawned = Instant::now();
        let mut process = command
            .spawn()
            .with_context(|| format!("cannot start {}", launch.program.display()))?;
        let pid = process
            .id()
            .with_context(|| format!("{} exited at once", launch.label))?;
        let pipe = process.stderr.take().context("stderr is piped")?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, url) = oneshot::channel();
        let tail = stderr.clone();
        // Keep reading, so a chatty server never blocks on a full pipe.
        tokio::spawn(async move {
            let mut found = Some(found);
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.split(LISTENING).nth(1)
                    && let Some(found) = found.take()
                {
                    let _ = found.send(url.trim().to_string());
                }
                keep_tail(&tail, &format!("{line}\n"));
            }
        });
        let url = match tokio::time::timeout(PATIENCE, url).await {
            Ok(Ok(url)) => url,
            Ok(Err(_)) => bail!(
                "{} exited before it listened; its stderr ends with:\n{}",
                launch.label,
                stderr.lock().expect("not poisoned")
            ),
            Err(_) => bail!("{} did not listen within {PATIENCE:?}", launch.label),
        };
        Ok(HttpServer {
            label: launch.label.clone(),
            url,
            pid,
            spawned,
            stderr,
            _process: process,
        })
    }

    /// A new client session on this server.
    pub async fn connect(&self) -> Result<Session> {
        Session::connect_http(self, &self.url).await
    }

    /// A new client session on this server reached at `url`: a load
    /// balancer in front of it (and maybe others).
    pub async fn connect_via(&self, url: &str) -> Result<Session> {
        Session::connect_http(self, url).await
    }

    /// CPU time the server has used so far, all threads, user + system.
    pub fn cpu_time(&self) -> Result<Duration> {
        cpu_time(self.pid)
    }

    /// What the server last wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().expect("not poisoned").clone()
    }
}

/// Appends `text` to `tail`, keeping about the last [`STDERR_TAIL`] bytes.
fn keep_tail(tail: &Mutex<String>, text: &str) {
    let mut tail = tail.lock().expect("not poisoned");
    tail.push_str(text);
    if tail.len() > 2 * STDERR_TAIL {
        let mut cut = tail.len() - STDERR_TAIL;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail.drain(..cut);
    }
}

/// The resident memory of process `pid` in KiB.
pub fn rss_kib(pid: u32) -> Result<u64> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no VmRSS line in {path}"))
}

/// CPU time process `pid` has used, user + system, summed over its live
/// threads: the first field of each `/proc/PID/task/TID/schedstat`, the
/// time the thread spent on a CPU in nanoseconds. (`utime` + `stime` in
/// `/proc/PID/stat` count in ticks of 10 ms, too coarse for a per-call
/// figure near 100 µs.) A thread that has exited is no longer counted, so
/// take the two readings of a difference while the server keeps its
/// threads, as a server busy with calls does.
pub fn cpu_time(pid: u32) -> Result<Duration> {
    let dir = format!("/proc/{pid}/task");
    let mut total_ns: u64 = 0;
    for task in std::fs::read_dir(&dir).with_context(|| format!("cannot list {dir}"))? {
        let path = task
            .with_context(|| format!("cannot list {dir}"))?
            .path()
            .join("schedstat");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                total_ns += on_cpu_ns(&text)
                    .with_context(|| format!("unexpected {}: {text:?}", path.display()))?
            }
            // The thread exited between the listing and the read: the
            // file is gone (ENOENT) or its task is (ESRCH).
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(ESRCH) => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }
    Ok(Duration::from_nanos(total_ns))
}

/// Linux's "no such process", what reading a `/proc` file of an exited
/// thread can fail with.
const ESRCH: i32 = 3;

/// The time on a CPU, in nanoseconds, from a `schedstat` line
/// (`run_ns wait_ns timeslices`).
fn on_cpu_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().next()?.parse().ok()
}

/// Calls `tool` once and returns its result, a tool error included; an
/// answer that asks for input, or none within the patience, is an error.
pub async fn call_answered(
    peer: &Peer<RoleClient>,
    tool: &str,
    arguments: &Value,
) -> Result<CallToolResult> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = arguments {
        params = params.with_arguments(map.clone());
    }
    let response = tokio::time::timeout(PATIENCE, peer.call_tool_once(params))
        .await
        .with_context(|| format!("{tool} did not answer in {PATIENCE:?}"))?
        .with_context(|| format!("tools/call {tool} failed"))?;
    let CallToolResponse::Complete(result) = response else {
        bail!("{tool} asked for input; the benchmark calls only tools that do not");
    };
    Ok(result)
}

/// Calls `tool` once and insists on a successful result.
pub async fn call(
    peer: &Peer<RoleClient>,
    tool: &str,
    arguments: &Value,
) -> Result<CallToolResult> {
    let result = call_answered(peer, tool, arguments).await?;
    if result.is_error == Some(true) {
        bail!(
            "{tool} returned a tool error: {}",
            result
                .structured_content
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default()
        );
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_nanoseconds_on_a_cpu() {
        assert_eq!(on_cpu_ns("203180847 117061730 429\n"), Some(203_180_847));
        assert_eq!(on_cpu_ns(""), None);
    }

    #[test]
    fn this_process_has_used_some_cpu() {
        let spent = cpu_time(std::process::id()).unwrap();
        assert!(spent > Duration::ZERO);
    }
}
