//! `get_viable_statuses`: where one order may move next.

use crate::output::StatusEntry;
use crate::prelude::*;

/// Arguments of `get_viable_statuses`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetViableStatusesInput {
    /// The order's Shopify id.
    #[schemars(example = 6110375248088u64, range(min = 1))]
    pub order_id: u64,
}

/// What `get_viable_statuses` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GetViableStatusesOutput {
    /// The order asked about.
    pub order_id: u64,
    /// The statuses the order may move to now; empty when its status is final.
    pub statuses: Vec<StatusEntry>,
}

/// Lists the statuses an order may move to.
pub struct GetViableStatuses;

impl Tool for GetViableStatuses {
    type Input = GetViableStatusesInput;
    type Output = GetViableStatusesOutput;
    const NAME: &'static str = "get_viable_statuses";
    const TITLE: &'static str = "Get Viable Statuses";
    const DESCRIPTION: &'static str = "List the statuses one StatusPro order may move to \
        next; use it to pick a status_code, and call it before update_order_status, since \
        StatusPro rejects a status the order cannot take. An order with no status yet may \
        take any status; an empty list means the order's status is final.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: GetViableStatusesInput) -> Result<GetViableStatusesOutput, ToolError> {
        let client = Client::from_config()?;
        let statuses = client.viable_statuses(input.order_id)?;
        Ok(GetViableStatusesOutput {
            order_id: input.order_id,
            statuses: statuses.iter().map(StatusEntry::from_api).collect(),
        })
    }
}
