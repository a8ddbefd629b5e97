//! Resources, resource templates and prompts (`toolhost:plugin@0.2.0`), in
//! the style of [`Tool`](crate::Tool): a type per item, its metadata as
//! constants, typed arguments, and [`export_component!`](crate::export_component)
//! to export them beside the tools.
//!
//! - [`Resource`]: contents at a fixed URI, e.g. a catalog or a guide;
//! - [`ResourceTemplate`]: a family of URIs such as `katana://items/{sku}`;
//!   its variables arrive as a typed struct, and it may suggest values for
//!   them ([`ResourceTemplate::complete`]);
//! - [`Prompt`]: messages built from typed arguments. The argument list
//!   clients see comes from the `Arguments` type's JSON Schema: each field's
//!   doc comment is its description, and fields that are not `Option` are
//!   required. MCP sends prompt arguments as strings, so their fields are
//!   `String` or `Option<String>`.
//!
//! Reads, gets and completions run like read-only tool calls: the host lets
//! them send `GET` and `HEAD` requests only.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::ToolError;
use crate::bindings::toolhost::plugin0_2_0::content as wit;
use crate::bindings::toolhost::plugin0_3_0::content as wit3;
use crate::schema::input_schema_text;

/// Who a message or resource is meant for.
pub use wit::Role;

/// The body of a resource as a resource's `read` returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum Contents {
    /// UTF-8 text.
    Text(String),
    /// Binary data.
    Bytes(Vec<u8>),
}

impl From<String> for Contents {
    fn from(text: String) -> Contents {
        Contents::Text(text)
    }
}

impl From<&str> for Contents {
    fn from(text: &str) -> Contents {
        Contents::Text(text.to_string())
    }
}

/// Hints about a resource for clients: who it is for and how important it
/// is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResourceAnnotations {
    /// Who it is for; empty: not said.
    pub audience: &'static [Role],
    /// From 0.0 (least important) to 1.0 (most).
    pub priority: Option<f64>,
}

impl ResourceAnnotations {
    /// No hints.
    pub const NONE: ResourceAnnotations = ResourceAnnotations {
        audience: &[],
        priority: None,
    };

    /// Reference material for the model, e.g. a catalog or a guide.
    pub const FOR_THE_MODEL: ResourceAnnotations = ResourceAnnotations {
        audience: &[Role::Assistant],
        priority: Some(0.8),
    };

    fn to_wit(self) -> Option<wit::ResourceAnnotations> {
        if self.audience.is_empty() && self.priority.is_none() {
            return None;
        }
        Some(wit::ResourceAnnotations {
            audience: self.audience.to_vec(),
            priority: self.priority,
            last_modified: None,
        })
    }
}

/// A resource at a fixed URI.
pub trait Resource {
    /// The URI, e.g. `statuspro://statuses`. Unique across the host.
    const URI: &'static str;
    /// A short programmatic name, e.g. `status-catalog`.
    const NAME: &'static str;
    /// A human-readable title.
    const TITLE: &'static str;
    /// What it holds and when to read it, first sentence first.
    const DESCRIPTION: &'static str;
    /// The MIME type of its contents, e.g. `text/markdown`.
    const MIME_TYPE: &'static str;
    /// Hints for clients.
    const ANNOTATIONS: ResourceAnnotations = ResourceAnnotations::NONE;

    /// Reads it.
    fn read(&self) -> Result<Contents, ToolError>;
}

/// A family of resources whose URIs follow a template.
pub trait ResourceTemplate {
    /// The template's variables: a struct with one `String` field per
    /// `{variable}`, filled from the URI read (values percent-decoded by
    /// the host).
    type Variables: DeserializeOwned;
    /// An RFC 6570 level 1 URI template whose `{variables}` each fill a
    /// path segment, e.g. `katana://items/{sku}`.
    const URI_TEMPLATE: &'static str;
    /// A short programmatic name.
    const NAME: &'static str;
    /// A human-readable title.
    const TITLE: &'static str;
    /// What a resource of the family holds.
    const DESCRIPTION: &'static str;
    /// The MIME type every resource of the family has.
    const MIME_TYPE: &'static str;
    /// Hints for clients.
    const ANNOTATIONS: ResourceAnnotations = ResourceAnnotations::NONE;
    /// The variables [`ResourceTemplate::complete`] suggests values for.
    const COMPLETABLE: &'static [&'static str] = &[];

    /// Reads the resource at `uri`, whose variables are `variables`.
    fn read(&self, uri: &str, variables: Self::Variables) -> Result<Contents, ToolError>;

    /// Values of `variable` that complete `value`, best first.
    fn complete(&self, _variable: &str, _value: &str) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// What it says.
    pub content: MessageContent,
}

