//! What an MCP client lists: the nine tools with their titles, all four
//! annotations as contract section 5 assigns them, and input schemas in
//! which every field is described and has an example.

use serde_json::{Value, json};

use super::StatusPro;
use crate::support::{ERAS, Host, HostOptions, hints};

/// `(name, title, read_only, destructive, idempotent)`; all are open-world.
const EXPECTED: [(&str, &str, bool, bool, bool); 9] = [
    ("list_orders", "List Orders", true, false, true),
    ("get_order", "Get Order", true, false, true),
    ("lookup_order", "Look Up Order", true, false, true),
    ("list_statuses", "List Statuses", true, false, true),
    (
        "get_viable_statuses",
        "Get Viable Statuses",
        true,
        false,
        true,
    ),
    (
        "update_order_status",
        "Update Order Status",
        false,
        true,
        false,
    ),
    // Only adds an event: never overwrites, but every call adds one.
    (
        "add_order_comment",
        "Add Order Comment",
        false,
        false,
        false,
    ),
    // Replaces the date, and every call appends a history event.
    (
        "update_order_due_date",
        "Update Order Due Date",
        false,
        true,
        false,
    ),
    (
        "bulk_update_order_status",
        "Bulk Update Order Status",
        false,
        true,
        false,
    ),
];

#[tokio::test]
async fn the_nine_tools_are_listed_with_titles_and_annotations() {
    for era in ERAS {
        let host = Host::start(HostOptions::new(&super::COMPONENTS).era(era)).await;
        let tools = host.tools().await;
        assert_eq!(tools.len(), 9, "{era:?}");
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
            let first_sentence = description.split(". ").next().unwrap();
            assert!(
                first_sentence.contains("StatusPro") && first_sentence.contains("; use it"),
                "{name}: the first sentence says what it does and when to use it: {description}"
            );
            let output = tool.output_schema.as_ref().expect("an output schema");
            assert_eq!(output["type"], "object", "{name}: MCP needs an object");
            if !read_only {
                // The output schema describes what the tool writes: the
                // shared report's fields, the same as Katana's mutations',
                // and the preview, are in every answer.
                let required = output["required"].as_array().expect("required fields");
                for field in [
                    "preview",
                    "is_preview",
                    "result",
                    "message",
                    "warnings",
                    "next_actions",
                    "confirmed",
                    "success",
                    "status_code",
                ] {
                    assert!(
                        required.contains(&field.into()),
                        "{name}.{field}: {output:?}"
                    );
                }
                assert_eq!(
                    (
                        &output["properties"]["confirmed"]["type"],
                        &output["properties"]["success"]["type"],
                        &output["properties"]["status_code"]["type"]
                    ),
                    (
                        &json!("boolean"),
                        &json!("boolean"),
                        &json!(["integer", "null"])
                    ),
                    "{name}"
                );
                assert_eq!(
                    output["properties"]["result"]["enum"],
                    json!(["preview", "confirmed", "declined", "cancelled", "unchanged"]),
                    "{name}"
                );
            }
        }
        let viable = tools
            .iter()
            .find(|t| t.name == "get_viable_statuses")
            .unwrap();
        assert!(
            viable
                .description
                .as_deref()
                .unwrap()
                .contains("call it before update_order_status")
        );
    }
}

#[tokio::test]
async fn every_input_field_is_described_with_an_example() {
    let host = Host::start(HostOptions::new(&super::COMPONENTS)).await;
    for tool in host.tools().await {
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object");
        let properties = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (field, property) in &properties {
            let description = property["description"].as_str().unwrap_or_default();
            assert!(
                description.len() >= 10,
                "{}.{field} has no description",
                tool.name
            );
            assert!(
                property["examples"]
                    .as_array()
                    .is_some_and(|e| !e.is_empty()),
                "{}.{field} has no example",
                tool.name
            );
        }
        if tool.name == "list_statuses" {
            assert!(properties.is_empty());
        }
    }
}

