//! The three read tools against the seeded workshop: `search_items` ranks
//! every variant by the contract's scores, `verify_order_document` finds
//! each kind of difference between a document and a purchase order, and
//! `find_order` reads any kind of order by id or number.

use katana_sandbox::seed;
use serde_json::{Value, json};

use super::Katana;

fn ids(out: &Value) -> Vec<i64> {
    out["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn search_items_ranks_sku_matches_before_name_matches() {
    let katana = Katana::start().await;
    let host = &katana.host;

    // The exact SKU, any case: one hit, with its name built from the item
    // and its configuration.
    let out = host
        .ok("search_items", json!({"query": "knf-8in-blk"}))
        .await;
    assert_eq!(
        out,
        json!({"items": [{"id": seed::KNIFE_BLACK, "sku": "KNF-8IN-BLK",
               "name": "Chef's Knife / 8-inch / Black", "type": "product"}],
               "total_count": 1})
    );

    // Two SKUs start with the query (80 each): Katana's order (newest
    // first) is kept.
    let out = host.ok("search_items", json!({"query": "KNF-8IN"})).await;
    assert_eq!(ids(&out), [seed::KNIFE_WALNUT, seed::KNIFE_BLACK]);

    // "knife": no SKU has it; "Knife Sharpening" starts with it (40), the
    // two Chef's Knives only contain it (20).
    let out = host.ok("search_items", json!({"query": "Knife"})).await;
    assert_eq!(
        ids(&out),
        [seed::SHARPENING, seed::KNIFE_WALNUT, seed::KNIFE_BLACK]
    );
    assert_eq!(out["items"][0]["type"], "service");
    assert_eq!(out["total_count"], 3);

    // A SKU starting with the query (80) beats one containing it (60).
    let out = host.ok("search_items", json!({"query": "wal"})).await;
    assert_eq!(ids(&out), [seed::WALNUT_SCALE, seed::KNIFE_WALNUT]);
    // Every word in the SKU, in any order (60).
    let out = host
        .ok("search_items", json!({"query": "BLK 8in", "limit": 5}))
        .await;
    assert_eq!(ids(&out), [seed::KNIFE_BLACK]);
    // A name starting with the query (40) beats one containing it (20).
    let out = host.ok("search_items", json!({"query": "walnut"})).await;
    assert_eq!(ids(&out), [seed::WALNUT_SCALE, seed::KNIFE_WALNUT]);
    assert_eq!(out["items"][0]["name"], "Walnut Scale");
    assert_eq!(out["items"][1]["name"], "Chef's Knife / 8-inch / Walnut");

    // The limit cuts the list, not the count.
    let out = host
        .ok("search_items", json!({"query": "knife", "limit": 1}))
        .await;
    assert_eq!(
        (ids(&out), &out["total_count"]),
        (vec![seed::SHARPENING], &json!(3))
    );
    let out = host
        .ok("search_items", json!({"query": "no such thing"}))
        .await;
    assert_eq!(out, json!({"items": [], "total_count": 0}));

    // Every search read all variants in one page of 250, with names.
    let requests = katana.sandbox.requests();
    assert_eq!(requests.len(), 8);
    for r in &requests {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("GET", "/v1/variants")
        );
        let query = r.query.as_deref().unwrap();
        for part in ["extend=product_or_material", "limit=250", "page=1"] {
            assert!(query.contains(part), "{query}");
        }
    }
}

/// Verifies `items` against purchase order `order`.
async fn verify(katana: &Katana, order: i64, items: Value) -> Value {
    katana
        .host
        .ok(
            "verify_order_document",
            json!({"order_id": order, "document_items": items}),
        )
        .await
}

