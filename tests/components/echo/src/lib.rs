//! The benchmark's trivial tool: `echo` returns the object it was given.
//!
//! It does no work and uses no host capability, so a call's cost is what
//! toolhost adds around a tool: MCP framing, argument validation, a fresh
//! instance, JSON across the component boundary. `toolhost-bench` compares
//! it with the same tool served natively by rmcp and by Python FastMCP.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::{Annotations, Tool, ToolError};

/// Arguments of `echo`, and its result: the same object.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Message {
    /// Any text; it comes back unchanged.
    #[schemars(example = &"ping")]
    message: String,
}

/// Returns its input unchanged.
struct Echo;

impl Tool for Echo {
    type Input = Message;
    type Output = Message;
    const NAME: &'static str = "echo";
    const TITLE: &'static str = "Echo";
    const DESCRIPTION: &'static str = "Return the message unchanged. A benchmark and \
        connectivity check; it has no side effects.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, input: Message) -> Result<Message, ToolError> {
        Ok(input)
    }
}

toolhost_sdk::export_tools!(Echo);
