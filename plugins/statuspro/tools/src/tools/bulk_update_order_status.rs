//! `bulk_update_order_status`: move up to 50 orders to one status, after
//! the user confirms. StatusPro queues the work and applies it later.
//!
//! Both steps read every order's viable statuses first (one `GET` each):
//! the preview lists the orders that cannot take the status (or do not
//! exist), and a confirmed call with any such order is a
//! `VALIDATION_ERROR` listing them and their viable codes, before the user
//! is asked. (StatusPro itself would skip them silently.)

use toolhost_sdk::ErrorCode;

use crate::inputs::{STATUS_CODE_PATTERN, yes};
use crate::mutation::{MutationResult, Plan, two_step};
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
    /// Whether status_code exists in the shop's catalog; if false StatusPro will reject the request.
    pub status_exists: bool,
    /// The name of the new status, when it exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_name: Option<String>,
    /// The orders that cannot take status_code now (or do not exist); a confirmed call is refused while any are listed.
    pub orders_not_viable: Vec<NotViable>,
}

/// An order of a bulk request that cannot take the new status.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NotViable {
    /// The order.
    pub order_id: u64,
    /// Whether StatusPro knows the order at all.
    pub exists: bool,
    /// The codes the order can move to now (empty when it does not exist).
    pub viable_status_codes: Vec<String>,
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
pub const QUEUED_NOTE: &str = "Bulk updates are queued and processed asynchronously.";

/// Changes many orders' status at once.
pub struct BulkUpdateOrderStatus;

impl Tool for BulkUpdateOrderStatus {
    type Input = BulkUpdateOrderStatusInput;
    type Output = MutationResult<BulkPreview>;
    const NAME: &'static str = "bulk_update_order_status";
    const TITLE: &'static str = "Bulk Update Order Status";
    const DESCRIPTION: &'static str = "Change the status of up to 50 StatusPro orders at \
        once; use it instead of many update_order_status calls when several orders move \
        together. StatusPro queues the change and applies it shortly after. Every order must \
        be able to take the status (see get_viable_statuses): a confirmed call with an order \
        that cannot, or does not exist, is refused before the user is asked. Two steps: with confirm=false (default) it returns a preview and changes nothing; \
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
        let mut orders_not_viable = Vec::new();
        for &order_id in &input.order_ids {
            match client.viable_statuses(order_id) {
                Ok(viable) if viable.iter().any(|s| s.code == input.status_code) => {}
                Ok(viable) => orders_not_viable.push(NotViable {
                    order_id,
                    exists: true,
                    viable_status_codes: viable.into_iter().map(|s| s.code).collect(),
                }),
                Err(e) if e.code == ErrorCode::NotFound => orders_not_viable.push(NotViable {
                    order_id,
                    exists: false,
                    viable_status_codes: Vec::new(),
                }),
                Err(e) => return Err(e),
            }
        }
        let problems = describe(&orders_not_viable, &input.status_code);
        if input.confirm && !problems.is_empty() {
            return Err(ToolError::validation(problems.join(" ")).with_hint(
                "Leave those orders out of order_ids, or give them a status they can take \
                 (get_viable_statuses lists it); nothing was asked or changed.",
            ));
        }
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
            orders_not_viable,
        };
        let (n, code) = (input.order_ids.len(), &input.status_code);
        let plan = Plan {
            preview,
            summary: format!("move {n} orders to status {code}"),
            question: format!("Bulk-update {n} orders to status {code}?"),
            action: format!("Bulk status change of {n} orders"),
            done: format!("Queued {n} orders for status {code}. {QUEUED_NOTE}"),
            warnings: problems,
            check: "Read the orders with get_order".to_string(),
        };
        let result = two_step(input.confirm, plan, || {
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
        Ok(result)
    }
}

/// One sentence per order that cannot take `status_code`.
fn describe(orders: &[NotViable], status_code: &str) -> Vec<String> {
    orders
        .iter()
        .map(|o| {
            if !o.exists {
                format!("Order {} does not exist.", o.order_id)
            } else if o.viable_status_codes.is_empty() {
                format!(
                    "Order {} cannot move to {status_code}: its status is final.",
                    o.order_id
                )
            } else {
                format!(
                    "Order {} cannot move to {status_code}; it can take {}.",
                    o.order_id,
                    o.viable_status_codes.join(", ")
                )
            }
        })
        .collect()
}
