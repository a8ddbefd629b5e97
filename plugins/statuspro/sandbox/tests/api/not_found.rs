//! Contract 4.5: unknown or non-integer ids are 404 everywhere; unknown
//! routes and methods get polite errors.

use reqwest::StatusCode;
use serde_json::json;
use statuspro_sandbox::seed;

use crate::util::{assert_order_not_found, start};

#[tokio::test]
async fn unknown_order_ids_are_404_on_every_order_route() {
    let h = start().await;
    let id = seed::UNKNOWN_ORDER_ID;
    for path in [
        format!("/orders/{id}"),
        format!("/orders/{id}/viable-statuses"),
    ] {
        let (status, body) = h.get(&path).await;
        assert_order_not_found(status, &body);
    }
    for (path, body) in [
        (
            format!("/orders/{id}/status"),
            json!({"status_code": "st000001"}),
        ),
        (format!("/orders/{id}/comment"), json!({"comment": "hello"})),
        (format!("/orders/{id}/due-date"), json!({"due_date": null})),
    ] {
        let (status, body) = h.post(&path, body).await;
        assert_order_not_found(status, &body);
    }
}

#[tokio::test]
async fn non_integer_ids_are_404() {
    let h = start().await;
    for raw in [
        "abc",
        "12.5",
        "-1",
        "%231001",
        "6110375248001x",
        "99999999999999999999999",
    ] {
        let (status, body) = h.get(&format!("/orders/{raw}")).await;
        assert_order_not_found(status, &body);
        let (status, body) = h
            .post(
                &format!("/orders/{raw}/status"),
                json!({"status_code": "st000001"}),
            )
            .await;
        assert_order_not_found(status, &body);
    }
}

#[tokio::test]
async fn not_found_comes_before_validation() {
    let h = start().await;
    let (status, body) = h
        .post(
            &format!("/orders/{}/comment", seed::UNKNOWN_ORDER_ID),
            json!({}),
        )
        .await;
    assert_order_not_found(status, &body);
}

#[tokio::test]
async fn unknown_routes_and_methods() {
    let h = start().await;
    let (status, body) = h.get("/customers").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        body,
        json!({"message": "The route api/v1/customers could not be found."})
    );

    let (status, body) = h.post("/statuses", json!({})).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        body,
        json!({"message": "The POST method is not supported for this route."})
    );
    let (status, _) = h.get("/orders/bulk-status").await;
    assert_eq!(
        status,
        StatusCode::METHOD_NOT_ALLOWED,
        "bulk-status routes before {{order}}"
    );
}
