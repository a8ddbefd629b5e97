//! Asking the user a form of the tool's own (`toolhost:plugin@0.3.0`):
//! "which of these statuses?", "ship on which date?".
//!
//! Build the form from [`Field`]s, then [`Form::ask`] it with a message;
//! the answer arrives as a typed struct. The fields are those MCP clients
//! can show (the elicitation subset of MCP 2025-11-25): text (optionally an
//! email address, URI, date or date-time), numbers, integers, yes/no,
//! one choice of several and several choices of several, each with a title,
//! a description and a default.
//!
//! What the host does with a form:
//! - it refuses a form that asks for a secret (a password, token, API key,
//!   PIN, card number…): MCP forbids asking those in a form, and
//!   `toolhost check` warns about it. The call ends with an error.
//! - it checks the answer against the form before the tool sees it.
//! - an answer approves nothing: to change data, ask the form first, then
//!   [`require_confirmation`](crate::confirm::require_confirmation) for the
//!   action it chose. A form answered after a confirmation takes that yes
//!   back.
//!
//! ```no_run
//! use serde::Deserialize;
//! use toolhost_sdk::{Field, Form, FormAnswer};
//!
//! #[derive(Deserialize)]
//! struct Choice {
//!     status: String,
//! }
//!
//! let form = Form::new().required(
//!     "status",
//!     Field::choice("Status", &[("st000002", "Shipped"), ("st000003", "Delivered")]),
//! );
//! match form.ask::<Choice>("Which status should order 1188 move to?") {
//!     Ok(FormAnswer::Accepted(choice)) => { /* use choice.status */ }
//!     Ok(_) => { /* declined, dismissed, or the client cannot show forms */ }
//!     Err(e) => { /* the answer did not fit `Choice` */ }
//! }
//! ```

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::ToolError;
use crate::bindings::toolhost::plugin0_3_0::form as wit;

/// What the user did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer<T> {
    /// The user submitted it; the values, checked by the host.
    Accepted(T),
    /// The user refused to answer.
    Declined,
    /// The user dismissed it, or it expired.
    Cancelled,
    /// The client cannot show forms.
    Unsupported,
}

impl<T> FormAnswer<T> {
    /// The answer as one word: `accepted`, `declined`, `cancelled` or
    /// `unsupported`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FormAnswer::Accepted(_) => "accepted",
            FormAnswer::Declined => "declined",
            FormAnswer::Cancelled => "cancelled",
            FormAnswer::Unsupported => "unsupported",
        }
    }
}

/// One field of a [`Form`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field(Map<String, Value>);

impl Field {
    fn of(kind: &str, title: &str) -> Field {
        let mut field = Map::new();
        field.insert("type".into(), kind.into());
        field.insert("title".into(), title.into());
        Field(field)
    }

    fn formatted(title: &str, format: &str) -> Field {
        let mut field = Field::of("string", title);
        field.0.insert("format".into(), format.into());
        field
    }

    /// Free text.
    pub fn text(title: &str) -> Field {
        Field::of("string", title)
    }

    /// An email address.
    pub fn email(title: &str) -> Field {
        Field::formatted(title, "email")
    }

    /// A URI.
    pub fn uri(title: &str) -> Field {
        Field::formatted(title, "uri")
    }

    /// A date, `YYYY-MM-DD`.
    pub fn date(title: &str) -> Field {
        Field::formatted(title, "date")
    }

    /// A date and time (RFC 3339).
    pub fn date_time(title: &str) -> Field {
        Field::formatted(title, "date-time")
    }

    /// A number.
    pub fn number(title: &str) -> Field {
        Field::of("number", title)
    }

    /// A whole number.
    pub fn integer(title: &str) -> Field {
        Field::of("integer", title)
    }

    /// Yes or no.
    pub fn boolean(title: &str) -> Field {
        Field::of("boolean", title)
    }

    /// One of `options`, each `(value, title)`: the answer is the value.
    pub fn choice(title: &str, options: &[(&str, &str)]) -> Field {
        let mut field = Field::of("string", title);
        field.0.insert("oneOf".into(), titled(options));
        field
    }

    /// Any of `options`, each `(value, title)`: the answer is the list of
    /// values chosen.
    pub fn choices(title: &str, options: &[(&str, &str)]) -> Field {
        let mut field = Field::of("array", title);
        field
            .0
            .insert("items".into(), json!({ "anyOf": titled(options) }));
        field
    }