/// What one message of a prompt holds.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    /// Text.
    Text(String),
    /// A resource's contents, embedded in the message (the model reads
    /// them with the prompt, without a `resources/read` of its own).
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, e.g. `text/plain`.
        mime_type: String,
        /// Its contents.
        contents: Contents,
    },
    /// An image: its MIME type (`image/*`) and bytes.
    Image {
        /// `image/png`, …
        mime_type: String,
        /// The raw bytes.
        data: Vec<u8>,
    },
}

impl Message {
    /// A message from the user.
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: MessageContent::Text(text.into()),
        }
    }

    /// A message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: MessageContent::Text(text.into()),
        }
    }

    /// A message from the user that shows an image.
    pub fn user_image(mime_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Message {
        Message {
            role: Role::User,
            content: MessageContent::Image {
                mime_type: mime_type.into(),
                data: data.into(),
            },
        }
    }

    /// A message from the user that embeds the resource at `uri`: its
    /// `contents`, of type `mime_type`.
    pub fn user_resource(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        contents: impl Into<Contents>,
    ) -> Message {
        Message {
            role: Role::User,
            content: MessageContent::Resource {
                uri: uri.into(),
                mime_type: mime_type.into(),
                contents: contents.into(),
            },
        }
    }
}

/// A prompt: messages built from typed arguments.
pub trait Prompt {
    /// The arguments: a struct of `String` (required) and `Option<String>`
    /// (optional) fields; each field's doc comment is the description
    /// clients show.
    type Arguments: DeserializeOwned + JsonSchema;
    /// The prompt's unique name: 1–128 of `A-Z a-z 0-9 _ . -`.
    const NAME: &'static str;
    /// A human-readable title.
    const TITLE: &'static str;
    /// What the prompt is for.
    const DESCRIPTION: &'static str;
    /// The arguments [`Prompt::complete`] suggests values for.
    const COMPLETABLE: &'static [&'static str] = &[];

    /// Builds the messages. The host has already refused a request that
    /// lacks a required argument.
    fn get(&self, arguments: Self::Arguments) -> Result<Vec<Message>, ToolError>;

    /// Values of `argument` that complete `value`, best first; `context`
    /// holds the other arguments already given.
    fn complete(
        &self,
        _argument: &str,
        _value: &str,
        _context: &[(String, String)],
    ) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

/// A resource with its type erased.
#[doc(hidden)]
pub trait ErasedResource {
    fn definition(&self) -> wit::ResourceDefinition;
    fn uri(&self) -> &'static str;
    fn read_contents(&self) -> Result<Vec<wit::ResourceContents>, ToolError>;
}

impl<R: Resource> ErasedResource for R {
    fn definition(&self) -> wit::ResourceDefinition {
        wit::ResourceDefinition {
            uri: R::URI.into(),
            name: R::NAME.into(),
            title: Some(R::TITLE.into()),
            description: Some(R::DESCRIPTION.into()),
            mime_type: Some(R::MIME_TYPE.into()),
            size: None,
            annotations: R::ANNOTATIONS.to_wit(),
        }
    }

    fn uri(&self) -> &'static str {
        R::URI
    }

    fn read_contents(&self) -> Result<Vec<wit::ResourceContents>, ToolError> {
        Ok(vec![contents(R::URI, R::MIME_TYPE, self.read()?)])
    }
}

/// A resource template with its types erased.
#[doc(hidden)]
pub trait ErasedTemplate {
    fn definition(&self) -> wit::ResourceTemplate;
    fn uri_template(&self) -> &'static str;
    fn read_contents(
        &self,
        uri: &str,
        variables: &[(String, String)],
    ) -> Result<Vec<wit::ResourceContents>, ToolError>;
    fn complete_variable(&self, variable: &str, value: &str) -> Result<Vec<String>, ToolError>;
}

impl<T: ResourceTemplate> ErasedTemplate for T {
    fn definition(&self) -> wit::ResourceTemplate {
        wit::ResourceTemplate {
            uri_template: T::URI_TEMPLATE.into(),
            name: T::NAME.into(),
            title: Some(T::TITLE.into()),
            description: Some(T::DESCRIPTION.into()),
            mime_type: Some(T::MIME_TYPE.into()),
            annotations: T::ANNOTATIONS.to_wit(),
            completable: T::COMPLETABLE.iter().map(|c| c.to_string()).collect(),
        }
    }

    fn uri_template(&self) -> &'static str {
        T::URI_TEMPLATE
    }

    fn read_contents(
        &self,
        uri: &str,
        variables: &[(String, String)],
    ) -> Result<Vec<wit::ResourceContents>, ToolError> {
        let variables = from_strings(variables, "template variables")?;
        Ok(vec![contents(
            uri,
            T::MIME_TYPE,
            self.read(uri, variables)?,
        )])
    }

    fn complete_variable(&self, variable: &str, value: &str) -> Result<Vec<String>, ToolError> {
        self.complete(variable, value)
    }
}

