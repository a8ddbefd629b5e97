//! The [`Tool`] traits, their metadata, and the dispatcher behind
//! [`export_tools!`](crate::export_tools).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};

use crate::bindings::toolhost::plugin0_1_0::types as wit;
use crate::bindings::toolhost::plugin0_3_0::content::ToolOutput;
use crate::content::Block;
use crate::schema::{input_schema_text, output_schema_text};

/// The error vocabulary shared by every toolhost tool.
pub use crate::bindings::toolhost::plugin0_1_0::types::ErrorCode;

/// Behaviour hints for MCP clients. All four are always sent.
///
/// The host enforces `read_only`: a read-only tool can only send `GET` and
/// `HEAD` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// The tool changes nothing outside itself.
    pub read_only: bool,
    /// The tool may delete or overwrite data.
    pub destructive: bool,
    /// Repeating a call with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool talks to systems outside the host.
    pub open_world: bool,
}

impl Annotations {
    /// A read-only tool that queries an outside system (an API).
    pub const READ_ONLY: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: true,
    };

    /// A read-only tool that computes its answer without outside systems.
    pub const READ_ONLY_LOCAL: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// A tool that changes an outside system. Say whether it can destroy or
    /// overwrite data and whether repeating it is harmless.
    pub const fn mutating(destructive: bool, idempotent: bool) -> Annotations {
        Annotations {
            read_only: false,
            destructive,
            idempotent,
            open_world: true,
        }
    }
}

impl ErrorCode {
    /// Every code, in the WIT's order.
    pub const ALL: [ErrorCode; 7] = [
        ErrorCode::ValidationError,
        ErrorCode::PermissionDenied,
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::RateLimit,
        ErrorCode::Transient,
        ErrorCode::Internal,
    ];

    /// The code as clients see it in an issue: `VALIDATION_ERROR`,
    /// `PERMISSION_DENIED`, `NOT_FOUND`, `CONFLICT`, `RATE_LIMIT`,
    /// `TRANSIENT` or `INTERNAL`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ValidationError => "VALIDATION_ERROR",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::RateLimit => "RATE_LIMIT",
            ErrorCode::Transient => "TRANSIENT",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

/// Serialized as [`ErrorCode::as_str`] spells it.
impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A string enum of the [`ErrorCode::as_str`] spellings.
impl JsonSchema for ErrorCode {
    fn schema_name() -> Cow<'static, str> {
        "ErrorCode".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        json_schema!({ "type": "string", "enum": codes })
    }
}

/// A failed tool call: the client sees `isError: true` and the envelope
/// `{"ok":false,"result":null,"issues":[…]}` built from this.
///
/// It serializes as one entry of that `issues` list, so a tool whose
/// result reports problems beside its data (a partial list, a change the
/// upstream refused) can put `ToolError`s in its output and clients read
/// them as they read the envelope.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(
    description = "One problem: a code from the shared vocabulary, what went wrong, and what to do about it."
)]
pub struct ToolError {
    /// The category, from the shared vocabulary.
    pub code: ErrorCode,
    /// What went wrong, in one sentence.
    pub message: String,
    /// What the caller could do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// For `RATE_LIMIT`: milliseconds to wait before retrying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl ToolError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            hint: None,
            retry_after_ms: None,
        }
    }

    /// A `VALIDATION_ERROR`.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ValidationError, message)
    }

    /// A `NOT_FOUND` error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// An `INTERNAL` error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// A `TRANSIENT` error, worth retrying later.
    pub fn transient(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Transient, message)
    }

    /// Adds a hint telling the caller what to do.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds how long to wait before retrying.
    pub fn with_retry_after_ms(mut self, millis: u64) -> Self {
        self.retry_after_ms = Some(millis);
        self
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<ToolError> for wit::ToolError {
    fn from(e: ToolError) -> Self {
        wit::ToolError {
            code: e.code,
            message: e.message,
            hint: e.hint,
            retry_after_ms: e.retry_after_ms,
        }
    }
}

/// A tool with a synchronous handler.
///
/// The host's capabilities ([`http`](crate::http), [`confirm`](crate::confirm),
/// …) are synchronous calls from the guest's point of view, so most tools
/// are written this way.
pub trait Tool {
    /// The arguments. Its JSON Schema is the tool's `inputSchema`: document
    /// every field and give it an example.
    type Input: DeserializeOwned + JsonSchema;
    /// The result. Its JSON Schema is the tool's `outputSchema`.
    type Output: Serialize + JsonSchema;
    /// The tool's unique name: 1–128 of `A-Z a-z 0-9 _ . -`.
    const NAME: &'static str;
    /// A short human-readable title.
    const TITLE: &'static str;
    /// What the tool does and when to use it, first sentence first.
    const DESCRIPTION: &'static str;
    /// Behaviour hints.
    const ANNOTATIONS: Annotations;

    /// Runs the tool. `input` already passed the input schema in the host.
    fn call(&self, input: Self::Input) -> Result<Self::Output, ToolError>;

    /// Content blocks sent with `output` (an image, a document), after
    /// its JSON. None by default.
    fn content(&self, output: &Self::Output) -> Vec<Block> {
        let _ = output;
        Vec::new()
    }
}

/// A tool with an `async` handler. Export it with [`asynchronous`].
///
/// The future is driven to completion inside the call; it may await other
/// futures that complete without an outside event loop (the host's
/// capabilities are synchronous), but not timers or sockets of its own.
pub trait AsyncTool {
    /// The arguments; see [`Tool::Input`].
    type Input: DeserializeOwned + JsonSchema;
    /// The result; see [`Tool::Output`].
    type Output: Serialize + JsonSchema;
    /// See [`Tool::NAME`].
    const NAME: &'static str;
    /// See [`Tool::TITLE`].
    const TITLE: &'static str;
    /// See [`Tool::DESCRIPTION`].
    const DESCRIPTION: &'static str;
    /// See [`Tool::ANNOTATIONS`].
    const ANNOTATIONS: Annotations;

    /// Runs the tool.
    fn call(&self, input: Self::Input) -> impl Future<Output = Result<Self::Output, ToolError>>;

    /// See [`Tool::content`].
    fn content(&self, output: &Self::Output) -> Vec<Block> {
        let _ = output;
        Vec::new()
    }
}

/// Wraps an [`AsyncTool`] for [`export_tools!`](crate::export_tools).
pub fn asynchronous<T: AsyncTool>(tool: T) -> Async<T> {
    Async(tool)
}

/// An [`AsyncTool`] made exportable by [`asynchronous`].
#[doc(hidden)]
pub struct Async<T>(T);

/// A tool with its types erased, so one component can hold many.
#[doc(hidden)]
pub trait ErasedTool {
    fn name(&self) -> &'static str;
    fn definition(&self) -> wit::ToolDefinition;
    fn invoke(&self, arguments: &str) -> Result<ToolOutput, ToolError>;
}

fn definition<I: JsonSchema, O: JsonSchema>(
    name: &str,
    title: &str,
    description: &str,
    a: Annotations,
) -> wit::ToolDefinition {
    wit::ToolDefinition {
        name: name.to_string(),
        title: title.to_string(),
        description: description.to_string(),
        input_schema: input_schema_text::<I>(),
        output_schema: Some(output_schema_text::<O>()),
        annotations: wit::Annotations {
            read_only: a.read_only,
            destructive: a.destructive,
            idempotent: a.idempotent,
            open_world: a.open_world,
        },
    }
}

fn parse<I: DeserializeOwned>(arguments: &str) -> Result<I, ToolError> {
    serde_json::from_str(arguments)
        .map_err(|e| ToolError::validation(format!("invalid arguments: {e}")))
}

fn render<O: Serialize>(output: &O, content: Vec<Block>) -> Result<ToolOutput, ToolError> {
    let json = serde_json::to_string(output)
        .map_err(|e| ToolError::internal(format!("cannot serialize the output: {e}")))?;
    Ok(ToolOutput {
        structured: Some(json),
        content: content.into_iter().map(Block::into_wit).collect(),
    })
}

impl<T: Tool> ErasedTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn definition(&self) -> wit::ToolDefinition {
        definition::<T::Input, T::Output>(T::NAME, T::TITLE, T::DESCRIPTION, T::ANNOTATIONS)
    }

    fn invoke(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        let output = self.call(parse(arguments)?)?;
        render(&output, self.content(&output))
    }
}

