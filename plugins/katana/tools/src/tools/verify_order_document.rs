//! `verify_order_document`: check a supplier document (packing slip,
//! invoice) against a purchase order.
//!
//! Reads the order (E3) and the SKUs of all its rows' variants (E1 with
//! every variant id). SKUs match trimmed, in any case. The rows of one
//! variant are summed, since a partial receipt splits a row in two; their
//! price is the quantity-weighted mean (the one price when all agree).
//! Quantities and prices differ when they are more than 0.01 apart.

use std::collections::HashMap;

use crate::api::PurchaseOrder;
use crate::inputs::{Lines, check_not_empty, check_not_negative, num, plain_enum};
use crate::prelude::*;

/// How far apart two quantities or prices may be and still agree.
pub const TOLERANCE: f64 = 0.01;

/// Arguments of `verify_order_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyOrderDocumentInput {
    /// The purchase order's id (not its number): the id create_purchase_order returned.
    #[schemars(example = 7001, range(min = 1))]
    pub order_id: u64,
    /// The document's lines: an array of objects (a JSON string holding the array is accepted too).
    #[schemars(example = document_example(), extend("minItems" = 1, "maxItems" = 500))]
    pub document_items: Lines<DocumentItem>,
}

/// One line of the supplier's document.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentItem {
    /// The SKU as printed on the document; matched trimmed and in any case.
    #[schemars(example = &"STL-BLANK-8", length(min = 1, max = 200))]
    pub sku: String,
    /// The quantity on the document.
    #[schemars(example = 200, range(min = 0))]
    pub quantity: f64,
    /// The unit price on the document, if it shows one; prices are compared only when given.
    #[serde(default)]
    #[schemars(example = 2.5, range(min = 0))]
    pub unit_price: Option<f64>,
}

fn document_example() -> serde_json::Value {
    serde_json::json!([{"sku": "STL-BLANK-8", "quantity": 200, "unit_price": 2.5}])
}

/// The verdict on the whole document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = plain_enum)]
pub enum OverallStatus {
    /// Every line matches and nothing is missing.
    Match,
    /// Some lines match; see discrepancies.
    PartialMatch,
    /// No line matches the order (or the order has no rows).
    NoMatch,
}

/// How one matched line compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = plain_enum)]
pub enum LineStatus {
    /// Quantity and price agree.
    Perfect,
    /// The quantity differs.
    QuantityDiff,
    /// The price differs.
    PriceDiff,
    /// Both differ.
    BothDiff,
}

/// What kind of difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = plain_enum)]
pub enum DiscrepancyKind {
    /// The document's quantity is not the order's.
    QuantityMismatch,
    /// The document's price is not the order's.
    PriceMismatch,
    /// The document lists an SKU the order does not have.
    MissingInPo,
    /// The order has an SKU the document does not list.
    MissingInDocument,
}

/// What `verify_order_document` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VerifyOrderDocumentOutput {
    /// The purchase order's id.
    pub order_id: u64,
    /// Its number, e.g. `PO-25-001`.
    pub order_no: Option<String>,
    /// The verdict.
    pub overall_status: OverallStatus,
    /// The document lines found on the order, with their own quantity and price.
    pub matches: Vec<LineMatch>,
    /// Every difference, expected (the order) against actual (the document).
    pub discrepancies: Vec<Discrepancy>,
    /// What to do next.
    pub suggested_actions: Vec<String>,
}

/// A document line found on the order.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LineMatch {
    /// The SKU, as the document gave it (trimmed).
    pub sku: String,
    /// The document's quantity.
    pub quantity: f64,
    /// The document's unit price, if given.
    pub unit_price: Option<f64>,
    /// How it compares with the order.
    pub status: LineStatus,
}

/// One difference between the document and the order.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Discrepancy {
    /// The SKU (`variant <id>` for an order row whose variant has none).
    pub sku: String,
    /// What kind of difference.
    #[serde(rename = "type")]
    pub kind: DiscrepancyKind,
    /// The order's value: its quantity or price; null when the order lacks the SKU.
    pub expected: Option<f64>,
    /// The document's value; null when the document lacks the SKU.
    pub actual: Option<f64>,
    /// The difference in words.
    pub message: String,
}

/// Checks a supplier document against a purchase order.
pub struct VerifyOrderDocument;

