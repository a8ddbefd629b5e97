//! Contract 4.3: every listed invalid input is a 422 with field errors.

use reqwest::StatusCode;
use serde_json::json;
use statuspro_sandbox::{SandboxConfig, seed};

use crate::util::{OrderReads as _, assert_invalid, start, start_with, validation_errors};

#[tokio::test]
async fn list_status_code_must_be_exactly_8_characters() {
    let h = start().await;
    for code in ["st00001", "st0000001"] {
        let (status, body) = h.get(&format!("/orders?status_code={code}")).await;
        assert_invalid(
            status,
            &body,
            "status_code",
            "The status code field must be 8 characters.",
        );
    }
    // An unknown but well-formed code just matches nothing.
    let (status, body) = h.get("/orders?status_code=st999999").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["meta"]["total"], 0);
}

#[tokio::test]
async fn list_per_page_and_page_out_of_range() {
    let h = start().await;
    for per_page in ["0", "101", "-5"] {
        let (status, body) = h.get(&format!("/orders?per_page={per_page}")).await;
        assert_invalid(
            status,
            &body,
            "per_page",
            "The per page field must be between 1 and 100.",
        );
    }
    let (status, body) = h.get("/orders?per_page=ten").await;
    assert_invalid(
        status,
        &body,
        "per_page",
        "The per page field must be an integer.",
    );
    for page in ["0", "-1"] {
        let (status, body) = h.get(&format!("/orders?page={page}")).await;
        assert_invalid(status, &body, "page", "The page field must be at least 1.");
    }
    let (status, body) = h.get("/orders?page=x").await;
    assert_invalid(status, &body, "page", "The page field must be an integer.");
}

#[tokio::test]
async fn list_unknown_enum_values() {
    let h = start().await;
    let (status, body) = h
        .get("/orders?financial_status[]=paid&financial_status[]=bogus")
        .await;
    assert_invalid(
        status,
        &body,
        "financial_status.1",
        "The selected financial_status.1 is invalid.",
    );
    let (status, body) = h.get("/orders?fulfillment_status[]=paid").await;
    assert_invalid(
        status,
        &body,
        "fulfillment_status.0",
        "The selected fulfillment_status.0 is invalid.",
    );
}

#[tokio::test]
async fn list_bad_dates() {
    let h = start().await;
    for (field, value) in [
        ("due_date_from", "2026-13-01"),
        ("due_date_from", "15/03/2026"),
        ("due_date_to", "2026-3-5"),
        ("due_date_to", "2026-02-30"),
    ] {
        let (status, body) = h.get(&format!("/orders?{field}={value}")).await;
        let message = format!(
            "The {} field must match the format Y-m-d.",
            field.replace('_', " ")
        );
        assert_invalid(status, &body, field, &message);
    }
    let (status, body) = h
        .get("/orders?due_date_from=2026-03-20&due_date_to=2026-03-10")
        .await;
    validation_errors(status, &body, "due_date_to");
}

#[tokio::test]
async fn list_arrays_must_be_bracketed_and_booleans_boolean() {
    let h = start().await;
    let (status, body) = h.get("/orders?tags=vip").await;
    assert_invalid(status, &body, "tags", "The tags field must be an array.");
    let (status, body) = h.get("/orders?exclude_cancelled=maybe").await;
    assert_invalid(
        status,
        &body,
        "exclude_cancelled",
        "The exclude cancelled field must be true or false.",
    );
}

#[tokio::test]
async fn all_bad_fields_are_reported_together() {
    let h = start().await;
    let (status, body) = h.get("/orders?per_page=0&page=0&status_code=x").await;
    for field in ["per_page", "page", "status_code"] {
        validation_errors(status, &body, field);
    }
}

