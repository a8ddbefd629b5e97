//! One line of stdin: a message for rmcp, or an answer rmcp would not give.
//!
//! rmcp is the protocol implementation, but its stdio transport drops some
//! input without a word (the client then waits forever) and answers other
//! input wrongly. [`triage`] decides, for one line, which of these it is:
//!
//! | the line                                        | answer                                  |
//! |-------------------------------------------------|-----------------------------------------|
//! | empty or blank                                  | none                                    |
//! | not JSON, or a truncated object                 | `-32700` parse error, no id             |
//! | a JSON array (a batch; MCP has none)            | `-32600` invalid request, no id         |
//! | a JSON scalar                                   | `-32600`, no id                         |
//! | an object without a usable `id`, `method` or `jsonrpc: "2.0"` | `-32600`, no id           |
//! | a request nested deeper than the parser reads   | `-32600` with the request's id          |
//! | a request rmcp cannot decode                    | `-32600` with the request's id          |
//! | a known method whose `params` do not fit        | `-32602` invalid params with the id (rmcp would say `-32601`) |
//! | a notification or response rmcp cannot decode   | none (JSON-RPC never answers them); logged |
//! | anything else                                   | handed to rmcp                           |
//!
//! "No id": rmcp's [`JsonRpcError`](rmcp::model::JsonRpcError) leaves the
//! member out, which is how MCP writes JSON-RPC's `"id": null`. A line longer
//! than `host.max_message_bytes` never reaches here; [`too_long`] is its
//! answer.

// Logging and `resources/subscribe` are deprecated in rmcp, but rmcp still
// decodes them, so their params are still checked here.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CancelTaskMethod, CancelTaskRequest,
    CancelledNotification, CancelledNotificationMethod, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, CompleteRequest, CompleteRequestMethod, ConstString, DiscoverRequest,
    DiscoverRequestMethod, ErrorData, GetPromptRequest, GetPromptRequestMethod, GetSkillRequest,
    GetSkillRequestMethod, GetTaskMethod, GetTaskRequest, InitializeRequest,
    InitializeResultMethod, InitializedNotification, InitializedNotificationMethod, JsonRpcMessage,
    ListPromptsRequest, ListPromptsRequestMethod, ListResourceTemplatesRequest,
    ListResourceTemplatesRequestMethod, ListResourcesRequest, ListResourcesRequestMethod,
    ListSkillsRequest, ListSkillsRequestMethod, ListToolsRequest, ListToolsRequestMethod,
    PingRequest, PingRequestMethod, ProgressNotification, ProgressNotificationMethod,
    ReadResourceDirectoryRequest, ReadResourceDirectoryRequestMethod, ReadResourceRequest,
    ReadResourceRequestMethod, RequestId, RootsListChangedNotification,
    RootsListChangedNotificationMethod, ServerJsonRpcMessage, SetLevelRequest,
    SetLevelRequestMethod, SubscribeRequest, SubscribeRequestMethod, SubscriptionsListenRequest,
    SubscriptionsListenRequestMethod, UnsubscribeRequest, UnsubscribeRequestMethod,
    UpdateTaskMethod, UpdateTaskRequest,
};
use serde::Deserialize;
use serde::de::{self, IgnoredAny};
use serde_json::Value;

/// What to do with one line of stdin.
#[derive(Debug)]
pub enum Triage {
    /// Nothing: an empty or blank line.
    Skip,
    /// A message rmcp can decode and answer: hand it over.
    Deliver(Box<ClientJsonRpcMessage>),
    /// Write this answer; rmcp never sees the line.
    Answer(Box<ServerJsonRpcMessage>),
    /// Nothing can be answered (a notification or a response that is not
    /// usable); the text says why, for the log.
    Ignore(String),
}

/// The deepest nesting serde_json reads (its recursion limit stops at the
/// 128th level), quoted in answers.
pub const MAX_DEPTH: usize = 127;