#[tokio::test]
async fn verify_order_document_matches_a_perfect_document() {
    let katana = Katana::start().await;
    // PO-25-001: 200 STL-BLANK-8 at 2.5, 1000 RIV-BRASS-3MM at 0.05. SKUs
    // match trimmed and in any case.
    let out = verify(
        &katana,
        seed::PO_NOT_RECEIVED,
        json!([{"sku": "STL-BLANK-8", "quantity": 200, "unit_price": 2.5},
               {"sku": " riv-brass-3mm ", "quantity": 1000, "unit_price": 0.05}]),
    )
    .await;
    assert_eq!(out["order_id"], seed::PO_NOT_RECEIVED);
    assert_eq!(out["order_no"], "PO-25-001");
    assert_eq!(out["overall_status"], "match");
    assert_eq!(out["discrepancies"], json!([]));
    assert_eq!(
        out["matches"],
        json!([{"sku": "STL-BLANK-8", "quantity": 200.0, "unit_price": 2.5, "status": "perfect"},
               {"sku": "riv-brass-3mm", "quantity": 1000.0, "unit_price": 0.05, "status": "perfect"}])
    );
    assert!(
        out["suggested_actions"][0]
            .as_str()
            .unwrap()
            .contains("receive_purchase_order")
    );
    // The order, then the SKUs of every row's variant in one request.
    let requests = katana.sandbox.requests();
    assert_eq!(
        katana.requests(),
        ["GET /purchase_orders/7001", "GET /variants"]
    );
    let query = requests[1].query.as_deref().unwrap();
    assert!(
        query.contains("ids=5101") && query.contains("ids=5103"),
        "{query}"
    );

    // Rows of one variant are summed: on two rows (PO-25-002), and split
    // by a partial receipt (PO-25-003). The list may come as a JSON string.
    let out = verify(
        &katana,
        seed::PO_SAME_VARIANT_TWICE,
        json!([{"sku": "WAL-SCALE", "quantity": 400, "unit_price": 1.2}]),
    )
    .await;
    assert_eq!(out["overall_status"], "match");
    let out = verify(
        &katana,
        seed::PO_PARTIALLY_RECEIVED,
        json!(r#"[{"sku": "STL-BLANK-8", "quantity": 150}]"#),
    )
    .await;
    assert_eq!(out["overall_status"], "match");
    assert_eq!(out["matches"][0]["unit_price"], Value::Null);
}

#[tokio::test]
async fn verify_order_document_names_every_difference() {
    let katana = Katana::start().await;
    let order = seed::PO_NOT_RECEIVED;

    // A quantity difference.
    let out = verify(
        &katana,
        order,
        json!([{"sku": "STL-BLANK-8", "quantity": 190, "unit_price": 2.5},
               {"sku": "RIV-BRASS-3MM", "quantity": 1000}]),
    )
    .await;
    assert_eq!(out["overall_status"], "partial_match");
    assert_eq!(out["matches"][0]["status"], "quantity_diff");
    assert_eq!(out["matches"][1]["status"], "perfect");
    assert_eq!(
        out["discrepancies"],
        json!([{"sku": "STL-BLANK-8", "type": "quantity_mismatch", "expected": 200.0,
                "actual": 190.0, "message": "STL-BLANK-8: the document says 190, the order says 200"}])
    );

    // A price difference (0.01 is within tolerance, 0.25 is not).
    let out = verify(
        &katana,
        order,
        json!([{"sku": "STL-BLANK-8", "quantity": 200, "unit_price": 2.75},
               {"sku": "RIV-BRASS-3MM", "quantity": 1000, "unit_price": 0.06}]),
    )
    .await;
    assert_eq!(out["overall_status"], "partial_match");
    assert_eq!(out["matches"][0]["status"], "price_diff");
    assert_eq!(out["matches"][1]["status"], "perfect");
    let d = &out["discrepancies"][0];
    assert_eq!(
        (&d["type"], &d["expected"], &d["actual"]),
        (&json!("price_mismatch"), &json!(2.5), &json!(2.75))
    );
    assert_eq!(out["discrepancies"].as_array().unwrap().len(), 1);

    // An item the order does not have, and one the document leaves out.
    let out = verify(
        &katana,
        order,
        json!([{"sku": "STL-BLANK-8", "quantity": 200}, {"sku": "WAL-SCALE", "quantity": 5}]),
    )
    .await;
    assert_eq!(out["overall_status"], "partial_match");
    assert_eq!(out["matches"].as_array().unwrap().len(), 1);
    let kinds: Vec<(&str, &str, &Value, &Value)> = out["discrepancies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["sku"].as_str().unwrap(),
                d["type"].as_str().unwrap(),
                &d["expected"],
                &d["actual"],
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("WAL-SCALE", "missing_in_po", &Value::Null, &json!(5.0)),
            (
                "RIV-BRASS-3MM",
                "missing_in_document",
                &json!(1000.0),
                &Value::Null
            ),
        ]
    );
    let actions = out["suggested_actions"].as_array().unwrap();
    assert_eq!(actions.len(), 2, "{actions:?}");

    // Both at once on one line, and nothing matching at all.
    let out = verify(
        &katana,
        order,
        json!([{"sku": "STL-BLANK-8", "quantity": 1, "unit_price": 9}]),
    )
    .await;
    assert_eq!(out["matches"][0]["status"], "both_diff");
    let out = verify(
        &katana,
        order,
        json!([{"sku": "KNF-8IN-BLK", "quantity": 1}]),
    )
    .await;
    assert_eq!(out["overall_status"], "no_match");
    assert!(
        out["suggested_actions"][0]
            .as_str()
            .unwrap()
            .contains("order_id 7001")
    );
    assert!(katana.writes().is_empty());
}