impl Tool for VerifyOrderDocument {
    type Input = VerifyOrderDocumentInput;
    type Output = VerifyOrderDocumentOutput;
    const NAME: &'static str = "verify_order_document";
    const TITLE: &'static str = "Verify Order Document";
    const DESCRIPTION: &'static str = "Compare a supplier document (packing slip, delivery note \
        or invoice) with a Katana purchase order, line by line by SKU, and list every quantity \
        and price difference and every item missing on either side. Use it when goods or an \
        invoice arrive, before receive_purchase_order, to see whether the delivery matches \
        what was ordered.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn call(&self, input: VerifyOrderDocumentInput) -> Result<Self::Output, ToolError> {
        check_not_empty("document_items", &input.document_items)?;
        for item in input.document_items.as_slice() {
            if item.sku.trim().is_empty() {
                return Err(ToolError::validation("a document item has a blank sku")
                    .with_hint("give every document item the SKU printed on the document"));
            }
            check_not_negative("quantity", item.quantity)?;
            if let Some(price) = item.unit_price {
                check_not_negative("unit_price", price)?;
            }
        }
        let client = Client::from_config()?;
        let order = client.purchase_order(input.order_id)?;
        let ids: Vec<u64> = order
            .purchase_order_rows
            .iter()
            .map(|r| r.variant_id)
            .collect();
        let skus: HashMap<u64, String> = if ids.is_empty() {
            HashMap::new()
        } else {
            client
                .variants_by_id(&ids)?
                .into_iter()
                .filter_map(|v| Some((v.id, v.sku?)))
                .collect()
        };
        Ok(verify(&order, &skus, input.document_items.as_slice()))
    }
}

/// One variant's rows on the order, summed.
struct Ordered {
    sku: String,
    /// Whether `sku` is the variant's (not a placeholder).
    known: bool,
    quantity: f64,
    price: Option<f64>,
    matched: bool,
}

/// Compares `document` with `order`, whose variants' SKUs are `skus`.
pub fn verify(
    order: &PurchaseOrder,
    skus: &HashMap<u64, String>,
    document: &[DocumentItem],
) -> VerifyOrderDocumentOutput {
    let number = order
        .order_no
        .clone()
        .unwrap_or_else(|| format!("purchase order {}", order.id));

    // Sum the rows of each variant, in the order's row order.
    let mut ordered: Vec<Ordered> = Vec::new();
    let mut priced: Vec<(f64, f64)> = Vec::new(); // (Σ qty × price, Σ qty of priced rows)
    let mut index: HashMap<u64, usize> = HashMap::new();
    for row in &order.purchase_order_rows {
        let i = *index.entry(row.variant_id).or_insert_with(|| {
            let sku = skus.get(&row.variant_id);
            ordered.push(Ordered {
                known: sku.is_some(),
                sku: sku
                    .cloned()
                    .unwrap_or_else(|| format!("variant {}", row.variant_id)),
                quantity: 0.0,
                price: None,
                matched: false,
            });
            priced.push((0.0, 0.0));
            ordered.len() - 1
        });
        ordered[i].quantity += row.quantity;
        if let Some(price) = row.price_per_unit {
            priced[i].0 += row.quantity * price;
            priced[i].1 += row.quantity;
            ordered[i].price = Some(price);
        }
    }
    for (entry, (amount, quantity)) in ordered.iter_mut().zip(&priced) {
        if *quantity > 0.0 && entry.price.is_some() {
            entry.price = Some(amount / quantity);
        }
    }
    let by_sku: HashMap<String, usize> = ordered
        .iter()
        .enumerate()
        .filter(|(_, o)| o.known)
        .map(|(i, o)| (normalize(&o.sku), i))
        .collect();

    let mut matches = Vec::new();
    let mut discrepancies = Vec::new();
    for item in document {
        let sku = item.sku.trim().to_string();
        let Some(&i) = by_sku.get(&normalize(&sku)) else {
            discrepancies.push(Discrepancy {
                message: format!("{sku} is on the document but not on {number}"),
                sku,
                kind: DiscrepancyKind::MissingInPo,
                expected: None,
                actual: Some(item.quantity),
            });
            continue;
        };
        let entry = &mut ordered[i];
        entry.matched = true;
        let quantity_differs = differs(entry.quantity, item.quantity);
        if quantity_differs {
            discrepancies.push(Discrepancy {
                sku: entry.sku.clone(),
                kind: DiscrepancyKind::QuantityMismatch,
                expected: Some(entry.quantity),
                actual: Some(item.quantity),
                message: format!(
                    "{}: the document says {}, the order says {}",
                    entry.sku,
                    num(item.quantity),
                    num(entry.quantity)
                ),
            });
        }
        let price_differs = match (entry.price, item.unit_price) {
            (Some(expected), Some(actual)) if differs(expected, actual) => {
                discrepancies.push(Discrepancy {
                    sku: entry.sku.clone(),
                    kind: DiscrepancyKind::PriceMismatch,
                    expected: Some(expected),
                    actual: Some(actual),
                    message: format!(
                        "{}: the document's unit price is {}, the order's {}",
                        entry.sku,
                        num(actual),
                        num(expected)
                    ),
                });
                true
            }
            _ => false,
        };
        matches.push(LineMatch {
            sku,
            quantity: item.quantity,
            unit_price: item.unit_price,
            status: match (quantity_differs, price_differs) {
                (false, false) => LineStatus::Perfect,
                (true, false) => LineStatus::QuantityDiff,
                (false, true) => LineStatus::PriceDiff,
                (true, true) => LineStatus::BothDiff,
            },
        });
    }
    for entry in ordered.iter().filter(|o| !o.matched) {
        discrepancies.push(Discrepancy {
            sku: entry.sku.clone(),
            kind: DiscrepancyKind::MissingInDocument,
            expected: Some(entry.quantity),
            actual: None,
            message: format!(
                "{} ({} ordered) is on {number} but not on the document",
                entry.sku,
                num(entry.quantity)
            ),
        });
    }

    let overall_status = if matches.is_empty() || ordered.is_empty() {
        OverallStatus::NoMatch
    } else if discrepancies.is_empty() {
        OverallStatus::Match
    } else {
        OverallStatus::PartialMatch
    };
    let suggested_actions = suggest(overall_status, &discrepancies, &number, order.id);
    VerifyOrderDocumentOutput {
        order_id: order.id,
        order_no: order.order_no.clone(),
        overall_status,
        matches,
        discrepancies,
        suggested_actions,
    }
}

