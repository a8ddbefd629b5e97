//! Contract 2 (E2, E3) and 3.3, 3.6: creating and reading purchase orders.

use katana_sandbox::{
    VALIDATION_MESSAGE,
    model::{PurchaseOrder, PurchaseOrderStatus},
    seed,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::util::{assert_invalid, details, start};

/// The contract's E2 example body.
fn example() -> Value {
    json!({
        "order_no": "PO-25-010",
        "supplier_id": seed::SUPPLIER_USD,
        "location_id": seed::LOCATION_MAIN,
        "purchase_order_rows": [{"variant_id": seed::WALNUT_SCALE, "quantity": 100, "price_per_unit": 2.5}]
    })
}

/// `example()` with `key` set to `value` (or removed, for `Value::Null`
/// passed as `None`).
fn with(key: &str, value: Option<Value>) -> Value {
    let mut body = example();
    let map = body.as_object_mut().unwrap();
    match value {
        Some(value) => map.insert(key.to_owned(), value),
        None => map.remove(key),
    };
    body
}

#[tokio::test]
async fn reading_matches_the_contract_example() {
    let h = start().await;
    let (status, body) = h
        .get(&format!("/purchase_orders/{}", seed::PO_NOT_RECEIVED))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["order_no"], "PO-25-001");
    assert_eq!(body["status"], "NOT_RECEIVED");
    let row = &body["purchase_order_rows"][0];
    assert_eq!(
        (
            &row["id"],
            &row["variant_id"],
            &row["quantity"],
            &row["price_per_unit"],
            &row["received_date"]
        ),
        (
            &json!(7101),
            &json!(5101),
            &json!(200),
            &json!(2.5),
            &Value::Null
        )
    );
    let order: PurchaseOrder = serde_json::from_value(body).expect("the documented shape");
    assert_eq!(Some(order), h.sandbox.purchase_order(seed::PO_NOT_RECEIVED));
}

