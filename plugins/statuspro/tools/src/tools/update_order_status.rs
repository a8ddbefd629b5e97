//! `update_order_status`: move one order to another status, after the
//! user confirms.
//!
//! Both steps read the order's viable statuses first: the preview says
//! whether the status is one of them, and a confirmed call for a status
//! the order cannot take is a `VALIDATION_ERROR` listing the ones it can,
//! before the user is asked.

use crate::inputs::{STATUS_CODE_PATTERN, yes};
use crate::mutation::{MutationResult, Plan, two_step};
use crate::prelude::*;

/// Arguments of `update_order_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateOrderStatusInput {
    /// The order's Shopify id.
    #[schemars(example = 6110375248088u64, range(min = 1))]
    pub order_id: u64,
    /// The 8-character code of the new status, e.g. `st000003`; get_viable_statuses lists the codes this order accepts.
    #[schemars(example = &"st000003", length(min = 8, max = 8), regex(pattern = STATUS_CODE_PATTERN))]
    pub status_code: String,
    /// A comment to add to the order's history with the change.
    #[serde(default)]
    #[schemars(example = &"Handed to DHL, tracking 00340434161094042557", length(max = 1000))]
    pub comment: Option<String>,
    /// Show the comment to the customer (default false: staff only).
    #[serde(default)]
    #[schemars(example = false)]
    pub public: bool,
    /// E-mail the customer about the new status (default true).
    #[serde(default = "yes")]
    #[schemars(example = true)]
    pub email_customer: bool,
    /// E-mail the shop's additional recipients too (default true).
    #[serde(default = "yes")]
    #[schemars(example = true)]
    pub email_additional: bool,
    /// false (default): only preview the change, sending nothing. true: ask the user to confirm, then make the change.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// The preview of a status change.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StatusChangePreview {
    /// Always `update_order_status`.
    pub action: &'static str,
    /// The order.
    pub order_id: u64,
    /// The new status.
    pub status_code: String,
    /// The history comment, if any.
    pub comment: Option<String>,
    /// Whether the comment is shown to the customer.
    pub public: bool,
    /// Whether the customer is e-mailed.
    pub email_customer: bool,
    /// Whether the additional recipients are e-mailed.
    pub email_additional: bool,
    /// Whether the order may move to status_code now; if false StatusPro will reject the change.
    pub status_viable: bool,
    /// When status_viable is false: the codes the order may move to instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viable_status_codes: Option<Vec<String>>,
}

/// The request body of `POST /orders/{id}/status`.
#[derive(Serialize)]
struct Body<'a> {
    status_code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<&'a str>,
    public: bool,
    email_customer: bool,
    email_additional: bool,
}

/// Changes an order's status.
pub struct UpdateOrderStatus;

impl Tool for UpdateOrderStatus {
    type Input = UpdateOrderStatusInput;
    type Output = MutationResult<StatusChangePreview>;
    const NAME: &'static str = "update_order_status";
    const TITLE: &'static str = "Update Order Status";
    const DESCRIPTION: &'static str = "Change one StatusPro order's status, optionally with a \
        history comment and customer e-mail; use it when an order has moved on (e.g. \
        shipped). Call get_viable_statuses first: only those statuses are accepted, and a \
        confirmed call for another is refused, listing the viable codes, before the user \
        is asked. Two steps: with confirm=false (default) it returns a preview, including \
        whether the status is viable, and changes nothing; with confirm=true the user is \
        asked to approve, and only then is the change made.";
    const ANNOTATIONS: Annotations = Annotations::mutating(true, false);

    fn call(&self, input: UpdateOrderStatusInput) -> Result<Self::Output, ToolError> {
        let client = Client::from_config()?;
        let viable: Vec<String> = client
            .viable_statuses(input.order_id)?
            .into_iter()
            .map(|s| s.code)
            .collect();
        let status_viable = viable.contains(&input.status_code);
        let preview = StatusChangePreview {
            action: "update_order_status",
            order_id: input.order_id,
            status_code: input.status_code.clone(),
            comment: input.comment.clone(),
            public: input.public,
            email_customer: input.email_customer,
            email_additional: input.email_additional,
            status_viable,
            viable_status_codes: (!status_viable).then(|| viable.clone()),
        };
        let (id, code) = (input.order_id, &input.status_code);
        if input.confirm && !status_viable {
            return Err(not_viable(id, code, &viable));
        }
        let plan = Plan {
            preview,
            summary: format!("change the status of order {id} to {code}"),
            question: format!("Change order {id} status to {code}?"),
            action: format!("Status change of order {id}"),
            done: format!("Order {id} is now in status {code}"),
            warnings: if status_viable {
                Vec::new()
            } else {
                vec![not_viable(id, code, &viable).message]
            },
            check: format!("Read order {id} with get_order"),
        };
        two_step(input.confirm, plan, || {
            client.post(
                &format!("/orders/{}/status", input.order_id),
                &Body {
                    status_code: &input.status_code,
                    comment: input.comment.as_deref(),
                    public: input.public,
                    email_customer: input.email_customer,
                    email_additional: input.email_additional,
                },
            )
        })
    }
}

/// The refusal of a status `order_id` cannot take, listing the `viable` codes.
pub(crate) fn not_viable(order_id: u64, status_code: &str, viable: &[String]) -> ToolError {
    let codes = if viable.is_empty() {
        "none: its status is final".to_string()
    } else {
        viable.join(", ")
    };
    ToolError::validation(format!(
        "Order {order_id} cannot move to status {status_code} now; the statuses it can take \
         are: {codes}."
    ))
    .with_hint(
        "Use one of those codes (get_viable_statuses lists them with their names); nothing was \
         asked or changed.",
    )
}
