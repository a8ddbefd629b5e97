//! `get_viable_statuses`: where one order may move next, and, when the
//! caller asks, which of them the user wants (a form of the viable
//! statuses by name; contract 0.3). The answer chooses nothing by itself:
//! `update_order_status` still previews and asks the user to confirm.

use toolhost_sdk::{Field, Form, FormAnswer};

use crate::output::StatusEntry;
use crate::prelude::*;

/// Arguments of `get_viable_statuses`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetViableStatusesInput {
    /// The order's Shopify id.
    #[schemars(example = 6110375248088u64, range(min = 1))]
    pub order_id: u64,
    /// true: when more than one status is viable, ask the user which one they want; the answer is in user_choice. Default false: only list them.
    #[serde(default)]
    #[schemars(example = false)]
    pub ask_user: bool,
}

/// The user's answer when `ask_user` was true and several statuses were
/// viable.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UserChoice {
    /// `accepted`, `declined`, `cancelled`, or `unsupported` (the client cannot show forms).
    pub answer: String,
    /// The code the user chose, when accepted; pass it to update_order_status as status_code.
    pub status_code: Option<String>,
}

/// What `get_viable_statuses` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GetViableStatusesOutput {
    /// The order asked about.
    pub order_id: u64,
    /// The statuses the order may move to now; empty when its status is final.
    pub statuses: Vec<StatusEntry>,
    /// The user's choice, when ask_user was true and more than one status was viable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_choice: Option<UserChoice>,
}

/// What the status form's answer holds.
#[derive(Deserialize)]
struct StatusAnswer {
    status_code: String,
}

/// Asks the user which of `statuses` order `order_id` should move to.
fn ask_which(order_id: u64, statuses: &[StatusEntry]) -> Result<UserChoice, ToolError> {
    let options: Vec<(&str, &str)> = statuses
        .iter()
        .map(|s| (s.code.as_str(), s.name.as_str()))
        .collect();
    let form = Form::new().required(
        "status_code",
        Field::choice("New status", &options)
            .description("The status the order should move to; nothing changes until you confirm the change itself."),
    );
    let answer = form.ask::<StatusAnswer>(&format!(
        "Order {order_id} can move to {} statuses. Which one should it move to?",
        statuses.len()
    ))?;
    Ok(UserChoice {
        answer: answer.as_str().to_string(),
        status_code: match answer {
            FormAnswer::Accepted(a) => Some(a.status_code),
            _ => None,
        },
    })
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
        take any status; an empty list means the order's status is final. With \
        ask_user=true and several viable statuses, the user is asked which one they want \
        (user_choice); the choice changes nothing by itself.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: GetViableStatusesInput) -> Result<GetViableStatusesOutput, ToolError> {
        let client = Client::from_config()?;
        let statuses: Vec<StatusEntry> = client
            .viable_statuses(input.order_id)?
            .iter()
            .map(StatusEntry::from_api)
            .collect();
        let user_choice = if input.ask_user && statuses.len() > 1 {
            Some(ask_which(input.order_id, &statuses)?)
        } else {
            None
        };
        Ok(GetViableStatusesOutput {
            order_id: input.order_id,
            statuses,
            user_choice,
        })
    }
}