impl<T: AsyncTool> ErasedTool for Async<T> {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn definition(&self) -> wit::ToolDefinition {
        definition::<T::Input, T::Output>(T::NAME, T::TITLE, T::DESCRIPTION, T::ANNOTATIONS)
    }

    fn invoke(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        let input = parse(arguments)?;
        let output = block_on(self.0.call(input))?;
        render(&output, self.0.content(&output))
    }
}

/// Drives `future` to completion on the current thread.
///
/// Host capabilities never return `Pending`, so a tool's future completes in
/// one poll unless it waits on something only an event loop could wake; that
/// is a programming error, reported as an `INTERNAL` tool error.
fn block_on<F: Future<Output = Result<O, ToolError>>, O>(future: F) -> Result<O, ToolError> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    // A few polls tolerate futures that yield once (e.g. `yield_now`).
    for _ in 0..1024 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    Err(ToolError::internal(
        "the tool's future waited on an event the component cannot receive",
    ))
}

/// Lists the definitions of `tools`.
#[doc(hidden)]
pub fn list(tools: &[Box<dyn ErasedTool>]) -> Vec<wit::ToolDefinition> {
    tools.iter().map(|t| t.definition()).collect()
}

/// Runs the tool called `name`.
#[doc(hidden)]
pub fn call(
    tools: &[Box<dyn ErasedTool>],
    name: &str,
    arguments: &str,
) -> Result<ToolOutput, wit::ToolError> {
    let tool = tools.iter().find(|t| t.name() == name).ok_or_else(|| {
        ToolError::not_found(format!("this component has no tool named {name:?}"))
    })?;
    tool.invoke(arguments).map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::output_schema_text;

    #[test]
    fn an_error_serializes_as_an_issue_of_the_envelope() {
        let limited = ToolError::new(ErrorCode::RateLimit, "slow down").with_retry_after_ms(1000);
        assert_eq!(
            serde_json::to_value(limited).unwrap(),
            json!({"code": "RATE_LIMIT", "message": "slow down", "retry_after_ms": 1000})
        );
        let hinted = ToolError::validation("bad").with_hint("fix it");
        assert_eq!(
            serde_json::to_value(hinted).unwrap(),
            json!({"code": "VALIDATION_ERROR", "message": "bad", "hint": "fix it"})
        );
    }

    #[test]
    fn its_schema_lists_every_code_and_requires_code_and_message() {
        let schema: serde_json::Value =
            serde_json::from_str(&output_schema_text::<ToolError>()).unwrap();
        assert_eq!(
            schema["properties"]["code"]["enum"],
            json!([
                "VALIDATION_ERROR",
                "PERMISSION_DENIED",
                "NOT_FOUND",
                "CONFLICT",
                "RATE_LIMIT",
                "TRANSIENT",
                "INTERNAL"
            ])
        );
        assert_eq!(schema["required"], json!(["code", "message"]));
    }
}
