//! Each error code, from what really happened upstream: unknown orders, a
//! change Katana refuses (its `details` become the hint), the rate limit
//! (with the one retry the contract allows), a refused key, server errors
//! forced with the sandbox's fault header (added by the host like any
//! operator header), and a method the operator did not allow.

use std::time::Duration;

use katana_sandbox::model::ManufacturingOrderStatus;
use katana_sandbox::{SandboxConfig, seed};
use serde_json::json;

use super::{Katana, Setup};
use crate::support::Elicitation;

#[tokio::test]
async fn unknown_orders_are_not_found_with_a_hint_naming_them() {
    let katana = Katana::start().await;
    let unknown = seed::UNKNOWN_ID;
    for (tool, args, thing) in [
        (
            "verify_order_document",
            json!({"order_id": unknown, "document_items": [{"sku": "STL-BLANK-8", "quantity": 1}]}),
            "purchase order",
        ),
        (
            "receive_purchase_order",
            json!({"order_id": unknown, "items": [{"purchase_order_row_id": 7101, "quantity": 1}]}),
            "purchase order",
        ),
        (
            "fulfill_order",
            json!({"order_id": unknown, "order_type": "manufacturing"}),
            "manufacturing order",
        ),
        (
            "fulfill_order",
            json!({"order_id": unknown, "order_type": "sales"}),
            "sales order",
        ),
        (
            "find_order",
            json!({"order_id": unknown, "order_type": "purchase"}),
            "purchase order",
        ),
    ] {
        let issue = katana.host.tool_error(tool, args).await;
        assert_eq!(issue["code"], "NOT_FOUND", "{tool}");
        assert_eq!(issue["message"], "Not found", "{tool}: Katana's message");
        let hint = issue["hint"].as_str().unwrap();
        assert!(
            hint.contains(&format!("{thing} {unknown}")),
            "{tool}: {hint}"
        );
        assert!(
            hint.contains("find_order") && !hint.contains("search_items"),
            "{tool}: an order is found by its number, not by item search: {hint}"
        );
    }

    // By number: Katana's list has no such order.
    let issue = katana
        .host
        .tool_error(
            "find_order",
            json!({"order_type": "sales", "order_number": "SO-99-999"}),
        )
        .await;
    assert_eq!(issue["code"], "NOT_FOUND");
    assert!(
        issue["message"].as_str().unwrap().contains("SO-99-999"),
        "{issue}"
    );
    assert!(issue["hint"].as_str().unwrap().contains("order_id"));
    assert!(katana.writes().is_empty());
}

#[tokio::test]
async fn a_change_katana_refuses_is_a_validation_error_hinted_by_its_first_detail() {
    let katana = Setup::new()
        .elicitation(Elicitation::Accept(true))
        .start()
        .await;
    let host = &katana.host;
    // A taken order number and an unknown supplier: Katana lists both; the
    // message is its own, the hint its first detail.
    let issue = host
        .tool_error(
            "create_purchase_order",
            json!({"supplier_id": 4999, "location_id": seed::LOCATION_MAIN, "order_number": "PO-25-001",
                   "items": [{"variant_id": seed::STEEL_BLANK, "quantity": 1, "price_per_unit": 2.5}],
                   "confirm": true}),
        )
        .await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert_eq!(
        issue["message"],
        "Purchase order number PO-25-001 already exists."
    );
    assert_eq!(
        issue["hint"],
        "order_no: Purchase order number PO-25-001 already exists."
    );
    let sent = &katana.sandbox.mutations()[0].body;
    assert_eq!(sent["supplier_id"], 4999, "the request reached Katana");

    // A location that does not make things.
    let issue = host
        .tool_error(
            "create_manufacturing_order",
            json!({"variant_id": seed::KNIFE_BLACK, "planned_quantity": 2,
                   "location_id": seed::LOCATION_RETAIL, "order_no": "MO-25-011", "confirm": true}),
        )
        .await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert!(
        issue["hint"].as_str().unwrap().starts_with("location_id: "),
        "{issue}"
    );

    // Arguments that break the schema never reach the component.
    let issue = host
        .tool_error(
            "create_purchase_order",
            json!({"supplier_id": 4001, "location_id": 1, "order_number": "PO-25-012",
                   "items": [{"variant_id": 5101, "quantity": 0, "price_per_unit": 1}]}),
        )
        .await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert!(
        issue["message"]
            .as_str()
            .unwrap()
            .contains("items.0.quantity"),
        "{issue}"
    );
    let issue = host
        .tool_error("search_items", json!({"query": "   "}))
        .await;
    assert_eq!(
        (&issue["code"], &issue["message"]),
        (&json!("VALIDATION_ERROR"), &json!("query is blank"))
    );
    assert!(
        katana
            .sandbox
            .purchase_order(seed::NEXT_PURCHASE_ORDER_ID)
            .is_none()
    );
    assert_eq!(katana.writes().len(), 2);
}

