//! What components define, as MCP's types: tools, resources, templates,
//! prompts and read contents; and progress reports as notifications.

use rmcp::model::{
    Annotations, ProgressNotificationParam, ProgressToken, Prompt, PromptArgument, Resource,
    ResourceContents, ResourceTemplate, Role, Tool, ToolAnnotations,
};
use rmcp::service::{Peer, RoleServer};

use crate::bindings::v0_2::content::{
    Body, PromptDefinition, ResourceDefinition, ResourceTemplate as ResourceTemplateDefinition,
};
use crate::catalog::Shown;
use crate::hooks::BoxFuture;
use crate::imports::progress::ProgressSink;

/// A served tool as MCP lists it, under the name, title and description
/// it is shown with.
pub(super) fn mcp_tool(t: &Shown) -> Tool {
    let s = &t.tool.spec;
    let a = &s.annotations;
    let mut tool = Tool::new(
        t.name.clone(),
        t.description().to_string(),
        s.input_schema.clone(),
    )
    .with_title(t.title().to_string())
    .with_annotations(
        ToolAnnotations::new()
            .read_only(a.read_only)
            .destructive(a.destructive)
            .idempotent(a.idempotent)
            .open_world(a.open_world),
    );
    if let Some(out) = &s.output_schema {
        tool = tool.with_raw_output_schema(out.clone());
    }
    tool
}

/// A 0.2 component's resource as MCP lists it.
pub(super) fn mcp_resource(r: &ResourceDefinition) -> Resource {
    let mut resource = Resource::new(r.uri.clone(), r.name.clone());
    resource.title = r.title.clone();
    resource.description = r.description.clone();
    resource.mime_type = r.mime_type.clone();
    resource.size = r.size;
    resource.annotations = r.annotations.as_ref().map(mcp_annotations);
    resource
}

/// A 0.2 component's resource template as MCP lists it.
pub(super) fn mcp_template(t: &ResourceTemplateDefinition) -> ResourceTemplate {
    let mut template = ResourceTemplate::new(t.uri_template.clone(), t.name.clone());
    template.title = t.title.clone();
    template.description = t.description.clone();
    template.mime_type = t.mime_type.clone();
    template.annotations = t.annotations.as_ref().map(mcp_annotations);
    template
}

fn mcp_annotations(a: &crate::bindings::v0_2::content::ResourceAnnotations) -> Annotations {
    let mut annotations = Annotations::default();
    if !a.audience.is_empty() {
        annotations.audience = Some(a.audience.iter().copied().map(mcp_role).collect());
    }
    annotations.priority = a.priority.map(|p| p.clamp(0.0, 1.0) as f32);
    annotations.last_modified = a.last_modified.clone();
    annotations
}

/// A message's role as MCP names it.
pub(super) fn mcp_role(role: crate::bindings::v0_2::content::Role) -> Role {
    match role {
        crate::bindings::v0_2::content::Role::User => Role::User,
        crate::bindings::v0_2::content::Role::Assistant => Role::Assistant,
    }
}

/// Contents a 0.2 component read, as MCP sends them (bytes base64-encoded).
pub(super) fn mcp_contents(
    c: crate::bindings::v0_2::content::ResourceContents,
) -> ResourceContents {
    use base64::Engine as _;
    let contents = match c.body {
        Body::Text(text) => ResourceContents::text(text, c.uri),
        Body::Blob(bytes) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            c.uri,
        ),
    };
    match c.mime_type {
        Some(mime) => contents.with_mime_type(mime),
        None => contents,
    }
}

/// A content block of a 0.3 tool result or prompt as MCP sends it (bytes
/// base64-encoded).
pub(super) fn mcp_block(block: crate::call::Block) -> rmcp::model::ContentBlock {
    use crate::call::Block;
    use base64::Engine as _;
    use rmcp::model::ContentBlock;
    let base64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    match block {
        Block::Text(text) => ContentBlock::text(text),
        Block::Image(m) => ContentBlock::image(base64(&m.data), m.mime_type),
        Block::Audio(m) => ContentBlock::audio(base64(&m.data), m.mime_type),
        Block::Resource(r) => ContentBlock::resource(mcp_contents(r)),
        Block::ResourceLink(l) => {
            let mut resource = Resource::new(l.uri, l.name);
            resource.title = l.title;
            resource.description = l.description;
            resource.mime_type = l.mime_type;
            resource.size = l.size;
            ContentBlock::resource_link(resource)
        }
    }
}

/// A 0.2 component's prompt as MCP lists it, under its served `name`.
pub(super) fn mcp_prompt(name: &str, p: &PromptDefinition) -> Prompt {
    let arguments = p
        .arguments
        .iter()
        .map(|a| {
            let mut argument = PromptArgument::new(a.name.clone()).with_required(a.required);
            if let Some(title) = &a.title {
                argument = argument.with_title(title.clone());
            }
            if let Some(description) = &a.description {
                argument = argument.with_description(description.clone());
            }
            argument
        })
        .collect();
    let mut prompt = Prompt::new(name.to_string(), p.description.clone(), Some(arguments));
    prompt.title = p.title.clone();
    prompt
}

/// Forwards a call's progress reports as `notifications/progress`.
pub(super) struct PeerProgress {
    /// The client's peer.
    pub peer: Peer<RoleServer>,
    /// The token the request carried.
    pub token: ProgressToken,
}

impl ProgressSink for PeerProgress {
    fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
            if let Some(total) = total {
                param = param.with_total(total);
            }
            if let Some(message) = message {
                param = param.with_message(message);
            }
            if let Err(e) = self.peer.notify_progress(param).await {
                tracing::debug!("cannot send progress: {e}");
            }
        })
    }
}