#[tokio::test]
async fn seeded_orders_cover_every_status() {
    let h = start().await;
    for (id, status, rows) in [
        (seed::PO_NOT_RECEIVED, "NOT_RECEIVED", 2),
        (seed::PO_SAME_VARIANT_TWICE, "NOT_RECEIVED", 2),
        (seed::PO_PARTIALLY_RECEIVED, "PARTIALLY_RECEIVED", 2),
        (seed::PO_RECEIVED, "RECEIVED", 2),
    ] {
        let (_, body) = h.get(&format!("/purchase_orders/{id}")).await;
        assert_eq!(body["status"], status, "{id}");
        assert_eq!(body["purchase_order_rows"].as_array().unwrap().len(), rows);
    }
    let (_, body) = h
        .get(&format!("/purchase_orders/{}", seed::PO_SAME_VARIANT_TWICE))
        .await;
    let variants: Vec<&Value> = body["purchase_order_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row["variant_id"])
        .collect();
    assert_eq!(
        variants,
        [&json!(seed::WALNUT_SCALE), &json!(seed::WALNUT_SCALE)]
    );
}

#[tokio::test]
async fn create_is_not_received_with_total_and_supplier_currency() {
    let h = start().await;
    let (status, body) = h.post("/purchase_orders", example()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let order: PurchaseOrder = serde_json::from_value(body.clone()).unwrap();
    assert_eq!(order.id, seed::NEXT_PURCHASE_ORDER_ID);
    assert_eq!(order.status, PurchaseOrderStatus::NotReceived);
    assert_eq!(order.order_no, "PO-25-010");
    assert_eq!(order.currency, "USD", "the supplier's currency");
    assert_eq!(order.total, 250.0);
    assert_eq!(body["total"], json!(250));
    assert_eq!(order.entity_type, "regular");
    assert!(order.order_created_date.is_some());
    assert_eq!(
        order.purchase_order_rows[0].id,
        seed::NEXT_PURCHASE_ORDER_ROW_ID
    );
    assert_eq!(order.purchase_order_rows[0].received_date, None);

    // E3 returns what E2 answered.
    let (_, read_back) = h.get(&format!("/purchase_orders/{}", order.id)).await;
    assert_eq!(read_back, body);
}

#[tokio::test]
async fn create_with_every_optional_field() {
    let h = start().await;
    let body = json!({
        "order_no": "PO-25-011",
        "supplier_id": seed::SUPPLIER_EUR,
        "location_id": seed::LOCATION_MAIN,
        "entity_type": "regular",
        "currency": "GBP",
        "status": "NOT_RECEIVED",
        "order_created_date": "2026-03-10T08:30:00Z",
        "expected_arrival_date": "2026-03-20",
        "additional_info": "Deliver to the back door",
        "purchase_order_rows": [
            {"variant_id": seed::WALNUT_SCALE, "quantity": 3, "price_per_unit": 1.1,
             "tax_rate_id": 1, "purchase_uom": "box", "purchase_uom_conversion_rate": 50,
             "arrival_date": "2026-03-19T12:00:00+01:00"},
            {"variant_id": seed::BRASS_RIVET, "quantity": 0.5, "price_per_unit": 0}
        ]
    });
    let (status, body) = h.post("/purchase_orders", body).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["currency"], "GBP");
    assert_eq!(body["total"], json!(3.3));
    assert_eq!(body["order_created_date"], "2026-03-10T08:30:00.000Z");
    assert_eq!(body["expected_arrival_date"], "2026-03-20T00:00:00.000Z");
    assert_eq!(body["additional_info"], "Deliver to the back door");
    let row = &body["purchase_order_rows"][0];
    assert_eq!(row["purchase_uom"], "box");
    assert_eq!(row["purchase_uom_conversion_rate"], json!(50));
    assert_eq!(row["arrival_date"], "2026-03-19T11:00:00.000Z");
    assert_eq!(row["currency"], "GBP");
    assert_eq!(body["purchase_order_rows"][1]["quantity"], json!(0.5));
}

#[tokio::test]
async fn schema_problems_are_422_with_paths() {
    let h = start().await;
    let cases: Vec<(Value, &str, &str)> = vec![
        (with("order_no", None), ".order_no", "required"),
        (with("supplier_id", None), ".supplier_id", "required"),
        (
            with("purchase_order_rows", None),
            ".purchase_order_rows",
            "required",
        ),
        (
            with("purchase_order_rows", Some(json!([]))),
            ".purchase_order_rows",
            "minItems",
        ),
        (with("order_no", Some(json!(""))), ".order_no", "minLength"),
        (
            with("notes", Some(json!("x"))),
            ".notes",
            "additionalProperties",
        ),
        (with("currency", Some(json!("usd"))), ".currency", "pattern"),
        (
            with("currency", Some(json!("EURO"))),
            ".currency",
            "pattern",
        ),
        (with("status", Some(json!("RECEIVED"))), ".status", "enum"),
        (
            with("entity_type", Some(json!("special"))),
            ".entity_type",
            "enum",
        ),
        (
            with("supplier_id", Some(json!("4001"))),
            ".supplier_id",
            "type",
        ),
        (
            with("additional_info", Some(Value::Null)),
            ".additional_info",
            "type",
        ),
        (
            with("order_created_date", Some(json!("soon"))),
            ".order_created_date",
            "format",
        ),
        (
            with(
                "purchase_order_rows",
                Some(json!([{"variant_id": 5101, "quantity": 1}])),
            ),
            ".purchase_order_rows[0].price_per_unit",
            "required",
        ),
        (
            with(
                "purchase_order_rows",
                Some(json!([{"variant_id": 5101, "quantity": 1, "price_per_unit": 1, "sku": "X"}])),
            ),
            ".purchase_order_rows[0].sku",
            "additionalProperties",
        ),
        (
            with(
                "purchase_order_rows",
                Some(
                    json!([{"variant_id": 5101, "quantity": 1, "price_per_unit": 1},
                            {"variant_id": 5101, "quantity": 0, "price_per_unit": 1}]),
                ),
            ),
            ".purchase_order_rows[1].quantity",
            "exclusiveMinimum",
        ),
        (
            with(
                "purchase_order_rows",
                Some(json!([{"variant_id": 5101, "quantity": -2, "price_per_unit": 1}])),
            ),
            ".purchase_order_rows[0].quantity",
            "exclusiveMinimum",
        ),
        (
            with(
                "purchase_order_rows",
                Some(json!([{"variant_id": 5101, "quantity": 1, "price_per_unit": -0.01}])),
            ),
            ".purchase_order_rows[0].price_per_unit",
            "minimum",
        ),
        (
            with(
                "purchase_order_rows",
                Some(
                    json!([{"variant_id": 5101, "quantity": 1, "price_per_unit": 1, "purchase_uom": "packages"}]),
                ),
            ),
            ".purchase_order_rows[0].purchase_uom",
            "maxLength",
        ),
    ];
    for (body, path, code) in cases {
        let (status, response) = h.post("/purchase_orders", body).await;
        let detail = assert_invalid(status, &response, path, code);
        assert_eq!(response["message"], VALIDATION_MESSAGE, "{response}");
        assert!(!detail.message.is_empty());
    }
    assert_eq!(h.sandbox.purchase_orders().len(), 4, "nothing was created");
}

#[tokio::test]
async fn every_problem_is_reported_at_once() {
    let h = start().await;
    let (status, body) = h
        .post(
            "/purchase_orders",
            json!({"supplier_id": 4001, "extra": true}),
        )
        .await;
    let found: Vec<(String, String)> = details(status, &body)
        .into_iter()
        .map(|d| (d.path, d.code))
        .collect();
    for expected in [
        (".extra", "additionalProperties"),
        (".order_no", "required"),
        (".location_id", "required"),
        (".purchase_order_rows", "required"),
    ] {
        assert!(
            found.contains(&(expected.0.to_owned(), expected.1.to_owned())),
            "{expected:?} in {found:?}"
        );
    }
    let detail = &body["details"][1];
    assert_eq!(detail["path"], ".order_no");
    assert_eq!(
        detail["message"],
        "should have required property 'order_no'"
    );
}

#[tokio::test]
async fn conflicts_with_the_data_are_422_naming_the_problem() {
    let h = start().await;
    let cases: Vec<(Value, &str, &str, &str)> = vec![
        (
            with("supplier_id", Some(json!(seed::UNKNOWN_ID))),
            ".supplier_id",
            "notFound",
            "Supplier 999999 not found.",
        ),
        (
            with("location_id", Some(json!(seed::UNKNOWN_ID))),
            ".location_id",
            "notFound",
            "Location 999999 not found.",
        ),
        (
            with("location_id", Some(json!(seed::LOCATION_WORKSHOP))),
            ".location_id",
            "notAllowed",
            "Location 2 (Workshop) does not allow purchases.",
        ),
        (
            with("location_id", Some(json!(seed::LOCATION_RETAIL))),
            ".location_id",
            "notAllowed",
            "Location 3 (Retail) does not allow purchases.",
        ),
        (
            with("order_no", Some(json!("PO-25-001"))),
            ".order_no",
            "unique",
            "Purchase order number PO-25-001 already exists.",
        ),
        (
            with(
                "purchase_order_rows",
                Some(json!([{"variant_id": seed::UNKNOWN_ID, "quantity": 1, "price_per_unit": 1}])),
            ),
            ".purchase_order_rows[0].variant_id",
            "notFound",
            "Variant 999999 not found.",
        ),
    ];
    for (body, path, code, message) in cases {
        let (status, response) = h.post("/purchase_orders", body).await;
        let detail = assert_invalid(status, &response, path, code);
        assert_eq!(detail.message, message);
        assert_eq!(response["message"], message, "the first problem leads");
    }
    assert_eq!(h.sandbox.purchase_orders().len(), 4, "nothing was created");
}

#[tokio::test]
async fn tracking_location_only_for_outsourced_orders() {
    let h = start().await;
    let (status, body) = h
        .post(
            "/purchase_orders",
            with("tracking_location_id", Some(json!(2))),
        )
        .await;
    assert_invalid(status, &body, ".tracking_location_id", "notAllowed");
    let mut outsourced = with("tracking_location_id", Some(json!(2)));
    outsourced["entity_type"] = json!("outsourced");
    let (status, body) = h.post("/purchase_orders", outsourced).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["entity_type"], "outsourced");
    assert_eq!(body["tracking_location_id"], 2);
}

#[tokio::test]
async fn new_orders_take_consecutive_ids() {
    let h = start().await;
    let (_, first) = h.post("/purchase_orders", example()).await;
    let (_, second) = h
        .post(
            "/purchase_orders",
            with("order_no", Some(json!("PO-25-012"))),
        )
        .await;
    assert_eq!(first["id"], seed::NEXT_PURCHASE_ORDER_ID);
    assert_eq!(second["id"], seed::NEXT_PURCHASE_ORDER_ID + 1);
    assert_eq!(
        second["purchase_order_rows"][0]["id"],
        seed::NEXT_PURCHASE_ORDER_ROW_ID + 1
    );
}
