//! `lookup_order`: find an order by its number and the customer's e-mail.

use crate::api;
use crate::output::OrderDetail;
use crate::prelude::*;
use crate::tools::get_order::DEFAULT_HISTORY_LIMIT;

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
        #1188) instead of an id. Both must match. Returns the order like get_order does, \
        with the newest 50 history events.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: LookupOrderInput) -> Result<OrderDetail, ToolError> {
        let client = Client::from_config()?;
        let order: api::Order = client.get(
            "/orders/lookup",
            &[("number", input.number), ("email", input.email)],
        )?;
        Ok(OrderDetail::from_api(
            &order,
            DEFAULT_HISTORY_LIMIT as usize,
        ))
    }
}
