//! `update_order_status`: move one order to another status, after the
//! user confirms.

use crate::inputs::{STATUS_CODE_PATTERN, yes};
use crate::mutation::{MutationResult, two_step};
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
        shipped). Call get_viable_statuses first: only those statuses are accepted. Two \
        steps: with confirm=false (default) it returns a preview, including whether the \
        status is viable, and changes nothing; with confirm=true the user is asked to \
        approve, and only then is the change made.";
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
            viable_status_codes: (!status_viable).then_some(viable),
        };
        let question = format!(
            "Change order {} status to {}?",
            input.order_id, input.status_code
        );
        two_step(input.confirm, preview, &question, || {
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
