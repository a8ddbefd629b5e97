//! `create_manufacturing_order`: plan production of a product, after the
//! user confirms.
//!
//! The preview is computed here without calling Katana. Katana requires an
//! order number; without one the tool makes one from the call's arguments
//! and today's date (UTC), `MO-<YYYYMMDD>-<6 hex digits>` ([`generated_number`]),
//! so the preview, the confirmed call and a re-run after the user's answer
//! all name the same number. Confirmed, it sends E5; the new order is
//! `NOT_STARTED`.

use toolhost_sdk::http::Method;

use crate::api::{ManufacturingOrder, NewManufacturingOrder};
use crate::inputs::{check_positive, now_iso, num};
use crate::mutation::{Report, approve};
use crate::prelude::*;

/// Arguments of `create_manufacturing_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateManufacturingOrderInput {
    /// Variant ID to manufacture: a product variant with a recipe (search_items finds it by SKU).
    #[schemars(example = 5001, range(min = 1))]
    pub variant_id: u64,
    /// Planned quantity to produce, greater than 0.
    #[schemars(example = 20, extend("exclusiveMinimum" = 0))]
    pub planned_quantity: f64,
    /// Location ID for production: where it is made and where the stock goes.
    #[schemars(example = 1, range(min = 1))]
    pub location_id: u64,
    /// Manufacturing order number, unique in Katana; when absent, one is made from the other arguments and today's date (MO-YYYYMMDD-xxxxxx), the same in the preview and the confirmed call.
    #[serde(default)]
    #[schemars(example = &"MO-25-010", length(min = 1, max = 100))]
    pub order_no: Option<String>,
    /// Order creation date, ISO 8601 (optional).
    #[serde(default)]
    #[schemars(example = &"2025-11-03T08:00:00.000Z", length(min = 10, max = 40))]
    pub order_created_date: Option<String>,
    /// Production deadline date, ISO 8601 (optional).
    #[serde(default)]
    #[schemars(example = &"2025-11-14T17:00:00.000Z", length(min = 10, max = 40))]
    pub production_deadline_date: Option<String>,
    /// Additional notes for the production team (optional).
    #[serde(default)]
    #[schemars(example = &"Walnut handles for the trade show batch", length(max = 2000))]
    pub additional_info: Option<String>,
    /// If false (default), returns a preview and changes nothing. If true, asks the user to approve, then creates the order.
    #[serde(default)]
    #[schemars(example = false)]
    pub confirm: bool,
}

/// What `create_manufacturing_order` returns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CreateManufacturingOrderOutput {
    /// Katana's id of the new order (order_id in fulfill_order); null until created.
    pub id: Option<u64>,
    /// The order number.
    pub order_no: String,
    /// The order's status: NOT_STARTED for a new order.
    pub status: String,
    /// The variant made.
    pub variant_id: u64,
    /// How many are planned.
    pub planned_quantity: f64,
    /// Where.
    pub location_id: u64,
    /// The creation date given, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_created_date: Option<String>,
    /// The deadline given, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub production_deadline_date: Option<String>,
    /// The notes given, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_info: Option<String>,
    /// What happened, warnings and next steps.
    #[serde(flatten)]
    pub report: Report,
}

/// Creates a manufacturing order.
pub struct CreateManufacturingOrder;

impl Tool for CreateManufacturingOrder {
    type Input = CreateManufacturingOrderInput;
    type Output = CreateManufacturingOrderOutput;
    const NAME: &'static str = "create_manufacturing_order";
    const TITLE: &'static str = "Create Manufacturing Order";
    const DESCRIPTION: &'static str = "Create a Katana manufacturing order to produce a \
        quantity of a product at a location. Use it to plan production when stock of a product \
        must be made; find the variant id with search_items first, and complete the order later \
        with fulfill_order. Two steps: with confirm=false (default) it returns a preview and \
        changes nothing; with confirm=true the user is asked to approve, and only then is the \
        order created.";
    const ANNOTATIONS: Annotations = Annotations::mutating(false, false);

    fn call(&self, input: CreateManufacturingOrderInput) -> Result<Self::Output, ToolError> {
        check_positive("planned_quantity", input.planned_quantity)?;
        let given = input
            .order_no
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty());
        let order_no = given
            .map(str::to_string)
            .unwrap_or_else(|| generated_number(&input, &now_iso()[..10]));
        let warnings = warnings(&input, given.is_none().then_some(order_no.as_str()));
        let mut out = CreateManufacturingOrderOutput {
            id: None,
            order_no: order_no.clone(),
            status: "NOT_STARTED".to_string(),
            variant_id: input.variant_id,
            planned_quantity: input.planned_quantity,
            location_id: input.location_id,
            order_created_date: input.order_created_date.clone(),
            production_deadline_date: input.production_deadline_date.clone(),
            additional_info: input.additional_info.clone(),
            report: Report::preview(
                format!(
                    "Preview: manufacturing order {order_no} for {} of variant {} at location \
                     {}; nothing was created",
                    num(input.planned_quantity),
                    input.variant_id,
                    input.location_id
                ),
                warnings.clone(),
                vec![
                    "Call again with confirm=true to create it (the user is asked to approve)."
                        .to_string(),
                ],
            ),
        };
        let question = format!(
            "Create manufacturing order for variant {} with quantity {}?",
            input.variant_id,
            num(input.planned_quantity)
        );
        if !input.confirm {
            return Ok(out);
        }
        let client = Client::from_config()?;
        let action = format!("Manufacturing order {order_no} creation");
        if let Err(stopped) = approve(&client, &question, &action, &warnings) {
            out.report = stopped;
            return Ok(out);
        }

