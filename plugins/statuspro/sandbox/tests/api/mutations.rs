//! Contract 4.7–4.9: status update, comment and due date, and their effects
//! on the order and its history.

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};
use statuspro_sandbox::{
    model::{HistoryItem, MailLog},
    seed,
};

use crate::util::{OrderReads as _, start};

/// Asserts `wire` is a `+00:00` datetime between `before` and now.
#[track_caller]
fn assert_recent(wire: &str, before: DateTime<Utc>) {
    assert!(wire.ends_with("+00:00"), "{wire}");
    let at = DateTime::parse_from_rfc3339(wire).expect("an RFC 3339 datetime");
    let floor = before - chrono::Duration::seconds(1);
    assert!(
        at >= floor && at <= Utc::now(),
        "{wire} is not the current time"
    );
}

#[tokio::test]
async fn status_update_sets_the_status_and_records_history_with_mail() {
    let h = start().await;
    let before = Utc::now();
    // A Quality Check order: Shipped is viable.
    let id = seed::order_with_viable_next("st000003").unwrap();
    let seeded = h.order(id).await;
    assert_eq!(seeded.status.code.as_deref(), Some("st000006"));

    let (status, body) = h
        .post(
            &format!("/orders/{id}/status"),
            json!({"status_code": "st000003", "comment": "Packed and handed over.", "public": true}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            json!({"message": "Order status updated successfully!"})
        )
    );

    let order = h.order(id).await;
    assert!(order.status.is_set);
    assert_eq!(order.status.code.as_deref(), Some("st000003"));
    assert_eq!(order.status.name.as_deref(), Some("Shipped"));
    assert_eq!(order.status.public_name.as_deref(), Some("On Its Way"));
    assert!(order.status.public);
    let set_at = order.status.set_at.clone().unwrap();
    assert_recent(&set_at, before);
    assert!(
        order.status.auto_change_at.is_some(),
        "Shipped changes on its own"
    );
    assert_eq!(order.status.translations["fr"].name, "Expédiée");

    assert_eq!(order.history.len(), seeded.history.len() + 1);
    let last = order.history.last().unwrap();
    assert_eq!(
        last,
        &HistoryItem {
            event: "status_change".into(),
            status: Some("Shipped".into()),
            comment: Some("Packed and handed over.".into()),
            comment_is_public: true,
            created_at: set_at.clone(),
            mail_log: Some(MailLog {
                from: seed::MAIL_FROM.into(),
                to: order.customer.email.clone(),
                subject: format!("Your order {} is now: On Its Way", order.name),
                delivery_status: "queued".into(),
            }),
        }
    );
    // The timeline reaches Shipped at the change's time.
    let shipped_step = &order.public_progress_timeline[2];
    assert_eq!(
        (shipped_step.progress, shipped_step.timestamp.as_deref()),
        (75, Some(set_at.as_str()))
    );
    assert_eq!(order.public_progress_timeline[3].timestamp, None);

    // The list row agrees, and the test-facing snapshot equals the API.
    let (_, list) = h.get("/orders?status_code=st000003&per_page=100").await;
    let row = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap();
    assert_eq!(row["history_count"], order.history.len());
    assert_eq!(h.sandbox.order(id).unwrap(), order);
}

