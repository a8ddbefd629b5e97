//! `list_statuses`: the status catalog.

use crate::output::StatusEntry;
use crate::prelude::*;

/// Arguments of `list_statuses`: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListStatusesInput {}

/// What `list_statuses` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListStatusesOutput {
    /// Every status the shop defines, in the shop's order.
    pub statuses: Vec<StatusEntry>,
}

/// Lists the status catalog.
pub struct ListStatuses;

impl Tool for ListStatuses {
    type Input = ListStatusesInput;
    type Output = ListStatusesOutput;
    const NAME: &'static str = "list_statuses";
    const TITLE: &'static str = "List Statuses";
    const DESCRIPTION: &'static str = "List every order status the StatusPro shop defines \
        (code, name, description, color); use it to learn what the status codes mean or to \
        find a code by name. Which statuses one order may move to next is get_viable_statuses.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, _input: ListStatusesInput) -> Result<ListStatusesOutput, ToolError> {
        let client = Client::from_config()?;
        let statuses = client.statuses()?;
        Ok(ListStatusesOutput {
            statuses: statuses.iter().map(StatusEntry::from_api).collect(),
        })
    }
}
