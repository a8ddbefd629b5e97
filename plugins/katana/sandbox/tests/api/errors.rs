//! Contract 3.4: 404 for unknown ids and routes, 400 for bodies that are not
//! JSON, both in Katana's shape; the 422 shape is covered per endpoint.

use katana_sandbox::seed;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::util::{assert_invalid, assert_not_found, start};

#[tokio::test]
async fn unknown_ids_are_404() {
    let h = start().await;
    let unknown = seed::UNKNOWN_ID;
    for path in [
        format!("/purchase_orders/{unknown}"),
        format!("/manufacturing_orders/{unknown}"),
        format!("/sales_orders/{unknown}"),
        // Ids of another kind of record are unknown here.
        format!("/purchase_orders/{}", seed::SO_NOT_SHIPPED),
        "/purchase_orders/abc".to_owned(),
        "/sales_orders/-1".to_owned(),
        "/manufacturing_orders/1.5".to_owned(),
    ] {
        let (status, body) = h.get(&path).await;
        assert_not_found(status, &body);
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_are_404() {
    let h = start().await;
    for (method, path) in [
        (Method::GET, "/products"),
        (Method::GET, "/"),
        (Method::DELETE, "/purchase_orders/7001"),
        (Method::GET, "/no_such_collection"),
        (Method::POST, "/variants"),
    ] {
        let (status, body) = h.send(h.request(method.clone(), path)).await;
        assert_not_found(status, &body);
    }
    // Outside /v1 too.
    let response = h
        .client
        .get(format!("http://{}/variants", h.sandbox.addr()))
        .bearer_auth(h.sandbox.api_key())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bodies_that_are_not_json_are_400() {
    let h = start().await;
    for (method, path) in [
        (Method::POST, "/purchase_orders".to_owned()),
        (Method::POST, "/purchase_order_receive".to_owned()),
        (Method::POST, "/manufacturing_orders".to_owned()),
        (
            Method::PATCH,
            format!("/manufacturing_orders/{}", seed::MO_NOT_STARTED),
        ),
        (Method::POST, "/sales_order_fulfillments".to_owned()),
    ] {
        let request = h
            .request(method, &path)
            .header("Content-Type", "application/json")
            .body("{\"order_no\": ");
        let (status, body) = h.send(request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(
            body,
            json!({"statusCode": 400, "name": "BadRequest", "message": "Bad Request"})
        );
    }
    assert!(
        h.sandbox.purchase_orders().len() == 4,
        "nothing was created"
    );
}

#[tokio::test]
async fn an_unknown_order_is_404_before_its_body_is_read() {
    let h = start().await;
    let path = format!("/manufacturing_orders/{}", seed::UNKNOWN_ID);
    let (status, body) = h.patch(&path, json!({"status": "NOPE", "extra": 1})).await;
    assert_not_found(status, &body);
}

#[tokio::test]
async fn an_empty_body_reads_as_an_empty_object() {
    let h = start().await;
    let (status, body) = h
        .send(h.request(Method::POST, "/manufacturing_orders"))
        .await;
    assert_invalid(status, &body, ".order_no", "required");
    // A non-object body is a type error at the root.
    let (status, body) = h.post("/purchase_orders", json!([1, 2])).await;
    assert_invalid(status, &body, "", "type");
}