#[tokio::test]
async fn comment_length_is_3_to_1000_characters() {
    let h = start().await;
    let path = format!("/orders/{}/comment", seed::FIRST_ORDER_ID);
    let (status, body) = h.post(&path, json!({"comment": "ok"})).await;
    assert_invalid(
        status,
        &body,
        "comment",
        "The comment field must be at least 3 characters.",
    );
    let (status, body) = h.post(&path, json!({"comment": "x".repeat(1001)})).await;
    assert_invalid(
        status,
        &body,
        "comment",
        "The comment field must not be greater than 1000 characters.",
    );
    let (status, body) = h.post(&path, json!({})).await;
    assert_invalid(status, &body, "comment", "The comment field is required.");
    let (status, body) = h.post(&path, json!({"comment": 42})).await;
    assert_invalid(
        status,
        &body,
        "comment",
        "The comment field must be a string.",
    );
    // Boundaries are accepted; length counts characters, not bytes.
    assert_eq!(
        h.post(&path, json!({"comment": "abc"})).await.0,
        StatusCode::OK
    );
    assert_eq!(
        h.post(&path, json!({"comment": "é".repeat(1000)})).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn status_update_requires_a_known_status_code() {
    let h = start().await;
    let path = format!("/orders/{}/status", seed::order_without_status());
    let (status, body) = h.post(&path, json!({"comment": "no code"})).await;
    assert_invalid(
        status,
        &body,
        "status_code",
        "The status code field is required.",
    );
    let (status, body) = h.post(&path, json!({"status_code": "st999999"})).await;
    assert_invalid(
        status,
        &body,
        "status_code",
        "The selected status code is invalid.",
    );
    let (status, body) = h
        .post(
            &path,
            json!({"status_code": "st000001", "public": "yes", "comment": "x".repeat(1001)}),
        )
        .await;
    assert_invalid(
        status,
        &body,
        "public",
        "The public field must be true or false.",
    );
    validation_errors(status, &body, "comment");
}

#[tokio::test]
async fn a_status_that_is_not_viable_is_rejected() {
    let h = start().await;
    let id = seed::order_in_status("st000004").unwrap();
    let before = h.order(id).await;
    let (status, body) = h
        .post(
            &format!("/orders/{id}/status"),
            json!({"status_code": "st000001"}),
        )
        .await;
    let errors = validation_errors(status, &body, "status_code");
    assert_eq!(
        errors,
        ["The status st000001 (Order Received) is not a viable next status for this order."]
    );
    assert_eq!(
        h.order(id).await,
        before,
        "a rejected change changes nothing"
    );
}

#[tokio::test]
async fn bulk_order_ids_must_be_1_to_50_integers() {
    // Rejected bulk requests still count against the bulk limit, as upstream.
    let h = start_with(SandboxConfig {
        bulk_rate_limit_per_minute: 100,
        ..Default::default()
    })
    .await;
    let body_with = |ids: serde_json::Value| json!({"order_ids": ids, "status_code": "st000002"});

    let (status, body) = h.post("/orders/bulk-status", body_with(json!([]))).await;
    assert_invalid(
        status,
        &body,
        "order_ids",
        "The order ids field must have at least 1 items.",
    );

    let too_many: Vec<i64> = (0..51).map(|i| seed::FIRST_ORDER_ID + i).collect();
    let (status, body) = h
        .post("/orders/bulk-status", body_with(json!(too_many)))
        .await;
    assert_invalid(
        status,
        &body,
        "order_ids",
        "The order ids field must not have more than 50 items.",
    );

    let (status, body) = h
        .post(
            "/orders/bulk-status",
            body_with(json!([seed::FIRST_ORDER_ID, "abc", 1.5])),
        )
        .await;
    assert_invalid(
        status,
        &body,
        "order_ids.1",
        "The order_ids.1 field must be an integer.",
    );
    assert_invalid(
        status,
        &body,
        "order_ids.2",
        "The order_ids.2 field must be an integer.",
    );

    let (status, body) = h
        .post("/orders/bulk-status", json!({"status_code": "st000002"}))
        .await;
    assert_invalid(
        status,
        &body,
        "order_ids",
        "The order ids field is required.",
    );

    let (status, body) = h.post("/orders/bulk-status", body_with(json!("1,2"))).await;
    assert_invalid(
        status,
        &body,
        "order_ids",
        "The order ids field must be an array.",
    );

    let (status, body) = h
        .post(
            "/orders/bulk-status",
            json!({"order_ids": [seed::FIRST_ORDER_ID], "status_code": "st999999"}),
        )
        .await;
    assert_invalid(
        status,
        &body,
        "status_code",
        "The selected status code is invalid.",
    );

    let (status, body) = h
        .post("/orders/bulk-status", json!({"order_ids": [1], "status_code": "st000002", "send_at": "soon", "due_date": "tomorrow"}))
        .await;
    validation_errors(status, &body, "send_at");
    validation_errors(status, &body, "due_date");

    assert_eq!(
        h.sandbox.pending_bulk_jobs(),
        0,
        "nothing invalid was queued"
    );
    // Exactly 50 is fine.
    let fifty: Vec<i64> = (0..50).map(|i| seed::FIRST_ORDER_ID + i).collect();
    assert_eq!(
        h.post("/orders/bulk-status", body_with(json!(fifty)))
            .await
            .0,
        StatusCode::ACCEPTED
    );
    h.sandbox.wait_for_bulk_jobs().await;
}

#[tokio::test]
async fn due_date_key_must_be_present_and_range_ordered() {
    let h = start().await;
    let path = format!("/orders/{}/due-date", seed::FIRST_ORDER_ID);
    let (status, body) = h.post(&path, json!({"due_date_to": "2026-04-01"})).await;
    assert_invalid(
        status,
        &body,
        "due_date",
        "The due date field must be present.",
    );

    let (status, body) = h
        .post(
            &path,
            json!({"due_date": "2026-04-05", "due_date_to": "2026-04-01"}),
        )
        .await;
    assert_invalid(
        status,
        &body,
        "due_date_to",
        "The due date to field must be a date after or equal to due date.",
    );

    let (status, body) = h.post(&path, json!({"due_date": "04/05/2026"})).await;
    assert_invalid(
        status,
        &body,
        "due_date",
        "The due date field must match the format Y-m-d.",
    );

    // The same day is a valid range.
    let (status, _) = h
        .post(
            &path,
            json!({"due_date": "2026-04-05", "due_date_to": "2026-04-05"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn malformed_json_is_400() {
    let h = start().await;
    let request = h
        .request(
            reqwest::Method::POST,
            &format!("/orders/{}/comment", seed::FIRST_ORDER_ID),
        )
        .header("content-type", "application/json")
        .body("{\"comment\": ");
    let (status, body) = h.send(request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["message"].as_str().unwrap().contains("not valid JSON"),
        "{body}"
    );
}
