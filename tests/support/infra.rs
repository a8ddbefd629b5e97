//! Real infrastructure for the tests that need it, from Debian's packages:
//! a Redis server on a loopback port. Installed with `apt-get` when missing
//! and the tests run as root; otherwise the caller skips with the reason.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};

/// Makes sure `program` (from the Debian package `package`) is installed;
/// the reason it cannot be, if not.
pub fn ensure_installed(program: &str, package: &str) -> Result<(), String> {
    let found = |p: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {p} || test -x /usr/sbin/{p}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if found(program) {
        return Ok(());
    }
    let installed = std::process::Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends", package])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if installed && found(program) {
        Ok(())
    } else {
        Err(format!(
            "{program} is not installed and `apt-get install -y {package}` did not work here; \
             install it to run this test"
        ))
    }
}

/// A free loopback port (bound, then released for the server to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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
        ensure_installed("redis-server", "redis-server")?;
        let port = port.unwrap_or_else(free_port);
        let mut child = tokio::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
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
        Ok(Redis {
            url: format!("redis://127.0.0.1:{port}"),
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
