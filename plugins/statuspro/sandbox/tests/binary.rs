//! The `statuspro-sandbox` binary starts, prints its base URL to stderr and
//! serves the API.

use sandbox_kit::testing::Binary;
use statuspro_sandbox::Sandbox;

#[tokio::test]
async fn the_binary_prints_its_base_url_and_serves() {
    let binary = Binary::start::<Sandbox>(
        env!("CARGO_BIN_EXE_statuspro-sandbox"),
        &["--port", "0", "--api-key", "bin-key"],
    )
    .await;
    let base_url = &binary.base_url;
    assert!(
        base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/api/v1"),
        "{}",
        binary.announcement
    );
    assert!(
        binary
            .announcement
            .ends_with("(Authorization: Bearer bin-key)"),
        "{}",
        binary.announcement
    );

    let response = reqwest::Client::new()
        .get(format!("{base_url}/statuses"))
        .bearer_auth("bin-key")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
}
