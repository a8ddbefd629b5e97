//! `find_order`: read one purchase, manufacturing or sales order, by id or
//! by number, with the row ids the other tools need.
//!
//! By id it reads E3, E6 or E8; by number it lists the kind's orders with
//! `order_no` set to the number (Katana matches it exactly). The variants
//! of the rows are then read by id (E1) so each row names its SKU.
//!
//! This is how a model gets from an order number on a document, or from
//! `create_purchase_order`'s answer, to the `purchase_order_row_id`s that
//! `receive_purchase_order` takes.

use std::collections::HashMap;

use crate::api::{self, ManufacturingOrder, PurchaseOrder, SalesOrder};
use crate::inputs::plain_enum;
use crate::prelude::*;

/// Arguments of `find_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindOrderInput {
    /// Which kind of order to read.
    #[schemars(example = &"purchase")]
    pub order_type: OrderKind,
    /// The order's id, when known (give this or order_number).
    #[serde(default)]
    #[schemars(example = 7001, range(min = 1))]
    pub order_id: Option<u64>,
    /// The order's number exactly as Katana holds it, e.g. PO-25-001 (give this or order_id).
    #[serde(default)]
    #[schemars(example = &"PO-25-001", length(min = 1, max = 100))]
    pub order_number: Option<String>,
}

/// The kinds of order Katana keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = plain_enum)]
pub enum OrderKind {
    /// A purchase order: goods bought from a supplier.
    Purchase,
    /// A manufacturing order: a product made from its recipe.
    Manufacturing,
    /// A sales order: goods sold to a customer.
    Sales,
}

impl OrderKind {
    /// The words for it in messages, e.g. `purchase order`.
    pub fn noun(self) -> &'static str {
        match self {
            OrderKind::Purchase => "purchase order",
            OrderKind::Manufacturing => "manufacturing order",
            OrderKind::Sales => "sales order",
        }
    }

    /// The list endpoint, e.g. `/purchase_orders`.
    fn path(self) -> &'static str {
        match self {
            OrderKind::Purchase => "/purchase_orders",
            OrderKind::Manufacturing => "/manufacturing_orders",
            OrderKind::Sales => "/sales_orders",
        }
    }
}

/// One row of a purchase or sales order.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OrderRow {
    /// The row's id: purchase_order_row_id when receiving a purchase order; null in a preview of a new order.
    pub id: Option<u64>,
    /// The variant on the row.
    pub variant_id: u64,
    /// The variant's SKU; null when Katana has none for it.
    pub sku: Option<String>,
    /// The quantity; on a purchase order row after a partial receipt, what is still open.
    pub quantity: f64,
    /// The price of one unit, when Katana gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_unit: Option<f64>,
    /// Purchase order rows: whether the row was received (a received row cannot be received again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<bool>,
    /// Purchase order rows: when it was received, ISO 8601.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received_date: Option<String>,
}

/// What `find_order` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FindOrderOutput {
    /// The order's id (order_id in the other tools).
    pub order_id: u64,
    /// Which kind of order.
    pub order_type: OrderKind,
    /// Its number, e.g. `PO-25-001`.
    pub order_number: String,
    /// Its status in Katana, e.g. NOT_RECEIVED, IN_PROGRESS or NOT_SHIPPED.
    pub status: String,
    /// Where it is received, made or shipped from, when Katana says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location_id: Option<u64>,
    /// Purchase and sales orders: the rows, in Katana's order.
    pub rows: Vec<OrderRow>,
    /// Manufacturing orders: the variant made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant_id: Option<u64>,
    /// Manufacturing orders: the SKU of the variant made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// Manufacturing orders: how many are planned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned_quantity: Option<f64>,
    /// Manufacturing orders: how many were made, once done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_quantity: Option<f64>,
    /// What can be done with the order next.
    pub next_actions: Vec<String>,
}

/// Reads one order by id or number.
pub struct FindOrder;

impl Tool for FindOrder {
    type Input = FindOrderInput;
    type Output = FindOrderOutput;
    const NAME: &'static str = "find_order";
    const TITLE: &'static str = "Find Order";
    const DESCRIPTION: &'static str = "Read one Katana purchase, manufacturing or sales order \
        by its id or its number, with its status and rows (row id, variant, SKU, quantity, \
        and for purchase orders whether each row was received). Use it to get the \
        purchase_order_row_id values receive_purchase_order needs, to turn an order number \
        from a document into an order_id, or to check an order before fulfill_order.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    /// A purchase order comes with itself as a Markdown document (contract
    /// 0.3): what a user forwards to a supplier or files, and what a model
    /// reads as a whole.
    fn content(&self, order: &FindOrderOutput) -> Vec<toolhost_sdk::Block> {
        if order.order_type != OrderKind::Purchase {
            return Vec::new();
        }
        vec![toolhost_sdk::Block::document(
            format!("katana://purchase-orders/{}", order.order_id),
            "text/markdown",
            purchase_order_document(order),
        )]
    }

