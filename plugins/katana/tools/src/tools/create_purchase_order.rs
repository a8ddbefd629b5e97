//! `create_purchase_order`: order materials or products from a supplier,
//! after the user confirms.
//!
//! The preview is computed here, reading only the lines' variants (E1, for
//! their SKUs): the total (Σ quantity × price, before tax), the status the
//! order will have (`NOT_RECEIVED`), the rows and warnings (a variant Katana
//! does not know among them). Confirmed, it sends E2 with `entity_type:
//! "regular"` and `order_created_date` now, and returns the new order's
//! rows with their ids: what `receive_purchase_order` takes.

use std::collections::{BTreeMap, HashMap};

use toolhost_sdk::http::Method;

use crate::api::{NewPurchaseOrder, NewPurchaseOrderRow, PurchaseOrder};
use crate::inputs::{Lines, check_not_empty, check_not_negative, check_positive, now_iso, round};
use crate::mutation::{Report, approve};
use crate::prelude::*;
use crate::tools::find_order::{OrderRow, purchase_rows, skus};

/// The currency pattern: an ISO 4217 code.
pub const CURRENCY_PATTERN: &str = "^[A-Z]{3}$";

/// Arguments of `create_purchase_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePurchaseOrderInput {
    /// Supplier ID: the Katana supplier the goods are ordered from.
    #[schemars(example = 4001, range(min = 1))]
    pub supplier_id: u64,
    /// Location ID where items will be received.
    #[schemars(example = 1, range(min = 1))]
    pub location_id: u64,
    /// Purchase order number, unique in Katana.
    #[schemars(example = &"PO-25-010", length(min = 1, max = 100))]
    pub order_number: String,
    /// Line items: an array of objects, one per variant ordered (a JSON string holding the array is accepted too).
    #[schemars(example = items_example(), extend("minItems" = 1, "maxItems" = 250))]
    pub items: Lines<PurchaseOrderItem>,
    /// Additional notes for the order.
    #[serde(default)]
    #[schemars(example = &"Deliver to the back door", length(max = 2000))]
    pub notes: Option<String>,
    /// Currency code (ISO 4217, e.g. USD, EUR); when absent Katana uses the supplier's.
    #[serde(default)]
    #[schemars(example = &"USD", regex(pattern = CURRENCY_PATTERN))]
    pub currency: Option<String>,
    /// If false (default), returns a preview and changes nothing. If true, asks the user to approve, then creates the order.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// One line of a new purchase order.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PurchaseOrderItem {
    /// Variant ID to purchase (search_items finds it by SKU).
    #[schemars(example = 5101, range(min = 1))]
    pub variant_id: u64,
    /// Quantity to order, greater than 0.
    #[schemars(example = 100, extend("exclusiveMinimum" = 0))]
    pub quantity: f64,
    /// Price per unit, before tax, in the order's currency.
    #[schemars(example = 2.5, range(min = 0))]
    pub price_per_unit: f64,
    /// Tax rate ID (optional).
    #[serde(default)]
    #[schemars(example = 1, range(min = 1))]
    pub tax_rate_id: Option<u64>,
    /// Purchase unit of measure, when the supplier sells in another unit than stock is kept in (optional).
    #[serde(default)]
    #[schemars(example = &"box", length(min = 1, max = 50))]
    pub purchase_uom: Option<String>,
    /// Conversion rate for the purchase unit: stock units per purchase unit (optional).
    #[serde(default)]
    #[schemars(example = 10, extend("exclusiveMinimum" = 0))]
    pub purchase_uom_conversion_rate: Option<f64>,
    /// Expected arrival date, ISO 8601 (optional).
    #[serde(default)]
    #[schemars(example = &"2025-11-20T00:00:00.000Z", length(min = 10, max = 40))]
    pub arrival_date: Option<String>,
}

fn items_example() -> serde_json::Value {
    serde_json::json!([{"variant_id": 5101, "quantity": 100, "price_per_unit": 2.5}])
}

/// What `create_purchase_order` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CreatePurchaseOrderOutput {
    /// Katana's id of the new order (order_id in the other tools); null until created.
    pub id: Option<u64>,
    /// The order number.
    pub order_number: String,
    /// The order's status: NOT_RECEIVED for a new order.
    pub status: String,
    /// Σ quantity × price per unit, before tax.
    pub total_cost: f64,
    /// The currency; null in a preview without one (Katana then uses the supplier's).
    pub currency: Option<String>,
    /// The order's rows: once created, each with its id (purchase_order_row_id for receive_purchase_order); in a preview, the lines given, without ids.
    pub rows: Vec<OrderRow>,
    /// What happened, warnings and next steps.
    #[serde(flatten)]
    pub report: Report,
}

