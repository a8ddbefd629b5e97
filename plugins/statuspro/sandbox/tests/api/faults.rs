//! Contract 4.11: `X-Sandbox-Fault` forces 500, 503, 429 or a held request
//! ending in 504, without reaching the handler or blocking other requests.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode, header::RETRY_AFTER};
use serde_json::json;
use statuspro_sandbox::{FAULT_HEADER, SandboxConfig, seed};

use crate::util::{OrderReads as _, start, start_with};

#[tokio::test]
async fn fault_500_and_503() {
    let h = start().await;
    for (value, status, message) in [
        ("500", StatusCode::INTERNAL_SERVER_ERROR, "Server Error"),
        (
            "503",
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable",
        ),
    ] {
        let request = h
            .request(Method::GET, "/statuses")
            .header(FAULT_HEADER, value);
        assert_eq!(h.send(request).await, (status, json!({"message": message})));
    }
}

#[tokio::test]
async fn fault_429_has_retry_after() {
    let h = start().await;
    let response = h
        .request(Method::GET, "/orders")
        .header(FAULT_HEADER, "429")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()[RETRY_AFTER], "1");
    assert_eq!(
        response.json::<serde_json::Value>().await.unwrap(),
        json!({"message": "Too Many Requests"})
    );
}

#[tokio::test]
async fn faulted_mutations_change_nothing() {
    let h = start().await;
    let id = seed::order_without_status();
    let before = h.order(id).await;
    let request = h
        .request(Method::POST, &format!("/orders/{id}/status"))
        .header(FAULT_HEADER, "500")
        .json(&json!({"status_code": "st000001"}));
    assert_eq!(h.send(request).await.0, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(h.order(id).await, before);
}

#[tokio::test]
async fn fault_timeout_holds_then_504_without_blocking_others() {
    let fault_timeout = Duration::from_secs(2);
    let h = start_with(SandboxConfig {
        fault_timeout,
        ..Default::default()
    })
    .await;
    let held = h
        .request(Method::GET, "/orders")
        .header(FAULT_HEADER, "timeout");
    let started = Instant::now();
    let held = tokio::spawn(async move {
        let response = held.send().await.unwrap();
        (
            response.status(),
            response.json::<serde_json::Value>().await.unwrap(),
        )
    });

    // Once the held request has arrived, others are still served.
    h.sandbox.request_log().wait_for_received(1).await;
    assert_eq!(h.get("/statuses").await.0, StatusCode::OK);
    assert!(!held.is_finished(), "the held request is still waiting");

    let (status, body) = held.await.unwrap();
    assert_eq!(
        (status, body),
        (
            StatusCode::GATEWAY_TIMEOUT,
            json!({"message": "Gateway Timeout"})
        )
    );
    assert!(started.elapsed() >= fault_timeout);
}

#[tokio::test]
async fn unknown_fault_values_are_400_naming_the_accepted_ones() {
    let h = start().await;
    let request = h
        .request(Method::GET, "/statuses")
        .header(FAULT_HEADER, "502");
    let (status, body) = h.send(request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("500, 503, 429, timeout"),
        "{body}"
    );
}

#[tokio::test]
async fn injected_faults_do_not_use_rate_limit_budget() {
    let h = start_with(SandboxConfig {
        rate_limit_per_minute: 1,
        ..Default::default()
    })
    .await;
    for _ in 0..3 {
        let request = h
            .request(Method::GET, "/statuses")
            .header(FAULT_HEADER, "503");
        assert_eq!(h.send(request).await.0, StatusCode::SERVICE_UNAVAILABLE);
    }
    assert_eq!(h.get("/statuses").await.0, StatusCode::OK);
    assert_eq!(h.get("/statuses").await.0, StatusCode::TOO_MANY_REQUESTS);
}