#[tokio::test]
async fn status_update_without_email_has_no_mail_log_and_private_comment_by_default() {
    let h = start().await;
    let id = seed::order_with_viable_next("st000005").unwrap();
    let (status, _) = h
        .post(
            &format!("/orders/{id}/status"),
            json!({"status_code": "st000005", "email_customer": false, "comment": "Supplier delay"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let last = h.order(id).await.history.pop().unwrap();
    assert_eq!(last.event, "status_change");
    assert_eq!(last.mail_log, None);
    assert!(!last.comment_is_public);
    assert_eq!(last.comment.as_deref(), Some("Supplier delay"));
}

#[tokio::test]
async fn an_order_without_status_can_get_one() {
    let h = start().await;
    let id = seed::order_without_status();
    let before = h.order(id).await;
    assert!(!before.status.is_set);
    assert_eq!(before.status.code, None);
    assert!(
        before
            .public_progress_timeline
            .iter()
            .all(|step| step.timestamp.is_none())
    );

    let (status, _) = h
        .post(
            &format!("/orders/{id}/status"),
            json!({"status_code": "st000004", "comment": null}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let after = h.order(id).await;
    assert!(after.status.is_set);
    assert_eq!(after.status.code.as_deref(), Some("st000004"));
    assert_eq!(after.history.last().unwrap().comment, None);
    // Delivered reached: its step has a time; the skipped steps have none.
    assert!(after.public_progress_timeline[3].timestamp.is_some());
    assert!(after.public_progress_timeline[0].timestamp.is_none());
}

#[tokio::test]
async fn comment_appends_a_comment_added_item() {
    let h = start().await;
    let before_time = Utc::now();
    let id = seed::FIRST_ORDER_ID;
    let before = h.order(id).await;
    let (status, body) = h
        .post(
            &format!("/orders/{id}/comment"),
            json!({"comment": "Gift wrap requested.", "public": true}),
        )
        .await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"message": "Order comment added!"}))
    );
    let after = h.order(id).await;
    assert_eq!(after.history.len(), before.history.len() + 1);
    assert_eq!(
        after.status, before.status,
        "a comment leaves the status alone"
    );
    let last = after.history.last().unwrap();
    assert_eq!(last.event, "comment_added");
    assert_eq!(last.status, None);
    assert_eq!(last.comment.as_deref(), Some("Gift wrap requested."));
    assert!(last.comment_is_public);
    assert_eq!(last.mail_log, None);
    assert_recent(&last.created_at, before_time);

    let (status, _) = h
        .post(
            &format!("/orders/{id}/comment"),
            json!({"comment": "Internal note"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !h.order(id).await.history.last().unwrap().comment_is_public,
        "private by default"
    );
}

#[tokio::test]
async fn due_date_is_set_returned_as_datetime_and_cleared() {
    let h = start().await;
    let id = seed::order_without_due_date();
    let path = format!("/orders/{id}/due-date");

    let (status, body) = h
        .post(
            &path,
            json!({"due_date": "2026-04-01", "due_date_to": "2026-04-03"}),
        )
        .await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"message": "Order due date set!"}))
    );
    let order = h.order(id).await;
    assert_eq!(order.due_date.as_deref(), Some("2026-04-01T00:00:00+00:00"));
    assert_eq!(
        order.due_date_to.as_deref(),
        Some("2026-04-03T00:00:00+00:00")
    );
    assert_eq!(order.history.last().unwrap().event, "due_date_set");

    // A new date without a range replaces the range too.
    h.post(&path, json!({"due_date": "2026-04-10"})).await;
    let order = h.order(id).await;
    assert_eq!(order.due_date.as_deref(), Some("2026-04-10T00:00:00+00:00"));
    assert_eq!(order.due_date_to, None);

    // The list filters see the new date.
    let (_, list) = h
        .get("/orders?due_date_from=2026-04-10&due_date_to=2026-04-10")
        .await;
    assert_eq!(list["data"][0]["id"], id);
    assert_eq!(list["data"][0]["due_date"], "2026-04-10T00:00:00+00:00");

    // null clears both, even when a range end is sent.
    let ranged = seed::order_with_due_range();
    let (status, _) = h
        .post(
            &format!("/orders/{ranged}/due-date"),
            json!({"due_date": null, "due_date_to": "2026-05-01"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let cleared = h.order(ranged).await;
    assert_eq!((cleared.due_date, cleared.due_date_to), (None, None));
    let last = cleared.history.last().unwrap();
    assert_eq!(last.event, "due_date_cleared");
    assert_eq!(last.status, None);
}

#[tokio::test]
async fn seeded_orders_have_history_and_timelines() {
    let h = start().await;
    let order = h.order(seed::FIRST_ORDER_ID).await;
    let events: Vec<&str> = order
        .history
        .iter()
        .map(|item| item.event.as_str())
        .collect();
    assert_eq!(events, ["status_change"; 5]);
    assert_eq!(order.history[0].created_at, seed::BASE_TIMESTAMP);
    assert_eq!(
        order.history[0].mail_log.as_ref().unwrap().delivery_status,
        "delivered"
    );
    let progress: Vec<(u8, bool)> = order
        .public_progress_timeline
        .iter()
        .map(|step| (step.progress, step.timestamp.is_some()))
        .collect();
    assert_eq!(progress, [(25, true), (50, true), (75, true), (100, true)]);
    assert_eq!(
        order.status.set_at,
        order.history.last().map(|item| item.created_at.clone())
    );

    // Order 10 has a public comment; an unset status serializes as nulls.
    let tenth = h.order(seed::FIRST_ORDER_ID + 9).await;
    assert!(tenth.history.last().unwrap().comment_is_public);
    let (_, raw) = h
        .get(&format!("/orders/{}", seed::order_without_status()))
        .await;
    assert_eq!(
        raw["status"],
        json!({"is_set": false, "code": null, "name": null, "public_name": null, "description": null,
               "public": false, "set_at": null, "auto_change_at": null, "translations": {}})
    );
    assert_eq!(raw["history"], Value::Array(vec![]));
}
