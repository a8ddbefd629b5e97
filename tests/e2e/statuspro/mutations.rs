//! The four mutations' two-step flow, in both protocol eras, reported in
//! the vocabulary the Katana tools share (`is_preview`, `result`,
//! `message`, `warnings`, `next_actions`): a preview sends no change (the
//! sandbox's request log proves it), the user is asked with the tool's
//! exact question, only a yes lets the change out, the change is visible
//! through `get_order`, and bulk updates are checked order by order before
//! anyone is asked, answer first and apply after.

use serde_json::{Value, json};
use statuspro_sandbox::seed;

use super::{Setup, StatusPro};
use crate::support::{ERAS, Elicitation, Era};

/// A status change the seed allows: a Quality Check order to Shipped.
fn viable_change() -> (i64, &'static str) {
    (
        seed::order_with_viable_next("st000003").unwrap(),
        "st000003",
    )
}

/// One call of each mutation with `confirm`, and the question each asks.
fn the_four(confirm: bool) -> Vec<(&'static str, Value, String)> {
    let (id, code) = viable_change();
    let comment_on = seed::order_without_due_date();
    let bulk = [seed::order_without_status(), id];
    vec![
        (
            "update_order_status",
            json!({"order_id": id, "status_code": code, "comment": "Packed and labelled.", "confirm": confirm}),
            format!("Change order {id} status to {code}?"),
        ),
        (
            "add_order_comment",
            json!({"order_id": comment_on, "comment": "Customer called about gift wrap.", "public": true, "confirm": confirm}),
            format!("Add comment to order {comment_on}?"),
        ),
        (
            "update_order_due_date",
            json!({"order_id": comment_on, "due_date": "2026-04-02", "due_date_to": "2026-04-04", "confirm": confirm}),
            format!("Set due_date=2026-04-02 for order {comment_on}?"),
        ),
        (
            "bulk_update_order_status",
            json!({"order_ids": bulk, "status_code": "st000002", "confirm": confirm}),
            "Bulk-update 2 orders to status st000002?".to_string(),
        ),
    ]
}

async fn start(era: Era, elicitation: Elicitation) -> StatusPro {
    Setup::new().era(era).elicitation(elicitation).start().await
}

#[tokio::test]
async fn previews_echo_the_arguments_ask_nothing_and_send_no_change() {
    for era in ERAS {
        let statuspro = start(era, Elicitation::Accept(true)).await;
        let host = &statuspro.host;
        let mut previews = Vec::new();
        for (tool, args, _) in the_four(false) {
            let out = host.ok(tool, args).await;
            assert_eq!(
                (&out["is_preview"], &out["result"]),
                (&json!(true), &json!("preview")),
                "{era:?} {tool}"
            );
            assert_eq!(
                (&out["confirmed"], &out["success"], &out["status_code"]),
                (&json!(false), &json!(false), &Value::Null),
                "the StatusPro record's fields on a preview: {era:?} {tool}"
            );
            assert_eq!(out["preview"]["action"], tool);
            assert!(out["message"].as_str().unwrap().starts_with("Preview: "));
            assert!(
                out["next_actions"][0]
                    .as_str()
                    .unwrap()
                    .contains("confirm=true"),
                "{out}"
            );
            assert_eq!(out["warnings"], json!([]), "{tool}");
            previews.push(out["preview"].clone());
        }
        let (id, code) = viable_change();
        assert_eq!(
            previews[0],
            json!({"action": "update_order_status", "order_id": id, "status_code": code,
                   "comment": "Packed and labelled.", "public": false, "email_customer": true,
                   "email_additional": true, "status_viable": true}),
            "effective arguments, defaults included"
        );
        assert_eq!(previews[1]["public"], true);
        assert_eq!(previews[2]["due_date_to"], "2026-04-04");
        assert_eq!(previews[3]["order_count"], 2);
        assert_eq!(
            (
                &previews[3]["status_exists"],
                &previews[3]["status_name"],
                &previews[3]["orders_not_viable"]
            ),
            (&json!(true), &json!("In Production"), &json!([]))
        );

        assert!(host.handler.seen.lock().unwrap().elicitations.is_empty());
        assert!(statuspro.sandbox.mutations().is_empty(), "{era:?}");
        let unset = seed::order_without_status();
        assert_eq!(
            statuspro.requests(),
            [
                format!("GET /orders/{id}/viable-statuses"),
                "GET /statuses".to_string(),
                format!("GET /orders/{unset}/viable-statuses"),
                format!("GET /orders/{id}/viable-statuses"),
            ],
            "only the status checks, each bulk order's too"
        );
    }
}

