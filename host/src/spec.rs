//! A tool as the host serves it: the component's raw definition, checked
//! against MCP's rules and turned into a [`ToolSpec`] with its argument
//! validator built once.

use std::sync::Arc;

use serde_json::{Map, Value};
use thiserror::Error;

use crate::bindings::types::{Annotations, ToolDefinition};

/// A validated tool definition.
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// Its title.
    pub title: String,
    /// Its description.
    pub description: String,
    /// The input schema, an object schema.
    pub input_schema: Arc<Map<String, Value>>,
    /// The output schema, if declared.
    pub output_schema: Option<Arc<Map<String, Value>>>,
    /// Behaviour hints. `read_only` is enforced by the `http` import.
    pub annotations: Annotations,
    /// Validates arguments against `input_schema`; built once per component
    /// version.
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Why a component's tool definition was refused.
#[derive(Debug, Error)]
pub enum SpecError {
    /// The name breaks MCP's rules.
    #[error("tool name {0:?} is invalid: use 1 to 128 characters of A-Z a-z 0-9 _ . -")]
    BadName(String),
    /// A schema is not JSON, not an object schema, or not a valid schema.
    #[error("tool {tool:?}: its {which} schema is invalid: {reason}")]
    BadSchema {
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The component lists the same name twice.
    #[error("tool {0:?} is listed twice by the component")]
    Duplicate(String),
    /// The title or description is empty.
    #[error("tool {0:?} has an empty {1}; clients show it to users and models")]
    Empty(String, &'static str),
}

/// Whether `name` follows MCP's tool-name rules.
pub fn is_valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn parse_schema(
    tool: &str,
    which: &'static str,
    text: &str,
) -> Result<Map<String, Value>, SpecError> {
    let bad = |reason: String| SpecError::BadSchema {
        tool: tool.to_string(),
        which,
        reason,
    };
    let value: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(bad("it is not a JSON object".into()));
    };
    if map.get("type") != Some(&Value::String("object".into())) {
        return Err(bad("MCP requires `\"type\": \"object\"` at the top".into()));
    }
    jsonschema::meta::validate(&Value::Object(map.clone()))
        .map_err(|e| bad(format!("not a valid JSON Schema: {e}")))?;
    Ok(map)
}

impl ToolSpec {
    /// Checks one definition from a component.
    pub fn from_definition(def: ToolDefinition) -> Result<ToolSpec, SpecError> {
        if !is_valid_name(&def.name) {
            return Err(SpecError::BadName(def.name));
        }
        if def.title.trim().is_empty() {
            return Err(SpecError::Empty(def.name, "title"));
        }
        if def.description.trim().is_empty() {
            return Err(SpecError::Empty(def.name, "description"));
        }
        let input = parse_schema(&def.name, "input", &def.input_schema)?;
        let output = def
            .output_schema
            .as_deref()
            .map(|s| parse_schema(&def.name, "output", s))
            .transpose()?;
        let validator = jsonschema::validator_for(&Value::Object(input.clone())).map_err(|e| {
            SpecError::BadSchema {
                tool: def.name.clone(),
                which: "input",
                reason: e.to_string(),
            }
        })?;
        Ok(ToolSpec {
            name: def.name,
            title: def.title,
            description: def.description,
            input_schema: Arc::new(input),
            output_schema: output.map(Arc::new),
            annotations: def.annotations,
            validator,
        })
    }

    /// The stand-in tool a component runs as while listing its tools:
    /// read-only, so listing cannot change anything.
    pub fn listing() -> ToolSpec {
        ToolSpec::from_definition(ToolDefinition {
            name: "tools.list".into(),
            title: "Listing tools".into(),
            description: "The component is listing its tools.".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            output_schema: None,
            annotations: Annotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
        })
        .expect("the listing stand-in is a valid tool")
    }

    /// Checks `arguments` against the input schema. Each error names the
    /// field (as a JSON pointer) and the rule it broke.
    pub fn validate(&self, arguments: &Value) -> Result<(), Vec<String>> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .take(10)
            .map(|e| {
                let at = e.instance_path.to_string();
                let at = if at.is_empty() {
                    "arguments".to_string()
                } else {
                    format!("`{}`", &at[1..].replace('/', "."))
                };
                format!("{at}: {e}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Checks a component's whole list: each definition, and no name twice.
pub fn check_definitions(defs: Vec<ToolDefinition>) -> Result<Vec<Arc<ToolSpec>>, SpecError> {
    let mut specs: Vec<Arc<ToolSpec>> = Vec::with_capacity(defs.len());
    for def in defs {
        let spec = ToolSpec::from_definition(def)?;
        if specs.iter().any(|s| s.name == spec.name) {
            return Err(SpecError::Duplicate(spec.name));
        }
        specs.push(Arc::new(spec));
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, schema: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            title: "T".into(),
            description: "D.".into(),
            input_schema: schema.into(),
            output_schema: None,
            annotations: Annotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
        }
    }

    #[test]
    fn names_follow_mcp_rules() {
        assert!(is_valid_name("list_orders"));
        assert!(is_valid_name("task.create-v2"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("has space"));
        assert!(!is_valid_name("slash/name"));
        assert!(!is_valid_name(&"x".repeat(129)));
    }

    #[test]
    fn schemas_must_be_object_schemas() {
        let ok = r#"{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}"#;
        assert!(ToolSpec::from_definition(def("a", ok)).is_ok());
        assert!(ToolSpec::from_definition(def("a", r#"{"type":"string"}"#)).is_err());
        assert!(ToolSpec::from_definition(def("a", "not json")).is_err());
        assert!(
            ToolSpec::from_definition(def(
                "a",
                r#"{"type":"object","properties":{"n":{"type":12}}}"#
            ))
            .is_err()
        );
    }

    #[test]
    fn validation_names_the_field_and_rule() {
        let s = ToolSpec::from_definition(def(
            "a",
            r#"{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}"#,
        ))
        .unwrap();
        assert!(s.validate(&serde_json::json!({"n": 3})).is_ok());
        let errs = s.validate(&serde_json::json!({"n": 0})).unwrap_err();
        assert!(
            errs[0].starts_with("`n`:") && errs[0].contains("minimum"),
            "{errs:?}"
        );
        let errs = s.validate(&serde_json::json!({})).unwrap_err();
        assert!(errs[0].contains("\"n\" is a required property"), "{errs:?}");
    }

    #[test]
    fn duplicate_names_in_one_component_are_refused() {
        let schema = r#"{"type":"object"}"#;
        assert!(matches!(
            check_definitions(vec![def("a", schema), def("a", schema)]),
            Err(SpecError::Duplicate(_))
        ));
    }
}
