//! `form` (contract 0.3, ADR 0035): a tool's own question, a form in the
//! elicitation subset of MCP 2025-11-25, asked through the call's
//! [`Confirmer`](super::confirm::Confirmer), the one that asks its
//! confirmations.
//!
//! Before anyone is asked, the form is checked: its schema must be in the
//! subset ([`check_form`]) and must not ask for a secret
//! ([`secret_field`]); a form that fails either ends the call with a tool
//! error. The user is shown the host's first line ([`form_header`]), then
//! the tool's message. An accepted answer is checked against the schema
//! ([`check_answer`]) before the tool sees it.
//!
//! A form's answer is recorded with the confirmations' answers, under the
//! form's own fingerprint
//! ([`QuestionHash::of_form`](super::confirm::QuestionHash::of_form)), so a
//! 2026-07-28 client's answer is sealed and replayed by the same mechanism,
//! and a changed form is a new question. It is never an approval: it closes
//! the confirmation gate like any answer other than a yes.

use serde_json::{Map, Value};

use super::confirm::{
    Answer, AskedForm, FormReply, INPUT_REQUIRED, QuestionHash, Reply, Wait, wait_span,
};
use super::{CallState, Pending, Stop};
use crate::bindings::v0_3::form::{Answer as WitAnswer, Host};

/// The host's line that opens every form: which tool asks, from which
/// plugin, and that the answer approves nothing. The tool's message follows
/// after a blank line.
pub fn form_header(tool: &str, plugin: &str, file: &str) -> String {
    format!(
        "toolhost: the tool \"{tool}\" of plugin \"{plugin}\" ({file}) asks you to fill in a form. \
         Your answer goes to this one call of the tool and approves nothing: a change still needs \
         your separate confirmation. Never enter a password or other secret here. \
         The tool's own words follow."
    )
}

/// The keyword with which a form names its key in a 2026-07-28
/// `inputRequests` (and the client's `inputResponses`), e.g.
/// `"x-toolhost-input-key": "user_name"`. Without it the key is `confirm`,
/// the confirmations' key. It is the host's keyword, not the client's: the
/// host takes it out of the schema it sends (ADR 0048).
pub const INPUT_KEY: &str = "x-toolhost-input-key";

/// The longest key [`INPUT_KEY`] may name, in bytes.
const INPUT_KEY_MAX: usize = 64;

/// Keys a form's top level may have.
const TOP_KEYS: &[&str] = &[
    "$schema",
    "type",
    "properties",
    "required",
    "title",
    "description",
    INPUT_KEY,
];

/// The key the form `schema` names with [`INPUT_KEY`], if it names one.
/// Only meaningful for a form [`check_form`] accepted.
pub fn input_key(schema: &Value) -> Option<&str> {
    schema.get(INPUT_KEY).and_then(Value::as_str)
}

/// The form `schema` as a client is sent it: without the host's
/// [`INPUT_KEY`].
pub fn for_client(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(top) = schema.as_object_mut() {
        top.remove(INPUT_KEY);
    }
    schema
}

/// Checks the key a form names: 1 to 64 ASCII letters, digits, `_`, `-`
/// or `.`, so it is a plain JSON object key every client can echo.
fn check_input_key(top: &Map<String, Value>) -> Result<(), String> {
    let Some(key) = top.get(INPUT_KEY) else {
        return Ok(());
    };
    let valid = key.as_str().is_some_and(|k| {
        !k.is_empty()
            && k.len() <= INPUT_KEY_MAX
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    });
    if valid {
        Ok(())
    } else {
        Err(format!(
            "\"{INPUT_KEY}\" must be a string of 1 to {INPUT_KEY_MAX} ASCII letters, digits, '_', '-' or '.'; it is {key}"
        ))
    }
}

/// String formats the subset allows.
const FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// Checks that `schema` is a form in the elicitation subset of MCP
/// 2025-11-25; the error names the field and the rule.
pub fn check_form(schema: &Value) -> Result<(), String> {
    let top = schema
        .as_object()
        .ok_or("the form's schema must be a JSON object")?;
    only_keys(top, TOP_KEYS, "the form")?;
    check_input_key(top)?;
    if top.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the form's schema must have \"type\": \"object\"".into());
    }
    for key in ["title", "description"] {
        optional_string(top, key, "the form")?;
    }
    let properties = top
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("the form's schema must have \"properties\", an object of its fields")?;
    if properties.is_empty() {
        return Err("the form has no fields".into());
    }
    for (name, property) in properties {
        check_field(name, property)?;
    }
    if let Some(required) = top.get("required") {
        let names = required
            .as_array()
            .ok_or("\"required\" must be a list of field names")?;
        for name in names {
            match name.as_str() {
                Some(n) if properties.contains_key(n) => {}
                _ => return Err(format!("\"required\" names {name}, which is not a field")),
            }
        }
    }
    Ok(())
}