/// Creates a purchase order.
pub struct CreatePurchaseOrder;

impl Tool for CreatePurchaseOrder {
    type Input = CreatePurchaseOrderInput;
    type Output = CreatePurchaseOrderOutput;
    const NAME: &'static str = "create_purchase_order";
    const TITLE: &'static str = "Create Purchase Order";
    const DESCRIPTION: &'static str = "Create a Katana purchase order to buy materials or \
        products from a supplier. Use it when stock must be replenished; find variant ids with \
        search_items first. Two steps: with confirm=false (default) it returns a preview with \
        the total, the rows and warnings and changes nothing; with confirm=true the user is \
        asked to approve, and only then is the order created. The answer lists the new rows \
        with their ids, which receive_purchase_order takes as purchase_order_row_id.";
    const ANNOTATIONS: Annotations = Annotations::mutating(false, false);

    fn call(&self, input: CreatePurchaseOrderInput) -> Result<Self::Output, ToolError> {
        check(&input)?;
        let lines = input.items.as_slice();
        let total = total_cost(lines);
        let client = Client::from_config()?;
        let variant_ids: Vec<u64> = lines.iter().map(|l| l.variant_id).collect();
        let skus = skus(&client, &variant_ids)?;
        let mut warnings = warnings(&input);
        warnings.extend(unknown_variants(lines, &skus));
        let number = input.order_number.trim();
        let mut out = CreatePurchaseOrderOutput {
            id: None,
            order_number: number.to_string(),
            status: "NOT_RECEIVED".to_string(),
            total_cost: total,
            currency: input.currency.clone(),
            rows: lines
                .iter()
                .map(|l| OrderRow {
                    id: None,
                    variant_id: l.variant_id,
                    sku: skus.get(&l.variant_id).cloned(),
                    quantity: l.quantity,
                    price_per_unit: Some(l.price_per_unit),
                    received: Some(false),
                    received_date: None,
                })
                .collect(),
            report: Report::preview(
                format!(
                    "Preview: purchase order {number} with {} items totaling {total:.2}; nothing \
                     was created",
                    lines.len()
                ),
                warnings.clone(),
                vec![
                    "Call again with confirm=true to create it (the user is asked to approve)."
                        .to_string(),
                ],
            ),
        };
        let question = format!(
            "Create purchase order {number} with {} items totaling {total:.2}?",
            lines.len()
        );
        if !input.confirm {
            return Ok(out);
        }
        let action = format!("Purchase order {number} creation");
        if let Err(stopped) = approve(&client, &question, &action, &warnings) {
            out.report = stopped;
            return Ok(out);
        }

        let body = NewPurchaseOrder {
            order_no: number,
            entity_type: "regular",
            supplier_id: input.supplier_id,
            location_id: input.location_id,
            currency: input.currency.as_deref(),
            order_created_date: now_iso(),
            additional_info: input.notes.as_deref(),
            purchase_order_rows: lines
                .iter()
                .map(|l| NewPurchaseOrderRow {
                    variant_id: l.variant_id,
                    quantity: l.quantity,
                    price_per_unit: l.price_per_unit,
                    tax_rate_id: l.tax_rate_id,
                    purchase_uom: l.purchase_uom.as_deref(),
                    purchase_uom_conversion_rate: l.purchase_uom_conversion_rate,
                    arrival_date: l.arrival_date.as_deref(),
                })
                .collect(),
        };
        let (status_code, created): (u16, PurchaseOrder) = client.write_json(
            Method::Post,
            "/purchase_orders",
            &body,
            "such supplier, location or variant",
            &format!("Look for purchase order {number} in Katana"),
        )?;
        out.id = Some(created.id);
        if let Some(status) = created.status.clone() {
            out.status = status;
        }
        if created.currency.is_some() {
            out.currency = created.currency.clone();
        }
        if !created.purchase_order_rows.is_empty() {
            out.rows = purchase_rows(&created);
            for row in &mut out.rows {
                row.sku = skus.get(&row.variant_id).cloned();
            }
        }
        out.report = Report::done(
            status_code,
            format!(
                "Created purchase order {number} (id {}) totaling {total:.2}",
                created.id
            ),
            warnings,
            vec![format!(
                "When the goods arrive, check the supplier's document with \
                 verify_order_document and receive them with receive_purchase_order \
                 (order_id {}, the rows' ids as purchase_order_row_id); find_order reads the \
                 order again by id or number.",
                created.id
            )],
        );
        Ok(out)
    }
}

