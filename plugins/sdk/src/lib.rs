//! Write [toolhost] tool components in Rust.
//!
//! A tool is a type that implements [`Tool`] (or [`AsyncTool`]): a typed input
//! struct, a typed output, a name, a title, a description and
//! [`Annotations`]. The JSON Schemas that MCP clients see come from the types
//! (`serde` + `schemars` derives), so every field's doc comment becomes its
//! description. [`export_tools!`] turns a set of tools into a component.
//!
//! Inside a tool, the host's capabilities are plain functions:
//!
//! | module        | what it does                                                    |
//! |---------------|-----------------------------------------------------------------|
//! | [`http`]      | HTTP requests made by the host under its policy, JSON in and out |
//! | [`confirm`]   | ask the user to approve an action ([`confirm::require_confirmation`]) |
//! | [`form`]      | ask the user a form of the tool's own ([`Form::ask`])           |
//! | [`content`]   | images, audio and documents beside a result ([`Tool::content`]) |
//! | [`mutation`]  | what a preview-then-confirm tool reports ([`mutation::Report`]) |
//! | [`log`]       | diagnostics to the host's log                                    |
//! | [`config`]    | the operator's settings for this plugin                          |
//! | [`progress`]  | progress reports for long calls                                  |
//!
//! # Example
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use toolhost_sdk::{Annotations, Tool, ToolError};
//!
//! /// Arguments of `greet`.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct GreetInput {
//!     /// Who to greet.
//!     #[schemars(example = &"Ada", length(min = 1, max = 100))]
//!     name: String,
//! }
//!
//! /// What `greet` returns.
//! #[derive(Serialize, JsonSchema)]
//! struct Greeting {
//!     /// The greeting.
//!     message: String,
//! }
//!
//! struct Greet;
//!
//! impl Tool for Greet {
//!     type Input = GreetInput;
//!     type Output = Greeting;
//!     const NAME: &'static str = "greet";
//!     const TITLE: &'static str = "Greet Someone";
//!     const DESCRIPTION: &'static str =
//!         "Greet a person by name. Use it to check that toolhost works.";
//!     const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
//!
//!     fn call(&self, input: GreetInput) -> Result<Greeting, ToolError> {
//!         Ok(Greeting { message: format!("Hello, {}!", input.name) })
//!     }
//! }
//!
//! toolhost_sdk::export_tools!(Greet);
//! ```
//!
//! Build it with `cargo build --target wasm32-wasip2 --release`, copy the
//! `.wasm` into toolhost's plugin directory, and the tool appears.
//!
//! [toolhost]: https://example.invalid/toolhost

#![deny(missing_docs)]

pub mod config;
pub mod confirm;
pub mod content;
pub mod form;
pub mod http;
pub mod log;
pub mod mutation;
pub mod offer;
pub mod progress;
pub mod schema;
mod tool;

pub use content::Block;
pub use form::{Field, Form, FormAnswer};
pub use offer::{
    Contents, Message, MessageContent, Prompt, Resource, ResourceAnnotations, ResourceTemplate,
    Role,
};
pub use tool::{Annotations, AsyncTool, ErrorCode, Tool, ToolError, asynchronous};

/// The raw bindings generated from toolhost's WIT package. Tool authors do
/// not need them; [`export_tools!`] uses them.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: ["wit", "wit/0.2", "wit/0.3"],
        world: "toolhost:plugin/plugin@0.3.0",
        generate_all,
        pub_export_macro: true,
        default_bindings_module: "toolhost_sdk::bindings",
    });
}

/// Support for [`export_tools!`] and [`export_component!`]; not a public
/// API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bindings::exports::toolhost::plugin0_2_0::completion::Guest as CompletionGuest;
    pub use crate::bindings::exports::toolhost::plugin0_2_0::resources::Guest as ResourcesGuest;
    pub use crate::bindings::exports::toolhost::plugin0_3_0::prompts::Guest as PromptsGuest;
    pub use crate::bindings::exports::toolhost::plugin0_3_0::tools::Guest;
    pub use crate::bindings::toolhost::plugin0_1_0::types::{
        ToolDefinition as WitToolDefinition, ToolError as WitToolError,
    };
    pub use crate::bindings::toolhost::plugin0_2_0::content as wit_content;
    pub use crate::bindings::toolhost::plugin0_3_0::content as wit_content3;
    pub use crate::offer::{
        ErasedPrompt, ErasedResource, ErasedTemplate, complete, get, list_prompts, list_resources,
        list_templates, read,
    };
    pub use crate::tool::{ErasedTool, call, list};
}

