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
pub mod http;
pub mod log;
pub mod mutation;
pub mod progress;
pub mod schema;
mod tool;

pub use tool::{Annotations, AsyncTool, ErrorCode, Tool, ToolError, asynchronous};

/// The raw bindings generated from toolhost's WIT package. Tool authors do
/// not need them; [`export_tools!`] uses them.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "plugin",
        pub_export_macro: true,
        default_bindings_module: "toolhost_sdk::bindings",
    });
}

/// Support for [`export_tools!`]; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bindings::exports::toolhost::plugin::tools::Guest;
    pub use crate::bindings::toolhost::plugin::types::{
        ToolDefinition as WitToolDefinition, ToolError as WitToolError,
    };
    pub use crate::tool::{ErasedTool, call, list};
}

/// Exports a set of tools as this crate's component.
///
/// Each argument is a value whose type implements [`Tool`], or
/// [`asynchronous`]`(value)` for an [`AsyncTool`]. Use it once per crate.
///
/// ```ignore
/// toolhost_sdk::export_tools!(Greet, toolhost_sdk::asynchronous(Fetch));
/// ```
#[macro_export]
macro_rules! export_tools {
    ($($tool:expr),+ $(,)?) => {
        struct __ToolhostComponent;

        impl __ToolhostComponent {
            fn tools() -> ::std::vec::Vec<::std::boxed::Box<dyn $crate::__private::ErasedTool>> {
                ::std::vec![$(::std::boxed::Box::new($tool)),+]
            }
        }

        impl $crate::__private::Guest for __ToolhostComponent {
            fn list() -> ::std::vec::Vec<$crate::__private::WitToolDefinition> {
                $crate::__private::list(&Self::tools())
            }

            fn call(
                name: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<::std::string::String, $crate::__private::WitToolError> {
                $crate::__private::call(&Self::tools(), &name, &arguments)
            }
        }

        $crate::bindings::export!(__ToolhostComponent with_types_in $crate::bindings);
    };
}
