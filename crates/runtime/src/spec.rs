//! A tool as the host serves it: the component's raw definition, checked
//! against MCP's rules and turned into a [`ToolSpec`] with its argument
//! validator built once.
//!
//! Checking a component's list ([`check_definitions`]) is bounded by the
//! plugin's loading limits before any definition is parsed: the number of
//! tools (`limits.tools_per_component`), the bytes of one definition
//! (`limits.definition_bytes`) and of one schema (`limits.schema_bytes`).
//! It is CPU work (JSON parsing, schema compilation): run it off the async
//! workers.
//!
//! Schemas are published as every client accepts them
//! ([`standardize_formats`]): a `format` JSON Schema 2020-12 does not define
//! is dropped, an integer width becomes `minimum`/`maximum`. They never
//! reach outside themselves: a `$ref` (or `$schema`) naming anything but a
//! place inside the schema is refused at load, never fetched, whichever
//! features `jsonschema` was built with ([`NoRetrieval`]).
//!
//! **A schema checked once is not compiled again at the next start**:
//! checking a schema means compiling it, and compiling the first one
//! compiles JSON Schema 2020-12's own meta-schema, most of a warm start's
//! CPU (docs/benchmarks.md). When every check passes, the compile cache
//! records the schema's text under a name only this user's key can make
//! ([`CompileCache::schema_checked`]); a later load of the same text skips
//! the meta-schema and the validator, and the argument validator is built
//! on first use or in the background ([`ToolSpec::prepare`]). Without a
//! compile cache every load checks every schema.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Number, Value};
use thiserror::Error;

use crate::bindings::types::{Annotations, ToolDefinition};
use crate::cache::CompileCache;
use crate::names::is_valid_name;
use crate::settings::Limits;

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
    /// Formats the component's schemas used that JSON Schema 2020-12 does
    /// not define, removed before publishing: `"input /properties/n:
    /// uint32"`. `toolhost check` reports them.
    pub nonstandard_formats: Vec<String>,
    /// Validates arguments against `input_schema`; built once per component
    /// version: at load when the schema was checked then, else on first use
    /// or by [`ToolSpec::prepare`] (a schema the compile cache knows passed
    /// its checks is not compiled again at load: see [`check_definitions`]).
    validator: OnceLock<Result<jsonschema::Validator, String>>,
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
    /// The name breaks MCP's rules (the name shown is cut at 64 characters).
    #[error("tool name {0:?} is invalid: use 1 to 128 characters of A-Z a-z 0-9 _ . -")]
    BadName(String),
    /// The component lists more tools than its limit allows.
    #[error(
        "the component lists {count} tools, more than limits.tools_per_component ({limit}) allows; raise it in the plugin's [plugins.NAME.limits] block if the component is trusted"
    )]
    TooManyTools {
        /// How many it lists.
        count: usize,
        /// The limit.
        limit: u32,
    },
    /// A definition or one of its schemas is larger than its limit allows.
    #[error(
        "tool {tool:?}: its {what} is {bytes} bytes, more than limits.{key} ({limit}) allows; shorten it, or raise the limit in the plugin's [plugins.NAME.limits] block"
    )]
    TooLarge {
        /// The tool (cut at 64 characters).
        tool: String,
        /// `definition`, `input schema` or `output schema`.
        what: &'static str,
        /// Its size.
        bytes: usize,
        /// The limit's key under `limits`.
        key: &'static str,
        /// The limit.
        limit: u64,
    },
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

/// `name` as shown in errors: at most 64 characters, so a hostile name
/// cannot flood the log.
fn shown(name: &str) -> String {
    match name.char_indices().nth(64) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_string(),
    }
}

/// Refuses every external resource a schema names: guest schemas are
/// self-contained. Set on every validator the host builds, so enabling
/// `jsonschema`'s `resolve-http`/`resolve-file` features (directly or by
/// feature unification) cannot make a component's schema fetch a URL or
/// read a file.
pub struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!(
            "{uri} is outside the schema; toolhost never fetches schemas, so a `$ref` must point inside the tool's own schema (e.g. \"#/$defs/name\") and `$schema` must name a JSON Schema draft"
        )
        .into())
    }
}