/// A prompt with its types erased.
#[doc(hidden)]
pub trait ErasedPrompt {
    fn definition(&self) -> wit::PromptDefinition;
    fn name(&self) -> &'static str;
    fn build(&self, arguments: &[(String, String)]) -> Result<wit3::PromptResult, ToolError>;
    fn complete_argument(
        &self,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Result<Vec<String>, ToolError>;
}

impl<P: Prompt> ErasedPrompt for P {
    fn definition(&self) -> wit::PromptDefinition {
        let schema: serde_json::Value =
            serde_json::from_str(&input_schema_text::<P::Arguments>()).unwrap_or_default();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let arguments = schema["properties"]
            .as_object()
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| wit::PromptArgument {
                        name: name.clone(),
                        title: property["title"].as_str().map(str::to_string),
                        description: property["description"].as_str().map(str::to_string),
                        required: required.contains(&name.as_str()),
                        completable: P::COMPLETABLE.contains(&name.as_str()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        wit::PromptDefinition {
            name: P::NAME.into(),
            title: Some(P::TITLE.into()),
            description: Some(P::DESCRIPTION.into()),
            arguments,
        }
    }

    fn name(&self) -> &'static str {
        P::NAME
    }

    fn build(&self, arguments: &[(String, String)]) -> Result<wit3::PromptResult, ToolError> {
        let messages = self.get(from_strings(arguments, "prompt arguments")?)?;
        Ok(wit3::PromptResult {
            description: None,
            messages: messages
                .into_iter()
                .map(|m| wit3::PromptMessage {
                    role: m.role,
                    content: match m.content {
                        MessageContent::Text(text) => wit3::Block::Text(text),
                        MessageContent::Resource {
                            uri,
                            mime_type,
                            contents,
                        } => wit3::Block::Resource(self::contents(&uri, &mime_type, contents)),
                        MessageContent::Image { mime_type, data } => {
                            wit3::Block::Image(wit3::Media { mime_type, data })
                        }
                    },
                })
                .collect(),
        })
    }

    fn complete_argument(
        &self,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Result<Vec<String>, ToolError> {
        self.complete(argument, value, context)
    }
}

/// `pairs` as the typed struct `T`, through a JSON object of strings.
fn from_strings<T: DeserializeOwned>(
    pairs: &[(String, String)],
    what: &str,
) -> Result<T, ToolError> {
    let object: serde_json::Map<String, serde_json::Value> = pairs
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    serde_json::from_value(serde_json::Value::Object(object))
        .map_err(|e| ToolError::validation(format!("invalid {what}: {e}")))
}

fn contents(uri: &str, mime_type: &str, body: Contents) -> wit::ResourceContents {
    wit::ResourceContents {
        uri: uri.into(),
        mime_type: Some(mime_type.into()),
        body: match body {
            Contents::Text(text) => wit::Body::Text(text),
            Contents::Bytes(bytes) => wit::Body::Blob(bytes),
        },
    }
}

/// Lists the definitions of `resources`.
#[doc(hidden)]
pub fn list_resources(resources: &[Box<dyn ErasedResource>]) -> Vec<wit::ResourceDefinition> {
    resources.iter().map(|r| r.definition()).collect()
}

/// Lists the definitions of `templates`.
#[doc(hidden)]
pub fn list_templates(templates: &[Box<dyn ErasedTemplate>]) -> Vec<wit::ResourceTemplate> {
    templates.iter().map(|t| t.definition()).collect()
}

/// Lists the definitions of `prompts`.
#[doc(hidden)]
pub fn list_prompts(prompts: &[Box<dyn ErasedPrompt>]) -> Vec<wit::PromptDefinition> {
    prompts.iter().map(|p| p.definition()).collect()
}

/// Reads `uri`: a listed resource, or the template the host matched.
#[doc(hidden)]
pub fn read(
    resources: &[Box<dyn ErasedResource>],
    templates: &[Box<dyn ErasedTemplate>],
    uri: &str,
    variables: &[(String, String)],
) -> Result<Vec<wit::ResourceContents>, crate::bindings::toolhost::plugin0_1_0::types::ToolError> {
    if let Some(resource) = resources.iter().find(|r| r.uri() == uri) {
        return resource.read_contents().map_err(Into::into);
    }
    // The host matched a template; the variables say which one.
    let names: Vec<&str> = variables.iter().map(|(k, _)| k.as_str()).collect();
    let template = templates.iter().find(|t| {
        let mut expected = template_variable_names(t.uri_template());
        let mut given = names.clone();
        expected.sort_unstable();
        given.sort_unstable();
        expected == given && matches_literals(t.uri_template(), uri)
    });
    match template {
        Some(template) => template.read_contents(uri, variables).map_err(Into::into),
        None => {
            Err(ToolError::not_found(format!("this component has no resource at {uri:?}")).into())
        }
    }
}

/// Builds the prompt `name`.
#[doc(hidden)]
pub fn get(
    prompts: &[Box<dyn ErasedPrompt>],
    name: &str,
    arguments: &[(String, String)],
) -> Result<wit3::PromptResult, crate::bindings::toolhost::plugin0_1_0::types::ToolError> {
    let prompt = prompts.iter().find(|p| p.name() == name).ok_or_else(|| {
        ToolError::not_found(format!("this component has no prompt named {name:?}"))
    })?;
    prompt.build(arguments).map_err(Into::into)
}

/// Suggests values for `argument` of `target`.
#[doc(hidden)]
pub fn complete(
    templates: &[Box<dyn ErasedTemplate>],
    prompts: &[Box<dyn ErasedPrompt>],
    target: &wit::CompletionTarget,
    argument: &str,
    value: &str,
    context: &[(String, String)],
) -> Result<wit::Completions, crate::bindings::toolhost::plugin0_1_0::types::ToolError> {
    let values = match target {
        wit::CompletionTarget::Prompt(name) => prompts
            .iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| ToolError::not_found(format!("no prompt named {name:?}")))?
            .complete_argument(argument, value, context)?,
        wit::CompletionTarget::ResourceTemplate(uri_template) => templates
            .iter()
            .find(|t| t.uri_template() == uri_template)
            .ok_or_else(|| ToolError::not_found(format!("no template {uri_template:?}")))?
            .complete_variable(argument, value)?,
    };
    Ok(wit::Completions {
        total: u32::try_from(values.len()).ok(),
        has_more: false,
        values,
    })
}

/// The `{variable}` names of a URI template, in order.
fn template_variable_names(template: &str) -> Vec<&str> {
    template
        .split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

/// Whether `uri` has the template's literal segments where it has them.
fn matches_literals(template: &str, uri: &str) -> bool {
    let t: Vec<&str> = template.split('/').collect();
    let u: Vec<&str> = uri.split('/').collect();
    t.len() == u.len()
        && t.iter()
            .zip(&u)
            .all(|(t, u)| (t.starts_with('{') && t.ends_with('}')) || t == u)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    /// Arguments of the test prompt.
    #[derive(Deserialize, JsonSchema)]
    struct Arguments {
        /// The order to review, e.g. "1188".
        order: String,
        /// How much detail, e.g. "short".
        detail: Option<String>,
    }

    struct Review;

    impl Prompt for Review {
        type Arguments = Arguments;
        const NAME: &'static str = "review_order";
        const TITLE: &'static str = "Review an Order";
        const DESCRIPTION: &'static str = "Review one order.";
        const COMPLETABLE: &'static [&'static str] = &["order"];

        fn get(&self, a: Arguments) -> Result<Vec<Message>, ToolError> {
            Ok(vec![Message::user(format!(
                "Review {} ({}).",
                a.order,
                a.detail.unwrap_or_default()
            ))])
        }
    }

    #[test]
    fn a_prompts_arguments_come_from_its_type() {
        let definition = Review.definition();
        let order = definition
            .arguments
            .iter()
            .find(|a| a.name == "order")
            .unwrap();
        assert!(order.required && order.completable);
        assert_eq!(
            order.description.as_deref(),
            Some("The order to review, e.g. \"1188\".")
        );
        let detail = definition
            .arguments
            .iter()
            .find(|a| a.name == "detail")
            .unwrap();
        assert!(!detail.required && !detail.completable);
    }

    #[test]
    fn a_prompt_is_built_from_string_arguments() {
        let prompts: Vec<Box<dyn ErasedPrompt>> = vec![Box::new(Review)];
        let built = get(&prompts, "review_order", &[("order".into(), "7".into())]).unwrap();
        match &built.messages[0].content {
            wit3::Block::Text(t) => assert_eq!(t, "Review 7 ()."),
            _ => panic!("expected text"),
        }
        assert!(get(&prompts, "other", &[]).is_err());
    }

    #[test]
    fn a_template_uri_matches_its_literal_segments() {
        assert!(matches_literals("k://items/{sku}", "k://items/A-1"));
        assert!(!matches_literals("k://items/{sku}", "k://orders/A-1"));
        assert!(!matches_literals("k://items/{sku}", "k://items/A/1"));
    }
}