#[tokio::test]
async fn confirmed_mutations_change_the_order() {
    for era in ERAS {
        let statuspro = start(era, Elicitation::Accept(true)).await;
        let host = &statuspro.host;
        let mut questions = Vec::new();
        let (id, code) = viable_change();
        let other = seed::order_without_due_date();
        let done = [
            format!("Order {id} is now in status {code}"),
            format!("Added the comment to order {other}'s history"),
            format!("Order {other} is now due 2026-04-02"),
        ];
        for ((tool, args, question), message) in the_four(true).into_iter().zip(done) {
            let out = host.ok(tool, args).await;
            assert_eq!(
                (&out["is_preview"], &out["result"], &out["message"]),
                (&json!(false), &json!("confirmed"), &json!(message)),
                "{era:?} {tool}"
            );
            assert_eq!(
                (&out["confirmed"], &out["success"], &out["status_code"]),
                (&json!(true), &json!(true), &json!(200)),
                "the StatusPro record's fields after an applied change: {era:?} {tool}"
            );
            assert_eq!(out["preview"]["action"], tool, "what was done");
            questions.push(question);
        }
        assert_eq!(host.handler.seen.lock().unwrap().elicitations, questions);
        // The one field of the form, in the design records' words.
        for schema in &host.handler.seen.lock().unwrap().elicitation_schemas {
            assert_eq!(
                (
                    &schema["properties"]["confirm"]["type"],
                    &schema["properties"]["confirm"]["description"],
                    &schema["required"]
                ),
                (
                    &json!("boolean"),
                    &json!("Confirm the action (true to proceed)"),
                    &json!(["confirm"])
                ),
                "{era:?}: {schema}"
            );
        }
        assert_eq!(statuspro.sandbox.mutations().len(), 3, "{era:?}");

        let order = host.ok("get_order", json!({"order_id": id})).await;
        assert_eq!(
            (&order["status_code"], &order["status_name"]),
            (&json!(code), &json!("Shipped"))
        );
        let last = order["history"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(
            (
                &last["event"],
                &last["status"],
                &last["comment"],
                &last["comment_public"],
                &last["email"]
            ),
            (
                &json!("status_change"),
                &json!("Shipped"),
                &json!("Packed and labelled."),
                &json!(false),
                &json!("queued")
            )
        );

        let order = host.ok("get_order", json!({"order_id": other})).await;
        assert_eq!(
            (&order["due_date"], &order["due_date_to"]),
            (&json!("2026-04-02"), &json!("2026-04-04"))
        );
        let events: Vec<&str> = order["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["event"].as_str().unwrap())
            .collect();
        assert_eq!(
            events[events.len() - 2..],
            ["comment_added", "due_date_set"]
        );
        let comment = &order["history"][events.len() - 2];
        assert_eq!(
            (&comment["comment"], &comment["comment_public"]),
            (&json!("Customer called about gift wrap."), &json!(true))
        );
    }
}

#[tokio::test]
async fn declined_and_cancelled_confirmations_send_nothing_and_say_which() {
    for era in ERAS {
        for (answer, expected, ending) in [
            (Elicitation::Decline, "cancelled", "cancelled by user"),
            (Elicitation::Cancel, "cancelled", "cancelled by user"),
            (Elicitation::Accept(false), "declined", "declined by user"),
        ] {
            let statuspro = start(era, answer).await;
            let host = &statuspro.host;
            for (tool, args, _) in the_four(true) {
                let out = host.ok(tool, args).await;
                assert_eq!(
                    (&out["is_preview"], &out["result"]),
                    (&json!(true), &json!(expected)),
                    "{era:?} {answer:?} {tool}"
                );
                assert_eq!(
                    (&out["confirmed"], &out["success"], &out["status_code"]),
                    (&json!(false), &json!(false), &Value::Null),
                    "the StatusPro record's fields: nothing confirmed, nothing sent"
                );
                assert_eq!(out["preview"]["action"], tool);
                let message = out["message"].as_str().unwrap();
                assert!(message.ends_with(ending), "{era:?} {tool}: {message}");
            }
            assert_eq!(host.handler.seen.lock().unwrap().elicitations.len(), 4);
            assert!(
                statuspro.sandbox.mutations().is_empty(),
                "{era:?} {answer:?}: nothing may be sent"
            );
        }
    }
}

#[tokio::test]
async fn a_client_that_cannot_confirm_gets_cancelled_and_how_to_allow_it() {
    for era in ERAS {
        let statuspro = start(era, Elicitation::Unsupported).await;
        for (tool, args, _) in the_four(true) {
            let out = statuspro.host.ok(tool, args).await;
            assert_eq!(
                (&out["is_preview"], &out["result"]),
                (&json!(true), &json!("cancelled")),
                "{era:?} {tool}"
            );
            let warning = out["warnings"].as_array().unwrap().last().unwrap();
            assert!(
                warning
                    .as_str()
                    .unwrap()
                    .contains(r#"confirmation = "trust-confirm-flag""#),
                "{era:?} {tool}: {warning}"
            );
        }
        assert!(statuspro.sandbox.mutations().is_empty());

        // With the operator's opt-in, `confirm: true` is the approval.
        let statuspro = Setup::new()
            .era(era)
            .config("\n[host]\nconfirmation = \"trust-confirm-flag\"\n")
            .start()
            .await;
        let (tool, args, _) = the_four(true).remove(1);
        let out = statuspro.host.ok(tool, args).await;
        assert_eq!(out["result"], "confirmed", "{era:?}");
        assert_eq!(statuspro.sandbox.mutations().len(), 1);
    }
}

#[tokio::test]
async fn a_mutation_the_api_refuses_is_a_tool_error_with_its_message() {
    for era in ERAS {
        let statuspro = start(era, Elicitation::Accept(true)).await;
        let issue = statuspro
            .host
            .tool_error(
                "add_order_comment",
                json!({"order_id": seed::UNKNOWN_ORDER_ID, "comment": "Hello there.", "confirm": true}),
            )
            .await;
        assert_eq!(issue["code"], "NOT_FOUND", "{era:?}");
        assert_eq!(issue["message"], "Order not found.");
        assert_eq!(statuspro.sandbox.mutations().len(), 1, "it was sent");
    }
}

#[tokio::test]
async fn due_dates_that_cannot_be_are_refused_before_anything_is_sent() {
    let statuspro = start(Era::Legacy, Elicitation::Accept(true)).await;
    let id = seed::FIRST_ORDER_ID;
    for args in [
        json!({"order_id": id, "due_date": "2026-02-30", "confirm": true}),
        json!({"order_id": id, "due_date": "2026-03-10", "due_date_to": "2026-03-09", "confirm": true}),
    ] {
        let issue = statuspro
            .host
            .tool_error("update_order_due_date", args)
            .await;
        assert_eq!(issue["code"], "VALIDATION_ERROR");
    }
    assert!(
        statuspro
            .host
            .handler
            .seen
            .lock()
            .unwrap()
            .elicitations
            .is_empty()
    );
    assert!(statuspro.sandbox.requests().is_empty());
}

#[tokio::test]
async fn a_due_date_is_cleared_with_null() {
    let statuspro = start(Era::Legacy, Elicitation::Accept(true)).await;
    let host = &statuspro.host;
    let id = seed::order_with_due_range();
    let preview = host
        .ok(
            "update_order_due_date",
            json!({"order_id": id, "due_date": null}),
        )
        .await;
    assert_eq!(preview["preview"]["due_date"], Value::Null);
    assert!(
        preview["message"]
            .as_str()
            .unwrap()
            .contains(&format!("clear the due date of order {id}"))
    );
    let out = host
        .ok(
            "update_order_due_date",
            json!({"order_id": id, "due_date": null, "confirm": true}),
        )
        .await;
    assert_eq!(out["result"], "confirmed");
    assert_eq!(
        host.handler.seen.lock().unwrap().elicitations,
        [format!("Clear the due date of order {id}?")]
    );
    assert_eq!(
        statuspro.sandbox.mutations()[0].body,
        json!({"due_date": null}),
        "the key is sent, null"
    );
    let order = host.ok("get_order", json!({"order_id": id})).await;
    assert_eq!(
        (&order["due_date"], &order["due_date_to"]),
        (&Value::Null, &Value::Null)
    );

    // A range end without a start is refused before anything is sent.
    let issue = host
        .tool_error(
            "update_order_due_date",
            json!({"order_id": id, "due_date": null, "due_date_to": "2026-04-04", "confirm": true}),
        )
        .await;
    assert_eq!(issue["code"], "VALIDATION_ERROR");
    assert_eq!(statuspro.sandbox.mutations().len(), 1);
}

#[tokio::test]
async fn a_bulk_update_with_an_order_that_cannot_move_is_refused_before_asking() {
    for era in ERAS {
        let statuspro = start(era, Elicitation::Accept(true)).await;
        let host = &statuspro.host;
        let received = seed::order_in_status("st000001").unwrap();
        let delivered = seed::order_in_status("st000004").unwrap();
        let shipped = seed::order_in_status("st000003").unwrap();
        let ids = [received, delivered, shipped, seed::UNKNOWN_ORDER_ID];
        let args = json!({"order_ids": ids, "status_code": "st000002"});

        let preview = host.ok("bulk_update_order_status", args.clone()).await;
        assert_eq!(
            preview["preview"]["orders_not_viable"],
            json!([
                {"order_id": delivered, "exists": true, "viable_status_codes": []},
                {"order_id": shipped, "exists": true, "viable_status_codes": ["st000004"]},
                {"order_id": seed::UNKNOWN_ORDER_ID, "exists": false, "viable_status_codes": []}
            ]),
            "{era:?}"
        );
        assert_eq!(preview["warnings"].as_array().unwrap().len(), 3);

        let mut confirmed = args;
        confirmed["confirm"] = json!(true);
        let issue = host.tool_error("bulk_update_order_status", confirmed).await;
        assert_eq!(issue["code"], "VALIDATION_ERROR", "{era:?}");
        let message = issue["message"].as_str().unwrap();
        for needle in [
            format!("Order {delivered} cannot move to st000002: its status is final."),
            format!("Order {shipped} cannot move to st000002; it can take st000004."),
            format!("Order {} does not exist.", seed::UNKNOWN_ORDER_ID),
        ] {
            assert!(message.contains(&needle), "{message}");
        }
        assert!(!message.contains(&format!("Order {received} ")));
        assert!(
            host.handler.seen.lock().unwrap().elicitations.is_empty(),
            "{era:?}: nobody was asked"
        );
        assert!(statuspro.sandbox.mutations().is_empty(), "{era:?}");
    }
}

#[tokio::test]
async fn a_bulk_update_answers_first_and_the_orders_change_after() {
    for era in ERAS {
        let statuspro = start(era, Elicitation::Accept(true)).await;
        let host = &statuspro.host;
        // Two orders that may move to In Production.
        let received = seed::order_in_status("st000001").unwrap();
        let unset = seed::order_without_status();
        let ids = [received, unset];

        statuspro.sandbox.pause_bulk_jobs();
        let out = host
            .ok(
                "bulk_update_order_status",
                json!({"order_ids": ids, "status_code": "st000002", "comment": "Batch 7 started.", "confirm": true}),
            )
            .await;
        assert_eq!(
            (&out["is_preview"], &out["result"], &out["message"]),
            (
                &json!(false),
                &json!("confirmed"),
                &json!(
                    "Queued 2 orders for status st000002. Bulk updates are queued and processed asynchronously."
                )
            ),
            "{era:?}"
        );
        assert_eq!(
            (&out["confirmed"], &out["success"], &out["status_code"]),
            (&json!(true), &json!(true), &json!(202)),
            "a queued bulk update: the API's 202, as the StatusPro record reports it"
        );
        assert_eq!(
            host.handler.seen.lock().unwrap().elicitations,
            ["Bulk-update 2 orders to status st000002?"]
        );
        let bulk = statuspro.sandbox.mutations();
        assert_eq!(bulk.len(), 1);
        assert_eq!(bulk[0].body["order_ids"], json!(ids));
        assert_eq!(bulk[0].body["email_customer"], true);

        // Answered, not yet applied.
        let status = |id: i64| statuspro.sandbox.order(id).unwrap().status.code;
        assert_eq!(status(received).as_deref(), Some("st000001"));
        statuspro.sandbox.resume_bulk_jobs();
        statuspro.sandbox.wait_for_bulk_jobs().await;

        for id in ids {
            let order = host.ok("get_order", json!({"order_id": id})).await;
            assert_eq!(order["status_code"], "st000002", "{era:?} {id}");
            let last = order["history"].as_array().unwrap().last().unwrap().clone();
            assert_eq!(last["comment"], "Batch 7 started.");
        }
    }
}
