//! The test harness: a sandbox plus an authenticated client, and helpers for
//! the common assertions.

use katana_sandbox::{
    NOT_FOUND_MESSAGE, Sandbox, SandboxConfig, VALIDATION_CODE,
    model::{ErrorBody, ErrorDetail, Pagination},
};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

/// A running sandbox and a client for it.
pub struct Harness {
    /// The sandbox under test.
    pub sandbox: Sandbox,
    /// A plain client; [`Harness::request`] adds the bearer key.
    pub client: reqwest::Client,
}

/// Starts a sandbox with the default configuration.
pub async fn start() -> Harness {
    start_with(SandboxConfig::default()).await
}

/// Starts a sandbox with `config`.
pub async fn start_with(config: SandboxConfig) -> Harness {
    let sandbox = katana_sandbox::start(config)
        .await
        .expect("the sandbox starts");
    Harness {
        sandbox,
        client: reqwest::Client::new(),
    }
}

impl Harness {
    /// `base_url + path`, where `path` starts with `/` (e.g. `/variants?page=2`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sandbox.base_url())
    }

    /// An authenticated request builder.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(self.sandbox.api_key())
    }

    /// Sends a request and returns its status and JSON body (`null` if none).
    pub async fn send(&self, request: RequestBuilder) -> (StatusCode, Value) {
        let response = request.send().await.expect("the request is answered");
        read(response).await
    }

    /// Authenticated GET.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::GET, path)).await
    }

    /// Authenticated POST with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::POST, path).json(&body))
            .await
    }

    /// Authenticated PATCH with a JSON body.
    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::PATCH, path).json(&body))
            .await
    }

    /// An authenticated GET of a list: status, body and `X-Pagination`.
    pub async fn list(&self, path: &str) -> (StatusCode, Value, Pagination) {
        let response = self
            .request(Method::GET, path)
            .send()
            .await
            .expect("the request is answered");
        let header = response
            .headers()
            .get(katana_sandbox::PAGINATION_HEADER)
            .expect("an X-Pagination header")
            .to_str()
            .expect("X-Pagination is text")
            .to_owned();
        let pagination: Pagination =
            serde_json::from_str(&header).expect("X-Pagination is JSON with string values");
        let (status, body) = read(response).await;
        (status, body, pagination)
    }
}

/// A response's status and JSON body (`null` when empty).
pub async fn read(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.expect("the body is readable");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("body is not JSON ({err}): {text}"))
    };
    (status, body)
}

/// Asserts a 422 in Katana's shape and returns its details.
#[track_caller]
pub fn details(status: StatusCode, body: &Value) -> Vec<ErrorDetail> {
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let parsed: ErrorBody = serde_json::from_value(body.clone()).expect("an error body");
    assert_eq!(parsed.status_code, 422);
    assert_eq!(parsed.name, "UnprocessableEntityError");
    assert_eq!(parsed.code.as_deref(), Some(VALIDATION_CODE));
    let details = parsed.details.expect("a 422 has details");
    assert!(!details.is_empty(), "{body}");
    details
}

/// Asserts a 422 with a detail at `path` with `code`, and returns it.
#[track_caller]
pub fn assert_invalid(status: StatusCode, body: &Value, path: &str, code: &str) -> ErrorDetail {
    details(status, body)
        .into_iter()
        .find(|detail| detail.path == path && detail.code == code)
        .unwrap_or_else(|| panic!("no detail {path} {code}: {body}"))
}

/// Asserts the 404 every unknown record or route gets.
#[track_caller]
pub fn assert_not_found(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        body,
        &json!({"statusCode": 404, "name": "NotFoundError", "message": NOT_FOUND_MESSAGE})
    );
}
