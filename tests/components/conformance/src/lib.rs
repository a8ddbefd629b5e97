//! The tools the official MCP conformance suite's server scenarios call
//! (`@modelcontextprotocol/conformance`), as far as toolhost's contract
//! can express them. `cargo xtask conformance` serves this component over
//! Streamable HTTP and runs the suite against it; docs/conformance.md
//! lists every scenario, and why the ones that fail do.
//!
//! | tool | scenario |
//! |---|---|
//! | `test_simple_text` | `tools-call-simple-text` |
//! | `test_error_handling` | `tools-call-error` |
//! | `test_tool_with_progress` | `tools-call-with-progress` |
//! | `test_tool_with_logging` | `tools-call-with-logging` (its lines reach the operator's log, and the client because the suite's configuration sets `log_to_client`) |
//! | `test_elicitation` | `tools-call-elicitation` (asks toolhost's yes/no confirmation) |
//! | `json_schema_2020_12_tool` | `json-schema-2020-12` |
//! | `test_reconnection` | `server-sse-polling` |
//! | `test_input_required_result_request_state`, `…_tampered_state` | suite 0.2.0-alpha.12's `input-required-result-*` (ask toolhost's confirmation) |
//!
//! And, through contract 0.2's resources and prompts:
//!
//! | resource or prompt | scenario |
//! |---|---|
//! | `test://static-text` | `resources-read-text` |
//! | `test://static-binary` | `resources-read-binary` |
//! | `test://template/{id}/data` | `resources-templates-read` |
//! | `test://watched-resource` | `resources-subscribe`, `resources-unsubscribe` (the host serves the subscription) |
//! | `test_simple_prompt` | `prompts-get-simple` |
//! | `test_prompt_with_arguments` | `prompts-get-with-args`, `completion-complete` (`arg1` completes by prefix) |
//! | `test_prompt_with_embedded_resource` | `prompts-get-embedded-resource` |
//!
//! And, through contract 0.3's content blocks and forms:
//!
//! | tool or prompt | scenario |
//! |---|---|
//! | `test_image_content` | `tools-call-image` |
//! | `test_audio_content` | `tools-call-audio` |
//! | `test_embedded_resource` | `tools-call-embedded-resource` |
//! | `test_multiple_content_types` | `tools-call-mixed-content` |
//! | `test_elicitation_sep1034_defaults` | `elicitation-sep1034-defaults` (a form with defaults) |
//! | `test_elicitation_sep1330_enums` | `elicitation-sep1330-enums` (a form with every kind of enum) |
//! | `test_prompt_with_image` | `prompts-get-with-image` |
//! | `test_input_required_result_elicitation` | suite 0.2.0-alpha.12's `input-required-result-basic-elicitation` and `…-result-type` (a form under its own input key, `user_name`) |
//! | `test_input_required_result_multi_round` | suite 0.2.0-alpha.12's `input-required-result-multi-round` (two forms, two rounds, keys `step1` and `step2`) |
//!
//! Not here, because the contract cannot express it: sampling (no import
//! asks the client's model).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use toolhost_sdk::form::ask_schema;
use toolhost_sdk::{
    Annotations, Block, Contents, Field, Form, FormAnswer, Message, Prompt, Resource,
    ResourceTemplate, Tool, ToolError, confirm, log, progress,
};

/// The arguments of a tool that takes none.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArguments {}

/// What the scenarios' plain tools return: one sentence.
#[derive(Serialize, JsonSchema)]
struct Text {
    /// The sentence.
    text: String,
}

impl Text {
    fn new(text: &str) -> Text {
        Text {
            text: text.to_string(),
        }
    }
}

/// `tools-call-simple-text`: returns a fixed sentence.
struct SimpleText;

impl Tool for SimpleText {
    type Input = NoArguments;
    type Output = Text;
    const NAME: &'static str = "test_simple_text";
    const TITLE: &'static str = "Simple Text";
    const DESCRIPTION: &'static str = "Return a fixed sentence. Use it to check that a \
        client reads text results; the conformance suite's tools-call-simple-text scenario does.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: NoArguments) -> Result<Text, ToolError> {
        Ok(Text::new("This is a simple text response for testing."))
    }
}

/// `tools-call-error`: always fails.
struct ErrorHandling;

