//! Contract 4.2: sliding-window limits per key, 429 with `Retry-After`.

use std::time::Duration;

use reqwest::{StatusCode, header::RETRY_AFTER};
use serde_json::json;
use statuspro_sandbox::{SandboxConfig, seed};

use crate::util::{Harness, start_with};

fn retry_after(response: &reqwest::Response) -> u64 {
    response
        .headers()
        .get(RETRY_AFTER)
        .expect("a Retry-After header")
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in whole seconds")
}

async fn bulk(h: &Harness) -> reqwest::Response {
    h.request(reqwest::Method::POST, "/orders/bulk-status")
        .json(&json!({"order_ids": [seed::FIRST_ORDER_ID], "status_code": "st000002"}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn over_the_limit_is_429_with_retry_after() {
    let h = start_with(SandboxConfig {
        rate_limit_per_minute: 3,
        ..Default::default()
    })
    .await;
    // All endpoints share the key's budget.
    for path in [
        "/statuses",
        "/orders",
        &format!("/orders/{}", seed::FIRST_ORDER_ID),
    ] {
        assert_eq!(h.get(path).await.0, StatusCode::OK);
    }
    let response = h
        .request(reqwest::Method::GET, "/statuses")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let seconds = retry_after(&response);
    assert!((1..=60).contains(&seconds), "Retry-After {seconds}");
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body, json!({"message": "Too Many Requests"}));

    h.sandbox.reset_rate_limits();
    assert_eq!(h.get("/statuses").await.0, StatusCode::OK);
}

#[tokio::test]
async fn retry_after_never_exceeds_the_configured_window() {
    let h = start_with(SandboxConfig {
        rate_limit_per_minute: 1,
        rate_window: Duration::from_secs(7),
        ..Default::default()
    })
    .await;
    assert_eq!(h.get("/statuses").await.0, StatusCode::OK);
    let response = h
        .request(reqwest::Method::GET, "/statuses")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let seconds = retry_after(&response);
    assert!((1..=7).contains(&seconds), "Retry-After {seconds}");
}

#[tokio::test]
async fn bulk_has_its_own_lower_limit() {
    let h = start_with(SandboxConfig {
        bulk_rate_limit_per_minute: 2,
        ..Default::default()
    })
    .await;
    assert_eq!(bulk(&h).await.status(), StatusCode::ACCEPTED);
    assert_eq!(bulk(&h).await.status(), StatusCode::ACCEPTED);
    let limited = bulk(&h).await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!((1..=60).contains(&retry_after(&limited)));
    // Other endpoints still have budget.
    assert_eq!(h.get("/statuses").await.0, StatusCode::OK);
    h.sandbox.wait_for_bulk_jobs().await;
}

#[tokio::test]
async fn the_default_limits_are_the_documented_ones() {
    let h = start_with(SandboxConfig::default()).await;
    for _ in 0..5 {
        assert_eq!(bulk(&h).await.status(), StatusCode::ACCEPTED);
    }
    assert_eq!(bulk(&h).await.status(), StatusCode::TOO_MANY_REQUESTS);
    // 5 bulk requests used 5 of the 60 general slots; the rejected one none.
    for _ in 0..55 {
        assert_eq!(h.get("/statuses").await.0, StatusCode::OK);
    }
    assert_eq!(h.get("/statuses").await.0, StatusCode::TOO_MANY_REQUESTS);
    h.sandbox.wait_for_bulk_jobs().await;
}