/// The answer to a line longer than `limit` bytes.
pub fn too_long(limit: usize) -> ServerJsonRpcMessage {
    error(
        None,
        ErrorData::invalid_request(
            format!(
                "the message is longer than {limit} bytes (host.max_message_bytes) and was \
                 discarded; send a smaller one, or raise host.max_message_bytes"
            ),
            None,
        ),
    )
}

/// Decides what to do with `line` (without its `\n`).
pub fn triage(line: &[u8]) -> Triage {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // RFC 8259 §8.1 lets a parser ignore a byte order mark; rmcp does.
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Triage::Skip;
    }
    if let Some(message) = well_formed(line) {
        return Triage::Deliver(Box::new(message));
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(value) => triage_value(value),
        Err(parse_error) => triage_unreadable(line, &parse_error),
    }
}

/// The common case, decoded once: a line rmcp reads straight into one of
/// its typed messages, whose envelope ([`Outline`], read from the same
/// bytes without descending into any member) is well formed. `None` for
/// anything else, which then takes the path that can say what is wrong:
/// parsed into a [`Value`] first, and decoded from that. The answer is
/// the same either way; the common case is spared the `Value` (about 1% of
/// a stdio call's CPU, docs/benchmarks.md).
fn well_formed(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    let message = serde_json::from_slice::<ClientJsonRpcMessage>(line).ok()?;
    if !is_typed(&message) {
        return None;
    }
    serde_json::from_slice::<Outline>(line).ok()?.kind().ok()?;
    Some(message)
}

/// Whether rmcp recognised `message` as one of its typed messages, not
/// its custom fallback for a method it does not know.
fn is_typed(message: &ClientJsonRpcMessage) -> bool {
    match message {
        JsonRpcMessage::Request(r) => !matches!(r.request, ClientRequest::CustomRequest(_)),
        JsonRpcMessage::Notification(n) => {
            !matches!(n.notification, ClientNotification::CustomNotification(_))
        }
        _ => true,
    }
}

/// A line that is JSON.
fn triage_value(value: Value) -> Triage {
    let kind = match Outline::of(&value).kind() {
        Ok(kind) => kind,
        Err(triage) => return triage,
    };
    let decoded = ClientJsonRpcMessage::deserialize(&value);
    // rmcp did not recognise a typed message: it failed to decode it whole,
    // or fell back to its custom variant. If the method is one of its typed
    // ones, the params are what does not fit.
    let untyped = decoded.as_ref().map_or(true, |message| !is_typed(message));
    if untyped {
        match &kind {
            Kind::Request(id, method) => {
                if let Some(problem) = params_problem(REQUESTS, method, &value) {
                    let message = format!("invalid params for {method}: {problem}");
                    return error(Some(id.clone()), ErrorData::invalid_params(message, None))
                        .into();
                }
            }
            Kind::Notification(method) => {
                if let Some(problem) = params_problem(NOTIFICATIONS, method, &value) {
                    return Triage::Ignore(format!(
                        "invalid params for the notification {method}: {problem}"
                    ));
                }
            }
            Kind::Response => {}
        }
    }
    match (decoded, kind) {
        (Ok(message), _) => Triage::Deliver(Box::new(message)),
        (Err(e), Kind::Request(id, _)) => error(
            Some(id),
            ErrorData::invalid_request(format!("not a valid MCP request: {e}"), None),
        )
        .into(),
        (Err(e), Kind::Notification(_)) => {
            Triage::Ignore(format!("an unreadable notification: {e}"))
        }
        (Err(e), Kind::Response) => Triage::Ignore(format!("an unreadable response: {e}")),
    }
}

