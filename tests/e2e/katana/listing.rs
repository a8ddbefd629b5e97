//! What an MCP client lists: one component, seven tools, with the titles and
//! annotations of contract section 6, descriptions that say what and when,
//! and input schemas in which every field, nested line-item fields too, is
//! described and has an example.

use serde_json::{Map, Value, json};

use crate::support::{ERAS, Host, HostOptions, hints};

/// `(name, title, read_only, destructive, idempotent)`; all are open-world.
const EXPECTED: [(&str, &str, bool, bool, bool); 7] = [
    ("search_items", "Search Items", true, false, true),
    (
        "verify_order_document",
        "Verify Order Document",
        true,
        false,
        true,
    ),
    ("find_order", "Find Order", true, false, true),
    (
        "create_purchase_order",
        "Create Purchase Order",
        false,
        false,
        false,
    ),
    (
        "create_manufacturing_order",
        "Create Manufacturing Order",
        false,
        false,
        false,
    ),
    (
        "receive_purchase_order",
        "Receive Purchase Order",
        false,
        true,
        false,
    ),
    ("fulfill_order", "Fulfill Order", false, true, false),
];

#[tokio::test]
async fn the_seven_tools_are_listed_with_titles_and_annotations() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&["katana"]).era(era)).await;
        let tools = host.tools().await;
        assert_eq!(tools.len(), 7, "{era:?}: one component, seven tools");
        for (name, title, read_only, destructive, idempotent) in EXPECTED {
            let tool = tools
                .iter()
                .find(|t| t.name == name)
                .unwrap_or_else(|| panic!("{name} is listed"));
            assert_eq!(tool.title.as_deref(), Some(title), "{era:?} {name}");
            assert_eq!(
                hints(tool),
                (
                    Some(read_only),
                    Some(destructive),
                    Some(idempotent),
                    Some(true)
                ),
                "{era:?} {name}"
            );
            let description = tool.description.as_deref().unwrap_or_default();
            let (first, rest) = description.split_once(". ").unwrap();
            assert!(
                first.contains("Katana"),
                "{name}: the first sentence says what it does: {description}"
            );
            assert!(
                rest.starts_with("Use it "),
                "{name}: the second says when to use it: {description}"
            );
            if !read_only {
                assert!(
                    description.contains("confirm=false") && description.contains("confirm=true"),
                    "{name}: mutations explain the two steps"
                );
            }
            let output = tool.output_schema.as_ref().expect("an output schema");
            assert_eq!(output["type"], "object", "{name}: MCP needs an object");
        }
    }
}

/// Every property, nested ones under array `items` too, as `(path, schema)`.
fn fields(prefix: &str, properties: &Map<String, Value>, out: &mut Vec<(String, Value)>) {
    for (name, property) in properties {
        let path = format!("{prefix}{name}");
        out.push((path.clone(), property.clone()));
        if let Some(inner) = property["items"]["properties"].as_object() {
            fields(&format!("{path}[]."), inner, out);
        }
    }
}

#[tokio::test]
async fn every_input_field_nested_ones_too_is_described_with_an_example() {
    let host = Host::start(HostOptions::new(&["katana"])).await;
    let mut nested = 0;
    for tool in host.tools().await {
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object");
        let mut all = Vec::new();
        fields("", schema["properties"].as_object().unwrap(), &mut all);
        for (path, property) in all {
            nested += usize::from(path.contains("[]."));
            let description = property["description"].as_str().unwrap_or_default();
            assert!(
                description.len() >= 10,
                "{}.{path} has no description",
                tool.name
            );
            assert!(
                property["examples"]
                    .as_array()
                    .is_some_and(|e| !e.is_empty()),
                "{}.{path} has no example",
                tool.name
            );
        }
    }
    // verify 3 + create_purchase_order 7 + receive 2 nested fields.
    assert_eq!(nested, 12, "the line items' fields were walked");
}

#[tokio::test]
async fn line_items_are_arrays_of_objects_and_finite_sets_are_enums() {
    let host = Host::start(HostOptions::new(&["katana"])).await;
    let tools = host.tools().await;
    let schema = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        Value::Object((*tool.input_schema).clone())
    };

    for (tool, field, required) in [
        (
            "create_purchase_order",
            "items",
            json!(["variant_id", "quantity", "price_per_unit"]),
        ),
        (
            "receive_purchase_order",
            "items",
            json!(["purchase_order_row_id", "quantity"]),
        ),
        (
            "verify_order_document",
            "document_items",
            json!(["sku", "quantity"]),
        ),
    ] {
        let list = &schema(tool)["properties"][field];
        // A JSON string holding the array is admitted too, then parsed.
        assert_eq!(list["type"], json!(["array", "string"]), "{tool}.{field}");
        assert_eq!(list["minItems"], 1, "{tool}.{field}");
        assert_eq!(list["items"]["type"], "object", "{tool}.{field}");
        assert_eq!(list["items"]["required"], required, "{tool}.{field}");
        assert_eq!(list["items"]["additionalProperties"], false);
        assert!(list["examples"][0][0].is_object(), "{tool}.{field}");
    }
    let po = schema("create_purchase_order");
    assert_eq!(
        po["required"],
        json!(["supplier_id", "location_id", "order_number", "items"])
    );
    assert_eq!(po["properties"]["currency"]["pattern"], "^[A-Z]{3}$");
    assert_eq!(
        po["properties"]["location_id"]["description"],
        "Location ID where items will be received."
    );
    let line = &po["properties"]["items"]["items"]["properties"];
    assert_eq!(line["quantity"]["exclusiveMinimum"], 0);
    assert_eq!(line["price_per_unit"]["minimum"], 0);

    let fulfill = schema("fulfill_order");
    assert_eq!(
        fulfill["properties"]["order_type"]["enum"],
        json!(["manufacturing", "sales"])
    );
    assert_eq!(fulfill["required"], json!(["order_id", "order_type"]));
    let search = schema("search_items");
    let limit = &search["properties"]["limit"];
    assert_eq!(
        (&limit["minimum"], &limit["maximum"], &limit["default"]),
        (&json!(1), &json!(100), &json!(20))
    );
    assert_eq!(search["required"], json!(["query"]));
    for name in [
        "create_purchase_order",
        "receive_purchase_order",
        "create_manufacturing_order",
        "fulfill_order",
    ] {
        let confirm = &schema(name)["properties"]["confirm"];
        assert_eq!(
            (&confirm["type"], &confirm["default"]),
            (&json!("boolean"), &json!(false)),
            "{name}"
        );
        let output = tools.iter().find(|t| t.name == name).unwrap();
        let output = output.output_schema.as_ref().unwrap();
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
                    .unwrap()
                    .contains(&json!(field)),
                "{name}.{field} is in every answer"
            );
        }
    }
}
