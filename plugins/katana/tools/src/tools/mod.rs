//! The seven tools, one module each. Every module holds the tool's input type
//! (the schema the model sees), its output type, the [`Tool`](toolhost_sdk::Tool)
//! impl and the pure logic worth testing on its own; shared pieces live in
//! the crate's other modules.

pub mod create_manufacturing_order;
pub mod create_purchase_order;
pub mod find_order;
pub mod fulfill_order;
pub mod receive_purchase_order;
pub mod search_items;
pub mod verify_order_document;

pub use create_manufacturing_order::CreateManufacturingOrder;
pub use create_purchase_order::CreatePurchaseOrder;
pub use find_order::FindOrder;
pub use fulfill_order::FulfillOrder;
pub use receive_purchase_order::ReceivePurchaseOrder;
pub use search_items::SearchItems;
pub use verify_order_document::VerifyOrderDocument;

#[cfg(test)]
mod tests {
    //! The schemas as the SDK renders them (draft 2020-12, subschemas
    //! inlined): what every tool promises models about its fields.

    use serde_json::{Map, Value, json};
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
            schemas::<SearchItems>(),
            schemas::<VerifyOrderDocument>(),
            schemas::<FindOrder>(),
            schemas::<CreatePurchaseOrder>(),
            schemas::<ReceivePurchaseOrder>(),
            schemas::<CreateManufacturingOrder>(),
            schemas::<FulfillOrder>(),
        ]
    }

    /// Every property, nested ones under `items` too, as `(path, schema)`.
    fn fields(prefix: &str, properties: &Map<String, Value>, out: &mut Vec<(String, Value)>) {
        for (name, property) in properties {
            let path = format!("{prefix}{name}");
            out.push((path.clone(), property.clone()));
            if let Some(inner) = property["items"]["properties"].as_object() {
                fields(&format!("{path}[]."), inner, out);
            }
        }
    }

    #[test]
    fn every_input_field_nested_ones_too_has_a_description_and_an_example() {
        for (name, input, _) in all() {
            assert_eq!(input["type"], "object", "{name}");
            let mut all = Vec::new();
            fields("", input["properties"].as_object().unwrap(), &mut all);
            for (path, property) in all {
                assert!(
                    property["description"]
                        .as_str()
                        .is_some_and(|d| d.len() > 10),
                    "{name}.{path} has no description"
                );
                assert!(
                    property["examples"]
                        .as_array()
                        .is_some_and(|e| !e.is_empty()),
                    "{name}.{path} has no example"
                );
            }
        }
    }

    #[test]
    fn line_item_lists_are_arrays_of_objects_that_admit_a_json_string() {
        for (name, input, _) in all() {
            for field in ["items", "document_items"] {
                let Some(list) = input["properties"].get(field) else {
                    continue;
                };
                assert_eq!(list["type"], json!(["array", "string"]), "{name}.{field}");
                assert_eq!(list["minItems"], 1, "{name}.{field}");
                assert!(
                    list.get("maxLength").is_none(),
                    "{name}.{field}: a JSON string of any length"
                );
                assert_eq!(list["items"]["type"], "object", "{name}.{field}");
                assert_eq!(list["items"]["additionalProperties"], false);
                assert!(list["examples"][0].is_array(), "{name}.{field}");
            }
        }
    }

    #[test]
    fn mutations_take_confirm_defaulting_to_false_and_report_the_shared_fields() {
        for (name, input, output) in all().into_iter().skip(3) {
            let confirm = &input["properties"]["confirm"];
            assert_eq!(
                (&confirm["type"], &confirm["default"]),
                (&json!("boolean"), &json!(false)),
                "{name}"
            );
            for field in [
                "is_preview",
                "result",
                "message",
                "warnings",
                "next_actions",
                "confirmed",
                "success",
                "status_code",
            ] {
                assert!(output["properties"].get(field).is_some(), "{name}.{field}");
                assert!(
                    output["required"]
                        .as_array()
                        .is_some_and(|r| r.contains(&json!(field))),
                    "{name}.{field} is always written"
                );
            }
            assert_eq!(
                output["properties"]["result"]["enum"],
                json!(["preview", "confirmed", "declined", "cancelled", "unchanged"])
            );
        }
    }

    #[test]
    fn enums_and_bounds_are_in_the_schema() {
        let (_, fulfill, _) = schemas::<FulfillOrder>();
        assert_eq!(
            fulfill["properties"]["order_type"]["enum"],
            json!(["manufacturing", "sales"])
        );
        assert_eq!(fulfill["required"], json!(["order_id", "order_type"]));
        let (_, search, _) = schemas::<SearchItems>();
        let limit = &search["properties"]["limit"];
        assert_eq!(
            (&limit["minimum"], &limit["maximum"], &limit["default"]),
            (&json!(1), &json!(100), &json!(20))
        );
        let (_, po, _) = schemas::<CreatePurchaseOrder>();
        assert_eq!(po["properties"]["currency"]["pattern"], "^[A-Z]{3}$");
        let item = &po["properties"]["items"]["items"]["properties"];
        assert_eq!(item["quantity"]["exclusiveMinimum"], 0);
        assert_eq!(item["price_per_unit"]["minimum"], 0);
        assert_eq!(
            po["properties"]["items"]["items"]["required"],
            json!(["variant_id", "quantity", "price_per_unit"])
        );
    }

    #[test]
    fn outputs_are_object_schemas() {
        for (name, _, output) in all() {
            assert_eq!(output["type"], "object", "{name}");
        }
    }
}
