//! The HTTP surface: routes under `/v1`, their handlers, and fallbacks.
//!
//! | # | route | handler |
//! |---|---|---|
//! | E1 | `GET /variants` | [`catalog::list_variants`] |
//! | | `GET /suppliers` | [`catalog::list_suppliers`] |
//! | | `GET /locations` | [`catalog::list_locations`] |
//! | | `GET /purchase_orders` | [`catalog::list_purchase_orders`] |
//! | | `GET /manufacturing_orders` | [`catalog::list_manufacturing_orders`] |
//! | | `GET /sales_orders` | [`catalog::list_sales_orders`] |
//! | E2 | `POST /purchase_orders` | [`purchasing::create_purchase_order`] |
//! | E3 | `GET /purchase_orders/{id}` | [`purchasing::get_purchase_order`] |
//! | E4 | `POST /purchase_order_receive` | [`purchasing::receive`] |
//! | E5 | `POST /manufacturing_orders` | [`manufacturing::create_manufacturing_order`] |
//! | E6 | `GET /manufacturing_orders/{id}` | [`manufacturing::get_manufacturing_order`] |
//! | E7 | `PATCH /manufacturing_orders/{id}` | [`manufacturing::update_manufacturing_order`] |
//! | E8 | `GET /sales_orders/{id}` | [`sales::get_sales_order`] |
//! | E9 | `POST /sales_order_fulfillments` | [`sales::create_fulfillment`] |
//!
//! An unknown path, a wrong method and an id that is not a known integer all
//! get the 404 `{"statusCode":404,"name":"NotFoundError","message":"Not
//! found"}`, after the gate (so after auth). A path id is resolved before the
//! body is read: an unknown order is a 404 whatever the body says. The gate
//! ([`sandbox_kit::Gate`]) wraps the whole router.

pub(crate) mod catalog;
pub(crate) mod manufacturing;
pub(crate) mod purchasing;
pub(crate) mod sales;

use std::sync::Arc;

use axum::{
    Router,
    response::{IntoResponse, Response},
    routing::{get, post},
};

use crate::{error::ApiError, store::Store};

/// The path prefix of every API route.
pub const API_PREFIX: &str = "/v1";

/// What every handler shares.
#[derive(Debug, Clone)]
pub(crate) struct AppState {
    /// All records and stock.
    pub store: Arc<Store>,
}

/// The API routes, nested under [`API_PREFIX`], with fallbacks.
pub(crate) fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/variants", get(catalog::list_variants))
        .route("/suppliers", get(catalog::list_suppliers))
        .route("/locations", get(catalog::list_locations))
        .route(
            "/purchase_orders",
            get(catalog::list_purchase_orders).post(purchasing::create_purchase_order),
        )
        .route("/purchase_orders/{id}", get(purchasing::get_purchase_order))
        .route("/purchase_order_receive", post(purchasing::receive))
        .route(
            "/manufacturing_orders",
            get(catalog::list_manufacturing_orders).post(manufacturing::create_manufacturing_order),
        )
        .route(
            "/manufacturing_orders/{id}",
            get(manufacturing::get_manufacturing_order)
                .patch(manufacturing::update_manufacturing_order),
        )
        .route("/sales_orders", get(catalog::list_sales_orders))
        .route("/sales_orders/{id}", get(sales::get_sales_order))
        .route("/sales_order_fulfillments", post(sales::create_fulfillment))
        .method_not_allowed_fallback(not_found)
        .with_state(state);
    Router::new().nest(API_PREFIX, api).fallback(not_found)
}

/// Parses a path id; anything but a plain integer is a 404.
pub(crate) fn parse_id(raw: &str) -> Result<i64, ApiError> {
    if raw.is_empty() || raw.len() > 18 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::NotFound);
    }
    raw.parse().map_err(|_| ApiError::NotFound)
}

/// 404 for a path no route matches, or a method the path does not take.
async fn not_found() -> Response {
    ApiError::NotFound.into_response()
}
