//! Handler errors and their StatusPro bodies.
//!
//! Handlers return [`ApiError`]; its [`IntoResponse`] picks the status and body:
//! 404 `{"message":"Order not found."}`, 400 `{"message": ...}` and 422
//! `{"message":"The given data was invalid.","errors":{field:[...]}}`.
//! Validation collects every field's messages in [`FieldErrors`] before
//! answering, as Laravel does, so a client sees all its mistakes at once.

use std::collections::BTreeMap;

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};

use crate::model::{MessageBody, ValidationErrorBody};

/// The message of every 404 for an order.
pub const ORDER_NOT_FOUND: &str = "Order not found.";

/// The top-level message of every 422.
pub const VALIDATION_MESSAGE: &str = "The given data was invalid.";

/// Validation messages per field, in Laravel's wording.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FieldErrors(BTreeMap<String, Vec<String>>);

impl FieldErrors {
    /// Adds a message for `field`.
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.entry(field.into()).or_default().push(message.into());
    }

    /// Whether `field` already has a message.
    pub fn has(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    /// `Ok(())` when empty, else the 422.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation(self))
        }
    }
}

/// How Laravel names a field inside a message: `per_page` reads "per page";
/// array elements (`order_ids.3`) keep their key.
pub(crate) fn display(field: &str) -> String {
    if field.contains('.') {
        field.to_owned()
    } else {
        field.replace('_', " ")
    }
}

/// An error a handler answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApiError {
    /// 404 `Order not found.`
    OrderNotFound,
    /// 400 with a message (malformed JSON body).
    BadRequest(String),
    /// 422 with field errors.
    Validation(FieldErrors),
}

impl ApiError {
    /// A 422 with one message for one field.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        let mut errors = FieldErrors::default();
        errors.add(field, message);
        Self::Validation(errors)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            Self::OrderNotFound => (
                StatusCode::NOT_FOUND,
                Json(MessageBody {
                    message: ORDER_NOT_FOUND.to_owned(),
                }),
            )
                .into_response(),
            Self::BadRequest(message) => {
                (StatusCode::BAD_REQUEST, Json(MessageBody { message })).into_response()
            }
            Self::Validation(FieldErrors(errors)) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                Json(ValidationErrorBody {
                    message: VALIDATION_MESSAGE.to_owned(),
                    errors,
                }),
            )
                .into_response(),
        }
    }
}