impl Tool for ErrorHandling {
    type Input = NoArguments;
    type Output = Text;
    const NAME: &'static str = "test_error_handling";
    const TITLE: &'static str = "Error Handling";
    const DESCRIPTION: &'static str = "Always fail with a tool error. Use it to check how \
        a client shows tool errors; the conformance suite's tools-call-error scenario does.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: NoArguments) -> Result<Text, ToolError> {
        Err(ToolError::internal(
            "This tool intentionally returns an error for testing",
        ))
    }
}

/// How many progress reports `test_tool_with_progress` sends.
const PROGRESS_STEPS: [f64; 3] = [0.0, 50.0, 100.0];

/// What `test_tool_with_progress` returns.
#[derive(Serialize, JsonSchema)]
struct ProgressDone {
    /// How many progress reports were sent.
    reports: u32,
}

/// `tools-call-with-progress`: reports 0, 50 and 100 out of 100.
struct WithProgress;

impl Tool for WithProgress {
    type Input = NoArguments;
    type Output = ProgressDone;
    const NAME: &'static str = "test_tool_with_progress";
    const TITLE: &'static str = "With Progress";
    const DESCRIPTION: &'static str = "Report progress 0, 50 and 100 out of 100, then finish. \
        Use it to check that progress reaches the client; the conformance suite's \
        tools-call-with-progress scenario does.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: NoArguments) -> Result<ProgressDone, ToolError> {
        for step in PROGRESS_STEPS {
            progress::report(step, Some(100.0), None);
        }
        Ok(ProgressDone {
            reports: PROGRESS_STEPS.len() as u32,
        })
    }
}

/// `tools-call-with-logging`: writes three lines to the log. They reach
/// the client because the block opts in (`log_to_client`, ADR 0046).
struct WithLogging;

impl Tool for WithLogging {
    type Input = NoArguments;
    type Output = Text;
    const NAME: &'static str = "test_tool_with_logging";
    const TITLE: &'static str = "With Logging";
    const DESCRIPTION: &'static str = "Write three lines to the operator's log, then finish. \
        The conformance suite's tools-call-with-logging scenario calls it.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: NoArguments) -> Result<Text, ToolError> {
        log::info("Tool execution started");
        log::info("Tool processing data");
        log::info("Tool execution completed");
        Ok(Text::new("Tool execution completed"))
    }
}

/// Arguments of `test_elicitation`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ElicitationInput {
    /// The question to put to the user.
    #[schemars(example = &"Please provide your information", length(min = 1, max = 1000))]
    message: String,
}

/// What `test_elicitation` returns.
#[derive(Serialize, JsonSchema)]
struct ElicitationAnswer {
    /// The user's answer: `confirmed`, `declined`, `cancelled` or
    /// `unsupported`.
    action: String,
}

/// `tools-call-elicitation`: asks the user, with toolhost's confirmation.
struct Elicitation;

impl Tool for Elicitation {
    type Input = ElicitationInput;
    type Output = ElicitationAnswer;
    const NAME: &'static str = "test_elicitation";
    const TITLE: &'static str = "Elicitation";
    const DESCRIPTION: &'static str = "Ask the user to approve the message and report the answer. \
        The conformance suite's tools-call-elicitation scenario calls it.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, input: ElicitationInput) -> Result<ElicitationAnswer, ToolError> {
        let answer = confirm::require_confirmation(&input.message);
        Ok(ElicitationAnswer {
            action: answer.as_str().to_string(),
        })
    }
}

/// What the 2026-07-28 `input-required-result-*` scenarios' tools return.
#[derive(Serialize, JsonSchema)]
struct ConfirmationAnswer {
    /// The answer to toolhost's confirmation: `confirmed`, `declined`,
    /// `cancelled` or `unsupported`.
    action: String,
}

/// Asks toolhost's confirmation (for a 2026-07-28 client, an
/// `input_required` result with a sealed `requestState`) and reports the
/// answer.
fn ask_confirmation(question: &str) -> ConfirmationAnswer {
    ConfirmationAnswer {
        action: confirm::require_confirmation(question).as_str().to_string(),
    }
}

/// A tool that asks toolhost's confirmation, under the name an
/// `input-required-result-*` scenario calls.
macro_rules! confirmation_tool {
    ($type:ident, $name:literal, $scenario:literal) => {
        #[doc = concat!("`", $scenario, "`: `", $name, "`.")]
        struct $type;

        impl Tool for $type {
            type Input = NoArguments;
            type Output = ConfirmationAnswer;
            const NAME: &'static str = $name;
            const TITLE: &'static str = "Input Required";
            const DESCRIPTION: &'static str = concat!(
                "Ask the user to confirm and report the answer. The conformance suite's ",
                $scenario,
                " scenario calls it: a 2026-07-28 client gets an input_required result \
                 with a sealed requestState, and retries with the answer."
            );
            const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

            fn call(&self, _: NoArguments) -> Result<ConfirmationAnswer, ToolError> {
                Ok(ask_confirmation("Proceed with the conformance check?"))
            }
        }
    };
}

