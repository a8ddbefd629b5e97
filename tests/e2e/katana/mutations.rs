//! The four mutations' two-step flow against the seeded workshop: previews
//! write nothing (the request log proves it), the user is asked each tool's
//! exact question, only a yes lets the change out, and the change is in the
//! sandbox's state: new orders, receipts that split rows and move the
//! order's status, stock added by a finished manufacturing order and taken
//! by a delivered sales order.

use katana_sandbox::model::{ManufacturingOrderStatus, PurchaseOrderStatus, SalesOrderStatus};
use katana_sandbox::seed;
use serde_json::{Value, json};

use super::{Katana, Setup};
use crate::support::{ERAS, Elicitation, Era};

/// A purchase order for three lines, 5101 twice: 250 + 50 + 50 = 350.
fn purchase_order(confirm: bool) -> Value {
    json!({"supplier_id": seed::SUPPLIER_USD, "location_id": seed::LOCATION_MAIN,
           "order_number": "PO-25-010", "notes": "Rush order",
           "items": [{"variant_id": seed::STEEL_BLANK, "quantity": 100, "price_per_unit": 2.5},
                     {"variant_id": seed::BRASS_RIVET, "quantity": 1000, "price_per_unit": 0.05},
                     {"variant_id": seed::STEEL_BLANK, "quantity": 20, "price_per_unit": 2.5}],
           "confirm": confirm})
}

/// One call of each mutation with `confirm`, and the question each asks.
fn the_four(confirm: bool) -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "create_purchase_order",
            purchase_order(confirm),
            "Create purchase order PO-25-010 with 3 items totaling 350.00?",
        ),
        (
            "receive_purchase_order",
            json!({"order_id": seed::PO_NOT_RECEIVED,
                   "items": [{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 50}],
                   "confirm": confirm}),
            "Receive 1 items for purchase order PO-25-001 and update inventory?",
        ),
        (
            "create_manufacturing_order",
            json!({"variant_id": seed::KNIFE_WALNUT, "planned_quantity": 5,
                   "location_id": seed::LOCATION_MAIN, "order_no": "MO-25-010",
                   "production_deadline_date": "2026-03-20T17:00:00.000Z", "confirm": confirm}),
            "Create manufacturing order for variant 5002 with quantity 5?",
        ),
        (
            "fulfill_order",
            json!({"order_id": seed::MO_NOT_STARTED, "order_type": "manufacturing", "confirm": confirm}),
            "Mark manufacturing order MO-25-001 as DONE and update inventory?",
        ),
    ]
}