/// A line serde_json cannot turn into a value: not JSON at all, or nested
/// deeper than [`MAX_DEPTH`]. The outline reader never recurses, so it can
/// still read the `id` of a deep request.
fn triage_unreadable(line: &[u8], parse_error: &serde_json::Error) -> Triage {
    let Ok(outline) = serde_json::from_slice::<Outline>(line) else {
        return error(
            None,
            ErrorData::parse_error(
                format!("the line is not JSON ({parse_error}); send one JSON-RPC message per line"),
                None,
            ),
        )
        .into();
    };
    let kind = match outline.kind() {
        Ok(kind) => kind,
        Err(triage) => return triage,
    };
    let id = match kind {
        Kind::Request(id, _) => Some(id),
        Kind::Notification(_) | Kind::Response if is_too_deep(parse_error) => {
            return Triage::Ignore(format!(
                "a notification or response nested deeper than {MAX_DEPTH} levels"
            ));
        }
        Kind::Notification(_) | Kind::Response => None,
    };
    let answer = if is_too_deep(parse_error) {
        ErrorData::invalid_request(
            format!(
                "the message is nested deeper than {MAX_DEPTH} levels, more than toolhost reads"
            ),
            None,
        )
    } else {
        ErrorData::parse_error(
            format!("the message is not valid JSON ({parse_error})"),
            None,
        )
    };
    error(id, answer).into()
}

/// Whether serde_json stopped at its recursion limit. serde_json does not
/// expose its error codes, only their text; a unit test pins the text.
fn is_too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// An error answer.
fn error(id: Option<RequestId>, error: ErrorData) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(error, id)
}

impl From<ServerJsonRpcMessage> for Triage {
    fn from(answer: ServerJsonRpcMessage) -> Triage {
        Triage::Answer(Box::new(answer))
    }
}

/// What a well-formed envelope is.
enum Kind {
    /// A request with this id and method.
    Request(RequestId, String),
    /// A notification (this method, no id).
    Notification(String),
    /// A response or error from the client.
    Response,
}

/// A JSON value read shallowly: its type and, for an object, the envelope
/// members JSON-RPC needs. Member values are never descended into, so
/// reading an outline has no depth limit.
#[derive(Debug, Default)]
struct Outline {
    /// What the value is: `object`, `array`, or a scalar's type.
    shape: &'static str,
    /// `id`, when present: `Some(None)` when it is not a usable id.
    id: Option<Option<RequestId>>,
    /// `method`, when present: `Some(None)` when it is not a string.
    method: Option<Option<String>>,
    /// Whether `jsonrpc` is `"2.0"`.
    version_2_0: bool,
    /// Whether `result` or `error` is present.
    response: bool,
}

impl Outline {
    /// The outline of a parsed value.
    fn of(value: &Value) -> Outline {
        let shape = match value {
            Value::Object(_) => "object",
            Value::Array(_) => "array",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "boolean",
            Value::Null => "null",
        };
        let Value::Object(members) = value else {
            return Outline {
                shape,
                ..Outline::default()
            };
        };
        Outline {
            shape,
            id: members.get("id").map(request_id),
            method: members
                .get("method")
                .map(|m| m.as_str().map(str::to_string)),
            version_2_0: members.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
            response: members.contains_key("result") || members.contains_key("error"),
        }
    }

    /// The envelope's kind, or the answer to a malformed one (with the id
    /// when the id itself is usable).
    fn kind(self) -> Result<Kind, Triage> {
        let usable_id = self.id.clone().flatten();
        let invalid = |id: Option<RequestId>, message: String| -> Triage {
            error(id, ErrorData::invalid_request(message, None)).into()
        };
        match self.shape {
            "object" => {}
            "array" => {
                return Err(invalid(
                    None,
                    "a JSON array (a batch) is not an MCP message; send each message as an \
                     object on its own line"
                        .into(),
                ));
            }
            other => {
                return Err(invalid(
                    None,
                    format!("a JSON-RPC message is an object, not a {other}"),
                ));
            }
        }
        match (self.method, self.id) {
            (None, Some(Some(_))) if self.response => Ok(Kind::Response),
            (None, _) if self.response => {
                Err(Triage::Ignore("a response without a usable id".to_string()))
            }
            (None, _) => Err(invalid(
                usable_id,
                "the message has no `method` (nor `result` or `error`)".into(),
            )),
            (Some(None), _) => Err(invalid(usable_id, "`method` must be a string".into())),
            (Some(Some(_)), Some(None)) => {
                Err(invalid(None, "`id` must be a string or an integer".into()))
            }
            (Some(Some(_)), _) if !self.version_2_0 => {
                Err(invalid(usable_id, "`jsonrpc` must be \"2.0\"".into()))
            }
            (Some(Some(method)), Some(Some(id))) => Ok(Kind::Request(id, method)),
            (Some(Some(method)), None) => Ok(Kind::Notification(method)),
        }
    }
}