        let body = NewManufacturingOrder {
            order_no: &order_no,
            variant_id: input.variant_id,
            location_id: input.location_id,
            planned_quantity: input.planned_quantity,
            order_created_date: input.order_created_date.as_deref(),
            production_deadline_date: input.production_deadline_date.as_deref(),
            additional_info: input.additional_info.as_deref(),
        };
        let (status_code, created): (u16, ManufacturingOrder) = client.write_json(
            Method::Post,
            "/manufacturing_orders",
            &body,
            "such variant or location",
            &format!("Look for manufacturing order {order_no} in Katana"),
        )?;
        out.id = Some(created.id);
        if let Some(number) = created.order_no {
            out.order_no = number;
        }
        if let Some(status) = created.status {
            out.status = status;
        }
        out.report = Report::done(
            status_code,
            format!(
                "Created manufacturing order {} (id {}) for {} of variant {}",
                out.order_no,
                created.id,
                num(input.planned_quantity),
                input.variant_id
            ),
            warnings,
            vec![format!(
                "When production is finished, complete it with fulfill_order (order_id {}, \
                 order_type manufacturing) to add the stock.",
                created.id
            )],
        );
        Ok(out)
    }
}

/// What the user should know before creating the order; `generated` is
/// the order number made up for it, if any.
fn warnings(input: &CreateManufacturingOrderInput, generated: Option<&str>) -> Vec<String> {
    let mut warnings = Vec::new();
    if input.production_deadline_date.is_none() {
        warnings.push("No production_deadline_date set: the order has no deadline.".to_string());
    }
    if input.additional_info.is_none() {
        warnings.push("No additional_info given for the production team.".to_string());
    }
    if let Some(number) = generated {
        warnings.push(format!(
            "No order_no given: {number} will be used (made from these arguments and today's \
             date, so confirming names the same number; give order_no to make a second \
             identical order today)."
        ));
    }
    warnings
}

/// The order number made for a call without one: `MO-`, the UTC date
/// `today` (`YYYY-MM-DD`) without dashes, and six hex digits of a 32-bit
/// FNV-1a hash of every other argument. The same arguments on the same day
/// give the same number (preview and confirmation agree); any other
/// argument gives another.
pub fn generated_number(input: &CreateManufacturingOrderInput, today: &str) -> String {
    let canonical = format!(
        "{}|{}|{}|{:?}|{:?}|{:?}",
        input.variant_id,
        input.planned_quantity,
        input.location_id,
        input.order_created_date,
        input.production_deadline_date,
        input.additional_info
    );
    let hash = canonical.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("MO-{}-{:06X}", today.replace('-', ""), hash & 0x00ff_ffff)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_generated_number_depends_on_the_arguments_and_the_day_only() {
        let input = |quantity: u32| -> CreateManufacturingOrderInput {
            serde_json::from_value(
                json!({"variant_id": 5001, "planned_quantity": quantity, "location_id": 1}),
            )
            .unwrap()
        };
        let a = generated_number(&input(20), "2026-11-25");
        assert_eq!(a, generated_number(&input(20), "2026-11-25"));
        assert!(a.starts_with("MO-20261125-") && a.len() == 18, "{a}");
        assert_ne!(a, generated_number(&input(21), "2026-11-25"));
        assert_ne!(a, generated_number(&input(20), "2026-11-26"));
    }

    #[test]
    fn warnings_name_what_is_missing() {
        let input: CreateManufacturingOrderInput = serde_json::from_value(
            json!({"variant_id": 5001, "planned_quantity": 20, "location_id": 1}),
        )
        .unwrap();
        let w = warnings(&input, Some("MO-20261125-0A1B2C"));
        assert_eq!(w.len(), 3);
        assert!(w[0].contains("production_deadline_date"));
        assert!(w[1].contains("additional_info"));
        assert!(w[2].contains("MO-20261125-0A1B2C"));
        let input: CreateManufacturingOrderInput = serde_json::from_value(json!({
            "variant_id": 5001, "planned_quantity": 20, "location_id": 1, "order_no": "MO-1",
            "production_deadline_date": "2025-11-14T17:00:00.000Z", "additional_info": "x"}))
        .unwrap();
        assert!(warnings(&input, None).is_empty());
    }
}
