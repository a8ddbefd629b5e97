//! A `toolhost:plugin@0.2.0` test component: what a component may offer
//! beside tools, each way of answering once, so the end-to-end tests can
//! prove how the host serves them.
//!
//! - `test://readme` (text) and `test://logo` (bytes): plain resources;
//! - `test://fetched`: read with a `GET` to the plugin's `config` value
//!   `fetch_url`, under the plugin's network policy;
//! - `test://post`: tries a `POST`, which the host refuses to a read;
//! - `test://crash`: its read traps (panics);
//! - `test://colors/{name}`: a template whose `name` completes from a fixed
//!   list; an unknown colour is not found;
//! - `describe_color`: a prompt with a required, completable `color` and an
//!   optional `tone`;
//! - `color_count`: one tool, so the component serves tools too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::http::Request;
use toolhost_sdk::{
    Annotations, Contents, Message, Prompt, Resource, ResourceAnnotations, ResourceTemplate, Tool,
    ToolError, config,
};

/// The colours the template and the prompt know.
const COLORS: [&str; 5] = ["red", "green", "blue", "grey", "gold"];

/// `test://readme`.
struct Readme;

impl Resource for Readme {
    const URI: &'static str = "test://readme";
    const NAME: &'static str = "readme";
    const TITLE: &'static str = "Read Me";
    const DESCRIPTION: &'static str = "What this test component offers.";
    const MIME_TYPE: &'static str = "text/markdown";
    const ANNOTATIONS: ResourceAnnotations = ResourceAnnotations::FOR_THE_MODEL;

    fn read(&self) -> Result<Contents, ToolError> {
        Ok("# Offers\n\nResources, a template and a prompt.".into())
    }
}

/// `test://logo`: four bytes.
struct Logo;

impl Resource for Logo {
    const URI: &'static str = "test://logo";
    const NAME: &'static str = "logo";
    const TITLE: &'static str = "Logo";
    const DESCRIPTION: &'static str = "A few bytes of binary data.";
    const MIME_TYPE: &'static str = "application/octet-stream";

    fn read(&self) -> Result<Contents, ToolError> {
        Ok(Contents::Bytes(vec![0x89, b'P', b'N', b'G']))
    }
}

/// `test://fetched`: the body of `GET fetch_url`.
struct Fetched;

impl Resource for Fetched {
    const URI: &'static str = "test://fetched";
    const NAME: &'static str = "fetched";
    const TITLE: &'static str = "Fetched";
    const DESCRIPTION: &'static str = "The body of a GET to the configured fetch_url.";
    const MIME_TYPE: &'static str = "text/plain";

    fn read(&self) -> Result<Contents, ToolError> {
        let url = config::get("fetch_url").ok_or_else(|| ToolError::internal("no fetch_url"))?;
        let response = Request::get(url).send()?;
        Ok(Contents::Text(
            String::from_utf8_lossy(&response.body).into_owned(),
        ))
    }
}

/// `test://post`: tries to change something.
struct Post;

impl Resource for Post {
    const URI: &'static str = "test://post";
    const NAME: &'static str = "post";
    const TITLE: &'static str = "Post";
    const DESCRIPTION: &'static str = "Tries a POST to the configured fetch_url.";
    const MIME_TYPE: &'static str = "text/plain";

    fn read(&self) -> Result<Contents, ToolError> {
        let url = config::get("fetch_url").ok_or_else(|| ToolError::internal("no fetch_url"))?;
        Request::post(url).send()?;
        Ok("posted".into())
    }
}

/// `test://crash`: traps.
struct Crash;

impl Resource for Crash {
    const URI: &'static str = "test://crash";
    const NAME: &'static str = "crash";
    const TITLE: &'static str = "Crash";
    const DESCRIPTION: &'static str =
        "Its read panics on purpose, to show that a trap ends that read only.";
    const MIME_TYPE: &'static str = "text/plain";

    fn read(&self) -> Result<Contents, ToolError> {
        panic!("the crash resource panics on purpose")
    }
}

/// The variables of `test://colors/{name}`.
#[derive(Deserialize)]
struct ColorVariables {
    name: String,
}

/// `test://colors/{name}`.
struct Colors;

impl ResourceTemplate for Colors {
    type Variables = ColorVariables;
    const URI_TEMPLATE: &'static str = "test://colors/{name}";
    const NAME: &'static str = "color";
    const TITLE: &'static str = "Colour";
    const DESCRIPTION: &'static str = "One colour, by name.";
    const MIME_TYPE: &'static str = "text/plain";
    const COMPLETABLE: &'static [&'static str] = &["name"];

    fn read(&self, uri: &str, variables: ColorVariables) -> Result<Contents, ToolError> {
        if !COLORS.contains(&variables.name.as_str()) {
            return Err(ToolError::not_found(format!(
                "no colour {:?}",
                variables.name
            )));
        }
        Ok(Contents::Text(format!(
            "{uri} is the colour {}",
            variables.name
        )))
    }

    fn complete(&self, _variable: &str, value: &str) -> Result<Vec<String>, ToolError> {
        Ok(starting_with(value))
    }
}

fn starting_with(prefix: &str) -> Vec<String> {
    COLORS
        .iter()
        .filter(|c| c.starts_with(prefix))
        .map(|c| c.to_string())
        .collect()
}

/// Arguments of `describe_color`.
#[derive(Deserialize, JsonSchema)]
struct DescribeColorArguments {
    /// The colour to describe, e.g. "red".
    color: String,
    /// How to describe it, e.g. "poetic".
    tone: Option<String>,
}

/// `describe_color`.
struct DescribeColor;

impl Prompt for DescribeColor {
    type Arguments = DescribeColorArguments;
    const NAME: &'static str = "describe_color";
    const TITLE: &'static str = "Describe a Colour";
    const DESCRIPTION: &'static str = "Ask the model to describe a colour.";
    const COMPLETABLE: &'static [&'static str] = &["color"];

    fn get(&self, arguments: DescribeColorArguments) -> Result<Vec<Message>, ToolError> {
        let tone = arguments.tone.unwrap_or_else(|| "plain".into());
        Ok(vec![Message::user(format!(
            "Describe the colour {} in a {tone} tone.",
            arguments.color
        ))])
    }

    fn complete(
        &self,
        _argument: &str,
        value: &str,
        _context: &[(String, String)],
    ) -> Result<Vec<String>, ToolError> {
        Ok(starting_with(value))
    }
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// What `color_count` returns.
#[derive(Serialize, JsonSchema)]
struct Count {
    /// How many colours the component knows.
    count: usize,
}

/// `color_count`.
struct ColorCount;

impl Tool for ColorCount {
    type Input = Nothing;
    type Output = Count;
    const NAME: &'static str = "color_count";
    const TITLE: &'static str = "Count Colours";
    const DESCRIPTION: &'static str = "Count the colours this test component knows. Use it \
        to check that a 0.2 component serves tools beside its resources.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: Nothing) -> Result<Count, ToolError> {
        Ok(Count {
            count: COLORS.len(),
        })
    }
}

toolhost_sdk::export_component! {
    tools: [ColorCount],
    resources: [Readme, Logo, Fetched, Post, Crash],
    templates: [Colors],
    prompts: [DescribeColor],
}
