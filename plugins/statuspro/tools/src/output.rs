//! What the tools return: small, flat shapes with stable names, projected
//! from the API's payloads (never echoed).
//!
//! Dates are ISO 8601: due dates as `YYYY-MM-DD` (they are calendar dates,
//! though the API sends them as midnight datetimes), instants as the API's
//! ISO 8601 datetimes with offset.

use schemars::JsonSchema;
use serde::Serialize;

use crate::api;

/// One order, as list results show it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OrderSummary {
    /// Shopify order id; pass it as `order_id` to the other tools.
    pub id: u64,
    /// Display name, e.g. `#1188`.
    pub name: String,
    /// Order number without `#`, e.g. `1188`.
    pub order_number: String,
    /// The customer's full name.
    pub customer_name: Option<String>,
    /// The customer's e-mail address.
    pub customer_email: Option<String>,
    /// Current status code, e.g. `st000002`; null when no status is set.
    pub status_code: Option<String>,
    /// Current status name, e.g. `In Production`; null when no status is set.
    pub status_name: Option<String>,
    /// Due date, `YYYY-MM-DD`; null when none is set.
    pub due_date: Option<String>,
}

impl OrderSummary {
    /// Projects a list row (or the list part of a full order).
    pub fn from_api(row: &api::OrderListItem) -> OrderSummary {
        let status = row.status.is_set.then_some(&row.status);
        OrderSummary {
            id: row.id,
            name: row.name.clone(),
            order_number: row.order_number.clone(),
            customer_name: row.customer.name.clone(),
            customer_email: row.customer.email.clone(),
            status_code: status.and_then(|s| s.code.clone()),
            status_name: status.and_then(|s| s.name.clone()),
            due_date: row.due_date.as_deref().map(iso_date),
        }
    }
}

/// One status of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StatusEntry {
    /// 8-character status code, e.g. `st000003`; pass it as `status_code`.
    pub code: String,
    /// Status name, e.g. `Shipped`.
    pub name: String,
    /// What the status means.
    pub description: Option<String>,
    /// Display color: a name (`pink`) or a hex value (`#2e7d32`).
    pub color: Option<String>,
}

impl StatusEntry {
    /// Projects a catalog entry.
    pub fn from_api(status: &api::StatusDefinition) -> StatusEntry {
        StatusEntry {
            code: status.code.clone(),
            name: status.name.clone(),
            description: status.description.clone(),
            color: status.color.clone(),
        }
    }
}

/// One order with its details and history.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OrderDetail {
    /// The order's summary fields.
    #[serde(flatten)]
    pub summary: OrderSummary,
    /// End of the due-date range, `YYYY-MM-DD`; null when the due date is a single day.
    pub due_date_to: Option<String>,
    /// When the current status was set (ISO 8601); null when no status is set.
    pub status_set_at: Option<String>,
    /// Events, oldest first: the newest `history_limit` of them.
    pub history: Vec<HistoryEntry>,
    /// How many events the order has in all.
    pub history_total: usize,
    /// Whether older events were left out to respect `history_limit`.
    pub history_truncated: bool,
}

impl OrderDetail {
    /// Projects a full order, keeping the newest `history_limit` events.
    pub fn from_api(order: &api::Order, history_limit: usize) -> OrderDetail {
        let total = order.history.len();
        let skip = total.saturating_sub(history_limit);
        let status = order.row.status.is_set.then_some(&order.row.status);
        OrderDetail {
            summary: OrderSummary::from_api(&order.row),
            due_date_to: order.due_date_to.as_deref().map(iso_date),
            status_set_at: status.and_then(|s| s.set_at.clone()),
            history: order.history[skip..]
                .iter()
                .map(HistoryEntry::from_api)
                .collect(),
            history_total: total,
            history_truncated: skip > 0,
        }
    }
}

