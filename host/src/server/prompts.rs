//! `prompts/list` and `prompts/get`: the prompts 0.2 and 0.3 components
//! offer, as far as the caller may see them.

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult, PromptMessage,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::Gateway;
use super::convert::{mcp_block, mcp_prompt, mcp_role};
use super::request::Request;
use super::resources::offer_error;
use crate::call::offer::OfferKind;
use crate::rules::Target;

/// `prompts/list`.
pub(super) fn list(request: &Request) -> ListPromptsResult {
    let visible = request.visible();
    let prompts = visible
        .prompts()
        .map(|p| visible.show_prompt(mcp_prompt(&p.key, &p.item)))
        .collect();
    ListPromptsResult::with_all_items(prompts)
}

/// `prompts/get`: checks the arguments against the prompt's declaration
/// (every one a string, none undeclared, every required one present),
/// then runs the component.
pub(super) async fn get(
    gateway: &Gateway,
    request: &Request,
    params: GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    let Some(prompt) = request.visible().prompt(&params.name).cloned() else {
        if let Some(loading) = gateway.still_loading() {
            return Err(ErrorData::invalid_params(
                format!("no prompt {:?} is served yet: {loading}", params.name),
                None,
            ));
        }
        return Err(ErrorData::invalid_params(
            format!(
                "unknown prompt {:?}; call prompts/list to see the prompts available",
                params.name
            ),
            None,
        ));
    };
    let arguments = string_arguments(params.arguments)?;
    let declared = &prompt.item.arguments;
    if let Some((name, _)) = arguments
        .iter()
        .find(|(name, _)| !declared.iter().any(|a| &a.name == name))
    {
        return Err(ErrorData::invalid_params(
            format!(
                "prompt {:?} has no argument {name:?}; its arguments are listed by prompts/list",
                params.name
            ),
            None,
        ));
    }
    if let Some(missing) = declared
        .iter()
        .find(|a| a.required && !arguments.iter().any(|(name, _)| name == &a.name))
    {
        return Err(ErrorData::invalid_params(
            format!(
                "prompt {:?} needs the argument {:?}",
                params.name, missing.name
            ),
            None,
        ));
    }
    let env = &gateway.inner.env;
    let recorded = Value::Object(
        arguments
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect(),
    );
    let result = request
        .run_offer(
            gateway,
            &context.ct,
            &prompt.plugin,
            (OfferKind::PromptGet, Target::Prompt(&prompt.key)),
            recorded,
            |hooks| {
                crate::call::offer::get_prompt(
                    env,
                    &prompt.plugin,
                    &prompt.item.name,
                    &arguments,
                    hooks,
                )
            },
        )
        .await?
        .map_err(|e| offer_error(e, |m| ErrorData::invalid_params(m, None)))?;
    let mut answer = GetPromptResult::new(
        result
            .messages
            .into_iter()
            .map(|m| PromptMessage::new(mcp_role(m.role), mcp_block(m.content)))
            .collect(),
    );
    if let Some(description) = result.description {
        answer = answer.with_description(description);
    }
    Ok(answer.into())
}

/// The string arguments of a request: every value must be a string.
fn string_arguments(
    arguments: Option<rmcp::model::JsonObject>,
) -> Result<Vec<(String, String)>, ErrorData> {
    arguments
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(v) => Ok((name, v)),
            other => Err(ErrorData::invalid_params(
                format!("argument {name:?} is {other}, but prompt arguments are strings"),
                None,
            )),
        })
        .collect()
}
