//! Katana's error bodies, for the kit's errors and the handlers' own.
//!
//! Every error is `{"statusCode", "name", "message"}` ([`KatanaStyle`]); a 422
//! adds `"code": "VALIDATION_FAILED"` and `details`, one entry per problem with
//! a `path` into the request (`.purchase_order_rows[0].quantity`).
//!
//! | status | name | message |
//! |---|---|---|
//! | 400 | `BadRequest` | `Bad Request` (malformed JSON) |
//! | 401 | `UnauthorizedError` | `Unauthorized` |
//! | 404 | `NotFoundError` | `Not found` |
//! | 422 | `UnprocessableEntityError` | [`VALIDATION_MESSAGE`] for schema problems; the first problem's own sentence for a conflict with the data |
//! | 429 | `TooManyRequests` | `Too Many Requests` |
//! | 500 | `InternalServerError` | `Internal Server Error` |
//!
//! Handlers collect problems in a `Details` list and carry on, so one 422
//! names every problem of a request; then `Details::finish` (shape problems)
//! or `Details::finish_conflict` (conflicts with the data) turns them into an
//! `ApiError`.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use sandbox_kit::{ErrorStyle, NamedStyle};
use serde_json::{Value, json};

use crate::model::{ErrorBody, ErrorDetail};

/// The `message` of a 422 for a body that breaks the request schema.
pub const VALIDATION_MESSAGE: &str =
    "The request body is invalid. See error object `details` property for more info.";

/// The `code` of every 422.
pub const VALIDATION_CODE: &str = "VALIDATION_FAILED";

/// The `message` of every 404.
pub const NOT_FOUND_MESSAGE: &str = "Not found";

/// Katana's error body and names (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct KatanaStyle;

impl KatanaStyle {
    /// The `name` for `status`: Katana's own spelling for 400 and 429, else
    /// the reason phrase in upper camel case with `Error` (see
    /// [`NamedStyle::name`]).
    pub fn name(status: StatusCode) -> String {
        match status {
            StatusCode::BAD_REQUEST => "BadRequest".to_owned(),
            StatusCode::TOO_MANY_REQUESTS => "TooManyRequests".to_owned(),
            other => NamedStyle::name(other),
        }
    }
}

impl ErrorStyle for KatanaStyle {
    fn body(&self, status: StatusCode, message: &str) -> Value {
        json!({
            "statusCode": status.as_u16(),
            "name": Self::name(status),
            "message": message,
        })
    }

    fn message(&self, status: StatusCode) -> String {
        match status {
            StatusCode::NOT_FOUND => NOT_FOUND_MESSAGE.to_owned(),
            other => other.canonical_reason().unwrap_or("Error").to_owned(),
        }
    }
}

/// An error a handler answers with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ApiError {
    /// 404 `Not found`: an unknown id in the path, or an unknown route.
    NotFound,
    /// 400 `Bad Request`: a body that is not JSON.
    BadRequest,
    /// 422 with a message and at least one detail.
    Validation {
        /// The top-level message.
        message: String,
        /// Every problem found.
        details: Vec<ErrorDetail>,
    },
}

impl ApiError {
    /// A 422 for one conflict with the data, led by its own message.
    pub fn conflict(path: &str, code: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Validation {
            message: message.clone(),
            details: vec![ErrorDetail {
                path: path.to_owned(),
                code: code.to_owned(),
                message,
                info: None,
            }],
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            Self::NotFound => KatanaStyle.default_response(StatusCode::NOT_FOUND),
            Self::BadRequest => KatanaStyle.default_response(StatusCode::BAD_REQUEST),
            Self::Validation { message, details } => {
                let status = StatusCode::UNPROCESSABLE_ENTITY;
                let body = ErrorBody {
                    status_code: status.as_u16(),
                    name: KatanaStyle::name(status),
                    message,
                    code: Some(VALIDATION_CODE.to_owned()),
                    details: Some(details),
                };
                (status, Json(body)).into_response()
            }
        }
    }
}

/// The problems found in one request, in the order they were found.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Details(Vec<ErrorDetail>);

impl Details {
    /// Records a problem at `path`.
    pub fn add(&mut self, path: &str, code: &str, message: impl Into<String>) {
        self.push(path, code, message, None);
    }

    /// Records a problem with extra facts in `info`.
    pub fn add_info(&mut self, path: &str, code: &str, message: impl Into<String>, info: Value) {
        self.push(path, code, message, Some(info));
    }

    fn push(&mut self, path: &str, code: &str, message: impl Into<String>, info: Option<Value>) {
        self.0.push(ErrorDetail {
            path: path.to_owned(),
            code: code.to_owned(),
            message: message.into(),
            info,
        });
    }

    /// Whether any problem was recorded.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The 422 for these problems; for a caller that knows there is at least
    /// one (a 400 if there were none, which would be a sandbox bug).
    pub fn reject(self) -> ApiError {
        self.finish().err().unwrap_or_else(|| {
            tracing::error!("a request was rejected without a recorded problem");
            ApiError::BadRequest
        })
    }

    /// `Ok(())` when empty, else a 422 with [`VALIDATION_MESSAGE`]: for
    /// problems with the request's shape.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation {
                message: VALIDATION_MESSAGE.to_owned(),
                details: self.0,
            })
        }
    }

    /// `Ok(())` when empty, else a 422 whose message is the first problem's:
    /// for requests that are well formed but conflict with the data (an
    /// unknown supplier, a row already received).
    pub fn finish_conflict(self) -> Result<(), ApiError> {
        match self.0.first() {
            None => Ok(()),
            Some(first) => Err(ApiError::Validation {
                message: first.message.clone(),
                details: self.0,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_katana() {
        assert_eq!(
            KatanaStyle::name(StatusCode::UNAUTHORIZED),
            "UnauthorizedError"
        );
        assert_eq!(KatanaStyle::name(StatusCode::NOT_FOUND), "NotFoundError");
        assert_eq!(KatanaStyle::name(StatusCode::BAD_REQUEST), "BadRequest");
        assert_eq!(
            KatanaStyle::name(StatusCode::TOO_MANY_REQUESTS),
            "TooManyRequests"
        );
        assert_eq!(
            KatanaStyle::name(StatusCode::UNPROCESSABLE_ENTITY),
            "UnprocessableEntityError"
        );
        assert_eq!(
            KatanaStyle.body(
                StatusCode::NOT_FOUND,
                &KatanaStyle.message(StatusCode::NOT_FOUND)
            ),
            json!({"statusCode": 404, "name": "NotFoundError", "message": "Not found"})
        );
    }

    #[test]
    fn conflicts_lead_with_their_first_message() {
        let mut details = Details::default();
        details.add(".supplier_id", "notFound", "Supplier 1 not found.");
        details.add(".location_id", "notFound", "Location 9 not found.");
        let Err(ApiError::Validation { message, details }) = details.finish_conflict() else {
            panic!("a 422");
        };
        assert_eq!(message, "Supplier 1 not found.");
        assert_eq!(details.len(), 2);
        assert!(Details::default().finish().is_ok());
    }
}
