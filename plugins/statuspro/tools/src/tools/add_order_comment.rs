//! `add_order_comment`: add a comment to one order's history, after the
//! user confirms.

use crate::mutation::{MutationResult, Plan, two_step};
use crate::prelude::*;

/// Arguments of `add_order_comment`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddOrderCommentInput {
    /// The order's Shopify id.
    #[schemars(example = 6110375248088u64, range(min = 1))]
    pub order_id: u64,
    /// The comment, 3 to 1000 characters.
    #[schemars(example = &"Customer asked to gift-wrap the order.", length(min = 3, max = 1000))]
    pub comment: String,
    /// Show the comment to the customer (default false: staff only).
    #[serde(default)]
    #[schemars(example = false)]
    pub public: bool,
    /// false (default): only preview the comment, sending nothing. true: ask the user to confirm, then add it.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// The preview of a comment.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CommentPreview {
    /// Always `add_order_comment`.
    pub action: &'static str,
    /// The order.
    pub order_id: u64,
    /// The comment.
    pub comment: String,
    /// Whether the customer will see it.
    pub public: bool,
}

/// The request body of `POST /orders/{id}/comment`.
#[derive(Serialize)]
struct Body<'a> {
    comment: &'a str,
    public: bool,
}

/// Adds a comment to an order.
pub struct AddOrderComment;

impl Tool for AddOrderComment {
    type Input = AddOrderCommentInput;
    type Output = MutationResult<CommentPreview>;
    const NAME: &'static str = "add_order_comment";
    const TITLE: &'static str = "Add Order Comment";
    const DESCRIPTION: &'static str = "Add a comment to one StatusPro order's history, for \
        staff only or visible to the customer; use it to record a note without changing the \
        status. It only adds: nothing already on the order is changed, and each call adds one \
        more comment. Two steps: with confirm=false (default) it returns a preview and \
        changes nothing; with confirm=true the user is asked to approve, and only then is the \
        comment added.";
    // Adds an event and never overwrites one (not destructive); every call
    // adds another (not idempotent).
    const ANNOTATIONS: Annotations = Annotations::mutating(false, false);

    fn call(&self, input: AddOrderCommentInput) -> Result<Self::Output, ToolError> {
        let client = Client::from_config()?;
        let preview = CommentPreview {
            action: "add_order_comment",
            order_id: input.order_id,
            comment: input.comment.clone(),
            public: input.public,
        };
        let id = input.order_id;
        let plan = Plan {
            preview,
            summary: format!("add the comment to order {id}"),
            question: format!("Add comment to order {id}?"),
            action: format!("Comment on order {id}"),
            done: format!("Added the comment to order {id}'s history"),
            warnings: Vec::new(),
            check: format!("Read order {id}'s history with get_order"),
        };
        two_step(input.confirm, plan, || {
            client.post(
                &format!("/orders/{}/comment", input.order_id),
                &Body {
                    comment: &input.comment,
                    public: input.public,
                },
            )
        })
    }
}
