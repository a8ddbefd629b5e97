//! `fulfill_order`: complete a manufacturing order or ship a sales order,
//! after the user confirms.
//!
//! * **Manufacturing** (E6, then E7 `{"status":"DONE"}`): Katana adds the
//!   made quantity to stock and consumes the recipe. An order already DONE
//!   is reported as such, without asking or writing; a BLOCKED one gets a
//!   warning.
//! * **Sales** (E8, then E9 with `status: "DELIVERED"` and every row at
//!   full quantity): Katana lowers stock. Only a NOT_SHIPPED order
//!   proceeds; any other is a warning in a preview and a `CONFLICT` when
//!   confirming, before anyone is asked.
//!
//! `inventory_updates` lists the real stock changes as `+20 KNF-8IN-BLK
//! @1` (quantity, SKU, location id): expected ones in a preview, Katana's
//! once done.

use std::collections::HashMap;

use toolhost_sdk::ErrorCode;
use toolhost_sdk::http::Method;

use crate::api::{
    Fulfillment, FulfillmentRow, ManufacturingOrder, NewFulfillment, SalesOrder, Variant,
};
use crate::inputs::{num, plain_enum};
use crate::mutation::{Report, approve};
use crate::prelude::*;

/// Arguments of `fulfill_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FulfillOrderInput {
    /// The order's id (not its number): a manufacturing order's or a sales order's, as order_type says.
    #[schemars(example = 2001, range(min = 1))]
    pub order_id: u64,
    /// Which kind of order order_id is.
    #[schemars(example = &"manufacturing")]
    pub order_type: OrderType,
    /// If false (default), returns a preview and changes nothing. If true, asks the user to approve, then fulfills the order.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// The kinds of order this tool fulfills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = plain_enum)]
pub enum OrderType {
    /// A manufacturing order: mark it DONE, adding what it made to stock.
    Manufacturing,
    /// A sales order: deliver every row, taking it out of stock.
    Sales,
}

/// What `fulfill_order` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FulfillOrderOutput {
    /// The order's id.
    pub order_id: u64,
    /// Which kind of order.
    pub order_type: OrderType,
    /// Its number, e.g. `MO-25-001` or `SO-25-001`.
    pub order_number: String,
    /// Its status in Katana: now (in a preview) or after fulfilling.
    pub status: String,
    /// Stock changes as `+20 KNF-8IN-BLK @1` (quantity, SKU, location id): expected in a preview, made once fulfilled.
    pub inventory_updates: Vec<String>,
    /// The id of the fulfillment Katana created for a sales order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fulfillment_id: Option<u64>,
    /// What happened, warnings and next steps.
    #[serde(flatten)]
    pub report: Report,
}

/// Completes a manufacturing order or delivers a sales order.
pub struct FulfillOrder;

impl Tool for FulfillOrder {
    type Input = FulfillOrderInput;
    type Output = FulfillOrderOutput;
    const NAME: &'static str = "fulfill_order";
    const TITLE: &'static str = "Fulfill Order";
    const DESCRIPTION: &'static str = "Fulfill a Katana order: mark a manufacturing order DONE \
        (adding what it made to stock) or deliver every row of a sales order (taking it out of \
        stock). Use it when production is finished or a customer's order ships. Two steps: \
        with confirm=false (default) it returns a preview with the stock changes and changes \
        nothing; with confirm=true the user is asked to approve, and only then is the order \
        fulfilled.";
    const ANNOTATIONS: Annotations = Annotations::mutating(true, false);

    fn call(&self, input: FulfillOrderInput) -> Result<Self::Output, ToolError> {
        let client = Client::from_config()?;
        match input.order_type {
            OrderType::Manufacturing => manufacturing(&client, input.order_id, input.confirm),
            OrderType::Sales => sales(&client, input.order_id, input.confirm),
        }
    }
}

const PREVIEW_NEXT: &str =
    "Call again with confirm=true to fulfill it (the user is asked to approve).";

