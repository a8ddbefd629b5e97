//! The `katana-sandbox` binary starts, prints its base URL to stderr and
//! serves the API with the rate limit and key its flags set.

use katana_sandbox::Sandbox;
use sandbox_kit::testing::Binary;

#[tokio::test]
async fn the_binary_prints_its_base_url_and_serves() {
    let binary = Binary::start::<Sandbox>(
        env!("CARGO_BIN_EXE_katana-sandbox"),
        &["--port", "0", "--api-key", "bin-key", "--rate-limit", "5"],
    )
    .await;
    let base_url = &binary.base_url;
    assert!(
        base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/v1"),
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
}
