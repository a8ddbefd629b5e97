//! `receive_purchase_order`: record goods that arrived against a purchase
//! order, which adds them to stock, after the user confirms.
//!
//! The preview reads the order (E3) and checks every line: the row must be
//! on this order, not yet received, and the quantity (summed when a row is
//! listed twice) at most the row's. Problems are warnings in a preview and
//! a `VALIDATION_ERROR` before anyone is asked when confirming. Confirmed,
//! it sends E4 with `received_date` now, then reads the order again for its
//! new status: a partial receipt leaves the row open with the rest.

use std::collections::BTreeMap;

use toolhost_sdk::http::Method;

use crate::api::{PurchaseOrder, Receipt};
use crate::inputs::{Lines, check_not_empty, check_positive, now_iso, num};
use crate::mutation::{Report, approve};
use crate::prelude::*;

/// Arguments of `receive_purchase_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceivePurchaseOrderInput {
    /// The purchase order's id (not its number).
    #[schemars(example = 7001, range(min = 1))]
    pub order_id: u64,
    /// What arrived: an array of objects, one per order row (a JSON string holding the array is accepted too).
    #[schemars(example = items_example(), extend("minItems" = 1, "maxItems" = 250))]
    pub items: Lines<ReceiveItem>,
    /// If false (default), returns a preview and changes nothing. If true, asks the user to approve, then receives the items.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// One row received.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiveItem {
    /// The purchase order row's id (from the order's rows, not the variant id).
    #[schemars(example = 7101, range(min = 1))]
    pub purchase_order_row_id: u64,
    /// Quantity received, greater than 0 and at most what is open on the row; less than that receives part of the row.
    #[schemars(example = 50, extend("exclusiveMinimum" = 0))]
    pub quantity: f64,
}

fn items_example() -> serde_json::Value {
    serde_json::json!([{"purchase_order_row_id": 7101, "quantity": 50}])
}

/// What `receive_purchase_order` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReceivePurchaseOrderOutput {
    /// The purchase order's id.
    pub order_id: u64,
    /// Its number, e.g. `PO-25-001`.
    pub order_number: String,
    /// How many lines were received (or would be, in a preview).
    pub items_received: usize,
    /// The order's status: NOT_RECEIVED, PARTIALLY_RECEIVED or RECEIVED; after a receipt, the new one (UNKNOWN if it could not be read).
    pub status: String,
    /// What happened, warnings and next steps.
    #[serde(flatten)]
    pub report: Report,
}

/// Receives purchase order rows.
pub struct ReceivePurchaseOrder;

impl Tool for ReceivePurchaseOrder {
    type Input = ReceivePurchaseOrderInput;
    type Output = ReceivePurchaseOrderOutput;
    const NAME: &'static str = "receive_purchase_order";
    const TITLE: &'static str = "Receive Purchase Order";
    const DESCRIPTION: &'static str = "Receive goods against a Katana purchase order, adding \
        them to stock; a quantity below the row's receives part of it and leaves the rest open. \
        Use it when a delivery arrives, after checking the paperwork with \
        verify_order_document. Two steps: with confirm=false (default) it checks the rows and \
        returns a preview, changing nothing; with confirm=true the user is asked to approve, \
        and only then is stock updated.";
    const ANNOTATIONS: Annotations = Annotations::mutating(true, false);

