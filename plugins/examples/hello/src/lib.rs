//! The example tool component: `greet`, a read-only tool that needs nothing
//! from the outside world, and `fetch_url`, which reads a URL through the
//! host's `http` capability (and so only reaches what the operator allows).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::{Annotations, Tool, ToolError, http, log};

/// Arguments of `greet`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetInput {
    /// The name of the person to greet.
    #[schemars(example = &"Ada", length(min = 1, max = 100))]
    name: String,
    /// Greet loudly, in capitals.
    #[serde(default)]
    #[schemars(example = false)]
    shout: bool,
}

/// The result of `greet`.
#[derive(Serialize, JsonSchema)]
struct Greeting {
    /// The greeting.
    message: String,
}

/// Greets a person.
struct Greet;

impl Tool for Greet {
    type Input = GreetInput;
    type Output = Greeting;
    const NAME: &'static str = "greet";
    const TITLE: &'static str = "Greet Someone";
    const DESCRIPTION: &'static str = "Greet a person by name. Use it to check that toolhost \
        serves tools; it has no side effects.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, input: GreetInput) -> Result<Greeting, ToolError> {
        let mut message = format!("Hello, {}!", input.name);
        if input.shout {
            message = message.to_uppercase();
        }
        Ok(Greeting { message })
    }
}

/// Arguments of `fetch_url`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FetchInput {
    /// The absolute http(s) URL to read. The operator's policy decides which
    /// hosts are reachable.
    #[schemars(example = &"https://example.com/", length(min = 8, max = 2048))]
    url: String,
    /// At most this many characters of the body are returned.
    #[serde(default = "default_max_chars")]
    #[schemars(example = 2000, range(min = 1, max = 100000))]
    max_chars: u32,
}

fn default_max_chars() -> u32 {
    2000
}

/// The result of `fetch_url`.
#[derive(Serialize, JsonSchema)]
struct Fetched {
    /// The HTTP status code.
    status: u16,
    /// The response's content type, if it sent one.
    content_type: Option<String>,
    /// The body as text, cut to `max_chars`.
    body: String,
    /// Whether `body` was cut.
    truncated: bool,
}

/// Reads a URL through the host.
struct FetchUrl;

impl Tool for FetchUrl {
    type Input = FetchInput;
    type Output = Fetched;
    const NAME: &'static str = "fetch_url";
    const TITLE: &'static str = "Fetch a URL";
    const DESCRIPTION: &'static str = "Read a web page or API response by URL (GET). Use it \
        to look at a URL the operator has allowed; the status and the start of the body \
        come back.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: FetchInput) -> Result<Fetched, ToolError> {
        log::debug(&format!("fetching {}", input.url));
        let response = http::Request::get(&input.url)
            .header("accept", "*/*")
            .send()?;
        let text = String::from_utf8_lossy(&response.body);
        let max = input.max_chars as usize;
        let truncated = text.chars().count() > max;
        Ok(Fetched {
            status: response.status,
            content_type: response.header("content-type").map(str::to_string),
            body: text.chars().take(max).collect(),
            truncated,
        })
    }
}

toolhost_sdk::export_tools!(Greet, FetchUrl);
