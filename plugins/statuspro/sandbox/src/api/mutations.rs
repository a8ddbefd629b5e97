//! The write endpoints: status, comment, due date, bulk status.
//!
//! Each one resolves the order first (404 before validation, as route-model
//! binding does upstream), then validates the whole body (422 listing every
//! bad field), then applies the change.

use axum::{
    Json,
    body::Bytes,
    extract::{Path, State},
    http::StatusCode,
};
use serde_json::Value;

use crate::{
    api::{AppState, parse_order_id},
    bulk::BulkJob,
    clock,
    error::{ApiError, FieldErrors},
    input::{JsonInput, as_integer, parse_body},
    model::{BulkQueued, MessageBody},
    seed::BULK_LIMIT,
    store::{ChangeError, StatusChange},
};

/// Longest accepted comment, in characters.
const MAX_COMMENT_CHARS: usize = 1000;

/// Shortest accepted comment on the comment endpoint, in characters.
const MIN_COMMENT_CHARS: usize = 3;

/// A 200 with `{"message": ...}`.
fn ok(message: &str) -> Json<MessageBody> {
    Json(MessageBody {
        message: message.to_owned(),
    })
}

/// Resolves a path id to an existing order id.
fn existing_order(state: &AppState, raw: &str) -> Result<i64, ApiError> {
    let id = parse_order_id(raw)?;
    if state.store.exists(id) {
        Ok(id)
    } else {
        Err(ApiError::OrderNotFound)
    }
}

/// The 422 for a status the order cannot move to.
fn not_viable(change: &StatusChange) -> ApiError {
    ApiError::field(
        "status_code",
        format!(
            "The status {} ({}) is not a viable next status for this order.",
            change.status.code, change.status.name
        ),
    )
}

/// Reads the fields a status change shares between the single and bulk bodies.
fn status_change(input: &JsonInput<'_>, errors: &mut FieldErrors) -> Option<StatusChange> {
    let status = input.status_code(errors);
    let comment = input.text("comment", false, 0..=MAX_COMMENT_CHARS, errors);
    let public = input.boolean("public", false, errors);
    let email_customer = input.boolean("email_customer", true, errors);
    // Accepted and validated; the sandbox keeps no additional recipients.
    let _email_additional = input.boolean("email_additional", true, errors);
    status.map(|status| StatusChange {
        status,
        comment,
        public,
        email_customer,
    })
}

/// `POST /orders/{order}/status`.
///
/// # Body
///
/// `{status_code*, comment? (<= 1000 chars), public=false, email_customer=true,
/// email_additional=true}`. The status must exist and be viable for the order.
#[tracing::instrument(level = "debug", skip(state, body))]
pub(crate) async fn update_status(
    State(state): State<AppState>,
    Path(order): Path<String>,
    body: Bytes,
) -> Result<Json<MessageBody>, ApiError> {
    let id = existing_order(&state, &order)?;
    let map = parse_body(&body)?;
    let input = JsonInput::new(&map);
    let mut errors = FieldErrors::default();
    let change = status_change(&input, &mut errors);
    errors.finish()?;
    let change = change
        .ok_or_else(|| ApiError::field("status_code", "The status code field is required."))?;
    match state.store.change_status(id, &change) {
        Ok(()) => Ok(ok("Order status updated successfully!")),
        Err(ChangeError::NotViable) => Err(not_viable(&change)),
        Err(ChangeError::NotFound) => Err(ApiError::OrderNotFound),
    }
}

/// `POST /orders/{order}/comment`.
///
/// # Body
///
/// `{comment* (3..=1000 chars), public=false}`.
#[tracing::instrument(level = "debug", skip(state, body))]
pub(crate) async fn add_comment(
    State(state): State<AppState>,
    Path(order): Path<String>,
    body: Bytes,
) -> Result<Json<MessageBody>, ApiError> {
    let id = existing_order(&state, &order)?;
    let map = parse_body(&body)?;
    let input = JsonInput::new(&map);
    let mut errors = FieldErrors::default();
    let comment = input.text(
        "comment",
        true,
        MIN_COMMENT_CHARS..=MAX_COMMENT_CHARS,
        &mut errors,
    );
    let public = input.boolean("public", false, &mut errors);
    errors.finish()?;
    let comment =
        comment.ok_or_else(|| ApiError::field("comment", "The comment field is required."))?;
    state
        .store
        .update(id, |record| {
            record.add_comment(comment, public, clock::now())
        })
        .ok_or(ApiError::OrderNotFound)?;
    Ok(ok("Order comment added!"))
}