/// What to do about the verdict.
fn suggest(
    status: OverallStatus,
    discrepancies: &[Discrepancy],
    number: &str,
    order_id: u64,
) -> Vec<String> {
    if status == OverallStatus::NoMatch {
        return vec![format!(
            "Nothing on the document matches {number}: check that order_id {order_id} is the \
             right purchase order and that the SKUs are Katana's (search_items finds them)."
        )];
    }
    if status == OverallStatus::Match {
        return vec![format!(
            "The document matches {number}: receive the goods with receive_purchase_order \
             (order_id {order_id})."
        )];
    }
    let has = |kind| discrepancies.iter().any(|d| d.kind == kind);
    let mut actions = Vec::new();
    if has(DiscrepancyKind::QuantityMismatch) {
        actions.push(
            "Confirm the quantity differences with the supplier, and receive only what arrived \
             with receive_purchase_order."
                .to_string(),
        );
    }
    if has(DiscrepancyKind::PriceMismatch) {
        actions.push(
            "Check the price differences against the agreed prices before approving the invoice."
                .to_string(),
        );
    }
    if has(DiscrepancyKind::MissingInPo) {
        actions.push(
            "Ask the supplier about the items that are not on the order; they may belong to \
             another purchase order."
                .to_string(),
        );
    }
    if has(DiscrepancyKind::MissingInDocument) {
        actions.push(
            "Items missing from the document may come in a later delivery; receive only what \
             arrived."
                .to_string(),
        );
    }
    actions
}

/// An SKU as compared: trimmed, lowercase.
fn normalize(sku: &str) -> String {
    sku.trim().to_lowercase()
}

