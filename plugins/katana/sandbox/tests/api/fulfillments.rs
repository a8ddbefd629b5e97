//! Contract 2 (E8, E9) and 3.9: reading sales orders and fulfilling them.

use katana_sandbox::{
    model::{SalesOrder, SalesOrderFulfillment, SalesOrderStatus},
    seed,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::util::{Harness, assert_invalid, start};

/// A fulfillment body for `order` with `(row, quantity)` lines.
fn body(order: i64, status: &str, rows: &[(i64, f64)]) -> Value {
    json!({
        "sales_order_id": order,
        "status": status,
        "sales_order_fulfillment_rows": rows
            .iter()
            .map(|(row, quantity)| json!({"sales_order_row_id": row, "quantity": quantity}))
            .collect::<Vec<_>>(),
    })
}

/// `POST /sales_order_fulfillments`, which must succeed.
async fn fulfil(h: &Harness, body: Value) -> SalesOrderFulfillment {
    let (status, response) = h.post("/sales_order_fulfillments", body).await;
    assert_eq!(status, StatusCode::OK, "{response}");
    serde_json::from_value(response).expect("a fulfillment")
}

/// `GET /sales_orders/{id}`, which must succeed.
async fn order(h: &Harness, id: i64) -> SalesOrder {
    let (status, body) = h.get(&format!("/sales_orders/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body).expect("a sales order")
}

#[tokio::test]
async fn reading_matches_the_contract_example() {
    let h = start().await;
    let (_, body) = h
        .get(&format!("/sales_orders/{}", seed::SO_NOT_SHIPPED))
        .await;
    assert_eq!(body["order_no"], "SO-25-001");
    assert_eq!(body["status"], "NOT_SHIPPED");
    let row = &body["sales_order_rows"][0];
    assert_eq!(
        (&row["id"], &row["variant_id"], &row["quantity"]),
        (&json!(3101), &json!(5001), &json!(2))
    );
    for (id, status) in [
        (seed::SO_NOT_SHIPPED_MIXED, SalesOrderStatus::NotShipped),
        (seed::SO_PACKED, SalesOrderStatus::Packed),
        (seed::SO_DELIVERED, SalesOrderStatus::Delivered),
    ] {
        assert_eq!(order(&h, id).await.status, status);
    }
}

#[tokio::test]
async fn delivering_every_row_matches_the_contract_example() {
    let h = start().await;
    let knives = h.sandbox.stock(seed::KNIFE_BLACK, seed::LOCATION_MAIN);
    let (status, response) = h
        .post(
            "/sales_order_fulfillments",
            body(seed::SO_NOT_SHIPPED, "DELIVERED", &[(seed::SO1_ROW, 2.0)]),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the live API answers 200: {response}"
    );
    assert_eq!(response["id"], seed::NEXT_FULFILLMENT_ID);
    assert_eq!(response["status"], "DELIVERED");
    assert_eq!(response["sales_order_id"], seed::SO_NOT_SHIPPED);
    assert_eq!(
        order(&h, seed::SO_NOT_SHIPPED).await.status,
        SalesOrderStatus::Delivered
    );
    assert_eq!(
        h.sandbox.stock(seed::KNIFE_BLACK, seed::LOCATION_MAIN),
        knives - 2.0,
        "delivery lowers stock at the order's location"
    );
    assert_eq!(h.sandbox.fulfillments().len(), 3);
}

#[tokio::test]
async fn partial_deliveries_then_the_rest() {
    let h = start().await;
    let walnut = h.sandbox.stock(seed::KNIFE_WALNUT, seed::LOCATION_RETAIL);
    let black = h.sandbox.stock(seed::KNIFE_BLACK, seed::LOCATION_RETAIL);
    let first = fulfil(
        &h,
        body(seed::SO_NOT_SHIPPED_MIXED, "DELIVERED", &[(3102, 2.0)]),
    )
    .await;
    assert_eq!(first.id, seed::NEXT_FULFILLMENT_ID);
    assert_eq!(
        order(&h, seed::SO_NOT_SHIPPED_MIXED).await.status,
        SalesOrderStatus::PartiallyDelivered
    );
    let second = fulfil(
        &h,
        body(
            seed::SO_NOT_SHIPPED_MIXED,
            "DELIVERED",
            &[(3102, 1.0), (3103, 1.0), (3104, 1.0)],
        ),
    )
    .await;
    assert_eq!(second.id, seed::NEXT_FULFILLMENT_ID + 1);
    assert_eq!(
        order(&h, seed::SO_NOT_SHIPPED_MIXED).await.status,
        SalesOrderStatus::Delivered
    );
    assert_eq!(
        h.sandbox.stock(seed::KNIFE_WALNUT, seed::LOCATION_RETAIL),
        walnut - 3.0
    );
    assert_eq!(
        h.sandbox.stock(seed::KNIFE_BLACK, seed::LOCATION_RETAIL),
        black - 1.0
    );
    assert!(
        !h.sandbox
            .stock_levels()
            .keys()
            .any(|&(variant, _)| variant == seed::SHARPENING),
        "services keep no stock"
    );
}

#[tokio::test]
async fn packing_moves_no_stock() {
    let h = start().await;
    let stock = h.sandbox.stock_levels();
    fulfil(
        &h,
        body(seed::SO_NOT_SHIPPED_MIXED, "PACKED", &[(3102, 3.0)]),
    )
    .await;
    assert_eq!(
        order(&h, seed::SO_NOT_SHIPPED_MIXED).await.status,
        SalesOrderStatus::PartiallyPacked
    );
    fulfil(
        &h,
        body(
            seed::SO_NOT_SHIPPED_MIXED,
            "PACKED",
            &[(3103, 1.0), (3104, 1.0)],
        ),
    )
    .await;
    assert_eq!(
        order(&h, seed::SO_NOT_SHIPPED_MIXED).await.status,
        SalesOrderStatus::Packed
    );
    assert_eq!(h.sandbox.stock_levels(), stock);
}

#[tokio::test]
async fn more_than_is_left_is_422_and_changes_nothing() {
    let h = start().await;
    let stock = h.sandbox.stock_levels();
    let cases = [
        (
            body(seed::SO_NOT_SHIPPED, "DELIVERED", &[(seed::SO1_ROW, 3.0)]),
            ".sales_order_fulfillment_rows[0].quantity",
            "maximum",
            "Cannot fulfil 3 of sales order row 3101: only 2 is left.",
        ),
        (
            body(
                seed::SO_NOT_SHIPPED,
                "DELIVERED",
                &[(seed::SO1_ROW, 1.5), (seed::SO1_ROW, 1.0)],
            ),
            ".sales_order_fulfillment_rows[1].quantity",
            "maximum",
            "Cannot fulfil 2.5 of sales order row 3101: only 2 is left.",
        ),
        (
            body(seed::SO_PACKED, "DELIVERED", &[(3105, 1.0)]),
            ".sales_order_fulfillment_rows[0].quantity",
            "maximum",
            "Cannot fulfil 1 of sales order row 3105: only 0 is left.",
        ),
        (
            body(seed::SO_DELIVERED, "DELIVERED", &[(3106, 2.0)]),
            ".sales_order_fulfillment_rows[0].quantity",
            "maximum",
            "Cannot fulfil 2 of sales order row 3106: only 0 is left.",
        ),
        (
            body(seed::SO_NOT_SHIPPED, "DELIVERED", &[(3102, 1.0)]),
            ".sales_order_fulfillment_rows[0].sales_order_row_id",
            "notFound",
            "Sales order row 3102 is not a row of sales order 3001.",
        ),
        (
            body(seed::UNKNOWN_ID, "DELIVERED", &[(seed::SO1_ROW, 1.0)]),
            ".sales_order_id",
            "notFound",
            "Sales order 999999 not found.",
        ),
    ];
    for (request, path, code, message) in cases {
        let (status, response) = h.post("/sales_order_fulfillments", request).await;
        let detail = assert_invalid(status, &response, path, code);
        assert_eq!(detail.message, message);
        assert_eq!(response["message"], message);
    }
    assert_eq!(h.sandbox.fulfillments().len(), 2, "nothing was recorded");
    assert_eq!(h.sandbox.stock_levels(), stock);
    assert_eq!(
        order(&h, seed::SO_NOT_SHIPPED).await.status,
        SalesOrderStatus::NotShipped
    );
}

#[tokio::test]
async fn fulfillment_schema_problems_are_422() {
    let h = start().await;
    let rows = json!([{"sales_order_row_id": seed::SO1_ROW, "quantity": 1}]);
    let cases = [
        (
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "DELIVERED"}),
            ".sales_order_fulfillment_rows",
            "required",
        ),
        (
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "sales_order_fulfillment_rows": rows}),
            ".status",
            "required",
        ),
        (
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "FULFILLED", "sales_order_fulfillment_rows": rows}),
            ".status",
            "enum",
        ),
        (
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "DELIVERED", "sales_order_fulfillment_rows": []}),
            ".sales_order_fulfillment_rows",
            "minItems",
        ),
        (
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "DELIVERED",
                   "sales_order_fulfillment_rows": [{"sales_order_row_id": seed::SO1_ROW, "quantity": 0}]}),
            ".sales_order_fulfillment_rows[0].quantity",
            "exclusiveMinimum",
        ),
        (
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "DELIVERED",
                   "sales_order_fulfillment_rows": [{"sales_order_row_id": seed::SO1_ROW, "qty": 1}]}),
            ".sales_order_fulfillment_rows[0].qty",
            "additionalProperties",
        ),
        (
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "DELIVERED",
                   "sales_order_fulfillment_rows": rows, "tracking_number": "x".repeat(257)}),
            ".tracking_number",
            "maxLength",
        ),
    ];
    for (request, path, code) in cases {
        let (status, response) = h.post("/sales_order_fulfillments", request).await;
        assert_invalid(status, &response, path, code);
    }
    assert_eq!(h.sandbox.fulfillments().len(), 2);
}

#[tokio::test]
async fn optional_fields_are_kept() {
    let h = start().await;
    let (status, body) = h
        .post(
            "/sales_order_fulfillments",
            json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "PACKED",
                   "picked_date": "2026-03-06", "tracking_number": null,
                   "tracking_carrier": "UPS", "tracking_method": "ground",
                   "sales_order_fulfillment_rows": [{"sales_order_row_id": seed::SO1_ROW, "quantity": 2,
                       "serial_numbers": [1, 2]}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["picked_date"], "2026-03-06T00:00:00.000Z");
    assert_eq!(body["tracking_number"], Value::Null);
    assert_eq!(body["tracking_carrier"], "UPS");
    assert_eq!(
        body["sales_order_fulfillment_rows"][0]["serial_numbers"],
        json!([1, 2])
    );
}
