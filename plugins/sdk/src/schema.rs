//! JSON Schemas for tool inputs and outputs, generated from Rust types.
//!
//! Schemas are inlined (no `$defs`/`$ref`) and carry no `$schema` key: MCP
//! clients and models read them directly, and a flat schema is both easier
//! for them and fewer tokens.

use schemars::{JsonSchema, generate::SchemaSettings};

/// The JSON Schema of `T`, as JSON text.
pub(crate) fn schema_text<T: JsonSchema>() -> String {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    serde_json::to_string(&schema).expect("a generated schema is always serializable")
}
