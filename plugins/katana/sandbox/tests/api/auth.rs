//! Contract 3.1: a missing or wrong bearer key is a 401 before anything else.

use katana_sandbox::{FAULT_HEADER, RATE_LIMIT_HEADER, seed};
use reqwest::StatusCode;
use serde_json::json;

use crate::util::{read, start};

/// Katana's 401 body.
fn unauthorized() -> serde_json::Value {
    json!({"statusCode": 401, "name": "UnauthorizedError", "message": "Unauthorized"})
}

#[tokio::test]
async fn missing_wrong_and_malformed_keys_are_401() {
    let h = start().await;
    let url = h.url("/variants");
    for request in [
        h.client.get(&url),
        h.client.get(&url).bearer_auth("not-the-key"),
        h.client.get(&url).header("Authorization", "Basic a2V5"),
        h.client
            .get(&url)
            .header("Authorization", h.sandbox.api_key()),
    ] {
        let (status, body) = read(request.send().await.unwrap()).await;
        assert_eq!((status, body), (StatusCode::UNAUTHORIZED, unauthorized()));
    }
    let (status, _) = h.get("/variants").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn auth_comes_before_routing_validation_and_faults() {
    let h = start().await;
    let unknown_route = h.client.get(h.url("/nope"));
    let bad_body = h.client.post(h.url("/purchase_orders")).body("{not json");
    let faulted = h.client.get(h.url("/variants")).header(FAULT_HEADER, "500");
    let unknown_order = h
        .client
        .get(h.url(&format!("/purchase_orders/{}", seed::UNKNOWN_ID)));
    for request in [unknown_route, bad_body, faulted, unknown_order] {
        let response = request.send().await.unwrap();
        assert!(
            !response.headers().contains_key(RATE_LIMIT_HEADER),
            "a 401 belongs to no key and reports no limit"
        );
        assert_eq!(
            read(response).await,
            (StatusCode::UNAUTHORIZED, unauthorized())
        );
    }
}

#[tokio::test]
async fn rejected_requests_are_logged_and_change_nothing() {
    let h = start().await;
    let response = h
        .client
        .post(h.url("/purchase_order_receive"))
        .bearer_auth("wrong")
        .json(&json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 200}]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let logged = h.sandbox.requests();
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].path, "/v1/purchase_order_receive");
    let order = h.sandbox.purchase_order(seed::PO_NOT_RECEIVED).unwrap();
    assert!(
        order
            .purchase_order_rows
            .iter()
            .all(|row| row.received_date.is_none())
    );
}