#[tokio::test]
async fn schemas_carry_formats_patterns_bounds_and_enums() {
    let host = Host::start(HostOptions::new(&super::COMPONENTS)).await;
    let tools = host.tools().await;
    let schema = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        Value::Object((*tool.input_schema).clone())
    };

    for name in [
        "list_orders",
        "update_order_status",
        "bulk_update_order_status",
    ] {
        let code = &schema(name)["properties"]["status_code"];
        assert_eq!(code["pattern"], r"^st\d{6}$", "{name}");
        assert_eq!(
            (&code["minLength"], &code["maxLength"]),
            (&json!(8), &json!(8))
        );
        let example = code["examples"][0].as_str().unwrap();
        assert!(
            example.len() == 8 && example.starts_with("st0"),
            "{name}: {example}"
        );
    }
    for (name, field) in [
        ("list_orders", "due_date_from"),
        ("list_orders", "due_date_to"),
        ("update_order_due_date", "due_date"),
        ("update_order_due_date", "due_date_to"),
    ] {
        let date = &schema(name)["properties"][field];
        assert_eq!(date["format"], "date", "{name}.{field}");
        assert_eq!(date["pattern"], r"^\d{4}-\d{2}-\d{2}$", "{name}.{field}");
    }
    let list = schema("list_orders");
    assert_eq!(
        list["properties"]["fulfillment_status"]["items"]["enum"],
        json!(["unfulfilled", "partial", "restocked", "fulfilled"])
    );
    assert_eq!(
        list["properties"]["financial_status"]["items"]["enum"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert_eq!(list["properties"]["per_page"]["maximum"], 100);
    assert_eq!(
        list["properties"]["per_page"]["default"], 100,
        "the real default"
    );
    let limit = &list["properties"]["limit"];
    assert_eq!(
        (&limit["default"], &limit["minimum"], &limit["maximum"]),
        (&json!(1000), &json!(1), &json!(2500))
    );
    let due = schema("update_order_due_date");
    assert_eq!(
        due["required"],
        json!(["order_id", "due_date"]),
        "due_date must be given, as a date or null"
    );
    assert_eq!(
        due["properties"]["due_date"]["type"],
        json!(["string", "null"])
    );
    let bulk = schema("bulk_update_order_status");
    let ids = &bulk["properties"]["order_ids"];
    assert_eq!(
        (&ids["minItems"], &ids["maxItems"]),
        (&json!(1), &json!(50))
    );
    assert_eq!(bulk["required"], json!(["order_ids", "status_code"]));
    let comment = &schema("add_order_comment")["properties"]["comment"];
    assert_eq!(
        (&comment["minLength"], &comment["maxLength"]),
        (&json!(3), &json!(1000))
    );
    for name in [
        "update_order_status",
        "add_order_comment",
        "update_order_due_date",
        "bulk_update_order_status",
    ] {
        let confirm = &schema(name)["properties"]["confirm"];
        assert_eq!(
            (&confirm["type"], &confirm["default"]),
            (&json!("boolean"), &json!(false)),
            "{name}"
        );
    }
}

#[tokio::test]
async fn the_host_rejects_arguments_that_break_the_schema_before_any_request() {
    let statuspro = StatusPro::start().await;
    let host = &statuspro.host;
    for (tool, args) in [
        (
            "update_order_status",
            json!({"order_id": 6110375248001u64, "status_code": "shipped"}),
        ),
        ("list_orders", json!({"financial_status": ["gift_card"]})),
        (
            "update_order_due_date",
            json!({"order_id": 6110375248001u64, "due_date": "15/03/2026"}),
        ),
        (
            "update_order_due_date",
            json!({"order_id": 6110375248001u64}),
        ),
        (
            "add_order_comment",
            json!({"order_id": 6110375248001u64, "comment": "ok"}),
        ),
        (
            "bulk_update_order_status",
            json!({"order_ids": [], "status_code": "st000001"}),
        ),
    ] {
        let issue = host.tool_error(tool, args).await;
        assert_eq!(issue["code"], "VALIDATION_ERROR", "{tool}");
    }
    assert!(
        statuspro.sandbox.requests().is_empty(),
        "nothing reached the API"
    );
}
