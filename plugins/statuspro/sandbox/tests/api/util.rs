//! The test harness: a sandbox plus an authenticated client, and helpers for
//! the common assertions.

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::Value;
use statuspro_sandbox::{
    Sandbox, SandboxConfig, VALIDATION_MESSAGE,
    model::{Order, ValidationErrorBody},
};

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
    let sandbox = statuspro_sandbox::start(config)
        .await
        .expect("the sandbox starts");
    Harness {
        sandbox,
        client: reqwest::Client::new(),
    }
}

impl Harness {
    /// `base_url + path`, where `path` starts with `/` (e.g. `/orders?page=2`).
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
        let status = response.status();
        let text = response.text().await.expect("the body is readable");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text)
                .unwrap_or_else(|err| panic!("body is not JSON ({err}): {text}"))
        };
        (status, body)
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

    /// `GET /orders/{id}`, which must succeed.
    pub async fn order(&self, id: i64) -> Order {
        let (status, body) = self.get(&format!("/orders/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        serde_json::from_value(body).expect("an Order")
    }
}

/// Asserts a 422 in the contract's shape and returns its errors for `field`.
#[track_caller]
pub fn validation_errors(status: StatusCode, body: &Value, field: &str) -> Vec<String> {
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let parsed: ValidationErrorBody =
        serde_json::from_value(body.clone()).expect("a validation body");
    assert_eq!(parsed.message, VALIDATION_MESSAGE);
    parsed
        .errors
        .get(field)
        .cloned()
        .unwrap_or_else(|| panic!("no errors for {field}: {body}"))
}

/// Asserts a 422 with `message` among the errors for `field`.
#[track_caller]
pub fn assert_invalid(status: StatusCode, body: &Value, field: &str, message: &str) {
    let errors = validation_errors(status, body, field);
    assert!(
        errors.iter().any(|error| error == message),
        "expected {message:?} for {field}, got {errors:?}"
    );
}

/// Asserts the 404 every unknown order gets.
#[track_caller]
pub fn assert_order_not_found(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body, &serde_json::json!({"message": "Order not found."}));
}
