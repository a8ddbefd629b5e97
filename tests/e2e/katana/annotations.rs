//! The annotations tell the truth: each tool is called twice with the same
//! arguments (mutations confirmed), and what the workshop holds before,
//! between and after (orders, fulfillments, stock) is held against the
//! tool's listed hints.
//!
//! | hint | what two identical calls must do |
//! |---|---|
//! | `readOnlyHint` | no request but `GET`, nothing changes |
//! | `idempotentHint` | the second call changes nothing the first did not |
//! | `destructiveHint: true` | the first call overwrites something that was there |
//! | `destructiveHint: false` | nothing that was there is overwritten or deleted: records are only added |

use std::collections::BTreeMap;

use katana_sandbox::seed;
use serde_json::{Value, json};

use super::{Katana, Setup};
use crate::support::{Elicitation, hints};

/// Every record, keyed `kind/id`, and every stock level, as JSON.
fn state(katana: &Katana) -> BTreeMap<String, Value> {
    let sandbox = &katana.sandbox;
    let mut all = BTreeMap::new();
    let mut add = |kind: &str, id: i64, value: Value| {
        all.insert(format!("{kind}/{id}"), value);
    };
    for o in sandbox.purchase_orders() {
        add("purchase_order", o.id, serde_json::to_value(o).unwrap());
    }
    for o in sandbox.manufacturing_orders() {
        add(
            "manufacturing_order",
            o.id,
            serde_json::to_value(o).unwrap(),
        );
    }
    for o in sandbox.sales_orders() {
        add("sales_order", o.id, serde_json::to_value(o).unwrap());
    }
    for f in sandbox.fulfillments() {
        add("fulfillment", f.id, serde_json::to_value(f).unwrap());
    }
    for ((variant, location), level) in sandbox.stock_levels() {
        all.insert(format!("stock/{variant}@{location}"), json!(level));
    }
    all
}

/// The records and stock levels of `before` that `after` changed or lost.
fn overwritten(before: &BTreeMap<String, Value>, after: &BTreeMap<String, Value>) -> Vec<String> {
    before
        .iter()
        .filter(|(key, value)| after.get(*key) != Some(value))
        .map(|(key, _)| key.clone())
        .collect()
}

#[tokio::test]
async fn every_hint_matches_what_two_identical_calls_do() {
    let katana = Setup::new()
        .elicitation(Elicitation::Accept(true))
        .start()
        .await;
    let host = &katana.host;
    let tools = host.tools().await;
    let calls = [
        ("search_items", json!({"query": "knife"})),
        (
            "verify_order_document",
            json!({"order_id": seed::PO_NOT_RECEIVED,
                   "document_items": [{"sku": "STL-BLANK-8", "quantity": 200, "unit_price": 2.5}]}),
        ),
        (
            "find_order",
            json!({"order_type": "purchase", "order_number": "PO-25-001"}),
        ),
        (
            "create_purchase_order",
            json!({"supplier_id": seed::SUPPLIER_USD, "location_id": seed::LOCATION_MAIN,
                   "order_number": "PO-25-020", "confirm": true,
                   "items": [{"variant_id": seed::STEEL_BLANK, "quantity": 10, "price_per_unit": 2.5}]}),
        ),
        (
            "create_manufacturing_order",
            json!({"variant_id": seed::KNIFE_BLACK, "planned_quantity": 3,
                   "location_id": seed::LOCATION_MAIN, "order_no": "MO-25-020", "confirm": true}),
        ),
        (
            "receive_purchase_order",
            json!({"order_id": seed::PO_NOT_RECEIVED, "confirm": true,
                   "items": [{"purchase_order_row_id": seed::PO1_STEEL_ROW, "quantity": 50}]}),
        ),
        (
            "fulfill_order",
            json!({"order_id": seed::SO_NOT_SHIPPED, "order_type": "sales", "confirm": true}),
        ),
    ];
    assert_eq!(calls.len(), tools.len(), "every tool is checked");

    for (name, args) in calls {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let (read_only, destructive, idempotent, _) = hints(tool);
        let (read_only, destructive, idempotent) = (
            read_only.unwrap(),
            destructive.unwrap(),
            idempotent.unwrap(),
        );
        katana.sandbox.clear_requests();
        let before = state(&katana);
        host.call(name, args.clone()).await.expect("answered");
        let between = state(&katana);
        host.call(name, args).await.expect("answered");
        let after = state(&katana);

        if read_only {
            assert!(
                katana.writes().is_empty(),
                "{name} is read-only but sent {:?}",
                katana.writes()
            );
            assert_eq!(before, after, "{name} is read-only");
        } else {
            assert_ne!(before, between, "{name}: the confirmed call changes Katana");
        }
        if idempotent {
            assert_eq!(
                between, after,
                "{name} is idempotent, but the second identical call changed Katana"
            );
        }
        if destructive {
            assert!(
                !overwritten(&before, &between).is_empty(),
                "{name} is destructive but overwrote nothing"
            );
        } else {
            let overwrites = overwritten(&before, &after);
            assert!(
                overwrites.is_empty(),
                "{name} is not destructive but overwrote: {overwrites:?}"
            );
        }
    }
}
