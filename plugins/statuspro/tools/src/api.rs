//! The StatusPro API's wire shapes (contract section 3), as the tools read
//! them.
//!
//! Deserialization is lenient on purpose: unknown fields are ignored and
//! missing or null optional fields take defaults, so an additive change
//! upstream does not break the tools. Only what some tool returns is read;
//! the projections in [`crate::output`] decide what the model sees.

use serde::Deserialize;

/// The customer of an order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Customer {
    /// Full name.
    pub name: Option<String>,
    /// E-mail address.
    pub email: Option<String>,
}

/// The current status of an order; `is_set: false` when it has none.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Status {
    /// Whether the order has a status at all.
    pub is_set: bool,
    /// 8-character status code, e.g. `st000002`.
    pub code: Option<String>,
    /// Internal status name, e.g. `In Production`.
    pub name: Option<String>,
    /// When the status was set (ISO 8601 datetime).
    pub set_at: Option<String>,
}

/// One entry of the status catalog (`GET /statuses`, viable statuses).
#[derive(Debug, Clone, Deserialize)]
pub struct StatusDefinition {
    /// 8-character status code.
    pub code: String,
    /// Internal status name.
    pub name: String,
    /// What the status means.
    #[serde(default)]
    pub description: Option<String>,
    /// A color name (`pink`) or hex value (`#2e7d32`).
    #[serde(default)]
    pub color: Option<String>,
}

/// A row of `GET /orders`.
#[derive(Debug, Clone, Deserialize)]
pub struct OrderListItem {
    /// Shopify order id.
    pub id: u64,
    /// Display name, e.g. `#1188`.
    pub name: String,
    /// Order number without `#`, e.g. `1188`.
    pub order_number: String,
    /// The customer.
    #[serde(default, deserialize_with = "null_as_default")]
    pub customer: Customer,
    /// The current status.
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: Status,
    /// Due date as a datetime, e.g. `2026-03-15T00:00:00+00:00`.
    #[serde(default)]
    pub due_date: Option<String>,
}

/// A full order (`GET /orders/{id}`, lookup).
#[derive(Debug, Clone, Deserialize)]
pub struct Order {
    /// The fields a list row has too.
    #[serde(flatten)]
    pub row: OrderListItem,
    /// End of the due-date range, if set.
    #[serde(default)]
    pub due_date_to: Option<String>,
    /// Events, oldest first.
    #[serde(default, deserialize_with = "null_as_default")]
    pub history: Vec<HistoryItem>,
}

/// One event in an order's history.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HistoryItem {
    /// `status_change`, `comment_added`, `due_date_set`, …
    pub event: String,
    /// The status name a `status_change` moved to.
    pub status: Option<String>,
    /// The comment attached to the event.
    pub comment: Option<String>,
    /// Whether the comment is shown to the customer.
    pub comment_is_public: bool,
    /// When it happened (ISO 8601 datetime).
    pub created_at: Option<String>,
    /// The customer e-mail the event sent, if any.
    pub mail_log: Option<MailLog>,
}

/// A customer notification e-mail.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct MailLog {
    /// `queued`, `delivered`, …
    pub delivery_status: Option<String>,
}

/// Laravel pagination metadata.
#[derive(Debug, Clone, Deserialize)]
pub struct PageMeta {
    /// The page this is.
    pub current_page: u64,
    /// The last page with rows (at least 1).
    pub last_page: u64,
    /// Rows per page.
    pub per_page: u64,
    /// Rows matching the filters, over all pages.
    pub total: u64,
}

/// The body of `GET /orders`.
#[derive(Debug, Clone, Deserialize)]
pub struct OrderPage {
    /// This page's rows, newest first.
    pub data: Vec<OrderListItem>,
    /// Where this page sits.
    pub meta: PageMeta,
}

/// Reads `null` as the type's default, for objects the API may null out.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_list_row_reads() {
        let row: OrderListItem = serde_json::from_str(
            r##"{"id":6110375248088,"name":"#1188","order_number":"1188",
             "customer":{"name":"Jon Smith","email":"jon@example.com","locale":"en"},
             "status":{"is_set":true,"code":"st000002","name":"In Production","public_name":"Crafting With Care",
               "description":"Order being handcrafted in the workshop","public":true,
               "set_at":"2026-03-12T10:14:00+00:00","auto_change_at":null},
             "due_date":"2026-03-15T00:00:00+00:00","due_date_to":"2026-03-17T00:00:00+00:00","history_count":4}"##,
        )
        .unwrap();
        assert_eq!(row.id, 6110375248088);
        assert_eq!(row.status.code.as_deref(), Some("st000002"));
        assert_eq!(row.customer.email.as_deref(), Some("jon@example.com"));
    }

    #[test]
    fn nulls_and_missing_optional_fields_take_defaults() {
        let order: Order = serde_json::from_str(
            r##"{"id":1,"name":"#1","order_number":"1","customer":null,
                 "status":{"is_set":false,"code":null,"name":null},"history":null}"##,
        )
        .unwrap();
        assert!(order.history.is_empty());
        assert!(order.row.customer.name.is_none());
        assert!(!order.row.status.is_set);
        assert!(order.due_date_to.is_none());
    }
}
