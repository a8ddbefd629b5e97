//! The benchmark's catalog component: the ten tools of one generated
//! business domain ([`domains`]), chosen by the operator's `config` value
//! `domain` (0 to 99). One file copied 100 times under 100 plugin blocks
//! (`cat_00.wasm` with `[plugins.cat_00.config] domain = "0"`, …) serves
//! 1,000 distinct tools while compiling once (ADR 0040's measurement).
//!
//! Its list depends on configuration, which the contract asks components
//! not to do: a config reload reloads every component, so the list stays
//! right, and a benchmark fixture may bend the rule to stay cheap to build.
//! Every tool answers with its own name and the arguments it was given.

pub mod domains;

use toolhost_sdk::__private::{ErasedTool, WitToolDefinition, wit_content3::ToolOutput};
use toolhost_sdk::bindings::toolhost::plugin0_1_0::types::Annotations;
use toolhost_sdk::{ToolError, config};

use domains::{ACTIONS, Action, DOMAINS, Domain, fill, parameter_name, title, tool_name};

/// One generated tool.
struct Generated {
    /// Its name, leaked for the `'static` the SDK's trait asks (a few
    /// bytes per instance, which lives for one call).
    name: &'static str,
    action: &'static Action,
    domain: &'static Domain,
}

impl ErasedTool for Generated {
    fn name(&self) -> &'static str {
        self.name
    }

    fn definition(&self) -> WitToolDefinition {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for (shape, description) in self.action.parameters {
            let name = parameter_name(shape, self.domain);
            let schema = match *shape {
                "page" | "limit" => serde_json::json!({"type": "integer", "minimum": 1,
                    "description": fill(description, self.domain), "examples": [1]}),
                "confirm" => serde_json::json!({"type": "boolean", "default": false,
                    "description": fill(description, self.domain)}),
                "fields" => serde_json::json!({"type": "object",
                    "description": fill(description, self.domain), "examples": [{}]}),
                _ => serde_json::json!({"type": "string", "minLength": 1,
                    "description": fill(description, self.domain), "examples": ["x"]}),
            };
            if name.ends_with("_id") || name == "query" || name == "assignee" || name == "comment" {
                required.push(name.clone());
            }
            properties.insert(name, schema);
        }
        let input = serde_json::json!({"type": "object", "properties": properties,
            "required": required, "additionalProperties": false});
        WitToolDefinition {
            name: self.name.to_string(),
            title: title(self.action, self.domain),
            description: fill(self.action.description, self.domain),
            input_schema: input.to_string(),
            output_schema: None,
            annotations: Annotations {
                read_only: self.action.read_only,
                destructive: !self.action.read_only,
                idempotent: self.action.read_only,
                open_world: true,
            },
        }
    }

    fn invoke(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        let arguments: serde_json::Value = serde_json::from_str(arguments)
            .map_err(|e| ToolError::validation(format!("invalid arguments: {e}")))?;
        let answer = serde_json::json!({"tool": self.name, "arguments": arguments});
        Ok(ToolOutput {
            structured: Some(answer.to_string()),
            content: Vec::new(),
        })
    }
}

/// The component.
struct Catalog;

impl Catalog {
    /// The ten tools of the configured domain (domain 0 without one).
    fn tools() -> Vec<Box<dyn ErasedTool>> {
        let index = config::get("domain")
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|d| *d < DOMAINS.len())
            .unwrap_or(0);
        let domain = &DOMAINS[index];
        ACTIONS
            .iter()
            .map(|action| {
                Box::new(Generated {
                    name: Box::leak(tool_name(action, domain).into_boxed_str()),
                    action,
                    domain,
                }) as Box<dyn ErasedTool>
            })
            .collect()
    }
    fn resources() -> Vec<Box<dyn toolhost_sdk::__private::ErasedResource>> {
        Vec::new()
    }
    fn templates() -> Vec<Box<dyn toolhost_sdk::__private::ErasedTemplate>> {
        Vec::new()
    }
    fn prompts() -> Vec<Box<dyn toolhost_sdk::__private::ErasedPrompt>> {
        Vec::new()
    }
}

toolhost_sdk::__export_guests!(Catalog);
