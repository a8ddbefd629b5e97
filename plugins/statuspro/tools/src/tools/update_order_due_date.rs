//! `update_order_due_date`: set one order's due date (or range), after the
//! user confirms.

use crate::inputs::{DATE_PATTERN, check_date, check_range};
use crate::mutation::{MutationResult, two_step};
use crate::prelude::*;

/// Arguments of `update_order_due_date`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateOrderDueDateInput {
    /// The order's Shopify id.
    #[schemars(example = 6110375248088u64, range(min = 1))]
    pub order_id: u64,
    /// The due date, YYYY-MM-DD.
    #[schemars(example = &"2026-03-15", regex(pattern = DATE_PATTERN), extend("format" = "date"))]
    pub due_date: String,
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
    /// The new due date.
    pub due_date: String,
    /// The new end of the range; null for a single day.
    pub due_date_to: Option<String>,
}

/// The request body of `POST /orders/{id}/due-date`.
#[derive(Serialize)]
struct Body<'a> {
    due_date: &'a str,
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
        with due_date_to, replacing any earlier one; use it when a delivery or production \
        date is promised or moves. Two steps: with confirm=false (default) it returns a \
        preview and changes nothing; with confirm=true the user is asked to approve, and \
        only then is the date set.";
    const ANNOTATIONS: Annotations = Annotations::mutating(true, true);

    fn call(&self, input: UpdateOrderDueDateInput) -> Result<Self::Output, ToolError> {
        check_date("due_date", &input.due_date)?;
        if let Some(to) = &input.due_date_to {
            check_date("due_date_to", to)?;
            check_range("due_date", &input.due_date, "due_date_to", to)?;
        }
        let client = Client::from_config()?;
        let preview = DueDatePreview {
            action: "update_order_due_date",
            order_id: input.order_id,
            due_date: input.due_date.clone(),
            due_date_to: input.due_date_to.clone(),
        };
        let question = format!(
            "Set due_date={} for order {}?",
            input.due_date, input.order_id
        );
        two_step(input.confirm, preview, &question, || {
            client.post(
                &format!("/orders/{}/due-date", input.order_id),
                &Body {
                    due_date: &input.due_date,
                    due_date_to: input.due_date_to.as_deref(),
                },
            )
        })
    }
}