#[tokio::test]
async fn the_rate_limit_gives_retry_after_ms_and_a_long_wait_is_not_retried() {
    let katana = Setup::new()
        .sandbox(SandboxConfig {
            rate_limit: 2,
            ..SandboxConfig::default()
        })
        .start()
        .await;
    let host = &katana.host;
    host.ok("search_items", json!({"query": "knife"})).await;
    host.ok("search_items", json!({"query": "walnut"})).await;
    // Two requests made: the limit is spent.
    let issue = host
        .tool_error(
            "verify_order_document",
            json!({"order_id": seed::PO_NOT_RECEIVED,
            "document_items": [{"sku": "STL-BLANK-8", "quantity": 200}]}),
        )
        .await;
    assert_eq!(issue["code"], "RATE_LIMIT");
    assert_eq!(issue["message"], "Too Many Requests");
    let retry = issue["retry_after_ms"].as_u64().expect("retry_after_ms");
    assert!(
        (5_001..=60_000).contains(&retry) && retry % 1000 == 0,
        "Retry-After seconds × 1000, longer than the tool waits: {retry}"
    );
    assert_eq!(
        katana.requests().len(),
        3,
        "no retry: the wait does not fit the call"
    );

    katana.sandbox.reset_rate_limits();
    host.ok("search_items", json!({"query": "knife"})).await;
}

#[tokio::test]
async fn a_short_rate_limit_wait_is_retried_once_then_reported() {
    // The fault answers every request 429 with `Retry-After: 1`.
    let katana = Setup::new().fault("429").start().await;
    let issue = katana
        .host
        .tool_error("search_items", json!({"query": "knife"}))
        .await;
    assert_eq!(issue["code"], "RATE_LIMIT");
    assert_eq!(issue["retry_after_ms"], 1000);
    let logged = katana.sandbox.requests();
    assert_eq!(logged.len(), 2, "one try and one retry, no more");
    assert!(logged.iter().all(|r| r.fault.as_deref() == Some("429")));
}

