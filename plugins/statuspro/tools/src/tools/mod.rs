//! The nine tools, one module each. Every module holds the tool's input
//! type (the schema the model sees), its output or preview type, and the
//! [`Tool`](toolhost_sdk::Tool) impl; shared pieces live in the crate's
//! other modules.

mod add_order_comment;
mod bulk_update_order_status;
mod get_order;
mod get_viable_statuses;
mod list_orders;
mod list_statuses;
mod lookup_order;
mod update_order_due_date;
mod update_order_status;

pub use add_order_comment::AddOrderComment;
pub use bulk_update_order_status::BulkUpdateOrderStatus;
pub use get_order::GetOrder;
pub use get_viable_statuses::GetViableStatuses;
pub use list_orders::ListOrders;
pub use list_statuses::ListStatuses;
pub use lookup_order::LookupOrder;
pub use update_order_due_date::UpdateOrderDueDate;
pub use update_order_status::UpdateOrderStatus;

#[cfg(test)]
mod tests {
    //! The schemas as the SDK renders them (draft 2020-12, subschemas
    //! inlined): what every tool promises models about its fields.

    use serde_json::Value;
    use toolhost_sdk::Tool;
    use toolhost_sdk::schema::{input_schema_text, output_schema_text};

    use super::*;

    fn schemas<T: Tool>() -> (&'static str, Value, Value) {
        (
            T::NAME,
            serde_json::from_str(&input_schema_text::<T::Input>()).unwrap(),
            serde_json::from_str(&output_schema_text::<T::Output>()).unwrap(),
        )
    }

    fn all() -> Vec<(&'static str, Value, Value)> {
        vec![
            schemas::<ListOrders>(),
            schemas::<GetOrder>(),
            schemas::<LookupOrder>(),
            schemas::<ListStatuses>(),
            schemas::<GetViableStatuses>(),
            schemas::<UpdateOrderStatus>(),
            schemas::<AddOrderComment>(),
            schemas::<UpdateOrderDueDate>(),
            schemas::<BulkUpdateOrderStatus>(),
        ]
    }

    #[test]
    fn every_input_field_has_a_description_and_an_example() {
        for (name, input, _) in all() {
            assert_eq!(input["type"], "object", "{name}");
            let properties = input["properties"].as_object().cloned().unwrap_or_default();
            for (field, property) in &properties {
                assert!(
                    property["description"]
                        .as_str()
                        .is_some_and(|d| d.len() > 10),
                    "{name}.{field} has no description"
                );
                assert!(
                    property["examples"]
                        .as_array()
                        .is_some_and(|e| !e.is_empty()),
                    "{name}.{field} has no example"
                );
            }
        }
    }

    #[test]
    fn status_codes_dates_and_id_lists_carry_their_constraints() {
        for (name, input, _) in all() {
            let properties = &input["properties"];
            if let Some(code) = properties.get("status_code") {
                assert_eq!(code["pattern"], r"^st\d{6}$", "{name}");
                assert_eq!(
                    (&code["minLength"], &code["maxLength"]),
                    (&8.into(), &8.into()),
                    "{name}"
                );
            }
            for date in ["due_date", "due_date_to", "due_date_from"] {
                if let Some(field) = properties.get(date) {
                    assert_eq!(field["format"], "date", "{name}.{date}");
                    assert_eq!(field["pattern"], r"^\d{4}-\d{2}-\d{2}$", "{name}.{date}");
                }
            }
        }
        let (_, bulk, _) = schemas::<BulkUpdateOrderStatus>();
        let ids = &bulk["properties"]["order_ids"];
        assert_eq!(
            (&ids["minItems"], &ids["maxItems"]),
            (&1.into(), &50.into())
        );
        assert_eq!(
            bulk["required"],
            serde_json::json!(["order_ids", "status_code"])
        );
    }

    #[test]
    fn outputs_are_object_schemas() {
        for (name, _, output) in all() {
            assert_eq!(output["type"], "object", "{name}");
        }
    }
}