/// The manufacturing flow.
fn manufacturing(client: &Client, id: u64, confirm: bool) -> Result<FulfillOrderOutput, ToolError> {
    let order = client.manufacturing_order(id)?;
    let number = order
        .order_no
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("MO-{id}"));
    let status = order.status.clone().unwrap_or_default();
    let variants = variants(client, order.variant_id.into_iter().collect())?;
    let done = status == "DONE";
    let mut warnings = Vec::new();
    if done {
        warnings.push(format!(
            "Manufacturing order {number} is already completed."
        ));
    } else if status == "BLOCKED" {
        warnings.push(format!(
            "Manufacturing order {number} is blocked - review before completing."
        ));
    }
    let expected = if done {
        Vec::new()
    } else {
        made(&order, order.planned_quantity, &variants)
    };
    let mut out = FulfillOrderOutput {
        order_id: id,
        order_type: OrderType::Manufacturing,
        order_number: number.clone(),
        status,
        inventory_updates: expected,
        fulfillment_id: None,
        report: Report::preview(
            if done {
                format!("Manufacturing order {number} is already completed; nothing to do")
            } else {
                format!("Preview: mark manufacturing order {number} as DONE; nothing was changed")
            },
            warnings.clone(),
            if done {
                Vec::new()
            } else {
                vec![PREVIEW_NEXT.to_string()]
            },
        ),
    };
    if !confirm {
        return Ok(out);
    }
    if done {
        out.report = Report::unchanged(
            format!("Manufacturing order {number} is already completed; nothing was changed"),
            warnings,
        );
        return Ok(out);
    }
    let question = format!("Mark manufacturing order {number} as DONE and update inventory?");
    let action = format!("Completion of manufacturing order {number}");
    if let Err(stopped) = approve(client, &question, &action, &warnings) {
        out.report = stopped;
        return Ok(out);
    }
    let (status_code, updated): (u16, ManufacturingOrder) = client.write_json(
        Method::Patch,
        &format!("/manufacturing_orders/{id}"),
        &serde_json::json!({"status": "DONE"}),
        &format!("manufacturing order {id}"),
        &format!("Read manufacturing order {number} (its status)"),
    )?;
    out.status = updated.status.clone().unwrap_or_else(|| "DONE".to_string());
    let quantity = updated
        .actual_quantity
        .or(updated.planned_quantity)
        .or(order.planned_quantity);
    // The answer may leave out fields the order had; fill them from before.
    let merged = ManufacturingOrder {
        variant_id: updated.variant_id.or(order.variant_id),
        location_id: updated.location_id.or(order.location_id),
        ..updated
    };
    out.inventory_updates = made(&merged, quantity, &variants);
    out.report = Report::done(
        status_code,
        format!("Manufacturing order {number} is DONE; its stock was added"),
        Vec::new(),
        vec![
            "Materials in the product's recipe were consumed; search_items finds the products \
             made, and a new create_manufacturing_order plans more."
                .to_string(),
        ],
    );
    Ok(out)
}

/// The sales flow.
fn sales(client: &Client, id: u64, confirm: bool) -> Result<FulfillOrderOutput, ToolError> {
    let order = client.sales_order(id)?;
    let number = order
        .order_no
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("SO-{id}"));
    let status = order.status.clone().unwrap_or_default();
    let variants = variants(
        client,
        order
            .sales_order_rows
            .iter()
            .map(|r| r.variant_id)
            .collect(),
    )?;
    let open = status == "NOT_SHIPPED";
    let mut warnings = Vec::new();
    if !open {
        warnings.push(format!(
            "Sales order {number} is {status}; only NOT_SHIPPED orders can be fulfilled here."
        ));
    } else if order.sales_order_rows.is_empty() {
        warnings.push(format!("Sales order {number} has no rows to deliver."));
    }
    let mut out = FulfillOrderOutput {
        order_id: id,
        order_type: OrderType::Sales,
        order_number: number.clone(),
        status: status.clone(),
        inventory_updates: if open {
            shipped(&order, &variants)
        } else {
            Vec::new()
        },
        fulfillment_id: None,
        report: Report::preview(
            format!("Preview: deliver every row of sales order {number}; nothing was changed"),
            warnings.clone(),
            if warnings.is_empty() {
                vec![PREVIEW_NEXT.to_string()]
            } else {
                Vec::new()
            },
        ),
    };
    if !confirm {
        return Ok(out);
    }
    if !open || order.sales_order_rows.is_empty() {
        return Err(ToolError::new(
            ErrorCode::Conflict,
            warnings.first().cloned().unwrap_or_default(),
        )
        .with_hint(
            "Nothing was changed. A sales order that is already packed or delivered is \
             handled in Katana itself.",
        ));
    }
    let question = format!("Create fulfillment for sales order {number} and update inventory?");
    let action = format!("Fulfillment of sales order {number}");
    if let Err(stopped) = approve(client, &question, &action, &warnings) {
        out.report = stopped;
        return Ok(out);
    }
    let body = NewFulfillment {
        sales_order_id: id,
        status: "DELIVERED",
        sales_order_fulfillment_rows: order
            .sales_order_rows
            .iter()
            .map(|r| FulfillmentRow {
                sales_order_row_id: r.id,
                quantity: r.quantity,
            })
            .collect(),
    };
    let response = client.write(
        Method::Post,
        "/sales_order_fulfillments",
        &body,
        &format!("sales order {id}"),
        &format!("Read sales order {number} (its status)"),
    )?;
    // Any 2xx is success; the answer's body is read when there is one.
    let fulfillment: Fulfillment = serde_json::from_slice(&response.body).unwrap_or_default();
    out.status = fulfillment
        .status
        .unwrap_or_else(|| "DELIVERED".to_string());
    out.fulfillment_id = fulfillment.id;
    out.report = Report::done(
        response.status,
        format!(
            "Sales order {number} is {}; its stock was taken out",
            out.status
        ),
        Vec::new(),
        Vec::new(),
    );
    Ok(out)
}