/// A validator for `schema`; refuses external references.
fn build_validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_retriever(NoRetrieval)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// The first `$schema` of `schema`, at its top or in any subschema, that
/// names no draft toolhost accepts: the five drafts' canonical URIs (a
/// trailing `#` allowed). Checked before the meta-schema, since `jsonschema`
/// would try to retrieve a meta-schema it does not bundle (toolhost never
/// fetches schemas), and it also takes `http`/`https` variants and the
/// version-less URI, which toolhost keeps refusing. A subschema's own
/// `$schema` is checked too: the meta-schema check lets any URI through
/// there, and a client reading the published schema might fetch it. The
/// values of `const`, `enum`, `default` and `examples` are data, not
/// schemas, and are not looked into.
fn unknown_draft(schema: &Value) -> Option<&str> {
    const DATA: [&str; 4] = ["const", "enum", "default", "examples"];
    match schema {
        Value::Object(map) => {
            if let Some(uri) = map.get("$schema").and_then(Value::as_str)
                && !is_known_draft(uri)
            {
                return Some(uri);
            }
            map.iter()
                .filter(|(keyword, _)| !DATA.contains(&keyword.as_str()))
                .find_map(|(_, value)| unknown_draft(value))
        }
        Value::Array(items) => items.iter().find_map(unknown_draft),
        _ => None,
    }
}

/// Whether `uri` is the canonical URI of a draft toolhost accepts.
fn is_known_draft(uri: &str) -> bool {
    matches!(
        uri.trim_end_matches('#'),
        "https://json-schema.org/draft/2020-12/schema"
            | "https://json-schema.org/draft/2019-09/schema"
            | "http://json-schema.org/draft-07/schema"
            | "http://json-schema.org/draft-06/schema"
            | "http://json-schema.org/draft-04/schema"
    )
}

/// Parses, checks and publishes one schema: an object schema, valid
/// against its meta-schema, self-contained; with its formats made
/// standard (the non-standard ones found are added to `nonstandard`).
/// Returns it with its validator, or with none when `known` (the compile
/// cache) records that this very text passed these checks before: then
/// only the cheap parts run again, and the validator is built later.
fn parse_schema(
    tool: &str,
    which: &'static str,
    text: &str,
    nonstandard: &mut Vec<String>,
    known: Option<&CompileCache>,
) -> Result<(Map<String, Value>, Option<jsonschema::Validator>), SpecError> {
    let bad = |reason: String| SpecError::BadSchema {
        tool: shown(tool),
        which,
        reason,
    };
    let mut value: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if !value.is_object() {
        return Err(bad("it is not a JSON object".into()));
    }
    if value.get("type") != Some(&Value::String("object".into())) {
        return Err(bad("MCP requires `\"type\": \"object\"` at the top".into()));
    }
    let checked_before = known.is_some_and(|cache| cache.schema_checked(which, text));
    if !checked_before {
        if let Some(unknown) = unknown_draft(&value) {
            return Err(bad(format!(
                "a `$schema` in it is not a JSON Schema draft (Unknown specification: {unknown}); toolhost never fetches schemas, so name a draft or leave `$schema` out (2020-12)"
            )));
        }
        // The draft is one `jsonschema` bundles (checked above), so this
        // never resolves, let alone fetches, a meta-schema.
        if let Err(e) = jsonschema::meta::validate(&value) {
            return Err(bad(format!("not a valid JSON Schema: {e}")));
        }
    }
    for (at, format) in standardize_formats(&mut value) {
        nonstandard.push(format!("{which} {at}: {format}"));
    }
    // Built from the schema as published, so the host enforces exactly the
    // bounds clients see.
    let validator = if checked_before {
        None
    } else {
        let validator = build_validator(&value).map_err(bad)?;
        if let Some(cache) = known {
            cache.remember_checked_schema(which, text);
        }
        Some(validator)
    };
    let Value::Object(map) = value else {
        unreachable!("checked to be an object above");
    };
    Ok((map, validator))
}

impl ToolSpec {
    /// Checks one definition from a component.
    pub fn from_definition(def: ToolDefinition) -> Result<ToolSpec, SpecError> {
        ToolSpec::from_definition_known(def, None)
    }

