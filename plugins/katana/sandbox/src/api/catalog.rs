//! The read-only lists: variants (E1), suppliers, locations, and the three
//! kinds of order (by `ids` or `order_no`).
//!
//! Each is newest (highest id) first, paginated with `page` and `limit`, and
//! answered as `{"data": [...]}` with the `X-Pagination` header (see
//! [`crate::input`]). A page past the end is an empty `data`.

use axum::{extract::State, http::Uri, response::Response};

use crate::{
    api::AppState,
    error::{ApiError, Details},
    input::{Page, QueryParams},
    store::{OrderFilter, VariantFilter},
};

/// The only `extend` value `GET /variants` accepts.
const EXTEND_PRODUCT_OR_MATERIAL: &str = "product_or_material";

/// `GET /variants` (E1).
///
/// # Query
///
/// `ids` (integers), `sku` (exact SKUs), `extend=product_or_material` (adds
/// the parent item), `page`, `limit`. Arrays take repeated keys or commas.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn list_variants(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let params = QueryParams::parse(uri.query());
    let mut details = Details::default();
    let ids = params.ids("ids", &mut details);
    let skus = params.strings("sku");
    let mut extend_product_or_material = false;
    for (index, value) in params.strings("extend").iter().enumerate() {
        if value == EXTEND_PRODUCT_OR_MATERIAL {
            extend_product_or_material = true;
        } else {
            details.add_info(
                &format!(".extend[{index}]"),
                "enum",
                "should be equal to one of the allowed values",
                serde_json::json!({"allowedValues": [EXTEND_PRODUCT_OR_MATERIAL]}),
            );
        }
    }
    let page = params.page(&mut details);
    details.finish()?;
    let filter = VariantFilter {
        ids,
        skus,
        extend_product_or_material,
    };
    let variants = state.store.lock().variants(&filter);
    Ok(page.respond(variants))
}

/// `GET /suppliers`: `ids`, `page`, `limit`.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn list_suppliers(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let params = QueryParams::parse(uri.query());
    let mut details = Details::default();
    let ids = params.ids("ids", &mut details);
    let page = params.page(&mut details);
    details.finish()?;
    let suppliers = state.store.lock().suppliers(&ids);
    Ok(page.respond(suppliers))
}

/// `GET /locations`: `ids`, `page`, `limit`.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn list_locations(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let params = QueryParams::parse(uri.query());
    let mut details = Details::default();
    let ids = params.ids("ids", &mut details);
    let page = params.page(&mut details);
    details.finish()?;
    let locations = state.store.lock().locations(&ids);
    Ok(page.respond(locations))
}

/// The filters the order lists share: `ids` (integers) and `order_no`
/// (exact order numbers); either may repeat or take commas.
fn order_filter(params: &QueryParams, details: &mut Details) -> OrderFilter {
    OrderFilter {
        ids: params.ids("ids", details),
        order_nos: params.strings("order_no"),
    }
}

/// The filter and page of an order list request, or the 422 its bad
/// parameters get.
fn order_query(uri: &Uri) -> Result<(OrderFilter, Page), ApiError> {
    let params = QueryParams::parse(uri.query());
    let mut details = Details::default();
    let filter = order_filter(&params, &mut details);
    let page = params.page(&mut details);
    details.finish()?;
    Ok((filter, page))
}

/// `GET /purchase_orders`: `ids`, `order_no`, `page`, `limit`.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn list_purchase_orders(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (filter, page) = order_query(&uri)?;
    let orders = state.store.lock().list_purchase_orders(&filter);
    Ok(page.respond(orders))
}

/// `GET /manufacturing_orders`: `ids`, `order_no`, `page`, `limit`.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn list_manufacturing_orders(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (filter, page) = order_query(&uri)?;
    let orders = state.store.lock().list_manufacturing_orders(&filter);
    Ok(page.respond(orders))
}

/// `GET /sales_orders`: `ids`, `order_no`, `page`, `limit`.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn list_sales_orders(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (filter, page) = order_query(&uri)?;
    let orders = state.store.lock().list_sales_orders(&filter);
    Ok(page.respond(orders))
}