/// What `test_input_required_result_elicitation` returns.
#[derive(Serialize, JsonSchema)]
struct Greeting {
    /// `Hello, NAME!`, or what the user did instead of answering.
    text: String,
}

/// Suite 0.2.0-alpha.12's `input-required-result-basic-elicitation` (and
/// `input-required-result-result-type`): a form of one field, `name`,
/// under the key the scenario answers, `user_name` (the schema keyword
/// `x-toolhost-input-key`, set by `Form::key`).
struct InputRequiredElicitation;

impl Tool for InputRequiredElicitation {
    type Input = NoArguments;
    type Output = Greeting;
    const NAME: &'static str = "test_input_required_result_elicitation";
    const TITLE: &'static str = "Greeting";
    const DESCRIPTION: &'static str = "Ask the user's name in a form and greet them. Use it \
        to check that a client answers a form under the key it was asked with (user_name); \
        the conformance suite's input-required-result-basic-elicitation scenario calls it.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: NoArguments) -> Result<Greeting, ToolError> {
        let form = Form::new()
            .required("name", Field::text("Name"))
            .key("user_name");
        let text = match form.ask::<serde_json::Value>("What is your name?")? {
            FormAnswer::Accepted(values) => {
                format!("Hello, {}!", values["name"].as_str().unwrap_or_default())
            }
            other => format!("The form was {}.", other.as_str()),
        };
        Ok(Greeting { text })
    }
}
confirmation_tool!(
    InputRequiredRequestState,
    "test_input_required_result_request_state",
    "input-required-result-request-state"
);
confirmation_tool!(
    InputRequiredTamperedState,
    "test_input_required_result_tampered_state",
    "input-required-result-tampered-state"
);

/// An address, the shared definition of `json_schema_2020_12_tool`'s
/// schema.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// Arguments of `json_schema_2020_12_tool`, and its result.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Person {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    address: Option<Address>,
}

/// Written by hand: the scenario checks that `$schema`, `$defs` (reached
/// by `$ref`) and `additionalProperties` reach the client as the tool
/// published them, which derived (inlined) schemas never use.
impl JsonSchema for Person {
    fn schema_name() -> Cow<'static, str> {
        "Person".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "description": "A postal address.",
                    "properties": {
                        "street": {"type": "string", "description": "Street and number."},
                        "city": {"type": "string", "description": "The city."}
                    }
                }
            },
            "properties": {
                "name": {"type": "string", "description": "A name.", "examples": ["Ada"]},
                "address": {
                    "$ref": "#/$defs/address",
                    "description": "Where the person lives.",
                    "examples": [{"city": "Paris"}]
                }
            },
            "additionalProperties": false
        })
    }
}

/// `json-schema-2020-12`: a schema with `$schema`, `$defs` and
/// `additionalProperties`; returns its arguments.
struct JsonSchema2020;

impl Tool for JsonSchema2020 {
    type Input = Person;
    type Output = Person;
    const NAME: &'static str = "json_schema_2020_12_tool";
    const TITLE: &'static str = "JSON Schema 2020-12";
    const DESCRIPTION: &'static str = "Return the person it was given. Its schema uses JSON \
        Schema 2020-12's $schema, $defs and additionalProperties: use it to check that they \
        reach the client unchanged, as the conformance suite's json-schema-2020-12 scenario does.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, input: Person) -> Result<Person, ToolError> {
        Ok(input)
    }
}

/// `server-sse-polling`: the scenario calls it and watches the stream the
/// answer comes on; the tool itself just answers.
struct Reconnection;

impl Tool for Reconnection {
    type Input = NoArguments;
    type Output = Text;
    const NAME: &'static str = "test_reconnection";
    const TITLE: &'static str = "Reconnection";
    const DESCRIPTION: &'static str = "Return a fixed sentence. The conformance suite's \
        server-sse-polling scenario calls it to watch the response stream.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: NoArguments) -> Result<Text, ToolError> {
        Ok(Text::new("Reconnection test completed"))
    }
}

/// `resources-read-text`: `test://static-text`.
struct StaticText;