#[tokio::test]
async fn find_order_reads_each_kind_by_id_or_number_with_row_ids_and_skus() {
    let katana = Katana::start().await;
    let host = &katana.host;

    // A purchase order split by a receipt: both rows, which one is received.
    let by_number = host
        .ok(
            "find_order",
            json!({"order_type": "purchase", "order_number": "PO-25-003"}),
        )
        .await;
    let by_id = host
        .ok(
            "find_order",
            json!({"order_type": "purchase", "order_id": seed::PO_PARTIALLY_RECEIVED}),
        )
        .await;
    assert_eq!(by_number, by_id);
    assert_eq!(
        (&by_id["order_id"], &by_id["order_number"], &by_id["status"]),
        (
            &json!(seed::PO_PARTIALLY_RECEIVED),
            &json!("PO-25-003"),
            &json!("PARTIALLY_RECEIVED")
        )
    );
    let rows: Vec<(i64, &str, f64, bool)> = by_id["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["sku"].as_str().unwrap(),
                r["quantity"].as_f64().unwrap(),
                r["received"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (seed::PO3_OPEN_ROW, "STL-BLANK-8", 100.0, false),
            (seed::PO3_RECEIVED_ROW, "STL-BLANK-8", 50.0, true)
        ]
    );
    assert!(
        by_id["next_actions"][0]
            .as_str()
            .unwrap()
            .contains("purchase_order_row_id")
    );

    // A manufacturing order: what it makes, no rows.
    let mo = host
        .ok(
            "find_order",
            json!({"order_type": "manufacturing", "order_number": "MO-25-002"}),
        )
        .await;
    assert_eq!(
        (
            &mo["order_id"],
            &mo["status"],
            &mo["sku"],
            &mo["planned_quantity"],
            &mo["location_id"]
        ),
        (
            &json!(seed::MO_BLOCKED),
            &json!("BLOCKED"),
            &json!("KNF-8IN-WAL"),
            &json!(10.0),
            &json!(seed::LOCATION_WORKSHOP)
        )
    );
    assert_eq!(mo["rows"], json!([]));

    // A sales order: its rows, no receipt fields.
    let so = host
        .ok(
            "find_order",
            json!({"order_type": "sales", "order_id": seed::SO_NOT_SHIPPED}),
        )
        .await;
    assert_eq!(
        so["rows"],
        json!([{"id": seed::SO1_ROW, "variant_id": seed::KNIFE_BLACK, "sku": "KNF-8IN-BLK",
                "quantity": 2.0}])
    );
    assert!(
        so["next_actions"][0]
            .as_str()
            .unwrap()
            .contains("fulfill_order")
    );

    // Exactly one of id and number.
    for args in [
        json!({"order_type": "sales"}),
        json!({"order_type": "sales", "order_id": 3001, "order_number": "SO-25-001"}),
    ] {
        let issue = host.tool_error("find_order", args).await;
        assert_eq!(issue["code"], "VALIDATION_ERROR");
        assert!(issue["message"].as_str().unwrap().contains("exactly one"));
    }
    assert!(katana.writes().is_empty());
}