/// `POST /orders/{order}/due-date`.
///
/// # Body
///
/// `{due_date* (YYYY-MM-DD or null; the key must be present), due_date_to?
/// (YYYY-MM-DD, not before due_date)}`. A date sets `due_date` and replaces
/// `due_date_to` (cleared when omitted); `null` clears both.
#[tracing::instrument(level = "debug", skip(state, body))]
pub(crate) async fn set_due_date(
    State(state): State<AppState>,
    Path(order): Path<String>,
    body: Bytes,
) -> Result<Json<MessageBody>, ApiError> {
    let id = existing_order(&state, &order)?;
    let map = parse_body(&body)?;
    let input = JsonInput::new(&map);
    let mut errors = FieldErrors::default();
    if !input.present("due_date") {
        errors.add("due_date", "The due date field must be present.");
    }
    let due_date = input.date("due_date", &mut errors);
    let due_date_to = input.date("due_date_to", &mut errors);
    if let (Some(from), Some(to)) = (due_date, due_date_to)
        && to < from
    {
        errors.add(
            "due_date_to",
            "The due date to field must be a date after or equal to due date.",
        );
    }
    errors.finish()?;
    state
        .store
        .update(id, |record| {
            record.set_due_date(due_date, due_date_to, clock::now())
        })
        .ok_or(ApiError::OrderNotFound)?;
    Ok(ok("Order due date set!"))
}

/// `POST /orders/bulk-status`: validates the whole body, queues the job and
/// answers 202 before anything is applied.
///
/// # Body
///
/// `{order_ids* (1..=50 integers), status_code*, comment?, public=false,
/// email_customer=true, email_additional=true, send_at? (unix seconds),
/// due_date? (YYYY-MM-DD)}`. Unknown ids and ids for which the status is not
/// viable are skipped when the job is applied. `send_at` is validated but
/// changes nothing: the queue's apply delay stands in for scheduling.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) async fn bulk_update_status(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<BulkQueued>), ApiError> {
    let map = parse_body(&body)?;
    let input = JsonInput::new(&map);
    let mut errors = FieldErrors::default();
    let order_ids = bulk_order_ids(&input, &mut errors);
    let change = status_change(&input, &mut errors);
    let _send_at = input.integer("send_at", &mut errors);
    let due_date = input.date("due_date", &mut errors);
    errors.finish()?;
    let change = change
        .ok_or_else(|| ApiError::field("status_code", "The status code field is required."))?;

    let count = order_ids.len();
    state.bulk.enqueue(BulkJob {
        order_ids,
        change,
        due_date,
    });
    Ok((
        StatusCode::ACCEPTED,
        Json(BulkQueued {
            message: "Bulk status update queued.".to_owned(),
            count,
            limit: BULK_LIMIT,
        }),
    ))
}

/// Validates `order_ids`: required, an array of 1..=50 integers.
fn bulk_order_ids(input: &JsonInput<'_>, errors: &mut FieldErrors) -> Vec<i64> {
    const NAME: &str = "order_ids";
    let items = match input.get(NAME) {
        None => {
            errors.add(NAME, "The order ids field is required.");
            return Vec::new();
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            errors.add(NAME, "The order ids field must be an array.");
            return Vec::new();
        }
    };
    if items.is_empty() {
        errors.add(NAME, "The order ids field must have at least 1 items.");
    }
    if items.len() > BULK_LIMIT {
        errors.add(
            NAME,
            format!("The order ids field must not have more than {BULK_LIMIT} items."),
        );
    }
    let mut ids = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match as_integer(item) {
            Some(id) => ids.push(id),
            None => {
                let key = format!("{NAME}.{index}");
                errors.add(&key, format!("The {key} field must be an integer."));
            }
        }
    }
    ids
}
