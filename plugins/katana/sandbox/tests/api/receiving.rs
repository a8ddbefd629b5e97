//! Contract 2 (E4) and 3.7: receipts split rows, the order's status follows
//! its rows, stock grows, and a bad line rejects the whole request.

use katana_sandbox::{
    model::{PurchaseOrder, PurchaseOrderStatus},
    seed,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::util::{Harness, assert_invalid, start};

/// Receives `lines` and expects the 204 with no body.
async fn receive(h: &Harness, lines: Value) {
    let (status, body) = h.post("/purchase_order_receive", lines).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_eq!(body, Value::Null, "a 204 has no body");
}

/// `GET /purchase_orders/{id}`, which must succeed.
async fn order(h: &Harness, id: i64) -> PurchaseOrder {
    let (status, body) = h.get(&format!("/purchase_orders/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body).expect("a purchase order")
}

/// `(id, quantity, received?)` of each row, in order.
fn rows(order: &PurchaseOrder) -> Vec<(i64, f64, bool)> {
    order
        .purchase_order_rows
        .iter()
        .map(|row| (row.id, row.quantity, row.received_date.is_some()))
        .collect()
}

#[tokio::test]
async fn receiving_part_of_a_row_splits_it_then_the_rest_completes_it() {
    let h = start().await;
    let steel_at_main = seed::initial_stock(seed::STEEL_BLANK, seed::LOCATION_MAIN);

    receive(
        &h,
        json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 50,
                "received_date": "2026-03-05T10:00:00Z"}]),
    )
    .await;
    let split = order(&h, seed::PO_NOT_RECEIVED).await;
    let new_row = seed::NEXT_PURCHASE_ORDER_ROW_ID;
    assert_eq!(
        rows(&split),
        [
            (seed::PO1_STEEL_ROW, 150.0, false),
            (seed::PO1_RIVET_ROW, 1000.0, false),
            (new_row, 50.0, true),
        ],
        "the row keeps its id with the rest; the received part is a new row"
    );
    let received = &split.purchase_order_rows[2];
    assert_eq!(received.variant_id, seed::STEEL_BLANK);
    assert_eq!(received.price_per_unit, 2.5);
    assert_eq!(
        received.received_date.as_deref(),
        Some("2026-03-05T10:00:00.000Z")
    );
    assert_eq!(split.status, PurchaseOrderStatus::PartiallyReceived);
    assert_eq!(split.total, 550.0, "splitting keeps the order total");
    assert_eq!(split.purchase_order_rows[0].total, 375.0);
    assert_eq!(
        h.sandbox.stock(seed::STEEL_BLANK, seed::LOCATION_MAIN),
        steel_at_main + 50.0
    );

    // The rest of the steel row, then the rivets: RECEIVED.
    receive(
        &h,
        json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 150}]),
    )
    .await;
    let partly = order(&h, seed::PO_NOT_RECEIVED).await;
    assert_eq!(partly.status, PurchaseOrderStatus::PartiallyReceived);
    assert_eq!(
        partly.purchase_order_rows.len(),
        3,
        "a full receipt adds no row"
    );
    assert!(partly.purchase_order_rows[0].received_date.is_some());

    receive(
        &h,
        json!({"purchase_order_row_id": seed::PO1_RIVET_ROW, "quantity": 1000}),
    )
    .await;
    let done = order(&h, seed::PO_NOT_RECEIVED).await;
    assert_eq!(done.status, PurchaseOrderStatus::Received);
    assert_eq!(
        h.sandbox.stock(seed::STEEL_BLANK, seed::LOCATION_MAIN),
        steel_at_main + 200.0
    );
    assert_eq!(
        h.sandbox.stock(seed::BRASS_RIVET, seed::LOCATION_MAIN),
        seed::initial_stock(seed::BRASS_RIVET, seed::LOCATION_MAIN) + 1000.0
    );
}

#[tokio::test]
async fn receiving_every_row_at_once_sets_dates_without_splitting() {
    let h = start().await;
    receive(
        &h,
        json!([
            {"purchase_order_row_id": 7103, "quantity": 300},
            {"purchase_order_row_id": 7104, "quantity": 100}
        ]),
    )
    .await;
    let received = order(&h, seed::PO_SAME_VARIANT_TWICE).await;
    assert_eq!(rows(&received), [(7103, 300.0, true), (7104, 100.0, true)]);
    assert_eq!(received.status, PurchaseOrderStatus::Received);
    assert!(
        received.purchase_order_rows[0].received_date.is_some(),
        "received_date defaults to now"
    );
    assert_eq!(
        h.sandbox.stock(seed::WALNUT_SCALE, seed::LOCATION_MAIN),
        seed::initial_stock(seed::WALNUT_SCALE, seed::LOCATION_MAIN) + 400.0
    );
}

#[tokio::test]
async fn the_rest_of_a_seeded_split_row_completes_the_order() {
    let h = start().await;
    receive(
        &h,
        json!([{"purchase_order_row_id": seed::PO3_OPEN_ROW, "quantity": 100}]),
    )
    .await;
    let order = order(&h, seed::PO_PARTIALLY_RECEIVED).await;
    assert_eq!(order.status, PurchaseOrderStatus::Received);
}