impl Resource for StaticText {
    const URI: &'static str = "test://static-text";
    const NAME: &'static str = "static-text";
    const TITLE: &'static str = "Static Text";
    const DESCRIPTION: &'static str = "A fixed sentence; the conformance suite's \
        resources-read-text scenario reads it.";
    const MIME_TYPE: &'static str = "text/plain";

    fn read(&self) -> Result<Contents, ToolError> {
        Ok("This is the content of the static text resource.".into())
    }
}

/// `resources-subscribe`, `resources-unsubscribe`: `test://watched-resource`,
/// the URI those scenarios subscribe to. toolhost serves the subscription;
/// the resource is told updated when its component is reloaded.
struct WatchedResource;

impl Resource for WatchedResource {
    const URI: &'static str = "test://watched-resource";
    const NAME: &'static str = "watched-resource";
    const TITLE: &'static str = "Watched Resource";
    const DESCRIPTION: &'static str = "A fixed sentence; the conformance suite's \
        resources-subscribe and resources-unsubscribe scenarios subscribe to it.";
    const MIME_TYPE: &'static str = "text/plain";

    fn read(&self) -> Result<Contents, ToolError> {
        Ok("This resource is watched for updates.".into())
    }
}

/// A 1×1 PNG.
const PIXEL: [u8; 67] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// `resources-read-binary`: `test://static-binary`.
struct StaticBinary;

impl Resource for StaticBinary {
    const URI: &'static str = "test://static-binary";
    const NAME: &'static str = "static-binary";
    const TITLE: &'static str = "Static Binary";
    const DESCRIPTION: &'static str = "A 1×1 PNG; the conformance suite's \
        resources-read-binary scenario reads it.";
    const MIME_TYPE: &'static str = "image/png";

    fn read(&self) -> Result<Contents, ToolError> {
        Ok(Contents::Bytes(PIXEL.to_vec()))
    }
}

/// The variables of `test://template/{id}/data`.
#[derive(Deserialize)]
struct TemplateVariables {
    id: String,
}

/// `resources-templates-read`: `test://template/{id}/data`.
struct TemplateData;

impl ResourceTemplate for TemplateData {
    type Variables = TemplateVariables;
    const URI_TEMPLATE: &'static str = "test://template/{id}/data";
    const NAME: &'static str = "template";
    const TITLE: &'static str = "Template Data";
    const DESCRIPTION: &'static str = "A JSON object naming the id in its URI; the \
        conformance suite's resources-templates-read scenario reads one.";
    const MIME_TYPE: &'static str = "application/json";

    fn read(&self, _uri: &str, variables: TemplateVariables) -> Result<Contents, ToolError> {
        let id = variables.id;
        let data = format!("Data for ID: {id}");
        Ok(Contents::Text(format!(
            "{{\"id\":{id:?},\"templateTest\":true,\"data\":{data:?}}}"
        )))
    }
}

/// `prompts-get-simple`: `test_simple_prompt`.
struct SimplePrompt;

impl Prompt for SimplePrompt {
    type Arguments = NoArguments;
    const NAME: &'static str = "test_simple_prompt";
    const TITLE: &'static str = "Simple Prompt";
    const DESCRIPTION: &'static str = "A prompt without arguments; the conformance suite's \
        prompts-get-simple scenario gets it.";

    fn get(&self, _: NoArguments) -> Result<Vec<Message>, ToolError> {
        Ok(vec![Message::user("This is a simple prompt for testing.")])
    }
}

/// Arguments of `test_prompt_with_arguments`.
#[derive(Deserialize, JsonSchema)]
struct TwoArguments {
    /// First test argument, e.g. "hello".
    arg1: String,
    /// Second test argument, e.g. "world".
    arg2: String,
}

/// The values `test_prompt_with_arguments` completes its arguments from.
const ARGUMENT_VALUES: [&str; 6] = ["hello", "help", "test", "testing", "tested", "world"];

/// `prompts-get-with-args`: `test_prompt_with_arguments`; its arguments
/// complete (`completion-complete`) from [`ARGUMENT_VALUES`] that start
/// with what was typed, ignoring case.
struct PromptWithArguments;

