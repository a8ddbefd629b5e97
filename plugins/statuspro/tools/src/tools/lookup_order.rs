//! `lookup_order`: find an order by its number and the customer's e-mail.

use toolhost_sdk::ErrorCode;

use crate::api;
use crate::output::OrderDetail;
use crate::prelude::*;
use crate::tools::get_order::default_history_limit;

/// Arguments of `lookup_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupOrderInput {
    /// The order number as the customer knows it, with or without `#`.
    #[schemars(example = &"#1188", length(min = 1, max = 32), regex(pattern = r"^#?\d+$"))]
    pub number: String,
    /// The e-mail address on the order (any letter case).
    #[schemars(example = &"jon@example.com", email, length(min = 3, max = 254))]
    pub email: String,
    /// Most history events to return, newest kept (default 50); the result says when older ones were left out.
    #[serde(default = "default_history_limit")]
    #[schemars(example = 20, range(min = 0, max = 500))]
    pub history_limit: u32,
}

/// Finds an order by number and e-mail.
pub struct LookupOrder;

impl Tool for LookupOrder {
    type Input = LookupOrderInput;
    type Output = OrderDetail;
    const NAME: &'static str = "lookup_order";
    const TITLE: &'static str = "Look Up Order";
    const DESCRIPTION: &'static str = "Look up a StatusPro order by its order number and the \
        customer's e-mail address; use it when a customer quotes their order number (e.g. \
        #1188) instead of an id. Both must match. Returns the order like get_order does: \
        its history is capped by history_limit (default 50, newest kept).";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: LookupOrderInput) -> Result<OrderDetail, ToolError> {
        let client = Client::from_config()?;
        let order: api::Order = client
            .get(
                "/orders/lookup",
                &[("number", input.number), ("email", input.email)],
            )
            .map_err(|e| match e.code {
                ErrorCode::NotFound => e.with_hint(
                    "No order has this number with this e-mail address. Check both (the number \
                     as the customer quotes it, e.g. #1188, and the e-mail on the order), or \
                     search for the customer with list_orders (search).",
                ),
                _ => e,
            })?;
        Ok(OrderDetail::from_api(&order, input.history_limit as usize))
    }
}