/// The checks the schema cannot make (a string-encoded items list skips it).
fn check(input: &CreatePurchaseOrderInput) -> Result<(), ToolError> {
    if input.order_number.trim().is_empty() {
        return Err(ToolError::validation("order_number is blank")
            .with_hint("give the purchase order a number, e.g. \"PO-25-010\""));
    }
    check_not_empty("items", &input.items)?;
    for line in input.items.as_slice() {
        check_positive("quantity", line.quantity)?;
        check_not_negative("price_per_unit", line.price_per_unit)?;
        if let Some(rate) = line.purchase_uom_conversion_rate {
            check_positive("purchase_uom_conversion_rate", rate)?;
        }
    }
    Ok(())
}

/// A warning for each line whose variant Katana does not know (`skus`
/// holds the ones it does).
fn unknown_variants(lines: &[PurchaseOrderItem], skus: &HashMap<u64, String>) -> Vec<String> {
    let mut unknown: Vec<u64> = lines
        .iter()
        .map(|l| l.variant_id)
        .filter(|id| !skus.contains_key(id))
        .collect();
    unknown.sort_unstable();
    unknown.dedup();
    unknown
        .into_iter()
        .map(|id| {
            format!(
                "Variant {id} is not in Katana (or has no SKU); search_items finds the right \
                 id by SKU or name."
            )
        })
        .collect()
}

/// Σ quantity × price per unit.
pub fn total_cost(lines: &[PurchaseOrderItem]) -> f64 {
    round(lines.iter().map(|l| l.quantity * l.price_per_unit).sum())
}

/// What the user should know before creating the order.
fn warnings(input: &CreatePurchaseOrderInput) -> Vec<String> {
    let mut warnings = Vec::new();
    if input.currency.is_none() {
        warnings.push(
            "No currency given: Katana will use the supplier's default currency.".to_string(),
        );
    }
    let mut lines_per_variant: BTreeMap<u64, usize> = BTreeMap::new();
    for line in input.items.as_slice() {
        *lines_per_variant.entry(line.variant_id).or_default() += 1;
    }
    for (variant, lines) in lines_per_variant.into_iter().filter(|(_, n)| *n > 1) {
        warnings.push(format!(
            "Variant {variant} is on {lines} lines; merge them unless that is intended."
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input(value: serde_json::Value) -> CreatePurchaseOrderInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_total_is_quantity_times_price_before_tax() {
        let i = input(
            json!({"supplier_id": 4001, "location_id": 1, "order_number": "PO-1",
            "items": [{"variant_id": 5101, "quantity": 100, "price_per_unit": 2.5, "tax_rate_id": 1},
                      {"variant_id": 5102, "quantity": 3, "price_per_unit": 0.1}]}),
        );
        assert_eq!(total_cost(i.items.as_slice()), 250.3);
    }

    #[test]
    fn warnings_cover_a_missing_currency_and_a_repeated_variant() {
        let i = input(
            json!({"supplier_id": 4001, "location_id": 1, "order_number": "PO-1",
            "items": [{"variant_id": 5101, "quantity": 1, "price_per_unit": 1},
                      {"variant_id": 5101, "quantity": 2, "price_per_unit": 1}]}),
        );
        let w = warnings(&i);
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("currency") && w[1].contains("Variant 5101 is on 2 lines"));
        let i = input(
            json!({"supplier_id": 4001, "location_id": 1, "order_number": "PO-1",
            "currency": "USD", "items": [{"variant_id": 5101, "quantity": 1, "price_per_unit": 1}]}),
        );
        assert!(warnings(&i).is_empty());
    }

    #[test]
    fn string_encoded_items_are_checked_like_arrays() {
        let i = input(
            json!({"supplier_id": 4001, "location_id": 1, "order_number": "PO-1",
            "items": "[{\"variant_id\": 5101, \"quantity\": 0, \"price_per_unit\": 1}]"}),
        );
        let e = check(&i).unwrap_err();
        assert!(e.message.contains("quantity"), "{e}");
        let i = input(
            json!({"supplier_id": 4001, "location_id": 1, "order_number": "PO-1",
            "items": "[]"}),
        );
        assert!(check(&i).unwrap_err().message.contains("items is empty"));
    }
}
