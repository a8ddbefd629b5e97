//! JSON Schemas for tool inputs and outputs, generated from Rust types.
//!
//! Schemas are inlined (no `$defs`/`$ref`) and carry no `$schema` key: MCP
//! clients and models read them directly, and a flat schema is both easier
//! for them and fewer tokens.
//!
//! Only formats that JSON Schema 2020-12 defines are published: schemars
//! marks Rust number types with formats of its own (`uint32`, `int64`,
//! `double`, …) that clients' validators (ajv in the TypeScript SDK) warn
//! about, so [`standard_formats`] replaces them with `minimum`/`maximum`.
//!
//! A tool's definition uses these; they are public so a tool crate's own
//! tests can check the schemas its tools will publish.

use schemars::{
    JsonSchema, Schema,
    generate::{Contract, SchemaSettings},
};
use serde_json::{Map, Number, Value};

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
    let mut schema = generator.into_root_schema_for::<T>();
    standard_formats(&mut schema);
    serde_json::to_string(&schema).expect("a generated schema is always serializable")
}

/// The values of `format` that JSON Schema 2020-12 defines.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Schema transform, applied to every schema this module generates: drops
/// each `format` that JSON Schema 2020-12 does not define, and expresses
/// schemars' integer widths (`uint8` … `int64`, `uint`/`int`) as `minimum`
/// and `maximum`, keeping a tighter bound the schema already has.
/// Components are 32-bit, so `uint`/`int` (`usize`/`isize`) are 32 bits.
pub fn standard_formats(schema: &mut Schema) {
    schemars::transform::transform_subschemas(&mut standard_formats, schema);
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::String(format)) = object.get("format") else {
        return;
    };
    if STANDARD_FORMATS.contains(&format.as_str()) {
        return;
    }
    let bounds = integer_bounds(format);
    object.remove("format");
    if let Some((min, max)) = bounds {
        tighten(object, "minimum", min, true);
        tighten(object, "maximum", max, false);
    }
}

/// The range of one of schemars' integer formats.
fn integer_bounds(format: &str) -> Option<(Number, Number)> {
    let signed = |bits: u32| {
        let max = (1i64 << (bits - 1)) - 1;
        (Number::from(-max - 1), Number::from(max))
    };
    let unsigned = |max: u64| (Number::from(0u64), Number::from(max));
    Some(match format {
        "int8" => signed(8),
        "int16" => signed(16),
        "int32" | "int" => signed(32),
        "int64" => (Number::from(i64::MIN), Number::from(i64::MAX)),
        "uint8" => unsigned(u8::MAX.into()),
        "uint16" => unsigned(u16::MAX.into()),
        "uint32" | "uint" => unsigned(u32::MAX.into()),
        "uint64" => unsigned(u64::MAX),
        _ => return None,
    })
}

/// Sets `key` to `bound` unless the schema already has a tighter one
/// (greater for a `minimum`, smaller for a `maximum`).
fn tighten(object: &mut Map<String, Value>, key: &str, bound: Number, lower: bool) {
    let keep = object
        .get(key)
        .and_then(Value::as_number)
        .is_some_and(|existing| match compare(existing, &bound) {
            std::cmp::Ordering::Equal => true,
            std::cmp::Ordering::Greater => lower,
            std::cmp::Ordering::Less => !lower,
        });
    if !keep {
        object.insert(key.to_string(), Value::Number(bound));
    }
}

/// Orders two JSON numbers: exactly when both are integers, else as `f64`.
fn compare(a: &Number, b: &Number) -> std::cmp::Ordering {
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => {
            let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal)
        }
    }
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

    /// Rust number types, each of which schemars marks with a format of
    /// its own.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Numbers {
        small: u8,
        count: u32,
        big: u64,
        size: usize,
        offset: i64,
        ratio: f64,
        maybe: Option<u16>,
        #[schemars(range(min = 1, max = 50))]
        limit: u32,
        positive: std::num::NonZeroU32,
        list: Vec<i32>,
        /// A field named like the keyword.
        format: String,
        #[schemars(url)]
        link: String,
    }

    fn formats(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("format", Value::String(f)) => out.push(f.clone()),
                        _ => formats(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
            _ => {}
        }
    }

    #[test]
    fn only_standard_formats_are_published_and_widths_become_bounds() {
        let schema = parse(input_schema_text::<Numbers>());
        let mut found = Vec::new();
        formats(&schema, &mut found);
        assert_eq!(found, vec!["uri".to_string()], "{schema}");
        let p = &schema["properties"];
        assert_eq!(
            (&p["small"]["minimum"], &p["small"]["maximum"]),
            (&json!(0), &json!(255))
        );
        assert_eq!(p["count"]["maximum"], json!(4294967295u64));
        assert_eq!(p["big"]["maximum"], json!(u64::MAX));
        assert_eq!(p["size"]["maximum"], json!(4294967295u64));
        assert_eq!(
            (&p["offset"]["minimum"], &p["offset"]["maximum"]),
            (&json!(i64::MIN), &json!(i64::MAX))
        );
        assert_eq!(p["ratio"], json!({"type": "number"}));
        assert_eq!(p["maybe"]["maximum"], json!(65535));
        // A tighter bound the type declares stays.
        assert_eq!(
            (&p["limit"]["minimum"], &p["limit"]["maximum"]),
            (&json!(1), &json!(50))
        );
        assert_eq!(p["positive"]["minimum"], json!(1));
        assert_eq!(p["list"]["items"]["minimum"], json!(i32::MIN));
        assert_eq!(p["format"]["type"], "string");
    }

    #[test]
    fn a_documented_enum_becomes_a_plain_string_enum() {
        let schema = parse(input_schema_text::<Colour>());
        assert_eq!(schema["type"], "string", "{schema}");
        assert_eq!(schema["enum"], json!(["blue", "green"]));
        assert_eq!(schema.get("oneOf"), None);
    }
}