/// Checks one field of a form.
fn check_field(name: &str, field: &Value) -> Result<(), String> {
    let what = format!("field {name:?}");
    let f = field
        .as_object()
        .ok_or_else(|| format!("{what} must be a JSON object"))?;
    for key in ["title", "description"] {
        optional_string(f, key, &what)?;
    }
    let default = f.get("default");
    match f.get("type").and_then(Value::as_str) {
        Some("string") if f.contains_key("oneOf") => {
            only_keys(
                f,
                &["type", "title", "description", "oneOf", "default"],
                &what,
            )?;
            let values = titled_values(&f["oneOf"], &what, "oneOf")?;
            default_in(default, &values, &what)
        }
        Some("string") if f.contains_key("enum") => {
            only_keys(
                f,
                &[
                    "type",
                    "title",
                    "description",
                    "enum",
                    "enumNames",
                    "default",
                ],
                &what,
            )?;
            let values = strings(&f["enum"], &what, "enum")?;
            if let Some(names) = f.get("enumNames")
                && strings(names, &what, "enumNames")?.len() != values.len()
            {
                return Err(format!(
                    "{what}: \"enumNames\" must name every value of \"enum\""
                ));
            }
            default_in(default, &values, &what)
        }
        Some("string") => {
            only_keys(
                f,
                &[
                    "type",
                    "title",
                    "description",
                    "minLength",
                    "maxLength",
                    "format",
                    "default",
                ],
                &what,
            )?;
            for key in ["minLength", "maxLength"] {
                if f.get(key).is_some_and(|v| v.as_u64().is_none()) {
                    return Err(format!("{what}: \"{key}\" must be a whole number"));
                }
            }
            if let Some(format) = f.get("format")
                && !format.as_str().is_some_and(|s| FORMATS.contains(&s))
            {
                return Err(format!(
                    "{what}: \"format\" must be one of {}",
                    FORMATS.join(", ")
                ));
            }
            if default.is_some_and(|d| !d.is_string()) {
                return Err(format!("{what}: \"default\" must be a string"));
            }
            Ok(())
        }
        Some(ty @ ("number" | "integer")) => {
            only_keys(
                f,
                &[
                    "type",
                    "title",
                    "description",
                    "minimum",
                    "maximum",
                    "default",
                ],
                &what,
            )?;
            let fits = |v: &Value| {
                if ty == "integer" {
                    v.is_i64()
                } else {
                    v.is_number()
                }
            };
            for key in ["minimum", "maximum", "default"] {
                if f.get(key).is_some_and(|v| !fits(v)) {
                    return Err(format!("{what}: \"{key}\" must be {}", article(ty)));
                }
            }
            Ok(())
        }
        Some("boolean") => {
            only_keys(f, &["type", "title", "description", "default"], &what)?;
            if default.is_some_and(|d| !d.is_boolean()) {
                return Err(format!("{what}: \"default\" must be true or false"));
            }
            Ok(())
        }
        Some("array") => {
            only_keys(
                f,
                &[
                    "type",
                    "title",
                    "description",
                    "items",
                    "minItems",
                    "maxItems",
                    "default",
                ],
                &what,
            )?;
            for key in ["minItems", "maxItems"] {
                if f.get(key).is_some_and(|v| v.as_u64().is_none()) {
                    return Err(format!("{what}: \"{key}\" must be a whole number"));
                }
            }
            let items = f
                .get("items")
                .and_then(Value::as_object)
                .ok_or_else(|| format!("{what}: a multi-select needs \"items\""))?;
            let values = if items.contains_key("anyOf") {
                only_keys(items, &["anyOf"], &what)?;
                titled_values(&items["anyOf"], &what, "items.anyOf")?
            } else {
                only_keys(items, &["type", "enum"], &what)?;
                if items.get("type").and_then(Value::as_str) != Some("string") {
                    return Err(format!(
                        "{what}: a multi-select's \"items\" must be {{\"type\": \"string\", \"enum\": […]}} or {{\"anyOf\": […]}}"
                    ));
                }
                strings(
                    items.get("enum").unwrap_or(&Value::Null),
                    &what,
                    "items.enum",
                )?
            };
            if let Some(d) = default {
                let chosen = d
                    .as_array()
                    .ok_or_else(|| format!("{what}: \"default\" must be a list"))?;
                for c in chosen {
                    default_in(Some(c), &values, &what)?;
                }
            }
            Ok(())
        }
        _ => Err(format!(
            "{what} must have \"type\" \"string\", \"number\", \"integer\", \"boolean\" or \"array\" (a multi-select): forms hold flat fields only"
        )),
    }
}