impl Prompt for PromptWithArguments {
    type Arguments = TwoArguments;
    const NAME: &'static str = "test_prompt_with_arguments";
    const TITLE: &'static str = "Prompt With Arguments";
    const DESCRIPTION: &'static str = "A prompt that puts its two arguments into its \
        message; the conformance suite's prompts-get-with-args scenario gets it, and \
        completion-complete completes its arg1.";
    const COMPLETABLE: &'static [&'static str] = &["arg1", "arg2"];

    fn get(&self, a: TwoArguments) -> Result<Vec<Message>, ToolError> {
        Ok(vec![Message::user(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            a.arg1, a.arg2
        ))])
    }

    fn complete(
        &self,
        _argument: &str,
        value: &str,
        _context: &[(String, String)],
    ) -> Result<Vec<String>, ToolError> {
        let typed = value.to_lowercase();
        Ok(ARGUMENT_VALUES
            .iter()
            .filter(|v| v.starts_with(&typed))
            .map(|v| v.to_string())
            .collect())
    }
}

/// Arguments of `test_prompt_with_embedded_resource`.
#[derive(Deserialize, JsonSchema)]
struct EmbedArguments {
    /// URI of the resource to embed, e.g. "test://example-resource".
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

/// `prompts-get-embedded-resource`: `test_prompt_with_embedded_resource`.
struct PromptWithEmbeddedResource;

impl Prompt for PromptWithEmbeddedResource {
    type Arguments = EmbedArguments;
    const NAME: &'static str = "test_prompt_with_embedded_resource";
    const TITLE: &'static str = "Prompt With an Embedded Resource";
    const DESCRIPTION: &'static str = "A prompt that embeds a resource at the URI it is \
        given; the conformance suite's prompts-get-embedded-resource scenario gets it.";

    fn get(&self, a: EmbedArguments) -> Result<Vec<Message>, ToolError> {
        Ok(vec![
            Message::user_resource(
                a.resource_uri,
                "text/plain",
                "Embedded resource content for testing.",
            ),
            Message::user("Please process the embedded resource above."),
        ])
    }
}

/// A WAV file of no samples: 8 kHz, 8-bit, mono.
const SILENCE: [u8; 44] = [
    b'R', b'I', b'F', b'F', 36, 0, 0, 0, b'W', b'A', b'V', b'E', b'f', b'm', b't', b' ', 16, 0, 0,
    0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0, b'd', b'a', b't', b'a', 0, 0, 0,
    0,
];

/// A tool of no arguments that returns a sentence and `$blocks`, under
/// the name a content scenario calls.
macro_rules! content_tool {
    ($type:ident, $name:literal, $scenario:literal, $sentence:literal, $blocks:expr) => {
        #[doc = concat!("`", $scenario, "`: `", $name, "`.")]
        struct $type;

        impl Tool for $type {
            type Input = NoArguments;
            type Output = Text;
            const NAME: &'static str = $name;
            const TITLE: &'static str = "Content Blocks";
            const DESCRIPTION: &'static str = concat!(
                "Return a sentence and content blocks. Use it to check that a client shows \
                 images, audio and embedded resources; the conformance suite's ",
                $scenario,
                " scenario calls it."
            );
            const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

            fn call(&self, _: NoArguments) -> Result<Text, ToolError> {
                Ok(Text::new($sentence))
            }

            fn content(&self, _: &Text) -> Vec<Block> {
                $blocks
            }
        }
    };
}

content_tool!(
    ImageContent,
    "test_image_content",
    "tools-call-image",
    "A 1x1 PNG.",
    vec![Block::image("image/png", PIXEL)]
);
content_tool!(
    AudioContent,
    "test_audio_content",
    "tools-call-audio",
    "A silent WAV.",
    vec![Block::audio("audio/wav", SILENCE)]
);
content_tool!(
    EmbeddedResource,
    "test_embedded_resource",
    "tools-call-embedded-resource",
    "An embedded resource.",
    vec![Block::document(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content."
    )]
);
content_tool!(
    MultipleContentTypes,
    "test_multiple_content_types",
    "tools-call-mixed-content",
    "Multiple content types test:",
    vec![
        Block::image("image/png", PIXEL),
        Block::document(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#
        ),
    ]
);

/// What the form scenarios' tools return.
#[derive(Serialize, JsonSchema)]
struct FormResult {
    /// `accepted`, `declined`, `cancelled` or `unsupported`.
    action: String,
    /// The values, when accepted.
    content: Option<serde_json::Value>,
}

/// Asks the form `schema` and reports the answer.
fn ask_form(message: &str, schema: serde_json::Value) -> Result<FormResult, ToolError> {
    let answer = ask_schema::<serde_json::Value>(message, &schema)?;
    Ok(FormResult {
        action: answer.as_str().to_string(),
        content: match answer {
            FormAnswer::Accepted(values) => Some(values),
            _ => None,
        },
    })
}

