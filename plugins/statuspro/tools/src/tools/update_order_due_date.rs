//! `update_order_due_date`: set one order's due date (or range), or clear
//! it with `due_date: null`, after the user confirms.

use crate::inputs::{DATE_PATTERN, check_date, check_range};
use crate::mutation::{MutationResult, Plan, two_step};
use crate::prelude::*;

/// Arguments of `update_order_due_date`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateOrderDueDateInput {
    /// The order's Shopify id.
    #[schemars(example = 6110375248088u64, range(min = 1))]
    pub order_id: u64,
    /// The due date, YYYY-MM-DD; null clears the order's due date (and its range).
    #[schemars(required, example = &"2026-03-15", regex(pattern = DATE_PATTERN), extend("format" = "date", "type" = ["string", "null"]))]
    pub due_date: Option<String>,
    /// End of a due-date range, YYYY-MM-DD, on or after due_date; leave it out for a single day.
    #[serde(default)]
    #[schemars(example = &"2026-03-17", regex(pattern = DATE_PATTERN), extend("format" = "date"))]
    pub due_date_to: Option<String>,
    /// false (default): only preview the change, sending nothing. true: ask the user to confirm, then set the date.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// The preview of a due-date change.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DueDatePreview {
    /// Always `update_order_due_date`.
    pub action: &'static str,
    /// The order.
    pub order_id: u64,
    /// The new due date; null when it is cleared.
    pub due_date: Option<String>,
    /// The new end of the range; null for a single day.
    pub due_date_to: Option<String>,
}

/// The request body of `POST /orders/{id}/due-date`: `due_date` is sent
/// even when null (StatusPro requires the key; null clears).
#[derive(Serialize)]
struct Body<'a> {
    due_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    due_date_to: Option<&'a str>,
}

/// Sets an order's due date.
pub struct UpdateOrderDueDate;

impl Tool for UpdateOrderDueDate {
    type Input = UpdateOrderDueDateInput;
    type Output = MutationResult<DueDatePreview>;
    const NAME: &'static str = "update_order_due_date";
    const TITLE: &'static str = "Update Order Due Date";
    const DESCRIPTION: &'static str = "Set one StatusPro order's due date, or a due-date range \
        with due_date_to, replacing any earlier one, or clear it with due_date null; use it \
        when a delivery or production date is promised, moves or no longer holds. Every call \
        also adds an event to the order's history. Two steps: with confirm=false (default) \
        it returns a preview and changes nothing; with confirm=true the user is asked to \
        approve, and only then is the date set.";
    // Replaces the date (destructive); each call appends a history event,
    // so a repeat is not without effect (not idempotent).
    const ANNOTATIONS: Annotations = Annotations::mutating(true, false);

    fn call(&self, input: UpdateOrderDueDateInput) -> Result<Self::Output, ToolError> {
        match (&input.due_date, &input.due_date_to) {
            (Some(from), to) => {
                check_date("due_date", from)?;
                if let Some(to) = to {
                    check_date("due_date_to", to)?;
                    check_range("due_date", from, "due_date_to", to)?;
                }
            }
            (None, Some(_)) => {
                return Err(
                    ToolError::validation("due_date_to was given with due_date null").with_hint(
                        "null clears the whole due date: leave due_date_to out, or give due_date \
                     too to set a range",
                    ),
                );
            }
            (None, None) => {}
        }
        let client = Client::from_config()?;
        let preview = DueDatePreview {
            action: "update_order_due_date",
            order_id: input.order_id,
            due_date: input.due_date.clone(),
            due_date_to: input.due_date_to.clone(),
        };
        let id = input.order_id;
        let (summary, question, done) = match &input.due_date {
            Some(date) => (
                format!("set the due date of order {id} to {date}"),
                format!("Set due_date={date} for order {id}?"),
                format!("Order {id} is now due {date}"),
            ),
            None => (
                format!("clear the due date of order {id}"),
                format!("Clear the due date of order {id}?"),
                format!("Order {id} no longer has a due date"),
            ),
        };
        let plan = Plan {
            preview,
            summary,
            question,
            action: format!("Due date change of order {id}"),
            done,
            warnings: Vec::new(),
            check: format!("Read order {id} with get_order"),
        };
        two_step(input.confirm, plan, || {
            client.post(
                &format!("/orders/{}/due-date", input.order_id),
                &Body {
                    due_date: input.due_date.as_deref(),
                    due_date_to: input.due_date_to.as_deref(),
                },
            )
        })
    }
}