#[tokio::test]
async fn stock_grows_by_the_conversion_rate() {
    let h = start().await;
    let (status, created) = h
        .post(
            "/purchase_orders",
            json!({"order_no": "PO-BOXES", "supplier_id": seed::SUPPLIER_USD,
                   "location_id": seed::LOCATION_MAIN,
                   "purchase_order_rows": [{"variant_id": seed::BRASS_RIVET, "quantity": 4,
                       "price_per_unit": 4.5, "purchase_uom": "box",
                       "purchase_uom_conversion_rate": 100}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let row = created["purchase_order_rows"][0]["id"].as_i64().unwrap();
    receive(&h, json!([{"purchase_order_row_id": row, "quantity": 1}])).await;
    assert_eq!(
        h.sandbox.stock(seed::BRASS_RIVET, seed::LOCATION_MAIN),
        seed::initial_stock(seed::BRASS_RIVET, seed::LOCATION_MAIN) + 100.0
    );
}

#[tokio::test]
async fn two_lines_for_one_row_count_together() {
    let h = start().await;
    receive(
        &h,
        json!([
            {"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 60},
            {"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 140}
        ]),
    )
    .await;
    let order = order(&h, seed::PO_NOT_RECEIVED).await;
    assert_eq!(
        rows(&order)
            .into_iter()
            .filter(|&(_, _, received)| received)
            .map(|(_, quantity, _)| quantity)
            .collect::<Vec<_>>(),
        [140.0, 60.0],
        "the first line split off 60, the second received the rest in place"
    );

    let (status, body) = h
        .post(
            "/purchase_order_receive",
            json!([
                {"purchase_order_row_id": 7103, "quantity": 200},
                {"purchase_order_row_id": 7103, "quantity": 101}
            ]),
        )
        .await;
    let detail = assert_invalid(status, &body, "[1].quantity", "maximum");
    assert_eq!(
        detail.message,
        "Cannot receive 301 of purchase order row 7103: only 300 is not yet received."
    );
}

#[tokio::test]
async fn bad_lines_reject_the_whole_request() {
    let h = start().await;
    let before = h.sandbox.purchase_orders();
    let stock = h.sandbox.stock_levels();
    let cases = [
        (
            json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 10},
                   {"purchase_order_row_id": seed::PO1_RIVET_ROW, "quantity": 1001}]),
            "[1].quantity",
            "maximum",
            "Cannot receive 1001 of purchase order row 7102: only 1000 is not yet received.",
        ),
        (
            json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 10},
                   {"purchase_order_row_id": seed::PO3_RECEIVED_ROW, "quantity": 1}]),
            "[1].purchase_order_row_id",
            "alreadyReceived",
            "Purchase order row 7106 is already received.",
        ),
        (
            json!([{"purchase_order_row_id": seed::UNKNOWN_ID, "quantity": 1}]),
            "[0].purchase_order_row_id",
            "notFound",
            "Purchase order row 999999 not found.",
        ),
        (
            json!({"purchase_order_row_id": 7107, "quantity": 1}),
            ".purchase_order_row_id",
            "alreadyReceived",
            "Purchase order row 7107 is already received.",
        ),
    ];
    for (lines, path, code, message) in cases {
        let (status, body) = h.post("/purchase_order_receive", lines).await;
        let detail = assert_invalid(status, &body, path, code);
        assert_eq!(detail.message, message);
        assert_eq!(body["message"], message);
    }
    assert_eq!(h.sandbox.purchase_orders(), before, "no row changed");
    assert_eq!(h.sandbox.stock_levels(), stock, "no stock moved");
}

#[tokio::test]
async fn receipt_schema_problems_are_422() {
    let h = start().await;
    let cases = [
        (json!([]), "", "minItems"),
        (json!("7101"), "", "type"),
        (
            json!([{"quantity": 1}]),
            "[0].purchase_order_row_id",
            "required",
        ),
        (
            json!([{"purchase_order_row_id": 7101}]),
            "[0].quantity",
            "required",
        ),
        (
            json!([{"purchase_order_row_id": 7101, "quantity": 0}]),
            "[0].quantity",
            "exclusiveMinimum",
        ),
        (
            json!([{"purchase_order_row_id": 7101, "quantity": 1, "note": "x"}]),
            "[0].note",
            "additionalProperties",
        ),
        (
            json!([{"purchase_order_row_id": 7101, "quantity": "1"}]),
            "[0].quantity",
            "type",
        ),
        (
            json!({"purchase_order_row_id": 7101, "quantity": 1, "received_date": "yesterday"}),
            ".received_date",
            "format",
        ),
    ];
    for (lines, path, code) in cases {
        let (status, body) = h.post("/purchase_order_receive", lines).await;
        assert_invalid(status, &body, path, code);
    }
    assert_eq!(
        order(&h, seed::PO_NOT_RECEIVED).await.status,
        PurchaseOrderStatus::NotReceived
    );
}
