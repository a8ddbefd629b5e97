//! Replicas of one service: `toolhost serve --http` processes on fixed
//! loopback ports (so a killed one comes back on the same address), and a
//! real HAProxy (Debian's `haproxy`) balancing across them round-robin,
//! optionally sticky on `Mcp-Session-Id` as docs/scaling.md tells
//! operators to configure it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::infra::{ensure_installed, free_port};
use super::{capture_stderr, test_cache_home, wait_for_text, with_test_load_wait};

/// What the log says once the HTTP listener is bound.
const SERVING: &str = "serving MCP over HTTP at ";

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
    /// Starts a replica on a free port.
    pub async fn start(spec: &ReplicaSpec) -> Replica {
        Replica::start_on(spec, free_port()).await
    }

    /// Starts a replica on `port` and waits until it listens.
    pub async fn start_on(spec: &ReplicaSpec, port: u16) -> Replica {
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
        wait_for_text(&stderr, &grew, SERVING).await;
        Replica {
            port,
            stderr,
            grew,
            child,
            spec: spec.clone(),
        }
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

/// How HAProxy routes requests that carry a session.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stickiness {
    /// Round-robin for every request.
    None,
    /// A request carrying `Mcp-Session-Id` goes to the replica whose
    /// response issued it; everything else round-robin.
    SessionId,
}

/// A running HAProxy in front of some replicas. Killed on drop.
pub struct Haproxy {
    /// Its frontend's MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The configuration it runs, as written.
    pub config: String,
    child: tokio::process::Child,
    _dir: tempfile::TempDir,
}

/// The HAProxy configuration docs/scaling.md shows: round-robin over
/// `backends` (ports on 127.0.0.1), health-checked on `/healthz`, retrying
/// only requests that never reached a replica, and (with
/// [`Stickiness::SessionId`]) legacy sessions pinned to their replica.
pub fn haproxy_config(frontend: u16, backends: &[u16], stickiness: Stickiness) -> String {
    let mut config = format!(
        "global\n\
         \x20   maxconn 2048\n\
         defaults\n\
         \x20   mode http\n\
         \x20   timeout connect 1s\n\
         \x20   timeout client 60s\n\
         \x20   timeout server 60s\n\
         \x20   timeout http-keep-alive 10s\n\
         \x20   retries 3\n\
         \x20   option redispatch 1\n\
         frontend mcp\n\
         \x20   bind 127.0.0.1:{frontend}\n\
         \x20   default_backend toolhost\n\
         backend toolhost\n\
         \x20   balance roundrobin\n\
         \x20   option httpchk GET /healthz\n\
         \x20   http-check expect status 200\n\
         \x20   default-server check inter 200ms fall 1 rise 1\n"
    );
    if stickiness == Stickiness::SessionId {
        config.push_str(
            "    stick-table type string len 128 size 100k expire 30m\n\
             \x20   stick on req.hdr(mcp-session-id)\n\
             \x20   stick store-response res.hdr(mcp-session-id)\n",
        );
    }
    for (i, port) in backends.iter().enumerate() {
        config.push_str(&format!("    server replica{i} 127.0.0.1:{port}\n"));
    }
    config
}

impl Haproxy {
    /// Starts HAProxy in front of `backends`, or says why it cannot.
    pub async fn start(backends: &[u16], stickiness: Stickiness) -> Result<Haproxy, String> {
        ensure_installed(&[("haproxy", "haproxy")])?;
        let program = if Path::new("/usr/sbin/haproxy").exists() {
            "/usr/sbin/haproxy"
        } else {
            "haproxy"
        };
        let port = free_port();
        let config = haproxy_config(port, backends, stickiness);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, &config).unwrap();
        let check = std::process::Command::new(program)
            .arg("-c")
            .arg("-f")
            .arg(&path)
            .output()
            .map_err(|e| format!("cannot run haproxy: {e}"))?;
        if !check.status.success() {
            return Err(format!(
                "haproxy refused the configuration:\n{config}\n{}",
                String::from_utf8_lossy(&check.stderr)
            ));
        }
        let child = tokio::process::Command::new(program)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start haproxy: {e}"))?;
        // It logs nothing when ready: it is ready when the frontend accepts.
        let accepting = async {
            while tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_err()
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), accepting)
            .await
            .map_err(|_| format!("haproxy did not listen on 127.0.0.1:{port}"))?;
        Ok(Haproxy {
            url: format!("http://127.0.0.1:{port}/mcp"),
            config,
            child,
            _dir: dir,
        })
    }

    /// Stops it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
