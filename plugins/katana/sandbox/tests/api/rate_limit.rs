//! Contract 1 and 3.2: 60 requests per 60 s per key, `X-Ratelimit-*` on every
//! response, 429 with `Retry-After` over the limit.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use katana_sandbox::{
    RATE_LIMIT_HEADER, RATE_REMAINING_HEADER, RATE_RESET_HEADER, SandboxConfig, seed,
};
use reqwest::{Method, Response, StatusCode, header::RETRY_AFTER};
use serde_json::json;

use crate::util::{Harness, read, start, start_with};

/// A numeric header.
fn number(response: &Response, name: &str) -> u64 {
    response
        .headers()
        .get(name)
        .unwrap_or_else(|| panic!("a {name} header on a {}", response.status()))
        .to_str()
        .unwrap()
        .parse()
        .unwrap_or_else(|err| panic!("{name} is a number: {err}"))
}

/// Milliseconds since the epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

async fn send(
    h: &Harness,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Response {
    let mut request = h.request(method, path);
    if let Some(body) = body {
        request = request.json(&body);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn every_response_reports_the_limit() {
    let h = start().await;
    let before = now_ms();
    let mut remaining = 60;
    let requests = [
        (Method::GET, "/variants".to_owned(), None, StatusCode::OK),
        (Method::GET, "/nope".to_owned(), None, StatusCode::NOT_FOUND),
        (
            Method::POST,
            "/purchase_orders".to_owned(),
            Some(json!({})),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Method::POST,
            "/purchase_order_receive".to_owned(),
            Some(json!([{"purchase_order_row_id": seed::PO1_RIVET_ROW, "quantity": 1}])),
            StatusCode::NO_CONTENT,
        ),
        (
            Method::PATCH,
            format!("/manufacturing_orders/{}", seed::MO_NOT_STARTED),
            Some(json!({"status": "IN_PROGRESS"})),
            StatusCode::OK,
        ),
    ];
    for (method, path, body, expected) in requests {
        let response = send(&h, method, &path, body).await;
        assert_eq!(response.status(), expected, "{path}");
        remaining -= 1;
        assert_eq!(number(&response, RATE_LIMIT_HEADER), 60);
        assert_eq!(
            number(&response, RATE_REMAINING_HEADER),
            remaining,
            "{path}"
        );
        let reset = number(&response, RATE_RESET_HEADER);
        // The first request of the window frees its slot a minute after it came.
        assert!(
            (before + 59_000..=now_ms() + 60_000).contains(&reset),
            "reset {reset} is a millisecond epoch about a minute after {before}"
        );
    }
}

#[tokio::test]
async fn over_the_limit_is_429_with_retry_after() {
    let h = start_with(SandboxConfig {
        rate_limit: 3,
        ..Default::default()
    })
    .await;
    // Every endpoint shares the key's budget.
    for path in ["/variants", "/suppliers", "/purchase_orders/7001"] {
        assert_eq!(h.get(path).await.0, StatusCode::OK);
    }
    let response = send(&h, Method::GET, "/locations", None).await;
    assert_eq!(number(&response, RATE_REMAINING_HEADER), 0);
    let seconds = number(&response, RETRY_AFTER.as_str());
    assert!((1..=60).contains(&seconds), "Retry-After {seconds}");
    assert_eq!(
        read(response).await,
        (
            StatusCode::TOO_MANY_REQUESTS,
            json!({"statusCode": 429, "name": "TooManyRequests", "message": "Too Many Requests"})
        )
    );
    // A rejected request is not counted: resetting frees the whole budget.
    h.sandbox.reset_rate_limits();
    let response = send(&h, Method::GET, "/locations", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(number(&response, RATE_REMAINING_HEADER), 2);
}

#[tokio::test]
async fn retry_after_never_exceeds_the_configured_window() {
    let h = start_with(SandboxConfig {
        rate_limit: 1,
        rate_window: Duration::from_secs(7),
        ..Default::default()
    })
    .await;
    assert_eq!(h.get("/variants").await.0, StatusCode::OK);
    let response = send(&h, Method::GET, "/variants", None).await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let seconds = number(&response, RETRY_AFTER.as_str());
    assert!((1..=7).contains(&seconds), "Retry-After {seconds}");
}

#[tokio::test]
async fn the_default_limit_is_sixty() {
    let h = start().await;
    for _ in 0..60 {
        assert_eq!(h.get("/locations").await.0, StatusCode::OK);
    }
    assert_eq!(h.get("/locations").await.0, StatusCode::TOO_MANY_REQUESTS);
}
