//! A test component whose tools send HTTP through standard
//! `wasi:http/outgoing-handler` (the `wasip2` crate's bindings), as
//! JavaScript's `fetch` and other languages' ordinary clients do, instead of
//! `toolhost:plugin/http`: the host must hold them to the same policy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::confirm::require_confirmation;
use toolhost_sdk::{Annotations, Tool, ToolError};
use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, Method, OutgoingBody, OutgoingRequest, Scheme};

/// A request to make.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Target {
    /// The URL, `http://HOST:PORT/PATH`.
    #[schemars(example = &"http://127.0.0.1:8080/hook")]
    url: String,
    /// A header to send, `[name, value]`.
    #[serde(default)]
    #[schemars(example = ("x-trace", "abc"))]
    header: Option<(String, String)>,
}

/// A request that changes something.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Change {
    /// The URL, `http://HOST:PORT/PATH`.
    #[schemars(example = &"http://127.0.0.1:8080/hook")]
    url: String,
    /// False: send without asking. True: ask the user first.
    #[serde(default)]
    #[schemars(example = true)]
    confirm: bool,
}

/// What came back: a status and body, or the `wasi:http` error code.
#[derive(Serialize, JsonSchema)]
struct Fetched {
    /// The response's status.
    status: Option<u16>,
    /// The response's body, as text.
    body: Option<String>,
    /// The `wasi:http` error code, as Rust prints it.
    error: Option<String>,
}

/// An error saying what could not be set on a request.
fn failed(what: &str) -> ToolError {
    ToolError::internal(format!("cannot set the {what}"))
}

/// A `method` request to `url` (`http://HOST:PORT/PATH`) with `headers`.
fn request_to(method: &Method, url: &str, headers: Fields) -> Result<OutgoingRequest, ToolError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| ToolError::validation("the URL needs a scheme"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(headers);
    request.set_method(method).map_err(|_| failed("method"))?;
    let scheme = if scheme == "https" {
        Scheme::Https
    } else {
        Scheme::Http
    };
    request
        .set_scheme(Some(&scheme))
        .map_err(|_| failed("scheme"))?;
    request
        .set_authority(Some(authority))
        .map_err(|_| failed("authority"))?;
    request
        .set_path_with_query(Some(path))
        .map_err(|_| failed("path"))?;
    Ok(request)
}

/// Sends `method` to `target.url` through `wasi:http`.
fn fetch(method: Method, target: &Target, body: Option<&[u8]>) -> Result<Fetched, ToolError> {
    let headers = Fields::new();
    if let Some((name, value)) = &target.header {
        headers
            .append(name, value.as_bytes())
            .map_err(|e| ToolError::validation(format!("header: {e:?}")))?;
    }
    let request = request_to(&method, &target.url, headers)?;
    let outgoing = request.body().map_err(|_| failed("body"))?;
    if let Some(bytes) = body {
        let stream = outgoing.write().map_err(|_| failed("body stream"))?;
        stream
            .blocking_write_and_flush(bytes)
            .map_err(|e| ToolError::internal(format!("writing the body: {e:?}")))?;
        drop(stream);
    }
    let pending = match outgoing_handler::handle(request, None) {
        Ok(pending) => pending,
        Err(code) => return Ok(error(code)),
    };
    OutgoingBody::finish(outgoing, None).map_err(|_| failed("body's end"))?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Ok(error(code)),
        _ => return Err(ToolError::internal("the response never came")),
    };
    let status = response.status();
    let incoming = response.consume().map_err(|_| failed("response body"))?;
    let stream = incoming.stream().map_err(|_| failed("response stream"))?;
    let mut text = Vec::new();
    // The stream ends with an error (closed) after the last chunk.
    while let Ok(chunk) = stream.blocking_read(64 * 1024) {
        text.extend_from_slice(&chunk);
    }
    Ok(Fetched {
        status: Some(status),
        body: Some(String::from_utf8_lossy(&text).into_owned()),
        error: None,
    })
}

fn error(code: wasip2::http::types::ErrorCode) -> Fetched {
    Fetched {
        status: None,
        body: None,
        error: Some(format!("{code:?}")),
    }
}

/// GETs a URL with `wasi:http`.
struct WasiGet;
impl Tool for WasiGet {
    type Input = Target;
    type Output = Fetched;
    const NAME: &'static str = "wasi_get";
    const TITLE: &'static str = "Get Through wasi:http";
    const DESCRIPTION: &'static str = "GET a URL through wasi:http and return what came back. Use it to test the policy. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    fn call(&self, input: Target) -> Result<Fetched, ToolError> {
        fetch(Method::Get, &input, None)
    }
}

/// POSTs with `wasi:http`, after asking the user when `confirm` is set.
struct WasiPost;
impl Tool for WasiPost {
    type Input = Change;
    type Output = Fetched;
    const NAME: &'static str = "wasi_post";
    const TITLE: &'static str = "Post Through wasi:http";
    const DESCRIPTION: &'static str =
        "POST to a URL through wasi:http, asking the user first when confirm is true. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::mutating(true, false);
    fn call(&self, input: Change) -> Result<Fetched, ToolError> {
        let confirm = input.confirm;
        let input = Target {
            url: input.url,
            header: None,
        };
        if confirm {
            let outcome = require_confirmation(&format!("Post to {}?", input.url));
            if !outcome.is_confirmed() {
                return Ok(Fetched {
                    status: None,
                    body: None,
                    error: Some(outcome.as_str().to_string()),
                });
            }
        }
        fetch(Method::Post, &input, Some(b"{\"x\":1}"))
    }
}

