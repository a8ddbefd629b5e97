//! Each error code, from what really happened upstream: an unknown order,
//! a refused key, the rate limit, a server error and a hung request (forced
//! with the sandbox's fault header, added by the host like any operator
//! header), and a status change refused as not viable before anyone is asked.

use std::time::Duration;

use serde_json::json;
use statuspro_sandbox::{SandboxConfig, seed};

use super::{Setup, StatusPro};
use crate::support::{ERAS, Elicitation};

#[tokio::test]
async fn an_unknown_order_is_not_found_with_a_hint() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;
    let unknown = seed::UNKNOWN_ORDER_ID;
    for (tool, args) in [
        ("get_order", json!({"order_id": unknown})),
        ("get_viable_statuses", json!({"order_id": unknown})),
        (
            "lookup_order",
            json!({"number": "1001", "email": "someone.else@example.com"}),
        ),
        // A status-change preview checks viability first, so a wrong id
        // is caught before anyone is asked to confirm.
        (
            "update_order_status",
            json!({"order_id": unknown, "status_code": "st000002"}),
        ),
    ] {
        let issue = host.tool_error(tool, args).await;
        assert_eq!(issue["code"], "NOT_FOUND", "{tool}");
        assert_eq!(issue["message"], "Order not found.", "{tool}");
        assert!(issue["hint"].as_str().unwrap().contains("list_orders"));
    }
    // A lookup names no order_id: its hint is about what it was given.
    let issue = host
        .tool_error(
            "lookup_order",
            json!({"number": "#1001", "email": "someone.else@example.com"}),
        )
        .await;
    let hint = issue["hint"].as_str().unwrap();
    assert!(
        hint.contains("e-mail") && hint.contains("#1188") && !hint.contains("order_id"),
        "{hint}"
    );
    assert!(statuspro.sandbox.mutations().is_empty());
}

#[tokio::test]
async fn a_refused_api_key_is_permission_denied() {
    let statuspro = Setup::new().api_key("not-the-key").start().await;
    let issue = statuspro.host.tool_error("list_statuses", json!({})).await;
    assert_eq!(issue["code"], "PERMISSION_DENIED");
    assert_eq!(issue["message"], "Unauthenticated.");
    assert!(issue["hint"].as_str().unwrap().contains("toolhost.toml"));
    assert_eq!(statuspro.requests(), ["GET /statuses"]);
}

#[tokio::test]
async fn the_rate_limit_says_when_to_retry_and_nothing_retries_silently() {
    let statuspro = Setup::new()
        .sandbox(SandboxConfig {
            rate_limit_per_minute: 2,
            ..SandboxConfig::default()
        })
        .start()
        .await;
    let host = &statuspro.host;
    host.ok("list_statuses", json!({})).await;
    host.ok("get_order", json!({"order_id": seed::FIRST_ORDER_ID}))
        .await;
    let issue = host
        .tool_error("list_orders", json!({"per_page": 10}))
        .await;
    assert_eq!(issue["code"], "RATE_LIMIT");
    let retry = issue["retry_after_ms"].as_u64().expect("retry_after_ms");
    assert!(
        (1000..=60_000).contains(&retry) && retry % 1000 == 0,
        "Retry-After seconds × 1000: {retry}"
    );
    assert_eq!(
        statuspro.requests().len(),
        3,
        "the walk stopped at the 429 instead of retrying"
    );

    statuspro.sandbox.reset_rate_limits();
    host.ok("list_statuses", json!({})).await;
}

