//! The `katana-sandbox` binary starts, prints its base URL to stderr and
//! serves the API.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
};

/// Kills the child process when the test ends, even on a failed assertion.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_binary_prints_its_base_url_and_serves() {
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_katana-sandbox"))
            .args(["--port", "0", "--api-key", "bin-key", "--rate-limit", "5"])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts"),
    );
    let stderr = child.0.stderr.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        BufReader::new(stderr)
            .lines()
            .map(|line| line.expect("stderr is text"))
            .find(|line| line.starts_with("Katana sandbox: "))
    })
    .await
    .unwrap();
    let line = line.expect("the base URL line");
    let base_url = line
        .trim_start_matches("Katana sandbox: ")
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    assert!(
        base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/v1"),
        "{line}"
    );

    let client = reqwest::Client::new();
    let response = client
        .get(format!("{base_url}/variants?sku=KNF-8IN-BLK"))
        .bearer_auth("bin-key")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    assert_eq!(response.headers()["x-ratelimit-limit"], "5");
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["data"][0]["id"], 5001);

    let response = client
        .get(format!("{base_url}/variants"))
        .bearer_auth("not-bin-key")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::UNAUTHORIZED);
    drop(child);
}