/// `value` as a request id, by rmcp's own rules; `None` when it is not one.
fn request_id(value: &Value) -> Option<RequestId> {
    RequestId::deserialize(value).ok()
}

impl<'de> Deserialize<'de> for Outline {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Outline, D::Error> {
        deserializer.deserialize_any(OutlineVisitor)
    }
}

/// Reads an [`Outline`]: the top level, skipping every member value but
/// the envelope's scalars.
struct OutlineVisitor;

impl<'de> de::Visitor<'de> for OutlineVisitor {
    type Value = Outline;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Outline, A::Error> {
        let mut outline = Outline {
            shape: "object",
            ..Outline::default()
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => {
                    outline.id = Some(map.next_value::<Scalar>()?.0.as_ref().and_then(request_id))
                }
                "method" => {
                    outline.method = Some(match map.next_value::<Scalar>()?.0 {
                        Some(Value::String(method)) => Some(method),
                        _ => None,
                    });
                }
                "jsonrpc" => {
                    outline.version_2_0 = map
                        .next_value::<Scalar>()?
                        .0
                        .as_ref()
                        .and_then(Value::as_str)
                        == Some("2.0");
                }
                "result" | "error" => {
                    outline.response = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(outline)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Outline, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Outline {
            shape: "array",
            ..Outline::default()
        })
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Outline, E> {
        Ok(Outline {
            shape: "boolean",
            ..Outline::default()
        })
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Outline, E> {
        Ok(Outline {
            shape: "number",
            ..Outline::default()
        })
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Outline, E> {
        self.visit_i64(0)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Outline, E> {
        self.visit_i64(0)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Outline, E> {
        Ok(Outline {
            shape: "string",
            ..Outline::default()
        })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Outline, E> {
        Ok(Outline {
            shape: "null",
            ..Outline::default()
        })
    }
}

/// A member value kept only when it is a scalar; an array or object is
/// skipped without descending into it.
struct Scalar(Option<Value>);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Scalar, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

/// Reads a [`Scalar`].
struct ScalarVisitor;

impl<'de> de::Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar(Some(Value::Bool(v))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar(Some(Value::from(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar(Some(Value::from(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar(Some(Value::from(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar(Some(Value::String(v.to_string()))))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar(Some(Value::Null)))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar(None))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar(None))
    }
}

/// A method rmcp decodes into a typed message, with a check that says why
/// a message naming it does not decode.
type Known = (&'static str, fn(&Value) -> Option<String>);

/// Why `value` is not a `T`, if it is not.
fn why_not<T: for<'de> Deserialize<'de>>(value: &Value) -> Option<String> {
    T::deserialize(value).err().map(|e| e.to_string())
}

/// The typed client requests of rmcp's `ClientRequest`. rmcp's union is
/// untagged with `CustomRequest` last, so a request naming one of these
/// methods whose `params` do not fit becomes a custom request and is
/// answered "method not found"; it is really "invalid params".
#[allow(deprecated)]
const REQUESTS: &[Known] = &[
    (PingRequestMethod::VALUE, why_not::<PingRequest>),
    (InitializeResultMethod::VALUE, why_not::<InitializeRequest>),
    (DiscoverRequestMethod::VALUE, why_not::<DiscoverRequest>),
    (CompleteRequestMethod::VALUE, why_not::<CompleteRequest>),
    (SetLevelRequestMethod::VALUE, why_not::<SetLevelRequest>),
    (GetPromptRequestMethod::VALUE, why_not::<GetPromptRequest>),
    (
        ListPromptsRequestMethod::VALUE,
        why_not::<ListPromptsRequest>,
    ),
    (
        ListResourcesRequestMethod::VALUE,
        why_not::<ListResourcesRequest>,
    ),
    (
        ListResourceTemplatesRequestMethod::VALUE,
        why_not::<ListResourceTemplatesRequest>,
    ),
    (
        ReadResourceRequestMethod::VALUE,
        why_not::<ReadResourceRequest>,
    ),
    (
        SubscriptionsListenRequestMethod::VALUE,
        why_not::<SubscriptionsListenRequest>,
    ),
    (SubscribeRequestMethod::VALUE, why_not::<SubscribeRequest>),
    (
        UnsubscribeRequestMethod::VALUE,
        why_not::<UnsubscribeRequest>,
    ),
    (CallToolRequestMethod::VALUE, why_not::<CallToolRequest>),
    (ListToolsRequestMethod::VALUE, why_not::<ListToolsRequest>),
    (GetTaskMethod::VALUE, why_not::<GetTaskRequest>),
    (UpdateTaskMethod::VALUE, why_not::<UpdateTaskRequest>),
    (CancelTaskMethod::VALUE, why_not::<CancelTaskRequest>),
    (ListSkillsRequestMethod::VALUE, why_not::<ListSkillsRequest>),
    (GetSkillRequestMethod::VALUE, why_not::<GetSkillRequest>),
    (
        ReadResourceDirectoryRequestMethod::VALUE,
        why_not::<ReadResourceDirectoryRequest>,
    ),
];

/// The typed client notifications of rmcp's `ClientNotification`, for the
/// same reason as [`REQUESTS`].
const NOTIFICATIONS: &[Known] = &[
    (
        CancelledNotificationMethod::VALUE,
        why_not::<CancelledNotification>,
    ),
    (
        ProgressNotificationMethod::VALUE,
        why_not::<ProgressNotification>,
    ),
    (
        InitializedNotificationMethod::VALUE,
        why_not::<InitializedNotification>,
    ),
    (
        RootsListChangedNotificationMethod::VALUE,
        why_not::<RootsListChangedNotification>,
    ),
];

/// Why `message`, naming the known `method`, does not decode as that
/// method's typed message; `None` for an unknown method (rmcp answers it
/// "method not found", rightly).
fn params_problem(known: &[Known], method: &str, message: &Value) -> Option<String> {
    let (_, why) = known.iter().find(|(name, _)| *name == method)?;
    why(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer's JSON, or panics when there is none.
    fn answer(line: &str) -> Value {
        match triage(line.as_bytes()) {
            Triage::Answer(message) => serde_json::to_value(message).unwrap(),
            other => panic!("{line:?} got no answer: {other:?}"),
        }
    }

    fn code(answer: &Value) -> i64 {
        answer["error"]["code"].as_i64().unwrap()
    }

    #[test]
    fn a_line_decoded_once_gets_the_answer_the_two_step_decode_gives() {
        // The two-step path alone: a `Value` first, then decoded from it.
        let two_step = |line: &str| match serde_json::from_slice::<Value>(line.as_bytes()) {
            Ok(value) => triage_value(value),
            Err(e) => triage_unreadable(line.as_bytes(), &e),
        };
        let lines = [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","n":[1,{"x":null}]},"_meta":{"progressToken":3}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"no"}}"#,
            // Well-formed JSON, malformed or unusual envelopes.
            r#"{"jsonrpc":"2.0","id":1,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","arguments":{"k":1,"k":2}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#""ping""#,
        ];
        for line in lines {
            assert_eq!(
                format!("{:?}", triage(line.as_bytes())),
                format!("{:?}", two_step(line)),
                "{line}"
            );
        }
        assert!(
            well_formed(lines[2].as_bytes()).is_some(),
            "a well-formed call is decoded once"
        );
    }

    #[test]
    fn blank_lines_are_skipped() {
        for line in ["", " ", "\r", "  \t \r"] {
            assert!(matches!(triage(line.as_bytes()), Triage::Skip), "{line:?}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error_without_an_id() {
        for line in [
            "hello",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}",
            "\u{fffd}",
        ] {
            let a = answer(line);
            assert_eq!(code(&a), -32700, "{line:?}: {a}");
            assert!(a.get("id").is_none_or(Value::is_null), "{a}");
            assert_eq!(a["jsonrpc"], "2.0");
        }
        let a = answer("\u{ff}\u{fe}");
        assert_eq!(code(&a), -32700);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_a_parse_error() {
        match triage(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}") {
            Triage::Answer(message) => {
                let a = serde_json::to_value(message).unwrap();
                assert_eq!(code(&a), -32700, "{a}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_deep_request_is_refused_with_its_id() {
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{{"name":"x","arguments":{{"a":{deep}}}}}}}"#
        );
        let a = answer(&line);
        assert_eq!(code(&a), -32600, "{a}");
        assert_eq!(a["id"], "deep");
        assert!(
            a["error"]["message"]
                .as_str()
                .unwrap()
                .contains("nested deeper than 127"),
            "{a}"
        );
        // The same as a notification cannot be answered.
        let notification = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{deep}}}"#);
        assert!(matches!(triage(notification.as_bytes()), Triage::Ignore(_)));
    }

    #[test]
    fn serde_json_names_its_recursion_limit_as_expected() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let e = serde_json::from_str::<Value>(&deep).unwrap_err();
        assert!(is_too_deep(&e), "{e}");
        let shallow = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(serde_json::from_str::<Value>(&shallow).is_ok());
    }

    #[test]
    fn known_methods_with_bad_params_are_invalid_params_with_the_id() {
        let a = answer(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":[1,2]}}"#,
        );
        assert_eq!(code(&a), -32602, "{a}");
        assert_eq!(a["id"], 7);
        assert!(
            a["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("invalid params for tools/call"),
            "{a}"
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":[]}"#);
        assert_eq!(code(&a), -32602, "{a}");
        assert_eq!(a["id"], "s");
    }

    #[test]
    fn batches_scalars_and_broken_envelopes_are_invalid_requests() {
        for line in [
            "[]",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            "42",
            "\"ping\"",
            "null",
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","method":5}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        ] {
            let a = answer(line);
            assert_eq!(code(&a), -32600, "{line}: {a}");
            assert!(a.get("id").is_none_or(Value::is_null), "{line}: {a}");
        }
        // Where the id is usable, the answer carries it.
        for line in [
            r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
            r#"{"id":3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":3}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":5}"#,
        ] {
            let a = answer(line);
            assert_eq!(code(&a), -32600, "{line}: {a}");
            assert_eq!(a["id"], 3, "{line}: {a}");
        }
    }

    #[test]
    fn valid_messages_go_to_rmcp() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
        ] {
            assert!(
                matches!(triage(line.as_bytes()), Triage::Deliver(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn unusable_notifications_and_responses_are_not_answered() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":42}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":[1],"error":{"code":1,"message":"x"}}"#,
        ] {
            assert!(
                matches!(triage(line.as_bytes()), Triage::Ignore(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn the_too_long_answer_names_the_key() {
        let a = serde_json::to_value(too_long(4096)).unwrap();
        assert_eq!(code(&a), -32600);
        assert!(a.get("id").is_none_or(Value::is_null));
        let message = a["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("4096 bytes (host.max_message_bytes)"),
            "{message}"
        );
    }
}