    /// Checks one definition from a component, skipping the schema checks
    /// `known` (the compile cache) records as passed by the same text.
    fn from_definition_known(
        def: ToolDefinition,
        known: Option<&CompileCache>,
    ) -> Result<ToolSpec, SpecError> {
        if !is_valid_name(&def.name) {
            return Err(SpecError::BadName(shown(&def.name)));
        }
        if def.title.trim().is_empty() {
            return Err(SpecError::Empty(def.name, "title"));
        }
        if def.description.trim().is_empty() {
            return Err(SpecError::Empty(def.name, "description"));
        }
        let mut nonstandard_formats = Vec::new();
        let (input, validator) = parse_schema(
            &def.name,
            "input",
            &def.input_schema,
            &mut nonstandard_formats,
            known,
        )?;
        // The output schema's validator only proves it self-contained.
        let output = def
            .output_schema
            .as_deref()
            .map(|s| parse_schema(&def.name, "output", s, &mut nonstandard_formats, known))
            .transpose()?
            .map(|(schema, _)| schema);
        Ok(ToolSpec {
            name: def.name,
            title: def.title,
            description: def.description,
            input_schema: Arc::new(input),
            output_schema: output.map(Arc::new),
            annotations: def.annotations,
            nonstandard_formats,
            validator: validator.map(|v| OnceLock::from(Ok(v))).unwrap_or_default(),
        })
    }

    /// The stand-in tool a component runs as while listing its tools:
    /// read-only, so listing cannot change anything.
    pub fn listing() -> ToolSpec {
        // Built directly rather than checked like a component's: its schema
        // is the smallest object schema, and a load must not compile the
        // meta-schema for it (most of a warm start's CPU). Its validator is
        // built only if it is ever used.
        let mut input_schema = Map::new();
        input_schema.insert("type".into(), Value::String("object".into()));
        ToolSpec {
            name: "tools.list".into(),
            title: "Listing tools".into(),
            description: "The component is listing its tools.".into(),
            input_schema: Arc::new(input_schema),
            output_schema: None,
            annotations: Annotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
            nonstandard_formats: Vec::new(),
            validator: OnceLock::new(),
        }
    }