/// One event in an order's history.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistoryEntry {
    /// What happened: `status_change`, `comment_added`, `due_date_set`, `due_date_cleared`, …
    pub event: String,
    /// For a status change: the name of the new status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The comment attached to the event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Whether the customer can see the comment (present when there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment_public: Option<bool>,
    /// When it happened (ISO 8601).
    pub at: Option<String>,
    /// Delivery status of the customer e-mail the event sent (`queued`, `delivered`, …), if it sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

impl HistoryEntry {
    /// Projects one history item.
    pub fn from_api(item: &api::HistoryItem) -> HistoryEntry {
        HistoryEntry {
            event: item.event.clone(),
            status: item.status.clone(),
            comment: item.comment.clone(),
            comment_public: item.comment.as_ref().map(|_| item.comment_is_public),
            at: item.created_at.clone(),
            email: item.mail_log.as_ref().map(|m| {
                m.delivery_status
                    .clone()
                    .unwrap_or_else(|| "sent".to_string())
            }),
        }
    }
}

/// The calendar date of an API date: `2026-03-15T00:00:00+00:00` becomes
/// `2026-03-15`. Anything not starting with a `YYYY-MM-DD` date is kept as
/// sent rather than guessed at.
pub fn iso_date(value: &str) -> String {
    let b = value.as_bytes();
    let is_date = b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if is_date {
        value[..10].to_string()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(history: usize) -> api::Order {
        let mut value = serde_json::json!({
            "id": 6110375248002u64, "name": "#1002", "order_number": "1002",
            "customer": {"name": "Amélie Dubois", "email": "amelie.dubois@example.fr", "locale": "fr"},
            "status": {"is_set": true, "code": "st000003", "name": "Shipped", "set_at": "2026-03-05T07:00:00+00:00"},
            "due_date": "2026-03-11T00:00:00+00:00", "due_date_to": "2026-03-13T00:00:00+00:00",
            "history": [], "public_progress_timeline": []
        });
        value["history"] = (0..history)
            .map(|i| serde_json::json!({"event": "comment_added", "status": null, "comment": format!("c{i}"),
                "comment_is_public": i % 2 == 0, "created_at": "2026-03-02T09:00:00+00:00", "mail_log": null}))
            .collect();
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn due_dates_become_calendar_dates() {
        assert_eq!(iso_date("2026-03-15T00:00:00+00:00"), "2026-03-15");
        assert_eq!(iso_date("2026-03-15"), "2026-03-15");
        assert_eq!(iso_date("15/03/2026"), "15/03/2026");
    }

    #[test]
    fn a_summary_holds_exactly_the_eight_fields() {
        let detail = OrderDetail::from_api(&order(0), 50);
        let json = serde_json::to_value(&detail.summary).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id": 6110375248002u64, "name": "#1002", "order_number": "1002",
                "customer_name": "Amélie Dubois", "customer_email": "amelie.dubois@example.fr",
                "status_code": "st000003", "status_name": "Shipped", "due_date": "2026-03-11"})
        );
        assert_eq!(detail.due_date_to.as_deref(), Some("2026-03-13"));
    }

    #[test]
    fn history_keeps_the_newest_events_and_says_it_was_cut() {
        let detail = OrderDetail::from_api(&order(5), 2);
        assert_eq!(detail.history_total, 5);
        assert!(detail.history_truncated);
        let comments: Vec<_> = detail
            .history
            .iter()
            .map(|h| h.comment.clone().unwrap())
            .collect();
        assert_eq!(comments, ["c3", "c4"]);
        assert_eq!(detail.history[1].comment_public, Some(true));

        let whole = OrderDetail::from_api(&order(5), 5);
        assert!(!whole.history_truncated);
        assert_eq!(whole.history.len(), 5);
    }

    #[test]
    fn an_order_without_status_has_null_status_fields() {
        let mut o = order(0);
        o.row.status = api::Status::default();
        let detail = OrderDetail::from_api(&o, 50);
        assert_eq!(detail.summary.status_code, None);
        assert_eq!(detail.status_set_at, None);
    }
}