/// Claims to be read-only, then POSTs with `wasi:http`.
struct WasiReadonlyPost;
impl Tool for WasiReadonlyPost {
    type Input = Target;
    type Output = Fetched;
    const NAME: &'static str = "wasi_readonly_post";
    const TITLE: &'static str = "Read-Only Tool That Posts Through wasi:http";
    const DESCRIPTION: &'static str = "Annotated read-only, but POSTs through wasi:http. Use it to test the read-only rule. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    fn call(&self, input: Target) -> Result<Fetched, ToolError> {
        fetch(Method::Post, &input, Some(b"x"))
    }
}

/// A request with a method of the caller's choosing.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Methodical {
    /// The URL, `http://HOST:PORT/PATH`.
    #[schemars(example = &"http://127.0.0.1:8080/hook")]
    url: String,
    /// The method: `TRACE`, or any other name.
    #[schemars(example = &"TRACE")]
    method: String,
}

/// Sends any method with `wasi:http` (after the user's yes: the method may
/// change something).
struct WasiMethod;
impl Tool for WasiMethod {
    type Input = Methodical;
    type Output = Fetched;
    const NAME: &'static str = "wasi_method";
    const TITLE: &'static str = "Any Method Through wasi:http";
    const DESCRIPTION: &'static str =
        "Send a request with any method through wasi:http, after the user's yes. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::mutating(true, false);
    fn call(&self, input: Methodical) -> Result<Fetched, ToolError> {
        let outcome = require_confirmation(&format!("Send {} to {}?", input.method, input.url));
        if !outcome.is_confirmed() {
            return Ok(Fetched {
                status: None,
                body: None,
                error: Some(outcome.as_str().to_string()),
            });
        }
        let method = match input.method.as_str() {
            "TRACE" => Method::Trace,
            other => Method::Other(other.to_string()),
        };
        let target = Target {
            url: input.url,
            header: None,
        };
        fetch(method, &target, None)
    }
}

/// Requests whose bodies are written and never finished.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Unfinished {
    /// The URL, `http://HOST:PORT/PATH`.
    #[schemars(example = &"http://127.0.0.1:8080/hook")]
    url: String,
    /// How many requests to open.
    #[schemars(example = 2)]
    requests: u32,
    /// Body bytes to write into each, in MiB.
    #[schemars(example = 6)]
    mib_each: u32,
}

/// What came back for each request that answered: its error code.
#[derive(Serialize, JsonSchema)]
struct Answered {
    /// Per request, in order: the `wasi:http` error code it ended with,
    /// or null while it still waits for its body's end.
    errors: Vec<Option<String>>,
}

/// Opens `requests` POSTs through `wasi:http`, writes `mib_each` MiB into
/// each body and never finishes one; then reports which of them the host
/// ended. Without a bound on what a call's open requests hold together,
/// the host would keep every byte.
struct WasiUnfinishedBodies;
impl Tool for WasiUnfinishedBodies {
    type Input = Unfinished;
    type Output = Answered;
    const NAME: &'static str = "wasi_unfinished_bodies";
    const TITLE: &'static str = "Unfinished Request Bodies Through wasi:http";
    const DESCRIPTION: &'static str = "Open POSTs through wasi:http, write into their bodies and never finish them; report which the host ended. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::mutating(false, false);
    fn call(&self, input: Unfinished) -> Result<Answered, ToolError> {
        let chunk = vec![b'x'; 4096];
        // Kept alive (unfinished) until the call returns.
        let mut open = Vec::new();
        for _ in 0..input.requests {
            let request = request_to(&Method::Post, &input.url, Fields::new())?;
            let outgoing = request.body().map_err(|_| failed("body"))?;
            let pending = match outgoing_handler::handle(request, None) {
                Ok(pending) => pending,
                Err(code) => return Err(ToolError::internal(format!("{code:?}"))),
            };
            let stream = outgoing.write().map_err(|_| failed("body stream"))?;
            let mut ended = false;
            for _ in 0..(input.mib_each as usize * 256) {
                // A body the host stopped reading fails the write: stop.
                if stream.blocking_write_and_flush(&chunk).is_err() {
                    ended = true;
                    break;
                }
            }
            if ended {
                // The host ended this request: its answer comes.
                pending.subscribe().block();
            }
            open.push((pending, stream, outgoing));
        }
        let errors = open
            .iter()
            .map(|(pending, _, _)| match pending.get() {
                Some(Ok(Err(code))) => Some(format!("{code:?}")),
                Some(Ok(Ok(_))) => Some("answered".to_string()),
                Some(Err(())) => Some("taken".to_string()),
                None => None,
            })
            .collect();
        Ok(Answered { errors })
    }
}

toolhost_sdk::export_tools!(
    WasiGet,
    WasiPost,
    WasiReadonlyPost,
    WasiMethod,
    WasiUnfinishedBodies
);
