//! The test harness: a sandbox plus an authenticated client, and helpers for
//! the common assertions.

use katana_sandbox::{
    NOT_FOUND_MESSAGE, Sandbox, SandboxConfig, VALIDATION_CODE,
    model::{ErrorBody, ErrorDetail, Pagination},
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

pub use sandbox_kit::testing::read;

/// A running sandbox and an authenticated client for it (the harness every
/// sandbox's tests share).
pub type Harness = sandbox_kit::testing::Harness<Sandbox>;

/// Starts a sandbox with the default configuration.
pub async fn start() -> Harness {
    start_with(SandboxConfig::default()).await
}

/// Starts a sandbox with `config`.
pub async fn start_with(config: SandboxConfig) -> Harness {
    Harness::start(config).await
}

/// Katana's paged lists, read with their `X-Pagination` header.
pub trait ListReads {
    /// An authenticated GET of a list: status, body and `X-Pagination`.
    async fn list(&self, path: &str) -> (StatusCode, Value, Pagination);
}

impl ListReads for Harness {
    async fn list(&self, path: &str) -> (StatusCode, Value, Pagination) {
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