/// Exports a set of tools as this crate's component.
///
/// Each argument is a value whose type implements [`Tool`], or
/// [`asynchronous`]`(value)` for an [`AsyncTool`]. Use it once per crate.
/// The component offers no resources or prompts; [`export_component!`]
/// exports those too.
///
/// ```no_run
/// # use schemars::JsonSchema;
/// # use serde::{Deserialize, Serialize};
/// # use toolhost_sdk::{Annotations, AsyncTool, Tool, ToolError};
/// # #[derive(Deserialize, JsonSchema)]
/// # struct Name { name: String }
/// # #[derive(Serialize, JsonSchema)]
/// # struct Text { text: String }
/// # struct Greet;
/// # impl Tool for Greet {
/// #     type Input = Name;
/// #     type Output = Text;
/// #     const NAME: &'static str = "greet";
/// #     const TITLE: &'static str = "Greet Someone";
/// #     const DESCRIPTION: &'static str = "Greet a person by name.";
/// #     const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
/// #     fn call(&self, input: Name) -> Result<Text, ToolError> {
/// #         Ok(Text { text: format!("Hello, {}!", input.name) })
/// #     }
/// # }
/// # struct Fetch;
/// # impl AsyncTool for Fetch {
/// #     type Input = Name;
/// #     type Output = Text;
/// #     const NAME: &'static str = "fetch";
/// #     const TITLE: &'static str = "Fetch a Page";
/// #     const DESCRIPTION: &'static str = "Fetch a page by name.";
/// #     const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
/// #     async fn call(&self, input: Name) -> Result<Text, ToolError> {
/// #         Ok(Text { text: input.name })
/// #     }
/// # }
/// toolhost_sdk::export_tools!(Greet, toolhost_sdk::asynchronous(Fetch));
/// ```
#[macro_export]
macro_rules! export_tools {
    ($($tool:expr),+ $(,)?) => {
        $crate::export_component! { tools: [$($tool),+] }
    };
}

/// Exports tools, resources, resource templates and prompts as this
/// crate's component (`toolhost:plugin@0.3.0`). Every section is optional,
/// but keep their order; use it once per crate.
///
/// ```no_run
/// # use schemars::JsonSchema;
/// # use serde::{Deserialize, Serialize};
/// # use toolhost_sdk::{
/// #     Annotations, Contents, Message, Prompt, Resource, ResourceTemplate, Tool, ToolError,
/// # };
/// # #[derive(Deserialize, JsonSchema)]
/// # struct NoInput {}
/// # #[derive(Serialize, JsonSchema)]
/// # struct Statuses { codes: Vec<String> }
/// # struct ListStatuses;
/// # impl Tool for ListStatuses {
/// #     type Input = NoInput;
/// #     type Output = Statuses;
/// #     const NAME: &'static str = "list_statuses";
/// #     const TITLE: &'static str = "List Statuses";
/// #     const DESCRIPTION: &'static str = "List the order statuses.";
/// #     const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
/// #     fn call(&self, _: NoInput) -> Result<Statuses, ToolError> {
/// #         Ok(Statuses { codes: Vec::new() })
/// #     }
/// # }
/// # macro_rules! text_resource {
/// #     ($name:ident, $uri:literal) => {
/// #         struct $name;
/// #         impl Resource for $name {
/// #             const URI: &'static str = $uri;
/// #             const NAME: &'static str = stringify!($name);
/// #             const TITLE: &'static str = stringify!($name);
/// #             const DESCRIPTION: &'static str = "An example resource.";
/// #             const MIME_TYPE: &'static str = "text/plain";
/// #             fn read(&self) -> Result<Contents, ToolError> {
/// #                 Ok("text".into())
/// #             }
/// #         }
/// #     };
/// # }
/// # text_resource!(StatusCatalog, "shop://statuses");
/// # text_resource!(UsageGuide, "shop://guide");
/// # #[derive(Deserialize)]
/// # struct Sku { sku: String }
/// # struct Item;
/// # impl ResourceTemplate for Item {
/// #     type Variables = Sku;
/// #     const URI_TEMPLATE: &'static str = "shop://items/{sku}";
/// #     const NAME: &'static str = "item";
/// #     const TITLE: &'static str = "Item";
/// #     const DESCRIPTION: &'static str = "An item by SKU.";
/// #     const MIME_TYPE: &'static str = "text/plain";
/// #     fn read(&self, _uri: &str, variables: Sku) -> Result<Contents, ToolError> {
/// #         Ok(variables.sku.into())
/// #     }
/// # }
/// # #[derive(Deserialize, JsonSchema)]
/// # struct OrderId { order_id: String }
/// # struct ReviewOrder;
/// # impl Prompt for ReviewOrder {
/// #     type Arguments = OrderId;
/// #     const NAME: &'static str = "review_order";
/// #     const TITLE: &'static str = "Review an Order";
/// #     const DESCRIPTION: &'static str = "Review one order.";
/// #     fn get(&self, arguments: OrderId) -> Result<Vec<Message>, ToolError> {
/// #         Ok(vec![Message::user(format!("Review order {}.", arguments.order_id))])
/// #     }
/// # }
/// toolhost_sdk::export_component! {
///     tools: [ListStatuses],
///     resources: [StatusCatalog, UsageGuide],
///     templates: [Item],
///     prompts: [ReviewOrder],
/// }
/// ```
#[macro_export]
macro_rules! export_component {
    (
        $(tools: [$($tool:expr),* $(,)?] $(,)?)?
        $(resources: [$($resource:expr),* $(,)?] $(,)?)?
        $(templates: [$($template:expr),* $(,)?] $(,)?)?
        $(prompts: [$($prompt:expr),* $(,)?] $(,)?)?
    ) => {
        struct __ToolhostComponent;

        impl __ToolhostComponent {
            fn tools() -> ::std::vec::Vec<::std::boxed::Box<dyn $crate::__private::ErasedTool>> {
                ::std::vec![$($($crate::__erase!(ErasedTool, $tool)),*)?]
            }
            fn resources() -> ::std::vec::Vec<::std::boxed::Box<dyn $crate::__private::ErasedResource>> {
                ::std::vec![$($($crate::__erase!(ErasedResource, $resource)),*)?]
            }
            fn templates() -> ::std::vec::Vec<::std::boxed::Box<dyn $crate::__private::ErasedTemplate>> {
                ::std::vec![$($($crate::__erase!(ErasedTemplate, $template)),*)?]
            }
            fn prompts() -> ::std::vec::Vec<::std::boxed::Box<dyn $crate::__private::ErasedPrompt>> {
                ::std::vec![$($($crate::__erase!(ErasedPrompt, $prompt)),*)?]
            }
        }

        $crate::__export_guests!(__ToolhostComponent);
    };
}

