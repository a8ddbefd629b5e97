//! Contract 4.10: bulk updates are validated synchronously, answered 202, and
//! applied afterwards; unknown and non-viable ids are skipped.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use statuspro_sandbox::{SandboxConfig, seed};

use crate::util::{OrderReads as _, start, start_with};

/// Orders from which In Production (`st000002`) is viable: Order Received,
/// On Hold and no status.
fn targets() -> Vec<i64> {
    vec![
        seed::order_in_status("st000001").unwrap(),
        seed::order_in_status("st000005").unwrap(),
        seed::order_without_status(),
    ]
}

#[tokio::test]
async fn bulk_answers_202_then_applies() {
    let h = start().await;
    let ids = targets();
    h.sandbox.pause_bulk_jobs();

    let (status, body) = h
        .post(
            "/orders/bulk-status",
            json!({"order_ids": ids, "status_code": "st000002", "comment": "Batch started", "public": true}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::ACCEPTED,
            json!({"message": "Bulk status update queued.", "count": 3, "limit": 50})
        )
    );

    // Accepted, not applied yet.
    assert_eq!(h.sandbox.pending_bulk_jobs(), 1);
    for &id in &ids {
        assert_ne!(h.order(id).await.status.code.as_deref(), Some("st000002"));
    }

    h.sandbox.resume_bulk_jobs();
    h.sandbox.wait_for_bulk_jobs().await;
    assert_eq!(h.sandbox.pending_bulk_jobs(), 0);
    for &id in &ids {
        let order = h.order(id).await;
        assert_eq!(order.status.code.as_deref(), Some("st000002"), "order {id}");
        let last = order.history.last().unwrap();
        assert_eq!(last.event, "status_change");
        assert_eq!(last.comment.as_deref(), Some("Batch started"));
        assert!(last.comment_is_public);
        assert_eq!(last.mail_log.as_ref().unwrap().delivery_status, "queued");
    }
}

#[tokio::test]
async fn bulk_skips_unknown_and_non_viable_ids() {
    let h = start().await;
    let viable = seed::order_in_status("st000001").unwrap();
    let delivered = seed::order_in_status("st000004").unwrap();
    let delivered_before = h.order(delivered).await;

    let (status, body) = h
        .post(
            "/orders/bulk-status",
            json!({"order_ids": [delivered, seed::UNKNOWN_ORDER_ID, viable], "status_code": "st000002",
                   "email_customer": false}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(
        body["count"], 3,
        "count echoes the request, skips happen later"
    );
    h.sandbox.wait_for_bulk_jobs().await;

    assert_eq!(
        h.order(delivered).await,
        delivered_before,
        "non-viable id untouched"
    );
    let changed = h.order(viable).await;
    assert_eq!(changed.status.code.as_deref(), Some("st000002"));
    assert_eq!(changed.history.last().unwrap().mail_log, None);
    assert!(h.sandbox.order(seed::UNKNOWN_ORDER_ID).is_none());
}

#[tokio::test]
async fn bulk_due_date_and_string_ids() {
    let h = start().await;
    let id = seed::order_in_status("st000001").unwrap();
    let (status, _) = h
        .post(
            "/orders/bulk-status",
            json!({"order_ids": [id.to_string()], "status_code": "st000005", "due_date": "2026-05-02",
                   "send_at": 1_780_000_000}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    h.sandbox.wait_for_bulk_jobs().await;
    let order = h.order(id).await;
    assert_eq!(order.status.code.as_deref(), Some("st000005"));
    assert_eq!(order.due_date.as_deref(), Some("2026-05-02T00:00:00+00:00"));
}

#[tokio::test]
async fn jobs_apply_in_order_and_the_delay_is_honoured() {
    let delay = Duration::from_millis(150);
    let h = start_with(SandboxConfig {
        bulk_apply_delay: delay,
        ..Default::default()
    })
    .await;
    let id = seed::order_in_status("st000001").unwrap();
    let started = Instant::now();
    // Two jobs on one order: the second is only viable after the first.
    for code in ["st000002", "st000006"] {
        let (status, _) = h
            .post(
                "/orders/bulk-status",
                json!({"order_ids": [id], "status_code": code}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    h.sandbox.wait_for_bulk_jobs().await;
    assert!(
        started.elapsed() >= delay * 2,
        "each job waited the apply delay"
    );
    assert_eq!(h.order(id).await.status.code.as_deref(), Some("st000006"));
}