fn article(ty: &str) -> &'static str {
    if ty == "integer" {
        "an integer"
    } else {
        "a number"
    }
}

/// Refuses any key of `object` outside `allowed`.
fn only_keys(object: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match object.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(format!(
            "{what}: \"{key}\" is not part of the elicitation subset (allowed here: {})",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

fn optional_string(object: &Map<String, Value>, key: &str, what: &str) -> Result<(), String> {
    match object.get(key) {
        Some(v) if !v.is_string() => Err(format!("{what}: \"{key}\" must be a string")),
        _ => Ok(()),
    }
}

/// A non-empty list of strings.
fn strings<'a>(value: &'a Value, what: &str, key: &str) -> Result<Vec<&'a str>, String> {
    let list = value
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| format!("{what}: \"{key}\" must be a non-empty list of strings"))?;
    list.iter()
        .map(|v| {
            v.as_str()
                .ok_or_else(|| format!("{what}: \"{key}\" must be a non-empty list of strings"))
        })
        .collect()
}

/// The values of a non-empty list of `{"const": value, "title": title}`.
fn titled_values<'a>(value: &'a Value, what: &str, key: &str) -> Result<Vec<&'a str>, String> {
    let bad = || {
        format!(
            "{what}: \"{key}\" must be a non-empty list of {{\"const\": \"value\", \"title\": \"Title\"}}"
        )
    };
    let list = value.as_array().filter(|l| !l.is_empty()).ok_or_else(bad)?;
    list.iter()
        .map(|option| {
            let o = option.as_object().ok_or_else(bad)?;
            only_keys(o, &["const", "title"], what)?;
            match (o.get("const").and_then(Value::as_str), o.get("title")) {
                (Some(c), Some(Value::String(_))) => Ok(c),
                _ => Err(bad()),
            }
        })
        .collect()
}

fn default_in(default: Option<&Value>, values: &[&str], what: &str) -> Result<(), String> {
    match default {
        None => Ok(()),
        Some(Value::String(d)) if values.contains(&d.as_str()) => Ok(()),
        Some(d) => Err(format!("{what}: the default {d} is not one of its values")),
    }
}

/// Words that, in a field's name, title or description, ask for a secret.
/// MCP forbids asking passwords, keys, tokens and payment credentials in
/// form mode: the answer passes through the client, the model's context
/// and the host's logs of the call.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "privatekey",
    "pin",
    "cvv",
    "cvc",
    "otp",
    "ssn",
];

/// Phrases (as consecutive words) that ask for a secret.
const SECRET_PHRASES: &[&[&str]] = &[
    &["api", "key"],
    &["private", "key"],
    &["secret", "key"],
    &["access", "key"],
    &["card", "number"],
    &["credit", "card"],
    &["security", "code"],
    &["one", "time", "code"],
    &["social", "security"],
];

/// The words of `text`, lower case: split at anything not a letter or
/// digit and between a lower-case letter and an upper-case one
/// (`apiKey` is `api key`).
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether `text` speaks of a secret.
fn speaks_of_secret(text: &str) -> bool {
    let words = words(text);
    words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
        || SECRET_PHRASES
            .iter()
            .any(|phrase| words.windows(phrase.len()).any(|w| w == *phrase))
}

/// The first field of `schema` that asks for a secret, by its name, title
/// or description, if any.
pub fn secret_field(schema: &Value) -> Option<String> {
    let properties = schema.get("properties")?.as_object()?;
    properties.iter().find_map(|(name, field)| {
        let texts = [
            Some(name.as_str()),
            field.get("title").and_then(Value::as_str),
            field.get("description").and_then(Value::as_str),
        ];
        texts
            .into_iter()
            .flatten()
            .any(speaks_of_secret)
            .then(|| name.clone())
    })
}

