//! Sales: read a sales order (E8) and fulfil it (E9).

use axum::{
    Json,
    body::Bytes,
    extract::{Path, State},
};
use serde_json::Value;

use crate::{
    api::{AppState, parse_id},
    error::{ApiError, Details},
    input::{Obj, parse_json, require_positive},
    model::{FulfillmentRow, FulfillmentStatus, SalesOrder, SalesOrderFulfillment},
    store::NewFulfillment,
};

/// Fields of a `POST /sales_order_fulfillments` body.
const FULFILLMENT_FIELDS: &[&str] = &[
    "sales_order_id",
    "picked_date",
    "status",
    "conversion_rate",
    "conversion_date",
    "tracking_number",
    "tracking_url",
    "tracking_carrier",
    "tracking_method",
    "sales_order_fulfillment_rows",
];

/// Required fields of a `POST /sales_order_fulfillments` body.
const FULFILLMENT_REQUIRED: &[&str] = &["sales_order_id", "status", "sales_order_fulfillment_rows"];

/// Fields of one fulfillment row.
const ROW_FIELDS: &[&str] = &[
    "sales_order_row_id",
    "quantity",
    "batch_transactions",
    "serial_numbers",
];

/// Required fields of one fulfillment row.
const ROW_REQUIRED: &[&str] = &["sales_order_row_id", "quantity"];

/// Longest `tracking_number`.
const MAX_TRACKING_NUMBER_CHARS: usize = 256;

/// Longest `tracking_url`.
const MAX_TRACKING_URL_CHARS: usize = 2048;

/// `GET /sales_orders/{id}` (E8).
#[tracing::instrument(level = "debug", skip(state))]
pub(crate) async fn get_sales_order(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SalesOrder>, ApiError> {
    let id = parse_id(&id)?;
    state
        .store
        .lock()
        .sales_order(id)
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// Reads one fulfillment row.
fn fulfillment_row(value: &Value, path: &str, details: &mut Details) -> Option<FulfillmentRow> {
    let row = Obj::open(value, path, ROW_FIELDS, ROW_REQUIRED, details)?;
    let sales_order_row_id = row.id("sales_order_row_id", details);
    let quantity = row
        .number("quantity", details)
        .filter(|&q| require_positive(q, &row.path("quantity"), details));
    let batch_transactions = row
        .array("batch_transactions", 1, details)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let serial_numbers = row
        .array("serial_numbers", 0, details)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    Some(FulfillmentRow {
        sales_order_row_id: sales_order_row_id?,
        quantity: quantity?,
        batch_transactions,
        serial_numbers,
    })
}

/// `POST /sales_order_fulfillments` (E9): answers 200 with the fulfillment.
///
/// # Body
///
/// `{sales_order_id*, status* (PACKED|DELIVERED), sales_order_fulfillment_rows*
/// (>= 1) {sales_order_row_id*, quantity* (> 0), batch_transactions,
/// serial_numbers}, picked_date, conversion_rate, conversion_date,
/// tracking_number (<= 256, nullable), tracking_url (<= 2048, nullable),
/// tracking_carrier, tracking_method}`.
///
/// Every row must belong to the order and the quantities asked of a row
/// (summed) must not exceed what earlier fulfillments left of it; otherwise a
/// 422 and nothing changes. DELIVERED lowers stock at the order's location
/// (services excepted); the order's status follows its fulfillments.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn create_fulfillment(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<SalesOrderFulfillment>, ApiError> {
    let body = parse_json(&body)?;
    let mut details = Details::default();
    let Some(obj) = Obj::open(
        &body,
        "",
        FULFILLMENT_FIELDS,
        FULFILLMENT_REQUIRED,
        &mut details,
    ) else {
        return Err(details.reject());
    };
    let sales_order_id = obj.id("sales_order_id", &mut details);
    let status = obj
        .enumeration("status", &["DELIVERED", "PACKED"], &mut details)
        .and_then(FulfillmentStatus::parse);
    let picked_date = obj.date("picked_date", &mut details);
    let conversion_rate = obj.number("conversion_rate", &mut details);
    let conversion_date = obj.date("conversion_date", &mut details);
    let tracking_number = obj.nullable_string(
        "tracking_number",
        Some(MAX_TRACKING_NUMBER_CHARS),
        &mut details,
    );
    let tracking_url =
        obj.nullable_string("tracking_url", Some(MAX_TRACKING_URL_CHARS), &mut details);
    let tracking_carrier = obj.string("tracking_carrier", None, &mut details);
    let tracking_method = obj.string("tracking_method", None, &mut details);
    let mut rows = Vec::new();
    if let Some(items) = obj.array("sales_order_fulfillment_rows", 1, &mut details) {
        for (index, item) in items.iter().enumerate() {
            let path = format!(".sales_order_fulfillment_rows[{index}]");
            if let Some(row) = fulfillment_row(item, &path, &mut details) {
                rows.push(row);
            }
        }
    }
    let (Some(sales_order_id), Some(status)) = (sales_order_id, status) else {
        return Err(details.reject());
    };
    details.finish()?;

    let new = NewFulfillment {
        sales_order_id,
        status,
        rows,
        picked_date,
        conversion_rate,
        conversion_date,
        tracking_number,
        tracking_url,
        tracking_carrier,
        tracking_method,
    };
    let fulfillment = state.store.lock().create_fulfillment(new)?;
    tracing::info!(
        id = fulfillment.id,
        sales_order_id,
        status = %fulfillment.status,
        "sales order fulfilled"
    );
    Ok(Json(fulfillment))
}
