//! `resources/list`, `resources/templates/list` and `resources/read`: what
//! 0.2 components offer at URIs, as far as the caller may see it.

use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

use super::Gateway;
use super::convert::{mcp_contents, mcp_resource, mcp_template};
use super::request::{Request, ResourceTarget};
use crate::call::offer::{OfferError, OfferKind};
use crate::rules::Target;

/// `resources/list`.
pub(super) fn list(request: &Request) -> ListResourcesResult {
    let visible = request.visible();
    let resources = visible
        .resources()
        .map(|r| visible.show_resource(mcp_resource(&r.item)))
        .collect();
    ListResourcesResult::with_all_items(resources)
}

/// `resources/templates/list`.
pub(super) fn list_templates(request: &Request) -> ListResourceTemplatesResult {
    let templates = request
        .visible()
        .templates()
        .map(|t| mcp_template(&t.item.definition))
        .collect();
    ListResourceTemplatesResult::with_all_items(templates)
}

/// `resources/read`: runs the component serving the URI (a resource, or a
/// URI its template matches). A URI nothing the caller may see serves is
/// resource-not-found, with the URI in `data` (as MCP's example and
/// SEP-2164 have it).
pub(super) async fn read(
    gateway: &Gateway,
    request: &Request,
    params: ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, ErrorData> {
    let uri = params.uri;
    let not_found =
        |message: String| ErrorData::resource_not_found(message, Some(json!({ "uri": uri })));
    let Some(ResourceTarget {
        plugin,
        variables,
        target,
        uri: read,
    }) = request.visible().resource_at(&uri)
    else {
        if let Some(loading) = gateway.still_loading() {
            return Err(not_found(format!(
                "no resource at {uri:?} is served yet: {loading}"
            )));
        }
        return Err(not_found(format!(
            "no resource at {uri:?}; call resources/list and resources/templates/list to see what is served"
        )));
    };
    let variables = crate::offers::decode_variables(variables)
        .map_err(|e| ErrorData::invalid_params(format!("{uri:?}: {e}"), None))?;
    let env = &gateway.inner.env;
    let contents = request
        .run_offer(
            gateway,
            &context.ct,
            &plugin,
            (OfferKind::ResourceRead, Target::Resource(&target)),
            // Rules and the audit trail see the URI the component serves,
            // as they see a tool under its registry name.
            json!({ "uri": read }),
            |hooks| crate::call::offer::read_resource(env, &plugin, &read, &variables, hooks),
        )
        .await?
        .map_err(|e| offer_error(e, |m| not_found(format!("no resource at {uri:?}: {m}"))))?;
    // Contents at the URI read are at the URI the caller asked for.
    let contents = contents.into_iter().map(|mut c| {
        if c.uri == read {
            c.uri.clone_from(&uri);
        }
        mcp_contents(c)
    });
    Ok(ReadResourceResult::new(contents.collect()).into())
}

/// What a failed read, get or completion is on the wire: the guest's
/// not-found as `not_found` says, anything else an internal error.
pub(super) fn offer_error(
    error: OfferError,
    not_found: impl FnOnce(String) -> ErrorData,
) -> ErrorData {
    match error {
        OfferError::NotFound(message) => not_found(message),
        OfferError::Failed { message, .. } => ErrorData::internal_error(message, None),
    }
}

/// The answer to a read, get or completion the client cancelled.
pub(super) fn cancelled() -> ErrorData {
    ErrorData::invalid_request("the request was cancelled", None)
}