    fn call(&self, input: FindOrderInput) -> Result<FindOrderOutput, ToolError> {
        let kind = input.order_type;
        let number = input
            .order_number
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty());
        let by = match (input.order_id, number) {
            (Some(id), None) => By::Id(id),
            (None, Some(number)) => By::Number(number),
            _ => {
                return Err(
                    ToolError::validation("give exactly one of order_id and order_number")
                        .with_hint(
                            "pass order_id (e.g. 7001) when you have it, else order_number (e.g. \
                     \"PO-25-001\")",
                        ),
                );
            }
        };
        let client = Client::from_config()?;
        let mut out = match kind {
            OrderKind::Purchase => from_purchase(fetch::<PurchaseOrder>(&client, kind, by)?),
            OrderKind::Manufacturing => {
                from_manufacturing(fetch::<ManufacturingOrder>(&client, kind, by)?)
            }
            OrderKind::Sales => from_sales(fetch::<SalesOrder>(&client, kind, by)?),
        };
        let mut variant_ids: Vec<u64> = out.rows.iter().map(|r| r.variant_id).collect();
        variant_ids.extend(out.variant_id);
        let skus = skus(&client, &variant_ids)?;
        for row in &mut out.rows {
            row.sku = skus.get(&row.variant_id).cloned();
        }
        out.sku = out.variant_id.and_then(|id| skus.get(&id).cloned());
        out.next_actions = next_actions(&out);
        Ok(out)
    }
}

/// How the order was named.
#[derive(Debug, Clone, Copy)]
enum By<'a> {
    Id(u64),
    Number(&'a str),
}

/// The order, by id (E3, E6, E8) or by number (the kind's list).
fn fetch<T: serde::de::DeserializeOwned>(
    client: &Client,
    kind: OrderKind,
    by: By<'_>,
) -> Result<T, ToolError> {
    match by {
        By::Id(id) => client.get(
            &format!("{}/{id}", kind.path()),
            &[],
            &format!("{} {id}", kind.noun()),
        ),
        By::Number(number) => client
            .all::<T>(kind.path(), &[("order_no", number.to_string())])?
            .into_iter()
            .next()
            .ok_or_else(|| {
                ToolError::not_found(format!("Katana has no {} numbered {number:?}", kind.noun()))
                    .with_hint(format!(
                        "Check the number: it must match exactly (e.g. {}), or pass order_id \
                         instead.",
                        example_number(kind)
                    ))
            }),
    }
}

/// A seed-shaped example number for `kind`.
fn example_number(kind: OrderKind) -> &'static str {
    match kind {
        OrderKind::Purchase => "PO-25-001",
        OrderKind::Manufacturing => "MO-25-001",
        OrderKind::Sales => "SO-25-001",
    }
}

/// The SKU of each of `ids` that Katana knows.
pub(crate) fn skus(client: &Client, ids: &[u64]) -> Result<HashMap<u64, String>, ToolError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(client
        .variants_by_id(ids)?
        .into_iter()
        .filter_map(|v| Some((v.id, v.sku?)))
        .collect())
}

/// The number an order goes by: its own, or `prefix-id`.
fn number_of(order_no: &Option<String>, prefix: &str, id: u64) -> String {
    order_no
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("{prefix}-{id}"))
}

/// The rows of a purchase order, as the tools report them (SKUs not yet known).
pub(crate) fn purchase_rows(order: &PurchaseOrder) -> Vec<OrderRow> {
    order
        .purchase_order_rows
        .iter()
        .map(|r| OrderRow {
            id: Some(r.id),
            variant_id: r.variant_id,
            sku: None,
            quantity: r.quantity,
            price_per_unit: r.price_per_unit,
            received: Some(r.received_date.is_some()),
            received_date: r.received_date.clone(),
        })
        .collect()
}

fn from_purchase(order: PurchaseOrder) -> FindOrderOutput {
    FindOrderOutput {
        order_id: order.id,
        order_type: OrderKind::Purchase,
        order_number: number_of(&order.order_no, "PO", order.id),
        status: order.status.clone().unwrap_or_default(),
        location_id: None,
        rows: purchase_rows(&order),
        variant_id: None,
        sku: None,
        planned_quantity: None,
        actual_quantity: None,
        next_actions: Vec::new(),
    }
}