/// The retry clock leaves out the time the user took to confirm, as the
/// host's call deadline does. Timeline: the two reads of `fulfill_order`
/// spend the sandbox's limit of 2 requests per 4 s window; the user takes
/// 1 s to say yes (the deliberate pause under test, longer than the
/// 0.5 s the 3.5 s retry deadline leaves beside a 3 s wait); the `PATCH`
/// gets a 429 with `Retry-After: 3` (the window's rest, rounded up); the
/// retry, 3 s later, falls after the window and succeeds. Counting the
/// pause, the retry would end past the deadline and the call would fail.
#[tokio::test]
async fn a_write_rate_limited_after_a_slow_confirmation_is_retried_once() {
    let katana = Setup::new()
        .sandbox(SandboxConfig {
            rate_limit: 2,
            rate_window: Duration::from_secs(4),
            ..SandboxConfig::default()
        })
        .elicitation(Elicitation::AcceptAfter(Duration::from_secs(1)))
        .setting("retry_deadline_ms", "3500")
        .start()
        .await;
    let out = katana
        .host
        .ok(
            "fulfill_order",
            json!({"order_id": seed::MO_NOT_STARTED, "order_type": "manufacturing",
                   "confirm": true}),
        )
        .await;
    assert_eq!(
        (&out["result"], &out["status"]),
        (&json!("confirmed"), &json!("DONE"))
    );
    let path = format!("PATCH /manufacturing_orders/{}", seed::MO_NOT_STARTED);
    assert_eq!(
        katana.writes(),
        [path.clone(), path],
        "the write, refused with 429, and its one retry"
    );
    assert_eq!(
        katana
            .sandbox
            .manufacturing_order(seed::MO_NOT_STARTED)
            .unwrap()
            .status,
        ManufacturingOrderStatus::Done
    );
    katana
        .host
        .wait_for_stderr("retrying once in 3000 ms")
        .await;
}

#[tokio::test]
async fn a_refused_api_key_is_permission_denied() {
    let katana = Setup::new().api_key("not-the-key").start().await;
    let issue = katana
        .host
        .tool_error("search_items", json!({"query": "knife"}))
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED");
    assert_eq!(issue["message"], "Unauthorized");
    assert!(issue["hint"].as_str().unwrap().contains("KATANA_API_KEY"));
    assert_eq!(katana.requests(), ["GET /variants"]);
}

#[tokio::test]
async fn server_errors_are_transient_and_only_gateway_errors_on_reads_are_retried() {
    for (fault, tries) in [("500", 1), ("503", 2)] {
        let katana = Setup::new()
            .elicitation(Elicitation::Accept(true))
            .fault(fault)
            .start()
            .await;
        let issue = katana
            .host
            .tool_error(
                "fulfill_order",
                json!({"order_id": seed::MO_NOT_STARTED, "order_type": "manufacturing"}),
            )
            .await;
        assert_eq!(issue["code"], "TRANSIENT", "{fault}");
        assert!(issue["hint"].as_str().unwrap().contains("temporary"));
        let logged = katana.sandbox.requests();
        assert_eq!(logged.len(), tries, "{fault}");
        assert_eq!(
            logged[0].fault.as_deref(),
            Some(fault),
            "the host added the header"
        );

        // A confirmed change that got a 5xx is not retried, and the hint
        // says its outcome is unknown.
        katana.sandbox.clear_requests();
        let issue = katana
            .host
            .tool_error(
                "create_manufacturing_order",
                json!({"variant_id": seed::KNIFE_BLACK, "planned_quantity": 2,
                       "location_id": seed::LOCATION_MAIN, "order_no": "MO-25-012", "confirm": true}),
            )
            .await;
        assert_eq!(issue["code"], "TRANSIENT", "{fault}");
        assert!(
            issue["hint"]
                .as_str()
                .unwrap()
                .contains("may or may not have been made"),
            "{issue}"
        );
        assert_eq!(katana.writes(), ["POST /manufacturing_orders"], "{fault}");
    }
}

#[tokio::test]
async fn a_method_the_operator_did_not_allow_is_permission_denied_by_the_host() {
    let katana = Setup::new()
        .elicitation(Elicitation::Accept(true))
        .methods(&["GET", "POST"])
        .start()
        .await;
    let issue = katana
        .host
        .tool_error(
            "fulfill_order",
            json!({"order_id": seed::MO_NOT_STARTED, "order_type": "manufacturing", "confirm": true}),
        )
        .await;
    assert_eq!(issue["code"], "PERMISSION_DENIED");
    assert!(
        issue["message"].as_str().unwrap().contains("PATCH"),
        "{issue}"
    );
    assert!(katana.writes().is_empty(), "nothing left the host");
}