    fn call(&self, input: ReceivePurchaseOrderInput) -> Result<Self::Output, ToolError> {
        check_not_empty("items", &input.items)?;
        for item in input.items.as_slice() {
            check_positive("quantity", item.quantity)?;
        }
        let lines = input.items.as_slice();
        let client = Client::from_config()?;
        let order = client.purchase_order(input.order_id)?;
        let number = number(&order);
        let problems = problems(&order, lines);
        let mut out = ReceivePurchaseOrderOutput {
            order_id: order.id,
            order_number: number.clone(),
            items_received: lines.len(),
            status: order.status.clone().unwrap_or_default(),
            report: Report::preview(
                format!(
                    "Preview: receive {} items for purchase order {number}; nothing was changed",
                    lines.len()
                ),
                problems.clone(),
                vec![if problems.is_empty() {
                    "Call again with confirm=true to receive them (the user is asked to approve)."
                        .to_string()
                } else {
                    "Fix the items the warnings name before confirming.".to_string()
                }],
            ),
        };
        if !input.confirm {
            return Ok(out);
        }
        if !problems.is_empty() {
            return Err(
                ToolError::validation(problems.join("; ")).with_hint(format!(
                    "Receive only rows of purchase order {number} that are still open, at most \
                 their open quantity; call with confirm=false to see the order's check."
                )),
            );
        }
        let question = format!(
            "Receive {} items for purchase order {number} and update inventory?",
            lines.len()
        );
        let action = format!("Receipt for purchase order {number}");
        if let Err(stopped) = approve(&client, &question, &action, &[]) {
            out.report = stopped;
            return Ok(out);
        }

        let now = now_iso();
        let receipts: Vec<Receipt> = lines
            .iter()
            .map(|l| Receipt {
                purchase_order_row_id: l.purchase_order_row_id,
                quantity: l.quantity,
                received_date: &now,
            })
            .collect();
        let status_code = client
            .write(
                Method::Post,
                "/purchase_order_receive",
                &receipts,
                &format!("purchase order {number} row"),
                &format!("Read purchase order {number} (its rows' received dates)"),
            )?
            .status;
        // The receipt is made: a failure to read the new status must not
        // look like a failed receipt, or it could be repeated.
        let (open, warnings) = match client.purchase_order(order.id) {
            Ok(after) => {
                out.status = after.status.unwrap_or_default();
                let open = after
                    .purchase_order_rows
                    .iter()
                    .any(|r| r.received_date.is_none());
                (open, Vec::new())
            }
            Err(e) => {
                out.status = "UNKNOWN".to_string();
                (
                    true,
                    vec![format!(
                        "The items were received, but reading the order's new status failed \
                         ({}); do not receive them again.",
                        e.message
                    )],
                )
            }
        };
        out.report = Report::done(
            status_code,
            format!(
                "Received {} items for purchase order {number}; its status is now {}",
                lines.len(),
                out.status
            ),
            warnings,
            vec![if open {
                format!(
                    "Rows of {number} may still be open; receive the rest with \
                     receive_purchase_order (same row ids) when it arrives."
                )
            } else {
                format!("Purchase order {number} is fully received.")
            }],
        );
        Ok(out)
    }
}

/// The order's number, or `PO-<id>` when it has none.
fn number(order: &PurchaseOrder) -> String {
    order
        .order_no
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("PO-{}", order.id))
}

/// Every reason `lines` cannot be received on `order`, one sentence each.
pub fn problems(order: &PurchaseOrder, lines: &[ReceiveItem]) -> Vec<String> {
    let number = number(order);
    let mut per_row: BTreeMap<u64, f64> = BTreeMap::new();
    let mut first_seen = Vec::new();
    for line in lines {
        let sum = per_row
            .entry(line.purchase_order_row_id)
            .or_insert_with(|| {
                first_seen.push(line.purchase_order_row_id);
                0.0
            });
        *sum += line.quantity;
    }
    let mut problems = Vec::new();
    for id in first_seen {
        let quantity = per_row[&id];
        let Some(row) = order.purchase_order_rows.iter().find(|r| r.id == id) else {
            problems.push(format!("Row {id} is not on purchase order {number}."));
            continue;
        };
        if let Some(date) = &row.received_date {
            problems.push(format!("Row {id} was already received ({date})."));
        } else if quantity > row.quantity + 1e-9 {
            problems.push(format!(
                "Row {id}: receiving {} but only {} are open.",
                num(quantity),
                num(row.quantity)
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PurchaseOrderRow;

    fn order() -> PurchaseOrder {
        let row = |id, quantity, received: Option<&str>| PurchaseOrderRow {
            id,
            variant_id: 5101,
            quantity,
            price_per_unit: Some(2.5),
            received_date: received.map(str::to_string),
        };
        PurchaseOrder {
            id: 7001,
            order_no: Some("PO-25-001".into()),
            status: Some("PARTIALLY_RECEIVED".into()),
            currency: None,
            purchase_order_rows: vec![
                row(7101, 150.0, None),
                row(7102, 50.0, Some("2025-01-02T00:00:00.000Z")),
            ],
        }
    }

    fn line(id: u64, quantity: f64) -> ReceiveItem {
        ReceiveItem {
            purchase_order_row_id: id,
            quantity,
        }
    }

    #[test]
    fn open_rows_within_their_quantity_pass() {
        assert!(problems(&order(), &[line(7101, 150.0)]).is_empty());
        assert!(problems(&order(), &[line(7101, 100.0), line(7101, 50.0)]).is_empty());
    }

    #[test]
    fn each_problem_is_named() {
        let p = problems(
            &order(),
            &[
                line(7199, 1.0),
                line(7102, 1.0),
                line(7101, 100.0),
                line(7101, 60.0),
            ],
        );
        assert_eq!(
            p,
            [
                "Row 7199 is not on purchase order PO-25-001.",
                "Row 7102 was already received (2025-01-02T00:00:00.000Z).",
                "Row 7101: receiving 160 but only 150 are open.",
            ]
        );
    }
}
