//! `get_order`: one order by id, with its history.

use crate::api;
use crate::output::OrderDetail;
use crate::prelude::*;

/// History events returned when `history_limit` is not given.
pub(crate) const DEFAULT_HISTORY_LIMIT: u32 = 50;

/// Arguments of `get_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetOrderInput {
    /// The order's Shopify id (the `id` field of list_orders rows).
    #[schemars(example = 6110375248088u64, range(min = 1))]
    pub order_id: u64,
    /// Most history events to return, newest kept (default 50); the result says when older ones were left out.
    #[serde(default = "default_history_limit")]
    #[schemars(example = 20, range(min = 0, max = 500))]
    pub history_limit: u32,
}

/// `history_limit`'s default, [`DEFAULT_HISTORY_LIMIT`].
pub(crate) fn default_history_limit() -> u32 {
    DEFAULT_HISTORY_LIMIT
}

/// Reads one order.
pub struct GetOrder;

impl Tool for GetOrder {
    type Input = GetOrderInput;
    type Output = OrderDetail;
    const NAME: &'static str = "get_order";
    const TITLE: &'static str = "Get Order";
    const DESCRIPTION: &'static str = "Get one StatusPro order by its id, with its current \
        status, due dates and history of status changes, comments and due-date changes; use \
        it when you know the order_id and need the details or what happened to the order. \
        The history is oldest first and capped by history_limit (newest kept); \
        history_truncated says when events were left out.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: GetOrderInput) -> Result<OrderDetail, ToolError> {
        let client = Client::from_config()?;
        let order: api::Order = client.get(&format!("/orders/{}", input.order_id), &[])?;
        Ok(OrderDetail::from_api(&order, input.history_limit as usize))
    }
}
