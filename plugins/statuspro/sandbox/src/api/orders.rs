//! The read endpoints: list, get, lookup, viable statuses, status catalog.

use axum::{
    Json,
    extract::{Path, State},
    http::Uri,
};

use crate::{
    api::{AppState, parse_order_id},
    error::{ApiError, FieldErrors},
    input::QueryParams,
    model::{Order, OrderPage, StatusDefinition},
    seed,
    store::ListFilter,
};

/// Default rows per page.
const DEFAULT_PER_PAGE: i64 = 15;

/// Largest accepted `per_page`.
const MAX_PER_PAGE: i64 = 100;

/// `GET /orders`: filtered, paginated, newest id first.
///
/// # Query
///
/// `search`, `status_code` (exactly 8 chars), `tags[]` (all), `tags_any[]`
/// (any), `financial_status[]`, `fulfillment_status[]` (enum-checked),
/// `exclude_cancelled` (bool), `due_date_from` / `due_date_to` (inclusive
/// `YYYY-MM-DD`; `to` before `from` is a 422; orders without a due date are
/// dropped when either is set), `per_page` 1..=100 (default 15), `page` >= 1.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn list_orders(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Json<OrderPage>, ApiError> {
    let params = QueryParams::parse(uri.query());
    let mut errors = FieldErrors::default();

    let search = params.scalar("search", &mut errors).map(str::to_owned);
    let status_code = params.scalar("status_code", &mut errors).map(str::to_owned);
    if let Some(code) = &status_code
        && code.chars().count() != 8
    {
        errors.add("status_code", "The status code field must be 8 characters.");
    }
    let tags = params.array("tags", &mut errors);
    let tags_any = params.array("tags_any", &mut errors);
    let financial_status =
        params.enum_array("financial_status", seed::FINANCIAL_STATUSES, &mut errors);
    let fulfillment_status = params.enum_array(
        "fulfillment_status",
        seed::FULFILLMENT_STATUSES,
        &mut errors,
    );
    let exclude_cancelled = params
        .boolean("exclude_cancelled", &mut errors)
        .unwrap_or(false);
    let due_date_from = params.date("due_date_from", &mut errors);
    let due_date_to = params.date("due_date_to", &mut errors);
    if let (Some(from), Some(to)) = (due_date_from, due_date_to)
        && to < from
    {
        errors.add(
            "due_date_to",
            "The due date to field must be a date after or equal to due date from.",
        );
    }
    let per_page = params
        .integer_in("per_page", 1..=MAX_PER_PAGE, &mut errors)
        .unwrap_or(DEFAULT_PER_PAGE);
    let page = params
        .integer_in("page", 1..=i64::MAX, &mut errors)
        .unwrap_or(1);
    errors.finish()?;

    let filter = ListFilter {
        search,
        status_code,
        tags,
        tags_any,
        financial_status,
        fulfillment_status,
        exclude_cancelled,
        due_date_from,
        due_date_to,
    };
    // Both are validated positive above.
    Ok(Json(state.store.list(
        &filter,
        page.unsigned_abs(),
        per_page.unsigned_abs(),
    )))
}

/// `GET /orders/{order}`.
#[tracing::instrument(level = "debug", skip(state))]
pub(crate) async fn get_order(
    State(state): State<AppState>,
    Path(order): Path<String>,
) -> Result<Json<Order>, ApiError> {
    let id = parse_order_id(&order)?;
    state
        .store
        .order(id)
        .map(Json)
        .ok_or(ApiError::OrderNotFound)
}

/// `GET /orders/lookup?number=&email=`: a leading `#` on `number` is
/// stripped, `email` matches case-insensitively; both are required.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn lookup_order(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Json<Order>, ApiError> {
    let params = QueryParams::parse(uri.query());
    let mut errors = FieldErrors::default();
    let number = params
        .scalar("number", &mut errors)
        .map(|number| number.trim().trim_start_matches('#').trim().to_owned())
        .filter(|number| !number.is_empty());
    if number.is_none() && !errors.has("number") {
        errors.add("number", "The number field is required.");
    }
    let email = params
        .scalar("email", &mut errors)
        .map(|email| email.trim().to_owned());
    if email.is_none() && !errors.has("email") {
        errors.add("email", "The email field is required.");
    }
    errors.finish()?;
    // Both are present here: a missing one was reported above.
    let (Some(number), Some(email)) = (number, email) else {
        return Err(ApiError::field("number", "The number field is required."));
    };
    state
        .store
        .lookup(&number, &email)
        .map(Json)
        .ok_or(ApiError::OrderNotFound)
}

/// `GET /orders/{order}/viable-statuses`: bare array in catalog order.
#[tracing::instrument(level = "debug", skip(state))]
pub(crate) async fn viable_statuses(
    State(state): State<AppState>,
    Path(order): Path<String>,
) -> Result<Json<Vec<StatusDefinition>>, ApiError> {
    let id = parse_order_id(&order)?;
    state
        .store
        .viable_statuses(id)
        .map(Json)
        .ok_or(ApiError::OrderNotFound)
}

/// `GET /statuses`: the catalog as a bare array.
pub(crate) async fn list_statuses() -> Json<Vec<StatusDefinition>> {
    Json(seed::statuses())
}
