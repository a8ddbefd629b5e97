//! Contract 4.12: every request is logged with method, path, query, JSON body
//! and fault header; tests can read and clear the log.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use statuspro_sandbox::{FAULT_HEADER, seed};

use crate::util::start;

#[tokio::test]
async fn requests_are_logged_in_order_with_their_details() {
    let h = start().await;
    let id = seed::FIRST_ORDER_ID;
    h.get("/orders?tags[]=vip&page=2").await;
    h.post(
        &format!("/orders/{id}/comment"),
        json!({"comment": "Logged?", "public": false}),
    )
    .await;
    let faulted = h
        .request(Method::GET, "/statuses")
        .header(FAULT_HEADER, "503");
    h.send(faulted).await;
    h.send(h.client.get(h.url("/statuses"))).await; // unauthenticated

    let log = h.sandbox.requests();
    assert_eq!(log.len(), 4);
    assert_eq!(
        (
            log[0].method.as_str(),
            log[0].path.as_str(),
            log[0].query.as_deref()
        ),
        ("GET", "/api/v1/orders", Some("tags[]=vip&page=2"))
    );
    assert_eq!(log[0].body, Value::Null);
    assert_eq!(log[1].method, "POST");
    assert_eq!(log[1].path, format!("/api/v1/orders/{id}/comment"));
    assert_eq!(log[1].query, None);
    assert_eq!(log[1].body, json!({"comment": "Logged?", "public": false}));
    assert_eq!(log[1].fault, None);
    assert_eq!(log[2].fault.as_deref(), Some("503"));
    assert_eq!(
        log[3].path, "/api/v1/statuses",
        "rejected requests are logged too"
    );
}

#[tokio::test]
async fn the_log_proves_no_mutation_was_sent_and_can_be_cleared() {
    let h = start().await;
    h.get("/orders").await;
    h.get(&format!("/orders/{}/viable-statuses", seed::FIRST_ORDER_ID))
        .await;
    assert!(h.sandbox.mutations().is_empty(), "only reads so far");

    let (status, _) = h
        .post(
            &format!("/orders/{}/status", seed::order_without_status()),
            json!({"status_code": "st000001"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let mutations = h.sandbox.mutations();
    assert_eq!(mutations.len(), 1);
    assert_eq!(mutations[0].body["status_code"], "st000001");

    h.sandbox.clear_requests();
    assert!(h.sandbox.requests().is_empty());
    h.get("/statuses").await;
    assert_eq!(h.sandbox.requests().len(), 1);
}

#[tokio::test]
async fn non_json_bodies_are_logged_as_null() {
    let h = start().await;
    let request = h
        .request(
            Method::POST,
            &format!("/orders/{}/comment", seed::FIRST_ORDER_ID),
        )
        .body("not json");
    assert_eq!(h.send(request).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(h.sandbox.requests()[0].body, Value::Null);
}
