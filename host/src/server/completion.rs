//! `completion/complete`: a prompt argument's or a template variable's
//! values, completed by the component that offers it, as far as the
//! caller may see it.

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::Gateway;
use super::request::Request;
use super::resources::offer_error;
use crate::bindings::v0_2::content::CompletionTarget;
use crate::call::offer::OfferKind;
use crate::rules::Target;

/// `completion/complete`. An argument the component does not complete
/// gets no values, without running it.
pub(super) async fn complete(
    gateway: &Gateway,
    request: &Request,
    params: CompleteRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CompleteResult, ErrorData> {
    let visible = request.visible();
    let argument = params.argument.name;
    let (plugin, target, completable, served) = match &params.r#ref {
        Reference::Prompt(p) => {
            let prompt = visible.prompt(&p.name).ok_or_else(|| {
                ErrorData::invalid_params(format!("unknown prompt {:?}", p.name), None)
            })?;
            let declared = prompt
                .item
                .arguments
                .iter()
                .find(|a| a.name == argument)
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("prompt {:?} has no argument {argument:?}", p.name),
                        None,
                    )
                })?;
            (
                prompt.plugin.clone(),
                CompletionTarget::Prompt(prompt.item.name.clone()),
                declared.completable,
                prompt.key.clone(),
            )
        }
        Reference::Resource(r) => {
            let template = visible.template(&r.uri).ok_or_else(|| {
                ErrorData::invalid_params(
                    format!(
                        "unknown resource template {:?}; call resources/templates/list",
                        r.uri
                    ),
                    None,
                )
            })?;
            if !template.item.variables.contains(&argument) {
                return Err(ErrorData::invalid_params(
                    format!("resource template {:?} has no variable {argument:?}", r.uri),
                    None,
                ));
            }
            (
                template.plugin.clone(),
                CompletionTarget::ResourceTemplate(template.item.definition.uri_template.clone()),
                template.item.definition.completable.contains(&argument),
                template.item.definition.uri_template.clone(),
            )
        }
        _ => {
            return Err(ErrorData::invalid_params(
                "completion/complete refers to a prompt (ref/prompt) or a resource template (ref/resource)",
                None,
            ));
        }
    };
    if !completable {
        return Ok(CompleteResult::default());
    }
    let context_arguments: Vec<(String, String)> = params
        .context
        .and_then(|c| c.arguments)
        .map(|a| a.into_iter().collect())
        .unwrap_or_default();
    let env = &gateway.inner.env;
    let value = params.argument.value;
    let recorded = json!({
        "argument": argument,
        "value": value,
        "context": context_arguments
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect::<serde_json::Map<String, Value>>(),
    });
    let completions = request
        .run_offer(
            gateway,
            &context.ct,
            &plugin,
            (
                OfferKind::Completion,
                match target {
                    CompletionTarget::Prompt(_) => Target::Prompt(&served),
                    CompletionTarget::ResourceTemplate(_) => Target::Resource(&served),
                },
            ),
            recorded,
            |hooks| {
                crate::call::offer::complete(
                    env,
                    &plugin,
                    &target,
                    &argument,
                    &value,
                    &context_arguments,
                    hooks,
                )
            },
        )
        .await?
        .map_err(|e| offer_error(e, |m| ErrorData::invalid_params(m, None)))?;
    let mut values = completions.values;
    let more = values.len() > CompletionInfo::MAX_VALUES;
    values.truncate(CompletionInfo::MAX_VALUES);
    let info =
        CompletionInfo::with_pagination(values, completions.total, completions.has_more || more)
            .map_err(|e| ErrorData::internal_error(e, None))?;
    Ok(CompleteResult::new(info))
}