/// Boxes one item as its erased trait object.
#[doc(hidden)]
#[macro_export]
macro_rules! __erase {
    ($trait:ident, $item:expr) => {
        ::std::boxed::Box::new($item) as ::std::boxed::Box<dyn $crate::__private::$trait>
    };
}

/// Implements every exported interface for `$component`, a type with the
/// associated functions `tools()`, `resources()`, `templates()` and
/// `prompts()`, and exports it. Components that list their tools in their
/// own way (test components) use it directly.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_guests {
    ($component:ident) => {
        $crate::__export_guests!($component, tools: |tools| $crate::__private::list(tools));
    };
    ($component:ident, tools: |$tools:ident| $list:expr) => {
        impl $crate::__private::Guest for $component {
            fn list() -> ::std::vec::Vec<$crate::__private::WitToolDefinition> {
                let $tools = &Self::tools();
                $list
            }

            fn call(
                name: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<$crate::__private::wit_content3::ToolOutput, $crate::__private::WitToolError> {
                $crate::__private::call(&Self::tools(), &name, &arguments)
            }
        }

        impl $crate::__private::ResourcesGuest for $component {
            fn list() -> ::std::vec::Vec<$crate::__private::wit_content::ResourceDefinition> {
                $crate::__private::list_resources(&Self::resources())
            }

            fn templates() -> ::std::vec::Vec<$crate::__private::wit_content::ResourceTemplate> {
                $crate::__private::list_templates(&Self::templates())
            }

            fn read(
                uri: ::std::string::String,
                variables: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<
                ::std::vec::Vec<$crate::__private::wit_content::ResourceContents>,
                $crate::__private::WitToolError,
            > {
                $crate::__private::read(&Self::resources(), &Self::templates(), &uri, &variables)
            }
        }

        impl $crate::__private::PromptsGuest for $component {
            fn list() -> ::std::vec::Vec<$crate::__private::wit_content::PromptDefinition> {
                $crate::__private::list_prompts(&Self::prompts())
            }

            fn get(
                name: ::std::string::String,
                arguments: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<
                $crate::__private::wit_content3::PromptResult,
                $crate::__private::WitToolError,
            > {
                $crate::__private::get(&Self::prompts(), &name, &arguments)
            }
        }

        impl $crate::__private::CompletionGuest for $component {
            fn complete(
                target: $crate::__private::wit_content::CompletionTarget,
                argument: ::std::string::String,
                value: ::std::string::String,
                context: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<
                $crate::__private::wit_content::Completions,
                $crate::__private::WitToolError,
            > {
                $crate::__private::complete(
                    &Self::templates(),
                    &Self::prompts(),
                    &target,
                    &argument,
                    &value,
                    &context,
                )
            }
        }

        $crate::bindings::export!($component with_types_in $crate::bindings);
    };
}
