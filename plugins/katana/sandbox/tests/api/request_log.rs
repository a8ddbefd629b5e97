//! Contract 3.10: the request log is readable, clearable, and separates reads
//! from mutations.

use katana_sandbox::seed;
use reqwest::StatusCode;
use serde_json::json;

use crate::util::start;

#[tokio::test]
async fn requests_are_logged_in_order_with_query_and_body() {
    let h = start().await;
    assert_eq!(
        h.get("/variants?sku=KNF-8IN-BLK&extend=product_or_material")
            .await
            .0,
        StatusCode::OK
    );
    let body = json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "PACKED",
        "sales_order_fulfillment_rows": [{"sales_order_row_id": seed::SO1_ROW, "quantity": 1}]});
    assert_eq!(
        h.post("/sales_order_fulfillments", body.clone()).await.0,
        StatusCode::OK
    );

    let logged = h.sandbox.requests();
    assert_eq!(logged.len(), 2);
    assert_eq!(logged[0].method, "GET");
    assert_eq!(logged[0].path, "/v1/variants");
    assert_eq!(
        logged[0].query.as_deref(),
        Some("sku=KNF-8IN-BLK&extend=product_or_material")
    );
    assert_eq!(logged[1].method, "POST");
    assert_eq!(logged[1].body, body);

    let mutations = h.sandbox.mutations();
    assert_eq!(mutations.len(), 1);
    assert_eq!(mutations[0].path, "/v1/sales_order_fulfillments");

    h.sandbox.clear_requests();
    assert!(h.sandbox.requests().is_empty());
    assert_eq!(
        h.sandbox.request_log().received(),
        2,
        "the arrival count survives a clear"
    );
}

#[tokio::test]
async fn reads_leave_no_mutation() {
    let h = start().await;
    for path in [
        format!("/purchase_orders/{}", seed::PO_NOT_RECEIVED),
        format!("/manufacturing_orders/{}", seed::MO_DONE),
        format!("/sales_orders/{}", seed::SO_PACKED),
        "/variants?page=2".to_owned(),
    ] {
        assert_eq!(h.get(&path).await.0, StatusCode::OK);
    }
    assert_eq!(h.sandbox.requests().len(), 4);
    assert!(h.sandbox.mutations().is_empty());
}
