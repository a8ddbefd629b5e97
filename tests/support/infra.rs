//! Real infrastructure for the tests that need it, from Debian's packages:
//! a Redis server on a loopback port. Installed with `apt-get` when missing
//! and the tests run as root; otherwise the caller skips with the reason.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};

/// Whether `program` is on PATH (or in /usr/sbin, where Debian puts some
/// servers).
pub fn on_path(program: &str) -> bool {
    std::process::Command::new("sh")
        .args([
            "-c",
            &format!("command -v {program} || test -x /usr/sbin/{program}"),
        ])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

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

/// SHA-256 of `text`, in hex: how a static token is written in `[auth]`.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
        ensure_installed(&[("redis-server", "redis-server")])?;
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