/// Whether two values are more than [`TOLERANCE`] apart.
fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > TOLERANCE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PurchaseOrderRow;

    fn row(id: u64, variant_id: u64, quantity: f64, price: f64) -> PurchaseOrderRow {
        PurchaseOrderRow {
            id,
            variant_id,
            quantity,
            price_per_unit: Some(price),
            received_date: None,
        }
    }

    fn order(rows: Vec<PurchaseOrderRow>) -> PurchaseOrder {
        PurchaseOrder {
            id: 7001,
            order_no: Some("PO-25-001".into()),
            status: Some("NOT_RECEIVED".into()),
            currency: None,
            purchase_order_rows: rows,
        }
    }

    fn skus() -> HashMap<u64, String> {
        [
            (5101, "STL-BLANK-8"),
            (5102, "WAL-SCALE"),
            (5103, "RIV-BRASS-3MM"),
        ]
        .into_iter()
        .map(|(id, s)| (id, s.to_string()))
        .collect()
    }

    fn doc(sku: &str, quantity: f64, price: Option<f64>) -> DocumentItem {
        DocumentItem {
            sku: sku.into(),
            quantity,
            unit_price: price,
        }
    }

    #[test]
    fn a_perfect_document_matches() {
        let po = order(vec![row(1, 5101, 200.0, 2.5), row(2, 5102, 100.0, 4.0)]);
        let out = verify(
            &po,
            &skus(),
            &[
                doc(" stl-blank-8 ", 200.0, Some(2.5)),
                doc("WAL-SCALE", 100.005, None),
            ],
        );
        assert_eq!(out.overall_status, OverallStatus::Match);
        assert!(out.discrepancies.is_empty());
        assert_eq!(out.matches[0].sku, "stl-blank-8");
        assert!(out.matches.iter().all(|m| m.status == LineStatus::Perfect));
        assert!(out.suggested_actions[0].contains("receive_purchase_order"));
    }

    #[test]
    fn split_rows_of_one_variant_are_summed() {
        // A partial receipt left 150 open and 50 received, same price.
        let po = order(vec![row(1, 5101, 150.0, 2.5), row(3, 5101, 50.0, 2.5)]);
        let out = verify(&po, &skus(), &[doc("STL-BLANK-8", 200.0, Some(2.5))]);
        assert_eq!(out.overall_status, OverallStatus::Match);
        // Differing prices average by quantity.
        let po = order(vec![row(1, 5101, 100.0, 2.0), row(2, 5101, 100.0, 3.0)]);
        let out = verify(&po, &skus(), &[doc("STL-BLANK-8", 200.0, Some(2.5))]);
        assert_eq!(out.overall_status, OverallStatus::Match);
    }

    #[test]
    fn every_kind_of_difference_is_reported() {
        let po = order(vec![
            row(1, 5101, 200.0, 2.5),
            row(2, 5102, 100.0, 4.0),
            row(3, 5103, 500.0, 0.1),
        ]);
        let out = verify(
            &po,
            &skus(),
            &[
                doc("STL-BLANK-8", 190.0, Some(2.75)),
                doc("WAL-SCALE", 100.0, Some(4.5)),
                doc("GLUE-1", 3.0, None),
            ],
        );
        assert_eq!(out.overall_status, OverallStatus::PartialMatch);
        let statuses: Vec<LineStatus> = out.matches.iter().map(|m| m.status).collect();
        assert_eq!(statuses, [LineStatus::BothDiff, LineStatus::PriceDiff]);
        let kinds: Vec<(&str, DiscrepancyKind, Option<f64>, Option<f64>)> = out
            .discrepancies
            .iter()
            .map(|d| (d.sku.as_str(), d.kind, d.expected, d.actual))
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    "STL-BLANK-8",
                    DiscrepancyKind::QuantityMismatch,
                    Some(200.0),
                    Some(190.0)
                ),
                (
                    "STL-BLANK-8",
                    DiscrepancyKind::PriceMismatch,
                    Some(2.5),
                    Some(2.75)
                ),
                (
                    "WAL-SCALE",
                    DiscrepancyKind::PriceMismatch,
                    Some(4.0),
                    Some(4.5)
                ),
                ("GLUE-1", DiscrepancyKind::MissingInPo, None, Some(3.0)),
                (
                    "RIV-BRASS-3MM",
                    DiscrepancyKind::MissingInDocument,
                    Some(500.0),
                    None
                ),
            ]
        );
        assert_eq!(out.suggested_actions.len(), 4);
        assert_eq!(
            out.discrepancies[0].message,
            "STL-BLANK-8: the document says 190, the order says 200"
        );
    }

    #[test]
    fn nothing_matching_or_no_rows_is_no_match() {
        let po = order(vec![row(1, 5101, 200.0, 2.5)]);
        let out = verify(&po, &skus(), &[doc("OTHER", 1.0, None)]);
        assert_eq!(out.overall_status, OverallStatus::NoMatch);
        assert_eq!(out.discrepancies.len(), 2);
        let out = verify(&order(vec![]), &skus(), &[doc("STL-BLANK-8", 1.0, None)]);
        assert_eq!(out.overall_status, OverallStatus::NoMatch);
        assert!(out.suggested_actions[0].contains("order_id 7001"));
    }

    #[test]
    fn a_row_whose_variant_has_no_sku_cannot_match_by_its_placeholder() {
        let po = order(vec![row(1, 9999, 5.0, 1.0)]);
        let out = verify(&po, &skus(), &[doc("variant 9999", 5.0, None)]);
        assert_eq!(out.overall_status, OverallStatus::NoMatch);
        assert_eq!(out.discrepancies[1].sku, "variant 9999");
    }
}