/// The variants `ids`, by id.
fn variants(client: &Client, ids: Vec<u64>) -> Result<HashMap<u64, Variant>, ToolError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(client
        .variants_by_id(&ids)?
        .into_iter()
        .map(|v| (v.id, v))
        .collect())
}

/// `sign quantity SKU @location`, or nothing for a service (services keep
/// no stock).
fn update(
    sign: char,
    quantity: f64,
    variant_id: u64,
    location: Option<u64>,
    variants: &HashMap<u64, Variant>,
) -> Option<String> {
    let variant = variants.get(&variant_id);
    if variant.and_then(|v| v.kind.as_deref()) == Some("service") {
        return None;
    }
    let sku = variant
        .and_then(|v| v.sku.clone())
        .unwrap_or_else(|| format!("variant {variant_id}"));
    Some(match location {
        Some(location) => format!("{sign}{} {sku} @{location}", num(quantity)),
        None => format!("{sign}{} {sku}", num(quantity)),
    })
}

/// What a manufacturing order adds: `quantity` of its variant.
fn made(
    order: &ManufacturingOrder,
    quantity: Option<f64>,
    variants: &HashMap<u64, Variant>,
) -> Vec<String> {
    match (order.variant_id, quantity) {
        (Some(variant), Some(quantity)) => {
            update('+', quantity, variant, order.location_id, variants)
                .into_iter()
                .collect()
        }
        _ => Vec::new(),
    }
}

/// What delivering every row of a sales order takes out.
fn shipped(order: &SalesOrder, variants: &HashMap<u64, Variant>) -> Vec<String> {
    order
        .sales_order_rows
        .iter()
        .filter_map(|r| update('-', r.quantity, r.variant_id, order.location_id, variants))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::SalesOrderRow;

    fn variants() -> HashMap<u64, Variant> {
        let variant = |id, sku: &str, kind: &str| Variant {
            id,
            sku: Some(sku.to_string()),
            kind: Some(kind.to_string()),
            ..Variant::default()
        };
        HashMap::from([
            (5001, variant(5001, "KNF-8IN-BLK", "product")),
            (5201, variant(5201, "SVC-SHARPEN", "service")),
        ])
    }

    #[test]
    fn updates_read_quantity_sku_and_location_and_skip_services() {
        let mo = ManufacturingOrder {
            id: 2001,
            variant_id: Some(5001),
            location_id: Some(1),
            ..ManufacturingOrder::default()
        };
        assert_eq!(made(&mo, Some(10.0), &variants()), ["+10 KNF-8IN-BLK @1"]);
        assert!(made(&mo, None, &variants()).is_empty());
        let row = |id, variant_id, quantity| SalesOrderRow {
            id,
            variant_id,
            quantity,
        };
        let so = SalesOrder {
            id: 3001,
            location_id: None,
            sales_order_rows: vec![
                row(3101, 5001, 2.0),
                row(3102, 5999, 1.5),
                row(3103, 5201, 1.0),
            ],
            ..SalesOrder::default()
        };
        assert_eq!(
            shipped(&so, &variants()),
            ["-2 KNF-8IN-BLK", "-1.5 variant 5999"]
        );
    }

    #[test]
    fn order_types_are_a_plain_enum() {
        let schema = schemars::schema_for!(OrderType);
        assert_eq!(
            schema.get("enum").unwrap(),
            &serde_json::json!(["manufacturing", "sales"])
        );
    }
}
