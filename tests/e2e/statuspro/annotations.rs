//! The annotations tell the truth: each tool is called twice with the same
//! arguments (mutations confirmed), and what the sandbox holds before,
//! between and after is held against the tool's listed hints.
//!
//! | hint | what two identical calls must do |
//! |---|---|
//! | `readOnlyHint` | no request but `GET`, no order changes |
//! | `idempotentHint` | the second call changes nothing the first did not |
//! | `destructiveHint: true` | the first call overwrites something that was there |
//! | `destructiveHint: false` | nothing that was there is overwritten or deleted: history only grows |

use std::collections::BTreeMap;

use serde_json::{Value, json};
use statuspro_sandbox::seed;

use super::{Setup, StatusPro};
use crate::support::{Elicitation, hints};

/// Every order, by id, as JSON.
fn state(statuspro: &StatusPro) -> BTreeMap<i64, Value> {
    statuspro
        .sandbox
        .orders()
        .into_iter()
        .map(|o| (o.id, serde_json::to_value(o).unwrap()))
        .collect()
}

/// What `after` overwrote or deleted of `before`: fields that changed
/// value (the history aside, and the progress timeline, which follows the
/// status), history events changed or gone, orders gone.
fn overwritten(before: &BTreeMap<i64, Value>, after: &BTreeMap<i64, Value>) -> Vec<String> {
    let mut changes = Vec::new();
    for (id, old) in before {
        let Some(new) = after.get(id) else {
            changes.push(format!("order {id} deleted"));
            continue;
        };
        for (field, value) in old.as_object().unwrap() {
            if field == "history" || field == "public_progress_timeline" {
                continue;
            }
            if new[field] != *value {
                changes.push(format!("order {id}: {field} {value} -> {}", new[field]));
            }
        }
        let (old_history, new_history) = (
            old["history"].as_array().unwrap(),
            new["history"].as_array().unwrap(),
        );
        if !new_history.starts_with(old_history) {
            changes.push(format!("order {id}: history rewritten"));
        }
    }
    changes
}

#[tokio::test]
async fn every_hint_matches_what_two_identical_calls_do() {
    let statuspro = Setup::new()
        .elicitation(Elicitation::Accept(true))
        .start()
        .await;
    let host = &statuspro.host;
    let tools = host.tools().await;
    let qc = seed::order_in_status("st000006").unwrap();
    let received = seed::order_in_status("st000001").unwrap();
    let unset = seed::order_without_status();
    let dated = seed::order_without_due_date();
    let calls = [
        ("list_orders", json!({"per_page": 20})),
        ("get_order", json!({"order_id": qc})),
        (
            "lookup_order",
            json!({"number": "1001", "email": "jon@example.com"}),
        ),
        ("list_statuses", json!({})),
        ("get_viable_statuses", json!({"order_id": qc})),
        (
            "update_order_status",
            json!({"order_id": qc, "status_code": "st000002", "confirm": true}),
        ),
        (
            "add_order_comment",
            json!({"order_id": dated, "comment": "Called the customer.", "confirm": true}),
        ),
        (
            "update_order_due_date",
            json!({"order_id": dated, "due_date": "2026-05-01", "confirm": true}),
        ),
        (
            "bulk_update_order_status",
            json!({"order_ids": [received, unset], "status_code": "st000005", "confirm": true}),
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
        statuspro.sandbox.clear_requests();
        let before = state(&statuspro);
        host.call(name, args.clone()).await.expect("answered");
        statuspro.sandbox.wait_for_bulk_jobs().await;
        let between = state(&statuspro);
        host.call(name, args).await.expect("answered");
        statuspro.sandbox.wait_for_bulk_jobs().await;
        let after = state(&statuspro);

        if read_only {
            assert!(
                statuspro.sandbox.mutations().is_empty(),
                "{name} is read-only but sent a change"
            );
            assert_eq!(before, after, "{name} is read-only");
        } else {
            assert_ne!(
                before, between,
                "{name}: the confirmed call changes the order"
            );
        }
        if idempotent {
            assert_eq!(
                between, after,
                "{name} is idempotent, but the second identical call changed the orders"
            );
        }
        let overwrites = overwritten(&before, &after);
        if destructive {
            assert!(
                !overwritten(&before, &between).is_empty(),
                "{name} is destructive but overwrote nothing"
            );
        } else {
            assert!(
                overwrites.is_empty(),
                "{name} is not destructive but overwrote: {overwrites:?}"
            );
        }
    }
}
