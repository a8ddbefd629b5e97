//! Contract 3.10: `X-Sandbox-Fault` forces 500, 503, 429 or a held request
//! ending in 504, in Katana's error shape, without reaching the handler or
//! blocking other requests.

use std::time::{Duration, Instant};

use katana_sandbox::{FAULT_HEADER, SandboxConfig, seed};
use reqwest::{Method, StatusCode, header::RETRY_AFTER};
use serde_json::json;

use crate::util::{read, start, start_with};

#[tokio::test]
async fn fault_500_and_503() {
    let h = start().await;
    for (value, status, name, message) in [
        (
            "500",
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalServerError",
            "Internal Server Error",
        ),
        (
            "503",
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailableError",
            "Service Unavailable",
        ),
    ] {
        let request = h
            .request(Method::GET, "/variants")
            .header(FAULT_HEADER, value);
        assert_eq!(
            h.send(request).await,
            (
                status,
                json!({"statusCode": status.as_u16(), "name": name, "message": message})
            )
        );
    }
}

#[tokio::test]
async fn fault_429_has_retry_after_and_katanas_name() {
    let h = start().await;
    let response = h
        .request(Method::GET, "/locations")
        .header(FAULT_HEADER, "429")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()[RETRY_AFTER], "1");
    assert_eq!(
        read(response).await,
        (
            StatusCode::TOO_MANY_REQUESTS,
            json!({"statusCode": 429, "name": "TooManyRequests", "message": "Too Many Requests"})
        )
    );
}

#[tokio::test]
async fn faulted_mutations_change_nothing() {
    let h = start().await;
    let request = h
        .request(Method::POST, "/purchase_order_receive")
        .header(FAULT_HEADER, "503")
        .json(&json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 200}]));
    assert_eq!(h.send(request).await.0, StatusCode::SERVICE_UNAVAILABLE);
    let request = h
        .request(
            Method::PATCH,
            &format!("/manufacturing_orders/{}", seed::MO_NOT_STARTED),
        )
        .header(FAULT_HEADER, "500")
        .json(&json!({"status": "DONE"}));
    assert_eq!(h.send(request).await.0, StatusCode::INTERNAL_SERVER_ERROR);

    assert_eq!(
        h.sandbox.stock(seed::STEEL_BLANK, seed::LOCATION_MAIN),
        seed::initial_stock(seed::STEEL_BLANK, seed::LOCATION_MAIN)
    );
    let order = h.sandbox.manufacturing_order(seed::MO_NOT_STARTED).unwrap();
    assert_eq!(order.status.as_str(), "NOT_STARTED");
    assert_eq!(h.sandbox.mutations().len(), 2, "both were logged");
}

#[tokio::test]
async fn fault_timeout_holds_then_504_without_blocking_others() {
    let fault_timeout = Duration::from_secs(1);
    let h = start_with(SandboxConfig {
        fault_timeout,
        ..Default::default()
    })
    .await;
    let held = h
        .request(Method::GET, "/variants")
        .header(FAULT_HEADER, "timeout");
    let started = Instant::now();
    let held = tokio::spawn(async move { read(held.send().await.unwrap()).await });

    // Once the held request has arrived, others are still served.
    h.sandbox.request_log().wait_for_received(1).await;
    assert_eq!(h.get("/suppliers").await.0, StatusCode::OK);
    assert!(!held.is_finished(), "the held request is still waiting");

    let (status, body) = held.await.unwrap();
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(body["name"], "GatewayTimeoutError");
    assert!(started.elapsed() >= fault_timeout);
}

#[tokio::test]
async fn unknown_fault_values_are_400_naming_the_accepted_ones() {
    let h = start().await;
    let request = h
        .request(Method::GET, "/variants")
        .header(FAULT_HEADER, "502");
    let (status, body) = h.send(request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["name"], "BadRequest");
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
        rate_limit: 1,
        ..Default::default()
    })
    .await;
    for _ in 0..3 {
        let request = h
            .request(Method::GET, "/variants")
            .header(FAULT_HEADER, "503");
        assert_eq!(h.send(request).await.0, StatusCode::SERVICE_UNAVAILABLE);
    }
    assert_eq!(h.get("/variants").await.0, StatusCode::OK);
    assert_eq!(h.get("/variants").await.0, StatusCode::TOO_MANY_REQUESTS);
}
