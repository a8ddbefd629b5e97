//! Contract 1, 2 (E1) and 3.5: variants, suppliers, locations and order lists:
//! newest first, `page`/`limit`, `X-Pagination` with string values, filters
//! as repeated keys or commas, `extend=product_or_material`.

use katana_sandbox::{
    model::{ListBody, Location, Pagination, Supplier, Variant},
    seed,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::util::{ListReads as _, assert_invalid, start};

/// The ids in a list body, in order.
fn ids(body: &Value) -> Vec<i64> {
    body["data"]
        .as_array()
        .expect("a data array")
        .iter()
        .map(|item| item["id"].as_i64().unwrap())
        .collect()
}

/// Pagination from string literals, for comparisons.
fn pagination(
    total: &str,
    pages: &str,
    offset: &str,
    page: &str,
    first: &str,
    last: &str,
) -> Pagination {
    Pagination {
        total_records: total.into(),
        total_pages: pages.into(),
        offset: offset.into(),
        page: page.into(),
        first_page: first.into(),
        last_page: last.into(),
    }
}

#[tokio::test]
async fn variants_come_in_three_pages_newest_first() {
    let h = start().await;
    let (status, body, page1) = h.list("/variants").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page1, pagination("120", "3", "0", "1", "true", "false"));
    let first = ids(&body);
    assert_eq!(first.len(), 50);
    assert_eq!(first[0], 5414, "the newest filler first");

    let (_, body, page2) = h.list("/variants?page=2").await;
    assert_eq!(page2, pagination("120", "3", "50", "2", "false", "false"));
    assert_eq!(ids(&body).len(), 50);

    let (_, body, page3) = h.list("/variants?page=3").await;
    assert_eq!(page3, pagination("120", "3", "100", "3", "false", "true"));
    let last = ids(&body);
    assert_eq!(last.len(), 20);
    assert_eq!(
        last[14..],
        [
            seed::SHARPENING,
            seed::BRASS_RIVET,
            seed::WALNUT_SCALE,
            seed::STEEL_BLANK,
            seed::KNIFE_WALNUT,
            seed::KNIFE_BLACK
        ]
    );
    // Every variant exactly once over the pages.
    let mut all = [first, ids(&h.list("/variants?page=2").await.1), last].concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), seed::VARIANT_COUNT);
}

#[tokio::test]
async fn past_the_end_is_an_empty_page() {
    let h = start().await;
    let (status, body, page) = h.list("/variants?page=4").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"data": []}));
    assert_eq!(page, pagination("120", "3", "150", "4", "false", "true"));
}

#[tokio::test]
async fn limit_defaults_to_50_and_is_clamped_to_250() {
    let h = start().await;
    let (_, body, page) = h.list("/variants?limit=7&page=2").await;
    assert_eq!(ids(&body), (5401..=5407).rev().collect::<Vec<_>>());
    assert_eq!(page, pagination("120", "18", "7", "2", "false", "false"));

    let (status, body, page) = h.list("/variants?limit=1000").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&body).len(), 120);
    assert_eq!(page, pagination("120", "1", "0", "1", "true", "true"));
}

#[tokio::test]
async fn bad_page_or_limit_is_422() {
    let h = start().await;
    let (status, body) = h.get("/variants?limit=0").await;
    assert_invalid(status, &body, ".limit", "minimum");
    let (status, body) = h.get("/variants?page=two").await;
    assert_invalid(status, &body, ".page", "type");
    let (status, body) = h.get("/suppliers?page=-1").await;
    assert_invalid(status, &body, ".page", "minimum");
}

#[tokio::test]
async fn ids_and_skus_take_repeated_keys_or_commas() {
    let h = start().await;
    for query in [
        "ids=5001&ids=5101",
        "ids=5001,5101",
        "ids=5101%2C5001",
        "sku=KNF-8IN-BLK&sku=STL-BLANK-8",
        "sku=KNF-8IN-BLK,STL-BLANK-8",
    ] {
        let (_, body, page) = h.list(&format!("/variants?{query}")).await;
        assert_eq!(
            ids(&body),
            [seed::STEEL_BLANK, seed::KNIFE_BLACK],
            "{query}"
        );
        assert_eq!(page.total_records, "2");
    }
    let (_, body, _) = h.list("/variants?sku=knf-8in-blk").await;
    assert_eq!(ids(&body), Vec::<i64>::new(), "SKUs match exactly");
    let (status, body) = h.get("/variants?ids=5001,abc").await;
    assert_invalid(status, &body, ".ids[1]", "type");
}

