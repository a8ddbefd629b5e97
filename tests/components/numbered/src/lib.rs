//! The benchmark's numbered tool: `echo` under a name the harness patches.
//!
//! The tool's name is the fixed-length placeholder [`PLACEHOLDER`];
//! `toolhost-bench` replaces it in the built bytes with `numbered_000042`
//! and so on, which gives as many distinct components (different bytes,
//! digests and tool names) as a start-up or reload measurement needs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::{Annotations, Tool, ToolError};

/// The tool name the harness finds and replaces: the same length as every
/// name it writes (`numbered_` and six digits).
pub const PLACEHOLDER: &str = "numbered_XXXXXX";

/// Arguments of the tool, and its result: the same object.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Message {
    /// Any text; it comes back unchanged.
    #[schemars(example = &"ping")]
    message: String,
}

/// Returns its input unchanged.
struct Numbered;

impl Tool for Numbered {
    type Input = Message;
    type Output = Message;
    const NAME: &'static str = PLACEHOLDER;
    const TITLE: &'static str = "Numbered echo";
    const DESCRIPTION: &'static str = "Return the message unchanged. Use it to measure a \
        host serving many generated components; it has no side effects.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, input: Message) -> Result<Message, ToolError> {
        Ok(input)
    }
}

toolhost_sdk::export_tools!(Numbered);