    /// Adds a description: what to give, with an example.
    pub fn description(mut self, description: &str) -> Field {
        self.0.insert("description".into(), description.into());
        self
    }

    /// Adds the value the client fills in to start with.
    pub fn default(mut self, value: impl Into<Value>) -> Field {
        self.0.insert("default".into(), value.into());
        self
    }

    /// Adds a bound: `minimum`/`maximum` for numbers, `minLength`/
    /// `maxLength` for text, `minItems`/`maxItems` for several choices
    /// (`key` names it).
    pub fn bound(mut self, key: &str, value: impl Into<Value>) -> Field {
        self.0.insert(key.into(), value.into());
        self
    }
}

fn titled(options: &[(&str, &str)]) -> Value {
    Value::Array(
        options
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect(),
    )
}

/// A form: fields in order, some required.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Form {
    properties: Map<String, Value>,
    required: Vec<String>,
    key: Option<String>,
}

/// The schema keyword that names a form's key in a 2026-07-28 client's
/// `inputRequests` and `inputResponses`; the host takes it out of the
/// schema the client sees. Without it the key is `confirm`.
pub const INPUT_KEY: &str = "x-toolhost-input-key";

impl Form {
    /// A form with no fields yet.
    pub fn new() -> Form {
        Form::default()
    }

    /// Adds a field the user must fill in.
    pub fn required(mut self, name: &str, field: Field) -> Form {
        self.required.push(name.to_string());
        self.properties
            .insert(name.to_string(), Value::Object(field.0));
        self
    }

    /// Adds a field the user may leave empty.
    pub fn optional(mut self, name: &str, field: Field) -> Form {
        self.properties
            .insert(name.to_string(), Value::Object(field.0));
        self
    }

    /// Names the key a 2026-07-28 client sees the form under in
    /// `inputRequests` and answers it under in `inputResponses` (1 to 64
    /// ASCII letters, digits, `_`, `-` or `.`); without it the key is
    /// `confirm`. The key only names the question: an answer is never a
    /// confirmation, whatever the key.
    pub fn key(mut self, key: &str) -> Form {
        self.key = Some(key.to_string());
        self
    }

    /// The form as the JSON Schema the host sees (the client sees it
    /// without [`INPUT_KEY`]).
    pub fn schema(&self) -> Value {
        let mut schema = json!({
            "type": "object",
            "properties": self.properties,
            "required": self.required,
        });
        if let Some(key) = &self.key {
            schema[INPUT_KEY] = key.as_str().into();
        }
        schema
    }

    /// Shows the form with `message` and waits for the answer. An accepted
    /// answer that does not fit `T` is a `VALIDATION_ERROR`.
    pub fn ask<T: DeserializeOwned>(&self, message: &str) -> Result<FormAnswer<T>, ToolError> {
        ask_schema(message, &self.schema())
    }
}

/// Shows the form `schema` (JSON Schema in the elicitation subset) with
/// `message` and waits for the answer; for forms built another way than
/// [`Form`].
pub fn ask_schema<T: DeserializeOwned>(
    message: &str,
    schema: &Value,
) -> Result<FormAnswer<T>, ToolError> {
    Ok(match wit::ask(message, &schema.to_string()) {
        wit::Answer::Accepted(values) => {
            FormAnswer::Accepted(serde_json::from_str(&values).map_err(|e| {
                ToolError::validation(format!("the form's answer does not fit: {e}"))
            })?)
        }
        wit::Answer::Declined => FormAnswer::Declined,
        wit::Answer::Cancelled => FormAnswer::Cancelled,
        wit::Answer::Unsupported => FormAnswer::Unsupported,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_a_flat_object_schema_with_titled_choices() {
        let form = Form::new()
            .required(
                "status",
                Field::choice("Status", &[("a", "A")]).default("a"),
            )
            .optional("when", Field::date("When"));
        assert_eq!(
            form.schema(),
            json!({
                "type": "object",
                "properties": {
                    "status": {"type": "string", "title": "Status", "oneOf": [{"const": "a", "title": "A"}], "default": "a"},
                    "when": {"type": "string", "title": "When", "format": "date"}
                },
                "required": ["status"]
            })
        );
    }

    #[test]
    fn a_form_names_its_input_key_with_the_hosts_keyword() {
        let form = Form::new()
            .required("name", Field::text("Name"))
            .key("user_name");
        assert_eq!(form.schema()[INPUT_KEY], json!("user_name"));
        assert!(Form::new().schema().get(INPUT_KEY).is_none());
    }
}
