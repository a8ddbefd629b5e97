//! `bulk_update_order_status`: move up to 50 orders to one status, after
//! the user confirms. StatusPro queues the work and applies it later.

use crate::inputs::{STATUS_CODE_PATTERN, yes};
use crate::mutation::{MutationResult, two_step};
use crate::prelude::*;

/// Orders one bulk request may carry.
const MAX_ORDERS: usize = 50;

/// The schema example of `order_ids`.
const EXAMPLE_ORDER_IDS: &[u64] = &[6110375248088, 6110375248089];

/// Arguments of `bulk_update_order_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkUpdateOrderStatusInput {
    /// The orders' Shopify ids, 1 to 50.
    #[schemars(example = EXAMPLE_ORDER_IDS, length(min = 1, max = 50), inner(range(min = 1)))]
    pub order_ids: Vec<u64>,
    /// The 8-character code of the new status, e.g. `st000003` (see list_statuses).
    #[schemars(example = &"st000003", length(min = 8, max = 8), regex(pattern = STATUS_CODE_PATTERN))]
    pub status_code: String,
    /// A comment to add to each order's history with the change.
    #[serde(default)]
    #[schemars(example = &"Shipped with the Monday pickup", length(max = 1000))]
    pub comment: Option<String>,
    /// Show the comment to the customers (default false: staff only).
    #[serde(default)]
    #[schemars(example = false)]
    pub public: bool,
    /// E-mail each customer about the new status (default true).
    #[serde(default = "yes")]
    #[schemars(example = true)]
    pub email_customer: bool,
    /// E-mail the shop's additional recipients too (default true).
    #[serde(default = "yes")]
    #[schemars(example = true)]
    pub email_additional: bool,
    /// false (default): only preview the change, sending nothing. true: ask the user to confirm, then queue the change.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// The preview of a bulk status change.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BulkPreview {
    /// Always `bulk_update_order_status`.
    pub action: &'static str,
    /// The orders.
    pub order_ids: Vec<u64>,
    /// How many orders.
    pub order_count: usize,
    /// The new status.
    pub status_code: String,
    /// The history comment, if any.
    pub comment: Option<String>,
    /// Whether the comment is shown to the customers.
    pub public: bool,
    /// Whether the customers are e-mailed.
    pub email_customer: bool,
    /// Whether the additional recipients are e-mailed.
    pub email_additional: bool,
    /// Whether status_code exists in the shop's catalog; if false StatusPro will reject the request. Orders for which the status is not viable are skipped when the queue runs.
    pub status_exists: bool,
    /// The name of the new status, when it exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_name: Option<String>,
}

/// The request body of `POST /orders/bulk-status`.
#[derive(Serialize)]
struct Body<'a> {
    order_ids: &'a [u64],
    status_code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<&'a str>,
    public: bool,
    email_customer: bool,
    email_additional: bool,
}

/// The note on an executed bulk update.
const QUEUED_NOTE: &str = "Bulk updates are queued and processed asynchronously.";

/// Changes many orders' status at once.
pub struct BulkUpdateOrderStatus;

impl Tool for BulkUpdateOrderStatus {
    type Input = BulkUpdateOrderStatusInput;
    type Output = MutationResult<BulkPreview>;
    const NAME: &'static str = "bulk_update_order_status";
    const TITLE: &'static str = "Bulk Update Order Status";
    const DESCRIPTION: &'static str = "Change the status of up to 50 StatusPro orders at \
        once; use it instead of many update_order_status calls when several orders move \
        together. StatusPro queues the change and applies it shortly after; orders for which \
        the status is not viable (see get_viable_statuses) or that do not exist are skipped. \
        Two steps: with confirm=false (default) it returns a preview and changes nothing; \
        with confirm=true the user is asked to approve, and only then is the change queued.";
    const ANNOTATIONS: Annotations = Annotations::mutating(true, false);

    fn call(&self, input: BulkUpdateOrderStatusInput) -> Result<Self::Output, ToolError> {
        if input.order_ids.is_empty() || input.order_ids.len() > MAX_ORDERS {
            return Err(ToolError::validation(format!(
                "order_ids holds {} ids; give 1 to {MAX_ORDERS}",
                input.order_ids.len()
            )));
        }
        let client = Client::from_config()?;
        let status = client
            .statuses()?
            .into_iter()
            .find(|s| s.code == input.status_code);
        let preview = BulkPreview {
            action: "bulk_update_order_status",
            order_ids: input.order_ids.clone(),
            order_count: input.order_ids.len(),
            status_code: input.status_code.clone(),
            comment: input.comment.clone(),
            public: input.public,
            email_customer: input.email_customer,
            email_additional: input.email_additional,
            status_exists: status.is_some(),
            status_name: status.map(|s| s.name),
        };
        let question = format!(
            "Bulk-update {} orders to status {}?",
            input.order_ids.len(),
            input.status_code
        );
        let mut result = two_step(input.confirm, preview, &question, || {
            client.post(
                "/orders/bulk-status",
                &Body {
                    order_ids: &input.order_ids,
                    status_code: &input.status_code,
                    comment: input.comment.as_deref(),
                    public: input.public,
                    email_customer: input.email_customer,
                    email_additional: input.email_additional,
                },
            )
        })?;
        if result.success == Some(true) {
            result.note = Some(QUEUED_NOTE.to_string());
        }
        Ok(result)
    }
}
