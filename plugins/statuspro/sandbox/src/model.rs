//! The wire shapes of the StatusPro API (contract section 3).
//!
//! These are exactly what the sandbox sends and accepts; tests deserialize
//! responses into them. Every type denies unknown fields, so a test that
//! deserializes a response also proves the sandbox leaked nothing extra (tags,
//! financial and fulfillment status, cancellation are filter-only and never
//! appear). Datetimes are strings such as `2026-03-15T00:00:00+00:00`, as on the
//! wire.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The customer of an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    /// Full name, e.g. `"Jon Smith"`.
    pub name: String,
    /// E-mail address; lookups match it case-insensitively.
    pub email: String,
    /// Preferred locale, e.g. `"en"`, `"fr"`.
    pub locale: String,
}

/// A status name and description in one locale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusTranslation {
    /// Translated status name.
    pub name: String,
    /// Translated status description.
    pub description: String,
}

/// The current status of an order. An order with no status set has
/// `is_set: false` and every other field null, `public: false` and no
/// translations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Status {
    /// Whether the order has a status at all.
    pub is_set: bool,
    /// 8-character status code, e.g. `"st000002"`.
    pub code: Option<String>,
    /// Internal status name, e.g. `"In Production"`.
    pub name: Option<String>,
    /// Customer-facing name, e.g. `"Crafting With Care"`; null for private statuses.
    pub public_name: Option<String>,
    /// Status description.
    pub description: Option<String>,
    /// Whether customers see this status.
    pub public: bool,
    /// When the status was set.
    pub set_at: Option<String>,
    /// When the status will change on its own (Shipped moves to Delivered after 7 days).
    pub auto_change_at: Option<String>,
    /// Name and description per locale.
    pub translations: BTreeMap<String, StatusTranslation>,
}

/// One entry of the status catalog (`GET /statuses`, viable statuses).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusDefinition {
    /// 8-character status code.
    pub code: String,
    /// Internal status name.
    pub name: String,
    /// Status description.
    pub description: String,
    /// A color name (`"pink"`) or hex value (`"#2e7d32"`).
    pub color: String,
}

/// A row of `GET /orders`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderListItem {
    /// Shopify order id.
    pub id: i64,
    /// Display name, e.g. `"#1001"`.
    pub name: String,
    /// Order number without `#`, e.g. `"1001"`.
    pub order_number: String,
    /// The customer.
    pub customer: Customer,
    /// The current status.
    pub status: Status,
    /// Due date as a midnight UTC datetime, if set.
    pub due_date: Option<String>,
    /// End of the due-date range, if set.
    pub due_date_to: Option<String>,
    /// Number of history items.
    pub history_count: usize,
}

/// A full order (`GET /orders/{order}`, lookup).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Order {
    /// Shopify order id.
    pub id: i64,
    /// Display name, e.g. `"#1001"`.
    pub name: String,
    /// Order number without `#`.
    pub order_number: String,
    /// The customer.
    pub customer: Customer,
    /// The current status.
    pub status: Status,
    /// Due date as a midnight UTC datetime, if set.
    pub due_date: Option<String>,
    /// End of the due-date range, if set.
    pub due_date_to: Option<String>,
    /// Events, oldest first.
    pub history: Vec<HistoryItem>,
    /// The customer-facing progress bar, one item per public status.
    pub public_progress_timeline: Vec<TimelineItem>,
}

/// One event in an order's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryItem {
    /// `"status_change"`, `"comment_added"`, `"due_date_set"` or `"due_date_cleared"`.
    pub event: String,
    /// The status name a `status_change` moved to; null for other events.
    pub status: Option<String>,
    /// The comment attached to the event, if any.
    pub comment: Option<String>,
    /// Whether the comment is shown to the customer.
    pub comment_is_public: bool,
    /// When the event happened.
    pub created_at: String,
    /// The customer e-mail the event sent, if any.
    pub mail_log: Option<MailLog>,
}

/// A customer notification e-mail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailLog {
    /// Sender address.
    pub from: String,
    /// Recipient (the customer's e-mail).
    pub to: String,
    /// Subject line.
    pub subject: String,
    /// `"queued"` for new mail; seeded history says `"delivered"`.
    pub delivery_status: String,
}

/// One step of the public progress timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineItem {
    /// Customer-facing step name.
    pub name: String,
    /// Step description.
    pub description: String,
    /// Percent complete once this step is reached (25, 50, 75, 100).
    pub progress: u8,
    /// When the order reached this step; null if it has not (or the time is unknown).
    pub timestamp: Option<String>,
}

/// Laravel pagination metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageMeta {
    /// The requested page.
    pub current_page: u64,
    /// 1-based index of the first row on this page; null when the page is empty.
    pub from: Option<u64>,
    /// `max(1, ceil(total / per_page))`.
    pub last_page: u64,
    /// Rows per page.
    pub per_page: u64,
    /// 1-based index of the last row on this page; null when the page is empty.
    pub to: Option<u64>,
    /// Rows matching the filters, over all pages.
    pub total: u64,
}

/// The body of `GET /orders`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderPage {
    /// The rows of this page, newest id first.
    pub data: Vec<OrderListItem>,
    /// Pagination metadata.
    pub meta: PageMeta,
}

/// A body with only a message: mutation successes and most errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    /// The message.
    pub message: String,
}

/// The body of a 422.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationErrorBody {
    /// Always `"The given data was invalid."`.
    pub message: String,
    /// Messages per field, e.g. `{"per_page": ["The per page field must be between 1 and 100."]}`.
    pub errors: BTreeMap<String, Vec<String>>,
}

/// The 202 body of `POST /orders/bulk-status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkQueued {
    /// Always `"Bulk status update queued."`.
    pub message: String,
    /// Number of order ids in the request.
    pub count: usize,
    /// The per-request maximum, 50.
    pub limit: usize,
}
