//! The HTTP surface: routes under `/api/v1`, their handlers, and fallbacks.
//!
//! | route | handler |
//! |---|---|
//! | `GET /orders` | [`orders::list_orders`] |
//! | `GET /orders/lookup` | [`orders::lookup_order`] |
//! | `POST /orders/bulk-status` | [`mutations::bulk_update_status`] |
//! | `GET /orders/{order}` | [`orders::get_order`] |
//! | `GET /orders/{order}/viable-statuses` | [`orders::viable_statuses`] |
//! | `POST /orders/{order}/status` | [`mutations::update_status`] |
//! | `POST /orders/{order}/comment` | [`mutations::add_comment`] |
//! | `POST /orders/{order}/due-date` | [`mutations::set_due_date`] |
//! | `GET /statuses` | [`orders::list_statuses`] |
//!
//! `lookup` and `bulk-status` are static segments, which the router always
//! prefers to `{order}`. An unknown path gets 404 `{"message":"The route ...
//! could not be found."}` and a wrong method 405, both after the gate (so after
//! auth). The gate ([`sandbox_kit::Gate`]) wraps the whole router.

pub(crate) mod mutations;
pub(crate) mod orders;

use std::sync::Arc;

use axum::{
    Json, Router,
    http::{Method, StatusCode, Uri},
    response::{IntoResponse, Response},
    routing::{get, post},
};

use crate::{bulk::BulkQueue, error::ApiError, model::MessageBody, store::Store};

/// The path prefix of every API route.
pub const API_PREFIX: &str = "/api/v1";

/// What every handler shares.
#[derive(Debug, Clone)]
pub(crate) struct AppState {
    /// The orders.
    pub store: Arc<Store>,
    /// Where bulk jobs go.
    pub bulk: BulkQueue,
}

/// The API routes, nested under [`API_PREFIX`], with fallbacks.
pub(crate) fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/orders", get(orders::list_orders))
        .route("/orders/lookup", get(orders::lookup_order))
        .route("/orders/bulk-status", post(mutations::bulk_update_status))
        .route("/orders/{order}", get(orders::get_order))
        .route(
            "/orders/{order}/viable-statuses",
            get(orders::viable_statuses),
        )
        .route("/orders/{order}/status", post(mutations::update_status))
        .route("/orders/{order}/comment", post(mutations::add_comment))
        .route("/orders/{order}/due-date", post(mutations::set_due_date))
        .route("/statuses", get(orders::list_statuses))
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    Router::new()
        .nest(API_PREFIX, api)
        .fallback(route_not_found)
}

/// Parses a path `{order}` id; anything but a plain integer is a 404, as a
/// failed route-model binding is upstream.
pub(crate) fn parse_order_id(raw: &str) -> Result<i64, ApiError> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::OrderNotFound);
    }
    raw.parse().map_err(|_| ApiError::OrderNotFound)
}

/// 404 for a path no route matches.
async fn route_not_found(uri: Uri) -> Response {
    let message = format!(
        "The route {} could not be found.",
        uri.path().trim_start_matches('/')
    );
    (StatusCode::NOT_FOUND, Json(MessageBody { message })).into_response()
}

/// 405 for a known path with the wrong method.
async fn method_not_allowed(method: Method) -> Response {
    let message = format!("The {method} method is not supported for this route.");
    (
        StatusCode::METHOD_NOT_ALLOWED,
        Json(MessageBody { message }),
    )
        .into_response()
}
