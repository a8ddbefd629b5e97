//! Real infrastructure on loopback for toolhost's end-to-end tests and its
//! benchmark, from Debian's packages: a `redis-server` (the replicas'
//! replay store) and HAProxy (the load balancer in front of replicas, with
//! the configuration docs/scaling.md gives operators). Also an identity
//! provider's key endpoint ([`idp`]) for the authentication tests.
//!
//! [`PROGRAMS`] lists every program a test needs, with its package. The
//! tests that need one are ignored unless `cargo xtask test` finds them all
//! (see [`programs`]) and [`require`] them first, so they never install
//! anything and fail, naming the package, when run without it. The
//! benchmark's [`Redis::start`] and [`Haproxy::start`] install a missing
//! package with `apt-get` when running as root, and otherwise give the
//! reason, so its rows can say why they did not run.

pub mod idp;
pub mod programs;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

pub use programs::{PROGRAMS, Program, missing, on_path, require};

/// Makes sure each `(program, Debian package)` is installed, installing the
/// missing packages with `apt-get` (as root); the reason it cannot, if not.
pub fn ensure_installed(programs: &[(&str, &str)]) -> Result<(), String> {
    let missing: Vec<&str> = programs
        .iter()
        .filter(|(program, _)| !on_path(program))
        .map(|(_, package)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let apt = |args: &[&str]| {
        std::process::Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    apt(&["update", "-q"]);
    apt(&[&["install", "-y", "-q"][..], &missing[..]].concat());
    if programs.iter().all(|(program, _)| on_path(program)) {
        Ok(())
    } else {
        Err(format!(
            "Debian's {} could not be installed here (apt-get install -y {}); install them \
             to run this test",
            missing.join(", "),
            missing.join(" ")
        ))
    }
}

/// A free loopback port for a server a test starts (bound, then released
/// for the server to take), picked below the kernel's ephemeral range
/// (`net.ipv4.ip_local_port_range`): every port-0 bind and every outgoing
/// connection of the tests running beside this one draws from that range,
/// and one of them taking the port between its release and the server's
/// bind made the server fail to start. Below the range only other picks
/// like this one compete, at random among thousands of ports.
pub fn free_port() -> u16 {
    use rand::Rng;
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let (low, high) = (
        ephemeral_low.saturating_sub(12_000).max(1_024),
        ephemeral_low,
    );
    let mut random = rand::rng();
    for _ in 0..100 {
        let port = random.random_range(low..high);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes a self-signed certificate for 127.0.0.1 and its key into `dir`
/// (`cert.pem`, `key.pem`) with `openssl`, for a TLS Redis a client trusts
/// through `SSL_CERT_FILE=dir/cert.pem`.
pub fn make_tls_certificate(dir: &Path) -> Result<(), String> {
    let out = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .output()
        .map_err(|e| format!("cannot run openssl: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "openssl could not make a certificate: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// A `redis-server` on a loopback port, killed on drop.
pub struct Redis {
    /// `redis://127.0.0.1:PORT`.
    pub url: String,
    /// Its port.
    pub port: u16,
    child: tokio::process::Child,
}

impl Redis {
    /// Starts one on `port` (a free one if `None`), or says why it cannot.
    pub async fn start(port: Option<u16>) -> Result<Redis, String> {
        Redis::start_with_password(port, None).await
    }

    /// Starts one on `port` (a free one if `None`) that, given a
    /// `password`, serves only clients that present it (`requirepass`), or
    /// says why it cannot. [`Redis::url`] carries no password.
    pub async fn start_with_password(
        port: Option<u16>,
        password: Option<&str>,
    ) -> Result<Redis, String> {
        Redis::start_with(port, password, None).await
    }

    /// Starts one that speaks TLS only, with the certificate and key in
    /// `tls` (`cert.pem`, `key.pem`, made by [`make_tls_certificate`]);
    /// [`Redis::url`] is then a `rediss://` URL.
    pub async fn start_tls(tls: &Path) -> Result<Redis, String> {
        Redis::start_with(None, None, Some(tls)).await
    }

    async fn start_with(
        port: Option<u16>,
        password: Option<&str>,
        tls: Option<&Path>,
    ) -> Result<Redis, String> {
        ensure_installed(&[("redis-server", "redis-server")])?;
        let port = port.unwrap_or_else(free_port);
        let mut command = tokio::process::Command::new("redis-server");
        match tls {
            None => command.args(["--port", &port.to_string()]),
            Some(dir) => command
                .args(["--port", "0", "--tls-port", &port.to_string()])
                .arg("--tls-cert-file")
                .arg(dir.join("cert.pem"))
                .arg("--tls-key-file")
                .arg(dir.join("key.pem"))
                .arg("--tls-ca-cert-file")
                .arg(dir.join("cert.pem"))
                .args(["--tls-auth-clients", "no"]),
        };
        command.args(["--bind", "127.0.0.1"]).args([
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "yes",
        ]);
        if let Some(password) = password {
            command.args(["--requirepass", password]);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start redis-server: {e}"))?;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("Ready to accept connections") {
                    return true;
                }
            }
            false
        };
        match tokio::time::timeout(std::time::Duration::from_secs(30), ready).await {
            Ok(true) => {}
            _ => return Err(format!("redis-server on port {port} did not become ready")),
        }
        // Keep draining its output so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let scheme = if tls.is_some() { "rediss" } else { "redis" };
        Ok(Redis {
            url: format!("{scheme}://127.0.0.1:{port}"),
            port,
            child,
        })
    }

    /// Stops it and waits until it is gone.
    pub async fn stop(mut self) -> u16 {
        let _ = self.child.kill().await;
        self.port
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
         \x20   timeout check 2s\n\
         \x20   retries 3\n\
         \x20   option redispatch 1\n\
         \x20   option forwardfor\n\
         frontend mcp\n\
         \x20   bind 127.0.0.1:{frontend}\n\
         \x20   default_backend toolhost\n\
         backend toolhost\n\
         \x20   balance roundrobin\n\
         \x20   option httpchk GET /healthz\n\
         \x20   http-check expect status 200\n\
         \x20   default-server check inter 250ms fall 2 rise 1\n"
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