#[tokio::test]
async fn variants_match_the_contract_example() {
    let h = start().await;
    let (_, body, _) = h
        .list("/variants?ids=5001&extend=product_or_material")
        .await;
    let variant = &body["data"][0];
    assert_eq!(variant["id"], 5001);
    assert_eq!(variant["sku"], "KNF-8IN-BLK");
    assert_eq!(variant["type"], "product");
    assert_eq!(
        variant["config_attributes"],
        json!([
            {"config_name": "Size", "config_value": "8-inch"},
            {"config_name": "Handle", "config_value": "Black"}
        ])
    );
    assert_eq!(variant["product_or_material"]["name"], "Chef's Knife");
    assert_eq!(
        variant["sales_price"],
        json!(89),
        "whole numbers carry no fraction"
    );
    let parsed: ListBody<Variant> = serde_json::from_value(body).expect("the documented shape");
    assert_eq!(parsed.data[0], seed::variant(seed::KNIFE_BLACK).unwrap());
}

#[tokio::test]
async fn product_or_material_only_when_extended() {
    let h = start().await;
    let (_, body, _) = h.list("/variants?ids=5102").await;
    assert!(
        body["data"][0].get("product_or_material").is_none(),
        "{body}"
    );
    let (_, body, _) = h
        .list("/variants?ids=5102&extend=product_or_material")
        .await;
    assert_eq!(
        body["data"][0]["product_or_material"]["name"],
        "Walnut Scale"
    );
    assert_eq!(body["data"][0]["product_or_material"]["type"], "material");
    let (_, body, _) = h
        .list("/variants?ids=5201&extend=product_or_material")
        .await;
    assert_eq!(body["data"][0]["type"], "service");
    assert_eq!(
        body["data"][0]["product_or_material"]["name"],
        "Knife Sharpening"
    );
    let (status, body) = h.get("/variants?extend=supplier").await;
    assert_invalid(status, &body, ".extend[0]", "enum");
}

#[tokio::test]
async fn suppliers_and_locations() {
    let h = start().await;
    let (status, body, page) = h.list("/suppliers").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page, pagination("2", "1", "0", "1", "true", "true"));
    let suppliers: ListBody<Supplier> = serde_json::from_value(body).unwrap();
    let found: Vec<(i64, &str)> = suppliers
        .data
        .iter()
        .map(|s| (s.id, s.currency.as_str()))
        .collect();
    assert_eq!(
        found,
        [(seed::SUPPLIER_EUR, "EUR"), (seed::SUPPLIER_USD, "USD")]
    );

    let (_, body, _) = h.list("/locations").await;
    let locations: ListBody<Location> = serde_json::from_value(body).unwrap();
    let found: Vec<(i64, &str, bool, bool, bool)> = locations
        .data
        .iter()
        .map(|l| {
            (
                l.id,
                l.name.as_str(),
                l.sales_allowed,
                l.manufacturing_allowed,
                l.purchases_allowed,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (3, "Retail", true, false, false),
            (2, "Workshop", false, true, false),
            (1, "Main", true, true, true),
        ]
    );
    let (_, body, _) = h.list("/locations?ids=2").await;
    assert_eq!(ids(&body), [seed::LOCATION_WORKSHOP]);
    let (_, body, page) = h.list("/suppliers?limit=1&page=2").await;
    assert_eq!(ids(&body), [seed::SUPPLIER_USD]);
    assert_eq!(page.last_page, "true");
}

#[tokio::test]
async fn orders_are_listed_newest_first_and_found_by_exact_number() {
    let h = start().await;
    let (status, body, page) = h.list("/purchase_orders").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        ids(&body),
        [
            seed::PO_RECEIVED,
            seed::PO_PARTIALLY_RECEIVED,
            seed::PO_SAME_VARIANT_TWICE,
            seed::PO_NOT_RECEIVED
        ]
    );
    assert_eq!(page.total_records, "4");

    let (_, body, _) = h.list("/purchase_orders?order_no=PO-25-001").await;
    assert_eq!(ids(&body), [seed::PO_NOT_RECEIVED]);
    assert_eq!(
        body["data"][0]["purchase_order_rows"][0]["id"],
        seed::PO1_STEEL_ROW,
        "with its rows"
    );
    let (_, body, _) = h.list("/purchase_orders?order_no=po-25-001").await;
    assert_eq!(ids(&body), Vec::<i64>::new(), "numbers match exactly");

    let (_, body, _) = h
        .list("/manufacturing_orders?order_no=MO-25-002,MO-25-001")
        .await;
    assert_eq!(ids(&body), [seed::MO_BLOCKED, seed::MO_NOT_STARTED]);
    let (_, body, _) = h.list("/sales_orders?ids=3003&ids=3001").await;
    assert_eq!(ids(&body), [seed::SO_PACKED, seed::SO_NOT_SHIPPED]);
    assert!(body["data"][0]["sales_order_rows"].is_array());
    let (status, body) = h.get("/sales_orders?ids=x").await;
    assert_invalid(status, &body, ".ids[0]", "type");
}