/// Checks the form `schema` (already passed [`check_form`]) and refuses it
/// when it asks for a secret: the reason, in words, when refused.
pub fn refusal(schema: &Value) -> Option<String> {
    if let Err(why) = check_form(schema) {
        return Some(format!("the form is not one MCP clients can show: {why}"));
    }
    secret_field(schema).map(|field| {
        format!(
            "the form asks for a secret (field {field:?}): MCP forbids asking passwords, tokens, keys or payment details in a form, so the host never shows one"
        )
    })
}

/// Checks an accepted answer against the form: an object holding only the
/// form's fields, every required one, each valid against its field.
pub fn check_answer(schema: &Value, answer: &Value) -> Result<(), String> {
    let fields = answer
        .as_object()
        .ok_or("the answer is not a JSON object")?;
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("the form has no fields")?;
    if let Some(extra) = fields.keys().find(|k| !properties.contains_key(*k)) {
        return Err(format!(
            "the answer holds {extra:?}, which is not a field of the form"
        ));
    }
    let validator = jsonschema::options()
        .with_retriever(crate::spec::NoRetrieval)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| format!("the form's schema cannot be checked: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(answer)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

impl CallState {
    /// Ends the call with `why`, a refusal of the form before anyone was
    /// asked or of its answer before the tool saw it.
    fn refuse_form(&mut self, why: String) -> wasmtime::Error {
        self.stop = Some(Stop::Limit(why));
        wasmtime::format_err!("form refused")
    }
}

impl Host for CallState {
    async fn ask(&mut self, message: String, schema_text: String) -> wasmtime::Result<WitAnswer> {
        let settings = self.settings.clone();
        let limits = &settings.limits;
        let limit = limits.confirmations_per_call;
        // The host's own question, asked before the tool ran, is not the
        // tool's (as for confirmations).
        let asked_by_tool = self.answers.len() - usize::from(self.host_asked);
        if asked_by_tool as u32 >= limit {
            return Err(self.refuse_form(format!(
                "the tool asked more than {limit} questions (confirmations and forms) in one call (limits.confirmations_per_call)"
            )));
        }
        if message.len() as u64 > limits.output_bytes {
            return Err(self.refuse_form(format!(
                "the tool's form message ({} bytes) exceeds limits.output_bytes ({}); nobody was asked",
                message.len(),
                limits.output_bytes
            )));
        }
        if schema_text.len() as u64 > limits.schema_bytes {
            return Err(self.refuse_form(format!(
                "the tool's form schema ({} bytes) exceeds limits.schema_bytes ({}); nobody was asked",
                schema_text.len(),
                limits.schema_bytes
            )));
        }
        let schema: Value = match serde_json::from_str(&schema_text) {
            Ok(schema) => schema,
            Err(e) => {
                return Err(self.refuse_form(format!(
                    "the tool's form schema is not JSON ({e}); nobody was asked"
                )));
            }
        };
        if let Some(why) = refusal(&schema) {
            tracing::warn!(plugin = %self.settings.name, tool = %self.tool.name, "{why}");
            return Err(self.refuse_form(format!("{why}; nobody was asked")));
        }
        let prompt = format!(
            "{}\n\n{message}",
            form_header(&self.tool.name, &self.settings.name, &self.file)
        );
        let question = QuestionHash::of_form(&prompt, &schema_text);

        let wait = self.begin_asking()?;
        // The wait for a person, as its own span, as a confirmation's.
        let span = wait_span(Wait::Form);
        let asked = tracing::Instrument::instrument(
            self.confirmer.ask_form(&prompt, &schema_text),
            span.clone(),
        )
        .await;
        self.end_asking(wait).await;
        let reply = match asked {
            AskedForm::Answered(reply) => {
                // How it ended, never the values.
                span.record("toolhost.outcome", reply.name());
                reply
            }
            AskedForm::NeedsInput => {
                span.record("toolhost.outcome", INPUT_REQUIRED);
                self.hooks.needs_input();
                self.stop = Some(Stop::NeedsInput(Pending {
                    message: prompt,
                    form: Some(schema_text),
                }));
                return Err(wasmtime::format_err!("the form needs the client"));
            }
        };
        if let FormReply::Accepted(values) = &reply {
            let checked = serde_json::from_str::<Value>(values)
                .map_err(|e| format!("the answer is not JSON: {e}"))
                .and_then(|answer| check_answer(&for_client(&schema), &answer));
            if let Err(why) = checked {
                return Err(self.refuse_form(format!(
                    "the answer to the tool's form does not match the form ({why}); the tool did not see it, and nothing was changed"
                )));
            }
            if values.len() as u64 > limits.output_bytes {
                return Err(self.refuse_form(format!(
                    "the answer to the tool's form ({} bytes) exceeds limits.output_bytes ({}); the tool did not see it",
                    values.len(),
                    limits.output_bytes
                )));
            }
        }
        tracing::info!(
            plugin = %self.settings.name,
            tool = %self.tool.name,
            reply = reply.name(),
            "form answered"
        );
        self.hooks
            .form_answered(reply.name(), self.confirmer.answers_afresh());
        self.answers.push(Answer {
            question,
            reply: Reply::Form(reply.clone()),
        });
        // A form's answer is never an approval, and it takes back an
        // earlier yes: the latest answer is the gate.
        self.confirmed = false;
        Ok(match reply {
            FormReply::Accepted(values) => WitAnswer::Accepted(values),
            FormReply::Declined => WitAnswer::Declined,
            FormReply::Cancelled => WitAnswer::Cancelled,
            FormReply::Unsupported => WitAnswer::Unsupported,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_elicitation_subset_is_accepted_and_anything_else_refused() {
        let form = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe", "format": "email"},
                "age": {"type": "integer", "default": 30, "minimum": 0},
                "score": {"type": "number", "default": 95.5},
                "verified": {"type": "boolean", "default": true},
                "status": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a"},
                "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "One"}]},
                "many": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["x"]},
                "manyTitled": {"type": "array", "items": {"anyOf": [{"const": "v", "title": "V"}]}}
            },
            "required": ["name"]
        });
        check_form(&form).unwrap();
        for bad in [
            json!({"type": "object", "properties": {"nested": {"type": "object"}}}),
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "x"}}}),
            json!({"type": "object", "properties": {"s": {"type": "string", "format": "ipv4"}}}),
            json!({"type": "object", "properties": {"s": {"type": "string", "enum": ["a"], "default": "b"}}}),
            json!({"type": "object", "properties": {"n": {"type": "integer", "default": 1.5}}}),
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "properties": {"s": {"type": "string"}}, "required": ["t"]}),
        ] {
            assert!(check_form(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_form_may_name_its_input_key_and_the_client_never_sees_the_keyword() {
        let form = json!({
            "type": "object",
            "x-toolhost-input-key": "user_name",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        });
        check_form(&form).unwrap();
        assert_eq!(input_key(&form), Some("user_name"));
        let sent = for_client(&form);
        assert!(sent.get(INPUT_KEY).is_none(), "{sent}");
        assert_eq!(sent["properties"], form["properties"]);
        check_answer(&sent, &json!({"name": "Alice"})).unwrap();
        for bad in [
            json!(""),
            json!("has space"),
            json!(7),
            json!("k".repeat(65)),
        ] {
            let mut form = form.clone();
            form[INPUT_KEY] = bad.clone();
            assert!(check_form(&form).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_field_that_asks_for_a_secret_is_found_by_name_title_or_description() {
        let field = |f: Value| json!({"type": "object", "properties": {"x": f}});
        assert_eq!(
            secret_field(&json!({"type": "object", "properties": {"apiKey": {"type": "string"}}})),
            Some("apiKey".into())
        );
        assert!(
            secret_field(&field(json!({"type": "string", "title": "Your Password"}))).is_some()
        );
        assert!(
            secret_field(&field(
                json!({"type": "string", "description": "the card number on the front"})
            ))
            .is_some()
        );
        assert!(secret_field(&field(json!({"type": "string", "title": "Status"}))).is_none());
        assert!(
            secret_field(&field(
                json!({"type": "string", "description": "Which spinner to ship"})
            ))
            .is_none(),
            "words are matched whole"
        );
    }

    #[test]
    fn answers_are_checked_against_the_form() {
        let form = json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["a", "b"]},
                "when": {"type": "string", "format": "date"},
                "count": {"type": "integer", "maximum": 10}
            },
            "required": ["status"]
        });
        check_answer(
            &form,
            &json!({"status": "a", "when": "2026-01-31", "count": 3}),
        )
        .unwrap();
        for bad in [
            json!({"status": "c"}),
            json!({"when": "2026-01-31"}),
            json!({"status": "a", "when": "yesterday"}),
            json!({"status": "a", "count": 11}),
            json!({"status": "a", "other": 1}),
            json!(["a"]),
        ] {
            assert!(check_answer(&form, &bad).is_err(), "{bad}");
        }
    }
}