/// A tool of no arguments that asks the form `$schema`, under the name a
/// form scenario calls.
macro_rules! form_tool {
    ($type:ident, $name:literal, $scenario:literal, $schema:expr) => {
        #[doc = concat!("`", $scenario, "`: `", $name, "`.")]
        struct $type;

        impl Tool for $type {
            type Input = NoArguments;
            type Output = FormResult;
            const NAME: &'static str = $name;
            const TITLE: &'static str = "Form";
            const DESCRIPTION: &'static str = concat!(
                "Ask the user a form and report the answer. Use it to check that a client \
                 shows a tool's own form; the conformance suite's ",
                $scenario,
                " scenario calls it."
            );
            const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

            fn call(&self, _: NoArguments) -> Result<FormResult, ToolError> {
                ask_form("Please fill in the form.", $schema)
            }
        }
    };
}

form_tool!(
    ElicitationDefaults,
    "test_elicitation_sep1034_defaults",
    "elicitation-sep1034-defaults",
    serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    })
);
form_tool!(
    ElicitationEnums,
    "test_elicitation_sep1330_enums",
    "elicitation-sep1330-enums",
    serde_json::json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        },
        "required": []
    })
);

/// What `test_input_required_result_multi_round` returns.
#[derive(Serialize, JsonSchema)]
struct NameAndColor {
    /// The name given in the first round.
    name: Option<String>,
    /// The colour given in the second round.
    color: Option<String>,
}

/// The one text field `field` of a form asked under the input key `key`,
/// when accepted.
fn one_field(message: &str, field: &str, key: &str) -> Result<Option<String>, ToolError> {
    let schema = serde_json::json!({
        "type": "object",
        "x-toolhost-input-key": key,
        "properties": {field: {"type": "string"}},
        "required": [field]
    });
    Ok(match ask_schema::<serde_json::Value>(message, &schema)? {
        FormAnswer::Accepted(values) => values[field].as_str().map(str::to_string),
        _ => None,
    })
}

/// Suite 0.2.0-alpha.12's `input-required-result-multi-round`: two forms
/// in turn, so a 2026-07-28 client answers in two rounds, each with its
/// own sealed `requestState`.
struct InputRequiredMultiRound;

impl Tool for InputRequiredMultiRound {
    type Input = NoArguments;
    type Output = NameAndColor;
    const NAME: &'static str = "test_input_required_result_multi_round";
    const TITLE: &'static str = "Two Forms";
    const DESCRIPTION: &'static str = "Ask the user's name, then their favourite colour, and \
        report both. Use it to check that a client answers forms over several rounds; the \
        conformance suite's input-required-result-multi-round scenario calls it.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: NoArguments) -> Result<NameAndColor, ToolError> {
        let name = one_field("Step 1: What is your name?", "name", "step1")?;
        let color = one_field("Step 2: What is your favorite color?", "color", "step2")?;
        Ok(NameAndColor { name, color })
    }
}

/// `prompts-get-with-image`: `test_prompt_with_image`.
struct PromptWithImage;

impl Prompt for PromptWithImage {
    type Arguments = NoArguments;
    const NAME: &'static str = "test_prompt_with_image";
    const TITLE: &'static str = "Prompt With an Image";
    const DESCRIPTION: &'static str = "A 1x1 PNG and a question about it; the conformance \
        suite's prompts-get-with-image scenario gets it.";

    fn get(&self, _: NoArguments) -> Result<Vec<Message>, ToolError> {
        Ok(vec![
            Message::user_image("image/png", PIXEL),
            Message::user("Please analyze the image above."),
        ])
    }
}

toolhost_sdk::export_component! {
    tools: [
        SimpleText,
        ErrorHandling,
        WithProgress,
        WithLogging,
        Elicitation,
        JsonSchema2020,
        Reconnection,
        InputRequiredElicitation,
        InputRequiredRequestState,
        InputRequiredTamperedState,
        ImageContent,
        AudioContent,
        EmbeddedResource,
        MultipleContentTypes,
        ElicitationDefaults,
        ElicitationEnums,
        InputRequiredMultiRound,
    ],
    resources: [StaticText, StaticBinary, WatchedResource],
    templates: [TemplateData],
    prompts: [
        SimplePrompt,
        PromptWithArguments,
        PromptWithEmbeddedResource,
        PromptWithImage,
    ],
}
