//! Purchasing: create (E2), read (E3) and receive (E4) purchase orders.

use axum::{
    Json,
    body::Bytes,
    extract::{Path, State},
    http::StatusCode,
};
use serde_json::{Value, json};

use crate::{
    api::{AppState, parse_id},
    error::{ApiError, Details},
    input::{Obj, parse_json, require_non_negative, require_positive},
    model::PurchaseOrder,
    store::{NewPurchaseOrder, NewPurchaseOrderRow, Receipt},
};

/// Fields of a `POST /purchase_orders` body.
const ORDER_FIELDS: &[&str] = &[
    "order_no",
    "entity_type",
    "supplier_id",
    "currency",
    "status",
    "expected_arrival_date",
    "order_created_date",
    "location_id",
    "tracking_location_id",
    "additional_info",
    "purchase_order_rows",
];

/// Required fields of a `POST /purchase_orders` body.
const ORDER_REQUIRED: &[&str] = &[
    "order_no",
    "supplier_id",
    "location_id",
    "purchase_order_rows",
];

/// Fields of one purchase order row.
const ROW_FIELDS: &[&str] = &[
    "quantity",
    "variant_id",
    "tax_rate_id",
    "price_per_unit",
    "purchase_uom_conversion_rate",
    "purchase_uom",
    "arrival_date",
];

/// Required fields of one purchase order row.
const ROW_REQUIRED: &[&str] = &["quantity", "variant_id", "price_per_unit"];

/// Fields of one receipt line.
const RECEIPT_FIELDS: &[&str] = &[
    "purchase_order_row_id",
    "quantity",
    "received_date",
    "batch_transactions",
];

/// Required fields of one receipt line.
const RECEIPT_REQUIRED: &[&str] = &["purchase_order_row_id", "quantity"];

/// Longest `purchase_uom`.
const MAX_UOM_CHARS: usize = 7;

/// Checks `^[A-Z]{3}$`.
fn is_currency_code(text: &str) -> bool {
    text.len() == 3 && text.bytes().all(|b| b.is_ascii_uppercase())
}

/// A required, non-blank string (order numbers).
fn order_number(obj: &Obj<'_>, details: &mut Details) -> Option<String> {
    let text = obj.string("order_no", None, details)?;
    if text.trim().is_empty() {
        details.add_info(
            &obj.path("order_no"),
            "minLength",
            "should NOT be shorter than 1 characters",
            json!({"limit": 1}),
        );
        return None;
    }
    Some(text)
}

/// Reads one purchase order row.
fn purchase_order_row(
    value: &Value,
    path: &str,
    details: &mut Details,
) -> Option<NewPurchaseOrderRow> {
    let row = Obj::open(value, path, ROW_FIELDS, ROW_REQUIRED, details)?;
    let variant_id = row.id("variant_id", details);
    let quantity = row
        .number("quantity", details)
        .filter(|&q| require_positive(q, &row.path("quantity"), details));
    let price_per_unit = row
        .number("price_per_unit", details)
        .filter(|&p| require_non_negative(p, &row.path("price_per_unit"), details));
    let tax_rate_id = row.id("tax_rate_id", details);
    let purchase_uom = row.string("purchase_uom", Some(MAX_UOM_CHARS), details);
    let purchase_uom_conversion_rate = row
        .number("purchase_uom_conversion_rate", details)
        .filter(|&r| require_non_negative(r, &row.path("purchase_uom_conversion_rate"), details));
    let arrival_date = row.date("arrival_date", details);
    Some(NewPurchaseOrderRow {
        variant_id: variant_id?,
        quantity: quantity?,
        price_per_unit: price_per_unit?,
        tax_rate_id,
        purchase_uom,
        purchase_uom_conversion_rate,
        arrival_date,
    })
}

