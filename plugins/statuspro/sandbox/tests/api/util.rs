//! The test harness: a sandbox plus an authenticated client, and helpers for
//! the common assertions.

use reqwest::StatusCode;
use serde_json::Value;
use statuspro_sandbox::{
    Sandbox, SandboxConfig, VALIDATION_MESSAGE,
    model::{Order, ValidationErrorBody},
};

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

/// Reads through the API that StatusPro's tests take for granted.
pub trait OrderReads {
    /// `GET /orders/{id}`, which must succeed.
    async fn order(&self, id: i64) -> Order;
}

impl OrderReads for Harness {
    async fn order(&self, id: i64) -> Order {
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
