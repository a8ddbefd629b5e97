//! The README's run command, `cargo xtask demo`, as a client starts it: it
//! serves the nine StatusPro tools, the seven Katana tools and the example,
//! each plugin set answering from its own sandbox with no account.
//!
//! The test adds `--no-build`: `cargo xtask test` has built the components,
//! and rebuilding the host binary here could replace it under the other
//! tests running at the same time. Everything after the build is the
//! command's own path.

use std::path::Path;

use serde_json::json;

use crate::support::{Elicitation, Era, Host};

#[tokio::test]
async fn the_demo_serves_statuspro_and_katana_against_their_sandboxes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO"));
    // What `cargo xtask demo` expands to (the alias in .cargo/config.toml).
    command.current_dir(root).args([
        "run",
        "--quiet",
        "--package",
        "xtask",
        "--",
        "demo",
        "--no-build",
    ]);
    let demo = Host::spawn(command, Era::Legacy, Elicitation::Unsupported).await;

    let mut names: Vec<String> = demo
        .tools()
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    let mut expected = vec![
        // StatusPro
        "list_orders",
        "get_order",
        "lookup_order",
        "list_statuses",
        "get_viable_statuses",
        "update_order_status",
        "add_order_comment",
        "update_order_due_date",
        "bulk_update_order_status",
        // Katana
        "search_items",
        "verify_order_document",
        "find_order",
        "create_purchase_order",
        "receive_purchase_order",
        "create_manufacturing_order",
        "fulfill_order",
        // The example
        "greet",
        "fetch_url",
    ];
    expected.sort();
    assert_eq!(names, expected);

    // Each set reaches its sandbox, with the key the host injects.
    let orders = demo
        .ok("list_orders", json!({"page": 1, "per_page": 5}))
        .await;
    assert_eq!(orders["orders"].as_array().unwrap().len(), 5, "{orders}");
    let statuses = demo.ok("list_statuses", json!({})).await;
    assert!(
        !statuses["statuses"].as_array().unwrap().is_empty(),
        "{statuses}"
    );
    let items = demo.ok("search_items", json!({"query": "knife"})).await;
    assert!(!items["items"].as_array().unwrap().is_empty(), "{items}");
}