/// `POST /purchase_orders` (E2): creates a NOT_RECEIVED order.
///
/// # Body
///
/// `{order_no*, supplier_id*, location_id*, purchase_order_rows* (>= 1)
/// {variant_id*, quantity* (> 0), price_per_unit* (>= 0), tax_rate_id,
/// purchase_uom (<= 7 chars), purchase_uom_conversion_rate (>= 0),
/// arrival_date}, entity_type (regular|outsourced), currency (^[A-Z]{3}$,
/// default the supplier's), status (NOT_RECEIVED only), expected_arrival_date,
/// order_created_date (default now), tracking_location_id (outsourced only),
/// additional_info}`. The supplier, location (purchases allowed), variants
/// must exist; `order_no` must be new.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn create_purchase_order(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<PurchaseOrder>, ApiError> {
    let body = parse_json(&body)?;
    let mut details = Details::default();
    let Some(obj) = Obj::open(&body, "", ORDER_FIELDS, ORDER_REQUIRED, &mut details) else {
        return Err(details.reject());
    };
    let order_no = order_number(&obj, &mut details);
    let supplier_id = obj.id("supplier_id", &mut details);
    let location_id = obj.id("location_id", &mut details);
    let entity_type = obj
        .enumeration("entity_type", &["regular", "outsourced"], &mut details)
        .unwrap_or("regular")
        .to_owned();
    let currency = obj.string("currency", None, &mut details);
    if let Some(code) = &currency
        && !is_currency_code(code)
    {
        details.add_info(
            ".currency",
            "pattern",
            "should match pattern \"^[A-Z]{3}$\"",
            json!({"pattern": "^[A-Z]{3}$"}),
        );
    }
    obj.enumeration("status", &["NOT_RECEIVED"], &mut details);
    let expected_arrival_date = obj.date("expected_arrival_date", &mut details);
    let order_created_date = obj.date("order_created_date", &mut details);
    let tracking_location_id = obj.id("tracking_location_id", &mut details);
    let additional_info = obj.string("additional_info", None, &mut details);
    let mut rows = Vec::new();
    if let Some(items) = obj.array("purchase_order_rows", 1, &mut details) {
        for (index, item) in items.iter().enumerate() {
            let path = format!(".purchase_order_rows[{index}]");
            if let Some(row) = purchase_order_row(item, &path, &mut details) {
                rows.push(row);
            }
        }
    }
    let (Some(order_no), Some(supplier_id), Some(location_id)) =
        (order_no, supplier_id, location_id)
    else {
        return Err(details.reject());
    };
    details.finish()?;

    let new = NewPurchaseOrder {
        order_no,
        supplier_id,
        location_id,
        entity_type,
        currency,
        expected_arrival_date,
        order_created_date,
        tracking_location_id,
        additional_info,
        rows,
    };
    let order = state.store.lock().create_purchase_order(new)?;
    tracing::info!(id = order.id, order_no = %order.order_no, "purchase order created");
    Ok(Json(order))
}

/// `GET /purchase_orders/{id}` (E3).
#[tracing::instrument(level = "debug", skip(state))]
pub(crate) async fn get_purchase_order(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<PurchaseOrder>, ApiError> {
    let id = parse_id(&id)?;
    state
        .store
        .lock()
        .purchase_order(id)
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// Reads one receipt line at `path` (`[0]`, or empty for a one-object body).
fn receipt(value: &Value, path: &str, details: &mut Details) -> Option<Receipt> {
    let line = Obj::open(value, path, RECEIPT_FIELDS, RECEIPT_REQUIRED, details)?;
    let row_id = line.id("purchase_order_row_id", details);
    let quantity = line
        .number("quantity", details)
        .filter(|&q| require_positive(q, &line.path("quantity"), details));
    let received_date = line.date("received_date", details);
    line.array("batch_transactions", 0, details);
    Some(Receipt {
        path: path.to_owned(),
        row_id: row_id?,
        quantity: quantity?,
        received_date,
    })
}

/// `POST /purchase_order_receive` (E4): answers 204 with no body.
///
/// # Body
///
/// An array (>= 1) of `{purchase_order_row_id*, quantity* (> 0),
/// received_date (default now), batch_transactions}`, or one such object.
///
/// All or nothing: every line must name an existing, unreceived row, and the
/// quantities asked of one row (summed over the lines) must not exceed it;
/// otherwise a 422 and nothing changes. A line for a row's whole quantity
/// sets its `received_date`; a smaller one lowers the row's quantity to the
/// rest and appends a received row with the quantity and date. Stock at the
/// order's location grows by quantity × conversion rate (1 when null); the
/// order's status follows its rows.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn receive(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let body = parse_json(&body)?;
    let mut details = Details::default();
    let mut receipts = Vec::new();
    match &body {
        Value::Array(items) => {
            if items.is_empty() {
                details.add_info(
                    "",
                    "minItems",
                    "should NOT have fewer than 1 items",
                    json!({"limit": 1}),
                );
            }
            for (index, item) in items.iter().enumerate() {
                if let Some(line) = receipt(item, &format!("[{index}]"), &mut details) {
                    receipts.push(line);
                }
            }
        }
        Value::Object(_) => receipts.extend(receipt(&body, "", &mut details)),
        _ => details.add_info("", "type", "should be array", json!({"type": "array"})),
    }
    details.finish()?;
    let count = receipts.len();
    state.store.lock().receive(receipts)?;
    tracing::info!(lines = count, "purchase order rows received");
    Ok(StatusCode::NO_CONTENT)
}
