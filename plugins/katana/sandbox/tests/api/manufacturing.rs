//! Contract 2 (E5–E7) and 3.8: manufacturing orders are created NOT_STARTED;
//! DONE adds the output to stock and consumes the recipe; a DONE order stays
//! DONE.

use katana_sandbox::{
    model::{ManufacturingOrder, ManufacturingOrderStatus},
    seed,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::util::{Harness, assert_invalid, start};

/// The contract's E5 example body.
fn example() -> Value {
    json!({"order_no": "MO-25-010", "variant_id": seed::KNIFE_BLACK,
           "location_id": seed::LOCATION_MAIN, "planned_quantity": 20})
}

/// `PATCH /manufacturing_orders/{id}`.
async fn patch(h: &Harness, id: i64, body: Value) -> (StatusCode, Value) {
    h.patch(&format!("/manufacturing_orders/{id}"), body).await
}

/// Stock at `location` of the knife and its three ingredients.
fn knife_and_ingredients(h: &Harness, knife: i64, location: i64) -> [f64; 4] {
    [
        knife,
        seed::STEEL_BLANK,
        seed::WALNUT_SCALE,
        seed::BRASS_RIVET,
    ]
    .map(|variant| h.sandbox.stock(variant, location))
}

#[tokio::test]
async fn seeded_orders_cover_every_status() {
    let h = start().await;
    for (id, status, order_no) in [
        (seed::MO_NOT_STARTED, "NOT_STARTED", "MO-25-001"),
        (seed::MO_BLOCKED, "BLOCKED", "MO-25-002"),
        (seed::MO_IN_PROGRESS, "IN_PROGRESS", "MO-25-003"),
        (seed::MO_DONE, "DONE", "MO-25-004"),
    ] {
        let (code, body) = h.get(&format!("/manufacturing_orders/{id}")).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(
            (body["status"].as_str(), body["order_no"].as_str()),
            (Some(status), Some(order_no))
        );
        let order: ManufacturingOrder = serde_json::from_value(body).expect("the documented shape");
        assert_eq!(Some(order), h.sandbox.manufacturing_order(id));
    }
    let done = h.sandbox.manufacturing_order(seed::MO_DONE).unwrap();
    assert_eq!(done.actual_quantity, Some(8.0));
    assert!(done.done_date.is_some());
    assert_eq!(done.ingredient_availability, "PROCESSED");
}

#[tokio::test]
async fn create_is_not_started() {
    let h = start().await;
    let (status, body) = h.post("/manufacturing_orders", example()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let order: ManufacturingOrder = serde_json::from_value(body.clone()).unwrap();
    assert_eq!(order.id, seed::NEXT_MANUFACTURING_ORDER_ID);
    assert_eq!(order.order_no, "MO-25-010");
    assert_eq!(order.status, ManufacturingOrderStatus::NotStarted);
    assert_eq!(
        (order.variant_id, order.location_id, order.planned_quantity),
        (seed::KNIFE_BLACK, seed::LOCATION_MAIN, 20.0)
    );
    assert_eq!(order.actual_quantity, None);
    assert_eq!(order.done_date, None);
    assert!(order.order_created_date.is_some(), "defaults to now");
    assert_eq!(order.ingredient_availability, "IN_STOCK");
    assert_eq!(body["planned_quantity"], json!(20));

    let (_, read_back) = h.get(&format!("/manufacturing_orders/{}", order.id)).await;
    assert_eq!(read_back, body);

    let (status, body) = h
        .post(
            "/manufacturing_orders",
            json!({"order_no": "MO-25-011", "variant_id": seed::KNIFE_WALNUT,
                   "location_id": seed::LOCATION_WORKSHOP, "planned_quantity": 500,
                   "status": "NOT_STARTED", "order_created_date": "2026-03-02",
                   "production_deadline_date": "2026-03-30T17:00:00Z",
                   "additional_info": "Rush"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["production_deadline_date"], "2026-03-30T17:00:00.000Z");
    assert_eq!(body["order_created_date"], "2026-03-02T00:00:00.000Z");
    assert_eq!(body["additional_info"], "Rush");
    assert_eq!(
        body["ingredient_availability"], "NOT_AVAILABLE",
        "the workshop lacks steel for 500 knives"
    );
}

#[tokio::test]
async fn create_problems_are_422() {
    let h = start().await;
    let with = |key: &str, value: Option<Value>| {
        let mut body = example();
        match value {
            Some(value) => body[key] = value,
            None => {
                body.as_object_mut().unwrap().remove(key);
            }
        }
        body
    };
    let cases = [
        (with("order_no", None), ".order_no", "required"),
        (with("variant_id", None), ".variant_id", "required"),
        (
            with("planned_quantity", None),
            ".planned_quantity",
            "required",
        ),
        (
            with("planned_quantity", Some(json!(0))),
            ".planned_quantity",
            "exclusiveMinimum",
        ),
        (with("status", Some(json!("DONE"))), ".status", "enum"),
        (
            with("quantity", Some(json!(1))),
            ".quantity",
            "additionalProperties",
        ),
        (
            with("order_no", Some(json!("MO-25-001"))),
            ".order_no",
            "unique",
        ),
        (
            with("variant_id", Some(json!(seed::STEEL_BLANK))),
            ".variant_id",
            "notProducible",
        ),
        (
            with("variant_id", Some(json!(seed::SHARPENING))),
            ".variant_id",
            "notProducible",
        ),
        (
            with("variant_id", Some(json!(seed::UNKNOWN_ID))),
            ".variant_id",
            "notFound",
        ),
        (
            with("location_id", Some(json!(seed::LOCATION_RETAIL))),
            ".location_id",
            "notAllowed",
        ),
        (
            with("location_id", Some(json!(seed::UNKNOWN_ID))),
            ".location_id",
            "notFound",
        ),
    ];
    for (body, path, code) in cases {
        let (status, response) = h.post("/manufacturing_orders", body).await;
        assert_invalid(status, &response, path, code);
    }
    assert_eq!(
        h.sandbox.manufacturing_orders().len(),
        4,
        "nothing was created"
    );
}

#[tokio::test]
async fn done_adds_the_output_and_consumes_the_recipe() {
    let h = start().await;
    let before = knife_and_ingredients(&h, seed::KNIFE_BLACK, seed::LOCATION_MAIN);
    let (status, body) = patch(&h, seed::MO_NOT_STARTED, json!({"status": "DONE"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "DONE");
    assert!(body["done_date"].is_string(), "{body}");
    assert_eq!(body["actual_quantity"], json!(20), "planned when not set");
    assert_eq!(body["ingredient_availability"], "PROCESSED");

    let after = knife_and_ingredients(&h, seed::KNIFE_BLACK, seed::LOCATION_MAIN);
    assert_eq!(
        after,
        [
            before[0] + 20.0,
            before[1] - 20.0,
            before[2] - 40.0,
            before[3] - 60.0
        ],
        "+20 knives; 1, 2 and 3 of each ingredient per knife consumed"
    );
    let (_, read_back) = h
        .get(&format!("/manufacturing_orders/{}", seed::MO_NOT_STARTED))
        .await;
    assert_eq!(read_back, body);
}

#[tokio::test]
async fn done_uses_the_actual_quantity_and_done_date_sent() {
    let h = start().await;
    let before = knife_and_ingredients(&h, seed::KNIFE_BLACK, seed::LOCATION_WORKSHOP);
    let (status, body) = patch(
        &h,
        seed::MO_IN_PROGRESS,
        json!({"status": "DONE", "actual_quantity": 4, "done_date": "2026-03-09T16:00:00Z"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["actual_quantity"], json!(4));
    assert_eq!(body["done_date"], "2026-03-09T16:00:00.000Z");
    let after = knife_and_ingredients(&h, seed::KNIFE_BLACK, seed::LOCATION_WORKSHOP);
    assert_eq!(
        after,
        [
            before[0] + 4.0,
            before[1] - 4.0,
            before[2] - 8.0,
            before[3] - 12.0
        ],
        "stock moves at the order's location"
    );
    assert_eq!(
        h.sandbox.stock(seed::KNIFE_BLACK, seed::LOCATION_MAIN),
        seed::initial_stock(seed::KNIFE_BLACK, seed::LOCATION_MAIN),
        "other locations are untouched"
    );
}

#[tokio::test]
async fn a_done_order_stays_done() {
    let h = start().await;
    let stock = h.sandbox.stock_levels();
    let before = h.sandbox.manufacturing_order(seed::MO_DONE).unwrap();

    let (status, body) = patch(&h, seed::MO_DONE, json!({"status": "DONE"})).await;
    assert_eq!(status, StatusCode::OK, "DONE again is accepted: {body}");
    assert_eq!(body["done_date"], json!(before.done_date));
    assert_eq!(h.sandbox.stock_levels(), stock, "and moves nothing");

    let (status, body) = patch(&h, seed::MO_DONE, json!({"status": "IN_PROGRESS"})).await;
    let detail = assert_invalid(status, &body, ".status", "invalidTransition");
    assert_eq!(
        detail.message,
        "Manufacturing order MO-25-004 is DONE; its status cannot change to IN_PROGRESS."
    );
    for field in [
        json!({"planned_quantity": 9}),
        json!({"actual_quantity": 9}),
        json!({"order_no": "MO-X"}),
        json!({"variant_id": seed::KNIFE_BLACK}),
        json!({"location_id": seed::LOCATION_WORKSHOP}),
        json!({"production_deadline_date": "2026-04-01"}),
        json!({"status": "DONE", "planned_quantity": 9}),
    ] {
        let name = field
            .as_object()
            .unwrap()
            .keys()
            .find(|key| *key != "status")
            .unwrap()
            .clone();
        let (status, body) = patch(&h, seed::MO_DONE, field).await;
        assert_invalid(status, &body, &format!(".{name}"), "notUpdatable");
    }
    let unchanged = h.sandbox.manufacturing_order(seed::MO_DONE).unwrap();
    assert_eq!(unchanged.status, ManufacturingOrderStatus::Done);
    assert_eq!(unchanged.planned_quantity, before.planned_quantity);
    assert_eq!(h.sandbox.stock_levels(), stock);

    // The note is still editable.
    let (status, body) = patch(&h, seed::MO_DONE, json!({"additional_info": "Checked"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["additional_info"], "Checked");
}

#[tokio::test]
async fn other_statuses_and_fields_change_freely_before_done() {
    let h = start().await;
    let stock = h.sandbox.stock_levels();
    for status in ["IN_PROGRESS", "BLOCKED", "NOT_STARTED"] {
        let (code, body) = patch(&h, seed::MO_BLOCKED, json!({"status": status})).await;
        assert_eq!(
            (code, body["status"].as_str()),
            (StatusCode::OK, Some(status))
        );
    }
    let (code, body) = patch(
        &h,
        seed::MO_BLOCKED,
        json!({"planned_quantity": 12, "order_no": "MO-25-002B", "location_id": 1}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{body}");
    assert_eq!(
        (
            &body["planned_quantity"],
            &body["order_no"],
            &body["location_id"]
        ),
        (&json!(12), &json!("MO-25-002B"), &json!(1))
    );
    assert_eq!(h.sandbox.stock_levels(), stock, "only DONE moves stock");
}

#[tokio::test]
async fn update_problems_are_422() {
    let h = start().await;
    let cases = [
        (json!({"status": "FINISHED"}), ".status", "enum"),
        (
            json!({"status": "DONE", "colour": "red"}),
            ".colour",
            "additionalProperties",
        ),
        (
            json!({"planned_quantity": -1}),
            ".planned_quantity",
            "exclusiveMinimum",
        ),
        (json!({"order_no": "MO-25-004"}), ".order_no", "unique"),
        (
            json!({"location_id": seed::LOCATION_RETAIL}),
            ".location_id",
            "notAllowed",
        ),
        (
            json!({"variant_id": seed::WALNUT_SCALE}),
            ".variant_id",
            "notProducible",
        ),
        (json!({"done_date": "later"}), ".done_date", "format"),
    ];
    for (body, path, code) in cases {
        let (status, response) = patch(&h, seed::MO_NOT_STARTED, body).await;
        assert_invalid(status, &response, path, code);
    }
    let order = h.sandbox.manufacturing_order(seed::MO_NOT_STARTED).unwrap();
    assert_eq!(
        order.status,
        ManufacturingOrderStatus::NotStarted,
        "nothing changed"
    );
}
