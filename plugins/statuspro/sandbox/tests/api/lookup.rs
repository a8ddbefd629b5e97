//! Contract 4.5: lookup by number (with or without `#`) and e-mail (any case).

use reqwest::StatusCode;
use serde_json::json;
use statuspro_sandbox::seed;

use crate::util::{
    OrderReads as _, assert_invalid, assert_order_not_found, start, validation_errors,
};

#[tokio::test]
async fn lookup_with_and_without_hash() {
    let h = start().await;
    let expected = h.order(seed::FIRST_ORDER_ID).await;
    for number in ["1001", "%231001"] {
        let (status, body) = h
            .get(&format!(
                "/orders/lookup?number={number}&email=jon@example.com"
            ))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            serde_json::from_value::<statuspro_sandbox::model::Order>(body).unwrap(),
            expected
        );
    }
}

#[tokio::test]
async fn lookup_email_is_case_insensitive() {
    let h = start().await;
    let (status, body) = h
        .get("/orders/lookup?number=1012&email=JON%40Example.COM")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["id"], seed::FIRST_ORDER_ID + 11);
}

#[tokio::test]
async fn lookup_without_a_match_is_404() {
    let h = start().await;
    // Right number, someone else's e-mail.
    let (status, body) = h
        .get("/orders/lookup?number=1001&email=amelie.dubois@example.fr")
        .await;
    assert_order_not_found(status, &body);
    // No such number.
    let (status, body) = h
        .get("/orders/lookup?number=9999&email=jon@example.com")
        .await;
    assert_order_not_found(status, &body);
    assert_eq!(body, json!({"message": "Order not found."}));
}

#[tokio::test]
async fn lookup_requires_both_parameters() {
    let h = start().await;
    let (status, body) = h.get("/orders/lookup").await;
    assert_invalid(status, &body, "number", "The number field is required.");
    assert_invalid(status, &body, "email", "The email field is required.");
    let (status, body) = h.get("/orders/lookup?number=1001").await;
    validation_errors(status, &body, "email");
    let (status, body) = h
        .get("/orders/lookup?number=%23&email=jon@example.com")
        .await;
    validation_errors(status, &body, "number");
}
