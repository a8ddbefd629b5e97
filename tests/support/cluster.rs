//! Replicas of one service: `toolhost serve --http` processes on fixed
//! loopback ports (so a killed one comes back on the same address), and a
//! real HAProxy (Debian's `haproxy`) balancing across them round-robin,
//! optionally sticky on `Mcp-Session-Id` as docs/scaling.md tells
//! operators to configure it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::{capture_stderr, test_cache_home, wait_for_text, with_test_load_wait};
use toolhost_test_infra::free_port;
pub use toolhost_test_infra::{Haproxy, Stickiness};

/// What the log says once the HTTP listener is bound.
const SERVING: &str = "serving MCP over HTTP at ";

/// What a replica says when its port is taken.
const PORT_TAKEN: &str = "Address already in use";

/// How a replica is started: the shared plugin directory and config file,
/// and its environment.
#[derive(Clone)]
pub struct ReplicaSpec {
    /// The plugin directory every replica serves (a shared volume).
    pub plugins: PathBuf,
    /// The `toolhost.toml` every replica reads.
    pub config: PathBuf,
    /// Environment variables (API keys, state keys).
    pub env: Vec<(String, String)>,
}

impl ReplicaSpec {
    /// Makes `dir/plugins` (empty) and writes `config` as
    /// `dir/toolhost.toml`, for replicas with `env`.
    pub fn new(dir: &Path, config: &str, env: &[(&str, &str)]) -> ReplicaSpec {
        let plugins = dir.join("plugins");
        std::fs::create_dir_all(&plugins).unwrap();
        let path = dir.join("toolhost.toml");
        std::fs::write(&path, with_test_load_wait(Some(config))).unwrap();
        ReplicaSpec {
            plugins,
            config: path,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

/// A `toolhost serve --http 127.0.0.1:PORT` process. Killed on drop.
pub struct Replica {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Everything it wrote to stderr so far.
    pub stderr: Arc<Mutex<String>>,
    grew: Arc<Notify>,
    child: tokio::process::Child,
    spec: ReplicaSpec,
}

impl Replica {
    /// Starts a replica on a free port. A port found free can be taken
    /// (by another test's connection) before the replica binds it: then
    /// another is tried, a bounded number of times.
    pub async fn start(spec: &ReplicaSpec) -> Replica {
        for _ in 0..10 {
            if let Some(replica) = Replica::try_start_on(spec, free_port()).await {
                return replica;
            }
        }
        panic!("no free port could be bound for a replica in 10 tries")
    }

    /// Starts a replica on `port` and waits until it listens. The port may
    /// be held a moment longer (a connection from it that has not closed
    /// yet): it is tried again, a bounded number of times.
    pub async fn start_on(spec: &ReplicaSpec, port: u16) -> Replica {
        for _ in 0..50 {
            if let Some(replica) = Replica::try_start_on(spec, port).await {
                return replica;
            }
        }
        panic!("127.0.0.1:{port} stayed taken for 50 tries to start a replica on it")
    }

    /// Starts a replica on `port`; `None` if the port is taken (the
    /// replica said so and exited). Any other failure panics with its log.
    async fn try_start_on(spec: &ReplicaSpec, port: u16) -> Option<Replica> {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .arg("serve")
            .arg("--plugins")
            .arg(&spec.plugins)
            .arg("--config")
            .arg(&spec.config)
            .arg("--http")
            .arg(format!("127.0.0.1:{port}"))
            .env("TOOLHOST_LOG", "info,toolhost=debug")
            .env("XDG_CACHE_HOME", test_cache_home())
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("toolhost starts");
        let (stderr, grew) = capture_stderr(child.stderr.take());
        let serving = tokio::select! {
            _ = wait_for_text(&stderr, &grew, SERVING) => true,
            _ = child.wait() => false,
        };
        if !serving {
            // The reason is the last thing it wrote.
            let log = wait_for_text(&stderr, &grew, "Error:").await;
            assert!(log.contains(PORT_TAKEN), "the replica exited:\n{log}");
            return None;
        }
        Some(Replica {
            port,
            stderr,
            grew,
            child,
            spec: spec.clone(),
        })
    }

    /// Its MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Its Prometheus endpoint (on the HTTP listener).
    pub fn metrics_url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.port)
    }

    /// Waits until its stderr contains `needle`; everything so far.
    pub async fn wait_for_stderr(&self, needle: &str) -> String {
        wait_for_text(&self.stderr, &self.grew, needle).await
    }

    /// Kills it with SIGKILL (no drain: a crash) and waits until it is gone.
    pub async fn kill(&mut self) {
        self.child.start_kill().expect("the replica can be killed");
        self.child.wait().await.expect("the replica's status");
    }

    /// Starts it again on the same port, as an orchestrator restarts a
    /// crashed pod.
    pub async fn restart(&mut self) {
        *self = Replica::start_on(&self.spec, self.port).await;
    }
}
