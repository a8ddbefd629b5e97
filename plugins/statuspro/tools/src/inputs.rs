//! Input pieces several tools share: the order-state enums, the checks the
//! input schema cannot express, and a schema transform that keeps enums
//! plain.
//!
//! The schema carries what it can (`status_code` as `^st\d{6}$`, dates as
//! `format: date` plus a `YYYY-MM-DD` pattern, bounds, enums) and the host
//! rejects arguments that break it before the tool runs. What a schema
//! cannot say (that 2026-02-30 is not a day, that a range ends after it
//! starts) is checked here, before anything is sent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

/// The pattern of a status code: `st` and six digits.
pub const STATUS_CODE_PATTERN: &str = r"^st\d{6}$";

/// The pattern of a date: `YYYY-MM-DD`.
pub const DATE_PATTERN: &str = r"^\d{4}-\d{2}-\d{2}$";

/// A Shopify financial status, for filtering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = plain_enum)]
pub enum FinancialStatus {
    /// Paid in full.
    Paid,
    /// Partly paid.
    PartiallyPaid,
    /// Partly refunded.
    PartiallyRefunded,
    /// Refunded in full.
    Refunded,
    /// The authorization was voided.
    Voided,
    /// Payment pending.
    Pending,
    /// Payment authorized, not captured.
    Authorized,
    /// Not paid.
    Unpaid,
}

/// A Shopify fulfillment status, for filtering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = plain_enum)]
pub enum FulfillmentStatus {
    /// Nothing shipped yet.
    Unfulfilled,
    /// Some items shipped.
    Partial,
    /// Items returned to stock.
    Restocked,
    /// Everything shipped.
    Fulfilled,
}

impl FinancialStatus {
    /// The value the API expects.
    pub fn as_str(self) -> &'static str {
        match self {
            FinancialStatus::Paid => "paid",
            FinancialStatus::PartiallyPaid => "partially_paid",
            FinancialStatus::PartiallyRefunded => "partially_refunded",
            FinancialStatus::Refunded => "refunded",
            FinancialStatus::Voided => "voided",
            FinancialStatus::Pending => "pending",
            FinancialStatus::Authorized => "authorized",
            FinancialStatus::Unpaid => "unpaid",
        }
    }
}

impl FulfillmentStatus {
    /// The value the API expects.
    pub fn as_str(self) -> &'static str {
        match self {
            FulfillmentStatus::Unfulfilled => "unfulfilled",
            FulfillmentStatus::Partial => "partial",
            FulfillmentStatus::Restocked => "restocked",
            FulfillmentStatus::Fulfilled => "fulfilled",
        }
    }
}

pub use toolhost_sdk::schema::plain_enum;

/// `Ok` when `value` (already `YYYY-MM-DD` by the schema) is a real
/// calendar day; a `VALIDATION_ERROR` naming `field` otherwise.
pub fn check_date(field: &str, value: &str) -> Result<(), ToolError> {
    if is_calendar_date(value) {
        Ok(())
    } else {
        Err(
            ToolError::validation(format!("{field} {value:?} is not a calendar date"))
                .with_hint(format!("give {field} as YYYY-MM-DD, e.g. 2026-03-15")),
        )
    }
}

/// Whether `value` is `YYYY-MM-DD` naming a day that exists.
fn is_calendar_date(value: &str) -> bool {
    let parts: Vec<&str> = value.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>())
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `Ok` when the range `from..=to` does not end before it starts.
pub fn check_range(
    from_field: &str,
    from: &str,
    to_field: &str,
    to: &str,
) -> Result<(), ToolError> {
    // Both are YYYY-MM-DD, so text order is date order.
    if to < from {
        Err(
            ToolError::validation(format!("{to_field} ({to}) is before {from_field} ({from})"))
                .with_hint(format!("give a {to_field} on or after {from_field}")),
        )
    } else {
        Ok(())
    }
}

/// `true`, for `#[serde(default = …)]` on flags that default to on.
pub fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn enums_are_plain_string_enums_in_the_schema() {
        let schema = schemars::schema_for!(FinancialStatus);
        assert_eq!(schema.get("type"), Some(&Value::from("string")));
        assert_eq!(
            schema.get("enum").unwrap(),
            &serde_json::json!([
                "paid",
                "partially_paid",
                "partially_refunded",
                "refunded",
                "voided",
                "pending",
                "authorized",
                "unpaid"
            ])
        );
        assert!(schema.get("oneOf").is_none());
    }

    #[test]
    fn the_api_spelling_is_the_serde_spelling() {
        use FinancialStatus as F;
        use FulfillmentStatus as S;
        let financial = [
            F::Paid,
            F::PartiallyPaid,
            F::PartiallyRefunded,
            F::Refunded,
            F::Voided,
            F::Pending,
            F::Authorized,
            F::Unpaid,
        ];
        for status in financial {
            assert_eq!(
                Value::from(status.as_str()),
                serde_json::to_value(status).unwrap()
            );
        }
        for status in [S::Unfulfilled, S::Partial, S::Restocked, S::Fulfilled] {
            assert_eq!(
                Value::from(status.as_str()),
                serde_json::to_value(status).unwrap()
            );
        }
    }

    #[test]
    fn calendar_dates_are_checked() {
        assert!(check_date("due_date", "2026-03-15").is_ok());
        assert!(check_date("due_date", "2028-02-29").is_ok());
        assert!(check_date("due_date", "2026-02-29").is_err());
        assert!(check_date("due_date", "2026-13-01").is_err());
        assert!(check_date("due_date", "2026-04-31").is_err());
        let e = check_date("due_date_to", "2026-00-10").unwrap_err();
        assert!(e.message.contains("due_date_to"));
    }

    #[test]
    fn ranges_must_not_end_before_they_start() {
        assert!(check_range("due_date", "2026-03-15", "due_date_to", "2026-03-15").is_ok());
        assert!(check_range("due_date", "2026-03-15", "due_date_to", "2026-03-14").is_err());
    }
}