fn from_manufacturing(order: ManufacturingOrder) -> FindOrderOutput {
    FindOrderOutput {
        order_id: order.id,
        order_type: OrderKind::Manufacturing,
        order_number: number_of(&order.order_no, "MO", order.id),
        status: order.status.unwrap_or_default(),
        location_id: order.location_id,
        rows: Vec::new(),
        variant_id: order.variant_id,
        sku: None,
        planned_quantity: order.planned_quantity,
        actual_quantity: order.actual_quantity,
        next_actions: Vec::new(),
    }
}

fn from_sales(order: SalesOrder) -> FindOrderOutput {
    FindOrderOutput {
        order_id: order.id,
        order_type: OrderKind::Sales,
        order_number: number_of(&order.order_no, "SO", order.id),
        status: order.status.unwrap_or_default(),
        location_id: order.location_id,
        rows: order
            .sales_order_rows
            .iter()
            .map(|r: &api::SalesOrderRow| OrderRow {
                id: Some(r.id),
                variant_id: r.variant_id,
                sku: None,
                quantity: r.quantity,
                price_per_unit: None,
                received: None,
                received_date: None,
            })
            .collect(),
        variant_id: None,
        sku: None,
        planned_quantity: None,
        actual_quantity: None,
        next_actions: Vec::new(),
    }
}

/// What the model can do next with `order`.
fn next_actions(order: &FindOrderOutput) -> Vec<String> {
    let id = order.order_id;
    match order.order_type {
        OrderKind::Purchase if order.rows.iter().any(|r| r.received == Some(false)) => vec![
            format!(
                "Receive open rows with receive_purchase_order (order_id {id}, each row's id as \
                 purchase_order_row_id, at most its quantity)."
            ),
            format!(
                "Check a supplier's document against it with verify_order_document (order_id {id})."
            ),
        ],
        OrderKind::Purchase => vec![format!(
            "Purchase order {} is fully received.",
            order.order_number
        )],
        OrderKind::Manufacturing if order.status != "DONE" => vec![format!(
            "Complete it with fulfill_order (order_id {id}, order_type manufacturing) when \
             production is finished."
        )],
        OrderKind::Sales if order.status == "NOT_SHIPPED" => vec![format!(
            "Ship it with fulfill_order (order_id {id}, order_type sales)."
        )],
        _ => Vec::new(),
    }
}

/// A purchase order as a Markdown document: its number, status and rows.
pub fn purchase_order_document(order: &FindOrderOutput) -> String {
    let mut doc = format!(
        "# Purchase order {}\n\nKatana id {} · status {}",
        order.order_number, order.order_id, order.status
    );
    if let Some(location) = order.location_id {
        doc.push_str(&format!(" · location {location}"));
    }
    doc.push_str(
        "\n\n| SKU | variant | quantity | price per unit | received |\n|---|---|---|---|---|\n",
    );
    let mut total = 0.0;
    for row in &order.rows {
        let price = row
            .price_per_unit
            .map_or("-".to_string(), |p| format!("{p:.2}"));
        total += row.quantity * row.price_per_unit.unwrap_or(0.0);
        doc.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            row.sku.as_deref().unwrap_or("-"),
            row.variant_id,
            row.quantity,
            price,
            match row.received {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            }
        ));
    }
    doc.push_str(&format!("\nTotal before tax: {total:.2}\n"));
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PurchaseOrderRow;

    #[test]
    fn purchase_rows_say_which_are_received() {
        let order = PurchaseOrder {
            id: 7003,
            order_no: Some("PO-25-003".into()),
            status: Some("PARTIALLY_RECEIVED".into()),
            currency: None,
            purchase_order_rows: vec![
                PurchaseOrderRow {
                    id: 7105,
                    variant_id: 5101,
                    quantity: 100.0,
                    price_per_unit: Some(2.5),
                    received_date: None,
                },
                PurchaseOrderRow {
                    id: 7106,
                    variant_id: 5101,
                    quantity: 50.0,
                    price_per_unit: Some(2.5),
                    received_date: Some("2025-01-02T00:00:00.000Z".into()),
                },
            ],
        };
        let out = from_purchase(order);
        assert_eq!(
            out.rows
                .iter()
                .map(|r| (r.id, r.received))
                .collect::<Vec<_>>(),
            [(Some(7105), Some(false)), (Some(7106), Some(true))]
        );
        assert!(next_actions(&out)[0].contains("purchase_order_row_id"));
    }

    #[test]
    fn orders_without_a_number_go_by_their_id() {
        assert_eq!(number_of(&None, "MO", 2001), "MO-2001");
        assert_eq!(number_of(&Some(" ".into()), "SO", 3), "SO-3");
        assert_eq!(number_of(&Some("PO-1".into()), "PO", 3), "PO-1");
    }
}
