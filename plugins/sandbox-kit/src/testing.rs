//! What every sandbox's own tests start from (feature `testing`, for
//! dev-dependencies): a [`Harness`] of a sandbox and a client that sends
//! its key, and a [`Binary`] that runs a sandbox's executable and reads the
//! base URL it announces.
//!
//! Each sandbox's `tests/api/util.rs` names its harness
//! (`type Harness = Harness<Sandbox>`) and adds the assertions for its own
//! API's bodies; `tests/binary.rs` checks its executable with [`Binary`].

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::Value;

use crate::ApiSandbox;

/// A running sandbox and a client for it.
pub struct Harness<S> {
    /// The sandbox under test.
    pub sandbox: S,
    /// A plain client; [`Harness::request`] adds the bearer key.
    pub client: reqwest::Client,
}

impl<S: ApiSandbox> Harness<S> {
    /// Starts a sandbox with `config`.
    pub async fn start(config: S::Config) -> Harness<S> {
        let sandbox = S::start(config).await.expect("the sandbox starts");
        Harness {
            sandbox,
            client: reqwest::Client::new(),
        }
    }

    /// `base_url + path`, where `path` starts with `/` (e.g. `/orders?page=2`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sandbox.base_url())
    }

    /// An authenticated request builder.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(self.sandbox.api_key())
    }

    /// Sends a request and returns its status and JSON body (`null` if none).
    pub async fn send(&self, request: RequestBuilder) -> (StatusCode, Value) {
        read(request.send().await.expect("the request is answered")).await
    }

    /// Authenticated GET.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::GET, path)).await
    }

    /// Authenticated POST with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::POST, path).json(&body))
            .await
    }

    /// Authenticated PATCH with a JSON body.
    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::PATCH, path).json(&body))
            .await
    }
}

/// A response's status and JSON body (`null` when empty).
///
/// # Panics
/// When the body cannot be read or is not JSON: every sandbox answers JSON.
pub async fn read(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.expect("the body is readable");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("body is not JSON ({err}): {text}"))
    };
    (status, body)
}

/// A sandbox's executable, running; killed when dropped, even when the
/// test fails.
pub struct Binary {
    /// The process.
    child: Child,
    /// The base URL it announced.
    pub base_url: String,
    /// The whole line it announced itself with
    /// ([`crate::cli::announcement`]).
    pub announcement: String,
}

impl Binary {
    /// Runs `program` (the `CARGO_BIN_EXE_…` of a sandbox `S`) with `args`
    /// and waits for its announcement on stderr.
    ///
    /// # Panics
    /// When it does not start, or exits without announcing itself.
    pub async fn start<S: ApiSandbox>(program: &str, args: &[&str]) -> Binary {
        let child = Command::new(program)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        // Held from here, so the process is killed however the test ends.
        let mut binary = Binary {
            child,
            base_url: String::new(),
            announcement: String::new(),
        };
        let stderr = binary.child.stderr.take().expect("stderr is piped");
        let prefix = crate::cli::announcement_prefix::<S>();
        let wanted = prefix.clone();
        // Read on a blocking thread: the pipe is a std one, and the binary
        // prints the line only once its server is up.
        let line = tokio::task::spawn_blocking(move || {
            BufReader::new(stderr)
                .lines()
                .map(|line| line.expect("stderr is text"))
                .find(|line| line.starts_with(&wanted))
        })
        .await
        .expect("the reader finishes")
        .unwrap_or_else(|| panic!("{program} exited without a {prefix:?} line"));
        binary.base_url = line
            .trim_start_matches(&prefix)
            .split_whitespace()
            .next()
            .expect("a base URL follows the prefix")
            .to_owned();
        binary.announcement = line;
        binary
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