    /// The argument validator, built now if it was not at load. An error:
    /// the published schema cannot be compiled, which its checks at load
    /// rule out (kept as a refusal, never a pass).
    fn validator(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| build_validator(&Value::Object((*self.input_schema).clone())))
            .as_ref()
            .map_err(String::as_str)
    }

    /// Builds the argument validator now, if the load did not (its schema
    /// was known from the compile cache), so that the first call does not
    /// wait for it. Blocking: schema compilation is CPU work.
    pub fn prepare(&self) {
        let _ = self.validator();
    }

    /// Whether the argument validator is built yet.
    pub fn validator_built(&self) -> bool {
        self.validator.get().is_some()
    }

    /// Checks `arguments` against the input schema. Each error names the
    /// field (as a JSON pointer) and the rule it broke.
    pub fn validate(&self, arguments: &Value) -> Result<(), Vec<String>> {
        let validator = self.validator().map_err(|e| {
            vec![format!(
                "arguments: the tool's input schema cannot check them ({e}); the call is refused"
            )]
        })?;
        let errors: Vec<String> = validator
            .iter_errors(arguments)
            .take(10)
            .map(|e| {
                let at = e.instance_path().to_string();
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

/// Checks a component's whole list within `limits`: the count and every
/// size first, then each definition, and no name twice. Blocking (it
/// parses and compiles schemas): call it off the async workers.
pub fn check_definitions(
    defs: Vec<ToolDefinition>,
    limits: &Limits,
    known: Option<&CompileCache>,
) -> Result<Vec<Arc<ToolSpec>>, SpecError> {
    if defs.len() > limits.tools_per_component as usize {
        return Err(SpecError::TooManyTools {
            count: defs.len(),
            limit: limits.tools_per_component,
        });
    }
    for def in &defs {
        check_sizes(def, limits)?;
    }
    let mut names = HashSet::with_capacity(defs.len());
    let mut specs: Vec<Arc<ToolSpec>> = Vec::with_capacity(defs.len());
    for def in defs {
        if !names.insert(def.name.clone()) {
            return Err(SpecError::Duplicate(shown(&def.name)));
        }
        specs.push(Arc::new(ToolSpec::from_definition_known(def, known)?));
    }
    Ok(specs)
}

/// Checks one definition's sizes against `limits.definition_bytes` and
/// `limits.schema_bytes`, before anything is parsed.
fn check_sizes(def: &ToolDefinition, limits: &Limits) -> Result<(), SpecError> {
    let output = def.output_schema.as_deref().map_or(0, str::len);
    let total =
        def.name.len() + def.title.len() + def.description.len() + def.input_schema.len() + output;
    let too_large = |what, bytes, key, limit| SpecError::TooLarge {
        tool: shown(&def.name),
        what,
        bytes,
        key,
        limit,
    };
    for (what, bytes) in [
        ("input schema", def.input_schema.len()),
        ("output schema", output),
    ] {
        if bytes as u64 > limits.schema_bytes {
            return Err(too_large(what, bytes, "schema_bytes", limits.schema_bytes));
        }
    }
    if total as u64 > limits.definition_bytes {
        return Err(too_large(
            "definition",
            total,
            "definition_bytes",
            limits.definition_bytes,
        ));
    }
    Ok(())
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

/// Keywords whose value is a schema or an array of schemas.
const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "not",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// Makes `schema`'s formats ones that JSON Schema 2020-12 defines, in
/// every subschema: a format it does not define (schemars' `uint32`,
/// `int64`, `double`, …) is dropped, and an integer width becomes
/// `minimum`/`maximum`, keeping a tighter bound the schema already has.
/// Components are 32-bit, so `uint`/`int` (`usize`/`isize`) are 32 bits.
/// Returns each format removed, with where it was (a JSON pointer).
pub fn standardize_formats(schema: &mut Value) -> Vec<(String, String)> {
    let mut removed = Vec::new();
    standardize_at(schema, String::new(), &mut removed);
    removed
}

fn standardize_at(schema: &mut Value, at: String, removed: &mut Vec<(String, String)>) {
    let Value::Object(object) = schema else {
        return;
    };
    for (key, value) in object.iter_mut() {
        let here = format!("{at}/{}", pointer_escape(key));
        if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) {
            if let Value::Object(map) = value {
                for (name, sub) in map.iter_mut() {
                    standardize_at(sub, format!("{here}/{}", pointer_escape(name)), removed);
                }
            }
        } else if SUBSCHEMA_KEYWORDS.contains(&key.as_str()) {
            match value {
                Value::Array(items) => {
                    for (i, sub) in items.iter_mut().enumerate() {
                        standardize_at(sub, format!("{here}/{i}"), removed);
                    }
                }
                sub => standardize_at(sub, here, removed),
            }
        }
    }
    let Some(Value::String(format)) = object.get("format") else {
        return;
    };
    if STANDARD_FORMATS.contains(&format.as_str()) {
        return;
    }
    let format = format.clone();
    object.remove("format");
    let (min, max) = integer_bounds(&format);
    if let Some(min) = min {
        tighten(object, "minimum", min, true);
    }
    if let Some(max) = max {
        tighten(object, "maximum", max, false);
    }
    removed.push((if at.is_empty() { "/".into() } else { at }, format));
}

/// Escapes a name for a JSON pointer (RFC 6901).
fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The range of one of schemars' integer formats, as far as JSON numbers
/// hold it: (minimum, maximum).
fn integer_bounds(format: &str) -> (Option<Number>, Option<Number>) {
    let signed = |min: i64, max: i64| (Some(min.into()), Some(max.into()));
    let unsigned = |max: u64| (Some(0u64.into()), Some(max.into()));
    match format {
        "int8" => signed(i8::MIN.into(), i8::MAX.into()),
        "int16" => signed(i16::MIN.into(), i16::MAX.into()),
        "int32" | "int" => signed(i32::MIN.into(), i32::MAX.into()),
        "int64" => signed(i64::MIN, i64::MAX),
        "uint8" => unsigned(u8::MAX.into()),
        "uint16" => unsigned(u16::MAX.into()),
        "uint32" | "uint" => unsigned(u32::MAX.into()),
        "uint64" => unsigned(u64::MAX),
        "uint128" => (Some(0u64.into()), None),
        _ => (None, None),
    }
}

/// Sets `key` to `bound` unless the schema already has one at least as
/// tight (greater for a `minimum`, smaller for a `maximum`).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Limits that only the fields a test sets can hit.
    fn roomy_limits() -> Limits {
        let second = std::time::Duration::from_secs(1);
        Limits {
            memory_bytes: 1 << 30,
            call_timeout: second,
            output_bytes: u64::MAX,
            http_body_bytes: u64::MAX,
            http_timeout: second,
            http_requests_per_call: u32::MAX,
            concurrent_calls: u32::MAX,
            confirmations_per_call: u32::MAX,
            log_messages_per_call: u32::MAX,
            log_bytes_per_call: u64::MAX,
            wasm_bytes: u64::MAX,
            compile_timeout: second,
            tools_per_component: u32::MAX,
            definition_bytes: u64::MAX,
            schema_bytes: u64::MAX,
        }
    }

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
            check_definitions(
                vec![def("a", schema), def("a", schema)],
                &roomy_limits(),
                None
            ),
            Err(SpecError::Duplicate(_))
        ));
    }

    #[test]
    fn a_schema_the_compile_cache_saw_pass_is_not_compiled_at_load_yet_still_checks_arguments() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("cache");
        let cache = CompileCache::open_with_key_file(&dir, &root.path().join("key")).unwrap();
        let schema = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;
        let load = |cache: &CompileCache| {
            check_definitions(vec![def("a", schema)], &roomy_limits(), Some(cache))
                .unwrap()
                .remove(0)
        };
        assert!(
            load(&cache).validator_built(),
            "the first load compiles the schema it checks"
        );
        let again = load(&cache);
        assert!(
            !again.validator_built(),
            "a load of the same text leaves the validator to the first call"
        );
        assert!(again.validate(&serde_json::json!({"n": "one"})).is_err());
        assert!(again.validate(&serde_json::json!({})).is_err());
        assert!(again.validate(&serde_json::json!({"n": 1})).is_ok());
        assert!(again.validator_built());

        // Another text is checked in full: an invalid schema is refused.
        let invalid = r#"{"type":"object","properties":{"n":{"type":12}}}"#;
        assert!(check_definitions(vec![def("a", invalid)], &roomy_limits(), Some(&cache)).is_err());
        // Only this user's key names a marker: the same directory under
        // another key knows nothing, so a marker copied or forged there
        // skips nothing.
        let other = CompileCache::open_with_key_file(&dir, &root.path().join("other key")).unwrap();
        assert!(load(&other).validator_built());
        assert!(
            !other.schema_checked("output", schema),
            "input and output are apart"
        );
    }

    #[test]
    fn the_count_and_sizes_are_checked_before_any_schema_is_parsed() {
        let limits = Limits {
            tools_per_component: 2,
            definition_bytes: 200,
            schema_bytes: 100,
            ..roomy_limits()
        };
        // Three definitions whose schemas are not even JSON: the count
        // alone refuses them.
        let err = check_definitions(
            vec![def("a", "x"), def("b", "x"), def("c", "x")],
            &limits,
            None,
        )
        .unwrap_err();
        assert!(matches!(
            err,
            SpecError::TooManyTools { count: 3, limit: 2 }
        ));
        assert!(
            err.to_string().contains("limits.tools_per_component"),
            "{err}"
        );

        let big_schema = format!(r#"{{"type":"object","description":"{}"}}"#, "x".repeat(100));
        let err = check_definitions(vec![def("a", "x"), def("b", &big_schema)], &limits, None)
            .unwrap_err();
        assert!(
            err.to_string().contains("limits.schema_bytes (100)"),
            "{err}"
        );

        let mut long = def("long", r#"{"type":"object"}"#);
        long.description = "x".repeat(10_000);
        let err = check_definitions(vec![long], &limits, None).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("limits.definition_bytes (200)"), "{text}");
        assert!(text.len() < 400, "the error stays short: {text}");
    }

    #[test]
    fn formats_are_made_standard_and_widths_become_bounds() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint32", "minimum": 0},
                "small": {"type": ["integer", "null"], "format": "int8", "minimum": -5},
                "capped": {"type": "integer", "format": "uint64", "maximum": 10},
                "ratio": {"type": "number", "format": "double"},
                "when": {"type": "string", "format": "date-time"},
                "format": {"type": "string"},
                "list": {"type": "array", "items": {"type": "integer", "format": "int64"}},
                "either": {"anyOf": [{"type": "integer", "format": "uint"}, {"type": "null"}]}
            },
            "$defs": {"d": {"type": "integer", "format": "uint16"}},
            "examples": [{"format": "uint8"}]
        });
        let removed = standardize_formats(&mut schema);
        let p = &schema["properties"];
        assert_eq!(
            p["n"],
            serde_json::json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(p["small"]["minimum"], -5, "a tighter bound stays");
        assert_eq!(p["small"]["maximum"], 127);
        assert_eq!(p["capped"]["maximum"], 10, "a tighter bound stays");
        assert_eq!(p["ratio"], serde_json::json!({"type": "number"}));
        assert_eq!(p["when"]["format"], "date-time");
        assert_eq!(p["format"], serde_json::json!({"type": "string"}));
        assert_eq!(p["list"]["items"]["minimum"], i64::MIN);
        assert_eq!(p["either"]["anyOf"][0]["maximum"], 4294967295u64);
        assert_eq!(schema["$defs"]["d"]["maximum"], 65535);
        assert_eq!(
            schema["examples"][0]["format"], "uint8",
            "data is not a schema"
        );
        let mut at: Vec<String> = removed.iter().map(|(at, f)| format!("{at}: {f}")).collect();
        at.sort();
        assert_eq!(
            at,
            [
                "/$defs/d: uint16",
                "/properties/capped: uint64",
                "/properties/either/anyOf/0: uint",
                "/properties/list/items: int64",
                "/properties/n: uint32",
                "/properties/ratio: double",
                "/properties/small: int8",
            ]
        );
    }

    #[test]
    fn published_bounds_are_enforced_and_findings_recorded() {
        let s = ToolSpec::from_definition(def(
            "a",
            r#"{"type":"object","properties":{"n":{"type":"integer","format":"uint32","minimum":0}}}"#,
        ))
        .unwrap();
        assert_eq!(s.input_schema["properties"]["n"]["maximum"], 4294967295u64);
        assert_eq!(s.nonstandard_formats, ["input /properties/n: uint32"]);
        assert!(s.validate(&serde_json::json!({"n": 4294967295u64})).is_ok());
        assert!(
            s.validate(&serde_json::json!({"n": 4294967296u64}))
                .is_err()
        );
    }

    #[test]
    fn schemas_never_reach_outside_themselves() {
        for schema in [
            r#"{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:9/x"}}}"#,
            r#"{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}"#,
            r#"{"type":"object","properties":{"a":{"$ref":"other.json"}}}"#,
            r#"{"$schema":"http://127.0.0.1:9/meta","type":"object"}"#,
        ] {
            let err = ToolSpec::from_definition(def("a", schema)).unwrap_err();
            assert!(
                matches!(err, SpecError::BadSchema { .. }),
                "{schema}: {err}"
            );
            let mut with_output = def("a", r#"{"type":"object"}"#);
            with_output.output_schema = Some(schema.into());
            assert!(ToolSpec::from_definition(with_output).is_err(), "{schema}");
        }
        let local = r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer"}}}"##;
        let s = ToolSpec::from_definition(def("a", local)).unwrap();
        assert!(s.validate(&serde_json::json!({"a": "x"})).is_err());
    }

    #[test]
    fn a_subschema_naming_its_own_draft_is_still_checked_by_the_schemas_and_one_naming_no_draft_is_refused()
     {
        // A subschema that is a resource of its own (`$id`) and names
        // another draft is still held to the whole schema's draft (here
        // 2020-12) when the schema is checked at load: draft 4's boolean
        // `exclusiveMinimum` is refused, with the reason.
        let draft4 = r#"{"type":"object","properties":{"n":{"$id":"urn:toolhost:n","$schema":"http://json-schema.org/draft-04/schema#","type":"integer","minimum":0,"exclusiveMinimum":true}}}"#;
        let err = ToolSpec::from_definition(def("a", draft4)).unwrap_err();
        assert!(err.to_string().contains("not a valid JSON Schema"), "{err}");
        // A subschema naming something that is no draft: refused at load,
        // never fetched (the address would refuse a connection).
        let unknown = r#"{"type":"object","properties":{"n":{"$id":"urn:toolhost:n","$schema":"http://127.0.0.1:9/meta","type":"integer"}}}"#;
        let err = ToolSpec::from_definition(def("a", unknown)).unwrap_err();
        assert!(
            err.to_string()
                .contains("Unknown specification: http://127.0.0.1:9/meta"),
            "{err}"
        );
        // A `$schema` key inside data (a default value) is not a schema's.
        let data = r#"{"type":"object","properties":{"n":{"type":"object","default":{"$schema":"anything"}}}}"#;
        assert!(ToolSpec::from_definition(def("a", data)).is_ok());
    }
}