#[tokio::test]
async fn server_errors_are_transient_for_reads_and_for_mutations_say_to_check_first() {
    for fault in ["500", "503"] {
        let statuspro = Setup::new()
            .elicitation(Elicitation::Accept(true))
            .fault(fault)
            .start()
            .await;
        let host = &statuspro.host;
        let before = statuspro.sandbox.order(seed::FIRST_ORDER_ID).unwrap();
        let issue = host.tool_error("list_statuses", json!({})).await;
        assert_eq!(issue["code"], "TRANSIENT", "{fault}");
        assert!(issue.get("hint").is_some());
        let logged = statuspro.sandbox.requests();
        assert_eq!(
            logged[0].fault.as_deref(),
            Some(fault),
            "the host added the header"
        );

        // A confirmed mutation whose answer was a 5xx: the change's
        // outcome is unknown, and the hint says to look before repeating it.
        let issue = host
            .tool_error(
                "add_order_comment",
                json!({"order_id": seed::FIRST_ORDER_ID, "comment": "Checked twice.", "confirm": true}),
            )
            .await;
        assert_eq!(issue["code"], "TRANSIENT", "{fault}");
        let hint = issue["hint"].as_str().unwrap();
        assert!(
            hint.contains("may or may not") && hint.contains("get_order"),
            "{hint}"
        );
        assert_eq!(
            statuspro.sandbox.order(seed::FIRST_ORDER_ID).unwrap(),
            before,
            "the order is unchanged"
        );
    }
}

#[tokio::test]
async fn a_request_that_hangs_is_transient() {
    // The sandbox holds the request far longer than any test runs, so the
    // only way this call ends is the host giving up (its own "in time"
    // message), never the sandbox's late 504.
    let statuspro = Setup::new()
        .sandbox(SandboxConfig {
            fault_timeout: Duration::from_secs(3600),
            ..SandboxConfig::default()
        })
        .fault("timeout")
        .config("\n[plugins.statuspro.limits]\nhttp_timeout_secs = 0.5\n")
        .start()
        .await;
    let call = statuspro
        .host
        .tool_error("get_order", json!({"order_id": seed::FIRST_ORDER_ID}));
    let issue = tokio::time::timeout(Duration::from_secs(300), call)
        .await
        .expect("the host gives up on a request that hangs");
    assert_eq!(issue["code"], "TRANSIENT");
    assert!(
        issue["message"].as_str().unwrap().contains("in time"),
        "{issue}"
    );
}

/// A status the order cannot take is refused before the user is asked:
/// the preview warns, and a confirmed call is a `VALIDATION_ERROR` that
/// lists the codes the order can take. Nothing is asked or sent.
#[tokio::test]
async fn a_status_the_order_cannot_take_is_refused_before_asking_with_the_viable_codes() {
    for era in ERAS {
        let statuspro = Setup::new()
            .era(era)
            .elicitation(Elicitation::Accept(true))
            .start()
            .await;
        let host = &statuspro.host;
        // A Shipped order: it can only move to Delivered.
        let id = seed::order_in_status("st000003").unwrap();
        let before = statuspro.sandbox.order(id).unwrap();
        let args = json!({"order_id": id, "status_code": "st000001"});

        // The preview already says so.
        let preview = host.ok("update_order_status", args.clone()).await;
        assert_eq!(preview["preview"]["status_viable"], false, "{era:?}");
        assert_eq!(
            preview["preview"]["viable_status_codes"],
            json!(["st000004"])
        );
        assert!(
            preview["warnings"][0]
                .as_str()
                .unwrap()
                .contains("cannot move to status st000001"),
            "{preview}"
        );

        // Confirmed anyway: refused before the user is asked.
        let mut confirmed = args;
        confirmed["confirm"] = json!(true);
        let issue = host.tool_error("update_order_status", confirmed).await;
        assert_eq!(issue["code"], "VALIDATION_ERROR", "{era:?}");
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("Order {id} cannot move to status st000001"))
                && message.contains("st000004"),
            "{message}"
        );
        assert!(
            issue["hint"]
                .as_str()
                .unwrap()
                .contains("get_viable_statuses")
        );

        // A final status: the message says none is left.
        let delivered = seed::order_in_status("st000004").unwrap();
        let issue = host
            .tool_error(
                "update_order_status",
                json!({"order_id": delivered, "status_code": "st000002", "confirm": true}),
            )
            .await;
        assert!(
            issue["message"].as_str().unwrap().contains("final"),
            "{issue}"
        );

        assert!(
            host.handler.seen.lock().unwrap().elicitations.is_empty(),
            "{era:?}: nobody was asked"
        );
        assert!(statuspro.sandbox.mutations().is_empty(), "{era:?}");
        assert_eq!(statuspro.sandbox.order(id).unwrap(), before);
    }
}
