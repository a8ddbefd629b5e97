//! Manufacturing orders: create (E5), read (E6) and update (E7).

use axum::{
    Json,
    body::Bytes,
    extract::{Path, State},
};
use serde_json::Value;

use crate::{
    api::{AppState, parse_id},
    error::{ApiError, Details},
    input::{Obj, parse_json, require_non_negative, require_positive},
    model::{ManufacturingOrder, ManufacturingOrderStatus},
    store::{ManufacturingOrderPatch, NewManufacturingOrder},
};

/// Fields of a `POST /manufacturing_orders` body.
const CREATE_FIELDS: &[&str] = &[
    "status",
    "order_no",
    "variant_id",
    "location_id",
    "planned_quantity",
    "actual_quantity",
    "order_created_date",
    "production_deadline_date",
    "additional_info",
    "batch_transactions",
];

/// Required fields of a `POST /manufacturing_orders` body.
const CREATE_REQUIRED: &[&str] = &["order_no", "variant_id", "location_id", "planned_quantity"];

/// Fields of a `PATCH /manufacturing_orders/{id}` body (none required).
const UPDATE_FIELDS: &[&str] = &[
    "status",
    "order_no",
    "variant_id",
    "location_id",
    "planned_quantity",
    "actual_quantity",
    "order_created_date",
    "production_deadline_date",
    "additional_info",
    "done_date",
    "batch_transactions",
];

/// The statuses a `PATCH` may set.
fn status_names() -> Vec<&'static str> {
    ManufacturingOrderStatus::ALL
        .iter()
        .map(|status| status.as_str())
        .collect()
}

/// A non-blank `order_no`, if present.
fn order_number(obj: &Obj<'_>, details: &mut Details) -> Option<String> {
    let text = obj.string("order_no", None, details)?;
    if text.trim().is_empty() {
        details.add_info(
            &obj.path("order_no"),
            "minLength",
            "should NOT be shorter than 1 characters",
            serde_json::json!({"limit": 1}),
        );
        return None;
    }
    Some(text)
}

/// `POST /manufacturing_orders` (E5): creates a NOT_STARTED order.
///
/// # Body
///
/// `{order_no*, variant_id*, location_id*, planned_quantity* (> 0),
/// actual_quantity (>= 0), status (NOT_STARTED only), order_created_date
/// (default now), production_deadline_date, additional_info,
/// batch_transactions}`. The variant must be a product, the location must
/// allow manufacturing, `order_no` must be new.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn create_manufacturing_order(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<ManufacturingOrder>, ApiError> {
    let body = parse_json(&body)?;
    let mut details = Details::default();
    let Some(obj) = Obj::open(&body, "", CREATE_FIELDS, CREATE_REQUIRED, &mut details) else {
        return Err(details.reject());
    };
    obj.enumeration("status", &["NOT_STARTED"], &mut details);
    let order_no = order_number(&obj, &mut details);
    let variant_id = obj.id("variant_id", &mut details);
    let location_id = obj.id("location_id", &mut details);
    let planned_quantity = obj
        .number("planned_quantity", &mut details)
        .filter(|&q| require_positive(q, ".planned_quantity", &mut details));
    let actual_quantity = obj
        .number("actual_quantity", &mut details)
        .filter(|&q| require_non_negative(q, ".actual_quantity", &mut details));
    let order_created_date = obj.date("order_created_date", &mut details);
    let production_deadline_date = obj.date("production_deadline_date", &mut details);
    let additional_info = obj.string("additional_info", None, &mut details);
    obj.array("batch_transactions", 0, &mut details);
    let (Some(order_no), Some(variant_id), Some(location_id), Some(planned_quantity)) =
        (order_no, variant_id, location_id, planned_quantity)
    else {
        return Err(details.reject());
    };
    details.finish()?;

    let new = NewManufacturingOrder {
        order_no,
        variant_id,
        location_id,
        planned_quantity,
        actual_quantity,
        order_created_date,
        production_deadline_date,
        additional_info,
    };
    let order = state.store.lock().create_manufacturing_order(new)?;
    tracing::info!(id = order.id, order_no = %order.order_no, "manufacturing order created");
    Ok(Json(order))
}

/// `GET /manufacturing_orders/{id}` (E6).
#[tracing::instrument(level = "debug", skip(state))]
pub(crate) async fn get_manufacturing_order(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ManufacturingOrder>, ApiError> {
    let id = parse_id(&id)?;
    state
        .store
        .lock()
        .manufacturing_order(id)
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// `PATCH /manufacturing_orders/{id}` (E7): changes the fields sent.
///
/// # Body
///
/// Any of `{status (NOT_STARTED|BLOCKED|IN_PROGRESS|DONE), order_no,
/// variant_id, location_id, planned_quantity (> 0), actual_quantity (>= 0),
/// order_created_date, production_deadline_date, additional_info, done_date,
/// batch_transactions}`.
///
/// Moving to DONE sets `done_date` (the one sent, else now) and
/// `actual_quantity` (the one sent, else the order's, else planned), adds
/// that quantity of the variant to stock at the order's location and removes
/// the recipe's ingredients for it there. On a DONE order, `order_no`,
/// `variant_id`, `location_id`, `planned_quantity`, `actual_quantity`,
/// `production_deadline_date` and `batch_transactions` are not updatable and
/// any status but DONE is refused (422); `{"status":"DONE"}` again is a 200
/// that changes nothing.
#[tracing::instrument(level = "debug", skip(state, body))]
pub(crate) async fn update_manufacturing_order(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<ManufacturingOrder>, ApiError> {
    let id = parse_id(&id)?;
    if state.store.lock().manufacturing_order(id).is_none() {
        return Err(ApiError::NotFound);
    }
    let body = parse_json(&body)?;
    let mut details = Details::default();
    let Some(obj) = Obj::open(&body, "", UPDATE_FIELDS, &[], &mut details) else {
        return Err(details.reject());
    };
    let status = obj
        .enumeration("status", &status_names(), &mut details)
        .and_then(ManufacturingOrderStatus::parse);
    let patch = ManufacturingOrderPatch {
        status,
        order_no: order_number(&obj, &mut details),
        variant_id: obj.id("variant_id", &mut details),
        location_id: obj.id("location_id", &mut details),
        planned_quantity: obj
            .number("planned_quantity", &mut details)
            .filter(|&q| require_positive(q, ".planned_quantity", &mut details)),
        actual_quantity: obj
            .number("actual_quantity", &mut details)
            .filter(|&q| require_non_negative(q, ".actual_quantity", &mut details)),
        order_created_date: obj.date("order_created_date", &mut details),
        production_deadline_date: obj.date("production_deadline_date", &mut details),
        additional_info: obj.string("additional_info", None, &mut details),
        done_date: obj.date("done_date", &mut details),
        present: match &body {
            Value::Object(map) => map.keys().cloned().collect(),
            _ => Vec::new(),
        },
    };
    obj.array("batch_transactions", 0, &mut details);
    details.finish()?;
    let order = state.store.lock().update_manufacturing_order(id, patch)?;
    tracing::info!(id, status = %order.status, "manufacturing order updated");
    Ok(Json(order))
}
