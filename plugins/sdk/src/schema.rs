//! JSON Schemas for tool inputs and outputs, generated from Rust types.
//!
//! Schemas are inlined (no `$defs`/`$ref`) and carry no `$schema` key: MCP
//! clients and models read them directly, and a flat schema is both easier
//! for them and fewer tokens.
//!
//! A tool's definition uses these; they are public so a tool crate's own
//! tests can check the schemas its tools will publish.

use schemars::{
    JsonSchema,
    generate::{Contract, SchemaSettings},
};

/// The JSON Schema of an input type `T`: what `T` accepts when deserialized
/// (fields with `#[serde(default)]` are optional), as JSON text.
pub fn input_schema_text<T: JsonSchema>() -> String {
    schema_text::<T>(Contract::Deserialize)
}

/// The JSON Schema of an output type `T`: what `T` produces when serialized
/// (a field skipped when empty is optional, a field always written is
/// required), as JSON text.
pub fn output_schema_text<T: JsonSchema>() -> String {
    schema_text::<T>(Contract::Serialize)
}

fn schema_text<T: JsonSchema>(contract: Contract) -> String {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
            settings.contract = contract;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    serde_json::to_string(&schema).expect("a generated schema is always serializable")
}

/// Schema transform for `#[schemars(transform = plain_enum)]`: turns the
/// `oneOf` of documented constants that schemars makes for an enum whose
/// variants have doc comments into a plain `{"type": "string", "enum":
/// [...]}`, which is shorter for models and what clients render as a
/// choice. The Rust docs stay for readers.
pub fn plain_enum(schema: &mut schemars::Schema) {
    use serde_json::Value;
    let Some(Value::Array(variants)) = schema.get("oneOf") else {
        return;
    };
    let values: Option<Vec<Value>> = variants.iter().map(|v| v.get("const").cloned()).collect();
    let Some(values) = values else {
        return;
    };
    schema.remove("oneOf");
    schema.insert("type".into(), "string".into());
    schema.insert("enum".into(), Value::Array(values));
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    use super::*;

    /// A type whose two schemas differ: `count` has a default (optional as
    /// input, always written as output); `note` is skipped when absent.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Both {
        #[serde(default)]
        count: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    }

    fn parse(text: String) -> Value {
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn an_input_schema_requires_only_what_deserializing_needs() {
        let schema = parse(input_schema_text::<Both>());
        assert_eq!(schema.get("required"), None, "{schema}");
        assert_eq!(schema.get("$schema"), None);
    }

    #[test]
    fn an_output_schema_requires_every_field_always_written() {
        let schema = parse(output_schema_text::<Both>());
        assert_eq!(schema["required"], json!(["count"]), "{schema}");
        assert!(schema["properties"]["note"].is_object());
    }

    /// An enum whose variants are documented.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[schemars(transform = plain_enum)]
    #[allow(dead_code)]
    enum Colour {
        /// The colour of the sky.
        Blue,
        /// The colour of grass.
        Green,
    }

    #[test]
    fn a_documented_enum_becomes_a_plain_string_enum() {
        let schema = parse(input_schema_text::<Colour>());
        assert_eq!(schema["type"], "string", "{schema}");
        assert_eq!(schema["enum"], json!(["blue", "green"]));
        assert_eq!(schema.get("oneOf"), None);
    }
}