async fn start(era: Era, elicitation: Elicitation) -> Katana {
    Setup::new().era(era).elicitation(elicitation).start().await
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn previews_show_totals_warnings_and_stock_changes_and_write_nothing() {
    let katana = start(Era::Legacy, Elicitation::Accept(true)).await;
    let host = &katana.host;
    for (tool, args, _) in the_four(false) {
        let out = host.ok(tool, args).await;
        assert_eq!(
            (&out["is_preview"], &out["result"]),
            (&json!(true), &json!("preview")),
            "{tool}"
        );
        assert_eq!(
            (&out["confirmed"], &out["success"], &out["status_code"]),
            (&json!(false), &json!(false), &Value::Null),
            "the StatusPro record's fields on a preview: {tool}"
        );
        assert!(out["message"].as_str().unwrap().starts_with("Preview"));
        assert!(
            strings(&out["next_actions"])[0].contains("confirm=true"),
            "{tool}"
        );
    }

    let po = host
        .ok("create_purchase_order", purchase_order(false))
        .await;
    assert_eq!(
        (
            &po["id"],
            &po["order_number"],
            &po["status"],
            &po["total_cost"]
        ),
        (
            &Value::Null,
            &json!("PO-25-010"),
            &json!("NOT_RECEIVED"),
            &json!(350.0)
        )
    );
    assert_eq!(
        strings(&po["warnings"]),
        [
            "No currency given: Katana will use the supplier's default currency.",
            "Variant 5101 is on 2 lines; merge them unless that is intended."
        ]
    );

    let mo = host
        .ok(
            "create_manufacturing_order",
            json!({"variant_id": seed::KNIFE_BLACK, "planned_quantity": 20, "location_id": 1}),
        )
        .await;
    let generated = mo["order_no"].as_str().unwrap();
    assert!(
        generated.starts_with("MO-") && generated.len() == 18,
        "{generated}"
    );
    let warnings = strings(&mo["warnings"]);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains("production_deadline_date"));
    assert!(warnings[1].contains("additional_info"));
    assert!(warnings[2].contains(generated));
    assert_eq!(mo["status"], "NOT_STARTED");

    // Stock changes, as they would be made.
    let fulfill = |id: i64, kind: &str| json!({"order_id": id, "order_type": kind});
    let out = host
        .ok(
            "fulfill_order",
            fulfill(seed::MO_NOT_STARTED, "manufacturing"),
        )
        .await;
    assert_eq!(
        (
            &out["order_number"],
            &out["status"],
            &out["inventory_updates"]
        ),
        (
            &json!("MO-25-001"),
            &json!("NOT_STARTED"),
            &json!(["+20 KNF-8IN-BLK @1"])
        )
    );
    let out = host
        .ok("fulfill_order", fulfill(seed::MO_BLOCKED, "manufacturing"))
        .await;
    assert_eq!(
        strings(&out["warnings"]),
        ["Manufacturing order MO-25-002 is blocked - review before completing."]
    );
    // The service on SO-25-002 keeps no stock, so it is not listed.
    let out = host
        .ok(
            "fulfill_order",
            fulfill(seed::SO_NOT_SHIPPED_MIXED, "sales"),
        )
        .await;
    assert_eq!(
        out["inventory_updates"],
        json!(["-3 KNF-8IN-WAL @3", "-1 KNF-8IN-BLK @3"])
    );
    let out = host
        .ok("fulfill_order", fulfill(seed::SO_PACKED, "sales"))
        .await;
    assert_eq!(out["status"], "PACKED");
    assert!(strings(&out["warnings"])[0].contains("only NOT_SHIPPED"));
    assert_eq!(out["inventory_updates"], json!([]));

    // Receipts are checked against the order in the preview.
    let out = host
        .ok(
            "receive_purchase_order",
            json!({"order_id": seed::PO_PARTIALLY_RECEIVED, "items": [
                {"purchase_order_row_id": seed::PO3_RECEIVED_ROW, "quantity": 1},
                {"purchase_order_row_id": seed::PO3_OPEN_ROW, "quantity": 101},
                {"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 1}]}),
        )
        .await;
    let warnings = strings(&out["warnings"]);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains("already received"));
    assert!(warnings[1].contains("receiving 101 but only 100 are open"));
    assert!(warnings[2].contains("not on purchase order PO-25-003"));

    assert!(katana.questions().is_empty(), "a preview asks nothing");
    assert!(katana.writes().is_empty(), "a preview writes nothing");
    assert!(
        katana
            .requests()
            .iter()
            .all(|r| r.starts_with("GET /purchase_orders/")
                || r.starts_with("GET /manufacturing_orders/")
                || r.starts_with("GET /sales_orders/")
                || r == "GET /variants"),
        "{:?}",
        katana.requests()
    );
}

#[tokio::test]
async fn confirmed_mutations_ask_their_question_and_make_the_change() {
    for era in ERAS {
        let katana = start(era, Elicitation::Accept(true)).await;
        let host = &katana.host;
        let mut asked = Vec::new();
        for (tool, args, question) in the_four(true) {
            let out = host.ok(tool, args).await;
            assert_eq!(
                (&out["is_preview"], &out["result"]),
                (&json!(false), &json!("confirmed")),
                "{era:?} {tool}: {out}"
            );
            // Katana answers a receipt with 204 and the rest with 200.
            let status = if tool == "receive_purchase_order" {
                204
            } else {
                200
            };
            assert_eq!(
                (&out["confirmed"], &out["success"], &out["status_code"]),
                (&json!(true), &json!(true), &json!(status)),
                "the StatusPro record's fields after an applied change: {era:?} {tool}"
            );
            asked.push(question.to_string());
            match tool {
                "create_purchase_order" => {
                    assert_eq!(out["id"], seed::NEXT_PURCHASE_ORDER_ID);
                    assert_eq!(
                        (&out["status"], &out["total_cost"], &out["currency"]),
                        (&json!("NOT_RECEIVED"), &json!(350.0), &json!("USD")),
                        "the supplier's currency, as Katana set it"
                    );
                }
                "create_manufacturing_order" => {
                    assert_eq!(out["id"], seed::NEXT_MANUFACTURING_ORDER_ID);
                    assert_eq!(
                        (&out["order_no"], &out["status"]),
                        (&json!("MO-25-010"), &json!("NOT_STARTED"))
                    );
                }
                _ => {}
            }
        }
        assert_eq!(katana.questions(), asked, "{era:?}");
        assert_eq!(
            katana.writes(),
            [
                "POST /purchase_orders",
                "POST /purchase_order_receive",
                "POST /manufacturing_orders",
                "PATCH /manufacturing_orders/2001"
            ],
            "{era:?}"
        );

        // What Katana received, and what it now holds.
        let bodies: Vec<Value> = katana
            .sandbox
            .mutations()
            .into_iter()
            .map(|r| r.body)
            .collect();
        assert_eq!(bodies[0]["entity_type"], "regular");
        assert_eq!(bodies[0]["order_no"], "PO-25-010");
        assert_eq!(bodies[0]["additional_info"], "Rush order");
        assert!(
            bodies[0]["order_created_date"]
                .as_str()
                .unwrap()
                .ends_with('Z')
        );
        assert!(bodies[0].get("status").is_none() && bodies[0].get("currency").is_none());
        assert!(bodies[1][0]["received_date"].is_string());
        assert_eq!(bodies[3], json!({"status": "DONE"}));

        let po = katana
            .sandbox
            .purchase_order(seed::NEXT_PURCHASE_ORDER_ID)
            .unwrap();
        assert_eq!(
            (po.order_no.as_str(), po.status, po.supplier_id, po.total),
            (
                "PO-25-010",
                PurchaseOrderStatus::NotReceived,
                seed::SUPPLIER_USD,
                350.0
            )
        );
        assert_eq!(po.purchase_order_rows.len(), 3);
        let mo = katana
            .sandbox
            .manufacturing_order(seed::NEXT_MANUFACTURING_ORDER_ID)
            .unwrap();
        assert_eq!(
            (
                mo.order_no.as_str(),
                mo.variant_id,
                mo.planned_quantity,
                mo.status
            ),
            (
                "MO-25-010",
                seed::KNIFE_WALNUT,
                5.0,
                ManufacturingOrderStatus::NotStarted
            )
        );
        assert_eq!(
            katana
                .sandbox
                .manufacturing_order(seed::MO_NOT_STARTED)
                .unwrap()
                .status,
            ManufacturingOrderStatus::Done
        );
    }
}

#[tokio::test]
async fn declined_and_cancelled_confirmations_change_nothing_and_say_who_stopped_them() {
    for era in ERAS {
        for (answer, result, ending) in [
            (Elicitation::Accept(false), "declined", "declined by user"),
            (Elicitation::Decline, "cancelled", "cancelled by user"),
            (Elicitation::Cancel, "cancelled", "cancelled by user"),
        ] {
            let katana = start(era, answer).await;
            let mut asked = Vec::new();
            for (tool, args, question) in the_four(true) {
                let out = katana.host.ok(tool, args).await;
                assert_eq!(
                    (&out["is_preview"], &out["result"]),
                    (&json!(true), &json!(result)),
                    "{era:?} {answer:?} {tool}"
                );
                assert_eq!(
                    (&out["confirmed"], &out["success"], &out["status_code"]),
                    (&json!(false), &json!(false), &Value::Null),
                    "the StatusPro record's fields: nothing confirmed, nothing sent"
                );
                let message = out["message"].as_str().unwrap();
                assert!(
                    message.ends_with(ending),
                    "{era:?} {answer:?} {tool}: {message}"
                );
                asked.push(question.to_string());
            }
            assert_eq!(katana.questions(), asked, "{era:?} {answer:?}");
            assert!(
                katana.writes().is_empty(),
                "{era:?} {answer:?}: nothing may be written"
            );
            assert_eq!(
                katana
                    .sandbox
                    .manufacturing_order(seed::MO_NOT_STARTED)
                    .unwrap()
                    .status,
                ManufacturingOrderStatus::NotStarted
            );
        }
    }
}

#[tokio::test]
async fn a_client_that_cannot_confirm_gets_cancelled_and_how_to_allow_it() {
    let katana = start(Era::Legacy, Elicitation::Unsupported).await;
    for (tool, args, _) in the_four(true) {
        let out = katana.host.ok(tool, args).await;
        assert_eq!(
            (&out["is_preview"], &out["result"]),
            (&json!(true), &json!("cancelled")),
            "{tool}"
        );
        let warnings = strings(&out["warnings"]);
        assert!(
            warnings
                .last()
                .unwrap()
                .contains(r#"confirmation = "trust-confirm-flag""#),
            "{tool}: {warnings:?}"
        );
    }
    assert!(katana.writes().is_empty());

    // With the operator's opt-in, `confirm: true` is the approval.
    let katana = Setup::new()
        .config("\n[host]\nconfirmation = \"trust-confirm-flag\"\n")
        .start()
        .await;
    let (tool, args, _) = the_four(true).remove(2);
    let out = katana.host.ok(tool, args).await;
    assert_eq!(out["result"], "confirmed");
    assert_eq!(katana.writes(), ["POST /manufacturing_orders"]);
}

#[tokio::test]
async fn receiving_part_of_a_row_then_the_rest_moves_the_order_to_received() {
    let katana = start(Era::Legacy, Elicitation::Accept(true)).await;
    let host = &katana.host;
    let receive =
        |items: Value| json!({"order_id": seed::PO_NOT_RECEIVED, "items": items, "confirm": true});
    let stock = |variant| katana.sandbox.stock(variant, seed::LOCATION_MAIN);

    // 50 of row 7101's 200: the row keeps 150 open, a received row of 50
    // is added, and the order is partly received.
    let out = host
        .ok(
            "receive_purchase_order",
            receive(json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 50}])),
        )
        .await;
    assert_eq!(
        (
            &out["order_number"],
            &out["items_received"],
            &out["status"],
            &out["result"]
        ),
        (
            &json!("PO-25-001"),
            &json!(1),
            &json!("PARTIALLY_RECEIVED"),
            &json!("confirmed")
        )
    );
    assert!(strings(&out["next_actions"])[0].contains("still be open"));
    let po = katana
        .sandbox
        .purchase_order(seed::PO_NOT_RECEIVED)
        .unwrap();
    assert_eq!(po.status, PurchaseOrderStatus::PartiallyReceived);
    let rows: Vec<(i64, f64, bool)> = po
        .purchase_order_rows
        .iter()
        .map(|r| (r.id, r.quantity, r.received_date.is_some()))
        .collect();
    assert_eq!(
        rows,
        [
            (seed::PO1_STEEL_ROW, 150.0, false),
            (seed::PO1_RIVET_ROW, 1000.0, false),
            (seed::NEXT_PURCHASE_ORDER_ROW_ID, 50.0, true)
        ]
    );
    assert_eq!(stock(seed::STEEL_BLANK), 550.0);

    // The rest of the row (same id) and the other row: fully received.
    let out = host
        .ok(
            "receive_purchase_order",
            receive(
                json!([{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 150},
                           {"purchase_order_row_id": seed::PO1_RIVET_ROW, "quantity": 1000}]),
            ),
        )
        .await;
    assert_eq!(
        (&out["items_received"], &out["status"]),
        (&json!(2), &json!("RECEIVED"))
    );
    assert!(strings(&out["next_actions"])[0].contains("fully received"));
    let po = katana
        .sandbox
        .purchase_order(seed::PO_NOT_RECEIVED)
        .unwrap();
    assert_eq!(po.status, PurchaseOrderStatus::Received);
    assert!(
        po.purchase_order_rows
            .iter()
            .all(|r| r.received_date.is_some())
    );
    assert_eq!(
        (stock(seed::STEEL_BLANK), stock(seed::BRASS_RIVET)),
        (700.0, 6000.0)
    );
    assert_eq!(
        katana.questions(),
        [
            "Receive 1 items for purchase order PO-25-001 and update inventory?",
            "Receive 2 items for purchase order PO-25-001 and update inventory?"
        ]
    );

    // Receiving again, or more than is open, is refused before asking.
    for (order, row, quantity, problem) in [
        (
            seed::PO_NOT_RECEIVED,
            seed::PO1_STEEL_ROW,
            1,
            "already received",
        ),
        (
            seed::PO_SAME_VARIANT_TWICE,
            7103,
            301,
            "receiving 301 but only 300 are open",
        ),
    ] {
        let issue = host
            .tool_error(
                "receive_purchase_order",
                json!({"order_id": order, "confirm": true,
                       "items": [{"purchase_order_row_id": row, "quantity": quantity}]}),
            )
            .await;
        assert_eq!(issue["code"], "VALIDATION_ERROR");
        assert!(
            issue["message"].as_str().unwrap().contains(problem),
            "{issue}"
        );
        assert!(issue["hint"].as_str().unwrap().contains("open"));
    }
    assert_eq!(katana.questions().len(), 2);
    assert_eq!(katana.writes().len(), 2);
}

#[tokio::test]
async fn completing_a_manufacturing_order_adds_its_stock_once() {
    let katana = start(Era::Legacy, Elicitation::Accept(true)).await;
    let host = &katana.host;
    let stock = |variant| katana.sandbox.stock(variant, seed::LOCATION_MAIN);
    let complete =
        |id: i64| json!({"order_id": id, "order_type": "manufacturing", "confirm": true});

    let out = host
        .ok("fulfill_order", complete(seed::MO_NOT_STARTED))
        .await;
    assert_eq!(
        (
            &out["order_number"],
            &out["status"],
            &out["inventory_updates"],
            &out["is_preview"]
        ),
        (
            &json!("MO-25-001"),
            &json!("DONE"),
            &json!(["+20 KNF-8IN-BLK @1"]),
            &json!(false)
        )
    );
    let mo = katana
        .sandbox
        .manufacturing_order(seed::MO_NOT_STARTED)
        .unwrap();
    assert_eq!(
        (mo.status, mo.actual_quantity),
        (ManufacturingOrderStatus::Done, Some(20.0))
    );
    // 40 knives + 20; the recipe (1 blank, 2 scales, 3 rivets each) consumed.
    assert_eq!(stock(seed::KNIFE_BLACK), 60.0);
    assert_eq!(
        (
            stock(seed::STEEL_BLANK),
            stock(seed::WALNUT_SCALE),
            stock(seed::BRASS_RIVET)
        ),
        (480.0, 760.0, 4940.0)
    );

    // Done already: reported, not asked, not written.
    let out = host
        .ok("fulfill_order", complete(seed::MO_NOT_STARTED))
        .await;
    assert_eq!(
        (
            &out["result"],
            &out["is_preview"],
            &out["inventory_updates"]
        ),
        (&json!("unchanged"), &json!(false), &json!([]))
    );
    assert!(strings(&out["warnings"])[0].contains("already completed"));
    let out = host.ok("fulfill_order", complete(seed::MO_DONE)).await;
    assert_eq!(out["result"], "unchanged");
    assert_eq!(katana.questions().len(), 1);
    assert_eq!(katana.writes(), ["PATCH /manufacturing_orders/2001"]);
    assert_eq!(stock(seed::KNIFE_BLACK), 60.0);

    // A new order, made and completed: its own stock arrives. Without an
    // order_no, the number the preview showed is the one created.
    let args = json!({"variant_id": seed::KNIFE_WALNUT, "planned_quantity": 4,
                      "location_id": seed::LOCATION_MAIN});
    let preview = host.ok("create_manufacturing_order", args.clone()).await;
    let mut confirmed = args;
    confirmed["confirm"] = json!(true);
    let created = host.ok("create_manufacturing_order", confirmed).await;
    assert_eq!(created["order_no"], preview["order_no"]);
    assert_eq!(
        katana
            .sandbox
            .manufacturing_order(created["id"].as_i64().unwrap())
            .unwrap()
            .order_no,
        preview["order_no"].as_str().unwrap()
    );
    let id = created["id"].as_i64().unwrap();
    let out = host.ok("fulfill_order", complete(id)).await;
    let number = created["order_no"].as_str().unwrap();
    assert_eq!(out["order_number"], number);
    assert_eq!(out["inventory_updates"], json!(["+4 KNF-8IN-WAL @1"]));
    assert_eq!(stock(seed::KNIFE_WALNUT), 29.0);
    assert_eq!(
        katana.questions().last().unwrap(),
        &format!("Mark manufacturing order {number} as DONE and update inventory?")
    );
}

#[tokio::test]
async fn fulfilling_a_sales_order_delivers_every_row_and_takes_its_stock() {
    let katana = start(Era::Legacy, Elicitation::Accept(true)).await;
    let host = &katana.host;
    let ship = |id: i64| json!({"order_id": id, "order_type": "sales", "confirm": true});

    let out = host.ok("fulfill_order", ship(seed::SO_NOT_SHIPPED)).await;
    assert_eq!(
        (
            &out["order_number"],
            &out["status"],
            &out["fulfillment_id"],
            &out["result"]
        ),
        (
            &json!("SO-25-001"),
            &json!("DELIVERED"),
            &json!(seed::NEXT_FULFILLMENT_ID),
            &json!("confirmed")
        )
    );
    assert_eq!(out["inventory_updates"], json!(["-2 KNF-8IN-BLK @1"]));
    assert_eq!(
        katana.questions(),
        ["Create fulfillment for sales order SO-25-001 and update inventory?"]
    );
    let body = &katana.sandbox.mutations()[0].body;
    assert_eq!(
        body,
        &json!({"sales_order_id": seed::SO_NOT_SHIPPED, "status": "DELIVERED",
                "sales_order_fulfillment_rows": [{"sales_order_row_id": seed::SO1_ROW, "quantity": 2.0}]})
    );
    assert_eq!(
        katana
            .sandbox
            .sales_order(seed::SO_NOT_SHIPPED)
            .unwrap()
            .status,
        SalesOrderStatus::Delivered
    );
    assert_eq!(
        katana.sandbox.stock(seed::KNIFE_BLACK, seed::LOCATION_MAIN),
        38.0
    );

    // Anything but NOT_SHIPPED is refused before asking: packed, delivered,
    // and the order just delivered.
    for id in [seed::SO_PACKED, seed::SO_DELIVERED, seed::SO_NOT_SHIPPED] {
        let issue = host.tool_error("fulfill_order", ship(id)).await;
        assert_eq!(issue["code"], "CONFLICT", "{id}");
        assert!(
            issue["message"]
                .as_str()
                .unwrap()
                .contains("only NOT_SHIPPED")
        );
    }
    assert_eq!(katana.questions().len(), 1);
    assert_eq!(katana.writes().len(), 1);
}

#[tokio::test]
async fn line_items_sent_as_a_json_string_are_parsed_then_checked() {
    let katana = start(Era::Legacy, Elicitation::Accept(true)).await;
    let host = &katana.host;
    let mut args = purchase_order(true);
    args["items"] = json!(args["items"].to_string());
    args["currency"] = json!("EUR");
    let out = host.ok("create_purchase_order", args).await;
    assert_eq!(
        (&out["result"], &out["total_cost"], &out["currency"]),
        (&json!("confirmed"), &json!(350.0), &json!("EUR"))
    );
    let po = katana
        .sandbox
        .purchase_order(seed::NEXT_PURCHASE_ORDER_ID)
        .unwrap();
    assert_eq!(po.purchase_order_rows.len(), 3);

    // A string skips the host's schema check, so the tool makes it.
    for (items, problem) in [
        (
            r#"[{"variant_id": 5101, "quantity": 0, "price_per_unit": 1}]"#,
            "quantity must be greater than 0",
        ),
        (r#"[{"variant_id": 5101, "quantity": 1}]"#, "price_per_unit"),
        ("[]", "items is empty"),
        ("not json", "not a JSON array"),
    ] {
        let mut args = purchase_order(true);
        args["items"] = json!(items);
        let issue = host.tool_error("create_purchase_order", args).await;
        assert_eq!(issue["code"], "VALIDATION_ERROR", "{items}");
        assert!(
            issue["message"].as_str().unwrap().contains(problem),
            "{items}: {issue}"
        );
    }
    assert_eq!(katana.questions().len(), 1);
    assert_eq!(katana.writes().len(), 1);
}

#[tokio::test]
async fn a_receipt_whose_new_status_cannot_be_read_is_still_reported_as_made() {
    // Two requests a minute: the order's check and the receipt get through,
    // the read of the new status is rate limited.
    let katana = Setup::new()
        .sandbox(katana_sandbox::SandboxConfig {
            rate_limit: 2,
            ..katana_sandbox::SandboxConfig::default()
        })
        .elicitation(Elicitation::Accept(true))
        .start()
        .await;
    let out = katana
        .host
        .ok(
            "receive_purchase_order",
            json!({"order_id": seed::PO_NOT_RECEIVED, "confirm": true,
                   "items": [{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 200}]}),
        )
        .await;
    assert_eq!(
        (&out["result"], &out["is_preview"], &out["status"]),
        (&json!("confirmed"), &json!(false), &json!("UNKNOWN"))
    );
    assert!(strings(&out["warnings"])[0].contains("do not receive them again"));
    assert_eq!(
        katana.requests(),
        [
            "GET /purchase_orders/7001",
            "POST /purchase_order_receive",
            "GET /purchase_orders/7001"
        ]
    );
    assert_eq!(
        katana.sandbox.stock(seed::STEEL_BLANK, seed::LOCATION_MAIN),
        700.0
    );
}

/// What a model does with nothing but the tools' answers: create a
/// purchase order, look its rows up by the number on the delivery note,
/// receive one row by the id it found, and read the order again.
#[tokio::test]
async fn a_purchase_order_is_created_looked_up_and_received_from_tool_outputs_alone() {
    let katana = start(Era::Legacy, Elicitation::Accept(true)).await;
    let host = &katana.host;

    let created = host.ok("create_purchase_order", purchase_order(true)).await;
    assert_eq!(created["result"], "confirmed");
    let rows = created["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r["id"].is_u64() && r["received"] == json!(false)),
        "{rows:?}"
    );
    assert_eq!(
        rows.iter()
            .map(|r| r["sku"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["STL-BLANK-8", "RIV-BRASS-3MM", "STL-BLANK-8"]
    );

    // The delivery note names the order by number.
    let found = host
        .ok(
            "find_order",
            json!({"order_type": "purchase", "order_number": created["order_number"]}),
        )
        .await;
    assert_eq!(found["order_id"], created["id"]);
    assert_eq!(found["rows"], created["rows"], "the same rows and ids");

    // The rivets arrived: receive their row, by the id find_order gave.
    let rivets = found["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["sku"] == "RIV-BRASS-3MM")
        .unwrap()
        .clone();
    let received = host
        .ok(
            "receive_purchase_order",
            json!({"order_id": found["order_id"], "confirm": true,
                   "items": [{"purchase_order_row_id": rivets["id"], "quantity": rivets["quantity"]}]}),
        )
        .await;
    assert_eq!(
        (&received["result"], &received["status"]),
        (&json!("confirmed"), &json!("PARTIALLY_RECEIVED"))
    );

    let after = host
        .ok(
            "find_order",
            json!({"order_type": "purchase", "order_id": created["id"]}),
        )
        .await;
    let state: Vec<(&str, bool)> = after["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["sku"].as_str().unwrap(), r["received"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        state,
        [
            ("STL-BLANK-8", false),
            ("RIV-BRASS-3MM", true),
            ("STL-BLANK-8", false)
        ]
    );
    let po = katana
        .sandbox
        .purchase_order(seed::NEXT_PURCHASE_ORDER_ID)
        .unwrap();
    assert_eq!(po.status, PurchaseOrderStatus::PartiallyReceived);
    assert_eq!(
        katana.writes(),
        ["POST /purchase_orders", "POST /purchase_order_receive"]
    );
}
